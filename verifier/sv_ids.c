/*
 * sv_ids.c -- the request ids of one start (sv_ids.h): a ring of the last SV_IDS_WINDOW ids
 * taken and an open-addressing index into it (linear probing, deletion by backward shift, so no
 * tombstones pile up), and beside it the set of ids held by an escalation, as decisiond keeps its
 * held escalations apart from its ring (d_escalate.c checks those first, exactly).
 */
#include "sv_ids.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#define KEY 16
#define SLOTS (2 * SV_IDS_WINDOW) /* the index is at most half full */

struct ring_id {
    uint8_t key[KEY];
};

/* The ids held by an escalation: a growable open-addressing set, at most half full. */
struct held_set {
    uint8_t (*key)[KEY];
    uint8_t *used;
    size_t cap, n; /* cap a power of two, or 0 */
};

struct sv_ids {
    uint8_t salt[32];
    struct ring_id *ring; /* SV_IDS_WINDOW; the oldest at head once full */
    uint32_t *slot;       /* SLOTS; 0 empty, else ring position + 1 */
    uint32_t n, head;
    struct held_set held;
};

struct sv_ids *sv_ids_new(void)
{
    struct sv_ids *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return NULL;
    if (RAND_bytes(t->salt, sizeof(t->salt)) != 1) {
        free(t);
        return NULL;
    }
    return t;
}

void sv_ids_free(struct sv_ids *t)
{
    if (t == NULL)
        return;
    free(t->ring);
    free(t->slot);
    free(t->held.key);
    free(t->held.used);
    free(t);
}

void sv_ids_reset(struct sv_ids *t)
{
    t->n = 0;
    t->head = 0;
    if (t->slot != NULL)
        memset(t->slot, 0, SLOTS * sizeof(*t->slot));
    if (t->held.used != NULL)
        memset(t->held.used, 0, t->held.cap);
    t->held.n = 0;
}

static void key_of(const struct sv_ids *t, const char *id, uint8_t key[KEY])
{
    uint8_t d[32];
    unsigned dl = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    memset(d, 0, sizeof(d));
    if (c != NULL && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1 &&
        EVP_DigestUpdate(c, t->salt, sizeof(t->salt)) == 1 &&
        EVP_DigestUpdate(c, id, strlen(id)) == 1)
        (void)EVP_DigestFinal_ex(c, d, &dl);
    EVP_MD_CTX_free(c);
    memcpy(key, d, KEY);
}

static uint32_t home(const uint8_t key[KEY])
{
    uint32_t h;

    memcpy(&h, key, sizeof(h));
    return h & (SLOTS - 1);
}

/* The index slot holding key, or the empty slot where it would go. */
static uint32_t find(const struct sv_ids *t, const uint8_t key[KEY])
{
    uint32_t i = home(key);

    while (t->slot[i] != 0 && memcmp(t->ring[t->slot[i] - 1].key, key, KEY) != 0)
        i = (i + 1) & (SLOTS - 1);
    return i;
}

/* Remove the index slot i (occupied), shifting back the entries of its probe run. */
static void unslot(struct sv_ids *t, uint32_t i)
{
    uint32_t j = i;

    t->slot[i] = 0;
    for (;;) {
        uint32_t h;

        j = (j + 1) & (SLOTS - 1);
        if (t->slot[j] == 0)
            return;
        h = home(t->ring[t->slot[j] - 1].key);
        /* j's entry may move to i when its home is not in the cyclic range (i, j]. */
        if ((i < j) ? (h <= i || h > j) : (h <= i && h > j)) {
            t->slot[i] = t->slot[j];
            t->slot[j] = 0;
            i = j;
        }
    }
}

/* The held set's slot holding key, or the empty slot where it would go (cap > 0). */
static size_t held_find(const struct held_set *h, const uint8_t key[KEY])
{
    size_t m = h->cap - 1, i;
    uint32_t k;

    memcpy(&k, key, sizeof(k));
    i = k & m;
    while (h->used[i] && memcmp(h->key[i], key, KEY) != 0)
        i = (i + 1) & m;
    return i;
}

static int held_has(const struct held_set *h, const uint8_t key[KEY])
{
    return h->n > 0 && h->used[held_find(h, key)];
}

static int held_add(struct held_set *h, const uint8_t key[KEY])
{
    size_t i;

    if (2 * (h->n + 1) > h->cap) {
        struct held_set g = {0};

        g.cap = h->cap ? 2 * h->cap : 64;
        g.key = malloc(g.cap * KEY);
        g.used = calloc(g.cap, 1);
        if (g.key == NULL || g.used == NULL) {
            free(g.key);
            free(g.used);
            return -1;
        }
        for (size_t j = 0; j < h->cap; j++)
            if (h->used[j]) {
                size_t at = held_find(&g, h->key[j]);

                memcpy(g.key[at], h->key[j], KEY);
                g.used[at] = 1;
                g.n++;
            }
        free(h->key);
        free(h->used);
        *h = g;
    }
    i = held_find(h, key);
    if (!h->used[i]) {
        memcpy(h->key[i], key, KEY);
        h->used[i] = 1;
        h->n++;
    }
    return 0;
}

/* Remove key (backward shift, so lookups need no tombstones). */
static void held_del(struct held_set *h, const uint8_t key[KEY])
{
    size_t m, i, j;

    if (h->n == 0 || !h->used[i = held_find(h, key)])
        return;
    m = h->cap - 1;
    h->used[i] = 0;
    h->n--;
    for (j = (i + 1) & m; h->used[j]; j = (j + 1) & m) {
        uint32_t k;
        size_t home_j;

        memcpy(&k, h->key[j], sizeof(k));
        home_j = k & m;
        if ((i < j) ? (home_j <= i || home_j > j) : (home_j <= i && home_j > j)) {
            memcpy(h->key[i], h->key[j], KEY);
            h->used[i] = 1;
            h->used[j] = 0;
            i = j;
        }
    }
}

int sv_ids_live(const struct sv_ids *t, const char *id)
{
    uint8_t key[KEY];

    key_of(t, id, key);
    if (held_has(&t->held, key))
        return 1;
    if (t->slot == NULL || t->n == 0)
        return 0;
    return t->slot[find(t, key)] != 0;
}

int sv_ids_take(struct sv_ids *t, const char *id, int held)
{
    uint8_t key[KEY];
    uint32_t pos;

    if (t->ring == NULL) {
        t->ring = malloc(SV_IDS_WINDOW * sizeof(*t->ring));
        t->slot = calloc(SLOTS, sizeof(*t->slot));
        if (t->ring == NULL || t->slot == NULL) {
            free(t->ring);
            free(t->slot);
            t->ring = NULL;
            t->slot = NULL;
            return -1;
        }
    }
    key_of(t, id, key);
    if (held && held_add(&t->held, key) != 0)
        return -1;
    if (t->n == SV_IDS_WINDOW) {
        /* Full: the oldest goes (a held one stays live through the held set). */
        unslot(t, find(t, t->ring[t->head].key));
        pos = t->head;
        t->head = (t->head + 1) % SV_IDS_WINDOW;
    } else {
        pos = (t->head + t->n) % SV_IDS_WINDOW;
        t->n++;
    }
    memcpy(t->ring[pos].key, key, KEY);
    t->slot[find(t, key)] = pos + 1;
    return 0;
}

void sv_ids_release(struct sv_ids *t, const char *id)
{
    uint8_t key[KEY];

    key_of(t, id, key);
    held_del(&t->held, key);
}
