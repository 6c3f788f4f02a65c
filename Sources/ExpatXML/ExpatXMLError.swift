/// An error that stopped parsing, with the expat code, a message and where it happened.
///
/// The ``Code`` is libexpat's `enum XML_Error` value for errors that expat found (see `expat.h`),
/// or one of feedingest's own codes (at 1000 and above) for limits and encodings it enforces itself.
public struct ExpatXMLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A parser error code: libexpat's `XML_Error` values plus feedingest's own limits.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The numeric value: an `XML_Error` below 1000, feedingest's own at 1000 and above.
        public let rawValue: Int32

        /// Creates a code from its numeric value.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        // libexpat's codes (expat.h, enum XML_Error). Only the ones callers are likely to match on are named.
        /// Out of memory inside expat.
        public static let noMemory = Code(rawValue: 1)
        /// A syntax error.
        public static let syntax = Code(rawValue: 2)
        /// The document ended before a root element was found.
        public static let noElements = Code(rawValue: 3)
        /// A byte or character that is not allowed where it stands.
        public static let invalidToken = Code(rawValue: 4)
        /// The document ended inside a token (for example a truncated tag).
        public static let unclosedToken = Code(rawValue: 5)
        /// The document ended inside a multi-byte character.
        public static let partialCharacter = Code(rawValue: 6)
        /// An end tag that does not match the open element.
        public static let tagMismatch = Code(rawValue: 7)
        /// The same attribute appears twice on one element.
        public static let duplicateAttribute = Code(rawValue: 8)
        /// Content after the root element closed.
        public static let junkAfterDocumentElement = Code(rawValue: 9)
        /// A reference to an entity that is not declared (for example `&nbsp;` in plain XML).
        public static let undefinedEntity = Code(rawValue: 11)
        /// An entity that refers to itself.
        public static let recursiveEntityReference = Code(rawValue: 12)
        /// A character reference to a character XML forbids (for example `&#0;`).
        public static let badCharacterReference = Code(rawValue: 14)
        /// An attribute value that refers to an external entity.
        public static let attributeExternalEntityReference = Code(rawValue: 16)
        /// An XML declaration that is not at the very start of the document.
        public static let misplacedXMLDeclaration = Code(rawValue: 17)
        /// An encoding that expat does not know and feedingest could not supply.
        public static let unknownEncoding = Code(rawValue: 18)
        /// Bytes that are not valid in the document's encoding.
        public static let incorrectEncoding = Code(rawValue: 19)
        /// The document ended inside a CDATA section.
        public static let unclosedCDATASection = Code(rawValue: 20)
        /// A namespace prefix that was never declared.
        public static let unboundPrefix = Code(rawValue: 27)
        /// A malformed XML declaration.
        public static let xmlDeclaration = Code(rawValue: 30)
        /// Parsing was stopped by ``ExpatXMLParser/abortParsing()`` or ``XMLPushParser/abortParsing()``.
        public static let aborted = Code(rawValue: 35)
        /// The parser had already finished.
        public static let finished = Code(rawValue: 36)
        /// Entity expansion grew past the billion-laughs protection limits.
        public static let amplificationLimitBreach = Code(rawValue: 43)

        // feedingest's own codes.
        /// Elements nested deeper than ``ExpatXMLConfiguration/maximumDepth``.
        public static let depthLimitExceeded = Code(rawValue: 1000)
        /// One text node longer than ``ExpatXMLConfiguration/maximumTextNodeBytes``.
        public static let textNodeTooLarge = Code(rawValue: 1001)
        /// A character encoding that neither expat nor iconv can decode.
        public static let unsupportedEncoding = Code(rawValue: 1002)
        /// The input could not be read (a missing file, an I/O error).
        public static let readFailed = Code(rawValue: 1003)
        /// libexpat refused a call that sets the parser up (the message names it): a limit it does not accept, such
        /// as a ``ExpatXMLConfiguration/maximumAmplification`` below 1, or an encoding it could not take.
        public static let setupFailed = Code(rawValue: 1004)
        /// libuchardet failed while naming the encoding of a document that declares none (the message has its code).
        public static let encodingDetectionFailed = Code(rawValue: 1005)

        /// The code as a stable lowercase name for scripts and reports (`tag-mismatch`, `depth-limit-exceeded`);
        /// `expat-N` for a code without a name here.
        public var name: String {
            switch self {
            case .noMemory: return "no-memory"
            case .syntax: return "syntax"
            case .noElements: return "no-elements"
            case .invalidToken: return "invalid-token"
            case .unclosedToken: return "unclosed-token"
            case .partialCharacter: return "partial-character"
            case .tagMismatch: return "tag-mismatch"
            case .duplicateAttribute: return "duplicate-attribute"
            case .junkAfterDocumentElement: return "junk-after-document-element"
            case .undefinedEntity: return "undefined-entity"
            case .recursiveEntityReference: return "recursive-entity-reference"
            case .badCharacterReference: return "bad-character-reference"
            case .attributeExternalEntityReference: return "attribute-external-entity-reference"
            case .misplacedXMLDeclaration: return "misplaced-xml-declaration"
            case .unknownEncoding: return "unknown-encoding"
            case .incorrectEncoding: return "incorrect-encoding"
            case .unclosedCDATASection: return "unclosed-cdata-section"
            case .unboundPrefix: return "unbound-prefix"
            case .xmlDeclaration: return "xml-declaration"
            case .aborted: return "aborted"
            case .finished: return "finished"
            case .amplificationLimitBreach: return "amplification-limit-breach"
            case .depthLimitExceeded: return "depth-limit-exceeded"
            case .textNodeTooLarge: return "text-node-too-large"
            case .unsupportedEncoding: return "unsupported-encoding"
            case .readFailed: return "read-failed"
            case .setupFailed: return "setup-failed"
            case .encodingDetectionFailed: return "encoding-detection-failed"
            default: return "expat-\(rawValue)"
            }
        }

        /// The code's name, for messages and logs.
        public var description: String {
            switch self {
            case .depthLimitExceeded: return "depth limit exceeded"
            case .textNodeTooLarge: return "text node too large"
            case .unsupportedEncoding: return "unsupported encoding"
            case .readFailed: return "read failed"
            case .setupFailed: return "setup failed"
            case .encodingDetectionFailed: return "encoding detection failed"
            default: return "expat error \(rawValue)"
            }
        }
    }

    /// What went wrong, as a code to match on.
    public var code: Code
    /// A human-readable message (expat's `XML_ErrorString`, or feedingest's own words).
    public var message: String
    /// The 1-based line where the error was found, or 0 when it has no position.
    public var line: Int
    /// The 0-based column, counted in characters of the decoded text, where the error was found.
    public var column: Int
    /// The byte offset into the bytes expat saw (after any transcoding), or -1 when unknown.
    public var byteOffset: Int64
    /// The input's name (a file path or URL) when the caller gave one.
    public var source: String?

    /// Creates an error value.
    public init(code: Code, message: String, line: Int = 0, column: Int = 0, byteOffset: Int64 = -1, source: String? = nil) {
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
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
