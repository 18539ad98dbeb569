/*
 * d_workq.c -- worker threads with completions on the event loop (contract in d_workq.h).
 *
 * Two queues: `todo` (jobs for the workers, FIFO) and `finished` (jobs whose work is done, for
 * the loop). A worker that finishes a job appends it to `finished` and activates `wake`, an event
 * on the loop's base; its callback runs every finished job's done().
 */
#include "d_workq.h"

#include <pthread.h>
#include <stdlib.h>

#include "err.h"

#define WORKQ_MAX_THREADS 64

struct job {
    d_work_fn work, done;
    void *arg;
    struct job *next;
};

struct d_workq {
    struct event_base *base;
    struct event *wake;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct job *todo_head, *todo_tail;
    struct job *finished_head, *finished_tail;
    unsigned busy; /* submitted and not yet done */
    int stopping;
    unsigned n_threads;
    pthread_t threads[WORKQ_MAX_THREADS];
};

static void push(struct job **head, struct job **tail, struct job *j)
{
    j->next = NULL;
    if (*tail != NULL)
        (*tail)->next = j;
    else
        *head = j;
    *tail = j;
}

static void *worker(void *arg)
{
    struct d_workq *q = arg;

    pthread_mutex_lock(&q->lock);
    for (;;) {
        struct job *j;

        while (q->todo_head == NULL && !q->stopping)
            pthread_cond_wait(&q->cond, &q->lock);
        if (q->todo_head == NULL)
            break; /* stopping and nothing left */
        j = q->todo_head;
        q->todo_head = j->next;
        if (q->todo_head == NULL)
            q->todo_tail = NULL;
        pthread_mutex_unlock(&q->lock);
        j->work(j->arg);
        pthread_mutex_lock(&q->lock);
        push(&q->finished_head, &q->finished_tail, j);
        event_active(q->wake, EV_READ, 0);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* Run done() for every finished job, on the loop thread. */
static void run_finished(struct d_workq *q)
{
    for (;;) {
        struct job *j;

        pthread_mutex_lock(&q->lock);
        j = q->finished_head;
        if (j != NULL) {
            q->finished_head = j->next;
            if (q->finished_head == NULL)
                q->finished_tail = NULL;
        }
        pthread_mutex_unlock(&q->lock);
        if (j == NULL)
            return;
        j->done(j->arg);
        pthread_mutex_lock(&q->lock);
        q->busy--;
        pthread_mutex_unlock(&q->lock);
        free(j);
    }
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    run_finished(arg);
}

int d_workq_start(struct event_base *base, unsigned n, struct d_workq **out)
{
    struct d_workq *q;

    if (n < 1 || n > WORKQ_MAX_THREADS)
        return sworn_err_set(SWORN_ERR_ARG, "workers: %u is outside 1..%d", n, WORKQ_MAX_THREADS);
    q = calloc(1, sizeof(*q));
    if (q == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "workers: out of memory");
    q->base = base;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cond, NULL);
    q->wake = event_new(base, -1, 0, on_wake, q);
    if (q->wake == NULL) {
        d_workq_stop(q);
        return sworn_err_set(SWORN_ERR_NOMEM, "workers: cannot make the wake event");
    }
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&q->threads[i], NULL, worker, q) != 0) {
            d_workq_stop(q);
            return sworn_err_set(SWORN_ERR_IO, "workers: cannot start thread %u", i);
        }
        q->n_threads++;
    }
    *out = q;
    return 0;
}

int d_workq_submit(struct d_workq *q, d_work_fn work, d_work_fn done, void *arg)
{
    struct job *j = malloc(sizeof(*j));

    if (j == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "workers: out of memory");
    j->work = work;
    j->done = done;
    j->arg = arg;
    pthread_mutex_lock(&q->lock);
    if (q->stopping) {
        pthread_mutex_unlock(&q->lock);
        free(j);
        return sworn_err_set(SWORN_ERR_ARG, "workers: stopping");
    }
    push(&q->todo_head, &q->todo_tail, j);
    q->busy++;
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->lock);
    return 0;
}

unsigned d_workq_busy(struct d_workq *q)
{
    unsigned n;

    pthread_mutex_lock(&q->lock);
    n = q->busy;
    pthread_mutex_unlock(&q->lock);
    return n;
}

void d_workq_stop(struct d_workq *q)
{
    if (q == NULL)
        return;
    pthread_mutex_lock(&q->lock);
    q->stopping = 1;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
    for (unsigned i = 0; i < q->n_threads; i++)
        pthread_join(q->threads[i], NULL);
    run_finished(q); /* the workers drained `todo` before they ended */
    if (q->wake != NULL)
        event_free(q->wake);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->cond);
    free(q);
}
