/*
 * fuzz_pkcs11uri.c -- libFuzzer target for the RFC 7512 URI parser (signer/pkcs11uri.h). A parsed
 * URI must have NUL-terminated fields of the allowed lengths and must name a key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkcs11uri.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sworn_pkcs11_uri u;

    if (sworn_pkcs11_uri_parse((const char *)data, size, &u) == 0) {
        if (strlen(u.token) > SWORN_PKCS11_LABEL_MAX ||
            strlen(u.object) > SWORN_PKCS11_OBJECT_MAX || u.id_len > SWORN_PKCS11_ID_MAX ||
            (u.object[0] == '\0' && !u.has_id))
            abort();
    }
    return 0;
}
