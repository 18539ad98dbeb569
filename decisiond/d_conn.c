/*
 * d_conn.c -- a connection: framing, one request in flight, answers, holds (d_conn.h).
 *
 * Rules (docs/protocol.md section 1): each connection carries one request at a time (reading
 * pauses until its answer is written), so answers are in order; a frame length out of range gets
 * one ErrorFrame and the connection is closed; a stalled partial frame is dropped after
 * D_FRAME_STALL_S seconds.
 */
#include "d_conn.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "d_daemon.h"
#include "d_jlog.h"
#include "err.h"

#define D_FRAME_STALL_S 30

struct d_conn {
    struct d_daemon *d;
    const struct d_channel_ops *ops;
    struct bufferevent *bev; /* a socket connection; NULL once gone, and for a local one */
    void (*sink)(void *arg, const uint8_t *body, size_t len); /* a local connection */
    void *sink_arg;
    uid_t uid;
    pid_t pid;
    struct sworn_frame_dec dec;
    int busy;        /* a request is in flight: reading paused */
    int gone;        /* the peer hung up or we closed: answers are dropped */
    int close_after; /* close once the output is written */
    int in_read;     /* on_read is running: it goes on with buffered frames itself */
    unsigned refs;   /* 1 for the connection itself + 1 per job holding it */
    uint64_t req_start_us;
    struct d_conn *prev, *next; /* the daemon's list of live connections */
};

uid_t d_conn_uid(const struct d_conn *c)
{
    return c->uid;
}

pid_t d_conn_pid(const struct d_conn *c)
{
    return c->pid;
}

uint64_t d_conn_request_start_us(const struct d_conn *c)
{
    return c->req_start_us;
}

static void conn_free(struct d_conn *c)
{
    if (c->prev != NULL)
        c->prev->next = c->next;
    else if (c->d->conns == c)
        c->d->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    if (c->bev != NULL)
        bufferevent_free(c->bev);
    sworn_frame_dec_free(&c->dec);
    c->d->n_conns--;
    free(c);
}

void d_conn_hold(struct d_conn *c)
{
    c->refs++;
}

void d_conn_release(struct d_conn *c)
{
    if (--c->refs == 0)
        conn_free(c);
}

/* The peer is gone (or must go): stop all I/O; the memory goes with the last hold. */
static void conn_drop(struct d_conn *c)
{
    if (c->gone)
        return;
    c->gone = 1;
    if (c->bev != NULL) {
        bufferevent_free(c->bev);
        c->bev = NULL;
    }
    d_conn_release(c);
}

void d_conn_close(struct d_conn *c)
{
    conn_drop(c);
}

static void on_read(struct bufferevent *bev, void *arg);

static void on_written(struct bufferevent *bev, void *arg)
{
    struct d_conn *c = arg;

    (void)bev;
    if (c->close_after)
        conn_drop(c);
}

void d_conn_reply(struct d_conn *c, const uint8_t *frame, size_t len)
{
    c->busy = 0;
    if (c->gone)
        return;
    if (c->sink != NULL) {
        /* A local connection: no socket to close after the answer (close_after is only set by
         * a frame length out of range, which only a socket can send); the sink may close c. */
        d_conn_hold(c);
        c->sink(c->sink_arg, frame + SWORN_FRAME_HDR_LEN, len - SWORN_FRAME_HDR_LEN);
        d_conn_release(c);
        return;
    }
    if (bufferevent_write(c->bev, frame, len) != 0) {
        conn_drop(c);
        return;
    }
    if (c->close_after)
        return;
    bufferevent_enable(c->bev, EV_READ);
    /* Requests the peer pipelined are already buffered: no new event will announce them. An
     * answer given from inside on_read (a refused frame) leaves them to on_read's own loop, so a
     * burst of bad frames never becomes a deep recursion. */
    if (!c->in_read && evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
        on_read(c->bev, c);
}

void d_conn_reply_error(struct d_conn *c, int code, const char *message, const char *request_id,
                        int close_after)
{
    Sworn__V1__ErrorFrame e = SWORN__V1__ERROR_FRAME__INIT;
    char msg[SWORN_ERR_MSG_MAX];
    uint8_t *frame = NULL;
    size_t len = 0;
    int rc;

    snprintf(msg, sizeof(msg), "%s", message);
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    e.code = (uint32_t)(code != 0 ? code : SWORN_ERR_IO);
    e.message = msg;
    e.request_id = (char *)(request_id != NULL ? request_id : "");
    rc = c->ops->pack_error(&e, &frame, &len);
    if (c->ops->ch == D_CHANNEL_DECISION)
        atomic_fetch_add(&c->d->metrics.decision_errors, 1);
    if (close_after)
        c->close_after = 1;
    if (rc < 0) {
        d_log_msg(D_LOG_ERROR, "error_frame", sworn_err_msg());
        c->busy = 0;
        conn_drop(c);
        return;
    }
    d_conn_reply(c, frame, len);
    free(frame);
}

/* A complete frame: one request in flight per connection, so reading pauses until the handler
 * answers. A handler that answers at once (a refusal) clears busy. */
static void dispatch(struct d_conn *c, const uint8_t *body, size_t len)
{
    c->busy = 1;
    c->req_start_us = d_now_mono_us();
    if (c->bev != NULL)
        bufferevent_disable(c->bev, EV_READ);
    c->ops->on_frame(c->d, c, body, len);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    struct d_conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    d_conn_hold(c); /* a handler may drop the connection: keep its memory until we are done */
    c->in_read = 1;
    while (!c->busy && !c->gone && !c->close_after && evbuffer_get_length(in) > 0) {
        size_t avail = evbuffer_get_contiguous_space(in);
        const uint8_t *p = evbuffer_pullup(in, (ev_ssize_t)avail);
        const uint8_t *body = NULL;
        size_t body_len = 0;
        long used = sworn_frame_dec_feed(&c->dec, p, avail, &body, &body_len);

        if (used < 0) {
            char msg[SWORN_ERR_MSG_MAX];
            int code = sworn_err_code();

            snprintf(msg, sizeof(msg), "%s", sworn_err_msg());
            d_record_refused(c->d, c->ops->ch, c->uid, c->pid, code, msg, NULL, NULL, 0);
            bufferevent_disable(bev, EV_READ);
            d_conn_reply_error(c, code, msg, NULL, 1);
            break;
        }
        evbuffer_drain(in, (size_t)used);
        if (body != NULL)
            dispatch(c, body, body_len);
    }
    c->in_read = 0;
    /* A frame started but not finished must finish within D_FRAME_STALL_S seconds. */
    if (!c->gone && c->bev != NULL) {
        if (!sworn_frame_dec_idle(&c->dec)) {
            struct timeval tv = {D_FRAME_STALL_S, 0};

            bufferevent_set_timeouts(bev, &tv, NULL);
        } else {
            bufferevent_set_timeouts(bev, NULL, NULL);
        }
    }
    d_conn_release(c);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct d_conn *c = arg;

    (void)bev;
    if (what & BEV_EVENT_TIMEOUT)
        d_record_refused(c->d, c->ops->ch, c->uid, c->pid, SWORN_ERR_FORMAT,
                         "partial frame stalled: connection closed", NULL, NULL, 0);
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
        conn_drop(c);
}

static struct d_conn *conn_new(struct d_daemon *d, const struct d_channel_ops *ops, uid_t uid,
                               pid_t pid)
{
    struct d_conn *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    c->d = d;
    c->ops = ops;
    c->uid = uid;
    c->pid = pid;
    c->refs = 1;
    sworn_frame_dec_init(&c->dec);
    return c;
}

static void conn_link(struct d_conn *c)
{
    struct d_daemon *d = c->d;

    d->n_conns++;
    c->next = d->conns;
    if (d->conns != NULL)
        d->conns->prev = c;
    d->conns = c;
}

struct d_conn *d_conn_new_socket(struct d_daemon *d, const struct d_channel_ops *ops,
                                 evutil_socket_t fd, uid_t uid, pid_t pid)
{
    struct d_conn *c = conn_new(d, ops, uid, pid);

    if (c == NULL) {
        evutil_closesocket(fd);
        return NULL;
    }
    c->bev = bufferevent_socket_new(d->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (c->bev == NULL) {
        evutil_closesocket(fd);
        free(c);
        return NULL;
    }
    conn_link(c);
    bufferevent_setcb(c->bev, on_read, on_written, on_event, c);
    bufferevent_enable(c->bev, EV_READ);
    return c;
}

struct d_conn *d_conn_new_local(struct d_daemon *d, const struct d_channel_ops *ops, uid_t uid,
                                pid_t pid, void (*sink)(void *arg, const uint8_t *body, size_t len),
                                void *arg)
{
    struct d_conn *c = conn_new(d, ops, uid, pid);

    if (c == NULL)
        return NULL;
    c->sink = sink;
    c->sink_arg = arg;
    conn_link(c);
    return c;
}

int d_conn_local_submit(struct d_conn *c, const uint8_t *body, size_t len)
{
    if (c->sink == NULL || c->busy || c->gone)
        return sworn_err_set(SWORN_ERR_ARG, "local connection: a request is already in flight");
    d_conn_hold(c);
    dispatch(c, body, len);
    d_conn_release(c);
    return 0;
}

void d_conn_close_all(struct d_daemon *d)
{
    struct d_conn *c = d->conns, *next;

    /* Holds by jobs are gone by now (the workers are stopped); drop the connections' own. */
    for (; c != NULL; c = next) {
        next = c->next;
        if (!c->gone)
            conn_drop(c);
    }
}
