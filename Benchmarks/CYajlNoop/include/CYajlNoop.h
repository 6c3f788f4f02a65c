#ifndef FEEDINGEST_CYAJLNOOP_H
#define FEEDINGEST_CYAJLNOOP_H
#include <stddef.h>

/// Parses `length` bytes with raw yajl in `chunk`-byte pieces, with callbacks that do nothing but count objects: the
/// physical limit the JSON variants are compared with. UTF-8 is checked, as yajl does by default. Returns the number of
/// objects, or -1 on error.
long cyajl_noop_parse(const unsigned char *bytes, size_t length, size_t chunk);

/// Like `cyajl_noop_parse`, but reads the document from the file descriptor `fd` with read(2) in `chunk`-byte pieces
/// into one reused buffer, so memory stays flat (the peak-RSS probe). Returns the number of objects, or -1.
long cyajl_noop_parse_fd(int fd, size_t chunk);

/// Parses like `cyajl_noop_parse` until the first object at depth 3 closes (a JSON Feed's first item), then stops.
/// Returns the CLOCK_MONOTONIC nanoseconds from entry (before the parser is created) to then, or -1 when there is none.
long long cyajl_noop_first_item_ns(const unsigned char *bytes, size_t length, size_t chunk);

#endif
