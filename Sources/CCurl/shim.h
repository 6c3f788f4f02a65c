#ifndef FEEDINGEST_CCURL_SHIM_H
#define FEEDINGEST_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot call.
// Each wrapper below fixes one argument type, as libcurl's documentation gives it per option
// (https://curl.se/libcurl/c/curl_easy_setopt.html): the caller picks the wrapper that matches the option.

// curl_easy_setopt is variadic: options taking a long (CURLOPT_TIMEOUT, CURLOPT_FOLLOWLOCATION, ...).
static inline CURLcode CCurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic: options taking a curl_off_t (CURLOPT_MAXFILESIZE_LARGE, ...).
static inline CURLcode CCurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic: options taking a C string, which libcurl copies (CURLOPT_URL, ...).
static inline CURLcode CCurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic: options taking an opaque pointer (CURLOPT_WRITEDATA, CURLOPT_PRIVATE, ...).
static inline CURLcode CCurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic: options taking a string list (CURLOPT_HTTPHEADER, CURLOPT_RESOLVE, ...).
static inline CURLcode CCurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic: CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION take this callback type.
static inline CURLcode CCurl_easy_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic: CURLOPT_READFUNCTION takes this callback type.
static inline CURLcode CCurl_easy_setopt_read_callback(CURL *handle, CURLoption option, curl_read_callback value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic: CURLOPT_XFERINFOFUNCTION takes this callback type.
static inline CURLcode CCurl_easy_setopt_xferinfo_callback(CURL *handle, CURLoption option, curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic: CURLOPT_DEBUGFUNCTION takes this callback type.
static inline CURLcode CCurl_easy_setopt_debug_callback(CURL *handle, CURLoption option, curl_debug_callback value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_getinfo is variadic: infos answering a long (CURLINFO_RESPONSE_CODE, CURLINFO_NUM_CONNECTS, ...).
static inline CURLcode CCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// curl_easy_getinfo is variadic: infos answering a curl_off_t (CURLINFO_SIZE_DOWNLOAD_T, CURLINFO_TOTAL_TIME_T, ...).
static inline CURLcode CCurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

// curl_easy_getinfo is variadic: infos answering a string owned by libcurl (CURLINFO_EFFECTIVE_URL, ...).
static inline CURLcode CCurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

// curl_easy_getinfo is variadic: CURLINFO_PRIVATE answers the pointer set with CURLOPT_PRIVATE.
static inline CURLcode CCurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

// curl_easy_getinfo is variadic: infos answering a list the caller frees (CURLINFO_SSL_ENGINES, ...).
static inline CURLcode CCurl_easy_getinfo_slist(CURL *handle, CURLINFO info, struct curl_slist **value) {
    return curl_easy_getinfo(handle, info, value);
}

// curl_multi_setopt is variadic: options taking a long (CURLMOPT_MAX_TOTAL_CONNECTIONS, CURLMOPT_PIPELINING, ...).
static inline CURLMcode CCurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

// curl_multi_setopt is variadic: options taking an opaque pointer (CURLMOPT_SOCKETDATA, CURLMOPT_TIMERDATA).
static inline CURLMcode CCurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

// curl_multi_setopt is variadic: CURLMOPT_SOCKETFUNCTION takes this callback type.
static inline CURLMcode CCurl_multi_setopt_socket_callback(CURLM *multi, CURLMoption option, curl_socket_callback value) {
    return curl_multi_setopt(multi, option, value);
}

// curl_multi_setopt is variadic: CURLMOPT_TIMERFUNCTION takes this callback type.
static inline CURLMcode CCurl_multi_setopt_timer_callback(CURLM *multi, CURLMoption option, curl_multi_timer_callback value) {
    return curl_multi_setopt(multi, option, value);
}

// CURL_WRITEFUNC_PAUSE is a macro of an unsigned expression; Swift needs it as a size_t value.
static inline size_t CCurl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
#endif
