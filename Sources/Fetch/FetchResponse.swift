import Foundation

/// Response header fields in the order they arrived, with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    /// Every field as `(name, value)`, names as the server wrote them, values trimmed.
    public private(set) var fields: [(name: String, value: String)] = []

    /// No fields.
    public init() {}

    /// The given fields, in order.
    public init(_ fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    mutating func append(name: String, value: String) {
        fields.append((name, value))
    }

    mutating func appendToLast(_ continuation: String) {
        guard let last = fields.popLast() else { return }
        fields.append((last.name, last.value + " " + continuation))
    }

    /// The first value of the field `name` (any case), or `nil`.
    public subscript(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of the field `name` (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Equal when the same fields arrived in the same order.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes the fields.
    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}

/// How long a server asks a client to wait (`Retry-After`, RFC 9110 section 10.2.3): seconds, or an HTTP date.
public enum RetryAfter: Sendable, Hashable {
    /// A delay in seconds.
    case seconds(Int)
    /// A point in time.
    case date(Date)

    /// Parses a `Retry-After` value; `nil` when it is neither a non-negative integer nor an HTTP date.
    public init?(_ value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 {
            self = .seconds(seconds)
        } else if let date = HTTPDate.parse(trimmed) {
            self = .date(date)
        } else {
            return nil
        }
    }

    /// The delay from `now`, never negative.
    public func delay(from now: Date = Date()) -> TimeInterval {
        switch self {
        case .seconds(let seconds): return TimeInterval(seconds)
        case .date(let date): return max(0, date.timeIntervalSince(now))
        }
    }
}

/// The final response of a transfer, after any redirects: status, headers and what Fetch reads from them.
public struct FetchResponse: Sendable, Hashable {
    /// The HTTP status code (200 for a local file).
    public var status: Int
    /// The response header fields (none for a local file).
    public var headers: HTTPHeaders
    /// The URL that answered, after redirects.
    public var url: URL
    /// The HTTP version as libcurl reports it: "1.0", "1.1", "2" or "3", or `nil` (a local file).
    public var httpVersion: String?

    /// Creates a response value.
    public init(status: Int, headers: HTTPHeaders, url: URL, httpVersion: String? = nil) {
        self.status = status
        self.headers = headers
        self.url = url
        self.httpVersion = httpVersion
    }

    /// The `Content-Type` media type, lowercased, without parameters (`application/rss+xml`).
    public var mediaType: String? {
        // An empty or parameter-only value (`Content-Type:`, `Content-Type: ;charset=x`) names no type (found by fuzzing:
        // indexing the split of an empty value trapped).
        guard let value = headers["Content-Type"],
              let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first?
                .trimmingCharacters(in: .whitespaces).lowercased(),
              !type.isEmpty else { return nil }
        return type
    }

    /// The `charset` parameter of `Content-Type`, unquoted (`iso-8859-1`), or `nil`. A parser takes it as its charset hint
    /// (XMLFetching's `ExpatXMLConfiguration.applyingCharset(of:)`).
    public var charset: String? {
        guard let contentType = headers["Content-Type"] else { return nil }
        for parameter in contentType.split(separator: ";", omittingEmptySubsequences: false).dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            let value = pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// The `Content-Encoding` codings, lowercased, in the order applied (`["gzip"]`); empty for none or `identity`.
    public var contentEncodings: [String] {
        headers.values(for: "Content-Encoding")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
    }

    /// The `ETag`, verbatim (weak tags keep their `W/`), to send back as ``FetchValidators/entityTag``.
    public var entityTag: String? { headers["ETag"] }
    /// The `Last-Modified` value, verbatim, to send back as ``FetchValidators/lastModified``.
    public var lastModified: String? { headers["Last-Modified"] }
    /// `Last-Modified` as a date, when it parses.
    public var lastModifiedDate: Date? { lastModified.flatMap(HTTPDate.parse) }
    /// The validators to send with the next fetch of this URL.
    public var validators: FetchValidators { FetchValidators(entityTag: entityTag, lastModified: lastModified) }

    /// `Cache-Control: max-age`, in seconds.
    public var maxAge: Int? {
        for value in headers.values(for: "Cache-Control") {
            for directive in value.split(separator: ",") {
                let pair = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if pair.count == 2, pair[0].lowercased() == "max-age",
                   let seconds = Int(pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))), seconds >= 0 {
                    return seconds
                }
            }
        }
        return nil
    }

    /// `Expires` as a date; `nil` when absent or invalid (RFC 9111 reads an invalid date as "already expired").
    public var expires: Date? { headers["Expires"].flatMap(HTTPDate.parse) }

    /// `Retry-After`, seconds or a date.
    public var retryAfter: RetryAfter? { headers["Retry-After"].flatMap(RetryAfter.init) }

    /// The `Link` header's `rel="hub"` targets (WebSub), resolved against ``url``.
    public var hubLinks: [URL] { links(rel: "hub") }
    /// The `Link` header's `rel="self"` target, resolved against ``url``.
    public var selfLink: URL? { links(rel: "self").first }

    /// Every `Link` target (RFC 8288) whose `rel` includes `rel`, resolved against ``url``.
    public func links(rel: String) -> [URL] {
        LinkHeader.parse(headers.values(for: "Link"))
            .filter { $0.relations.contains(rel.lowercased()) }
            .compactMap { URL(string: $0.target, relativeTo: url)?.absoluteURL }
    }
}

/// One hop of a redirect chain.
public struct Redirect: Sendable, Hashable {
    /// The redirect's status: 301, 302, 303, 307 or 308.
    public var status: Int
    /// The URL that answered with the redirect.
    public var from: URL
    /// Where it pointed (`Location`, resolved against ``from``), or the raw `Location` text if it would not parse.
    public var location: String

    /// Creates a hop.
    public init(status: Int, from: URL, location: String) {
        self.status = status
        self.from = from
        self.location = location
    }

    /// Whether the hop is permanent (301 or 308), so the feed's address may be updated.
    public var isPermanent: Bool { status == 301 || status == 308 }
}

/// `Link` header parsing (RFC 8288): `<target>; rel="a b"; other=x, <target2>; rel=c`.
enum LinkHeader {
    struct Link {
        var target: String
        var relations: Set<String>
    }

    static func parse(_ values: [String]) -> [Link] {
        var links: [Link] = []
        for value in values {
            var rest = Substring(value)
            while let open = rest.firstIndex(of: "<") {
                guard let close = rest[open...].firstIndex(of: ">") else { break }
                let target = String(rest[rest.index(after: open)..<close])
                rest = rest[rest.index(after: close)...]
                // Parameters run to the next comma that is outside quotes.
                var parameters = Substring()
                var inQuotes = false
                var end = rest.endIndex
                for index in rest.indices {
                    let character = rest[index]
                    if character == "\"" { inQuotes.toggle() }
                    if character == "," && !inQuotes { end = index; break }
                }
                parameters = rest[..<end]
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : Substring()
                var relations = Set<String>()
                for parameter in parameters.split(separator: ";") {
                    let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard pair.count == 2, pair[0].lowercased() == "rel" else { continue }
                    let names = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    relations.formUnion(names.lowercased().split(separator: " ").map(String.init))
                }
                links.append(Link(target: target, relations: relations))
            }
        }
        return links
    }
}

/// HTTP dates (RFC 9110, section 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms, always GMT.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Parses an HTTP date; `nil` when the text is not one.
    public static func parse(_ text: String) -> Date? {
        // Split on spaces, commas, colons and dashes; the forms differ only in order.
        let parts = text.lowercased().split { " ,:-".contains($0) }.map(String.init)
        var day: Int?, month: Int?, year: Int?, hour: Int?, minute: Int?, second: Int?
        switch parts.count {
        case 8 where parts[7] == "gmt":
            // IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" or RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT".
            day = Int(parts[1]); month = months.firstIndex(of: parts[2]).map { $0 + 1 }; year = Int(parts[3])
            hour = Int(parts[4]); minute = Int(parts[5]); second = Int(parts[6])
            if let y = year, parts[3].count == 2 { year = y < 70 ? 2000 + y : 1900 + y }
        case 7:
            // asctime "Sun Nov  6 08:49:37 1994".
            month = months.firstIndex(of: parts[1]).map { $0 + 1 }; day = Int(parts[2])
            hour = Int(parts[3]); minute = Int(parts[4]); second = Int(parts[5]); year = Int(parts[6])
        default:
            return nil
        }
        guard let day, let month, let year, let hour, let minute, let second,
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var components = DateComponents()
        components.year = year; components.month = month; components.day = day
        components.hour = hour; components.minute = minute; components.second = second
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        return calendar.date(from: components)
    }

    /// Formats a date as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    public static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int?) -> String { let n = n ?? 0; return n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekdays[(c.weekday ?? 1) - 1]), \(two(c.day)) \(monthNames[(c.month ?? 1) - 1]) \(c.year ?? 1970) "
            + "\(two(c.hour)):\(two(c.minute)):\(two(c.second)) GMT"
    }
}
