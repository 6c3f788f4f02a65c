import Foundation
import TestSupport
import Testing

// Issue 16 as a user sees it: the new article and feed fields in `feedingest parse`'s NDJSON and report, validated
// against the schemas, and the encoding the report names for a document that declares none.

@Suite("feedingest parse: the issue 16 vocabulary, end to end")
struct VocabularyCommandTests {
    static let podcast = """
        <?xml version="1.0" encoding="utf-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:media="http://search.yahoo.com/mrss/"
          xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dc="http://purl.org/dc/elements/1.1/"
          xmlns:sy="http://purl.org/rss/1.0/modules/syndication/" xmlns:xhtml="http://www.w3.org/1999/xhtml">
        <channel><title>Everything</title><link>http://e.org/</link><language>en_gb</language>
        <webMaster>web@e.org (Web Master)</webMaster><itunes:subtitle>Sub</itunes:subtitle>
        <itunes:category text="Technology"><itunes:category text="Gadgets"/></itunes:category>
        <image><url>http://e.org/logo.png</url><title>Logo</title><link>http://e.org/</link><width>88</width><height>31</height></image>
        <pubDate>Sat, 07 Sep 2002 00:00:01 GMT</pubDate><dcterms:modified>2004-01-02T03:04:05Z</dcterms:modified>
        <ttl>60</ttl><sy:updatePeriod>daily</sy:updatePeriod><sy:updateFrequency>4</sy:updateFrequency>
        <sy:updateBase>2000-01-01T00:00:00Z</sy:updateBase>
        <atom:id>urn:feed</atom:id><atom:link rel="self" href="http://e.org/feed"/><atom:link rel="license" href="http://e.org/cc"/>
        <item><title>One</title><guid>1</guid>
          <category domain="http://e.org/tags">Tag</category>
          <media:category scheme="http://e.org/s" label="Music">music/rock</media:category><itunes:keywords>k1, k2</itunes:keywords>
          <xhtml:body><xhtml:p>Hi</xhtml:p><svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg></xhtml:body>
          <atom:link rel="related" href="http://e.org/related" title="Related" hreflang="fr_ca" type="text/html" length="10"/>
          <atom:link>http://e.org/1</atom:link><dc:contributor>Helper</dc:contributor><dc:rights>CC BY</dc:rights>
        </item></channel></rss>
        """

    @Test func newArticleAndFeedFieldsAreInTheOutputAndMatchTheSchemas() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let feed = directory.appendingPathComponent("podcast.xml")
        try Data(Self.podcast.utf8).write(to: feed)
        let report = directory.appendingPathComponent("report.json")
        let result = try CommandRunner.run(["parse", feed.path, "--report", report.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == 1)
        let articles = try validate(result.stdout, schema: "article.schema.json", lines: true)
        #expect(articles.ok, "\(articles.output)")
        let reportText = try String(contentsOf: report, encoding: .utf8)
        let reportCheck = try validate(reportText, schema: "report.schema.json", lines: false)
        #expect(reportCheck.ok, "\(reportCheck.output)")

        let line = try #require(result.lines.first)
        let article = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(article["link"] as? String == "http://e.org/1")
        #expect(article["language"] as? String == "en-GB")
        #expect(article["rights"] as? String == "CC BY")
        #expect((article["contributors"] as? [[String: String]]) == [["name": "Helper"]])
        #expect((article["categories"] as? [String]) == ["Tag", "music/rock", "k1", "k2"])
        #expect((article["categoryDetails"] as? [[String: String]])?.prefix(2) == [
            ["term": "Tag", "scheme": "http://e.org/tags"], ["term": "music/rock", "scheme": "http://e.org/s", "label": "Music"],
        ])
        let links = try #require(article["links"] as? [[String: Any]])
        #expect(links.count == 2)
        #expect(links[0]["hreflang"] as? String == "fr-CA" && links[0]["length"] as? Int == 10 && links[0]["title"] as? String == "Related")
        #expect(links[1]["href"] as? String == "http://e.org/1" && links[1]["rel"] as? String == "alternate")
        let content = try #require(article["content"] as? [String: String])
        #expect(content["value"] == #"<p>Hi</p><svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>"#)
        // The exact bytes of the new fields, as scripts will read them.
        #expect(line.contains(#""categoryDetails":[{"term":"Tag","scheme":"http://e.org/tags"},{"term":"music/rock","scheme":"http://e.org/s","label":"Music"},{"term":"k1","scheme":"http://www.itunes.com/"}"#))

        let input = try #require((try JSONSerialization.jsonObject(with: Data(reportText.utf8)) as? [String: Any])?["inputs"] as? [[String: Any]]).first
        let meta = try #require(input?["feed"] as? [String: Any])
        #expect(meta["id"] as? String == "urn:feed")
        #expect(meta["language"] as? String == "en-GB")
        #expect(meta["published"] as? String == "2002-09-07T00:00:01Z" && meta["updated"] as? String == "2004-01-02T03:04:05Z")
        #expect((meta["publisher"] as? [String: String]) == ["name": "Web Master", "email": "web@e.org"])
        #expect((meta["description"] as? [String: String])?["value"] == "Sub")
        #expect(meta["license"] as? String == "http://e.org/cc")
        #expect(meta["updatePeriod"] as? String == "daily" && meta["updateFrequency"] as? Int == 4 && meta["ttl"] as? Int == 60)
        #expect(meta["updateBase"] as? String == "2000-01-01T00:00:00Z")
        let image = try #require(meta["imageDetails"] as? [String: Any])
        #expect(image["title"] as? String == "Logo" && image["width"] as? Int == 88 && image["height"] as? Int == 31)
        #expect((meta["categoryDetails"] as? [[String: String]]) == [
            ["term": "Technology", "scheme": "http://www.itunes.com/"],
            ["term": "Gadgets", "scheme": "http://www.itunes.com/", "parent": "Technology"],
        ])
        #expect((meta["links"] as? [[String: String]])?.map { $0["rel"] } == ["self", "license"])
    }

    @Test func theReportSaysWhichEncodingWasDetectedAndWhy() throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // KOI8-R, as Python's codecs write it, and no declaration anywhere.
        let title = "Новости: сегодня в Москве солнечно и тепло, температура воздуха достигнет двадцати градусов."
        let koi8 = "eecfd7cfd3d4c93a20d3c5c7cfc4ced120d720edcfd3cbd7c520d3cfcccec5dececf20c920d4c5d0cccf2c20d4c5cdd0c5d2c1d4d5d2c120d7cfdac4d5c8c120c4cfd3d4c9c7cec5d420c4d7c1c4c3c1d4c920c7d2c1c4d5d3cfd72e"
        var bytes = Array("<rss version=\"2.0\"><channel><title>t</title><item><guid>1</guid><title>".utf8)
        var index = koi8.startIndex
        while index < koi8.endIndex {
            let next = koi8.index(index, offsetBy: 2)
            bytes.append(UInt8(koi8[index..<next], radix: 16)!)
            index = next
        }
        bytes += Array("</title></item></channel></rss>".utf8)
        let feed = directory.appendingPathComponent("koi8.xml")
        try Data(bytes).write(to: feed)
        let report = directory.appendingPathComponent("report.json")
        let result = try CommandRunner.run(["parse", feed.path, "--report", report.path])
        #expect(result.status == 0, "\(result.stderr)")
        let article = try JSONSerialization.jsonObject(with: Data(try #require(result.lines.first).utf8)) as? [String: Any]
        #expect(article?["title"] as? String == title)
        let reportText = try String(contentsOf: report, encoding: .utf8)
        #expect(reportText.contains(#""encoding":{"name":"KOI8-R","source":"detected","label":"KOI8-R"}"#))
        #expect(reportText.contains(#""repairs":{}"#))  // decoded, not replaced
        #expect(try validate(reportText, schema: "report.schema.json", lines: false).ok)
        // --charset says what the document does not: then nothing is detected.
        let hinted = try CommandRunner.run(["parse", feed.path, "--charset", "koi8-r", "--report", report.path])
        #expect(hinted.status == 0)
        #expect(try String(contentsOf: report, encoding: .utf8).contains(#""source":"charsetHint""#))
    }
}
