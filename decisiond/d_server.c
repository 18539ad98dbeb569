/*
 * d_server.c -- the two Unix sockets, their peers and their frames (d_daemon.h).
 *
 * Rules (docs/protocol.md section 1): a peer whose SO_PEERCRED uid is not configured for the
 * socket is recorded and closed before any byte is read; each connection carries one request at
 * a time (reading pauses until its answer is written), so answers are in order; a frame length
 * out of range gets one ErrorFrame and the connection is closed; a stalled partial frame is
 * dropped after D_FRAME_STALL_S seconds.
 */
#define _GNU_SOURCE /* struct ucred, SO_PEERCRED */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "d_daemon.h"
#include "d_jlog.h"
#include "err.h"

#define D_MAX_CONNS 1024
#define D_FRAME_STALL_S 30

struct d_conn {
    struct d_daemon *d;
    enum d_channel ch;
    struct bufferevent *bev;
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
    if (c->ch == D_CHANNEL_DECISION) {
        Sworn__V1__DecisionReply r = SWORN__V1__DECISION_REPLY__INIT;

        r.body_case = SWORN__V1__DECISION_REPLY__BODY_ERROR;
        r.error = &e;
        rc = sworn_frame_pack_reply(&r, &frame, &len);
        atomic_fetch_add(&c->d->metrics.decision_errors, 1);
    } else {
        Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;

        r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_ERROR;
        r.error = &e;
        rc = sworn_frame_pack_admin_response(&r, &frame, &len);
    }
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
            d_record_refused(c->d, c->ch, c->uid, c->pid, code, msg, NULL, NULL, 0);
            bufferevent_disable(bev, EV_READ);
            d_conn_reply_error(c, code, msg, NULL, 1);
            break;
        }
        evbuffer_drain(in, (size_t)used);
        if (body == NULL)
            continue;
        /* One request in flight per connection: pause reading until it is answered. A handler
         * that answers at once (a refusal) clears busy, and the loop goes on. */
        c->busy = 1;
        c->req_start_us = d_now_mono_us();
        bufferevent_disable(bev, EV_READ);
        if (c->ch == D_CHANNEL_DECISION)
            d_decide_frame(c->d, c, body, body_len);
        else
            d_admin_frame(c->d, c, body, body_len);
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
        d_record_refused(c->d, c->ch, c->uid, c->pid, SWORN_ERR_FORMAT,
                         "partial frame stalled: connection closed", NULL, NULL, 0);
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
        conn_drop(c);
}

static int uid_allowed(const uid_t *uids, size_t n, uid_t uid)
{
    for (size_t i = 0; i < n; i++)
        if (uids[i] == uid)
            return 1;
    return 0;
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg, enum d_channel ch)
{
    struct d_daemon *d = arg;
    struct ucred cred;
    socklen_t cl = sizeof(cred);
    struct d_conn *c;
    int allowed;

    (void)l;
    (void)sa;
    (void)salen;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || cl != sizeof(cred)) {
        d_record_refused(d, ch, (uid_t)-1, 0, SWORN_ERR_IO, "SO_PEERCRED failed", NULL, NULL, 0);
        close(fd);
        return;
    }
    allowed = ch == D_CHANNEL_DECISION
                  ? uid_allowed(d->cfg->proxy_uids, d->cfg->n_proxy_uids, cred.uid)
                  : uid_allowed(d->cfg->operator_uids, d->cfg->n_operator_uids, cred.uid);
    if (!allowed) {
        char msg[96];

        snprintf(msg, sizeof(msg), "uid %u may not use the %s socket", (unsigned)cred.uid,
                 ch == D_CHANNEL_DECISION ? "decision" : "admin");
        d_record_refused(d, ch, cred.uid, cred.pid, SWORN_ERR_ARG, msg, NULL, NULL, 0);
        close(fd);
        return;
    }
    if (d->n_conns >= D_MAX_CONNS || d->stopping) {
        d_record_refused(d, ch, cred.uid, cred.pid, SWORN_ERR_RANGE,
                         d->stopping ? "shutting down" : "too many connections", NULL, NULL, 0);
        close(fd);
        return;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        close(fd);
        return;
    }
    c->d = d;
    c->ch = ch;
    c->uid = cred.uid;
    c->pid = cred.pid;
    c->refs = 1;
    sworn_frame_dec_init(&c->dec);
    c->bev = bufferevent_socket_new(d->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (c->bev == NULL) {
        close(fd);
        free(c);
        return;
    }
    d->n_conns++;
    c->next = d->conns;
    if (d->conns != NULL)
        d->conns->prev = c;
    d->conns = c;
    bufferevent_setcb(c->bev, on_read, on_written, on_event, c);
    bufferevent_enable(c->bev, EV_READ);
}

static void on_accept_decision(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                               int salen, void *arg)
{
    on_accept(l, fd, sa, salen, arg, D_CHANNEL_DECISION);
}

static void on_accept_admin(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                            int salen, void *arg)
{
    on_accept(l, fd, sa, salen, arg, D_CHANNEL_ADMIN);
}

/* Bind a Unix stream socket at path, replacing a stale socket (never any other kind of file). */
static int listen_unix(struct d_daemon *d, const char *path, evconnlistener_cb cb, int inherited,
                       struct evconnlistener **out)
{
    struct sockaddr_un sun;
    struct stat st;

    if (inherited >= 0) {
        /* Bound and listening already (the monitor, monitor.h): backlog -1 leaves it as is. */
        *out = evconnlistener_new(d->base, cb, d, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1,
                                  inherited);
        if (*out == NULL)
            return sworn_err_set(SWORN_ERR_IO, "accept on %s: %s", path, strerror(errno));
        return 0;
    }

    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sun.sun_path))
        return sworn_err_set(SWORN_ERR_ARG, "socket path %s is too long", path);
    memcpy(sun.sun_path, path, strlen(path));
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return sworn_err_set(SWORN_ERR_ARG, "%s exists and is not a socket", path);
        if (unlink(path) != 0)
            return sworn_err_set(SWORN_ERR_IO, "unlink %s: %s", path, strerror(errno));
    }
    *out = evconnlistener_new_bind(d->base, cb, d, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
                                   128, (struct sockaddr *)&sun, (int)sizeof(sun));
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_IO, "listen on %s: %s", path, strerror(errno));
    /* Anyone may connect; SO_PEERCRED decides who is served (and every refusal is recorded). */
    if (chmod(path, 0666) != 0)
        return sworn_err_set(SWORN_ERR_IO, "chmod %s: %s", path, strerror(errno));
    return 0;
}

int d_server_listen(struct d_daemon *d)
{
    if (listen_unix(d, d->cfg->decision_socket, on_accept_decision,
                    d->listen_fds[D_CHANNEL_DECISION], &d->decision_listener) < 0)
        return -1;
    return listen_unix(d, d->cfg->admin_socket, on_accept_admin, d->listen_fds[D_CHANNEL_ADMIN],
                       &d->admin_listener);
}

void d_server_close_listeners(struct d_daemon *d)
{
    if (d->decision_listener != NULL) {
        evconnlistener_free(d->decision_listener);
        d->decision_listener = NULL;
        (void)unlink(d->cfg->decision_socket);
    }
    if (d->admin_listener != NULL) {
        evconnlistener_free(d->admin_listener);
        d->admin_listener = NULL;
        (void)unlink(d->cfg->admin_socket);
    }
}

void d_server_drop_all(struct d_daemon *d)
{
    struct d_conn *c = d->conns, *next;

    /* Holds by jobs are gone by now (the workers are stopped); drop the connections' own. */
    for (; c != NULL; c = next) {
        next = c->next;
        if (!c->gone)
            conn_drop(c);
    }
}
