// When a feed is fetched next, for every caller: the store after each fetch (one-shot runs and watch alike), and the
// watch after each run. Pure: the clock and the randomness are passed in.
import Foundation

/// How a feed's next fetch is decided after each fetch: a fixed interval after the claim (one-shot runs' `--interval`)
/// or the adaptive interval from the feed's history (`watch`), each with its backoff after failures.
///
/// After a success the fixed rule waits its interval counted from the claim, or until the server's hint when that is
/// later; a local file is always due. The adaptive rule is ``FetchScheduler``'s. After the `k`-th failure in a row both
/// wait ``Backoff/wait(afterFailures:random:)``, or exactly until a `Retry-After` still ahead.
public struct FetchPolicy: Sendable, Hashable {
    /// What decides the interval after a success.
    public enum Interval: Sendable, Hashable {
        /// This many seconds after the claim (0: due again at once), or the server's later hint.
        case fixed(TimeInterval)
        /// From the feed's publishing history and hints (``FetchScheduler``).
        case adaptive(ScheduleConfiguration)
    }

    /// The wait after consecutive failures: `base` doubled per further failure, at most `maximum`, spread by up to
    /// `jitter` either way so that feeds failing together drift apart.
    public struct Backoff: Sendable, Hashable {
        /// The first wait, in seconds.
        public var base: TimeInterval
        /// The longest wait, in seconds.
        public var maximum: TimeInterval
        /// The fraction the wait is spread by at random, either way.
        public var jitter: Double

        /// Creates a backoff.
        public init(base: TimeInterval = 300, maximum: TimeInterval = 86_400, jitter: Double = 0.1) {
            self.base = base
            self.maximum = maximum
            self.jitter = jitter
        }

        /// The wait before jitter after the `failures`-th failure in a row (1 for the first).
        public func interval(afterFailures failures: Int) -> TimeInterval {
            min(maximum, base * pow(2, Double(min(max(failures - 1, 0), 62))))
        }

        /// The wait after the `failures`-th failure in a row, spread by `random` in `0..<1`.
        public func wait(afterFailures failures: Int, random: Double) -> TimeInterval {
            FetchPolicy.jittered(interval(afterFailures: failures), by: jitter, random: random)
        }
    }

    /// What decides the interval after a success.
    public var interval: Interval
    /// The wait after failures.
    public var backoff: Backoff

    /// Creates a policy.
    public init(interval: Interval, backoff: Backoff) {
        self.interval = interval
        self.backoff = backoff
    }

    /// The adaptive policy of `configuration`: its interval, and its backoff (from ``ScheduleConfiguration/failureBackoff``
    /// doubling up to the maximum interval, with the schedule's jitter), so a feed that keeps failing is polled at the
    /// maximum interval and never dropped.
    public static func adaptive(_ configuration: ScheduleConfiguration) -> FetchPolicy {
        FetchPolicy(interval: .adaptive(configuration),
                    backoff: Backoff(base: configuration.failureBackoff, maximum: configuration.maximumInterval,
                                     jitter: configuration.jitter))
    }

    /// The next fetch after a successful fetch (or a 304) at `now`; `nil` when the feed may be fetched any time (a
    /// local file, or a fixed interval of zero without a hint).
    ///
    /// - Parameters:
    ///   - history: the feed's entry dates and hints (the adaptive rule reads them).
    ///   - serverNextFetch: the earliest next fetch the server asked for (`Cache-Control: max-age`, `Expires`); the fixed
    ///     rule waits for it when it is later than its interval.
    ///   - isLocal: the feed is a local file: reading it asks nothing of any server, so it is always due.
    ///   - claimedAt: when the fetch was claimed; the fixed interval counts from it.
    ///   - random: a number in `0..<1` for the jitter.
    public func afterSuccess(_ history: FeedHistory, serverNextFetch: Date?, isLocal: Bool, claimedAt: Date, now: Date,
                             random: Double) -> ScheduledFetch? {
        switch interval {
        case .adaptive(let configuration):
            return FetchScheduler(configuration: configuration).afterSuccess(history, now: now, random: random)
        case .fixed(let seconds):
            guard !isLocal else { return nil }
            guard seconds > 0 else {
                return serverNextFetch.map { ScheduledFetch(interval: $0.timeIntervalSince(now), next: $0, reason: .feedHint) }
            }
            let scheduled = claimedAt.addingTimeInterval(seconds)
            if let hint = serverNextFetch, hint > scheduled {
                return ScheduledFetch(interval: hint.timeIntervalSince(now), next: hint, reason: .feedHint)
            }
            return ScheduledFetch(interval: seconds, next: scheduled, reason: .fixedInterval)
        }
    }

    /// The next fetch after the `failures`-th consecutive failure at `now` (1 for the first): the server's `Retry-After`
    /// when it is still ahead, else the backoff.
    public func afterFailure(failures: Int, retryAfter: Date? = nil, now: Date, random: Double) -> ScheduledFetch {
        if let retryAfter, retryAfter > now {
            return ScheduledFetch(interval: retryAfter.timeIntervalSince(now), next: retryAfter, reason: .retryAfter)
        }
        let wait = backoff.interval(afterFailures: failures)
        return ScheduledFetch(interval: wait, next: now.addingTimeInterval(Self.jittered(wait, by: backoff.jitter, random: random)),
                              reason: .failureBackoff)
    }

    /// When a watched feed is looked at again after a run, from its row as the run left it: the end of another
    /// process's live lease (its feeds are taken over when it dies); the next fetch this run's completion recorded; a
    /// next fetch still ahead (another process fetched it); else after `retry` seconds (the run did not complete it:
    /// cancelled, offline, its claim failed).
    public static func dueAfterRun(nextFetch: Date?, lastAttempt: Date?, leaseUntil: Date?, runStarted: Date, now: Date,
                                   retry: TimeInterval) -> Date {
        if let until = leaseUntil, until > now { return max(until, nextFetch ?? until) }
        if let attempt = lastAttempt, attempt >= runStarted, let next = nextFetch { return next }
        if let next = nextFetch, next > now { return next }
        return now.addingTimeInterval(retry)
    }

    /// `interval` spread by up to `jitter` (a fraction, clamped to 0…1) either way, from `random` in `0..<1`.
    static func jittered(_ interval: TimeInterval, by jitter: Double, random: Double) -> TimeInterval {
        let spread = min(max(jitter, 0), 1) * (2 * min(max(random, 0), 1) - 1)
        return interval * (1 + spread)
    }
}
