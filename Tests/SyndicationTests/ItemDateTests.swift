import Foundation
@testable import Syndication
import Testing

/// An item's dates are kept as bytes while it is open (`ItemBuilder.setDate`, issue 18): what an article gets from them
/// must be what it got when they were `String`s.
@Suite struct ItemDateTests {
    static func articles(_ items: String) -> [Article] {
        parseFeed("<rss version=\"2.0\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><channel><title>t</title>\(items)</channel></rss>").articles
    }

    @Test func anArticleWithoutAnIdentifierIsHashedWithItsDateText() throws {
        let article = try #require(Self.articles("<item><title>Hello</title><pubDate>  Tue, 10 Jun 2003 04:00:00 GMT \n</pubDate></item>").first)
        #expect(article.idSource == .hash)
        #expect(article.id == ItemBuilder.fallbackID(title: "Hello", date: "Tue, 10 Jun 2003 04:00:00 GMT", content: nil))
        #expect(article.published == FeedDate.parse("Tue, 10 Jun 2003 04:00:00 GMT"))
    }

    @Test func theLastDateElementWinsAndAnEmptyOneEmptiesIt() throws {
        let later = try #require(Self.articles("<item><guid>a</guid><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate><pubDate>Wed, 11 Jun 2003 04:00:00 GMT</pubDate></item>").first)
        #expect(later.published == FeedDate.parse("Wed, 11 Jun 2003 04:00:00 GMT"))
        let emptied = try #require(Self.articles("<item><guid>a</guid><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate><pubDate> </pubDate></item>").first)
        #expect(emptied.published == nil)
        #expect(emptied.publishedRaw == nil)
    }

    @Test func dcDateKeepsTheFirst() throws {
        let article = try #require(Self.articles("<item><guid>a</guid><dc:date>2003-06-10T04:00:00Z</dc:date><dc:date>2004-06-10T04:00:00Z</dc:date></item>").first)
        #expect(article.published == FeedDate.parse("2003-06-10T04:00:00Z"))
    }

    @Test func anUnreadableDateKeepsItsTextAndALaterCandidateStillCounts() throws {
        let short = try #require(Self.articles("<item><guid>a</guid><pubDate> sometime soon </pubDate></item>").first)
        #expect(short.published == nil)
        #expect(short.publishedRaw == "sometime soon")
        let long = String(repeating: "not a date ", count: 10).trimmingCharacters(in: .whitespaces)  // past the 48 bytes kept inline
        let longArticle = try #require(Self.articles("<item><guid>a</guid><pubDate>\(long)</pubDate></item>").first)
        #expect(longArticle.publishedRaw == long)
        let fallback = try #require(Self.articles("<item><guid>a</guid><pubDate>sometime</pubDate><dc:date>2003-06-10T04:00:00Z</dc:date></item>").first)
        #expect(fallback.published == FeedDate.parse("2003-06-10T04:00:00Z"))
        #expect(fallback.publishedRaw == nil)
        let escaped = try #require(Self.articles("<item><guid>a</guid><pubDate>Tue, 10 Jun 2003 04:00:00 &#43;0000</pubDate></item>").first)
        #expect(escaped.published == FeedDate.parse("Tue, 10 Jun 2003 04:00:00 +0000"))
    }

    /// Items one after another reuse the slots: one item's date never leaks into the next.
    @Test func aDateDoesNotOutliveItsItem() {
        let articles = Self.articles("<item><guid>a</guid><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate></item><item><guid>b</guid></item>"
            + "<item><guid>c</guid><pubDate>junk</pubDate></item><item><guid>d</guid></item>")
        #expect(articles.map(\.id) == ["a", "b", "c", "d"])
        #expect(articles.map { $0.published != nil } == [true, false, false, false])
        #expect(articles.map(\.publishedRaw) == [nil, nil, "junk", nil])
    }
}
