// The public entry point: FeedParser (configuration, errors, summary) over ExpatXML and FeedEventHandler.

import ExpatXML
import Foundation

/// How a ``FeedParser`` reads a feed.
public struct FeedParserConfiguration: Sendable, Hashable {
    /// The XML parser's configuration. By default it repairs malformed input (bare `&`, HTML entities,
    /// invalid UTF-8, …) instead of failing, names the encoding of a document that declares none and is not UTF-8
    /// with libuchardet, and processes namespaces; its limits apply.
    public var xml: ExpatXMLConfiguration = {
        var xml = ExpatXMLConfiguration()
        xml.repairsMalformedInput = true
        xml.detectsUndeclaredEncoding = true
        return xml
    }()

    /// Rewrite relative `href` and `src` values inside HTML summaries and content to absolute URLs. Default `true`.
    public var resolvesLinksInHTML = true

    /// The most entries kept in one list (an article's categories, enclosures, authors, transcripts, keywords;
    /// the feed's authors, categories, hubs). Default 256; further entries are ignored, so a hostile feed
    /// cannot make the parser do quadratic work or hold unbounded lists.
    public var maximumListLength = 256

    /// The default configuration.
    public init() {}
}

/// An error that stopped a feed: malformed XML, a limit, or a document that is not a feed.
public struct FeedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The XML parser stopped, with its code (malformed, truncated, a limit, an encoding).
        case xml(ExpatXMLError.Code)
        /// The document is XML but its root element is not RSS, Atom or CDF.
        case notAFeed
    }

    /// What kind of failure.
    public var kind: Kind
    /// A human-readable message.
    public var message: String
    /// The 1-based line, or 0 when unknown.
    public var line: Int
    /// The 0-based column.
    public var column: Int
    /// The byte offset, or -1 when unknown.
    public var byteOffset: Int64
    /// The feed's URL or path.
    public var source: String

    /// Creates a value.
    public init(kind: Kind, message: String, line: Int, column: Int, byteOffset: Int64, source: String) {
        self.kind = kind
        self.message = message
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
        self.source = source
    }

    init(_ error: ExpatXMLError, source: String) {
        self.init(kind: .xml(error.code), message: error.message, line: error.line, column: error.column,
                  byteOffset: error.byteOffset, source: source)
    }

    /// `source:line:column: message`.
    public var description: String {
        line > 0 ? "\(source):\(line):\(column): \(message)" : "\(source): \(message)"
    }
}

/// Everything known about one parsed document once it ended, or stopped.
public struct FeedSummary: Sendable {
    /// The feed's URL or path.
    public var source: String
    /// The feed's metadata.
    public var metadata: FeedMetadata
    /// The encoding used to decode it.
    public var encoding: DocumentEncoding?
    /// What had to be repaired.
    public var repairs: XMLRepairs
    /// How many articles were delivered.
    public var articleCount: Int
    /// The error that stopped the document, if any; the articles before it were delivered.
    public var error: FeedError?
}

/// Streams an RSS or Atom document into complete articles, each delivered the moment its item closes.
///
/// ```swift
/// let parser = FeedParser(source: url) { article, feed in print(article.title ?? "") }
/// try parser.parse(chunk)      // as bytes arrive, split anywhere
/// let summary = try parser.finish()
/// ```
///
/// Articles arrive in document order, synchronously inside `parse` and `finish`, with the feed's
/// metadata as far as it is known at that moment. Nothing of the document is retained but the article
/// being built, so memory stays flat. A parser is confined to one thread.
public final class FeedParser {
    private let handler: FeedEventHandler
    private let xml: XMLPushParser
    private var failure: FeedError?
    private let source: String

    /// Creates a parser.
    ///
    /// - Parameters:
    ///   - source: the feed's URL or path as the caller names it; copied into every article's `feed`.
    ///   - baseURL: the document's URL, against which relative URLs are resolved (after `xml:base`);
    ///     `nil` leaves relative URLs relative unless the document has an `xml:base`.
    ///   - onArticle: called with each article and the feed metadata known so far.
    public init(source: String, baseURL: String? = nil, configuration: FeedParserConfiguration = .init(),
                onArticle: @escaping (Article, FeedMetadata) -> Void) {
        self.source = source
        handler = FeedEventHandler(source: source, baseURL: baseURL, configuration: configuration, onArticle: onArticle)
        xml = XMLPushParser(handler: handler, configuration: configuration.xml, source: source)
        handler.xml = xml
        xml.isCollectingText = false
    }

    /// Parses the next bytes of the document.
    ///
    /// - Throws: ``FeedError`` when the document is malformed beyond repair or not a feed; the articles
    ///   delivered before it stand.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(FeedError) {
        do { try xml.parse(bytes) } catch { throw fail(error) }
    }

    /// Parses the next bytes of the document, from `Data`, `[UInt8]` or any contiguous storage.
    public func parse(_ bytes: some ContiguousBytes) throws(FeedError) {
        do { try xml.parse(bytes) } catch { throw fail(error) }
    }

    /// Ends the document and returns its summary.
    @discardableResult
    public func finish() throws(FeedError) -> FeedSummary {
        do { try xml.finish() } catch { throw fail(error) }
        return summary
    }

    /// The format, once the root element was recognised as a feed's; `nil` before. Cheap: for polling after each chunk.
    public var format: FeedFormat? { handler.metadata.format }

    /// What is known so far: metadata, encoding, repairs, the article count and the error, if any.
    public var summary: FeedSummary {
        FeedSummary(source: source, metadata: handler.metadata, encoding: xml.encoding, repairs: handler.repairs(from: xml),
                    articleCount: handler.articleCount, error: failure)
    }

    private func fail(_ error: ExpatXMLError) -> FeedError {
        if let failure { return failure }
        let feedError = handler.failure ?? FeedError(error, source: source)
        failure = feedError
        return feedError
    }
}

@available(*, unavailable, message: "a parser is confined to one thread")
extension FeedParser: Sendable {}

extension FeedParser {
    /// Parses a feed file (streamed in 64 KiB chunks; `.gz` is not handled here) and returns its summary.
    /// The error, if any, is in the summary; articles before it were delivered.
    public static func parse(contentsOfFile path: String, source: String? = nil, configuration: FeedParserConfiguration = .init(),
                             onArticle: @escaping (Article, FeedMetadata) -> Void) -> FeedSummary {
        let parser = FeedParser(source: source ?? path, configuration: configuration, onArticle: onArticle)
        guard let handle = FileHandle(forReadingAtPath: path) else {
            var summary = parser.summary
            summary.error = FeedError(kind: .xml(.readFailed), message: "cannot open \(path)", line: 0, column: 0,
                                      byteOffset: -1, source: source ?? path)
            return summary
        }
        defer { try? handle.close() }
        do {
            while let chunk = try handle.read(upToCount: 64 * 1024), !chunk.isEmpty {
                try parser.parse(chunk)
            }
            try parser.finish()
        } catch let error as FeedError {
            var summary = parser.summary
            summary.error = error
            return summary
        } catch {
            var summary = parser.summary
            summary.error = FeedError(kind: .xml(.readFailed), message: "reading \(path) failed: \(error.localizedDescription)",
                                      line: 0, column: 0, byteOffset: -1, source: source ?? path)
            return summary
        }
        return parser.summary
    }
}
