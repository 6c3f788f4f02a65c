import ArticleStore
import Dispatch
import Fetch
import Foundation
import Synchronization
import Syndication

/// How an ``IngestPipeline`` runs; every field has a working default.
public struct IngestConfiguration: Sendable {
    /// Worker threads, and so feeds in flight at once (each worker fetches, parses and stores one feed at a time,
    /// through its own store context). Default 8.
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
    /// up to this many further feeds are already downloading (each pauses once
    /// `FetchConfiguration.maximumBufferedBytes` wait for their worker). Capped so that ``jobs`` plus this stays
    /// within the fetcher's `maximumConnectionsPerHost` and `maximumConcurrentTransfers` (a paused transfer keeps
    /// its connection). Default 64, so the cap decides; 0 starts each transfer only when its worker takes the feed.
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
/// for conditional GETs. Then ``IngestConfiguration/jobs`` worker threads take the feeds in list order. Each worker
/// owns one `StoreContext` (made on that thread, never shared; only `FeedID`, `ArticleID` and `Article` values leave
/// it) and, for each feed, takes its transfer from the pipeline's one `Fetcher` (whose transfer thread runs every
/// transfer; up to ``IngestConfiguration/transfersAhead`` further feeds are already downloading) and feeds the body,
/// in order, into a `FeedParser` as it arrives. Articles go into the context as they are parsed; the batches it commits are reported
/// as ``IngestEvent/articleStored(_:)``. A successful fetch ends with `finishFeed` and the response's new validators
/// and body hash; a 304 with `finishFeed(notModified:)`; any failure (HTTP, network, parse, store) with `failFeed`,
/// which keeps the old validators and the articles parsed before the error. One feed's failure never touches another:
/// each has its own transfer, parser and store session.
///
/// A feed whose stored next allowed fetch (from `Retry-After`, or the backoff after consecutive failures) is still
/// ahead is not fetched but reported as ``FeedResult/deferred(until:)``, unless ``IngestConfiguration/force`` is set.
///
/// Without a store (`store: nil`) articles are reported as parsed, with no identifier or change, and no validators
/// are sent.
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
        let emit: @Sendable (IngestEvent) -> Void = { event in
            queue.async { for observer in observers { observer.ingest(event) } }
        }
        emit(.runStarted(feeds: entries.count))
        let plans = plan(entries)
        let state = RunState(count: entries.count)
        cancelled.store(false, ordering: .sequentiallyConsistent)
        current.withLock { $0 = state }
        let ahead = effectiveTransfersAhead
        let group = DispatchGroup()
        let workers = max(1, min(configuration.jobs, entries.count))
        for number in 0..<workers where !entries.isEmpty {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                let worker = Worker(pipeline: self, emit: emit)
                while true {
                    let index = state.next.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard index < entries.count, !isCancelled else { break }
                    let transfer = state.transfer(for: index, plans: plans, fetcher: fetcher, ahead: ahead)
                    if let transfer { state.delivering.withLock { $0[index] = transfer } }
                    if isCancelled { transfer?.cancel() }  // cancelled between taking the index and registering
                    let result = worker.ingest(plans[index], transfer: transfer)
                    state.delivering.withLock { _ = $0.removeValue(forKey: index) }
                    state.results.withLock { $0[index] = result }
                }
            }
            thread.name = "feedingest.ingest.\(number)"
            thread.start()
        }
        group.wait()
        let results = settleUnresolvedHosts(state.results.withLock { $0 }, plans: plans, emit: emit)
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
            case .ok?, .notModified?: return true
            case .failed?: return true  // an HTTP error or a broken body is an answer too
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

    /// ``IngestConfiguration/transfersAhead``, capped so that workers and transfers started ahead together never
    /// exceed the fetcher's connections per host or concurrent transfers. A transfer started ahead pauses holding its
    /// connection; were there more of them than connections, the feed a worker waits for could queue behind them
    /// until its timeout (a deadlock broken only by timeouts, seen with 30 feeds on one host).
    var effectiveTransfersAhead: Int {
        let limits = fetcher.configuration
        let room = min(limits.maximumConnectionsPerHost, limits.maximumConcurrentTransfers) - max(1, configuration.jobs)
        return max(0, min(configuration.transfersAhead, room))
    }

    /// Stops the running run, from any thread (a signal handler's queue, say): no further feed starts, transfers in
    /// progress are aborted, and their feeds are left as they were before the run — their validators untouched and
    /// their uncommitted articles dropped — so the next run fetches them again and dedupe adds nothing twice.
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

/// What the workers of one run share.
private final class RunState: Sendable {
    /// The index of the next feed to take.
    let next = Atomic<Int>(0)
    /// Each feed's result, by list index.
    let results: Mutex<[FeedResult?]>

    /// Transfers started ahead, by list index, and the index of the next feed to start.
    let transfers = Mutex<(next: Int, started: [Int: FetchTransfer])>((0, [:]))
    /// Transfers being delivered, by list index.
    let delivering = Mutex<[Int: FetchTransfer]>([:])

    /// Cancels every transfer started and not yet finished.
    func cancelTransfers() {
        let started = transfers.withLock { state in
            state.next = Int.max  // start nothing more
            return Array(state.started.values)
        }
        for transfer in started + delivering.withLock({ Array($0.values) }) { transfer.cancel() }
    }

    init(count: Int) {
        results = Mutex([FeedResult?](repeating: nil, count: count))
    }

    /// The transfer of feed `index` (started now if it was not yet), after starting those up to `ahead` feeds
    /// further; `nil` when the feed is not to be fetched.
    func transfer(for index: Int, plans: [Plan], fetcher: Fetcher, ahead: Int) -> FetchTransfer? {
        transfers.withLock { state in
            while state.next < plans.count, state.next <= index + ahead, state.next != Int.max {
                if plans[state.next].fetches { state.started[state.next] = fetcher.start(plans[state.next].request) }
                state.next += 1
            }
            if let transfer = state.started.removeValue(forKey: index) { return transfer }
            guard state.next != Int.max, plans[index].fetches else { return nil }
            return fetcher.start(plans[index].request)
        }
    }
}

/// One worker thread's state: its store context. Confined to its thread.
private final class Worker {
    let pipeline: IngestPipeline
    let emit: @Sendable (IngestEvent) -> Void
    /// The worker's own store connection; `nil` without a store.
    let context: StoreContext?
    /// Why the context could not be made; every feed of this worker then fails with it.
    let contextError: StoreError?

    init(pipeline: IngestPipeline, emit: @escaping @Sendable (IngestEvent) -> Void) {
        self.pipeline = pipeline
        self.emit = emit
        var context: StoreContext?
        var contextError: StoreError?
        if let store = pipeline.store {
            do { context = try store.makeContext() } catch { contextError = error }
        }
        self.context = context
        self.contextError = contextError
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
        var feed: FeedID?
        if failure == nil, plan.deferredUntil == nil, let context, let id = plan.feed {
            do {
                try context.beginFeed(id)
                feed = id
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
        let consumer = IngestConsumer(entry: entry, configuration: pipeline.configuration.parser, context: context, feed: feed,
                                      emit: emit)
        guard let transfer else {
            if let feed { context?.discardFeed(feed) }
            return .cancelled
        }
        let fetched = transfer.deliver(to: consumer)
        if pipeline.isCancelled, case .failed(let error) = fetched.outcome, error.kind == .cancelled {
            if let feed { context?.discardFeed(feed) }  // as if never started: the next run fetches it again
            return .cancelled
        }

        guard let context, let feed else {
            // No store: articles were reported as parsed.
            let counts = FeedCounts(seen: consumer.parsed)
            switch fetched.outcome {
            case .ok: return .ok(counts)
            case .notModified: return .notModified
            case .failed(let error):
                if error.kind == .dnsFailure, consumer.parsed == 0 { return .offline(reason: Self.reason(error)) }
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
                let summary = try context.finishFeed(feed, success)
                report(summary.committed, entry)
                return .ok(Self.counts(summary))
            case .notModified:
                let response = fetched.response
                let success = FeedSuccess(validators: FeedValidators(etag: response?.entityTag, lastModified: response?.lastModified),
                                          notModified: true)
                _ = try context.finishFeed(feed, success)
                return .notModified
            case .failed(let error):
                let reason = consumer.failureReason ?? Self.reason(error)
                if error.kind == .dnsFailure, consumer.parsed == 0 {
                    // Provisional: whether the network is down is known only when every feed is done.
                    context.discardFeed(feed)
                    return .offline(reason: reason)
                }
                var retryAfter: Date?
                switch error.kind {
                case .rateLimited(let after?), .serviceUnavailable(let after?): retryAfter = Date().addingTimeInterval(after.delay())
                default: break
                }
                let summary = try context.failFeed(feed, FeedFailure(error: reason, retryAfter: retryAfter))
                report(summary.committed, entry)
                return .failed(reason: reason, counts: Self.counts(summary))
            }
        } catch {
            // The final transaction failed: record the failure if the store lets us, else forget the session.
            let reason = "store: \(error)"
            if let summary = try? context.failFeed(feed, FeedFailure(error: reason)) {
                report(summary.committed, entry)
                return .failed(reason: reason, counts: Self.counts(summary))
            }
            context.discardFeed(feed)
            return .failed(reason: reason, counts: FeedCounts())
        }
    }

    private func report(_ committed: [StoredArticle], _ entry: FeedEntry) {
        for stored in committed {
            emit(.articleStored(IngestedArticle(entry: entry, article: stored.article, id: stored.id, change: stored.change)))
        }
    }

    /// The fetch error for people, without the URL (the feed is named by whoever reports it).
    static func reason(_ error: FetchError) -> String {
        var text = error.message
        if let curlCode = error.curlCode { text += " [CURLcode \(curlCode.rawValue)]" }
        return text
    }

    private static func counts(_ summary: FeedIngestSummary) -> FeedCounts {
        FeedCounts(seen: summary.seen, new: summary.new, updated: summary.updated, unchanged: summary.unchanged)
    }
}

/// Feeds one fetch's body into a FeedParser (made when the response arrives, with its charset and final URL) and
/// the parsed articles into the worker's store context. Confined to the worker thread.
private final class IngestConsumer: FetchConsumer {
    let entry: FeedEntry
    let configuration: FeedParserConfiguration
    let context: StoreContext?
    let feed: FeedID?
    let emit: @Sendable (IngestEvent) -> Void
    private(set) var parser: FeedParser?
    /// Articles parsed so far.
    private(set) var parsed = 0
    /// The first store error; the transfer stops with it.
    private var storeError: StoreError?
    /// The parse error, when the parser stopped.
    private var parseError: FeedError?

    init(entry: FeedEntry, configuration: FeedParserConfiguration, context: StoreContext?, feed: FeedID?,
         emit: @escaping @Sendable (IngestEvent) -> Void) {
        self.entry = entry
        self.configuration = configuration
        self.context = context
        self.feed = feed
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
            throw error
        }
        if let storeError { throw storeError }
        if let context {
            do { report(try context.commitIfDue()) } catch {
                storeError = error
                throw error
            }
        }
    }

    func fetchDidFinish() throws {
        if parser == nil { try fetchDidReceiveResponse(FetchResponse(status: 200, headers: HTTPHeaders(), url: URL(fileURLWithPath: entry.source))) }
        do { try parser?.finish() } catch {
            parseError = error
            throw error
        }
        if let storeError { throw storeError }
    }

    private func accept(_ article: Article) {
        parsed += 1
        guard let context, let feed else {
            emit(.articleStored(IngestedArticle(entry: entry, article: article, id: nil, change: nil)))
            return
        }
        guard storeError == nil else { return }
        do { report(try context.store(article, in: feed)) } catch { storeError = error }
    }

    private func report(_ committed: [StoredArticle]) {
        for stored in committed {
            emit(.articleStored(IngestedArticle(entry: entry, article: stored.article, id: stored.id, change: stored.change)))
        }
    }
}
