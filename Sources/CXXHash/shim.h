#ifndef FEEDINGEST_CXXHASH_SHIM_H
#define FEEDINGEST_CXXHASH_SHIM_H
// Debian's libxxhash (libxxhash-dev): only the exported API of xxhash.h, never XXH_INLINE_ALL, so every hash is the
// shared library's own code, the reference implementation of https://github.com/Cyan4973/xxHash.
#include <xxhash.h>
#endif
