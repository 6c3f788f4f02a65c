import CZlib
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// gzip, zlib and raw deflate fixtures, made in process with zlib's deflate: deterministic for one zlib version, and
/// no `gzip` binary needed. (Sources/Fetch keeps its own zlib calls in Zlib.swift; this is the tests' side.)
public enum Compress {
    /// `data` compressed with `windowBits` (31 gzip, 15 zlib, -15 raw deflate) at `level`.
    public static func deflate(_ data: Data, windowBits: Int32, level: Int32 = 6) -> Data {
        var output = Data()
        var offset = 0
        do {
            try deflate(windowBits: windowBits, level: level, read: { buffer, capacity in
                let count = min(capacity, data.count - offset)
                data.copyBytes(to: buffer, from: data.startIndex + offset..<data.startIndex + offset + count)
                offset += count
                return count
            }, write: { output.append($0, count: $1) })
        } catch {
            preconditionFailure("deflating in memory cannot fail: \(error)")
        }
        return output
    }

    /// A gzip member.
    public static func gzip(_ data: Data) -> Data { deflate(data, windowBits: 31) }
    /// A zlib stream.
    public static func zlib(_ data: Data) -> Data { deflate(data, windowBits: 15) }
    /// Raw deflate, no wrapper.
    public static func raw(_ data: Data) -> Data { deflate(data, windowBits: -15) }

    /// Compresses the file at `source` into a gzip file at `destination`, 64 KiB at a time (large fixtures never sit
    /// in memory).
    public static func gzipFile(_ source: String, to destination: String, level: Int32 = 6) throws {
        let input = open(source, O_RDONLY)
        guard input >= 0 else { throw TestSupportError("cannot open \(source): errno \(errno)") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard output >= 0 else { throw TestSupportError("cannot create \(destination): errno \(errno)") }
        defer { close(output) }
        try deflate(windowBits: 31, level: level, read: { buffer, capacity in
            var count = Glibc.read(input, buffer, capacity)
            while count < 0 && errno == EINTR { count = Glibc.read(input, buffer, capacity) }
            guard count >= 0 else { throw TestSupportError("reading \(source) failed: errno \(errno)") }
            return count
        }, write: { bytes, count in
            var offset = 0
            while offset < count {
                let written = Glibc.write(output, bytes + offset, count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw TestSupportError("writing \(destination) failed: errno \(errno)") }
                offset += written
            }
        })
    }

    /// The one deflate loop: `read` fills a buffer (0 at the end of the input), `write` takes compressed bytes.
    private static func deflate(windowBits: Int32, level: Int32,
                                read: (UnsafeMutablePointer<UInt8>, Int) throws -> Int,
                                write: (UnsafePointer<UInt8>, Int) throws -> Void) throws {
        // zlib keeps the z_stream's address (its state points back at it): heap-allocated, never moved.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deinitialize(count: 1); stream.deallocate() }
        // windowBits 15 + 16 means a gzip wrapper, negative raw deflate (zlib.h, deflateInit2).
        guard CZlib_deflateInit2(stream, level, windowBits, 8, Z_DEFAULT_STRATEGY) == Z_OK else {
            throw TestSupportError("deflateInit2 failed")
        }
        defer { deflateEnd(stream) }
        let chunk = 64 * 1024
        let inBuffer = UnsafeMutablePointer<Bytef>.allocate(capacity: chunk)
        let outBuffer = UnsafeMutablePointer<Bytef>.allocate(capacity: chunk)
        defer { inBuffer.deallocate(); outBuffer.deallocate() }
        var finished = false
        while !finished {
            let count = try read(inBuffer, chunk)
            let flush = count == 0 ? Z_FINISH : Z_NO_FLUSH
            stream.pointee.next_in = inBuffer
            stream.pointee.avail_in = uInt(count)
            repeat {
                stream.pointee.next_out = outBuffer
                stream.pointee.avail_out = uInt(chunk)
                let status = CZlib.deflate(stream, flush)
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                    throw TestSupportError("deflate failed with \(status)")
                }
                try write(outBuffer, chunk - Int(stream.pointee.avail_out))
                if status == Z_STREAM_END { finished = true }
            } while stream.pointee.avail_out == 0
        }
    }
}
