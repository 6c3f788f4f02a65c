import ArticleStore
import Foundation
import Ingest
import Support
import Synchronization
import Syndication
import TestSupport
import Testing

/// The store thread each worker owns: its failures and its ordering when the store is slower than the parser.
@Suite("Ingest store thread")
struct StoreThreadTests {
    /// Writes an RSS 2.0 feed of `items` items, each with `size` characters of description.
    static func writeFeed(_ url: URL, items: Int, size: Int, name: String) throws {
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>\(name)</title>\n"
        let filler = String(repeating: "x", count: size)
        for index in 0..<items {
            text += "<item><title>\(name) \(index)</title><guid>\(name)#\(index)</guid><description>\(filler)</description></item>\n"
        }
        text += "</channel></rss>\n"
        try Data(text.utf8).write(to: url)
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storethread-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Checks each feed's events: started, first element, its articles, finished, nothing after; returns the
    /// articles reported per feed and each feed's result.
    static func checkOrder(_ events: [IngestEvent]) -> (articles: [String: Int], results: [String: FeedResult]) {
        var state: [String: Int] = [:]  // 1 started, 2 first element, 3 finished
        var articles: [String: Int] = [:]
        var results: [String: FeedResult] = [:]
        for event in events {
            switch event {
            case .feedStarted(let entry):
                #expect(state[entry.source] == nil)
                state[entry.source] = 1
            case .firstElement(let entry, _):
                #expect(state[entry.source] == 1)
                state[entry.source] = 2
            case .articleIngested(let stored):
                #expect(state[stored.entry.source] == 2, "an article of \(stored.entry.source) outside its feed's events")
                articles[stored.entry.source, default: 0] += 1
            case .feedFinished(let entry, let result):
                #expect(state[entry.source] == 1 || state[entry.source] == 2)
                state[entry.source] = 3
                results[entry.source] = result
            default:
                break
            }
        }
        #expect(state.values.allSatisfy { $0 == 3 })
        return (articles, results)
    }

    /// A store that fills up (`max_page_count`) in the middle of a large feed: the store thread's error stops that
    /// feed's transfer and fails it, what was committed before stays (and was reported), and the worker's next
    /// feed, on the same store thread and context, is ingested as usual.
    @Test func aStoreErrorMidFeedFailsOnlyThatFeed() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let big = directory.appendingPathComponent("big.rss")
        let small = directory.appendingPathComponent("small.rss")
        try Self.writeFeed(big, items: 2_000, size: 4_000, name: "big")
        try Self.writeFeed(small, items: 30, size: 100, name: "small")
        let bigEntry = FeedEntry(location: .local(big.path), source: big.path)
        let smallEntry = FeedEntry(location: .local(small.path), source: small.path)
        let path = directory.appendingPathComponent("store.sqlite").path

        // First the small feed alone, into a store without a limit; closing it checkpoints the WAL into the file.
        do {
            let first = IngestPipeline(store: try Store(path: path)).run([smallEntry])
            #expect(first.ok == 1 && first.articles.new == 30)
        }
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        var configuration = StoreConfiguration()
        configuration.maximumPageCount = size / 8192 + 40  // room for a few batches of the big feed
        configuration.commitBatchSize = 20
        let store = try Store(path: path, configuration: configuration)

        var ingest = IngestConfiguration()
        ingest.jobs = 1  // the same worker, store thread and context take the small feed after the big one fails
        let pipeline = IngestPipeline(store: store, configuration: ingest)
        let events = Lock<[IngestEvent]>([])
        pipeline.addObserver(ClosureObserver { event in events.withLock { $0.append(event) } })
        let summary = pipeline.run([bigEntry, smallEntry])

        #expect(summary.failed == 1 && summary.ok == 1, "\(summary)")
        let (articles, results) = Self.checkOrder(events.withLock { $0 })
        guard case .failed(.store(let error), let counts)? = results[big.path] else {
            Issue.record("the big feed should fail in the store: \(String(describing: results[big.path]))"); return
        }
        #expect(error.code.primary == .full, "\(error)")
        #expect(IngestError.store(error).description.hasPrefix("store: ") && "\(error)".contains("full"), "\(error)")
        let bigSize = try #require(FileManager.default.attributesOfItem(atPath: big.path)[.size] as? Int)
        #expect(counts.bytes > 0 && counts.bytes < Int64(bigSize) / 2,
                "the transfer stopped soon after the store error (\(counts.bytes) of \(bigSize) bytes read)")
        guard case .ok(let smallCounts)? = results[small.path] else {
            Issue.record("the small feed: \(String(describing: results[small.path]))"); return
        }
        #expect(smallCounts.seen == 30 && smallCounts.unchanged == 30)
        #expect(articles[small.path] == 30)

        let context = try store.makeContext()
        let bigFeed = try #require(try context.existingFeed(url: bigEntry.storeURL))
        let committed = try context.articleCount(feed: bigFeed)
        #expect(committed > 0, "batches before the store filled up were committed")
        #expect(articles[big.path, default: 0] == committed, "every committed article was reported, and only those")
        #expect(try context.integrityCheck().isEmpty)
        #expect(context.activeFeeds.isEmpty)
    }

    /// Commits larger than the 4,096 events that may wait for the observers, from several store threads at once: each
    /// commit's articles reach the observers (in blocks of at most that many), and the run ends instead of every store
    /// thread waiting for slots that only queued events would free.
    @Test func commitsLargerThanTheEventWindowAreAllReported() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entries: [FeedEntry] = []
        for name in ["one", "two", "three"] {
            let url = directory.appendingPathComponent("\(name).rss")
            try Self.writeFeed(url, items: 5_000, size: 20, name: name)
            entries.append(FeedEntry(location: .local(url.path), source: url.path))
        }
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = 6_000  // each feed is one commit of 5,000 articles
        let store = try Store(path: directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
        var ingest = IngestConfiguration()
        ingest.jobs = 3
        let pipeline = IngestPipeline(store: store, configuration: ingest)
        let events = Lock<[IngestEvent]>([])
        pipeline.addObserver(ClosureObserver { event in
            if case .articleIngested = event { usleep(5) }  // an observer slower than the store threads
            events.withLock { $0.append(event) }
        })
        let finished = DispatchSemaphore(value: 0)
        let summary = Lock<IngestSummary?>(nil)
        let feeds = entries
        Thread {
            let result = pipeline.run(feeds)
            summary.withLock { $0 = result }
            finished.signal()
        }.start()
        let ended = finished.wait(timeout: .now() + 60) == .success
        #expect(ended, "the run did not end within 60 s: the store threads wait for event slots")
        guard ended, let result = summary.withLock({ $0 }) else { return }
        #expect(result.ok == 3 && result.articles.new == 15_000, "\(result)")
        let (articles, _) = Self.checkOrder(events.withLock { $0 })
        for entry in entries { #expect(articles[entry.source] == 5_000) }
    }

    /// Observers hear a batch end after each commit's articles and after every other event, so output buffered in
    /// `ingest(_:)` (the command's NDJSON lines) is flushed once per commit: never an article left waiting for a later
    /// commit, and never a flush per article.
    @Test func aBatchEndFollowsEachCommitsArticlesAndEveryOtherEvent() throws {
        final class Recorder: IngestObserver, Sendable {
            let log = Lock<[String]>([])
            func ingest(_ event: IngestEvent) {
                let line: String
                switch event {
                case .articleIngested: line = "article"
                case .runStarted: line = "runStarted"
                case .runFinished: line = "runFinished"
                case .feedStarted: line = "feedStarted"
                case .firstElement: line = "firstElement"
                case .textReplaced: line = "textReplaced"
                case .feedFinished: line = "feedFinished"
                }
                log.withLock { $0.append(line) }
            }
            func ingestBatchFinished() { log.withLock { $0.append("end") } }
        }
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("batches.rss")
        try Self.writeFeed(url, items: 250, size: 50, name: "batches")
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = 100  // commits of 100, 100 and the last 50 with the feed's end
        let store = try Store(path: directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
        let pipeline = IngestPipeline(store: store)
        let recorder = Recorder()
        pipeline.addObserver(recorder)
        let summary = pipeline.run([FeedEntry(location: .local(url.path), source: url.path)])
        #expect(summary.ok == 1 && summary.articles.new == 250, "\(summary)")
        let log = recorder.log.withLock { $0 }
        // Runs of articles between batch ends: the commits, each whole.
        var runs: [Int] = []
        var current = 0
        for (index, line) in log.enumerated() {
            switch line {
            case "article": current += 1
            case "end":
                if current > 0 { runs.append(current) }
                current = 0
            default:
                #expect(current == 0, "an article run must end before \(line)")
                #expect(index + 1 < log.count && log[index + 1] == "end", "\(line) is a batch of its own")
            }
        }
        #expect(current == 0 && log.last == "end", "the log ends with a batch end: \(log.suffix(3))")
        #expect(runs.reduce(0, +) == 250)
        #expect(runs == [100, 100, 50], "one batch end per commit: \(runs)")
    }

    /// Without a store, parsed articles reach the observers in batches of the store path's hand-off size, each followed
    /// by one batch end, not one by one (issue 18: one `write(2)` per NDJSON line before), and all before the feed's end.
    @Test func withoutAStoreArticlesAreReportedInBatches() throws {
        final class Recorder: IngestObserver, Sendable {
            let log = Lock<[String]>([])
            func ingest(_ event: IngestEvent) {
                switch event {
                case .articleIngested(let article): log.withLock { $0.append(article.article.id) }
                case .feedFinished: log.withLock { $0.append("feedFinished") }
                default: break
                }
            }
            func ingestBatchFinished() { log.withLock { $0.append("end") } }
        }
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("unstored.rss")
        try Self.writeFeed(url, items: 250, size: 50, name: "unstored")
        let pipeline = IngestPipeline(store: nil)
        let recorder = Recorder()
        pipeline.addObserver(recorder)
        let summary = pipeline.run([FeedEntry(location: .local(url.path), source: url.path)])
        #expect(summary.ok == 1 && summary.articles.seen == 250, "\(summary)")
        let lines = recorder.log.withLock { $0 }
        var runs: [Int] = []
        var current = 0
        for line in lines {
            if line == "end" {
                if current > 0 { runs.append(current) }
                current = 0
            } else if line != "feedFinished" {
                current += 1
            }
        }
        #expect(runs == [64, 64, 64, 58], "\(runs)")
        let articles = lines.filter { $0 != "end" && $0 != "feedFinished" }
        #expect(articles.count == 250 && Set(articles).count == 250)
        #expect(lines.firstIndex(of: "feedFinished").map { $0 > lines.lastIndex(of: articles.last!)! } == true)
    }

    /// The store thread moves each article from the worker's hand-off into its batch, and from the committed rows
    /// into the events, instead of copying it (issue 18): every article reported with a store is the parsed article,
    /// field for field and in order, the same as without a store, across several hand-offs of 64 and commits (the last
    /// one in the feed's final transaction); and each stored row hashes as the article does.
    @Test func storedArticlesAreReportedAsParsedWithEveryField() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\""
            + " xmlns:content=\"http://purl.org/rss/1.0/modules/content/\"><channel><title>moves</title>\n"
        for index in 0..<300 {
            text += "<item><title>Item \(index) — Zürich 東京</title><link>https://example.com/\(index)</link>"
                + "<guid>urn:item:\(index)</guid><pubDate>Tue, 31 Dec 2024 \(String(format: "%02d", index % 24)):00:00 +0000</pubDate>"
                + "<dc:creator>Author \(index % 7)</dc:creator><category>One</category>"
                + "<category domain=\"https://example.com/tags\">Two \(index % 3)</category>"
                + "<description>&lt;p&gt;Summary \(index) \"quoted\" &amp;amp; more&lt;/p&gt;</description>"
                + "<content:encoded><![CDATA[<p>Content \(index)</p>]]></content:encoded>"
                + "<enclosure url=\"https://cdn.example.com/\(index).mp3\" length=\"\(1000 + index)\" type=\"audio/mpeg\"/>"
                + "<comments>https://example.com/\(index)#comments</comments></item>\n"
        }
        text += "</channel></rss>\n"
        let url = directory.appendingPathComponent("moves.rss")
        try Data(text.utf8).write(to: url)
        let entry = FeedEntry(location: .local(url.path), source: url.path)

        func reported(_ store: Store?) -> [IngestedArticle] {
            let pipeline = IngestPipeline(store: store)
            let articles = Lock<[IngestedArticle]>([])
            pipeline.addObserver(ClosureObserver { event in
                if case .articleIngested(let article) = event { articles.withLock { $0.append(article) } }
            })
            let summary = pipeline.run([entry])
            #expect(summary.ok == 1, "\(summary)")
            return articles.withLock { $0 }
        }
        let parsed = reported(nil)
        #expect(parsed.count == 300)
        #expect(parsed.allSatisfy { !$0.article.categories.isEmpty && !$0.article.enclosures.isEmpty && $0.article.content != nil })

        var configuration = StoreConfiguration()
        configuration.commitBatchSize = 70  // commits across hand-offs, and a last one in the final transaction
        let store = try Store(path: directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
        let stored = reported(store)
        #expect(stored.map(\.article) == parsed.map(\.article))
        #expect(stored.allSatisfy { $0.change == .new && $0.id != nil })
        #expect(Set(stored.compactMap(\.id)).count == 300)

        let records = try store.makeContext().articles()
        #expect(records.count == 300)
        let byID = Dictionary(uniqueKeysWithValues: stored.compactMap { item in item.id.map { ($0, item.article) } })
        for record in records {
            #expect(record.contentHash == byID[record.id].map(ArticleHasher.contentHash(of:)))
            #expect(record.article.title == byID[record.id]?.title && record.article.categories == byID[record.id]?.categories)
        }
        // Again: every article unchanged, and still reported as parsed (with --all's events).
        let again = reported(store)
        #expect(again.map(\.article) == parsed.map(\.article))
        #expect(again.allSatisfy { $0.change == .unchanged })
    }

    /// Another process holds the store's write lock for a while: the store threads wait at their commits while the
    /// parsers fill their bounded queues and block. Nothing is lost or reordered: each feed's articles are reported
    /// after they are committed and before the feed finishes.
    @Test func eventsStayOrderedWhenTheStoreIsSlowerThanTheParser() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entries: [FeedEntry] = []
        for name in ["one", "two", "three"] {
            let url = directory.appendingPathComponent("\(name).rss")
            try Self.writeFeed(url, items: 1_500, size: 300, name: name)
            entries.append(FeedEntry(location: .local(url.path), source: url.path))
        }
        let path = directory.appendingPathComponent("store.sqlite").path
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = 10  // many commits, each waiting for the lock
        let store = try Store(path: path, configuration: configuration)

        // Hold the write lock for 0.6 s from another process.
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        locker.arguments = ["python3", "-u", "-c", """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            time.sleep(0.6)
            db.execute("COMMIT")
            """, path]
        let output = Pipe()
        locker.standardOutput = output
        try locker.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        #expect(line.hasPrefix("locked"))

        var ingest = IngestConfiguration()
        ingest.jobs = 2
        let pipeline = IngestPipeline(store: store, configuration: ingest)
        let events = Lock<[IngestEvent]>([])
        pipeline.addObserver(ClosureObserver { event in events.withLock { $0.append(event) } })
        let summary = pipeline.run(entries)
        locker.waitUntilExit()

        #expect(summary.ok == 3 && summary.articles.new == 4_500, "\(summary)")
        let (articles, results) = Self.checkOrder(events.withLock { $0 })
        for entry in entries {
            #expect(articles[entry.source] == 1_500)
            #expect(results[entry.source] == .ok(FeedCounts(seen: 1_500, new: 1_500, bytes: results[entry.source].flatMap {
                if case .ok(let counts) = $0 { counts.bytes } else { nil }
            } ?? 0)))
        }
        // Each article reported once, in the order the feed listed them.
        for entry in entries {
            let titles = events.withLock { events in
                events.compactMap { event -> String? in
                    guard case .articleIngested(let stored) = event, stored.entry == entry else { return nil }
                    return stored.article.title
                }
            }
            let name = URL(fileURLWithPath: entry.source).deletingPathExtension().lastPathComponent
            #expect(titles == (0..<1_500).map { "\(name) \($0)" })
        }
        #expect(try store.makeContext().articleCount() == 4_500)
    }

    /// A stalled observer holds the producers up once 4,096 events wait: the store stops growing long before the
    /// feed's 20,000 articles are in, and everything arrives, in order, once the observer moves again.
    @Test func aStalledObserverHoldsTheStoreUpInsteadOfQueueingEverything() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let feedURL = directory.appendingPathComponent("big.rss")
        try Self.writeFeed(feedURL, items: 20_000, size: 40, name: "big")
        let store = try Store(path: directory.appendingPathComponent("store.sqlite").path)
        let gate = DispatchSemaphore(value: 0)
        let seen = Atomic<Int>(0)
        let pipeline = IngestPipeline(store: store)
        pipeline.addObserver(ClosureObserver { event in
            if case .articleIngested = event, seen.add(1, ordering: .relaxed).newValue == 1 { gate.wait() }
        })
        let finished = DispatchSemaphore(value: 0)
        let summary = Lock<IngestSummary?>(nil)
        Thread {
            summary.withLock { $0 = pipeline.run([FeedEntry(location: .local(feedURL.path), source: "big")]) }
            finished.signal()
        }.start()
        // Wait until the stored count stops growing (or 20 s): the producers are blocked.
        let reader = try store.makeContext()
        var stored = -1
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            usleep(300_000)
            let now = try reader.articleCount()
            if now == stored && now > 0 { break }
            stored = now
        }
        #expect(stored > 0 && stored < 12_000, "bounded by the events in flight and the store queue: \(stored)")
        gate.signal()
        #expect(finished.wait(timeout: .now() + 60) == .success)
        #expect(summary.withLock { $0 }?.articles.new == 20_000)
        #expect(seen.load(ordering: .relaxed) == 20_000)
    }
}

/// Hand-offs to the store thread while the download is quiet.
@Suite("Ingest store thread hand-offs")
struct StoreThreadHandOffTests {
    /// The fault server sends one item and holds the rest: that article must be stored, committed (after the store's
    /// batch interval) and reported while the server waits, so the parser hands it over when it runs out of bytes,
    /// not only after 64 articles or at the end. The test releases the server when it hears the article.
    @Test func aSlowDownloadsArticleIsStoredBeforeTheRestArrives() throws {
        let server = try FaultServer.shared.get()
        let directory = try StoreThreadTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: directory.appendingPathComponent("store.sqlite").path)
        let token = "handoff-\(UUID().uuidString.prefix(8))"
        let url = server.url("/stream?items=20&token=\(token)")
        let pipeline = IngestPipeline(store: store)
        let fallbackFired = Atomic<Bool>(false)
        let first = Lock<(title: String?, afterFallback: Bool)?>(nil)
        pipeline.addObserver(ClosureObserver { event in
            guard case .articleIngested(let stored) = event else { return }
            let isFirst = first.withLock { first -> Bool in
                guard first == nil else { return false }
                first = (stored.article.title, fallbackFired.load(ordering: .acquiring))
                return true
            }
            if isFirst { try? server.release(token) }
        })
        // Without the hand-off the server would wait 60 s, then close; release it sooner so a failure is quick.
        DispatchQueue.global().asyncAfter(deadline: .now() + 15) {
            fallbackFired.store(true, ordering: .releasing)
            try? server.release(token)
        }
        let summary = pipeline.run([FeedEntry(location: .remote(url), source: url.absoluteString)])

        #expect(summary.ok == 1 && summary.articles.new == 20, "\(summary)")
        let heard = try #require(first.withLock { $0 })
        #expect(heard.title == "Item 0")
        #expect(!heard.afterFallback, "the first article was stored and reported while the server held the rest")
    }
}
