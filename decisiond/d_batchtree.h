/*
 * d_batchtree.h -- the small RFC 9162 Merkle tree over one commit group's items, for batch
 * receipts (docs/formats.md section 14): its root, which the signer signs once (purpose 5), and
 * each item's inclusion path, which goes into that item's receipt.
 *
 * The tree's leaves are the RFC 9162 leaf hashes of the items, SHA-256(0x00 || item), each item
 * 32 bytes; interior nodes SHA-256(0x01 || left || right); the shape is RFC 9162's (the left
 * subtree holds the largest power of two below the size), which is the same as pairing each
 * level from the left and carrying an odd last node up unchanged. Paths are RFC 9162 inclusion
 * proofs, leaf side first, so sworn_merkle_verify_inclusion (and any RFC 9162 verifier) checks
 * them.
 *
 * All hashes are computed once at build (2n - 1 at most), so every path is a lookup.
 * Thread safety: a tree is used by one thread at a time; no allocation.
 */
#ifndef SWORN_D_BATCHTREE_H
#define SWORN_D_BATCHTREE_H

#include <stddef.h>
#include <stdint.h>

#include "sigscheme.h"

#define D_BATCHTREE_LEVELS 9   /* a tree of 256 items has 9 levels (leaves to root) */
#define D_BATCHTREE_PATH_MAX 8 /* hashes in the longest path of a tree of <= 256 items */

struct d_batchtree {
    uint32_t n;                                                  /* items */
    unsigned levels;                                             /* levels in use, leaves first */
    uint32_t width[D_BATCHTREE_LEVELS];                          /* nodes on each level */
    uint8_t node[D_BATCHTREE_LEVELS][SWORN_BATCH_ITEMS_MAX][32]; /* node[0] are the leaves */
};

/* Build the tree of items[0..n), 1 <= n <= SWORN_BATCH_ITEMS_MAX. Returns 0, or -1 (SWORN_ERR_ARG
 * for n out of range). */
int d_batchtree_build(struct d_batchtree *t, const uint8_t (*items)[32], uint32_t n);

/* The root of a built tree. */
void d_batchtree_root(const struct d_batchtree *t, uint8_t out[32]);

/* Item index's inclusion path into out (D_BATCHTREE_PATH_MAX hashes of room), leaf side first.
 * Returns the number of hashes (0 for a tree of one item); index must be below t->n. */
size_t d_batchtree_path(const struct d_batchtree *t, uint32_t index,
                        uint8_t out[D_BATCHTREE_PATH_MAX][32]);

/* The purpose-5 message for a group of n items with root: u32 big-endian n || root. */
void d_batchtree_message(uint32_t n, const uint8_t root[32], uint8_t out[SWORN_BATCH_MSG_LEN]);

#endif
