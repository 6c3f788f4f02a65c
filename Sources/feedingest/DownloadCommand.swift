import ArticleStore
import Dispatch
import Downloads
import Fetch
import Foundation
import PostgresStore
import Synchronization
import Syndication

/// `feedingest download [options]`: downloads the enclosures of stored articles, resuming partial downloads.
enum DownloadCommand {
    static let help = """
        Usage: feedingest download [--dir DIR] [--feed URL]... [--since DATE] [--jobs N] [--max-rate RATE]
                                   [--types TYPES] [--name TEMPLATE] [--keep N] [--keep-days D] [--retry-failed]
                                   [--store STORE]

        Queues the enclosures (podcast episodes, videos, attachments) of stored articles that are not downloaded
        yet, by default of the feeds tagged 'download' in the feed list, downloads the queue (partial downloads
        first), and exits. Works from the store only: ingest the feeds first.

        Files go to DIR/<feed title>/<file>, the file named after the enclosure URL's path without its query (else
        the article's title). While incomplete a file is <file>.download; once complete and verified it is flushed
        and renamed into place. A kill, a reset, a full disk or Ctrl-C keeps the partial file, and the next run
        resumes it where the last flush (every 4 MiB) left it: Range with If-Range carrying the server's validator,
        so a file that changed on the server is downloaded again from the start, never spliced ("resumed from N"
        is said only when the server sent the rest; a server that sends the whole file again is said to restart
        from zero). A .download file the tracker does not know is reported and left alone.

        A download that fails for good is marked failed, its partial file removed, and later runs skip it: a 4xx
        status but 408, 416, 421, 423, 425 and 429 (so 404 Not Found, 410 Gone, and 401 and 403 too: a retry sends
        the same request), or a URL that is not http or https. --retry-failed queues them again. Other failures (a
        reset, a timeout, 429, 5xx, a full disk) keep the partial file and the next run resumes it.

        Options:
          --dir DIR         where files go (default: $FEEDINGEST_DOWNLOADS, else $XDG_DATA_HOME/feedingest/downloads,
                            else ~/.local/share/feedingest/downloads)
          --feed URL        download from this feed (repeatable) instead of the feeds tagged 'download'
          --since DATE      only articles dated at or after DATE (2026-05-01, yesterday, 12h, 2w)
          --jobs N          downloads at once (default 2); transfers to one host share its connection limit (6)
          --max-rate RATE   at most RATE bytes per second per download: a number with k, M or G (1024-based), e.g. 500k
          --types TYPES     only these media types, comma-separated, with wildcards: audio/*,video/mp4 (default: all)
          --name TEMPLATE   the path under DIR (default {feed}/{file}); placeholders {feed}, {file}, {title},
                            {date} (YYYY-MM-DD), {ext}; e.g. '{feed}/{date} {title}.{ext}'
          --keep N          keep the newest N completed files per feed (older ones are deleted; only the newest N
                            enclosures of a feed are queued)
          --checkpoint SIZE flush the partial file and record its length every SIZE bytes (default 4M): what a
                            kill can lose at most
          --attempts N      tries per download and run when a transfer breaks off (a reset, a timeout): each
                            resumes where the last left off (default 3)
          --keep-days D     delete completed files of articles older than D days (and queue none older)
          --retry-failed    queue again the downloads that failed for good (404, 410, ...) and try them in this run
          --store STORE     the store, an SQLite path or a PostgreSQL URI (default: $FEEDINGEST_STORE, else
                            $XDG_DATA_HOME/feedingest/feedingest.sqlite)
          -q, --quiet       print nothing on stderr (the exit status still tells)
          -h, --help        show this help

        Progress goes to stderr: on a terminal one line per active download (a bar, bytes, rate, time left) and a
        total line; otherwise one line per finished or failed download. Several download processes may share a
        store: each download is claimed, so no file is fetched twice.

        Exit status: 0 when every download tried is done (or nothing was queued; downloads that failed for good
        in an earlier run are skipped, not counted), 1 when a download failed in this run ('feedingest downloads'
        shows why), 2 for usage errors and a missing or unusable store, 130/143 after SIGINT/SIGTERM (partial files
        are flushed and kept; the next run resumes them).

        Examples:
          feedingest download
          feedingest download --feed https://example.org/podcast.xml --types 'audio/*' --keep 5
          feedingest download --dir /srv/media --jobs 4 --max-rate 2M --name '{feed}/{date} {title}.{ext}'
          feedingest download --retry-failed
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: Arguments
        switch Command.invocation(arguments, flags: ["--quiet", "-q", "--retry-failed"],
                                  options: ["--dir", "--feed", "--since", "--jobs", "--max-rate", "--types", "--name", "--keep",
                                            "--keep-days", "--store", "--checkpoint", "--attempts"],
                                  command: "download", help: help) {
        case .exit(let status): return status
        case .run(let arguments): parsed = arguments
        }
        if let extra = parsed.positional.first {
            return Command.usageError(.init(message: "download takes no arguments, got '\(extra)'",
                                            hint: "use --feed URL for one feed; see 'feedingest download --help'"))
        }
        let quiet = parsed.flags.contains("--quiet") || parsed.flags.contains("-q")
        let configuration: DownloadConfiguration
        switch downloadConfiguration(parsed, jobsOption: "--jobs") {
        case .failure(let error): return Command.usageError(error)
        case .success(let value): configuration = value
        }
        var selection = DownloadSelection()
        if let text = parsed.options["--since"] {
            guard let date = SinceDate.parse(text) else {
                return Command.usageError(.init(message: "--since needs a date, not '\(text)'",
                                                hint: "for example 2026-05-01, 2026-05-01T08:30Z, yesterday or 12h"))
            }
            selection.since = date
        }

        guard let store = openStore(option: parsed.options["--store"]) else { return 2 }
        if let names = parsed.repeatedOptions["--feed"] {
            do {
                let context = try store.makeContext()
                var feeds: [FeedID] = []
                for name in names {
                    guard let feed = try ArticlesCommand.feed(named: name, in: context) else {
                        StandardStreams.error.write("feedingest: no feed '\(name)' in the store \(context.path) (see 'feedingest feeds')\n")
                        return 2
                    }
                    feeds.append(feed)
                }
                selection.feeds = feeds
            } catch {
                StandardStreams.error.write("feedingest: cannot read the store \(error)\n")
                return 2
            }
        }

        var fetch = FetchConfiguration()
        fetch.computesBodyHash = false
        fetch.maximumConcurrentTransfers = max(configuration.jobs, 2)
        let fetcher = Fetcher(configuration: fetch)
        let manager = DownloadManager(store: store, fetcher: fetcher, configuration: configuration)
        if !quiet { manager.addObserver(DownloadProgressObserver(isTerminal: isatty(2) == 1)) }
        let signals = SignalWatcher(onFirst: { _ in
            if !quiet { SignalWatcher.announce("feedingest: interrupted; keeping the partial files (again to quit at once)") }
            manager.cancel()
        })
        do {
            if parsed.flags.contains("--retry-failed") {
                let requeued = try manager.retryFailed()
                if !quiet && requeued > 0 {
                    StandardStreams.error.write("feedingest: queued again \(requeued) download\(requeued == 1 ? "" : "s") that failed for good\n")
                }
            }
            let queued = try manager.queue(selection)
            if !quiet && selection.feeds == nil && queued == 0 {
                let tagged = (try? store.makeContext().feedStatuses().contains { $0.tags.contains(selection.tag) }) ?? true
                if !tagged { StandardStreams.error.write("feedingest: no feed is tagged 'download' (tag feeds in the list, or name them with --feed URL)\n") }
            }
        } catch {
            signals.stop()
            fetcher.shutdown()
            StandardStreams.error.write("feedingest: cannot queue downloads: \(error)\n")
            return 2
        }
        let summary = manager.run()
        signals.stop()
        fetcher.shutdown()
        if let signal = signals.received { return 128 + signal }
        return summary.failed > 0 ? 1 : 0
    }

    /// The download options shared by `download` and `watch --download`: `--dir`, `--max-rate`, `--types`, `--name`,
    /// `--keep`, `--keep-days`, `--checkpoint`, `--attempts`, and the number of downloads at once under `jobsOption`.
    static func downloadConfiguration(_ parsed: Arguments, jobsOption: String) -> Result<DownloadConfiguration, Arguments.UsageError> {
        var configuration = DownloadConfiguration(directory: parsed.options["--dir"] ?? DownloadConfiguration.defaultDirectory())
        if !configuration.directory.hasPrefix("/") {
            configuration.directory = FileManager.default.currentDirectoryPath + "/" + configuration.directory
        }
        if let text = parsed.options[jobsOption] {
            guard let jobs = Int(text), (1...64).contains(jobs) else {
                return .failure(.init(message: "\(jobsOption) needs a number from 1 to 64, not '\(text)'", hint: nil))
            }
            configuration.jobs = jobs
        }
        if let text = parsed.options["--max-rate"] {
            guard let rate = rate(text) else {
                return .failure(.init(message: "--max-rate needs bytes per second, not '\(text)'", hint: "for example 500k, 2M or 100000"))
            }
            configuration.maximumReceiveRate = rate
        }
        if let text = parsed.options["--types"] {
            configuration.mediaTypes = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if configuration.mediaTypes.isEmpty || configuration.mediaTypes.contains(where: { !$0.contains("/") && $0 != "*" }) {
                return .failure(.init(message: "--types needs media types like audio/*,video/mp4, not '\(text)'", hint: nil))
            }
        }
        if let text = parsed.options["--attempts"] {
            guard let attempts = Int(text), (1...100).contains(attempts) else {
                return .failure(.init(message: "--attempts needs a number from 1 to 100, not '\(text)'", hint: nil))
            }
            configuration.attemptsPerRun = attempts
        }
        if let text = parsed.options["--checkpoint"] {
            guard let size = rate(text), size >= 4096 else {
                return .failure(.init(message: "--checkpoint needs a size of 4096 bytes or more, not '\(text)'", hint: "for example 4M"))
            }
            configuration.checkpointInterval = size
        }
        if let template = parsed.options["--name"] {
            if let problem = DownloadNaming.problem(with: template) {
                return .failure(.init(message: "--name: \(problem)", hint: "for example '{feed}/{date} {title}.{ext}'"))
            }
            configuration.naming = DownloadNaming(template: template)
        }
        if let text = parsed.options["--keep"] {
            guard let keep = Int(text), keep >= 1 else {
                return .failure(.init(message: "--keep needs a number of files (1 or more), not '\(text)'", hint: nil))
            }
            configuration.keepPerFeed = keep
        }
        if let text = parsed.options["--keep-days"] {
            guard let days = Double(text), days > 0, days.isFinite else {
                return .failure(.init(message: "--keep-days needs a number of days above 0, not '\(text)'", hint: nil))
            }
            configuration.keepDays = days
        }
        return .success(configuration)
    }

    /// The options ``downloadConfiguration(_:jobsOption:)`` reads (besides `jobsOption`).
    static let configurationOptions: Set<String> = ["--dir", "--max-rate", "--types", "--name", "--keep", "--keep-days", "--checkpoint", "--attempts"]

    /// Opens the store for writing (migrating it); a missing SQLite file is not created.
    private static func openStore(option: String?) -> Store? {
        let path = StoreLocation.path(option: option, createsDirectory: false)
        if !Store.isPostgresURI(path), !FileManager.default.fileExists(atPath: path) {
            StandardStreams.error.write("feedingest: no store at \(path) (ingest a feed list first: 'feedingest FEEDS', or name a store with --store)\n")
            return nil
        }
        do {
            return try Store.open(path)
        } catch {
            StandardStreams.error.write("feedingest: cannot use the store \(error)\n")
            return nil
        }
    }

    /// Bytes per second (or a size): `500000`, `500k`, `2M`, `1.5G` (1024-based), with an optional `B`, `iB` or `/s`.
    static func rate(_ text: String) -> Int64? { Arguments.byteCount(text, allowsRate: true) }
}
