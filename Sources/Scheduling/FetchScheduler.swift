// When to fetch a feed next: pure arithmetic over the feed's history and hints, with the clock and the randomness
// passed in, so every rule here is tested without sleeping.
import Foundation

/// What the schedule knows of a feed after a fetch: its entries' dates and the hints it and its server gave.
public struct FeedHistory: Sendable, Hashable {
    /// The publication (else update) dates of the feed's entries, newest or oldest first, any order; at most
    /// ``ScheduleConfiguration/consideredEntries`` of the newest are used.
    public var entryDates: [Date]
    /// RSS `ttl`: minutes the feed may be cached.
    public var timeToLive: TimeInterval?
    /// `sy:updatePeriod` / `sy:updateFrequency` (RSS 1.0 syndication module): the feed's own publishing period,
    /// in seconds (a period of a day with a frequency of 2 is 43,200).
    public var updatePeriod: TimeInterval?
    /// HTTP `Cache-Control: max-age`, in seconds.
    public var maxAge: TimeInterval?
    /// HTTP `Expires`.
    public var expires: Date?

    /// Creates a history.
    public init(entryDates: [Date] = [], timeToLive: TimeInterval? = nil, updatePeriod: TimeInterval? = nil,
                maxAge: TimeInterval? = nil, expires: Date? = nil) {
        self.entryDates = entryDates
        self.timeToLive = timeToLive
        self.updatePeriod = updatePeriod
        self.maxAge = maxAge
        self.expires = expires
    }

    /// The syndication module's period in seconds: `updatePeriod` (`hourly`, `daily`, `weekly`, `monthly`,
    /// `yearly`; daily when absent) divided by `updateFrequency` (1 when absent or not a positive integer);
    /// `nil` when neither is given or the period is unknown.
    public static func syndicationPeriod(updatePeriod: String?, updateFrequency: String?) -> TimeInterval? {
        guard updatePeriod != nil || updateFrequency != nil else { return nil }
        let seconds: TimeInterval
        switch updatePeriod?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() ?? "daily" {
        case "hourly": seconds = 3_600
        case "daily": seconds = 86_400
        case "weekly": seconds = 7 * 86_400
        case "monthly": seconds = 30 * 86_400
        case "yearly": seconds = 365 * 86_400
        default: return nil
        }
        let frequency = updateFrequency.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 1
        return seconds / TimeInterval(max(frequency, 1))
    }
}

/// The schedule's parameters; every one has a documented default.
public struct ScheduleConfiguration: Sendable, Hashable {
    /// The shortest interval. Default 5 minutes (`--min-interval`).
    public var minimumInterval: TimeInterval = 5 * 60
    /// The longest interval, also the interval of a feed that keeps failing. Default 24 hours (`--max-interval`).
    public var maximumInterval: TimeInterval = 24 * 3_600
    /// The interval is the estimated publishing gap times this: 0.5 polls about twice per gap. Default 0.5.
    public var gapFactor: Double = 0.5
    /// The interval of a feed whose entries give no gap (fewer than two dated entries, and no time since the last).
    /// Default 1 hour.
    public var defaultInterval: TimeInterval = 3_600
    /// How many of the newest entry dates the estimate looks at. Default 20.
    public var consideredEntries = 20
    /// The weight of each older gap halves every this many gaps, so recent gaps count most. Default 4.
    public var halfLifeInGaps: Double = 4
    /// The interval is spread by up to this fraction either way, so feeds fetched together drift apart. Default 0.15.
    public var jitter: Double = 0.15
    /// The first wait after a failure, doubled with each consecutive failure up to ``maximumInterval``. Default
    /// 5 minutes.
    public var failureBackoff: TimeInterval = 5 * 60

    /// The defaults.
    public init() {}
}

/// When a feed is fetched next, and why.
public struct ScheduledFetch: Sendable, Hashable {
    /// What decided the interval.
    public enum Reason: String, Sendable, Hashable {
        /// The estimated publishing gap times the factor.
        case publishingGap = "gap"
        /// Too few dated entries: the default interval.
        case noHistory = "default"
        /// A hint of the feed or its server raised the interval: `ttl`, `sy:`, `max-age` or `Expires`.
        case feedHint = "hint"
        /// The server's `Retry-After`.
        case retryAfter = "retry-after"
        /// The backoff after consecutive failures.
        case failureBackoff = "backoff"
        /// A one-shot run's fixed interval (`--interval`).
        case fixedInterval = "interval"
    }

    /// The interval before jitter.
    public var interval: TimeInterval
    /// The next fetch: now plus the interval with jitter (or the `Retry-After` time).
    public var next: Date
    /// What decided the interval.
    public var reason: Reason
    /// The estimated publishing gap, when the entries gave one.
    public var estimatedGap: TimeInterval?

    /// Creates a value.
    public init(interval: TimeInterval, next: Date, reason: Reason, estimatedGap: TimeInterval? = nil) {
        self.interval = interval
        self.next = next
        self.reason = reason
        self.estimatedGap = estimatedGap
    }
}

/// Computes feeds' fetch intervals and next fetches from their history; pure, with the clock and randomness given.
///
/// ## The formula
///
/// With the newest `n` entry dates sorted newest first, `d₀ > d₁ > … > dₙ₋₁` (at most ``ScheduleConfiguration/consideredEntries``),
/// the closed gaps are `gᵢ = dᵢ₋₁ − dᵢ` for `i = 1 … n−1`, weighted `wᵢ = 2^(−(i−1)/h)` (`h` the half-life in gaps):
///
///     G = Σ wᵢ·gᵢ / Σ wᵢ                                   (recent gaps count most)
///     S = now − d₀                                        (the time since the last entry, a gap still open)
///     gap = G                  when S ≤ G
///     gap = (Σ wᵢ·gᵢ + S) / (Σ wᵢ + 1)   when S > G        (an open gap longer than usual counts as the newest one)
///     gap = S                  with a single dated entry
///     interval = clamp(gap × factor, min, max)            (default interval, clamped, without two dates or one)
///     interval = min(max, max(interval, ttl, sy period, max-age, Expires − now))   (hints only raise it)
///     next = now + interval × (1 + U(−jitter, +jitter))
///
/// After `k` consecutive failures the interval is `min(max, backoff × 2^(k−1))` instead, so a feed that keeps failing is
/// polled at the maximum interval and never dropped; a `Retry-After` sets the next fetch exactly.
///
/// Worked example (defaults: factor 0.5, min 5 min, max 24 h, half-life 4): entries at 12:00, 10:00, 07:00 and 06:00,
/// now 12:30. Gaps 2 h, 3 h, 1 h with weights 1, 0.84, 0.71: G = (2 + 2.52 + 0.71) / 2.55 = 2.05 h; S = 0.5 h ≤ G, so the
/// gap is 2.05 h and the interval 1.03 h (61.5 min), next at 13:31 give or take 9 minutes. Had the last entry been at
/// 06:00 the day before (S = 30.5 h), the open gap would count: (5.23 + 30.5) / 3.55 = 10.1 h, interval 5.0 h.
public struct FetchScheduler: Sendable {
    /// The parameters.
    public let configuration: ScheduleConfiguration

    /// Creates a scheduler.
    public init(configuration: ScheduleConfiguration = ScheduleConfiguration()) {
        self.configuration = configuration
    }

    /// The estimated publishing gap of entries with these dates, seen `now`; `nil` without a dated entry.
    public func estimatedGap(_ dates: [Date], now: Date) -> TimeInterval? {
        let newest = Array(dates.filter { $0 <= now }.sorted(by: >).prefix(max(configuration.consideredEntries, 1)))
        guard let last = newest.first else { return nil }
        let open = now.timeIntervalSince(last)
        guard newest.count >= 2 else { return open > 0 ? open : nil }
        var weighted = 0.0
        var weights = 0.0
        for index in 1..<newest.count {
            let weight = pow(2, -Double(index - 1) / max(configuration.halfLifeInGaps, 0.001))
            weighted += weight * newest[index - 1].timeIntervalSince(newest[index])
            weights += weight
        }
        let closed = weighted / weights
        return open > closed ? (weighted + open) / (weights + 1) : closed
    }

    /// The schedule after a successful fetch (or a 304) at `now`.
    ///
    /// - Parameter random: a number in `0..<1` for the jitter (the caller's generator, so tests are deterministic).
    public func afterSuccess(_ history: FeedHistory, now: Date, random: Double) -> ScheduledFetch {
        let c = configuration
        var reason = ScheduledFetch.Reason.publishingGap
        let gap = estimatedGap(history.entryDates, now: now)
        var interval: TimeInterval
        if let gap, gap > 0 {
            interval = clamp(gap * c.gapFactor)
        } else {
            interval = clamp(c.defaultInterval)
            reason = .noHistory
        }
        let hints = [history.timeToLive, history.updatePeriod, history.maxAge, history.expires.map { $0.timeIntervalSince(now) }]
        if let hint = hints.compactMap({ $0 }).filter({ $0 > 0 }).max(), hint > interval {
            interval = min(c.maximumInterval, max(interval, hint))
            reason = .feedHint
        }
        return ScheduledFetch(interval: interval, next: now.addingTimeInterval(jittered(interval, random)), reason: reason,
                              estimatedGap: gap)
    }

    /// The schedule after the `failures`-th consecutive failure at `now` (1 for the first), or at the server's
    /// `Retry-After` when it gave one.
    public func afterFailure(failures: Int, retryAfter: Date? = nil, now: Date, random: Double) -> ScheduledFetch {
        FetchPolicy.adaptive(configuration).afterFailure(failures: failures, retryAfter: retryAfter, now: now, random: random)
    }

    private func clamp(_ interval: TimeInterval) -> TimeInterval {
        min(configuration.maximumInterval, max(configuration.minimumInterval, interval))
    }

    /// `interval` spread by up to ±jitter, from `random` in `0..<1`.
    private func jittered(_ interval: TimeInterval, _ random: Double) -> TimeInterval {
        FetchPolicy.jittered(interval, by: configuration.jitter, random: random)
    }
}
