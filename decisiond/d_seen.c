/*
 * d_seen.c -- the request ids taken (d_seen.h): a ring of D_SEEN_IDS salted SHA-256 digests with
 * a chained hash index over it. Slot s of the ring holds the id taken as number taken - k *
 * D_SEEN_IDS; buckets and chain links hold slot + 1, with 0 for "none". Evicting the oldest slot
 * unlinks it from its bucket's chain; chains are short (twice as many buckets as slots, and the
 * salt keeps them so whatever ids come).
 */
/*
 * SHA256_Init/Update/Final: deprecated in OpenSSL 3, but the one-shot SHA256() fetches the
 * algorithm anew on every call (EVP_Q_digest), which cost two thirds of taking an id; as in
 * transparency-log/merkle.c, the low-level calls hash without fetching or allocating.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "d_seen.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/sha.h>

#include "err.h"
#include "wipe.h"

#define SEEN_BUCKETS (2u * D_SEEN_IDS)
#define SALT_LEN 16u

struct d_seen_ids {
    uint8_t salt[SALT_LEN];
    uint8_t digest[D_SEEN_IDS][SHA256_DIGEST_LENGTH];
    uint32_t next[D_SEEN_IDS];     /* next slot + 1 in the same bucket, 0: the chain ends */
    uint32_t bucket[SEEN_BUCKETS]; /* first slot + 1 of the bucket, 0: empty */
    uint64_t taken;                /* ids taken so far; the next goes to slot taken % D_SEEN_IDS */
};

int d_seen_new(struct d_seen_ids **out)
{
    struct d_seen_ids *t = calloc(1, sizeof(*t));

    *out = NULL;
    if (t == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "request ids: out of memory");
    if (getrandom(t->salt, sizeof(t->salt), 0) != (ssize_t)sizeof(t->salt)) {
        free(t);
        return sworn_err_set(SWORN_ERR_IO, "request ids: no random salt");
    }
    *out = t;
    return 0;
}

void d_seen_free(struct d_seen_ids *t)
{
    if (t == NULL)
        return;
    sworn_memzero(t->salt, sizeof(t->salt));
    free(t);
}

/* SHA-256(salt || SHA-256(id)): a fixed-size input whatever the id's length. */
static void digest_of(const struct d_seen_ids *t, const char *id, uint8_t out[SHA256_DIGEST_LENGTH])
{
    uint8_t in[SALT_LEN + SHA256_DIGEST_LENGTH];
    SHA256_CTX ctx;

    memcpy(in, t->salt, SALT_LEN);
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, id, strlen(id));
    SHA256_Final(in + SALT_LEN, &ctx);
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, in, sizeof(in));
    SHA256_Final(out, &ctx);
    sworn_memzero(&ctx, sizeof(ctx));
}

static uint32_t bucket_of(const uint8_t d[SHA256_DIGEST_LENGTH])
{
    uint32_t b;

    memcpy(&b, d, sizeof(b));
    return b % SEEN_BUCKETS;
}

/* Unlink the slot s (in use) from its bucket's chain. */
static void unlink_slot(struct d_seen_ids *t, uint32_t s)
{
    uint32_t *link = &t->bucket[bucket_of(t->digest[s])];

    while (*link != 0 && *link != s + 1)
        link = &t->next[*link - 1];
    if (*link == s + 1)
        *link = t->next[s];
    t->next[s] = 0;
}

int d_seen_take(struct d_seen_ids *t, const char *request_id)
{
    uint8_t d[SHA256_DIGEST_LENGTH];
    uint32_t b, s;

    digest_of(t, request_id, d);
    b = bucket_of(d);
    for (uint32_t k = t->bucket[b]; k != 0; k = t->next[k - 1])
        if (memcmp(t->digest[k - 1], d, sizeof(d)) == 0)
            return 1;
    s = (uint32_t)(t->taken % D_SEEN_IDS);
    if (t->taken >= D_SEEN_IDS)
        unlink_slot(t, s); /* the oldest id goes */
    memcpy(t->digest[s], d, sizeof(d));
    t->next[s] = t->bucket[b];
    t->bucket[b] = s + 1;
    t->taken++;
    return 0;
}

uint64_t d_seen_count(const struct d_seen_ids *t)
{
    return t->taken;
}
