import ArticleStore
import Fetch
import Foundation
import Support
import Syndication

/// `feedingest downloads [--json] [--store PATH]`: the download tracker, as a table or as NDJSON.
enum DownloadsCommand: Subcommand {
    static let help = """
        Usage: feedingest downloads [--json] [--store STORE]

        Lists the download tracker, oldest first: each enclosure's state (queued, downloading, paused, done,
        failed, removed), bytes done and total, path, URL and last error. Works offline and never creates a store.

        A download whose process died (its claim ran out) shows as paused: the next 'feedingest download' resumes
        it. A failed download shows its error, with the HTTP status when the server answered one; one that failed
        for good (404, 410, ...: see 'feedingest download --help') says so and is not tried again until
        'feedingest download --retry-failed'. BYTES is the committed length of the partial file (flushed to disk),
        or the file's size once done. --json prints one JSON object a download instead
        (Schemas/download.schema.json).

        Options:
        \(options.help())

        Exit status: 0 when the store was read, 2 for usage errors and a missing or unreadable store.

        Examples:
          feedingest downloads
          feedingest downloads --json | jq -r 'select(.state == "failed") | .url + ": " + .error'
          feedingest downloads --json | jq -r 'select(.permanentFailure) | "\\(.httpStatus) \\(.url)"'
        """

    static let name = "downloads"

    static let json = FeedsCommand.json

    static let options = OptionTable([json, CommonOptions.store])

    /// What to show, and how.
    struct Configuration {
        /// JSON lines instead of the table (`--json`).
        var json = false
        /// The store `--store` names; `nil` for the default one.
        var storeOption: String?
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        if let extra = arguments.positional.first {
            throw UsageError(message: "downloads takes no arguments, got '\(extra)'", hint: "see 'feedingest downloads --help'")
        }
        return Configuration(json: arguments.contains(json), storeOption: arguments.text(CommonOptions.store))
    }

    static func run(_ configuration: Configuration) -> Int32 {
        guard let context = StoreLocation.openForReading(option: configuration.storeOption) else { return 2 }
        let rows: [DownloadRecord]
        var feeds: [FeedID: String] = [:]
        do {
            rows = try context.downloads()
            for feed in try context.feedStatuses() { feeds[feed.id] = StoreLocation.displayName(ofFeed: feed.url) }
        } catch {
            StandardStreams.error.write("feedingest: cannot read the store \(error)\n")
            return 2
        }
        let now = Date()
        if configuration.json {
            var json = JSONWriter()
            for row in rows {
                json.reset()
                write(row, feed: row.feed.flatMap { feeds[$0] }, now: now, to: &json)
                json.raw(0x0A)
                json.withBytes { StandardStreams.output.write($0) }
            }
        } else if !rows.isEmpty {
            StandardStreams.output.write(table(rows, now: now))
        } else {
            // An empty table is no answer: say why on stderr (stdout stays empty for scripts).
            StandardStreams.error.write("feedingest: no downloads in the store yet ('feedingest download' queues the enclosures of feeds tagged 'download', or of --feed URL)\n")
        }
        StandardStreams.output.flush()
        return 0
    }

    /// One download as a JSON object (`Schemas/download.schema.json`).
    static func write(_ row: DownloadRecord, feed: String?, now: Date, to json: inout JSONWriter) {
        json.beginObject()
        json.field("id", Int(row.id.rawValue))
        json.field("state", row.displayState(now: now).rawValue)
        json.field("url", Redaction.redactedURL(row.url))
        json.field("finalURL", row.finalURL == row.url ? nil : row.finalURL.map(Redaction.redactedURL))
        json.field("path", row.path)
        json.field("bytes", Int(row.committedOffset))
        json.field("total", row.expectedLength.map { Int($0) })
        json.field("mediaType", row.mediaType)
        json.field("feed", feed)
        json.field("attempts", row.attempts)
        json.field("validator", row.validator)
        json.field("error", row.error.map(Redaction.redactedText))
        json.field("errorKind", row.errorKind)
        json.field("httpStatus", row.httpStatus)
        if row.isPermanentFailure {
            json.key("permanentFailure")
            json.bool(true)
        }
        json.field("queued", row.queuedAt)
        json.field("updated", row.updatedAt)
        json.field("completed", row.completedAt)
        json.endObject()
    }

    /// The table: STATE, BYTES (done / total), ATTEMPTS, then the path, the URL and the error.
    static func table(_ rows: [DownloadRecord], now: Date) -> String {
        var lines = [["STATE", "BYTES", "TRIES", "PATH"]]
        for row in rows {
            let total = row.expectedLength.map { " / " + DownloadProgressObserver.size($0) } ?? ""
            var rest = row.path + "  " + Redaction.redactedURL(row.url)
            if let error = row.error {
                rest += "  error" + (row.errorKind.map { " (\($0))" } ?? "") + ": " + Redaction.redactedText(error)
                if row.isPermanentFailure { rest += "; 'feedingest download --retry-failed' tries again" }
            }
            lines.append([row.displayState(now: now).rawValue, DownloadProgressObserver.size(row.committedOffset) + total, String(row.attempts), rest])
        }
        let widths = (0..<3).map { column in lines.map { $0[column].count }.max() ?? 0 }
        var text = ""
        for line in lines {
            for column in 0..<3 { text += line[column] + String(repeating: " ", count: widths[column] - line[column].count) + "  " }
            text += line[3] + "\n"
        }
        return text
    }
}
