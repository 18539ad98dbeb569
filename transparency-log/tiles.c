/*
 * tiles.c -- tlog-tiles paths, hash tiles and entry bundles (layout in tiles.h).
 */
#include "tiles.h"

#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "encoding.h"
#include "err.h"

/* Append the grouped form of n ("x001/x234/067") to out at *pos. Returns 0 or -1. */
static int put_grouped_index(uint64_t n, char *out, size_t cap, size_t *pos)
{
    unsigned groups[7];
    int count = 0;

    do {
        groups[count++] = (unsigned)(n % 1000);
        n /= 1000;
    } while (n > 0);
    for (int i = count - 1; i >= 0; i--) {
        int w = snprintf(out + *pos, cap - *pos, i > 0 ? "x%03u/" : "%03u", groups[i]);
        if (w < 0 || (size_t)w >= cap - *pos)
            return sworn_err_set(SWORN_ERR_RANGE, "tile path longer than %zu bytes", cap);
        *pos += (size_t)w;
    }
    return 0;
}

long sworn_tile_path(const struct sworn_tile_id *id, char *out, size_t cap)
{
    size_t pos = 0;
    int w;

    if (id->width < 1 || id->width > SWORN_TILE_WIDTH ||
        (id->level != SWORN_TILE_LEVEL_ENTRIES &&
         (id->level < 0 || id->level > SWORN_TILE_MAX_LEVEL)))
        return sworn_err_set(SWORN_ERR_ARG, "tile id out of range (level %d, width %u)", id->level,
                             id->width);
    if (id->level == SWORN_TILE_LEVEL_ENTRIES)
        w = snprintf(out, cap, "tile/entries/");
    else
        w = snprintf(out, cap, "tile/%d/", id->level);
    if (w < 0 || (size_t)w >= cap)
        return sworn_err_set(SWORN_ERR_RANGE, "tile path longer than %zu bytes", cap);
    pos = (size_t)w;
    if (put_grouped_index(id->index, out, cap, &pos) < 0)
        return -1;
    if (id->width < SWORN_TILE_WIDTH) {
        w = snprintf(out + pos, cap - pos, ".p/%u", id->width);
        if (w < 0 || (size_t)w >= cap - pos)
            return sworn_err_set(SWORN_ERR_RANGE, "tile path longer than %zu bytes", cap);
        pos += (size_t)w;
    }
    return (long)pos;
}

/* Read exactly three decimal digits from b into *v. */
static int get_three_digits(struct sworn_buf *b, unsigned *v)
{
    const uint8_t *d;

    if (sworn_buf_get_ptr(b, 3, &d) < 0)
        return -1;
    for (int i = 0; i < 3; i++)
        if (d[i] < '0' || d[i] > '9')
            return sworn_err_set(SWORN_ERR_FORMAT, "tile path: index group is not three digits");
    *v = (unsigned)(d[0] - '0') * 100 + (unsigned)(d[1] - '0') * 10 + (unsigned)(d[2] - '0');
    return 0;
}

/* Does the reader continue with the given literal? Consumes it when it does. */
static int take_literal(struct sworn_buf *b, const char *lit)
{
    size_t n = strlen(lit);

    if (sworn_buf_remaining(b) < n || memcmp(b->p + b->off, lit, n) != 0)
        return 0;
    b->off += n;
    return 1;
}

int sworn_tile_path_parse(const char *path, size_t len, struct sworn_tile_id *id)
{
    struct sworn_buf b = sworn_buf_init(path, len);
    struct sworn_tile_id r = {.width = SWORN_TILE_WIDTH};
    uint64_t index = 0;
    int groups = 0;

    SWORN_ENSURE(take_literal(&b, "tile/"), SWORN_ERR_FORMAT, "tile path: must start with tile/");
    if (take_literal(&b, "entries/")) {
        r.level = SWORN_TILE_LEVEL_ENTRIES;
    } else {
        const char *start = path + b.off;
        const char *slash = memchr(start, '/', sworn_buf_remaining(&b));
        uint64_t level;

        SWORN_ENSURE(slash != NULL, SWORN_ERR_FORMAT, "tile path: no level");
        SWORN_GUARD(sworn_parse_u64(start, (size_t)(slash - start), &level));
        SWORN_ENSURE(level <= SWORN_TILE_MAX_LEVEL, SWORN_ERR_FORMAT, "tile path: level too big");
        r.level = (int)level;
        b.off += (size_t)(slash - start) + 1;
    }
    for (;;) {
        unsigned g = 0;
        int prefixed = take_literal(&b, "x");

        SWORN_GUARD(get_three_digits(&b, &g));
        SWORN_ENSURE(groups < 7, SWORN_ERR_FORMAT, "tile path: index too long");
        SWORN_ENSURE(index <= (UINT64_MAX - g) / 1000, SWORN_ERR_FORMAT,
                     "tile path: index larger than 2^64-1");
        /* Canonical: the first group of a multi-group index is not zero. */
        SWORN_ENSURE(!(prefixed && groups == 0 && g == 0), SWORN_ERR_FORMAT,
                     "tile path: leading zero group");
        index = index * 1000 + g;
        groups++;
        if (!prefixed)
            break;
        SWORN_ENSURE(take_literal(&b, "/"), SWORN_ERR_FORMAT, "tile path: missing / after group");
    }
    r.index = index;
    if (take_literal(&b, ".p/")) {
        uint64_t width;

        SWORN_GUARD(sworn_parse_u64(path + b.off, sworn_buf_remaining(&b), &width));
        SWORN_ENSURE(width >= 1 && width < SWORN_TILE_WIDTH, SWORN_ERR_FORMAT,
                     "tile path: partial width must be 1..255");
        r.width = (unsigned)width;
        b.off = b.len;
    }
    SWORN_ENSURE(sworn_buf_remaining(&b) == 0, SWORN_ERR_FORMAT, "tile path: trailing bytes");
    *id = r;
    return 0;
fail:
    return -1;
}

int sworn_tile_hashes_check(const uint8_t *data, size_t len, unsigned width)
{
    (void)data;
    if (width < 1 || width > SWORN_TILE_WIDTH)
        return sworn_err_set(SWORN_ERR_FORMAT, "hash tile: width %u out of range", width);
    if (len != (size_t)width * SWORN_HASH_LEN)
        return sworn_err_set(SWORN_ERR_FORMAT, "hash tile: %zu bytes, expected %u hashes", len,
                             width);
    return 0;
}

int sworn_tile_bundle_parse(const uint8_t *data, size_t len, unsigned width,
                            struct sworn_tile_entry *out)
{
    struct sworn_buf b = sworn_buf_init(data, len);

    if (width < 1 || width > SWORN_TILE_WIDTH)
        return sworn_err_set(SWORN_ERR_FORMAT, "entry bundle: width %u out of range", width);
    for (unsigned i = 0; i < width; i++) {
        uint16_t n;
        const uint8_t *p;

        if (sworn_buf_get_u16be(&b, &n) < 0 || sworn_buf_get_ptr(&b, n, &p) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "entry bundle: entry %u of %u truncated", i,
                                 width);
        out[i].data = p;
        out[i].len = n;
    }
    if (sworn_buf_remaining(&b) != 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "entry bundle: %zu bytes after entry %u",
                             sworn_buf_remaining(&b), width);
    return 0;
}
