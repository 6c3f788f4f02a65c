import Dispatch
import Foundation
import Ingest
import Synchronization

/// SIGINT and SIGTERM during a run: the first cancels the pipeline (complete work stays committed, the summary is
/// printed, the exit status is 128 + the signal); a second exits at once.
final class SignalWatcher {
    /// The first signal received; shared with the handlers.
    private final class First: Sendable {
        let signal = Mutex<Int32?>(nil)
    }

    private let sources: [any DispatchSourceSignal]
    private let first = First()

    /// The first signal received, if any.
    var received: Int32? { first.signal.withLock { $0 } }

    /// Stops watching: the signals' default actions return, and the handlers (which hold the pipeline) are released.
    func stop() {
        for source in sources { source.cancel() }
        for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
    }

    init(pipeline: IngestPipeline, quiet: Bool) {
        let queue = DispatchQueue(label: "feedingest.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)  // delivered through the dispatch source instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            sources.append(source)
        }
        self.sources = sources
        for (source, number) in zip(sources, [SIGINT, SIGTERM]) {
            source.setEventHandler { [first] in
                let again = first.signal.withLock { received -> Bool in
                    if received != nil { return true }
                    received = number
                    return false
                }
                if again { _exit(128 + number) }
                if !quiet {
                    let clear = isatty(2) == 1 ? "\r\u{1B}[K" : ""  // over the progress line, not after it
                    StandardStreams.error.write(clear + "feedingest: interrupted; finishing what is complete (again to quit at once)\n")
                }
                pipeline.cancel()
            }
            source.resume()
        }
    }
}
