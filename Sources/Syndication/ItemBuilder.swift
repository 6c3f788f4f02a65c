// What an item (and an Atom person) said, element by element, while it is open: the raw candidates
// that FieldPrecedence.swift turns into an `Article` when the item closes.

/// A person being collected from its children: an Atom author or contributor, an `itunes:owner`.
struct PersonBuilder {
    /// Where the person goes when its element closes.
    enum Target {
        case itemAuthor, itemContributor, feedAuthor, feedContributor, feedPublisher
    }

    var person = Person()
    let target: Target
}

/// Everything an item's elements said, before precedence decides the article's fields.
struct ItemBuilder {
    let language: String?
    var rdfAbout: String?
    var title: String?, dcTitle: String?, itunesTitle: String?, mediaTitle: String?
    var rssLink: String?, rssLinkHref: String?, atomLink: String?, atomLinkIsHTML = false
    var guid: String?, guidIsPermaLink = true, atomID: String?, dcIdentifier: String?
    var pubDate: String?, published: String?, issued: String?, dcDate: String?, termsIssued: String?, termsCreated: String?
    var updated: String?, modified: String?, termsModified: String?
    var description: TextContent?, summary: TextContent?, dcDescription: String?, itunesSummary: String?
    var itunesSubtitle: String?, mediaDescription: TextContent?
    var contentEncoded: String?, content: TextContent?, body: String?, fullitem: String?
    var atomAuthors: [Person] = [], dcCreators: [String] = [], rssAuthors: [String] = [], itunesAuthor: String?
    var categories: [String] = []
    var enclosures: [Enclosure] = []
    var itunesImage: String?, mediaThumbnail: String?, mediaImage: String?
    var comments: String?, commentsFeed: String?, commentCount: Int?
    var podcast = PodcastDetails()
    var base: String?
    // Issue 16: every Atom link, categories with schemes, out-of-line content, licence, rights, contributors.
    var links: [Link] = []
    var categoryDetails: [Category] = []
    var contentSource: Link?
    var license: String?
    var rights: String?, dcRights: String?
    var contributors: [Person] = []

    init(language: String?, base: String?) {
        self.language = language
        self.base = base
    }
}

extension ItemBuilder {
    /// A stable identifier for an article that has none: FNV-1a (64 bits) over title, dates and content.
    var hashID: String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for part in [title, pubDate ?? published ?? dcDate ?? updated,
                     contentEncoded ?? content?.value ?? description?.value ?? summary?.value] {
            for byte in (part ?? "").utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
            hash = (hash ^ 0xFF) &* 1_099_511_628_211
        }
        let hex = String(hash, radix: 16)
        return "hash:" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
