#ifndef FEEDINGEST_CEXPATNOOP_H
#define FEEDINGEST_CEXPATNOOP_H
#include <stddef.h>

/// Parses `length` bytes with raw libexpat in `chunk`-byte pieces, with handlers that only count:
/// the physical limit every Swift variant is compared with. Returns the number of elements, or -1 on error.
/// `namespaces` selects XML_ParserCreateNS with triplets, as ExpatXML uses.
long cexpat_noop_parse(const unsigned char *bytes, size_t length, size_t chunk, int namespaces);

/// Like `cexpat_noop_parse`, but reads the document from the file descriptor `fd` with read(2) in
/// `chunk`-byte pieces into one reused buffer, so memory stays flat (the peak-RSS probe). Returns the number
/// of elements, or -1 on a parse or read error.
long cexpat_noop_parse_fd(int fd, size_t chunk, int namespaces);

/// Parses like `cexpat_noop_parse` (namespaces on) until the first start tag whose local name is
/// `local_name`, then stops. Returns the CLOCK_MONOTONIC nanoseconds from entry (before the parser is
/// created) to that start tag, or -1 when there is none or on error. Kept apart from the timed no-op run so
/// that run's handlers stay truly no-op.
long long cexpat_noop_first_element_ns(const unsigned char *bytes, size_t length, size_t chunk, const char *local_name);

#endif
