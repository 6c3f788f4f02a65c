import Foundation

/// Small generated feeds for the Fetch tests and the Fetch benchmark, and a fast 200 MB stream for the memory tests.
public enum FeedFixture {
    private static let words = ["feed", "article", "stream", "parser", "network", "memory", "thread", "byte", "server",
                                "client", "archive", "morning", "evening", "river", "mountain", "signal", "window",
                                "garden", "harbour", "lantern", "orbit", "pattern", "quartz", "ribbon", "saddle"]

    /// Writes an RSS 2.0 feed of `items` items to `file` a thousand items at a time, so a large feed never sits in
    /// memory (the same bytes as ``rss(items:seed:)`` for the same item count when `items` ≤ 1000).
    public static func writeRSS(items: Int, to file: URL) throws {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var written = 0
        var seed: UInt64 = 42
        while written < items {
            let batch = min(1000, items - written)
            var text = String(decoding: rss(items: batch, seed: seed), as: UTF8.self)
            // Keep the prologue only in the first batch and the epilogue only in the last.
            if written > 0, let start = text.range(of: "<item>") { text = String(text[start.lowerBound...]) }
            if written + batch < items, let end = text.range(of: "</channel>", options: .backwards) { text = String(text[..<end.lowerBound]) }
            try handle.write(contentsOf: Data(text.utf8))
            written += batch
            seed &+= 1
        }
    }

    /// An RSS 2.0 feed of `items` items, about 1.5 KB each, with varied text so it compresses like real feeds.
    public static func rss(items: Int, seed: UInt64 = 42) -> Data {
        var state = seed
        func word() -> String {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return words[Int((state >> 33) % UInt64(words.count))]
        }
        func sentence(_ count: Int) -> String { (0..<count).map { _ in word() }.joined(separator: " ") }
        var text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
        <channel>
        <title>Generated feed</title>
        <link>https://news.example.com/</link>
        <description>A generated feed for the Fetch tests</description>

        """
        for i in 0..<items {
            text += """
            <item>
              <title>Item \(i): \(sentence(6))</title>
              <link>https://news.example.com/items/\(i)</link>
              <guid isPermaLink="false">item-\(i)-\(state % 100_000)</guid>
              <pubDate>Mon, 0\(i % 9 + 1) Jan 2024 10:\(10 + i % 50):00 GMT</pubDate>
              <description>\(sentence(40)) &amp; \(sentence(20))</description>
              <content:encoded><![CDATA[<p>\(sentence(60))</p><p>\(sentence(50))</p>]]></content:encoded>
            </item>

            """
        }
        text += "</channel>\n</rss>\n"
        return Data(text.utf8)
    }

    /// Writes an RSS 2.0 feed of `items` items of about 1.3 KB (200 MB for 160,000) into `handle` without holding
    /// it: one item template, its number patched in, so even a debug build writes faster than a parser reads.
    /// Returns the bytes written.
    public static func streamRSS(items: Int, to handle: FileHandle) throws -> Int {
        let head = Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/">
            <channel><title>Big feed</title><link>https://example.org/</link><description>generated</description>

            """.utf8)
        let body = String(repeating: "Zürich — 東京 &lt;b&gt;bold&lt;/b&gt; and &amp; more text. ", count: 7)
        let template = Array("""
            <item><title>Item 0000000: Zürich — 東京</title><link>https://example.org/posts/0000000</link>\
            <guid isPermaLink="false">urn:example:0000000</guid><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate>\
            <dc:creator>Ada Lovelace</dc:creator><category>one</category><category>two</category>\
            <description>\(body)</description><content:encoded><![CDATA[<p>\(body)</p>]]></content:encoded>\
            <enclosure url="https://example.org/a.mp3" type="audio/mpeg" length="1234"/></item>

            """.utf8)
        return try stream(head: head, item: template, separator: [], tail: Array("</channel></rss>\n".utf8), items: items, to: handle)
    }

    /// Streams a JSON Feed 1.1 of `items` items (about 1.3 KB each; ids, urls and titles numbered) to `handle` in 64 KiB
    /// writes, from a template, fast even in a debug build; returns the bytes written. The JSON memory tests' feed.
    public static func streamJSONFeed(items: Int, to handle: FileHandle) throws -> Int {
        let head = Array(#"{"version":"https://jsonfeed.org/version/1.1","title":"Big feed","home_page_url":"https://example.org/","items":["#.utf8)
        let body = String(repeating: #"Zürich — 東京 <b class=\"x\">bold<\/b> and & more text. "#, count: 7)
        let template = Array("""
            {"id":"urn:example:0000000","url":"https://example.org/posts/0000000","title":"Item 0000000: Zürich — 東京",\
            "date_published":"2003-06-10T04:00:00Z","authors":[{"name":"Ada Lovelace"}],"tags":["one","two"],\
            "summary":"\(body)","content_html":"<p>\(body)<\\/p>",\
            "attachments":[{"url":"https://example.org/a.mp3","mime_type":"audio/mpeg","size_in_bytes":1234}]}
            """.utf8)
        return try stream(head: head, item: template, separator: Array(",\n".utf8), tail: Array("]}\n".utf8), items: items, to: handle)
    }

    /// Writes `head`, then `items` copies of `item` with every `0000000` replaced by the item's number (separated by
    /// `separator`), then `tail`, in 64 KiB writes.
    private static func stream(head: [UInt8], item template: [UInt8], separator: [UInt8], tail: [UInt8], items: Int,
                               to handle: FileHandle) throws -> Int {
        let marker = Array("0000000".utf8)
        var slots: [Int] = []
        var index = 0
        while index + marker.count <= template.count {
            if Array(template[index..<index + marker.count]) == marker { slots.append(index); index += marker.count } else { index += 1 }
        }
        var written = 0
        var chunk = head
        chunk.reserveCapacity(64 * 1024 + template.count)
        var item = template
        for number in 0..<items {
            var value = number
            for position in stride(from: marker.count - 1, through: 0, by: -1) {
                let digit = UInt8(0x30 + value % 10)
                value /= 10
                for slot in slots { item[slot + position] = digit }
            }
            if number > 0 { chunk.append(contentsOf: separator) }
            chunk.append(contentsOf: item)
            if chunk.count >= 64 * 1024 {
                try handle.write(contentsOf: chunk)
                written += chunk.count
                chunk.removeAll(keepingCapacity: true)
            }
        }
        chunk.append(contentsOf: tail)
        try handle.write(contentsOf: chunk)
        return written + chunk.count
    }
}
