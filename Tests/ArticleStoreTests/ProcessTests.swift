import ArticleStore
import Foundation
import Support
import Syndication
import TestSupport
import Testing

/// The StoreProbe executable, built beside the test bundle (`swift build --build-tests` builds it).
func probeExecutable() throws -> String {
    guard let probe = Paths.builtExecutable("StoreProbe") else {
        throw TestSupportError("StoreProbe not found beside the test bundle (build it with swift build --build-tests)")
    }
    return probe.path
}

/// A flag shared with the watchdog.
final class Flag: Sendable {
    let value = Lock(false)
}

/// A StoreProbe child process whose stdout is read line by line as it runs.
final class Child {
    private let child: ChildProcess
    private let finished = Flag()

    var process: Process { child.process }

    init(_ arguments: [String], watchdog: Duration = .seconds(120)) throws {
        child = try ChildProcess(try probeExecutable(), arguments, capturesStandardError: true)
        // A hung child must not hang the suite: kill it (only it, and only while it is still ours) after a while.
        let pid = child.processIdentifier
        let seconds = Double(watchdog.components.seconds)
        let finished = self.finished
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            finished.value.withLock { done in if !done { kill(pid, SIGKILL) } }
        }
    }

    /// The next line of output, or `nil` at its end.
    func nextLine() -> String? { child.readLine() }

    /// Kills the child with SIGKILL and reaps it.
    func killNow() {
        let pid = child.processIdentifier
        finished.value.withLock { done in
            if !done { kill(pid, SIGKILL) }
        }
        wait()
    }

    /// Reads the rest of the output, waits for the exit; returns the remaining lines and stderr.
    @discardableResult
    func finish() -> (lines: [String], errors: String) {
        var lines: [String] = []
        while let line = nextLine() { lines.append(line) }
        wait()
        return (lines, child.readStandardError())
    }

    private func wait() {
        child.waitUntilExit()
        finished.value.withLock { $0 = true }
    }
}

/// What a run of the probe reported: the last durable index per feed and the feeds it finished.
struct Progress {
    var acknowledged: [Int: Int] = [:]
    var finished: Set<Int> = []
    var done: (new: Int, updated: Int, unchanged: Int)?

    mutating func read(_ line: String) {
        let parts = line.split(separator: " ")
        switch parts.first {
        case "commit": acknowledged[Int(parts[1])!] = max(acknowledged[Int(parts[1])!] ?? -1, Int(parts[2])!)
        case "finish": finished.insert(Int(parts[1])!)
        case "done": done = (Int(parts[1])!, Int(parts[2])!, Int(parts[3])!)
        default: break
        }
    }
}

@Suite("Processes: SIGKILL mid-ingest, two writers, readers during writes", .serialized)
struct ProcessTests {
    /// Checks the store against the probe's expected set; returns the number of articles stored.
    ///
    /// Always: the file is sound, no feed has two articles with one key, every stored article is exactly the
    /// expected one, every acknowledged (committed) article is there, the stored count matches the feed's
    /// counter, and only complete feeds have validators. With `complete`, every expected article is there.
    @discardableResult
    private func verify(_ path: String, feeds: Int, articles: Int, progress: Progress, complete: Bool,
                        sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let raw = RawSQLite(path)
        #expect(raw.strings("PRAGMA integrity_check") == ["ok"], sourceLocation: sourceLocation)
        #expect(raw.integer("SELECT count(*) FROM (SELECT feed_id, key FROM articles GROUP BY 1, 2 HAVING count(*) > 1)") == 0,
                "no duplicate keys", sourceLocation: sourceLocation)
        let context = try Store(path: path).makeContext()
        #expect(try context.integrityCheck().isEmpty, sourceLocation: sourceLocation)
        var total = 0
        for feed in 0..<feeds {
            guard let id = try context.existingFeed(url: ProbeData.feedURL(feed)) else {
                #expect(progress.acknowledged[feed] == nil && !complete, "feed \(feed) missing", sourceLocation: sourceLocation)
                continue
            }
            let records = try context.articles(ArticleQuery(feed: id))
            var indices = Set<Int>()
            for record in records {
                let index = try #require(Int(record.article.id.split(separator: ":").last ?? ""), sourceLocation: sourceLocation)
                #expect(indices.insert(index).inserted, "article \(index) of feed \(feed) stored twice", sourceLocation: sourceLocation)
                #expect(record.article == ProbeData.article(feed: feed, index: index), "article \(index) of feed \(feed) differs",
                        sourceLocation: sourceLocation)
            }
            if let last = progress.acknowledged[feed] {
                let lost = (0...last).filter { !indices.contains($0) }
                #expect(lost.isEmpty, "feed \(feed): committed articles lost: \(lost.prefix(10))", sourceLocation: sourceLocation)
            }
            if complete {
                #expect(indices == Set(0..<articles), "feed \(feed) has \(indices.count) of \(articles)", sourceLocation: sourceLocation)
            }
            let status = try context.feedStatus(id)
            #expect(status.articleCount == records.count, "feed \(feed) counter", sourceLocation: sourceLocation)
            // Validators are written in the feed's final transaction only: a feed reported finished has them, and a
            // feed that has them has every article (a kill can fall between that commit and the `finish` line).
            if progress.finished.contains(feed) {
                #expect(status.validators.etag == "\"probe-\(feed)-v1\"", "feed \(feed) finished", sourceLocation: sourceLocation)
            }
            if status.validators.etag != nil {
                #expect(indices.count == articles, "feed \(feed) has validators but only \(indices.count) articles",
                        sourceLocation: sourceLocation)
            }
            total += records.count
        }
        return total
    }

    @Test func sigkillAtRandomPointsLosesNothingAndARerunCompletesTheSet() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        let (feeds, articles, batch) = (4, 1_500, 40)
        let arguments = ["ingest", "--store", path, "--feeds", "\(feeds)", "--articles", "\(articles)", "--batch", "\(batch)"]
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        var progress = Progress()
        let commitsPerRun = feeds * (articles / batch + 1)
        var kills = 0
        for round in 0..<6 {
            // Kill after a random number of commits (a run acknowledges ~120), then a random 0–2 ms later.
            let target = 1 + random.next(below: commitsPerRun * 3 / 4)
            let child = try Child(arguments)
            var commits = 0
            var runProgress = Progress()
            while commits < target, let line = child.nextLine() {
                runProgress.read(line)
                if line.hasPrefix("commit") { commits += 1 }
            }
            usleep(UInt32(random.next(below: 2_000)))
            child.killNow()
            #expect(child.process.terminationReason == .uncaughtSignal || runProgress.done != nil,
                    "round \(round) (seed \(seed)): the probe exited on its own: \(child.finish().errors)")
            if child.process.terminationReason == .uncaughtSignal { kills += 1 }
            for (feed, index) in runProgress.acknowledged { progress.acknowledged[feed] = max(progress.acknowledged[feed] ?? -1, index) }
            progress.finished.formUnion(runProgress.finished)
            try verify(path, feeds: feeds, articles: articles, progress: progress, complete: false)
        }
        #expect(kills >= 4, "seed \(seed): most rounds must really be killed mid-run")

        let before = try verify(path, feeds: feeds, articles: articles, progress: progress, complete: false)
        let rerun = try Child(arguments)
        let (lines, errors) = rerun.finish()
        #expect(rerun.process.terminationStatus == 0, "rerun failed: \(errors)")
        var final = progress
        lines.forEach { final.read($0) }
        let done = try #require(final.done, "rerun did not finish: \(errors)")
        #expect(done.new == feeds * articles - before, "seed \(seed): the rerun adds exactly the missing articles")
        #expect(done.updated == 0 && done.unchanged == before)
        #expect(try verify(path, feeds: feeds, articles: articles, progress: final, complete: true) == feeds * articles)
    }

    /// Decision: two writers on one store both finish. Each batch takes the write lock with BEGIN IMMEDIATE and
    /// waits for it up to the busy timeout, so they take turns batch by batch; the unique key keeps them from
    /// storing one article twice even when both ingest the same feeds at once.
    @Test func twoWritersOnOneStoreBothFinishWithoutDuplicates() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        let (feeds, articles) = (3, 800)
        let common = ["ingest", "--store", path, "--feeds", "\(feeds)", "--articles", "\(articles)", "--batch", "16", "--busy-ms", "20000"]
        // Both start at once (racing to create the store), one feed order forward and one reversed.
        let first = try Child(common)
        let second = try Child(common + ["--reverse"])
        var results: [Progress] = []
        for child in [first, second] {
            let (lines, errors) = child.finish()
            #expect(child.process.terminationStatus == 0, "a writer failed: \(errors)")
            var progress = Progress()
            lines.forEach { progress.read($0) }
            results.append(progress)
        }
        let dones = try results.map { try #require($0.done) }
        #expect(dones.map(\.new).reduce(0, +) == feeds * articles, "each article is new exactly once across both writers")
        #expect(dones.map(\.updated).reduce(0, +) == 0)
        var merged = Progress()
        merged.finished = Set(0..<feeds)
        #expect(try verify(path, feeds: feeds, articles: articles, progress: merged, complete: true) == feeds * articles)
    }

    @Test func readersSeeCommittedBatchesWhileAnotherProcessWrites() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        let store = try Store(path: path)
        let reader = try store.makeContext()
        var readOnly = StoreConfiguration()
        readOnly.access = .readOnly
        let readOnlyReader = try Store(path: path, configuration: readOnly).makeContext()
        let writer = try Child(["ingest", "--store", path, "--feeds", "2", "--articles", "2000", "--batch", "25", "--pause-every", "40"])
        var counts: [Int] = []
        var reads = 0
        while writer.process.isRunning {
            let count = try reader.articleCount()
            #expect(count >= (counts.last ?? 0), "a reader never sees committed articles disappear")
            counts.append(count)
            let newest = try readOnlyReader.articles(ArticleQuery(limit: 5))
            #expect(newest.count == min(5, try readOnlyReader.articleCount()) || newest.count <= 5)
            _ = try reader.feedStatuses()
            reads += 1
            usleep(2_000)
        }
        let (_, errors) = writer.finish()
        #expect(writer.process.terminationStatus == 0, "\(errors)")
        #expect(Set(counts).count > 2, "reads ran while batches were being committed: \(Set(counts).sorted().prefix(10))")
        #expect(try reader.articleCount() == 4000)
        #expect(try readOnlyReader.articleCount() == 4000)
        #expect(reads > 10)
    }
}
