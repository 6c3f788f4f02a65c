// The model's detail types (issue 16): links with their attributes, categories with schemes, the RSS feed image,
// the generator, and the syndication module's update period.

import Foundation

/// A link element with every attribute it had: an Atom `link`, or out-of-line Atom content.
public struct Link: Sendable, Hashable {
    /// The absolute URL (resolved against `xml:base` and the document URL).
    public var href: String
    /// The relation: `alternate` (also for a link without `rel`), `self`, `related`, `enclosure`, `via`, `replies`,
    /// `license`, `edit`, … or an IRI; `nil` only for out-of-line content, which is not a link element.
    public var rel: String?
    /// The media type of what it points to, for example `text/html`.
    public var type: String?
    /// A human-readable title.
    public var title: String?
    /// The language of what it points to, as a BCP 47 tag.
    public var hreflang: String?
    /// The length in bytes, when the feed gives a number.
    public var length: Int64?

    /// Creates a value.
    public init(href: String, rel: String? = nil, type: String? = nil, title: String? = nil, hreflang: String? = nil,
                length: Int64? = nil) {
        self.href = href
        self.rel = rel
        self.type = type
        self.title = title
        self.hreflang = hreflang
        self.length = length
    }
}

/// A category with where it comes from: its term, the scheme (vocabulary) it belongs to, a label, and the
/// category it is nested in.
public struct Category: Sendable, Hashable {
    /// The category itself (Atom `term`, the text of RSS `category`, an iTunes category's `text`, a keyword).
    public var term: String
    /// The vocabulary it belongs to: RSS `domain`, Atom `scheme`, `media:category`'s `scheme` (the Media RSS default
    /// `http://search.yahoo.com/mrss/category_schema` when it has none), `http://www.itunes.com/` for iTunes categories.
    public var scheme: String?
    /// A label for people to read (Atom and Media RSS `label`).
    public var label: String?
    /// The enclosing category's term, for a nested `itunes:category`.
    public var parent: String?

    /// Creates a value.
    public init(term: String, scheme: String? = nil, label: String? = nil, parent: String? = nil) {
        self.term = term
        self.scheme = scheme
        self.label = label
        self.parent = parent
    }

    /// The scheme of iTunes categories and keywords.
    public static let iTunesScheme = "http://www.itunes.com/"
    /// Media RSS's default scheme for `media:category`.
    public static let mediaRSSScheme = "http://search.yahoo.com/mrss/category_schema"
}

/// An RSS feed image: the channel's `image` element with all its children.
public struct FeedImage: Sendable, Hashable {
    /// The picture's URL (`url`).
    public var url: String?
    /// Its alternative text (`title`).
    public var title: String?
    /// Where the picture links to (`link`).
    public var link: String?
    /// Its width in pixels (`width`).
    public var width: Int?
    /// Its height in pixels (`height`).
    public var height: Int?
    /// Text for a tooltip (`description`, Netscape RSS 0.91).
    public var description: String?

    /// Creates an empty value.
    public init() {}

    /// Whether the element said nothing.
    public var isEmpty: Bool { self == FeedImage() }
}

/// The program that wrote the feed.
public struct Generator: Sendable, Hashable {
    /// Its name: the element's text.
    public var name: String?
    /// Its home page: Atom `uri` (0.3: `url`), `admin:generatorAgent`'s `rdf:resource`.
    public var uri: String?
    /// Its version: Atom `version`.
    public var version: String?

    /// Creates a value.
    public init(name: String? = nil, uri: String? = nil, version: String? = nil) {
        self.name = name
        self.uri = uri
        self.version = version
    }

    /// Whether nothing is known.
    public var isEmpty: Bool { self == Generator() }
}

/// The period of the syndication module's update schedule (`sy:updatePeriod`).
public enum UpdatePeriod: String, Sendable, Hashable, CaseIterable {
    /// Every hour.
    case hourly
    /// Every day (the module's default).
    case daily
    /// Every week.
    case weekly
    /// Every month.
    case monthly
    /// Every year.
    case yearly

    /// The period read as the module writes it, ignoring case and surrounding white space; `nil` for anything else.
    public init?(text: String) {
        self.init(rawValue: text.trimmingXMLWhitespace().lowercased())
    }

    /// The period's length in seconds (a month is 30 days, a year 365).
    public var seconds: TimeInterval {
        switch self {
        case .hourly: return 3_600
        case .daily: return 86_400
        case .weekly: return 7 * 86_400
        case .monthly: return 30 * 86_400
        case .yearly: return 365 * 86_400
        }
    }
}
