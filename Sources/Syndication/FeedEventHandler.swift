// The feed parser's state machine: where in the document each ExpatXML event falls (root, feed, item,
// person, capture, skipped subtree), the xml:base and xml:lang in scope, and the start and end of captures.
// What each element means lives in FeedElements.swift and ItemElements.swift; where captured text goes and
// how a closed item becomes an article, in FieldPrecedence.swift.

import ExpatXML
import Foundation

/// The feed parser's state machine over ExpatXML's byte events.
///
/// Its state is `@exclusivity(unchecked)`: every event touches several of these properties, and the dynamic
/// exclusivity checks on class properties cost ~6% of full article extraction (callgrind). The handler is
/// confined to one thread and no method hands out `inout` access to its state across a call back into itself.
final class FeedEventHandler: XMLEventHandler {
    unowned(unsafe) var xml: XMLPushParser! { didSet { xmlReference = xml.map { Unmanaged.passUnretained($0) } } }
    /// `xml`, reached without a reference count on the hot paths (an `unowned(unsafe)` reference is loaded strong:
    /// a retain and a release per field; issue 18).
    @exclusivity(unchecked) private var xmlReference: Unmanaged<XMLPushParser>?

    /// Turns the parser's text delivery on or off.
    @inline(__always) func setCollectingText(_ collecting: Bool) {
        xmlReference?._withUnsafeGuaranteedRef { $0.isCollectingText = collecting }
    }
    let source: String
    let onArticle: (Article, FeedMetadata) -> Void
    let resolvesLinksInHTML: Bool
    let maximumListLength: Int
    private let maximumFieldBytes: Int

    // Internal, not private, where the element, precedence and builder files of this handler (its extensions in
    // other files) read or write them; private where only this file does.
    @exclusivity(unchecked) var metadata = FeedMetadata() { didSet { metadataSnapshot = nil } }
    /// `metadata` as the last article was handed it, kept until `metadata` changes: passing the stored property itself
    /// copied it (a reference count up and down for each of its fields, ~950 instructions an article; issue 18), and
    /// it changes rarely once items come.
    @exclusivity(unchecked) private var metadataSnapshot: MetadataSnapshot?

    private final class MetadataSnapshot {
        let value: FeedMetadata
        init(_ value: FeedMetadata) { self.value = value }
    }

    /// Hands `article` to `onArticle` with the metadata known so far.
    func deliver(_ article: Article) {
        let snapshot: MetadataSnapshot
        if let current = metadataSnapshot {
            snapshot = current
        } else {
            snapshot = MetadataSnapshot(metadata)
            metadataSnapshot = snapshot
        }
        withExtendedLifetime(snapshot) {
            Unmanaged.passUnretained(snapshot)._withUnsafeGuaranteedRef { onArticle(article, $0.value) }
        }
    }
    @exclusivity(unchecked) var articleCount = 0
    /// A failure the handler itself found (not a feed, a field over the limit); the parse then stops with it.
    @exclusivity(unchecked) var failure: FeedError?

    @exclusivity(unchecked) private var namespaces = NamespaceTable()
    @exclusivity(unchecked) var resolver = URLResolver()
    @exclusivity(unchecked) private(set) var depth = 0
    @exclusivity(unchecked) var channelDepth = 0
    /// The open item's builder while `itemDepth > 0`; between items, what the last one left (remade by `startItem`).
    /// Not optional: an optional builder was destroyed through the runtime's generic witnesses (~1,900 instructions an
    /// item; issue 18).
    @exclusivity(unchecked) var item: ItemBuilder
    /// Where the open item's text candidates live; reused from item to item.
    let textSlots: ItemBuilder.TextSlots
    @exclusivity(unchecked) var itemDepth = 0
    /// The field being captured while `captureDepth > 0`. One value reused field after field (its buffers keep their
    /// capacity): a fresh optional capture per field was copied and destroyed through the runtime's value witnesses,
    /// ~3% of `feedingest parse` (issue 18).
    @exclusivity(unchecked) private var capture = TextCapture(field: .itemTitle, kind: .text, base: nil)
    @exclusivity(unchecked) private var captureDepth = 0
    @exclusivity(unchecked) var person: PersonBuilder?
    @exclusivity(unchecked) var personDepth = 0
    @exclusivity(unchecked) var skipDepth = 0
    @exclusivity(unchecked) var imageDepth = 0
    @exclusivity(unchecked) var mediaGroupDepth = 0
    @exclusivity(unchecked) var isRDF = false
    /// The root is Microsoft CDF's `CHANNEL`: items and channels nest, and URLs and dates are attributes.
    @exclusivity(unchecked) var isCDF = false
    /// The `itunes:category` elements open around the current element, outermost first, with their `text`.
    @exclusivity(unchecked) var iTunesCategories: [(depth: Int, text: String?)] = []
    /// The attributes of an Atom `link` without `href`, while its text (taken as the URL) is captured.
    @exclusivity(unchecked) var pendingLink: Link?
    /// Attribute values repeated item after item (category schemes, link types), made into `String`s once.
    @exclusivity(unchecked) var interner = StringInterner()
    /// The public identifier of the document type declaration, if any (Netscape's RSS 0.91 names its DTD there).
    @exclusivity(unchecked) var doctypePublicID: String?

    /// `xml:base` and `xml:lang` in scope: one frame per element that sets either.
    @exclusivity(unchecked) private var frames: [(depth: Int, base: String?, language: String?)]
    /// Priorities of metadata fields several elements can give (lower wins).
    @exclusivity(unchecked) var metadataPriority: [String: Int] = [:]

    init(source: String, baseURL: String?, configuration: FeedParserConfiguration, onArticle: @escaping (Article, FeedMetadata) -> Void) {
        resolvesLinksInHTML = configuration.resolvesLinksInHTML
        maximumListLength = max(1, configuration.maximumListLength)
        maximumFieldBytes = configuration.xml.maximumTextNodeBytes
        self.source = source
        self.onArticle = onArticle
        frames = [(0, baseURL, nil)]
        textSlots = ItemBuilder.TextSlots()
        item = ItemBuilder(language: nil, base: nil, slots: textSlots)
    }

    func repairs(from xml: XMLPushParser) -> XMLRepairs { xml.repairs }

    /// The `xml:base` in scope, or the document's URL.
    var base: String? { frames[frames.count - 1].base }
    /// The `xml:lang` in scope, as a BCP 47 tag.
    var language: String? {
        let language = frames[frames.count - 1].language
        return language?.isEmpty == true ? nil : language
    }

    // MARK: Events

    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        depth += 1
        if captureDepth > 0 {
            capture.startChild(name, attributes: attributes, isHTML: isHTMLMarkup(name))
            checkCaptureSize()
            return
        }
        if skipDepth > 0 { return }
        if attributes.hasXMLNamespaceAttribute { scopeAttributes(attributes) }
        let namespace = namespaces.classify(name.namespaceURI)
        let tag = Tag.classify(namespace, name.localName)
        if depth == 1 {
            detectRoot(tag, namespace, name, attributes)
            return
        }
        let isAtom = namespace == .atom || namespace == .atom03
        let isRSS = namespace == .rss || namespace == .rss10 || namespace == .rss090
        if namespace == .rss090 && isRDF && metadata.format?.version == "1.0" {
            metadata.format?.version = "0.90"  // RDF with the Netscape 0.9 vocabulary
        }

        // A person's name, email and uri (an Atom author or contributor, an itunes:owner), in an entry or in the feed.
        if personDepth > 0 {
            guard depth == personDepth + 1 else { return }
            switch tag {
            case .name, .itunesName: begin(.personName)
            case .email, .itunesEmail: begin(.personEmail)
            case .uri: begin(.personURI)
            default: break
            }
            return
        }
        if tag == .itunesCategory {
            iTunesCategory(attributes)
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
        if tag == .channel && isRSS && depth == 2 && !isCDF {
            channelDepth = 2
            return
        }
        if imageDepth > 0 {
            if depth == imageDepth + 1 && isRSS { feedImageElement(tag) }
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

    /// The root element: an Atom feed without Atom's namespace, whose elements in no namespace are then Atom's, or
    /// whatever ``detectFormat(_:_:_:_:)`` makes of it. Out of line: it runs once, and `startElement` runs per element.
    @inline(never)
    private func detectRoot(_ tag: Tag, _ namespace: Namespace, _ name: XMLName, _ attributes: XMLAttributes) {
        if tag == .unknown, name.namespaceURI.isEmpty, name.localName.equals("feed") {
            namespaces.unnamespaced = .atom
            return detectFormat(.feed, .atom, name, attributes)
        }
        detectFormat(tag, namespace, name, attributes)
    }

    func endElement(_ name: XMLName) {
        defer {
            if frames.count > 1 && frames[frames.count - 1].depth == depth { frames.removeLast() }
            depth -= 1
        }
        if captureDepth > 0 {
            if depth > captureDepth {
                capture.endChild(name, isHTML: isHTMLMarkup(name))
                return
            }
            captureDepth = 0
            setCollectingText(false)
            assign(&capture)
            return
        }
        if skipDepth > 0 {
            if depth == skipDepth { skipDepth = 0 }
            return
        }
        if personDepth > 0 && depth == personDepth, let person {
            self.person = nil
            personDepth = 0
            if person.person != Person() { assign(person) }
            return
        }
        if let last = iTunesCategories.last, last.depth == depth {
            iTunesCategories.removeLast()
            return
        }
        if mediaGroupDepth > 0 && depth == mediaGroupDepth { mediaGroupDepth = 0; return }
        if itemDepth > 0 && depth == itemDepth {
            itemDepth = 0
            emit(&item)
            item.clearTexts()
            return
        }
        if imageDepth > 0 && depth == imageDepth { imageDepth = 0 }
    }

    func text(_ text: XMLBytes) {
        guard captureDepth > 0 else { return }
        capture.appendText(text)
        checkCaptureSize()
    }

    /// One field's text and re-serialised markup stay under the text node limit, so memory stays bounded
    /// even when a field is made of many small nodes.
    @inline(__always) private func checkCaptureSize() {
        guard captureDepth > 0, capture.count > maximumFieldBytes, failure == nil else { return }
        failure = FeedError(kind: .xml(.textNodeTooLarge),
                            message: "a field longer than the limit of \(maximumFieldBytes) bytes",
                            line: xml.lineNumber, column: xml.columnNumber, byteOffset: xml.byteOffset, source: source)
        capture.reset(field: capture.field, kind: .text, base: nil)  // lets the field's bytes go
        captureDepth = 0
        xml.abortParsing()
    }

    /// The root's default namespace, to tell RSS 0.90 from 1.0 even in an RDF document without children.
    private(set) var rootDefaultNamespace: Namespace?

    func startPrefixMapping(prefix: XMLBytes, namespaceURI: XMLBytes) {
        if depth == 0 && prefix.isEmpty { rootDefaultNamespace = namespaces.classify(namespaceURI) }
    }

    func startDoctype(name: XMLBytes, systemID: XMLBytes, publicID: XMLBytes) {
        if !publicID.isEmpty { doctypePublicID = publicID.string }
    }

    /// Whether markup inside a captured field is HTML: in XHTML's namespace, or unprefixed in none or in a feed
    /// vocabulary's (markup written straight into an RSS 1.0 or Atom element inherits the document's default namespace).
    private func isHTMLMarkup(_ name: XMLName) -> Bool {
        switch namespaces.classify(name.namespaceURI) {
        case .xhtml: return true
        case .rss, .rss10, .rss090, .atom, .atom03: return name.prefix.isEmpty
        default: return false
        }
    }

    // MARK: Scope

    private func scopeAttributes(_ attributes: XMLAttributes) {
        var newBase: String?
        var newLanguage: String?
        for attribute in attributes where attribute.name.prefix.equals("xml") {
            if attribute.name.localName.equals("base") {
                newBase = attribute.value.string
            } else if attribute.name.localName.equals("lang") {
                // xml:lang="" says the language is unknown (XML 1.0, section 2.12): no language, not an empty one.
                newLanguage = ValueParsers.languageTag(attribute.value.string) ?? ""
            }
        }
        guard newBase != nil || newLanguage != nil else { return }
        let resolvedBase = newBase.map { resolver.resolve($0, against: base, emptyIsBase: true) } ?? base
        frames.append((depth, resolvedBase, newLanguage ?? frames[frames.count - 1].language))
    }

    func resolve(_ url: String?, base: String? = nil, emptyIsBase: Bool = false) -> String? {
        guard let url else { return nil }
        if URLResolver.isAbsoluteAndTrimmed(url) { return url }  // as `resolve` would return it, without the base
        let resolved = resolver.resolve(url, against: base ?? self.base, emptyIsBase: emptyIsBase)
        return resolved.isEmpty ? nil : resolved
    }

    // MARK: Captures

    func begin(_ field: Field, kind: TextContent.Kind = .text, xhtml: Bool = false) {
        capture.reset(field: field, kind: kind, base: base)
        capture.isXHTML = xhtml
        captureDepth = depth
        setCollectingText(true)
    }

    /// Begins a capture that keeps a scheme and a label for its element's end (a category's `domain`, `scheme`, `label`).
    func begin(_ field: Field, scheme: String?, label: String? = nil) {
        begin(field)
        if scheme != nil || label != nil { capture.setCategoryAttributes(scheme: scheme, label: label) }
    }

    /// Begins an Atom text construct, reading its form from `type` (and Atom 0.3's `mode`).
    func beginAtomText(_ field: Field, _ attributes: XMLAttributes) {
        let form = TextCapture.atomTextForm(attributes)
        begin(field, kind: form.kind, xhtml: form.xhtml)
        capture.isBase64 = form.base64
    }
}
