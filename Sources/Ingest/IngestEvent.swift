import ArticleStore
import Fetch
import Foundation
import Syndication

/// Something that happened during an ingest run, as observers hear it.
///
/// Events of one feed come in this order: ``feedStarted(_:)``, ``firstElement(_:_:)`` (when the body began with a
/// feed's root element), its ``articleIngested(_:)`` events (each after the article was committed),
/// ``textReplaced(_:_:)`` (when some of its text is not what the bytes said), then ``feedFinished(_:_:)``. Events of different feeds interleave. ``runStarted(feeds:)``
/// comes first and ``runFinished(_:)`` last.
public enum IngestEvent: Sendable {
    /// The run begins with this many feeds.
    case runStarted(feeds: Int)
    /// A feed's fetch begins (a worker took it; its transfer may have started earlier).
    case feedStarted(FeedEntry)
    /// The feed's root element was parsed and recognised: the first sign of a working feed, long before its end.
    case firstElement(FeedEntry, FeedFormat)
    /// An article is through the pipeline: committed to the store, with its identifier and what the store made of
    /// it; or, without a store, parsed (no identifier, no change).
    case articleIngested(IngestedArticle)
    /// Some of the feed's text is not what its bytes say under its label.
    ///
    /// The bytes contradicted the charset and were read in another encoding, or invalid byte sequences became U+FFFD.
    /// Once per feed, before ``feedFinished(_:_:)``.
    case textReplaced(FeedEntry, TextReplacement)
    /// A feed is done: fetched and stored, not modified, deferred, or failed.
    case feedFinished(FeedEntry, FeedResult)
    /// The run is over; nothing follows.
    case runFinished(IngestSummary)
}

/// One article of an ingest run: the value, its identifier in the store and what the store made of it.
public struct IngestedArticle: Sendable {
    /// The feed it came from.
    public var entry: FeedEntry
    /// The article as parsed.
    public var article: Article
    /// Its identifier in the store; `nil` without a store.
    public var id: ArticleID?
    /// New, updated or unchanged; `nil` without a store.
    public var change: ArticleChange?
    /// When its transaction wrote it (its first-seen or last-updated time in the store); `nil` without a store.
    public var committedAt: Date?

    /// Creates a value.
    public init(entry: FeedEntry, article: Article, id: ArticleID?, change: ArticleChange?, committedAt: Date? = nil) {
        self.entry = entry
        self.article = article
        self.id = id
        self.change = change
        self.committedAt = committedAt
    }
}

/// How one feed ended.
public enum FeedResult: Sendable, Hashable {
    /// Fetched, parsed and stored.
    case ok(FeedCounts)
    /// The server answered 304 Not Modified.
    case notModified
    /// Not fetched: the store's next allowed fetch (after `Retry-After` or failures, with backoff) is still ahead.
    /// ``IngestConfiguration/force`` fetches anyway.
    case deferred(until: Date)
    /// The server answered `429 Too Many Requests`: not fetched this time, and not a failure (the store keeps the
    /// feed's failure count and defers it until the server's `Retry-After`, else the base backoff). `until` is the
    /// next allowed fetch, when the store knows it.
    case rateLimited(until: Date?)
    /// The host name did not resolve or had no route, and no other remote feed of the run got an answer either: the network looks
    /// down. Treated as deferred: the store is untouched and no failure is counted. (When another remote feed did
    /// get an answer, an unresolved host is a ``failed(_:counts:)`` instead.) The error says which.
    case offline(FetchError)
    /// Not fetched, or aborted, because the run was cancelled (``IngestPipeline/cancel()``); the store is as before.
    case cancelled
    /// The fetch, the parse or the store failed, with the typed error of the layer that failed (its description is
    /// the reason for people). Articles committed before the failure stay committed (and were reported).
    case failed(IngestError, counts: FeedCounts)
    /// Not fetched here: another process sharing the store held the feed's lease, or fetched it since this run listed it
    /// (its next fetch is now ahead). Not a failure.
    case claimedElsewhere
    /// This process lost the feed's lease while it held it (it stalled past the lease and another process claimed the
    /// feed): what it had not committed by then was not written, and the other process's results stand. The error
    /// says which epoch took over. Not counted as a failure of the feed, but reported.
    case leaseLost(StoreError)

    /// Whether the feed failed.
    public var isFailure: Bool {
        if case .failed = self { return true }
        return false
    }
}

/// Article counts of one feed.
public struct FeedCounts: Sendable, Hashable {
    /// Articles parsed.
    public var seen = 0
    /// Of those, new to the store.
    public var new = 0
    /// Of those, changed since the store saw them.
    public var updated = 0
    /// Of those, already stored unchanged.
    public var unchanged = 0
    /// Body bytes received off the wire (before decompression).
    public var bytes: Int64 = 0

    /// Creates counts.
    public init(seen: Int = 0, new: Int = 0, updated: Int = 0, unchanged: Int = 0, bytes: Int64 = 0) {
        self.seen = seen
        self.new = new
        self.updated = updated
        self.unchanged = unchanged
        self.bytes = bytes
    }
}

/// The totals of a run.
public struct IngestSummary: Sendable, Hashable {
    /// Feeds in the run.
    public var feeds = 0
    /// Feeds fetched and stored.
    public var ok = 0
    /// Feeds that answered 304.
    public var notModified = 0
    /// Feeds that failed.
    public var failed = 0
    /// Feeds not fetched because their next allowed fetch is still ahead.
    public var deferred = 0
    /// Feeds whose server answered `429 Too Many Requests` (not failures).
    public var rateLimited = 0
    /// Feeds not ingested because the run was cancelled.
    public var cancelled = 0
    /// Feeds not reached because the network looks down (see ``FeedResult/offline(reason:)``).
    public var offline = 0
    /// Feeds another process sharing the store held or had fetched (``FeedResult/claimedElsewhere``).
    public var claimedElsewhere = 0
    /// Feeds whose lease this process lost to another (``FeedResult/leaseLost(_:)``).
    public var leaseLost = 0
    /// Article counts over all feeds.
    public var articles = FeedCounts()
    /// Wall time of the run, in seconds.
    public var duration: TimeInterval = 0

    /// Creates an empty summary.
    public init() {}

    mutating func add(_ result: FeedResult) {
        switch result {
        case .ok(let counts):
            ok += 1
            articles.add(counts)
        case .notModified:
            notModified += 1
        case .deferred:
            deferred += 1
        case .rateLimited:
            rateLimited += 1
        case .cancelled:
            cancelled += 1
        case .offline:
            offline += 1
        case .failed(_, let counts):
            failed += 1
            articles.add(counts)
        case .claimedElsewhere:
            claimedElsewhere += 1
        case .leaseLost:
            leaseLost += 1
        }
    }
}

extension FeedCounts {
    mutating func add(_ other: FeedCounts) {
        seen += other.seen
        new += other.new
        updated += other.updated
        unchanged += other.unchanged
        bytes += other.bytes
    }
}

/// Hears the events of ingest runs.
///
/// ## Threading contract
///
/// Every event of a pipeline goes to every observer on the pipeline's one serial ``IngestConfiguration/eventQueue``,
/// one event at a time, in the order the run produced them (see ``IngestEvent``), never concurrently — so an
/// observer may keep unsynchronised state that only ``ingest(_:)`` touches. ``IngestPipeline/run(_:)`` returns only
/// after every observer has handled ``IngestEvent/runFinished(_:)``. A slow observer delays later events (and the end
/// of the run); once 4,096 events wait, it holds up the threads that produce them (the store threads, and through
/// their bounded queues the parsers), so memory stays bounded whatever the observer's speed. Observers must not call
/// back into the running pipeline (`run`, `cancel` is fine), nor block on anything that waits for the run.
///
/// The events are produced on several threads and queued, in order, onto the event queue: ``IngestEvent/feedStarted(_:)``,
/// ``IngestEvent/firstElement(_:_:)`` and ``IngestEvent/feedFinished(_:_:)`` by the feed's worker thread;
/// ``IngestEvent/articleIngested(_:)`` by the worker's store thread as each batch commits (by the worker itself without a
/// store, or for the articles its final `finishFeed`/`failFeed` commits), each after the commit and before the feed's
/// ``IngestEvent/feedFinished(_:_:)``; the run's first and last events by the thread that called
/// ``IngestPipeline/run(_:)``. None of this is visible to observers, which only ever run on the event queue.
public protocol IngestObserver: Sendable {
    /// Handles one event, on the pipeline's event queue.
    func ingest(_ event: IngestEvent)

    /// Ends a batch: called on the event queue after the events that were handed over together (a commit's
    /// articles; any other event is a batch of its own), the place to flush output that ``ingest(_:)`` buffered.
    /// Does nothing by default.
    func ingestBatchFinished()
}

extension IngestObserver {
    /// Does nothing.
    public func ingestBatchFinished() {}
}

/// An observer made of a closure.
public struct ClosureObserver: IngestObserver {
    private let handler: @Sendable (IngestEvent) -> Void

    /// Creates an observer that calls `handler` with each event.
    public init(_ handler: @escaping @Sendable (IngestEvent) -> Void) {
        self.handler = handler
    }

    /// Calls the closure.
    public func ingest(_ event: IngestEvent) { handler(event) }
}

extension IngestedArticle {
    /// A commit's articles as events, in order, each article moved out of its `StoredArticle` (swapped with an empty
    /// one): a `map` copied every article, each field retained, then released the originals with the array.
    static func events(_ committed: consuming [StoredArticle], entry: FeedEntry) -> [IngestEvent] {
        var committed = consume committed
        var events: [IngestEvent] = []
        events.reserveCapacity(committed.count)
        for index in committed.indices {
            var article = Article(id: "", idSource: .hash, feed: "")
            swap(&article, &committed[index].article)
            events.append(.articleIngested(IngestedArticle(entry: entry, article: consume article, id: committed[index].id,
                                                           change: committed[index].change,
                                                           committedAt: committed[index].committedAt)))
        }
        return events
    }
}
