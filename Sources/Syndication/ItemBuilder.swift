import Foundation

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
    private(set) var language: String?
    var atomLinkIsHTML = false
    var guidIsPermaLink = true
    /// The guid's `isPermaLink` says `true` in so many words: the guid is the item's URL, even a relative one.
    var guidSaysPermaLink = false
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
    /// The builder does not own them: the handler clears the slots (``clearTexts()``) when the item is emitted or
    /// abandoned.
    private let texts: UnsafeMutablePointer<String?>
    /// One bit for each slot that may hold a candidate (set whenever one is written), so that ``clearTexts()`` visits
    /// only those: it runs after every item, and going through all 28 slots twice an item was ~230 instructions.
    private var filledSlots: UInt32 = 0
    /// The date candidates (`pubDate`, `published`, …) closed as plain text of up to ``TextSlots/dateTextCapacity``
    /// bytes: their text in `dateTexts` and what it parsed to in `dates`, with no `String` made unless one is asked for
    /// (the raw text of a date that does not parse, the hash of an article without an identifier). One bit a slot; a
    /// slot with its bit set holds no `String` in `texts`. Nearly every item has a date, and its `String` was made,
    /// parsed and dropped (~350 instructions an item; issue 18).
    private var datesAsBytes: UInt32 = 0
    private let dateTexts: UnsafeMutablePointer<UInt8>
    private let dateLengths: UnsafeMutablePointer<UInt8>
    private let dates: UnsafeMutablePointer<Date?>

    /// The slot's storage, marked as possibly filled.
    @inline(__always) private mutating func filling(_ slot: Slot) -> UnsafeMutablePointer<String?> {
        filledSlots |= 1 &<< UInt32(slot.rawValue)
        return texts + slot.rawValue
    }

    /// Drops every candidate this item (or an abandoned one before it) left in the slots.
    mutating func clearTexts() {
        var filled = filledSlots
        while filled != 0 {
            let index = filled.trailingZeroBitCount
            if texts[index] != nil { texts[index] = nil }
            filled &= filled &- 1
        }
        filledSlots = 0
        datesAsBytes = 0
    }

    /// Records a date candidate's closed text, trimmed (what ``TextCapture/value()`` would make a `String` of), as an
    /// assignment of that text to the slot would: empty text empties the slot, and with `keepingFirst` a slot that
    /// holds a candidate keeps it. Text longer than ``TextSlots/dateTextCapacity`` is kept as a `String`.
    mutating func setDate(_ slot: Slot, text: UnsafeBufferPointer<UInt8>, keepingFirst: Bool) {
        let bit: UInt32 = 1 &<< UInt32(slot.rawValue)
        if keepingFirst && (datesAsBytes & bit != 0 || texts[slot.rawValue] != nil) { return }
        guard let source = text.baseAddress, !text.isEmpty else {
            if !keepingFirst {
                datesAsBytes &= ~bit
                filling(slot).pointee = nil
            }
            return
        }
        guard text.count <= TextSlots.dateTextCapacity else {
            datesAsBytes &= ~bit
            filling(slot).pointee = String(decoding: text, as: UTF8.self)
            return
        }
        (dateTexts + slot.rawValue * TextSlots.dateTextCapacity).update(from: source, count: text.count)
        dateLengths[slot.rawValue] = UInt8(text.count)
        dates[slot.rawValue] = FeedDate.parse(bytes: text)
        datesAsBytes |= bit
        if texts[slot.rawValue] != nil { texts[slot.rawValue] = nil }
    }

    /// A date candidate's text, wherever it is kept.
    private func dateText(_ slot: Slot) -> String? {
        guard datesAsBytes & (1 &<< UInt32(slot.rawValue)) != 0 else { return texts[slot.rawValue] }
        return String(decoding: UnsafeBufferPointer(start: dateTexts + slot.rawValue * TextSlots.dateTextCapacity,
                                                    count: Int(dateLengths[slot.rawValue])), as: UTF8.self)
    }

    /// Sets a date candidate as a `String` (an attribute's value, a text that was not plain).
    private mutating func setDateText(_ slot: Slot, _ text: String?) {
        datesAsBytes &= ~(1 &<< UInt32(slot.rawValue))
        filling(slot).pointee = text
    }

    /// The storage of the plain-text candidates of one open item at a time, reused from item to item.
    final class TextSlots {
        let base = UnsafeMutablePointer<String?>.allocate(capacity: Slot.count)
        /// The longest date text kept as bytes; longer ones (never a date this parser reads) are kept as `String`s.
        static let dateTextCapacity = 48
        let dateTexts = UnsafeMutablePointer<UInt8>.allocate(capacity: Slot.count * dateTextCapacity)
        let dateLengths = UnsafeMutablePointer<UInt8>.allocate(capacity: Slot.count)
        let dates = UnsafeMutablePointer<Date?>.allocate(capacity: Slot.count)
        init() {
            base.initialize(repeating: nil, count: Slot.count)
            dateTexts.initialize(repeating: 0, count: Slot.count * Self.dateTextCapacity)
            dateLengths.initialize(repeating: 0, count: Slot.count)
            dates.initialize(repeating: nil, count: Slot.count)
        }
        deinit {
            base.deinitialize(count: Slot.count)
            base.deallocate()
            dateTexts.deallocate()
            dateLengths.deallocate()
            dates.deallocate()
        }
    }

    /// The index of each plain-text candidate in `texts`.
    enum Slot: Int {
        case rdfAbout, title, dcTitle, itunesTitle, mediaTitle, rssLink, atomLink, guid, atomID, dcIdentifier, pubDate, published, issued, dcDate, termsIssued, termsCreated, updated, modified, termsModified, dcDescription, itunesSummary, itunesSubtitle, itunesAuthor, itunesImage, mediaThumbnail, mediaImage, comments, commentsFeed
        static let count = 28
    }

    var rdfAbout: String? { get { texts[Slot.rdfAbout.rawValue] } _modify { yield &filling(.rdfAbout).pointee } }
    var title: String? { get { texts[Slot.title.rawValue] } _modify { yield &filling(.title).pointee } }
    var dcTitle: String? { get { texts[Slot.dcTitle.rawValue] } _modify { yield &filling(.dcTitle).pointee } }
    var itunesTitle: String? { get { texts[Slot.itunesTitle.rawValue] } _modify { yield &filling(.itunesTitle).pointee } }
    var mediaTitle: String? { get { texts[Slot.mediaTitle.rawValue] } _modify { yield &filling(.mediaTitle).pointee } }
    var rssLink: String? { get { texts[Slot.rssLink.rawValue] } _modify { yield &filling(.rssLink).pointee } }
    var atomLink: String? { get { texts[Slot.atomLink.rawValue] } _modify { yield &filling(.atomLink).pointee } }
    var guid: String? { get { texts[Slot.guid.rawValue] } _modify { yield &filling(.guid).pointee } }
    var atomID: String? { get { texts[Slot.atomID.rawValue] } _modify { yield &filling(.atomID).pointee } }
    var dcIdentifier: String? { get { texts[Slot.dcIdentifier.rawValue] } _modify { yield &filling(.dcIdentifier).pointee } }
    var pubDate: String? { get { dateText(.pubDate) } set { setDateText(.pubDate, newValue) } }
    var published: String? { get { dateText(.published) } set { setDateText(.published, newValue) } }
    var issued: String? { get { dateText(.issued) } set { setDateText(.issued, newValue) } }
    var dcDate: String? { get { dateText(.dcDate) } set { setDateText(.dcDate, newValue) } }
    var termsIssued: String? { get { dateText(.termsIssued) } set { setDateText(.termsIssued, newValue) } }
    var termsCreated: String? { get { dateText(.termsCreated) } set { setDateText(.termsCreated, newValue) } }
    var updated: String? { get { dateText(.updated) } set { setDateText(.updated, newValue) } }
    var modified: String? { get { dateText(.modified) } set { setDateText(.modified, newValue) } }
    var termsModified: String? { get { dateText(.termsModified) } set { setDateText(.termsModified, newValue) } }
    var dcDescription: String? { get { texts[Slot.dcDescription.rawValue] } _modify { yield &filling(.dcDescription).pointee } }
    var itunesSummary: String? { get { texts[Slot.itunesSummary.rawValue] } _modify { yield &filling(.itunesSummary).pointee } }
    var itunesSubtitle: String? { get { texts[Slot.itunesSubtitle.rawValue] } _modify { yield &filling(.itunesSubtitle).pointee } }
    var itunesAuthor: String? { get { texts[Slot.itunesAuthor.rawValue] } _modify { yield &filling(.itunesAuthor).pointee } }
    var itunesImage: String? { get { texts[Slot.itunesImage.rawValue] } _modify { yield &filling(.itunesImage).pointee } }
    var mediaThumbnail: String? { get { texts[Slot.mediaThumbnail.rawValue] } _modify { yield &filling(.mediaThumbnail).pointee } }
    var mediaImage: String? { get { texts[Slot.mediaImage.rawValue] } _modify { yield &filling(.mediaImage).pointee } }
    var comments: String? { get { texts[Slot.comments.rawValue] } _modify { yield &filling(.comments).pointee } }
    var commentsFeed: String? { get { texts[Slot.commentsFeed.rawValue] } _modify { yield &filling(.commentsFeed).pointee } }

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

    /// A builder for a new item whose text candidates go into `slots`, which must be empty (a new `TextSlots`, or one a
    /// builder has cleared with ``clearTexts()``).
    init(language: String?, base: String?, slots: TextSlots) {
        self.language = language
        self.base = base
        texts = slots.base
        dateTexts = slots.dateTexts
        dateLengths = slots.dateLengths
        dates = slots.dates
    }

    /// The slots of the publication date's candidates, first wins: `pubDate`, `published`, `issued`, `dc:date`,
    /// `dcterms:issued`, `dcterms:created`.
    static let publishedCandidates = [Slot.pubDate, .published, .issued, .dcDate, .termsIssued, .termsCreated]
    /// The slots of the update date's candidates, first wins: `updated`, `modified`, `dcterms:modified`.
    static let updatedCandidates = [Slot.updated, .modified, .termsModified]

    /// The first of the candidates in `slots` that parses as a date; else no date and the first one's raw text. Read
    /// in place: taking each candidate out made an optional per candidate, most of them empty, and destroyed each
    /// through the runtime's generic witnesses (~500 instructions an item; issue 18). The slots are cleared after.
    /// `mutating` though it changes nothing: called on the handler's builder, a non-mutating call copied the whole
    /// builder (496 bytes) first.
    mutating func firstDate(_ slots: [Slot]) -> (Date?, String?) {
        var firstRaw: String?
        for slot in slots {
            if datesAsBytes & (1 &<< UInt32(slot.rawValue)) != 0 {
                if let date = dates[slot.rawValue] { return (date, nil) }
                if firstRaw == nil { firstRaw = dateText(slot) }
                continue
            }
            guard let raw = texts[slot.rawValue] else { continue }
            if let date = FeedDate.parse(raw) { return (date, nil) }
            if firstRaw == nil { firstRaw = raw }
        }
        return (nil, firstRaw)
    }

    /// Moves the candidate in `slot` out, leaving the slot empty. A plain move: `take()` through the `_modify`
    /// accessors left optional temporaries that were destroyed through the runtime's generic witnesses (issue 18).
    @inline(__always) mutating func take(_ slot: Slot) -> String? {
        let pointer = texts + slot.rawValue
        let value = pointer.move()
        pointer.initialize(to: nil)
        return value
    }

    /// Whether the candidate in `slot` is there, checked in place.
    @inline(__always) func has(_ slot: Slot) -> Bool { texts[slot.rawValue] != nil }

    /// Moves out the first candidate there among `first` … `fourth`, in that order, leaving the others; `nil` when none is.
    /// Each slot is checked in place before anything is moved (see `FeedEventHandler.emit`).
    @inline(__always) mutating func takeFirst(_ first: Slot, _ second: Slot, _ third: Slot? = nil, _ fourth: Slot? = nil) -> String? {
        if has(first) { return take(first) }
        if has(second) { return take(second) }
        if let third, has(third) { return take(third) }
        if let fourth, has(fourth) { return take(fourth) }
        return nil
    }

    /// Makes this builder a new item's, in place, with its text slots (which must be clear) kept: what a new builder
    /// is, field by field. Assigning a new builder made one and copied it whole (~1,200 instructions), then destroyed
    /// the old one whole (~2,000; issue 18); the emitted item's fields have been moved out, so most are empty here.
    mutating func reset(language: String?, base: String?) {
        self.language = language
        self.base = base
        atomLinkIsHTML = false
        guidIsPermaLink = true
        guidSaysPermaLink = false
        if description != nil { description = nil }
        if summary != nil { summary = nil }
        if mediaDescription != nil { mediaDescription = nil }
        if content != nil { content = nil }
        if contentEncoded != nil { contentEncoded = nil }
        if !atomAuthors.isEmpty { atomAuthors = [] }
        // Names only read in `emit` (made into the article's `Person`s there): emptied with their storage kept for the
        // next item, one allocation and one free less an item (issue 18). One by one from the end: there are one or two,
        // and `removeAll(keepingCapacity:)` went through the generic `replaceSubrange` (~210 instructions).
        while dcCreators.popLast() != nil {}
        while rssAuthors.popLast() != nil {}
        if !categories.isEmpty { categories = [] }
        if !enclosures.isEmpty { enclosures = [] }
        commentCount = nil
        if !podcast.isEmpty { podcast = PodcastDetails() }
        if !links.isEmpty { links = [] }
        if !categoryDetails.isEmpty { categoryDetails = [] }
        if extras != nil { extras = nil }
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
    mutating func appendCategory(_ category: consuming Category, maximum: Int) {
        Syndication.appendCategory(consume category, to: &categories, details: &categoryDetails, maximum: maximum)
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
