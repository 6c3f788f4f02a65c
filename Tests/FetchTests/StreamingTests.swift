import ExpatXML
import Fetch
import Foundation
import Support
import TestSupport
import Testing

/// Streaming, back-pressure, concurrency and cancellation, proven by ordering, never by timing.
@Suite("Streaming and concurrency")
struct StreamingTests {
    let server: FaultServer

    init() throws {
        server = try FaultServer.shared.get()
    }

    /// The server sends the first item and then waits until the test says the item was delivered; only then does the
    /// rest come. If the body were buffered before parsing, the item could never be seen and the server would give
    /// up (closing the connection), so the test would fail.
    @Test(arguments: ["0", "1"])
    func firstItemIsDeliveredBeforeTheRestIsSent(gzip: String) throws {
        let token = makeToken() + gzip
        let fetcher = Fetcher()
        let consumer = CountingConsumer()
        let released = Lock(false)
        consumer.counter.onItem = { count in
            if count == 1 {
                released.withLock { $0 = true }
                try? self.server.release(token)
            }
        }
        let result = fetcher.fetch(FetchRequest(url: server.url("/stream?items=30&gzip=\(gzip)&token=\(token)")), into: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(released.withLock { $0 })
        #expect(consumer.items == 30)
        #expect(result.contentEncoding == (gzip == "1" ? "gzip" : nil))
    }

    /// The same proof through Swift concurrency: the consumer runs on the delivery queue.
    @Test func firstItemStreamsThroughTheAsyncAPI() async throws {
        let token = makeToken()
        let consumer = CountingConsumer()
        let server = self.server
        consumer.counter.onItem = { count in
            // The consumer runs on the delivery queue, not the cooperative pool, so a blocking call is fine here.
            if count == 1 { try? server.release(token) }
        }
        let result = await Fetcher().fetch(FetchRequest(url: server.url("/stream?items=12&gzip=1&token=\(token)")), into: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
    }

    /// A consumer that stops to wait pauses its transfer (libcurl stops reading) instead of growing a buffer.
    @Test func slowConsumerPausesTheTransferAndMemoryStaysBounded() throws {
        let nginx = try NginxServer.shared.get()
        let configuration = testConfiguration {
            $0.maximumBufferedBytes = 32 << 10
            $0.receiveBufferSize = 16 << 10
        }
        let fetcher = Fetcher(configuration: configuration)
        let transfer = fetcher.start(FetchRequest(url: nginx.url("/feeds/medium.xml")))
        final class Stubborn: FetchConsumer {
            let transfer: FetchTransfer
            var sawPause = false
            var count = 0
            var bytes = 0
            init(transfer: FetchTransfer) { self.transfer = transfer }
            func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
                count += 1
                self.bytes += bytes.count
                // On the first bytes, wait until the transfer thread has had to pause this transfer.
                if count == 1 { sawPause = waitUntil { transfer.isPaused } }
            }
        }
        let consumer = Stubborn(transfer: transfer)
        let result = transfer.deliver(to: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(consumer.sawPause)
        #expect(result.pauses >= 1)
        #expect(result.peakBufferedBytes <= 32 << 10)
        #expect(Int64(consumer.bytes) == result.decodedBytes)
        #expect(result.decodedBytes == Int64(FeedFixture.rss(items: NginxServer.feeds["medium.xml"]!).count))
        #expect(result.bodySHA256 != nil)
    }

    /// On the rate-limited location, the first item is parsed when only a small part of the body has arrived.
    @Test func firstItemArrivesEarlyFromTheRateLimitedLocation() throws {
        let nginx = try NginxServer.shared.get()
        let configuration = testConfiguration {
            $0.maximumBufferedBytes = 16 << 10
            $0.receiveBufferSize = 16 << 10
        }
        let transfer = Fetcher(configuration: configuration).start(FetchRequest(url: nginx.url("/slow/feeds/medium.xml")))
        let consumer = CountingConsumer()
        var receivedAtFirstItem: Int64 = -1
        consumer.counter.onItem = { count in
            if count == 1 { receivedAtFirstItem = transfer.bytesReceived }
        }
        let result = transfer.deliver(to: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(consumer.items == NginxServer.feeds["medium.xml"])
        // Structural, not timed: the buffer bound keeps the transfer from running ahead of the parser.
        #expect(receivedAtFirstItem > 0)
        #expect(receivedAtFirstItem <= 4 * (16 << 10))
        #expect(result.bodyBytes > 4 * (16 << 10))
    }

    /// At least 32 transfers run at once by default, and never more than configured.
    @Test func thirtyTwoTransfersInFlight() async throws {
        let token = makeToken()
        let server = self.server
        let fetcher = Fetcher(configuration: testConfiguration { $0.maximumConnectionsPerHost = 64 })
        #expect(fetcher.configuration.maximumConcurrentTransfers == 32)
        let results = await withTaskGroup(of: FetchResult.self) { group in
            for _ in 0..<40 {
                group.addTask { await fetcher.fetch(FetchRequest(url: server.url("/hold?token=\(token)")), into: CountingConsumer()) }
            }
            group.addTask {
                // Release everyone once 32 requests wait at the server at the same time.
                let reached = await offPool {
                    let reached = (try? waitUntil { try server.stats(token).held >= 32 }) ?? false
                    try? server.release(token)
                    return reached
                }
                var result = FetchResult(request: FetchRequest(url: server.url("/")), outcome: .ok)
                if !reached { result.outcome = .failed(FetchError(kind: .timeout, message: "never 32 held", url: "")) }
                return result
            }
            var all: [FetchResult] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.allSatisfy { $0.isOK }, "\(results.compactMap(\.error))")
        let stats = try server.stats(token)
        #expect(stats.peak_held == 32)
        #expect(stats.requests == 40)
        #expect(fetcher.statistics.peakActiveTransfers == 32)
    }

    /// The per-host cap holds: with 4 connections allowed, the server never sees more than 4 requests at once.
    @Test func perHostConnectionCap() async throws {
        let token = makeToken()
        let server = self.server
        let fetcher = Fetcher(configuration: testConfiguration { $0.maximumConnectionsPerHost = 4 })
        let results = await withTaskGroup(of: FetchResult?.self) { group in
            for _ in 0..<10 {
                group.addTask { await fetcher.fetch(FetchRequest(url: server.url("/hold?token=\(token)")), into: DiscardingConsumer()) }
            }
            group.addTask {
                await offPool {
                    _ = try? waitUntil { try server.stats(token).held >= 4 }
                    // Give the other six every chance to (wrongly) connect, then let everyone go.
                    _ = try? waitUntil(timeout: 0.5) { try server.stats(token).held > 4 }
                    try? server.release(token)
                }
                return nil
            }
            var all: [FetchResult] = []
            for await result in group { if let result { all.append(result) } }
            return all
        }
        #expect(results.count == 10)
        #expect(results.allSatisfy { $0.isOK }, "\(results.compactMap(\.error))")
        let stats = try server.stats(token)
        #expect(stats.peak_held == 4)
        #expect(stats.connections <= 4)
    }

    @Test func cancelFromAnotherThread() throws {
        let fetcher = Fetcher()
        let transfer = fetcher.start(FetchRequest(url: server.url("/stall")))
        let consumer = CountingConsumer()
        consumer.counter.onItem = { _ in transfer.cancel() }
        let result = transfer.deliver(to: consumer)
        #expect(result.error?.kind == .cancelled)
        #expect(consumer.items == 1)
    }

    @Test func cancellingTheTaskCancelsTheTransfer() async throws {
        let fetcher = Fetcher()
        let url = server.url("/stall")
        let task = Task { await fetcher.fetch(FetchRequest(url: url), into: CountingConsumer()) }
        _ = await offPool { waitUntil { fetcher.statistics.activeTransfers == 1 } }
        task.cancel()
        let result = await task.value
        #expect(result.error?.kind == .cancelled)
    }

    @Test func consumerErrorStopsTheTransfer() throws {
        struct Enough: Error {}
        final class Picky: FetchConsumer {
            func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws { throw Enough() }
        }
        let result = Fetcher().fetch(FetchRequest(url: server.url("/big?bytes=20000000")), into: Picky())
        let error = try #require(result.error)
        #expect(error.kind == .consumerFailed)
        #expect(error.underlying is Enough)
        #expect(result.bodyBytes < 20_000_000)
    }

    @Test func aTransferKeepsItsFetcherAlive() throws {
        var fetcher: Fetcher? = Fetcher()
        let transfer = fetcher!.start(FetchRequest(url: server.url("/feed?items=3")))
        fetcher = nil
        let consumer = CountingConsumer()
        let result = transfer.deliver(to: consumer)
        #expect(result.isOK)
        #expect(consumer.items == 3)
    }
}
