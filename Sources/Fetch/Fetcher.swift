import Dispatch
import Foundation
import Synchronization

/// Fetches many URLs at once over one libcurl multi handle, streaming each body to its consumer as it arrives.
///
/// A fetcher owns one transfer thread that drives every transfer with `curl_multi_poll`; up to
/// ``FetchConfiguration/maximumConcurrentTransfers`` run at once, kept-alive connections are reused, and transfers to
/// one host share an HTTP/2 connection where the server offers it. Submitting and cancelling are safe from any
/// thread. Bodies are decompressed (gzip, deflate) and checked against the limits on the consumer's side, so a slow
/// consumer pauses its own transfer and no other.
///
/// ```swift
/// let fetcher = Fetcher()
/// let result = await fetcher.fetch(FetchRequest(url: url), into: XMLParsingConsumer(handler: myHandler))  // XMLFetching
/// switch result.outcome {
/// case .ok: ...
/// case .notModified: ...
/// case .failed(let error): print(error)
/// }
/// ```
///
/// Each ``FetchTransfer`` keeps its fetcher alive, so a transfer runs to its end even when the caller lets go of the
/// fetcher; once the fetcher and all its transfers are released, its thread ends.
public final class Fetcher: Sendable {
    /// The configuration in force.
    public let configuration: FetchConfiguration
    private let loop: TransferLoop
    private let nextID = Atomic<UInt64>(1)
    private let queue: DispatchQueue

    /// A fetcher with the default configuration, shared by the URL entry points of the XML parsers.
    ///
    /// It lives as long as the process: a program that fetched over TLS through it should call
    /// `Fetcher.shared.shutdown()` before it exits (see ``shutdown()``), or pass its own fetcher to the entry points.
    public static let shared = Fetcher()

    /// Creates a fetcher. Its transfer thread (and libcurl) start with its first `http`/`https` transfer, so a
    /// fetcher that only reads local files costs no thread.
    public init(configuration: FetchConfiguration = FetchConfiguration()) {
        self.configuration = configuration
        loop = TransferLoop(configuration: configuration)
        queue = DispatchQueue(label: "feedingest.fetch.delivery", attributes: .concurrent)
    }

    deinit {
        loop.shutdown()
    }

    /// Stops the transfer thread and waits until it has ended: transfers still running fail with
    /// ``FetchError/Kind/cancelled``, and so does every later one. Releasing the fetcher does the same, but the last
    /// reference may drop on the transfer thread itself, which cannot wait for itself; call this before the process
    /// exits when the fetcher may hold TLS connections, so libcurl's and OpenSSL's clean-up is over first (the two
    /// racing at exit crashed about one run in 150). Idempotent; not from a consumer callback.
    public func shutdown() {
        loop.shutdown()
    }

    /// The transfer thread's counters.
    public var statistics: FetcherStatistics { loop.statistics.withLock { $0 } }

    /// Starts a transfer and returns its handle; attach a consumer with ``FetchTransfer/deliver(to:)`` or
    /// ``FetchTransfer/deliver(to:on:completion:)``.
    ///
    /// `http` and `https` URLs go to the transfer thread. A `file:` URL is read only when the request came from
    /// `FetchRequest.localFile(_:)`; any other scheme fails with ``FetchError/Kind/unsupportedScheme``.
    ///
    /// A `speculative` transfer is one started before anyone is sure to want it (the ingest pipeline starts the
    /// next feeds' transfers ahead of its workers): if its buffer (``FetchConfiguration/maximumBufferedBytes``) fills
    /// before a consumer attaches or ``FetchTransfer/reserve()`` is called, it is abandoned instead of paused, so it
    /// never holds a connection, nor runs down its timeout, waiting for a consumer. `reserve()` then returns `false`
    /// and the request must be started again (at most the buffer's worth is fetched twice).
    public func start(_ request: FetchRequest, speculative: Bool = false) -> FetchTransfer {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let isNetwork = ["http", "https"].contains(request.scheme) && !request.url.isFileURL
        let transfer = FetchTransfer(request: request, id: id, configuration: configuration, loop: isNetwork ? loop : nil,
                                     fetcher: isNetwork ? self : nil, speculative: speculative)
        if isNetwork { loop.submit(transfer) }
        return transfer
    }

    /// Fetches `request` into `consumer` on the calling thread, blocking until it ends. For worker threads.
    public func fetch(_ request: FetchRequest, into consumer: some FetchConsumer) -> FetchResult {
        start(request).deliver(to: consumer)
    }

    /// Fetches `request` into `consumer`, which is called on a delivery queue as the bytes arrive.
    ///
    /// Cancelling the calling task cancels the transfer.
    public func fetch(_ request: FetchRequest, into consumer: sending some FetchConsumer) async -> FetchResult {
        let transfer = start(request)
        let queue = self.queue
        let box = DeliveryBox(Delivery(transfer: transfer, consumer: consumer))
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<FetchResult, Never>) in
                transfer.deliver(box, on: queue) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            transfer.cancel()
        }
    }
}

/// A consumer that keeps nothing: for fetching only to learn the outcome, the headers or the body's hash.
public final class DiscardingConsumer: FetchConsumer {
    /// Decoded bytes seen.
    public private(set) var count: Int64 = 0
    /// Creates a consumer.
    public init() {}
    /// Counts the bytes and drops them.
    public func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws { count += Int64(bytes.count) }
}

/// A consumer that collects the whole decoded body in memory, for small documents and tests.
public final class CollectingConsumer: FetchConsumer {
    /// The bytes received so far.
    public private(set) var data = Data()
    /// The response, once it arrived.
    public private(set) var response: FetchResponse?
    /// Creates a consumer.
    public init() {}
    /// Keeps the response.
    public func fetchDidReceiveResponse(_ response: FetchResponse) throws { self.response = response }
    /// Appends the bytes.
    public func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws { data.append(contentsOf: bytes) }
}
