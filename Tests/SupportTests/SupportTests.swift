import Foundation
import Support
import Testing

/// The foundation every module shares: each piece against an independent reference.
@Suite("Support: Errno, Duration, FeedHost, UTF-8, file chunks, redaction, Lock")
struct SupportTests {
    @Test func aCallInterruptedBySignalsIsRetriedAndOtherFailuresAreNot() {
        var calls = 0
        let result = Errno.retryingInterrupts { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7 && calls == 3)
        calls = 0
        let failed = Errno.retryingInterrupts { () -> Int in
            calls += 1
            errno = ENOSPC
            return -1
        }
        #expect(failed == -1 && calls == 1 && Errno.current == .noSpace)
        #expect(Errno.noSpace.description == "No space left on device (errno \(ENOSPC))")
    }

    @Test func durationsConvertOnceForEveryCaller() {
        #expect(Duration.milliseconds(1500).seconds == 1.5)
        #expect(Duration.nanoseconds(1).millisecondsRoundedUp == 1, "a tiny timeout never becomes 0, which means none")
        #expect(Duration.seconds(2).millisecondsRoundedUp == 2000)
        #expect(Duration.seconds(0.2504, rounding: .toNearestOrAwayFromZero) == .milliseconds(250))
        #expect(Duration.seconds(0.2501, rounding: .up) == .milliseconds(251))
        #expect(Duration.seconds(Int64.max).millisecondsRoundedUp == Int.max, "clamped")
    }

    @Test func aFeedsHostIsItsLowerCaseNameAndPort() {
        #expect(FeedHost.key(of: "https://Example.ORG/feed") == "example.org:443")
        #expect(FeedHost.key(of: "http://example.org:8080/feed") == "example.org:8080")
        #expect(FeedHost.key(of: "file:///tmp/feed.xml") == nil)
        #expect(FeedHost.key(of: "/tmp/feed.xml") == nil)
    }

    /// Every lead byte with every second byte (and a fixed valid tail) against Swift's own UTF-8 decoder.
    @Test func theUTF8CheckAgreesWithSwiftsDecoder() {
        for lead in UInt8(0x80)...0xFF {
            for second in UInt8(0)...0xFF {
                for tail: [UInt8] in [[0x80, 0x80], [0xBF, 0xBF], [0x41, 0x80]] {
                    let bytes = [lead, second] + tail
                    let ours = bytes.withUnsafeBufferPointer { UTF8Sequence.check(at: 0, in: $0.baseAddress!, count: $0.count) }
                    var iterator = bytes.makeIterator()
                    var decoder = UTF8()
                    let expected: UTF8Sequence
                    switch decoder.decode(&iterator) {
                    case .scalarValue(let scalar): expected = .valid(String(scalar).utf8.count)
                    default: expected = .invalid
                    }
                    if ours != expected { Issue.record("\(bytes.map { String($0, radix: 16) }): \(ours), not \(expected)") }
                }
            }
        }
        let cut: [UInt8] = [0xE2, 0x82]
        #expect(cut.withUnsafeBufferPointer { UTF8Sequence.check(at: 0, in: $0.baseAddress!, count: 2) } == .incomplete)
    }

    @Test func aFileIsReadInChunksAndAMissingOneIsTheCallersError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("support-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let content = Data((0..<10_000).map { UInt8($0 % 251) })
        try content.write(to: URL(fileURLWithPath: path))
        struct Failure: Error { let message: String }
        var chunks: [Data] = []
        try FileChunks.read(path: path, chunkSize: 4096, failure: { (reason) -> Failure in Failure(message: reason.message) }) {
            (chunk) throws(Failure) in chunks.append(chunk)
        }
        #expect(chunks.map(\.count) == [4096, 4096, 1808] && chunks.reduce(Data(), +) == content)
        let missing = #expect(throws: Failure.self) {
            try FileChunks.read(path: path + ".missing", failure: { (reason) -> Failure in Failure(message: reason.message) }) {
                (_) throws(Failure) in
            }
        }
        #expect(missing?.message == "\(path).missing does not exist")
    }

    @Test func passwordsInTextAreMaskedAndFound() {
        #expect(Redaction.redactedText("GET https://ann:s3cret@example.org/feed failed") == "GET https://ann:***@example.org/feed failed")
        #expect(Redaction.redactedText("two: http://a:b@x/ and 'ftp://c:d@y'") == "two: http://a:***@x/ and 'ftp://c:***@y'")
        #expect(Redaction.redactedText("no password: https://ann@example.org/") == "no password: https://ann@example.org/")
        #expect(Redaction.redactedText("https://u:p@ss@host/?q=1") == "https://u:***@host/?q=1", "to the last @ of the authority")
        #expect(Redaction.userInfoPassword(in: "postgresql://feeds:pa%40ss@db/feedingest") == "pa%40ss")
        #expect(Redaction.userInfoPassword(in: "https://example.org/") == nil)
    }

    @Test func aLockGuardsItsValueAcrossThreads() {
        let counter = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }
}
