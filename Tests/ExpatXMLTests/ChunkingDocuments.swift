import ExpatXML
import Foundation
import TestSupport

/// How a document's bytes are cut into chunks.
enum ChunkingSplit: CustomStringConvertible {
    case whole
    case byteByByte
    case random(seed: UInt64)
    /// Cuts at these offsets (a fuzzer's minimised input with the splits its harness used).
    case offsets([Int])

    var description: String {
        switch self {
        case .whole: return "whole"
        case .offsets(let offsets): return "cut at \(offsets)"
        case .byteByByte: return "byte by byte"
        case .random(let seed): return "random splits, seed \(seed)"
        }
    }

    /// The offsets to cut at, for a document of `count` bytes. An offset may repeat: that feeds an empty chunk.
    func offsets(count: Int) -> [Int] {
        switch self {
        case .whole: return []
        case .offsets(let offsets): return offsets.filter { $0 <= count }.sorted()
        case .byteByByte: return count > 1 ? Array(1..<count) : []
        case .random(let seed):
            // Mostly tiny chunks (they cut tokens, characters and CDATA sections everywhere), some medium,
            // some large, and now and then an empty one.
            var generator = SplitMix64(seed: seed)
            var offsets: [Int] = []
            var position = 0
            while true {
                switch generator.next(below: 16) {
                case 0: break  // an empty chunk
                case 1...8: position += 1 + generator.next(below: 8)
                case 9...13: position += 1 + generator.next(below: 256)
                default: position += 1 + generator.next(below: 16_384)
                }
                if position >= count { return offsets }
                offsets.append(position)
            }
        }
    }
}

/// What a push parser made of a document: every event, the error that stopped it, if any, and what the parser
/// decided along the way (encoding, repairs, replacements, refused entities), which must not depend on the split either.
struct ChunkingOutcome: Equatable {
    var events: [String]
    var error: ExpatXMLError?
    var parserState: String

    /// The error without its message text, which is not part of the property: code, line, column and offset.
    var errorPosition: String? {
        error.map { "code \($0.code.rawValue) at \($0.line):\($0.column) (byte \($0.byteOffset))" }
    }

    static func == (lhs: ChunkingOutcome, rhs: ChunkingOutcome) -> Bool {
        lhs.events == rhs.events && lhs.errorPosition == rhs.errorPosition && lhs.parserState == rhs.parserState
    }

    /// Parses `bytes` cut as `split` says, recording events with `EventRecorder`.
    static func parse(_ bytes: [UInt8], split: ChunkingSplit, configuration: ExpatXMLConfiguration) -> ChunkingOutcome {
        let recorder = EventRecorder()
        let parser = XMLPushParser(handler: recorder, configuration: configuration)
        var failure: ExpatXMLError?
        var start = 0
        do {
            for offset in split.offsets(count: bytes.count) + [bytes.count] {
                try parser.parse(bytes[start..<offset])
                start = offset
            }
            try parser.finish()
        } catch {
            failure = error
        }
        let state = "encoding \(parser.encoding.map { "\($0)" } ?? "nil"); repairs \(parser.repairs.counts); "
            + "replacements \(parser.encodingReplacements); refused entities \(parser.refusedExternalEntities)"
        return ChunkingOutcome(events: recorder.events, error: failure, parserState: state)
    }

    /// Where `other` first differs from this outcome, for failure messages.
    func firstDifference(from other: ChunkingOutcome) -> String {
        let common = min(events.count, other.events.count)
        if let index = (0..<common).first(where: { events[$0] != other.events[$0] }) {
            return "event \(index): \(events[index].prefix(300)) ≠ \(other.events[index].prefix(300))"
        }
        if events.count != other.events.count {
            let extra = events.count > common ? events[common] : other.events[common]
            return "\(events.count) events ≠ \(other.events.count) events; first extra: \(extra.prefix(300))"
        }
        if errorPosition != other.errorPosition {
            return "error \(errorPosition ?? "none") ≠ \(other.errorPosition ?? "none")"
        }
        return "\(parserState) ≠ \(other.parserState)"
    }
}

/// A hand-written document for the chunking property (and, when it needs no out-of-band setting, the
/// differential test): each one aims at something a chunk boundary can break.
struct ChunkingDocument: Sendable, CustomStringConvertible {
    let name: String
    let bytes: [UInt8]
    /// Events the default configuration must produce (in `EventRecorder`'s format), derived from the Swift
    /// strings the bytes were made from, so a document that decodes wrongly cannot pass by being consistent.
    var mustContain: [String] = []
    /// The error the document must end with in every configuration, or `nil` for a well-formed document.
    var expectedError: ExpatXMLError.Code? = nil
    var charsetHint: String? = nil
    var maximumDepth: Int? = nil
    var maximumTextNodeBytes: Int? = nil
    /// What ``ExpatXMLConfiguration/repairsMalformedInput`` makes of a malformed document.
    var whenRepairing = RepairExpectation.sameError
    /// A known ExpatXML bug that makes the outcome depend on the split with repairs on, reported, awaiting a fix.
    var knownIssueWhenRepairing: String? = nil

    enum RepairExpectation: Sendable {
        /// The repair filter cannot mend it: the same error as without repairs.
        case sameError
        /// The repair filter mends it.
        case wellFormed
        /// The repair filter changes it, and expat then fails with this code.
        case error(ExpatXMLError.Code)
    }

    /// The error this document must end with under `configuration`, or `nil` for none.
    func expectedError(under configuration: ExpatXMLConfiguration) -> ExpatXMLError.Code? {
        var expected = expectedError
        // Without namespace processing a prefix needs no binding.
        if !configuration.processesNamespaces && expected == .unboundPrefix { expected = nil }
        guard configuration.repairsMalformedInput else { return expected }
        switch whenRepairing {
        case .sameError: return expected
        case .wellFormed: return nil
        case .error(let code): return code
        }
    }

    var description: String { name }

    /// Whether Foundation can be given the same document with no out-of-band setting.
    var isSelfDescribing: Bool { charsetHint == nil && maximumDepth == nil && maximumTextNodeBytes == nil }

    /// The configuration with this document's own settings applied.
    func applied(to base: ExpatXMLConfiguration) -> ExpatXMLConfiguration {
        var configuration = base
        if let charsetHint { configuration.charsetHint = charsetHint }
        if let maximumDepth { configuration.maximumDepth = maximumDepth }
        if let maximumTextNodeBytes { configuration.maximumTextNodeBytes = maximumTextNodeBytes }
        return configuration
    }
}

/// `EventRecorder`'s line for one text node.
func chunkingText(_ text: String) -> String { "text \(text.debugDescription)" }

/// The bytes of `string` in `encoding`; empty (so the document fails loudly) when Foundation cannot encode it.
func chunkingBytes(_ string: String, _ encoding: String.Encoding) -> [UInt8] {
    string.data(using: encoding).map { Array($0) } ?? []
}

/// ExpatXML bug (repair mode): white space before the XML declaration is removed only when the `<` after it arrives
/// within the first `maximumDeclarationBytes` bytes fed so far (`stripLeadingWhitespace`); fed whole, 2,000 bytes of it
/// are removed and the document parses, fed in small chunks sniffing gives up at 1 KiB and expat then rejects the
/// declaration (XML_ERROR_MISPLACED_XML_PI).

enum ChunkingDocuments {
    /// Well-formed documents, each one built so that a careless chunk boundary would change its events.
    static let wellFormed: [ChunkingDocument] = {
        var documents: [ChunkingDocument] = []

        let multiByte = "héllo wörld € 😀 𝄞 日本語 ﬁ"
        documents.append(.init(
            name: "utf8-multibyte",
            bytes: Array(#"<?xml version="1.0" encoding="UTF-8"?><données café="ü€😀"><t>\#(multiByte)</t><t>\#(String(repeating: "😀é", count: 40))</t></données>"#.utf8),
            mustContain: [#"start {}données q=données @{}café="ü€😀""#, chunkingText(multiByte)]))

        documents.append(.init(
            name: "utf8-bom",
            bytes: [0xEF, 0xBB, 0xBF] + Array(#"<?xml version="1.0"?><r>bom ✓</r>"#.utf8),
            mustContain: [chunkingText("bom ✓")]))

        let cdataBody = String(repeating: " <b>bold</b> & é😀 ]] > ", count: 300)
        documents.append(.init(
            name: "cdata-long",
            bytes: Array("<r>before &amp; <![CDATA[\(cdataBody)]]>after</r>".utf8),
            mustContain: [chunkingText("before & \(cdataBody)after")]))

        documents.append(.init(
            name: "cdata-adjacent",
            bytes: Array("<r><![CDATA[x]]><![CDATA[]]><![CDATA[y]]]]><![CDATA[>z]]><e/><![CDATA[]]></r>".utf8),
            mustContain: [chunkingText("xy]]>z")]))

        documents.append(.init(
            name: "entities-and-references",
            bytes: Array("""
                <?xml version="1.0"?>
                <!DOCTYPE r [
                  <!ENTITY e "entity &#233; text">
                  <!ENTITY nested "&e; again">
                ]>
                <r a="&e;&#x1F600;&lt;" b='&quot;&apos;'>&lt;&gt;&amp;&apos;&quot;&#65;&#x42;&#128512;&e;|&nested;</r>
                """.utf8),
            mustContain: [
                "start {}r q=r @{}a=\("entity é text😀<".debugDescription) @{}b=\("\"'".debugDescription)",
                chunkingText("<>&'\"AB😀entity é text|entity é text again"),
            ]))

        documents.append(.init(
            name: "character-references",
            bytes: Array("<r a=\"&#13;&#10;&#9;x&#x20AC;\">a&#13;&#10;b&#xD;c&#x10FFFF;&#x1F600;&#38;&#60;</r>".utf8),
            mustContain: ["start {}r q=r @{}a=\("\r\n\tx€".debugDescription)", chunkingText("a\r\nb\rc\u{10FFFF}😀&<")]))

        documents.append(.init(
            name: "external-dtd-undeclared-entity",
            bytes: Array("""
                <?xml version="1.0"?>
                <!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
                <rss version="0.91"><channel><title>a&nbsp;b &amp; c</title></channel></rss>
                """.utf8)))

        documents.append(.init(
            name: "comments-and-pis",
            bytes: Array("""
                <?xml version="1.0"?>
                <?xml-stylesheet type="text/xsl" href="s.xsl"?>
                <!-- prolog comment é -->
                <r>one<!--inner--><?php echo 1; ?>two<!-- - -->three</r>
                <!-- after -->
                <?after-pi data?>
                """.utf8),
            mustContain: [#"comment " prolog comment é ""#, #"pi php "echo 1; ""#, chunkingText("one"), chunkingText("two")]))

        documents.append(.init(
            name: "pi-without-data",
            bytes: Array("<r>a<?empty?>b</r>".utf8),
            mustContain: [#"pi empty """#, chunkingText("a"), chunkingText("b")]))

        documents.append(.init(
            name: "stylesheet-pi-first",
            bytes: Array(#"<?xml-stylesheet type="text/xsl" href="s.xsl"?><r/>"#.utf8),
            mustContain: [#"pi xml-stylesheet "type=\"text/xsl\" href=\"s.xsl\"""#]))

        documents.append(.init(
            name: "namespaces",
            bytes: Array("""
                <?xml version="1.0" encoding="UTF-8"?>
                <feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xml:lang="en">
                  <entry xmlns:dc="http://purl.org/dc/elements/1.1/">
                    <dc:creator media:role="author">Ann</dc:creator>
                    <media:content url="http://example.com/a.jpg" medium="image"/>
                    <plain xmlns="">no namespace <inner/></plain>
                    <x:same xmlns:x="urn:one"><x:same xmlns:x="urn:two" x:attr="v"/></x:same>
                  </entry>
                </feed>
                """.utf8),
            mustContain: [
                "map =http://www.w3.org/2005/Atom",
                "start {http://purl.org/dc/elements/1.1/}creator q=dc:creator @{http://search.yahoo.com/mrss/}media:role=\"author\"",
                "start {}plain q=plain",
                "start {urn:two}same q=x:same @{urn:two}x:attr=\"v\"",
            ]))

        // UTF-16 with a BOM, both byte orders, with surrogate pairs that a split can cut in half.
        let utf16Text = "UTF-16 é€ 😀𝄞 日本"
        let utf16Document = #"<?xml version="1.0" encoding="UTF-16"?><r a="😀">\#(utf16Text)</r>"#
        documents.append(.init(
            name: "utf16le-bom", bytes: [0xFF, 0xFE] + chunkingBytes(utf16Document, .utf16LittleEndian),
            mustContain: [chunkingText(utf16Text)]))
        documents.append(.init(
            name: "utf16be-bom", bytes: [0xFE, 0xFF] + chunkingBytes(utf16Document, .utf16BigEndian),
            mustContain: [chunkingText(utf16Text)]))
        documents.append(.init(
            name: "utf16le-no-bom",
            bytes: chunkingBytes(#"<?xml version="1.0" encoding="UTF-16LE"?><r>\#(utf16Text)</r>"#, .utf16LittleEndian),
            mustContain: [chunkingText(utf16Text)]))

        let cp1252Text = "€ “smart” quotes — ½ Ÿ Ž café"
        documents.append(.init(
            name: "windows-1252",
            bytes: chunkingBytes(#"<?xml version="1.0" encoding="windows-1252"?><r a="café €">\#(cp1252Text)</r>"#, .windowsCP1252),
            mustContain: [#"start {}r q=r @{}a="café €""#, chunkingText(cp1252Text)]))

        // WHATWG: an ISO-8859-1 label decodes as windows-1252, so 0x80 is € and 0x93/0x94 are curly quotes.
        documents.append(.init(
            name: "iso-8859-1-c1-bytes",
            bytes: Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><r a="caf"#.utf8) + [0xE9, 0x22, 0x3E]
                + [0x63, 0x61, 0x66, 0xE9, 0x20, 0x93, 0x71, 0x94, 0x20, 0x80] + Array("</r>".utf8),
            mustContain: [#"start {}r q=r @{}a="café""#, chunkingText("café “q” €")]))

        // A declaration that says UTF-16 in single-byte text is wrong about itself: the bytes are read as UTF-8.
        documents.append(.init(
            name: "utf8-declared-utf16",
            bytes: Array(#"<?xml version="1.0" encoding="UTF-16"?><r>é€</r>"#.utf8),
            mustContain: [chunkingText("é€")]))

        let shiftJISTitle = "日本語のフィード"
        let shiftJISText = "こんにちは、世界。ｶﾀｶﾅとひらがなと漢字"
        documents.append(.init(
            name: "shift-jis",
            bytes: chunkingBytes("""
                <?xml version="1.0" encoding="Shift_JIS"?>
                <rss version="2.0"><channel><title>\(shiftJISTitle)</title>
                <item><title a="属性">\(shiftJISText)</title><description>\(String(repeating: "ﾃｽﾄ漢字", count: 50))</description></item>
                </channel></rss>
                """, .shiftJIS),
            mustContain: [chunkingText(shiftJISTitle), #"start {}title q=title @{}a="属性""#, chunkingText(shiftJISText)]))

        // An invalid Shift_JIS sequence (a lead byte, then a byte that cannot follow it) becomes U+FFFD.
        documents.append(.init(
            name: "shift-jis-invalid-sequence",
            bytes: Array(#"<?xml version="1.0" encoding="Shift_JIS"?><r>a"#.utf8) + [0x81, 0x20] + Array("b</r>".utf8),
            mustContain: [chunkingText("a\u{FFFD} b")]))

        // A declaration longer than `maximumDeclarationBytes` (1 KiB): expat reads the encoding itself.
        documents.append(.init(
            name: "long-declaration-windows-1252",
            bytes: Array(#"<?xml version="1.0""#.utf8) + Array(repeating: 0x20, count: 1500)
                + Array(#"encoding="windows-1252"?><r>"#.utf8) + [0x80, 0xE9] + Array("</r>".utf8),
            mustContain: [chunkingText("€é")]))

        documents.append(.init(
            name: "charset-hint-windows-1252",
            bytes: Array("<r>".utf8) + [0x93, 0x71, 0x94, 0x20, 0x80] + Array("</r>".utf8),
            mustContain: [chunkingText("“q” €")], charsetHint: "windows-1252"))

        // CR LF and lone CR: a split between CR and LF must not produce two line breaks.
        documents.append(.init(
            name: "line-endings",
            bytes: Array("<r>\r\n<a>line1\r\nline2\rline3\r\n</a>\r\n<b attr=\"x\r\ny\"/><![CDATA[c1\r\nc2\r]]>\r\n</r>\r\n".utf8),
            mustContain: [chunkingText("line1\nline2\nline3\n"), #"start {}b q=b @{}attr="x y""#]))

        // A text node far past the parser's first 4 KiB buffer, full of multi-byte characters.
        let longText = String(repeating: "Long text é€😀 ", count: 700)
        documents.append(.init(
            name: "long-text-node",
            bytes: Array("<r><a>\(longText)</a><b>\(longText)&amp;\(longText)</b></r>".utf8),
            mustContain: [chunkingText(longText), chunkingText(longText + "&" + longText)]))

        documents.append(.init(
            name: "attribute-normalization",
            bytes: Array("<r a=\"\ttab\nnl&#10;ref&#9;ref\" b = 'single \"quoted\"'   c=\"&amp;&lt;\"/>".utf8),
            mustContain: [#"start {}r q=r @{}a=" tab nl\nref\tref" @{}b="single \"quoted\"" @{}c="&<""#]))

        documents.append(.init(name: "tiny", bytes: Array("<a/>".utf8), mustContain: ["start {}a q=a", "end {}a"]))

        return documents
    }()

    /// Malformed documents and limit breaches: the error, and the events before it, must not depend on the split.
    static let malformed: [ChunkingDocument] = [
        // Code expectations follow expat's documented meanings (expat.h, enum XML_Error).
        .init(name: "empty", bytes: [], expectedError: .noElements),
        .init(name: "only-whitespace", bytes: Array("  \n\t".utf8), expectedError: .noElements),
        .init(name: "truncated-in-tag", bytes: Array("<r>\n<a href=\"x".utf8), expectedError: .unclosedToken),
        .init(name: "truncated-in-text", bytes: Array("<r>\n<a>some text".utf8), expectedError: .noElements),
        // Repairing turns the cut character into U+FFFD; then the document just ends early.
        .init(name: "truncated-in-character", bytes: Array(Array("<r>é".utf8).dropLast()), expectedError: .partialCharacter,
              whenRepairing: .error(.noElements)),
        .init(name: "truncated-in-cdata", bytes: Array("<r><![CDATA[abc".utf8), expectedError: .unclosedCDATASection),
        .init(name: "truncated-in-comment", bytes: Array("<r><!-- abc".utf8), expectedError: .unclosedToken),
        .init(name: "mismatched-tag", bytes: Array("<r>\n  <a>text</b>\n</r>".utf8), expectedError: .tagMismatch),
        .init(name: "junk-after-root", bytes: Array("<r/>\n<s/>".utf8), expectedError: .junkAfterDocumentElement),
        // Repairing binds the prefix (a restart of expat at the tag) instead of failing.
        .init(name: "unbound-prefix", bytes: Array("<r>\n <p:a/></r>".utf8), expectedError: .unboundPrefix, whenRepairing: .wellFormed),
        .init(name: "undefined-entity", bytes: Array("<r>x&nbsp;y</r>".utf8), expectedError: .undefinedEntity, whenRepairing: .wellFormed),
        .init(name: "invalid-utf8", bytes: Array("<r>abc".utf8) + [0xFF] + Array("def</r>".utf8), expectedError: .invalidToken,
              whenRepairing: .wellFormed),
        .init(name: "duplicate-attribute", bytes: Array(#"<r a="1" a="2"/>"#.utf8), expectedError: .duplicateAttribute),
        .init(name: "bad-character-reference", bytes: Array("<r>&#0;</r>".utf8), expectedError: .badCharacterReference,
              whenRepairing: .wellFormed),
        .init(name: "misplaced-declaration", bytes: Array("\n<?xml version=\"1.0\"?><r/>".utf8), expectedError: .misplacedXMLDeclaration,
              whenRepairing: .wellFormed),
        // More white space before the declaration than the 1 KiB declaration window.
        .init(name: "misplaced-declaration-after-long-white-space",
              bytes: Array(String(repeating: " \n", count: 1000).utf8) + Array("<?xml version=\"1.0\"?><r>x</r>".utf8),
              expectedError: .misplacedXMLDeclaration, whenRepairing: .wellFormed),
        // Everything the repair filter mends, many times over, so that random splits cut references and characters.
        .init(name: "repairable-damage",
              bytes: Array(#"<rss><channel><title a="x & y &eacute;">T</title>"#.utf8)
                  + Array(repeating: Array("<item>AT&T &nbsp;&hellip; &#150;q&#148; a\u{01}b&#2;c é".utf8) + [0xFF, 0xC3, 0x28]
                      + Array("&#x1F600; &amp;&</item>\n".utf8), count: 150).flatMap { $0 }
                  + Array("</channel></rss>".utf8),
              expectedError: .invalidToken, whenRepairing: .wellFormed),
        .init(name: "unknown-encoding", bytes: Array(#"<?xml version="1.0" encoding="x-no-such-charset"?><r/>"#.utf8),
              expectedError: .unsupportedEncoding),
        .init(name: "shift-jis-after-long-declaration",
              bytes: Array(#"<?xml version="1.0""#.utf8) + Array(repeating: 0x20, count: 1500)
                  + Array(#"encoding="Shift_JIS"?><r/>"#.utf8),
              expectedError: .unsupportedEncoding),
        .init(name: "depth-limit", bytes: Array("<a>\n<b><c>\n<d><e><f/></e></d></c></b></a>".utf8),
              expectedError: .depthLimitExceeded, maximumDepth: 4),
        .init(name: "text-node-limit",
              bytes: Array("<r><a>short</a>\n<b>\(String(repeating: "0123456789\n", count: 1000))</b></r>".utf8),
              expectedError: .textNodeTooLarge, maximumTextNodeBytes: 5000),
        .init(name: "text-node-limit-cdata",
              bytes: Array("<r>\n<b>x<![CDATA[\(String(repeating: "0123456789\n", count: 1000))]]></b></r>".utf8),
              expectedError: .textNodeTooLarge, maximumTextNodeBytes: 5000),
    ]
}
