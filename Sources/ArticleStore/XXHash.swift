// The one file in ArticleStore that calls libxxhash (xxhash.h; the algorithm is specified in
// https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md).
import CXXHash

extension ArticleHasher {
    /// XXH64 of `bytes` with a seed, as the xxHash specification defines it (the same value on every machine).
    ///
    /// libxxhash's one-shot `XXH64`: every input the store hashes (an article's encoding, a key) is one contiguous
    /// buffer, so the streaming state (`XXH64_createState`, `_reset`, `_update`, `_digest`) would only add an allocation
    /// and three calls per hash. `XXH64` has no failure result to check: it returns the hash of any input, and reads
    /// nothing when the length is 0 (the base address may then be `NULL`).
    public static func xxHash64(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        XXH64(bytes.baseAddress, bytes.count, seed)
    }
}
