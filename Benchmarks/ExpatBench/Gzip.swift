import CZlib
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// gzip copies of the fixtures, made in process with zlib's deflate (level 6, as gzip(1) and most servers use),
/// streaming 64 KiB at a time: deterministic for one zlib version, and no `gzip` binary needed.
enum Gzip {
    /// `path + ".gz"`, compressed from `path` unless it is there already (written to a temporary file, then renamed,
    /// so a file with that name is always complete; the fixture's name carries the generator's version).
    @discardableResult
    static func ensure(_ path: String) throws -> String {
        let target = path + ".gz"
        if FileManager.default.fileExists(atPath: target) { return target }
        log("compressing \(path)…")
        let temporary = target + ".tmp-\(getpid())"
        try compress(path, to: temporary)
        guard rename(temporary, target) == 0 else { throw FixtureError(message: "cannot rename \(temporary) to \(target)") }
        return target
    }

    /// Compresses the file at `source` into a gzip file at `destination`.
    static func compress(_ source: String, to destination: String, level: Int32 = 6) throws {
        let input = open(source, O_RDONLY)
        guard input >= 0 else { throw FixtureError(message: "cannot open \(source)") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard output >= 0 else { throw FixtureError(message: "cannot create \(destination)") }
        defer { close(output) }
        // zlib keeps the z_stream's address (its state points back at it): heap-allocated, never moved.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deinitialize(count: 1); stream.deallocate() }
        // windowBits 15 + 16: a gzip wrapper (zlib.h, deflateInit2).
        guard CZlib_deflateInit2(stream, level, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK else {
            throw FixtureError(message: "deflateInit2 failed")
        }
        defer { deflateEnd(stream) }
        let chunk = 64 * 1024
        let inBuffer = UnsafeMutablePointer<Bytef>.allocate(capacity: chunk)
        let outBuffer = UnsafeMutablePointer<Bytef>.allocate(capacity: chunk)
        defer { inBuffer.deallocate(); outBuffer.deallocate() }
        var finished = false
        while !finished {
            var count = read(input, inBuffer, chunk)
            while count < 0 && errno == EINTR { count = read(input, inBuffer, chunk) }
            guard count >= 0 else { throw FixtureError(message: "reading \(source) failed: errno \(errno)") }
            let flush = count == 0 ? Z_FINISH : Z_NO_FLUSH
            stream.pointee.next_in = inBuffer
            stream.pointee.avail_in = uInt(count)
            repeat {
                stream.pointee.next_out = outBuffer
                stream.pointee.avail_out = uInt(chunk)
                let status = CZlib.deflate(stream, flush)
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                    throw FixtureError(message: "deflate failed with \(status)")
                }
                try writeAll(output, outBuffer, chunk - Int(stream.pointee.avail_out), path: destination)
                if status == Z_STREAM_END { finished = true }
            } while stream.pointee.avail_out == 0
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafePointer<Bytef>, _ count: Int, path: String) throws {
        var offset = 0
        while offset < count {
            let written = write(fd, bytes + offset, count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw FixtureError(message: "writing \(path) failed: errno \(errno)") }
            offset += written
        }
    }
}
