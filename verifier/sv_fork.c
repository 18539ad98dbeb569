/*
 * sv_fork.c -- see sv_fork.h.
 */
#include "sv_fork.h"

#include <stdlib.h>
#include <string.h>

#include "sv_merkle.h"
#include "sv_note.h"
#include "sv_tiles.h"
#include "sv_verify.h"

#define HEADER "sworn fork-proof v1\n"
#define LEAVES_MAX ((uint64_t)1 << 28) /* 8 GiB of leaf hashes is beyond any compare here */

static int check_note(const struct sv_policy *p, const uint8_t *note, size_t len,
                      struct sv_checkpoint *cp, char *why)
{
    enum sv_check_id failed;
    char code[32], w[SV_WHY];

    if (sv_verify_checkpoint_note(p, (const char *)note, len, SV_QUORUM_REQUIRED, NULL, cp, NULL,
                                  &failed, code, w) != 0)
        return sv_fail(why, "%s (%s)", w, code);
    return 0;
}

int sv_fork_check(const struct sv_policy *p, const char *text, size_t len, char *why)
{
    const char *pos = text, *end = text + len;
    uint8_t *notes[2] = {NULL, NULL};
    size_t nlen[2] = {0, 0};
    struct sv_checkpoint cp[2];
    uint8_t(*proof)[SV_HASH] = NULL;
    size_t nproof = 0;
    int rc = -1;
    char w[SV_WHY];

    if (len > SV_FORK_MAX || len < sizeof(HEADER) - 1 ||
        memcmp(text, HEADER, sizeof(HEADER) - 1) != 0)
        return sv_fail(why, "not a 'sworn fork-proof v1' file");
    pos += sizeof(HEADER) - 1;
    proof = calloc(SV_PROOF_MAX, SV_HASH);
    if (proof == NULL)
        return sv_fail(why, "out of memory");
    for (int line = 0; pos < end; line++) {
        const char *nl = memchr(pos, '\n', (size_t)(end - pos));
        size_t ll;

        if (nl == NULL) {
            sv_fail(why, "line %d has no newline", line + 2);
            goto out;
        }
        ll = (size_t)(nl - pos);
        if (line < 2) {
            const char *tag = line == 0 ? "a " : "b ";
            long n;

            if (ll < 2 || memcmp(pos, tag, 2) != 0) {
                sv_fail(why, "line %d must be '%s<base64 note>'", line + 2, tag);
                goto out;
            }
            notes[line] = malloc(ll);
            if (notes[line] == NULL) {
                sv_fail(why, "out of memory");
                goto out;
            }
            n = sv_b64_decode(pos + 2, ll - 2, notes[line], ll);
            if (n <= 0) {
                sv_fail(why, "line %d: not canonical base64", line + 2);
                goto out;
            }
            nlen[line] = (size_t)n;
        } else {
            if (ll != 6 + 44 || memcmp(pos, "proof ", 6) != 0 || nproof == SV_PROOF_MAX ||
                sv_b64_decode(pos + 6, 44, proof[nproof], SV_HASH) != SV_HASH) {
                sv_fail(why, "line %d must be 'proof <base64 hash>' (at most %d)", line + 2,
                        SV_PROOF_MAX);
                goto out;
            }
            nproof++;
        }
        pos = nl + 1;
    }
    if (notes[1] == NULL) {
        sv_fail(why, "a fork proof holds two checkpoints");
        goto out;
    }
    for (int i = 0; i < 2; i++)
        if (check_note(p, notes[i], nlen[i], &cp[i], w) != 0) {
            sv_fail(why, "checkpoint %c does not verify: %s", 'a' + i, w);
            goto out;
        }
    if (cp[0].size > cp[1].size) {
        sv_fail(why, "checkpoint a must be the smaller tree");
        goto out;
    }
    if (cp[0].size == cp[1].size) {
        if (nproof != 0) {
            sv_fail(why, "two checkpoints of one size need no proof lines");
            goto out;
        }
        if (memcmp(cp[0].root, cp[1].root, SV_HASH) == 0) {
            sv_fail(why, "the two checkpoints have the same root: no fork");
            goto out;
        }
        rc = 0;
        goto out;
    }
    if (cp[0].size == 0) {
        sv_fail(why, "every tree extends the empty tree: no fork");
        goto out;
    }
    {
        uint8_t old_root[SV_HASH], new_root[SV_HASH];

        if (sv_consistency_roots(cp[0].size, cp[1].size, (const uint8_t(*)[SV_HASH])proof, nproof,
                                 old_root, new_root, w) != 0) {
            sv_fail(why, "%s", w);
            goto out;
        }
        if (memcmp(new_root, cp[1].root, SV_HASH) != 0) {
            sv_fail(why, "the proof does not lead to checkpoint b's root");
            goto out;
        }
        if (memcmp(old_root, cp[0].root, SV_HASH) == 0) {
            sv_fail(why, "the proof shows b extends a: no fork");
            goto out;
        }
    }
    rc = 0;
out:
    free(notes[0]);
    free(notes[1]);
    free(proof);
    return rc;
}

/* Read a record's newest checkpoint note (verified) and all its leaf hashes up to its size. */
static int load_record(const struct sv_policy *p, const char *dir, uint8_t **note, size_t *nlen,
                       struct sv_checkpoint *cp, uint8_t (**leaves)[SV_HASH], char *why)
{
    char path[4096], rel[128], w[SV_WHY];
    struct sv_range r;
    uint8_t root[SV_HASH];

    *leaves = NULL;
    snprintf(path, sizeof(path), "%s/checkpoint", dir);
    if (sv_read_file(path, SV_NOTE_MAX, note, nlen, NULL, w) != 0)
        return sv_fail(why, "%s", w);
    if (check_note(p, *note, *nlen, cp, w) != 0)
        return sv_fail(why, "%s: %s", path, w);
    if (cp->size > LEAVES_MAX)
        return sv_fail(why, "%s: tree too large to compare here", dir);
    *leaves = malloc((size_t)(cp->size ? cp->size : 1) * SV_HASH);
    if (*leaves == NULL)
        return sv_fail(why, "out of memory");
    sv_range_init(&r);
    for (uint64_t b = 0; b * SV_TILE_WIDTH < cp->size; b++) {
        uint64_t left = cp->size - b * SV_TILE_WIDTH;
        unsigned wd = left >= SV_TILE_WIDTH ? SV_TILE_WIDTH : (unsigned)left;
        struct sv_bundle bu;
        uint8_t *data;
        size_t len;

        sv_tile_path("tile/entries", b, wd, rel, sizeof(rel));
        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        if (sv_read_file(path, SV_BUNDLE_MAX, &data, &len, NULL, w) != 0)
            return sv_fail(why, "%s", w) * 3;
        if (sv_bundle_parse(data, len, wd, &bu, w) != 0) {
            free(data);
            return sv_fail(why, "%s: %s", path, w) * 3;
        }
        for (unsigned i = 0; i < wd; i++) {
            sv_leaf_hash(bu.data[i], bu.len[i], (*leaves)[b * SV_TILE_WIDTH + i]);
            sv_range_push(&r, (*leaves)[b * SV_TILE_WIDTH + i]);
        }
        free(data);
    }
    sv_range_root(&r, root);
    if (memcmp(root, cp->root, SV_HASH) != 0)
        return sv_fail(why, "%s: its entries do not hash to its own checkpoint", dir) * 3;
    return 0;
}

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t nc = (*len + n + 1) * 2;
        char *nb = realloc(*buf, nc);

        if (nb == NULL)
            return -1;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

static int append_b64_line(char **buf, size_t *len, size_t *cap, const char *tag,
                           const uint8_t *data, size_t n)
{
    size_t cap64 = (n + 2) / 3 * 4 + 1;
    char *b = malloc(cap64);
    int r;

    if (b == NULL)
        return -1;
    sv_b64_encode(data, n, b, cap64);
    r = append(buf, len, cap, tag, strlen(tag)) | append(buf, len, cap, b, strlen(b)) |
        append(buf, len, cap, "\n", 1);
    free(b);
    return r;
}

int sv_compare(const struct sv_policy *p, const char *a, const char *b, char **proof,
               size_t *proof_len, char *why)
{
    uint8_t *note[2] = {NULL, NULL}, (*leaves[2])[SV_HASH] = {NULL, NULL};
    size_t nlen[2];
    struct sv_checkpoint cp[2];
    const char *dirs[2] = {a, b};
    int rc = 2, s, l;
    char w[SV_WHY];

    if (proof != NULL) {
        *proof = NULL;
        *proof_len = 0;
    }
    for (int i = 0; i < 2; i++) {
        int r = load_record(p, dirs[i], &note[i], &nlen[i], &cp[i], &leaves[i], w);

        if (r != 0) {
            sv_fail(why, "record %c: %s", 'A' + i, w);
            rc = r < -1 ? 3 : 2;
            goto out;
        }
    }
    s = cp[0].size <= cp[1].size ? 0 : 1; /* the smaller tree */
    l = 1 - s;
    {
        uint8_t prefix_root[SV_HASH];

        sv_mth((const uint8_t(*)[SV_HASH])leaves[l], cp[s].size, prefix_root);
        if (memcmp(prefix_root, cp[s].root, SV_HASH) == 0) {
            sv_fail(why, "consistent: record %c (size %llu) extends record %c (size %llu)", 'A' + l,
                    (unsigned long long)cp[l].size, 'A' + s, (unsigned long long)cp[s].size);
            rc = 0;
            goto out;
        }
    }
    /* A fork. The first differing entry, for the message. */
    {
        uint64_t first = 0;
        char *buf = NULL;
        size_t len = 0, cap = 0;

        while (first < cp[s].size && memcmp(leaves[0][first], leaves[1][first], SV_HASH) == 0)
            first++;
        sv_fail(why,
                "FORK: record A (size %llu) and record B (size %llu) are both signed and "
                "inconsistent; they diverge at entry %llu",
                (unsigned long long)cp[0].size, (unsigned long long)cp[1].size,
                (unsigned long long)first);
        rc = 1;
        if (proof == NULL)
            goto out;
        if (append(&buf, &len, &cap, HEADER, sizeof(HEADER) - 1) != 0 ||
            append_b64_line(&buf, &len, &cap, "a ", note[s], nlen[s]) != 0 ||
            append_b64_line(&buf, &len, &cap, "b ", note[l], nlen[l]) != 0) {
            free(buf);
            rc = 2;
            goto out;
        }
        if (cp[s].size < cp[l].size) {
            uint8_t path[SV_PROOF_MAX][SV_HASH];
            size_t n = sv_consistency_path((const uint8_t(*)[SV_HASH])leaves[l], cp[s].size,
                                           cp[l].size, path);

            for (size_t i = 0; i < n; i++)
                if (append_b64_line(&buf, &len, &cap, "proof ", path[i], SV_HASH) != 0) {
                    free(buf);
                    rc = 2;
                    goto out;
                }
        }
        *proof = buf;
        *proof_len = len;
    }
out:
    free(note[0]);
    free(note[1]);
    free(leaves[0]);
    free(leaves[1]);
    return rc;
}
