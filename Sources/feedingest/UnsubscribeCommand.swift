import ArticleStore
import Foundation
import Ingest

/// `feedingest unsubscribe URL... [--purge]`: ends subscriptions; the articles stay unless purged.
enum UnsubscribeCommand {
    static let help = """
        Usage: feedingest unsubscribe URL... [--purge] [--store STORE]

        Unsubscribes from feeds, each named by its URL as listed or the path of a local feed: they are no longer
        fetched by 'feedingest ingest' without FEEDS, shown by 'feedingest feeds' (but with --all) or exported by
        export-opml. Their articles stay in the store, unless --purge deletes the feeds with their articles. A feed
        still named by a list file comes back the next time that list is ingested or watched: remove its line.

        Options:
          --purge        delete the feeds and their articles
          --store STORE  the store, an SQLite path or a PostgreSQL URI (default: $FEEDINGEST_STORE, else
                         $XDG_DATA_HOME/feedingest/feedingest.sqlite, else ~/.local/share/feedingest/feedingest.sqlite)
          -q, --quiet    print nothing but errors
          -h, --help     show this help

        Prints one line a feed on stdout: "unsubscribed URL (N articles kept)" or "deleted URL and N articles".

        Exit status: 0 when every feed named was found; 1 when one was not in the store (the others are
        unsubscribed); 2 for usage errors and a missing or unusable store.

        Examples:
          feedingest unsubscribe https://example.org/feed.xml
          feedingest feeds --json | jq -r 'select(.status == "failing") | .url' | xargs feedingest unsubscribe --purge
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: Arguments
        switch Command.invocation(arguments, flags: ["--purge", "--quiet", "-q"], options: ["--store"], command: "unsubscribe", help: help) {
        case .exit(let status): return status
        case .run(let arguments): parsed = arguments
        }
        guard !parsed.positional.isEmpty else {
            return Command.usageError(.init(message: "unsubscribe needs a feed's URL", hint: "'feedingest feeds' lists them"))
        }
        let quiet = parsed.flags.contains("--quiet") || parsed.flags.contains("-q")
        let purge = parsed.flags.contains("--purge")
        let path = StoreLocation.path(option: parsed.options["--store"], createsDirectory: false)
        guard Store.isPostgresURI(path) || FileManager.default.fileExists(atPath: path) else {
            StandardStreams.error.write("feedingest: no store at \(path) (nothing is subscribed yet)\n")
            return 2
        }
        guard let store = StoreLocation.openForWriting(option: parsed.options["--store"], configuration: StoreConfiguration()) else { return 2 }
        var missing = 0
        do {
            let context = try store.makeContext()
            for name in parsed.positional {
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
