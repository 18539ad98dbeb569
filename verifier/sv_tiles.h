/*
 * sv_tiles.h -- reading a C2SP tlog-tiles folder (docs/formats.md section 7) for the verifier:
 * tile paths, bounded file reads, entry bundles and sworn's receipt bundles.
 *
 * Paths: tile/<L>/<N>[.p/<W>], tile/entries/<N>[.p/<W>], sworn/receipts/<N>[.p/<W>], with <N>
 * in groups of three digits, all but the last prefixed with 'x'. An entry bundle of width W is
 * exactly W entries of (u16 big-endian length || bytes), nothing after the last. A receipt
 * bundle has the same shape and one (possibly empty) receipt per entry. Thread-safe.
 */
#ifndef SV_TILES_H
#define SV_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "sv_util.h"

#define SV_TILE_WIDTH 256
#define SV_BUNDLE_MAX ((size_t)SV_TILE_WIDTH * (2 + 65535))

/* Write "<prefix>/<N>[.p/<W>]" (W = 256 means full) into out. 0, or -1 when out is too small. */
int sv_tile_path(const char *prefix, uint64_t n, unsigned w, char *out, size_t cap);

/* One parsed bundle: offsets into the caller's buffer. */
struct sv_bundle {
    unsigned count;
    const uint8_t *data[SV_TILE_WIDTH];
    size_t len[SV_TILE_WIDTH];
};

/*
 * Parse a bundle of exactly want entries (1..256). Returns 0; -1 with why when it holds fewer
 * entries; -2 with why when bytes follow the last entry (more entries than its width); -3 with
 * why when an entry's length runs past the end (a damaged length).
 */
int sv_bundle_parse(const uint8_t *buf, size_t len, unsigned want, struct sv_bundle *out,
                    char *why);

#endif
