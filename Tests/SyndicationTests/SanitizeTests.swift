import Foundation
import Syndication
import Testing

/// The parser's sanitiser option (`--sanitize`): HTML fields cleaned, text fields and relative URLs left alone.
@Suite struct SanitizeTests {
    static let feed = """
        <rss version="2.0"><channel><title>Feed &lt;i onclick="x()"&gt;T&lt;/i&gt;</title>
        <description>&lt;p&gt;About&lt;script&gt;x()&lt;/script&gt;&lt;/p&gt;</description>
        <item><guid>1</guid><title>A &amp; B</title>
        <description>&lt;a href="rel/page.html" onclick="x()"&gt;rel&lt;/a&gt;&lt;img src="javascript:x()"&gt;</description>
        <content:encoded xmlns:content="http://purl.org/rss/1.0/modules/content/">&lt;style&gt;p{}&lt;/style&gt;&lt;p&gt;body&lt;/p&gt;</content:encoded>
        </item></channel></rss>
        """

    func configuration(sanitizing: Bool) -> FeedParserConfiguration {
        var configuration = FeedParserConfiguration()
        configuration.sanitizesHTML = sanitizing
        return configuration
    }

    @Test func cleansHTMLFieldsAndTheFeedsMetadata() throws {
        let result = parseFeed(Array(Self.feed.utf8), baseURL: "http://127.0.0.1/blog/", configuration: configuration(sanitizing: true))
        let article = try #require(result.articles.first)
        #expect(article.title == "A & B")  // no markup: left as text
        // Relative links were resolved first, then cleaned.
        #expect(article.summary?.value == #"<a href="http://127.0.0.1/blog/rel/page.html">rel</a><img>"#)
        #expect(article.content?.value == "<p>body</p>")
        #expect(result.metadataAtArticle.first?.title == "Feed <i>T</i>")
        #expect(result.metadataAtArticle.first?.description?.value == "<p>About</p>")
        #expect(result.summary.metadata.description?.value == "<p>About</p>")
    }

    @Test func withoutTheOptionNothingChanges() throws {
        let result = parseFeed(Array(Self.feed.utf8), configuration: configuration(sanitizing: false))
        let article = try #require(result.articles.first)
        #expect(article.summary?.value == #"<a href="rel/page.html" onclick="x()">rel</a><img src="javascript:x()">"#)
        #expect(result.summary.metadata.title == #"Feed <i onclick="x()">T</i>"#)
    }

    @Test func chunkingDoesNotChangeTheCleanedArticles() {
        let whole = parseFeed(Array(Self.feed.utf8), configuration: configuration(sanitizing: true))
        let bytewise = parseFeed(Array(Self.feed.utf8), chunk: 1, configuration: configuration(sanitizing: true))
        #expect(whole.articles == bytewise.articles)
        #expect(!whole.articles.isEmpty)
    }
}
