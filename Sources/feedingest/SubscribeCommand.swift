import ArticleStore
import Foundation
import Ingest

/// `feedingest subscribe URL [TAG...]` and `subscribe --from LIST`: adds subscriptions to the store without fetching.
enum SubscribeCommand: Subcommand {
    static let help = """
        Usage: feedingest subscribe URL [TAG...] [--store STORE]
               feedingest subscribe --from LIST|OPML [--store STORE]

        Subscribes to a feed (an http/https URL, a local path or a file:// URL) with optional tags, or to every
        feed of a list or OPML file, without fetching anything: 'feedingest ingest' without FEEDS (or 'watch')
        then fetches them. A feed already subscribed gets the tags given; an unsubscribed one is subscribed again,
        with its stored articles. Subscriptions made here stay until 'feedingest unsubscribe'; the feeds of a
        list given to ingest or watch belong to that list, which unsubscribes those it no longer names.

        Options:
        \(options.help())

        Prints one line a feed on stdout: "subscribed URL" or "already subscribed URL".

        Exit status: 0 when every feed is subscribed; 1 when a line of LIST was bad (the others are subscribed);
        2 for usage errors, a URL feedingest cannot fetch, an unreadable list and an unusable store.

        Examples:
          feedingest subscribe https://example.org/feed.xml news tech
          feedingest subscribe --from subscriptions.opml && feedingest ingest
        """

    static let name = "subscribe"

    static let from = ValueOption<String>(
        "--from", "LIST", .text, help: "subscribe to every feed of LIST (one feed a line, or OPML; - for stdin)")
    static let quiet = CommonOptions.quiet("print nothing but errors")

    static let options = OptionTable([from, CommonOptions.store, quiet])

    /// What to subscribe to, and where.
    struct Configuration {
        /// Where the feeds come from.
        enum Feeds: Hashable {
            /// Every feed of the list or OPML file at this path (`-` for stdin).
            case listed(in: String)
            /// The feed given on the command line, with its tags.
            case given(FeedList)
        }

        var feeds: Feeds
        /// The store `--store` names; `nil` for the default one.
        var storeOption: String?
        /// Whether only errors are printed (`--quiet`).
        var quiet = false
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        let feeds: Configuration.Feeds
        if let path = arguments.text(from) {
            guard arguments.positional.isEmpty else {
                throw UsageError(message: "subscribe takes a URL or --from LIST, not both", hint: nil)
            }
            feeds = .listed(in: path)
        } else {
            guard let url = arguments.positional.first else {
                throw UsageError(message: "subscribe needs a feed's URL (or --from LIST)", hint: "see 'feedingest subscribe --help'")
            }
            var list = FeedList()
            list.addLine(url, tags: Array(arguments.positional.dropFirst()))
            if let problem = list.problems.first {
                throw UsageError(message: "cannot subscribe to '\(url)': \(problem.message)", hint: nil)
            }
            feeds = .given(list)
        }
        return Configuration(feeds: feeds, storeOption: arguments.text(CommonOptions.store), quiet: arguments.contains(quiet))
    }

    static func run(_ configuration: Configuration) -> Int32 {
        let quiet = configuration.quiet
        let list: FeedList
        switch configuration.feeds {
        case .listed(let path):
            guard let loaded = ListFile.load(path) else { return 2 }
            list = loaded
            let name = path == "-" ? "stdin" : path
            if !quiet {
                for problem in list.problems {
                    let text = problem.text.isEmpty ? "" : ": \(problem.text)"
                    StandardStreams.error.write("feedingest: \(name):\(problem.line): \(problem.message)\(text)\n")
                }
            }
        case .given(let given):
            list = given
        }
        guard let store = StoreLocation.openForWriting(option: configuration.storeOption, configuration: StoreConfiguration()) else { return 2 }
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
