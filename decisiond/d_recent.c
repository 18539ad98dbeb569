/*
 * d_recent.c -- the table of allows not yet exchanged (d_recent.h). A linear scan of 1024 slots:
 * a token exchange follows a token endpoint's allow, which is rare next to decisions.
 */
#include "d_recent.h"

#include <stdio.h>
#include <string.h>

void d_recent_remember(struct d_recent_allows *t, const char *request_id, const char *credential_id,
                       uint64_t log_index, uint64_t now_mono_ms)
{
    struct d_recent_allow *r = &t->ring[t->next++ % D_RECENT_ALLOWS];

    snprintf(r->request_id, sizeof(r->request_id), "%s", request_id);
    snprintf(r->credential_id, sizeof(r->credential_id), "%s", credential_id);
    r->log_index = log_index;
    r->mono_ms = now_mono_ms != 0 ? now_mono_ms : 1;
}

int d_recent_take(struct d_recent_allows *t, const char *request_id, const char *credential_id,
                  uint64_t now_mono_ms, uint64_t *log_index)
{
    struct d_recent_allow *best = NULL;

    for (size_t i = 0; i < D_RECENT_ALLOWS; i++) {
        struct d_recent_allow *r = &t->ring[i];

        /* A slot from the future (cannot happen with a monotonic clock) is not trusted. */
        if (r->mono_ms == 0 || r->mono_ms > now_mono_ms ||
            now_mono_ms - r->mono_ms > D_RECENT_TTL_MS)
            continue;
        if (strcmp(r->request_id, request_id) != 0 || strcmp(r->credential_id, credential_id) != 0)
            continue;
        if (best == NULL || r->log_index < best->log_index)
            best = r;
    }
    if (best == NULL)
        return 0;
    *log_index = best->log_index;
    best->mono_ms = 0; /* used: never again */
    return 1;
}
