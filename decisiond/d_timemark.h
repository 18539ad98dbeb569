/*
 * d_timemark.h -- the log's time high water and its TimeMark entries (issue 12, finding 4;
 * docs/decisiond.md, "Time marks"; docs/formats.md, "TimeMark").
 *
 * The high water is the largest time stamp (d_entry_time) of every entry in the log, in log
 * order. A TimeMark entry records it as it stood just before the mark, so that the budget replay
 * at start may stop at a mark whose high water is older than every budget window: nothing before
 * that mark can be later, whatever order the clock stamped the entries in (d_startup.c).
 *
 * Where log order is decided: the log's group commit orders concurrent appends (logstore.h). So
 * that a mark's high water covers exactly the entries before it, every append holds `order` for
 * reading across sworn_log_append_receipts and raises the high water after it succeeds; a mark
 * holds `order` for writing, so every append queued before it has returned (and raised the high
 * water) and none queues until the mark is durable. The lock prefers writers: a steady stream of
 * appends cannot starve the mark. An append that fails raises nothing, so the high water is
 * exactly the maximum of the durable entries.
 *
 * Thread safety: every call on any thread, except d_timemark_start / _stop (loop thread).
 */
#ifndef SWORN_D_TIMEMARK_H
#define SWORN_D_TIMEMARK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "entry_time.h"
#include "frame.h"

struct d_daemon;

/* Every 10 minutes of monotonic time, while entries are being appended, one periodic mark. */
#define D_TIMEMARK_PERIOD_US (10ull * 60u * 1000000u)

struct d_timemark {
    pthread_rwlock_t order; /* appends: read; a mark: write */
    pthread_mutex_t mu;     /* guards the fields below */
    int ready;              /* d_timemark_init ran */
    uint64_t high_water;    /* the largest time stamp of every durable entry (ms) */
    uint64_t since_mark;    /* entries appended since the last mark */
    uint64_t last_mark_us;  /* d_now_mono_us() when the last mark was durable */
    int pending;            /* a periodic mark is queued (loop thread only) */
    struct event *timer;    /* the 1 s tick that decides when a periodic mark is due */
};

/* Initialise t (zeroed before). 0 or -1. */
int d_timemark_init(struct d_timemark *t);
void d_timemark_destroy(struct d_timemark *t);

/* Set the high water found by the replay at start (before any append of this run). */
void d_timemark_set_high_water(struct d_daemon *d, uint64_t high_water);

/*
 * Append one packed entry with its receipt (or NULL) where log order is decided, and raise the
 * high water by its time stamp once it is durable (d_record_append's body). 0 or -1.
 */
int d_timemark_append_entry(struct d_daemon *d, const uint8_t *entry, size_t len,
                            const uint8_t *receipt, size_t receipt_len, uint64_t *index);

/*
 * As d_timemark_append_entry for n >= 1 entries in ONE transaction (a batch-receipt commit
 * group, d_batch.h): receipts[i] NULL (or receipt_lens[i] 0) for an entry without one. The high
 * water rises by the latest of their stamps. OUT: *first_index, the index of entries[0]; the
 * others follow it. 0 or -1 (nothing of them recorded).
 */
int d_timemark_append_entries(struct d_daemon *d, const uint8_t *const *entries, const size_t *lens,
                              const uint8_t *const *receipts, const size_t *receipt_lens, size_t n,
                              uint64_t *first_index);

/*
 * Append a TimeMark for reason (SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_START or _PERIODIC)
 * with the high water of every entry before it; log a `time_mark` line, and a `clock_behind`
 * warning when the clock is behind the high water. OUT: *index, *behind_ms (either may be NULL).
 * 0 or -1 (nothing appended).
 */
int d_timemark_append(struct d_daemon *d, Sworn__V1__TimeMarkReason reason, uint64_t *index,
                      uint64_t *behind_ms);

/* The periodic marks: start the tick (after the workers started; 0 or -1), and stop it. */
int d_timemark_start(struct d_daemon *d);
void d_timemark_stop(struct d_daemon *d);

#endif
