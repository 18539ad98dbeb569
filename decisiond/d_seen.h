/*
 * d_seen.h -- the request ids decisiond has taken for a decision: the last D_SEEN_IDS of them,
 * so that an id the proxy sends twice is refused instead of being taken for the first request
 * (docs/decisiond.md section 2, "Request ids"; the review's finding 2: an operator's approval
 * was redirected to a second request that reused a held one's id).
 *
 * What "seen" means, exactly: an id is seen from the moment decisiond takes it for a decision
 * (before the policy runs, whatever the decision or its recording turns out to be) until
 * D_SEEN_IDS more ids have been taken after it. There is no time window: an id is never reused
 * while it is among the last D_SEEN_IDS, however long ago that was. When the table is full the
 * oldest id goes (a ring), so memory is fixed: D_SEEN_IDS digests of 32 bytes plus the index,
 * about 2.8 MiB, allocated once. The table starts empty at each start of decisiond; the ids
 * held for an operator are checked separately and exactly (d_escalate.h), so eviction never
 * lets a held id be reused.
 *
 * Ids are kept as SHA-256(salt || SHA-256(id)) with a random salt of this table: 32 bytes whatever
 * the id's length, and a proxy cannot choose ids that all fall into one bucket of the index (a
 * chain of 65536 compares per request), since it does not know the salt.
 *
 * Loop thread only. No allocation after d_seen_new.
 */
#ifndef SWORN_D_SEEN_H
#define SWORN_D_SEEN_H

#include <stdint.h>

#define D_SEEN_IDS 65536u /* ids remembered; a power of two */

struct d_seen_ids;

/* A new, empty table. 0, or -1 with sworn_err set (SWORN_ERR_NOMEM, SWORN_ERR_IO: no salt). */
int d_seen_new(struct d_seen_ids **out);
/* NULL is allowed. */
void d_seen_free(struct d_seen_ids *t);

/*
 * Take request_id (a NUL-terminated string): 1 when it is among the last D_SEEN_IDS ids taken
 * (the table is unchanged), 0 when it was not (it is remembered now, and the oldest id goes when
 * the table is full).
 */
int d_seen_take(struct d_seen_ids *t, const char *request_id);

/* How many ids were taken since d_seen_new (at most D_SEEN_IDS of them are remembered). */
uint64_t d_seen_count(const struct d_seen_ids *t);

#endif
