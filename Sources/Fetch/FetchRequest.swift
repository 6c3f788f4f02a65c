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

    /// A request for a local file URL, explicitly allowed.
    public static func localFile(_ url: URL) -> FetchRequest {
        var request = FetchRequest(url: url)
        request.allowsLocalFile = true
        return request
    }

    /// `url` as a string, as libcurl and messages use it.
    var urlString: String { url.absoluteString }

    /// The URL's scheme, lowercased.
    var scheme: String { url.scheme?.lowercased() ?? "" }
}
