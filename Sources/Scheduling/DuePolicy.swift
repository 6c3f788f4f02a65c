// Whether a feed is due now, under the policy of the run asking: the rule the store's claims apply in SQL.
import Foundation

/// Which feeds count as due, by their stored next allowed fetch. A local file is due under every policy: reading it
/// asks nothing of any server.
public enum DuePolicy: Int, Sendable, Hashable, CaseIterable {
    /// Only feeds whose next allowed fetch has come: the schedule (`watch`, and `--due` runs from cron).
    case scheduled = 0
    /// Every feed except those a server asked to wait (a `Retry-After`, a `429`) or that are backing off after failures:
    /// an explicit run, which fetches the rest conditionally even within their interval.
    case unlessAskedToWait = 1
    /// Every feed (`--force`).
    case always = 2

    /// Whether a feed is due at `now` under the policy, from the columns of its row that decide it.
    public func isDue(nextFetch: Date?, isLocal: Bool, isRateLimited: Bool, consecutiveFailures: Int, at now: Date) -> Bool {
        guard let nextFetch, nextFetch > now, !isLocal else { return true }
        switch self {
        case .scheduled: return false
        case .unlessAskedToWait: return !isRateLimited && consecutiveFailures == 0
        case .always: return true
        }
    }
}
