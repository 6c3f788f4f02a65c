import FileWatch
import Foundation
import Support
import Testing

@Suite("FileWatcher (inotify)", .serialized)
struct FileWatcherTests {
    /// Counts the watcher's callbacks; `wait(for:)` polls until the count reaches a value or 5 seconds pass.
    final class Counter: Sendable {
        let count = Lock(0)
        func bump() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
        func wait(for expected: Int) -> Bool {
            let deadline = Date().addingTimeInterval(5)
            while value < expected && Date() < deadline { usleep(10_000) }
            return value >= expected
        }
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("filewatch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func writesRenamesOverRemovalsAndRecreationsAreEachOneChange() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("feeds.txt")
        try Data("one\n".utf8).write(to: list)
        let counter = Counter()
        // A debounce far longer than the burst below takes, even on a loaded machine.
        let watcher = try FileWatcher(path: list.path, debounce: .milliseconds(700)) { counter.bump() }
        defer { watcher.stop() }

        // A write in place (open, truncate, write, close), several times in a burst: one change.
        for line in ["two", "three", "four"] {
            let handle = try FileHandle(forWritingTo: list)
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data("\(line)\n".utf8))
            try handle.close()
        }
        #expect(counter.wait(for: 1))
        usleep(900_000)
        #expect(counter.value == 1, "a burst of writes is one change")

        // An editor's save: a new file renamed over the old one (a new inode).
        let temporary = directory.appendingPathComponent(".feeds.txt.swp")
        try Data("five\n".utf8).write(to: temporary)
        #expect(rename(temporary.path, list.path) == 0)
        #expect(counter.wait(for: 2), "the rename over the file is seen")

        // Another file in the same directory is not a change of the list.
        try Data("x".utf8).write(to: directory.appendingPathComponent("other.txt"))
        usleep(1_000_000)
        #expect(counter.value == 2)

        // Removed, then created again: both seen, and the watch keeps working after the inode changed twice.
        try FileManager.default.removeItem(at: list)
        #expect(counter.wait(for: 3))
        try Data("six\n".utf8).write(to: list)
        #expect(counter.wait(for: 4))
        try Data("seven\n".utf8).write(to: list, options: .atomic)  // Foundation's atomic write: a rename too
        #expect(counter.wait(for: 5))
    }

    @Test func aMissingDirectoryIsAClearErrorAndStopIsIdempotent() throws {
        let error = try #require(throws: FileWatchError.self) {
            _ = try FileWatcher(path: "/nonexistent-\(UUID().uuidString)/feeds.txt") {}
        }
        #expect(error.call == "inotify_add_watch" && error.code == ENOENT, "\(error)")
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let watcher = try FileWatcher(path: directory.appendingPathComponent("later.txt").path) {}
        watcher.stop()
        watcher.stop()
    }

    @Test func aSymbolicLinkIsFollowedToItsTargetsDirectory() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let real = directory.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let target = real.appendingPathComponent("list.txt")
        try Data("a\n".utf8).write(to: target)
        let link = directory.appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let counter = Counter()
        let watcher = try FileWatcher(path: link.path, debounce: .milliseconds(50)) { counter.bump() }
        defer { watcher.stop() }
        #expect(watcher.watchedName == "list.txt" && watcher.watchedDirectory.hasSuffix("/real"))
        try Data("b\n".utf8).write(to: target)
        #expect(counter.wait(for: 1))
    }
}
