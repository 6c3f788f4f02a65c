import ArticleStore
import Dispatch
import Downloads
import Foundation
import Ingest
import Support
import Watch

/// `watch --download`: queues the enclosures of the articles a watch commits and downloads them on a thread of its own,
/// holding remote downloads while the watch is offline (loopback ones go on, as loopback feeds do) and stopping (partial
/// files flushed, kept and recorded) on a signal.
///
/// The loop: wait until something is pending (the watch's first finished feed or its first word on the network, then a
/// feed that committed new articles, or the network coming back), then queue the selection and run the manager until
/// its queue is done; go on until ``stop()``. The first run waits for the watch's first step so that a watch starting
/// offline holds remote downloads before any is tried.
final class WatchDownloads: IngestObserver, Sendable {
    private struct State {
        /// Work to do: queue and run again.
        var pending = false
        /// Whether the watch has finished a feed yet (or reported its network state).
        var started = false
        var stopping = false
    }

    let manager: DownloadManager
    let selection: DownloadSelection
    private let state = Lock(State())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let stats: WatchStats

    /// Downloads with `manager` the enclosures of `selection`'s feeds; lines and counters go to `stats`.
    init(manager: DownloadManager, selection: DownloadSelection, stats: WatchStats) {
        self.manager = manager
        self.selection = selection
        self.stats = stats
    }

    /// Starts the download thread.
    func start() {
        let thread = Thread { [self] in
            defer { done.signal() }
            loop()
        }
        thread.name = "feedingest.watch-downloads"
        thread.start()
    }

    private func loop() {
        while true {
            let go = state.withLock { state -> Bool? in
                if state.stopping { return nil }
                guard state.pending else { return false }
                state.pending = false
                return true
            }
            guard let go else { return }
            guard go else {
                wake.wait()
                continue
            }
            do {
                try manager.queue(selection)
            } catch {
                stats.line("feedingest: cannot queue downloads: \(error)")
            }
            _ = manager.run()
        }
    }

    /// Marks work to do (or the stop) and wakes the loop.
    private func poke(stopping: Bool = false) {
        state.withLock { state in
            state.pending = true
            state.started = true
            if stopping { state.stopping = true }
        }
        wake.signal()
    }

    /// Stops the transfers (their partial files flushed, kept and recorded as paused) and waits for the thread to end.
    func stop() {
        poke(stopping: true)
        manager.cancel()
        done.wait()
    }

    /// The watch's network state: offline stops the remote transfers (recorded as paused); online runs again, which
    /// resumes them.
    func report(_ event: WatchEvent) {
        switch event {
        case .paused:
            manager.holdRemote(true)
            poke()
        case .resumed:
            manager.holdRemote(false)
            poke()
        default:
            break
        }
    }

    func ingest(_ event: IngestEvent) {
        // A feed done with new or updated articles (committed before this event): its enclosures may be new. The queue
        // itself picks the selection's feeds and skips what the tracker knows.
        guard case .feedFinished(_, let result) = event else { return }
        var counts = FeedCounts()
        switch result {
        case .ok(let value), .failed(_, let value): counts = value
        default: break
        }
        guard counts.new + counts.updated > 0 || !state.withLock({ $0.started }) else { return }
        poke()
    }
}

/// `watch --download`'s lines on stderr (one per finished, failed or paused download) and its counters for the metrics.
struct WatchDownloadObserver: DownloadObserver {
    let stats: WatchStats
    let quiet: Bool

    /// The bytes a download added to its file: from where it resumed to the committed (flushed and recorded) offset.
    /// (``DownloadResult/bytesReceived`` counts what libcurl handed over, which was seen to exceed the file by 16 KiB.)
    static func written(_ result: DownloadResult) -> Int64 { max(0, result.record.committedOffset - result.resumedFrom) }

    func download(_ event: DownloadEvent) {
        switch event {
        case .finished(let result):
            stats.countDownload(outcome: "done", bytes: Self.written(result))
            if !quiet {
                stats.line("feedingest: downloaded \(result.record.path) (\(DownloadProgressObserver.size(result.record.committedOffset))"
                           + DownloadProgressObserver.resumption(result) + ")")
            }
        case .failed(let result):
            if result.record.state == .paused {
                stats.countDownload(outcome: "paused", bytes: Self.written(result))
                if !quiet { stats.line("feedingest: paused \(result.record.path) at \(DownloadProgressObserver.size(result.record.committedOffset))") }
            } else {
                stats.countDownload(outcome: "failed", bytes: Self.written(result))
                let error = result.error
                var line = "feedingest: download failed \(result.record.url): \(error?.message ?? "unknown error")" + (error.map { " [\($0.kindName)]" } ?? "")
                if result.record.isPermanentFailure { line += "; 'feedingest download --retry-failed' tries it again" }
                stats.line(line)
            }
        case .staleFile(let path):
            if !quiet { stats.line("feedingest: stale partial file without a tracker row, left alone: \(path)") }
        case .removed(let record):
            if !quiet { stats.line("feedingest: removed \(record.path) (retention)") }
        case .storeFailed(let error):
            stats.countDownload(outcome: "failed", bytes: 0)
            stats.line("feedingest: download store error: \(error)")
        case .queued, .started, .progress, .runFinished:
            break
        }
    }
}
