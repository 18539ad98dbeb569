/*
 * fuzz_witness_body.c -- libFuzzer target for the witness's add-checkpoint body parser
 * (witness/w_body.h), and for the note and checkpoint parsers that the witness runs next on
 * what it returns.
 *
 * Input layout: the whole input is the request body. When it parses:
 *   - at most SWORN_WITNESS_PROOF_MAX hashes, none after "old 0", a non-empty note that lies
 *     inside the input and runs to its end;
 *   - the body is canonical: writing "old <size>\n", the hashes in base64 and "\n" before the
 *     note gives back exactly the input;
 *   - the note is fed to sworn_note_parse and, when it parses, its text to
 *     sworn_checkpoint_parse (they must return, accepting or not).
 * Deterministic: no clocks, no randomness; the static buffers carry nothing between inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "encoding.h"
#include "fuzz.h"
#include "note.h"
#include "w_body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sworn_witness_body b;
    static struct sworn_note note;
    static char again[32 + SWORN_WITNESS_PROOF_MAX * 45];
    struct sworn_checkpoint cp;
    const char *body = (const char *)data;
    size_t at;
    int n;

    if (sworn_witness_body_parse(body, size, &b) != 0)
        return 0;
    if (b.proof_count > SWORN_WITNESS_PROOF_MAX || (b.old_size == 0 && b.proof_count != 0) ||
        b.note_len == 0 || b.note < body || b.note + b.note_len != body + size)
        abort();
    n = snprintf(again, sizeof(again), "old %llu\n", (unsigned long long)b.old_size);
    if (n < 0)
        abort();
    at = (size_t)n;
    for (size_t i = 0; i < b.proof_count; i++) {
        long m = sworn_base64_encode(b.proof + i * SWORN_HASH_LEN, SWORN_HASH_LEN, again + at,
                                     sizeof(again) - at);
        if (m != 44)
            abort();
        at += 44;
        again[at++] = '\n';
    }
    again[at++] = '\n';
    if (at != (size_t)(b.note - body) || memcmp(again, body, at) != 0)
        abort();
    if (b.note_len <= SWORN_NOTE_MAX_LEN && sworn_note_parse(b.note, b.note_len, &note) == 0)
        (void)sworn_checkpoint_parse(note.text, note.text_len, &cp);
    return 0;
}
