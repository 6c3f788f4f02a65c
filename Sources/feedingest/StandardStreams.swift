// The one file of the command that calls the C library directly (write(2), signal(2), isatty(3)).
import Fetch
import Foundation
import Support

/// Buffered output to a file descriptor, flushed on request and when the buffer fills; safe from any thread.
///
/// Standard error is written from more than one thread during an ingest (the observers on the event queue, the
/// signal handler on its own queue), so the buffer is behind a lock, held while it is written out too: each
/// ``write(_:)-([UInt8])`` reaches the descriptor whole, never interleaved with another thread's bytes.
///
/// A descriptor that cannot be written any more (the reader exited: `feedingest feeds.txt | head -1`; a full disk)
/// closes the stream: what it held is dropped, later writes are dropped, and ``onClose`` runs once, so the command can
/// stop its work, say what was not written and exit non-zero. A stream without an ``onClose`` says so on stderr and
/// ends the process with status 1. Whole records (article lines, ``writeRecord(_:)``) that never reached the
/// descriptor are counted (``lostRecords``).
final class OutputStream: Sendable {
    private struct Buffer {
        var bytes: [UInt8] = []
        /// Where each record in ``bytes`` ends.
        var recordEnds: [Int] = []
        var closedReason: String?
        var lostRecords = 0
    }

    private let descriptor: Int32
    private let capacity: Int
    private let buffer: Lock<Buffer>
    private let redactsText: Bool
    private let closeHandler = Lock<(@Sendable (String) -> Void)?>(nil)

    /// `redactsText`: every ``write(_:)-(String)`` masks the password of any URL in the text (`Redaction.redactedText`),
    /// a net under the messages written for people (stderr), which may quote a URL from an error or from libcurl.
    init(descriptor: Int32, capacity: Int = 64 * 1024, redactsText: Bool = false) {
        self.descriptor = descriptor
        self.capacity = capacity
        self.redactsText = redactsText
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity)
        buffer = Lock(Buffer(bytes: bytes))
    }

    /// SIGPIPE would end the process without a word; the failed `write(2)` (`EPIPE`) closes the stream instead.
    static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    /// Runs once, on the thread whose write failed, when the descriptor cannot be written any more; gets the reason
    /// (`strerror`). Must not write to this stream.
    var onClose: (@Sendable (String) -> Void)? {
        get { closeHandler.withLock { $0 } }
        set { closeHandler.withLock { $0 = newValue } }
    }

    /// Why the stream closed (the reader exited, a full disk); `nil` while it is open.
    var closedReason: String? { buffer.withLock { $0.closedReason } }

    /// Records given to ``writeRecord(_:)`` that never reached the descriptor.
    var lostRecords: Int { buffer.withLock { $0.lostRecords } }

    func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { append($0, record: false) }
    }

    /// Writes bytes lent for the call (a `JSONWriter`'s), without copying them into an array first.
    func write(_ bytes: UnsafeRawBufferPointer) {
        append(bytes, record: false)
    }

    /// Writes one whole record (an article's line); returns `false` when the stream is closed (it is counted lost).
    @discardableResult
    func writeRecord(_ bytes: UnsafeRawBufferPointer) -> Bool {
        append(bytes, record: true)
    }

    func write(_ text: String) { write(Array((redactsText ? Redaction.redactedText(text) : text).utf8)) }

    /// Writes out what is buffered; `false` when the stream is closed.
    @discardableResult
    func flush() -> Bool {
        let closed = buffer.withLock { Self.drain(&$0, to: descriptor) }
        if let closed { return reportClose(closed) }
        return buffer.withLock { $0.closedReason == nil }
    }

    @discardableResult
    private func append(_ bytes: UnsafeRawBufferPointer, record: Bool) -> Bool {
        let closed = buffer.withLock { buffer -> String?? in
            guard buffer.closedReason == nil else {
                if record { buffer.lostRecords += 1 }
                return .some(nil)
            }
            buffer.bytes.append(contentsOf: bytes)
            if record { buffer.recordEnds.append(buffer.bytes.count) }
            guard buffer.bytes.count >= capacity else { return nil }
            return Self.drain(&buffer, to: descriptor).map { .some($0) }
        }
        switch closed {
        case nil: return true
        case .some(nil): return false
        case .some(.some(let reason)): return reportClose(reason)
        }
    }

    /// Tells the handler (or, without one, stderr and the process's end) that the stream has just closed.
    private func reportClose(_ reason: String) -> Bool {
        if let handler = onClose {
            handler(reason)
            return false
        }
        // `_exit`, not `exit`: other threads may still be fetching, and the exit-time clean-up of OpenSSL racing
        // libcurl's is a crash.
        let message = Array("feedingest: cannot write to \(descriptor == 1 ? "stdout" : "fd \(descriptor)"): \(reason)\n".utf8)
        _ = message.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        _exit(1)
    }

    /// Writes out and empties `buffer`; called with the lock held. Returns the reason when the descriptor failed just
    /// now (the stream is then closed, its records not written counted lost); `nil` otherwise.
    private static func drain(_ buffer: inout Buffer, to descriptor: Int32) -> String? {
        guard buffer.closedReason == nil else { return nil }
        var offset = 0
        while offset < buffer.bytes.count {
            let written = Errno.retryingInterrupts {
                buffer.bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            }
            if written < 0 {
                // The reader is gone (EPIPE), a full disk, a closed descriptor: nothing more can reach it.
                let reason = Errno.current == .brokenPipe ? "broken pipe: the reader exited" : Errno.current.message
                buffer.closedReason = reason
                buffer.lostRecords += buffer.recordEnds.count { $0 > offset }
                buffer.bytes.removeAll()
                buffer.recordEnds.removeAll()
                return reason
            }
            offset += written
        }
        buffer.bytes.removeAll(keepingCapacity: true)
        buffer.recordEnds.removeAll(keepingCapacity: true)
        return nil
    }

    var isTerminal: Bool { isatty(descriptor) == 1 }

    /// Closes the stream when the descriptor is a pipe whose reader has gone (`poll` reports `POLLERR`), without
    /// waiting for the next write to fail: for a long-running command that may print nothing for hours.
    func checkReader() {
        var entry = pollfd(fd: descriptor, events: 0, revents: 0)
        guard poll(&entry, 1, 0) == 1, entry.revents & Int16(POLLERR) != 0 else { return }
        let reason = buffer.withLock { buffer -> String? in
            guard buffer.closedReason == nil else { return nil }
            buffer.closedReason = "broken pipe: the reader exited"
            buffer.lostRecords += buffer.recordEnds.count
            buffer.bytes.removeAll()
            buffer.recordEnds.removeAll()
            return buffer.closedReason
        }
        if let reason { _ = reportClose(reason) }
    }
}

/// The process's standard output and error, shared by every thread of the command (``OutputStream`` is `Sendable`:
/// its buffer is behind a lock).
enum StandardStreams {
    static let output = OutputStream(descriptor: 1)
    /// Messages for people; no URL's password is ever written here (see ``OutputStream/init(descriptor:capacity:redactsText:)``).
    static let error = OutputStream(descriptor: 2, capacity: 1, redactsText: true)
}
