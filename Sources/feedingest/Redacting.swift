import Fetch
import Foundation
import Support
import Syndication

// The command's one rule for what it shows: a URL's password never reaches stdout, stderr or a report
// (`Redaction.redactedURL`, libcurl's URL parser with a plain fallback). Stored values keep their credentials; only the
// copies written out are redacted, at the edge.

extension Article {
    /// A copy for output: every URL field (`feed`, `id` when it is a URL, `link`, enclosures, links, images, comments,
    /// people's `uri`, podcast transcripts and chapters) with its password replaced by `***`. Text (titles, summary,
    /// content) is the publisher's and is left as it is. Costs one scan for `@` per field when no URL has credentials.
    func redactingPasswords() -> Article {
        guard mayCarryCredentials else { return self }
        return redactedCopy()
    }

    /// Writes the article as ``write(to:extra:)`` does, with passwords redacted; without a copy of the article when no
    /// URL field has credentials (a copy and its destruction were ~2% of `feedingest parse`).
    func writeRedacted(to json: inout JSONWriter, extra: [(key: String, value: String)] = []) {
        if mayCarryCredentials {
            redactedCopy().write(to: &json, extra: extra)
        } else {
            write(to: &json, extra: extra)
        }
    }

    private func redactedCopy() -> Article {
        var article = self
        let redact = Redaction.redactedURL
        article.feed = redact(feed)
        article.id = redact(id)
        article.link = link.map(redact)
        article.image = image.map(redact)
        article.comments = comments.map(redact)
        article.commentsFeed = commentsFeed.map(redact)
        article.externalURL = externalURL.map(redact)
        article.bannerImage = bannerImage.map(redact)
        for index in article.enclosures.indices { article.enclosures[index].url = redact(enclosures[index].url) }
        for index in article.links.indices { article.links[index].href = redact(links[index].href) }
        for index in article.authors.indices { article.authors[index].uri = authors[index].uri.map(redact) }
        for index in article.contributors.indices { article.contributors[index].uri = contributors[index].uri.map(redact) }
        article.contentSource?.href = redact(contentSource?.href ?? "")
        if var podcast = article.podcast {
            podcast.chaptersURL = podcast.chaptersURL.map(redact)
            for index in podcast.transcripts.indices { podcast.transcripts[index].url = redact(podcast.transcripts[index].url) }
            article.podcast = podcast
        }
        return article
    }
}

extension Article {
    /// Whether any URL field has an `@` in its authority (credentials need one there): when none has, the article is
    /// written as it is, with no copy (the common case; `parse` of a 200 MB feed stays within its memory bound).
    private var mayCarryCredentials: Bool {
        func has(_ text: String?) -> Bool {
            guard let utf8 = text?.utf8 else { return false }
            return utf8.withContiguousStorageIfAvailable { Self.authorityHasAt($0) } ?? Self.authorityHasAt(Array(utf8))
        }
        return has(feed) || has(id) || has(link) || has(image) || has(comments) || has(commentsFeed) || has(externalURL)
            || has(bannerImage) || has(contentSource?.href) || enclosures.contains { has($0.url) } || links.contains { has($0.href) }
            || authors.contains { has($0.uri) } || contributors.contains { has($0.uri) }
            || podcast.map { has($0.chaptersURL) || $0.transcripts.contains { has($0.url) } } ?? false
    }

    /// Whether an `@` comes before the end of the URL's authority: after `scheme://` when the text starts with one, the
    /// first `/`, `?` or `#`. Only the first few bytes of a URL are looked at, not the whole of a long one (issue 18);
    /// text without `://` is looked at from its start, so `user:pass@host/feed` still counts.
    static func authorityHasAt(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer { authorityHasAt($0) } }

    static func authorityHasAt(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Most URLs have no `@` at all: one memchr (libc's, wide) settles those.
        guard let start = bytes.baseAddress, memchr(start, 0x40, bytes.count) != nil else { return false }
        var index = 0
        // The scheme: letters, digits, `+`, `-`, `.`, then `://`.
        while index < bytes.count, case let byte = bytes[index],
              (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A || (byte >= 0x30 && byte <= 0x39) || byte == 0x2B || byte == 0x2D || byte == 0x2E {
            index += 1
        }
        if index + 2 < bytes.count && bytes[index] == 0x3A && bytes[index + 1] == 0x2F && bytes[index + 2] == 0x2F {
            index += 3
        } else {
            index = 0
        }
        while index < bytes.count {
            switch bytes[index] {
            case 0x40: return true  // @
            case 0x2F, 0x3F, 0x23: return false  // / ? #
            default: index += 1
            }
        }
        return false
    }
}

extension FeedMetadata {
    /// A copy for output (`parse --report`): the feed's id, links, hubs, images, next page and people's `uri` with their passwords
    /// replaced by `***`.
    func redactingPasswords() -> FeedMetadata {
        var metadata = self
        let redact = Redaction.redactedURL
        metadata.link = link.map(redact)
        metadata.selfLink = selfLink.map(redact)
        metadata.hubs = hubs.map(redact)
        metadata.image = image.map(redact)
        metadata.icon = icon.map(redact)
        metadata.nextURL = nextURL.map(redact)
        metadata.id = id.map(redact)
        if var details = imageDetails {
            details.url = details.url.map(redact)
            details.link = details.link.map(redact)
            metadata.imageDetails = details
        }
        if var publisher { publisher.uri = publisher.uri.map(redact); metadata.publisher = publisher }
        for index in metadata.authors.indices { metadata.authors[index].uri = authors[index].uri.map(redact) }
        return metadata
    }
}
