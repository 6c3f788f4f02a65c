import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// gzip copies of the fixtures, made in process with zlib's deflate (level 6, as gzip(1) and most servers use;
/// TestSupport's `Compress`), streaming 64 KiB at a time: deterministic for one zlib version, no `gzip` binary needed.
enum Gzip {
    /// `path + ".gz"`, compressed from `path` unless it is there already (written to a temporary file, then renamed,
    /// so a file with that name is always complete; the fixture's name carries the generator's version).
    @discardableResult
    static func ensure(_ path: String) throws -> String {
        let target = path + ".gz"
        if FileManager.default.fileExists(atPath: target) { return target }
        log("compressing \(path)…")
        let temporary = target + ".tmp-\(getpid())"
        try Compress.gzipFile(path, to: temporary)
        guard rename(temporary, target) == 0 else { throw FixtureError(message: "cannot rename \(temporary) to \(target)") }
        return target
    }
}
