import Foundation
import TestSupport
import Testing

@Suite("feedingest parse over the whole corpus")
struct CorpusSchemaTests {
    /// Every XML file of both corpora, messy ones included: every article line and the report must match the schemas.
    @Test func everyArticleAndReportMatchesTheSchemas() throws {
        let corpus = Paths.corpus
        var inputs: [String] = []
        let enumerator = FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            if ["xml", "rss", "atom", "rdf"].contains(url.pathExtension) { inputs.append(url.path) }
        }
        #expect(inputs.count > 500)
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("report.json")
        let result = try CommandRunner.run(["parse", "--quiet", "--report", report.path] + inputs.sorted())
        #expect(result.status == 1)  // some corpus files are broken on purpose
        #expect(result.lines.count > 800)
        let articles = try validate(result.stdout, schema: "article.schema.json", lines: true)
        #expect(articles.ok, "\(articles.output.prefix(2000))")
        let reportCheck = try validate(try String(contentsOf: report, encoding: .utf8), schema: "report.schema.json", lines: false)
        #expect(reportCheck.ok, "\(reportCheck.output.prefix(2000))")
    }
}

@Suite("feedingest parse, output failures")
struct OutputFailureTests {
    @Test func aFullDiskIsAnErrorNotSilence() throws {
        let process = Process()
        process.executableURL = CommandRunner.binary
        process.arguments = ["parse", Paths.realworld.appendingPathComponent("atp.rss").path]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let error = Pipe()
        process.standardError = error
        try process.run()
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(message.contains("stdout closed (No space left on device)"), "\(message)")
    }

    @Test func anUnwritableReportExitsOne() throws {
        let result = try CommandRunner.run(["parse", Paths.realworld.appendingPathComponent("atp.rss").path,
                                            "--report", "/nonexistent/dir/report.json"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot write the report to /nonexistent/dir/report.json"))
        #expect(result.lines.count == 100)
    }

    @Test func gzipOnStdinIsRecognisedByItsMagicNumber() throws {
        // gzip(1), not our own deflate: an independent producer.
        let compressed = try ChildProcess.run("/bin/gzip", ["-c", Paths.realworld.appendingPathComponent("atp.rss").path]).output
        let result = try CommandRunner.run(["parse", "-"], stdin: compressed)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == 100)
    }
}
