import Foundation
import TestSupport
import Testing

/// JSON Feed through the built binary, where a user sees it: `parse` on files, stdin and HTTP, and ingest into a store.
@Suite("feedingest and JSON Feed, end to end")
struct JSONFeedCommandTests {
    /// NetNewsWire's JSON Feeds and their item counts (manifest.json).
    static let feeds = ["3960.json": 20, "DaringFireball.json": 48, "allthis.json": 12, "authors.json": 4, "curt.json": 26,
                        "inessential.json": 20, "jsonfeed-extension.json": 3, "pxlnv.json": 20, "rose.json": 84]

    static func objects(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func parsesJSONFeedFilesIntoSchemaValidArticlesAndAReport() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("report.json")
        let names = Self.feeds.keys.sorted()
        let inputs = names.map { Paths.realworld.appendingPathComponent($0).path }
        let result = try CommandRunner.run(["parse"] + inputs + ["--report", report.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(result.lines.count == Self.feeds.values.reduce(0, +))
        let articles = try validate(result.stdout, schema: "article.schema.json", lines: true)
        #expect(articles.ok, "\(articles.output.prefix(2000))")
        let reportText = try String(contentsOf: report, encoding: .utf8)
        let reportCheck = try validate(reportText, schema: "report.schema.json", lines: false)
        #expect(reportCheck.ok, "\(reportCheck.output.prefix(2000))")
        let entries = (try JSONSerialization.jsonObject(with: Data(reportText.utf8)) as? [String: Any])?["inputs"] as? [[String: Any]] ?? []
        #expect(entries.map { $0["articleCount"] as? Int } == names.map { Self.feeds[$0] })
        #expect(entries.allSatisfy { ($0["format"] as? [String: Any])?["family"] as? String == "json" })
        #expect(entries.map { ($0["format"] as? [String: Any])?["version"] as? String }
                == names.map { ["3960.json", "authors.json", "jsonfeed-extension.json"].contains($0) ? "1.1" : "1.0" })
        // pxlnv.json says http://jsonfeed.org/version/1; rose.json has tags as a string: noted, never fatal.
        let pxlnv = entries[names.firstIndex(of: "pxlnv.json")!]
        #expect((pxlnv["repairs"] as? [String: Int])?["nonstandardVersion"] == 1)
        let rose = entries[names.firstIndex(of: "rose.json")!]
        #expect((rose["repairs"] as? [String: Int])?["wronglyTypedFields"] == 84)

        // The first article of DaringFireball.json, field by field against the file read by Python's json module.
        let daring = Self.objects(result.stdout).first { ($0["feed"] as? String)?.hasSuffix("DaringFireball.json") == true }
        let expected = try ChildProcess.run("/usr/bin/env", ["python3", "-c", """
            import json, sys
            item = json.load(open(sys.argv[1]))["items"][0]
            print(json.dumps([item["id"], item["url"], item["external_url"], item["title"], item["author"]["name"], len(item["content_html"])]))
            """, inputs[names.firstIndex(of: "DaringFireball.json")!]]).standardOutput
        let want = try #require(try JSONSerialization.jsonObject(with: Data(expected.utf8)) as? [Any])
        #expect(daring?["id"] as? String == want[0] as? String)
        #expect(daring?["idSource"] as? String == "guid")
        #expect(daring?["link"] as? String == want[1] as? String)
        #expect(daring?["externalURL"] as? String == want[2] as? String)
        #expect(daring?["title"] as? String == want[3] as? String)
        #expect(((daring?["authors"] as? [[String: Any]])?.first?["name"]) as? String == want[4] as? String)
        #expect(((daring?["content"] as? [String: Any])?["value"] as? String)?.count == want[5] as? Int)
    }

    @Test func readsAJSONFeedOnStdin() throws {
        let data = try Data(contentsOf: Paths.realworld.appendingPathComponent("inessential.json"))
        let result = try CommandRunner.run(["parse", "-"], stdin: data)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == 20)
        #expect(result.lines.first?.contains(#""feed":"-""#) == true)
    }

    @Test func notAFeedAndBrokenJSONAreClearErrors() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("r.json")
        let partial = Paths.realworld.appendingPathComponent("allthis-partial.json").path
        let rssInJSON = Paths.realworld.appendingPathComponent("ScriptingNews.json").path
        let result = try CommandRunner.run(["parse", partial, rssInJSON, "--report", report.path])
        #expect(result.status == 1)
        // allthis-partial.json breaks off inside its third item with a raw line feed in a string: two articles, then the error.
        #expect(result.lines.count == 2)
        let errors = result.stderr.split(separator: "\n").map(String.init)
        #expect(errors.count == 2)
        #expect(errors.first == "feedingest: \(partial):1:12388: lexical error: invalid character inside string.")
        #expect(errors.last?.hasPrefix("feedingest: \(rssInJSON):945:1: not a feed: a JSON object without a JSON Feed version") == true,
                "\(result.stderr)")
        let reportText = try String(contentsOf: report, encoding: .utf8)
        #expect(try validate(reportText, schema: "report.schema.json", lines: false).ok)
        #expect(reportText.contains(#""error":{"kind":"json","name":"control-character","code":4,"message":"lexical error: invalid character inside string.","line":1,"column":12388,"byteOffset":12388}"#))
        #expect(reportText.contains(#""kind":"notAFeed","name":"not-a-feed""#))
    }

    @Test func fetchesAJSONFeedOverHTTPByItsContentType() throws {
        // The server's own document root (never the corpus): /feeds/NAME serves NAME from it as application/feed+json.
        let server = try NginxServer(.init(locations: [.init("/feeds/", contentType: "application/feed+json")]))
        // A JSON Feed at a URL without an extension, served as application/feed+json (and gzipped on the fly by nginx).
        try server.write(try Data(contentsOf: Paths.realworld.appendingPathComponent("curt.json")), as: "curt")
        try server.write(Data("   not JSON at all".utf8), as: "broken")
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("r.json")
        let result = try CommandRunner.run(["parse", server.url("/feeds/curt").absoluteString, server.url("/feeds/broken").absoluteString,
                                            "--report", report.path])
        #expect(result.status == 1)
        #expect(result.lines.count == 26)
        let reportText = try String(contentsOf: report, encoding: .utf8)
        let entries = (try JSONSerialization.jsonObject(with: Data(reportText.utf8)) as? [String: Any])?["inputs"] as? [[String: Any]] ?? []
        #expect((entries.first?["format"] as? [String: Any])?["family"] as? String == "json")
        // The body starts with neither { nor <: the media type sends it to the JSON parser, whose error it is.
        let error = entries.last?["error"] as? [String: Any]
        #expect(error?["kind"] as? String == "json", "\(reportText)")
        #expect(error?["name"] as? String == "syntax")
    }

    @Test func ingestsAJSONFeedAndASecondRunPrintsNothing() throws {
        let server = try NginxServer(.init(locations: [.init("/feeds/", contentType: "application/feed+json")]))
        try server.write(try Data(contentsOf: Paths.realworld.appendingPathComponent("3960.json")), as: "3960")
        try server.link(Paths.realworld.appendingPathComponent("DaringFireball.json").path)
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        let local = Paths.realworld.appendingPathComponent("allthis.json").path
        try Data("\(server.url("/feeds/3960").absoluteString)\n\(server.url("/DaringFireball.json").absoluteString)\n\(local)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let runReport = directory.appendingPathComponent("run.json")

        let first = try CommandRunner.run([list.path, "--store", store.path, "--report", runReport.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("3 feeds: 3 ok, 0 not modified, 0 failed; 80 new, 0 updated"), "\(first.stderr)")
        #expect(first.lines.count == 80)
        let check = try validate(first.stdout, schema: "article.schema.json", lines: true)
        #expect(check.ok, "\(check.output.prefix(2000))")
        #expect(Self.objects(first.stdout).allSatisfy { $0["status"] as? String == "new" })
        let reportText = try String(contentsOf: runReport, encoding: .utf8)
        #expect(try validate(reportText, schema: "run-report.schema.json", lines: false).ok)
        let feeds = (try JSONSerialization.jsonObject(with: Data(reportText.utf8)) as? [String: Any])?["feeds"] as? [[String: Any]] ?? []
        #expect(feeds.count == 3)
        #expect(feeds.allSatisfy { ($0["format"] as? [String: Any])?["family"] as? String == "json" }, "\(reportText)")

        // Second run: 304s for the two over HTTP, the local file unchanged: nothing printed.
        let second = try CommandRunner.run([list.path, "--store", store.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.isEmpty, "\(second.stdout.prefix(500))")
        #expect(second.stderr.contains("0 new, 0 updated"), "\(second.stderr)")
        // The stored articles read back.
        let stored = try CommandRunner.run(["articles", "--store", store.path, "--feed", local])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.lines.count == 12)
    }
}
