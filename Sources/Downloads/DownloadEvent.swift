import ArticleStore
import Fetch
import Foundation
import Support

/// Why a download failed: a kind to match on, a message, the URL and, for file errors, the path.
public struct DownloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The enclosure URL is not `http` or `https`: refused without a request.
        case unsupportedScheme
        /// The device is full (`ENOSPC`, `EDQUOT`): the partial file is kept; free space and run again.
        case diskFull
        /// Another file operation failed (``DownloadError/errno`` says why).
        case fileError
        /// The transfer failed (``DownloadError/fetchKind`` says how); the partial file is kept.
        case fetch
        /// The response could not be used: a 206 that did not fit twice, or a body shorter or longer than announced.
        case badResponse
        /// Another process claimed the download (this one stalled past its lease): nothing more was written.
        case leaseLost
        /// The store failed.
        case store
        /// The run was stopped (a signal): the partial file is kept and the download is paused.
        case cancelled
    }

    /// What went wrong.
    public var kind: Kind
    /// A specific message.
    public var message: String
    /// The enclosure URL.
    public var url: String
    /// The file concerned, for file errors.
    public var path: String?
    /// The system's code, for file errors.
    public var errno: Errno?
    /// The transfer's kind, for ``Kind/fetch``.
    public var fetchKind: FetchError.Kind?
    /// The HTTP status, when a response arrived.
    public var status: Int?

    /// Creates a value.
    public init(kind: Kind, message: String, url: String, path: String? = nil, errno: Errno? = nil, fetchKind: FetchError.Kind? = nil,
                status: Int? = nil) {
        self.kind = kind
        self.message = message
        self.url = url
        self.path = path
        self.errno = errno
        self.fetchKind = fetchKind
        self.status = status
    }

    /// A stable name for the kind, as the tracker stores it: `download.disk-full`, `fetch.truncated`, ...
    public var kindName: String {
        switch kind {
        case .unsupportedScheme: return "download.unsupported-scheme"
        case .diskFull: return "download.disk-full"
        case .fileError: return "download.file-error"
        case .fetch: return "fetch." + (fetchKind.map(\.name) ?? "network")
        case .badResponse: return "download.bad-response"
        case .leaseLost: return "download.lease-lost"
        case .store: return "download.store"
        case .cancelled: return "download.cancelled"
        }
    }

    /// Whether retrying cannot help (``FailurePolicy``).
    ///
    /// True for a URL that is not http or https and for a transfer that failed with a permanent status (404, 410, ...).
    /// The tracker then marks the download failed for good: no run tries it again until it is queued again
    /// (``DownloadManager/retryFailed()``).
    public var isPermanent: Bool {
        switch kind {
        case .unsupportedScheme: return true
        case .fetch: return fetchKind.map { FailurePolicy.isPermanent($0) } ?? false
        default: return false
        }
    }

    /// `url: message`, the URL's password replaced by `***` (`Redaction`): a description is for people; ``url`` keeps it.
    public var description: String { "\(Redaction.redactedURL(url)): \(Redaction.redactedText(message))" }
}

/// One download in progress, as progress events report it.
public struct ActiveDownload: Sendable, Hashable {
    /// The tracker row.
    public var id: DownloadID
    /// The enclosure URL.
    public var url: String
    /// The complete file's path.
    public var path: String
    /// Bytes in the partial file now.
    public var bytes: Int64
    /// The whole length, when known.
    public var expectedLength: Int64?
    /// Bytes received per second over the last interval.
    public var rate: Double
    /// Where this run's bytes began in the file.
    ///
    /// Above zero only once the server honoured a range (a 206 appended at that offset); 0 while the response is
    /// awaited and when the file is written from the start.
    public var resumedFrom: Int64

    /// Creates a value.
    public init(id: DownloadID, url: String, path: String, bytes: Int64, expectedLength: Int64?, rate: Double, resumedFrom: Int64) {
        self.id = id
        self.url = url
        self.path = path
        self.bytes = bytes
        self.expectedLength = expectedLength
        self.rate = rate
        self.resumedFrom = resumedFrom
    }

    /// Seconds left at the current rate, when the length is known and bytes flow.
    public var secondsLeft: Double? {
        guard let expectedLength, rate > 0, expectedLength >= bytes else { return nil }
        return Double(expectedLength - bytes) / rate
    }
}

/// A finished attempt.
public struct DownloadResult: Sendable, Hashable {
    /// The tracker row, as the attempt left it.
    public var record: DownloadRecord
    /// The failure, when it failed (or was paused).
    public var error: DownloadError?
    /// Bytes received over the network by this run.
    public var bytesReceived: Int64
    /// Where this run's bytes began in the file.
    ///
    /// Above zero only when the server honoured the range asked for (a 206 appended there, or a 416 saying the
    /// partial file held every byte already); 0 when the file was written from the start (also after a ``restart``).
    public var resumedFrom: Int64
    /// The resume the server did not honour, if any: the partial file was written again from zero.
    public var restart: DownloadRestart?

    /// Creates a value.
    public init(record: DownloadRecord, error: DownloadError?, bytesReceived: Int64, resumedFrom: Int64, restart: DownloadRestart? = nil) {
        self.record = record
        self.error = error
        self.bytesReceived = bytesReceived
        self.resumedFrom = resumedFrom
        self.restart = restart
    }
}

/// A resume the server did not honour, so the partial file was written again from zero.
///
/// The server answered a request for the bytes from ``askedFrom`` with the whole file (a 200: it ignores ranges, or
/// `If-Range` named a validator that changed), or with a range that did not fit.
public struct DownloadRestart: Sendable, Hashable {
    /// The offset the resume asked for (`Range: bytes=N-`).
    public var askedFrom: Int64
    /// What the server answered instead, in words.
    public var reason: String

    /// Creates a value.
    public init(askedFrom: Int64, reason: String) {
        self.askedFrom = askedFrom
        self.reason = reason
    }
}

/// What a run came to.
public struct DownloadSummary: Sendable, Hashable {
    /// Enclosures newly queued.
    public var queued = 0
    /// Downloads completed.
    public var completed = 0
    /// Downloads that failed in this run (transient and permanent failures alike).
    public var failed = 0
    /// Downloads the tracker holds as failed for good when the run ends, those of this run included.
    ///
    /// A 404, a 410, ...: no run tries them again until they are queued again (``DownloadManager/retryFailed()``).
    public var failedForGood = 0
    /// Downloads paused (the run was stopped).
    public var paused = 0
    /// Completed files deleted by retention.
    public var removed = 0
    /// Bytes received.
    public var bytes: Int64 = 0
    /// `.download` files without a tracker row, reported and left alone.
    public var staleFiles: [String] = []

    /// Creates an empty summary.
    public init() {}
}

/// What a ``DownloadManager`` reports to its observers, in order, one at a time, on its event queue.
public enum DownloadEvent: Sendable {
    /// Enclosures were queued.
    case queued(count: Int)
    /// A `.download` file without a tracker row: reported, never deleted.
    case staleFile(path: String)
    /// A download began; its first request asks for the bytes from `resumingFrom`.
    ///
    /// Above zero to resume a partial file. Whether the server honoured the range is known when the download ends
    /// (``DownloadResult/resumedFrom``, ``DownloadResult/restart``).
    case started(DownloadRecord, resumingFrom: Int64)
    /// Every active download's bytes, every ``DownloadConfiguration/progressInterval``.
    case progress([ActiveDownload])
    /// A download completed.
    case finished(DownloadResult)
    /// A download failed or was paused.
    case failed(DownloadResult)
    /// A completed file was deleted by retention.
    case removed(DownloadRecord)
    /// The store failed (claiming or recording); the worker that met it stops.
    case storeFailed(StoreError)
    /// The run is over.
    case runFinished(DownloadSummary)
}

/// Hears a download run's events, on the manager's serial event queue.
public protocol DownloadObserver: Sendable {
    /// Handles one event.
    func download(_ event: DownloadEvent)
}

/// An observer made of a closure.
public struct DownloadClosureObserver: DownloadObserver {
    private let handler: @Sendable (DownloadEvent) -> Void
    /// Creates an observer that calls `handler` with each event.
    public init(_ handler: @escaping @Sendable (DownloadEvent) -> Void) { self.handler = handler }
    /// Calls the closure.
    public func download(_ event: DownloadEvent) { handler(event) }
}
