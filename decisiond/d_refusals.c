/*
 * d_refusals.c -- quotas of recorded refusals per (channel, uid) pair and the count of what they
 * drop (d_refusals.h).
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
    }
}

void d_refusals_init(struct d_refusals *r, const struct sworn_dconfig *cfg)
{
    memset(r, 0, sizeof(*r));
    reserve(r, 0, cfg->proxy_uids, cfg->n_proxy_uids);
    reserve(r, 1, cfg->operator_uids, cfg->n_operator_uids);
    r->n_slots = r->n_reserved;
}

int d_refusals_admit(struct d_refusals *r, unsigned channel, uint32_t uid, uint64_t now_ms)
{
    struct d_refusal_slot *s = NULL;
    unsigned quota = D_REFUSALS_PER_PEER;

    /* A new second: every quota starts again, and the strangers' slots are free. */
    if (now_ms / 1000 != r->second) {
        r->second = now_ms / 1000;
        for (size_t i = 0; i < r->n_reserved; i++)
            r->slots[i].used = 0;
        r->n_slots = r->n_reserved;
    }
    for (size_t i = 0; i < r->n_slots && s == NULL; i++)
        if (r->slots[i].channel == channel && r->slots[i].uid == uid)
            s = &r->slots[i];
    if (s == NULL || s >= r->slots + r->n_reserved)
        quota = D_REFUSALS_PER_STRANGER;
    if (s == NULL) {
        if (r->n_slots >= r->n_reserved + D_REFUSALS_STRANGERS)
            return 0; /* every stranger's slot of this second is taken */
        s = &r->slots[r->n_slots++];
        s->channel = channel;
        s->uid = uid;
        s->used = 0;
    }
    if (s->used >= quota)
        return 0;
    s->used++;
    return 1;
}

int d_refusals_drop(struct d_refusals *r, unsigned channel, uint32_t uid, uint64_t now_ms)
{
    struct d_refusal_row *row = NULL;
    int first = r->n_rows == 0;

    for (size_t i = 0; i < r->n_rows && row == NULL; i++)
        if (r->rows[i].channel == channel && r->rows[i].uid == uid)
            row = &r->rows[i];
    if (row == NULL) {
        if (r->n_rows >= D_REFUSALS_ROWS)
            return 0;
        row = &r->rows[r->n_rows++];
        row->channel = channel;
        row->uid = uid;
        row->count = 0;
    }
    row->count++;
    if (first)
        r->first_ms = r->last_ms = now_ms;
    /* The entry says period_start <= period_end: a clock that stepped back does not undo that. */
    if (now_ms > r->last_ms)
        r->last_ms = now_ms;
    return 1;
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
