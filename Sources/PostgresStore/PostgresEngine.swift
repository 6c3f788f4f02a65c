// The PostgreSQL engine: opening a store (checks, creation, migrations) and making one connection per context.
import ArticleStore
import Foundation

extension Store {
    /// Opens the store at `location`: a PostgreSQL URI (`postgresql://` or `postgres://`, anything libpq accepts as a
    /// URI, including `?host=/path/to/socket/dir`) opens the PostgreSQL engine; anything else is an SQLite file path.
    ///
    /// - Throws: ``StoreError`` naming the store (a URI without its password).
    public static func open(_ location: String, configuration: StoreConfiguration = StoreConfiguration()) throws(StoreError) -> Store {
        if isPostgresURI(location) {
            return try Store(postgresURI: location, configuration: configuration)
        }
        return try Store(path: location, configuration: configuration)
    }

    /// Whether `location` names a PostgreSQL store (`postgresql://…` or `postgres://…`).
    public static func isPostgresURI(_ location: String) -> Bool {
        PostgresLocation.isURI(location)
    }

    /// `location` as messages may show it: a PostgreSQL URI without its password, or the path as given.
    public static func displayName(of location: String) -> String {
        guard isPostgresURI(location) else { return location }
        return PostgresLocation.redacted(location)
    }

    /// Opens the PostgreSQL store at `uri`: connects, checks that the database is a feedingest store at a version
    /// this feedingest knows (refusing, without a write, another application's database or a newer schema),
    /// initialises an empty one or migrates an older one in one transaction (read-write access only), and checks
    /// that the role may write when read-write access is asked for.
    ///
    /// - Throws: ``StoreError`` naming the URI without its password: ``StoreError/Kind/invalidLocation``,
    ///   ``StoreError/Kind/unreachable``, ``StoreError/Kind/authenticationFailed``, ``StoreError/Kind/missingDatabase``,
    ///   ``StoreError/Kind/notAFeedingestStore``, ``StoreError/Kind/newerSchema(found:supported:)``,
    ///   ``StoreError/Kind/readOnly``, or a ``StoreError/Kind/postgres`` error with the server's SQLSTATE.
    public convenience init(postgresURI uri: String, configuration: StoreConfiguration = StoreConfiguration()) throws(StoreError) {
        self.init(engine: try PostgresEngine(uri: uri, configuration: configuration), configuration: configuration)
    }

    /// The version of the PostgreSQL schema this feedingest writes (`store_info.schema_version`).
    public static var postgresSchemaVersion: Int { PostgresSchema.version }
}

/// The PostgreSQL engine: the store's checks and migrations once, then one connection per context.
struct PostgresEngine: StoreEngine {
    let uri: PostgresLocation
    let configuration: StoreConfiguration

    var name: String { "postgresql" }

    /// The URI without its password.
    var location: String { uri.redacted }
    private var redacted: String { uri.redacted }

    init(uri: String, configuration: StoreConfiguration) throws(StoreError) {
        self.uri = try PostgresLocation(uri)
        self.configuration = configuration
        let connection = try connect()
        try prepare(connection)
    }

    func makeConnection() throws(StoreError) -> any StoreConnection {
        let connection = try connect()
        let header = try Self.readHeader(connection)
        try check(header, connection: connection, forWriting: false)
        if header.version < PostgresSchema.version {
            throw StoreError(kind: .olderSchema(found: header.version, supported: PostgresSchema.version),
                             message: "the store has schema version \(header.version) and needs migrating to \(PostgresSchema.version)",
                             path: redacted, operation: "check the schema version")
        }
        return PostgresStoreConnection(connection: connection)
    }

    private func connect() throws(StoreError) -> PGConnection {
        let timeout = Int(configuration.busyTimeout.components.seconds)
        let connection = try PGConnection(uri, connectTimeout: max(timeout, 5))
        // A process stopped inside a transaction (SIGSTOP, a debugger) would hold its feed rows' locks for ever;
        // the server ends such a session after 30 s, and the transaction rolls back.
        try connection.execute("SET idle_in_transaction_session_timeout = '30s'")
        return connection
    }

    /// What the connection's schema holds.
    private struct Header {
        /// Tables, views and sequences in the current schema.
        var relations: Int
        /// Whether `store_info` says `application = feedingest`.
        var isOurs: Bool
        /// `store_info.schema_version`, 0 when absent.
        var version: Int
        /// What `store_info` said instead, for the message about a foreign database.
        var foreignApplication: String?
        /// Some of the tables, for that message.
        var tables: [String]
        /// The current schema's name.
        var schema: String
    }

    private static func readHeader(_ connection: PGConnection) throws(StoreError) -> Header {
        let result = try connection.execute("""
            SELECT coalesce(current_schema(), ''),
                   -- Tables, views and sequences in the schema, but those of extensions (pg_stat_statements' view, …).
                   (SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
                      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_class'::regclass
                                      AND d.objid = c.oid AND d.deptype = 'e')),
                   (SELECT string_agg(relname, ', ' ORDER BY relname) FROM (
                        SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY c.relname LIMIT 5) t),
                   EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                           AND table_name = 'store_info' AND column_name IN ('name', 'value') HAVING count(*) = 2)
            """)
        var header = Header(relations: Int(result.int64(0, 1) ?? 0), isOurs: false, version: 0, foreignApplication: nil,
                            tables: (result.text(0, 2) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) },
                            schema: result.text(0, 0) ?? "")
        if result.text(0, 3) == "t" {
            let info = try connection.execute("SELECT name, value FROM store_info WHERE name IN ('application', 'schema_version')")
            for row in 0..<info.rows {
                switch info.text(row, 0) {
                case "application"?:
                    header.isOurs = info.text(row, 1) == PostgresSchema.application
                    if !header.isOurs { header.foreignApplication = info.text(row, 1) }
                case "schema_version"?: header.version = Int(info.text(row, 1) ?? "") ?? 0
                default: break
                }
            }
        }
        return header
    }

    /// Refuses a database that is not a feedingest store, or one at a newer version.
    private func check(_ header: Header, connection: PGConnection, forWriting: Bool) throws(StoreError) {
        if header.schema.isEmpty {
            throw StoreError(kind: .notAFeedingestStore, message: "the connection has no current schema (search_path names none that exists)",
                             path: redacted, operation: "check the schema")
        }
        if !header.isOurs {
            if header.relations == 0 {
                if forWriting { return }  // empty: ours to initialise
                throw StoreError(kind: .notAFeedingestStore, message: "not a feedingest store: the database is empty",
                                 path: redacted, operation: "check the application")
            }
            var what = "a database of another application"
            if let application = header.foreignApplication { what += " (store_info says application '\(application)')" }
            if !header.tables.isEmpty { what += " (schema \(header.schema) has tables \(header.tables.joined(separator: ", ")))" }
            throw StoreError(kind: .notAFeedingestStore, message: "not a feedingest store: \(what)", path: redacted,
                             operation: "check the application")
        }
        if header.version > PostgresSchema.version {
            throw StoreError(kind: .newerSchema(found: header.version, supported: PostgresSchema.version),
                             message: "the store has schema version \(header.version); this feedingest knows up to \(PostgresSchema.version)",
                             path: redacted, operation: "check the schema version")
        }
    }

    /// Checks, initialises or migrates the database; the store's one-time work.
    private func prepare(_ connection: PGConnection) throws(StoreError) {
        let encoding = try connection.execute("SHOW server_encoding").text(0, 0) ?? ""
        guard encoding.uppercased() == "UTF8" else {
            throw StoreError(kind: .postgres, message: "the database's encoding is \(encoding); feedingest stores UTF-8 text and needs a UTF8 database "
                                + "(CREATE DATABASE … ENCODING 'UTF8')", path: redacted, operation: "check the encoding")
        }
        let writable = configuration.access == .readWrite
        let header = try Self.readHeader(connection)
        try check(header, connection: connection, forWriting: writable)
        guard writable else {
            if header.version < PostgresSchema.version {
                throw StoreError(kind: .olderSchema(found: header.version, supported: PostgresSchema.version),
                                 message: "the store has schema version \(header.version) and needs migrating to \(PostgresSchema.version)",
                                 path: redacted, operation: "check the schema version")
            }
            return
        }
        try checkWritable(connection, fresh: !header.isOurs)
        if !header.isOurs || header.version < PostgresSchema.version {
            try migrate(connection)
        }
    }

    /// Refuses, before any write, a role or server that cannot write the store.
    private func checkWritable(_ connection: PGConnection, fresh: Bool) throws(StoreError) {
        let privilege = fresh
            ? "has_schema_privilege(current_schema(), 'CREATE')"
            : "has_table_privilege('feeds', 'INSERT, UPDATE, DELETE') AND has_table_privilege('articles', 'INSERT, UPDATE, DELETE')"
        let result = try connection.execute("""
            SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on', \(privilege), current_user
            """)
        let role = result.text(0, 3) ?? "?"
        if result.text(0, 0) == "t" {
            throw StoreError(kind: .readOnly, message: "the server is a read-only standby (in recovery)", path: redacted,
                             operation: "check that the store can be written")
        }
        if result.text(0, 1) == "t" {
            throw StoreError(kind: .readOnly, message: "the role \(role)'s sessions are read-only (default_transaction_read_only)",
                             path: redacted, operation: "check that the store can be written")
        }
        if result.text(0, 2) != "t" {
            throw StoreError(kind: .readOnly, message: fresh
                                ? "the role \(role) may not create tables in this database, so the store cannot be created"
                                : "the role \(role) may read the store but not write it (a read-only role)",
                             path: redacted, operation: "check that the store can be written")
        }
    }

    /// Applies the missing migrations in one transaction, under the migration lock, re-reading the header there
    /// because another process may have initialised or migrated the database meanwhile.
    private func migrate(_ connection: PGConnection) throws(StoreError) {
        try connection.execute("BEGIN; SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))")
        do throws(StoreError) {
            let header = try Self.readHeader(connection)
            try check(header, connection: connection, forWriting: true)
            let from = header.isOurs ? header.version : 0
            if from < PostgresSchema.version {
                for version in (from + 1)...PostgresSchema.version {
                    try connection.execute(PostgresSchema.migrations[version - 1])
                }
                try connection.execute("""
                    INSERT INTO store_info (name, value) VALUES ('schema_version', '\(PostgresSchema.version)')
                    ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value
                    """)
            }
            try connection.execute("COMMIT")
        } catch {
            if connection.isInTransaction { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }
}
