// The one file in Fetch that calls libdeflate (libdeflate.h): its CRC-32, for gzip trailers.
import CLibDeflate

/// CRC-32 as gzip (RFC 1952) and zlib's `crc32` define it, computed by libdeflate.
enum CRC32 {
    /// The CRC-32 of the bytes that gave `crc` followed by `bytes` (start from 0). libdeflate_crc32 has no failure
    /// result, and reads nothing when the length is 0.
    @inline(__always)
    static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        libdeflate_crc32(crc, bytes.baseAddress, bytes.count)
    }
}
