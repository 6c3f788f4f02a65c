#ifndef FEEDINGEST_LOADER_H
#define FEEDINGEST_LOADER_H
// The stubs' shared part (loader.c): one library opened once, and each function looked up once.
#include <pthread.h>

/// A library the stubs open on first use.
struct feedingest_lazy_library {
    const char *soname;
    const char *package;       // the Debian package that installs it, for the error message
    void *handle;              // set once, under lock; read with acquire
    pthread_mutex_t lock;
};

extern struct feedingest_lazy_library feedingest_libcurl;
extern struct feedingest_lazy_library feedingest_libpq;
extern struct feedingest_lazy_library feedingest_libsystemd;
extern struct feedingest_lazy_library feedingest_libcrypto;

/// The address of `name` in `library`, opening the library first if need be; exits the process if either fails.
void *feedingest_lazy_symbol(struct feedingest_lazy_library *library, const char *name);

/// Marks a stub hidden: not in the program's dynamic symbol table (the command is linked with --export-dynamic), so
/// the library, once opened, binds its own calls of its own functions to itself rather than to these stubs (which
/// would then run inside dlopen, under the loader's lock, if the library called one while it initialises).
#define FEEDINGEST_STUB __attribute__((visibility("hidden")))

/// The real function `name` of `library`, as a pointer of the header's type: looked up on the first call, then kept.
#define FEEDINGEST_LAZY(library, name) \
    ({ \
        static __typeof__(&name) feedingest_cached; \
        __typeof__(&name) feedingest_function = __atomic_load_n(&feedingest_cached, __ATOMIC_ACQUIRE); \
        if (!feedingest_function) { \
            feedingest_function = (__typeof__(&name))feedingest_lazy_symbol(&(library), #name); \
            __atomic_store_n(&feedingest_cached, feedingest_function, __ATOMIC_RELEASE); \
        } \
        feedingest_function; \
    })

#endif
