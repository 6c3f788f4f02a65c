import ArticleStore
import Foundation
import Ingest
import Watch

/// What a watch says on stderr: it counts the runs' events in the ``WatchStatistics`` and words what they tell (failed
/// feeds, lost leases, the store and the network going and coming back, the list's bad lines and reloads) through the
/// ``WatchConsole``; its summary ends the watch.
final class WatchReporter: IngestObserver, Sendable {
    let statistics: WatchStatistics
    let console: WatchConsole
    private var quiet: Bool { console.quiet }

    init(statistics: WatchStatistics, console: WatchConsole) {
        self.statistics = statistics
        self.console = console
    }

    func ingest(_ event: IngestEvent) {
        if case .textReplaced(let entry, let replacement) = event, !quiet {
            console.line("feedingest: \(entry.source): \(replacement)")
        }
        for notice in statistics.count(event) { tell(notice) }
    }

    /// The service's own events.
    func report(_ event: WatchEvent) {
        let notice = statistics.count(event)
        switch event {
        case .paused(let reason, let remote):
            if !quiet { console.line("feedingest: offline (\(reason)): pausing \(StatusObserver.plural(remote, "remote feed")); local feeds go on") }
        case .resumed(let overdue):
            if !quiet { console.line("feedingest: online again: resuming remote feeds (\(overdue) overdue, spread out)") }
        case .routeMonitorUnavailable(let reason):
            if !quiet { console.line("feedingest: no route monitor (\(reason)); pausing only when transfers fail for want of a network") }
        case .clockJumped:
            if !quiet { console.line("feedingest: the machine slept; counting it as a network change") }
        case .storeError(let error) where error.isUnavailable:
            if let notice { tell(notice) }
        case .storeError(let error):
            console.line("feedingest: cannot read the feeds' schedule from the store: \(error)")
        }
    }

    private func tell(_ notice: WatchStatistics.Notice) {
        switch notice {
        case .feedFailed(let entry, let error):
            if !quiet { console.line("feedingest: \(entry.source): \(error)") }
        case .leaseLost(let entry, let error):
            if !quiet { console.line("feedingest: \(entry.source): \(error.message); another process took it over") }
        case .storeUnavailable(let error):
            console.line("feedingest: the store is unavailable (\(error)); feeds wait and are tried again, not counted as failed")
        case .storeReachable(let waited):
            if !quiet {
                console.line("feedingest: the store is reachable again (\(StatusObserver.plural(waited, "feed")) waited for it and are tried again)")
            }
        }
    }

    /// What reloading the list named `name` (at `path`) did.
    func tell(_ event: ListReloader.Event, name: String, path: String) {
        switch event {
        case .read(let problems):
            guard !quiet else { return }
            for problem in problems {
                let text = problem.text.isEmpty ? "" : ": \(problem.text)"
                console.line("feedingest: \(name):\(problem.line): \(problem.message)\(text)")
            }
        case .reloaded(let change):
            if !quiet {
                console.line("feedingest: \(name) reloaded: \(StatusObserver.plural(change.feeds, "feed")) "
                             + "(\(change.added) added, \(change.removed) removed)")
            }
        case .unreadable(let error):
            let reason = (error as? FeedListError)?.description ?? ListFile.reason(error)
            if !quiet { console.line("feedingest: cannot read the feed list \(path): \(reason); keeping the feeds watched") }
        case .notApplied(let error):
            console.line("feedingest: cannot apply the feed list \(path): \(error)")
        }
    }

    /// `1,234 fetches (1,200 ok, 30 not modified, 4 failed); 56 new, 7 updated articles; 1.2 MB`.
    func summary() -> String {
        let c = statistics.current
        let parts = WatchStatistics.FetchOutcome.allCases.compactMap { outcome -> String? in
            guard let count = c.fetches[outcome], count > 0 else { return nil }
            return "\(count) \(outcome.rawValue.replacingOccurrences(of: "_", with: " "))"
        }
        return "\(StatusObserver.plural(c.fetchCount, "fetch").replacingOccurrences(of: "fetchs", with: "fetches"))"
            + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))")
            + "; \(c.new) new, \(c.updated) updated articles; \(StatusObserver.bytes(c.bytes))"
    }
}
