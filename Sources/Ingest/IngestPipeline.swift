import ArticleStore
import Dispatch
import Fetch
import Foundation
import Synchronization
import Syndication

/// How an ``IngestPipeline`` runs; every field has a working default.
public struct IngestConfiguration: Sendable {
    /// Worker threads, and so feeds in flight at once (each worker fetches and parses one feed at a time, and its own
    /// store thread stores that feed's articles through its own store context). Default 8.
    public var jobs: Int = 8
    /// How feeds are parsed; the response's charset is added as the hint when this sets none.
    public var parser = FeedParserConfiguration()
    /// The one serial queue observers are called on. Default: a private serial queue. Give `DispatchQueue.main`
    /// only when the main thread keeps running its queue while ``IngestPipeline/run(_:)`` blocks another thread.
    public var eventQueue = DispatchQueue(label: "feedingest.ingest.events")
    /// Fetch feeds whose next allowed fetch (stored after `Retry-After` or failures) is still ahead, instead of
    /// reporting them as ``FeedResult/deferred(until:)``. Default `false`.
    public var force = false
    /// Transfers started ahead of the workers, so that slow servers overlap: while ``jobs`` workers parse and store,
    /// up to this many further feeds are already downloading (each pauses once `FetchConfiguration.maximumBufferedBytes`
    /// wait for their worker). Those still receiving stay within the fetcher's `maximumConnectionsPerHost` per host and
    /// its `maximumConcurrentTransfers` minus one per worker (a paused transfer keeps its connection, and a worker must
    /// always find room for the feed it claims), so raise `maximumConcurrentTransfers` to `jobs + transfersAhead` for
    /// this many in flight. Default 64; 0 starts each transfer only when its worker claims the feed.
    public var transfersAhead = 64

    /// Creates the default configuration.
    public init() {}
}

/// The ingest pipeline: fetches a list of feeds concurrently, parses each as its bytes arrive, stores the articles
/// and tells observers what happened.
///
/// ## How it works
///
/// First the stored validators (`ETag`, `Last-Modified`) and next allowed fetch of every feed are read in one pass,
/// for conditional GETs. Then ``IngestConfiguration/jobs`` worker threads take the feeds in list order. For each
/// feed a worker takes its transfer from the pipeline's one `Fetcher` (whose transfer thread runs every transfer; up
/// to ``IngestConfiguration/transfersAhead`` further feeds are already downloading) and feeds the body, in order, into
/// a `FeedParser` as it arrives.
///
/// ## What runs where
///
/// - The calling thread plans (reads validators through a context of its own, dropped before the workers start),
///   waits, and settles unresolved hosts at the end.
/// - Each worker thread (`feedingest.ingest.N`) parses, and with a store owns a companion store thread
///   (`feedingest.store.N`), started with the worker and ended before ``run(_:)`` returns. The store thread owns the
///   worker's one `StoreContext`: made on that thread, used and dropped there, never touched by another; only
///   `Sendable` values cross (`Article` batches, `FeedID`, `StoredArticle`, results and `StoreError`s).
/// - The worker hands the articles it parses to its store thread in batches (64, and at the end of each body chunk)
///   through a bounded queue: room for two of the store's commit batches (`StoreConfiguration.batchSize`), so the
///   parser runs on while SQLite commits, and blocks when the store falls behind (memory stays flat however large
///   the feed). The store thread stores them, commits when due (also when the queue stays idle), and reports each
///   committed batch as ``IngestEvent/articleStored(_:)``.
/// - Beginning, finishing, failing or discarding a feed, and reading its status, are submitted to the store thread
///   behind the queued batches, and awaited; so a feed's ``IngestEvent/feedFinished(_:_:)`` follows every one of its
///   articles, committed and reported. A store error on the store thread stops that feed's transfer at its next body
///   chunk and fails that feed only; its later batches are skipped.
///
/// A successful fetch ends with `finishFeed` and the response's new validators and body hash; a 304 with
/// `finishFeed(notModified:)`; any failure (HTTP, network, parse, store) with `failFeed`, which keeps the old
/// validators and commits the articles parsed before the error. One feed's failure never touches another: each has
/// its own transfer, parser and store session.
///
/// A feed whose stored next allowed fetch (from `Retry-After`, or the backoff after consecutive failures) is still
/// ahead is not fetched but reported as ``FeedResult/deferred(until:)``, unless ``IngestConfiguration/force`` is set.
///
/// Without a store (`store: nil`) there is no store thread: articles are reported by the worker as parsed, with no
/// identifier or change, and no validators are sent.
///
/// ## Observers
///
/// See ``IngestObserver`` for the threading contract: one serial queue, one event at a time, in order; ``run(_:)``
/// returns after the last event was handled.
public final class IngestPipeline: Sendable {
    /// The store articles go into; `nil` to only parse.
    public let store: Store?
    /// The fetcher every transfer goes through.
    public let fetcher: Fetcher
    /// The configuration.
    public let configuration: IngestConfiguration
    private let observers = Mutex<[any IngestObserver]>([])
    /// Set by ``cancel()``; reset when a run starts.
    private let cancelled = Atomic<Bool>(false)
    /// The running run's shared state, for ``cancel()``.
    private let current = Mutex<RunState?>(nil)

    /// Creates a pipeline.
    public init(store: Store?, fetcher: Fetcher = Fetcher(), configuration: IngestConfiguration = IngestConfiguration()) {
        self.store = store
        self.fetcher = fetcher
        self.configuration = configuration
    }

    /// Events that may wait for the observers before whoever emits the next one waits (~4 MB of articles at most).
    static let eventsInFlight = 4096

    /// Registers an observer for the runs that start after this call.
    public func addObserver(_ observer: some IngestObserver) {
        observers.withLock { $0.append(observer) }
    }

    /// Ingests the feeds and returns the run's summary, blocking the calling thread until the run is over and every
    /// observer has handled ``IngestEvent/runFinished(_:)``.
    ///
    /// Do not call it from the event queue (it waits for that queue).
    @discardableResult
    public func run(_ entries: [FeedEntry]) -> IngestSummary {
        let started = ContinuousClock.now
        let observers = self.observers.withLock { $0 }
        let queue = configuration.eventQueue
        // At most this many events wait for the observers: a slow observer (stdout into a slow pipe) then holds up the
        // store threads and, through their bounded queues, the parsers, instead of letting events pile up in memory.
        let slots = DispatchSemaphore(value: Self.eventsInFlight)
        let emit: @Sendable (IngestEvent) -> Void = { event in
            slots.wait()
            queue.async {
                for observer in observers { observer.ingest(event) }
                slots.signal()
            }
        }
        cancelled.store(false, ordering: .sequentiallyConsistent)  // before planning, so a cancel() during it counts
        emit(.runStarted(feeds: entries.count))
        let plans = plan(entries)
        let workers = max(1, min(configuration.jobs, entries.count))
        let state = RunState(plans: plans, fetcher: fetcher, workers: workers, ahead: configuration.transfersAhead)
        current.withLock { $0 = state }
        if isCancelled { state.cancelTransfers() }  // cancelled while planning: claim nothing
        let group = DispatchGroup()
        for number in 0..<workers where !entries.isEmpty {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                let worker = Worker(pipeline: self, number: number, emit: emit)
                defer { worker.stop() }
                while !isCancelled, let (index, transfer) = state.claim() {
                    if isCancelled { transfer?.cancel() }  // cancelled between the check and the claim
                    let result = worker.ingest(plans[index], transfer: transfer)
                    state.finish(index, result)
                }
            }
            thread.name = "feedingest.ingest.\(number)"
            thread.start()
        }
        group.wait()
        let results = settleUnresolvedHosts(state.results, plans: plans, emit: emit)
        var summary = IngestSummary()
        summary.feeds = entries.count
        for result in results {
            summary.add(result ?? .cancelled)
        }
        let elapsed = ContinuousClock.now - started
        summary.duration = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        current.withLock { $0 = nil }
        emit(.runFinished(summary))
        queue.sync {}  // every event handled
        return summary
    }

    /// Decides what the feeds whose host did not resolve are: when no remote feed got an answer, the network is down
    /// and they stay ``FeedResult/offline(reason:)`` (the store untouched, so no failure is counted); otherwise
    /// each is a failure, recorded in the store now. Reports each with ``IngestEvent/feedFinished(_:_:)``.
    private func settleUnresolvedHosts(_ results: [FeedResult?], plans: [Plan], emit: @Sendable (IngestEvent) -> Void) -> [FeedResult?] {
        var results = results
        let unresolved = results.indices.filter { if case .offline? = results[$0] { return true } else { return false } }
        guard !unresolved.isEmpty else { return results }
        let answered = results.indices.contains { index in
            guard case .remote = plans[index].entry.location else { return false }
            switch results[index] {
            case .ok?, .notModified?, .rateLimited?: return true
            case .failed?: return true  // an HTTP error, a broken body or a timeout: the network reached somewhere
            default: return false
            }
        }
        if answered {
            let context = try? store?.makeContext()
            for index in unresolved {
                guard case .offline(let reason)? = results[index] else { continue }
                results[index] = .failed(reason: reason, counts: FeedCounts())
                if let context, let feed = plans[index].feed {
                    do {
                        try context.beginFeed(feed)
                        _ = try context.failFeed(feed, FeedFailure(error: reason))
                    } catch {
                        context.discardFeed(feed)
                    }
                }
            }
        }
        for index in unresolved { emit(.feedFinished(plans[index].entry, results[index]!)) }
        return results
    }

    /// Stops the running run, from any thread (a signal handler's queue, say): no further feed starts, transfers in
    /// progress are aborted, and their feeds are left as they were before the run — their validators untouched and
    /// their uncommitted articles dropped (pending in the context or still queued for the store thread) — so the next
    /// run fetches them again and dedupe adds nothing twice.
    /// Articles already reported stay committed. Such feeds, and those never started, end as
    /// ``FeedResult/cancelled``; ``run(_:)`` then returns as usual, after ``IngestEvent/runFinished(_:)``.
    public func cancel() {
        cancelled.store(true, ordering: .sequentiallyConsistent)
        current.withLock { $0 }?.cancelTransfers()
    }

    /// Whether ``cancel()`` was called during the current run.
    public var isCancelled: Bool { cancelled.load(ordering: .sequentiallyConsistent) }

    /// Reads every feed's validators and next allowed fetch in one pass (through a context of the calling thread,
    /// dropped afterwards), so transfers can start before a worker takes their feed.
    private func plan(_ entries: [FeedEntry]) -> [Plan] {
        var plans = entries.map { entry in
            Plan(entry: entry, request: Self.request(entry, validators: .none), feed: nil, deferredUntil: nil, failure: nil)
        }
        guard let store, !entries.isEmpty else { return plans }
        do {
            let context = try store.makeContext()
            let ids = try context.feeds(urls: entries.map(\.storeURL))
            try context.setTags(zip(ids, entries).map { ($0, $1.tags) })
            for index in plans.indices {
                let status = try context.feedStatus(ids[index])
                plans[index].feed = ids[index]
                plans[index].request = Self.request(entries[index], validators: FetchValidators(
                    entityTag: status.validators.etag, lastModified: status.validators.lastModified))
                if !configuration.force, let next = status.nextFetch, next > Date() { plans[index].deferredUntil = next }
            }
        } catch {
            for index in plans.indices { plans[index].failure = "store: \(error)" }
        }
        return plans
    }

    private static func request(_ entry: FeedEntry, validators: FetchValidators) -> FetchRequest {
        switch entry.location {
        case .remote(let url): return FetchRequest(url: url, validators: validators)
        case .local(let path): return .localFile(path)
        }
    }
}

/// One feed of a run, as planned before the workers start.
struct Plan: Sendable {
    var entry: FeedEntry
    /// The request, with the stored validators.
    var request: FetchRequest
    /// The feed's row; `nil` without a store.
    var feed: FeedID?
    /// Set when the feed's next allowed fetch is ahead (and the run is not forced).
    var deferredUntil: Date?
    /// Set when the store could not be read; the feed fails with it.
    var failure: String?

    /// Whether the feed is to be fetched.
    var fetches: Bool { deferredUntil == nil && failure == nil }
}

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
private final class RunState: Sendable {
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

/// One worker thread's state: its store thread (which owns the worker's store context). Confined to its thread.
private final class Worker {
    let pipeline: IngestPipeline
    let emit: @Sendable (IngestEvent) -> Void
    /// The worker's own store thread, with its store connection; `nil` without a store.
    let storeThread: StoreThread?
    /// Why the context could not be made; every feed of this worker then fails with it.
    let contextError: StoreError?

    init(pipeline: IngestPipeline, number: Int, emit: @escaping @Sendable (IngestEvent) -> Void) {
        self.pipeline = pipeline
        self.emit = emit
        var storeThread: StoreThread?
        var contextError: StoreError?
        if let store = pipeline.store {
            do { storeThread = try StoreThread.start(store: store, name: "feedingest.store.\(number)", emit: emit) } catch { contextError = error }
        }
        self.storeThread = storeThread
        self.contextError = contextError
    }

    /// Ends the store thread, once the worker is done.
    func stop() {
        storeThread?.stop()
    }

    func ingest(_ plan: Plan, transfer: FetchTransfer?) -> FeedResult {
        emit(.feedStarted(plan.entry))
        let result = fetchAndStore(plan, transfer: transfer)
        if case .offline = result { return result }  // reported by the run once it knows whether the network is down
        emit(.feedFinished(plan.entry, result))
        return result
    }

    private func fetchAndStore(_ plan: Plan, transfer: FetchTransfer?) -> FeedResult {
        let entry = plan.entry
        var failure = plan.failure ?? contextError.map { "store: \($0)" }
        var session: StoreSession?
        if failure == nil, plan.deferredUntil == nil, let storeThread, let id = plan.feed {
            do {
                _ = try storeThread.perform { context throws(StoreError) in try context.beginFeed(id) }
                session = StoreSession(entry: entry, feed: id)
            } catch {
                failure = "store: \(error)"
            }
        }
        if failure != nil || plan.deferredUntil != nil {
            transfer?.cancel()  // started ahead, not wanted after all
            if let transfer { _ = transfer.deliver(to: DiscardingConsumer()) }
            if let failure { return .failed(reason: failure, counts: FeedCounts()) }
            if let until = plan.deferredUntil { return .deferred(until: until) }
        }
        let consumer = IngestConsumer(entry: entry, configuration: pipeline.configuration.parser, storeThread: storeThread,
                                      session: session, emit: emit)
        guard let transfer else {
            discard(session)
            return .cancelled
        }
        let fetched = transfer.deliver(to: consumer)
        consumer.flush()  // the articles parsed before an error, for failFeed to commit
        if pipeline.isCancelled, case .failed(let error) = fetched.outcome, error.kind == .cancelled {
            discard(session)  // as if never started: the next run fetches it again
            return .cancelled
        }

        guard let storeThread, let session else {
            // No store: articles were reported as parsed.
            let counts = FeedCounts(seen: consumer.parsed, bytes: fetched.bodyBytes)
            switch fetched.outcome {
            case .ok: return .ok(counts)
            case .notModified: return .notModified
            case .failed(let error):
                if Self.isNoRoute(error), consumer.parsed == 0 { return .offline(reason: Self.reason(error)) }
                if case .rateLimited(let after) = error.kind { return .rateLimited(until: after.map { Date().addingTimeInterval($0.delay()) }) }
                return .failed(reason: consumer.failureReason ?? Self.reason(error), counts: counts)
            }
        }
        do {
            switch fetched.outcome {
            case .ok:
                let success = FeedSuccess(
                    validators: FeedValidators(etag: fetched.response?.entityTag, lastModified: fetched.response?.lastModified,
                                               bodyHash: fetched.bodySHA256?.hex),
                    currentURL: fetched.isPermanentlyRedirected ? fetched.finalURL?.absoluteString : nil,
                    metadata: consumer.parser?.summary.metadata)
                let summary = try storeThread.perform { context throws(StoreError) in
                    if let error = session.error { throw error }  // a batch was not stored: the feed is incomplete
                    return try context.finishFeed(session.feed, success)
                }
                report(summary.committed, entry)
                return .ok(Self.counts(summary, bytes: fetched.bodyBytes))
            case .notModified:
                let response = fetched.response
                let success = FeedSuccess(validators: FeedValidators(etag: response?.entityTag, lastModified: response?.lastModified),
                                          notModified: true)
                _ = try storeThread.perform { context throws(StoreError) in try context.finishFeed(session.feed, success) }
                return .notModified
            case .failed(let error):
                let reason = consumer.failureReason ?? Self.reason(error)
                if Self.isNoRoute(error), consumer.parsed == 0 {
                    // Provisional: whether the network is down is known only when every feed is done.
                    discard(session)
                    return .offline(reason: reason)
                }
                var retryAfter: Date?
                switch error.kind {
                case .rateLimited(let after?), .serviceUnavailable(let after?): retryAfter = Date().addingTimeInterval(after.delay())
                default: break
                }
                if case .rateLimited = error.kind {
                    // The server asks us to come back later: the feed is not broken, so no failure is counted.
                    let failure = FeedFailure(error: reason, retryAfter: retryAfter, counts: false)
                    let summary = try storeThread.perform { context throws(StoreError) in try context.failFeed(session.feed, failure) }
                    report(summary.committed, entry)
                    // Recorded already: a failed read of the next fetch time must not turn it into a failure.
                    let nextFetch = try? storeThread.perform { context throws(StoreError) in
                        try context.feedStatus(session.feed).nextFetch
                    }
                    return .rateLimited(until: nextFetch)
                }
                let failure = FeedFailure(error: reason, retryAfter: retryAfter)
                let summary = try storeThread.perform { context throws(StoreError) in try context.failFeed(session.feed, failure) }
                report(summary.committed, entry)
                return .failed(reason: reason, counts: Self.counts(summary, bytes: fetched.bodyBytes))
            }
        } catch {
            // The final transaction failed: record the failure if the store lets us, else forget the session.
            let reason = "store: \(error)"
            let failure = FeedFailure(error: reason)
            if let summary = try? storeThread.perform({ context throws(StoreError) in try context.failFeed(session.feed, failure) }) {
                report(summary.committed, entry)
                return .failed(reason: reason, counts: Self.counts(summary, bytes: fetched.bodyBytes))
            }
            discard(session)
            return .failed(reason: reason, counts: FeedCounts(bytes: fetched.bodyBytes))
        }
    }

    /// Forgets a started feed and its uncommitted articles (those still queued for the store thread are skipped).
    private func discard(_ session: StoreSession?) {
        guard let session, let storeThread else { return }
        session.drop()
        _ = try? storeThread.perform { context throws(StoreError) in context.discardFeed(session.feed) }
    }

    private func report(_ committed: [StoredArticle], _ entry: FeedEntry) {
        for stored in committed {
            emit(.articleStored(IngestedArticle(entry: entry, article: stored.article, id: stored.id, change: stored.change)))
        }
    }

    /// Whether the failure says the machine has no network (no name resolution, no route), rather than that this
    /// feed's server is broken. Whether the whole network is down is decided once every feed is done.
    static func isNoRoute(_ error: FetchError) -> Bool {
        error.kind == .dnsFailure || error.kind == .unreachable
    }

    /// The fetch error for people, without the URL (the feed is named by whoever reports it).
    static func reason(_ error: FetchError) -> String {
        var text = error.message
        if let curlCode = error.curlCode { text += " [CURLcode \(curlCode.rawValue)]" }
        return text
    }

    private static func counts(_ summary: FeedIngestSummary, bytes: Int64 = 0) -> FeedCounts {
        FeedCounts(seen: summary.seen, new: summary.new, updated: summary.updated, unchanged: summary.unchanged, bytes: bytes)
    }
}

/// Feeds one fetch's body into a FeedParser (made when the response arrives, with its charset and final URL) and
/// hands the parsed articles, in batches, to the worker's store thread. Confined to the worker thread.
private final class IngestConsumer: FetchConsumer {
    let entry: FeedEntry
    let configuration: FeedParserConfiguration
    let storeThread: StoreThread?
    /// The feed's store session; `nil` without a store.
    let session: StoreSession?
    let emit: @Sendable (IngestEvent) -> Void
    private(set) var parser: FeedParser?
    /// Articles parsed so far.
    private(set) var parsed = 0
    /// Articles parsed and not yet handed to the store thread.
    private var batch: [Article] = []
    /// The first store error seen; the transfer stops with it.
    private var storeError: StoreError?
    /// The parse error, when the parser stopped.
    private var parseError: FeedError?
    /// Whether ``IngestEvent/firstElement(_:_:)`` went out.
    private var reportedFirstElement = false

    init(entry: FeedEntry, configuration: FeedParserConfiguration, storeThread: StoreThread?, session: StoreSession?,
         emit: @escaping @Sendable (IngestEvent) -> Void) {
        self.entry = entry
        self.configuration = configuration
        self.storeThread = storeThread
        self.session = session
        self.emit = emit
    }

    /// Why the transfer stopped, when this consumer stopped it (a parse or store error).
    var failureReason: String? {
        if let storeError { return "store: \(storeError)" }
        if let parseError {
            return parseError.line > 0 ? "line \(parseError.line), column \(parseError.column): \(parseError.message)" : parseError.message
        }
        return nil
    }

    func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        var configuration = self.configuration
        if configuration.xml.charsetHint == nil { configuration.xml.charsetHint = response.charset }
        let baseURL = response.url.isFileURL ? nil : response.url.absoluteString
        parser = FeedParser(source: entry.source, baseURL: baseURL, configuration: configuration) { [unowned self] article, _ in
            self.accept(article)
        }
    }

    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        if parser == nil { try fetchDidReceiveResponse(FetchResponse(status: 200, headers: HTTPHeaders(), url: URL(fileURLWithPath: entry.source))) }
        do { try parser?.parse(bytes) } catch {
            parseError = error
            noteFirstElement()  // a root recognised before the error still counts
            throw error
        }
        noteFirstElement()
        flush()
        try checkStore()
    }

    func fetchDidFinish() throws {
        if parser == nil { try fetchDidReceiveResponse(FetchResponse(status: 200, headers: HTTPHeaders(), url: URL(fileURLWithPath: entry.source))) }
        do { try parser?.finish() } catch {
            parseError = error
            noteFirstElement()
            throw error
        }
        noteFirstElement()
        flush()
        if let storeThread, session != nil {
            // Wait for the store thread to store every batch, so a store error fails the transfer as it did mid-body.
            try storeThread.perform { _ throws(StoreError) in }
        }
        try checkStore()
    }

    /// Hands the articles parsed since the last batch to the store thread (blocking while its queue is full).
    func flush() {
        guard !batch.isEmpty, let storeThread, let session else { return }
        if storeError == nil && session.error == nil { storeThread.store(batch, in: session) }
        batch.removeAll(keepingCapacity: true)
    }

    /// Throws the first error the store thread met storing this feed's batches, stopping the transfer.
    private func checkStore() throws {
        if storeError == nil { storeError = session?.error }
        if let storeError { throw storeError }
    }

    /// Reports ``IngestEvent/firstElement(_:_:)`` once the parser has recognised the root element.
    private func noteFirstElement() {
        guard !reportedFirstElement, let format = parser?.format else { return }
        reportedFirstElement = true
        emit(.firstElement(entry, format))
    }

    private func accept(_ article: Article) {
        noteFirstElement()
        parsed += 1
        guard session != nil else {
            emit(.articleStored(IngestedArticle(entry: entry, article: article, id: nil, change: nil)))
            return
        }
        if batch.isEmpty { batch.reserveCapacity(StoreThread.batchSize) }
        batch.append(article)
        if batch.count >= StoreThread.batchSize { flush() }
    }
}
