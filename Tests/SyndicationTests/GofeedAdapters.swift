import Foundation
import Syndication

// The three adapters that turn our parse result into gofeed's field paths: the universal model
// (`translator/`, `extensions/`), gofeed's RSS model (`parser/rss`) and its Atom model (`parser/atom`).
// Each compares only fields that the expected JSON has and that our model has an equivalent for; every
// other expected field must be listed in `GofeedExclusions.fields` with the reason.

extension GofeedChecker {
    /// Compares gofeed persons `object[key][j]` with ours by position: name, email, uri.
    func people(_ object: [String: Any], _ key: String, at prefix: String, _ actual: [Person]?, includeURI: Bool = true) {
        guard let list = object[key] as? [Any] else { return }
        for (index, value) in list.enumerated() {
            guard let person = value as? [String: Any] else { continue }
            let ours = actual.flatMap { index < $0.count ? $0[index] : nil }
            let path = GofeedJSON.join(prefix, key) + "[\(index)]"
            let missing = actual == nil
            text(person, "name", at: path, ours?.name, missing: missing)
            text(person, "email", at: path, ours?.email, missing: missing)
            if includeURI { text(person, "uri", at: path, ours?.uri, missing: missing) }
            // JSON Feed persons: `url` is our `uri`, `avatar` our `avatar`.
            text(person, "url", at: path, ours?.uri, missing: missing)
            text(person, "avatar", at: path, ours?.avatar, missing: missing)
        }
    }

    /// gofeed's universal model has `author` (the first author) next to `authors`: when both are present,
    /// `author` is a duplicate of `authors[0]` and only `authors` is compared; alone, it is compared as `authors[0]`.
    func universalPeople(_ object: [String: Any], at prefix: String, _ actual: [Person]?) {
        if object["authors"] != nil {
            people(object, "authors", at: prefix, actual)
            cover(GofeedJSON.join(prefix, "author"))
        } else if let author = object["author"] as? [String: Any] {
            people(["author": [author]], "author", at: prefix, actual)
            cover(GofeedJSON.join(prefix, "author"))
        }
    }

    /// Compares a raw RSS person string (`managingEditor`, item `author`) with our parsed persons.
    ///
    /// Normalisation: we split `email (Name)` and `Name <email>` into name and email, so the raw text is
    /// matched against the spellings that can be rebuilt from one of our persons: the name alone, the
    /// email alone, `email (name)`, `name (email)` and `name <email>`.
    func rawPerson(_ field: String, expected: String, actual: [Person]?) {
        let want = Self.trim(expected)
        let people = actual ?? []
        let matched = people.contains { Self.spellings(of: $0).contains(want) }
        let shown = actual == nil ? "<no such article>"
            : "[" + people.map { "name: \(Self.show($0.name)), email: \(Self.show($0.email))" }.joined(separator: "; ") + "]"
        record(field, expected: Self.show(want), actual: shown, matched: matched)
    }

    static func spellings(of person: Person) -> Set<String> {
        switch (person.name, person.email) {
        case let (name?, email?): return ["\(email) (\(name))", "\(name) (\(email))", "\(name) <\(email)>"]
        case let (name?, nil): return [name]
        case let (nil, email?): return [email]
        case (nil, nil): return []
        }
    }

    /// gofeed's `guid`/`id` against our `id`: equal text, and our `idSource` an identifier element (RSS
    /// `guid`, Atom `id` or `dc:identifier`), not a fallback to the link or a hash.
    func identifier(_ field: String, expected: String, _ article: Article?) {
        guard let article else {
            record(field, expected: Self.show(expected), actual: "<no such article>", matched: false)
            return
        }
        let fromIdentifier = [.guid, .atomID, .dcIdentifier].contains(article.idSource)
        let matched = fromIdentifier && Self.trim(article.id) == Self.trim(expected)
        record(field, expected: Self.show(Self.trim(expected)),
               actual: Self.show(article.id) + (fromIdentifier ? "" : " (idSource \(article.idSource.rawValue))"), matched: matched)
    }

    /// gofeed enclosures (`url`, `type`, `length`) against ours by position. Lengths are compared as text.
    func enclosures(_ list: [Any], at path: String, _ actual: [Enclosure]?) {
        for (index, value) in list.enumerated() {
            guard let enclosure = value as? [String: Any] else { continue }
            let ours = actual.flatMap { index < $0.count ? $0[index] : nil }
            let prefix = "\(path)[\(index)]"
            let missing = actual == nil
            text(enclosure, "url", at: prefix, ours?.url, missing: missing)
            text(enclosure, "type", at: prefix, ours?.type, missing: missing)
            text(enclosure, "length", at: prefix, ours?.length.map { String($0) }, missing: missing)
        }
    }

    /// Each of gofeed's categories must be among ours (see `member`).
    func categories(_ object: [String: Any], _ key: String, at prefix: String, valueKey: String?, _ actual: [String]?) {
        guard let list = object[key] as? [Any] else { return }
        for (index, value) in list.enumerated() {
            var path = GofeedJSON.join(prefix, key) + "[\(index)]"
            let text: String?
            if let valueKey {
                text = (value as? [String: Any]).flatMap { GofeedJSON.scalar($0[valueKey]) }
                path += ".\(valueKey)"
            } else {
                text = GofeedJSON.scalar(value)
            }
            guard let text else { continue }
            member(path, expected: text, in: actual ?? [], missing: actual == nil)
        }
    }

    /// gofeed's category objects (`term`/`value`, `scheme`/`domain`, `label`) against our category details: the
    /// category with the same term carries the scheme and label. The term itself is compared by `categories`.
    func categoryDetails(_ object: [String: Any], _ key: String, at prefix: String, termKey: String, schemeKey: String,
                         _ actual: [Category]?) {
        guard let list = object[key] as? [Any] else { return }
        let missing = actual == nil
        for (index, value) in list.enumerated() {
            guard let category = value as? [String: Any], let term = GofeedJSON.scalar(category[termKey]) ?? GofeedJSON.scalar(category["label"])
            else { continue }
            let path = GofeedJSON.join(prefix, key) + "[\(index)]"
            let ours = actual?.first { Self.trim($0.term) == Self.trim(term) }
            text(category, schemeKey, at: path, ours?.scheme, missing: missing)
            text(category, "label", at: path, ours?.label, missing: missing)
        }
    }

    /// gofeed Atom links against our `links`, matched by href: rel, type, title, hreflang (as a language tag) and
    /// length of the link with the same URL. The href itself must be among ours.
    func atomLinks(_ list: [Any], at prefix: String, _ actual: [Link]?) {
        let missing = actual == nil
        for (index, value) in list.enumerated() {
            guard let link = value as? [String: Any], let href = GofeedJSON.scalar(link["href"]) else { continue }
            let path = "\(prefix)[\(index)]"
            member("\(path).href", expected: href, in: (actual ?? []).map(\.href), missing: missing)
            let ours = actual?.first { Self.trim($0.href) == Self.trim(href) }
            if let rel = link["rel"] as? String, !Self.trim(rel).isEmpty {
                compareText("\(path).rel", expected: rel, actual: missing ? nil : ours?.rel, missing: missing)
            } else {
                cover("\(path).rel")
            }
            text(link, "type", at: path, ours?.type, missing: missing)
            text(link, "title", at: path, ours?.title, missing: missing)
            language(link, "hreflang", at: path, ours?.hreflang)
            text(link, "length", at: path, ours?.length.map { String($0) }, missing: missing)
        }
    }

    func itemCount(_ key: String) {
        guard let list = expected[key] as? [Any] else { return }
        let count = parsed.articles.count
        record("\(key).count", expected: "\(list.count)", actual: "\(count)", matched: list.count == count)
        cover(key)
    }
}

/// gofeed's universal `gofeed.Feed` (translator/ and extensions/ cases).
enum GofeedUniversalAdapter {
    static func check(_ c: GofeedChecker) {
        let e = c.expected
        let m = c.metadata
        // Format: gofeed `feedType` (rss, atom) is our `format.family`; `feedVersion` our `format.version`.
        if let type = e["feedType"] as? String { c.compareText("feedType", expected: type, actual: m.format?.family.rawValue) }
        if let version = e["feedVersion"] as? String { c.version("feedVersion", expected: version, actual: m.format?.version) }
        c.text(e, "title", at: "", m.title)
        c.text(e, "description", at: "", m.description?.value)
        c.text(e, "link", at: "", m.link)
        c.text(e, "feedLink", at: "", m.selfLink)
        // `updated` is lastBuildDate (RSS) or updated (Atom); `published` the channel's pubDate.
        c.date(e, "updatedParsed", at: "", m.updated, raw: m.updatedRaw)
        c.date(e, "publishedParsed", at: "", m.published, raw: m.publishedRaw)
        c.universalPeople(e, at: "", m.authors)
        c.language(e, "language", at: "", m.language)
        c.text(e, "copyright", at: "", m.rights)
        c.text(e, "generator", at: "", m.generator)
        // gofeed's feed image is RSS image/url or Atom logo, falling back to the Atom icon; we keep the icon
        // apart, so the image is compared with `image ?? icon`.
        if let image = e["image"] as? [String: Any] {
            c.text(image, "url", at: "image", m.image ?? m.icon)
            c.text(image, "title", at: "image", m.imageDetails?.title)
        }
        c.categories(e, "categories", at: "", valueKey: nil, m.categories)

        c.itemCount("items")
        for (index, value) in (e["items"] as? [Any] ?? []).enumerated() {
            guard let item = value as? [String: Any] else { continue }
            let a = c.article(index)
            let missing = a == nil
            let p = "items[\(index)]"
            c.text(item, "title", at: p, a?.title, missing: missing)
            // gofeed `description` is our `summary`; `content` our `content` (values only; the type is Atom-only).
            c.text(item, "description", at: p, a?.summary?.value, missing: missing)
            c.text(item, "content", at: p, a?.content?.value, missing: missing)
            c.text(item, "link", at: p, a?.link, missing: missing)
            c.date(item, "updatedParsed", at: p, a?.updated, raw: a?.updatedRaw, missing: missing)
            c.date(item, "publishedParsed", at: p, a?.published, raw: a?.publishedRaw, missing: missing)
            c.universalPeople(item, at: p, a?.authors)
            if let guid = GofeedJSON.scalar(item["guid"]) { c.identifier("\(p).guid", expected: guid, a) }
            if let image = item["image"] as? [String: Any] { c.text(image, "url", at: "\(p).image", a?.image, missing: missing) }
            // gofeed's universal categories include itunes:keywords; we keep those as `podcast.keywords`, so
            // an item's categories are matched against our categories and keywords together.
            c.categories(item, "categories", at: p, valueKey: nil, a.map { $0.categories + ($0.podcast?.keywords ?? []) })
            // `enclosure` (singular) is gofeed's first enclosure again; compared only when `enclosures` is absent.
            if let list = item["enclosures"] as? [Any] {
                c.enclosures(list, at: "\(p).enclosures", a?.enclosures)
                c.cover("\(p).enclosure")
            } else if let single = item["enclosure"] as? [String: Any] {
                c.enclosures([single], at: "\(p).enclosure", a?.enclosures)
            }
        }
    }
}

/// gofeed's JSON Feed model `json.Feed` (parser/json cases): the JSON Feed fields themselves, under their own names.
enum GofeedJSONFeedAdapter {
    static func check(_ c: GofeedChecker) {
        let e = c.expected
        let m = c.metadata
        if let version = e["version"] as? String {
            let ours = m.format.map { $0.family == .json ? $0.version : $0.description }
            c.version("version", expected: version, actual: ours)
        }
        c.text(e, "title", at: "", m.title)
        c.text(e, "home_page_url", at: "", m.link)
        c.text(e, "feed_url", at: "", m.selfLink)
        c.text(e, "description", at: "", m.description?.value)
        c.text(e, "next_url", at: "", m.nextURL)
        c.text(e, "icon", at: "", m.image)
        c.text(e, "favicon", at: "", m.icon)
        c.text(e, "language", at: "", m.language)
        c.text(e, "expired", at: "", m.expired.map { String($0) })
        // 1.1 `authors` wins over 1.0 `author`: `author` is compared as authors[0] only when there is no list.
        c.universalPeople(e, at: "", m.authors)

        c.itemCount("items")
        for (index, value) in (e["items"] as? [Any] ?? []).enumerated() {
            guard let item = value as? [String: Any] else { continue }
            let a = c.article(index)
            let missing = a == nil
            let p = "items[\(index)]"
            if let id = GofeedJSON.scalar(item["id"]) { c.identifier("\(p).id", expected: id, a) }
            c.text(item, "url", at: p, a?.link, missing: missing)
            c.text(item, "external_url", at: p, a?.externalURL, missing: missing)
            c.text(item, "title", at: p, a?.title, missing: missing)
            // content_html is our content (html); content_text our contentText beside it, or the content alone.
            c.text(item, "content_html", at: p, a?.content?.type == .html ? a?.content?.value : nil, missing: missing)
            c.text(item, "content_text", at: p, a?.content?.type == .html ? a?.contentText : a?.content?.value, missing: missing)
            c.text(item, "summary", at: p, a?.summary?.value, missing: missing)
            c.text(item, "image", at: p, a?.image, missing: missing)
            c.text(item, "banner_image", at: p, a?.bannerImage, missing: missing)
            c.date(item, "date_published", at: p, a?.published, raw: a?.publishedRaw, missing: missing)
            c.date(item, "date_modified", at: p, a?.updated, raw: a?.updatedRaw, missing: missing)
            c.text(item, "language", at: p, a?.language, missing: missing)
            c.universalPeople(item, at: p, a?.authors)
            c.categories(item, "tags", at: p, valueKey: nil, a?.categories)
            for (number, value) in (item["attachments"] as? [Any] ?? []).enumerated() {
                guard let attachment = value as? [String: Any] else { continue }
                let ours = a.flatMap { number < $0.enclosures.count ? $0.enclosures[number] : nil }
                let path = "\(p).attachments[\(number)]"
                c.text(attachment, "url", at: path, ours?.url, missing: missing)
                c.text(attachment, "mime_type", at: path, ours?.type, missing: missing)
                c.text(attachment, "title", at: path, ours?.title, missing: missing)
                c.text(attachment, "size_in_bytes", at: path, ours?.length.map { String($0) }, missing: missing)
                c.text(attachment, "duration_in_seconds", at: path, ours?.durationSeconds.map { String($0) }, missing: missing)
            }
        }
    }
}

/// gofeed's RSS model `rss.Feed` (parser/rss cases).
enum GofeedRSSAdapter {
    static func check(_ c: GofeedChecker) {
        let e = c.expected
        let m = c.metadata
        if let version = e["version"] as? String {
            let ours = m.format.map { $0.family == .rss ? $0.version : $0.description }
            c.version("version", expected: version, actual: ours)
        }
        c.text(e, "title", at: "", m.title)
        c.text(e, "link", at: "", m.link)
        c.text(e, "description", at: "", m.description?.value)
        c.language(e, "language", at: "", m.language)
        c.text(e, "copyright", at: "", m.rights)
        c.text(e, "generator", at: "", m.generator)
        c.text(e, "ttl", at: "", m.ttl.map { String($0) })
        if let editor = e["managingEditor"] as? String { c.rawPerson("managingEditor", expected: editor, actual: m.authors) }
        // webMaster is the feed's publisher (feedparser's mapping), parsed into name and email.
        if let webMaster = e["webMaster"] as? String { c.rawPerson("webMaster", expected: webMaster, actual: m.publisher.map { [$0] } ?? []) }
        // lastBuildDate is our `updated`; pubDate our `published`.
        c.date(e, "lastBuildDateParsed", at: "", m.updated, raw: m.updatedRaw)
        c.date(e, "pubDateParsed", at: "", m.published, raw: m.publishedRaw)
        c.categories(e, "categories", at: "", valueKey: "value", m.categories)
        c.categoryDetails(e, "categories", at: "", termKey: "value", schemeKey: "domain", m.categoryDetails)
        if let image = e["image"] as? [String: Any] {
            c.text(image, "url", at: "image", m.image)
            let details = m.imageDetails
            c.text(image, "title", at: "image", details?.title)
            c.text(image, "link", at: "image", details?.link)
            c.text(image, "width", at: "image", details?.width.map { String($0) })
            c.text(image, "height", at: "image", details?.height.map { String($0) })
            c.text(image, "description", at: "image", details?.description)
        }
        // skipHours are numbers in our model, strings in gofeed's: compared as text, by membership.
        c.categories(e, "skipHours", at: "", valueKey: nil, m.skipHours.map { String($0) })
        c.categories(e, "skipDays", at: "", valueKey: nil, m.skipDays)

        c.itemCount("items")
        for (index, value) in (e["items"] as? [Any] ?? []).enumerated() {
            guard let item = value as? [String: Any] else { continue }
            let a = c.article(index)
            let missing = a == nil
            let p = "items[\(index)]"
            c.text(item, "title", at: p, a?.title, missing: missing)
            c.text(item, "link", at: p, a?.link, missing: missing)
            c.text(item, "description", at: p, a?.summary?.value, missing: missing)
            // gofeed's RSS `content` is content:encoded, our `content`.
            c.text(item, "content", at: p, a?.content?.value, missing: missing)
            if let author = item["author"] as? String { c.rawPerson("\(p).author", expected: author, actual: a?.authors) }
            c.categories(item, "categories", at: p, valueKey: "value", a?.categories)
            c.categoryDetails(item, "categories", at: p, termKey: "value", schemeKey: "domain", a?.categoryDetails)
            if let list = item["enclosures"] as? [Any] {
                c.enclosures(list, at: "\(p).enclosures", a?.enclosures)
                c.cover("\(p).enclosure")
            } else if let single = item["enclosure"] as? [String: Any] {
                c.enclosures([single], at: "\(p).enclosure", a?.enclosures)
            }
            if let guid = (item["guid"] as? [String: Any]).flatMap({ GofeedJSON.scalar($0["value"]) }) {
                c.identifier("\(p).guid.value", expected: guid, a)
            }
            c.date(item, "pubDateParsed", at: p, a?.published, raw: a?.publishedRaw, missing: missing)
            c.text(item, "comments", at: p, a?.comments, missing: missing)
        }
    }
}

/// gofeed's Atom model `atom.Feed` (parser/atom cases).
enum GofeedAtomAdapter {
    static func check(_ c: GofeedChecker) {
        let e = c.expected
        let m = c.metadata
        if let version = e["version"] as? String {
            let ours = m.format.map { $0.family == .atom ? $0.version : $0.description }
            c.version("version", expected: version, actual: ours)
        }
        c.text(e, "title", at: "", m.title)
        c.text(e, "subtitle", at: "", m.description?.value)
        feedLinks(c, e["links"] as? [Any] ?? [])
        c.date(e, "updatedParsed", at: "", m.updated, raw: m.updatedRaw)
        c.text(e, "rights", at: "", m.rights)
        if let generator = e["generator"] as? [String: Any] {
            c.text(generator, "value", at: "generator", m.generator)
            c.text(generator, "uri", at: "generator", m.generatorDetails?.uri)
            c.text(generator, "version", at: "generator", m.generatorDetails?.version)
        }
        c.text(e, "id", at: "", m.id)
        c.text(e, "icon", at: "", m.icon)
        c.text(e, "logo", at: "", m.image)
        c.people(e, "authors", at: "", m.authors)
        c.people(e, "contributors", at: "", m.contributors)
        c.categories(e, "categories", at: "", valueKey: "term", m.categories)
        c.categoryDetails(e, "categories", at: "", termKey: "term", schemeKey: "scheme", m.categoryDetails)
        c.language(e, "language", at: "", m.language)

        c.itemCount("entries")
        for (index, value) in (e["entries"] as? [Any] ?? []).enumerated() {
            guard let entry = value as? [String: Any] else { continue }
            let a = c.article(index)
            let missing = a == nil
            let p = "entries[\(index)]"
            c.text(entry, "title", at: p, a?.title, missing: missing)
            if let id = GofeedJSON.scalar(entry["id"]) { c.identifier("\(p).id", expected: id, a) }
            entryLinks(c, entry["links"] as? [Any] ?? [], at: p, a)
            c.date(entry, "updatedParsed", at: p, a?.updated, raw: a?.updatedRaw, missing: missing)
            c.date(entry, "publishedParsed", at: p, a?.published, raw: a?.publishedRaw, missing: missing)
            c.people(entry, "authors", at: p, a?.authors)
            c.people(entry, "contributors", at: p, a?.contributors)
            c.text(entry, "summary", at: p, a?.summary?.value, missing: missing)
            c.text(entry, "rights", at: p, a?.rights, missing: missing)
            if let content = entry["content"] as? [String: Any] {
                c.text(content, "value", at: "\(p).content", a?.content?.value, missing: missing)
                c.text(content, "src", at: "\(p).content", a?.contentSource?.href, missing: missing)
                // Our content kinds are text and html; Atom `html` and `xhtml` (and their MIME spellings) are
                // html, every other type (text, base64 and XML media types) is text.
                if let type = content["type"] as? String {
                    let html = ["html", "xhtml", "text/html", "application/xhtml+xml"].contains(type.lowercased())
                    c.compareText("\(p).content.type", expected: html ? "html" : "text",
                                  actual: missing ? nil : a?.content?.type.rawValue, missing: missing)
                }
            }
            c.categories(entry, "categories", at: p, valueKey: "term", a?.categories)
            c.categoryDetails(entry, "categories", at: p, termKey: "term", schemeKey: "scheme", a?.categoryDetails)
        }
    }

    static func rel(_ link: [String: Any]) -> String {
        let rel = (link["rel"] as? String).map(GofeedChecker.trim)?.lowercased() ?? ""
        return rel.isEmpty ? "alternate" : rel
    }

    /// Feed links: every one is in our `links` with its attributes (compared by `atomLinks`); by relation, the first
    /// `alternate` (or no rel) is also our `link`, `self` our `selfLink`, `hub` one of our `hubs` (compared as
    /// `links[i].href→link`, `→selfLink`, `→hubs`).
    static func feedLinks(_ c: GofeedChecker, _ links: [Any]) {
        c.atomLinks(links, at: "links", c.metadata.links)
        var sawAlternate = false
        for (index, value) in links.enumerated() {
            guard let link = value as? [String: Any], let href = GofeedJSON.scalar(link["href"]) else { continue }
            let path = "links[\(index)]"
            switch rel(link) {
            case "alternate" where !sawAlternate:
                sawAlternate = true
                c.compareText("\(path).href→link", expected: href, actual: c.metadata.link)
            case "self": c.compareText("\(path).href→selfLink", expected: href, actual: c.metadata.selfLink)
            case "hub": c.member("\(path).href→hubs", expected: href, in: c.metadata.hubs)
            default: break
            }
        }
    }

    /// Entry links: every one is in our `links` with its attributes (compared by `atomLinks`); by relation, the first
    /// `alternate` is also our `link`; `enclosure` one of our enclosures (href, type, length); `replies` our
    /// `comments` (or `commentsFeed` for a feed type).
    static func entryLinks(_ c: GofeedChecker, _ links: [Any], at prefix: String, _ article: Article?) {
        c.atomLinks(links, at: "\(prefix).links", article?.links)
        var sawAlternate = false
        let missing = article == nil
        for (index, value) in links.enumerated() {
            guard let link = value as? [String: Any], let href = GofeedJSON.scalar(link["href"]) else { continue }
            let path = "\(prefix).links[\(index)]"
            switch rel(link) {
            case "alternate" where !sawAlternate:
                sawAlternate = true
                c.compareText("\(path).href→link", expected: href, actual: article?.link, missing: missing)
            case "enclosure":
                let ours = article?.enclosures ?? []
                c.member("\(path).href→enclosures", expected: href, in: ours.map(\.url), missing: missing)
                let match = ours.first { GofeedChecker.trim($0.url) == GofeedChecker.trim(href) }
                if let type = GofeedJSON.scalar(link["type"]) {
                    c.compareText("\(path).type→enclosures", expected: type, actual: match?.type, missing: missing)
                }
                if let length = GofeedJSON.scalar(link["length"]) {
                    c.compareText("\(path).length→enclosures", expected: length, actual: match?.length.map { String($0) }, missing: missing)
                }
            case "replies":
                let type = (link["type"] as? String ?? "").lowercased()
                let isFeed = type.contains("atom") || type.contains("rss") || type.contains("xml")
                c.compareText("\(path).href→comments", expected: href, actual: isFeed ? article?.commentsFeed : article?.comments, missing: missing)
            default: break
            }
        }
    }
}

/// Values we produce where gofeed's JSON has none (gofeed omits empty fields, so an absent key means
/// "empty"). Not counted: our model adds documented fallbacks gofeed's models do not have (a permalink guid
/// as the link, dc:date as the date, …). Printed so a leak (a source feed's title becoming the entry's) shows.
enum GofeedExtras {
    static func check(_ c: GofeedChecker, model: String) -> [String] {
        var extras: [String] = []
        func extra(_ object: [String: Any], _ key: String, at prefix: String, _ ours: String?) {
            guard object[key] == nil, let ours, !GofeedChecker.trim(ours).isEmpty else { return }
            extras.append("\(c.file) | \(GofeedJSON.join(prefix, key)) | gofeed: none | ours: \(GofeedChecker.show(ours))")
        }
        func list(_ values: [String]) -> String? { values.isEmpty ? nil : values.joined(separator: ", ") }
        func people(_ people: [Person]) -> String? {
            list(people.map { [$0.name, $0.email, $0.uri].compactMap { $0 }.joined(separator: " ") })
        }
        let e = c.expected
        let m = c.metadata
        let date: (Date?) -> String? = { $0.map(FeedDate.rfc3339) }
        switch model {
        case "rss":
            extra(e, "title", at: "", m.title)
            extra(e, "description", at: "", m.description?.value)
            extra(e, "link", at: "", m.link)
            extra(e, "language", at: "", m.language)
            extra(e, "copyright", at: "", m.rights)
            extra(e, "generator", at: "", m.generator)
            for (index, value) in (e["items"] as? [Any] ?? []).enumerated() {
                guard let item = value as? [String: Any], let a = c.article(index) else { continue }
                let p = "items[\(index)]"
                extra(item, "title", at: p, a.title)
                extra(item, "description", at: p, a.summary?.value)
                extra(item, "content", at: p, a.content?.value)
                extra(item, "comments", at: p, a.comments)
            }
        case "atom":
            extra(e, "title", at: "", m.title)
            extra(e, "subtitle", at: "", m.description?.value)
            extra(e, "rights", at: "", m.rights)
            extra(e, "icon", at: "", m.icon)
            extra(e, "logo", at: "", m.image)
            extra(e, "generator", at: "", m.generator)
            extra(e, "authors", at: "", people(m.authors))
            extra(e, "updatedParsed", at: "", date(m.updated))
            for (index, value) in (e["entries"] as? [Any] ?? []).enumerated() {
                guard let entry = value as? [String: Any], let a = c.article(index) else { continue }
                let p = "entries[\(index)]"
                extra(entry, "title", at: p, a.title)
                extra(entry, "summary", at: p, a.summary?.value)
                extra(entry, "content", at: p, a.content?.value)
                extra(entry, "authors", at: p, people(a.authors))
                extra(entry, "categories", at: p, list(a.categories))
                extra(entry, "publishedParsed", at: p, date(a.published))
                extra(entry, "updatedParsed", at: p, date(a.updated))
            }
        case "json":
            extra(e, "title", at: "", m.title)
            extra(e, "home_page_url", at: "", m.link)
            extra(e, "description", at: "", m.description?.value)
            extra(e, "language", at: "", m.language)
            for (index, value) in (e["items"] as? [Any] ?? []).enumerated() {
                guard let item = value as? [String: Any], let a = c.article(index) else { continue }
                let p = "items[\(index)]"
                extra(item, "title", at: p, a.title)
                extra(item, "url", at: p, a.link)
                extra(item, "summary", at: p, a.summary?.value)
                extra(item, "tags", at: p, list(a.categories))
                extra(item, "date_published", at: p, date(a.published))
                extra(item, "date_modified", at: p, date(a.updated))
            }
        default:
            extra(e, "title", at: "", m.title)
            extra(e, "description", at: "", m.description?.value)
            extra(e, "link", at: "", m.link)
            extra(e, "language", at: "", m.language)
            extra(e, "copyright", at: "", m.rights)
            extra(e, "generator", at: "", m.generator)
            extra(e, "authors", at: "", people(m.authors))
            extra(e, "categories", at: "", list(m.categories))
            for (index, value) in (e["items"] as? [Any] ?? []).enumerated() {
                guard let item = value as? [String: Any], let a = c.article(index) else { continue }
                let p = "items[\(index)]"
                extra(item, "title", at: p, a.title)
                extra(item, "description", at: p, a.summary?.value)
                extra(item, "content", at: p, a.content?.value)
                extra(item, "link", at: p, a.link)
                extra(item, "authors", at: p, people(a.authors))
                extra(item, "categories", at: p, list(a.categories))
                extra(item, "enclosures", at: p, list(a.enclosures.map(\.url)))
                extra(item, "publishedParsed", at: p, date(a.published))
                extra(item, "updatedParsed", at: p, date(a.updated))
                extra(item, "image", at: p, a.image)
            }
        }
        return extras
    }
}
