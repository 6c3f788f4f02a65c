import Foundation
import Ingest
import TestSupport
import Testing

/// `feedingest articles`, `feeds` and `export-opml`, end to end: stores made by the built binary's ingest, read back by
/// the same binary, checked against the store itself (Python's sqlite3), the JSON Schemas and FeedList.
@Suite("feedingest articles, feeds and export-opml, end to end")
struct ReadCommandsTests {
    /// A store holding three remote feeds (one with a query string full of `&`), a local feed whose path has a space and
    /// whose title needs escaping, and a feed that failed once.
    final class Fixture {
        let directory: URL
        let server: NginxServer
        let base: String
        let store: URL
        let list: URL
        let local: URL
        let ingested: CommandRunner.Result

        static let localFeed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel>
              <title>Tom &amp; Jerry's "&lt;News&gt;"</title><link>https://example.org/?a=1&amp;b=2</link>
              <item><guid>one</guid><title>First</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate></item>
              <item><guid>two</guid><title>Second</title><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate></item>
              <item><guid>undated</guid><title>No date</title></item>
            </channel></rss>
            """

        init() throws {
            directory = try Paths.temporaryDirectory()
            server = try NginxServer(.init(root: Paths.realworld, etag: false))  // a host with Last-Modified only
            base = "http://127.0.0.1:\(server.port)"
            store = directory.appendingPathComponent("store.sqlite")
            let folder = directory.appendingPathComponent("my feeds")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            local = folder.appendingPathComponent("tom & jerry.rss")
            try Data(Self.localFeed.utf8).write(to: local)
            list = directory.appendingPathComponent("feeds.txt")
            // The local path has spaces, so it is listed as a file:// URL.
            let lines = ["\(base)/atp.rss?from=list&x=1 podcasts tech", "\(base)/bio.rdf science", "\(base)/DaringFireball.atom tech",
                         "http://127.0.0.1:1/feed.xml", local.absoluteString]
            try Data(lines.joined(separator: "\n").utf8).write(to: list)
            ingested = try CommandRunner.run([list.path, "--store", store.path, "--jobs", "2"])
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func run(_ arguments: [String], environment: [String: String]? = nil) throws -> CommandRunner.Result {
            try CommandRunner.run(arguments.prefix(1) + ["--store", store.path] + arguments.dropFirst(), environment: environment)
        }
    }

    /// Rows of a query on the store, read with Python's sqlite3 (an independent reader), columns joined by tabs.
    static func rows(_ sql: String, in store: URL) throws -> [String] {
        let finished = try ChildProcess.run("/usr/bin/env", ["python3", "-c", """
            import sqlite3, sys
            for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("\\t".join(map(str, row)))
            """, store.path, sql])
        return finished.standardOutput.split(separator: "\n").map(String.init)
    }

    static func objects(_ result: CommandRunner.Result) -> [[String: Any]] {
        result.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func date(_ text: Any?) -> Date? {
        guard let text = text as? String else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    @Test func articlesAreWhatIngestPrintedNewestFirstAndSchemaValid() throws {
        let fixture = try Fixture()
        #expect(fixture.ingested.status == 1, "\(fixture.ingested.stderr)")  // the dead feed
        #expect(fixture.ingested.stderr.contains("5 feeds: 4 ok, 0 not modified, 1 failed"), "\(fixture.ingested.stderr)")
        let before = try Data(contentsOf: fixture.store)

        let result = try fixture.run(["articles"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let check = try validate(result.stdout, schema: "article.schema.json", lines: true)
        #expect(check.ok, "\(check.output)")
        let articles = Self.objects(result)
        #expect(articles.count == result.lines.count)
        #expect(articles.count == Int(try Self.rows("SELECT count(*) FROM articles", in: fixture.store).first ?? ""))
        #expect(articles.count > 170)

        // The same articles as ingest printed, field for field, minus ingest's status and plus firstSeen.
        func keyed(_ objects: [[String: Any]]) -> [String: NSDictionary] {
            var byKey: [String: NSDictionary] = [:]
            for var object in objects {
                let key = "\(object["feed"] ?? "")|\(object["id"] ?? "")"
                object["status"] = nil
                object["firstSeen"] = nil
                byKey[key] = object as NSDictionary
            }
            return byKey
        }
        let printed = keyed(Self.objects(fixture.ingested))
        let read = keyed(articles)
        #expect(Set(printed.keys) == Set(read.keys))
        let differing = printed.keys.filter { printed[$0] != read[$0] }.sorted()
        #expect(differing.isEmpty, "\(differing.prefix(3)): \(differing.first.map { "\(printed[$0]!) vs \(read[$0]!)" } ?? "")")
        // A local feed is named by its path, as ingest names it.
        #expect(articles.contains { $0["feed"] as? String == fixture.local.path })

        // Newest first by the article's own date (published, else updated, else first seen); no status without --since.
        let dates = articles.map { Self.date($0["published"]) ?? Self.date($0["updated"]) ?? Self.date($0["firstSeen"]) }
        #expect(dates.allSatisfy { $0 != nil })
        #expect(zip(dates, dates.dropFirst()).allSatisfy { $0! >= $1! })
        #expect(articles.allSatisfy { $0["status"] == nil && Self.date($0["firstSeen"]) != nil })
        // The undated local article sorts by when it arrived: first, ahead of every article dated in the past.
        #expect(articles.first?["title"] as? String == "No date")

        // Reading never writes the store.
        #expect(try Data(contentsOf: fixture.store) == before)
    }

    @Test func feedLimitAndSinceSelectArticles() throws {
        let fixture = try Fixture()
        let all = Self.objects(try fixture.run(["articles"]))
        let bio = try fixture.run(["articles", "--feed", "\(fixture.base)/bio.rdf"])
        #expect(bio.status == 0, "\(bio.stderr)")
        #expect(Self.objects(bio).count == 30)
        #expect(Self.objects(bio).allSatisfy { $0["feed"] as? String == "\(fixture.base)/bio.rdf" })
        // A local feed by its path, or by its file:// URL.
        for name in [fixture.local.path, fixture.local.absoluteString] {
            let local = try fixture.run(["articles", "--feed", name])
            #expect(local.status == 0, "\(local.stderr)")
            #expect(Self.objects(local).map { $0["title"] as? String } == ["No date", "Second", "First"])
        }
        let limited = try fixture.run(["articles", "--limit", "7"])
        #expect(limited.lines == Array(try fixture.run(["articles"]).lines.prefix(7)))
        #expect(try fixture.run(["articles", "--limit", "0"]).stdout.isEmpty)
        let both = try fixture.run(["articles", "--feed", "\(fixture.base)/atp.rss?from=list&x=1", "--limit=3"])
        #expect(Self.objects(both).count == 3)
        #expect(Self.objects(both).allSatisfy { $0["feed"] as? String == "\(fixture.base)/atp.rss?from=list&x=1" })

        // --since is arrival: everything arrived within the hour, whatever the articles' dates (2019, 2024, ...).
        #expect(Self.objects(try fixture.run(["articles", "--since", "1h"])).count == all.count)
        #expect(Self.objects(try fixture.run(["articles", "--since", "today"])).count == all.count ||
                Calendar.current.component(.hour, from: Date()) == 0)  // a run across midnight
        #expect(try fixture.run(["articles", "--since", "2999-01-01"]).stdout.isEmpty)
        for accepted in ["2020-02-29", "2020-02-29T10:30", "2020-02-29 10:30:15", "2020-02-29T10:30:15.5Z", "2020-02-29T10:30+02:00",
                         "yesterday", "90s", "30m", "2d", "1w"] {
            let result = try fixture.run(["articles", "--since", accepted, "--limit", "1"])
            #expect(result.status == 0, "\(accepted): \(result.stderr)")
            #expect(result.lines.count == 1, "\(accepted)")
        }
        for refused in ["2021-02-29", "last week", "2020-13-01", "12", "2020-01-01T25:00", "5y", ""] {
            let result = try fixture.run(["articles", "--since", refused])
            #expect(result.status == 2, "\(refused)")
            #expect(result.stderr.hasPrefix("feedingest: --since needs a date"), "\(refused): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }

        // What arrives later: one changed article and a new one, whatever their claimed dates.
        Thread.sleep(forTimeInterval: 0.05)
        let cutoff = Date()
        Thread.sleep(forTimeInterval: 0.05)
        let changed = Fixture.localFeed
            .replacingOccurrences(of: "<title>First</title>", with: "<title>First, corrected</title>")
            .replacingOccurrences(of: "</channel>", with: "<item><guid>late</guid><title>Late</title><pubDate>Mon, 01 Jan 2001 00:00:00 GMT</pubDate></item></channel>")
        try Data(changed.utf8).write(to: fixture.local)
        let localList = fixture.directory.appendingPathComponent("local.txt")
        try Data("\(fixture.local.absoluteString)\n".utf8).write(to: localList)
        let rerun = try CommandRunner.run([localList.path, "--store", fixture.store.path])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stderr.contains("1 new, 1 updated"), "\(rerun.stderr)")
        let since = try fixture.run(["articles", "--since", Self.rfc3339(cutoff)])
        #expect(since.status == 0, "\(since.stderr)")
        let arrived = Self.objects(since)
        #expect(arrived.map { $0["title"] as? String } == ["First, corrected", "Late"])  // newest first by their own dates
        #expect(arrived.map { $0["status"] as? String } == ["updated", "new"])
        let check = try validate(since.stdout, schema: "article.schema.json", lines: true)
        #expect(check.ok, "\(check.output)")
        // Ingest printed exactly these, with the same status.
        #expect(Set(Self.objects(rerun).map { "\($0["id"] ?? "") \($0["status"] ?? "")" }) == Set(arrived.map { "\($0["id"] ?? "") \($0["status"] ?? "")" }))
    }

    @Test func feedsShowsStatusFailuresAndValidatorsAsATableAndAsJSON() throws {
        let fixture = try Fixture()
        let json = try fixture.run(["feeds", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let check = try validate(json.stdout, schema: "feed.schema.json", lines: true)
        #expect(check.ok, "\(check.output)")
        let feeds = Self.objects(json)
        #expect(feeds.count == 5)
        let byURL = Dictionary(uniqueKeysWithValues: feeds.map { ($0["url"] as? String ?? "", $0) })
        let dead = try #require(byURL["http://127.0.0.1:1/feed.xml"])
        #expect(dead["status"] as? String == "failed")
        #expect(dead["consecutiveFailures"] as? Int == 1)
        #expect((dead["error"] as? String)?.isEmpty == false)
        #expect(dead["articles"] as? Int == 0)
        let next = try #require(Self.date(dead["nextFetch"]))
        #expect(next > Date())
        let bio = try #require(byURL["\(fixture.base)/bio.rdf"])
        #expect(bio["status"] as? String == "updated")
        #expect(bio["consecutiveFailures"] as? Int == 0 && bio["error"] == nil)
        #expect(bio["articles"] as? Int == 30)
        #expect(bio["tags"] as? [String] == ["science"])
        #expect(dead["tags"] == nil)
        #expect((bio["title"] as? String)?.contains("bioRxiv") == true)
        #expect((bio["lastModified"] as? String)?.hasSuffix("GMT") == true)  // the server sends Last-Modified (and no ETag)
        #expect(Self.date(bio["lastFetch"]) != nil && Self.date(bio["lastSuccess"]) != nil)
        let local = try #require(byURL[fixture.local.path])
        #expect(local["title"] as? String == "Tom & Jerry's \"<News>\"")
        #expect(local["articles"] as? Int == 3)
        // Every feed's count is the number of its articles that 'articles' prints.
        let perFeed = Dictionary(grouping: Self.objects(try fixture.run(["articles"])), by: { $0["feed"] as? String ?? "" })
        for feed in feeds { #expect(perFeed[feed["url"] as? String ?? "", default: []].count == feed["articles"] as? Int, "\(feed)") }

        // The table, also when stdout is a pipe: a header, then one line a feed, failures with their error.
        let table = try fixture.run(["feeds"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.lines.count == 6)
        #expect(table.lines.first?.hasPrefix("STATUS") == true)
        #expect(table.lines.first?.contains("NEXT FETCH") == true)
        let failed = try #require(table.lines.first { $0.contains("127.0.0.1:1/feed.xml") })
        #expect(failed.hasPrefix("failed "))
        #expect(failed.contains("error (fetch.connection-refused): \(dead["error"] as? String ?? "?")"), "\(failed)")
        #expect(dead["errorKind"] as? String == "fetch.connection-refused", "feeds --json gives the error's kind: \(dead)")
        #expect(failed.split(separator: " ", omittingEmptySubsequences: true)[1] == "1")  // FAILS
        let bioLine = try #require(table.lines.first { $0.contains("/bio.rdf") })
        #expect(bioLine.hasPrefix("updated "))
        #expect(bioLine.contains(" last-modified "))
        #expect(bioLine.split(separator: " ", omittingEmptySubsequences: true)[2] == "30")  // ARTICLES
        #expect(table.lines.contains { $0.contains(fixture.local.path) && $0.contains("\"Tom & Jerry's \"<News>\"\"") })
    }

    @Test func exportOPMLRoundTripsThroughFeedListAndIngest() throws {
        let fixture = try Fixture()
        let result = try fixture.run(["export-opml"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<opml version=\"2.0\">"))
        #expect(result.stdout.contains("text=\"Tom &amp; Jerry's &quot;&lt;News&gt;&quot;\""))
        #expect(result.stdout.contains("xmlUrl=\"\(fixture.base)/atp.rss?from=list&amp;x=1\""))
        let opml = fixture.directory.appendingPathComponent("export.opml")
        try Data(result.stdout.utf8).write(to: opml)

        // FeedList reads it as the same feeds the store has, under the same store keys.
        let list = try FeedList.load(path: opml.path)
        #expect(list.problems.isEmpty, "\(list.problems)")
        let stored = try Self.rows("SELECT url FROM feeds ORDER BY url", in: fixture.store)
        #expect(stored.count == 5)
        #expect(list.entries.map(\.storeURL).sorted() == stored)
        // Tags come back as folders: the same tags, outermost first.
        let tags = Dictionary(uniqueKeysWithValues: list.entries.map { ($0.storeURL, $0.tags) })
        #expect(tags["\(fixture.base)/atp.rss?from=list&x=1"] == ["podcasts", "tech"])
        #expect(tags["\(fixture.base)/bio.rdf"] == ["science"])
        #expect(tags["\(fixture.base)/DaringFireball.atom"] == ["tech"])
        #expect(tags["http://127.0.0.1:1/feed.xml"] == [])
        #expect(result.stdout.contains("  <outline text=\"podcasts\">\n      <outline text=\"tech\">\n"), "\(result.stdout)")

        // An independent XML parser sees the attributes exactly (escaping), and every outline has text (OPML 2.0).
        let python = try ChildProcess.run("/usr/bin/env", ["python3", "-c", """
            import sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            assert root.tag == "opml" and root.get("version") == "2.0"
            for o in root.find("body").iter("outline"):
                assert o.get("text")
                if o.get("xmlUrl"): print(o.get("text") + "\\t" + o.get("xmlUrl"))
            """, opml.path])
        let parsed = python.standardOutput
        #expect(python.status == 0, "\(python.standardError)")
        #expect(parsed.contains("Tom & Jerry's \"<News>\"\t\(fixture.local.absoluteString)\n"), "\(parsed)")
        #expect(parsed.contains("http://127.0.0.1:1/feed.xml\thttp://127.0.0.1:1/feed.xml\n"), "\(parsed)")  // no title: the URL

        // A user moving stores: ingest the export into a fresh store, which then has the same feeds.
        let fresh = fixture.directory.appendingPathComponent("fresh.sqlite")
        let reingest = try CommandRunner.run(["ingest", opml.path, "--store", fresh.path, "-q"])
        #expect(reingest.status == 1)  // the dead feed fails again
        #expect(try Self.rows("SELECT url FROM feeds ORDER BY url", in: fresh) == stored)
        #expect(try Self.rows("SELECT url, replace(tags, char(31), ' ') FROM feeds WHERE tags IS NOT NULL ORDER BY url", in: fresh)
                == (try Self.rows("SELECT url, replace(tags, char(31), ' ') FROM feeds WHERE tags IS NOT NULL ORDER BY url", in: fixture.store)))
        #expect(try Self.rows("SELECT count(*) FROM feeds WHERE tags IS NOT NULL", in: fresh) == ["3"])
        #expect(try Self.rows("SELECT count(*) FROM articles", in: fresh) == (try Self.rows("SELECT count(*) FROM articles", in: fixture.store)))
    }

    @Test func aMissingStoreIsAOneLineErrorAndNothingIsCreated() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = ProcessInfo.processInfo.environment
        environment["FEEDINGEST_STORE"] = nil
        environment["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
        for command in [["articles"], ["feeds"], ["feeds", "--json"], ["export-opml"]] {
            let result = try CommandRunner.run(command, environment: environment)
            #expect(result.status == 2, "\(command)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr == "feedingest: no store at \(directory.path)/data/feedingest/feedingest.sqlite "
                    + "(ingest a feed list first: 'feedingest FEEDS', or name a store with --store)\n", "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("data").path))
        let named = try CommandRunner.run(["feeds", "--store", directory.appendingPathComponent("none.sqlite").path])
        #expect(named.status == 2)
        #expect(named.stderr.contains("no store at \(directory.path)/none.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("none.sqlite").path))
        // Not a store: refused, one line, untouched.
        let other = directory.appendingPathComponent("notes.txt")
        try Data("not a database, just text that is long enough to be looked at\n".utf8).write(to: other)
        let refused = try CommandRunner.run(["articles", "--store", other.path])
        #expect(refused.status == 2)
        #expect(refused.stderr.hasPrefix("feedingest: cannot read the store \(other.path): not a feedingest store"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(try String(contentsOf: other, encoding: .utf8).hasPrefix("not a database"))
        let isDirectory = try CommandRunner.run(["export-opml", "--store", directory.path])
        #expect(isDirectory.status == 2)
        #expect(isDirectory.stderr.contains("is a directory"))
    }

    @Test func theStoreIsFoundLikeIngestFindsItAndBadUsageExits2() throws {
        let fixture = try Fixture()
        var environment = ProcessInfo.processInfo.environment
        environment["FEEDINGEST_STORE"] = fixture.store.path
        let fromEnvironment = try CommandRunner.run(["feeds", "--json"], environment: environment)
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        #expect(fromEnvironment.lines.count == 5)
        environment["FEEDINGEST_STORE"] = nil
        environment["XDG_DATA_HOME"] = fixture.directory.appendingPathComponent("xdg").path
        let xdg = fixture.directory.appendingPathComponent("xdg/feedingest")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixture.store, to: xdg.appendingPathComponent("feedingest.sqlite"))
        #expect(try CommandRunner.run(["articles", "--limit", "2"], environment: environment).lines.count == 2)

        let cases: [([String], String)] = [
            (["articles", "--limt", "3"], "unknown option '--limt' for 'articles' (did you mean '--limit'?)"),
            (["feeds", "--jsno"], "unknown option '--jsno' for 'feeds' (did you mean '--json'?)"),
            (["export-opml", "--output", "x"], "unknown option '--output' for 'export-opml' (see 'feedingest export-opml --help')"),
            (["articles", "--limit", "-1"], "--limit needs a number of articles (0 or more), not '-1'"),
            (["articles", "--limit"], "--limit needs a value"),
            (["articles", "extra"], "articles takes no arguments, got 'extra'"),
            (["feeds", "x.txt"], "feeds takes no arguments, got 'x.txt'"),
            (["articles", "--feed", "http://127.0.0.1:1/feed.xm"], "no feed 'http://127.0.0.1:1/feed.xm' in the store \(fixture.store.path) (did you mean 'http://127.0.0.1:1/feed.xml'?)"),
            (["articles", "--feed", "https://nowhere.example/some/other/feed"], "(see 'feedingest feeds')"),
        ]
        for (arguments, message) in cases {
            let result = try fixture.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            #expect(result.stderr.hasPrefix("feedingest: "), "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments)")
        }
        for command in ["articles", "feeds", "export-opml"] {
            let help = try CommandRunner.run([command, "--help"])
            #expect(help.status == 0)
            #expect(help.stdout.hasPrefix("Usage: feedingest \(command)"))
            #expect(help.stdout.contains("Examples:"))
        }
        let typo = try CommandRunner.run(["export-opm"])
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("did you mean 'export-opml'?"))
        let top = try CommandRunner.run(["--help"])
        #expect(top.stdout.contains("feedingest articles") && top.stdout.contains("feedingest feeds") && top.stdout.contains("feedingest export-opml"))
    }
}
