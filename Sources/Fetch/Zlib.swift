// The one file in Fetch that calls zlib (zlib.h, https://zlib.net/manual.html).
import CZlib

/// A zlib return code (`Z_OK`, `Z_DATA_ERROR`, ...), as zlib.h defines them.
public struct ZlibCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The numeric value zlib returned.
    public let rawValue: Int32
    /// Creates a code from zlib's number.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `Z_OK`.
    public static let ok = ZlibCode(rawValue: Z_OK)
    /// `Z_STREAM_END`: the end of a compressed stream.
    public static let streamEnd = ZlibCode(rawValue: Z_STREAM_END)
    /// `Z_NEED_DICT`: the stream needs a preset dictionary, which feeds never have.
    public static let needDictionary = ZlibCode(rawValue: Z_NEED_DICT)
    /// `Z_STREAM_ERROR`: inconsistent stream state.
    public static let streamError = ZlibCode(rawValue: Z_STREAM_ERROR)
    /// `Z_DATA_ERROR`: the input is not valid compressed data (or its checksum is wrong).
    public static let dataError = ZlibCode(rawValue: Z_DATA_ERROR)
    /// `Z_MEM_ERROR`: zlib ran out of memory.
    public static let memoryError = ZlibCode(rawValue: Z_MEM_ERROR)
    /// `Z_BUF_ERROR`: no progress was possible.
    public static let bufferError = ZlibCode(rawValue: Z_BUF_ERROR)
    /// `Z_VERSION_ERROR`: the zlib library does not match the header.
    public static let versionError = ZlibCode(rawValue: Z_VERSION_ERROR)

    /// The code's name in zlib.h.
    public var description: String {
        switch rawValue {
        case Z_OK: return "Z_OK"
        case Z_STREAM_END: return "Z_STREAM_END"
        case Z_NEED_DICT: return "Z_NEED_DICT"
        case Z_ERRNO: return "Z_ERRNO"
        case Z_STREAM_ERROR: return "Z_STREAM_ERROR"
        case Z_DATA_ERROR: return "Z_DATA_ERROR"
        case Z_MEM_ERROR: return "Z_MEM_ERROR"
        case Z_BUF_ERROR: return "Z_BUF_ERROR"
        case Z_VERSION_ERROR: return "Z_VERSION_ERROR"
        default: return "zlib code \(rawValue)"
        }
    }
}

/// Why an ``Inflater`` stopped: bad or incomplete compressed data, or one of its limits.
public struct InflateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, to match on.
    public enum Kind: Sendable, Hashable {
        /// The bytes are not valid gzip, zlib or deflate data (bad header, bad block, wrong checksum).
        case corrupt
        /// The input ended before the compressed stream did.
        case truncated
        /// Bytes follow the end of the compressed stream that are not another gzip member.
        case trailingData
        /// The output grew past ``Inflater/Limits/maximumOutputBytes``.
        case outputLimitExceeded
        /// The output grew past ``Inflater/Limits/maximumRatio`` times the input (a decompression bomb).
        case ratioLimitExceeded
        /// zlib could not allocate memory.
        case noMemory
        /// zlib refused a call on its stream state (`Z_STREAM_ERROR`, for example from `inflateReset`): a fault of
        /// the inflater or of zlib, not of the data.
        case streamError
    }

    /// What went wrong.
    public var kind: Kind
    /// zlib's return code, when zlib reported the failure.
    public var zlibCode: ZlibCode?
    /// A specific message (zlib's `msg` when it gave one).
    public var message: String
    /// Compressed bytes consumed when the failure was found.
    public var inputOffset: Int64
    /// Bytes produced when the failure was found.
    public var outputOffset: Int64

    /// Creates an error value.
    public init(kind: Kind, zlibCode: ZlibCode? = nil, message: String, inputOffset: Int64 = 0, outputOffset: Int64 = 0) {
        self.kind = kind
        self.zlibCode = zlibCode
        self.message = message
        self.inputOffset = inputOffset
        self.outputOffset = outputOffset
    }

    /// The message with the offset of the compressed input where it happened.
    public var description: String {
        var text = message + " (at compressed byte \(inputOffset)"
        if let zlibCode { text += ", \(zlibCode)" }
        return text + ")"
    }
}

/// A streaming zlib decompressor for gzip, zlib-wrapped and raw deflate data, with limits enforced as it runs.
///
/// Push compressed bytes as they arrive with ``inflate(_:into:)``; decompressed output comes back in chunks of at
/// most ``outputChunkSize`` bytes. Call ``finish()`` at the end of the input to learn whether the stream was
/// complete. Concatenated gzip members (as `cat a.gz b.gz` makes) decompress as one stream; zero bytes of padding
/// after the last member are ignored. The same type reads `.gz` files and HTTP bodies with
/// `Content-Encoding: gzip` or `deflate`.
///
/// An inflater is confined to one thread: it is deliberately not `Sendable`.
public final class Inflater {
    /// Which compressed format to expect.
    public enum Format: Sendable, Hashable {
        /// gzip (RFC 1952), including concatenated members.
        case gzip
        /// zlib-wrapped deflate (RFC 1950).
        case zlib
        /// Raw deflate (RFC 1951), no header.
        case rawDeflate
        /// HTTP's `Content-Encoding: deflate`: zlib-wrapped as RFC 9110 says, or raw deflate as some servers send
        /// it; told apart by the first two bytes.
        case httpDeflate
        /// Any of the three, told apart by the first two bytes (gzip's magic number, a zlib header, or neither).
        case automatic
    }

    /// The limits checked while the output grows; exceeding one stops with an ``InflateError``.
    public struct Limits: Sendable, Hashable {
        /// The most bytes of output allowed. Default: no limit.
        public var maximumOutputBytes: Int64 = .max
        /// The largest ratio of output to compressed input allowed, checked once the output has passed
        /// ``ratioActivationBytes``. Default: no limit. Ordinary XML compresses 5 to 20 times; a bomb 1,000 times.
        public var maximumRatio: Double = .infinity
        /// The output size after which ``maximumRatio`` applies, so small, very compressible bodies pass.
        /// Default 1 MiB.
        public var ratioActivationBytes: Int64 = 1 << 20

        /// No limits.
        public init() {}

        /// The given limits.
        public init(maximumOutputBytes: Int64 = .max, maximumRatio: Double = .infinity, ratioActivationBytes: Int64 = 1 << 20) {
            self.maximumOutputBytes = maximumOutputBytes
            self.maximumRatio = maximumRatio
            self.ratioActivationBytes = ratioActivationBytes
        }
    }

    /// The format requested.
    public let format: Format
    /// The limits in force.
    public let limits: Limits
    /// The largest output chunk handed out.
    public let outputChunkSize: Int
    /// Compressed bytes consumed so far.
    public private(set) var totalIn: Int64 = 0
    /// Decompressed bytes produced so far.
    public private(set) var totalOut: Int64 = 0
    /// The format found in the data, once known (for ``Format/automatic`` and ``Format/httpDeflate``).
    public private(set) var detectedFormat: Format?

    // zlib keeps the address of its z_stream (its internal state points back at it), so it lives on the heap
    // and never moves; freed in deinit.
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableRawBufferPointer
    private var initialized = false
    /// ``finish()`` ended zlib's stream: the inflater does not start another.
    private var ended = false
    /// Zero padding followed the last member: only more zeros may come.
    private var inPadding = false
    private var memberEnded = false
    private var failure: InflateError?
    private var prefix: [UInt8] = []
    private var allowsMembers = false
    // gzip members: zlib parses each header (and checks its FHCRC), then inflates with its own check turned off
    // (`inflateValidate`); the inflater computes the CRC-32 with libdeflate and checks the trailer itself, which
    // costs a fraction of zlib 1.2.13's CRC (about 4 instructions a byte).
    /// gzip: the inflater checks each member's trailer.
    private var checksTrailer = false
    /// The current member's header is not complete yet: inflate with `Z_BLOCK`, which stops right after it.
    private var inHeader = false
    /// CRC-32 and size modulo 2^32 of the current member's output.
    private var memberCRC: UInt32 = 0
    private var memberSize: UInt32 = 0
    /// The last 8 compressed bytes consumed, the oldest in the low byte: at a member's end, its trailer.
    private var recentInput: UInt64 = 0

    /// Creates an inflater. Nothing is allocated by zlib until the first bytes arrive.
    public init(format: Format, limits: Limits = Limits(), outputChunkSize: Int = 256 * 1024) {
        self.format = format
        self.limits = limits
        self.outputChunkSize = max(1024, outputChunkSize)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = .allocate(byteCount: self.outputChunkSize, alignment: 16)
    }

    deinit {
        // Only when the stream did not end through ``finish()``, which checks inflateEnd. inflateEnd fails only for a
        // stream zlib does not recognise (Z_STREAM_ERROR), a fault no caller could act on from a deinitializer.
        if initialized {
            let status = inflateEnd(stream)
            assert(status == Z_OK, "inflateEnd failed in deinit: \(status)")
        }
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Whether the compressed stream has ended (its last member's trailer has been read).
    public var isComplete: Bool { memberEnded }

    /// Decompresses the next compressed bytes, handing each output chunk to `body` as it is produced.
    ///
    /// An output chunk is valid only during the call. `body` returns `false` to stop early (the rest of `input` is
    /// then not consumed, and the inflater must not be used again).
    /// - Returns: `false` when `body` stopped it, `true` otherwise.
    /// - Throws: ``InflateError`` for corrupt data, trailing garbage, or a limit; after an error every call throws it again.
    @discardableResult
    public func inflate(_ input: UnsafeRawBufferPointer, into body: (UnsafeRawBufferPointer) -> Bool) throws(InflateError) -> Bool {
        if let failure { throw failure }
        guard !input.isEmpty else { return true }
        if !initialized && !ended {
            // Detection needs the first two bytes; keep them until they are there.
            let detects = format == .httpDeflate || format == .automatic
            if detects && prefix.count + input.count < 2 {
                prefix.append(contentsOf: input)
                return true
            }
            let head = prefix + input.prefix(2)
            try start(first: head.count > 0 ? head[0] : 0, second: head.count > 1 ? head[1] : 0)
            if !prefix.isEmpty {
                let held = prefix
                prefix = []
                var outcome: Result<Bool, InflateError> = .success(true)
                held.withUnsafeBytes { held in
                    do throws(InflateError) { outcome = .success(try run(held, body)) } catch { outcome = .failure(error) }
                }
                if try !outcome.get() { return false }
            }
        }
        return try run(input, body)
    }

    /// Checks that the compressed stream ended properly and frees zlib's state (`inflateEnd`); call it when the input
    /// is over. Bytes given to ``inflate(_:into:)`` afterwards are an error (zlib refuses a stream it has ended).
    /// - Throws: ``InflateError/Kind/truncated`` when the input stopped inside the stream (or was empty);
    ///   ``InflateError/Kind/streamError`` when zlib refused to end its stream.
    public func finish() throws(InflateError) {
        if let failure { throw failure }
        guard memberEnded else {
            throw fail(.truncated, nil, totalIn == 0 && prefix.isEmpty
                       ? "the compressed stream is empty" : "the compressed stream ends before its end marker")
        }
        if initialized {
            initialized = false
            ended = true
            try check(inflateEnd(stream), "inflateEnd")
        }
    }

    // MARK: Internals

    private func start(first: UInt8, second: UInt8) throws(InflateError) {
        let gzipMagic = first == 0x1F && second == 0x8B
        let zlibHeader = first & 0x0F == 8 && first >> 4 <= 7 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0
        let chosen: Format
        switch format {
        case .gzip, .zlib, .rawDeflate: chosen = format
        case .httpDeflate: chosen = zlibHeader ? .zlib : .rawDeflate
        case .automatic: chosen = gzipMagic ? .gzip : (zlibHeader ? .zlib : .rawDeflate)
        }
        detectedFormat = chosen
        allowsMembers = chosen == .gzip
        checksTrailer = chosen == .gzip
        inHeader = checksTrailer
        let windowBits: Int32
        switch chosen {
        case .gzip: windowBits = 15 + 16
        case .zlib: windowBits = 15
        default: windowBits = -15
        }
        try check(CZlib_inflateInit2(stream, windowBits), "inflateInit2")
        initialized = true
    }

    /// Checks the result of a zlib call that must return `Z_OK` (`inflateInit2`, `inflateReset`, `inflateEnd`).
    private func check(_ status: Int32, _ function: String) throws(InflateError) {
        guard status != Z_OK else { return }
        let kind: InflateError.Kind
        switch status {
        case Z_MEM_ERROR: kind = .noMemory
        case Z_STREAM_ERROR: kind = .streamError
        default: kind = .corrupt  // Z_VERSION_ERROR: the zlib library does not match the header
        }
        let detail = stream.pointee.msg.map { ": " + String(cString: $0) } ?? ""
        throw fail(kind, ZlibCode(rawValue: status), "\(function) failed\(detail)")
    }

    private func run(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) throws(InflateError) -> Bool {
        guard let base = input.baseAddress else { return true }
        var offset = 0
        while offset < input.count {
            // avail_in is a uInt: feed huge inputs in pieces.
            let piece = min(input.count - offset, Int(UInt32.max >> 1))
            stream.pointee.next_in = UnsafeMutablePointer(mutating: (base + offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(piece)
            defer { offset += piece }
            if try !drainInput(body) { return false }
        }
        return true
    }

    /// Inflates until zlib has consumed all of `avail_in` and has no more output pending.
    private func drainInput(_ body: (UnsafeRawBufferPointer) -> Bool) throws(InflateError) -> Bool {
        while true {
            if memberEnded {
                guard stream.pointee.avail_in > 0 else { return true }
                let next = stream.pointee.next_in!
                if allowsMembers && next.pointee == 0x1F && !inPadding {
                    // Another gzip member follows: start over with the same settings (inflateReset keeps windowBits).
                    try check(inflateReset(stream), "inflateReset")
                    // inflateReset keeps the check turned off: zlib checks the next header's FHCRC again.
                    try check(inflateValidate(stream, 1), "inflateValidate")
                    memberEnded = false
                    inHeader = true
                    memberCRC = 0
                    memberSize = 0
                } else if next.pointee == 0 {
                    // Zero padding after the last member, which some tools write: skip it, like gzip(1) does. After
                    // padding nothing but more padding may follow, a gzip magic included, however the bytes were
                    // split (found by fuzzing: a member after zeros was trailing data in one chunk, inflated in two).
                    inPadding = true
                    var count = Int(stream.pointee.avail_in)
                    var pointer = next
                    while count > 0 && pointer.pointee == 0 { pointer += 1; count -= 1 }
                    totalIn += Int64(Int(stream.pointee.avail_in) - count)
                    stream.pointee.next_in = pointer
                    stream.pointee.avail_in = uInt(count)
                    if count > 0 {
                        throw fail(.trailingData, nil, "unexpected bytes after the end of the compressed stream")
                    }
                    return true
                } else {
                    throw fail(.trailingData, nil, "unexpected bytes after the end of the compressed stream")
                }
            }
            let availableBefore = stream.pointee.avail_in
            let inputBefore = stream.pointee.next_in
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(output.count)
            let status = CZlib.inflate(stream, inHeader ? Z_BLOCK : Z_NO_FLUSH)
            let produced = output.count - Int(stream.pointee.avail_out)
            let consumed = Int(availableBefore - stream.pointee.avail_in)
            totalIn += Int64(consumed)
            totalOut += Int64(produced)
            if checksTrailer {
                if consumed > 0, let inputBefore { remember(inputBefore, consumed) }
                if produced > 0 {
                    memberCRC = CRC32.update(memberCRC, UnsafeRawBufferPointer(start: output.baseAddress, count: produced))
                    memberSize &+= UInt32(truncatingIfNeeded: produced)
                }
                // data_type + 128: inflate stopped right after the header (Z_BLOCK). zlib has checked its FHCRC; from
                // here on, zlib computes no check value and the trailer is the inflater's to check.
                if inHeader && status == Z_OK && stream.pointee.data_type & 128 != 0 {
                    inHeader = false
                    try check(inflateValidate(stream, 0), "inflateValidate")
                }
            }
            // Limits first: nothing beyond them is handed out. Then the output, even when zlib also reported an
            // error: it is the data up to the damage (a failed checksum is found only after the last byte).
            if totalOut > limits.maximumOutputBytes {
                throw fail(.outputLimitExceeded, nil, "decompressed size exceeds the limit of \(limits.maximumOutputBytes) bytes")
            }
            if totalOut > limits.ratioActivationBytes && Double(totalOut) > limits.maximumRatio * Double(max(totalIn, 1)) {
                throw fail(.ratioLimitExceeded, nil,
                           "decompression ratio exceeds \(limits.maximumRatio):1 (\(totalOut) bytes from \(totalIn))")
            }
            if produced > 0 && !body(UnsafeRawBufferPointer(start: output.baseAddress, count: produced)) { return false }
            switch status {
            case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
                break
            case Z_MEM_ERROR:
                throw fail(.noMemory, ZlibCode(rawValue: status), "zlib ran out of memory")
            case Z_NEED_DICT:
                throw fail(.corrupt, ZlibCode(rawValue: status), "the stream needs a preset dictionary")
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "invalid compressed data"
                throw fail(.corrupt, ZlibCode(rawValue: status), message)
            }
            if status == Z_STREAM_END {
                if checksTrailer {
                    // zlib's own messages for the two checks, which it would have made itself.
                    if UInt32(truncatingIfNeeded: recentInput) != memberCRC {
                        throw fail(.corrupt, .dataError, "incorrect data check")
                    }
                    if UInt32(truncatingIfNeeded: recentInput >> 32) != memberSize {
                        throw fail(.corrupt, .dataError, "incorrect length check")
                    }
                }
                memberEnded = true
                continue
            }
            // More output may be pending when the buffer filled; otherwise this input is used up.
            if stream.pointee.avail_out == 0 { continue }
            if stream.pointee.avail_in == 0 || status == Z_BUF_ERROR { return true }
        }
    }

    /// Keeps the last 8 of the `count` bytes just consumed at `bytes` in ``recentInput``.
    @inline(__always)
    private func remember(_ bytes: UnsafeMutablePointer<Bytef>, _ count: Int) {
        if count >= 8 {
            recentInput = UInt64(littleEndian: UnsafeRawPointer(bytes + (count - 8)).loadUnaligned(as: UInt64.self))
        } else {
            for index in 0..<count { recentInput = recentInput >> 8 | UInt64(bytes[index]) << 56 }
        }
    }

    private func fail(_ kind: InflateError.Kind, _ code: ZlibCode?, _ message: String) -> InflateError {
        let error = InflateError(kind: kind, zlibCode: code, message: message, inputOffset: totalIn, outputOffset: totalOut)
        failure = error
        return error
    }
}

@available(*, unavailable, message: "an inflater is confined to one thread")
extension Inflater: Sendable {}
