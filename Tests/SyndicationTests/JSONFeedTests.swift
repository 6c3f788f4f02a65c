import ExpatXML
import Foundation
import StreamingJSON
import Syndication
import TestSupport
import Testing

/// A JSON Feed 1.1 document with the given items (each a JSON object's members) and extra top-level members.
func jsonFeed(_ items: [String], feed: String = #""title":"T""#, version: String = "https://jsonfeed.org/version/1.1") -> String {
    #"{"version":"\#(version)",\#(feed),"items":["# + items.map { "{\($0)}" }.joined(separator: ",") + "]}"
}

@Suite("JSON Feed")
struct JSONFeedTests {
    @Test func everyFieldOfAnItemAndTheFeedIsMapped() throws {
        let document = """
            {
              "version": "https://jsonfeed.org/version/1.1",
              "title": "Example", "home_page_url": "https://example.org/", "feed_url": "https://example.org/feed.json",
              "description": "All about examples", "user_comment": "for readers of the source",
              "next_url": "https://example.org/feed.json?page=2", "icon": "https://example.org/icon.png",
              "favicon": "https://example.org/favicon.ico", "language": "en-GB", "expired": false,
              "authors": [{"name": "Feed Author", "url": "https://example.org/me", "avatar": "https://example.org/me.png"}],
              "hubs": [{"type": "WebSub", "url": "https://hub.example.org/"}],
              "items": [{
                "id": "item-1", "url": "https://example.org/1", "external_url": "https://elsewhere.example/story",
                "title": "One", "content_html": "<p>Hello <img src=\\"https://example.org/inline.png\\"></p>",
                "content_text": "Hello", "summary": "A greeting", "image": "https://example.org/1.png",
                "banner_image": "https://example.org/1-banner.png",
                "date_published": "2024-05-06T07:08:09.5+02:00", "date_modified": "yesterday-ish",
                "authors": [{"name": "Item Author", "url": "https://example.org/item-author"}],
                "tags": ["a", " b ", "a", ""], "language": "de",
                "attachments": [{"url": "https://example.org/1.mp3", "mime_type": "audio/mpeg", "title": "MP3",
                                 "size_in_bytes": 1234, "duration_in_seconds": 61.6}]
              }]
            }
            """
        let result = parseFeed(Array(document.utf8), source: "feed.json")
        #expect(result.summary.error == nil)
        #expect(result.summary.jsonRepairs.isEmpty, "\(result.summary.jsonRepairs)")
        let feed = result.summary.metadata
        #expect(feed.format == FeedFormat(family: .json, version: "1.1"))
        #expect(feed.format?.description == "JSON Feed 1.1")
        #expect(feed.title == "Example")
        #expect(feed.link == "https://example.org/")
        #expect(feed.selfLink == "https://example.org/feed.json")
        #expect(feed.description == TextContent("All about examples", type: .text))
        #expect(feed.nextURL == "https://example.org/feed.json?page=2")
        #expect(feed.image == "https://example.org/icon.png")
        #expect(feed.icon == "https://example.org/favicon.ico")
        #expect(feed.language == "en-GB")
        #expect(feed.expired == false)
        #expect(feed.authors == [Person(name: "Feed Author", uri: "https://example.org/me", avatar: "https://example.org/me.png")])
        #expect(feed.hubs == ["https://hub.example.org/"])

        let article = try #require(result.articles.first)
        #expect(result.articles.count == 1)
        #expect(article.id == "item-1")
        #expect(article.idSource == .guid)
        #expect(article.feed == "feed.json")
        #expect(article.link == "https://example.org/1")
        #expect(article.externalURL == "https://elsewhere.example/story")
        #expect(article.title == "One")
        #expect(article.content == TextContent("<p>Hello <img src=\"https://example.org/inline.png\"></p>", type: .html))
        #expect(article.contentText == "Hello")
        #expect(article.summary == TextContent("A greeting", type: .text))
        #expect(article.image == "https://example.org/1.png")
        #expect(article.bannerImage == "https://example.org/1-banner.png")
        #expect(article.published.map(FeedDate.rfc3339) == "2024-05-06T05:08:09.500Z")
        #expect(article.updated == nil)
        #expect(article.updatedRaw == "yesterday-ish", "an unreadable date is kept as text")
        #expect(article.authors == [Person(name: "Item Author", uri: "https://example.org/item-author")])
        #expect(article.categories == ["a", "b"])
        #expect(article.language == "de")
        #expect(article.enclosures == [Enclosure(url: "https://example.org/1.mp3", type: "audio/mpeg", length: 1234, title: "MP3",
                                                 durationSeconds: 62)])
    }

    @Test func identifiersAndTheirFallbacks() {
        let result = parseFeed(Array(jsonFeed([
            #""id":12345678901234567890,"title":"integer id""#,
            #""url":"https://example.org/no-id","title":"no id""#,
            #""id":"","url":"https://example.org/empty-id""#,
            #""title":"nothing","content_text":"body""#,
        ]).utf8))
        #expect(result.summary.error == nil)
        #expect(result.articles.map(\.id).prefix(3) == ["12345678901234567890", "https://example.org/no-id", "https://example.org/empty-id"])
        #expect(result.articles.map(\.idSource) == [.guid, .link, .link, .hash])
        #expect(result.articles[3].id.hasPrefix("hash:") && result.articles[3].id.count == 21)
        // The same item gives the same hash (a stable key), another item another one.
        let again = parseFeed(Array(jsonFeed([#""title":"nothing","content_text":"body""#, #""title":"other""#]).utf8))
        #expect(again.articles.first?.id == result.articles[3].id)
        #expect(again.articles.last?.id != result.articles[3].id)
    }

    @Test func contentTextAloneIsTheContentAndBannerImageTheImage() {
        let article = parseFeed(Array(jsonFeed([#""id":"1","content_text":"plain","banner_image":"https://e.org/b.png""#]).utf8)).articles.first
        #expect(article?.content == TextContent("plain", type: .text))
        #expect(article?.contentText == nil)
        #expect(article?.image == "https://e.org/b.png")
        #expect(article?.bannerImage == "https://e.org/b.png")
        // Without either image, an image attachment, then the first <img> of the HTML.
        let fallback = parseFeed(Array(jsonFeed([
            #""id":"1","attachments":[{"url":"https://e.org/a.mp3","mime_type":"audio/mpeg"},{"url":"https://e.org/p.jpg","mime_type":"image/jpeg"}]"#,
            #""id":"2","content_html":"<p><img src='https://e.org/inline.png'></p>""#,
        ]).utf8)).articles
        #expect(fallback.map(\.image) == ["https://e.org/p.jpg", "https://e.org/inline.png"])
    }

    @Test func authorsFollowVersionPrecedenceAndFallBackToTheFeeds() {
        // 1.1 `authors` wins over 1.0 `author` in either order; an item without either takes the feed's.
        let result = parseFeed(Array(jsonFeed([
            #""id":"1""#,
            #""id":"2","author":{"name":"Legacy"}"#,
            #""id":"3","author":{"name":"Legacy"},"authors":[{"name":"Modern"}]"#,
            #""id":"4","authors":[{"name":"Modern"}],"author":{"name":"Legacy"}"#,
            #""id":"5","authors":[{"avatar":"https://e.org/a.png"},{}]"#,
        ], feed: #""author":{"name":"Feed Legacy"},"authors":[{"name":"Feed Modern"}]"#).utf8))
        #expect(result.summary.metadata.authors == [Person(name: "Feed Modern")])
        #expect(result.articles.map { $0.authors.map { $0.name ?? $0.avatar ?? "" } } == [
            ["Feed Modern"], ["Legacy"], ["Modern"], ["Modern"], ["https://e.org/a.png"],
        ])
        let legacyFeed = parseFeed(Array(jsonFeed([#""id":"1""#], feed: #""author":{"name":"Only","url":"https://e.org"}"#, version: "https://jsonfeed.org/version/1").utf8))
        #expect(legacyFeed.articles.first?.authors == [Person(name: "Only", uri: "https://e.org")])
        #expect(legacyFeed.summary.metadata.format?.version == "1.0")
    }

    @Test func aWronglyTypedFieldDropsTheFieldNeverTheArticle() {
        let result = parseFeed(Array(jsonFeed([
            #""id":"1","title":42,"tags":"single","url":["x"],"date_published":{"a":1},"summary":"kept""#,
            #""id":"2","attachments":[{"url":"https://e.org/a","size_in_bytes":"12","duration_in_seconds":-3},{"size_in_bytes":5}]"#,
            #""id":"3","authors":{"name":"not a list"},"tags":["ok",7,null]"#,
            #""this item": "has only unknown keys""#,
        ], feed: #""title":["not","text"],"expired":"yes","hubs":"https://hub","language":"en","items_extra":true"#).utf8))
        #expect(result.summary.error == nil)
        #expect(result.articles.count == 4)
        #expect(result.articles[0].title == nil && result.articles[0].categories.isEmpty && result.articles[0].link == nil)
        #expect(result.articles[0].published == nil && result.articles[0].publishedRaw == nil)
        #expect(result.articles[0].summary?.value == "kept")
        #expect(result.articles[1].enclosures == [Enclosure(url: "https://e.org/a")], "an attachment without a URL is not one")
        #expect(result.articles[2].authors.isEmpty && result.articles[2].categories == ["ok"])
        #expect(result.summary.metadata.title == nil && result.summary.metadata.expired == nil && result.summary.metadata.hubs.isEmpty)
        #expect(result.summary.metadata.language == "en")
        // title, tags, url, date_published; size_in_bytes, duration_in_seconds; authors, 7 in tags; feed title, expired, hubs.
        #expect(result.summary.jsonRepairs.wronglyTypedFields == 11, "\(result.summary.jsonRepairs)")
        // An item that is not an object is left out and counted; the others stand.
        let notObjects = parseFeed(Array(#"{"version":"https://jsonfeed.org/version/1","items":["text",3,{"id":"ok"},[]]}"#.utf8))
        #expect(notObjects.articles.map(\.id) == ["ok"])
        #expect(notObjects.summary.jsonRepairs.wronglyTypedFields == 3)
    }

    @Test func extensionsAndUnknownKeysAreSkippedWhole() {
        let result = parseFeed(Array(jsonFeed([
            #""_ext":{"title":"not this","items":[{"id":"nested"}]},"id":"1","title":"this","_list":[{"url":"x"}]"#,
        ], feed: #""_rss":{"title":"not the feed's"},"title":"Feed","unknown":[[["deep"]]]"#).utf8))
        #expect(result.summary.error == nil)
        #expect(result.articles.map(\.id) == ["1"])
        #expect(result.articles.first?.title == "this")
        #expect(result.articles.first?.link == nil)
        #expect(result.summary.metadata.title == "Feed")
        #expect(result.summary.jsonRepairs.isEmpty)
    }

    @Test func duplicateKeysKeepTheFirstValueAndEveryArticle() {
        let document = #"{"version":"https://jsonfeed.org/version/1.1","title":"First","title":"Second","#
            + #""items":[{"id":"1","title":"a","title":"b"}],"items":[{"id":"2"}]}"#
        let result = parseFeed(Array(document.utf8))
        #expect(result.summary.error == nil)
        #expect(result.summary.metadata.title == "First")
        #expect(result.articles.map(\.id) == ["1", "2"])
        #expect(result.articles.first?.title == "a")
        #expect(result.summary.jsonRepairs.duplicateKeys == 3)
    }

    @Test("versions", arguments: [
        ("https://jsonfeed.org/version/1", "1.0", 0),
        ("https://jsonfeed.org/version/1.1", "1.1", 0),
        ("http://jsonfeed.org/version/1", "1.0", 1),
        ("https://jsonfeed.org/version/1.2/", "1.2", 1),
        ("https://jsonfeed.org/version/2", "2.0", 1),
        ("1.1", "1.1", 1),
        ("1", "1.0", 1),
    ])
    func version(written: String, version: String, repairs: Int) {
        let result = parseFeed(Array(jsonFeed([#""id":"1""#], version: written).utf8))
        #expect(result.summary.error == nil)
        #expect(result.summary.metadata.format == FeedFormat(family: .json, version: version))
        #expect(result.summary.jsonRepairs.nonstandardVersion == repairs)
        #expect(result.articles.count == 1)
    }

    @Test func notAFeedWhenTheVersionOrTheShapeIsWrong() {
        for document in [#"{"version":"2.0","items":[]}"#, #"{"version":"https://example.org/version/1","items":[]}"#,
                         #"{"rss":{"version":"2.0","channel":{}}}"#, #"[{"version":"https://jsonfeed.org/version/1"}]"#,
                         #"{"version":"1.1x"}"#, #"{"version":true}"#, #""https://jsonfeed.org/version/1""#, "null", "{}"] {
            var configuration = FeedParserConfiguration()
            configuration.mediaType = "application/json"  // a bare string or null is JSON only by its media type
            let result = parseFeed(Array(document.utf8), configuration: configuration)
            #expect(result.summary.error?.kind == .notAFeed, "\(document): \(String(describing: result.summary.error))")
            #expect(result.summary.metadata.format == nil)
            #expect(result.summary.error?.line == 1)
        }
        // Items before a late version are delivered as they come; a missing version fails the document at its end.
        let late = parseFeed(Array(#"{"items":[{"id":"1"}],"title":"x"}"#.utf8))
        #expect(late.articles.map(\.id) == ["1"])
        #expect(late.summary.error?.kind == .notAFeed)
        #expect(late.summary.error?.byteOffset == 34)
    }

    @Test func itemsComeOutBeforeTheDocumentEnds() throws {
        let document = Array(jsonFeed((1...3).map { #""id":"\#($0)","content_html":"<p>\#(String(repeating: "x", count: 2000))</p>""# }).utf8)
        var seen: [String] = []
        let parser = FeedParser(source: "stream.json") { article, feed in
            seen.append(article.id)
            #expect(feed.format?.family == .json)
        }
        // Up to just past the first item's closing brace: the first article is out, the second is not.
        let firstEnd = try #require(document.indices.first { document[$0] == 0x7D && document[..<$0].last == 0x22 })
        try parser.parse(Array(document[...firstEnd]))
        #expect(seen == ["1"])
        try parser.parse(Array(document[(firstEnd + 1)...]))
        #expect(seen == ["1", "2", "3"])
        try parser.finish()
        #expect(parser.summary.articleCount == 3)
    }

    @Test func relativeURLsResolveAgainstTheDocument() {
        let result = parseFeed(Array(jsonFeed([
            #""id":"1","url":"/posts/1","external_url":"../x","image":"img/1.png","content_html":"<a href=\"/a\">a</a>","attachments":[{"url":"a.mp3"}]"#,
        ], feed: #""home_page_url":"/","feed_url":"feed.json","favicon":"/f.ico","hubs":[{"type":"WebSub","url":"/hub"}]"#).utf8),
                               baseURL: "https://example.org/blog/feed.json")
        let article = result.articles.first
        #expect(article?.link == "https://example.org/posts/1")
        #expect(article?.externalURL == "https://example.org/x")
        #expect(article?.image == "https://example.org/blog/img/1.png")
        #expect(article?.content?.value == #"<a href="https://example.org/a">a</a>"#)
        #expect(article?.enclosures.first?.url == "https://example.org/blog/a.mp3")
        #expect(result.summary.metadata.link == "https://example.org/")
        #expect(result.summary.metadata.selfLink == "https://example.org/blog/feed.json")
        #expect(result.summary.metadata.icon == "https://example.org/f.ico")
        #expect(result.summary.metadata.hubs == ["https://example.org/hub"])
    }

    @Test func languageFallsBackToTheFeeds() {
        let result = parseFeed(Array(jsonFeed([#""id":"1""#, #""id":"2","language":"fr""#], feed: #""language":"en""#).utf8))
        #expect(result.articles.map(\.language) == ["en", "fr"])
    }

    @Test func invalidUTF8IsReplacedAndCounted() {
        let bytes = Array(#"{"version":"https://jsonfeed.org/version/1.1","items":[{"id":"1","title":"caf"#.utf8) + [0xE9]
            + Array(#" au lait"}]}"#.utf8)
        for chunk in [1, 5, 1 << 20] {
            let result = parseFeed(bytes, chunk: chunk)
            #expect(result.summary.error == nil)
            #expect(result.articles.first?.title == "caf\u{FFFD} au lait")
            #expect(result.summary.jsonRepairs.invalidUTF8 == 1)
            #expect(result.summary.isRepaired)
            #expect(result.summary.repairCounts.map(\.kind) == ["invalidUTF8"])
        }
    }

    @Test func malformedDocumentsStopWithATypedErrorAndKeepEarlierArticles() {
        let items = (1...5).map { #""id":"\#($0)","title":"item \#($0)""# }
        let whole = Array(jsonFeed(items).utf8)
        // Truncated in the fourth item: three articles, then a truncation error at the end of the input.
        let cut = Array(whole[..<(whole.count - 40)])
        let truncated = parseFeed(cut)
        #expect(truncated.articles.map(\.id) == ["1", "2", "3"])
        #expect(truncated.summary.error?.kind == .json(.truncated))
        #expect(truncated.summary.error?.byteOffset == Int64(cut.count))

        // Deep nesting, a huge string, a syntax error: each a JSON error with its position.
        var configuration = FeedParserConfiguration()
        configuration.json.maximumDepth = 16
        configuration.json.maximumStringBytes = 1000
        let deep = parseFeed(Array((#"{"version":"1.1","_x":"# + String(repeating: "[", count: 20)).utf8), configuration: configuration)
        #expect(deep.summary.error?.kind == .json(.depthLimitExceeded))
        let huge = parseFeed(Array(jsonFeed([#""id":"1""#, #""id":"2","content_html":"\#(String(repeating: "y", count: 5000))""#]).utf8),
                             configuration: configuration)
        #expect(huge.summary.error?.kind == .json(.stringTooLarge))
        #expect(huge.articles.map(\.id) == ["1"])
        let syntax = parseFeed(Array(#"{"version":"https://jsonfeed.org/version/1.1","items":[{"id":"1"},{"id":2,,}]}"#.utf8))
        #expect(syntax.articles.map(\.id) == ["1"])
        #expect(syntax.summary.error?.kind == .json(.syntax))
        #expect(syntax.summary.error?.line == 1)
        #expect(syntax.summary.error?.message.hasPrefix("parse error") == true)
    }

    @Test func theFirstBytesChooseTheSyntaxAndTheMediaTypeBreaksTies() {
        let json = Array(jsonFeed([#""id":"1""#]).utf8)
        // A byte-order mark and white space before the `{` are fine, split anywhere.
        let padded: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(" \r\n\t ".utf8) + json
        for chunk in [1, 2, 4, 1 << 20] {
            let result = parseFeed(padded, chunk: chunk)
            #expect(result.summary.error == nil, "chunk \(chunk)")
            #expect(result.articles.count == 1)
            #expect(result.summary.encoding?.source == .byteOrderMark)
        }
        #expect(parseFeed(json).summary.encoding == DocumentEncoding(name: "UTF-8", label: nil, source: .defaulted))
        // XML still goes to the XML parser, whatever the media type says.
        var configuration = FeedParserConfiguration()
        configuration.mediaType = "application/feed+json"
        let rss = parseFeed(Array("<rss version=\"2.0\"><channel><item><guid>x</guid></item></channel></rss>".utf8), configuration: configuration)
        #expect(rss.summary.metadata.format?.description == "RSS 2.0")
        // Neither `{` nor `<`: the media type picks the parser, so the error speaks the right syntax.
        let garbage = Array("nonsense".utf8)
        #expect(parseFeed(garbage, configuration: configuration).summary.error?.kind == .json(.syntax))
        #expect(parseFeed(garbage).summary.error.map { if case .xml = $0.kind { true } else { false } } == true)
        // An empty document: JSON's error under a JSON type, XML's otherwise.
        #expect(parseFeed([], configuration: configuration).summary.error?.kind == .json(.empty))
        #expect(parseFeed([]).summary.error?.kind == .xml(.noElements))
        #expect(FeedParserConfiguration.mediaType(forFileName: "/tmp/feed.JSON") == "application/feed+json")
        #expect(FeedParserConfiguration.mediaType(forFileName: "feed.json.gz") == "application/feed+json")
        #expect(FeedParserConfiguration.mediaType(forFileName: "feed.xml") == nil)
        #expect(FeedParserConfiguration.isJSON(mediaType: "application/json; charset=utf-8"))
        #expect(!FeedParserConfiguration.isJSON(mediaType: "application/rss+xml"))
    }

    @Test func theReportSaysJSONAndTheRepairs() {
        let result = parseFeed(Array(jsonFeed([#""id":"1","tags":"x""#], version: "1.1").utf8))
        var json = JSONWriter()
        result.summary.write(to: &json)
        let text = String(decoding: json.bytes, as: UTF8.self)
        #expect(text.contains(#""format":{"family":"json","version":"1.1"}"#))
        #expect(text.contains(#""repaired":true,"repairs":{"nonstandardVersion":1,"wronglyTypedFields":1}"#), "\(text)")
        var error = JSONWriter()
        FeedError(kind: .json(.truncated), message: "parse error: premature EOF", line: 1, column: 9, byteOffset: 9, source: "x").write(to: &error)
        #expect(String(decoding: error.bytes, as: UTF8.self)
            == #"{"kind":"json","name":"truncated","code":2,"message":"parse error: premature EOF","line":1,"column":9,"byteOffset":9}"#)
    }
}

@Suite("JSON Feed generator")
struct JSONFeedGeneratorTests {
    /// The benchmark's generated feed is valid JSON (Foundation agrees), a valid JSON Feed, and says truly what it holds.
    @Test func theGeneratedFeedParsesToItsManifest() throws {
        var bytes: [UInt8] = []
        let manifest = JSONFeedGenerator(items: 300).generate(chunkSize: 4096) { bytes.append(contentsOf: $0) }
        #expect(manifest.bytes == bytes.count)
        #expect(manifest.bytes > 300 * 1100, "about 1.2 KB an item")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect((root["items"] as? [Any])?.count == 300)
        var tally = WorkTally()
        let result = parseFeed(bytes, chunk: 65536)
        #expect(result.summary.error == nil)
        #expect(result.summary.jsonRepairs.isEmpty)
        for article in result.articles {
            tally.items += 1
            tally.titleBytes += article.title?.utf8.count ?? 0
            tally.linkBytes += article.link?.utf8.count ?? 0
            tally.guidBytes += article.id.utf8.count
            tally.pubDateBytes += article.published.map(FeedDate.rfc3339)?.utf8.count ?? 0
        }
        #expect(tally == manifest.expected)
        #expect(result.articles.allSatisfy { $0.enclosures.count == 1 && $0.enclosures[0].durationSeconds != nil && $0.authors.count == 1 })
        // Deterministic: the same bytes every time.
        var again: [UInt8] = []
        _ = JSONFeedGenerator(items: 300).generate(chunkSize: 999) { again.append(contentsOf: $0) }
        #expect(again == bytes)
    }
}

@Suite("JSON Feed chunking property")
struct JSONFeedChunkingTests {
    /// Articles, metadata (as each article saw it), repairs and errors never depend on the split: random splits
    /// (seeded) against the whole document, over messy hand-written feeds and real ones.
    @Test func randomSplitsGiveTheSameArticles() throws {
        var documents: [(String, [UInt8])] = [
            ("messy", Array(jsonFeed([
                #""id":12,"title":"a\"b\\c","tags":"x","_ext":{"n":[1,2,{"k":null}]},"title":"dup""#,
                #""url":"https://e.org/2","date_published":"2024-01-02T03:04:05.678+01:00","content_text":"\u00e9\ud83d\ude00""#,
                #""id":"3","attachments":[{"url":"a.mp3","size_in_bytes":12.0,"duration_in_seconds":1e2}]"#,
            ], feed: #""title":"T","authors":[{"name":"N"}],"expired":true"#, version: "http://jsonfeed.org/version/1").utf8) + [0xFF] + Array(" ".utf8)),
            ("broken", Array(jsonFeed([#""id":"1""#, #""id":"2","title":"unterminated"#]).utf8)),
        ]
        var generated: [UInt8] = []
        _ = JSONFeedGenerator(items: 50).generate { generated.append(contentsOf: $0) }
        documents.append(("generated", generated))
        for name in ["authors.json", "jsonfeed-extension.json", "allthis-partial.json"] {
            documents.append((name, Array(try Data(contentsOf: Paths.realworld.appendingPathComponent(name)))))
        }
        for (name, bytes) in documents {
            let whole = parseFeed(bytes)
            var random = SplitMix64(seed: UInt64(bytes.count))
            for round in 0..<8 {
                let chunk = 1 + random.next(below: max(1, bytes.count / 5))
                let split = parseFeed(bytes, chunk: chunk)
                #expect(split.articles == whole.articles, "\(name), round \(round), chunk \(chunk)")
                #expect(split.metadataAtArticle == whole.metadataAtArticle, "\(name), round \(round)")
                #expect(split.summary.jsonRepairs == whole.summary.jsonRepairs, "\(name), round \(round)")
                #expect(split.summary.error == whole.summary.error, "\(name), round \(round)")
            }
        }
    }
}
