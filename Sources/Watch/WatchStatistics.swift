import ArticleStore
import Foundation
import Ingest
import Support

/// What a watch has done so far, counted for its status line, its metrics and its final summary: fetches by outcome,
/// articles, bytes, failures, downloads, the list's bad lines, and whether the store or the network is away.
///
/// It writes nothing: counting an event returns the ``Notice``s worth telling someone, and the command words and
/// prints them. Thread-safe: the event queue counts, the ticker and the service read.
public final class WatchStatistics: Sendable {
    /// How a feed's turn ended, as the fetch counter and the metrics name it.
    public enum FetchOutcome: String, CaseIterable, Sendable {
        /// Fetched, parsed and stored.
        case ok
        /// The server answered 304 Not Modified.
        case notModified = "not_modified"
        /// The fetch, the parse or the store failed for the feed.
        case failed
        /// The server answered 429 Too Many Requests.
        case rateLimited = "rate_limited"
        /// Not fetched: the network looked down.
        case offline
        /// Not fetched: its next allowed fetch is still ahead.
        case deferred
        /// Not fetched, or aborted, because its run was cancelled.
        case cancelled
        /// Another process holds the feed.
        case claimedElsewhere = "claimed_elsewhere"
        /// Another process took the feed over.
        case leaseLost = "lease_lost"
        /// The store could not be reached: the feed waits and is tried again.
        case storeUnavailable = "store_unavailable"
    }

    /// How an enclosure download ended (with `--download`): done, failed, or paused (stopped offline or by a signal).
    public enum DownloadOutcome: String, CaseIterable, Sendable {
        /// The file is complete and in place.
        case done
        /// The download failed (for now or for good).
        case failed
        /// The download stopped with its partial file kept, to resume.
        case paused
    }

    /// The counters at one instant.
    public struct Counters: Sendable, Hashable {
        /// Fetches by outcome.
        public var fetches: [FetchOutcome: Int] = [:]
        /// Articles committed new.
        public var new = 0
        /// Articles committed updated.
        public var updated = 0
        /// Feed body bytes received.
        public var bytes: Int64 = 0
        /// Failed fetches (HTTP, network, parse or store errors); the store being away is not one.
        public var failures = 0
        /// Articles committed new since the start of ``day``.
        public var today = 0
        /// The start of the local day ``today`` counts.
        public var day: Date
        /// Bad lines in the feed list last read.
        public var listProblems = 0
        /// Downloads ended, by outcome.
        public var downloads: [DownloadOutcome: Int] = [:]
        /// Bytes the downloads added to their files.
        public var downloadBytes: Int64 = 0
        /// Whether remote feeds wait for the network.
        public var offline = false
        /// While the store is unavailable: the feeds whose turn failed for it (not counted as failures); `nil` while
        /// it is reachable.
        public var storeOutage: Int?

        /// Counters at zero, ``today`` counting from the start of `day`.
        public init(day: Date) {
            self.day = day
        }

        /// Every fetch counted, whatever its outcome.
        public var fetchCount: Int { fetches.values.reduce(0, +) }
    }

    /// What counting an event found worth telling.
    public enum Notice: Sendable, Hashable {
        /// A feed failed (HTTP, network, parse, or a store error about the feed itself).
        case feedFailed(FeedEntry, IngestError)
        /// Another process took the feed over: this one's lease ran out.
        case leaseLost(FeedEntry, StoreError)
        /// The store cannot be reached: told once per outage, when it begins.
        case storeUnavailable(StoreError)
        /// The store is reachable again: this many feeds waited for it and are tried again.
        case storeReachable(waited: Int)
    }

    /// Whether the metrics carry the download counters (`--download`).
    public let countsDownloads: Bool
    private let clock: @Sendable () -> Date
    private let counters: Lock<Counters>

    /// Counters at zero; `countsDownloads` adds the download counters to the metrics. `now` is the clock the day's
    /// article count follows.
    public init(countsDownloads: Bool = false, now: @escaping @Sendable () -> Date = { Date() }) {
        self.countsDownloads = countsDownloads
        clock = now
        counters = Lock(Counters(day: Calendar.current.startOfDay(for: now())))
    }

    /// The counters now.
    public var current: Counters { counters.withLock { $0 } }

    /// Counts one event of a run: an article committed, or a feed's outcome. Returns what is worth telling, in order.
    public func count(_ event: IngestEvent) -> [Notice] {
        switch event {
        case .articleIngested(let stored):
            count(stored.change)
            return []
        case .feedFinished(let entry, let result):
            return count(result, of: entry)
        default:
            return []
        }
    }

    /// Counts an article the store committed as `change`.
    func count(_ change: ArticleChange?) {
        let today = Calendar.current.startOfDay(for: clock())
        counters.withLock { counters in
            if today != counters.day {
                counters.day = today
                counters.today = 0
            }
            switch change {
            case .new?:
                counters.new += 1
                counters.today += 1
            case .updated?: counters.updated += 1
            default: break
            }
        }
    }

    /// Counts how a feed's turn ended.
    func count(_ result: FeedResult, of entry: FeedEntry) -> [Notice] {
        var notices: [Notice] = []
        let outcome: FetchOutcome
        var bytes: Int64 = 0
        switch result {
        case .ok(let counts):
            outcome = .ok
            bytes = counts.bytes
        case .notModified: outcome = .notModified
        case .failed(.store(let error), _) where error.isUnavailable:
            // The store, not the feed: one notice per outage, and no failure counted (the feed is tried again).
            outcome = .storeUnavailable
            if let notice = storeUnavailable(error, counting: true) { notices.append(notice) }
        case .failed(let error, let counts):
            outcome = .failed
            bytes = counts.bytes
            notices.append(.feedFailed(entry, error))
        case .rateLimited: outcome = .rateLimited
        case .offline: outcome = .offline
        case .deferred: outcome = .deferred
        case .cancelled: outcome = .cancelled
        case .claimedElsewhere: outcome = .claimedElsewhere
        case .leaseLost(let error):
            outcome = .leaseLost
            notices.append(.leaseLost(entry, error))
        }
        let back = counters.withLock { counters -> Int? in
            counters.fetches[outcome, default: 0] += 1
            counters.bytes += bytes
            if outcome == .failed { counters.failures += 1 }
            // A feed that finished with the store written (or failed for itself) ends an outage.
            guard outcome != .storeUnavailable, outcome != .cancelled, outcome != .offline, let waited = counters.storeOutage
            else { return nil }
            counters.storeOutage = nil
            return waited
        }
        if let back { notices.append(.storeReachable(waited: back)) }
        return notices
    }

    /// Counts one of the service's own events: the network going and coming back, and the store being away while the
    /// schedule is read. Returns the notice the store's outage begins with, if this event begins one.
    public func count(_ event: WatchEvent) -> Notice? {
        switch event {
        case .paused:
            counters.withLock { $0.offline = true }
        case .resumed:
            counters.withLock { $0.offline = false }
        case .storeError(let error) where error.isUnavailable:
            return storeUnavailable(error, counting: false)
        default:
            break
        }
        return nil
    }

    /// Begins or continues an outage of the store (`counting` a feed that waited for it); the notice when it begins.
    private func storeUnavailable(_ error: StoreError, counting: Bool) -> Notice? {
        let first = counters.withLock { counters -> Bool in
            let first = counters.storeOutage == nil
            counters.storeOutage = (counters.storeOutage ?? 0) + (counting ? 1 : 0)
            return first
        }
        return first ? .storeUnavailable(error) : nil
    }

    /// Counts one download that ended with `outcome` after adding `bytes` to its file.
    public func countDownload(_ outcome: DownloadOutcome, bytes: Int64) {
        counters.withLock { counters in
            counters.downloads[outcome, default: 0] += 1
            counters.downloadBytes += bytes
        }
    }

    /// Records how many bad lines the feed list last read has.
    public func setListProblems(_ count: Int) {
        counters.withLock { $0.listProblems = count }
    }
}
