import Foundation
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// The `process` section (issue 18): whole programs on the same file, paired in alternating rounds — the C no-op
/// (`feedingest-cnoop`, libexpat with no-op handlers), `feedingest parse FILE > /dev/null` (plain and `.gz`), and the
/// fastest peer that installs here (fastfeedparser from PyPI, in a virtual environment the benchmark makes) — then a
/// 20 MB feed over HTTP into a fresh SQLite store against `feedingest parse` of the same URL. Wall times of whole
/// processes, start-up included; ratios are medians of per-round ratios.
///
/// The `instructions` section: instruction counts (callgrind) of the in-process variants (`--probe`) and of the two
/// whole programs, as multiples of raw libexpat's: steadier than wall times on a shared machine.
enum ProcessBench {
    struct Row: Codable {
        var name: String
        var title: String
        var ok: Bool
        var failure: String?
        var wallMs: Summary?
        /// This row's wall time over the C no-op's (or, for the store rows, over `parse` of the same URL's) in the same round.
        var ratio: Summary?
        var peakRSSKiB: Summary?
    }

    struct Result: Codable {
        var file: String
        var bytes: Int
        var items: Int
        var rows: [Row]
        /// HTTP into SQLite against parse-only of the same URL.
        var storeRows: [Row]
        /// Why fastfeedparser did not run, when it did not.
        var peerNote: String?
    }

    /// One program to run per round.
    struct Program {
        var name: String
        var title: String
        var path: String
        var arguments: [String]
        /// Runs before each run (a fresh store path, say).
        var prepare: (() -> Void)?
        var cleanUp: (() -> Void)?
    }

    static func run(fixture: Fixture, gzipPath: String, server: NginxServer?, options: BenchmarkOptions) throws -> Result {
        let executable = try Benchmark.feedingestExecutable().get()
        let directory = (executable as NSString).deletingLastPathComponent
        let cnoop = directory + "/feedingest-cnoop"
        guard FileManager.default.isExecutableFile(atPath: cnoop) else {
            throw FixtureError(message: "no feedingest-cnoop beside this binary (\(cnoop)); build it with "
                + "'swift build -c release --product feedingest-cnoop' (make bench does), then rerun")
        }
        // Check the outputs once, outside the timed runs: the article count and the C program's element count.
        try verifyParse(executable, fixture.path, items: fixture.manifest.items)
        try verifyParse(executable, gzipPath, items: fixture.manifest.items)
        let elements = try Spawn.run(cnoop, [fixture.path])
        guard elements.exitStatus == 0, Int(elements.output.trimmingCharacters(in: .whitespacesAndNewlines)) == fixture.manifest.elements else {
            throw FixtureError(message: "feedingest-cnoop counted '\(elements.output)' elements, the generator \(fixture.manifest.elements)")
        }

        var programs = [
            Program(name: "c-noop", title: "C libexpat, no-op handlers (feedingest-cnoop FILE)", path: cnoop, arguments: [fixture.path]),
            Program(name: "parse", title: "feedingest parse FILE > /dev/null", path: executable, arguments: ["parse", fixture.path]),
            Program(name: "parse-gz", title: "feedingest parse FILE.gz > /dev/null", path: executable, arguments: ["parse", gzipPath]),
        ]
        var peerNote: String?
        switch FastFeedParser.prepare(directory: options.fixturesDirectory) {
        case .success(let python):
            let script = FastFeedParser.script(directory: options.fixturesDirectory)
            let check = try Spawn.run(python, [script, fixture.path, "--count"])
            if check.exitStatus == 0, Int(check.output.trimmingCharacters(in: .whitespacesAndNewlines)) == fixture.manifest.items {
                programs.append(Program(name: "fastfeedparser", title: "fastfeedparser (Python + lxml): parse, json.dumps each entry",
                                        path: python, arguments: [script, fixture.path]))
            } else {
                peerNote = "fastfeedparser ran but saw '\(check.output.prefix(80))' entries (status \(check.exitStatus)), not \(fixture.manifest.items): left out"
            }
        case .failure(let why):
            peerNote = "fastfeedparser skipped: \(why)"
        }
        if let peerNote { log(peerNote) }
        let rounds = options.quick ? 2 : max(5, options.rounds)
        let rows = try pairedRounds(programs, baseline: "c-noop", rounds: rounds, label: "process")

        var storeRows: [Row] = []
        if let server {
            let url = server.url(HTTPVariant.pipeline.path(of: fixture, slow: false)).absoluteString
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("feedingest-bench-\(getpid())-process").path
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let list = work + "/feeds.txt"
            try (url + "\n").write(toFile: list, atomically: true, encoding: .utf8)
            let store = work + "/store.sqlite"
            let removeStore = { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) } }
            try verifyParse(executable, url, items: fixture.manifest.items)
            storeRows = try pairedRounds([
                Program(name: "parse-http", title: "feedingest parse URL > /dev/null (20 MB, nginx, plain)", path: executable, arguments: ["parse", url]),
                Program(name: "ingest-sqlite", title: "feedingest feeds.txt --store fresh.sqlite --quiet (same URL)", path: executable,
                        arguments: [list, "--store", store, "--quiet"], prepare: removeStore, cleanUp: removeStore),
            ], baseline: "parse-http", rounds: rounds, label: "process (HTTP)")
        }
        return Result(file: fixture.name, bytes: fixture.manifest.bytes, items: fixture.manifest.items, rows: rows,
                      storeRows: storeRows, peerNote: peerNote)
    }

    /// Runs every program once per round, in order, after one uncounted warm-up round; each through the
    /// `--measure-command` middle process, for its own peak RSS.
    static func pairedRounds(_ programs: [Program], baseline: String, rounds: Int, label: String) throws -> [Row] {
        var runs: [String: [CommandRun]] = [:]
        var failures: [String: String] = [:]
        for round in 0...rounds {
            log("\(label): \(round == 0 ? "warm-up" : "round \(round)/\(rounds)")…")
            for program in programs where failures[program.name] == nil {
                program.prepare?()
                defer { program.cleanUp?() }
                guard let run = Probe.measureCommandRun(program.path, program.arguments, timeout: 300) else {
                    failures[program.name] = "the measuring process printed nothing"
                    continue
                }
                if run.exitStatus != 0 || run.timedOut {
                    failures[program.name] = run.timedOut ? "timed out" : "exited with status \(run.exitStatus)"
                    continue
                }
                if round > 0 { runs[program.name, default: []].append(run) }
            }
        }
        let base = runs[baseline]?.map(\.wallSeconds) ?? []
        return programs.map { program in
            let mine = runs[program.name] ?? []
            let seconds = mine.map(\.wallSeconds)
            let paired = failures[program.name] == nil && failures[baseline] == nil && seconds.count == base.count
            return Row(name: program.name, title: program.title, ok: failures[program.name] == nil, failure: failures[program.name],
                       wallMs: Summary(seconds)?.scaled(by: 1000),
                       ratio: paired ? Summary(zip(seconds, base).map { $0 / $1 }) : nil,
                       peakRSSKiB: Summary(mine.map { Double($0.maxRSSKiB) }))
        }
    }

    /// `feedingest parse INPUT` prints one line per article, `items` in all, and exits 0.
    static func verifyParse(_ executable: String, _ input: String, items: Int) throws {
        let result = try Spawn.run(executable, ["parse", "--quiet", input])
        let lines = result.output.utf8.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        guard result.exitStatus == 0, lines == items else {
            throw FixtureError(message: "feedingest parse \(input): status \(result.exitStatus), \(lines) articles, expected \(items)")
        }
    }

    // MARK: Instructions

    struct Count: Codable {
        var name: String
        var title: String
        var instructions: Int?
        /// Over raw libexpat's (in process: the `c-noop` probe; whole programs: `feedingest-cnoop`).
        var ratio: Double?
        var failure: String?
    }

    /// Instructions (callgrind, whole process including start-up) of each in-process variant over the file, and of the
    /// two whole programs. valgrind 3.19 cannot read this toolchain's DWARF, so it runs copies made with
    /// `strip --strip-debug` (symbols kept).
    static func instructions(fixture: Fixture, gzipPath: String) throws -> [Count] {
        guard let valgrind = which("valgrind") else { throw FixtureError(message: "valgrind is not installed (apt-get install valgrind)") }
        let executable = try Benchmark.feedingestExecutable().get()
        let directory = (executable as NSString).deletingLastPathComponent
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("feedingest-bench-\(getpid())-callgrind").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        func stripped(_ path: String) throws -> String {
            let copy = work + "/" + (path as NSString).lastPathComponent
            let strip = try Spawn.run(which("strip") ?? "/usr/bin/strip", ["--strip-debug", "-o", copy, path], discardsOutput: true)
            guard strip.exitStatus == 0 else { throw FixtureError(message: "strip --strip-debug \(path) failed") }
            return copy
        }
        let bench = try stripped(Probe.executablePath())
        let command = try stripped(executable)
        let cnoop = try stripped(directory + "/feedingest-cnoop")
        let jobs: [(name: String, title: String, path: String, arguments: [String], baseline: String)] = [
            ("c-noop", Variant.cNoop.title, bench, ["--probe", "c-noop", fixture.path], "c-noop"),
            ("byte-api", Variant.byteAPI.title, bench, ["--probe", "byte-api", fixture.path], "c-noop"),
            ("string-api", Variant.stringAPI.title, bench, ["--probe", "string-api", fixture.path], "c-noop"),
            ("syndication", Variant.syndication.title, bench, ["--probe", "syndication", fixture.path], "c-noop"),
            ("syndication-gz", Variant.syndicationGzip.title, bench, ["--probe", "syndication-gz", gzipPath], "c-noop"),
            ("xmlparser-stream", Variant.foundationStream.title, bench, ["--probe", "xmlparser-stream", fixture.path], "c-noop"),
            ("program-c-noop", "whole program: feedingest-cnoop FILE", cnoop, [fixture.path], "program-c-noop"),
            ("program-parse", "whole program: feedingest parse FILE > /dev/null", command, ["parse", fixture.path], "program-c-noop"),
        ]
        var counts: [String: Int] = [:]
        var results: [Count] = []
        for job in jobs {
            log("instructions: \(job.name) under callgrind…")
            let out = "\(work)/\(job.name).out"
            let run = try Spawn.run(valgrind, ["--tool=callgrind", "--callgrind-out-file=\(out)", job.path] + job.arguments,
                                    discardsOutput: true, timeout: 1200)
            var count: Count = Count(name: job.name, title: job.title)
            if run.exitStatus == 0, let text = try? String(contentsOfFile: out, encoding: .utf8),
               let line = text.split(separator: "\n").last(where: { $0.hasPrefix("totals:") || $0.hasPrefix("summary:") }),
               let total = Int(line.split(separator: " ").last ?? "") {
                counts[job.name] = total
                count.instructions = total
                if let base = counts[job.baseline] { count.ratio = Double(total) / Double(base) }
            } else {
                count.failure = "callgrind exited with status \(run.exitStatus)"
            }
            results.append(count)
        }
        return results
    }

    static func which(_ name: String) -> String? {
        for directory in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        return nil
    }
}

/// fastfeedparser from PyPI, in a virtual environment under the fixtures directory, made on first use.
enum FastFeedParser {
    static func prepare(directory: String) -> Result<String, FixtureError> {
        let venv = directory + "/fastfeedparser-venv"
        let python = venv + "/bin/python"
        let script = self.script(directory: directory)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try source.write(toFile: script, atomically: true, encoding: .utf8)
        } catch {
            return .failure(FixtureError(message: "cannot write \(script): \(error)"))
        }
        if FileManager.default.isExecutableFile(atPath: python),
           let check = try? Spawn.run(python, ["-c", "import fastfeedparser"], discardsOutput: true), check.exitStatus == 0 {
            return .success(python)
        }
        guard let python3 = ProcessBench.which("python3") else { return .failure(FixtureError(message: "no python3")) }
        log("making \(venv) and installing fastfeedparser from PyPI…")
        guard let made = try? Spawn.run(python3, ["-m", "venv", venv], discardsOutput: true), made.exitStatus == 0 else {
            return .failure(FixtureError(message: "python3 -m venv failed (is python3-venv installed?)"))
        }
        guard let installed = try? Spawn.run(python, ["-m", "pip", "install", "--quiet", "fastfeedparser"], discardsOutput: true, timeout: 600),
              installed.exitStatus == 0 else {
            return .failure(FixtureError(message: "pip install fastfeedparser failed (no package index reachable?)"))
        }
        return .success(python)
    }

    static func script(directory: String) -> String { directory + "/fastfeedparser_bench.py" }

    /// Reads the file, parses it, and writes each entry as a JSON line to stdout (the benchmark sends it to
    /// /dev/null), the work `feedingest parse` does; `--count` prints the number of entries instead.
    static let source = """
        import json, sys
        import fastfeedparser
        with open(sys.argv[1], "rb") as f:
            data = f.read()
        feed = fastfeedparser.parse(data)
        if len(sys.argv) > 2 and sys.argv[2] == "--count":
            print(len(feed.entries))
        else:
            out = sys.stdout
            for entry in feed.entries:
                out.write(json.dumps(entry, default=str))
                out.write("\\n")

        """
}

extension ProcessBench {
    /// The `process` and `instructions` tables.
    static func tables(_ result: Result?, instructions: [Count]) -> [String] {
        var lines: [String] = []
        func rows(_ rows: [Row], ratioTitle: String) -> [String] {
            var table: [[String]] = [["program", "status", "wall ms", ratioTitle, "peak RSS MiB"]]
            for row in rows {
                table.append([row.title, row.ok ? "ok" : "FAILED: \(row.failure ?? "?")", Report.spread(row.wallMs, 1),
                              Report.spread(row.ratio, 2), row.peakRSSKiB.map { Report.spread($0.scaled(by: 1 / 1024.0), 1) } ?? "-"])
            }
            return Report.table(table, rightAligned: [false, false, true, true, true])
        }
        if let result {
            lines.append("")
            lines.append("Whole programs on \(result.file) (\(Report.mb(result.bytes)) MB, \(Report.grouped(result.items)) items), output to "
                + "/dev/null; paired rounds after a warm-up, median [min-max]; ratios per round, then the median:")
            lines += rows(result.rows, ratioTitle: "x C no-op")
            if let note = result.peerNote { lines.append("  \(note)") }
            if !result.storeRows.isEmpty {
                lines.append("")
                lines.append("The same feed over HTTP (nginx on 127.0.0.1, no compression): into a fresh SQLite store against parse-only:")
                lines += rows(result.storeRows, ratioTitle: "x parse URL")
            }
        }
        if !instructions.isEmpty {
            lines.append("")
            lines.append("Instructions (callgrind, process start-up included), 20 MB RSS; in-process rows over raw libexpat's (--probe c-noop), "
                + "whole programs over feedingest-cnoop's:")
            var table: [[String]] = [["variant", "instructions (M)", "x raw libexpat"]]
            for count in instructions {
                table.append([count.title, count.instructions.map { Report.grouped($0 / 1_000_000) } ?? "FAILED: \(count.failure ?? "?")",
                              count.ratio.map { Report.fixed($0, 2) } ?? "-"])
            }
            lines += Report.table(table, rightAligned: [false, true, true])
        }
        return lines
    }
}
