import Foundation
import Synchronization
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `feedingest download` and `downloads` end to end: the built binary, a store ingested from a local feed whose
/// enclosures live on the fault server's Range-capable `/media` route (127.0.0.1), killed, reset, refused, filled up.
@Suite("feedingest download: resume after every failure", .serialized)
struct DownloadCommandTests {
    static func faults() throws -> FaultServer { try FaultServer.shared.get() }

    /// One scenario: a temporary directory, a source file of random bytes, a feed whose enclosures point at the media
    /// route under `tokens`, ingested into a store tagged `download`.
    struct Scenario {
        let directory: URL
        let store: String
        let downloads: URL
        let source: URL
        let tokens: [String]
        let faults: FaultServer

        init(_ label: String, size: Int, tokens count: Int = 1, store: String? = nil, enclosureURLs: [String]? = nil,
             rate: Int = 0, extra: String = "") throws {
            faults = try DownloadCommandTests.faults()
            directory = try Paths.temporaryDirectory("download-\(label)")
            downloads = directory.appendingPathComponent("media")
            self.store = store ?? directory.appendingPathComponent("store.sqlite").path
            source = directory.appendingPathComponent("source.bin")
            var random = SplitMix64(seed: UInt64.random(in: 1...UInt64.max))
            var bytes = [UInt8](repeating: 0, count: size)
            for index in stride(from: 0, to: size, by: 8) {
                let value = random.next()
                for shift in 0..<min(8, size - index) { bytes[index + shift] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(shift))) }
            }
            try Data(bytes).write(to: source)
            let unique = UUID().uuidString.prefix(8)
            tokens = (0..<count).map { "\(label)-\(unique)-\($0)" }
            for token in tokens {
                try DownloadCommandTests.control(faults, token, "file=\(source.path)&rate=\(rate)\(extra)")
            }
            let urls = enclosureURLs ?? tokens.map { faults.url("/media/episode.mp3").absoluteString + "?token=\($0)" }
            var feed = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>Test Show</title><link>http://127.0.0.1/</link>\n"
            for (index, url) in urls.enumerated() {
                let escaped = url.replacingOccurrences(of: "&", with: "&amp;")
                feed += "<item><title>Episode \(index)</title><guid>\(label)-\(index)</guid><pubDate>Mon, 0\(index % 9 + 1) Jun 2026 10:00:00 GMT</pubDate>"
                    + "<enclosure url=\"\(escaped)\" type=\"audio/mpeg\" length=\"\(size)\"/></item>\n"
            }
            feed += "</channel></rss>\n"
            let feedFile = directory.appendingPathComponent("feed.xml")
            try Data(feed.utf8).write(to: feedFile)
            let list = directory.appendingPathComponent("feeds.txt")
            try Data("\(feedFile.path) download\n".utf8).write(to: list)
            let ingest = try CommandRunner.run([list.path, "--store", self.store])
            guard ingest.status == 0 else { throw TestSupportError("ingest failed: \(ingest.stderr)") }
        }

        func download(_ extra: [String] = []) throws -> CommandRunner.Result {
            try CommandRunner.run(["download", "--store", store, "--dir", downloads.path] + extra)
        }

        /// Starts `download` and returns the process, for killing.
        func start(_ extra: [String] = []) throws -> ChildProcess {
            try ChildProcess(CommandRunner.binary.path, ["download", "--store", store, "--dir", downloads.path, "--quiet"] + extra)
        }

        func rows() throws -> [[String: Any]] {
            let listed = try CommandRunner.run(["downloads", "--json", "--store", store])
            return listed.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }

        func log(_ index: Int = 0) throws -> [[String: Any]] {
            let body = try Loopback.get(port: faults.port, "/media-log?token=\(tokens[index])").body
            return try JSONSerialization.jsonObject(with: body) as? [[String: Any]] ?? []
        }

        func file(_ name: String = "episode.mp3") -> URL {
            downloads.appendingPathComponent("Test Show").appendingPathComponent(name)
        }

        /// The partial files left anywhere under the download directory.
        func partials() -> [String] {
            (FileManager.default.enumerator(atPath: downloads.path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".download") }
        }
    }

    static func control(_ faults: FaultServer, _ token: String, _ query: String) throws {
        let reply = try Loopback.get(port: faults.port, "/media-control?token=\(token)&\(query)")
        guard reply.status == 200 else { throw TestSupportError("media-control answered \(reply.status)") }
    }

    static func sha256(_ url: URL) throws -> String {
        let run = try ChildProcess.run("/usr/bin/sha256sum", [url.path])
        return String(run.standardOutput.prefix(64))
    }

    static func size(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? NSNumber)?.intValue ?? -1
    }

    /// Waits until `condition` holds, up to `seconds`.
    static func wait(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }

    // MARK: Kills

    @Test(arguments: ["sqlite", "postgresql"])
    func sigkillAtRandomOffsetsThenRerunGivesTheSourceBytes(_ engine: String) throws {
        var store: String?
        if engine == "postgresql" {
            let server = try PostgresServer.shared.get()
            store = server.uri(try server.createDatabase("download_kill"))
        }
        let size = 6 << 20
        let scenario = try Scenario("kill-\(engine)", size: size, store: store, rate: 3 << 20)
        var killedAt: [Int] = []
        for _ in 0..<3 {
            let partial = scenario.file("episode.mp3.download")
            let before = Self.size(partial)
            let process = try scenario.start(["--checkpoint", "256k"])
            // Kill at a random point once bytes flow (at least 300 KiB more than the last time).
            let target = max(before, 0) + Int.random(in: (300 << 10)...(1200 << 10))
            _ = Self.wait(seconds: 10) { Self.size(partial) >= target || !process.isRunning }
            process.kill(SIGKILL)
            _ = process.waitUntilExit()
            killedAt.append(Self.size(partial))
        }
        #expect(killedAt.allSatisfy { $0 > 0 && $0 < size }, "killed mid-body: \(killedAt)")
        let rows = try scenario.rows()
        let committed = rows.first?["bytes"] as? Int ?? -1
        #expect(committed > 0 && committed <= killedAt.last!, "committed \(committed) after kills at \(killedAt)")
        // The rerun resumes (the dead process's lease is released at once) and completes.
        let final = try scenario.download(["--checkpoint", "256k"])
        #expect(final.status == 0, "\(final.stderr)")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
        #expect(scenario.partials().isEmpty)
        let log = try scenario.log()
        let resumed = log.filter { ($0["status"] as? Int) == 206 }
        #expect(resumed.count >= 3, "every run after a kill resumed with a range: \(log)")
        for request in resumed {
            let range = request["range"] as? String ?? ""
            #expect(range.hasPrefix("bytes=") && range.hasSuffix("-") && (request["if_range"] as? String) == "\"v1\"")
            #expect((request["accept_encoding"] as? String) == "identity")
            #expect((request["start"] as? Int ?? 0) > 0)
        }
        // The last resume started at the committed offset recorded before it.
        #expect(resumed.last?["start"] as? Int == committed)
        let done = try #require(try scenario.rows().first)
        #expect(done["state"] as? String == "done" && done["bytes"] as? Int == size && done["total"] as? Int == size)
        let listed = try CommandRunner.run(["downloads", "--json", "--store", scenario.store])
        let check = try validate(listed.stdout, schema: "download.schema.json", lines: true)
        #expect(check.ok, "\(check.output)")
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalPausesWithThePartialRecordedAndTheRerunResumesThere(_ signal: Int32) throws {
        let size = 4 << 20
        let scenario = try Scenario("signal-\(signal)", size: size, rate: 1 << 20)
        let process = try scenario.start()  // the default 4 MiB checkpoint: only the signal's flush records an offset
        _ = Self.wait(seconds: 10) { Self.size(scenario.file("episode.mp3.download")) > 700 << 10 }
        process.kill(signal)
        #expect(process.waitUntilExit() == 128 + signal)
        let row = try #require(try scenario.rows().first)
        let partial = Self.size(scenario.file("episode.mp3.download"))
        #expect(row["state"] as? String == "paused" && row["errorKind"] as? String == "download.cancelled")
        #expect(partial > 700 << 10 && row["bytes"] as? Int == partial)
        try Self.control(scenario.faults, scenario.tokens[0], "rate=0")
        let run = try scenario.download()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("resumed from"))
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
        let last = try #require(try scenario.log().last)
        #expect(last["range"] as? String == "bytes=\(partial)-" && last["status"] as? Int == 206)
    }

    // MARK: Server behaviours

    @Test func aServerThatIgnoresRangeGetsAFullDownload() throws {
        let size = 3 << 20
        let scenario = try Scenario("norange", size: size, rate: 2 << 20, extra: "&ignore_range=1")
        let process = try scenario.start(["--checkpoint", "128k"])
        _ = Self.wait(seconds: 10) { Self.size(scenario.file("episode.mp3.download")) > 600 << 10 }
        process.kill(SIGKILL)
        _ = process.waitUntilExit()
        try Self.control(scenario.faults, scenario.tokens[0], "rate=0")
        let run = try scenario.download()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
        let log = try scenario.log()
        #expect(log.count == 2)
        // The second request asked for a range; the server sent everything with a 200, written from byte 0.
        #expect((log.last?["range"] as? String)?.hasPrefix("bytes=") == true)
        #expect(log.last?["status"] as? Int == 200 && log.last?["sent"] as? Int == size)
        // Said as it was: a restart from zero, not a resume.
        #expect(run.stderr.contains("(3.0 MiB, restarted from zero instead of resuming from "), "\(run.stderr)")
        #expect(run.stderr.contains(": the server answered 200 with the whole file)") && !run.stderr.contains("resumed from"), "\(run.stderr)")
    }

    @Test func aChangedETagStartsOverInsteadOfSplicing() throws {
        let size = 3 << 20
        let scenario = try Scenario("etag", size: size, rate: 2 << 20)
        let process = try scenario.start(["--checkpoint", "128k"])
        _ = Self.wait(seconds: 10) { Self.size(scenario.file("episode.mp3.download")) > 600 << 10 }
        process.kill(SIGKILL)
        _ = process.waitUntilExit()
        // A new version of the file, with a new ETag, between the runs.
        let second = scenario.directory.appendingPathComponent("second.bin")
        var bytes = try Data(contentsOf: scenario.source)
        bytes.reverse()
        bytes.append(contentsOf: [1, 2, 3])
        try bytes.write(to: second)
        try Self.control(scenario.faults, scenario.tokens[0], "file=\(second.path)&etag=%22v2%22&rate=0")
        let run = try scenario.download()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(second))
        let last = try #require(try scenario.log().last)
        #expect(last["if_range"] as? String == "\"v1\"" && last["status"] as? Int == 200)
        #expect(try scenario.rows().first?["validator"] as? String == "\"v2\"")
    }

    @Test func a416AtCompletionMarksTheFileDone() throws {
        let size = 1 << 20
        // The whole body arrives chunked, then the connection is reset before the last chunk: the transfer fails with
        // every byte on disk and no length ever announced. The resume from the end gets 416 bytes */size.
        let scenario = try Scenario("416", size: size, extra: "&omit_end=1")
        let run = try scenario.download()
        #expect(run.status == 0, "\(run.stderr)")
        let log = try scenario.log()
        #expect(log.count == 2, "\(log)")
        #expect(log.first?["status"] as? Int == 200)
        #expect(log.last?["status"] as? Int == 416 && log.last?["range"] as? String == "bytes=\(size)-")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
        #expect(try scenario.rows().first?["state"] as? String == "done")
    }

    @Test func aResetMidBodyKeepsThePartialAndResumes() throws {
        let size = 2 << 20
        let scenario = try Scenario("reset", size: size, extra: "&reset_after=700000")
        // One attempt only: the run fails with the partial kept; the next run resumes it.
        let first = try scenario.download(["--checkpoint", "64k", "--attempts", "1"])
        #expect(first.status == 1)
        #expect(first.stderr.contains("fetch.truncated") || first.stderr.contains("fetch.network"), "\(first.stderr)")
        let partial = Self.size(scenario.file("episode.mp3.download"))
        #expect(partial > 0 && partial <= 700_000)
        let row = try #require(try scenario.rows().first)
        #expect(row["state"] as? String == "failed" && row["bytes"] as? Int == partial)
        let second = try scenario.download()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
        let last = try #require(try scenario.log().last)
        #expect(last["range"] as? String == "bytes=\(partial)-" && last["status"] as? Int == 206)
        #expect(last["sent"] as? Int == size - partial)
    }

    @Test func aRedirectToAnotherHostIsFollowed() throws {
        let other = try FaultServer()  // another port: another "host"
        let token = "redirect-\(UUID().uuidString.prefix(8))"
        let faults = try Self.faults()
        let url = faults.url("/media-redirect").absoluteString + "?token=\(token)&port=\(other.port)&to=/media/moved.mp3"
        let scenario = try Scenario("redirect", size: 2 << 20, enclosureURLs: [url])
        #expect(try Loopback.get(port: other.port, "/media-control?token=\(token)&file=\(scenario.source.path)&rate=1048576").status == 200)
        // Killed mid-body, then resumed through the redirect: the Range goes to the other host.
        let process = try scenario.start(["--checkpoint", "64k"])
        let file = scenario.downloads.appendingPathComponent("Test Show/media-redirect")
        _ = Self.wait(seconds: 10) { Self.size(scenario.file("media-redirect.download")) > 500 << 10 }
        process.kill(SIGKILL)
        _ = process.waitUntilExit()
        #expect(try Loopback.get(port: other.port, "/media-control?token=\(token)&rate=0").status == 200)
        let run = try scenario.download()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.sha256(file) == Self.sha256(scenario.source))
        let row = try #require(try scenario.rows().first)
        #expect(row["finalURL"] as? String == "http://127.0.0.1:\(other.port)/media/moved.mp3?token=\(token)")
        let served = try JSONSerialization.jsonObject(with: Loopback.get(port: other.port, "/media-log?token=\(token)").body) as? [[String: Any]] ?? []
        #expect(served.count == 2 && served.last?["status"] as? Int == 206 && (served.last?["start"] as? Int ?? 0) > 0, "\(served)")
    }

    // MARK: Refusals and limits

    @Test func anEnclosureThatIsNotHTTPIsRefusedAndNamed() throws {
        let scenario = try Scenario("scheme", size: 1000, enclosureURLs: ["ftp://127.0.0.1/show/ep.mp3", "file:///etc/passwd"])
        let first = try scenario.download()
        #expect(first.status == 1)
        #expect(first.stderr.contains("ftp://127.0.0.1/show/ep.mp3") && first.stderr.contains("file:///etc/passwd"))
        #expect(first.stderr.contains("refused: not an http or https URL"))
        #expect(!FileManager.default.fileExists(atPath: scenario.file("passwd").path))
        #expect(scenario.partials().isEmpty)
        let rows = try scenario.rows()
        #expect(rows.count == 2 && rows.allSatisfy { $0["errorKind"] as? String == "download.unsupported-scheme" })
        // Refused for good: a later run does not try again.
        let second = try scenario.download()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try scenario.rows().allSatisfy { $0["attempts"] as? Int == 1 })
    }

    @Test func aFullDiskKeepsThePartialAndARerunAfterFreeingSpaceCompletes() throws {
        let size = 3 << 20
        let scenario = try Scenario("full", size: size)
        // A small tmpfs as the download directory (the tests run as root in a network namespace).
        try FileManager.default.createDirectory(at: scenario.downloads, withIntermediateDirectories: true)
        let mount = try ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", scenario.downloads.path])
        guard mount.status == 0 else {
            Issue.record("cannot mount a tmpfs (the test needs root): \(mount.standardError)")
            return
        }
        defer { _ = try? ChildProcess.run("/bin/umount", ["-l", scenario.downloads.path]) }
        let first = try scenario.download(["--checkpoint", "64k"])
        #expect(first.status == 1)
        let partialPath = scenario.file("episode.mp3.download").path
        #expect(first.stderr.contains("disk full") && first.stderr.contains(partialPath) && first.stderr.contains("No space left on device"),
                "\(first.stderr)")
        let partial = Self.size(scenario.file("episode.mp3.download"))
        #expect(partial > 0 && partial < size)
        let row = try #require(try scenario.rows().first)
        #expect(row["errorKind"] as? String == "download.disk-full" && (row["bytes"] as? Int ?? 0) > 0)
        // Free space: the file system grows.
        let grow = try ChildProcess.run("/bin/mount", ["-o", "remount,size=16m", scenario.downloads.path])
        #expect(grow.status == 0)
        let second = try scenario.download()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
        let last = try #require(try scenario.log().last)
        #expect(last["status"] as? Int == 206 && (last["start"] as? Int ?? 0) > 0)
    }

    @Test(arguments: ["sqlite", "postgresql"])
    func twoProcessesAtOnceNeverFetchAFileTwice(_ engine: String) throws {
        var store: String?
        if engine == "postgresql" {
            let server = try PostgresServer.shared.get()
            store = server.uri(try server.createDatabase("download_two"))
        }
        let scenario = try Scenario("two-\(engine)", size: 512 << 10, tokens: 6, store: store, rate: 1 << 20)
        let a = try scenario.start(["--jobs", "2"])
        let b = try scenario.start(["--jobs", "2"])
        #expect(a.waitUntilExit() == 0)
        #expect(b.waitUntilExit() == 0)
        for index in scenario.tokens.indices {
            let log = try scenario.log(index)
            #expect(log.count == 1, "token \(index) was fetched \(log.count) times")
        }
        let rows = try scenario.rows()
        #expect(rows.count == 6 && rows.allSatisfy { $0["state"] as? String == "done" && $0["attempts"] as? Int == 1 })
        let names = Set(rows.compactMap { $0["path"] as? String })
        #expect(names.count == 6)  // one feed, six episode.mp3: six different names
        for path in names { #expect(try Self.sha256(URL(fileURLWithPath: path)) == Self.sha256(scenario.source)) }
    }

    @Test func staleDownloadFilesAreReportedAndKept() throws {
        let scenario = try Scenario("stale", size: 1000)
        let folder = scenario.downloads.appendingPathComponent("Old Show")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stale = folder.appendingPathComponent("lost.mp3.download")
        try Data("partial".utf8).write(to: stale)
        // Someone else's file where the enclosure would go keeps its name too.
        try FileManager.default.createDirectory(at: scenario.file().deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: scenario.file())
        let run = try scenario.download()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("stale partial file without a tracker row, left alone: \(stale.path)"))
        #expect(try String(contentsOf: stale, encoding: .utf8) == "partial")
        #expect(try String(contentsOf: scenario.file(), encoding: .utf8) == "mine")
        #expect(try Self.sha256(scenario.file("episode (2).mp3")) == Self.sha256(scenario.source))
    }

    @Test func retentionKeepsTheNewestPerFeed() throws {
        let scenario = try Scenario("keep", size: 2000, tokens: 3)
        let run = try scenario.download(["--keep", "2", "--name", "{feed}/{date} {title}.{ext}"])
        #expect(run.status == 0, "\(run.stderr)")
        // Only the newest two were queued (episodes 2 and 1 by date).
        let rows = try scenario.rows()
        #expect(rows.count == 2)
        let names = rows.compactMap { ($0["path"] as? String).map { ($0 as NSString).lastPathComponent } }.sorted()
        #expect(names == ["2026-06-02 Episode 1.mp3", "2026-06-03 Episode 2.mp3"])
        let again = try scenario.download(["--keep", "1", "--name", "{feed}/{date} {title}.{ext}"])
        #expect(again.status == 0)
        let after = try scenario.rows()
        #expect(after.filter { $0["state"] as? String == "removed" }.count == 1)
        let kept = after.filter { $0["state"] as? String == "done" }.compactMap { $0["path"] as? String }
        #expect(kept.count == 1 && kept[0].hasSuffix("2026-06-03 Episode 2.mp3"))
        #expect(!FileManager.default.fileExists(atPath: scenario.downloads.appendingPathComponent("Test Show/2026-06-02 Episode 1.mp3").path))
    }

    @Test func maxRateAndUsageErrors() throws {
        let scenario = try Scenario("usage", size: 400 << 10)
        for bad in [["--jobs", "0"], ["--max-rate", "fast"], ["--name", "{nope}"], ["--types", "audio"], ["--keep", "0"], ["stray"]] {
            let run = try scenario.download(bad)
            #expect(run.status == 2, "\(bad): \(run.stderr)")
        }
        // Before any download: `downloads` prints nothing on stdout and says why on stderr.
        let empty = try CommandRunner.run(["downloads", "--store", scenario.store])
        #expect(empty.status == 0 && empty.stdout.isEmpty && empty.stderr.contains("no downloads in the store yet"), "\(empty.stderr)")
        let unknown = try scenario.download(["--feed", "http://127.0.0.1:1/none.xml"])
        #expect(unknown.status == 2 && unknown.stderr.contains("no feed"))
        // A receive limit (libcurl's; the rate itself is measured by the benchmark, not asserted here): the bytes still
        // arrive intact.
        let run = try scenario.download(["--max-rate", "400k"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
    }
}

/// Permanent failures (404, 410: marked failed, the partial removed, later runs skip them and exit 0 until
/// `--retry-failed`), transient ones (503: exit 1, partial kept, tried by every run), and what a rerun says of a resume.
extension DownloadCommandTests {
    static let failedForGoodLine = "1 failed for good, not retried ('feedingest download --retry-failed' tries it again)"

    /// Fails the first run after 400,000 bytes (one attempt): the partial file is kept; returns its length.
    static func leavePartial(_ scenario: Scenario) throws -> Int {
        try control(scenario.faults, scenario.tokens[0], "reset_after=400000")
        let first = try scenario.download(["--checkpoint", "64k", "--attempts", "1"])
        #expect(first.status == 1, "\(first.stderr)")
        let partial = size(scenario.file("episode.mp3.download"))
        #expect(partial > 0 && partial <= 400_000)
        #expect(try scenario.rows().first?["bytes"] as? Int == partial)
        return partial
    }

    @Test(arguments: ["sqlite", "postgresql"])
    func aNotFoundEnclosureFailsOnceThenIsSkippedUntilRetryFailed(_ engine: String) throws {
        var store: String?
        if engine == "postgresql" {
            let server = try PostgresServer.shared.get()
            store = server.uri(try server.createDatabase("download_notfound"))
        }
        let scenario = try Scenario("notfound-\(engine)", size: 300 << 10, store: store, extra: "&status=404")
        let first = try scenario.download()
        #expect(first.status == 1, "\(first.stderr)")
        #expect(first.stderr.contains("HTTP 404 Not Found: a permanent failure, not retried until queued again [fetch.http-status]"), "\(first.stderr)")
        #expect(first.stderr.contains("downloads: 0 done, 1 failed,") && first.stderr.contains(Self.failedForGoodLine), "\(first.stderr)")
        #expect(scenario.partials().isEmpty, "no empty .download is left: \(scenario.partials())")
        let row = try #require(try scenario.rows().first)
        #expect(row["state"] as? String == "failed" && row["httpStatus"] as? Int == 404 && row["permanentFailure"] as? Bool == true, "\(row)")
        #expect(row["errorKind"] as? String == "fetch.http-status" && row["bytes"] as? Int == 0)
        let listed = try CommandRunner.run(["downloads", "--json", "--store", scenario.store])
        let check = try validate(listed.stdout, schema: "download.schema.json", lines: true)
        #expect(check.ok, "\(check.output)")
        let table = try CommandRunner.run(["downloads", "--store", scenario.store])
        #expect(table.status == 0 && table.stdout.hasPrefix("STATE") && table.stdout.contains("failed"))
        #expect(table.stdout.contains("error (fetch.http-status): HTTP 404 Not Found: a permanent failure")
                && table.stdout.contains("'feedingest download --retry-failed' tries again"), "\(table.stdout)")

        // Later runs skip it, exit 0 and say how to try again; the server is not asked again.
        let second = try scenario.download()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("downloads: 0 done, 0 failed,") && second.stderr.contains(Self.failedForGoodLine), "\(second.stderr)")
        #expect(try scenario.log().count == 1)

        // The file is back: --retry-failed queues it again and downloads it.
        try Self.control(scenario.faults, scenario.tokens[0], "status=0")
        let retried = try scenario.download(["--retry-failed"])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stderr.contains("feedingest: queued again 1 download that failed for good"), "\(retried.stderr)")
        #expect(!retried.stderr.contains("failed for good, not retried"), "\(retried.stderr)")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
        let done = try #require(try scenario.rows().first)
        #expect(done["state"] as? String == "done" && done["httpStatus"] == nil && done["permanentFailure"] == nil && done["error"] == nil, "\(done)")
        #expect(done["attempts"] as? Int == 2)
    }

    @Test func aGoneEnclosureRemovesItsPartialAndLaterRunsExitZero() throws {
        let scenario = try Scenario("gone", size: 1 << 20)
        let partial = try Self.leavePartial(scenario)
        try Self.control(scenario.faults, scenario.tokens[0], "status=410")
        let second = try scenario.download()
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("HTTP 410 Gone: a permanent failure") && second.stderr.contains("[fetch.gone]"), "\(second.stderr)")
        #expect(scenario.partials().isEmpty, "the partial is removed: \(scenario.partials())")
        let row = try #require(try scenario.rows().first)
        #expect(row["state"] as? String == "failed" && row["httpStatus"] as? Int == 410 && row["permanentFailure"] as? Bool == true)
        #expect(row["bytes"] as? Int == 0)
        let asked = try #require(try scenario.log().last)
        #expect(asked["range"] as? String == "bytes=\(partial)-" && asked["status"] as? Int == 410)
        let third = try scenario.download()
        #expect(third.status == 0 && third.stderr.contains(Self.failedForGoodLine), "\(third.stderr)")
        #expect(try scenario.log().count == 2)
    }

    @Test func aServiceUnavailableEnclosureKeepsItsPartialAndEveryRunTriesIt() throws {
        let scenario = try Scenario("unavailable", size: 1 << 20)
        let partial = try Self.leavePartial(scenario)
        try Self.control(scenario.faults, scenario.tokens[0], "status=503")
        for run in 1...2 {
            let failed = try scenario.download(["--attempts", "1"])
            #expect(failed.status == 1, "\(failed.stderr)")
            #expect(failed.stderr.contains("[fetch.service-unavailable]") && !failed.stderr.contains("failed for good"), "\(failed.stderr)")
            #expect(Self.size(scenario.file("episode.mp3.download")) == partial)
            let row = try #require(try scenario.rows().first)
            #expect(row["state"] as? String == "failed" && row["httpStatus"] as? Int == 503 && row["permanentFailure"] == nil, "\(row)")
            #expect(row["bytes"] as? Int == partial)
            #expect(try scenario.log().count == 1 + run)
        }
        try Self.control(scenario.faults, scenario.tokens[0], "status=0")
        let done = try scenario.download()
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stderr.contains("resumed from") && !done.stderr.contains("restarted from zero"), "\(done.stderr)")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
        let last = try #require(try scenario.log().last)
        #expect(last["range"] as? String == "bytes=\(partial)-" && last["status"] as? Int == 206)
    }

    @Test func aResumeAnsweredWithTheWholeFileSaysRestartedFromZero() throws {
        let scenario = try Scenario("restart", size: 1 << 20)
        _ = try Self.leavePartial(scenario)
        try Self.control(scenario.faults, scenario.tokens[0], "ignore_range=1")
        let run = try scenario.download()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("(1.0 MiB, restarted from zero instead of resuming from "), "\(run.stderr)")
        #expect(run.stderr.contains("the server answered 200 with the whole file)") && !run.stderr.contains("resumed from"), "\(run.stderr)")
        #expect(try Self.sha256(scenario.file()) == Self.sha256(scenario.source))
        #expect(try scenario.log().last?["status"] as? Int == 200)
    }

    @Test func theHelpDocumentsRetryFailedAndWhatFailsForGood() throws {
        let help = try CommandRunner.run(["download", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("[--retry-failed]") && help.stdout.contains("--retry-failed    queue again the downloads that failed for good"),
                "\(help.stdout)")
        #expect(help.stdout.contains("404 Not Found, 410 Gone, and 401 and 403 too"), "\(help.stdout)")
        let downloads = try CommandRunner.run(["downloads", "--help"])
        #expect(downloads.status == 0 && downloads.stdout.contains("'feedingest download --retry-failed'"), "\(downloads.stdout)")
    }
}
