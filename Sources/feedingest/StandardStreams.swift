// The one file of the command that calls the C library directly (write(2), signal(2), isatty(3)).
import Fetch
import Foundation
import Synchronization

/// Buffered output to a file descriptor, flushed on request and when the buffer fills; safe from any thread.
///
/// Standard error is written from more than one thread during an ingest (the observers on the event queue, the
/// signal handler on its own queue), so the buffer is behind a lock, held while it is written out too: each
/// ``write(_:)-([UInt8])`` reaches the descriptor whole, never interleaved with another thread's bytes.
///
/// A closed pipe (`feedingest parse feed.xml | head`) ends the process quietly with status 0, as
/// command-line tools do, instead of crashing on SIGPIPE.
final class OutputStream: Sendable {
    private let descriptor: Int32
    private let capacity: Int
    private let buffer: Mutex<[UInt8]>
    private let redactsText: Bool

    /// `redactsText`: every ``write(_:)-(String)`` masks the password of any URL in the text (`Redaction.redactedText`),
    /// a net under the messages written for people (stderr), which may quote a URL from an error or from libcurl.
    init(descriptor: Int32, capacity: Int = 64 * 1024, redactsText: Bool = false) {
        self.descriptor = descriptor
        self.capacity = capacity
        self.redactsText = redactsText
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity)
        buffer = Mutex(bytes)
    }

    static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    func write(_ bytes: [UInt8]) {
        buffer.withLock { buffer in
            buffer.append(contentsOf: bytes)
            if buffer.count >= capacity { Self.drain(&buffer, to: descriptor) }
        }
    }

    /// Writes bytes lent for the call (a `JSONWriter`'s), without copying them into an array first.
    func write(_ bytes: UnsafeRawBufferPointer) {
        buffer.withLock { buffer in
            buffer.append(contentsOf: bytes)
            if buffer.count >= capacity { Self.drain(&buffer, to: descriptor) }
        }
    }

    func write(_ text: String) { write(Array((redactsText ? Redaction.redactedText(text) : text).utf8)) }

    func flush() {
        buffer.withLock { Self.drain(&$0, to: descriptor) }
    }

    /// Writes out and empties `buffer`; called with the lock held.
    private static func drain(_ buffer: inout [UInt8], to descriptor: Int32) {
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

/// The process's standard output and error, shared by every thread of the command (``OutputStream`` is `Sendable`:
/// its buffer is behind a lock).
enum StandardStreams {
    static let output = OutputStream(descriptor: 1)
    /// Messages for people; no URL's password is ever written here (see ``OutputStream/init(descriptor:capacity:redactsText:)``).
    static let error = OutputStream(descriptor: 2, capacity: 1, redactsText: true)
}
