import Dispatch
import Foundation
import Support
import TestSupport

/// One configuration of the scale section: an engine and a number of processes, over several rounds.
struct ScaleResult: Codable {
    var name: String
    var engine: String
    var processes: Int
    var feeds: Int
    var ok: Bool
    var failure: String?
    /// Wall time of a round: from the start of the processes to the end of the last.
    var wallMs: Summary?
    /// Feeds per second per round (feeds / wall).
    var feedsPerSecond: Summary?
    /// PostgreSQL only: server-side time executing the run's statements (pg_stat_database.active_time: claims, batch
    /// and final transactions, lease renewals; round trips on the unix socket excluded), per feed.
    var databaseMsPerFeed: Summary?
    /// That time as a share of the processes' wall time (sum of active time / (processes × wall)).
    var databaseShareOfWall: Summary?
    /// The largest peak RSS of any process, KiB.
    var peakRSSKiB: Int?
    /// Generated feeds the server saw requested more than once in a round (must be 0).
    var doubleFetches: Int
    /// 304s per round.
    var notModified: Int?
}

/// 2,000 feeds behind 100 ms of latency on 20 ports, 80% answering 304 once fetched: one process into SQLite (the
/// baseline), then 1, 2 and 4 processes at once into one PostgreSQL database on a throw-away server of the
/// benchmark's own (TestSupport's PostgresServer: initdb, pg_ctl as the postgres user, a unix socket). Every round
/// first ingests the list once into a fresh store (`--interval 0`, so every feed stays due), then measures the next
/// run, where 80% of the feeds answer 304 and 20% send their whole (unchanged) body.
enum ScaleBench {
    static let feeds = 2000

    static func run(executable: String, rounds: Int) throws -> [ScaleResult] {
        let server = try FeedServer(feeds: feeds, ports: 20, delay: 0.1, notModified: 80)
        defer { server.stop() }
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedingest-scale-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let list = directory + "/feeds.txt"
        try (server.feedURLs.map(\.absoluteString).joined(separator: "\n") + "\n").write(toFile: list, atomically: true, encoding: .utf8)

        var results: [ScaleResult] = []
        for (engine, processes) in [("sqlite", 1), ("postgresql", 1), ("postgresql", 2), ("postgresql", 4)] {
            let name = "scale-\(engine)-\(processes)"
            var walls: [Double] = [], rates: [Double] = [], dbPerFeed: [Double] = [], dbShare: [Double] = []
            var rss = 0, repeated = 0, notModified: Int?
            var failure: String?
            for round in 0..<rounds {
                log("\(name): round \(round + 1)/\(rounds)…")
                let store: String
                var database: String?
                if engine == "sqlite" {
                    store = "\(directory)/\(name)-\(round).sqlite"
                } else {
                    database = try postgres.createDatabase("scale\(processes)r\(round)")
                    store = postgres.uri(database!)
                }
                let prime = try Spawn.run(executable, [list, "--store", store, "-q", "--interval", "0"], discardsOutput: true, timeout: 300)
                guard prime.exitStatus == 0 else {
                    failure = "the priming run exited with \(prime.exitStatus)"
                    break
                }
                _ = try server.stats(reset: true)
                let activeBefore = try database.map { try activeMilliseconds(postgres, $0) }
                let runs = Lock<[CommandRun?]>(Array(repeating: nil, count: processes))
                let started = ContinuousClock.now
                DispatchQueue.concurrentPerform(iterations: processes) { index in
                    let run = Probe.measureCommandRun(executable, [list, "--store", store, "-q"], timeout: 300)
                    runs.withLock { $0[index] = run }
                }
                let elapsed = ContinuousClock.now - started
                let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let finished = runs.withLock { $0 }
                guard finished.allSatisfy({ $0 != nil && $0!.exitStatus == 0 && !$0!.timedOut }) else {
                    failure = "a process failed: \(finished.map { $0.map { "exit \($0.exitStatus)" } ?? "no result" })"
                    break
                }
                let stats = try server.stats(reset: true)
                repeated = max(repeated, stats.repeated ?? 0)
                notModified = stats.not_modified
                if stats.requests != feeds { failure = "the server saw \(stats.requests) requests for \(feeds) feeds" }
                walls.append(wall)
                rates.append(Double(feeds) / wall)
                rss = max(rss, finished.compactMap { $0?.maxRSSKiB }.max() ?? 0)
                if let database, let before = activeBefore {
                    Thread.sleep(forTimeInterval: 1)  // the backends' statistics reach pg_stat_database as they exit
                    let active = try activeMilliseconds(postgres, database) - before
                    dbPerFeed.append(active / Double(feeds))
                    dbShare.append(active / 1000 / (wall * Double(processes)))
                }
                if engine == "sqlite" { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) } }
            }
            results.append(ScaleResult(
                name: name, engine: engine, processes: processes, feeds: feeds, ok: failure == nil && repeated == 0 && !walls.isEmpty,
                failure: failure ?? (repeated > 0 ? "\(repeated) feeds fetched twice" : nil),
                wallMs: Summary(walls)?.scaled(by: 1000), feedsPerSecond: Summary(rates), databaseMsPerFeed: Summary(dbPerFeed),
                databaseShareOfWall: Summary(dbShare), peakRSSKiB: rss, doubleFetches: repeated, notModified: notModified))
        }
        printTable(results)
        return results
    }

    private static func activeMilliseconds(_ postgres: PostgresServer, _ database: String) throws -> Double {
        let text = try postgres.psql("SELECT coalesce(active_time, 0) FROM pg_stat_database WHERE datname = '\(database)'")
        return Double(text) ?? 0
    }

    static func printTable(_ results: [ScaleResult]) {
        var lines = ["", "Scale: \(feeds) feeds on 20 ports of 127.0.0.1, 100 ms late, 80% answering 304 (after a priming run); "
                     + "median over rounds; database time: pg_stat_database.active_time"]
        let baseline = results.first { $0.engine == "postgresql" && $0.processes == 1 }?.feedsPerSecond?.median
        lines.append("engine       processes  wall s   feeds/s  x 1 process  db ms/feed  db share  peak RSS MiB  304s  double fetches")
        func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        for result in results {
            let rate: Double? = result.feedsPerSecond?.median
            var ratio = "-"
            if result.engine == "postgresql", let rate, let baseline { ratio = String(format: "%.2f", rate / baseline) }
            let wall = result.wallMs.map { String(format: "%.2f", $0.median / 1000) } ?? "-"
            let rateText = rate.map { String(format: "%.0f", $0) } ?? "-"
            let dbPerFeed = result.databaseMsPerFeed.map { String(format: "%.3f", $0.median) } ?? "-"
            let dbShare = result.databaseShareOfWall.map { String(format: "%.1f%%", $0.median * 100) } ?? "-"
            let rss = String(format: "%.1f", Double(result.peakRSSKiB ?? 0) / 1024)
            var columns: [String] = [pad(result.engine, 12), pad(String(result.processes), 10), pad(wall, 8), pad(rateText, 8)]
            columns += [pad(ratio, 12), pad(dbPerFeed, 11), pad(dbShare, 9), pad(rss, 13), pad(String(result.notModified ?? 0), 5)]
            columns.append(String(result.doubleFetches) + (result.failure.map { "  FAILED: \($0)" } ?? ""))
            lines.append(columns.joined(separator: " "))
        }
        print(lines.joined(separator: "\n"))
    }
}
