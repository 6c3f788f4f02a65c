import Foundation
import TestSupport
import Testing

/// What a run asked for is done: an explicit rerun fetches every listed feed (conditionally), `--due` keeps the
/// schedule, `--force` fetches every feed of a busy host, a killed run's leases do not hold its feeds, and a fixed local
/// file is read at once.
@Suite("feedingest reruns: every listed feed fetched, nothing stale holds one")
struct RerunTests {
    /// Reads one value with Python's sqlite3 (an independent reader of the store).
    static func value(_ sql: String, in store: URL) throws -> String {
        let finished = try ChildProcess.run("/usr/bin/env", [
            "python3", "-c", "import sqlite3,sys; r = sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone(); print('' if r is None or r[0] is None else r[0])",
            store.path, sql])
        return finished.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anExplicitRerunFetchesEveryFeedConditionallyAndDueKeepsTheSchedule() throws {
        let nginx = try NginxServer(.init(root: Paths.realworld))
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let names = ["atp.rss", "bio.rdf", "theomnishow.rss"]
        try Data(names.map { nginx.url("/" + $0).absoluteString }.joined(separator: "\n").utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")

        let first = try CommandRunner.run([list.path, "--store", store.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("3 feeds: 3 ok, 0 not modified, 0 failed;"), "\(first.stderr)")
        #expect(nginx.requests(status: 200) == 3)

        // At once again, inside the 5-minute interval: every feed is asked for, with its validators, and answers 304.
        let second = try CommandRunner.run([list.path, "--store", store.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.isEmpty)
        #expect(second.stderr.contains("3 feeds: 0 ok, 3 not modified, 0 failed;"), "\(second.stderr)")
        #expect(nginx.requests(status: 304) == 3, "conditional requests, not unconditional ones")
        #expect(nginx.requests(status: 200) == 3)

        // --all is an explicit run too.
        let all = try CommandRunner.run([list.path, "--store", store.path, "--all"])
        #expect(all.stderr.contains("3 not modified"), "\(all.stderr)")
        #expect(nginx.requests(status: 304) == 6)

        // --due keeps the schedule (cron): nothing is due, nothing is requested, and the summary says until when.
        let due = try CommandRunner.run([list.path, "--store", store.path, "--due"])
        #expect(due.status == 0, "\(due.stderr)")
        #expect(due.stderr.contains("3 feeds: 0 ok, 0 not modified, 0 failed, 3 deferred;"), "\(due.stderr)")
        #expect(due.stderr.contains("3 feeds deferred, not fetched"), "\(due.stderr)")
        #expect(due.stderr.contains(nginx.url("/atp.rss").absoluteString + " until 20"), "names each deferred feed: \(due.stderr)")
        #expect(nginx.requests(status: 304) == 6 && nginx.requests(status: 200) == 3, "no request")

        let both = try CommandRunner.run([list.path, "--store", store.path, "--due", "--force"])
        #expect(both.status == 2)
        #expect(both.stderr.contains("--force and --due exclude each other"), "\(both.stderr)")
    }

    /// 300 feeds on one host, fetched once, then again with --force at once: every one is fetched again, never more
    /// than 6 at once on the host, and none is called claimed elsewhere (no other process exists).
    @Test func forceFetchesEveryFeedOfOneHostSixAtATime() throws {
        let server = try FeedServer(feeds: 300, ports: 1, delay: 0.02)
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data(server.feedURLs.map(\.absoluteString).joined(separator: "\n").utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")

        let first = try CommandRunner.run([list.path, "--store", store.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("300 feeds: 300 ok"), "\(first.stderr)")
        _ = try server.stats(reset: true)

        let forced = try CommandRunner.run([list.path, "--store", store.path, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(!forced.stderr.contains("claimed elsewhere"), "\(forced.stderr)")
        #expect(!forced.stderr.contains("deferred"), "\(forced.stderr)")
        let stats = try server.stats()
        #expect(stats.requests == 300, "every listed feed fetched: \(stats.requests)")
        #expect(stats.max_in_flight_per_port <= 6, "at most 6 at once on one host: \(stats.max_in_flight_per_port)")
        #expect(try Self.value("SELECT count(*) FROM feeds WHERE lease_owner IS NOT NULL", in: store) == "0")
    }

    /// A run killed with SIGKILL while it holds a feed's lease: the next run on the same machine takes the feed over at
    /// once (the holder's process is gone) and completes it, instead of calling it claimed elsewhere for the lease's two
    /// minutes; nothing is stored twice.
    @Test func aRunKilledWithSigkillDoesNotHoldItsFeeds() throws {
        let faults = try FaultServer()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = "killed-\(UUID().uuidString)"
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(faults.url("/stream?items=5&token=\(token)").absoluteString)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")

        // The server sends the first item, then waits: the run holds the feed's lease meanwhile.
        let killed = try ChildProcess(CommandRunner.binary.path, [list.path, "--store", store.path])
        var owner = ""
        var waited = 0
        while try waited < 400 && (owner.isEmpty || faults.stats(token).requests == 0) {
            Thread.sleep(forTimeInterval: 0.05)
            waited += 1
            owner = (try? Self.value("SELECT lease_owner FROM feeds", in: store)) ?? ""
        }
        #expect(owner.contains(":\(killed.processIdentifier):"), "the run holds the feed's lease: '\(owner)'")
        killed.stop()  // SIGKILL: no chance to release anything
        #expect(try Self.value("SELECT lease_owner FROM feeds", in: store) == owner, "the lease outlived its process")
        #expect(try Double(Self.value("SELECT lease_until - strftime('%s','now') FROM feeds", in: store)) ?? 0 > 60,
                "and would hold the feed for another minute or more")

        try faults.release(token)  // from now on the feed is served whole
        let rerun = try CommandRunner.run([list.path, "--store", store.path])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(!rerun.stderr.contains("claimed elsewhere"), "\(rerun.stderr)")
        #expect(rerun.stderr.contains("1 feed: 1 ok, 0 not modified, 0 failed;"), "\(rerun.stderr)")
        #expect(try IngestCommandTests.count("articles", in: store) == 5, "every article once")
        #expect(try Self.value("SELECT lease_owner FROM feeds", in: store) == "", "no lease left behind")
    }

    /// A local file that failed is read again at once when fixed, even on the schedule (--due): reading a file asks
    /// nothing of any server.
    @Test func aFixedLocalFileIsReadAtOnce() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let feed = directory.appendingPathComponent("feed.xml")
        try Data("<rss version=\"2.0\"><channel><title>broken".utf8).write(to: feed)
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("feed.xml\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")

        let broken = try CommandRunner.run([list.path, "--store", store.path])
        #expect(broken.status == 1, "\(broken.stderr)")
        #expect(broken.stderr.contains("1 failed"), "\(broken.stderr)")
        try Data(try Data(contentsOf: Paths.realworld.appendingPathComponent("bio.rdf"))).write(to: feed)
        for due in [true, false] {
            let fixed = try CommandRunner.run([list.path, "--store", store.path] + (due ? ["--due"] : []))
            #expect(fixed.status == 0, "\(fixed.stderr)")
            #expect(fixed.stderr.contains("1 feed: 1 ok, 0 not modified, 0 failed;"), "\(fixed.stderr)")
            #expect(!fixed.stderr.contains("deferred"), "\(fixed.stderr)")
        }
        #expect(try IngestCommandTests.count("articles", in: store) > 0)
    }
}
