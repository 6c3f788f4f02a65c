import Foundation
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// What a probe child prints: one JSON line on stdout.
struct ProbeReport: Codable {
    var variant: Variant
    var outcome: RunOutcome
    /// The child's own high-water RSS (VmHWM in /proc/self/status), a cross-check for the parent's ru_maxrss.
    var vmHWMKiB: Int?
    /// The generator's manifest, for `--probe-generated` (the parent has no file to look at).
    var manifest: FeedManifest?
}

/// A probe as the parent saw it: the child's report plus the kernel's accounting from wait4.
struct ProbeResult {
    var report: ProbeReport?
    /// The probe's ru_maxrss from wait4(2), taken by the `--measure` middle process: its peak RSS, KiB.
    var maxRSSKiB: Int
    var exitStatus: Int32
    var wallSeconds: Double
    var failure: String?
}

enum Probe {
    // MARK: Child side

    /// `--probe VARIANT FILE`: stream the file from disk, print the report.
    static func runFile(variant: Variant, path: String, chunkSize: Int) -> Int32 {
        // Syndication finds the format itself; the gzip copy cannot be sniffed as text.
        guard let format = variant.readsGzip ? .rss : sniffFormat(path: path) else {
            FileHandle.standardError.write(Data("feedingest-bench: cannot tell whether \(path) is RSS or Atom\n".utf8))
            return 2
        }
        let outcome = Runner.run(variant, input: .file(path: path), format: format, chunkSize: chunkSize, manifest: nil)
        return emit(ProbeReport(variant: variant, outcome: outcome, vmHWMKiB: vmHWMKiB()))
    }

    /// `--probe-generated VARIANT FORMAT ITEMS`: generate the feed on the fly and parse it chunk by chunk; no file.
    static func runGenerated(variant: Variant, format: FeedFormat, items: Int, chunkSize: Int) -> Int32 {
        guard [.byteAPI, .stringAPI, .stringAPIEveryText, .idle].contains(variant) else {
            FileHandle.standardError.write(Data("feedingest-bench: --probe-generated supports byte-api, string-api and idle\n".utf8))
            return 2
        }
        let generator = FeedGenerator(format: format, items: items)
        var manifest: FeedManifest?
        var outcome = Runner.run(variant, input: .generated(generator), format: format, chunkSize: chunkSize, manifest: &manifest)
        // The runner checked the tally against the generator's manifest; check the item count here too.
        if variant != .idle, outcome.ok, outcome.items != items {
            outcome.ok = false
            outcome.failure = "saw \(outcome.items ?? -1) items, expected \(items)"
        }
        let report = ProbeReport(variant: variant, outcome: outcome, vmHWMKiB: vmHWMKiB(), manifest: manifest)
        return emit(report)
    }

    private static func emit(_ report: ProbeReport) -> Int32 {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(report) else { return 3 }
        FileHandle.standardOutput.write(json + Data("\n".utf8))
        return report.outcome.ok ? 0 : 1
    }

    private static func sniffFormat(path: String) -> FeedFormat? {
        guard let handle = FileHandle(forReadingAtPath: path), let head = try? handle.read(upToCount: 4096) else { return nil }
        try? handle.close()
        let text = String(decoding: head, as: UTF8.self)
        if text.contains("<rss") { return .rss }
        if text.contains("<feed") { return .atom }
        return nil
    }

    /// VmHWM from /proc/self/status, in KiB.
    static func vmHWMKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
        return nil
    }

    // MARK: Parent side
    //
    // Why a middle process: Linux charges a new program with the peak RSS of the address space it replaced
    // (exec_mmap: setmax_mm_hiwater_rss(&signal->maxrss, old_mm)). A posix_spawn child runs on its parent's address
    // space until it execs (CLONE_VM | CLONE_VFORK), so its ru_maxrss can never be below the parent's PEAK RSS, and
    // a fork child's never below the parent's CURRENT RSS. Measured here: a parent that had touched 120 MB made an
    // idle child report 124 MB instead of 21 MB. The benchmark holds whole feeds in memory and runs
    // XMLParser(data:) in process (and a test runner is big), so the child's figure would be theirs. Hence:
    // parent -> `--measure ARGS` (this binary, freshly exec'd, small) -> the probe. The middle process spawns the
    // probe while it is small, reaps it with wait4, and relays ru_maxrss; its own floor (the same binary, idle)
    // is then the only possible overstatement, and the `idle` probe row shows it.

    /// What the `--measure` middle process prints: the probe's ru_maxrss from wait4 and the probe's report.
    struct Measurement: Codable {
        var maxRSSKiB: Int
        var exitStatus: Int32
        var wallSeconds: Double
        var report: ProbeReport?
        var failure: String?
        /// The probe's last line as printed, for probes whose report is not a `ProbeReport` (`--probe-json`).
        var output: String?
    }

    /// `--measure ARGS…`: runs this binary with ARGS, reaps it with wait4, prints a `Measurement` line.
    static func measure(_ arguments: [String]) -> Int32 {
        let child = spawn(arguments)
        let measurement = Measurement(maxRSSKiB: child.maxRSSKiB, exitStatus: child.exitStatus, wallSeconds: child.wallSeconds,
                                      report: child.output.flatMap { try? JSONDecoder().decode(ProbeReport.self, from: Data($0.utf8)) },
                                      failure: child.failure, output: child.output)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(measurement) else { return 3 }
        FileHandle.standardOutput.write(json + Data("\n".utf8))
        return child.exitStatus
    }

    /// Runs a probe through the `--measure` middle process and returns the probe's own ru_maxrss.
    static func spawnMeasured(_ probeArguments: [String]) -> ProbeResult {
        let middle = spawn(["--measure"] + probeArguments)
        guard let line = middle.output, let measurement = try? JSONDecoder().decode(Measurement.self, from: Data(line.utf8)) else {
            return ProbeResult(maxRSSKiB: 0, exitStatus: middle.exitStatus, wallSeconds: middle.wallSeconds,
                               failure: middle.failure ?? "the measuring process printed no measurement")
        }
        let failure = measurement.failure ?? (measurement.report == nil ? "the probe printed no report" : nil)
        return ProbeResult(report: measurement.report, maxRSSKiB: measurement.maxRSSKiB, exitStatus: measurement.exitStatus,
                           wallSeconds: measurement.wallSeconds, failure: failure)
    }

    /// This executable, to re-execute.
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 { return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return CommandLine.arguments[0]
    }

    struct Child {
        /// The last line of the child's stdout.
        var output: String?
        var maxRSSKiB: Int
        var exitStatus: Int32
        var wallSeconds: Double
        var failure: String?
    }

    /// Runs this binary with `arguments` (posix_spawn), reads its stdout, and reaps it with wait4 for ru_maxrss.
    static func spawn(_ arguments: [String]) -> Child {
        let child: Spawn.Result
        do { child = try Spawn.run(executablePath(), arguments) } catch {
            return Child(maxRSSKiB: 0, exitStatus: -1, wallSeconds: 0, failure: "\(error)")
        }
        let line = child.output.split(separator: "\n").last.map(String.init)
        let failure = line == nil ? (child.exitStatus >= 0 ? "child exited with status \(child.exitStatus) and no output"
                                                           : "child killed by signal \(-child.exitStatus)") : nil
        return Child(output: line, maxRSSKiB: child.maxRSSKiB, exitStatus: child.exitStatus, wallSeconds: child.wallSeconds, failure: failure)
    }
}
