import Fetch
import Synchronization

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
final class RunSchedule: Sendable {
    private struct Schedule {
        /// Each feed's transfer, from its start until its worker finished it.
        var transfers: [Int: FetchTransfer] = [:]
        /// The next feed to claim; `Int.max` once cancelled.
        var next = 0
        /// Each feed's result, by list index.
        var results: [FeedResult?]
    }

    private let plans: [Plan]
    private let fetcher: Fetcher
    /// Each feed's host key (`host:port`), `nil` for local files and feeds not fetched.
    private let hosts: [String?]
    private let ahead: Int
    private let perHost: Int
    private let receivingLimit: Int
    private let schedule: Mutex<Schedule>

    init(plans: [Plan], fetcher: Fetcher, workers: Int, ahead: Int) {
        self.plans = plans
        self.fetcher = fetcher
        hosts = plans.map { plan in
            guard plan.fetches, case .remote(let url) = plan.entry.location else { return nil }
            return "\(url.host?.lowercased() ?? ""):\(url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80))"
        }
        let limits = fetcher.configuration
        self.ahead = max(0, ahead)
        perHost = limits.maximumConnectionsPerHost > 0 ? limits.maximumConnectionsPerHost : Int.max
        receivingLimit = max(0, limits.maximumConcurrentTransfers - workers)
        schedule = Mutex(Schedule(results: [FeedResult?](repeating: nil, count: plans.count)))
    }

    /// Claims the next feed and its transfer (`nil` when it is not to be fetched), after starting transfers ahead;
    /// `nil` when every feed is claimed or the run was cancelled.
    func claim() -> (Int, FetchTransfer?)? {
        schedule.withLock { state -> (Int, FetchTransfer?)? in
            guard state.next < plans.count else { return nil }
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
            state.results[index] = result
        }
    }

    /// Each feed's result, by list index; `nil` for feeds never claimed.
    var results: [FeedResult?] { schedule.withLock { $0.results } }

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
