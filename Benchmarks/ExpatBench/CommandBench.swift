import Fetch
import Foundation
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// One run of the `feedingest` command, measured by the `--measure-command` middle process.
struct CommandRun: Codable {
    var exitStatus: Int32
    var wallSeconds: Double
    var maxRSSKiB: Int
    var timedOut: Bool
}

/// Runs of one command line: wall time and peak RSS over rounds, each with a fresh store.
struct CommandResult: Codable {
    var name: String
    var description: String
    var arguments: [String]
    var feeds: Int
    var bytes: Int?
    var ok: Bool
    var failure: String?
    var wallMs: Summary?
    var peakRSSKiB: Summary?
    var runs: [CommandRun]
    /// The latency server's count of requests at once, at most (latency section only).
    var maxInFlight: Int?
    var requests: Int?
}

extension Probe {
    /// `--measure-command TIMEOUT PATH ARGS…`: runs PATH with ARGS (stdout and stderr to /dev/null), reaps it with
    /// wait4, prints a `CommandRun` line. Kills it (SIGTERM, then SIGKILL) after TIMEOUT seconds.
    static func measureCommand(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 2, let timeout = Double(arguments[0]) else {
            FileHandle.standardError.write(Data("feedingest-bench: --measure-command TIMEOUT PATH ARGS…\n".utf8))
            return 2
        }
        let path = arguments[1]
        let child: Spawn.Result
        do {
            child = try Spawn.run(path, Array(arguments[2...]), discardsOutput: true, timeout: timeout)
        } catch {
            FileHandle.standardError.write(Data("feedingest-bench: cannot run \(path): \(error)\n".utf8))
            return 3
        }
        let run = CommandRun(exitStatus: child.exitStatus, wallSeconds: child.wallSeconds, maxRSSKiB: child.maxRSSKiB, timedOut: child.timedOut)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let json = try? encoder.encode(run) else { return 3 }
        FileHandle.standardOutput.write(json + Data("\n".utf8))
        return 0
    }

    /// Runs a command through the `--measure-command` middle process (a fresh, small copy of this binary), so its
    /// ru_maxrss is its own (see the comment on `measure`).
    static func measureCommandRun(_ path: String, _ arguments: [String], timeout: Double) -> CommandRun? {
        let middle = spawn(["--measure-command", String(timeout), path] + arguments)
        guard let line = middle.output else { return nil }
        return try? JSONDecoder().decode(CommandRun.self, from: Data(line.utf8))
    }
}

// MARK: End to end

extension Benchmark {
    /// The built `feedingest` beside this binary, or why it is not there.
    static func feedingestExecutable() -> Result<String, TestSupportError> {
        let directory = (Probe.executablePath() as NSString).deletingLastPathComponent
        let path = directory + "/feedingest"
        if FileManager.default.isExecutableFile(atPath: path) { return .success(path) }
        let scratch = ((directory as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        return .failure(TestSupportError("no feedingest beside this binary (\(path)); build it into the same directory with "
            + "'swift build -c release --product feedingest' (add --scratch-path \(scratch) if you use one), then rerun"))
    }

    /// `feedingest LIST --store FRESH --quiet > /dev/null`, `rounds` times, each into a new store.
    func runCommand(name: String, description: String, executable: String, feedURLs: [URL], bytes: Int?,
                    extraArguments: [String] = [], rounds: Int, timeout: Double,
                    between: (() -> Void)? = nil, after: (() -> (maxInFlight: Int, requests: Int)?)? = nil) throws -> CommandResult {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedingest-bench-\(getpid())-\(name)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let list = directory + "/feeds.txt"
        try (feedURLs.map(\.absoluteString).joined(separator: "\n") + "\n").write(toFile: list, atomically: true, encoding: .utf8)
        var runs: [CommandRun] = []
        var failure: String?
        var inFlight: [Int] = [], requests: [Int] = []
        var shownArguments: [String] = []
        for round in 0..<rounds {
            log("\(name): run \(round + 1)/\(rounds)…")
            let store = "\(directory)/store-\(round).sqlite"
            let arguments = [list, "--store", store, "--quiet"] + extraArguments
            shownArguments = ["feedingest", "feeds.txt", "--store", "fresh.sqlite", "--quiet"] + extraArguments + [">", "/dev/null"]
            between?()
            guard let run = Probe.measureCommandRun(executable, arguments, timeout: timeout) else {
                failure = "the measuring process printed nothing"
                break
            }
            runs.append(run)
            if let stats = after?() {
                inFlight.append(stats.maxInFlight)
                requests.append(stats.requests)
            }
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
            if run.timedOut {
                failure = "stopped after \(Int(timeout)) s"
                break
            }
            if run.exitStatus != 0 {
                failure = "feedingest exited with status \(run.exitStatus)"
                break
            }
        }
        return CommandResult(name: name, description: description, arguments: shownArguments, feeds: feedURLs.count,
                             bytes: bytes, ok: failure == nil && !runs.isEmpty, failure: failure,
                             wallMs: Summary(runs.map(\.wallSeconds))?.scaled(by: 1000),
                             peakRSSKiB: Summary(runs.map { Double($0.maxRSSKiB) }),
                             runs: runs, maxInFlight: inFlight.max(), requests: requests.max())
    }
}
