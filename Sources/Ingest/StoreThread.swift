import ArticleStore
import Dispatch
import Foundation
import Support
import Synchronization
import Syndication

/// A worker's companion thread: it owns the worker's one `StoreContext` (made on this thread, used and dropped here,
/// never touched by another thread) and stores the articles the worker parses, so that SQLite's inserts run beside
/// the parser instead of between its chunks.
///
/// The worker talks to it through one bounded queue of jobs, served in order:
/// - ``store(_:in:)`` hands over a batch of parsed articles and returns at once, unless ``capacity(_:)`` jobs already
///   wait (then the parser blocks: backpressure, so memory stays flat however large the feed). The store thread
///   stores them, commits when due (`commitIfDue`, also after ``StoreContext``'s batch interval when no job comes),
///   and reports each committed batch as ``IngestEvent/articleIngested(_:)`` events. A store error is kept in the
///   feed's ``StoreSession`` (the worker's consumer then stops the transfer) and the feed's later batches are skipped.
/// - ``perform(_:)`` runs a synchronous operation (begin, finish, fail or discard a feed, read its status) after
///   every job queued before it, and waits for its result; so a feed's ``IngestEvent/feedFinished(_:_:)``, emitted
///   after `finishFeed` returned, follows every article of the feed.
///
/// Only `Sendable` values cross: article batches, `FeedID`s, `StoredArticle`s, results and errors. One producer (the
/// worker thread) and one consumer (the store thread).
final class StoreThread: Sendable {
    /// Articles per hand-off from the worker to the store thread (a hand-off also happens whenever the parser has
    /// caught up with the download and waits for bytes, so a slow download's articles are not held back). Not the
    /// store's commit batch (`StoreConfiguration.commitBatchSize`, articles per transaction).
    static let handOffSize = 64

    /// Jobs that may wait before the worker blocks: enough hand-offs of ``handOffSize`` to hold two of the
    /// store's commit batches (`StoreConfiguration.commitBatchSize`), at least 4. SQLite's work comes in bursts, one
    /// transaction per commit batch (1000 articles: ~15 ms here), and the parser must be able to run on through one;
    /// with only 4 small batches it blocked for most of each commit. 32 × 64 articles of ~1.4 KB is ~3 MB.
    static func capacity(_ configuration: StoreConfiguration) -> Int {
        max(4, 2 * configuration.commitBatchSize / handOffSize)
    }

    private let jobs: JobQueue
    /// Signalled when the thread has ended (its context is gone).
    private let exited: DispatchSemaphore

    private init(jobs: JobQueue, exited: DispatchSemaphore) {
        self.jobs = jobs
        self.exited = exited
    }

    /// Starts a store thread, makes its context there and returns once it is ready.
    ///
    /// - Throws: the error of `Store.makeContext()`; the thread has then ended.
    static func start(store: Store, name: String, emitAll: @escaping @Sendable ([IngestEvent]) -> Void) throws(StoreError) -> StoreThread {
        let jobs = JobQueue(capacity: capacity(store.configuration))
        let exited = DispatchSemaphore(value: 0)
        let ready = Reply<Void>()
        let thread = Thread {
            defer { exited.signal() }
            let context: StoreContext
            do throws(StoreError) { context = try store.makeContext() } catch {
                ready.set(.failure(error))
                return
            }
            ready.set(.success(()))
            var loop = StoreLoop(context: context, jobs: jobs, emitAll: emitAll)
            loop.run()
        }
        thread.name = name
        thread.start()
        try ready.wait().get()
        return StoreThread(jobs: jobs, exited: exited)
    }

    /// Hands a batch of a started feed's articles to the store thread; blocks only while the queue is full.
    func store(_ batch: consuming [Article], in session: StoreSession) {
        jobs.send(.articles(ArticleBatch(batch), session))
    }

    /// Runs `body` with the context on the store thread, after every job queued before, and returns its result.
    func perform<T: Sendable>(_ body: @escaping @Sendable (StoreContext) throws(StoreError) -> T) throws(StoreError) -> T {
        let reply = Reply<T>()
        jobs.send(.perform({ context in
            reply.set(Result { () throws(StoreError) -> T in try body(context) })
        }))
        return try reply.wait().get()
    }

    /// Ends the thread after the jobs queued, and waits until it (and its context) is gone.
    func stop() {
        jobs.send(.stop)
        exited.wait()
    }
}

/// One feed's store session as both threads see it: which feed, and the first store error of its batches.
final class StoreSession: Sendable {
    let entry: FeedEntry
    let feed: FeedID
    private let firstError = Lock<StoreError?>(nil)
    private let dropped = Atomic<Bool>(false)

    init(entry: FeedEntry, feed: FeedID) {
        self.entry = entry
        self.feed = feed
    }

    /// The first error storing or committing one of the feed's batches; later batches are skipped.
    var error: StoreError? { firstError.withLock { $0 } }

    func fail(_ error: StoreError) {
        firstError.withLock { if $0 == nil { $0 = error } }
    }

    /// Whether the feed is being discarded: its queued batches are skipped.
    var isDropped: Bool { dropped.load(ordering: .acquiring) }

    /// Marks the feed as being discarded, before its discard is queued, so the batches still queued are not stored.
    func drop() { dropped.store(true, ordering: .releasing) }
}

/// Articles on their way to the store thread, which takes the array out of the box: it is then the array's only owner,
/// and can move the articles out instead of copying them (an array in the job itself was also referenced by the job).
private final class ArticleBatch: Sendable {
    private let articles: Lock<[Article]>

    init(_ articles: consuming [Article]) {
        self.articles = Lock(articles)
    }

    /// The articles; the box is empty afterwards.
    func take() -> [Article] {
        articles.withLock { articles in
            var taken: [Article] = []
            swap(&taken, &articles)
            return taken
        }
    }
}

extension Article {
    /// A placeholder left where an article was moved out of an array: no field holds storage.
    fileprivate static var empty: Article { Article(id: "", idSource: .hash, feed: "") }
}

/// A job for the store thread.
private enum Job: Sendable {
    case articles(ArticleBatch, StoreSession)
    case perform(@Sendable (StoreContext) -> Void)
    case stop
}

/// The store thread's loop; it and its context live on the store thread only.
private struct StoreLoop {
    let context: StoreContext
    let jobs: JobQueue
    /// Sends a commit's articles to the observers in one hand-off.
    let emitAll: @Sendable ([IngestEvent]) -> Void
    /// The feed of the last batch: whose articles a commit on the idle timer reports (a context ingests one feed at a
    /// time here, as its worker does).
    var current: StoreSession?

    init(context: StoreContext, jobs: JobQueue, emitAll: @escaping @Sendable ([IngestEvent]) -> Void) {
        self.context = context
        self.jobs = jobs
        self.emitAll = emitAll
    }

    mutating func run() {
        // While a feed is active, wake at least every half batch interval to commit a slow feed's articles in time.
        let idle = context.configuration.batchInterval / 2
        let idleNanoseconds = Int(idle.seconds * 1e9)
        while true {
            let timeout: DispatchTime = context.activeFeeds.isEmpty ? .distantFuture : .now() + .nanoseconds(max(idleNanoseconds, 1_000_000))
            guard let job = jobs.receive(timeout: timeout) else {
                if let current { commitDue(current) }
                continue
            }
            switch job {
            case .articles(let batch, let session):
                current = session
                guard !session.isDropped, session.error == nil else { continue }
                // Each article is moved out of the batch (swapped with an empty one) into the context's pending batch:
                // a for-in loop copied each, every field retained, and released them with the batch.
                var articles = batch.take()
                do throws(StoreError) {
                    for index in articles.indices {
                        var article = Article.empty
                        swap(&article, &articles[index])
                        report(try context.store(consume article, in: session.feed), session)
                    }
                } catch {
                    session.fail(error)
                    continue
                }
                commitDue(session)
            case .perform(let body):
                body(context)
            case .stop:
                return
            }
        }
    }

    private func commitDue(_ session: StoreSession) {
        guard !session.isDropped, session.error == nil else { return }
        do { report(try context.commitIfDue(), session) } catch { session.fail(error) }
    }

    private func report(_ committed: consuming [StoredArticle], _ session: StoreSession) {
        guard !committed.isEmpty else { return }
        emitAll(IngestedArticle.events(committed, entry: session.entry))
    }
}

/// A bounded first-in first-out queue of jobs, for one producer and one consumer.
private final class JobQueue: Sendable {
    private let queued = Lock<[Job]>([])
    /// Counts the jobs queued.
    private let items = DispatchSemaphore(value: 0)
    /// Counts the free places.
    private let slots: DispatchSemaphore

    init(capacity: Int) {
        slots = DispatchSemaphore(value: capacity)
    }

    /// Queues a job, blocking while the queue is full.
    func send(_ job: Job) {
        slots.wait()
        queued.withLock { $0.append(job) }
        items.signal()
    }

    /// The next job, or `nil` when none came before the timeout.
    func receive(timeout: DispatchTime) -> Job? {
        guard items.wait(timeout: timeout) == .success else { return nil }
        let job = queued.withLock { $0.removeFirst() }
        slots.signal()
        return job
    }
}

/// The result of a job, waited for by the thread that queued it.
private final class Reply<T: Sendable>: Sendable {
    private let result = Lock<Result<T, StoreError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func set(_ value: Result<T, StoreError>) {
        result.withLock { $0 = value }
        done.signal()
    }

    func wait() -> Result<T, StoreError> {
        done.wait()
        return result.withLock { $0! }
    }
}

/// A thread that owns one store context and runs operations on it, in order, for work outside a run (a service's
/// reads and list updates between runs): the context is made on that thread, used and dropped there; only `Sendable`
/// values cross.
public final class StoreAccess: Sendable {
    private let thread: StoreThread
    private let location: String
    /// Whether ``stop()`` ended the thread; held while an operation runs, so none is left waiting on a thread that ended.
    private let stopped = Lock(false)

    /// Starts the thread (named `name`) and makes its context.
    ///
    /// - Throws: the error of `Store.makeContext()`.
    public init(store: Store, name: String) throws(StoreError) {
        thread = try StoreThread.start(store: store, name: name, emitAll: { _ in })
        location = store.path
    }

    /// Runs `body` with the context on the thread, after every operation submitted before, and returns its result.
    ///
    /// - Throws: `body`'s error, or ``StoreError/Kind/unreachable`` after ``stop()``.
    public func perform<T: Sendable>(_ body: @escaping @Sendable (StoreContext) throws(StoreError) -> T) throws(StoreError) -> T {
        try stopped.withLock { stopped throws(StoreError) -> T in
            guard !stopped else {
                throw StoreError(kind: .unreachable, message: "the store's thread has ended", path: location, operation: "use the store")
            }
            return try thread.perform(body)
        }
    }

    /// Ends the thread, dropping its context, after the operations under way. Idempotent.
    public func stop() {
        stopped.withLock { stopped in
            guard !stopped else { return }
            thread.stop()
            stopped = true
        }
    }
}
