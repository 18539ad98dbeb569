/*
 * d_conn.c -- a connection: framing, one request in flight, answers, holds (d_conn.h).
 *
 * Rules (docs/protocol.md section 1): each connection carries one request at a time (reading
 * pauses until its answer is written), so answers are in order; a frame length out of range gets
 * one ErrorFrame and the connection is closed.
 *
 * Memory a peer can make the daemon hold (docs/decisiond.md, "Connections and their memory"):
 * a frame's buffer grows with the bytes that came (frame.h), never to the length the header
 * announces; the buffers of all connections together are capped at D_CONN_BUFFERED_MAX (the
 * daemon's frame pool), and a connection whose frame would pass it is refused (recorded,
 * counted, closed); a frame is released as soon as its handler returns, so a request waiting for
 * its answer holds no frame bytes; and a frame must be complete D_FRAME_DEADLINE_S seconds after
 * its first byte, however slowly it trickles in, or the connection is refused and closed.
 */
#include "d_conn.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "d_daemon.h"
#include "d_jlog.h"
#include "d_record.h"
#include "err.h"

/* A frame must be complete this long after its first byte arrived (the daemon's monotonic clock,
 * which the test clock moves). Time spent waiting for decisiond's own answer is not counted. */
#define D_FRAME_DEADLINE_S 30
#define D_STR_(x) #x
#define D_STR(x) D_STR_(x)
#define D_DEADLINE_MSG                                                                             \
    "frame not complete " D_STR(D_FRAME_DEADLINE_S) " s after its first byte: connection closed"
#define D_FRAME_DEADLINE_US ((uint64_t)D_FRAME_DEADLINE_S * 1000000u)

/*
 * The frame pool (frame.h): each connection may hold D_CONN_FRAME_OWN bytes of a frame of its
 * own, room for the largest request the decision socket accepts in its envelope, so ordinary
 * requests are never refused for want of room; larger frames (token exchanges, hostile ones)
 * borrow beyond that from D_CONN_BUFFERED_MAX, shared by all. With at most D_MAX_CONNS
 * connections (d_server.c) the frames of all of them hold at most 1024 * 64 KiB + 32 MiB.
 */
#define D_CONN_FRAME_OWN (64u * 1024u)
#define D_CONN_BUFFERED_MAX (32u * SWORN_FRAME_MAX)
_Static_assert(D_CONN_FRAME_OWN >= SWORN_FRAME_REQUEST_MAX + 8u,
               "the largest request, in its envelope, fits a connection's own room");

/*
 * Answers a peer has not read yet: past this many bytes queued for it, reading pauses until the
 * peer has taken them all (on_written), so a peer that pipelines requests and never reads its
 * answers cannot make decisiond queue them without bound (each bad frame of 9 bytes is an error
 * answer of about 100: a peer that sent 2 million of them once held 60 MB of the engine).
 */
#define D_CONN_OUTPUT_MAX (64u * 1024u)

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
    int out_full;    /* more than D_CONN_OUTPUT_MAX unread by the peer: reading paused */
    unsigned refs;   /* 1 for the connection itself + 1 per job holding it */
    uint64_t req_start_us;
    uint64_t frame_start_us;    /* when the first byte of the partial frame held came */
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

/* The frame pool in the metrics (a gauge of bytes held now, and the peak). */
static void publish_pool(struct d_daemon *d)
{
    atomic_store(&d->metrics.frame_buffered, d->frame_pool.held);
    atomic_store(&d->metrics.frame_buffered_peak, d->frame_pool.peak);
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
    /* Its frame bytes go back to the pool now, not when the last job lets go of c; on_read
     * does it itself once the handler that may still read the body has returned. */
    if (!c->in_read)
        sworn_frame_dec_free(&c->dec);
    publish_pool(c->d);
    d_conn_release(c);
}

void d_conn_close(struct d_conn *c)
{
    conn_drop(c);
}

static void on_read(struct bufferevent *bev, void *arg);

/* Reading paused while answers wait for the peer? Then it resumes in on_written. */
static int output_full(struct d_conn *c)
{
    if (c->bev != NULL && evbuffer_get_length(bufferevent_get_output(c->bev)) > D_CONN_OUTPUT_MAX)
        c->out_full = 1;
    return c->out_full;
}

static void on_written(struct bufferevent *bev, void *arg)
{
    struct d_conn *c = arg;

    if (c->close_after) {
        conn_drop(c);
        return;
    }
    /* Everything queued is written (the write low-watermark is 0): read again. */
    if (c->out_full && !c->gone) {
        c->out_full = 0;
        if (!c->busy) {
            bufferevent_enable(bev, EV_READ);
            if (!c->in_read && evbuffer_get_length(bufferevent_get_input(bev)) > 0)
                on_read(bev, c);
        }
    }
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
    /* Nothing queued before it: the answer is sent now, from here. Through the bufferevent it
     * would wait for the loop's next turn, which costs two epoll_ctl calls and one more wake-up
     * per decision (bench_cpu, issue 17). What the socket does not take now (or an error, which
     * the bufferevent then reports) is queued as before. */
    if (!c->close_after && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
        ssize_t n = send(bufferevent_getfd(c->bev), frame, len, MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n > 0) {
            frame += n;
            len -= (size_t)n;
        }
    }
    if (len > 0 && bufferevent_write(c->bev, frame, len) != 0) {
        conn_drop(c);
        return;
    }
    if (c->close_after)
        return;
    if (output_full(c)) {
        bufferevent_disable(c->bev, EV_READ);
        return;
    }
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

    d_record_clean_text(message != NULL ? message : "", msg, sizeof(msg));
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

/* Refuse c's stream (recorded, counted), answer with an ErrorFrame and close once it is sent. */
static void refuse_stream(struct d_conn *c, int code, const char *msg)
{
    d_record_refused(c->d, c->ops->ch, c->uid, c->pid, code, msg, NULL, NULL, 0);
    bufferevent_disable(c->bev, EV_READ);
    sworn_frame_dec_free(&c->dec); /* no body is handed out: the partial frame goes at once */
    d_conn_reply_error(c, code, msg, NULL, 1);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    struct d_conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    d_conn_hold(c); /* a handler may drop the connection: keep its memory until we are done */
    c->in_read = 1;
    while (!c->busy && !c->gone && !c->close_after && !c->out_full && evbuffer_get_length(in) > 0) {
        size_t avail = evbuffer_get_contiguous_space(in);
        const uint8_t *p = evbuffer_pullup(in, (ev_ssize_t)avail);
        const uint8_t *body = NULL;
        size_t body_len = 0;
        int was_idle = sworn_frame_dec_idle(&c->dec);
        long used = sworn_frame_dec_feed(&c->dec, p, avail, &body, &body_len);

        if (used < 0) {
            char msg[SWORN_ERR_MSG_MAX];
            int code = sworn_err_code();

            if (sworn_frame_dec_pool_full(&c->dec)) {
                atomic_fetch_add(&c->d->metrics.frame_buffer_full, 1);
                snprintf(msg, sizeof(msg),
                         "frame buffers full (%zu bytes lent of %zu, %zu held): connection closed",
                         c->d->frame_pool.used, c->d->frame_pool.cap, c->d->frame_pool.held);
            } else {
                snprintf(msg, sizeof(msg), "%s", sworn_err_msg());
            }
            refuse_stream(c, code, msg);
            break;
        }
        if (was_idle && used > 0)
            c->frame_start_us = d_now_mono_us();
        evbuffer_drain(in, (size_t)used);
        if (body != NULL) {
            publish_pool(c->d);
            dispatch(c, body, body_len);
            /* The handler has decoded what it needs: the frame's bytes go now, not when the
             * next frame starts, so a request in flight holds none of the pool. */
            sworn_frame_dec_release(&c->dec);
        }
    }
    c->in_read = 0;
    if (c->gone)
        sworn_frame_dec_free(&c->dec);
    publish_pool(c->d);
    /* A frame started but not finished must finish D_FRAME_DEADLINE_S after its first byte:
     * a read timeout alone would be reset by every byte of a peer that trickles. */
    if (!c->gone && c->bev != NULL && !c->close_after) {
        if (!sworn_frame_dec_idle(&c->dec)) {
            uint64_t now = d_now_mono_us();
            uint64_t spent = now > c->frame_start_us ? now - c->frame_start_us : 0;

            if (spent >= D_FRAME_DEADLINE_US) {
                atomic_fetch_add(&c->d->metrics.frame_deadline, 1);
                refuse_stream(c, SWORN_ERR_RANGE, D_DEADLINE_MSG);
            } else {
                uint64_t left = D_FRAME_DEADLINE_US - spent;
                struct timeval tv = {(time_t)(left / 1000000u), (suseconds_t)(left % 1000000u)};

                bufferevent_set_timeouts(bev, &tv, NULL);
            }
        } else {
            bufferevent_set_timeouts(bev, NULL, NULL);
        }
    }
    d_conn_release(c);
}

int d_conn_peer_gone(struct d_conn *c)
{
    struct pollfd p;

    if (c->gone)
        return 1;
    if (c->bev == NULL)
        return 0;
    p.fd = bufferevent_getfd(c->bev);
    p.events = 0; /* a Unix socket whose peer closed polls POLLHUP (both ways shut) */
    p.revents = 0;
    if (p.fd < 0)
        return 1;
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct d_conn *c = arg;

    (void)bev;
    if (what & BEV_EVENT_TIMEOUT) {
        /* Only set while a partial frame is held: its deadline passed with no byte since. */
        atomic_fetch_add(&c->d->metrics.frame_deadline, 1);
        d_record_refused(c->d, c->ops->ch, c->uid, c->pid, SWORN_ERR_RANGE, D_DEADLINE_MSG, NULL,
                         NULL, 0);
    }
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
    if (d->frame_pool.cap == 0) { /* the first connection: the daemon's pool starts here */
        d->frame_pool.cap = D_CONN_BUFFERED_MAX;
        d->frame_pool.own = D_CONN_FRAME_OWN;
    }
    sworn_frame_dec_init_pool(&c->dec, &d->frame_pool);
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
