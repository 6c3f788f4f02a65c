import ExpatXML
import Fetch
import Foundation
import Syndication
import XMLFetching

/// Fetches a feed and parses it as it arrives: the one place where a transfer's response (its charset, its media type,
/// its final URL) meets the feed parser.
///
/// Ingest's workers and `feedingest parse` both read feeds through it, whatever the source: an `http`/`https`
/// transfer, a local file (`FetchRequest.localFile`) or standard input (`FetchRequest.standardInput`); gzip is inflated
/// by Fetch on the way. The parser is made when the response arrives, so the `Content-Type` charset becomes its hint
/// (unless the configuration sets one: an explicit `--charset` wins), and relative links resolve against the URL the
/// body came from, after redirects (local files have no base URL but their own `xml:base`).
///
/// Confined to the thread that delivers the transfer; not `Sendable`.
public final class FeedParsingConsumer: FetchConsumer {
    /// The feed's name in articles and errors: its URL as listed, or its path.
    public let source: String
    /// How the feed is parsed.
    public let configuration: FeedParserConfiguration
    /// Called with each article as its item closes, and the feed metadata known so far.
    public var onArticle: (Article, FeedMetadata) -> Void
    /// The parser, once the response has arrived.
    public private(set) var parser: FeedParser?
    /// The parse error that stopped the document, if one did.
    public private(set) var parseError: FeedError?

    /// Creates a consumer that parses the feed `source` and hands each article to `onArticle`.
    public init(source: String, configuration: FeedParserConfiguration = FeedParserConfiguration(),
                onArticle: @escaping (Article, FeedMetadata) -> Void = { _, _ in }) {
        self.source = source
        self.configuration = configuration
        self.onArticle = onArticle
    }

    /// The feed's format, once its root element was recognised.
    public var format: FeedFormat? { parser?.format }

    /// What the parser knows of the feed so far: format, metadata, encoding, repairs, article count and error.
    public var summary: FeedSummary {
        (parser ?? FeedParser(source: source, configuration: configuration) { _, _ in }).summary
    }

    /// Makes the parser, with the response's charset as the hint and its final URL as the base, and its media type (from
    /// `Content-Type`, or a local file's name) to choose between XML and JSON when the first bytes do not.
    public func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        var configuration = self.configuration
        configuration.xml = configuration.xml.applyingCharset(of: response)
        if configuration.mediaType == nil {
            configuration.mediaType = response.url.isFileURL
                ? FeedParserConfiguration.mediaType(forFileName: response.url.lastPathComponent)
                : response.mediaType
        }
        let baseURL = response.url.isFileURL ? nil : response.url.absoluteString
        parser = FeedParser(source: source, baseURL: baseURL, configuration: configuration) { [unowned self] article, feed in
            onArticle(article, feed)
        }
    }

    /// Parses the next bytes; throws the parser's `FeedError`.
    public func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        do throws(FeedError) { try makeParser().parse(bytes) } catch {
            parseError = error
            throw error
        }
    }

    /// Ends the document; throws the parser's `FeedError` when it is incomplete or not a feed.
    public func fetchDidFinish() throws {
        do throws(FeedError) { try makeParser().finish() } catch {
            parseError = error
            throw error
        }
    }

    /// The failure of a finished fetch into this consumer, typed by the layer that failed (a parse error the consumer
    /// threw is ``IngestError/parse(_:)``); `nil` when the fetch succeeded or was not modified. A damaged compressed
    /// body (``FetchError/Kind/decompression``) outranks the parse error its garbage caused.
    public func failure(of result: FetchResult) -> IngestError? {
        guard let error = result.error else { return nil }
        if error.kind == .decompression { return .fetch(error) }
        if let parseError { return .parse(parseError) }
        return IngestError(error)
    }

    /// The parser; made without a response when the transfer delivers bytes before one (it never should).
    private func makeParser() -> FeedParser {
        if let parser { return parser }
        try? fetchDidReceiveResponse(FetchResponse(status: 200, headers: HTTPHeaders(), url: URL(fileURLWithPath: source)))
        return parser!
    }
}
