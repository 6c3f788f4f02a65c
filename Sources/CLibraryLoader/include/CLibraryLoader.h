#ifndef FEEDINGEST_CLIBRARYLOADER_H
#define FEEDINGEST_CLIBRARYLOADER_H
// libcurl, libpq, libsystemd and libcrypto, loaded on their first call instead of at start-up (issue 18).
//
// Together with their dependencies (OpenSSL, GnuTLS, Kerberos, LDAP, libssh2, nghttp2, libgcrypt, …) they were 35 of
// the command's 53 shared libraries, and the dynamic loader took ~6.5 ms to map, relocate and initialise them before
// main, in every command, even those that never fetch or reach PostgreSQL (`feedingest parse FILE`, `feedingest feeds`
// on SQLite). libsystemd only serves `watch` under systemd, libcrypto only Fetch's SHA-256 body hash (which the command
// turns off). CCurl, CLibPQ, CSystemd and CCrypto therefore do not link them: this target defines each of their
// functions that feedingest calls, under its own name and with the header's own prototype (the compiler checks they
// agree), as a hidden stub that opens the library with dlopen on the first call of any of them, finds the real function
// with dlsym once, and calls it.
//
// If the library cannot be opened (not installed) or lacks a function (too old), the process prints why on stderr
// and exits with status 1: the calls have no way to report it, and before this the loader refused to start at all.

/// Whether the library with this file name (`libcurl.so.4`, `libpq.so.5`, `libsystemd.so.0`, `libcrypto.so.3`) has
/// been opened by the stubs yet.
int CLibraryLoader_isLoaded(const char *soname);

#endif
