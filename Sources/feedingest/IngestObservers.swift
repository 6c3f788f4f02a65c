import ArticleStore
import Fetch
import Foundation
import Ingest
import Support
import Syndication

// The command line's observers. Each is `@unchecked Sendable` for one reason: its mutable state, and the standard
// stream it writes, are touched only from `ingest(_:)`, which the pipeline calls on its one serial event queue, one
// event at a time, while the main thread waits in `IngestPipeline.run` (and reads the state only after it returned).

/// Prints each new or updated article on stdout as one NDJSON line, as soon as it is committed: the lines of a commit
/// are flushed together when its batch of events ends (a write per article was 16,000 system calls for a 20 MB feed).
///
/// When stdout closes (the reader exited), the articles committed from then on cannot be printed: the observer keeps
/// the earliest commit time among them (and among the lines still buffered then), which ``notPrintedSince`` gives, so
/// the command can name the `articles --since` that prints them from the store.
final class ArticleOutputObserver: IngestObserver, @unchecked Sendable {
    private let printsAll: Bool
    private let output: OutputStream
    private var json = JSONWriter()
    /// The earliest commit time of the lines written since the last flush that reached stdout.
    private var unconfirmedSince: Date?
    /// The earliest commit time of an article that was not printed.
    private(set) var notPrintedSince: Date?

    init(printsAll: Bool, output: OutputStream = StandardStreams.output) {
        self.printsAll = printsAll
        self.output = output
    }

    /// Articles that did not reach stdout because it closed.
    var notPrinted: Int { output.lostRecords }

    func ingest(_ event: IngestEvent) {
        switch event {
        case .articleIngested(let stored):
            var extra: [(key: String, value: String)] = []
            switch stored.change {
            case .new?: extra = [("status", "new")]
            case .updated?: extra = [("status", "updated")]
            case .unchanged?: guard printsAll else { return }
            case nil: break
            }
            json.reset()
            stored.article.writeRedacted(to: &json, extra: extra)
            json.raw(0x0A)
            let committed = stored.committedAt ?? Date()
            unconfirmedSince = min(unconfirmedSince ?? committed, committed)
            if !json.withBytes({ output.writeRecord($0) }) { lost() }
        case .runFinished:
            flush()
        default:
            break
        }
    }

    func ingestBatchFinished() {
        flush()
    }

    private func flush() {
        if output.flush() { unconfirmedSince = nil } else { lost() }
    }

    /// The lines not confirmed written are lost with the stream.
    private func lost() {
        guard let since = unconfirmedSince else { return }
        notPrintedSince = min(notPrintedSince ?? since, since)
        unconfirmedSince = nil
    }
}

/// What stderr shows: on a terminal a live progress line, then a summary listing each failed feed and why; otherwise
/// one line per failed feed as it fails, then the summary.
final class StatusObserver: IngestObserver, @unchecked Sendable {
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
        case .textReplaced(let entry, let replacement):
            // Said at once, terminal or not: the articles are stored, but not all of their text is what was sent.
            let clear = isTerminal && drawn ? "\r\u{1B}[K" : ""
            StandardStreams.error.write(clear + "feedingest: \(entry.source): \(replacement)\n")
            draw(force: true)
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

/// Collects what `--report FILE` writes: the run's summary and each feed's result, in list order. The document is
/// described by `Schemas/run-report.schema.json`.
final class RunReportObserver: IngestObserver, @unchecked Sendable {
    private struct Feed {
        var entry: FeedEntry
        var result: FeedResult?
        var format: FeedFormat?
        var started: ContinuousClock.Instant?
        var firstElement: Duration?
        var duration: Duration?
    }

    private var feeds: [Feed]
    private var index: [String: Int] = [:]
    private var summary: IngestSummary?
    private let startedAt = Date()

    init(entries: [FeedEntry]) {
        feeds = entries.map { Feed(entry: $0) }
        for (position, entry) in entries.enumerated() { index[entry.storeURL] = position }
    }

    func ingest(_ event: IngestEvent) {
        let now = ContinuousClock.now
        switch event {
        case .feedStarted(let entry):
            update(entry) { $0.started = now }
        case .firstElement(let entry, let format):
            update(entry) { feed in
                feed.format = format
                feed.firstElement = feed.started.map { now - $0 }
            }
        case .feedFinished(let entry, let result):
            update(entry) { feed in
                feed.result = result
                feed.duration = feed.started.map { now - $0 }
            }
        case .runFinished(let summary):
            self.summary = summary
        default:
            break
        }
    }

    private func update(_ entry: FeedEntry, _ change: (inout Feed) -> Void) {
        guard let position = index[entry.storeURL] else { return }
        change(&feeds[position])
    }

    /// The report as JSON bytes, once the run is over.
    func document(store: String?, problems: [FeedListProblem], exitStatus: Int32) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.field("generator", "feedingest \(Command.version)")
        json.field("startedAt", startedAt)
        json.field("finishedAt", Date())
        json.key("store")
        if let store { json.string(Redaction.redactedText(store)) } else { json.null() }
        json.field("exitStatus", Int(exitStatus))
        let summary = self.summary ?? IngestSummary()
        json.key("summary")
        json.beginObject()
        json.field("feeds", summary.feeds)
        json.field("ok", summary.ok)
        json.field("notModified", summary.notModified)
        json.field("failed", summary.failed)
        json.field("deferred", summary.deferred)
        json.field("rateLimited", summary.rateLimited)
        json.field("offline", summary.offline)
        json.field("cancelled", summary.cancelled)
        json.field("claimedElsewhere", summary.claimedElsewhere)
        json.field("leaseLost", summary.leaseLost)
        json.field("badLines", problems.count)
        json.key("articles")
        Self.write(summary.articles, to: &json)
        json.field("bytes", Int(summary.articles.bytes))
        json.field("durationMs", Int((summary.duration * 1000).rounded()))
        json.endObject()
        json.key("badLines")
        json.beginArray()
        for problem in problems {
            json.beginObject()
            json.field("line", problem.line)
            json.field("message", Redaction.redactedText(problem.message))
            json.field("text", Redaction.redactedText(problem.text))
            json.endObject()
        }
        json.endArray()
        json.key("feeds")
        json.beginArray()
        for feed in feeds { Self.write(feed, to: &json) }
        json.endArray()
        json.endObject()
        json.raw(0x0A)
        return json.bytes
    }

    private static func write(_ feed: Feed, to json: inout JSONWriter) {
        json.beginObject()
        json.field("source", Redaction.redactedURL(feed.entry.source))
        json.field("url", Redaction.redactedURL(feed.entry.storeURL))
        json.field("tags", feed.entry.tags)
        var counts: FeedCounts?
        switch feed.result {
        case .ok(let feedCounts)?:
            json.field("result", "ok")
            counts = feedCounts
        case .notModified?:
            json.field("result", "not-modified")
        case .deferred(let until)?:
            json.field("result", "deferred")
            json.field("nextFetch", until)
        case .rateLimited(let until)?:
            json.field("result", "rate-limited")
            json.field("nextFetch", until)
        case .offline(let error)?:
            json.field("result", "offline")
            write(.fetch(error), to: &json)
        case .cancelled?, nil:
            json.field("result", "cancelled")
        case .claimedElsewhere?:
            json.field("result", "claimed-elsewhere")
        case .leaseLost(let error)?:
            json.field("result", "lease-lost")
            write(.store(error), to: &json)
        case .failed(let error, let feedCounts)?:
            json.field("result", "failed")
            write(error, to: &json)
            counts = feedCounts
        }
        if let format = feed.format {
            json.key("format")
            json.beginObject()
            json.field("family", format.family.rawValue)
            json.field("version", format.version)
            json.endObject()
        }
        if let counts {
            json.key("articles")
            write(counts, to: &json)
            json.field("bytes", Int(counts.bytes))
        }
        json.field("firstElementMs", feed.firstElement.map(milliseconds))
        json.field("durationMs", feed.duration.map(milliseconds))
        json.endObject()
    }

    /// `"reason"` (the text for people) and `"error"`: the layer that failed and its code, with the HTTP status,
    /// libcurl's code, or the line and column where they apply.
    private static func write(_ error: IngestError, to json: inout JSONWriter) {
        json.field("reason", Redaction.redactedText(error.description))
        json.key("error")
        json.beginObject()
        json.field("kind", error.kind)
        json.field("code", error.code)
        switch error {
        case .fetch(let fetch):
            if let status = fetch.status { json.field("status", status) }
            if let curlCode = fetch.curlCode { json.field("curlCode", Int(curlCode.rawValue)) }
        case .parse(let parse):
            if parse.line > 0 {
                json.field("line", parse.line)
                json.field("column", parse.column)
            }
        case .store(let store):
            if store.code != .ok { json.field("sqliteCode", Int(store.code.rawValue)) }
            if let state = store.sqlState { json.field("sqlState", state.rawValue) }
        }
        json.endObject()
    }

    private static func write(_ counts: FeedCounts, to json: inout JSONWriter) {
        json.beginObject()
        json.field("seen", counts.seen)
        json.field("new", counts.new)
        json.field("updated", counts.updated)
        json.field("unchanged", counts.unchanged)
        json.endObject()
    }

    private static func milliseconds(_ duration: Duration) -> Int { duration.millisecondsRoundedUp }
}

extension ArticleOutputObserver {
    /// The line for stderr after stdout closed with `reason`: how many articles were not printed and, when they are in
    /// the store, the command that prints them (`storeOption`: the `--store` given, shown as the user may retype it).
    func closedMessage(reason: String, stored: Bool, storeOption: String?) -> String {
        var line = "feedingest: stdout closed (\(reason)): "
        let count = notPrinted
        if count == 0 { return line + "stopped; every article committed before had been written" }
        guard stored else {
            return line + "\(StatusObserver.plural(count, "article")) could not be written (nothing is stored with --no-store)"
        }
        line += "\(StatusObserver.plural(count, "committed article")) could not be written"
        if let since = notPrintedSince {
            var command = "feedingest articles"
            if let storeOption { command += " --store " + Self.shellQuoted(Store.displayName(of: storeOption)) }
            command += " --since " + Self.timestamp(since)
            line += "; they are in the store: '\(command)' prints them, with everything committed after them"
        }
        return line
    }

    /// `date` as RFC 3339 UTC with milliseconds, rounded down, so `--since` includes it.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: milliseconds))
    }

    private static func shellQuoted(_ text: String) -> String {
        let plain = text.allSatisfy { $0.isLetter || $0.isNumber || "/._-:@=%+,".contains($0) }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
