import ArticleStore
import Foundation
import PostgresStore
import Scheduling
import Syndication
import Testing

/// The adaptive schedule as the store records it (`StoreConfiguration.adaptiveSchedule`): the same bodies on both engines.
@Suite("Store: the adaptive schedule's interval, reason and hints")
struct ScheduleTests {
    static func configuration(jitter: Double = 0) -> StoreConfiguration {
        var schedule = ScheduleConfiguration()
        schedule.jitter = jitter
        var configuration = StoreConfiguration()
        configuration.adaptiveSchedule = schedule
        return configuration
    }

    static func article(_ id: String, hoursAgo: Double) -> Article {
        var article = makeArticle(id)
        article.published = Date().addingTimeInterval(-hoursAgo * 3_600)
        return article
    }

    @Test(arguments: Engine.allCases) func aSuccessRecordsTheIntervalOfTheEntriesPublishingGap(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine, configuration: Self.configuration())
        // Entries every 2 hours, the newest 30 minutes ago: the gap is 2 h, the interval 1 h.
        let articles = (0..<6).map { Self.article("e\($0)", hoursAgo: 0.5 + 2 * Double($0)) }
        let before = Date()
        _ = try fixture.context.ingest(articles, into: fixture.feed)
        let status = try fixture.context.feedStatus(fixture.feed)
        #expect(status.scheduleReason == .publishingGap)
        let interval = try #require(status.interval)
        #expect(abs(interval - 3_600) < 5, "\(interval)")
        let next = try #require(status.nextFetch)
        #expect(abs(next.timeIntervalSince(before) - 3_600) < 10, "no jitter configured: \(next)")

        // A 304 keeps the history (read from the stored articles) and so the interval.
        try fixture.context.beginFeed(fixture.feed)
        _ = try fixture.context.finishFeed(fixture.feed, FeedSuccess(notModified: true))
        #expect(abs((try fixture.context.feedStatus(fixture.feed).interval ?? 0) - 3_600) < 5)
    }

    @Test(arguments: Engine.allCases) func hintsRaiseTheIntervalAndA304KeepsTheFeedsOwnHint(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine, configuration: Self.configuration())
        var success = FeedSuccess()
        success.refreshHint = 21_600.0  // ttl 360
        success.maxAge = 600
        let expires = Date().addingTimeInterval(1_800)
        success.expires = expires
        _ = try fixture.context.ingest([Self.article("a", hoursAgo: 0.2), Self.article("b", hoursAgo: 0.4)], into: fixture.feed,
                                       success: success)
        var status = try fixture.context.feedStatus(fixture.feed)
        #expect(status.scheduleReason == .feedHint)
        #expect(status.interval == 21_600.0)
        #expect(status.refreshHint == 21_600.0 && status.maxAge == 600)
        #expect(abs((status.expires?.timeIntervalSince1970 ?? 0) - expires.timeIntervalSince1970) < 0.01)

        try fixture.context.beginFeed(fixture.feed)
        _ = try fixture.context.finishFeed(fixture.feed, FeedSuccess(notModified: true))
        status = try fixture.context.feedStatus(fixture.feed)
        #expect(status.refreshHint == 21_600.0, "a 304 has no body: the feed's hint stays")
        #expect(status.maxAge == nil && status.expires == nil, "the 304's headers replace the HTTP hints")
        #expect(status.interval == 21_600.0 && status.scheduleReason == .feedHint)
    }

    @Test(arguments: Engine.allCases) func failuresBackOffToTheMaximumAndNeverDropTheFeed(_ engine: Engine) throws {
        var configuration = Self.configuration()
        configuration.adaptiveSchedule?.failureBackoff = 60
        configuration.adaptiveSchedule?.maximumInterval = 300
        let fixture = try Fixture(engine: engine, configuration: configuration)
        var intervals: [TimeInterval] = []
        for _ in 0..<5 {
            try fixture.context.beginFeed(fixture.feed)
            _ = try fixture.context.failFeed(fixture.feed, FeedFailure(error: "HTTP 500"))
            intervals.append(try fixture.context.feedStatus(fixture.feed).interval ?? -1)
        }
        #expect(intervals == [60, 120, 240, 300, 300])
        let status = try fixture.context.feedStatus(fixture.feed)
        #expect(status.scheduleReason == .failureBackoff && status.isFailing && status.consecutiveFailures == 5)
        let retry = Date().addingTimeInterval(42)
        try fixture.context.beginFeed(fixture.feed)
        _ = try fixture.context.failFeed(fixture.feed, FeedFailure(error: "429", retryAfter: retry, counts: false))
        let limited = try fixture.context.feedStatus(fixture.feed)
        #expect(limited.scheduleReason == .retryAfter)
        #expect(abs((limited.nextFetch?.timeIntervalSince1970 ?? 0) - retry.timeIntervalSince1970) < 0.01)
        #expect(limited.consecutiveFailures == 5, "a refusal for now counts no failure")
    }

    @Test(arguments: Engine.allCases) func withoutTheAdaptiveScheduleNothingIsRecorded(_ engine: Engine) throws {
        let fixture = try Fixture(engine: engine)
        _ = try fixture.context.ingest([Self.article("a", hoursAgo: 1)], into: fixture.feed)
        let status = try fixture.context.feedStatus(fixture.feed)
        #expect(status.interval == nil && status.scheduleReason == nil)
    }
}
