// An item's or entry's children: which element starts which capture, and the attribute-only elements
// (links, enclosures, media, categories, transcripts) recorded at once.

import ExpatXML

extension FeedEventHandler {
    // MARK: Items

    /// Opens an item or entry; RSS 1.0 keeps its `rdf:about` as an identifier of last resort.
    func startItem(_ attributes: XMLAttributes) {
        var builder = ItemBuilder(language: language, base: base)
        if isRDF, let about = attributes.value(localName: "about", namespaceURI: "http://www.w3.org/1999/02/22-rdf-syntax-ns#") {
            builder.rdfAbout = about.string
        }
        item = builder
        itemDepth = depth
    }

    /// A direct child of the open item (or of its `media:group`): begins its capture or records its attributes.
    func itemElement(_ tag: Tag, isAtom: Bool, isRSS: Bool, _ attributes: XMLAttributes) {
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
                person = PersonBuilder(forItem: true)
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
                appendEnclosure(Enclosure(url: resolved, type: ValueParsers.nonEmpty(attributes.value(localName: "type")?.string),
                                          length: attributes.value(localName: "length").flatMap { ValueParsers.length($0.string) }))
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
                item?.podcast.transcripts.append(Transcript(url: resolved, type: ValueParsers.nonEmpty(attributes.value(localName: "type")?.string),
                                                            language: ValueParsers.nonEmpty(attributes.value(localName: "language")?.string)))
            }
        case .podcastChapters:
            if let url = attributes.value(localName: "url") { item?.podcast.chaptersURL = resolve(url.string) }
        case .slashComments: begin(.itemCommentCount)
        case .thrTotal: begin(.itemCommentCount)
        case .wfwCommentRSS: begin(.itemCommentsFeed)
        default: break
        }
    }

    /// `media:content`: an enclosure, and the item's image when it is a picture.
    private func mediaContent(_ attributes: XMLAttributes) {
        guard let url = attributes.value(localName: "url"), let resolved = resolve(url.string) else { return }
        let type = ValueParsers.nonEmpty(attributes.value(localName: "type")?.string)
        let medium = attributes.value(localName: "medium")?.string
        if medium == "image" || type?.hasPrefix("image/") == true {
            if item?.mediaImage == nil { item?.mediaImage = resolved }
        }
        appendEnclosure(Enclosure(url: resolved, type: type,
                                  length: attributes.value(localName: "fileSize").flatMap { ValueParsers.length($0.string) }))
    }

    /// Appends an enclosure to the open item unless its URL is already there or the list is full.
    private func appendEnclosure(_ enclosure: Enclosure) {
        guard itemDepth > 0, (item?.enclosures.count ?? 0) < maximumListLength,
              item?.enclosures.contains(where: { $0.url == enclosure.url }) == false else { return }
        item!.enclosures.append(enclosure)
    }

    /// An Atom `link`, for the open item or for the feed, by its `rel`.
    func atomLink(_ attributes: XMLAttributes, forItem: Bool) {
        guard let href = attributes.value(localName: "href"), let url = resolve(href.string, emptyIsBase: true) else { return }
        let rel = attributes.value(localName: "rel")?.string.trimmingXMLWhitespace().lowercased() ?? "alternate"
        let type = ValueParsers.nonEmpty(attributes.value(localName: "type")?.string)
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
                                          length: attributes.value(localName: "length").flatMap { ValueParsers.length($0.string) }))
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
}
