/*
 * dclient.h -- the one client of sworn-decisiond's two sockets (docs/protocol.md): the decision
 * socket (the proxy, tests, the benchmark) and the admin socket (swornctl, tests). It frames a
 * request, sends it, and reads the framed answer, in one of two modes:
 *
 *   blocking, with a deadline: sworn_dclient_connect, then sworn_dclient_call (or _send and
 *     _recv, or the typed sworn_dclient_decide / _exchange / _admin). Every wait is a poll(2)
 *     bounded by the call's timeout, so a peer that stalls costs at most that long.
 *
 *   incremental, for an event loop that owns the socket (libevent): the loop reads what it
 *     likes and hands the bytes to sworn_dclient_feed, which returns complete answer bodies one
 *     at a time. With a bufferevent, in its read callback:
 *
 *         struct evbuffer *in = bufferevent_get_input(bev);
 *         while (evbuffer_get_length(in) > 0) {
 *             size_t n = evbuffer_get_contiguous_space(in);
 *             long used = sworn_dclient_feed(c, evbuffer_pullup(in, (ev_ssize_t)n), n, &body,
 *                                            &len);
 *             if (used < 0)
 *                 -> the stream is out of step: close the connection (fail closed: deny)
 *             evbuffer_drain(in, (size_t)used);
 *             if (body != NULL)
 *                 -> sworn_frame_unpack_reply(body, len): the answer to the oldest request
 *         }
 *
 *     and the requests are written with sworn_frame_pack_authorize (or _token_exchange,
 *     _admin_request) into the bufferevent. decisiond answers each connection's requests in
 *     order, so a connection may carry several in flight.
 *
 * Memory: the caller owns struct sworn_dclient (it holds a read buffer of SWORN_DCLIENT_BUF
 * bytes, so keep it off small stacks) and must sworn_dclient_close it. An answer body handed
 * out stays valid until the next call on the same client. Replies may hold a credential: the
 * read buffer is wiped when the client is closed.
 *
 * Errors (sworn_err): SWORN_ERR_IO (connect, send or recv failed; no answer within the timeout;
 * the peer closed), SWORN_ERR_FORMAT (the peer closed in the middle of a frame; an answer that
 * does not decode), SWORN_ERR_RANGE (an answer length of 0 or above SWORN_FRAME_MAX: the stream
 * is out of step for good), SWORN_ERR_ARG (misuse), SWORN_ERR_NOMEM.
 *
 * Thread safety: a client is used by one thread at a time; clients share nothing.
 */
#ifndef SWORN_DCLIENT_H
#define SWORN_DCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

#define SWORN_DCLIENT_BUF 65536u   /* bytes read from the socket at a time */
#define SWORN_DCLIENT_FOREVER (-1) /* a timeout: wait without a deadline */

struct sworn_dclient {
    int fd; /* the connected socket; -1 when none (incremental mode needs none) */
    struct sworn_frame_dec dec;
    uint8_t buf[SWORN_DCLIENT_BUF]; /* bytes read, not yet fed: buf[off..have) */
    size_t off, have;
};

/* Start c with no socket (for sworn_dclient_feed, or before _connect / _adopt). */
void sworn_dclient_init(struct sworn_dclient *c);

/*
 * Initialise c and connect it to the Unix stream socket at path. Returns 0, or -1 (SWORN_ERR_ARG
 * for a path too long for sun_path, SWORN_ERR_IO when connect fails) with c initialised, no
 * socket.
 */
int sworn_dclient_connect(struct sworn_dclient *c, const char *path);

/* Initialise c on a socket the caller connected (c owns fd from now on, until _detach). */
void sworn_dclient_adopt(struct sworn_dclient *c, int fd);

/* Give the socket back without closing it; c is closed otherwise. Returns the fd (or -1). */
int sworn_dclient_detach(struct sworn_dclient *c);

/* Close the socket (if any), free the decoder, wipe the buffer. c may be initialised again. */
void sworn_dclient_close(struct sworn_dclient *c);

/*
 * Write the len bytes of frame (a whole frame: header and body), waiting at most timeout_ms
 * (SWORN_DCLIENT_FOREVER: no deadline) for the socket to take them. Returns 0, or -1 with nothing
 * known of how much the peer read.
 */
int sworn_dclient_send(struct sworn_dclient *c, const uint8_t *frame, size_t len, int timeout_ms);

/*
 * Read one answer frame, waiting at most timeout_ms in all (SWORN_DCLIENT_FOREVER: no deadline).
 * Bytes read past its end are kept for the next call (pipelined answers). OUT: *body, *len (the
 * body, valid until the next call on c). Returns 0 with a frame; 1 when the peer closed (or
 * reset) the connection between frames (no answer: *body NULL); -1 on an error (above), *body
 * NULL.
 */
int sworn_dclient_recv(struct sworn_dclient *c, int timeout_ms, const uint8_t **body, size_t *len);

/* sworn_dclient_send then sworn_dclient_recv, both within timeout_ms; a close is -1 here. */
int sworn_dclient_call(struct sworn_dclient *c, const uint8_t *frame, size_t len, int timeout_ms,
                       const uint8_t **body, size_t *body_len);

/*
 * Typed round trips: pack the request in its envelope, call, and decode the answer strictly.
 * OUT: *out (free it with the matching sworn__v1__*__free_unpacked). Returns 0, or -1 with *out
 * NULL. An ErrorFrame answer is a success here: the caller reads (*out)->body_case.
 */
int sworn_dclient_decide(struct sworn_dclient *c, const Sworn__V1__AuthorizationRequest *req,
                         int timeout_ms, Sworn__V1__DecisionReply **out);
int sworn_dclient_exchange(struct sworn_dclient *c, const Sworn__V1__TokenExchange *ex,
                           int timeout_ms, Sworn__V1__DecisionReply **out);
int sworn_dclient_admin(struct sworn_dclient *c, const Sworn__V1__AdminRequest *rq, int timeout_ms,
                        Sworn__V1__AdminResponse **out);

/*
 * Incremental mode: feed up to len bytes the caller read. Consumes bytes up to the end of at most
 * one frame and returns how many (call again with the rest). When a frame completes, *body and
 * *body_len give its body, valid until the next call on c; otherwise *body is NULL. Returns -1
 * (SWORN_ERR_RANGE) on a length out of range, and on every call after.
 */
long sworn_dclient_feed(struct sworn_dclient *c, const uint8_t *p, size_t len, const uint8_t **body,
                        size_t *body_len);

/* Is c between frames (nothing partial held)? A connection may only end there. */
int sworn_dclient_idle(const struct sworn_dclient *c);

#endif
