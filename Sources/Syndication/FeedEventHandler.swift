import ExpatXML
import Foundation

/// The text fields the parser captures. Each names where the text goes when its element closes.
enum Field {
    // item
    case itemTitle, itemDCTitle, itemITunesTitle, itemMediaTitle
    case itemLink, itemGUID, itemAtomID, itemDCIdentifier
    case itemPubDate, itemPublished, itemIssued, itemDCDate, itemTermsIssued, itemTermsCreated
    case itemUpdated, itemModified, itemTermsModified
    case itemDescription, itemSummary, itemDCDescription, itemITunesSummary, itemITunesSubtitle, itemMediaDescription
    case itemContentEncoded, itemContent
    case itemRSSAuthor, itemDCCreator, itemITunesAuthor
    case itemCategory, itemDCSubject
    case itemComments, itemCommentsFeed, itemCommentCount
    case itemDuration, itemEpisode, itemSeason, itemExplicit, itemKeywords, itemPodcastGUID
    // a person (Atom author/contributor) inside an item or the feed
    case personName, personEmail, personURI
    // feed
    case feedTitle, feedLink, feedDescription, feedSubtitle, feedITunesSummary, feedLanguage, feedDCLanguage
    case feedRights, feedDCRights, feedGenerator, feedLastBuildDate, feedPubDate, feedUpdated, feedDCDate
    case feedImageURL, feedIcon, feedLogo, feedTTL, feedUpdatePeriod, feedUpdateFrequency, feedSkipHour, feedSkipDay
    case feedManagingEditor, feedDCCreator, feedITunesAuthor, feedCategory
}

/// Text being collected for one field, with child markup re-serialised when the field has any.
struct Capture {
    let field: Field
    let depth: Int
    var bytes: [UInt8] = []
    /// The field's text while it is one plain text node, the commonest case, decoded once at once instead of
    /// copied into `bytes` and decoded later (a copy and an allocation less per field). Set only while `bytes` is
    /// empty; moved into `bytes` as soon as more comes.
    private var onlyText: String?
    /// Child elements appeared: `bytes` holds escaped markup, not plain text.
    var hasMarkup = false
    var kind: TextContent.Kind
    var isXHTML = false
    /// Atom 0.3 `mode="base64"`, or Atom 1.0 content of a binary media type: the text is base64.
    var isBase64 = false
    let base: String?
    /// Where each open child's start tag ends in `bytes`, to write `<br/>` for an empty child.
    var openChildren: [Int] = []

    init(field: Field, depth: Int, kind: TextContent.Kind, base: String?) {
        self.field = field
        self.depth = depth
        self.kind = kind
        self.base = base
    }

    mutating func appendText(_ text: XMLBytes) {
        if hasMarkup {
            Self.appendEscaped(text.buffer, to: &bytes, attribute: false)
        } else if bytes.isEmpty && onlyText == nil {
            onlyText = text.string
        } else {
            moveOnlyTextToBytes()
            bytes.append(contentsOf: text.buffer)
        }
    }

    /// Bytes captured so far, for the size limit.
    var count: Int { bytes.count + (onlyText?.utf8.count ?? 0) }

    private mutating func moveOnlyTextToBytes() {
        guard let text = onlyText else { return }
        onlyText = nil
        bytes.append(contentsOf: text.utf8)
    }

    mutating func startChild(_ name: XMLName, attributes: XMLAttributes) {
        moveOnlyTextToBytes()
        if !hasMarkup {
            // Text so far was plain; from here on the field is markup, so escape what came before.
            let plain = bytes
            bytes.removeAll(keepingCapacity: true)
            plain.withUnsafeBufferPointer { Self.appendEscaped($0, to: &bytes, attribute: false) }
            hasMarkup = true
        }
        bytes.append(0x3C)
        Self.appendName(name, to: &bytes)
        for attribute in attributes {
            bytes.append(0x20)
            Self.appendName(attribute.name, to: &bytes)
            bytes.append(contentsOf: [0x3D, 0x22])
            Self.appendEscaped(attribute.value.buffer, to: &bytes, attribute: true)
            bytes.append(0x22)
        }
        bytes.append(0x3E)
        openChildren.append(bytes.count)
    }

    mutating func endChild(_ name: XMLName) {
        let end = openChildren.popLast() ?? -1
        if end == bytes.count {
            bytes.removeLast()
            bytes.append(contentsOf: [0x2F, 0x3E])  // <br/>
            return
        }
        bytes.append(contentsOf: [0x3C, 0x2F])
        Self.appendName(name, to: &bytes)
        bytes.append(0x3E)
    }

    private static func appendName(_ name: XMLName, to bytes: inout [UInt8]) {
        if !name.prefix.isEmpty {
            bytes.append(contentsOf: name.prefix.buffer)
            bytes.append(0x3A)
        }
        bytes.append(contentsOf: name.localName.buffer)
    }

    static func appendEscaped(_ text: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8], attribute: Bool) {
        for byte in text {
            switch byte {
            case 0x26: bytes.append(contentsOf: [0x26, 0x61, 0x6D, 0x70, 0x3B])  // &amp;
            case 0x3C: bytes.append(contentsOf: [0x26, 0x6C, 0x74, 0x3B])  // &lt;
            case 0x3E: bytes.append(contentsOf: [0x26, 0x67, 0x74, 0x3B])  // &gt;
            case 0x22 where attribute: bytes.append(contentsOf: [0x26, 0x71, 0x75, 0x6F, 0x74, 0x3B])  // &quot;
            default: bytes.append(byte)
            }
        }
    }

    /// The captured value, trimmed; the XHTML wrapper `div` removed for Atom `xhtml` text.
    func value() -> String {
        var text = onlyText?.trimmingXMLWhitespace() ?? bytes.withUnsafeBufferPointer { buffer -> String in
            // Trim the bytes, then decode once.
            var start = 0, end = buffer.count
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }
            while start < end && isSpace(buffer[start]) { start += 1 }
            while end > start && isSpace(buffer[end - 1]) { end -= 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<end]), as: UTF8.self)
        }
        if isBase64, let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters),
           let decoded = String(data: data, encoding: .utf8) {
            // Undecodable or non-UTF-8 payloads stay as they were written rather than being lost.
            return decoded.trimmingXMLWhitespace()
        }
        if isXHTML, text.hasPrefix("<div"), text.hasSuffix("</div>"), let open = text.firstIndex(of: ">") {
            text = String(text[text.index(after: open)..<text.index(text.endIndex, offsetBy: -6)]).trimmingXMLWhitespace()
        }
        return text
    }
}

/// An Atom person, or an item's author being collected.
struct PersonBuilder {
    var person = Person()
    let depth: Int
    let forItem: Bool
}

/// Everything an item's elements said, before precedence decides the article's fields.
struct ItemBuilder {
    let depth: Int
    let language: String?
    var rdfAbout: String?
    var title: String?, dcTitle: String?, itunesTitle: String?, mediaTitle: String?
    var rssLink: String?, atomLink: String?, atomLinkIsHTML = false, guid: String?, guidIsPermaLink = true, atomID: String?, dcIdentifier: String?
    var pubDate: String?, published: String?, issued: String?, dcDate: String?, termsIssued: String?, termsCreated: String?
    var updated: String?, modified: String?, termsModified: String?
    var description: TextContent?, summary: TextContent?, dcDescription: String?, itunesSummary: String?
    var itunesSubtitle: String?, mediaDescription: TextContent?
    var contentEncoded: String?, content: TextContent?
    var atomAuthors: [Person] = [], dcCreators: [String] = [], rssAuthors: [String] = [], itunesAuthor: String?
    var categories: [String] = []
    var enclosures: [Enclosure] = []
    var itunesImage: String?, mediaThumbnail: String?, mediaImage: String?
    var comments: String?, commentsFeed: String?, commentCount: Int?
    var podcast = PodcastDetails()
    var base: String?

    init(depth: Int, language: String?, base: String?) {
        self.depth = depth
        self.language = language
        self.base = base
    }
}

/// The feed parser's state machine over ExpatXML's byte events.
///
/// Its state is `@exclusivity(unchecked)`: every event touches several of these properties, and the dynamic
/// exclusivity checks on class properties cost ~6% of full article extraction (callgrind). The handler is
/// confined to one thread and no method hands out `inout` access to its state across a call back into itself.
final class FeedEventHandler: XMLEventHandler {
    unowned(unsafe) var xml: XMLPushParser!
    let source: String
    private let onArticle: (Article, FeedMetadata) -> Void
    private let resolvesLinksInHTML: Bool
    private let maximumListLength: Int
    private let maximumFieldBytes: Int

    @exclusivity(unchecked) private(set) var metadata = FeedMetadata()
    @exclusivity(unchecked) private(set) var articleCount = 0
    /// A failure the handler itself found (not a feed, a field over the limit); the parse then stops with it.
    @exclusivity(unchecked) private(set) var failure: FeedError?

    @exclusivity(unchecked) private var namespaces = NamespaceTable()
    @exclusivity(unchecked) private var resolver = URLResolver()
    @exclusivity(unchecked) private var depth = 0
    @exclusivity(unchecked) private var channelDepth = 0
    @exclusivity(unchecked) private var item: ItemBuilder?
    @exclusivity(unchecked) private var itemDepth = 0
    @exclusivity(unchecked) private var capture: Capture?
    @exclusivity(unchecked) private var captureDepth = 0
    @exclusivity(unchecked) private var person: PersonBuilder?
    @exclusivity(unchecked) private var personDepth = 0
    @exclusivity(unchecked) private var skipDepth = 0
    @exclusivity(unchecked) private var imageDepth = 0
    @exclusivity(unchecked) private var mediaGroupDepth = 0
    @exclusivity(unchecked) private var isRDF = false
    @exclusivity(unchecked) private var undeclared = 0

    /// `xml:base` and `xml:lang` in scope: one frame per element that sets either.
    @exclusivity(unchecked) private var frames: [(depth: Int, base: String?, language: String?)]
    /// Priorities of metadata fields several elements can give (lower wins).
    @exclusivity(unchecked) private var metadataPriority: [String: Int] = [:]

    init(source: String, baseURL: String?, configuration: FeedParserConfiguration, onArticle: @escaping (Article, FeedMetadata) -> Void) {
        resolvesLinksInHTML = configuration.resolvesLinksInHTML
        maximumListLength = max(1, configuration.maximumListLength)
        maximumFieldBytes = configuration.xml.maximumTextNodeBytes
        self.source = source
        self.onArticle = onArticle
        frames = [(0, baseURL, nil)]
    }

    func repairs(from xml: XMLPushParser) -> XMLRepairs { xml.repairs }

    private var base: String? { frames[frames.count - 1].base }
    private var language: String? { frames[frames.count - 1].language }

    // MARK: Events

    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        depth += 1
        if captureDepth > 0 {
            capture!.startChild(name, attributes: attributes)
            checkCaptureSize()
            return
        }
        if skipDepth > 0 { return }
        if !attributes.isEmpty { scopeAttributes(attributes) }
        let namespace = namespaces.classify(name.namespaceURI)
        let tag = Tag.classify(namespace, name.localName)
        if depth == 1 {
            detectFormat(tag, namespace, name, attributes)
            return
        }
        let isAtom = namespace == .atom || namespace == .atom03
        let isRSS = namespace == .rss || namespace == .rss10 || namespace == .rss090
        if namespace == .rss090 && isRDF && metadata.format?.version == "1.0" {
            metadata.format?.version = "0.90"  // RDF with the Netscape 0.9 vocabulary
        }

        // An Atom person's name, email and uri, in an entry or in the feed.
        if personDepth > 0, depth == personDepth + 1, isAtom {
            switch tag {
            case .name: begin(.personName)
            case .email: begin(.personEmail)
            case .uri: begin(.personURI)
            default: break
            }
            return
        }
        if itemDepth > 0 {
            // Depths are kept apart from the builders: `if let item` would copy a 40-field struct per element.
            let isChild = depth == itemDepth + 1 || (mediaGroupDepth > 0 && depth == mediaGroupDepth + 1)
            guard isChild else { return }
            itemElement(tag, isAtom: isAtom, isRSS: isRSS, attributes)
            return
        }
        if (tag == .item && isRSS) || (tag == .entry && isAtom) {
            startItem(attributes)
            return
        }
        if tag == .channel && isRSS && depth == 2 {
            channelDepth = 2
            return
        }
        if imageDepth > 0 {
            if depth == imageDepth + 1 && tag == .url && isRSS { begin(.feedImageURL) }
            return
        }
        if tag == .itunesCategory && depth > channelDepth + 1 {
            // Subcategories nest inside their category.
            if let text = attributes.value(localName: "text") { appendCategory(text.string, to: &metadata.categories) }
            return
        }
        let isFeedChild = depth == channelDepth + 1 || (isRDF && depth == 2)
        if isRSS && isSkipChild() {
            if tag == .hour { begin(.feedSkipHour) } else if tag == .day { begin(.feedSkipDay) }
            return
        }
        guard isFeedChild else { return }
        feedElement(tag, isAtom: isAtom, isRSS: isRSS, attributes)
    }

    func endElement(_ name: XMLName) {
        defer {
            if frames.count > 1 && frames[frames.count - 1].depth == depth { frames.removeLast() }
            depth -= 1
        }
        if captureDepth > 0 {
            if depth > captureDepth {
                capture!.endChild(name)
                return
            }
            let current = capture.take()!
            captureDepth = 0
            xml.isCollectingText = false
            assign(current)
            return
        }
        if skipDepth > 0 {
            if depth == skipDepth { skipDepth = 0 }
            return
        }
        if personDepth > 0 && depth == personDepth, let person {
            self.person = nil
            personDepth = 0
            if person.person != Person() {
                if person.forItem {
                    if (item?.atomAuthors.count ?? 0) < maximumListLength { item?.atomAuthors.append(person.person) }
                } else {
                    appendUnique(person.person, to: &metadata.authors)
                }
            }
            return
        }
        if mediaGroupDepth > 0 && depth == mediaGroupDepth { mediaGroupDepth = 0; return }
        if itemDepth > 0 && depth == itemDepth, let item = item.take() {
            itemDepth = 0
            emit(item)
            return
        }
        if imageDepth > 0 && depth == imageDepth { imageDepth = 0 }
    }

    func text(_ text: XMLBytes) {
        capture?.appendText(text)
        checkCaptureSize()
    }

    /// One field's text and re-serialised markup stay under the text node limit, so memory stays bounded
    /// even when a field is made of many small nodes.
    @inline(__always) private func checkCaptureSize() {
        guard let count = capture?.count, count > maximumFieldBytes, failure == nil else { return }
        failure = FeedError(kind: .xml(.textNodeTooLarge),
                            message: "a field longer than the limit of \(maximumFieldBytes) bytes",
                            line: xml.lineNumber, column: xml.columnNumber, byteOffset: xml.byteOffset, source: source)
        capture = nil
        captureDepth = 0
        xml.abortParsing()
    }

    /// The root's default namespace, to tell RSS 0.90 from 1.0 even in an RDF document without children.
    private var rootDefaultNamespace: Namespace?

    func startPrefixMapping(prefix: XMLBytes, namespaceURI: XMLBytes) {
        if depth == 0 && prefix.isEmpty { rootDefaultNamespace = namespaces.classify(namespaceURI) }
    }

    // MARK: Root

    private func detectFormat(_ tag: Tag, _ namespace: Namespace, _ name: XMLName, _ attributes: XMLAttributes) {
        switch (tag, namespace) {
        case (.rss, .rss):
            // The version as written, reduced to its digits and dots; none at all counts as 2.0.
            let written = attributes.value(localName: "version")?.string.trimmingXMLWhitespace() ?? ""
            var version = String(written.prefix { $0.isASCII && ($0.isNumber || $0 == ".") })
            while version.hasSuffix(".") { version.removeLast() }
            if version.isEmpty || version.hasPrefix(".") { version = "2.0" }
            if version == "2.0.1" || version == "2" { version = "2.0" }
            metadata.format = FeedFormat(family: .rss, version: version)
        case (.rdfRoot, .rdf):
            isRDF = true
            metadata.format = FeedFormat(family: .rss, version: rootDefaultNamespace == .rss090 ? "0.90" : "1.0")
        case (.feed, .atom):
            metadata.format = FeedFormat(family: .atom, version: "1.0")
            channelDepth = 1
        case (.feed, .atom03), (.feed, .rss):
            metadata.format = FeedFormat(family: .atom, version: "0.3")
            channelDepth = 1
        case (.channel, .rss), (.channel, .rss10):
            metadata.format = FeedFormat(family: .rss, version: namespace == .rss10 ? "1.0" : "0.91")
            channelDepth = 1
        default:
            let uri = name.namespaceURI.string
            let found = "<\(name.qualifiedName)>" + (uri.isEmpty ? "" : " in namespace \(uri)")
            failure = FeedError(kind: .notAFeed, message: "not a feed: the root element is \(found), not <rss>, <rdf:RDF> or an Atom <feed>",
                                 line: xml.lineNumber, column: xml.columnNumber, byteOffset: xml.byteOffset, source: source)
            xml.abortParsing()
            return
        }
        if language != nil { setMetadata(\.language, language, priority: 3, key: "language") }
    }

    // MARK: Scope

    private func scopeAttributes(_ attributes: XMLAttributes) {
        var newBase: String?
        var newLanguage: String?
        for attribute in attributes where attribute.name.prefix.equals("xml") {
            if attribute.name.localName.equals("base") {
                newBase = attribute.value.string
            } else if attribute.name.localName.equals("lang") {
                newLanguage = attribute.value.string.trimmingXMLWhitespace()
            }
        }
        guard newBase != nil || newLanguage != nil else { return }
        let resolvedBase = newBase.map { resolver.resolve($0, against: base, emptyIsBase: true) } ?? base
        frames.append((depth, resolvedBase, newLanguage ?? language))
    }

    private func resolve(_ url: String?, base: String? = nil, emptyIsBase: Bool = false) -> String? {
        guard let url else { return nil }
        let resolved = resolver.resolve(url, against: base ?? self.base, emptyIsBase: emptyIsBase)
        return resolved.isEmpty ? nil : resolved
    }

    // MARK: Captures

    private func begin(_ field: Field, kind: TextContent.Kind = .text, xhtml: Bool = false) {
        var newCapture = Capture(field: field, depth: depth, kind: kind, base: base)
        newCapture.isXHTML = xhtml
        capture = newCapture
        captureDepth = depth
        xml.isCollectingText = true
    }

    /// Begins an Atom text construct, reading its form from `type` (and Atom 0.3's `mode`).
    private func beginAtomText(_ field: Field, _ attributes: XMLAttributes) {
        let form = atomTextForm(attributes)
        begin(field, kind: form.kind, xhtml: form.xhtml)
        capture?.isBase64 = form.base64
    }

    /// The form of an Atom text construct from its `type` (RFC 4287 section 3.1) and Atom 0.3's `mode`.
    private func atomTextForm(_ attributes: XMLAttributes) -> (kind: TextContent.Kind, xhtml: Bool, base64: Bool) {
        let mode = attributes.value(localName: "mode")?.string.trimmingXMLWhitespace().lowercased()
        let isBase64Mode = mode == "base64"
        guard let type = attributes.value(localName: "type")?.string.trimmingXMLWhitespace().lowercased(), !type.isEmpty else {
            return (mode == "escaped" ? .html : .text, false, isBase64Mode)
        }
        if type == "html" || type == "text/html" { return (.html, false, isBase64Mode) }
        if type == "xhtml" || type == "application/xhtml+xml" { return (.html, !isBase64Mode && mode != "escaped", isBase64Mode) }
        if type == "text" || type.hasPrefix("text/") { return (.text, false, isBase64Mode) }
        // A media type that is neither text nor XML: RFC 4287 says the content is base64 (section 4.1.3.3).
        let isXML = type.hasSuffix("+xml") || type.hasSuffix("/xml")
        return (.text, false, isBase64Mode || !isXML)
    }

    // MARK: Items

    private func startItem(_ attributes: XMLAttributes) {
        var builder = ItemBuilder(depth: depth, language: language, base: base)
        if isRDF, let about = attributes.value(localName: "about", namespaceURI: "http://www.w3.org/1999/02/22-rdf-syntax-ns#") {
            builder.rdfAbout = about.string
        }
        item = builder
        itemDepth = depth
    }

    private func itemElement(_ tag: Tag, isAtom: Bool, isRSS: Bool, _ attributes: XMLAttributes) {
        switch tag {
        case .title where isRSS: begin(.itemTitle)
        case .title where isAtom: beginAtomText(.itemTitle, attributes)
        case .link where isRSS: begin(.itemLink)
        case .link where isAtom: atomLink(attributes, forItem: true)
        case .guid where isRSS:
            if let permaLink = attributes.value(localName: "isPermaLink") {
                item?.guidIsPermaLink = !permaLink.string.trimmingXMLWhitespace().lowercased().hasPrefix("f")
            }
            begin(.itemGUID)
        case .id where isAtom: begin(.itemAtomID)
        case .pubDate where isRSS: begin(.itemPubDate)
        case .published: begin(.itemPublished)
        case .issued: begin(.itemIssued)
        case .updated: begin(.itemUpdated)
        case .modified: begin(.itemModified)
        case .description where isRSS: begin(.itemDescription, kind: .html)
        case .summary where isAtom: beginAtomText(.itemSummary, attributes)
        case .content where isAtom:
            if let src = attributes.value(localName: "src") {
                if item?.atomLink == nil { item?.atomLink = resolve(src.string) }
                return
            }
            beginAtomText(.itemContent, attributes)
        case .contentEncoded: begin(.itemContentEncoded, kind: .html)
        case .author where isRSS: begin(.itemRSSAuthor)
        case .author where isAtom, .contributor where isAtom:
            if tag == .author {
                person = PersonBuilder(depth: depth, forItem: true)
                personDepth = depth
            }
        case .category where isRSS: begin(.itemCategory)
        case .category where isAtom:
            if let term = attributes.value(localName: "term") ?? attributes.value(localName: "label") {
                appendCategory(term.string, to: &item!.categories)
            }
        case .comments where isRSS: begin(.itemComments)
        case .enclosure where isRSS:
            if let url = attributes.value(localName: "url"), let resolved = resolve(url.string) {
                appendEnclosure(Enclosure(url: resolved, type: nonEmpty(attributes.value(localName: "type")?.string),
                                          length: attributes.value(localName: "length").flatMap { Self.length($0.string) }))
            }
        case .source:
            skipDepth = depth  // the article's source feed: its title and id are not the article's
        case .dcTitle: begin(.itemDCTitle)
        case .dcCreator, .dcContributor: if tag == .dcCreator { begin(.itemDCCreator) }
        case .dcSubject: begin(.itemDCSubject)
        case .dcDescription: begin(.itemDCDescription)
        case .dcDate: begin(.itemDCDate)
        case .dcIdentifier: begin(.itemDCIdentifier)
        case .termsIssued: begin(.itemTermsIssued)
        case .termsCreated: begin(.itemTermsCreated)
        case .termsModified: begin(.itemTermsModified)
        case .itunesTitle: begin(.itemITunesTitle)
        case .itunesAuthor: begin(.itemITunesAuthor)
        case .itunesSummary: begin(.itemITunesSummary)
        case .itunesSubtitle: begin(.itemITunesSubtitle)
        case .itunesDuration: begin(.itemDuration)
        case .itunesEpisode: begin(.itemEpisode)
        case .itunesSeason: begin(.itemSeason)
        case .itunesExplicit: begin(.itemExplicit)
        case .itunesKeywords: begin(.itemKeywords)
        case .itunesImage:
            if let href = attributes.value(localName: "href") ?? attributes.value(localName: "url") {
                item?.itunesImage = resolve(href.string)
            }
        case .mediaGroup: mediaGroupDepth = depth
        case .mediaContent: mediaContent(attributes)
        case .mediaThumbnail:
            if item?.mediaThumbnail == nil, let url = attributes.value(localName: "url") { item?.mediaThumbnail = resolve(url.string) }
        case .mediaDescription:
            let isHTML = attributes.value(localName: "type")?.equals("html") ?? false
            begin(.itemMediaDescription, kind: isHTML ? .html : .text)
        case .mediaTitle: begin(.itemMediaTitle)
        case .podcastGUID: begin(.itemPodcastGUID)
        case .podcastTranscript:
            if let url = attributes.value(localName: "url"), let resolved = resolve(url.string) {
                guard (item?.podcast.transcripts.count ?? 0) < maximumListLength else { return }
                item?.podcast.transcripts.append(Transcript(url: resolved, type: nonEmpty(attributes.value(localName: "type")?.string),
                                                            language: nonEmpty(attributes.value(localName: "language")?.string)))
            }
        case .podcastChapters:
            if let url = attributes.value(localName: "url") { item?.podcast.chaptersURL = resolve(url.string) }
        case .slashComments: begin(.itemCommentCount)
        case .thrTotal: begin(.itemCommentCount)
        case .wfwCommentRSS: begin(.itemCommentsFeed)
        default: break
        }
    }

    private func mediaContent(_ attributes: XMLAttributes) {
        guard let url = attributes.value(localName: "url"), let resolved = resolve(url.string) else { return }
        let type = nonEmpty(attributes.value(localName: "type")?.string)
        let medium = attributes.value(localName: "medium")?.string
        if medium == "image" || type?.hasPrefix("image/") == true {
            if item?.mediaImage == nil { item?.mediaImage = resolved }
        }
        appendEnclosure(Enclosure(url: resolved, type: type,
                                  length: attributes.value(localName: "fileSize").flatMap { Self.length($0.string) }))
    }

    private func appendEnclosure(_ enclosure: Enclosure) {
        guard itemDepth > 0, (item?.enclosures.count ?? 0) < maximumListLength,
              item?.enclosures.contains(where: { $0.url == enclosure.url }) == false else { return }
        item!.enclosures.append(enclosure)
    }

    private func atomLink(_ attributes: XMLAttributes, forItem: Bool) {
        guard let href = attributes.value(localName: "href"), let url = resolve(href.string, emptyIsBase: true) else { return }
        let rel = attributes.value(localName: "rel")?.string.trimmingXMLWhitespace().lowercased() ?? "alternate"
        let type = nonEmpty(attributes.value(localName: "type")?.string)
        if forItem {
            switch rel {
            case "alternate", "http://www.iana.org/assignments/relation/alternate":
                // The first alternate, unless a later one is HTML and the first was not.
                if item?.atomLink == nil || (type == "text/html" && item?.atomLinkIsHTML == false) {
                    item?.atomLink = url
                    item?.atomLinkIsHTML = type == nil || type == "text/html"
                }
            case "enclosure":
                appendEnclosure(Enclosure(url: url, type: type,
                                          length: attributes.value(localName: "length").flatMap { Self.length($0.string) }))
            case "replies":
                if let type, type.contains("atom") || type.contains("rss") || type.contains("xml") {
                    if item?.commentsFeed == nil { item?.commentsFeed = url }
                } else if item?.comments == nil {
                    item?.comments = url
                }
                if let count = attributes.value(localName: "count", namespaceURI: "http://purl.org/syndication/thread/1.0") {
                    item?.commentCount = Int(count.string.trimmingXMLWhitespace())
                }
            default: break
            }
            return
        }
        switch rel {
        case "alternate": setMetadata(\.link, url, priority: 1, key: "link")
        case "self": if metadata.selfLink == nil { metadata.selfLink = url }
        case "hub": if metadata.hubs.count < maximumListLength && !metadata.hubs.contains(url) { metadata.hubs.append(url) }
        default: break
        }
    }

    // MARK: Feed

    private func feedElement(_ tag: Tag, isAtom: Bool, isRSS: Bool, _ attributes: XMLAttributes) {
        switch tag {
        case .title where isRSS: begin(.feedTitle)
        case .title where isAtom: beginAtomText(.feedTitle, attributes)
        case .link where isRSS: begin(.feedLink)
        case .link where isAtom: atomLink(attributes, forItem: false)
        case .description where isRSS: begin(.feedDescription, kind: .html)
        case .subtitle, .tagline: beginAtomText(.feedSubtitle, attributes)
        case .language: begin(.feedLanguage)
        case .copyright, .rights:
            if isAtom { beginAtomText(.feedRights, attributes) } else { begin(.feedRights) }
        case .generator:
            if isAtom, let uri = attributes.value(localName: "uri") ?? attributes.value(localName: "url"), metadata.generator == nil {
                _ = uri  // the generator's name is its text; its URI is not the name
            }
            begin(.feedGenerator)
        case .lastBuildDate: begin(.feedLastBuildDate)
        case .pubDate: begin(.feedPubDate)
        case .updated, .modified: begin(.feedUpdated)
        case .icon: begin(.feedIcon)
        case .logo: begin(.feedLogo)
        case .ttl: begin(.feedTTL)
        case .image where isRSS: imageDepth = depth
        case .textInput, .item, .entry: skipDepth = depth
        case .skipHours, .skipDays: break  // their children are two levels down; handled below
        case .managingEditor: begin(.feedManagingEditor)
        case .category where isRSS: begin(.feedCategory)
        case .category where isAtom:
            if let term = attributes.value(localName: "term") ?? attributes.value(localName: "label") {
                appendCategory(term.string, to: &metadata.categories)
            }
        case .author where isAtom:
            person = PersonBuilder(depth: depth, forItem: false)
            personDepth = depth
        case .dcLanguage: begin(.feedDCLanguage)
        case .dcRights: begin(.feedDCRights)
        case .dcDate: begin(.feedDCDate)
        case .dcCreator: begin(.feedDCCreator)
        case .dcTitle: if metadata.title == nil { begin(.feedTitle) }
        case .itunesAuthor: begin(.feedITunesAuthor)
        case .itunesSummary: begin(.feedITunesSummary)
        case .itunesImage:
            if let href = attributes.value(localName: "href") { setMetadata(\.image, resolve(href.string), priority: 2, key: "image") }
        case .itunesCategory:
            if let text = attributes.value(localName: "text") { appendCategory(text.string, to: &metadata.categories) }
        case .dcSubject: begin(.feedCategory)
        case .mediaContent, .mediaThumbnail:
            // The channel's own picture, when nothing better names one.
            guard let url = attributes.value(localName: "url") else { return }
            let type = attributes.value(localName: "type")?.string ?? ""
            let medium = attributes.value(localName: "medium")?.string ?? ""
            if tag == .mediaThumbnail || medium == "image" || type.hasPrefix("image/") {
                setMetadata(\.image, resolve(url.string), priority: 3, key: "image")
            }
        case .syUpdatePeriod: begin(.feedUpdatePeriod)
        case .syUpdateFrequency: begin(.feedUpdateFrequency)
        default: break
        }
    }

    /// skipHours/hour and skipDays/day sit one level below the channel's children.
    private func isSkipChild() -> Bool { depth == channelDepth + 2 }

    // MARK: Assigning captured text

    private func assign(_ capture: Capture) {
        var value = capture.value()
        // Relative links inside HTML resolve against the xml:base in scope at the element itself.
        if capture.kind == .html && resolvesLinksInHTML && !value.isEmpty {
            value = resolver.resolveLinks(inHTML: value, against: capture.base)
        }
        let text = value.isEmpty ? nil : value
        switch capture.field {
        case .itemTitle: if let text { item?.title = text }
        case .itemDCTitle: item?.dcTitle = text
        case .itemITunesTitle: item?.itunesTitle = text
        case .itemMediaTitle: if item?.mediaTitle == nil { item?.mediaTitle = text }
        case .itemLink: if item?.rssLink == nil { item?.rssLink = resolve(text, base: capture.base) }
        case .itemGUID: item?.guid = text
        case .itemAtomID: item?.atomID = text
        case .itemDCIdentifier: item?.dcIdentifier = text
        case .itemPubDate: item?.pubDate = text
        case .itemPublished: item?.published = text
        case .itemIssued: item?.issued = text
        case .itemDCDate: if item?.dcDate == nil { item?.dcDate = text }
        case .itemTermsIssued: item?.termsIssued = text
        case .itemTermsCreated: item?.termsCreated = text
        case .itemUpdated: item?.updated = text
        case .itemModified: item?.modified = text
        case .itemTermsModified: item?.termsModified = text
        case .itemDescription: if let text { item?.description = TextContent(text, type: .html) }
        case .itemSummary: if let text { item?.summary = TextContent(text, type: capture.kind) }
        case .itemDCDescription: item?.dcDescription = text
        case .itemITunesSummary: item?.itunesSummary = text
        case .itemITunesSubtitle: item?.itunesSubtitle = text
        case .itemMediaDescription: if let text, item?.mediaDescription == nil { item?.mediaDescription = TextContent(text, type: capture.kind) }
        case .itemContentEncoded: item?.contentEncoded = text
        case .itemContent: if let text { item?.content = TextContent(text, type: capture.kind) }
        case .itemRSSAuthor: if let text, (item?.rssAuthors.count ?? 0) < maximumListLength { item?.rssAuthors.append(text) }
        case .itemDCCreator: if let text, (item?.dcCreators.count ?? 0) < maximumListLength { item?.dcCreators.append(text) }
        case .itemITunesAuthor: item?.itunesAuthor = text
        case .itemCategory, .itemDCSubject: if let text, item != nil { appendCategory(text, to: &item!.categories) }
        case .itemComments: item?.comments = resolve(text, base: capture.base)
        case .itemCommentsFeed: item?.commentsFeed = resolve(text, base: capture.base)
        case .itemCommentCount: if let text, let count = Int(text) { item?.commentCount = count }
        case .itemDuration: item?.podcast.durationSeconds = text.flatMap(Self.duration)
        case .itemEpisode: item?.podcast.episode = text.flatMap { Int($0) }
        case .itemSeason: item?.podcast.season = text.flatMap { Int($0) }
        case .itemExplicit: item?.podcast.explicit = text.flatMap(Self.explicit)
        case .itemKeywords:
            item?.podcast.keywords = Array((text ?? "").split(separator: ",").lazy.map { String($0).trimmingXMLWhitespace() }
                .filter { !$0.isEmpty }.prefix(maximumListLength))
        case .itemPodcastGUID: item?.podcast.guid = text
        case .personName: person?.person.name = text
        case .personEmail: person?.person.email = text
        case .personURI: person?.person.uri = resolve(text, base: capture.base)
        case .feedTitle: if let text { setMetadata(\.title, text, priority: 1, key: "title") }
        case .feedLink: setMetadata(\.link, resolve(text, base: capture.base), priority: 0, key: "link")
        case .feedDescription: if let text { setMetadata(\.description, TextContent(text, type: .html), priority: 0, key: "description") }
        case .feedSubtitle: if let text { setMetadata(\.description, TextContent(text, type: capture.kind), priority: 1, key: "description") }
        case .feedITunesSummary: if let text { setMetadata(\.description, TextContent(text, type: .text), priority: 2, key: "description") }
        case .feedLanguage: setMetadata(\.language, text, priority: 0, key: "language")
        case .feedDCLanguage: setMetadata(\.language, text, priority: 1, key: "language")
        case .feedRights: setMetadata(\.rights, text, priority: 0, key: "rights")
        case .feedDCRights: setMetadata(\.rights, text, priority: 1, key: "rights")
        case .feedGenerator: setMetadata(\.generator, text, priority: 0, key: "generator")
        case .feedLastBuildDate: setFeedDate(text, priority: 0)
        case .feedUpdated: setFeedDate(text, priority: 1)
        case .feedPubDate: setFeedDate(text, priority: 2)
        case .feedDCDate: setFeedDate(text, priority: 3)
        case .feedImageURL: setMetadata(\.image, resolve(text, base: capture.base), priority: 0, key: "image")
        case .feedLogo: setMetadata(\.image, resolve(text, base: capture.base), priority: 1, key: "image")
        case .feedIcon: metadata.icon = resolve(text, base: capture.base)
        case .feedTTL: metadata.ttl = text.flatMap { Int($0) }
        case .feedUpdatePeriod: metadata.updatePeriod = text
        case .feedUpdateFrequency: metadata.updateFrequency = text.flatMap { Int($0) }
        case .feedSkipHour:
            if let hour = text.flatMap({ Int($0) }), (0...24).contains(hour), !metadata.skipHours.contains(hour) { metadata.skipHours.append(hour) }
        case .feedSkipDay:
            if let day = text, metadata.skipDays.count < 7, !metadata.skipDays.contains(day) { metadata.skipDays.append(day) }
        case .feedManagingEditor: if let text, let person = Self.rssPersonIfAny(text) { appendUnique(person, to: &metadata.authors) }
        case .feedDCCreator: if let text, let person = Self.rssPersonIfAny(text) { appendUnique(person, to: &metadata.authors) }
        case .feedITunesAuthor: if let text { appendUnique(Person(name: text), to: &metadata.authors) }
        case .feedCategory: if let text { appendCategory(text, to: &metadata.categories) }
        }
    }

    private func setMetadata<Value>(_ keyPath: WritableKeyPath<FeedMetadata, Value?>, _ value: Value?, priority: Int, key: String) {
        guard let value else { return }
        if let existing = metadataPriority[key], existing <= priority { return }
        metadataPriority[key] = priority
        metadata[keyPath: keyPath] = value
    }

    private func setFeedDate(_ text: String?, priority: Int) {
        guard let text else { return }
        if let existing = metadataPriority["updated"], existing <= priority { return }
        if let date = FeedDate.parse(text) {
            metadataPriority["updated"] = priority
            metadata.updated = date
            metadata.updatedRaw = nil
        } else if metadata.updated == nil {
            metadata.updatedRaw = text
        }
    }

    // MARK: Emitting articles

    private func emit(_ item: ItemBuilder) {
        let link = item.atomLink ?? item.rssLink
            ?? (item.guidIsPermaLink && item.guid.map(Self.looksLikeURL) == true ? resolve(item.guid, base: item.base) : nil)
        let (id, idSource): (String, Article.IDSource)
        if let guid = item.guid { (id, idSource) = (guid, .guid) }
        else if let atomID = item.atomID { (id, idSource) = (atomID, .atomID) }
        else if let identifier = item.dcIdentifier { (id, idSource) = (identifier, .dcIdentifier) }
        else if let link { (id, idSource) = (link, .link) }
        else if let about = item.rdfAbout { (id, idSource) = (about, .rdfAbout) }
        else { (id, idSource) = (Self.hashID(item), .hash) }

        var article = Article(id: id, idSource: idSource, feed: source)
        article.title = item.title ?? item.dcTitle ?? item.itunesTitle ?? item.mediaTitle
        article.link = link
        (article.published, article.publishedRaw) = Self.date(from: [item.pubDate, item.published, item.issued, item.dcDate,
                                                                        item.termsIssued, item.termsCreated])
        (article.updated, article.updatedRaw) = Self.date(from: [item.updated, item.modified, item.termsModified])
        if !item.atomAuthors.isEmpty {
            article.authors = item.atomAuthors
        } else if !item.dcCreators.isEmpty {
            article.authors = item.dcCreators.compactMap(Self.rssPersonIfAny)
        } else if !item.rssAuthors.isEmpty {
            article.authors = item.rssAuthors.compactMap(Self.rssPersonIfAny)
        } else if let author = item.itunesAuthor {
            article.authors = [Person(name: author)]
        }
        article.summary = item.description ?? item.summary ?? item.dcDescription.map { TextContent($0, type: .text) }
            ?? item.itunesSummary.map { TextContent($0, type: .text) } ?? item.itunesSubtitle.map { TextContent($0, type: .text) }
            ?? item.mediaDescription
        article.content = item.contentEncoded.map { TextContent($0, type: .html) } ?? item.content
        article.categories = item.categories
        article.enclosures = item.enclosures
        article.image = item.itunesImage ?? item.mediaThumbnail ?? item.mediaImage
            ?? item.enclosures.first(where: { $0.type?.hasPrefix("image/") == true })?.url
            ?? Self.firstImage(in: article.content?.type == .html ? article.content : nil)
            ?? Self.firstImage(in: article.summary?.type == .html ? article.summary : nil)
        article.comments = item.comments
        article.commentsFeed = item.commentsFeed
        article.commentCount = item.commentCount
        article.language = item.language ?? metadata.language
        if !item.podcast.isEmpty { article.podcast = item.podcast }
        articleCount += 1
        onArticle(article, metadata)
    }

    private static func date(from candidates: [String?]) -> (Date?, String?) {
        var firstRaw: String?
        for case let raw? in candidates {
            if let date = FeedDate.parse(raw) { return (date, nil) }
            if firstRaw == nil { firstRaw = raw }
        }
        return (nil, firstRaw)
    }

    /// `email (Name)`, `Name (email)`, `Name <email>`, a bare address or a bare name, as RSS `author` fields
    /// are written. Whichever part holds an `@` is the address; text in angle brackets is an address only
    /// if it looks like one, so `<p>Name</p>` stays a name.
    static func rssPerson(_ text: String) -> Person {
        // Most are a plain name: no parenthesis, angle bracket or @ (a byte scan, no Character work).
        if !text.utf8.contains(where: { $0 == 0x28 || $0 == 0x3C || $0 == 0x40 }) { return Person(name: text) }
        func isAddress(_ part: String) -> Bool {
            part.utf8.contains(0x40) && !part.utf8.contains(0x20) && !part.utf8.contains(0x3C)  // @, no space, no <
        }
        if let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close {
            let inside = String(text[text.index(after: open)..<close]).trimmingXMLWhitespace()
            let outside = (String(text[..<open]) + String(text[text.index(after: close)...])).trimmingXMLWhitespace()
            if isAddress(inside) && !isAddress(outside) {
                return Person(name: outside.isEmpty ? nil : outside, email: inside)
            }
            return Person(name: inside.isEmpty ? nil : inside, email: outside.isEmpty ? nil : outside)
        }
        if let open = text.firstIndex(of: "<"), let close = text.lastIndex(of: ">"), open < close {
            let inside = String(text[text.index(after: open)..<close]).trimmingXMLWhitespace()
            if isAddress(inside) {
                let name = (String(text[..<open]) + String(text[text.index(after: close)...])).trimmingXMLWhitespace()
                return Person(name: name.isEmpty ? nil : name, email: inside)
            }
        }
        if isAddress(text) { return Person(email: text) }
        return Person(name: text)
    }

    /// `rssPerson`, or `nil` when the text names nobody (`()`, `<>`).
    static func rssPersonIfAny(_ text: String) -> Person? {
        let person = rssPerson(text)
        return person == Person() ? nil : person
    }

    private static func looksLikeURL(_ value: String) -> Bool {
        value.hasPrefix("http://") || value.hasPrefix("https://")
    }

    /// A stable identifier for an article that has none: FNV-1a (64 bits) over title, dates and content.
    static func hashID(_ item: ItemBuilder) -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for part in [item.title, item.pubDate ?? item.published ?? item.dcDate ?? item.updated,
                     item.contentEncoded ?? item.content?.value ?? item.description?.value ?? item.summary?.value] {
            for byte in (part ?? "").utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
            hash = (hash ^ 0xFF) &* 1_099_511_628_211
        }
        let hex = String(hash, radix: 16)
        return "hash:" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// `HH:MM:SS`, `MM:SS` or plain seconds.
    static func duration(_ text: String) -> Int? {
        // Non-negative and bounded: nothing here may trap on hostile numbers (NaN, 1e300, huge hours).
        let trimmed = text.trimmingXMLWhitespace()
        guard trimmed.utf8.contains(0x3A) else {  // plain seconds, perhaps with a fraction
            if let seconds = Int(trimmed) { return seconds >= 0 ? seconds : nil }
            guard let seconds = Double(trimmed), seconds.isFinite, seconds >= 0, seconds < 1e15 else { return nil }
            return Int(seconds)
        }
        let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false).map { Int($0.trimmingXMLWhitespaceSubstring()) }
        guard parts.count <= 3, parts.allSatisfy({ ($0 ?? -1) >= 0 }) else { return nil }
        var total = 0
        for part in parts {
            let (scaled, overflowed) = total.multipliedReportingOverflow(by: 60)
            let (sum, overflowedAgain) = scaled.addingReportingOverflow(part!)
            if overflowed || overflowedAgain { return nil }
            total = sum
        }
        return total
    }

    /// A byte length as feeds write it; negative or unparseable lengths are no length.
    static func length(_ text: String) -> Int64? {
        guard let value = Int64(text.trimmingXMLWhitespace()), value >= 0 else { return nil }
        return value
    }

    static func explicit(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true", "explicit": return true
        case "no", "false", "clean": return false
        default: return nil
        }
    }

    /// The `src` of the first `<img>` in HTML content: one `memchr` scan for `<`, no Foundation search.
    private static func firstImage(in text: TextContent?) -> String? {
        guard var text = text?.value, text.utf8.count > 4 else { return nil }
        return text.withUTF8 { bytes -> String? in
            guard let base = bytes.baseAddress else { return nil }
            let count = bytes.count
            var index = 0
            while index + 4 < count {
                guard let found = memchr(base + index, 0x3C, count - index) else { return nil }
                index = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
                guard index + 3 < count, base[index] | 0x20 == 0x69, base[index + 1] | 0x20 == 0x6D, base[index + 2] | 0x20 == 0x67,
                      [0x20, 0x09, 0x0A, 0x0D, 0x2F].contains(base[index + 3]) else { continue }
                // Inside the tag, find src= and its quoted value.
                var cursor = index + 3
                while cursor + 5 < count && base[cursor] != 0x3E {
                    if base[cursor] | 0x20 == 0x73, base[cursor + 1] | 0x20 == 0x72, base[cursor + 2] | 0x20 == 0x63, base[cursor + 3] == 0x3D,
                       [0x20, 0x09, 0x0A, 0x0D].contains(base[cursor - 1]) {
                        let quote = base[cursor + 4]
                        guard quote == 0x22 || quote == 0x27 else { return nil }
                        let start = cursor + 5
                        var end = start
                        while end < count && base[end] != quote { end += 1 }
                        guard end < count, end > start else { return nil }
                        let url = String(decoding: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
                        return url.utf8.contains(0x26) ? url.replacingOccurrences(of: "&amp;", with: "&") : url
                    }
                    cursor += 1
                }
                return nil
            }
            return nil
        }
    }

    private func appendCategory(_ text: String, to categories: inout [String]) {
        let category = text.trimmingXMLWhitespace()
        guard categories.count < maximumListLength else { return }  // bounded: no quadratic work on hostile lists
        if !category.isEmpty && !categories.contains(category) { categories.append(category) }
    }

    private func appendUnique(_ person: Person, to people: inout [Person]) {
        guard people.count < maximumListLength, person != Person() else { return }
        if !people.contains(person) { people.append(person) }
    }

    private func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingXMLWhitespace(), !text.isEmpty else { return nil }
        return text
    }
}
