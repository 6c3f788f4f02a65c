import ExpatXML
import Foundation
import Syndication
import Testing

/// Feeds whose bytes say one thing and whose labels another: a wrong charset, an Atom feed without Atom's namespace,
/// prefixes nothing declares, persons written `email (Name)`, relative links nothing resolves.
@Suite("Feeds that misdeclare themselves")
struct MisdeclaredFeedTests {
    // MARK: Charsets

    @Test func utf8DeclaredLatin1IsReadAsUTF8AndSaidSo() throws {
        let xml = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss version=\"2.0\"><channel><title>Café</title>"
            + "<item><title>Crème brûlée — naïve</title><guid>1</guid></item></channel></rss>"
        for chunk in [1 << 20, 9, 1] {
            let result = parseFeed(Array(xml.utf8), chunk: chunk)
            #expect(result.summary.error == nil)
            #expect(result.articles.first?.title == "Crème brûlée — naïve", "chunk \(chunk)")
            #expect(result.summary.metadata.title == "Café")
            let replacement = try #require(result.summary.textReplacement)
            #expect(replacement.correctedEncoding?.name == "UTF-8")
            #expect(replacement.replacementCharacters == 0)
            #expect(replacement.description
                    == "text replaced: labelled 'ISO-8859-1' (XML declaration) but the bytes are UTF-8, read as UTF-8")
        }
    }

    @Test func windows1252WithAUTF8HintIsReadAsWindows1252() throws {
        var configuration = FeedParserConfiguration()
        configuration.xml.charsetHint = "utf-8"
        // "Crème brûlée – “quoted”" in windows-1252.
        let title: [UInt8] = [0x43, 0x72, 0xE8, 0x6D, 0x65, 0x20, 0x62, 0x72, 0xFB, 0x6C, 0xE9, 0x65, 0x20, 0x96, 0x20, 0x93, 0x71, 0x94]
        let bytes = Array("<rss version=\"2.0\"><channel><item><title>".utf8) + title + Array("</title><guid>1</guid></item></channel></rss>".utf8)
        let result = parseFeed(bytes, configuration: configuration)
        #expect(result.articles.first?.title == "Crème brûlée – “q”")
        #expect(result.summary.encoding == DocumentEncoding(name: "windows-1252", label: "utf-8", source: .corrected, labelSource: .charsetHint))
        #expect(result.summary.textReplacement?.description
                == "text replaced: labelled 'utf-8' (charset hint) but the bytes are mostly not UTF-8, read as windows-1252")
    }

    @Test func replacedBytesAreCountedInOnePlace() throws {
        // Labelled UTF-8 and mostly UTF-8, two bytes that are not: it stays UTF-8 and the two become U+FFFD.
        let bytes = Array("<?xml version=\"1.0\" encoding=\"utf-8\"?><rss><channel><item><title>Zürich — Genève ".utf8) + [0xE9] + Array(" Köln ".utf8) + [0xFF]
            + Array("</title><guid>1</guid></item></channel></rss>".utf8)
        let result = parseFeed(bytes)
        #expect(result.articles.first?.title == "Zürich — Genève \u{FFFD} Köln \u{FFFD}")
        #expect(result.summary.textReplacement == TextReplacement(correctedEncoding: nil, replacementCharacters: 2))
        #expect(result.summary.textReplacement?.description == "text replaced: U+FFFD replaced invalid bytes in 2 places")
        // A byte windows-1252 does not define, in a windows-1252 document: iconv's U+FFFD counts too.
        let undefined = Array("<?xml version=\"1.0\" encoding=\"windows-1252\"?><rss><channel><item><title>a".utf8) + [0x81]
            + Array("b</title></item></channel></rss>".utf8)
        let legacy = parseFeed(undefined)
        #expect(legacy.articles.first?.title == "a\u{FFFD}b")
        #expect(legacy.summary.textReplacement?.replacementCharacters == 1)
        #expect(legacy.summary.textReplacement?.correctedEncoding == nil)
        // JSON Feed strings with invalid UTF-8.
        let json = Array(#"{"version":"https://jsonfeed.org/version/1.1","title":"J","items":[{"id":"1","title":"a"#.utf8) + [0xFF]
            + Array(#"b"}]}"#.utf8)
        #expect(parseFeed(json).summary.textReplacement?.replacementCharacters == 1)
        // Clean text: nothing to say.
        #expect(parseFeed("<rss><channel><item><title>Zürich</title></item></channel></rss>").summary.textReplacement == nil)
    }

    // MARK: Atom without its namespace

    @Test func aFeedRootWithoutTheAtomNamespaceIsAtom() throws {
        let xml = """
            <?xml version="1.0"?>
            <feed><title>No namespace</title><link href="https://example.org/"/><id>urn:feed</id>
            <entry><title>First</title><id>urn:1</id><link href="https://example.org/1"/><updated>2024-01-02T03:04:05Z</updated>
            <author><name>Ann</name><email>ann@example.org</email></author><summary>S</summary>
            <content type="html">&lt;p&gt;C&lt;/p&gt;</content><category term="t"/></entry>
            <entry><title>Second</title><id>urn:2</id></entry>
            </feed>
            """
        for chunk in [1 << 20, 7] {
            let result = parseFeed(Array(xml.utf8), chunk: chunk)
            #expect(result.summary.error == nil, "chunk \(chunk)")
            #expect(result.summary.metadata.format == FeedFormat(family: .atom, version: "1.0"))
            #expect(result.summary.metadata.title == "No namespace")
            #expect(result.summary.metadata.link == "https://example.org/")
            #expect(result.articles.map(\.id) == ["urn:1", "urn:2"])
            let first = try #require(result.articles.first)
            #expect(first.idSource == .atomID)
            #expect(first.title == "First")
            #expect(first.link == "https://example.org/1")
            #expect(first.authors == [Person(name: "Ann", email: "ann@example.org")])
            #expect(first.updated == Date(timeIntervalSince1970: 1_704_164_645))
            #expect(first.content == TextContent("<p>C</p>", type: .html))
            #expect(first.categories == ["t"])
        }
        let draft = parseFeed("<feed version=\"0.3\"><entry><id>1</id></entry></feed>")
        #expect(draft.summary.metadata.format == FeedFormat(family: .atom, version: "0.3"))
        #expect(draft.articles.count == 1)
        // Another root in no namespace is still not a feed.
        #expect(parseFeed("<html><body/></html>").summary.error?.kind == .notAFeed)
    }

    // MARK: RSS persons

    @Test func rssPersonsWrittenEmailNameFillBoth() {
        let xml = """
            <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>T</title>
            <managingEditor>editor@example.org (Ed Itor)</managingEditor>
            <author>chief@example.org (Chief)</author>
            <item><guid>1</guid><author>jo@example.org (Jo Writer)</author></item>
            <item><guid>2</guid><author>jo@example.org (Jo Writer)</author><dc:creator>Jo Writer</dc:creator></item>
            <item><guid>3</guid><author>mailto:al@example.org (Al)</author></item>
            <item><guid>4</guid><author>&lt;bo@example.org&gt; (Bo)</author></item>
            </channel></rss>
            """
        let result = parseFeed(xml)
        #expect(result.summary.metadata.authors == [Person(name: "Ed Itor", email: "editor@example.org"),
                                                    Person(name: "Chief", email: "chief@example.org")])
        #expect(result.articles.map(\.authors) == [
            [Person(name: "Jo Writer", email: "jo@example.org")],
            [Person(name: "Jo Writer", email: "jo@example.org")],  // dc:creator names him, author gives the address
            [Person(name: "Al", email: "al@example.org")],
            [Person(name: "Bo", email: "bo@example.org")],
        ])
    }

    // MARK: Undeclared prefixes

    @Test func wellKnownPrefixesWithoutDeclarationsYieldWhatDeclaredOnesDo() {
        let items = """
            <item><title>A</title><guid>a</guid><media:content url="https://example.org/a.mp4" type="video/mp4" fileSize="10"/>
            <media:thumbnail url="https://example.org/a.jpg"/><dc:creator>Ann</dc:creator><content:encoded>&lt;p&gt;x&lt;/p&gt;</content:encoded>
            <georss:where><gml:Point><gml:pos>45.2 7.6</gml:pos></gml:Point></georss:where></item>
            """
        let declared = parseFeed("""
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/"
              xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:georss="http://www.georss.org/georss"
              xmlns:gml="http://www.opengis.net/gml"><channel>\(items)</channel></rss>
            """)
        let undeclared = parseFeed("<rss version=\"2.0\"><channel>\(items)</channel></rss>")
        #expect(undeclared.summary.error == nil)
        #expect(undeclared.articles == declared.articles)
        #expect(undeclared.articles.first?.enclosures.first?.url == "https://example.org/a.mp4")
        #expect(undeclared.articles.first?.authors == [Person(name: "Ann")])
        #expect(undeclared.summary.repairs.undeclaredPrefixes == 5)
    }

    @Test func unknownPrefixesWithoutDeclarationsLoseNoArticle() {
        let xml = """
            <rss version="2.0" foo:version="2"><channel><title>T</title>
            <item><title>A</title><guid>a</guid><zz:rating>5</zz:rating><media:content url="https://example.org/a.mp3" type="audio/mpeg"/></item>
            <item><title>B</title><guid>b</guid><yy:x q:y="1"><yy:z/></yy:x></item>
            <item><title>C</title><guid>c</guid><zz:rating>3</zz:rating></item>
            </channel></rss>
            """
        for chunk in [1 << 20, 13, 1] {
            let result = parseFeed(Array(xml.utf8), chunk: chunk)
            #expect(result.summary.error == nil, "chunk \(chunk)")
            #expect(result.articles.map(\.title) == ["A", "B", "C"], "chunk \(chunk)")
            #expect(result.articles.first?.enclosures == [Enclosure(url: "https://example.org/a.mp3", type: "audio/mpeg")])
            #expect(result.summary.repairs.undeclaredPrefixes == 5, "chunk \(chunk)")  // foo, zz, media, yy, q
        }
    }

    // MARK: Relative links

    @Test func aRelativePermalinkIsKeptWithoutABaseAndResolvedWithOne() {
        let xml = """
            <rss version="2.0"><channel><title>T</title>
            <item><title>A</title><guid isPermaLink="true">posts/a.html</guid></item>
            <item><title>B</title><guid>posts/b</guid></item>
            <item><title>C</title><link>/c.html</link></item>
            </channel></rss>
            """
        let unresolved = parseFeed(xml)
        #expect(unresolved.articles.map(\.link) == ["posts/a.html", nil, "/c.html"])
        let resolved = parseFeed(xml, baseURL: "https://example.org/feeds/rss.xml")
        #expect(resolved.articles.map(\.link) == ["https://example.org/feeds/posts/a.html", nil, "https://example.org/c.html"])
    }
}
