// The root element (which format this is) and the feed's own children: channel or Atom feed metadata.

import ExpatXML

extension FeedEventHandler {
    // MARK: Root

    /// Reads the format and version from the root element, or fails the parse when the root is not a feed's.
    func detectFormat(_ tag: Tag, _ namespace: Namespace, _ name: XMLName, _ attributes: XMLAttributes) {
        switch (tag, namespace) {
        case (.rss, .rss):
            // The version as written, reduced to its digits and dots; none at all counts as 2.0.
            let written = attributes.value(anyCase: "version")?.string.trimmingXMLWhitespace() ?? ""
            var version = String(written.prefix { $0.isASCII && ($0.isNumber || $0 == ".") })
            while version.hasSuffix(".") { version.removeLast() }
            if version.isEmpty || version.hasPrefix(".") { version = "2.0" }
            if version == "2.0.1" || version == "2" { version = "2.0" }
            var format = FeedFormat(family: .rss, version: version)
            if version == "0.91" {
                let isNetscape = doctypePublicID?.lowercased().contains("netscape") == true
                format.dialect = isNetscape ? .netscape : .userland
            }
            metadata.format = format
        case (.rdfRoot, .rdf):
            isRDF = true
            metadata.format = FeedFormat(family: .rss, version: rootDefaultNamespace == .rss090 ? "0.90" : "1.0")
        case (.feed, .atom) where name.namespaceURI.isEmpty:
            // Atom's elements without its namespace: Atom 1.0, unless `version` names one of the drafts before it.
            let written = attributes.value(anyCase: "version")?.string.trimmingXMLWhitespace()
            metadata.format = FeedFormat(family: .atom, version: written.flatMap { ["0.1", "0.2", "0.3"].contains($0) ? $0 : nil } ?? "1.0")
            channelDepth = 1
        case (.feed, .atom):
            metadata.format = FeedFormat(family: .atom, version: "1.0")
            channelDepth = 1
        case (.feed, .atom03), (.feed, .rss):
            // Atom 0.1, 0.2 and 0.3 share a namespace and say which they are in `version`; the drafts before 1.0
            // that say nothing are read as 0.3, the last of them.
            let written = attributes.value(anyCase: "version")?.string.trimmingXMLWhitespace()
            let version = written.flatMap { ["0.1", "0.2", "0.3"].contains($0) ? $0 : nil } ?? "0.3"
            metadata.format = FeedFormat(family: .atom, version: version)
            channelDepth = 1
        case (.channel, .rss) where attributes.value(anyCase: "href") != nil || name.localName.equals("CHANNEL"):
            // Microsoft CDF: the channel's URL and date are attributes of the root.
            isCDF = true
            metadata.format = FeedFormat(family: .cdf, version: "")
            channelDepth = 1
            if let href = attributes.value(anyCase: "href") { setMetadata(\.link, resolve(href.string), priority: 0, key: "link") }
            if let date = attributes.value(anyCase: "lastmod") { setFeedDate(date.string, priority: 0) }
        case (.channel, .rss), (.channel, .rss10):
            metadata.format = FeedFormat(family: .rss, version: namespace == .rss10 ? "1.0" : "0.91",
                                         dialect: namespace == .rss10 ? nil : .userland)
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
        case .abstract where isCDF: begin(.feedAbstract)
        case .language: begin(.feedLanguage)
        case .copyright, .rights:
            if isAtom { beginAtomText(.feedRights, attributes) } else { begin(.feedRights) }
        case .generator:
            if isAtom, metadata.generatorDetails == nil {
                // The name is the text; Atom 1.0's uri (0.3: url) and version are attributes.
                let uri = attributes.value(anyCase: "uri") ?? attributes.value(anyCase: "url")
                let version = ValueParsers.nonEmpty(attributes.value(anyCase: "version")?.string)
                metadata.generatorDetails = Generator(uri: resolve(uri?.string), version: version)
            }
            begin(.feedGenerator)
        case .lastBuildDate: begin(.feedLastBuildDate)
        case .pubDate: begin(.feedPubDate)
        case .updated, .modified: begin(.feedUpdated)
        case .id where isAtom: begin(.feedID)
        case .icon: begin(.feedIcon)
        case .logo where isCDF:
            // <LOGO HREF="…" STYLE="IMAGE|ICON"/>
            guard let href = attributes.value(anyCase: "href") else { return }
            if attributes.value(anyCase: "style")?.string.lowercased() == "icon" {
                if metadata.icon == nil { metadata.icon = resolve(href.string) }
            } else {
                setMetadata(\.image, resolve(href.string), priority: 1, key: "image")
            }
        case .logo: begin(.feedLogo)
        case .ttl: begin(.feedTTL)
        case .image where isRSS: imageDepth = depth
        case .textInput, .item, .entry: skipDepth = depth
        case .skipHours, .skipDays: break  // their children are two levels down; handled below
        case .managingEditor: begin(.feedManagingEditor)
        case .author where isRSS: begin(.feedManagingEditor)  // not RSS 2.0's, but channels have one: the same person
        case .webMaster: begin(.feedWebMaster)
        case .category where isRSS: begin(.feedCategory, scheme: ValueParsers.nonEmpty(attributes.value(anyCase: "domain")?.string))
        case .category where isAtom: atomCategory(attributes)
        case .author where isAtom:
            person = PersonBuilder(target: .feedAuthor)
            personDepth = depth
        case .contributor where isAtom:
            person = PersonBuilder(target: .feedContributor)
            personDepth = depth
        case .itunesOwner:
            person = PersonBuilder(target: .feedPublisher)
            personDepth = depth
        case .dcLanguage: begin(.feedDCLanguage)
        case .dcRights: begin(.feedDCRights)
        case .termsRights: begin(.feedTermsRights)
        case .dcDate: begin(.feedDCDate)
        case .termsModified: begin(.feedTermsModified)
        case .termsIssued: begin(.feedTermsIssued)
        case .termsCreated: begin(.feedTermsCreated)
        case .dcCreator: begin(.feedDCCreator)
        case .dcContributor: begin(.feedDCContributor)
        case .dcPublisher: begin(.feedDCPublisher)
        case .dcDescription: begin(.feedDCDescription)
        case .dcTitle: if metadata.title == nil { begin(.feedTitle) }
        case .itunesAuthor: begin(.feedITunesAuthor)
        case .itunesSummary: begin(.feedITunesSummary)
        case .itunesSubtitle: begin(.feedITunesSubtitle)
        case .itunesKeywords: begin(.feedKeywords, scheme: Category.iTunesScheme)
        case .itunesImage:
            if let href = attributes.value(anyCase: "href") ?? attributes.value(anyCase: "url") {
                setMetadata(\.image, resolve(href.string), priority: 2, key: "image")
            }
        case .dcSubject: begin(.feedCategory)
        case .mediaCategory:
            begin(.feedCategory, scheme: ValueParsers.nonEmpty(attributes.value(anyCase: "scheme")?.string) ?? Category.mediaRSSScheme,
                  label: ValueParsers.nonEmpty(attributes.value(anyCase: "label")?.string))
        case .mediaKeywords: begin(.feedKeywords)
        case .mediaContent, .mediaThumbnail:
            // The channel's own picture, when nothing better names one.
            guard let url = attributes.value(anyCase: "url") else { return }
            let type = attributes.value(localName: "type")?.string ?? ""
            let medium = attributes.value(localName: "medium")?.string ?? ""
            if tag == .mediaThumbnail || medium == "image" || type.hasPrefix("image/") {
                setMetadata(\.image, resolve(url.string), priority: 3, key: "image")
            }
        case .syUpdatePeriod: begin(.feedUpdatePeriod)
        case .syUpdateFrequency: begin(.feedUpdateFrequency)
        case .syUpdateBase: begin(.feedUpdateBase)
        case .adminGeneratorAgent:
            if let resource = attributes.value(localName: "resource", namespaceURI: "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
               let uri = resolve(resource.string) {
                var generator = metadata.generatorDetails ?? Generator()
                if generator.uri == nil { generator.uri = uri }
                metadata.generatorDetails = generator
            }
        case .license:
            if let resource = attributes.value(localName: "resource", namespaceURI: "http://www.w3.org/1999/02/22-rdf-syntax-ns#") {
                if metadata.license == nil { metadata.license = resolve(resource.string) }
            } else {
                begin(.feedLicense)
            }
        default: break
        }
    }

    /// A child of the RSS `image` element.
    func feedImageElement(_ tag: Tag) {
        switch tag {
        case .url: begin(.feedImageURL)
        case .title: begin(.feedImageTitle)
        case .link: begin(.feedImageLink)
        case .width: begin(.feedImageWidth)
        case .height: begin(.feedImageHeight)
        case .description: begin(.feedImageDescription)
        default: break
        }
    }

    /// skipHours/hour and skipDays/day sit one level below the channel's children.
    func isSkipChild() -> Bool { depth == channelDepth + 2 }

    /// An `itunes:category`, in the channel or an item, at any depth: a category with iTunes's scheme, whose parent is
    /// the `itunes:category` it is nested in.
    func iTunesCategory(_ attributes: XMLAttributes) {
        let text = ValueParsers.nonEmpty(attributes.value(anyCase: "text")?.string)
        let parent = iTunesCategories.last?.text
        iTunesCategories.append((depth, text))
        guard let text else { return }
        let category = Category(term: text, scheme: Category.iTunesScheme, parent: parent)
        if itemDepth > 0 || channelDepth > 0 || isRDF { appendCategory(category) }
    }
}
