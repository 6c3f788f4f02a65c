import Fetch
import Foundation
import TestSupport
import Testing

/// Fetch's ranged requests and file consumer against the fault server's Range-capable route on 127.0.0.1.
@Suite("Ranged requests and FileConsumer")
struct RangedFetchTests {
    static func prepare(_ label: String, size: Int) throws -> (FaultServer, String, Data, URL) {
        let faults = try FaultServer.shared.get()
        let directory = try Paths.temporaryDirectory("ranged-\(label)")
        var random = SplitMix64(seed: UInt64.random(in: 1...UInt64.max))
        let bytes = Data((0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let source = directory.appendingPathComponent("source.bin")
        try bytes.write(to: source)
        let token = "\(label)-\(UUID().uuidString.prefix(8))"
        #expect(try Loopback.get(port: faults.port, "/media-control?token=\(token)&file=\(source.path)").status == 200)
        return (faults, token, bytes, directory)
    }

    static func log(_ faults: FaultServer, _ token: String) throws -> [[String: Any]] {
        try JSONSerialization.jsonObject(with: Loopback.get(port: faults.port, "/media-log?token=\(token)").body) as? [[String: Any]] ?? []
    }

    @Test func aRangedRequestSendsRangeIfRangeAndIdentity() throws {
        let (faults, token, bytes, _) = try Self.prepare("range", size: 300_000)
        var request = FetchRequest(url: URL(string: faults.url("/media/a.mp3").absoluteString + "?token=\(token)")!)
        request.byteRange = ByteRangeRequest(offset: 123_456, validator: "\"v1\"")
        let consumer = CollectingConsumer()
        let result = Fetcher().fetch(request, into: consumer)
        #expect(result.isOK)
        #expect(result.response?.status == 206)
        #expect(result.response?.contentRange == ContentRange(first: 123_456, last: 299_999, completeLength: 300_000))
        #expect(result.response?.strongValidator == "\"v1\"")
        #expect(consumer.data == bytes[123_456...])
        let sent = try #require(try Self.log(faults, token).last)
        #expect(sent["range"] as? String == "bytes=123456-" && sent["if_range"] as? String == "\"v1\"")
        #expect(sent["accept_encoding"] as? String == "identity")
    }

    @Test func anUnsatisfiableRangeIsA416WithItsContentRange() throws {
        let (faults, token, _, _) = try Self.prepare("416", size: 1000)
        var request = FetchRequest(url: URL(string: faults.url("/media/a.mp3").absoluteString + "?token=\(token)")!)
        request.byteRange = ByteRangeRequest(offset: 1000, validator: "\"v1\"")
        let result = Fetcher().fetch(request, into: DiscardingConsumer())
        #expect(result.error?.kind == .httpStatus(416))
        let range = try #require(result.response?.contentRange)
        #expect(range.isUnsatisfied && range.completeLength == 1000)
    }

    @Test func fileConsumerWritesAsBytesArriveAndCheckpoints() throws {
        let (faults, token, bytes, directory) = try Self.prepare("file", size: 1_000_000)
        let path = directory.appendingPathComponent("out.bin").path
        // A stale tail beyond where the response says to start is cut off.
        try Data(bytes[0..<400_000] + Data(repeating: 0xFF, count: 5000)).write(to: URL(fileURLWithPath: path))
        let file = try FileConsumer(path: path)
        #expect(file.offset == 405_000)
        file.checkpointInterval = 100_000
        var checkpoints: [Int64] = []
        file.checkpointHandler = { checkpoints.append($0) }
        file.responseHandler = { response in response.contentRange?.first ?? 0 }
        var request = FetchRequest(url: URL(string: faults.url("/media/a.mp3").absoluteString + "?token=\(token)")!)
        request.byteRange = ByteRangeRequest(offset: 400_000, validator: "\"v1\"")
        let result = Fetcher().fetch(request, into: file)
        #expect(result.isOK)
        file.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(checkpoints.count >= 6 && checkpoints == checkpoints.sorted() && checkpoints.last == 1_000_000)
        #expect(checkpoints.allSatisfy { $0 > 400_000 })
    }

    @Test func fileConsumerNamesThePathOfAFailedOpen() throws {
        do {
            _ = try FileConsumer(path: "/proc/feedingest-no-such-dir/x.download")
            Issue.record("opened a file in a missing directory")
        } catch {
            #expect(error.path == "/proc/feedingest-no-such-dir/x.download" && error.operation == "open" && error.code == .noSuchFile)
            #expect(!error.isDiskFull && error.description.contains("/proc/feedingest-no-such-dir/x.download"))
        }
    }
}
