/*
 * w_conns.c -- deadlines and caps on the witness's connections (contract in w_conns.h).
 */
#include "w_conns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/bufferevent.h>

#include "err.h"

#define SWEEP_MS 250
#define ADDR_LEN 48 /* INET6_ADDRSTRLEN and a NUL */

struct tracked {
    struct bufferevent *bev;
    uint64_t opened_ms;  /* the connection's opening: the newest go first when over the share */
    uint64_t since_ms;   /* opening, or the latest whole request: the deadline runs from here */
    int cut;             /* shut down already (evhttp has yet to free it) */
    char addr[ADDR_LEN]; /* the peer's address; empty until the sweep learns it */
};

struct sworn_witness_conns {
    struct event *sweep;
    struct sworn_witness_conns_limits lim;
    struct evconnlistener *listener;
    int paused; /* the listener is disabled because max_total are open */
    struct tracked *v;
    struct tracked **order; /* scratch for the sweep's grouping by address */
    size_t n, cap;
    void (*on_cut)(size_t count, void *arg);
    void *arg;
};

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void cut(struct tracked *c, size_t *count)
{
    shutdown(bufferevent_getfd(c->bev), SHUT_RDWR);
    c->cut = 1;
    (*count)++;
}

/* evhttp's bufferevent factory: a socket bufferevent like its own, with our reference. */
static struct bufferevent *make_bev(struct event_base *base, void *arg)
{
    struct sworn_witness_conns *t = arg;
    struct bufferevent *bev;
    uint64_t now = now_ms();

    if (t->n == t->cap) {
        size_t cap = t->cap != 0 ? t->cap * 2 : 64;
        struct tracked *v = realloc(t->v, cap * sizeof(*v));
        struct tracked **order;

        if (v == NULL)
            return NULL; /* evhttp then makes its own, untracked: only the limits are lost */
        t->v = v;
        order = realloc(t->order, cap * sizeof(*order));
        if (order == NULL)
            return NULL;
        t->order = order;
        t->cap = cap;
    }
    bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL)
        return NULL;
    bufferevent_incref(bev);
    t->v[t->n++] = (struct tracked){.bev = bev, .opened_ms = now, .since_ms = now};
    if (t->n >= t->lim.max_total && t->listener != NULL && !t->paused) {
        evconnlistener_disable(t->listener);
        t->paused = 1;
    }
    return bev;
}

static void learn_addr(struct tracked *c)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int fd = bufferevent_getfd(c->bev);

    if (fd < 0 || getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
        return;
    if (ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, c->addr, sizeof(c->addr));
    else if (ss.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, c->addr, sizeof(c->addr));
}

/* By address, then the oldest first. */
static int by_addr(const void *a, const void *b)
{
    const struct tracked *x = *(const struct tracked *const *)a;
    const struct tracked *y = *(const struct tracked *const *)b;
    int d = strcmp(x->addr, y->addr);

    if (d != 0)
        return d;
    return x->opened_ms < y->opened_ms ? -1 : x->opened_ms > y->opened_ms;
}

static void sweep(evutil_socket_t fd, short what, void *arg)
{
    struct sworn_witness_conns *t = arg;
    uint64_t now = now_ms();
    size_t i = 0, count = 0, m = 0;

    (void)fd;
    (void)what;
    while (i < t->n) {
        struct tracked *c = &t->v[i];
        bufferevent_event_cb ev = NULL;

        bufferevent_getcb(c->bev, NULL, NULL, &ev, NULL);
        if (ev == NULL) {
            /* evhttp freed the connection (bufferevent_free clears the callbacks; evhttp sets
             * them in the call that made the bufferevent, so no sweep runs before): ours was the
             * last reference, which closes the socket. */
            bufferevent_decref(c->bev);
            t->v[i] = t->v[--t->n];
            continue;
        }
        if (c->addr[0] == '\0')
            learn_addr(c);
        if (!c->cut && now - c->since_ms > t->lim.deadline_ms)
            cut(c, &count);
        i++;
    }
    /* Over an address's share: the newest of its open connections go. */
    for (i = 0; i < t->n; i++)
        if (!t->v[i].cut && t->v[i].addr[0] != '\0')
            t->order[m++] = &t->v[i];
    /* Not before the first connection: order is NULL then, and qsort's pointer must not be, even
     * for no elements (C11 7.22.5). */
    if (m > 1)
        qsort(t->order, m, sizeof(*t->order), by_addr);
    for (i = 0; i < m;) {
        size_t j = i;

        while (j < m && strcmp(t->order[j]->addr, t->order[i]->addr) == 0)
            j++;
        for (size_t k = i + t->lim.max_per_addr; k < j; k++)
            cut(t->order[k], &count);
        i = j;
    }
    if (t->paused && t->n < t->lim.max_total) {
        evconnlistener_enable(t->listener);
        t->paused = 0;
    }
    if (count > 0 && t->on_cut != NULL)
        t->on_cut(count, t->arg);
}

struct sworn_witness_conns *sworn_witness_conns_new(struct event_base *base, struct evhttp *http,
                                                    const struct sworn_witness_conns_limits *lim,
                                                    void (*on_cut)(size_t count, void *arg),
                                                    void *arg)
{
    struct sworn_witness_conns *t = calloc(1, sizeof(*t));
    struct timeval tv = {.tv_sec = 0, .tv_usec = SWEEP_MS * 1000};

    if (t == NULL || (t->sweep = event_new(base, -1, EV_PERSIST, sweep, t)) == NULL ||
        event_add(t->sweep, &tv) < 0) {
        if (t != NULL && t->sweep != NULL)
            event_free(t->sweep);
        free(t);
        sworn_err_set(SWORN_ERR_NOMEM, "witness: cannot track connections");
        return NULL;
    }
    t->lim = *lim;
    t->on_cut = on_cut;
    t->arg = arg;
    evhttp_set_bevcb(http, make_bev, t);
    return t;
}

void sworn_witness_conns_set_listener(struct sworn_witness_conns *t, struct evconnlistener *lev)
{
    t->listener = lev;
}

int sworn_witness_conns_full(const struct sworn_witness_conns *t)
{
    return t->paused;
}

void sworn_witness_conns_request(struct sworn_witness_conns *t, struct evhttp_connection *conn)
{
    struct bufferevent *bev = conn != NULL ? evhttp_connection_get_bufferevent(conn) : NULL;

    for (size_t i = 0; bev != NULL && i < t->n; i++)
        if (t->v[i].bev == bev) {
            t->v[i].since_ms = now_ms();
            return;
        }
}

void sworn_witness_conns_free(struct sworn_witness_conns *t)
{
    if (t == NULL)
        return;
    event_free(t->sweep);
    for (size_t i = 0; i < t->n; i++)
        bufferevent_decref(t->v[i].bev);
    free(t->v);
    free(t->order);
    free(t);
}
