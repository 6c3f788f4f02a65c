import ExpatXML
import Fetch
import Foundation
import XMLFetching
import Synchronization
import TestSupport

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

/// Refuses the body once it has been given `bytes` bytes, and counts its calls: a consumer with an error of its own.
final class FailingAfterConsumer: FetchConsumer {
    struct Refused: Error {}
    let bytes: Int
    private(set) var received = 0
    private(set) var calls = 0
    private(set) var finished = false

    init(bytes: Int) { self.bytes = bytes }

    func fetchDidReceive(_ chunk: UnsafeRawBufferPointer) throws {
        calls += 1
        received += chunk.count
        if received >= bytes { throw Refused() }
    }

    func fetchDidFinish() throws { finished = true }
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
