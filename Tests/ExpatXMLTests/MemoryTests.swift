// Memory stays flat however large the feed: a 200 MB RSS document, generated on the fly by the benchmark
// binary in a child process and pushed chunk by chunk into XMLPushParser, must parse in a small, bounded peak RSS.
// This asserts memory, never time (DESIGN.md, "Measuring").
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct MemoryTests {
    /// 160,000 items of about 1.3 KB: the 200 MB feed of the benchmark.
    static let items = 160_000

    /// The bound, in MiB. Everything a push parser may hold is small and independent of the document's length:
    /// one 64 KiB chunk (plus the generator's buffer of one chunk and one item), expat's buffer for an unfinished
    /// token, the current text node (4 KiB, grown only for long nodes), and one item's four strings. The floor
    /// of the process (Swift runtime, Foundation and libexpat mapped and touched) is ~20 MiB in a debug build;
    /// the test prints both figures. Anything that kept a fraction of the document, or a few bytes per item,
    /// would cross 64 MiB well before the 200 MB end: the document is over 3x the bound, and keeping the 160,000
    /// items' four strings (~210 bytes of text plus four heap headers each) would add ~60 MiB.
    static let boundMiB = 64

    @Test func peakRSSStaysFlatFor200MBFeed() throws {
        let binary = try #require(Self.benchBinary(), """
            feedingest-bench not found next to the test bundle; build it with `swift build --build-tests` \
            (or set FEEDINGEST_BENCH to its path)
            """)
        // `--measure` makes the binary spawn the probe itself and reap it with wait4: a child's ru_maxrss can never be
        // below the peak RSS of the process that spawned it (Linux charges an exec'ing process with the peak of the
        // address space it replaces, and a posix_spawn child execs on its parent's), and this test process is large.
        let floor = try Self.measure(binary, ["--probe-generated", "idle", "rss", "0"])
        let probe = try Self.measure(binary, ["--probe-generated", "byte-api", "rss", String(Self.items)])
        let report = try #require(probe.report, "no probe report; exit status \(probe.exitStatus), output: \(probe.output)")
        let outcome = try #require(report["outcome"] as? [String: Any])
        let bytes = (report["manifest"] as? [String: Any])?["bytes"] as? Int ?? 0
        let peakMiB = Double(probe.maxRSSKiB) / 1024
        print(String(format: "MemoryTests: %d items, %.1f MB generated and pushed into XMLPushParser in a child: "
                     + "peak RSS %.1f MiB (ru_maxrss via wait4; the child's own VmHWM %.1f MiB; idle floor %.1f MiB; "
                     + "bound %d MiB); child ran %.1f s", Self.items, Double(bytes) / 1e6, peakMiB,
                     Double(report["vmHWMKiB"] as? Int ?? 0) / 1024, Double(floor.maxRSSKiB) / 1024, Self.boundMiB,
                     probe.seconds))
        #expect(probe.exitStatus == 0, "probe failed: \(outcome["failure"] as? String ?? "exit status \(probe.exitStatus)")")
        #expect(outcome["ok"] as? Bool == true, "\(outcome["failure"] as? String ?? "not ok")")
        #expect(outcome["items"] as? Int == Self.items)
        #expect(bytes > 200_000_000, "the generated document should be over 200 MB, was \(bytes) bytes")
        #expect(probe.maxRSSKiB > 0)
        #expect(peakMiB < Double(Self.boundMiB), "peak RSS \(peakMiB) MiB is over the \(Self.boundMiB) MiB bound")
    }

    /// Runs `feedingest-bench --measure ARGS` and decodes its line: the probe's ru_maxrss and report.
    static func measure(_ binary: String, _ arguments: [String]) throws -> ChildResult {
        let middle = try spawn(binary, ["--measure"] + arguments)
        let line = middle.output.split(separator: "\n").last.map(String.init) ?? ""
        let measurement = try #require((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                                       "feedingest-bench --measure printed no measurement: \(middle.output)")
        return ChildResult(report: measurement["report"] as? [String: Any], output: middle.output,
                           exitStatus: Int32(measurement["exitStatus"] as? Int ?? -1),
                           maxRSSKiB: measurement["maxRSSKiB"] as? Int ?? 0,
                           seconds: measurement["wallSeconds"] as? Double ?? middle.seconds)
    }

    // MARK: Running the benchmark binary

    struct ChildResult {
        /// The probe's report (for `measure`).
        var report: [String: Any]?
        var output: String
        var exitStatus: Int32
        var maxRSSKiB: Int
        var seconds: Double
    }

    /// `feedingest-bench` sits in the same build directory as the test bundle.
    static func benchBinary() -> String? {
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["FEEDINGEST_BENCH"] { candidates.append(explicit) }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        for start in [bundle, executable] {
            // The bundle is a file (Linux) or a directory tree (Darwin: .xctest/Contents/MacOS/...): walk up a few levels.
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("feedingest-bench").path)
                directory = directory.deletingLastPathComponent()
            }
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `binary` with `arguments` (posix_spawn), reads its stdout, and reaps it with wait4.
    static func spawn(_ binary: String, _ arguments: [String]) throws -> ChildResult {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SpawnError(message: "pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        posix_spawn_file_actions_addclose(&actions, ends[1])
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let start = Date()
        let spawned = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw SpawnError(message: "posix_spawn \(binary): \(String(cString: strerror(spawned)))")
        }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            output.append(contentsOf: buffer[..<count])
        }
        close(ends[0])
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let exitStatus: Int32 = status & 0x7F == 0 ? (status >> 8) & 0xFF : -(status & 0x7F)
        return ChildResult(report: nil, output: String(decoding: output, as: UTF8.self), exitStatus: exitStatus,
                           maxRSSKiB: Int(usage.ru_maxrss),
                           seconds: Date().timeIntervalSince(start))
    }

    struct SpawnError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
