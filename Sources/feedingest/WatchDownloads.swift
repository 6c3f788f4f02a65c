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
    private let console: WatchConsole

    /// Downloads with `manager` the enclosures of `selection`'s feeds; its lines go to `console`.
    init(manager: DownloadManager, selection: DownloadSelection, console: WatchConsole) {
        self.manager = manager
        self.selection = selection
        self.console = console
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
                console.line("feedingest: cannot queue downloads: \(error)")
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
