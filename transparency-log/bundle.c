/*
 * bundle.c -- see bundle.h.
 */
#include "bundle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "merkle.h"
#include "tiles.h"

#define NOTE_CAP (1u << 20)

struct out {
    char *p;
    size_t len, cap;
};

static int put(struct out *o, const void *s, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        size_t nc = (o->len + n + 1) * 2;
        char *np = realloc(o->p, nc);

        SWORN_ENSURE(np != NULL, SWORN_ERR_NOMEM, "bundle: out of memory");
        o->p = np;
        o->cap = nc;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
    return 0;
fail:
    return -1;
}

/* "<tag><base64 of data>\n" */
static int put_b64(struct out *o, const char *tag, const uint8_t *data, size_t n)
{
    size_t cap = (n + 2) / 3 * 4 + 1;
    char *b = malloc(cap);
    long w;

    SWORN_ENSURE(b != NULL, SWORN_ERR_NOMEM, "bundle: out of memory");
    w = n == 0 ? 0 : sworn_base64_encode(data, n, b, cap);
    if (w < 0) {
        free(b);
        return -1;
    }
    if (put(o, tag, strlen(tag)) != 0 || put(o, b, (size_t)w) != 0 || put(o, "\n", 1) != 0) {
        free(b);
        return -1;
    }
    free(b);
    return 0;
fail:
    return -1;
}

/*
 * The root of the perfect subtree of 2^k leaves starting at leaf x (x a multiple of 2^k), from
 * row 0 of the level-(k/8) tile that holds it: the MTH of 2^(k%8) of its hashes.
 */
static int subtree_root(struct sworn_log *log, uint64_t size, uint64_t x, unsigned k,
                        uint8_t out[SWORN_HASH_LEN])
{
    uint8_t *tile = malloc((size_t)SWORN_TILE_WIDTH * SWORN_HASH_LEN);
    unsigned level = k / 8, r = k % 8, width = 0;
    uint64_t node = x >> (8 * level);
    uint64_t off = node % SWORN_TILE_WIDTH;

    SWORN_ENSURE(tile != NULL, SWORN_ERR_NOMEM, "bundle: out of memory");
    SWORN_GUARD(sworn_log_read_tile(log, size, (int)level, node / SWORN_TILE_WIDTH, tile, &width));
    SWORN_ENSURE(off + ((uint64_t)1 << r) <= width, SWORN_ERR_CORRUPT,
                 "bundle: tile %u/%llu is too narrow for a complete subtree", level,
                 (unsigned long long)(node / SWORN_TILE_WIDTH));
    sworn_merkle_root_of_leaves(tile + off * SWORN_HASH_LEN, (uint64_t)1 << r, out);
    free(tile);
    return 0;
fail:
    free(tile);
    return -1;
}

struct quote_find {
    uint64_t size;
    struct out *o;
    int rc;
};

static int each_quote(void *arg, uint64_t size, const uint8_t *attest, size_t attest_len,
                      const uint8_t *sig, size_t sig_len)
{
    struct quote_find *q = arg;
    size_t ca = (attest_len + 2) / 3 * 4 + 1, cs = (sig_len + 2) / 3 * 4 + 1;
    char *a, *s;

    if (size != q->size)
        return 0;
    a = malloc(ca);
    s = malloc(cs);
    if (a == NULL || s == NULL || sworn_base64_encode(attest, attest_len, a, ca) < 0 ||
        sworn_base64_encode(sig, sig_len, s, cs) < 0 || put(q->o, "quote ", 6) != 0 ||
        put(q->o, a, strlen(a)) != 0 || put(q->o, " ", 1) != 0 || put(q->o, s, strlen(s)) != 0 ||
        put(q->o, "\n", 1) != 0)
        q->rc = -1;
    free(a);
    free(s);
    return 0;
}

int sworn_bundle_build(struct sworn_log *log, uint64_t size, uint64_t start, uint64_t count,
                       char **result, size_t *result_len)
{
    return sworn_bundle_build_since(log, size, start, count, 0, result, result_len);
}

int sworn_bundle_build_since(struct sworn_log *log, uint64_t size, uint64_t start, uint64_t count,
                             uint64_t since, char **result, size_t *result_len)
{
    struct out o = {0};
    char *note = malloc(NOTE_CAP), line[64];
    uint8_t *entry = malloc(65536), receipt[SWORN_LOG_RECEIPT_MAX];
    uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    size_t note_len = 0, n;
    uint64_t note_size = 0, end, x = 0;
    struct quote_find qf;

    *result = NULL;
    *result_len = 0;
    SWORN_ENSURE(note != NULL && entry != NULL, SWORN_ERR_NOMEM, "bundle: out of memory");
    SWORN_GUARD(sworn_log_get_checkpoint(log, size, note, NOTE_CAP, &note_len, &note_size));
    SWORN_ENSURE(count >= 1 && count <= SWORN_BUNDLE_MAX_COUNT, SWORN_ERR_RANGE,
                 "bundle: count must be 1..%u", SWORN_BUNDLE_MAX_COUNT);
    SWORN_ENSURE(start < note_size && count <= note_size - start, SWORN_ERR_RANGE,
                 "bundle: entries %llu..%llu are not all in the tree of size %llu",
                 (unsigned long long)start, (unsigned long long)(start + count - 1),
                 (unsigned long long)note_size);
    end = start + count;
    SWORN_GUARD(put(&o, "sworn bundle v1\n", 16));
    SWORN_GUARD(put_b64(&o, "checkpoint ", (const uint8_t *)note, note_len));
    snprintf(line, sizeof(line), "start %llu\ncount %llu\n", (unsigned long long)start,
             (unsigned long long)count);
    SWORN_GUARD(put(&o, line, strlen(line)));
    /* The compact range of [0, start): one perfect subtree per set bit, largest first. */
    for (int k = 63; k >= 0; k--) {
        uint8_t h[SWORN_HASH_LEN];

        if (!(start >> k & 1))
            continue;
        SWORN_GUARD(subtree_root(log, note_size, x, (unsigned)k, h));
        SWORN_GUARD(put_b64(&o, "left ", h, SWORN_HASH_LEN));
        x += (uint64_t)1 << k;
    }
    for (uint64_t i = start; i < end; i++) {
        SWORN_GUARD(sworn_log_read_entry(log, i, entry, 65536, &n));
        SWORN_GUARD(put_b64(&o, "entry ", entry, n));
    }
    for (uint64_t i = start; i < end; i++) {
        if (sworn_log_read_receipt(log, i, receipt, sizeof(receipt), &n) == 0) {
            SWORN_GUARD(put_b64(&o, "receipt ", receipt, n));
        } else {
            SWORN_ENSURE(sworn_err_code() == SWORN_ERR_NOTFOUND, sworn_err_code(), "%s",
                         sworn_err_msg());
            sworn_err_clear();
            SWORN_GUARD(put(&o, "receipt -\n", 10));
        }
    }
    if (end < note_size) {
        SWORN_GUARD(
            sworn_log_prove_consistency(log, end, note_size, proof, SWORN_MERKLE_MAX_PROOF, &n));
        for (size_t i = 0; i < n; i++)
            SWORN_GUARD(put_b64(&o, "proof ", proof + i * SWORN_HASH_LEN, SWORN_HASH_LEN));
    }
    /* The auditor's saved tree: the proof that the checkpoint extends it (state, docs/verifier.md
     * section 9), which the range alone cannot show unless it ends at that size. */
    if (since != 0) {
        SWORN_ENSURE(since <= note_size, SWORN_ERR_RANGE,
                     "bundle: --old %llu is larger than the checkpoint's tree (%llu)",
                     (unsigned long long)since, (unsigned long long)note_size);
        snprintf(line, sizeof(line), "since %llu\n", (unsigned long long)since);
        SWORN_GUARD(put(&o, line, strlen(line)));
        if (since < note_size) {
            SWORN_GUARD(sworn_log_prove_consistency(log, since, note_size, proof,
                                                    SWORN_MERKLE_MAX_PROOF, &n));
            for (size_t i = 0; i < n; i++)
                SWORN_GUARD(
                    put_b64(&o, "since-proof ", proof + i * SWORN_HASH_LEN, SWORN_HASH_LEN));
        }
    }
    qf.size = note_size;
    qf.o = &o;
    qf.rc = 0;
    SWORN_GUARD(sworn_log_each_quote(log, each_quote, &qf));
    SWORN_ENSURE(qf.rc == 0, SWORN_ERR_NOMEM, "bundle: out of memory");
    free(note);
    free(entry);
    *result = o.p;
    *result_len = o.len;
    return 0;
fail:
    free(o.p);
    free(note);
    free(entry);
    return -1;
}

int sworn_bundle_export(struct sworn_log *log, uint64_t size, uint64_t start, uint64_t count,
                        const char *path)
{
    return sworn_bundle_export_since(log, size, start, count, 0, path);
}

int sworn_bundle_export_since(struct sworn_log *log, uint64_t size, uint64_t start, uint64_t count,
                              uint64_t since, const char *path)
{
    char *data = NULL;
    size_t len = 0;

    SWORN_GUARD(sworn_bundle_build_since(log, size, start, count, since, &data, &len));
    SWORN_GUARD(sworn_file_create(path, data, len, 0644));
    free(data);
    return 0;
fail:
    free(data);
    return -1;
}
