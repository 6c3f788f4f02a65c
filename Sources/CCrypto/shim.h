#ifndef FEEDINGEST_CCRYPTO_SHIM_H
#define FEEDINGEST_CCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian's libssl-dev, the same OpenSSL 3 that libcurl links): the EVP message-digest calls
// (https://www.openssl.org/docs/man3.0/man3/EVP_DigestInit.html) and the error queue that explains their failures
// (https://www.openssl.org/docs/man3.0/man3/ERR_get_error.html).
#include <openssl/evp.h>
#include <openssl/err.h>
#endif
