// What an item (and an Atom person) said, element by element, while it is open: the raw candidates
// that FieldPrecedence.swift turns into an `Article` when the item closes.

/// An Atom person, or an item's author being collected.
struct PersonBuilder {
    var person = Person()
    let forItem: Bool
}

/// Everything an item's elements said, before precedence decides the article's fields.
struct ItemBuilder {
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

    init(language: String?, base: String?) {
        self.language = language
        self.base = base
    }
}

extension ItemBuilder {
    /// A stable identifier for an article that has none: FNV-1a (64 bits) over title, dates and content.
    var hashID: String {
        Self.fallbackID(title: title, date: pubDate ?? published ?? dcDate ?? updated,
                        content: contentEncoded ?? content?.value ?? description?.value ?? summary?.value)
    }

    /// `hash:` and FNV-1a (64 bits, hex) over a title, a date's text and a content, each ended by 0xFF: the identifier of
    /// an article that has none, XML item or JSON Feed item alike.
    static func fallbackID(title: String?, date: String?, content: String?) -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for part in [title, date, content] {
            for byte in (part ?? "").utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
            hash = (hash ^ 0xFF) &* 1_099_511_628_211
        }
        let hex = String(hash, radix: 16)
        return "hash:" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
