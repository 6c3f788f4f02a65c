import ArticleStore
import Fetch
import Foundation
import Support
import Syndication

/// `feedingest feeds [--json] [--store PATH]`: every stored feed's state, as a table or as NDJSON.
enum FeedsCommand: Subcommand {
    static let help = """
        Usage: feedingest feeds [--json] [--all] [--store PATH]

        Shows every subscribed feed of the store (--all: unsubscribed ones too), ordered by URL: its last outcome, consecutive failures, article count,
        last fetch and next allowed fetch, its validators (ETag, Last-Modified), its title and its last error.
        Works offline and never creates a store.

        The output is a table, one line a feed under a header, whether stdout is a terminal or a pipe, so
        'feedingest feeds | grep failed' finds the failing feeds with their errors. Times are local. --json prints
        one JSON object a feed instead (Schemas/feed.schema.json), with the full validators and RFC 3339 dates.

        Table columns: STATUS is the last outcome (updated, not-modified, failed, or unfetched before the first
        fetch ended; unsubscribed for a feed no list or subscription names any more, whose articles are kept; rate-limited when the server last answered 429, which is not a failure; failing after 3 or more
        failures in a row: such a feed is polled at the longest interval, never dropped); FAILS the failures in a row;
        NEXT FETCH the earliest time ingest or watch fetches the feed again without --force ("now" when it may);
        INTERVAL the interval 'feedingest watch' last computed for it ("-" before one) and why: gap (its entries'
        publishing gap), default (too few dated entries), hint (ttl, sy:updatePeriod, max-age or Expires),
        retry-after or backoff (after failures); VALIDATORS which of ETag and Last-Modified the next conditional
        GET sends; then the feed, its title in quotes, and "error: ..." after a failure.

        Options:
        \(options.help())

        Exit status: 0 when the store was read (a store without feeds prints nothing), 2 for usage errors and a
        missing or unreadable store.

        Examples:
          feedingest feeds
          feedingest feeds | grep failed
          feedingest feeds --json | jq -r 'select(.consecutiveFailures > 0) | .url + ": " + .error'
        """

    static let name = "feeds"

    static let json = Flag("--json", help: "one JSON object a line instead of the table")
    static let all = Flag("--all", help: "unsubscribed feeds too")

    static let options = OptionTable([json, all, CommonOptions.store])

    /// What to show, and how.
    struct Configuration {
        /// JSON lines instead of the table (`--json`).
        var json = false
        /// Unsubscribed feeds too (`--all`).
        var all = false
        /// The store `--store` names; `nil` for the default one.
        var storeOption: String?
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        if let extra = arguments.positional.first {
            throw UsageError(message: "feeds takes no arguments, got '\(extra)'", hint: "see 'feedingest feeds --help'")
        }
        return Configuration(json: arguments.contains(json), all: arguments.contains(all), storeOption: arguments.text(CommonOptions.store))
    }

    static func run(_ configuration: Configuration) -> Int32 {
        guard var feeds = StoreLocation.feedsForReading(option: configuration.storeOption) else { return 2 }
        if !configuration.all { feeds = feeds.filter(\.isSubscribed) }
        if configuration.json {
            var json = JSONWriter()
            for feed in feeds {
                json.reset()
                write(feed, to: &json)
                json.raw(0x0A)
                json.withBytes { StandardStreams.output.write($0) }
            }
        } else if !feeds.isEmpty {
            StandardStreams.output.write(table(feeds, now: Date()))
        }
        StandardStreams.output.flush()
        return 0
    }

    /// The feed's last outcome as the table and the JSON name it.
    static func status(of feed: FeedStatus) -> String {
        if !feed.isSubscribed { return "unsubscribed" }
        if feed.isRateLimited { return "rate-limited" }
        if feed.outcome == .failed, feed.isFailing { return "failing" }
        return feed.outcome?.rawValue ?? "unfetched"
    }

    /// An interval for people: `45s`, `12m`, `2.5h`, `3d`.
    static func duration(_ seconds: TimeInterval) -> String {
        func trimmed(_ value: Double) -> String {
            let text = String(format: "%.1f", value)
            return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
        }
        if seconds < 60 { return trimmed(seconds) + "s" }
        if seconds < 3_600 { return trimmed(seconds / 60) + "m" }
        if seconds < 86_400 { return trimmed(seconds / 3_600) + "h" }
        return trimmed(seconds / 86_400) + "d"
    }

    /// One feed as a JSON object (`Schemas/feed.schema.json`).
    static func write(_ feed: FeedStatus, to json: inout JSONWriter) {
        json.beginObject()
        json.field("url", StoreLocation.displayName(ofFeed: feed.url))
        json.field("title", feed.title)
        json.field("homeLink", feed.homeLink.map(Redaction.redactedURL))
        json.field("currentURL", feed.currentURL.map(Redaction.redactedURL))
        json.field("status", status(of: feed))
        json.field("consecutiveFailures", feed.consecutiveFailures)
        json.field("error", feed.error.map(Redaction.redactedText))
        json.field("errorKind", feed.errorKind)
        json.field("lastFetch", feed.lastAttempt)
        json.field("lastSuccess", feed.lastSuccess)
        json.field("nextFetch", feed.nextFetch)
        json.field("interval", feed.interval)
        json.field("scheduleReason", feed.scheduleReason?.rawValue)
        json.field("etag", feed.validators.etag)
        json.field("lastModified", feed.validators.lastModified)
        json.field("articles", feed.articleCount)
        json.field("tags", feed.tags)
        json.key("subscribed")
        json.bool(feed.isSubscribed)
        json.field("listSource", feed.listSource)
        json.endObject()
    }

    /// The table: a header and one line a feed, columns aligned, the variable-length feed, title and error last.
    static func table(_ feeds: [FeedStatus], now: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        var rows = [["STATUS", "FAILS", "ARTICLES", "LAST FETCH", "NEXT FETCH", "INTERVAL", "VALIDATORS", "FEED"]]
        for feed in feeds {
            let validators = [feed.validators.etag.map { _ in "etag" }, feed.validators.lastModified.map { _ in "last-modified" }]
                .compactMap { $0 }.joined(separator: "+")
            var name = StoreLocation.displayName(ofFeed: feed.url)
            if let title = feed.title.map(oneLine), !title.isEmpty { name += "  \"\(title)\"" }
            if let error = feed.error.map(oneLine).map(Redaction.redactedText) { name += "  error" + (feed.errorKind.map { " (\($0))" } ?? "") + ": \(error)" }
            rows.append([
                status(of: feed), String(feed.consecutiveFailures), String(feed.articleCount),
                feed.lastAttempt.map(formatter.string(from:)) ?? "-",
                !feed.isSubscribed ? "-" : feed.nextFetch.flatMap { $0 > now ? formatter.string(from: $0) : nil } ?? "now",
                feed.interval.map { duration($0) + (feed.scheduleReason.map { " (\($0.rawValue))" } ?? "") } ?? "-",
                validators.isEmpty ? "-" : validators, name,
            ])
        }
        let numeric: Set<Int> = [1, 2]
        let widths = (0..<rows[0].count - 1).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var text = ""
        for row in rows {
            var line = ""
            for (column, cell) in row.enumerated() {
                if column == row.count - 1 {
                    line += cell
                } else {
                    let padding = String(repeating: " ", count: widths[column] - cell.count)
                    line += (numeric.contains(column) ? padding + cell : cell + padding) + "  "
                }
            }
            text += line + "\n"
        }
        return text
    }

    /// Text on one line, so one feed stays one line of the table.
    private static func oneLine(_ text: String) -> String { text.onOneLine }
}
