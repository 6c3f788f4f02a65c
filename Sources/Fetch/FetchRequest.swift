import Foundation

/// The validators from an earlier response, for a conditional GET (RFC 9110, section 13).
public struct FetchValidators: Sendable, Hashable {
    /// The earlier `ETag`, sent back as `If-None-Match`.
    public var entityTag: String?
    /// The earlier `Last-Modified`, sent back verbatim as `If-Modified-Since`.
    public var lastModified: String?

    /// Validators; either may be `nil`.
    public init(entityTag: String? = nil, lastModified: String? = nil) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// No validators: an unconditional GET.
    public static let none = FetchValidators()

    /// Whether there is anything to send.
    public var isEmpty: Bool { entityTag == nil && lastModified == nil }
}

/// A request for the rest of a body from ``offset`` on: `Range: bytes=offset-`, and `If-Range` with ``validator`` so
/// that a server whose representation changed sends the whole new one (200) instead of a piece of it
/// (RFC 9110, sections 14.2 and 13.1.5).
public struct ByteRangeRequest: Sendable, Hashable {
    /// The first byte wanted (the length already held).
    public var offset: Int64
    /// The strong validator of the bytes already held: an `ETag` (not a weak `W/` one) or a `Last-Modified` date,
    /// sent as `If-Range`; `nil` sends none (a server may then append bytes of another version: only for callers that
    /// accept that).
    public var validator: String?

    /// A range from `offset` on, conditional on `validator`.
    public init(offset: Int64, validator: String?) {
        self.offset = offset
        self.validator = validator
    }
}

/// One thing to fetch: an `http` or `https` URL (with validators for a conditional GET), or a local file that the
/// caller names explicitly.
public struct FetchRequest: Sendable, Hashable {
    /// The URL to fetch.
    public var url: URL
    /// Validators from the previous fetch of this URL.
    public var validators: FetchValidators
    /// Whether a `file:` URL is allowed. Only ``localFile(_:)`` sets it: a URL from a feed or a redirect never
    /// reads the local disk.
    public private(set) var allowsLocalFile: Bool
    /// Whether the body is read from standard input (``standardInput``).
    public private(set) var readsStandardInput = false
    /// Ask for the bytes from an offset on (`Range: bytes=N-`, with `If-Range`), for resuming a download; `nil` for
    /// the whole body. Setting it also asks for the identity encoding (ranges count the bytes as sent).
    public var byteRange: ByteRangeRequest?
    /// Ask for the body as stored, `Accept-Encoding: identity`, and hand its bytes to the consumer undecoded: what a
    /// file download wants, so offsets in the file are offsets in the server's representation. Default `false` (feeds
    /// are asked for gzip or deflate and inflated). Always on with ``byteRange``.
    public var asksForIdentityEncoding = false
    /// At most this many body bytes per second for this transfer (`CURLOPT_MAX_RECV_SPEED_LARGE`); `nil` for no limit.
    public var maximumReceiveRate: Int64?
    /// Overrides ``FetchConfiguration/maximumBodyBytes`` (and the decoded limit) for this request: a media file is
    /// larger than a feed. `nil` keeps the fetcher's.
    public var maximumBodyBytes: Int64?
    /// Overrides ``FetchConfiguration/totalTimeout`` for this request; `.zero` for none (a large download at a
    /// limited rate). `nil` keeps the fetcher's.
    public var totalTimeout: Duration?
    /// Overrides ``FetchConfiguration/accept`` for this request (`*/*` for an enclosure). `nil` keeps the fetcher's.
    public var accept: String?

    /// Whether the transfer asks for, and delivers, the identity encoding.
    public var deliversIdentity: Bool { asksForIdentityEncoding || byteRange != nil }

    /// A request for an `http` or `https` URL. Any other scheme, `file:` included, fails with
    /// ``FetchError/Kind/unsupportedScheme``; use ``localFile(_:)`` for a file.
    public init(url: URL, validators: FetchValidators = .none) {
        self.url = url
        self.validators = validators
        allowsLocalFile = false
    }

    /// A request for a local file, by path or `file:` URL, explicitly allowed. A `.gz` file (gzip magic number) is
    /// decompressed as it is read.
    public static func localFile(_ path: String) -> FetchRequest {
        let url = path.hasPrefix("file:") ? (URL(string: path) ?? URL(fileURLWithPath: path)) : URL(fileURLWithPath: path)
        var request = FetchRequest(url: url)
        request.allowsLocalFile = true
        return request
    }

    /// A request that reads standard input as the body, like a local file: gzip is recognised by its magic number and
    /// inflated, and bytes are handed on as they arrive (a pipe's first bytes reach the consumer at once).
    public static var standardInput: FetchRequest {
        var request = FetchRequest(url: URL(fileURLWithPath: "/dev/stdin"))
        request.allowsLocalFile = true
        request.readsStandardInput = true
        return request
    }

    /// A request for a local file URL, explicitly allowed.
    public static func localFile(_ url: URL) -> FetchRequest {
        var request = FetchRequest(url: url)
        request.allowsLocalFile = true
        return request
    }

    /// Asks libcurl's URL parser, the one a transfer uses, whether it accepts `text` as an absolute URL; `nil` when it
    /// does, else its reason (`Bad IPv6 address`, `Port number was not a decimal number between 0 and 65535`, ...).
    /// A feed list checks its URLs with this when it is read, so a URL libcurl would refuse is reported with its line
    /// number instead of failing later as a fetch.
    public static func problem(with text: String) -> CurlURLCode? {
        let code = CurlURL.check(text)
        return code == .ok ? nil : code
    }

    /// `url` as a string, as libcurl and messages use it.
    var urlString: String { url.absoluteString }

    /// The URL's scheme, lowercased.
    var scheme: String { url.scheme?.lowercased() ?? "" }
}
