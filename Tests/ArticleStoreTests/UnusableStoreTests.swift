import ArticleStore
import Foundation
import Syndication
import Testing

/// Unusable stores, for real: immutable files and directories (`chattr +i`, which holds for root, unlike
/// permission bits), files that are not feedingest stores, a newer schema, a full disk (a small tmpfs, and
/// `max_page_count`) and a writer that holds the lock. Each must fail with an error naming the path, and leave
/// what was stored intact.
@Suite("Unusable stores")
struct UnusableStoreTests {
    /// A store at `path` with `count` articles in one finished feed, all connections closed.
    private func makeStore(at path: String, count: Int = 20) throws {
        let store = try Store(path: path)
        let context = try store.makeContext()
        _ = try context.ingest((0..<count).map { makeArticle("kept-\($0)") }, into: try context.feed(url: "https://example.com/feed.xml"),
                               success: FeedSuccess(validators: FeedValidators(etag: "\"kept\"")))
    }

    /// Checks that the store at `path` still holds exactly the articles `makeStore` wrote, and is sound.
    private func expectIntact(_ path: String, count: Int = 20, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var configuration = StoreConfiguration()
        configuration.access = .readOnly
        let context = try Store(path: path, configuration: configuration).makeContext()
        #expect(try context.integrityCheck().isEmpty, sourceLocation: sourceLocation)
        #expect(try context.articleCount() == count, sourceLocation: sourceLocation)
        let feed = try #require(try context.existingFeed(url: "https://example.com/feed.xml"), sourceLocation: sourceLocation)
        #expect(try context.feedStatus(feed).validators.etag == "\"kept\"", sourceLocation: sourceLocation)
    }

    @Test func aFileThatIsNotSQLiteIsRefusedAndUntouched() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("notes.txt")
        let text = Data(String(repeating: "These are my notes, not a database.\n", count: 200).utf8)
        try text.write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: StoreError.self) { try Store(path: path) }
        #expect(error.kind == .notAFeedingestStore, "\(error)")
        #expect(error.code.primary == .notADatabase)
        #expect(error.description.contains(path) && error.description.contains("not an SQLite database"), "\(error)")
        #expect(contents(path) == text)
    }

    @Test func anotherApplicationsDatabaseIsRefusedAndUntouched() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("other.db")
        do {
            let raw = RawSQLite(path)
            raw.execute("PRAGMA application_id = 42; CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada')")
        }
        let before = contents(path)
        let error = try #require(throws: StoreError.self) { try Store(path: path) }
        #expect(error.kind == .notAFeedingestStore)
        #expect(error.description.contains(path) && error.description.contains("another application"), "\(error)")
        #expect(contents(path) == before)
        #expect(RawSQLite(path).strings("PRAGMA journal_mode") == ["delete"], "not even switched to WAL")
        // Without an application id, tables alone make it someone else's database too.
        let plain = directory.file("plain.db")
        RawSQLite(plain).execute("CREATE TABLE t (x)")
        #expect(throws: StoreError.self) { try Store(path: plain) }
    }

    @Test func aNewerSchemaIsRefusedAndUntouched() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        try makeStore(at: path)
        RawSQLite(path).execute("PRAGMA user_version = \(Store.schemaVersion + 1)")
        let before = contents(path)
        let error = try #require(throws: StoreError.self) { try Store(path: path) }
        #expect(error.kind == .newerSchema(found: Store.schemaVersion + 1, supported: Store.schemaVersion))
        #expect(error.description.contains(path) && error.description.contains("newer feedingest"), "\(error)")
        #expect(contents(path) == before)
    }

    @Test(.enabled(if: immutableFlagWorks, "needs chattr +i (root, ext4-like file system)"))
    func anImmutableStoreFileIsReportedReadOnlyAndStillReadable() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        try makeStore(at: path)
        #expect(try run("/usr/bin/chattr", "+i", path).status == 0)
        defer { _ = try? run("/usr/bin/chattr", "-i", path) }
        let before = contents(path)
        let error = try #require(throws: StoreError.self) { try Store(path: path) }
        #expect(error.kind == .readOnly, "\(error)")
        #expect(error.description.contains(path) && error.description.contains("read-only"), "\(error)")
        // Read-only access still reads it, so offline commands work.
        try expectIntact(path)
        #expect(contents(path) == before)
    }

    @Test(.enabled(if: immutableFlagWorks, "needs chattr +i (root, ext4-like file system)"))
    func anUnwritableDirectoryFailsClearlyForANewAndAnExistingStore() throws {
        let directory = TemporaryDirectory()
        let existing = directory.file("store.sqlite")
        try makeStore(at: existing)
        #expect(try run("/usr/bin/chattr", "+i", directory.path).status == 0)
        defer { _ = try? run("/usr/bin/chattr", "-i", directory.path) }

        let new = directory.file("new.sqlite")
        let creating = try #require(throws: StoreError.self) { try Store(path: new) }
        #expect(creating.code.primary == .cantOpen, "\(creating)")
        #expect(creating.description.contains(new) && creating.description.contains("not writable"), "\(creating)")
        #expect(!FileManager.default.fileExists(atPath: new))

        // The existing store's file is writable, but its -wal and -shm cannot be created beside it.
        let before = contents(existing)
        let opening = try #require(throws: StoreError.self) { try Store(path: existing) }
        #expect(opening.description.contains(existing) && opening.description.contains("-wal"), "\(opening)")
        #expect([.cantOpen, .readOnly].contains(opening.code.primary), "\(opening)")
        #expect(contents(existing) == before)
        _ = try run("/usr/bin/chattr", "-i", directory.path)
        try expectIntact(existing)
    }

    @Test func aFullStoreFailsTheBatchAndKeepsWhatWasCommitted() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        try makeStore(at: path)
        let pages = RawSQLite(path).integer("PRAGMA page_count")
        var configuration = StoreConfiguration()
        configuration.maximumPageCount = pages + 40
        configuration.commitBatchSize = 5
        let context = try Store(path: path, configuration: configuration).makeContext()
        let feed = try context.feed(url: "https://example.com/big.xml")
        try context.beginFeed(feed)
        var committed = 0
        var failure: StoreError?
        for index in 0..<2_000 {
            var article = makeArticle("big-\(index)", feed: "https://example.com/big.xml")
            article.content = TextContent(String(repeating: "x", count: 4_000), type: .text)
            do { committed += try context.store(article, in: feed).count } catch { failure = error; break }
        }
        let error = try #require(failure, "the store never filled up")
        #expect(error.code.primary == .full, "\(error)")
        #expect(error.description.contains(path) && error.description.contains("full"), "\(error)")
        #expect(committed > 0, "batches before the limit were committed")
        #expect(try context.articleCount(feed: feed) == committed, "the failed batch left nothing behind")
        #expect(try context.integrityCheck().isEmpty)
        context.discardFeed(feed)
        try expectIntact(path, count: 20 + committed)
    }

    @Test(.enabled(if: canMountTmpfs, "needs to mount a tmpfs (root)"))
    func aFullDiskFailsTheBatchKeepsTheStoreAndRecoversWhenSpaceReturns() throws {
        let directory = TemporaryDirectory()
        #expect(try run("/usr/bin/mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", directory.path).status == 0)
        defer { _ = try? run("/usr/bin/umount", "-l", directory.path) }
        let path = directory.file("store.sqlite")
        try makeStore(at: path)
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = 10
        let context = try Store(path: path, configuration: configuration).makeContext()
        let feed = try context.feed(url: "https://example.com/big.xml")

        // Keep some space aside to give back later; then ingest until the file system is full.
        let reserve = directory.file("reserve")
        try Data(count: 256 * 1024).write(to: URL(fileURLWithPath: reserve))

        try context.beginFeed(feed)
        var committed = 0
        var failure: StoreError?
        for index in 0..<5_000 {
            var article = makeArticle("big-\(index)", feed: "https://example.com/big.xml")
            article.content = TextContent(String(repeating: "y", count: 3_000), type: .text)
            do { committed += try context.store(article, in: feed).count } catch { failure = error; break }
        }
        let error = try #require(failure, "the disk never filled up")
        #expect(error.code.primary == .full, "\(error)")
        #expect(error.description.contains(path), "\(error)")
        #expect(try context.articleCount(feed: feed) == committed)
        #expect(try context.integrityCheck().isEmpty)

        // Space comes back: the pending batch is retried and the feed finishes.
        try FileManager.default.removeItem(atPath: reserve)
        let retried = try context.commit()
        #expect(!retried.isEmpty, "the failed batch stayed pending")
        let summary = try context.finishFeed(feed, FeedSuccess())
        #expect(summary.new == committed + retried.count + summary.committed.count)
        #expect(try context.articleCount(feed: feed) == summary.new)
        try expectIntact(path, count: 20 + summary.new)
    }

    @Test func aWriterHoldingTheLockPastTheTimeoutIsABusyErrorAndTheBatchIsRetried() throws {
        var configuration = StoreConfiguration()
        configuration.busyTimeout = .milliseconds(200)
        configuration.commitBatchSize = 2
        let fixture = try Fixture(configuration: configuration)
        let holder = RawSQLite(fixture.store.path)
        #expect(holder.execute("BEGIN IMMEDIATE") == 0)
        try fixture.context.beginFeed(fixture.feed)
        _ = try fixture.context.store(makeArticle("w0"), in: fixture.feed)
        let start = ContinuousClock.now
        let error = try #require(throws: StoreError.self) { try fixture.context.store(makeArticle("w1"), in: fixture.feed) }
        #expect(ContinuousClock.now - start >= .milliseconds(150), "it waited for the busy timeout")
        #expect(error.code.primary == .busy && error.description.contains(fixture.store.path), "\(error)")
        #expect(error.description.contains("busy timeout"), "\(error)")
        holder.execute("COMMIT")
        let retried = try fixture.context.commit()
        #expect(retried.map(\.article.id) == ["w0", "w1"], "the batch stayed pending and committed on retry")
        #expect(try fixture.context.finishFeed(fixture.feed, FeedSuccess()).new == 2)
    }
}
