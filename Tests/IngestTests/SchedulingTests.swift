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
        def feed(path):
            item = f"<item><title>{path}</title><guid>{path}</guid><link>http://example.org{path}</link></item>"
            return f'<?xml version="1.0"?><rss version="2.0"><channel><title>{path}</title>{item}</channel></rss>'.encode()
        def handler(port):
            async def handle(reader, writer):
                try:
                    while True:
                        head = await reader.readuntil(b"\\r\\n\\r\\n")
                        path = head.split(b" ")[1].decode()
                        if path == "/stats":
                            body = json.dumps({"max": state["max"], "maxPerPort": max(state["maxPerPort"].values(), default=0),
                                               "requests": state["requests"]}).encode()
                        else:
                            state["requests"] += 1
                            state["now"] += 1; state["max"] = max(state["max"], state["now"])
                            state["perPort"][port] = state["perPort"].get(port, 0) + 1
                            state["maxPerPort"][port] = max(state["maxPerPort"].get(port, 0), state["perPort"][port])
                            await asyncio.sleep(delay)
                            state["now"] -= 1; state["perPort"][port] -= 1
                            body = feed(path)
                        writer.write(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/rss+xml\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body) + body)
                        await writer.drain()
                except Exception:
                    writer.close()
            return handle
        async def main():
            servers = []
            for _ in range(count):
                server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
                port = server.sockets[0].getsockname()[1]
                server.close()
                servers.append(await asyncio.start_server(handler(port), "127.0.0.1", port, backlog=512))
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
    /// 96 slow feeds on 8 hosts (ports): with 2 workers, transfers started ahead keep many more in flight, yet no
    /// host ever gets more than its 6 connections, and every feed is ingested once.
    @Test func manyFeedsInFlightAcrossHostsWithinEachHostsLimit() throws {
        let server = try CountingServer(ports: 8, delay: 0.4)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: directory.appendingPathComponent("store.sqlite").path)
        var configuration = IngestConfiguration()
        configuration.jobs = 2
        configuration.transfersAhead = 64
        var fetch = FetchConfiguration()
        fetch.maximumConcurrentTransfers = configuration.jobs + configuration.transfersAhead
        let entries = (0..<96).map { index in
            let url = URL(string: "http://127.0.0.1:\(server.ports[index % 8])/feed-\(index).xml")!
            return FeedEntry(location: .remote(url), source: url.absoluteString)
        }
        let summary = IngestPipeline(store: store, fetcher: Fetcher(configuration: fetch), configuration: configuration).run(entries)
        #expect(summary.ok == 96)
        #expect(summary.articles.new == 96)
        let stats = try server.stats()
        #expect(stats.requests == 96, "each feed fetched once")
        #expect(stats.maxPerPort <= 6, "a host never gets more than its connections: \(stats)")
        #expect(stats.max >= 40, "8 hosts × 6 connections allow 48 at once; 2 workers alone would hold 2: \(stats)")
    }

    /// Feeds of one host queue behind its connection limit, in list order, without starving the workers (a transfer
    /// started ahead keeps its connection while it waits): 30 feeds on one host all complete.
    @Test func oneHostWithMoreFeedsThanConnectionsCompletes() throws {
        let server = try CountingServer(ports: 1, delay: 0.05)
        var configuration = IngestConfiguration()
        configuration.jobs = 8
        let entries = (0..<30).map { index in
            let url = URL(string: "http://127.0.0.1:\(server.ports[0])/one-\(index).xml")!
            return FeedEntry(location: .remote(url), source: url.absoluteString)
        }
        let summary = IngestPipeline(store: nil, configuration: configuration).run(entries)
        #expect(summary.ok == 30, "\(summary)")
        let stats = try server.stats()
        #expect(stats.maxPerPort <= 6, "\(stats)")
    }
}
