// The PostgreSQL engine's download tracker (schema versions 4 and 5): its SQL, the claim with FOR UPDATE SKIP LOCKED, and its
// row reader.
import ArticleStore
import Foundation
import Support

extension PostgresStoreConnection {
    func insertDownload(_ candidate: DownloadCandidate, now: Date) throws(StoreError) -> DownloadQueueOutcome {
        let inserted = try run(DownloadSQL.insert) { p in
            p.append(candidate.url)
            p.append(candidate.path)
            p.append(candidate.feed?.rawValue)
            p.append(candidate.article?.rawValue)
            p.append(candidate.mediaType)
            p.append(candidate.articleDate)
            p.append(now)
        }
        if inserted.rows > 0, let id = inserted.int64(0, 0) { return .queued(DownloadID(rawValue: id)) }
        let known = try run(DownloadSQL.idByURL) { $0.append(candidate.url) }
        if known.rows > 0, let id = known.int64(0, 0) { return .known(DownloadID(rawValue: id)) }
        return .pathTaken
    }

    func downloadPathTaken(_ path: String) throws(StoreError) -> Bool {
        try run(DownloadSQL.idByPath) { $0.append(path) }.rows > 0
    }

    func claimDownload(owner: String, duration: Duration, now: Date) throws(StoreError) -> DownloadRecord? {
        let result = try run(DownloadSQL.claim) { p in
            p.append(owner)
            p.append(duration.seconds)
        }
        return result.rows > 0 ? Self.download(result, 0) : nil
    }

    func updateDownload(_ lease: DownloadRecord, _ progress: DownloadProgress, duration: Duration, now: Date) throws(StoreError) -> Bool {
        let result = try run(DownloadSQL.progress) { p in
            Self.bindLease(&p, lease, progress)
            p.append(duration.seconds)
        }
        return result.rows == 1
    }

    func finishDownload(_ lease: DownloadRecord, state: DownloadState, progress: DownloadProgress, error: String?, errorKind: String?,
                        httpStatus: Int?, permanentFailure: Bool, now: Date) throws(StoreError) -> Bool {
        let result = try run(DownloadSQL.finish) { p in
            Self.bindLease(&p, lease, progress)
            p.append(state.rawValue)
            p.append(error)
            p.append(errorKind)
            p.append(httpStatus)
            p.append(permanentFailure)
        }
        return result.rows == 1
    }

    func requeueFailedDownloads(now: Date) throws(StoreError) -> Int {
        try run(DownloadSQL.requeue) { _ in }.rows
    }

    private static func bindLease(_ p: inout PGParameters, _ lease: DownloadRecord, _ progress: DownloadProgress) {
        p.append(lease.id.rawValue)
        p.append(lease.leaseEpoch)
        p.append(lease.leaseOwner)
        p.append(progress.finalURL)
        p.append(progress.validator)
        p.append(progress.expectedLength)
        p.append(progress.committedOffset)
    }

    func markDownloadsRemoved(_ ids: [DownloadID], now: Date) throws(StoreError) {
        try run(DownloadSQL.remove) { $0.append(ids: ids.map(\.rawValue)) }
    }

    func downloads() throws(StoreError) -> [DownloadRecord] {
        let result = try run(DownloadSQL.all) { _ in }
        return (0..<result.rows).map { Self.download(result, $0) }
    }

    /// One row of ``DownloadSQL/columns``.
    private static func download(_ r: PGResult, _ row: Int) -> DownloadRecord {
        DownloadRecord(
            id: DownloadID(rawValue: r.int64(row, 0) ?? 0), url: r.text(row, 1) ?? "", feed: r.int64(row, 3).map(FeedID.init(rawValue:)),
            article: r.int64(row, 4).map(ArticleID.init(rawValue:)), path: r.text(row, 2) ?? "", mediaType: r.text(row, 5),
            finalURL: r.text(row, 6), validator: r.text(row, 7), expectedLength: r.int64(row, 8), committedOffset: r.int64(row, 9) ?? 0,
            state: DownloadState(rawValue: r.text(row, 10) ?? "") ?? .queued, attempts: Int(r.int64(row, 11) ?? 0),
            error: r.text(row, 12), errorKind: r.text(row, 13), httpStatus: r.int64(row, 21).map { Int($0) },
            isPermanentFailure: r.bool(row, 22) ?? false, leaseOwner: r.text(row, 14), leaseUntil: r.date(row, 15),
            leaseEpoch: r.int64(row, 16) ?? 0, articleDate: r.date(row, 17), queuedAt: r.date(row, 18) ?? Date(timeIntervalSince1970: 0),
            updatedAt: r.date(row, 19) ?? Date(timeIntervalSince1970: 0), completedAt: r.date(row, 20))
    }
}

/// The download tracker's SQL.
enum DownloadSQL {
    private static func statement(_ name: String, _ types: [PGType], _ sql: String) -> PGStatement {
        PGStatement(name: "feedingest_download_" + name, sql: sql, types: types)
    }

    static let columns = """
        id, url, path, feed_id, article_id, media_type, final_url, validator, expected_length, committed_offset, state,
        attempts, error, error_kind, lease_owner, lease_until, lease_epoch, article_date, queued_at, updated_at, completed_at,
        http_status, permanent_failure
        """
    /// A new row, or none when the URL or the path is taken (`DO NOTHING` without a target covers both).
    static let insert = statement("insert", [.text, .text, .int8, .int8, .text, .timestamptz, .timestamptz], """
        INSERT INTO downloads (url, path, feed_id, article_id, media_type, article_date, queued_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
        ON CONFLICT DO NOTHING RETURNING id
        """)
    static let idByURL = statement("id_by_url", [.text], "SELECT id FROM downloads WHERE url = $1")
    static let idByPath = statement("id_by_path", [.text], "SELECT id FROM downloads WHERE path = $1")
    /// The next open row without a live lease, not attempted by this owner ($1) yet and not failed for good, partial
    /// ones first, skipping rows another claim holds at that instant; it becomes this owner's for $2 seconds with its epoch incremented.
    static let claim = statement("claim", [.text, .float8], """
        UPDATE downloads SET state = 'downloading', lease_owner = $1, lease_until = now() + $2 * interval '1 second',
            lease_epoch = lease_epoch + 1, attempts = attempts + 1, updated_at = now()
        WHERE id = (
            SELECT id FROM downloads
            WHERE state NOT IN ('done', 'removed')
              AND (lease_until IS NULL OR lease_until <= now())
              AND (lease_owner IS NULL OR lease_owner <> $1)
              AND NOT permanent_failure
            ORDER BY (committed_offset > 0) DESC, id
            LIMIT 1
            FOR UPDATE SKIP LOCKED)
          AND (lease_until IS NULL OR lease_until <= now())
        RETURNING \(columns)
        """)
    static let progress = statement("progress", [.int8, .int8, .text, .text, .text, .int8, .int8, .float8], """
        UPDATE downloads SET final_url = coalesce($4, final_url), validator = $5, expected_length = $6, committed_offset = $7,
            lease_until = now() + $8 * interval '1 second', updated_at = now()
        WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3
        RETURNING id
        """)
    /// The end of an attempt: the lease ends (its expiry cleared) but the owner stays, so this run does not claim the
    /// row again.
    static let finish = statement("finish", [.int8, .int8, .text, .text, .text, .int8, .int8, .text, .text, .text, .int8, .bool], """
        UPDATE downloads SET state = $8, final_url = coalesce($4, final_url), validator = $5, expected_length = $6,
            committed_offset = $7, error = $9, error_kind = $10, lease_until = NULL, updated_at = now(),
            completed_at = CASE WHEN $8 = 'done' THEN now() ELSE completed_at END, http_status = $11, permanent_failure = $12
        WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3
        RETURNING id
        """)
    static let remove = statement("remove", [.int8Array], """
        UPDATE downloads SET state = 'removed', updated_at = now() WHERE state = 'done' AND id = ANY ($1::bigint[])
        """)
    static let all = statement("all", [], "SELECT \(columns) FROM downloads ORDER BY id")
    /// The rows failed for good, claimable again: queued, without their error or lease owner.
    static let requeue = statement("requeue", [], """
        UPDATE downloads SET state = 'queued', permanent_failure = false, error = NULL, error_kind = NULL, http_status = NULL,
            lease_owner = NULL, lease_until = NULL, updated_at = now()
        WHERE state = 'failed' AND permanent_failure
        RETURNING id
        """)
}
