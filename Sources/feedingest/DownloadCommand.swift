import ArticleStore
import Dispatch
import Downloads
import Fetch
import Foundation
import PostgresStore
import Synchronization
import Syndication

/// `feedingest download [options]`: downloads the enclosures of stored articles, resuming partial downloads.
enum DownloadCommand: Subcommand {
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
        \(options.help())

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

    static let name = "download"

    static let feed = ValueOption<String>(
        "--feed", "URL", repeatable: true, .text, help: "download from this feed instead of the feeds tagged 'download'")
    static let since = ValueOption<Date>(
        "--since", "DATE", .date, help: "only articles dated at or after DATE (2026-05-01, yesterday, 12h, 2w)")
    static let downloading = DownloadOptions(
        jobs: "--jobs", help: "downloads at once (default 2); transfers to one host share its connection limit (6)")
    static let retryFailed = Flag(
        "--retry-failed", help: "queue again the downloads that failed for good (404, 410, ...) and try them in this run")
    static let quiet = CommonOptions.quiet("print nothing on stderr (the exit status still tells)")

    static let options = OptionTable([feed, since] + downloading.all + [retryFailed, CommonOptions.store, quiet])

    /// What a download run does.
    struct Configuration {
        var download: DownloadConfiguration
        /// The feeds `--feed` names, as given (looked up in the store); `nil` for the feeds tagged 'download'.
        var feeds: [String]?
        /// Only articles dated at or after it (`--since`).
        var since: Date?
        /// Whether the downloads that failed for good are queued again (`--retry-failed`).
        var retriesFailed = false
        /// The store `--store` names; `nil` for the default one.
        var storeOption: String?
        /// Whether stderr stays silent (`--quiet`).
        var quiet = false
        var fetch = FetchConfiguration()
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        if let extra = arguments.positional.first {
            throw UsageError(message: "download takes no arguments, got '\(extra)'",
                             hint: "use --feed URL for one feed; see 'feedingest download --help'")
        }
        var configuration = Configuration(download: try downloading.configuration(arguments))
        configuration.since = try arguments.value(since)
        let feeds = try arguments.values(feed)
        configuration.feeds = feeds.isEmpty ? nil : feeds
        configuration.retriesFailed = arguments.contains(retryFailed)
        configuration.storeOption = arguments.text(CommonOptions.store)
        configuration.quiet = arguments.contains(quiet)
        configuration.fetch.computesBodyHash = false
        configuration.fetch.maximumConcurrentTransfers = max(configuration.download.jobs, 2)
        return configuration
    }

    static func run(_ configuration: Configuration) -> Int32 {
        let quiet = configuration.quiet
        var selection = DownloadSelection()
        selection.since = configuration.since
        guard let store = openStore(option: configuration.storeOption) else { return 2 }
        if let names = configuration.feeds {
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

        let fetcher = Fetcher(configuration: configuration.fetch)
        let manager = DownloadManager(store: store, fetcher: fetcher, configuration: configuration.download)
        if !quiet { manager.addObserver(DownloadProgressObserver(isTerminal: isatty(2) == 1)) }
        let signals = SignalWatcher(onFirst: { _ in
            if !quiet { SignalWatcher.announce("feedingest: interrupted; keeping the partial files (again to quit at once)") }
            manager.cancel()
        })
        do {
            if configuration.retriesFailed {
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
