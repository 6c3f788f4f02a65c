import ExpatXML
import Fetch
import Foundation
import TestSupport
import Testing

/// Every misbehaviour of scripts/fault_server.py, against the real server over loopback.
@Suite("Fault-injecting server")
struct FaultServerTests {
    let server: FaultServer
    let fetcher: Fetcher

    init() throws {
        server = try FaultServer.shared.get()
        fetcher = Fetcher(configuration: testConfiguration())
    }

    func fetch(_ path: String, _ configuration: FetchConfiguration? = nil, validators: FetchValidators = .none) -> (FetchResult, CountingConsumer) {
        let consumer = CountingConsumer()
        let fetcher = configuration.map { Fetcher(configuration: $0) } ?? self.fetcher
        let result = fetcher.fetch(FetchRequest(url: server.url(path), validators: validators), into: consumer)
        return (result, consumer)
    }

    // MARK: Bodies

    @Test func plainFeedIsOKWithHeadersAndHash() throws {
        let (result, consumer) = fetch("/feed?items=25")
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(consumer.items == 25)
        #expect(consumer.finished)
        let response = try #require(result.response)
        #expect(response.status == 200)
        #expect(response.httpVersion == "1.1")
        #expect(response.mediaType == "application/rss+xml")
        #expect(result.bodyBytes == result.decodedBytes)
        #expect(result.contentEncoding == nil)
        // The hash is of the body as received: the same body hashes the same, a gzip variant differently.
        let (again, _) = fetch("/feed?items=25")
        #expect(result.bodySHA256 != nil)
        #expect(again.bodySHA256 == result.bodySHA256)
        #expect(result.bodySHA256 == consumer.decoded.finalize())
        let (gzipped, gzippedConsumer) = fetch("/feed?items=25&gzip=1")
        #expect(gzipped.contentEncoding == "gzip")
        #expect(gzipped.bodyBytes < gzipped.decodedBytes)
        #expect(gzipped.bodySHA256 != nil && gzipped.bodySHA256 != result.bodySHA256)
        #expect(gzippedConsumer.decoded.finalize() == consumer.decoded.finalize())
    }

    @Test func chunkedEncodingWithOddChunkSizes() {
        let (result, consumer) = fetch("/chunked?items=40")
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(consumer.items == 40)
    }

    @Test func slowDripArrivesWhole() {
        let (result, consumer) = fetch("/drip?items=3&size=16&tick_ms=2")
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(consumer.items == 3)
    }

    @Test(arguments: ["0", "1"])
    func deflateZlibWrappedOrRaw(raw: String) {
        let (result, consumer) = fetch("/deflate?items=30&raw=\(raw)")
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(result.contentEncoding == "deflate")
        #expect(consumer.items == 30)
    }

    @Test func concatenatedGzipMembers() {
        let (result, consumer) = fetch("/gzip-members?items=30")
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(consumer.items == 30)
    }

    @Test func requestHeadersAreOurs() throws {
        let (result, _) = fetch("/headers", validators: FetchValidators(lastModified: "Sat, 01 Jan 2000 00:00:00 GMT"))
        let response = try #require(result.response)
        #expect(response.headers["X-Request-Accept-Encoding"] == "gzip, deflate")
        #expect(response.headers["X-Request-User-Agent"] == FetchConfiguration.defaultUserAgent)
        #expect(response.headers["X-Request-If-Modified-Since"] == "Sat, 01 Jan 2000 00:00:00 GMT")
        let custom = Fetcher(configuration: testConfiguration { $0.userAgent = "tests/1.0" })
        let again = custom.fetch(FetchRequest(url: server.url("/headers")), into: DiscardingConsumer())
        #expect(again.response?.headers["X-Request-User-Agent"] == "tests/1.0")
    }

    @Test func cacheValidatorsAndLinks() throws {
        let (result, consumer) = fetch("/headers")
        #expect(result.isOK)
        #expect(consumer.items == 3)
        let response = try #require(result.response)
        #expect(response.entityTag == "\"v1-abc\"")
        #expect(response.lastModified == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(response.maxAge == 300)
        #expect(try #require(response.expires) > Date())
        #expect(response.hubLinks == [URL(string: "https://hub.example.com/")!])
        #expect(response.selfLink == server.url("/feeds/self.xml"))
        // The validators come back as a 304, a distinct outcome, and nothing reaches the consumer.
        let (second, secondConsumer) = fetch("/headers", validators: response.validators)
        #expect(second.isNotModified)
        #expect(second.response?.status == 304)
        #expect(secondConsumer.response == nil)
        #expect(secondConsumer.items == 0)
        #expect(second.bodySHA256 == nil)
    }

    // MARK: Truncation and lying lengths

    @Test func resetAfterTheFirstItemsKeepsThem() throws {
        let token = makeToken()
        let consumer = CountingConsumer()
        // The server waits after two items until the test has seen them parsed, then resets the connection.
        consumer.counter.onItem = { count in
            if count == 2 { try? self.server.release(token) }
        }
        let result = fetcher.fetch(FetchRequest(url: server.url("/reset?items=10&token=\(token)")), into: consumer)
        let error = try #require(result.error)
        #expect(error.kind == .truncated, "\(error)")
        #expect(error.curlCode == .recvError || error.curlCode == .partialFile)
        #expect(consumer.items == 2)
        #expect(!consumer.finished)
        #expect(result.bodySHA256 == nil)
    }

    @Test func contentLengthTooLongIsTruncated() throws {
        let (result, consumer) = fetch("/long-length?items=10")
        let error = try #require(result.error)
        #expect(error.kind == .truncated)
        #expect(error.curlCode == .partialFile)
        #expect(consumer.items == 10)  // every item arrived; the document's end never came
        #expect(!consumer.finished)
    }

    @Test func contentLengthTooShortCutsTheDocument() throws {
        let (result, consumer) = fetch("/short-length?items=10")
        // HTTP-wise the body is complete (libcurl reads exactly Content-Length bytes); the XML is not.
        let error = try #require(result.error)
        #expect(error.kind == .consumerFailed)
        #expect(error.underlying is ExpatXMLError)
        #expect(consumer.items > 0 && consumer.items < 10)
    }

    // MARK: Timeouts

    @Test func stallTripsTheLowSpeedTimeout() throws {
        let configuration = testConfiguration {
            $0.lowSpeedLimit = 10
            $0.lowSpeedTime = .seconds(1)
        }
        let (result, consumer) = fetch("/stall", configuration)
        let error = try #require(result.error)
        #expect(error.kind == .timeout)
        #expect(error.curlCode == .operationTimedOut)
        #expect(consumer.items == 1)
    }

    @Test func slowDripTripsTheTotalTimeout() throws {
        let configuration = testConfiguration { $0.totalTimeout = .milliseconds(1500) }
        let (result, consumer) = fetch("/drip?items=200&size=8&tick_ms=20", configuration)
        let error = try #require(result.error)
        #expect(error.kind == .timeout)
        #expect(error.message.contains("timed out"))
        #expect(consumer.items < 200)
    }

    // MARK: HTTP errors

    @Test func goneIsDistinct() throws {
        let (result, consumer) = fetch("/status?code=410")
        let error = try #require(result.error)
        #expect(error.kind == .gone)
        #expect(error.status == 410)
        #expect(consumer.response == nil)
    }

    @Test func tooManyRequestsWithRetryAfterSeconds() throws {
        let (result, _) = fetch("/status?code=429&retry=120")
        let error = try #require(result.error)
        #expect(error.kind == .rateLimited(retryAfter: .seconds(120)))
        #expect(result.response?.retryAfter == .seconds(120))
    }

    @Test func unavailableWithRetryAfterDate() throws {
        let (result, _) = fetch("/status?code=503&retry_date=1")
        let error = try #require(result.error)
        guard case .serviceUnavailable(let retry?) = error.kind, case .date(let date) = retry else {
            Issue.record("expected 503 with a Retry-After date, got \(error.kind)")
            return
        }
        #expect(date > Date().addingTimeInterval(3000))
        #expect(retry.delay() > 3000)
    }

    @Test func otherStatusesKeepTheirNumber() throws {
        let (notFound, _) = fetch("/status?code=404")
        #expect(notFound.error?.kind == .httpStatus(404))
        let (unavailable, _) = fetch("/status?code=503")
        #expect(unavailable.error?.kind == .serviceUnavailable(retryAfter: nil))
    }

    // MARK: Redirects

    @Test func mixedRedirectChainIsReported() throws {
        let (result, consumer) = fetch("/hop?chain=301,302,308")
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(consumer.items == 3)
        #expect(result.redirects.map(\.status) == [301, 302, 308])
        #expect(result.redirects.first?.from == server.url("/hop?chain=301,302,308"))
        #expect(result.redirects.last?.location == server.url("/hop?chain=301,302,308&i=3&token=").absoluteString)
        #expect(!result.isPermanentlyRedirected)
        #expect(result.finalURL == server.url("/hop?chain=301,302,308&i=3&token="))
    }

    @Test func permanentChainSuggestsTheNewAddress() throws {
        let (result, _) = fetch("/hop?chain=301,308")
        #expect(result.isOK)
        #expect(result.isPermanentlyRedirected)
        #expect(result.finalURL == server.url("/hop?chain=301,308&i=2&token="))
    }

    @Test func tooManyRedirects() throws {
        let (result, _) = fetch("/hop?chain=301,301,301,301,301,301")
        let error = try #require(result.error)
        #expect(error.kind == .tooManyRedirects)
        #expect(error.curlCode == .tooManyRedirects)
        #expect(result.redirects.count == 6)
        // One fewer is fine with the default of five.
        let (five, _) = fetch("/hop?chain=301,301,301,301,301")
        #expect(five.isOK)
    }

    @Test func redirectLoop() throws {
        let (result, _) = fetch("/loop/a")
        #expect(result.error?.kind == .tooManyRedirects)
        #expect(result.redirects.count > 2)
    }

    @Test func redirectToFileIsRefused() throws {
        let (result, consumer) = fetch("/to-file")
        let error = try #require(result.error)
        #expect(error.kind == .unsupportedScheme)
        #expect(error.curlCode == .unsupportedProtocol)
        #expect(result.redirects.last?.location == "file:///etc/passwd")
        #expect(consumer.response == nil)
        #expect(result.decodedBytes == 0)
    }

    // MARK: Compression attacks and mistakes

    @Test func gzipBombHitsTheRatioLimit() throws {
        let (result, _) = fetch("/bomb")
        let error = try #require(result.error)
        #expect(error.kind == .tooLarge(.inflationRatio), "\(error)")
        #expect(error.underlying is InflateError)
        #expect(result.decodedBytes < 8 << 20)
    }

    @Test func gzipBombHitsTheDecodedLimit() throws {
        let configuration = testConfiguration {
            $0.maximumInflationRatio = .infinity
            $0.maximumDecodedBytes = 3 << 20
        }
        let (result, _) = fetch("/bomb", configuration)
        let error = try #require(result.error)
        #expect(error.kind == .tooLarge(.decodedBytes), "\(error)")
        #expect(result.decodedBytes <= 3 << 20)
    }

    @Test func wireLimitWithContentLengthIsRefusedUpFront() throws {
        let configuration = testConfiguration { $0.maximumBodyBytes = 10_000 }
        let (result, consumer) = fetch("/feed?items=100", configuration)
        let error = try #require(result.error)
        #expect(error.kind == .tooLarge(.bodyBytes))
        #expect(error.curlCode == .filesizeExceeded)
        #expect(consumer.items == 0)
    }

    @Test func wireLimitWithoutContentLengthStopsMidBody() throws {
        let configuration = testConfiguration { $0.maximumBodyBytes = 200_000 }
        let (result, _) = fetch("/big?bytes=5000000", configuration)
        let error = try #require(result.error)
        #expect(error.kind == .tooLarge(.bodyBytes), "\(error)")
        #expect(result.bodyBytes < 400_000)
    }

    @Test func corruptGzipChecksumIsADecompressionError() throws {
        let (result, consumer) = fetch("/corrupt-gzip?where=crc")
        let error = try #require(result.error)
        #expect(error.kind == .decompression, "\(error)")
        #expect(error.kind.name == "decompression")
        #expect((error.underlying as? InflateError)?.zlibCode == .dataError)
        #expect(consumer.items == 200)  // every byte decoded before the check failed; the parse is kept
        #expect(!consumer.finished)
        #expect(result.bodySHA256 == nil)
    }

    @Test func corruptGzipMidStreamIsADecompressionErrorNotTheParsersComplaint() throws {
        let (result, consumer) = fetch("/corrupt-gzip")
        let error = try #require(result.error)
        // The damage decodes to garbage the XML parser refuses before zlib can tell; the compressed stream is still read
        // to its end, and its damage is the failure, not the parser's complaint about the garbage.
        #expect(error.kind == .decompression, "\(error)")
        #expect(error.underlying is InflateError)
        #expect(consumer.items > 0 && consumer.items < 200)
        #expect(!consumer.finished)
    }

    @Test func gzipHeaderOnPlainBytes() throws {
        let (result, consumer) = fetch("/gzip-plain")
        let error = try #require(result.error)
        #expect(error.kind == .decompression)
        #expect(error.message.contains("header"))
        #expect(consumer.items == 0)
    }

    @Test func gzipWithoutContentEncodingIsInflated() throws {
        let (result, consumer) = fetch("/gzip-unlabelled?items=40")
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(result.response?.contentEncodings == [])
        #expect(result.contentEncoding == "gzip")
        #expect(result.bodyBytes < result.decodedBytes)
        #expect(consumer.items == 40)
        #expect(consumer.finished)
    }

    @Test func corruptGzipWithoutContentEncodingIsADecompressionError() throws {
        let (result, consumer) = fetch("/gzip-unlabelled?items=200&corrupt=1")
        let error = try #require(result.error)
        #expect(error.kind == .decompression, "\(error)")
        #expect(consumer.items < 200)
        #expect(!consumer.finished)
    }

    @Test func aParseErrorInSoundGzipStaysTheConsumers() throws {
        // A consumer that fails on well-compressed bytes: the stream is read to its end, found sound, and the
        // consumer's failure stands.
        let consumer = FailingAfterConsumer(bytes: 100)
        let result = fetcher.fetch(FetchRequest(url: server.url("/feed?items=50&gzip=1")), into: consumer)
        let error = try #require(result.error)
        #expect(error.kind == .consumerFailed, "\(error)")
        #expect(consumer.calls == 1)
        #expect(!consumer.finished)
    }

    // MARK: Charset

    @Test func charsetHeaderOutranksTheDeclaration() throws {
        let (result, consumer) = fetch("/charset")
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(result.response?.charset == "windows-1251")
        #expect(consumer.counter.titles == ["Новости", "Привет, мир"])
        let parser = try #require(consumer.inner.parser)
        #expect(parser.encoding?.source == .charsetHint)
        #expect(parser.encoding?.name == "windows-1251")
        // An explicit hint from the caller is an override and wins over the header.
        var configuration = ExpatXMLConfiguration()
        configuration.charsetHint = "utf-8"
        let forced = CountingConsumer(configuration: configuration)
        let forcedResult = fetcher.fetch(FetchRequest(url: server.url("/charset")), into: forced)
        #expect(forcedResult.error?.kind == .consumerFailed)  // the cp1251 bytes are not UTF-8
    }

    // MARK: Connections

    @Test func keepAliveReusesOneConnection() throws {
        let token = makeToken()
        let fetcher = Fetcher(configuration: testConfiguration())
        var connects: [Int] = []
        for _ in 0..<5 {
            let consumer = CountingConsumer()
            let result = fetcher.fetch(FetchRequest(url: server.url("/feed?items=5&token=\(token)")), into: consumer)
            #expect(result.isOK)
            #expect(consumer.items == 5)
            connects.append(result.newConnections)
        }
        #expect(connects == [1, 0, 0, 0, 0])
        let stats = try server.stats(token)
        #expect(stats.requests == 5)
        #expect(stats.connections == 1)
        #expect(fetcher.statistics.connectionsOpened == 1)
    }
}
