import Foundation
import Scheduling
import Testing

/// One answer to "when is this feed fetched next?": the fixed and adaptive policies, their one backoff, and when a
/// watched feed is looked at again after a run; and "is it due now?" under each run's due policy.
@Suite("FetchPolicy and DuePolicy")
struct FetchPolicyTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aFixedIntervalCountsFromTheClaimAndAServersLaterHintWins() throws {
        let policy = FetchPolicy(interval: .fixed(300), backoff: .init())
        let claimed = now.addingTimeInterval(-20)
        let plain = try #require(policy.afterSuccess(FeedHistory(), serverNextFetch: nil, isLocal: false, claimedAt: claimed, now: now, random: 0.9))
        #expect(plain.next == claimed.addingTimeInterval(300) && plain.reason == .fixedInterval, "no jitter on a fixed interval")
        let later = now.addingTimeInterval(3_600)
        #expect(policy.afterSuccess(FeedHistory(), serverNextFetch: later, isLocal: false, claimedAt: claimed, now: now, random: 0)?.next == later)
        let earlier = now.addingTimeInterval(60)
        #expect(policy.afterSuccess(FeedHistory(), serverNextFetch: earlier, isLocal: false, claimedAt: claimed, now: now, random: 0)?.next
                == claimed.addingTimeInterval(300))
        #expect(policy.afterSuccess(FeedHistory(), serverNextFetch: later, isLocal: true, claimedAt: claimed, now: now, random: 0) == nil,
                "a local file is always due")
        let zero = FetchPolicy(interval: .fixed(0), backoff: .init())
        #expect(zero.afterSuccess(FeedHistory(), serverNextFetch: nil, isLocal: false, claimedAt: claimed, now: now, random: 0) == nil)
        #expect(zero.afterSuccess(FeedHistory(), serverNextFetch: later, isLocal: false, claimedAt: claimed, now: now, random: 0)?.next == later)
    }

    @Test func theAdaptivePolicyIsTheSchedulersWithItsOwnBackoff() throws {
        var configuration = ScheduleConfiguration()
        configuration.failureBackoff = 60
        configuration.maximumInterval = 3_600
        let policy = FetchPolicy.adaptive(configuration)
        #expect(policy.backoff == .init(base: 60, maximum: 3_600, jitter: configuration.jitter))
        let history = FeedHistory(entryDates: [now.addingTimeInterval(-3_600), now.addingTimeInterval(-7_200)])
        let adaptive = policy.afterSuccess(history, serverNextFetch: nil, isLocal: false, claimedAt: now, now: now, random: 0.5)
        #expect(adaptive == FetchScheduler(configuration: configuration).afterSuccess(history, now: now, random: 0.5))
        #expect(policy.afterFailure(failures: 3, now: now, random: 0.5) == FetchScheduler(configuration: configuration)
            .afterFailure(failures: 3, now: now, random: 0.5))
    }

    @Test(arguments: [FetchPolicy(interval: .fixed(300), backoff: .init(base: 300, maximum: 86_400, jitter: 0.1)),
                      FetchPolicy.adaptive(ScheduleConfiguration())])
    func theBackoffDoublesToItsMaximumSpreadByItsJitter(_ policy: FetchPolicy) {
        let backoff = policy.backoff
        #expect(backoff.interval(afterFailures: 1) == backoff.base)
        #expect(backoff.interval(afterFailures: 2) == min(backoff.maximum, backoff.base * 2))
        #expect(backoff.interval(afterFailures: 1_000) == backoff.maximum, "capped, never overflowing")
        for random in [0.0, 0.25, 0.5, 0.999] {
            let failed = policy.afterFailure(failures: 2, now: now, random: random)
            let wait = failed.next.timeIntervalSince(now)
            #expect(failed.reason == .failureBackoff)
            #expect(abs(wait - failed.interval) <= failed.interval * backoff.jitter + 1e-9, "within the jitter: \(wait)")
        }
        #expect(policy.afterFailure(failures: 2, now: now, random: 0).next < policy.afterFailure(failures: 2, now: now, random: 0.999).next)
        let retry = now.addingTimeInterval(7_777)
        #expect(policy.afterFailure(failures: 5, retryAfter: retry, now: now, random: 0.3).next == retry, "Retry-After exactly")
        #expect(policy.afterFailure(failures: 1, retryAfter: now.addingTimeInterval(-5), now: now, random: 0.5).reason == .failureBackoff,
                "a Retry-After already past is the backoff")
    }

    @Test func aWatchedFeedIsLookedAtAgainWhenItsRunLeftItDue() {
        let started = now.addingTimeInterval(-10)
        let next = now.addingTimeInterval(900)
        #expect(FetchPolicy.dueAfterRun(nextFetch: next, lastAttempt: now, leaseUntil: nil, runStarted: started, now: now, retry: 60) == next,
                "the run completed it: its recorded next fetch")
        let lease = now.addingTimeInterval(100)
        #expect(FetchPolicy.dueAfterRun(nextFetch: nil, lastAttempt: nil, leaseUntil: lease, runStarted: started, now: now, retry: 60) == lease,
                "another process holds it: when that lease ends")
        #expect(FetchPolicy.dueAfterRun(nextFetch: next, lastAttempt: started.addingTimeInterval(-100), leaseUntil: nil, runStarted: started,
                                        now: now, retry: 60) == next, "another process fetched it meanwhile")
        #expect(FetchPolicy.dueAfterRun(nextFetch: nil, lastAttempt: nil, leaseUntil: nil, runStarted: started, now: now, retry: 60)
                == now.addingTimeInterval(60), "not completed: retried")
    }

    @Test func eachDuePolicyDecidesOnTheColumnsOfTheRow() {
        let ahead = now.addingTimeInterval(60)
        func due(_ policy: DuePolicy, next: Date? = ahead, local: Bool = false, limited: Bool = false, failures: Int = 0) -> Bool {
            policy.isDue(nextFetch: next, isLocal: local, isRateLimited: limited, consecutiveFailures: failures, at: now)
        }
        for policy in DuePolicy.allCases {
            #expect(due(policy, next: nil) && due(policy, next: now) && due(policy, local: true, failures: 3), "\(policy)")
        }
        #expect(!due(.scheduled) && due(.unlessAskedToWait) && due(.always), "within the interval")
        #expect(!due(.scheduled, limited: true) && !due(.unlessAskedToWait, limited: true) && due(.always, limited: true), "asked to wait")
        #expect(!due(.unlessAskedToWait, failures: 1) && due(.always, failures: 1), "backing off")
    }
}
