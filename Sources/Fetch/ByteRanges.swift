// Ranged responses: the `Content-Range` and `Content-Length` of a response, and the strong validator a resumed
// request sends as `If-Range` (RFC 9110, sections 8.6, 8.8, 13.1.5 and 14.4).
import Foundation

/// A `Content-Range` header of a byte range: `bytes FIRST-LAST/LENGTH` (a 206), or `bytes */LENGTH` (a 416: the range
/// asked for is not satisfiable, and the representation is LENGTH bytes long). RFC 9110, section 14.4.
public struct ContentRange: Sendable, Hashable, CustomStringConvertible {
    /// The first byte sent, `nil` for the unsatisfied form `bytes */LENGTH`.
    public var first: Int64?
    /// The last byte sent (inclusive), `nil` for the unsatisfied form.
    public var last: Int64?
    /// The representation's whole length, `nil` when the server wrote `*` (unknown).
    public var completeLength: Int64?

    /// Creates a value.
    public init(first: Int64?, last: Int64?, completeLength: Int64?) {
        self.first = first
        self.last = last
        self.completeLength = completeLength
    }

    /// Parses a header value; `nil` when it is not a well-formed byte range (another unit, a last before the first, a
    /// last at or past a known length, numbers that overflow).
    public init?(_ value: String) {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes "), let slash = text.lastIndex(of: "/") else { return nil }
        let range = text[text.index(text.startIndex, offsetBy: 6)..<slash].trimmingCharacters(in: .whitespaces)
        let length = text[text.index(after: slash)...].trimmingCharacters(in: .whitespaces)
        if length == "*" {
            completeLength = nil
        } else {
            guard let number = Self.number(length) else { return nil }
            completeLength = number
        }
        if range == "*" {
            guard completeLength != nil else { return nil }  // `bytes */*` says nothing
            first = nil
            last = nil
            return
        }
        let parts = range.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Self.number(parts[0]), let last = Self.number(parts[1]), first <= last else { return nil }
        if let completeLength, last >= completeLength { return nil }
        self.first = first
        self.last = last
    }

    /// Whether this is the unsatisfied form, `bytes */LENGTH`.
    public var isUnsatisfied: Bool { first == nil }

    /// How many bytes the range holds, `nil` for the unsatisfied form.
    public var count: Int64? {
        guard let first, let last else { return nil }
        return last - first + 1
    }

    /// The header's value, as a server writes it.
    public var description: String {
        let length = completeLength.map(String.init) ?? "*"
        guard let first, let last else { return "bytes */\(length)" }
        return "bytes \(first)-\(last)/\(length)"
    }

    private static func number(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text)
    }
}

extension FetchResponse {
    /// The `Content-Range` header, when present and well-formed.
    public var contentRange: ContentRange? { headers["Content-Range"].flatMap(ContentRange.init) }

    /// The `Content-Length` header as a number, when present and a plain non-negative number.
    public var contentLength: Int64? {
        guard let text = headers["Content-Length"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty,
              text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text)
    }

    /// Whether the server says it accepts byte ranges (`Accept-Ranges: bytes`); `false` also when it says nothing,
    /// though a server may still honour a `Range` then.
    public var acceptsByteRanges: Bool {
        headers.values(for: "Accept-Ranges").contains { $0.lowercased().split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "bytes" } }
    }

    /// The validator a resumed request may send as `If-Range`: the `ETag` when it is strong (no `W/`: a weak tag may
    /// not be used with ranges, RFC 9110 section 13.1.5), else `Last-Modified`; `nil` when the response has neither.
    public var strongValidator: String? {
        if let tag = entityTag?.trimmingCharacters(in: .whitespaces), !tag.isEmpty, !tag.hasPrefix("W/") { return tag }
        if let date = lastModified?.trimmingCharacters(in: .whitespaces), !date.isEmpty { return date }
        return nil
    }
}
