import Foundation
import Scheduling
import Syndication

/// Identifies a feed in one store; a plain value that may cross threads.
public struct FeedID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The feed row's `id`.
    public let rawValue: Int64
    /// Creates an identifier from a row id.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    /// Orders by row id.
    public static func < (lhs: FeedID, rhs: FeedID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `feed#12`.
    public var description: String { "feed#\(rawValue)" }
}

/// Identifies an article in one store; a plain value that may cross threads.
///
/// Identifiers grow with insertion; an article keeps its identifier when it is updated in place.
public struct ArticleID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The article row's `id`.
    public let rawValue: Int64
    /// Creates an identifier from a row id.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    /// Orders by row id (which is insertion order).
    public static func < (lhs: ArticleID, rhs: ArticleID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `article#34`.
    public var description: String { "article#\(rawValue)" }
}

/// How the store opens the file, batches commits and backs off failing feeds. Every field has a default.
public struct StoreConfiguration: Sendable, Hashable {
    /// Reading and writing, or reading only.
    public enum Access: Sendable, Hashable {
        /// Read and write; the store is created and migrated as needed. The default.
        case readWrite
        /// Read only (`SQLITE_OPEN_READONLY`): never creates, migrates or writes. For offline commands.
        case readOnly
    }

    /// Read-write (default) or read-only.
    public var access: Access = .readWrite
    /// Create the file when it does not exist (read-write only). Default `true`.
    public var createIfMissing = true
    /// How long a connection waits for another connection's (or process's) lock before failing with
    /// `SQLITE_BUSY` (`sqlite3_busy_timeout`). Default 5 seconds.
    public var busyTimeout: Duration = .seconds(5)
    /// Articles per transaction: commit a feed's pending articles once this many have been stored. Default 1000: with random guids
    /// (`urn:uuid:…`) each batch rewrites the key-index pages it touches, so small batches of a big feed cost up
    /// to 1.5× more; pending articles take ~2 KB each. ``batchInterval`` bounds the wait for small feeds.
    public var commitBatchSize = 1000
    /// Commit a feed's pending articles once the oldest has waited this long (checked in
    /// ``StoreContext/store(_:in:)`` and ``StoreContext/commitIfDue(now:)``). Default 200 ms.
    public var batchInterval: Duration = .milliseconds(200)
    /// SQLite's page cache per connection, in KiB (`PRAGMA cache_size = -N`). Default 16 MiB.
    public var cacheSizeKiB = 16 * 1024
    /// Checkpoint the write-ahead log into the database once it holds this many pages, on a thread of the store's own
    /// rather than the committing one (see `Checkpointer`); 0 for no checkpoint before the last connection closes.
    /// Default 1000 pages (SQLite's own default; 8 MiB with 8 KiB pages): in the background a short log costs the
    /// contexts nothing, and leaves little to copy and sync when the store closes.
    public var walAutocheckpointPages = 1000
    /// The page size of a new store, in bytes (`PRAGMA page_size`; a power of two from 512 to 65536). Default
    /// 8 KiB: a typical article (1–2 KB) leaves less slack in 8 KiB pages than in SQLite's default 4 KiB, for
    /// a smaller file and ~15% faster inserts. Existing stores keep their page size.
    public var pageSize = 8192
    /// The largest the database may grow, in pages (`PRAGMA max_page_count`); `nil` for no limit (the default).
    /// Past it, writes fail with `SQLITE_FULL` and nothing committed is lost.
    public var maximumPageCount: Int?
    /// The wait after a feed's first consecutive failure when the failure gives no retry time; it doubles with
    /// each further failure. Default 5 minutes.
    public var failureBackoff: Duration = .seconds(300)
    /// The longest wait ``failureBackoff`` grows to. Default 1 day.
    public var maximumFailureBackoff: Duration = .seconds(86_400)
    /// How far each backoff wait is spread at random, as a fraction: 0.1 (the default) waits 90–110% of it, so feeds
    /// that failed together (one host down, the network gone) do not all come back in the same second. 0 for none.
    public var failureBackoffJitter: Double = 0.1
    /// The interval a successful fetch records: the feed is not due again until this long after it was claimed (or
    /// later, when the server asked for that). Several processes started together on one list thus fetch each feed
    /// once among them. Default zero (due again at once); `feedingest FEEDS` records 5 minutes unless `--interval`
    /// says otherwise. See ``fetchPolicy``.
    public var fetchInterval: Duration = .zero
    /// The adaptive schedule (`feedingest watch`): when set, each completion computes the feed's interval and next
    /// fetch with ``FetchScheduler`` from its recent entries' dates and the fetch's hints (success), or its consecutive
    /// failures and `Retry-After` (failure), and records the interval and its reason with the next fetch; this replaces
    /// ``fetchInterval`` and the failure backoff above. `nil` (the default) keeps the fixed rules.
    public var adaptiveSchedule: ScheduleConfiguration?

    /// The policy every completion applies: ``adaptiveSchedule``'s when set, else ``fetchInterval`` with the failure
    /// backoff above.
    public var fetchPolicy: FetchPolicy {
        if let adaptiveSchedule { return .adaptive(adaptiveSchedule) }
        return FetchPolicy(interval: .fixed(fetchInterval.seconds),
                           backoff: .init(base: failureBackoff.seconds, maximum: maximumFailureBackoff.seconds,
                                          jitter: failureBackoffJitter))
    }

    /// The defaults.
    public init() {}
}

/// HTTP validators for a conditional GET, plus a hash of the last body for servers without validators.
public struct FeedValidators: Sendable, Hashable {
    /// The `ETag` response header.
    public var etag: String?
    /// The `Last-Modified` response header.
    public var lastModified: String?
    /// A hash of the last response body (any stable hash the fetcher chooses, as text).
    public var bodyHash: String?

    /// Creates validators.
    public init(etag: String? = nil, lastModified: String? = nil, bodyHash: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.bodyHash = bodyHash
    }

    /// Whether none is known.
    public var isEmpty: Bool { etag == nil && lastModified == nil && bodyHash == nil }
}

/// The result of a feed's last fetch.
public enum FeedOutcome: String, Sendable, Hashable {
    /// Fetched and parsed; articles stored.
    case updated
    /// The server answered 304 Not Modified (or the body hash matched).
    case notModified = "not-modified"
    /// The fetch or the parse failed; see ``FeedStatus/error``.
    case failed
}

/// How a feed's articles are keyed; see ``StoreContext`` for the rule.
public enum ArticleKeyMode: String, Sendable, Hashable {
    /// By identifier (guid, Atom id, …), else link, else hash. The default.
    case identifier
    /// By link, else hash: the feed's identifiers were found not to be unique.
    case link
}

/// What a successful fetch tells the store; written in the feed's final transaction.
public struct FeedSuccess: Sendable, Hashable {
    /// The response's validators. For a fetch with content they replace the old ones (a missing one is cleared);
    /// for ``notModified`` only the ones given replace the old ones.
    public var validators: FeedValidators
    /// Whether the server said the feed has not changed (HTTP 304).
    public var notModified: Bool
    /// The URL after permanent redirects, when it differs from the listed one; `nil` keeps the old value.
    public var currentURL: String?
    /// The feed's title; `nil` keeps the old value.
    public var title: String?
    /// The feed's home page; `nil` keeps the old value.
    public var homeLink: String?
    /// The earliest next fetch the server asked for (`Cache-Control`, `ttl`, …); `nil` for no constraint.
    public var nextFetch: Date?
    /// When the fetch finished.
    public var date: Date
    /// The feed's own refresh period in seconds (RSS `ttl`, `sy:updatePeriod` / `sy:updateFrequency`; the longer),
    /// from `metadata`; `nil` when it gave none (a 304 keeps the stored one). Read by the adaptive schedule.
    public var refreshHint: TimeInterval?
    /// The response's `Cache-Control: max-age`, in seconds. Read by the adaptive schedule.
    public var maxAge: TimeInterval?
    /// The response's `Expires`. Read by the adaptive schedule.
    public var expires: Date?

    /// Creates a success; `metadata` supplies the title and home page.
    public init(validators: FeedValidators = FeedValidators(), notModified: Bool = false, currentURL: String? = nil,
                metadata: FeedMetadata? = nil, nextFetch: Date? = nil, date: Date = Date()) {
        self.validators = validators
        self.notModified = notModified
        self.currentURL = currentURL
        self.title = metadata?.title
        self.homeLink = metadata?.link
        self.nextFetch = nextFetch
        self.date = date
        self.refreshHint = metadata?.refreshInterval
    }
}

/// What decided a feed's interval, as the store records it (``FeedStatus/scheduleReason``).
public typealias ScheduleReason = ScheduledFetch.Reason

/// What a failed fetch tells the store; validators are never touched.
public struct FeedFailure: Sendable, Hashable {
    /// The error, as text for people.
    public var error: String
    /// The error's kind, for scripts to match on (Ingest records `layer.code`: `fetch.http-status`,
    /// `parse.tag-mismatch`, `store.read-only`); `nil` when the caller has none.
    public var kind: String?
    /// The next allowed fetch from `Retry-After`; `nil` to let the store back off exponentially
    /// (``StoreConfiguration/failureBackoff``).
    public var retryAfter: Date?
    /// When the failure happened.
    public var date: Date
    /// Whether the failure counts against the feed: `false` for a server that only asks to come back later
    /// (`429 Too Many Requests`), whose feed is not broken. Such a failure records the error and the next allowed
    /// fetch (``retryAfter``, else ``StoreConfiguration/failureBackoff`` from now) but keeps the consecutive failure
    /// count and the last outcome. Default `true`.
    public var counts: Bool

    /// Creates a failure.
    public init(error: String, kind: String? = nil, retryAfter: Date? = nil, date: Date = Date(), counts: Bool = true) {
        self.error = error
        self.kind = kind
        self.retryAfter = retryAfter
        self.date = date
        self.counts = counts
    }
}

/// Whether a stored article was new, changed or already known.
public enum ArticleChange: String, Sendable, Hashable {
    /// Not stored before under its key.
    case new
    /// Stored before with a different content hash; updated in place, keeping its ``ArticleID``.
    case updated
    /// Stored before with the same content hash; nothing visible changed.
    case unchanged
}

/// One article as committed: its identifier, its feed, what happened, and the value itself.
public struct StoredArticle: Sendable, Hashable {
    /// The article's identifier in the store.
    public var id: ArticleID
    /// The feed it belongs to.
    public var feed: FeedID
    /// New, updated or unchanged.
    public var change: ArticleChange
    /// The article as it was given to ``StoreContext/store(_:in:)``.
    public var article: Article
    /// The time its transaction wrote (its first-seen date when new, its last-updated date when updated): what
    /// `ArticleQuery.changedSince` compares.
    public var committedAt: Date
}

/// Counts for one feed's ingest, plus the articles the call committed.
public struct FeedIngestSummary: Sendable, Hashable {
    /// The feed.
    public var feed: FeedID
    /// Articles given to the store since ``StoreContext/beginFeed(_:)``.
    public var seen: Int
    /// Of those, new ones.
    public var new: Int
    /// Of those, changed ones.
    public var updated: Int
    /// Of those, already known and unchanged ones.
    public var unchanged: Int
    /// The articles this call committed (the feed's last batch).
    public var committed: [StoredArticle]
}

/// A feed's row: its URLs, validators, last outcome, backoff and counts.
public struct FeedStatus: Sendable, Hashable {
    /// The feed's identifier.
    public var id: FeedID
    /// The URL as listed.
    public var url: String
    /// The feed's title, from its last successful fetch.
    public var title: String?
    /// The feed's home page.
    public var homeLink: String?
    /// The URL after permanent redirects, when it differs from ``url``.
    public var currentURL: String?
    /// The validators of the last successful fetch.
    public var validators: FeedValidators
    /// How articles of this feed are keyed.
    public var keyMode: ArticleKeyMode
    /// The last fetch that finished, successfully or not.
    public var lastAttempt: Date?
    /// The last successful fetch (including not modified).
    public var lastSuccess: Date?
    /// The result of the last finished fetch; `nil` before the first.
    public var outcome: FeedOutcome?
    /// The error of the last fetch when it failed.
    public var error: String?
    /// Failures in a row since the last success.
    public var consecutiveFailures: Int
    /// The earliest time the feed may be fetched again; `nil` for any time.
    public var nextFetch: Date?
    /// Articles stored for this feed.
    public var articleCount: Int
    /// Articles in the last successful fetch with content.
    public var lastFetchSeen: Int?
    /// New articles in that fetch.
    public var lastFetchNew: Int?
    /// Updated articles in that fetch.
    public var lastFetchUpdated: Int?
    /// The feed's tags, as the feed list last gave them (words after the URL, or the enclosing OPML outlines).
    public var tags: [String] = []
    /// Whether the last attempt was refused for now (`429 Too Many Requests`; ``FeedFailure/counts`` `false`):
    /// ``error`` and ``nextFetch`` tell why and until when, while ``outcome`` is still the last finished fetch's.
    public var isRateLimited = false
    /// The kind of ``error`` (``FeedFailure/kind``), when the failure recorded one.
    public var errorKind: String?
    /// The host the per-host limits count the feed under (``FeedHost``); `nil` for a local file.
    public var host: String?
    /// Who holds the feed's lease, while one is held (it may have expired: see ``leaseUntil``).
    public var leaseOwner: String?
    /// When the lease expires.
    public var leaseUntil: Date?
    /// How many times the feed was claimed (``FeedLease/epoch``).
    public var leaseEpoch: Int64 = 0
    /// The interval the last completion recorded under the adaptive schedule, in seconds before jitter; `nil` before
    /// one (the fixed rules record none).
    public var interval: TimeInterval?
    /// What decided ``interval``: the publishing gap, no history, a feed hint, `Retry-After` or failure backoff.
    public var scheduleReason: ScheduleReason?
    /// The feed's own refresh period from its last fetch with content (`ttl`, `sy:`), in seconds.
    public var refreshHint: TimeInterval?
    /// The last response's `Cache-Control: max-age`, in seconds.
    public var maxAge: TimeInterval?
    /// The last response's `Expires`.
    public var expires: Date?
    /// Whether the feed is subscribed: fetched by `ingest` without a list, shown by `feeds`, exported. An unsubscribed
    /// feed keeps its articles.
    public var isSubscribed = true
    /// The list file that subscribed the feed (its absolute path), which unsubscribes it when it no longer lists it;
    /// `nil` for a subscription by hand (``SubscriptionSource/byHand``).
    public var listSource: String?

    /// Failures in a row from which a feed counts as failing (``isFailing``): it is then polled at the backoff's
    /// longest interval and never dropped.
    public static let failingAfter = 3

    /// Whether the feed keeps failing: at least ``failingAfter`` failures in a row.
    public var isFailing: Bool { consecutiveFailures >= Self.failingAfter }

    /// The row as an engine read it.
    package init(id: FeedID, url: String, title: String?, homeLink: String?, currentURL: String?, validators: FeedValidators,
                 keyMode: ArticleKeyMode, lastAttempt: Date?, lastSuccess: Date?, outcome: FeedOutcome?, error: String?,
                 consecutiveFailures: Int, nextFetch: Date?, articleCount: Int, lastFetchSeen: Int?, lastFetchNew: Int?,
                 lastFetchUpdated: Int?, tags: [String], isRateLimited: Bool, errorKind: String?, host: String?,
                 leaseOwner: String?, leaseUntil: Date?, leaseEpoch: Int64) {
        self.id = id
        self.url = url
        self.title = title
        self.homeLink = homeLink
        self.currentURL = currentURL
        self.validators = validators
        self.keyMode = keyMode
        self.lastAttempt = lastAttempt
        self.lastSuccess = lastSuccess
        self.outcome = outcome
        self.error = error
        self.consecutiveFailures = consecutiveFailures
        self.nextFetch = nextFetch
        self.articleCount = articleCount
        self.lastFetchSeen = lastFetchSeen
        self.lastFetchNew = lastFetchNew
        self.lastFetchUpdated = lastFetchUpdated
        self.tags = tags
        self.isRateLimited = isRateLimited
        self.errorKind = errorKind
        self.host = host
        self.leaseOwner = leaseOwner
        self.leaseUntil = leaseUntil
        self.leaseEpoch = leaseEpoch
    }
}

/// Which articles to read, newest first.
public struct ArticleQuery: Sendable, Hashable {
    /// Only this feed's articles; `nil` for all feeds.
    public var feed: FeedID?
    /// Only articles dated at or after this (the article's date: published, else updated, else first seen).
    public var since: Date?
    /// Only articles that reached the store at or after this: first seen then, or updated in place then (their
    /// ``ArticleRecord/lastUpdated``). What a reader asks for with "what came in since yesterday", whatever dates
    /// the feed claims; `nil` for any time.
    public var changedSince: Date?
    /// At most this many; `nil` for all.
    public var limit: Int?

    /// Creates a query.
    public init(feed: FeedID? = nil, since: Date? = nil, changedSince: Date? = nil, limit: Int? = nil) {
        self.feed = feed
        self.since = since
        self.changedSince = changedSince
        self.limit = limit
    }
}

/// A stored article read back, with what the store knows about it.
public struct ArticleRecord: Sendable, Hashable {
    /// The article's identifier.
    public var id: ArticleID
    /// Its feed.
    public var feed: FeedID
    /// The article; ``Article/feed`` is the feed's URL as listed.
    public var article: Article
    /// The dedupe key within the feed (see ``StoreContext``).
    public var key: String
    /// Where the key came from: `guid`, `atom:id`, `dc:identifier`, `rdf:about`, `link` or `hash`.
    public var keySource: String
    /// The content hash (see ``ArticleHasher``).
    public var contentHash: UInt64
    /// The date newest-first order uses: published, else updated, else first seen.
    public var date: Date
    /// When the store first saw it.
    public var firstSeen: Date
    /// When its content last changed in the store (first seen for an article never updated).
    public var lastUpdated: Date
}

/// Who subscribes feeds, for ``StoreContext/subscribe(_:from:)``.
public enum SubscriptionSource: Sendable, Hashable {
    /// A list file, by its absolute path: the whole truth about the feeds it subscribed, so a feed it no longer lists
    /// is unsubscribed (its articles kept).
    case list(String)
    /// A list without a lasting identity (standard input): it subscribes what it names and removes nothing.
    case oneOff
    /// By hand (`feedingest subscribe`, the API): only an unsubscribe removes it.
    case byHand
}
