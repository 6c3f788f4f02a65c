import Foundation
import Syndication

/// One SQLite connection and its prepared statements, for one thread: ingests feeds and reads the store.
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
/// Articles are held in memory and written in **batches**, one `BEGIN IMMEDIATE` transaction each: when a feed
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
/// No feed ever has two articles with one key, whatever the number of writers: every insert follows its lookup
/// in the same `BEGIN IMMEDIATE` transaction, and SQLite serialises write transactions across connections and
/// processes.
///
/// ## Several writers
///
/// Contexts in one process, and processes on one file, all write: each batch takes SQLite's write lock with
/// `BEGIN IMMEDIATE` and waits up to ``StoreConfiguration/busyTimeout`` for it, so concurrent writers take
/// turns batch by batch and all finish. A writer that waits longer fails with `SQLITE_BUSY`; its batch stays
/// pending, so a later call retries it. Readers never wait (WAL).
public final class StoreContext {
    /// The database file's path.
    public var path: String { connection.path }
    /// The configuration of the store that made this context.
    public let configuration: StoreConfiguration

    private let connection: SQLiteConnection
    private var sessions: [FeedID: Session] = [:]
    /// The article being written, encoded once: hashed and bound from one buffer.
    private let row = ArticleRow()
    private let clock = ContinuousClock()

    init(connection: SQLiteConnection, configuration: StoreConfiguration) {
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
        let now = Date().timeIntervalSince1970
        return try transaction { () throws(StoreError) -> [FeedID] in
            let insert = try connection.statement(SQL.insertFeed)
            let select = try connection.statement(SQL.feedIDByURL)
            var ids: [FeedID] = []
            ids.reserveCapacity(urls.count)
            for url in urls {
                try insert.bind(url, at: 1)
                try insert.bind(now, at: 2)
                try insert.run()
                try select.bind(url, at: 1)
                defer { select.reset() }
                guard try select.step() else {
                    throw StoreError(kind: .sqlite, code: .internal, message: "feed row missing after insert",
                                     path: path, operation: SQL.feedIDByURL.sql)
                }
                ids.append(FeedID(rawValue: select.int64(0)))
            }
            return ids
        }
    }

    /// Records feeds' tags, in one transaction. Empty tags leave a feed's stored tags as they are: a list that
    /// names a feed without tags (a one-off `echo URL | feedingest -`) does not take its folders away.
    public func setTags(_ tags: [(feed: FeedID, tags: [String])]) throws(StoreError) {
        let changes = tags.filter { !$0.tags.isEmpty }
        guard !changes.isEmpty else { return }
        try transaction { () throws(StoreError) in
            let update = try connection.statement(SQL.setTags)
            for (feed, tags) in changes {
                let clean = tags.map { String($0.filter { $0 != Schema.tagSeparator }) }.filter { !$0.isEmpty }
                try update.bind(feed.rawValue, at: 1)
                try update.bind(clean.isEmpty ? nil : clean.joined(separator: String(Schema.tagSeparator)), at: 2)
                try update.run()
            }
        }
    }

    /// The feed listed under `url`, or `nil` when the store does not have it.
    public func existingFeed(url: String) throws(StoreError) -> FeedID? {
        let select = try connection.statement(SQL.feedIDByURL)
        try select.bind(url, at: 1)
        defer { select.reset() }
        return try select.step() ? FeedID(rawValue: select.int64(0)) : nil
    }

    /// The feed's row.
    public func feedStatus(_ feed: FeedID) throws(StoreError) -> FeedStatus {
        let select = try connection.statement(SQL.feedByID)
        try select.bind(feed.rawValue, at: 1)
        defer { select.reset() }
        guard try select.step() else { throw unknownFeed(feed) }
        return Self.feedStatus(from: select)
    }

    /// Every feed's row, ordered by URL: the status list of the offline commands.
    public func feedStatuses() throws(StoreError) -> [FeedStatus] {
        let select = try connection.statement(SQL.allFeeds)
        defer { select.reset() }
        var feeds: [FeedStatus] = []
        while try select.step() { feeds.append(Self.feedStatus(from: select)) }
        return feeds
    }

    // MARK: Ingesting

    /// Starts ingesting a feed in this context and returns its row (whose validators make the conditional GET).
    ///
    /// - Throws: ``StoreError/Kind/unknownFeed(_:)``, or ``StoreError/Kind/feedAlreadyStarted(_:)`` when this
    ///   context is already ingesting it.
    @discardableResult
    public func beginFeed(_ feed: FeedID) throws(StoreError) -> FeedStatus {
        guard sessions[feed] == nil else {
            throw StoreError(kind: .feedAlreadyStarted(feed), message: "\(feed) is already being ingested in this context",
                             path: path, operation: "begin feed")
        }
        let status = try feedStatus(feed)
        sessions[feed] = Session(keyMode: status.keyMode)
        return status
    }

    /// Adds an article of a started feed; returns the articles committed by this call (usually none).
    ///
    /// The article is committed with its feed's batch (see the batching rules above); the returned values
    /// tell, for each committed article, its ``ArticleID`` and whether it was new, updated or unchanged.
    ///
    /// - Throws: ``StoreError/Kind/feedNotStarted(_:)``, or the SQLite error of a failed batch (whose articles
    ///   stay pending and are retried by the next commit).
    public func store(_ article: Article, in feed: FeedID) throws(StoreError) -> [StoredArticle] {
        guard sessions[feed] != nil else { throw notStarted(feed, "store an article") }
        let now = clock.now
        let due = enqueue(article, session: &sessions[feed]!, now: now)
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
    /// and the others are kept.
    public func finishFeed(_ feed: FeedID, _ success: FeedSuccess) throws(StoreError) -> FeedIngestSummary {
        guard let session = sessions[feed] else { throw notStarted(feed, "finish a feed") }
        let committed = try transaction { () throws(StoreError) -> [StoredArticle] in
            var results: [StoredArticle] = []
            var copy = session
            try write(feed, &copy, results: &results)
            let statement = try connection.statement(success.notModified ? SQL.finishNotModified : SQL.finishUpdated)
            try statement.bind(feed.rawValue, at: 1)
            try statement.bind(success.validators.etag, at: 2)
            try statement.bind(success.validators.lastModified, at: 3)
            try statement.bind(success.validators.bodyHash, at: 4)
            try statement.bind(success.currentURL, at: 5)
            try statement.bind(success.title, at: 6)
            try statement.bind(success.homeLink, at: 7)
            try statement.bind(success.date.timeIntervalSince1970, at: 8)
            try statement.bind(success.nextFetch?.timeIntervalSince1970, at: 9)
            if !success.notModified {
                try statement.bind(copy.seen, at: 10)
                try statement.bind(copy.new, at: 11)
                try statement.bind(copy.updated, at: 12)
            }
            try statement.run()
            sessions[feed] = copy
            return results
        }
        let final = sessions.removeValue(forKey: feed)!
        return FeedIngestSummary(feed: feed, seen: final.seen, new: final.new, updated: final.updated,
                                 unchanged: final.unchanged, committed: committed)
    }

    /// Ends a failed fetch: commits the articles parsed before the failure and records the error, one more
    /// consecutive failure and the next allowed fetch (the failure's retry time, else exponential backoff),
    /// leaving the validators and the last success untouched. A failure that does not count
    /// (``FeedFailure/counts``, a 429) records only the error and the next allowed fetch.
    public func failFeed(_ feed: FeedID, _ failure: FeedFailure) throws(StoreError) -> FeedIngestSummary {
        guard let session = sessions[feed] else { throw notStarted(feed, "record a failed feed") }
        let committed = try transaction { () throws(StoreError) -> [StoredArticle] in
            var results: [StoredArticle] = []
            var copy = session
            try write(feed, &copy, results: &results)
            // A refusal for now (429) waits the base backoff, without counting as a failure.
            let failures = failure.counts ? try consecutiveFailures(of: feed) + 1 : 1
            let next = failure.retryAfter ?? failure.date.addingTimeInterval(jittered(backoff(afterFailures: failures)))
            let update = try connection.statement(SQL.finishFailed)
            try update.bind(feed.rawValue, at: 1)
            try update.bind(failure.date.timeIntervalSince1970, at: 2)
            try update.bind(failure.error, at: 3)
            try update.bind(next.timeIntervalSince1970, at: 4)
            try update.bind(failure.counts ? 0 : 1, at: 5)
            try update.bind(failures, at: 6)
            try update.bind(failure.kind, at: 7)
            try update.run()
            sessions[feed] = copy
            return results
        }
        let final = sessions.removeValue(forKey: feed)!
        return FeedIngestSummary(feed: feed, seen: final.seen, new: final.new, updated: final.updated,
                                 unchanged: final.unchanged, committed: committed)
    }

    private func consecutiveFailures(of feed: FeedID) throws(StoreError) -> Int {
        let select = try connection.statement(SQL.failuresOfFeed)
        try select.bind(feed.rawValue, at: 1)
        defer { select.reset() }
        guard try select.step() else { throw unknownFeed(feed) }
        return Int(select.int64(0))
    }

    /// Forgets a started feed and its pending (uncommitted) articles, writing nothing; for cancellation.
    public func discardFeed(_ feed: FeedID) {
        sessions.removeValue(forKey: feed)
    }

    /// The feeds this context is ingesting (started and neither finished, failed nor discarded).
    public var activeFeeds: [FeedID] { sessions.keys.sorted() }

    /// The delay before the next fetch after `failures` consecutive failures: the base backoff doubled per
    /// further failure, capped.
    /// `wait` spread by ``StoreConfiguration/failureBackoffJitter`` at random.
    func jittered(_ wait: TimeInterval) -> TimeInterval {
        let jitter = min(max(configuration.failureBackoffJitter, 0), 1)
        return jitter == 0 ? wait : wait * (1 + Double.random(in: -jitter...jitter))
    }

    func backoff(afterFailures failures: Int) -> TimeInterval {
        let base = Double(configuration.failureBackoff.components.seconds)
        let cap = Double(configuration.maximumFailureBackoff.components.seconds)
        return min(base * pow(2, Double(min(max(failures - 1, 0), 40))), cap)
    }

    // MARK: Reading

    /// Articles, newest first (by published, else updated, else first-seen date; ties by insertion, newest first).
    public func articles(_ query: ArticleQuery = ArticleQuery()) throws(StoreError) -> [ArticleRecord] {
        var records: [ArticleRecord] = []
        try forEachArticle(query) { records.append($0) }
        return records
    }

    /// Reads the articles of `query` one at a time, in the order of ``articles(_:)``, without holding them all.
    ///
    /// The filters and the limit run in SQL; `body` sees each row as it is stepped, so memory stays flat however
    /// large the store. `body` must not read articles from this context (the statement is in use until the end).
    public func forEachArticle(_ query: ArticleQuery, _ body: (ArticleRecord) -> Void) throws(StoreError) {
        let select = try connection.statement(query.feed == nil ? SQL.articlesOfAllFeeds : SQL.articlesOfFeed)
        try select.bind(query.feed?.rawValue, at: 1)
        try select.bind(query.since?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude, at: 2)
        try select.bind(Int64(query.limit.map { max($0, 0) } ?? -1), at: 3)
        try select.bind(query.changedSince?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude, at: 4)
        defer { select.reset() }
        while try select.step() { body(try record(from: select)) }
    }

    /// One article by identifier, or `nil` when there is none.
    public func article(_ id: ArticleID) throws(StoreError) -> ArticleRecord? {
        let select = try connection.statement(SQL.articleByID)
        try select.bind(id.rawValue, at: 1)
        defer { select.reset() }
        return try select.step() ? try record(from: select) : nil
    }

    /// The number of stored articles of one feed, or of all feeds for `nil`.
    public func articleCount(feed: FeedID? = nil) throws(StoreError) -> Int {
        let select = try connection.statement(feed == nil ? SQL.countAll : SQL.countOfFeed)
        if let feed { try select.bind(feed.rawValue, at: 1) }
        defer { select.reset() }
        return try select.step() ? Int(select.int64(0)) : 0
    }

    /// Runs `PRAGMA integrity_check` and returns the problems it reports; empty when the file is sound.
    public func integrityCheck() throws(StoreError) -> [String] {
        let rows = try connection.texts("PRAGMA integrity_check")
        return rows == ["ok"] ? [] : rows
    }

    // MARK: Sessions

    /// A pending article, keyed and hashed.
    private struct Pending {
        var article: Article
        var key: String
        var keySource: String
    }

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
        /// The switch to link keys, to be written with the next batch.
        var keyModeChanged = false
        /// Committed rows to re-key with the next batch: (identifier key, link key, its source).
        var rekeys: [(from: String, to: String, source: String)] = []
        var firstIdentified: FirstIdentified?
        var identifiersChecked = false
        var pending: [Pending] = []
        var oldestPending: ContinuousClock.Instant?
        var seen = 0
        var new = 0
        var updated = 0
        var unchanged = 0

        init(keyMode: ArticleKeyMode) {
            self.keyMode = keyMode
            identifiersChecked = keyMode == .link
        }

        var hasWork: Bool { !pending.isEmpty || keyModeChanged || !rekeys.isEmpty }

        func isDue(now: ContinuousClock.Instant, configuration: StoreConfiguration) -> Bool {
            guard let oldestPending else { return hasWork }
            return pending.count >= configuration.commitBatchSize || now - oldestPending >= configuration.batchInterval
        }
    }

    /// Keys, hashes and queues an article; returns whether its batch is due.
    private func enqueue(_ article: Article, session: inout Session, now: ContinuousClock.Instant) -> Bool {
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
        session.pending.append(Pending(article: article, key: key, keySource: source))
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
        try transaction { () throws(StoreError) -> [StoredArticle] in
            var results: [StoredArticle] = []
            var updated: [(FeedID, Session)] = []
            for feed in feeds {
                guard var session = sessions[feed] else { continue }
                try write(feed, &session, results: &results)
                updated.append((feed, session))
            }
            // Only now, with every write done, does the in-memory state move on; COMMIT follows at once, and
            // should it fail, `transaction` restores the sessions below.
            for (feed, session) in updated { sessions[feed] = session }
            return results
        }
    }

    /// Writes a session's pending work (key switch, re-keys, articles) and advances its copy's state.
    private func write(_ feed: FeedID, _ session: inout Session, results: inout [StoredArticle]) throws(StoreError) {
        var countDelta: Int64 = 0
        if session.keyModeChanged {
            let statement = try connection.statement(SQL.setKeyMode)
            try statement.bind(feed.rawValue, at: 1)
            try statement.bind(session.keyMode.rawValue, at: 2)
            try statement.run()
        }
        for rekey in session.rekeys {
            guard try lookup(feed, rekey.from) != nil else { continue }
            // An older row under the link key is the same page; the row just stored under the identifier wins,
            // so the ArticleID this run reported stays valid.
            let delete = try connection.statement(SQL.deleteArticleByKey)
            try delete.bind(feed.rawValue, at: 1)
            try delete.bind(rekey.to, at: 2)
            try delete.bind(ArticleRow.keyHash(rekey.to), at: 3)
            try delete.run()
            countDelta -= Int64(connection.changes)
            let statement = try connection.statement(SQL.rekeyArticle)
            try statement.bind(feed.rawValue, at: 1)
            try statement.bind(rekey.from, at: 2)
            try statement.bind(ArticleRow.keyHash(rekey.from), at: 3)
            try statement.bind(rekey.to, at: 4)
            try statement.bind(ArticleRow.keyHash(rekey.to), at: 5)
            try statement.bind(rekey.source, at: 6)
            try statement.run()
        }
        if !session.pending.isEmpty {
            let now = Date().timeIntervalSince1970
            results.reserveCapacity(results.count + session.pending.count)
            for pending in session.pending {
                let change: ArticleChange
                let id: Int64
                row.encode(pending.article, key: pending.key, keySource: pending.keySource)
                let contentHash = row.contentHash
                let keyHash = row.keyHash
                if let existing = try lookup(feed, row.bytes(.key), keyHash) {
                    id = existing.id
                    if existing.contentHash == contentHash {
                        change = .unchanged
                        if existing.commentCount != pending.article.commentCount.map(Int64.init) {
                            let statement = try connection.statement(SQL.updateCommentCount)
                            try statement.bind(id, at: 1)
                            try statement.bind(pending.article.commentCount, at: 2)
                            try statement.run()
                        }
                    } else {
                        change = .updated
                        try bindArticle(try connection.statement(SQL.updateArticle), pending, contentHash, keyHash,
                                        rowOrFeed: id, now: now).run()
                    }
                } else {
                    change = .new
                    try bindArticle(try connection.statement(SQL.insertArticle), pending, contentHash, keyHash,
                                    rowOrFeed: feed.rawValue, now: now).run()
                    id = connection.lastInsertRowID
                    countDelta += 1
                }
                switch change {
                case .new: session.new += 1
                case .updated: session.updated += 1
                case .unchanged: session.unchanged += 1
                }
                session.seen += 1
                results.append(StoredArticle(id: ArticleID(rawValue: id), feed: feed, change: change, article: pending.article))
            }
        }
        if countDelta != 0 {
            let statement = try connection.statement(SQL.addArticleCount)
            try statement.bind(feed.rawValue, at: 1)
            try statement.bind(countDelta, at: 2)
            try statement.run()
        }
        session.pending.removeAll(keepingCapacity: true)
        session.oldestPending = nil
        session.keyModeChanged = false
        session.rekeys.removeAll()
        session.firstIdentified?.pendingIndex = nil
    }

    private func lookup(_ feed: FeedID, _ key: String) throws(StoreError) -> (id: Int64, contentHash: UInt64, commentCount: Int64?)? {
        let select = try connection.statement(SQL.lookupArticle)
        try select.bind(key, at: 2)
        try select.bind(ArticleRow.keyHash(key), at: 3)
        return try lookup(feed, select)
    }

    /// Looks up an article by the key bytes of ``row`` (bound without a copy) and their hash.
    private func lookup(_ feed: FeedID, _ key: UnsafeRawBufferPointer?, _ keyHash: Int64) throws(StoreError)
        -> (id: Int64, contentHash: UInt64, commentCount: Int64?)? {
        let select = try connection.statement(SQL.lookupArticle)
        try select.bind(utf8: key, at: 2)
        try select.bind(keyHash, at: 3)
        return try lookup(feed, select)
    }

    private func lookup(_ feed: FeedID, _ select: SQLiteStatement) throws(StoreError) -> (id: Int64, contentHash: UInt64, commentCount: Int64?)? {
        try select.bind(feed.rawValue, at: 1)
        defer { select.reset() }
        guard try select.step() else { return nil }
        return (select.int64(0), UInt64(bitPattern: select.int64(1)), select.optionalInt64(2))
    }

    /// Binds the article encoded in ``row`` to ``SQL/insertArticle`` or ``SQL/updateArticle`` (same parameter
    /// numbers). Text is bound from the row's buffer without a copy.
    private func bindArticle(_ statement: SQLiteStatement, _ pending: Pending, _ contentHash: UInt64, _ keyHash: Int64,
                             rowOrFeed: Int64, now: Double) throws(StoreError) -> SQLiteStatement {
        let article = pending.article
        let published = article.published?.timeIntervalSince1970
        let updated = article.updated?.timeIntervalSince1970
        try statement.bind(rowOrFeed, at: 1)
        try statement.bind(utf8: row.bytes(.key), at: 2)
        try statement.bind(utf8: row.bytes(.keySource), at: 3)
        try statement.bind(utf8: row.bytes(.identifier), at: 4)
        try statement.bind(utf8: row.bytes(.idSource), at: 5)
        try statement.bind(utf8: row.bytes(.title), at: 6)
        try statement.bind(utf8: row.bytes(.link), at: 7)
        try statement.bind(published, at: 8)
        try statement.bind(utf8: row.bytes(.publishedRaw), at: 9)
        try statement.bind(updated, at: 10)
        try statement.bind(utf8: row.bytes(.updatedRaw), at: 11)
        try statement.bind(utf8: row.bytes(.authors), at: 12)
        try statement.bind(utf8: row.bytes(.summary), at: 13)
        try statement.bind(utf8: row.bytes(.summaryType), at: 14)
        try statement.bind(utf8: row.bytes(.content), at: 15)
        try statement.bind(utf8: row.bytes(.contentType), at: 16)
        try statement.bind(utf8: row.bytes(.categories), at: 17)
        try statement.bind(utf8: row.bytes(.enclosures), at: 18)
        try statement.bind(utf8: row.bytes(.image), at: 19)
        try statement.bind(utf8: row.bytes(.comments), at: 20)
        try statement.bind(utf8: row.bytes(.commentsFeed), at: 21)
        try statement.bind(article.commentCount, at: 22)
        try statement.bind(utf8: row.bytes(.language), at: 23)
        try statement.bind(utf8: row.bytes(.podcast), at: 24)
        try statement.bind(Int64(bitPattern: contentHash), at: 25)
        try statement.bind(published ?? updated ?? now, at: 26)
        try statement.bind(now, at: 27)
        try statement.bind(keyHash, at: 28)
        return statement
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction; on any error rolls back, restores the sessions and rethrows.
    private func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let saved = sessions
        try connection.statement(SQL.begin).run()
        do throws(StoreError) {
            let result = try body()
            try connection.statement(SQL.commit).run()
            return result
        } catch {
            // After most failures SQLite has already rolled back (SQLITE_FULL, SQLITE_IOERR at commit); after
            // others the transaction is still open. Either way no partial batch survives.
            if connection.isInTransaction { try? connection.statement(SQL.rollback).run() }
            sessions = saved
            throw error
        }
    }

    // MARK: Rows

    private static func feedStatus(from row: SQLiteStatement) -> FeedStatus {
        FeedStatus(
            id: FeedID(rawValue: row.int64(0)), url: row.text(1) ?? "", title: row.text(2), homeLink: row.text(3),
            currentURL: row.text(4),
            validators: FeedValidators(etag: row.text(5), lastModified: row.text(6), bodyHash: row.text(7)),
            keyMode: ArticleKeyMode(rawValue: row.text(8) ?? "") ?? .identifier,
            lastAttempt: row.double(9).map(Date.init(timeIntervalSince1970:)),
            lastSuccess: row.double(10).map(Date.init(timeIntervalSince1970:)),
            outcome: row.text(11).flatMap(FeedOutcome.init(rawValue:)), error: row.text(12),
            consecutiveFailures: Int(row.int64(13)), nextFetch: row.double(14).map(Date.init(timeIntervalSince1970:)),
            articleCount: Int(row.int64(15)), lastFetchSeen: row.optionalInt64(16).map(Int.init),
            lastFetchNew: row.optionalInt64(17).map(Int.init), lastFetchUpdated: row.optionalInt64(18).map(Int.init),
            tags: row.text(19).map { $0.split(separator: Schema.tagSeparator).map(String.init) } ?? [],
            isRateLimited: row.int64(20) != 0, errorKind: row.text(21))
    }

    private func record(from row: SQLiteStatement) throws(StoreError) -> ArticleRecord {
        let idSource = Article.IDSource(rawValue: row.text(6) ?? "") ?? .hash
        var article = Article(id: row.text(5) ?? "", idSource: idSource, feed: row.text(2) ?? "")
        article.title = row.text(7)
        article.link = row.text(8)
        article.published = row.double(9).map(Date.init(timeIntervalSince1970:))
        article.publishedRaw = row.text(10)
        article.updated = row.double(11).map(Date.init(timeIntervalSince1970:))
        article.updatedRaw = row.text(12)
        article.summary = Self.textContent(row.text(14), type: row.text(15))
        article.content = Self.textContent(row.text(16), type: row.text(17))
        article.image = row.text(20)
        article.comments = row.text(21)
        article.commentsFeed = row.text(22)
        article.commentCount = row.optionalInt64(23).map(Int.init)
        article.language = row.text(24)
        do {
            article.authors = try ListColumns.decodeAuthors(row.text(13))
            article.categories = try ListColumns.decodeStrings(row.text(18))
            article.enclosures = try ListColumns.decodeEnclosures(row.text(19))
            article.podcast = try ListColumns.decodePodcast(row.text(25))
        } catch {
            throw StoreError(kind: .invalidStoredValue, message: "article \(row.int64(0)) has an unreadable list column: \(error)",
                             path: path, operation: "read an article")
        }
        return ArticleRecord(
            id: ArticleID(rawValue: row.int64(0)), feed: FeedID(rawValue: row.int64(1)), article: article,
            key: row.text(3) ?? "", keySource: row.text(4) ?? "", contentHash: UInt64(bitPattern: row.int64(26)),
            date: Date(timeIntervalSince1970: row.double(27) ?? 0),
            firstSeen: Date(timeIntervalSince1970: row.double(28) ?? 0),
            lastUpdated: Date(timeIntervalSince1970: row.double(29) ?? 0))
    }

    private static func textContent(_ value: String?, type: String?) -> TextContent? {
        guard let value else { return nil }
        return TextContent(value, type: TextContent.Kind(rawValue: type ?? "") ?? .text)
    }

    private func notStarted(_ feed: FeedID, _ operation: String) -> StoreError {
        StoreError(kind: .feedNotStarted(feed), message: "\(feed) was not started with beginFeed in this context",
                   path: path, operation: operation)
    }

    private func unknownFeed(_ feed: FeedID) -> StoreError {
        StoreError(kind: .unknownFeed(feed), message: "\(feed) is not in this store", path: path, operation: "read a feed")
    }
}

// A context owns a connection opened with SQLITE_OPEN_NOMUTEX and a statement cache: it must never be used
// from two threads at once, so it is explicitly not Sendable (rather than implicitly, which a later
// conformance could silently change).
@available(*, unavailable)
extension StoreContext: Sendable {}
