/*
 * watchdog.h -- run a device call on a worker thread and stop waiting for it after a deadline, so
 * that a hung HSM or TPM becomes an error in the caller instead of a hung caller.
 *
 * A call that misses its deadline cannot be cancelled: its worker thread is abandoned, still
 * inside the device library, and the memory it was handed must stay valid until it returns (the
 * watchdog keeps its own state alive; `arg` is the caller's responsibility: treat it as in use).
 * The next call starts a fresh worker. sworn_watchdog_busy() tells whether an abandoned call is
 * still inside the library, which a backend must know before it tears the library down.
 *
 * Thread safety: one watchdog is used by one caller thread at a time.
 */
#ifndef SWORN_WATCHDOG_H
#define SWORN_WATCHDOG_H

struct sworn_watchdog;

/* OUT: *out. Returns 0, or -1 (SWORN_ERR_NOMEM). */
int sworn_watchdog_new(struct sworn_watchdog **out);

/*
 * Run fn(arg) on the worker and wait at most timeout_ms. Returns fn's value, with fn's sworn_err
 * copied into the caller's thread; or -1 with SWORN_ERR_IO when the deadline passed.
 */
int sworn_watchdog_run(struct sworn_watchdog *w, int (*fn)(void *arg), void *arg,
                       unsigned timeout_ms);

/*
 * Run calls inline from now on: sworn_watchdog_run calls fn in the caller's thread and ignores the
 * deadline. Only for a process where something else enforces the deadline: the signer process,
 * whose parent kills a child that misses a request's deadline. Saves a thread handoff (two
 * context switches) per device call.
 */
void sworn_watchdog_set_inline(struct sworn_watchdog *w, int on);

/* 1 while a call abandoned after its deadline has not returned yet. */
int sworn_watchdog_busy(struct sworn_watchdog *w);

/*
 * Wait at most timeout_ms for an abandoned call to return. Returns what sworn_watchdog_busy
 * then says: 0 when no abandoned call is left inside the library, 1 when one still is.
 */
int sworn_watchdog_wait_idle(struct sworn_watchdog *w, unsigned timeout_ms);

/* Stop the worker; an abandoned worker is left to free itself when its call returns. */
void sworn_watchdog_free(struct sworn_watchdog *w);

#endif
