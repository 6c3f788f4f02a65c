import ArticleStore
import Dispatch
import Foundation
import Ingest
import Support
import Synchronization
import Syndication
import TestSupport
import Testing

/// The corpus of real-world feeds (../shared/corpus next to the package).
private let realworld = Paths.realworld

/// Records every event, checking that no two are handled at once and that all arrive on the event queue.
private final class Recorder: IngestObserver {
    let queue: DispatchQueue
    let events = Lock<[IngestEvent]>([])
    let busy = Atomic<Bool>(false)
    let overlaps = Atomic<Int>(0)
    let offQueue = Atomic<Int>(0)

    init(queue: DispatchQueue) { self.queue = queue }

    func ingest(_ event: IngestEvent) {
        if busy.exchange(true, ordering: .acquiringAndReleasing) { overlaps.add(1, ordering: .relaxed) }
        dispatchPrecondition(condition: .onQueue(queue))
        events.withLock { $0.append(event) }
        usleep(50)  // widen the window a concurrent delivery would need
        busy.store(false, ordering: .releasing)
    }
}

@Suite("IngestPipeline")
struct IngestPipelineTests {
    static func entry(_ name: String) -> FeedEntry {
        let path = realworld.appendingPathComponent(name).path
        return FeedEntry(location: .local(path), source: path)
    }

    static func temporaryStore() throws -> (Store, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (try Store(path: directory.appendingPathComponent("store.sqlite").path), directory)
    }

    @Test func deliversEventsInOrderOneAtATimeOnOneQueueAndIsolatesFailures() throws {
        let (store, directory) = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = IngestConfiguration()
        configuration.jobs = 3
        let pipeline = IngestPipeline(store: store, configuration: configuration)
        let recorder = Recorder(queue: configuration.eventQueue)
        pipeline.addObserver(recorder)
        // JSON that is not a JSON Feed (scripting.com's RSS-in-JSON) fails as not a feed; a JSON Feed is a feed like any.
        let notAFeed = FeedEntry(location: .local(realworld.appendingPathComponent("ScriptingNews.json").path), source: "json")
        let jsonFeed = FeedEntry(location: .local(realworld.appendingPathComponent("3960.json").path), source: "jsonfeed")
        let missing = FeedEntry(location: .local("/nonexistent/feed.xml"), source: "missing")
        let entries = [Self.entry("atp.rss"), notAFeed, Self.entry("bio.rdf"), missing, Self.entry("kc0011.rss"), jsonFeed]
        let summary = pipeline.run(entries)

        #expect(summary.feeds == 6)
        #expect(summary.ok == 4)
        #expect(summary.failed == 2)
        #expect(summary.articles.new == 170)
        let events = recorder.events.withLock { $0 }
        #expect(recorder.overlaps.load(ordering: .relaxed) == 0)
        guard case .runStarted(feeds: 6)? = events.first else { Issue.record("first event: \(String(describing: events.first))"); return }
        guard case .runFinished(let last)? = events.last else { Issue.record("last event: \(String(describing: events.last))"); return }
        #expect(last == summary)
        // Per feed: started, then its articles, then finished; nothing after finished.
        var state: [String: Int] = [:]  // 1 started, 2 finished
        var articles: [String: Int] = [:]
        var results: [String: FeedResult] = [:]
        var formats: [String: FeedFormat] = [:]
        for event in events.dropFirst().dropLast() {
            switch event {
            case .feedStarted(let entry):
                #expect(state[entry.source] == nil)
                state[entry.source] = 1
            case .firstElement(let entry, let format):
                #expect(state[entry.source] == 1)
                #expect(articles[entry.source] == nil, "the first element comes before the feed's articles")
                formats[entry.source] = format
            case .articleIngested(let stored):
                #expect(state[stored.entry.source] == 1)
                #expect(stored.change == .new)
                #expect(stored.id != nil)
                #expect(stored.article.feed == stored.entry.source)
                articles[stored.entry.source, default: 0] += 1
            case .feedFinished(let entry, let result):
                #expect(state[entry.source] == 1)
                state[entry.source] = 2
                results[entry.source] = result
            default:
                Issue.record("unexpected \(event)")
            }
        }
        #expect(state.count == 6 && state.values.allSatisfy { $0 == 2 })
        #expect(articles[Self.entry("atp.rss").source] == 100)
        #expect(articles[Self.entry("kc0011.rss").source] == 20)
        #expect(articles["jsonfeed"] == 20)
        #expect(formats[Self.entry("atp.rss").source]?.description == "RSS 2.0")
        #expect(formats[Self.entry("bio.rdf").source]?.description == "RSS 1.0")
        #expect(formats["jsonfeed"]?.description == "JSON Feed 1.1")
        #expect(results["jsonfeed"]?.isFailure == false)
        #expect(formats["missing"] == nil && formats["json"] == nil, "no first element without a feed's root (or version)")
        #expect(results["json"]?.isFailure == true)
        #expect(results["missing"]?.isFailure == true)
        // Failures carry the typed error of the layer that failed, for observers to match on.
        if case .failed(.fetch(let error), _)? = results["missing"] {
            #expect(error.kind == .fileUnreadable && error.message.contains("does not exist"), "\(error)")
        } else {
            Issue.record("the missing file should fail in Fetch: \(String(describing: results["missing"]))")
        }
        guard case .failed(.parse(let parse), _)? = results["json"] else {
            Issue.record("JSON that is not a JSON Feed is a parse failure: \(String(describing: results["json"]))"); return
        }
        #expect(parse.kind == .notAFeed, "\(parse)")
        #expect(parse.line >= 1, "the JSON parser says where it stopped: \(parse)")

        // The store recorded the failures and the successes, each on its own feed.
        let context = try store.makeContext()
        #expect(try context.articleCount() == 170)
        let statuses = try context.feedStatuses()
        #expect(statuses.count == 6)
        #expect(statuses.filter { $0.outcome == .failed }.count == 2)
        #expect(statuses.filter { $0.outcome == .updated }.count == 4)
        #expect(statuses.first { $0.outcome == .failed }?.consecutiveFailures == 1)
        #expect(statuses.filter { $0.outcome == .updated }.allSatisfy { $0.validators.bodyHash != nil })
    }

    @Test func aSecondRunReportsUnchangedArticlesAndAChangedOneAsUpdated() throws {
        let (store, directory) = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("feed.rss")
        let original = try String(contentsOf: realworld.appendingPathComponent("atp.rss"), encoding: .utf8)
        try Data(original.utf8).write(to: copy)
        let entry = FeedEntry(location: .local(copy.path), source: copy.path)
        let pipeline = IngestPipeline(store: store)
        let first = pipeline.run([entry])
        #expect(first.articles.new == 100)

        let changes = Lock<[ArticleChange?]>([])
        let second = IngestPipeline(store: store)
        second.addObserver(ClosureObserver { event in
            if case .articleIngested(let stored) = event { changes.withLock { $0.append(stored.change) } }
        })
        let unchanged = second.run([entry])
        #expect(unchanged.articles.unchanged == 100)
        #expect(unchanged.articles.new == 0)
        #expect(changes.withLock { $0 }.allSatisfy { $0 == .unchanged })

        // Change one item's title: exactly one article is updated.
        guard let range = original.range(of: "<title>", range: original.range(of: "<item")!.lowerBound..<original.endIndex) else {
            Issue.record("no item title"); return
        }
        try Data(original.replacingCharacters(in: range, with: "<title>Changed: ").utf8).write(to: copy)
        let changed = IngestPipeline(store: store).run([entry])
        #expect(changed.articles.updated == 1)
        #expect(changed.articles.unchanged == 99)
    }

    @Test func withoutAStoreArticlesAreReportedAsParsed() throws {
        let count = Atomic<Int>(0)
        let pipeline = IngestPipeline(store: nil)
        pipeline.addObserver(ClosureObserver { event in
            if case .articleIngested(let stored) = event, stored.id == nil, stored.change == nil { count.add(1, ordering: .relaxed) }
        })
        let summary = pipeline.run([Self.entry("atp.rss"), Self.entry("bio.rdf")])
        #expect(summary.ok == 2)
        #expect(summary.articles.seen == 130)
        #expect(count.load(ordering: .relaxed) == 130)
    }

    /// Local files are read by the worker itself (nothing to start ahead; `SchedulingTests` covers remote feeds).
    @Test func oneWorkerIngestsEveryLocalFeed() throws {
        let (store, directory) = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = IngestConfiguration()
        configuration.jobs = 1
        let names = ["DaringFireball.atom", "atp.rss", "bio.rdf", "kc0011.rss", "theomnishow.rss"]
        let summary = IngestPipeline(store: store, configuration: configuration).run(names.map(Self.entry))
        #expect(summary.ok == 5)
        #expect(summary.articles.seen == 48 + 100 + 30 + 20 + 4)
        #expect(try store.makeContext().articleCount() == summary.articles.new)
    }

    @Test func anEmptyRunStillStartsAndFinishes() {
        let events = Lock<[String]>([])
        let pipeline = IngestPipeline(store: nil)
        pipeline.addObserver(ClosureObserver { event in events.withLock { $0.append("\(event)".prefix(10).description) } })
        let summary = pipeline.run([])
        #expect(summary.feeds == 0)
        #expect(events.withLock { $0 }.count == 2)
    }

    /// A run keeps its planning context open until its workers are done, so a new store's write-ahead log is not
    /// checkpointed, removed and made again between planning and the first commit: the log the first article is
    /// committed into has the header (and so the salts, new with every new log) it had when the store was made. The
    /// feed comes through a FIFO, held open until that article is reported, so the worker's context is still open.
    @Test func aNewStoresFirstArticleGoesIntoTheLogTheStoreWasMadeWith() throws {
        let (store, directory) = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("store.sqlite-wal").path
        let created = try #require(FileManager.default.contents(atPath: log)).prefix(32)
        #expect(created.count == 32)
        let fifo = directory.appendingPathComponent("feed.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let stored = DispatchSemaphore(value: 0)
        let pipeline = IngestPipeline(store: store)
        pipeline.addObserver(ClosureObserver { event in if case .articleIngested = event { stored.signal() } })
        let finished = DispatchSemaphore(value: 0)
        let summary = Lock<IngestSummary?>(nil)
        let run = Thread {
            summary.withLock { $0 = pipeline.run([FeedEntry(location: .local(fifo), source: "fifo")]) }
            finished.signal()
        }
        run.start()
        // The writer has a thread of its own: opening a FIFO waits for its reader, and a test must fail, not hang.
        let proceed = DispatchSemaphore(value: 0)
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title><item><guid>one</guid><title>One</title></item>".utf8))
            _ = proceed.wait(timeout: .now() + 20)
            handle?.write(Data("</channel></rss>".utf8))
            try? handle?.close()
        }
        writer.start()
        let reported = stored.wait(timeout: .now() + 20) == .success
        let during = FileManager.default.contents(atPath: log)?.prefix(32)
        proceed.signal()
        #expect(reported, "the first article was committed and reported while the feed was still open")
        #expect(finished.wait(timeout: .now() + 20) == .success)
        #expect(during == created, "the same log, not one made again")
        #expect(summary.withLock { $0 }?.articles.new == 1)
        #expect(!FileManager.default.fileExists(atPath: log), "the run's last connection removed the log")
    }
}
