// An item's or entry's children: which element starts which capture, and the attribute-only elements
// (links, enclosures, media, categories, transcripts) recorded at once.

import ExpatXML

extension FeedEventHandler {
    // MARK: Items

    /// Opens an item or entry; RSS 1.0 keeps its `rdf:about` as an identifier of last resort, CDF its `HREF` as the
    /// link and its `LASTMOD` as the update date.
    func startItem(_ attributes: XMLAttributes) {
        // Made in place: a local builder assigned to `item` was copied and destroyed whole (~2,000 instructions an item).
        item.clearTexts()  // what an abandoned item left (emit clears its own)
        item.reset(language: language, base: base)
        if isRDF, let about = attributes.value(localName: "about", namespaceURI: "http://www.w3.org/1999/02/22-rdf-syntax-ns#") {
            item.rdfAbout = about.string
        }
        if isCDF {
            item.rssLink = resolve(attributes.value(anyCase: "href")?.string)
            item.modified = ValueParsers.nonEmpty(attributes.value(anyCase: "lastmod")?.string)
        }
        itemDepth = depth
    }

    /// A direct child of the open item (or of its `media:group`): begins its capture or records its attributes.
    func itemElement(_ tag: Tag, isAtom: Bool, isRSS: Bool, _ attributes: XMLAttributes) {
        switch tag {
        case .title where isRSS: begin(.itemTitle)
        case .title where isAtom: beginAtomText(.itemTitle, attributes)
        case .link where isRSS:
            // The URL is the text; a broken feed's `<link href="…"/>` is kept in case the text is empty.
            if !attributes.isEmpty, let href = attributes.value(anyCase: "href"), item.rssLinkHref == nil {
                item.rssLinkHref = resolve(href.string)
            }
            begin(.itemLink)
        case .link where isAtom: atomLink(attributes, forItem: true)
        case .guid where isRSS:
            if let permaLink = attributes.value(anyCase: "ispermalink") {
                // `false` in any case, trimmed: the first byte after XML white space is `f` or `F` (lowercasing maps
                // nothing else to `f`). Read in place: a trimmed, lowercased `String` was ~500 instructions a guid.
                let first = permaLink.buffer.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
                item.guidIsPermaLink = first.map { $0 | 0x20 != 0x66 } ?? true
                item.guidSaysPermaLink = first.map { $0 | 0x20 == 0x74 } ?? false  // `true`, `True`, …
            }
            begin(.itemGUID)
        case .id where isAtom: begin(.itemAtomID)
        case .pubDate where isRSS: begin(.itemPubDate)
        case .published: begin(.itemPublished)
        case .issued: begin(.itemIssued)
        case .updated: begin(.itemUpdated)
        case .modified: begin(.itemModified)
        case .description where isRSS: begin(.itemDescription, kind: .html)
        case .abstract where isCDF: begin(.itemSummary)
        case .summary where isAtom: beginAtomText(.itemSummary, attributes)
        case .content where isAtom:
            if let src = attributes.value(anyCase: "src") {
                // Out-of-line content: kept as a link, and the entry's link when it has no alternate.
                if let url = resolve(src.string), item.contentSource == nil {
                    item.contentSource = Link(href: url, type: ValueParsers.nonEmpty(attributes.value(anyCase: "type")?.string))
                    if item.atomLink == nil { item.atomLink = url }
                }
                return
            }
            beginAtomText(.itemContent, attributes)
        case .contentEncoded: begin(.itemContentEncoded, kind: .html)
        case .body: begin(.itemBody, kind: .html)  // an XHTML body (RSS item/body, xhtml:body): its markup is the content
        case .fullitem: begin(.itemFullitem, kind: .html)
        case .author where isRSS: begin(.itemRSSAuthor)
        case .author where isAtom:
            person = PersonBuilder(target: .itemAuthor)
            personDepth = depth
        case .contributor where isAtom:
            person = PersonBuilder(target: .itemContributor)
            personDepth = depth
        case .category where isRSS:
            begin(.itemCategory, scheme: attributes.isEmpty ? nil : attributes.value(anyCase: "domain").flatMap { ValueParsers.nonEmpty(interner.string($0)) })
        case .category where isAtom: atomCategory(attributes)
        case .comments where isRSS: begin(.itemComments)
        case .enclosure where isRSS:
            if let url = attributes.value(anyCase: "url"), let resolved = resolve(url.string) {
                appendEnclosure(Enclosure(url: resolved, type: ValueParsers.nonEmpty(attributes.value(anyCase: "type")?.string),
                                          length: attributes.value(anyCase: "length").flatMap { ValueParsers.length($0.buffer) }))
            }
        case .source:
            skipDepth = depth  // the article's source feed: its title and id are not the article's
        case .rights where isAtom, .copyright where isAtom: beginAtomText(.itemRights, attributes)
        case .dcRights: begin(.itemDCRights)
        case .license:
            if let resource = attributes.value(localName: "resource", namespaceURI: "http://www.w3.org/1999/02/22-rdf-syntax-ns#") {
                if item.license == nil { item.license = resolve(resource.string) }
            } else {
                begin(.itemLicense)
            }
        case .dcTitle: begin(.itemDCTitle)
        case .dcCreator: begin(.itemDCCreator)
        case .dcContributor: begin(.itemDCContributor)
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
        case .itunesKeywords: begin(.itemKeywords, scheme: Category.iTunesScheme)
        case .itunesImage:
            if let href = attributes.value(anyCase: "href") ?? attributes.value(anyCase: "url") {
                item.itunesImage = resolve(href.string)
            }
        case .mediaGroup: mediaGroupDepth = depth
        case .mediaContent: mediaContent(attributes)
        case .mediaThumbnail:
            if item.mediaThumbnail == nil, let url = attributes.value(anyCase: "url") { item.mediaThumbnail = resolve(url.string) }
        case .mediaDescription:
            let isHTML = attributes.value(localName: "type")?.equals("html") ?? false
            begin(.itemMediaDescription, kind: isHTML ? .html : .text)
        case .mediaTitle: begin(.itemMediaTitle)
        case .mediaCategory:
            begin(.itemCategory, scheme: ValueParsers.nonEmpty(attributes.value(anyCase: "scheme")?.string) ?? Category.mediaRSSScheme,
                  label: ValueParsers.nonEmpty(attributes.value(anyCase: "label")?.string))
        case .mediaKeywords: begin(.itemMediaKeywords)
        case .podcastGUID: begin(.itemPodcastGUID)
        case .podcastTranscript:
            if let url = attributes.value(anyCase: "url"), let resolved = resolve(url.string) {
                guard item.podcast.transcripts.count < maximumListLength else { return }
                item.podcast.transcripts.append(Transcript(url: resolved, type: ValueParsers.nonEmpty(attributes.value(anyCase: "type")?.string),
                                                            language: attributes.value(anyCase: "language").flatMap { ValueParsers.languageTag($0.string) }))
            }
        case .podcastChapters:
            if let url = attributes.value(anyCase: "url") { item.podcast.chaptersURL = resolve(url.string) }
        case .slashComments: begin(.itemCommentCount)
        case .thrTotal: begin(.itemCommentCount)
        case .wfwCommentRSS: begin(.itemCommentsFeed)
        default: break
        }
    }

    /// `media:content`: an enclosure, and the item's image when it is a picture.
    private func mediaContent(_ attributes: XMLAttributes) {
        guard let url = attributes.value(anyCase: "url"), let resolved = resolve(url.string) else { return }
        let type = ValueParsers.nonEmpty(attributes.value(anyCase: "type")?.string)
        let medium = attributes.value(anyCase: "medium")?.string
        if medium == "image" || type?.hasPrefix("image/") == true {
            if item.mediaImage == nil { item.mediaImage = resolved }
        }
        appendEnclosure(Enclosure(url: resolved, type: type,
                                  length: attributes.value(anyCase: "filesize").flatMap { ValueParsers.length($0.string) }))
    }

    /// Appends an enclosure to the open item unless its URL is already there or the list is full.
    private func appendEnclosure(_ enclosure: Enclosure) {
        guard itemDepth > 0, item.enclosures.count < maximumListLength,
              item.enclosures.contains(where: { $0.url == enclosure.url }) == false else { return }
        item.enclosures.append(enclosure)
    }

    /// An Atom `category`: its term (else its label) is the category, with its scheme and label.
    func atomCategory(_ attributes: XMLAttributes) {
        var term: XMLBytes?, label: XMLBytes?, scheme: XMLBytes?
        for attribute in attributes where attribute.name.namespaceURI.isEmpty {
            let name = attribute.name.localName
            switch name.count {
            case 4 where name.equalsIgnoringCase("term"): term = attribute.value
            case 5 where name.equalsIgnoringCase("label"): label = attribute.value
            case 6 where name.equalsIgnoringCase("scheme"): scheme = attribute.value
            default: break
            }
        }
        let labelText = ValueParsers.nonEmpty(label?.string)
        guard let text = ValueParsers.nonEmpty(term?.string) ?? labelText else { return }
        appendCategory(Category(term: text, scheme: scheme.flatMap { ValueParsers.nonEmpty(interner.string($0)) }, label: labelText))
    }

    /// An Atom `link`, for the open item or for the feed. Without `href`, its text is taken as the URL once it closes.
    func atomLink(_ attributes: XMLAttributes, forItem: Bool) {
        var link = Link(href: "", rel: "alternate")
        var href: String?
        for attribute in attributes where attribute.name.namespaceURI.isEmpty {
            let name = attribute.name.localName
            switch name.count {
            case 3 where name.equalsIgnoringCase("rel"): link.rel = Self.relation(attribute.value)
            case 4 where name.equalsIgnoringCase("href"): href = attribute.value.string
            case 4 where name.equalsIgnoringCase("type"): link.type = ValueParsers.nonEmpty(interner.string(attribute.value))
            case 5 where name.equalsIgnoringCase("title"): link.title = ValueParsers.nonEmpty(attribute.value.string)
            case 6 where name.equalsIgnoringCase("length"): link.length = ValueParsers.length(attribute.value.buffer)
            case 8 where name.equalsIgnoringCase("hreflang"): link.hreflang = ValueParsers.languageTag(attribute.value.string)
            default: break
            }
        }
        if let href {
            guard let url = resolve(href, emptyIsBase: true) else { return }
            link.href = url
            record(link, forItem: forItem, attributes: attributes)
        } else {
            // `<link>http://…</link>`: broken, but common.
            pendingLink = link
            begin(forItem ? .itemAtomLinkText : .feedAtomLinkText)
        }
    }

    /// A link relation: registered names in lowercase (the commonest ones without making a `String`), IANA's IRIs for
    /// them shortened to the name, any other IRI as written, `alternate` when empty (RFC 4287, section 4.2.7.2).
    static func relation(_ value: XMLBytes) -> String {
        switch value.count {
        case 3: if value.equals("via") { return "via" }; if value.equals("hub") { return "hub" }
        case 4: if value.equals("self") { return "self" }; if value.equals("edit") { return "edit" }
        case 7: if value.equals("related") { return "related" }; if value.equals("replies") { return "replies" }; if value.equals("license") { return "license" }
        case 9: if value.equals("alternate") { return "alternate" }; if value.equals("enclosure") { return "enclosure" }
        default: break
        }
        var rel = value.string.trimmingXMLWhitespace()
        if rel.utf8.contains(0x3A) {  // an IRI; IANA's spells out a registered name
            let iana = "http://www.iana.org/assignments/relation/"
            if rel.hasPrefix(iana) { rel = rel.dropFirst(iana.count).lowercased() }
        } else {
            rel = rel.lowercased()
        }
        return rel.isEmpty ? "alternate" : rel
    }

    /// Keeps an Atom link in the item's or the feed's `links`, and in the field its relation names.
    func record(_ link: Link, forItem: Bool, attributes: XMLAttributes?) {
        let url = link.href
        if forItem {
            guard itemDepth > 0 else { return }
            if item.links.isEmpty == true { item.links.reserveCapacity(4) }  // most entries have one to four
            if item.links.count < maximumListLength { item.links.append(link) }
            switch link.rel ?? "alternate" {
            case "alternate":
                // The first alternate, unless a later one is HTML and the first was not.
                let type = link.type
                if item.atomLink == nil || (type == "text/html" && item.atomLinkIsHTML == false) {
                    item.atomLink = url
                    item.atomLinkIsHTML = type == nil || type == "text/html"
                }
            case "enclosure":
                appendEnclosure(Enclosure(url: url, type: link.type, length: link.length))
            case "replies":
                if let type = link.type, type.contains("atom") || type.contains("rss") || type.contains("xml") {
                    if item.commentsFeed == nil { item.commentsFeed = url }
                } else if item.comments == nil {
                    item.comments = url
                }
                if let count = attributes?.value(localName: "count", namespaceURI: "http://purl.org/syndication/thread/1.0") {
                    item.commentCount = Int(count.string.trimmingXMLWhitespace())
                }
            case "license":
                if item.license == nil { item.license = url }
            default: break
            }
            return
        }
        if metadata.links.count < maximumListLength { metadata.links.append(link) }
        switch link.rel ?? "alternate" {
        case "alternate": setMetadata(\.link, url, priority: 1, key: "link")
        case "self": if metadata.selfLink == nil { metadata.selfLink = url }
        case "hub": if metadata.hubs.count < maximumListLength && !metadata.hubs.contains(url) { metadata.hubs.append(url) }
        case "license": if metadata.license == nil { metadata.license = url }
        default: break
        }
    }
}
