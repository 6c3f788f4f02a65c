// StoreProbe: a test-only executable over ArticleStore.
//
//   StoreProbe ingest --store PATH [--feeds 4] [--articles 1000] [--batch 64] [--version 1] [--reverse]
//                     [--pause-every 0] [--busy-ms 5000]
//       Ingests the deterministic ProbeData set, feed by feed, and reports each commit on stdout as it happens:
//       `commit FEED INDEX` (every article of FEED up to INDEX is durable), `finish FEED SEEN NEW UPDATED UNCHANGED`
//       and at the end `done NEW UPDATED UNCHANGED`. The ArticleStore tests SIGKILL it at random commits.
//   StoreProbe bench [--articles 160000] [--feeds 1] [--batch N] [--random-guids] [--store PATH]
//       Measures store throughput on a fresh store: articles/s with ~1.6 KB articles, then a rerun (all unchanged).
//   StoreProbe bench --feed FILE [--batch 256] [--runs 1]
//       The issue's measure: parsing FILE alone (Syndication's FeedParser) against parsing it into a fresh store,
//       on one thread, and with the store on a second thread (parser → bounded queue of article batches → context).
//       FILE is typically the benchmark's 200 MB fixture, .build/bench-fixtures/rss-160000-v1.xml.

import ArticleStore
import Foundation
import Synchronization
import Syndication

/// Parsed command-line options: `--name value` pairs and `--flag`s.
struct Options {
    var values: [String: String] = [:]
    var flags: Set<String> = []

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard argument.hasPrefix("--") else { continue }
            let name = String(argument.dropFirst(2))
            if ["reverse", "random-guids"].contains(name) { flags.insert(name) } else { values[name] = iterator.next() }
        }
    }

    func int(_ name: String, _ fallback: Int) -> Int { values[name].flatMap { Int($0) } ?? fallback }
}

/// Writes a line to stdout at once (unbuffered), so a parent process sees it before a SIGKILL.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("StoreProbe: " + message + "\n").utf8))
    exit(1)
}

func ingest(_ options: Options) throws(StoreError) {
    guard let path = options.values["store"] else { fail("ingest needs --store PATH") }
    var configuration = StoreConfiguration()
    configuration.commitBatchSize = options.int("batch", 64)
    configuration.busyTimeout = .milliseconds(options.int("busy-ms", 5000))
    let feeds = options.int("feeds", 4)
    let articles = options.int("articles", 1000)
    let version = options.int("version", 1)
    let pauseEvery = options.int("pause-every", 0)
    let store = try Store(path: path, configuration: configuration)
    let context = try store.makeContext()
    let ids = try context.feeds(urls: (0..<feeds).map(ProbeData.feedURL))
    var totals = (new: 0, updated: 0, unchanged: 0)
    let order = options.flags.contains("reverse") ? Array((0..<feeds).reversed()) : Array(0..<feeds)
    for feed in order {
        let id = ids[feed]
        context.beginFeedOrFail(id)
        for index in 0..<articles {
            let committed = try context.store(ProbeData.article(feed: feed, index: index, version: version), in: id)
            if !committed.isEmpty { emit("commit \(feed) \(index)") }
            if pauseEvery > 0, index % pauseEvery == 0 { usleep(1000) }
        }
        let summary = try context.finishFeed(id, FeedSuccess(validators: FeedValidators(etag: "\"probe-\(feed)-v\(version)\"")))
        emit("commit \(feed) \(articles - 1)")
        emit("finish \(feed) \(summary.seen) \(summary.new) \(summary.updated) \(summary.unchanged)")
        totals.new += summary.new
        totals.updated += summary.updated
        totals.unchanged += summary.unchanged
    }
    emit("done \(totals.new) \(totals.updated) \(totals.unchanged)")
}

extension StoreContext {
    fileprivate func beginFeedOrFail(_ id: FeedID) {
        do { try beginFeed(id) } catch { fail("\(error)") }
    }
}

/// CPU time (user + system) the process has used so far, in seconds: the honest figure on a busy machine.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// The process's peak resident set size, in MiB.
func peakRSSMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

func bench(_ options: Options) throws(StoreError) {
    if let feed = options.values["feed"] { return try benchFeed(feed, options) }
    let count = options.int("articles", 160_000)
    let feeds = max(options.int("feeds", 1), 1)
    let perFeed = (count + feeds - 1) / feeds
    let randomGUIDs = options.flags.contains("random-guids")
    let path = options.values["store"] ?? NSTemporaryDirectory() + "storeprobe-bench-\(getpid()).sqlite"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    defer { if options.values["store"] == nil { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } } }

    // Generating the articles is not the store's work: time it alone and subtract it.
    var bytes = 0
    let generationCPUStart = cpuSeconds()
    let generation = ContinuousClock().measure {
        for feed in 0..<feeds {
            for index in 0..<perFeed {
                let article = ProbeData.article(feed: feed, index: index, randomGUIDs: randomGUIDs)
                bytes += (article.title?.utf8.count ?? 0) + (article.link?.utf8.count ?? 0) + article.id.utf8.count
                    + (article.summary?.value.utf8.count ?? 0) + (article.content?.value.utf8.count ?? 0)
                    + article.enclosures.reduce(0) { $0 + $1.url.utf8.count } + article.categories.reduce(0) { $0 + $1.utf8.count }
            }
        }
    }

    let generationCPU = cpuSeconds() - generationCPUStart
    var configuration = StoreConfiguration()
    configuration.commitBatchSize = options.int("batch", configuration.commitBatchSize)
    configuration.cacheSizeKiB = options.int("cache-kib", configuration.cacheSizeKiB)
    configuration.walAutocheckpointPages = options.int("checkpoint-pages", configuration.walAutocheckpointPages)
    let store = try Store(path: path, configuration: configuration)
    let context = try store.makeContext()
    let ids = try context.feeds(urls: (0..<feeds).map(ProbeData.feedURL))

    func run() throws(StoreError) -> (Duration, Double, FeedIngestSummary?) {
        var last: FeedIngestSummary?
        let cpuStart = cpuSeconds()
        let start = ContinuousClock.now
        for feed in 0..<feeds {
            try context.beginFeed(ids[feed])
            for index in 0..<perFeed {
                _ = try context.store(ProbeData.article(feed: feed, index: index, randomGUIDs: randomGUIDs), in: ids[feed])
            }
            last = try context.finishFeed(ids[feed], FeedSuccess(validators: FeedValidators(etag: "bench")))
        }
        return (ContinuousClock.now - start, cpuSeconds() - cpuStart, last)
    }
    let (fresh, freshCPU, _) = try run()
    let (rerun, rerunCPU, rerunSummary) = try run()
    let total = perFeed * feeds
    let fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0

    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
    let generationSeconds = seconds(generation)
    let freshStore = max(seconds(fresh) - generationSeconds, 1e-9)
    let rerunStore = max(seconds(rerun) - generationSeconds, 1e-9)
    let megabytes = Double(bytes) / 1_048_576
    print("StoreProbe bench: \(total) articles in \(feeds) feed(s)\(randomGUIDs ? " with random guids" : ""), \(String(format: "%.0f", Double(bytes) / Double(total))) bytes of text each, batch \(configuration.commitBatchSize)")
    print(String(format: "  generate only           %7.3f s", generationSeconds))
    print(String(format: "  fresh store (gen+store) %7.3f s   store alone %7.3f s = %8.0f articles/s, %6.1f MB/s of text",
                 seconds(fresh), freshStore, Double(total) / freshStore, megabytes / freshStore))
    print(String(format: "  rerun, all unchanged    %7.3f s   store alone %7.3f s = %8.0f articles/s (unchanged %d)",
                 seconds(rerun), rerunStore, Double(total) / rerunStore, rerunSummary?.unchanged ?? -1))
    let freshStoreCPU = max(freshCPU - generationCPU, 1e-9)
    let rerunStoreCPU = max(rerunCPU - generationCPU, 1e-9)
    print(String(format: "  CPU time: generate %.3f s, fresh store alone %.3f s = %.0f articles/s per core, rerun alone %.3f s = %.0f articles/s",
                 generationCPU, freshStoreCPU, Double(total) / freshStoreCPU, rerunStoreCPU, Double(total) / rerunStoreCPU))
    print(String(format: "  database %.1f MiB, peak RSS %.1f MiB", Double(fileSize) / 1_048_576, peakRSSMiB()))
    print(String(format: "{\"bench\":\"store\",\"articles\":%d,\"feeds\":%d,\"batch\":%d,\"generate_s\":%.4f,\"fresh_store_s\":%.4f,"
                 + "\"fresh_articles_per_s\":%.0f,\"rerun_store_s\":%.4f,\"rerun_articles_per_s\":%.0f,\"fresh_store_cpu_s\":%.4f,"
                 + "\"rerun_store_cpu_s\":%.4f,\"db_mib\":%.1f,\"peak_rss_mib\":%.1f}",
                 total, feeds, configuration.commitBatchSize, generationSeconds, freshStore, Double(total) / freshStore, rerunStore,
                 Double(total) / rerunStore, freshStoreCPU, rerunStoreCPU, Double(fileSize) / 1_048_576, peakRSSMiB()))
}

/// A bounded, blocking queue of article batches from the parsing thread to the storing thread.
final class BatchChannel: Sendable {
    private let state = Mutex<(batches: [[Article]], closed: Bool)>(([], false))
    private let items = DispatchSemaphore(value: 0)
    private let slots: DispatchSemaphore

    init(capacity: Int) { slots = DispatchSemaphore(value: capacity) }

    /// Blocks while the queue is full.
    func send(_ batch: [Article]) {
        slots.wait()
        state.withLock { $0.batches.append(batch) }
        items.signal()
    }

    func close() {
        state.withLock { $0.closed = true }
        items.signal()
    }

    /// The next batch, or `nil` once the queue is closed and empty.
    func receive() -> [Article]? {
        items.wait()
        let batch: [Article]? = state.withLock { state in
            state.batches.isEmpty ? nil : state.batches.removeFirst()
        }
        if batch != nil { slots.signal() }
        return batch
    }
}

func benchFeed(_ file: String, _ options: Options) throws(StoreError) {
    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
    func freshStore() throws(StoreError) -> Store {
        let path = NSTemporaryDirectory() + "storeprobe-feed-\(getpid()).sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = options.int("batch", configuration.commitBatchSize)
        return try Store(path: path, configuration: configuration)
    }
    func removeStore(_ store: Store) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
    print("StoreProbe bench: \(file), \(String(format: "%.1f", Double(size) / 1_048_576)) MiB")

    var rows: [(String, Double, Double, Int)] = []
    for _ in 0..<max(options.int("runs", 1), 1) {
        // 1. Parsing alone.
        var parsed = 0
        var cpu = cpuSeconds()
        var start = ContinuousClock.now
        let summary = FeedParser.parse(contentsOfFile: file) { _, _ in parsed += 1 }
        if let error = summary.error { fail("parse failed: \(error)") }
        rows.append(("parse only", seconds(ContinuousClock.now - start), cpuSeconds() - cpu, parsed))

        // 2. Parsing into a fresh store on the same thread.
        var store = try freshStore()
        let context = try store.makeContext()
        let feed = try context.feed(url: file)
        try context.beginFeed(feed)
        var storeError: StoreError?
        var stored = 0
        cpu = cpuSeconds()
        start = ContinuousClock.now
        _ = FeedParser.parse(contentsOfFile: file) { article, _ in
            guard storeError == nil else { return }
            do throws(StoreError) { stored += try context.store(article, in: feed).count } catch { storeError = error }
        }
        if let storeError { throw storeError }
        stored += try context.finishFeed(feed, FeedSuccess()).committed.count
        rows.append(("parse + store, 1 thread", seconds(ContinuousClock.now - start), cpuSeconds() - cpu, stored))
        removeStore(store)

        // 3. Parsing on this thread, storing on a second one: the store is shared, the context lives in its thread.
        store = try freshStore()
        let sharedStore = store
        let channel = BatchChannel(capacity: 8)
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<(stored: Int, error: StoreError?)>((0, nil))
        let batchSize = max(options.int("batch", 256), 1)
        cpu = cpuSeconds()
        start = ContinuousClock.now
        let thread = Thread {
            do throws(StoreError) {
                let context = try sharedStore.makeContext()
                let feed = try context.feed(url: file)
                try context.beginFeed(feed)
                var count = 0
                while let batch = channel.receive() {
                    for article in batch { count += try context.store(article, in: feed).count }
                }
                count += try context.finishFeed(feed, FeedSuccess()).committed.count
                outcome.withLock { $0.stored = count }
            } catch {
                outcome.withLock { $0.error = error }
                while channel.receive() != nil {}
            }
            done.signal()
        }
        thread.start()
        var batch: [Article] = []
        batch.reserveCapacity(batchSize)
        _ = FeedParser.parse(contentsOfFile: file) { article, _ in
            batch.append(article)
            if batch.count == batchSize {
                channel.send(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { channel.send(batch) }
        channel.close()
        done.wait()
        let result = outcome.withLock { $0 }
        if let error = result.error { throw error }
        rows.append(("parse → store, 2 threads", seconds(ContinuousClock.now - start), cpuSeconds() - cpu, result.stored))
        removeStore(store)
    }
    let parse = rows.filter { $0.0 == "parse only" }.map(\.1).min() ?? 1
    for name in ["parse only", "parse + store, 1 thread", "parse → store, 2 threads"] {
        let matching = rows.filter { $0.0 == name }
        guard let best = matching.min(by: { $0.1 < $1.1 }) else { continue }
        print(String(format: "  %-26@ %7.3f s wall (best of %d)  %7.3f s CPU  %6d articles  %.2f× parse  %8.0f articles/s",
                     name as NSString, best.1, matching.count, best.2, best.3, best.1 / parse, Double(best.3) / best.1))
    }
    print(String(format: "  peak RSS %.1f MiB", peakRSSMiB()))
    let one = rows.filter { $0.0 == "parse + store, 1 thread" }.map(\.1).min() ?? 0
    let two = rows.filter { $0.0 == "parse → store, 2 threads" }.map(\.1).min() ?? 0
    print(String(format: "{\"bench\":\"store-feed\",\"bytes\":%d,\"parse_s\":%.4f,\"store_1thread_s\":%.4f,\"store_2threads_s\":%.4f,"
                 + "\"ratio_1thread\":%.3f,\"ratio_2threads\":%.3f,\"peak_rss_mib\":%.1f}",
                 size, parse, one, two, one / parse, two / parse, peakRSSMiB()))
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: StoreProbe ingest|bench [options]") }
let options = Options(arguments.dropFirst(2))
do {
    switch arguments[1] {
    case "ingest": try ingest(options)
    case "bench": try bench(options)
    default: fail("unknown mode \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
