/*
 * test_dclient.c -- unit tests of wire/dclient.c, the one client of decisiond's sockets, against
 * hostile peers played by the test itself (a socketpair, or a listening socket in a temporary
 * folder). No daemon; no sleeps: every wait is the client's own deadline.
 *
 * Evidence:
 *   1. A round trip over a real Unix socket path: connect, a typed decide call, the answer.
 *   2. A peer that stalls (reads, never answers): the call fails with SWORN_ERR_IO after its
 *      deadline, not before and not much after; one that trickles a frame byte by byte is
 *      bounded by the same deadline.
 *   3. A peer that sends a short frame then closes: SWORN_ERR_FORMAT, never a frame.
 *   4. An oversize (and a zero) length: SWORN_ERR_RANGE, and the stream stays refused.
 *   5. A clean close between frames, or a reset (the peer closed with our request unread): 1
 *      (no answer); a call reports it as an error.
 *   6. Two answers in one write are both read, in order (pipelining).
 *   7. Incremental mode: the same frames fed one byte at a time, as an event loop would.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dclient.h"
#include "err.h"
#include "frame.h"
#include "testutil.h"

static struct sworn_dclient *client(void)
{
    struct sworn_dclient *c = malloc(sizeof(*c));

    assert_non_null(c);
    sworn_dclient_init(c);
    return c;
}

/* A client on one end of a socketpair; the other end (the peer) in *peer. */
static struct sworn_dclient *paired(int *peer)
{
    int sv[2];
    struct sworn_dclient *c = client();

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    sworn_dclient_adopt(c, sv[0]);
    *peer = sv[1];
    return c;
}

static void done(struct sworn_dclient *c)
{
    sworn_dclient_close(c);
    free(c);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put(int fd, const void *p, size_t n)
{
    assert_int_equal(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* A framed DecisionReply holding an error with the given code. */
static uint8_t *error_reply(uint32_t code, size_t *len)
{
    Sworn__V1__DecisionReply r = SWORN__V1__DECISION_REPLY__INIT;
    Sworn__V1__ErrorFrame e = SWORN__V1__ERROR_FRAME__INIT;
    uint8_t *f;

    e.code = code;
    e.message = "refused";
    r.body_case = SWORN__V1__DECISION_REPLY__BODY_ERROR;
    r.error = &e;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, len), 0);
    return f;
}

/* --- 1. a round trip over a socket path --------------------------------------------------- */

struct server {
    int lfd;
};

/* Accept one connection, read one request frame, answer with an allow-less error reply. */
static void *serve_one(void *arg)
{
    struct server *sv = arg;
    struct sworn_dclient *in = client();
    const uint8_t *body;
    size_t blen, rlen;
    int fd = accept(sv->lfd, NULL, NULL);
    Sworn__V1__DecisionRequest *m;
    uint8_t *reply;

    if (fd < 0)
        return NULL;
    sworn_dclient_adopt(in, fd);
    if (sworn_dclient_recv(in, 10000, &body, &blen) == 0 &&
        (m = sworn_frame_unpack_decision_request(body, blen)) != NULL) {
        reply =
            error_reply(m->body_case == SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE ? 9 : 1, &rlen);
        (void)sworn_dclient_send(in, reply, rlen, 10000);
        free(reply);
        sworn__v1__decision_request__free_unpacked(m, NULL);
    }
    done(in);
    return NULL;
}

static void test_round_trip(void **state)
{
    char *dir = sworn_test_tmpdir("dclient");
    char path[512];
    struct sockaddr_un sun;
    struct server sv;
    pthread_t th;
    struct sworn_dclient *c = client();
    Sworn__V1__AuthorizationRequest req = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource res = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__DecisionReply *r;

    (void)state;
    snprintf(path, sizeof(path), "%s/decision.sock", dir);
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    memcpy(sun.sun_path, path, strlen(path));
    sv.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(sv.lfd >= 0);
    assert_int_equal(bind(sv.lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
    assert_int_equal(listen(sv.lfd, 4), 0);
    assert_int_equal(pthread_create(&th, NULL, serve_one, &sv), 0);

    req.request_id = "req-1";
    pr.id = "agent-1";
    req.principal = &pr;
    req.operation = "http.request";
    res.scheme = "https";
    res.host = "api.example.com";
    res.port = 443;
    req.resource = &res;
    assert_int_equal(sworn_dclient_connect(c, path), 0);
    assert_int_equal(sworn_dclient_decide(c, &req, 10000, &r), 0);
    assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
    assert_int_equal(r->error->code, 9); /* the server saw an authorize in its envelope */
    assert_int_equal(r->version, SWORN_WIRE_VERSION);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    assert_int_equal(pthread_join(th, NULL), 0);
    done(c);
    close(sv.lfd);

    /* No one listening, and a path too long for sun_path. */
    c = client();
    assert_int_equal(sworn_dclient_connect(c, path), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    memset(path, 'a', sizeof(path) - 1);
    path[sizeof(path) - 1] = '\0';
    assert_int_equal(sworn_dclient_connect(c, path), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    done(c);
    sworn_test_rmtree(dir);
    free(dir);
}

/* --- 2. a peer that stalls ---------------------------------------------------------------- */

static void test_stalled_peer(void **state)
{
    int peer;
    struct sworn_dclient *c = paired(&peer);
    const uint8_t *body = (const uint8_t *)"x";
    size_t blen = 1, flen;
    uint8_t *f = error_reply(2, &flen);
    double t0, took;

    (void)state;
    /* It reads the request and says nothing. */
    t0 = now_s();
    assert_int_equal(sworn_dclient_call(c, f, flen, 300, &body, &blen), -1);
    took = now_s() - t0;
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_null(body);
    assert_true(took >= 0.29);
    assert_true(took < 5.0);

    /* It trickles a frame, a byte per wake-up, never finishing it: the deadline still holds. */
    put(peer, f, 3);
    t0 = now_s();
    assert_int_equal(sworn_dclient_recv(c, 200, &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_true(now_s() - t0 >= 0.19);
    assert_false(sworn_dclient_idle(c));
    /* The rest comes: the frame completes. */
    put(peer, f + 3, flen - 3);
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), 0);
    assert_int_equal(blen, flen - SWORN_FRAME_HDR_LEN);
    assert_memory_equal(body, f + SWORN_FRAME_HDR_LEN, blen);
    assert_true(sworn_dclient_idle(c));
    free(f);
    close(peer);
    done(c);
}

/* --- 3. a short frame, then a close ------------------------------------------------------- */

static void test_short_frame_then_close(void **state)
{
    int peer;
    struct sworn_dclient *c = paired(&peer);
    const uint8_t *body = (const uint8_t *)"x";
    size_t blen = 1;

    (void)state;
    put(peer, "\x00\x00\x00\x10\x12\x0d\x08", 7); /* 16 bytes announced, 3 sent */
    close(peer);
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    assert_null(body);
    done(c);

    /* Only half a header. */
    c = paired(&peer);
    put(peer, "\x00\x00", 2);
    close(peer);
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    done(c);
}

/* --- 4. lengths out of range -------------------------------------------------------------- */

static void test_oversize_length(void **state)
{
    int peer;
    struct sworn_dclient *c = paired(&peer);
    const uint8_t *body;
    size_t blen, flen;
    uint8_t *f = error_reply(2, &flen);

    (void)state;
    put(peer, "\x00\x10\x00\x01", 4); /* SWORN_FRAME_MAX + 1 */
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    /* The stream is out of step for good: a valid frame after it is not taken. */
    put(peer, f, flen);
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    close(peer);
    done(c);

    c = paired(&peer);
    put(peer, "\xff\xff\xff\xff", 4);
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    close(peer);
    done(c);

    c = paired(&peer);
    put(peer, "\x00\x00\x00\x00", 4);
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    close(peer);
    done(c);
    free(f);
}

/* --- 5. a clean close; 6. pipelined answers ------------------------------------------------ */

static void test_close_and_pipelining(void **state)
{
    int peer;
    struct sworn_dclient *c = paired(&peer);
    const uint8_t *body;
    size_t blen, l1, l2;
    uint8_t *f1 = error_reply(2, &l1), *f2 = error_reply(3, &l2), *both = malloc(l1 + l2);
    Sworn__V1__DecisionReply *r;

    (void)state;
    assert_non_null(both);
    memcpy(both, f1, l1);
    memcpy(both + l1, f2, l2);
    put(peer, both, l1 + l2);
    close(peer);
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), 0);
    r = sworn_frame_unpack_reply(body, blen);
    assert_non_null(r);
    assert_int_equal(r->error->code, 2);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), 0);
    r = sworn_frame_unpack_reply(body, blen);
    assert_non_null(r);
    assert_int_equal(r->error->code, 3);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* Then the close, between frames. */
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), 1);
    assert_null(body);
    assert_true(sworn_dclient_idle(c));
    done(c);

    /* A peer that closes with our request unread resets the connection: a close too. */
    c = paired(&peer);
    assert_int_equal(sworn_dclient_send(c, f1, l1, 10000), 0);
    close(peer);
    assert_int_equal(sworn_dclient_recv(c, 10000, &body, &blen), 1);
    assert_null(body);
    done(c);

    /* A call whose peer closes without answering is an error, not an answer. */
    c = paired(&peer);
    close(peer);
    assert_int_equal(sworn_dclient_call(c, f1, l1, 10000, &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    done(c);
    free(both);
    free(f1);
    free(f2);
}

/* --- 7. incremental mode ------------------------------------------------------------------ */

static void test_incremental(void **state)
{
    struct sworn_dclient *c = client();
    size_t l1, l2, frames = 0;
    uint8_t *f1 = error_reply(4, &l1), *f2 = error_reply(5, &l2), stream[512];

    (void)state;
    assert_true(l1 + l2 <= sizeof(stream));
    memcpy(stream, f1, l1);
    memcpy(stream + l1, f2, l2);
    for (size_t off = 0; off < l1 + l2;) {
        const uint8_t *body;
        size_t blen;
        long used = sworn_dclient_feed(c, stream + off, 1, &body, &blen);

        assert_int_equal(used, 1);
        off += 1;
        if (body != NULL) {
            Sworn__V1__DecisionReply *r = sworn_frame_unpack_reply(body, blen);

            assert_non_null(r);
            assert_int_equal(r->error->code, frames == 0 ? 4 : 5);
            sworn__v1__decision_reply__free_unpacked(r, NULL);
            frames++;
        } else {
            assert_false(sworn_dclient_idle(c));
        }
    }
    assert_int_equal(frames, 2);
    assert_true(sworn_dclient_idle(c));
    /* A refused length ends the stream for good. */
    {
        const uint8_t *body;
        size_t blen;

        assert_int_equal(
            sworn_dclient_feed(c, (const uint8_t *)"\x7f\xff\xff\xff", 4, &body, &blen), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
        assert_int_equal(sworn_dclient_feed(c, f1, l1, &body, &blen), -1);
    }
    /* Not connected: the blocking calls refuse. */
    assert_int_equal(sworn_dclient_send(c, f1, l1, 100), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    done(c);
    free(f1);
    free(f2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_stalled_peer),
        cmocka_unit_test(test_short_frame_then_close),
        cmocka_unit_test(test_oversize_length),
        cmocka_unit_test(test_close_and_pipelining),
        cmocka_unit_test(test_incremental),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
