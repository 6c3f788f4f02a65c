import Foundation
import TestSupport
import Testing

/// Bytes that lie about themselves, through the built command as a user runs it: gzip without `Content-Encoding` and
/// damaged gzip, charsets the bytes contradict, Atom without its namespace, undeclared prefixes, `email (Name)`
/// persons and relative links nothing resolves.
@Suite("feedingest, bytes that lie about themselves")
struct MisdeclaredInputCommandTests {
    static func objects(_ result: CommandRunner.Result) -> [[String: Any]] {
        result.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func json(_ url: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// The first input of a `parse --report` file.
    static func firstInput(_ url: URL) throws -> [String: Any] {
        try #require((try json(url)["inputs"] as? [[String: Any]])?.first)
    }

    /// An RSS feed of `items` items with long descriptions, gzip-compressed and damaged in the middle of the stream.
    static func damagedGzip(items: Int) -> Data {
        var feed = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title>"
        for index in 0..<items {
            feed += "<item><title>Item \(index)</title><guid>g\(index)</guid><description>\(String(repeating: "words and more words ", count: 6))</description></item>"
        }
        feed += "</channel></rss>"
        var compressed = [UInt8](Compress.gzip(Data(feed.utf8)))
        for index in compressed.count / 2..<(compressed.count / 2 + 64) { compressed[index] ^= 0x5A }
        return Data(compressed)
    }

    // MARK: gzip

    @Test func gzipWithoutContentEncodingIsInflated() throws {
        let server = try FaultServer.shared.get()
        let result = try CommandRunner.run(["parse", server.url("/gzip-unlabelled?items=30").absoluteString])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(result.lines.count == 30)
        #expect(Self.objects(result).first?["title"] as? String == "Item 0")
    }

    @Test func damagedGzipIsADecompressionErrorOnEveryPath() throws {
        let server = try FaultServer.shared.get()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("damaged.xml.gz")
        try Self.damagedGzip(items: 400).write(to: file)
        for input in [file.path, server.url("/corrupt-gzip").absoluteString, server.url("/gzip-unlabelled?items=200&corrupt=1").absoluteString] {
            let report = directory.appendingPathComponent("report.json")
            let result = try CommandRunner.run(["parse", input, "--report", report.path])
            #expect(result.status == 1, "\(input)")
            #expect(result.stderr.hasPrefix("feedingest: \(input): gzip body: "), "\(result.stderr)")
            #expect(!result.stderr.contains("mismatched tag") && !result.stderr.contains("invalid token"), "\(result.stderr)")
            let error = try #require(try Self.firstInput(report)["error"] as? [String: Any])
            #expect(error["kind"] as? String == "fetch", "\(input)")
            #expect(error["name"] as? String == "decompression", "\(input)")
            #expect(try validate(String(decoding: try Data(contentsOf: report), as: UTF8.self), schema: "report.schema.json", lines: false).ok)
        }

        // Ingest records it as its own kind, in the run report and in `feeds`.
        let list = directory.appendingPathComponent("feeds.txt")
        let remote = server.url("/corrupt-gzip").absoluteString
        try Data("\(file.path)\n\(remote)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let runReport = directory.appendingPathComponent("run.json")
        let run = try CommandRunner.run([list.path, "--store", store.path, "--report", runReport.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("2 feeds: 0 ok, 0 not modified, 2 failed"), "\(run.stderr)")
        let feeds = try #require(try Self.json(runReport)["feeds"] as? [[String: Any]])
        #expect(feeds.count == 2)
        for feed in feeds {
            let error = feed["error"] as? [String: Any]
            #expect(error?["kind"] as? String == "fetch", "\(feed)")
            #expect(error?["code"] as? String == "decompression", "\(feed)")
        }
        #expect(try validate(String(decoding: try Data(contentsOf: runReport), as: UTF8.self), schema: "run-report.schema.json", lines: false).ok)
        let status = try CommandRunner.run(["feeds", "--store", store.path, "--json"])
        let kinds = Self.objects(status).compactMap { $0["errorKind"] as? String }
        #expect(kinds == ["fetch.decompression", "fetch.decompression"], "\(status.stdout)")
    }

    // MARK: Charsets

    @Test func utf8LabelledLatin1IsReadAsUTF8WithOneLineOnStderr() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("latin1-label.xml")
        try Data("""
            <?xml version="1.0" encoding="ISO-8859-1"?>
            <rss version="2.0"><channel><title>Café</title>
            <item><title>Crème brûlée — naïve</title><guid>1</guid></item>
            <item><title>Zürich</title><guid>2</guid></item>
            </channel></rss>
            """.utf8).write(to: file)
        let report = directory.appendingPathComponent("report.json")
        let result = try CommandRunner.run(["parse", file.path, "--report", report.path])
        #expect(result.status == 0)
        #expect(Self.objects(result).map { $0["title"] as? String } == ["Crème brûlée — naïve", "Zürich"])
        #expect(result.stderr == "feedingest: \(file.path): text replaced: labelled 'ISO-8859-1' (XML declaration) but the bytes are UTF-8, read as UTF-8\n")
        let encoding = try #require(try Self.firstInput(report)["encoding"] as? [String: Any])
        #expect(encoding["name"] as? String == "UTF-8")
        #expect(encoding["source"] as? String == "corrected")
        #expect(encoding["labelSource"] as? String == "declaration")
        #expect(try validate(String(decoding: try Data(contentsOf: report), as: UTF8.self), schema: "report.schema.json", lines: false).ok)

        // The same bytes with --charset latin1: the hint is overruled the same way, and --quiet says nothing.
        let hinted = try CommandRunner.run(["parse", "--charset", "latin1", file.path])
        #expect(hinted.stderr.contains("labelled 'latin1' (charset hint) but the bytes are UTF-8"), "\(hinted.stderr)")
        #expect(Self.objects(hinted).first?["title"] as? String == "Crème brûlée — naïve")
        let quiet = try CommandRunner.run(["parse", "-q", file.path])
        #expect(quiet.stderr.isEmpty)
        #expect(quiet.status == 0)
    }

    @Test func mislabelledCharsetsOverHTTPAreReadAsTheBytesSay() throws {
        let server = try FaultServer.shared.get()
        let titles = ["Crème brûlée “näive”", "Déjà vu – über"]
        // UTF-8 served as ISO-8859-1, windows-1252 served as UTF-8, and latin1 labels decoding as windows-1252.
        let cases: [(query: String, line: String?)] = [
            ("charset=iso-8859-1&codec=utf-8", "labelled 'iso-8859-1' (charset hint) but the bytes are UTF-8, read as UTF-8"),
            ("charset=utf-8&codec=cp1252", "labelled 'utf-8' (charset hint) but the bytes are mostly not UTF-8, read as windows-1252"),
            ("charset=us-ascii&codec=cp1252", nil),
            ("charset=ISO-8859-1&codec=cp1252", nil),
        ]
        for (query, line) in cases {
            let url = server.url("/mislabelled?\(query)").absoluteString
            let result = try CommandRunner.run(["parse", url])
            #expect(result.status == 0, "\(query): \(result.stderr)")
            #expect(Self.objects(result).map { $0["title"] as? String } == titles, "\(query)")
            #expect(result.stderr == (line.map { "feedingest: \(url): text replaced: \($0)\n" } ?? ""), "\(query)")
        }

        // Ingest says it once per feed too, and stores the text the bytes meant.
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = server.url("/mislabelled?charset=iso-8859-1&codec=utf-8").absoluteString
        let second = server.url("/mislabelled?charset=utf-8&codec=cp1252").absoluteString
        let clean = server.url("/mislabelled?charset=utf-8&codec=utf-8").absoluteString
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(first)\n\(second)\n\(clean)\n".utf8).write(to: list)
        let run = try CommandRunner.run([list.path, "--no-store"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        // One line for each of the two, in whichever order their workers finished them; none for the clean feed.
        let replaced = lines.filter { $0.contains("text replaced") }
        #expect(replaced.count == 2, "\(run.stderr)")
        #expect(Set(replaced) == [
            "feedingest: \(first): text replaced: labelled 'iso-8859-1' (charset hint) but the bytes are UTF-8, read as UTF-8",
            "feedingest: \(second): text replaced: labelled 'utf-8' (charset hint) but the bytes are mostly not UTF-8, read as windows-1252",
        ], "\(run.stderr)")
        #expect(Self.objects(run).compactMap { $0["title"] as? String }.filter { $0 == titles[0] }.count == 3)
        let quiet = try CommandRunner.run([list.path, "--no-store", "-q"])
        #expect(quiet.stderr.isEmpty)
    }

    @Test func invalidBytesAreOneLineWithTheirCount() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad-bytes.xml")
        var bytes = Array("<?xml version=\"1.0\" encoding=\"utf-8\"?><rss><channel><item><title>Zürich — Genève ".utf8) + [0xE9] + Array(" Köln ".utf8) + [0xFF]
        bytes += Array("</title><guid>1</guid></item></channel></rss>".utf8)
        try Data(bytes).write(to: file)
        let result = try CommandRunner.run(["parse", file.path])
        #expect(result.status == 0)
        #expect(result.stderr == "feedingest: \(file.path): text replaced: U+FFFD replaced invalid bytes in 2 places\n")
        #expect(Self.objects(result).first?["title"] as? String == "Zürich — Genève \u{FFFD} Köln \u{FFFD}")
    }

    // MARK: Atom without its namespace, undeclared prefixes, persons, relative links

    @Test func atomWithoutItsNamespaceIsReadAndStored() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("plain.atom")
        try Data("""
            <?xml version="1.0" encoding="utf-8"?>
            <feed><title>Plain</title><id>urn:plain</id>
            <entry><title>One</title><id>urn:1</id><link href="https://example.org/1"/><updated>2024-05-01T10:00:00Z</updated></entry>
            <entry><title>Two</title><id>urn:2</id><link href="https://example.org/2"/></entry>
            </feed>
            """.utf8).write(to: file)
        let report = directory.appendingPathComponent("report.json")
        let parsed = try CommandRunner.run(["parse", file.path, "--report", report.path])
        #expect(parsed.status == 0, "\(parsed.stderr)")
        #expect(Self.objects(parsed).map { $0["id"] as? String } == ["urn:1", "urn:2"])
        #expect(Self.objects(parsed).first?["link"] as? String == "https://example.org/1")
        let format = try #require(try Self.firstInput(report)["format"] as? [String: Any])
        #expect(format["family"] as? String == "atom" && format["version"] as? String == "1.0")

        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(file.path)\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let run = try CommandRunner.run([list.path, "--store", store.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("1 feed: 1 ok, 0 not modified, 0 failed; 2 new"), "\(run.stderr)")
    }

    @Test func undeclaredPrefixesAreRepairsNotFailures() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("prefixes.xml")
        try Data("""
            <rss version="2.0"><channel><title>T</title>
            <item><title>A</title><guid>a</guid><georss:point>45.1 7.6</georss:point><gml:pos>1 2</gml:pos>
            <media:content url="https://example.org/a.mp3" type="audio/mpeg"/><foo:bar x:y="1">z</foo:bar><dc:creator>DC</dc:creator></item>
            <item><title>B</title><guid>b</guid><foo:bar>again</foo:bar></item>
            </channel></rss>
            """.utf8).write(to: file)
        let report = directory.appendingPathComponent("report.json")
        let result = try CommandRunner.run(["parse", file.path, "--report", report.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let articles = Self.objects(result)
        #expect(articles.map { $0["title"] as? String } == ["A", "B"])
        let enclosure = (articles.first?["enclosures"] as? [[String: Any]])?.first
        #expect(enclosure?["url"] as? String == "https://example.org/a.mp3")
        #expect((articles.first?["authors"] as? [[String: Any]])?.first?["name"] as? String == "DC")
        let input = try Self.firstInput(report)
        #expect((input["repairs"] as? [String: Any])?["undeclaredPrefixes"] as? Int == 6)  // georss gml media dc, foo x
        #expect(input["error"] == nil)
    }

    @Test func personsAndRelativeLinksFromAFileAndFromStandardInput() throws {
        let feed = Data("""
            <rss version="2.0"><channel><title>T</title><managingEditor>ed@example.org (Ed Itor)</managingEditor>
            <item><title>A</title><guid isPermaLink="true">posts/a.html</guid><author>jo@example.org (Jo Writer)</author></item>
            <item><title>B</title><link>/b.html</link><enclosure url="media/b.mp3" type="audio/mpeg" length="1"/></item>
            </channel></rss>
            """.utf8)
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("relative.xml")
        try feed.write(to: file)
        let report = directory.appendingPathComponent("report.json")
        let fromFile = try CommandRunner.run(["parse", file.path, "--report", report.path])
        let fromStdin = try CommandRunner.run(["parse", "-"], stdin: feed)
        for result in [fromFile, fromStdin] {
            #expect(result.status == 0, "\(result.stderr)")
            let articles = Self.objects(result)
            #expect(articles.map { $0["link"] as? String } == ["posts/a.html", "/b.html"])
            #expect((articles.last?["enclosures"] as? [[String: Any]])?.first?["url"] as? String == "media/b.mp3")
            let author = (articles.first?["authors"] as? [[String: Any]])?.first
            #expect(author?["name"] as? String == "Jo Writer" && author?["email"] as? String == "jo@example.org")
        }
        let editor = ((try Self.firstInput(report)["feed"] as? [String: Any])?["authors"] as? [[String: Any]])?.first
        #expect(editor?["name"] as? String == "Ed Itor" && editor?["email"] as? String == "ed@example.org")
    }
}
