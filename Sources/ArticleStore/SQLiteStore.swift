// The SQLite engine's connection: the SQL a context runs, the article column mapping (one column list, one bind
// routine, one row reader), and the claims. It calls SQLite only through SQLite.swift's wrappers.
import Foundation
import Scheduling
import Support
import Syndication

/// One SQLite connection as a ``StoreConnection``; confined to its context's thread.
final class SQLiteStoreConnection: StoreConnection {
    let connection: SQLiteConnection
    /// Checkpoints the log this connection writes, on a thread of its own (see ``Checkpointer``).
    private let checkpointer: Checkpointer?

    init(connection: SQLiteConnection, checkpointer: Checkpointer? = nil) {
        self.connection = connection
        self.checkpointer = checkpointer
        if let checkpointer {
            checkpointer.attach()
            connection.reportWALSize(to: checkpointer)
        }
    }

    deinit {
        guard let checkpointer else { return }
        connection.removeWALHook()
        checkpointer.detach()
    }

    var location: String { connection.path }
    var isInTransaction: Bool { connection.isInTransaction }

    func begin() throws(StoreError) { try connection.statement(SQL.begin).run() }
    var excludesOtherWriters: Bool { true }
    func commit() throws(StoreError) { try connection.statement(SQL.commit).run() }
    func rollback() {
        if connection.isInTransaction { try? connection.statement(SQL.rollback).run() }
    }

    // MARK: Feeds

    func ensureFeeds(_ urls: [String], now: Date) throws(StoreError) -> [FeedID] {
        let insert = try connection.statement(SQL.insertFeed)
        let select = try connection.statement(SQL.feedIDByURL)
        var ids: [FeedID] = []
        ids.reserveCapacity(urls.count)
        for url in urls {
            try insert.bind(url, at: 1)
            try insert.bind(now.timeIntervalSince1970, at: 2)
            try insert.bind(FeedHost.key(of: url), at: 3)
            try insert.run()
            try select.bind(url, at: 1)
            defer { select.reset() }
            guard try select.step() else {
                throw StoreError(kind: .sqlite, code: .internal, message: "feed row missing after insert",
                                 path: location, operation: SQL.feedIDByURL.sql)
            }
            ids.append(FeedID(rawValue: select.int64(0)))
        }
        return ids
    }

    func setTags(_ feed: FeedID, _ tags: String?) throws(StoreError) {
        let update = try connection.statement(SQL.setTags)
        try update.bind(feed.rawValue, at: 1)
        try update.bind(tags, at: 2)
        try update.run()
    }

    func subscribe(_ feeds: [FeedID], source: SubscriptionSource) throws(StoreError) -> Int {
        let update = try connection.statement(SQL.subscribe)
        try update.bind(Self.jsonArray(feeds), at: 1)
        switch source {
        case .list(let path):
            try update.bind(path, at: 2)
            try update.bind(1, at: 3)
        case .byHand:
            try update.bind(nil as String?, at: 2)
            try update.bind(1, at: 3)
        case .oneOff:
            try update.bind(nil as String?, at: 2)
            try update.bind(0, at: 3)
        }
        try update.run()
        return connection.changes
    }

    func unsubscribe(listSource: String, except feeds: [FeedID]) throws(StoreError) -> Int {
        let update = try connection.statement(SQL.unsubscribeList)
        try update.bind(listSource, at: 1)
        try update.bind(Self.jsonArray(feeds), at: 2)
        try update.run()
        return connection.changes
    }

    func unsubscribe(_ feeds: [FeedID]) throws(StoreError) -> Int {
        let update = try connection.statement(SQL.unsubscribe)
        try update.bind(Self.jsonArray(feeds), at: 1)
        try update.run()
        return connection.changes
    }

    func deleteFeeds(_ feeds: [FeedID]) throws(StoreError) -> Int {
        let delete = try connection.statement(SQL.deleteFeeds)
        try delete.bind(Self.jsonArray(feeds), at: 1)
        try delete.run()
        return connection.changes
    }

    func feedID(url: String) throws(StoreError) -> FeedID? {
        let select = try connection.statement(SQL.feedIDByURL)
        try select.bind(url, at: 1)
        defer { select.reset() }
        return try select.step() ? FeedID(rawValue: select.int64(0)) : nil
    }

    func feedStatus(_ feed: FeedID) throws(StoreError) -> FeedStatus? {
        let select = try connection.statement(SQL.feedByID)
        try select.bind(feed.rawValue, at: 1)
        defer { select.reset() }
        return try select.step() ? Self.feedStatus(from: select) : nil
    }

    func feedStatuses() throws(StoreError) -> [FeedStatus] {
        let select = try connection.statement(SQL.allFeeds)
        defer { select.reset() }
        var feeds: [FeedStatus] = []
        while try select.step() { feeds.append(Self.feedStatus(from: select)) }
        return feeds
    }

    func feedStatuses(_ feeds: [FeedID]) throws(StoreError) -> [FeedStatus] {
        let select = try connection.statement(SQL.feedsByIDs)
        try select.bind(Self.jsonArray(feeds), at: 1)
        defer { select.reset() }
        var statuses: [FeedStatus] = []
        while try select.step() { statuses.append(Self.feedStatus(from: select)) }
        return statuses
    }

    func consecutiveFailures(_ feed: FeedID) throws(StoreError) -> Int? {
        let select = try connection.statement(SQL.failuresOfFeed)
        try select.bind(feed.rawValue, at: 1)
        defer { select.reset() }
        return try select.step() ? Int(select.int64(0)) : nil
    }

    // MARK: Writing

    func verifyLease(_ lease: FeedLease) throws(StoreError) {
        // Inside BEGIN IMMEDIATE: the write lock is held, so no claim can move the epoch before COMMIT.
        let select = try connection.statement(SQL.leaseOfFeed)
        try select.bind(lease.feed.rawValue, at: 1)
        defer { select.reset() }
        guard try select.step() else {
            throw StoreError(kind: .unknownFeed(lease.feed), message: "\(lease.feed) is not in this store", path: location,
                             operation: "check the lease")
        }
        let epoch = select.int64(0)
        let owner = select.text(1)
        guard epoch == lease.epoch, owner == lease.owner else {
            throw Self.leaseLost(lease, epoch: epoch, owner: owner, location: location)
        }
    }

    static func leaseLost(_ lease: FeedLease, epoch: Int64, owner: String?, location: String) -> StoreError {
        let holder = owner.map { "now held by \($0)" } ?? "since finished or released"
        return StoreError(kind: .leaseLost(lease.feed),
                          message: "lease lost: \(lease.feed) was claimed again (epoch \(epoch), ours \(lease.epoch); \(holder)); "
                            + "results not written", path: location, operation: "check the lease")
    }

    func write(_ article: Article, row: ArticleRow, feed: FeedID, now: Date, knownAbsent: Bool) throws(StoreError) -> (ArticleID, ArticleChange) {
        let contentHash = row.contentHash
        let keyHash = row.keyHash
        let seconds = now.timeIntervalSince1970
        if !knownAbsent, let existing = try lookup(feed, row.bytes(.key), keyHash) {
            if existing.contentHash == contentHash {
                if existing.commentCount != article.commentCount.map(Int64.init) {
                    let statement = try connection.statement(SQL.updateCommentCount)
                    try statement.bind(existing.id, at: 1)
                    try statement.bind(article.commentCount, at: 2)
                    try statement.run()
                }
                return (ArticleID(rawValue: existing.id), .unchanged)
            }
            try bindArticle(try connection.statement(SQL.updateArticle), article, row, contentHash, keyHash,
                            rowOrFeed: existing.id, now: seconds).run()
            return (ArticleID(rawValue: existing.id), .updated)
        }
        try bindArticle(try connection.statement(SQL.insertArticle), article, row, contentHash, keyHash,
                        rowOrFeed: feed.rawValue, now: seconds).run()
        return (ArticleID(rawValue: connection.lastInsertRowID), .new)
    }

    func hasArticle(feed: FeedID, key: String) throws(StoreError) -> Bool {
        let select = try connection.statement(SQL.lookupArticle)
        try select.bind(key, at: 2)
        try select.bind(ArticleRow.keyHash(key), at: 3)
        return try lookup(feed, select) != nil
    }

    func deleteArticle(feed: FeedID, key: String) throws(StoreError) -> Int {
        let delete = try connection.statement(SQL.deleteArticleByKey)
        try delete.bind(feed.rawValue, at: 1)
        try delete.bind(key, at: 2)
        try delete.bind(ArticleRow.keyHash(key), at: 3)
        try delete.run()
        return connection.changes
    }

    func rekeyArticle(feed: FeedID, from: String, to: String, source: String) throws(StoreError) {
        let statement = try connection.statement(SQL.rekeyArticle)
        try statement.bind(feed.rawValue, at: 1)
        try statement.bind(from, at: 2)
        try statement.bind(ArticleRow.keyHash(from), at: 3)
        try statement.bind(to, at: 4)
        try statement.bind(ArticleRow.keyHash(to), at: 5)
        try statement.bind(source, at: 6)
        try statement.run()
    }

    func setKeyMode(_ feed: FeedID, _ mode: ArticleKeyMode) throws(StoreError) {
        let statement = try connection.statement(SQL.setKeyMode)
        try statement.bind(feed.rawValue, at: 1)
        try statement.bind(mode.rawValue, at: 2)
        try statement.run()
    }

    func addArticleCount(_ feed: FeedID, _ delta: Int64) throws(StoreError) {
        let statement = try connection.statement(SQL.addArticleCount)
        try statement.bind(feed.rawValue, at: 1)
        try statement.bind(delta, at: 2)
        try statement.run()
    }

    func complete(_ feed: FeedID, _ completion: FeedCompletion, releasing lease: FeedLease?) throws(StoreError) {
        switch completion {
        case .updated(let success, let seen, let new, let updated, let next):
            try finish(feed, success, next: next, counts: (seen, new, updated))
        case .notModified(let success, let next):
            try finish(feed, success, next: next, counts: nil)
        case .failed(let failure, let failures, let next):
            let update = try connection.statement(SQL.finishFailed)
            try update.bind(feed.rawValue, at: 1)
            try update.bind(failure.date.timeIntervalSince1970, at: 2)
            try update.bind(failure.error, at: 3)
            try update.bind(next.timeIntervalSince1970, at: 4)
            try update.bind(failure.counts ? 0 : 1, at: 5)
            try update.bind(failures, at: 6)
            try update.bind(failure.kind, at: 7)
            try update.run()
        }
        if let lease {
            let release = try connection.statement(SQL.releaseLease)
            try release.bind(feed.rawValue, at: 1)
            try release.bind(lease.epoch, at: 2)
            try release.run()
        }
    }

    func recentEntryDates(_ feed: FeedID, limit: Int) throws(StoreError) -> [Date] {
        let select = try connection.statement(SQL.recentEntryDates)
        try select.bind(feed.rawValue, at: 1)
        try select.bind(limit, at: 2)
        defer { select.reset() }
        var dates: [Date] = []
        while try select.step() { if let seconds = select.double(0) { dates.append(Date(timeIntervalSince1970: seconds)) } }
        return dates
    }

    func recordSchedule(_ feed: FeedID, _ record: ScheduleRecord) throws(StoreError) {
        let statement = try connection.statement(SQL.recordSchedule)
        try statement.bind(feed.rawValue, at: 1)
        try statement.bind(record.interval, at: 2)
        try statement.bind(record.writesHints ? 1 : 0, at: 3)
        try statement.bind(record.refreshHint, at: 4)
        try statement.bind(record.clearsRefreshHint ? 1 : 0, at: 5)
        try statement.bind(record.maxAge, at: 6)
        try statement.bind(record.expires?.timeIntervalSince1970, at: 7)
        try statement.bind(record.reason.rawValue, at: 8)
        try statement.run()
    }

    private func finish(_ feed: FeedID, _ success: FeedSuccess, next: Date?, counts: (Int, Int, Int)?) throws(StoreError) {
        let statement = try connection.statement(success.notModified ? SQL.finishNotModified : SQL.finishUpdated)
        try statement.bind(feed.rawValue, at: 1)
        try statement.bind(success.validators.etag, at: 2)
        try statement.bind(success.validators.lastModified, at: 3)
        try statement.bind(success.validators.bodyHash, at: 4)
        try statement.bind(success.currentURL, at: 5)
        try statement.bind(success.title, at: 6)
        try statement.bind(success.homeLink, at: 7)
        try statement.bind(success.date.timeIntervalSince1970, at: 8)
        try statement.bind(next?.timeIntervalSince1970, at: 9)
        if let counts {
            try statement.bind(counts.0, at: 10)
            try statement.bind(counts.1, at: 11)
            try statement.bind(counts.2, at: 12)
        }
        try statement.run()
    }

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

    /// The article column mapping, writing: binds the article encoded in `row` to ``SQL/insertArticle`` or
    /// ``SQL/updateArticle`` (same parameter numbers). Text is bound from the row's buffer without a copy.
    private func bindArticle(_ statement: SQLiteStatement, _ article: Article, _ row: ArticleRow, _ contentHash: UInt64,
                             _ keyHash: Int64, rowOrFeed: Int64, now: Double) throws(StoreError) -> SQLiteStatement {
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
        try statement.bind(utf8: row.bytes(.details), at: 29)
        return statement
    }

    // MARK: Reading

    func forEachArticle(_ query: ArticleQuery, _ body: (ArticleRecord) -> Void) throws(StoreError) {
        let select = try connection.statement(query.feed == nil ? SQL.articlesOfAllFeeds : SQL.articlesOfFeed)
        try select.bind(query.feed?.rawValue, at: 1)
        try select.bind(query.since?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude, at: 2)
        try select.bind(Int64(query.limit.map { max($0, 0) } ?? -1), at: 3)
        try select.bind(query.changedSince?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude, at: 4)
        defer { select.reset() }
        while try select.step() { body(try record(from: select)) }
    }

    func article(_ id: ArticleID) throws(StoreError) -> ArticleRecord? {
        let select = try connection.statement(SQL.articleByID)
        try select.bind(id.rawValue, at: 1)
        defer { select.reset() }
        return try select.step() ? try record(from: select) : nil
    }

    func articleCount(feed: FeedID?) throws(StoreError) -> Int {
        let select = try connection.statement(feed == nil ? SQL.countAll : SQL.countOfFeed)
        if let feed { try select.bind(feed.rawValue, at: 1) }
        defer { select.reset() }
        return try select.step() ? Int(select.int64(0)) : 0
    }

    func integrityCheck() throws(StoreError) -> [String] {
        let rows = try connection.texts("PRAGMA integrity_check")
        return rows == ["ok"] ? [] : rows
    }

    /// The article column mapping, reading: one row of ``SQL/articleColumns``.
    private func record(from row: SQLiteStatement) throws(StoreError) -> ArticleRecord {
        var values = ArticleRecordValues()
        values.id = row.int64(0)
        values.feedID = row.int64(1)
        values.feedURL = row.text(2)
        values.key = row.text(3)
        values.keySource = row.text(4)
        values.identifier = row.text(5)
        values.idSource = row.text(6)
        values.title = row.text(7)
        values.link = row.text(8)
        values.published = row.double(9)
        values.publishedRaw = row.text(10)
        values.updated = row.double(11)
        values.updatedRaw = row.text(12)
        values.authors = row.text(13)
        values.summary = row.text(14)
        values.summaryType = row.text(15)
        values.content = row.text(16)
        values.contentType = row.text(17)
        values.categories = row.text(18)
        values.enclosures = row.text(19)
        values.image = row.text(20)
        values.comments = row.text(21)
        values.commentsFeed = row.text(22)
        values.commentCount = row.optionalInt64(23)
        values.language = row.text(24)
        values.podcast = row.text(25)
        values.contentHash = row.int64(26)
        values.sortDate = row.double(27)
        values.firstSeen = row.double(28)
        values.lastUpdated = row.double(29)
        values.details = row.text(30)
        return try values.record(location: location)
    }

    private static func feedStatus(from row: SQLiteStatement) -> FeedStatus {
        var status = FeedStatus(
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
            isRateLimited: row.int64(20) != 0, errorKind: row.text(21), host: row.text(22), leaseOwner: row.text(23),
            leaseUntil: row.double(24).map(Date.init(timeIntervalSince1970:)), leaseEpoch: row.int64(25))
        status.interval = row.double(26)
        status.scheduleReason = row.text(27).flatMap(ScheduleReason.init(rawValue:))
        status.refreshHint = row.double(28)
        status.maxAge = row.double(29)
        status.expires = row.double(30).map(Date.init(timeIntervalSince1970:))
        status.isSubscribed = row.int64(31) != 0
        status.listSource = row.text(32)
        return status
    }

    // MARK: Claims

    func claim(_ request: ClaimRequest) throws(StoreError) -> [FeedLease] {
        // One statement in autocommit mode: it takes the write lock (waiting up to the busy timeout), so claims of
        // every connection and process are serialised and the per-host counts are exact.
        let now = Date().timeIntervalSince1970
        let statement = try connection.statement(SQL.claim)
        try statement.bind(Self.jsonArray(request.candidates), at: 1)
        try statement.bind(now, at: 2)
        try statement.bind(request.due.rawValue, at: 3)
        try statement.bind(request.perHostLimit, at: 4)
        try statement.bind(request.limit, at: 5)
        try statement.bind(request.owner, at: 6)
        try statement.bind(now + request.duration.seconds, at: 7)
        defer { statement.reset() }
        var leases: [FeedLease] = []
        while try statement.step() {
            leases.append(FeedLease(
                feed: FeedID(rawValue: statement.int64(0)), epoch: statement.int64(1), owner: request.owner,
                until: Date(timeIntervalSince1970: statement.double(2) ?? now),
                claimedAt: Date(timeIntervalSince1970: statement.double(3) ?? now),
                validators: FeedValidators(etag: statement.text(4), lastModified: statement.text(5), bodyHash: statement.text(6))))
        }
        return leases
    }

    func renewLeases(owner: String, feeds: [FeedID], duration: Duration) throws(StoreError) -> [FeedLease] {
        let now = Date().timeIntervalSince1970
        let statement = try connection.statement(SQL.renewLeases)
        try statement.bind(owner, at: 1)
        try statement.bind(Self.jsonArray(feeds), at: 2)
        try statement.bind(now + duration.seconds, at: 3)
        defer { statement.reset() }
        var leases: [FeedLease] = []
        while try statement.step() {
            leases.append(FeedLease(feed: FeedID(rawValue: statement.int64(0)), epoch: statement.int64(1), owner: owner,
                                    until: Date(timeIntervalSince1970: statement.double(2) ?? now),
                                    claimedAt: Date(timeIntervalSince1970: statement.double(3) ?? now)))
        }
        return leases
    }

    func releaseLeases(owner: String, feeds: [FeedID]?) throws(StoreError) {
        let statement = try connection.statement(SQL.releaseLeases)
        try statement.bind(owner, at: 1)
        try statement.bind(feeds.map(Self.jsonArray), at: 2)
        try statement.run()
    }

    func claimStates(_ feeds: [FeedID], owner: String, due: DuePolicy) throws(StoreError) -> [FeedID: ClaimState] {
        let now = Date().timeIntervalSince1970
        let select = try connection.statement(SQL.claimStates)
        try select.bind(Self.jsonArray(feeds), at: 1)
        defer { select.reset() }
        var states: [FeedID: ClaimState] = [:]
        while try select.step() {
            let leaseOwner = select.text(1)
            let live = leaseOwner != nil && (select.double(2) ?? 0) > now
            let state: ClaimState
            if live, leaseOwner == owner {
                state = .leasedHere
            } else if live {
                state = .leasedElsewhere
            } else if !due.isDue(nextFetch: select.double(3).map(Date.init(timeIntervalSince1970:)), isLocal: select.text(4) == nil,
                                 isRateLimited: select.int64(5) != 0, consecutiveFailures: Int(select.int64(6)),
                                 at: Date(timeIntervalSince1970: now)) {
                state = .notDue
            } else {
                state = .claimable
            }
            states[FeedID(rawValue: select.int64(0))] = state
        }
        return states
    }

    func liveLeaseOwners(now: Date) throws(StoreError) -> [String] {
        let select = try connection.statement(SQL.liveLeaseOwners)
        try select.bind(now.timeIntervalSince1970, at: 1)
        defer { select.reset() }
        var owners: [String] = []
        while try select.step() {
            if let owner = select.text(0) { owners.append(owner) }
        }
        return owners
    }

    /// Feed identifiers as a JSON array, for `json_each`.
    private static func jsonArray(_ feeds: [FeedID]) -> String {
        "[" + feeds.map { String($0.rawValue) }.joined(separator: ",") + "]"
    }
}

/// The SQL the SQLite contexts run, each prepared once per connection and cached.
enum SQL {
    private static func key(_ index: Int, _ sql: String) -> SQLiteStatement.Key { SQLiteStatement.Key(index: index, sql: sql) }

    static let begin = key(0, "BEGIN IMMEDIATE")
    static let commit = key(1, "COMMIT")
    static let rollback = key(2, "ROLLBACK")

    /// A new feed with its host; an existing one gets its host when it had none (stores older than version 4).
    static let insertFeed = key(3, """
        INSERT INTO feeds (url, created_at, host) VALUES (?1, ?2, ?3)
        ON CONFLICT (url) DO UPDATE SET host = excluded.host WHERE feeds.host IS NOT excluded.host
        """)
    static let feedIDByURL = key(4, "SELECT id FROM feeds WHERE url = ?1")
    static let setTags = key(41, "UPDATE feeds SET tags = ?2 WHERE id = ?1")

    static let feedColumns = """
        id, url, title, home_url, current_url, etag, last_modified, body_hash, key_mode, last_attempt, last_success,
        outcome, error, consecutive_failures, next_fetch, article_count, last_seen_count, last_new_count, last_updated_count,
        tags, rate_limited, error_kind, host, lease_owner, lease_until, lease_epoch, fetch_interval, schedule_reason,
        refresh_hint, max_age, expires, subscribed, list_source
        """
    static let recentEntryDates = key(42, """
        SELECT coalesce(published, updated) FROM articles
        WHERE feed_id = ?1 AND coalesce(published, updated) IS NOT NULL ORDER BY sort_date DESC LIMIT ?2
        """)
    /// The adaptive schedule's record; hints only when ?3 (a success), the refresh hint kept when ?4 is NULL and ?5 = 0.
    static let recordSchedule = key(43, """
        UPDATE feeds SET fetch_interval = ?2, schedule_reason = ?8,
            refresh_hint = CASE WHEN ?3 = 0 THEN refresh_hint WHEN ?4 IS NULL AND ?5 = 0 THEN refresh_hint ELSE ?4 END,
            max_age = CASE WHEN ?3 = 0 THEN max_age ELSE ?6 END, expires = CASE WHEN ?3 = 0 THEN expires ELSE ?7 END
        WHERE id = ?1
        """)
    static let feedByID = key(5, "SELECT \(feedColumns) FROM feeds WHERE id = ?1")
    static let allFeeds = key(6, "SELECT \(feedColumns) FROM feeds ORDER BY url")
    static let feedsByIDs = key(30, "SELECT \(feedColumns) FROM feeds WHERE id IN (SELECT value FROM json_each(?1))")

    static let lookupArticle = key(7, """
        SELECT id, content_hash, comment_count FROM articles WHERE feed_id = ?1 AND key_hash = ?3 AND key = ?2
        """)
    /// The article column mapping's column list (writing); ``SQLiteStoreConnection`` binds it in one routine.
    static let insertArticle = key(8, """
        INSERT INTO articles (feed_id, key, key_source, identifier, id_source, title, link, published, published_raw,
            updated, updated_raw, authors, summary, summary_type, content, content_type, categories, enclosures, image,
            comments, comments_feed, comment_count, language, podcast, content_hash, sort_date, first_seen, last_updated,
            key_hash, details)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
            ?23, ?24, ?25, ?26, ?27, ?27, ?28, ?29)
        """)
    // The same parameter numbers as insertArticle, so one binding routine serves both: ?1 is the row id here,
    // ?2, ?3, ?26 and ?28 (key, key source, sort date, key hash) are bound but unused (SQLite allows gaps in
    // numbered parameters, up to the highest one used: hence the no-op `?28 = ?28`), and the time bound to ?27
    // becomes last_updated.
    static let updateArticle = key(9, """
        UPDATE articles SET identifier = ?4, id_source = ?5, title = ?6, link = ?7, published = ?8, published_raw = ?9,
            updated = ?10, updated_raw = ?11, authors = ?12, summary = ?13, summary_type = ?14, content = ?15,
            content_type = ?16, categories = ?17, enclosures = ?18, image = ?19, comments = ?20, comments_feed = ?21,
            comment_count = ?22, language = ?23, podcast = ?24, content_hash = ?25, details = ?29,
            sort_date = coalesce(?8, ?10, first_seen), last_updated = ?27
        WHERE id = ?1 AND ?28 = ?28
        """)
    static let updateCommentCount = key(10, "UPDATE articles SET comment_count = ?2 WHERE id = ?1")
    static let addArticleCount = key(11, "UPDATE feeds SET article_count = article_count + ?2 WHERE id = ?1")

    static let setKeyMode = key(12, "UPDATE feeds SET key_mode = ?2 WHERE id = ?1")
    static let deleteArticleByKey = key(13, "DELETE FROM articles WHERE feed_id = ?1 AND key_hash = ?3 AND key = ?2")
    static let rekeyArticle = key(14, """
        UPDATE articles SET key = ?4, key_hash = ?5, key_source = ?6 WHERE feed_id = ?1 AND key_hash = ?3 AND key = ?2
        """)

    static let finishUpdated = key(15, """
        UPDATE feeds SET etag = ?2, last_modified = ?3, body_hash = ?4, current_url = coalesce(?5, current_url),
            title = coalesce(?6, title), home_url = coalesce(?7, home_url), last_attempt = ?8, last_success = ?8,
            outcome = 'updated', error = NULL, error_kind = NULL, consecutive_failures = 0, next_fetch = ?9, rate_limited = 0,
            last_seen_count = ?10, last_new_count = ?11, last_updated_count = ?12
        WHERE id = ?1
        """)
    static let finishNotModified = key(16, """
        UPDATE feeds SET etag = coalesce(?2, etag), last_modified = coalesce(?3, last_modified),
            body_hash = coalesce(?4, body_hash), current_url = coalesce(?5, current_url), title = coalesce(?6, title),
            home_url = coalesce(?7, home_url), last_attempt = ?8, last_success = ?8, outcome = 'not-modified',
            error = NULL, error_kind = NULL, consecutive_failures = 0, next_fetch = ?9, rate_limited = 0
        WHERE id = ?1
        """)
    static let failuresOfFeed = key(17, "SELECT consecutive_failures FROM feeds WHERE id = ?1")
    /// A failed fetch: the error and the next allowed fetch; unless it was refused for now (?5 = 1, a 429), also the
    /// outcome and the failure count (?6), which a refusal leaves as they were.
    static let finishFailed = key(18, """
        UPDATE feeds SET last_attempt = ?2, error = ?3, next_fetch = ?4, rate_limited = ?5, error_kind = ?7,
            outcome = CASE ?5 WHEN 1 THEN outcome ELSE 'failed' END,
            consecutive_failures = CASE ?5 WHEN 1 THEN consecutive_failures ELSE ?6 END
        WHERE id = ?1
        """)

    /// The article column mapping's column list (reading); ``SQLiteStoreConnection/record(from:)`` reads it.
    static let articleColumns = """
        a.id, a.feed_id, f.url, a.key, a.key_source, a.identifier, a.id_source, a.title, a.link, a.published,
        a.published_raw, a.updated, a.updated_raw, a.authors, a.summary, a.summary_type, a.content, a.content_type,
        a.categories, a.enclosures, a.image, a.comments, a.comments_feed, a.comment_count, a.language, a.podcast,
        a.content_hash, a.sort_date, a.first_seen, a.last_updated, a.details
        """
    static let articlesOfFeed = key(19, """
        SELECT \(articleColumns) FROM articles a JOIN feeds f ON f.id = a.feed_id
        WHERE a.feed_id = ?1 AND a.sort_date >= ?2 AND a.last_updated >= ?4 ORDER BY a.sort_date DESC, a.id DESC LIMIT ?3
        """)
    static let articlesOfAllFeeds = key(20, """
        SELECT \(articleColumns) FROM articles a JOIN feeds f ON f.id = a.feed_id
        WHERE a.sort_date >= ?2 AND a.last_updated >= ?4 AND ?1 IS NULL ORDER BY a.sort_date DESC, a.id DESC LIMIT ?3
        """)
    static let articleByID = key(21, "SELECT \(articleColumns) FROM articles a JOIN feeds f ON f.id = a.feed_id WHERE a.id = ?1")
    static let countOfFeed = key(22, "SELECT count(*) FROM articles WHERE feed_id = ?1")
    static let countAll = key(23, "SELECT count(*) FROM articles")

    // Claims and leases (schema version 4).
    static let leaseOfFeed = key(24, "SELECT lease_epoch, lease_owner FROM feeds WHERE id = ?1")
    static let releaseLease = key(25, "UPDATE feeds SET lease_owner = NULL, lease_until = NULL WHERE id = ?1 AND lease_epoch = ?2")
    /// The claim: candidates (?1, a JSON array) that are due at ?2 under the ``DuePolicy`` ?3 and have no
    /// live lease, at most ?4 live leases per host counting those held already (0: no limit), earliest due first, at
    /// most ?5; each gets owner ?6, expiry ?7 and its epoch incremented. SQLite has no `FOR UPDATE SKIP LOCKED`: the
    /// statement holds the write lock, so claims are serialised and a row cannot change between the choice and the
    /// update.
    static let claim = key(26, """
        WITH busy AS (
            SELECT host, count(*) AS n FROM feeds
            WHERE lease_owner IS NOT NULL AND lease_until > ?2 AND host IS NOT NULL GROUP BY host),
        ranked AS (
            SELECT f.id AS id, f.host AS host, f.next_fetch AS next_fetch,
                row_number() OVER (PARTITION BY f.host ORDER BY f.next_fetch, f.id) + coalesce(b.n, 0) AS slot
            FROM feeds f LEFT JOIN busy b ON b.host = f.host
            WHERE f.id IN (SELECT value FROM json_each(?1))
              AND (?3 = 2 OR f.next_fetch IS NULL OR f.next_fetch <= ?2 OR f.host IS NULL
                   OR (?3 = 1 AND f.rate_limited = 0 AND f.consecutive_failures = 0))
              AND (f.lease_owner IS NULL OR f.lease_until <= ?2))
        UPDATE feeds SET lease_owner = ?6, lease_until = ?7, lease_epoch = lease_epoch + 1, claimed_at = ?2
        WHERE id IN (SELECT id FROM ranked WHERE host IS NULL OR ?4 <= 0 OR slot <= ?4 ORDER BY next_fetch, id LIMIT ?5)
        RETURNING id, lease_epoch, lease_until, claimed_at, etag, last_modified, body_hash
        """)
    static let renewLeases = key(27, """
        UPDATE feeds SET lease_until = ?3 WHERE lease_owner = ?1 AND id IN (SELECT value FROM json_each(?2))
        RETURNING id, lease_epoch, lease_until, claimed_at
        """)
    static let releaseLeases = key(28, """
        UPDATE feeds SET lease_owner = NULL, lease_until = NULL
        WHERE lease_owner = ?1 AND (?2 IS NULL OR id IN (SELECT value FROM json_each(?2)))
        """)
    /// Subscribes ?1 (a JSON array); sets the list source to ?2 when ?3 = 1. Counts only the rows that change.
    static let subscribe = key(45, """
        UPDATE feeds SET subscribed = 1, list_source = CASE WHEN ?3 = 1 THEN ?2 ELSE list_source END
        WHERE id IN (SELECT value FROM json_each(?1))
          AND (subscribed = 0 OR (?3 = 1 AND list_source IS NOT ?2))
        """)
    static let unsubscribeList = key(46, """
        UPDATE feeds SET subscribed = 0
        WHERE list_source = ?1 AND subscribed = 1 AND id NOT IN (SELECT value FROM json_each(?2))
        """)
    static let unsubscribe = key(47, """
        UPDATE feeds SET subscribed = 0, list_source = NULL WHERE id IN (SELECT value FROM json_each(?1)) AND subscribed = 1
        """)
    /// Feeds and (through their foreign key) their articles.
    static let deleteFeeds = key(48, "DELETE FROM feeds WHERE id IN (SELECT value FROM json_each(?1))")
    static let liveLeaseOwners = key(44, """
        SELECT DISTINCT lease_owner FROM feeds WHERE lease_owner IS NOT NULL AND lease_until > ?1
        """)
    static let claimStates = key(29, """
        SELECT id, lease_owner, lease_until, next_fetch, host, rate_limited, consecutive_failures
        FROM feeds WHERE id IN (SELECT value FROM json_each(?1))
        """)
}
