import Foundation
import TestSupport

/// The "seed set": 14 feeds shaped like the list iPhoneExpat was demonstrated with (the iTunes top-300 albums feed
/// twice, Dilbert, a Blogger Atom feed, Slate, USA Today, Flickr, …), from 5 KB to 1 MB. Shaped by format, item count
/// and size; the items themselves are the generator's (title, link, guid, date, HTML description and content).
enum SeedSet {
    struct Feed {
        /// File stem and the name in tables.
        var name: String
        var format: FeedFormat
        var items: Int
        /// Keeps two feeds of the same shape from being byte-identical.
        var seed: UInt64
    }

    static let feeds: [Feed] = [
        Feed(name: "01-itunes-top300-albums", format: .rss, items: 300, seed: 1),
        Feed(name: "02-itunes-top300-albums-again", format: .rss, items: 300, seed: 2),
        Feed(name: "03-dilbert-daily", format: .rss, items: 7, seed: 3),
        Feed(name: "04-blogger-atom", format: .atom, items: 150, seed: 4),
        Feed(name: "05-slate", format: .rss, items: 40, seed: 5),
        Feed(name: "06-usatoday-topstories", format: .rss, items: 50, seed: 6),
        Feed(name: "07-flickr-public-photos", format: .atom, items: 20, seed: 7),
        Feed(name: "08-nytimes-homepage", format: .rss, items: 60, seed: 8),
        Feed(name: "09-bbc-news", format: .rss, items: 70, seed: 9),
        Feed(name: "10-daring-fireball", format: .atom, items: 47, seed: 10),
        Feed(name: "11-apple-hot-news", format: .rss, items: 20, seed: 11),
        Feed(name: "12-cnn-top-stories", format: .rss, items: 100, seed: 12),
        Feed(name: "13-xkcd", format: .atom, items: 4, seed: 13),
        Feed(name: "14-podcast-archive", format: .rss, items: 740, seed: 14),
    ]

    /// The seed set on disk (generated once, cached), with gzip copies beside the files.
    static func ensure(directory: String) throws -> [Fixture] {
        let fixtures = try feeds.map { feed in
            try Fixture.ensure(name: feed.name, format: feed.format, items: feed.items, seed: feed.seed,
                               directory: directory + "/seed", stem: feed.name)
        }
        for fixture in fixtures { try Gzip.ensure(fixture.path) }
        return fixtures
    }
}
