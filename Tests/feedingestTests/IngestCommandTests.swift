import Foundation
import TestSupport
import Testing

/// `feedingest [ingest] FEEDS`, end to end: the built binary, a real HTTP server on 127.0.0.1, a fresh store.
@Suite("feedingest ingest, end to end")
struct IngestCommandTests {
    /// Feeds of the real-world corpus and their article counts.
    static let feeds = ["DaringFireball.atom": 48, "atp.rss": 100, "bio.rdf": 30, "kc0011.rss": 20, "theomnishow.rss": 4]

    /// Counts the rows of a store's table with Python's sqlite3 (an independent reader).
    static func count(_ table: String, in store: URL) throws -> Int {
        let finished = try ChildProcess.run("/usr/bin/env", [
            "python3", "-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM ' + sys.argv[2]).fetchone()[0])",
            store.path, table])
        return Int(finished.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    static func objects(_ result: CommandRunner.Result) -> [[String: Any]] {
        result.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func ingestsAListIntoAFreshStoreAndASecondRunPrintsNothingNew() throws {
        let server = try NginxServer(.init(root: Paths.realworld))
        let base = "http://127.0.0.1:\(server.port)"
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let names = Self.feeds.keys.sorted()
        let text = "# test feeds\n" + names.map { "\(base)/\($0) corpus" }.joined(separator: "\n") + "\n\n\(base)/atp.rss again\n"
        try Data(text.utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")

        let first = try CommandRunner.run([list.path, "--store", store.path, "--jobs", "3", "--interval", "0"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("5 feeds: 5 ok, 0 not modified, 0 failed"), "\(first.stderr)")
        let check = try validate(first.stdout, schema: "article.schema.json", lines: true)
        #expect(check.ok, "\(check.output)")
        let articles = Self.objects(first)
        #expect(articles.count == first.lines.count)
        #expect(articles.count == (try Self.count("articles", in: store)))
        #expect(articles.allSatisfy { $0["status"] as? String == "new" })
        #expect(try Self.count("feeds", in: store) == 5)
        // Every feed's articles are there: the printed count per feed is the store's (dedupe may merge a few).
        var perFeed: [String: Int] = [:]
        for article in articles { perFeed[article["feed"] as? String ?? "", default: 0] += 1 }
        #expect(Set(perFeed.keys) == Set(names.map { "\(base)/\($0)" }))
        for name in names { #expect(perFeed["\(base)/\(name)"]! <= Self.feeds[name]!, "\(name)") }
        #expect(articles.count > 150)

        // Second run: conditional GETs answer 304, nothing is printed, the exit status is 0.
        let second = try CommandRunner.run(["ingest", list.path, "--store", store.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.isEmpty)
        #expect(second.stderr.contains("5 feeds: 0 ok, 5 not modified, 0 failed; 0 new, 0 updated"), "\(second.stderr)")
        #expect(try Self.count("articles", in: store) == articles.count)

        // --all without validators (a local copy of one feed) prints every article again, without a status.
        let local = directory.appendingPathComponent("local.txt")
        try Data("\(Paths.realworld.appendingPathComponent("kc0011.rss").path)\n".utf8).write(to: local)
        _ = try CommandRunner.run([local.path, "--store", store.path, "-q"])
        let again = try CommandRunner.run([local.path, "--store", store.path, "--all", "--quiet"])
        #expect(again.status == 0)
        #expect(again.stderr.isEmpty)
        #expect(again.lines.count == 20)
        #expect(Self.objects(again).allSatisfy { $0["status"] == nil })
    }

    @Test func aBadLineAndADeadURLFailOnlyThemselves() throws {
        let server = try NginxServer(.init(root: Paths.realworld))
        let base = "http://127.0.0.1:\(server.port)"
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let text = """
            \(base)/atp.rss
            ftp://example.com/feed.xml
            http://127.0.0.1:1/feed.xml
            \(base)/missing.xml
            \(base)/bio.rdf
            """
        try Data(text.utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let result = try CommandRunner.run([list.path, "--store", store.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("feedingest: \(list.path):2: unknown scheme 'ftp'"), "\(result.stderr)")
        #expect(result.stderr.contains("feedingest: http://127.0.0.1:1/feed.xml: "), "\(result.stderr)")
        #expect(result.stderr.contains("feedingest: \(base)/missing.xml: "), "\(result.stderr)")
        #expect(result.stderr.contains("404"), "\(result.stderr)")
        #expect(result.stderr.contains("4 feeds: 2 ok, 0 not modified, 2 failed, 1 bad list line"), "\(result.stderr)")
        #expect(result.lines.count == 130)
        #expect(try Self.count("articles", in: store) == 130)
        let check = try validate(result.stdout, schema: "article.schema.json", lines: true)
        #expect(check.ok, "\(check.output)")
    }

    @Test func readsTheListFromStdinAndOPMLWithoutAStore() throws {
        let atp = Paths.realworld.appendingPathComponent("atp.rss").path
        let bio = Paths.realworld.appendingPathComponent("bio.rdf").path
        let plain = try CommandRunner.run(["-", "--no-store", "--jobs", "1"], stdin: Data("\(atp)\n\(atp) dup\n".utf8))
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.lines.count == 100)
        #expect(Self.objects(plain).allSatisfy { $0["status"] == nil && $0["feed"] as? String == atp })
        let opml = """
            <?xml version="1.0"?>
            <opml version="2.0"><body>
              <outline text="Science"><outline text="bio" xmlUrl="\(bio)"/></outline>
              <outline text="atp" xmlUrl="file://\(atp)"/>
            </body></opml>
            """
        let fromOPML = try CommandRunner.run(["ingest", "-", "--no-store"], stdin: Data(opml.utf8))
        #expect(fromOPML.status == 0, "\(fromOPML.stderr)")
        #expect(fromOPML.lines.count == 130)
        #expect(fromOPML.stderr.contains("2 feeds: 2 ok"))
    }

    @Test func findsTheStoreThroughTheEnvironment() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(Paths.realworld.appendingPathComponent("theomnishow.rss").path)\n".utf8).write(to: list)
        var environment = ProcessInfo.processInfo.environment
        environment["FEEDINGEST_STORE"] = nil
        environment["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
        let xdg = try CommandRunner.run([list.path, "-q"], environment: environment)
        #expect(xdg.status == 0, "\(xdg.stderr)")
        #expect(xdg.lines.count == 4)
        #expect(try Self.count("articles", in: directory.appendingPathComponent("data/feedingest/feedingest.sqlite")) == 4)
        environment["FEEDINGEST_STORE"] = directory.appendingPathComponent("env.sqlite").path
        let env = try CommandRunner.run([list.path, "-q"], environment: environment)
        #expect(env.lines.count == 4)
        #expect(try Self.count("articles", in: directory.appendingPathComponent("env.sqlite")) == 4)
        environment["HOME"] = directory.path
        environment["FEEDINGEST_STORE"] = nil
        environment["XDG_DATA_HOME"] = nil
        let home = try CommandRunner.run([list.path, "-q"], environment: environment)
        #expect(home.lines.count == 4)
        #expect(try Self.count("articles", in: directory.appendingPathComponent(".local/share/feedingest/feedingest.sqlite")) == 4)
    }

    @Test func aChangedFeedPrintsOnlyItsChangedArticleAsUpdated() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let feed = directory.appendingPathComponent("atp.rss")
        let original = try String(contentsOf: Paths.realworld.appendingPathComponent("atp.rss"), encoding: .utf8)
        try Data(original.utf8).write(to: feed)
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("atp.rss\n".utf8).write(to: list)  // relative to the list's directory
        let store = directory.appendingPathComponent("store.sqlite")
        let first = try CommandRunner.run([list.path, "--store", store.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.lines.count == 100)
        let item = original.range(of: "<item")!.lowerBound
        let title = original.range(of: "<title>", range: item..<original.endIndex)!
        try Data(original.replacingCharacters(in: title, with: "<title>Changed: ").utf8).write(to: feed)
        let second = try CommandRunner.run([list.path, "--store", store.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.lines.count == 1)
        let article = Self.objects(second).first
        #expect(article?["status"] as? String == "updated")
        #expect((article?["title"] as? String)?.hasPrefix("Changed: ") == true)
        #expect(second.stderr.contains("0 new, 1 updated"), "\(second.stderr)")
        let check = try validate(second.stdout, schema: "article.schema.json", lines: true)
        #expect(check.ok, "\(check.output)")
    }

    @Test func aFailedFeedIsDeferredOnTheNextRunUnlessForced() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("http://127.0.0.1:1/feed.xml\n\(Paths.realworld.appendingPathComponent("theomnishow.rss").path)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let first = try CommandRunner.run([list.path, "--store", store.path])
        #expect(first.status == 1)
        #expect(first.lines.count == 4)
        #expect(first.stderr.contains("2 feeds: 1 ok, 0 not modified, 1 failed;"), "\(first.stderr)")
        // The store backs off after the failure: the next run defers the feed, and that is no failure.
        let second = try CommandRunner.run([list.path, "--store", store.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.isEmpty)
        #expect(second.stderr.contains("2 feeds: 1 ok, 0 not modified, 0 failed, 1 deferred;"), "\(second.stderr)")
        #expect(second.stderr.contains("1 feed deferred, not fetched") && second.stderr.contains("http://127.0.0.1:1/feed.xml until 20"),
                "the summary names the deferred feed and until when: \(second.stderr)")
        let forced = try CommandRunner.run([list.path, "--store", store.path, "--force"])
        #expect(forced.status == 1)
        #expect(forced.stderr.contains("feedingest: http://127.0.0.1:1/feed.xml: "), "\(forced.stderr)")
    }

    @Test func timeoutAndMaxBytesLimitEachFeedAndBadValuesAreUsageErrors() throws {
        let server = try FeedServer(delay: 1.0, root: Paths.realworld)
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("http://127.0.0.1:\(server.port)/theomnishow.rss\n\(Paths.realworld.appendingPathComponent("bio.rdf").path)\n".utf8).write(to: list)
        let slow = try CommandRunner.run([list.path, "--no-store", "--timeout", "0.3", "--user-agent", "test-agent/1"])
        #expect(slow.status == 1)
        #expect(slow.lines.count == 30)
        #expect(slow.stderr.contains("feedingest: http://127.0.0.1:\(server.port)/theomnishow.rss: "), "\(slow.stderr)")
        #expect(slow.stderr.contains("1 ok, 0 not modified, 1 failed"), "\(slow.stderr)")
        let large = try CommandRunner.run([list.path, "--no-store", "--max-bytes", "1000", "--timeout", "5"])
        #expect(large.status == 1)
        #expect(large.stderr.contains("limit of 1000 bytes"), "\(large.stderr)")
        for bad in [["--timeout", "0"], ["--timeout", "soon"], ["--max-bytes", "-1"], ["--user-agent", ""]] {
            let result = try CommandRunner.run([list.path, "--no-store"] + bad)
            #expect(result.status == 2, "\(bad)")
            #expect(result.stderr.contains(bad[0]), "\(bad)")
        }
    }

    @Test func unresolvableHostsEverywhereAreOfflineNotFailed() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let local = Paths.realworld.appendingPathComponent("theomnishow.rss").path
        try Data("http://feedingest-a.invalid/feed.xml\nhttps://feedingest-b.invalid/atom\n\(local)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let offline = try CommandRunner.run([list.path, "--store", store.path])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.lines.count == 4)
        #expect(offline.stderr.contains("the network looks unreachable"), "\(offline.stderr)")
        #expect(offline.stderr.contains("3 feeds: 1 ok, 0 not modified, 0 failed, 2 offline"), "\(offline.stderr)")
        #expect(!offline.stderr.contains("feedingest: http://feedingest-a.invalid/feed.xml:"))
        #expect(try Self.count("feeds WHERE consecutive_failures > 0", in: store) == 0)

        // With another remote feed answering, an unresolved host is that feed's own failure.
        let server = try NginxServer(.init(root: Paths.realworld))
        try Data("http://feedingest-a.invalid/feed.xml\nhttp://127.0.0.1:\(server.port)/bio.rdf\n".utf8).write(to: list)
        let mixed = try CommandRunner.run([list.path, "--store", store.path])
        #expect(mixed.status == 1, "\(mixed.stderr)")
        #expect(mixed.lines.count == 30)
        #expect(mixed.stderr.contains("feedingest: http://feedingest-a.invalid/feed.xml: "), "\(mixed.stderr)")
        #expect(!mixed.stderr.contains("unreachable"))
        #expect(try Self.count("feeds WHERE consecutive_failures > 0", in: store) == 1)
    }

    @Test func usageErrorsAndAnUnusableStoreExit2() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(Paths.realworld.appendingPathComponent("theomnishow.rss").path)\n".utf8).write(to: list)
        let unusable = try CommandRunner.run([list.path, "--store", directory.path])
        #expect(unusable.status == 2)
        #expect(unusable.stderr.contains("cannot use the store \(directory.path)"), "\(unusable.stderr)")
        #expect(unusable.stdout.isEmpty)
        let jobs = try CommandRunner.run([list.path, "--jobs", "0", "--no-store"])
        #expect(jobs.status == 2)
        #expect(jobs.stderr.contains("--jobs"))
        let typo = try CommandRunner.run([list.path, "--no-stor"])
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("did you mean '--no-store'?"))
        let missing = try CommandRunner.run([directory.appendingPathComponent("nope.txt").path, "--no-store"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot read the feed list"))
        let both = try CommandRunner.run([list.path, "--no-store", "--store", "x"])
        #expect(both.status == 2)
        let help = try CommandRunner.run(["ingest", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Exit status"))
        let top = try CommandRunner.run(["--help"])
        #expect(top.stdout.contains("feedingest [ingest] FEEDS"))
    }

    /// Every ingest option is accepted before FEEDS as after it (the default command once kept a shorter list of its
    /// own), and sizes take suffixes.
    @Test func optionsGoBeforeOrAfterFeedsAndSizesTakeSuffixes() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(Paths.realworld.appendingPathComponent("bio.rdf").path)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite").path
        for arguments in [["--interval", "5m", list.path, "--store", store], ["--lease=30", "--due", list.path, "--store", store],
                          [list.path, "--interval", "5m", "--store", store], ["--max-bytes", "1M", list.path, "--store", store],
                          ["--timeout", "2m", "--max-bytes=512k", list.path, "--no-store"]] {
            let run = try CommandRunner.run(arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains("1 feed: "), "\(arguments): \(run.stderr)")
        }
        let small = try CommandRunner.run(["--max-bytes", "1k", list.path, "--no-store"])
        #expect(small.status == 1 && small.stderr.contains("1 failed"), "1k = 1024 bytes is less than the feed: \(small.stderr)")
        let typo = try CommandRunner.run(["--intervall", "5m", list.path])
        #expect(typo.status == 2 && typo.stderr.contains("did you mean '--interval'?"), "\(typo.stderr)")
        let bad = try CommandRunner.run([list.path, "--max-bytes", "lots"])
        #expect(bad.status == 2 && bad.stderr.contains("--max-bytes needs a size"), "\(bad.stderr)")
    }

    /// The store holds feed passwords: a new SQLite store is readable by its owner only, in a directory only its owner
    /// can list when feedingest makes it.
    @Test func aNewStoreIsReadableByItsOwnerOnly() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(Paths.realworld.appendingPathComponent("bio.rdf").path)\n".utf8).write(to: list)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
        environment.removeValue(forKey: "FEEDINGEST_STORE")
        let run = try CommandRunner.run([list.path], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        func mode(_ path: String) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        let home = directory.appendingPathComponent("data/feedingest").path
        #expect(try mode(home) == 0o700)
        #expect(try mode(home + "/feedingest.sqlite") == 0o600)
        let explicit = directory.appendingPathComponent("chosen.sqlite").path
        #expect(try CommandRunner.run([list.path, "--store", explicit]).status == 0)
        #expect(try mode(explicit) == 0o600)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: explicit + suffix) {
            #expect(try mode(explicit + suffix) == 0o600)
        }
    }
}
