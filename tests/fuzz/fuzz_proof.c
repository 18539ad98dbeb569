/*
 * fuzz_proof.c -- libFuzzer target for proof.c (the text form of Merkle proofs) and for the
 * merkle.c verifiers that consume parsed proofs.
 *
 * Input layout: the whole input is the proof text. When it parses, the text must format back to
 * exactly the same bytes (the text form is canonical), and the parsed hashes are also fed to both
 * verifiers: the first 16 input bytes, if there are that many, are read as two big-endian u64s,
 * used as (index, size) for inclusion and (size1, size2) for consistency, against fixed roots.
 * A valid text starts with base64 characters, so those u64s are always huge; the verifiers are run
 * a second time with just their low bytes as sizes, to reach the small-tree paths too.
 * The verifiers must return without crashing; whether they accept is not checked (with fixed
 * roots they practically never do). Deterministic: no clocks, no randomness, and the static
 * buffers carry nothing from one input to the next.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "merkle.h"
#include "proof.h"
#include "fuzz.h"

/* Big-endian u64 from 8 bytes, so seeds read the same on every host. */
static uint64_t get_u64be(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* Run both verifiers on (a, b); they must return, and the proof lengths must stay in bounds. */
static void run_verifiers(uint64_t a, uint64_t b, const uint8_t *leaf, const uint8_t *root1,
                          const uint8_t *root2, const uint8_t *hashes, size_t count)
{
    (void)sworn_merkle_verify_inclusion(a, b, leaf, hashes, count, root1);
    (void)sworn_merkle_verify_consistency(a, b, root1, root2, hashes, count);
    /* With the leaf as the root the one-leaf tree accepts, and equal roots pass a == b. */
    (void)sworn_merkle_verify_inclusion(a, b, leaf, hashes, count, leaf);
    (void)sworn_merkle_verify_consistency(a, b, root1, root1, hashes, count);
    if (sworn_merkle_inclusion_proof_len(a, b) > SWORN_MERKLE_MAX_PROOF ||
        sworn_merkle_consistency_proof_len(a, b) > SWORN_MERKLE_MAX_PROOF)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t hashes[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    static char text[SWORN_PROOF_TEXT_LEN(SWORN_MERKLE_MAX_PROOF) + 1];
    uint8_t leaf[SWORN_HASH_LEN], root1[SWORN_HASH_LEN], root2[SWORN_HASH_LEN];
    uint64_t a = 0, b = 0;
    size_t count = 0;
    long len;

    if (sworn_proof_parse((const char *)data, size, hashes, SWORN_MERKLE_MAX_PROOF, &count) != 0)
        return 0;
    if (count > SWORN_MERKLE_MAX_PROOF)
        abort();
    len = sworn_proof_format(hashes, count, text, sizeof(text));
    if (len < 0 || (size_t)len != size || (size > 0 && memcmp(text, data, size) != 0))
        abort();

    if (size >= 16) {
        a = get_u64be(data);
        b = get_u64be(data + 8);
    }
    memset(leaf, 0x11, sizeof(leaf));
    memset(root1, 0x22, sizeof(root1));
    memset(root2, 0x33, sizeof(root2));
    run_verifiers(a, b, leaf, root1, root2, hashes, count);
    run_verifiers(a & 0xff, b & 0xff, leaf, root1, root2, hashes, count);
    return 0;
}
