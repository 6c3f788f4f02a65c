#include "CYajlNoop.h"
#include <yajl/yajl_parse.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct counts { long objects; int depth; int stop_at_item; int stopped; };

static int on_null(void *c) { (void)c; return 1; }
static int on_bool(void *c, int v) { (void)c; (void)v; return 1; }
static int on_number(void *c, const char *s, size_t n) { (void)c; (void)s; (void)n; return 1; }
static int on_string(void *c, const unsigned char *s, size_t n) { (void)c; (void)s; (void)n; return 1; }
static int on_key(void *c, const unsigned char *s, size_t n) { (void)c; (void)s; (void)n; return 1; }
static int on_start_map(void *c) { struct counts *k = c; ++k->objects; ++k->depth; return 1; }
static int on_end_map(void *c) {
    struct counts *k = c;
    if (k->stop_at_item && k->depth == 3) { k->stopped = 1; return 0; }
    --k->depth;
    return 1;
}
static int on_start_array(void *c) { struct counts *k = c; ++k->depth; return 1; }
static int on_end_array(void *c) { struct counts *k = c; --k->depth; return 1; }

/* yajl keeps the pointer: a static table lives long enough. Numbers as text, as StreamingJSON takes them. */
static const yajl_callbacks callbacks = {
    on_null, on_bool, NULL, NULL, on_number, on_string, on_start_map, on_key, on_end_map, on_start_array, on_end_array,
};

long cyajl_noop_parse(const unsigned char *bytes, size_t length, size_t chunk) {
    struct counts counts = {0, 0, 0, 0};
    yajl_handle parser = yajl_alloc(&callbacks, NULL, &counts);
    if (!parser) return -1;
    long result = counts.objects;
    for (size_t offset = 0; offset < length; offset += chunk) {
        size_t n = length - offset < chunk ? length - offset : chunk;
        if (yajl_parse(parser, bytes + offset, n) != yajl_status_ok) { result = -1; break; }
    }
    if (result >= 0 && yajl_complete_parse(parser) != yajl_status_ok) result = -1;
    if (result >= 0) result = counts.objects;
    yajl_free(parser);
    return result;
}

long cyajl_noop_parse_fd(int fd, size_t chunk) {
    struct counts counts = {0, 0, 0, 0};
    yajl_handle parser = yajl_alloc(&callbacks, NULL, &counts);
    unsigned char *buffer = malloc(chunk);
    long result = -1;
    if (parser && buffer) {
        for (;;) {
            ssize_t n = read(fd, buffer, chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) break;
            if (n == 0) {
                if (yajl_complete_parse(parser) == yajl_status_ok) result = counts.objects;
                break;
            }
            if (yajl_parse(parser, buffer, (size_t)n) != yajl_status_ok) break;
        }
    }
    if (parser) yajl_free(parser);
    free(buffer);
    return result;
}

long long cyajl_noop_first_item_ns(const unsigned char *bytes, size_t length, size_t chunk) {
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct counts counts = {0, 0, 1, 0};
    yajl_handle parser = yajl_alloc(&callbacks, NULL, &counts);
    if (!parser) return -1;
    for (size_t offset = 0; offset < length && !counts.stopped; offset += chunk) {
        size_t n = length - offset < chunk ? length - offset : chunk;
        if (yajl_parse(parser, bytes + offset, n) != yajl_status_ok) break;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    yajl_free(parser);
    if (!counts.stopped) return -1;
    return (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec);
}
