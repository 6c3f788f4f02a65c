// Reading a local file or standard input for a `FetchRequest.localFile` / `.standardInput` transfer: open(2), fstat(2)
// and read(2), with EINTR retried in one place.
import Foundation
import Support

/// Reads a local file, or standard input, in chunks as they become available.
///
/// `read(2)` hands on a pipe's bytes as soon as they arrive, where `FileHandle.read(upToCount:)` waits for a full
/// buffer: `curl … | feedingest parse -` prints the first article while the download is still running.
final class LocalFileReader {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8]
    /// Whether a read may wait for bytes: standard input, a pipe, a socket or a device; not a regular file.
    let mayWait: Bool

    /// Why a local file could not be read, in words (`the file does not exist`, `is a directory, not a feed file`, ...).
    struct Failure: Error {
        let message: String
    }

    /// Opens `path` (`nil`: standard input) for reading.
    init(path: String?, chunkSize: Int = 64 * 1024) throws(Failure) {
        buffer = [UInt8](repeating: 0, count: chunkSize)
        guard let path else {
            descriptor = 0
            ownsDescriptor = false
            mayWait = !Self.isRegularFile(0)
            return
        }
        let opened = Errno.retryingInterrupts { open(path, O_RDONLY | O_CLOEXEC) }
        guard opened >= 0 else { throw Failure(message: Self.describe(errno)) }
        var status = stat()
        if fstat(opened, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            close(opened)
            throw Failure(message: Self.describe(EISDIR))
        }
        descriptor = opened
        ownsDescriptor = true
        mayWait = status.st_mode & S_IFMT != S_IFREG
    }

    private static func isRegularFile(_ descriptor: Int32) -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    /// Calls `body` with the next bytes read; `false` at the end of the input.
    func read(_ body: (UnsafeRawBufferPointer) -> Void) throws(Failure) -> Bool {
        let count = buffer.withUnsafeMutableBytes { bytes in
            Errno.retryingInterrupts { Glibc.read(descriptor, bytes.baseAddress, bytes.count) }
        }
        guard count >= 0 else { throw Failure(message: "read failed: \(Self.describe(errno))") }
        guard count > 0 else { return false }
        buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        return true
    }

    /// An `errno` in words, for the messages people see.
    private static func describe(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "the file does not exist"
        case EACCES: return "the file cannot be read (permission denied)"
        case EISDIR: return "is a directory, not a feed file"
        default: return String(cString: strerror(code))
        }
    }
}
