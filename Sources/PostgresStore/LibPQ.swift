// The only file in PostgresStore that calls libpq (https://www.postgresql.org/docs/current/libpq.html).
// Every call that can fail goes through `PGConnection.check`, which turns a failed result into a `StoreError` carrying
// the SQLSTATE, the server's message (primary, detail, hint), the store's URI without its password and the operation.
// Calls that cannot fail (value accessors, PQstatus, …) return values directly.

import ArticleStore
import CLibPQ
import Foundation
import Support

/// A PostgreSQL location as given (`postgresql://…`), checked by libpq's own parser, and named without its password.
struct PostgresLocation: Sendable {
    /// The URI as given, password included: only ever handed to libpq.
    let uri: String
    /// The URI with its password replaced by `***`: for every message, report and log line.
    let redacted: String
    /// The password's text as written and percent-decoded, to scrub from messages; empty when none.
    private let secrets: [String]

    /// Whether `text` is a PostgreSQL URI (`postgresql://` or `postgres://`).
    static func isURI(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    /// Checks `uri` with libpq's parser (`PQconninfoParse`), without connecting.
    ///
    /// - Throws: ``StoreError/Kind/invalidLocation`` with libpq's reason, the password scrubbed from it.
    /// `uri` with its password replaced by `***`, whether or not libpq can parse it.
    static func redacted(_ uri: String) -> String { redact(uri).0 }

    init(_ uri: String) throws(StoreError) {
        self.uri = uri
        let (redacted, secrets) = Self.redact(uri)
        self.redacted = redacted
        self.secrets = secrets
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(uri, &message) else {
            let reason = message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "out of memory"
            if let message { PQfreemem(message) }
            throw StoreError(kind: .invalidLocation, message: "not a usable PostgreSQL URI: \(scrub(reason, always: true))",
                             path: redacted, operation: "parse the PostgreSQL URI")
        }
        PQconninfoFree(options)
    }

    /// `text` without the password (replaced by `***`). Short passwords are scrubbed only from libpq's parse errors
    /// (`always`), which may quote the URI; elsewhere (server messages, which never contain the password) replacing
    /// every one- or two-letter match would garble the message.
    func scrub(_ text: String, always: Bool = false) -> String {
        var text = text
        for secret in secrets where !secret.isEmpty && (always || secret.count >= 3) {
            text = text.replacingOccurrences(of: secret, with: "***")
        }
        return text
    }

    /// The URI with the password of its user information (`user:password@`) and of a `password=` query parameter
    /// replaced by `***`, and the password's spellings.
    private static func redact(_ uri: String) -> (String, [String]) {
        var secrets: [String] = Redaction.userInfoPassword(in: uri).map { [$0] } ?? []
        var result = Redaction.redactedText(uri)
        if let query = result.firstIndex(of: "?") {
            var parts = result[result.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map(String.init)
            for index in parts.indices where parts[index].lowercased().hasPrefix("password=") {
                secrets.append(String(parts[index].dropFirst("password=".count)))
                parts[index] = "password=" + Redaction.mask
            }
            result = String(result[...query]) + parts.joined(separator: "&")
        }
        for secret in secrets { if let decoded = secret.removingPercentEncoding, decoded != secret { secrets.append(decoded) } }
        return (result, secrets)
    }
}

/// A PostgreSQL type's OID, as the prepared statements declare their parameters (`pg_type.oid`).
struct PGType: RawRepresentable, Hashable {
    let rawValue: Oid
    static let bool = PGType(rawValue: 16)
    static let int8 = PGType(rawValue: 20)
    static let int2 = PGType(rawValue: 21)
    static let int4 = PGType(rawValue: 23)
    static let text = PGType(rawValue: 25)
    static let float8 = PGType(rawValue: 701)
    static let varchar = PGType(rawValue: 1043)
    static let timestamptz = PGType(rawValue: 1184)
    static let int8Array = PGType(rawValue: 1016)
    static let textArray = PGType(rawValue: 1009)
    static let name = PGType(rawValue: 19)
}

/// A statement prepared once per connection: a name, its SQL and its parameters' types.
struct PGStatement {
    let name: String
    let sql: String
    let types: [PGType]
}

/// Parameters for one execution, laid out in one buffer: binary for scalars and text (no terminating NUL needed), text
/// format for arrays (`{1,2,3}`).
struct PGParameters {
    private var bytes: [UInt8] = []
    private var spans: [(offset: Int, length: Int)?] = []
    private var formats: [Int32] = []

    init() {
        bytes.reserveCapacity(4096)
    }

    var count: Int { spans.count }

    mutating func appendNull() {
        spans.append(nil)
        formats.append(1)
    }

    /// UTF-8 text. PostgreSQL's text cannot hold NUL: each NUL becomes U+FFFD (the only change a value undergoes).
    mutating func append(utf8 value: UnsafeRawBufferPointer?) {
        guard let value else { return appendNull() }
        let offset = bytes.count
        if value.contains(0) {
            for byte in value { if byte == 0 { bytes += [0xEF, 0xBF, 0xBD] } else { bytes.append(byte) } }
        } else {
            bytes.append(contentsOf: value)
        }
        spans.append((offset, bytes.count - offset))
        formats.append(1)
    }

    mutating func append(_ value: String?) {
        guard var value else { return appendNull() }
        value.withUTF8 { append(utf8: UnsafeRawBufferPointer($0)) }
    }

    mutating func append(_ value: Int64?) {
        guard let value else { return appendNull() }
        appendBinary(value.bigEndian)
    }

    mutating func append(_ value: Int?) {
        append(value.map(Int64.init))
    }

    mutating func append(_ value: Double?) {
        guard let value else { return appendNull() }
        appendBinary(value.bitPattern.bigEndian)
    }

    mutating func append(_ value: Bool) {
        appendBinary(UInt8(value ? 1 : 0))
    }

    /// A `timestamptz`: microseconds since 2000-01-01 00:00 UTC (the server's integer datetimes).
    mutating func append(_ value: Date?) {
        guard let value else { return appendNull() }
        append(PGTime.microseconds(value))
    }

    /// An `int8[]`, in text format.
    mutating func append(ids: [Int64]) {
        appendText("{" + ids.map(String.init).joined(separator: ",") + "}")
    }

    /// A `text[]`, in text format, each element quoted.
    mutating func append(texts: [String?]) {
        let elements = texts.map { text -> String in
            guard let text else { return "NULL" }
            var quoted = "\""
            for character in text.unicodeScalars {
                if character == "\"" || character == "\\" { quoted.append("\\") }
                if character == "\u{0}" { quoted.append("\u{FFFD}"); continue }
                quoted.unicodeScalars.append(character)
            }
            return quoted + "\""
        }
        appendText("{" + elements.joined(separator: ",") + "}")
    }

    private mutating func appendText(_ text: String) {
        let offset = bytes.count
        bytes.append(contentsOf: Array(text.utf8))
        bytes.append(0)  // text format: NUL-terminated
        spans.append((offset, bytes.count - offset - 1))
        formats.append(0)
    }

    private mutating func appendBinary<T>(_ value: T) {
        let offset = bytes.count
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
        spans.append((offset, MemoryLayout<T>.size))
        formats.append(1)
    }

    /// Calls `body` with libpq's parameter arrays: values, lengths, formats.
    fileprivate func withArrays<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R) -> R {
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            let values: [UnsafePointer<CChar>?] = spans.map { span in span.flatMap { base?.advanced(by: $0.offset) } }
            let lengths: [Int32] = spans.map { Int32($0?.length ?? 0) }
            return values.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}

/// PostgreSQL's binary `timestamptz`: microseconds since 2000-01-01 00:00 UTC.
enum PGTime {
    static let epoch2000: Double = 946_684_800

    static func microseconds(_ date: Date) -> Int64 {
        Int64(((date.timeIntervalSince1970 - epoch2000) * 1_000_000).rounded())
    }

    static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000 + epoch2000)
    }
}

/// One `PGconn`, its prepared statements and its checked calls.
///
/// Not thread-safe: libpq allows one thread at a time per connection. Its owner (a context's
/// `PostgresStoreConnection`, or the engine while it opens the store) is confined to one thread and not `Sendable`.
final class PGConnection {
    let location: PostgresLocation
    private var handle: OpaquePointer
    /// Statements prepared on this session (they vanish when the session is reset).
    private var prepared: Set<String> = []

    /// Connects (blocking), with `client_encoding` UTF8 and `application_name` feedingest (the URI may override the
    /// name and anything else; the encoding is always UTF8). `connectTimeout` applies when the URI sets none.
    init(_ location: PostgresLocation, connectTimeout: Int) throws(StoreError) {
        self.location = location
        let keywords = ["connect_timeout", "application_name", "dbname", "client_encoding"]
        let values = [String(max(connectTimeout, 2)), "feedingest", location.uri, "UTF8"]
        let handle = Self.withCStrings(keywords) { keywords in
            Self.withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let handle else {
            throw StoreError(kind: .unreachable, message: "libpq could not allocate a connection", path: location.redacted,
                             operation: "connect")
        }
        self.handle = handle
        guard PQstatus(handle) == CONNECTION_OK else {
            // deinit runs when an initialiser that set every property throws: it calls PQfinish.
            throw connectionError(operation: "connect")
        }
        CLibPQ_silenceNotices(handle)
    }

    deinit {
        PQfinish(handle)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        pointers.append(nil)
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    // MARK: State

    /// Whether the connection broke (the server restarted or went away).
    var isBroken: Bool { PQstatus(handle) == CONNECTION_BAD }

    /// Whether a transaction block is open (or failed and waiting for a rollback).
    var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// The server's version as an integer (150004 for 15.4).
    var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Reconnects a broken connection with the same parameters (`PQreset`); prepared statements are prepared again.
    func resetIfBroken() throws(StoreError) {
        guard isBroken else { return }
        PQreset(handle)
        prepared.removeAll()
        guard PQstatus(handle) == CONNECTION_OK else { throw connectionError(operation: "reconnect") }
        CLibPQ_silenceNotices(handle)
    }

    // MARK: Checking

    /// Checks a result: `PGRES_COMMAND_OK`, `PGRES_TUPLES_OK` and `PGRES_EMPTY_QUERY` pass, anything else (or none)
    /// throws. The one place where libpq failures become ``StoreError``s.
    func check(_ result: OpaquePointer?, _ operation: @autoclosure () -> String) throws(StoreError) -> PGResult {
        guard let result else {
            throw connectionError(operation: operation())
        }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
            return PGResult(result)
        }
        let error = makeError(result, operation: operation())
        PQclear(result)
        throw error
    }

    /// The error of a failed result: SQLSTATE, the primary message with its detail and hint, mapped to a kind.
    private func makeError(_ result: OpaquePointer, operation: String) -> StoreError {
        func field(_ code: Int32) -> String? { PQresultErrorField(result, code).map { String(cString: $0) } }
        let state = field(CLibPQ_diagSQLState()).map(SQLState.init(rawValue:))
        var message = field(CLibPQ_diagMessagePrimary())
            ?? String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
        if message.isEmpty { message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines) }
        if let detail = field(CLibPQ_diagMessageDetail()) { message += " (\(detail))" }
        if let hint = field(CLibPQ_diagMessageHint()) { message += "; server hint: \(hint)" }
        let kind: StoreError.Kind
        switch state {
        case .invalidPassword?, .invalidAuthorization?: kind = .authenticationFailed
        case .invalidCatalogName?: kind = .missingDatabase
        case .readOnlyTransaction?, .insufficientPrivilege?: kind = .readOnly
        case let state? where state.errorClass == "08" || state == .adminShutdown: kind = .unreachable
        case nil where isBroken: kind = .unreachable
        default: kind = .postgres
        }
        if state == nil, isBroken { message = "the connection to the server was lost: " + message }
        return StoreError(kind: kind, message: location.scrub(message), path: location.redacted, operation: operation,
                          sqlState: state)
    }

    /// The error of a failed connection (no result to read an SQLSTATE from), classified by libpq's state and message.
    private func connectionError(operation: String) -> StoreError {
        let raw = String(cString: PQerrorMessage(handle))
        let message = raw.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
        let lower = message.lowercased()
        var kind: StoreError.Kind
        var text = message.isEmpty ? "the connection failed" : message
        if lower.contains("for connection option") || lower.contains("invalid connection option") || lower.contains("invalid sslmode") {
            // libpq checks option values (a port, a mode) only when it connects.
            kind = .invalidLocation
            text = "not a usable PostgreSQL URI: " + text
        } else if PQconnectionNeedsPassword(handle) != 0 || lower.contains("password authentication failed")
            || lower.contains("no pg_hba.conf entry") || (lower.contains("role") && lower.contains("does not exist")) {
            kind = .authenticationFailed
        } else if lower.contains("database") && lower.contains("does not exist") {
            kind = .missingDatabase
        } else {
            kind = .unreachable
        }
        return StoreError(kind: kind, message: location.scrub(text, always: kind == .invalidLocation), path: location.redacted, operation: operation)
    }

    // MARK: Running SQL

    /// Runs SQL with the simple query protocol (`PQexec`): several statements, no parameters, text results.
    @discardableResult
    func execute(_ sql: String) throws(StoreError) -> PGResult {
        try check(PQexec(handle, sql), sql)
    }

    /// Runs a prepared statement (prepared on its first use on this session, `PQprepare`) with binary parameters and
    /// binary results (`PQexecPrepared`).
    @discardableResult
    func execute(_ statement: PGStatement, _ parameters: PGParameters) throws(StoreError) -> PGResult {
        if !prepared.contains(statement.name) {
            let types = statement.types.map(\.rawValue)
            _ = try types.withUnsafeBufferPointer { types throws(StoreError) in
                try check(PQprepare(handle, statement.name, statement.sql, Int32(types.count), types.baseAddress),
                          statement.sql)
            }
            prepared.insert(statement.name)
        }
        let count = Int32(parameters.count)
        let result = parameters.withArrays { values, lengths, formats in
            PQexecPrepared(handle, statement.name, count, values, lengths, formats, 1)
        }
        return try check(result, statement.sql)
    }
}

/// A `PGresult`, cleared when it goes away. Reads binary columns (prepared statements) and text ones (`PQexec`).
final class PGResult {
    private let handle: OpaquePointer

    fileprivate init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { PQclear(handle) }

    /// Rows returned.
    var rows: Int { Int(PQntuples(handle)) }
    /// Rows a command changed (`PQcmdTuples`), 0 when it reports none.
    var changedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) == 1 }

    private func isBinary(_ column: Int) -> Bool { PQfformat(handle, Int32(column)) == 1 }
    private func type(_ column: Int) -> PGType { PGType(rawValue: PQftype(handle, Int32(column))) }

    private func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: value, count: length)
    }

    /// The value as text (`nil` for NULL): the bytes of a binary text column, or any column of a text result.
    func text(_ row: Int, _ column: Int) -> String? {
        guard !isNull(row, column) else { return nil }
        return String(decoding: bytes(row, column), as: UTF8.self)
    }

    /// The value as an integer (`nil` for NULL): binary `int2`/`int4`/`int8`/`bool`, or text digits.
    func int64(_ row: Int, _ column: Int) -> Int64? {
        guard !isNull(row, column) else { return nil }
        let value = bytes(row, column)
        guard isBinary(column) else { return Int64(String(decoding: value, as: UTF8.self)) }
        switch value.count {
        case 8: return Int64(bigEndian: value.loadUnaligned(as: Int64.self))
        case 4: return Int64(Int32(bigEndian: value.loadUnaligned(as: Int32.self)))
        case 2: return Int64(Int16(bigEndian: value.loadUnaligned(as: Int16.self)))
        case 1: return Int64(value[0])
        default: return nil
        }
    }

    /// The value as a boolean.
    func bool(_ row: Int, _ column: Int) -> Bool? {
        guard !isNull(row, column) else { return nil }
        guard isBinary(column) else { return text(row, column) == "t" }
        return bytes(row, column).first.map { $0 != 0 }
    }

    /// The value as a date: binary `timestamptz`, or binary `float8` seconds since 1970.
    func date(_ row: Int, _ column: Int) -> Date? {
        guard !isNull(row, column) else { return nil }
        let value = bytes(row, column)
        guard isBinary(column), value.count == 8 else { return nil }
        if type(column) == .float8 {
            return Date(timeIntervalSince1970: Double(bitPattern: UInt64(bigEndian: value.loadUnaligned(as: UInt64.self))))
        }
        return PGTime.date(microseconds: Int64(bigEndian: value.loadUnaligned(as: Int64.self)))
    }

    /// The value of a binary `float8` column.
    func double(_ row: Int, _ column: Int) -> Double? {
        guard !isNull(row, column) else { return nil }
        let value = bytes(row, column)
        guard isBinary(column), value.count == 8, type(column) == .float8 else { return text(row, column).flatMap(Double.init) }
        return Double(bitPattern: UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)))
    }

    /// The value as seconds since 1970 (a `timestamptz` column).
    func seconds(_ row: Int, _ column: Int) -> Double? {
        date(row, column)?.timeIntervalSince1970
    }
}

/// libpq's version, as an integer (150004 for 15.4).
var libpqVersion: Int { Int(PQlibVersion()) }
