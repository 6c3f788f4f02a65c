// ExpatXML's URL entry points: fetch with Fetch and parse with ExpatXML as the bytes arrive. This module is the one
// place where the transport (Fetch) meets the XML parser, so Fetch stays transport only.
import ExpatXML
import Fetch
import Foundation

/// A ``FetchConsumer`` that parses the body with an `XMLPushParser` as it arrives: the way a feed parser plugs in.
///
/// The parser is created when the response arrives, so the response's `Content-Type` charset can become its
/// `charsetHint` (RFC 7303: it outranks the XML declaration). A hint already set in `configuration` is an explicit
/// override and is kept.
public final class XMLParsingConsumer: FetchConsumer {
    /// Receives the parser's events.
    public let handler: any XMLEventHandler
    /// The configuration the parser gets (its `charsetHint` filled from the response when `nil`).
    public let configuration: ExpatXMLConfiguration
    /// The parser, once the response has arrived.
    public private(set) var parser: XMLPushParser?

    /// Creates a consumer that parses into `handler`.
    public init(handler: any XMLEventHandler, configuration: ExpatXMLConfiguration = ExpatXMLConfiguration()) {
        self.handler = handler
        self.configuration = configuration
    }

    /// Creates the parser, with the response's charset as the hint.
    public func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        parser = XMLPushParser(handler: handler, configuration: configuration.applyingCharset(of: response),
                               source: response.url.absoluteString)
    }

    /// Parses the next bytes; throws the parser's `ExpatXMLError`.
    public func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        try parser?.parse(bytes)
    }

    /// Ends the document; throws the parser's `ExpatXMLError` when it is incomplete.
    public func fetchDidFinish() throws {
        try parser?.finish()
    }
}

extension ExpatXMLConfiguration {
    /// This configuration with the response's `Content-Type` charset as the hint, unless one is set already.
    ///
    /// RFC 7303: the charset of the HTTP response outranks the XML declaration, and an explicit hint in the
    /// configuration (a user's `--charset`) outranks both. The one place this rule is written.
    public func applyingCharset(of response: FetchResponse) -> ExpatXMLConfiguration {
        var configuration = self
        if configuration.charsetHint == nil, let charset = response.charset { configuration.charsetHint = charset }
        return configuration
    }
}

/// Parses with an `ExpatXMLParser` made when the response arrives; the delegate is held until the end.
private final class DelegateParsingConsumer: FetchConsumer {
    let delegate: any ExpatXMLParserDelegate
    let configuration: ExpatXMLConfiguration
    var parser: ExpatXMLParser?

    init(delegate: any ExpatXMLParserDelegate, configuration: ExpatXMLConfiguration) {
        self.delegate = delegate
        self.configuration = configuration
    }

    func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        let parser = ExpatXMLParser(configuration: configuration.applyingCharset(of: response), source: response.url.absoluteString)
        parser.delegate = delegate
        self.parser = parser
    }

    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        try parser?.parse(bytes)
    }

    func fetchDidFinish() throws {
        try parser?.finish()
    }
}

/// Turns a result into the URL entry points' contract: return on ok or not-modified, throw otherwise.
private func settle(_ result: FetchResult) throws -> FetchResult {
    guard case .failed(let error) = result.outcome else { return result }
    if error.kind == .consumerFailed, let parseError = error.underlying as? ExpatXMLError { throw parseError }
    throw error
}

private func request(for url: URL, validators: FetchValidators) -> FetchRequest {
    // A file URL given here is the caller's explicit choice, so it may be read.
    url.isFileURL ? .localFile(url) : FetchRequest(url: url, validators: validators)
}

extension ExpatXMLParser {
    /// Fetches `url` and parses the body as it arrives, calling `delegate` on the calling thread; blocks until done.
    ///
    /// The parser is made when the response arrives, so the `Content-Type` charset becomes its
    /// `charsetHint` (unless `configuration` sets one); the delegate methods receive it. gzip and deflate bodies are
    /// decompressed on the fly. A `file:` URL is read from disk (`.gz` decompressed), since the caller named it.
    ///
    /// - Returns: the fetch result, with outcome ``FetchOutcome/ok`` or (with `validators`) ``FetchOutcome/notModified``.
    /// - Throws: `ExpatXMLError` when the document is not well-formed (the delegate has seen every event before the
    ///   error); ``FetchError`` for every other failure, including a truncated body.
    @discardableResult
    public static func parse(contentsOf url: URL, delegate: any ExpatXMLParserDelegate,
                             configuration: ExpatXMLConfiguration = ExpatXMLConfiguration(),
                             validators: FetchValidators = .none, using fetcher: Fetcher = .shared) throws -> FetchResult {
        let consumer = DelegateParsingConsumer(delegate: delegate, configuration: configuration)
        return try settle(fetcher.fetch(request(for: url, validators: validators), into: consumer))
    }
}

extension XMLPushParser {
    /// Fetches `url` and parses the body as it arrives into `handler`, on the calling thread; blocks until done.
    ///
    /// Like `ExpatXMLParser.parse(contentsOf:delegate:configuration:validators:using:)`, for the byte-view API.
    @discardableResult
    public static func parse(contentsOf url: URL, handler: any XMLEventHandler,
                             configuration: ExpatXMLConfiguration = ExpatXMLConfiguration(),
                             validators: FetchValidators = .none, using fetcher: Fetcher = .shared) throws -> FetchResult {
        let consumer = XMLParsingConsumer(handler: handler, configuration: configuration)
        return try settle(fetcher.fetch(request(for: url, validators: validators), into: consumer))
    }
}
