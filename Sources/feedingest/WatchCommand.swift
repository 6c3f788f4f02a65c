import ArticleStore
import Downloads
import Fetch
import FileWatch
import Foundation
import Ingest
import PostgresStore
import Scheduling
import Support
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
        let stats = WatchStats(isTerminal: isTerminal, quiet: quiet, downloads: downloadConfiguration != nil)
        // --download: one manager sharing the fetcher (and so the per-host connection limit) with the feeds.
        let downloads = downloadConfiguration.map { downloadConfiguration in
            let manager = DownloadManager(store: store, fetcher: fetcher, configuration: downloadConfiguration)
            manager.addObserver(WatchDownloadObserver(stats: stats, quiet: quiet))
            return WatchDownloads(manager: manager, selection: DownloadSelection(), stats: stats)
        }
        let output = ArticleOutputObserver(printsAll: false)
        let service: WatchService
        do {
            var observers: [any IngestObserver] = [output, stats]
            if let downloads { observers.append(downloads) }
            service = try WatchService(store: store, fetcher: fetcher, configuration: configuration, observers: observers,
                                       onEvent: { event in
                                           stats.report(event)
                                           downloads?.report(event)
                                       })
        } catch {
            StandardStreams.error.write(StoreLocation.cannotUse(store.path, error) + "\n")
            return 2
        }
        let reloader = ListReloader(path: listPath, name: listName, service: service, stats: stats, quiet: quiet)
        do {
            try reloader.apply(list, initial: true)
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
        let signals = WatchSignals(service: service, reloader: reloader, notifier: notifier, stats: stats, quiet: quiet,
                                   onStop: { downloads?.manager.cancel() })
        // The reader went away: what the service would print has nowhere to go, so it stops (leases released, what is
        // committed kept) and exits 1, so that a supervisor restarts it (Restart=on-failure).
        StandardStreams.output.onClose = { _ in
            service.stop(cancellingInFlight: true)
            downloads?.manager.cancel()
        }
        let ticker = Ticker(service: service, stats: stats, notifier: notifier, metricsPath: metricsPath)
        ticker.start()
        downloads?.start()
        _ = try? notifier.ready(status: ticker.statusText())
        service.run()
        downloads?.stop()
        ticker.stop()
        watcher?.stop()
        signals.stop()
        fetcher.shutdown()
        stats.clearLine()
        StandardStreams.output.flush()
        StandardStreams.output.onClose = nil
        let closed = StandardStreams.output.closedReason
        if !quiet { StandardStreams.error.write("feedingest: stopped; " + stats.summary() + "\n") }
        if let closed {
            StandardStreams.error.write(output.closedMessage(reason: closed, stored: true, storeOption: parsed.options["--store"]) + "\n")
        }
        StandardStreams.error.flush()
        return closed == nil ? 0 : 1
    }
}

/// Reads the list again when it changes (inotify or SIGHUP) and hands it to the service; reports bad lines.
final class ListReloader: Sendable {
    let path: String
    let name: String
    let service: WatchService
    let stats: WatchStats
    let quiet: Bool
    /// One reload at a time (inotify's thread and the signal queue may both ask).
    private let lock = Lock(())

    init(path: String, name: String, service: WatchService, stats: WatchStats, quiet: Bool) {
        self.path = path
        self.name = name
        self.service = service
        self.stats = stats
        self.quiet = quiet
    }

    func apply(_ list: FeedList, initial: Bool) throws(StoreError) {
        if !quiet {
            for problem in list.problems {
                let text = problem.text.isEmpty ? "" : ": \(problem.text)"
                stats.line("feedingest: \(name):\(problem.line): \(problem.message)\(text)")
            }
        }
        stats.setListProblems(list.problems.count)
        let change = try service.load(list, source: ListFile.source(of: path))
        if !initial, !quiet {
            stats.line("feedingest: \(name) reloaded: \(StatusObserver.plural(change.feeds, "feed")) "
                       + "(\(change.added) added, \(change.removed) removed)")
        }
    }

    func reload() {
        lock.withLock { _ in
            let list: FeedList
            do {
                list = try FeedList.load(path: path)
            } catch {
                // Mid-save, removed, or not a list: keep the feeds as they are; the next change reloads.
                let reason = (error as? FeedListError)?.description ?? ListFile.reason(error)
                if !quiet { stats.line("feedingest: cannot read the feed list \(path): \(reason); keeping the feeds watched") }
                return
            }
            do {
                try apply(list, initial: false)
            } catch {
                stats.line("feedingest: cannot apply the feed list \(path): \(error)")
            }
        }
    }
}

/// SIGINT and SIGTERM (the first stops gracefully, a second exits at once) and SIGHUP (reload) for watch.
final class WatchSignals {
    private let sources: [any DispatchSourceSignal]
    private static let numbers = [SIGINT, SIGTERM, SIGHUP]

    init(service: WatchService, reloader: ListReloader, notifier: ServiceNotifier, stats: WatchStats, quiet: Bool,
         onStop: @escaping @Sendable () -> Void = {}) {
        let queue = DispatchQueue(label: "feedingest.signals")
        let first = Lock<Int32?>(nil)
        var sources: [any DispatchSourceSignal] = []
        for number in Self.numbers {
            signal(number, SIG_IGN)  // delivered through the dispatch source instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            if number == SIGHUP {
                source.setEventHandler { reloader.reload() }
            } else {
                source.setEventHandler {
                    let again = first.withLock { received -> Bool in
                        if received != nil { return true }
                        received = number
                        return false
                    }
                    if again { _exit(128 + number) }
                    _ = try? notifier.stopping(status: "stopping: finishing the feeds in flight")
                    if !quiet { stats.line("feedingest: stopping; finishing the feeds in flight (again to quit at once)") }
                    service.stop()
                    onStop()
                }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    func stop() {
        for source in sources { source.cancel() }
        for number in Self.numbers { signal(number, SIG_DFL) }
    }
}

/// Counts what the runs did, for the status line, the metrics and the final summary; prints failures and the
/// service's events on stderr. Thread-safe: the event queue writes, the ticker and the service read.
final class WatchStats: IngestObserver, Sendable {
    struct Counters {
        var outcomes: [String: Int] = [:]
        var new = 0
        var updated = 0
        var bytes: Int64 = 0
        var failures = 0
        var today = 0
        var day = Calendar.current.startOfDay(for: Date())
        var listProblems = 0
        var downloads: [String: Int] = [:]
        var downloadBytes: Int64 = 0
        var offline = false
        var lineShown = false
        /// While the store is unavailable: the feeds whose run failed for it (not counted as failures).
        var storeOutage: Int?
    }

    /// Every outcome the fetch counter has, in the order the metrics list them.
    static let outcomes = ["ok", "not_modified", "failed", "rate_limited", "offline", "deferred", "cancelled",
                           "claimed_elsewhere", "lease_lost", "store_unavailable"]

    /// Every outcome the download counter has (with `--download`).
    static let downloadOutcomes = ["done", "failed", "paused"]

    let isTerminal: Bool
    let quiet: Bool
    /// Whether the metrics carry the download counters (`--download`).
    let downloads: Bool
    private let counters = Lock(Counters())

    init(isTerminal: Bool, quiet: Bool, downloads: Bool = false) {
        self.isTerminal = isTerminal
        self.quiet = quiet
        self.downloads = downloads
    }

    /// Counts one download that ended with `outcome` after receiving `bytes`.
    func countDownload(outcome: String, bytes: Int64) {
        counters.withLock { counters in
            counters.downloads[outcome, default: 0] += 1
            counters.downloadBytes += bytes
        }
    }

    var current: Counters { counters.withLock { $0 } }

    func ingest(_ event: IngestEvent) {
        switch event {
        case .articleIngested(let stored):
            counters.withLock { counters in
                let today = Calendar.current.startOfDay(for: Date())
                if today != counters.day {
                    counters.day = today
                    counters.today = 0
                }
                switch stored.change {
                case .new?:
                    counters.new += 1
                    counters.today += 1
                case .updated?: counters.updated += 1
                default: break
                }
            }
        case .textReplaced(let entry, let replacement):
            if !quiet { line("feedingest: \(entry.source): \(replacement)") }
        case .feedFinished(let entry, let result):
            let outcome: String
            var bytes: Int64 = 0
            switch result {
            case .ok(let counts):
                outcome = "ok"
                bytes = counts.bytes
            case .notModified: outcome = "not_modified"
            case .failed(.store(let error), _) where error.isUnavailable:
                // The store, not the feed: one line per outage, and no failure counted (the feed is tried again).
                outcome = "store_unavailable"
                storeUnavailable(error)
            case .failed(let error, let counts):
                outcome = "failed"
                bytes = counts.bytes
                if !quiet { line("feedingest: \(entry.source): \(error)") }
            case .rateLimited: outcome = "rate_limited"
            case .offline: outcome = "offline"
            case .deferred: outcome = "deferred"
            case .cancelled: outcome = "cancelled"
            case .claimedElsewhere: outcome = "claimed_elsewhere"
            case .leaseLost(let error):
                outcome = "lease_lost"
                if !quiet { line("feedingest: \(entry.source): \(error.message); another process took it over") }
            }
            let back = counters.withLock { counters -> Int? in
                counters.outcomes[outcome, default: 0] += 1
                counters.bytes += bytes
                if outcome == "failed" { counters.failures += 1 }
                // A feed that finished with the store written (or failed for itself) ends an outage.
                guard outcome != "store_unavailable", outcome != "cancelled", outcome != "offline", let waited = counters.storeOutage
                else { return nil }
                counters.storeOutage = nil
                return waited
            }
            if let back, !quiet {
                line("feedingest: the store is reachable again (\(StatusObserver.plural(back, "feed")) waited for it and are tried again)")
            }
        default:
            break
        }
    }

    /// The service's own events, as lines on stderr.
    func report(_ event: WatchEvent) {
        switch event {
        case .paused(let reason, let remote):
            counters.withLock { $0.offline = true }
            if !quiet { line("feedingest: offline (\(reason)): pausing \(StatusObserver.plural(remote, "remote feed")); local feeds go on") }
        case .resumed(let overdue):
            counters.withLock { $0.offline = false }
            if !quiet { line("feedingest: online again: resuming remote feeds (\(overdue) overdue, spread out)") }
        case .routeMonitorUnavailable(let reason):
            if !quiet { line("feedingest: no route monitor (\(reason)); pausing only when transfers fail for want of a network") }
        case .clockJumped:
            if !quiet { line("feedingest: the machine slept; counting it as a network change") }
        case .storeError(let error) where error.isUnavailable:
            storeUnavailable(error, counting: false)
        case .storeError(let error):
            line("feedingest: cannot read the feeds' schedule from the store: \(error)")
        }
    }

    /// Says once per outage that the store cannot be reached; counts the feeds that waited for it.
    private func storeUnavailable(_ error: StoreError, counting: Bool = true) {
        let first = counters.withLock { counters -> Bool in
            let first = counters.storeOutage == nil
            counters.storeOutage = (counters.storeOutage ?? 0) + (counting ? 1 : 0)
            return first
        }
        if first {
            line("feedingest: the store is unavailable (\(error)); feeds wait and are tried again, not counted as failed")
        }
    }

    func setListProblems(_ count: Int) { counters.withLock { $0.listProblems = count } }

    /// A line on stderr, over the status line on a terminal (redrawn by the next tick); a message's own line breaks
    /// become spaces, so one message stays one line.
    func line(_ text: String) {
        let text = text.onOneLine
        let clear = counters.withLock { counters -> Bool in
            defer { counters.lineShown = false }
            return counters.lineShown
        }
        StandardStreams.error.write((clear ? "\r\u{1B}[K" : "") + text + "\n")
        StandardStreams.error.flush()
    }

    /// Draws the status line (terminal only).
    func draw(_ text: String) {
        guard isTerminal, !quiet else { return }
        counters.withLock { $0.lineShown = true }
        StandardStreams.error.write("\r\u{1B}[K" + text)
        StandardStreams.error.flush()
    }

    func clearLine() {
        let shown = counters.withLock { counters -> Bool in
            defer { counters.lineShown = false }
            return counters.lineShown
        }
        if shown { StandardStreams.error.write("\r\u{1B}[K") }
    }

    /// `1,234 fetches (1,200 ok, 30 not modified, 4 failed); 56 new, 7 updated articles; 1.2 MB`.
    func summary() -> String {
        let c = current
        let total = c.outcomes.values.reduce(0, +)
        let parts = Self.outcomes.compactMap { name -> String? in
            guard let count = c.outcomes[name], count > 0 else { return nil }
            return "\(count) \(name.replacingOccurrences(of: "_", with: " "))"
        }
        return "\(StatusObserver.plural(total, "fetch").replacingOccurrences(of: "fetchs", with: "fetches"))"
            + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))")
            + "; \(c.new) new, \(c.updated) updated articles; \(StatusObserver.bytes(c.bytes))"
    }

    /// The Prometheus text exposition of the counters and `snapshot`'s gauges.
    func metrics(_ snapshot: WatchSnapshot) -> String {
        let c = current
        var text = "# HELP feedingest_fetches_total Feeds fetched (or passed over) by outcome.\n"
        text += "# TYPE feedingest_fetches_total counter\n"
        for outcome in Self.outcomes { text += "feedingest_fetches_total{outcome=\"\(outcome)\"} \(c.outcomes[outcome] ?? 0)\n" }
        text += "# HELP feedingest_articles_total Articles committed, new or updated.\n"
        text += "# TYPE feedingest_articles_total counter\n"
        text += "feedingest_articles_total{change=\"new\"} \(c.new)\n"
        text += "feedingest_articles_total{change=\"updated\"} \(c.updated)\n"
        text += "# HELP feedingest_bytes_total Feed body bytes received.\n# TYPE feedingest_bytes_total counter\n"
        text += "feedingest_bytes_total \(c.bytes)\n"
        text += "# HELP feedingest_failures_total Failed fetches (HTTP, network, parse or store errors).\n"
        text += "# TYPE feedingest_failures_total counter\nfeedingest_failures_total \(c.failures)\n"
        text += "# HELP feedingest_feeds Feeds on the list.\n# TYPE feedingest_feeds gauge\nfeedingest_feeds \(snapshot.feeds)\n"
        text += "# HELP feedingest_in_flight Feeds being fetched now.\n# TYPE feedingest_in_flight gauge\n"
        text += "feedingest_in_flight \(snapshot.inFlight)\n"
        text += "# HELP feedingest_offline 1 while remote feeds are paused for want of a network.\n"
        text += "# TYPE feedingest_offline gauge\nfeedingest_offline \(snapshot.offlineReason == nil ? 0 : 1)\n"
        text += "# HELP feedingest_due_next_minute Feeds due within the next minute.\n# TYPE feedingest_due_next_minute gauge\n"
        text += "feedingest_due_next_minute \(snapshot.dueWithinMinute)\n"
        text += "# HELP feedingest_list_problems Bad lines in the feed list.\n# TYPE feedingest_list_problems gauge\n"
        text += "feedingest_list_problems \(c.listProblems)\n"
        if downloads {
            text += "# HELP feedingest_downloads_total Enclosure downloads ended, by outcome (paused: stopped offline or by a signal).\n"
            text += "# TYPE feedingest_downloads_total counter\n"
            for outcome in Self.downloadOutcomes { text += "feedingest_downloads_total{outcome=\"\(outcome)\"} \(c.downloads[outcome] ?? 0)\n" }
            text += "# HELP feedingest_download_bytes_total Enclosure bytes written to the download files (from the resume offset to the committed one).\n# TYPE feedingest_download_bytes_total counter\n"
            text += "feedingest_download_bytes_total \(c.downloadBytes)\n"
        }
        return text
    }
}

/// Once a second: the status line; every 5 seconds: the metrics file and systemd's STATUS=; the watchdog's keep-alive
/// twice per its interval.
final class Ticker: Sendable {
    private let service: WatchService
    private let stats: WatchStats
    private let notifier: ServiceNotifier
    private let metricsPath: String?
    private let stopping = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(service: WatchService, stats: WatchStats, notifier: ServiceNotifier, metricsPath: String?) {
        self.service = service
        self.stats = stats
        self.notifier = notifier
        self.metricsPath = metricsPath
    }

    func statusText() -> String {
        let snapshot = service.snapshot()
        let network = snapshot.offlineReason.map { "paused (\($0))" } ?? "online"
        return "\(StatusObserver.plural(snapshot.feeds, "feed")) · \(snapshot.dueWithinMinute) due in 1 min · "
            + "\(snapshot.inFlight) in flight · \(network) · \(stats.current.today) articles today"
    }

    func start() {
        let thread = Thread { [self] in
            defer { done.signal() }
            var tick = 0
            let watchdogEvery = notifier.watchdogInterval.map { max(1, Int(Double($0.components.seconds) / 2)) }
            writeMetrics()
            while stopping.wait(timeout: .now() + 1) == .timedOut {
                tick += 1
                StandardStreams.output.checkReader()  // a reader gone while nothing is printed stops the service too
                stats.draw(statusText())
                if tick % 5 == 0 {
                    writeMetrics()
                    _ = try? notifier.status(statusText())
                }
                if let watchdogEvery, tick % watchdogEvery == 0 { _ = try? notifier.watchdog() }
            }
            writeMetrics()
        }
        thread.name = "feedingest.ticker"
        thread.start()
    }

    func stop() {
        stopping.signal()
        done.wait()
    }

    /// Writes the metrics to a temporary file beside the target and renames it over (the textfile collector never
    /// reads half a file).
    private func writeMetrics() {
        guard let metricsPath else { return }
        let text = stats.metrics(service.snapshot())
        let temporary = metricsPath + ".\(getpid()).tmp"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, metricsPath) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                stats.line("feedingest: cannot write the metrics to \(metricsPath): \(reason)")
                return
            }
        } catch {
            stats.line("feedingest: cannot write the metrics to \(metricsPath): \(error.localizedDescription)")
        }
    }
}
