import Foundation
import Testing

/// Streaming a 200 MB feed to NDJSON keeps memory flat: measured in a child process, asserted on memory only.
@Suite("feedingest parse memory")
struct ParseMemoryTests {
    /// 160,000 items of about 1.3 KB: over 200 MB of RSS, generated on the fly and piped in.
    static let items = 160_000

    @Test func streamingA200MBFeedToNDJSONStaysUnder32MiB() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Paths.packageRoot.appendingPathComponent("scripts/peak_rss.py").path,
                             CommandRunner.binary.path, "parse", "-"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let written = try FeedStream.write(items: Self.items, to: input.fileHandleForWriting)
        try input.fileHandleForWriting.close()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let report = try #require(try JSONSerialization.jsonObject(with: result) as? [String: Any], "no report from peak_rss.py")
        let peakMiB = Double(report["maxrss_kib"] as? Int ?? 0) / 1024
        print(String(format: "feedingest parse: %.1f MB of RSS (%d items) to NDJSON on /dev/null: peak RSS %.1f MiB", Double(written) / 1e6, Self.items, peakMiB))
        #expect(report["status"] as? Int == 0)
        #expect(written > 200_000_000)
        #expect(peakMiB > 0 && peakMiB < 32, "peak RSS \(peakMiB) MiB")
    }
}

/// Writes a large RSS 2.0 feed into a pipe without holding it: one item template, its number patched in.
enum FeedStream {
    static func write(items: Int, to handle: FileHandle) throws -> Int {
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
            chunk.append(contentsOf: item)
            if chunk.count >= 64 * 1024 {
                try handle.write(contentsOf: chunk)
                written += chunk.count
                chunk.removeAll(keepingCapacity: true)
            }
        }
        chunk.append(contentsOf: Array("</channel></rss>\n".utf8))
        try handle.write(contentsOf: chunk)
        return written + chunk.count
    }
}
