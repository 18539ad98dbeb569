/*
 * watchdog.c -- the worker-thread watchdog of watchdog.h.
 *
 * Each worker has a heap-allocated state shared by the worker thread and the caller, with a
 * reference count of two. Whoever lets go last frees it: the caller on free or abandonment, the
 * worker when it exits. So an abandoned worker that finally returns from a hung call finds its
 * state still valid, records that it is done, and frees it.
 */
#include "watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"

struct worker {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int queued; /* a call waits for the worker */
    int done;   /* the last call returned */
    int quit;   /* the worker exits when idle, or when its current call returns */
    int refs;
    int (*fn)(void *);
    void *arg;
    int rc;
    enum sworn_err_code code;
    char msg[SWORN_ERR_MSG_MAX];
};

struct sworn_watchdog {
    int inline_calls;         /* run calls in the caller's thread (sworn_watchdog_set_inline) */
    struct worker *w;         /* the current worker, or NULL */
    struct worker *abandoned; /* the last worker left inside a call, or NULL */
};

static void worker_unref(struct worker *w)
{
    int last;

    pthread_mutex_lock(&w->m);
    last = --w->refs == 0;
    pthread_mutex_unlock(&w->m);
    if (last) {
        pthread_mutex_destroy(&w->m);
        pthread_cond_destroy(&w->cv);
        free(w);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;

    pthread_mutex_lock(&w->m);
    for (;;) {
        while (!w->queued && !w->quit)
            pthread_cond_wait(&w->cv, &w->m);
        if (!w->queued)
            break;
        w->queued = 0;
        pthread_mutex_unlock(&w->m);
        sworn_err_clear();
        int rc = w->fn(w->arg);
        pthread_mutex_lock(&w->m);
        w->rc = rc;
        w->code = sworn_err_code();
        snprintf(w->msg, sizeof(w->msg), "%s", sworn_err_msg());
        w->done = 1;
        if (w->quit) {
            /* Abandoned: wake a caller waiting for it to return (sworn_watchdog_wait_idle). */
            pthread_cond_broadcast(&w->cv);
            break;
        }
        /* Wake the caller after unlocking, so that it does not wake only to block on the mutex. */
        pthread_mutex_unlock(&w->m);
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_lock(&w->m);
    }
    pthread_mutex_unlock(&w->m);
    worker_unref(w);
    return NULL;
}

static struct worker *worker_start(void)
{
    struct worker *w = calloc(1, sizeof(*w));
    pthread_attr_t attr;
    pthread_t t;

    pthread_condattr_t ca;
    sigset_t all, old;
    int rc;

    if (w == NULL)
        return NULL;
    pthread_mutex_init(&w->m, NULL);
    /* Deadlines on the monotonic clock: a change of the wall clock must not stretch a timeout. */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    w->refs = 2;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* The worker is born with every signal blocked, so that signals meant for the process (and a
     * SIGPIPE from a device socket) are handled by the caller's threads, never inside a device
     * library. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&t, &attr, worker_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_attr_destroy(&attr);
        pthread_mutex_destroy(&w->m);
        pthread_cond_destroy(&w->cv);
        free(w);
        return NULL;
    }
    pthread_attr_destroy(&attr);
    return w;
}

int sworn_watchdog_new(struct sworn_watchdog **out)
{
    struct sworn_watchdog *wd = calloc(1, sizeof(*wd));

    if (wd == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "watchdog: out of memory");
    *out = wd;
    return 0;
}

/* OUT: *deadline, timeout_ms from now on the monotonic clock (the condition variables' clock). */
static void deadline_after(unsigned timeout_ms, struct timespec *deadline)
{
    clock_gettime(CLOCK_MONOTONIC, deadline);
    deadline->tv_sec += timeout_ms / 1000;
    deadline->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline->tv_nsec >= 1000000000L) {
        deadline->tv_sec++;
        deadline->tv_nsec -= 1000000000L;
    }
}

/* Tell a worker to quit once it is idle, or once its current call returns. */
static void worker_quit(struct worker *w)
{
    pthread_mutex_lock(&w->m);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->m);
    worker_unref(w);
}

int sworn_watchdog_run(struct sworn_watchdog *wd, int (*fn)(void *arg), void *arg,
                       unsigned timeout_ms)
{
    struct worker *w;
    struct timespec deadline;
    int rc = 0;

    if (wd->inline_calls)
        return fn(arg);
    if (wd->w == NULL && (wd->w = worker_start()) == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "watchdog: cannot start a worker thread");
    w = wd->w;
    deadline_after(timeout_ms, &deadline);
    pthread_mutex_lock(&w->m);
    w->fn = fn;
    w->arg = arg;
    w->done = 0;
    w->queued = 1;
    pthread_mutex_unlock(&w->m);
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_lock(&w->m);
    while (!w->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cv, &w->m, &deadline);
    if (w->done) {
        int result = w->rc;
        enum sworn_err_code code = w->code;
        char msg[SWORN_ERR_MSG_MAX];

        snprintf(msg, sizeof(msg), "%s", w->msg);
        pthread_mutex_unlock(&w->m);
        if (result < 0)
            sworn_err_set(code, "%s", msg);
        return result;
    }
    /* Deadline passed: abandon this worker inside its call. It quits when the call returns. */
    w->quit = 1;
    pthread_mutex_unlock(&w->m);
    if (wd->abandoned != NULL)
        worker_unref(wd->abandoned);
    wd->abandoned = w; /* keeps our reference, to ask sworn_watchdog_busy later */
    wd->w = NULL;
    return sworn_err_set(SWORN_ERR_IO, "device call did not return within %u ms (abandoned)",
                         timeout_ms);
}

void sworn_watchdog_set_inline(struct sworn_watchdog *wd, int on)
{
    wd->inline_calls = on;
}

int sworn_watchdog_busy(struct sworn_watchdog *wd)
{
    int busy;

    if (wd->abandoned == NULL)
        return 0;
    pthread_mutex_lock(&wd->abandoned->m);
    /* The worker sets DONE when its call returns, even after being told to quit. */
    busy = !wd->abandoned->done;
    pthread_mutex_unlock(&wd->abandoned->m);
    if (!busy) {
        worker_unref(wd->abandoned);
        wd->abandoned = NULL;
    }
    return busy;
}

int sworn_watchdog_wait_idle(struct sworn_watchdog *wd, unsigned timeout_ms)
{
    struct worker *w = wd->abandoned;
    struct timespec deadline;
    int rc = 0;

    if (w == NULL)
        return 0;
    deadline_after(timeout_ms, &deadline);
    pthread_mutex_lock(&w->m);
    while (!w->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cv, &w->m, &deadline);
    pthread_mutex_unlock(&w->m);
    return sworn_watchdog_busy(wd);
}

void sworn_watchdog_free(struct sworn_watchdog *wd)
{
    if (wd == NULL)
        return;
    if (wd->w != NULL)
        worker_quit(wd->w);
    if (wd->abandoned != NULL)
        worker_unref(wd->abandoned);
    free(wd);
}
