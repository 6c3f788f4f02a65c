import Foundation

/// The command line, parsed by hand (the benchmark has no dependency but the package's own targets).
enum Command {
    case benchmark(BenchmarkOptions)
    case probeFile(variant: Variant, path: String)
    case probeGenerated(variant: Variant, format: FeedFormat, items: Int)
    /// Run this binary with the given arguments in a child and report the child's ru_maxrss (see `Probe`).
    case measure(arguments: [String])
    case help
}

struct BenchmarkOptions {
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
        usage: feedingest-bench [--rounds N] [--quick] [--fixtures DIR] [--skip-memory] [--allow-debug]

        Compares ExpatXML (byte API and String API) with raw C libexpat (no-op handlers) and Foundation's
        XMLParser (stream: and data:) on generated RSS 2.0 and Atom 1.0 feeds, in paired alternating rounds.
        Prints a table, then one JSON line with the same figures.

          --rounds N       counted rounds (default 7, at least 1; 5 or more for honest figures)
          --quick          2 counted rounds and the 20 MB feeds only (smoke test)
          --fixtures DIR   fixture cache directory (default .build/bench-fixtures)
          --skip-memory    do not run the peak-RSS child processes
          --allow-debug    run in a debug build anyway (figures are then meaningless)
        """

    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        var options = BenchmarkOptions()
        var roundsGiven = false
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
        return .benchmark(options)
    }
}
