/*
 * p_mserve.c -- the metrics socket (docs/proxy.md "Metrics"): a Unix socket, never one of the
 * agent's listeners, that answers "GET /metrics" with the Prometheus text of p_metrics.h and
 * anything else with 404 (400 for what is not a request line), one request per connection.
 * The socket is the proxy's user's, mode 0600: scraping needs that user (or root), or a
 * forwarder run by it.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "err.h"
#include "p_mserve.h"
#include "p_proxy.h"
#include "unixsock.h"

#define REQUEST_MAX 4096u

static char text[SWORN_PMETRICS_TEXT_MAX];

static void on_write(struct bufferevent *bev, void *arg)
{
    (void)arg;
    if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        bufferevent_free(bev);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)what;
    (void)arg;
    bufferevent_free(bev);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    struct sworn_proxy *px = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    size_t len = evbuffer_get_length(in);
    struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
    const char *p;
    int n;

    if (end.pos < 0) {
        if (len > REQUEST_MAX)
            bufferevent_free(bev);
        return;
    }
    p = (const char *)evbuffer_pullup(in, end.pos);
    bufferevent_disable(bev, EV_READ);
    bufferevent_setcb(bev, NULL, on_write, on_event, px);
    if (end.pos >= 14 &&
        (strncmp(p, "GET /metrics ", 13) == 0 || strncmp(p, "GET /metrics?", 13) == 0)) {
        n = sworn_pmetrics_render(&px->metrics, text, sizeof(text));
        if (n < 0)
            n = 0;
        evbuffer_add_printf(bufferevent_get_output(bev),
                            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                            "Content-Length: %d\r\nConnection: close\r\n\r\n",
                            n);
        evbuffer_add(bufferevent_get_output(bev), text, (size_t)n);
    } else {
        evbuffer_add_printf(
            bufferevent_get_output(bev),
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
}

static void on_accept(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    struct sworn_proxy *px = arg;
    struct bufferevent *bev;

    (void)lev;
    (void)sa;
    (void)salen;
    bev = bufferevent_socket_new(px->base, fd, BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    if (bev == NULL) {
        close(fd);
        return;
    }
    {
        struct timeval tv = {10, 0};

        bufferevent_set_timeouts(bev, &tv, &tv);
    }
    bufferevent_setcb(bev, on_read, NULL, on_event, px);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
}

int sworn_mserve_open(struct sworn_proxy *px)
{
    const struct sworn_pconf *c = px->conf;
    int fd;

    if (c->metrics_socket[0] == '\0')
        return 0;
    SWORN_GUARD(sworn_unix_listen(c->metrics_socket, c->has_user ? c->uid : geteuid(),
                                  c->has_user ? c->gid : getegid(), 0600, 16, &fd));
    px->metrics_lev = evconnlistener_new(px->base, on_accept, px, LEV_OPT_CLOSE_ON_FREE, -1, fd);
    if (px->metrics_lev == NULL) {
        close(fd);
        return sworn_err_set(SWORN_ERR_NOMEM, "evconnlistener_new failed");
    }
    return 0;
fail:
    return -1;
}

void sworn_mserve_close(struct sworn_proxy *px)
{
    if (px->metrics_lev != NULL)
        evconnlistener_free(px->metrics_lev);
    px->metrics_lev = NULL;
}
