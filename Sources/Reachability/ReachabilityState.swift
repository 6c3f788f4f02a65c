// Whether the remote feeds should wait: pure logic over route snapshots, transfer outcomes and clock jumps, with the
// time passed in, so every rule is tested without a network or a clock.
import Foundation

/// When the network is taken to be down, and when it is back.
public struct ReachabilityPolicy: Sendable, Hashable {
    /// The network is down when transfers to at least this many distinct hosts failed for want of a network (name
    /// resolution, no route) within ``failureWindow``, and no transfer succeeded since. Default 3.
    public var distinctFailingHosts = 3
    /// How far back failures count. Default 60 seconds.
    public var failureWindow: TimeInterval = 60
    /// How long the network must look back before the watcher resumes (a route that flaps does not start a storm).
    /// Default 2 seconds.
    public var resumeDebounce: TimeInterval = 2
    /// While paused on failures alone (no route information says the network is back), let one transfer through this
    /// often, to find out. Default 30 seconds.
    public var probeInterval: TimeInterval = 30

    /// The defaults.
    public init() {}
}

/// The watcher's idea of the network: online, or offline with a reason; fed with evidence as it arrives.
///
/// Evidence, strongest first:
/// - the route monitor: no default route means offline at once; a default route coming back means online after the
///   debounce (and clears the failure evidence, which was about the old network);
/// - transfers: failures without a network to several distinct hosts within the window mean offline; any answer from a
///   server means online;
/// - a clock jump (the machine slept): the failure evidence is old news, so it is cleared.
///
/// Without a route monitor (``routeKnown`` false: no netlink) it fails open: only transfer failures can pause it, and a
/// probe transfer is let through every ``ReachabilityPolicy/probeInterval`` to find out when to resume.
public struct ReachabilityState: Sendable {
    /// Why the watcher thinks the network is down.
    public enum OfflineReason: Sendable, Hashable, CustomStringConvertible {
        /// The routing table has no default route.
        case noDefaultRoute
        /// Recent transfers to several distinct hosts all failed for want of a network.
        case failingHosts(Int)

        public var description: String {
            switch self {
            case .noDefaultRoute: return "no default route"
            case .failingHosts(let count): return "transfers to \(count) hosts failed without a network (DNS or no route)"
            }
        }
    }

    /// The policy.
    public let policy: ReachabilityPolicy
    /// Whether a route monitor reports; `false` fails open.
    public private(set) var routeKnown: Bool
    /// The last route snapshot's verdict; `true` when unknown.
    public private(set) var hasDefaultRoute = true
    /// Hosts whose last transfer failed for want of a network, and when.
    private var failures: [String: Date] = [:]
    /// When the route last came back, for the debounce.
    private var routeReturned: Date?
    /// When the last probe was let through while paused on failures.
    private var lastProbe: Date?

    /// A state with no evidence yet: online.
    public init(policy: ReachabilityPolicy = ReachabilityPolicy(), routeKnown: Bool) {
        self.policy = policy
        self.routeKnown = routeKnown
    }

    /// The verdict at `now`: `nil` when online, else why not.
    public func offlineReason(at now: Date) -> OfflineReason? {
        if routeKnown && !hasDefaultRoute { return .noDefaultRoute }
        if let returned = routeReturned, now.timeIntervalSince(returned) < policy.resumeDebounce { return .noDefaultRoute }
        let recent = failures.values.filter { now.timeIntervalSince($0) <= policy.failureWindow }.count
        if recent >= policy.distinctFailingHosts { return .failingHosts(recent) }
        return nil
    }

    /// Whether remote transfers may start at `now`.
    public func isOnline(at now: Date) -> Bool { offlineReason(at: now) == nil }

    /// When a paused state will next change on its own (the debounce ending, failures ageing out, a probe being due);
    /// `nil` when online or when only new evidence can change it.
    public func nextCheck(after now: Date) -> Date? {
        guard let reason = offlineReason(at: now) else { return nil }
        switch reason {
        case .noDefaultRoute:
            return routeKnown && !hasDefaultRoute ? nil : routeReturned.map { $0.addingTimeInterval(policy.resumeDebounce) }
        case .failingHosts:
            let ageOut = failures.values.sorted().first.map { $0.addingTimeInterval(policy.failureWindow) }
            let probe = (lastProbe ?? now).addingTimeInterval(policy.probeInterval)
            return [ageOut, probe].compactMap { $0 }.min()
        }
    }

    /// A new route snapshot.
    public mutating func routeChanged(hasDefaultRoute: Bool, at now: Date) {
        if hasDefaultRoute && (!self.hasDefaultRoute || !routeKnown) {
            routeReturned = now
            failures.removeAll()  // evidence about the network that was
        }
        routeKnown = true
        self.hasDefaultRoute = hasDefaultRoute
    }

    /// The route monitor stopped (or never started): fail open.
    public mutating func routeUnknown() {
        routeKnown = false
        hasDefaultRoute = true
    }

    /// A transfer to `host` failed for want of a network (name resolution, no route).
    public mutating func transferFailedWithoutNetwork(host: String, at now: Date) {
        failures[host] = now
    }

    /// A server answered (any HTTP status, even an error): the network works.
    public mutating func transferReachedServer(host: String, at now: Date) {
        failures.removeAll()
        lastProbe = nil
    }

    /// The machine slept (a clock jump): what failed before is old news.
    public mutating func clockJumped(at now: Date) {
        failures.removeAll()
        lastProbe = nil
    }

    /// While paused on failures, whether to let one probe transfer through now (and remember that it was).
    public mutating func takeProbe(at now: Date) -> Bool {
        guard case .failingHosts? = offlineReason(at: now) else { return false }
        if let lastProbe, now.timeIntervalSince(lastProbe) < policy.probeInterval { return false }
        lastProbe = now
        return true
    }
}

/// Notices that the machine slept: `CLOCK_BOOTTIME` counts suspended time and `CLOCK_MONOTONIC` does not, so their
/// difference grows by the time asleep.
public struct SleepDetector: Sendable {
    /// The smallest growth that counts as a sleep. Default 5 seconds.
    public var threshold: TimeInterval
    private var offset: TimeInterval

    /// Starts from the clocks' current difference.
    public init(threshold: TimeInterval = 5) {
        self.threshold = threshold
        offset = Self.bootMinusMonotonic()
    }

    /// Whether the machine slept since the last call (or since creation); `offset` given for tests.
    public mutating func sleptSinceLastCheck(offset now: TimeInterval = SleepDetector.bootMinusMonotonic()) -> Bool {
        defer { offset = now }
        return now - offset >= threshold
    }

    /// `CLOCK_BOOTTIME − CLOCK_MONOTONIC` in seconds.
    public static func bootMinusMonotonic() -> TimeInterval {
        var boot = timespec()
        var monotonic = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        return TimeInterval(boot.tv_sec - monotonic.tv_sec) + TimeInterval(boot.tv_nsec - monotonic.tv_nsec) / 1e9
    }
}
