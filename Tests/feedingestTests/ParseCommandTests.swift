import Foundation
import TestSupport
import Testing

@Suite("feedingest parse, end to end")
struct ParseCommandTests {
    let feeds = ["DaringFireball.atom", "atp.rss", "bio.rdf", "kc0011.rss", "theomnishow.rss"]

    @Test func printsOneValidJSONArticlePerLineAndAValidReport() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("report.json")
        let inputs = feeds.map { Paths.realworld.appendingPathComponent($0).path }
        let result = try CommandRunner.run(["parse"] + inputs + ["--report", report.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(result.lines.count == 48 + 100 + 30 + 20 + 4)
        let articles = try validate(result.stdout, schema: "article.schema.json", lines: true)
        #expect(articles.ok, "\(articles.output)")
        let reportText = try String(contentsOf: report, encoding: .utf8)
        let reportCheck = try validate(reportText, schema: "report.schema.json", lines: false)
        #expect(reportCheck.ok, "\(reportCheck.output)")
        let json = try JSONSerialization.jsonObject(with: Data(reportText.utf8)) as? [String: Any]
        let entries = json?["inputs"] as? [[String: Any]] ?? []
        #expect(entries.map { $0["articleCount"] as? Int } == [48, 100, 30, 20, 4])
        let encoding = entries.count > 3 ? entries[3]["encoding"] as? [String: Any] : nil
        #expect(encoding?["name"] as? String == "GBK")
        // Articles come in document order, each tagged with the input it came from.
        let first = try JSONSerialization.jsonObject(with: Data(try #require(result.lines.first).utf8)) as? [String: Any]
        #expect(first?["feed"] as? String == inputs[0])
        #expect(first?["title"] as? String == "The Talk Show: ‘I Do Like Throwing a Baby’")
    }

    @Test func readsStdin() throws {
        let data = try Data(contentsOf: Paths.realworld.appendingPathComponent("atp.rss"))
        let result = try CommandRunner.run(["parse", "-"], stdin: data)
        #expect(result.status == 0)
        #expect(result.lines.count == 100)
        #expect(result.lines.first?.contains("\"feed\":\"-\"") == true)
    }

    @Test func brokenInputPrintsArticlesBeforeTheErrorAndExitsOne() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = directory.appendingPathComponent("broken.xml")
        try Data("<rss><channel>\n<item><guid>1</guid></item>\n<item><guid>2</guid></channel></rss>".utf8).write(to: broken)
        let good = Paths.realworld.appendingPathComponent("theomnishow.rss").path
        let report = directory.appendingPathComponent("r.json")
        let result = try CommandRunner.run(["parse", broken.path, good, "--report", report.path])
        #expect(result.status == 1)
        #expect(result.lines.count == 1 + 4)  // one article before the error, then the good feed whole
        #expect(result.stderr == "feedingest: \(broken.path):3:22: mismatched tag\n")
        let reportText = try String(contentsOf: report, encoding: .utf8)
        #expect(reportText.contains("\"error\":{\"kind\":\"xml\",\"name\":\"tag-mismatch\",\"code\":7,\"message\":\"mismatched tag\",\"line\":3,\"column\":22"))
        #expect(try validate(reportText, schema: "report.schema.json", lines: false).ok)
    }

    @Test func missingFileAndNotAFeed() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = directory.appendingPathComponent("page.html")
        try Data("<html><body>hi</body></html>".utf8).write(to: page)
        let report = directory.appendingPathComponent("report.json")
        let result = try CommandRunner.run(["parse", "/nonexistent/feed.xml", page.path, directory.path, "--report", report.path])
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0] == "feedingest: /nonexistent/feed.xml: the file does not exist")
        #expect(lines[1].hasPrefix("feedingest: \(page.path):1:0: not a feed: the root element is <html>"))
        #expect(lines[2] == "feedingest: \(directory.path): is a directory, not a feed file")
        #expect(result.stdout.isEmpty)
        // The report types each error by what failed: reading the input (fetch), or the document (xml, notAFeed).
        let inputs = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any])["inputs"] as? [[String: Any]]
        let errors = try #require(inputs).map { $0["error"] as? [String: Any] }
        #expect(errors.count == 3)
        #expect(errors[0]?["kind"] as? String == "fetch" && errors[0]?["name"] as? String == "file-unreadable")
        #expect(errors[1]?["kind"] as? String == "notAFeed" && errors[1]?["name"] as? String == "not-a-feed")
        #expect(errors[2]?["kind"] as? String == "fetch" && errors[2]?["name"] as? String == "file-unreadable")
        let check = try validate(try String(contentsOf: report, encoding: .utf8), schema: "report.schema.json", lines: false)
        #expect(check.ok, "\(check.output)")
    }

    @Test func usageErrorsExitTwoWithAHint() throws {
        let wrongFlag = try CommandRunner.run(["parse", "--reprot", "x.json", "feed.xml"])
        #expect(wrongFlag.status == 2)
        #expect(wrongFlag.stderr == "feedingest: unknown option '--reprot' for 'parse' (did you mean '--report'?)\n")
        let noFiles = try CommandRunner.run(["parse"])
        #expect(noFiles.status == 2)
        #expect(noFiles.stderr.contains("needs at least one FILE"))
        let missingValue = try CommandRunner.run(["parse", "feed.xml", "--report"])
        #expect(missingValue.status == 2)
        #expect(missingValue.stderr.contains("--report needs a value"))
        let unknownCommand = try CommandRunner.run(["prase", "feed.xml"])
        #expect(unknownCommand.status == 2)
        #expect(unknownCommand.stderr.contains("did you mean 'parse'?"))
        let nothing = try CommandRunner.run([])
        #expect(nothing.status == 2)
    }

    @Test func helpAndVersion() throws {
        let help = try CommandRunner.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("feedingest parse"))
        let parseHelp = try CommandRunner.run(["parse", "--help"])
        #expect(parseHelp.status == 0)
        #expect(parseHelp.stdout.contains("--report FILE"))
        #expect(parseHelp.stdout.contains("Exit status"))
        let version = try CommandRunner.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("feedingest "))
        // jemalloc serves the command's allocations (Allocator.swift checks that it counts a block the Swift runtime
        // allocated); sanitizer builds keep their runtime's malloc.
        if ProcessInfo.processInfo.environment["FEEDINGEST_SANITIZER"] == nil {
            #expect(version.stdout.contains("\nallocator: jemalloc 5."), "\(version.stdout)")
        } else {
            // Built through the Makefile's sanitizer targets, without jemalloc; by hand, linked but not in use.
            #expect(version.stdout.contains("\nallocator: the C library's or a sanitizer's malloc")
                    || version.stdout.contains("is linked but not in use)"), "\(version.stdout)")
        }
    }

    @Test func charsetOptionDecodesUndeclaredLegacyBytes() throws {
        let bytes = Data("<rss><channel><item><guid>1</guid><title>".utf8) + Data([0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2]) + Data("</title></item></channel></rss>".utf8)
        let result = try CommandRunner.run(["parse", "--charset", "windows-1251", "-"], stdin: bytes)
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"title\":\"Привет\""))
    }

    /// The first article reaches stdout while the input is still open: the command streams.
    /// No timing is asserted: the test blocks reading the first line before it sends the rest.
    @Test func streamsTheFirstArticleBeforeTheInputEnds() throws {
        let process = Process()
        process.executableURL = CommandRunner.binary
        process.arguments = ["parse", "-"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data("<rss><channel><item><guid>first</guid><title>One</title></item>".utf8))
        // Read until the first newline; this returns only if the article was written before the input ended.
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        #expect(String(decoding: line, as: UTF8.self).contains("\"id\":\"first\""))
        input.fileHandleForWriting.write(Data("<item><guid>second</guid></item></channel></rss>".utf8))
        try input.fileHandleForWriting.close()
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: rest, as: UTF8.self).contains("\"id\":\"second\""))
    }
}

@Suite("feedingest parse, gzip")
struct ParseGzipTests {
    @Test func gzipFilesAreInflatedAsTheyStream() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = Paths.realworld.appendingPathComponent("atp.rss")
        let gz = directory.appendingPathComponent("atp.rss.gz")
        try ChildProcess.run("/bin/sh", ["-c", "gzip -c '\(plain.path)' > '\(gz.path)'"])
        let fromGzip = try CommandRunner.run(["parse", gz.path])
        let fromPlain = try CommandRunner.run(["parse", plain.path])
        #expect(fromGzip.status == 0, "\(fromGzip.stderr)")
        #expect(fromGzip.lines.count == 100)
        // The same articles, but for the feed field naming the input.
        #expect(fromGzip.stdout.replacingOccurrences(of: gz.path, with: plain.path) == fromPlain.stdout)
    }

    @Test func corruptGzipIsAClearErrorAfterTheArticlesItHeld() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let gz = directory.appendingPathComponent("cut.xml.gz")
        let plain = Paths.realworld.appendingPathComponent("atp.rss")
        // Keep the first 40 KB of the compressed stream: a download cut short.
        try ChildProcess.run("/bin/sh", ["-c", "gzip -c '\(plain.path)' | head -c 40000 > '\(gz.path)'"])
        let result = try CommandRunner.run(["parse", gz.path])
        #expect(result.status == 1)
        #expect(result.lines.count > 0 && result.lines.count < 100)
        // A cut gzip stream is Fetch's error (the read of the input), said as such, after the articles it held.
        #expect(result.stderr.hasPrefix("feedingest: \(gz.path): gzip ") && result.stderr.contains("ends before its end marker"),
                "\(result.stderr)")
    }
}
