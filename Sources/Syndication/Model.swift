// The public feed model: FeedFormat, Article and its parts (Person, TextContent, Enclosure, podcast details), FeedMetadata.

import Foundation

/// A feed format and version, as detected from the document's root element (XML) or its `version` (JSON Feed).
public struct FeedFormat: Sendable, Hashable, CustomStringConvertible {
    /// The family of formats.
    public enum Family: String, Sendable, Hashable {
        /// RSS 0.90–0.94, 1.0 (RDF) and 2.0.
        case rss
        /// Atom 0.1–0.3 (and the drafts before 1.0) and 1.0.
        case atom
        /// JSON Feed 1.0 and 1.1.
        case json
        /// Microsoft's Channel Definition Format (1997), RSS's predecessor: a `CHANNEL` root with `ITEM`s.
        case cdf
    }

    /// RSS, Atom or JSON Feed.
    public var family: Family
    /// The version: `0.90`, `0.91`, `0.92`, `0.93`, `0.94`, `1.0` or `2.0` for RSS; `0.1`, `0.2`, `0.3` or `1.0` for
    /// Atom; `1.0` or `1.1` for JSON Feed (another number for an unknown `https://jsonfeed.org/version/N`); empty for
    /// CDF, which has no versions.
    public var version: String
    /// How an RSS 0.91 document was written: ``Dialect/netscape`` when it names Netscape's DTD, ``Dialect/userland``
    /// otherwise; `nil` for every other version and format.
    public var dialect: Dialect?

    /// The two RSS 0.91s.
    public enum Dialect: String, Sendable, Hashable {
        /// Netscape's RSS 0.91, identified by its `DOCTYPE` (`-//Netscape Communications//DTD RSS 0.91//EN`).
        case netscape
        /// UserLand's RSS 0.91, without Netscape's DTD.
        case userland
    }

    /// Creates a value.
    public init(family: Family, version: String, dialect: Dialect? = nil) {
        self.family = family
        self.version = version
        self.dialect = dialect
    }

    /// `RSS 2.0`, `Atom 1.0`, `JSON Feed 1.1`, `CDF`, …
    public var description: String {
        switch family {
        case .rss: return "RSS \(version)"
        case .atom: return "Atom \(version)"
        case .json: return "JSON Feed \(version)"
        case .cdf: return "CDF"
        }
    }
}

/// A person: an author or contributor.
public struct Person: Sendable, Hashable {
    /// The name, if given.
    public var name: String?
    /// The e-mail address, if given.
    public var email: String?
    /// A home page or profile URL, if given (JSON Feed: the author's `url`).
    public var uri: String?

    // JSON Feed (issue 15).
    /// An image of the person (JSON Feed `avatar`). Not stored by the store yet.
    public var avatar: String?

    /// Creates a value.
    public init(name: String? = nil, email: String? = nil, uri: String? = nil, avatar: String? = nil) {
        self.name = name
        self.email = email
        self.uri = uri
        self.avatar = avatar
    }
}

/// A piece of text with its type.
public struct TextContent: Sendable, Hashable {
    /// How to read ``value``.
    public enum Kind: String, Sendable, Hashable {
        /// Plain text: show as is.
        case text
        /// HTML markup (Atom `html` and `xhtml`, RSS descriptions and `content:encoded`).
        case html
    }

    /// The text or markup as UTF-8, as the feed gave it (always valid UTF-8).
    ///
    /// Kept as bytes, not a `String`: summaries and contents are most of an article's text, and the parser, the article
    /// line and the stores all work on bytes, so making a `String` (and validating it) is left to whoever reads
    /// ``value`` (issue 18: ~4% of `feedingest parse`). Two values are equal when their bytes are.
    public private(set) var utf8: [UInt8]
    /// Whether it is text or HTML.
    public var type: Kind

    /// The text or markup, made from ``utf8`` on each read.
    public var value: String {
        get { String(decoding: utf8, as: UTF8.self) }
        set { utf8 = Array(newValue.utf8) }
    }

    /// Creates a value.
    public init(_ value: String, type: Kind) {
        utf8 = Array(value.utf8)
        self.type = type
    }

    /// Creates a value from bytes the caller guarantees are valid UTF-8 (the XML parser's text).
    init(validUTF8 bytes: [UInt8], type: Kind) {
        utf8 = bytes
        self.type = type
    }
}

/// A file attached to an article: a podcast episode, an image, a video.
public struct Enclosure: Sendable, Hashable {
    /// The file's absolute URL.
    public var url: String
    /// The media type, for example `audio/mpeg`.
    public var type: String?
    /// The length in bytes, when the feed gives a number.
    public var length: Int64?

    // JSON Feed attachments (issue 15). Not stored by the store yet.
    /// The attachment's name (JSON Feed `title`), for example one of several formats of one episode.
    public var title: String?
    /// How long it plays, in seconds (JSON Feed `duration_in_seconds`).
    public var durationSeconds: Int?

    /// Creates a value.
    public init(url: String, type: String? = nil, length: Int64? = nil, title: String? = nil, durationSeconds: Int? = nil) {
        self.url = url
        self.type = type
        self.length = length
        self.title = title
        self.durationSeconds = durationSeconds
    }
}

/// A transcript of a podcast episode (`podcast:transcript`).
public struct Transcript: Sendable, Hashable {
    /// The transcript's URL.
    public var url: String
    /// Its media type, for example `text/vtt`.
    public var type: String?
    /// Its language.
    public var language: String?

    /// Creates a value.
    public init(url: String, type: String? = nil, language: String? = nil) {
        self.url = url
        self.type = type
        self.language = language
    }
}

/// Podcast details of an article, from the iTunes and Podcasting 2.0 namespaces.
public struct PodcastDetails: Sendable, Hashable {
    /// `itunes:duration` in seconds, when it parses (`1:02:03`, `62:03`, `3723`).
    public var durationSeconds: Int?
    /// `itunes:episode`.
    public var episode: Int?
    /// `itunes:season`.
    public var season: Int?
    /// `itunes:explicit` (`true`/`yes`/`explicit` are true; `false`/`no`/`clean` false).
    public var explicit: Bool?
    /// `itunes:keywords`, split at commas.
    public var keywords: [String] = []
    /// `podcast:guid`.
    public var guid: String?
    /// `podcast:transcript` elements.
    public var transcripts: [Transcript] = []
    /// `podcast:chapters` URL.
    public var chaptersURL: String?

    /// Creates an empty value.
    public init() {}

    /// Whether nothing is known.
    ///
    /// Field by field: comparing with a new empty value made and destroyed one for every article (issue 18).
    public var isEmpty: Bool {
        durationSeconds == nil && episode == nil && season == nil && explicit == nil && keywords.isEmpty && guid == nil
            && transcripts.isEmpty && chaptersURL == nil
    }
}

/// One article: an RSS item or an Atom entry, complete when its element closes.
///
/// Field names match the JSON contract (`Schemas/article.schema.json`). Where several elements give the
/// same field, the precedence is documented on each property.
public struct Article: Sendable, Hashable {
    /// Where ``id`` came from.
    public enum IDSource: String, Sendable, Hashable {
        /// RSS `guid`.
        case guid
        /// Atom `id`.
        case atomID = "atom:id"
        /// Dublin Core `dc:identifier`.
        case dcIdentifier = "dc:identifier"
        /// The article link, when there was no identifier.
        case link
        /// RSS 1.0 `rdf:about`, when there was neither an identifier nor a link.
        case rdfAbout = "rdf:about"
        /// A hash of title, dates and content, when nothing else identifies the article.
        case hash
    }

    /// A stable key: guid or Atom id, else the link, else a hash of title, date and content.
    public var id: String
    /// Where ``id`` came from.
    public var idSource: IDSource
    /// The title; inner markup is kept as text (`Hello <b>World</b>`). From `title`, then `dc:title`,
    /// then `itunes:title`, then `media:title`.
    public var title: String?
    /// The article's web page: Atom `link` (rel `alternate` or none), RSS `link`, then a permalink `guid`.
    public var link: String?
    /// First publication: RSS `pubDate`, Atom `published` (0.3: `issued`), `dc:date`, `dcterms:issued`/`created`.
    public var published: Date?
    /// The raw text of the publication date when it could not be parsed; `nil` when it parsed or was absent.
    public var publishedRaw: String?
    /// Last update: Atom `updated` (0.3: `modified`), `dcterms:modified`.
    public var updated: Date?
    /// The raw text of the update date when it could not be parsed.
    public var updatedRaw: String?
    /// Authors: Atom `author`, then `dc:creator`, then RSS `author` (`email (Name)`), then `itunes:author`.
    public var authors: [Person] = []
    /// A summary: RSS `description`, Atom `summary`, `dc:description`, `itunes:summary`, `itunes:subtitle`,
    /// `media:description`.
    public var summary: TextContent?
    /// The full content: `content:encoded`, then Atom `content`, then an XHTML `body` (or `xhtml:body`), then `fullitem`.
    public var content: TextContent?
    /// Categories, in order, without duplicates: RSS `category`, Atom `category` (term, else label), `dc:subject`,
    /// `itunes:category`, `media:category`, `media:keywords`, `itunes:keywords`. ``categoryDetails`` has their schemes.
    public var categories: [String] = []
    /// Attached files: RSS `enclosure`, Atom `link rel="enclosure"`, `media:content` with a URL.
    public var enclosures: [Enclosure] = []
    /// An image: `itunes:image`, `media:thumbnail`, an image `media:content`, then the first `<img>` of the content.
    public var image: String?
    /// The comments page: RSS `comments`, Atom `link rel="replies"` of type HTML.
    public var comments: String?
    /// The comments feed: `wfw:commentRss`, Atom `link rel="replies"` of a feed type.
    public var commentsFeed: String?
    /// The number of comments: `slash:comments`, `thr:total`.
    public var commentCount: Int?
    /// The language as a BCP 47 tag (`en_US` is `en-US`): inherited `xml:lang`, then the feed's language.
    public var language: String?
    /// Podcast details, when the item has any.
    public var podcast: PodcastDetails?
    /// The feed's URL or path, as the caller gave it.
    public var feed: String

    // JSON Feed (issue 15): fields only JSON Feed gives. Not stored by the store yet.
    /// The page the article is about, when it links elsewhere (JSON Feed `external_url`; a link blog's target).
    public var externalURL: String?
    /// The plain-text content when the feed gives HTML content too (JSON Feed `content_text` beside `content_html`);
    /// with only `content_text`, that text is ``content``, of type text.
    public var contentText: String?
    /// An image to show at the top of the article (JSON Feed `banner_image`); ``image`` falls back to it.
    public var bannerImage: String?

    // MARK: Links, category details, rights and contributors (issue 16)

    /// Every Atom `link` of the entry (also `atom:link` inside an RSS item), in order, with all its attributes: rel
    /// (`alternate` when absent), type, title, hreflang and length. A `link` that gives its URL as text instead of
    /// `href` counts too. RSS `link` elements are not repeated here: they are ``link``.
    public var links: [Link] = []
    /// Every category with its scheme and label, in order, without duplicates: RSS `category` (`domain` is the
    /// scheme), Atom `category` (term, scheme, label), `dc:subject`, `itunes:category` (with its parent when
    /// nested), `media:category` (scheme and label), `media:keywords` and `itunes:keywords` (one per keyword).
    /// ``categories`` lists the same categories' terms.
    public var categoryDetails: [Category] = []
    /// Out-of-line content: an Atom `content` with a `src` attribute, its URL and media type (``content`` is then empty).
    public var contentSource: Link?
    /// The licence's URL: Atom `link rel="license"`, `creativeCommons:license`, `cc:license`.
    public var license: String?
    /// Rights: Atom `rights` (0.3: `copyright`), `dc:rights`.
    public var rights: String?
    /// Contributors: Atom `contributor`, `dc:contributor`.
    public var contributors: [Person] = []

    /// Creates an article with an identifier; every other field starts empty.
    ///
    /// Always inlined: called, it made the article in a temporary that was then copied (568 bytes), and the fields set
    /// after it had their empty values destroyed through the runtime's generic value witnesses, since the caller could
    /// not see they were empty (issue 18: ~750 instructions an article).
    @inline(__always)
    public init(id: String, idSource: IDSource, feed: String) {
        self.id = id
        self.idSource = idSource
        self.feed = feed
    }
}

/// What a feed says about itself; filled in progressively as the document is read.
public struct FeedMetadata: Sendable, Hashable {
    /// The detected format, once the root element is known.
    public var format: FeedFormat?
    /// The feed's title.
    public var title: String?
    /// The home page: RSS `link`, Atom `link rel="alternate"`, CDF `CHANNEL HREF`.
    public var link: String?
    /// The feed's own URL: Atom `link rel="self"` (also in RSS as `atom:link`).
    public var selfLink: String?
    /// WebSub hubs: `link rel="hub"`.
    public var hubs: [String] = []
    /// What the feed is about (feedparser's subtitle): RSS `description`, Atom `subtitle` (0.3: `tagline`),
    /// `dc:description`, `itunes:subtitle`, `itunes:summary`, CDF `ABSTRACT`.
    public var description: TextContent?
    /// The language as a BCP 47 tag (`en_US` is `en-US`): RSS `language`, `dc:language`, the root's `xml:lang`.
    public var language: String?
    /// RSS `lastBuildDate`, Atom `updated` (0.3: `modified`), `dcterms:modified`, then `pubDate`, `dc:date`, CDF `LASTMOD`.
    public var updated: Date?
    /// The raw update date when it could not be parsed.
    public var updatedRaw: String?
    /// The feed image's URL: RSS `image/url`, Atom `logo`, `itunes:image`.
    public var image: String?
    /// Atom `icon`.
    public var icon: String?
    /// `generator` (Atom: its text).
    public var generator: String?
    /// RSS `copyright`, Atom `rights` (0.3: `copyright`), `dc:rights`, `dcterms:rights`.
    public var rights: String?
    /// Authors: Atom `author`, RSS `managingEditor`, `dc:creator`/`dc:author`, `itunes:author`, each parsed into
    /// name and email.
    public var authors: [Person] = []
    /// Categories: RSS `category`, Atom `category`, `dc:subject`, `itunes:category`, `media:category`,
    /// `itunes:keywords`, `media:keywords`. ``categoryDetails`` has their schemes and labels.
    public var categories: [String] = []
    /// RSS `ttl`: how many minutes the feed may be cached before it is fetched again.
    public var ttl: Int?
    /// `sy:updatePeriod`: the period ``updateFrequency`` counts updates in.
    public var updatePeriod: UpdatePeriod?
    /// `sy:updateFrequency`: how many times per ``updatePeriod`` the feed is updated (at least 1).
    public var updateFrequency: Int?
    /// RSS `skipHours` (0–23).
    public var skipHours: [Int] = []
    /// RSS `skipDays` (Monday…Sunday).
    public var skipDays: [String] = []

    // JSON Feed (issue 15): feed fields only JSON Feed gives.
    /// Whether the feed says it will never update again (JSON Feed `expired`).
    public var expired: Bool?
    /// The next page of a paginated feed (JSON Feed `next_url`): recorded, never followed.
    public var nextURL: String?

    // MARK: Identity, dates, people, image, generator, links and update hints (issue 16)

    /// The feed's identifier: Atom `id`, kept as written.
    public var id: String? {
        get { vocabulary.values.id }
        set { updateVocabulary { $0.id = newValue } }
    }
    /// First publication: RSS `pubDate`, `dcterms:issued`, `dcterms:created`.
    public var published: Date? {
        get { vocabulary.values.published }
        set { updateVocabulary { $0.published = newValue } }
    }
    /// The raw publication date when it could not be parsed.
    public var publishedRaw: String? {
        get { vocabulary.values.publishedRaw }
        set { updateVocabulary { $0.publishedRaw = newValue } }
    }
    /// The RSS `image` element (RSS 1.0: the channel's `image`) with its title, link, size and description.
    public var imageDetails: FeedImage? {
        get { vocabulary.values.imageDetails }
        set { updateVocabulary { $0.imageDetails = newValue } }
    }
    /// The publisher or technical contact: RSS `webMaster`, `dc:publisher`, `itunes:owner` (name and email).
    public var publisher: Person? {
        get { vocabulary.values.publisher }
        set { updateVocabulary { $0.publisher = newValue } }
    }
    /// Contributors: Atom `contributor`, `dc:contributor`.
    public var contributors: [Person] {
        get { vocabulary.values.contributors }
        set { updateVocabulary { $0.contributors = newValue } }
    }
    /// The generator with its URL and version: Atom `generator` (`uri`; 0.3: `url`; `version`), RSS `generator`,
    /// `admin:generatorAgent`.
    public var generatorDetails: Generator? {
        get { vocabulary.values.generatorDetails }
        set { updateVocabulary { $0.generatorDetails = newValue } }
    }
    /// The licence's URL: Atom `link rel="license"`, `creativeCommons:license`, `cc:license`.
    public var license: String? {
        get { vocabulary.values.license }
        set { updateVocabulary { $0.license = newValue } }
    }
    /// Every Atom `link` of the feed (also `atom:link` in an RSS channel), in order, with all its attributes.
    public var links: [Link] {
        get { vocabulary.values.links }
        set { updateVocabulary { $0.links = newValue } }
    }
    /// The feed's categories with schemes, labels and parents, in order, without duplicates (see ``categories``).
    public var categoryDetails: [Category] {
        get { vocabulary.values.categoryDetails }
        set { updateVocabulary { $0.categoryDetails = newValue } }
    }
    /// `sy:updateBase`: the moment the ``updatePeriod`` schedule counts from.
    public var updateBase: Date? {
        get { vocabulary.values.updateBase }
        set { updateVocabulary { $0.updateBase = newValue } }
    }

    /// The fields above, stored out of line and shared between copies until one of them changes: the metadata is
    /// copied for every article delivered, and one reference costs less to copy than a dozen.
    private var vocabulary = VocabularyStorage.empty

    private mutating func updateVocabulary(_ change: (inout VocabularyStorage.Values) -> Void) {
        if !isKnownUniquelyReferenced(&vocabulary) { vocabulary = VocabularyStorage(vocabulary.values) }
        change(&vocabulary.values)
    }

    /// How long the feed asks to be left alone between fetches, from its hints: the longer of RSS ``ttl`` and
    /// ``updatePeriod`` divided by ``updateFrequency``; `nil` when it gives neither.
    public var refreshInterval: TimeInterval? {
        let fromTTL = ttl.flatMap { $0 > 0 ? TimeInterval($0) * 60 : nil }
        let fromSyndication = updatePeriod.map { $0.seconds / TimeInterval(max(1, updateFrequency ?? 1)) }
        switch (fromTTL, fromSyndication) {
        case let (ttl?, syndication?): return max(ttl, syndication)
        case let (ttl?, nil): return ttl
        case let (nil, syndication?): return syndication
        case (nil, nil): return nil
        }
    }

    /// Creates an empty value.
    public init() {}
}

/// Copy-on-write storage of ``FeedMetadata``'s issue-16 fields.
///
/// `@unchecked Sendable`: `values` is written only by `FeedMetadata.updateVocabulary`, after
/// `isKnownUniquelyReferenced` made sure no other value (and so no other thread) can reach this instance; an instance
/// that is shared is only ever read.
final class VocabularyStorage: Hashable, @unchecked Sendable {
    struct Values: Hashable, Sendable {
        var id: String?
        var published: Date?
        var publishedRaw: String?
        var imageDetails: FeedImage?
        var publisher: Person?
        var contributors: [Person] = []
        var generatorDetails: Generator?
        var license: String?
        var links: [Link] = []
        var categoryDetails: [Category] = []
        var updateBase: Date?
    }

    var values: Values

    init(_ values: Values) { self.values = values }

    /// The storage of metadata that has none of these fields; never written (it is never uniquely referenced).
    static let empty = VocabularyStorage(Values())

    static func == (lhs: VocabularyStorage, rhs: VocabularyStorage) -> Bool { lhs === rhs || lhs.values == rhs.values }

    func hash(into hasher: inout Hasher) { hasher.combine(values) }
}
