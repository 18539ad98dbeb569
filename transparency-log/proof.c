/*
 * proof.c -- the text form of Merkle proofs; see proof.h.
 *
 * Layout: n lines, n <= SWORN_MERKLE_MAX_PROOF. Line i is the padded standard base64 of proof
 * hash i (exactly SWORN_BASE64_LEN(SWORN_HASH_LEN) = 44 characters, decoding to exactly
 * SWORN_HASH_LEN bytes) followed by one '\n'. Nothing else: no CR, no blank lines, no trailing
 * bytes after the last '\n', no unterminated last line. The empty text is the empty proof.
 *
 * The parser is strict so that each proof has exactly one text form: format(parse(t)) == t for
 * every t that parses, which the fuzz target checks.
 */
#include "proof.h"

#include <limits.h>
#include <string.h>

#include "buf.h"
#include "err.h"

/* Characters of one hash in the text form, without its newline. */
#define HASH_TEXT_LEN SWORN_BASE64_LEN(SWORN_HASH_LEN)

int sworn_proof_parse(const char *text, size_t text_len, uint8_t *out, size_t max_count,
                      size_t *count)
{
    struct sworn_buf b = sworn_buf_init(text, text_len);
    size_t limit = max_count < SWORN_MERKLE_MAX_PROOF ? max_count : SWORN_MERKLE_MAX_PROOF;
    size_t n = 0;

    while (sworn_buf_remaining(&b) > 0) {
        /* One byte more than HASH_TEXT_LEN decodes to, so an unpadded 44-character line (33
         * bytes) is caught by the length check below rather than as a too-small buffer. */
        uint8_t hash[SWORN_BASE64_DECODED_MAX(HASH_TEXT_LEN)];
        const uint8_t *line;
        size_t line_len, hash_len;

        /* Checked before reading the line so that a long text costs at most limit lines. */
        SWORN_ENSURE(n < limit, SWORN_ERR_RANGE, "proof: more than %zu hashes", limit);
        SWORN_GUARD(sworn_buf_get_line(&b, HASH_TEXT_LEN, &line, &line_len));
        SWORN_ENSURE(line_len == HASH_TEXT_LEN, SWORN_ERR_FORMAT,
                     "proof: line %zu has %zu characters, not %d", n + 1, line_len,
                     (int)HASH_TEXT_LEN);
        SWORN_ENSURE(
            sworn_base64_decode((const char *)line, line_len, hash, sizeof(hash), &hash_len) == 0,
            SWORN_ERR_FORMAT, "proof: line %zu is not canonical base64", n + 1);
        SWORN_ENSURE(hash_len == SWORN_HASH_LEN, SWORN_ERR_FORMAT,
                     "proof: line %zu decodes to %zu bytes, not %d", n + 1, hash_len,
                     (int)SWORN_HASH_LEN);
        memcpy(out + n * SWORN_HASH_LEN, hash, SWORN_HASH_LEN);
        n++;
    }
    *count = n;
    return 0;
fail:
    return -1;
}

long sworn_proof_format(const uint8_t *hashes, size_t count, char *out, size_t cap)
{
    const size_t line = HASH_TEXT_LEN + 1;
    size_t total = 0;

    /* Check the whole size first so that nothing is written when it does not fit; the bound on
     * count keeps count * line from overflowing and the result within a long. */
    /* The same bound the parser enforces: never write a proof that could not be read back. */
    SWORN_ENSURE(count <= SWORN_MERKLE_MAX_PROOF, SWORN_ERR_RANGE,
                 "proof: %zu hashes are more than %d", count, SWORN_MERKLE_MAX_PROOF);
    total = count * line;
    SWORN_ENSURE(total < cap, SWORN_ERR_RANGE, "proof: %zu hashes do not fit in %zu bytes", count,
                 cap);
    for (size_t i = 0; i < count; i++) {
        /* The encoder writes a NUL after the hash, which the newline then replaces; total < cap
         * leaves room for it even on the last line. */
        SWORN_GUARD(sworn_base64_encode(hashes + i * SWORN_HASH_LEN, SWORN_HASH_LEN, out + i * line,
                                        cap - i * line));
        out[i * line + HASH_TEXT_LEN] = '\n';
    }
    out[total] = '\0';
    return (long)total;
fail:
    return -1;
}
