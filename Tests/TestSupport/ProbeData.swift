import Foundation
import Syndication

/// The deterministic articles the StoreProbe child ingests, the store tests expect and the store benchmark stores: the same on every run and machine.
///
/// Each article is about 1.3 KB of text (summary ~250 B, content ~800 B), like an item of the benchmark's generated feed: a title with
/// non-ASCII text, a link, a guid, a date, an author, two categories, an HTML summary and content, and an
/// enclosure. `version` changes the content (not the identity) of every third article, to exercise updates.
public enum ProbeData {
    /// The URL of probe feed `feed`.
    public static func feedURL(_ feed: Int) -> String { "https://probe.example/feeds/\(feed).xml" }

    /// The guid of article `index` of `feed`.
    public static func guid(feed: Int, index: Int) -> String { "urn:probe:\(feed):\(index)" }

    /// A random-looking guid for article `index` of `feed`, like the `urn:uuid:` guids of many real feeds: its
    /// position in the key index is random, the worst case for inserts.
    public static func randomGUID(feed: Int, index: Int) -> String {
        var random = SplitMix64(seed: UInt64(feed) << 32 ^ UInt64(index) ^ 0x5555_AAAA)
        let (a, b) = (random.next(), random.next())
        return "urn:uuid:" + String(a, radix: 16) + "-" + String(b, radix: 16)
    }

    /// Article `index` of `feed`; with `randomGUIDs`, its guid is ``randomGUID(feed:index:)``.
    public static func article(feed: Int, index: Int, version: Int = 1, randomGUIDs: Bool = false) -> Article {
        var random = SplitMix64(seed: UInt64(feed) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index))
        let id = randomGUIDs ? randomGUID(feed: feed, index: index) : guid(feed: feed, index: index)
        var article = Article(id: id, idSource: .guid, feed: feedURL(feed))
        let changed = version > 1 && index % 3 == 0
        let suffix = changed ? " (v\(version))" : ""
        article.title = titles[random.next(below: titles.count)] + " — Zürich — 東京 #\(index)" + suffix
        article.link = "https://probe.example/\(feed)/2025/01/\(index)-" + words[random.next(below: words.count)]
        article.published = Date(timeIntervalSince1970: 1_735_689_600 - Double(index) * 1800 - Double(random.next(below: 600)))
        article.authors = [Person(name: authors[random.next(below: authors.count)])]
        article.categories = [words[random.next(below: words.count)], "tag-\(random.next(below: 40))"]
        article.summary = TextContent(summaries[random.next(below: summaries.count)], type: .html)
        let body = bodies[random.next(below: bodies.count)]
        article.content = TextContent(
            "<div><p>#\(index) " + body + (changed ? " Corrected in v\(version)." : "") + "</p></div>", type: .html)
        article.enclosures = [Enclosure(url: "https://cdn.probe.example/\(feed)/\(index).mp3", type: "audio/mpeg",
                                        length: Int64(1_000_000 + random.next(below: 50_000_000)))]
        article.language = "en"
        return article
    }

    /// Text pieces, built once: articles combine them, so generating one costs little next to storing it.
    private static let titles: [String] = (0..<64).map { seed in
        var random = SplitMix64(seed: 0x7469_746C ^ UInt64(seed))
        return (0..<(4 + random.next(below: 5))).map { _ in words[random.next(below: words.count)] }.joined(separator: " ")
    }
    private static let summaries: [String] = (0..<64).map { seed in
        var random = SplitMix64(seed: 0x7375_6D6D ^ UInt64(seed))
        return "<p>" + (0..<(30 + random.next(below: 10))).map { _ in words[random.next(below: words.count)] }.joined(separator: " ") + "</p>"
    }
    private static let bodies: [String] = (0..<64).map { seed in
        var random = SplitMix64(seed: 0x626F_6479 ^ UInt64(seed))
        var text = ""
        for sentence in 0..<(6 + random.next(below: 4)) {
            if sentence % 4 == 3 { text += "</p><p>" }
            text += (0..<(9 + random.next(below: 6))).map { _ in words[random.next(below: words.count)] }.joined(separator: " ")
            text += " <a href=\"https://probe.example/r/\(random.next(below: 100_000))\">more</a>. "
        }
        return text
    }

    /// The words articles are made of (some non-ASCII).
    public static let words = [
        "market", "election", "council", "river", "bridge", "science", "budget", "stadium", "harbour", "festival",
        "railway", "museum", "climate", "startup", "orchestra", "summit", "vaccine", "satellite", "library", "harvest",
        "Überblick", "naïve", "café", "smörgåsbord", "façade", "jalapeño", "résumé", "piñata", "coöperate", "über",
    ]
    /// The authors articles name.
    public static let authors = ["Ada Lovelace", "Grace Hopper", "Jürgen Schmidt", "Amélie Durand", "山田太郎", "Olusegun Obi"]
}
