// errno as a value, and the one place a system call is retried after EINTR (after swift-system's Errno).
#if canImport(Glibc)
import Glibc
#endif

/// An `errno` value with names for the codes feedingest meets.
public struct Errno: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The number.
    public let rawValue: Int32
    /// Wraps a number.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `ENOSPC`: no space left on the device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// `EDQUOT`: the disk quota is exceeded.
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    /// `EINTR`: interrupted by a signal (retried by ``retryingInterrupts(_:)``, never reported).
    public static let interrupted = Errno(rawValue: EINTR)
    /// `ENOENT`: no such file or directory.
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EROFS`: a read-only file system.
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// `EIO`: an input/output error.
    public static let ioError = Errno(rawValue: EIO)
    /// `EISDIR`: the path is a directory.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// `EPIPE`: the reading end of a pipe is closed.
    public static let brokenPipe = Errno(rawValue: EPIPE)

    /// The calling thread's `errno` now.
    public static var current: Errno { Errno(rawValue: errno) }

    /// `strerror(3)`: `No space left on device`.
    public var message: String { String(cString: strerror(rawValue)) }

    /// `strerror(3)` and the number: `No space left on device (errno 28)`.
    public var description: String { "\(message) (errno \(rawValue))" }

    /// Runs a system call that returns a negative number on failure, again for as long as it fails with `EINTR`; its
    /// last result (`errno` still set when it is negative).
    @inlinable
    public static func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}
