import ExpatXML
import Foundation
import Testing

/// Records every String-API event as one line.
private final class EventLog: ExpatXMLParserDelegate {
    var events: [String] = []

    func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        let attributes = attributeDict.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        events.append("start \(elementName) \(namespaceURI ?? "-") \(qName ?? "-") [\(attributes)]")
    }

    func parser(_ parser: ExpatXMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        events.append("end \(elementName) \(namespaceURI ?? "-") \(qName ?? "-")")
    }

    func parser(_ parser: ExpatXMLParser, foundCharacters string: String) {
        events.append("text \(string.utf8.count) \(string.allSatisfy(\.isWhitespace) ? "blank" : string)")
    }
}

/// The String API interns names and white-space text in bounded tables: past their size, names and text are made
/// per event and the element's own reference keeps its name until the end tag. These documents go far past both
/// bounds (512 names, 32 white-space nodes), so the events of names kept and not kept are checked alike.
@Suite("ExpatXMLParser name and white-space interning")
struct NameInterningTests {
    static let groups = 700

    /// Groups of three nested elements, each name new (2,100 names), the innermost with two new attributes, one of
    /// them prefixed, and white space of 1 to 60 bytes between them.
    static var document: String {
        var xml = #"<root xmlns:p="urn:p">"#
        for group in 0..<groups {
            let first = 3 * group
            let blank = String(repeating: group % 2 == 0 ? " " : "\n", count: group % 60 + 1)
            xml += "<n\(first)><p:n\(first + 1)>t\(group)<n\(first + 2) a\(group)=\"v\(group)\" p:b\(group)=\"w\"/></p:n\(first + 1)>"
            xml += "\(blank)</n\(first)>"
        }
        return xml + "</root>"
    }

    static func expected(namespaces: Bool) -> [String] {
        func start(_ local: String, _ qualified: String, uri: String = "", _ attributes: String = "") -> String {
            namespaces ? "start \(local) \(uri) \(qualified) [\(attributes)]" : "start \(qualified) - - [\(attributes)]"
        }
        func end(_ local: String, _ qualified: String, uri: String = "") -> String {
            namespaces ? "end \(local) \(uri) \(qualified)" : "end \(qualified) - -"
        }
        var events = [start("root", "root", namespaces ? "" : "xmlns:p=urn:p")]
        for group in 0..<groups {
            let first = 3 * group
            let blank = group % 60 + 1
            events += [start("n\(first)", "n\(first)"),
                       start("n\(first + 1)", "p:n\(first + 1)", uri: "urn:p"),
                       "text \(String(group).utf8.count + 1) t\(group)",
                       start("n\(first + 2)", "n\(first + 2)", "a\(group)=v\(group),p:b\(group)=w"),
                       end("n\(first + 2)", "n\(first + 2)"),
                       end("n\(first + 1)", "p:n\(first + 1)", uri: "urn:p"),
                       "text \(blank) blank",
                       end("n\(first)", "n\(first)")]
        }
        return events + [end("root", "root")]
    }

    @Test(arguments: [true, false], [5, 4096])
    func namesPastTheTablesBoundAreReportedLikeThoseKept(namespaces: Bool, chunk: Int) throws {
        var configuration = ExpatXMLConfiguration()
        configuration.processesNamespaces = namespaces
        let parser = ExpatXMLParser(configuration: configuration)
        let log = EventLog()
        parser.delegate = log
        let bytes = Array(Self.document.utf8)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            try parser.parse(Array(bytes[start..<min(start + chunk, bytes.count)]))
        }
        try parser.finish()
        let expected = Self.expected(namespaces: namespaces)
        #expect(log.events.count == expected.count)
        #expect(log.events.elementsEqual(expected))
        if let index = zip(log.events, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            Issue.record("event \(index): \(log.events[index]) instead of \(expected[index])")
        }
    }

    @Test func elementsOpenedWithoutADelegateCloseNormallyWithOne() throws {
        let parser = ExpatXMLParser()
        let bytes = Array(Self.document.utf8)
        let half = bytes.count / 2
        try parser.parse(Array(bytes[..<half]))  // no delegate: names are interned and the open ones kept all the same
        let log = EventLog()
        parser.delegate = log
        try parser.parse(Array(bytes[half...]))
        try parser.finish()
        let expected = Self.expected(namespaces: true)
        #expect(log.events.count < expected.count)
        #expect(Array(expected.suffix(log.events.count)) == log.events)
    }

    /// The delegate is weak, as Foundation's: a parser keeps no reference to it between calls.
    @Test func theDelegateIsNotKeptBetweenCalls() throws {
        let parser = ExpatXMLParser()
        weak var weakLog: EventLog?
        do {
            let log = EventLog()
            weakLog = log
            parser.delegate = log
            try parser.parse(Array("<a><b/>".utf8))
            #expect(log.events == ["start a  a []", "start b  b []", "end b  b"])
        }
        #expect(weakLog == nil)
        #expect(parser.delegate == nil)
        try parser.parse(Array("</a>".utf8))
        try parser.finish()
    }

    /// The attribute dictionary is one storage emptied and refilled per start tag: a delegate that keeps the
    /// dictionaries it is handed must still see each tag's own, after later tags, and after a tag with so many
    /// attributes that the storage is replaced rather than kept.
    @Test(arguments: [true, false])
    func keptAttributeDictionariesAreNotChangedByLaterTags(namespaces: Bool) throws {
        final class Keeper: ExpatXMLParserDelegate {
            var kept: [[String: String]] = []
            let keepsEvery: Bool
            init(keepsEvery: Bool) { self.keepsEvery = keepsEvery }
            func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                        qualifiedName qName: String?, attributes attributeDict: [String: String]) {
                // Every other tag's dictionary is let go, so both paths (shared, then unique again) are taken.
                if keepsEvery || kept.count % 2 == 0 || elementName == "wide" { kept.append(attributeDict) } else { kept.append([:]) }
            }
        }
        var xml = #"<root xmlns:p="urn:p">"#
        var expected: [[String: String]] = [[:]]
        for index in 0..<40 {
            xml += #"<e a="\#(index)" p:b="x\#(index)"/>"#
            expected.append(["a": "\(index)", "p:b": "x\(index)"])
            if index == 20 {
                let names = (0..<100).map { "w\($0)" }
                xml += "<wide " + names.map { #"\#($0)="\#($0)v""# }.joined(separator: " ") + "/>"
                expected.append(Dictionary(uniqueKeysWithValues: names.map { ($0, "\($0)v") }))
            }
        }
        xml += #"<last only="1"/></root>"#
        expected.append(["only": "1"])
        if !namespaces { expected[0] = ["xmlns:p": "urn:p"] }
        for keepsEvery in [true, false] {
            var configuration = ExpatXMLConfiguration()
            configuration.processesNamespaces = namespaces
            let parser = ExpatXMLParser(configuration: configuration)
            let keeper = Keeper(keepsEvery: keepsEvery)
            parser.delegate = keeper
            try parser.parse(Array(xml.utf8))
            try parser.finish()
            #expect(keeper.kept.count == expected.count)
            for (index, (kept, want)) in zip(keeper.kept, expected).enumerated() where keepsEvery || index % 2 == 0 || want.count == 100 {
                #expect(kept == want, "tag \(index)")
            }
        }
    }
}
