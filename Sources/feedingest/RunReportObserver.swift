import ArticleStore
import Fetch
import Foundation
import Ingest
import Support
import Syndication

/// Collects what `--report FILE` writes: the run's summary and each feed's result, in list order. The document is
/// described by `Schemas/run-report.schema.json`.
final class RunReportObserver: IngestObserver, @unchecked Sendable {
    // @unchecked Sendable: its mutable state, and the standard stream it writes, are touched only from `ingest(_:)`,
    // which the pipeline calls on its one serial event queue, one event at a time, while the main thread waits in
    // `IngestPipeline.run` (and reads the state only after it returned).
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
