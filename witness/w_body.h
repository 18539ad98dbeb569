/*
 * w_body.h -- the body of a C2SP tlog-witness add-checkpoint request
 * (https://c2sp.org/tlog-witness), parsed strictly and within fixed bounds. The parser only
 * frames the body; the note and the checkpoint in it are parsed and checked by the caller
 * (w_witness.h). It is the fuzz target tests/fuzz/fuzz_witness_body.c.
 *
 * Layout, byte by byte (every line ends in '\n', nothing else separates lines):
 *     "old " <size> "\n"   size: canonical decimal u64 (no sign, no leading zero except "0")
 *     <hash> "\n"          0 .. SWORN_WITNESS_PROOF_MAX lines, each the standard padded base64
 *                          (44 characters) of a 32-byte hash: the RFC 9162 consistency proof
 *                          from the tree of <size> entries to the checkpoint's; none when
 *                          size is 0
 *     "\n"                 one empty line
 *     <signed note>        the rest: a checkpoint as a C2SP signed note, 1 .. the body limit
 *
 * Anything else (a missing or misspelt "old " line, a CR, a hash line of another length or not
 * canonical base64, 64 hash lines or more, proof lines after "old 0", no empty line, nothing
 * after it) is malformed: the witness answers 400.
 *
 * No allocation: the parsed request points into the caller's bytes for the note. Thread-safe.
 */
#ifndef SWORN_W_BODY_H
#define SWORN_W_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "merkle.h"

#define SWORN_WITNESS_PROOF_MAX 63 /* hash lines in a body (C2SP tlog-witness) */

struct sworn_witness_body {
    uint64_t old_size;
    uint8_t proof[SWORN_WITNESS_PROOF_MAX * SWORN_HASH_LEN];
    size_t proof_count;
    const char *note; /* into the body: the signed note, up to the body's end */
    size_t note_len;
};

/*
 * Parse len bytes of body. OUT: *out (undefined after an error).
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT, with a message saying what is wrong).
 */
int sworn_witness_body_parse(const char *body, size_t len, struct sworn_witness_body *out);

#endif
