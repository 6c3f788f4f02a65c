import Fetch
import Foundation
import Ingest
import Testing

@Suite("FeedList")
struct FeedListTests {
    @Test func readsURLsPathsFileURLsTagsCommentsAndBlankLines() {
        let text = """
            # my feeds
            https://example.com/feed.xml  tech  news
            http://example.org/rss # trailing comment
            \t
            feeds/local.xml podcast
            /abs/path/feed.atom
            file:///var/feeds/one.rss
            ~/x.xml
            """
        let list = FeedList(text: text, baseDirectory: "/base")
        #expect(list.problems.isEmpty)
        #expect(list.entries.map(\.source) == [
            "https://example.com/feed.xml", "http://example.org/rss", "/base/feeds/local.xml", "/abs/path/feed.atom",
            "/var/feeds/one.rss", NSString(string: "~/x.xml").expandingTildeInPath,
        ])
        #expect(list.entries.map(\.line) == [2, 3, 5, 6, 7, 8])
        #expect(list.entries[0].tags == ["tech", "news"])
        #expect(list.entries[1].tags == [])
        #expect(list.entries[2].tags == ["podcast"])
        #expect(list.entries[0].location == .remote(URL(string: "https://example.com/feed.xml")!))
        #expect(list.entries[2].location == .local("/base/feeds/local.xml"))
        #expect(list.entries[4].storeURL == "file:///var/feeds/one.rss")
    }

    @Test func reportsBadLinesWithTheirNumbersAndKeepsTheRest() {
        let text = """
            https://ok.example/feed
            ftp://example.com/feed.xml
            http://
            https:///no-host
            gopher:feed
            ./relative.xml
            file://remote.host/feed.xml
            """
        let list = FeedList(text: text, baseDirectory: "/b")
        #expect(list.entries.map(\.source) == ["https://ok.example/feed", "/b/relative.xml"])
        #expect(list.problems.map(\.line) == [2, 3, 4, 5, 7])
        #expect(list.problems[0].message.contains("unknown scheme 'ftp'"))
        #expect(list.problems[1].message.hasPrefix("not a"), "\(list.problems[1])")
        #expect(list.problems[0].description.hasPrefix("line 2: "))
        #expect(list.problems[0].text == "ftp://example.com/feed.xml")
    }

    /// Every URL libcurl's parser refuses is a bad line when the list is read, with libcurl's reason, instead of a
    /// fetch failure later without its line number; the URLs it accepts stay as written.
    @Test func checksURLsWithLibcurlsParser() {
        let text = """
            http://[zz]/feed
            https://example.com:99999/feed
            http://exa<mple.com/feed
            http://127.0.0.1:8080/feed.xml?x=1#top
            https://[::1]:8443/atom
            https://example.com/caf%C3%A9/feed
            http://[::1/feed
            """
        let list = FeedList(text: text, baseDirectory: "/")
        #expect(list.entries.map(\.source) == [
            "http://127.0.0.1:8080/feed.xml?x=1#top", "https://[::1]:8443/atom", "https://example.com/caf%C3%A9/feed",
        ])
        #expect(list.problems.map(\.line) == [1, 2, 3, 7])
        for problem in list.problems {
            #expect(problem.message.hasPrefix("not a URL libcurl accepts: "), "\(problem)")
        }
        #expect(list.problems[0].message.contains("IPv6"), "libcurl's own words: \(list.problems[0].message)")
        #expect(list.problems[1].message.lowercased().contains("port"), "\(list.problems[1].message)")
        #expect(list.problems[2].message.contains("Bad hostname"), "\(list.problems[2].message)")
        #expect(FetchRequest.problem(with: "http://[zz]/feed") == .badIPv6)
        #expect(FetchRequest.problem(with: "https://example.com/feed") == nil)
    }

    @Test func keepsDuplicatesOnceWithTheTagsOfEveryLine() {
        let text = """
            https://example.com/feed a
            /tmp/f.xml
            https://example.com/feed b a
            file:///tmp/f.xml
            /tmp/./f.xml
            """
        let list = FeedList(text: text, baseDirectory: "/")
        #expect(list.entries.count == 2)
        #expect(list.entries[0].tags == ["a", "b"])
        #expect(list.entries[0].line == 1)
        #expect(list.entries[1].source == "/tmp/f.xml")
        #expect(list.problems.isEmpty)
    }

    @Test func handlesCRLFAndAByteOrderMark() {
        let list = FeedList(data: Data("\u{FEFF}https://a.example/1\r\n\r\nhttps://a.example/2 t\r\n".utf8), baseDirectory: "/")
        #expect(list.entries.map(\.source) == ["https://a.example/1", "https://a.example/2"])
        #expect(list.entries[1].tags == ["t"])
        #expect(list.entries[1].line == 3)
    }

    @Test func emptyListHasNoEntries() {
        #expect(FeedList(text: "", baseDirectory: "/").entries.isEmpty)
        #expect(FeedList(text: "# only\n\n", baseDirectory: "/").problems.isEmpty)
    }

    @Test func readsOPMLWithNestedOutlinesAsTags() {
        let opml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <opml version="2.0">
              <head><title>subs</title></head>
              <body>
                <outline text="Tech">
                  <outline text="Apple">
                    <outline type="rss" text="DF" xmlUrl="https://daringfireball.net/feeds/main"/>
                  </outline>
                  <outline type="rss" text="Go" xmlUrl="https://go.dev/blog/feed.atom"/>
                </outline>
                <outline type="rss" text="Top" xmlUrl="http://example.com/top.xml"/>
                <outline type="rss" text="Again" xmlUrl="https://go.dev/blog/feed.atom"/>
                <outline type="rss" text="Bad" xmlUrl="ftp://example.com/x"/>
              </body>
            </opml>
            """
        let list = FeedList(data: Data(opml.utf8), baseDirectory: "/")
        #expect(list.entries.map(\.source) == ["https://daringfireball.net/feeds/main", "https://go.dev/blog/feed.atom", "http://example.com/top.xml"])
        #expect(list.entries.map(\.tags) == [["Tech", "Apple"], ["Tech"], []])
        #expect(list.entries[0].line == 7)
        #expect(list.problems.count == 1)
        #expect(list.problems.first?.line == 13)
    }

    @Test func reportsMalformedOPMLButKeepsTheFeedsBeforeTheError() {
        let opml = "<opml><body>\n<outline xmlUrl=\"https://a.example/f\"/>\n<outline></body></opml>"
        let list = FeedList(data: Data(opml.utf8), baseDirectory: "/")
        #expect(list.entries.map(\.source) == ["https://a.example/f"])
        #expect(list.problems.count == 1)
        #expect(list.problems.first?.message.contains("OPML") == true)
        #expect(list.problems.first?.line == 3)
    }

    @Test func aPlainListMentioningOPMLIsNotOPML() {
        let list = FeedList(data: Data("https://example.com/opml-feed <opml\n".utf8), baseDirectory: "/")
        #expect(list.entries.count == 1)
    }

    @Test func loadsAFileResolvingRelativePathsAgainstItsDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedlist-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("feeds.txt")
        try Data("a.xml\n".utf8).write(to: file)
        let list = try FeedList.load(path: file.path)
        #expect(list.entries.first?.source == directory.appendingPathComponent("a.xml").standardizedFileURL.path)
        #expect(throws: (any Error).self) { try FeedList.load(path: directory.appendingPathComponent("missing.txt").path) }
    }
}
