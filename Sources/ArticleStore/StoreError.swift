/// An error of the article store, with the engine's codes and message, the store and the operation.
///
/// ``kind`` says what went wrong in feedingest's terms. For errors SQLite reported, ``code`` is SQLite's
/// extended result code (``SQLiteResultCode/primary`` gives the primary one), ``message`` is `sqlite3_errmsg`
/// and ``systemErrno`` the operating system's errno of the failing call (`sqlite3_system_errno`). For errors
/// PostgreSQL reported, ``sqlState`` is the server's SQLSTATE (`28P01`, `57014`, …) and ``message`` libpq's
/// message. ``path`` names the store: the SQLite file, or the PostgreSQL URI **without its password**.
/// ``description`` names the store and gives a hint for the common cases.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in feedingest's terms.
    public enum Kind: Sendable, Hashable {
        /// SQLite reported an error; ``StoreError/code`` says which.
        case sqlite
        /// The file is not a feedingest store: not an SQLite database, or one of another application.
        case notAFeedingestStore
        /// The store was written by a newer feedingest with a schema this version does not know.
        case newerSchema(found: Int, supported: Int)
        /// The store needs a schema migration, which a read-only store cannot do.
        case olderSchema(found: Int, supported: Int)
        /// The store file cannot be written (immutable, on a read-only file system, no permission).
        case readOnly
        /// The feed has no row in this store.
        case unknownFeed(FeedID)
        /// An ingest call for a feed that ``StoreContext/beginFeed(_:)`` did not start.
        case feedNotStarted(FeedID)
        /// ``StoreContext/beginFeed(_:)`` for a feed that is already being ingested in this context.
        case feedAlreadyStarted(FeedID)
        /// A stored value could not be read back (for example malformed JSON in a list column).
        case invalidStoredValue
        /// PostgreSQL (the server or libpq) reported an error; ``StoreError/sqlState`` says which when the server did.
        case postgres
        /// The store's location cannot be used as given: a malformed PostgreSQL URI, an unknown option.
        case invalidLocation
        /// The database server could not be reached (refused, no such socket, a timeout, the connection lost).
        case unreachable
        /// The server refused the credentials (a wrong password, an unknown role, no `pg_hba.conf` entry).
        case authenticationFailed
        /// The database named in the URI does not exist on the server.
        case missingDatabase
        /// The feed's lease was taken over by another process (its epoch moved on): this writer's late results were
        /// refused and nothing of them was written.
        case leaseLost(FeedID)
    }

    /// What went wrong.
    public var kind: Kind
    /// SQLite's (extended) result code; ``SQLiteResultCode/ok`` for errors SQLite did not report.
    public var code: SQLiteResultCode
    /// SQLite's message (`sqlite3_errmsg`) or feedingest's own words.
    public var message: String
    /// The operating system's errno for the failing call, 0 when none (`sqlite3_system_errno`).
    public var systemErrno: Int32
    /// The store: the SQLite file's path, or the PostgreSQL URI without its password.
    public var path: String
    /// PostgreSQL's SQLSTATE for errors the server reported (`28P01` wrong password, `3D000` no such database,
    /// `57014` statement timeout, `25006` read-only transaction, `42501` insufficient privilege …); `nil` otherwise.
    public var sqlState: SQLState?
    /// The SQL statement or the operation that failed, for example `open the store for reading and writing`.
    public var operation: String

    /// Creates an error value.
    public init(kind: Kind, code: SQLiteResultCode = .ok, message: String, systemErrno: Int32 = 0,
                path: String, operation: String, sqlState: SQLState? = nil) {
        self.kind = kind
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.systemErrno = systemErrno
        self.path = path
        self.operation = operation
    }

    /// The extended result code (the same as ``code``), named as the SQLite documentation names it.
    public var extendedCode: SQLiteResultCode { code }

    /// `path: message (SQLITE_FULL) while <operation> — hint`, one line.
    public var description: String {
        var text = "\(path): \(message)"
        if code != .ok { text += " (\(code))" }
        if let sqlState { text += " (SQLSTATE \(sqlState.rawValue))" }
        if systemErrno != 0 { text += " [errno \(systemErrno): \(SQLiteConnection.describe(errno: systemErrno))]" }
        text += " while \(Self.abbreviate(operation))"
        if let hint { text += "; \(hint)" }
        return text
    }

    /// Whether the whole store is out of reach for now, rather than something about one feed or a setting being wrong:
    /// its server down, restarting or unreachable (a lost connection included), or an SQLite file that another process
    /// kept locked past the busy timeout. Such a condition passes; what failed because of it is retried.
    public var isUnavailable: Bool {
        switch kind {
        case .unreachable: return true
        case .sqlite: return code.primary == .busy
        default: return false
        }
    }

    /// A suggestion for the common failures, or `nil`.
    public var hint: String? {
        switch kind {
        case .readOnly:
            return "the store file cannot be written (immutable, read-only file system or no permission); "
                + "open it with access .readOnly to read it"
        case .notAFeedingestStore:
            return path.lowercased().hasPrefix("postgres")
                ? "feedingest never writes to a database it did not create; give it an empty database of its own"
                : "feedingest never writes to a file it did not create; choose another path"
        case .newerSchema:
            return "this store was written by a newer feedingest; upgrade feedingest to use it"
        case .olderSchema:
            return "open the store read-write once to migrate it"
        case .invalidLocation:
            return "give a path for SQLite, or a PostgreSQL URI such as postgresql://user@host:5432/dbname "
                + "(or postgresql:///dbname?host=/run/postgresql for a unix socket)"
        case .unreachable:
            return "the database server is down, refuses connections, or the host, port or socket directory is wrong"
        case .authenticationFailed:
            return "check the user and password (in the URI, PGPASSWORD or ~/.pgpass) and the server's pg_hba.conf"
        case .missingDatabase:
            return "create it first (createdb NAME, or CREATE DATABASE NAME) and give feedingest a role that owns it"
        case .leaseLost:
            return "this process stalled past its lease (paused, partitioned or overloaded) and another process took "
                + "the feed over; the other process's results stand"
        case .postgres:
            switch sqlState?.rawValue {
            case "57014"?: return "the server's statement_timeout (or a cancel) cut a statement short; nothing of that "
                + "transaction was committed"
            case "25006"?, "42501"?: return "the role cannot write here (a read-only role, a hot standby, or missing "
                + "privileges); use a role that owns the database"
            case "53100"?: return "the database server's disk is full; nothing committed was lost"
            case let state? where state.hasPrefix("08"): return "the connection to the server was lost; the transaction "
                + "in flight was rolled back, and the next run completes it"
            default: return nil
            }
        case .sqlite:
            switch code.primary {
            case .full: return "the disk is full or the store reached its size limit; nothing committed was lost, "
                + "and the failed batch stays pending for a retry"
            case .busy: return "another process or connection kept the store locked longer than the busy timeout"
            case .cantOpen: return "the directory must exist and be writable (the store keeps -wal and -shm files beside it)"
            case .readOnly: return "the store or its directory cannot be written"
            case .corrupt, .notADatabase: return "the file is damaged or not an SQLite database"
            default: return nil
            }
        default:
            return nil
        }
    }

    /// SQL on one line, shortened, so a message stays readable.
    private static func abbreviate(_ operation: String) -> String {
        let line = operation.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return line.count > 120 ? String(line.prefix(117)) + "..." : line
    }
}
