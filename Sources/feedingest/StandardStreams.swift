// The one file of the command that calls the C library directly (write(2), signal(2), isatty(3)).
import Foundation

/// Buffered, unlocked output to a file descriptor, flushed on request and when the buffer fills.
///
/// A closed pipe (`feedingest parse feed.xml | head`) ends the process quietly with status 0, as
/// command-line tools do, instead of crashing on SIGPIPE.
final class OutputStream {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private let capacity: Int

    init(descriptor: Int32, capacity: Int = 64 * 1024) {
        self.descriptor = descriptor
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
    }

    static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= capacity { flush() }
    }

    func write(_ text: String) { write(Array(text.utf8)) }

    func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                // The reader is gone (`| head`): stop at once. `_exit`, not `exit`: other threads may still be
                // fetching, and the exit-time clean-up of OpenSSL racing libcurl's is a crash. What was committed is
                // in the store (the next run sees it as unchanged); nothing else needs flushing.
                if errno == EPIPE { _exit(0) }
                // A full disk or a closed descriptor: say so and fail, never lose output silently.
                let reason = String(cString: strerror(errno))
                let message = Array("feedingest: cannot write to \(descriptor == 1 ? "stdout" : "fd \(descriptor)"): \(reason)\n".utf8)
                _ = message.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
                _exit(1)
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    var isTerminal: Bool { isatty(descriptor) == 1 }
}

/// The process's standard output and error.
/// The command runs on one thread, so the two streams are never shared across threads:
/// that is why `nonisolated(unsafe)` is safe here.
enum StandardStreams {
    nonisolated(unsafe) static let output = OutputStream(descriptor: 1)
    nonisolated(unsafe) static let error = OutputStream(descriptor: 2, capacity: 1)
}
