#include "CExpatNoop.h"
#include <expat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>

static void XMLCALL on_start(void *data, const XML_Char *name, const XML_Char **atts) {
    (void)name; (void)atts;
    ++*(long *)data;
}
static void XMLCALL on_end(void *data, const XML_Char *name) { (void)data; (void)name; }
static void XMLCALL on_text(void *data, const XML_Char *s, int len) { (void)data; (void)s; (void)len; }

static XML_Parser make_parser(int namespaces, long *elements) {
    XML_Parser parser = namespaces ? XML_ParserCreateNS(NULL, '\x01') : XML_ParserCreate(NULL);
    if (!parser) return NULL;
    if (namespaces) XML_SetReturnNSTriplet(parser, 1);
    XML_SetUserData(parser, elements);
    XML_SetElementHandler(parser, on_start, on_end);
    XML_SetCharacterDataHandler(parser, on_text);
    return parser;
}

long cexpat_noop_parse(const unsigned char *bytes, size_t length, size_t chunk, int namespaces) {
    long elements = 0;
    XML_Parser parser = make_parser(namespaces, &elements);
    if (!parser) return -1;
    size_t offset = 0;
    for (;;) {
        size_t n = length - offset < chunk ? length - offset : chunk;
        int final = offset + n == length;
        if (XML_Parse(parser, (const char *)bytes + offset, (int)n, final) != XML_STATUS_OK) {
            XML_ParserFree(parser);
            return -1;
        }
        offset += n;
        if (final) break;
    }
    XML_ParserFree(parser);
    return elements;
}

long cexpat_noop_parse_fd(int fd, size_t chunk, int namespaces) {
    long elements = 0;
    XML_Parser parser = make_parser(namespaces, &elements);
    char *buffer = malloc(chunk);
    if (!parser || !buffer) {
        if (parser) XML_ParserFree(parser);
        free(buffer);
        return -1;
    }
    long result = -1;
    for (;;) {
        ssize_t n = read(fd, buffer, chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        if (XML_Parse(parser, buffer, (int)n, n == 0) != XML_STATUS_OK) break;
        if (n == 0) { result = elements; break; }
    }
    free(buffer);
    XML_ParserFree(parser);
    return result;
}

struct first_element {
    XML_Parser parser;
    const char *local_name;
    size_t local_length;
    struct timespec when;
    int seen;
};

static void XMLCALL on_start_first(void *data, const XML_Char *name, const XML_Char **atts) {
    (void)atts;
    struct first_element *state = data;
    // Names are triplets "uri\1local\1prefix" (or just "local" in no namespace).
    const char *local = strchr(name, '\x01');
    local = local ? local + 1 : name;
    const char *end = strchr(local, '\x01');
    size_t length = end ? (size_t)(end - local) : strlen(local);
    if (length == state->local_length && memcmp(local, state->local_name, length) == 0) {
        clock_gettime(CLOCK_MONOTONIC, &state->when);
        state->seen = 1;
        XML_StopParser(state->parser, XML_FALSE);
    }
}

long long cexpat_noop_first_element_ns(const unsigned char *bytes, size_t length, size_t chunk, const char *local_name) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct first_element state = { NULL, local_name, strlen(local_name), { 0, 0 }, 0 };
    XML_Parser parser = XML_ParserCreateNS(NULL, '\x01');
    if (!parser) return -1;
    XML_SetReturnNSTriplet(parser, 1);
    state.parser = parser;
    XML_SetUserData(parser, &state);
    XML_SetElementHandler(parser, on_start_first, on_end);
    XML_SetCharacterDataHandler(parser, on_text);
    size_t offset = 0;
    while (!state.seen) {
        size_t n = length - offset < chunk ? length - offset : chunk;
        int final = offset + n == length;
        enum XML_Status status = XML_Parse(parser, (const char *)bytes + offset, (int)n, final);
        if (status == XML_STATUS_ERROR && !state.seen) break;
        offset += n;
        if (final) break;
    }
    XML_ParserFree(parser);
    if (!state.seen) return -1;
    return (long long)(state.when.tv_sec - start.tv_sec) * 1000000000LL + (state.when.tv_nsec - start.tv_nsec);
}
