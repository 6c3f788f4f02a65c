import Foundation
import Syndication

/// Reads back the article's list-valued columns (`authors`, `categories`, `enclosures`, `podcast`).
///
/// They are JSON, so that `sqlite3` users can query them with SQLite's JSON functions
/// (`SELECT value FROM articles, json_each(categories)`). ``ArticleRow`` writes them by hand, straight into its
/// buffer, because `JSONEncoder` would cost more per article than the whole insert; only offline reads decode
/// them, with `JSONDecoder`. Field names follow the Swift model (`name`, `email`, `uri`; `url`, `type`, `length`;
/// `durationSeconds`, `episode`, …); absent values are omitted and empty lists are NULL.
package enum ListColumns {
    // MARK: Reading back

    private struct PersonJSON: Decodable {
        var name: String?; var email: String?; var uri: String?; var avatar: String?
        var person: Person { Person(name: name, email: email, uri: uri, avatar: avatar) }
    }
    private struct EnclosureJSON: Decodable {
        var url: String; var type: String?; var length: Int64?; var title: String?; var durationSeconds: Int?
    }
    private struct LinkJSON: Decodable {
        var href: String; var rel: String?; var type: String?; var title: String?; var hreflang: String?; var length: Int64?
        var link: Link { Link(href: href, rel: rel, type: type, title: title, hreflang: hreflang, length: length) }
    }
    private struct CategoryJSON: Decodable { var term: String; var scheme: String?; var label: String?; var parent: String? }
    private struct DetailsJSON: Decodable {
        var externalURL: String?
        var contentText: String?
        var bannerImage: String?
        var links: [LinkJSON]?
        var categoryDetails: [CategoryJSON]?
        var contentSource: LinkJSON?
        var license: String?
        var rights: String?
        var contributors: [PersonJSON]?
    }
    private struct TranscriptJSON: Decodable { var url: String; var type: String?; var language: String? }
    private struct PodcastJSON: Decodable {
        var durationSeconds: Int?
        var episode: Int?
        var season: Int?
        var explicit: Bool?
        var keywords: [String]?
        var guid: String?
        var transcripts: [TranscriptJSON]?
        var chaptersURL: String?
    }

    package static func decodeAuthors(_ text: String?) throws -> [Person] {
        guard let text else { return [] }
        return try JSONDecoder().decode([PersonJSON].self, from: Data(text.utf8))
            .map(\.person)
    }

    package static func decodeStrings(_ text: String?) throws -> [String] {
        guard let text else { return [] }
        return try JSONDecoder().decode([String].self, from: Data(text.utf8))
    }

    package static func decodeEnclosures(_ text: String?) throws -> [Enclosure] {
        guard let text else { return [] }
        return try JSONDecoder().decode([EnclosureJSON].self, from: Data(text.utf8))
            .map { Enclosure(url: $0.url, type: $0.type, length: $0.length, title: $0.title, durationSeconds: $0.durationSeconds) }
    }

    /// Sets the fields of the `details` column (see `ArticleRow`) on `article`.
    package static func decodeDetails(_ text: String?, into article: inout Article) throws {
        guard let text else { return }
        let json = try JSONDecoder().decode(DetailsJSON.self, from: Data(text.utf8))
        article.externalURL = json.externalURL
        article.contentText = json.contentText
        article.bannerImage = json.bannerImage
        article.links = (json.links ?? []).map(\.link)
        article.categoryDetails = (json.categoryDetails ?? []).map {
            Category(term: $0.term, scheme: $0.scheme, label: $0.label, parent: $0.parent)
        }
        article.contentSource = json.contentSource?.link
        article.license = json.license
        article.rights = json.rights
        article.contributors = (json.contributors ?? []).map(\.person)
    }

    package static func decodePodcast(_ text: String?) throws -> PodcastDetails? {
        guard let text else { return nil }
        let json = try JSONDecoder().decode(PodcastJSON.self, from: Data(text.utf8))
        var podcast = PodcastDetails()
        podcast.durationSeconds = json.durationSeconds
        podcast.episode = json.episode
        podcast.season = json.season
        podcast.explicit = json.explicit
        podcast.keywords = json.keywords ?? []
        podcast.guid = json.guid
        podcast.transcripts = (json.transcripts ?? []).map { Transcript(url: $0.url, type: $0.type, language: $0.language) }
        podcast.chaptersURL = json.chaptersURL
        return podcast
    }
}
