import ArticleStore
import Foundation
import Ingest

/// `feedingest unsubscribe URL... [--purge]`: ends subscriptions; the articles stay unless purged.
enum UnsubscribeCommand: Subcommand {
    static let help = """
        Usage: feedingest unsubscribe URL... [--purge] [--store STORE]

        Unsubscribes from feeds, each named by its URL as listed or the path of a local feed: they are no longer
        fetched by 'feedingest ingest' without FEEDS, shown by 'feedingest feeds' (but with --all) or exported by
        export-opml. Their articles stay in the store, unless --purge deletes the feeds with their articles. A feed
        still named by a list file comes back the next time that list is ingested or watched: remove its line.

        Options:
        \(options.help())

        Prints one line a feed on stdout: "unsubscribed URL (N articles kept)" or "deleted URL and N articles".

        Exit status: 0 when every feed named was found; 1 when one was not in the store (the others are
        unsubscribed); 2 for usage errors and a missing or unusable store.

        Examples:
          feedingest unsubscribe https://example.org/feed.xml
          feedingest feeds --json | jq -r 'select(.status == "failing") | .url' | xargs feedingest unsubscribe --purge
        """

    static let name = "unsubscribe"

    static let purge = Flag("--purge", help: "delete the feeds and their articles")
    static let quiet = CommonOptions.quiet("print nothing but errors")

    static let options = OptionTable([purge, CommonOptions.store, quiet])

    /// Which feeds to unsubscribe from, and how.
    struct Configuration {
        /// The feeds, each by its URL as listed or the path of a local feed.
        var feeds: [String]
        /// Whether the feeds are deleted with their articles (`--purge`).
        var purges = false
        /// The store `--store` names; `nil` for the default one.
        var storeOption: String?
        /// Whether only errors are printed (`--quiet`).
        var quiet = false
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        guard !arguments.positional.isEmpty else {
            throw UsageError(message: "unsubscribe needs a feed's URL", hint: "'feedingest feeds' lists them")
        }
        return Configuration(feeds: arguments.positional, purges: arguments.contains(purge),
                             storeOption: arguments.text(CommonOptions.store), quiet: arguments.contains(quiet))
    }

    static func run(_ configuration: Configuration) -> Int32 {
        let quiet = configuration.quiet
        let purge = configuration.purges
        let path = StoreLocation.path(option: configuration.storeOption, createsDirectory: false)
        guard Store.isPostgresURI(path) || FileManager.default.fileExists(atPath: path) else {
            StandardStreams.error.write("feedingest: no store at \(path) (nothing is subscribed yet)\n")
            return 2
        }
        guard let store = StoreLocation.openForWriting(option: configuration.storeOption, configuration: StoreConfiguration()) else { return 2 }
        var missing = 0
        do {
            let context = try store.makeContext()
            for name in configuration.feeds {
                guard let feed = try ArticlesCommand.feed(named: name, in: context) else {
                    missing += 1
                    var line = "feedingest: no feed '\(name)' in the store \(context.path)"
                    let known = try context.feedStatuses().map { StoreLocation.displayName(ofFeed: $0.url) }
                    if let suggestion = Arguments.closest(to: name, in: known) { line += " (did you mean '\(suggestion)'?)" }
                    StandardStreams.error.write(line + "\n")
                    continue
                }
                let status = try context.feedStatus(feed)
                let articles = status.articleCount
                let changed = try context.unsubscribe([feed], purge: purge)
                guard !quiet else { continue }
                let shown = StoreLocation.displayName(ofFeed: status.url)
                if purge {
                    StandardStreams.output.write("deleted \(shown) and \(StatusObserver.plural(articles, "article"))\n")
                } else if changed == 0 {
                    StandardStreams.output.write("not subscribed \(shown)\n")
                } else {
                    var line = "unsubscribed \(shown) (\(StatusObserver.plural(articles, "article")) kept)"
                    if let list = status.listSource { line += "; \(list) still lists it: remove its line, or ingesting that list subscribes it again" }
                    StandardStreams.output.write(line + "\n")
                }
            }
        } catch {
            StandardStreams.error.write(StoreLocation.cannotUse(store.path, error) + "\n")
            return 2
        }
        StandardStreams.output.flush()
        return missing == 0 ? 0 : 1
    }
}
