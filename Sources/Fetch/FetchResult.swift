import Foundation
import Support

/// Why a fetch failed: a kind to match on, the C code behind it, a specific message and the URL.
public struct FetchError: Error, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// An HTTP error status not covered by a more specific kind (404, 500, an unfollowed 3xx, ...).
        case httpStatus(Int)
        /// `410 Gone`: the feed is gone for good; stop fetching it.
        case gone
        /// `429 Too Many Requests`, with the server's `Retry-After` when it sent one.
        case rateLimited(retryAfter: RetryAfter?)
        /// `503 Service Unavailable`, with the server's `Retry-After` when it sent one.
        case serviceUnavailable(retryAfter: RetryAfter?)
        /// The host name did not resolve.
        case dnsFailure
        /// The connection was refused (or could not be made for another reason than a missing route).
        case connectionRefused
        /// There is no route to the network (`ENETUNREACH`, `ENETDOWN`): the network is down or not configured,
        /// rather than the server refusing.
        case unreachable
        /// The TLS handshake or certificate verification failed.
        case tlsFailure
        /// The connect, total or low-speed timeout expired (the message says which).
        case timeout
        /// The body stopped early: the connection was reset or closed, or a compressed body ended before its end
        /// marker. What the consumer parsed before is kept.
        case truncated
        /// A limit was exceeded: body bytes on the wire, decompressed bytes, or the decompression ratio.
        case tooLarge(Limit)
        /// More redirects than ``FetchConfiguration/maximumRedirects``, or a redirect loop.
        case tooManyRedirects
        /// The URL, or a redirect, uses a scheme other than `http` and `https` (for example `file:`).
        case unsupportedScheme
        /// The URL is not well-formed.
        case invalidURL
        /// The body's `Content-Encoding` is not one feedingest asked for (only gzip and deflate are).
        case badContentEncoding
        /// The compressed body is damaged: not valid data of its format, a failed checksum, or bytes after its end.
        ///
        /// The body was compressed by its `Content-Encoding`, or is gzip by its magic number. ``FetchError/underlying``
        /// is the ``InflateError``. It wins over a consumer's error about the garbage the damage decoded to (an XML
        /// "mismatched tag").
        case decompression
        /// The consumer threw; ``FetchError/underlying`` holds its error (for example an `ExpatXMLError`).
        case consumerFailed
        /// A local file could not be read.
        case fileUnreadable
        /// The transfer was cancelled.
        case cancelled
        /// Any other network or protocol failure; ``FetchError/curlCode`` tells which.
        case network
        /// A C library failed on its own account, not because of the feed or the network: libcurl's multi
        /// interface (the message names the call and its `CURLMcode`, ``FetchError/curlMultiCode``), zlib's stream
        /// state or memory, or libcrypto hashing the body (``FetchError/underlying`` is then a ``HashError``).
        case libraryFailure
    }

    /// Which limit a ``Kind/tooLarge(_:)`` failure exceeded.
    public enum Limit: Sendable, Hashable {
        /// ``FetchConfiguration/maximumBodyBytes``: bytes on the wire.
        case bodyBytes
        /// ``FetchConfiguration/maximumDecodedBytes``: bytes after decompression.
        case decodedBytes
        /// ``FetchConfiguration/maximumInflationRatio``.
        case inflationRatio
    }

    /// What went wrong.
    public var kind: Kind
    /// libcurl's code, when libcurl reported the failure.
    public var curlCode: CurlCode?
    /// libcurl's multi-interface code, when a `curl_multi_*` call failed (``Kind/libraryFailure``).
    public var curlMultiCode: CurlMultiCode?
    /// A specific message: libcurl's, zlib's, or Fetch's own.
    public var message: String
    /// The URL requested.
    public var url: String
    /// The final HTTP status, when a response arrived.
    public var status: Int?
    /// The error behind this one: the consumer's, an ``InflateError``, a ``HashError`` or a ``CurlMultiError``.
    public var underlying: (any Error)?

    /// Creates an error value.
    public init(kind: Kind, message: String, url: String, curlCode: CurlCode? = nil, curlMultiCode: CurlMultiCode? = nil,
                status: Int? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.url = url
        self.curlCode = curlCode
        self.curlMultiCode = curlMultiCode
        self.status = status
        self.underlying = underlying
    }

    /// `url: message [CURLcode n]` (or `[CURLMcode n]`), the URL's password replaced by `***` (``Redaction``): a
    /// description is for people. ``url`` keeps it.
    public var description: String {
        var text = "\(Redaction.redactedURL(url)): \(Redaction.redactedText(message))"
        if let curlCode { text += " [CURLcode \(curlCode.rawValue)]" }
        if let curlMultiCode { text += " [CURLMcode \(curlMultiCode.rawValue)]" }
        return text
    }
}

/// Two fetch errors are equal when their kind, codes, message, URL and status are: ``FetchError/underlying`` (an
/// explanation of the same failure) is not compared, so results that carry errors can be compared and hashed.
extension FetchError: Hashable {
    public static func == (lhs: FetchError, rhs: FetchError) -> Bool {
        lhs.kind == rhs.kind && lhs.curlCode == rhs.curlCode && lhs.message == rhs.message && lhs.url == rhs.url
            && lhs.status == rhs.status
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(curlCode)
        hasher.combine(message)
        hasher.combine(url)
        hasher.combine(status)
    }
}

/// What a fetch ended with.
public enum FetchOutcome: Sendable {
    /// The whole body was delivered to the consumer, which finished without error.
    case ok
    /// `304 Not Modified`: the validators still hold; nothing was delivered.
    case notModified
    /// The fetch failed; anything the consumer received before the failure is still its own.
    case failed(FetchError)
}

/// Everything known about one finished fetch: the outcome, the final response, redirects, sizes and a body hash.
public struct FetchResult: Sendable {
    /// The request as submitted.
    public var request: FetchRequest
    /// How it ended.
    public var outcome: FetchOutcome
    /// The final response, when one arrived (also for HTTP errors and 304).
    public var response: FetchResponse?
    /// The redirects, in order, including the last one refused (too many, or to a forbidden scheme).
    public var redirects: [Redirect] = []
    /// The URL the body came from, after redirects.
    public var finalURL: URL?
    /// Body bytes received on the wire.
    public var bodyBytes: Int64 = 0
    /// Body bytes after decompression: what the consumer received.
    public var decodedBytes: Int64 = 0
    /// SHA-256 of the body as it came off the wire (before decompression), when it was delivered completely and
    /// hashing is on. Equal hashes mean an unchanged body even when the server sends no validators. Hashing the raw
    /// bytes costs a seventh of hashing the decoded ones for a gzip feed; a server that changes its compression
    /// makes a "changed" that is not (one needless parse), never the other way round.
    public var bodySHA256: SHA256Digest?
    /// The compression that was decoded, or `nil` for none.
    ///
    /// The `Content-Encoding`, or `gzip` found by its magic number in a body that named none (a local `.gz` file, a
    /// gzip file served as it is).
    public var contentEncoding: String?
    /// New connections the transfer opened (`CURLINFO_NUM_CONNECTS`): 0 when it reused a kept-alive connection.
    public var newConnections: Int = 0
    /// How many times the transfer paused because the consumer fell behind.
    public var pauses: Int = 0
    /// The most body bytes that waited for the consumer at any moment; bounded by
    /// ``FetchConfiguration/maximumBufferedBytes`` (or one receive buffer, when that is larger).
    public var peakBufferedBytes: Int = 0
    /// Time from submission to the end, in seconds.
    public var duration: TimeInterval = 0

    /// Creates a result value.
    public init(request: FetchRequest, outcome: FetchOutcome) {
        self.request = request
        self.outcome = outcome
    }

    /// Whether every redirect was permanent (301/308) and there was at least one: the caller may update the
    /// feed's address to ``finalURL``.
    public var isPermanentlyRedirected: Bool {
        !redirects.isEmpty && redirects.allSatisfy(\.isPermanent)
    }

    /// The failure, when the outcome is ``FetchOutcome/failed(_:)``.
    public var error: FetchError? {
        if case .failed(let error) = outcome { return error }
        return nil
    }

    /// Whether the outcome is ``FetchOutcome/ok``.
    public var isOK: Bool {
        if case .ok = outcome { return true }
        return false
    }

    /// Whether the outcome is ``FetchOutcome/notModified``.
    public var isNotModified: Bool {
        if case .notModified = outcome { return true }
        return false
    }
}

extension FetchError.Kind {
    /// The kind as a stable lowercase name (`http-status`, `rate-limited`, `too-large`, ...).
    public var name: String {
        switch self {
        case .httpStatus: return "http-status"
        case .gone: return "gone"
        case .rateLimited: return "rate-limited"
        case .serviceUnavailable: return "service-unavailable"
        case .dnsFailure: return "dns-failure"
        case .connectionRefused: return "connection-refused"
        case .unreachable: return "unreachable"
        case .tlsFailure: return "tls-failure"
        case .timeout: return "timeout"
        case .truncated: return "truncated"
        case .tooLarge: return "too-large"
        case .tooManyRedirects: return "too-many-redirects"
        case .unsupportedScheme: return "unsupported-scheme"
        case .invalidURL: return "invalid-url"
        case .badContentEncoding: return "bad-content-encoding"
        case .decompression: return "decompression"
        case .consumerFailed: return "consumer-failed"
        case .fileUnreadable: return "file-unreadable"
        case .cancelled: return "cancelled"
        case .network: return "network"
        case .libraryFailure: return "library-failure"
        }
    }
}
