// The error a JSON parse stops with: yajl's verdict or one of our limits, with the byte offset, line and column.

/// An error that stopped parsing: what went wrong, yajl's message (or feedingest's own words) and where.
///
/// The ``Code`` says which rule broke. Codes below 1000 are errors yajl found (`yajl_parse` or `yajl_complete_parse`
/// returned `yajl_status_error`); yajl numbers none of its errors, so they are told apart by its message, which is kept
/// as ``message``. Codes from 1000 are feedingest's own limits and states.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A parser error code: the kinds of error yajl reports, plus feedingest's own limits.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The numeric value: below 1000 for errors yajl found, feedingest's own at 1000 and above.
        public let rawValue: Int32

        /// Creates a code from its numeric value.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        // Errors yajl found (yajl_status_error), told apart by yajl's message.
        /// Not JSON where it stands: an unexpected character or token, a malformed number or escape, trailing garbage.
        public static let syntax = Code(rawValue: 1)
        /// The document ended inside a value (yajl's "premature EOF").
        public static let truncated = Code(rawValue: 2)
        /// A string holds bytes that are not UTF-8 (only when ``JSONConfiguration/validatesUTF8`` is on).
        public static let invalidUTF8 = Code(rawValue: 3)
        /// A raw control character (below U+0020) inside a string, where JSON requires an escape.
        public static let controlCharacter = Code(rawValue: 4)
        /// The document holds nothing but white space.
        public static let empty = Code(rawValue: 5)

        // feedingest's own codes.
        /// Objects and arrays nested deeper than ``JSONConfiguration/maximumDepth``.
        public static let depthLimitExceeded = Code(rawValue: 1000)
        /// A string or key longer than ``JSONConfiguration/maximumStringBytes``.
        public static let stringTooLarge = Code(rawValue: 1001)
        /// A document longer than ``JSONConfiguration/maximumDocumentBytes``.
        public static let documentTooLarge = Code(rawValue: 1002)
        /// The input could not be read (a missing file, an I/O error).
        public static let readFailed = Code(rawValue: 1003)
        /// yajl could not be set up: `yajl_alloc` returned no parser (out of memory) or `yajl_config` refused an option.
        public static let setupFailed = Code(rawValue: 1004)
        /// Parsing was stopped by ``JSONPushParser/abortParsing()``.
        public static let aborted = Code(rawValue: 1005)
        /// The parser had already finished.
        public static let finished = Code(rawValue: 1006)

        /// The code as a stable lowercase name for scripts and reports (`syntax`, `truncated`, `string-too-large`);
        /// `json-N` for a code without a name here.
        public var name: String {
            switch self {
            case .syntax: return "syntax"
            case .truncated: return "truncated"
            case .invalidUTF8: return "invalid-utf8"
            case .controlCharacter: return "control-character"
            case .empty: return "empty"
            case .depthLimitExceeded: return "depth-limit-exceeded"
            case .stringTooLarge: return "string-too-large"
            case .documentTooLarge: return "document-too-large"
            case .readFailed: return "read-failed"
            case .setupFailed: return "setup-failed"
            case .aborted: return "aborted"
            case .finished: return "finished"
            default: return "json-\(rawValue)"
            }
        }

        /// The code's name, for messages and logs.
        public var description: String { name }
    }

    /// What went wrong, as a code to match on.
    public var code: Code
    /// A human-readable message: yajl's own (`yajl_get_error`, without the verbose excerpt) or feedingest's words.
    public var message: String
    /// The byte offset into the input where the error was found (a UTF-8 byte-order mark counts), or -1 when unknown.
    ///
    /// For yajl's errors, where its lexer stopped; for an error found in an event (a depth limit, a handler's
    /// abort), the end of that event's token; for a size limit, the first byte past it; at the end of the input, the
    /// input's length. None of these depends on how the input was split into chunks.
    public var byteOffset: Int64
    /// The 1-based line of ``byteOffset``, or 0 when it has no position.
    public var line: Int
    /// The 0-based column of ``byteOffset`` on its line, counted in bytes.
    public var column: Int
    /// The input's name (a file path or URL) when the caller gave one.
    public var source: String?

    /// Creates an error value.
    public init(code: Code, message: String, byteOffset: Int64 = -1, line: Int = 0, column: Int = 0, source: String? = nil) {
        self.code = code
        self.message = message
        self.byteOffset = byteOffset
        self.line = line
        self.column = column
        self.source = source
    }

    /// `source:line:column: message`, the form compilers use, so editors can jump to it.
    public var description: String {
        var text = ""
        if let source { text += source + ":" }
        if line > 0 { text += "\(line):\(column):" }
        if !text.isEmpty { text += " " }
        return text + message
    }
}
