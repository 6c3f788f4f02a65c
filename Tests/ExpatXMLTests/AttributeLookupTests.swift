import ExpatXML
import Testing

/// Records, for every start tag, what the name-reading attribute look-ups answer, next to what splitting every name
/// (the iterator) says: the two must agree.
private final class LookupRecorder: XMLEventHandler {
    var lookups: [String] = []
    var expected: [String] = []

    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        for wanted: StaticString in ["href", "url", "type"] {
            let fast = attributes.value(noNamespaceNamed: wanted, ignoringCase: true)?.string
            let slow = attributes.first { attribute in
                attribute.name.namespaceURI.isEmpty
                    && attribute.name.localName.string.lowercased() == wanted.description
            }?.value.string
            lookups.append("\(name.localName.string) \(wanted) \(fast ?? "-")")
            expected.append("\(name.localName.string) \(wanted) \(slow ?? "-")")
        }
        let exact = attributes.value(noNamespaceNamed: "href", ignoringCase: false)?.string
        lookups.append("\(name.localName.string) exact \(exact ?? "-")")
        expected.append("\(name.localName.string) exact \(attributes.first { $0.name.namespaceURI.isEmpty && $0.name.localName.equals("href") }?.value.string ?? "-")")
        lookups.append("\(name.localName.string) xml \(attributes.hasXMLNamespaceAttribute)")
        expected.append("\(name.localName.string) xml \(attributes.contains { $0.name.prefix.equals("xml") })")
    }
    func endElement(_ name: XMLName) {}
    func text(_ text: XMLBytes) {}
}

@Suite("XMLAttributes look-ups without splitting names")
struct AttributeLookupTests {
    static let document = """
        <feed xmlns="http://www.w3.org/2005/Atom" xmlns:a="urn:a" xml:lang="en">
          <link href="https://example.com/1" HREF="upper" type="text/html"/>
          <link HREF="https://example.com/2" a:href="namespaced" xml:base="https://example.com/base/"/>
          <enclosure Url="https://example.com/a.mp3" TYPE="audio/mpeg" urlx="longer" ur="shorter"/>
          <other a:url="only namespaced" xml:space="preserve" hreF="mixed"/>
          <empty/>
        </feed>
        """

    @Test("agree with splitting every name, with and without namespaces", arguments: [true, false])
    func agreesWithTheIterator(namespaces: Bool) throws {
        let recorder = LookupRecorder()
        var configuration = ExpatXMLConfiguration()
        configuration.processesNamespaces = namespaces
        let parser = XMLPushParser(handler: recorder, configuration: configuration)
        try parser.parse(Array(Self.document.utf8))
        try parser.finish()
        #expect(recorder.lookups == recorder.expected)
        // What the fixture is there to show, spelled out.
        #expect(recorder.lookups.contains("link href https://example.com/1"))  // exact case first
        #expect(recorder.lookups.contains("link href https://example.com/2"))  // HREF, not a:href
        #expect(recorder.lookups.contains("enclosure url https://example.com/a.mp3"))
        #expect(recorder.lookups.contains("other url -"))  // a:url: in a namespace, or named a:url without namespaces
        #expect(recorder.lookups.contains("link exact -"))  // the second link has HREF only
        #expect(recorder.lookups.contains("feed xml \(namespaces)"))
        #expect(recorder.lookups.contains("empty xml false"))
    }
}
