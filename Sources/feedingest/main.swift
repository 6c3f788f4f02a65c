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

    /// What a subcommand's arguments came to: arguments to run with, or the exit status when there is nothing
    /// more to do (its help was printed, or a usage error).
    enum Invocation {
        case run(Arguments)
        case exit(Int32)
    }

    /// Parses a subcommand's arguments, `--help` and `-h` included: prints the help, or the usage error, when that
    /// is all there is to do.
    static func invocation(_ arguments: [String], flags: Set<String> = [], options: Set<String> = [], command: String,
                           help: String) -> Invocation {
        let parsed: Arguments
        do {
            parsed = try Arguments(arguments, spec: .init(flags: flags.union(["--help", "-h"]), options: options), command: command)
        } catch {
            return .exit(usageError(error))
        }
        if parsed.flags.contains("--help") || parsed.flags.contains("-h") {
            StandardStreams.output.write(help + "\n")
            StandardStreams.output.flush()
            return .exit(0)
        }
        return .run(parsed)
    }

    static func usageError(_ error: Arguments.UsageError) -> Int32 {
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
            return ParseCommand.run(Array(arguments.dropFirst()))
        case "ingest":
            return IngestCommand.run(Array(arguments.dropFirst()))
        case "watch":
            return WatchCommand.run(Array(arguments.dropFirst()))
        case "articles":
            return ArticlesCommand.run(Array(arguments.dropFirst()))
        case "feeds":
            return FeedsCommand.run(Array(arguments.dropFirst()))
        case "export-opml":
            return ExportOPMLCommand.run(Array(arguments.dropFirst()))
        case "subscribe":
            return SubscribeCommand.run(Array(arguments.dropFirst()))
        case "unsubscribe":
            return UnsubscribeCommand.run(Array(arguments.dropFirst()))
        case "download":
            return DownloadCommand.run(Array(arguments.dropFirst()))
        case "downloads":
            return DownloadsCommand.run(Array(arguments.dropFirst()))
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
                if IngestCommand.flags.contains(first) || IngestCommand.options.contains(name) {
                    return IngestCommand.run(arguments)  // options before FEEDS: ingest's own parser takes them all
                }
                let suggestion = Arguments.closest(to: first, in: ["--help", "--version"] + IngestCommand.flags.union(IngestCommand.options).sorted())
                return usageError(.init(message: "unknown option '\(first)'", hint: suggestion.map { "did you mean '\($0)'?" } ?? "see 'feedingest --help'"))
            }
            // A word that is no file but nearly a command is a typo of the command, not a feed list.
            if first != "-", !FileManager.default.fileExists(atPath: first), let suggestion = Arguments.closest(to: first, in: ["parse", "ingest", "watch", "articles", "feeds", "export-opml", "subscribe", "unsubscribe", "download", "downloads", "help"]) {
                return usageError(.init(message: "unknown command '\(first)'", hint: "did you mean '\(suggestion)'?"))
            }
            return IngestCommand.run(arguments)
        }
    }
}

exit(Command.main(Array(CommandLine.arguments.dropFirst())))
