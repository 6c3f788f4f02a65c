import ExpatXML
import Foundation
import Testing

/// A delegate that wants the text of `title` elements only, switching `reportsCharacters` as the byte API's
/// handlers switch `isCollectingText`.
private final class TitleCollector: ExpatXMLParserDelegate {
    var texts: [String] = []
    var selective: Bool

    init(selective: Bool) { self.selective = selective }

    func parserDidStartDocument(_ parser: ExpatXMLParser) {
        if selective { parser.reportsCharacters = false }
    }

    func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        if selective { parser.reportsCharacters = elementName == "title" }
    }

    func parser(_ parser: ExpatXMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        if selective { parser.reportsCharacters = false }
    }

    func parser(_ parser: ExpatXMLParser, foundCharacters string: String) {
        texts.append(string)
    }
}

@Suite("ExpatXMLParser.reportsCharacters")
struct ReportsCharactersTests {
    static let document = """
        <rss><channel><title>Feed &amp; co</title><description>skip me</description>
        <item><title>First</title><description><![CDATA[<p>long</p>]]> text</description></item>
        <item><title>Se<![CDATA[cond]]></title><link>http://example.org/</link></item>
        </channel></rss>
        """

    @Test(arguments: [1, 7, 4096])
    func onlyTheTextSwitchedOnIsReportedWholeAtAnySplit(chunk: Int) throws {
        let parser = ExpatXMLParser()
        let delegate = TitleCollector(selective: true)
        parser.delegate = delegate
        let bytes = Array(Self.document.utf8)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            try parser.parse(Array(bytes[start..<min(start + chunk, bytes.count)]))
        }
        try parser.finish()
        #expect(delegate.texts == ["Feed & co", "First", "Second"])
    }

    @Test func onByDefaultSoEveryTextNodeIsReported() throws {
        let parser = ExpatXMLParser()
        let delegate = TitleCollector(selective: false)
        parser.delegate = delegate
        #expect(parser.reportsCharacters)
        try parser.parse(data: Data(Self.document.utf8))
        #expect(delegate.texts.contains("skip me"))
        #expect(delegate.texts.contains("<p>long</p> text"))
        #expect(delegate.texts.contains("http://example.org/"))
    }
}
