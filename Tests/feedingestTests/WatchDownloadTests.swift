import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `feedingest watch … --download` end to end: the built binary watching a local feed tagged `download` whose
/// enclosures live on the fault server's Range-capable `/media` route (127.0.0.1).
@Suite("feedingest watch --download: enclosures of new articles, continuously", .serialized)
struct WatchDownloadTests {
    /// A watched list of one local feed tagged `download`; its items' enclosures served by `/media` from random bytes.
    struct Setup {
        let directory: URL
        let store: URL
        let downloads: URL
        let feed: URL
        let list: URL
        let faults: FaultServer
        let size: Int

        init(_ label: String, size: Int) throws {
            faults = try DownloadCommandTests.faults()
            self.size = size
            directory = try Paths.temporaryDirectory("watch-download-\(label)")
            store = directory.appendingPathComponent("store.sqlite")
            downloads = directory.appendingPathComponent("media")
            feed = directory.appendingPathComponent("feed.xml")
            list = directory.appendingPathComponent("feeds.txt")
            try Data("\(feed.path) download\n".utf8).write(to: list)
        }

        /// A source file of random bytes served under `token` at `rate` bytes per second (0: unlimited).
        func serve(_ token: String, rate: Int = 0) throws -> URL {
            let source = directory.appendingPathComponent("\(token).bin")
            var random = SplitMix64(seed: UInt64.random(in: 1...UInt64.max))
            var bytes = [UInt8](repeating: 0, count: size)
            for index in stride(from: 0, to: size, by: 8) {
                let value = random.next()
                for shift in 0..<min(8, size - index) { bytes[index + shift] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(shift))) }
            }
            try Data(bytes).write(to: source)
            try DownloadCommandTests.control(faults, token, "file=\(source.path)&rate=\(rate)")
            return source
        }

        /// Writes the feed with one item per (file name, token), each with its enclosure on `/media`.
        func writeFeed(_ items: [(name: String, token: String)]) throws {
            var text = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>Test Show</title><link>http://127.0.0.1/</link>\n"
            for (index, item) in items.enumerated() {
                let url = faults.url("/media/\(item.name)").absoluteString + "?token=\(item.token)"
                text += "<item><title>Episode \(index)</title><guid>\(item.token)</guid><pubDate>Mon, 0\(index % 9 + 1) Jun 2026 10:00:00 GMT</pubDate>"
                    + "<enclosure url=\"\(url)\" type=\"audio/mpeg\" length=\"\(size)\"/></item>\n"
            }
            text += "</channel></rss>\n"
            // Beside, then renamed: the watch never reads half a feed.
            let temporary = directory.appendingPathComponent("feed.xml.tmp")
            try Data(text.utf8).write(to: temporary)
            guard rename(temporary.path, feed.path) == 0 else { throw TestSupportError("rename failed: errno \(errno)") }
        }

        func file(_ name: String) -> URL { downloads.appendingPathComponent("Test Show").appendingPathComponent(name) }

        func watch(_ extra: [String] = []) throws -> WatchProcess {
            try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "0", "--max-interval", "0.5s",
                              "--download", "--dir", downloads.path] + extra, in: directory)
        }

        func rows() throws -> [[String: Any]] {
            try CommandRunner.run(["downloads", "--json", "--store", store.path]).lines
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    static func token(_ name: String) -> String { "\(name)-\(UInt32.random(in: 0...UInt32.max))" }

    @Test func enclosuresOfNewArticlesAreDownloadedWithoutARestartAndCounted() throws {
        let setup = try Setup("new", size: 300 << 10)
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let (first, second) = (Self.token("first"), Self.token("second"))
        let firstSource = try setup.serve(first)
        let secondSource = try setup.serve(second)
        try setup.writeFeed([(name: "one.mp3", token: first)])
        let metrics = setup.directory.appendingPathComponent("feedingest.prom")
        let watch = try setup.watch(["--metrics-file", metrics.path])

        #expect(watch.waitUntil(30) { DownloadCommandTests.size(setup.file("one.mp3")) == setup.size }, "\(watch.stderr)")
        #expect(try DownloadCommandTests.sha256(setup.file("one.mp3")) == DownloadCommandTests.sha256(firstSource))
        #expect(watch.articles.count == 1, "stdout carries the articles only: \(watch.output)")

        // A new item in the served feed: its enclosure follows, the watch still running.
        try setup.writeFeed([(name: "one.mp3", token: first), (name: "two.mp3", token: second)])
        #expect(watch.waitUntil(30) { DownloadCommandTests.size(setup.file("two.mp3")) == setup.size }, "\(watch.stderr)")
        #expect(try DownloadCommandTests.sha256(setup.file("two.mp3")) == DownloadCommandTests.sha256(secondSource))
        #expect(watch.waitUntil(20) {
            let text = (try? String(contentsOf: metrics, encoding: .utf8)) ?? ""
            return text.contains("feedingest_downloads_total{outcome=\"done\"} 2")
        }, "\((try? String(contentsOf: metrics, encoding: .utf8)) ?? "")")
        let text = try String(contentsOf: metrics, encoding: .utf8)
        #expect(text.contains("feedingest_download_bytes_total \(2 * setup.size)\n"), "\(text)")
        #expect(text.contains("feedingest_downloads_total{outcome=\"failed\"} 0"))
        #expect(watch.stop() == 0, "\(watch.stderr)")

        #expect(watch.stderr.contains("downloaded \(setup.file("one.mp3").path)"), "\(watch.stderr)")
        #expect(watch.stderr.contains("downloaded \(setup.file("two.mp3").path)"), "\(watch.stderr)")
        #expect(watch.output.allSatisfy { !$0.contains("downloaded") })
        #expect(watch.articles.count == 2)
        let rows = try setup.rows()
        #expect(rows.count == 2 && rows.allSatisfy { $0["state"] as? String == "done" && $0["bytes"] as? Int == setup.size }, "\(rows)")
        // Each fetched once, from the start: nothing downloaded twice across the runs the new article started.
        for token in [first, second] {
            let log = try JSONSerialization.jsonObject(with: Loopback.get(port: setup.faults.port, "/media-log?token=\(token)").body) as? [[String: Any]] ?? []
            #expect(log.count == 1 && log.first?["status"] as? Int == 200, "\(log)")
        }
    }

    @Test func sigtermDuringASlowDownloadExitsZeroKeepingThePartialAndDownloadResumesIt() throws {
        let setup = try Setup("term", size: 4 << 20)
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let token = Self.token("slow")
        let source = try setup.serve(token, rate: 1 << 20)
        try setup.writeFeed([(name: "slow.mp3", token: token)])
        let watch = try setup.watch(["--grace", "2s"])
        let partial = setup.file("slow.mp3.download")
        #expect(watch.waitUntil(30) { DownloadCommandTests.size(partial) > 700 << 10 }, "\(watch.stderr)")
        let signalled = Date()
        #expect(watch.stop(SIGTERM) == 0, "\(watch.stderr)")
        #expect(Date().timeIntervalSince(signalled) < 10, "within the grace (2 s) and the flush")
        #expect(!FileManager.default.fileExists(atPath: setup.file("slow.mp3").path))
        let kept = DownloadCommandTests.size(partial)
        #expect(kept > 700 << 10 && kept < setup.size)
        let row = try #require(try setup.rows().first)
        #expect(row["state"] as? String == "paused" && row["errorKind"] as? String == "download.cancelled", "\(row)")
        #expect(row["bytes"] as? Int == kept, "the partial's length is recorded: \(row)")
        #expect(watch.stderr.contains("paused \(setup.file("slow.mp3").path)"), "\(watch.stderr)")

        // `feedingest download` picks it up where the watch left it.
        try DownloadCommandTests.control(setup.faults, token, "rate=0")
        let rerun = try CommandRunner.run(["download", "--store", setup.store.path, "--dir", setup.downloads.path])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stderr.contains("resumed from"), "\(rerun.stderr)")
        #expect(try DownloadCommandTests.sha256(setup.file("slow.mp3")) == DownloadCommandTests.sha256(source))
        let log = try JSONSerialization.jsonObject(with: Loopback.get(port: setup.faults.port, "/media-log?token=\(token)").body) as? [[String: Any]] ?? []
        #expect(log.last?["range"] as? String == "bytes=\(kept)-" && log.last?["status"] as? Int == 206, "\(log)")
    }

    /// In a network namespace of its own without a default route (offline): a remote enclosure is held (paused, no
    /// request, no failure); when a route appears it is claimed again. (192.0.2.1 is TEST-NET-1 inside the namespace:
    /// nothing leaves it.)
    @Test func offlineRemoteDownloadsAreHeldAndClaimedAgainWhenTheNetworkReturns() throws {
        let setup = try Setup("offline", size: 1024)
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let feed = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>Test Show</title><link>http://127.0.0.1/</link>\n"
            + "<item><title>Remote</title><guid>remote-1</guid><enclosure url=\"http://192.0.2.1:9/remote.mp3\" type=\"audio/mpeg\"/></item>\n"
            + "</channel></rss>\n"
        try Data(feed.utf8).write(to: setup.feed)
        let metrics = setup.directory.appendingPathComponent("feedingest.prom")
        let watch = try WatchProcess(["watch", setup.list.path, "--store", setup.store.path, "--min-interval", "0", "--max-interval", "1s",
                                      "--grace", "1s", "--download", "--dir", setup.downloads.path, "--metrics-file", metrics.path],
                                     in: setup.directory,
                                     prefix: ["/usr/bin/unshare", "-n", "--", "/bin/bash", "-c", "ip link set lo up && exec \"$@\"", "netns"])
        let pid = watch.process.processIdentifier
        #expect(watch.waitUntil(20) { watch.stderr.contains("offline (no default route)") }, "\(watch.stderr)")
        #expect(try watch.waitUntil(20) { try setup.rows().first?["state"] as? String == "paused" }, "\(watch.stderr)")
        let held = try #require(try setup.rows().first)
        #expect(held["error"] as? String == "held while the network is away; nothing was fetched", "\(held)")
        #expect(held["errorKind"] as? String == "download.cancelled")
        #expect(watch.stderr.contains("paused \(setup.file("remote.mp3").path)"), "\(watch.stderr)")
        #expect(!watch.stderr.contains("download failed"), "\(watch.stderr)")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try setup.rows().first?["attempts"] as? Int == held["attempts"] as? Int, "not claimed again while offline")

        #expect(try WatchReachabilityTests.ip(pid, "link add v0 type veth peer name v1").status == 0)
        #expect(try WatchReachabilityTests.ip(pid, "link set v0 up").status == 0)
        #expect(try WatchReachabilityTests.ip(pid, "link set v1 up").status == 0)
        #expect(try WatchReachabilityTests.ip(pid, "route add default dev v0").status == 0)
        #expect(watch.waitUntil(15) { watch.stderr.contains("online again") }, "\(watch.stderr)")
        // Claimed again: a transfer starts (the route leads nowhere, so it stays in flight until the stop).
        #expect(try watch.waitUntil(15) {
            let row = try setup.rows().first
            return row?["state"] as? String == "downloading" || (row?["attempts"] as? Int ?? 0) > (held["attempts"] as? Int ?? 0)
        }, "\((try? setup.rows()) ?? [])")
        #expect(watch.stop() == 0, "\(watch.stderr)")
        #expect(try setup.rows().first?["state"] as? String != "done")
    }

    /// A 404 enclosure fails once, for good: its partial is removed, and the runs that later articles start do not ask
    /// for it again (the watch would otherwise ask every time a feed brings something new).
    @Test func aNotFoundEnclosureIsTriedOnceAcrossDownloadRuns() throws {
        let setup = try Setup("notfound", size: 64 << 10)
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let (gone, first, second) = (Self.token("gone"), Self.token("first"), Self.token("second"))
        _ = try setup.serve(gone)
        try DownloadCommandTests.control(setup.faults, gone, "status=404")
        _ = try setup.serve(first)
        _ = try setup.serve(second)
        try setup.writeFeed([(name: "gone.mp3", token: gone), (name: "one.mp3", token: first)])
        let metrics = setup.directory.appendingPathComponent("feedingest.prom")
        let watch = try setup.watch(["--metrics-file", metrics.path])
        #expect(watch.waitUntil(30) { DownloadCommandTests.size(setup.file("one.mp3")) == setup.size }, "\(watch.stderr)")
        #expect(try watch.waitUntil(30) { try setup.rows().contains { $0["httpStatus"] as? Int == 404 } }, "\(watch.stderr)")

        // A new article: a new download run, which leaves the failed enclosure alone.
        try setup.writeFeed([(name: "gone.mp3", token: gone), (name: "one.mp3", token: first), (name: "two.mp3", token: second)])
        #expect(watch.waitUntil(30) { DownloadCommandTests.size(setup.file("two.mp3")) == setup.size }, "\(watch.stderr)")
        #expect(watch.waitUntil(20) {
            ((try? String(contentsOf: metrics, encoding: .utf8)) ?? "").contains("feedingest_downloads_total{outcome=\"done\"} 2")
        })
        #expect(watch.stop() == 0, "\(watch.stderr)")

        let log = try JSONSerialization.jsonObject(with: Loopback.get(port: setup.faults.port, "/media-log?token=\(gone)").body) as? [[String: Any]] ?? []
        #expect(log.count == 1 && log.first?["status"] as? Int == 404, "\(log)")
        #expect(!FileManager.default.fileExists(atPath: setup.file("gone.mp3.download").path), "no empty partial is left")
        let row = try #require(try setup.rows().first { ($0["url"] as? String)?.contains(gone) == true })
        #expect(row["state"] as? String == "failed" && row["permanentFailure"] as? Bool == true && row["attempts"] as? Int == 1, "\(row)")
        let failures = watch.stderr.components(separatedBy: "download failed").count - 1
        #expect(failures == 1, "\(watch.stderr)")
        #expect(watch.stderr.contains("HTTP 404 Not Found: a permanent failure, not retried until queued again [fetch.http-status]; "
                                      + "'feedingest download --retry-failed' tries it again"), "\(watch.stderr)")
        let text = try String(contentsOf: metrics, encoding: .utf8)
        #expect(text.contains("feedingest_downloads_total{outcome=\"failed\"} 1"), "\(text)")
    }

    @Test func downloadOptionsNeedDownloadAndAreChecked() throws {
        let without = try CommandRunner.run(["watch", "feeds.txt", "--dir", "/tmp/x"])
        #expect(without.status == 2 && without.stderr.contains("--dir is an option of --download"), "\(without.stderr)")
        let jobs = try CommandRunner.run(["watch", "feeds.txt", "--download", "--download-jobs", "0"])
        #expect(jobs.status == 2 && jobs.stderr.contains("--download-jobs needs a number from 1 to 64"), "\(jobs.stderr)")
        let rate = try CommandRunner.run(["watch", "feeds.txt", "--download", "--max-rate", "fast"])
        #expect(rate.status == 2 && rate.stderr.contains("--max-rate needs bytes per second"), "\(rate.stderr)")
        let help = try CommandRunner.run(["watch", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--download-jobs"))
    }
}
