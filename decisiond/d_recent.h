/*
 * d_recent.h -- the allows that released a credential, newest last (a ring of
 * D_RECENT_ALLOWS, each valid for D_RECENT_TTL_MS). A TokenExchange may only store tokens under
 * a credential that a recent allow released for the request it names, so a confused or
 * compromised proxy cannot widen a credential's use by minting under another one.
 *
 * The caller owns the table (it lives in struct d_daemon); no allocation. Loop thread only.
 */
#ifndef SWORN_D_RECENT_H
#define SWORN_D_RECENT_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

#define D_RECENT_ALLOWS 1024
#define D_RECENT_TTL_MS (10u * 60u * 1000u)

struct d_recent_allow {
    char request_id[SWORN_FRAME_ID_MAX + 1];
    char credential_id[SWORN_FRAME_ID_MAX + 1];
    uint64_t time_ms; /* 0: an empty slot */
};

struct d_recent_allows {
    struct d_recent_allow ring[D_RECENT_ALLOWS];
    size_t next;
};

/* Remember that request_id's allow released credential_id at now (ms); the oldest slot goes. */
void d_recent_remember(struct d_recent_allows *t, const char *request_id, const char *credential_id,
                       uint64_t now);

/* Did an allow of the last D_RECENT_TTL_MS release credential_id for request_id? 1 or 0. */
int d_recent_was_allowed(const struct d_recent_allows *t, const char *request_id,
                         const char *credential_id, uint64_t now);

#endif
