// Relative URLs resolved against xml:base and the document URL, and the href/src links inside HTML.

import Foundation

/// Resolves relative URLs against `xml:base` and the document URL, caching the parsed base.
struct URLResolver {
    private var cachedBase: String?
    private var cachedURL: URL?

    /// `value` made absolute against `base`; `value` itself (trimmed) when it is absolute, when there is no
    /// usable base, or when it cannot be resolved.
    /// An empty `value` is the base itself when `emptyIsBase` (an `href=""` is a reference to the base, RFC 3986).
    mutating func resolve(_ value: String, against base: String?, emptyIsBase: Bool = false) -> String {
        let trimmed = value.trimmingXMLWhitespace()
        if trimmed.isEmpty && emptyIsBase, let base, Self.hasScheme(base) { return base }
        guard !trimmed.isEmpty, let base, !Self.hasScheme(trimmed) else { return trimmed }
        if base != cachedBase {
            cachedBase = base
            cachedURL = URL(string: base)
        }
        guard let baseURL = cachedURL, baseURL.scheme != nil else { return trimmed }
        if let resolved = URL(string: trimmed, relativeTo: baseURL) { return resolved.absoluteString }
        // Spaces and other bytes URL(string:) refuses: percent-encode them and try once more.
        if let escaped = trimmed.addingPercentEncoding(withAllowedCharacters: Self.lenient),
           let resolved = URL(string: escaped, relativeTo: baseURL) {
            return resolved.absoluteString
        }
        return trimmed
    }

    /// Whether `value` starts with a URL scheme (`http:`, `mailto:`, `data:` …).
    static func hasScheme(_ value: String) -> Bool {
        value.utf8.withContiguousStorageIfAvailable { hasScheme($0) } ?? hasScheme(Array(value.utf8))
    }

    /// Whether `value` is an absolute URL with no XML white space around it: what ``resolve(_:against:emptyIsBase:)``
    /// returns as it is, whatever the base. Most links in feeds are; checking first spares the trimming and the base.
    static func isAbsoluteAndTrimmed(_ value: String) -> Bool {
        value.utf8.withContiguousStorageIfAvailable { bytes in
            guard let first = bytes.first, let last = bytes.last else { return false }
            @inline(__always) func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            return !isSpace(first) && !isSpace(last) && hasScheme(bytes)
        } ?? false
    }

    /// Whether UTF-8 `bytes` start with a URL scheme; read in place, without making a `String` (issue 18).
    static func hasScheme<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var first = true
        for byte in bytes {
            switch byte {
            case 0x3A: return !first  // ':'
            case 0x61...0x7A, 0x41...0x5A: first = false
            case 0x30...0x39, 0x2B, 0x2D, 0x2E: if first { return false }
            default: return false
            }
        }
        return false
    }

    private static let lenient: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.insert(charactersIn: "#%")
        return set
    }()

    /// Rewrites relative `href` and `src` attribute values in HTML to absolute ones. Cheap: one scan for
    /// `href=` and `src=`; the HTML is returned unchanged when nothing is relative.
    mutating func resolveLinks(inHTML html: String, against base: String?) -> String {
        let bytes = Array(html.utf8)
        let resolved = resolveLinks(inHTML: bytes, against: base)
        return resolved == bytes ? html : String(decoding: resolved, as: UTF8.self)
    }

    /// ``resolveLinks(inHTML:against:)`` over UTF-8 bytes (an item's summary or content, ``TextContent/utf8``).
    mutating func resolveLinks(inHTML bytes: [UInt8], against base: String?) -> [UInt8] {
        guard let base else { return bytes }
        if base != cachedBase {
            cachedBase = base
            cachedURL = URL(string: base)
        }
        guard cachedURL?.scheme != nil else { return bytes }
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        while index < bytes.count {
            guard let attribute = Self.attributeValue(in: bytes, from: &index) else { break }
            // Most links are absolute: told from the bytes, before a `String` is made of them (issue 18).
            if attribute.isEmpty || bytes[attribute.lowerBound] == 0x23 || Self.hasScheme(bytes[attribute]) { continue }
            let value = String(decoding: bytes[attribute], as: UTF8.self)
            let resolved = resolve(Self.decodeAmpersands(value), against: base)
            guard resolved != value else { continue }
            if output.isEmpty { output.reserveCapacity(bytes.count + 64) }
            output.append(contentsOf: bytes[copied..<attribute.lowerBound])
            output.append(contentsOf: Array((resolved.utf8.contains(0x26) ? resolved.replacingOccurrences(of: "&", with: "&amp;") : resolved).utf8))
            copied = attribute.upperBound
        }
        if copied == 0 { return bytes }
        output.append(contentsOf: bytes[copied...])
        return output
    }

    /// The range of the next quoted `href=` or `src=` value at or after `index`, moving `index` past it.
    ///
    /// A match is `href=` or `src=` (the name in any case) at the start of the bytes or after white space, starting at
    /// or after `index` and at least six bytes before the end; its value is what a quote right after the `=` encloses.
    /// The scan goes from one `=` to the next with `memchr` (libc's, wide) and looks back at the name: byte by byte it
    /// cost about 11 instructions a byte of every HTML summary and content fetched over HTTP, where a base URL is
    /// known (issue 18). Tests/SyndicationTests/URLResolverTests.swift checks it against the byte-by-byte definition.
    static func attributeValue(in bytes: [UInt8], from index: inout Int) -> Range<Int>? {
        bytes.withUnsafeBufferPointer { buffer in attributeValue(in: buffer, from: &index) }
    }

    private static func attributeValue(in bytes: UnsafeBufferPointer<UInt8>, from index: inout Int) -> Range<Int>? {
        let count = bytes.count
        guard let base = bytes.baseAddress else { index = count; return nil }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        // The first `=` that can end a name starting at `index`: `src=` ends three bytes after its start.
        var equals = index + 3
        while equals < count, let found = memchr(base + equals, 0x3D, count - equals) {
            equals = UnsafeRawPointer(base).distance(to: found)
            // `href=` starts four bytes before its `=`, `src=` three; either start must leave five bytes after it.
            var start = -1
            if equals >= index + 4, equals + 1 < count, bytes[equals - 4] | 0x20 == 0x68, bytes[equals - 3] | 0x20 == 0x72,
               bytes[equals - 2] | 0x20 == 0x65, bytes[equals - 1] | 0x20 == 0x66 {
                start = equals - 4
            } else if equals + 2 < count, bytes[equals - 3] | 0x20 == 0x73, bytes[equals - 2] | 0x20 == 0x72,
                      bytes[equals - 1] | 0x20 == 0x63 {
                start = equals - 3
            }
            guard start >= 0, start == 0 || isSpace(bytes[start - 1]) else {
                equals += 1
                continue
            }
            let cursor = equals + 1
            guard bytes[cursor] == 0x22 || bytes[cursor] == 0x27 else {
                index = cursor
                equals = cursor + 3
                continue
            }
            let valueStart = cursor + 1
            guard let close = memchr(base + valueStart, Int32(bytes[cursor]), count - valueStart) else {
                index = count + 1
                return nil
            }
            let valueEnd = UnsafeRawPointer(base).distance(to: close)
            index = valueEnd + 1
            return valueStart..<valueEnd
        }
        index = count
        return nil
    }

    private static func decodeAmpersands(_ value: String) -> String {
        value.utf8.contains(0x26) ? value.replacingOccurrences(of: "&amp;", with: "&") : value
    }
}

extension Substring {
    /// The substring without leading and trailing XML white space.
    func trimmingXMLWhitespaceSubstring() -> Substring {
        var result = self[...]
        while let first = result.utf8.first, first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D { result = result.dropFirst() }
        while let last = result.utf8.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { result = result.dropLast() }
        return result
    }
}
