import ArticleStore
import Foundation
import Ingest
import Scheduling
import Testing
@testable import Watch

/// The service's pure rules: when a feed is due after a run, and which feeds wait for the network.
@Suite("WatchService: rescheduling and pausable feeds")
struct WatchServiceTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let started = now.addingTimeInterval(-10)

    static func status(lastAttempt: Date? = nil, nextFetch: Date? = nil, leaseOwner: String? = nil, leaseUntil: Date? = nil) -> FeedStatus {
        FeedStatus(id: FeedID(rawValue: 1), url: "https://example.org/feed.xml", title: nil, homeLink: nil, currentURL: nil,
                   validators: FeedValidators(), keyMode: .identifier, lastAttempt: lastAttempt, lastSuccess: nil, outcome: nil,
                   error: nil, consecutiveFailures: 0, nextFetch: nextFetch, articleCount: 0, lastFetchSeen: nil,
                   lastFetchNew: nil, lastFetchUpdated: nil, tags: [], isRateLimited: false, errorKind: nil, host: nil,
                   leaseOwner: leaseOwner, leaseUntil: leaseUntil, leaseEpoch: 0)
    }

    static func due(_ status: FeedStatus) -> Date {
        WatchService.nextDue(status, runStarted: started, now: now, retry: 30)
    }

    @Test func aFeedTheRunCompletedIsDueAtTheNextFetchItRecorded() {
        let next = Self.now.addingTimeInterval(3_600)
        #expect(Self.due(Self.status(lastAttempt: Self.now.addingTimeInterval(-1), nextFetch: next)) == next)
        // An interval of zero (--max-interval 0) is honoured: due at once.
        let atOnce = Self.now.addingTimeInterval(-0.5)
        #expect(Self.due(Self.status(lastAttempt: Self.now.addingTimeInterval(-1), nextFetch: atOnce)) == atOnce)
    }

    @Test func aFeedAnotherProcessHoldsIsLookedAtWhenItsLeaseEnds() {
        let until = Self.now.addingTimeInterval(90)
        #expect(Self.due(Self.status(nextFetch: Self.now.addingTimeInterval(-600), leaseOwner: "other:1:a", leaseUntil: until)) == until)
        let later = Self.now.addingTimeInterval(600)
        #expect(Self.due(Self.status(nextFetch: later, leaseOwner: "other:1:a", leaseUntil: until)) == later)
        // An expired lease (its holder died) does not hold the feed back.
        #expect(Self.due(Self.status(leaseOwner: "dead:1:a", leaseUntil: Self.now.addingTimeInterval(-1)))
                == Self.now.addingTimeInterval(30))
    }

    @Test func aFeedAnotherProcessFetchedIsDueAtItsNextFetchAndOneNotCompletedIsRetried() {
        let next = Self.now.addingTimeInterval(1_200)
        #expect(Self.due(Self.status(lastAttempt: Self.started.addingTimeInterval(-100), nextFetch: next)) == next)
        // Cancelled, offline or not claimed: untouched by the run; tried again after the retry delay, never at once.
        #expect(Self.due(Self.status(lastAttempt: Self.started.addingTimeInterval(-100), nextFetch: Self.now.addingTimeInterval(-5)))
                == Self.now.addingTimeInterval(30))
        #expect(Self.due(Self.status()) == Self.now.addingTimeInterval(30))
    }

    @Test func remoteFeedsWaitForTheNetworkButLoopbackAndLocalFilesDoNot() throws {
        func entry(_ text: String) throws -> FeedEntry { try #require(FeedList(text: text).entries.first) }
        #expect(WatchService.isPausable(try entry("https://example.org/feed.xml")))
        #expect(WatchService.isPausable(try entry("http://192.0.2.1:9/feed.xml")))
        #expect(!WatchService.isPausable(try entry("http://127.0.0.1:8080/feed.xml")))
        #expect(!WatchService.isPausable(try entry("http://localhost/feed.xml")))
        #expect(!WatchService.isPausable(try entry("http://[::1]:8080/feed.xml")))
        #expect(!WatchService.isPausable(try entry("/tmp/feed.xml")))
    }

    @Test func overdueFeedsResumeInDueOrderSpreadOverTheWindow() {
        var queue = DueQueue<FeedID>()
        let overdue = (0..<400).map { (feed: FeedID(rawValue: Int64($0)), due: Self.now.addingTimeInterval(-Double(400 - $0))) }
        WatchService.spread(overdue.shuffled(), into: &queue, now: Self.now, window: 60)
        var order: [(FeedID, Date)] = []
        while let next = queue.popDue(now: .distantFuture) { order.append((next.key, next.due)) }
        #expect(order.map(\.0) == overdue.map(\.feed), "in due order")
        #expect(order.first!.1 >= Self.now && order.last!.1 < Self.now.addingTimeInterval(60), "within the window")
        let firstSecond = order.filter { $0.1 < Self.now.addingTimeInterval(1) }.count
        #expect(firstSecond <= 8, "no storm: 400 feeds over 60 s, \(firstSecond) in the first second")
        var few = DueQueue<FeedID>()
        WatchService.spread(Array(overdue.prefix(4)), into: &few, now: Self.now, window: 60)
        #expect(few.countDue(before: Self.now.addingTimeInterval(1)) == 4, "a handful resume within a second")
    }

    @Test func theRetryDelayFollowsTheMinimumIntervalWithinBounds() {
        var configuration = WatchConfiguration()
        #expect(configuration.retryDelay == 300)
        configuration.schedule.minimumInterval = 0
        #expect(configuration.retryDelay == 1)
        configuration.schedule.minimumInterval = 45
        #expect(configuration.retryDelay == 45)
        #expect(configuration.coalescing == 1)
        configuration.schedule.minimumInterval = 5
        #expect(configuration.coalescing == 0.5)
        configuration.schedule.minimumInterval = 0
        #expect(configuration.coalescing == 0, "tests with --min-interval 0 are not held back")
    }
}
