#ifndef FEEDINGEST_CLIBDEFLATE_SHIM_H
#define FEEDINGEST_CLIBDEFLATE_SHIM_H
// Debian's libdeflate (libdeflate-dev): only its CRC-32 is used (libdeflate_crc32, incremental, with PCLMULQDQ where the
// CPU has it), for the gzip trailer check; zlib still inflates.
#include <libdeflate.h>
#endif
