import Foundation
import TestSupport
import Testing

/// What `make run` does on a fresh machine without a network: `feedingest feeds.txt` on the default (XDG) store prints
/// the shipped examples' articles, reports the remote feeds offline in one line and exits 0; a second run prints
/// nothing new. The tests run in a network namespace with only loopback, where no host name resolves.
@Suite("The sample list and its examples, as make run runs them")
struct SampleListTests {
    /// Every article of the examples in `examples/`, by feed file, as the test reads them from the XML itself.
    static func exampleItems() throws -> [String: Int] {
        let directory = Paths.packageRoot.appendingPathComponent("examples")
        var counts: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where !name.hasSuffix(".md") {
            var data = try Data(contentsOf: directory.appendingPathComponent(name))
            if name.hasSuffix(".gz") {
                let gunzip = Process()
                gunzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
                gunzip.arguments = ["-dc", directory.appendingPathComponent(name).path]
                let pipe = Pipe()
                gunzip.standardOutput = pipe
                try gunzip.run()
                data = pipe.fileHandleForReading.readDataToEndOfFile()
                gunzip.waitUntilExit()
            }
            let text = String(decoding: data, as: UTF8.self)  // windows-1251 text is not UTF-8, its tags are ASCII
            counts[name] = ["<item>", "<item ", "<entry>"].map { text.components(separatedBy: $0).count - 1 }.reduce(0, +)
        }
        return counts
    }

    @Test func theSampleListPrintsTheExamplesOfflineIntoTheXDGStoreAndASecondRunNothing() throws {
        let home = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
                           "PATH": "/usr/bin:/bin"]
        let list = Paths.packageRoot.appendingPathComponent("feeds.txt").path
        let first = try CommandRunner.run([list], environment: environment)
        #expect(first.status == 0, "offline remote feeds are not failures: \(first.stderr)")
        let items = try Self.exampleItems()
        #expect(items.count == 6 && items.values.allSatisfy { $0 >= 2 }, "\(items)")
        let articles = first.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(articles.count == items.values.reduce(0, +), "every example article, once: \(first.stdout)")
        #expect(articles.allSatisfy { $0["status"] as? String == "new" })
        for (name, count) in items {
            #expect(articles.filter { ($0["feed"] as? String)?.hasSuffix("/examples/\(name)") == true }.count == count, "\(name)")
        }
        // The windows-1251 feed reads as Cyrillic, the gzip one is inflated, the podcast keeps its iTunes fields.
        #expect(articles.contains { ($0["title"] as? String) == "Почему порядок байтов важен" })
        #expect(articles.contains { ($0["title"] as? String) == "Week 48: gzip on the fly" })
        #expect(articles.contains { (($0["podcast"] as? [String: Any])?["episode"] as? Int) == 12 }, "\(first.stdout)")
        let check = try validate(first.stdout, schema: "article.schema.json", lines: true)
        #expect(check.ok, "\(check.output)")
        // stderr: the offline remote feeds in one line, then the summary; no feed reported as failed.
        let stderr = first.stderr.split(separator: "\n").map(String.init)
        #expect(stderr.filter { $0.contains("network looks unreachable") }.count == 1, "\(first.stderr)")
        #expect(stderr.last?.contains(" 6 ok, 0 not modified, 0 failed") == true && stderr.last?.contains(" offline") == true, "\(first.stderr)")
        #expect(stderr.count == 2, "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("data/feedingest/feedingest.sqlite").path),
                "the store is at the XDG location")

        let second = try CommandRunner.run([list], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.isEmpty, "nothing new the second time: \(second.stdout)")
        #expect(second.stderr.contains("; 0 new, 0 updated articles;"), "\(second.stderr)")
    }

    /// A URL that libcurl's parser refuses is a bad line of the list, named with its line number when the list is
    /// read; the run exits 1 and still ingests every other feed.
    @Test func aURLLibcurlRefusesIsABadLineAndTheOthersAreIngested() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("list.txt")
        let example = Paths.packageRoot.appendingPathComponent("examples/rss1.rdf").path
        try Data("http://[zz]/feed\n\(example)\nhttps://127.0.0.1:99999/x\n".utf8).write(to: list)
        let run = try CommandRunner.run([list.path, "--store", directory.appendingPathComponent("s.sqlite").path])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("feedingest: \(list.path):1: not a URL libcurl accepts: Bad IPv6 address: http://[zz]/feed"), "\(run.stderr)")
        #expect(run.stderr.contains("feedingest: \(list.path):3: not a URL libcurl accepts: "), "\(run.stderr)")
        #expect(run.lines.count == 2, "the other feed's articles: \(run.stdout)")
        #expect(run.stderr.contains("1 feed: 1 ok, 0 not modified, 0 failed, 2 bad list lines"), "\(run.stderr)")
    }
}
