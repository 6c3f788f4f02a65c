import ArticleStore
import Downloads
import Fetch
import FileWatch
import Foundation
import Ingest
import PostgresStore
import Scheduling
import Synchronization
import SystemdNotify
import Watch

/// `feedingest watch FEEDS [options]`: the service form of ingest: each feed fetched when it is due, for as long as it
/// runs.
enum WatchCommand: Subcommand {
    static let help = """
        Usage: feedingest watch FEEDS [options]

        Runs until stopped, fetching each feed of FEEDS when it is due and printing each new or updated article on
        stdout as one JSON line (as ingest does) as soon as its batch is committed. Each feed gets its own interval
        from how often it publishes, within --min-interval and --max-interval; the next fetch is stored, so a restart
        keeps the schedule. FEEDS is watched: lines added are fetched at once, lines removed are no longer fetched
        and are unsubscribed (their articles stay; 'feedingest feeds' no longer shows them), changed tags are
        stored, a bad line is reported with its number; SIGHUP reloads too.

        The interval: the gap between the feed's recent entries (weighted toward the newest, and counting the time
        since its last entry) times 0.5, clamped to [--min-interval, --max-interval]; the feed's own hints (RSS ttl,
        sy:updatePeriod, Cache-Control max-age, Expires) raise it, up to the maximum; ±15% jitter. After failures it
        backs off, doubling up to --max-interval (a feed that keeps failing is polled at the maximum, never
        dropped); a Retry-After is honoured. 'feedingest feeds' shows each feed's interval and next fetch.

        Options:
        \(options.help(mainOptions))

        Downloads (--download): the enclosures of the feeds tagged 'download' are queued at the start and again each
        time such a feed commits new articles, and downloaded on the side, as 'feedingest download' does (resumed,
        claimed, the partial file kept as <file>.download). One line per finished or failed download on stderr.
        \(options.help(downloadOptions))
        Offline, remote downloads pause (recorded as paused, the partial kept) and resume when the network is back;
        loopback ones go on. SIGTERM or SIGINT stops the transfers at once, flushing and recording the partial files:
        'feedingest download' or the next watch resumes them.

        Network: on Linux the routing table is watched (netlink). With no default route, or when transfers to several
        hosts all failed for want of a network, remote feeds pause (no transfers, no failures counted; one line on
        stderr); loopback and local-file feeds keep running. When a route returns they resume within seconds, the
        overdue ones in due order, spread out. A machine that slept counts as a network change.

        Lifecycle: the first SIGTERM or SIGINT stops claiming feeds, lets feeds in flight finish for --grace, commits
        what is complete and exits 0; a second exits at once (143 or 130), the store still consistent. Under systemd
        (Type=notify) it sends READY=1 once running, STATUS= lines, WATCHDOG=1 when WatchdogSec is set, and
        STOPPING=1; see contrib/feedingest-watch.service.

        stderr: on a terminal a status line (feeds, due in the next minute, in flight, online or paused, articles
        today); otherwise one line per failed feed, pause and resume.

        Metrics (--metrics-file): feedingest_fetches_total{outcome}, feedingest_articles_total{change},
        feedingest_bytes_total, feedingest_failures_total (counters); feedingest_feeds, feedingest_in_flight,
        feedingest_offline, feedingest_due_next_minute, feedingest_list_problems (gauges); with --download also
        feedingest_downloads_total{outcome} (done, failed, paused) and feedingest_download_bytes_total.

        Exit status: 0 after a signal's graceful stop; 1 when stdout closed (the reader exited: the service stops,
        says which committed articles were not printed and how to print them); 2 for usage errors, an unreadable
        list or an unusable store; 130/143 after a second signal.

        Examples:
          feedingest watch feeds.txt --store ~/news.sqlite | jq -r .title
          feedingest watch subscriptions.opml --store postgresql:///news --min-interval 15m --metrics-file /var/lib/node_exporter/feedingest.prom
        """

    static let name = "watch"

    static let store = CommonOptions.store.described(
        "an SQLite file or a PostgreSQL URI (as for ingest); several watch processes on several hosts may share one "
            + "PostgreSQL store: each feed is fetched by one of them, once per interval")
    static let minimumInterval = ValueOption<Double>(
        "--min-interval", "D", .interval,
        help: "the shortest interval (default 5m; 0 allowed). D is seconds, or a number with s, m, h or d")
    static let maximumInterval = ValueOption<Double>(
        "--max-interval", "D", .interval, help: "the longest interval, also that of failing feeds (default 24h)")
    static let grace = ValueOption<Double>(
        "--grace", "D", .interval, help: "on SIGTERM or SIGINT, how long feeds in flight may finish (default 10s)")
    static let metricsFile = ValueOption<String>(
        "--metrics-file", "PATH", .text, help: "write Prometheus metrics (text format) to PATH every 5 seconds, atomically")
    static let jobs = IngestCommand.jobs.described("feeds parsed and stored at once per batch (default 8)")
    static let sanitize = IngestCommand.sanitize.described(
        "clean the HTML of titles, summaries and content to an allow-list (as for ingest)")
    static let quiet = CommonOptions.quiet("print nothing on stderr but errors")
    static let download = Flag("--download", help: "download enclosures continuously")
    /// The download options, as `download` takes them but for the number at once.
    static let downloading = DownloadOptions(jobs: "--download-jobs", help: "downloads at once (default 2)")

    /// The options the help lists under Options.
    static let mainOptions: [any OptionDeclaration] = [store, minimumInterval, maximumInterval, grace, metricsFile, jobs,
                                                       IngestCommand.lease] + FetchOptions.all + [sanitize, quiet, CommonOptions.help]
    /// The options the help lists under Downloads.
    static let downloadOptions: [any OptionDeclaration] = [download] + downloading.all
    static let options = OptionTable(mainOptions + downloadOptions)

    /// What a watch runs with.
    struct Configuration {
        /// The feed list FEEDS, a file.
        var listPath: String
        /// The store `--store` names; `nil` for the default one.
        var storeOption: String?
        /// Whether stderr says only errors (`--quiet`).
        var quiet = false
        /// Where the metrics go (`--metrics-file`).
        var metricsPath: String?
        var watch = WatchConfiguration()
        var store = StoreConfiguration()
        var fetch = FetchConfiguration()
        /// How enclosures are downloaded (`--download`); `nil` without.
        var download: DownloadConfiguration?

        init(listPath: String) {
            self.listPath = listPath
        }
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        guard arguments.positional.count == 1, let listPath = arguments.positional.first else {
            throw UsageError(message: arguments.positional.isEmpty ? "watch needs a feed list FEEDS"
                                 : "watch takes one feed list, got \(arguments.positional.count)",
                             hint: "see 'feedingest watch --help'")
        }
        if listPath == "-" {
            throw UsageError(message: "watch needs a feed list file to watch, not stdin", hint: nil)
        }
        var configuration = Configuration(listPath: listPath)
        configuration.quiet = arguments.contains(quiet)
        configuration.storeOption = arguments.text(store)
        let minimum = try arguments.value(minimumInterval)
        let maximum = try arguments.value(maximumInterval)
        let grace = try arguments.value(Self.grace)
        var schedule = ScheduleConfiguration()
        if let minimum { schedule.minimumInterval = minimum }
        if let maximum { schedule.maximumInterval = maximum }
        if schedule.minimumInterval > schedule.maximumInterval {
            guard maximum == nil else { throw UsageError(message: "--min-interval is above --max-interval", hint: nil) }
            schedule.maximumInterval = schedule.minimumInterval
        }
        // The first wait after a failure: the minimum interval, at least 1 s and at most 5 min (then doubling).
        schedule.failureBackoff = min(max(schedule.minimumInterval, 1), 300)
        configuration.watch.schedule = schedule
        configuration.store.adaptiveSchedule = schedule
        configuration.watch.ingest.parser.sanitizesHTML = arguments.contains(sanitize)
        if let grace { configuration.watch.grace = .seconds(grace, rounding: .toNearestOrAwayFromZero) }
        if let jobs = try arguments.value(jobs) { configuration.watch.ingest.jobs = jobs }
        if let seconds = try arguments.value(IngestCommand.lease) {
            configuration.watch.ingest.leaseDuration = .seconds(seconds, rounding: .toNearestOrAwayFromZero)
        }
        configuration.fetch = try FetchOptions.configuration(arguments)
        configuration.metricsPath = arguments.text(metricsFile)
        if arguments.contains(download) {
            configuration.download = try downloading.configuration(arguments)
        } else if let option = downloading.firstGiven(in: arguments) {
            throw UsageError(message: "\(option.name) is an option of --download", hint: "add --download to download enclosures")
        }
        configuration.fetch.computesBodyHash = false
        let ingest = configuration.watch.ingest
        configuration.fetch.maximumConcurrentTransfers = max(configuration.fetch.maximumConcurrentTransfers,
                                                             configuration.watch.concurrentRuns * (ingest.jobs + ingest.transfersAhead)
                                                                + (configuration.download?.jobs ?? 0))
        return configuration
    }

    static func run(_ configuration: Configuration) -> Int32 {
        let listPath = configuration.listPath
        let quiet = configuration.quiet
        let listName = listPath
        guard let list = ListFile.load(listPath) else { return 2 }

        guard let store = StoreLocation.openForWriting(option: configuration.storeOption, configuration: configuration.store)
        else { return 2 }

        let fetcher = Fetcher(configuration: configuration.fetch)
        let isTerminal = isatty(2) == 1
        let statistics = WatchStatistics(countsDownloads: configuration.download != nil)
        let console = WatchConsole(isTerminal: isTerminal, quiet: quiet)
        let reporter = WatchReporter(statistics: statistics, console: console)
        // --download: one manager sharing the fetcher (and so the per-host connection limit) with the feeds.
        let downloads = configuration.download.map { downloadConfiguration in
            let manager = DownloadManager(store: store, fetcher: fetcher, configuration: downloadConfiguration)
            manager.addObserver(WatchDownloadObserver(statistics: statistics, console: console))
            return WatchDownloads(manager: manager, selection: DownloadSelection(), console: console)
        }
        let output = ArticleOutputObserver(printsAll: false)
        let service: WatchService
        do {
            var observers: [any IngestObserver] = [output, reporter]
            if let downloads { observers.append(downloads) }
            service = try WatchService(store: store, fetcher: fetcher, configuration: configuration.watch, observers: observers,
                                       onEvent: { event in
                                           reporter.report(event)
                                           downloads?.report(event)
                                       })
        } catch {
            StandardStreams.error.write(StoreLocation.cannotUse(store.path, error) + "\n")
            return 2
        }
        let reloader = ListReloader(path: listPath, statistics: statistics, apply: { list throws(StoreError) in
            try service.load(list, source: ListFile.source(of: listPath))
        }, report: { event in
            reporter.tell(event, name: listName, path: listPath)
        })
        do {
            try reloader.load(list)
        } catch {
            StandardStreams.error.write(StoreLocation.cannotUse(store.path, error) + "\n")
            return 2
        }
        let watcher: FileWatcher?
        do {
            watcher = try FileWatcher(path: listPath) { reloader.reload() }
        } catch {
            watcher = nil
            if !quiet { StandardStreams.error.write("feedingest: not watching \(listPath) for changes (\(error)); SIGHUP reloads it\n") }
        }
        let notifier = ServiceNotifier()
        let signals = SignalWatcher(onFirst: { _ in
            _ = try? notifier.stopping(status: "stopping: finishing the feeds in flight")
            if !quiet { console.line("feedingest: stopping; finishing the feeds in flight (again to quit at once)") }
            service.stop()
            downloads?.manager.cancel()
        }, onHangUp: { reloader.reload() })
        // The reader went away: what the service would print has nowhere to go, so it stops (leases released, what is
        // committed kept) and exits 1, so that a supervisor restarts it (Restart=on-failure).
        StandardStreams.output.onClose = { _ in
            service.stop(cancellingInFlight: true)
            downloads?.manager.cancel()
        }
        let ticker = Ticker(service: service, reporter: reporter, notifier: notifier, metricsPath: configuration.metricsPath)
        ticker.start()
        downloads?.start()
        _ = try? notifier.ready(status: ticker.statusText())
        service.run()
        downloads?.stop()
        ticker.stop()
        watcher?.stop()
        signals.stop()
        fetcher.shutdown()
        console.clearLine()
        StandardStreams.output.flush()
        StandardStreams.output.onClose = nil
        let closed = StandardStreams.output.closedReason
        if !quiet { StandardStreams.error.write("feedingest: stopped; " + reporter.summary() + "\n") }
        if let closed {
            StandardStreams.error.write(output.closedMessage(reason: closed, stored: true, storeOption: configuration.storeOption) + "\n")
        }
        StandardStreams.error.flush()
        return closed == nil ? 0 : 1
    }
}
