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
    var rssLink: String?, atomLink: String?, atomLinkIsHTML = false
    var guid: String?, guidIsPermaLink = true, atomID: String?, dcIdentifier: String?
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
    // Issue 16: every Atom link and categories with schemes; the rarer fields in `extras`.
    var links: [Link] = []
    var categoryDetails: [Category] = []
    /// Fields few items have, out of line: a builder is copied and destroyed once or twice per item, and an absent
    /// `Extras` costs one check there instead of a reference count per field.
    var extras: Extras?

    /// The fields few items have.
    struct Extras {
        var rssLinkHref: String?, body: String?, fullitem: String?
        var contentSource: Link?
        var license: String?, rights: String?, dcRights: String?
        var contributors: [Person] = []
    }

    init(language: String?, base: String?) {
        self.language = language
        self.base = base
    }
}

extension ItemBuilder {
    // The rarer fields, read and written as if they were stored here.
    var rssLinkHref: String? { get { extras?.rssLinkHref } set { updateExtras { $0.rssLinkHref = newValue } } }
    var body: String? { get { extras?.body } set { updateExtras { $0.body = newValue } } }
    var fullitem: String? { get { extras?.fullitem } set { updateExtras { $0.fullitem = newValue } } }
    var contentSource: Link? { get { extras?.contentSource } set { updateExtras { $0.contentSource = newValue } } }
    var license: String? { get { extras?.license } set { updateExtras { $0.license = newValue } } }
    var rights: String? { get { extras?.rights } set { updateExtras { $0.rights = newValue } } }
    var dcRights: String? { get { extras?.dcRights } set { updateExtras { $0.dcRights = newValue } } }
    var contributors: [Person] { get { extras?.contributors ?? [] } set { updateExtras { $0.contributors = newValue } } }

    private mutating func updateExtras(_ change: (inout Extras) -> Void) {
        var updated = extras ?? Extras()
        extras = nil
        change(&updated)
        extras = updated
    }

    /// Appends a category (its term trimmed) to `categories` and its details to `categoryDetails` unless they are
    /// there already, the term is empty or a list holds `maximum`.
    mutating func appendCategory(_ category: Category, maximum: Int) {
        Syndication.appendCategory(category, to: &categories, details: &categoryDetails, maximum: maximum)
    }

    /// Appends a contributor unless nobody, already there, or the list holds `maximum`.
    mutating func appendContributor(_ person: Person, maximum: Int) {
        guard person != Person(), !contributors.contains(person), contributors.count < maximum else { return }
        updateExtras { $0.contributors.append(person) }
    }

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
