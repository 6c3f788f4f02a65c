import Foundation
import TestSupport
import Testing

/// A reader that goes away is an error: `ingest`, `parse` and `watch` stop, say what was not printed and how to print
/// it from the store, release their leases, and exit non-zero.
@Suite("feedingest when stdout closes")
struct ClosedOutputTests {
    /// Runs `feedingest ARGUMENTS | head -n LINES` in bash; the command's exit status and stderr, and what head printed.
    static func runIntoHead(_ arguments: [String], lines: Int = 1, environment: [String: String]? = nil) throws
        -> (status: Int32, stderr: String, printed: [String]) {
        let script = """
            "$@" 2>"$FEEDINGEST_TEST_ERR" | head -n \(lines)
            echo "status=${PIPESTATUS[0]}" >&2
            """
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let errors = directory.appendingPathComponent("stderr.txt")
        var environment = environment ?? ProcessInfo.processInfo.environment
        environment["FEEDINGEST_TEST_ERR"] = errors.path
        let result = try ChildProcess.run("/bin/bash", ["-c", script, "bash", CommandRunner.binary.path] + arguments,
                                          environment: environment)
        let status = result.standardError.split(separator: "\n").last { $0.hasPrefix("status=") }.flatMap { Int32($0.dropFirst(7)) }
        let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        return (status ?? -1, stderr, result.standardOutput.split(separator: "\n").map(String.init))
    }

    /// A feed of `items` items, each with a long description so the pipe fills quickly.
    static func bigFeed(items: Int, in directory: URL) throws -> URL {
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Big</title>"
        let filler = String(repeating: "x", count: 400)
        for index in 0..<items {
            text += "<item><title>T\(index)</title><guid>g\(index)</guid><description>\(filler)</description></item>"
        }
        text += "</channel></rss>"
        let feed = directory.appendingPathComponent("big.xml")
        try Data(text.utf8).write(to: feed)
        return feed
    }

    @Test func ingestIntoAClosedPipeExitsOneAndNamesTheCommandThatPrintsWhatWasLost() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try Self.bigFeed(items: 5_000, in: directory)
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("big.xml\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")

        let run = try Self.runIntoHead([list.path, "--store", store.path])
        #expect(run.printed.count == 1)
        #expect(run.status == 1, "a reader that went away is an error: \(run.stderr)")
        #expect(run.stderr.contains("stdout closed (broken pipe: the reader exited)"), "\(run.stderr)")
        #expect(run.stderr.contains("committed articles could not be written"), "\(run.stderr)")
        // The command it names prints what was committed and not printed.
        let quoted = try #require(run.stderr.range(of: "'feedingest articles [^']*'", options: .regularExpression), "\(run.stderr)")
        let command = run.stderr[quoted].dropFirst().dropLast().split(separator: " ").map(String.init)
        #expect(command.prefix(2) == ["feedingest", "articles"] && command.contains("--since"), "\(command)")
        let printed = try CommandRunner.run(Array(command.dropFirst()))
        #expect(printed.status == 0, "\(printed.stderr)")
        let stored = try IngestCommandTests.count("articles", in: store)
        #expect(stored > 0)
        let lost = Int(run.stderr.split(separator: ":").first { $0.contains("committed articles could not be written") }?
            .split(separator: " ").first { Int($0) != nil } ?? "") ?? -1
        #expect(lost > 0 && printed.lines.count >= lost, "the command prints at least the \(lost) lost articles: \(printed.lines.count)")
        let ids = Set(IngestCommandTests.objects(printed).compactMap { $0["id"] as? String })
        #expect(ids.count == printed.lines.count)
        // The run stopped: the feed was cancelled (nothing half-written), and no lease is left behind.
        #expect(run.stderr.contains("1 cancelled"), "\(run.stderr)")
        #expect(try IngestCommandTests.count("feeds WHERE lease_owner IS NOT NULL", in: store) == 0)
        // The next run completes the feed without duplicates.
        let next = try CommandRunner.run([list.path, "--store", store.path])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try IngestCommandTests.count("articles", in: store) == 5_000)
        #expect(next.lines.count == 5_000 - stored, "the rest, each once")
    }

    @Test func ingestWithoutAStoreSaysNothingWasStored() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try Self.bigFeed(items: 3_000, in: directory)
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("big.xml\n".utf8).write(to: list)
        let run = try Self.runIntoHead([list.path, "--no-store"])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("articles could not be written (nothing is stored with --no-store)"), "\(run.stderr)")
        #expect(!run.stderr.contains("0 new"), "no store, so no 'new' count: \(run.stderr)")
    }

    @Test func parseIntoAClosedPipeExitsOne() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let feed = try Self.bigFeed(items: 3_000, in: directory)
        let run = try Self.runIntoHead(["parse", feed.path, feed.path])
        #expect(run.printed.count == 1)
        #expect(run.status == 1, "parse --help promises exit 1: \(run.stderr)")
        #expect(run.stderr.contains("stdout closed (broken pipe: the reader exited)") && run.stderr.contains("parsing stopped"),
                "\(run.stderr)")
        #expect(!run.stderr.contains("OutputClosed") && !run.stderr.contains("consumer stopped"), "one line, no internals: \(run.stderr)")
    }

    /// `watch` whose reader exits stops (releasing its leases) and exits 1, so that Restart=on-failure restarts it;
    /// a reader that exits while nothing is printed is noticed too.
    @Test(arguments: [true, false]) func watchIntoAClosedPipeStopsAndExitsOne(whilePrinting: Bool) throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try Self.bigFeed(items: 5_000, in: directory)
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("big.xml\n".utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        if !whilePrinting {
            // Everything stored already: the watch has nothing to print when its reader goes.
            let first = try CommandRunner.run([list.path, "--store", store.path])
            #expect(first.status == 0, "\(first.stderr)")
        }
        let started = ContinuousClock.now
        let run = try Self.runIntoHead(["watch", list.path, "--store", store.path, "--min-interval", "1h"], lines: whilePrinting ? 1 : 0)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("stdout closed (broken pipe: the reader exited)"), "\(run.stderr)")
        #expect(ContinuousClock.now - started < .seconds(60), "it stopped by itself")
        #expect(try IngestCommandTests.count("feeds WHERE lease_owner IS NOT NULL", in: store) == 0)
        if whilePrinting {
            #expect(run.stderr.contains("committed articles could not be written; they are in the store"), "\(run.stderr)")
        }
    }
}
