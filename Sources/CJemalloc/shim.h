#ifndef FEEDINGEST_CJEMALLOC_SHIM_H
#define FEEDINGEST_CJEMALLOC_SHIM_H
// Debian's jemalloc (libjemalloc-dev), linked into the feedingest command only. As one of the command's own libraries,
// loaded ahead of the C library, it serves every malloc and free of the process: the Swift runtime, Foundation,
// libexpat, SQLite. Swift calls only mallctl, to name the allocator and to check that it is the one in use.
#include <jemalloc/jemalloc.h>
#endif
