#ifndef FEEDINGEST_CEXPATNOOP_H
#define FEEDINGEST_CEXPATNOOP_H
#include <stddef.h>

/// Parses `length` bytes with raw libexpat in `chunk`-byte pieces, with handlers that only count:
/// the physical limit every Swift variant is compared with. Returns the number of elements, or -1 on error.
/// `namespaces` selects XML_ParserCreateNS with triplets, as ExpatXML uses.
long cexpat_noop_parse(const unsigned char *bytes, size_t length, size_t chunk, int namespaces);

#endif
