@testable import ArticleStore
import Foundation
import Syndication
import Testing

@Suite("Store: file, schema, dedupe, batches, status and reads")
struct StoreTests {
    @Test func newStoreIsAWALFeedingestDatabase() throws {
        let fixture = try Fixture()
        let raw = RawSQLite(fixture.store.path)
        #expect(raw.strings("PRAGMA journal_mode") == ["wal"])
        #expect(raw.integer("PRAGMA application_id") == 0x4664_496E)
        #expect(raw.integer("PRAGMA user_version") == Store.schemaVersion)
        #expect(raw.integer("PRAGMA page_size") == 8192)
        #expect(raw.strings("SELECT value FROM store_info WHERE name = 'content_hash'") == [ArticleHasher.version])
        let indexes = raw.strings("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'articles' ORDER BY name")
        #expect(indexes.contains("articles_by_date") && indexes.contains("articles_by_feed_date") && indexes.contains("articles_by_key"))
        let plan = raw.strings("EXPLAIN QUERY PLAN SELECT id FROM articles WHERE feed_id = 1 AND sort_date >= 0 ORDER BY sort_date DESC LIMIT 5", column: 3)
        #expect(plan.joined().contains("articles_by_feed_date"), "\(plan)")
        // Reopening is a no-op: same version, same data.
        _ = try Store(path: fixture.store.path)
        #expect(try fixture.context.integrityCheck().isEmpty)
    }

    @Test(arguments: Engine.allCases) func everyFieldRoundTrips(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        var article = Article(id: "tag:example.com,2025:1", idSource: .atomID, feed: "https://example.com/feed.xml")
        article.title = "Hello <b>World</b> — Zürich"
        article.link = "https://example.com/1"
        article.published = Date(timeIntervalSince1970: 1_700_000_000)
        article.updated = Date(timeIntervalSince1970: 1_700_000_500.5)
        article.updatedRaw = nil
        article.publishedRaw = nil
        article.authors = [Person(name: "Ada", email: "ada@example.com", uri: "https://ada.example", avatar: "https://ada.example/a.png")]
        article.summary = TextContent("Summary", type: .text)
        article.content = TextContent("<p>Body with \"quotes\" and \\ and \n</p>", type: .html)
        article.categories = ["a", "b"]
        article.enclosures = [Enclosure(url: "https://example.com/1.mp3", type: "audio/mpeg", length: 1234, title: "Part one",
                                        durationSeconds: 3_600)]
        article.image = "https://example.com/1.png"
        article.comments = "https://example.com/1#comments"
        article.commentsFeed = "https://example.com/1/feed"
        article.commentCount = 7
        article.language = "de"
        var podcast = PodcastDetails()
        podcast.durationSeconds = 60
        podcast.episode = 2
        podcast.season = 1
        podcast.explicit = true
        podcast.keywords = ["k"]
        podcast.guid = "pg"
        podcast.chaptersURL = "https://example.com/ch.json"
        podcast.transcripts = [Transcript(url: "https://example.com/t.vtt", type: "text/vtt", language: "en")]
        article.podcast = podcast
        // Milestone 2's fields, stored in the details column.
        article.externalURL = "https://elsewhere.example/story"
        article.contentText = "Body with \"quotes\""
        article.bannerImage = "https://example.com/banner.png"
        article.links = [Link(href: "https://example.com/1", rel: "alternate", type: "text/html", title: "One", hreflang: "de", length: 10),
                         Link(href: "https://example.com/1.pdf", rel: "enclosure")]
        article.categoryDetails = [Category(term: "a", scheme: "https://s.example/", label: "A"), Category(term: "b", parent: "a")]
        article.contentSource = Link(href: "https://example.com/1/full", type: "text/html")
        article.license = "https://creativecommons.org/licenses/by/4.0/"
        article.rights = "© 2025 Ada"
        article.contributors = [Person(name: "Grace"), Person(email: "ed@example.com")]
        var undated = Article(id: "", idSource: .hash, feed: "https://example.com/feed.xml")
        undated.title = "No date, no link, no id"
        undated.publishedRaw = "sometime last week"

        let (_, stored) = try fixture.context.ingest([article, undated], into: fixture.feed)
        #expect(stored.map(\.change) == [.new, .new])
        let record = try #require(try fixture.context.article(stored[0].id))
        #expect(record.article == article)
        #expect(record.key == "tag:example.com,2025:1" && record.keySource == "atom:id")
        #expect(record.contentHash == ArticleHasher.contentHash(of: article))
        #expect(record.date == article.published)
        let other = try #require(try fixture.context.article(stored[1].id))
        #expect(other.article == undated)
        #expect(other.keySource == "hash" && other.key == ArticleHasher.fallbackKey(of: undated))
        #expect(abs(other.date.timeIntervalSince(other.firstSeen)) < 0.001, "undated articles sort by first seen")
    }

    @Test(arguments: Engine.allCases) func dedupeReportsNewUpdatedAndUnchanged(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let context = fixture.context
        let first = try context.ingest((0..<5).map { makeArticle("a\($0)") }, into: fixture.feed)
        #expect(first.summary.new == 5 && first.summary.seen == 5)
        let ids = Dictionary(uniqueKeysWithValues: first.stored.map { ($0.article.id, $0.id) })

        var again = (0..<5).map { makeArticle("a\($0)") }
        again[1] = makeArticle("a1", version: 2)                 // content changed
        again[3].commentCount = 12                                // only the comment count changed
        again.append(makeArticle("a5"))                          // new
        let second = try context.ingest(again, into: fixture.feed)
        #expect((second.summary.new, second.summary.updated, second.summary.unchanged) == (1, 1, 4))
        let changes = Dictionary(uniqueKeysWithValues: second.stored.map { ($0.article.id, $0.change) })
        #expect(changes == ["a0": .unchanged, "a1": .updated, "a2": .unchanged, "a3": .unchanged, "a4": .unchanged, "a5": .new])
        for stored in second.stored where stored.article.id != "a5" {
            #expect(stored.id == ids[stored.article.id], "an article keeps its ArticleID when updated or unchanged")
        }
        #expect(try context.articleCount(feed: fixture.feed) == 6)
        let updated = try #require(try context.article(ids["a1"]!))
        #expect(updated.article.content == makeArticle("a1", version: 2).content)
        #expect(updated.lastUpdated >= updated.firstSeen)
        let counted = try #require(try context.article(ids["a3"]!))
        #expect(counted.article.commentCount == 12, "a new comment count is written silently")
        let status = try context.feedStatus(fixture.feed)
        #expect(status.articleCount == 6)
        #expect((status.lastFetchSeen, status.lastFetchNew, status.lastFetchUpdated) == (6, 1, 1))
    }

    @Test(arguments: Engine.allCases) func dedupeIsPerFeed(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let other = try fixture.context.feed(url: "https://other.example/feed.xml")
        _ = try fixture.context.ingest([makeArticle("same")], into: fixture.feed)
        let second = try fixture.context.ingest([makeArticle("same")], into: other)
        #expect(second.summary.new == 1, "the same guid in another feed is another article")
        #expect(try fixture.context.articleCount() == 2)
    }

    @Test(arguments: Engine.allCases) func keyRuleIdentifierThenLinkThenHash(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let context = fixture.context
        let byGuid = makeArticle("  guid-1 \n", link: "https://example.com/x")
        let emptyGuid = makeArticle("   ", link: "https://example.com/y")
        let byLink = makeArticle("https://example.com/z", link: "https://example.com/z", source: .link)
        var byHash = Article(id: "h", idSource: .hash, feed: "f")
        byHash.title = "Only a title"
        let (_, stored) = try context.ingest([byGuid, emptyGuid, byLink, byHash], into: fixture.feed)
        let records = try stored.map { try #require(try context.article($0.id)) }
        #expect(records.map(\.key) == ["guid-1", "https://example.com/y", "https://example.com/z", ArticleHasher.fallbackKey(of: byHash)])
        #expect(records.map(\.keySource) == ["guid", "link", "link", "hash"])
        // Surrounding white space does not make another article.
        let again = try context.ingest([makeArticle("guid-1", link: "https://example.com/x")], into: fixture.feed)
        #expect(again.summary.new == 0)
    }

    /// Feeds that put one constant in every guid fall back to the link (Miniflux, FreshRSS).
    @Test(arguments: Engine.allCases, [1, 256])
    func identicalGuidsFallBackToLinks(_ engine: Engine, batchSize: Int) throws {
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = batchSize  // 1: the first article is committed under its guid before the switch
        let fixture = try Fixture(engine: engine, configuration: configuration)
        let context = fixture.context
        let articles = (0..<4).map { makeArticle("https://example.com/feed", link: "https://example.com/post/\($0)", title: "Post \($0)") }
        let first = try context.ingest(articles, into: fixture.feed)
        #expect(first.summary.new == 4, "four different links are four articles")
        #expect(try context.articleCount(feed: fixture.feed) == 4)
        let records = try context.articles(ArticleQuery(feed: fixture.feed))
        #expect(Set(records.map(\.key)) == Set(articles.map { $0.link! }))
        #expect(Set(records.map(\.keySource)) == ["link"])
        #expect(Set(records.map(\.id)) == Set(first.stored.map(\.id)), "the first article keeps its ArticleID when re-keyed")
        #expect(try context.feedStatus(fixture.feed).keyMode == .link)
        // The decision is stored: the next run keys by link from the first article on.
        let second = try context.ingest(articles.reversed() + [makeArticle("https://example.com/feed", link: "https://example.com/post/9")],
                                        into: fixture.feed)
        #expect((second.summary.new, second.summary.unchanged) == (1, 4))
        #expect(try context.articleCount(feed: fixture.feed) == 5)
    }

    @Test(arguments: Engine.allCases) func aRepeatedItemIsNotAFeedWideConstant(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let item = makeArticle("g1", link: "https://example.com/1")
        let result = try fixture.context.ingest([item, item, makeArticle("g2")], into: fixture.feed)
        #expect((result.summary.new, result.summary.unchanged) == (2, 1))
        #expect(try fixture.context.feedStatus(fixture.feed).keyMode == .identifier)
    }

    @Test func batchesCommitEveryNArticlesAndAfterTheInterval() throws {
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = 3
        configuration.batchInterval = .seconds(3600)
        let fixture = try Fixture(configuration: configuration)
        let context = fixture.context
        let reader = try fixture.store.makeContext()
        try context.beginFeed(fixture.feed)
        var committed: [[StoredArticle]] = []
        for index in 0..<7 { committed.append(try context.store(makeArticle("b\(index)"), in: fixture.feed)) }
        #expect(committed.map(\.count) == [0, 0, 3, 0, 0, 3, 0])
        #expect(try reader.articleCount() == 6, "another connection sees committed batches at once")
        #expect(try context.commitIfDue().isEmpty, "the last article is neither a full batch nor old")
        let later = ContinuousClock.now.advanced(by: .seconds(7200))
        #expect(try context.commitIfDue(now: later).map(\.article.id) == ["b6"])
        #expect(try reader.articleCount() == 7)
        _ = try context.finishFeed(fixture.feed, FeedSuccess())
    }

    @Test func validatorsAreWrittenOnlyInTheFinalTransaction() throws {
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = 2
        let fixture = try Fixture(configuration: configuration)
        let context = fixture.context
        let reader = try fixture.store.makeContext()
        _ = try context.ingest([makeArticle("v0")], into: fixture.feed,
                               success: FeedSuccess(validators: FeedValidators(etag: "\"old\"", lastModified: "Mon", bodyHash: "h1")))
        try context.beginFeed(fixture.feed)
        for index in 1...5 { _ = try context.store(makeArticle("v\(index)"), in: fixture.feed) }
        #expect(try reader.articleCount() == 5, "batches are durable during the transfer")
        #expect(try reader.feedStatus(fixture.feed).validators.etag == "\"old\"", "but the validators are still the old ones")
        var metadata = FeedMetadata()
        metadata.title = "Example"
        metadata.link = "https://example.com/"
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let summary = try context.finishFeed(fixture.feed, FeedSuccess(validators: FeedValidators(etag: "\"new\""), currentURL: "https://example.com/moved.xml",
                                                                      metadata: metadata, date: date))
        #expect(summary.seen == 5 && summary.new == 5 && summary.committed.map(\.article.id) == ["v5"])
        let status = try reader.feedStatus(fixture.feed)
        #expect(status.validators == FeedValidators(etag: "\"new\""), "a fetch with content replaces every validator")
        #expect(status.currentURL == "https://example.com/moved.xml" && status.title == "Example" && status.homeLink == "https://example.com/")
        #expect(status.lastSuccess == date && status.lastAttempt == date && status.outcome == .updated && status.consecutiveFailures == 0)
        #expect(status.url == "https://example.com/feed.xml", "the listed URL stays")
    }

    static let withoutJitter: StoreConfiguration = {
        var configuration = StoreConfiguration()
        configuration.failureBackoffJitter = 0
        return configuration
    }()

    @Test(arguments: Engine.allCases) func failuresKeepValidatorsAndArticlesAndBackOff(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine, configuration: Self.withoutJitter)
        let context = fixture.context
        let success = Date(timeIntervalSince1970: 1_800_000_000)
        _ = try context.ingest([makeArticle("f0")], into: fixture.feed,
                               success: FeedSuccess(validators: FeedValidators(etag: "\"e\"", lastModified: "lm"), date: success))
        try context.beginFeed(fixture.feed)
        _ = try context.store(makeArticle("f1"), in: fixture.feed)
        let failedAt = Date(timeIntervalSince1970: 1_800_000_100)
        let summary = try context.failFeed(fixture.feed, FeedFailure(error: "connection reset", date: failedAt))
        #expect(summary.new == 1, "articles parsed before the error are kept")
        var status = try context.feedStatus(fixture.feed)
        #expect(status.validators == FeedValidators(etag: "\"e\"", lastModified: "lm"))
        #expect(status.outcome == .failed && status.error == "connection reset" && status.consecutiveFailures == 1)
        #expect(status.lastSuccess == success && status.lastAttempt == failedAt)
        #expect(status.nextFetch == failedAt.addingTimeInterval(300))
        try context.beginFeed(fixture.feed)
        _ = try context.failFeed(fixture.feed, FeedFailure(error: "again", date: failedAt))
        status = try context.feedStatus(fixture.feed)
        #expect(status.consecutiveFailures == 2 && status.nextFetch == failedAt.addingTimeInterval(600), "the backoff doubles")
        let retryAfter = Date(timeIntervalSince1970: 1_900_000_000)
        try context.beginFeed(fixture.feed)
        _ = try context.failFeed(fixture.feed, FeedFailure(error: "429", retryAfter: retryAfter, date: failedAt))
        #expect(try context.feedStatus(fixture.feed).nextFetch == retryAfter, "Retry-After wins")
        #expect(context.configuration.fetchPolicy.backoff.interval(afterFailures: 100) == 86_400, "capped")
        // A 304 resets the failures, keeps the old validators unless new ones come.
        try context.beginFeed(fixture.feed)
        _ = try context.finishFeed(fixture.feed, FeedSuccess(validators: FeedValidators(etag: "\"e2\""), notModified: true, date: retryAfter))
        status = try context.feedStatus(fixture.feed)
        #expect(status.validators == FeedValidators(etag: "\"e2\"", lastModified: "lm"))
        #expect(status.outcome == .notModified && status.consecutiveFailures == 0 && status.error == nil && status.nextFetch == nil)
    }

    @Test(arguments: Engine.allCases) func backoffWaitsAreSpreadSoFeedsThatFailedTogetherComeBackApart(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        var waits: [TimeInterval] = []
        for index in 0..<40 {
            let feed = try fixture.context.feed(url: "https://example.com/\(index).xml")
            try fixture.context.beginFeed(feed)
            _ = try fixture.context.failFeed(feed, FeedFailure(error: "down", date: at))
            waits.append(try #require(try fixture.context.feedStatus(feed).nextFetch).timeIntervalSince(at))
        }
        #expect(waits.allSatisfy { (270...330).contains($0) }, "300 s ± 10%: \(waits)")
        #expect(Set(waits).count > 30, "spread, not all at once")
    }

    @Test(arguments: Engine.allCases) func aRateLimitIsRecordedWithoutCountingAsAFailure(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine, configuration: Self.withoutJitter)
        let context = fixture.context
        let success = Date(timeIntervalSince1970: 1_800_000_000)
        _ = try context.ingest([makeArticle("r0")], into: fixture.feed, success: FeedSuccess(validators: FeedValidators(etag: "\"e\""), date: success))
        let at = Date(timeIntervalSince1970: 1_800_000_100)
        let retryAfter = Date(timeIntervalSince1970: 1_800_003_700)
        try context.beginFeed(fixture.feed)
        _ = try context.failFeed(fixture.feed, FeedFailure(error: "HTTP status 429", retryAfter: retryAfter, date: at, counts: false))
        var status = try context.feedStatus(fixture.feed)
        #expect(status.consecutiveFailures == 0 && status.outcome == .updated, "the outcome and failure count stay")
        #expect(status.isRateLimited)
        #expect(status.error == "HTTP status 429" && status.nextFetch == retryAfter && status.lastAttempt == at)
        #expect(status.validators.etag == "\"e\"" && status.lastSuccess == success)
        // Without Retry-After, the base backoff; a real failure after it still counts from zero.
        try context.beginFeed(fixture.feed)
        _ = try context.failFeed(fixture.feed, FeedFailure(error: "HTTP status 429", date: at, counts: false))
        #expect(try context.feedStatus(fixture.feed).nextFetch == at.addingTimeInterval(300))
        try context.beginFeed(fixture.feed)
        _ = try context.failFeed(fixture.feed, FeedFailure(error: "reset", date: at))
        status = try context.feedStatus(fixture.feed)
        #expect(status.consecutiveFailures == 1 && status.outcome == .failed && !status.isRateLimited)
    }

    @Test(arguments: Engine.allCases) func tagsAreStoredAndEmptyTagsKeepThem(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let context = fixture.context
        let other = try context.feed(url: "https://example.com/other.xml")
        try context.setTags([(fixture.feed, ["tech", "rust"]), (other, [])])
        #expect(try context.feedStatus(fixture.feed).tags == ["tech", "rust"])
        #expect(try context.feedStatus(other).tags == [])
        try context.setTags([(fixture.feed, [])])
        #expect(try context.feedStatus(fixture.feed).tags == ["tech", "rust"], "a list without tags keeps the stored ones")
        try context.setTags([(fixture.feed, ["news\u{1F}", "\u{1F}"])])
        #expect(try context.feedStatus(fixture.feed).tags == ["news"], "the separator cannot sneak in")
    }

    @Test func aVersion1StoreMigratesToTheCurrentSchemaKeepingItsData() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        do {
            // A feed and an article, written the way version 1 wrote them.
            _ = try Store(path: path, configuration: StoreConfiguration(), schema: Schema(migrations: [Schema.version1]))
        }
        let raw = RawSQLite(path)
        raw.execute("INSERT INTO feeds (url, created_at) VALUES ('https://example.com/feed.xml', 0)")
        raw.execute("""
            INSERT INTO articles (feed_id, key, key_hash, key_source, identifier, id_source, content_hash, sort_date, first_seen,
                                  last_updated)
            SELECT id, 'k', 1, 'identifier', 'a', 'guid', 2, 0, 0, 0 FROM feeds
            """)
        let store = try Store(path: path)
        #expect(raw.integer("PRAGMA user_version") == Store.schemaVersion)
        let context = try store.makeContext()
        #expect(try context.articleCount() == 1)
        let feed = try #require(try context.existingFeed(url: "https://example.com/feed.xml"))
        try context.setTags([(feed, ["kept"])])
        #expect(try context.feedStatuses().map(\.tags) == [["kept"]])
        #expect(try context.feedStatus(feed).host == nil, "version 4 added the host column, empty for old rows")
        #expect(try context.feeds(urls: ["https://example.com/feed.xml"]) == [feed])
        #expect(try context.feedStatus(feed).host == "example.com:443", "listing the feed again fills its host in")
    }

    @Test(arguments: Engine.allCases) func readsAreNewestFirstWithFeedSinceAndLimit(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let context = fixture.context
        let other = try context.feed(url: "https://other.example/feed.xml")
        func dated(_ id: String, _ seconds: Double, feed: String = "https://example.com/feed.xml") -> Article {
            var article = makeArticle(id, feed: feed)
            article.published = Date(timeIntervalSince1970: seconds)
            return article
        }
        _ = try context.ingest([dated("old", 1_000), dated("new", 3_000), dated("mid", 2_000)], into: fixture.feed)
        _ = try context.ingest([dated("other", 2_500, feed: "https://other.example/feed.xml")], into: other)
        #expect(try context.articles().map(\.article.id) == ["new", "other", "mid", "old"])
        #expect(try context.articles(ArticleQuery(feed: fixture.feed)).map(\.article.id) == ["new", "mid", "old"])
        #expect(try context.articles(ArticleQuery(since: Date(timeIntervalSince1970: 2_000))).map(\.article.id) == ["new", "other", "mid"])
        #expect(try context.articles(ArticleQuery(feed: fixture.feed, since: Date(timeIntervalSince1970: 1_500), limit: 1)).map(\.article.id) == ["new"])
        #expect(try context.articles(ArticleQuery(limit: 0)).isEmpty)
        #expect(try context.articles(ArticleQuery(feed: other)).first?.article.feed == "https://other.example/feed.xml")
        let statuses = try context.feedStatuses()
        #expect(statuses.map(\.url) == ["https://example.com/feed.xml", "https://other.example/feed.xml"])
        #expect(statuses.map(\.articleCount) == [3, 1])
        #expect(try context.existingFeed(url: "https://nowhere.example/") == nil)
        #expect(try context.feeds(urls: ["https://other.example/feed.xml", "https://example.com/feed.xml"]) == [other, fixture.feed])
    }

    @Test(arguments: Engine.allCases) func misuseIsATypedError(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let context = fixture.context
        let notStarted = try #require(throws: StoreError.self) { try context.store(makeArticle("x"), in: fixture.feed) }
        #expect(notStarted.kind == .feedNotStarted(fixture.feed))
        try context.beginFeed(fixture.feed)
        let twice = try #require(throws: StoreError.self) { try context.beginFeed(fixture.feed) }
        #expect(twice.kind == .feedAlreadyStarted(fixture.feed))
        let missing = FeedID(rawValue: 999)
        let unknown = try #require(throws: StoreError.self) { try context.beginFeed(missing) }
        #expect(unknown.kind == .unknownFeed(missing) && unknown.description.contains(fixture.store.path))
        _ = try context.store(makeArticle("pending"), in: fixture.feed)
        context.discardFeed(fixture.feed)
        #expect(context.activeFeeds.isEmpty)
        #expect(try context.articleCount() == 0, "a discarded feed's pending articles are not written")
    }

    /// The intended shape: one Store shared by worker threads, each with its own context; only IDs and values
    /// cross threads. Workers ingest overlapping feeds at once and every article is new exactly once.
    @Test func workerThreadsEachWithTheirOwnContext() async throws {
        let directory = TemporaryDirectory()
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = 8
        let store = try Store(path: directory.file("store.sqlite"), configuration: configuration)
        let urls = (0..<3).map { "https://example.com/\($0).xml" }
        let feedIDs = try store.makeContext().feeds(urls: urls)
        let newCounts = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<3 {
                group.addTask {
                    let context = try store.makeContext()  // made and used on this task only
                    var new = 0
                    for offset in 0..<3 {
                        let index = (worker + offset) % 3
                        let articles = (0..<60).map { makeArticle("t\(index)-\($0)", feed: urls[index]) }
                        new += try context.ingest(articles, into: feedIDs[index]).summary.new
                    }
                    return new
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(newCounts == 180, "each article is new exactly once across the workers")
        let context = try store.makeContext()
        #expect(try context.articleCount() == 180)
        #expect(try context.feedStatuses().map(\.articleCount) == [60, 60, 60])
    }

    @Test func migrationsRunForwardAndANewerSchemaIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        let version1 = Schema(migrations: [Schema.version1])
        let version2 = Schema(migrations: [Schema.version1, "ALTER TABLE feeds ADD COLUMN notes TEXT"])
        do {
            // Only statements version 1 knows: the feed row (the current code's reads and writes need the current schema).
            _ = try Store(path: path, configuration: StoreConfiguration(), schema: version1)
            RawSQLite(path).execute("INSERT INTO feeds (url, created_at) VALUES ('https://example.com/feed.xml', 0)")
        }
        let migrated = try Store(path: path, configuration: StoreConfiguration(), schema: version2)
        let raw = RawSQLite(path)
        #expect(raw.integer("PRAGMA user_version") == 2)
        #expect(raw.strings("SELECT name FROM pragma_table_info('feeds') WHERE name = 'notes'") == ["notes"])
        #expect(try migrated.makeContext().existingFeed(url: "https://example.com/feed.xml") != nil, "data survives the migration")
        let before = contents(path)
        let newer = try #require(throws: StoreError.self) { try Store(path: path, configuration: StoreConfiguration(), schema: version1) }
        #expect(newer.kind == .newerSchema(found: 2, supported: 1) && newer.description.contains(path))
        #expect(contents(path) == before)
    }
}
