import ExpatXML
import Foundation
import Syndication
import TestSupport
import Testing

/// One XML feed of NetNewsWire's real-world corpus and what its manifest says about it.
struct RealWorldFeed: CustomTestStringConvertible, Sendable {
    let path: String
    let itemCount: Int
    let title: String
    var testDescription: String { (path as NSString).lastPathComponent }

    static func all() -> [RealWorldFeed] {
        let manifestURL = Paths.rsparser.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: manifestURL),
              let entries = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return [] }
        return entries.compactMap { entry in
            guard let file = entry["file"] as? String, let count = entry["item_count_expat"] as? Int,
                  let title = entry["feed_title"] as? String else { return nil }
            return RealWorldFeed(path: Paths.rsparser.appendingPathComponent(file).path, itemCount: count, title: title)
        }
    }
}

/// One JSON Feed of NetNewsWire's real-world corpus and what its manifest says about it (`format` "JSON Feed …").
struct RealWorldJSONFeed: CustomTestStringConvertible, Sendable {
    let path: String
    let itemCount: Int
    let title: String
    let version: String
    var testDescription: String { (path as NSString).lastPathComponent }

    static func all() -> [RealWorldJSONFeed] {
        let manifestURL = Paths.rsparser.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: manifestURL),
              let entries = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return [] }
        return entries.compactMap { entry in
            guard let file = entry["file"] as? String, let format = entry["format"] as? String, format.hasPrefix("JSON Feed "),
                  let count = entry["item_count"] as? Int, let title = entry["feed_title"] as? String else { return nil }
            let number = String(format.dropFirst("JSON Feed ".count))
            return RealWorldJSONFeed(path: Paths.rsparser.appendingPathComponent(file).path, itemCount: count, title: title,
                                     version: number.contains(".") ? number : number + ".0")
        }
    }
}

@Suite("Real-world corpus")
struct CorpusTests {
    @Test func theCorpusIsThere() {
        #expect(RealWorldFeed.all().count >= 26, "expected the XML feeds of ../shared/corpus/realworld/rsparser")
    }

    @Test func theJSONFeedsAreThere() {
        #expect(RealWorldJSONFeed.all().count == 9, "expected NetNewsWire's JSON Feeds in ../shared/corpus/realworld/rsparser")
    }

    @Test("every real-world JSON Feed parses with the manifest's item count, title and version", arguments: RealWorldJSONFeed.all())
    func realWorldJSON(feed: RealWorldJSONFeed) throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: feed.path)))
        let whole = parseFeed(bytes, source: feed.path)
        #expect(whole.summary.error == nil)
        #expect(whole.articles.count == feed.itemCount)
        #expect(whole.summary.metadata.title == feed.title)
        #expect(whole.summary.metadata.format == FeedFormat(family: .json, version: feed.version))
        #expect(whole.articles.allSatisfy { !$0.id.isEmpty && $0.idSource == .guid })
        #expect(Set(whole.articles.map(\.id)).count == feed.itemCount, "JSON Feed ids are unique in these feeds")
        // One byte at a time for the smaller feeds (a debug build takes seconds a feed for the large ones).
        for chunk in (bytes.count <= 60_000 ? [1] : [3]) + [1 + bytes.count / 7, 997] {
            let split = parseFeed(bytes, chunk: chunk, source: feed.path)
            #expect(split.articles == whole.articles, "chunk \(chunk)")
            #expect(split.metadataAtArticle == whole.metadataAtArticle, "chunk \(chunk)")
            #expect(split.summary.metadata == whole.summary.metadata, "chunk \(chunk)")
        }
    }

    @Test("every real-world feed parses with the manifest's item count and title", arguments: RealWorldFeed.all())
    func realWorld(feed: RealWorldFeed) throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: feed.path)))
        let whole = parseFeed(bytes, source: feed.path)
        #expect(whole.summary.error == nil)
        #expect(whole.articles.count == feed.itemCount)
        #expect(whole.summary.metadata.title == feed.title)
        #expect(whole.articles.allSatisfy { !$0.id.isEmpty })
        // The chunking property, end to end: odd splits give the very same articles.
        for chunk in [1 + bytes.count / 7, 997] {
            let split = parseFeed(bytes, chunk: chunk, source: feed.path)
            #expect(split.articles == whole.articles, "chunk \(chunk)")
            #expect(split.summary.metadata == whole.summary.metadata, "chunk \(chunk)")
        }
    }
}
