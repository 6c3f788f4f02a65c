@testable import ArticleStore
import Foundation
import Syndication
import TestSupport
import Testing

/// The write-ahead log is checkpointed by the store's own thread (`Checkpointer`), not by the committing context.
@Suite("Store: checkpoints off the committing thread")
struct CheckpointTests {
    static func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// A new SQLite store at `path` whose checkpointer starts at `checkpointPages`, and that checkpointer.
    static func store(at path: String, checkpointPages: Int) throws -> (Store, Checkpointer) {
        var configuration = StoreConfiguration()
        configuration.walAutocheckpointPages = checkpointPages
        let store = try Store(path: path, configuration: configuration)
        return (store, try #require((store.engine as? SQLiteEngine)?.checkpointer))
    }

    /// Stores `count` articles of ~1.6 KB in commits of 500; returns the log's largest size after a commit.
    static func fill(_ context: StoreContext, feed: FeedID, count: Int, path: String) throws -> Int {
        try context.beginFeed(feed)
        var largest = 0
        for index in 0..<count {
            _ = try context.store(ProbeData.article(feed: 0, index: index), in: feed)
            if index % 500 == 499 {
                _ = try context.commit()
                largest = max(largest, fileSize(path + "-wal"))
            }
        }
        _ = try context.finishFeed(feed, FeedSuccess())
        return largest
    }

    /// With a 64-page threshold, 6,000 articles (~10 MB) leave a log a fraction of the database's size: the
    /// checkpointer copied it while the context committed, and the log started over. The same run with checkpoints off
    /// leaves everything in the log. Closing the last context checkpoints the rest and removes the log.
    @Test func theStoresThreadCheckpointsWhileTheContextCommits() throws {
        var configuration = StoreConfiguration()
        configuration.walAutocheckpointPages = 64
        let fixture = try Fixture(configuration: configuration)
        let checkpointer = try #require((fixture.store.engine as? SQLiteEngine)?.checkpointer)
        #expect(checkpointer.thresholdPages == 64)
        let largest = try Self.fill(fixture.context, feed: fixture.feed, count: 6_000, path: fixture.location)
        // The checkpointer's thread runs when it is scheduled: wait (bounded) for it to catch up before measuring.
        let deadline = ContinuousClock.now + .seconds(20)
        while (checkpointer.checkpoints == 0 || !checkpointer.isIdle) && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(checkpointer.checkpoints > 0)
        let database = Self.fileSize(fixture.location)
        #expect(database > 6_000 * 1_000, "the articles reached the database file (\(database) bytes)")
        #expect(largest < database / 2, "the log peaked at \(largest) bytes, the database is \(database)")
        // However far behind the thread falls (a loaded machine), the committing context checkpoints past four times the
        // threshold: the log never holds much more than that and one commit (500 articles, ~0.8 MB).
        #expect(largest < 4 * 64 * 8192 + 2_000_000, "the log peaked at \(largest) bytes")

        var off = StoreConfiguration()
        off.walAutocheckpointPages = 0
        let control = try Fixture(configuration: off)
        #expect((control.store.engine as? SQLiteEngine)?.checkpointer == nil)
        let controlLargest = try Self.fill(control.context, feed: control.feed, count: 6_000, path: control.location)
        #expect(controlLargest > Self.fileSize(control.location), "without checkpoints the log holds everything")

        #expect(try fixture.context.articleCount(feed: fixture.feed) == 6_000)
    }

    /// The store's last context closing ends the checkpointer's thread and leaves a complete database: no log, every
    /// article, a clean integrity check, as a fresh connection sees it.
    @Test func closingTheLastContextLeavesNoLogAndEveryArticle() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        var configuration = StoreConfiguration()
        configuration.walAutocheckpointPages = 64
        do {
            let store = try Store(path: path, configuration: configuration)
            let context = try store.makeContext()
            let feed = try context.feed(url: "https://example.com/feed.xml")
            _ = try Self.fill(context, feed: feed, count: 3_000, path: path)
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the last connection checkpointed and removed the log")
        let raw = RawSQLite(path)
        #expect(raw.strings("PRAGMA integrity_check") == ["ok"])
        #expect(raw.integer("SELECT count(*) FROM articles") == 3_000)
    }

    /// The committing connection checkpoints itself only once the log holds four times the threshold.
    @Test func theCommitterCheckpointsOnlyWhenTheThreadIsFarBehind() throws {
        let directory = TemporaryDirectory()
        var configuration = StoreConfiguration()
        configuration.walAutocheckpointPages = 100
        let checkpointer = Checkpointer(path: directory.file("none.sqlite"), configuration: configuration)
        #expect(checkpointer.lagPages == 400)
        #expect(!checkpointer.walHolds(pages: 99) && !checkpointer.walHolds(pages: 399))  // no connection: nothing starts
        #expect(checkpointer.walHolds(pages: 400))
        #expect(!checkpointer.isIdle, "the committer's checkpoint holds the thread off")
        checkpointer.committerCheckpointEnded()
        #expect(checkpointer.walHolds(pages: 5_000))
        checkpointer.committerCheckpointEnded()
        #expect(checkpointer.lagCheckpoints == 2 && checkpointer.checkpoints == 0 && checkpointer.isIdle)
    }

    /// The thread ends with the store's last context and starts again for the next one, even when it ended with a
    /// checkpoint due.
    @Test func theThreadStartsAgainForALaterContext() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        let (store, checkpointer) = try Self.store(at: path, checkpointPages: 64)
        var counts: [Int] = []
        for round in 0..<3 {
            do {
                let context = try store.makeContext()
                let feed = try context.feed(url: "https://example.com/\(round).xml")
                _ = try Self.fill(context, feed: feed, count: 1_500, path: path)
                let deadline = ContinuousClock.now + .seconds(20)
                while checkpointer.checkpoints == counts.last ?? 0 && ContinuousClock.now < deadline { usleep(10_000) }
                counts.append(checkpointer.checkpoints)
                // A checkpoint due as the context goes: the thread sees the stop first and ends with it still due.
                #expect(!checkpointer.walHolds(pages: 64))
            }
            // The context is gone: so is the thread, whatever was due.
            #expect(checkpointer.isIdle)
        }
        #expect(counts[0] > 0 && counts[1] > counts[0] && counts[2] > counts[1], "\(counts)")
    }

    static func fileNumber(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int) ?? nil
    }

    /// A new store's first context takes the connection that made the schema, so no connection closes in between:
    /// the log made then is neither checkpointed and removed nor made again. Once that context goes, the store has no
    /// connection left, so the log goes with it; a later context opens a connection of its own.
    @Test func theFirstContextTakesTheConnectionThatPreparedTheStore() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        let log = path + "-wal"
        let store = try Store(path: path)
        let made = try #require(Self.fileNumber(log), "the schema's log is still there: its connection is open")
        do {
            let context = try store.makeContext()
            let feed = try context.feed(url: "https://example.com/feed.xml")
            _ = try context.ingest([makeArticle("one")], into: feed)
            #expect(Self.fileNumber(log) == made, "the same log, not a new one")
        }
        #expect(!FileManager.default.fileExists(atPath: log), "the first context's connection was the store's last")
        let later = try store.makeContext()
        #expect(try later.feeds(urls: ["https://example.com/feed.xml"]).count == 1)
        #expect(try later.articleCount(feed: later.feeds(urls: ["https://example.com/feed.xml"])[0]) == 1)
        #expect(RawSQLite(path).strings("PRAGMA integrity_check") == ["ok"])
    }

    /// The ingest pipeline keeps its planning context, the first of the store's and so on the connection that prepared
    /// the file, open for the whole run (so that its close is not the store's last before the workers open theirs).
    /// Idle after planning, it holds no snapshot: the checkpointer still copies the log and starts it over while another
    /// context commits 6,000 articles, as with no second context. (A reader holding a transaction open instead makes
    /// the log reach ~14 MB here.)
    @Test func anIdleContextThatPlannedHoldsNoCheckpointBack() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        let (store, checkpointer) = try Self.store(at: path, checkpointPages: 64)
        let planning = try store.makeContext()
        let urls = ["https://example.com/feed.xml", "https://example.com/other.xml"]
        let ids = try planning.feeds(urls: urls)
        try planning.setTags(ids.map { ($0, ["news"]) })
        #expect(try planning.feedStatuses(ids).count == 2)
        let writer = try store.makeContext()
        let largest = try Self.fill(writer, feed: ids[0], count: 6_000, path: path)
        let deadline = ContinuousClock.now + .seconds(20)
        while (checkpointer.checkpoints == 0 || !checkpointer.isIdle) && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(checkpointer.checkpoints > 0)
        #expect(largest < 4 * 64 * 8192 + 2_000_000, "the log peaked at \(largest) bytes")
        #expect(try planning.feedStatuses(ids).count == 2, "the planning context still works")
        #expect(try planning.articleCount(feed: ids[0]) == 6_000)
    }

    /// The preparing connection goes to the first context only while the path still names the file it opened: a store
    /// file moved away before the first context is reported missing, as a fresh open reports it, not written through
    /// the old connection.
    @Test func theFirstContextOpensAgainWhenTheFileWasMovedAway() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        let store = try Store(path: path)
        try FileManager.default.moveItem(atPath: path, toPath: directory.file("moved.sqlite"))
        #expect(throws: StoreError.self) { _ = try store.makeContext() }
        #expect(!FileManager.default.fileExists(atPath: path), "nothing was created in its place")
    }

    /// A read-only store writes nothing, so it has no checkpointer.
    @Test func aReadOnlyStoreHasNoCheckpointer() throws {
        let fixture = try Fixture()
        var configuration = StoreConfiguration()
        configuration.access = .readOnly
        let reader = try Store(path: fixture.location, configuration: configuration)
        #expect((reader.engine as? SQLiteEngine)?.checkpointer == nil)
    }
}
