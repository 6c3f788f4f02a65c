import ArticleStore
import Fetch
import Foundation
import Ingest
import PostgresStore
import Synchronization
import Syndication

/// `feedingest [ingest] FEEDS [options]`: fetches a feed list into the store and prints new articles as NDJSON.
enum IngestCommand: Subcommand {
    static let help = """
        Usage: feedingest [ingest] [FEEDS] [options]

        Fetches every feed of FEEDS concurrently, parses each as it downloads, stores the articles, and prints
        each new or updated article on stdout as one JSON line (the article schema plus "status": "new" or
        "updated"), once it is committed to the store. Feeds the store has seen are fetched conditionally
        (ETag, Last-Modified), so a second run prints only what changed.

        FEEDS is a file with one feed a line (an http/https URL, a local path or a file:// URL, then optional
        tags; # starts a comment), an OPML file (nested outlines become tags), or - for stdin. A bad line is
        reported with its number and skipped; a feed listed twice is fetched once. A feed given as FEEDS is
        refused: 'feedingest parse FILE' reads one.

        Subscriptions live in the store: the feeds FEEDS lists are subscribed, and those it listed before and no
        longer does are unsubscribed (their articles kept). Without FEEDS, ingest fetches every subscribed feed
        ('feedingest subscribe' and 'unsubscribe' change them by hand).

        An explicit run fetches every feed it lists, conditionally (ETag, Last-Modified), even within --interval,
        except feeds a server asked to wait (Retry-After, 429) and feeds backing off after failures. --due keeps
        the schedule instead (for cron on one or several hosts: each feed once per interval among them).

        Options:
        \(options.help())

        stdout carries only articles. stderr gets one line per bad list line; then, on a terminal, a live progress
        line (feeds done, articles new and updated, bytes, rate, failures) and a summary listing each failed feed
        and why; when stderr is not a terminal, one line per failed feed as it fails and the summary.

        Claims: each feed is fetched by the process that claimed it (a lease renewed while it works), so processes
        sharing a store never fetch one feed at once (with --due, never twice within --interval). A feed another
        live process holds, or fetched meanwhile under --due, is counted as claimed elsewhere (not a failure). The
        leases of a process of this machine that died (SIGKILL, a crash) are taken over at once; another host's
        expire after --lease.

        Politeness: a feed whose next allowed fetch is still ahead (a stored Retry-After, or backoff after failures)
        is deferred, not fetched. A 429 Too Many Requests is not a failure: the feed waits for its Retry-After. When
        no remote feed's host resolves or has a route, the network is taken to be down: those feeds are offline,
        not failed.

        Exit status: 0 when every feed was fetched, not modified, deferred, rate limited or offline; 1 when a feed
        failed or a list line was bad (every other feed is still ingested); 2 for usage errors, an unreadable list
        or an unusable store; 130/143 after SIGINT/SIGTERM (what was complete is committed, the next run fetches
        the rest; a second signal quits at once).

        Examples:
          feedingest feeds.txt | jq -r .title
          feedingest ingest subscriptions.opml --store ~/news.sqlite --jobs 16
          echo https://example.org/feed.xml | feedingest - --no-store
        """

    static let name = "ingest"

    static let store = CommonOptions.store.described(
        "an SQLite file, or a PostgreSQL URI (postgresql://user@host:5432/db, or postgresql:///db?host=/run/postgresql "
            + "for a unix socket) that several processes and hosts can share (default: $FEEDINGEST_STORE, else "
            + "$XDG_DATA_HOME/feedingest/feedingest.sqlite, else ~/.local/share/feedingest/feedingest.sqlite)")
    static let interval = ValueOption<Double>(
        "--interval", "D", .interval,
        help: "how long a fetched feed is not due again for --due runs (default 5m; 0 for due at once): processes that "
            + "share a store and run with --due fetch each feed once per interval. D is seconds, or a number with s, m, h "
            + "or d (90s, 15m, 1h)")
    static let lease = ValueOption<Double>(
        "--lease", "D", .duration("a duration of at least 0.5 s", accepting: { $0 >= 0.5 && $0 <= 86_400 }),
        help: "how long a claim on a feed lasts without renewal (default twice --timeout); a process that stalls or dies "
            + "for longer loses its feeds to the others")
    static let noStore = Flag("--no-store", help: "fetch and parse only: print every article, without \"status\"")
    static let printsAll = Flag("--all", help: "print every parsed article, unchanged ones too (those without \"status\")")
    static let jobs = ValueOption<Int>(
        "--jobs", "N", .number(in: 1...256),
        help: "feeds parsed and stored at once (default 8); up to 64 more download meanwhile, at most 6 from one host")
    static let due = Flag(
        "--due", help: "fetch only the feeds whose next fetch has come (their interval, a Retry-After, backoff)")
    static let force = Flag(
        "--force", help: "also fetch feeds that are deferred (a stored Retry-After, or backoff after failures)")
    static let sanitize = Flag(
        "--sanitize",
        help: "clean the HTML of titles, summaries and content to an allow-list (no scripts, styles, frames, event "
            + "handlers or javascript: URLs) before storing and printing it")
    static let report = ValueOption<String>(
        "--report", "FILE", .text,
        help: "write a JSON run report: the summary and each feed's result, reason, format, counts and timings "
            + "(Schemas/run-report.schema.json)")
    static let quiet = CommonOptions.quiet("print nothing on stderr (the exit status still tells)")

    /// What ingest takes, before FEEDS as after it (`feedingest --force feeds.txt` is ingest too).
    static let options = OptionTable([store, interval, lease, noStore, printsAll, jobs] + FetchOptions.all
                                     + [due, force, sanitize, report, quiet])

    /// What one run of ingest does.
    struct Configuration {
        /// The feed list FEEDS (`-` for stdin); `nil` to fetch the store's subscriptions.
        var listPath: String?
        /// Whether the articles go into a store (not `--no-store`).
        var stores = true
        /// The store `--store` names; `nil` for the default one.
        var storeOption: String?
        /// Whether unchanged articles are printed too (`--all`).
        var printsAll = false
        /// Whether stderr stays silent (`--quiet`).
        var quiet = false
        /// Where the run report goes (`--report`).
        var reportPath: String?
        var ingest = IngestConfiguration()
        var store = StoreConfiguration()
        var fetch = FetchConfiguration()
    }

    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration {
        guard arguments.positional.count <= 1 else {
            throw UsageError(message: "ingest takes one feed list, got \(arguments.positional.count)", hint: "see 'feedingest ingest --help'")
        }
        var configuration = Configuration()
        configuration.listPath = arguments.positional.first
        configuration.quiet = arguments.contains(quiet)
        configuration.reportPath = arguments.text(report)
        configuration.printsAll = arguments.contains(printsAll)
        configuration.storeOption = arguments.text(store)
        configuration.stores = !arguments.contains(noStore)
        if !configuration.stores, configuration.storeOption != nil {
            throw UsageError(message: "--store and --no-store exclude each other", hint: nil)
        }
        if !configuration.stores, configuration.listPath == nil {
            throw UsageError(message: "ingest --no-store needs a feed list FEEDS (or - for stdin)",
                             hint: "without FEEDS, ingest fetches the store's subscriptions")
        }
        if let jobs = try arguments.value(jobs) { configuration.ingest.jobs = jobs }
        if arguments.contains(force), arguments.contains(due) {
            throw UsageError(message: "--force and --due exclude each other", hint: nil)
        }
        configuration.ingest.due = arguments.contains(force) ? .always : arguments.contains(due) ? .scheduled : .unlessAskedToWait
        configuration.ingest.parser.sanitizesHTML = arguments.contains(sanitize)
        configuration.store.fetchInterval = .seconds(300)
        if let seconds = try arguments.value(interval) { configuration.store.fetchInterval = .seconds(seconds, rounding: .toNearestOrAwayFromZero) }
        if let seconds = try arguments.value(lease) { configuration.ingest.leaseDuration = .seconds(seconds, rounding: .toNearestOrAwayFromZero) }
        configuration.fetch = try FetchOptions.configuration(arguments)
        // Nothing reads a body's SHA-256 yet (it would only tell that an unconditional refetch was byte-identical, after
        // it was parsed and deduplicated anyway); it cost ~0.15 s of CPU per 20 MB feed, a quarter of the parse.
        configuration.fetch.computesBodyHash = false
        // Room for every worker's feed plus the transfers started ahead (see IngestConfiguration.transfersAhead).
        configuration.fetch.maximumConcurrentTransfers = max(configuration.fetch.maximumConcurrentTransfers,
                                                             configuration.ingest.jobs + configuration.ingest.transfersAhead)
        return configuration
    }

    static func run(_ configuration: Configuration) -> Int32 {
        let listPath = configuration.listPath
        let quiet = configuration.quiet
        var list = FeedList()
        if let listPath {
            guard let loaded = ListFile.load(listPath) else { return 2 }
            list = loaded
        }
        let listName = listPath == "-" ? "stdin" : listPath ?? "the store's subscriptions"
        if !quiet {
            for problem in list.problems {
                let text = problem.text.isEmpty ? "" : ": \(problem.text)"
                StandardStreams.error.write("feedingest: \(listName):\(problem.line): \(problem.message)\(text)\n")
            }
        }

        var store: Store?
        // Kept open for the run: an SQLite store's last connection to close checkpoints and removes the log.
        var subscriptions: StoreContext?
        if configuration.stores {
            guard let opened = StoreLocation.openForWriting(option: configuration.storeOption, configuration: configuration.store)
            else { return 2 }
            store = opened
            do {
                let context = try opened.makeContext()
                subscriptions = context
                if let listPath {
                    // The list is synced into the store's subscriptions: what it names is subscribed, and what it named
                    // before and no longer does is unsubscribed (its articles kept).
                    let (_, removed) = try context.subscribe(urls: list.entries.map(\.storeURL), from: ListFile.source(of: listPath))
                    if removed > 0, !quiet {
                        StandardStreams.error.write("feedingest: \(StatusObserver.plural(removed, "feed")) no longer in \(listName) "
                                                    + "unsubscribed (their articles kept; 'feedingest feeds --all' shows them)\n")
                    }
                } else {
                    list = FeedList(subscriptions: try context.subscribedFeeds().map { ($0.url, $0.tags) })
                    if list.entries.isEmpty {
                        if !quiet {
                            StandardStreams.error.write("feedingest: no subscriptions in the store \(opened.path) (add one with "
                                                        + "'feedingest subscribe URL', or ingest a list: 'feedingest FEEDS')\n")
                        }
                        return 0
                    }
                }
            } catch {
                StandardStreams.error.write(StoreLocation.cannotUse(opened.path, error) + "\n")
                return 2
            }
        }

        let pipeline = IngestPipeline(store: store, fetcher: Fetcher(configuration: configuration.fetch), configuration: configuration.ingest)
        let output = ArticleOutputObserver(printsAll: configuration.printsAll)
        pipeline.addObserver(output)
        // The reader went away: nothing more can be delivered, so stop claiming and fetching (what is committed stays,
        // the leases are released at the run's end) and say below what was not printed.
        StandardStreams.output.onClose = { _ in pipeline.cancel() }
        if !quiet { pipeline.addObserver(StatusObserver(isTerminal: isatty(2) == 1, badLines: list.problems.count, stores: store != nil)) }
        let reportPath = configuration.reportPath
        let report = reportPath.map { _ in RunReportObserver(entries: list.entries) }
        if let report { pipeline.addObserver(report) }
        let signals = SignalWatcher(onFirst: { _ in
            if !quiet { SignalWatcher.announce("feedingest: interrupted; finishing what is complete (again to quit at once)") }
            pipeline.cancel()
        })
        let summary = withExtendedLifetime(subscriptions) { pipeline.run(list.entries) }
        signals.stop()
        pipeline.fetcher.shutdown()  // its thread's libcurl/OpenSSL clean-up is over before the process exits
        StandardStreams.output.flush()
        StandardStreams.output.onClose = nil
        let closed = StandardStreams.output.closedReason
        if let closed {
            StandardStreams.error.write(output.closedMessage(reason: closed, stored: store != nil, storeOption: configuration.storeOption) + "\n")
        }
        let status: Int32
        if let signal = signals.received {
            status = 128 + signal
        } else {
            status = summary.failed > 0 || !list.problems.isEmpty || closed != nil ? 1 : 0
        }
        if let report, let reportPath {
            do {
                try Data(report.document(store: store?.path, problems: list.problems, exitStatus: status))
                    .write(to: URL(fileURLWithPath: reportPath))
            } catch {
                StandardStreams.error.write("feedingest: cannot write the report to \(reportPath): \(ListFile.reason(error))\n")
                return signals.received == nil ? 2 : status  // a signal's status says more than the report's failure
            }
        }
        return status
    }
}
