/*
 * checkpoint.c -- the C2SP tlog-checkpoint body (https://c2sp.org/tlog-checkpoint): parsing and
 * formatting.
 *
 * Byte layout (the text of a signed note; every line ends in '\n'):
 *
 *     origin      1..SWORN_CHECKPOINT_ORIGIN_MAX bytes of valid UTF-8 with no control bytes
 *                 (C0 or DEL); spaces are allowed, since the origin is just a line
 *     tree size   canonical decimal u64: digits only, no sign, no leading zero except "0"
 *     root hash   exactly 44 characters of standard padded base64 holding 32 bytes
 *     extensions  zero or more non-empty lines (valid UTF-8, no control bytes), kept opaque
 *
 * Nothing else may follow. A checkpoint says nothing about who signed it; that is note.c's job.
 * No allocation: the parsed extensions point into the caller's text.
 */
#include "checkpoint.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "encoding.h"
#include "err.h"
#include "utf8.h"

#define ROOT_B64_LEN SWORN_BASE64_LEN(SWORN_HASH_LEN)
#define SIZE_DIGITS_MAX 20 /* "18446744073709551615" */

/* A line of a checkpoint: valid UTF-8 without control bytes (the '\n' is already removed). */
static int check_line(const uint8_t *p, size_t len, const char *what)
{
    return sworn_utf8_check(p, len, 0, what);
}

int sworn_checkpoint_parse(const char *text, size_t len, struct sworn_checkpoint *out)
{
    struct sworn_checkpoint c;
    struct sworn_buf b = sworn_buf_init(text, len);
    const uint8_t *line = NULL, *ext = NULL;
    size_t line_len = 0, root_len = 0, ext_len;

    memset(&c, 0, sizeof(c));
    SWORN_ENSURE(text != NULL && out != NULL, SWORN_ERR_ARG, "checkpoint: NULL text");

    SWORN_ENSURE(sworn_buf_get_line(&b, SWORN_CHECKPOINT_ORIGIN_MAX, &line, &line_len) == 0,
                 SWORN_ERR_FORMAT, "checkpoint: origin line missing or longer than %d bytes",
                 SWORN_CHECKPOINT_ORIGIN_MAX);
    SWORN_ENSURE(line_len > 0, SWORN_ERR_FORMAT, "checkpoint: empty origin");
    SWORN_GUARD(check_line(line, line_len, "origin"));
    memcpy(c.origin, line, line_len);
    c.origin[line_len] = '\0';

    SWORN_ENSURE(sworn_buf_get_line(&b, SIZE_DIGITS_MAX, &line, &line_len) == 0, SWORN_ERR_FORMAT,
                 "checkpoint: tree size line missing or too long");
    if (sworn_parse_u64((const char *)line, line_len, &c.size) < 0) {
        /* Keep the decoder's code: RANGE for overflow, FORMAT for anything else. */
        sworn_err_set(sworn_err_code(), "checkpoint: tree size is not a canonical decimal u64");
        goto fail;
    }

    SWORN_ENSURE(sworn_buf_get_line(&b, ROOT_B64_LEN, &line, &line_len) == 0, SWORN_ERR_FORMAT,
                 "checkpoint: root hash line missing or too long");
    SWORN_ENSURE(line_len == ROOT_B64_LEN &&
                     sworn_base64_decode((const char *)line, line_len, c.root, sizeof(c.root),
                                         &root_len) == 0 &&
                     root_len == SWORN_HASH_LEN,
                 SWORN_ERR_FORMAT, "checkpoint: root hash is not base64 of %d bytes",
                 SWORN_HASH_LEN);

    /* Extension lines: everything left, which must be whole non-empty lines. */
    ext_len = sworn_buf_remaining(&b);
    if (ext_len > 0) {
        SWORN_GUARD(sworn_buf_get_ptr(&b, 0, &ext));
        while (sworn_buf_remaining(&b) > 0) {
            SWORN_ENSURE(sworn_buf_get_line(&b, sworn_buf_remaining(&b), &line, &line_len) == 0,
                         SWORN_ERR_FORMAT, "checkpoint: extension line without a newline");
            SWORN_ENSURE(line_len > 0, SWORN_ERR_FORMAT, "checkpoint: empty extension line");
            SWORN_GUARD(check_line(line, line_len, "extension line"));
        }
        c.extensions = (const char *)ext;
        c.extensions_len = ext_len;
    }
    *out = c;
    return 0;
fail:
    return -1;
}

long sworn_checkpoint_format(const char *origin, uint64_t size, const uint8_t root[SWORN_HASH_LEN],
                             char *out, size_t cap)
{
    char root_b64[ROOT_B64_LEN + 1];
    size_t origin_len;
    int n;

    SWORN_ENSURE(origin != NULL && root != NULL && out != NULL, SWORN_ERR_ARG,
                 "checkpoint: NULL argument");
    origin_len = strnlen(origin, SWORN_CHECKPOINT_ORIGIN_MAX + 1);
    SWORN_ENSURE(origin_len > 0 && origin_len <= SWORN_CHECKPOINT_ORIGIN_MAX, SWORN_ERR_ARG,
                 "checkpoint: origin must be 1..%d bytes", SWORN_CHECKPOINT_ORIGIN_MAX);
    SWORN_GUARD(check_line((const uint8_t *)origin, origin_len, "origin"));
    SWORN_GUARD(sworn_base64_encode(root, SWORN_HASH_LEN, root_b64, sizeof(root_b64)));
    n = snprintf(out, cap, "%s\n%" PRIu64 "\n%s\n", origin, size, root_b64);
    SWORN_ENSURE(n >= 0 && (size_t)n < cap, SWORN_ERR_RANGE,
                 "checkpoint: body does not fit in %zu bytes", cap);
    return n;
fail:
    if (out != NULL && cap > 0)
        out[0] = '\0';
    return -1;
}
