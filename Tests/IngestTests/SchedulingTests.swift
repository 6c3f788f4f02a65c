import ArticleStore
import Fetch
import Foundation
import Ingest
import TestSupport
import Testing

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
        let server = try FeedServer(ports: 8, delay: 1.0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: directory.appendingPathComponent("store.sqlite").path)
        var configuration = IngestConfiguration()
        configuration.jobs = 2
        configuration.transfersAhead = 64
        var fetch = FetchConfiguration()
        fetch.maximumConcurrentTransfers = configuration.jobs + configuration.transfersAhead
        let entries = Self.entries((0..<96).map { (server.ports[$0 % 8], "/items/1/feed-\($0).xml") })
        let summary = IngestPipeline(store: store, fetcher: Fetcher(configuration: fetch), configuration: configuration).run(entries)
        #expect(summary.ok == 96)
        #expect(summary.articles.new == 96)
        let stats = try server.stats()
        #expect(stats.requests == 96, "each feed fetched once")
        #expect(stats.max_in_flight_per_port <= 6, "a host never gets more than its connections: \(stats)")
        #expect(stats.max_in_flight >= 40, "8 hosts × 6 connections allow 48 at once; 2 workers alone would hold 2: \(stats)")
    }

    /// Feeds larger than a transfer's buffer, started ahead of one worker, must not hold the connections the
    /// worker's own feed needs: here the first feed redirects to a host whose next feeds are all started ahead
    /// (once, such paused transfers took the host's six connections and every feed timed out). They are abandoned
    /// when their buffer fills and fetched again when claimed, so every feed completes, whatever `transfersAhead`.
    @Test(arguments: [0, 1, 64])
    func largeFeedsStartedAheadNeverStarveTheWorker(ahead: Int) throws {
        let server = try FeedServer(ports: 2)
        let (a, b) = (server.ports[0], server.ports[1])
        var configuration = IngestConfiguration()
        configuration.jobs = 1
        configuration.transfersAhead = ahead
        var fetch = FetchConfiguration()
        fetch.maximumBufferedBytes = 4 << 10  // the feeds are ~70 KB
        fetch.totalTimeout = .seconds(20)
        fetch.maximumConcurrentTransfers = configuration.jobs + configuration.transfersAhead
        let paths = [(a, "/redirect/\(b)/items/300/0.xml")] + (1...10).map { (b, "/items/300/\($0).xml") } + (11...14).map { (a, "/items/300/\($0).xml") }
        let summary = IngestPipeline(store: nil, fetcher: Fetcher(configuration: fetch), configuration: configuration)
            .run(Self.entries(paths))
        #expect(summary.ok == 15, "\(summary)")
        #expect(summary.failed == 0)
        #expect(summary.articles.seen == 15 * 300)
        let stats = try server.stats()
        #expect(stats.max_in_flight_per_port <= 6, "\(stats)")
        #expect(stats.requests >= 16, "15 feeds and one redirect, plus any abandoned and fetched again: \(stats)")
    }

    /// Feeds of one host queue behind its connection limit, in list order: 30 feeds on one host all complete.
    @Test func oneHostWithMoreFeedsThanConnectionsCompletes() throws {
        let server = try FeedServer(ports: 1, delay: 0.05)
        var configuration = IngestConfiguration()
        configuration.jobs = 8
        let entries = Self.entries((0..<30).map { (server.ports[0], "/items/1/one-\($0).xml") })
        let summary = IngestPipeline(store: nil, configuration: configuration).run(entries)
        #expect(summary.ok == 30, "\(summary)")
        let stats = try server.stats()
        #expect(stats.max_in_flight_per_port <= 6, "\(stats)")
    }
}
