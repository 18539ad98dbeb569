/*
 * proof.h -- the text form of Merkle proofs, as `sworn-log prove-*` prints them and
 * `sworn-log verify-*` reads them.
 *
 * Format: one hash per line, each the standard padded base64 (44 characters) of a 32-byte hash,
 * each line ending in '\n'; no other bytes, no blank lines. An empty proof is the empty text. At
 * most SWORN_MERKLE_MAX_PROOF lines.
 *
 * No allocation; outputs go into caller buffers. Thread-safe.
 */
#ifndef SWORN_PROOF_H
#define SWORN_PROOF_H

#include <stddef.h>
#include <stdint.h>

#include "encoding.h"
#include "merkle.h"

/* Characters in the text form of a proof of n hashes. */
#define SWORN_PROOF_TEXT_LEN(n) ((n) * (SWORN_BASE64_LEN(SWORN_HASH_LEN) + 1))

/*
 * Parse the text form. out holds max_count hashes (max_count * SWORN_HASH_LEN bytes).
 * OUT: *count. Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT for bad text,
 * SWORN_ERR_RANGE for more than max_count or SWORN_MERKLE_MAX_PROOF lines); nothing is promised
 * about out after an error.
 */
int sworn_proof_parse(const char *text, size_t text_len, uint8_t *out, size_t max_count,
                      size_t *count);

/*
 * Write the text form of count (at most SWORN_MERKLE_MAX_PROOF) hashes into out (capacity cap,
 * NUL-terminated).
 * Returns the text length, or -1 (SWORN_ERR_RANGE) when count is too big or cap too small.
 */
long sworn_proof_format(const uint8_t *hashes, size_t count, char *out, size_t cap);

#endif
