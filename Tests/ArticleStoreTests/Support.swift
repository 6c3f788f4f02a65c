import ArticleStore
import CSQLite
import Foundation
import PostgresStore
import Syndication
import TestSupport
import Testing

/// A fresh directory under the system temporary directory, removed (with any immutable flag cleared) at the end.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        path = NSTemporaryDirectory() + "articlestore-\(safe.prefix(40))-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    func file(_ name: String) -> String { path + "/" + name }

    deinit {
        _ = try? run("/usr/bin/chattr", "-R", "-i", path)
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Runs a command to completion; returns its exit status and its output (stdout, then stderr).
@discardableResult
func run(_ executable: String, _ arguments: String...) throws -> (status: Int32, output: String) {
    let finished = try ChildProcess.run(executable, arguments)
    return (finished.status, finished.standardOutput + finished.standardError)
}

/// Whether `chattr +i` works here (root on a file system with inode flags, such as ext4): the immutable flag
/// holds even against root, unlike permission bits.
let immutableFlagWorks: Bool = {
    let directory = TemporaryDirectory("immutable-probe")
    let file = directory.file("probe")
    guard FileManager.default.createFile(atPath: file, contents: Data("x".utf8)) else { return false }
    guard (try? run("/usr/bin/chattr", "+i", file))?.status == 0 else { return false }
    let writable = FileHandle(forWritingAtPath: file) != nil
    _ = try? run("/usr/bin/chattr", "-i", file)
    return !writable
}()

/// Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN).
let canMountTmpfs: Bool = {
    let directory = TemporaryDirectory("mount-probe")
    guard (try? run("/usr/bin/mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", directory.path))?.status == 0 else { return false }
    _ = try? run("/usr/bin/umount", directory.path)
    return true
}()

/// A raw SQLite connection for setting up hostile files and checking results independently of ArticleStore.
final class RawSQLite {
    let handle: OpaquePointer

    init(_ path: String, readOnly: Bool = false) {
        var db: OpaquePointer?
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        precondition(sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK, "cannot open \(path)")
        handle = db!
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs SQL; returns SQLite's result code.
    @discardableResult
    func execute(_ sql: String) -> Int32 { sqlite3_exec(handle, sql, nil, nil, nil) }

    /// One column (the first by default) of every row, as text.
    func strings(_ sql: String, column: Int32 = 0) -> [String] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { return ["prepare failed: \(message)"] }
        defer { sqlite3_finalize(statement) }
        var rows: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "NULL")
        }
        return rows
    }

    func integer(_ sql: String) -> Int { Int(strings(sql).first ?? "") ?? -1 }

    var message: String { String(cString: sqlite3_errmsg(handle)) }
}

/// The bytes of a file, to show it was not touched.
func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

/// An article with a guid, a link and some content; `version` changes the content.
func makeArticle(_ id: String, link: String? = nil, title: String? = nil, version: Int = 1, feed: String = "https://example.com/feed.xml",
                 source: Article.IDSource = .guid) -> Article {
    var article = Article(id: id, idSource: source, feed: feed)
    article.title = title ?? "Title \(id)"
    article.link = link ?? "https://example.com/articles/\(id)"
    article.published = Date(timeIntervalSince1970: 1_700_000_000 + Double(abs(id.hashValue % 100_000)))
    article.content = TextContent("<p>Content of \(id), version \(version)</p>", type: .html)
    return article
}

/// The store engines the contract tests run against: the same test bodies, two engines.
enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgresql

    var testDescription: String { rawValue }

    /// The location of a fresh, empty store of this engine: a file in `directory`, or a new database on the test
    /// process's PostgreSQL server (TestSupport's ``PostgresServer``, started on first use).
    func freshLocation(in directory: TemporaryDirectory, label: String) throws -> String {
        switch self {
        case .sqlite: return directory.file("store.sqlite")
        case .postgresql:
            let server = try PostgresServer.shared.get()
            return server.uri(try server.createDatabase(label))
        }
    }
}

/// A fresh store (an SQLite file in a temporary directory, or a new PostgreSQL database), with a context and one feed.
struct Fixture {
    let directory: TemporaryDirectory
    let store: Store
    let context: StoreContext
    let feed: FeedID
    /// Where the store is: the file's path or the database's URI.
    let location: String

    init(_ label: String = #function, engine: Engine = .sqlite, configuration: StoreConfiguration = StoreConfiguration(),
         url: String = "https://example.com/feed.xml") throws {
        directory = TemporaryDirectory(label)
        location = try engine.freshLocation(in: directory, label: String(label.prefix { $0 != "(" }))
        store = try Store.open(location, configuration: configuration)
        context = try store.makeContext()
        feed = try context.feed(url: url)
    }
}

extension StoreContext {
    /// Ingests articles as one successful fetch and returns the summary with every committed article.
    func ingest(_ articles: [Article], into feed: FeedID, success: FeedSuccess = FeedSuccess()) throws -> (summary: FeedIngestSummary, stored: [StoredArticle]) {
        try beginFeed(feed)
        var stored: [StoredArticle] = []
        for article in articles { stored += try store(article, in: feed) }
        let summary = try finishFeed(feed, success)
        return (summary, stored + summary.committed)
    }
}
