import ExpatXML
import Foundation
import Testing

final class AbortingHandler: XMLEventHandler {
    weak var parser: XMLPushParser?
    var seen: [String] = []
    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        seen.append(name.localName.string)
        if name.localName.equals("stop") { parser?.abortParsing() }
    }
    func endElement(_ name: XMLName) { seen.append("/" + name.localName.string) }
}

final class ErrorCountingDelegate: ExpatXMLParserDelegate {
    var errors: [ExpatXMLError] = []
    func parser(_ parser: ExpatXMLParser, parseErrorOccurred parseError: ExpatXMLError) { errors.append(parseError) }
}

@Suite("Errors and limits")
struct ErrorAndLimitTests {
    @Test func mismatchedTagHasCodeLineColumnAndSource() {
        let parser = XMLPushParser(handler: EventRecorder(), source: "https://example.org/feed.xml")
        #expect {
            try parser.parse(Array("<rss>\n  <item></channel>\n</rss>".utf8))
            try parser.finish()
        } throws: { error in
            guard let error = error as? ExpatXMLError else { return false }
            return error.code == .tagMismatch && error.line == 2 && error.column == 10
                && error.message == "mismatched tag" && error.source == "https://example.org/feed.xml"
                && error.description == "https://example.org/feed.xml:2:10: mismatched tag"
        }
    }

    @Test func truncatedDocumentFailsAtFinishAndKeepsEarlierEvents() {
        let result = EventRecorder.record(Array("<rss><item><title>One</title></item><item><title>Tw".utf8))
        #expect(result.error?.code == .noElements || result.error?.code == .unclosedToken)
        #expect(result.events.contains("text \"One\""))
        #expect(!result.events.contains("endDocument"))
    }

    @Test func everyCallAfterAnErrorThrowsTheSameError() throws {
        let parser = XMLPushParser(handler: EventRecorder())
        var first: ExpatXMLError?
        do { try parser.parse(Array("<a></b>".utf8)) } catch { first = error }
        #expect(first?.code == .tagMismatch)
        #expect(throws: first!) { try parser.parse(Array("<c/>".utf8)) }
        #expect(throws: first!) { try parser.finish() }
    }

    @Test func delegateHearsTheErrorOnce() {
        let delegate = ErrorCountingDelegate()
        let parser = ExpatXMLParser()
        parser.delegate = delegate
        #expect(throws: ExpatXMLError.self) { try parser.parse(data: Data("<a>&bogus;</a>".utf8)) }
        #expect(throws: ExpatXMLError.self) { try parser.finish() }
        #expect(delegate.errors.map(\.code) == [.undefinedEntity])
    }

    @Test func parseAfterFinishIsAnError() throws {
        let parser = XMLPushParser(handler: EventRecorder())
        try parser.parse(data: Data("<a/>".utf8))
        #expect { try parser.parse(Array("<b/>".utf8)) } throws: { ($0 as? ExpatXMLError)?.code == .finished }
    }

    @Test func abortFromAHandlerStopsAtOnce() {
        let handler = AbortingHandler()
        let parser = XMLPushParser(handler: handler)
        handler.parser = parser
        #expect {
            try parser.parse(data: Data("<r><a/><stop/><b/><c/></r>".utf8))
        } throws: { ($0 as? ExpatXMLError)?.code == .aborted }
        // expat may still want to report </stop>; nothing after the abort reaches the handler.
        #expect(handler.seen == ["r", "a", "/a", "stop"])
    }

    @Test func depthLimit() {
        let deep = String(repeating: "<d>", count: 600) + String(repeating: "</d>", count: 600)
        let failed = EventRecorder.record(Array(deep.utf8))
        #expect(failed.error?.code == .depthLimitExceeded)
        #expect(failed.error?.column == 512 * 3)
        var configuration = ExpatXMLConfiguration()
        configuration.maximumDepth = 1_000
        #expect(EventRecorder.record(Array(deep.utf8), configuration: configuration).error == nil)
    }

    @Test("text node limit", arguments: [ExpatXMLConfiguration.CDATAHandling.mergeIntoText, .separate])
    func textNodeLimit(cdata: ExpatXMLConfiguration.CDATAHandling) {
        var configuration = ExpatXMLConfiguration()
        configuration.maximumTextNodeBytes = 64 * 1024
        configuration.cdataHandling = cdata
        let big = "<r><a>" + String(repeating: "x", count: 60_000) + "</a><b><![CDATA[" + String(repeating: "y", count: 70_000) + "]]></b></r>"
        let result = EventRecorder.record(Array(big.utf8), splits: [1000, 50_000, 100_000], configuration: configuration)
        #expect(result.error?.code == .textNodeTooLarge)
        #expect(result.events.contains { $0.hasPrefix("text \"xxxx") })  // the 60 KB node before it was delivered
        let fine = EventRecorder.record(Array(big.utf8), configuration: ExpatXMLConfiguration())
        #expect(fine.error == nil)
    }

    /// A limit below the text buffer's first size (4 KiB): the fast path appends while the buffer has room, so the
    /// buffer must never start larger than the limit. A node of exactly the limit passes, one byte more fails, whether
    /// it comes whole or in fragments (each reference splits it) and however the input is split.
    @Test("a text node limit smaller than the text buffer", arguments: [1, 2, 5, 9])
    func smallTextNodeLimit(split: Int) {
        var configuration = ExpatXMLConfiguration()
        configuration.maximumTextNodeBytes = 10
        let exact = "<r><a>0123456789</a><b>a&amp;b&lt;c&gt;defg</b></r>"  // both nodes are 10 bytes
        let passed = EventRecorder.record(Array(exact.utf8), splits: [split], configuration: configuration)
        #expect(passed.error == nil)
        #expect(passed.events.contains("text \"0123456789\""))
        #expect(passed.events.contains("text \"a&b<c>defg\""))
        for over in ["<r><a>0123456789X</a></r>", "<r><b>a&amp;b&lt;c&gt;defgX</b></r>"] {
            let failed = EventRecorder.record(Array(over.utf8), splits: [split], configuration: configuration)
            #expect(failed.error?.code == .textNodeTooLarge, "\(over)")
        }
    }

    /// A limit of 0 (or below) allows no text at all: a one-byte node fails, in text and in a separate CDATA section.
    @Test("no text under a limit of zero or below", arguments: [0, -1])
    func noTextUnderAZeroLimit(limit: Int) {
        for cdata in [ExpatXMLConfiguration.CDATAHandling.mergeIntoText, .separate] {
            var configuration = ExpatXMLConfiguration()
            configuration.maximumTextNodeBytes = limit
            configuration.cdataHandling = cdata
            for document in ["<r>x</r>", "<r><![CDATA[x]]></r>"] {
                let result = EventRecorder.record(Array(document.utf8), configuration: configuration)
                #expect(result.error?.code == .textNodeTooLarge, "\(document), \(cdata)")
            }
            #expect(EventRecorder.record(Array("<r><a/></r>".utf8), configuration: configuration).error == nil)
        }
    }

    @Test func missingFileIsAReadError() {
        let parser = ExpatXMLParser()
        #expect {
            try parser.parse(contentsOfFile: "/nonexistent/feed.xml")
        } throws: { error in
            guard let error = error as? ExpatXMLError else { return false }
            return error.code == .readFailed && error.source == "/nonexistent/feed.xml" && error.message.contains("does not exist")
        }
    }

    @Test func skippingTextCopiesNothingAndKeepsOtherText() throws {
        final class Selective: XMLEventHandler {
            weak var parser: XMLPushParser?
            var texts: [String] = []
            func startElement(_ name: XMLName, attributes: XMLAttributes) {
                parser?.isCollectingText = name.localName.equals("title")
            }
            func endElement(_ name: XMLName) { parser?.isCollectingText = true }
            func text(_ text: XMLBytes) { texts.append(text.string) }
        }
        let handler = Selective()
        let parser = XMLPushParser(handler: handler)
        handler.parser = parser
        try parser.parse(data: Data("<r><title>T</title><description>long text</description><title>U</title></r>".utf8))
        #expect(handler.texts == ["T", "U"])
    }

    @Test func withoutNamespaceProcessingNamesArriveAsWritten() throws {
        var configuration = ExpatXMLConfiguration()
        configuration.processesNamespaces = false
        let result = EventRecorder.record(Array("<r xmlns:m=\"urn:m\"><m:x m:a=\"1\"/><undeclared:y/></r>".utf8), configuration: configuration)
        #expect(result.error == nil)
        #expect(result.events.contains("start {}m:x q=m:x @{}m:a=\"1\""))
        #expect(result.events.contains("start {}undeclared:y q=undeclared:y"))
        #expect(!result.events.contains { $0.hasPrefix("map") })
    }

    @Test func unboundPrefixIsAnErrorWithNamespaces() {
        #expect(EventRecorder.record(Array("<r><media:content/></r>".utf8)).error?.code == .unboundPrefix)
    }
}
