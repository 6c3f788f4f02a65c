@testable import Fetch
import Foundation
import Testing

/// libcurl's multi interface, as Fetch's wrappers check it: a failing call becomes a ``CurlMultiError`` naming the
/// call and libcurl's code, never a silently ignored result. (The transfer loop turns it into a
/// ``FetchError/Kind/libraryFailure`` for the transfers it concerns; libcurl gives no way to make `curl_multi_perform`
/// or `curl_multi_poll` fail on demand, so that last step is shown by the errors' shape here.)
@Suite("Checked libcurl multi calls")
struct LibraryFailureTests {
    @Test func aFailedMultiCallThrowsItsCodeAndCall() throws {
        #expect(CurlGlobal.initialization == .ok)
        let multi = try CurlMulti()
        let easy = try CurlEasy()
        try multi.add(easy)
        let again = try #require(throws: CurlMultiError.self) { try multi.add(easy) }
        #expect(again.code == .addedAlready && again.function == "curl_multi_add_handle")
        #expect(again.description.contains("curl_multi_add_handle failed") && again.description.contains("CURLMcode 7"))
        #expect(again.code.description.lowercased().contains("already"))
        try multi.remove(easy)
        #expect(try multi.perform() == 0)
        try multi.close()
        try multi.close()  // once only: a second close does not free the handle again

        let error = FetchError.libraryFailure(again, url: "http://127.0.0.1/feed.xml")
        #expect(error.kind == .libraryFailure && error.curlMultiCode == .addedAlready)
        #expect(error.description.hasSuffix("[CURLMcode 7]"))
        #expect((error.underlying as? CurlMultiError) == again)
    }

    @Test func aWakeupAfterCloseIsANoOpAndBeforeItWorks() throws {
        let multi = try CurlMulti()
        let wake = CurlWakeup()
        try wake.wakeup()  // not open yet: nothing to wake
        wake.open(multi)
        try wake.wakeup()
        try multi.poll(timeoutMilliseconds: 10_000)  // returns at once: the wakeup is pending
        wake.close()
        try wake.wakeup()
        try multi.close()
    }

    @Test func aFetcherStartsWithNoLibcurlFailures() async throws {
        let fetcher = Fetcher()
        defer { fetcher.shutdown() }
        let result = await offPool { fetcher.fetch(FetchRequest(url: URL(string: "http://127.0.0.1:1/feed.xml")!), into: DiscardingConsumer()) }
        #expect(result.error?.kind == .connectionRefused)
        let statistics = fetcher.statistics
        #expect(statistics.libcurlFailures == 0 && statistics.lastLibcurlFailure == nil)
        #expect(statistics.finishedTransfers == 1)
    }
}

/// A consumer that drops what it receives.
private final class DiscardingConsumer: FetchConsumer {
    func fetchDidReceiveResponse(_ response: FetchResponse) throws {}
    func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {}
    func fetchDidFinish() throws {}
}
