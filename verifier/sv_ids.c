/*
 * sv_ids.c -- the request ids of one start (sv_ids.h): a ring of the last SV_IDS_WINDOW ids
 * taken and an open-addressing index into it (linear probing, deletion by backward shift, so no
 * tombstones pile up).
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
    uint8_t held;
};

struct sv_ids {
    uint8_t salt[32];
    struct ring_id *ring; /* SV_IDS_WINDOW; the oldest at head once full */
    uint32_t *slot;       /* SLOTS; 0 empty, else ring position + 1 */
    uint32_t n, head;
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
    free(t);
}

void sv_ids_reset(struct sv_ids *t)
{
    t->n = 0;
    t->head = 0;
    if (t->slot != NULL)
        memset(t->slot, 0, SLOTS * sizeof(*t->slot));
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

int sv_ids_live(const struct sv_ids *t, const char *id)
{
    uint8_t key[KEY];

    if (t->slot == NULL || t->n == 0)
        return 0;
    key_of(t, id, key);
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
    if (t->n == SV_IDS_WINDOW) {
        /* Full: the oldest goes, or, when held, is taken again (at most once round the ring:
         * when every id is held, the oldest goes anyway, which only shortens the memory). */
        for (uint32_t k = 0; k < SV_IDS_WINDOW && t->ring[t->head].held; k++) {
            /* move the held id to the newest position: the head becomes the tail */
            t->head = (t->head + 1) % SV_IDS_WINDOW;
        }
        unslot(t, find(t, t->ring[t->head].key));
        pos = t->head;
        t->head = (t->head + 1) % SV_IDS_WINDOW;
    } else {
        pos = (t->head + t->n) % SV_IDS_WINDOW;
        t->n++;
    }
    memcpy(t->ring[pos].key, key, KEY);
    t->ring[pos].held = held != 0;
    t->slot[find(t, key)] = pos + 1;
    return 0;
}

void sv_ids_release(struct sv_ids *t, const char *id)
{
    uint8_t key[KEY];
    uint32_t i;

    if (t->slot == NULL || t->n == 0)
        return;
    key_of(t, id, key);
    i = find(t, key);
    if (t->slot[i] != 0)
        t->ring[t->slot[i] - 1].held = 0;
}
