import Fetch

/// The options of the commands that fetch feeds (`ingest`, `watch`): `--timeout`, `--max-bytes`, `--user-agent`, and
/// the ``FetchConfiguration`` they make.
enum FetchOptions {
    static let timeout = ValueOption<Double>(
        "--timeout", "D", .duration("a duration above 0 (seconds, or 90s, 2m, 1h)", accepting: { $0 > 0 && $0 <= 86_400 }),
        help: "give up on a feed's transfer after D (seconds, or 90s, 2m; default 60)")
    static let maximumBytes = ValueOption<Int64>(
        "--max-bytes", "N", .size("a size above 0 (bytes, or with k, M or G: 512k, 64M)"),
        help: "refuse a feed whose body is larger than N bytes: a number, or with k, M or G (1024-based: 512k, 64M; default 64M)")
    static let userAgent = ValueOption<String>(
        "--user-agent", "S", .oneLine, help: "the User-Agent header (default \(FetchConfiguration.defaultUserAgent))")

    /// The options, in help order.
    static let all: [any OptionDeclaration] = [timeout, maximumBytes, userAgent]

    /// The fetch configuration `arguments` ask for; Fetch's defaults for the options not given.
    static func configuration(_ arguments: Arguments) throws(UsageError) -> FetchConfiguration {
        var fetch = FetchConfiguration()
        if let seconds = try arguments.value(timeout) {
            fetch.totalTimeout = .seconds(seconds, rounding: .up)
            if fetch.connectTimeout > fetch.totalTimeout { fetch.connectTimeout = fetch.totalTimeout }
        }
        if let bytes = try arguments.value(maximumBytes) {
            fetch.maximumBodyBytes = bytes
            fetch.maximumDecodedBytes = max(bytes, fetch.maximumDecodedBytes)
        }
        if let agent = try arguments.value(userAgent) { fetch.userAgent = agent }
        return fetch
    }
}
