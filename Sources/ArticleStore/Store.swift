import Foundation
import Support

/// The article store's coordinator: it owns the database (an SQLite file, or a PostgreSQL database through the
/// `PostgresStore` module), its schema and its configuration, and hands out one ``StoreContext`` per thread.
///
/// Opening an SQLite store (https://sqlite.org/wal.html, https://sqlite.org/pragma.html):
/// 1. opens or creates the file; a new file is initialised, an existing one must be a feedingest store
///    (`PRAGMA application_id` is `FdIn`) — any other file, SQLite or not, is refused and never written;
/// 2. refuses a schema newer than this version knows (`PRAGMA user_version`), and migrates an older one
///    forward in one transaction;
/// 3. switches the file to write-ahead logging (`journal_mode=WAL`), so readers never block the writer and
///    a reader in another process sees only committed transactions.
///
/// Every connection then runs with `synchronous=NORMAL` (a commit is durable against a process crash, and
/// against power loss once the next checkpoint has run; no fsync per commit), a busy timeout, foreign keys
/// and SQLite's defensive mode. The contexts' commits are checkpointed by a thread of the store's own once the
/// log holds ``StoreConfiguration/walAutocheckpointPages`` pages (see `Checkpointer`), and the last connection to
/// close checkpoints the rest.
///
/// The store uses no connection of its own, so it is `Sendable` and can be shared; the work happens in contexts (see
/// ``makeContext()``). An SQLite store holds the connection that prepared its file until the first context takes it,
/// or until the store goes if no context is ever made.
public final class Store: Sendable {
    /// The store: the SQLite file's path, or the PostgreSQL URI without its password.
    public var path: String { engine.location }
    /// The configuration every context of this store uses.
    public let configuration: StoreConfiguration
    /// The engine: it opens the connections.
    package let engine: any StoreEngine

    /// The schema version this feedingest writes into SQLite stores (`PRAGMA user_version`).
    public static var schemaVersion: Int { Schema.current.version }

    /// `sqlite` or `postgresql`.
    public var engineName: String { engine.name }

    /// Opens the SQLite store at `path`, creating and initialising it when missing (read-write access only).
    ///
    /// - Throws: ``StoreError`` naming `path`: ``StoreError/Kind/notAFeedingestStore`` for a file that is not
    ///   SQLite or belongs to another application, ``StoreError/Kind/newerSchema(found:supported:)``,
    ///   ``StoreError/Kind/readOnly`` for a file that cannot be written when read-write access was asked for,
    ///   or an SQLite error (`SQLITE_CANTOPEN` for a missing or unwritable directory, …).
    public convenience init(path: String, configuration: StoreConfiguration = StoreConfiguration()) throws(StoreError) {
        try self.init(path: path, configuration: configuration, schema: .current)
    }

    /// Opens the SQLite store with a given schema (tests use it to exercise migrations).
    convenience init(path: String, configuration: StoreConfiguration, schema: Schema) throws(StoreError) {
        self.init(engine: try SQLiteEngine(path: path, configuration: configuration, schema: schema), configuration: configuration)
    }

    /// A store over an engine that has opened (checked, created or migrated) its database.
    package init(engine: any StoreEngine, configuration: StoreConfiguration) {
        self.engine = engine
        self.configuration = configuration
    }

    /// A new context: its own connection, for use on one thread.
    ///
    /// Make one per worker thread and keep it for the thread's life: its prepared statements are reused.
    public func makeContext() throws(StoreError) -> StoreContext {
        StoreContext(connection: try engine.makeConnection(), configuration: configuration)
    }
}

/// The SQLite engine: the file's checks, creation, migrations and WAL switch, once, then one connection per context.
struct SQLiteEngine: StoreEngine {
    let path: String
    let configuration: StoreConfiguration
    let schema: Schema
    /// Checkpoints the log for the read-write contexts; `nil` when read-only or with automatic checkpoints off.
    let checkpointer: Checkpointer?
    /// The connection that opened, checked and prepared the file, until the first context takes it.
    private let prepared: PreparedConnection

    var location: String { path }
    var name: String { "sqlite" }

    init(path: String, configuration: StoreConfiguration, schema: Schema) throws(StoreError) {
        self.path = path
        self.configuration = configuration
        self.schema = schema
        checkpointer = configuration.access == .readWrite && configuration.walAutocheckpointPages > 0
            ? Checkpointer(path: path, configuration: configuration) : nil
        let connection = try Self.explainingOpenFailures(path: path) { () throws(StoreError) -> SQLiteConnection in
            let connection = try Self.open(path: path, configuration: configuration, create: configuration.createIfMissing)
            try Self.prepareFile(connection, configuration: configuration, schema: schema)
            return connection
        }
        prepared = PreparedConnection(connection, file: Self.fileIdentity(path))
    }

    /// The device and file number of the file at `path` (not following a symbolic link, as SQLite opens it); `nil`
    /// when it cannot be read.
    static func fileIdentity(_ path: String) -> [Int]? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let device = attributes[.systemNumber] as? Int, let file = attributes[.systemFileNumber] as? Int
        else { return nil }
        return [device, file]
    }

    func makeConnection() throws(StoreError) -> any StoreConnection {
        try Self.explainingOpenFailures(path: path) { () throws(StoreError) -> any StoreConnection in
            let connection: SQLiteConnection
            if let handed = prepared.take(ifStillAt: path) {
                connection = handed
            } else {
                connection = try Self.open(path: path, configuration: configuration, create: false)
            }
            try Self.verify(connection, configuration: configuration, schema: schema)
            return SQLiteStoreConnection(connection: connection, checkpointer: checkpointer)
        }
    }

    /// The preparing connection, held for the first context.
    ///
    /// SQLite checkpoints the write-ahead log, syncs both files and deletes the log whenever the last connection to a
    /// database closes, and the next connection to open makes the log again. Closing the preparing connection before
    /// the first context opened its own was such a close: for a new store, whose schema is in the log, two syncs and
    /// two files deleted and made again before the first article. The first context now takes this connection
    /// instead.
    ///
    /// Until then it is idle: no statement open and no transaction, so it holds no snapshot and never holds a
    /// checkpoint back. Like any open connection it keeps SQLite's shared locks on the database and the `-shm` file,
    /// so while it is open another process's last close does not remove the log. A store that never makes a context
    /// (the first is usually made at once) closes it when it goes. It is `@unchecked Sendable` because it moves the
    /// connection to the thread that makes the first context: the lock hands it out once, and no other thread has it.
    private final class PreparedConnection: @unchecked Sendable {
        private let lock = NSLock()
        private var connection: SQLiteConnection?
        /// The file it opened (``SQLiteEngine/fileIdentity(_:)``).
        private let file: [Int]?

        init(_ connection: SQLiteConnection, file: [Int]?) {
            self.connection = connection
            self.file = file
        }

        /// The connection, once, if `path` still names the file it opened; `nil` afterwards (without looking at the
        /// file again), or when the file was removed or replaced since (the caller then opens the path again, and
        /// fails or checks the new file as it always did). The connection not taken closes when the store goes.
        func take(ifStillAt path: String) -> SQLiteConnection? {
            lock.withLock {
                guard connection != nil, let file, file == SQLiteEngine.fileIdentity(path) else { return nil }
                defer { connection = nil }
                return connection
            }
        }
    }

    /// Runs `body`, adding the likely cause to `SQLITE_CANTOPEN`: SQLite reports the errno of its last attempt
    /// (often a read-only retry), not why the file, or the `-wal` and `-shm` files beside it, could not be created.
    private static func explainingOpenFailures<T>(path: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        do throws(StoreError) {
            return try body()
        } catch where error.code.primary == .cantOpen {
            var explained = error
            let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue {
                explained.message += "; the directory \(directory) does not exist"
            } else if !FileManager.default.isWritableFile(atPath: directory) {
                explained.message += FileManager.default.fileExists(atPath: path)
                    ? "; the directory \(directory) is not writable, and SQLite must create the store's -wal and -shm files there"
                    : "; the directory \(directory) is not writable, so the store cannot be created"
            }
            throw explained
        }
    }

    // MARK: Opening

    static func open(path: String, configuration: StoreConfiguration, create: Bool) throws(StoreError) -> SQLiteConnection {
        let writable = configuration.access == .readWrite
        if writable && create {
            // The store holds feed passwords: a new file is made readable by its owner only (SQLite would make it 0644
            // less the umask), and SQLite gives its log and shared-memory files the database file's permissions. An
            // empty file is an empty database, which the checks below initialise.
            let descriptor = Glibc.open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            if descriptor >= 0 { Glibc.close(descriptor) }
        }
        let connection = try SQLiteConnection(path: path, mode: SQLiteOpenMode(writable: writable, create: writable && create))
        try connection.setBusyTimeout(milliseconds: Int32(clamping: configuration.busyTimeout.millisecondsRoundedUp))
        try connection.enableDefensiveMode()
        // None of these writes to the file, so they are safe before the file is known to be ours; some read its
        // header, which is where a file that is not a database shows.
        try notADatabaseIsRefused { () throws(StoreError) in try connection.execute("""
            PRAGMA foreign_keys = ON;
            PRAGMA synchronous = NORMAL;
            PRAGMA trusted_schema = OFF;
            PRAGMA temp_store = MEMORY;
            PRAGMA cache_size = -\(max(configuration.cacheSizeKiB, 64));
            PRAGMA wal_autocheckpoint = \(max(configuration.walAutocheckpointPages, 0));
            """) }
        return connection
    }

    /// What the file's header says.
    private struct Header {
        var applicationID: Int64
        var version: Int
        var isEmpty: Bool
    }

    private static func readHeader(_ connection: SQLiteConnection) throws(StoreError) -> Header {
        try notADatabaseIsRefused { () throws(StoreError) -> Header in
            // One statement, so one snapshot: read separately, the values could straddle another process's
            // initialisation (application id still 0, version already 1).
            let values = try connection.integers("""
                SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version),
                       (SELECT count(*) FROM sqlite_schema)
                """, columns: 3)
            guard values.count == 3 else {
                throw StoreError(kind: .sqlite, code: .internal, message: "no header row", path: connection.path,
                                 operation: "read the database header")
            }
            return Header(applicationID: values[0], version: Int(values[1]), isEmpty: values[2] == 0)
        }
    }

    /// Runs `body`, turning `SQLITE_NOTADB` into ``StoreError/Kind/notAFeedingestStore``.
    private static func notADatabaseIsRefused<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        do throws(StoreError) {
            return try body()
        } catch where error.code.primary == .notADatabase {
            var refused = error
            refused.kind = .notAFeedingestStore
            refused.message = "not a feedingest store: the file is not an SQLite database (\(error.message))"
            refused.operation = "read the database header"
            throw refused
        }
    }

    private static func refuseForeign(_ header: Header, path: String) -> StoreError {
        let appID = String(header.applicationID, radix: 16)
        return StoreError(
            kind: .notAFeedingestStore,
            message: "not a feedingest store: an SQLite database of another application "
                + "(application_id 0x\(appID), user_version \(header.version))",
            path: path, operation: "check the application id")
    }

    /// Checks, initialises or migrates the file and switches it to WAL; the store's one-time work.
    private static func prepareFile(_ connection: SQLiteConnection, configuration: StoreConfiguration,
                                    schema: Schema) throws(StoreError) {
        let path = connection.path
        let writable = configuration.access == .readWrite
        let header = try readHeader(connection)
        let fresh = header.applicationID == 0 && header.version == 0 && header.isEmpty
        if !fresh {
            guard header.applicationID == Schema.applicationID else { throw refuseForeign(header, path: path) }
            if header.version > schema.version {
                throw StoreError(kind: .newerSchema(found: header.version, supported: schema.version),
                                 message: "the store has schema version \(header.version); this feedingest knows up to \(schema.version)",
                                 path: path, operation: "check the schema version")
            }
        }
        guard writable else {
            if fresh {
                throw StoreError(kind: .notAFeedingestStore, message: "not a feedingest store: the database is empty",
                                 path: path, operation: "check the application id")
            }
            if header.version < schema.version {
                throw StoreError(kind: .olderSchema(found: header.version, supported: schema.version),
                                 message: "the store has schema version \(header.version) and needs migrating to \(schema.version)",
                                 path: path, operation: "check the schema version")
            }
            return
        }
        if connection.isReadOnly {
            throw StoreError(kind: .readOnly, code: .readOnly, message: "the store file is read-only",
                             path: path, operation: "open the store for reading and writing")
        }
        // The page size can only change before the first table exists (and not at all in WAL mode).
        if fresh {
            try connection.execute("PRAGMA page_size = \(configuration.pageSize)")
        }
        // WAL first: a journal-mode change cannot happen inside a transaction, and it is persistent.
        let mode = try connection.texts("PRAGMA journal_mode").first ?? ""
        if mode.lowercased() != "wal" {
            // The switch needs the file to itself and fails with SQLITE_BUSY at once, without the busy handler,
            // while another process reads it (for example a second feedingest creating the same new store): retry
            // for up to the busy timeout.
            let result = try retryingWhileBusy(for: configuration.busyTimeout) { () throws(StoreError) in
                try connection.texts("PRAGMA journal_mode = WAL").first ?? ""
            }
            guard result.lowercased() == "wal" else {
                throw StoreError(kind: .sqlite, code: .error, message: "could not switch to write-ahead logging (mode is \(result))",
                                 path: path, operation: "PRAGMA journal_mode = WAL")
            }
        }
        if header.version < schema.version || fresh {
            try migrate(connection, to: schema)
        }
    }

    /// Runs `body` again while it fails with `SQLITE_BUSY`, sleeping 1, 2, 4 … 50 ms, until `timeout` has passed.
    private static func retryingWhileBusy<T>(for timeout: Duration, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(1)
        while true {
            do throws(StoreError) {
                return try body()
            } catch where error.code.primary == .busy && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: pause.seconds)
                pause = min(pause * 2, .milliseconds(50))
            }
        }
    }

    /// Applies the missing migrations in one write transaction, re-reading the header under the write lock
    /// because another process may have initialised or migrated the file meanwhile.
    private static func migrate(_ connection: SQLiteConnection, to schema: Schema) throws(StoreError) {
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StoreError) {
            let header = try readHeader(connection)
            let fresh = header.applicationID == 0 && header.version == 0 && header.isEmpty
            if !fresh {
                guard header.applicationID == Schema.applicationID else { throw refuseForeign(header, path: connection.path) }
                guard header.version <= schema.version else {
                    throw StoreError(kind: .newerSchema(found: header.version, supported: schema.version),
                                     message: "the store has schema version \(header.version); this feedingest knows up to \(schema.version)",
                                     path: connection.path, operation: "check the schema version")
                }
            }
            let from = fresh ? 0 : header.version
            for version in (from + 1)..<(schema.version + 1) {
                try connection.execute(schema.migrations[version - 1])
            }
            try connection.execute("PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = \(schema.version)")
            try connection.execute("COMMIT")
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Checks a context's connection: the file must still be this store at this schema version.
    static func verify(_ connection: SQLiteConnection, configuration: StoreConfiguration, schema: Schema) throws(StoreError) {
        let header = try readHeader(connection)
        guard header.applicationID == Schema.applicationID else { throw refuseForeign(header, path: connection.path) }
        if header.version > schema.version {
            throw StoreError(kind: .newerSchema(found: header.version, supported: schema.version),
                             message: "the store has schema version \(header.version); this feedingest knows up to \(schema.version)",
                             path: connection.path, operation: "check the schema version")
        }
        if header.version < schema.version {
            throw StoreError(kind: .olderSchema(found: header.version, supported: schema.version),
                             message: "the store has schema version \(header.version) and needs migrating to \(schema.version)",
                             path: connection.path, operation: "check the schema version")
        }
        if configuration.access == .readWrite {
            if connection.isReadOnly {
                throw StoreError(kind: .readOnly, code: .readOnly, message: "the store file is read-only",
                                 path: connection.path, operation: "open the store for reading and writing")
            }
            if let pages = configuration.maximumPageCount {
                _ = try connection.integer("PRAGMA max_page_count = \(max(pages, 1))")
            }
        }
    }
}
