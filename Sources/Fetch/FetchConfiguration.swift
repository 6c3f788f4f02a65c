/// How a ``Fetcher`` transfers: concurrency, timeouts, redirects, limits and the request headers it sends.
///
/// Every value has a documented default chosen for polite, safe feed fetching; all of them can be changed.
public struct FetchConfiguration: Sendable, Hashable {
    /// feedingest's version, as it appears in the default User-Agent.
    public static let version = "0.1.0"
    /// The project's address, as it appears in the default User-Agent, so a server operator can find who fetches.
    public static let projectURL = "https://github.com/feedingest/feedingest"
    /// `feedingest/<version> (+<project URL>)`.
    public static let defaultUserAgent = "feedingest/\(version) (+\(projectURL))"

    // MARK: Concurrency and connections

    /// How many transfers run at once; more wait in line, first come first served. Default 32.
    public var maximumConcurrentTransfers: Int = 32
    /// How many connections may be open to one host (name and port) at once (`CURLMOPT_MAX_HOST_CONNECTIONS`).
    /// Default 6, what browsers use: polite to a host that serves many feeds. Transfers beyond it wait for a
    /// connection, or share one over HTTP/2.
    public var maximumConnectionsPerHost: Int = 6
    /// The name of the fetcher's transfer thread, as debuggers and `/proc/<pid>/task/*/comm` show it (Linux keeps
    /// 15 bytes). Default `feedingest.fetch`.
    public var threadName = "feedingest.fetch"
    /// How many idle connections are kept for reuse (`CURLMOPT_MAXCONNECTS`). Default 64.
    public var maximumCachedConnections: Int = 64
    /// Whether transfers to one host share an HTTP/2 connection when the server offers HTTP/2 over TLS
    /// (`CURLMOPT_PIPELINING` = `CURLPIPE_MULTIPLEX`, `CURLOPT_PIPEWAIT`). Default `true`.
    public var usesHTTP2Multiplexing: Bool = true

    // MARK: Timeouts

    /// The longest a connection may take to establish, TLS included (`CURLOPT_CONNECTTIMEOUT_MS`). Default 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// The longest a whole transfer may take, redirects included (`CURLOPT_TIMEOUT_MS`). Default 60 s.
    public var totalTimeout: Duration = .seconds(60)
    /// A transfer slower than this many bytes per second for ``lowSpeedTime`` is abandoned
    /// (`CURLOPT_LOW_SPEED_LIMIT`). Default 100 bytes/s. Time spent paused by a slow consumer does not count.
    public var lowSpeedLimit: Int = 100
    /// How long a transfer may stay below ``lowSpeedLimit`` (`CURLOPT_LOW_SPEED_TIME`, whole seconds). Default 20 s.
    public var lowSpeedTime: Duration = .seconds(20)

    // MARK: Redirects

    /// The most redirects followed (`CURLOPT_MAXREDIRS`). Default 5. Only to `http` and `https`, never to `file:`
    /// or any other scheme.
    public var maximumRedirects: Int = 5

    // MARK: Limits

    /// The most body bytes accepted off the wire, before any decompression. Default 64 MiB. A larger announced
    /// `Content-Length` is refused before the body starts; a body that grows past it is stopped as it arrives.
    public var maximumBodyBytes: Int64 = 64 << 20
    /// The most body bytes accepted after decompression. Default 256 MiB.
    public var maximumDecodedBytes: Int64 = 256 << 20
    /// The largest ratio of decompressed to compressed bytes accepted, once ``inflationRatioActivationBytes``
    /// have been produced. Default 100: XML feeds compress 5 to 20 times, a gzip bomb about 1,000 times.
    public var maximumInflationRatio: Double = 100
    /// The decompressed size from which ``maximumInflationRatio`` is checked. Default 1 MiB.
    public var inflationRatioActivationBytes: Int64 = 1 << 20
    /// The most body bytes held for a consumer that has not taken them yet. Default 256 KiB. When a consumer falls
    /// behind, its transfer pauses (libcurl stops reading the socket) until it catches up, so memory stays bounded.
    public var maximumBufferedBytes: Int = 256 << 10
    /// The receive buffer libcurl uses per transfer (`CURLOPT_BUFFERSIZE`), the largest piece the write callback
    /// gets. Default 64 KiB.
    public var receiveBufferSize: Int = 64 << 10

    // MARK: Requests

    /// The `User-Agent` header. Default ``defaultUserAgent``.
    public var userAgent: String = FetchConfiguration.defaultUserAgent
    /// The `Accept` header: feed types first. Default `application/rss+xml, application/atom+xml,
    /// application/rdf+xml;q=0.9, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.5`.
    public var accept: String = "application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.5"
    /// Whether to hash each body, as received, with SHA-256 while it streams (``FetchResult/bodySHA256``).
    /// Default `true`.
    public var computesBodyHash: Bool = true
    /// A file of CA certificates to trust instead of the system's (`CURLOPT_CAINFO`), or `nil` for the system's.
    public var certificateAuthorityFile: String? = nil

    /// The default configuration.
    public init() {}
}
