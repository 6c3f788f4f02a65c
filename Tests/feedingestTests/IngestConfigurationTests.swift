import Foundation
import Testing
@testable import feedingest

/// `ingest`'s command line read into its configuration, without running anything.
@Suite("IngestCommand.parse: options to configuration")
struct IngestConfigurationTests {
    @Test func theDefaults() throws {
        let configuration = try IngestCommand.configuration([])
        #expect(configuration.listPath == nil && configuration.stores && configuration.storeOption == nil)
        #expect(!configuration.printsAll && !configuration.quiet && configuration.reportPath == nil)
        #expect(configuration.ingest.jobs == 8 && configuration.ingest.due == .unlessAskedToWait)
        #expect(configuration.ingest.leaseDuration == nil && !configuration.ingest.parser.sanitizesHTML)
        #expect(configuration.store.fetchInterval == .seconds(300))
        #expect(configuration.fetch.totalTimeout == .seconds(60) && configuration.fetch.maximumBodyBytes == 64 << 20)
        #expect(configuration.fetch.userAgent.hasPrefix("feedingest/"))
        #expect(!configuration.fetch.computesBodyHash, "nothing reads the body's hash")
        #expect(configuration.fetch.maximumConcurrentTransfers == 8 + 64, "room for every worker and the transfers ahead")
        #expect(try IngestCommand.configuration(["feeds.txt"]).listPath == "feeds.txt")
        #expect(try IngestCommand.configuration(["-"]).listPath == "-")
    }

    @Test func eachOption() throws {
        let configuration = try IngestCommand.configuration([
            "--store", "s.sqlite", "--interval", "15m", "--lease", "30", "--all", "--jobs", "16", "--timeout", "5",
            "--max-bytes", "512k", "--user-agent", "reader/2", "--due", "--sanitize", "--report", "r.json", "-q", "feeds.txt",
        ])
        #expect(configuration.listPath == "feeds.txt" && configuration.storeOption == "s.sqlite" && configuration.stores)
        #expect(configuration.store.fetchInterval == .seconds(900))
        #expect(configuration.ingest.leaseDuration == .seconds(30))
        #expect(configuration.printsAll && configuration.quiet && configuration.reportPath == "r.json")
        #expect(configuration.ingest.jobs == 16 && configuration.ingest.due == .scheduled && configuration.ingest.parser.sanitizesHTML)
        #expect(configuration.fetch.totalTimeout == .seconds(5) && configuration.fetch.connectTimeout == .seconds(5),
                "the connection's timeout is never longer than the transfer's")
        #expect(configuration.fetch.maximumBodyBytes == 524_288 && configuration.fetch.maximumDecodedBytes == 256 << 20)
        #expect(configuration.fetch.userAgent == "reader/2")
        #expect(configuration.fetch.maximumConcurrentTransfers == 16 + 64)
        #expect(try IngestCommand.configuration(["--force", "f"]).ingest.due == .always)
        #expect(try IngestCommand.configuration(["--quiet", "f"]).quiet)
        #expect(try IngestCommand.configuration(["--interval=0", "f"]).store.fetchInterval == .zero)
        #expect(try IngestCommand.configuration(["--timeout", "0.0004"]).fetch.totalTimeout == .milliseconds(1), "rounded up")
        #expect(try IngestCommand.configuration(["--lease", "0.5004"]).ingest.leaseDuration == .milliseconds(500), "rounded")
        let noStore = try IngestCommand.configuration(["-", "--no-store"])
        #expect(!noStore.stores && noStore.listPath == "-")
        #expect(throws: HelpAsked.self) { try IngestCommand.configuration(["feeds.txt", "--help"]) }
    }

    @Test func conflicts() {
        #expect(IngestCommand.usageError(["--force", "--due", "f"]) == UsageError(message: "--force and --due exclude each other", hint: nil))
        #expect(IngestCommand.usageError(["f", "--store", "s", "--no-store"])
                == UsageError(message: "--store and --no-store exclude each other", hint: nil))
        #expect(IngestCommand.usageError(["--no-store"])
                == UsageError(message: "ingest --no-store needs a feed list FEEDS (or - for stdin)",
                              hint: "without FEEDS, ingest fetches the store's subscriptions"))
        #expect(IngestCommand.usageError(["a.txt", "b.txt"])
                == UsageError(message: "ingest takes one feed list, got 2", hint: "see 'feedingest ingest --help'"))
    }

    @Test func badValues() {
        let cases: [([String], String)] = [
            (["--jobs", "0"], "--jobs needs a number from 1 to 256, not '0'"),
            (["--jobs", "257"], "--jobs needs a number from 1 to 256, not '257'"),
            (["--jobs", "many"], "--jobs needs a number from 1 to 256, not 'many'"),
            (["--interval", "soon"], "--interval needs a duration (0, 90s, 15m, 1h, 1d), not 'soon'"),
            (["--interval", "367d"], "--interval needs a duration (0, 90s, 15m, 1h, 1d), not '367d'"),
            (["--lease", "0.4"], "--lease needs a duration of at least 0.5 s, not '0.4'"),
            (["--lease", "2d"], "--lease needs a duration of at least 0.5 s, not '2d'"),
            (["--timeout", "0"], "--timeout needs a duration above 0 (seconds, or 90s, 2m, 1h), not '0'"),
            (["--max-bytes", "lots"], "--max-bytes needs a size above 0 (bytes, or with k, M or G: 512k, 64M), not 'lots'"),
            (["--user-agent", "a\nb"], "--user-agent needs a one-line value"),
            (["--jobs"], "--jobs needs a value"),
            (["--due=yes"], "--due takes no value"),
        ]
        for (arguments, message) in cases {
            #expect(IngestCommand.usageError(["f"] + arguments)?.message == message, "\(arguments)")
        }
        #expect(IngestCommand.usageError(["f", "--no-stor"])
                == UsageError(message: "unknown option '--no-stor' for 'ingest'", hint: "did you mean '--no-store'?"))
    }

    /// `feedingest --due feeds.txt` is ingest: the top level asks ingest's table which options it takes.
    @Test func theTableNamesWhatIngestTakesBeforeFeeds() {
        for name in ["--store", "--interval", "--lease", "--no-store", "--all", "--jobs", "--timeout", "--max-bytes",
                     "--user-agent", "--due", "--force", "--sanitize", "--report", "--quiet", "-q"] {
            #expect(IngestCommand.options.option(named: name) != nil, "\(name)")
        }
        #expect(IngestCommand.options.option(named: "--jobs")?.takesValue == true)
        #expect(IngestCommand.options.option(named: "--due")?.takesValue == false)
        #expect(IngestCommand.options.option(named: "--metrics-file") == nil)
    }

    @Test func theHelpListsEveryOption() {
        for option in IngestCommand.options.options {
            #expect(IngestCommand.help.contains("\n  " + option.label), "\(option.label)")
        }
        #expect(IngestCommand.help.contains("Usage: feedingest [ingest] [FEEDS] [options]") && IngestCommand.help.contains("Exit status:"))
    }
}
