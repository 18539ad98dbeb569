/*
 * d_recent.c -- the recently-allowed table (d_recent.h). A linear scan of 1024 slots: a token
 * exchange follows a token endpoint's allow, which is rare next to decisions.
 */
#include "d_recent.h"

#include <stdio.h>
#include <string.h>

void d_recent_remember(struct d_recent_allows *t, const char *request_id, const char *credential_id,
                       uint64_t now)
{
    struct d_recent_allow *r = &t->ring[t->next++ % D_RECENT_ALLOWS];

    snprintf(r->request_id, sizeof(r->request_id), "%s", request_id);
    snprintf(r->credential_id, sizeof(r->credential_id), "%s", credential_id);
    r->time_ms = now;
}

int d_recent_was_allowed(const struct d_recent_allows *t, const char *request_id,
                         const char *credential_id, uint64_t now)
{
    for (size_t i = 0; i < D_RECENT_ALLOWS; i++) {
        const struct d_recent_allow *r = &t->ring[i];

        if (r->time_ms != 0 && now - r->time_ms <= D_RECENT_TTL_MS &&
            strcmp(r->request_id, request_id) == 0 && strcmp(r->credential_id, credential_id) == 0)
            return 1;
    }
    return 0;
}
