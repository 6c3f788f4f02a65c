import ArticleStore
import Fetch
import Foundation
import Ingest
import Testing

/// A Python asyncio server on several ports of 127.0.0.1 that answers every request after a delay with a small
/// feed, and counts how many requests it held at once, in all and per port (its `/stats` tells).
private final class CountingServer {
    let ports: [Int]
    private let process = Process()

    static let script = """
        import asyncio, json, sys
        delay = float(sys.argv[1]); count = int(sys.argv[2])
        state = {"now": 0, "max": 0, "perPort": {}, "maxPerPort": {}, "requests": 0}
        def feed(path, items):
            body = "".join(f"<item><title>{path} {i}</title><guid>{path}#{i}</guid><link>http://example.org{path}/{i}</link>"
                           f"<description>{'x' * 200}</description></item>" for i in range(items))
            return f'<?xml version="1.0"?><rss version="2.0"><channel><title>{path}</title>{body}</channel></rss>'.encode()
        def handler(port):
            async def handle(reader, writer):
                try:
                    while True:
                        head = await reader.readuntil(b"\\r\\n\\r\\n")
                        path = head.split(b" ")[1].decode()
                        status, extra = "200 OK", ""
                        if path == "/stats":
                            body = json.dumps({"max": state["max"], "maxPerPort": max(state["maxPerPort"].values(), default=0),
                                               "requests": state["requests"]}).encode()
                        else:
                            state["requests"] += 1
                            state["now"] += 1; state["max"] = max(state["max"], state["now"])
                            state["perPort"][port] = state["perPort"].get(port, 0) + 1
                            state["maxPerPort"][port] = max(state["maxPerPort"].get(port, 0), state["perPort"][port])
                            if path.startswith("/slow/"):
                                await asyncio.sleep(delay)
                            state["now"] -= 1; state["perPort"][port] -= 1
                            if path.startswith("/redirect/"):
                                _, _, target, rest = path.split("/", 3)
                                status, extra, body = "302 Found", f"Location: http://127.0.0.1:{target}/{rest}\\r\\n", b""
                            else:
                                body = feed(path, 300 if path.startswith("/big/") else 1)
                        writer.write(f"HTTP/1.1 {status}\\r\\n{extra}Content-Type: application/rss+xml\\r\\nContent-Length: {len(body)}\\r\\n\\r\\n".encode() + body)
                        await writer.drain()
                except Exception:
                    writer.close()
            return handle
        async def main():
            servers = [await asyncio.start_server(handler(i), "127.0.0.1", 0, backlog=512) for i in range(count)]
            print("PORTS " + " ".join(str(s.sockets[0].getsockname()[1]) for s in servers), flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        asyncio.run(main())
        """

    init(ports count: Int, delay: Double) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", Self.script, String(delay), String(count)]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = Pipe()
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        ports = text.split(separator: "\n").first?.split(separator: " ").dropFirst().compactMap { Int($0) } ?? []
        if ports.count != count {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadUnknown)
        }
    }

    /// The most requests held at once in all, and on one port.
    func stats() throws -> (max: Int, maxPerPort: Int, requests: Int) {
        let body = Collector()
        _ = Fetcher().fetch(FetchRequest(url: URL(string: "http://127.0.0.1:\(ports[0])/stats")!), into: body)
        let object = try JSONSerialization.jsonObject(with: Data(body.bytes)) as? [String: Int] ?? [:]
        return (object["max"] ?? -1, object["maxPerPort"] ?? -1, object["requests"] ?? -1)
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)  // SIGTERM may be blocked in children of the test runner
        process.waitUntilExit()
    }
}

/// Keeps a response body.
private final class Collector: FetchConsumer {
    var bytes: [UInt8] = []
    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws { self.bytes += bytes }
}

@Suite("Ingest scheduling")
struct SchedulingTests {
    static func entries(_ paths: [(port: Int, path: String)]) -> [FeedEntry] {
        paths.map { port, path in
            let url = URL(string: "http://127.0.0.1:\(port)\(path)")!
            return FeedEntry(location: .remote(url), source: url.absoluteString)
        }
    }

    /// 96 slow feeds (1 s each) on 8 hosts (ports): with 2 workers, transfers started ahead keep many more in
    /// flight, yet no host ever gets more than its 6 connections, and every feed is ingested once.
    @Test func manyFeedsInFlightAcrossHostsWithinEachHostsLimit() throws {
        let server = try CountingServer(ports: 8, delay: 1.0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: directory.appendingPathComponent("store.sqlite").path)
        var configuration = IngestConfiguration()
        configuration.jobs = 2
        configuration.transfersAhead = 64
        var fetch = FetchConfiguration()
        fetch.maximumConcurrentTransfers = configuration.jobs + configuration.transfersAhead
        let entries = Self.entries((0..<96).map { (server.ports[$0 % 8], "/slow/feed-\($0).xml") })
        let summary = IngestPipeline(store: store, fetcher: Fetcher(configuration: fetch), configuration: configuration).run(entries)
        #expect(summary.ok == 96)
        #expect(summary.articles.new == 96)
        let stats = try server.stats()
        #expect(stats.requests == 96, "each feed fetched once")
        #expect(stats.maxPerPort <= 6, "a host never gets more than its connections: \(stats)")
        #expect(stats.max >= 40, "8 hosts × 6 connections allow 48 at once; 2 workers alone would hold 2: \(stats)")
    }

    /// Feeds larger than a transfer's buffer, started ahead of one worker, must not hold the connections the
    /// worker's own feed needs: here the first feed redirects to a host whose next feeds are all started ahead
    /// (once, such paused transfers took the host's six connections and every feed timed out). They are abandoned
    /// when their buffer fills and fetched again when claimed, so every feed completes, whatever `transfersAhead`.
    @Test(arguments: [0, 1, 64])
    func largeFeedsStartedAheadNeverStarveTheWorker(ahead: Int) throws {
        let server = try CountingServer(ports: 2, delay: 0)
        let (a, b) = (server.ports[0], server.ports[1])
        var configuration = IngestConfiguration()
        configuration.jobs = 1
        configuration.transfersAhead = ahead
        var fetch = FetchConfiguration()
        fetch.maximumBufferedBytes = 4 << 10  // the feeds are ~70 KB
        fetch.totalTimeout = .seconds(20)
        fetch.maximumConcurrentTransfers = configuration.jobs + configuration.transfersAhead
        let paths = [(a, "/redirect/\(b)/big/0.xml")] + (1...10).map { (b, "/big/\($0).xml") } + (11...14).map { (a, "/big/\($0).xml") }
        let summary = IngestPipeline(store: nil, fetcher: Fetcher(configuration: fetch), configuration: configuration)
            .run(Self.entries(paths))
        #expect(summary.ok == 15, "\(summary)")
        #expect(summary.failed == 0)
        #expect(summary.articles.seen == 15 * 300)
        let stats = try server.stats()
        #expect(stats.maxPerPort <= 6, "\(stats)")
        #expect(stats.requests >= 16, "15 feeds and one redirect, plus any abandoned and fetched again: \(stats)")
    }

    /// Feeds of one host queue behind its connection limit, in list order: 30 feeds on one host all complete.
    @Test func oneHostWithMoreFeedsThanConnectionsCompletes() throws {
        let server = try CountingServer(ports: 1, delay: 0.05)
        var configuration = IngestConfiguration()
        configuration.jobs = 8
        let entries = Self.entries((0..<30).map { (server.ports[0], "/slow/one-\($0).xml") })
        let summary = IngestPipeline(store: nil, configuration: configuration).run(entries)
        #expect(summary.ok == 30, "\(summary)")
        let stats = try server.stats()
        #expect(stats.maxPerPort <= 6, "\(stats)")
    }
}
