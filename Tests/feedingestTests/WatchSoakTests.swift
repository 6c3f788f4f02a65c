import Foundation
import TestSupport
import Testing

/// `make soak`: `feedingest watch` for at least 10,000 fetch cycles against the fault server with every interval 0, its
/// resident memory sampled from `/proc` along the way. Not part of `make test` (it runs for minutes); enabled by
/// `FEEDINGEST_SOAK_CYCLES` (the fetches to run), bounded by `FEEDINGEST_SOAK_GROWTH_MIB` (default 16).
@Suite("feedingest watch: soak", .serialized)
struct WatchSoakTests {
    static let cycles = Int(ProcessInfo.processInfo.environment["FEEDINGEST_SOAK_CYCLES"] ?? "") ?? 0
    static let growthBound = Double(ProcessInfo.processInfo.environment["FEEDINGEST_SOAK_GROWTH_MIB"] ?? "") ?? 16

    /// The resident set of `pid` in MiB (`VmRSS` of `/proc/PID/status`).
    static func residentMiB(_ pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Double(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else { return nil }
        return kib / 1024
    }

    /// Fetches so far, from the metrics file.
    static func fetches(_ metrics: URL) -> Int {
        let text = (try? String(contentsOf: metrics, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix("feedingest_fetches_total{") }
            .compactMap { Int($0.split(separator: " ").last ?? "") }.reduce(0, +)
    }

    @Test(.enabled(if: cycles > 0, "set FEEDINGEST_SOAK_CYCLES (make soak)"))
    func memoryStaysFlatOverTenThousandFetchCycles() throws {
        let faults = try FaultServer.shared.get()
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Half the feeds answer in full each time (20 items parsed, deduplicated as unchanged), half answer 304.
        let urls = (0..<20).map { index in
            index % 2 == 0 ? faults.url("/feed?items=20&token=soak-\(index)").absoluteString : faults.watchURL("soak-\(index)")
        }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data(urls.joined(separator: "\n").utf8).write(to: list)
        let store = directory.appendingPathComponent("store.sqlite")
        let metrics = directory.appendingPathComponent("soak.prom")
        let watch = try WatchProcess(["watch", list.path, "--store", store.path, "--min-interval", "0", "--max-interval", "0",
                                      "--metrics-file", metrics.path], in: directory)
        let pid = watch.process.processIdentifier
        let started = Date()
        var samples: [(fetches: Int, mib: Double)] = []
        let warmUp = max(Self.cycles / 10, 500)
        var baseline: Double?
        while watch.process.isRunning {
            Thread.sleep(forTimeInterval: 1)
            let done = Self.fetches(metrics)
            guard let mib = Self.residentMiB(pid) else { break }
            samples.append((done, mib))
            if baseline == nil, done >= warmUp { baseline = mib }
            if done >= Self.cycles { break }
            if Date().timeIntervalSince(started) > 1800 { break }
        }
        let seconds = Date().timeIntervalSince(started)
        #expect(watch.stop() == 0, "\(watch.stderr.suffix(2000))")
        let finalFetches = Self.fetches(metrics)
        let peak = samples.map(\.mib).max() ?? 0
        let last = samples.last?.mib ?? 0
        let base = try #require(baseline, "never reached the warm-up (\(warmUp) fetches): \(samples.last.map { "\($0)" } ?? "none")")
        let report = String(format: "soak: %d fetches in %.0f s (%.0f/s); RSS after %d fetches %.1f MiB, at the end %.1f MiB, peak %.1f MiB; growth %.1f MiB (bound %.0f)",
                            finalFetches, seconds, Double(finalFetches) / seconds, warmUp, base, last, peak, last - base, Self.growthBound)
        print(report)
        // Where make soak says (outside the run's temporary directory, which scripts/offline.sh removes), else beside it.
        let log = ProcessInfo.processInfo.environment["FEEDINGEST_SOAK_LOG"].map { URL(fileURLWithPath: $0) }
            ?? directory.deletingLastPathComponent().appendingPathComponent("feedingest-soak.txt")
        try? Data((report + "\n" + samples.map { "\($0.fetches) \(String(format: "%.1f", $0.mib))" }.joined(separator: "\n") + "\n").utf8)
            .write(to: log)
        #expect(finalFetches >= Self.cycles, "\(report)")
        #expect(last - base <= Self.growthBound, "memory grew: \(report)")
        #expect(peak - base <= Self.growthBound * 1.5, "memory peaked: \(report)")
        let failed = watch.stderr.split(separator: "\n").filter { $0.contains("127.0.0.1") }
        #expect(failed.isEmpty, "no fetch failed: \(failed.prefix(5))")
    }
}
