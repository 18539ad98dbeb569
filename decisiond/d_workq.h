/*
 * d_workq.h -- the recording threads: work that blocks (signing through the signer process,
 * appending to the log and waiting for its fsync) runs here, off the event loop, and each job's
 * completion runs back on the event loop thread.
 *
 * Several workers append at once, so the log's group commit (logstore.h) gathers their entries
 * into one transaction: with N workers up to N decisions share one fsync.
 *
 * A job is { work(arg) on a worker thread, then done(arg) on the loop thread }. Jobs start in
 * submission order; they may finish in any order. done runs exactly once for every job that
 * d_workq_submit accepted, including at shutdown (d_workq_stop drains the queue first).
 *
 * Thread safety: submit and stop are called from the loop thread only.
 */
#ifndef SWORN_D_WORKQ_H
#define SWORN_D_WORKQ_H

#include <event2/event.h>

struct d_workq;

typedef void (*d_work_fn)(void *arg);

/*
 * Start n (1..64) worker threads whose completions run on base (which must have been made
 * thread-aware with evthread_use_pthreads before it was created). OUT: *out. 0 or -1.
 */
int d_workq_start(struct event_base *base, unsigned n, struct d_workq **out);

/* Queue a job. Returns 0, or -1 (SWORN_ERR_NOMEM, or SWORN_ERR_ARG once stopping). */
int d_workq_submit(struct d_workq *q, d_work_fn work, d_work_fn done, void *arg);

/* Jobs queued or running. */
unsigned d_workq_busy(struct d_workq *q);

/*
 * Finish every queued job (their done callbacks run here, on the calling loop thread), join the
 * workers and free q. NULL is allowed.
 */
void d_workq_stop(struct d_workq *q);

#endif
