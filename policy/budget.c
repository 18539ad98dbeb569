/*
 * budget.c -- the budget counters of the policy engine (see policy.h and docs/policy.md,
 * "Budgets").
 *
 * A counter is named by a 32-byte key, SHA-256 of (domain, kind, rule id, scope, principal,
 * pointer, window length, window start), so counters of different rules, principals and windows
 * never meet, and a result can name what it charged in fixed space for a later refund (the
 * charges of every matching allow rule of one decision: SWORN_POLICY_CHARGES at most). Windows
 * are fixed and aligned to the Unix epoch: start = t - t mod window. A counter lives until its
 * window ends; counters of ended windows are dropped whenever room is needed, so at most `cap`
 * counters exist at once, whatever the number of principals. A policy reload keeps the counters
 * of every rule whose id, kind, scope, pointer and window stay the same. (Scope per sandbox adds
 * the run's SandboxStarted index to the key.) A token counter is charged a reservation (the
 * request's ceiling) and settled later, when the usage is known (sworn_budgets_settle), so it
 * counts the tokens used.
 *
 * Counters sit in a chained hash table indexed by the key's first bytes (the keys are hashes, so
 * no input can pile them into one chain). One mutex guards the table: check-and-charge of one
 * decision, across all the rules whose budgets it charges, is atomic (all or none), so two
 * threads can never both take the last unit of a budget, and no thread ever sees one rule's
 * budget charged by a decision that another rule's budget then refuses. A refund undoes all the
 * charges of one decision under the lock too.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "err.h"
#include "policy_int.h"

struct bnode {
    struct bnode *next;
    uint8_t key[SWORN_POLICY_HASH_LEN];
    uint64_t window_end_ms;
    uint64_t value;
};

struct sworn_budgets {
    pthread_mutex_t mu;
    struct bnode **tab;
    size_t nbuckets; /* a power of two */
    size_t count;
    size_t cap;
};

#define BUCKETS_MIN 64u

int sworn_budgets_new_cap(size_t cap, struct sworn_budgets **out)
{
    struct sworn_budgets *b;

    if (out == NULL || cap == 0)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_budgets_new: bad arguments");
    b = calloc(1, sizeof(*b));
    if (b == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory for budgets");
    b->tab = calloc(BUCKETS_MIN, sizeof(*b->tab));
    if (b->tab == NULL || pthread_mutex_init(&b->mu, NULL) != 0) {
        free(b->tab);
        free(b);
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory for budgets");
    }
    b->nbuckets = BUCKETS_MIN;
    b->cap = cap;
    *out = b;
    return 0;
}

int sworn_budgets_new(struct sworn_budgets **out)
{
    return sworn_budgets_new_cap(SWORN_BUDGETS_DEFAULT_CAP, out);
}

void sworn_budgets_free(struct sworn_budgets *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->nbuckets; i++) {
        struct bnode *n = b->tab[i], *next;

        for (; n != NULL; n = next) {
            next = n->next;
            free(n);
        }
    }
    free(b->tab);
    pthread_mutex_destroy(&b->mu);
    free(b);
}

size_t sworn_budgets_count(struct sworn_budgets *b)
{
    size_t n;

    pthread_mutex_lock(&b->mu);
    n = b->count;
    pthread_mutex_unlock(&b->mu);
    return n;
}

static size_t bucket(const struct sworn_budgets *b, const uint8_t key[32])
{
    uint64_t h = 0;

    for (int i = 0; i < 8; i++)
        h = h << 8 | key[i];
    return (size_t)(h & (b->nbuckets - 1));
}

/* The counter with key, or NULL; *prev_next is where it is linked from (for removal). */
static struct bnode *find(struct sworn_budgets *b, const uint8_t key[32], struct bnode ***prev_next)
{
    struct bnode **pp = &b->tab[bucket(b, key)];

    for (; *pp != NULL; pp = &(*pp)->next)
        if (memcmp((*pp)->key, key, 32) == 0)
            break;
    if (prev_next != NULL)
        *prev_next = pp;
    return *pp;
}

/* Drop every counter whose window has ended at now. */
static void sweep(struct sworn_budgets *b, uint64_t now_ms)
{
    for (size_t i = 0; i < b->nbuckets; i++) {
        struct bnode **pp = &b->tab[i];

        while (*pp != NULL) {
            if ((*pp)->window_end_ms <= now_ms) {
                struct bnode *dead = *pp;

                *pp = dead->next;
                free(dead);
                b->count--;
            } else {
                pp = &(*pp)->next;
            }
        }
    }
}

/* Double the table when chains grow long; on allocation failure keep the old one. */
static void grow(struct sworn_budgets *b)
{
    size_t n = b->nbuckets * 2, i;
    struct bnode **tab;

    if (b->count <= b->nbuckets * 2 || n > ((size_t)-1) / sizeof(*tab))
        return;
    tab = calloc(n, sizeof(*tab));
    if (tab == NULL)
        return;
    for (i = 0; i < b->nbuckets; i++) {
        struct bnode *node = b->tab[i], *next;

        for (; node != NULL; node = next) {
            uint64_t h = 0;

            next = node->next;
            for (int k = 0; k < 8; k++)
                h = h << 8 | node->key[k];
            node->next = tab[h & (n - 1)];
            tab[h & (n - 1)] = node;
        }
    }
    free(b->tab);
    b->tab = tab;
    b->nbuckets = n;
}

static void put_u64(uint8_t out[8], uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        out[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* Length-prefixed field into the hash, so that no two key tuples give the same bytes. */
static int hash_field(EVP_MD_CTX *ctx, const char *s)
{
    uint8_t len[8];
    size_t n = s != NULL ? strlen(s) : 0;

    put_u64(len, n);
    return EVP_DigestUpdate(ctx, len, sizeof(len)) == 1 &&
                   (n == 0 || EVP_DigestUpdate(ctx, s, n) == 1)
               ? 0
               : -1;
}

int budget_key(const struct prule *r, const struct pbudget *bg, enum pbudget_kind kind,
               const Sworn__V1__Principal *pr, uint64_t now_ms, struct sworn_policy_charge *c)
{
    static const char domain[] = "sworn budget v1";
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    uint8_t tail[18], sbx[9];
    uint64_t start = now_ms - now_ms % bg->window_ms;
    const char *principal = pr != NULL && pr->id != NULL ? pr->id : "";
    unsigned len = 0;
    int ok;

    if (ctx == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory hashing a budget key");
    tail[0] = (uint8_t)kind;
    tail[1] = (uint8_t)(bg->global ? 'g' : bg->sandbox ? 'x' : 'p');
    put_u64(tail + 2, bg->window_ms);
    put_u64(tail + 10, start);
    /* per: sandbox adds the run's SandboxStarted index (0: not from a sworn-run sandbox); the
     * other scopes hash exactly the bytes they always did, so their counters survive. */
    sbx[0] = 'x';
    put_u64(sbx + 1, pr != NULL ? pr->sandbox_start_index : 0);
    ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
         EVP_DigestUpdate(ctx, domain, sizeof(domain)) == 1 && hash_field(ctx, r->id) == 0 &&
         hash_field(ctx, bg->global ? "" : principal) == 0 &&
         hash_field(ctx, kind == PBUDGET_SUM ? bg->pointer : "") == 0 &&
         EVP_DigestUpdate(ctx, tail, sizeof(tail)) == 1 &&
         (!bg->sandbox || EVP_DigestUpdate(ctx, sbx, sizeof(sbx)) == 1) &&
         EVP_DigestFinal_ex(ctx, c->key, &len) == 1 && len == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return sworn_err_set(SWORN_ERR_CRYPTO, "SHA-256 of a budget key failed");
    /* A window that would end past the end of time ends at UINT64_MAX. */
    c->window_end_ms = start > UINT64_MAX - bg->window_ms ? UINT64_MAX : start + bg->window_ms;
    c->used = 1;
    c->tokens = kind == PBUDGET_TOKENS;
    return 0;
}

int budget_charge(struct sworn_budgets *b, struct sworn_policy_charge *c, const uint64_t *limits,
                  size_t n, uint64_t now_ms, int force, size_t *which, uint64_t *used)
{
    struct bnode *nodes[SWORN_POLICY_CHARGES], *fresh[SWORN_POLICY_CHARGES];
    size_t i, k, need = 0, first_new = n;
    int rc = 0;

    if (n > SWORN_POLICY_CHARGES)
        return sworn_err_set(SWORN_ERR_ARG, "budget_charge: more than %u charges",
                             SWORN_POLICY_CHARGES);
    /* Two charges of one counter would find it absent twice and link it twice. Keys name the rule
     * and the kind and rule ids are unique, so this never happens; refuse it rather than rely on
     * it (n <= 32: cheap). */
    for (i = 0; i < n; i++)
        for (k = i + 1; k < n; k++)
            if (memcmp(c[i].key, c[k].key, sizeof(c[i].key)) == 0)
                return sworn_err_set(SWORN_ERR_ARG, "budget_charge: one counter charged twice");
    pthread_mutex_lock(&b->mu);
    /* Check every charge before any is made: a decision charges all its budgets or none, and no
     * other thread sees one charged and another not (the lock is held throughout). */
    for (i = 0; i < n; i++) {
        uint64_t cur;

        nodes[i] = find(b, c[i].key, NULL);
        cur = nodes[i] != NULL ? nodes[i]->value : 0;
        if (nodes[i] == NULL && need++ == 0)
            first_new = i;
        /* A token budget is spent once its counter reaches the limit, whatever the ceiling
         * asks (0 included): usage settled above a reservation must stop the next request. */
        if (!force && (cur > UINT64_MAX - c[i].amount || cur + c[i].amount > limits[i] ||
                       (c[i].tokens && cur >= limits[i]))) {
            *which = i;
            *used = cur;
            rc = 1;
            goto out;
        }
    }
    if (need > 0 && b->count + need > b->cap) {
        sweep(b, now_ms);
        /* Sweeping may have dropped none of ours: they are in the current window. */
        if (b->count + need > b->cap) {
            *which = first_new;
            rc = 2;
            goto out;
        }
    }
    for (i = 0; i < n; i++) {
        fresh[i] = NULL;
        if (nodes[i] == NULL && (fresh[i] = calloc(1, sizeof(struct bnode))) == NULL) {
            while (i-- > 0)
                free(fresh[i]);
            rc = sworn_err_set(SWORN_ERR_NOMEM, "out of memory for a budget counter");
            goto out;
        }
    }
    for (i = 0; i < n; i++) {
        if (fresh[i] != NULL) {
            size_t kb = bucket(b, c[i].key);

            memcpy(fresh[i]->key, c[i].key, 32);
            fresh[i]->window_end_ms = c[i].window_end_ms;
            fresh[i]->next = b->tab[kb];
            b->tab[kb] = fresh[i];
            b->count++;
            nodes[i] = fresh[i];
        }
        /* A replayed log may hold more than a limit allows now (a lowered limit): saturate. */
        nodes[i]->value =
            nodes[i]->value > UINT64_MAX - c[i].amount ? UINT64_MAX : nodes[i]->value + c[i].amount;
    }
    grow(b);
out:
    pthread_mutex_unlock(&b->mu);
    return rc;
}

void sworn_budgets_refund(struct sworn_budgets *b, const struct sworn_policy_result *r)
{
    if (b == NULL || r == NULL)
        return;
    pthread_mutex_lock(&b->mu);
    for (size_t i = 0; i < SWORN_POLICY_CHARGES; i++) {
        struct bnode **pp, *node;

        if (!r->charges[i].used)
            continue;
        node = find(b, r->charges[i].key, &pp);
        if (node == NULL)
            continue;
        node->value = node->value > r->charges[i].amount ? node->value - r->charges[i].amount : 0;
        if (node->value == 0) {
            /* Back to the state before the charge: no counter at all. */
            *pp = node->next;
            free(node);
            b->count--;
        }
    }
    pthread_mutex_unlock(&b->mu);
}

void sworn_budgets_settle(struct sworn_budgets *b, const struct sworn_policy_charge *charges,
                          size_t n, uint64_t actual)
{
    if (b == NULL || charges == NULL)
        return;
    pthread_mutex_lock(&b->mu);
    for (size_t i = 0; i < n; i++) {
        struct bnode *node;
        uint64_t v;

        if (!charges[i].used || !charges[i].tokens)
            continue;
        node = find(b, charges[i].key, NULL);
        if (node == NULL) /* its window ended and it was dropped: nothing left to count in */
            continue;
        v = node->value > charges[i].amount ? node->value - charges[i].amount : 0;
        node->value = v > UINT64_MAX - actual ? UINT64_MAX : v + actual;
    }
    pthread_mutex_unlock(&b->mu);
}
