/*
 * sv_merkle.c -- see sv_merkle.h.
 */
#include "sv_merkle.h"

#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

void sv_leaf_hash(const uint8_t *entry, size_t len, uint8_t out[SV_HASH])
{
    /* One-shot SHA-256 over 0x00 || entry: entries are at most 65535 bytes, so a stack buffer
     * holds them, and the one-shot call is the fastest OpenSSL path. */
    uint8_t buf[1 + 65535];

    if (len > 65535) {
        EVP_MD_CTX *c = EVP_MD_CTX_new();
        uint8_t z = 0;

        EVP_DigestInit_ex(c, EVP_sha256(), NULL);
        EVP_DigestUpdate(c, &z, 1);
        EVP_DigestUpdate(c, entry, len);
        EVP_DigestFinal_ex(c, out, NULL);
        EVP_MD_CTX_free(c);
        return;
    }
    buf[0] = 0;
    memcpy(buf + 1, entry, len);
    SHA256(buf, len + 1, out);
}

void sv_node_hash(const uint8_t left[SV_HASH], const uint8_t right[SV_HASH], uint8_t out[SV_HASH])
{
    uint8_t buf[1 + 2 * SV_HASH];

    buf[0] = 1;
    memcpy(buf + 1, left, SV_HASH);
    memcpy(buf + 1 + SV_HASH, right, SV_HASH);
    SHA256(buf, sizeof(buf), out);
}

void sv_range_init(struct sv_range *r)
{
    memset(r, 0, sizeof(*r));
}

int sv_range_push(struct sv_range *r, const uint8_t leaf[SV_HASH])
{
    uint8_t cur[SV_HASH];
    uint8_t h = 0;

    if (r->size == UINT64_MAX)
        return -1;
    memcpy(cur, leaf, SV_HASH);
    /* Merge equal-height neighbours: the subtree sizes follow the bits of size. */
    while (r->n > 0 && r->heights[r->n - 1] == h) {
        sv_node_hash(r->roots[r->n - 1], cur, cur);
        r->n--;
        h++;
    }
    memcpy(r->roots[r->n], cur, SV_HASH);
    r->heights[r->n] = h;
    r->n++;
    r->size++;
    return 0;
}

void sv_range_root(const struct sv_range *r, uint8_t out[SV_HASH])
{
    uint8_t cur[SV_HASH];

    if (r->n == 0) {
        sv_sha256("", 0, out);
        return;
    }
    /* MTH splits at the largest power of two below n: fold the subtrees from the right. */
    memcpy(cur, r->roots[r->n - 1], SV_HASH);
    for (unsigned i = r->n - 1; i-- > 0;)
        sv_node_hash(r->roots[i], cur, cur);
    memcpy(out, cur, SV_HASH);
}

static uint64_t split_point(uint64_t n)
{
    uint64_t k = 1;

    while (k < n - k)
        k <<= 1;
    return k;
}

void sv_mth(const uint8_t (*leaves)[SV_HASH], uint64_t n, uint8_t out[SV_HASH])
{
    uint8_t l[SV_HASH], rr[SV_HASH];
    uint64_t k;

    if (n == 0) {
        sv_sha256("", 0, out);
        return;
    }
    if (n == 1) {
        memcpy(out, leaves[0], SV_HASH);
        return;
    }
    k = split_point(n);
    sv_mth(leaves, k, l);
    sv_mth(leaves + k, n - k, rr);
    sv_node_hash(l, rr, out);
}

/* Bits needed for x (0 for 0). */
static unsigned bit_len(uint64_t x)
{
    unsigned n = 0;

    while (x != 0) {
        n++;
        x >>= 1;
    }
    return n;
}

static unsigned popcount64(uint64_t x)
{
    unsigned n = 0;

    while (x != 0) {
        x &= x - 1;
        n++;
    }
    return n;
}

static unsigned ctz64(uint64_t x)
{
    unsigned n = 0;

    while ((x & 1) == 0 && n < 64) {
        x >>= 1;
        n++;
    }
    return n;
}

int sv_inclusion_root(uint64_t index, uint64_t size, const uint8_t leaf[SV_HASH],
                      const uint8_t (*proof)[SV_HASH], size_t n, uint8_t out[SV_HASH], char *why)
{
    uint64_t fn = index, sn = size - 1;
    uint8_t r[SV_HASH];
    size_t want;

    if (index >= size)
        return sv_fail(why, "index %llu is not below the tree size %llu", (unsigned long long)index,
                       (unsigned long long)size);
    /* The proof length is fixed by (index, size): inner nodes plus the border ones. */
    {
        unsigned inner = bit_len(index ^ (size - 1));
        unsigned border = popcount64(index >> inner);

        want = inner + border;
    }
    if (n != want)
        return sv_fail(why, "inclusion proof has %zu hashes, %zu expected", n, want);
    memcpy(r, leaf, SV_HASH);
    for (size_t i = 0; i < n; i++) {
        if (sn == 0)
            return sv_fail(why, "inclusion proof too long");
        if ((fn & 1) == 1 || fn == sn) {
            sv_node_hash(proof[i], r, r);
            if ((fn & 1) == 0)
                while ((fn & 1) == 0 && fn != 0) {
                    fn >>= 1;
                    sn >>= 1;
                }
        } else {
            sv_node_hash(r, proof[i], r);
        }
        fn >>= 1;
        sn >>= 1;
    }
    if (sn != 0)
        return sv_fail(why, "inclusion proof too short");
    memcpy(out, r, SV_HASH);
    return 0;
}

int sv_verify_inclusion(uint64_t index, uint64_t size, const uint8_t leaf[SV_HASH],
                        const uint8_t (*proof)[SV_HASH], size_t n, const uint8_t root[SV_HASH],
                        char *why)
{
    uint8_t r[SV_HASH];

    if (sv_inclusion_root(index, size, leaf, proof, n, r, why) < 0)
        return -1;
    if (memcmp(r, root, SV_HASH) != 0)
        return sv_fail(why, "inclusion proof gives another root");
    return 0;
}

/* The consistency-path walk of RFC 9162 2.1.4.2 from a path whose first hash is the old
 * subtree's root (given or prepended). */
static int consistency_walk(uint64_t size1, uint64_t size2, const uint8_t (*path)[SV_HASH],
                            size_t n, uint8_t fr[SV_HASH], uint8_t sr[SV_HASH], char *why)
{
    uint64_t fn = size1 - 1, sn = size2 - 1;

    if (n == 0)
        return sv_fail(why, "consistency proof is empty");
    while (fn & 1) {
        fn >>= 1;
        sn >>= 1;
    }
    memcpy(fr, path[0], SV_HASH);
    memcpy(sr, path[0], SV_HASH);
    for (size_t i = 1; i < n; i++) {
        if (sn == 0)
            return sv_fail(why, "consistency proof too long");
        if ((fn & 1) == 1 || fn == sn) {
            sv_node_hash(path[i], fr, fr);
            sv_node_hash(path[i], sr, sr);
            if ((fn & 1) == 0)
                while ((fn & 1) == 0 && fn != 0) {
                    fn >>= 1;
                    sn >>= 1;
                }
        } else {
            sv_node_hash(sr, path[i], sr);
        }
        fn >>= 1;
        sn >>= 1;
    }
    if (sn != 0)
        return sv_fail(why, "consistency proof too short");
    return 0;
}

/* Expected RFC length of PROOF(size1, D[size2]), 0 < size1 < size2. */
static size_t consistency_len(uint64_t size1, uint64_t size2)
{
    unsigned shift = ctz64(size1);
    uint64_t a = (size1 - 1) >> shift, b = (size2 - 1) >> shift;
    unsigned inner = bit_len(a ^ b);
    unsigned border = popcount64(a >> inner);
    size_t n = inner + border;

    /* size1 a power of two: the old root is not in the path (it is the given root1). */
    return (size1 & (size1 - 1)) == 0 ? n : n + 1;
}

int sv_verify_consistency(uint64_t size1, uint64_t size2, const uint8_t root1[SV_HASH],
                          const uint8_t root2[SV_HASH], const uint8_t (*proof)[SV_HASH], size_t n,
                          char *why)
{
    uint8_t path[SV_PROOF_MAX + 1][SV_HASH], fr[SV_HASH], sr[SV_HASH];
    size_t m = 0;

    if (size1 == 0)
        return sv_fail(why, "consistency from the empty tree is not a proof");
    if (size1 > size2)
        return sv_fail(why, "old size %llu is above new size %llu", (unsigned long long)size1,
                       (unsigned long long)size2);
    if (n > SV_PROOF_MAX)
        return sv_fail(why, "proof longer than %d hashes", SV_PROOF_MAX);
    if (size1 == size2) {
        if (n != 0)
            return sv_fail(why, "equal sizes need an empty proof");
        if (memcmp(root1, root2, SV_HASH) != 0)
            return sv_fail(why, "equal sizes with different roots");
        return 0;
    }
    if (n != consistency_len(size1, size2))
        return sv_fail(why, "consistency proof has %zu hashes, %zu expected", n,
                       consistency_len(size1, size2));
    if ((size1 & (size1 - 1)) == 0)
        memcpy(path[m++], root1, SV_HASH);
    for (size_t i = 0; i < n; i++)
        memcpy(path[m++], proof[i], SV_HASH);
    if (consistency_walk(size1, size2, (const uint8_t(*)[SV_HASH])path, m, fr, sr, why) != 0)
        return -1;
    if (memcmp(fr, root1, SV_HASH) != 0)
        return sv_fail(why, "consistency proof gives another old root");
    if (memcmp(sr, root2, SV_HASH) != 0)
        return sv_fail(why, "consistency proof gives another new root");
    return 0;
}

int sv_consistency_roots(uint64_t size1, uint64_t size2, const uint8_t (*proof)[SV_HASH], size_t n,
                         uint8_t old_root[SV_HASH], uint8_t new_root[SV_HASH], char *why)
{
    size_t want;

    if (size1 == 0 || size1 >= size2)
        return sv_fail(why, "fork path needs 0 < size1 < size2");
    want = consistency_len(size1, size2);
    if ((size1 & (size1 - 1)) == 0)
        want++;
    if (n != want || n > SV_PROOF_MAX)
        return sv_fail(why, "fork path has %zu hashes, %zu expected", n, want);
    return consistency_walk(size1, size2, proof, n, old_root, new_root, why);
}

/* RFC 9162 SUBPROOF(m, D[lo:hi], b), appended to out. */
static void subproof(const uint8_t (*leaves)[SV_HASH], uint64_t m, uint64_t lo, uint64_t hi, int b,
                     uint8_t (*out)[SV_HASH], size_t *k)
{
    uint64_t n = hi - lo;

    if (m == n) {
        if (!b && *k < SV_PROOF_MAX)
            sv_mth(leaves + lo, n, out[(*k)++]);
        return;
    }
    {
        uint64_t s = split_point(n);
        uint8_t h[SV_HASH];

        if (m <= s) {
            subproof(leaves, m, lo, lo + s, b, out, k);
            sv_mth(leaves + lo + s, n - s, h);
        } else {
            subproof(leaves, m - s, lo + s, hi, 0, out, k);
            sv_mth(leaves + lo, s, h);
        }
        if (*k < SV_PROOF_MAX)
            memcpy(out[(*k)++], h, SV_HASH);
    }
}

size_t sv_consistency_path(const uint8_t (*leaves)[SV_HASH], uint64_t size1, uint64_t size2,
                           uint8_t (*out)[SV_HASH])
{
    size_t k = 0;

    if ((size1 & (size1 - 1)) == 0)
        sv_mth(leaves, size1, out[k++]);
    subproof(leaves, size1, 0, size2, 1, out, &k);
    return k;
}
