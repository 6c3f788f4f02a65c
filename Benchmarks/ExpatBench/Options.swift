import Foundation
import TestSupport

/// The command line, parsed by hand (the benchmark has no dependency but the package's own targets).
enum Command {
    case benchmark(BenchmarkOptions)
    case probeFile(variant: Variant, path: String)
    case probeGenerated(variant: Variant, format: FeedFormat, items: Int)
    /// Run this binary with the given arguments in a child and report the child's ru_maxrss (see `Probe`).
    case measure(arguments: [String])
    /// Run another program (stdout to /dev/null) in a child and report its ru_maxrss and wall time (see `Probe`).
    case measureCommand(arguments: [String])
    /// One HTTP variant once, in this (small, fresh) process, for its peak RSS: `--probe-http VARIANT URL`.
    case probeHTTP(variant: HTTPVariant, url: String)
    /// One JSON variant over a JSON Feed fixture once, for its peak RSS: `--probe-json VARIANT FILE`.
    case probeJSON(variant: JSONBench.Variant, path: String)
    case help
}

/// The parts of the benchmark, each runnable alone with `--only`.
enum Section: String, CaseIterable, Codable, Sendable {
    /// The 20 MB RSS and Atom feeds in memory: every parser variant, paired rounds (the gzip variant included).
    case parse
    /// The 14-feed seed set in memory: the main variants, total time over the set.
    case seed
    /// Peak RSS of each variant in a child process, 20 MB and 200 MB feeds.
    case memory
    /// Over HTTP from a loopback nginx: streaming pipeline against XMLParser(contentsOf:) and URLSession + XMLParser(data:).
    case http
    /// The built `feedingest` command ingesting the seed set and the 20 MB feed into a fresh store.
    case e2e
    /// The 1,000-feed, 100 ms latency ingest (scripts/latency_server.py), with default jobs and --jobs 1.
    case latency
    /// SHA-256 (body fingerprints) and XXH64 (content and key hashes) alone, in memory.
    case hash
    /// A 20 MB JSON Feed: StreamingJSON and Syndication against Foundation's JSONSerialization and JSONDecoder and raw yajl.
    case json
    /// Scale-out: 1, 2 and 4 processes over 2,000 latency feeds (80% 304) into one PostgreSQL database, beside one
    /// process into SQLite.
    case scale
    /// Whole programs on the 20 MB RSS file (issue 18): `feedingest parse` (plain and .gz) against the C no-op program
    /// and fastfeedparser, then over HTTP into SQLite against parse-only of the same URL.
    case process
    /// Instruction counts under callgrind: the in-process variants and the whole programs against raw libexpat.
    case instructions
}

struct BenchmarkOptions {
    /// The sections to run, in `Section.allCases` order.
    var sections = Set(Section.allCases)
    /// Counted rounds; each runs every variant once, in order.
    var rounds = 7
    /// Uncounted rounds run first.
    var warmupRounds = 1
    /// Where generated fixtures are cached.
    var fixturesDirectory = ".build/bench-fixtures"
    /// Fewer rounds, 20 MB feeds only: a smoke test.
    var quick = false
    /// Run even in a debug build (the figures are then meaningless).
    var allowDebug = false
    /// Skip the peak-RSS child processes.
    var skipMemory = false
    /// Bytes handed to each parse call.
    var chunkSize = 64 * 1024
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
}

extension Command {
    static let usage = """
        usage: feedingest-bench [--only SECTION[,SECTION…]] [--rounds N] [--quick] [--fixtures DIR] [--skip-memory] [--allow-debug]

        Compares ExpatXML (byte API and String API) and Syndication with raw C libexpat (no-op handlers) and
        Foundation's XMLParser (stream: and data:) on generated RSS 2.0 and Atom 1.0 feeds, in paired alternating
        rounds; then over HTTP from a loopback nginx, the feedingest command end to end, and the 1,000-feed
        latency ingest. Prints tables, then one JSON line with every figure. Everything stays on 127.0.0.1.

          --only LIST      run only these sections (comma-separated, or repeat the option):
                             parse    20 MB RSS and Atom in memory, every variant (gzip included)
                             seed     the 14-feed seed set in memory, total over the set
                             memory   peak RSS per variant in child processes (20 MB and 200 MB)
                             http     loopback nginx, full speed and rate-limited (1 MiB/s)
                             e2e      the built feedingest command: seed set and 20 MB feed into a fresh store
                             latency  1,000 feeds from scripts/latency_server.py, 100 ms each, default jobs and --jobs 1
                             scale    2,000 feeds at 100 ms, 80% answering 304: 1, 2 and 4 processes into one
                                      PostgreSQL database (a throw-away server) beside one process into SQLite
                             hash     SHA-256 and XXH64 alone, in memory (MB/s, ns per call)
                             json     a 20 MB JSON Feed: streaming against JSONSerialization, JSONDecoder and raw yajl,
                                      then peak RSS per variant (20 MB and 200 MB; none with --skip-memory)
                             process  whole programs on the 20 MB RSS file: feedingest parse (plain, .gz) against the
                                      C no-op program (feedingest-cnoop) and fastfeedparser (a venv made here from PyPI);
                                      then 20 MB over HTTP into SQLite against feedingest parse of the same URL
                             instructions  callgrind instruction counts: in-process variants and whole programs
                                      against raw libexpat (needs valgrind; several minutes)
          --rounds N       counted rounds (default 7, at least 1; 5 or more for honest figures)
          --quick          fewer rounds, no 200 MB feed, no --jobs 1 latency run (smoke test)
          --fixtures DIR   fixture cache directory (default .build/bench-fixtures)
          --skip-memory    do not run the peak-RSS child processes (same as leaving 'memory' out)
          --allow-debug    run in a debug build anyway (figures are then meaningless)
        """

    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        var options = BenchmarkOptions()
        var roundsGiven = false
        var onlyGiven = false
        var index = 0
        func value(after flag: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "\(flag) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--help", "-h":
                return .help
            case "--rounds":
                let text = try value(after: argument)
                guard let rounds = Int(text), rounds >= 1 else { throw UsageError(description: "--rounds needs a positive integer, not '\(text)'") }
                options.rounds = rounds
                roundsGiven = true
            case "--fixtures":
                options.fixturesDirectory = try value(after: argument)
            case "--quick":
                options.quick = true
            case "--allow-debug":
                options.allowDebug = true
            case "--skip-memory":
                options.skipMemory = true
            case "--only":
                let list = try value(after: argument)
                var chosen: Set<Section> = onlyGiven ? options.sections : []
                for name in list.split(separator: ",") {
                    guard let section = Section(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                        throw UsageError(description: "unknown section '\(name)' (sections: \(Section.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    chosen.insert(section)
                }
                options.sections = chosen
                onlyGiven = true
            case "--measure-command":
                return .measureCommand(arguments: Array(arguments[(index + 1)...]))
            case "--probe-http":
                let name = try value(after: argument)
                let url = try value(after: argument)
                guard let variant = HTTPVariant(rawValue: name) else { throw UsageError(description: "unknown HTTP variant '\(name)'") }
                return .probeHTTP(variant: variant, url: url)
            case "--probe-json":
                let name = try value(after: argument)
                let path = try value(after: argument)
                guard let variant = JSONBench.Variant(rawValue: name) else { throw UsageError(description: "unknown JSON variant '\(name)'") }
                return .probeJSON(variant: variant, path: path)
            case "--probe":
                let name = try value(after: argument)
                let path = try value(after: argument)
                guard let variant = Variant(rawValue: name) else { throw UsageError(description: "unknown variant '\(name)'") }
                return .probeFile(variant: variant, path: path)
            case "--measure":
                return .measure(arguments: Array(arguments[(index + 1)...]))
            case "--probe-generated":
                let name = try value(after: argument)
                let formatName = try value(after: argument)
                let itemsText = try value(after: argument)
                guard let variant = Variant(rawValue: name) else { throw UsageError(description: "unknown variant '\(name)'") }
                guard let format = FeedFormat(rawValue: formatName) else { throw UsageError(description: "unknown format '\(formatName)'") }
                guard let items = Int(itemsText), items >= 0 else { throw UsageError(description: "bad item count '\(itemsText)'") }
                return .probeGenerated(variant: variant, format: format, items: items)
            default:
                throw UsageError(description: "unknown argument '\(argument)'")
            }
            index += 1
        }
        if options.quick && !roundsGiven { options.rounds = 2 }
        if options.skipMemory { options.sections.remove(.memory) }
        return .benchmark(options)
    }
}
