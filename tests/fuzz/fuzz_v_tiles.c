/*
 * fuzz_v_tiles.c -- libFuzzer target for the verifier's entry-bundle parser and entry check
 * (verifier/sv_tiles.c, sv_entry.c): the first byte + 1 is the bundle width, the rest a bundle;
 * every entry of a bundle that parses goes through sv_entry_check. A parsed bundle's entries
 * must lie inside the input, end to end, covering it exactly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_entry.h"
#include "sv_tiles.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sv_bundle b;
    char why[SV_WHY], code[32];
    const uint8_t *p;
    unsigned w;

    if (size < 1)
        return 0;
    w = (unsigned)data[0] + 1;
    if (sv_bundle_parse(data + 1, size - 1, w, &b, why) != 0)
        return 0;
    if (b.count != w)
        abort();
    p = data + 1;
    for (unsigned i = 0; i < w; i++) {
        struct sv_entry_info info;

        if (b.data[i] != p + 2 || (size_t)(p[0] << 8 | p[1]) != b.len[i])
            abort();
        p = b.data[i] + b.len[i];
        (void)sv_entry_check(b.data[i], b.len[i], &info, code, why);
    }
    if (p != data + size)
        abort();
    return 0;
}
