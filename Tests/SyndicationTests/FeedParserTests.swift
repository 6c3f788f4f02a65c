import ExpatXML
import Foundation
import Syndication
import Testing

@Suite("Feed parser")
struct FeedParserTests {
    @Test("format and version", arguments: [
        ("<rss version=\"2.0\"><channel/></rss>", "RSS 2.0"),
        ("<rss><channel/></rss>", "RSS 2.0"),
        ("<rss version=\"0.91\"><channel/></rss>", "RSS 0.91"),
        ("<rss version=\"0.92\"><channel/></rss>", "RSS 0.92"),
        ("<rss version=\"0.93\"><channel/></rss>", "RSS 0.93"),
        ("<rss version=\"0.94\"><channel/></rss>", "RSS 0.94"),
        ("<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns=\"http://purl.org/rss/1.0/\"><channel/></rdf:RDF>", "RSS 1.0"),
        ("<feed xmlns=\"http://www.w3.org/2005/Atom\"/>", "Atom 1.0"),
        ("<feed version=\"0.3\" xmlns=\"http://purl.org/atom/ns#\"/>", "Atom 0.3"),
    ])
    func format(xml: String, expected: String) {
        let result = parseFeed(xml)
        #expect(result.summary.metadata.format?.description == expected)
        #expect(result.summary.error == nil)
    }

    @Test func rss090IsDetected() {
        let xml = """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://my.netscape.com/rdf/simple/0.9/">
            <channel><title>Old</title></channel><item><title>One</title><link>http://e.org/1</link></item></rdf:RDF>
            """
        let result = parseFeed(xml)
        #expect(result.articles.map(\.title) == ["One"])
        #expect(result.summary.metadata.title == "Old")
    }

    @Test func notAFeedSaysWhatWasFound() {
        let result = parseFeed("<!DOCTYPE html>\n<html><head><title>Oops</title></head></html>")
        let error = result.summary.error
        #expect(error?.kind == .notAFeed)
        #expect(error?.message.contains("<html>") == true)
        #expect(error?.line == 2)
        #expect(result.articles.isEmpty)
    }

    @Test func titleKeepsInnerMarkupAsText() {
        let result = parseFeed("<rss><channel><item><title>Hello <b>World</b> &amp; <i>more</i><br/></title><guid>1</guid></item></channel></rss>")
        #expect(result.articles.first?.title == "Hello <b>World</b> &amp; <i>more</i><br/>")
        let plain = parseFeed("<rss><channel><item><title>AT&amp;T &lt;3</title><guid>1</guid></item></channel></rss>")
        #expect(plain.articles.first?.title == "AT&T <3")
    }

    @Test func atomXHTMLContentDropsTheWrapperDiv() {
        let xml = """
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>1</id>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Hi <a href="x">there</a></p></div></content>
            <summary type="html">&lt;p&gt;escaped&lt;/p&gt;</summary></entry></feed>
            """
        let article = parseFeed(xml).articles.first
        #expect(article?.content == TextContent("<p>Hi <a href=\"x\">there</a></p>", type: .html))
        #expect(article?.summary == TextContent("<p>escaped</p>", type: .html))
    }

    @Test func relativeURLsResolveAgainstNestedXMLBaseThenTheDocument() {
        let xml = """
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://example.org/blog/">
              <link href="/"/>
              <entry xml:base="2024/">
                <id>1</id><link href="post.html"/><link rel="enclosure" href="../audio/a.mp3" type="audio/mpeg" length="123"/>
                <content type="html">&lt;a href="other.html"&gt;x&lt;/a&gt; &lt;img src="/i.png"&gt;</content>
              </entry>
              <entry><id>2</id><link href="p2"/></entry>
            </feed>
            """
        let result = parseFeed(xml, baseURL: "http://ignored.example/feed")
        #expect(result.summary.metadata.link == "http://example.org/")
        #expect(result.articles[0].link == "http://example.org/blog/2024/post.html")
        #expect(result.articles[0].enclosures == [Enclosure(url: "http://example.org/blog/audio/a.mp3", type: "audio/mpeg", length: 123)])
        #expect(result.articles[0].content?.value == "<a href=\"http://example.org/blog/2024/other.html\">x</a> <img src=\"http://example.org/i.png\">")
        #expect(result.articles[0].image == "http://example.org/i.png")
        #expect(result.articles[1].link == "http://example.org/blog/p2")

        let documentBase = parseFeed("<rss><channel><link>/home</link><item><link>a/b</link></item></channel></rss>",
                                     baseURL: "https://feeds.example.net/x/rss.xml")
        #expect(documentBase.summary.metadata.link == "https://feeds.example.net/home")
        #expect(documentBase.articles.first?.link == "https://feeds.example.net/x/a/b")
    }

    @Test func languageIsInheritedFromXMLLangThenTheFeed() {
        let xml = """
            <feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en"><entry xml:lang="de"><id>1</id></entry><entry><id>2</id></entry></feed>
            """
        #expect(parseFeed(xml).articles.map(\.language) == ["de", "en"])
        let rss = parseFeed("<rss><channel><language>fr</language><item><guid>1</guid></item></channel></rss>")
        #expect(rss.articles.first?.language == "fr")
    }

    @Test func unparseableDateKeepsTheRawTextAndTheArticle() {
        let result = parseFeed("<rss><channel><item><title>T</title><pubDate>sometime last week</pubDate></item></channel></rss>")
        #expect(result.articles.count == 1)
        #expect(result.articles.first?.published == nil)
        #expect(result.articles.first?.publishedRaw == "sometime last week")
    }

    @Test func identifierFallsBackFromGuidToLinkToHash() {
        let xml = """
            <rss><channel>
            <item><guid isPermaLink="false">abc</guid><link>http://e.org/1</link></item>
            <item><link>http://e.org/2</link></item>
            <item><title>No id</title><description>body</description></item>
            <item><guid>http://e.org/4</guid></item>
            </channel></rss>
            """
        let articles = parseFeed(xml).articles
        #expect(articles.map(\.idSource) == [.guid, .link, .hash, .guid])
        #expect(articles[0].id == "abc")
        #expect(articles[0].link == "http://e.org/1")
        #expect(articles[1].id == "http://e.org/2")
        #expect(articles[2].id.hasPrefix("hash:") && articles[2].id.count == 21)
        #expect(articles[3].link == "http://e.org/4")  // a permalink guid is the link
        // The hash is stable: the same article parsed again gets the same id; a different one does not.
        #expect(parseFeed(xml).articles[2].id == articles[2].id)
        let other = parseFeed("<rss><channel><item><title>No id</title><description>other</description></item></channel></rss>")
        #expect(other.articles[0].id != articles[2].id)
    }

    @Test func metadataIsKnownProgressively() {
        let xml = """
            <rss><channel><title>Early</title>
            <item><guid>1</guid></item>
            <description>Late</description>
            <item><guid>2</guid></item>
            </channel></rss>
            """
        let result = parseFeed(xml)
        #expect(result.metadataAtArticle.map(\.title) == ["Early", "Early"])
        #expect(result.metadataAtArticle.map { $0.description?.value } == [nil, "Late"])
        #expect(result.summary.metadata.description?.value == "Late")
    }

    @Test func articlesBeforeAnUnrecoverableErrorAreKept() {
        let xml = "<rss><channel><item><guid>1</guid></item><item><guid>2</guid></item>\n<item><guid>3</guid></channel></rss>"
        let result = parseFeed(xml)
        #expect(result.articles.map(\.id) == ["1", "2"])
        #expect(result.summary.error?.kind == .xml(.tagMismatch))
        #expect(result.summary.error?.line == 2)
        #expect(result.summary.articleCount == 2)
    }

    @Test func truncatedDownloadKeepsCompletedArticles() {
        let xml = "<rss><channel><item><guid>1</guid></item><item><guid>2</guid><title>cut he"
        let result = parseFeed(xml)
        #expect(result.articles.map(\.id) == ["1"])
        #expect(result.summary.error != nil)
    }

    @Test func messyInputIsRepairedAndReported() {
        // Mostly UTF-8 (two well-formed sequences before the one bad byte): it stays UTF-8 and the bad byte is repaired.
        let xml = Array("\n\n<?xml version=\"1.0\" encoding=\"utf-8\"?><rss><channel><title>Tom &amp; Jerry & Co — über</title><item><title>caf".utf8)
            + [0xE9] + Array("&nbsp;\u{01}ok</title><guid>1</guid></item></channel></rss>".utf8)
        let result = parseFeed(xml)
        #expect(result.summary.error == nil)
        #expect(result.summary.encoding?.source == .declaration)
        #expect(result.summary.metadata.title == "Tom & Jerry & Co — über")
        #expect(result.articles.first?.title == "caf\u{FFFD}\u{A0}ok")
        let repairs = Dictionary(uniqueKeysWithValues: result.summary.repairs.counts)
        #expect(repairs == ["leadingWhitespace": 1, "bareAmpersands": 1, "invalidUTF8": 1, "htmlEntities": 1, "invalidCharacters": 1])
    }

    @Test func podcastAndNamespaceFields() {
        let xml = """
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0"
                 xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/"
                 xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:slash="http://purl.org/rss/1.0/modules/slash/"
                 xmlns:wfw="http://wellformedweb.org/CommentAPI/" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"
                 xmlns:atom="http://www.w3.org/2005/Atom">
            <channel><title>Pod</title><atom:link rel="self" href="https://e.org/feed"/><atom:link rel="hub" href="https://hub.e.org/"/>
            <sy:updatePeriod>daily</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency><ttl>60</ttl>
            <skipHours><hour>1</hour><hour>2</hour></skipHours><skipDays><day>Sunday</day></skipDays>
            <itunes:image href="https://e.org/cover.jpg"/>
            <item>
              <title>Ep 1</title><guid>ep1</guid><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate>
              <dc:creator>Alice</dc:creator><dc:creator>Bob</dc:creator>
              <description>short</description><content:encoded><![CDATA[<p>long</p>]]></content:encoded>
              <category>a</category><category>b</category><category>a</category>
              <enclosure url="https://e.org/ep1.mp3" type="audio/mpeg" length="1234"/>
              <media:content url="https://e.org/ep1.mp3" type="audio/mpeg"/>
              <media:thumbnail url="https://e.org/t.jpg"/>
              <itunes:duration>1:02:03</itunes:duration><itunes:episode>1</itunes:episode><itunes:season>2</itunes:season>
              <itunes:explicit>no</itunes:explicit><itunes:keywords>swift, xml ,feeds</itunes:keywords><itunes:image href="https://e.org/ep1.jpg"/>
              <podcast:guid>urn:uuid:1</podcast:guid><podcast:transcript url="https://e.org/t.vtt" type="text/vtt" language="en"/>
              <podcast:chapters url="https://e.org/c.json" type="application/json+chapters"/>
              <comments>https://e.org/ep1#c</comments><wfw:commentRss>https://e.org/ep1/feed</wfw:commentRss><slash:comments>7</slash:comments>
            </item></channel></rss>
            """
        let result = parseFeed(xml)
        let article = try! #require(result.articles.first)
        #expect(article.authors == [Person(name: "Alice"), Person(name: "Bob")])
        #expect(article.summary == TextContent("short", type: .html))
        #expect(article.content == TextContent("<p>long</p>", type: .html))
        // itunes:keywords are categories too (issue 16), with iTunes's scheme.
        #expect(article.categories == ["a", "b", "swift", "xml", "feeds"])
        #expect(article.categoryDetails.suffix(3) == ["swift", "xml", "feeds"].map { Category(term: $0, scheme: Category.iTunesScheme) })
        #expect(article.enclosures == [Enclosure(url: "https://e.org/ep1.mp3", type: "audio/mpeg", length: 1234)])
        #expect(article.image == "https://e.org/ep1.jpg")
        #expect(article.comments == "https://e.org/ep1#c")
        #expect(article.commentsFeed == "https://e.org/ep1/feed")
        #expect(article.commentCount == 7)
        #expect(article.published.map(FeedDate.rfc3339) == "2003-06-10T04:00:00Z")
        let podcast = try! #require(article.podcast)
        #expect(podcast.durationSeconds == 3723)
        #expect(podcast.episode == 1 && podcast.season == 2 && podcast.explicit == false)
        #expect(podcast.keywords == ["swift", "xml", "feeds"])
        #expect(podcast.guid == "urn:uuid:1")
        #expect(podcast.transcripts == [Transcript(url: "https://e.org/t.vtt", type: "text/vtt", language: "en")])
        #expect(podcast.chaptersURL == "https://e.org/c.json")
        let feed = result.summary.metadata
        #expect(feed.selfLink == "https://e.org/feed")
        #expect(feed.hubs == ["https://hub.e.org/"])
        #expect(feed.updatePeriod == .daily && feed.updateFrequency == 2 && feed.ttl == 60)
        #expect(feed.skipHours == [1, 2] && feed.skipDays == ["Sunday"])
        #expect(feed.image == "https://e.org/cover.jpg")
    }

    @Test func rssAuthorForms() {
        let xml = """
            <rss><channel>
            <item><guid>1</guid><author>jo@example.org (Jo Doe)</author></item>
            <item><guid>2</guid><author>Jo Doe &lt;jo@example.org&gt;</author></item>
            <item><guid>3</guid><author>jo@example.org</author></item>
            <item><guid>4</guid><author>Jo Doe</author></item>
            </channel></rss>
            """
        #expect(parseFeed(xml).articles.map(\.authors) == [
            [Person(name: "Jo Doe", email: "jo@example.org")], [Person(name: "Jo Doe", email: "jo@example.org")],
            [Person(email: "jo@example.org")], [Person(name: "Jo Doe")],
        ])
    }

    @Test func atomSourceDoesNotLeakIntoTheEntry() {
        let xml = """
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>mine</id><title>Mine</title>
            <source><id>theirs</id><title>Theirs</title><updated>2001-01-01T00:00:00Z</updated></source>
            <author><name>A</name><email>a@e.org</email><uri>http://a.e.org/</uri></author></entry></feed>
            """
        let article = parseFeed(xml).articles.first
        #expect(article?.id == "mine")
        #expect(article?.title == "Mine")
        #expect(article?.updated == nil)
        #expect(article?.authors == [Person(name: "A", email: "a@e.org", uri: "http://a.e.org/")])
    }
}
