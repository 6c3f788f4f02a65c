// feedingest-store-bench: ArticleStore's throughput (it was `StoreProbe bench`; run it in release).
//
//   swift run -c release feedingest-store-bench [--articles 160000] [--feeds 1] [--batch N] [--random-guids] [--store PATH]
//                                               [--cache-kib N] [--checkpoint-pages N]
//       Measures store throughput on a fresh store: articles/s with ~1.6 KB articles (TestSupport's ProbeData), then
//       a rerun (all unchanged).
//   swift run -c release feedingest-store-bench --feed FILE [--batch 256] [--runs 1]
//       Parsing FILE alone (Syndication's FeedParser) against parsing it into a fresh store, on one thread, and with
//       the store on a second thread (parser → bounded queue of article batches → context). FILE is typically
//       feedingest-bench's 200 MB fixture, .build/bench-fixtures/rss-160000-v1.xml (`make bench` makes it).
// Prints a table, then one JSON line.

import ArticleStore
import Foundation
import Support
import Syndication
import TestSupport

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("feedingest-store-bench: " + message + "\n").utf8))
    exit(1)
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

func bench(_ options: CommandOptions) throws(StoreError) {
    if let feed = options.values["feed"] { return try benchFeed(feed, options) }
    let count = options.int("articles", 160_000)
    let feeds = max(options.int("feeds", 1), 1)
    let perFeed = (count + feeds - 1) / feeds
    let randomGUIDs = options.flags.contains("random-guids")
    let path = options.values["store"] ?? NSTemporaryDirectory() + "store-bench-\(getpid()).sqlite"
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
    print("feedingest-store-bench: \(total) articles in \(feeds) feed(s)\(randomGUIDs ? " with random guids" : ""), \(String(format: "%.0f", Double(bytes) / Double(total))) bytes of text each, batch \(configuration.commitBatchSize)")
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
    private let state = Lock<(batches: [[Article]], closed: Bool)>(([], false))
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

func benchFeed(_ file: String, _ options: CommandOptions) throws(StoreError) {
    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
    func freshStore() throws(StoreError) -> Store {
        let path = NSTemporaryDirectory() + "store-bench-feed-\(getpid()).sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var configuration = StoreConfiguration()
        configuration.commitBatchSize = options.int("batch", configuration.commitBatchSize)
        return try Store(path: path, configuration: configuration)
    }
    func removeStore(_ store: Store) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
    print("feedingest-store-bench: \(file), \(String(format: "%.1f", Double(size) / 1_048_576)) MiB")

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
        let outcome = Lock<(stored: Int, error: StoreError?)>((0, nil))
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

#if DEBUG
FileHandle.standardError.write(Data("feedingest-store-bench: a debug build; its figures mean nothing (swift run -c release feedingest-store-bench)\n".utf8))
#endif
let options = CommandOptions(CommandLine.arguments.dropFirst(), flagNames: ["random-guids"])
if CommandLine.arguments.contains("--help") || CommandLine.arguments.contains("-h") {
    print("usage: feedingest-store-bench [--articles N] [--feeds N] [--batch N] [--random-guids] [--store PATH] | --feed FILE [--batch N] [--runs N]")
    exit(0)
}
do {
    try bench(options)
} catch {
    fail("\(error)")
}
