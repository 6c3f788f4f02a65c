import ArticleStore
import Foundation
import PostgresStore
import Scheduling
import Syndication
import Testing

/// Claims and leases: the same test bodies on both engines.
@Suite("Store: claims, leases and epoch-checked writes")
struct ClaimTests {
    static func request(_ feeds: [FeedID], limit: Int = 100, owner: String, seconds: Double = 60, perHost: Int = 6,
                        force: Bool = false) -> ClaimRequest {
        ClaimRequest(candidates: feeds, limit: limit, owner: owner, duration: .milliseconds(Int64(seconds * 1000)),
                     perHostLimit: perHost, due: force ? .always : .scheduled)
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
        let hinted = configuration.fetchPolicy
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func scheduled(_ policy: FetchPolicy, hint: Date?, local: Bool = false) -> Date? {
            policy.afterSuccess(FeedHistory(), serverNextFetch: hint, isLocal: local, claimedAt: start, now: start, random: 0.5)?.next
        }
        #expect(scheduled(hinted, hint: start.addingTimeInterval(3600)) == start.addingTimeInterval(3600))
        #expect(scheduled(hinted, hint: start.addingTimeInterval(60)) == start.addingTimeInterval(300))
        #expect(scheduled(hinted, hint: start.addingTimeInterval(3600), local: true) == nil, "a local file is always due")
        #expect(scheduled(StoreConfiguration().fetchPolicy, hint: nil) == nil)
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

    /// What each due policy claims: the schedule only what is due; an explicit run also what its interval holds back,
    /// never what a server asked to wait or what backs off after failures; --force everything. A local file is due under
    /// every policy, even after a failure. `claimStates` agrees with the claim under each policy.
    @Test(arguments: Engine.allCases) func duePoliciesDecideWhatAClaimTakes(_ engine: Engine) throws {
        var configuration = StoreConfiguration()
        configuration.fetchInterval = .seconds(300)
        let fixture = try Fixture(engine: engine, configuration: configuration)
        let context = fixture.context
        let ids = try context.feeds(urls: ["https://a.example/fetched.xml", "https://b.example/failing.xml",
                                           "https://c.example/limited.xml", "file:///tmp/broken-\(UUID().uuidString).xml",
                                           "https://e.example/new.xml"])
        let (fetched, limited, local, fresh) = (ids[0], ids[2], ids[3], ids[4])  // ids[1] fails
        for lease in try context.claimFeeds(Self.request(Array(ids.prefix(4)), owner: "setup")) {
            try context.beginFeed(lease.feed, lease: lease)
            switch lease.feed {
            case fetched: _ = try context.finishFeed(lease.feed, FeedSuccess(notModified: true))
            case limited:
                _ = try context.failFeed(lease.feed, FeedFailure(error: "429", retryAfter: Date().addingTimeInterval(600), counts: false))
            default: _ = try context.failFeed(lease.feed, FeedFailure(error: "broken"))
            }
        }
        let now = Date()
        let statuses = try context.feedStatuses(ids)
        #expect(statuses.allSatisfy { $0.leaseOwner == nil })
        let expected: [DuePolicy: Set<FeedID>] = [.scheduled: [local, fresh], .unlessAskedToWait: [fetched, local, fresh],
                                                  .always: Set(ids)]
        for policy in DuePolicy.allCases {
            let due = Set(statuses.filter { policy.isDue($0, at: now) }.map(\.id))
            #expect(due == expected[policy], "\(policy): the rule in Swift")
            let other = try fixture.store.makeContext()
            let states = try other.claimStates(ids, owner: "probe", due: policy)
            #expect(Set(ids.filter { states[$0] == .claimable }) == expected[policy], "\(policy): claimStates")
            #expect(Set(ids.filter { states[$0] == .notDue }) == Set(ids).subtracting(expected[policy]!))
            let owner = "claim-\(policy)"
            let claimed = try other.claimFeeds(ClaimRequest(candidates: ids, limit: 10, owner: owner, duration: .seconds(60), due: policy))
            #expect(Set(claimed.map(\.feed)) == expected[policy], "\(policy): the claim in SQL")
            try other.releaseLeases(owner: owner)
        }
    }

    /// Feeds of one host beyond its limit, under --force: claimable (held back by the host's limit), never "not due",
    /// so a forced run waits for room instead of calling them claimed elsewhere.
    @Test(arguments: Engine.allCases) func aHostsLimitHoldsForcedFeedsBackWithoutMakingThemNotDue(_ engine: Engine) throws {
        var configuration = StoreConfiguration()
        configuration.fetchInterval = .seconds(300)
        let fixture = try Fixture(engine: engine, configuration: configuration)
        let feeds = try fixture.context.feeds(urls: (0..<10).map { "https://one.example/feed\($0).xml" })
        for lease in try fixture.context.claimFeeds(Self.request(feeds, owner: "setup", perHost: 0)) {
            try fixture.context.beginFeed(lease.feed, lease: lease)
            _ = try fixture.context.finishFeed(lease.feed, FeedSuccess(notModified: true))
        }
        let forced = try fixture.context.claimFeeds(Self.request(feeds, owner: "forced", perHost: 6, force: true))
        #expect(forced.count == 6)
        let states = try fixture.context.claimStates(feeds, owner: "forced", due: .always)
        #expect(feeds.filter { states[$0] == .claimable }.count == 4, "the other four wait for room: \(states)")
        #expect(feeds.filter { states[$0] == .leasedHere }.count == 6)
    }

    /// The leases of a process of this machine that no longer runs end at once; a live one's, another machine's, and
    /// an owner of the older form without an identity are left alone.
    @Test(arguments: Engine.allCases) func leasesOfADeadLocalProcessAreReleased(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        let feeds = try fixture.context.feeds(urls: (0..<4).map { "https://h\($0).example/feed.xml" })
        // A child that has exited: its pid is gone, its owner name as its own LeaseOwner.make() would have written it.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", "exit 0"]
        try child.run()
        let live = LeaseOwner.make()
        let parts = live.split(separator: ":").map(String.init)
        #expect(parts.count == 4)
        // The child's start time is unknown once it is gone; any start time names it, since its pid no longer runs.
        let machine = parts[3].split(separator: "-").dropFirst().joined(separator: "-")
        let dead = "\(parts[0]):\(child.processIdentifier):abc:12345-\(machine)"
        child.waitUntilExit()
        let reused = "\(parts[0]):\(getpid()):abc:1-\(machine)"  // this pid, but started at another time
        let elsewhere = "other-host-\(UUID().uuidString.prefix(8)):1:abc:1-\(machine)"
        let old = "\(parts[0]):\(child.processIdentifier):abc"
        #expect(!LeaseOwner.isDefunct(live) && LeaseOwner.isDefunct(dead) && LeaseOwner.isDefunct(reused))
        #expect(!LeaseOwner.isDefunct(elsewhere) && !LeaseOwner.isDefunct(old))
        for (feed, owner) in zip(feeds, [live, dead, reused, elsewhere]) {
            #expect(try fixture.context.claimFeeds(Self.request([feed], owner: owner)).count == 1)
        }
        let released = try fixture.store.makeContext().releaseLeasesOfDefunctOwners()
        #expect(Set(released) == [dead, reused])
        let owners = try fixture.context.feedStatuses(feeds).map(\.leaseOwner)
        #expect(owners == [live, nil, nil, elsewhere])
    }
}
