#ifndef FEEDINGEST_CJEMALLOC_SHIM_H
#define FEEDINGEST_CJEMALLOC_SHIM_H
// Debian's jemalloc (libjemalloc-dev), linked into the feedingest command (and so into the package's test process,
// which links the command's module), never into the library products or sanitizer builds. As one of the program's
// own libraries, loaded ahead of the C library, it serves every malloc and free of the process: the Swift runtime,
// Foundation, libexpat, SQLite. Swift calls only mallctl, to name the allocator and to check that it is the one in use.
#include <jemalloc/jemalloc.h>
#endif
