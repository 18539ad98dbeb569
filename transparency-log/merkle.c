/*
 * merkle.c -- RFC 9162 (section 2.1) Merkle tree hashing and proof verification; see merkle.h.
 *
 * Byte layout of what is hashed (SHA-256, RFC 9162 2.1.1):
 *   leaf hash  = SHA-256(0x00 || entry bytes)
 *   node hash  = SHA-256(0x01 || left child hash (32 bytes) || right child hash (32 bytes))
 *   empty tree = SHA-256 of no bytes
 * The two prefixes keep a leaf from ever hashing like an interior node (second-preimage defence).
 *
 * Proofs are proof_count hashes of SWORN_HASH_LEN bytes laid end to end. A proof is valid only
 * when it has exactly the length that (index, size) or (size1, size2) calls for: the length is
 * checked before any hash is read, so a verifier never reads past proof_count hashes and never
 * accepts a proof with extra hashes that happen to be ignored.
 *
 * Tree sizes may be anything up to UINT64_MAX. Every loop below either walks the proof (at most
 * 65 hashes, as the length check guarantees) or shifts a 64-bit counter right, so hostile sizes
 * cost at most a few hundred iterations.
 */
/*
 * SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but they are the fastest
 * way to hash 65 bytes and they never allocate, which matters on this hot path (every append and
 * every proof step). Suppress the deprecation warning rather than pay for an EVP_MD_CTX per hash.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "merkle.h"

#include <assert.h>
#include <string.h>

#include <openssl/sha.h>

#include "err.h"

/* RFC 9162 2.1.1 domain separation prefixes. */
#define LEAF_PREFIX 0x00
#define NODE_PREFIX 0x01

/* The most hashes a tree of up to 2^64 - 1 leaves can hold on its compact-range stack, plus one
 * for the leaf being pushed before the merge. */
#define ROOT_STACK_DEPTH 65

void sworn_merkle_leaf_hash(const uint8_t *entry, size_t len, uint8_t out[SWORN_HASH_LEN])
{
    static const uint8_t prefix = LEAF_PREFIX;
    SHA256_CTX ctx;

    SHA256_Init(&ctx);
    SHA256_Update(&ctx, &prefix, 1);
    if (len > 0)
        SHA256_Update(&ctx, entry, len);
    SHA256_Final(out, &ctx);
}

void sworn_merkle_node_hash(const uint8_t left[SWORN_HASH_LEN], const uint8_t right[SWORN_HASH_LEN],
                            uint8_t out[SWORN_HASH_LEN])
{
    static const uint8_t prefix = NODE_PREFIX;
    SHA256_CTX ctx;

    /* Both children are read into the context before out is written, so out may alias them. */
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, &prefix, 1);
    SHA256_Update(&ctx, left, SWORN_HASH_LEN);
    SHA256_Update(&ctx, right, SWORN_HASH_LEN);
    SHA256_Final(out, &ctx);
}

void sworn_merkle_empty_root(uint8_t out[SWORN_HASH_LEN])
{
    SHA256_CTX ctx;

    SHA256_Init(&ctx);
    SHA256_Final(out, &ctx);
}

/*
 * MTH without recursion: feed the leaves left to right into a stack of perfect subtrees (a
 * "compact range"). After leaf i is pushed, the stack holds one subtree per set bit of i + 1, the
 * largest at the bottom; pushing merges the top two while they are the same size, which happens
 * ctz(i + 1) times. At the end, folding the stack from the top down, each step hashing
 * (lower || accumulated), gives exactly RFC 9162's split at the largest power of two below n.
 */
void sworn_merkle_root_of_leaves(const uint8_t *leaves, uint64_t count, uint8_t out[SWORN_HASH_LEN])
{
    uint8_t stack[ROOT_STACK_DEPTH][SWORN_HASH_LEN];
    size_t depth = 0;

    if (count == 0) {
        sworn_merkle_empty_root(out);
        return;
    }
    for (uint64_t i = 0; i < count; i++) {
        memcpy(stack[depth++], leaves + (size_t)i * SWORN_HASH_LEN, SWORN_HASH_LEN);
        for (uint64_t n = i + 1; (n & 1) == 0; n >>= 1) {
            sworn_merkle_node_hash(stack[depth - 2], stack[depth - 1], stack[depth - 2]);
            depth--;
        }
    }
    while (depth > 1) {
        sworn_merkle_node_hash(stack[depth - 2], stack[depth - 1], stack[depth - 2]);
        depth--;
    }
    memcpy(out, stack[0], SWORN_HASH_LEN);
}

/* The number of significant bits of x (0 for 0). */
static unsigned bit_len(uint64_t x)
{
    unsigned n = 0;

    while (x != 0) {
        n++;
        x >>= 1;
    }
    return n;
}

/* The number of set bits of x. */
static unsigned pop_count(uint64_t x)
{
    unsigned n = 0;

    while (x != 0) {
        x &= x - 1;
        n++;
    }
    return n;
}

/* The number of trailing zero bits of x, which is not 0. */
static unsigned trailing_zeros(uint64_t x)
{
    unsigned n = 0;

    while ((x & 1) == 0) {
        x >>= 1;
        n++;
    }
    return n;
}

/*
 * An inclusion proof for leaf index in a tree whose last leaf is last = size - 1 splits in two
 * (as in transparency-dev/merkle's decompInclProof): `inner` hashes below the level where the
 * paths to index and to last part ways, one per level, and then one "border" hash for every left
 * sibling the path meets above that, i.e. one per set bit of index >> inner.
 */
static void decompose(uint64_t index, uint64_t last, unsigned *inner, unsigned *border)
{
    assert(index <= last);
    *inner = bit_len(index ^ last);
    *border = *inner >= 64 ? 0 : pop_count(index >> *inner);
}

size_t sworn_merkle_inclusion_proof_len(uint64_t index, uint64_t size)
{
    unsigned inner, border;

    if (index >= size)
        return 0;
    decompose(index, size - 1, &inner, &border);
    return (size_t)inner + border;
}

/*
 * A consistency proof from size1 to size2 is the inclusion proof of leaf size1 - 1 in the tree of
 * size2, minus the lowest `shift` levels, which lie inside the largest perfect subtree that ends
 * at size1 (2^shift leaves, shift = ctz(size1)); the root of that subtree comes first instead,
 * unless size1 is itself a power of two, when the verifier already has it as root1.
 * inner > shift whenever size1 < size2: the low `shift` bits of size1 - 1 are all ones, so if
 * size2 - 1 agreed with it above them it could not be larger.
 */
size_t sworn_merkle_consistency_proof_len(uint64_t size1, uint64_t size2)
{
    unsigned inner, border, shift;

    if (size1 == 0 || size1 > size2)
        return 0;
    if (size1 == size2)
        return 0;
    decompose(size1 - 1, size2 - 1, &inner, &border);
    shift = trailing_zeros(size1);
    assert(inner > shift); /* size1 < size2: see the comment above */
    return (size1 == (uint64_t)1 << shift ? 0 : 1) + (size_t)(inner - shift) + border;
}

/* Proof hash number i. */
static const uint8_t *proof_hash(const uint8_t *proof, size_t i)
{
    return proof + i * SWORN_HASH_LEN;
}

int sworn_merkle_verify_inclusion(uint64_t index, uint64_t size, const uint8_t leaf[SWORN_HASH_LEN],
                                  const uint8_t *proof, size_t proof_count,
                                  const uint8_t root[SWORN_HASH_LEN])
{
    uint8_t r[SWORN_HASH_LEN];
    uint64_t fn = index, sn;
    size_t want;

    SWORN_ENSURE(index < size, SWORN_ERR_RANGE,
                 "inclusion: leaf index %llu is not below tree size %llu",
                 (unsigned long long)index, (unsigned long long)size);
    want = sworn_merkle_inclusion_proof_len(index, size);
    SWORN_ENSURE(proof_count == want, SWORN_ERR_RANGE,
                 "inclusion: proof has %zu hashes, leaf %llu of %llu needs %zu", proof_count,
                 (unsigned long long)index, (unsigned long long)size, want);

    /* RFC 9162 2.1.3.2, step by step. fn walks the leaf's position up the tree, sn the last
     * leaf's; where they meet the remaining levels have no right sibling. */
    sn = size - 1;
    memcpy(r, leaf, SWORN_HASH_LEN);
    for (size_t i = 0; i < proof_count; i++) {
        const uint8_t *p = proof_hash(proof, i);

        /* Cannot happen once the length matched; kept because the RFC has it and it is free. */
        SWORN_ENSURE(sn != 0, SWORN_ERR_VERIFY, "inclusion: proof longer than the path");
        if ((fn & 1) == 1 || fn == sn) {
            sworn_merkle_node_hash(p, r, r);
            if ((fn & 1) == 0) {
                while ((fn & 1) == 0 && fn != 0) {
                    fn >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            sworn_merkle_node_hash(r, p, r);
        }
        fn >>= 1;
        sn >>= 1;
    }
    SWORN_ENSURE(sn == 0, SWORN_ERR_VERIFY, "inclusion: proof shorter than the path");
    SWORN_ENSURE(memcmp(r, root, SWORN_HASH_LEN) == 0, SWORN_ERR_VERIFY,
                 "inclusion: recomputed root differs for leaf %llu of %llu",
                 (unsigned long long)index, (unsigned long long)size);
    return 0;
fail:
    return -1;
}

int sworn_merkle_verify_consistency(uint64_t size1, uint64_t size2,
                                    const uint8_t root1[SWORN_HASH_LEN],
                                    const uint8_t root2[SWORN_HASH_LEN], const uint8_t *proof,
                                    size_t proof_count)
{
    uint8_t fr[SWORN_HASH_LEN], sr[SWORN_HASH_LEN];
    uint64_t fn, sn;
    size_t want, i;

    /* The boundary rules of merkle.h come before anything else: an empty old tree proves
     * nothing about its root, so size1 == 0 is refused even though every tree extends it. */
    SWORN_ENSURE(size1 != 0, SWORN_ERR_RANGE, "consistency: size1 is 0");
    SWORN_ENSURE(size1 <= size2, SWORN_ERR_RANGE, "consistency: size1 %llu > size2 %llu",
                 (unsigned long long)size1, (unsigned long long)size2);
    if (size1 == size2) {
        SWORN_ENSURE(proof_count == 0, SWORN_ERR_RANGE,
                     "consistency: equal sizes need an empty proof, got %zu hashes", proof_count);
        SWORN_ENSURE(memcmp(root1, root2, SWORN_HASH_LEN) == 0, SWORN_ERR_VERIFY,
                     "consistency: equal sizes %llu but different roots",
                     (unsigned long long)size1);
        return 0;
    }
    want = sworn_merkle_consistency_proof_len(size1, size2);
    SWORN_ENSURE(proof_count == want, SWORN_ERR_RANGE,
                 "consistency: proof has %zu hashes, %llu -> %llu needs %zu", proof_count,
                 (unsigned long long)size1, (unsigned long long)size2, want);

    /* RFC 9162 2.1.4.2. Step 2 prepends root1 to the path when size1 is a power of two; rather
     * than copy the proof, start from root1 and read the proof from its first hash, or else start
     * from the proof's first hash and read on from the second. */
    fn = size1 - 1;
    sn = size2 - 1;
    while ((fn & 1) == 1) {
        fn >>= 1;
        sn >>= 1;
    }
    if ((size1 & (size1 - 1)) == 0) {
        memcpy(fr, root1, SWORN_HASH_LEN);
        i = 0;
    } else {
        memcpy(fr, proof_hash(proof, 0), SWORN_HASH_LEN);
        i = 1;
    }
    memcpy(sr, fr, SWORN_HASH_LEN);
    for (; i < proof_count; i++) {
        const uint8_t *c = proof_hash(proof, i);

        SWORN_ENSURE(sn != 0, SWORN_ERR_VERIFY, "consistency: proof longer than the path");
        if ((fn & 1) == 1 || fn == sn) {
            sworn_merkle_node_hash(c, fr, fr);
            sworn_merkle_node_hash(c, sr, sr);
            if ((fn & 1) == 0) {
                while ((fn & 1) == 0 && fn != 0) {
                    fn >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            sworn_merkle_node_hash(sr, c, sr);
        }
        fn >>= 1;
        sn >>= 1;
    }
    SWORN_ENSURE(sn == 0, SWORN_ERR_VERIFY, "consistency: proof shorter than the path");
    SWORN_ENSURE(memcmp(fr, root1, SWORN_HASH_LEN) == 0, SWORN_ERR_VERIFY,
                 "consistency: recomputed root of size %llu differs", (unsigned long long)size1);
    SWORN_ENSURE(memcmp(sr, root2, SWORN_HASH_LEN) == 0, SWORN_ERR_VERIFY,
                 "consistency: recomputed root of size %llu differs", (unsigned long long)size2);
    return 0;
fail:
    return -1;
}
