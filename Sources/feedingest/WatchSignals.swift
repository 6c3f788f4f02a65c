import Dispatch
import Foundation
import Synchronization
import SystemdNotify
import Watch

/// SIGINT and SIGTERM (the first stops gracefully, a second exits at once) and SIGHUP (reload) for watch.
final class WatchSignals {
    private let sources: [any DispatchSourceSignal]
    private static let numbers = [SIGINT, SIGTERM, SIGHUP]

    init(service: WatchService, reloader: ListReloader, notifier: ServiceNotifier, stats: WatchStats, quiet: Bool,
         onStop: @escaping @Sendable () -> Void = {}) {
        let queue = DispatchQueue(label: "feedingest.signals")
        let first = Mutex<Int32?>(nil)
        var sources: [any DispatchSourceSignal] = []
        for number in Self.numbers {
            signal(number, SIG_IGN)  // delivered through the dispatch source instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            if number == SIGHUP {
                source.setEventHandler { reloader.reload() }
            } else {
                source.setEventHandler {
                    let again = first.withLock { received -> Bool in
                        if received != nil { return true }
                        received = number
                        return false
                    }
                    if again { _exit(128 + number) }
                    _ = try? notifier.stopping(status: "stopping: finishing the feeds in flight")
                    if !quiet { stats.line("feedingest: stopping; finishing the feeds in flight (again to quit at once)") }
                    service.stop()
                    onStop()
                }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    func stop() {
        for source in sources { source.cancel() }
        for number in Self.numbers { signal(number, SIG_DFL) }
    }
}
