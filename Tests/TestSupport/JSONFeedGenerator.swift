import Foundation

/// What a generated JSON Feed contains, so every variant can be checked against it.
public struct JSONFeedManifest: Codable, Equatable, Sendable {
    /// ``JSONFeedGenerator/version`` when it was written.
    public var generatorVersion: Int
    /// Items in the feed.
    public var items: Int
    /// Objects in the whole document (what the C no-op counts).
    public var objects: Int
    /// The document's size.
    public var bytes: Int
    /// The work every variant must reproduce: item count and the UTF-8 sizes of each item's title, url, id and
    /// date_published after parsing (escapes resolved).
    public var expected: WorkTally
}

/// Writes a realistic JSON Feed 1.1, deterministically and streaming, like ``FeedGenerator`` does RSS and Atom.
///
/// Every item has an id, a url, a title (non-ASCII text, sometimes an escaped quote), a summary and an HTML content
/// (with escaped quotes and a `\/`, as JSON serialisers write them), two dates, an author, two tags and an audio
/// attachment: about 1.2 KB an item, one item a line, so 17,000 items make a feed of about 20 MB, like the RSS fixture.
/// The benchmark's JSON fixtures and the JSON memory tests' feeds.
public struct JSONFeedGenerator: Sendable {
    /// Bump when the output changes, so cached fixtures are regenerated.
    public static let version = 1

    /// How many items to write.
    public let items: Int

    /// A generator of `items` items.
    public init(items: Int) { self.items = items }

    /// Generates the document, handing it to `sink` in pieces of exactly `chunkSize` bytes (the last one shorter).
    public func generate(chunkSize: Int = 64 * 1024, into sink: (UnsafeRawBufferPointer) throws -> Void) rethrows -> JSONFeedManifest {
        var writer = ByteWriter(capacity: chunkSize + 16 * 1024)
        var tally = WorkTally()
        var bytes = 0
        func drain(_ writer: inout ByteWriter, all: Bool) throws {
            while writer.bytes.count >= chunkSize || (all && !writer.bytes.isEmpty) {
                let count = min(chunkSize, writer.bytes.count)
                try writer.bytes.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                bytes += count
                writer.bytes.removeFirst(count)
            }
        }
        writer.append("""
            {"version":"https://jsonfeed.org/version/1.1","title":"Feedingest Bench News \\u2014 Z\\u00fcrich & 東京",\
            "home_page_url":"https:\\/\\/news.example.com\\/","feed_url":"https:\\/\\/news.example.com\\/feed.json",\
            "description":"A generated feed for benchmarking: deterministic, realistic, large.","language":"en",\
            "authors":[{"name":"Feedingest Newsroom","url":"https:\\/\\/news.example.com\\/"}],"items":[

            """)
        for index in 0..<items {
            var random = SplitMix64(seed: UInt64(index) &* 0x9E37_79B9_7F4A_7C15 ^ 0x4A53_4F4E)
            if index > 0 { writer.append(",\n") }
            tally.add(lengths: writeItem(&writer, index: index, random: &random))
            try drain(&writer, all: false)
        }
        writer.append("\n]}\n")
        try drain(&writer, all: true)
        return JSONFeedManifest(generatorVersion: Self.version, items: items, objects: 2 + 3 * items, bytes: bytes, expected: tally)
    }

    private func writeItem(_ w: inout ByteWriter, index: Int, random: inout SplitMix64) -> FieldLengths {
        var lengths = FieldLengths()
        let number = items - index  // newest first
        let date = FeedGenerator.baseDate - Int64(index) * 1800 - Int64(random.next(below: 600))
        w.append("{\"id\":\"")
        var start = w.bytes.count
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
        lengths.guid = w.bytes.count - start

        w.append("\",\"url\":\"")
        start = w.bytes.count
        let (year, month, day) = FeedGenerator.civil(fromDays: date / 86_400)
        w.append("https://news.example.com/")
        w.append(year)
        w.append("/")
        w.appendTwoDigits(month)
        w.append("/")
        w.appendTwoDigits(day)
        w.append("/")
        for word in 0..<3 {
            if word > 0 { w.append("-") }
            w.append(FeedGenerator.slugWords[random.next(below: FeedGenerator.slugWords.count)])
        }
        w.append("-")
        w.append(number)
        lengths.link = w.bytes.count - start

        w.append("\",\"title\":\"")
        start = w.bytes.count
        var escapes = 0
        for word in 0..<(4 + random.next(below: 5)) {
            if word > 0 { w.append(" ") }
            w.append(FeedGenerator.words[random.next(below: FeedGenerator.words.count)])
        }
        if random.next(below: 4) == 0 {
            w.append(" \\\"& more\\\"")  // \" is 2 bytes written, 1 parsed
            escapes += 2
        }
        w.append(" — Zürich — 東京 #")
        w.append(number)
        lengths.title = w.bytes.count - start - escapes

        w.append("\",\"summary\":\"")
        words(&w, count: 6 + random.next(below: 5), random: &random)
        w.append(" Zürich — 東京. ")
        words(&w, count: 4 + random.next(below: 5), random: &random)
        w.append("\",\"content_html\":\"<p>")
        words(&w, count: 8 + random.next(below: 6), random: &random)
        w.append("</p><figure><img src=\\\"https:\\/\\/cdn.example.com\\/img\\/")
        w.append(number)
        w.append(".jpg\\\" alt=\\\"Zürich — 東京\\\" width=\\\"1200\\\" height=\\\"800\\\"><figcaption>")
        words(&w, count: 2 + random.next(below: 4), random: &random)
        w.append("</figcaption></figure><p>")
        words(&w, count: 8 + random.next(below: 6), random: &random)
        w.append(" <a href=\\\"https:\\/\\/news.example.com\\/related\\/")
        w.append(number &+ 7)
        w.append("\\\">Related</a> &amp; <em>more</em>.</p>\\n<p>")
        words(&w, count: 10 + random.next(below: 8), random: &random)
        w.append("</p>\",\"date_published\":\"")
        lengths.pubDate = rfc3339(&w, date)
        w.append("\",\"date_modified\":\"")
        _ = rfc3339(&w, date + Int64(random.next(below: 7200)))
        w.append("\",\"authors\":[{\"name\":\"")
        w.append(FeedGenerator.authors[random.next(below: FeedGenerator.authors.count)])
        w.append("\"}],\"tags\":[\"")
        w.append(Self.tags[random.next(below: Self.tags.count)])
        w.append("\",\"")
        w.append(Self.tags[random.next(below: Self.tags.count)])
        w.append("\"],\"attachments\":[{\"url\":\"https://cdn.example.com/audio/")
        w.append(number)
        w.append(".mp3\",\"mime_type\":\"audio/mpeg\",\"size_in_bytes\":")
        w.append(1_000_000 + random.next(below: 50_000_000))
        w.append(",\"duration_in_seconds\":")
        w.append(60 + random.next(below: 3600))
        w.append("}]}")
        return lengths
    }

    private func words(_ w: inout ByteWriter, count: Int, random: inout SplitMix64) {
        for word in 0..<count {
            if word > 0 { w.append(" ") }
            w.append(FeedGenerator.words[random.next(below: FeedGenerator.words.count)])
        }
    }

    private func rfc3339(_ w: inout ByteWriter, _ seconds: Int64) -> Int {
        let start = w.bytes.count
        let days = seconds / 86_400, rest = Int(seconds % 86_400)
        let (year, month, day) = FeedGenerator.civil(fromDays: days)
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

    static let tags: [[UInt8]] = ["World", "Technology", "Science", "Culture", "Sport", "Économie", "Politik", "Reise & Freizeit",
                                  "Gesundheit", "Kultur", "日本", "Schweiz"].map { Array($0.utf8) }
}
