import ArticleStore
import Foundation
import Syndication
import Testing

/// A feed that begins empty on SQLite has its articles inserted without a lookup of their keys, for as long as its stored
/// articles are exactly the ones its session inserted (issue 18). Every other case looks each key up, and in no case is
/// a key stored twice.
@Suite("Store: inserts without a lookup into a feed that began empty")
struct UncheckedInsertTests {
    /// Keys stored more than once in a feed, read from the file by a connection of its own.
    static func duplicateKeys(_ fixture: Fixture) -> [String] {
        RawSQLite(fixture.location).strings("SELECT key FROM articles GROUP BY feed_id, key HAVING count(*) > 1")
    }

    static func configuration(batch: Int) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = batch
        configuration.batchInterval = .seconds(3600)
        return configuration
    }

    /// Repeats within a batch and across batches are looked up and found, with the first insert's ArticleID; only the
    /// first sighting of each key skips the lookup, and only on SQLite (PostgreSQL's upsert looks up by itself).
    @Test(arguments: Engine.allCases) func repeatsWithinAndAcrossBatchesAreFound(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine, configuration: Self.configuration(batch: 3))
        // Batches of three: a0 a1 a0 | a2 a1 a3 | a4 a4(changed) a5 | a0 (committed by finishFeed).
        let ids = ["a0", "a1", "a0", "a2", "a1", "a3", "a4", "a4", "a5", "a0"]
        let articles = ids.enumerated().map { index, id in makeArticle(id, version: index == 7 ? 2 : 1) }
        let (summary, stored) = try fixture.context.ingest(articles, into: fixture.feed)
        #expect(stored.map(\.change) == [.new, .new, .unchanged, .new, .unchanged, .new, .new, .updated, .new, .unchanged])
        #expect((summary.new, summary.updated, summary.unchanged) == (6, 1, 3))
        var first: [String: ArticleID] = [:]
        for article in stored {
            if let id = first[article.article.id] {
                #expect(article.id == id, "\(article.article.id) keeps its first ArticleID")
            } else {
                first[article.article.id] = article.id
            }
        }
        #expect(try fixture.context.articleCount(feed: fixture.feed) == 6)
        #expect(try fixture.context.feedStatus(fixture.feed).articleCount == 6)
        #expect(fixture.context.insertsWithoutLookup == (engine == .sqlite ? 6 : 0))
        if engine == .sqlite { #expect(Self.duplicateKeys(fixture).isEmpty) }
    }

    /// Two writers that began the same empty feed: the one that commits second finds the other's articles (the feed's
    /// count is not its own) and looks every key up from then on.
    @Test func anotherWritersArticlesEndTheShortcut() throws {
        let fixture = try Fixture(configuration: Self.configuration(batch: 2))
        let other = try fixture.store.makeContext()
        try fixture.context.beginFeed(fixture.feed)
        try other.beginFeed(fixture.feed)
        // This context's first batch goes in unchecked.
        var mine = try fixture.context.store(makeArticle("c1"), in: fixture.feed)
        mine += try fixture.context.store(makeArticle("c2"), in: fixture.feed)
        #expect(mine.map(\.change) == [.new, .new])
        #expect(fixture.context.insertsWithoutLookup == 2)
        // The other writer began the feed empty too, but its first batch finds two articles it did not store.
        var theirs = try other.store(makeArticle("c2"), in: fixture.feed)
        theirs += try other.store(makeArticle("d1"), in: fixture.feed)
        #expect(theirs.map(\.change) == [.unchanged, .new])
        #expect(other.insertsWithoutLookup == 0)
        // Now the feed holds an article this context did not store: its next batch looks up d1 and finds it.
        mine = try fixture.context.store(makeArticle("d1"), in: fixture.feed)
        mine += try fixture.context.store(makeArticle("e1"), in: fixture.feed)
        #expect(mine.map(\.change) == [.unchanged, .new])
        #expect(fixture.context.insertsWithoutLookup == 2)
        _ = try other.finishFeed(fixture.feed, FeedSuccess())
        _ = try fixture.context.finishFeed(fixture.feed, FeedSuccess())
        #expect(Self.duplicateKeys(fixture).isEmpty)
        #expect(try fixture.context.articleCount(feed: fixture.feed) == 4)
        #expect(try fixture.context.feedStatus(fixture.feed).articleCount == 4)
    }

    /// A feed that already holds articles when its session begins is looked up article by article.
    @Test func aFeedWithArticlesIsLookedUp() throws {
        let fixture = try Fixture(configuration: Self.configuration(batch: 2))
        _ = try fixture.context.ingest([makeArticle("x1"), makeArticle("x2")], into: fixture.feed)
        #expect(fixture.context.insertsWithoutLookup == 2)
        let again = try fixture.context.ingest([makeArticle("x1"), makeArticle("x3"), makeArticle("x2", version: 2)], into: fixture.feed)
        #expect(again.stored.map(\.change) == [.unchanged, .new, .updated])
        #expect(fixture.context.insertsWithoutLookup == 2, "no insert of the second run skipped its lookup")
        #expect(Self.duplicateKeys(fixture).isEmpty)
    }

    /// The feed's count says zero but the feed has articles (the file was edited by hand): the first batch counts the
    /// rows themselves, finds them, and looks every key up.
    @Test func aWrongCountDoesNotStartTheShortcut() throws {
        let fixture = try Fixture(configuration: Self.configuration(batch: 2))
        _ = try fixture.context.ingest([makeArticle("y1"), makeArticle("y2")], into: fixture.feed)
        #expect(RawSQLite(fixture.location).execute("UPDATE feeds SET article_count = 0") == 0)
        let context = try fixture.store.makeContext()
        let again = try context.ingest([makeArticle("y1"), makeArticle("y3")], into: fixture.feed)
        #expect(again.stored.map(\.change) == [.unchanged, .new])
        #expect(context.insertsWithoutLookup == 0)
        #expect(Self.duplicateKeys(fixture).isEmpty)
    }

    /// Items that share one guid switch the feed to link keys and re-key what was stored: from the switch on, every key
    /// is looked up.
    @Test func theSwitchToLinkKeysEndsTheShortcut() throws {
        let fixture = try Fixture(configuration: Self.configuration(batch: 1))
        let articles = (0..<4).map { makeArticle("https://example.com/feed", link: "https://example.com/post/\($0)") }
        let (summary, _) = try fixture.context.ingest(articles + [articles[2]], into: fixture.feed)
        #expect((summary.new, summary.unchanged) == (4, 1))
        #expect(fixture.context.insertsWithoutLookup == 1, "only the first article, committed before the switch")
        #expect(try fixture.context.feedStatus(fixture.feed).keyMode == .link)
        #expect(Self.duplicateKeys(fixture).isEmpty)
        #expect(try fixture.context.articleCount(feed: fixture.feed) == 4)
    }

    /// Past the limit a session goes back to lookups, and its set of key hashes is dropped.
    @Test func pastTheLimitKeysAreLookedUpAgain() throws {
        let fixture = try Fixture(configuration: Self.configuration(batch: 2))
        fixture.context.uncheckedInsertLimit = 4
        let ids = (0..<8).map { "z\($0)" } + ["z1", "z6"]
        let (summary, _) = try fixture.context.ingest(ids.map { makeArticle($0) }, into: fixture.feed)
        #expect((summary.new, summary.unchanged) == (8, 2))
        #expect(fixture.context.insertsWithoutLookup == 4)
        #expect(Self.duplicateKeys(fixture).isEmpty)
    }

    /// A batch that fails after some of its articles were written is rolled back with the session as it was: the retry
    /// inserts them again, unchecked, and a later repeat still finds them.
    @Test func aFailedBatchIsRetriedWithoutStoringAKeyTwice() throws {
        let fixture = try Fixture(configuration: Self.configuration(batch: 2))
        try fixture.context.beginFeed(fixture.feed)
        _ = try fixture.context.store(makeArticle("r0"), in: fixture.feed)
        #expect(try fixture.context.store(makeArticle("r1"), in: fixture.feed).map(\.change) == [.new, .new])
        // A trigger of another connection makes the insert of r3 fail, after r2's went in, in the same transaction.
        let raw = RawSQLite(fixture.location)
        #expect(raw.execute("""
            CREATE TRIGGER refuse_r3 BEFORE INSERT ON articles WHEN NEW.key = 'r3' BEGIN SELECT RAISE(ABORT, 'refused'); END
            """) == 0)
        _ = try fixture.context.store(makeArticle("r2"), in: fixture.feed)
        #expect(throws: StoreError.self) { try fixture.context.store(makeArticle("r3"), in: fixture.feed) }
        #expect(fixture.context.insertsWithoutLookup == 4)
        #expect(try fixture.context.articleCount(feed: fixture.feed) == 2, "the failed batch was rolled back")
        #expect(raw.execute("DROP TRIGGER refuse_r3") == 0)
        let retried = try fixture.context.commit()
        #expect(retried.map(\.change) == [.new, .new])
        #expect(retried.map(\.article.id) == ["r2", "r3"], "the failed batch's articles, whole, were still pending")
        #expect(fixture.context.insertsWithoutLookup == 6, "the retry inserted r2 and r3 unchecked again")
        #expect(try fixture.context.store(makeArticle("r2"), in: fixture.feed).isEmpty)
        let summary = try fixture.context.finishFeed(fixture.feed, FeedSuccess())
        #expect(summary.committed.map(\.change) == [.unchanged])
        #expect((summary.new, summary.unchanged) == (4, 1))
        #expect(Self.duplicateKeys(fixture).isEmpty)
        #expect(try fixture.context.articleCount(feed: fixture.feed) == 4)
        #expect(RawSQLite(fixture.location).strings("SELECT key FROM articles ORDER BY id") == ["r0", "r1", "r2", "r3"])
    }

    /// Two feeds committed in one transaction: each returned article carries its own ArticleID and change (the
    /// identifiers of both feeds' writes sit in one list, one range per feed), and each feed keeps its own keys.
    @Test func twoFeedsInOneCommitGetTheirOwnIdentifiers() throws {
        let fixture = try Fixture(configuration: Self.configuration(batch: 100))
        let context = fixture.context
        let other = try context.feed(url: "https://other.example/feed.xml")
        try context.beginFeed(fixture.feed)
        try context.beginFeed(other)
        for (id, feed) in [("s1", fixture.feed), ("t1", other), ("s2", fixture.feed), ("s1", fixture.feed), ("t1", other), ("s1", other)] {
            #expect(try context.store(makeArticle(id), in: feed).isEmpty)
        }
        let committed = try context.commit()
        #expect(committed.map { "\($0.feed == other ? "other" : "feed") \($0.article.id) \($0.change)" }.sorted()
                == ["feed s1 new", "feed s1 unchanged", "feed s2 new", "other s1 new", "other t1 new", "other t1 unchanged"])
        #expect(context.insertsWithoutLookup == 4)
        for stored in committed {
            let record = try #require(try context.article(stored.id))
            #expect(record.article.id == stored.article.id && record.feed == stored.feed, "\(stored.article.id)")
        }
        #expect(Set(committed.map(\.id)).count == 4)
        // The next batch of each feed still knows its own keys.
        #expect(try context.store(makeArticle("t1"), in: other).isEmpty)
        #expect(try context.store(makeArticle("s3"), in: fixture.feed).isEmpty)
        #expect(try context.commit().map(\.change) == [.new, .unchanged])
        #expect(context.insertsWithoutLookup == 5)
        _ = try context.finishFeed(fixture.feed, FeedSuccess())
        _ = try context.finishFeed(other, FeedSuccess())
        #expect(Self.duplicateKeys(fixture).isEmpty)
        #expect(try context.articleCount(feed: fixture.feed) == 3)
        #expect(try context.articleCount(feed: other) == 2)
    }

    /// A final transaction that fails leaves the session's last batch pending; a failFeed afterwards commits it.
    @Test func aFailedFinishLeavesTheBatchForFailFeed() throws {
        let fixture = try Fixture(configuration: Self.configuration(batch: 100))
        let raw = RawSQLite(fixture.location)
        try fixture.context.beginFeed(fixture.feed)
        for id in ["f1", "f2", "f1"] { _ = try fixture.context.store(makeArticle(id), in: fixture.feed) }
        #expect(raw.execute("""
            CREATE TRIGGER refuse_f2 BEFORE INSERT ON articles WHEN NEW.key = 'f2' BEGIN SELECT RAISE(ABORT, 'refused'); END
            """) == 0)
        #expect(throws: StoreError.self) { try fixture.context.finishFeed(fixture.feed, FeedSuccess()) }
        #expect(fixture.context.activeFeeds == [fixture.feed], "the feed is still being ingested")
        #expect(raw.execute("DROP TRIGGER refuse_f2") == 0)
        let summary = try fixture.context.failFeed(fixture.feed, FeedFailure(error: "the fetch failed after all"))
        #expect(summary.committed.map(\.change) == [.new, .new, .unchanged])
        #expect(summary.committed.map(\.article.id) == ["f1", "f2", "f1"])
        #expect((summary.seen, summary.new, summary.unchanged) == (3, 2, 1))
        #expect(fixture.context.activeFeeds.isEmpty)
        #expect(Self.duplicateKeys(fixture).isEmpty)
        #expect(try fixture.context.articleCount(feed: fixture.feed) == 2)
        #expect(try fixture.context.feedStatus(fixture.feed).articleCount == 2)
    }
}
