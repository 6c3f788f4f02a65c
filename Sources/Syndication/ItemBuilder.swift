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
    var atomLinkIsHTML = false
    var guidIsPermaLink = true
    var description: TextContent?, summary: TextContent?, mediaDescription: TextContent?, content: TextContent?
    var contentEncoded: TextContent?
    var atomAuthors: [Person] = [], dcCreators: [String] = [], rssAuthors: [String] = []
    var categories: [String] = []
    var enclosures: [Enclosure] = []
    var commentCount: Int?
    var podcast = PodcastDetails()
    var base: String?
    // Issue 16: every Atom link and categories with schemes; the rarer fields in `extras`.
    var links: [Link] = []
    var categoryDetails: [Category] = []
    /// The plain-text candidates (`title`, `guid`, `pubDate`, … below), one slot each, in storage the handler owns and
    /// reuses item after item (``TextSlots``). As stored properties they were ~30 reference-counted fields that every
    /// builder's making, copying and destruction walked one by one, nil or not (~6,000 instructions an item; issue 18).
    /// The builder does not own them: the handler clears the slots when the item is emitted or abandoned.
    private let texts: UnsafeMutablePointer<String?>

    /// The storage of the plain-text candidates of one open item at a time, reused from item to item.
    final class TextSlots {
        let base = UnsafeMutablePointer<String?>.allocate(capacity: Slot.count)
        init() { base.initialize(repeating: nil, count: Slot.count) }
        /// Drops every candidate the last item left.
        func clear() {
            for index in 0..<Slot.count where base[index] != nil { base[index] = nil }
        }
        deinit {
            base.deinitialize(count: Slot.count)
            base.deallocate()
        }
    }

    /// The index of each plain-text candidate in `texts`.
    fileprivate enum Slot {
        static let rdfAbout = 0
        static let title = 1
        static let dcTitle = 2
        static let itunesTitle = 3
        static let mediaTitle = 4
        static let rssLink = 5
        static let atomLink = 6
        static let guid = 7
        static let atomID = 8
        static let dcIdentifier = 9
        static let pubDate = 10
        static let published = 11
        static let issued = 12
        static let dcDate = 13
        static let termsIssued = 14
        static let termsCreated = 15
        static let updated = 16
        static let modified = 17
        static let termsModified = 18
        static let dcDescription = 19
        static let itunesSummary = 20
        static let itunesSubtitle = 21
        static let itunesAuthor = 22
        static let itunesImage = 23
        static let mediaThumbnail = 24
        static let mediaImage = 25
        static let comments = 26
        static let commentsFeed = 27
        static let count = 28
    }

    var rdfAbout: String? { get { texts[Slot.rdfAbout] } _modify { yield &texts[Slot.rdfAbout] } }
    var title: String? { get { texts[Slot.title] } _modify { yield &texts[Slot.title] } }
    var dcTitle: String? { get { texts[Slot.dcTitle] } _modify { yield &texts[Slot.dcTitle] } }
    var itunesTitle: String? { get { texts[Slot.itunesTitle] } _modify { yield &texts[Slot.itunesTitle] } }
    var mediaTitle: String? { get { texts[Slot.mediaTitle] } _modify { yield &texts[Slot.mediaTitle] } }
    var rssLink: String? { get { texts[Slot.rssLink] } _modify { yield &texts[Slot.rssLink] } }
    var atomLink: String? { get { texts[Slot.atomLink] } _modify { yield &texts[Slot.atomLink] } }
    var guid: String? { get { texts[Slot.guid] } _modify { yield &texts[Slot.guid] } }
    var atomID: String? { get { texts[Slot.atomID] } _modify { yield &texts[Slot.atomID] } }
    var dcIdentifier: String? { get { texts[Slot.dcIdentifier] } _modify { yield &texts[Slot.dcIdentifier] } }
    var pubDate: String? { get { texts[Slot.pubDate] } _modify { yield &texts[Slot.pubDate] } }
    var published: String? { get { texts[Slot.published] } _modify { yield &texts[Slot.published] } }
    var issued: String? { get { texts[Slot.issued] } _modify { yield &texts[Slot.issued] } }
    var dcDate: String? { get { texts[Slot.dcDate] } _modify { yield &texts[Slot.dcDate] } }
    var termsIssued: String? { get { texts[Slot.termsIssued] } _modify { yield &texts[Slot.termsIssued] } }
    var termsCreated: String? { get { texts[Slot.termsCreated] } _modify { yield &texts[Slot.termsCreated] } }
    var updated: String? { get { texts[Slot.updated] } _modify { yield &texts[Slot.updated] } }
    var modified: String? { get { texts[Slot.modified] } _modify { yield &texts[Slot.modified] } }
    var termsModified: String? { get { texts[Slot.termsModified] } _modify { yield &texts[Slot.termsModified] } }
    var dcDescription: String? { get { texts[Slot.dcDescription] } _modify { yield &texts[Slot.dcDescription] } }
    var itunesSummary: String? { get { texts[Slot.itunesSummary] } _modify { yield &texts[Slot.itunesSummary] } }
    var itunesSubtitle: String? { get { texts[Slot.itunesSubtitle] } _modify { yield &texts[Slot.itunesSubtitle] } }
    var itunesAuthor: String? { get { texts[Slot.itunesAuthor] } _modify { yield &texts[Slot.itunesAuthor] } }
    var itunesImage: String? { get { texts[Slot.itunesImage] } _modify { yield &texts[Slot.itunesImage] } }
    var mediaThumbnail: String? { get { texts[Slot.mediaThumbnail] } _modify { yield &texts[Slot.mediaThumbnail] } }
    var mediaImage: String? { get { texts[Slot.mediaImage] } _modify { yield &texts[Slot.mediaImage] } }
    var comments: String? { get { texts[Slot.comments] } _modify { yield &texts[Slot.comments] } }
    var commentsFeed: String? { get { texts[Slot.commentsFeed] } _modify { yield &texts[Slot.commentsFeed] } }

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

    /// A builder for a new item whose text candidates go into `slots`, which must be clear (``TextSlots/clear()``).
    init(language: String?, base: String?, slots: TextSlots) {
        self.language = language
        self.base = base
        texts = slots.base
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
                        content: (contentEncoded ?? content ?? description ?? summary)?.value)
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
