/*
 * p_mserve.c -- the metrics socket (docs/proxy.md "Metrics"): a Unix socket, never one of the
 * agent's listeners, that answers "GET /metrics" with the Prometheus text of p_metrics.h, a
 * path it does not serve with 404 (another method 405, what is not a request line 400), one
 * request per connection.
 * The socket is the proxy's user's, mode 0600: scraping needs that user (or root), or a
 * forwarder run by it. GET /health answers 200 "ok" while the loop runs. The HTTP side is
 * common/textserve.h's.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "p_mserve.h"
#include "p_proxy.h"
#include "textserve.h"
#include "unixsock.h"

static char text[SWORN_PMETRICS_TEXT_MAX];

static int serve(void *arg, const char *path, struct sworn_textserve_answer *a)
{
    struct sworn_proxy *px = arg;
    int n;

    if (strcmp(path, "/metrics") == 0) {
        n = sworn_pmetrics_render(&px->metrics, text, sizeof(text));
        if (n < 0)
            return -1;
        a->status = 200;
        a->content_type = "text/plain; version=0.0.4; charset=utf-8";
        a->body = text;
        a->len = (size_t)n;
        return 0;
    }
    if (strcmp(path, "/health") == 0) {
        /* The proxy answers on its loop thread: it runs. Whether it can decide is decisiond's
         * own health check (its metrics socket), and each refusal says why. */
        a->status = 200;
        a->body = (char *)"ok\n";
        a->len = 3;
        return 0;
    }
    a->status = 404;
    a->body = (char *)"not found: GET /metrics or /health\n";
    a->len = strlen(a->body);
    return 0;
}

int sworn_mserve_open(struct sworn_proxy *px)
{
    const struct sworn_pconf *c = px->conf;
    int fd;

    if (c->metrics_socket[0] == '\0')
        return 0;
    SWORN_GUARD(sworn_unix_listen(c->metrics_socket, c->has_user ? c->uid : geteuid(),
                                  c->has_user ? c->gid : getegid(), 0600, 16, &fd));
    return sworn_textserve_start(px->base, fd, serve, px, &px->metrics_srv);
fail:
    return -1;
}

void sworn_mserve_close(struct sworn_proxy *px)
{
    sworn_textserve_stop(px->metrics_srv);
    px->metrics_srv = NULL;
}
