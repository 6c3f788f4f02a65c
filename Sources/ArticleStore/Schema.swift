/// The database schema: its version (`PRAGMA user_version`) and the forward migrations that reach it.
///
/// Migration *n* takes a store from version *n − 1* to *n*; migration 1 creates the tables. They run in
/// one `BEGIN IMMEDIATE` transaction, so a crash leaves the store at the old version, never between two.
/// A store never moves backward: a newer version is refused (``StoreError/Kind/newerSchema(found:supported:)``).
struct Schema: Sendable {
    /// The migrations in order; the schema's version is their count.
    var migrations: [String]

    /// The version this schema reaches.
    var version: Int { migrations.count }

    /// feedingest's schema.
    static let current = Schema(migrations: [version1, version2, version3])

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

    /// Between two stored tags: the ASCII unit separator, which no tag contains.
    static let tagSeparator: Character = "\u{1F}"

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

/// The SQL the contexts run, each prepared once per connection and cached.
enum SQL {
    private static func key(_ index: Int, _ sql: String) -> SQLiteStatement.Key { SQLiteStatement.Key(index: index, sql: sql) }

    static let begin = key(0, "BEGIN IMMEDIATE")
    static let commit = key(1, "COMMIT")
    static let rollback = key(2, "ROLLBACK")

    static let insertFeed = key(3, "INSERT INTO feeds (url, created_at) VALUES (?1, ?2) ON CONFLICT (url) DO NOTHING")
    static let feedIDByURL = key(4, "SELECT id FROM feeds WHERE url = ?1")
    static let setTags = key(41, "UPDATE feeds SET tags = ?2 WHERE id = ?1")

    static let feedColumns = """
        id, url, title, home_url, current_url, etag, last_modified, body_hash, key_mode, last_attempt, last_success,
        outcome, error, consecutive_failures, next_fetch, article_count, last_seen_count, last_new_count, last_updated_count,
        tags, rate_limited, error_kind
        """
    static let feedByID = key(5, "SELECT \(feedColumns) FROM feeds WHERE id = ?1")
    static let allFeeds = key(6, "SELECT \(feedColumns) FROM feeds ORDER BY url")

    static let lookupArticle = key(7, """
        SELECT id, content_hash, comment_count FROM articles WHERE feed_id = ?1 AND key_hash = ?3 AND key = ?2
        """)
    static let insertArticle = key(8, """
        INSERT INTO articles (feed_id, key, key_source, identifier, id_source, title, link, published, published_raw,
            updated, updated_raw, authors, summary, summary_type, content, content_type, categories, enclosures, image,
            comments, comments_feed, comment_count, language, podcast, content_hash, sort_date, first_seen, last_updated,
            key_hash)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
            ?23, ?24, ?25, ?26, ?27, ?27, ?28)
        """)
    // The same parameter numbers as insertArticle, so one binding routine serves both: ?1 is the row id here,
    // ?2, ?3, ?26 and ?28 (key, key source, sort date, key hash) are bound but unused (SQLite allows gaps in
    // numbered parameters, up to the highest one used: hence the no-op `?28 = ?28`), and the time bound to ?27
    // becomes last_updated.
    static let updateArticle = key(9, """
        UPDATE articles SET identifier = ?4, id_source = ?5, title = ?6, link = ?7, published = ?8, published_raw = ?9,
            updated = ?10, updated_raw = ?11, authors = ?12, summary = ?13, summary_type = ?14, content = ?15,
            content_type = ?16, categories = ?17, enclosures = ?18, image = ?19, comments = ?20, comments_feed = ?21,
            comment_count = ?22, language = ?23, podcast = ?24, content_hash = ?25,
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

    static let articleColumns = """
        a.id, a.feed_id, f.url, a.key, a.key_source, a.identifier, a.id_source, a.title, a.link, a.published,
        a.published_raw, a.updated, a.updated_raw, a.authors, a.summary, a.summary_type, a.content, a.content_type,
        a.categories, a.enclosures, a.image, a.comments, a.comments_feed, a.comment_count, a.language, a.podcast,
        a.content_hash, a.sort_date, a.first_seen, a.last_updated
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
}
