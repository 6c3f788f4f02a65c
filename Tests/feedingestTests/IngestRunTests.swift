import Foundation
import TestSupport
import Testing

/// Whole runs of `feedingest FEEDS` against nginx and the fault server: fifty corpus feeds, mixed failures with the
/// run report, 429, no network route, and stores that cannot be written.
@Suite("feedingest ingest runs")
struct IngestRunTests {

    /// Fifty feeds of the shared corpora, as paths under `corpus`: the 26 real-world feeds, then the first twelve RSS
    /// and twelve Atom files of gofeed's parser tests that have items.
    static func fiftyFeeds() throws -> [String] {
        let fm = FileManager.default
        let realworld = "realworld/rsparser/Tests/RSParserTests/Resources"
        var paths = try fm.contentsOfDirectory(atPath: Paths.corpus.appendingPathComponent(realworld).path)
            .filter { ["atom", "rss", "rdf", "xml"].contains(($0 as NSString).pathExtension) }
            .sorted().map { "\(realworld)/\($0)" }
        for (directory, marker) in [("gofeed/testdata/parser/rss", "<item"), ("gofeed/testdata/parser/atom", "<entry")] {
            let names = try fm.contentsOfDirectory(atPath: Paths.corpus.appendingPathComponent(directory).path)
                .filter { $0.hasSuffix(".xml") }.sorted()
                .filter { name in
                    let text = (try? String(contentsOf: Paths.corpus.appendingPathComponent("\(directory)/\(name)"), encoding: .utf8)) ?? ""
                    return text.contains(marker)
                }
            paths += names.prefix(12).map { "\(directory)/\($0)" }
        }
        return paths
    }

    static func report(_ url: URL) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
    }

    @Test func fiftyCorpusFeedsFromNginxThenAllNotModified() throws {
        let nginx = try NginxServer(.init(root: Paths.corpus))
        let paths = try Self.fiftyFeeds()
        #expect(paths.count == 50)
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data(paths.map { nginx.url("/" + $0).absoluteString + " corpus" }.joined(separator: "\n").utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let reportURL = directory.appendingPathComponent("report.json")

        let first = try CommandRunner.run([list.path, "--store", store.path, "--report", reportURL.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("50 feeds: 50 ok, 0 not modified, 0 failed;"), "\(first.stderr)")
        // stdout: schema-valid articles, each committed exactly once: as many lines as the store has rows.
        let validation = try validate(first.stdout, schema: "article.schema.json", lines: true)
        #expect(validation.ok, "\(validation.output)")
        let stored = try IngestCommandTests.count("articles", in: store)
        #expect(stored > 600, "the fifty feeds hold over 600 distinct articles")
        let statuses = IngestCommandTests.objects(first).compactMap { $0["status"] as? String }
        #expect(statuses.count == first.lines.count)
        // Each stored article printed once as new; a feed repeating an id with other content prints it as updated.
        #expect(statuses.filter { $0 == "new" }.count == stored)
        #expect(statuses.filter { $0 == "updated" }.count == first.lines.count - stored)
        #expect(try IngestCommandTests.count("feeds WHERE outcome = 'updated' AND etag IS NOT NULL", in: store) == 50)

        // The run report: schema-valid, and it agrees with the store and with stdout.
        let reportValidation = try validate(String(decoding: try Data(contentsOf: reportURL), as: UTF8.self),
                                            schema: "run-report.schema.json", lines: false)
        #expect(reportValidation.ok, "\(reportValidation.output)")
        let report = try Self.report(reportURL)
        let summary = report["summary"] as? [String: Any] ?? [:]
        #expect(summary["ok"] as? Int == 50)
        let counts = summary["articles"] as? [String: Any] ?? [:]
        #expect((counts["new"] as? Int ?? 0) + (counts["updated"] as? Int ?? 0) == first.lines.count)
        let feeds = report["feeds"] as? [[String: Any]] ?? []
        #expect(feeds.map { $0["source"] as? String ?? "" } == paths.map { nginx.url("/" + $0).absoluteString }, "list order")
        #expect(feeds.allSatisfy { ($0["format"] as? [String: Any])?["family"] != nil }, "every feed's root was recognised")
        #expect(feeds.allSatisfy { ($0["tags"] as? [String]) == ["corpus"] })

        // The second run, at once (within the default 5-minute interval): an explicit run fetches every feed again,
        // conditionally; every feed answers 304, nothing is printed, nothing is stored twice.
        let before = nginx.requests(status: 304)
        let second = try CommandRunner.run([list.path, "--store", store.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.isEmpty)
        #expect(second.stderr.contains("50 feeds: 0 ok, 50 not modified, 0 failed; 0 new, 0 updated"), "\(second.stderr)")
        #expect(nginx.requests(status: 304) - before == 50)
        #expect(try IngestCommandTests.count("articles", in: store) == stored)

        // The second run recorded the default interval (5 minutes): a third run on the schedule (--due, as from cron)
        // fetches nothing, every feed was fetched just now, and the summary says until when.
        let third = try CommandRunner.run([list.path, "--store", store.path, "--due"])
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stderr.contains("50 feeds: 0 ok, 0 not modified, 0 failed, 50 deferred"), "\(third.stderr)")
        #expect(third.stderr.contains("50 feeds deferred, not fetched") && third.stderr.contains(", and 47 more"), "\(third.stderr)")
        #expect(nginx.requests(status: 304) - before == 50, "nothing was requested")
    }

    @Test func mixedFailuresExitOneWithOneLineEachAndAReport() throws {
        let nginx = try NginxServer(.init(root: Paths.realworld))
        let faults = try FaultServer()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let notFound = nginx.url("/missing.xml").absoluteString
        let serverError = faults.url("/status?code=500").absoluteString
        let truncated = faults.url("/long-length").absoluteString
        // JSON that is not a JSON Feed (scripting.com's RSS-in-JSON); 3960.json, which stood here, is a JSON Feed now.
        let notAFeed = nginx.url("/ScriptingNews.json").absoluteString
        let limited = faults.url("/status?code=429&retry=3600").absoluteString
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("""
            \(nginx.url("/atp.rss").absoluteString)
            \(notFound)
            mailto:someone@example.com
            \(serverError)
            \(truncated)
            \(notAFeed)
            \(limited)
            \(nginx.url("/bio.rdf").absoluteString)
            """.utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let reportURL = directory.appendingPathComponent("report.json")
        // --interval 0: the two good feeds are due again at once, so the second run shows them answering 304.
        let run = try CommandRunner.run([list.path, "--store", store.path, "--report", reportURL.path, "--interval", "0"])
        #expect(run.status == 1, "\(run.stderr)")
        let objects = IngestCommandTests.objects(run)
        #expect(objects.filter { ($0["feed"] as? String)?.hasPrefix("http://127.0.0.1:\(nginx.port)/") == true }.count == 130,
                "the two good feeds are stored whole")
        #expect(objects.contains { $0["feed"] as? String == truncated }, "articles before the truncation are kept")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        for failed in [notFound, serverError, truncated, notAFeed] {
            #expect(lines.filter { $0.hasPrefix("feedingest: \(failed): ") }.count == 1, "one line for \(failed): \(run.stderr)")
        }
        #expect(lines.contains { $0.hasPrefix("feedingest: \(list.path):3: ") }, "\(run.stderr)")
        #expect(!run.stderr.contains("feedingest: \(limited):"), "a 429 is not a failure")
        #expect(run.stderr.contains("7 feeds: 2 ok, 0 not modified, 4 failed, 1 rate limited (429, not failed), 1 bad list line"),
                "\(run.stderr)")
        #expect(run.stderr.contains("404"))

        let validation = try validate(String(decoding: try Data(contentsOf: reportURL), as: UTF8.self),
                                      schema: "run-report.schema.json", lines: false)
        #expect(validation.ok, "\(validation.output)")
        let report = try Self.report(reportURL)
        #expect(report["exitStatus"] as? Int == 1)
        let results = Dictionary(uniqueKeysWithValues: (report["feeds"] as? [[String: Any]] ?? []).map {
            ($0["source"] as? String ?? "", $0)
        })
        #expect(results[notFound]?["result"] as? String == "failed")
        #expect((results[notFound]?["reason"] as? String)?.contains("404") == true)
        #expect((results[notAFeed]?["reason"] as? String)?.contains("line 945, column 1: not a feed: a JSON object without a JSON Feed version") == true,
                "\(String(describing: results[notAFeed]))")
        // The report types each failure by the layer that failed, for scripts to match on.
        func error(_ source: String) -> [String: Any] { results[source]?["error"] as? [String: Any] ?? [:] }
        #expect(error(notFound)["kind"] as? String == "fetch" && error(notFound)["code"] as? String == "http-status"
                && error(notFound)["status"] as? Int == 404, "\(error(notFound))")
        #expect(error(serverError)["kind"] as? String == "fetch" && error(serverError)["status"] as? Int == 500, "\(error(serverError))")
        #expect(error(truncated)["kind"] as? String == "fetch" && error(truncated)["code"] as? String == "truncated", "\(error(truncated))")
        #expect(error(notAFeed)["kind"] as? String == "parse" && error(notAFeed)["code"] as? String == "not-a-feed"
                && error(notAFeed)["line"] as? Int == 945, "\(error(notAFeed))")
        #expect(results[limited]?["result"] as? String == "rate-limited")
        #expect(results[limited]?["nextFetch"] != nil)
        #expect(results[nginx.url("/atp.rss").absoluteString]?["result"] as? String == "ok")
        #expect(((report["badLines"] as? [[String: Any]])?.first?["line"]) as? Int == 3)

        // The 429 counted no failure, but the store defers the feed until its Retry-After.
        #expect(try IngestCommandTests.count("feeds WHERE consecutive_failures > 0", in: store) == 4)
        #expect(try IngestCommandTests.count("feeds WHERE url = '\(limited)' AND consecutive_failures = 0 AND next_fetch > strftime('%s', 'now') + 3000",
                                             in: store) == 1)
        // `feeds` says why the 429 feed waits, and that it is not failed.
        let feeds = try CommandRunner.run(["feeds", "--json", "--store", store.path])
        let limitedLine = IngestCommandTests.objects(feeds).first { $0["url"] as? String == limited }
        #expect(limitedLine?["status"] as? String == "rate-limited", "\(feeds.stdout)")
        #expect(limitedLine?["consecutiveFailures"] as? Int == 0)
        #expect((limitedLine?["error"] as? String)?.contains("429") == true)
        #expect(limitedLine?["errorKind"] as? String == "fetch.rate-limited", "\(feeds.stdout)")
        let notFoundLine = IngestCommandTests.objects(feeds).first { $0["url"] as? String == notFound }
        #expect(notFoundLine?["errorKind"] as? String == "fetch.http-status", "\(feeds.stdout)")
        let again = try CommandRunner.run([list.path, "--store", store.path])
        #expect(again.stderr.contains("7 feeds: 0 ok, 2 not modified, 0 failed, 5 deferred, 1 bad list line;"),
                "the failures back off and the 429 waits for its Retry-After: \(again.stderr)")
    }

    /// Only where the machine has no route out (the test suite runs in a network namespace with only loopback): a
    /// connection to an address of TEST-NET-1 (RFC 5737, never routed) then fails locally with ENETUNREACH.
    static let hasNoDefaultRoute: Bool = {
        let routes = (try? String(contentsOfFile: "/proc/net/route", encoding: .utf8)) ?? "x\tx\t00000000"
        return !routes.split(separator: "\n").dropFirst().contains { $0.split(separator: "\t").dropFirst().first == "00000000" }
    }()

    @Test(.enabled(if: hasNoDefaultRoute, "needs a machine without a default route, as in 'make test'"))
    func noRouteForEveryRemoteFeedIsOfflineNotFailed() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let local = Paths.realworld.appendingPathComponent("bio.rdf").path
        try Data("http://192.0.2.1/feed.xml\nhttp://192.0.2.2:8080/atom.xml\n\(local)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let reportURL = directory.appendingPathComponent("report.json")
        let run = try CommandRunner.run([list.path, "--store", store.path, "--report", reportURL.path, "--timeout", "10"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 30)
        #expect(run.stderr.contains("the network looks unreachable"), "\(run.stderr)")
        #expect(run.stderr.contains("3 feeds: 1 ok, 0 not modified, 0 failed, 2 offline"), "\(run.stderr)")
        #expect(try IngestCommandTests.count("feeds WHERE consecutive_failures > 0", in: store) == 0)
        let feeds = try Self.report(reportURL)["feeds"] as? [[String: Any]] ?? []
        #expect(feeds.prefix(2).allSatisfy { $0["result"] as? String == "offline" }, "\(feeds)")
    }

    /// A server answering 429 is the network answering: an unresolvable host beside it is that feed's failure.
    @Test func aRateLimitedFeedProvesTheNetworkIsUp() throws {
        let faults = try FaultServer()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(faults.url("/status?code=429").absoluteString)\nhttp://feedingest-a.invalid/feed.xml\n".utf8).write(to: list)
        let run = try CommandRunner.run([list.path, "--store", directory.appendingPathComponent("store.sqlite").path])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(!run.stderr.contains("unreachable"), "\(run.stderr)")
        #expect(run.stderr.contains("2 feeds: 0 ok, 0 not modified, 1 failed, 1 rate limited"), "\(run.stderr)")
    }

    /// Whether `chattr +i` holds here (root on an ext4-like file system): it refuses writes even to root.
    static let immutableFlagWorks: Bool = {
        guard let directory = try? Paths.temporaryDirectory() else { return false }
        defer { try? FileManager.default.removeItem(at: directory) }
        guard run("/usr/bin/chattr", "+i", directory.path) == 0 else { return false }
        let refused = !FileManager.default.createFile(atPath: directory.appendingPathComponent("x").path, contents: nil)
        _ = run("/usr/bin/chattr", "-i", directory.path)
        return refused
    }()

    @discardableResult
    static func run(_ executable: String, _ arguments: String...) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(.enabled(if: immutableFlagWorks, "needs chattr +i (root, ext4-like file system)"))
    func aReadOnlyStoreIsAClearErrorAndExit2() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(Paths.realworld.appendingPathComponent("bio.rdf").path)\n".utf8).write(to: list)
        // A store in a directory nobody may write to.
        let locked = directory.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        #expect(Self.run("/usr/bin/chattr", "+i", locked.path) == 0)
        defer { Self.run("/usr/bin/chattr", "-i", locked.path) }
        let inLocked = try CommandRunner.run([list.path, "--store", locked.appendingPathComponent("store.sqlite").path])
        #expect(inLocked.status == 2, "\(inLocked.stderr)")
        #expect(inLocked.stdout.isEmpty)
        #expect(inLocked.stderr.hasPrefix("feedingest: cannot use the store \(locked.path)/store.sqlite"), "\(inLocked.stderr)")
        #expect(inLocked.stderr.split(separator: "\n").count == 1, "one clear line: \(inLocked.stderr)")
        #expect(inLocked.stderr.components(separatedBy: "\(locked.path)/store.sqlite").count == 2, "the store named once: \(inLocked.stderr)")

        // An existing store made read-only: refused before any feed is fetched, and left as it was.
        let store = directory.appendingPathComponent("store.sqlite")
        let first = try CommandRunner.run([list.path, "--store", store.path])
        #expect(first.status == 0, "\(first.stderr)")
        let before = try Data(contentsOf: store)
        #expect(Self.run("/usr/bin/chattr", "+i", store.path) == 0)
        defer { Self.run("/usr/bin/chattr", "-i", store.path) }
        let readOnly = try CommandRunner.run([list.path, "--store", store.path, "--force"])
        #expect(readOnly.status == 2, "\(readOnly.stderr)")
        #expect(readOnly.stderr.contains("read-only"), "\(readOnly.stderr)")
        #expect(readOnly.stdout.isEmpty)
        #expect(try Data(contentsOf: store) == before)
    }
}
