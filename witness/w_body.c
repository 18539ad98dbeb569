/*
 * w_body.c -- the add-checkpoint body parser (contract and layout in w_body.h).
 */
#include "w_body.h"

#include <string.h>

#include "encoding.h"
#include "err.h"

#define OLD_PREFIX "old "
#define HASH_B64_LEN SWORN_BASE64_LEN(SWORN_HASH_LEN) /* 44 */
#define SIZE_DIGITS_MAX 20                            /* UINT64_MAX has 20 digits */

/* The offset of the first '\n' at or after from, or len when there is none. */
static size_t line_end(const char *p, size_t from, size_t len)
{
    const char *nl = from < len ? memchr(p + from, '\n', len - from) : NULL;

    return nl == NULL ? len : (size_t)(nl - p);
}

int sworn_witness_body_parse(const char *body, size_t len, struct sworn_witness_body *out)
{
    size_t prefix = strlen(OLD_PREFIX), at, end;

    memset(out, 0, sizeof(*out));
    if (len < prefix || memcmp(body, OLD_PREFIX, prefix) != 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "body: does not start with \"old \"");
    end = line_end(body, prefix, len);
    if (end == len || end - prefix > SIZE_DIGITS_MAX ||
        sworn_parse_u64(body + prefix, end - prefix, &out->old_size) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "body: the old size is not a canonical decimal");
    at = end + 1;
    /* Proof lines up to the first empty line. */
    for (;;) {
        size_t got;

        if (at >= len)
            return sworn_err_set(SWORN_ERR_FORMAT, "body: no empty line before the checkpoint");
        if (body[at] == '\n')
            break;
        end = line_end(body, at, len);
        if (end == len)
            return sworn_err_set(SWORN_ERR_FORMAT, "body: a proof line without its newline");
        if (out->proof_count == SWORN_WITNESS_PROOF_MAX)
            return sworn_err_set(SWORN_ERR_FORMAT, "body: more than %d proof lines",
                                 SWORN_WITNESS_PROOF_MAX);
        if (end - at != HASH_B64_LEN ||
            sworn_base64_decode(body + at, HASH_B64_LEN,
                                out->proof + out->proof_count * SWORN_HASH_LEN, SWORN_HASH_LEN,
                                &got) < 0 ||
            got != SWORN_HASH_LEN)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "body: proof line %zu is not the base64 of a 32-byte hash",
                                 out->proof_count + 1);
        out->proof_count++;
        at = end + 1;
    }
    at++; /* the empty line */
    if (out->old_size == 0 && out->proof_count != 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "body: proof lines after \"old 0\"");
    if (at >= len)
        return sworn_err_set(SWORN_ERR_FORMAT, "body: no checkpoint after the empty line");
    out->note = body + at;
    out->note_len = len - at;
    return 0;
}
