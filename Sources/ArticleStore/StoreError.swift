/// An error of the article store, with SQLite's codes and message, the file and the operation.
///
/// ``kind`` says what went wrong in feedingest's terms; for errors SQLite reported, ``code`` is SQLite's
/// extended result code (``SQLiteResultCode/primary`` gives the primary one), ``message`` is `sqlite3_errmsg`
/// and ``systemErrno`` the operating system's errno of the failing call (`sqlite3_system_errno`).
/// ``description`` names the path and gives a hint for the common cases.
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
    }

    /// What went wrong.
    public var kind: Kind
    /// SQLite's (extended) result code; ``SQLiteResultCode/ok`` for errors SQLite did not report.
    public var code: SQLiteResultCode
    /// SQLite's message (`sqlite3_errmsg`) or feedingest's own words.
    public var message: String
    /// The operating system's errno for the failing call, 0 when none (`sqlite3_system_errno`).
    public var systemErrno: Int32
    /// The store file's path.
    public var path: String
    /// The SQL statement or the operation that failed, for example `open the store for reading and writing`.
    public var operation: String

    /// Creates an error value.
    public init(kind: Kind, code: SQLiteResultCode = .ok, message: String, systemErrno: Int32 = 0,
                path: String, operation: String) {
        self.kind = kind
        self.code = code
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
        if systemErrno != 0 { text += " [errno \(systemErrno): \(SQLiteConnection.describe(errno: systemErrno))]" }
        text += " while \(Self.abbreviate(operation))"
        if let hint { text += "; \(hint)" }
        return text
    }

    /// A suggestion for the common failures, or `nil`.
    public var hint: String? {
        switch kind {
        case .readOnly:
            return "the store file cannot be written (immutable, read-only file system or no permission); "
                + "open it with access .readOnly to read it"
        case .notAFeedingestStore:
            return "feedingest never writes to a file it did not create; choose another path"
        case .newerSchema:
            return "this store was written by a newer feedingest; upgrade feedingest to use it"
        case .olderSchema:
            return "open the store read-write once to migrate it"
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
