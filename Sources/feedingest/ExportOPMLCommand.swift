import ArticleStore
import Foundation

/// `feedingest export-opml [--store PATH]`: the stored feeds as an OPML 2.0 subscription list on stdout.
enum ExportOPMLCommand: Subcommand {
    static let help = """
        Usage: feedingest export-opml [--store PATH]

        Writes the store's subscribed feeds on stdout as an OPML 2.0 document (http://opml.org/spec2.opml), ordered by URL:
        one <outline type="rss"> a feed, with its title as text (the URL when it has none), xmlUrl the URL as
        listed (a local feed's file:// URL) and htmlUrl its home page. Feed readers import it, and so does
        feedingest: 'feedingest ingest subscriptions.opml' fetches the same feeds into the same store rows.
        Feeds sit in folder outlines named by their tags (a feed tagged 'tech rust' in folder 'rust' inside
        'tech'), as the feed list reads them back. Works offline and never creates a store.

        Options:
        \(options.help())

        Exit status: 0 when the store was read, 2 for usage errors and a missing or unreadable store.

        Examples:
          feedingest export-opml > subscriptions.opml
          feedingest export-opml --store ~/news.sqlite | xmllint --format -
        """

    static let name = "export-opml"

    static let options = OptionTable([CommonOptions.store])

    /// Which store to export.
    struct Configuration {
        /// The store `--store` names; `nil` for the default one.
        var storeOption: String?
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        if let extra = arguments.positional.first {
            throw UsageError(message: "export-opml takes no arguments, got '\(extra)'",
                             hint: "redirect stdout to write a file: 'feedingest export-opml > feeds.opml'")
        }
        return Configuration(storeOption: arguments.text(CommonOptions.store))
    }

    static func run(_ configuration: Configuration) -> Int32 {
        guard let feeds = StoreLocation.feedsForReading(option: configuration.storeOption) else { return 2 }
        StandardStreams.output.write(document(feeds.filter(\.isSubscribed), date: Date()))
        StandardStreams.output.flush()
        return 0
    }

    /// The OPML 2.0 document listing `feeds`.
    static func document(_ feeds: [FeedStatus], date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"  // RFC 822, as OPML 2.0 asks
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <opml version="2.0">
              <head>
                <title>feedingest subscriptions</title>
                <dateCreated>\(formatter.string(from: date))</dateCreated>
              </head>
              <body>

            """
        write(Folder(feeds), depth: 2, into: &text)
        text += "  </body>\n</opml>\n"
        return text
    }

    /// Feeds nested by their tags: a feed tagged `a b` sits in folder `b` inside folder `a`, which is how the feed
    /// list reads tags back from OPML (the titles of the enclosing outlines, outermost first).
    struct Folder {
        var feeds: [FeedStatus] = []
        var folders: [String: Folder] = [:]

        init(_ all: [FeedStatus]) {
            for feed in all { add(feed, path: feed.tags[...]) }
        }

        private init() {}

        private mutating func add(_ feed: FeedStatus, path: ArraySlice<String>) {
            guard let first = path.first else { return feeds.append(feed) }
            folders[first, default: Folder()].add(feed, path: path.dropFirst())
        }
    }

    /// Writes a folder's feeds, then its folders in name order, indented two spaces a level.
    static func write(_ folder: Folder, depth: Int, into text: inout String) {
        let indent = String(repeating: "  ", count: depth)
        for feed in folder.feeds {
            let title = feed.title.flatMap { $0.isEmpty ? nil : $0 }
            var outline = "\(indent)<outline type=\"rss\" text=\"\(attribute(title ?? feed.url))\""
            if let title { outline += " title=\"\(attribute(title))\"" }
            outline += " xmlUrl=\"\(attribute(feed.url))\""
            if let home = feed.homeLink, !home.isEmpty { outline += " htmlUrl=\"\(attribute(home))\"" }
            text += outline + "/>\n"
        }
        for name in folder.folders.keys.sorted() {
            text += "\(indent)<outline text=\"\(attribute(name))\">\n"
            write(folder.folders[name]!, depth: depth + 1, into: &text)
            text += "\(indent)</outline>\n"
        }
    }

    /// `text` as a double-quoted XML attribute value: markup characters escaped, tabs and line breaks as character
    /// references (an XML parser would turn them into spaces otherwise), characters XML 1.0 cannot carry dropped.
    static func attribute(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "\t": escaped += "&#9;"
            case "\n": escaped += "&#10;"
            case "\r": escaped += "&#13;"
            default:
                // XML 1.0's Char production: no other C0 control, no U+FFFE/U+FFFF (surrogates cannot occur here).
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF { continue }
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
