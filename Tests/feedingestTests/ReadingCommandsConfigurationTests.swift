import Foundation
import Testing
@testable import feedingest

/// The command lines of `articles`, `feeds`, `downloads`, `export-opml`, `subscribe`, `unsubscribe` and `parse` read
/// into their configurations, without running anything.
@Suite("The other commands' parse: options to configuration")
struct ReadingCommandsConfigurationTests {
    @Test func articles() throws {
        let defaults = try ArticlesCommand.configuration([])
        #expect(defaults.query.limit == nil && defaults.query.changedSince == nil && defaults.query.since == nil)
        #expect(defaults.feed == nil && defaults.storeOption == nil)
        let configuration = try ArticlesCommand.configuration(["--feed", "f.xml", "--since", "2026-05-01T00:00:00Z", "--limit", "0",
                                                               "--store", "s.sqlite"])
        #expect(configuration.feed == "f.xml" && configuration.storeOption == "s.sqlite")
        #expect(configuration.query.limit == 0 && configuration.query.changedSince == Date(timeIntervalSince1970: 1_777_593_600))
        #expect(configuration.query.feed == nil, "the feed is looked up in the store")
        #expect(ArticlesCommand.usageError(["--limit", "-1"]) == UsageError(message: "--limit needs a number of articles (0 or more), not '-1'", hint: nil))
        #expect(ArticlesCommand.usageError(["extra"])
                == UsageError(message: "articles takes no arguments, got 'extra'", hint: "use --feed URL for one feed; see 'feedingest articles --help'"))
        #expect(ArticlesCommand.usageError(["--limt", "3"]) == UsageError(message: "unknown option '--limt' for 'articles'", hint: "did you mean '--limit'?"))
        // --limit is checked before --since.
        #expect(ArticlesCommand.usageError(["--since", "soon", "--limit", "x"])?.message.hasPrefix("--limit") == true)
    }

    @Test func feedsDownloadsAndExport() throws {
        let feeds = try FeedsCommand.configuration(["--json", "--all", "--store", "s"])
        #expect(feeds.json && feeds.all && feeds.storeOption == "s")
        let plain = try FeedsCommand.configuration([])
        #expect(!plain.json && !plain.all && plain.storeOption == nil)
        #expect(FeedsCommand.usageError(["x.txt"]) == UsageError(message: "feeds takes no arguments, got 'x.txt'", hint: "see 'feedingest feeds --help'"))
        #expect(FeedsCommand.usageError(["--jsno"]) == UsageError(message: "unknown option '--jsno' for 'feeds'", hint: "did you mean '--json'?"))
        let downloads = try DownloadsCommand.configuration(["--json"])
        #expect(downloads.json && downloads.storeOption == nil)
        #expect(try DownloadsCommand.configuration(["--store", "s"]).storeOption == "s")
        #expect(DownloadsCommand.usageError(["--all"])?.message == "unknown option '--all' for 'downloads'")
        #expect(try ExportOPMLCommand.configuration(["--store", "s"]).storeOption == "s")
        #expect(ExportOPMLCommand.usageError(["--output", "x"])
                == UsageError(message: "unknown option '--output' for 'export-opml'", hint: "see 'feedingest export-opml --help'"))
        #expect(ExportOPMLCommand.usageError(["x.opml"])
                == UsageError(message: "export-opml takes no arguments, got 'x.opml'",
                              hint: "redirect stdout to write a file: 'feedingest export-opml > feeds.opml'"))
    }

    @Test func subscribeAndUnsubscribe() throws {
        let one = try SubscribeCommand.configuration(["https://example.org/feed.xml", "news", "tech", "--store", "s", "-q"])
        guard case .given(let list) = one.feeds else { Issue.record("\(one.feeds)"); return }
        #expect(list.entries.map(\.storeURL) == ["https://example.org/feed.xml"] && list.entries.first?.tags == ["news", "tech"])
        #expect(one.storeOption == "s" && one.quiet)
        let listed = try SubscribeCommand.configuration(["--from", "subscriptions.opml"])
        #expect(listed.feeds == .listed(in: "subscriptions.opml") && !listed.quiet)
        #expect(SubscribeCommand.usageError(["--from", "l.txt", "https://example.org/feed.xml"])
                == UsageError(message: "subscribe takes a URL or --from LIST, not both", hint: nil))
        #expect(SubscribeCommand.usageError([])
                == UsageError(message: "subscribe needs a feed's URL (or --from LIST)", hint: "see 'feedingest subscribe --help'"))
        #expect(SubscribeCommand.usageError(["gopher://example.org/"])?.message.hasPrefix("cannot subscribe to 'gopher://example.org/': ") == true)

        let unsubscribe = try UnsubscribeCommand.configuration(["a.xml", "https://example.org/b.xml", "--purge", "--quiet"])
        #expect(unsubscribe.feeds == ["a.xml", "https://example.org/b.xml"] && unsubscribe.purges && unsubscribe.quiet)
        #expect(try !UnsubscribeCommand.configuration(["a.xml"]).purges)
        #expect(UnsubscribeCommand.usageError(["--purge"]) == UsageError(message: "unsubscribe needs a feed's URL", hint: "'feedingest feeds' lists them"))
    }

    @Test func parse() throws {
        let configuration = try ParseCommand.configuration(["a.xml", "-", "https://example.org/feed", "--report", "r.json",
                                                            "--charset", "windows-1252", "--sanitize", "-q"])
        #expect(configuration.inputs == ["a.xml", "-", "https://example.org/feed"] && configuration.reportPath == "r.json")
        #expect(configuration.quiet && configuration.parser.sanitizesHTML && configuration.parser.xml.charsetHint == "windows-1252")
        let plain = try ParseCommand.configuration(["a.xml"])
        #expect(!plain.quiet && !plain.parser.sanitizesHTML && plain.parser.xml.charsetHint == nil && plain.reportPath == nil)
        #expect(ParseCommand.usageError([]) == UsageError(message: "parse needs at least one FILE (or - for stdin)", hint: "see 'feedingest parse --help'"))
        #expect(ParseCommand.usageError(["a.xml", "--report"]) == UsageError(message: "--report needs a value", hint: nil))
    }

    @Test func everyHelpListsItsOptions() {
        let commands: [(help: String, options: OptionTable)] = [
            (ArticlesCommand.help, ArticlesCommand.options), (FeedsCommand.help, FeedsCommand.options),
            (DownloadsCommand.help, DownloadsCommand.options), (ExportOPMLCommand.help, ExportOPMLCommand.options),
            (SubscribeCommand.help, SubscribeCommand.options), (UnsubscribeCommand.help, UnsubscribeCommand.options),
            (ParseCommand.help, ParseCommand.options), (DownloadCommand.help, DownloadCommand.options),
        ]
        for (help, options) in commands {
            #expect(help.hasPrefix("Usage: feedingest ") && help.contains("\nOptions:\n"))
            for option in options.options { #expect(help.contains("\n  " + option.label), "\(option.label)") }
        }
    }
}
