@testable import ArticleStore
import Foundation
@testable import PostgresStore
import TestSupport
import Testing

/// Upgrades from what an earlier schema wrote. Permanent download failures (SQLite schema 7 → 8, PostgreSQL 4 → 5): the
/// tracker's rows survive, a row refused for its URL's scheme becomes a permanent failure (claims skip it as before),
/// every other failed row stays claimable, and `requeueFailedDownloads` reaches the migrated rows. Subscriptions
/// (SQLite 8 → 9, PostgreSQL 5 → 6): every feed stays subscribed.
@Suite("Store migrations", .serialized)
struct MigrationTests {
    /// The rows of a tracker before the upgrade: refused for its scheme, failed with a 404 (no status column yet),
    /// failed mid-body, and queued.
    static let rows = """
        INSERT INTO downloads (url, path, state, attempts, error, error_kind, lease_owner, committed_offset, queued_at, updated_at)
        VALUES ('ftp://127.0.0.1/a.mp3', '/d/a.mp3', 'failed', 1, 'refused: not an http or https URL', 'download.unsupported-scheme',
                'host:1:old', 0, %@, %@),
               ('http://127.0.0.1/b.mp3', '/d/b.mp3', 'failed', 3, 'HTTP status 404', 'fetch.http-status', 'host:1:old', 0, %@, %@),
               ('http://127.0.0.1/c.mp3', '/d/c.mp3', 'failed', 1, 'connection reset', 'fetch.truncated', 'host:1:old', 4096, %@, %@),
               ('http://127.0.0.1/d.mp3', '/d/d.mp3', 'queued', 0, NULL, NULL, NULL, 0, %@, %@)
        """

    static func insert(now: String) -> String { rows.replacingOccurrences(of: "%@", with: now) }

    /// What both engines must show after the upgrade.
    static func checkUpgraded(_ store: Store) throws {
        let context = try store.makeContext()
        let rows = try context.downloads()
        #expect(rows.map(\.url) == ["ftp://127.0.0.1/a.mp3", "http://127.0.0.1/b.mp3", "http://127.0.0.1/c.mp3", "http://127.0.0.1/d.mp3"])
        #expect(rows.map(\.isPermanentFailure) == [true, false, false, false])
        #expect(rows.allSatisfy { $0.httpStatus == nil })
        #expect(rows.map(\.state) == [.failed, .failed, .failed, .queued] && rows.map(\.attempts) == [1, 3, 1, 0])
        #expect(rows[2].committedOffset == 4096 && rows[0].errorKind == "download.unsupported-scheme")
        // A new run claims the partial one first, then the others; never the refused scheme.
        var claimed: [String] = []
        while let lease = try context.claimDownload(owner: "host:2:new", duration: .seconds(60)) {
            claimed.append(lease.url)
            #expect(try context.finishDownload(lease, state: .done, progress: DownloadProgress(
                finalURL: nil, validator: nil, expectedLength: nil, committedOffset: lease.committedOffset)))
        }
        #expect(claimed == ["http://127.0.0.1/c.mp3", "http://127.0.0.1/b.mp3", "http://127.0.0.1/d.mp3"])
        #expect(try context.requeueFailedDownloads() == 1)
        let retried = try #require(try context.claimDownload(owner: "host:3:retry", duration: .seconds(60)))
        #expect(retried.url == "ftp://127.0.0.1/a.mp3" && retried.attempts == 2)
    }

    @Test func aVersion7SQLiteTrackerUpgradesTo8() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        do {
            _ = try Store(path: path, configuration: StoreConfiguration(), schema: Schema(migrations: Array(Schema.current.migrations.prefix(7))))
        }
        let raw = RawSQLite(path)
        #expect(raw.integer("PRAGMA user_version") == 7)
        #expect(raw.execute(Self.insert(now: "1750000000.0")) == 0, "\(raw.message)")
        let store = try Store(path: path)
        #expect(raw.integer("PRAGMA user_version") == Store.schemaVersion && Store.schemaVersion >= 8)
        #expect(raw.strings("SELECT name FROM pragma_table_info('downloads') WHERE name IN ('http_status', 'permanent_failure') ORDER BY name")
                == ["http_status", "permanent_failure"])
        try Self.checkUpgraded(store)
    }

    @Test func aVersion4PostgreSQLTrackerUpgradesTo5() throws {
        let server = try PostgresServer.shared.get()
        let database = try server.createDatabase("download_migration")
        // The store as version 4 left it: its four migrations and its marker, written by psql.
        try server.psql(PostgresSchema.migrations.prefix(4).joined(separator: "\n"), database: database)
        try server.psql("INSERT INTO store_info (name, value) VALUES ('schema_version', '4')", database: database)
        try server.psql(Self.insert(now: "'2026-06-01T10:00:00Z'"), database: database)
        let store = try Store.open(server.uri(database))
        #expect(try server.psql("SELECT value FROM store_info WHERE name = 'schema_version'", database: database)
                == String(Store.postgresSchemaVersion) && Store.postgresSchemaVersion >= 5)
        #expect(try server.rows("""
            SELECT column_name, data_type FROM information_schema.columns
            WHERE table_name = 'downloads' AND column_name IN ('http_status', 'permanent_failure') ORDER BY column_name
            """, database: database) == [["http_status", "integer"], ["permanent_failure", "boolean"]])
        try Self.checkUpgraded(store)
    }

    /// Every feed of a store from before subscriptions stays subscribed, by no list (by hand): nothing it held drops
    /// out of `feeds`, `export-opml` or `ingest` without a list.
    @Test func feedsOfAVersion8SQLiteStoreStaySubscribed() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.sqlite")
        do {
            let old = try Store(path: path, configuration: StoreConfiguration(), schema: Schema(migrations: Array(Schema.current.migrations.prefix(8))))
            _ = try old.makeContext().feeds(urls: ["https://a.example/feed.xml", "https://b.example/feed.xml"])
        }
        #expect(RawSQLite(path).integer("PRAGMA user_version") == 8)
        let context = try Store(path: path).makeContext()
        let feeds = try context.feedStatuses()
        #expect(feeds.count == 2 && feeds.allSatisfy { $0.isSubscribed && $0.listSource == nil })
        #expect(try context.subscribedFeeds().count == 2)
    }

    @Test func feedsOfAVersion5PostgreSQLStoreStaySubscribed() throws {
        let server = try PostgresServer.shared.get()
        let database = try server.createDatabase("subscription_migration")
        try server.psql(PostgresSchema.migrations.prefix(5).joined(separator: "\n"), database: database)
        try server.psql("INSERT INTO store_info (name, value) VALUES ('schema_version', '5')", database: database)
        try server.psql("INSERT INTO feeds (url, created_at) VALUES ('https://a.example/feed.xml', now())", database: database)
        let context = try Store.open(server.uri(database)).makeContext()
        let feeds = try context.feedStatuses()
        #expect(feeds.count == 1 && feeds.allSatisfy { $0.isSubscribed && $0.listSource == nil })
        #expect(try server.psql("SELECT value FROM store_info WHERE name = 'schema_version'", database: database)
                == String(Store.postgresSchemaVersion))
    }
}
