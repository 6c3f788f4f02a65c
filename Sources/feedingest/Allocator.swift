#if canImport(CJemalloc)
import CJemalloc
#endif

/// The memory allocator the command runs on, as `feedingest --version` reports it.
///
/// The command links Debian's jemalloc (`CJemalloc`), which then serves every `malloc` and `free` of the process (and,
/// because the `feedingestTests` target links this module, of the package's test process). Its
/// threads hand each article from the parser to the store thread and on to the output queue, so most memory is freed by
/// another thread than the one that allocated it. glibc's malloc returns such a block to the allocating thread's arena
/// under that arena's lock, and the parser's own allocations then miss its thread cache and take the same lock; with
/// jemalloc, a 20 MB feed into SQLite takes ~7% less CPU time (issue 18's notes have the figures). Sanitizer builds keep
/// their runtime's malloc (Package.swift).
enum Allocator {
    /// One line: `jemalloc VERSION`, or what serves `malloc` instead.
    static var summary: String {
        guard let version = jemallocVersion else { return "the C library's or a sanitizer's malloc (jemalloc is not linked into this build)" }
        return servesAllocations == false ? "another malloc (jemalloc \(version) is linked but not in use)" : "jemalloc \(version)"
    }

    /// jemalloc's version string, when it is linked into the command.
    static var jemallocVersion: String? {
        #if canImport(CJemalloc)
        var version: UnsafePointer<CChar>?
        var length = MemoryLayout<UnsafePointer<CChar>?>.size
        guard mallctl("version", &version, &length, nil, 0) == 0, let version else { return nil }
        return String(cString: version)
        #else
        return nil
        #endif
    }

    /// Whether jemalloc serves the Swift runtime's allocations: the bytes jemalloc counts as allocated by this thread
    /// grow by at least a 64 KiB array made in between. `nil` when jemalloc keeps no such count (built without stats).
    static var servesAllocations: Bool? {
        #if canImport(CJemalloc)
        func allocatedByThisThread() -> UInt64? {
            var bytes: UInt64 = 0
            var length = MemoryLayout<UInt64>.size
            return mallctl("thread.allocated", &bytes, &length, nil, 0) == 0 ? bytes : nil
        }
        guard let before = allocatedByThisThread() else { return nil }
        let block = [UInt8](repeating: 1, count: 64 << 10)
        return withExtendedLifetime(block) {
            guard let after = allocatedByThisThread() else { return nil }
            return after &- before >= UInt64(block.count)
        }
        #else
        return false
        #endif
    }
}
