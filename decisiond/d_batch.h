/*
 * d_batch.h -- batch receipts (`receipts: batch`, docs/formats.md section 14): the commits of a
 * group share ONE signature by the signer, and are appended in ONE transaction.
 *
 * d_batch is the pipeline only: it gathers items, hands groups to the caller's operations
 * (struct d_batch_ops) on its threads, and gives each item back on the loop thread. What an item
 * is, how it is signed and appended, is the caller's (d_commit.c: decisions).
 *
 *   loop thread:  d_batch_submit queues each item (allows and denies alike)
 *   sealer:       takes every pending item (at most SWORN_BATCH_ITEMS_MAX, and at most
 *                 D_BATCH_BYTES_MAX bytes as ops->pack reports them) as one group, packing each
 *                 as it goes, then ops->seal: the tree of the group's allows, ONE signature over
 *                 its root, each allow's receipt. A signature that fails turns the group's
 *                 allows into recorded denies
 *   appender:     ops->append: the group's entries with their receipts in one transaction
 *   loop thread:  ops->done for each item: the same end as a per-request commit (answer only
 *                 once durable, refunds, log line)
 *
 * While the appender waits for one group's fsync, the sealer signs the next, and the next after
 * that gathers in the queue: the signer and the disk each work on a group at a time, so the rate
 * is one signature and one fsync per group, whatever the group's size. Groups are appended in
 * the order they were sealed; at most D_BATCH_SEALED_MAX sealed groups wait for the appender
 * (the sealer waits beyond that: memory is bounded).
 *
 * Every item accepted by d_batch_submit gets ops->done exactly once, on the loop thread,
 * including at d_batch_stop (which drains first).
 * Thread safety: submit, busy and stop from the loop thread only.
 */
#ifndef SWORN_D_BATCH_H
#define SWORN_D_BATCH_H

#include <stddef.h>

#include "d_batchtree.h"

struct event_base;
struct d_batch;

#define D_BATCH_BYTES_MAX (4u << 20) /* packed entry bytes in one group */
#define D_BATCH_SEALED_MAX 2         /* sealed groups waiting for the appender */

/* What d_batch keeps in each item: the caller embeds it in its own job (container_of). */
struct d_batch_item {
    struct d_batch_item *next; /* d_batch's lists */
    size_t bytes;              /* set by ops->pack: the packed entry's size */
};

/* The caller's operations, each called on the thread named. */
struct d_batch_ops {
    /* Sealer: pack the item's entry and set it->bytes. 0, or -1 with the item failed (its
     * done still follows). */
    int (*pack)(struct d_batch_item *it);
    /* Sealer: the item failed with sworn_err's error before it was packed (out of memory). */
    void (*fail)(struct d_batch_item *it);
    /* Sealer: sign the group (t: scratch for its tree) and set each allow's receipt. */
    void (*seal)(struct d_batch_item *const *g, size_t n, struct d_batchtree *t);
    /* Appender: append the group in one transaction (each item recorded, or failed). */
    void (*append)(struct d_batch_item *const *g, size_t n);
    /* Loop thread, exactly once per submitted item, last. */
    void (*done)(struct d_batch_item *it);
};

/* Start the sealer and the appender threads; done runs on base's loop (base must be
 * thread-aware). ops outlives the batch. OUT: *out. */
int d_batch_start(struct event_base *base, const struct d_batch_ops *ops, struct d_batch **out);

/* Queue it. 0, or -1 (SWORN_ERR_ARG once stopping): then it is not taken. */
int d_batch_submit(struct d_batch *b, struct d_batch_item *it);

/* Items queued, in a group, or not yet done. */
unsigned d_batch_busy(struct d_batch *b);

/* Finish every queued item (their done runs here, on the loop thread), join the threads and
 * free b. NULL is allowed. */
void d_batch_stop(struct d_batch *b);

#endif
