import Fetch
import Syndication

// The command's one rule for what it shows: a URL's password never reaches stdout, stderr or a report
// (`Redaction.redactedURL`, libcurl's URL parser with a plain fallback). Stored values keep their credentials; only the
// copies written out are redacted, at the edge.

extension Article {
    /// A copy for output: every URL field (`feed`, `id` when it is a URL, `link`, enclosures, links, images, comments,
    /// people's `uri`, podcast transcripts and chapters) with its password replaced by `***`. Text (titles, summary,
    /// content) is the publisher's and is left as it is. Costs one scan for `@` per field when no URL has credentials.
    func redactingPasswords() -> Article {
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
