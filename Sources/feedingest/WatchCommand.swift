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
enum WatchCommand {
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
          --store STORE         an SQLite file or a PostgreSQL URI (as for ingest); several watch processes on several
                                hosts may share one PostgreSQL store: each feed is fetched by one of them, once per interval
          --min-interval D      the shortest interval (default 5m; 0 allowed). D is seconds, or a number with s, m, h or d
          --max-interval D      the longest interval, also that of failing feeds (default 24h)
          --grace D             on SIGTERM or SIGINT, how long feeds in flight may finish (default 10s)
          --metrics-file PATH   write Prometheus metrics (text format) to PATH every 5 seconds, atomically
          --jobs N              feeds parsed and stored at once per batch (default 8)
          --timeout D           give up on a feed's transfer after D (seconds, or 90s, 2m; default 60)
          --lease D             how long a claim on a feed lasts without renewal (default twice --timeout)
          --max-bytes N         refuse a feed whose body is larger than N bytes (512k, 64M; default 64M)
          --user-agent S        the User-Agent header
          --sanitize            clean the HTML of titles, summaries and content to an allow-list (as for ingest)
          -q, --quiet           print nothing on stderr but errors
          -h, --help            show this help

        Downloads (--download): the enclosures of the feeds tagged 'download' are queued at the start and again each
        time such a feed commits new articles, and downloaded on the side, as 'feedingest download' does (resumed,
        claimed, the partial file kept as <file>.download). One line per finished or failed download on stderr.
          --download            download enclosures continuously
          --dir DIR             where files go (as for download; default $FEEDINGEST_DOWNLOADS, else
                                $XDG_DATA_HOME/feedingest/downloads)
          --download-jobs N     downloads at once (default 2)
          --max-rate RATE       at most RATE bytes per second per download (500k, 2M)
          --types TYPES         only these media types: audio/*,video/mp4 (default: all)
          --name TEMPLATE       the path under DIR (default {feed}/{file}; see 'feedingest download --help')
          --keep N, --keep-days D, --checkpoint SIZE, --attempts N   as for download
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

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: Arguments
        switch Command.invocation(arguments, flags: ["--sanitize", "--quiet", "-q", "--download"],
                                  options: Set(["--store", "--jobs", "--timeout", "--max-bytes", "--user-agent", "--lease",
                                                "--min-interval", "--max-interval", "--grace", "--metrics-file", "--download-jobs"])
                                    .union(DownloadCommand.configurationOptions),
                                  command: "watch", help: help) {
        case .exit(let status): return status
        case .run(let arguments): parsed = arguments
        }
        guard parsed.positional.count == 1, let listPath = parsed.positional.first else {
            return Command.usageError(.init(message: parsed.positional.isEmpty ? "watch needs a feed list FEEDS"
                                                : "watch takes one feed list, got \(parsed.positional.count)",
                                            hint: "see 'feedingest watch --help'"))
        }
        if listPath == "-" {
            return Command.usageError(.init(message: "watch needs a feed list file to watch, not stdin", hint: nil))
        }
        let quiet = parsed.flags.contains("--quiet") || parsed.flags.contains("-q")

        var configuration = WatchConfiguration()
        func duration(_ option: String, atLeast minimum: Double = 0) -> Result<Double?, Arguments.UsageError> {
            guard let text = parsed.options[option] else { return .success(nil) }
            guard let seconds = Arguments.seconds(text), seconds >= minimum, seconds <= 366 * 86_400 else {
                return .failure(.init(message: "\(option) needs a duration (0, 90s, 15m, 1h, 1d), not '\(text)'", hint: nil))
            }
            return .success(seconds)
        }
        var values: [String: Double] = [:]
        for option in ["--min-interval", "--max-interval", "--grace"] {
            switch duration(option) {
            case .failure(let error): return Command.usageError(error)
            case .success(let value): values[option] = value
            }
        }
        if let minimum = values["--min-interval"] ?? nil { configuration.schedule.minimumInterval = minimum }
        if let maximum = values["--max-interval"] ?? nil { configuration.schedule.maximumInterval = maximum }
        if configuration.schedule.minimumInterval > configuration.schedule.maximumInterval {
            if values["--max-interval"] == nil {
                configuration.schedule.maximumInterval = configuration.schedule.minimumInterval
            } else {
                return Command.usageError(.init(message: "--min-interval is above --max-interval", hint: nil))
            }
        }
        // The first wait after a failure: the minimum interval, at least 1 s and at most 5 min (then doubling).
        configuration.schedule.failureBackoff = min(max(configuration.schedule.minimumInterval, 1), 300)
        configuration.ingest.parser.sanitizesHTML = parsed.flags.contains("--sanitize")
        if let grace = values["--grace"] ?? nil { configuration.grace = .milliseconds(Int64((grace * 1000).rounded())) }
        if let jobs = parsed.options["--jobs"] {
            guard let count = Int(jobs), (1...256).contains(count) else {
                return Command.usageError(.init(message: "--jobs needs a number from 1 to 256, not '\(jobs)'", hint: nil))
            }
            configuration.ingest.jobs = count
        }
        if let text = parsed.options["--lease"] {
            guard let seconds = Arguments.seconds(text), seconds >= 0.5, seconds <= 86_400 else {
                return Command.usageError(.init(message: "--lease needs a duration of at least 0.5 s, not '\(text)'", hint: nil))
            }
            configuration.ingest.leaseDuration = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        var fetch: FetchConfiguration
        switch IngestCommand.fetchConfiguration(parsed) {
        case .failure(let error): return Command.usageError(error)
        case .success(let value): fetch = value
        }
        let metricsPath = parsed.options["--metrics-file"]
        var downloadConfiguration: DownloadConfiguration?
        if parsed.flags.contains("--download") {
            switch DownloadCommand.downloadConfiguration(parsed, jobsOption: "--download-jobs") {
            case .failure(let error): return Command.usageError(error)
            case .success(let value): downloadConfiguration = value
            }
        } else if let option = (DownloadCommand.configurationOptions.sorted() + ["--download-jobs"]).first(where: { parsed.options[$0] != nil }) {
            return Command.usageError(.init(message: "\(option) is an option of --download", hint: "add --download to download enclosures"))
        }

        let listName = listPath
        guard let list = ListFile.load(listPath) else { return 2 }

        var storeConfiguration = StoreConfiguration()
        storeConfiguration.adaptiveSchedule = configuration.schedule
        guard let store = StoreLocation.openForWriting(option: parsed.options["--store"], configuration: storeConfiguration)
        else { return 2 }

        fetch.computesBodyHash = false
        fetch.maximumConcurrentTransfers = max(fetch.maximumConcurrentTransfers,
                                               configuration.concurrentRuns * (configuration.ingest.jobs + configuration.ingest.transfersAhead)
                                                + (downloadConfiguration?.jobs ?? 0))
        let fetcher = Fetcher(configuration: fetch)
        let isTerminal = isatty(2) == 1
        let statistics = WatchStatistics(countsDownloads: downloadConfiguration != nil)
        let console = WatchConsole(isTerminal: isTerminal, quiet: quiet)
        let reporter = WatchReporter(statistics: statistics, console: console)
        // --download: one manager sharing the fetcher (and so the per-host connection limit) with the feeds.
        let downloads = downloadConfiguration.map { downloadConfiguration in
            let manager = DownloadManager(store: store, fetcher: fetcher, configuration: downloadConfiguration)
            manager.addObserver(WatchDownloadObserver(statistics: statistics, console: console))
            return WatchDownloads(manager: manager, selection: DownloadSelection(), console: console)
        }
        let output = ArticleOutputObserver(printsAll: false)
        let service: WatchService
        do {
            var observers: [any IngestObserver] = [output, reporter]
            if let downloads { observers.append(downloads) }
            service = try WatchService(store: store, fetcher: fetcher, configuration: configuration, observers: observers,
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
        let ticker = Ticker(service: service, reporter: reporter, notifier: notifier, metricsPath: metricsPath)
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
            StandardStreams.error.write(output.closedMessage(reason: closed, stored: true, storeOption: parsed.options["--store"]) + "\n")
        }
        StandardStreams.error.flush()
        return closed == nil ? 0 : 1
    }
}
