// Memory stays flat however large the feed: a 200 MB RSS document, generated on the fly by the benchmark
// binary in a child process and pushed chunk by chunk into XMLPushParser, must parse in a small, bounded peak RSS.
// This asserts memory, never time (DESIGN.md, "Measuring").
import Foundation
import TestSupport
import Testing

@Suite(.disabled(if: SanitizerRun.isActive, "peak-memory bounds do not hold under a sanitizer's shadow memory")) struct MemoryTests {
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
    static func measure(_ binary: String, _ arguments: [String]) throws -> Probe {
        let middle = try Spawn.run(binary, ["--measure"] + arguments)
        let line = middle.output.split(separator: "\n").last.map(String.init) ?? ""
        let measurement = try #require((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                                       "feedingest-bench --measure printed no measurement: \(middle.output)")
        return Probe(report: measurement["report"] as? [String: Any], output: middle.output,
                     exitStatus: Int32(measurement["exitStatus"] as? Int ?? -1),
                     maxRSSKiB: measurement["maxRSSKiB"] as? Int ?? 0,
                     seconds: measurement["wallSeconds"] as? Double ?? middle.wallSeconds)
    }

    /// What the probe reported, as the middle process relayed it.
    struct Probe {
        var report: [String: Any]?
        var output: String
        var exitStatus: Int32
        var maxRSSKiB: Int
        var seconds: Double
    }

    /// `feedingest-bench`, built into the same directory as the test bundle, or `FEEDINGEST_BENCH`.
    static func benchBinary() -> String? {
        if let explicit = ProcessInfo.processInfo.environment["FEEDINGEST_BENCH"], FileManager.default.isExecutableFile(atPath: explicit) {
            return explicit
        }
        return Paths.builtExecutable("feedingest-bench")?.path
    }
}
