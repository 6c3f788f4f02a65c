/// How a parser treats namespaces, CDATA, encodings, and the limits it enforces.
///
/// Every limit has a default that no real feed comes near; all of them can be changed.
/// External entities, external DTDs and parameter entities are never loaded, whatever the configuration:
/// there is deliberately no switch for that.
public struct ExpatXMLConfiguration: Sendable, Hashable {
    /// How CDATA sections reach the handler.
    public enum CDATAHandling: Sendable, Hashable {
        /// CDATA content is part of the surrounding text node, delivered as ordinary text (the default).
        case mergeIntoText
        /// CDATA sections are delivered on their own, through `foundCDATA` / ``XMLEventHandler/cdata(_:)``.
        case separate
    }

    /// Resolve element and attribute names into namespace URI, local name and prefix. Default `true`.
    ///
    /// With `false`, names arrive as written (`media:content`) and prefix mappings are not reported.
    public var processesNamespaces: Bool = true

    /// Whether CDATA sections are merged into text nodes. Default ``CDATAHandling/mergeIntoText``.
    public var cdataHandling: CDATAHandling = .mergeIntoText

    /// A charset from outside the document, such as the `charset` parameter of an HTTP `Content-Type`.
    ///
    /// Precedence (RFC 7303, section 3): a byte-order mark wins; then this hint; then the XML
    /// declaration's `encoding`; then UTF-8. Labels are resolved like the WHATWG Encoding Standard does,
    /// so `iso-8859-1` and `us-ascii` decode as windows-1252, a superset that real feeds rely on.
    public var charsetHint: String? = nil

    /// The deepest element nesting accepted. Default 512; deeper documents fail with ``ExpatXMLError/Code/depthLimitExceeded``.
    public var maximumDepth: Int = 512

    /// The longest text node accepted, in UTF-8 bytes. Default 16 MiB; longer nodes fail with
    /// ``ExpatXMLError/Code/textNodeTooLarge``. Memory for text stays under this bound.
    public var maximumTextNodeBytes: Int = 16 << 20

    /// The largest ratio of expanded entity output to input bytes that expat accepts (billion-laughs protection).
    ///
    /// Default 100, expat's own; see `XML_SetBillionLaughsAttackProtectionMaximumAmplification`. Must be a number of
    /// at least 1: libexpat refuses anything else, and the parser then fails with ``ExpatXMLError/Code/setupFailed``.
    public var maximumAmplification: Float = 100

    /// The output size after which the amplification limit applies, in bytes. Default 8 MiB, expat's own;
    /// see `XML_SetBillionLaughsAttackProtectionActivationThreshold`.
    public var amplificationActivationThreshold: UInt64 = 8 << 20

    /// Mend what real feeds get wrong instead of failing. Default `false`: strict XML.
    ///
    /// With `true`, a streaming filter in front of expat escapes bare `&`, turns HTML named references
    /// (`&nbsp;`) into numeric ones, drops characters XML forbids, replaces invalid UTF-8 with U+FFFD,
    /// removes white space before the XML declaration, and (with namespaces) declares well-known prefixes
    /// such as `media:` or `itunes:` that the document uses without declaring, and binds any other prefix used where
    /// nothing declares it to a URI of its own (`urn:x-feedingest:undeclared-prefix:` and the prefix) instead of
    /// failing with "unbound prefix"; ``XMLPushParser/repairs`` counts what it did.
    /// Events still never depend on chunking. Columns and byte offsets in errors count the repaired bytes.
    public var repairsMalformedInput: Bool = false

    /// The longest prefix read to find the XML declaration's encoding before parsing starts. Default 1 KiB.
    public var maximumDeclarationBytes: Int = 1024

    /// Name the encoding of a document that declares none (no byte-order mark, hint or `encoding`) and is not UTF-8,
    /// with libuchardet, instead of reading it as UTF-8. Default `false`: such a document is not well-formed XML.
    ///
    /// The document is read as UTF-8 until its first byte above 0x7F; from there the parser holds the bytes back until
    /// they decide. Four well-formed multi-byte UTF-8 sequences (or 4 KiB of bytes that are all UTF-8, or the end)
    /// and the document stays UTF-8 (later invalid bytes are repaired or fail as usual). A byte that is not UTF-8 and
    /// libuchardet looks at the ``encodingDetectionBytes`` bytes from the first byte above 0x7F, and iconv decodes the
    /// rest of the document from the encoding it names (windows-1252 when it names none); everything before was
    /// ASCII, which those encodings share.
    /// ``XMLPushParser/encoding`` then says ``DocumentEncoding/Source/detected`` (or ``DocumentEncoding/Source/fallback``).
    /// The outcome depends only on the bytes, never on how they were split into chunks.
    public var detectsUndeclaredEncoding: Bool = false

    /// Let the bytes overrule a charset label they contradict. Default `false`: the label is obeyed.
    ///
    /// A wrong label is the commonest encoding mistake of real feeds. With `true`, a document whose ``charsetHint`` or XML declaration names a single-byte charset (windows-1252,
    /// ISO-8859-x, KOI8-R, …) but whose bytes are UTF-8 is read as UTF-8, and one labelled UTF-8 whose bytes are
    /// mostly not UTF-8 is read as windows-1252. The parser decides per document from a bounded window: it reads on
    /// undisturbed to the first byte above 0x7F (ASCII is the same either way), then holds the bytes from there until
    /// they decide, at most 4 KiB (a document whose first MiB is all ASCII keeps its label, unchecked):
    /// - labelled single-byte: four well-formed multi-byte UTF-8 sequences, or the window or the document ending with
    ///   every sequence well-formed, make it UTF-8; the first byte that begins no well-formed sequence keeps the label;
    /// - labelled UTF-8: among its first 16 characters above 0x7F (fewer if the window or the document ends first),
    ///   more bytes that begin no well-formed UTF-8 sequence than well-formed sequences make it windows-1252;
    ///   otherwise it stays UTF-8 and invalid bytes are repaired or fail as usual.
    /// A byte-order mark is never overruled, and other multi-byte charsets are not checked.
    /// ``XMLPushParser/encoding`` then says ``DocumentEncoding/Source/corrected``, with the label and where it came
    /// from. The outcome depends only on the bytes, never on how they were split into chunks.
    public var correctsMislabelledEncoding: Bool = false

    /// How many bytes, from the first one that is not UTF-8, libuchardet looks at (and the parser holds back while it
    /// waits for them). Default 64 KiB; fewer when the document ends sooner.
    public var encodingDetectionBytes: Int = 64 * 1024

    /// The default configuration.
    public init() {}
}
