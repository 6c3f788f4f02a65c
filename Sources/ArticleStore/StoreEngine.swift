// What an engine (SQLite, PostgreSQL) provides to the engine-independent store: opening connections, and the
// primitive reads and writes that `StoreContext` composes. The rules (keys, dedupe, batches, fetch state, backoff,
// leases) live in `StoreContext` and `Leases.swift`; an engine only stores and reads.
import Foundation
import Scheduling
import Syndication

/// An engine behind a ``Store``: it checks, creates or migrates the database once (in its initialiser) and opens one
/// connection per context. `Sendable`: it holds configuration, and at most one idle connection (SQLite's preparing one,
/// under a lock, until the first context takes it).
package protocol StoreEngine: Sendable {
    /// The store as messages name it: a path, or a URI without its password.
    var location: String { get }
    /// `sqlite` or `postgresql`.
    var name: String { get }
    /// A new connection for one thread, checked to be this store at this schema version.
    func makeConnection() throws(StoreError) -> any StoreConnection
}

/// An article ready to write: keyed, with its feed's key mode applied.
package struct PendingArticle {
    package var article: Article
    package var key: String
    package var keySource: String
}

/// How a fetch ended, as the final transaction writes it into the feed's row.
package enum FeedCompletion {
    /// Content was fetched and stored: new validators (a missing one cleared), counts, the next fetch.
    case updated(FeedSuccess, seen: Int, new: Int, updated: Int, nextFetch: Date?)
    /// 304: the validators given replace the old ones, the others stay.
    case notModified(FeedSuccess, nextFetch: Date?)
    /// A failure: the error, the failure count to record, the next allowed fetch; a refusal for now (`counts` false)
    /// keeps the outcome and the count.
    case failed(FeedFailure, failures: Int, nextFetch: Date)
}

/// What the adaptive schedule writes beside `next_fetch`.
package struct ScheduleRecord {
    /// The interval before jitter, in seconds.
    package var interval: TimeInterval
    /// What decided it.
    package var reason: ScheduleReason
    /// Whether the hints below are written (a success); a failure leaves the stored hints alone.
    package var writesHints: Bool
    /// The feed's refresh period; `nil` keeps the stored one (a 304 has no body to read it from).
    package var refreshHint: TimeInterval?
    /// Whether a missing ``refreshHint`` clears the stored one (a fetch with content that gave none).
    package var clearsRefreshHint: Bool
    /// `Cache-Control: max-age`, seconds.
    package var maxAge: TimeInterval?
    /// `Expires`.
    package var expires: Date?
}

/// One connection of an engine, used by one thread only (its ``StoreContext``'s). Not `Sendable`.
///
/// Writes happen inside ``begin()`` … ``commit()``; the context rolls back on any error. The article column mapping
/// of each engine lives in one place of its implementation (one column list, one bind routine, one row reader).
package protocol StoreConnection: AnyObject {
    /// The store as messages name it.
    var location: String { get }
    /// Whether a transaction is open.
    var isInTransaction: Bool { get }

    /// Opens a write transaction (SQLite: `BEGIN IMMEDIATE`, which takes the write lock).
    func begin() throws(StoreError)
    /// Whether a write transaction excludes every other writer of the store from ``begin()`` until it ends, so that
    /// what it reads first still holds when it writes (SQLite: the write lock; PostgreSQL: no).
    var excludesOtherWriters: Bool { get }
    /// Commits it.
    func commit() throws(StoreError)
    /// Rolls back the open transaction, if any; errors are ignored (the transaction is gone either way).
    func rollback()

    // Feeds
    /// The rows of `urls`, in order, creating missing ones (with their ``FeedHost``); inside a transaction.
    func ensureFeeds(_ urls: [String], now: Date) throws(StoreError) -> [FeedID]
    /// Sets a feed's tags (joined by ``Schema/tagSeparator``; `nil` for none).
    func setTags(_ feed: FeedID, _ tags: String?) throws(StoreError)
    /// Subscribes `feeds`, recording `source`'s list file (`list`), none (`byHand`), or leaving the recorded one
    /// (`oneOff`); the rows changed.
    func subscribe(_ feeds: [FeedID], source: SubscriptionSource) throws(StoreError) -> Int
    /// Unsubscribes the feeds that the list `listSource` subscribed and that are not among `feeds`; how many.
    func unsubscribe(listSource: String, except feeds: [FeedID]) throws(StoreError) -> Int
    /// Unsubscribes `feeds` (their list source forgotten); how many were subscribed.
    func unsubscribe(_ feeds: [FeedID]) throws(StoreError) -> Int
    /// Deletes `feeds` with their articles; how many feeds.
    func deleteFeeds(_ feeds: [FeedID]) throws(StoreError) -> Int
    /// The feed listed under `url`.
    func feedID(url: String) throws(StoreError) -> FeedID?
    /// The feed's row.
    func feedStatus(_ feed: FeedID) throws(StoreError) -> FeedStatus?
    /// Every feed's row, ordered by URL.
    func feedStatuses() throws(StoreError) -> [FeedStatus]
    /// The rows of `feeds`, in one statement (any order; unknown ones missing).
    func feedStatuses(_ feeds: [FeedID]) throws(StoreError) -> [FeedStatus]
    /// The feed's consecutive failures.
    func consecutiveFailures(_ feed: FeedID) throws(StoreError) -> Int?

    // Writing a feed's results (inside a transaction)
    /// Locks the feed's row for this transaction and checks that `lease` is still the feed's (same epoch and owner);
    /// throws ``StoreError/Kind/leaseLost(_:)`` otherwise.
    func verifyLease(_ lease: FeedLease) throws(StoreError)
    /// Writes one article under its key: inserted when the feed has no article with that key (`new`); otherwise updated
    /// in place keeping its identifier when `row`'s content hash differs (`updated`), else left alone but for a new
    /// comment count (`unchanged`). `row` holds the article encoded by the context, with its key. `knownAbsent` promises
    /// that the feed has no article under the key, so an engine that looks the key up first may insert at once (only
    /// ever given when ``excludesOtherWriters``).
    func write(_ article: Article, row: ArticleRow, feed: FeedID, now: Date, knownAbsent: Bool) throws(StoreError) -> (ArticleID, ArticleChange)
    /// Whether the feed has an article under `key`.
    func hasArticle(feed: FeedID, key: String) throws(StoreError) -> Bool
    /// Deletes the feed's article under `key`; how many rows went.
    func deleteArticle(feed: FeedID, key: String) throws(StoreError) -> Int
    /// Moves the feed's article from one key to another.
    func rekeyArticle(feed: FeedID, from: String, to: String, source: String) throws(StoreError)
    /// Records the feed's key mode.
    func setKeyMode(_ feed: FeedID, _ mode: ArticleKeyMode) throws(StoreError)
    /// Adds to the feed's article count, in the transaction that inserted or deleted those articles. The count must stay
    /// exact: a context inserts without lookups while a feed's count equals the articles its session inserted.
    func addArticleCount(_ feed: FeedID, _ delta: Int64) throws(StoreError)
    /// Writes how the fetch ended into the feed's row, ending `lease` when one is given.
    func complete(_ feed: FeedID, _ completion: FeedCompletion, releasing lease: FeedLease?) throws(StoreError)
    /// The publication (else update) dates of the feed's newest `limit` dated articles, newest first.
    func recentEntryDates(_ feed: FeedID, limit: Int) throws(StoreError) -> [Date]
    /// Records the adaptive schedule's interval and reason, and the fetch's hints (inside the completion's transaction).
    func recordSchedule(_ feed: FeedID, _ record: ScheduleRecord) throws(StoreError)

    // Reading
    /// The articles of `query`, newest first, one at a time.
    func forEachArticle(_ query: ArticleQuery, _ body: (ArticleRecord) -> Void) throws(StoreError)
    /// One article.
    func article(_ id: ArticleID) throws(StoreError) -> ArticleRecord?
    /// Articles of one feed, or of all.
    func articleCount(feed: FeedID?) throws(StoreError) -> Int
    /// The engine's own consistency check; empty when sound.
    func integrityCheck() throws(StoreError) -> [String]

    // Claims (each in a transaction of its own)
    /// Claims due candidates without a live lease, in one statement (see ``StoreContext/claimFeeds(_:)``).
    func claim(_ request: ClaimRequest) throws(StoreError) -> [FeedLease]
    /// Extends the leases `owner` still holds among `feeds`; returns those renewed.
    func renewLeases(owner: String, feeds: [FeedID], duration: Duration) throws(StoreError) -> [FeedLease]
    /// Ends the leases `owner` holds among `feeds` (all of its leases for `nil`) without writing results.
    func releaseLeases(owner: String, feeds: [FeedID]?) throws(StoreError)
    /// Why each of `feeds` is or is not claimable by `owner` now.
    func claimStates(_ feeds: [FeedID], owner: String, due: DuePolicy) throws(StoreError) -> [FeedID: ClaimState]
    /// The owners of the feed leases live at `now` (by the database's clock on PostgreSQL), each once.
    func liveLeaseOwners(now: Date) throws(StoreError) -> [String]

    // The download tracker (SQLite schema 7 and 8, PostgreSQL 4 and 5); each call one statement in autocommit mode.
    /// Inserts a row for `candidate` unless its URL (``DownloadQueueOutcome/known(_:)``) or its path
    /// (``DownloadQueueOutcome/pathTaken``) is in the tracker.
    func insertDownload(_ candidate: DownloadCandidate, now: Date) throws(StoreError) -> DownloadQueueOutcome
    /// Whether a row uses `path`.
    func downloadPathTaken(_ path: String) throws(StoreError) -> Bool
    /// Claims the next open row (see ``StoreContext/claimDownload(owner:duration:)``).
    func claimDownload(owner: String, duration: Duration, now: Date) throws(StoreError) -> DownloadRecord?
    /// Writes progress and extends the lease, when `lease`'s epoch and owner are still the row's.
    func updateDownload(_ lease: DownloadRecord, _ progress: DownloadProgress, duration: Duration, now: Date) throws(StoreError) -> Bool
    /// Writes an attempt's end and ends the lease, when `lease`'s epoch and owner are still the row's.
    func finishDownload(_ lease: DownloadRecord, state: DownloadState, progress: DownloadProgress, error: String?, errorKind: String?,
                        httpStatus: Int?, permanentFailure: Bool, now: Date) throws(StoreError) -> Bool
    /// Makes the permanently failed rows `queued` again (see ``StoreContext/requeueFailedDownloads()``); returns how many.
    func requeueFailedDownloads(now: Date) throws(StoreError) -> Int
    /// Marks done rows removed.
    func markDownloadsRemoved(_ ids: [DownloadID], now: Date) throws(StoreError)
    /// Every row, by identifier.
    func downloads() throws(StoreError) -> [DownloadRecord]
}

/// An article row's values as an engine read them, in the engine-independent shape; ``record(location:)`` makes the
/// ``ArticleRecord`` (decoding the JSON list columns), so every engine reads articles back the same way.
package struct ArticleRecordValues {
    package var id: Int64 = 0
    package var feedID: Int64 = 0
    package var feedURL: String?
    package var key: String?
    package var keySource: String?
    package var identifier: String?
    package var idSource: String?
    package var title: String?
    package var link: String?
    package var published: Double?
    package var publishedRaw: String?
    package var updated: Double?
    package var updatedRaw: String?
    package var authors: String?
    package var summary: String?
    package var summaryType: String?
    package var content: String?
    package var contentType: String?
    package var categories: String?
    package var enclosures: String?
    package var image: String?
    package var comments: String?
    package var commentsFeed: String?
    package var commentCount: Int64?
    package var language: String?
    package var podcast: String?
    /// The `details` column: milestone 2's article fields as one JSON object (see `ArticleRow`).
    package var details: String?
    package var contentHash: Int64 = 0
    package var sortDate: Double?
    package var firstSeen: Double?
    package var lastUpdated: Double?

    package init() {}

    /// The record; a list column that does not decode is ``StoreError/Kind/invalidStoredValue``.
    package func record(location: String) throws(StoreError) -> ArticleRecord {
        let source = Article.IDSource(rawValue: idSource ?? "") ?? .hash
        var article = Article(id: identifier ?? "", idSource: source, feed: feedURL ?? "")
        article.title = title
        article.link = link
        article.published = published.map(Date.init(timeIntervalSince1970:))
        article.publishedRaw = publishedRaw
        article.updated = updated.map(Date.init(timeIntervalSince1970:))
        article.updatedRaw = updatedRaw
        article.summary = Self.textContent(summary, type: summaryType)
        article.content = Self.textContent(content, type: contentType)
        article.image = image
        article.comments = comments
        article.commentsFeed = commentsFeed
        article.commentCount = commentCount.map(Int.init)
        article.language = language
        do {
            article.authors = try ListColumns.decodeAuthors(authors)
            article.categories = try ListColumns.decodeStrings(categories)
            article.enclosures = try ListColumns.decodeEnclosures(enclosures)
            article.podcast = try ListColumns.decodePodcast(podcast)
            try ListColumns.decodeDetails(details, into: &article)
        } catch {
            throw StoreError(kind: .invalidStoredValue, message: "article \(id) has an unreadable list column: \(error)",
                             path: location, operation: "read an article")
        }
        return ArticleRecord(
            id: ArticleID(rawValue: id), feed: FeedID(rawValue: feedID), article: article,
            key: key ?? "", keySource: keySource ?? "", contentHash: UInt64(bitPattern: contentHash),
            date: Date(timeIntervalSince1970: sortDate ?? 0), firstSeen: Date(timeIntervalSince1970: firstSeen ?? 0),
            lastUpdated: Date(timeIntervalSince1970: lastUpdated ?? 0))
    }

    private static func textContent(_ value: String?, type: String?) -> TextContent? {
        guard let value else { return nil }
        return TextContent(value, type: TextContent.Kind(rawValue: type ?? "") ?? .text)
    }
}

extension Schema {
    /// Between two stored tags: the ASCII unit separator, which no tag contains (every engine stores tags this way).
    package static let tagSeparator: Character = "\u{1F}"
}
