// Writing a body to a file as it arrives: open(2), pwrite(2), ftruncate(2), fsync(2), with EINTR retried in one place.
import Foundation
import Support

/// A file operation that failed: the `errno`, the path and what was being done.
public struct FileWriteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system's code.
    public var code: Errno
    /// The file.
    public var path: String
    /// The call: `open`, `write`, `truncate`, `fsync`, `rename`, `unlink`.
    public var operation: String

    /// Creates a value.
    public init(code: Errno, path: String, operation: String) {
        self.code = code
        self.path = path
        self.operation = operation
    }

    /// Whether the device (or the user's quota) is full: free space and run again, the partial file is kept.
    public var isDiskFull: Bool { code == .noSpace || code == .quotaExceeded }

    /// `cannot write /path: No space left on device (errno 28) [write]`.
    public var description: String {
        let verbs = ["open": "open", "rename": "rename a file to", "unlink": "delete"]
        return "cannot \(verbs[operation] ?? "write") \(path): \(code) [\(operation)]"
    }
}

/// A consumer that writes the body to a file as the bytes arrive, never holding more than one chunk: for downloads.
///
/// The file is opened (created when missing) at ``init(path:)``; where writing starts is decided when the response
/// arrives, by ``responseHandler`` (an offset: the length to keep, the rest is cut off; 0 writes from the start).
/// Every ``checkpointInterval`` bytes the file is flushed to the disk (`fsync`) and ``checkpointHandler`` hears the
/// length that is now durable, so a caller can record an offset it may resume from after a crash. ``fetchDidFinish()``
/// flushes a last time. A failed write (a full disk) throws a ``FileWriteError``; the bytes written before stay.
///
/// Used by one thread at a time, like every consumer; not `Sendable`.
public final class FileConsumer: FetchConsumer {
    /// The file.
    public let path: String
    /// Bytes in the file: where the next byte goes.
    public private(set) var offset: Int64
    /// Bytes known to be on the disk (flushed by the last checkpoint).
    public private(set) var durableOffset: Int64
    /// Flush and report after this many new bytes. Default 4 MiB.
    public var checkpointInterval: Int64 = 4 << 20
    /// Decides, when the final response arrives, the length of the file to keep and write after; throwing refuses the
    /// response (the transfer stops with ``FetchError/Kind/consumerFailed``). `nil` writes from the start.
    public var responseHandler: ((FetchResponse) throws -> Int64)?
    /// Hears the durable length after each flush; throwing stops the transfer.
    public var checkpointHandler: ((Int64) throws -> Void)?
    /// Hears the file's length after each write (for progress).
    public var progressHandler: ((Int64) -> Void)?
    /// The final response, once it arrived.
    public private(set) var response: FetchResponse?
    private var descriptor: Int32

    /// Opens `path` for writing, creating it (mode 0644) when missing; the file is not changed until the response.
    public init(path: String) throws(FileWriteError) {
        self.path = path
        let opened = Errno.retryingInterrupts { open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644) }
        guard opened >= 0 else { throw FileWriteError(code: .current, path: path, operation: "open") }
        var status = stat()
        guard fstat(opened, &status) == 0 else {
            let error = FileWriteError(code: .current, path: path, operation: "open")
            Glibc.close(opened)
            throw error
        }
        descriptor = opened
        offset = Int64(status.st_size)
        durableOffset = 0
    }

    deinit { close() }

    /// Closes the file (idempotent); later writes fail.
    public func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Cuts the file to `length` bytes (or extends it with zeros) and writes from there on.
    public func truncate(to length: Int64) throws(FileWriteError) {
        guard Errno.retryingInterrupts({ ftruncate(descriptor, off_t(length)) }) == 0 else {
            throw FileWriteError(code: .current, path: path, operation: "truncate")
        }
        offset = length
        durableOffset = min(durableOffset, length)
    }

    /// Flushes the file to the disk (`fsync`), then tells ``checkpointHandler``; returns the durable length.
    @discardableResult
    public func checkpoint() throws(FileWriteError) -> Int64 {
        guard Errno.retryingInterrupts({ fsync(descriptor) }) == 0 else {
            throw FileWriteError(code: .current, path: path, operation: "fsync")
        }
        durableOffset = offset
        return offset
    }

    // MARK: FetchConsumer

    /// Asks ``responseHandler`` where to start, and cuts the file there.
    public func fetchDidReceiveResponse(_ response: FetchResponse) throws {
        self.response = response
        try truncate(to: try responseHandler?(response) ?? 0)
    }

    /// Writes the bytes at the end, flushing every ``checkpointInterval`` bytes.
    public func fetchDidReceive(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let written = Errno.retryingInterrupts {
                pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset))
            }
            guard written > 0 else {
                throw FileWriteError(code: written < 0 ? .current : .ioError, path: path, operation: "write")
            }
            done += written
            offset += Int64(written)
        }
        progressHandler?(offset)
        if offset - durableOffset >= checkpointInterval {
            try checkpointHandler?(try checkpoint())
        }
    }

    /// Flushes the complete file and reports its length.
    public func fetchDidFinish() throws {
        try checkpointHandler?(try checkpoint())
    }
}

/// The file operations around a download's partial file, with `EINTR` retried and failures as ``FileWriteError``.
public enum DownloadFiles {
    /// Puts a complete, flushed file in place: `rename(2)` (atomic, replacing `destination`), then a flush of the
    /// destination's directory so the new name survives a crash.
    public static func moveIntoPlace(_ source: String, as destination: String) throws(FileWriteError) {
        guard rename(source, destination) == 0 else { throw FileWriteError(code: .current, path: destination, operation: "rename") }
        let directory = Errno.retryingInterrupts {
            open((destination as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard directory >= 0 else { return }  // the rename is done; only its durability across a crash is not assured
        _ = Errno.retryingInterrupts { fsync(directory) }
        Glibc.close(directory)
    }

    /// Deletes a file; a file that is not there is no error.
    public static func remove(_ path: String) throws(FileWriteError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw FileWriteError(code: .current, path: path, operation: "unlink") }
    }

    /// The size of the file at `path`, or `nil` when there is none.
    public static func size(of path: String) -> Int64? {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : nil
    }
}
