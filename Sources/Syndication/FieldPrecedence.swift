// Which element wins when several give the same field: where each captured field goes (`assign`), the
// priorities of feed metadata, the candidates an article's fields are taken from when its item closes
// (`emit`), and the bounded, duplicate-free lists of categories and people.

import Foundation

/// The text fields the parser captures. Each names where the text goes when its element closes.
enum Field {
    // item
    case itemTitle, itemDCTitle, itemITunesTitle, itemMediaTitle
    case itemLink, itemGUID, itemAtomID, itemDCIdentifier
    case itemPubDate, itemPublished, itemIssued, itemDCDate, itemTermsIssued, itemTermsCreated
    case itemUpdated, itemModified, itemTermsModified
    case itemDescription, itemSummary, itemDCDescription, itemITunesSummary, itemITunesSubtitle, itemMediaDescription
    case itemContentEncoded, itemContent, itemBody, itemFullitem
    case itemRSSAuthor, itemDCCreator, itemITunesAuthor, itemDCContributor
    case itemCategory, itemDCSubject, itemMediaKeywords
    case itemAtomLinkText, itemRights, itemDCRights, itemLicense
    case itemComments, itemCommentsFeed, itemCommentCount
    case itemDuration, itemEpisode, itemSeason, itemExplicit, itemKeywords, itemPodcastGUID
    // a person (Atom author/contributor) inside an item or the feed
    case personName, personEmail, personURI
    // feed
    case feedTitle, feedLink, feedDescription, feedSubtitle, feedITunesSummary, feedLanguage, feedDCLanguage
    case feedRights, feedDCRights, feedGenerator, feedLastBuildDate, feedPubDate, feedUpdated, feedDCDate
    case feedImageURL, feedIcon, feedLogo, feedTTL, feedUpdatePeriod, feedUpdateFrequency, feedSkipHour, feedSkipDay
    case feedManagingEditor, feedDCCreator, feedITunesAuthor, feedCategory
    case feedID, feedAbstract, feedWebMaster, feedDCPublisher, feedDCContributor, feedDCDescription, feedITunesSubtitle
    case feedTermsRights, feedTermsModified, feedTermsIssued, feedTermsCreated, feedUpdateBase, feedLicense, feedKeywords
    case feedAtomLinkText, feedImageTitle, feedImageLink, feedImageWidth, feedImageHeight, feedImageDescription
}

extension Field {
    /// The field is an item's summary or content, kept as a ``TextContent`` of bytes.
    var becomesTextContent: Bool {
        switch self {
        case .itemDescription, .itemSummary, .itemMediaDescription, .itemContentEncoded, .itemContent: return true
        default: return false
        }
    }

    /// The capture collects bytes, never a `String`: a summary or content, or an item's date (``itemDateSlot``).
    var keepsBytes: Bool { becomesTextContent || itemDateSlot != nil }

    /// The item's date slot this field fills, for its dates.
    var itemDateSlot: ItemBuilder.Slot? {
        switch self {
        case .itemPubDate: return .pubDate
        case .itemPublished: return .published
        case .itemIssued: return .issued
        case .itemDCDate: return .dcDate
        case .itemTermsIssued: return .termsIssued
        case .itemTermsCreated: return .termsCreated
        case .itemUpdated: return .updated
        case .itemModified: return .modified
        case .itemTermsModified: return .termsModified
        default: return nil
        }
    }
}

extension FeedEventHandler {
    // MARK: Captured text

    /// Puts a closed capture of an item's summary or content into the open item, as bytes (``TextContent/utf8``).
    private func assignTextContent(_ capture: inout TextCapture) {
        var bytes = capture.valueBytes()
        guard !bytes.isEmpty else {
            if capture.field == .itemContentEncoded { item.contentEncoded = nil }
            return
        }
        // Relative links inside HTML resolve against the xml:base in scope at the element itself.
        if capture.kind == .html && resolvesLinksInHTML {
            bytes = resolver.resolveLinks(inHTML: bytes, against: capture.base)
        }
        switch capture.field {
        case .itemDescription: item.description = TextContent(validUTF8: bytes, type: .html)
        case .itemSummary: item.summary = TextContent(validUTF8: bytes, type: capture.kind)
        case .itemMediaDescription:
            if item.mediaDescription == nil { item.mediaDescription = TextContent(validUTF8: bytes, type: capture.kind) }
        case .itemContentEncoded: item.contentEncoded = TextContent(validUTF8: bytes, type: .html)
        case .itemContent: item.content = TextContent(validUTF8: bytes, type: capture.kind)
        default: break
        }
    }

    /// Puts a closed capture's text where its field goes: into the open item, person or the feed metadata.
    /// `capture` is `inout` only so that the handler's one capture is read where it is, not copied; it is not changed.
    func assign(_ capture: inout TextCapture) {
        if capture.field.becomesTextContent { return assignTextContent(&capture) }
        // An item's date, as plain text: parsed from the capture's bytes, no `String` made (ItemBuilder.setDate).
        if let slot = capture.field.itemDateSlot, capture.kind == .text,
           capture.withPlainValueBytes({ item.setDate(slot, text: $0, keepingFirst: slot == .dcDate) }) != nil { return }
        var value = capture.value()
        // Relative links inside HTML resolve against the xml:base in scope at the element itself.
        if capture.kind == .html && resolvesLinksInHTML && !value.isEmpty {
            value = resolver.resolveLinks(inHTML: value, against: capture.base)
        }
        let text = value.isEmpty ? nil : value
        switch capture.field {
        case .itemDescription, .itemSummary, .itemMediaDescription, .itemContentEncoded, .itemContent:
            break  // assignTextContent's
        case .itemTitle: if let text { item.title = text }
        case .itemDCTitle: item.dcTitle = text
        case .itemITunesTitle: item.itunesTitle = text
        case .itemMediaTitle: if item.mediaTitle == nil { item.mediaTitle = text }
        case .itemLink: if item.rssLink == nil { item.rssLink = resolve(text, base: capture.base) }
        case .itemGUID: item.guid = text
        case .itemAtomID: item.atomID = text
        case .itemDCIdentifier: item.dcIdentifier = text
        case .itemPubDate: item.pubDate = text
        case .itemPublished: item.published = text
        case .itemIssued: item.issued = text
        case .itemDCDate: if item.dcDate == nil { item.dcDate = text }
        case .itemTermsIssued: item.termsIssued = text
        case .itemTermsCreated: item.termsCreated = text
        case .itemUpdated: item.updated = text
        case .itemModified: item.modified = text
        case .itemTermsModified: item.termsModified = text
        case .itemDCDescription: item.dcDescription = text
        case .itemITunesSummary: item.itunesSummary = text
        case .itemITunesSubtitle: item.itunesSubtitle = text
        case .itemBody: if item.body == nil { item.body = text }
        case .itemFullitem: if item.fullitem == nil { item.fullitem = text }
        case .itemRSSAuthor: if let text, item.rssAuthors.count < maximumListLength { item.rssAuthors.append(text) }
        case .itemDCCreator: if let text, item.dcCreators.count < maximumListLength { item.dcCreators.append(text) }
        case .itemDCContributor:
            if let text, itemDepth > 0, let person = ValueParsers.rssPersonIfAny(text) { item.appendContributor(person, maximum: maximumListLength) }
        case .itemITunesAuthor: item.itunesAuthor = text
        case .itemCategory, .itemDCSubject:
            if let text, itemDepth > 0 { appendCategory(Category(term: text, scheme: capture.scheme, label: capture.label)) }
        case .itemMediaKeywords:
            if let text, itemDepth > 0 { appendKeywords(text, scheme: nil) }
        case .itemAtomLinkText:
            if var link = pendingLink, let url = resolve(text, base: capture.base) {
                link.href = url
                record(link, forItem: true, attributes: nil)
            }
            pendingLink = nil
        case .itemRights: if item.rights == nil { item.rights = text }
        case .itemDCRights: if item.dcRights == nil { item.dcRights = text }
        case .itemLicense: if item.license == nil { item.license = resolve(text, base: capture.base) }
        case .itemComments: item.comments = resolve(text, base: capture.base)
        case .itemCommentsFeed: item.commentsFeed = resolve(text, base: capture.base)
        case .itemCommentCount: if let text, let count = Int(text) { item.commentCount = count }
        case .itemDuration: item.podcast.durationSeconds = text.flatMap(ValueParsers.duration)
        case .itemEpisode: item.podcast.episode = text.flatMap { Int($0) }
        case .itemSeason: item.podcast.season = text.flatMap { Int($0) }
        case .itemExplicit: item.podcast.explicit = text.flatMap(ValueParsers.explicit)
        case .itemKeywords:
            item.podcast.keywords = Array((text ?? "").split(separator: ",").lazy.map { String($0).trimmingXMLWhitespace() }
                .filter { !$0.isEmpty }.prefix(maximumListLength))
            if let text, itemDepth > 0 { appendKeywords(text, scheme: capture.scheme) }
        case .itemPodcastGUID: item.podcast.guid = text
        case .personName: person?.person.name = text
        case .personEmail: person?.person.email = text
        case .personURI: person?.person.uri = resolve(text, base: capture.base)
        case .feedTitle: if let text { setMetadata(\.title, text, priority: 1, key: "title") }
        case .feedLink: setMetadata(\.link, resolve(text, base: capture.base), priority: 0, key: "link")
        case .feedDescription: if let text { setMetadata(\.description, TextContent(text, type: .html), priority: 0, key: "description") }
        case .feedAbstract: if let text { setMetadata(\.description, TextContent(text, type: .text), priority: 0, key: "description") }
        case .feedSubtitle: if let text { setMetadata(\.description, TextContent(text, type: capture.kind), priority: 1, key: "description") }
        case .feedDCDescription: if let text { setMetadata(\.description, TextContent(text, type: .text), priority: 2, key: "description") }
        case .feedITunesSubtitle: if let text { setMetadata(\.description, TextContent(text, type: .text), priority: 3, key: "description") }
        case .feedITunesSummary: if let text { setMetadata(\.description, TextContent(text, type: .text), priority: 4, key: "description") }
        case .feedLanguage: setMetadata(\.language, text.flatMap(ValueParsers.languageTag), priority: 0, key: "language")
        case .feedDCLanguage: setMetadata(\.language, text.flatMap(ValueParsers.languageTag), priority: 1, key: "language")
        case .feedRights: setMetadata(\.rights, text, priority: 0, key: "rights")
        case .feedDCRights: setMetadata(\.rights, text, priority: 1, key: "rights")
        case .feedTermsRights: setMetadata(\.rights, text, priority: 2, key: "rights")
        case .feedGenerator:
            setMetadata(\.generator, text, priority: 0, key: "generator")
            if let text {
                var generator = metadata.generatorDetails ?? Generator()
                if generator.name == nil { generator.name = text }
                metadata.generatorDetails = generator
            }
        case .feedID: if metadata.id == nil { metadata.id = text }
        case .feedLastBuildDate: setFeedDate(text, priority: 0)
        case .feedUpdated: setFeedDate(text, priority: 1)
        case .feedTermsModified: setFeedDate(text, priority: 2)
        case .feedPubDate:
            setFeedDate(text, priority: 3)
            setFeedPublished(text, priority: 0)
        case .feedDCDate: setFeedDate(text, priority: 4)
        case .feedTermsIssued: setFeedPublished(text, priority: 1)
        case .feedTermsCreated: setFeedPublished(text, priority: 2)
        case .feedImageURL:
            let url = resolve(text, base: capture.base)
            setMetadata(\.image, url, priority: 0, key: "image")
            updateImageDetails { if $0.url == nil { $0.url = url } }
        case .feedImageTitle: updateImageDetails { if $0.title == nil { $0.title = text } }
        case .feedImageLink:
            let url = resolve(text, base: capture.base)
            updateImageDetails { if $0.link == nil { $0.link = url } }
        case .feedImageWidth: updateImageDetails { if $0.width == nil { $0.width = text.flatMap { Int($0) } } }
        case .feedImageHeight: updateImageDetails { if $0.height == nil { $0.height = text.flatMap { Int($0) } } }
        case .feedImageDescription: updateImageDetails { if $0.description == nil { $0.description = text } }
        case .feedLogo: setMetadata(\.image, resolve(text, base: capture.base), priority: 1, key: "image")
        case .feedIcon: metadata.icon = resolve(text, base: capture.base)
        case .feedTTL: metadata.ttl = text.flatMap { Int($0) }
        case .feedUpdatePeriod: metadata.updatePeriod = text.flatMap(UpdatePeriod.init(text:))
        case .feedUpdateFrequency: metadata.updateFrequency = text.flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        case .feedUpdateBase: metadata.updateBase = text.flatMap(FeedDate.parse)
        case .feedSkipHour:
            if let hour = text.flatMap({ Int($0) }), (0...24).contains(hour), !metadata.skipHours.contains(hour) { metadata.skipHours.append(hour) }
        case .feedSkipDay:
            if let day = text, metadata.skipDays.count < 7, !metadata.skipDays.contains(day) { metadata.skipDays.append(day) }
        case .feedManagingEditor: if let text, let person = ValueParsers.rssPersonIfAny(text) { appendUnique(person, to: &metadata.authors) }
        case .feedDCCreator: if let text, let person = ValueParsers.rssPersonIfAny(text) { appendUnique(person, to: &metadata.authors) }
        case .feedITunesAuthor: if let text { appendUnique(Person(name: text), to: &metadata.authors) }
        case .feedWebMaster: setMetadata(\.publisher, text.flatMap(ValueParsers.rssPersonIfAny), priority: 0, key: "publisher")
        case .feedDCPublisher: setMetadata(\.publisher, text.flatMap(ValueParsers.rssPersonIfAny), priority: 1, key: "publisher")
        case .feedDCContributor:
            if let text, let person = ValueParsers.rssPersonIfAny(text) { appendUnique(person, to: &metadata.contributors) }
        case .feedCategory: if let text { appendCategory(Category(term: text, scheme: capture.scheme, label: capture.label)) }
        case .feedKeywords: if let text { appendKeywords(text, scheme: capture.scheme) }
        case .feedLicense: if metadata.license == nil { metadata.license = resolve(text, base: capture.base) }
        case .feedAtomLinkText:
            if var link = pendingLink, let url = resolve(text, base: capture.base) {
                link.href = url
                record(link, forItem: false, attributes: nil)
            }
            pendingLink = nil
        }
    }

    /// Puts a closed person where it goes: an item's authors or contributors, the feed's, or the feed's publisher.
    func assign(_ builder: PersonBuilder) {
        let person = builder.person
        switch builder.target {
        case .itemAuthor: if item.atomAuthors.count < maximumListLength { item.atomAuthors.append(person) }
        case .itemContributor: if itemDepth > 0 { item.appendContributor(person, maximum: maximumListLength) }
        case .feedAuthor: appendUnique(person, to: &metadata.authors)
        case .feedContributor: appendUnique(person, to: &metadata.contributors)
        case .feedPublisher: setMetadata(\.publisher, person, priority: 2, key: "publisher")
        }
    }

    /// Changes the feed's RSS image details, creating them on first use.
    private func updateImageDetails(_ change: (inout FeedImage) -> Void) {
        var image = metadata.imageDetails ?? FeedImage()
        change(&image)
        metadata.imageDetails = image.isEmpty ? nil : image
    }

    /// Sets a metadata field unless an element of the same or a better (lower) priority already set it.
    func setMetadata<Value>(_ keyPath: WritableKeyPath<FeedMetadata, Value?>, _ value: Value?, priority: Int, key: String) {
        guard let value else { return }
        if let existing = metadataPriority[key], existing <= priority { return }
        metadataPriority[key] = priority
        metadata[keyPath: keyPath] = value
    }

    /// The feed's `updated` from the best-priority date element; its raw text only while no date parsed.
    func setFeedDate(_ text: String?, priority: Int) {
        setDate(text, priority: priority, key: "updated", \.updated, raw: \.updatedRaw)
    }

    /// The feed's `published` from the best-priority date element; its raw text only while no date parsed.
    func setFeedPublished(_ text: String?, priority: Int) {
        setDate(text, priority: priority, key: "published", \.published, raw: \.publishedRaw)
    }

    private func setDate(_ text: String?, priority: Int, key: String, _ date: WritableKeyPath<FeedMetadata, Date?>,
                         raw: WritableKeyPath<FeedMetadata, String?>) {
        guard let text else { return }
        if let existing = metadataPriority[key], existing <= priority { return }
        if let parsed = FeedDate.parse(text) {
            metadataPriority[key] = priority
            metadata[keyPath: date] = parsed
            metadata[keyPath: raw] = nil
        } else if metadata[keyPath: date] == nil {
            metadata[keyPath: raw] = text
        }
    }

    // MARK: Articles

    /// Delivers the article a closed item makes: for each field, the first of its candidate elements that the item had.
    ///
    /// Building and delivering stay in one function: a builder that returns the `Article` costs one more copy of it
    /// on its way to `onArticle`, even inlined (~0.7% of full extraction in callgrind).
    func emit(_ item: inout ItemBuilder) {
        // Values are moved out of the builder (`take`, `swap`), not copied: the builder is dropped right after, and a copy
        // was a reference count up here and one down there for every field (issue 18). Each candidate is checked in
        // place before it is moved: `a ?? b` chains and `if let x = y.take()` left optional temporaries, mostly empty,
        // that the compiler destroyed through the runtime's generic value witnesses (~70 instructions each). Most such
        // destroys were of the new article's own empty fields as they were set, until `Article.init` was inlined.
        var link = item.takeFirst(.atomLink, .rssLink)
        if link == nil { link = item.rssLinkHref }
        // A permalink guid stands in for a missing link: an absolute one, or any the feed calls a permalink in so many
        // words, resolved when a base is known and kept as written when none is (a file, standard input).
        if link == nil, item.guidIsPermaLink, item.has(.guid), let guid = item.guid,
           item.guidSaysPermaLink || ValueParsers.looksLikeURL(guid) {
            link = resolve(guid, base: item.base)
        }
        let (id, idSource): (String, Article.IDSource)
        if item.has(.guid) { (id, idSource) = (item.take(.guid)!, .guid) }
        else if item.has(.atomID) { (id, idSource) = (item.take(.atomID)!, .atomID) }
        else if item.has(.dcIdentifier) { (id, idSource) = (item.take(.dcIdentifier)!, .dcIdentifier) }
        else if let link { (id, idSource) = (link, .link) }
        else if item.has(.rdfAbout) { (id, idSource) = (item.take(.rdfAbout)!, .rdfAbout) }
        else { (id, idSource) = (item.hashID, .hash) }

        var article = Article(id: id, idSource: idSource, feed: source)
        article.title = item.takeFirst(.title, .dcTitle, .itunesTitle, .mediaTitle)
        article.link = link
        (article.published, article.publishedRaw) = item.firstDate(ItemBuilder.publishedCandidates)
        (article.updated, article.updatedRaw) = item.firstDate(ItemBuilder.updatedCandidates)
        if !item.atomAuthors.isEmpty {
            swap(&article.authors, &item.atomAuthors)
        } else if !item.dcCreators.isEmpty {
            article.authors = item.dcCreators.compactMap(ValueParsers.rssPersonIfAny)
            // dc:creator names the author; an RSS `author` of the same person may give the address too.
            if !item.rssAuthors.isEmpty {
                ValueParsers.completeEmails(&article.authors, from: item.rssAuthors.compactMap(ValueParsers.rssPersonIfAny))
            }
        } else if !item.rssAuthors.isEmpty {
            article.authors = item.rssAuthors.compactMap(ValueParsers.rssPersonIfAny)
        } else if item.has(.itunesAuthor) {
            article.authors = [Person(name: item.take(.itunesAuthor))]
        }
        if item.description != nil { swap(&article.summary, &item.description) }
        else if item.summary != nil { swap(&article.summary, &item.summary) }
        else if let text = item.takeFirst(.dcDescription, .itunesSummary, .itunesSubtitle) { article.summary = TextContent(text, type: .text) }
        else if item.mediaDescription != nil { swap(&article.summary, &item.mediaDescription) }
        if item.contentEncoded != nil { swap(&article.content, &item.contentEncoded) }
        else if item.content != nil { swap(&article.content, &item.content) }
        else if let extras = item.extras {
            if let body = extras.body { article.content = TextContent(body, type: .html) }
            else if let fullitem = extras.fullitem { article.content = TextContent(fullitem, type: .html) }
        }
        // Lists are swapped with the new article's empty ones: moved, not copied and released again.
        swap(&article.categories, &item.categories)
        swap(&article.enclosures, &item.enclosures)
        article.image = item.takeFirst(.itunesImage, .mediaThumbnail, .mediaImage)
        if article.image == nil {
            article.image = article.enclosures.first(where: { $0.type?.hasPrefix("image/") == true })?.url
                ?? ValueParsers.firstImage(in: article.content?.type == .html ? article.content : nil)
                ?? ValueParsers.firstImage(in: article.summary?.type == .html ? article.summary : nil)
        }
        article.comments = item.take(.comments)
        article.commentsFeed = item.take(.commentsFeed)
        article.commentCount = item.commentCount
        article.language = item.language ?? metadata.language
        if !item.podcast.isEmpty { article.podcast = item.podcast }
        if !item.links.isEmpty { swap(&article.links, &item.links) }
        if !item.categoryDetails.isEmpty { swap(&article.categoryDetails, &item.categoryDetails) }
        if item.extras != nil {
            let extras = item.extras.take()!
            article.contentSource = extras.contentSource
            article.license = extras.license
            article.rights = extras.rights ?? extras.dcRights
            article.contributors = extras.contributors
        }
        articleCount += 1
        deliver(article)
    }

    // MARK: Bounded lists

    /// Appends a category to the open item's lists, or to the feed's when no item is open.
    func appendCategory(_ category: consuming Category) {
        if itemDepth > 0 {
            item.appendCategory(consume category, maximum: maximumListLength)
        } else {
            metadata.appendCategory(consume category, maximum: maximumListLength)
        }
    }

    /// Appends each comma-separated keyword of `itunes:keywords` or `media:keywords` as a category.
    func appendKeywords(_ text: String, scheme: String?) {
        for keyword in text.split(separator: ",").prefix(maximumListLength) {
            appendCategory(Category(term: String(keyword), scheme: scheme))
        }
    }

    /// Appends a person unless nobody, already there, or the list is full.
    func appendUnique(_ person: Person, to people: inout [Person]) {
        guard people.count < maximumListLength, person != Person() else { return }
        if !people.contains(person) { people.append(person) }
    }
}

/// Appends a category with its term trimmed: the term to `categories` unless it is there, the category with its scheme,
/// label and parent to `details` unless it is there; nothing when the term is empty or a list holds `maximum`.
extension FeedMetadata {
    /// Appends a feed-level category as ``appendCategory(_:to:details:maximum:)`` does.
    mutating func appendCategory(_ category: consuming Category, maximum: Int) {
        // `categoryDetails` is kept in the vocabulary storage, so the terms are moved out while both change.
        var terms = categories
        categories = []
        Syndication.appendCategory(consume category, to: &terms, details: &categoryDetails, maximum: maximum)
        categories = terms
    }
}

/// The category is consumed, so that it is moved into `details` rather than copied (issue 18).
func appendCategory(_ category: consuming Category, to categories: inout [String], details: inout [Category], maximum: Int) {
    category.term = category.term.trimmingXMLWhitespace()
    guard !category.term.isEmpty else { return }
    // Room for a few at once: most items have one to four categories.
    if categories.isEmpty { categories.reserveCapacity(4) }
    if details.isEmpty { details.reserveCapacity(4) }
    // Bounded: no quadratic work on hostile lists.
    if categories.count < maximum && !categories.contains(category.term) { categories.append(category.term) }
    if details.count < maximum && !details.contains(category) { details.append(consume category) }
}
