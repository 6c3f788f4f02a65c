import Fetch
import Foundation
import Support
import Syndication
import TestSupport
import Testing

/// Parses a fetched body into articles with Syndication's `FeedParser`, created when the response arrives so the
/// `Content-Type` charset becomes its hint: how the ingest pipeline plugs Syndication into Fetch.
final class ArticleConsumer: FetchConsumer {
    private(set) var parser: FeedParser?
    private(set) var articles: [Article] = []
    private(set) var finished = false
    var onArticle: ((Article) -> Void)?

    func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        var configuration = FeedParserConfiguration()
        if let charset = response.charset { configuration.xml.charsetHint = charset }
        let url = response.url.absoluteString
        parser = FeedParser(source: url, baseURL: url, configuration: configuration) { [unowned self] article, _ in
            articles.append(article)
            onArticle?(article)
        }
    }

    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        try parser?.parse(bytes)
    }

    func fetchDidFinish() throws {
        try parser?.finish()
        finished = true
    }
}

/// The end-to-end proofs with real articles from Syndication.
@Suite("Articles over the network")
struct ArticleStreamingTests {
    let server: FaultServer

    init() throws {
        server = try FaultServer.shared.get()
    }

    /// The server sends the first item and waits; only when the test has the first *article* in hand does it send
    /// the rest. Buffering anywhere (libcurl, inflate, parser) would deadlock this test until the server gives up.
    @Test(arguments: ["0", "1"])
    func firstArticleBeforeTheRestIsSent(gzip: String) throws {
        let token = makeToken() + gzip
        let consumer = ArticleConsumer()
        let seenFirst = Lock<String?>(nil)
        consumer.onArticle = { article in
            if consumer.articles.count == 1 {
                seenFirst.withLock { $0 = article.title }
                try? self.server.release(token)
            }
        }
        let result = Fetcher().fetch(FetchRequest(url: server.url("/stream?items=20&gzip=\(gzip)&token=\(token)")), into: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(seenFirst.withLock { $0 } == "Item 0")
        #expect(consumer.articles.count == 20)
        #expect(consumer.articles.last?.link == "http://127.0.0.1/items/19")
        #expect(consumer.finished)
    }

    @Test func articlesBeforeAResetAreKept() throws {
        let token = makeToken()
        let consumer = ArticleConsumer()
        consumer.onArticle = { _ in
            if consumer.articles.count == 2 { try? self.server.release(token) }
        }
        let result = Fetcher().fetch(FetchRequest(url: server.url("/reset?items=10&token=\(token)")), into: consumer)
        #expect(result.error?.kind == .truncated)
        #expect(consumer.articles.map(\.title) == ["Item 0", "Item 1"])
        #expect(!consumer.finished)
    }

    @Test func charsetHeaderReachesTheFeedParser() throws {
        let consumer = ArticleConsumer()
        let result = Fetcher().fetch(FetchRequest(url: server.url("/charset")), into: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(consumer.articles.map(\.title) == ["Привет, мир"])
        #expect(consumer.parser?.summary.encoding?.name == "windows-1251")
    }
}
