#ifndef FEEDINGEST_CUCHARDET_SHIM_H
#define FEEDINGEST_CUCHARDET_SHIM_H
// Debian's libuchardet (libuchardet-dev), the universal charset detector: names the encoding of bytes that declare
// none (uchardet_new, uchardet_handle_data, uchardet_data_end, uchardet_get_charset, uchardet_delete).
#include <uchardet.h>
#endif
