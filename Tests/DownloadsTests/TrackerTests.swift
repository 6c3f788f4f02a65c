import ArticleStore
import Foundation
import PostgresStore
import TestSupport
import Testing

/// The download tracker's contract, the same on both engines: queueing dedupes by URL and path, claims are exclusive
/// and prefer partial downloads, writes of a lost lease are refused, a failed row is not claimed again by the same run.
@Suite("Download tracker on both engines", .serialized)
struct TrackerTests {
    enum Engine: String, CaseIterable, Sendable { case sqlite, postgresql }

    static func store(_ engine: Engine, _ label: String) throws -> Store {
        switch engine {
        case .sqlite:
            let directory = try Paths.temporaryDirectory("tracker")
            return try Store.open(directory.appendingPathComponent("s.sqlite").path)
        case .postgresql:
            let server = try PostgresServer.shared.get()
            return try Store.open(server.uri(try server.createDatabase(label)))
        }
    }

    static func progress(_ offset: Int64, validator: String? = "\"v1\"") -> DownloadProgress {
        DownloadProgress(finalURL: nil, validator: validator, expectedLength: 1000, committedOffset: offset)
    }

    @Test(arguments: Engine.allCases)
    func queueingDedupesByURLAndPath(_ engine: Engine) throws {
        let context = try Self.store(engine, "tracker_queue").makeContext()
        let first = try context.queueDownload(DownloadCandidate(url: "http://127.0.0.1/a.mp3", path: "/d/a.mp3"))
        guard case .queued(let id) = first else { Issue.record("not queued: \(first)"); return }
        #expect(try context.queueDownload(DownloadCandidate(url: "http://127.0.0.1/a.mp3", path: "/d/other.mp3")) == .known(id))
        #expect(try context.queueDownload(DownloadCandidate(url: "http://127.0.0.1/b.mp3", path: "/d/a.mp3")) == .pathTaken)
        #expect(try context.downloadExists(path: "/d/a.mp3"))
        #expect(try !context.downloadExists(path: "/d/b.mp3"))
        let rows = try context.downloads()
        #expect(rows.map(\.url) == ["http://127.0.0.1/a.mp3"] && rows[0].state == .queued && rows[0].committedOffset == 0)
    }

    @Test(arguments: Engine.allCases)
    func claimsAreExclusiveAndPreferPartialDownloads(_ engine: Engine) throws {
        let store = try Self.store(engine, "tracker_claims")
        let one = try store.makeContext(), two = try store.makeContext()
        for name in ["a", "b", "c"] {
            _ = try one.queueDownload(DownloadCandidate(url: "http://127.0.0.1/\(name)", path: "/d/\(name)"))
        }
        let a = try #require(try one.claimDownload(owner: "host:1:x", duration: .seconds(60)))
        #expect(a.url.hasSuffix("/a") && a.state == .downloading && a.attempts == 1)
        #expect(try one.finishDownload(a, state: .failed, progress: Self.progress(0), error: "boom", errorKind: "fetch.truncated"))
        // The same owner (run) does not take a again: b is next; it gets a partial.
        let b = try #require(try one.claimDownload(owner: "host:1:x", duration: .seconds(60)))
        #expect(b.url.hasSuffix("/b"))
        #expect(try one.recordDownloadProgress(b, Self.progress(400), duration: .seconds(60)))
        #expect(try one.finishDownload(b, state: .paused, progress: Self.progress(400)))
        // Another process takes the partial download first, though a is older.
        let resumed = try #require(try two.claimDownload(owner: "host:2:y", duration: .seconds(60)))
        #expect(resumed.url.hasSuffix("/b") && resumed.committedOffset == 400 && resumed.validator == "\"v1\"" && resumed.attempts == 2)
        // Held by host:2:y: nobody else gets b; a and c are claimable, each once.
        var seen = Set<String>()
        while let lease = try one.claimDownload(owner: "host:3:z", duration: .seconds(60)) {
            #expect(seen.insert(lease.url).inserted)
        }
        #expect(seen == ["http://127.0.0.1/a", "http://127.0.0.1/c"])
    }

    @Test(arguments: Engine.allCases)
    func writesOfALostLeaseAreRefused(_ engine: Engine) throws {
        let store = try Self.store(engine, "tracker_lost")
        let context = try store.makeContext()
        _ = try context.queueDownload(DownloadCandidate(url: "http://127.0.0.1/x", path: "/d/x"))
        let old = try #require(try context.claimDownload(owner: "host:1:old", duration: .milliseconds(300)))
        Thread.sleep(forTimeInterval: 0.6)  // the lease runs out
        let new = try #require(try context.claimDownload(owner: "host:2:new", duration: .seconds(60)))
        #expect(new.leaseEpoch == old.leaseEpoch + 1)
        #expect(try !context.recordDownloadProgress(old, Self.progress(999), duration: .seconds(60)))
        #expect(try !context.finishDownload(old, state: .done, progress: Self.progress(1000)))
        #expect(try context.finishDownload(new, state: .done, progress: Self.progress(1000)))
        let row = try #require(try context.downloads().first)
        #expect(row.state == .done && row.committedOffset == 1000 && row.completedAt != nil)
        // Done rows are never claimed again; retention marks them removed.
        #expect(try context.claimDownload(owner: "host:3:z", duration: .seconds(60)) == nil)
        try context.markDownloadsRemoved([row.id])
        #expect(try context.downloads().first?.state == .removed)
    }
}

extension TrackerTests {
    /// A permanent failure (a 404) is recorded with its status and left alone by every claim, whoever the owner, until
    /// it is queued again; a transient one (a 503) keeps its status and is claimed by the next run as before.
    @Test(arguments: Engine.allCases)
    func aPermanentFailureIsNotClaimedUntilQueuedAgain(_ engine: Engine) throws {
        let context = try Self.store(engine, "tracker_permanent").makeContext()
        for name in ["gone", "busy"] {
            _ = try context.queueDownload(DownloadCandidate(url: "http://127.0.0.1/\(name)", path: "/d/\(name)"))
        }
        let gone = try #require(try context.claimDownload(owner: "host:1:a", duration: .seconds(60)))
        #expect(gone.url.hasSuffix("/gone"))
        #expect(try context.finishDownload(gone, state: .failed, progress: Self.progress(0), error: "HTTP 404 Not Found",
                                           errorKind: "fetch.http-status", httpStatus: 404, permanentFailure: true))
        let busy = try #require(try context.claimDownload(owner: "host:1:a", duration: .seconds(60)))
        #expect(busy.url.hasSuffix("/busy"))
        #expect(try context.finishDownload(busy, state: .failed, progress: Self.progress(0), error: "HTTP status 503",
                                           errorKind: "fetch.service-unavailable", httpStatus: 503))

        var rows = try context.downloads()
        #expect(rows.map(\.state) == [.failed, .failed])
        #expect(rows.map(\.httpStatus) == [404, 503])
        #expect(rows.map(\.isPermanentFailure) == [true, false])
        // Other runs (owners) take the transient failure again, never the permanent one.
        let again = try #require(try context.claimDownload(owner: "host:2:b", duration: .seconds(60)))
        #expect(again.url.hasSuffix("/busy"))
        #expect(try context.finishDownload(again, state: .done, progress: Self.progress(1000)))
        #expect(try context.claimDownload(owner: "host:3:c", duration: .seconds(60)) == nil)
        // The row of a finished download carries no failure.
        rows = try context.downloads()
        #expect(rows[1].state == .done && rows[1].httpStatus == nil && !rows[1].isPermanentFailure)

        // Queued again: claimable by the next claim, its error gone, its attempts kept.
        #expect(try context.requeueFailedDownloads() == 1)
        #expect(try context.requeueFailedDownloads() == 0)
        let requeued = try #require(try context.downloads().first)
        #expect(requeued.state == .queued && requeued.error == nil && requeued.errorKind == nil && requeued.httpStatus == nil)
        #expect(!requeued.isPermanentFailure && requeued.attempts == 1 && requeued.leaseOwner == nil)
        let retried = try #require(try context.claimDownload(owner: "host:1:a", duration: .seconds(60)))
        #expect(retried.url.hasSuffix("/gone") && retried.attempts == 2)
    }

    /// Only a failed row can be a permanent failure: the flag given with another state is not stored.
    @Test(arguments: Engine.allCases)
    func onlyAFailedRowIsMarkedPermanent(_ engine: Engine) throws {
        let context = try Self.store(engine, "tracker_permanent_state").makeContext()
        _ = try context.queueDownload(DownloadCandidate(url: "http://127.0.0.1/p", path: "/d/p"))
        let lease = try #require(try context.claimDownload(owner: "host:1:a", duration: .seconds(60)))
        #expect(try context.finishDownload(lease, state: .paused, progress: Self.progress(0), error: "stopped",
                                           errorKind: "download.cancelled", permanentFailure: true))
        let row = try #require(try context.downloads().first)
        #expect(row.state == .paused && !row.isPermanentFailure)
        #expect(try context.claimDownload(owner: "host:2:b", duration: .seconds(60)) != nil)
    }
}
