/*
 * sv_tiles.c -- see sv_tiles.h.
 */
#include "sv_tiles.h"

#include <stdio.h>
#include <string.h>

int sv_tile_path(const char *prefix, uint64_t n, unsigned w, char *out, size_t cap)
{
    char digits[32], body[64];
    size_t nd, o = 0;
    int r;

    snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
    nd = strlen(digits);
    /* Left-pad to a multiple of three, then emit groups. */
    {
        char padded[40];
        size_t pad = (3 - nd % 3) % 3;

        memset(padded, '0', pad);
        memcpy(padded + pad, digits, nd + 1);
        nd += pad;
        for (size_t g = 0; g < nd; g += 3) {
            if (g + 3 < nd)
                body[o++] = 'x';
            memcpy(body + o, padded + g, 3);
            o += 3;
            if (g + 3 < nd)
                body[o++] = '/';
        }
        body[o] = '\0';
    }
    if (w >= SV_TILE_WIDTH)
        r = snprintf(out, cap, "%s/%s", prefix, body);
    else
        r = snprintf(out, cap, "%s/%s.p/%u", prefix, body, w);
    return r < 0 || (size_t)r >= cap ? -1 : 0;
}

int sv_bundle_parse(const uint8_t *buf, size_t len, unsigned want, struct sv_bundle *out, char *why)
{
    size_t pos = 0;

    out->count = 0;
    if (want == 0 || want > SV_TILE_WIDTH)
        return sv_fail(why, "bundle width %u out of range", want);
    while (out->count < want) {
        size_t l;

        if (len - pos < 2)
            return sv_fail(why, "%u entries, %u expected", out->count, want);
        l = (size_t)buf[pos] << 8 | buf[pos + 1];
        pos += 2;
        if (len - pos < l)
            return -2 + sv_fail(why, "entry %u: its length %zu runs past the end", out->count, l);
        out->data[out->count] = buf + pos;
        out->len[out->count] = l;
        out->count++;
        pos += l;
    }
    if (pos != len)
        return -1 + sv_fail(why, "%zu bytes after the %u entries expected (an entry too many?)",
                            len - pos, want);
    return 0;
}
