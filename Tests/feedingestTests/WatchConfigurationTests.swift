import Foundation
import Testing
@testable import feedingest

/// `watch`'s command line read into its configuration, without running anything.
@Suite("WatchCommand.parse: options to configuration")
struct WatchConfigurationTests {
    @Test func theDefaults() throws {
        let configuration = try WatchCommand.configuration(["feeds.txt"])
        #expect(configuration.listPath == "feeds.txt" && configuration.storeOption == nil && !configuration.quiet)
        #expect(configuration.metricsPath == nil && configuration.download == nil)
        let schedule = configuration.watch.schedule
        #expect(schedule.minimumInterval == 300 && schedule.maximumInterval == 86_400 && schedule.failureBackoff == 300)
        #expect(configuration.store.adaptiveSchedule == schedule, "the store computes the schedule the watch keeps")
        #expect(configuration.watch.grace == .seconds(10) && configuration.watch.ingest.jobs == 8)
        #expect(configuration.watch.ingest.leaseDuration == nil && !configuration.watch.ingest.parser.sanitizesHTML)
        #expect(!configuration.fetch.computesBodyHash)
        #expect(configuration.fetch.maximumConcurrentTransfers == 4 * (8 + 64), "room for every run's workers and transfers ahead")
    }

    @Test func eachOption() throws {
        let configuration = try WatchCommand.configuration([
            "feeds.txt", "--store", "postgresql:///news", "--min-interval", "0", "--max-interval", "1h", "--grace", "2.5s",
            "--metrics-file", "m.prom", "--jobs", "2", "--lease", "90", "--timeout", "2m", "--max-bytes", "1M",
            "--user-agent", "w/1", "--sanitize", "--quiet",
        ])
        #expect(configuration.storeOption == "postgresql:///news" && configuration.metricsPath == "m.prom" && configuration.quiet)
        let schedule = configuration.watch.schedule
        #expect(schedule.minimumInterval == 0 && schedule.maximumInterval == 3_600)
        #expect(schedule.failureBackoff == 1, "the first wait after a failure: the minimum interval, at least 1 s")
        #expect(configuration.store.adaptiveSchedule == schedule)
        #expect(configuration.watch.grace == .milliseconds(2_500) && configuration.watch.ingest.jobs == 2)
        #expect(configuration.watch.ingest.leaseDuration == .seconds(90) && configuration.watch.ingest.parser.sanitizesHTML)
        #expect(configuration.fetch.totalTimeout == .seconds(120) && configuration.fetch.maximumBodyBytes == 1 << 20)
        #expect(configuration.fetch.userAgent == "w/1")
        #expect(configuration.fetch.maximumConcurrentTransfers == 4 * (2 + 64))
        // A minimum above the default maximum raises the maximum with it.
        let raised = try WatchCommand.configuration(["f", "--min-interval", "2d"]).watch.schedule
        #expect(raised.minimumInterval == 172_800 && raised.maximumInterval == 172_800 && raised.failureBackoff == 300)
    }

    @Test func downloads() throws {
        let configuration = try WatchCommand.configuration([
            "f", "--download", "--dir", "/srv/media", "--download-jobs", "3", "--max-rate", "500k", "--types", "audio/*",
            "--name", "{feed}/{title}.{ext}", "--keep", "5", "--keep-days", "30", "--checkpoint", "1M", "--attempts", "4",
        ])
        let download = try #require(configuration.download)
        #expect(download.directory == "/srv/media" && download.jobs == 3 && download.maximumReceiveRate == 512_000)
        #expect(download.mediaTypes == ["audio/*"] && download.naming.template == "{feed}/{title}.{ext}")
        #expect(download.keepPerFeed == 5 && download.keepDays == 30 && download.checkpointInterval == 1 << 20)
        #expect(download.attemptsPerRun == 4)
        #expect(configuration.fetch.maximumConcurrentTransfers == 4 * (8 + 64) + 3, "the downloads share the fetcher")
        let defaults = try #require(try WatchCommand.configuration(["f", "--download"]).download)
        #expect(defaults.jobs == 2 && defaults.directory.hasPrefix("/"))
    }

    @Test func conflictsAndMissingArguments() {
        #expect(WatchCommand.usageError([]) == UsageError(message: "watch needs a feed list FEEDS", hint: "see 'feedingest watch --help'"))
        #expect(WatchCommand.usageError(["a", "b"]) == UsageError(message: "watch takes one feed list, got 2", hint: "see 'feedingest watch --help'"))
        #expect(WatchCommand.usageError(["-"]) == UsageError(message: "watch needs a feed list file to watch, not stdin", hint: nil))
        #expect(WatchCommand.usageError(["f", "--min-interval", "2h", "--max-interval", "1h"])
                == UsageError(message: "--min-interval is above --max-interval", hint: nil))
        // The download options need --download; the first given is named (in name order).
        #expect(WatchCommand.usageError(["f", "--types", "audio/*", "--dir", "/tmp/x"])
                == UsageError(message: "--dir is an option of --download", hint: "add --download to download enclosures"))
        #expect(WatchCommand.usageError(["f", "--download-jobs", "2"])?.message == "--download-jobs is an option of --download")
        #expect(WatchCommand.usageError(["f", "--jobs", "2", "--no-store"])
                == UsageError(message: "unknown option '--no-store' for 'watch'", hint: "see 'feedingest watch --help'"))
    }

    @Test func badValues() {
        let cases: [([String], String)] = [
            (["--min-interval", "soon"], "--min-interval needs a duration (0, 90s, 15m, 1h, 1d), not 'soon'"),
            (["--max-interval", "-1"], "--max-interval needs a duration (0, 90s, 15m, 1h, 1d), not '-1'"),
            (["--grace", "400d"], "--grace needs a duration (0, 90s, 15m, 1h, 1d), not '400d'"),
            (["--jobs", "0"], "--jobs needs a number from 1 to 256, not '0'"),
            (["--lease", "0"], "--lease needs a duration of at least 0.5 s, not '0'"),
            (["--timeout", "never"], "--timeout needs a duration above 0 (seconds, or 90s, 2m, 1h), not 'never'"),
            (["--download", "--download-jobs", "0"], "--download-jobs needs a number from 1 to 64, not '0'"),
            (["--download", "--max-rate", "fast"], "--max-rate needs bytes per second, not 'fast'"),
            (["--download", "--keep", "0"], "--keep needs a number of files (1 or more), not '0'"),
        ]
        for (arguments, message) in cases {
            #expect(WatchCommand.usageError(["f"] + arguments)?.message == message, "\(arguments)")
        }
    }

    @Test func theHelpListsEveryOptionInItsSection() throws {
        let help = WatchCommand.help
        for option in WatchCommand.options.options {
            #expect(help.contains("\n  " + option.label), "\(option.label)")
        }
        let downloads = try #require(help.range(of: "Downloads (--download):"))
        #expect(help[downloads.upperBound...].contains("  --download-jobs N"))
        #expect(!help[..<downloads.lowerBound].contains("--download-jobs"))
    }
}
