#ifndef FEEDINGEST_CLIBXML2_SHIM_H
#define FEEDINGEST_CLIBXML2_SHIM_H
// libxml2 (Debian's libxml2-dev): its HTML parser only, which SafeHTML uses to read the HTML of feeds the way a
// browser-like parser does (recovering from any tag soup) before cleaning it to an allow-list. Nothing is serialised
// by libxml2 and nothing is fetched: SafeHTML passes HTML_PARSE_NONET and walks the tree itself.
#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU, so encoding.h would include ICU's <unicode/ucnv.h>, whose types clash with the copy
// of ICU inside Foundation (_FoundationICU: "'UErrorCode' has different definitions in different modules"). Nothing
// here uses libxml2's ICU converters (SafeHTML passes UTF-8 only), and the only declarations that change are the two
// ICU converter fields at the end of xmlCharEncodingHandler, a struct we never touch, so ICU is left out.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

// xmlFree is a global function-pointer variable (globals.h), which Swift 6 sees as shared mutable state: one wrapper.
static inline void clibxml2_free(void *pointer) { xmlFree(pointer); }
#endif
