// The public entry point: FeedParser (configuration, errors, summary), which tells XML from JSON by the first bytes and
// drives ExpatXML with FeedEventHandler or StreamingJSON with JSONFeedHandler.

import ExpatXML
import Foundation
import SafeHTML
import StreamingJSON
import Support

/// How a ``FeedParser`` reads a feed.
public struct FeedParserConfiguration: Sendable, Hashable {
    /// The XML parser's configuration. By default it repairs malformed input (bare `&`, HTML entities,
    /// invalid UTF-8, …) instead of failing, names the encoding of a document that declares none and is not UTF-8
    /// with libuchardet, lets the bytes overrule a wrong charset label (UTF-8 labelled single-byte, windows-1252
    /// labelled UTF-8: ``ExpatXMLConfiguration/correctsMislabelledEncoding``), and processes namespaces; its limits apply.
    public var xml: ExpatXMLConfiguration = {
        var xml = ExpatXMLConfiguration()
        xml.repairsMalformedInput = true
        xml.detectsUndeclaredEncoding = true
        xml.correctsMislabelledEncoding = true
        return xml
    }()

    /// Rewrite relative `href` and `src` values inside HTML summaries and content to absolute URLs. Default `true`.
    public var resolvesLinksInHTML = true

    /// The most entries kept in one list (an article's categories, enclosures, authors, transcripts, keywords;
    /// the feed's authors, categories, hubs). Default 256; further entries are ignored, so a hostile feed
    /// cannot make the parser do quadratic work or hold unbounded lists.
    public var maximumListLength = 256

    /// Clean the HTML of article titles, summaries and content, and of the feed's title and description, with this
    /// sanitiser (libxml2's HTML parser and an allow-list: see ``HTMLSanitizer``). Default `nil`: HTML stays as the
    /// feed wrote it. Relative URLs are resolved first (``resolvesLinksInHTML``), then cleaned.
    public var htmlSanitizer: HTMLSanitizer?

    /// Whether HTML is cleaned with the default ``HTMLSanitizer`` (`--sanitize`). Setting `true` installs one when
    /// ``htmlSanitizer`` is `nil`; `false` removes it.
    public var sanitizesHTML: Bool {
        get { htmlSanitizer != nil }
        set { htmlSanitizer = newValue ? (htmlSanitizer ?? HTMLSanitizer()) : nil }
    }

    // JSON Feed (issue 15).

    /// The JSON parser's configuration, for JSON Feeds; its limits apply (depth, string and document bytes). By default
    /// it does not reject invalid UTF-8: the feed parser replaces it with U+FFFD and counts it
    /// (``JSONFeedRepairs/invalidUTF8``), as the XML repair filter does.
    public var json: JSONConfiguration = {
        var json = JSONConfiguration()
        json.validatesUTF8 = false
        return json
    }()

    /// The media type the document came with: an HTTP `Content-Type` without parameters, or one guessed from a file
    /// name (``mediaType(forFileName:)``). Default `nil`.
    ///
    /// The first bytes decide the syntax (after an optional UTF-8 byte-order mark and white space, `{` or `[` is JSON,
    /// `<` is XML); only when they say neither does a JSON media type (`application/feed+json`, `application/json`, any
    /// `+json`) choose the JSON parser over the XML one, so the error names the right syntax.
    public var mediaType: String?

    /// The default configuration.
    public init() {}

    /// The media type a file name suggests: `application/feed+json` for `.json` (JSON Feed's own type), else `nil`.
    public static func mediaType(forFileName name: String) -> String? {
        var name = name.lowercased()
        if name.hasSuffix(".gz") { name.removeLast(3) }
        return name.hasSuffix(".json") || name.hasSuffix(".jsonfeed") ? "application/feed+json" : nil
    }

    /// Whether a media type names JSON: `application/json`, `text/json` or any `+json` type (`application/feed+json`).
    public static func isJSON(mediaType: String) -> Bool {
        let type = mediaType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type == "application/json" || type == "text/json" || type.hasSuffix("+json")
    }
}

/// An error that stopped a feed: malformed XML or JSON, a limit, or a document that is not a feed.
public struct FeedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The XML parser stopped, with its code (malformed, truncated, a limit, an encoding).
        case xml(ExpatXMLError.Code)
        /// The document is XML whose root element is not RSS, Atom or CDF, or JSON that is not a JSON Feed.
        case notAFeed
        /// The JSON parser stopped, with its code (malformed, truncated, a limit).
        case json(JSONError.Code)
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

    /// A JSON error; its column counts bytes.
    init(_ error: JSONError, source: String) {
        self.init(kind: .json(error.code), message: error.message, line: error.line, column: error.column,
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
    /// What had to be repaired (XML).
    public var repairs: XMLRepairs
    /// Byte sequences a transcoded charset does not define (or that its end cut), each decoded as U+FFFD (XML).
    public var encodingReplacements = 0
    /// How many articles were delivered.
    public var articleCount: Int
    /// The error that stopped the document, if any; the articles before it were delivered.
    public var error: FeedError?

    // JSON Feed (issue 15).
    /// What the JSON Feed reader mended or left out; empty for XML.
    public var jsonRepairs = JSONFeedRepairs()

    /// Whether anything was repaired, in XML or JSON.
    public var isRepaired: Bool { !repairs.isEmpty || !jsonRepairs.isEmpty }

    /// What of the text is not what the bytes say under their label, or `nil` when all of it is.
    ///
    /// A re-decoding (the bytes contradicted the label) and bytes replaced with U+FFFD: what `feedingest` reports on
    /// one line per feed.
    public var textReplacement: TextReplacement? {
        let replacement = TextReplacement(
            correctedEncoding: encoding?.source == .corrected ? encoding : nil,
            replacementCharacters: repairs.invalidUTF8 + jsonRepairs.invalidUTF8 + encodingReplacements)
        return replacement.correctedEncoding == nil && replacement.replacementCharacters == 0 ? nil : replacement
    }

    /// Every repair kind that occurred, XML's and JSON's, with counts (`invalidUTF8` is one entry for both).
    public var repairCounts: [(kind: String, count: Int)] {
        var counts = repairs.counts
        for (kind, count) in jsonRepairs.counts {
            if let index = counts.firstIndex(where: { $0.kind == kind }) { counts[index].count += count } else { counts.append((kind, count)) }
        }
        return counts
    }
}

/// Text of a document that is not what its bytes say under its label.
///
/// Read in another encoding than the label named, or invalid byte sequences replaced with U+FFFD, or both. Its
/// description is the one line people are told.
public struct TextReplacement: Sendable, Hashable, CustomStringConvertible {
    /// The encoding the document was read in when its bytes contradicted its label; `nil` otherwise.
    ///
    /// Its source is ``DocumentEncoding/Source/corrected``: ``DocumentEncoding/label`` is the label,
    /// ``DocumentEncoding/labelSource`` where it came from.
    public var correctedEncoding: DocumentEncoding?
    /// How many places U+FFFD stands in for bytes that were not valid.
    ///
    /// Each invalid UTF-8 byte of XML, each byte sequence a transcoded charset does not define, each JSON string with
    /// invalid UTF-8.
    public var replacementCharacters: Int

    /// Creates a value.
    public init(correctedEncoding: DocumentEncoding?, replacementCharacters: Int) {
        self.correctedEncoding = correctedEncoding
        self.replacementCharacters = replacementCharacters
    }

    /// The line people are told: `text replaced: ` and the parts that apply.
    ///
    /// For example `text replaced: labelled 'iso-8859-1' (XML declaration) but the bytes are UTF-8, read as UTF-8;
    /// U+FFFD replaced invalid bytes in 3 places`.
    public var description: String {
        var parts: [String] = []
        if let encoding = correctedEncoding {
            let origin: String
            switch encoding.labelSource {
            case .charsetHint?: origin = "charset hint"
            case .declaration?: origin = "XML declaration"
            default: origin = "label"
            }
            let bytes = encoding.name == "UTF-8" ? "the bytes are UTF-8" : "the bytes are mostly not UTF-8"
            parts.append("labelled '\(encoding.label ?? "")' (\(origin)) but \(bytes), read as \(encoding.name)")
        }
        if replacementCharacters > 0 {
            parts.append("U+FFFD replaced invalid bytes in \(replacementCharacters) place\(replacementCharacters == 1 ? "" : "s")")
        }
        return "text replaced: " + parts.joined(separator: "; ")
    }
}

/// Streams an RSS, Atom or JSON Feed document into complete articles, each delivered the moment its item closes.
///
/// ```swift
/// let parser = FeedParser(source: url) { article, feed in print(article.title ?? "") }
/// try parser.parse(chunk)      // as bytes arrive, split anywhere
/// let summary = try parser.finish()
/// ```
///
/// The first bytes tell the syntax: after an optional UTF-8 byte-order mark and white space, `{` or `[` is JSON (read
/// as JSON Feed 1.0 or 1.1), `<` is XML (RSS or Atom); otherwise ``FeedParserConfiguration/mediaType`` decides, XML
/// by default. Articles arrive in document order, synchronously inside `parse` and `finish`, with the feed's metadata
/// as far as it is known at that moment. Nothing of the document is retained but the article being built, so memory
/// stays flat. A parser is confined to one thread.
public final class FeedParser {
    private let source: String
    private let baseURL: String?
    private let configuration: FeedParserConfiguration
    private let onArticle: (Article, FeedMetadata) -> Void
    /// With a sanitiser: the feed metadata, cleaned once per change.
    private var metadataCache: SanitizedMetadataCache?
    private var engine = Engine.sniffing
    /// The first bytes, held until they tell XML from JSON.
    private var head: [UInt8] = []
    private var failure: FeedError?

    /// The parser that reads the document, once its first bytes have chosen one.
    private enum Engine {
        case sniffing
        case xml(FeedEventHandler, XMLPushParser)
        case json(JSONFeedHandler, JSONPushParser)
    }

    /// Leading white space held before the syntax is decided anyway (by the media type, else XML).
    static let maximumSniffBytes = 64 * 1024

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
        self.baseURL = baseURL
        self.configuration = configuration
        if let sanitizer = configuration.htmlSanitizer {
            let metadata = SanitizedMetadataCache(sanitizer: sanitizer)
            self.metadataCache = metadata
            self.onArticle = { article, feed in onArticle(sanitizer.sanitizing(article), metadata.cleaned(feed)) }
        } else {
            self.onArticle = onArticle
        }
    }

    /// Parses the next bytes of the document.
    ///
    /// - Throws: ``FeedError`` when the document is malformed beyond repair or not a feed; the articles
    ///   delivered before it stand.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(FeedError) {
        switch engine {
        case .xml(_, let xml):
            do { try xml.parse(bytes) } catch { throw fail(error) }
        case .json(_, let json):
            do { try json.parse(bytes) } catch { throw fail(error) }
        case .sniffing:
            if let failure { throw failure }
            head.append(contentsOf: bytes)
            guard let isJSON = Self.sniff(head, mediaType: configuration.mediaType, isComplete: false) else { return }
            try start(json: isJSON)
        }
    }

    /// Parses the next bytes of the document, from `Data`, `[UInt8]` or any contiguous storage.
    public func parse(_ bytes: some ContiguousBytes) throws(FeedError) {
        var failure: FeedError?
        bytes.withUnsafeBytes { buffer in
            do throws(FeedError) { try parse(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Ends the document and returns its summary.
    @discardableResult
    public func finish() throws(FeedError) -> FeedSummary {
        if case .sniffing = engine {
            if let failure { throw failure }
            try start(json: Self.sniff(head, mediaType: configuration.mediaType, isComplete: true) ?? false)
        }
        switch engine {
        case .xml(_, let xml):
            do { try xml.finish() } catch { throw fail(error) }
        case .json(_, let json):
            do { try json.finish() } catch { throw fail(error) }
        case .sniffing:
            break
        }
        return summary
    }

    /// The format, once the root element (XML) or the `version` (JSON Feed) was recognised; `nil` before. Cheap: for
    /// polling after each chunk.
    public var format: FeedFormat? {
        switch engine {
        case .xml(let handler, _): return handler.metadata.format
        case .json(let handler, _): return handler.metadata.format
        case .sniffing: return nil
        }
    }

    /// What is known so far: metadata (its HTML cleaned when the configuration has a sanitiser), encoding, repairs,
    /// the article count and the error, if any.
    public var summary: FeedSummary {
        var summary = rawSummary
        if let metadataCache { summary.metadata = metadataCache.cleaned(summary.metadata) }
        return summary
    }

    private var rawSummary: FeedSummary {
        switch engine {
        case .xml(let handler, let xml):
            return FeedSummary(source: source, metadata: handler.metadata, encoding: xml.encoding, repairs: handler.repairs(from: xml),
                               encodingReplacements: xml.encodingReplacements, articleCount: handler.articleCount, error: failure)
        case .json(let handler, _):
            // JSON is UTF-8 (RFC 8259); a byte-order mark, which the JSON parser skips, says so too.
            let encoding = DocumentEncoding(name: "UTF-8", label: nil, source: head.starts(with: [0xEF, 0xBB, 0xBF]) ? .byteOrderMark : .defaulted)
            return FeedSummary(source: source, metadata: handler.metadata, encoding: encoding, repairs: XMLRepairs(),
                               articleCount: handler.articleCount, error: failure, jsonRepairs: handler.repairs)
        case .sniffing:
            return FeedSummary(source: source, metadata: FeedMetadata(), encoding: nil, repairs: XMLRepairs(), articleCount: 0, error: failure)
        }
    }

    /// Whether the held bytes are JSON (`true`) or XML (`false`), or `nil` while they cannot tell yet.
    static func sniff(_ head: [UInt8], mediaType: String?, isComplete: Bool) -> Bool? {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        if !isComplete && head.count < 3 && mark.starts(with: head) { return nil }
        var index = head.starts(with: mark) ? 3 : 0
        while index < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[index]) { index += 1 }
        let byHint = mediaType.map(FeedParserConfiguration.isJSON(mediaType:)) ?? false
        guard index < head.count else {
            return isComplete || head.count > maximumSniffBytes ? byHint : nil
        }
        switch head[index] {
        case 0x7B, 0x5B: return true   // { [
        case 0x3C: return false        // <
        default: return byHint
        }
    }

    /// Makes the chosen engine and hands it the held bytes.
    private func start(json isJSON: Bool) throws(FeedError) {
        let held = head
        if isJSON {
            let handler = JSONFeedHandler(source: source, baseURL: baseURL, configuration: configuration, onArticle: onArticle)
            let json = JSONPushParser(handler: handler, configuration: configuration.json, source: source)
            handler.json = json
            engine = .json(handler, json)
            head = Array(held.prefix(3))  // enough to tell a byte-order mark in the summary
            do { try json.parse(held) } catch { throw fail(error) }
        } else {
            let handler = FeedEventHandler(source: source, baseURL: baseURL, configuration: configuration, onArticle: onArticle)
            let xml = XMLPushParser(handler: handler, configuration: configuration.xml, source: source)
            handler.xml = xml
            xml.isCollectingText = false
            engine = .xml(handler, xml)
            head = []
            do { try xml.parse(held) } catch { throw fail(error) }
        }
    }

    private func fail(_ error: ExpatXMLError) -> FeedError {
        if let failure { return failure }
        var handlerFailure: FeedError?
        if case .xml(let handler, _) = engine { handlerFailure = handler.failure }
        let feedError = handlerFailure ?? FeedError(error, source: source)
        failure = feedError
        return feedError
    }

    private func fail(_ error: JSONError) -> FeedError {
        if let failure { return failure }
        var handlerFailure: FeedError?
        if case .json(let handler, _) = engine { handlerFailure = handler.failure }
        let feedError = handlerFailure ?? FeedError(error, source: source)
        failure = feedError
        return feedError
    }
}

@available(*, unavailable, message: "a parser is confined to one thread")
extension FeedParser: Sendable {}

extension FeedParser {
    /// Parses a feed file (streamed in 64 KiB chunks; `.gz` is not handled here) and returns its summary.
    /// The error, if any, is in the summary; articles before it were delivered. Without a media type in `configuration`,
    /// the file's name supplies one (``FeedParserConfiguration/mediaType(forFileName:)``).
    public static func parse(contentsOfFile path: String, source: String? = nil, configuration: FeedParserConfiguration = .init(),
                             onArticle: @escaping (Article, FeedMetadata) -> Void) -> FeedSummary {
        var configuration = configuration
        if configuration.mediaType == nil { configuration.mediaType = FeedParserConfiguration.mediaType(forFileName: path) }
        let parser = FeedParser(source: source ?? path, configuration: configuration, onArticle: onArticle)
        do throws(FeedError) {
            try FileChunks.read(path: path, failure: { reason in
                FeedError(kind: .xml(.readFailed), message: reason.message, line: 0, column: 0, byteOffset: -1, source: source ?? path)
            }) { (chunk) throws(FeedError) in try parser.parse(chunk) }
            try parser.finish()
        } catch {
            var summary = parser.summary
            summary.error = error
            return summary
        }
        return parser.summary
    }
}
