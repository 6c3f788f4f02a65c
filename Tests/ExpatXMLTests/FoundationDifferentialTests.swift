import ExpatXML
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// One event both parsers report, in a form that compares across them.
enum DifferentialEvent: Equatable, CustomStringConvertible {
    case start(local: String, uri: String, qualified: String, attributes: [String])
    case end(local: String, uri: String, qualified: String)
    case text(String)

    var description: String {
        switch self {
        case .start(let local, let uri, let qualified, let attributes):
            return "start {\(uri)}\(local) q=\(qualified)" + attributes.map { " @" + $0.debugDescription }.joined()
        case .end(let local, let uri, let qualified): return "end {\(uri)}\(local) q=\(qualified)"
        case .text(let text): return "text \(text.debugDescription)"
        }
    }

    var isText: Bool {
        if case .text = self { return true }
        return false
    }

    /// Attributes as a sorted list of `qname=value`, so dictionary order cannot matter.
    static func sortedAttributes(_ attributes: [String: String]) -> [String] {
        attributes.map { "\($0.key)=\($0.value)" }.sorted()
    }

    /// Where two sequences first differ, with context (for text, the first differing character), for messages.
    static func firstDifference(_ ours: [DifferentialEvent], _ theirs: [DifferentialEvent]) -> String {
        let common = min(ours.count, theirs.count)
        let index = (0..<common).first { ours[$0] != theirs[$0] } ?? common
        guard index < common else {
            return "event counts differ: ExpatXML \(ours.count), Foundation \(theirs.count); next: "
                + (ours.count > common ? "ExpatXML \(ours[common])" : "Foundation \(theirs[common])")
        }
        if case .text(let a) = ours[index], case .text(let b) = theirs[index] {
            let a = Array(a), b = Array(b)
            let at = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
            let excerpt = { (text: [Character]) in String(text[max(0, at - 30)..<min(text.count, at + 30)]).debugDescription }
            return "event \(index), text differs at character \(at): ExpatXML \(excerpt(a)) | Foundation \(excerpt(b))"
        }
        return "event \(index): ExpatXML \(String(ours[index].description.prefix(200)))"
            + " | Foundation \(String(theirs[index].description.prefix(200)))"
    }
}

/// What ExpatXMLParser made of one document.
struct DifferentialExpatOutcome {
    var events: [DifferentialEvent] = []
    var error: ExpatXMLError?
}

/// Records ExpatXMLParser's String API. Text is recorded as delivered, never coalesced: the API promises one
/// call per text node, so two adjacent text events here would be a difference the comparison must see.
final class DifferentialExpatRecorder: ExpatXMLParserDelegate {
    var outcome = DifferentialExpatOutcome()

    func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        outcome.events.append(.start(local: elementName, uri: namespaceURI ?? "<nil>", qualified: qName ?? "<nil>",
                                     attributes: DifferentialEvent.sortedAttributes(attributeDict)))
    }

    func parser(_ parser: ExpatXMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        outcome.events.append(.end(local: elementName, uri: namespaceURI ?? "<nil>", qualified: qName ?? "<nil>"))
    }

    func parser(_ parser: ExpatXMLParser, foundCharacters string: String) {
        outcome.events.append(.text(string))
    }

    func parser(_ parser: ExpatXMLParser, foundCDATA CDATABlock: Data) {
        // Not configured: CDATA is merged into text by default. Recorded so that it would show if it came.
        outcome.events.append(.text("<separate CDATA>" + String(decoding: CDATABlock, as: UTF8.self)))
    }

    static func run(_ bytes: [UInt8], processesNamespaces: Bool = true) -> DifferentialExpatOutcome {
        var configuration = ExpatXMLConfiguration()
        configuration.processesNamespaces = processesNamespaces
        let recorder = DifferentialExpatRecorder()
        let parser = ExpatXMLParser(configuration: configuration)
        parser.delegate = recorder
        do {
            try parser.parse(data: Data(bytes))
        } catch {
            recorder.outcome.error = error
        }
        return recorder.outcome
    }
}

/// What Foundation's XMLParser made of one document.
struct DifferentialFoundationOutcome {
    var events: [DifferentialEvent] = []
    /// The same events with line breaks inside CDATA sections normalized to LF (XML 1.0, section 2.11), which
    /// libxml2 2.9 does not do; used only to check allow-list entries of that kind.
    var eventsWithCDATALineBreaksNormalized: [DifferentialEvent] = []
    /// What `parse()` returned. Foundation on Linux can return `true` after reporting errors.
    var accepted = false
    /// Every `parseErrorOccurred`, with the line Foundation was at.
    var errors: [(line: Int, error: String)] = []

    var errorSummary: String {
        errors.prefix(3).map { "line \($0.line): \($0.error)" }.joined(separator: "; ")
    }
}

/// Records Foundation's XMLParser, coalescing adjacent foundCharacters/foundCDATA into one text node: the one
/// documented difference between the two APIs (DESIGN.md, "Contracts"). A comment or processing instruction ends
/// a text node, as it does in ExpatXML; an empty CDATA section alone makes no text node, as in ExpatXML.
final class DifferentialFoundationRecorder: NSObject, XMLParserDelegate {
    var outcome = DifferentialFoundationOutcome()
    private var pending: String?
    private var pendingNormalized: String?

    private func append(_ text: String, normalized: String) {
        pending = (pending ?? "") + text
        pendingNormalized = (pendingNormalized ?? "") + normalized
    }

    private func flush() {
        if let pending, !pending.isEmpty { outcome.events.append(.text(pending)) }
        if let pendingNormalized, !pendingNormalized.isEmpty {
            outcome.eventsWithCDATALineBreaksNormalized.append(.text(pendingNormalized))
        }
        pending = nil
        pendingNormalized = nil
    }

    private func append(_ event: DifferentialEvent) {
        flush()
        outcome.events.append(event)
        outcome.eventsWithCDATALineBreaksNormalized.append(event)
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        append(.start(local: elementName, uri: namespaceURI ?? "<nil>", qualified: qName ?? "<nil>",
                      attributes: DifferentialEvent.sortedAttributes(attributeDict)))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        append(.end(local: elementName, uri: namespaceURI ?? "<nil>", qualified: qName ?? "<nil>"))
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        append(string, normalized: string)
    }

    func parser(_ parser: XMLParser, foundIgnorableWhitespace whitespaceString: String) {
        append(whitespaceString, normalized: whitespaceString)
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        let text = String(decoding: CDATABlock, as: UTF8.self)
        // XML 1.0 section 2.11: CR LF becomes LF, then any CR left becomes LF.
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        append(text, normalized: normalized)
    }

    func parser(_ parser: XMLParser, foundComment comment: String) { flush() }

    func parser(_ parser: XMLParser, foundProcessingInstructionWithTarget target: String, data: String?) { flush() }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        outcome.errors.append((parser.lineNumber, "\(parseError)"))
    }

    static func run(_ bytes: [UInt8], processesNamespaces: Bool = true) -> DifferentialFoundationOutcome {
        let recorder = DifferentialFoundationRecorder()
        let parser = XMLParser(data: Data(bytes))
        parser.shouldProcessNamespaces = processesNamespaces
        parser.delegate = recorder
        recorder.outcome.accepted = parser.parse()
        recorder.flush()
        return recorder.outcome
    }
}

/// A kind of difference between ExpatXML and Foundation that is understood and acceptable, with the check that a
/// file's difference really is of that kind (so an allow-listed file cannot hide a second, new difference).
enum DifferentialDiscrepancyKind: String, CaseIterable {
    /// expat rejects an undeclared namespace prefix (Namespaces in XML 1.0, "Namespace constraint: Prefix
    /// Declared"; XML_ERROR_UNBOUND_PREFIX); libxml2 reports a namespace error and goes on.
    case unboundPrefix
    /// Foundation's `XMLParser(data:)` returns `true` for zero bytes without parsing; a document needs a root
    /// element (XML 1.0, production [1]), which ExpatXML enforces (XML_ERROR_NO_ELEMENTS).
    case emptyDocument
    /// libxml2 2.9 hands CDATA content over without end-of-line handling, so CR LF and CR stay; XML 1.0 section
    /// 2.11 requires LF everywhere, which expat does.
    case carriageReturnsInCDATA
    /// swift-corelibs-foundation on libxml2 loses part of the replacement text of internal entities: with
    /// `<!ENTITY e "x">`, `&e;` reports nothing; with `<!ENTITY e "entity &#233; text">`, only "é text" arrives.
    case foundationLosesInternalEntityText
    /// ExpatXML turns a byte sequence that is invalid in the declared multi-byte charset into U+FFFD and goes on,
    /// by design (Iconv.swift); libxml2 stops decoding there and Foundation still returns `true`.
    case invalidSequenceBecomesReplacementCharacter
    /// ExpatXML decodes an ISO-8859-1 (or US-ASCII) label as windows-1252, as the WHATWG Encoding Standard and
    /// browsers do, so 0x80–0x9F are € “ ” and friends; libxml2 decodes true ISO-8859-1, C1 control characters.
    case latin1DecodedAsWindows1252
    /// A document in single-byte text whose declaration says UTF-16 cannot be UTF-16 (its `<?xml` is ASCII):
    /// ExpatXML reads it as UTF-8 (DocumentEncoding.swift); libxml2 fails on the impossible switch.
    case utf16DeclarationInSingleByteText

    /// Whether `comparison`'s difference is exactly of this kind.
    func explains(_ comparison: DifferentialComparison) -> Bool {
        let ours = comparison.ours, theirs = comparison.theirs
        switch self {
        case .unboundPrefix:
            // Without namespace processing a prefix needs no declaration: there both parsers must agree.
            guard ours.error?.code == .unboundPrefix, theirs.accepted else { return false }
            let plainOurs = DifferentialExpatRecorder.run(comparison.bytes, processesNamespaces: false)
            let plainTheirs = DifferentialFoundationRecorder.run(comparison.bytes, processesNamespaces: false)
            return plainOurs.error == nil && plainTheirs.accepted && plainOurs.events == plainTheirs.events
        case .emptyDocument:
            return comparison.bytes.isEmpty && ours.error?.code == .noElements && theirs.accepted && theirs.events.isEmpty
        case .carriageReturnsInCDATA:
            return ours.error == nil && theirs.accepted && ours.events != theirs.events
                && ours.events == theirs.eventsWithCDATALineBreaksNormalized
        case .foundationLosesInternalEntityText:
            // Same elements and attributes; every differing text node lost characters on Foundation's side only.
            guard ours.error == nil, theirs.accepted, comparison.bytes.count > 9,
                  String(decoding: comparison.bytes, as: UTF8.self).contains("<!ENTITY"),
                  ours.events.count == theirs.events.count else { return false }
            return zip(ours.events, theirs.events).allSatisfy { pair in
                if pair.0 == pair.1 { return true }
                guard case .text(let a) = pair.0, case .text(let b) = pair.1, b.count < a.count else { return false }
                var remaining = Substring(a)
                for character in b {  // b is a subsequence of a
                    guard let index = remaining.firstIndex(of: character) else { return false }
                    remaining = remaining[remaining.index(after: index)...]
                }
                return true
            }
        case .latin1DecodedAsWindows1252:
            // Foundation's events with every C1 control read as the windows-1252 byte it came from are ours.
            guard ours.error == nil, theirs.accepted, ours.events != theirs.events else { return false }
            return ours.events == theirs.events.map(Self.windows1252ForC1)
        case .utf16DeclarationInSingleByteText:
            // Foundation, told the truth (UTF-8), agrees with ExpatXML.
            let text = String(decoding: comparison.bytes, as: UTF8.self)
            guard ours.error == nil, !theirs.accepted, text.hasPrefix("<?xml"),
                  let label = text.range(of: #"encoding="UTF-16""#, options: .caseInsensitive) else { return false }
            let corrected = text.replacingCharacters(in: label, with: #"encoding="UTF-8""#)
            let retold = DifferentialFoundationRecorder.run(Array(corrected.utf8))
            return retold.accepted && retold.events == ours.events
        case .invalidSequenceBecomesReplacementCharacter:
            // Foundation's events stop where ExpatXML's text with U+FFFD begins.
            guard ours.error == nil, theirs.events.count < ours.events.count,
                  Array(ours.events.prefix(theirs.events.count)) == theirs.events,
                  case .text(let text) = ours.events[theirs.events.count] else { return false }
            return text.contains("\u{FFFD}")
        }
    }
}

extension DifferentialDiscrepancyKind {
    /// `event` with each C1 control character (U+0080–U+009F) in its text or attributes replaced by what that byte
    /// means in windows-1252 (Foundation's own windows-1252 decoder; the five bytes it leaves undefined stay).
    static func windows1252ForC1(_ event: DifferentialEvent) -> DifferentialEvent {
        func map(_ text: String) -> String {
            var result = ""
            for scalar in text.unicodeScalars {
                if (0x80...0x9F).contains(scalar.value),
                   let decoded = String(data: Data([UInt8(scalar.value)]), encoding: .windowsCP1252), decoded.unicodeScalars.count == 1 {
                    result += decoded
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
            return result
        }
        switch event {
        case .text(let text): return .text(map(text))
        case .start(let local, let uri, let qualified, let attributes):
            return .start(local: local, uri: uri, qualified: qualified, attributes: attributes.map(map))
        case .end: return event
        }
    }
}

/// One allow-listed file: the kind of its difference and why it is acceptable for this file.
struct DifferentialAllowance {
    let kind: DifferentialDiscrepancyKind
    let reason: String
}

/// Both parsers' outcomes for one document.
struct DifferentialComparison {
    enum Verdict: Equatable {
        case matched
        case bothRejected
        case differs(String)
    }

    let path: String
    let bytes: [UInt8]
    let ours: DifferentialExpatOutcome
    let theirs: DifferentialFoundationOutcome

    init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
        ours = DifferentialExpatRecorder.run(bytes)
        theirs = DifferentialFoundationRecorder.run(bytes)
    }

    var verdict: Verdict {
        switch (ours.error, theirs.accepted) {
        case (nil, true):
            return ours.events == theirs.events ? .matched : .differs(DifferentialEvent.firstDifference(ours.events, theirs.events))
        case (let error?, true):
            return .differs("ExpatXML rejects (\(error.code): \(error)), Foundation accepts")
        case (nil, false):
            return .differs("Foundation rejects (\(theirs.errorSummary)), ExpatXML accepts")
        case (let error?, false):
            // Agreement: both stop at the same line, and everything ExpatXML reported before stopping Foundation
            // reported too (libxml2 may go on in recovery after its first error, so it may report more).
            let sameLine = theirs.errors.contains { $0.line == error.line }
            let prefix = ours.events.count <= theirs.events.count && Array(theirs.events.prefix(ours.events.count)) == ours.events
            return sameLine && prefix ? .bothRejected
                : .differs("both reject, differently: ExpatXML \(error); Foundation \(theirs.errorSummary); "
                           + "same line \(sameLine), same events before the error \(prefix)")
        }
    }
}

/// ExpatXML's String API against Foundation's XMLParser (libxml2 on Linux) on every XML file of the external
/// corpora and the hand-written documents of the chunking test.
@Suite struct FoundationDifferentialTests {
    /// Every document whose events differ from Foundation's, or that one parser accepts and the other rejects,
    /// with why. The test fails when the actual set differs from this one in either direction.
    static let allowList: [String: DifferentialAllowance] = {
        var list: [String: DifferentialAllowance] = [:]
        func allow(_ paths: [String], _ kind: DifferentialDiscrepancyKind, _ reason: String) {
            for path in paths { list[path] = DifferentialAllowance(kind: kind, reason: reason) }
        }
        allow([
            "gofeed/testdata/extensions/itunes/itunes_item_summary_cdata_multi.xml",
            "gofeed/testdata/translator/rss/feed_link_-_rss_channel_itunes_subtitle.xml",
        ], .unboundPrefix, "uses itunes: without declaring the prefix; not namespace-well-formed")
        allow([
            "gofeed/testdata/extensions/media/feed_image_-_rss_channel_media.xml",
            "gofeed/testdata/extensions/media/feed_item_image_-_rss_channel_item_media.xml",
            "gofeed/testdata/translator/rss/feed_item_image_-_rss_channel_item_content.xml",
        ], .unboundPrefix, "uses media: or content: without declaring the prefix; not namespace-well-formed")
        allow([
            "gofeed/testdata/translator/rss/feed_link_-_rss_channel_atom_link.xml",
            "gofeed/testdata/translator/rss/feed_link_-_rss_channel_atom_link_alternate.xml",
        ], .unboundPrefix, "uses atom: without declaring the prefix; not namespace-well-formed")
        allow(["gofeed/testdata/parser/universal/empty_feed.xml"], .emptyDocument,
              "a zero-byte file is not an XML document; Foundation returns true for empty data without parsing")
        allow([
            "realworld/rsparser/Tests/RSParserTests/Resources/aktuality.rss",
            "realworld/rsparser/Tests/RSParserTests/Resources/donthitsave.xml",
            "realworld/rsparser/Tests/RSParserTests/Resources/natasha.xml",
            "realworld/rsparser/Tests/RSParserTests/Resources/phpxml.rss",
            "handwritten/line-endings",
        ], .carriageReturnsInCDATA, "CR LF line breaks inside CDATA sections: libxml2 keeps the CR, expat normalizes (XML 1.0 §2.11)")
        allow(["handwritten/entities-and-references"], .foundationLosesInternalEntityText,
              "internal entities &e; and &nested;: Foundation on Linux drops part of their replacement text")
        allow(["handwritten/shift-jis-invalid-sequence"], .invalidSequenceBecomesReplacementCharacter,
              "a Shift_JIS lead byte followed by a space: ExpatXML decodes U+FFFD and goes on, libxml2 stops")
        allow(["handwritten/iso-8859-1-c1-bytes"], .latin1DecodedAsWindows1252,
              "declares ISO-8859-1 and uses 0x80, 0x93, 0x94: ExpatXML reads € “ ” (WHATWG), libxml2 C1 controls")
        allow(["handwritten/utf8-declared-utf16"], .utf16DeclarationInSingleByteText,
              "UTF-8 bytes whose declaration says UTF-16: ExpatXML reads UTF-8, libxml2 fails to switch encoding")
        return list
    }()

    /// Hand-written documents that Foundation is not given, and why.
    static let notGivenToFoundation: [String: String] = [
        "pi-without-data": "swift-corelibs-foundation crashes (strlen of NULL) on a processing instruction without data",
        "charset-hint-windows-1252": "needs ExpatXMLConfiguration.charsetHint; XMLParser has no out-of-band charset",
    ]

    @Test("ExpatXMLParser reports the same elements, attributes and text as Foundation's XMLParser")
    func matchesFoundation() {
        #expect(DifferentialCorpus.unclassifiedFiles().isEmpty, "corpus files of an unknown kind: add their extension")
        let corpus = DifferentialCorpus.xmlFiles()
        #expect(corpus.count >= 500, "the corpus at \(DifferentialCorpus.root.path) is missing or incomplete")

        let handWritten = ChunkingDocuments.wellFormed.filter { Self.notGivenToFoundation[$0.name] == nil }
        #expect(Set(ChunkingDocuments.wellFormed.map(\.name)).isSuperset(of: Self.notGivenToFoundation.keys))
        #expect(ChunkingDocuments.wellFormed.filter { !$0.isSelfDescribing }.allSatisfy { Self.notGivenToFoundation[$0.name] != nil })
        let documents = corpus.map { ($0.path, $0.bytes) } + handWritten.map { ("handwritten/" + $0.name, $0.bytes) }

        var matched = 0
        var bothRejected: [String] = []
        var different: [String: String] = [:]
        var unexplained: [String] = []
        for (path, bytes) in documents {
            let comparison = DifferentialComparison(path: path, bytes: bytes)
            switch comparison.verdict {
            case .matched: matched += 1
            case .bothRejected:
                bothRejected.append("\(path): ExpatXML \(comparison.ours.error.map { "\($0.code) at \($0.line):\($0.column)" } ?? "")")
            case .differs(let description):
                different[path] = description
                if let allowance = Self.allowList[path], !allowance.kind.explains(comparison) {
                    unexplained.append("\(path): allow-listed as \(allowance.kind), but: \(description)")
                }
            }
        }

        print("""
            Foundation differential: \(documents.count) documents compared (\(corpus.count) corpus files, \
            \(handWritten.count) hand-written); \(matched) matched, \(bothRejected.count) rejected by both alike, \
            \(different.count) different, \(Self.allowList.count) allow-listed
            """)
        for (path, reason) in Self.allowList.sorted(by: { $0.key < $1.key }) {
            print("  allow-listed \(path) [\(reason.kind)]: \(reason.reason)")
        }
        for line in bothRejected { print("  rejected by both at the same line: \(line)") }
        for (name, reason) in Self.notGivenToFoundation.sorted(by: { $0.key < $1.key }) {
            print("  not given to Foundation: handwritten/\(name): \(reason)")
        }

        let newDifferences = different.keys.filter { Self.allowList[$0] == nil }.sorted()
        #expect(newDifferences.isEmpty, """
            differences not on the allow-list (investigate; allow-list only if acceptable):
            \(newDifferences.map { "\($0): \(different[$0]!)" }.joined(separator: "\n"))
            """)
        let resolved = Self.allowList.keys.filter { different[$0] == nil }.sorted()
        #expect(resolved.isEmpty, "allow-listed but now matching (remove them from the list): \(resolved)")
        #expect(unexplained.isEmpty, "\(unexplained.joined(separator: "\n"))")
        #expect(matched > 50)
        #expect(documents.count >= 500)
    }

    @Test("Every kind of allowed difference is still needed and still explained")
    func allowListKindsAreUsed() {
        let used = Set(Self.allowList.values.map(\.kind))
        #expect(used == Set(DifferentialDiscrepancyKind.allCases))
        #expect(Self.allowList.values.allSatisfy { !$0.reason.isEmpty })
    }

    @Test("The comparison sees what it must see")
    func comparisonCanFail() {
        // Foundation's fragments and CDATA are coalesced into one node; a comment splits the node.
        let foundation = DifferentialFoundationRecorder.run(Array("<r>a&amp;b<![CDATA[c]]>d<!--x-->e<![CDATA[]]></r>".utf8))
        #expect(foundation.accepted)
        #expect(foundation.events == [
            .start(local: "r", uri: "", qualified: "r", attributes: []), .text("a&bcd"), .text("e"),
            .end(local: "r", uri: "", qualified: "r"),
        ])
        let ours = DifferentialExpatRecorder.run(Array("<r>a&amp;b<![CDATA[c]]>d<!--x-->e<![CDATA[]]></r>".utf8))
        #expect(ours.events == foundation.events)
        // A namespaced attribute and element are reported alike by both.
        let document = Array(#"<r xmlns="urn:d" xmlns:p="urn:p" p:a="1" b="2"><p:c/></r>"#.utf8)
        let namespaced = DifferentialComparison(path: "inline", bytes: document)
        #expect(namespaced.verdict == .matched)
        #expect(namespaced.ours.events.first == .start(local: "r", uri: "urn:d", qualified: "r", attributes: ["b=2", "p:a=1"]))
    }
}
