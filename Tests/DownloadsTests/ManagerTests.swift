import ArticleStore
import Downloads
import Fetch
import Foundation
import Support
import Syndication
import TestSupport
import Testing

/// The manager as a library user sees it: events in order through an observer, and cancel() from another thread.
@Suite("DownloadManager", .serialized)
struct ManagerTests {
    /// A store with one feed tagged `download` and one article whose enclosure is the media route under `token`.
    static func setUp(_ label: String, size: Int, query: String) throws -> (Store, URL, FaultServer, String) {
        let faults = try FaultServer.shared.get()
        let directory = try Paths.temporaryDirectory("manager-\(label)")
        var random = SplitMix64(seed: UInt64.random(in: 1...UInt64.max))
        let source = directory.appendingPathComponent("source.bin")
        try Data((0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }).write(to: source)
        let token = "\(label)-\(UUID().uuidString.prefix(8))"
        #expect(try Loopback.get(port: faults.port, "/media-control?token=\(token)&file=\(source.path)&\(query)").status == 200)
        let store = try Store.open(directory.appendingPathComponent("s.sqlite").path)
        let context = try store.makeContext()
        let feed = try context.feed(url: "http://127.0.0.1/feed.xml")
        try context.setTags([(feed: feed, tags: ["download"])])
        var article = Article(id: "a1", idSource: .guid, feed: "http://127.0.0.1/feed.xml")
        article.title = "Episode"
        article.enclosures = [Enclosure(url: faults.url("/media/ep.mp3").absoluteString + "?token=\(token)", type: "audio/mpeg")]
        try context.beginFeed(feed)
        _ = try context.store(article, in: feed)
        _ = try context.finishFeed(feed, FeedSuccess())
        return (store, directory, faults, token)
    }

    final class Recorder: DownloadObserver {
        let events = Lock<[String]>([])
        func download(_ event: DownloadEvent) {
            let name: String
            switch event {
            case .queued(let count): name = "queued \(count)"
            case .staleFile: name = "stale"
            case .started(_, let from): name = "started \(from)"
            case .progress: name = "progress"
            case .finished(let result): name = "finished \(result.record.state.rawValue)"
            case .failed(let result): name = "failed \(result.record.state.rawValue)"
            case .removed: name = "removed"
            case .storeFailed: name = "store failed"
            case .runFinished(let summary): name = "end \(summary.completed) \(summary.failed) \(summary.paused)"
            }
            events.withLock { $0.append(name) }
        }
    }

    @Test func observersHearEachStepInOrder() throws {
        let (store, directory, _, _) = try Self.setUp("events", size: 600_000, query: "rate=1000000")
        var configuration = DownloadConfiguration(directory: directory.appendingPathComponent("media").path)
        configuration.progressInterval = .milliseconds(100)
        let manager = DownloadManager(store: store, fetcher: Fetcher(), configuration: configuration)
        let recorder = Recorder()
        manager.addObserver(recorder)
        #expect(try manager.queue(DownloadSelection()) == 1)
        #expect(try manager.queue(DownloadSelection()) == 0)  // known already
        let summary = manager.run()
        #expect(summary.completed == 1 && summary.failed == 0 && summary.bytes == 600_000)
        let events = recorder.events.withLock { $0 }.filter { $0 != "progress" }
        #expect(events == ["queued 1", "started 0", "finished done", "end 1 0 0"])
        #expect(recorder.events.withLock { $0 }.contains("progress"))
        #expect(recorder.events.withLock { $0 }.last == "end 1 0 0")
    }

    @Test func cancelPausesWithThePartialKept() throws {
        let (store, directory, _, _) = try Self.setUp("cancel", size: 2_000_000, query: "rate=500000")
        var configuration = DownloadConfiguration(directory: directory.appendingPathComponent("media").path)
        configuration.checkpointInterval = 64 << 10
        let manager = DownloadManager(store: store, fetcher: Fetcher(), configuration: configuration)
        try manager.queue(DownloadSelection())
        let partial = try #require(try store.makeContext().downloads().first).partialPath
        let done = DispatchSemaphore(value: 0)
        let result = Lock<DownloadSummary?>(nil)
        Thread {
            let summary = manager.run()
            result.withLock { $0 = summary }
            done.signal()
        }.start()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, ((try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)??.intValue ?? 0) < 300_000 {
            Thread.sleep(forTimeInterval: 0.02)
        }
        manager.cancel()
        #expect(done.wait(timeout: .now() + 10) == .success)
        let summary = try #require(result.withLock { $0 })
        #expect(summary.paused == 1 && summary.completed == 0)
        let row = try #require(try store.makeContext().downloads().first)
        let size = (try FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)?.intValue ?? -1
        #expect(row.state == .paused && row.committedOffset == Int64(size) && size >= 300_000 && size < 2_000_000)
        // After resume(), a later run goes on from the committed offset and completes.
        manager.resume()
        let again = manager.run()
        #expect(again.completed == 1 && again.bytes == Int64(2_000_000 - size))
        #expect(try store.makeContext().downloads().first?.state == .done)
    }
}

extension ManagerTests {
    /// `holdRemote(true)`: a remote enclosure is recorded paused without a request (192.0.2.1, TEST-NET-1, is never
    /// contacted: the hold is decided before any transfer), a loopback one downloads as usual.
    @Test func holdRemotePausesOnlyRemoteDownloadsWithoutARequest() throws {
        let (store, directory, _, _) = try Self.setUp("hold", size: 100_000, query: "rate=0")
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = try store.makeContext()
        let feed = try context.feed(url: "http://127.0.0.1/feed.xml")
        var article = Article(id: "a2", idSource: .guid, feed: "http://127.0.0.1/feed.xml")
        article.title = "Remote"
        article.enclosures = [Enclosure(url: "http://192.0.2.1:9/remote.mp3", type: "audio/mpeg")]
        try context.beginFeed(feed)
        _ = try context.store(article, in: feed)
        _ = try context.finishFeed(feed, FeedSuccess())

        let manager = DownloadManager(store: store, fetcher: Fetcher(),
                                      configuration: DownloadConfiguration(directory: directory.appendingPathComponent("media").path))
        #expect(try manager.queue(DownloadSelection()) == 2)
        manager.holdRemote(true)
        #expect(manager.isHoldingRemote)
        let summary = manager.run()
        #expect(summary.completed == 1 && summary.paused == 1 && summary.failed == 0, "\(summary)")
        let rows = try store.makeContext().downloads()
        let remote = try #require(rows.first { $0.url.hasPrefix("http://192.0.2.1") })
        #expect(remote.state == .paused && remote.errorKind == "download.cancelled" && remote.committedOffset == 0)
        #expect(remote.error == "held while the network is away; nothing was fetched")
        #expect(rows.first { $0.url.hasPrefix("http://127.0.0.1") }?.state == .done)
        #expect(DownloadManager.isRemote(URL(string: "http://192.0.2.1/x")!) && DownloadManager.isRemote(URL(string: "https://example.org/x")!))
        #expect(!DownloadManager.isRemote(URL(string: "http://127.0.0.1:8080/x")!) && !DownloadManager.isRemote(URL(string: "http://localhost/x")!))

        // Released: no longer held (a run now would try it; not done here, 192.0.2.1 is not to be contacted).
        manager.holdRemote(false)
        #expect(!manager.isHoldingRemote)
    }
}

/// Permanent failures (marked failed for good, the partial removed, skipped until queued again), transient ones
/// (partial kept, tried by the next run), and what a result says of a resume the server did or did not honour.
extension ManagerTests {
    /// Keeps each finished or failed download's result.
    final class Results: DownloadObserver {
        let results = Lock<[DownloadResult]>([])
        func download(_ event: DownloadEvent) {
            switch event {
            case .finished(let result), .failed(let result): results.withLock { $0.append(result) }
            default: break
            }
        }
        var last: DownloadResult? { results.withLock { $0.last } }
    }

    static func log(_ faults: FaultServer, _ token: String) throws -> [[String: Any]] {
        try JSONSerialization.jsonObject(with: Loopback.get(port: faults.port, "/media-log?token=\(token)").body) as? [[String: Any]] ?? []
    }

    static func control(_ faults: FaultServer, _ token: String, _ query: String) throws {
        #expect(try Loopback.get(port: faults.port, "/media-control?token=\(token)&\(query)").status == 200)
    }

    /// A manager with one attempt per run and no pause, flushing every 64 KiB.
    static func manager(_ store: Store, _ directory: URL) -> (DownloadManager, Results) {
        var configuration = DownloadConfiguration(directory: directory.appendingPathComponent("media").path)
        configuration.checkpointInterval = 64 << 10
        configuration.attemptsPerRun = 1
        configuration.retryDelay = .zero
        let manager = DownloadManager(store: store, fetcher: Fetcher(), configuration: configuration)
        let results = Results()
        manager.addObserver(results)
        return (manager, results)
    }

    /// Runs once against a reset after 400,000 bytes: the partial is kept and its committed length returned.
    static func leavePartial(_ manager: DownloadManager, _ store: Store) throws -> DownloadRecord {
        #expect(try manager.queue(DownloadSelection()) == 1)
        let first = manager.run()
        #expect(first.failed == 1 && first.failedForGood == 0, "\(first)")
        let row = try #require(try store.makeContext().downloads().first)
        #expect(row.state == .failed && !row.isPermanentFailure && row.committedOffset > 0)
        #expect(DownloadFiles.size(of: row.partialPath) == row.committedOffset)
        return row
    }

    @Test func aNotFoundEnclosureFailsForGoodWithoutALeftoverUntilRetried() throws {
        let (store, directory, faults, token) = try Self.setUp("notfound", size: 200_000, query: "status=404")
        let (manager, results) = Self.manager(store, directory)
        #expect(try manager.queue(DownloadSelection()) == 1)
        let first = manager.run()
        #expect(first.failed == 1 && first.failedForGood == 1 && first.completed == 0, "\(first)")
        let row = try #require(try store.makeContext().downloads().first)
        #expect(row.state == .failed && row.isPermanentFailure && row.httpStatus == 404 && row.errorKind == "fetch.http-status")
        #expect(row.error == "HTTP 404 Not Found: a permanent failure, not retried until queued again")
        #expect(!FileManager.default.fileExists(atPath: row.partialPath), "no empty partial file is left")
        let error = try #require(results.last?.error)
        #expect(error.isPermanent && error.status == 404 && error.fetchKind == .httpStatus(404))
        #expect(results.last?.record.isPermanentFailure == true && results.last?.record.httpStatus == 404)

        // A later run (another owner) does not ask again.
        let second = manager.run()
        #expect(second.failed == 0 && second.failedForGood == 1, "\(second)")
        #expect(try Self.log(faults, token).count == 1)

        // Queued again once the file is back: downloaded whole.
        try Self.control(faults, token, "status=0")
        #expect(try manager.retryFailed() == 1)
        let third = manager.run()
        #expect(third.completed == 1 && third.failed == 0 && third.failedForGood == 0, "\(third)")
        #expect(try store.makeContext().downloads().first?.state == .done)
        #expect(FileManager.default.contents(atPath: row.path) == FileManager.default.contents(atPath: directory.appendingPathComponent("source.bin").path))
    }

    @Test func aGoneEnclosureRemovesThePartialOfAnEarlierRun() throws {
        let (store, directory, faults, token) = try Self.setUp("gone", size: 1_000_000, query: "reset_after=400000")
        let (manager, _) = Self.manager(store, directory)
        let partial = try Self.leavePartial(manager, store)
        try Self.control(faults, token, "status=410")
        let second = manager.run()
        #expect(second.failed == 1 && second.failedForGood == 1, "\(second)")
        let row = try #require(try store.makeContext().downloads().first)
        #expect(row.state == .failed && row.isPermanentFailure && row.httpStatus == 410 && row.errorKind == "fetch.gone")
        #expect(row.committedOffset == 0 && !FileManager.default.fileExists(atPath: row.partialPath))
        let last = try #require(try Self.log(faults, token).last)
        #expect(last["range"] as? String == "bytes=\(partial.committedOffset)-" && last["status"] as? Int == 410)
    }

    @Test func aServiceUnavailableEnclosureKeepsItsPartialForTheNextRun() throws {
        let (store, directory, faults, token) = try Self.setUp("busy", size: 1_000_000, query: "reset_after=400000")
        let (manager, results) = Self.manager(store, directory)
        let partial = try Self.leavePartial(manager, store)
        try Self.control(faults, token, "status=503")
        let second = manager.run()
        #expect(second.failed == 1 && second.failedForGood == 0, "\(second)")
        let row = try #require(try store.makeContext().downloads().first)
        #expect(row.state == .failed && !row.isPermanentFailure && row.httpStatus == 503 && row.errorKind == "fetch.service-unavailable")
        #expect(row.committedOffset == partial.committedOffset && DownloadFiles.size(of: row.partialPath) == partial.committedOffset)
        // The next run asks again and resumes where the partial ends.
        try Self.control(faults, token, "status=0")
        let third = manager.run()
        #expect(third.completed == 1, "\(third)")
        #expect(results.last?.resumedFrom == partial.committedOffset && results.last?.restart == nil)
        #expect(try Self.log(faults, token).count == 3)
    }

    /// What the server does with the resume: honour it (206), ignore it (200), or send a new version (200 to an
    /// If-Range whose validator changed). Only the first is a resume; the others restart from zero and say why.
    @Test(arguments: ["206", "200", "changed"])
    func aResultSaysResumedOnlyWhenTheServerHonouredTheRange(_ answer: String) throws {
        let (store, directory, faults, token) = try Self.setUp("resume-\(answer)", size: 1_000_000, query: "reset_after=400000")
        let (manager, results) = Self.manager(store, directory)
        let partial = try Self.leavePartial(manager, store)
        switch answer {
        case "200": try Self.control(faults, token, "ignore_range=1")
        case "changed": try Self.control(faults, token, "etag=%22v2%22")
        default: break
        }
        let second = manager.run()
        #expect(second.completed == 1, "\(second)")
        let result = try #require(results.last)
        #expect(result.record.state == .done)
        let last = try #require(try Self.log(faults, token).last)
        #expect(last["range"] as? String == "bytes=\(partial.committedOffset)-")
        switch answer {
        case "206":
            #expect(last["status"] as? Int == 206)
            #expect(result.resumedFrom == partial.committedOffset && result.restart == nil)
        case "200":
            #expect(last["status"] as? Int == 200)
            #expect(result.resumedFrom == 0)
            #expect(result.restart == DownloadRestart(askedFrom: partial.committedOffset, reason: "the server answered 200 with the whole file"))
        default:
            #expect(last["status"] as? Int == 200)
            #expect(result.resumedFrom == 0)
            #expect(result.restart == DownloadRestart(askedFrom: partial.committedOffset,
                                                      reason: "the file changed on the server (\"v1\" → \"v2\") and came whole (200)"))
        }
        #expect(FileManager.default.contents(atPath: result.record.path) == FileManager.default.contents(atPath: directory.appendingPathComponent("source.bin").path))
    }
}
