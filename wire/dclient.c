/*
 * dclient.c -- the client of decisiond's sockets (dclient.h).
 *
 * The blocking mode is the incremental mode plus a socket: recv(2) fills c->buf, the frame
 * decoder (frame.h) takes from it what belongs to the current answer, and the rest waits in
 * c->buf for the next call. Deadlines are absolute (CLOCK_MONOTONIC), so a peer that trickles
 * one byte at a time cannot stretch a call beyond its timeout.
 */
#define _GNU_SOURCE /* MSG_NOSIGNAL, SOCK_CLOEXEC */
#include "dclient.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "wipe.h"

void sworn_dclient_init(struct sworn_dclient *c)
{
    c->fd = -1;
    sworn_frame_dec_init(&c->dec);
    c->off = c->have = 0;
}

void sworn_dclient_adopt(struct sworn_dclient *c, int fd)
{
    sworn_dclient_init(c);
    c->fd = fd;
}

int sworn_dclient_connect(struct sworn_dclient *c, const char *path)
{
    struct sockaddr_un sun;
    size_t n = strlen(path);
    int fd;

    sworn_dclient_init(c);
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    if (n >= sizeof(sun.sun_path))
        return sworn_err_set(SWORN_ERR_ARG, "socket path %s is too long", path);
    memcpy(sun.sun_path, path, n);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
        int e = errno;

        close(fd);
        return sworn_err_set(SWORN_ERR_IO, "connect %s: %s", path, strerror(e));
    }
    c->fd = fd;
    return 0;
}

int sworn_dclient_detach(struct sworn_dclient *c)
{
    int fd = c->fd;

    c->fd = -1;
    sworn_dclient_close(c);
    return fd;
}

void sworn_dclient_close(struct sworn_dclient *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    sworn_frame_dec_free(&c->dec);
    sworn_memzero(c->buf, sizeof(c->buf));
    c->off = c->have = 0;
}

long sworn_dclient_feed(struct sworn_dclient *c, const uint8_t *p, size_t len, const uint8_t **body,
                        size_t *body_len)
{
    return sworn_frame_dec_feed(&c->dec, p, len, body, body_len);
}

int sworn_dclient_idle(const struct sworn_dclient *c)
{
    return c->off == c->have && sworn_frame_dec_idle(&c->dec);
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The deadline of a call of timeout_ms from now; -1 for none. */
static int64_t deadline_of(int timeout_ms)
{
    return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/*
 * Wait until c->fd is ready for events (POLLIN or POLLOUT) or the deadline passes. Returns 0
 * when ready (or closed: the next read or write says so), -1 (SWORN_ERR_IO) at the deadline.
 */
static int wait_for(struct sworn_dclient *c, short events, int64_t deadline, const char *what)
{
    for (;;) {
        struct pollfd pfd = {c->fd, events, 0};
        int64_t left = deadline < 0 ? -1 : deadline - now_ms();
        int n;

        if (deadline >= 0 && left <= 0)
            return sworn_err_set(SWORN_ERR_IO, "%s: nothing within the deadline", what);
        n = poll(&pfd, 1, left > 2000000000 ? 2000000000 : (int)left);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return sworn_err_set(SWORN_ERR_IO, "poll: %s", strerror(errno));
    }
}

static int send_until(struct sworn_dclient *c, const uint8_t *p, size_t len, int64_t deadline)
{
    if (c->fd < 0)
        return sworn_err_set(SWORN_ERR_ARG, "dclient: not connected");
    while (len > 0) {
        ssize_t w = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_for(c, POLLOUT, deadline, "send") < 0)
                return -1;
            continue;
        }
        if (w <= 0)
            return sworn_err_set(SWORN_ERR_IO, "send: %s", w < 0 ? strerror(errno) : "nothing");
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int sworn_dclient_send(struct sworn_dclient *c, const uint8_t *frame, size_t len, int timeout_ms)
{
    return send_until(c, frame, len, deadline_of(timeout_ms));
}

static int recv_until(struct sworn_dclient *c, int64_t deadline, const uint8_t **body, size_t *len)
{
    *body = NULL;
    *len = 0;
    if (c->fd < 0)
        return sworn_err_set(SWORN_ERR_ARG, "dclient: not connected");
    for (;;) {
        ssize_t n;

        while (c->off < c->have) {
            long used = sworn_frame_dec_feed(&c->dec, c->buf + c->off, c->have - c->off, body, len);

            if (used < 0)
                return -1;
            c->off += (size_t)used;
            if (*body != NULL)
                return 0;
        }
        c->off = c->have = 0;
        /* No deadline: one blocking recv per read, as cheap as a read loop can be. */
        if (deadline >= 0 && wait_for(c, POLLIN, deadline, "recv") < 0)
            return -1;
        n = recv(c->fd, c->buf, sizeof(c->buf), deadline >= 0 ? MSG_DONTWAIT : 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (n < 0 && errno != ECONNRESET)
            return sworn_err_set(SWORN_ERR_IO, "recv: %s", strerror(errno));
        /* A reset is a close too: a peer that closes with our request unread (decisiond refusing
         * a peer before reading it) resets the connection instead of ending it. */
        if (n <= 0) {
            if (!sworn_frame_dec_idle(&c->dec))
                return sworn_err_set(SWORN_ERR_FORMAT, "the peer closed in the middle of a frame");
            return 1;
        }
        c->have = (size_t)n;
    }
}

int sworn_dclient_recv(struct sworn_dclient *c, int timeout_ms, const uint8_t **body, size_t *len)
{
    return recv_until(c, deadline_of(timeout_ms), body, len);
}

int sworn_dclient_call(struct sworn_dclient *c, const uint8_t *frame, size_t len, int timeout_ms,
                       const uint8_t **body, size_t *body_len)
{
    int64_t deadline = deadline_of(timeout_ms);
    int rc;

    *body = NULL;
    *body_len = 0;
    if (send_until(c, frame, len, deadline) < 0)
        return -1;
    rc = recv_until(c, deadline, body, body_len);
    if (rc == 1)
        return sworn_err_set(SWORN_ERR_IO, "the peer closed the connection without an answer");
    return rc;
}

/* Call with frame (freed and wiped here, it may hold token values); the body as *body. */
static int call_frame(struct sworn_dclient *c, uint8_t *frame, size_t len, int timeout_ms,
                      const uint8_t **body, size_t *body_len)
{
    int rc = sworn_dclient_call(c, frame, len, timeout_ms, body, body_len);

    sworn_memzero(frame, len);
    free(frame);
    return rc;
}

int sworn_dclient_decide(struct sworn_dclient *c, const Sworn__V1__AuthorizationRequest *req,
                         int timeout_ms, Sworn__V1__DecisionReply **out)
{
    uint8_t *frame;
    size_t len, blen;
    const uint8_t *body;

    *out = NULL;
    if (sworn_frame_pack_authorize(req, &frame, &len) < 0 ||
        call_frame(c, frame, len, timeout_ms, &body, &blen) < 0)
        return -1;
    *out = sworn_frame_unpack_reply(body, blen);
    return *out != NULL ? 0 : -1;
}

int sworn_dclient_exchange(struct sworn_dclient *c, const Sworn__V1__TokenExchange *ex,
                           int timeout_ms, Sworn__V1__DecisionReply **out)
{
    uint8_t *frame;
    size_t len, blen;
    const uint8_t *body;

    *out = NULL;
    if (sworn_frame_pack_token_exchange(ex, &frame, &len) < 0 ||
        call_frame(c, frame, len, timeout_ms, &body, &blen) < 0)
        return -1;
    *out = sworn_frame_unpack_reply(body, blen);
    return *out != NULL ? 0 : -1;
}

int sworn_dclient_admin(struct sworn_dclient *c, const Sworn__V1__AdminRequest *rq, int timeout_ms,
                        Sworn__V1__AdminResponse **out)
{
    uint8_t *frame;
    size_t len, blen;
    const uint8_t *body;

    *out = NULL;
    if (sworn_frame_pack_admin_request(rq, &frame, &len) < 0 ||
        call_frame(c, frame, len, timeout_ms, &body, &blen) < 0)
        return -1;
    *out = sworn_frame_unpack_admin_response(body, blen);
    return *out != NULL ? 0 : -1;
}
