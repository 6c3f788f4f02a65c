import ArticleStore
import Foundation
import Ingest
import Synchronization
import Watch

/// Counts what the runs did, for the status line, the metrics and the final summary; prints failures and the
/// service's events on stderr. Thread-safe: the event queue writes, the ticker and the service read.
final class WatchStats: IngestObserver, Sendable {
    struct Counters {
        var outcomes: [String: Int] = [:]
        var new = 0
        var updated = 0
        var bytes: Int64 = 0
        var failures = 0
        var today = 0
        var day = Calendar.current.startOfDay(for: Date())
        var listProblems = 0
        var downloads: [String: Int] = [:]
        var downloadBytes: Int64 = 0
        var offline = false
        var lineShown = false
        /// While the store is unavailable: the feeds whose run failed for it (not counted as failures).
        var storeOutage: Int?
    }

    /// Every outcome the fetch counter has, in the order the metrics list them.
    static let outcomes = ["ok", "not_modified", "failed", "rate_limited", "offline", "deferred", "cancelled",
                           "claimed_elsewhere", "lease_lost", "store_unavailable"]

    /// Every outcome the download counter has (with `--download`).
    static let downloadOutcomes = ["done", "failed", "paused"]

    let isTerminal: Bool
    let quiet: Bool
    /// Whether the metrics carry the download counters (`--download`).
    let downloads: Bool
    private let counters = Mutex(Counters())

    init(isTerminal: Bool, quiet: Bool, downloads: Bool = false) {
        self.isTerminal = isTerminal
        self.quiet = quiet
        self.downloads = downloads
    }

    /// Counts one download that ended with `outcome` after receiving `bytes`.
    func countDownload(outcome: String, bytes: Int64) {
        counters.withLock { counters in
            counters.downloads[outcome, default: 0] += 1
            counters.downloadBytes += bytes
        }
    }

    var current: Counters { counters.withLock { $0 } }

    func ingest(_ event: IngestEvent) {
        switch event {
        case .articleIngested(let stored):
            counters.withLock { counters in
                let today = Calendar.current.startOfDay(for: Date())
                if today != counters.day {
                    counters.day = today
                    counters.today = 0
                }
                switch stored.change {
                case .new?:
                    counters.new += 1
                    counters.today += 1
                case .updated?: counters.updated += 1
                default: break
                }
            }
        case .feedFinished(let entry, let result):
            let outcome: String
            var bytes: Int64 = 0
            switch result {
            case .ok(let counts):
                outcome = "ok"
                bytes = counts.bytes
            case .notModified: outcome = "not_modified"
            case .failed(.store(let error), _) where error.isUnavailable:
                // The store, not the feed: one line per outage, and no failure counted (the feed is tried again).
                outcome = "store_unavailable"
                storeUnavailable(error)
            case .failed(let error, let counts):
                outcome = "failed"
                bytes = counts.bytes
                if !quiet { line("feedingest: \(entry.source): \(error)") }
            case .rateLimited: outcome = "rate_limited"
            case .offline: outcome = "offline"
            case .deferred: outcome = "deferred"
            case .cancelled: outcome = "cancelled"
            case .claimedElsewhere: outcome = "claimed_elsewhere"
            case .leaseLost(let error):
                outcome = "lease_lost"
                if !quiet { line("feedingest: \(entry.source): \(error.message); another process took it over") }
            }
            let back = counters.withLock { counters -> Int? in
                counters.outcomes[outcome, default: 0] += 1
                counters.bytes += bytes
                if outcome == "failed" { counters.failures += 1 }
                // A feed that finished with the store written (or failed for itself) ends an outage.
                guard outcome != "store_unavailable", outcome != "cancelled", outcome != "offline", let waited = counters.storeOutage
                else { return nil }
                counters.storeOutage = nil
                return waited
            }
            if let back, !quiet {
                line("feedingest: the store is reachable again (\(StatusObserver.plural(back, "feed")) waited for it and are tried again)")
            }
        default:
            break
        }
    }

    /// The service's own events, as lines on stderr.
    func report(_ event: WatchEvent) {
        switch event {
        case .paused(let reason, let remote):
            counters.withLock { $0.offline = true }
            if !quiet { line("feedingest: offline (\(reason)): pausing \(StatusObserver.plural(remote, "remote feed")); local feeds go on") }
        case .resumed(let overdue):
            counters.withLock { $0.offline = false }
            if !quiet { line("feedingest: online again: resuming remote feeds (\(overdue) overdue, spread out)") }
        case .routeMonitorUnavailable(let reason):
            if !quiet { line("feedingest: no route monitor (\(reason)); pausing only when transfers fail for want of a network") }
        case .clockJumped:
            if !quiet { line("feedingest: the machine slept; counting it as a network change") }
        case .storeError(let error) where error.isUnavailable:
            storeUnavailable(error, counting: false)
        case .storeError(let error):
            line("feedingest: cannot read the feeds' schedule from the store: \(error)")
        }
    }

    /// Says once per outage that the store cannot be reached; counts the feeds that waited for it.
    private func storeUnavailable(_ error: StoreError, counting: Bool = true) {
        let first = counters.withLock { counters -> Bool in
            let first = counters.storeOutage == nil
            counters.storeOutage = (counters.storeOutage ?? 0) + (counting ? 1 : 0)
            return first
        }
        if first {
            line("feedingest: the store is unavailable (\(error)); feeds wait and are tried again, not counted as failed")
        }
    }

    func setListProblems(_ count: Int) { counters.withLock { $0.listProblems = count } }

    /// A line on stderr, over the status line on a terminal (redrawn by the next tick); a message's own line breaks
    /// become spaces, so one message stays one line.
    func line(_ text: String) {
        let text = text.onOneLine
        let clear = counters.withLock { counters -> Bool in
            defer { counters.lineShown = false }
            return counters.lineShown
        }
        StandardStreams.error.write((clear ? "\r\u{1B}[K" : "") + text + "\n")
        StandardStreams.error.flush()
    }

    /// Draws the status line (terminal only).
    func draw(_ text: String) {
        guard isTerminal, !quiet else { return }
        counters.withLock { $0.lineShown = true }
        StandardStreams.error.write("\r\u{1B}[K" + text)
        StandardStreams.error.flush()
    }

    func clearLine() {
        let shown = counters.withLock { counters -> Bool in
            defer { counters.lineShown = false }
            return counters.lineShown
        }
        if shown { StandardStreams.error.write("\r\u{1B}[K") }
    }

    /// `1,234 fetches (1,200 ok, 30 not modified, 4 failed); 56 new, 7 updated articles; 1.2 MB`.
    func summary() -> String {
        let c = current
        let total = c.outcomes.values.reduce(0, +)
        let parts = Self.outcomes.compactMap { name -> String? in
            guard let count = c.outcomes[name], count > 0 else { return nil }
            return "\(count) \(name.replacingOccurrences(of: "_", with: " "))"
        }
        return "\(StatusObserver.plural(total, "fetch").replacingOccurrences(of: "fetchs", with: "fetches"))"
            + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))")
            + "; \(c.new) new, \(c.updated) updated articles; \(StatusObserver.bytes(c.bytes))"
    }

    /// The Prometheus text exposition of the counters and `snapshot`'s gauges.
    func metrics(_ snapshot: WatchSnapshot) -> String {
        let c = current
        var text = "# HELP feedingest_fetches_total Feeds fetched (or passed over) by outcome.\n"
        text += "# TYPE feedingest_fetches_total counter\n"
        for outcome in Self.outcomes { text += "feedingest_fetches_total{outcome=\"\(outcome)\"} \(c.outcomes[outcome] ?? 0)\n" }
        text += "# HELP feedingest_articles_total Articles committed, new or updated.\n"
        text += "# TYPE feedingest_articles_total counter\n"
        text += "feedingest_articles_total{change=\"new\"} \(c.new)\n"
        text += "feedingest_articles_total{change=\"updated\"} \(c.updated)\n"
        text += "# HELP feedingest_bytes_total Feed body bytes received.\n# TYPE feedingest_bytes_total counter\n"
        text += "feedingest_bytes_total \(c.bytes)\n"
        text += "# HELP feedingest_failures_total Failed fetches (HTTP, network, parse or store errors).\n"
        text += "# TYPE feedingest_failures_total counter\nfeedingest_failures_total \(c.failures)\n"
        text += "# HELP feedingest_feeds Feeds on the list.\n# TYPE feedingest_feeds gauge\nfeedingest_feeds \(snapshot.feeds)\n"
        text += "# HELP feedingest_in_flight Feeds being fetched now.\n# TYPE feedingest_in_flight gauge\n"
        text += "feedingest_in_flight \(snapshot.inFlight)\n"
        text += "# HELP feedingest_offline 1 while remote feeds are paused for want of a network.\n"
        text += "# TYPE feedingest_offline gauge\nfeedingest_offline \(snapshot.offlineReason == nil ? 0 : 1)\n"
        text += "# HELP feedingest_due_next_minute Feeds due within the next minute.\n# TYPE feedingest_due_next_minute gauge\n"
        text += "feedingest_due_next_minute \(snapshot.dueWithinMinute)\n"
        text += "# HELP feedingest_list_problems Bad lines in the feed list.\n# TYPE feedingest_list_problems gauge\n"
        text += "feedingest_list_problems \(c.listProblems)\n"
        if downloads {
            text += "# HELP feedingest_downloads_total Enclosure downloads ended, by outcome (paused: stopped offline or by a signal).\n"
            text += "# TYPE feedingest_downloads_total counter\n"
            for outcome in Self.downloadOutcomes { text += "feedingest_downloads_total{outcome=\"\(outcome)\"} \(c.downloads[outcome] ?? 0)\n" }
            text += "# HELP feedingest_download_bytes_total Enclosure bytes written to the download files (from the resume offset to the committed one).\n# TYPE feedingest_download_bytes_total counter\n"
            text += "feedingest_download_bytes_total \(c.downloadBytes)\n"
        }
        return text
    }
}
