/*
 * tiles.h -- the C2SP tlog-tiles static layout (https://c2sp.org/tlog-tiles): tile paths, hash
 * tiles and entry bundles.
 *
 * Tiles are TILE_HEIGHT = 8 levels of the Merkle tree, so a full tile holds WIDTH = 256 hashes.
 * A level-L tile holds hashes of complete subtrees of 256^L leaves: level 0 holds leaf hashes,
 * level 1 holds the roots of full level-0 tiles, and so on. Tile N of a level covers hashes
 * N*256 .. N*256+255 of that level.
 *
 * Paths (relative to the log's root folder):
 *     tile/<L>/<N>           a full hash tile, L in 0..63 as plain decimal
 *     tile/<L>/<N>.p/<W>     a partial hash tile of W hashes, 1 <= W <= 255
 *     tile/entries/<N>       a full entry bundle (256 entries)
 *     tile/entries/<N>.p/<W> a partial entry bundle of W entries
 * <N> is written in groups of three decimal digits, every group but the last prefixed with 'x':
 * 1234067 is x001/x234/067, 5 is 005.
 *
 * A hash tile is W hashes of 32 bytes, laid end to end, nothing else.
 * An entry bundle is W entries, each a big-endian uint16 length followed by that many bytes,
 * nothing else; so an entry holds at most 65535 bytes.
 *
 * No allocation; parsers point into the caller's bytes. Thread-safe.
 */
#ifndef SWORN_TILES_H
#define SWORN_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "merkle.h"

#define SWORN_TILE_HEIGHT 8
#define SWORN_TILE_WIDTH 256
#define SWORN_TILE_ENTRY_MAX 65535u   /* bytes in one entry: bundles use uint16 lengths */
#define SWORN_TILE_LEVEL_ENTRIES (-1) /* the `level` that names entry bundles */
#define SWORN_TILE_MAX_LEVEL 63
#define SWORN_TILE_PATH_MAX 96 /* "tile/entries/" + 7 groups of "x999/" + ".p/255" + NUL */
/* The largest entry bundle: 256 entries of the largest size. */
#define SWORN_TILE_BUNDLE_MAX (SWORN_TILE_WIDTH * (2 + SWORN_TILE_ENTRY_MAX))

struct sworn_tile_id {
    int level;      /* 0..SWORN_TILE_MAX_LEVEL, or SWORN_TILE_LEVEL_ENTRIES */
    uint64_t index; /* N */
    unsigned width; /* 1..256; 256 means a full tile */
};

/*
 * Write the path of a tile into out (capacity cap, NUL-terminated).
 * Returns the path length, or -1 (SWORN_ERR_ARG for a bad id, SWORN_ERR_RANGE when cap is short).
 */
long sworn_tile_path(const struct sworn_tile_id *id, char *out, size_t cap);

/*
 * Parse a tile path of exactly len bytes in the canonical form above (no leading zeros beyond the
 * three-digit groups, no empty groups, width 1..255 only after ".p/"). OUT: *id.
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT).
 */
int sworn_tile_path_parse(const char *path, size_t len, struct sworn_tile_id *id);

/*
 * Check a hash tile's bytes against the width its path gives: len must be exactly width * 32.
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT).
 */
int sworn_tile_hashes_check(const uint8_t *data, size_t len, unsigned width);

/* One entry of a bundle, pointing into the bundle's bytes. */
struct sworn_tile_entry {
    const uint8_t *data;
    size_t len;
};

/*
 * Parse an entry bundle of len bytes that must hold exactly `width` entries and nothing after
 * them. out holds width entries. Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT: a
 * truncated length or entry, trailing bytes, fewer entries than width).
 */
int sworn_tile_bundle_parse(const uint8_t *data, size_t len, unsigned width,
                            struct sworn_tile_entry *out);

#endif
