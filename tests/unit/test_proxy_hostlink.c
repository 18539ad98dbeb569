/*
 * test_proxy_hostlink.c -- sworn-proxy's hostlink listener end to end (docs/proxy.md, "The
 * hostlink"): the test is sworn-run's relay. It connects to the proxy's hostlink socket, sends a
 * HostlinkHello frame (wire/frame.h), then the agent's HTTP proxy requests, against a real
 * decisiond (a dev stack) that records every decision; what the record holds is read back with
 * the admin Tail call.
 *
 * What each case holds to:
 *   - a bad, short, oversized, late or missing hello (a length of 0 or above 1024, a body that is
 *     not a HostlinkHello, another principal, no sandbox, index 0, another wire version, nothing
 *     before timeouts.head, an HTTP request where the hello should be, a close before the hello
 *     is whole) closes the connection without a byte of answer, and is in the log as a refusal:
 *     a DENY, rule "", operation "hostlink.hello", principal agent-1 (the listener's) with no
 *     sandbox, the relay's uid (SO_PEERCRED) and no sandbox_start_index, refusal.status 400 (408
 *     when late), refusal.reason the reader's sentence and head_sha256 the SHA-256 of exactly the
 *     bytes it was judged on;
 *   - nothing sent after a refused hello is decided.
 * The proxy's timeouts.head is 1 s here, so the late case ends within it; the test waits for the
 * close, never for a time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "frame.h"
#include "proxy_fixture.h"
#include "stack_fixture.h"
#include "sworn.pb-c.h"
#include "testutil.h"

#define PRINCIPAL "agent-1"

static struct {
    struct sworn_stack s;
    struct sworn_pfx p;
} T;

/* ---- the relay's side ---- */

static int dial_hostlink(void)
{
    struct sockaddr_un sun = {0};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    sun.sun_family = AF_UNIX;
    snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", T.p.hostlink_socket);
    if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
        fail_msg("connect %s: %s", T.p.hostlink_socket, strerror(errno));
    return fd;
}

static void write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n > 0) {
        ssize_t w = write(fd, b, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            fail_msg("write to the hostlink: %s", strerror(errno));
        b += w;
        n -= (size_t)w;
    }
}

/*
 * A hello frame as a relay (or a broken one) sends it: the u32 big-endian length, then the
 * message packed as it is (no check, so a test can send what the wire would refuse). version 0
 * is left out of the message. OUT: *len. Returns it (free it).
 */
static uint8_t *hello_frame(const char *principal, const char *sandbox, uint64_t index,
                            uint32_t agent_uid, uint32_t version, size_t *len)
{
    Sworn__V1__HostlinkHello h = SWORN__V1__HOSTLINK_HELLO__INIT;
    size_t n;
    uint8_t *out;

    h.principal = (char *)principal;
    h.sandbox = (char *)sandbox;
    h.sandbox_start_index = index;
    h.agent_uid = agent_uid;
    h.version = version;
    n = sworn__v1__hostlink_hello__get_packed_size(&h);
    out = malloc(4 + n);
    assert_non_null(out);
    out[0] = (uint8_t)(n >> 24);
    out[1] = (uint8_t)(n >> 16);
    out[2] = (uint8_t)(n >> 8);
    out[3] = (uint8_t)n;
    assert_int_equal(sworn__v1__hostlink_hello__pack(&h, out + 4), n);
    *len = 4 + n;
    return out;
}

/*
 * Read fd until the proxy closes it (EOF or a reset), at most timeout_ms. Returns how many bytes
 * came before the close; fails the test when it did not close in time.
 */
static size_t wait_closed(int fd, int timeout_ms)
{
    struct timespec t0, now;
    size_t got = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        uint8_t buf[4096];
        long left;
        ssize_t r;

        clock_gettime(CLOCK_MONOTONIC, &now);
        left =
            timeout_ms - ((now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000L);
        if (left <= 0)
            fail_msg("the proxy did not close the hostlink connection within %d ms", timeout_ms);
        if (poll(&pfd, 1, (int)left) <= 0)
            continue;
        r = read(fd, buf, sizeof(buf));
        if (r == 0 || (r < 0 && errno == ECONNRESET))
            return got;
        if (r < 0 && errno != EINTR && errno != EAGAIN)
            fail_msg("read from the hostlink: %s", strerror(errno));
        if (r > 0)
            got += (size_t)r;
    }
}

/* ---- the record ---- */

/* The index the next entry will get. */
static uint64_t log_end(void)
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 1);
    uint64_t end = tail->tail->first_index + tail->tail->n_entries;

    sworn__v1__admin_response__free_unpacked(tail, NULL);
    return end;
}

/* How many decisions from index `from` on have operation op (NULL: any). */
static size_t decisions_since(uint64_t from, const char *op)
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 256);
    const Sworn__V1__TailResponse *t = tail->tail;
    size_t n = 0;

    for (size_t i = 0; i < t->n_entries; i++) {
        const Sworn__V1__Entry *e = t->entries[i];

        if (t->first_index + i >= from && e->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
            (op == NULL || strcmp(e->decision->request->operation, op) == 0))
            n++;
    }
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    return n;
}

/*
 * The one decision recorded from index `from` on is the hello's refusal: status, the reader's
 * sentence, and the digest of judged[0..judged_len) (none when 0), under the listener's principal
 * and the relay's uid, with no sandbox.
 */
static void expect_hello_refused(uint64_t from, int status, const char *sentence,
                                 const uint8_t *judged, size_t judged_len)
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 256);
    const Sworn__V1__TailResponse *t = tail->tail;
    const Sworn__V1__DecisionRecord *d = NULL;
    const Sworn__V1__AuthorizationRequest *q;
    char reason[512];
    size_t found = 0;

    for (size_t i = 0; i < t->n_entries; i++)
        if (t->first_index + i >= from &&
            t->entries[i]->kind_case == SWORN__V1__ENTRY__KIND_DECISION) {
            d = t->entries[i]->decision;
            found++;
        }
    if (found != 1)
        fail_msg("%zu decisions recorded for the refused hello \"%s\", not 1", found, sentence);
    q = d->request;
    assert_int_equal(d->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(d->rule_id, "");
    snprintf(reason, sizeof(reason), "refused by the proxy: %s", sentence);
    assert_string_equal(d->reason, reason);
    assert_string_equal(q->operation, "hostlink.hello");
    assert_non_null(q->refusal);
    assert_int_equal(q->refusal->status, status);
    assert_string_equal(q->refusal->reason, sentence);
    if (judged_len == 0) {
        assert_int_equal(q->refusal->head_sha256.len, 0);
    } else {
        uint8_t sha[32];

        assert_int_equal(EVP_Digest(judged, judged_len, sha, NULL, EVP_sha256(), NULL), 1);
        assert_int_equal(q->refusal->head_sha256.len, 32);
        assert_memory_equal(q->refusal->head_sha256.data, sha, 32);
    }
    /* Nothing a refused hello says is believed: the listener's principal, the relay's uid. */
    assert_string_equal(q->principal->id, PRINCIPAL);
    assert_string_equal(q->principal->sandbox, "");
    assert_int_equal(q->principal->uid, (uint32_t)getuid());
    assert_int_equal(q->principal->sandbox_start_index, 0);
    assert_string_equal(q->resource->scheme, "");
    assert_string_equal(q->resource->host, "");
    sworn__v1__admin_response__free_unpacked(tail, NULL);
}

/*
 * Send bytes as the connection's first (then shut the writing side when shut_write), and expect
 * the close without an answer and the refusal recorded: judged_len of the bytes sent are what it
 * was judged on.
 */
static void refused_case(const void *bytes, size_t len, int shut_write, size_t judged_len,
                         int status, const char *sentence)
{
    uint64_t from = log_end();
    int fd = dial_hostlink();

    if (len > 0)
        write_all(fd, bytes, len);
    if (shut_write)
        assert_int_equal(shutdown(fd, SHUT_WR), 0);
    assert_int_equal(wait_closed(fd, 20000), 0); /* closed, and not a byte of answer */
    close(fd);
    expect_hello_refused(from, status, sentence, bytes, judged_len);
}

static const char http_request[] = "GET http://127.0.0.1:8080/denied/after-hello HTTP/1.1\r\n"
                                   "Host: 127.0.0.1:8080\r\n\r\n";

/* ---- setup ---- */

static int setup(void **state)
{
    struct sworn_pfx_opts po = {0};

    (void)state;
    memset(&T, 0, sizeof(T));
    if (sworn_stack_up(&T.s, "--no-proxy --no-tpm --file-key") != 0)
        return -1;
    po.hostlink = 1;
    po.extra = "timeouts:\n  head: 1s\n";
    return sworn_pfx_start(&T.p, T.s.decision, &po);
}

static int teardown(void **state)
{
    (void)state;
    return sworn_pfx_stop_with_stack(&T.p, &T.s);
}

/* ---- refused hellos ---- */

static void test_length_zero(void **state)
{
    static const uint8_t frame[] = {0, 0, 0, 0};
    uint8_t bytes[sizeof(frame) + sizeof(http_request) - 1];

    (void)state;
    memcpy(bytes, frame, sizeof(frame));
    memcpy(bytes + sizeof(frame), http_request, sizeof(http_request) - 1);
    refused_case(bytes, sizeof(bytes), 0, 4, 400, "the hostlink hello's length is 0");
}

/* A length above 1024 is refused on its 4 bytes: no body is waited for. */
static void test_length_over_max(void **state)
{
    static const uint8_t len1025[] = {0, 0, 0x04, 0x01};
    static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff};

    (void)state;
    refused_case(len1025, sizeof(len1025), 0, 4, 400,
                 "the hostlink hello's length is above 1024 bytes (not a hello)");
    refused_case(huge, sizeof(huge), 0, 4, 400,
                 "the hostlink hello's length is above 1024 bytes (not a hello)");
}

/* An agent's (or curl's) request where the relay's hello should be: "GET " reads as a length of
 * 1195725856. Refused and closed unanswered; the request after it is never decided. */
static void test_http_where_hello_should_be(void **state)
{
    uint64_t from = log_end();

    (void)state;
    refused_case(http_request, sizeof(http_request) - 1, 0, 4, 400,
                 "the hostlink hello's length is above 1024 bytes (not a hello)");
    assert_int_equal(decisions_since(from, "http.request"), 0);
}

static void test_garbage_body(void **state)
{
    uint8_t bytes[4 + 16];

    (void)state;
    memset(bytes, 0xff, sizeof(bytes));
    bytes[0] = bytes[1] = bytes[2] = 0;
    bytes[3] = 16;
    refused_case(bytes, sizeof(bytes), 0, sizeof(bytes), 400,
                 "the hostlink hello does not decode as a HostlinkHello");
}

static void test_other_principal(void **state)
{
    size_t n;
    uint8_t *f = hello_frame("agent-2", "run-other", 5, 4242, SWORN_WIRE_VERSION, &n);

    (void)state;
    refused_case(f, n, 0, n, 400, "the hostlink hello names another principal than the listener's");
    free(f);
}

static void test_missing_sandbox(void **state)
{
    size_t n;
    uint8_t *f = hello_frame(PRINCIPAL, "", 5, 4242, SWORN_WIRE_VERSION, &n);

    (void)state;
    refused_case(f, n, 0, n, 400,
                 "the hostlink hello's sandbox is not a name of 1..128 bytes 0x21..0x7e");
    free(f);
}

static void test_index_zero(void **state)
{
    size_t n;
    uint8_t *f = hello_frame(PRINCIPAL, "run-zero", 0, 4242, SWORN_WIRE_VERSION, &n);

    (void)state;
    refused_case(f, n, 0, n, 400, "the hostlink hello has no sandbox_start_index (0)");
    free(f);
}

static void test_wrong_version(void **state)
{
    size_t n;
    uint8_t *f = hello_frame(PRINCIPAL, "run-v2", 5, 4242, 2, &n), *g;

    (void)state;
    refused_case(f, n, 0, n, 400, "the hostlink hello is not of wire version 1");
    free(f);
    g = hello_frame(PRINCIPAL, "run-v0", 5, 4242, 0, &n);
    refused_case(g, n, 0, n, 400, "the hostlink hello is not of wire version 1");
    free(g);
}

/* Nothing, or half a hello, within timeouts.head (1 s): 408, what came is what was judged. */
static void test_late(void **state)
{
    size_t n;
    uint8_t *f = hello_frame(PRINCIPAL, "run-late", 5, 4242, SWORN_WIRE_VERSION, &n);

    (void)state;
    refused_case(NULL, 0, 0, 0, 408, "the hostlink hello did not arrive within timeouts.head");
    refused_case(f, n - 1, 0, n - 1, 408, "the hostlink hello did not arrive within timeouts.head");
    refused_case(f, 2, 0, 2, 408, "the hostlink hello did not arrive within timeouts.head");
    free(f);
}

/* Closed (the writing side shut) before the hello was whole, or before any byte of it. */
static void test_closed_before_hello(void **state)
{
    size_t n;
    uint8_t *f = hello_frame(PRINCIPAL, "run-short", 5, 4242, SWORN_WIRE_VERSION, &n);

    (void)state;
    refused_case(NULL, 0, 1, 0, 400, "the connection closed before a whole hostlink hello");
    refused_case(f, n / 2, 1, n / 2, 400, "the connection closed before a whole hostlink hello");
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_length_zero),
        cmocka_unit_test(test_length_over_max),
        cmocka_unit_test(test_http_where_hello_should_be),
        cmocka_unit_test(test_garbage_body),
        cmocka_unit_test(test_other_principal),
        cmocka_unit_test(test_missing_sandbox),
        cmocka_unit_test(test_index_zero),
        cmocka_unit_test(test_wrong_version),
        cmocka_unit_test(test_late),
        cmocka_unit_test(test_closed_before_hello),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
