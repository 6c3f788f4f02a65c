import ExpatXML
import Foundation
import Testing

struct RepairCase: CustomTestStringConvertible, Sendable {
    let name: String
    let bytes: [UInt8]
    let expectedText: [String]
    let expectedRepairs: [String: Int]
    var testDescription: String { name }

    init(_ name: String, _ xml: String, text: [String], repairs: [String: Int]) {
        self.init(name, Array(xml.utf8), text: text, repairs: repairs)
    }

    init(_ name: String, _ bytes: [UInt8], text: [String], repairs: [String: Int]) {
        self.name = name
        self.bytes = bytes
        expectedText = text
        expectedRepairs = repairs
    }
}

let repairCases: [RepairCase] = [
    .init("bare ampersand in text", "<r><t>AT&T & friends</t></r>", text: ["AT&T & friends"], repairs: ["bareAmpersands": 2]),
    .init("bare ampersand in an attribute", "<r><a href=\"/?a=1&b=2\">x</a></r>", text: ["x", "@href=/?a=1&b=2"],
          repairs: ["bareAmpersands": 1]),
    .init("HTML entities", "<r><t>a&nbsp;b &eacute;t&eacute; &hellip; &mdash; &copy;</t></r>",
          text: ["a\u{A0}b été … — ©"], repairs: ["htmlEntities": 6]),
    .init("unknown entity name is a bare ampersand", "<r><t>&bogus; &amp; &lt;</t></r>", text: ["&bogus; & <"], repairs: ["bareAmpersands": 1]),
    .init("windows-1252 numeric references", "<r><t>&#150; &#147;q&#148; &#8212;</t></r>", text: ["– “q” —"],
          repairs: ["windows1252References": 3]),
    .init("C0 controls raw and referenced", "<r><t>a\u{01}b\u{0B}c&#2;d</t></r>", text: ["abcd"], repairs: ["invalidCharacters": 3]),
    .init("invalid UTF-8", Array("<r><t>caf".utf8) + [0xE9] + Array(" ok ".utf8) + [0xC3, 0x28] + Array(" é</t></r>".utf8),
          text: ["caf\u{FFFD} ok \u{FFFD}( é"], repairs: ["invalidUTF8": 2]),
    .init("white space before the declaration", "\n\n  <?xml version=\"1.0\"?><r><t>x</t></r>", text: ["x"],
          repairs: ["leadingWhitespace": 1]),
    .init("BOM, then white space, then the declaration", [0xEF, 0xBB, 0xBF] + Array(" \n<?xml version=\"1.0\" encoding=\"utf-8\"?><r><t>x</t></r>".utf8),
          text: ["x"], repairs: ["leadingWhitespace": 1]),
    .init("CDATA and comments are left alone", "<r><t><![CDATA[a & b &nbsp; \u{7F}]]></t><!-- & --></r>", text: ["a & b &nbsp; \u{7F}"],
          repairs: [:]),
    .init("entities declared in the DOCTYPE are expat's", "<!DOCTYPE r [<!ENTITY me \"Me and You\">]><r><t>&me; &nbsp;</t></r>",
          text: ["Me and You \u{A0}"], repairs: ["htmlEntities": 1]),
    .init("a clean document needs nothing", "<?xml version=\"1.0\"?><r><t a=\"1 &amp; 2\">x &#233; &#xE9;</t></r>",
          text: ["x é é", "@a=1 & 2"], repairs: [:]),
]

/// Collects text nodes and attribute values ("@name=value") through the byte API.
final class RepairRecorder: XMLEventHandler {
    var texts: [String] = []
    var events: [String] = []
    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        events.append("<" + name.localName.string)
        for attribute in attributes {
            texts.append("@\(attribute.name.localName.string)=\(attribute.value.string)")
            events.append("@\(attribute.name.localName.string)=\(attribute.value.string)")
        }
    }
    func endElement(_ name: XMLName) { events.append("/" + name.localName.string) }
    func text(_ text: XMLBytes) {
        texts.append(text.string)
        events.append("'" + text.string)
    }
}

func repairParse(_ bytes: [UInt8], chunk: Int, repairs: Bool = true) -> (recorder: RepairRecorder, repairs: XMLRepairs, error: ExpatXMLError?) {
    var configuration = ExpatXMLConfiguration()
    configuration.repairsMalformedInput = repairs
    let recorder = RepairRecorder()
    let parser = XMLPushParser(handler: recorder, configuration: configuration)
    do {
        var offset = 0
        while offset < bytes.count {
            try parser.parse(Array(bytes[offset..<min(bytes.count, offset + chunk)]))
            offset += chunk
        }
        try parser.finish()
        return (recorder, parser.repairs, nil)
    } catch {
        return (recorder, parser.repairs, error)
    }
}

@Suite("Repairs")
struct RepairTests {
    @Test("repairs", arguments: repairCases)
    func repairs(testCase: RepairCase) {
        let whole = repairParse(testCase.bytes, chunk: 1 << 20)
        #expect(whole.error == nil)
        #expect(whole.recorder.texts.sorted() == testCase.expectedText.sorted())
        #expect(Dictionary(uniqueKeysWithValues: whole.repairs.counts) == testCase.expectedRepairs)
        // The chunking property holds with repairs: every split gives the same events and the same repairs.
        for chunk in [1, 2, 3, 7] {
            let split = repairParse(testCase.bytes, chunk: chunk)
            #expect(split.error == nil)
            #expect(split.recorder.events == whole.recorder.events, "chunk \(chunk)")
            #expect(split.repairs == whole.repairs, "chunk \(chunk)")
        }
    }

    @Test("without repairs, the damaged cases fail or read differently", arguments: repairCases.filter { !$0.expectedRepairs.isEmpty })
    func strictDiffers(testCase: RepairCase) {
        // Numeric references to C1 controls are legal XML, so strict parsing succeeds there, with other text.
        let strict = repairParse(testCase.bytes, chunk: 1 << 20, repairs: false)
        #expect(strict.error != nil || strict.recorder.texts.sorted() != testCase.expectedText.sorted())
        #expect(strict.repairs.isEmpty)
    }

    @Test func repairsInALegacyEncoding() {
        // windows-1252 bytes are all valid; the filter still mends references in them.
        let bytes = Array("<?xml version=\"1.0\" encoding=\"windows-1252\"?><r><t>Caf".utf8) + [0xE9] + Array(" &amp; Bar & &nbsp;</t></r>".utf8)
        let result = repairParse(bytes, chunk: 5)
        #expect(result.error == nil)
        #expect(result.recorder.texts == ["Café & Bar & \u{A0}"])
        #expect(result.repairs.invalidUTF8 == 0)
        #expect(result.repairs.bareAmpersands == 1)
    }

    @Test func unrecoverableErrorsStillFailWithAPosition() {
        let result = repairParse(Array("<r><item>one</item><item>two</r>".utf8), chunk: 4)
        #expect(result.error?.code == .tagMismatch)
        #expect(result.recorder.texts.contains("one"))
    }

    @Test func leadingWhitespaceIsNotStrippedFromUTF16() throws {
        let xml = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><r><t>東京</t></r>"
        let bytes = [0xFF, 0xFE] + Array(xml.data(using: .utf16LittleEndian)!)
        let result = repairParse(bytes, chunk: 3)
        #expect(result.error == nil)
        #expect(result.recorder.texts == ["東京"])
    }
}

@Suite("Repair edge cases")
struct RepairEdgeCaseTests {
    @Test func entitiesDeclaredInTheInternalSubsetKeepTheirMeaningEvenWithHTMLNames() {
        let result = repairParse(Array("<!DOCTYPE r [<!ENTITY copy \"Me\"><!ENTITY % p \"x\">]><r>&copy; &eacute;</r>".utf8), chunk: 3)
        #expect(result.error == nil)
        #expect(result.recorder.texts == ["Me é"])
    }

    @Test func aCommentInTheDoctypeDoesNotConfuseTheFilter() {
        let result = repairParse(Array("<!DOCTYPE r [<!-- it's \"odd\" -->]><r>a & b</r>".utf8), chunk: 2)
        #expect(result.error == nil)
        #expect(result.recorder.texts == ["a & b"])
    }

    @Test func aLegacyDeclarationBeyondTheSniffWindowIsNotTreatedAsUTF8() {
        // expat reads this declaration itself; the filter must not "repair" windows-1252 bytes as invalid UTF-8.
        let bytes = Array(#"<?xml version="1.0""#.utf8) + Array(repeating: 0x20, count: 1500)
            + Array(#"encoding="windows-1252"?><r>"#.utf8) + [0x80, 0xE9] + Array("</r>".utf8)
        let result = repairParse(bytes, chunk: 100)
        #expect(result.error == nil)
        #expect(result.recorder.texts == ["€é"])
        #expect(result.repairs.isEmpty)
    }

    @Test func longWhiteSpaceBeforeTheDeclarationIsRemovedHoweverItArrives() {
        let bytes = Array(String(repeating: " \n", count: 1000).utf8) + Array("<?xml version=\"1.0\"?><r>x</r>".utf8)
        for chunk in [1, 7, 1500, 1 << 20] {
            let result = repairParse(bytes, chunk: chunk)
            #expect(result.error == nil, "chunk \(chunk)")
            #expect(result.recorder.texts == ["x"], "chunk \(chunk)")
            #expect(result.repairs.leadingWhitespace == 1, "chunk \(chunk)")
        }
    }
}

@Suite("Undeclared prefixes")
struct UndeclaredPrefixTests {
    @Test func wellKnownPrefixesResolveWithoutADeclaration() {
        let xml = "<rss>\n<channel><item><media:content url=\"u\"/><dc:creator>A</dc:creator><foo:x/></item></channel></rss>"
        // foo is not well known: expat refuses it, and is restarted there with foo bound to a URI of its own.
        let strict = EventRecorder.record(Array(xml.utf8))
        #expect(strict.error?.code == .unboundPrefix)
        let recovered = EventRecorder.record(Array(xml.utf8), configuration: repairing)
        #expect(recovered.error == nil)
        #expect(recovered.events.contains("start {urn:x-feedingest:undeclared-prefix:foo}x q=foo:x"))
        #expect(recovered.events.contains("start {http://purl.org/dc/elements/1.1/}creator q=dc:creator"))
        for chunk in [1, 5, 1 << 20] {
            let result = repairParse(Array(xml.utf8), chunk: chunk)
            #expect(result.error == nil, "chunk \(chunk)")
            #expect(result.repairs.undeclaredPrefixes == 3, "chunk \(chunk)")
        }

        let fixed = Array(xml.replacingOccurrences(of: "<foo:x/>", with: "").utf8)
        for chunk in [1, 5, 1 << 20] {
            let result = repairParse(fixed, chunk: chunk)
            #expect(result.error == nil, "chunk \(chunk)")
            #expect(result.repairs.undeclaredPrefixes == 2, "chunk \(chunk)")
        }
        let events = EventRecorder.record(fixed, configuration: repairing).events
        #expect(events.contains("start {http://search.yahoo.com/mrss/}content q=media:content @{}url=\"u\""))
        #expect(events.contains("start {http://purl.org/dc/elements/1.1/}creator q=dc:creator"))
        // The filter's own declarations are not reported as the document's.
        #expect(!events.contains { $0.hasPrefix("map") || $0.hasPrefix("unmap") })
    }

    @Test func declaredPrefixesAreTheDocumentsAndNotRepairs() {
        let xml = "<rss xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><channel><item><dc:creator>A</dc:creator>"
            + "<media:thumbnail xmlns:media=\"urn:other\"/></item></channel></rss>"
        let result = repairParse(Array(xml.utf8), chunk: 3)
        #expect(result.error == nil)
        #expect(result.repairs.isEmpty)
        let events = EventRecorder.record(Array(xml.utf8), configuration: repairing).events
        #expect(events.contains("start {urn:other}thumbnail q=media:thumbnail"))
        #expect(events.filter { $0.hasPrefix("map") } == ["map dc=http://purl.org/dc/elements/1.1/", "map media=urn:other"])
    }

    @Test func positionsAfterTheRootTagAreTheDocuments() {
        let xml = "<rss version=\"2.0\"><channel><title>a</title></chanel></rss>"
        let strict = EventRecorder.record(Array(xml.utf8))
        let repaired = EventRecorder.record(Array(xml.utf8), configuration: repairing)
        #expect(strict.error?.code == .tagMismatch)
        #expect(repaired.error?.code == .tagMismatch)
        #expect(repaired.error?.line == strict.error?.line)
        #expect(repaired.error?.column == strict.error?.column)
        #expect(repaired.error?.byteOffset == strict.error?.byteOffset)
    }

    @Test func withoutNamespaceProcessingNothingIsDeclared() {
        var configuration = repairing
        configuration.processesNamespaces = false
        let result = EventRecorder.record(Array("<rss><media:content/></rss>".utf8), configuration: configuration)
        #expect(result.error == nil)
        #expect(result.events.contains("start {}rss q=rss"))
    }

    var repairing: ExpatXMLConfiguration {
        var configuration = ExpatXMLConfiguration()
        configuration.repairsMalformedInput = true
        return configuration
    }

    /// The events of `xml` with repairs, split at every `step` bytes; the same for every step.
    func eventsForEverySplit(_ xml: String, steps: [Int] = [1, 2, 3, 7, 64]) -> (events: [String], error: ExpatXMLError?) {
        let bytes = Array(xml.utf8)
        let whole = EventRecorder.record(bytes, configuration: repairing)
        for step in steps {
            let split = EventRecorder.record(bytes, splits: Array(stride(from: step, to: bytes.count, by: step)), configuration: repairing)
            #expect(split.events == whole.events, "step \(step)")
            #expect(split.error?.code == whole.error?.code && split.error?.byteOffset == whole.error?.byteOffset, "step \(step)")
        }
        return whole
    }

    @Test func unknownPrefixesAreBoundWhereverTheyAreUsedWhateverTheSplit() {
        let xml = "<rss version=\"2.0\" xmlns:a=\"urn:a\"><channel><item>before<zz:thing q:r=\"1\">x</zz:thing>after"
            + "<a:x><yy:in/><a:z/></a:x></item><item><zz:thing/><georss:point>1 2</georss:point></item></channel></rss>"
        let result = eventsForEverySplit(xml)
        #expect(result.error == nil)
        #expect(result.events == [
            "startDocument", "map a=urn:a", "start {}rss q=rss @{}version=\"2.0\"", "start {}channel q=channel", "start {}item q=item",
            "text \"before\"", "start {urn:x-feedingest:undeclared-prefix:zz}thing q=zz:thing @{urn:x-feedingest:undeclared-prefix:q}q:r=\"1\"",
            "text \"x\"", "end {urn:x-feedingest:undeclared-prefix:zz}thing", "text \"after\"",
            // The document's own binding of a: survives the restart for yy:.
            "start {urn:a}x q=a:x", "start {urn:x-feedingest:undeclared-prefix:yy}in q=yy:in", "end {urn:x-feedingest:undeclared-prefix:yy}in",
            "start {urn:a}z q=a:z", "end {urn:a}z", "end {urn:a}x", "end {}item",
            // Bound once for the rest of the document: no second restart for zz:.
            "start {}item q=item", "start {urn:x-feedingest:undeclared-prefix:zz}thing q=zz:thing", "end {urn:x-feedingest:undeclared-prefix:zz}thing",
            "start {http://www.georss.org/georss}point q=georss:point", "text \"1 2\"", "end {http://www.georss.org/georss}point",
            "end {}item", "end {}channel", "end {}rss", "unmap a", "endDocument",
        ])
        let parser = XMLPushParser(handler: EventRecorder(), configuration: repairing)
        #expect(throws: Never.self) { try parser.parse(Array(xml.utf8)); try parser.finish() }
        #expect(parser.repairs.undeclaredPrefixes == 4)  // georss (declared on the root by the filter), zz, q, yy
    }

    @Test func anUnknownPrefixOnTheRootIsBoundThere() {
        let result = eventsForEverySplit("<rss version=\"2.0\" foo:bar=\"1\">\n<channel><foo:x/></channel></rss>")
        #expect(result.error == nil)
        #expect(result.events.contains("start {}rss q=rss @{}version=\"2.0\" @{urn:x-feedingest:undeclared-prefix:foo}foo:bar=\"1\""))
        #expect(result.events.contains("start {urn:x-feedingest:undeclared-prefix:foo}x q=foo:x"))
    }

    @Test func positionsAfterARestartAreTheDocuments() {
        // The same document with `p:a` and with `pxa`: every error after the restart is where it is in the other.
        for tail in ["\n<b></r>", "<b></r>", "\n  <c>\n<b></c></r>"] {
            let prefixed = "<r>\n<p:a x=\"1\"/>" + tail
            let plain = prefixed.replacingOccurrences(of: "p:a", with: "pxa")
            let recovered = eventsForEverySplit(prefixed)
            let reference = EventRecorder.record(Array(plain.utf8), configuration: repairing)
            #expect(recovered.error?.code == .tagMismatch, "\(tail)")
            #expect(recovered.error?.code == reference.error?.code, "\(tail)")
            #expect(recovered.error?.line == reference.error?.line, "\(tail)")
            #expect(recovered.error?.column == reference.error?.column, "\(tail)")
            #expect(recovered.error?.byteOffset == reference.error?.byteOffset, "\(tail)")
        }
        // On the root, where the declarations go into the tag itself.
        let root = "<r p:x=\"1\"><a></b></r>"
        let recovered = eventsForEverySplit(root)
        let reference = EventRecorder.record(Array(root.replacingOccurrences(of: "p:x", with: "pxx").utf8), configuration: repairing)
        #expect(recovered.error?.code == .tagMismatch)
        #expect(recovered.error?.column == reference.error?.column)
        #expect(recovered.error?.byteOffset == reference.error?.byteOffset)
    }

    @Test func prefixesAreBoundUpToALimitPerDocument() {
        // 64 distinct unknown prefixes are bound; the 65th is an error again, where it is used, whatever the split.
        let elements = (0..<65).map { "<p\($0):x/>" }.joined()
        let result = eventsForEverySplit("<r>" + elements + "</r>", steps: [1, 5, 100])
        #expect(result.error?.code == .unboundPrefix)
        #expect(result.events.filter { $0.hasPrefix("start {urn:x-feedingest:undeclared-prefix:") }.count == 64)
    }

    @Test func withoutRepairsAnUnboundPrefixStaysAnError() {
        #expect(EventRecorder.record(Array("<r><zz:a/></r>".utf8)).error?.code == .unboundPrefix)
    }
}
