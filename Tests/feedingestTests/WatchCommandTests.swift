import Foundation
import Support
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `feedingest watch` running in the background: stdout read line by line as it comes, stderr into a file that can be
/// read at any time.
final class WatchProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` and the files are set in init and never replaced; the lines read are behind a Mutex.
    let process = Process()
    let stderrFile: URL
    private final class Lines: Sendable { let value = Lock<[String]>([]) }
    private let lines = Lines()
    private let reader = DispatchGroup()

    /// Starts `feedingest ARGUMENTS`, or `PREFIX… feedingest ARGUMENTS` (a namespace wrapper, say).
    init(_ arguments: [String], in directory: URL, name: String = "watch", prefix: [String] = [], environment: [String: String]? = nil) throws {
        stderrFile = directory.appendingPathComponent("\(name).stderr")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        if prefix.isEmpty {
            process.executableURL = CommandRunner.binary
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: prefix[0])
            process.arguments = Array(prefix.dropFirst()) + [CommandRunner.binary.path] + arguments
        }
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        reader.enter()
        let handle = output.fileHandleForReading
        Thread { [lines, reader] in
            defer { reader.leave() }
            var buffer: [UInt8] = []
            while true {
                let data = handle.availableData
                if data.isEmpty { return }
                buffer.append(contentsOf: data)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    lines.value.withLock { $0.append(line) }
                }
            }
        }.start()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The stdout lines so far.
    var output: [String] { lines.value.withLock { $0 } }
    /// The article objects printed so far.
    var articles: [[String: Any]] {
        output.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
    /// Everything stderr said so far.
    var stderr: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// Polls `condition` every 50 ms until it holds or `seconds` pass; whether it held.
    @discardableResult
    func waitUntil(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return try condition()
    }

    /// Sends `signal` and waits (at most `seconds`) for the exit; the exit status, or nil when it did not exit.
    func stop(_ signal: Int32 = SIGTERM, within seconds: Double = 20) -> Int32? {
        if process.isRunning { kill(process.processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        guard !process.isRunning else { return nil }
        reader.wait()
        return process.terminationStatus
    }
}

/// The fault server's `/watch` feeds: their items set on request, each request's time and status logged.
extension FaultServer {
    /// `http://127.0.0.1:PORT/watch?token=TOKEN`.
    func watchURL(_ token: String) -> String { url("/watch?token=\(token)").absoluteString }

    /// Sets the feed of `token` to `items` items.
    func setWatchItems(_ token: String, _ items: Int) throws {
        _ = try Loopback.get(port: port, "/watch-set?token=\(token)&items=\(items)")
    }

    /// The statuses of the requests for `token`'s feed, in order, with their times.
    func watchLog(_ token: String) throws -> [(time: Date, status: Int)] {
        let body = try Loopback.get(port: port, "/watch-log?token=\(token)").body
        let entries = try JSONSerialization.jsonObject(with: body) as? [[Double]] ?? []
        return entries.map { (Date(timeIntervalSince1970: $0[0]), Int($0[1])) }
    }
}

@Suite("feedingest watch: schedule, live list, lifecycle, metrics", .serialized)
struct WatchCommandTests {
    static func faults() throws -> FaultServer { try FaultServer.shared.get() }

    /// The store's feeds by URL, unsubscribed ones too (`feeds --json --all`).
    static func feeds(_ store: URL) throws -> [String: [String: Any]] {
        let result = try CommandRunner.run(["feeds", "--json", "--all", "--store", store.path])
        var byURL: [String: [String: Any]] = [:]
        for line in result.lines {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            byURL[object["url"] as? String ?? ""] = object
        }
        return byURL
    }

    static func token(_ name: String) -> String { "\(name)-\(UInt32.random(in: 0...UInt32.max))" }

    @Test func articlesAppearAsTheServedFeedChangesWith304sInBetweenAndMetrics() throws {
        let faults = try Self.faults()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = Self.token("changes")
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(faults.watchURL(token)) news\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let metrics = directory.appendingPathComponent("feedingest.prom")
        let watch = try WatchProcess([list.path, "--store", store.path, "--min-interval", "0", "--max-interval", "0.5s",
                                      "--metrics-file", metrics.path].prepending("watch"), in: directory)
        #expect(watch.waitUntil(20) { watch.articles.count >= 3 }, "\(watch.stderr)")
        // Unchanged: the next fetches are conditional and answered 304, and print nothing.
        #expect(try watch.waitUntil(20) { try faults.watchLog(token).filter { $0.status == 304 }.count >= 2 })
        #expect(watch.articles.count == 3)
        try faults.setWatchItems(token, 5)
        #expect(watch.waitUntil(20) { watch.articles.count >= 5 }, "\(watch.stderr)")
        let printed = watch.articles
        #expect(printed.map { $0["status"] as? String } == Array(repeating: "new", count: 5))
        #expect(Set(printed.compactMap { $0["title"] as? String }).count == 5)
        // The metrics file: written atomically every few seconds.
        #expect(watch.waitUntil(20) {
            let text = (try? String(contentsOf: metrics, encoding: .utf8)) ?? ""
            return text.contains("feedingest_articles_total{change=\"new\"} 5") && text.contains("feedingest_feeds 1")
        })
        let text = try String(contentsOf: metrics, encoding: .utf8)
        #expect(text.contains("# TYPE feedingest_fetches_total counter"))
        #expect(text.contains("feedingest_fetches_total{outcome=\"not_modified\"}"))
        #expect(!text.contains("feedingest_fetches_total{outcome=\"not_modified\"} 0"), "\(text)")
        #expect(text.contains("\nfeedingest_offline "), "1 in the tests' namespace (no default route), where loopback runs on")
        #expect(watch.stop() == 0, "\(watch.stderr)")
        #expect(watch.stderr.contains("stopped"), "\(watch.stderr)")

        let log = try faults.watchLog(token)
        let gaps = zip(log.dropFirst(), log).map { $0.time.timeIntervalSince($1.time) }
        #expect(gaps.allSatisfy { $0 >= 0.3 }, "never polled faster than its interval less the jitter: \(gaps)")
        let feed = try #require(try Self.feeds(store)[faults.watchURL(token)])
        #expect(feed["articles"] as? Int == 5)
        #expect((feed["interval"] as? Double).map { $0 <= 0.5 } == true, "\(feed)")
        #expect(feed["scheduleReason"] as? String == "gap", "\(feed)")
        #expect(feed["tags"] as? [String] == ["news"])
        #expect(try validate(try CommandRunner.run(["feeds", "--json", "--store", store.path]).stdout,
                             schema: "feed.schema.json", lines: true).ok)
    }

    @Test func listEditsTakeEffectWithoutARestart() throws {
        let faults = try Self.faults()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b) = (Self.token("list-a"), Self.token("list-b"))
        try faults.setWatchItems(b, 2)
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(faults.watchURL(a))\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let watch = try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "0", "--max-interval", "0.5s"],
                                     in: directory)
        #expect(watch.waitUntil(20) { watch.articles.count >= 3 }, "\(watch.stderr)")

        // An added line (and a bad one, reported with its number) by appending.
        let handle = try FileHandle(forWritingTo: list)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\(faults.watchURL(b)) tech\nftp://bad.example/feed\n".utf8))
        try handle.close()
        #expect(watch.waitUntil(20) { watch.articles.count >= 5 }, "\(watch.stderr)")
        #expect(Set(watch.articles.compactMap { $0["feed"] as? String }) == [faults.watchURL(a), faults.watchURL(b)])
        #expect(watch.waitUntil(10) { watch.stderr.contains("feeds.txt:3: ") }, "\(watch.stderr)")

        // An editor's save: a new file renamed over the list, without a, with b's tags changed.
        let saved = directory.appendingPathComponent(".feeds.txt.swp")
        try Data("\(faults.watchURL(b)) science\n".utf8).write(to: saved)
        #expect(rename(saved.path, list.path) == 0)
        #expect(try watch.waitUntil(20) { try Self.feeds(store)[faults.watchURL(b)]?["tags"] as? [String] == ["science"] },
                "\((try? Self.feeds(store)) ?? [:]) \(watch.stderr)")
        #expect(watch.waitUntil(10) { watch.stderr.contains("1 feed (0 added, 1 removed)") }, "\(watch.stderr)")
        Thread.sleep(forTimeInterval: 1)  // a fetch of a already under way when the list changed may finish
        let before = try faults.watchLog(a).count
        let bBefore = try faults.watchLog(b).count
        Thread.sleep(forTimeInterval: 2)
        #expect(try faults.watchLog(a).count == before, "a removed line is no longer fetched")
        #expect(try faults.watchLog(b).count > bBefore, "the others go on")
        #expect(watch.stop() == 0, "\(watch.stderr)")
        #expect(try Self.feeds(store)[faults.watchURL(a)]?["articles"] as? Int == 3, "its articles stay")
        #expect(try Self.feeds(store)[faults.watchURL(a)]?["subscribed"] as? Bool == false, "unsubscribed")
    }

    @Test func anOPMLListIsWatchedTheSameWay() throws {
        let faults = try Self.faults()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b) = (Self.token("opml-a"), Self.token("opml-b"))
        func opml(_ body: String) -> Data {
            Data("<?xml version=\"1.0\"?><opml version=\"2.0\"><head><title>feeds</title></head><body>\(body)</body></opml>".utf8)
        }
        func outline(_ token: String) -> String {
            "<outline type=\"rss\" text=\"\(token)\" xmlUrl=\"\(faults.watchURL(token).replacingOccurrences(of: "&", with: "&amp;"))\"/>"
        }
        let list = directory.appendingPathComponent("subscriptions.opml")
        try opml(outline(a)).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let watch = try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "0", "--max-interval", "0.5s"],
                                     in: directory)
        #expect(watch.waitUntil(20) { watch.articles.count >= 3 }, "\(watch.stderr)")
        try opml(outline(a) + "<outline text=\"Science\">\(outline(b))</outline>").write(to: list, options: .atomic)
        #expect(watch.waitUntil(20) { watch.articles.count >= 6 }, "\(watch.stderr)")
        #expect(try watch.waitUntil(10) { try Self.feeds(store)[faults.watchURL(b)]?["tags"] as? [String] == ["Science"] })
        #expect(watch.stop() == 0, "\(watch.stderr)")
    }

    @Test func sigtermLetsTheFeedsInFlightFinishWithinTheGraceAndLeavesNothingPartial() throws {
        let faults = try Self.faults()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let quick = Self.token("term-quick")
        // 2,000 items dripped over ~12 s: still in flight when the signal comes, and longer than the grace.
        let slow = faults.url("/drip?items=2000&size=500&tick_ms=10&token=\(Self.token("term-slow"))").absoluteString
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(faults.watchURL(quick))\n\(slow)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let watch = try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "0", "--max-interval", "1h",
                                      "--grace", "1s"], in: directory)
        #expect(watch.waitUntil(20) { watch.articles.contains { $0["feed"] as? String == faults.watchURL(quick) } }, "\(watch.stderr)")
        let started = Date()
        #expect(watch.stop(SIGTERM) == 0, "\(watch.stderr)")
        #expect(Date().timeIntervalSince(started) < 10, "the grace is 1 s")
        #expect(watch.stderr.contains("stopping"), "\(watch.stderr)")
        let feeds = try Self.feeds(store)
        let slowFeed = try #require(feeds[slow])
        // Cancelled: not recorded as fetched, so the next start fetches it in full; what was printed is what is stored.
        #expect(slowFeed["lastFetch"] == nil && slowFeed["consecutiveFailures"] as? Int == 0, "\(slowFeed)")
        let stored = try CommandRunner.run(["articles", "--store", store.path]).lines.count
        #expect(stored == watch.articles.count)
        #expect(feeds.values.reduce(0) { $0 + ($1["articles"] as? Int ?? 0) } == stored)
    }

    @Test func aSecondSignalExitsAtOnce() throws {
        let faults = try Self.faults()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let slow = faults.url("/drip?items=2000&size=500&tick_ms=10&token=\(Self.token("twice"))").absoluteString
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(slow)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let watch = try WatchProcess(["watch", list.path, "--store", store.path, "--grace", "60s"], in: directory)
        #expect(watch.waitUntil(20) { watch.articles.count >= 1 }, "\(watch.stderr)")
        kill(watch.process.processIdentifier, SIGINT)
        #expect(watch.waitUntil(10) { watch.stderr.contains("stopping") })
        #expect(watch.stop(SIGINT, within: 5) == 130)
        let check = try CommandRunner.run(["feeds", "--store", store.path])
        #expect(check.status == 0, "the store is still readable: \(check.stderr)")
    }

    @Test func aRestartKeepsTheScheduleAndNeverPollsEarly() throws {
        let faults = try Self.faults()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = Self.token("restart")
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(faults.watchURL(token))\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let first = try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "1h"], in: directory, name: "first")
        #expect(first.waitUntil(20) { first.articles.count == 3 }, "\(first.stderr)")
        #expect(first.stop() == 0)
        let feed = try #require(try Self.feeds(store)[faults.watchURL(token)])
        let next = try #require(ReadCommandsTests.date(feed["nextFetch"]))
        #expect(next > Date().addingTimeInterval(3_000), "at least the minimum interval less the jitter: \(feed)")
        #expect((feed["interval"] as? Double ?? 0) >= 3_600)

        let second = try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "1h"], in: directory, name: "second")
        Thread.sleep(forTimeInterval: 3)
        #expect(second.process.isRunning)
        #expect(second.stop() == 0, "\(second.stderr)")
        #expect(try faults.watchLog(token).count == 1, "the restart did not fetch the feed before its next fetch")
        #expect(second.articles.isEmpty)
    }

    @Test func aFeedThatKeepsFailingIsPolledAtTheMaximumAndShowsAsFailing() throws {
        let faults = try Self.faults()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = faults.url("/status?code=500&token=\(Self.token("failing"))").absoluteString
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(broken)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let watch = try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "0", "--max-interval", "1s"],
                                     in: directory)
        #expect(try watch.waitUntil(30) { (try Self.feeds(store)[broken]?["consecutiveFailures"] as? Int ?? 0) >= 4 }, "\(watch.stderr)")
        #expect(watch.stop() == 0)
        let feed = try #require(try Self.feeds(store)[broken])
        #expect(feed["status"] as? String == "failing", "\(feed)")
        #expect(feed["scheduleReason"] as? String == "backoff")
        #expect(feed["interval"] as? Double == 1, "doubling from the backoff, capped at the maximum: \(feed)")
        #expect(watch.stderr.contains("HTTP 500") || watch.stderr.contains("500"), "\(watch.stderr)")
        let table = try CommandRunner.run(["feeds", "--store", store.path])
        #expect(table.lines.contains { $0.hasPrefix("failing ") && $0.contains("1s (backoff)") }, "\(table.stdout)")
    }

    @Test func underSystemdItSendsReadyStatusWatchdogAndStopping() throws {
        let faults = try Self.faults()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notify.sock").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let received = Lock<[String]>([])
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                let message = String(decoding: buffer[0..<count], as: UTF8.self)
                received.withLock { $0.append(message) }
            }
        }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(faults.watchURL(Self.token("notify")))\n".utf8).write(to: list)
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = path
        environment["WATCHDOG_USEC"] = "2000000"
        let watch = try WatchProcess(["watch", list.path, "--store", directory.appendingPathComponent("s.sqlite").path],
                                     in: directory, environment: environment)
        // WATCHDOG_PID is not set, so the watchdog is meant for whoever reads WATCHDOG_USEC: the service.
        #expect(watch.waitUntil(20) { drain(); return received.withLock { $0.contains { $0.hasPrefix("READY=1") } } })
        #expect(watch.waitUntil(20) {
            drain()
            return received.withLock { $0.contains("WATCHDOG=1") && $0.contains { $0.hasPrefix("STATUS=1 feed") } }
        }, "\(received.withLock { $0 })")
        #expect(watch.stop() == 0)
        drain()
        let messages = received.withLock { $0 }
        #expect(messages.first?.hasPrefix("READY=1\nSTATUS=") == true, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("STOPPING=1") }, "\(messages)")
    }

    @Test func onATerminalStderrCarriesAStatusLine() throws {
        let faults = try Self.faults()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(faults.watchURL(Self.token("tty")))\n".utf8).write(to: list)
        let out = directory.appendingPathComponent("out.ndjson")
        // script(1) gives the command a terminal; stdout goes to a file, so the terminal shows stderr alone.
        let command = "exec '\(CommandRunner.binary.path)' watch '\(list.path)' --store '\(directory.path)/s.sqlite' "
            + "--min-interval 0 --max-interval 1s > '\(out.path)'"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        let terminal = Pipe()
        process.standardOutput = terminal
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let screen = Lock("")
        Thread {
            while true {
                let data = terminal.fileHandleForReading.availableData
                if data.isEmpty { return }
                screen.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }.start()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !screen.withLock({ $0.contains("3 articles today") }) { Thread.sleep(forTimeInterval: 0.1) }
        // The service is script's child: stop it gracefully, and script ends with it.
        let children = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(process.processIdentifier)/children",
                                    encoding: .utf8)) ?? ""
        for child in children.split(separator: " ").compactMap({ Int32($0) }) { kill(child, SIGTERM) }
        process.waitUntilExit()
        let text = screen.withLock { $0 }
        #expect(text.contains("\r\u{1B}[K1 feed · "), "redrawn in place: \(text.debugDescription)")
        #expect(text.contains(" due in 1 min · ") && text.contains(" in flight · ") && text.contains("3 articles today"), "\(text)")
        #expect(text.contains("online") || text.contains("paused (no default route)"), "\(text)")
        #expect(try String(contentsOf: out, encoding: .utf8).split(separator: "\n").count == 3, "stdout kept only articles")
    }

    @Test func usageErrors() throws {
        let noList = try CommandRunner.run(["watch"])
        #expect(noList.status == 2 && noList.stderr.contains("watch needs a feed list"))
        let stdin = try CommandRunner.run(["watch", "-"])
        #expect(stdin.status == 2 && stdin.stderr.contains("not stdin"))
        let bad = try CommandRunner.run(["watch", "feeds.txt", "--min-interval", "soon"])
        #expect(bad.status == 2 && bad.stderr.contains("--min-interval needs a duration"))
        let inverted = try CommandRunner.run(["watch", "feeds.txt", "--min-interval", "2h", "--max-interval", "1h"])
        #expect(inverted.status == 2 && inverted.stderr.contains("above --max-interval"))
        let missing = try CommandRunner.run(["watch", "/nonexistent/feeds.txt", "--store", "/nonexistent/s.sqlite"])
        #expect(missing.status == 2 && missing.stderr.contains("cannot read the feed list"))
        let help = try CommandRunner.run(["watch", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--metrics-file"))
    }
}

extension Array where Element == String {
    func prepending(_ first: String) -> [String] { [first] + self }
}

/// Reachability with the built binary: `feedingest watch` in a network namespace of its own (inside the tests' own,
/// which has only loopback), where a veth pair gives a default route that leads nowhere (this kernel has no dummy
/// links), then takes it away. The remote feed is on TEST-NET-1 (192.0.2.1, RFC 5737): in the namespace no packet to it
/// can leave, with or without the route.
@Suite("feedingest watch: pausing and resuming with the default route", .serialized)
struct WatchReachabilityTests {
    static func ip(_ pid: Int32, _ arguments: String) throws -> ChildProcess.Finished {
        try ChildProcess.run("/usr/bin/nsenter", ["--net=/proc/\(pid)/ns/net", "ip"] + arguments.split(separator: " ").map(String.init))
    }

    @Test func remoteFeedsPauseWithoutADefaultRouteAndResumeWithinSecondsWhenOneAppears() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let local = directory.appendingPathComponent("local.xml")
        try Data(FaultServerFeeds.rss(items: 2).utf8).write(to: local)
        let remote = "http://192.0.2.1:9/feed.xml"
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(local.path)\n\(remote)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let watch = try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "0", "--max-interval", "1s",
                                      "--timeout", "2", "--grace", "1s"], in: directory,
                                     prefix: ["/usr/bin/unshare", "-n", "--", "/bin/bash", "-c", "ip link set lo up && exec \"$@\"", "netns"])
        let pid = watch.process.processIdentifier
        #expect(watch.waitUntil(20) { watch.stderr.contains("offline (no default route): pausing 1 remote feed") }, "\(watch.stderr)")
        #expect(watch.waitUntil(20) { watch.articles.count >= 2 }, "the local feed runs on: \(watch.stderr)")
        Thread.sleep(forTimeInterval: 2)
        let paused = try #require(try WatchCommandTests.feeds(store)[remote])
        #expect(paused["lastFetch"] == nil && paused["consecutiveFailures"] as? Int == 0,
                "paused: no transfer, no failure counted: \(paused)")
        #expect(watch.stderr.components(separatedBy: "offline (").count == 2, "one line: \(watch.stderr)")

        #expect(try Self.ip(pid, "link add v0 type veth peer name v1").status == 0)
        #expect(try Self.ip(pid, "link set v0 up").status == 0)
        #expect(try Self.ip(pid, "link set v1 up").status == 0)
        let added = Date()
        #expect(try Self.ip(pid, "route add default dev v0").status == 0)
        #expect(watch.waitUntil(15) { watch.stderr.contains("online again") }, "\(watch.stderr)")
        let resumedAfter = Date().timeIntervalSince(added)
        #expect(resumedAfter < 10, "resumed within seconds (debounced): \(resumedAfter) s")
        // Resumed: the remote feed is tried (and times out: the route leads nowhere).
        #expect(try watch.waitUntil(20) { try WatchCommandTests.feeds(store)[remote]?["lastFetch"] != nil }, "\(watch.stderr)")

        let removed = Date()
        #expect(try Self.ip(pid, "route del default dev v0").status == 0)
        #expect(watch.waitUntil(15) { watch.stderr.components(separatedBy: "offline (no default route)").count == 3 }, "\(watch.stderr)")
        print(String(format: "watch reachability: resumed %.2f s after the default route appeared, paused %.2f s after it went",
                     resumedAfter, Date().timeIntervalSince(removed)))
        #expect(watch.stop() == 0, "\(watch.stderr)")
    }
}

extension WatchReachabilityTests {
    /// With a default route, but every transfer to three hosts failing with "network unreachable" (a `throw` route for
    /// TEST-NET-1 ends the lookup as if there were no route): paused on that evidence alone, nothing counted as failed.
    @Test func transfersToSeveralHostsFailingWithoutANetworkPauseTooAndARouteChangeResumes() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let local = directory.appendingPathComponent("local.xml")
        try Data(FaultServerFeeds.rss(items: 2).utf8).write(to: local)
        let remotes = (1...3).map { "http://192.0.2.\($0):9/feed.xml" }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data(([local.path] + remotes).joined(separator: "\n").utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let setUp = "ip link set lo up && ip link add v0 type veth peer name v1 && ip link set v0 up && ip link set v1 up "
            + "&& ip route add default dev v0 && ip route add throw 192.0.2.0/24 && exec \"$@\""
        let watch = try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "0", "--max-interval", "1s",
                                      "--timeout", "2", "--grace", "1s"], in: directory,
                                     prefix: ["/usr/bin/unshare", "-n", "--", "/bin/bash", "-c", setUp, "netns"])
        let pid = watch.process.processIdentifier
        #expect(watch.waitUntil(20) { watch.stderr.contains("offline (transfers to 3 hosts failed without a network") },
                "\(watch.stderr)")
        #expect(!watch.stderr.contains("no default route"), "the route is there: \(watch.stderr)")
        #expect(watch.waitUntil(20) { watch.articles.count >= 2 }, "the local feed runs on: \(watch.stderr)")
        let feeds = try WatchCommandTests.feeds(store)
        for remote in remotes {
            let feed = try #require(feeds[remote])
            #expect(feed["lastFetch"] == nil && feed["consecutiveFailures"] as? Int == 0, "no failure counted: \(feed)")
        }
        // A new default route (another network) is a network change: the old evidence is dropped and the feeds resume.
        #expect(try WatchReachabilityTests.ip(pid, "route del default dev v0").status == 0)
        Thread.sleep(forTimeInterval: 1)  // still paused, now for want of a route too: no second line
        #expect(!watch.stderr.contains("online again"))
        #expect(try WatchReachabilityTests.ip(pid, "route add default dev v0").status == 0)
        #expect(watch.waitUntil(15) { watch.stderr.contains("online again") }, "\(watch.stderr)")
        #expect(watch.stop() == 0, "\(watch.stderr)")
    }
}

/// A small RSS document for local feeds.
enum FaultServerFeeds {
    static func rss(items: Int) -> String {
        let entries = (0..<items).map { index in
            "<item><title>Local \(index)</title><guid>local-\(index)</guid><pubDate>Mon, 0\(index + 1) Jun 2026 10:00:00 GMT</pubDate></item>"
        }
        return "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Local</title>" + entries.joined() + "</channel></rss>"
    }
}

/// Two `watch` processes on one PostgreSQL store (the tests' own server).
@Suite("feedingest watch: two processes on one PostgreSQL store", .serialized)
struct WatchPostgresTests {
    @Test func twoWatchersNeverFetchAFeedTwiceInItsIntervalAndTheSurvivorTakesOverAKilledOnesFeeds() throws {
        let pg = try PostgresServer.shared.get()
        let database = try pg.createDatabase("watch_two")
        let faults = try FaultServer.shared.get()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokens = (0..<12).map { _ in WatchCommandTests.token("pg") }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data(tokens.map(faults.watchURL).joined(separator: "\n").utf8).write(to: list)
        let arguments = ["watch", list.path, "--store", pg.uri(database), "--min-interval", "1s", "--max-interval", "1s",
                         "--lease", "1s", "--jobs", "2"]
        let a = try WatchProcess(arguments, in: directory, name: "a")
        let b = try WatchProcess(arguments, in: directory, name: "b")
        #expect(a.waitUntil(30) { a.articles.count + b.articles.count >= 36 }, "\(a.stderr)\n\(b.stderr)")
        Thread.sleep(forTimeInterval: 4)  // a few intervals, both at work
        let keys = (a.articles + b.articles).map { "\($0["feed"] ?? "")#\($0["id"] ?? "")" }
        #expect(keys.count == 36 && Set(keys).count == 36, "every article printed once, by one of the two")

        let killed = Date()
        kill(a.process.processIdentifier, SIGKILL)  // no graceful stop: whatever it held stays leased until its lease ends
        a.process.waitUntilExit()
        for token in tokens { try faults.setWatchItems(token, 4) }
        #expect(b.waitUntil(30) { b.articles.filter { ($0["title"] as? String)?.hasSuffix(" 3") == true }.count == 12 },
                "the survivor fetches every feed, those the killed one held included: \(b.stderr)")
        var shortest = Double.infinity
        var requests = 0
        for token in tokens {
            let log = try faults.watchLog(token)
            #expect(log.contains { $0.time > killed }, "\(token) is fetched after the kill")
            let gaps = zip(log.dropFirst(), log).map { $0.time.timeIntervalSince($1.time) }
            #expect(gaps.allSatisfy { $0 >= 0.8 }, "never twice within its interval (1 s less the jitter): \(token) \(gaps)")
            shortest = min(shortest, gaps.min() ?? .infinity)
            requests += log.count
        }
        print(String(format: "watch on PostgreSQL: 2 processes, 12 feeds, 1 s intervals: %d requests, shortest gap between two "
                     + "fetches of one feed %.2f s", requests, shortest))
        #expect(b.stop() == 0, "\(b.stderr)")
        #expect(try pg.integer("SELECT count(*) FROM articles", database: database) == 48)
    }
}
