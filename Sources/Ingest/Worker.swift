import ArticleStore
import Fetch
import Foundation
import Syndication

/// One worker thread's state: its store thread (which owns the worker's store context). Confined to its thread.
///
/// A worker takes one claimed feed at a time: it attaches an ``IngestConsumer`` to the feed's transfer, waits for
/// the body to be parsed and its articles stored, then settles the feed in the store (`finishFeed` or `failFeed`)
/// and reports how it ended.
final class Worker {
    let pipeline: IngestPipeline
    let emit: @Sendable (IngestEvent) -> Void
    /// Sends several events (a commit's articles, or without a store a batch of parsed ones) to the observers in one
    /// hand-off.
    let emitAll: @Sendable ([IngestEvent]) -> Void
    /// The worker's own store thread, with its store connection; `nil` without a store.
    let storeThread: StoreThread?
    /// Why the context could not be made; every feed of this worker then fails with it.
    let contextError: StoreError?

    init(pipeline: IngestPipeline, number: Int, emit: @escaping @Sendable (IngestEvent) -> Void,
         emitAll: @escaping @Sendable ([IngestEvent]) -> Void) {
        self.pipeline = pipeline
        self.emit = emit
        self.emitAll = emitAll
        var storeThread: StoreThread?
        var contextError: StoreError?
        if let store = pipeline.store {
            do {
                storeThread = try StoreThread.start(store: store, name: "feedingest.store.\(number)", emitAll: emitAll)
            } catch {
                contextError = error
            }
        }
        self.storeThread = storeThread
        self.contextError = contextError
    }

    /// Ends the store thread, once the worker is done.
    func stop() {
        storeThread?.stop()
    }

    func ingest(_ plan: Plan, transfer: FetchTransfer?, lease: FeedLease? = nil, lost: @escaping () -> Bool = { false }) -> FeedResult {
        emit(.feedStarted(plan.entry))
        var replacement: TextReplacement?
        let result = fetchAndStore(plan, transfer: transfer, lease: lease, lost: lost, replacement: &replacement)
        if case .offline = result { return result }  // reported by the run once it knows whether the network is down
        if let replacement { emit(.textReplaced(plan.entry, replacement)) }
        emit(.feedFinished(plan.entry, result))
        return result
    }

    /// Fetches, parses and stores one feed; `replacement` says what of its text was not what the bytes said, if any.
    private func fetchAndStore(_ plan: Plan, transfer: FetchTransfer?, lease: FeedLease?, lost: () -> Bool,
                               replacement: inout TextReplacement?) -> FeedResult {
        let entry = plan.entry
        var failure = plan.failure ?? contextError
        var session: StoreSession?
        if failure == nil, plan.deferredUntil == nil, let storeThread, let id = plan.feed {
            do {
                _ = try storeThread.perform { context throws(StoreError) in try context.beginFeed(id, lease: lease) }
                session = StoreSession(entry: entry, feed: id)
            } catch {
                failure = error
            }
        }
        if failure != nil || plan.deferredUntil != nil {
            transfer?.cancel()  // started ahead, not wanted after all
            if let transfer { _ = transfer.deliver(to: DiscardingConsumer()) }
            if let failure { return .failed(.store(failure), counts: FeedCounts()) }
            if let until = plan.deferredUntil { return .deferred(until: until) }
        }
        let consumer = IngestConsumer(entry: entry, configuration: pipeline.configuration.parser, storeThread: storeThread,
                                      session: session, emit: emit, emitAll: emitAll)
        guard let transfer else {
            discard(session)
            return .cancelled
        }
        let fetched = transfer.deliver(to: consumer)
        consumer.flush()  // the last articles: to the store thread, for finishFeed or failFeed to commit; else reported
        replacement = consumer.feed.parser?.summary.textReplacement
        if pipeline.isCancelled, case .failed(let error) = fetched.outcome, error.kind == .cancelled {
            discard(session)  // as if never started: the next run fetches it again
            return .cancelled
        }

        if let session, let lease, lost() {
            // The renewal found the lease taken over (this process stalled past it): write nothing more.
            discard(session)
            return .leaseLost(StoreError(kind: .leaseLost(lease.feed),
                                         message: "lease lost: another process claimed \(lease.feed) after this one's lease "
                                            + "(epoch \(lease.epoch)) expired; results not written",
                                         path: pipeline.store?.path ?? "", operation: "renew the lease"))
        }
        guard let storeThread, let session else {
            // No store: the articles were reported in batches, the last by the flush above.
            let counts = FeedCounts(seen: consumer.parsed, bytes: fetched.bodyBytes)
            switch fetched.outcome {
            case .ok: return .ok(counts)
            case .notModified: return .notModified
            case .failed(let error):
                if Self.isNoRoute(error), consumer.parsed == 0 { return .offline(error) }
                if case .rateLimited(let after) = error.kind { return .rateLimited(until: after.map { Date().addingTimeInterval($0.delay()) }) }
                return .failed(consumer.failure(of: fetched) ?? IngestError(error), counts: counts)
            }
        }
        do {
            switch fetched.outcome {
            case .ok:
                var success = FeedSuccess(
                    validators: FeedValidators(etag: fetched.response?.entityTag, lastModified: fetched.response?.lastModified,
                                               bodyHash: fetched.bodySHA256?.hex),
                    currentURL: fetched.isPermanentlyRedirected ? fetched.finalURL?.absoluteString : nil,
                    metadata: consumer.feed.parser?.summary.metadata)
                success.maxAge = fetched.response?.maxAge.map(TimeInterval.init)
                success.expires = fetched.response?.expires
                let finished = success
                let summary = try storeThread.perform { context throws(StoreError) in
                    if let error = session.error { throw error }  // a batch was not stored: the feed is incomplete
                    return try context.finishFeed(session.feed, finished)
                }
                report(summary.committed, entry)
                return .ok(Self.counts(summary, bytes: fetched.bodyBytes))
            case .notModified:
                let response = fetched.response
                var success = FeedSuccess(validators: FeedValidators(etag: response?.entityTag, lastModified: response?.lastModified),
                                          notModified: true)
                success.maxAge = response?.maxAge.map(TimeInterval.init)
                success.expires = response?.expires
                let finished = success
                _ = try storeThread.perform { context throws(StoreError) in try context.finishFeed(session.feed, finished) }
                return .notModified
            case .failed(let error):
                let failure = consumer.failure(of: fetched) ?? IngestError(error)
                if Self.isNoRoute(error), consumer.parsed == 0 {
                    // Provisional: whether the network is down is known only when every feed is done.
                    discard(session)
                    return .offline(error)
                }
                var retryAfter: Date?
                switch error.kind {
                case .rateLimited(let after?), .serviceUnavailable(let after?): retryAfter = Date().addingTimeInterval(after.delay())
                default: break
                }
                if case .rateLimited = error.kind {
                    // The server asks us to come back later: the feed is not broken, so no failure is counted.
                    let stored = FeedFailure(failure, retryAfter: retryAfter, counts: false)
                    let summary = try storeThread.perform { context throws(StoreError) in try context.failFeed(session.feed, stored) }
                    report(summary.committed, entry)
                    // Recorded already: a failed read of the next fetch time must not turn it into a failure.
                    let nextFetch = try? storeThread.perform { context throws(StoreError) in
                        try context.feedStatus(session.feed).nextFetch
                    }
                    return .rateLimited(until: nextFetch)
                }
                let stored = FeedFailure(failure, retryAfter: retryAfter)
                let summary = try storeThread.perform { context throws(StoreError) in try context.failFeed(session.feed, stored) }
                report(summary.committed, entry)
                return .failed(failure, counts: Self.counts(summary, bytes: fetched.bodyBytes))
            }
        } catch {
            if case .leaseLost = error.kind {
                // Another process holds the feed now: its results stand, and nothing more of ours is written.
                discard(session)
                return .leaseLost(error)
            }
            // The final transaction failed: record the failure if the store lets us, else forget the session.
            let failure = IngestError.store(error)
            let stored = FeedFailure(failure)
            if let summary = try? storeThread.perform({ context throws(StoreError) in try context.failFeed(session.feed, stored) }) {
                report(summary.committed, entry)
                return .failed(failure, counts: Self.counts(summary, bytes: fetched.bodyBytes))
            }
            discard(session)
            return .failed(failure, counts: FeedCounts(bytes: fetched.bodyBytes))
        }
    }

    /// Forgets a started feed and its uncommitted articles (those still queued for the store thread are skipped).
    private func discard(_ session: StoreSession?) {
        guard let session, let storeThread else { return }
        session.drop()
        _ = try? storeThread.perform { context throws(StoreError) in context.discardFeed(session.feed) }
    }

    private func report(_ committed: [StoredArticle], _ entry: FeedEntry) {
        emitAll(IngestedArticle.events(committed, entry: entry))
    }

    /// Whether the failure says the machine has no network (no name resolution, no route), rather than that this
    /// feed's server is broken. Whether the whole network is down is decided once every feed is done.
    static func isNoRoute(_ error: FetchError) -> Bool {
        error.kind == .dnsFailure || error.kind == .unreachable
    }

    private static func counts(_ summary: FeedIngestSummary, bytes: Int64 = 0) -> FeedCounts {
        FeedCounts(seen: summary.seen, new: summary.new, updated: summary.updated, unchanged: summary.unchanged, bytes: bytes)
    }
}

extension FeedFailure {
    /// What the store records of a failed feed: the reason for people and its `kind.code` for scripts.
    init(_ error: IngestError, retryAfter: Date? = nil, counts: Bool = true) {
        self.init(error: error.description, kind: error.qualifiedCode, retryAfter: retryAfter, counts: counts)
    }
}
