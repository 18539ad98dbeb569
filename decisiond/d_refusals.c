/*
 * d_refusals.c -- quotas of recorded refusals and of their log lines per (channel, uid) pair,
 * and the counts of what they drop or suppress (d_refusals.h).
 */
#include "d_refusals.h"

#include <stdlib.h>
#include <string.h>

const char *d_refusals_channel_name(unsigned channel)
{
    return channel == 1 ? "admin" : "decision";
}

static void reserve(struct d_refusals *r, unsigned channel, const uid_t *uids, size_t n)
{
    for (size_t i = 0; i < n && r->n_reserved < 2 * SWORN_DCONFIG_MAX_UIDS; i++) {
        struct d_refusal_slot *s = &r->slots[r->n_reserved++];

        s->channel = channel;
        s->uid = (uint32_t)uids[i];
        s->used = 0;
        s->logged = 0;
    }
}

void d_refusals_init(struct d_refusals *r, const struct sworn_dconfig *cfg)
{
    memset(r, 0, sizeof(*r));
    reserve(r, 0, cfg->proxy_uids, cfg->n_proxy_uids);
    reserve(r, 1, cfg->operator_uids, cfg->n_operator_uids);
    r->n_slots = r->n_reserved;
}

/*
 * The pair's slot for the second of now_ms (a new second starts every quota again and frees the
 * strangers' slots), with its quota in *quota; NULL when it has none: every stranger's slot of
 * this second is taken, and its quota is 0.
 */
static struct d_refusal_slot *slot_of(struct d_refusals *r, unsigned channel, uint32_t uid,
                                      uint64_t now_ms, unsigned *quota)
{
    struct d_refusal_slot *s = NULL;

    if (now_ms / 1000 != r->second) {
        r->second = now_ms / 1000;
        for (size_t i = 0; i < r->n_reserved; i++)
            r->slots[i].used = r->slots[i].logged = 0;
        r->n_slots = r->n_reserved;
    }
    for (size_t i = 0; i < r->n_slots && s == NULL; i++)
        if (r->slots[i].channel == channel && r->slots[i].uid == uid)
            s = &r->slots[i];
    *quota =
        s != NULL && s < r->slots + r->n_reserved ? D_REFUSALS_PER_PEER : D_REFUSALS_PER_STRANGER;
    if (s == NULL) {
        if (r->n_slots >= r->n_reserved + D_REFUSALS_STRANGERS)
            return NULL;
        s = &r->slots[r->n_slots++];
        s->channel = channel;
        s->uid = uid;
        s->used = s->logged = 0;
    }
    return s;
}

int d_refusals_admit(struct d_refusals *r, unsigned channel, uint32_t uid, uint64_t now_ms)
{
    unsigned quota;
    struct d_refusal_slot *s = slot_of(r, channel, uid, now_ms, &quota);

    if (s == NULL || s->used >= quota)
        return 0;
    s->used++;
    return 1;
}

/* Count one under (channel, uid) in rows[*n_rows] over [*first_ms, *last_ms]; 0 when it is a new
 * pair and the rows are full (nothing counted). The drops and the suppressed lines share it. */
static int count(struct d_refusal_row *rows, size_t *n_rows, uint64_t *first_ms, uint64_t *last_ms,
                 unsigned channel, uint32_t uid, uint64_t now_ms)
{
    struct d_refusal_row *row = NULL;
    int first = *n_rows == 0;

    for (size_t i = 0; i < *n_rows && row == NULL; i++)
        if (rows[i].channel == channel && rows[i].uid == uid)
            row = &rows[i];
    if (row == NULL) {
        if (*n_rows >= D_REFUSALS_ROWS)
            return 0;
        row = &rows[(*n_rows)++];
        row->channel = channel;
        row->uid = uid;
        row->count = 0;
    }
    row->count++;
    if (first)
        *first_ms = *last_ms = now_ms;
    /* The entry says period_start <= period_end: a clock that stepped back does not undo that. */
    if (now_ms > *last_ms)
        *last_ms = now_ms;
    return 1;
}

int d_refusals_log(struct d_refusals *r, unsigned channel, uint32_t uid, uint64_t now_ms)
{
    unsigned quota;
    struct d_refusal_slot *s = slot_of(r, channel, uid, now_ms, &quota);
    struct d_refusal_summary *c = &r->suppressed;

    if (s != NULL && s->logged < quota) {
        s->logged++;
        return 1;
    }

    return count(c->rows, &c->n_rows, &c->first_ms, &c->last_ms, channel, uid, now_ms) ? 0 : -1;
}

int d_refusals_suppressed_pending(const struct d_refusals *r)
{
    return r->suppressed.n_rows > 0;
}

int d_refusals_suppressed_due(const struct d_refusals *r, uint64_t now_ms)
{
    const struct d_refusal_summary *c = &r->suppressed;

    return c->n_rows > 0 && (now_ms < c->first_ms || now_ms - c->first_ms >= D_REFUSALS_SUMMARY_MS);
}

int d_refusals_drop(struct d_refusals *r, unsigned channel, uint32_t uid, uint64_t now_ms)
{
    return count(r->rows, &r->n_rows, &r->first_ms, &r->last_ms, channel, uid, now_ms);
}

int d_refusals_pending(const struct d_refusals *r)
{
    return r->n_rows > 0;
}

int d_refusals_due(const struct d_refusals *r, uint64_t now_ms)
{
    return r->n_rows > 0 && (now_ms < r->first_ms || now_ms - r->first_ms >= D_REFUSALS_SUMMARY_MS);
}

static int row_cmp(const void *a, const void *b)
{
    const struct d_refusal_row *x = a, *y = b;
    int c = strcmp(d_refusals_channel_name(x->channel), d_refusals_channel_name(y->channel));

    if (c != 0)
        return c;
    return x->uid < y->uid ? -1 : x->uid > y->uid;
}

void d_refusals_take(struct d_refusals *r, struct d_refusal_summary *out)
{
    out->first_ms = r->first_ms;
    out->last_ms = r->last_ms;
    out->n_rows = r->n_rows;
    memcpy(out->rows, r->rows, r->n_rows * sizeof(r->rows[0]));
    qsort(out->rows, out->n_rows, sizeof(out->rows[0]), row_cmp);
    r->n_rows = 0;
    r->first_ms = r->last_ms = 0;
}

void d_refusals_take_suppressed(struct d_refusals *r, struct d_refusal_summary *out)
{
    *out = r->suppressed;
    qsort(out->rows, out->n_rows, sizeof(out->rows[0]), row_cmp);
    r->suppressed.n_rows = 0;
    r->suppressed.first_ms = r->suppressed.last_ms = 0;
}
