import ArticleStore
import Foundation
import Ingest

/// `feedingest subscribe URL [TAG...]` and `subscribe --from LIST`: adds subscriptions to the store without fetching.
enum SubscribeCommand {
    static let help = """
        Usage: feedingest subscribe URL [TAG...] [--store STORE]
               feedingest subscribe --from LIST|OPML [--store STORE]

        Subscribes to a feed (an http/https URL, a local path or a file:// URL) with optional tags, or to every
        feed of a list or OPML file, without fetching anything: 'feedingest ingest' without FEEDS (or 'watch')
        then fetches them. A feed already subscribed gets the tags given; an unsubscribed one is subscribed again,
        with its stored articles. Subscriptions made here stay until 'feedingest unsubscribe'; the feeds of a
        list given to ingest or watch belong to that list, which unsubscribes those it no longer names.

        Options:
          --from LIST    subscribe to every feed of LIST (one feed a line, or OPML; - for stdin)
          --store STORE  the store, an SQLite path or a PostgreSQL URI (default: $FEEDINGEST_STORE, else
                         $XDG_DATA_HOME/feedingest/feedingest.sqlite, else ~/.local/share/feedingest/feedingest.sqlite)
          -q, --quiet    print nothing but errors
          -h, --help     show this help

        Prints one line a feed on stdout: "subscribed URL" or "already subscribed URL".

        Exit status: 0 when every feed is subscribed; 1 when a line of LIST was bad (the others are subscribed);
        2 for usage errors, a URL feedingest cannot fetch, an unreadable list and an unusable store.

        Examples:
          feedingest subscribe https://example.org/feed.xml news tech
          feedingest subscribe --from subscriptions.opml && feedingest ingest
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: Arguments
        switch Command.invocation(arguments, flags: ["--quiet", "-q"], options: ["--from", "--store"], command: "subscribe", help: help) {
        case .exit(let status): return status
        case .run(let arguments): parsed = arguments
        }
        let quiet = parsed.flags.contains("--quiet") || parsed.flags.contains("-q")
        var list: FeedList
        if let from = parsed.options["--from"] {
            guard parsed.positional.isEmpty else {
                return Command.usageError(.init(message: "subscribe takes a URL or --from LIST, not both", hint: nil))
            }
            guard let loaded = ListFile.load(from) else { return 2 }
            list = loaded
            let name = from == "-" ? "stdin" : from
            if !quiet {
                for problem in list.problems {
                    let text = problem.text.isEmpty ? "" : ": \(problem.text)"
                    StandardStreams.error.write("feedingest: \(name):\(problem.line): \(problem.message)\(text)\n")
                }
            }
        } else {
            guard let url = parsed.positional.first else {
                return Command.usageError(.init(message: "subscribe needs a feed's URL (or --from LIST)", hint: "see 'feedingest subscribe --help'"))
            }
            list = FeedList()
            list.addLine(url, tags: Array(parsed.positional.dropFirst()))
            if let problem = list.problems.first {
                return Command.usageError(.init(message: "cannot subscribe to '\(url)': \(problem.message)", hint: nil))
            }
        }
        guard let store = StoreLocation.openForWriting(option: parsed.options["--store"], configuration: StoreConfiguration()) else { return 2 }
        do {
            let context = try store.makeContext()
            let urls = list.entries.map(\.storeURL)
            var before: [String: Bool] = [:]
            for url in urls { before[url] = try context.existingFeed(url: url).map { try context.feedStatus($0).isSubscribed } ?? false }
            let (ids, _) = try context.subscribe(urls: urls, from: .byHand)
            try context.setTags(zip(ids, list.entries).map { ($0, $1.tags) })
            if !quiet {
                for entry in list.entries {
                    StandardStreams.output.write((before[entry.storeURL] == true ? "already subscribed " : "subscribed ")
                                                 + StoreLocation.displayName(ofFeed: entry.storeURL) + "\n")
                }
            }
        } catch {
            StandardStreams.error.write(StoreLocation.cannotUse(store.path, error) + "\n")
            return 2
        }
        StandardStreams.output.flush()
        return list.problems.isEmpty ? 0 : 1
    }
}
