// libcurl's functions that feedingest calls, each a stub that loads libcurl on first use (see include/CLibraryLoader.h).
// Each definition repeats the prototype of <curl/curl.h> or <curl/urlapi.h>: the compiler refuses one that differs.
#define CURL_DISABLE_TYPECHECK  // curl_easy_setopt and friends are macros otherwise
#include <curl/curl.h>
#include <stdarg.h>
#include "loader.h"

#define CURL_REAL(name) FEEDINGEST_LAZY(feedingest_libcurl, name)
#define STUB(type, name, parameters, arguments) FEEDINGEST_STUB type name parameters { return CURL_REAL(name) arguments; }
#define VOID_STUB(name, parameters, arguments) FEEDINGEST_STUB void name parameters { CURL_REAL(name) arguments; }

STUB(CURLcode, curl_global_init, (long flags), (flags))
STUB(char *, curl_version, (void), ())
VOID_STUB(curl_free, (void *p), (p))
STUB(struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *data), (list, data))
VOID_STUB(curl_slist_free_all, (struct curl_slist *list), (list))

STUB(CURL *, curl_easy_init, (void), ())
VOID_STUB(curl_easy_cleanup, (CURL *curl), (curl))
STUB(const char *, curl_easy_strerror, (CURLcode code), (code))
STUB(CURLcode, curl_easy_pause, (CURL *handle, int bitmask), (handle, bitmask))
STUB(CURLcode, curl_easy_perform, (CURL *curl), (curl))

STUB(CURLM *, curl_multi_init, (void), ())
STUB(CURLMcode, curl_multi_cleanup, (CURLM *multi), (multi))
STUB(CURLMcode, curl_multi_add_handle, (CURLM *multi, CURL *easy), (multi, easy))
STUB(CURLMcode, curl_multi_remove_handle, (CURLM *multi, CURL *easy), (multi, easy))
STUB(CURLMcode, curl_multi_perform, (CURLM *multi, int *running), (multi, running))
STUB(CURLMcode, curl_multi_poll, (CURLM *multi, struct curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms, int *ret),
     (multi, extra_fds, extra_nfds, timeout_ms, ret))
STUB(CURLMcode, curl_multi_wakeup, (CURLM *multi), (multi))
STUB(CURLMsg *, curl_multi_info_read, (CURLM *multi, int *msgs_in_queue), (multi, msgs_in_queue))
STUB(const char *, curl_multi_strerror, (CURLMcode code), (code))

STUB(CURLU *, curl_url, (void), ())
VOID_STUB(curl_url_cleanup, (CURLU *handle), (handle))
STUB(CURLUcode, curl_url_get, (CURLU *handle, CURLUPart what, char **part, unsigned int flags), (handle, what, part, flags))
STUB(CURLUcode, curl_url_set, (CURLU *handle, CURLUPart what, const char *part, unsigned int flags), (handle, what, part, flags))
STUB(const char *, curl_url_strerror, (CURLUcode code), (code))

// The variadic three take one argument after the option, whose type the option's number range gives
// (CURLOPTTYPE_LONG, _OBJECTPOINT and _FUNCTIONPOINT, _OFF_T, _BLOB: curl/curl.h; CURLMoption uses the same ranges);
// it is read as that type and passed on.
#define SETOPT_STUB(type, name, handle_type, option_type) \
    FEEDINGEST_STUB type name(handle_type *handle, option_type option, ...) { \
        __typeof__(&name) real = CURL_REAL(name); \
        va_list list; \
        va_start(list, option); \
        type code; \
        if (option < CURLOPTTYPE_OBJECTPOINT) code = real(handle, option, va_arg(list, long)); \
        else if (option < CURLOPTTYPE_OFF_T) code = real(handle, option, va_arg(list, void *)); \
        else if (option < CURLOPTTYPE_BLOB) code = real(handle, option, va_arg(list, curl_off_t)); \
        else code = real(handle, option, va_arg(list, void *)); \
        va_end(list); \
        return code; \
    }

SETOPT_STUB(CURLcode, curl_easy_setopt, CURL, CURLoption)
SETOPT_STUB(CURLMcode, curl_multi_setopt, CURLM, CURLMoption)

// Every CURLINFO answers through a pointer.
FEEDINGEST_STUB CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...) {
    va_list list;
    va_start(list, info);
    CURLcode code = CURL_REAL(curl_easy_getinfo)(curl, info, va_arg(list, void *));
    va_end(list);
    return code;
}
