/*
 * textserve.c -- the operator's GET-only text server (contract in textserve.h).
 */
#include "textserve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "err.h"

struct conn {
    struct sworn_textserve *s;
    struct bufferevent *bev;
    struct conn *prev, *next;
};

struct sworn_textserve {
    struct event_base *base;
    struct evconnlistener *lev;
    sworn_textserve_fn fn;
    void *arg;
    struct conn *conns;
    unsigned n_conns;
};

static void conn_free(struct conn *c)
{
    struct sworn_textserve *s = c->s;

    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    s->n_conns--;
    bufferevent_free(c->bev);
    free(c);
}

static const char *reason_of(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 503:
        return "Service Unavailable";
    default:
        return status >= 500 ? "Internal Server Error" : "Error";
    }
}

static void on_written(struct bufferevent *bev, void *arg)
{
    if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        conn_free(arg);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    (void)what;
    conn_free(arg);
}

/* Queue the answer and close once it is written. */
static void answer(struct conn *c, int status, const char *type, const char *body, size_t len,
                   const char *extra)
{
    struct evbuffer *out = bufferevent_get_output(c->bev);

    bufferevent_disable(c->bev, EV_READ);
    bufferevent_setcb(c->bev, NULL, on_written, on_event, c);
    evbuffer_add_printf(out,
                        "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                        "Connection: close\r\n\r\n",
                        status, reason_of(status), type != NULL ? type : "text/plain", len,
                        extra != NULL ? extra : "");
    if (len > 0)
        evbuffer_add(out, body, len);
}

int sworn_textserve_request_line(const char *line, size_t len, char *path, size_t cap)
{
    const char *sp1 = memchr(line, ' ', len), *sp2, *end;
    size_t plen;

    if (sp1 == NULL)
        return 400;
    sp2 = memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - line));
    if (sp2 == NULL || sp1[1] != '/' || (size_t)(line + len - (sp2 + 1)) != 8 ||
        memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || (sp2[8] != '0' && sp2[8] != '1'))
        return 400;
    for (const char *p = line; p < sp2; p++)
        if ((unsigned char)*p <= ' ' && p != sp1)
            return 400;
    if ((size_t)(sp1 - line) != 3 || memcmp(line, "GET", 3) != 0)
        return 405;
    end = memchr(sp1 + 1, '?', (size_t)(sp2 - (sp1 + 1)));
    plen = (size_t)((end != NULL ? end : sp2) - (sp1 + 1));
    if (plen >= cap)
        return 400;
    memcpy(path, sp1 + 1, plen);
    path[plen] = '\0';
    return 0;
}

static void on_read(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, NULL, EVBUFFER_EOL_CRLF);
    struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
    struct sworn_textserve_answer a = {0};
    char path[SWORN_TEXTSERVE_HEAD_MAX];
    const char *head;
    int rc;

    if (end.pos < 0) {
        if (evbuffer_get_length(in) > SWORN_TEXTSERVE_HEAD_MAX)
            conn_free(c);
        return;
    }
    if ((size_t)end.pos + 4 > SWORN_TEXTSERVE_HEAD_MAX) {
        conn_free(c);
        return;
    }
    head = (const char *)evbuffer_pullup(in, end.pos + 4);
    rc = head == NULL || eol.pos < 0
             ? 400
             : sworn_textserve_request_line(head, (size_t)eol.pos, path, sizeof(path));
    if (rc == 405) {
        answer(c, 405, NULL, "GET only\n", 9, "Allow: GET\r\n");
        return;
    }
    if (rc != 0) {
        answer(c, 400, NULL, "bad request\n", 12, NULL);
        return;
    }
    if (c->s->fn(c->s->arg, path, &a) < 0) {
        if (a.owned)
            free(a.body);
        answer(c, 500, NULL, "internal error\n", 15, NULL);
        return;
    }
    answer(c, a.status, a.content_type, a.body, a.len, NULL);
    if (a.owned)
        free(a.body);
}

static void on_accept(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    struct sworn_textserve *s = arg;
    struct timeval tv = {SWORN_TEXTSERVE_TIMEOUT_S, 0};
    struct conn *c;

    (void)lev;
    (void)sa;
    (void)salen;
    if (s->n_conns >= SWORN_TEXTSERVE_CONNS || (c = calloc(1, sizeof(*c))) == NULL) {
        close(fd);
        return;
    }
    c->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (c->bev == NULL) {
        close(fd);
        free(c);
        return;
    }
    c->s = s;
    c->next = s->conns;
    if (s->conns != NULL)
        s->conns->prev = c;
    s->conns = c;
    s->n_conns++;
    bufferevent_set_timeouts(c->bev, &tv, &tv);
    bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

int sworn_textserve_start(struct event_base *base, int fd, sworn_textserve_fn fn, void *arg,
                          struct sworn_textserve **out)
{
    struct sworn_textserve *s = calloc(1, sizeof(*s));

    if (s == NULL) {
        close(fd);
        return sworn_err_set(SWORN_ERR_NOMEM, "text server: out of memory");
    }
    s->base = base;
    s->fn = fn;
    s->arg = arg;
    s->lev = evconnlistener_new(base, on_accept, s, LEV_OPT_CLOSE_ON_FREE, -1, fd);
    if (s->lev == NULL) {
        close(fd);
        free(s);
        return sworn_err_set(SWORN_ERR_NOMEM, "text server: cannot listen");
    }
    *out = s;
    return 0;
}

void sworn_textserve_stop(struct sworn_textserve *s)
{
    if (s == NULL)
        return;
    evconnlistener_free(s->lev);
    while (s->conns != NULL)
        conn_free(s->conns);
    free(s);
}
