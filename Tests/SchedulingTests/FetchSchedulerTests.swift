import Foundation
import Scheduling
import Testing

@Suite("Fetch schedule")
struct FetchScheduleTests {
    static let noon = Date(timeIntervalSince1970: 1_800_000_000)  // an arbitrary fixed "now"
    static func hours(_ h: Double) -> TimeInterval { h * 3_600 }
    static func at(_ hoursFromNoon: Double) -> Date { noon.addingTimeInterval(hours(hoursFromNoon)) }

    /// The README's worked example, step by step.
    @Test func theWorkedExample() throws {
        let scheduler = FetchScheduler()
        let now = Self.at(0.5)
        let dates = [Self.at(0), Self.at(-2), Self.at(-5), Self.at(-6)]
        let gap = try #require(scheduler.estimatedGap(dates, now: now))
        let expected = (2 + 3 * pow(2, -0.25) + 1 * pow(2, -0.5)) / (1 + pow(2, -0.25) + pow(2, -0.5))
        #expect(abs(gap / 3_600 - expected) < 1e-9)
        #expect(abs(gap / 3_600 - 2.05) < 0.01)
        let middle = scheduler.afterSuccess(FeedHistory(entryDates: dates), now: now, random: 0.5)
        #expect(middle.reason == .publishingGap)
        #expect(abs(middle.interval - gap * 0.5) < 1e-6)
        #expect(middle.next == now.addingTimeInterval(middle.interval), "random 0.5 is no jitter")
        // Jitter stays within ±15%.
        let early = scheduler.afterSuccess(FeedHistory(entryDates: dates), now: now, random: 0)
        let late = scheduler.afterSuccess(FeedHistory(entryDates: dates), now: now, random: 0.999_999)
        #expect(abs(early.next.timeIntervalSince(now) - middle.interval * 0.85) < 1e-3)
        #expect(abs(late.next.timeIntervalSince(now) - middle.interval * 1.15) < 0.1)

        // The last entry a day and a half ago: the open gap counts as the newest.
        let stale = dates.map { $0.addingTimeInterval(-Self.hours(24)) }
        let staleGap = try #require(scheduler.estimatedGap(stale, now: now))
        let weights = 1 + pow(2, -0.25) + pow(2, -0.5)
        #expect(abs(staleGap / 3_600 - (expected * weights + 24.5) / (weights + 1)) < 1e-9)
        #expect(abs(staleGap / 3_600 - 8.37) < 0.01)
    }

    @Test func recentGapsWeighMoreThanOldOnes() throws {
        let scheduler = FetchScheduler()
        let now = Self.at(0)
        // Once a day for ten days, then hourly for the last four entries: the estimate moves toward an hour.
        let daily = (0..<10).map { Self.at(-4 - 24 * Double($0)) }
        let recentHourly = (0..<4).map { Self.at(-Double($0)) }
        let mixed = try #require(scheduler.estimatedGap(recentHourly + daily, now: now))
        let uniformMean = (Self.at(0).timeIntervalSince(daily.last!)) / Double(recentHourly.count + daily.count - 1)
        #expect(mixed < uniformMean, "weighted \(mixed / 3_600) h against the plain mean \(uniformMean / 3_600) h")
        #expect(mixed > Self.hours(1))
    }

    @Test func clampsToTheMinimumAndMaximum() {
        var configuration = ScheduleConfiguration()
        configuration.minimumInterval = 600
        configuration.maximumInterval = Self.hours(6)
        let scheduler = FetchScheduler(configuration: configuration)
        let busy = (0..<20).map { Self.at(-Double($0) / 60) }  // every minute
        #expect(scheduler.afterSuccess(FeedHistory(entryDates: busy), now: Self.at(0), random: 0.5).interval == 600)
        let quiet = (0..<5).map { Self.at(-24 * 30 * Double($0)) }  // monthly
        #expect(scheduler.afterSuccess(FeedHistory(entryDates: quiet), now: Self.at(0), random: 0.5).interval == Self.hours(6))
    }

    @Test func withoutDatesTheDefaultIntervalAndOneDateUsesTheTimeSinceIt() {
        let scheduler = FetchScheduler()
        let none = scheduler.afterSuccess(FeedHistory(), now: Self.noon, random: 0.5)
        #expect(none.reason == .noHistory && none.interval == 3_600 && none.estimatedGap == nil)
        let one = scheduler.afterSuccess(FeedHistory(entryDates: [Self.at(-10)]), now: Self.noon, random: 0.5)
        #expect(one.reason == .publishingGap && one.interval == Self.hours(5))
        // Future-dated entries are ignored (a feed's clock is wrong, not its schedule).
        let future = scheduler.afterSuccess(FeedHistory(entryDates: [Self.at(5), Self.at(10)]), now: Self.noon, random: 0.5)
        #expect(future.reason == .noHistory)
    }

    @Test func hintsOnlyRaiseTheIntervalUpToTheMaximum() {
        let scheduler = FetchScheduler()
        let dates = (0..<10).map { Self.at(-Double($0)) }  // hourly: interval 30 min
        let plain = scheduler.afterSuccess(FeedHistory(entryDates: dates), now: Self.noon, random: 0.5)
        #expect(abs(plain.interval - 1_800) < 1e-6)
        let ttl = scheduler.afterSuccess(FeedHistory(entryDates: dates, timeToLive: Self.hours(2)), now: Self.noon, random: 0.5)
        #expect(ttl.interval == Self.hours(2) && ttl.reason == .feedHint)
        let lowTTL = scheduler.afterSuccess(FeedHistory(entryDates: dates, timeToLive: 60), now: Self.noon, random: 0.5)
        #expect(abs(lowTTL.interval - 1_800) < 1e-6 && lowTTL.reason == .publishingGap, "a hint never lowers it")
        let hints = FeedHistory(entryDates: dates, timeToLive: 600, updatePeriod: Self.hours(3), maxAge: Self.hours(1),
                                expires: Self.at(4))
        #expect(scheduler.afterSuccess(hints, now: Self.noon, random: 0.5).interval == Self.hours(4), "the largest hint")
        let huge = FeedHistory(entryDates: dates, updatePeriod: Self.hours(24 * 365))
        #expect(scheduler.afterSuccess(huge, now: Self.noon, random: 0.5).interval == Self.hours(24), "up to the maximum")
    }

    @Test func syndicationPeriods() {
        #expect(FeedHistory.syndicationPeriod(updatePeriod: "hourly", updateFrequency: "2") == 1_800)
        #expect(FeedHistory.syndicationPeriod(updatePeriod: " Daily ", updateFrequency: nil) == 86_400)
        #expect(FeedHistory.syndicationPeriod(updatePeriod: nil, updateFrequency: "4") == 21_600)
        #expect(FeedHistory.syndicationPeriod(updatePeriod: "weekly", updateFrequency: "zero") == 604_800.0)
        #expect(FeedHistory.syndicationPeriod(updatePeriod: "fortnightly", updateFrequency: "1") == nil)
        #expect(FeedHistory.syndicationPeriod(updatePeriod: nil, updateFrequency: nil) == nil)
    }

    @Test func failuresBackOffToTheMaximumAndRetryAfterWins() {
        let scheduler = FetchScheduler()
        let waits = (1...12).map { scheduler.afterFailure(failures: $0, now: Self.noon, random: 0.5).interval }
        #expect(waits.prefix(4) == [300, 600, 1_200, 2_400])
        #expect(waits.last == Self.hours(24), "a feed that keeps failing is polled at the maximum interval, never dropped")
        #expect(zip(waits, waits.dropFirst()).allSatisfy { $0 <= $1 })
        let retry = scheduler.afterFailure(failures: 3, retryAfter: Self.at(2), now: Self.noon, random: 0)
        #expect(retry.next == Self.at(2) && retry.reason == .retryAfter)
        let past = scheduler.afterFailure(failures: 1, retryAfter: Self.at(-1), now: Self.noon, random: 0.5)
        #expect(past.reason == .failureBackoff, "a Retry-After in the past is ignored")
    }
}

@Suite("Due queue")
struct DueQueueTests {
    static let t0 = Date(timeIntervalSince1970: 0)

    @Test func popsInDueOrderWithTiesInInsertionOrder() {
        var queue = DueQueue<String>()
        queue.schedule("c", at: Self.t0.addingTimeInterval(30))
        queue.schedule("a", at: Self.t0.addingTimeInterval(10))
        queue.schedule("b", at: Self.t0.addingTimeInterval(10))
        queue.schedule("d", at: Self.t0.addingTimeInterval(50))
        #expect(queue.first?.key == "a")
        #expect(queue.popDue(now: Self.t0.addingTimeInterval(5)) == nil, "nothing due yet")
        #expect(queue.popAllDue(now: Self.t0.addingTimeInterval(30)).map(\.key) == ["a", "b", "c"])
        #expect(queue.count == 1 && queue.first?.key == "d")
    }

    @Test func reschedulingAndRemovingKeepTheOrder() {
        var queue = DueQueue<Int>()
        for key in 0..<100 { queue.schedule(key, at: Self.t0.addingTimeInterval(Double(key))) }
        queue.schedule(99, at: Self.t0)           // to the front (behind 0, which was there first)
        queue.schedule(0, at: Self.t0.addingTimeInterval(1_000))  // to the back
        #expect(queue.remove(50) == Self.t0.addingTimeInterval(50))
        #expect(queue.remove(50) == nil)
        #expect(!queue.contains(50) && queue.due(99) == Self.t0)
        let order = queue.popAllDue(now: Self.t0.addingTimeInterval(10_000)).map(\.key)
        #expect(order == [99] + Array(1..<50) + Array(51..<99) + [0])
        #expect(queue.isEmpty)
    }

    /// Against a sorted array under random operations: the heap never loses or misorders a key.
    @Test func randomOperationsMatchASortedReference() {
        var queue = DueQueue<Int>()
        var reference: [Int: Double] = [:]
        var state: UInt64 = 0x9E37_79B9
        func next() -> UInt64 { state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407; return state >> 33 }
        for _ in 0..<5_000 {
            let key = Int(next() % 200)
            switch next() % 3 {
            case 0, 1:
                let due = Double(next() % 10_000)
                queue.schedule(key, at: Self.t0.addingTimeInterval(due))
                reference[key] = due
            default:
                #expect(queue.remove(key).map { $0.timeIntervalSince(Self.t0) } == reference.removeValue(forKey: key))
            }
            #expect(queue.count == reference.count)
            #expect(queue.first.map { $0.due.timeIntervalSince(Self.t0) } == reference.values.min())
        }
        #expect(queue.countDue(before: Self.t0.addingTimeInterval(5_000)) == reference.values.filter { $0 <= 5_000 }.count)
        let drained = queue.popAllDue(now: Self.t0.addingTimeInterval(20_000)).map { $0.due.timeIntervalSince(Self.t0) }
        #expect(drained == reference.values.sorted())
    }
}
