import ArticleStore
import Foundation
import Ingest
import Support

/// Reads a watched feed list again when it changed (the file watcher or SIGHUP asks) and hands it on to be applied,
/// one reload at a time; counts the list's bad lines.
///
/// It writes nothing: what happened goes to the `report` closure as an ``Event``, which the command words and prints.
/// A list that cannot be read (mid-save, removed, not a list) leaves the feeds watched as they are; the next change
/// reloads.
public final class ListReloader: Sendable {
    /// What a load or reload did.
    public enum Event: Sendable {
        /// The list was read; these are its bad lines (possibly none), told before it is applied.
        case read(problems: [FeedListProblem])
        /// A reload applied the list: the feeds it added and removed.
        case reloaded(ListChange)
        /// A reload could not read the list: the feeds stay as they are.
        case unreadable(any Error)
        /// A reload read the list but the store refused it: the feeds stay as they are.
        case notApplied(StoreError)
    }

    /// The list's path.
    public let path: String
    private let statistics: WatchStatistics
    private let apply: @Sendable (FeedList) throws(StoreError) -> ListChange
    private let report: @Sendable (Event) -> Void
    /// One reload at a time (the file watcher's thread and the signal queue may both ask).
    private let lock = Lock(())

    /// Reloads the list at `path`, applying it with `apply` (the service's ``WatchService/load(_:source:)``), counting
    /// its bad lines in `statistics`, and telling `report` what happened.
    public init(path: String, statistics: WatchStatistics, apply: @escaping @Sendable (FeedList) throws(StoreError) -> ListChange,
                report: @escaping @Sendable (Event) -> Void) {
        self.path = path
        self.statistics = statistics
        self.apply = apply
        self.report = report
    }

    /// Applies `list`, read by the caller (the first load): reports its bad lines, counts them, and returns what
    /// changed.
    ///
    /// - Throws: the store's error; the feeds watched are then unchanged.
    @discardableResult
    public func load(_ list: FeedList) throws(StoreError) -> ListChange {
        report(.read(problems: list.problems))
        statistics.setListProblems(list.problems.count)
        return try apply(list)
    }

    /// Reads the list again and applies it; reports what happened.
    public func reload() {
        lock.withLock { _ in
            let list: FeedList
            do {
                list = try FeedList.load(path: path)
            } catch {
                report(.unreadable(error))
                return
            }
            do throws(StoreError) {
                report(.reloaded(try load(list)))
            } catch {
                report(.notApplied(error))
            }
        }
    }
}
