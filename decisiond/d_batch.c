/*
 * d_batch.c -- the batch-receipt pipeline: gather, seal (one signature), append (one
 * transaction), done on the loop (contract in d_batch.h).
 *
 * Three lists under one mutex: `pending` (submitted commits, FIFO), `sealed` (groups signed and
 * waiting for the appender, FIFO, at most D_BATCH_SEALED_MAX) and `finished` (commits durable or
 * failed, for the loop, woken through `wake`). The lists chain items through their `next`; a
 * group is an array of items.
 */
#include "d_batch.h"

#include <pthread.h>
#include <stdlib.h>

#include <event2/event.h>

#include "err.h"

struct group {
    struct d_batch_item *c[SWORN_BATCH_ITEMS_MAX];
    size_t n;
    struct group *next;
};

struct d_batch {
    const struct d_batch_ops *ops;
    struct event *wake;
    pthread_mutex_t lock;
    /* Each thread waits on its own condition, and is woken only when it waits: a busy sealer is
     * not woken for every commit submitted while it signs. */
    pthread_cond_t sealer_cond;   /* pending grew, room in sealed, or stopping */
    pthread_cond_t appender_cond; /* sealed grew, or the sealer ended */
    int sealer_waiting;
    struct d_batch_item *pending_head, *pending_tail;
    struct group *sealed_head, *sealed_tail;
    unsigned n_sealed;
    struct d_batch_item *finished_head, *finished_tail;
    unsigned busy;
    int stopping, sealer_done;
    int started_sealer, started_appender;
    pthread_t sealer, appender;
    struct d_batchtree tree; /* the sealer's */
};

static void push_item(struct d_batch_item **head, struct d_batch_item **tail,
                      struct d_batch_item *c)
{
    c->next = NULL;
    if (*tail != NULL)
        (*tail)->next = c;
    else
        *head = c;
    *tail = c;
}

/* Lock held: hand an item to the loop. */
static void finish_locked(struct d_batch *b, struct d_batch_item *c)
{
    push_item(&b->finished_head, &b->finished_tail, c);
    event_active(b->wake, EV_READ, 0);
}

/*
 * Sealer: move pending commits into g, packing each as it goes (the byte bound is on packed
 * entries); one that cannot be packed is finished at once (its ErrorFrame). Lock held on entry
 * and exit.
 */
static void take_group(struct d_batch *b, struct group *g)
{
    size_t bytes = 0;

    while (b->pending_head != NULL && g->n < SWORN_BATCH_ITEMS_MAX && bytes < D_BATCH_BYTES_MAX) {
        struct d_batch_item *c = b->pending_head;
        int rc;

        b->pending_head = c->next;
        if (b->pending_head == NULL)
            b->pending_tail = NULL;
        pthread_mutex_unlock(&b->lock);
        rc = b->ops->pack(c);
        pthread_mutex_lock(&b->lock);
        if (rc == 0) {
            g->c[g->n++] = c;
            bytes += c->bytes;
        } else {
            finish_locked(b, c);
        }
    }
}

static void *sealer_main(void *arg)
{
    struct d_batch *b = arg;

    pthread_mutex_lock(&b->lock);
    for (;;) {
        struct group *g;

        while (b->pending_head == NULL && !b->stopping) {
            b->sealer_waiting = 1;
            pthread_cond_wait(&b->sealer_cond, &b->lock);
            b->sealer_waiting = 0;
        }
        if (b->pending_head == NULL)
            break; /* stopping and nothing left */
        pthread_mutex_unlock(&b->lock);
        g = calloc(1, sizeof(*g));
        pthread_mutex_lock(&b->lock);
        if (g == NULL) {
            /* Fail closed, one commit at a time: its ErrorFrame is a deny. */
            struct d_batch_item *c = b->pending_head;

            b->pending_head = c->next;
            if (b->pending_head == NULL)
                b->pending_tail = NULL;
            sworn_err_set(SWORN_ERR_NOMEM, "batch receipts: out of memory");
            b->ops->fail(c);
            finish_locked(b, c);
            continue;
        }
        take_group(b, g);
        if (g->n == 0) {
            free(g);
            continue;
        }
        pthread_mutex_unlock(&b->lock);
        b->ops->seal(g->c, g->n, &b->tree);
        pthread_mutex_lock(&b->lock);
        while (b->n_sealed >= D_BATCH_SEALED_MAX) {
            b->sealer_waiting = 1;
            pthread_cond_wait(&b->sealer_cond, &b->lock);
            b->sealer_waiting = 0;
        }
        g->next = NULL;
        if (b->sealed_tail != NULL)
            b->sealed_tail->next = g;
        else
            b->sealed_head = g;
        b->sealed_tail = g;
        b->n_sealed++;
        pthread_cond_signal(&b->appender_cond);
    }
    b->sealer_done = 1;
    pthread_cond_signal(&b->appender_cond);
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

static void *appender_main(void *arg)
{
    struct d_batch *b = arg;

    pthread_mutex_lock(&b->lock);
    for (;;) {
        struct group *g;

        while (b->sealed_head == NULL && !b->sealer_done)
            pthread_cond_wait(&b->appender_cond, &b->lock);
        g = b->sealed_head;
        if (g == NULL)
            break; /* the sealer ended and every group is appended */
        b->sealed_head = g->next;
        if (b->sealed_head == NULL)
            b->sealed_tail = NULL;
        b->n_sealed--;
        if (b->sealer_waiting)
            pthread_cond_signal(&b->sealer_cond); /* room for the sealer */
        pthread_mutex_unlock(&b->lock);
        b->ops->append(g->c, g->n);
        pthread_mutex_lock(&b->lock);
        for (size_t i = 0; i < g->n; i++)
            finish_locked(b, g->c[i]);
        free(g);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* Loop thread: the end of every finished commit. */
static void run_finished(struct d_batch *b)
{
    for (;;) {
        struct d_batch_item *c;

        pthread_mutex_lock(&b->lock);
        c = b->finished_head;
        if (c != NULL) {
            b->finished_head = c->next;
            if (b->finished_head == NULL)
                b->finished_tail = NULL;
            b->busy--;
        }
        pthread_mutex_unlock(&b->lock);
        if (c == NULL)
            return;
        b->ops->done(c);
    }
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    run_finished(arg);
}

int d_batch_start(struct event_base *base, const struct d_batch_ops *ops, struct d_batch **out)
{
    struct d_batch *b = calloc(1, sizeof(*b));

    if (b == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "batch receipts: out of memory");
    b->ops = ops;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->sealer_cond, NULL);
    pthread_cond_init(&b->appender_cond, NULL);
    b->wake = event_new(base, -1, 0, on_wake, b);
    if (b->wake == NULL) {
        d_batch_stop(b);
        return sworn_err_set(SWORN_ERR_NOMEM, "batch receipts: cannot make the wake event");
    }
    if (pthread_create(&b->sealer, NULL, sealer_main, b) != 0) {
        d_batch_stop(b);
        return sworn_err_set(SWORN_ERR_IO, "batch receipts: cannot start the sealer");
    }
    b->started_sealer = 1;
    if (pthread_create(&b->appender, NULL, appender_main, b) != 0) {
        d_batch_stop(b);
        return sworn_err_set(SWORN_ERR_IO, "batch receipts: cannot start the appender");
    }
    b->started_appender = 1;
    *out = b;
    return 0;
}

int d_batch_submit(struct d_batch *b, struct d_batch_item *c)
{
    pthread_mutex_lock(&b->lock);
    if (b->stopping) {
        pthread_mutex_unlock(&b->lock);
        return sworn_err_set(SWORN_ERR_ARG, "batch receipts: stopping");
    }
    push_item(&b->pending_head, &b->pending_tail, c);
    b->busy++;
    if (b->sealer_waiting)
        pthread_cond_signal(&b->sealer_cond);
    pthread_mutex_unlock(&b->lock);
    return 0;
}

unsigned d_batch_busy(struct d_batch *b)
{
    unsigned n;

    if (b == NULL)
        return 0;
    pthread_mutex_lock(&b->lock);
    n = b->busy;
    pthread_mutex_unlock(&b->lock);
    return n;
}

void d_batch_stop(struct d_batch *b)
{
    if (b == NULL)
        return;
    pthread_mutex_lock(&b->lock);
    b->stopping = 1;
    if (!b->started_sealer)
        b->sealer_done = 1;
    pthread_cond_signal(&b->sealer_cond);
    pthread_cond_signal(&b->appender_cond);
    pthread_mutex_unlock(&b->lock);
    if (b->started_sealer)
        pthread_join(b->sealer, NULL);
    if (b->started_appender)
        pthread_join(b->appender, NULL);
    if (b->wake != NULL) {
        run_finished(b); /* both threads drained what they held */
        event_free(b->wake);
    }
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->sealer_cond);
    pthread_cond_destroy(&b->appender_cond);
    free(b);
}
