import ArticleStore
import Foundation
import Ingest
import Synchronization
import Watch

/// Reads the list again when it changes (inotify or SIGHUP) and hands it to the service; reports bad lines.
final class ListReloader: Sendable {
    let path: String
    let name: String
    let service: WatchService
    let stats: WatchStats
    let quiet: Bool
    /// One reload at a time (inotify's thread and the signal queue may both ask).
    private let lock = Mutex(())

    init(path: String, name: String, service: WatchService, stats: WatchStats, quiet: Bool) {
        self.path = path
        self.name = name
        self.service = service
        self.stats = stats
        self.quiet = quiet
    }

    func apply(_ list: FeedList, initial: Bool) throws(StoreError) {
        if !quiet {
            for problem in list.problems {
                let text = problem.text.isEmpty ? "" : ": \(problem.text)"
                stats.line("feedingest: \(name):\(problem.line): \(problem.message)\(text)")
            }
        }
        stats.setListProblems(list.problems.count)
        let change = try service.load(list, source: ListFile.source(of: path))
        if !initial, !quiet {
            stats.line("feedingest: \(name) reloaded: \(StatusObserver.plural(change.feeds, "feed")) "
                       + "(\(change.added) added, \(change.removed) removed)")
        }
    }

    func reload() {
        lock.withLock { _ in
            let list: FeedList
            do {
                list = try FeedList.load(path: path)
            } catch {
                // Mid-save, removed, or not a list: keep the feeds as they are; the next change reloads.
                let reason = (error as? FeedListError)?.description ?? ListFile.reason(error)
                if !quiet { stats.line("feedingest: cannot read the feed list \(path): \(reason); keeping the feeds watched") }
                return
            }
            do {
                try apply(list, initial: false)
            } catch {
                stats.line("feedingest: cannot apply the feed list \(path): \(error)")
            }
        }
    }
}
