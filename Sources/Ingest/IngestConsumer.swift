import ArticleStore
import Fetch
import Foundation
import Syndication

/// One feed's consumer in the pipeline: parses the body through a ``FeedParsingConsumer`` as it arrives and hands the
/// parsed articles, in batches, to the worker's store thread (or, without a store, reports them in batches of the same
/// size). Confined to the worker thread.
final class IngestConsumer: FetchConsumer {
    let entry: FeedEntry
    let storeThread: StoreThread?
    /// The feed's store session; `nil` without a store.
    let session: StoreSession?
    let emit: @Sendable (IngestEvent) -> Void
    let emitAll: @Sendable ([IngestEvent]) -> Void
    /// Fetch a feed and parse it as it arrives.
    let feed: FeedParsingConsumer
    /// Articles parsed so far.
    private(set) var parsed = 0
    /// Articles parsed and not yet handed to the store thread.
    private var batch: [Article] = []
    /// Without a store: articles parsed and not yet reported. They go to the observers as a store thread's commits do,
    /// a batch in one hand-off: one each took a slot, a hand-off to the event queue and often its wake-up, and the
    /// NDJSON printer wrote each line with a system call of its own (issue 18).
    private var unreported: [IngestEvent] = []
    /// The first store error seen; the transfer stops with it.
    private var storeError: StoreError?
    /// Whether ``IngestEvent/firstElement(_:_:)`` went out.
    private var reportedFirstElement = false

    init(entry: FeedEntry, configuration: FeedParserConfiguration, storeThread: StoreThread?, session: StoreSession?,
         emit: @escaping @Sendable (IngestEvent) -> Void, emitAll: @escaping @Sendable ([IngestEvent]) -> Void) {
        self.entry = entry
        self.storeThread = storeThread
        self.session = session
        self.emit = emit
        self.emitAll = emitAll
        feed = FeedParsingConsumer(source: entry.source, configuration: configuration)
        feed.onArticle = { [unowned self] article, _ in accept(article) }
    }

    /// Why the transfer failed, typed: a store error this consumer stopped it with, the parse error, else the fetch's.
    func failure(of result: FetchResult) -> IngestError? {
        guard result.error != nil else { return nil }
        if let storeError { return .store(storeError) }
        return feed.failure(of: result)
    }

    func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        try feed.fetchDidReceiveResponse(response)
    }

    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        defer { noteFirstElement() }  // a root recognised before an error still counts
        try feed.fetchDidReceive(bytes)
        try checkStore()
    }

    /// The bytes that had arrived are parsed: hands over what they held, so a slow download's articles are stored
    /// without waiting for its next bytes. Not after every piece of the body: on a fast transfer those come every
    /// few kilobytes, and a hand-off of a few articles each woke the store thread, which then took the parser's core.
    func fetchWillWait() {
        flush()
    }

    func fetchDidFinish() throws {
        defer { noteFirstElement() }
        try feed.fetchDidFinish()
        flush()
        if let storeThread, session != nil {
            // Wait for the store thread to store every batch, so a store error fails the transfer as it did mid-body.
            try storeThread.perform { _ throws(StoreError) in }
        }
        try checkStore()
    }

    /// Hands the articles parsed since the last batch to the store thread (blocking while its queue is full), or
    /// without a store reports them.
    func flush() {
        if !unreported.isEmpty {
            var handed: [IngestEvent] = []
            swap(&handed, &unreported)
            emitAll(handed)
        }
        guard !batch.isEmpty, let storeThread, let session else { return }
        // Swapped out, so the store thread holds the only reference and moves the articles out without copying them.
        var handed: [Article] = []
        handed.reserveCapacity(StoreThread.handOffSize)
        swap(&handed, &batch)
        if storeError == nil && session.error == nil { storeThread.store(consume handed, in: session) }
    }

    /// Throws the first error the store thread met storing this feed's batches, stopping the transfer.
    private func checkStore() throws {
        if storeError == nil { storeError = session?.error }
        if let storeError { throw storeError }
    }

    /// Reports ``IngestEvent/firstElement(_:_:)`` once the parser has recognised the root element.
    private func noteFirstElement() {
        guard !reportedFirstElement, let format = feed.format else { return }
        reportedFirstElement = true
        emit(.firstElement(entry, format))
    }

    private func accept(_ article: Article) {
        noteFirstElement()
        parsed += 1
        guard session != nil else {
            if unreported.isEmpty { unreported.reserveCapacity(StoreThread.handOffSize) }
            unreported.append(.articleIngested(IngestedArticle(entry: entry, article: article, id: nil, change: nil)))
            if unreported.count >= StoreThread.handOffSize { flush() }
            return
        }
        batch.append(article)
        if batch.count >= StoreThread.handOffSize { flush() }
    }
}
