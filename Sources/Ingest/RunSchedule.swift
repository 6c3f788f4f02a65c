import ArticleStore
import Fetch
import Foundation
import Support

/// What the workers of one run share: which feed comes next, the transfers started ahead, and the results.
///
/// ## Transfers started ahead
///
/// Workers claim feeds in list order. Each claim also starts the transfers of the following feeds, up to
/// ``IngestConfiguration/transfersAhead`` started and not yet claimed, so that slow servers overlap: a small feed is
/// usually complete in its transfer's buffer by the time a worker claims it. Such a transfer is speculative
/// (`Fetcher.start(_:speculative:)`): when its buffer fills before its feed is claimed, it is abandoned, not paused,
/// and started again at the claim (a large feed's first `maximumBufferedBytes` are fetched twice). So no transfer
/// waiting for a worker holds a connection or runs down its timeout, whatever host it was redirected to: a worker
/// never waits behind a transfer that waits for a worker. Within that, politeness and fairness:
/// - per host (name and port as listed), transfers still receiving stay below the fetcher's
///   `maximumConnectionsPerHost`, and a host's feeds start in list order;
/// - in all, transfers still receiving stay below the fetcher's `maximumConcurrentTransfers` minus one per worker,
///   so the feed a worker claims finds a free transfer slot at once.
///
/// The counts see this run's transfers only; a `Fetcher` shared with other work can delay (not deadlock) a claim.
///
/// ## Leases (with a store)
///
/// With a store, a feed is fetched only once this process holds its lease (``Leasing``): no transfer, not even one
/// started ahead, begins before. The schedule claims feeds in batches, up to one per worker plus ``IngestConfiguration/transfersAhead``
/// held and unfinished, and hands them out in the order claimed. A claim that returns nothing while feeds remain looks
/// at why: feeds another process holds, or that it fetched meanwhile (their next fetch is now ahead), are
/// ``FeedResult/claimedElsewhere`` once nothing else is left; feeds held back only by a host's limit are claimed again
/// shortly (workers wait 50 ms and ask again). A store error while claiming fails the remaining feeds with it.
final class RunSchedule: Sendable {
    /// What a worker gets from ``claim()``.
    enum Claim {
        /// A feed to ingest, its transfer (`nil` when it is not fetched) and its lease (with a store).
        case feed(Int, FetchTransfer?, FeedLease?)
        /// A feed another process holds or has fetched since the run planned it.
        case elsewhere(Int)
        /// A feed whose claim failed with a store error.
        case failed(Int, StoreError)
        /// Nothing to take now, but feeds remain: ask again shortly.
        case wait
    }

    private struct Schedule {
        /// Each feed's transfer, from its start until its worker finished it.
        var transfers: [Int: FetchTransfer] = [:]
        /// The next feed to claim; `Int.max` once cancelled.
        var next = 0
        /// Each feed's result, by list index.
        var results: [FeedResult?]
        /// With leases: feeds not needing one (deferred, failed plans), handed out first.
        var direct: [Int] = []
        /// With leases: feeds due at planning and not yet leased, in list order.
        var pending: [Int] = []
        /// With leases: feeds leased and not yet taken by a worker, in claim order.
        var ready: [Int] = []
        /// The leases held, by list index, until the feed's worker finished it.
        var leases: [Int: FeedLease] = [:]
        /// Feeds whose lease was found taken over while this run held it.
        var lost: Set<Int> = []
        /// Feeds found claimed elsewhere, to report.
        var elsewhere: [Int] = []
        /// Feeds whose claim failed, with the error, to report.
        var failures: [(Int, StoreError)] = []
        /// Set by ``stopStarting()``: no further feed is handed out, those in progress finish.
        var draining = false
    }

    private let plans: [Plan]
    private let fetcher: Fetcher
    /// Each feed's host key (`host:port`), `nil` for local files and feeds not fetched.
    private let hosts: [String?]
    private let ahead: Int
    private let perHost: Int
    private let receivingLimit: Int
    private let schedule: Lock<Schedule>
    private let leasing: Leasing?
    private let workers: Int

    init(plans: [Plan], fetcher: Fetcher, workers: Int, ahead: Int, leasing: Leasing? = nil) {
        self.plans = plans
        self.fetcher = fetcher
        self.leasing = leasing
        self.workers = workers
        hosts = plans.map { plan in
            guard plan.fetches, case .remote(let url) = plan.entry.location else { return nil }
            return FeedHost.key(of: url.absoluteString)
        }
        let limits = fetcher.configuration
        self.ahead = max(0, ahead)
        perHost = limits.maximumConnectionsPerHost > 0 ? limits.maximumConnectionsPerHost : Int.max
        receivingLimit = max(0, limits.maximumConcurrentTransfers - workers)
        var initial = Schedule(results: [FeedResult?](repeating: nil, count: plans.count))
        if leasing != nil {
            for (index, plan) in plans.enumerated() {
                if plan.fetches, plan.feed != nil { initial.pending.append(index) } else { initial.direct.append(index) }
            }
        }
        schedule = Lock(initial)
    }

    /// The next thing for a worker to do; `nil` when every feed is handed out or the run was cancelled.
    func next() -> Claim? {
        guard let leasing else {
            return claim().map { .feed($0.0, $0.1, nil) }
        }
        return schedule.withLock { state -> Claim? in
            guard state.next != Int.max, !state.draining else { return nil }
            if let (index, error) = state.failures.popLast() { return .failed(index, error) }
            if !state.direct.isEmpty { return .feed(state.direct.removeFirst(), nil, nil) }
            if !state.elsewhere.isEmpty { return .elsewhere(state.elsewhere.removeFirst()) }
            if state.ready.count < workers, !state.pending.isEmpty { refill(&state, leasing) }
            if let (index, error) = state.failures.popLast() { return .failed(index, error) }
            if state.ready.isEmpty {
                if !state.elsewhere.isEmpty { return .elsewhere(state.elsewhere.removeFirst()) }
                return state.pending.isEmpty ? nil : .wait
            }
            let index = state.ready.removeFirst()
            var transfer = state.transfers[index]
            if let started = transfer, !started.reserve() { transfer = nil }  // abandoned with a full buffer: again
            if transfer == nil {
                transfer = fetcher.start(request(index, state))
                state.transfers[index] = transfer
            }
            startAheadLeased(&state)
            return .feed(index, transfer, state.leases[index])
        }
    }

    /// The request of a leased feed: the validators read by its claim, which are the newest.
    private func request(_ index: Int, _ state: Schedule) -> FetchRequest {
        var request = plans[index].request
        if let lease = state.leases[index], case .remote = plans[index].entry.location {
            request.validators = FetchValidators(entityTag: lease.validators.etag, lastModified: lease.validators.lastModified)
        }
        return request
    }

    /// Claims more feeds: up to one per worker plus the transfers ahead, held and unfinished (at least 16 at a time, so
    /// claims stay rare), from a window of the next pending feeds in list order (at least 256), so a claim's cost does
    /// not grow with the list.
    private func refill(_ state: inout Schedule, _ leasing: Leasing) {
        let want = max(16, workers + ahead - state.leases.count)
        do throws(StoreError) {
            while !state.pending.isEmpty {
                let window = Array(state.pending.prefix(max(256, want * 4)))
                let candidates = window.compactMap { plans[$0].feed }
                let leases = try leasing.claim(candidates, limit: want)
                if !leases.isEmpty {
                    let byFeed = Dictionary(leases.map { ($0.feed, $0) }, uniquingKeysWith: { a, _ in a })
                    var remaining: [Int] = []
                    for index in state.pending {
                        if let feed = plans[index].feed, let lease = byFeed[feed] {
                            state.leases[index] = lease
                            state.ready.append(index)
                        } else {
                            remaining.append(index)
                        }
                    }
                    state.pending = remaining
                    return
                }
                guard state.ready.isEmpty else { return }
                // Nothing claimable in the window: find out why, feed by feed. Feeds held back only by a host's limit
                // (or held here) are tried again shortly; when none is, the whole window is someone else's.
                let states = try leasing.states(candidates)
                let blocked = window.contains { index in
                    guard let feed = plans[index].feed else { return false }
                    return states[feed] == .claimable || states[feed] == .leasedHere
                }
                if blocked { return }
                state.elsewhere += window
                state.pending.removeFirst(window.count)
            }
        } catch {
            state.failures += state.pending.map { ($0, error) }
            state.pending = []
        }
    }

    /// The leases this run holds for feeds not finished, for renewal.
    var heldLeases: [FeedLease] { schedule.withLock { Array($0.leases.values) } }

    /// Marks the feeds whose lease was taken over: their transfers stop, and their workers report the lease lost.
    func leasesLost(_ feeds: Set<FeedID>) {
        let transfers = schedule.withLock { state -> [FetchTransfer] in
            var stopped: [FetchTransfer] = []
            for (index, lease) in state.leases where feeds.contains(lease.feed) {
                if let position = state.ready.firstIndex(of: index) {
                    // Not handed to a worker yet: simply someone else's now.
                    state.ready.remove(at: position)
                    state.leases.removeValue(forKey: index)
                    state.elsewhere.append(index)
                } else {
                    state.lost.insert(index)
                }
                if let transfer = state.transfers.removeValue(forKey: index) { stopped.append(transfer) }
            }
            return stopped
        }
        for transfer in transfers { transfer.cancel() }
    }

    /// Whether the lease of the feed at `index` was found taken over.
    func isLost(_ index: Int) -> Bool { schedule.withLock { $0.lost.contains(index) } }

    /// Starts transfers of leased feeds not yet taken by a worker, within the limits described on the type.
    private func startAheadLeased(_ state: inout Schedule) {
        guard ahead > 0 else { return }
        var receiving = 0
        var receivingByHost: [String: Int] = [:]
        var waiting = 0
        let readySet = Set(state.ready)
        for (index, transfer) in state.transfers {
            if readySet.contains(index) { waiting += 1 }
            guard !transfer.isFinishedReceiving, let host = hosts[index] else { continue }
            receiving += 1
            receivingByHost[host, default: 0] += 1
        }
        for index in state.ready where waiting < ahead && receiving < receivingLimit {
            guard state.transfers[index] == nil, let host = hosts[index], receivingByHost[host, default: 0] < perHost else { continue }
            state.transfers[index] = fetcher.start(request(index, state), speculative: true)
            receiving += 1
            receivingByHost[host, default: 0] += 1
            waiting += 1
        }
    }

    /// Claims the next feed and its transfer (`nil` when it is not to be fetched), after starting transfers ahead;
    /// `nil` when every feed is claimed or the run was cancelled.
    func claim() -> (Int, FetchTransfer?)? {
        schedule.withLock { state -> (Int, FetchTransfer?)? in
            guard state.next < plans.count, !state.draining else { return nil }
            let index = state.next
            state.next += 1
            var transfer = state.transfers[index]
            if let started = transfer, !started.reserve() { transfer = nil }  // abandoned with a full buffer: again
            if transfer == nil, plans[index].fetches {
                transfer = fetcher.start(plans[index].request)
                state.transfers[index] = transfer
            }
            startAhead(&state)
            return (index, transfer)
        }
    }

    /// Records a feed's result and lets go of its transfer.
    func finish(_ index: Int, _ result: FeedResult) {
        schedule.withLock { state in
            state.transfers.removeValue(forKey: index)
            state.leases.removeValue(forKey: index)
            state.results[index] = result
        }
    }

    /// Each feed's result, by list index; `nil` for feeds never claimed.
    var results: [FeedResult?] { schedule.withLock { $0.results } }

    /// Hands out no further feed (feeds a worker holds go on to their end) and cancels the transfers started ahead for
    /// feeds no worker took: the first step of a graceful stop. Their leases are released when the run ends.
    func stopStarting() {
        let abandoned = schedule.withLock { state -> [FetchTransfer] in
            state.draining = true
            let waiting = leasing != nil ? Set(state.ready) : Set(state.transfers.keys.filter { $0 >= state.next })
            var stopped: [FetchTransfer] = []
            for index in waiting {
                if let transfer = state.transfers.removeValue(forKey: index) { stopped.append(transfer) }
            }
            return stopped
        }
        for transfer in abandoned { transfer.cancel() }
    }

    /// Cancels every transfer started and not yet finished, and claims nothing more.
    func cancelTransfers() {
        let started = schedule.withLock { state in
            state.next = Int.max
            return Array(state.transfers.values)
        }
        for transfer in started { transfer.cancel() }
    }

    /// Starts the transfers of the feeds after those claimed, within the limits described on the type.
    private func startAhead(_ state: inout Schedule) {
        guard ahead > 0, state.next < plans.count else { return }
        var receiving = 0
        var receivingByHost: [String: Int] = [:]
        var waiting = 0  // started ahead, not claimed
        for (index, transfer) in state.transfers {
            if index >= state.next { waiting += 1 }
            guard !transfer.isFinishedReceiving, let host = hosts[index] else { continue }
            receiving += 1
            receivingByHost[host, default: 0] += 1
        }
        var blocked: Set<String> = []
        var index = state.next
        while index < plans.count, waiting < ahead, receiving < receivingLimit {
            defer { index += 1 }
            guard let host = hosts[index], state.transfers[index] == nil, !blocked.contains(host) else { continue }
            guard receivingByHost[host, default: 0] < perHost else {
                blocked.insert(host)
                continue
            }
            state.transfers[index] = fetcher.start(plans[index].request, speculative: true)
            receiving += 1
            receivingByHost[host, default: 0] += 1
            waiting += 1
        }
    }
}
