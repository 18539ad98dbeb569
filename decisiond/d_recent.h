/*
 * d_recent.h -- the allows that released a credential and were not yet exchanged, newest last (a
 * ring of D_RECENT_ALLOWS). A TokenExchange may only store tokens under a credential that such
 * an allow released for the request it names, so a confused or compromised proxy cannot widen a
 * credential's use by minting under another one; and each allow backs at most one exchange
 * (d_recent_take consumes it), so one allow cannot be replayed to mint again and again.
 *
 * An allow stays exchangeable for D_RECENT_TTL_MS of the monotonic clock after its answer, then
 * is gone; so is one pushed out of the ring by D_RECENT_ALLOWS newer ones. The table lives in
 * memory only: a restart forgets every pending allow, so an allow answered before a restart is
 * never exchangeable after it (fails closed: the proxy's client repeats its token request).
 *
 * The caller owns the table (it lives in struct d_daemon); no allocation. Loop thread only,
 * which is what makes a take atomic: two exchanges naming one allow are handled one after the
 * other, and only the first finds it.
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
    uint64_t log_index; /* the allow's entry */
    uint64_t mono_ms;   /* when it was answered (monotonic clock); 0: an empty or used slot */
};

struct d_recent_allows {
    struct d_recent_allow ring[D_RECENT_ALLOWS];
    size_t next;
};

/*
 * Remember that request_id's allow (entry log_index) released credential_id, answered at
 * now_mono_ms (monotonic, > 0); the oldest slot goes.
 */
void d_recent_remember(struct d_recent_allows *t, const char *request_id, const char *credential_id,
                       uint64_t log_index, uint64_t now_mono_ms);

/*
 * Consume the allow that released credential_id for request_id, answered at most D_RECENT_TTL_MS
 * before now_mono_ms and not taken before: returns 1 and its entry's index in *log_index, after
 * which that allow is gone; 0 when there is none (nothing changes). When one request id was
 * allowed several times (each its own entry), each take consumes one of them, the oldest first.
 */
int d_recent_take(struct d_recent_allows *t, const char *request_id, const char *credential_id,
                  uint64_t now_mono_ms, uint64_t *log_index);

#endif
