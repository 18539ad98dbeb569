/*
 * checkpoint.h -- the C2SP tlog-checkpoint body (https://c2sp.org/tlog-checkpoint): the text that a
 * signed note carries for a log.
 *
 * Layout, every line ending in '\n':
 *     <origin>               non-empty, at most SWORN_CHECKPOINT_ORIGIN_MAX bytes, printable
 *                            UTF-8 with no control bytes
 *     <tree size>            canonical decimal (no sign, no leading zero except "0")
 *     <root hash>            standard padded base64 of the 32-byte RFC 9162 root
 *     [<extension line>]...  optional, each non-empty; kept as opaque bytes
 *
 * No allocation: a parsed checkpoint points into the caller's text for its extension lines.
 * Thread-safe.
 */
#ifndef SWORN_CHECKPOINT_H
#define SWORN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "merkle.h"

#define SWORN_CHECKPOINT_ORIGIN_MAX 255
/* The longest body this code writes (origin, size, root; no extensions). */
#define SWORN_CHECKPOINT_BODY_MAX (SWORN_CHECKPOINT_ORIGIN_MAX + 1 + 20 + 1 + 44 + 1)

struct sworn_checkpoint {
    char origin[SWORN_CHECKPOINT_ORIGIN_MAX + 1]; /* NUL-terminated */
    uint64_t size;
    uint8_t root[SWORN_HASH_LEN];
    const char *extensions; /* the extension lines, each with its '\n'; NULL when none */
    size_t extensions_len;
};

/*
 * Parse a checkpoint body (the text of a signed note, len bytes).
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT, SWORN_ERR_RANGE).
 */
int sworn_checkpoint_parse(const char *text, size_t len, struct sworn_checkpoint *out);

/*
 * Write the body for (origin, size, root), without extension lines, into out (capacity cap,
 * NUL-terminated). Returns its length, or -1 with sworn_err set (bad origin, cap too small).
 */
long sworn_checkpoint_format(const char *origin, uint64_t size, const uint8_t root[SWORN_HASH_LEN],
                             char *out, size_t cap);

#endif
