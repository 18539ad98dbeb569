/*
 * sv_merkle.h -- RFC 9162 section 2.1 Merkle trees with SHA-256, written for the verifier from
 * docs/formats.md section 2 (no code shared with transparency-log/merkle.c).
 *
 * sv_range is a compact range: the roots of the perfect subtrees that make up the first n
 * leaves (one per set bit of n), so the root of every prefix of a log can be computed while the
 * leaves stream past, in O(log n) memory. Proof checks follow RFC 9162 2.1.3.2 and 2.1.4.2 with
 * the boundary rules of docs/formats.md section 2; each proof's length is checked before any
 * hashing. Thread-safe; no allocation except where a function says so.
 */
#ifndef SV_MERKLE_H
#define SV_MERKLE_H

#include <stddef.h>
#include <stdint.h>

#include "sv_util.h"

#define SV_PROOF_MAX 128
#define SV_RANGE_ROOTS 64 /* one perfect subtree per bit of a 64-bit size */

void sv_leaf_hash(const uint8_t *entry, size_t len, uint8_t out[SV_HASH]);
void sv_node_hash(const uint8_t left[SV_HASH], const uint8_t right[SV_HASH], uint8_t out[SV_HASH]);

struct sv_range {
    uint64_t size;                          /* leaves pushed so far */
    uint8_t roots[SV_RANGE_ROOTS][SV_HASH]; /* roots[i]: the i-th perfect subtree from the left */
    uint8_t heights[SV_RANGE_ROOTS];        /* its height (log2 of its leaves) */
    unsigned n;                             /* how many roots */
};

void sv_range_init(struct sv_range *r);
/* Append one leaf hash. Returns 0, or -1 when the tree would exceed 2^64-1 leaves. */
int sv_range_push(struct sv_range *r, const uint8_t leaf[SV_HASH]);
/* The root of the r->size leaves (H() for none). */
void sv_range_root(const struct sv_range *r, uint8_t out[SV_HASH]);

/* MTH of n leaf hashes held in memory (the empty root for n = 0). */
void sv_mth(const uint8_t (*leaves)[SV_HASH], uint64_t n, uint8_t out[SV_HASH]);

/*
 * Verify an inclusion proof (proof: n hashes). Returns 0 when it proves leaf at index in the
 * tree of size with root, else -1 with why.
 */
int sv_verify_inclusion(uint64_t index, uint64_t size, const uint8_t leaf[SV_HASH],
                        const uint8_t (*proof)[SV_HASH], size_t n, const uint8_t root[SV_HASH],
                        char *why);

/*
 * The root an inclusion proof gives for leaf at index in a tree of size (the proof's length
 * checked first). OUT: out. Returns 0, or -1 with why when the proof has the wrong length.
 */
int sv_inclusion_root(uint64_t index, uint64_t size, const uint8_t leaf[SV_HASH],
                      const uint8_t (*proof)[SV_HASH], size_t n, uint8_t out[SV_HASH], char *why);

/*
 * Verify a consistency proof between (size1, root1) and (size2, root2). 0 or -1 with why.
 */
int sv_verify_consistency(uint64_t size1, uint64_t size2, const uint8_t root1[SV_HASH],
                          const uint8_t root2[SV_HASH], const uint8_t (*proof)[SV_HASH], size_t n,
                          char *why);

/*
 * Recompute, from a consistency path, the two roots it commits to: the root of the first size1
 * leaves (old) and of all size2 leaves (new), 0 < size1 < size2. Unlike RFC 9162 2.1.4.2 the
 * path must start with the root of the first size1 leaves even when size1 is a power of two, so
 * that the old root is computed rather than taken from the claimant (the fork-proof form,
 * docs/verifier.md). Returns 0, or -1 with why when the path has the wrong length.
 */
int sv_consistency_roots(uint64_t size1, uint64_t size2, const uint8_t (*proof)[SV_HASH], size_t n,
                         uint8_t old_root[SV_HASH], uint8_t new_root[SV_HASH], char *why);

/*
 * The fork-proof path between size1 and size2 (0 < size1 < size2 <= n leaves in memory): the
 * RFC 9162 PROOF(size1, D[size2]) with MTH(D[0:size1]) first when size1 is a power of two.
 * Writes at most SV_PROOF_MAX hashes into out and returns how many.
 */
size_t sv_consistency_path(const uint8_t (*leaves)[SV_HASH], uint64_t size1, uint64_t size2,
                           uint8_t (*out)[SV_HASH]);

#endif
