// The one file that calls inotify(7): it tells when a file was written, replaced, created or removed.
import Foundation
import Support
import Synchronization

/// Why a file cannot be watched: the call and its `errno`.
public struct FileWatchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failing call (`inotify_init1`, `inotify_add_watch`, ...).
    public var call: String
    /// The path involved.
    public var path: String
    /// The `errno` the call left.
    public var code: Int32

    /// `call PATH failed: strerror (errno N)`.
    public var description: String { "\(call) \(path) failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// Watches one file for changes with inotify, on a thread of its own, and calls back once per burst of changes.
///
/// It watches the file's directory, not the file: editors that save by writing a new file and renaming it over the old
/// one (vim, most IDEs) replace the inode, which a watch on the file would lose; a watch on the directory sees the
/// rename (`IN_MOVED_TO`), a plain write (`IN_CLOSE_WRITE`, `IN_MODIFY`), a new file (`IN_CREATE`) and a removal
/// (`IN_DELETE`, `IN_MOVED_FROM`) under the file's name. Events within ``debounce`` of each other are one change,
/// reported after the burst, so a save that truncates then writes is read once, whole. A symbolic link is followed
/// once, when the watch starts: the link's target's directory is watched.
public final class FileWatcher: Sendable {
    /// The path as given.
    public let path: String
    /// The file's name and directory actually watched (after resolving a symbolic link).
    public let watchedDirectory: String
    public let watchedName: String
    /// How long the watcher waits after an event for more before it reports the change.
    public let debounce: Duration
    private let descriptor: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let done = DispatchSemaphore(value: 0)

    /// Starts watching `path`; `onChange` is called on the watcher's thread after each burst of changes.
    ///
    /// - Throws: ``FileWatchError`` when inotify is unavailable or the directory cannot be watched (it must exist).
    public init(path: String, debounce: Duration = .milliseconds(200), onChange: @escaping @Sendable () -> Void) throws(FileWatchError) {
        self.path = path
        self.debounce = debounce
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        watchedDirectory = resolved.deletingLastPathComponent().path
        watchedName = resolved.lastPathComponent
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw FileWatchError(call: "inotify_init1", path: path, code: errno) }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
            | UInt32(IN_DELETE_SELF | IN_MOVE_SELF)
        guard inotify_add_watch(fd, watchedDirectory, mask) >= 0 else {
            let code = errno
            close(fd)
            throw FileWatchError(call: "inotify_add_watch", path: watchedDirectory, code: code)
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let code = errno
            close(fd)
            throw FileWatchError(call: "pipe", path: path, code: code)
        }
        descriptor = fd
        stopPipe = (ends[0], ends[1])
        let name = watchedName
        let thread = Thread { [descriptor, stopPipe, done, debounce] in
            defer { done.signal() }
            // When the pending change is reported: the debounce after the last event about the file. Events about
            // other files of the directory (a database's journal, a log) do not move it, however often they come.
            var reportAt: ContinuousClock.Instant?
            var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            while true {
                var timeout: Int32 = -1
                if let reportAt {
                    timeout = Int32(clamping: max(0, (reportAt - ContinuousClock.now).millisecondsRoundedUp))
                }
                let ready = Errno.retryingInterrupts { poll(&descriptors, 2, timeout) }
                if ready < 0 || descriptors[1].revents != 0 { return }
                if ready > 0, Self.readEvents(descriptor, concerning: name) { reportAt = ContinuousClock.now + debounce }
                if let due = reportAt, ContinuousClock.now >= due {
                    reportAt = nil
                    onChange()
                }
            }
        }
        thread.name = "feedingest.watch-list"
        thread.start()
    }

    /// Stops watching and waits for the thread to end. Idempotent.
    public func stop() {
        var byte: UInt8 = 1
        guard write(stopPipe.write, &byte, 1) == 1 else { return }
        done.wait()
        done.signal()
    }

    deinit {
        stop()
        close(descriptor)
        close(stopPipe.read)
        close(stopPipe.write)
    }

    /// Reads every waiting event; whether one concerned the file `name` (or the watched directory itself went away).
    private static func readEvents(_ descriptor: Int32, concerning name: String) -> Bool {
        var concerns = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = Errno.retryingInterrupts { buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) } }
            guard count > 0 else { return concerns }  // EAGAIN: drained
            buffer.withUnsafeBytes { raw in
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameLength = Int(event.len)
                    if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW) != 0 {
                        concerns = true  // the directory moved or events were lost: read the file again
                    } else if nameLength > 0 {
                        let bytes = raw[(offset + header)..<(offset + header + nameLength)]
                        let eventName = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                        if eventName == name { concerns = true }
                    }
                    offset += header + nameLength
                }
            }
        }
    }
}
