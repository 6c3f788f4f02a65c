import ArticleStore
import Fetch
import Foundation
import Ingest
import Syndication

/// `feedingest articles [--feed URL] [--since DATE] [--limit N] [--store PATH]`: stored articles as NDJSON, offline.
enum ArticlesCommand: Subcommand {
    static let help = """
        Usage: feedingest articles [--feed URL] [--since DATE] [--limit N] [--store PATH]

        Prints the stored articles on stdout, one JSON line each: the article schema that ingest prints, plus
        "firstSeen" (when the store first saw the article). Works offline: it only reads the store, never
        fetches, and never creates a store.

        Order: newest first by the article's own date (published, else updated, else first seen); articles with
        the same date, newest stored first.

        Options:
        \(options.help())

        Exit status: 0 when the store was read (even with no article), 2 for usage errors, an unknown feed, and
        a missing or unreadable store.

        Examples:
          feedingest articles --since yesterday | jq -r .title
          feedingest articles --feed https://example.org/feed.xml --limit 10
          feedingest articles --since 12h --store ~/news.sqlite > new.ndjson
        """

    static let name = "articles"

    static let feed = ValueOption<String>("--feed", "URL", .text, help: "only this feed: its URL as listed, or the path of a local feed")
    static let since = ValueOption<Date>(
        "--since", "DATE", .date,
        help: "only what arrived in the store at or after DATE: articles first seen then, or whose content changed then "
            + "(updated in place). This is arrival, not the date the feed claims, so an old article a feed adds late is "
            + "included, and a future-dated one is not held back. Each line then carries \"status\": \"new\" (first "
            + "seen since DATE) or \"updated\", as ingest printed them. DATE is ISO 8601 in local time unless it has a "
            + "zone (2026-05-01, 2026-05-01T08:30, 2026-05-01T08:30:00Z, 2026-05-01 08:30+02:00), today, yesterday, or "
            + "a time ago: 90s, 30m, 12h, 2d, 1w")
    static let limit = ValueOption<Int>("--limit", "N", .count(of: "articles", atLeast: 0), help: "at most N articles (the newest)")

    static let options = OptionTable([feed, since, limit, CommonOptions.store])

    /// Which stored articles to print.
    struct Configuration {
        /// The limit and the arrival date; the feed is found in the store.
        var query = ArticleQuery()
        /// The feed `--feed` names, as given.
        var feed: String?
        /// The store `--store` names; `nil` for the default one.
        var storeOption: String?
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        if let extra = arguments.positional.first {
            throw UsageError(message: "articles takes no arguments, got '\(extra)'",
                             hint: "use --feed URL for one feed; see 'feedingest articles --help'")
        }
        var configuration = Configuration()
        configuration.query.limit = try arguments.value(limit)
        configuration.query.changedSince = try arguments.value(since)
        configuration.feed = arguments.text(feed)
        configuration.storeOption = arguments.text(CommonOptions.store)
        return configuration
    }

    static func run(_ configuration: Configuration) -> Int32 {
        var query = configuration.query
        guard let context = StoreLocation.openForReading(option: configuration.storeOption) else { return 2 }
        if let name = configuration.feed {
            do {
                guard let feed = try Self.feed(named: name, in: context) else {
                    var line = "feedingest: no feed '\(name)' in the store \(context.path)"
                    let known = try context.feedStatuses().map { StoreLocation.displayName(ofFeed: $0.url) }
                    if let suggestion = Arguments.closest(to: name, in: known) {
                        line += " (did you mean '\(suggestion)'?)"
                    } else {
                        line += " (see 'feedingest feeds')"
                    }
                    StandardStreams.error.write(line + "\n")
                    return 2
                }
                query.feed = feed
            } catch {
                StandardStreams.error.write("feedingest: cannot read the store \(error)\n")
                return 2
            }
        }

        let since = query.changedSince
        var json = JSONWriter()
        do {
            try context.forEachArticle(query) { record in
                var article = record.article
                article.feed = StoreLocation.displayName(ofFeed: article.feed)
                article = article.redactingPasswords()
                var extra: [(key: String, value: String)] = []
                if let since { extra.append(("status", record.firstSeen >= since ? "new" : "updated")) }
                extra.append(("firstSeen", FeedDate.rfc3339(record.firstSeen)))
                json.reset()
                article.write(to: &json, extra: extra)
                json.raw(0x0A)
                json.withBytes { StandardStreams.output.write($0) }
            }
        } catch {
            StandardStreams.output.flush()
            StandardStreams.error.write("feedingest: cannot read the store \(error)\n")
            return 2
        }
        StandardStreams.output.flush()
        return 0
    }

    /// The feed `name` names: a URL as stored, else the store key a feed list would file it under (a local path,
    /// relative to the current directory, and a `file:` URL both become the file's `file://` URL).
    static func feed(named name: String, in context: StoreContext) throws(StoreError) -> FeedID? {
        if let feed = try context.existingFeed(url: name) { return feed }
        let key: String
        if name.range(of: "^[A-Za-z][A-Za-z0-9+.-]*:", options: .regularExpression) == nil {
            // A path, taken whole (a feed list would split it at spaces).
            key = URL(fileURLWithPath: NSString(string: name).expandingTildeInPath).standardizedFileURL.absoluteString
        } else if let entry = FeedList(text: name).entries.first {
            key = entry.storeURL
        } else {
            return nil
        }
        return key == name ? nil : try context.existingFeed(url: key)
    }
}
