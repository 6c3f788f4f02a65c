// Opens libcurl, libpq, libsystemd and libcrypto on first use (see include/CLibraryLoader.h).
#include "loader.h"
#include "CLibraryLoader.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct feedingest_lazy_library feedingest_libcurl = { "libcurl.so.4", "libcurl4", NULL, PTHREAD_MUTEX_INITIALIZER };
struct feedingest_lazy_library feedingest_libpq = { "libpq.so.5", "libpq5", NULL, PTHREAD_MUTEX_INITIALIZER };
struct feedingest_lazy_library feedingest_libsystemd = { "libsystemd.so.0", "libsystemd0", NULL, PTHREAD_MUTEX_INITIALIZER };
struct feedingest_lazy_library feedingest_libcrypto = { "libcrypto.so.3", "libssl3", NULL, PTHREAD_MUTEX_INITIALIZER };

static void feedingest_lazy_fail(const struct feedingest_lazy_library *library, const char *why) {
    fprintf(stderr, "feedingest: cannot use %s (Debian package %s): %s\n", library->soname, library->package,
            why ? why : "unknown error");
    fflush(stderr);
    _exit(1);
}

void *feedingest_lazy_symbol(struct feedingest_lazy_library *library, const char *name) {
    void *handle = __atomic_load_n(&library->handle, __ATOMIC_ACQUIRE);
    if (!handle) {
        pthread_mutex_lock(&library->lock);
        handle = library->handle;
        if (!handle) {
            handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
            if (!handle) feedingest_lazy_fail(library, dlerror());
            __atomic_store_n(&library->handle, handle, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&library->lock);
    }
    // dlsym on the library's own handle finds its definition, never the stub of the same name in this program.
    void *symbol = dlsym(handle, name);
    if (!symbol) {
        char why[256];
        snprintf(why, sizeof why, "it has no function %s", name);
        feedingest_lazy_fail(library, why);
    }
    return symbol;
}

int CLibraryLoader_isLoaded(const char *soname) {
    struct feedingest_lazy_library *libraries[] = { &feedingest_libcurl, &feedingest_libpq, &feedingest_libsystemd, &feedingest_libcrypto };
    for (size_t index = 0; index < sizeof libraries / sizeof libraries[0]; index += 1) {
        if (strcmp(libraries[index]->soname, soname) == 0) {
            return __atomic_load_n(&libraries[index]->handle, __ATOMIC_ACQUIRE) != NULL;
        }
    }
    return 0;
}
