import Foundation
import Scheduling
import Support
import Syndication

/// One connection to the store (SQLite or PostgreSQL) and its prepared statements, for one thread: ingests feeds and
/// reads the store.
///
/// Make one per worker thread with ``Store/makeContext()``. A context is not `Sendable`: only ``FeedID`` and
/// ``ArticleID`` values (and `Article` values) cross threads, never a context or a live row.
///
/// ## Ingesting a feed
///
///     let feed = try context.feed(url: "https://example.com/feed.xml")
///     let status = try context.beginFeed(feed)          // status.validators → conditional GET
///     for article in parsedArticles {                   // as the parser emits them
///         for stored in try context.store(article, in: feed) { emit(stored) }   // committed batches
///     }
///     let summary = try context.finishFeed(feed, FeedSuccess(validators: …, metadata: …))
///     // or, when the fetch or parse failed: try context.failFeed(feed, FeedFailure(error: "…"))
///
/// Articles are held in memory and written in **batches**, one transaction each (SQLite: `BEGIN IMMEDIATE`): when a feed
/// has ``StoreConfiguration/commitBatchSize`` pending articles, or its oldest pending article has waited
/// ``StoreConfiguration/batchInterval`` (checked on every ``store(_:in:)``; call ``commitIfDue(now:)`` from an
/// idle loop so a stalled download does not hold articles back). No lock is held between batches, so other
/// contexts and processes write in between. Every call that commits returns the committed articles with their
/// ``ArticleID`` and ``ArticleChange`` — report articles from there, when they are durable.
///
/// The feed's validators and status are written only in the **final transaction** (``finishFeed(_:_:)``),
/// together with its last articles. A run killed before that leaves the old validators, so the next run
/// fetches the feed again in full, and dedupe makes that refetch add nothing twice. ``failFeed(_:_:)`` commits
/// the articles parsed before the error and records the failure without touching the validators.
///
/// ## Dedupe
///
/// Articles are deduplicated **per feed** on a key:
/// 1. the article's identifier — RSS `guid`, Atom `id`, `dc:identifier` or `rdf:about` — when it is not empty
///    (surrounding white space is ignored);
/// 2. else its link;
/// 3. else a hash of its title, publication date and content (``ArticleHasher/fallbackKey(of:)``).
///
/// **Feeds whose identifiers are not unique fall back to the link** (the lesson Miniflux and FreshRSS learned
/// from feeds that put one constant, or nothing, in every `guid`). Empty identifiers are never used (rule 1).
/// When the first two articles of a fetch that carry an identifier have the *same* identifier but are different
/// articles (different links; without links, different fallback hashes), the feed is switched to link keys:
/// from then on its articles are keyed by link, else by hash. The switch is stored with the feed
/// (``FeedStatus/keyMode``), so later runs key the same way, and the first article, already stored under the
/// identifier, is re-keyed by its link in the same transaction (keeping its ``ArticleID``).
///
/// An article already stored under its key with the same content hash (``ArticleHasher``) is ``ArticleChange/unchanged``
/// (a new comment count is written silently); with a different hash it is updated in place and reported
/// ``ArticleChange/updated``, keeping its ``ArticleID`` and first-seen date; otherwise it is ``ArticleChange/new``.
/// No feed ever has two articles with one key, whatever the number of writers: SQLite serialises write transactions
/// across connections and processes, and every insert follows its lookup in the same `BEGIN IMMEDIATE` transaction;
/// PostgreSQL upserts with `INSERT … ON CONFLICT` on a unique index of the key. One exception skips the lookup and
/// keeps the rule: a feed that began empty on SQLite, while its stored articles are exactly the ones its session
/// inserted, cannot hold a key none of them had. Each batch checks that under the write lock: the feed's row must
/// count as many articles as the session inserted and keep the key mode it began with (`article_count` changes in the
/// same transactions that insert or delete articles, and nothing else deletes them; a re-key always comes with the
/// switch to link keys), and the first batch counts the feed's rows themselves. A repeated key, by its 64-bit hash, is
/// still looked up.
///
/// ## Claims
///
/// With several processes on one store, a feed is fetched by the process that claimed it
/// (``claimFeeds(_:)``; a ``FeedLease``), and a feed begun with its lease (``beginFeed(_:lease:)``) is written only
/// while the lease's epoch is still the feed's: every batch and the final transaction check it with the feed's row
/// locked, and a writer whose lease was taken over gets ``StoreError/Kind/leaseLost(_:)`` and writes nothing more.
///
/// ## Several writers
///
/// Contexts in one process, and processes on one store, all write. With SQLite each batch takes the write lock with
/// `BEGIN IMMEDIATE` and waits up to ``StoreConfiguration/busyTimeout`` for it, so concurrent writers take
/// turns batch by batch and all finish; a writer that waits longer fails with `SQLITE_BUSY`, its batch stays
/// pending, and a later call retries it. Readers never wait (WAL, or PostgreSQL's MVCC).
public final class StoreContext {
    /// The store: the SQLite file's path, or the PostgreSQL URI without its password.
    public var path: String { connection.location }
    /// The configuration of the store that made this context.
    public let configuration: StoreConfiguration

    private let connection: any StoreConnection
    private var sessions: [FeedID: Session] = [:]
    /// The identifier, change and key hash of each article the current transaction wrote, in order (see `write`);
    /// emptied by `transaction` and reused, so a batch allocates nothing for them.
    private var written: [(id: ArticleID, change: ArticleChange, keyHash: Int64)] = []
    /// The key hashes the batch being written has inserted so far, while its inserts go unchecked; reused.
    private var batchKeyHashes: Set<Int64> = []

    /// The articles a session stores as new while inserting without lookups (its feed holding only them) before it
    /// goes back to looking each key up, so that its set of their key hashes stays within a few MiB (a batch may
    /// overshoot it).
    package var uncheckedInsertLimit = 100_000
    /// Articles written without a lookup of their key so far, committed or not (for tests).
    package private(set) var insertsWithoutLookup = 0
    /// The article being written, encoded once: hashed and bound from one buffer.
    private let row = ArticleRow()
    private let clock = ContinuousClock()

    /// The connection, for the download tracker's calls (`DownloadTracker.swift`).
    var trackerConnection: any StoreConnection { connection }

    init(connection: any StoreConnection, configuration: StoreConfiguration) {
        self.connection = connection
        self.configuration = configuration
    }

    // MARK: Feeds

    /// The feed listed under `url`, created when the store does not have it yet.
    public func feed(url: String) throws(StoreError) -> FeedID {
        try feeds(urls: [url])[0]
    }

    /// The feeds listed under `urls`, in order, creating the missing ones in one transaction.
    public func feeds(urls: [String]) throws(StoreError) -> [FeedID] {
        let now = Date()
        return try transaction { () throws(StoreError) -> [FeedID] in try connection.ensureFeeds(urls, now: now) }
    }

    /// Records feeds' tags, in one transaction. Empty tags leave a feed's stored tags as they are: a list that
    /// names a feed without tags (a one-off `echo URL | feedingest -`) does not take its folders away; unless
    /// `clearsEmpty` (a list that is the whole truth, as `watch`'s is), which clears them.
    public func setTags(_ tags: [(feed: FeedID, tags: [String])], clearsEmpty: Bool = false) throws(StoreError) {
        let changes = clearsEmpty ? tags : tags.filter { !$0.tags.isEmpty }
        guard !changes.isEmpty else { return }
        try transaction { () throws(StoreError) in
            for (feed, tags) in changes {
                let clean = tags.map { String($0.filter { $0 != Schema.tagSeparator }) }.filter { !$0.isEmpty }
                try connection.setTags(feed, clean.isEmpty ? nil : clean.joined(separator: String(Schema.tagSeparator)))
            }
        }
    }

    /// Subscribes the feeds of `urls` (creating the missing ones) on behalf of `source`, in one transaction, and returns
    /// their identifiers in order with how many feeds the source no longer names and so were unsubscribed: a list file
    /// (``SubscriptionSource/list(_:)``) is the whole truth about the feeds it subscribed.
    public func subscribe(urls: [String], from source: SubscriptionSource) throws(StoreError) -> (feeds: [FeedID], removed: Int) {
        let now = Date()
        return try transaction { () throws(StoreError) -> ([FeedID], Int) in
            let ids = try connection.ensureFeeds(urls, now: now)
            _ = try connection.subscribe(ids, source: source)
            guard case .list(let path) = source else { return (ids, 0) }
            return (ids, try connection.unsubscribe(listSource: path, except: ids))
        }
    }

    /// Unsubscribes `feeds`: no longer fetched without a list, shown or exported, their articles kept (or, with
    /// `purge`, deleted with the feeds). Returns how many of them were subscribed (with `purge`: deleted).
    public func unsubscribe(_ feeds: [FeedID], purge: Bool = false) throws(StoreError) -> Int {
        guard !feeds.isEmpty else { return 0 }
        return try transaction { () throws(StoreError) -> Int in
            purge ? try connection.deleteFeeds(feeds) : try connection.unsubscribe(feeds)
        }
    }

    /// The subscribed feeds, ordered by URL.
    public func subscribedFeeds() throws(StoreError) -> [FeedStatus] {
        try connection.feedStatuses().filter(\.isSubscribed)
    }

    /// The feed listed under `url`, or `nil` when the store does not have it.
    public func existingFeed(url: String) throws(StoreError) -> FeedID? {
        try connection.feedID(url: url)
    }

    /// The feed's row.
    public func feedStatus(_ feed: FeedID) throws(StoreError) -> FeedStatus {
        guard let status = try connection.feedStatus(feed) else { throw unknownFeed(feed) }
        return status
    }

    /// The rows of `feeds`, in their order, read in one statement (a run's plan reads thousands at once).
    ///
    /// - Throws: ``StoreError/Kind/unknownFeed(_:)`` for a feed the store does not have.
    public func feedStatuses(_ feeds: [FeedID]) throws(StoreError) -> [FeedStatus] {
        guard !feeds.isEmpty else { return [] }
        var byID: [FeedID: FeedStatus] = [:]
        for status in try connection.feedStatuses(feeds) { byID[status.id] = status }
        return try feeds.map { feed throws(StoreError) -> FeedStatus in
            guard let status = byID[feed] else { throw unknownFeed(feed) }
            return status
        }
    }

    /// Every feed's row, ordered by URL: the status list of the offline commands.
    public func feedStatuses() throws(StoreError) -> [FeedStatus] {
        try connection.feedStatuses()
    }

    // MARK: Claims

    /// Claims due feeds among `request.candidates` for `request.owner`, in one statement, and returns their leases.
    ///
    /// A candidate is claimed when it is due under ``ClaimRequest/due`` (see ``DuePolicy``), has no live lease (none, or an expired one: its holder died or stalled), is
    /// not locked by another transaction at that instant (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite's write lock
    /// serialises claims), and its host has fewer than ``ClaimRequest/perHostLimit`` live leases, every process's
    /// counted. Earliest due first, at most ``ClaimRequest/limit``. Each claimed feed gets `owner`, an expiry
    /// ``ClaimRequest/duration`` ahead by the database's clock, and its epoch incremented.
    public func claimFeeds(_ request: ClaimRequest) throws(StoreError) -> [FeedLease] {
        guard !request.candidates.isEmpty, request.limit > 0 else { return [] }
        return try connection.claim(request)
    }

    /// Extends the leases `owner` still holds among `feeds` by `duration` from now; returns the renewed ones. A feed
    /// missing from the result was taken over (or released): its holder must stop writing it.
    public func renewLeases(owner: String, feeds: [FeedID], duration: Duration) throws(StoreError) -> [FeedLease] {
        guard !feeds.isEmpty else { return [] }
        return try connection.renewLeases(owner: owner, feeds: feeds, duration: duration)
    }

    /// Ends the leases `owner` holds among `feeds`, or all of its leases for `nil`, writing no result: the feeds are
    /// at once claimable again (a cancelled run, feeds claimed and not fetched).
    public func releaseLeases(owner: String, feeds: [FeedID]? = nil) throws(StoreError) {
        if let feeds, feeds.isEmpty { return }
        try connection.releaseLeases(owner: owner, feeds: feeds)
    }

    /// Why each of `feeds` can or cannot be claimed by `owner` now under the policy `due` (after a claim returned fewer
    /// than asked).
    public func claimStates(_ feeds: [FeedID], owner: String, due: DuePolicy = .scheduled) throws(StoreError) -> [FeedID: ClaimState] {
        guard !feeds.isEmpty else { return [:] }
        return try connection.claimStates(feeds, owner: owner, due: due)
    }

    /// Ends the live feed leases whose holder was a process of this machine that no longer runs
    /// (``LeaseOwner/isDefunct(_:)``: killed with SIGKILL, crashed), so its feeds can be claimed at once instead of when
    /// the leases run out; returns the owners whose leases ended. What the dead process committed stays, and the epoch
    /// it held can write nothing more. Other machines' leases are left to expire.
    @discardableResult
    public func releaseLeasesOfDefunctOwners() throws(StoreError) -> [String] {
        let defunct = try connection.liveLeaseOwners(now: Date()).filter(LeaseOwner.isDefunct)
        for owner in defunct { try connection.releaseLeases(owner: owner, feeds: nil) }
        return defunct
    }

    // MARK: Ingesting

    /// Starts ingesting a feed in this context and returns its row (whose validators make the conditional GET).
    ///
    /// With a `lease` (from ``claimFeeds(_:)``), every transaction that writes the feed's results first checks that the
    /// lease is still the feed's, and ``finishFeed(_:_:)`` and ``failFeed(_:_:)`` end it; without one, nothing is
    /// checked (a store with one writer).
    ///
    /// - Throws: ``StoreError/Kind/unknownFeed(_:)``, or ``StoreError/Kind/feedAlreadyStarted(_:)`` when this
    ///   context is already ingesting it.
    @discardableResult
    public func beginFeed(_ feed: FeedID, lease: FeedLease? = nil) throws(StoreError) -> FeedStatus {
        guard sessions[feed] == nil else {
            throw StoreError(kind: .feedAlreadyStarted(feed), message: "\(feed) is already being ingested in this context",
                             path: path, operation: "begin feed")
        }
        let status = try feedStatus(feed)
        sessions[feed] = Session(keyMode: status.keyMode, url: status.url, lease: lease, started: Date())
        sessions[feed]?.refreshHint = status.refreshHint
        sessions[feed]?.insertsUnchecked = connection.excludesOtherWriters && status.articleCount == 0
        return status
    }

    /// Adds an article of a started feed; returns the articles committed by this call (usually none).
    ///
    /// The article is committed with its feed's batch (see the batching rules above); the returned values
    /// tell, for each committed article, its ``ArticleID`` and whether it was new, updated or unchanged.
    ///
    /// - Throws: ``StoreError/Kind/feedNotStarted(_:)``, or the store error of a failed batch (whose articles
    ///   stay pending and are retried by the next commit; a ``StoreError/Kind/leaseLost(_:)`` is final).
    public func store(_ article: consuming Article, in feed: FeedID) throws(StoreError) -> [StoredArticle] {
        // Through the dictionary's index: a `sessions[feed]` check copied the whole session (its arrays and strings
        // retained and released) for every article.
        guard let index = sessions.index(forKey: feed) else { throw notStarted(feed, "store an article") }
        let now = clock.now
        let due = enqueue(consume article, session: &sessions.values[index], now: now)
        guard due else { return [] }
        return try commitSessions([feed])
    }

    /// Commits the batches that are due (full or older than ``StoreConfiguration/batchInterval``).
    ///
    /// Call it when the thread is otherwise idle (for example each turn of the transfer loop), so the articles of
    /// a slow download become durable and visible within the interval.
    public func commitIfDue(now: ContinuousClock.Instant = ContinuousClock.now) throws(StoreError) -> [StoredArticle] {
        let due = sessions.compactMap { feed, session in session.isDue(now: now, configuration: configuration) ? feed : nil }
        return due.isEmpty ? [] : try commitSessions(due.sorted())
    }

    /// Commits every pending article now, in one transaction.
    public func commit() throws(StoreError) -> [StoredArticle] {
        let pending = sessions.compactMap { feed, session in session.hasWork ? feed : nil }
        return pending.isEmpty ? [] : try commitSessions(pending.sorted())
    }

    /// Ends a successful fetch: commits the feed's last articles and its new validators and status in one
    /// transaction, and returns the feed's counts with the articles this call committed.
    ///
    /// For a 304 (``FeedSuccess/notModified``) no article is expected; the validators given replace the old ones
    /// and the others are kept. The next allowed fetch is the store's ``StoreConfiguration/fetchPolicy``
    /// (``StoreConfiguration/fetchInterval`` after the claim, or the server's later ``FeedSuccess/nextFetch``; the adaptive
    /// schedule's interval in `watch`). A leased feed's lease ends.
    public func finishFeed(_ feed: FeedID, _ success: FeedSuccess) throws(StoreError) -> FeedIngestSummary {
        guard let index = sessions.index(forKey: feed) else { throw notStarted(feed, "finish a feed") }
        let url = sessions.values[index].url
        let lease = sessions.values[index].lease
        let refreshHint = sessions.values[index].refreshHint
        let policy = configuration.fetchPolicy
        let counts = try transaction { () throws(StoreError) -> WrittenCounts in
            let counts = try write(feed, &sessions.values[index])
            var history = FeedHistory()
            if case .adaptive(let adaptive) = policy.interval {
                // After the articles are written, so this fetch's entries count in the publishing gap.
                let dates = try connection.recentEntryDates(feed, limit: max(adaptive.consideredEntries, 1))
                history = FeedHistory(entryDates: dates, updatePeriod: success.refreshHint ?? refreshHint,
                                      maxAge: success.maxAge, expires: success.expires)
            }
            let scheduled = policy.afterSuccess(history, serverNextFetch: success.nextFetch, isLocal: FeedHost.key(of: url) == nil,
                                                claimedAt: lease?.claimedAt ?? success.date, now: success.date,
                                                random: Double.random(in: 0..<1))
            let next = scheduled?.next
            if case .adaptive = policy.interval, let scheduled {
                try connection.recordSchedule(feed, ScheduleRecord(
                    interval: scheduled.interval, reason: scheduled.reason, writesHints: true, refreshHint: success.refreshHint,
                    clearsRefreshHint: !success.notModified, maxAge: success.maxAge, expires: success.expires))
            }
            let completion: FeedCompletion = success.notModified
                ? .notModified(success, nextFetch: next)
                : .updated(success, seen: counts.seen, new: counts.new, updated: counts.updated, nextFetch: next)
            try connection.complete(feed, completion, releasing: lease)
            return counts
        }
        return finished(feed, counts)
    }

    /// Ends a failed fetch: commits the articles parsed before the failure and records the error, one more
    /// consecutive failure and the next allowed fetch (the failure's retry time, else exponential backoff),
    /// leaving the validators and the last success untouched. A failure that does not count
    /// (``FeedFailure/counts``, a 429) records only the error and the next allowed fetch. A leased feed's lease ends.
    public func failFeed(_ feed: FeedID, _ failure: FeedFailure) throws(StoreError) -> FeedIngestSummary {
        guard let index = sessions.index(forKey: feed) else { throw notStarted(feed, "record a failed feed") }
        let lease = sessions.values[index].lease
        let counts = try transaction { () throws(StoreError) -> WrittenCounts in
            let counts = try write(feed, &sessions.values[index])
            // A refusal for now (429) waits the base backoff, without counting as a failure.
            let failures: Int
            if failure.counts {
                guard let count = try connection.consecutiveFailures(feed) else { throw unknownFeed(feed) }
                failures = count + 1
            } else {
                failures = 1
            }
            let policy = configuration.fetchPolicy
            let scheduled = policy.afterFailure(failures: failures, retryAfter: failure.retryAfter, now: failure.date,
                                                random: Double.random(in: 0..<1))
            if case .adaptive = policy.interval {
                try connection.recordSchedule(feed, ScheduleRecord(
                    interval: scheduled.interval, reason: scheduled.reason, writesHints: false, refreshHint: nil,
                    clearsRefreshHint: false, maxAge: nil, expires: nil))
            }
            try connection.complete(feed, .failed(failure, failures: failures, nextFetch: scheduled.next), releasing: lease)
            return counts
        }
        return finished(feed, counts)
    }

    /// Ends a feed's session after its final transaction committed: its last articles are moved into the summary.
    private func finished(_ feed: FeedID, _ counts: WrittenCounts) -> FeedIngestSummary {
        var final = sessions.removeValue(forKey: feed)!
        var committed: [StoredArticle] = []
        var counts = counts
        counts.insertsUnchecked = false  // the session ends: no set of key hashes to keep
        apply(counts, to: &final, feed: feed, results: &committed)
        return FeedIngestSummary(feed: feed, seen: final.seen, new: final.new, updated: final.updated,
                                 unchanged: final.unchanged, committed: committed)
    }

    /// Forgets a started feed and its pending (uncommitted) articles, writing nothing; for cancellation. Its lease, if
    /// any, stays until it expires or is released (``releaseLeases(owner:feeds:)``).
    public func discardFeed(_ feed: FeedID) {
        sessions.removeValue(forKey: feed)
    }

    /// The feeds this context is ingesting (started and neither finished, failed nor discarded).
    public var activeFeeds: [FeedID] { sessions.keys.sorted() }

    // MARK: Reading

    /// Articles, newest first (by published, else updated, else first-seen date; ties by insertion, newest first).
    public func articles(_ query: ArticleQuery = ArticleQuery()) throws(StoreError) -> [ArticleRecord] {
        var records: [ArticleRecord] = []
        try forEachArticle(query) { records.append($0) }
        return records
    }

    /// Reads the articles of `query` one at a time, in the order of ``articles(_:)``, without holding them all.
    ///
    /// The filters and the limit run in SQL; `body` sees each row as it is read, so memory stays flat however
    /// large the store. `body` must not read articles from this context (the statement is in use until the end).
    public func forEachArticle(_ query: ArticleQuery, _ body: (ArticleRecord) -> Void) throws(StoreError) {
        try connection.forEachArticle(query, body)
    }

    /// One article by identifier, or `nil` when there is none.
    public func article(_ id: ArticleID) throws(StoreError) -> ArticleRecord? {
        try connection.article(id)
    }

    /// The number of stored articles of one feed, or of all feeds for `nil`.
    public func articleCount(feed: FeedID? = nil) throws(StoreError) -> Int {
        try connection.articleCount(feed: feed)
    }

    /// Checks the database's consistency (SQLite's `PRAGMA integrity_check`; on PostgreSQL, that every article's feed
    /// exists and each feed's article count matches) and returns the problems found; empty when sound.
    public func integrityCheck() throws(StoreError) -> [String] {
        try connection.integrityCheck()
    }

    // MARK: Sessions

    /// The first article of a fetch that carried an identifier, kept to detect non-unique identifiers.
    private struct FirstIdentified {
        var identifier: String
        var link: String?
        var fallbackKey: String
        /// Its index in `pending` until it is committed.
        var pendingIndex: Int?
    }

    /// One feed being ingested in this context.
    private struct Session {
        var keyMode: ArticleKeyMode
        /// The feed's URL as listed (the fetch schedule exempts local files).
        let url: String
        /// The lease the feed was begun with; its writes are checked against it.
        let lease: FeedLease?
        /// When the feed was begun.
        let started: Date
        /// The feed's stored refresh period, for a 304 (which has no body to read one from).
        var refreshHint: TimeInterval?
        /// The switch to link keys, to be written with the next batch.
        var keyModeChanged = false
        /// Committed rows to re-key with the next batch: (identifier key, link key, its source).
        var rekeys: [(from: String, to: String, source: String)] = []
        var firstIdentified: FirstIdentified?
        var identifiersChecked = false
        var pending: [PendingArticle] = []
        var oldestPending: ContinuousClock.Instant?
        /// Whether the feed's stored articles are exactly the ones this session inserted, so that an article whose key
        /// hash none of them has is inserted without looking its key up (`write`). On when the feed begins empty on an
        /// engine whose write transactions exclude other writers; checked again at the start of each batch that has
        /// articles, and off for good once the check fails, the key mode changes, the session re-keys, or
        /// ``StoreContext/uncheckedInsertLimit`` are stored.
        var insertsUnchecked = false
        /// The key hashes of the articles this session inserted, while ``insertsUnchecked``.
        var insertedKeyHashes: Set<Int64> = []
        var seen = 0
        var new = 0
        var updated = 0
        var unchanged = 0

        init(keyMode: ArticleKeyMode, url: String, lease: FeedLease?, started: Date) {
            self.keyMode = keyMode
            self.url = url
            self.lease = lease
            self.started = started
            identifiersChecked = keyMode == .link
        }

        var hasWork: Bool { !pending.isEmpty || keyModeChanged || !rekeys.isEmpty }

        func isDue(now: ContinuousClock.Instant, configuration: StoreConfiguration) -> Bool {
            guard let oldestPending else { return hasWork }
            return pending.count >= configuration.commitBatchSize || now - oldestPending >= configuration.batchInterval
        }
    }

    /// Keys, hashes and queues an article (moved into the batch, not copied); returns whether its batch is due.
    private func enqueue(_ article: consuming Article, session: inout Session, now: ContinuousClock.Instant) -> Bool {
        let identifier = Self.usableIdentifier(of: article)
        let link = Self.trimmedNonEmpty(article.link)
        if let identifier, !session.identifiersChecked {
            if let first = session.firstIdentified {
                session.identifiersChecked = true
                if first.identifier == identifier {
                    let different: Bool
                    switch (first.link, link) {
                    case let (a?, b?): different = a != b
                    case (nil, nil): different = first.fallbackKey != row.fallbackKey(of: article)
                    default: different = true
                    }
                    if different { switchToLinkKeys(&session) }
                }
            } else {
                session.firstIdentified = FirstIdentified(identifier: identifier, link: link,
                                                          fallbackKey: row.fallbackKey(of: article),
                                                          pendingIndex: session.pending.count)
            }
        }
        let key: String
        let source: String
        if session.keyMode == .identifier, let identifier {
            key = identifier
            source = article.idSource.rawValue
        } else if let link {
            key = link
            source = "link"
        } else {
            key = row.fallbackKey(of: article)
            source = "hash"
        }
        session.pending.append(PendingArticle(article: consume article, key: key, keySource: source))
        if session.oldestPending == nil { session.oldestPending = now }
        return session.isDue(now: now, configuration: configuration)
    }

    private func switchToLinkKeys(_ session: inout Session) {
        session.keyMode = .link
        session.keyModeChanged = true
        guard let first = session.firstIdentified else { return }
        let key = first.link ?? first.fallbackKey
        let source = first.link == nil ? "hash" : "link"
        if let index = first.pendingIndex {
            session.pending[index].key = key
            session.pending[index].keySource = source
        } else {
            session.rekeys.append((from: first.identifier, to: key, source: source))
        }
    }

    private static func usableIdentifier(of article: Article) -> String? {
        switch article.idSource {
        case .guid, .atomID, .dcIdentifier, .rdfAbout: return trimmedNonEmpty(article.id)
        case .link, .hash: return nil
        }
    }

    private static func trimmedNonEmpty(_ text: String?) -> String? {
        guard let text, let first = text.utf8.first, let last = text.utf8.last else { return nil }
        // Most values have no surrounding white space: an ASCII letter, digit or punctuation at both ends settles
        // it without a Unicode lookup (bytes 0x21–0x7E are never white space).
        if (0x21...0x7E).contains(first) && (0x21...0x7E).contains(last) { return text }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    // MARK: Writing

    /// Commits the given feeds' pending work in one transaction and returns the committed articles.
    private func commitSessions(_ feeds: [FeedID]) throws(StoreError) -> [StoredArticle] {
        let counts = try transaction { () throws(StoreError) -> [(FeedID, WrittenCounts)] in
            var counts: [(FeedID, WrittenCounts)] = []
            for feed in feeds {
                guard let index = sessions.index(forKey: feed) else { continue }
                counts.append((feed, try write(feed, &sessions.values[index])))
            }
            return counts
        }
        // Only now, with the transaction committed, do the sessions move on (and their articles move out).
        var results: [StoredArticle] = []
        results.reserveCapacity(written.count)
        for (feed, feedCounts) in counts {
            guard let index = sessions.index(forKey: feed) else { continue }
            apply(feedCounts, to: &sessions.values[index], feed: feed, results: &results)
        }
        return results
    }

    /// What writing a session's pending articles did; ``apply(_:to:feed:results:)`` adds it to the session once the
    /// transaction has committed.
    private struct WrittenCounts {
        /// Where the session's articles start in ``written``.
        var firstWritten = 0
        /// Whether the batch's check passed (its new keys may go in without lookups): the session's
        /// ``Session/insertsUnchecked`` from the commit on.
        var insertsUnchecked = false
        var seen = 0
        var new = 0
        var updated = 0
        var unchanged = 0
        /// The time the articles were written with.
        var date = Date.distantPast
    }

    /// Writes a session's pending work (key switch, re-keys, articles) and returns the counts with the session's own
    /// added, leaving the session as it was (each article is only lent out of it and put back, even when a write
    /// throws): should the transaction fail, its articles stay pending. Each article's
    /// identifier, change and key hash are appended to ``written``, in order. A leased feed's lease is checked first,
    /// with the feed's row locked until the transaction ends.
    private func write(_ feed: FeedID, _ session: inout Session) throws(StoreError) -> WrittenCounts {
        if let lease = session.lease { try connection.verifyLease(lease) }
        var counts = WrittenCounts(firstWritten: written.count, seen: session.seen, new: session.new, updated: session.updated,
                                   unchanged: session.unchanged)
        var countDelta: Int64 = 0
        if session.keyModeChanged {
            try connection.setKeyMode(feed, session.keyMode)
        }
        for rekey in session.rekeys {
            guard try connection.hasArticle(feed: feed, key: rekey.from) else { continue }
            // An older row under the link key is the same page; the row just stored under the identifier wins,
            // so the ArticleID this run reported stays valid.
            countDelta -= Int64(try connection.deleteArticle(feed: feed, key: rekey.to))
            try connection.rekeyArticle(feed: feed, from: rekey.from, to: rekey.to, source: rekey.source)
        }
        // A feed that began empty, and whose stored articles are still exactly the ones this session inserted under the
        // key mode it began with (no other writer's, no re-keyed ones), cannot hold a key that none of them had: such
        // articles are inserted without a lookup. The write lock held since `begin` keeps it so until the commit.
        var unchecked = session.insertsUnchecked && !session.keyModeChanged && session.rekeys.isEmpty
            && session.new < uncheckedInsertLimit
        if unchecked, !session.pending.isEmpty {
            // The feed's row counts its articles in the same transactions that insert and delete them; the first batch
            // also counts the rows themselves (none, for a feed that began empty), so a count that was already wrong
            // cannot start the shortcut.
            let status = try connection.feedStatus(feed)
            unchecked = status?.keyMode == session.keyMode && status?.articleCount == session.new
            if unchecked, session.new == 0 { unchecked = try connection.articleCount(feed: feed) == 0 }
        }
        counts.insertsUnchecked = unchecked
        batchKeyHashes.removeAll(keepingCapacity: true)
        if !session.pending.isEmpty {
            let now = Date()
            counts.date = now
            written.reserveCapacity(written.count + session.pending.count)
            // Each pending article is lent to the encoder and the connection from a local variable: moved out of the
            // array and back (a swap with a placeholder made once), which copies nothing. Read through the array, or a
            // pointer into it, it was copied for the calls (every field retained, then released): ~1,500 instructions.
            var item = PendingArticle(article: Article(id: "", idSource: .hash, feed: ""), key: "", keySource: "")
            for index in session.pending.indices {
                swap(&item, &session.pending[index])
                defer { swap(&item, &session.pending[index]) }
                row.encode(item.article, key: item.key, keySource: item.keySource)
                let keyHash = row.keyHash
                let absent = unchecked && !session.insertedKeyHashes.contains(keyHash) && !batchKeyHashes.contains(keyHash)
                if absent { insertsWithoutLookup += 1 }
                let (id, change) = try connection.write(item.article, row: row, feed: feed, now: now, knownAbsent: absent)
                if unchecked, change == .new { batchKeyHashes.insert(keyHash) }
                switch change {
                case .new:
                    counts.new += 1
                    countDelta += 1
                case .updated: counts.updated += 1
                case .unchanged: counts.unchanged += 1
                }
                counts.seen += 1
                written.append((id, change, keyHash))
            }
        }
        if countDelta != 0 {
            try connection.addArticleCount(feed, countDelta)
        }
        return counts
    }

    /// Moves a session on once its writes have committed: its counts, the key switch and re-keys done, and its pending
    /// articles moved (not copied) into `results` with their identifiers and changes from ``written``. The pending
    /// array keeps its capacity for the next batch.
    private func apply(_ counts: WrittenCounts, to session: inout Session, feed: FeedID, results: inout [StoredArticle]) {
        session.seen = counts.seen
        session.new = counts.new
        session.updated = counts.updated
        session.unchanged = counts.unchanged
        session.insertsUnchecked = counts.insertsUnchecked
        if !counts.insertsUnchecked { session.insertedKeyHashes = [] }
        results.reserveCapacity(results.count + session.pending.count)
        for index in session.pending.indices {
            var article = Article(id: "", idSource: .hash, feed: "")
            swap(&article, &session.pending[index].article)
            let (id, change, keyHash) = written[counts.firstWritten + index]
            if counts.insertsUnchecked, change == .new { session.insertedKeyHashes.insert(keyHash) }
            results.append(StoredArticle(id: id, feed: feed, change: change, article: consume article, committedAt: counts.date))
        }
        session.pending.removeAll(keepingCapacity: true)
        session.oldestPending = nil
        session.keyModeChanged = false
        session.rekeys.removeAll()
        session.firstIdentified?.pendingIndex = nil
    }

    /// Runs `body` in a write transaction; on any error rolls back and rethrows. `body` must leave the sessions as they
    /// were (`write` only lends their articles out and puts them back): they move on only after the commit
    /// (``apply(_:to:feed:results:)``), so a failed batch stays pending.
    private func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        written.removeAll(keepingCapacity: true)  // each feed's writes take their range from here on (`firstWritten`)
        try connection.begin()
        do throws(StoreError) {
            let result = try body()
            try connection.commit()
            return result
        } catch {
            // After most failures SQLite has already rolled back (SQLITE_FULL, SQLITE_IOERR at commit); after
            // others the transaction is still open. Either way no partial batch survives.
            connection.rollback()
            throw error
        }
    }

    private func notStarted(_ feed: FeedID, _ operation: String) -> StoreError {
        StoreError(kind: .feedNotStarted(feed), message: "\(feed) was not started with beginFeed in this context",
                   path: path, operation: operation)
    }

    private func unknownFeed(_ feed: FeedID) -> StoreError {
        StoreError(kind: .unknownFeed(feed), message: "\(feed) is not in this store", path: path, operation: "read a feed")
    }
}

// A context owns one connection (SQLite opened with SQLITE_OPEN_NOMUTEX, or a libpq PGconn) and a statement cache: it
// must never be used from two threads at once, so it is explicitly not Sendable (rather than implicitly, which a later
// conformance could silently change).
@available(*, unavailable)
extension StoreContext: Sendable {}
