// The enclosure download tracker: what every engine stores about each download, and the context's calls over it.
// The rules of resuming live in the Downloads module; the store only records, claims and lists.
import Foundation

/// A download's row identifier in the tracker.
public struct DownloadID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The row's identifier.
    public let rawValue: Int64
    /// Wraps an identifier.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static func < (lhs: DownloadID, rhs: DownloadID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `download N`.
    public var description: String { "download \(rawValue)" }
}

/// Where a download stands.
public enum DownloadState: String, Sendable, Hashable, CaseIterable {
    /// Waiting for its first attempt.
    case queued
    /// A process holds it and is fetching it (or held it and died: its lease then runs out and it is resumed).
    case downloading
    /// Stopped on purpose (a signal) with its partial file kept; the next run resumes it.
    case paused
    /// Complete: the file was verified, flushed and renamed into place.
    case done
    /// The last attempt failed (its error says why). After a transient failure (a reset, a timeout, a 5xx) the partial
    /// file is kept and the next run resumes it; after a permanent one (``DownloadRecord/isPermanentFailure``: a 404, a
    /// 410, ...) there is no partial file and no run claims it until ``StoreContext/requeueFailedDownloads()``.
    case failed
    /// Complete once, then deleted by retention (`--keep`, `--keep-days`): never queued again.
    case removed
}

/// One row of the tracker.
public struct DownloadRecord: Sendable, Hashable {
    /// The row.
    public var id: DownloadID
    /// The enclosure's URL, as the feed gave it: the download's identity.
    public var url: String
    /// The feed it came from, when known.
    public var feed: FeedID?
    /// The article it came from, when known.
    public var article: ArticleID?
    /// The complete file's path; while incomplete the bytes are in `path + ".download"`.
    public var path: String
    /// The media type the feed gave.
    public var mediaType: String?
    /// The URL the bytes came from after redirects.
    public var finalURL: String?
    /// The strong validator of the bytes held (an `ETag`, else `Last-Modified`), sent as `If-Range` on resume.
    public var validator: String?
    /// The whole length, as the server announced it (`Content-Length` of a 200, the total of a `Content-Range`).
    public var expectedLength: Int64?
    /// The length of the partial file known to be on the disk: recorded only after an `fsync`.
    public var committedOffset: Int64
    /// Where it stands.
    public var state: DownloadState
    /// Attempts begun (claims).
    public var attempts: Int
    /// The last error, in words.
    public var error: String?
    /// The last error's kind (`fetch.truncated`, `download.disk-full`, ...), for matching.
    public var errorKind: String?
    /// The HTTP status of the last failed attempt's response, when one arrived (404, 503, ...).
    public var httpStatus: Int?
    /// Whether the last failure is permanent: a retry of the same request would meet it again.
    ///
    /// A 404, a 410, a URL that is not http or https. Such a row is `failed` and no claim takes it until
    /// ``StoreContext/requeueFailedDownloads()``.
    public var isPermanentFailure: Bool
    /// The process holding it, if any (``LeaseOwner``).
    public var leaseOwner: String?
    /// When its lease ends, by the database's clock.
    public var leaseUntil: Date?
    /// Incremented by every claim; writes check it.
    public var leaseEpoch: Int64
    /// The article's date (published, else updated, else first seen): retention keeps the newest.
    public var articleDate: Date?
    /// When it was queued.
    public var queuedAt: Date
    /// When its row last changed.
    public var updatedAt: Date
    /// When it completed.
    public var completedAt: Date?

    /// Creates a value.
    public init(id: DownloadID, url: String, feed: FeedID? = nil, article: ArticleID? = nil, path: String, mediaType: String? = nil,
                finalURL: String? = nil, validator: String? = nil, expectedLength: Int64? = nil, committedOffset: Int64 = 0,
                state: DownloadState = .queued, attempts: Int = 0, error: String? = nil, errorKind: String? = nil,
                httpStatus: Int? = nil, isPermanentFailure: Bool = false, leaseOwner: String? = nil, leaseUntil: Date? = nil, leaseEpoch: Int64 = 0, articleDate: Date? = nil,
                queuedAt: Date = Date(), updatedAt: Date = Date(), completedAt: Date? = nil) {
        self.id = id
        self.url = url
        self.feed = feed
        self.article = article
        self.path = path
        self.mediaType = mediaType
        self.finalURL = finalURL
        self.validator = validator
        self.expectedLength = expectedLength
        self.committedOffset = committedOffset
        self.state = state
        self.attempts = attempts
        self.error = error
        self.errorKind = errorKind
        self.httpStatus = httpStatus
        self.isPermanentFailure = isPermanentFailure
        self.leaseOwner = leaseOwner
        self.leaseUntil = leaseUntil
        self.leaseEpoch = leaseEpoch
        self.articleDate = articleDate
        self.queuedAt = queuedAt
        self.updatedAt = updatedAt
        self.completedAt = completedAt
    }

    /// The partial file's path: `path` + `.download`.
    public var partialPath: String { path + ".download" }

    /// The state as people should read it: a `downloading` row whose lease ran out (its process died) is `paused`.
    public func displayState(now: Date = Date()) -> DownloadState {
        if state == .downloading, (leaseUntil ?? .distantPast) <= now { return .paused }
        return state
    }
}

/// An enclosure to queue: its URL, where it goes, and what the feed said of it.
public struct DownloadCandidate: Sendable, Hashable {
    /// The enclosure's URL.
    public var url: String
    /// The file's path (must be unique in the tracker).
    public var path: String
    /// The feed.
    public var feed: FeedID?
    /// The article.
    public var article: ArticleID?
    /// The media type.
    public var mediaType: String?
    /// The article's date.
    public var articleDate: Date?

    /// Creates a value.
    public init(url: String, path: String, feed: FeedID? = nil, article: ArticleID? = nil, mediaType: String? = nil, articleDate: Date? = nil) {
        self.url = url
        self.path = path
        self.feed = feed
        self.article = article
        self.mediaType = mediaType
        self.articleDate = articleDate
    }
}

/// What queueing one candidate did.
public enum DownloadQueueOutcome: Sendable, Hashable {
    /// A new row.
    case queued(DownloadID)
    /// The tracker has this URL already (queued, in progress, done or removed): nothing changed.
    case known(DownloadID)
    /// Another row uses the path: pick another name and try again.
    case pathTaken
}

/// A process's claim on a download (see ``StoreContext/claimDownload(owner:duration:)``): its row as claimed; writes
/// are accepted only while the row's epoch is still ``DownloadRecord/leaseEpoch``.
public typealias DownloadLease = DownloadRecord

/// What an attempt learnt, written with its epoch checked: the validator, the expected length, the final URL and the
/// committed (flushed) offset.
public struct DownloadProgress: Sendable, Hashable {
    /// The URL after redirects.
    public var finalURL: String?
    /// The strong validator of the bytes held.
    public var validator: String?
    /// The whole length.
    public var expectedLength: Int64?
    /// The flushed length of the partial file.
    public var committedOffset: Int64

    /// Creates a value.
    public init(finalURL: String?, validator: String?, expectedLength: Int64?, committedOffset: Int64) {
        self.finalURL = finalURL
        self.validator = validator
        self.expectedLength = expectedLength
        self.committedOffset = committedOffset
    }
}

extension StoreContext {
    /// Queues an enclosure unless the tracker knows its URL, in one transaction.
    public func queueDownload(_ candidate: DownloadCandidate) throws(StoreError) -> DownloadQueueOutcome {
        try trackerConnection.insertDownload(candidate, now: Date())
    }

    /// Whether a tracker row uses `path` (a complete file's path).
    public func downloadExists(path: String) throws(StoreError) -> Bool {
        try trackerConnection.downloadPathTaken(path)
    }

    /// Claims the next download that is not done and not held by a live lease, in one statement: partial downloads
    /// (a committed offset above zero) first, then the oldest. A row this `owner` attempted already (it failed in this
    /// run) is left alone, and so is a permanent failure (``DownloadRecord/isPermanentFailure``: a 404, a 410, a URL
    /// that is not http or https) until ``requeueFailedDownloads()``. The row becomes `downloading`, gets `owner`, an
    /// expiry `duration` ahead, its epoch incremented and one more attempt. `nil` when nothing is left.
    public func claimDownload(owner: String, duration: Duration) throws(StoreError) -> DownloadLease? {
        try trackerConnection.claimDownload(owner: owner, duration: duration, now: Date())
    }

    /// Records progress of a claimed download and extends its lease by `duration`; `false` (nothing written) when the
    /// lease was lost: another process claimed the row since.
    public func recordDownloadProgress(_ lease: DownloadLease, _ progress: DownloadProgress, duration: Duration) throws(StoreError) -> Bool {
        try trackerConnection.updateDownload(lease, progress, duration: duration, now: Date())
    }

    /// Ends an attempt: writes its final state, error and progress; `false` when the lease was lost.
    ///
    /// The lease ends but the row stays marked as this owner's, so the same run does not claim it again. `httpStatus`
    /// is the failed response's status; `permanentFailure` marks a failure that retrying cannot mend (a 404, a 410):
    /// no claim takes the row then until ``requeueFailedDownloads()``. It is kept only with the `failed` state.
    public func finishDownload(_ lease: DownloadLease, state: DownloadState, progress: DownloadProgress, error: String? = nil,
                               errorKind: String? = nil, httpStatus: Int? = nil, permanentFailure: Bool = false) throws(StoreError) -> Bool {
        try trackerConnection.finishDownload(lease, state: state, progress: progress, error: error, errorKind: errorKind,
                                             httpStatus: httpStatus, permanentFailure: permanentFailure && state == .failed, now: Date())
    }

    /// Queues again every download that failed permanently, so the next claim may take it; returns how many.
    ///
    /// Each row with ``DownloadRecord/isPermanentFailure`` becomes `queued`, its error, HTTP status and lease owner
    /// cleared (its attempts are kept).
    @discardableResult
    public func requeueFailedDownloads() throws(StoreError) -> Int {
        try trackerConnection.requeueFailedDownloads(now: Date())
    }

    /// Marks completed downloads as removed by retention (their files were deleted).
    public func markDownloadsRemoved(_ ids: [DownloadID]) throws(StoreError) {
        guard !ids.isEmpty else { return }
        try trackerConnection.markDownloadsRemoved(ids, now: Date())
    }

    /// Every tracker row, oldest first.
    public func downloads() throws(StoreError) -> [DownloadRecord] {
        try trackerConnection.downloads()
    }
}
