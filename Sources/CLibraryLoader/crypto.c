// libcrypto's functions that feedingest calls (Fetch's SHA-256 body hash), each a stub that loads libcrypto on first
// use (see include/CLibraryLoader.h). Each definition repeats the prototype of <openssl/evp.h> or <openssl/err.h>.
#include <openssl/err.h>
#include <openssl/evp.h>
#include "loader.h"

#define CRYPTO_REAL(name) FEEDINGEST_LAZY(feedingest_libcrypto, name)
#define STUB(type, name, parameters, arguments) FEEDINGEST_STUB type name parameters { return CRYPTO_REAL(name) arguments; }
#define VOID_STUB(name, parameters, arguments) FEEDINGEST_STUB void name parameters { CRYPTO_REAL(name) arguments; }

STUB(const EVP_MD *, EVP_sha256, (void), ())
STUB(EVP_MD_CTX *, EVP_MD_CTX_new, (void), ())
VOID_STUB(EVP_MD_CTX_free, (EVP_MD_CTX *ctx), (ctx))
STUB(int, EVP_MD_CTX_copy_ex, (EVP_MD_CTX *out, const EVP_MD_CTX *in), (out, in))
STUB(int, EVP_DigestInit_ex, (EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl), (ctx, type, impl))
STUB(int, EVP_DigestUpdate, (EVP_MD_CTX *ctx, const void *d, size_t cnt), (ctx, d, cnt))
STUB(int, EVP_DigestFinal_ex, (EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s), (ctx, md, s))

STUB(unsigned long, ERR_get_error, (void), ())
STUB(unsigned long, ERR_peek_last_error, (void), ())
VOID_STUB(ERR_clear_error, (void), ())
VOID_STUB(ERR_error_string_n, (unsigned long e, char *buf, size_t len), (e, buf, len))
STUB(const char *, ERR_reason_error_string, (unsigned long e), (e))
