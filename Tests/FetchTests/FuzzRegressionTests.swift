import Fetch
import Foundation
import TestSupport
import Testing

/// Inputs the `headers` fuzz harness found (Fuzz/FeedingestFuzz), each kept as a test.
@Suite struct HeaderFuzzRegressionTests {
    static func response(_ fields: [(String, String)]) -> FetchResponse {
        FetchResponse(status: 200, headers: HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }), url: URL(string: "http://127.0.0.1/feed")!)
    }

    /// The minimised input: `Content-Type:` with an empty value trapped (index out of range) in ``FetchResponse/mediaType``.
    @Test func emptyOrParameterOnlyContentTypeHasNoMediaType() {
        #expect(Self.response([("Content-Type", "")]).mediaType == nil)
        #expect(Self.response([("Content-Type", ";charset=utf-8")]).mediaType == nil)
        #expect(Self.response([("Content-Type", " ; ")]).mediaType == nil)
        #expect(Self.response([("Content-Type", ";charset=utf-8")]).charset == "utf-8")
        #expect(Self.response([("Content-Type", "Application/RSS+XML ; charset=x")]).mediaType == "application/rss+xml")
    }

    /// Every header reader over empty and separator-only values: nothing traps, nothing is invented.
    @Test func emptyValuesEverywhere() {
        let response = Self.response([("Cache-Control", ","), ("Cache-Control", "max-age="), ("Retry-After", ""), ("Link", ";"),
                                      ("Link", "<"), ("Link", ", ,"), ("Expires", ""), ("Content-Encoding", ","), ("Last-Modified", "")])
        #expect(response.maxAge == nil)
        #expect(response.retryAfter == nil)
        #expect(response.hubLinks.isEmpty)
        #expect(response.selfLink == nil)
        #expect(response.expires == nil)
        #expect(response.contentEncodings.isEmpty)
        #expect(response.lastModifiedDate == nil)
    }

    /// The same over a real transfer: the fault server sends those headers empty, and the feed still arrives whole.
    @Test func aServerSendingEmptyHeadersIsFetchedWhole() throws {
        let server = try FaultServer.shared.get()
        let fetcher = Fetcher(configuration: testConfiguration())
        let consumer = CountingConsumer()
        let result = fetcher.fetch(FetchRequest(url: server.url("/empty-headers?items=4")), into: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
        #expect(consumer.items == 4)
        let response = try #require(result.response)
        #expect(response.mediaType == nil)
        #expect(response.maxAge == nil)
        #expect(response.retryAfter == nil)
        #expect(response.hubLinks.isEmpty)
    }
}
