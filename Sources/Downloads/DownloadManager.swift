import ArticleStore
import Dispatch
import Fetch
import Foundation
import Support

/// Which stored articles' enclosures to queue.
public struct DownloadSelection: Sendable, Hashable {
    /// These feeds; `nil` for the feeds carrying ``tag``.
    public var feeds: [FeedID]?
    /// The tag that marks feeds to download from when ``feeds`` is `nil`. Default `download`.
    public var tag: String
    /// Only articles dated at or after this (published, else updated, else first seen).
    public var since: Date?

    /// Creates a selection.
    public init(feeds: [FeedID]? = nil, tag: String = "download", since: Date? = nil) {
        self.feeds = feeds
        self.tag = tag
        self.since = since
    }
}

/// The enclosure download manager: queues enclosures of stored articles, downloads them with resume, and keeps the
/// tracker in the store up to date, so a download survives a kill, a reset, a full disk or a stop.
///
/// ```swift
/// let manager = DownloadManager(store: store, fetcher: fetcher, configuration: DownloadConfiguration(directory: dir))
/// manager.addObserver(DownloadClosureObserver { event in print(event) })
/// _ = try manager.queue(DownloadSelection())        // the feeds tagged "download"
/// let summary = manager.run()                       // blocks until the queue is done (or cancel() is called)
/// ```
///
/// Files: `DIRECTORY/<feed folder>/<file>` (``DownloadNaming``). While incomplete the bytes are in `<file>.download`;
/// once complete and verified the file is flushed and renamed into place atomically. A `.download` file without a
/// tracker row is reported (``DownloadEvent/staleFile(path:)``), never deleted.
///
/// Resume: ``ResumeRules``. Every ``DownloadConfiguration/checkpointInterval`` bytes the partial file is flushed and its
/// length recorded as the committed offset; a resume asks for the bytes from there (`Range`, `If-Range` with the
/// strong validator, `Accept-Encoding: identity`), so a kill loses at most that much.
///
/// Claims: each download is claimed (a lease with an epoch, like a feed's), so processes sharing a store never fetch
/// one file twice; a claim is renewed while bytes flow. Transfers go through `fetcher`: sharing one ``Fetcher`` with
/// feed fetches shares its per-host connection limit.
public final class DownloadManager: Sendable {
    /// The store holding the tracker.
    public let store: Store
    /// The transfers' fetcher.
    public let fetcher: Fetcher
    /// The configuration.
    public let configuration: DownloadConfiguration
    /// The lease owner of the current (or last) run: the one given for the first run, a new one (``LeaseOwner``) for
    /// each later run, so a run claims again what an earlier run of this manager left paused or failed.
    public var owner: String { owners.withLock { $0.current } }
    private let owners: Lock<(current: String, runs: Int)>

    private struct Running {
        var cancelled = false
        var remoteHeld = false
        var transfers: [DownloadID: FetchTransfer] = [:]
        var active: [DownloadID: ActiveDownload] = [:]
        var lastBytes: [DownloadID: (bytes: Int64, at: ContinuousClock.Instant)] = [:]
    }

    private let observers = Lock<[any DownloadObserver]>([])
    private let running = Lock(Running())
    private let summary = Lock(DownloadSummary())
    private let events = DispatchQueue(label: "feedingest.downloads.events")

    /// A manager over `store`, fetching with `fetcher`.
    public init(store: Store, fetcher: Fetcher, configuration: DownloadConfiguration, owner: String = LeaseOwner.make()) {
        self.store = store
        self.fetcher = fetcher
        self.configuration = configuration
        owners = Lock((owner, 0))
    }

    /// Adds an observer; events reach observers in order, one at a time, on one serial queue.
    public func addObserver(_ observer: some DownloadObserver) {
        observers.withLock { $0.append(observer) }
    }

    /// Stops the run from any thread: transfers stop, their partial files are flushed and kept, and the downloads are
    /// recorded as paused.
    public func cancel() {
        let transfers = running.withLock { state -> [FetchTransfer] in
            state.cancelled = true
            return Array(state.transfers.values)
        }
        for transfer in transfers { transfer.cancel() }
    }

    /// Whether ``cancel()`` was called (and ``resume()`` not since).
    public var isCancelled: Bool { running.withLock { $0.cancelled } }

    /// Lets a later ``run()`` download again after ``cancel()``: for a long-running caller that pauses while the
    /// network is down and goes on when it is back (`watch --download`).
    public func resume() {
        running.withLock { $0.cancelled = false }
    }

    /// Holds or releases the downloads from remote hosts (every host but loopback), for a long-running caller whose
    /// network went away (`watch --download`): holding stops their transfers as ``cancel()`` does (partial files
    /// flushed and kept, the downloads recorded as paused), and a remote download claimed while held is recorded paused
    /// without a request; loopback downloads go on. After releasing, a later ``run()`` claims the paused ones again.
    public func holdRemote(_ held: Bool) {
        let transfers = running.withLock { state -> [FetchTransfer] in
            state.remoteHeld = held
            guard held else { return [] }
            return state.transfers.compactMap { id, transfer in
                let url = state.active[id].flatMap { URL(string: $0.url) }
                return url.map(Self.isRemote) == false ? nil : transfer
            }
        }
        for transfer in transfers { transfer.cancel() }
    }

    /// Whether remote downloads are held (``holdRemote(_:)``).
    public var isHoldingRemote: Bool { running.withLock { $0.remoteHeld } }

    /// Whether `url` waits while the network is away: every host but loopback (`localhost`, `127.*`, `::1`).
    public static func isRemote(_ url: URL) -> Bool {
        guard let host = url.host?.lowercased() else { return true }
        return !(host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]")
    }

    private func emit(_ event: DownloadEvent) {
        let list = observers.withLock { $0 }
        events.async { for observer in list { observer.download(event) } }
    }

    // MARK: Queueing

    /// Queues the enclosures of the selected feeds' stored articles that the tracker does not know, newest first; with
    /// ``DownloadConfiguration/keepPerFeed`` only the newest that many per feed, with ``DownloadConfiguration/keepDays``
    /// none older. Returns how many were queued.
    @discardableResult
    public func queue(_ selection: DownloadSelection) throws(StoreError) -> Int {
        let context = try store.makeContext()
        let statuses: [FeedStatus]
        if let feeds = selection.feeds {
            statuses = try context.feedStatuses(feeds)
        } else {
            statuses = try context.feedStatuses().filter { $0.tags.contains(selection.tag) }
        }
        var since = selection.since
        if let days = configuration.keepDays {
            let cutoff = Date().addingTimeInterval(-days * 86_400)
            since = max(since ?? cutoff, cutoff)
        }
        var queued = 0
        for status in statuses {
            var candidates: [(DownloadNaming.Values, DownloadCandidate)] = []
            var articles = 0
            try context.forEachArticle(ArticleQuery(feed: status.id, since: since)) { record in
                if let keep = configuration.keepPerFeed, articles >= keep { return }
                let wanted = record.article.enclosures.filter { configuration.wants(mediaType: $0.type) }
                guard !wanted.isEmpty else { return }
                articles += 1
                for enclosure in wanted {
                    let values = DownloadNaming.Values(url: enclosure.url, mediaType: enclosure.type, feedTitle: status.title,
                                                       feedURL: status.url, title: record.article.title, date: record.date)
                    candidates.append((values, DownloadCandidate(url: enclosure.url, path: "", feed: status.id, article: record.id,
                                                                 mediaType: enclosure.type, articleDate: record.date)))
                }
            }
            for (values, candidate) in candidates where try queue(candidate, values, context) { queued += 1 }
        }
        if queued > 0 { emit(.queued(count: queued)) }
        return queued
    }

    /// Queues one candidate under the first free name; whether it was new.
    private func queue(_ candidate: DownloadCandidate, _ values: DownloadNaming.Values, _ context: StoreContext) throws(StoreError) -> Bool {
        let base = configuration.directory + "/" + configuration.naming.relativePath(for: values)
        var candidate = candidate
        for n in 1...1000 {
            let path = DownloadNaming.numbered(base, n)
            // A file of someone else's (or a stale partial) keeps its name: never overwritten, never deleted.
            if FileManager.default.fileExists(atPath: path) || FileManager.default.fileExists(atPath: path + ".download") {
                if try !context.downloadExists(path: path) { continue }
            }
            candidate.path = path
            switch try context.queueDownload(candidate) {
            case .queued: return true
            case .known: return false
            case .pathTaken: continue
            }
        }
        return false
    }

    /// Queues again the downloads that failed for good, so the next ``run()`` tries them; returns how many.
    ///
    /// Those are the rows with ``DownloadRecord/isPermanentFailure`` (a 404, a 410, ...); without this no run tries
    /// them again.
    @discardableResult
    public func retryFailed() throws(StoreError) -> Int {
        try store.makeContext().requeueFailedDownloads()
    }

    // MARK: Running

    /// Downloads the queue: partial downloads first, ``DownloadConfiguration/jobs`` at once; then applies retention.
    /// Blocks until every claimable download was attempted (or ``cancel()``), and every observer has heard
    /// ``DownloadEvent/runFinished(_:)``.
    public func run() -> DownloadSummary {
        owners.withLock { owners in
            if owners.runs > 0 { owners.current = LeaseOwner.make() }
            owners.runs += 1
        }
        let stale = staleFiles()
        summary.withLock { $0 = DownloadSummary(); $0.staleFiles = stale }
        releaseLeasesOfDeadProcesses()
        for path in stale { emit(.staleFile(path: path)) }

        let tick = DispatchQueue(label: "feedingest.downloads.progress")
        let ticker = DispatchSource.makeTimerSource(queue: tick)
        let interval = configuration.progressInterval
        ticker.schedule(deadline: .now() + .milliseconds(interval.millisecondsRoundedUp), repeating: .milliseconds(max(50, interval.millisecondsRoundedUp)))
        ticker.setEventHandler { [self] in
            let active = progressSnapshot()
            if !active.isEmpty { emit(.progress(active)) }
        }
        ticker.resume()

        let group = DispatchGroup()
        for index in 0..<max(1, configuration.jobs) {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                work()
            }
            thread.name = "feedingest.dl.\(index)"
            thread.start()
        }
        group.wait()
        ticker.cancel()
        tick.sync {}  // a progress event being emitted now still comes before the run's end

        if !isCancelled { applyRetention() }
        let failedForGood = (try? store.makeContext().downloads())?.count { $0.state == .failed && $0.isPermanentFailure } ?? 0
        let final = summary.withLock { summary in
            summary.failedForGood = failedForGood
            return summary
        }
        emit(.runFinished(final))
        events.sync {}
        return final
    }

    private func progressSnapshot() -> [ActiveDownload] {
        let now = ContinuousClock.now
        return running.withLock { state in
            var list: [ActiveDownload] = []
            for (id, var active) in state.active {
                if let last = state.lastBytes[id] {
                    let seconds = (now - last.at).seconds
                    if seconds > 0 { active.rate = Double(active.bytes - last.bytes) / seconds }
                }
                state.lastBytes[id] = (active.bytes, now)
                state.active[id] = active
                list.append(active)
            }
            return list.sorted { $0.id < $1.id }
        }
    }

    /// One worker: claims and downloads until nothing is left.
    private func work() {
        let runOwner = owner
        let context: StoreContext
        do { context = try store.makeContext() } catch {
            emit(.storeFailed(error))
            summary.withLock { $0.failed += 1 }
            return
        }
        while !isCancelled {
            let lease: DownloadLease?
            do { lease = try context.claimDownload(owner: runOwner, duration: configuration.leaseDuration) } catch {
                emit(.storeFailed(error))
                summary.withLock { $0.failed += 1 }
                return
            }
            guard let lease else { return }
            let result = download(lease, context: context)
            summary.withLock { summary in
                summary.bytes += result.bytesReceived
                switch result.record.state {
                case .done: summary.completed += 1
                case .paused: summary.paused += 1
                default: summary.failed += 1
                }
            }
            emit(result.error == nil ? .finished(result) : .failed(result))
        }
    }

    // MARK: One download

    /// Downloads one claimed row, with up to ``DownloadConfiguration/attemptsPerRun`` attempts, and records how it ended.
    func download(_ lease: DownloadLease, context: StoreContext) -> DownloadResult {
        let state = AttemptState(lease)
        var received: Int64 = 0
        var started = false
        let partial = lease.partialPath

        func end(_ final: DownloadState, _ error: DownloadError?) -> DownloadResult {
            running.withLock {
                $0.active[lease.id] = nil
                $0.lastBytes[lease.id] = nil
                $0.transfers[lease.id] = nil
            }
            var record = lease
            record.state = final
            record.validator = state.validator
            record.expectedLength = state.expectedLength
            record.finalURL = state.finalURL
            record.committedOffset = state.committedOffset
            record.error = error?.message
            record.errorKind = error?.kindName
            record.httpStatus = error?.status
            record.isPermanentFailure = final == .failed && error?.isPermanent == true
            var error = error
            do {
                if try !context.finishDownload(lease, state: final, progress: state.progress, error: error?.message, errorKind: error?.kindName,
                                               httpStatus: record.httpStatus, permanentFailure: record.isPermanentFailure) {
                    error = DownloadError(kind: .leaseLost, message: "another process claimed this download; nothing more was written",
                                          url: lease.url, path: lease.path)
                    record.state = .failed
                    record.isPermanentFailure = false
                }
            } catch let storeError {
                error = DownloadError(kind: .store, message: "recording the download failed: \(storeError)", url: lease.url, path: lease.path)
                record.state = .failed
                record.isPermanentFailure = false
            }
            return DownloadResult(record: record, error: error, bytesReceived: received, resumedFrom: state.resumedFrom ?? 0, restart: state.restart)
        }

        guard let url = URL(string: lease.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            let scheme = URL(string: lease.url)?.scheme.map { "'\($0)'" } ?? "none"
            return end(.failed, DownloadError(kind: .unsupportedScheme,
                                              message: "refused: not an http or https URL (scheme \(scheme)); nothing was fetched",
                                              url: lease.url))
        }
        let remote = Self.isRemote(url)
        /// Whether this download must stop now: the run was cancelled, or remote downloads are held and this is one.
        func stopped() -> Bool { running.withLock { $0.cancelled || (remote && $0.remoteHeld) } }
        if remote && isHoldingRemote {
            return end(.paused, DownloadError(kind: .cancelled, message: "held while the network is away; nothing was fetched",
                                              url: lease.url, path: partial))
        }
        let directory = (lease.path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            return end(.failed, fileError(error, path: directory, url: lease.url))
        }
        // Renamed into place by a run killed before it could record it.
        if !FileManager.default.fileExists(atPath: partial), let expected = state.expectedLength, DownloadFiles.size(of: lease.path) == expected {
            state.committedOffset = expected
            return end(.done, nil)
        }

        var forceWhole = false
        var tries = 0
        while true {
            tries += 1
            let file: FileConsumer
            do { file = try FileConsumer(path: partial) } catch {
                return end(.failed, fileError(error, path: partial, url: lease.url))
            }
            file.checkpointInterval = configuration.checkpointInterval
            let plan = forceWhole ? .whole
                : ResumeRules.plan(committedOffset: state.committedOffset, localLength: file.offset, validator: state.validator)
            if !started {
                started = true
                emit(.started(lease, resumingFrom: plan.offset))
            }
            var request = FetchRequest(url: url)
            if case .from(let offset, let validator) = plan { request.byteRange = ByteRangeRequest(offset: offset, validator: validator) }
            request.asksForIdentityEncoding = true
            request.maximumReceiveRate = configuration.maximumReceiveRate
            request.maximumBodyBytes = configuration.maximumFileBytes
            request.totalTimeout = .zero
            request.accept = "*/*"
            let id = lease.id
            let consumer = DownloadConsumer(file: file, plan: plan, state: state, context: context, leaseDuration: configuration.leaseDuration) {
                [self] bytes, expected in
                let resumedFrom = state.resumedFrom ?? 0
                running.withLock {
                    $0.active[id]?.bytes = bytes
                    $0.active[id]?.expectedLength = expected
                    $0.active[id]?.resumedFrom = resumedFrom
                }
            }
            let transfer = fetcher.start(request)
            let cancelled = running.withLock { run -> Bool in
                run.transfers[id] = transfer
                if run.active[id] == nil {
                    run.active[id] = ActiveDownload(id: id, url: lease.url, path: lease.path, bytes: plan.offset,
                                                    expectedLength: state.expectedLength, rate: 0, resumedFrom: state.resumedFrom ?? 0)
                }
                return run.cancelled || (remote && run.remoteHeld)
            }
            if cancelled { transfer.cancel() }
            let result = transfer.deliver(to: consumer)
            running.withLock { _ = $0.transfers.removeValue(forKey: id) }
            received += result.bodyBytes
            if let final = result.finalURL { state.finalURL = final.absoluteString }

            /// Flushes what this attempt wrote and records it; `false` when the lease was lost.
            func keepPartial() -> DownloadError? {
                guard file.response != nil else { return nil }  // nothing written by this attempt: the record stands
                do {
                    try consumer.record(try file.checkpoint())
                } catch is LeaseLost {
                    return DownloadError(kind: .leaseLost, message: "another process claimed this download", url: lease.url, path: lease.path)
                } catch let error as FileWriteError {
                    return fileError(error, path: partial, url: lease.url)
                } catch {
                    return DownloadError(kind: .store, message: "recording the partial file failed: \(error)", url: lease.url, path: partial)
                }
                return nil
            }
            let retry = tries < max(1, configuration.attemptsPerRun) && !stopped()

            switch result.outcome {
            case .ok, .notModified:
                let length = file.offset
                file.close()
                guard result.isOK, ResumeRules.isComplete(length: length, expectedLength: state.expectedLength) else {
                    let expected = state.expectedLength.map(String.init) ?? "unknown"
                    let error = DownloadError(kind: .badResponse, message: "the body ended at \(length) bytes, \(expected) expected; the partial file is kept",
                                              url: lease.url, path: partial, status: result.response?.status)
                    if let expected = state.expectedLength, length > expected {
                        state.committedOffset = 0  // longer than the whole: those bytes are not the file's
                        forceWhole = true
                    }
                    if retry { pause(); continue }
                    return end(.failed, error)
                }
                if let error = complete(partial: partial, path: lease.path, url: lease.url) { return end(.failed, error) }
                state.committedOffset = length
                state.expectedLength = length
                return end(.done, nil)

            case .failed(let error):
                if error.status == 416, case .from(let offset, _) = plan {
                    if ResumeRules.isComplete(after416: result.response?.contentRange, localLength: offset, expectedLength: state.expectedLength) {
                        do { try file.truncate(to: offset); _ = try file.checkpoint() } catch {
                            return end(.failed, fileError(error, path: partial, url: lease.url))
                        }
                        file.close()
                        if let error = complete(partial: partial, path: lease.path, url: lease.url) { return end(.failed, error) }
                        state.committedOffset = offset
                        state.expectedLength = offset
                        if state.resumedFrom == nil { state.resumedFrom = offset }
                        return end(.done, nil)
                    }
                    forceWhole = true
                    if retry { continue }
                }
                if error.kind == .consumerFailed {
                    switch error.underlying {
                    case let restart as RestartRequest:
                        forceWhole = true
                        if retry { continue }
                        return end(.failed, DownloadError(kind: .badResponse, message: restart.reason, url: lease.url, status: error.status))
                    case is LeaseLost:
                        running.withLock { $0.active[lease.id] = nil }
                        let lost = DownloadError(kind: .leaseLost, message: "another process claimed this download; nothing more was written",
                                                 url: lease.url, path: lease.path)
                        var record = lease
                        record.state = .failed
                        return DownloadResult(record: record, error: lost, bytesReceived: received, resumedFrom: state.resumedFrom ?? 0,
                                              restart: state.restart)
                    case let write as FileWriteError:
                        let problem = fileError(write, path: partial, url: lease.url)
                        _ = keepPartial()
                        return end(.failed, problem)
                    case let store as StoreError:
                        return end(.failed, DownloadError(kind: .store, message: "recording progress failed: \(store)", url: lease.url))
                    default:
                        break
                    }
                }
                if FailurePolicy.isPermanent(error.kind) {
                    // Retrying meets the same answer: no partial file stays behind, and no run claims the row again
                    // until it is queued again.
                    file.close()
                    do { try DownloadFiles.remove(partial) } catch {
                        return end(.failed, fileError(error, path: partial, url: lease.url))
                    }
                    state.committedOffset = 0
                    return end(.failed, permanentError(error, url: lease.url))
                }
                if let problem = keepPartial() { return end(.failed, problem) }
                if error.kind == .cancelled && stopped() {
                    return end(.paused, DownloadError(kind: .cancelled, message: "stopped; the partial file is kept for the next run",
                                                      url: lease.url, path: partial))
                }
                let transient: Bool
                switch error.kind {
                case .truncated, .network, .timeout, .connectionRefused, .serviceUnavailable: transient = true
                default: transient = false
                }
                if transient && retry { pause(); continue }
                return end(.failed, DownloadError(kind: .fetch, message: error.message, url: lease.url, fetchKind: error.kind, status: error.status))
            }
        }
    }

    /// The error of a transfer that failed for good (``FailurePolicy/isPermanent(_:)``): the status and its reason
    /// phrase (else the transfer's message), and that no run tries it again until it is queued again.
    private func permanentError(_ error: FetchError, url: String) -> DownloadError {
        var what = error.message
        switch error.kind {
        case .httpStatus(let status): what = FailurePolicy.describe(status: status)
        case .gone: what = FailurePolicy.describe(status: 410)
        default: break
        }
        return DownloadError(kind: .fetch, message: "\(what): a permanent failure, not retried until queued again", url: url,
                             fetchKind: error.kind, status: error.status)
    }

    private func pause() {
        let seconds = configuration.retryDelay.seconds
        if seconds > 0 { Thread.sleep(forTimeInterval: seconds) }
    }

    /// Puts a complete, flushed partial in place (``DownloadFiles/moveIntoPlace(_:as:)``).
    private func complete(partial: String, path: String, url: String) -> DownloadError? {
        do { try DownloadFiles.moveIntoPlace(partial, as: path) } catch {
            return fileError(error, path: path, url: url)
        }
        return nil
    }

    private func fileError(_ error: any Error, path: String, url: String) -> DownloadError {
        if let error = error as? FileWriteError {
            return DownloadError(kind: error.isDiskFull ? .diskFull : .fileError,
                                 message: error.isDiskFull ? "disk full: \(error) (the partial file is kept; free space and run again)" : "\(error)",
                                 url: url, path: error.path, errno: error.code)
        }
        let code = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? POSIXError).map { Errno(rawValue: $0.code.rawValue) }
        let disk = code == .noSpace || code == .quotaExceeded
        return DownloadError(kind: disk ? .diskFull : .fileError,
                             message: "cannot create \(path): \(code.map { "\($0)" } ?? error.localizedDescription)", url: url, path: path,
                             errno: code)
    }


    /// Ends the live leases held by processes of this machine that no longer run (killed with SIGKILL, crashed), so
    /// their downloads resume now instead of when the lease runs out (``LeaseOwner/isDefunct(_:)``); another machine's
    /// leases are left to expire.
    private func releaseLeasesOfDeadProcesses() {
        guard let context = try? store.makeContext(), let rows = try? context.downloads() else { return }
        let now = Date()
        for row in rows where row.state == .downloading && (row.leaseUntil ?? .distantPast) > now {
            guard let owner = row.leaseOwner, owner != self.owner, LeaseOwner.isDefunct(owner) else { continue }
            let pid = owner.split(separator: ":").dropFirst().first.map(String.init) ?? "?"
            let progress = DownloadProgress(finalURL: row.finalURL, validator: row.validator, expectedLength: row.expectedLength,
                                            committedOffset: row.committedOffset)
            _ = try? context.finishDownload(row, state: .paused, progress: progress, error: "its process (pid \(pid)) ended without finishing",
                                            errorKind: "download.process-died")
        }
    }

    // MARK: Stale partials and retention

    /// `.download` files under the directory that no tracker row claims: reported, never deleted.
    public func staleFiles() -> [String] {
        guard let known = try? store.makeContext().downloads() else { return [] }
        let partials = Set(known.map(\.partialPath))
        let root = configuration.directory
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var stale: [String] = []
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".download") else { continue }
            let path = root + "/" + relative
            if !partials.contains(path) { stale.append(path) }
        }
        return stale.sorted()
    }

    /// Deletes the completed files that ``DownloadConfiguration/keepPerFeed`` and ``DownloadConfiguration/keepDays``
    /// no longer keep (never one in progress), and marks their rows removed.
    private func applyRetention() {
        guard configuration.keepPerFeed != nil || configuration.keepDays != nil else { return }
        let context: StoreContext
        let rows: [DownloadRecord]
        do {
            context = try store.makeContext()
            rows = try context.downloads().filter { $0.state == .done }
        } catch {
            emit(.storeFailed(error))
            return
        }
        func date(_ row: DownloadRecord) -> Date { row.articleDate ?? row.completedAt ?? row.queuedAt }
        var doomed: [DownloadRecord] = []
        if let days = configuration.keepDays {
            let cutoff = Date().addingTimeInterval(-days * 86_400)
            doomed += rows.filter { date($0) < cutoff }
        }
        if let keep = configuration.keepPerFeed {
            let byFeed = Dictionary(grouping: rows) { $0.feed?.rawValue ?? -1 }
            for (_, list) in byFeed {
                let sorted = list.sorted { date($0) == date($1) ? $0.id > $1.id : date($0) > date($1) }
                doomed += sorted.dropFirst(max(0, keep))
            }
        }
        var seen = Set<DownloadID>()
        doomed = doomed.filter { seen.insert($0.id).inserted }
        var removed: [DownloadRecord] = []
        for row in doomed {
            do {
                try DownloadFiles.remove(row.path)
                removed.append(row)
            } catch {
                emit(.failed(DownloadResult(record: row, error: fileError(error, path: row.path, url: row.url), bytesReceived: 0, resumedFrom: 0)))
            }
        }
        do { try context.markDownloadsRemoved(removed.map(\.id)) } catch {
            emit(.storeFailed(error))
            return
        }
        for var row in removed {
            row.state = .removed
            emit(.removed(row))
        }
        summary.withLock { $0.removed += removed.count }
    }
}
