import ArticleStore
import Foundation
import Ingest
import Support
import Testing
@testable import Watch

/// Reloading a watched list: what is read is applied and reported, bad lines counted, and a list that cannot be read
/// or applied leaves the feeds as they were.
@Suite("ListReloader: reading the list again and reporting it")
struct ListReloaderTests {
    /// A list file in a directory of its own, and a reloader over it whose `apply` keeps the feeds it was given (the
    /// service's part, here a set of store URLs) and whose reports are kept in order.
    final class Fixture: Sendable {
        /// What the reloader handed on and reported.
        final class Record: Sendable {
            let feeds = Lock<Set<String>>([])
            let events = Lock<[ListReloader.Event]>([])
            let refusing = Lock(false)
        }

        let directory: URL
        let list: URL
        let statistics = WatchStatistics()
        let record: Record
        let reloader: ListReloader

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("list-reloader-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            list = directory.appendingPathComponent("feeds.txt")
            let record = Record()
            self.record = record
            reloader = ListReloader(path: list.path, statistics: statistics, apply: { list throws(StoreError) in
                if record.refusing.withLock({ $0 }) {
                    throw StoreError(kind: .readOnly, message: "read-only", path: "/s.sqlite", operation: "subscribe")
                }
                let listed = Set(list.entries.map(\.storeURL))
                return record.feeds.withLock { feeds in
                    let change = ListChange(added: listed.subtracting(feeds).count, removed: feeds.subtracting(listed).count,
                                            feeds: listed.count)
                    feeds = listed
                    return change
                }
            }, report: { event in record.events.withLock { $0.append(event) } })
        }

        func write(_ text: String) throws { try Data(text.utf8).write(to: list) }

        /// The reports since the last call, described.
        func reports() -> [String] {
            record.events.withLock { events in
                defer { events = [] }
                return events.map { event in
                    switch event {
                    case .read(let problems): return "read " + problems.map { "\($0.line)" }.joined(separator: ",")
                    case .reloaded(let change): return "reloaded +\(change.added) -\(change.removed) =\(change.feeds)"
                    case .unreadable: return "unreadable"
                    case .notApplied(let error): return "not applied: \(error.message)"
                    }
                }
            }
        }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func aReloadAppliesTheListAndReportsWhatChanged() throws {
        let fixture = try Fixture()
        try fixture.write("/feeds/a.xml\n/feeds/b.xml\n")
        let change = try fixture.reloader.load(try FeedList.load(path: fixture.list.path))
        #expect(change == ListChange(added: 2, removed: 0, feeds: 2))
        #expect(fixture.reports() == ["read "], "the first load is not a reload")
        try fixture.write("/feeds/a.xml\n/feeds/c.xml\n/feeds/d.xml\nftp://example.org/feed\n")
        fixture.reloader.reload()
        #expect(fixture.reports() == ["read 4", "reloaded +2 -1 =3"])
        #expect(fixture.statistics.current.listProblems == 1)
        try fixture.write("/feeds/a.xml\n")
        fixture.reloader.reload()
        #expect(fixture.reports() == ["read ", "reloaded +0 -2 =1"])
        #expect(fixture.statistics.current.listProblems == 0)
    }

    @Test func aListThatCannotBeReadOrAppliedLeavesTheFeedsAsTheyWere() throws {
        let fixture = try Fixture()
        try fixture.write("/feeds/a.xml\n")
        try fixture.reloader.load(try FeedList.load(path: fixture.list.path))
        _ = fixture.reports()
        try FileManager.default.removeItem(at: fixture.list)
        fixture.reloader.reload()
        #expect(fixture.reports() == ["unreadable"])
        #expect(fixture.record.feeds.withLock { $0 } == [URL(fileURLWithPath: "/feeds/a.xml").absoluteString])
        try fixture.write("/feeds/a.xml\n/feeds/b.xml\n")
        fixture.record.refusing.withLock { $0 = true }
        fixture.reloader.reload()
        #expect(fixture.reports() == ["read ", "not applied: read-only"])
        #expect(fixture.record.feeds.withLock { $0 }.count == 1)
    }
}
