@testable import ArticleStore
import Foundation
import Syndication
import Testing

/// Stores written before XXH64 came from libxxhash must read back unchanged: the same content hashes, the same key
/// hashes (the key index), the same fallback keys. Otherwise every stored article would be reported `updated` once,
/// or found `new` again under its old key.
///
/// The expected values below were computed by the hand-written Swift XXH64 that `ArticleHasher` used until it called
/// libxxhash (`ArticleEncoding.swift` at commit 1de5382, which added this file), on exactly these articles, and pasted here.
/// `Fixtures/store-xxh64-v1.sqlite` was written by that same code: these articles stored into a fresh store (schema
/// version 2), feed `https://example.com/feed.xml`, then closed (checkpointed). Never regenerate either with the
/// current code: they are the old implementation's word.
@Suite("Stored hashes survive the move to libxxhash")
struct StoredHashTests {
    static let feedURL = "https://example.com/feed.xml"

    /// Fixed articles (no random or clock-dependent field) that reach every branch of the encoding: each field type,
    /// every list column, Unicode, inputs shorter and longer than XXH64's 32-byte stripe, and all three key kinds.
    static let articles: [Article] = {
        var full = Article(id: "tag:example.com,2025:full", idSource: .atomID, feed: feedURL)
        full.title = "Hello <b>World</b> — Zürich"
        full.link = "https://example.com/full"
        full.published = Date(timeIntervalSince1970: 1_700_000_000)
        full.updated = Date(timeIntervalSince1970: 1_700_000_500.5)
        full.authors = [Person(name: "Ada", email: "ada@example.com", uri: "https://ada.example"), Person(name: "Grace")]
        full.summary = TextContent("Summary with \"quotes\", a tab\tand a newline\n", type: .text)
        full.content = TextContent("<p>Body \\ with a backslash and \u{1} a control character</p>", type: .html)
        full.categories = ["a", "b", "ünïcode"]
        full.enclosures = [Enclosure(url: "https://example.com/full.mp3", type: "audio/mpeg", length: 1234),
                           Enclosure(url: "https://example.com/full.ogg")]
        full.image = "https://example.com/full.png"
        full.comments = "https://example.com/full#comments"
        full.commentsFeed = "https://example.com/full/feed"
        full.commentCount = 7
        full.language = "de"
        var podcast = PodcastDetails()
        podcast.durationSeconds = 3601
        podcast.episode = 2
        podcast.season = 1
        podcast.explicit = false
        podcast.keywords = ["k1", "k2"]
        podcast.guid = "podcast-guid"
        podcast.chaptersURL = "https://example.com/chapters.json"
        podcast.transcripts = [Transcript(url: "https://example.com/t.vtt", type: "text/vtt", language: "en")]
        full.podcast = podcast

        var short = Article(id: "1", idSource: .guid, feed: feedURL)
        short.title = "x"

        var linkOnly = Article(id: "https://example.com/link-only", idSource: .link, feed: feedURL)
        linkOnly.link = "https://example.com/link-only"
        linkOnly.title = "Keyed by its link"
        linkOnly.publishedRaw = "sometime last week"
        linkOnly.content = TextContent(String(repeating: "0123456789abcdef", count: 40), type: .text)

        var hashed = Article(id: "", idSource: .hash, feed: feedURL)
        hashed.title = "No identifier and no link"
        hashed.published = Date(timeIntervalSince1970: 1_234_567_890.25)
        hashed.summary = TextContent("Only a summary, which the fallback key takes when there is no content", type: .text)

        var undated = Article(id: "", idSource: .hash, feed: feedURL)
        undated.title = "日本語のタイトル"
        undated.updatedRaw = "not a date"

        var empty = Article(id: "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66", idSource: .guid, feed: feedURL)
        empty.categories = []
        return [full, short, linkOnly, hashed, undated, empty]
    }()

    /// XXH64 content hashes of ``articles``, from the hand-written implementation.
    static let contentHashes: [UInt64] = [
        0x737F_6390_A743_AA19, 0x1D03_C842_0EB2_3D92, 0xB321_E072_94D0_C9D2, 0x096D_E6FB_8155_03E5, 0xA374_97F4_E8CA_93F0,
        0x16C6_D2FB_E3F8_9185,
    ]
    /// Fallback keys of ``articles``, from the hand-written implementation.
    static let fallbackKeys: [String] = [
        "hash:13fbc2fd3e6f3839", "hash:3a1fa93c4a555908", "hash:47455910b1cfc4b5", "hash:77d4610a8ffea629",
        "hash:511c37b590e39cfa", "hash:9125207856691260",
    ]
    /// Key hashes of the keys the store gave ``articles``, from the hand-written implementation.
    static let keyHashes: [Int64] = [
        1_821_549_405_438_285_647, -5_209_518_570_039_057_196, -8_693_017_283_102_579_525, -3_471_715_678_101_299_357,
        4_287_227_476_641_903_566, -3_272_551_379_353_760_229,
    ]

    @Test func contentHashesAreTheOldOnes() {
        #expect(Self.articles.map(ArticleHasher.contentHash(of:)) == Self.contentHashes)
    }

    @Test func fallbackKeysAreTheOldOnes() {
        #expect(Self.articles.map(ArticleHasher.fallbackKey(of:)) == Self.fallbackKeys)
    }

    @Test func aStoreWrittenBeforeReadsBackUnchanged() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/store-xxh64-v1.sqlite")
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        try FileManager.default.copyItem(atPath: source.path, toPath: path)

        // The stored hashes, as the old code wrote them.
        let raw = RawSQLite(path, readOnly: true)
        #expect(raw.strings("SELECT value FROM store_info WHERE name = 'content_hash'") == [ArticleHasher.version])
        let storedContent = raw.strings("SELECT content_hash FROM articles ORDER BY id").compactMap { Int64($0) }.map { UInt64(bitPattern: $0) }
        let storedKeys = raw.strings("SELECT key FROM articles ORDER BY id")
        let storedKeyHashes = raw.strings("SELECT key_hash FROM articles ORDER BY id").compactMap { Int64($0) }
        #expect(storedContent == Self.contentHashes)
        #expect(storedKeyHashes == Self.keyHashes)
        #expect(storedKeys.map(ArticleRow.keyHash) == storedKeyHashes, "the key index must find every stored key")

        // Ingesting the same articles again with the current code changes nothing.
        let store = try Store(path: path)
        let context = try store.makeContext()
        let feed = try context.feed(url: Self.feedURL)
        let (summary, stored) = try context.ingest(Self.articles, into: feed)
        #expect(stored.count == Self.articles.count)
        #expect(stored.allSatisfy { $0.change == .unchanged }, "\(stored.map(\.change))")
        #expect(summary.new == 0 && summary.updated == 0)
        for (index, record) in stored.enumerated() {
            let read = try #require(try context.article(record.id))
            #expect(read.contentHash == Self.contentHashes[index])
            #expect(read.article == Self.articles[index])
        }
    }
}

/// The details column (milestone 2's fields) joins the content hash only when an article has one of them, so articles
/// stored before it existed keep their hashes.
@Suite("Content hash: the details column")
struct DetailsHashTests {
    @Test func anArticleWithoutTheNewFieldsHashesAsBeforeAndOneWithThemDiffers() {
        var article = Article(id: "1", idSource: .guid, feed: "https://example.com/feed.xml")
        article.title = "Title"
        article.authors = [Person(name: "Ada")]
        article.enclosures = [Enclosure(url: "https://example.com/a.mp3", type: "audio/mpeg", length: 5)]
        let before = ArticleHasher.contentHash(of: article)
        var withLinks = article
        withLinks.links = [Link(href: "https://example.com/1")]
        #expect(ArticleHasher.contentHash(of: withLinks) != before)
        var withAvatar = article
        withAvatar.authors[0].avatar = "https://example.com/ada.png"
        #expect(ArticleHasher.contentHash(of: withAvatar) != before)
        var withEnclosureTitle = article
        withEnclosureTitle.enclosures[0].title = "Episode"
        #expect(ArticleHasher.contentHash(of: withEnclosureTitle) != before)
        // Each new field changes the hash on its own.
        var seen: Set<UInt64> = [before]
        for change in [{ (a: inout Article) in a.externalURL = "x" }, { $0.contentText = "x" }, { $0.bannerImage = "x" },
                       { $0.categoryDetails = [Category(term: "x")] }, { $0.contentSource = Link(href: "x") },
                       { $0.license = "x" }, { $0.rights = "x" }, { $0.contributors = [Person(name: "x")] }] {
            var changed = article
            change(&changed)
            #expect(seen.insert(ArticleHasher.contentHash(of: changed)).inserted)
        }
    }
}
