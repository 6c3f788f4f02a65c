import ArticleStore
import Fetch
import Foundation
import Ingest
import Syndication

/// Prints each new or updated article on stdout as one NDJSON line, as soon as it is committed: the lines of a commit
/// are flushed together when its batch of events ends (a write per article was 16,000 system calls for a 20 MB feed).
///
/// When stdout closes (the reader exited), the articles committed from then on cannot be printed: the observer keeps
/// the earliest commit time among them (and among the lines still buffered then), which ``notPrintedSince`` gives, so
/// the command can name the `articles --since` that prints them from the store.
final class ArticleOutputObserver: IngestObserver, @unchecked Sendable {
    // @unchecked Sendable: its mutable state, and the standard stream it writes, are touched only from `ingest(_:)`,
    // which the pipeline calls on its one serial event queue, one event at a time, while the main thread waits in
    // `IngestPipeline.run` (and reads the state only after it returned).
    private let printsAll: Bool
    private let output: OutputStream
    private var json = JSONWriter()
    /// The earliest commit time of the lines written since the last flush that reached stdout.
    private var unconfirmedSince: Date?
    /// The earliest commit time of an article that was not printed.
    private(set) var notPrintedSince: Date?

    init(printsAll: Bool, output: OutputStream = StandardStreams.output) {
        self.printsAll = printsAll
        self.output = output
    }

    /// Articles that did not reach stdout because it closed.
    var notPrinted: Int { output.lostRecords }

    func ingest(_ event: IngestEvent) {
        switch event {
        case .articleIngested(let stored):
            var extra: [(key: String, value: String)] = []
            switch stored.change {
            case .new?: extra = [("status", "new")]
            case .updated?: extra = [("status", "updated")]
            case .unchanged?: guard printsAll else { return }
            case nil: break
            }
            json.reset()
            stored.article.writeRedacted(to: &json, extra: extra)
            json.raw(0x0A)
            let committed = stored.committedAt ?? Date()
            unconfirmedSince = min(unconfirmedSince ?? committed, committed)
            if !json.withBytes({ output.writeRecord($0) }) { lost() }
        case .runFinished:
            flush()
        default:
            break
        }
    }

    func ingestBatchFinished() {
        flush()
    }

    private func flush() {
        if output.flush() { unconfirmedSince = nil } else { lost() }
    }

    /// The lines not confirmed written are lost with the stream.
    private func lost() {
        guard let since = unconfirmedSince else { return }
        notPrintedSince = min(notPrintedSince ?? since, since)
        unconfirmedSince = nil
    }
}

extension ArticleOutputObserver {
    /// The line for stderr after stdout closed with `reason`: how many articles were not printed and, when they are in
    /// the store, the command that prints them (`storeOption`: the `--store` given, shown as the user may retype it).
    func closedMessage(reason: String, stored: Bool, storeOption: String?) -> String {
        var line = "feedingest: stdout closed (\(reason)): "
        let count = notPrinted
        if count == 0 { return line + "stopped; every article committed before had been written" }
        guard stored else {
            return line + "\(StatusObserver.plural(count, "article")) could not be written (nothing is stored with --no-store)"
        }
        line += "\(StatusObserver.plural(count, "committed article")) could not be written"
        if let since = notPrintedSince {
            var command = "feedingest articles"
            if let storeOption { command += " --store " + Self.shellQuoted(Store.displayName(of: storeOption)) }
            command += " --since " + Self.timestamp(since)
            line += "; they are in the store: '\(command)' prints them, with everything committed after them"
        }
        return line
    }

    /// `date` as RFC 3339 UTC with milliseconds, rounded down, so `--since` includes it.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: milliseconds))
    }

    private static func shellQuoted(_ text: String) -> String {
        let plain = text.allSatisfy { $0.isLetter || $0.isNumber || "/._-:@=%+,".contains($0) }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
