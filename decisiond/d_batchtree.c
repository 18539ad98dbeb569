/*
 * d_batchtree.c -- a commit group's Merkle tree (d_batchtree.h).
 */
#include "d_batchtree.h"

#include <string.h>

#include "err.h"
#include "merkle.h"

int d_batchtree_build(struct d_batchtree *t, const uint8_t (*items)[32], uint32_t n)
{
    unsigned l = 0;

    if (n < 1 || n > SWORN_BATCH_ITEMS_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "a batch tree has 1..%d items, not %u",
                             SWORN_BATCH_ITEMS_MAX, n);
    t->n = n;
    for (uint32_t i = 0; i < n; i++)
        sworn_merkle_leaf_hash(items[i], 32, t->node[0][i]);
    t->width[0] = n;
    /* Pair each level from the left; an odd last node goes up as it is (RFC 9162's shape). */
    while (t->width[l] > 1) {
        uint32_t w = t->width[l];

        for (uint32_t j = 0; j + 1 < w; j += 2)
            sworn_merkle_node_hash(t->node[l][j], t->node[l][j + 1], t->node[l + 1][j / 2]);
        if (w & 1)
            memcpy(t->node[l + 1][w / 2], t->node[l][w - 1], 32);
        t->width[l + 1] = (w + 1) / 2;
        l++;
    }
    t->levels = l + 1;
    return 0;
}

void d_batchtree_root(const struct d_batchtree *t, uint8_t out[32])
{
    memcpy(out, t->node[t->levels - 1][0], 32);
}

size_t d_batchtree_path(const struct d_batchtree *t, uint32_t index,
                        uint8_t out[D_BATCHTREE_PATH_MAX][32])
{
    size_t k = 0;

    for (unsigned l = 0; l + 1 < t->levels; l++, index >>= 1) {
        uint32_t sib = index ^ 1u;

        /* No sibling: the node is carried up unchanged, and the path skips the level. */
        if (sib < t->width[l])
            memcpy(out[k++], t->node[l][sib], 32);
    }
    return k;
}

void d_batchtree_message(uint32_t n, const uint8_t root[32], uint8_t out[SWORN_BATCH_MSG_LEN])
{
    out[0] = (uint8_t)(n >> 24);
    out[1] = (uint8_t)(n >> 16);
    out[2] = (uint8_t)(n >> 8);
    out[3] = (uint8_t)n;
    memcpy(out + 4, root, 32);
}
