import ArticleStore
import Foundation
import PostgresStore
import Syndication
import Testing

/// Claims and leases: the same test bodies on both engines.
@Suite("Store: claims, leases and epoch-checked writes")
struct ClaimTests {
    static func request(_ feeds: [FeedID], limit: Int = 100, owner: String, seconds: Double = 60, perHost: Int = 6,
                        force: Bool = false) -> ClaimRequest {
        ClaimRequest(candidates: feeds, limit: limit, owner: owner, duration: .milliseconds(Int64(seconds * 1000)),
                     perHostLimit: perHost, ignoresNextFetch: force)
    }

    @Test(arguments: Engine.allCases) func aFeedIsClaimedByOneContextAtATime(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let other = try fixture.store.makeContext()
        let urls = (0..<10).map { "https://host\($0 % 5).example/feed\($0).xml" }
        let feeds = try fixture.context.feeds(urls: urls)
        let first = try fixture.context.claimFeeds(Self.request(feeds, limit: 4, owner: "a"))
        #expect(first.count == 4)
        #expect(first.allSatisfy { $0.epoch == 1 && $0.owner == "a" && $0.until > Date() })
        let second = try other.claimFeeds(Self.request(feeds, owner: "b"))
        #expect(second.count == 6, "the rest")
        #expect(Set(first.map(\.feed)).isDisjoint(with: second.map(\.feed)))
        #expect(try other.claimFeeds(Self.request(feeds, owner: "c")).isEmpty, "nothing left")
        let states = try other.claimStates(feeds, owner: "b")
        #expect(first.allSatisfy { states[$0.feed] == .leasedElsewhere })
        #expect(second.allSatisfy { states[$0.feed] == .leasedHere })
        let status = try fixture.context.feedStatus(first[0].feed)
        #expect(status.leaseOwner == "a" && status.leaseEpoch == 1 && status.host != nil)
    }

    @Test(arguments: Engine.allCases) func thePerHostLimitCountsEveryHoldersLeases(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let feeds = try fixture.context.feeds(urls: (0..<10).map { "http://one.example:8080/feed\($0).xml" }
                                              + ["file:///tmp/local-\(UUID().uuidString).xml"])
        let a = try fixture.context.claimFeeds(Self.request(feeds, owner: "a", perHost: 3))
        #expect(a.count == 4, "three of the host, and the local file, which no host limit counts")
        let b = try fixture.store.makeContext().claimFeeds(Self.request(feeds, owner: "b", perHost: 3))
        #expect(b.isEmpty, "the host already has three live leases")
        try fixture.context.releaseLeases(owner: "a", feeds: [a.first { $0.feed != feeds.last }!.feed])
        #expect(try fixture.store.makeContext().claimFeeds(Self.request(feeds, owner: "b", perHost: 3)).count == 1)
    }

    @Test(arguments: Engine.allCases) func anExpiredLeaseIsTakenOverAndTheStaleWriterIsRefused(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let stale = fixture.context
        let taker = try fixture.store.makeContext()
        let feed = fixture.feed
        let lease = try #require(try stale.claimFeeds(Self.request([feed], owner: "stale", seconds: 0.3)).first)
        try stale.beginFeed(feed, lease: lease)
        _ = try stale.store(makeArticle("early"), in: feed)
        #expect(try stale.commit().map(\.change) == [.new], "written while the lease holds")
        #expect(try taker.claimFeeds(Self.request([feed], owner: "taker")).isEmpty, "still live")
        Thread.sleep(forTimeInterval: 0.5)
        let taken = try #require(try taker.claimFeeds(Self.request([feed], owner: "taker")).first)
        #expect(taken.epoch == lease.epoch + 1)

        _ = try stale.store(makeArticle("late"), in: feed)
        let refused = try #require(throws: StoreError.self) { try stale.commit() }
        #expect(refused.kind == .leaseLost(feed), "\(refused)")
        #expect(refused.description.contains("lease lost"))
        let final = try #require(throws: StoreError.self) { try stale.finishFeed(feed, FeedSuccess(validators: FeedValidators(etag: "\"stale\""))) }
        #expect(final.kind == .leaseLost(feed))
        #expect(try taker.articleCount(feed: feed) == 1, "nothing written late")
        #expect(try taker.feedStatus(feed).validators.etag == nil)
        #expect(try taker.feedStatus(feed).leaseOwner == "taker")

        try taker.beginFeed(feed, lease: taken)
        _ = try taker.store(makeArticle("early"), in: feed)
        let summary = try taker.finishFeed(feed, FeedSuccess(validators: FeedValidators(etag: "\"taker\"")))
        #expect(summary.unchanged == 1)
        let status = try taker.feedStatus(feed)
        #expect(status.validators.etag == "\"taker\"" && status.leaseOwner == nil && status.leaseEpoch == 2)
    }

    @Test(arguments: Engine.allCases) func renewalKeepsALeaseAndReportsOneTakenOver(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let feeds = try fixture.context.feeds(urls: ["https://a.example/1", "https://b.example/2"])
        let leases = try fixture.context.claimFeeds(Self.request(feeds, owner: "me", seconds: 0.4))
        #expect(leases.count == 2)
        Thread.sleep(forTimeInterval: 0.25)
        let renewed = try fixture.context.renewLeases(owner: "me", feeds: feeds, duration: .seconds(60))
        #expect(Set(renewed.map(\.feed)) == Set(feeds) && renewed.allSatisfy { $0.until > Date().addingTimeInterval(30) })
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try fixture.store.makeContext().claimFeeds(Self.request(feeds, owner: "other")).isEmpty, "renewed: still held")
        try fixture.context.releaseLeases(owner: "me", feeds: [feeds[1]])
        let other = try fixture.store.makeContext().claimFeeds(Self.request(feeds, owner: "other"))
        #expect(other.map(\.feed) == [feeds[1]])
        let again = try fixture.context.renewLeases(owner: "me", feeds: feeds, duration: .seconds(60))
        #expect(again.map(\.feed) == [feeds[0]], "the released one went to another owner")
        try fixture.context.releaseLeases(owner: "me")
        #expect(try fixture.context.feedStatus(feeds[0]).leaseOwner == nil)
    }

    @Test(arguments: Engine.allCases) func aSuccessRecordsTheIntervalSoTheFeedIsNotDueForTheNextProcess(_ engine: Engine) throws {
        var configuration = StoreConfiguration()
        configuration.fetchInterval = .seconds(300)
        let fixture = try Fixture(engine: engine, configuration: configuration)
        let local = try fixture.context.feed(url: "file:///tmp/feed-\(UUID().uuidString).xml")
        let feeds = [fixture.feed, local]
        let leases = try fixture.context.claimFeeds(Self.request(feeds, owner: "first"))
        for lease in leases {
            try fixture.context.beginFeed(lease.feed, lease: lease)
            _ = try fixture.context.finishFeed(lease.feed, FeedSuccess(notModified: true))
        }
        let status = try fixture.context.feedStatus(fixture.feed)
        let claimedAt = try #require(leases.first { $0.feed == fixture.feed }).claimedAt
        let next = try #require(status.nextFetch)
        #expect(abs(next.timeIntervalSince(claimedAt) - 300) < 0.01, "five minutes after the claim")
        #expect(try fixture.context.feedStatus(local).nextFetch == nil, "a local file is always due")
        let second = try fixture.store.makeContext()
        #expect(try second.claimFeeds(Self.request(feeds, owner: "second")).map(\.feed) == [local], "not due")
        #expect(try second.claimStates([fixture.feed], owner: "second") == [fixture.feed: .notDue])
        #expect(try second.claimFeeds(Self.request([fixture.feed], owner: "forced", force: true)).count == 1, "--force")
        // A server's later hint wins; an earlier one does not.
        let hinted = FetchSchedule(interval: .seconds(300))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(hinted.nextFetch(after: FeedSuccess(nextFetch: start.addingTimeInterval(3600)), feedURL: "https://x.example/", start: start)
                == start.addingTimeInterval(3600))
        #expect(hinted.nextFetch(after: FeedSuccess(nextFetch: start.addingTimeInterval(60)), feedURL: "https://x.example/", start: start)
                == start.addingTimeInterval(300))
        #expect(FetchSchedule(interval: .zero).nextFetch(after: FeedSuccess(), feedURL: "https://x.example/", start: start) == nil)
    }

    @Test(arguments: Engine.allCases) func aFailedFeedEndsItsLeaseAndBacksOff(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let lease = try #require(try fixture.context.claimFeeds(Self.request([fixture.feed], owner: "me")).first)
        try fixture.context.beginFeed(fixture.feed, lease: lease)
        _ = try fixture.context.failFeed(fixture.feed, FeedFailure(error: "boom", kind: "fetch.timeout"))
        let status = try fixture.context.feedStatus(fixture.feed)
        #expect(status.leaseOwner == nil && status.consecutiveFailures == 1 && (status.nextFetch ?? .distantPast) > Date())
        #expect(try fixture.context.claimFeeds(Self.request([fixture.feed], owner: "other")).isEmpty, "backing off: not due")
    }
}
