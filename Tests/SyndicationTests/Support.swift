import ExpatXML
import Foundation
import Syndication

/// Parses `bytes` split into `chunk`-byte pieces, collecting articles and the summary.
func parseFeed(_ bytes: [UInt8], chunk: Int = 1 << 20, source: String = "test.xml", baseURL: String? = nil,
               configuration: FeedParserConfiguration = .init()) -> (articles: [Article], metadataAtArticle: [FeedMetadata], summary: FeedSummary) {
    var articles: [Article] = []
    var metadata: [FeedMetadata] = []
    let parser = FeedParser(source: source, baseURL: baseURL, configuration: configuration) { article, feed in
        articles.append(article)
        metadata.append(feed)
    }
    var offset = 0
    do {
        while offset < bytes.count {
            try parser.parse(Array(bytes[offset..<min(bytes.count, offset + chunk)]))
            offset += chunk
        }
        try parser.finish()
    } catch {}
    return (articles, metadata, parser.summary)
}

func parseFeed(_ xml: String, chunk: Int = 1 << 20, baseURL: String? = nil) -> (articles: [Article], metadataAtArticle: [FeedMetadata], summary: FeedSummary) {
    parseFeed(Array(xml.utf8), chunk: chunk, baseURL: baseURL)
}
