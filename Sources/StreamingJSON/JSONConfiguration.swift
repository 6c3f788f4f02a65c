// The parser's limits and switches, as one value.

/// What a ``JSONPushParser`` accepts: its limits and whether it checks UTF-8.
///
/// Every limit has a default that no real feed comes near; all of them can be changed. Limits are enforced on the bytes
/// as they arrive, so memory stays under them, and where a limit is crossed never depends on how the input was split.
public struct JSONConfiguration: Sendable, Hashable {
    /// The deepest nesting of objects and arrays accepted. Default 512; deeper documents fail with
    /// ``JSONError/Code/depthLimitExceeded`` at the opening bracket that goes too deep.
    public var maximumDepth: Int = 512

    /// The longest string or key accepted, in bytes as written between its quotes (escapes count as written).
    /// Default 16 MiB; longer ones fail with ``JSONError/Code/stringTooLarge`` at the first byte past the limit, before
    /// yajl has buffered more of it. yajl's buffer for a string cut by chunk boundaries stays under this bound.
    public var maximumStringBytes: Int = 16 << 20

    /// The longest document accepted, in bytes. Default 4 GiB; a longer one fails with
    /// ``JSONError/Code/documentTooLarge`` at the first byte past it.
    public var maximumDocumentBytes: Int64 = 4 << 30

    /// Whether yajl checks that strings are UTF-8. Default `true`: invalid bytes fail with
    /// ``JSONError/Code/invalidUTF8``. With `false`, strings are passed on as they are; ``JSONBytes/string`` then
    /// replaces invalid sequences with U+FFFD, and ``JSONBytes/validatedString`` tells when it would.
    public var validatesUTF8: Bool = true

    /// The default configuration.
    public init() {}
}
