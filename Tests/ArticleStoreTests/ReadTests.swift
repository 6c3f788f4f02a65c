import ArticleStore
import Foundation
import Syndication
import Testing

/// The reads behind the offline commands: arrival filters, streaming, and read-only stores.
@Suite("ArticleStore reads")
struct ReadTests {
    /// Waits until the clock has moved past `date`, so stored times on either side of it differ.
    static func after(_ date: Date) {
        while Date() <= date { Thread.sleep(forTimeInterval: 0.002) }
    }

    @Test(arguments: Engine.allCases) func changedSinceSelectsWhatArrivedOrChangedWhateverTheArticlesClaim(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let context = fixture.context
        var ancient = makeArticle("ancient")
        ancient.published = Date(timeIntervalSince1970: 1_000)  // a feed's backfill claims an old date
        _ = try context.ingest([makeArticle("first"), makeArticle("edited"), ancient], into: fixture.feed)
        let cutoff = Date()
        Self.after(cutoff)
        var late = makeArticle("late")
        late.published = Date(timeIntervalSince1970: 500)  // arrives after the cutoff with an even older date
        _ = try context.ingest([makeArticle("first"), makeArticle("edited", version: 2), ancient, late], into: fixture.feed)

        let changed = try context.articles(ArticleQuery(changedSince: cutoff))
        #expect(Set(changed.map(\.article.id)) == ["edited", "late"])
        let edited = try #require(changed.first { $0.article.id == "edited" })
        #expect(edited.firstSeen < cutoff && edited.lastUpdated >= cutoff)
        let arrived = try #require(changed.first { $0.article.id == "late" })
        #expect(arrived.firstSeen >= cutoff)
        // Newest first by the articles' own dates, as without the filter.
        #expect(changed.map(\.article.id) == ["edited", "late"])
        #expect(try context.articles(ArticleQuery(changedSince: cutoff, limit: 1)).map(\.article.id) == ["edited"])
        // The article-date filter is a different question: "ancient" and "late" are old by their dates.
        #expect(try context.articles(ArticleQuery(since: Date(timeIntervalSince1970: 2_000))).map(\.article.id).sorted() == ["edited", "first"])
        #expect(try context.articles(ArticleQuery(feed: fixture.feed, changedSince: Date())).isEmpty)
        #expect(try context.articles(ArticleQuery(changedSince: Date(timeIntervalSince1970: 0))).count == 4)
    }

    @Test(arguments: Engine.allCases) func forEachArticleStreamsTheSameRowsAsArticles(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let context = fixture.context
        _ = try context.ingest((0..<50).map { makeArticle("a\($0)") }, into: fixture.feed)
        var streamed: [ArticleID] = []
        try context.forEachArticle(ArticleQuery(limit: 20)) { streamed.append($0.id) }
        #expect(streamed.count == 20)
        #expect(streamed == (try context.articles(ArticleQuery(limit: 20))).map(\.id))
        // The statement is reset afterwards: the same query runs again.
        var again = 0
        try context.forEachArticle(ArticleQuery()) { _ in again += 1 }
        #expect(again == 50)
    }

    @Test func aReadOnlyStoreReadsWhatAWriterCommitted() throws {
        let fixture = try Fixture()
        var metadata = FeedMetadata()
        metadata.title = "A & B"
        _ = try fixture.context.ingest([makeArticle("one"), makeArticle("two")], into: fixture.feed, success: FeedSuccess(metadata: metadata))
        var configuration = StoreConfiguration()
        configuration.access = .readOnly
        let reader = try Store(path: fixture.store.path, configuration: configuration).makeContext()
        #expect(try reader.articles().count == 2)
        let status = try #require(try reader.feedStatuses().first)
        #expect(status.title == "A & B" && status.articleCount == 2 && status.outcome == .updated)
        // A missing file is an error with read-only access, and nothing is created.
        let missing = fixture.directory.file("missing.sqlite")
        #expect(throws: StoreError.self) { try Store(path: missing, configuration: configuration) }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
