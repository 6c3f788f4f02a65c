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

    private struct PersonJSON: Decodable { var name: String?; var email: String?; var uri: String? }
    private struct EnclosureJSON: Decodable { var url: String; var type: String?; var length: Int64? }
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
            .map { Person(name: $0.name, email: $0.email, uri: $0.uri) }
    }

    package static func decodeStrings(_ text: String?) throws -> [String] {
        guard let text else { return [] }
        return try JSONDecoder().decode([String].self, from: Data(text.utf8))
    }

    package static func decodeEnclosures(_ text: String?) throws -> [Enclosure] {
        guard let text else { return [] }
        return try JSONDecoder().decode([EnclosureJSON].self, from: Data(text.utf8))
            .map { Enclosure(url: $0.url, type: $0.type, length: $0.length) }
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
