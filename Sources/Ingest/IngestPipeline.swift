import ArticleStore
import Dispatch
import Fetch
import Foundation
import Support
import Synchronization
import Syndication

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
///   through a bounded queue: room for two of the store's commit batches (`StoreConfiguration.commitBatchSize`), so the
///   parser runs on while SQLite commits, and blocks when the store falls behind (memory stays flat however large
///   the feed). The store thread stores them, commits when due (also when the queue stays idle), and reports each
///   committed batch as ``IngestEvent/articleIngested(_:)``.
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
/// A feed that is not due under ``IngestConfiguration/due`` (its stored next allowed fetch, from `Retry-After`, the
/// backoff after consecutive failures, or the interval a fetch recorded, is still ahead and the policy keeps it) is not
/// fetched but reported as ``FeedResult/deferred(until:)``.
///
/// ## Leases
///
/// With a store (and ``IngestConfiguration/usesLeases``), a feed is fetched only under a lease the run claimed first,
/// so processes sharing a store never fetch one feed at once: a lease thread (`feedingest.leases`, with a store context
/// of its own) claims feeds in batches before their transfers start, a renewal thread (`feedingest.renew`) extends the
/// leases held every third of ``IngestConfiguration/leaseDuration``, each feed is begun with its lease (its writes are
/// checked against the lease's epoch), and every lease still held is released when the run ends. A feed another
/// process holds, or fetched since the run planned it, is ``FeedResult/claimedElsewhere``; a feed whose lease was taken
/// over while this process held it is ``FeedResult/leaseLost(_:)`` (nothing of it written after the takeover).
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
    private let observers = Lock<[any IngestObserver]>([])
    /// Set by ``cancel()``; reset when a run starts.
    private let cancelled = Atomic<Bool>(false)
    /// Set by ``stopStarting()``; never reset (a pipeline stopped gently starts nothing more).
    private let draining = Atomic<Bool>(false)
    /// The running run's shared state, for ``cancel()``.
    private let current = Lock<RunSchedule?>(nil)

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
                for observer in observers {
                    observer.ingest(event)
                    observer.ingestBatchFinished()
                }
                slots.signal()
            }
        }
        // A commit's articles go to the queue in one block: a block per article was an allocation, a hand-off and often a
        // wake-up of the queue's thread each (issue 18). Each event still takes its own slot. A block's slots are taken
        // by one emitter at a time, and a block has at most all the slots: two store threads each holding part of the
        // slots they need, or one needing more than there are, would wait for ever (nothing queued would free them).
        let acquiring = DispatchSemaphore(value: 1)
        let emitAll: @Sendable ([IngestEvent]) -> Void = { events in
            var start = 0
            while start < events.count {
                let block = Array(events[start..<min(events.count, start + Self.eventsInFlight)])
                start += block.count
                acquiring.wait()
                for _ in block { slots.wait() }
                acquiring.signal()
                queue.async {
                    for event in block {
                        for observer in observers { observer.ingest(event) }
                        slots.signal()
                    }
                    for observer in observers { observer.ingestBatchFinished() }
                }
            }
        }
        cancelled.store(false, ordering: .sequentiallyConsistent)  // before planning, so a cancel() during it counts
        emit(.runStarted(feeds: entries.count))
        let (plansRead, planning) = plan(entries)
        var planned = plansRead
        let workers = max(1, min(configuration.jobs, entries.count))
        var leasing: Leasing?
        if let store, configuration.usesLeases, planned.contains(where: { $0.fetches && $0.feed != nil }) {
            let timeout = fetcher.configuration.totalTimeout
            do {
                leasing = try Leasing(store: store, duration: configuration.leaseDuration ?? timeout * 2,
                                      perHostLimit: fetcher.configuration.maximumConnectionsPerHost,
                                      due: configuration.due)
            } catch {
                for index in planned.indices { planned[index].failure = error }
            }
        }
        let plans = planned
        let state = RunSchedule(plans: plans, fetcher: fetcher, workers: workers, ahead: configuration.transfersAhead, leasing: leasing)
        leasing?.startRenewing(state)
        current.withLock { $0 = state }
        if isCancelled { state.cancelTransfers() }  // cancelled while planning: claim nothing
        if isStopping { state.stopStarting() }
        let group = DispatchGroup()
        for number in 0..<workers where !entries.isEmpty {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                let worker = Worker(pipeline: self, number: number, emit: emit, emitAll: emitAll)
                defer { worker.stop() }
                while !isCancelled, !isStopping, let claim = state.next() {
                    switch claim {
                    case .wait:
                        Thread.sleep(forTimeInterval: 0.05)
                    case .elsewhere(let index):
                        emit(.feedFinished(plans[index].entry, .claimedElsewhere))
                        state.finish(index, .claimedElsewhere)
                    case .failed(let index, let error):
                        let result = FeedResult.failed(.store(error), counts: FeedCounts())
                        emit(.feedFinished(plans[index].entry, result))
                        state.finish(index, result)
                    case .feed(let index, let transfer, let lease):
                        if isCancelled { transfer?.cancel() }  // cancelled between the check and the claim
                        let result = worker.ingest(plans[index], transfer: transfer, lease: lease,
                                                   lost: { state.isLost(index) })
                        state.finish(index, result)
                    }
                }
            }
            thread.name = "feedingest.ingest.\(number)"
            thread.start()
        }
        group.wait()
        let results = settleUnresolvedHosts(state.results, plans: plans, planning: planning, emit: emit)
        // The planning context (SQLite only, see `plan`) closes only now that the workers' contexts have: the last
        // connection to an SQLite store to close checkpoints the log, syncs and removes it, and the next one to open
        // makes it again. Closed right after planning, it was that last connection, before any worker had opened one.
        withExtendedLifetime(planning) {}
        leasing?.finish()
        var summary = IngestSummary()
        summary.feeds = entries.count
        for result in results {
            summary.add(result ?? .cancelled)
        }
        let elapsed = ContinuousClock.now - started
        summary.duration = elapsed.seconds
        current.withLock { $0 = nil }
        emit(.runFinished(summary))
        queue.sync {}  // every event handled
        return summary
    }

    /// Decides what the feeds whose host did not resolve are: when no remote feed got an answer, the network is down
    /// and they stay ``FeedResult/offline(reason:)`` (the store untouched, so no failure is counted); otherwise
    /// each is a failure, recorded in the store now. Reports each with ``IngestEvent/feedFinished(_:_:)``.
    private func settleUnresolvedHosts(_ results: [FeedResult?], plans: [Plan], planning: StoreContext?,
                                       emit: @Sendable (IngestEvent) -> Void) -> [FeedResult?] {
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
            let context = planning ?? (try? store?.makeContext())  // the planning context, on this same thread
            for index in unresolved {
                guard case .offline(let error)? = results[index] else { continue }
                let failure = IngestError.fetch(error)
                results[index] = .failed(failure, counts: FeedCounts())
                if let context, let feed = plans[index].feed {
                    do {
                        try context.beginFeed(feed)
                        _ = try context.failFeed(feed, FeedFailure(failure))
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

    /// Stops the running run gently, from any thread: no further feed starts (transfers started ahead for feeds no
    /// worker took are cancelled and their leases released), while the feeds workers hold go on to their end and are
    /// committed as usual; ``run(_:)`` returns once they are done. Feeds never started end as ``FeedResult/cancelled``.
    /// Call ``cancel()`` afterwards to abort what is still running (a grace period ran out). It lasts: called before a
    /// run starts, that run and later ones start no feed.
    public func stopStarting() {
        draining.store(true, ordering: .sequentiallyConsistent)
        current.withLock { $0 }?.stopStarting()
    }

    /// Whether ``stopStarting()`` was called.
    public var isStopping: Bool { draining.load(ordering: .sequentiallyConsistent) }

    /// Whether ``cancel()`` was called during the current run.
    public var isCancelled: Bool { cancelled.load(ordering: .sequentiallyConsistent) }

    /// Reads every feed's validators and next allowed fetch in one pass, so transfers can start before a worker takes
    /// their feed. Returns the plans and, for an SQLite store, the context of the calling thread it read them through,
    /// which the caller keeps open until the workers' contexts have closed (see ``run(_:)``). A PostgreSQL store's is
    /// dropped here: there the close costs nothing, and an idle connection held for the run would take a server slot.
    private func plan(_ entries: [FeedEntry]) -> ([Plan], StoreContext?) {
        var plans = entries.map { entry in
            Plan(entry: entry, request: Self.request(entry, validators: .none), feed: nil, deferredUntil: nil, failure: nil)
        }
        guard let store, !entries.isEmpty else { return (plans, nil) }
        var context: StoreContext?
        do {
            let opened = try store.makeContext()
            context = opened
            let ids = try opened.feeds(urls: entries.map(\.storeURL))
            try opened.setTags(zip(ids, entries).map { ($0, $1.tags) })
            let statuses = try opened.feedStatuses(ids)  // one statement, not one per feed
            let now = Date()
            for index in plans.indices {
                let status = statuses[index]
                plans[index].feed = ids[index]
                plans[index].request = Self.request(entries[index], validators: FetchValidators(
                    entityTag: status.validators.etag, lastModified: status.validators.lastModified))
                if !configuration.due.isDue(status, at: now), let next = status.nextFetch { plans[index].deferredUntil = next }
            }
        } catch {
            for index in plans.indices { plans[index].failure = error }
        }
        return (plans, store.engineName == "sqlite" ? context : nil)
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
    var failure: StoreError?

    /// Whether the feed is to be fetched.
    var fetches: Bool { deferredUntil == nil && failure == nil }
}
