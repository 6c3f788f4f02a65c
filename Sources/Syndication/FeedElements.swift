// The root element (which format this is) and the feed's own children: channel or Atom feed metadata.

import ExpatXML

extension FeedEventHandler {
    // MARK: Root

    /// Reads the format and version from the root element, or fails the parse when the root is not a feed's.
    func detectFormat(_ tag: Tag, _ namespace: Namespace, _ name: XMLName, _ attributes: XMLAttributes) {
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

    // MARK: Feed

    /// A direct child of the channel or Atom feed: begins its capture or records its attributes.
    func feedElement(_ tag: Tag, isAtom: Bool, isRSS: Bool, _ attributes: XMLAttributes) {
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
        case .generator: begin(.feedGenerator)  // the name is its text; Atom's uri (0.3: url) attribute is not kept
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
            person = PersonBuilder(forItem: false)
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
    func isSkipChild() -> Bool { depth == channelDepth + 2 }
}
