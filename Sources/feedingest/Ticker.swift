import Foundation
import SystemdNotify
import Watch

/// Once a second: the status line; every 5 seconds: the metrics file and systemd's STATUS=; the watchdog's keep-alive
/// twice per its interval.
final class Ticker: Sendable {
    private let service: WatchService
    private let reporter: WatchReporter
    private let notifier: ServiceNotifier
    private let metricsPath: String?
    private let stopping = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(service: WatchService, reporter: WatchReporter, notifier: ServiceNotifier, metricsPath: String?) {
        self.service = service
        self.reporter = reporter
        self.notifier = notifier
        self.metricsPath = metricsPath
    }

    func statusText() -> String {
        let snapshot = service.snapshot()
        let network = snapshot.offlineReason.map { "paused (\($0))" } ?? "online"
        return "\(StatusObserver.plural(snapshot.feeds, "feed")) · \(snapshot.dueWithinMinute) due in 1 min · "
            + "\(snapshot.inFlight) in flight · \(network) · \(reporter.statistics.current.today) articles today"
    }

    func start() {
        let thread = Thread { [self] in
            defer { done.signal() }
            var tick = 0
            let watchdogEvery = notifier.watchdogInterval.map { max(1, Int(Double($0.components.seconds) / 2)) }
            writeMetrics()
            while stopping.wait(timeout: .now() + 1) == .timedOut {
                tick += 1
                StandardStreams.output.checkReader()  // a reader gone while nothing is printed stops the service too
                reporter.console.draw(statusText())
                if tick % 5 == 0 {
                    writeMetrics()
                    _ = try? notifier.status(statusText())
                }
                if let watchdogEvery, tick % watchdogEvery == 0 { _ = try? notifier.watchdog() }
            }
            writeMetrics()
        }
        thread.name = "feedingest.ticker"
        thread.start()
    }

    func stop() {
        stopping.signal()
        done.wait()
    }

    /// Writes the metrics to a temporary file beside the target and renames it over (the textfile collector never
    /// reads half a file).
    private func writeMetrics() {
        guard let metricsPath else { return }
        let text = WatchMetrics.text(reporter.statistics.current, service.snapshot(), downloads: reporter.statistics.countsDownloads)
        let temporary = metricsPath + ".\(getpid()).tmp"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, metricsPath) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                reporter.console.line("feedingest: cannot write the metrics to \(metricsPath): \(reason)")
                return
            }
        } catch {
            reporter.console.line("feedingest: cannot write the metrics to \(metricsPath): \(error.localizedDescription)")
        }
    }
}
