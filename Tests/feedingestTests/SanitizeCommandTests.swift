import Foundation
import TestSupport
import Testing

/// `--sanitize` on `parse` and `ingest`, end to end through the built binary: hostile HTML in RSS, Atom and JSON Feed
/// comes out cleaned, and without the flag it comes out as the feed wrote it.
@Suite("feedingest --sanitize, end to end")
struct SanitizeCommandTests {
    static let rss = """
        <?xml version="1.0"?>
        <rss version="2.0"><channel><title>T</title><link>http://127.0.0.1/</link>
        <description><![CDATA[About <script>alert('feed')</script><b>us</b>]]></description>
        <item><guid>1</guid><title>Hello &lt;b onmouseover="x()"&gt;World&lt;/b&gt;</title>
        <description><![CDATA[<p onclick="steal()">Hi <img src=x onerror=alert(1)><a href="jav&#x09;ascript:alert(1)">link</a></p><script>alert(2)</script>]]></description>
        </item></channel></rss>
        """
    static let atom = """
        <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><id>urn:a</id>
        <entry><id>urn:1</id><title>E</title><content type="html">&lt;iframe src="http://127.0.0.1/"&gt;x&lt;/iframe&gt;&lt;em style="color:red"&gt;kept&lt;/em&gt;</content></entry>
        </feed>
        """
    static let json = #"""
        {"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [
          {"id": "j1", "content_html": "<svg onload=alert(1)></svg><a href=\"JaVaScRiPt:alert(1)\">a</a><img src=\"data:image/png;base64,iVBORw0KGgo=\">"}
        ]}
        """#

    func write(_ directory: URL) throws -> [String] {
        let files = [("hostile.rss", Self.rss), ("hostile.atom", Self.atom), ("hostile.json", Self.json)]
        return try files.map { name, text in
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
    }

    func articles(_ stdout: String) throws -> [[String: Any]] {
        try stdout.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func parseCleansTitlesSummariesAndContent() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = try write(directory)
        let result = try CommandRunner.run(["parse", "--sanitize"] + paths)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try articles(result.stdout)
        try #require(lines.count == 3)
        #expect(lines[0]["title"] as? String == "Hello <b>World</b>")
        let summary = (lines[0]["summary"] as? [String: Any])?["value"] as? String
        #expect(summary == #"<p>Hi <img src="x"><a>link</a></p>"#)
        let atom = (lines[1]["content"] as? [String: Any])?["value"] as? String
        #expect(atom == "<em>kept</em>")
        let json = (lines[2]["content"] as? [String: Any])?["value"] as? String
        #expect(json == #"<a>a</a><img src="data:image/png;base64,iVBORw0KGgo=">"#)
        #expect(try validate(result.stdout, schema: "article.schema.json", lines: true).ok)
    }

    @Test func withoutTheFlagHTMLStaysAsWritten() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = try write(directory)
        let result = try CommandRunner.run(["parse"] + paths)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try articles(result.stdout)
        try #require(lines.count == 3)
        #expect(lines[0]["title"] as? String == #"Hello <b onmouseover="x()">World</b>"#)
        let summary = (lines[0]["summary"] as? [String: Any])?["value"] as? String
        #expect(summary?.contains("<script>alert(2)</script>") == true)
        #expect(summary?.contains("onerror=alert(1)") == true)
        let json = (lines[2]["content"] as? [String: Any])?["value"] as? String
        #expect(json?.hasPrefix("<svg onload=alert(1)>") == true)
    }

    @Test func ingestCleansWhatItPrintsAndReportsTheFeedDescriptionCleaned() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = try write(directory)
        let list = directory.appendingPathComponent("feeds.txt")
        try Data(paths.joined(separator: "\n").utf8).write(to: list)
        let store = directory.appendingPathComponent("s.sqlite")
        let result = try CommandRunner.run(["ingest", list.path, "--store", store.path, "--sanitize", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == 3)
        for needle in ["<script", "onerror", "onclick", "onload", "<iframe", "<svg", "style=", "avascript:"] {
            #expect(!result.stdout.lowercased().contains(needle), "\(needle) in \(result.stdout)")
        }
        // What was stored is the cleaned HTML too: `articles` reads it back.
        let stored = try CommandRunner.run(["articles", "--store", store.path])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout.contains("<em>kept</em>"))
        #expect(!stored.stdout.contains("<iframe"))
    }

    @Test func watchCleansWhatItPrints() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = try write(directory)
        let list = directory.appendingPathComponent("feeds.txt")
        try Data(paths.joined(separator: "\n").utf8).write(to: list)
        let store = directory.appendingPathComponent("s.sqlite")
        let watch = try ChildProcess(CommandRunner.binary.path, ["watch", list.path, "--store", store.path, "--sanitize", "--quiet"],
                                     capturesStandardError: true)
        var lines: [String] = []
        while lines.count < 3, let line = watch.readLine() { lines.append(line) }
        watch.kill(SIGTERM)
        #expect(watch.waitUntilExit() == 0)
        #expect(lines.count == 3)
        let printed = lines.joined(separator: "\n").lowercased()
        for needle in ["<script", "onerror", "onclick", "onload", "<iframe", "<svg", "style=", "avascript:"] {
            #expect(!printed.contains(needle), "\(needle) in \(printed)")
        }
        #expect(printed.contains("<em>kept</em>"))
    }
}
