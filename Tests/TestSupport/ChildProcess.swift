import Foundation
import Support
#if canImport(Glibc)
import Glibc
#endif

/// A child process with its standard output on a pipe, read line by line.
///
/// Standard error is discarded unless asked for (an inherited stderr would keep `swift test`'s pipe open after the
/// tests end); standard input is `/dev/null` unless asked for. The child is killed with SIGKILL when this object goes
/// away while it still runs: a child of the test runner inherits its blocked signal mask, so SIGTERM may never arrive.
/// Servers started through it also watch this process's pid (``ChildProcess/parentArgument``) and end with it.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` and the pipes are set in init and never replaced (Process and Pipe are safe to
    // use from any thread once running); the only mutable state, the unread output, is behind a Mutex.
    /// The running child.
    public let process: Process
    private let output = Pipe()
    private let errors: Pipe?
    private let input: Pipe?
    private let unread = Lock<[UInt8]>([])

    /// This process's pid, as servers take it in `--parent PID`: they poll it and exit when it is gone.
    public static let parentArgument = String(getpid())

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - capturesStandardError: keep stderr on a pipe for ``readStandardError()`` (else `/dev/null`).
    ///   - opensStandardInput: give the child a pipe on stdin, open until ``closeStandardInput()`` (else `/dev/null`).
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                capturesStandardError: Bool = false, opensStandardInput: Bool = false) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        errors = capturesStandardError ? Pipe() : nil
        input = opensStandardInput ? Pipe() : nil
        process.standardInput = input ?? FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors ?? FileHandle.nullDevice
        try process.run()
    }

    /// `python3 -u SCRIPT ARGUMENTS --parent PID`, for the servers in `scripts/`.
    public convenience init(pythonScript script: URL, _ arguments: [String]) throws {
        try self.init("/usr/bin/env", ["python3", "-u", script.path] + arguments + ["--parent", Self.parentArgument])
    }

    deinit {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The child's pid.
    public var processIdentifier: Int32 { process.processIdentifier }
    /// Whether the child still runs.
    public var isRunning: Bool { process.isRunning }

    /// The next line of standard output (without its newline), or `nil` at its end. A last line without a newline
    /// (a child killed mid-write) is not returned.
    public func readLine() -> String? {
        unread.withLock { buffer in
            while true {
                if let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    return line
                }
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { return nil }
                buffer.append(contentsOf: data)
            }
        }
    }

    /// Reads lines until one starts with `prefix` and returns it; throws when the output ends first.
    public func readLine(startingWith prefix: String) throws -> String {
        while let line = readLine() {
            if line.hasPrefix(prefix) { return line }
        }
        throw TestSupportError("\(process.executableURL?.lastPathComponent ?? "the child") ended before printing '\(prefix)'")
    }

    /// Everything standard error said, once the child has closed it (``init(_:_:environment:capturesStandardError:opensStandardInput:)``
    /// with `capturesStandardError`; else "").
    public func readStandardError() -> String {
        guard let errors else { return "" }
        return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Closes the child's standard input (with `opensStandardInput`).
    public func closeStandardInput() {
        try? input?.fileHandleForWriting.close()
    }

    /// Sends `signal` (SIGKILL by default) if the child still runs.
    public func kill(_ signal: Int32 = SIGKILL) {
        if process.isRunning { Glibc.kill(process.processIdentifier, signal) }
    }

    /// Waits for the child to exit; its exit status.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Kills the child (SIGKILL) and waits for it.
    public func stop() {
        kill()
        process.waitUntilExit()
    }
}

/// Runs a program with posix_spawn(2) and reaps it with wait4(2), for what only wait4 tells: the child's own peak
/// RSS (`ru_maxrss`), besides its exit status, wall time and standard output.
///
/// Linux charges a new program with the peak RSS of the address space it replaced, and a posix_spawn child runs on
/// its parent's address space until it execs: a child's `ru_maxrss` is never below its spawner's peak. Measure from a
/// small process (a freshly exec'd benchmark binary), not from a large test runner.
public enum Spawn {
    /// One finished run.
    public struct Result: Sendable {
        /// Standard output ("" when discarded).
        public var output: String
        /// The exit status, or minus the signal that ended the child.
        public var exitStatus: Int32
        /// The child's peak resident set, KiB (`ru_maxrss` from wait4).
        public var maxRSSKiB: Int
        /// From before the spawn to the reap.
        public var wallSeconds: Double
        /// The child was still running at the timeout and was signalled.
        public var timedOut: Bool
    }

    /// Runs `path` with `arguments` (argv[0] is `path`) to its end.
    /// - Parameters:
    ///   - discardsOutput: stdout and stderr go to `/dev/null`; else stdout is captured and stderr inherited.
    ///   - timeout: seconds after which the child gets SIGTERM, and SIGKILL ten seconds later.
    public static func run(_ path: String, _ arguments: [String], discardsOutput: Bool = false, timeout: Double? = nil) throws -> Result {
        var pipeEnds: [Int32] = [-1, -1]
        if !discardsOutput {
            guard pipe(&pipeEnds) == 0 else { throw TestSupportError("pipe() failed: errno \(errno)") }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if discardsOutput {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        } else {
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
            posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
            posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        if !discardsOutput { close(pipeEnds[1]) }
        guard spawned == 0 else {
            if !discardsOutput { close(pipeEnds[0]) }
            throw TestSupportError("posix_spawn \(path): \(String(cString: strerror(spawned)))")
        }
        // Read stdout on a thread of its own, so the child never blocks on a full pipe while this thread polls wait4.
        let collected = Lock<[UInt8]>([])
        let drained = DispatchSemaphore(value: 0)
        if !discardsOutput {
            let fd = pipeEnds[0]
            Thread {
                var chunk = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(fd, &chunk, chunk.count)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    collected.withLock { $0.append(contentsOf: chunk[..<count]) }
                }
                close(fd)
                drained.signal()
            }.start()
        }
        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        if let timeout {
            // Poll (2 ms) so a run that hangs can be stopped; wait4 with WNOHANG still gives the child's rusage.
            var signalled = 0
            while true {
                let reaped = wait4(pid, &status, WNOHANG, &usage)
                if reaped == pid || (reaped < 0 && errno != EINTR) { break }
                let elapsed = seconds(ContinuousClock.now - start)
                if elapsed > timeout && signalled == 0 {
                    timedOut = true
                    Glibc.kill(pid, SIGTERM)
                    signalled = 1
                } else if elapsed > timeout + 10 && signalled == 1 {
                    Glibc.kill(pid, SIGKILL)
                    signalled = 2
                }
                usleep(2000)
            }
        } else {
            while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        }
        let wall = seconds(ContinuousClock.now - start)
        if !discardsOutput { drained.wait() }
        let exitStatus: Int32 = status & 0x7F == 0 ? (status >> 8) & 0xFF : -(status & 0x7F)
        return Result(output: String(decoding: collected.withLock { $0 }, as: UTF8.self), exitStatus: exitStatus,
                      maxRSSKiB: Int(usage.ru_maxrss), wallSeconds: wall, timedOut: timedOut)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

extension ChildProcess {
    /// What a program run to its end by ``run(_:_:standardInput:environment:currentDirectory:)`` left.
    public struct Finished: Sendable {
        /// The exit status.
        public let status: Int32
        /// The bytes written to stdout.
        public let output: Data
        /// The bytes written to stderr.
        public let errors: Data

        /// stdout as UTF-8 text.
        public var standardOutput: String { String(decoding: output, as: UTF8.self) }
        /// stderr as UTF-8 text.
        public var standardError: String { String(decoding: errors, as: UTF8.self) }
    }

    /// Runs `executable` with `arguments` to its end with real pipes, feeding it `standardInput` (else an empty
    /// input) and reading stdout and stderr while it runs, so a large output can never block it.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], standardInput: Data? = nil,
                           environment: [String: String]? = nil, currentDirectory: URL? = nil) throws -> Finished {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let output = Pipe(), errors = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        try process.run()
        let group = DispatchGroup()
        let collected = Lock<(output: Data, errors: Data)>((Data(), Data()))
        group.enter()
        DispatchQueue.global().async {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            collected.withLock { $0.output = data }
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            collected.withLock { $0.errors = data }
            group.leave()
        }
        if let standardInput { try? input.fileHandleForWriting.write(contentsOf: standardInput) }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        let (out, err) = collected.withLock { ($0.output, $0.errors) }
        return Finished(status: process.terminationStatus, output: out, errors: err)
    }
}
