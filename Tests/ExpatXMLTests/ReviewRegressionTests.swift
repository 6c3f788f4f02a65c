import ExpatXML
import Foundation
import Testing

/// Bugs an adversarial review found, each pinned by the input that showed it.
@Suite("Review regressions (ExpatXML)")
struct ReviewRegressionTests {
    var repairing: ExpatXMLConfiguration {
        var configuration = ExpatXMLConfiguration()
        configuration.repairsMalformedInput = true
        return configuration
    }

    @Test("a byte-order mark wins over a conflicting 8-bit declaration", arguments: ["iso-8859-1", "windows-1251"])
    func byteOrderMarkWins(declared: String) throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("<?xml version=\"1.0\" encoding=\"\(declared)\"?><r>caf".utf8) + [0xC3, 0xA9]
            + Array("</r>".utf8)
        let result = try parseText(bytes)
        #expect(result.collector.texts == ["café"])
        #expect(result.encoding?.source == .byteOrderMark)
    }

    @Test("UTF-16 without a mark or a declaration, with repairs on", arguments: [String.Encoding.utf16LittleEndian, .utf16BigEndian])
    func utf16WithoutMark(encoding: String.Encoding) throws {
        let bytes = Array("<r><t>café 東京</t></r>".data(using: encoding)!)
        for chunk in [1, 3, 1 << 20] {
            let result = repairParse(bytes, chunk: chunk)
            #expect(result.error == nil)
            #expect(result.recorder.texts == ["café 東京"])
            #expect(result.repairs.isEmpty)
        }
    }

    @Test func textLimitsBelowTheInitialBufferHold() {
        var configuration = ExpatXMLConfiguration()
        configuration.maximumTextNodeBytes = 100
        let result = EventRecorder.record(Array(("<r>" + String(repeating: "x", count: 3000) + "</r>").utf8), configuration: configuration)
        #expect(result.error?.code == .textNodeTooLarge)
        #expect(!result.events.contains { $0.hasPrefix("text") })
    }

    @Test func aRootTagLongerThan64KiBIsLeftToExpatHoweverItArrives() {
        let xml = "<rss version=\"2.0\" x=\"" + String(repeating: "a", count: 70_000) + "\"><channel><media:thumbnail url=\"u\"/></channel></rss>"
        let bytes = Array(xml.utf8)
        let whole = repairParse(bytes, chunk: 1 << 20)
        for chunk in [4096, 65_536] {
            let split = repairParse(bytes, chunk: chunk)
            #expect(split.error?.code == whole.error?.code, "chunk \(chunk)")
            #expect(split.error?.column == whole.error?.column, "chunk \(chunk)")
            #expect(split.recorder.events == whole.recorder.events, "chunk \(chunk)")
        }
        // No declarations are added to a root tag this long; the unbound prefix is bound where expat refuses it.
        #expect(whole.error == nil)
        #expect(EventRecorder.record(bytes, configuration: repairing).events.contains { $0.hasPrefix("start {http://search.yahoo.com/mrss/}thumbnail") })
        #expect(whole.repairs.undeclaredPrefixes == 1)
    }

    @Test func errorsInsideTheRootTagHaveTheirColumnAsWritten() {
        let xml = "<rss version=\"2.0\" foo=\"a<b\"><channel></channel></rss>"
        let strict = EventRecorder.record(Array(xml.utf8))
        let repaired = EventRecorder.record(Array(xml.utf8), configuration: repairing)
        #expect(strict.error?.code == .invalidToken)
        #expect(repaired.error?.code == strict.error?.code)
        #expect(repaired.error?.line == strict.error?.line)
        #expect(repaired.error?.column == strict.error?.column)
        #expect(repaired.error?.byteOffset == strict.error?.byteOffset)
    }

    @Test func removedLeadingWhiteSpaceCountsInErrorPositions() {
        let bytes = Array("\n \n\t<r>\n<a></b></r>".utf8)
        let strict = EventRecorder.record(Array("<r>\n<a></b></r>".utf8))
        #expect(strict.error?.line == 2)
        for chunk in [1, 2, 3, 1 << 20] {
            let repaired = repairParse(bytes, chunk: chunk)
            #expect(repaired.error?.code == .tagMismatch, "chunk \(chunk)")
            #expect(repaired.error?.line == 4, "chunk \(chunk)")
            #expect(repaired.error?.column == strict.error?.column, "chunk \(chunk)")
            #expect(repaired.error?.byteOffset == (strict.error?.byteOffset ?? 0) + 4, "chunk \(chunk)")
        }
        // Leading white space followed by something else than markup: the same error however it is split.
        let junk = Array("\n \n\t\u{D6}\n<!-- -->".utf8)
        let errors = [1, 2, 3, 1 << 20].map { repairParse(junk, chunk: $0).error }
        #expect(Set(errors.map { "\($0?.code.rawValue ?? -1):\($0?.line ?? -1):\($0?.column ?? -1)" }).count == 1)
    }

    @Test func repairCountsAfterAnErrorDoNotDependOnChunking() {
        let bytes = Array("<r><a>x & y &nbsp;</a>\n<b></c>\u{01}&nbsp; & z</r>".utf8)
        let counts = [1, 2, 5, 7, 1 << 20].map { repairParse(bytes, chunk: $0).repairs }
        #expect(Set(counts.map { "\($0)" }).count == 1)
    }
}
