import ExpatXML
import Foundation
import Syndication
import TestSupport
import Testing

// Issue 16's encodings on real feeds from ../shared/corpus: each is written again in another encoding (by
// Foundation, not iconv) and must give the very same articles and metadata as the original.

/// The corpus feed's text, with the XML declaration's encoding replaced (or removed with `nil`).
private func corpusText(_ name: String, declaring label: String?) throws -> String {
    let data = try Data(contentsOf: Paths.realworld.appendingPathComponent(name))
    let text = try #require(String(data: data, encoding: .utf8), "\(name) is not UTF-8")
    let declaration = #/encoding\s*=\s*["'][^"']*["']/#
    return text.replacing(declaration, with: label.map { "encoding=\"\($0)\"" } ?? "")
}

private func parse(_ bytes: [UInt8], chunk: Int = 1 << 20) -> (articles: [Article], summary: FeedSummary) {
    let result = parseFeed(bytes, chunk: chunk, source: "corpus")
    return (result.articles, result.summary)
}

@Suite("Encodings on the real-world corpus")
struct CorpusEncodingTests {
    /// Feeds with enough non-ASCII text in windows-1252's repertoire for a detector to tell (100 to 2,500 such
    /// characters each); feeds with a dozen or fewer are too little to tell Western from Central European text.
    static let westernFeeds = ["KatieFloyd.rss", "OneFootTsunami.atom", "cloudblog.rss", "dcrainmaker.xml", "macworld.rss"]

    @Test("an undeclared windows-1252 copy is detected and reads like the UTF-8 original", arguments: westernFeeds)
    func windows1252(name: String) throws {
        let original = parse(Array(try corpusText(name, declaring: "UTF-8").utf8))
        let legacy = try #require(try corpusText(name, declaring: nil).data(using: .windowsCP1252), "not representable in windows-1252")
        for chunk in [1 << 20, 4096, 61] {
            let copy = parse(Array(legacy), chunk: chunk)
            #expect(copy.summary.encoding?.name == "windows-1252", "chunk \(chunk)")
            #expect(copy.summary.encoding?.source == .detected)
            #expect(copy.summary.error == nil)
            #expect(copy.articles == original.articles, "chunk \(chunk)")
            #expect(copy.summary.metadata == original.summary.metadata)
            #expect(copy.summary.repairs.invalidUTF8 == 0)
        }
    }

    @Test func anUndeclaredGB2312CopyIsDetected() throws {
        // kc0011.rss declares gb2312; without the declaration libuchardet names it.
        let data = try Data(contentsOf: Paths.realworld.appendingPathComponent("kc0011.rss"))
        let declared = parse(Array(data))
        #expect(declared.summary.encoding?.source == .declaration)
        var undeclared = Array(data)
        let label = Array("encoding=\"gb2312\"".utf8)
        let start = try #require(undeclared.firstRange(of: label))
        undeclared.removeSubrange(start)
        let detected = parse(undeclared)
        #expect(detected.summary.encoding?.source == .detected)
        #expect(["GBK", "GB18030"].contains(detected.summary.encoding?.name ?? ""))
        #expect(detected.articles.map(\.title) == declared.articles.map(\.title))
        #expect(detected.articles.count == 20)
    }

    @Test("every UTF-8 feed of the corpus reads the same in UTF-32", arguments: RealWorldFeed.all().map(\.path))
    func utf32(path: String) throws {
        let name = (path as NSString).lastPathComponent
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard String(data: data, encoding: .utf8) != nil else { return }  // kc0011.rss is GB2312
        let text = try corpusText(name, declaring: "UTF-32")
        let original = parse(Array(try corpusText(name, declaring: "UTF-8").utf8))
        for (encoding, mark, sourceName) in [(String.Encoding.utf32BigEndian, [UInt8](), "UTF-32BE"),
                                             (.utf32LittleEndian, [0xFF, 0xFE, 0x00, 0x00], "UTF-32LE")] {
            let bytes = mark + Array(try #require(text.data(using: encoding)))
            let copy = parse(bytes, chunk: 1001)
            #expect(copy.summary.encoding == DocumentEncoding(name: sourceName, label: nil, source: .byteOrderMark), "\(name)")
            #expect(copy.articles == original.articles, "\(name) in \(sourceName)")
            #expect(copy.summary.metadata == original.summary.metadata, "\(name) in \(sourceName)")
        }
    }
}
