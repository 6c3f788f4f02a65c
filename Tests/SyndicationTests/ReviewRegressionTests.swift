import ExpatXML
import Foundation
import Syndication
import Testing

/// Bugs an adversarial review found in the feed parser, each pinned by the input that showed it.
@Suite("Review regressions (Syndication)")
struct SyndicationReviewRegressionTests {
    @Test("hostile durations neither trap nor lose the article", arguments: ["nan", "inf", "1e300", "-5", "99999999999999999:00:00", "1:-2", "::"])
    func hostileDurations(text: String) {
        let xml = "<rss xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel><item><guid>1</guid>"
            + "<itunes:duration>\(text)</itunes:duration></item><item><guid>2</guid></item></channel></rss>"
        let result = parseFeed(xml)
        #expect(result.articles.map(\.id) == ["1", "2"])
        #expect(result.articles.first?.podcast?.durationSeconds == nil)
    }

    @Test func longListsAreBoundedNotQuadratic() {
        var xml = "<rss><channel><item><guid>1</guid>"
        for index in 0..<20_000 { xml += "<category>c\(index)</category><enclosure url=\"http://e.org/\(index).mp3\"/>" }
        xml += "</item></channel></rss>"
        let article = parseFeed(xml).articles.first
        #expect(article?.categories.count == 256)
        #expect(article?.enclosures.count == 256)
        #expect(article?.categories.first == "c0")
    }

    @Test func aFieldOfManySmallNodesStillHasTheTextLimit() {
        var configuration = FeedParserConfiguration()
        configuration.xml.maximumTextNodeBytes = 64 * 1024
        let paragraph = "<p>" + String(repeating: "x", count: 1000) + "</p>"
        let xml = "<rss><channel><item><guid>kept</guid></item><item><guid>2</guid><description>"
            + String(repeating: paragraph, count: 200) + "</description></item></channel></rss>"
        let result = parseFeed(Array(xml.utf8), configuration: configuration)
        #expect(result.articles.map(\.id) == ["kept"])
        #expect(result.summary.error?.kind == .xml(.textNodeTooLarge))
        #expect(result.summary.error?.line == 1)
    }

    @Test func valuesTheSchemaForbidsAreLeftOut() {
        let xml = """
            <rss><channel><item><guid>1</guid><author>()</author><enclosure url="http://x/a.mp3" length="-1"/>
            <pubDate>0000-01-01T00:00:00+01:00</pubDate><updated xmlns="http://www.w3.org/2005/Atom">9999-12-31T23:00:00-05:00</updated>
            </item></channel></rss>
            """
        let article = parseFeed(xml).articles.first
        #expect(article?.authors == [])
        #expect(article?.enclosures == [Enclosure(url: "http://x/a.mp3")])
        #expect(article?.published == nil && article?.publishedRaw == "0000-01-01T00:00:00+01:00")
    }

    @Test func anEmptyXMLBaseInheritsTheBase() {
        let result = parseFeed("<rss><channel><item xml:base=\"\"><link>c.html</link></item></channel></rss>",
                               baseURL: "http://example.com/a/b.xml")
        #expect(result.articles.first?.link == "http://example.com/a/c.html")
    }

    @Test("RSS versions are reported as digits and dots", arguments: [("2.01", "2.01"), ("2.1", "2.1"), ("2.0 beta", "2.0"), ("x", "2.0")])
    func versions(written: String, reported: String) {
        #expect(parseFeed("<rss version=\"\(written)\"><channel/></rss>").summary.metadata.format?.version == reported)
    }

    @Test func theHTMLAlternateLinkIsPreferred() {
        let xml = """
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>1</id>
            <link rel="alternate" type="application/pdf" href="http://e.org/a.pdf"/><link rel="alternate" type="text/html" href="http://e.org/a"/>
            </entry></feed>
            """
        #expect(parseFeed(xml).articles.first?.link == "http://e.org/a")
    }
}
