import Dispatch
import Foundation
import Support

/// Receives one fetch's response and its decompressed body, piece by piece, as the bytes arrive.
///
/// A consumer is called from one thread at a time, never concurrently: the thread that calls
/// ``FetchTransfer/deliver(to:)``, or the queue given to ``FetchTransfer/deliver(to:on:completion:)``. It is called
/// only for a successful (2xx) response; a 304, an HTTP error or a failure before the response reaches no method.
/// Throwing from any method stops the transfer; the result then fails with ``FetchError/Kind/consumerFailed`` and
/// the thrown error as ``FetchError/underlying``.
public protocol FetchConsumer: AnyObject {
    /// The final response arrived, before any body byte. The `charset` of ``FetchResponse/charset`` belongs in the
    /// parser's configuration. Default: nothing.
    func fetchDidReceiveResponse(_ response: FetchResponse) throws
    /// The next decompressed body bytes; valid only during the call.
    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws
    /// The body is complete and intact. Not called when the transfer failed or was truncated. Default: nothing.
    func fetchDidFinish() throws
    /// Every body byte that had arrived has been delivered, and the delivery now looks for more: it waits unless
    /// more came meanwhile. A consumer that gathers what it parsed into batches hands them on here, so a slow
    /// download's results are not held back until its next bytes; a fast one's pile up to full batches instead of
    /// going out after each piece of the body. Not called for a regular local file, which never makes it wait.
    /// Default: nothing.
    func fetchWillWait()
}

extension FetchConsumer {
    /// Does nothing.
    public func fetchDidReceiveResponse(_ response: FetchResponse) throws {}
    /// Does nothing.
    public func fetchDidFinish() throws {}
    /// Does nothing.
    public func fetchWillWait() {}
}

/// One transfer in progress: a handle to cancel it, watch it, and deliver its body to a consumer.
///
/// ``Fetcher/start(_:)`` makes one; the transfer runs on the fetcher's transfer thread whether or not a consumer is
/// attached yet (until ``FetchConfiguration/maximumBufferedBytes`` wait, then it pauses). Attach exactly one consumer,
/// with ``deliver(to:)`` (blocking, on the calling thread) or ``deliver(to:on:completion:)`` (on a queue).
public final class FetchTransfer: Sendable {
    /// The request.
    public let request: FetchRequest
    let id: UInt64
    let configuration: FetchConfiguration
    let channel: TransferChannel
    /// The transfer thread, or `nil` for a local file (read by the delivering thread) or a request refused up front.
    let loop: TransferLoop?
    /// Keeps the fetcher (and so its transfer thread) alive as long as one of its transfers is.
    private let fetcher: Fetcher?
    let started = ContinuousClock.now
    private let delivering = Lock(false)

    init(request: FetchRequest, id: UInt64, configuration: FetchConfiguration, loop: TransferLoop?, fetcher: Fetcher?,
         speculative: Bool = false) {
        self.fetcher = fetcher
        self.request = request
        self.id = id
        self.configuration = configuration
        self.loop = loop
        channel = TransferChannel(capacity: configuration.maximumBufferedBytes, abandonsUnreserved: speculative)
    }

    /// Reserves a speculative transfer (``Fetcher/start(_:speculative:)``) for delivery, from any thread: from now on
    /// it pauses when its buffer fills, like any other. `false` when it was already abandoned, its buffer full before
    /// anyone reserved it: start the request again. Always `true` for a transfer that is not speculative.
    public func reserve() -> Bool { channel.reserve() }

    /// Whether this speculative transfer was abandoned because its buffer filled before ``reserve()``.
    public var wasAbandoned: Bool { channel.state.withLock { $0.abandoned } }

    /// Stops the transfer; its result fails with ``FetchError/Kind/cancelled``. Safe from any thread, at any time.
    public func cancel() {
        channel.markCancelled()
        loop?.cancel(id)
    }

    /// Body bytes received off the wire so far and handed towards the consumer.
    public var bytesReceived: Int64 { channel.state.withLock { $0.received } }
    /// How many times the transfer has paused because its consumer fell behind.
    public var pauses: Int { channel.state.withLock { $0.pauses } }
    /// Whether the transfer is paused right now, waiting for its consumer.
    public var isPaused: Bool { channel.state.withLock { $0.paused } }
    /// Whether the transfer thread is done with the transfer: the whole body (or the failure) waits for the consumer,
    /// and the transfer no longer holds a connection or one of ``FetchConfiguration/maximumConcurrentTransfers``.
    public var isFinishedReceiving: Bool { channel.state.withLock { $0.completion != nil } }

    /// Delivers the response and body to `consumer` on the calling thread, blocking until the transfer ends.
    ///
    /// Use it from a worker thread; from Swift concurrency prefer the `async` `Fetcher.fetch(_:into:)`.
    public func deliver(to consumer: some FetchConsumer) -> FetchResult {
        claim()
        let delivery = Delivery(transfer: self, consumer: consumer)
        if loop == nil { return delivery.runWithoutNetwork() }
        let semaphore = DispatchSemaphore(value: 0)
        channel.attach { semaphore.signal() }
        while true {
            if let result = delivery.drain() { return result }
            semaphore.wait()
        }
    }

    /// Delivers the response and body to `consumer` on `queue` as bytes arrive, then calls `completion` there.
    ///
    /// No thread waits while the network is quiet: each batch of bytes schedules one work item, and work items for
    /// one transfer never overlap, so the consumer is used by one thread at a time.
    public func deliver(to consumer: sending some FetchConsumer, on queue: DispatchQueue,
                        completion: @escaping @Sendable (FetchResult) -> Void) {
        deliver(DeliveryBox(Delivery(transfer: self, consumer: consumer)), on: queue, completion: completion)
    }

    func deliver(_ box: DeliveryBox, on queue: DispatchQueue, completion: @escaping @Sendable (FetchResult) -> Void) {
        claim()
        if loop == nil {
            queue.async { completion(box.delivery.runWithoutNetwork()) }
            return
        }
        let drain: @Sendable () -> Void = {
            if let result = box.delivery.drain() { completion(result) }
        }
        channel.attach { queue.async(execute: drain) }
        queue.async(execute: drain)
    }

    private func claim() {
        let already = delivering.withLock { claimed in
            defer { claimed = true }
            return claimed
        }
        precondition(!already, "a transfer delivers to one consumer only")
    }
}

/// Carries a ``Delivery`` into the work items of ``FetchTransfer/deliver(to:on:completion:)``.
///
/// `@unchecked Sendable` because the delivery is used by one work item at a time: a work item is scheduled only by
/// ``TransferChannel`` when the previous one has parked (under the channel's lock), or once at the start before any
/// can be scheduled; and the consumer inside came in as `sending`, so nothing else holds it.
final class DeliveryBox: @unchecked Sendable {
    let delivery: Delivery
    init(_ delivery: Delivery) { self.delivery = delivery }
}

/// What the transfer thread reports when a transfer ends.
struct TransferCompletion: Sendable {
    var curlCode: CurlCode = .ok
    var curlMessage = ""
    /// `CURLINFO_OS_ERRNO`: the system error behind a failed connect, 0 when none.
    var systemError: Int32 = 0
    /// Why the transfer thread stopped it, when it did (a wire limit, a cancellation, a setup failure).
    var abort: FetchError?
    /// The last response's status and headers, when one arrived.
    var response: FetchResponse?
    var redirects: [Redirect] = []
    var newConnections = 0
    var bodyBytes: Int64 = 0
}

/// The bounded hand-over between the transfer thread (producer) and the delivering thread (consumer) of one transfer.
///
/// The producer offers body bytes; past ``capacity`` it is told to pause, and the consumer resumes it after taking
/// what waits. The consumer parks when there is nothing to do and is woken by the producer's next event.
final class TransferChannel: Sendable {
    struct State {
        var response: FetchResponse?
        var responseTaken = false
        var chunks: [[UInt8]] = []
        var buffered = 0
        var completion: TransferCompletion?
        var completionTaken = false
        var paused = false
        var parked = true
        var waker: (@Sendable () -> Void)?
        var stopped = false
        var cancelled = false
        var received: Int64 = 0
        var pauses = 0
        var peakBuffered = 0
        /// A consumer attached, or ``FetchTransfer/reserve()`` was called.
        var reserved = false
        /// Speculative and abandoned when its buffer filled before it was reserved.
        var abandoned = false
    }

    struct Batch {
        var response: FetchResponse?
        var chunks: [[UInt8]] = []
        var completion: TransferCompletion?
        var resume = false
    }

    let capacity: Int
    /// Abandon instead of pausing while nobody reserved the transfer (``Fetcher/start(_:speculative:)``).
    let abandonsUnreserved: Bool
    let state = Lock(State())

    init(capacity: Int, abandonsUnreserved: Bool = false) {
        self.capacity = max(1, capacity)
        self.abandonsUnreserved = abandonsUnreserved
    }

    // MARK: Producer side (the transfer thread)

    /// The final response (2xx) arrived.
    func publish(_ response: FetchResponse) {
        let waker = state.withLock { state -> (@Sendable () -> Void)? in
            state.response = response
            return Self.wake(&state)
        }
        waker?()
    }

    /// Body bytes arrived: take them, or ask libcurl to pause when the consumer is behind, or stop.
    func offer(_ bytes: UnsafeRawBufferPointer) -> CurlWriteDecision {
        var decision = CurlWriteDecision.accept
        let waker = state.withLock { state -> (@Sendable () -> Void)? in
            if state.stopped {
                decision = .abort
                return nil
            }
            if state.buffered > 0 && state.buffered + bytes.count > capacity {
                if abandonsUnreserved && !state.reserved {
                    // Speculative and unwanted so far: free the connection rather than hold it paused.
                    state.abandoned = true
                    state.stopped = true
                    state.chunks = []
                    state.buffered = 0
                    decision = .abort
                    return nil
                }
                if !state.paused { state.pauses += 1 }
                state.paused = true
                decision = .pause
                return nil
            }
            state.chunks.append(Array(bytes))
            state.buffered += bytes.count
            state.received += Int64(bytes.count)
            state.peakBuffered = max(state.peakBuffered, state.buffered)
            return Self.wake(&state)
        }
        waker?()
        return decision
    }

    /// The transfer ended; nothing more will be offered.
    func complete(_ completion: TransferCompletion) {
        let waker = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.completion == nil else { return nil }
            state.completion = completion
            return Self.wake(&state)
        }
        waker?()
    }

    private static func wake(_ state: inout State) -> (@Sendable () -> Void)? {
        guard state.parked, let waker = state.waker else { return nil }
        state.parked = false
        return waker
    }

    // MARK: Consumer side (the delivering thread)

    /// Starts delivery: `waker` is called (on the producer's thread) whenever work arrives for a parked consumer.
    func attach(_ waker: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.waker = waker
            state.parked = false
            state.reserved = true
        }
    }

    /// Marks the transfer as wanted, so that it pauses instead of being abandoned; `false` when it was abandoned.
    func reserve() -> Bool {
        state.withLock { state in
            guard !state.abandoned else { return false }
            state.reserved = true
            return true
        }
    }

    /// Everything that waits, or `nil` (and the consumer is parked) when there is nothing.
    func take() -> Batch? {
        state.withLock { state -> Batch? in
            var batch = Batch()
            if !state.responseTaken, let response = state.response {
                batch.response = response
                state.responseTaken = true
            }
            if !state.chunks.isEmpty {
                swap(&batch.chunks, &state.chunks)
                state.buffered = 0
            }
            if !state.completionTaken, let completion = state.completion {
                batch.completion = completion
                state.completionTaken = true
                state.waker = nil  // it may hold the delivery, and so this transfer: nothing more will wake it
            }
            if state.paused {
                state.paused = false
                batch.resume = true
            }
            if batch.response == nil && batch.chunks.isEmpty && batch.completion == nil && !batch.resume {
                state.parked = true
                return nil
            }
            return batch
        }
    }

    /// The consumer side failed: refuse every further byte.
    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// The caller cancelled: refuse every further byte, and remember why.
    func markCancelled() {
        state.withLock {
            $0.stopped = true
            $0.cancelled = true
        }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }
}
