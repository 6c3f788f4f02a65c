// The public feed model: FeedFormat, Article and its parts (Person, TextContent, Enclosure, podcast details), FeedMetadata.

import Foundation

/// A feed format and version, as detected from the document's root element (XML) or its `version` (JSON Feed).
public struct FeedFormat: Sendable, Hashable, CustomStringConvertible {
    /// The family of formats.
    public enum Family: String, Sendable, Hashable {
        /// RSS 0.90–0.94, 1.0 (RDF) and 2.0.
        case rss
        /// Atom 0.3 and 1.0.
        case atom
        /// JSON Feed 1.0 and 1.1.
        case json
    }

    /// RSS, Atom or JSON Feed.
    public var family: Family
    /// The version: `0.90`, `0.91`, `0.92`, `0.93`, `0.94`, `1.0` or `2.0` for RSS; `0.3` or `1.0` for Atom; `1.0` or
    /// `1.1` for JSON Feed (another number for an unknown `https://jsonfeed.org/version/N`).
    public var version: String

    /// Creates a value.
    public init(family: Family, version: String) {
        self.family = family
        self.version = version
    }

    /// `RSS 2.0`, `Atom 1.0`, `JSON Feed 1.1`, …
    public var description: String {
        switch family {
        case .rss: return "RSS \(version)"
        case .atom: return "Atom \(version)"
        case .json: return "JSON Feed \(version)"
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

    /// The text or markup.
    public var value: String
    /// Whether it is text or HTML.
    public var type: Kind

    /// Creates a value.
    public init(_ value: String, type: Kind) {
        self.value = value
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
    public var isEmpty: Bool { self == PodcastDetails() }
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
    /// The full content: `content:encoded`, then Atom `content`.
    public var content: TextContent?
    /// Categories, in order, without duplicates: RSS `category`, Atom `category` (term), `dc:subject`.
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
    /// The language: inherited `xml:lang`, then the feed's language.
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

    /// Creates an article with an identifier; every other field starts empty.
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
    /// The home page: RSS `link`, Atom `link rel="alternate"`.
    public var link: String?
    /// The feed's own URL: Atom `link rel="self"` (also in RSS as `atom:link`).
    public var selfLink: String?
    /// WebSub hubs: `link rel="hub"`.
    public var hubs: [String] = []
    /// RSS `description`, Atom `subtitle` (0.3: `tagline`), `itunes:summary`.
    public var description: TextContent?
    /// RSS `language`, `dc:language`, the root's `xml:lang`.
    public var language: String?
    /// RSS `lastBuildDate`, then `pubDate`, Atom `updated` (0.3: `modified`), `dc:date`.
    public var updated: Date?
    /// The raw update date when it could not be parsed.
    public var updatedRaw: String?
    /// RSS `image/url`, Atom `logo`, `itunes:image`.
    public var image: String?
    /// Atom `icon`.
    public var icon: String?
    /// `generator` (Atom: its text).
    public var generator: String?
    /// RSS `copyright`, Atom `rights` (0.3: `copyright`), `dc:rights`.
    public var rights: String?
    /// Authors: Atom `author`, RSS `managingEditor`, `dc:creator`, `itunes:author`.
    public var authors: [Person] = []
    /// Categories: RSS `category`, Atom `category`, `itunes:category`.
    public var categories: [String] = []
    /// RSS `ttl`, in minutes.
    public var ttl: Int?
    /// `sy:updatePeriod`: hourly, daily, weekly, monthly or yearly.
    public var updatePeriod: String?
    /// `sy:updateFrequency`: how many times per period.
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

    /// Creates an empty value.
    public init() {}
}
