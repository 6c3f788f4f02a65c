import Foundation

/// The `feedingest` command: dispatches to its subcommands.
enum Command {
    static let version = "0.1.0"

    static let help = """
        feedingest \(version): ingest RSS, Atom and JSON Feed feeds as a stream.

        Usage:
          feedingest [ingest] FEEDS [options]   fetch a feed list into the store; new articles as NDJSON
          feedingest ingest [options]           fetch every subscribed feed
          feedingest watch FEEDS [options]      run as a service: each feed fetched when due, the list watched
          feedingest parse [options] FILE|URL... articles of feeds as NDJSON (no store)
          feedingest articles [options]         stored articles as NDJSON, newest first (offline)
          feedingest feeds [--json]             each stored feed's status, failures and next fetch (offline)
          feedingest export-opml                the subscribed feeds as OPML 2.0 (offline)
          feedingest subscribe URL [TAG...]     subscribe without fetching (--from LIST|OPML for many)
          feedingest unsubscribe URL...         unsubscribe; the articles stay unless --purge
          feedingest download [options]         download stored articles' enclosures, resuming partial ones
          feedingest downloads [--json]         the download tracker: state, bytes, path, URL, last error (offline)
          feedingest --version                  print the version and the memory allocator
          feedingest --help                     show this help

        Run 'feedingest COMMAND --help' for a command's options ('feedingest ingest --help' for FEEDS).

        Examples:
          feedingest feeds.txt | jq -r .title
          feedingest subscriptions.opml --store ~/news.sqlite --jobs 16
          feedingest parse feed.xml --report report.json
          feedingest articles --since yesterday --limit 20 | jq -r .title
          feedingest feeds | grep failed
          feedingest export-opml > subscriptions.opml
        """

    /// Prints a usage error on stderr; returns its exit status, 2.
    static func usageError(_ error: UsageError) -> Int32 {
        var line = "feedingest: \(error.message)"
        if let hint = error.hint { line += " (\(hint))" }
        StandardStreams.error.write(line + "\n")
        return 2
    }

    static func main(_ arguments: [String]) -> Int32 {
        OutputStream.ignoreBrokenPipes()
        guard let first = arguments.first else {
            StandardStreams.error.write(help + "\n")
            return 2
        }
        switch first {
        case "parse":
            return ParseCommand.main(Array(arguments.dropFirst()))
        case "ingest":
            return IngestCommand.main(Array(arguments.dropFirst()))
        case "watch":
            return WatchCommand.main(Array(arguments.dropFirst()))
        case "articles":
            return ArticlesCommand.main(Array(arguments.dropFirst()))
        case "feeds":
            return FeedsCommand.main(Array(arguments.dropFirst()))
        case "export-opml":
            return ExportOPMLCommand.main(Array(arguments.dropFirst()))
        case "subscribe":
            return SubscribeCommand.main(Array(arguments.dropFirst()))
        case "unsubscribe":
            return UnsubscribeCommand.main(Array(arguments.dropFirst()))
        case "download":
            return DownloadCommand.main(Array(arguments.dropFirst()))
        case "downloads":
            return DownloadsCommand.main(Array(arguments.dropFirst()))
        case "--help", "-h", "help":
            StandardStreams.output.write(help + "\n")
            StandardStreams.output.flush()
            return 0
        case "--version", "-V":
            StandardStreams.output.write("feedingest \(version)\nallocator: \(Allocator.summary)\n")
            StandardStreams.output.flush()
            return 0
        default:
            if first.hasPrefix("-"), first != "-" {
                let name = first.split(separator: "=", maxSplits: 1).first.map(String.init) ?? first
                // Options before FEEDS: ingest's own parser takes them all (a flag only without a value).
                if let option = IngestCommand.options.option(named: name), option.takesValue || name == first {
                    return IngestCommand.main(arguments)
                }
                let ingestNames = IngestCommand.options.names.filter { !CommonOptions.help.option.names.contains($0) }
                let suggestion = Arguments.closest(to: first, in: ["--help", "--version"] + ingestNames)
                return usageError(.init(message: "unknown option '\(first)'", hint: suggestion.map { "did you mean '\($0)'?" } ?? "see 'feedingest --help'"))
            }
            // A word that is no file but nearly a command is a typo of the command, not a feed list.
            if first != "-", !FileManager.default.fileExists(atPath: first), let suggestion = Arguments.closest(to: first, in: ["parse", "ingest", "watch", "articles", "feeds", "export-opml", "subscribe", "unsubscribe", "download", "downloads", "help"]) {
                return usageError(.init(message: "unknown command '\(first)'", hint: "did you mean '\(suggestion)'?"))
            }
            return IngestCommand.main(arguments)
        }
    }
}

exit(Command.main(Array(CommandLine.arguments.dropFirst())))
