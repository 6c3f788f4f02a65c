import ExpatXML
import Fetch
import Foundation
import Testing

/// What is fetched and what is refused, and the network failures that need no misbehaving server.
@Suite("Requests and network failures")
struct RequestTests {
    @Test func fileURLsNeedAnExplicitRequest() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("request-\(UUID().uuidString).xml")
        try FeedFixture.rss(items: 4).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let refused = Fetcher.shared.fetch(FetchRequest(url: file), into: CountingConsumer())
        #expect(refused.error?.kind == .unsupportedScheme)
        let consumer = CountingConsumer()
        let allowed = Fetcher.shared.fetch(.localFile(file.path), into: consumer)
        #expect(allowed.isOK)
        #expect(consumer.items == 4)
        #expect(allowed.contentEncoding == nil)
        let missing = Fetcher.shared.fetch(.localFile("/nonexistent/feed.xml"), into: CountingConsumer())
        #expect(missing.error?.kind == .fileUnreadable)
    }

    @Test(arguments: ["ftp://127.0.0.1/feed.xml", "gopher://127.0.0.1/", "dict://127.0.0.1/", "data:text/xml,<a/>"])
    func otherSchemesAreRefused(url: String) throws {
        let result = Fetcher.shared.fetch(FetchRequest(url: URL(string: url)!), into: CountingConsumer())
        #expect(result.error?.kind == .unsupportedScheme)
    }

    @Test func urlEntryPointReadsAnExplicitFileURL() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("entry-\(UUID().uuidString).xml.gz")
        try Compress.gzip(FeedFixture.rss(items: 7)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let counter = ItemCounter()
        let result = try XMLPushParser.parse(contentsOf: file, handler: counter)
        #expect(result.isOK)
        #expect(counter.items == 7)
    }

    @Test func connectionRefused() throws {
        let port = try freePort()  // nothing listens there
        let result = Fetcher().fetch(FetchRequest(url: URL(string: "http://127.0.0.1:\(port)/feed.xml")!), into: CountingConsumer())
        let error = try #require(result.error)
        #expect(error.kind == .connectionRefused)
        #expect(error.curlCode == .couldntConnect)
        #expect(error.url == "http://127.0.0.1:\(port)/feed.xml")
        #expect(error.message.contains("127.0.0.1"))
        #expect(result.response == nil)
    }

    /// Only inside the test network namespace (loopback alone), so the lookup cannot leave the machine.
    @Test(.enabled(if: RequestTests.onlyLoopback, "runs only offline (scripts/offline.sh), so no resolver is asked"))
    func dnsFailure() throws {
        let result = Fetcher().fetch(FetchRequest(url: URL(string: "http://feedingest-test.invalid/feed.xml")!), into: CountingConsumer())
        let error = try #require(result.error)
        #expect(error.kind == .dnsFailure, "\(error)")
        #expect(error.curlCode == .couldntResolveHost)
    }

    static var onlyLoopback: Bool {
        let interfaces = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/net")) ?? ["unknown"]
        return interfaces == ["lo"]
    }
}
