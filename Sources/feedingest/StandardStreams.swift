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

/// Reads a file or pipe in chunks as they arrive: a pipe's bytes are handed on as soon as `read(2)`
/// returns them, not when a full buffer has accumulated (which `FileHandle.read(upToCount:)` waits for).
final class ChunkReader {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8]

    /// Reads standard input.
    init(standardInputWithChunkSize chunkSize: Int = 64 * 1024) {
        descriptor = 0
        ownsDescriptor = false
        buffer = [UInt8](repeating: 0, count: chunkSize)
    }

    /// Opens `path` for reading; `nil` with `errno` set when it cannot be opened.
    init?(path: String, chunkSize: Int = 64 * 1024) {
        let opened = open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else { return nil }
        descriptor = opened
        ownsDescriptor = true
        buffer = [UInt8](repeating: 0, count: chunkSize)
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    /// The next bytes; empty at the end of the input. Throws the `errno` text on a read error.
    func next() throws -> ArraySlice<UInt8> {
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return buffer[0..<count] }
            if errno == EINTR { continue }
            throw ReadError(message: String(cString: strerror(errno)))
        }
    }

    struct ReadError: Error { let message: String }

    /// Why the last `open` failed, in words.
    static func lastOpenError() -> String {
        switch errno {
        case ENOENT: return "no such file"
        case EACCES: return "cannot be read (permission denied)"
        case EISDIR: return "is a directory, not a feed file"
        default: return String(cString: strerror(errno))
        }
    }
}
