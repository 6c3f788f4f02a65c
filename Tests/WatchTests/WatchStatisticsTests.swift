import ArticleStore
import Foundation
import Ingest
import Support
import Testing
@testable import Watch

/// The watch's counters: outcomes, articles, the day's count, downloads, and the store's outage told once.
@Suite("WatchStatistics: counting, notices and the store's outage")
struct WatchStatisticsTests {
    static let entry = FeedEntry(location: .local("/feeds/a.xml"), source: "/feeds/a.xml")
    static let unavailable = StoreError(kind: .unreachable, message: "connection refused", path: "postgresql:///news", operation: "connect")
    static let broken = StoreError(kind: .invalidStoredValue, message: "a bad row", path: "/s.sqlite", operation: "read")

    @Test func fetchesAreCountedByOutcomeWithTheirBytesAndFailures() {
        let statistics = WatchStatistics()
        #expect(statistics.count(.feedFinished(Self.entry, .ok(FeedCounts(new: 2, bytes: 100)))).isEmpty)
        #expect(statistics.count(.feedFinished(Self.entry, .notModified)).isEmpty)
        #expect(statistics.count(.feedFinished(Self.entry, .cancelled)).isEmpty)
        #expect(statistics.count(.feedFinished(Self.entry, .claimedElsewhere)).isEmpty)
        let failed = statistics.count(.feedFinished(Self.entry, .failed(.store(Self.broken), counts: FeedCounts(bytes: 20))))
        #expect(failed == [.feedFailed(Self.entry, .store(Self.broken))])
        let lost = StoreError(kind: .leaseLost(FeedID(rawValue: 1)), message: "lease lost", path: "/s.sqlite", operation: "write")
        #expect(statistics.count(.feedFinished(Self.entry, .leaseLost(lost))) == [.leaseLost(Self.entry, lost)])
        let counters = statistics.current
        #expect(counters.fetches == [.ok: 1, .notModified: 1, .cancelled: 1, .claimedElsewhere: 1, .failed: 1, .leaseLost: 1])
        #expect(counters.fetchCount == 6)
        #expect(counters.bytes == 120 && counters.failures == 1)
        // What the feed's counts say about articles is not counted here: the committed articles are, one by one.
        #expect(counters.new == 0)
    }

    @Test func articlesAreCountedAndTodaysCountStartsAgainEachDay() {
        let clock = Lock(Date(timeIntervalSince1970: 1_800_000_000))
        let statistics = WatchStatistics(now: { clock.withLock { $0 } })
        statistics.count(.new)
        statistics.count(.new)
        statistics.count(.updated)
        statistics.count(.unchanged)
        statistics.count(nil)
        #expect(statistics.current.new == 2 && statistics.current.updated == 1 && statistics.current.today == 2)
        clock.withLock { $0 = $0.addingTimeInterval(86_400) }
        statistics.count(.updated)
        #expect(statistics.current.today == 0, "a new day: no new article yet")
        statistics.count(.new)
        #expect(statistics.current.new == 3 && statistics.current.today == 1)
    }

    @Test func theStoresOutageIsToldOnceAndItsEndWithTheFeedsThatWaited() {
        let statistics = WatchStatistics()
        let away = FeedResult.failed(.store(Self.unavailable), counts: FeedCounts())
        #expect(statistics.count(.feedFinished(Self.entry, away)) == [.storeUnavailable(Self.unavailable)])
        #expect(statistics.count(.feedFinished(Self.entry, away)).isEmpty, "told once per outage")
        #expect(statistics.count(WatchEvent.storeError(Self.unavailable)) == nil, "reading the schedule failing for it too")
        // Neither a cancelled nor an offline feed says the store is back.
        #expect(statistics.count(.feedFinished(Self.entry, .cancelled)).isEmpty)
        #expect(statistics.current.storeOutage == 2)
        #expect(statistics.current.failures == 0, "the store being away fails no feed")
        #expect(statistics.current.fetches[.storeUnavailable] == 2)
        #expect(statistics.count(.feedFinished(Self.entry, .notModified)) == [.storeReachable(waited: 2)])
        #expect(statistics.current.storeOutage == nil)
        // The next outage is told again; the schedule's read failing begins one without counting a feed.
        #expect(statistics.count(WatchEvent.storeError(Self.unavailable)) == .storeUnavailable(Self.unavailable))
        #expect(statistics.current.storeOutage == 0)
        // A feed failing for itself ends the outage too, after its own failure.
        #expect(statistics.count(.feedFinished(Self.entry, .failed(.store(Self.broken), counts: FeedCounts())))
                == [.feedFailed(Self.entry, .store(Self.broken)), .storeReachable(waited: 0)])
        // A store error that is no outage is the command's to tell.
        #expect(statistics.count(WatchEvent.storeError(Self.broken)) == nil && statistics.current.storeOutage == nil)
    }

    @Test func theNetworkDownloadsAndTheListAreCounted() {
        let statistics = WatchStatistics(countsDownloads: true)
        #expect(statistics.count(WatchEvent.paused(reason: "no default route", remoteFeeds: 3)) == nil)
        #expect(statistics.current.offline)
        _ = statistics.count(WatchEvent.resumed(overdue: 3))
        #expect(!statistics.current.offline)
        statistics.countDownload(.done, bytes: 1_000)
        statistics.countDownload(.paused, bytes: 24)
        statistics.countDownload(.done, bytes: 0)
        statistics.setListProblems(2)
        let counters = statistics.current
        #expect(counters.downloads == [.done: 2, .paused: 1] && counters.downloadBytes == 1_024)
        #expect(counters.listProblems == 2)
        #expect(statistics.countsDownloads)
    }
}
