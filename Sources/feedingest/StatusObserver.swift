import Foundation
import Ingest

/// What stderr shows: on a terminal a live progress line, then a summary listing each failed feed and why; otherwise
/// one line per failed feed as it fails, then the summary.
final class StatusObserver: IngestObserver, @unchecked Sendable {
    // @unchecked Sendable: its mutable state, and the standard stream it writes, are touched only from `ingest(_:)`,
    // which the pipeline calls on its one serial event queue, one event at a time, while the main thread waits in
    // `IngestPipeline.run` (and reads the state only after it returned).
    private let isTerminal: Bool
    private let badLines: Int
    private let clock = ContinuousClock()
    private var started = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?
    private var total = 0
    private var done = 0
    private let stores: Bool
    private var failures: [(source: String, reason: String)] = []
    private var deferred: [(source: String, until: Date)] = []
    /// The articles reported: committed (new, updated) with a store, parsed (seen) without.
    private var counts = FeedCounts()
    private var drawn = false

    init(isTerminal: Bool, badLines: Int, stores: Bool = true) {
        self.isTerminal = isTerminal
        self.badLines = badLines
        self.stores = stores
    }

    func ingest(_ event: IngestEvent) {
        switch event {
        case .runStarted(let feeds):
            total = feeds
            started = clock.now
            draw(force: true)
        case .articleIngested(let stored):
            counts.seen += 1
            switch stored.change {
            case .new?: counts.new += 1
            case .updated?: counts.updated += 1
            default: break
            }
            draw(force: false)
        case .feedFinished(let entry, let result):
            done += 1
            switch result {
            case .ok(let feed): counts.bytes += feed.bytes
            case .failed(let error, let feed):
                counts.bytes += feed.bytes
                failures.append((entry.source, error.description))
                if !isTerminal { StandardStreams.error.write("feedingest: \(entry.source): \(error)".onOneLine + "\n") }
            case .deferred(let until):
                deferred.append((entry.source, until))
            case .leaseLost(let error):
                // Not a failure of the feed, but this process stalled: say so at once, terminal or not.
                let clear = isTerminal && drawn ? "\r\u{1B}[K" : ""
                StandardStreams.error.write(clear + "feedingest: \(entry.source): \(error.message); another process took it over\n")
            default: break
            }
            draw(force: false)
        case .textReplaced(let entry, let replacement):
            // Said at once, terminal or not: the articles are stored, but not all of their text is what was sent.
            let clear = isTerminal && drawn ? "\r\u{1B}[K" : ""
            StandardStreams.error.write(clear + "feedingest: \(entry.source): \(replacement)\n")
            draw(force: true)
        case .runFinished(let summary):
            finish(summary)
        default:
            break
        }
    }

    /// Redraws the progress line, at most ten times a second unless forced. Only on a terminal.
    private func draw(force: Bool) {
        guard isTerminal else { return }
        let now = clock.now
        if !force, let lastDrawn, now - lastDrawn < .milliseconds(100) { return }
        lastDrawn = now
        let seconds = Self.seconds(now - started)
        var line = "\(done)/\(total) feeds · " + (stores ? "\(counts.new) new, \(counts.updated) updated" : Self.plural(counts.seen, "article"))
            + " · \(Self.bytes(counts.bytes))"
        if seconds > 0.2 { line += " at \(Self.bytes(Int64(Double(counts.bytes) / seconds)))/s" }
        if !failures.isEmpty { line += " · \(failures.count) failed" }
        StandardStreams.error.write("\r\u{1B}[K" + line)
        drawn = true
    }

    private func finish(_ summary: IngestSummary) {
        if drawn { StandardStreams.error.write("\r\u{1B}[K") }
        var text = ""
        if summary.offline > 0 {
            text += "feedingest: the network looks unreachable (no remote feed's host resolved or had a route); "
                + "\(Self.plural(summary.offline, "feed")) left for the next run, not counted as failed\n"
        }
        if !deferred.isEmpty { text += "feedingest: " + Self.deferredLine(deferred) + "\n" }
        var articles = summary.articles
        (articles.seen, articles.new, articles.updated) = (counts.seen, counts.new, counts.updated)
        text += "feedingest: " + Self.summaryLine(summary, articles: articles, stores: stores, badLines: badLines) + "\n"
        if isTerminal, !failures.isEmpty {
            text += "failed:\n"
            for failure in failures { text += "  \(failure.source)\n    \(failure.reason)\n" }
        }
        StandardStreams.error.write(text)
    }

    /// Which feeds were deferred and until when: the first few by name, soonest first.
    static func deferredLine(_ deferred: [(source: String, until: Date)], shown: Int = 3) -> String {
        let soonest = deferred.sorted { $0.until < $1.until }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = .current
        formatter.formatOptions = [.withInternetDateTime]
        var line = "\(plural(deferred.count, "feed")) deferred, not fetched (a server asked to wait, failures back off, or --due "
            + "keeps the schedule): " + soonest.prefix(shown).map { "\($0.source) until \(formatter.string(from: $0.until))" }
            .joined(separator: ", ")
        if soonest.count > shown { line += ", and \(soonest.count - shown) more" }
        return line + "; 'feedingest feeds' lists them, --force fetches them now"
    }

    /// `50 feeds: 45 ok, 2 not modified, 3 failed; 120 new, 2 updated articles; 1.3 MB in 1.2 s`: `articles` counts
    /// what was reported (committed with a store, parsed without one).
    static func summaryLine(_ summary: IngestSummary, articles: FeedCounts, stores: Bool, badLines: Int) -> String {
        var parts = ["\(summary.ok) ok", "\(summary.notModified) not modified", "\(summary.failed) failed"]
        if summary.deferred > 0 { parts.append("\(summary.deferred) deferred") }
        if summary.rateLimited > 0 { parts.append("\(summary.rateLimited) rate limited (429, not failed)") }
        if summary.offline > 0 { parts.append("\(summary.offline) offline") }
        if summary.cancelled > 0 { parts.append("\(summary.cancelled) cancelled") }
        if summary.claimedElsewhere > 0 { parts.append("\(summary.claimedElsewhere) claimed elsewhere") }
        if summary.leaseLost > 0 { parts.append("\(summary.leaseLost) lease lost") }
        if badLines > 0 { parts.append(plural(badLines, "bad list line")) }
        return "\(plural(summary.feeds, "feed")): " + parts.joined(separator: ", ")
            + (stores ? "; \(articles.new) new, \(articles.updated) updated articles; "
                      : "; \(plural(articles.seen, "article")) parsed, not stored (--no-store); ")
            + "\(bytes(articles.bytes)) in \(String(format: "%.1f", summary.duration)) s"
    }

    static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    /// Bytes for people: `512 B`, `12.3 KB`, `4.5 MB` (decimal units).
    static func bytes(_ count: Int64) -> String {
        switch count {
        case ..<1000: return "\(count) B"
        case ..<1_000_000: return String(format: "%.1f KB", Double(count) / 1e3)
        case ..<1_000_000_000: return String(format: "%.1f MB", Double(count) / 1e6)
        default: return String(format: "%.2f GB", Double(count) / 1e9)
        }
    }

    static func seconds(_ duration: Duration) -> Double { duration.seconds }
}
