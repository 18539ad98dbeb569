/* r_relay.c -- the hostlink relay (r_relay.h). */
#define _GNU_SOURCE
#include "r_relay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "err.h"
#include "r_net.h"

struct conn;

struct sworn_run_relay {
    struct event_base *base;
    struct evconnlistener *listeners[SWORN_RUN_LISTENERS_MAX];
    size_t nlisteners;
    struct sockaddr_un hostlink;
    uint8_t hello[1100];
    size_t hello_len;
    struct conn *conns; /* open connections, a doubly linked list */
    size_t open;
    size_t max_conns;
    size_t served; /* connections accepted in all */
};

/* One agent connection: side[0] the agent's, side[1] the proxy's. */
struct conn {
    struct sworn_run_relay *r;
    struct bufferevent *side[2];
    int eof[2]; /* that side sent its end */
    struct conn *prev, *next;
};

static void conn_free(struct conn *c)
{
    for (int i = 0; i < 2; i++)
        if (c->side[i] != NULL)
            bufferevent_free(c->side[i]);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        c->r->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    c->r->open--;
    free(c);
}

static int side_of(const struct conn *c, const struct bufferevent *bev)
{
    return bev == c->side[0] ? 0 : 1;
}

/* Everything read from `from` goes to the other side; reading pauses while that side holds
 * SWORN_RUN_RELAY_BUF bytes not yet written, and resumes from its write callback. */
static void on_read(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    int from = side_of(c, bev);
    struct bufferevent *to = c->side[1 - from];

    bufferevent_write_buffer(to, bufferevent_get_input(bev));
    if (evbuffer_get_length(bufferevent_get_output(to)) >= SWORN_RUN_RELAY_BUF)
        bufferevent_disable(bev, EV_READ);
}

static void on_write(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    int to = side_of(c, bev);

    /* What the other side sent is written: pass on its end, or read from it again. */
    if (c->eof[1 - to]) {
        (void)shutdown(bufferevent_getfd(bev), SHUT_WR);
        if (c->eof[to])
            conn_free(c);
        return;
    }
    if (!c->eof[1 - to])
        bufferevent_enable(c->side[1 - to], EV_READ);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct conn *c = arg;
    int from = side_of(c, bev);
    struct bufferevent *to = c->side[1 - from];

    if (what & BEV_EVENT_CONNECTED)
        return;
    if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR)) {
        c->eof[from] = 1;
        bufferevent_disable(bev, EV_READ);
        if (evbuffer_get_length(bufferevent_get_output(to)) == 0) {
            (void)shutdown(bufferevent_getfd(to), SHUT_WR);
            if (c->eof[1 - from])
                conn_free(c);
        }
        return;
    }
    conn_free(c); /* an error or a timeout on either side ends both */
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
                      void *arg)
{
    struct sworn_run_relay *r = arg;
    struct conn *c;

    (void)l;
    (void)sa;
    (void)len;
    if (r->open >= r->max_conns || (c = calloc(1, sizeof(*c))) == NULL) {
        close(fd);
        return;
    }
    c->r = r;
    c->side[0] = bufferevent_socket_new(r->base, fd, BEV_OPT_CLOSE_ON_FREE);
    c->side[1] = bufferevent_socket_new(r->base, -1, BEV_OPT_CLOSE_ON_FREE);
    c->next = r->conns;
    if (r->conns != NULL)
        r->conns->prev = c;
    r->conns = c;
    r->open++;
    r->served++;
    if (c->side[0] == NULL || c->side[1] == NULL) {
        if (c->side[0] == NULL)
            close(fd);
        conn_free(c);
        return;
    }
    for (int i = 0; i < 2; i++)
        bufferevent_setcb(c->side[i], on_read, on_write, on_event, c);
    /* The hello is queued first: nothing of the agent's can come before it. */
    if (bufferevent_write(c->side[1], r->hello, r->hello_len) < 0 ||
        bufferevent_socket_connect(c->side[1], (struct sockaddr *)&r->hostlink,
                                   (int)sizeof(r->hostlink)) < 0) {
        conn_free(c);
        return;
    }
    bufferevent_enable(c->side[0], EV_READ | EV_WRITE);
    bufferevent_enable(c->side[1], EV_READ | EV_WRITE);
}

int sworn_run_relay_start(struct event_base *base, const int *fds, size_t n, const char *hostlink,
                          const uint8_t *hello, size_t hello_len, size_t max_conns,
                          struct sworn_run_relay **out)
{
    struct sworn_run_relay *r;

    *out = NULL;
    if (strlen(hostlink) >= sizeof(r->hostlink.sun_path) || hello_len > sizeof(r->hello) ||
        n > SWORN_RUN_LISTENERS_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "relay: the hostlink path or the hello is too long");
    r = calloc(1, sizeof(*r));
    if (r == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "relay: out of memory");
    r->base = base;
    r->max_conns = max_conns;
    r->hostlink.sun_family = AF_UNIX;
    memcpy(r->hostlink.sun_path, hostlink, strlen(hostlink) + 1);
    memcpy(r->hello, hello, hello_len);
    r->hello_len = hello_len;
    for (size_t i = 0; i < n; i++) {
        r->listeners[i] = evconnlistener_new(base, on_accept, r, LEV_OPT_CLOSE_ON_FREE, -1, fds[i]);
        if (r->listeners[i] == NULL) {
            for (size_t j = i; j < n; j++)
                close(fds[j]);
            sworn_run_relay_free(r);
            return sworn_err_set(SWORN_ERR_IO, "relay: cannot serve the sandbox's listener");
        }
        r->nlisteners++;
    }
    *out = r;
    return 0;
}

size_t sworn_run_relay_served(const struct sworn_run_relay *r)
{
    return r->served;
}

void sworn_run_relay_free(struct sworn_run_relay *r)
{
    if (r == NULL)
        return;
    while (r->conns != NULL)
        conn_free(r->conns);
    for (size_t i = 0; i < r->nlisteners; i++)
        evconnlistener_free(r->listeners[i]);
    free(r);
}
