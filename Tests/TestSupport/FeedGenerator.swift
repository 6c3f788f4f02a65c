import Foundation


/// What a generated feed contains, so every variant can be checked against it.
public struct FeedManifest: Codable, Equatable, Sendable {
    /// ``FeedGenerator/version`` when it was written.
    public var generatorVersion: Int
    /// RSS 2.0 or Atom 1.0.
    public var format: FeedGenerator.Format
    /// Items (or entries) in the feed.
    public var items: Int
    /// Start tags in the whole document (what the C no-op counts).
    public var elements: Int
    /// The document's size.
    public var bytes: Int
    /// The work every variant must reproduce: item count and the UTF-8 sizes of the extracted fields.
    public var expected: WorkTally
}

/// What a parser extracted, or what the generator wrote: item count and the total UTF-8 size of each item's title,
/// link, guid and date after parsing (entities resolved).
public struct WorkTally: Codable, Equatable, Sendable {
    /// Items counted.
    public var items = 0
    /// UTF-8 bytes of the items' titles, links, guids and dates.
    public var titleBytes = 0, linkBytes = 0, guidBytes = 0, pubDateBytes = 0

    /// Nothing counted yet.
    public init() {}

    mutating func add(lengths: FieldLengths) {
        items += 1
        titleBytes += lengths.title
        linkBytes += lengths.link
        guidBytes += lengths.guid
        pubDateBytes += lengths.pubDate
    }
}

/// Writes a realistic feed, deterministically (same bytes on every machine and run), streaming: it never
/// holds more than one chunk plus one item in memory, however many items it writes.
///
/// Every item has a title (non-ASCII text and sometimes an `&amp;`), a link, a guid, a date, an author,
/// two categories, an escaped-HTML description, a CDATA `content:encoded` and an enclosure (Atom: the
/// equivalents). About 1.3 KB per item (RSS; Atom a little more), like a real news feed with full content.
/// The benchmark's fixtures and the memory tests' 200 MB feed.
public struct FeedGenerator: Sendable {
    /// The two syndication formats the generator writes.
    public enum Format: String, Codable, Sendable {
        case rss, atom

        /// The local name of the element that opens one article.
        public var itemElement: StaticString { self == .rss ? "item" : "entry" }
    }

    /// Bump when the output changes, so cached fixtures are regenerated.
    public static let version = 1

    /// RSS 2.0 or Atom 1.0.
    public let format: Format
    /// How many items (entries) to write.
    public let items: Int
    /// Varies the text of otherwise identical feeds (the seed set's two feeds of one shape); 0 for the large fixtures.
    public var seed: UInt64 = 0

    /// A generator of `items` items in `format`, its text varied by `seed`.
    public init(format: Format, items: Int, seed: UInt64 = 0) {
        self.format = format
        self.items = items
        self.seed = seed
    }

    /// Generates the document, handing it to `sink` in pieces of exactly `chunkSize` bytes (the last one shorter).
    public func generate(chunkSize: Int = 64 * 1024, into sink: (UnsafeRawBufferPointer) throws -> Void) rethrows -> FeedManifest {
        var writer = ByteWriter(capacity: chunkSize + 16 * 1024)
        var tally = WorkTally()
        var elements = 0
        var bytes = 0
        func drain(_ writer: inout ByteWriter, all: Bool) throws {
            while writer.bytes.count >= chunkSize || (all && !writer.bytes.isEmpty) {
                let count = min(chunkSize, writer.bytes.count)
                try writer.bytes.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                bytes += count
                writer.bytes.removeFirst(count)
            }
        }
        elements += format == .rss ? writeRSSHeader(&writer) : writeAtomHeader(&writer)
        for index in 0..<items {
            var random = SplitMix64(seed: UInt64(index) &* 0x9E37_79B9_7F4A_7C15 ^ (format == .rss ? 0x5255 : 0x4154) ^ (seed &* 0xD1B5_4A32_D192_ED03))
            let fields = format == .rss ? writeRSSItem(&writer, index: index, random: &random)
                                        : writeAtomEntry(&writer, index: index, random: &random)
            elements += fields.elements
            tally.add(lengths: fields.lengths)
            try drain(&writer, all: false)
        }
        writer.append(format == .rss ? "  </channel>\n</rss>\n" : "</feed>\n")
        try drain(&writer, all: true)
        return FeedManifest(generatorVersion: Self.version, format: format, items: items, elements: elements,
                            bytes: bytes, expected: tally)
    }

    // MARK: RSS 2.0

    private func writeRSSHeader(_ w: inout ByteWriter) -> Int {
        w.append("""
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" \
            xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:atom="http://www.w3.org/2005/Atom">
              <channel>
                <title>Feedingest Bench News — Zürich &amp; 東京</title>
                <link>https://news.example.com/</link>
                <description>A generated feed for benchmarking: deterministic, realistic, large.</description>
                <language>en</language>
                <lastBuildDate>Wed, 01 Jan 2025 00:00:00 +0000</lastBuildDate>
                <atom:link href="https://news.example.com/feed.xml" rel="self" type="application/rss+xml"/>
                <generator>feedingest-bench</generator>
                <ttl>30</ttl>

            """)
        return 10  // rss channel title link description language lastBuildDate atom:link generator ttl
    }

    private func writeRSSItem(_ w: inout ByteWriter, index: Int, random: inout SplitMix64) -> (elements: Int, lengths: FieldLengths) {
        var lengths = FieldLengths()
        let number = items - index  // newest first
        let date = Self.baseDate - Int64(index) * 1800 - Int64(random.next(below: 600))
        w.append("    <item>\n      <title>")
        lengths.title = writeTitle(&w, number: number, random: &random)
        w.append("</title>\n      <link>")
        lengths.link = writeLink(&w, number: number, date: date, random: &random)
        w.append("</link>\n      <guid isPermaLink=\"false\">")
        lengths.guid = writeGUID(&w, random: &random)
        w.append("</guid>\n      <pubDate>")
        lengths.pubDate = writeRFC822(&w, date)
        w.append("</pubDate>\n      <dc:creator>")
        w.append(Self.authors[random.next(below: Self.authors.count)])
        w.append("</dc:creator>\n      <category>")
        w.append(Self.categories[random.next(below: Self.categories.count)])
        w.append("</category>\n      <category domain=\"https://news.example.com/tags\">")
        w.append(Self.categories[random.next(below: Self.categories.count)])
        w.append("</category>\n      <description>")
        writeEscapedHTML(&w, number: number, random: &random)
        w.append("</description>\n      <content:encoded><![CDATA[")
        writeHTML(&w, number: number, random: &random)
        w.append("]]></content:encoded>\n      <enclosure url=\"https://cdn.example.com/audio/")
        w.append(number)
        w.append(".mp3\" length=\"")
        w.append(1_000_000 + random.next(below: 50_000_000))
        w.append("\" type=\"audio/mpeg\"/>\n    </item>\n")
        return (11, lengths)  // item title link guid pubDate dc:creator category×2 description content:encoded enclosure
    }

    // MARK: Atom 1.0

    private func writeAtomHeader(_ w: inout ByteWriter) -> Int {
        w.append("""
            <?xml version="1.0" encoding="UTF-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">
              <title>Feedingest Bench News — Zürich &amp; 東京</title>
              <subtitle>A generated feed for benchmarking: deterministic, realistic, large.</subtitle>
              <id>urn:uuid:6f1c2a8e-0d4b-4c55-9a51-3f0f1e2d9b10</id>
              <updated>2025-01-01T00:00:00Z</updated>
              <link rel="alternate" type="text/html" href="https://news.example.com/"/>
              <link rel="self" type="application/atom+xml" href="https://news.example.com/atom.xml"/>
              <author><name>Feedingest Newsroom</name></author>
              <generator uri="https://news.example.com/" version="1">feedingest-bench</generator>

            """)
        return 10  // feed title subtitle id updated link link author name generator
    }

    private func writeAtomEntry(_ w: inout ByteWriter, index: Int, random: inout SplitMix64) -> (elements: Int, lengths: FieldLengths) {
        var lengths = FieldLengths()
        let number = items - index
        let date = Self.baseDate - Int64(index) * 1800 - Int64(random.next(below: 600))
        w.append("  <entry>\n    <title type=\"text\">")
        lengths.title = writeTitle(&w, number: number, random: &random)
        w.append("</title>\n    <link rel=\"alternate\" type=\"text/html\" href=\"")
        lengths.link = writeLink(&w, number: number, date: date, random: &random)
        w.append("\"/>\n    <link rel=\"enclosure\" type=\"audio/mpeg\" length=\"")
        w.append(1_000_000 + random.next(below: 50_000_000))
        w.append("\" href=\"https://cdn.example.com/audio/")
        w.append(number)
        w.append(".mp3\"/>\n    <id>")
        lengths.guid = writeGUID(&w, random: &random)
        w.append("</id>\n    <published>")
        lengths.pubDate = writeRFC3339(&w, date)
        w.append("</published>\n    <updated>")
        _ = writeRFC3339(&w, date + Int64(random.next(below: 7200)))
        w.append("</updated>\n    <author><name>")
        w.append(Self.authors[random.next(below: Self.authors.count)])
        w.append("</name></author>\n    <category term=\"")
        w.append(Self.categories[random.next(below: Self.categories.count)])
        w.append("\"/>\n    <category scheme=\"https://news.example.com/tags\" term=\"")
        w.append(Self.categories[random.next(below: Self.categories.count)])
        w.append("\"/>\n    <summary type=\"html\">")
        writeEscapedHTML(&w, number: number, random: &random)
        w.append("</summary>\n    <content type=\"html\"><![CDATA[")
        writeHTML(&w, number: number, random: &random)
        w.append("]]></content>\n  </entry>\n")
        return (13, lengths)  // entry title link link id published updated author name category×2 summary content
    }

    // MARK: Pieces (each returns the UTF-8 length of the field's value after parsing, when it is one)

    private func writeTitle(_ w: inout ByteWriter, number: Int, random: inout SplitMix64) -> Int {
        let start = w.bytes.count
        var unescapedAdjustment = 0
        for word in 0..<(4 + random.next(below: 5)) {
            if word > 0 { w.append(" ") }
            w.append(Self.words[random.next(below: Self.words.count)])
        }
        if random.next(below: 4) == 0 {
            w.append(" &amp; more")  // "&amp;" is 5 bytes in the document, 1 after parsing
            unescapedAdjustment -= 4
        }
        w.append(" — Zürich — 東京 #")
        w.append(number)
        return w.bytes.count - start + unescapedAdjustment
    }

    private func writeLink(_ w: inout ByteWriter, number: Int, date: Int64, random: inout SplitMix64) -> Int {
        let start = w.bytes.count
        let (year, month, day) = Self.civil(fromDays: date / 86_400)
        w.append("https://news.example.com/")
        w.append(year)
        w.append("/")
        w.appendTwoDigits(month)
        w.append("/")
        w.appendTwoDigits(day)
        w.append("/")
        for word in 0..<3 {
            if word > 0 { w.append("-") }
            w.append(Self.slugWords[random.next(below: Self.slugWords.count)])
        }
        w.append("-")
        w.append(number)
        return w.bytes.count - start
    }

    private func writeGUID(_ w: inout ByteWriter, random: inout SplitMix64) -> Int {
        let start = w.bytes.count
        w.append("urn:uuid:")
        let high = random.next(), low = random.next()
        w.appendHex(high >> 32, digits: 8)
        w.append("-")
        w.appendHex((high >> 16) & 0xFFFF, digits: 4)
        w.append("-4")
        w.appendHex(high & 0xFFF, digits: 3)
        w.append("-a")
        w.appendHex(low >> 52, digits: 3)
        w.append("-")
        w.appendHex(low & 0xFFFF_FFFF_FFFF, digits: 12)
        return w.bytes.count - start
    }

    private func writeEscapedHTML(_ w: inout ByteWriter, number: Int, random: inout SplitMix64) {
        w.append("&lt;p&gt;")
        writeWords(&w, count: 6 + random.next(below: 5), random: &random)
        w.append(" &lt;strong&gt;Zürich — 東京&lt;/strong&gt; ")
        writeWords(&w, count: 4 + random.next(below: 5), random: &random)
        w.append(" &amp;amp; more. &lt;a href=&quot;https://news.example.com/story/")
        w.append(number)
        w.append("&quot;&gt;Read more&lt;/a&gt;&lt;/p&gt;")
    }

    private func writeHTML(_ w: inout ByteWriter, number: Int, random: inout SplitMix64) {
        w.append("<p>")
        writeWords(&w, count: 8 + random.next(below: 6), random: &random)
        w.append("</p><figure><img src=\"https://cdn.example.com/img/")
        w.append(number)
        w.append(".jpg\" alt=\"Zürich — 東京\" width=\"1200\" height=\"800\"/><figcaption>")
        writeWords(&w, count: 2 + random.next(below: 4), random: &random)
        w.append("</figcaption></figure><p>")
        writeWords(&w, count: 8 + random.next(below: 6), random: &random)
        w.append(" <a href=\"https://news.example.com/related/")
        w.append(number &+ 7)
        w.append("\">Related</a> &amp; <em>more</em>.</p>")
    }

    private func writeWords(_ w: inout ByteWriter, count: Int, random: inout SplitMix64) {
        for word in 0..<count {
            if word > 0 { w.append(" ") }
            w.append(Self.words[random.next(below: Self.words.count)])
        }
    }

    // MARK: Dates

    /// 2025-01-01T00:00:00Z; items go back half an hour each.
    static let baseDate: Int64 = 1_735_689_600

    private func writeRFC822(_ w: inout ByteWriter, _ seconds: Int64) -> Int {
        let start = w.bytes.count
        let days = seconds / 86_400, rest = Int(seconds % 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        w.append(Self.weekdays[Int((days + 4) % 7)])  // 1970-01-01 was a Thursday
        w.append(", ")
        w.appendTwoDigits(day)
        w.append(" ")
        w.append(Self.months[month - 1])
        w.append(" ")
        w.append(year)
        w.append(" ")
        w.appendTwoDigits(rest / 3600)
        w.append(":")
        w.appendTwoDigits(rest / 60 % 60)
        w.append(":")
        w.appendTwoDigits(rest % 60)
        w.append(" +0000")
        return w.bytes.count - start
    }

    private func writeRFC3339(_ w: inout ByteWriter, _ seconds: Int64) -> Int {
        let start = w.bytes.count
        let days = seconds / 86_400, rest = Int(seconds % 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        w.append(year)
        w.append("-")
        w.appendTwoDigits(month)
        w.append("-")
        w.appendTwoDigits(day)
        w.append("T")
        w.appendTwoDigits(rest / 3600)
        w.append(":")
        w.appendTwoDigits(rest / 60 % 60)
        w.append(":")
        w.appendTwoDigits(rest % 60)
        w.append("Z")
        return w.bytes.count - start
    }

    /// Howard Hinnant's days-from-civil inverse (proleptic Gregorian), for days since 1970-01-01.
    static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (Int(yoe + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    // MARK: Vocabulary (already valid XML text: no markup characters)

    static let words: [[UInt8]] = [
        "market", "update", "council", "river", "design", "energy", "transit", "festival", "harbour", "research",
        "Zürich", "東京", "café", "naïve", "São Paulo", "Kraków", "Ελλάδα", "München", "Île-de-France", "señor",
        "smørrebrød", "北京", "Москва", "data", "open", "source", "policy", "weather", "report", "budget",
        "school", "garden", "railway", "museum", "league", "season", "launch", "review", "analysis", "interview",
        "the", "a", "of", "and", "in", "for", "on", "with", "after", "new", "city", "plans", "vote", "debate",
    ].map { Array($0.utf8) }
    static let slugWords: [[UInt8]] = [
        "market", "update", "council", "river", "design", "energy", "transit", "festival", "harbour", "research",
        "zurich", "tokyo", "policy", "weather", "report", "budget", "school", "garden", "railway", "museum",
    ].map { Array($0.utf8) }
    static let authors: [[UInt8]] = [
        "Anna Müller", "José García", "Chen Wei 陈伟", "Olivia Smith", "Søren Kierkegaard", "Aiko Tanaka 田中愛子",
        "Priya Patel", "Łukasz Nowak",
    ].map { Array($0.utf8) }
    static let categories: [[UInt8]] = [
        "World", "Technology", "Science", "Culture", "Sport", "Économie", "Politik", "Reise &amp; Freizeit",
        "Gesundheit", "Kultur", "日本", "Schweiz",
    ].map { Array($0.utf8) }
    static let weekdays: [[UInt8]] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].map { Array($0.utf8) }
    static let months: [[UInt8]] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }
}

/// The UTF-8 sizes of one item's extracted fields, as the generator knows them.
struct FieldLengths {
    var title = 0, link = 0, guid = 0, pubDate = 0
}

/// An append-only byte buffer with cheap appends for literals, byte arrays and numbers.
struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always) mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    @inline(__always) mutating func append(_ other: [UInt8]) {
        bytes.append(contentsOf: other)
    }

    mutating func append(_ number: Int) {
        precondition(number >= 0)
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var value = number, index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(truncatingIfNeeded: 0x30 + value % 10)
                value /= 10
            } while value > 0
            bytes.append(contentsOf: buffer[index...])
        }
    }

    mutating func appendTwoDigits(_ number: Int) {
        bytes.append(UInt8(truncatingIfNeeded: 0x30 + number / 10 % 10))
        bytes.append(UInt8(truncatingIfNeeded: 0x30 + number % 10))
    }

    mutating func appendHex(_ value: UInt64, digits: Int) {
        let hex: StaticString = "0123456789abcdef"
        hex.withUTF8Buffer { table in
            for shift in stride(from: (digits - 1) * 4, through: 0, by: -4) {
                bytes.append(table[Int((value >> UInt64(shift)) & 0xF)])
            }
        }
    }
}
