import Foundation
import TestSupport
import Testing

/// Subscriptions live in the store: lists sync into them, `subscribe` and `unsubscribe` change them by hand, `ingest`
/// without FEEDS fetches them, `feeds` and `export-opml` show only them; and a feed given where a list belongs is
/// refused before anything is stored.
@Suite("feedingest subscriptions")
struct SubscriptionTests {
    static let bio = Paths.realworld.appendingPathComponent("bio.rdf").path
    static let atp = Paths.realworld.appendingPathComponent("atp.rss").path
    static let omni = Paths.realworld.appendingPathComponent("theomnishow.rss").path

    static func feedURLs(_ run: CommandRunner.Result) -> [String] {
        IngestCommandTests.objects(run).compactMap { $0["url"] as? String }
    }

    @Test(arguments: ["atp.rss", "bio.rdf", "json"]) func aFeedGivenAsAListIsRefusedAndNothingIsStored(_ name: String) throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let feed: URL
        if name == "json" {
            feed = directory.appendingPathComponent("feed.json")
            try Data(#"{"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [{"id": "1", "content_text": "x"}]}"#.utf8)
                .write(to: feed)
        } else {
            feed = Paths.realworld.appendingPathComponent(name)
        }
        let store = directory.appendingPathComponent("store.sqlite")
        for command in [[feed.path], ["watch", feed.path], ["subscribe", "--from", feed.path]] {
            let run = try CommandRunner.run(command + ["--store", store.path])
            #expect(run.status == 2, "\(command): \(run.stderr)")
            #expect(run.stderr.contains("not a feed list") && run.stderr.contains("feedingest parse \(feed.path)"), "\(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1, "one line: \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: store.path), "nothing stored, not even a store")
        let piped = try CommandRunner.run(["-", "--store", store.path], stdin: try Data(contentsOf: feed))
        #expect(piped.status == 2 && piped.stderr.contains("feedingest parse -"), "\(piped.stderr)")
        // What the hint says works.
        let hinted = try CommandRunner.run(["-", "--store", store.path], stdin: Data((feed.path + "\n").utf8))
        #expect(hinted.status == 0, "\(hinted.stderr)")
        #expect(!hinted.stdout.isEmpty)
    }

    @Test func subscribeUnsubscribeAndIngestWithoutAList() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store.sqlite").path

        let nothing = try CommandRunner.run(["ingest", "--store", store])
        #expect(nothing.status == 0 && nothing.stderr.contains("no subscriptions"), "\(nothing.stderr)")

        let first = try CommandRunner.run(["subscribe", Self.bio, "science", "--store", store])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "subscribed \(Self.bio)\n")
        #expect(try IngestCommandTests.count("articles", in: URL(fileURLWithPath: store)) == 0, "subscribing fetches nothing")
        let again = try CommandRunner.run(["subscribe", Self.bio, "--store", store])
        #expect(again.stdout == "already subscribed \(Self.bio)\n")
        let list = directory.appendingPathComponent("more.txt")
        try Data("\(Self.atp) podcasts\nftp://example.org/feed\n".utf8).write(to: list)
        let imported = try CommandRunner.run(["subscribe", "--from", list.path, "--store", store])
        #expect(imported.status == 1, "a bad line: \(imported.stderr)")
        #expect(imported.stdout == "subscribed \(Self.atp)\n" && imported.stderr.contains("more.txt:2:"), "\(imported.stderr)")
        let bad = try CommandRunner.run(["subscribe", "gopher://example.org/", "--store", store])
        #expect(bad.status == 2 && bad.stderr.contains("cannot subscribe to 'gopher://example.org/'"), "\(bad.stderr)")

        // ingest without FEEDS fetches what is subscribed, with the tags given.
        let ingested = try CommandRunner.run(["ingest", "--store", store])
        #expect(ingested.status == 0, "\(ingested.stderr)")
        #expect(ingested.stderr.contains("2 feeds: 2 ok"), "\(ingested.stderr)")
        #expect(Set(IngestCommandTests.objects(ingested).compactMap { $0["feed"] as? String }) == [Self.bio, Self.atp])
        let feeds = try CommandRunner.run(["feeds", "--json", "--store", store])
        let byURL = Dictionary(uniqueKeysWithValues: IngestCommandTests.objects(feeds).map { ($0["url"] as? String ?? "", $0) })
        #expect((byURL[Self.bio]?["tags"] as? [String]) == ["science"])
        #expect(byURL[Self.bio]?["subscribed"] as? Bool == true && byURL[Self.bio]?["listSource"] == nil)
        let validation = try validate(feeds.stdout, schema: "feed.schema.json", lines: true)
        #expect(validation.ok, "\(validation.output)")

        // unsubscribe: not fetched, shown or exported any more; the articles stay.
        let articles = try IngestCommandTests.count("articles", in: URL(fileURLWithPath: store))
        let gone = try CommandRunner.run(["unsubscribe", Self.atp, "--store", store])
        #expect(gone.status == 0 && gone.stdout.hasPrefix("unsubscribed \(Self.atp) ("), "\(gone.stdout)\(gone.stderr)")
        #expect(try IngestCommandTests.count("articles", in: URL(fileURLWithPath: store)) == articles)
        #expect(Self.feedURLs(try CommandRunner.run(["feeds", "--json", "--store", store])) == [Self.bio])
        let all = try CommandRunner.run(["feeds", "--json", "--all", "--store", store])
        #expect(Set(Self.feedURLs(all)) == [Self.bio, Self.atp])
        #expect(IngestCommandTests.objects(all).first { $0["url"] as? String == Self.atp }?["status"] as? String == "unsubscribed")
        let opml = try CommandRunner.run(["export-opml", "--store", store])
        #expect(opml.stdout.contains("bio.rdf") && !opml.stdout.contains("atp.rss"), "\(opml.stdout)")
        let next = try CommandRunner.run(["ingest", "--store", store])
        #expect(next.stderr.contains("1 feed: 1 ok"), "\(next.stderr)")

        // --purge deletes the feed and its articles; an unknown name is an error that names the store.
        let purged = try CommandRunner.run(["unsubscribe", "--purge", Self.bio, "--store", store])
        #expect(purged.status == 0 && purged.stdout.hasPrefix("deleted \(Self.bio) and "), "\(purged.stdout)")
        #expect(try IngestCommandTests.count("articles WHERE feed_id NOT IN (SELECT id FROM feeds)", in: URL(fileURLWithPath: store)) == 0)
        #expect(!Self.feedURLs(try CommandRunner.run(["feeds", "--json", "--all", "--store", store])).contains(Self.bio))
        let unknown = try CommandRunner.run(["unsubscribe", "/no/such/feed.xml", "--store", store])
        #expect(unknown.status == 1 && unknown.stderr.contains("no feed '/no/such/feed.xml'"), "\(unknown.stderr)")
    }

    /// A list is the whole truth about the feeds it subscribed: a line removed is unsubscribed at the next run (its
    /// articles kept), and another list's feeds are left alone.
    @Test func aListUnsubscribesTheFeedsItNoLongerNames() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store.sqlite").path
        let a = directory.appendingPathComponent("a.txt"), b = directory.appendingPathComponent("b.txt")
        try Data("\(Self.bio)\n\(Self.atp)\n".utf8).write(to: a)
        try Data("\(Self.omni)\n".utf8).write(to: b)
        #expect(try CommandRunner.run([a.path, "--store", store]).status == 0)
        #expect(try CommandRunner.run([b.path, "--store", store]).status == 0)
        try Data("\(Self.bio)\n".utf8).write(to: a)
        let again = try CommandRunner.run([a.path, "--store", store])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("1 feed no longer in \(a.path) unsubscribed"), "\(again.stderr)")
        #expect(Set(Self.feedURLs(try CommandRunner.run(["feeds", "--json", "--store", store]))) == [Self.bio, Self.omni])
        let all = try CommandRunner.run(["feeds", "--json", "--all", "--store", store])
        let source = IngestCommandTests.objects(all).first { $0["url"] as? String == Self.bio }?["listSource"] as? String
        #expect(source == a.resolvingSymlinksInPath().path)
        // The line comes back: subscribed again, with its articles.
        try Data("\(Self.bio)\n\(Self.atp)\n".utf8).write(to: a)
        #expect(try CommandRunner.run([a.path, "--store", store]).status == 0)
        #expect(Set(Self.feedURLs(try CommandRunner.run(["feeds", "--json", "--store", store]))) == [Self.bio, Self.atp, Self.omni])
        // A one-off list on stdin subscribes and removes nothing.
        #expect(try CommandRunner.run(["-", "--store", store], stdin: Data("\(Self.omni)\n".utf8)).status == 0)
        #expect(Self.feedURLs(try CommandRunner.run(["feeds", "--json", "--store", store])).count == 3)
    }

    /// A line removed from a watched list leaves the store's subscriptions too.
    @Test func aLineRemovedFromAWatchedListIsUnsubscribed() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store.sqlite").path
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("\(Self.bio)\n\(Self.atp)\n".utf8).write(to: list)
        let watch = try ChildProcess(CommandRunner.binary.path, ["watch", list.path, "--store", store, "--min-interval", "1h"],
                                     capturesStandardError: true)
        var feeds: [String] = []
        for _ in 0..<200 where feeds.count != 2 {
            Thread.sleep(forTimeInterval: 0.05)
            feeds = Self.feedURLs(try CommandRunner.run(["feeds", "--json", "--store", store]))
        }
        #expect(Set(feeds) == [Self.bio, Self.atp])
        try Data("\(Self.bio)\n".utf8).write(to: list)
        for _ in 0..<200 where feeds.count != 1 {
            Thread.sleep(forTimeInterval: 0.05)
            feeds = Self.feedURLs(try CommandRunner.run(["feeds", "--json", "--store", store]))
        }
        #expect(feeds == [Self.bio], "the removed line is no longer shown")
        watch.kill(SIGTERM)
        #expect(watch.waitUntilExit() == 0)
        #expect(watch.readStandardError().contains("reloaded: 1 feed (0 added, 1 removed)"))
        let opml = try CommandRunner.run(["export-opml", "--store", store])
        #expect(!opml.stdout.contains("atp.rss"))
    }
}
