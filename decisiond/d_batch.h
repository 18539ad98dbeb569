/*
 * d_batch.h -- batch receipts (`receipts: batch`, docs/formats.md section 14): the commits of a
 * group share ONE signature by the signer, and are appended in ONE transaction.
 *
 *   loop thread:  d_commit_submit hands each commit to d_batch_submit (allows and denies alike)
 *   sealer:       takes every pending commit (at most SWORN_BATCH_ITEMS_MAX, and at most
 *                 D_BATCH_BYTES_MAX bytes of packed entries) as one group, packs each entry and
 *                 its leaf hash, builds the tree of the group's allows, has the signer sign its
 *                 root once and gives each allow its receipt (d_commit_group_seal). A signature
 *                 that fails turns the group's allows into recorded denies
 *   appender:     appends the group's entries with their receipts in one transaction
 *                 (d_commit_group_append), then hands each commit back to the loop
 *   loop thread:  d_commit_group_done for each: the same end as a per-request commit (answer
 *                 only once durable, refunds, log line)
 *
 * While the appender waits for one group's fsync, the sealer signs the next, and the next after
 * that gathers in the queue: the signer and the disk each work on a group at a time, so the rate
 * is one signature and one fsync per group, whatever the group's size. Groups are appended in
 * the order they were sealed; at most D_BATCH_SEALED_MAX sealed groups wait for the appender
 * (the sealer waits beyond that: memory is bounded).
 *
 * Every commit accepted by d_batch_submit gets d_commit_group_done exactly once, on the loop
 * thread, including at d_batch_stop (which drains first).
 * Thread safety: submit, busy and stop from the loop thread only.
 */
#ifndef SWORN_D_BATCH_H
#define SWORN_D_BATCH_H

#include <stddef.h>

struct d_daemon;
struct d_commit;
struct d_batch;

#define D_BATCH_BYTES_MAX (4u << 20) /* packed entry bytes in one group */
#define D_BATCH_SEALED_MAX 2         /* sealed groups waiting for the appender */

/* Start the sealer and the appender threads of d (d->base must be thread-aware). OUT: *out. */
int d_batch_start(struct d_daemon *d, struct d_batch **out);

/* Queue c (its IN fields set). 0, or -1 (SWORN_ERR_ARG once stopping): then c is not taken. */
int d_batch_submit(struct d_batch *b, struct d_commit *c);

/* Commits queued, in a group, or not yet done. */
unsigned d_batch_busy(struct d_batch *b);

/* Finish every queued commit (their done runs here, on the loop thread), join the threads and
 * free b. NULL is allowed. */
void d_batch_stop(struct d_batch *b);

#endif
