import ExpatXML
import Fetch
import Foundation
import TestSupport
import XMLFetching
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

    /// A fetcher is released after its last transfer, and its thread ends with it; `shutdown()` joins the thread at
    /// once: a process that exits right after must not race the thread's TLS clean-up against OpenSSL's own (it
    /// segfaulted about once in 150 runs of `feedingest LIST` before).
    @Test func aReleasedOrShutDownFetcherEndsItsThread() throws {
        let name = "fx\(UInt32.random(in: 0...UInt32.max))"
        func threads() -> Int { Self.threads(named: name) }
        weak var released: Fetcher?
        do {
            var configuration = FetchConfiguration()
            configuration.threadName = name
            let fetcher = Fetcher(configuration: configuration)
            released = fetcher
            _ = fetcher.fetch(FetchRequest(url: URL(string: "http://127.0.0.1:1/feed.xml")!), into: CountingConsumer())
            #expect(threads() == 1, "the transfer thread runs, under its configured name")
        }
        // The transfer thread drops its last transfer (and with it the fetcher) just after completing it.
        let deadline = Date().addingTimeInterval(10)
        while (released != nil || threads() > 0) && Date() < deadline { usleep(1000) }
        #expect(released == nil, "nothing keeps a fetcher alive after its last transfer")
        #expect(threads() == 0, "its thread ends with it")

        // An explicit shutdown joins the thread at once, and a later fetch fails instead of hanging.
        var configuration = FetchConfiguration()
        configuration.threadName = name
        let fetcher = Fetcher(configuration: configuration)
        _ = fetcher.fetch(FetchRequest(url: URL(string: "http://127.0.0.1:1/feed.xml")!), into: CountingConsumer())
        fetcher.shutdown()
        #expect(threads() == 0, "joined by shutdown()")
        let late = fetcher.fetch(FetchRequest(url: URL(string: "http://127.0.0.1:1/feed.xml")!), into: CountingConsumer())
        #expect(late.error?.kind == .cancelled, "\(String(describing: late.error))")
        fetcher.shutdown()  // idempotent
    }

    /// The transfer thread (and libcurl) start with the first network transfer: a fetcher that only reads local files,
    /// as `feedingest parse FILE` does, starts no thread.
    /// How many of this process's threads carry `name`.
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    @Test func aFetcherThatOnlyReadsLocalFilesStartsNoThread() throws {
        let name = "fl\(UInt32.random(in: 0...UInt32.max))"
        func threads() -> Int { Self.threads(named: name) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("local-\(UUID().uuidString).xml")
        try FeedFixture.rss(items: 3).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var configuration = FetchConfiguration()
        configuration.threadName = name
        let fetcher = Fetcher(configuration: configuration)
        let counter = CountingConsumer()
        let result = fetcher.fetch(.localFile(file.path), into: counter)
        #expect(result.isOK)
        #expect(threads() == 0, "no transfer thread for a local file")
        _ = fetcher.fetch(FetchRequest(url: URL(string: "http://127.0.0.1:1/feed.xml")!), into: CountingConsumer())
        #expect(threads() == 1, "the first network transfer starts it")
        fetcher.shutdown()
        #expect(threads() == 0)
    }

    @Test func connectionRefused() throws {
        let port = try Loopback.freePort()  // nothing listens there
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

    /// Whether this process's network namespace has no interface but loopback. /proc/self/net/dev follows the
    /// process's namespace (/sys/class/net would show the namespace that mounted /sys).
    static var onlyLoopback: Bool {
        guard let text = try? String(contentsOfFile: "/proc/self/net/dev", encoding: .utf8) else { return false }
        let interfaces = text.split(separator: "\n").dropFirst(2).compactMap { line in
            line.split(separator: ":", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return interfaces == ["lo"]
    }
}

/// A listening socket whose accept queue is full, so a new connection's SYN goes unanswered: a real connect timeout.
@Suite("Connect timeout")
struct ConnectTimeoutTests {
    @Test func unansweredSYNTripsTheConnectTimeout() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 && listen(listener, 0) == 0
            }
        }
        try #require(ready)
        let port = Int(UInt16(bigEndian: address.sin_port))
        // Fill the accept queue (backlog 0 holds one) with connections nobody accepts.
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        for _ in 0..<2 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fillers.append(fd)
        }
        Thread.sleep(forTimeInterval: 0.2)  // let the handshakes of the fillers settle (not a timing assertion)
        let fetcher = Fetcher(configuration: testConfiguration { $0.connectTimeout = .milliseconds(1500) })
        let result = fetcher.fetch(FetchRequest(url: URL(string: "http://127.0.0.1:\(port)/feed.xml")!), into: CountingConsumer())
        let error = try #require(result.error)
        #expect(error.kind == .timeout, "\(error)")
        #expect(error.curlCode == .operationTimedOut)
        #expect(error.message.lowercased().contains("connect"), "\(error.message)")  // the connect timeout, not the total one
    }
}
