/*
 * sv_stats.c -- see sv_stats.h.
 */
#include "sv_stats.h"

#include <stdlib.h>
#include <string.h>

void sv_stats_init(struct sv_stats *st)
{
    memset(st, 0, sizeof(*st));
}

void sv_stats_free(struct sv_stats *st)
{
    free(st->hours);
    free(st->principals.slot);
    free(st->hosts.slot);
    free(st->events);
    free(st->failures);
    memset(st, 0, sizeof(*st));
}

/* The record of hour h, inserted in order when new; NULL when the bound is reached (counted in
 * hours_dropped by the caller) or memory runs out (counted in oom). Entries come in log order,
 * which is nearly time order, so the search usually ends at the last hour and the insertion
 * moves nothing; an adversarial order costs O(hours) per insertion, bounded by
 * SV_STATS_HOURS_MAX. */
static struct sv_hour *hour_at(struct sv_stats *st, uint64_t h)
{
    size_t lo = 0, hi = st->nhours;

    if (st->nhours > 0 && st->hours[st->nhours - 1].hour == h)
        return &st->hours[st->nhours - 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (st->hours[mid].hour < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < st->nhours && st->hours[lo].hour == h)
        return &st->hours[lo];
    if (st->nhours >= SV_STATS_HOURS_MAX)
        return NULL;
    if (st->nhours == st->hours_cap) {
        size_t cap = st->hours_cap == 0 ? 64 : st->hours_cap * 2;
        struct sv_hour *v;

        if (cap > SV_STATS_HOURS_MAX)
            cap = SV_STATS_HOURS_MAX;
        v = realloc(st->hours, cap * sizeof(*v));
        if (v == NULL) {
            st->oom++;
            return NULL;
        }
        st->hours = v;
        st->hours_cap = cap;
    }
    memmove(&st->hours[lo + 1], &st->hours[lo], (st->nhours - lo) * sizeof(st->hours[0]));
    memset(&st->hours[lo], 0, sizeof(st->hours[0]));
    st->hours[lo].hour = h;
    st->nhours++;
    return &st->hours[lo];
}

static void saturating_inc(uint64_t *v)
{
    if (*v != UINT64_MAX)
        (*v)++;
}

/* The hour of time_ms, with the first and last times; NULL when there is none to count in. */
static struct sv_hour *timed(struct sv_stats *st, uint64_t time_ms)
{
    struct sv_hour *h;

    if (time_ms == 0) {
        saturating_inc(&st->untimed);
        return NULL;
    }
    h = hour_at(st, time_ms / SV_HOUR_MS);
    if (h == NULL) {
        saturating_inc(&st->hours_dropped);
        return NULL;
    }
    if (st->first_ms == 0 || time_ms < st->first_ms)
        st->first_ms = time_ms;
    if (time_ms > st->last_ms)
        st->last_ms = time_ms;
    return h;
}

/* FNV-1a: the table's keys are the record's, but the table is bounded, so a collision attack
 * costs at most a probe sequence of SV_STATS_NAMES_MAX slots per name, never memory. */
static uint64_t fnv(const char *s, int cut)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)cut;

    for (; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static struct sv_name_count *name_at(struct sv_stats *st, struct sv_names *t, const char *name,
                                     int cut)
{
    size_t i;

    if (t->slot == NULL) {
        t->slot = calloc(2 * SV_STATS_NAMES_MAX, sizeof(*t->slot));
        if (t->slot == NULL) {
            st->oom++;
            return NULL;
        }
        t->nslots = 2 * SV_STATS_NAMES_MAX;
    }
    /* At most half the slots are taken, so an empty slot ends every probe. */
    for (i = (size_t)(fnv(name, cut) % t->nslots); t->slot[i].used; i = (i + 1) % t->nslots)
        if (t->slot[i].cut == cut && strcmp(t->slot[i].name, name) == 0)
            return &t->slot[i];
    if (t->n >= SV_STATS_NAMES_MAX)
        return NULL;
    t->slot[i].used = 1;
    t->slot[i].cut = cut;
    snprintf(t->slot[i].name, sizeof(t->slot[i].name), "%s", name);
    t->n++;
    return &t->slot[i];
}

static void name_count(struct sv_stats *st, struct sv_names *t, const char *name, int cut,
                       int effect)
{
    struct sv_name_count *c = name_at(st, t, name, cut);

    if (c != NULL) {
        saturating_inc(&c->effect[effect]);
    } else {
        saturating_inc(&t->other[effect]);
        saturating_inc(&t->other_names);
    }
}

static void event_add(struct sv_stats *st, enum sv_mark kind, uint64_t index, uint64_t time_ms,
                      int ok)
{
    saturating_inc(&st->events_total);
    if (st->events == NULL) {
        st->events = calloc(SV_STATS_EVENTS_MAX, sizeof(*st->events));
        if (st->events == NULL) {
            st->oom++;
            return;
        }
    }
    if (st->nevents >= SV_STATS_EVENTS_MAX)
        return;
    st->events[st->nevents].kind = kind;
    st->events[st->nevents].index = index;
    st->events[st->nevents].time_ms = time_ms;
    st->events[st->nevents].ok = ok;
    st->nevents++;
}

void sv_stats_mark(struct sv_stats *st, enum sv_mark kind, uint64_t index, uint64_t time_ms, int ok)
{
    struct sv_hour *h;

    if ((unsigned)kind >= SV_MARKS)
        return;
    saturating_inc(&st->marks[kind]);
    h = timed(st, time_ms);
    if (h != NULL)
        saturating_inc(&h->mark[kind]);
    if (kind == SV_MARK_KEY_EVENT || kind == SV_MARK_POLICY || kind == SV_MARK_STARTUP)
        event_add(st, kind, index, time_ms, ok);
}

void sv_stats_entry(struct sv_stats *st, uint64_t index, const struct sv_entry_info *info)
{
    switch (info->kind) {
    case SV_ENTRY_DECISION: {
        struct sv_hour *h;
        int e;

        if (info->effect < 1 || info->effect > 3)
            return; /* sv_entry_check accepts no other effect */
        e = info->effect - 1;
        saturating_inc(&st->decisions[e]);
        h = timed(st, info->time_unix_ms);
        if (h != NULL)
            saturating_inc(&h->effect[e]);
        name_count(st, &st->principals, info->principal, info->principal_cut, e);
        name_count(st, &st->hosts, info->host, info->host_cut, e);
        return;
    }
    case SV_ENTRY_KEY_EVENT:
        sv_stats_mark(st, SV_MARK_KEY_EVENT, index, info->time_unix_ms, 1);
        return;
    case SV_ENTRY_POLICY_LOADED:
        sv_stats_mark(st, SV_MARK_POLICY, index, info->time_unix_ms, !info->refused);
        return;
    case SV_ENTRY_STARTUP:
        sv_stats_mark(st, SV_MARK_STARTUP, index, info->time_unix_ms, 1);
        return;
    default:
        return; /* counted by the report itself (refusals, marks, reports), not drawn */
    }
}

static void copy_cut(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);

    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void sv_stats_failure(struct sv_stats *st, int check, const char *item, const char *code,
                      const char *why)
{
    struct sv_failure *f;

    saturating_inc(&st->failures_total);
    if (st->nfailures >= SV_STATS_FAILURES_MAX)
        return;
    if (st->failures == NULL) {
        /* Grown in steps: most records fail nothing, and SV_STATS_FAILURES_MAX messages are
         * over half a megabyte. */
        st->failures = calloc(16, sizeof(*st->failures));
        if (st->failures == NULL) {
            st->oom++;
            return;
        }
    } else if (st->nfailures >= 16 && (st->nfailures & (st->nfailures - 1)) == 0) {
        size_t cap =
            st->nfailures * 2 > SV_STATS_FAILURES_MAX ? SV_STATS_FAILURES_MAX : st->nfailures * 2;
        struct sv_failure *v = realloc(st->failures, cap * sizeof(*v));

        if (v == NULL) {
            st->oom++;
            return;
        }
        st->failures = v;
    }
    f = &st->failures[st->nfailures++];
    f->check = check;
    copy_cut(f->item, sizeof(f->item), item);
    copy_cut(f->code, sizeof(f->code), code);
    copy_cut(f->why, sizeof(f->why), why);
}

static uint64_t total(const struct sv_name_count *c)
{
    uint64_t t = 0;

    for (int e = 0; e < SV_EFFECTS; e++)
        t = c->effect[e] > UINT64_MAX - t ? UINT64_MAX : t + c->effect[e];
    return t;
}

static int by_total(const void *a, const void *b)
{
    const struct sv_name_count *x = *(const struct sv_name_count *const *)a;
    const struct sv_name_count *y = *(const struct sv_name_count *const *)b;
    uint64_t tx = total(x), ty = total(y);

    if (tx != ty)
        return tx > ty ? -1 : 1;
    return strcmp(x->name, y->name);
}

const struct sv_name_count **sv_names_sorted(const struct sv_names *t, size_t *n)
{
    const struct sv_name_count **v;
    size_t k = 0;

    *n = 0;
    if (t->n == 0)
        return NULL;
    v = calloc(t->n, sizeof(*v));
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < t->nslots && k < t->n; i++)
        if (t->slot[i].used)
            v[k++] = &t->slot[i];
    qsort(v, k, sizeof(*v), by_total);
    *n = k;
    return v;
}
