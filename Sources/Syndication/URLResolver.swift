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
        var first = true
        for byte in value.utf8 {
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
            let value = String(decoding: bytes[attribute], as: UTF8.self)
            if value.isEmpty || value.hasPrefix("#") || Self.hasScheme(value) { continue }
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
    private static func attributeValue(in bytes: [UInt8], from index: inout Int) -> Range<Int>? {
        while index + 5 < bytes.count {
            let c = bytes[index] | 0x20
            let isHref = c == 0x68 && bytes[index + 1] | 0x20 == 0x72 && bytes[index + 2] | 0x20 == 0x65
                && bytes[index + 3] | 0x20 == 0x66 && bytes[index + 4] == 0x3D
            let isSrc = c == 0x73 && bytes[index + 1] | 0x20 == 0x72 && bytes[index + 2] | 0x20 == 0x63 && bytes[index + 3] == 0x3D
            let before = index > 0 ? bytes[index - 1] : 0x20
            if (isHref || isSrc) && (before == 0x20 || before == 0x09 || before == 0x0A || before == 0x0D) {
                var cursor = index + (isHref ? 5 : 4)
                guard cursor < bytes.count, bytes[cursor] == 0x22 || bytes[cursor] == 0x27 else { index = cursor; continue }
                let quote = bytes[cursor]
                cursor += 1
                let start = cursor
                while cursor < bytes.count && bytes[cursor] != quote { cursor += 1 }
                index = cursor + 1
                if cursor < bytes.count { return start..<cursor }
                return nil
            }
            index += 1
        }
        index = bytes.count
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

extension String {
    /// The string without leading and trailing XML white space (space, tab, CR, LF).
    func trimmingXMLWhitespace() -> String {
        // The common case, nothing to trim, read from the bytes in place: String's UTF-8 view indices cost ~100
        // instructions a call here (issue 18).
        let untouched = utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            return bytes.isEmpty || (!isSpace(bytes[0]) && !isSpace(bytes[bytes.count - 1]))
        }
        if untouched == true { return self }
        let utf8 = self.utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        while start < end, isSpace(utf8[start]) { start = utf8.index(after: start) }
        while end > start, isSpace(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        if start == utf8.startIndex && end == utf8.endIndex { return self }
        return String(self[start..<end])
    }
}
