// The SQLite engine's download tracker (schema versions 7 and 8): its SQL and its row reader.
import Foundation

extension SQLiteStoreConnection {
    func insertDownload(_ candidate: DownloadCandidate, now: Date) throws(StoreError) -> DownloadQueueOutcome {
        let insert = try connection.statement(DownloadSQL.insert)
        try insert.bind(candidate.url, at: 1)
        try insert.bind(candidate.path, at: 2)
        try insert.bind(candidate.feed?.rawValue, at: 3)
        try insert.bind(candidate.article?.rawValue, at: 4)
        try insert.bind(candidate.mediaType, at: 5)
        try insert.bind(candidate.articleDate?.timeIntervalSince1970, at: 6)
        try insert.bind(now.timeIntervalSince1970, at: 7)
        let inserted: Int64?
        do {
            defer { insert.reset() }
            inserted = try insert.step() ? insert.int64(0) : nil
        }
        if let inserted { return .queued(DownloadID(rawValue: inserted)) }
        let select = try connection.statement(DownloadSQL.idByURL)
        try select.bind(candidate.url, at: 1)
        defer { select.reset() }
        return try select.step() ? .known(DownloadID(rawValue: select.int64(0))) : .pathTaken
    }

    func downloadPathTaken(_ path: String) throws(StoreError) -> Bool {
        let select = try connection.statement(DownloadSQL.idByPath)
        try select.bind(path, at: 1)
        defer { select.reset() }
        return try select.step()
    }

    func claimDownload(owner: String, duration: Duration, now: Date) throws(StoreError) -> DownloadRecord? {
        // One statement in autocommit mode: it takes the write lock, so claims of every process are serialised.
        let claim = try connection.statement(DownloadSQL.claim)
        try claim.bind(owner, at: 1)
        try claim.bind(now.timeIntervalSince1970, at: 2)
        try claim.bind(now.timeIntervalSince1970 + duration.seconds, at: 3)
        defer { claim.reset() }
        return try claim.step() ? Self.download(from: claim) : nil
    }

    func updateDownload(_ lease: DownloadRecord, _ progress: DownloadProgress, duration: Duration, now: Date) throws(StoreError) -> Bool {
        let update = try connection.statement(DownloadSQL.progress)
        try bindLease(update, lease, progress)
        try update.bind(now.timeIntervalSince1970 + duration.seconds, at: 8)
        try update.bind(now.timeIntervalSince1970, at: 9)
        try update.run()
        return connection.changes == 1
    }

    func finishDownload(_ lease: DownloadRecord, state: DownloadState, progress: DownloadProgress, error: String?, errorKind: String?,
                        httpStatus: Int?, permanentFailure: Bool, now: Date) throws(StoreError) -> Bool {
        let update = try connection.statement(DownloadSQL.finish)
        try bindLease(update, lease, progress)
        try update.bind(state.rawValue, at: 8)
        try update.bind(error, at: 9)
        try update.bind(errorKind, at: 10)
        try update.bind(now.timeIntervalSince1970, at: 11)
        try update.bind(httpStatus, at: 12)
        try update.bind(Int64(permanentFailure ? 1 : 0), at: 13)
        try update.run()
        return connection.changes == 1
    }

    func requeueFailedDownloads(now: Date) throws(StoreError) -> Int {
        let update = try connection.statement(DownloadSQL.requeue)
        try update.bind(now.timeIntervalSince1970, at: 1)
        try update.run()
        return connection.changes
    }

    private func bindLease(_ statement: SQLiteStatement, _ lease: DownloadRecord, _ progress: DownloadProgress) throws(StoreError) {
        try statement.bind(lease.id.rawValue, at: 1)
        try statement.bind(lease.leaseEpoch, at: 2)
        try statement.bind(lease.leaseOwner, at: 3)
        try statement.bind(progress.finalURL, at: 4)
        try statement.bind(progress.validator, at: 5)
        try statement.bind(progress.expectedLength, at: 6)
        try statement.bind(progress.committedOffset, at: 7)
    }

    func markDownloadsRemoved(_ ids: [DownloadID], now: Date) throws(StoreError) {
        let update = try connection.statement(DownloadSQL.remove)
        try update.bind("[" + ids.map { String($0.rawValue) }.joined(separator: ",") + "]", at: 1)
        try update.bind(now.timeIntervalSince1970, at: 2)
        try update.run()
    }

    func downloads() throws(StoreError) -> [DownloadRecord] {
        let select = try connection.statement(DownloadSQL.all)
        defer { select.reset() }
        var rows: [DownloadRecord] = []
        while try select.step() { rows.append(Self.download(from: select)) }
        return rows
    }

    /// One row of ``DownloadSQL/columns``.
    private static func download(from row: SQLiteStatement) -> DownloadRecord {
        func date(_ column: Int32) -> Date? { row.double(column).map(Date.init(timeIntervalSince1970:)) }
        return DownloadRecord(
            id: DownloadID(rawValue: row.int64(0)), url: row.text(1) ?? "", feed: row.optionalInt64(3).map(FeedID.init(rawValue:)),
            article: row.optionalInt64(4).map(ArticleID.init(rawValue:)), path: row.text(2) ?? "", mediaType: row.text(5),
            finalURL: row.text(6), validator: row.text(7), expectedLength: row.optionalInt64(8), committedOffset: row.int64(9),
            state: DownloadState(rawValue: row.text(10) ?? "") ?? .queued, attempts: Int(row.int64(11)), error: row.text(12),
            errorKind: row.text(13), httpStatus: row.optionalInt64(21).map { Int($0) }, isPermanentFailure: row.int64(22) != 0,
            leaseOwner: row.text(14), leaseUntil: date(15), leaseEpoch: row.int64(16),
            articleDate: date(17), queuedAt: date(18) ?? Date(timeIntervalSince1970: 0),
            updatedAt: date(19) ?? Date(timeIntervalSince1970: 0), completedAt: date(20))
    }
}

/// The download tracker's SQL (statement cache slots from 60 on).
enum DownloadSQL {
    private static func key(_ index: Int, _ sql: String) -> SQLiteStatement.Key { SQLiteStatement.Key(index: index, sql: sql) }

    static let columns = """
        id, url, path, feed_id, article_id, media_type, final_url, validator, expected_length, committed_offset, state,
        attempts, error, error_kind, lease_owner, lease_until, lease_epoch, article_date, queued_at, updated_at, completed_at,
        http_status, permanent_failure
        """
    /// A new row, or none when the URL or the path is taken (`DO NOTHING` without a target covers both).
    static let insert = key(60, """
        INSERT INTO downloads (url, path, feed_id, article_id, media_type, article_date, queued_at, updated_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
        ON CONFLICT DO NOTHING RETURNING id
        """)
    static let idByURL = key(61, "SELECT id FROM downloads WHERE url = ?1")
    static let idByPath = key(62, "SELECT id FROM downloads WHERE path = ?1")
    /// The next open row without a live lease, not attempted by this owner (?1) yet and not failed for good: partial
    /// ones first, then the oldest. SQLite has no `SKIP LOCKED`: the statement holds the write lock, so claims are
    /// serialised.
    static let claim = key(63, """
        UPDATE downloads SET state = 'downloading', lease_owner = ?1, lease_until = ?3, lease_epoch = lease_epoch + 1,
            attempts = attempts + 1, updated_at = ?2
        WHERE id = (
            SELECT id FROM downloads
            WHERE state IN ('queued', 'downloading', 'paused', 'failed')
              AND (lease_until IS NULL OR lease_until <= ?2)
              AND (lease_owner IS NULL OR lease_owner <> ?1)
              AND permanent_failure = 0
            ORDER BY committed_offset > 0 DESC, id LIMIT 1)
        RETURNING \(columns)
        """)
    static let progress = key(64, """
        UPDATE downloads SET final_url = coalesce(?4, final_url), validator = ?5, expected_length = ?6, committed_offset = ?7,
            lease_until = ?8, updated_at = ?9
        WHERE id = ?1 AND lease_epoch = ?2 AND lease_owner = ?3
        """)
    /// The end of an attempt: the lease ends (its expiry cleared) but the owner stays, so this run does not claim the
    /// row again.
    static let finish = key(65, """
        UPDATE downloads SET state = ?8, final_url = coalesce(?4, final_url), validator = ?5, expected_length = ?6,
            committed_offset = ?7, error = ?9, error_kind = ?10, lease_until = NULL, updated_at = ?11,
            completed_at = CASE ?8 WHEN 'done' THEN ?11 ELSE completed_at END, http_status = ?12, permanent_failure = ?13
        WHERE id = ?1 AND lease_epoch = ?2 AND lease_owner = ?3
        """)
    static let remove = key(66, """
        UPDATE downloads SET state = 'removed', updated_at = ?2 WHERE state = 'done' AND id IN (SELECT value FROM json_each(?1))
        """)
    static let all = key(67, "SELECT \(columns) FROM downloads ORDER BY id")
    /// The rows failed for good, claimable again: queued, without their error or lease owner.
    static let requeue = key(68, """
        UPDATE downloads SET state = 'queued', permanent_failure = 0, error = NULL, error_kind = NULL, http_status = NULL,
            lease_owner = NULL, lease_until = NULL, updated_at = ?1
        WHERE state = 'failed' AND permanent_failure = 1
        """)
}
