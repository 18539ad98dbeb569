/*
 * test_proxy_hostlink.c -- sworn-proxy's hostlink listener end to end (docs/proxy.md, "The
 * hostlink"): the test is sworn-run's relay. It connects to the proxy's hostlink socket, sends a
 * HostlinkHello frame (wire/frame.h), then the agent's HTTP proxy requests, against a real
 * decisiond (a dev stack) that records every decision; what the record holds is read back with
 * the admin Tail call.
 *
 * What each case holds to:
 *   - after a good hello (for a sandbox started through the admin call sandbox_start, as sworn-run
 *     records it), every request of the connection is recorded with Principal.id the listener's
 *     principal and sandbox, uid and sandbox_start_index the hello's, whether the hello came in
 *     one write with the request or one byte per read; a hello naming a sandbox that is not
 *     running (never started, or ended) passes the proxy, and decisiond denies its requests;
 *   - a bad, short, oversized, late or missing hello (a length of 0 or above 1024, a body that is
 *     not a HostlinkHello, another principal, a principal that is not a name, no sandbox, index
 *     0, another wire version, fields out of order or unknown, nothing
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
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "frame.h"
#include "proxy_fixture.h"
#include "stack_fixture.h"
#include "sworn.pb-c.h"
#include "testutil.h"

#define PRINCIPAL "agent-1"
#define AGENT_UID 4242u /* the agent's uid outside its sandbox, as the relay says it */

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

/* ---- sandboxes, as sworn-run records them (admin sandbox_start, sandbox_end) ---- */

/* Record the start of sandbox name (principal agent-1, agent uid AGENT_UID). OUT: id (its
 * sandbox_id). Returns its SandboxStarted entry's index. */
static uint64_t sandbox_start(const char *name, uint8_t id[16])
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__SandboxStartRequest sr = SWORN__V1__SANDBOX_START_REQUEST__INIT;
    Sworn__V1__SandboxStarted st = SWORN__V1__SANDBOX_STARTED__INIT;
    Sworn__V1__SandboxLimits lim = SWORN__V1__SANDBOX_LIMITS__INIT;
    char *command[] = {"agent", "--task", "hostlink-test"};
    uint8_t digest[32];
    Sworn__V1__AdminResponse *r;
    uint64_t index;

    assert_int_equal(RAND_bytes(id, 16), 1);
    assert_int_equal(EVP_Digest("sworn-run config", 16, digest, NULL, EVP_sha256(), NULL), 1);
    st.principal = PRINCIPAL;
    st.name = (char *)name;
    st.sandbox_id.data = id;
    st.sandbox_id.len = 16;
    st.n_command = 3;
    st.command = command;
    lim.wall_ms = 600000;
    lim.memory_bytes = 1u << 30;
    lim.processes = 64;
    lim.enforced_by = "rlimit";
    st.limits = &lim;
    st.config_sha256.data = digest;
    st.config_sha256.len = 32;
    st.agent_uid = AGENT_UID;
    st.isolation = "unprivileged";
    sr.started = &st;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_START;
    rq.sandbox_start = &sr;
    r = sworn_stack_admin(&T.s, &rq);
    assert_non_null(r);
    if (r->body_case != SWORN__V1__ADMIN_RESPONSE__BODY_SANDBOX)
        fail_msg("sandbox_start was not answered with its index: %s",
                 r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR ? r->error->message : "?");
    index = r->sandbox->log_index;
    assert_true(index > 0);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return index;
}

/* Record the end of the sandbox started at index with id (the agent exited 0). */
static void sandbox_end(uint64_t index, const uint8_t id[16])
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__SandboxEndRequest er = SWORN__V1__SANDBOX_END_REQUEST__INIT;
    Sworn__V1__SandboxEnded en = SWORN__V1__SANDBOX_ENDED__INIT;
    Sworn__V1__AdminResponse *r;

    en.start_index = index;
    en.sandbox_id.data = (uint8_t *)id;
    en.sandbox_id.len = 16;
    en.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED;
    en.code = 0;
    en.duration_ms = 1;
    er.ended = &en;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_END;
    rq.sandbox_end = &er;
    r = sworn_stack_admin(&T.s, &rq);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_SANDBOX);
    sworn__v1__admin_response__free_unpacked(r, NULL);
}

/* ---- requests after a good hello ---- */

/*
 * Read the proxy's own answer (a deny: status line, head, one line of JSON) from fd, and return
 * the decision it names, checked to be for request path under the hello's principal: agent-1,
 * sandbox, AGENT_UID, index. OUT: *tail (free it). Fails the test when no such answer comes.
 */
static const Sworn__V1__DecisionRecord *answered(int fd, const char *status, const char *path,
                                                 const char *sandbox, uint64_t index,
                                                 Sworn__V1__AdminResponse **tail)
{
    char buf[8192];
    size_t have = 0;
    const char *body;
    json_object *o, *v;
    long long at = -1;
    const Sworn__V1__TailResponse *t;
    const Sworn__V1__DecisionRecord *d;
    const Sworn__V1__Principal *pr;

    if (!sworn_pfx_read_until(fd, buf, sizeof(buf), &have, "}\n", 20000))
        fail_msg("no answer from the proxy for %s; got: %s", path, buf);
    if (strncmp(buf, status, strlen(status)) != 0)
        fail_msg("the answer for %s is not %s: %s", path, status, buf);
    body = strstr(buf, "\r\n\r\n");
    assert_non_null(body);
    o = json_tokener_parse(body + 4);
    assert_non_null(o);
    if (json_object_object_get_ex(o, "log_index", &v))
        at = json_object_get_int64(v);
    json_object_put(o);
    assert_true(at > 0);
    *tail = sworn_stack_tail(&T.s, 256);
    t = (*tail)->tail;
    assert_true((uint64_t)at >= t->first_index && (uint64_t)at < t->first_index + t->n_entries);
    assert_int_equal(t->entries[at - (long long)t->first_index]->kind_case,
                     SWORN__V1__ENTRY__KIND_DECISION);
    d = t->entries[at - (long long)t->first_index]->decision;
    assert_string_equal(d->request->resource->path, path);
    pr = d->request->principal;
    assert_string_equal(pr->id, PRINCIPAL);
    assert_string_equal(pr->sandbox, sandbox);
    assert_int_equal(pr->uid, AGENT_UID);
    assert_int_equal(pr->sandbox_start_index, index);
    return d;
}

/* GET http://127.0.0.1:8080<path> (the sample policy denies /denied and what is under it). */
static size_t request_for(char *out, size_t cap, const char *path)
{
    int n = snprintf(out, cap,
                     "GET http://127.0.0.1:8080%s HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", path);

    assert_true(n > 0 && (size_t)n < cap);
    return (size_t)n;
}

/* A decision of the sample policy's deny rule, after the sandbox was admitted. */
static void expect_policy_deny(const Sworn__V1__DecisionRecord *d)
{
    assert_int_equal(d->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(d->rule_id, "demo-denied");
    assert_null(d->request->refusal);
}

static void test_good_hello_then_requests(void **state)
{
    uint8_t id[16], *f;
    size_t n, len;
    uint64_t index = sandbox_start("run-hl-good", id);
    int fd = dial_hostlink();
    char req[256];
    Sworn__V1__AdminResponse *tail;

    (void)state;
    f = hello_frame(PRINCIPAL, "run-hl-good", index, AGENT_UID, SWORN_WIRE_VERSION, &n);
    write_all(fd, f, n);
    free(f);
    /* Every request of the connection is the hello's sandbox's. */
    len = request_for(req, sizeof(req), "/denied/good-1");
    write_all(fd, req, len);
    expect_policy_deny(
        answered(fd, "HTTP/1.1 403 ", "/denied/good-1", "run-hl-good", index, &tail));
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    len = request_for(req, sizeof(req), "/denied/good-2");
    write_all(fd, req, len);
    expect_policy_deny(
        answered(fd, "HTTP/1.1 403 ", "/denied/good-2", "run-hl-good", index, &tail));
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    /* A request the proxy refuses itself is recorded under the same principal. */
    {
        static const char origin[] = "GET /origin-form HTTP/1.1\r\nHost: a\r\n\r\n";
        const Sworn__V1__DecisionRecord *d;

        write_all(fd, origin, sizeof(origin) - 1);
        d = answered(fd, "HTTP/1.1 400 ", "", "run-hl-good", index, &tail);
        assert_int_equal(d->effect, SWORN__V1__EFFECT__EFFECT_DENY);
        assert_non_null(d->request->refusal);
        assert_string_equal(d->reason, "refused by the proxy: not a proxy request: the target "
                                       "must be an absolute URL");
        sworn__v1__admin_response__free_unpacked(tail, NULL);
    }
    assert_int_equal(wait_closed(fd, 20000), 0); /* a refusal ends the connection */
    close(fd);
    /* The proxy's line names the sandbox too. */
    assert_int_equal(sworn_pfx_wait_log(&T.p, "\"sandbox\":\"run-hl-good\"", 20000), 0);
    sandbox_end(index, id);
}

/* Wait until the proxy has read everything written on fd (a Unix socket: SIOCOUTQ counts what
 * the peer has not read yet), at most 10 s. */
static void wait_read_by_proxy(int fd)
{
    struct timespec t0, now;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int unread = -1;

        assert_int_equal(ioctl(fd, SIOCOUTQ, &unread), 0);
        if (unread == 0)
            return;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 10)
            fail_msg("the proxy did not read the hello's byte (%d unread)", unread);
        (void)poll(NULL, 0, 1); /* the condition has no event of its own: check it again */
    }
}

/* The hello one byte per read (each byte read by the proxy before the next is written). */
static void test_hello_byte_by_byte(void **state)
{
    uint8_t id[16], *f;
    size_t n, len;
    uint64_t index = sandbox_start("run-hl-bytes", id);
    int fd = dial_hostlink();
    char req[256];
    Sworn__V1__AdminResponse *tail;

    (void)state;
    f = hello_frame(PRINCIPAL, "run-hl-bytes", index, AGENT_UID, SWORN_WIRE_VERSION, &n);
    for (size_t i = 0; i < n; i++) {
        write_all(fd, f + i, 1);
        wait_read_by_proxy(fd);
    }
    free(f);
    len = request_for(req, sizeof(req), "/denied/bytes");
    write_all(fd, req, len);
    expect_policy_deny(
        answered(fd, "HTTP/1.1 403 ", "/denied/bytes", "run-hl-bytes", index, &tail));
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    close(fd);
    sandbox_end(index, id);
}

/* The hello and the agent's first request in one write: the request's bytes are kept. */
static void test_hello_and_request_in_one_write(void **state)
{
    uint8_t id[16], *f, both[1024];
    size_t n, len;
    uint64_t index = sandbox_start("run-hl-one", id);
    int fd = dial_hostlink();
    char req[256];
    Sworn__V1__AdminResponse *tail;

    (void)state;
    f = hello_frame(PRINCIPAL, "run-hl-one", index, AGENT_UID, SWORN_WIRE_VERSION, &n);
    len = request_for(req, sizeof(req), "/denied/one-write");
    assert_true(n + len <= sizeof(both));
    memcpy(both, f, n);
    memcpy(both + n, req, len);
    free(f);
    write_all(fd, both, n + len);
    expect_policy_deny(
        answered(fd, "HTTP/1.1 403 ", "/denied/one-write", "run-hl-one", index, &tail));
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    close(fd);
    sandbox_end(index, id);
}

/*
 * A good hello for a sandbox that does not run (no SandboxStarted entry at that index, or one
 * that ended): the proxy carries what the relay said, and decisiond denies the request, recorded,
 * before its policy (no rule).
 */
static void test_sandbox_not_running(void **state)
{
    uint8_t id[16], *f;
    size_t n, len;
    uint64_t ended = sandbox_start("run-hl-ended", id), missing = ended + 100000;
    char req[256];
    Sworn__V1__AdminResponse *tail;
    const Sworn__V1__DecisionRecord *d;
    int fd;

    (void)state;
    sandbox_end(ended, id);
    for (int i = 0; i < 2; i++) {
        uint64_t index = i == 0 ? ended : missing;

        fd = dial_hostlink();
        f = hello_frame(PRINCIPAL, "run-hl-ended", index, AGENT_UID, SWORN_WIRE_VERSION, &n);
        write_all(fd, f, n);
        free(f);
        len = request_for(req, sizeof(req), "/allowed/not-running");
        write_all(fd, req, len);
        d = answered(fd, "HTTP/1.1 403 ", "/allowed/not-running", "run-hl-ended", index, &tail);
        assert_int_equal(d->effect, SWORN__V1__EFFECT__EFFECT_DENY);
        assert_string_equal(d->rule_id, "");
        assert_non_null(strstr(d->reason, "denied: "));
        sworn__v1__admin_response__free_unpacked(tail, NULL);
        close(fd);
    }
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

static void test_principal_not_a_name(void **state)
{
    size_t n;
    uint8_t *f = hello_frame("agent 1", "run-name", 5, AGENT_UID, SWORN_WIRE_VERSION, &n);

    (void)state;
    refused_case(f, n, 0, n, 400,
                 "the hostlink hello's principal is not a name of 1..128 bytes 0x21..0x7e");
    free(f);
}

/* Fields out of order, and an unknown field: each decodes, neither is the one encoding. */
static void test_not_canonical(void **state)
{
    static const uint8_t reordered[] = {
        0,    0,    0,    20, /* version first, then principal, sandbox */
        0x78, 0x01, 0x0a, 0x07, 'a', 'g', 'e', 'n', 't',  '-',
        '1',  0x12, 0x05, 'r',  'u', 'n', '-', '1', 0x18, 0x07};
    static const uint8_t unknown[] = {
        0,    0,    0,   23,  0x0a, 0x07, 'a', 'g',  'e',  'n',  't',  '-', '1',
        0x12, 0x05, 'r', 'u', 'n',  '-',  '1', 0x18, 0x07, 0x2a, 0x01, 'x', /* field 5 */ 0x78,
        0x01};

    (void)state;
    refused_case(reordered, sizeof(reordered), 0, sizeof(reordered), 400,
                 "the hostlink hello is not canonically encoded or holds unknown fields");
    refused_case(unknown, sizeof(unknown), 0, sizeof(unknown), 400,
                 "the hostlink hello is not canonically encoded or holds unknown fields");
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
        cmocka_unit_test(test_good_hello_then_requests),
        cmocka_unit_test(test_hello_byte_by_byte),
        cmocka_unit_test(test_hello_and_request_in_one_write),
        cmocka_unit_test(test_sandbox_not_running),
        cmocka_unit_test(test_length_zero),
        cmocka_unit_test(test_length_over_max),
        cmocka_unit_test(test_http_where_hello_should_be),
        cmocka_unit_test(test_garbage_body),
        cmocka_unit_test(test_other_principal),
        cmocka_unit_test(test_principal_not_a_name),
        cmocka_unit_test(test_not_canonical),
        cmocka_unit_test(test_missing_sandbox),
        cmocka_unit_test(test_index_zero),
        cmocka_unit_test(test_wrong_version),
        cmocka_unit_test(test_late),
        cmocka_unit_test(test_closed_before_hello),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
