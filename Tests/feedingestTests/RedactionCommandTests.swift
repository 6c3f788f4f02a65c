import Foundation
import TestSupport
import Testing

/// "Passwords never appear in output": feeds and enclosures whose URLs carry `user:password@`, through every command
/// that prints or writes a URL, with the built binary. The fetches still authenticate: the fault server's
/// `/auth-feed` answers 401 to a request without the credentials.
@Suite("feedingest: URL passwords never appear in output", .serialized)
struct RedactionCommandTests {
    static let secret = "s3cret"

    struct Scenario {
        let directory: URL
        let store: String
        let list: URL
        let deadURL: String
        let authURL: String
        let plainURL: String
        let faults: FaultServer

        init(_ label: String) throws {
            faults = try FaultServer.shared.get()
            directory = try Paths.temporaryDirectory("redact-\(label)")
            store = directory.appendingPathComponent("store.sqlite").path
            let token = "redact-\(label)-\(UUID().uuidString.prefix(8))"
            let expect = Data("user:\(RedactionCommandTests.secret)".utf8).base64EncodedString()
            let port = faults.port
            deadURL = "http://user:\(RedactionCommandTests.secret)@127.0.0.1:\(try Loopback.freePort())/feed.xml"
            authURL = "http://user:\(RedactionCommandTests.secret)@127.0.0.1:\(port)/auth-feed?expect=\(expect)&port=\(port)&token=\(token)"
            plainURL = "http://127.0.0.1:\(port)/auth-feed?expect=\(expect)&port=\(port)&token=\(token)-plain"
            list = directory.appendingPathComponent("feeds.txt")
            try Data("\(deadURL)\n\(authURL) download\n\(plainURL)\n".utf8).write(to: list)
        }

        func run(_ arguments: [String]) throws -> CommandRunner.Result {
            try CommandRunner.run(arguments, currentDirectory: directory)
        }
    }

    /// Fails the test if the password is anywhere in `texts`, naming where.
    static func expectNoSecret(_ texts: [(String, String)], sourceLocation: SourceLocation = #_sourceLocation) {
        for (place, text) in texts {
            #expect(!text.contains(secret), "the password appears in \(place): \(text)", sourceLocation: sourceLocation)
        }
    }

    static func objects(_ lines: [String]) -> [[String: Any]] {
        lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func ingestAndTheReadingCommandsShowUserAndMaskedPassword() throws {
        let scenario = try Scenario("ingest")
        defer { try? FileManager.default.removeItem(at: scenario.directory) }
        let report = scenario.directory.appendingPathComponent("report.json")
        // A line libcurl refuses (a bad IPv6 host) is reported with its text, masked.
        let handle = try FileHandle(forWritingTo: scenario.list)
        handle.seekToEndOfFile()
        handle.write(Data("http://user:\(Self.secret)@[zz]/feed.xml\n".utf8))
        try handle.close()
        let ingest = try scenario.run([scenario.list.path, "--store", scenario.store, "--report", report.path])
        #expect(ingest.status == 1)  // the dead port and the feed without credentials fail

        // The feed behind basic authentication was fetched (with its credentials) and its 2 articles came out.
        let articles = Self.objects(ingest.lines)
        #expect(articles.count == 2)
        let masked = "user:***@127.0.0.1"
        for article in articles {
            #expect((article["feed"] as? String)?.contains(masked) == true)
            #expect((article["link"] as? String)?.contains(masked) == true)
            let enclosures = article["enclosures"] as? [[String: Any]] ?? []
            #expect(enclosures.count == 1)
            #expect((enclosures.first?["url"] as? String)?.contains(masked) == true)
        }
        // The same route without credentials is refused: the credentials are what authenticated.
        #expect(ingest.stderr.contains("401"))
        // The dead feed's failure names it with the user and a masked password.
        #expect(ingest.stderr.contains(masked))
        let reportText = try String(contentsOf: report, encoding: .utf8)
        #expect(reportText.contains(masked))
        #expect(reportText.contains("http://user:***@[zz]/feed.xml"))
        #expect(ingest.stderr.contains("[zz]"))
        Self.expectNoSecret([("stdout", ingest.stdout), ("stderr", ingest.stderr), ("the run report", reportText)])

        let feeds = try scenario.run(["feeds", "--store", scenario.store])
        let feedsJSON = try scenario.run(["feeds", "--json", "--store", scenario.store])
        let stored = try scenario.run(["articles", "--store", scenario.store])
        #expect(feeds.status == 0 && feedsJSON.status == 0 && stored.status == 0)
        #expect(Self.objects(feedsJSON.lines).count == 3)
        #expect(feeds.stdout.contains(masked))
        #expect(Self.objects(stored.lines).count == 2)
        Self.expectNoSecret([("feeds", feeds.stdout + feeds.stderr), ("feeds --json", feedsJSON.stdout + feedsJSON.stderr),
                             ("articles", stored.stdout + stored.stderr)])

        // `articles --feed` matches the feed by its real URL, credentials and all, and shows it masked.
        let one = try scenario.run(["articles", "--feed", scenario.authURL, "--store", scenario.store])
        #expect(one.status == 0)
        #expect(Self.objects(one.lines).count == 2)
        Self.expectNoSecret([("articles --feed", one.stdout + one.stderr)])

        // OPML export is a backup to import again: it keeps the credentials, on stdout only because it was asked for.
        let opml = try scenario.run(["export-opml", "--store", scenario.store])
        #expect(opml.stdout.contains(Self.secret))
    }

    @Test func downloadAndDownloadsShowMaskedEnclosureURLs() throws {
        let scenario = try Scenario("download")
        defer { try? FileManager.default.removeItem(at: scenario.directory) }
        _ = try scenario.run([scenario.list.path, "--store", scenario.store])
        let media = scenario.directory.appendingPathComponent("media")
        let download = try scenario.run(["download", "--store", scenario.store, "--dir", media.path])
        #expect(download.status == 0, "\(download.stderr)")
        let listed = try scenario.run(["downloads", "--json", "--store", scenario.store])
        let table = try scenario.run(["downloads", "--store", scenario.store])
        let rows = Self.objects(listed.lines)
        #expect(rows.count == 2)
        for row in rows {
            #expect(row["state"] as? String == "done")
            #expect((row["url"] as? String)?.contains("user:***@127.0.0.1") == true)
        }
        Self.expectNoSecret([("download", download.stdout + download.stderr), ("downloads --json", listed.stdout + listed.stderr),
                             ("downloads", table.stdout + table.stderr)])
    }

    @Test func parseOfAURLWithCredentials() throws {
        let scenario = try Scenario("parse")
        defer { try? FileManager.default.removeItem(at: scenario.directory) }
        let report = scenario.directory.appendingPathComponent("parse.json")
        let parsed = try scenario.run(["parse", scenario.authURL, scenario.deadURL, "--report", report.path])
        #expect(parsed.status == 1)  // the dead port
        #expect(Self.objects(parsed.lines).count == 2)
        #expect(parsed.stderr.contains("user:***@127.0.0.1"))
        let reportText = try String(contentsOf: report, encoding: .utf8)
        #expect(reportText.contains("user:***@127.0.0.1"))
        Self.expectNoSecret([("parse stdout", parsed.stdout), ("parse stderr", parsed.stderr), ("parse --report", reportText)])
    }

    @Test func watchOutputAndMetricsShowMaskedURLs() throws {
        let scenario = try Scenario("watch")
        defer { try? FileManager.default.removeItem(at: scenario.directory) }
        let metrics = scenario.directory.appendingPathComponent("feedingest.prom")
        let watch = try WatchProcess(["watch", scenario.list.path, "--store", scenario.store, "--min-interval", "0",
                                      "--max-interval", "1s", "--metrics-file", metrics.path], in: scenario.directory)
        #expect(watch.waitUntil(20) { watch.articles.count >= 2 && watch.stderr.contains("user:***@127.0.0.1") }, "\(watch.stderr)")
        #expect(watch.waitUntil(20) { FileManager.default.fileExists(atPath: metrics.path) })
        #expect(watch.stop() == 0, "\(watch.stderr)")
        let articles = watch.articles
        #expect(articles.count >= 2)
        #expect(articles.allSatisfy { ($0["feed"] as? String)?.contains("user:***@127.0.0.1") == true })
        let metricsText = (try? String(contentsOf: metrics, encoding: .utf8)) ?? ""
        Self.expectNoSecret([("watch stdout", watch.output.joined(separator: "\n")), ("watch stderr", watch.stderr),
                             ("the metrics file", metricsText)])
    }
}
