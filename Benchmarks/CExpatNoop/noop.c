#include "CExpatNoop.h"
#include <expat.h>

static void XMLCALL on_start(void *data, const XML_Char *name, const XML_Char **atts) {
    (void)name; (void)atts;
    ++*(long *)data;
}
static void XMLCALL on_end(void *data, const XML_Char *name) { (void)data; (void)name; }
static void XMLCALL on_text(void *data, const XML_Char *s, int len) { (void)data; (void)s; (void)len; }

long cexpat_noop_parse(const unsigned char *bytes, size_t length, size_t chunk, int namespaces) {
    XML_Parser parser = namespaces ? XML_ParserCreateNS(NULL, '\x01') : XML_ParserCreate(NULL);
    if (!parser) return -1;
    if (namespaces) XML_SetReturnNSTriplet(parser, 1);
    long elements = 0;
    XML_SetUserData(parser, &elements);
    XML_SetElementHandler(parser, on_start, on_end);
    XML_SetCharacterDataHandler(parser, on_text);
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
