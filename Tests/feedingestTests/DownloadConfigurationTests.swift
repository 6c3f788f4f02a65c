import Foundation
import Testing
@testable import feedingest

/// `download`'s command line read into its configuration, without running anything.
@Suite("DownloadCommand.parse: options to configuration")
struct DownloadConfigurationTests {
    @Test func theDefaults() throws {
        let configuration = try DownloadCommand.configuration([])
        #expect(configuration.feeds == nil && configuration.since == nil && !configuration.retriesFailed)
        #expect(configuration.storeOption == nil && !configuration.quiet)
        let download = configuration.download
        #expect(download.jobs == 2 && download.maximumReceiveRate == nil && download.mediaTypes.isEmpty)
        #expect(download.naming.template == "{feed}/{file}" && download.keepPerFeed == nil && download.keepDays == nil)
        #expect(download.checkpointInterval == 4 << 20 && download.attemptsPerRun == 3)
        #expect(download.directory.hasSuffix("/downloads") || ProcessInfo.processInfo.environment["FEEDINGEST_DOWNLOADS"] != nil)
        #expect(!configuration.fetch.computesBodyHash && configuration.fetch.maximumConcurrentTransfers == 2)
    }

    @Test func eachOption() throws {
        let configuration = try DownloadCommand.configuration([
            "--dir", "media", "--feed", "https://example.org/a.xml", "--feed", "b.xml", "--since", "2026-05-01T00:00:00Z",
            "--jobs", "4", "--max-rate", "2M", "--types", "audio/*,video/mp4", "--name", "{feed}/{date} {title}.{ext}",
            "--keep", "5", "--keep-days", "0.5", "--checkpoint", "64k", "--attempts", "10", "--retry-failed",
            "--store", "s.sqlite", "-q",
        ])
        #expect(configuration.feeds == ["https://example.org/a.xml", "b.xml"], "--feed repeats")
        #expect(configuration.since == Date(timeIntervalSince1970: 1_777_593_600))
        #expect(configuration.retriesFailed && configuration.storeOption == "s.sqlite" && configuration.quiet)
        let download = configuration.download
        #expect(download.directory == FileManager.default.currentDirectoryPath + "/media", "relative to the current directory")
        #expect(download.jobs == 4 && download.maximumReceiveRate == 2 << 20 && download.mediaTypes == ["audio/*", "video/mp4"])
        #expect(download.naming.template == "{feed}/{date} {title}.{ext}" && download.keepPerFeed == 5 && download.keepDays == 0.5)
        #expect(download.checkpointInterval == 65_536 && download.attemptsPerRun == 10)
        #expect(configuration.fetch.maximumConcurrentTransfers == 4)
        #expect(try DownloadCommand.configuration(["--dir", "/srv/media"]).download.directory == "/srv/media")
    }

    @Test func badValuesAndArguments() {
        #expect(DownloadCommand.usageError(["stray"])
                == UsageError(message: "download takes no arguments, got 'stray'", hint: "use --feed URL for one feed; see 'feedingest download --help'"))
        let cases: [([String], UsageError)] = [
            (["--jobs", "65"], UsageError(message: "--jobs needs a number from 1 to 64, not '65'", hint: nil)),
            (["--max-rate", "fast"], UsageError(message: "--max-rate needs bytes per second, not 'fast'", hint: "for example 500k, 2M or 100000")),
            (["--types", "audio"], UsageError(message: "--types needs media types like audio/*,video/mp4, not 'audio'", hint: nil)),
            (["--attempts", "0"], UsageError(message: "--attempts needs a number from 1 to 100, not '0'", hint: nil)),
            (["--checkpoint", "1k"], UsageError(message: "--checkpoint needs a size of 4096 bytes or more, not '1k'", hint: "for example 4M")),
            (["--keep", "0"], UsageError(message: "--keep needs a number of files (1 or more), not '0'", hint: nil)),
            (["--keep-days", "0"], UsageError(message: "--keep-days needs a number of days above 0, not '0'", hint: nil)),
            (["--since", "soon"], UsageError(message: "--since needs a date, not 'soon'", hint: "for example 2026-05-01, 2026-05-01T08:30Z, yesterday or 12h")),
        ]
        for (arguments, error) in cases {
            #expect(DownloadCommand.usageError(arguments) == error, "\(arguments)")
        }
        #expect(DownloadCommand.usageError(["--name", "{nope}"])?.message.hasPrefix("--name: ") == true)
        // The download options are checked before --since, as they are listed.
        #expect(DownloadCommand.usageError(["--since", "soon", "--jobs", "0"])?.message.hasPrefix("--jobs") == true)
    }

    @Test func theOptionsAreTheOnesWatchDownloadsWith() {
        for option in DownloadOptions.shared {
            #expect(DownloadCommand.options.contains(option.option) && WatchCommand.options.contains(option.option), "\(option.option.name)")
        }
        #expect(DownloadCommand.options.option(named: "--jobs") != nil && WatchCommand.options.option(named: "--download-jobs") != nil)
        #expect(DownloadCommand.help.contains("  --retry-failed    queue again the downloads that failed for good"))
    }
}
