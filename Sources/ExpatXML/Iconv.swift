// The one file that calls glibc's iconv (iconv(3), iconv_open(3)). Everything else goes through these types.
import Foundation
import Support

enum Iconv {
    /// Whether iconv can decode `charset` into UTF-8.
    static func canDecode(_ charset: String) -> Bool {
        let descriptor = iconv_open("UTF-8", charset)
        if descriptor == iconvFailure { return false }
        iconv_close(descriptor)
        return true
    }

    /// `(iconv_t) -1`, what iconv_open returns on failure.
    fileprivate static var iconvFailure: iconv_t? { iconv_t(bitPattern: -1) }

    /// Decoding tables of single-byte charsets, built once per process and shared by every parser.
    private static let tables = Lock<[String: [Int32]]>([:])

    /// The Unicode scalar each byte decodes to in a single-byte charset; U+FFFD where the charset has none.
    /// `nil` when iconv does not know the charset or it is not single-byte.
    static func singleByteTable(for charset: String) -> [Int32]? {
        if let cached = tables.withLock({ $0[charset] }) { return cached }
        let descriptor = iconv_open("UTF-32LE", charset)
        if descriptor == iconvFailure { return nil }
        defer { iconv_close(descriptor) }
        var table = [Int32](repeating: 0xFFFD, count: 256)
        for byte in 0..<256 {
            var input = [CChar(bitPattern: UInt8(byte))]
            var output = [UInt8](repeating: 0, count: 16)
            var inLeft = 1
            var outLeft = output.count
            let converted = input.withUnsafeMutableBufferPointer { inBuffer in
                output.withUnsafeMutableBufferPointer { outBuffer in
                    var inPointer: UnsafeMutablePointer<CChar>? = inBuffer.baseAddress
                    var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(outBuffer.baseAddress!)
                        .assumingMemoryBound(to: CChar.self)
                    iconv(descriptor, nil, nil, nil, nil)  // reset shift state
                    return iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                }
            }
            guard converted != -1, inLeft == 0 else { continue }
            guard output.count - outLeft == 4 else { return nil }  // one byte became two characters: not single-byte
            table[byte] = Int32(output[0]) | Int32(output[1]) << 8 | Int32(output[2]) << 16 | Int32(output[3]) << 24
        }
        tables.withLock { $0[charset] = table }
        return table
    }
}

/// Transcodes a stream in a multi-byte charset to UTF-8, chunk by chunk, in front of expat.
///
/// A sequence cut by a chunk boundary is carried to the next chunk, so the output never depends on the
/// split. A sequence that is invalid in the charset becomes U+FFFD and is counted in ``replacements``.
final class IconvTranscoder {
    private let descriptor: iconv_t
    private var carry: [UInt8] = []
    private var output: UnsafeMutablePointer<CChar>
    private var outputCapacity: Int
    /// How many invalid or truncated sequences became U+FFFD.
    private(set) var replacements = 0

    init?(from charset: String) {
        let descriptor = iconv_open("UTF-8", charset)
        guard let descriptor, descriptor != Iconv.iconvFailure else { return nil }
        self.descriptor = descriptor
        outputCapacity = 64 * 1024
        output = .allocate(capacity: outputCapacity)
    }

    deinit {
        iconv_close(descriptor)
        output.deallocate()
    }

    /// Transcodes `input` and hands the UTF-8 result to `sink`, in one or more pieces.
    func convert(
        _ input: UnsafeRawBufferPointer, isFinal: Bool,
        into sink: (UnsafeRawBufferPointer) throws(ExpatXMLError) -> Void
    ) throws(ExpatXMLError) {
        if !carry.isEmpty {
            var joined = carry
            joined.append(contentsOf: input)
            carry.removeAll()
            var failure: ExpatXMLError?
            joined.withUnsafeBytes { bytes in
                do throws(ExpatXMLError) { try convertContiguous(bytes, isFinal: isFinal, into: sink) } catch { failure = error }
            }
            if let failure { throw failure }
        } else {
            try convertContiguous(input, isFinal: isFinal, into: sink)
        }
    }

    private func convertContiguous(
        _ input: UnsafeRawBufferPointer, isFinal: Bool,
        into sink: (UnsafeRawBufferPointer) throws(ExpatXMLError) -> Void
    ) throws(ExpatXMLError) {
        var inPointer: UnsafeMutablePointer<CChar>? = input.isEmpty
            ? nil : UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: CChar.self))
        var inLeft = input.count
        // Output collects across refused sequences and goes to expat when the buffer is half full or the input is
        // used up: one call per replacement would make a document full of bad bytes cost a pass over everything
        // buffered downstream per replacement (found by fuzzing).
        var pending = 0
        while inLeft > 0 {
            var outPointer: UnsafeMutablePointer<CChar>? = output + pending
            var outLeft = outputCapacity - 3 - pending  // room for one U+FFFD after whatever iconv writes
            let result = iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
            pending = outputCapacity - 3 - outLeft
            var full = false
            if result == -1 {
                let code = errno
                if code == EILSEQ || (code == EINVAL && isFinal) {
                    // Invalid in this charset, or cut off by the end of the document: one byte becomes U+FFFD.
                    (output + pending).withMemoryRebound(to: UInt8.self, capacity: 3) { replacement in
                        replacement[0] = 0xEF; replacement[1] = 0xBF; replacement[2] = 0xBD
                    }
                    pending += 3
                    replacements += 1
                    inPointer = inPointer! + 1
                    inLeft -= 1
                } else if code == EINVAL {
                    // A sequence cut at the end of this chunk: keep it for the next one.
                    carry = Array(UnsafeRawBufferPointer(start: inPointer, count: inLeft))
                    inLeft = 0
                } else if code == E2BIG {
                    full = true
                } else {
                    throw ExpatXMLError(code: .unsupportedEncoding, message: "iconv failed: \(String(cString: strerror(code)))")
                }
            }
            if pending > 0 && (full || pending >= outputCapacity / 2 || inLeft == 0) {
                try sink(UnsafeRawBufferPointer(start: output, count: pending))
                pending = 0
            }
        }
        if isFinal {
            var outPointer: UnsafeMutablePointer<CChar>? = output
            var outLeft = outputCapacity
            // Flush a stateful encoding's shift sequence (iconv(3): a null input resets to the initial state).
            if iconv(descriptor, nil, nil, &outPointer, &outLeft) == -1 {
                let code = errno
                throw ExpatXMLError(code: .unsupportedEncoding, message: "iconv failed to end the document: \(String(cString: strerror(code)))")
            }
            let produced = outputCapacity - outLeft
            if produced > 0 { try sink(UnsafeRawBufferPointer(start: output, count: produced)) }
        }
    }
}
