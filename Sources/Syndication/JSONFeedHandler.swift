// JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1): the state machine over StreamingJSON's events that turns
// a feed object into FeedMetadata and each item into an Article the moment the item's object closes.

import Foundation
import StreamingJSON

/// What the JSON Feed reader mended or left out instead of failing; part of ``FeedSummary``.
public struct JSONFeedRepairs: Sendable, Hashable {
    /// A `version` that is not one of the two official URLs (`https://jsonfeed.org/version/1`, `…/1.1`) but still names
    /// a JSON Feed version: another `jsonfeed.org/version/N` URL, `http://` instead of `https://`, or a bare `1.1`.
    public var nonstandardVersion = 0
    /// Keys given twice in one object: the first value is kept (a second `items` array's articles are delivered too).
    public var duplicateKeys = 0
    /// Fields whose value has the wrong JSON type (a string where a list belongs, a list where a string does, an item
    /// that is not an object): the field is left out, never the article or the feed.
    public var wronglyTypedFields = 0
    /// Strings with bytes that are not UTF-8, decoded with U+FFFD in their place.
    public var invalidUTF8 = 0

    /// Creates an empty record.
    public init() {}

    /// Whether nothing was repaired.
    public var isEmpty: Bool { self == JSONFeedRepairs() }

    /// The kinds that occurred, with counts, in a stable order: `["duplicateKeys": 2, ...]`.
    public var counts: [(kind: String, count: Int)] {
        [("nonstandardVersion", nonstandardVersion), ("duplicateKeys", duplicateKeys), ("wronglyTypedFields", wronglyTypedFields),
         ("invalidUTF8", invalidUTF8)].filter { $0.1 > 0 }
    }
}

/// Reads a JSON Feed from ``JSONPushParser`` events: feed fields into ``FeedMetadata``, each item into an ``Article``
/// delivered when the item's object closes, with the metadata known at that moment.
///
/// Mapping (JSON Feed 1.1, which also reads 1.0): `id` → `id` (a number as written; `idSource` `guid`; without one the
/// `url`, else a hash, as for XML items), `url` → `link`, `external_url` → `externalURL`, `title`, `content_html` →
/// `content` (html) with `content_text` → `contentText` beside it (alone, it is the `content`, of type text), `summary`
/// (text), `image` → `image` (falling back to `banner_image`, an image attachment, the content's first `<img>`),
/// `banner_image` → `bannerImage`, `date_published`/`date_modified` → `published`/`updated` (RFC 3339; raw text kept
/// when it does not parse), `authors` (1.1), else `author` (1.0), else the feed's authors → `authors` (`url` → `uri`,
/// `avatar`), `tags` → `categories`, `language` (else the feed's), `attachments` → `enclosures` (`url`, `mime_type`,
/// `size_in_bytes`, `title`, `duration_in_seconds`). Feed: `title`, `home_page_url` → `link`, `feed_url` → `selfLink`,
/// `description` (text), `icon` → `image`, `favicon` → `icon`, `authors`/`author`, `language`, `expired`, `hubs` (their
/// URLs), `next_url` → `nextURL` (recorded, not followed). Keys starting with `_` (extensions) and unknown keys are
/// skipped with everything inside them. URLs resolve against the document's URL.
///
/// State is `@exclusivity(unchecked)`, as in ``FeedEventHandler``: confined to one thread, and no method hands out
/// `inout` access to it across a call back into itself.
final class JSONFeedHandler: JSONEventHandler {
    unowned(unsafe) var json: JSONPushParser!
    let source: String
    let baseURL: String?
    let onArticle: (Article, FeedMetadata) -> Void
    let resolvesLinksInHTML: Bool
    let maximumListLength: Int

    @exclusivity(unchecked) var metadata = FeedMetadata()
    @exclusivity(unchecked) var articleCount = 0
    /// A failure the handler found (not a feed); the parse then stops with it.
    @exclusivity(unchecked) var failure: FeedError?
    @exclusivity(unchecked) var repairs = JSONFeedRepairs()

    @exclusivity(unchecked) private var resolver = URLResolver()
    /// The open containers the feed's shape gives a meaning to, innermost last.
    @exclusivity(unchecked) private var frames: [Frame] = []
    /// The key whose value comes next, in the innermost object.
    @exclusivity(unchecked) private var key = JSONFeedKey.none
    /// Inside a value being skipped: how many of its containers are open.
    @exclusivity(unchecked) private var skipDepth = 0
    @exclusivity(unchecked) private var item: JSONItemBuilder?
    @exclusivity(unchecked) private var person = Person()
    @exclusivity(unchecked) private var attachment = JSONAttachmentBuilder()
    /// Whether the feed's `authors` list was read (it wins over the 1.0 `author`, in either order).
    @exclusivity(unchecked) private var feedHasAuthorsList = false

    init(source: String, baseURL: String?, configuration: FeedParserConfiguration, onArticle: @escaping (Article, FeedMetadata) -> Void) {
        self.source = source
        self.baseURL = baseURL
        self.onArticle = onArticle
        resolvesLinksInHTML = configuration.resolvesLinksInHTML
        maximumListLength = max(1, configuration.maximumListLength)
    }

    /// A container whose meaning the handler knows, with the keys already seen in it (objects only).
    fileprivate struct Frame {
        enum Kind {
            case feed, items, item, hubs, hub, tags, attachments, attachment
            /// An `authors` list, of the feed's or the item's.
            case people(forItem: Bool)
            /// A person object: the 1.0 `author` (`inList` false) or one of `authors`.
            case person(forItem: Bool, inList: Bool)
        }
        let kind: Kind
        var seen: UInt64 = 0
    }

    // MARK: Events

    func startObject() {
        if skipDepth > 0 { skipDepth += 1; return }
        guard let frame = frames.last else {
            frames.append(Frame(kind: .feed))
            return
        }
        let key = takeKey()
        switch (frame.kind, key) {
        case (.items, _):
            item = JSONItemBuilder()
            frames.append(Frame(kind: .item))
        case (.feed, .author):
            person = Person()
            frames.append(Frame(kind: .person(forItem: false, inList: false)))
        case (.item, .author):
            person = Person()
            frames.append(Frame(kind: .person(forItem: true, inList: false)))
        case (.people(let forItem), _):
            person = Person()
            frames.append(Frame(kind: .person(forItem: forItem, inList: true)))
        case (.attachments, _):
            attachment = JSONAttachmentBuilder()
            frames.append(Frame(kind: .attachment))
        case (.hubs, _):
            frames.append(Frame(kind: .hub))
        default:
            skip(wronglyTyped: frame.expects(key))
        }
    }

    func endObject() {
        if skipDepth > 0 { skipDepth -= 1; return }
        guard let frame = frames.popLast() else { return }
        switch frame.kind {
        case .feed:
            if metadata.format == nil {
                notAFeed("not a feed: a JSON object without a JSON Feed version (\"version\": \"https://jsonfeed.org/version/1.1\")")
            }
        case .item:
            if let item = item.take() { emit(item) }
        case .person(let forItem, let inList):
            guard person != Person() else { return }
            if forItem {
                if inList {
                    if (item?.authors.count ?? 0) < maximumListLength { item?.authors.append(person) }
                } else {
                    item?.author = person
                }
            } else if inList {
                if metadata.authors.count < maximumListLength && !metadata.authors.contains(person) { metadata.authors.append(person) }
            } else if !feedHasAuthorsList {
                metadata.authors = [person]
            }
        case .attachment:
            if let url = attachment.url, (item?.attachments.count ?? 0) < maximumListLength {
                item?.attachments.append(Enclosure(url: url, type: attachment.type, length: attachment.length, title: attachment.title,
                                                   durationSeconds: attachment.durationSeconds))
            }
        case .hub:
            break
        default:
            break
        }
    }

    func startArray() {
        if skipDepth > 0 { skipDepth += 1; return }
        guard let frame = frames.last else {
            notAFeed("not a feed: the JSON document is an array, not a JSON Feed object")
            return
        }
        let key = takeKey()
        switch (frame.kind, key) {
        case (.feed, .items): frames.append(Frame(kind: .items))
        case (.feed, .hubs): frames.append(Frame(kind: .hubs))
        case (.feed, .authors):
            feedHasAuthorsList = true
            metadata.authors = []
            frames.append(Frame(kind: .people(forItem: false)))
        case (.item, .authors):
            item?.hasAuthorsList = true
            frames.append(Frame(kind: .people(forItem: true)))
        case (.item, .tags): frames.append(Frame(kind: .tags))
        case (.item, .attachments): frames.append(Frame(kind: .attachments))
        default:
            skip(wronglyTyped: frame.expects(key))
        }
    }

    func endArray() {
        if skipDepth > 0 { skipDepth -= 1; return }
        frames.removeLast()
    }

    func key(_ name: JSONBytes) {
        if skipDepth > 0 { return }
        var key = JSONFeedKey(name)
        if var frame = frames.last, frame.expects(key) {
            let bit = key.bit
            if frame.seen & bit != 0 {
                repairs.duplicateKeys += 1
                if key != .items { key = .ignored }  // the first value stands; every article is still delivered
            } else {
                frame.seen |= bit
                frames[frames.count - 1] = frame
            }
        }
        self.key = key
    }

    func string(_ value: JSONBytes) {
        if skipDepth > 0 { return }
        guard let frame = frames.last else { return notAFeed("not a feed: the JSON document is a string, not a JSON Feed object") }
        let key = takeKey()
        switch frame.kind {
        case .feed: feedString(key, value, frame)
        case .item: itemString(key, value, frame)
        case .person:
            switch key {
            case .name: person.name = text(value)
            case .url: person.uri = url(value)
            case .avatar: person.avatar = url(value)
            default: wrongType(key, in: frame)
            }
        case .tags:
            if let tag = text(value) { appendTag(tag) }
        case .attachment:
            switch key {
            case .url: attachment.url = url(value)
            case .mimeType: attachment.type = text(value)
            case .title: attachment.title = text(value)
            default: wrongType(key, in: frame)
            }
        case .hub:
            guard key == .url else { return }
            if let url = url(value), metadata.hubs.count < maximumListLength, !metadata.hubs.contains(url) { metadata.hubs.append(url) }
        case .items, .people, .attachments, .hubs:
            repairs.wronglyTypedFields += 1
        }
    }

    func number(_ text: JSONBytes) {
        if skipDepth > 0 { return }
        guard let frame = frames.last else { return notAFeed("not a feed: the JSON document is a number, not a JSON Feed object") }
        let key = takeKey()
        switch (frame.kind, key) {
        case (.item, .id):
            // Integer identifiers occur in the wild; the text as written is the identifier.
            item?.id = text.string
        case (.feed, .version):
            version(text.string)
        case (.attachment, .sizeInBytes):
            if let length = text.int64 ?? text.double.flatMap(Self.wholeNumber).map(Int64.init), length >= 0 { attachment.length = length }
            else { repairs.wronglyTypedFields += 1 }
        case (.attachment, .durationInSeconds):
            if let seconds = text.int64.map(Int.init) ?? text.double.flatMap(Self.wholeNumber), seconds >= 0 { attachment.durationSeconds = seconds }
            else { repairs.wronglyTypedFields += 1 }
        default:
            wrongType(key, in: frame)
        }
    }

    func boolean(_ value: Bool) {
        if skipDepth > 0 { return }
        guard let frame = frames.last else { return notAFeed("not a feed: the JSON document is a boolean, not a JSON Feed object") }
        let key = takeKey()
        if case .feed = frame.kind, key == .expired { metadata.expired = value } else { wrongType(key, in: frame) }
    }

    func null() {
        if skipDepth > 0 { return }
        guard frames.last != nil else { return notAFeed("not a feed: the JSON document is null, not a JSON Feed object") }
        _ = takeKey()  // null is an absent value, whatever the key
    }

    // MARK: Fields

    private func feedString(_ key: JSONFeedKey, _ value: JSONBytes, _ frame: Frame) {
        switch key {
        case .version: version(text(value) ?? "")
        case .title: metadata.title = text(value)
        case .homePageURL: metadata.link = url(value)
        case .feedURL: metadata.selfLink = url(value)
        case .description: metadata.description = text(value).map { TextContent($0, type: .text) }
        case .nextURL: metadata.nextURL = url(value)
        case .icon: metadata.image = url(value)
        case .favicon: metadata.icon = url(value)
        case .language: metadata.language = text(value)
        case .userComment: break  // for people reading the feed's source
        default: wrongType(key, in: frame)
        }
    }

    private func itemString(_ key: JSONFeedKey, _ value: JSONBytes, _ frame: Frame) {
        switch key {
        case .id: item?.id = text(value)
        case .url: item?.url = text(value)
        case .externalURL: item?.externalURL = text(value)
        case .title: item?.title = text(value)
        case .contentHTML: item?.contentHTML = text(value)
        case .contentText: item?.contentText = text(value)
        case .summary: item?.summary = text(value)
        case .image: item?.image = text(value)
        case .bannerImage: item?.bannerImage = text(value)
        case .datePublished: item?.datePublished = text(value)
        case .dateModified: item?.dateModified = text(value)
        case .language: item?.language = text(value)
        default: wrongType(key, in: frame)
        }
    }

    /// Reads `version`: the two official URLs, or (noted as a repair) another JSON Feed version; anything else is not
    /// a JSON Feed.
    private func version(_ written: String) {
        guard metadata.format == nil else { return }
        let version: String?
        switch written {
        case "https://jsonfeed.org/version/1": version = "1.0"
        case "https://jsonfeed.org/version/1.1": version = "1.1"
        default:
            var number = Substring(written.trimmingXMLWhitespace())
            var isURL = false
            for prefix in ["https://jsonfeed.org/version/", "http://jsonfeed.org/version/", "https://www.jsonfeed.org/version/",
                           "http://www.jsonfeed.org/version/"] where number.hasPrefix(prefix) {
                number = number.dropFirst(prefix.count)
                isURL = true
                break
            }
            while number.hasSuffix("/") { number = number.dropLast() }
            let isNumber = !number.isEmpty && number.first != "." && number.last != "."
                && number.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
            // A bare number is a JSON Feed version only as 1.x (gofeed's samples write "1.1"); "2.0" is RSS's.
            let isVersion = isNumber && (isURL || number == "1" || number.hasPrefix("1."))
            version = isVersion ? (number.contains(".") ? String(number) : number + ".0") : nil
            if version != nil { repairs.nonstandardVersion += 1 }
        }
        guard let version else {
            return notAFeed("not a feed: the version \"\(written.prefix(200))\" is not a JSON Feed version (https://jsonfeed.org/version/1.1)")
        }
        metadata.format = FeedFormat(family: .json, version: version)
    }

    // MARK: Articles

    /// Delivers the article a closed item makes.
    private func emit(_ item: JSONItemBuilder) {
        let link = item.url.flatMap(resolve)
        let (id, idSource): (String, Article.IDSource)
        if let identifier = item.id, !identifier.isEmpty { (id, idSource) = (identifier, .guid) }
        else if let link { (id, idSource) = (link, .link) }
        else {
            (id, idSource) = (ItemBuilder.fallbackID(title: item.title, date: item.datePublished ?? item.dateModified,
                                                     content: item.contentHTML ?? item.contentText ?? item.summary), .hash)
        }
        var article = Article(id: id, idSource: idSource, feed: source)
        article.title = item.title
        article.link = link
        article.externalURL = item.externalURL.flatMap(resolve)
        (article.published, article.publishedRaw) = Self.date(item.datePublished)
        (article.updated, article.updatedRaw) = Self.date(item.dateModified)
        if item.hasAuthorsList {
            article.authors = item.authors
        } else if let author = item.author {
            article.authors = [author]
        } else {
            article.authors = metadata.authors
        }
        article.summary = item.summary.map { TextContent($0, type: .text) }
        if var html = item.contentHTML {
            if resolvesLinksInHTML, baseURL != nil { html = resolver.resolveLinks(inHTML: html, against: baseURL) }
            article.content = TextContent(html, type: .html)
            article.contentText = item.contentText
        } else {
            article.content = item.contentText.map { TextContent($0, type: .text) }
        }
        article.categories = item.tags
        article.enclosures = item.attachments
        article.bannerImage = item.bannerImage.flatMap(resolve)
        article.image = item.image.flatMap(resolve) ?? article.bannerImage
            ?? item.attachments.first(where: { $0.type?.hasPrefix("image/") == true })?.url
            ?? ValueParsers.firstImage(in: article.content?.type == .html ? article.content : nil)
        article.language = item.language ?? metadata.language
        articleCount += 1
        onArticle(article, metadata)
    }

    /// A date and, when it does not parse, its raw text.
    private static func date(_ text: String?) -> (Date?, String?) {
        guard let text else { return (nil, nil) }
        if let date = FeedDate.parse(text) { return (date, nil) }
        return (nil, text)
    }

    private static func wholeNumber(_ value: Double) -> Int? {
        guard value.isFinite, value >= 0, value < 9e15 else { return nil }
        return Int(value.rounded())
    }

    // MARK: Helpers

    /// The key the value now arriving belongs to; the next value in the same object waits for its own key.
    @inline(__always) private func takeKey() -> JSONFeedKey {
        defer { key = .none }
        return key
    }

    /// Skips the container just opened, with everything inside it; a known key of the wrong type is counted.
    private func skip(wronglyTyped: Bool) {
        if wronglyTyped { repairs.wronglyTypedFields += 1 }
        skipDepth = 1
    }

    /// Counts a value of the wrong type for a key the frame gives a meaning to (or an element of a list).
    private func wrongType(_ key: JSONFeedKey, in frame: Frame) {
        if frame.expects(key) { repairs.wronglyTypedFields += 1 }
    }

    /// The string, decoded (invalid UTF-8 replaced and counted); `nil` when empty.
    private func text(_ value: JSONBytes) -> String? {
        guard !value.isEmpty else { return nil }
        if let text = value.validatedString { return text }
        repairs.invalidUTF8 += 1
        return value.string
    }

    /// The string as a URL, resolved against the document's URL; `nil` when empty.
    private func url(_ value: JSONBytes) -> String? {
        text(value).flatMap(resolve)
    }

    private func resolve(_ url: String) -> String? {
        let trimmed = url.trimmingXMLWhitespace()
        guard !trimmed.isEmpty else { return nil }
        let resolved = resolver.resolve(trimmed, against: baseURL)
        return resolved.isEmpty ? nil : resolved
    }

    private func appendTag(_ tag: String) {
        let category = tag.trimmingXMLWhitespace()
        guard !category.isEmpty, let tags = item?.tags, tags.count < maximumListLength, !tags.contains(category) else { return }
        item?.tags.append(category)
    }

    /// Stops the parse: the document is JSON, but not a JSON Feed.
    private func notAFeed(_ message: String) {
        guard failure == nil else { return }
        failure = FeedError(kind: .notAFeed, message: message, line: json.lineNumber, column: json.columnNumber,
                            byteOffset: json.byteOffset, source: source)
        json.abortParsing()
    }
}

extension JSONFeedHandler.Frame {
    /// Lists whose elements must be objects or strings: a value of another type there is a wrongly typed element.
    var isList: Bool {
        switch kind {
        case .items, .hubs, .tags, .attachments, .people: return true
        default: return false
        }
    }

    /// Whether a value for `key` means something here (in a list: any element does), so a value of the wrong type
    /// is counted; keys the frame does not define are skipped silently.
    func expects(_ key: JSONFeedKey) -> Bool {
        let keys: UInt64
        switch kind {
        case .items, .hubs, .tags, .attachments, .people: return true
        case .feed: keys = Self.feedKeys
        case .item: keys = Self.itemKeys
        case .person: keys = Self.personKeys
        case .attachment: keys = Self.attachmentKeys
        case .hub: keys = Self.hubKeys
        }
        return keys & key.bit != 0
    }

    static let feedKeys = JSONFeedKey.set(.version, .title, .homePageURL, .feedURL, .description, .userComment, .nextURL, .icon,
                                          .favicon, .author, .authors, .language, .expired, .hubs, .items)
    static let itemKeys = JSONFeedKey.set(.id, .url, .externalURL, .title, .contentHTML, .contentText, .summary, .image, .bannerImage,
                                          .datePublished, .dateModified, .author, .authors, .tags, .language, .attachments)
    static let personKeys = JSONFeedKey.set(.name, .url, .avatar)
    static let attachmentKeys = JSONFeedKey.set(.url, .mimeType, .title, .sizeInBytes, .durationInSeconds)
    static let hubKeys = JSONFeedKey.set(.type, .url)
}

/// An item's fields as they arrive, before ``JSONFeedHandler`` makes its article.
struct JSONItemBuilder {
    var id: String?
    var url: String?, externalURL: String?
    var title: String?
    var contentHTML: String?, contentText: String?, summary: String?
    var image: String?, bannerImage: String?
    var datePublished: String?, dateModified: String?
    var language: String?
    /// 1.1 `authors` (it wins over `author` in either order), and 1.0 `author`.
    var hasAuthorsList = false
    var authors: [Person] = []
    var author: Person?
    var tags: [String] = []
    var attachments: [Enclosure] = []
}

/// An attachment's fields as they arrive.
struct JSONAttachmentBuilder {
    var url: String?, type: String?, title: String?
    var length: Int64?
    var durationSeconds: Int?
}

/// The keys JSON Feed gives a meaning to (in any object: the frame decides which apply), as small numbers for bit sets.
enum JSONFeedKey: UInt8 {
    case none = 0, ignored, unknown
    case version, title, homePageURL, feedURL, description, userComment, nextURL, icon, favicon, author, authors, language
    case expired, hubs, items
    case id, url, externalURL, contentHTML, contentText, summary, image, bannerImage, datePublished, dateModified, tags
    case attachments
    case name, avatar, mimeType, sizeInBytes, durationInSeconds, type

    /// The key's bit in a set of keys.
    var bit: UInt64 { 1 << UInt64(rawValue) }

    /// A set of keys as bits.
    static func set(_ keys: JSONFeedKey...) -> UInt64 { keys.reduce(0) { $0 | $1.bit } }

    /// Classifies a key by its length, then its bytes: no `String` is made.
    init(_ name: JSONBytes) {
        switch name.count {
        case 2: self = name.equals("id") ? .id : .unknown
        case 3: self = name.equals("url") ? .url : .unknown
        case 4:
            if name.equals("name") { self = .name } else if name.equals("icon") { self = .icon }
            else if name.equals("tags") { self = .tags } else if name.equals("hubs") { self = .hubs }
            else if name.equals("type") { self = .type } else { self = .unknown }
        case 5:
            if name.equals("title") { self = .title } else if name.equals("items") { self = .items }
            else if name.equals("image") { self = .image } else { self = .unknown }
        case 6:
            if name.equals("author") { self = .author } else if name.equals("avatar") { self = .avatar } else { self = .unknown }
        case 7:
            if name.equals("version") { self = .version } else if name.equals("authors") { self = .authors }
            else if name.equals("favicon") { self = .favicon } else if name.equals("summary") { self = .summary }
            else if name.equals("expired") { self = .expired } else { self = .unknown }
        case 8:
            if name.equals("language") { self = .language } else if name.equals("next_url") { self = .nextURL }
            else if name.equals("feed_url") { self = .feedURL } else { self = .unknown }
        case 9: self = name.equals("mime_type") ? .mimeType : .unknown
        case 11:
            if name.equals("description") { self = .description } else if name.equals("attachments") { self = .attachments }
            else { self = .unknown }
        case 12:
            if name.equals("content_html") { self = .contentHTML } else if name.equals("content_text") { self = .contentText }
            else if name.equals("user_comment") { self = .userComment } else if name.equals("external_url") { self = .externalURL }
            else if name.equals("banner_image") { self = .bannerImage } else { self = .unknown }
        case 13:
            if name.equals("home_page_url") { self = .homePageURL } else if name.equals("size_in_bytes") { self = .sizeInBytes }
            else if name.equals("date_modified") { self = .dateModified } else { self = .unknown }
        case 14: self = name.equals("date_published") ? .datePublished : .unknown
        case 19: self = name.equals("duration_in_seconds") ? .durationInSeconds : .unknown
        default: self = .unknown
        }
    }
}
