/*
 * w_conns.c -- a deadline on every HTTP connection (contract in w_conns.h).
 */
#include "w_conns.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/bufferevent.h>

#include "err.h"

#define SWEEP_MS 250

struct tracked {
    struct bufferevent *bev;
    uint64_t since_ms; /* opening, or the latest whole request */
    int cut;           /* shut down already */
};

struct sworn_witness_conns {
    struct event *sweep;
    uint64_t deadline_ms;
    struct tracked *v;
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

/* evhttp's bufferevent factory: a socket bufferevent like its own, with our reference. */
static struct bufferevent *make_bev(struct event_base *base, void *arg)
{
    struct sworn_witness_conns *t = arg;
    struct bufferevent *bev;

    if (t->n == t->cap) {
        size_t cap = t->cap != 0 ? t->cap * 2 : 64;
        struct tracked *v = realloc(t->v, cap * sizeof(*v));

        if (v == NULL)
            return NULL; /* evhttp then makes its own, untracked: only the deadline is lost */
        t->v = v;
        t->cap = cap;
    }
    bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL)
        return NULL;
    bufferevent_incref(bev);
    t->v[t->n++] = (struct tracked){.bev = bev, .since_ms = now_ms(), .cut = 0};
    return bev;
}

static void sweep(evutil_socket_t fd, short what, void *arg)
{
    struct sworn_witness_conns *t = arg;
    uint64_t now = now_ms();
    size_t i = 0, cut = 0;

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
        if (!c->cut && now - c->since_ms > t->deadline_ms) {
            shutdown(bufferevent_getfd(c->bev), SHUT_RDWR);
            c->cut = 1;
            cut++;
        }
        i++;
    }
    if (cut > 0 && t->on_cut != NULL)
        t->on_cut(cut, t->arg);
}

struct sworn_witness_conns *sworn_witness_conns_new(struct event_base *base, struct evhttp *http,
                                                    uint64_t deadline_ms,
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
    t->deadline_ms = deadline_ms;
    t->on_cut = on_cut;
    t->arg = arg;
    evhttp_set_bevcb(http, make_bev, t);
    return t;
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
    free(t);
}
