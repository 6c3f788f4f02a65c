import Fetch
import Foundation
import Support
import TestSupport
import Testing

/// `FetchConsumer.fetchWillWait()`: called when every byte that had arrived is delivered, so a consumer that gathers
/// results in batches can hand them on while the download is quiet, and not after every piece of a fast body.
@Suite("The consumer's wait hook")
struct WaitHookTests {
    /// Records the order of the calls: `r` for bytes, `w` for the hook, `f` for the end.
    final class Recorder: FetchConsumer {
        var calls: [Character] = []
        var bytes = 0
        var onWait: (() -> Void)?

        func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
            calls.append("r")
            self.bytes += bytes.count
        }

        func fetchWillWait() {
            calls.append("w")
            onWait?()
        }

        func fetchDidFinish() throws { calls.append("f") }

        /// Hooks that follow no bytes, or bytes with no hook before the end.
        var misplacedHooks: Int {
            zip(calls, calls.dropFirst()).filter { $0 == "w" && $1 == "w" }.count + (calls.first == "w" ? 1 : 0)
        }
    }

    /// The server sends the first item and waits for the test: the hook must come while it waits, after those
    /// bytes, or the test never releases it (and the server gives up, failing the transfer).
    @Test(arguments: ["0", "1"])
    func theHookComesWhileTheServerHoldsTheRest(gzip: String) throws {
        let server = try FaultServer.shared.get()
        let token = makeToken() + gzip
        let consumer = Recorder()
        let bytesBeforeRelease = Lock<Int?>(nil)
        consumer.onWait = {
            guard bytesBeforeRelease.withLock({ $0 }) == nil else { return }
            bytesBeforeRelease.withLock { $0 = consumer.bytes }
            try? server.release(token)
        }
        let result = Fetcher().fetch(FetchRequest(url: server.url("/stream?items=20&gzip=\(gzip)&token=\(token)")), into: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
        let before = try #require(bytesBeforeRelease.withLock { $0 }, "no hook while the server held the body")
        #expect(before > 0 && before < consumer.bytes, "the hook came after the first item's \(before) bytes, before the rest")
        #expect(consumer.misplacedHooks == 0, "\(String(consumer.calls))")
        #expect(consumer.calls.last == "f")
    }

    /// A 1,500-item feed from nginx arrives in many pieces; the hook comes at most once per piece and never twice
    /// without bytes between.
    @Test func aFastBodyCallsTheHookNoMoreThanOncePerPiece() throws {
        let nginx = try NginxServer.shared.get()
        let consumer = Recorder()
        let result = Fetcher().fetch(FetchRequest(url: nginx.url("/plain/feeds/medium.xml")), into: consumer)
        #expect(result.isOK, "\(String(describing: result.error))")
        let pieces = consumer.calls.filter { $0 == "r" }.count
        let hooks = consumer.calls.filter { $0 == "w" }.count
        #expect(pieces > 1 && hooks >= 1 && hooks <= pieces, "\(pieces) pieces, \(hooks) hooks")
        #expect(consumer.misplacedHooks == 0)
        #expect(consumer.calls.last == "f")
    }

    /// A regular file never makes the delivery wait: no hook. A pipe does: a hook after bytes that were read.
    @Test func aRegularFileCallsNoHookAndAPipeDoes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("waithook-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("feed.xml")
        try Data(repeating: 0x41, count: 300_000).write(to: file)

        let fromFile = Recorder()
        let fileResult = Fetcher().fetch(.localFile(file.path), into: fromFile)
        #expect(fileResult.isOK, "\(String(describing: fileResult.error))")
        #expect(fromFile.bytes == 300_000 && fromFile.calls.filter { $0 == "r" }.count > 1)
        #expect(!fromFile.calls.contains("w"), "\(String(fromFile.calls))")

        let fifo = directory.appendingPathComponent("feed.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data(repeating: 0x42, count: 1000))
            usleep(20_000)
            handle?.write(Data(repeating: 0x42, count: 1000))
            try? handle?.close()
        }
        writer.start()
        let fromPipe = Recorder()
        let pipeResult = Fetcher().fetch(.localFile(fifo), into: fromPipe)
        #expect(pipeResult.isOK, "\(String(describing: pipeResult.error))")
        #expect(fromPipe.bytes == 2000)
        #expect(fromPipe.calls.contains("w") && fromPipe.misplacedHooks == 0, "\(String(fromPipe.calls))")
    }
}
