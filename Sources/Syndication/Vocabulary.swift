// The words the state machine switches on: namespace URIs to Namespace, local names to Tag, byte-compared.

import ExpatXML
import Foundation

/// The namespaces the feed parser understands.
enum Namespace: UInt8 {
    case rss        // no namespace, or RSS 2.0's optional ones
    case rss090, rss10
    case atom, atom03
    case rdf, dc, dcterms, content, media, itunes, podcast, slash, wfw, sy, thr, xml, xhtml
    /// `admin:` (generatorAgent), Creative Commons for RSS 2.0 (`creativeCommons:license`) and for RDF (`cc:license`).
    case admin, creativeCommons, cc
    case other

    /// Known namespace URIs; several spellings seen in real feeds map to one namespace.
    static let known: [(uri: [UInt8], namespace: Namespace)] = ([
        ("http://purl.org/dc/elements/1.1/", .dc),
        ("http://purl.org/rss/1.0/modules/content/", .content),
        ("http://www.w3.org/2005/Atom", .atom),
        ("http://search.yahoo.com/mrss/", .media),
        ("http://www.itunes.com/dtds/podcast-1.0.dtd", .itunes),
        ("http://purl.org/rss/1.0/", .rss10),
        ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", .rdf),
        ("http://purl.org/rss/1.0/modules/syndication/", .sy),
        ("http://purl.org/rss/1.0/modules/slash/", .slash),
        ("http://wellformedweb.org/CommentAPI/", .wfw),
        ("http://purl.org/dc/terms/", .dcterms),
        ("https://podcastindex.org/namespace/1.0", .podcast),
        ("https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md", .podcast),
        ("http://purl.org/syndication/thread/1.0", .thr),
        ("http://www.w3.org/XML/1998/namespace", .xml),
        ("http://www.w3.org/1999/xhtml", .xhtml),
        ("http://purl.org/atom/ns#", .atom03),
        ("http://my.netscape.com/rdf/simple/0.9/", .rss090),
        ("http://channel.netscape.com/rdf/simple/0.9/", .rss090),
        ("http://search.yahoo.com/mrss", .media),
        ("http://www.itunes.com/DTDs/Podcast-1.0.dtd", .itunes),
        ("http://www.itunes.com/DTDs/PodCast-1.0.dtd", .itunes),
        ("http://backend.userland.com/rss2", .rss),
        ("http://blogs.law.harvard.edu/tech/rss", .rss),
        ("http://backend.userland.com/rss", .rss),
        ("http://purl.org/rss/1.0/modules/rss091#", .rss),
        ("http://webns.net/mvcb/", .admin),
        ("http://backend.userland.com/creativeCommonsRssModule", .creativeCommons),
        ("http://web.resource.org/cc/", .cc),
        ("http://creativecommons.org/ns#", .cc),
        // Atom before 1.0: 0.1–0.3 share one namespace; the drafts that led to it (Echo, Pie, Necho) had their own.
        ("http://example.com/newformat#", .atom03),
        ("http://example.com/necho", .atom03),
        ("http://purl.org/echo/", .atom03),
        ("uri/of/echo/namespace#", .atom03),
        ("http://purl.org/pie/", .atom03),
    ] as [(String, Namespace)]).map { (Array($0.0.utf8), $0.1) }

    /// How an unknown URI is read before it is remembered as `other`: the known URIs ignoring ASCII case (iTunes
    /// wrote its own in several cases, and feedparser compares namespaces that way), then the IETF drafts of Atom,
    /// which put their draft name after the 0.3 namespace (`http://purl.org/atom/ns#draft-ietf-atompub-format-…`).
    static func classifyUnknown(_ uri: UnsafeBufferPointer<UInt8>) -> Namespace {
        for entry in known where entry.uri.count == uri.count {
            if zip(entry.uri, uri).allSatisfy({ lowercaseASCII($0) == lowercaseASCII($1) }) { return entry.namespace }
        }
        let atomDrafts = Array("http://purl.org/atom/ns#".utf8)
        if uri.count > atomDrafts.count && uri.starts(with: atomDrafts) { return .atom03 }
        return .other
    }
}

/// The byte with `A`–`Z` folded to `a`–`z`.
@inline(__always) func lowercaseASCII(_ byte: UInt8) -> UInt8 {
    byte &- 0x41 < 26 ? byte | 0x20 : byte
}

/// Classifies namespace URIs quickly: the empty URI at once, then a small table compared by length and bytes,
/// remembering unknown URIs (up to a bound) so each is compared once.
struct NamespaceTable {
    private var entries: [(uri: [UInt8], namespace: Namespace)] = Namespace.known
    /// What no namespace means: RSS, or Atom in a document whose root is a `feed` in no namespace.
    var unnamespaced = Namespace.rss

    mutating func classify(_ uri: XMLBytes) -> Namespace {
        if uri.isEmpty { return unnamespaced }
        let count = uri.count
        for entry in entries where entry.uri.count == count {
            if entry.uri.withUnsafeBufferPointer({ memcmp($0.baseAddress!, uri.buffer.baseAddress!, count) }) == 0 {
                return entry.namespace
            }
        }
        let namespace = Namespace.classifyUnknown(uri.buffer)
        if entries.count < Namespace.known.count + 64 { entries.append((Array(uri.buffer), namespace)) }
        return namespace
    }
}

/// Element names the parser acts on, per namespace.
enum Tag: UInt8 {
    case unknown
    // RSS (and RSS 1.0/0.90 namespaces)
    case rss, channel, item, title, link, description, guid, pubDate, author, category, comments, enclosure, source
    case language, copyright, managingEditor, lastBuildDate, generator, ttl, image, url, skipHours, hour, skipDays, day
    case textInput, webMaster, width, height, fullitem, body
    // CDF (Microsoft's Channel Definition Format): ABSTRACT; its CHANNEL, ITEM, TITLE and LOGO share RSS's and Atom's tags
    case abstract
    // RDF
    case rdfRoot
    // Atom
    case feed, entry, subtitle, tagline, summary, content, id, published, updated, issued, modified, created
    case contributor, name, email, uri, rights, icon, logo
    // Dublin Core and terms
    case dcTitle, dcCreator, dcSubject, dcDescription, dcDate, dcLanguage, dcRights, dcIdentifier, dcContributor
    case dcPublisher
    case termsIssued, termsCreated, termsModified, termsRights
    // content, media
    case contentEncoded
    case mediaContent, mediaThumbnail, mediaGroup, mediaDescription, mediaTitle, mediaCategory, mediaKeywords
    // iTunes
    case itunesAuthor, itunesImage, itunesDuration, itunesEpisode, itunesSeason, itunesExplicit, itunesSummary
    case itunesSubtitle, itunesKeywords, itunesTitle, itunesCategory, itunesOwner, itunesName, itunesEmail
    // Podcasting 2.0, slash, wfw, sy, thr
    case podcastGUID, podcastTranscript, podcastChapters, slashComments, wfwCommentRSS, syUpdatePeriod, syUpdateFrequency
    case thrTotal, syUpdateBase
    // admin, Creative Commons
    case adminGeneratorAgent, license

    static func classify(_ namespace: Namespace, _ name: XMLBytes) -> Tag {
        let tag = classifyExactly(namespace, name)
        guard tag == .unknown, namespace != .other, namespace != .xml else { return tag }
        return classifyIgnoringCase(namespace, name)
    }

    private static func classifyExactly(_ namespace: Namespace, _ name: XMLBytes) -> Tag {
        switch namespace {
        case .rss, .rss10, .rss090: return rss(name)
        case .atom, .atom03: return atom(name)
        case .rdf: return name.equals("RDF") ? .rdfRoot : .unknown
        case .dc: return dc(name)
        case .dcterms:
            if name.equals("issued") { return .termsIssued }
            if name.equals("created") { return .termsCreated }
            if name.equals("modified") { return .termsModified }
            if name.equals("rights") { return .termsRights }
            return .unknown
        case .content: return name.equals("encoded") ? .contentEncoded : .unknown
        case .media: return media(name)
        case .itunes: return itunes(name)
        case .podcast:
            if name.equals("guid") { return .podcastGUID }
            if name.equals("transcript") { return .podcastTranscript }
            if name.equals("chapters") { return .podcastChapters }
            return .unknown
        case .slash: return name.equals("comments") ? .slashComments : .unknown
        case .wfw: return name.equals("commentRss") || name.equals("commentRSS") ? .wfwCommentRSS : .unknown
        case .sy:
            if name.equals("updatePeriod") { return .syUpdatePeriod }
            if name.equals("updateFrequency") { return .syUpdateFrequency }
            if name.equals("updateBase") { return .syUpdateBase }
            return .unknown
        case .thr: return name.equals("total") ? .thrTotal : .unknown
        case .admin: return name.equals("generatorAgent") ? .adminGeneratorAgent : .unknown
        case .creativeCommons, .cc: return name.equals("license") ? .license : .unknown
        case .xhtml: return name.equals("body") ? .body : .unknown
        case .xml, .other: return .unknown
        }
    }

    // MARK: Unusual letter case

    /// The names each namespace knows, as written by its specification: the ones `classifyExactly` compares.
    private static let names: [Namespace: [String]] = {
        let rss = ["rss", "url", "ttl", "day", "item", "link", "guid", "hour", "title", "image", "author", "source", "channel",
                   "pubDate", "category", "comments", "language", "skipDays", "enclosure", "copyright", "generator", "skipHours",
                   "textInput", "description", "lastBuildDate", "managingEditor", "webMaster", "width", "height", "fullitem",
                   "body", "abstract", "logo"]
        let atom = ["id", "uri", "url", "feed", "link", "name", "logo", "icon", "entry", "title", "email", "author", "issued",
                    "rights", "source", "summary", "content", "updated", "created", "tagline", "subtitle", "category", "modified",
                    "homepage", "published", "generator", "copyright", "contributor"]
        return [
            .rss: rss, .rss10: rss, .rss090: rss, .atom: atom, .atom03: atom, .rdf: ["RDF"],
            .dc: ["creator", "author", "date", "subject", "title", "description", "language", "rights", "identifier",
                  "contributor", "publisher"],
            .dcterms: ["issued", "created", "modified", "rights"], .content: ["encoded"],
            .media: ["content", "thumbnail", "group", "description", "title", "category", "keywords"],
            .itunes: ["author", "image", "duration", "episode", "season", "explicit", "summary", "subtitle", "keywords",
                      "title", "category", "owner", "name", "email"],
            .podcast: ["guid", "transcript", "chapters"], .slash: ["comments"], .wfw: ["commentRss"],
            .sy: ["updatePeriod", "updateFrequency", "updateBase"], .thr: ["total"], .admin: ["generatorAgent"],
            .creativeCommons: ["license"], .cc: ["license"], .xhtml: ["body"],
        ]
    }()

    /// A name that matched nothing, compared again with ASCII case folded: feedparser folds element names to
    /// lowercase, so `<pubdate>`, `<PubDate>` and CDF's `<TITLE>` are the elements they look like.
    private static func classifyIgnoringCase(_ namespace: Namespace, _ name: XMLBytes) -> Tag {
        guard let candidates = folded[namespace] else { return .unknown }
        let count = name.count
        for candidate in candidates where candidate.name.count == count {
            var matches = true
            for index in 0..<count where lowercaseASCII(name.buffer[index]) != candidate.name[index] {
                matches = false
                break
            }
            if matches { return candidate.tag }
        }
        return .unknown
    }

    /// Per namespace, each known name folded to lowercase, with its tag.
    private static let folded: [Namespace: [(name: [UInt8], tag: Tag)]] = {
        var table: [Namespace: [(name: [UInt8], tag: Tag)]] = [:]
        for (namespace, list) in names {
            table[namespace] = list.map { name in
                var copy = name
                let tag = copy.withUTF8 { classifyExactly(namespace, XMLBytes($0)) }
                return (Array(name.lowercased().utf8), tag)
            }
        }
        return table
    }()

    private static func rss(_ name: XMLBytes) -> Tag {
        switch name.count {
        case 3:
            if name.equals("rss") { return .rss }
            if name.equals("url") { return .url }
            if name.equals("ttl") { return .ttl }
            if name.equals("day") { return .day }
        case 4:
            if name.equals("item") { return .item }
            if name.equals("link") { return .link }
            if name.equals("guid") { return .guid }
            if name.equals("hour") { return .hour }
            if name.equals("body") { return .body }
            if name.equals("logo") { return .logo }
        case 5:
            if name.equals("title") { return .title }
            if name.equals("image") { return .image }
            if name.equals("width") { return .width }
        case 6:
            if name.equals("author") { return .author }
            if name.equals("source") { return .source }
            if name.equals("height") { return .height }
        case 7:
            if name.equals("channel") { return .channel }
            if name.equals("pubDate") { return .pubDate }
        case 8:
            if name.equals("fullitem") { return .fullitem }
            if name.equals("abstract") { return .abstract }
            if name.equals("category") { return .category }
            if name.equals("comments") { return .comments }
            if name.equals("language") { return .language }
            if name.equals("skipDays") { return .skipDays }
        case 9:
            if name.equals("enclosure") { return .enclosure }
            if name.equals("copyright") { return .copyright }
            if name.equals("generator") { return .generator }
            if name.equals("skipHours") { return .skipHours }
            if name.equals("textInput") || name.equals("textinput") { return .textInput }
            if name.equals("webMaster") { return .webMaster }
        case 11:
            if name.equals("description") { return .description }
        case 13:
            if name.equals("lastBuildDate") { return .lastBuildDate }
        case 14:
            if name.equals("managingEditor") { return .managingEditor }
        default: break
        }
        return .unknown
    }

    private static func atom(_ name: XMLBytes) -> Tag {
        switch name.count {
        case 2: if name.equals("id") { return .id }
        case 3: if name.equals("uri") { return .uri }; if name.equals("url") { return .uri }
        case 4:
            if name.equals("feed") { return .feed }
            if name.equals("link") { return .link }
            if name.equals("name") { return .name }
            if name.equals("logo") { return .logo }
            if name.equals("icon") { return .icon }
        case 5:
            if name.equals("entry") { return .entry }
            if name.equals("title") { return .title }
            if name.equals("email") { return .email }
        case 6:
            if name.equals("author") { return .author }
            if name.equals("issued") { return .issued }
            if name.equals("rights") { return .rights }
            if name.equals("source") { return .source }
        case 7:
            if name.equals("summary") { return .summary }
            if name.equals("content") { return .content }
            if name.equals("updated") { return .updated }
            if name.equals("created") { return .created }
            if name.equals("tagline") { return .tagline }
        case 8:
            if name.equals("subtitle") { return .subtitle }
            if name.equals("category") { return .category }
            if name.equals("modified") { return .modified }
            if name.equals("homepage") { return .uri }  // Atom 0.3's person URL
        case 9:
            if name.equals("published") { return .published }
            if name.equals("generator") { return .generator }
            if name.equals("copyright") { return .rights }
        case 11: if name.equals("contributor") { return .contributor }
        default: break
        }
        return .unknown
    }

    private static func dc(_ name: XMLBytes) -> Tag {
        if name.equals("creator") || name.equals("author") { return .dcCreator }  // dc:author is not Dublin Core, but common
        if name.equals("date") { return .dcDate }
        if name.equals("subject") { return .dcSubject }
        if name.equals("title") { return .dcTitle }
        if name.equals("description") { return .dcDescription }
        if name.equals("language") { return .dcLanguage }
        if name.equals("rights") { return .dcRights }
        if name.equals("identifier") { return .dcIdentifier }
        if name.equals("contributor") { return .dcContributor }
        if name.equals("publisher") { return .dcPublisher }
        return .unknown
    }

    private static func media(_ name: XMLBytes) -> Tag {
        if name.equals("content") { return .mediaContent }
        if name.equals("thumbnail") { return .mediaThumbnail }
        if name.equals("group") { return .mediaGroup }
        if name.equals("description") { return .mediaDescription }
        if name.equals("title") { return .mediaTitle }
        if name.equals("category") { return .mediaCategory }
        if name.equals("keywords") { return .mediaKeywords }
        return .unknown
    }

    private static func itunes(_ name: XMLBytes) -> Tag {
        if name.equals("author") { return .itunesAuthor }
        if name.equals("image") { return .itunesImage }
        if name.equals("duration") { return .itunesDuration }
        if name.equals("episode") { return .itunesEpisode }
        if name.equals("season") { return .itunesSeason }
        if name.equals("explicit") { return .itunesExplicit }
        if name.equals("summary") { return .itunesSummary }
        if name.equals("subtitle") { return .itunesSubtitle }
        if name.equals("keywords") { return .itunesKeywords }
        if name.equals("title") { return .itunesTitle }
        if name.equals("category") { return .itunesCategory }
        if name.equals("owner") { return .itunesOwner }
        if name.equals("name") { return .itunesName }
        if name.equals("email") { return .itunesEmail }
        return .unknown
    }
}

extension XMLBytes {
    /// Whether the bytes equal a lowercase ASCII literal once `A`–`Z` are folded to lowercase.
    func equalsIgnoringCase(_ lowercaseLiteral: StaticString) -> Bool {
        guard lowercaseLiteral.utf8CodeUnitCount == count else { return false }
        let literal = lowercaseLiteral.utf8Start
        for index in 0..<count where lowercaseASCII(buffer[index]) != literal[index] { return false }
        return true
    }
}

extension XMLAttributes {
    /// The value of the attribute in no namespace whose name is `lowercaseName` in any letter case (`href`, `HREF`),
    /// as feedparser reads attribute names; in one pass over the attributes, like an exact look-up.
    func value(anyCase lowercaseName: StaticString) -> XMLBytes? {
        value(noNamespaceNamed: lowercaseName, ignoringCase: true)
    }
}

/// Remembers the last few attribute values made into `String`s, so a value every item repeats (a category's scheme, a
/// link's type) is one shared `String` instead of one allocated per item. Values of up to 15 bytes are stored inline
/// by `String` and need no sharing.
struct StringInterner {
    private var entries: [String] = []
    private var next = 0
    private static let capacity = 8

    /// The value as a `String`, shared with an earlier equal one when there is one.
    mutating func string(_ bytes: XMLBytes) -> String {
        let count = bytes.count
        guard count > 15, let base = bytes.buffer.baseAddress else { return bytes.string }
        for index in entries.indices where entries[index].utf8.count == count {
            let equal = entries[index].utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, base, count) == 0 } ?? false
            if equal { return entries[index] }
        }
        let string = bytes.string
        if entries.count < Self.capacity {
            entries.append(string)
        } else {
            entries[next] = string
            next = (next + 1) % Self.capacity
        }
        return string
    }
}
