/*
 * fuzz_v_keyring.c -- libFuzzer target for the verifier's keyring-text parser and time parser
 * (verifier/sv_keyring.c): the input as keyring version text, and each of its lines as an
 * RFC 3339 time. A parsed time must lie between 1970 and 9999.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_keyring.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[SV_WHY];
    size_t pos = 0;

    (void)sv_keyring_parse_text((const char *)data, size, why);
    while (pos < size) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
        uint64_t t;

        if (sv_parse_time((const char *)data + pos, len, &t) == 0 && t > 253402300799ull)
            abort();
        pos += len + 1;
    }
    return 0;
}
