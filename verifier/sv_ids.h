/*
 * sv_ids.h -- the request ids of one start, as decisiond remembers them (docs/verifier.md,
 * check `request-ids`; decisiond/d_seen.h is the recording side's table, which this mirrors
 * without sharing code).
 *
 * decisiond takes a request's id before the policy runs and refuses an id that is among the last
 * SV_IDS_WINDOW ids it took in this start, or that an escalation still holds (those exactly,
 * however old). A refused id is recorded as a DENY decision with no rule and takes nothing. The
 * table starts empty at each start. So, within one start, a decision whose id is "live" here
 * must be such a deny, and any other decision takes its id.
 *
 * Ids are kept as 16 bytes of SHA-256(salt || id) with a random salt per table, so that a record
 * cannot choose ids that all fall into one bucket (a collision only makes two ids look alike: a
 * false failure, never a pass). Memory: at most SV_IDS_WINDOW ids of 16 bytes plus an index of
 * 2 * SV_IDS_WINDOW 4-byte slots, 1.5 MiB, allocated at the first id, and 17 to 68 bytes per
 * held id.
 */
#ifndef SV_IDS_H
#define SV_IDS_H

#include <stddef.h>

#define SV_IDS_WINDOW 65536u /* decisiond's D_SEEN_IDS */

struct sv_ids;

/* A new, empty table. NULL when memory or randomness runs out. */
struct sv_ids *sv_ids_new(void);
void sv_ids_free(struct sv_ids *t);
/* Forget every id (a new start of decisiond). */
void sv_ids_reset(struct sv_ids *t);

/* 1 when id is live (among the last SV_IDS_WINDOW taken, or held), else 0. */
int sv_ids_live(const struct sv_ids *t, const char *id);
/* Take id (it must not be live): it becomes the newest; the oldest goes when SV_IDS_WINDOW are
 * kept. held: an escalation now holds it, and it stays live until sv_ids_release, however many
 * ids follow. 0, or -1 out of memory. */
int sv_ids_take(struct sv_ids *t, const char *id, int held);
/* The escalation of id (live) was resolved: it is no longer held. */
void sv_ids_release(struct sv_ids *t, const char *id);

#endif
