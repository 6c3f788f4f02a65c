@testable import ArticleStore
import Foundation
import Syndication
import Testing

@Suite("Content hash and row encoding")
struct HasherTests {
    /// Reference values from the xxHash project's own implementation (Python `xxhash.xxh64_intdigest`).
    @Test(arguments: [
        ("", 0xEF46_DB37_51D8_E999),
        ("a", 0xD24E_C4F1_A98C_6E5B),
        ("abc", 0x44BC_2CF5_AD77_0999),
        ("Nobody inspects the spammish repetition", 0xFBCE_A83C_8A37_8BF1),
        (String(repeating: "0123456789abcdef", count: 5) + "xyz", 0x2CF0_AB3F_2D7C_78C7),
    ] as [(String, UInt64)])
    func xxHash64MatchesTheReference(input: String, expected: UInt64) {
        let hash = Array(input.utf8).withUnsafeBytes { ArticleHasher.xxHash64($0) }
        #expect(hash == expected, "XXH64(\"\(input)\") = 0x\(String(hash, radix: 16))")
    }

    /// xxHash's own self-test vectors (xxhsum's sanity check, `cli/xsum_sanity_check.c` in the xxHash repository):
    /// XXH64 over a prefix of its pseudo-random test buffer, with seed 0 and seed PRIME32. They cover the empty input,
    /// the tail paths (1, 4 and 14 bytes) and the 32-byte stripe loop (222 bytes).
    @Test(arguments: [
        (0, 0, 0xEF46_DB37_51D8_E999), (0, 2_654_435_761, 0xAC75_FDA2_929B_17EF),
        (1, 0, 0xE934_A84A_DB05_2768), (1, 2_654_435_761, 0x5014_6076_43A9_B4C3),
        (4, 0, 0x9136_A0DC_A574_57EE),
        (14, 0, 0x8282_DCC4_994E_35C8), (14, 2_654_435_761, 0xC3BD_6BF6_3DEB_6DF0),
        (222, 0, 0xB641_AE8C_B691_C174), (222, 2_654_435_761, 0x20CB_8AB7_AE10_C14A),
    ] as [(Int, UInt64, UInt64)])
    func xxHash64MatchesTheSpecificationVectors(length: Int, seed: UInt64, expected: UInt64) {
        // xxhsum's test buffer: byte i is the top byte of PRIME32 * PRIME64^i (mod 2^64).
        var buffer = [UInt8](repeating: 0, count: 222)
        var generator: UInt64 = 2_654_435_761
        for index in buffer.indices {
            buffer[index] = UInt8(truncatingIfNeeded: generator >> 56)
            generator &*= 11_400_714_785_074_694_797
        }
        let hash = buffer.withUnsafeBytes { ArticleHasher.xxHash64(UnsafeRawBufferPointer(rebasing: $0[0..<length]), seed: seed) }
        #expect(hash == expected, "XXH64(\(length) bytes, seed \(seed)) = 0x\(String(hash, radix: 16))")
    }

    @Test func contentHashSeesEveryFieldButFeedAndCommentCount() {
        var base = makeArticle("a")
        base.authors = [Person(name: "Ada", email: "ada@example.com")]
        base.categories = ["x"]
        base.enclosures = [Enclosure(url: "https://example.com/a.mp3", type: "audio/mpeg", length: 10)]
        let hash = ArticleHasher.contentHash(of: base)
        #expect(ArticleHasher.contentHash(of: base) == hash, "stable")

        var changes: [(String, (inout Article) -> Void)] = [
            ("title", { $0.title = "Other" }),
            ("title nil", { $0.title = nil }),
            ("link", { $0.link = "https://example.com/other" }),
            ("published", { $0.published = Date(timeIntervalSince1970: 1) }),
            ("publishedRaw", { $0.publishedRaw = "yesterday" }),
            ("updated", { $0.updated = Date(timeIntervalSince1970: 2) }),
            ("authors", { $0.authors.append(Person(name: "Grace")) }),
            ("author email", { $0.authors[0].email = nil }),
            ("summary", { $0.summary = TextContent("s", type: .text) }),
            ("content", { $0.content = TextContent("other", type: .html) }),
            ("content type", { $0.content?.type = .text }),
            ("categories", { $0.categories = ["y"] }),
            ("enclosure length", { $0.enclosures[0].length = 11 }),
            ("image", { $0.image = "https://example.com/i.png" }),
            ("comments", { $0.comments = "https://example.com/c" }),
            ("language", { $0.language = "de" }),
            ("id", { $0.id = "b" }),
            ("podcast", { var p = PodcastDetails(); p.episode = 3; $0.podcast = p }),
        ]
        // Moving text between two adjacent fields must change the hash (the encoding is length-prefixed).
        changes.append(("split", { $0.title = "Title"; $0.link = " a" + ($0.link ?? "") }))
        for (name, change) in changes {
            var changed = base
            change(&changed)
            #expect(ArticleHasher.contentHash(of: changed) != hash, "changing \(name) must change the hash")
        }
        var sameContent = base
        sameContent.feed = "https://elsewhere.example/feed"
        sameContent.commentCount = 42
        #expect(ArticleHasher.contentHash(of: sameContent) == hash, "feed and comment count are not content")
    }

    @Test func fallbackKeyDependsOnTitleDateAndContent() {
        let article = makeArticle("x")
        let key = ArticleHasher.fallbackKey(of: article)
        #expect(key.hasPrefix("hash:") && key.count == 21)
        var otherLink = article
        otherLink.link = "https://example.com/elsewhere"
        #expect(ArticleHasher.fallbackKey(of: otherLink) == key)
        var otherTitle = article
        otherTitle.title = "New title"
        #expect(ArticleHasher.fallbackKey(of: otherTitle) != key)
    }

    @Test func listColumnsAreValidJSONThatReadsBack() throws {
        var article = makeArticle("json")
        article.authors = [Person(name: "Quote \" and \\ backslash", email: "a@b.c", uri: nil), Person(name: nil, email: nil, uri: "https://u")]
        article.categories = ["tab\there", "newline\nthere", "control \u{01}", "東京"]
        article.enclosures = [Enclosure(url: "https://e/1", type: nil, length: nil), Enclosure(url: "https://e/2", type: "video/mp4", length: -1)]
        var podcast = PodcastDetails()
        podcast.durationSeconds = 3723
        podcast.explicit = false
        podcast.keywords = ["a", "b"]
        podcast.transcripts = [Transcript(url: "https://t", type: "text/vtt", language: "en")]
        podcast.chaptersURL = "https://c"
        article.podcast = podcast
        let row = ArticleRow()
        row.encode(article)
        func text(_ column: ArticleRow.Column) -> String? { row.bytes(column).map { String(decoding: $0, as: UTF8.self) } }
        for column in [ArticleRow.Column.authors, .categories, .enclosures, .podcast] {
            let json = try #require(text(column))
            #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(json.utf8)) }
        }
        #expect(try ListColumns.decodeAuthors(text(.authors)) == article.authors)
        #expect(try ListColumns.decodeStrings(text(.categories)) == article.categories)
        #expect(try ListColumns.decodeEnclosures(text(.enclosures)) == article.enclosures)
        #expect(try ListColumns.decodePodcast(text(.podcast)) == article.podcast)
        #expect(text(.image) == nil, "absent values are NULL")
    }
}
