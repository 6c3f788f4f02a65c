// The service form of the ingest pipeline: feeds dispatched by due time from a DueQueue, each batch of due feeds run
// through an IngestPipeline (its workers, store threads, leases and observers), every completion's next fetch read
// back from the store, remote feeds paused while the network is away, and a graceful stop.
import ArticleStore
import Dispatch
import Fetch
import Foundation
import Ingest
import Reachability
import Scheduling
import Support

/// How a ``WatchService`` runs; every field has a documented default.
public struct WatchConfiguration: Sendable {
    /// The adaptive schedule (`--min-interval`, `--max-interval`, jitter, backoff); the store records what it computes.
    public var schedule = ScheduleConfiguration()
    /// How each batch of due feeds is ingested (jobs, parser, lease duration, the observers' queue).
    public var ingest = IngestConfiguration()
    /// How long in-flight feeds may run on after a stop before they are cancelled (`--grace`). Default 10 seconds.
    public var grace: Duration = .seconds(10)
    /// At most this many due feeds go into one run. Default 256.
    public var batchSize = 256
    /// At most this many runs at once, so one slow feed holds back only its own batch. Default 4.
    public var concurrentRuns = 4
    /// When the network counts as away, and how quickly it counts as back.
    public var reachability = ReachabilityPolicy()
    /// Watch the routing table with netlink (the default); `false` relies on transfer failures alone.
    public var monitorsRoutes = true
    /// Overdue remote feeds resume spread over at most this many seconds, in due order (0.25 s per feed below that),
    /// so the first minute back is not a storm. Default 60.
    public var resumeSpread: TimeInterval = 60
    /// Housekeeping (a clock jump, the reachability debounce) is looked at least this often, even with no feed due.
    /// Default 5 seconds. Dispatch itself follows due times, not this.
    public var housekeeping: TimeInterval = 5

    /// The defaults.
    public init() {}

    /// How long the first due feed waits for others to fall due, so they share a run (each run makes its worker
    /// threads, store connections and lease thread): a tenth of the minimum interval, at most 1 second; 0 with
    /// `--min-interval 0`.
    public var coalescing: TimeInterval { min(1, max(schedule.minimumInterval, 0) / 10) }

    /// When a feed that a run did not complete (cancelled, offline, its claim failed) is tried again: the minimum
    /// interval, at least 1 second and at most 5 minutes.
    public var retryDelay: TimeInterval { min(max(schedule.minimumInterval, 1), 300) }
}

/// What the service reports besides the pipeline's events.
public enum WatchEvent: Sendable {
    /// The network looks away: remote feeds wait (no transfers, no failures counted).
    case paused(reason: String, remoteFeeds: Int)
    /// The network is back: this many overdue remote feeds resume, spread out in due order.
    case resumed(overdue: Int)
    /// The route monitor could not start: the service fails open (it pauses only on transfer failures).
    case routeMonitorUnavailable(String)
    /// The machine slept (a jump between `CLOCK_BOOTTIME` and `CLOCK_MONOTONIC`): counted as a network change.
    case clockJumped
    /// Reading the feeds' state after a run failed; they are tried again after ``WatchConfiguration/retryDelay``.
    case storeError(StoreError)
}

/// The service at one instant, for status lines and metrics.
public struct WatchSnapshot: Sendable, Hashable {
    /// Feeds on the list.
    public var feeds = 0
    /// Feeds due within the next minute (overdue ones included, and remote ones waiting for the network).
    public var dueWithinMinute = 0
    /// Feeds in runs now.
    public var inFlight = 0
    /// Why remote feeds wait; `nil` when online.
    public var offlineReason: String?
    /// Remote feeds waiting for the network.
    public var parked = 0
}

/// What ``WatchService/load(_:)`` changed.
public struct ListChange: Sendable, Hashable {
    /// Lines new to the list, scheduled at once (or at their stored next fetch).
    public var added = 0
    /// Lines gone from the list: no longer fetched; their articles stay.
    public var removed = 0
    /// Feeds on the list now.
    public var feeds = 0
}

/// `feedingest watch`: ingests a feed list continuously, each feed when it is due.
///
/// ## Dispatch
///
/// Feeds wait in a ``DueQueue`` ordered by their next fetch; the dispatch thread sleeps until the earliest is due (or
/// something changes: a run ends, the list changes, the network comes or goes), then hands every due feed, in batches
/// of ``WatchConfiguration/batchSize``, to an ``IngestPipeline`` run of its own (at most
/// ``WatchConfiguration/concurrentRuns`` at once, sharing one `Fetcher` and the observers). With a store the pipeline
/// claims each feed under a lease, so several services on one store never fetch a feed at once, and the claim checks
/// the stored next fetch, so none fetches it again within its interval. When a run ends, the feeds' rows are read
/// back: a completed feed is due at the next fetch its completion recorded (the adaptive schedule, see
/// ``FetchScheduler``); a feed another process holds is looked at again when its lease ends (so a killed process's
/// feeds are taken over); one not completed (offline, cancelled) is tried again after
/// ``WatchConfiguration/retryDelay``. The next fetch is stored, so a restart resumes the schedule.
///
/// ## Reachability
///
/// Remote feeds (http and https, but not loopback hosts) wait while ``ReachabilityState`` says the network is away: no
/// default route (a netlink ``RouteMonitor``), or transfers to several distinct hosts failed for want of a network.
/// They are neither fetched nor failed; when the network is back (debounced) the overdue ones resume in due order,
/// spread out. Local files and loopback feeds keep running. Without netlink it fails open.
///
/// ## Stopping
///
/// ``stop()`` (a signal handler's first signal) ends dispatching; ``run()`` then lets the runs' in-flight feeds finish
/// for ``WatchConfiguration/grace`` (nothing new starts, leases of feeds not started are released), cancels what is
/// left (its uncommitted articles dropped, so nothing partial is stored) and returns.
public final class WatchService: Sendable {
    /// The store: the schedule and the leases live there.
    public let store: Store
    /// The fetcher every run shares.
    public let fetcher: Fetcher
    /// The configuration.
    public let configuration: WatchConfiguration

    private struct State {
        var entries: [FeedID: FeedEntry] = [:]
        var queue = DueQueue<FeedID>()
        /// Remote feeds that fell due while the network was away, with their due time.
        var parked: [(feed: FeedID, due: Date)] = []
        var inFlight: Set<FeedID> = []
        var runs: [Int: IngestPipeline] = [:]
        var nextRun = 0
        var stopping = false
        var reachability: ReachabilityState
        var offline: ReachabilityState.OfflineReason?
    }

    private let observers: [any IngestObserver]
    private let onEvent: @Sendable (WatchEvent) -> Void
    private let access: StoreAccess
    private let state: Lock<State>
    private let wake = DispatchSemaphore(value: 0)
    private let runsDone = DispatchGroup()

    /// Creates a service over `store`; `observers` hear every run's events (on
    /// ``WatchConfiguration/ingest``'s event queue), `onEvent` the service's own, on the thread that noticed them.
    ///
    /// - Throws: the store's error when its reading context cannot be made.
    public init(store: Store, fetcher: Fetcher, configuration: WatchConfiguration, observers: [any IngestObserver],
                onEvent: @escaping @Sendable (WatchEvent) -> Void = { _ in }) throws(StoreError) {
        self.store = store
        self.fetcher = fetcher
        self.configuration = configuration
        self.observers = observers
        self.onEvent = onEvent
        access = try StoreAccess(store: store, name: "feedingest.watch.store")
        state = Lock(State(reachability: ReachabilityState(policy: configuration.reachability, routeKnown: false)))
    }

    // MARK: The list

    /// Makes `list` the feeds watched: new lines are scheduled at once (or at the next fetch the store has for them),
    /// removed lines are no longer fetched (their articles stay), and tags are stored. Feeds in flight finish. The
    /// store's subscriptions follow, on behalf of `source`: the list's feeds are subscribed, and a list file's feeds it
    /// no longer names are unsubscribed.
    ///
    /// - Throws: the store's error; the list watched is then unchanged.
    @discardableResult
    public func load(_ list: FeedList, source: SubscriptionSource = .oneOff) throws(StoreError) -> ListChange {
        var unique: [String: FeedEntry] = [:]
        var order: [FeedEntry] = []
        for entry in list.entries where unique[entry.storeURL] == nil {
            unique[entry.storeURL] = entry
            order.append(entry)
        }
        let entries = order
        let rows = try access.perform { context throws(StoreError) -> [(FeedID, Date?)] in
            let ids = try context.subscribe(urls: entries.map(\.storeURL), from: source).feeds
            try context.setTags(zip(ids, entries).map { ($0, $1.tags) }, clearsEmpty: true)
            let statuses = try context.feedStatuses(ids)
            return zip(ids, statuses).map { ($0, $1.nextFetch) }
        }
        let change = state.withLock { state -> ListChange in
            var change = ListChange()
            let now = Date()
            let listed = Set(rows.map(\.0))
            for feed in state.entries.keys where !listed.contains(feed) {
                state.entries.removeValue(forKey: feed)
                state.queue.remove(feed)
                state.parked.removeAll { $0.feed == feed }
                change.removed += 1
            }
            for ((feed, next), entry) in zip(rows, entries) {
                let known = state.entries[feed] != nil
                state.entries[feed] = entry
                if !known {
                    change.added += 1
                    if !state.inFlight.contains(feed) { state.queue.schedule(feed, at: next ?? now) }
                }
            }
            change.feeds = state.entries.count
            return change
        }
        wake.signal()
        return change
    }

    // MARK: Running

    /// Dispatches due feeds until ``stop()``, then stops gracefully (see the type's documentation) and returns.
    /// Call it once, from a thread that may block.
    public func run() {
        let monitor = startRouteMonitor()
        var sleep = SleepDetector()
        while true {
            let now = Date()
            if sleep.sleptSinceLastCheck() {
                let configuration = self.configuration
                state.withLock { state in
                    state.reachability.clockJumped(at: now)
                    // Everything fell due while asleep: spread the overdue feeds out as after a resume.
                    let overdue = state.queue.popAllDue(now: now).map { (feed: $0.key, due: $0.due) }
                    Self.spread(overdue, into: &state.queue, now: now, window: configuration.resumeSpread)
                }
                onEvent(.clockJumped)
            }
            guard let step = dispatch(now: now) else { break }
            if let transition = step.transition { onEvent(transition) }
            for (id, pipeline, batch) in step.runs { launch(id, pipeline, batch) }
            _ = wake.wait(timeout: .now() + max(step.wait, 0.001))
        }
        monitor?.stop()
        let pipelines = state.withLock { Array($0.runs.values) }
        for pipeline in pipelines { pipeline.stopStarting() }
        let grace = configuration.grace.seconds
        if runsDone.wait(timeout: .now() + grace) == .timedOut {
            for pipeline in state.withLock({ Array($0.runs.values) }) { pipeline.cancel() }
            runsDone.wait()
        }
        access.stop()
    }

    /// Ends dispatching; ``run()`` then finishes the feeds in flight (within the grace period) and returns. Any thread.
    ///
    /// - Parameter cancellingInFlight: cancel the feeds in flight at once instead (what they committed stays, the rest
    ///   is fetched again later): for when what they would deliver has nowhere to go.
    public func stop(cancellingInFlight: Bool = false) {
        let pipelines = state.withLock { state -> [IngestPipeline] in
            state.stopping = true
            return Array(state.runs.values)
        }
        for pipeline in pipelines {
            if cancellingInFlight { pipeline.cancel() } else { pipeline.stopStarting() }
        }
        wake.signal()
    }

    /// The service now.
    public func snapshot(at now: Date = Date()) -> WatchSnapshot {
        state.withLock { state in
            WatchSnapshot(feeds: state.entries.count,
                          dueWithinMinute: state.queue.countDue(before: now.addingTimeInterval(60)) + state.parked.count,
                          inFlight: state.inFlight.count, offlineReason: state.offline?.description, parked: state.parked.count)
        }
    }

    /// What one turn of the dispatch loop does: runs to launch, a reachability transition to report, how long to wait.
    private struct Step {
        var runs: [(Int, IngestPipeline, [FeedEntry])] = []
        var transition: WatchEvent?
        var wait: TimeInterval
    }

    /// Takes the due feeds into new runs (or parks remote ones while offline); `nil` once stopping.
    private func dispatch(now: Date) -> Step? {
        let configuration = self.configuration
        return state.withLock { state -> Step? in
            guard !state.stopping else { return nil }
            var step = Step(wait: configuration.housekeeping)
            let reason = state.reachability.offlineReason(at: now)
            if let reason, state.offline == nil {
                let remote = state.entries.values.filter(Self.isPausable).count
                step.transition = .paused(reason: reason.description, remoteFeeds: remote)
            } else if reason == nil, state.offline != nil {
                let parked = state.parked
                state.parked = []
                Self.spread(parked, into: &state.queue, now: now, window: configuration.resumeSpread)
                step.transition = .resumed(overdue: parked.count)
            }
            state.offline = reason
            if let first = state.queue.first, first.due <= now, now.timeIntervalSince(first.due) < configuration.coalescing,
               state.queue.count > 1 {
                // Let the feeds falling due in the next moment join it.
                step.wait = min(step.wait, configuration.coalescing - now.timeIntervalSince(first.due))
                return step
            }
            while state.runs.count < configuration.concurrentRuns {
                var batch: [FeedID] = []
                while batch.count < configuration.batchSize, let (feed, due) = state.queue.popDue(now: now) {
                    guard let entry = state.entries[feed] else { continue }
                    if reason != nil, Self.isPausable(entry), !state.reachability.takeProbe(at: now) {
                        state.parked.append((feed, due))
                        continue
                    }
                    batch.append(feed)
                }
                guard !batch.isEmpty else { break }
                let id = state.nextRun
                state.nextRun += 1
                let pipeline = IngestPipeline(store: store, fetcher: fetcher, configuration: configuration.ingest)
                state.runs[id] = pipeline
                state.inFlight.formUnion(batch)
                step.runs.append((id, pipeline, batch.compactMap { state.entries[$0] }))
            }
            if state.runs.count < configuration.concurrentRuns, let first = state.queue.first {
                step.wait = min(step.wait, first.due.timeIntervalSince(now))
            }
            if let check = state.reachability.nextCheck(after: now) {
                step.wait = min(step.wait, check.timeIntervalSince(now))
            }
            return step
        }
    }

    /// Runs one batch on a thread of its own; when it ends, reschedules its feeds from the store.
    private func launch(_ id: Int, _ pipeline: IngestPipeline, _ entries: [FeedEntry]) {
        for observer in observers { pipeline.addObserver(observer) }
        pipeline.addObserver(ClosureObserver { [weak self] event in self?.heard(event) })
        runsDone.enter()
        let thread = Thread { [self] in
            defer {
                runsDone.leave()
                wake.signal()
            }
            let started = Date()
            pipeline.run(entries)
            finished(id, entries, started: started)
        }
        thread.name = "feedingest.watch.run.\(id)"
        thread.start()
    }

    /// Reads the batch's feeds back and schedules each at its next fetch.
    private func finished(_ id: Int, _ entries: [FeedEntry], started: Date) {
        let urls = entries.map(\.storeURL)
        let result = Result { () throws(StoreError) -> [FeedStatus] in
            try access.perform { context throws(StoreError) -> [FeedStatus] in
                let ids = try context.feeds(urls: urls)
                return try context.feedStatuses(ids)
            }
        }
        if case .failure(let error) = result { onEvent(.storeError(error)) }
        let statuses = (try? result.get()) ?? []
        let retry = configuration.retryDelay
        state.withLock { state in
            state.runs.removeValue(forKey: id)
            let now = Date()
            for status in statuses {
                state.inFlight.remove(status.id)
                guard !state.stopping, state.entries[status.id] != nil, !state.queue.contains(status.id) else { continue }
                state.queue.schedule(status.id, at: Self.nextDue(status, runStarted: started, now: now, retry: retry))
            }
            if statuses.isEmpty {
                // The rows could not be read: the batch's feeds (their ids unknown here) are found by URL.
                let byURL = Dictionary(state.entries.map { ($0.value.storeURL, $0.key) }, uniquingKeysWith: { a, _ in a })
                for url in urls {
                    guard let feed = byURL[url] else { continue }
                    state.inFlight.remove(feed)
                    if !state.stopping, !state.queue.contains(feed) { state.queue.schedule(feed, at: now.addingTimeInterval(retry)) }
                }
            }
        }
    }

    /// Schedules overdue feeds from `now` on, in due order, spread over `window` seconds at most (0.25 s per feed below
    /// that), each with a random offset within its slot: the first minute back is not a storm.
    static func spread(_ overdue: [(feed: FeedID, due: Date)], into queue: inout DueQueue<FeedID>, now: Date, window: TimeInterval) {
        let ordered = overdue.sorted { $0.due < $1.due }
        let span = min(window, Double(ordered.count) * 0.25)
        for (index, item) in ordered.enumerated() {
            let offset = span * (Double(index) + Double.random(in: 0..<1)) / Double(max(ordered.count, 1))
            queue.schedule(item.feed, at: now.addingTimeInterval(offset))
        }
    }

    /// When a feed is due after a run, from its row (``FetchPolicy/dueAfterRun(nextFetch:lastAttempt:leaseUntil:runStarted:now:retry:)``).
    static func nextDue(_ status: FeedStatus, runStarted: Date, now: Date, retry: TimeInterval) -> Date {
        FetchPolicy.dueAfterRun(nextFetch: status.nextFetch, lastAttempt: status.lastAttempt,
                                leaseUntil: status.leaseOwner == nil ? nil : status.leaseUntil, runStarted: runStarted, now: now,
                                retry: retry)
    }

    /// Whether a feed waits while the network is away: http(s) feeds except loopback hosts.
    static func isPausable(_ entry: FeedEntry) -> Bool {
        guard case .remote(let url) = entry.location, let host = url.host?.lowercased() else { return false }
        return !(host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]")
    }

    // MARK: Reachability

    /// Transfer outcomes of remote feeds as evidence about the network.
    private func heard(_ event: IngestEvent) {
        guard case .feedFinished(let entry, let result) = event, Self.isPausable(entry),
              let host = FeedHost.key(of: entry.storeURL) else { return }
        let now = Date()
        let withoutNetwork: Bool?
        switch result {
        case .offline: withoutNetwork = true
        case .failed(.fetch(let error), _):
            withoutNetwork = error.kind == .dnsFailure || error.kind == .unreachable ? true : nil
            if withoutNetwork == nil, error.kind != .cancelled, error.kind != .timeout { return record(host, reached: true, now) }
        case .ok, .notModified, .rateLimited, .failed(.parse, _): withoutNetwork = false
        default: withoutNetwork = nil
        }
        guard let withoutNetwork else { return }
        record(host, reached: !withoutNetwork, now)
    }

    private func record(_ host: String, reached: Bool, _ now: Date) {
        state.withLock { state in
            if reached {
                state.reachability.transferReachedServer(host: host, at: now)
            } else {
                state.reachability.transferFailedWithoutNetwork(host: host, at: now)
            }
        }
        wake.signal()
    }

    private func startRouteMonitor() -> RouteMonitor? {
        guard configuration.monitorsRoutes else {
            state.withLock { $0.reachability.routeUnknown() }
            return nil
        }
        do {
            let monitor = try RouteMonitor { [weak self] snapshot in
                guard let self else { return }
                self.state.withLock { $0.reachability.routeChanged(hasDefaultRoute: snapshot.hasDefaultRoute, at: Date()) }
                self.wake.signal()
            }
            let snapshot = monitor.snapshot
            state.withLock { $0.reachability.routeChanged(hasDefaultRoute: snapshot.hasDefaultRoute, at: .distantPast) }
            return monitor
        } catch {
            state.withLock { $0.reachability.routeUnknown() }
            onEvent(.routeMonitorUnavailable(error.description))
            return nil
        }
    }
}
