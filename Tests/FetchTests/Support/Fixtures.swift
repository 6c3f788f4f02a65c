import CZlib
import ExpatXML
import Fetch
import Foundation
import XMLFetching
import Synchronization

/// Generated feeds.
enum FeedFixture {
    private static let words = ["feed", "article", "stream", "parser", "network", "memory", "thread", "byte", "server",
                                "client", "archive", "morning", "evening", "river", "mountain", "signal", "window",
                                "garden", "harbour", "lantern", "orbit", "pattern", "quartz", "ribbon", "saddle"]

    /// Writes an RSS 2.0 feed of `items` items to `file` a thousand items at a time, so a large feed never sits in
    /// memory (the same bytes as ``rss(items:seed:)`` for the same item count when `items` ≤ 1000).
    static func writeRSS(items: Int, to file: URL) throws {
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
    static func rss(items: Int, seed: UInt64 = 42) -> Data {
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
}

/// Compression fixtures, made with zlib (tests may call it directly; Sources/Fetch keeps its calls in Zlib.swift).
enum Compress {
    /// `data` compressed with `windowBits` (31 gzip, 15 zlib, -15 raw).
    static func deflate(_ data: Data, windowBits: Int32, level: Int32 = 6) -> Data {
        var stream = z_stream()
        precondition(CZlib_deflateInit2(&stream, level, windowBits, 8, Z_DEFAULT_STRATEGY) == Z_OK)
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(data.count))) + 64)
        let produced = data.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(out.count)
                precondition(CZlib.deflate(&stream, Z_FINISH) == Z_STREAM_END)
                return out.count - Int(stream.avail_out)
            }
        }
        return Data(output[0..<produced])
    }

    static func gzip(_ data: Data) -> Data { deflate(data, windowBits: 31) }
    static func zlib(_ data: Data) -> Data { deflate(data, windowBits: 15) }
    static func raw(_ data: Data) -> Data { deflate(data, windowBits: -15) }
}

/// Counts items (RSS `item`, Atom `entry`) as their end tags are parsed, and keeps the titles; the stand-in for
/// "an article was delivered" until Syndication exists.
final class ItemCounter: XMLEventHandler {
    private(set) var items = 0
    private(set) var titles: [String] = []
    private(set) var elements = 0
    private var inTitle = false
    var onItem: ((Int) -> Void)?

    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        elements += 1
        inTitle = name.localName.equals("title")
    }

    func text(_ text: XMLBytes) {
        if inTitle { titles.append(text.string) }
    }

    func endElement(_ name: XMLName) {
        inTitle = false
        if name.localName.equals("item") || name.localName.equals("entry") {
            items += 1
            onItem?(items)
        }
    }
}

/// A consumer that parses with an ``ItemCounter`` and exposes the parser.
final class CountingConsumer: FetchConsumer {
    let counter = ItemCounter()
    let inner: XMLParsingConsumer
    /// SHA-256 of the decoded bytes the consumer received.
    private(set) var decoded = SHA256()
    private(set) var finished = false
    private(set) var response: FetchResponse?

    init(configuration: ExpatXMLConfiguration = ExpatXMLConfiguration()) {
        inner = XMLParsingConsumer(handler: counter, configuration: configuration)
    }

    var items: Int { counter.items }

    func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        self.response = response
        try inner.fetchDidReceiveResponse(response)
    }

    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        decoded.update(bytes)
        try inner.fetchDidReceive(bytes)
    }

    func fetchDidFinish() throws {
        try inner.fetchDidFinish()
        finished = true
    }
}

/// A fresh token per test, for the fault server's counters and release signals.
func makeToken(_ name: String = #function) -> String {
    let base = name.filter { $0.isLetter || $0.isNumber }
    return "\(base)-\(UUID().uuidString.prefix(8))"
}

/// Waits (polling, generously) until `condition` holds; `false` on timeout. Never a timing assertion: the timeout
/// only keeps a broken test from hanging.
func waitUntil(timeout: TimeInterval = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return try condition()
}

/// A configuration for tests: the defaults, with whatever the test changes.
func testConfiguration(_ change: (inout FetchConfiguration) -> Void = { _ in }) -> FetchConfiguration {
    var configuration = FetchConfiguration()
    change(&configuration)
    return configuration
}

/// Fetches `url` with a ``CountingConsumer`` on a worker thread (the blocking API), for async tests that need the
/// item count and the hash of the decoded body afterwards.
func fetchCounting(_ fetcher: Fetcher, _ url: URL) async -> (FetchResult, Int, SHA256Digest) {
    await withCheckedContinuation { continuation in
        Thread {
            let consumer = CountingConsumer()
            let result = fetcher.fetch(FetchRequest(url: url), into: consumer)
            continuation.resume(returning: (result, consumer.items, consumer.decoded.finalize()))
        }.start()
    }
}

/// Runs blocking work (waiting, polling, blocking sockets) on a thread of its own, so async tests never block
/// Swift's cooperative pool, which has only as many threads as cores (two here).
func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
