import Fetch
import Foundation
#if canImport(Glibc)
import Glibc
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = Array(arguments[1...]).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let start = monotonicNanos()
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else {
            FileHandle.standardError.write(Data("feedingest-bench: cannot run \(path): \(String(cString: strerror(spawned)))\n".utf8))
            return 3
        }
        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        var signalled = 0
        // Poll (2 ms) so a run that hangs can be stopped; wait4 with WNOHANG still gives the child's rusage.
        while true {
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { break }
            let elapsed = Double(monotonicNanos() - start) / 1e9
            if elapsed > timeout && signalled == 0 {
                timedOut = true
                kill(pid, SIGTERM)
                signalled = 1
            } else if elapsed > timeout + 10 && signalled == 1 {
                kill(pid, SIGKILL)
                signalled = 2
            }
            usleep(2000)
        }
        let wall = Double(monotonicNanos() - start) / 1e9
        let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : -(status & 0x7F)
        let run = CommandRun(exitStatus: exitStatus, wallSeconds: wall, maxRSSKiB: Int(usage.ru_maxrss), timedOut: timedOut)
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
    static func feedingestExecutable() -> Result<String, ServerError> {
        let directory = (Probe.executablePath() as NSString).deletingLastPathComponent
        let path = directory + "/feedingest"
        if FileManager.default.isExecutableFile(atPath: path) { return .success(path) }
        let scratch = ((directory as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        return .failure(ServerError(description: "no feedingest beside this binary (\(path)); build it into the same directory with "
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

// MARK: The latency server

/// scripts/latency_server.py: 1,000 small feeds over 20 ports of 127.0.0.1, each response 100 ms late; it counts the
/// requests in flight.
final class LatencyServer {
    let process: Process
    let urls: [URL]
    let statsURL: URL
    private let output: Pipe

    struct Ready: Decodable {
        var ports: [Int]
        var urls: [String]
    }

    struct Stats: Decodable {
        var requests: Int
        var max_in_flight: Int
    }

    static func script() -> String? {
        let candidates = [
            FileManager.default.currentDirectoryPath + "/scripts/latency_server.py",
            // The source tree this binary was built from.
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("scripts/latency_server.py").path,
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    init(feeds: Int, ports: Int, delay: Double) throws {
        guard let script = Self.script() else { throw ServerError(description: "scripts/latency_server.py not found (run from the checkout)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, "--feeds", String(feeds), "--ports", String(ports), "--delay", String(delay),
                             "--parent", String(getpid())]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The first line says where it listens (it binds before it prints).
        var line = Data()
        while true {
            let byte = try output.fileHandleForReading.read(upToCount: 1) ?? Data()
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        guard let ready = try? JSONDecoder().decode(Ready.self, from: line), !ready.ports.isEmpty else {
            process.terminate()
            throw ServerError(description: "the latency server did not start: \(String(decoding: line, as: UTF8.self))")
        }
        self.process = process
        self.output = output
        urls = ready.urls.compactMap(URL.init(string:))
        statsURL = URL(string: "http://127.0.0.1:\(ready.ports[0])/stats")!
    }

    /// The counters since the last reset, then reset them.
    func takeStats() -> Stats? {
        var request = URLComponents(url: statsURL, resolvingAgainstBaseURL: false)!
        request.queryItems = [URLQueryItem(name: "reset", value: "1")]
        let consumer = CollectingConsumer()
        let result = HTTPRunner.fetcher.fetch(FetchRequest(url: request.url!), into: consumer)
        guard result.isOK else { return nil }
        return try? JSONDecoder().decode(Stats.self, from: consumer.data)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
