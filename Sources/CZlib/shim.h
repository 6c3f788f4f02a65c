#ifndef FEEDINGEST_CZLIB_SHIM_H
#define FEEDINGEST_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro that passes ZLIB_VERSION and sizeof(z_stream); Swift cannot import macros.
// windowBits: 8..15 zlib, -8..-15 raw deflate, +16 gzip only, +32 automatic zlib/gzip detection (zlib.h).
static inline int CZlib_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

// deflateInit2 is a macro for the same reason; tests and benchmarks use it to make gzip fixtures.
static inline int CZlib_deflateInit2(z_streamp stream, int level, int windowBits, int memLevel, int strategy) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, strategy);
}
#endif
