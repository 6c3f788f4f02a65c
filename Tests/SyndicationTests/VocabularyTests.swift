import ExpatXML
import Foundation
import Syndication
import TestSupport
import Testing

// Issue 16: the vocabulary, old formats, encodings, languages and embedded markup that universal feed parsers read.
// Documents written here; corpus documents in the suites that say so.

/// Parses `xml` whole and in 7-byte pieces, checks both give the same result, and returns the whole parse.
private func parseBothWays(_ xml: String, baseURL: String? = nil, sourceLocation: SourceLocation = #_sourceLocation)
    -> (articles: [Article], metadataAtArticle: [FeedMetadata], summary: FeedSummary) {
    let whole = parseFeed(Array(xml.utf8), baseURL: baseURL)
    let split = parseFeed(Array(xml.utf8), chunk: 7, baseURL: baseURL)
    #expect(split.articles == whole.articles, "7-byte chunks give other articles", sourceLocation: sourceLocation)
    #expect(split.summary.metadata == whole.summary.metadata, "7-byte chunks give other metadata", sourceLocation: sourceLocation)
    #expect(whole.summary.error == nil, "\(whole.summary.error.map(String.init(describing:)) ?? "")", sourceLocation: sourceLocation)
    return whole
}

@Suite("Vocabulary: categories")
struct CategoryVocabularyTests {
    @Test func iTunesCategoriesNestWithTheirParentInTheChannelAndInItems() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>P</title>
            <itunes:category text="Technology"><itunes:category text="Gadgets"/><itunes:category text="Podcasting"/></itunes:category>
            <itunes:category text="Arts &amp; Culture"/>
            <item><guid>1</guid><itunes:category text="News"><itunes:category text="Tech News"/></itunes:category></item>
            </channel></rss>
            """)
        let feed = result.summary.metadata
        #expect(feed.categories == ["Technology", "Gadgets", "Podcasting", "Arts & Culture"])
        #expect(feed.categoryDetails == [
            Category(term: "Technology", scheme: Category.iTunesScheme),
            Category(term: "Gadgets", scheme: Category.iTunesScheme, parent: "Technology"),
            Category(term: "Podcasting", scheme: Category.iTunesScheme, parent: "Technology"),
            Category(term: "Arts & Culture", scheme: Category.iTunesScheme),
        ])
        let article = result.articles[0]
        #expect(article.categories == ["News", "Tech News"])
        #expect(article.categoryDetails.last == Category(term: "Tech News", scheme: Category.iTunesScheme, parent: "News"))
    }

    @Test func mediaCategoriesKeepSchemeAndLabelWithTheMediaRSSDefaultScheme() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>M</title>
            <media:category scheme="urn:flickr:tags">ocean sunset</media:category>
            <item><guid>1</guid>
              <media:category scheme="http://dmoz.org" label="Ace Ventura">Arts/Movies/Titles/A/Ace_Ventura_Series</media:category>
              <media:category>music/artist/album/song</media:category>
              <media:group><media:category label="Grouped">in/a/group</media:category></media:group>
            </item></channel></rss>
            """)
        #expect(result.summary.metadata.categoryDetails == [Category(term: "ocean sunset", scheme: "urn:flickr:tags")])
        #expect(result.articles[0].categoryDetails == [
            Category(term: "Arts/Movies/Titles/A/Ace_Ventura_Series", scheme: "http://dmoz.org", label: "Ace Ventura"),
            Category(term: "music/artist/album/song", scheme: Category.mediaRSSScheme),
            Category(term: "in/a/group", scheme: Category.mediaRSSScheme, label: "Grouped"),
        ])
        #expect(result.articles[0].categories == ["Arts/Movies/Titles/A/Ace_Ventura_Series", "music/artist/album/song", "in/a/group"])
    }

    @Test func keywordsBecomeOneCategoryEachWithoutDuplicates() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>K</title><itunes:keywords>swift, xml,,feeds </itunes:keywords>
            <item><guid>1</guid><category>xml</category><media:keywords>kitty, cat,  big dog , xml</media:keywords>
            <itunes:keywords>cat,podcast</itunes:keywords></item></channel></rss>
            """)
        let feed = result.summary.metadata
        #expect(feed.categories == ["swift", "xml", "feeds"])
        #expect(feed.categoryDetails.allSatisfy { $0.scheme == Category.iTunesScheme })
        let article = result.articles[0]
        #expect(article.categories == ["xml", "kitty", "cat", "big dog", "podcast"])
        // The same term from two vocabularies is one category and two details.
        #expect(article.categoryDetails == [
            Category(term: "xml"), Category(term: "kitty"), Category(term: "cat"), Category(term: "big dog"),
            Category(term: "cat", scheme: Category.iTunesScheme), Category(term: "podcast", scheme: Category.iTunesScheme),
        ])
        #expect(article.podcast?.keywords == ["cat", "podcast"])
    }

    @Test func rssAndAtomCategoriesKeepDomainSchemeAndLabel() {
        let rss = parseBothWays("""
            <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>R</title>
            <category domain="http://www.fool.com/cusips">MSFT</category>
            <item><guid>1</guid><category domain="http://e.org/tags">Swift</category><category>Swift</category><dc:subject>XML</dc:subject></item>
            </channel></rss>
            """)
        #expect(rss.summary.metadata.categoryDetails == [Category(term: "MSFT", scheme: "http://www.fool.com/cusips")])
        #expect(rss.articles[0].categories == ["Swift", "XML"])
        #expect(rss.articles[0].categoryDetails == [Category(term: "Swift", scheme: "http://e.org/tags"), Category(term: "Swift"), Category(term: "XML")])
        let atom = parseBothWays("""
            <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><category term="t" scheme="http://e.org/s" label="The T"/>
            <entry><id>1</id><category term="a" label="Ay"/><category label="only a label"/><category scheme="http://e.org/s"/></entry></feed>
            """)
        #expect(atom.summary.metadata.categoryDetails == [Category(term: "t", scheme: "http://e.org/s", label: "The T")])
        #expect(atom.articles[0].categories == ["a", "only a label"])
        #expect(atom.articles[0].categoryDetails == [Category(term: "a", label: "Ay"), Category(term: "only a label", label: "only a label")])
    }

    @Test func categoryListsStayBounded() {
        var configuration = FeedParserConfiguration()
        configuration.maximumListLength = 3
        let keywords = (0..<50).map { "k\($0)" }.joined(separator: ",")
        let xml = "<rss xmlns:media=\"http://search.yahoo.com/mrss/\"><channel><item><guid>1</guid><media:keywords>\(keywords)</media:keywords></item></channel></rss>"
        let result = parseFeed(Array(xml.utf8), configuration: configuration)
        #expect(result.articles[0].categories == ["k0", "k1", "k2"])
        #expect(result.articles[0].categoryDetails.count == 3)
    }
}

@Suite("Vocabulary: content")
struct ContentVocabularyTests {
    @Test func anXHTMLBodyInAnRSSItemIsTheContent() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:xhtml="http://www.w3.org/1999/xhtml"><channel><title>B</title>
            <item><guid>1</guid><description>short</description><xhtml:body><xhtml:p>Hello <xhtml:em>there</xhtml:em></xhtml:p><xhtml:br/></xhtml:body></item>
            <item><guid>2</guid><body xmlns="http://www.w3.org/1999/xhtml"><p class="x">Default <a href="/a">namespace</a></p></body></item>
            <item><guid>3</guid><fullitem>&lt;p&gt;Full item&lt;/p&gt;</fullitem></item>
            </channel></rss>
            """, baseURL: "http://e.org/feed")
        #expect(result.articles[0].content == TextContent("<p>Hello <em>there</em></p><br/>", type: .html))
        #expect(result.articles[0].summary == TextContent("short", type: .html))
        // Relative links inside resolve like any HTML content's.
        #expect(result.articles[1].content == TextContent("<p class=\"x\">Default <a href=\"http://e.org/a\">namespace</a></p>", type: .html))
        #expect(result.articles[2].content == TextContent("<p>Full item</p>", type: .html))
    }

    @Test func contentEncodedWinsOverABodyAndFullitem() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:xhtml="http://www.w3.org/1999/xhtml">
            <channel><item><guid>1</guid><fullitem>full</fullitem><xhtml:body><xhtml:p>body</xhtml:p></xhtml:body>
            <content:encoded>encoded</content:encoded></item>
            <item><guid>2</guid><fullitem>full</fullitem><xhtml:body><xhtml:p>body</xhtml:p></xhtml:body></item></channel></rss>
            """)
        #expect(result.articles.map(\.content?.value) == ["encoded", "<p>body</p>"])
    }

    @Test func atomContentWithSrcIsKeptAsALink() {
        let result = parseBothWays("""
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://e.org/base/"><title>S</title>
            <entry><id>1</id><content type="video/mp4" src="movie.mp4"/></entry>
            <entry><id>2</id><link href="http://e.org/page"/><content src="http://cdn.e.org/text" type="text/html"/></entry>
            </feed>
            """)
        #expect(result.articles[0].contentSource == Link(href: "http://e.org/base/movie.mp4", type: "video/mp4"))
        #expect(result.articles[0].content == nil)
        #expect(result.articles[0].link == "http://e.org/base/movie.mp4")  // no alternate: the content is the page
        #expect(result.articles[1].contentSource == Link(href: "http://cdn.e.org/text", type: "text/html"))
        #expect(result.articles[1].link == "http://e.org/page")
    }
}

@Suite("Vocabulary: links")
struct LinkVocabularyTests {
    @Test func everyAtomLinkIsKeptWithItsAttributes() {
        let result = parseBothWays("""
            <feed xmlns="http://www.w3.org/2005/Atom" xmlns:thr="http://purl.org/syndication/thread/1.0" xml:base="http://e.org/">
            <title>L</title><link href="/"/><link rel="self" type="application/atom+xml" href="/feed"/><link rel="license" href="/cc"/>
            <link rel="hub" href="https://hub.e.org/"/><link rel="http://www.iana.org/assignments/relation/related" href="/r"/>
            <entry><id>1</id>
              <link href="/1" type="text/html" hreflang="en_us" title="One"/>
              <link rel="Alternate" href="/1.fr" hreflang="fr" type="text/html"/>
              <link rel="enclosure" href="/1.mp3" type="audio/mpeg" length="12345"/>
              <link rel="replies" href="/1/comments.atom" type="application/atom+xml" thr:count="4"/>
              <link rel="via" href="http://other.org/"/><link rel="edit" href="/edit/1"/><link rel="license" href="/cc-by"/>
              <link rel="http://example.org/rel/custom" href="/custom"/>
            </entry></feed>
            """)
        let feed = result.summary.metadata
        #expect(feed.links.map(\.rel) == ["alternate", "self", "license", "hub", "related"])
        #expect(feed.links[1] == Link(href: "http://e.org/feed", rel: "self", type: "application/atom+xml"))
        #expect(feed.link == "http://e.org/" && feed.selfLink == "http://e.org/feed" && feed.hubs == ["https://hub.e.org/"])
        #expect(feed.license == "http://e.org/cc")
        let article = result.articles[0]
        #expect(article.links == [
            Link(href: "http://e.org/1", rel: "alternate", type: "text/html", title: "One", hreflang: "en-US"),
            Link(href: "http://e.org/1.fr", rel: "alternate", type: "text/html", hreflang: "fr"),
            Link(href: "http://e.org/1.mp3", rel: "enclosure", type: "audio/mpeg", length: 12345),
            Link(href: "http://e.org/1/comments.atom", rel: "replies", type: "application/atom+xml"),
            Link(href: "http://other.org/", rel: "via"),
            Link(href: "http://e.org/edit/1", rel: "edit"),
            Link(href: "http://e.org/cc-by", rel: "license"),
            Link(href: "http://e.org/custom", rel: "http://example.org/rel/custom"),
        ])
        #expect(article.link == "http://e.org/1")
        #expect(article.enclosures == [Enclosure(url: "http://e.org/1.mp3", type: "audio/mpeg", length: 12345)])
        #expect(article.commentsFeed == "http://e.org/1/comments.atom" && article.commentCount == 4)
        #expect(article.license == "http://e.org/cc-by")
    }

    @Test func aLinkWhoseURLIsItsTextIsALink() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>T</title>
            <atom:link rel="self" type="application/rss+xml">http://e.org/feed.xml</atom:link>
            <item><guid isPermaLink="false">1</guid><atom:link rel="alternate"> http://e.org/1 </atom:link></item>
            <item><guid isPermaLink="false">2</guid><link href="http://e.org/2"/></item>
            </channel></rss>
            """)
        #expect(result.summary.metadata.selfLink == "http://e.org/feed.xml")
        #expect(result.summary.metadata.links == [Link(href: "http://e.org/feed.xml", rel: "self", type: "application/rss+xml")])
        #expect(result.articles[0].link == "http://e.org/1")
        #expect(result.articles[0].links == [Link(href: "http://e.org/1", rel: "alternate")])
        // An RSS <link href="…"/> with no text: the href is the link (broken, but common).
        #expect(result.articles[1].link == "http://e.org/2")
        let atom = parseBothWays("""
            <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><link>http://e.org/</link><entry><id>1</id><link>http://e.org/a</link></entry></feed>
            """)
        #expect(atom.summary.metadata.link == "http://e.org/")
        #expect(atom.articles[0].link == "http://e.org/a")
    }

    @Test func linkListsStayBounded() {
        var configuration = FeedParserConfiguration()
        configuration.maximumListLength = 2
        let links = (0..<20).map { "<link rel=\"related\" href=\"http://e.org/\($0)\"/>" }.joined()
        let xml = "<feed xmlns=\"http://www.w3.org/2005/Atom\">\(links)<entry><id>1</id>\(links)</entry></feed>"
        let result = parseFeed(Array(xml.utf8), configuration: configuration)
        #expect(result.summary.metadata.links.count == 2)
        #expect(result.articles[0].links.map(\.href) == ["http://e.org/0", "http://e.org/1"])
    }
}

@Suite("Vocabulary: feed metadata")
struct FeedMetadataVocabularyTests {
    @Test func rssChannelMetadata() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:dc="http://purl.org/dc/elements/1.1/"
              xmlns:dcterms="http://purl.org/dc/terms/" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"
              xmlns:admin="http://webns.net/mvcb/" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
              xmlns:creativeCommons="http://backend.userland.com/creativeCommonsRssModule">
            <channel><title>Meta</title><link>http://e.org/</link>
            <itunes:subtitle>A subtitle</itunes:subtitle><itunes:summary>A summary</itunes:summary>
            <managingEditor>editor@e.org (Ed Itor)</managingEditor><webMaster>Web Master &lt;web@e.org&gt;</webMaster>
            <itunes:owner><itunes:name>Owner</itunes:name><itunes:email>owner@e.org</itunes:email></itunes:owner>
            <image><url>/logo.png</url><title>Logo</title><link>/</link><width>88</width><height>31</height><description>Home</description></image>
            <pubDate>Sat, 07 Sep 2002 00:00:01 GMT</pubDate><lastBuildDate>not a date</lastBuildDate>
            <dcterms:modified>2004-01-02T03:04:05Z</dcterms:modified>
            <copyright>© me</copyright><generator>MT 3.2</generator><admin:generatorAgent rdf:resource="http://www.movabletype.org/?v=3.2"/>
            <ttl>90</ttl><sy:updatePeriod> Weekly </sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>
            <sy:updateBase>2000-01-01T12:00+00:00</sy:updateBase>
            <creativeCommons:license>http://creativecommons.org/licenses/by/4.0/</creativeCommons:license>
            </channel></rss>
            """, baseURL: "http://e.org/feed.rss")
        let feed = result.summary.metadata
        #expect(feed.description == TextContent("A subtitle", type: .text))  // no RSS description: itunes:subtitle, then itunes:summary
        #expect(feed.authors == [Person(name: "Ed Itor", email: "editor@e.org")])
        #expect(feed.publisher == Person(name: "Web Master", email: "web@e.org"))  // webMaster before itunes:owner
        #expect(feed.image == "http://e.org/logo.png")
        var image = FeedImage()
        image.url = "http://e.org/logo.png"
        image.title = "Logo"
        image.link = "http://e.org/"
        image.width = 88
        image.height = 31
        image.description = "Home"
        #expect(feed.imageDetails == image)
        #expect(feed.published.map(FeedDate.rfc3339) == "2002-09-07T00:00:01Z")
        // lastBuildDate does not parse: dcterms:modified is the update date.
        #expect(feed.updated.map(FeedDate.rfc3339) == "2004-01-02T03:04:05Z")
        #expect(feed.rights == "© me")
        #expect(feed.generator == "MT 3.2")
        #expect(feed.generatorDetails == Generator(name: "MT 3.2", uri: "http://www.movabletype.org/?v=3.2"))
        #expect(feed.ttl == 90 && feed.updatePeriod == .weekly && feed.updateFrequency == 2)
        #expect(feed.updateBase.map(FeedDate.rfc3339) == "2000-01-01T12:00:00Z")
        // The longer of the TTL (90 min) and the syndication module's hint (a week / 2 = 3.5 days).
        #expect(feed.refreshInterval == 3.5 * 86_400)
        #expect(feed.license == "http://creativecommons.org/licenses/by/4.0/")
    }

    @Test func publisherFromItunesOwnerAndDublinCore() {
        let owner = parseBothWays("""
            <rss xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
            <itunes:owner><itunes:name>Owner</itunes:name><itunes:email>owner@e.org</itunes:email></itunes:owner></channel></rss>
            """)
        #expect(owner.summary.metadata.publisher == Person(name: "Owner", email: "owner@e.org"))
        let dc = parseBothWays("""
            <rss xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
            <itunes:owner><itunes:name>Owner</itunes:name></itunes:owner><dc:publisher>pub@e.org (The Publisher)</dc:publisher>
            <dc:contributor>Helper</dc:contributor></channel></rss>
            """)
        #expect(dc.summary.metadata.publisher == Person(name: "The Publisher", email: "pub@e.org"))
        #expect(dc.summary.metadata.contributors == [Person(name: "Helper")])
    }

    @Test func atomFeedMetadata() {
        let result = parseBothWays("""
            <feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en_gb"><id> tag:e.org,2005:feed </id><title>A</title>
            <subtitle type="html">&lt;b&gt;sub&lt;/b&gt;</subtitle><logo>http://e.org/logo.png</logo><icon>http://e.org/favicon.ico</icon>
            <generator uri="http://e.org/gen" version="1.0">Gen</generator><rights>CC</rights>
            <author><name>A</name><email>a@e.org</email></author><contributor><name>C</name><uri>http://e.org/c</uri></contributor>
            <updated>2005-07-31T12:29:29Z</updated></feed>
            """)
        let feed = result.summary.metadata
        #expect(feed.id == "tag:e.org,2005:feed")
        #expect(feed.description == TextContent("<b>sub</b>", type: .html))
        #expect(feed.image == "http://e.org/logo.png" && feed.icon == "http://e.org/favicon.ico")
        #expect(feed.generatorDetails == Generator(name: "Gen", uri: "http://e.org/gen", version: "1.0"))
        #expect(feed.authors == [Person(name: "A", email: "a@e.org")])
        #expect(feed.contributors == [Person(name: "C", uri: "http://e.org/c")])
        #expect(feed.language == "en-GB")
        #expect(feed.updated.map(FeedDate.rfc3339) == "2005-07-31T12:29:29Z" && feed.published == nil)
    }

    @Test func dublinCoreTermsDatesAndRights() {
        let result = parseBothWays("""
            <rss xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
            <dcterms:created>2001-01-01T00:00:00Z</dcterms:created><dcterms:issued>2002-02-02T00:00:00Z</dcterms:issued>
            <dcterms:rights>terms rights</dcterms:rights><dc:description>dc description</dc:description>
            <item><guid>1</guid><dc:rights>item rights</dc:rights><dc:contributor>Jo (jo@e.org)</dc:contributor></item></channel></rss>
            """)
        let feed = result.summary.metadata
        #expect(feed.published.map(FeedDate.rfc3339) == "2002-02-02T00:00:00Z")  // dcterms:issued before dcterms:created
        #expect(feed.rights == "terms rights")
        #expect(feed.description == TextContent("dc description", type: .text))
        #expect(result.articles[0].rights == "item rights")
        #expect(result.articles[0].contributors == [Person(name: "Jo", email: "jo@e.org")])
    }

    @Test func updateHintsAreTypedAndBadOnesAreIgnored() {
        #expect(UpdatePeriod(text: " HOURLY ") == .hourly && UpdatePeriod(text: "fortnightly") == nil)
        #expect(UpdatePeriod.allCases.map(\.seconds) == [3_600, 86_400, 604_800, 2_592_000, 31_536_000])
        let result = parseBothWays("""
            <rss xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><ttl>x</ttl>
            <sy:updatePeriod>fortnightly</sy:updatePeriod><sy:updateFrequency>0</sy:updateFrequency></channel></rss>
            """)
        let feed = result.summary.metadata
        #expect(feed.ttl == nil && feed.updatePeriod == nil && feed.updateFrequency == nil && feed.refreshInterval == nil)
        var hints = FeedMetadata()
        hints.ttl = 60
        #expect(hints.refreshInterval == 3_600)
        hints.updatePeriod = .daily  // frequency defaults to 1
        #expect(hints.refreshInterval == 86_400)
    }
}

@Suite("Vocabulary: old and odd formats")
struct OldFormatTests {
    @Test(arguments: ["0.1", "0.2", "0.3"])
    func atomBefore1_0SaysItsVersion(version: String) {
        let result = parseBothWays("""
            <feed version="\(version)" xmlns="http://purl.org/atom/ns#"><title>Old</title><tagline>tag</tagline>
            <link rel="alternate" type="text/html" href="http://e.org/"/><modified>2003-12-13T18:30:02Z</modified>
            <entry><title>E</title><link rel="alternate" type="text/html" href="http://e.org/1"/><id>tag:e.org,2003:1</id>
            <issued>2003-12-13T08:29:29-04:00</issued><modified>2003-12-13T18:30:02Z</modified>
            <content type="text/html" mode="escaped">&lt;p&gt;x&lt;/p&gt;</content>
            <author><name>Mark</name><url>http://e.org/mark</url></author><contributor><name>Sam</name></contributor></entry></feed>
            """)
        #expect(result.summary.metadata.format == FeedFormat(family: .atom, version: version))
        #expect(result.summary.metadata.description?.value == "tag")
        let article = result.articles[0]
        #expect(article.id == "tag:e.org,2003:1" && article.link == "http://e.org/1")
        #expect(article.published.map(FeedDate.rfc3339) == "2003-12-13T12:29:29Z")
        #expect(article.content == TextContent("<p>x</p>", type: .html))
        #expect(article.authors == [Person(name: "Mark", uri: "http://e.org/mark")])
        #expect(article.contributors == [Person(name: "Sam")])
    }

    @Test(arguments: ["http://purl.org/echo/", "http://purl.org/pie/", "http://example.com/newformat#", "http://example.com/necho",
                      "uri/of/echo/namespace#", "http://purl.org/atom/ns#draft-ietf-atompub-format-05"])
    func atomDraftNamespacesAreAtom(namespace: String) {
        let result = parseBothWays("""
            <feed xmlns="\(namespace)"><title>Draft</title><entry><title>E</title><id>e</id><link href="http://e.org/e"/></entry></feed>
            """)
        #expect(result.summary.metadata.format?.family == .atom)
        #expect(result.summary.metadata.title == "Draft")
        #expect(result.articles.map(\.title) == ["E"])
        #expect(result.articles.first?.link == "http://e.org/e")
    }

    @Test func atomElementsInsideRSS() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>R</title>
            <atom:id>urn:feed</atom:id><atom:subtitle>sub</atom:subtitle><atom:updated>2005-01-01T00:00:00Z</atom:updated>
            <atom:author><atom:name>Feed Author</atom:name></atom:author><atom:logo>http://e.org/l.png</atom:logo>
            <item><atom:id>urn:1</atom:id><atom:title type="html">&lt;b&gt;T&lt;/b&gt;</atom:title>
            <atom:summary>S</atom:summary><atom:content type="html">&lt;p&gt;C&lt;/p&gt;</atom:content>
            <atom:author><atom:name>Item Author</atom:name></atom:author><atom:published>2005-02-02T00:00:00Z</atom:published>
            <atom:updated>2005-03-03T00:00:00Z</atom:updated><atom:category term="c" scheme="http://e.org/s"/>
            <atom:link href="http://e.org/1"/><atom:rights>R</atom:rights></item></channel></rss>
            """)
        let feed = result.summary.metadata
        #expect(feed.id == "urn:feed" && feed.description?.value == "sub" && feed.image == "http://e.org/l.png")
        #expect(feed.updated.map(FeedDate.rfc3339) == "2005-01-01T00:00:00Z")
        #expect(feed.authors == [Person(name: "Feed Author")])
        let article = result.articles[0]
        #expect(article.id == "urn:1" && article.idSource == .atomID)
        #expect(article.title == "<b>T</b>" && article.summary?.value == "S" && article.content == TextContent("<p>C</p>", type: .html))
        #expect(article.authors == [Person(name: "Item Author")] && article.link == "http://e.org/1" && article.rights == "R")
        #expect(article.categoryDetails == [Category(term: "c", scheme: "http://e.org/s")])
        #expect(article.published.map(FeedDate.rfc3339) == "2005-02-02T00:00:00Z" && article.updated.map(FeedDate.rfc3339) == "2005-03-03T00:00:00Z")
    }

    @Test func netscapeRSS091TellsItsDialectAndReadsItsEntities() {
        let netscape = parseBothWays("""
            <?xml version="1.0"?>
            <!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
            <rss version="0.91"><channel><title>Caf&eacute; &copy;</title><link>http://e.org/</link><description>d</description>
            <language>en-us</language><image><title>i</title><url>http://e.org/i.gif</url><link>http://e.org/</link>
            <description>Image tooltip</description></image>
            <item><title>One &mdash; two</title><link>http://e.org/1</link><description>x</description></item>
            <textinput><title>Search</title><link>http://e.org/s</link></textinput></channel></rss>
            """)
        #expect(netscape.summary.metadata.format == FeedFormat(family: .rss, version: "0.91", dialect: .netscape))
        #expect(netscape.summary.metadata.title == "Café ©")
        #expect(netscape.summary.metadata.imageDetails?.description == "Image tooltip")
        #expect(netscape.summary.metadata.language == "en-US")
        #expect(netscape.articles.map(\.title) == ["One — two"])
        let userland = parseBothWays("<rss version=\"0.91\"><channel><title>U</title><item><title>x</title></item></channel></rss>")
        #expect(userland.summary.metadata.format == FeedFormat(family: .rss, version: "0.91", dialect: .userland))
        #expect(parseBothWays("<rss version=\"0.92\"><channel/></rss>").summary.metadata.format?.dialect == nil)
    }

    @Test func microsoftCDF() {
        let result = parseBothWays("""
            <?xml version="1.0"?>
            <CHANNEL HREF="http://e.org/" LASTMOD="2002-09-07T00:00:01" BASE="http://e.org/">
              <TITLE>CDF</TITLE><ABSTRACT>About the channel</ABSTRACT>
              <LOGO HREF="http://e.org/logo.gif" STYLE="IMAGE"/><LOGO HREF="http://e.org/icon.gif" STYLE="ICON"/>
              <ITEM HREF="http://e.org/1" LASTMOD="2002-09-05T00:00:01"><TITLE>One</TITLE><ABSTRACT>First item</ABSTRACT></ITEM>
              <CHANNEL HREF="http://e.org/sub"><TITLE>Sub channel</TITLE>
                <ITEM HREF="http://e.org/2"><TITLE>Two</TITLE></ITEM>
              </CHANNEL>
            </CHANNEL>
            """)
        let feed = result.summary.metadata
        #expect(feed.format == FeedFormat(family: .cdf, version: ""))
        #expect(feed.format?.description == "CDF")
        #expect(feed.title == "CDF" && feed.link == "http://e.org/" && feed.description == TextContent("About the channel", type: .text))
        #expect(feed.image == "http://e.org/logo.gif" && feed.icon == "http://e.org/icon.gif")
        #expect(feed.updated.map(FeedDate.rfc3339) == "2002-09-07T00:00:01Z")
        #expect(result.articles.map(\.title) == ["One", "Two"])
        #expect(result.articles.map(\.link) == ["http://e.org/1", "http://e.org/2"])
        #expect(result.articles[0].updated.map(FeedDate.rfc3339) == "2002-09-05T00:00:01Z")
        #expect(result.articles[0].summary == TextContent("First item", type: .text))
    }

    @Test func wellKnownElementsInUnusualLetterCase() {
        let result = parseBothWays("""
            <RSS Version="2.0" xmlns:DC="http://purl.org/DC/elements/1.1/" xmlns:itunes="http://www.itunes.com/DTDs/Podcast-1.0.dtd">
            <Channel><TITLE>Upper</TITLE><Link>http://e.org/</Link><LastBuildDate>Sat, 07 Sep 2002 00:00:01 GMT</LastBuildDate>
            <ITEM><Title>X</Title><GUID IsPermaLink="false">x1</GUID><PUBDATE>Sat, 07 Sep 2002 00:00:01 GMT</PUBDATE>
            <Enclosure URL="http://e.org/x.mp3" Type="audio/mpeg" Length="42"/><DC:Creator>Jo</DC:Creator>
            <itunes:Duration>1:00</itunes:Duration><Category Domain="http://e.org/t">Tag</Category></ITEM></Channel></RSS>
            """)
        let feed = result.summary.metadata
        #expect(feed.format == FeedFormat(family: .rss, version: "2.0"))
        #expect(feed.title == "Upper" && feed.link == "http://e.org/" && feed.updated != nil)
        let article = result.articles[0]
        #expect(article.title == "X" && article.id == "x1" && article.link == nil && article.published != nil)
        #expect(article.enclosures == [Enclosure(url: "http://e.org/x.mp3", type: "audio/mpeg", length: 42)])
        #expect(article.authors == [Person(name: "Jo")] && article.podcast?.durationSeconds == 60)
        #expect(article.categoryDetails == [Category(term: "Tag", scheme: "http://e.org/t")])
    }

    @Test func anEntryNeverDisappearsBecauseOfAnUnexpectedAttributeOrChild() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:x="urn:x" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><channel><title>Odd</title>
            <item x:weird="1" rdf:parseType="Resource" xml:lang="" xml:base="::not a url::"><title>1</title></item>
            <item><title>2</title><x:wrapper><item><title>nested item, not an article</title></item></x:wrapper></item>
            <item><title>3</title><description><item>raw markup</item><entry/></description></item>
            <item><title>4</title><source url="http://e.org/s"><title>Source title</title></source><guid/></item>
            <x:group><item><title>5</title></item></x:group>
            <item><title>6</title><enclosure/><enclosure url=""/><category/><link></link><pubDate>no date</pubDate></item>
            </channel></rss>
            """)
        #expect(result.articles.map(\.title) == ["1", "2", "3", "4", "5", "6"])
        #expect(result.articles[0].language == nil)  // xml:lang="" says the language is unknown
        #expect(result.articles[2].summary?.value == "<item>raw markup</item><entry/>")  // markup inside a field is its value
        #expect(result.articles[5].publishedRaw == "no date" && result.articles[5].enclosures.isEmpty)
        let atom = parseBothWays("""
            <feed xmlns="http://www.w3.org/2005/Atom" xmlns:x="urn:x"><title>A</title>
            <entry x:flag="yes" foo="bar"><id>1</id><x:entry><entry><id>inner</id></entry></x:entry><link/><category/></entry>
            <x:wrap><entry><id>2</id></entry></x:wrap>
            </feed>
            """)
        #expect(atom.articles.map(\.id) == ["1", "2"])
    }
}

@Suite("Vocabulary: numeric references to 128–159")
struct Windows1252ReferenceTests {
    @Test func referencesTo128Through159AreWindows1252CharactersInTextAndAttributes() {
        let result = parseBothWays("""
            <rss version="2.0"><channel><title>Caf&#233; &#150; &#x93;quoted&#x94; &#128;5</title>
            <item><title>It&#146;s &#133;</title><guid>1</guid><category domain="http://e.org/&#150;">a&#151;b</category>
            <enclosure url="http://e.org/&#147;x&#148;.mp3" type="audio/mpeg"/></item></channel></rss>
            """)
        #expect(result.summary.metadata.title == "Café – “quoted” €5")
        #expect(result.articles[0].title == "It’s …")
        #expect(result.articles[0].categoryDetails == [Category(term: "a—b", scheme: "http://e.org/–")])
        #expect(result.articles[0].enclosures.first?.url == "http://e.org/“x”.mp3")
        // 0x81, 0x8D, 0x8F, 0x90 and 0x9D have no windows-1252 character: HTML5 keeps them as the C1 controls they name.
        let controls = parseBothWays("<rss><channel><title>a&#129;b&#157;c</title></channel></rss>")
        #expect(controls.summary.metadata.title == "a\u{81}b\u{9D}c")
        #expect(Dictionary(uniqueKeysWithValues: result.summary.repairs.counts)["windows1252References"] == 10)
    }
}

@Suite("Vocabulary: languages and embedded markup")
struct LanguageAndMarkupTests {
    @Test func languagesAreBCP47Tags() {
        let result = parseBothWays("""
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><language>EN_us</language>
            <item><guid>1</guid></item>
            <item xml:lang="zh_hant_tw"><guid>2</guid><podcast:transcript url="http://e.org/t" language="PT_br"/></item>
            <item xml:lang="English"><guid>3</guid></item>
            <item xml:lang="x-Klingon"><guid>4</guid></item>
            <item xml:lang="es-419"><guid>5</guid></item>
            </channel></rss>
            """)
        #expect(result.summary.metadata.language == "en-US")
        #expect(result.articles.map(\.language) == ["en-US", "zh-Hant-TW", "English", "x-klingon", "es-419"])
        #expect(result.articles[1].podcast?.transcripts.first?.language == "pt-BR")
    }

    @Test func embeddedSVGAndMathMLKeepTheirNamespaces() {
        let result = parseBothWays("""
            <feed xmlns="http://www.w3.org/2005/Atom"><title>M</title><entry><id>1</id>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>A circle:</p>
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"><circle cx="5" cy="5" r="4"/>
            <a xlink:href="#c"><text>c</text></a><foreignObject><p xmlns="http://www.w3.org/1999/xhtml">html again</p></foreignObject></svg>
            <math xmlns="http://www.w3.org/1998/Math/MathML"><mi>x</mi><mo>=</mo><mn>1</mn></math>
            <m:math xmlns:m="http://www.w3.org/1998/Math/MathML"><m:mi>y</m:mi></m:math>
            <xh:b xmlns:xh="http://www.w3.org/1999/xhtml">bold</xh:b></div></content></entry></feed>
            """)
        let content = result.articles[0].content
        #expect(content?.type == .html)
        let value = content?.value ?? ""
        #expect(value.hasPrefix("<p>A circle:</p>"))
        #expect(value.contains(#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><circle cx="5" cy="5" r="4"/>"#))
        #expect(value.contains(##"<a xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="#c"><text>c</text></a>"##))
        #expect(value.contains(#"<foreignObject><p xmlns="http://www.w3.org/1999/xhtml">html again</p></foreignObject></svg>"#))
        #expect(value.contains(#"<math xmlns="http://www.w3.org/1998/Math/MathML"><mi>x</mi><mo>=</mo><mn>1</mn></math>"#))
        #expect(value.contains(#"<m:math xmlns:m="http://www.w3.org/1998/Math/MathML"><m:mi>y</m:mi></m:math>"#))
        #expect(value.hasSuffix("<b>bold</b>"))  // XHTML is written as HTML, without its prefix
        // The serialised markup is well-formed XML with every namespace declared: expat reads it back.
        let recorder = NamespaceRecorder()
        let parser = XMLPushParser(handler: recorder)
        #expect(throws: Never.self) {
            try parser.parse(Array("<div xmlns=\"http://www.w3.org/1999/xhtml\">\(value)</div>".utf8))
            try parser.finish()
        }
        #expect(recorder.namespaces["circle"] == "http://www.w3.org/2000/svg")
        #expect(recorder.namespaces["mn"] == "http://www.w3.org/1998/Math/MathML")
        #expect(recorder.namespaces["p"] == "http://www.w3.org/1999/xhtml")
    }

    @Test func markupInTheFeedsOwnNamespaceIsPlainHTML() {
        let result = parseBothWays("""
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
            <channel rdf:about="http://e.org/"><title>R</title></channel>
            <item rdf:about="http://e.org/1"><title>T</title><description><p>naked <b>markup</b></p></description></item></rdf:RDF>
            """)
        #expect(result.articles[0].summary?.value == "<p>naked <b>markup</b></p>")
    }
}

/// Records each element's namespace URI by local name.
private final class NamespaceRecorder: XMLEventHandler {
    var namespaces: [String: String] = [:]
    func startElement(_ name: XMLName, attributes: XMLAttributes) { namespaces[name.localName.string] = name.namespaceURI.string }
}
