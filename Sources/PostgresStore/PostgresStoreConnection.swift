// The PostgreSQL engine's connection: the SQL a context runs (prepared statements with typed parameters), the article
// column mapping (one column list, one bind routine, one row reader), upserts with INSERT … ON CONFLICT, and the claims
// with FOR UPDATE SKIP LOCKED. It calls libpq only through LibPQ.swift's wrappers.
import ArticleStore
import Foundation
import Support
import Syndication
import Scheduling

/// One libpq connection as a `StoreConnection`; confined to its context's thread.
final class PostgresStoreConnection: StoreConnection {
    let connection: PGConnection

    init(connection: PGConnection) {
        self.connection = connection
    }

    var location: String { connection.location.redacted }
    var isInTransaction: Bool { connection.isInTransaction }
    /// Other connections write concurrently under PostgreSQL's MVCC (a leased feed's row lock serialises only its writers).
    var excludesOtherWriters: Bool { false }

    func begin() throws(StoreError) {
        // A connection the server dropped (a restart) is reconnected before the next transaction, so only the
        // transactions in flight at the time fail.
        try connection.resetIfBroken()
        try connection.execute("BEGIN")
    }

    func commit() throws(StoreError) { try connection.execute("COMMIT") }

    func rollback() {
        if connection.isInTransaction, !connection.isBroken { _ = try? connection.execute("ROLLBACK") }
    }

    /// Runs a prepared statement, reconnecting first when the connection broke and no transaction is open.
    @discardableResult
    func run(_ statement: PGStatement, _ bind: (inout PGParameters) -> Void) throws(StoreError) -> PGResult {
        if !connection.isInTransaction { try connection.resetIfBroken() }
        var parameters = PGParameters()
        bind(&parameters)
        return try connection.execute(statement, parameters)
    }

    // MARK: Feeds

    func ensureFeeds(_ urls: [String], now: Date) throws(StoreError) -> [FeedID] {
        guard !urls.isEmpty else { return [] }
        try run(SQL.insertFeeds) { p in
            p.append(texts: urls)
            p.append(texts: urls.map(FeedHost.key(of:)))
            p.append(now)
        }
        let result = try run(SQL.feedIDsByURL) { $0.append(texts: urls) }
        var ids: [String: FeedID] = [:]
        for row in 0..<result.rows {
            if let url = result.text(row, 1), let id = result.int64(row, 0) { ids[url] = FeedID(rawValue: id) }
        }
        return try urls.map { url throws(StoreError) -> FeedID in
            guard let id = ids[url] else {
                throw StoreError(kind: .postgres, message: "feed row missing after insert", path: location,
                                 operation: SQL.feedIDsByURL.sql)
            }
            return id
        }
    }

    func setTags(_ feed: FeedID, _ tags: String?) throws(StoreError) {
        try run(SQL.setTags) { p in
            p.append(feed.rawValue)
            p.append(tags)
        }
    }

    func subscribe(_ feeds: [FeedID], source: SubscriptionSource) throws(StoreError) -> Int {
        try run(SQL.subscribe) { p in
            p.append(ids: feeds.map(\.rawValue))
            switch source {
            case .list(let path):
                p.append(path)
                p.append(true)
            case .byHand:
                p.append(nil as String?)
                p.append(true)
            case .oneOff:
                p.append(nil as String?)
                p.append(false)
            }
        }.changedRows
    }

    func unsubscribe(listSource: String, except feeds: [FeedID]) throws(StoreError) -> Int {
        try run(SQL.unsubscribeList) { p in
            p.append(listSource)
            p.append(ids: feeds.map(\.rawValue))
        }.changedRows
    }

    func unsubscribe(_ feeds: [FeedID]) throws(StoreError) -> Int {
        try run(SQL.unsubscribe) { $0.append(ids: feeds.map(\.rawValue)) }.changedRows
    }

    func deleteFeeds(_ feeds: [FeedID]) throws(StoreError) -> Int {
        try run(SQL.deleteFeeds) { $0.append(ids: feeds.map(\.rawValue)) }.changedRows
    }

    func feedID(url: String) throws(StoreError) -> FeedID? {
        let result = try run(SQL.feedIDsByURL) { $0.append(texts: [url]) }
        return result.rows > 0 ? result.int64(0, 0).map(FeedID.init(rawValue:)) : nil
    }

    func feedStatus(_ feed: FeedID) throws(StoreError) -> FeedStatus? {
        let result = try run(SQL.feedByID) { $0.append(feed.rawValue) }
        return result.rows > 0 ? Self.feedStatus(result, 0) : nil
    }

    func feedStatuses() throws(StoreError) -> [FeedStatus] {
        let result = try run(SQL.allFeeds) { _ in }
        return (0..<result.rows).map { Self.feedStatus(result, $0) }
    }

    func feedStatuses(_ feeds: [FeedID]) throws(StoreError) -> [FeedStatus] {
        let result = try run(SQL.feedsByIDs) { $0.append(ids: feeds.map(\.rawValue)) }
        return (0..<result.rows).map { Self.feedStatus(result, $0) }
    }

    func consecutiveFailures(_ feed: FeedID) throws(StoreError) -> Int? {
        let result = try run(SQL.failuresOfFeed) { $0.append(feed.rawValue) }
        return result.rows > 0 ? result.int64(0, 0).map(Int.init) : nil
    }

    // MARK: Writing

    func verifyLease(_ lease: FeedLease) throws(StoreError) {
        // FOR NO KEY UPDATE: the row stays locked until COMMIT, so a claim (FOR UPDATE SKIP LOCKED) cannot move the
        // epoch between this check and the writes that follow it.
        let result = try run(SQL.lockLease) { $0.append(lease.feed.rawValue) }
        guard result.rows > 0 else {
            throw StoreError(kind: .unknownFeed(lease.feed), message: "\(lease.feed) is not in this store", path: location,
                             operation: "check the lease")
        }
        let epoch = result.int64(0, 0) ?? 0
        let owner = result.text(0, 1)
        guard epoch == lease.epoch, owner == lease.owner else {
            let holder = owner.map { "now held by \($0)" } ?? "since finished or released"
            throw StoreError(kind: .leaseLost(lease.feed),
                             message: "lease lost: \(lease.feed) was claimed again (epoch \(epoch), ours \(lease.epoch); \(holder)); "
                                + "results not written", path: location, operation: "check the lease")
        }
    }

    /// One upsert, which looks the key up itself: `knownAbsent` changes nothing here.
    func write(_ article: Article, row: ArticleRow, feed: FeedID, now: Date, knownAbsent: Bool) throws(StoreError) -> (ArticleID, ArticleChange) {
        let contentHash = Int64(bitPattern: row.contentHash)
        let result = try run(SQL.upsertArticle) { p in Self.bindArticle(&p, article, row, feed: feed, contentHash: contentHash, now: now) }
        guard result.rows == 1, let id = result.int64(0, 0) else {
            throw StoreError(kind: .postgres, message: "the upsert returned no row", path: location, operation: SQL.upsertArticle.sql)
        }
        let change: ArticleChange
        if let old = result.int64(0, 1) {
            change = old == contentHash ? .unchanged : .updated
        } else {
            change = .new
        }
        return (ArticleID(rawValue: id), change)
    }

    func hasArticle(feed: FeedID, key: String) throws(StoreError) -> Bool {
        let result = try run(SQL.lookupArticle) { p in
            p.append(feed.rawValue)
            p.append(key)
            p.append(ArticleRow.keyHash(key))
        }
        return result.rows > 0
    }

    func deleteArticle(feed: FeedID, key: String) throws(StoreError) -> Int {
        try run(SQL.deleteArticleByKey) { p in
            p.append(feed.rawValue)
            p.append(key)
            p.append(ArticleRow.keyHash(key))
        }.changedRows
    }

    func rekeyArticle(feed: FeedID, from: String, to: String, source: String) throws(StoreError) {
        try run(SQL.rekeyArticle) { p in
            p.append(feed.rawValue)
            p.append(from)
            p.append(ArticleRow.keyHash(from))
            p.append(to)
            p.append(ArticleRow.keyHash(to))
            p.append(source)
        }
    }

    func setKeyMode(_ feed: FeedID, _ mode: ArticleKeyMode) throws(StoreError) {
        try run(SQL.setKeyMode) { p in
            p.append(feed.rawValue)
            p.append(mode.rawValue)
        }
    }

    func addArticleCount(_ feed: FeedID, _ delta: Int64) throws(StoreError) {
        try run(SQL.addArticleCount) { p in
            p.append(feed.rawValue)
            p.append(delta)
        }
    }

    func complete(_ feed: FeedID, _ completion: FeedCompletion, releasing lease: FeedLease?) throws(StoreError) {
        switch completion {
        case .updated(let success, let seen, let new, let updated, let next):
            try run(SQL.finishUpdated) { p in
                Self.bindSuccess(&p, feed, success, next: next, release: lease != nil)
                p.append(seen)
                p.append(new)
                p.append(updated)
            }
        case .notModified(let success, let next):
            try run(SQL.finishNotModified) { p in Self.bindSuccess(&p, feed, success, next: next, release: lease != nil) }
        case .failed(let failure, let failures, let next):
            try run(SQL.finishFailed) { p in
                p.append(feed.rawValue)
                p.append(failure.date)
                p.append(failure.error)
                p.append(next)
                p.append(!failure.counts)
                p.append(failures)
                p.append(failure.kind)
                p.append(lease != nil)
            }
        }
    }

    func recentEntryDates(_ feed: FeedID, limit: Int) throws(StoreError) -> [Date] {
        let result = try run(SQL.recentEntryDates) { p in
            p.append(feed.rawValue)
            p.append(limit)
        }
        return (0..<result.rows).compactMap { result.date($0, 0) }
    }

    func recordSchedule(_ feed: FeedID, _ record: ScheduleRecord) throws(StoreError) {
        try run(SQL.recordSchedule) { p in
            p.append(feed.rawValue)
            p.append(record.interval)
            p.append(record.writesHints)
            p.append(record.refreshHint)
            p.append(record.clearsRefreshHint)
            p.append(record.maxAge)
            p.append(record.expires)
            p.append(record.reason.rawValue)
        }
    }

    private static func bindSuccess(_ p: inout PGParameters, _ feed: FeedID, _ success: FeedSuccess, next: Date?, release: Bool) {
        p.append(feed.rawValue)
        p.append(success.validators.etag)
        p.append(success.validators.lastModified)
        p.append(success.validators.bodyHash)
        p.append(success.currentURL)
        p.append(success.title)
        p.append(success.homeLink)
        p.append(success.date)
        p.append(next)
        p.append(release)
    }

    /// The article column mapping, writing: the parameters of ``SQL/upsertArticle`` in the order of
    /// ``SQL/articleColumns`` (then the content hash, key hash and dates), text straight from the row's buffer.
    private static func bindArticle(_ p: inout PGParameters, _ article: Article, _ row: ArticleRow, feed: FeedID,
                                    contentHash: Int64, now: Date) {
        p.append(feed.rawValue)                     // $1 feed_id
        p.append(utf8: row.bytes(.key))             // $2 key
        p.append(utf8: row.bytes(.keySource))       // $3
        p.append(utf8: row.bytes(.identifier))      // $4
        p.append(utf8: row.bytes(.idSource))        // $5
        p.append(utf8: row.bytes(.title))           // $6
        p.append(utf8: row.bytes(.link))            // $7
        p.append(article.published)                 // $8
        p.append(utf8: row.bytes(.publishedRaw))    // $9
        p.append(article.updated)                   // $10
        p.append(utf8: row.bytes(.updatedRaw))      // $11
        p.append(utf8: row.bytes(.authors))         // $12
        p.append(utf8: row.bytes(.summary))         // $13
        p.append(utf8: row.bytes(.summaryType))     // $14
        p.append(utf8: row.bytes(.content))         // $15
        p.append(utf8: row.bytes(.contentType))     // $16
        p.append(utf8: row.bytes(.categories))      // $17
        p.append(utf8: row.bytes(.enclosures))      // $18
        p.append(utf8: row.bytes(.image))           // $19
        p.append(utf8: row.bytes(.comments))        // $20
        p.append(utf8: row.bytes(.commentsFeed))    // $21
        p.append(article.commentCount)              // $22
        p.append(utf8: row.bytes(.language))        // $23
        p.append(utf8: row.bytes(.podcast))         // $24
        p.append(contentHash)                       // $25
        p.append(article.published ?? article.updated ?? now)  // $26 sort_date
        p.append(now)                               // $27 first_seen, last_updated
        p.append(row.keyHash)                       // $28
        p.append(utf8: row.bytes(.details))         // $29
    }

    // MARK: Reading

    func forEachArticle(_ query: ArticleQuery, _ body: (ArticleRecord) -> Void) throws(StoreError) {
        // Pages of 500 rows by (sort_date, id) keyset, so memory stays flat however large the store, without a cursor
        // (which would need a transaction held open across the caller's work).
        var remaining = query.limit.map { max($0, 0) } ?? Int.max
        var after: (Int64, Int64)?
        while remaining > 0 {
            let page = min(remaining, 500)
            let result = try run(query.feed == nil ? SQL.articlesOfAllFeeds : SQL.articlesOfFeed) { p in
                p.append(query.feed?.rawValue ?? 0)
                p.append(query.since ?? Date.distantPast)
                p.append(query.changedSince ?? Date.distantPast)
                p.append(after == nil)
                p.append(after?.0 ?? 0)
                p.append(after?.1 ?? 0)
                p.append(Int64(page))
            }
            for row in 0..<result.rows {
                body(try record(result, row))
            }
            remaining -= result.rows
            guard result.rows == page, let sortDate = result.int64(result.rows - 1, SQL.sortDateMicrosecondsColumn),
                  let id = result.int64(result.rows - 1, 0) else { break }
            after = (sortDate, id)
        }
    }

    func article(_ id: ArticleID) throws(StoreError) -> ArticleRecord? {
        let result = try run(SQL.articleByID) { $0.append(id.rawValue) }
        return result.rows > 0 ? try record(result, 0) : nil
    }

    func articleCount(feed: FeedID?) throws(StoreError) -> Int {
        let result = try run(feed == nil ? SQL.countAll : SQL.countOfFeed) { p in if let feed { p.append(feed.rawValue) } }
        return Int(result.int64(0, 0) ?? 0)
    }

    func integrityCheck() throws(StoreError) -> [String] {
        let result = try run(SQL.integrity) { _ in }
        return (0..<result.rows).compactMap { result.text($0, 0) }
    }

    /// The article column mapping, reading: one row of ``SQL/articleColumns``.
    private func record(_ result: PGResult, _ row: Int) throws(StoreError) -> ArticleRecord {
        var values = ArticleRecordValues()
        values.id = result.int64(row, 0) ?? 0
        values.feedID = result.int64(row, 1) ?? 0
        values.feedURL = result.text(row, 2)
        values.key = result.text(row, 3)
        values.keySource = result.text(row, 4)
        values.identifier = result.text(row, 5)
        values.idSource = result.text(row, 6)
        values.title = result.text(row, 7)
        values.link = result.text(row, 8)
        values.published = result.seconds(row, 9)
        values.publishedRaw = result.text(row, 10)
        values.updated = result.seconds(row, 11)
        values.updatedRaw = result.text(row, 12)
        values.authors = result.text(row, 13)
        values.summary = result.text(row, 14)
        values.summaryType = result.text(row, 15)
        values.content = result.text(row, 16)
        values.contentType = result.text(row, 17)
        values.categories = result.text(row, 18)
        values.enclosures = result.text(row, 19)
        values.image = result.text(row, 20)
        values.comments = result.text(row, 21)
        values.commentsFeed = result.text(row, 22)
        values.commentCount = result.int64(row, 23)
        values.language = result.text(row, 24)
        values.podcast = result.text(row, 25)
        values.contentHash = result.int64(row, 26) ?? 0
        values.sortDate = result.seconds(row, 27)
        values.firstSeen = result.seconds(row, 28)
        values.lastUpdated = result.seconds(row, 29)
        values.details = result.text(row, 31)
        return try values.record(location: location)
    }

    private static func feedStatus(_ result: PGResult, _ row: Int) -> FeedStatus {
        var status = FeedStatus(
            id: FeedID(rawValue: result.int64(row, 0) ?? 0), url: result.text(row, 1) ?? "", title: result.text(row, 2),
            homeLink: result.text(row, 3), currentURL: result.text(row, 4),
            validators: FeedValidators(etag: result.text(row, 5), lastModified: result.text(row, 6), bodyHash: result.text(row, 7)),
            keyMode: ArticleKeyMode(rawValue: result.text(row, 8) ?? "") ?? .identifier,
            lastAttempt: result.date(row, 9), lastSuccess: result.date(row, 10),
            outcome: result.text(row, 11).flatMap(FeedOutcome.init(rawValue:)), error: result.text(row, 12),
            consecutiveFailures: Int(result.int64(row, 13) ?? 0), nextFetch: result.date(row, 14),
            articleCount: Int(result.int64(row, 15) ?? 0), lastFetchSeen: result.int64(row, 16).map(Int.init),
            lastFetchNew: result.int64(row, 17).map(Int.init), lastFetchUpdated: result.int64(row, 18).map(Int.init),
            tags: result.text(row, 19).map { $0.split(separator: "\u{1F}").map(String.init) } ?? [],
            isRateLimited: result.bool(row, 20) ?? false, errorKind: result.text(row, 21), host: result.text(row, 22),
            leaseOwner: result.text(row, 23), leaseUntil: result.date(row, 24), leaseEpoch: result.int64(row, 25) ?? 0)
        status.interval = result.double(row, 26)
        status.scheduleReason = result.text(row, 27).flatMap(ScheduleReason.init(rawValue:))
        status.refreshHint = result.double(row, 28)
        status.maxAge = result.double(row, 29)
        status.expires = result.date(row, 30)
        status.isSubscribed = result.bool(row, 31) ?? true
        status.listSource = result.text(row, 32)
        return status
    }

    // MARK: Claims

    func claim(_ request: ClaimRequest) throws(StoreError) -> [FeedLease] {
        // The advisory lock serialises claims across processes for this transaction, so the per-host counts the claim
        // reads are exact; FOR UPDATE SKIP LOCKED passes over rows a writer holds at that instant.
        try connection.resetIfBroken()
        try connection.execute("BEGIN; SELECT pg_advisory_xact_lock(\(PostgresSchema.claimLock))")
        do throws(StoreError) {
            let result = try connection.execute(SQL.claim, {
                var p = PGParameters()
                p.append(ids: request.candidates.map(\.rawValue))
                p.append(Int64(request.limit))
                p.append(request.owner)
                p.append(max(request.duration.seconds, 0))
                p.append(Int64(request.perHostLimit))
                p.append(Int64(request.due.rawValue))
                return p
            }())
            try connection.execute("COMMIT")
            return (0..<result.rows).map { row in
                FeedLease(feed: FeedID(rawValue: result.int64(row, 0) ?? 0), epoch: result.int64(row, 1) ?? 0,
                          owner: request.owner, until: result.date(row, 2) ?? Date(), claimedAt: result.date(row, 3) ?? Date(),
                          validators: FeedValidators(etag: result.text(row, 4), lastModified: result.text(row, 5),
                                                     bodyHash: result.text(row, 6)))
            }
        } catch {
            rollback()
            throw error
        }
    }

    func renewLeases(owner: String, feeds: [FeedID], duration: Duration) throws(StoreError) -> [FeedLease] {
        let result = try run(SQL.renewLeases) { p in
            p.append(owner)
            p.append(ids: feeds.map(\.rawValue))
            p.append(duration.seconds)
        }
        return (0..<result.rows).map { row in
            FeedLease(feed: FeedID(rawValue: result.int64(row, 0) ?? 0), epoch: result.int64(row, 1) ?? 0, owner: owner,
                      until: result.date(row, 2) ?? Date(), claimedAt: result.date(row, 3) ?? Date())
        }
    }

    func releaseLeases(owner: String, feeds: [FeedID]?) throws(StoreError) {
        try run(SQL.releaseLeases) { p in
            p.append(owner)
            p.append(feeds == nil)
            p.append(ids: (feeds ?? []).map(\.rawValue))
        }
    }

    func liveLeaseOwners(now: Date) throws(StoreError) -> [String] {
        let result = try run(SQL.liveLeaseOwners) { _ in }
        return (0..<result.rows).compactMap { result.text($0, 0) }
    }

    func claimStates(_ feeds: [FeedID], owner: String, due: DuePolicy) throws(StoreError) -> [FeedID: ClaimState] {
        let result = try run(SQL.claimStates) { p in
            p.append(ids: feeds.map(\.rawValue))
            p.append(owner)
            p.append(Int64(due.rawValue))
        }
        var states: [FeedID: ClaimState] = [:]
        for row in 0..<result.rows {
            let state: ClaimState
            switch result.int64(row, 1) {
            case 1?: state = .leasedHere
            case 2?: state = .leasedElsewhere
            case 3?: state = .notDue
            default: state = .claimable
            }
            states[FeedID(rawValue: result.int64(row, 0) ?? 0)] = state
        }
        return states
    }
}

/// The SQL the PostgreSQL contexts run, each prepared once per session with its parameters' types.
enum SQL {
    private static func statement(_ name: String, _ types: [PGType], _ sql: String) -> PGStatement {
        PGStatement(name: "feedingest_" + name, sql: sql, types: types)
    }

    static let insertFeeds = statement("insert_feeds", [.textArray, .textArray, .timestamptz], """
        INSERT INTO feeds (url, host, created_at) SELECT u, h, $3 FROM unnest($1::text[], $2::text[]) AS t (u, h)
        ON CONFLICT (url) DO UPDATE SET host = EXCLUDED.host WHERE feeds.host IS DISTINCT FROM EXCLUDED.host
        """)
    static let feedIDsByURL = statement("feed_ids", [.textArray], "SELECT id, url FROM feeds WHERE url = ANY ($1::text[])")
    static let setTags = statement("set_tags", [.int8, .text], "UPDATE feeds SET tags = $2 WHERE id = $1")
    /// Subscribes $1; sets the list source to $2 when $3. Counts only the rows that change.
    static let subscribe = statement("subscribe", [.int8Array, .text, .bool], """
        UPDATE feeds SET subscribed = true, list_source = CASE WHEN $3 THEN $2 ELSE list_source END
        WHERE id = ANY ($1::bigint[]) AND (NOT subscribed OR ($3 AND list_source IS DISTINCT FROM $2))
        """)
    static let unsubscribeList = statement("unsubscribe_list", [.text, .int8Array], """
        UPDATE feeds SET subscribed = false WHERE list_source = $1 AND subscribed AND NOT (id = ANY ($2::bigint[]))
        """)
    static let unsubscribe = statement("unsubscribe", [.int8Array], """
        UPDATE feeds SET subscribed = false, list_source = NULL WHERE id = ANY ($1::bigint[]) AND subscribed
        """)
    /// Feeds and (through their foreign key) their articles.
    static let deleteFeeds = statement("delete_feeds", [.int8Array], "DELETE FROM feeds WHERE id = ANY ($1::bigint[])")

    static let feedColumns = """
        id, url, title, home_url, current_url, etag, last_modified, body_hash, key_mode, last_attempt, last_success,
        outcome, error, consecutive_failures, next_fetch, article_count, last_seen_count, last_new_count, last_updated_count,
        tags, rate_limited, error_kind, host, lease_owner, lease_until, lease_epoch, fetch_interval, schedule_reason,
        refresh_hint, max_age, expires, subscribed, list_source
        """
    static let recentEntryDates = statement("recent_entry_dates", [.int8, .int8], """
        SELECT coalesce(published, updated) FROM articles
        WHERE feed_id = $1 AND coalesce(published, updated) IS NOT NULL ORDER BY sort_date DESC LIMIT $2
        """)
    /// The adaptive schedule's record; hints only when $3 (a success), the refresh hint kept when $4 is NULL and not $5.
    static let recordSchedule = statement("record_schedule", [.int8, .float8, .bool, .float8, .bool, .float8, .timestamptz, .text], """
        UPDATE feeds SET fetch_interval = $2, schedule_reason = $8,
            refresh_hint = CASE WHEN NOT $3 THEN refresh_hint WHEN $4 IS NULL AND NOT $5 THEN refresh_hint ELSE $4 END,
            max_age = CASE WHEN $3 THEN $6 ELSE max_age END, expires = CASE WHEN $3 THEN $7 ELSE expires END
        WHERE id = $1
        """)
    static let feedByID = statement("feed_by_id", [.int8], "SELECT \(feedColumns) FROM feeds WHERE id = $1")
    static let allFeeds = statement("all_feeds", [], "SELECT \(feedColumns) FROM feeds ORDER BY url")
    static let feedsByIDs = statement("feeds_by_ids", [.int8Array], "SELECT \(feedColumns) FROM feeds WHERE id = ANY ($1::bigint[])")
    static let failuresOfFeed = statement("failures", [.int8], "SELECT consecutive_failures FROM feeds WHERE id = $1")

    static let lockLease = statement("lock_lease", [.int8], "SELECT lease_epoch, lease_owner FROM feeds WHERE id = $1 FOR NO KEY UPDATE")

    /// The article column mapping's column list (writing), in the order ``PostgresStoreConnection/bindArticle`` binds.
    static let articleInsertColumns = """
        feed_id, key, key_source, identifier, id_source, title, link, published, published_raw, updated, updated_raw,
        authors, summary, summary_type, content, content_type, categories, enclosures, image, comments, comments_feed,
        comment_count, language, podcast, content_hash, sort_date, first_seen, last_updated, key_hash, details
        """
    /// Every content column an update replaces (all but the key, its source, the feed, the first-seen date).
    static let articleUpdateColumns = [
        "identifier", "id_source", "title", "link", "published", "published_raw", "updated", "updated_raw", "authors",
        "summary", "summary_type", "content", "content_type", "categories", "enclosures", "image", "comments",
        "comments_feed", "comment_count", "language", "podcast", "content_hash", "details",
    ]
    static let articleParameterTypes: [PGType] = [
        .int8, .text, .text, .text, .text, .text, .text, .timestamptz, .text, .timestamptz, .text, .text, .text, .text,
        .text, .text, .text, .text, .text, .text, .text, .int8, .text, .text, .int8, .timestamptz, .timestamptz, .int8,
        .text,
    ]
    /// The upsert: the article's previous row (its content hash) read in the same statement's snapshot, then
    /// `INSERT … ON CONFLICT` on the key index, updating in place only when the content hash or the comment count
    /// changed (the last-updated date only for content). Returns the article's id, the previous content hash (NULL
    /// for a new article).
    static let upsertArticle = statement("upsert_article", articleParameterTypes, """
        WITH old AS (
            SELECT id, content_hash FROM articles WHERE feed_id = $1 AND key_hash = $28 AND key = $2),
        up AS (
            INSERT INTO articles (\(articleInsertColumns))
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
                    $23, $24, $25, $26, $27, $27, $28, $29)
            ON CONFLICT (feed_id, key_hash, md5(key)) DO UPDATE SET
                \(articleUpdateColumns.map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")),
                sort_date = coalesce(EXCLUDED.published, EXCLUDED.updated, articles.first_seen),
                last_updated = CASE WHEN articles.content_hash <> EXCLUDED.content_hash THEN EXCLUDED.last_updated
                                    ELSE articles.last_updated END
            WHERE articles.content_hash <> EXCLUDED.content_hash
               OR articles.comment_count IS DISTINCT FROM EXCLUDED.comment_count
            RETURNING id)
        SELECT coalesce((SELECT id FROM up), (SELECT id FROM old)), (SELECT content_hash FROM old)
        """)
    static let lookupArticle = statement("lookup_article", [.int8, .text, .int8],
                                         "SELECT id FROM articles WHERE feed_id = $1 AND key_hash = $3 AND key = $2")
    static let deleteArticleByKey = statement("delete_article", [.int8, .text, .int8],
                                              "DELETE FROM articles WHERE feed_id = $1 AND key_hash = $3 AND key = $2")
    static let rekeyArticle = statement("rekey_article", [.int8, .text, .int8, .text, .int8, .text], """
        UPDATE articles SET key = $4, key_hash = $5, key_source = $6 WHERE feed_id = $1 AND key_hash = $3 AND key = $2
        """)
    static let setKeyMode = statement("set_key_mode", [.int8, .text], "UPDATE feeds SET key_mode = $2 WHERE id = $1")
    static let addArticleCount = statement("add_count", [.int8, .int8],
                                           "UPDATE feeds SET article_count = article_count + $2 WHERE id = $1")

    private static let successTypes: [PGType] = [.int8, .text, .text, .text, .text, .text, .text, .timestamptz, .timestamptz, .bool]
    /// Ends the lease too when $10 (the row is locked by the lease check of the same transaction).
    private static let releasing = """
        lease_owner = CASE WHEN $10 THEN NULL ELSE lease_owner END, lease_until = CASE WHEN $10 THEN NULL ELSE lease_until END
        """
    static let finishUpdated = statement("finish_updated", successTypes + [.int8, .int8, .int8], """
        UPDATE feeds SET etag = $2, last_modified = $3, body_hash = $4, current_url = coalesce($5, current_url),
            title = coalesce($6, title), home_url = coalesce($7, home_url), last_attempt = $8, last_success = $8,
            outcome = 'updated', error = NULL, error_kind = NULL, consecutive_failures = 0, next_fetch = $9,
            rate_limited = false, last_seen_count = $11, last_new_count = $12, last_updated_count = $13, \(releasing)
        WHERE id = $1
        """)
    static let finishNotModified = statement("finish_not_modified", successTypes, """
        UPDATE feeds SET etag = coalesce($2, etag), last_modified = coalesce($3, last_modified),
            body_hash = coalesce($4, body_hash), current_url = coalesce($5, current_url), title = coalesce($6, title),
            home_url = coalesce($7, home_url), last_attempt = $8, last_success = $8, outcome = 'not-modified',
            error = NULL, error_kind = NULL, consecutive_failures = 0, next_fetch = $9, rate_limited = false, \(releasing)
        WHERE id = $1
        """)
    /// A failed fetch; a refusal for now ($5, a 429) keeps the outcome and the failure count.
    static let finishFailed = statement("finish_failed", [.int8, .timestamptz, .text, .timestamptz, .bool, .int8, .text, .bool], """
        UPDATE feeds SET last_attempt = $2, error = $3, next_fetch = $4, rate_limited = $5, error_kind = $7,
            outcome = CASE WHEN $5 THEN outcome ELSE 'failed' END,
            consecutive_failures = CASE WHEN $5 THEN consecutive_failures ELSE $6 END,
            lease_owner = CASE WHEN $8 THEN NULL ELSE lease_owner END, lease_until = CASE WHEN $8 THEN NULL ELSE lease_until END
        WHERE id = $1
        """)

    /// The article column mapping's column list (reading); ``PostgresStoreConnection/record(_:_:)`` reads it. The
    /// last column is the sort date in microseconds, the keyset of the next page.
    static let articleColumns = """
        a.id, a.feed_id, f.url, a.key, a.key_source, a.identifier, a.id_source, a.title, a.link, a.published,
        a.published_raw, a.updated, a.updated_raw, a.authors, a.summary, a.summary_type, a.content, a.content_type,
        a.categories, a.enclosures, a.image, a.comments, a.comments_feed, a.comment_count, a.language, a.podcast,
        a.content_hash, a.sort_date, a.first_seen, a.last_updated,
        (extract(epoch FROM a.sort_date - timestamptz '2000-01-01 00:00:00+00') * 1000000)::bigint, a.details
        """
    static let sortDateMicrosecondsColumn = 30
    private static let pageTypes: [PGType] = [.int8, .timestamptz, .timestamptz, .bool, .int8, .int8, .int8]
    /// Newest first; $4 for the first page, else rows after ($5 sort date in µs, $6 id) in that order.
    private static let pageFilter = """
        a.sort_date >= $2 AND a.last_updated >= $3
          AND ($4 OR (a.sort_date, a.id) < (timestamptz '2000-01-01 00:00:00+00' + $5 * interval '1 microsecond', $6))
        ORDER BY a.sort_date DESC, a.id DESC LIMIT $7
        """
    static let articlesOfFeed = statement("articles_of_feed", pageTypes, """
        SELECT \(articleColumns) FROM articles a JOIN feeds f ON f.id = a.feed_id WHERE a.feed_id = $1 AND \(pageFilter)
        """)
    static let articlesOfAllFeeds = statement("articles_all", pageTypes, """
        SELECT \(articleColumns) FROM articles a JOIN feeds f ON f.id = a.feed_id WHERE $1 = $1 AND \(pageFilter)
        """)
    static let articleByID = statement("article_by_id", [.int8],
                                       "SELECT \(articleColumns) FROM articles a JOIN feeds f ON f.id = a.feed_id WHERE a.id = $1")
    static let countOfFeed = statement("count_feed", [.int8], "SELECT count(*) FROM articles WHERE feed_id = $1")
    static let countAll = statement("count_all", [], "SELECT count(*) FROM articles")
    static let integrity = statement("integrity", [], """
        SELECT 'feed ' || f.id || ' counts ' || f.article_count || ' articles but has ' || coalesce(c.n, 0)
        FROM feeds f LEFT JOIN (SELECT feed_id, count(*) AS n FROM articles GROUP BY feed_id) c ON c.feed_id = f.id
        WHERE f.article_count <> coalesce(c.n, 0)
        """)

    /// The claim, in one statement (after the claim lock, in the same transaction): the candidates ($1) that are due
    /// under the ``DuePolicy`` $6 and have no live lease, at most $5 live leases per host counting those held
    /// already (0: no limit), earliest due first, at most $2, skipping rows another transaction holds; each gets owner
    /// $3, an expiry $4 seconds ahead and its epoch incremented. Returns the leases with the feeds' validators.
    static let claim = statement("claim", [.int8Array, .int8, .text, .float8, .int8, .int8], """
        WITH busy AS (
            SELECT host, count(*) AS n FROM feeds
            WHERE lease_owner IS NOT NULL AND lease_until > now() AND host IS NOT NULL GROUP BY host),
        ranked AS (
            SELECT f.id, f.host, f.next_fetch,
                   row_number() OVER (PARTITION BY f.host ORDER BY f.next_fetch NULLS FIRST, f.id) + coalesce(b.n, 0) AS slot
            FROM feeds f LEFT JOIN busy b ON b.host = f.host
            WHERE f.id = ANY ($1::bigint[])
              AND ($6 = 2 OR f.next_fetch IS NULL OR f.next_fetch <= now() OR f.host IS NULL
                   OR ($6 = 1 AND NOT f.rate_limited AND f.consecutive_failures = 0))
              AND (f.lease_owner IS NULL OR f.lease_until <= now()))
        UPDATE feeds SET lease_owner = $3, lease_until = now() + $4 * interval '1 second', lease_epoch = lease_epoch + 1,
                         claimed_at = now()
        WHERE id IN (
            SELECT f.id FROM feeds f JOIN ranked r ON r.id = f.id
            WHERE r.host IS NULL OR $5 <= 0 OR r.slot <= $5
            ORDER BY r.next_fetch NULLS FIRST, f.id
            LIMIT $2
            FOR UPDATE OF f SKIP LOCKED)
          AND (lease_owner IS NULL OR lease_until <= now())
        RETURNING id, lease_epoch, lease_until, claimed_at, etag, last_modified, body_hash
        """)
    static let renewLeases = statement("renew_leases", [.text, .int8Array, .float8], """
        UPDATE feeds SET lease_until = now() + $3 * interval '1 second' WHERE lease_owner = $1 AND id = ANY ($2::bigint[])
        RETURNING id, lease_epoch, lease_until, claimed_at
        """)
    static let releaseLeases = statement("release_leases", [.text, .bool, .int8Array], """
        UPDATE feeds SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 AND ($2 OR id = ANY ($3::bigint[]))
        """)
    static let liveLeaseOwners = statement("live_lease_owners", [], """
        SELECT DISTINCT lease_owner FROM feeds WHERE lease_owner IS NOT NULL AND lease_until > now()
        """)
    /// 1 leased by $2, 2 leased by another, 3 not due under the ``DuePolicy`` $3, 0 claimable.
    static let claimStates = statement("claim_states", [.int8Array, .text, .int8], """
        SELECT id, CASE WHEN lease_owner IS NOT NULL AND lease_until > now() THEN (CASE WHEN lease_owner = $2 THEN 1 ELSE 2 END)
                        WHEN $3 = 2 OR next_fetch IS NULL OR next_fetch <= now() OR host IS NULL
                             OR ($3 = 1 AND NOT rate_limited AND consecutive_failures = 0) THEN 0 ELSE 3 END
        FROM feeds WHERE id = ANY ($1::bigint[])
        """)
}
