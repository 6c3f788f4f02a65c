import Foundation
import SystemdNotify
import Testing

/// sd_notify against a real notification socket: the test plays systemd, with an AF_UNIX datagram socket named in
/// NOTIFY_SOCKET (set for the duration of the test, which runs alone).
@Suite("ServiceNotifier (sd_notify)", .serialized)
struct ServiceNotifierTests {
    @Test func sendsReadyStatusWatchdogAndStoppingToTheNotifySocket() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString).sock").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func receive() -> String {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
        }

        setenv("NOTIFY_SOCKET", path, 1)
        setenv("WATCHDOG_USEC", "4000000", 1)
        setenv("WATCHDOG_PID", String(getpid()), 1)
        defer { unsetenv("NOTIFY_SOCKET"); unsetenv("WATCHDOG_USEC"); unsetenv("WATCHDOG_PID") }
        let notifier = ServiceNotifier()
        #expect(notifier.isSupervised)
        #expect(notifier.watchdogInterval == .seconds(4))
        #expect(try notifier.ready(status: "watching 3 feeds"))
        #expect(receive() == "READY=1\nSTATUS=watching 3 feeds")
        #expect(try notifier.watchdog())
        #expect(receive() == "WATCHDOG=1")
        #expect(try notifier.status("two lines\nbecome one"))
        #expect(receive() == "STATUS=two lines become one")
        #expect(try notifier.stopping())
        #expect(receive() == "STOPPING=1")

        // A socket nobody listens on: a clear error, not a crash.
        setenv("NOTIFY_SOCKET", path + ".gone", 1)
        let error = try #require(throws: ServiceNotifier.Failure.self) { try notifier.watchdog() }
        #expect(error.code == ENOENT || error.code == ECONNREFUSED, "\(error)")
    }

    @Test func outsideSystemdEveryCallIsANoOp() throws {
        unsetenv("NOTIFY_SOCKET")
        unsetenv("WATCHDOG_USEC")
        let notifier = ServiceNotifier()
        #expect(!notifier.isSupervised && notifier.watchdogInterval == nil)
        #expect(try notifier.ready() == false)
        #expect(try notifier.watchdog() == false)
    }
}
