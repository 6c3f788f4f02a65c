// The only file in ArticleStore that calls SQLite's C API (https://sqlite.org/c3ref/intro.html).
// Every call that returns a result code goes through `SQLiteConnection.check`, which turns a failure into
// a `StoreError` carrying the primary and extended code, `sqlite3_errmsg`, the OS errno, the path and the
// operation. Calls that cannot fail (column readers, `sqlite3_changes`, …) return values directly.

import CSQLite
import Foundation

/// An SQLite result code, primary or extended (https://sqlite.org/rescode.html).
///
/// Primary codes are the low 8 bits; an extended code keeps the primary in its low byte, so
/// ``primary`` recovers it (`SQLITE_IOERR_WRITE` → `SQLITE_IOERR`).
public struct SQLiteResultCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The numeric value, as `sqlite3.h` defines it.
    public let rawValue: Int32

    /// Creates a code from its numeric value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `SQLITE_OK`: success.
    public static let ok = Self(rawValue: 0)
    /// `SQLITE_ERROR`: a generic error (often an SQL error).
    public static let error = Self(rawValue: 1)
    /// `SQLITE_INTERNAL`: an internal malfunction of SQLite.
    public static let `internal` = Self(rawValue: 2)
    /// `SQLITE_PERM`: the requested access mode could not be provided.
    public static let permission = Self(rawValue: 3)
    /// `SQLITE_ABORT`: an operation was aborted.
    public static let abort = Self(rawValue: 4)
    /// `SQLITE_BUSY`: another connection (often another process) holds a conflicting lock.
    public static let busy = Self(rawValue: 5)
    /// `SQLITE_LOCKED`: a conflict within the same connection or shared cache.
    public static let locked = Self(rawValue: 6)
    /// `SQLITE_NOMEM`: out of memory.
    public static let noMemory = Self(rawValue: 7)
    /// `SQLITE_READONLY`: a write to a read-only database.
    public static let readOnly = Self(rawValue: 8)
    /// `SQLITE_INTERRUPT`: interrupted by `sqlite3_interrupt`.
    public static let interrupt = Self(rawValue: 9)
    /// `SQLITE_IOERR`: the operating system reported an I/O error.
    public static let ioError = Self(rawValue: 10)
    /// `SQLITE_CORRUPT`: the database file is malformed.
    public static let corrupt = Self(rawValue: 11)
    /// `SQLITE_NOTFOUND`: an unknown opcode or file-control.
    public static let notFound = Self(rawValue: 12)
    /// `SQLITE_FULL`: the disk is full, or the database reached `max_page_count`.
    public static let full = Self(rawValue: 13)
    /// `SQLITE_CANTOPEN`: the file (or its directory, or its `-wal`/`-shm` companion) could not be opened.
    public static let cantOpen = Self(rawValue: 14)
    /// `SQLITE_PROTOCOL`: a locking protocol problem.
    public static let `protocol` = Self(rawValue: 15)
    /// `SQLITE_SCHEMA`: the schema changed.
    public static let schema = Self(rawValue: 17)
    /// `SQLITE_TOOBIG`: a string or blob too large.
    public static let tooBig = Self(rawValue: 18)
    /// `SQLITE_CONSTRAINT`: a constraint was violated.
    public static let constraint = Self(rawValue: 19)
    /// `SQLITE_MISMATCH`: a datatype mismatch.
    public static let mismatch = Self(rawValue: 20)
    /// `SQLITE_MISUSE`: the C API was used wrongly.
    public static let misuse = Self(rawValue: 21)
    /// `SQLITE_AUTH`: an authorizer denied the operation.
    public static let auth = Self(rawValue: 23)
    /// `SQLITE_RANGE`: a bind parameter index out of range.
    public static let range = Self(rawValue: 25)
    /// `SQLITE_NOTADB`: the file is not an SQLite database.
    public static let notADatabase = Self(rawValue: 26)
    /// `SQLITE_ROW`: a row is ready (not an error).
    public static let row = Self(rawValue: 100)
    /// `SQLITE_DONE`: a statement finished (not an error).
    public static let done = Self(rawValue: 101)

    /// The primary code (the low 8 bits).
    public var primary: SQLiteResultCode { Self(rawValue: rawValue & 0xFF) }

    /// SQLite's English description of the code (`sqlite3_errstr`), for example "database or disk is full".
    public var explanation: String { String(cString: sqlite3_errstr(rawValue)) }

    /// The name of the primary code (`SQLITE_FULL`), with the extended number when it differs.
    public var description: String {
        let names: [Int32: String] = [
            0: "SQLITE_OK", 1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT",
            5: "SQLITE_BUSY", 6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY", 9: "SQLITE_INTERRUPT",
            10: "SQLITE_IOERR", 11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND", 13: "SQLITE_FULL",
            14: "SQLITE_CANTOPEN", 15: "SQLITE_PROTOCOL", 16: "SQLITE_EMPTY", 17: "SQLITE_SCHEMA",
            18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT", 20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE",
            22: "SQLITE_NOLFS", 23: "SQLITE_AUTH", 24: "SQLITE_FORMAT", 25: "SQLITE_RANGE", 26: "SQLITE_NOTADB",
            27: "SQLITE_NOTICE", 28: "SQLITE_WARNING", 100: "SQLITE_ROW", 101: "SQLITE_DONE",
        ]
        let name = names[primary.rawValue] ?? "SQLite code \(primary.rawValue)"
        return rawValue == primary.rawValue ? name : "\(name) (extended \(rawValue))"
    }
}

/// How a connection opens its file.
struct SQLiteOpenMode {
    /// Read and write; when false the connection is opened with `SQLITE_OPEN_READONLY`.
    var writable: Bool
    /// Create the file when missing (`SQLITE_OPEN_CREATE`); only with ``writable``.
    var create: Bool
}

/// One `sqlite3*` connection and its prepared statements.
///
/// Not thread-safe, by design: it is opened with `SQLITE_OPEN_NOMUTEX` (SQLite's "multi-thread" mode,
/// https://sqlite.org/threadsafe.html), which is correct only while one thread at a time uses it. Its owners
/// (``StoreContext``, the ``Store`` initialiser and the ``Checkpointer``'s thread) are confined to one thread and are
/// not `Sendable`. The one hand-over between threads is the initialiser's connection, which `SQLiteEngine` keeps idle
/// (`PreparedConnection`) and gives, once, to the first context, on whatever thread makes it.
final class SQLiteConnection {
    /// The database file's path, for error messages.
    let path: String
    private let handle: OpaquePointer
    /// Prepared statements, indexed by ``SQLiteStatement/Key``; prepared on first use, finalized in `deinit`.
    private var statements: [SQLiteStatement?] = []

    /// The process-wide settings, made once, before the first connection opens (`sqlite3_config` works only before
    /// SQLite initialises; a later call returns `SQLITE_MISUSE` and changes nothing, which is harmless here):
    /// no memory statistics (`SQLITE_CONFIG_MEMSTATUS` off). They are on by default and take a global mutex around
    /// every allocation and free, ~25 of each per stored article; nothing here reads them (`sqlite3_memory_used`).
    private static let libraryConfigured: Bool = CSQLite_config_int(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK

    /// Opens (and, with `mode.create`, creates) the database file.
    ///
    /// Opening is lazy in SQLite: a file that is not a database is only detected on the first read.
    init(path: String, mode: SQLiteOpenMode) throws(StoreError) {
        _ = Self.libraryConfigured
        self.path = path
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= mode.writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY
        if mode.writable && mode.create { flags |= SQLITE_OPEN_CREATE }
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            // sqlite3_open_v2 hands back a connection even on failure (unless out of memory); it must be closed.
            let error = StoreError(
                kind: .sqlite, code: SQLiteResultCode(rawValue: code),
                message: db.map { String(cString: sqlite3_errmsg($0)) } ?? SQLiteResultCode(rawValue: code).explanation,
                systemErrno: db.map { sqlite3_system_errno($0) } ?? 0, path: path,
                operation: mode.writable ? "open the store for reading and writing" : "open the store read-only")
            if let db { sqlite3_close_v2(db) }
            throw error
        }
        handle = db
    }

    deinit {
        // Statements must be finalized before the connection closes (sqlite3_close_v2 would otherwise keep
        // it as a zombie until they are). Errors are ignored: finalize only reports the last step's error.
        for statement in statements { statement?.finalize() }
        sqlite3_close_v2(handle)
    }

    // MARK: Checking

    /// Checks a result code: `SQLITE_OK`, `SQLITE_ROW` and `SQLITE_DONE` pass, anything else throws.
    ///
    /// The one place where SQLite failures become ``StoreError``s.
    @discardableResult
    func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(StoreError) -> Int32 {
        if code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE { return code }
        throw makeError(code: code, operation: operation())
    }

    /// Builds the error for a failed call: extended code, `sqlite3_errmsg` and the OS errno of this connection.
    func makeError(code: Int32, operation: String) -> StoreError {
        let extended = sqlite3_extended_errcode(handle)
        // sqlite3_errmsg describes the most recent failing call on this connection; when the code we were handed
        // is not that one (for example a code from sqlite3_reset after a later success), fall back to errstr.
        let message = (extended & 0xFF) == (code & 0xFF)
            ? String(cString: sqlite3_errmsg(handle)) : String(cString: sqlite3_errstr(code))
        let primary = SQLiteResultCode(rawValue: code).primary
        let extendedCode = (extended & 0xFF) == primary.rawValue ? extended : code
        return StoreError(kind: .sqlite, code: SQLiteResultCode(rawValue: extendedCode), message: message,
                          systemErrno: sqlite3_system_errno(handle), path: path, operation: operation)
    }

    // MARK: Configuration

    /// Sets the busy handler to wait up to `milliseconds` for another connection's lock (`sqlite3_busy_timeout`).
    func setBusyTimeout(milliseconds: Int32) throws(StoreError) {
        try check(sqlite3_busy_timeout(handle, milliseconds), "set the busy timeout")
    }

    /// Turns on `SQLITE_DBCONFIG_DEFENSIVE`: no writable schema, no corrupting pragmas from SQL.
    func enableDefensiveMode() throws(StoreError) {
        var result: Int32 = 0
        try check(CSQLite_db_config_int(handle, SQLITE_DBCONFIG_DEFENSIVE, 1, &result), "enable defensive mode")
    }

    /// Tells `checkpointer` the write-ahead log's size, in pages, after each commit of this connection
    /// (`sqlite3_wal_hook`). This replaces SQLite's automatic checkpoint on the connection (`wal_autocheckpoint`),
    /// which is such a hook too. The connection's owner keeps `checkpointer` alive and calls
    /// ``removeWALHook()`` before it lets go.
    ///
    /// When the checkpointer says the log has outgrown it (it has let its own checkpoint in progress finish), the
    /// committing connection checkpoints itself, passively, as SQLite's automatic checkpoint does from the same hook:
    /// it waits for no reader, and its errors are ignored as the automatic one's are.
    func reportWALSize(to checkpointer: Checkpointer) {
        sqlite3_wal_hook(handle, { context, db, _, pages in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<Checkpointer>.fromOpaque(context).takeUnretainedValue()
            if checkpointer.walHolds(pages: Int(pages)) {
                _ = sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
                checkpointer.committerCheckpointEnded()
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    /// Removes the hook of ``reportWALSize(to:)``: no automatic checkpoint from this connection any more.
    func removeWALHook() {
        sqlite3_wal_hook(handle, nil, nil)
    }

    /// Copies what it can of the write-ahead log into the database without waiting for any lock, and syncs both
    /// (`sqlite3_wal_checkpoint_v2`, `SQLITE_CHECKPOINT_PASSIVE`). `SQLITE_BUSY` (another checkpoint is running)
    /// is not an error.
    ///
    /// - Returns: how many of the log's frames are now in the database (-1 when it found the lock taken).
    func checkpointPassively() throws(StoreError) -> Int {
        var checkpointed: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, &checkpointed)
        if code != SQLITE_BUSY { try check(code, "checkpoint the write-ahead log") }
        return Int(checkpointed)
    }

    /// Whether SQLite opened the main database read-only (`sqlite3_db_readonly`), which it does silently when
    /// a file asked for read-write cannot be opened for writing (for example an immutable file).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Whether a transaction is open (`sqlite3_get_autocommit` is 0 inside one).
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The rowid of the most recent successful insert on this connection.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE on this connection.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The SQLite library version, for example `3.40.1`.
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// The text of `strerror` for an errno value.
    static func describe(errno value: Int32) -> String { String(cString: strerror(value)) }

    // MARK: Running SQL

    /// Runs one or more statements that return no rows of interest (`sqlite3_exec`).
    func execute(_ sql: String) throws(StoreError) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql)
    }

    /// Runs a statement that returns a single integer (a pragma, a count) and returns it.
    func integer(_ sql: String) throws(StoreError) -> Int64? {
        let statement = try prepareUncached(sql)
        defer { statement.finalize() }
        return try statement.step() ? statement.int64(0) : nil
    }

    /// Runs a statement and returns the first row's columns as integers (empty when there is no row).
    func integers(_ sql: String, columns: Int32) throws(StoreError) -> [Int64] {
        let statement = try prepareUncached(sql)
        defer { statement.finalize() }
        guard try statement.step() else { return [] }
        return (0..<columns).map { statement.int64($0) }
    }

    /// Runs a statement and returns the first column of every row as text.
    func texts(_ sql: String) throws(StoreError) -> [String] {
        let statement = try prepareUncached(sql)
        defer { statement.finalize() }
        var rows: [String] = []
        while try statement.step() { rows.append(statement.text(0) ?? "") }
        return rows
    }

    /// The cached prepared statement for `key`, prepared on first use and reset for reuse.
    func statement(_ key: SQLiteStatement.Key) throws(StoreError) -> SQLiteStatement {
        let index = key.index
        if index < statements.count, let statement = statements[index] { return statement }
        if statements.count <= index { statements.append(contentsOf: repeatElement(nil, count: index + 1 - statements.count)) }
        let statement = try prepare(key.sql, persistent: true)
        statements[index] = statement
        return statement
    }

    /// Prepares a one-off statement (a pragma, a count) that the calling method finalizes before it returns.
    private func prepareUncached(_ sql: String) throws(StoreError) -> SQLiteStatement {
        try prepare(sql, persistent: false)
    }

    private func prepare(_ sql: String, persistent: Bool) throws(StoreError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        try check(sqlite3_prepare_v3(handle, sql, -1, flags, &statement, nil), sql)
        guard let statement else {
            // SQL with no statement (only a comment): a programming error in this module's SQL.
            throw StoreError(kind: .sqlite, code: .misuse, message: "empty SQL statement", path: path, operation: sql)
        }
        return SQLiteStatement(handle: statement, connection: self, sql: sql)
    }
}

/// A prepared statement of one ``SQLiteConnection``; confined to its connection's thread.
final class SQLiteStatement {
    /// Identifies a cached statement: its SQL text and a small index into the connection's cache.
    struct Key {
        let index: Int
        let sql: String
    }

    private let handle: OpaquePointer
    // unowned(unsafe): the connection owns its cached statements and finalizes them in its deinit, and uncached
    // ones are finalized before the connection's methods return, so a statement never outlives its connection.
    // (Plain `unowned` costs an atomic retain and release on every bind, measurable per article.)
    private unowned(unsafe) let connection: SQLiteConnection
    /// The SQL text, for error messages.
    let sql: String
    private var finalized = false

    fileprivate init(handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    fileprivate func finalize() {
        guard !finalized else { return }
        finalized = true
        sqlite3_finalize(handle)
    }

    // MARK: Binding (indices are 1-based, as in SQLite)

    /// Binds text, or NULL for `nil`. SQLite copies the bytes (`SQLITE_TRANSIENT`).
    func bind(_ value: String?, at index: Int32) throws(StoreError) {
        guard let value else { return try bindNull(at: index) }
        let count = value.utf8.count
        try connection.check(sqlite3_bind_text(handle, index, value, Int32(count), CSQLite_transient()), sql)
    }

    /// Binds UTF-8 bytes as text without copying them (`SQLITE_STATIC`), or NULL for `nil`.
    ///
    /// The bytes must stay valid and unchanged until the statement has been stepped and reset.
    func bind(utf8 bytes: UnsafeRawBufferPointer?, at index: Int32) throws(StoreError) {
        guard let bytes, let start = bytes.baseAddress else { return try bindNull(at: index) }
        try checkBind(sqlite3_bind_text(handle, index, start.assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                                        CSQLite_static()))
    }

    /// Binds a 64-bit integer, or NULL for `nil`.
    func bind(_ value: Int64?, at index: Int32) throws(StoreError) {
        guard let value else { return try bindNull(at: index) }
        try checkBind(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds an integer, or NULL for `nil`.
    func bind(_ value: Int?, at index: Int32) throws(StoreError) {
        try bind(value.map { Int64($0) }, at: index)
    }

    /// Binds a double, or NULL for `nil`.
    func bind(_ value: Double?, at index: Int32) throws(StoreError) {
        guard let value else { return try bindNull(at: index) }
        try checkBind(sqlite3_bind_double(handle, index, value))
    }

    /// Binds NULL.
    func bindNull(at index: Int32) throws(StoreError) {
        try checkBind(sqlite3_bind_null(handle, index))
    }

    /// `SQLiteConnection.check` for a bind's result, without making its operation's closure on success (which
    /// retained the statement: ~30 binds per stored article).
    @inline(__always)
    private func checkBind(_ code: Int32) throws(StoreError) {
        if code != SQLITE_OK { throw connection.makeError(code: code, operation: sql) }
    }

    // MARK: Stepping

    /// Runs the statement to its next row: `true` when a row is ready, `false` when it is done.
    func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        let error = connection.makeError(code: code, operation: sql)
        sqlite3_reset(handle)  // returns the same error; the statement is ready to run again
        throw error
    }

    /// Runs a statement that returns no rows, then resets it.
    func run() throws(StoreError) {
        defer { reset() }
        _ = try step()
    }

    /// Resets the statement so it can run again; bindings are kept until rebound.
    func reset() {
        // The code returned repeats the last step's result, which step() has already checked.
        sqlite3_reset(handle)
    }

    // MARK: Columns (0-based)

    /// Whether the column of the current row is NULL.
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// The column as an integer (0 for NULL).
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// The column as an integer, or `nil` for NULL.
    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    /// The column as a double, or `nil` for NULL.
    func double(_ column: Int32) -> Double? { isNull(column) ? nil : sqlite3_column_double(handle, column) }

    /// The column as UTF-8 text, or `nil` for NULL.
    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
