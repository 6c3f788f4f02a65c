// Runs ahead of yajl over each chunk: finds where a string or another token outgrows its limit, and where the chunk
// ends inside a string or a number, so yajl never buffers more than the limit and its offsets never depend on the split.

import Foundation

/// Follows JSON's tokens across chunks, just enough to know where strings and other tokens (numbers, `true`, …) start
/// and end: an opening quote, then the first quote not escaped by an odd run of backslashes (found with `memchr`); outside
/// strings, runs of the bytes numbers and literals are made of.
///
/// yajl keeps a token cut by chunk boundaries in a buffer until it ends, so a hostile document could make it buffer one
/// as long as the input; the scan reports where a token grows past the limit, and the parser feeds yajl only the bytes
/// before that point, so whichever error comes first in the document wins. It also tells the parser whether a chunk
/// ends inside a string or inside a run (which the parser holds back: see ``JSONPushParser``). It knows nothing else of
/// JSON: in a malformed document it may lose track, but yajl has then failed before that point.
struct TokenScanner {
    /// Whether the scan stands inside a string.
    private(set) var inString = false
    /// The absolute offset of the current (or last) string's opening quote.
    private(set) var stringStart: Int64 = 0
    /// Outside strings, where the current run of number and literal bytes started, if the scan stands in one.
    private(set) var runStart: Int64?
    /// Inside a string, the length of the run of backslashes that ended the previous chunk.
    private var carriedBackslashes = 0

    /// 1 for the bytes numbers and literals are made of (`0-9 a-z A-Z . + -`), 2 for the quote, 0 for the rest.
    private static let classes: [UInt8] = (0..<256).map { byte in
        switch UInt8(byte) {
        case 0x22: return 2
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2E, 0x2B, 0x2D: return 1
        default: return 0
        }
    }

    /// Scans `count` bytes at absolute offset `base`; returns the index within them of the first byte past `limit` in a
    /// string (counted between its quotes, as written) or in a run, or `nil` when every token so far fits.
    mutating func scan(_ bytes: UnsafePointer<UInt8>, count: Int, base: Int64, limit: Int) -> Int? {
        var index = 0
        return Self.classes.withUnsafeBufferPointer { classes -> Int? in
            while index < count {
                if inString {
                    if let cut = scanString(bytes, from: &index, count: count, base: base, limit: limit) { return cut }
                    continue
                }
                let byteClass = classes[Int(bytes[index])]
                if byteClass == 1 {
                    let position = base + Int64(index)
                    if runStart == nil { runStart = position }
                    if position - runStart! >= Int64(limit) { return index }
                } else {
                    runStart = nil
                    if byteClass == 2 {
                        inString = true
                        stringStart = base + Int64(index)
                        carriedBackslashes = 0
                    }
                }
                index += 1
            }
            return nil
        }
    }

    /// Inside a string from `index`: moves past its closing quote, or to the end of the chunk.
    private mutating func scanString(_ bytes: UnsafePointer<UInt8>, from index: inout Int, count: Int, base: Int64, limit: Int) -> Int? {
        let segmentStart = index
        var closing: Int?
        while index < count {
            guard let quote = memchr(bytes + index, 0x22, count - index) else { index = count; break }
            let position = bytes.distance(to: quote.assumingMemoryBound(to: UInt8.self))
            if backslashes(before: position, from: segmentStart, in: bytes) % 2 == 0 {
                closing = position
                break
            }
            index = position + 1
        }
        let end = closing ?? count
        // The bytes between the quotes so far: past the limit is an error at the first byte beyond it.
        let length = base + Int64(end) - stringStart - 1
        if length > Int64(limit) { return Int(stringStart + 1 + Int64(limit) - base) }
        if let closing {
            inString = false
            index = closing + 1
        } else {
            carriedBackslashes = backslashes(before: count, from: segmentStart, in: bytes)
        }
        return nil
    }

    /// The length of the run of backslashes right before `position`, reaching back no further than `start` (and, when
    /// it reaches the chunk's first byte, continuing the run the previous chunk ended with).
    private func backslashes(before position: Int, from start: Int, in bytes: UnsafePointer<UInt8>) -> Int {
        var cursor = position
        while cursor > start && bytes[cursor - 1] == 0x5C { cursor -= 1 }
        var run = position - cursor
        if cursor == 0 && start == 0 { run += carriedBackslashes }
        return run
    }
}
