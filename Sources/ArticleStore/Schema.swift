/// The database schema: its version (`PRAGMA user_version`) and the forward migrations that reach it.
///
/// Migration *n* takes a store from version *n − 1* to *n*; migration 1 creates the tables. They run in
/// one `BEGIN IMMEDIATE` transaction, so a crash leaves the store at the old version, never between two.
/// A store never moves backward: a newer version is refused (``StoreError/Kind/newerSchema(found:supported:)``).
package struct Schema: Sendable {
    /// The migrations in order; the schema's version is their count.
    var migrations: [String]

    /// The version this schema reaches.
    var version: Int { migrations.count }

    /// feedingest's schema.
    static let current = Schema(migrations: [version1, version2, version3, version4, version5, version6, version7, version8, version9])

    /// Version 8: permanent download failures. The HTTP status of a failed attempt's response, and whether the failure
    /// is permanent (a 404, a 410, a URL that is not http or https): such a row is not claimed until it is queued again
    /// (`download --retry-failed`). A row refused for its URL's scheme (`download.unsupported-scheme`) is a permanent
    /// failure too.
    static let version8 = """
        ALTER TABLE downloads ADD COLUMN http_status INTEGER;
        ALTER TABLE downloads ADD COLUMN permanent_failure INTEGER NOT NULL DEFAULT 0 CHECK (permanent_failure IN (0, 1));
        UPDATE downloads SET permanent_failure = 1 WHERE state = 'failed' AND error_kind = 'download.unsupported-scheme';
        """

    /// Version 9: subscriptions live in the store. Whether the feed is subscribed (an unsubscribed feed keeps its
    /// articles but is neither fetched by `ingest` without a list, nor shown by `feeds`, nor exported), and the list
    /// file that subscribed it (its absolute path; `NULL` for a subscription by hand), which unsubscribes it when it no
    /// longer lists it. Every feed of an older store stays subscribed.
    static let version9 = """
        ALTER TABLE feeds ADD COLUMN subscribed INTEGER NOT NULL DEFAULT 1 CHECK (subscribed IN (0, 1));
        ALTER TABLE feeds ADD COLUMN list_source TEXT;
        """

    /// Version 6: the adaptive schedule of `feedingest watch`. The interval the last completion recorded (seconds,
    /// before jitter; `next_fetch` holds the jittered due time) and what decided it (``ScheduleReason``), and the
    /// hints of the last fetch the formula reads: the feed's own refresh period (RSS `ttl`, `sy:updatePeriod` /
    /// `sy:updateFrequency`, kept across 304s), `Cache-Control: max-age` (seconds) and `Expires`.
    static let version6 = """
        ALTER TABLE feeds ADD COLUMN fetch_interval REAL;
        ALTER TABLE feeds ADD COLUMN schedule_reason TEXT;
        ALTER TABLE feeds ADD COLUMN refresh_hint REAL;
        ALTER TABLE feeds ADD COLUMN max_age REAL;
        ALTER TABLE feeds ADD COLUMN expires REAL;
        """

    /// Version 7: the enclosure download tracker, one row per enclosure URL (and per file path): the final URL, the
    /// strong validator, the expected length, the committed (flushed) offset of the `.download` partial, the state,
    /// attempts and last error, and a lease (owner, expiry, epoch) like a feed's, so two `download` processes never
    /// fetch one file at once. The partial index holds the rows still open, which a claim reads.
    static let version7 = """
        CREATE TABLE downloads (
            id INTEGER PRIMARY KEY,
            url TEXT NOT NULL UNIQUE,
            path TEXT NOT NULL UNIQUE,             -- the complete file; the partial is path || '.download'
            feed_id INTEGER,
            article_id INTEGER,
            media_type TEXT,
            final_url TEXT,
            validator TEXT,                        -- strong ETag, else Last-Modified: sent as If-Range
            expected_length INTEGER,
            committed_offset INTEGER NOT NULL DEFAULT 0,
            state TEXT NOT NULL DEFAULT 'queued'
                CHECK (state IN ('queued', 'downloading', 'paused', 'done', 'failed', 'removed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            error_kind TEXT,
            lease_owner TEXT,
            lease_until REAL,
            lease_epoch INTEGER NOT NULL DEFAULT 0,
            article_date REAL,
            queued_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            completed_at REAL
        ) STRICT;
        CREATE INDEX downloads_open ON downloads (committed_offset, id) WHERE state NOT IN ('done', 'removed');
        """

    /// Version 5: the `details` column, milestone 2's article fields as one JSON object (JSON Feed's external URL,
    /// text content and banner image; every link, category details, out-of-line content, licence, rights,
    /// contributors), `NULL` when the article has none; `json_extract(details, '$.links')` reads them in SQL.
    static let version5 = """
        ALTER TABLE articles ADD COLUMN details TEXT;
        """

    /// Version 4: claims and leases. Each feed's host (``FeedHost``, for the per-host limit across processes), its
    /// lease (owner, expiry, epoch) and when it was claimed; a partial index over the unleased feeds by due time and
    /// one over the leased feeds by host, so a claim reads only the rows it can take.
    static let version4 = """
        ALTER TABLE feeds ADD COLUMN host TEXT;
        ALTER TABLE feeds ADD COLUMN lease_owner TEXT;
        ALTER TABLE feeds ADD COLUMN lease_until REAL;
        ALTER TABLE feeds ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE feeds ADD COLUMN claimed_at REAL;
        CREATE INDEX feeds_due ON feeds (next_fetch) WHERE lease_owner IS NULL;
        CREATE INDEX feeds_leased ON feeds (host, lease_until) WHERE lease_owner IS NOT NULL;
        """

    /// Version 2: each feed's tags, as the feed list gives them (`tagSeparator` between them; `NULL` for none), and
    /// whether its last attempt was refused with a 429 (which leaves `outcome`, the last finished fetch's, alone).
    static let version2 = """
        ALTER TABLE feeds ADD COLUMN tags TEXT;
        ALTER TABLE feeds ADD COLUMN rate_limited INTEGER NOT NULL DEFAULT 0 CHECK (rate_limited IN (0, 1));
        """

    /// Version 3: the kind of the last error (`fetch.http-status`, `parse.tag-mismatch`, `store.read-only`, ...) beside
    /// its text, so `feeds` and scripts match on the kind, not the words.
    static let version3 = """
        ALTER TABLE feeds ADD COLUMN error_kind TEXT;
        """


    /// `application_id` of every feedingest store: `FdIn` in ASCII. It tells a feedingest store from any other
    /// SQLite database (https://sqlite.org/fileformat.html#application_id).
    static let applicationID: Int64 = 0x4664_496E

    static let version1 = """
        CREATE TABLE feeds (
            id INTEGER PRIMARY KEY,
            url TEXT NOT NULL UNIQUE,              -- as listed
            title TEXT,
            home_url TEXT,
            current_url TEXT,                      -- after permanent redirects
            etag TEXT,
            last_modified TEXT,
            body_hash TEXT,
            key_mode TEXT NOT NULL DEFAULT 'identifier' CHECK (key_mode IN ('identifier', 'link')),
            last_attempt REAL,                     -- seconds since 1970, as every date here
            last_success REAL,
            outcome TEXT CHECK (outcome IN ('updated', 'not-modified', 'failed')),
            error TEXT,
            consecutive_failures INTEGER NOT NULL DEFAULT 0,
            next_fetch REAL,
            article_count INTEGER NOT NULL DEFAULT 0,
            last_seen_count INTEGER,
            last_new_count INTEGER,
            last_updated_count INTEGER,
            created_at REAL NOT NULL
        ) STRICT;

        CREATE TABLE articles (
            id INTEGER PRIMARY KEY,                -- the ArticleID (no AUTOINCREMENT: it costs ~8% of an insert)
            feed_id INTEGER NOT NULL REFERENCES feeds (id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            key_hash INTEGER NOT NULL,             -- XXH64 of key: the lookup index holds 8 bytes, not the key
            key_source TEXT NOT NULL,
            identifier TEXT NOT NULL,
            id_source TEXT NOT NULL,
            title TEXT,
            link TEXT,
            published REAL,
            published_raw TEXT,
            updated REAL,
            updated_raw TEXT,
            authors TEXT,                          -- JSON lists: see ListColumns
            summary TEXT,
            summary_type TEXT,
            content TEXT,
            content_type TEXT,
            categories TEXT,
            enclosures TEXT,
            image TEXT,
            comments TEXT,
            comments_feed TEXT,
            comment_count INTEGER,
            language TEXT,
            podcast TEXT,
            content_hash INTEGER NOT NULL,         -- ArticleHasher, as a signed 64-bit integer
            sort_date REAL NOT NULL,               -- published, else updated, else first seen
            first_seen REAL NOT NULL,
            last_updated REAL NOT NULL
        ) STRICT;

        -- Dedupe lookups: (feed, key hash), then the key itself is compared. Not UNIQUE: keys are unique per feed
        -- because every insert follows a lookup in the same BEGIN IMMEDIATE transaction, and write transactions
        -- are serialised across connections and processes. An index of 8-byte hashes instead of keys (often 40–100
        -- bytes) is a quarter of the size, which makes inserts with random guids (urn:uuid:…) 25–35% cheaper.
        CREATE INDEX articles_by_key ON articles (feed_id, key_hash);
        -- Newest first, per feed and over all feeds (the rowid breaks ties in both).
        CREATE INDEX articles_by_feed_date ON articles (feed_id, sort_date);
        CREATE INDEX articles_by_date ON articles (sort_date);

        CREATE TABLE store_info (name TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT, WITHOUT ROWID;
        INSERT INTO store_info (name, value) VALUES ('content_hash', 'xxh64-v1');
        """
}

