import ArticleStore
import Fetch
import Foundation

/// What one download has learnt so far: the tracker's view, updated as responses arrive and flushes are recorded.
/// Confined to the worker thread of its download.
final class AttemptState {
    var lease: DownloadLease
    var validator: String?
    var expectedLength: Int64?
    var finalURL: String?
    var committedOffset: Int64
    /// Where the first response this run accepted began writing: `nil` until one arrives.
    var resumedFrom: Int64?
    /// The last resume the server did not honour.
    var restart: DownloadRestart?

    init(_ lease: DownloadLease) {
        self.lease = lease
        validator = lease.validator
        expectedLength = lease.expectedLength
        finalURL = lease.finalURL
        committedOffset = lease.committedOffset
    }

    var progress: DownloadProgress {
        DownloadProgress(finalURL: finalURL, validator: validator, expectedLength: expectedLength, committedOffset: committedOffset)
    }
}

/// The 206 did not fit (``ResumeRules/Decision/startOver(reason:)``): ask again for the whole file.
struct RestartRequest: Error {
    let reason: String
}

/// Another process claimed the download: stop writing.
struct LeaseLost: Error {}

/// The consumer of one attempt: applies ``ResumeRules`` to the response, writes through a ``FileConsumer``, and
/// records each flushed offset (and renews the lease) in the tracker, on the worker's thread and store context.
final class DownloadConsumer: FetchConsumer {
    let file: FileConsumer
    private let plan: ResumeRules.Plan
    private let state: AttemptState
    private let context: StoreContext
    private let leaseDuration: Duration
    private let progress: (Int64, Int64?) -> Void
    private var lastRecord = ContinuousClock.now

    init(file: FileConsumer, plan: ResumeRules.Plan, state: AttemptState, context: StoreContext, leaseDuration: Duration,
         progress: @escaping (Int64, Int64?) -> Void) {
        self.file = file
        self.plan = plan
        self.state = state
        self.context = context
        self.leaseDuration = leaseDuration
        self.progress = progress
        file.checkpointHandler = { [unowned self] durable in try self.record(durable) }
    }

    func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        let decision = ResumeRules.decide(status: response.status, contentRange: response.contentRange, contentLength: response.contentLength,
                                          validator: response.strongValidator, plan: plan, expectedLength: state.expectedLength)
        state.finalURL = response.url.absoluteString
        switch decision {
        case .startOver(let reason):
            if case .from(let offset, _) = plan { state.restart = DownloadRestart(askedFrom: offset, reason: reason) }
            throw RestartRequest(reason: reason)
        case .writeFromStart(let expected):
            if case .from(let offset, let held) = plan {
                let reason: String
                if let validator = response.strongValidator, validator != held {
                    reason = "the file changed on the server (\(held) → \(validator)) and came whole (\(response.status))"
                } else {
                    reason = "the server answered \(response.status) with the whole file"
                }
                state.restart = DownloadRestart(askedFrom: offset, reason: reason)
            }
            state.resumedFrom = 0
            state.validator = response.strongValidator
            state.expectedLength = expected
            file.responseHandler = { _ in 0 }
            try file.fetchDidReceiveResponse(response)
            // The bytes held belong to another version now: the tracker must not offer them for a resume.
            try record(0)
        case .append(let offset, let expected):
            if state.resumedFrom == nil { state.resumedFrom = offset }
            state.expectedLength = expected
            file.responseHandler = { _ in offset }
            try file.fetchDidReceiveResponse(response)
        }
        progress(file.offset, state.expectedLength)
    }

    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        try file.fetchDidReceive(bytes)
        progress(file.offset, state.expectedLength)
        // A slow download still renews its lease, with the offset flushed last.
        if ContinuousClock.now - lastRecord > leaseDuration / 3 { try record(file.durableOffset) }
    }

    func fetchDidFinish() throws {
        try file.fetchDidFinish()
    }

    /// Records `durable` as the committed offset and extends the lease; throws ``LeaseLost`` when it was lost.
    func record(_ durable: Int64) throws {
        state.committedOffset = durable
        lastRecord = ContinuousClock.now
        guard try context.recordDownloadProgress(state.lease, state.progress, duration: leaseDuration) else { throw LeaseLost() }
    }
}
