/*
 * test_proxy.c -- sworn-proxy end to end, with clients and servers no one here wrote: curl as the
 * agent (-x, HTTPS_PROXY, --cacert for the proxy's CA), nginx as the upstream (HTTP and HTTPS, a
 * certificate made by the test), python3-websockets for ws and wss, openssl s_client for SNI,
 * and a real decisiond (a dev stack) deciding, recording and signing every request.
 *
 * What each test holds to (issue 14, "Tests"): an allowed request reaches upstream, and the log
 * index upstream received (sworn-log-index, in nginx's access log) is that of an ALLOW entry
 * already in the log for it (decisiond hands out an index only once the entry is durable); a
 * denied one never reaches upstream and is in the log; the credential is put in only for its
 * destination and never reaches the client; a symbolic token sent elsewhere goes on unchanged.
 *
 * "Never reaches upstream" is checked with a barrier: after the denied request's answer, an
 * allowed request is sent on a new connection and awaited in nginx's log; nginx logs in the order
 * it finishes requests, and the denied one, had it been forwarded, would have finished first.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "proxy_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "upstream_fixture.h"

#define SYM_HEADER "sym_hdrhdrhdrhdrhdrhdrhdrhdrhdrhdrhdr01"
#define SYM_QUERY "sym_qryqryqryqryqryqryqryqryqryqryqry02"
#define SYM_OTHER "sym_othothothothothothothothothothoth03"
#define REAL_HEADER "Bearer real-header-secret-4af1c0de77"
#define REAL_QUERY "real-query-secret-9b2e11aa"

static struct {
    struct sworn_upstream u;
    struct sworn_stack s;
    struct sworn_pfx p;
    struct sworn_rawup echo;
    char *dir;
    char policy[600], vault[600];
    int barrier;
} T;

static const char policy_text[] =
    "version: 1\n"
    "rules:\n"
    "  - id: read\n    effect: allow\n    reason: \"test: read\"\n"
    "    operations: [\"http.request\"]\n"
    "    resource:\n      schemes: [http, https]\n      hosts: [\"127.0.0.1\", \"localhost\"]\n"
    "      paths: [\"/allowed/**\", \"/small.txt\", \"/big.bin\", \"/echo/open/**\"]\n"
    "    methods: [GET, HEAD]\n"
    "  - id: post\n    effect: allow\n    reason: \"test: post\"\n"
    "    operations: [\"http.request\"]\n"
    "    resource:\n      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
    "      paths: [\"/echo/post/**\"]\n"
    "    methods: [POST]\n"
    "  - id: cred-header\n    effect: allow\n    reason: \"test: header credential\"\n"
    "    operations: [\"http.request\"]\n"
    "    resource:\n      schemes: [http, https]\n      hosts: [\"127.0.0.1\"]\n"
    "      paths: [\"/echo/cred/**\"]\n"
    "    credential: hdr\n"
    "  - id: cred-query\n    effect: allow\n    reason: \"test: query credential\"\n"
    "    operations: [\"http.request\"]\n"
    "    resource:\n      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
    "      paths: [\"/echo/q/**\"]\n"
    "    credential: qry\n"
    "  - id: ws\n    effect: allow\n    reason: \"test: websocket\"\n"
    "    operations: [\"ws.upgrade\"]\n"
    "    resource:\n      schemes: [ws, wss]\n      hosts: [\"127.0.0.1\", \"localhost\"]\n"
    "      paths: [\"/allowed/**\"]\n"
    "  - id: deny\n    effect: deny\n    reason: \"test: denied\"\n"
    "    resource:\n      hosts: [\"127.0.0.1\", \"localhost\"]\n"
    "      paths: [\"/denied\", \"/denied/**\"]\n"
    "  - id: escalate\n    effect: escalate\n    reason: \"test: needs an operator\"\n"
    "    resource:\n      hosts: [\"127.0.0.1\"]\n      paths: [\"/escalate/**\"]\n"
    "    escalation_timeout: 2m\n"
    "  - id: tcp-echo\n    effect: allow\n    reason: \"test: raw tcp to the echo server\"\n"
    "    operations: [\"tcp.connect\"]\n"
    "    resource:\n      schemes: [tcp]\n      hosts: [\"127.0.0.1\"]\n      ports: [%u]\n";

/* ---- helpers ---- */

static void url_of(char *out, size_t cap, const char *scheme, uint16_t port, const char *path)
{
    snprintf(out, cap, "%s://127.0.0.1:%u%s", scheme, (unsigned)port, path);
}

/* Send an allowed request on a new connection and wait for it in nginx's log (see the top). */
static void barrier(void)
{
    char url[256], body[256], needle[64];
    int code = 0;

    snprintf(needle, sizeof(needle), "/allowed/hello.txt?barrier=%d", ++T.barrier);
    url_of(url, sizeof(url), "http", T.u.http_port, needle);
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, url, NULL), 0);
    assert_int_equal(code, 200);
    assert_int_equal(sworn_upstream_wait_log(&T.u, needle, 20000), 0);
}

/* The newest decision record for request id in the log (NULL when none); free the tail with
 * sworn__v1__admin_response__free_unpacked. OUT: *index. */
static const Sworn__V1__DecisionRecord *find_decision(Sworn__V1__AdminResponse **tail,
                                                      const char *id, uint64_t *index)
{
    const Sworn__V1__TailResponse *t;

    *tail = sworn_stack_tail(&T.s, 1000);
    t = (*tail)->tail;
    for (size_t i = t->n_entries; i-- > 0;) {
        const Sworn__V1__Entry *e = t->entries[i];

        if (e->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
            strcmp(e->decision->request->request_id, id) == 0) {
            *index = t->first_index + i;
            return e->decision;
        }
    }
    return NULL;
}

/* The JSON body of a proxy's own answer: its request id and log index (-1 when absent). */
static void answer_fields(const char *body, char *id, size_t id_cap, long long *index)
{
    json_object *o = json_tokener_parse(body), *v;

    assert_non_null(o);
    id[0] = '\0';
    *index = -1;
    if (json_object_object_get_ex(o, "request_id", &v))
        snprintf(id, id_cap, "%s", json_object_get_string(v));
    if (json_object_object_get_ex(o, "log_index", &v))
        *index = json_object_get_int64(v);
    json_object_put(o);
}

/* Expect the proxy's answer to be status with a recorded decision of effect for its request. */
static void expect_recorded(const char *body, Sworn__V1__Effect effect, const char *rule)
{
    char id[128];
    long long index;
    uint64_t at = 0;
    Sworn__V1__AdminResponse *tail;
    const Sworn__V1__DecisionRecord *d;

    answer_fields(body, id, sizeof(id), &index);
    assert_true(id[0] != '\0');
    assert_true(index >= 0);
    d = find_decision(&tail, id, &at);
    assert_non_null(d);
    assert_int_equal(at, (uint64_t)index);
    assert_int_equal(d->effect, effect);
    if (rule != NULL)
        assert_string_equal(d->rule_id, rule);
    assert_string_equal(d->request->principal->id, "agent-1");
    sworn__v1__admin_response__free_unpacked(tail, NULL);
}

/* The log index nginx received for the request whose access-log line holds needle. */
static long long upstream_index(const char *needle)
{
    char *log = sworn_test_read_file(T.u.access_log, NULL);
    long long idx = -1;

    for (char *line = strtok(log, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        char *p;

        if (strstr(line, needle) != NULL && (p = strstr(line, "idx=\"")) != NULL)
            idx = strtoll(p + 5, NULL, 10);
    }
    free(log);
    return idx;
}

/* The ALLOW entry at index is for a request whose path holds path_part. */
static void expect_allow_at(long long index, const char *path_part, const char *rule)
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 1000);
    const Sworn__V1__TailResponse *t = tail->tail;
    const Sworn__V1__Entry *e;

    assert_true(index >= (long long)t->first_index);
    assert_true(index < (long long)(t->first_index + t->n_entries));
    e = t->entries[index - (long long)t->first_index];
    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
    assert_int_equal(e->decision->effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_non_null(strstr(e->decision->request->resource->path, path_part));
    if (rule != NULL)
        assert_string_equal(e->decision->rule_id, rule);
    sworn__v1__admin_response__free_unpacked(tail, NULL);
}

static void send_all(int fd, const char *s)
{
    assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

/* ---- setup ---- */

static int setup(void **state)
{
    char opts[2048], vault[2048], extra[512];
    struct sworn_pfx_opts po = {0};
    int n;

    (void)state;
    memset(&T, 0, sizeof(T));
    if (sworn_upstream_start(&T.u) != 0 || sworn_rawup_start(&T.echo, SWORN_RAWUP_ECHO) != 0)
        return -1;
    T.dir = sworn_test_tmpdir("proxy-test");
    snprintf(T.policy, sizeof(T.policy), "%s/policy.yaml", T.dir);
    snprintf(T.vault, sizeof(T.vault), "%s/vault.json", T.dir);
    {
        char text[sizeof(policy_text) + 16];

        n = snprintf(text, sizeof(text), policy_text, (unsigned)T.echo.port);
        sworn_test_write_file(T.policy, text, (size_t)n, 0600);
    }
    n = snprintf(vault, sizeof(vault),
                 "{\"version\": 1, \"credentials\": [\n"
                 " {\"id\": \"hdr\", \"symbolic\": \"" SYM_HEADER "\", \"value\": \"" REAL_HEADER
                 "\", \"header\": \"authorization\", \"principals\": [\"agent-1\"],\n"
                 "  \"destinations\": [{\"scheme\": \"http\", \"host\": \"127.0.0.1\", \"port\": "
                 "%u, \"path_prefix\": \"/echo/cred/\"},\n"
                 "   {\"scheme\": \"https\", \"host\": \"127.0.0.1\", \"port\": %u, "
                 "\"path_prefix\": \"/echo/cred/\"}]},\n"
                 " {\"id\": \"qry\", \"symbolic\": \"" SYM_QUERY "\", \"value\": \"" REAL_QUERY
                 "\", \"query\": \"api_key\", \"principals\": [\"agent-1\"],\n"
                 "  \"destinations\": [{\"scheme\": \"http\", \"host\": \"127.0.0.1\", \"port\": "
                 "%u, \"path_prefix\": \"/echo/q/\"}]}\n"
                 "]}\n",
                 (unsigned)T.u.http_port, (unsigned)T.u.https_port, (unsigned)T.u.http_port);
    sworn_test_write_file(T.vault, vault, (size_t)n, 0600);
    snprintf(opts, sizeof(opts), "--no-proxy --no-tpm --policy %s --vault %s", T.policy, T.vault);
    if (sworn_stack_up(&T.s, opts) != 0)
        return -1;
    snprintf(extra, sizeof(extra),
             "connect:\n  raw_ports: [%u]\n  tls_wait: 2s\n"
             "delegation:\n  header: x-delegation-token\n",
             (unsigned)T.echo.port);
    po.upstream_ca = T.u.ca_cert;
    po.extra = extra;
    po.tls_listener = 1;
    return sworn_pfx_start(&T.p, T.s.decision, &po);
}

static int teardown(void **state)
{
    int rc = 0;

    (void)state;
    if (sworn_pfx_stop_with_stack(&T.p, &T.s) != 0)
        rc = -1;
    sworn_rawup_stop(&T.echo);
    sworn_upstream_stop(&T.u);
    sworn_test_tmpdir_drop(&T.dir);
    return rc;
}

/* ---- plain HTTP ---- */

static void test_allow_reaches_upstream_after_record(void **state)
{
    char url[256], body[4096];
    int code = 0;
    long long idx;

    (void)state;
    url_of(url, sizeof(url), "http", T.u.http_port, "/allowed/hello.txt?t=allow");
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, url, NULL), 0);
    assert_int_equal(code, 200);
    assert_string_equal(body, "hello\n");
    assert_int_equal(sworn_upstream_wait_log(&T.u, "/allowed/hello.txt?t=allow", 20000), 0);
    idx = upstream_index("/allowed/hello.txt?t=allow");
    assert_true(idx >= 0);
    expect_allow_at(idx, "/allowed/hello.txt", "read");
    assert_int_equal(sworn_pfx_wait_log(&T.p, "\"event\":\"request\"", 5000), 0);
}

static void test_deny_never_reaches_upstream(void **state)
{
    char url[256], body[4096];
    int code = 0;

    (void)state;
    url_of(url, sizeof(url), "http", T.u.http_port, "/denied/secret?t=deny");
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, url, NULL), 0);
    assert_int_equal(code, 403);
    expect_recorded(body, SWORN__V1__EFFECT__EFFECT_DENY, "deny");
    url_of(url, sizeof(url), "http", T.u.http_port, "/not-in-any-rule?t=default");
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, url, NULL), 0);
    assert_int_equal(code, 403);
    expect_recorded(body, SWORN__V1__EFFECT__EFFECT_DENY, "");
    barrier();
    assert_false(sworn_upstream_log_has(&T.u, "t=deny"));
    assert_false(sworn_upstream_log_has(&T.u, "t=default"));
}

static void test_post_body_digest_recorded(void **state)
{
    char url[256], body[4096];
    int code = 0;
    long long idx;
    Sworn__V1__AdminResponse *tail;
    const Sworn__V1__Entry *e;

    (void)state;
    url_of(url, sizeof(url), "http", T.u.http_port, "/echo/post/x?t=post");
    /* chunked from the agent: upstream gets it de-chunked with a Content-Length */
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, "-H",
                                    "Transfer-Encoding: chunked", "--data-binary", "hello body",
                                    url, NULL),
                     0);
    assert_int_equal(code, 200);
    assert_non_null(strstr(body, "POST /echo/post/x?t=post"));
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=post", 20000), 0);
    idx = upstream_index("t=post");
    tail = sworn_stack_tail(&T.s, 1000);
    e = tail->tail->entries[idx - (long long)tail->tail->first_index];
    assert_int_equal(e->decision->effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(e->decision->request->context->body_length, 10);
    assert_int_equal(e->decision->request->context->body_sha256.len, 32);
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    /* what nginx received: a Content-Length of 10 (its log's $content_length) */
    assert_true(sworn_upstream_log_has(&T.u, "\"/echo/post/x?t=post\" 200"));
}

/* ---- credentials ---- */

static void test_credential_header_substituted_and_masked(void **state)
{
    char url[256], body[4096];
    int code = 0;

    (void)state;
    url_of(url, sizeof(url), "http", T.u.http_port, "/echo/cred/x?t=cred");
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, "-H",
                                    "Authorization: Bearer " SYM_HEADER, url, NULL),
                     0);
    assert_int_equal(code, 200);
    /* upstream echoed what it got; the agent sees it masked, never the real value */
    assert_null(strstr(body, REAL_HEADER));
    assert_null(strstr(body, "real-header-secret"));
    assert_null(strstr(body, SYM_HEADER));
    assert_non_null(strstr(body, "auth=************************************ "));
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=cred", 20000), 0);
    assert_true(sworn_upstream_log_has(&T.u, "auth=\"" REAL_HEADER "\""));
}

static void test_credential_query_substituted(void **state)
{
    char url[256], body[4096];
    int code = 0;

    (void)state;
    url_of(url, sizeof(url), "http", T.u.http_port,
           "/echo/q/x?a=1&api_key=" SYM_QUERY "&b=2&t=query");
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, url, NULL), 0);
    assert_int_equal(code, 200);
    assert_null(strstr(body, REAL_QUERY));
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=query", 20000), 0);
    assert_true(sworn_upstream_log_has(&T.u, "/echo/q/x?a=1&b=2&t=query&api_key=" REAL_QUERY));
    assert_false(sworn_upstream_log_has(&T.u, SYM_QUERY));
}

static void test_token_to_other_destination_unchanged(void **state)
{
    char url[256], body[4096];
    int code = 0;

    (void)state;
    /* allowed by "read", but the credential's destinations are /echo/cred/ only */
    url_of(url, sizeof(url), "http", T.u.http_port, "/echo/open/x?t=other");
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, "-H",
                                    "Authorization: Bearer " SYM_HEADER, url, NULL),
                     0);
    assert_int_equal(code, 200);
    assert_non_null(strstr(body, "auth=Bearer " SYM_HEADER));
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=other", 20000), 0);
    assert_true(sworn_upstream_log_has(&T.u, "t=other\" 200 auth=\"Bearer " SYM_HEADER "\""));
}

/* ---- HTTPS through CONNECT ---- */

static void test_https_connect_terminated(void **state)
{
    char url[256], body[4096];
    int code = 0;
    long long idx;

    (void)state;
    url_of(url, sizeof(url), "https", T.u.https_port, "/allowed/hello.txt?t=https");
    assert_int_equal(
        sworn_pfx_curl(&T.p, body, sizeof(body), &code, "--cacert", T.p.ca_cert, url, NULL), 0);
    assert_int_equal(code, 200);
    assert_string_equal(body, "hello\n");
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=https", 20000), 0);
    idx = upstream_index("t=https");
    expect_allow_at(idx, "/allowed/hello.txt", "read");

    /* The same through HTTPS_PROXY, by name (localhost: a name resolved after the allow, to an
     * address allow_private admits). */
    setenv("HTTPS_PROXY", T.p.url, 1);
    {
        char by_name[256];
        const char *argv[] = {"--cacert", T.p.ca_cert, by_name, NULL};

        snprintf(by_name, sizeof(by_name), "https://localhost:%u/allowed/hello.txt?t=env",
                 (unsigned)T.u.https_port);
        assert_int_equal(sworn_upstream_curl(argv, body, sizeof(body), &code), 0);
    }
    unsetenv("HTTPS_PROXY");
    assert_int_equal(code, 200);
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=env", 20000), 0);
    assert_true(sworn_upstream_log_has(&T.u, "host=\"localhost:"));
}

static void test_https_credential_and_deny(void **state)
{
    char url[256], body[4096];
    int code = 0;

    (void)state;
    url_of(url, sizeof(url), "https", T.u.https_port, "/echo/cred/y?t=tlscred");
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, "--cacert", T.p.ca_cert, "-H",
                                    "Authorization: " SYM_HEADER, url, NULL),
                     0);
    assert_int_equal(code, 200);
    assert_null(strstr(body, REAL_HEADER));
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=tlscred", 20000), 0);
    assert_true(sworn_upstream_log_has(&T.u, "auth=\"" REAL_HEADER "\""));

    url_of(url, sizeof(url), "https", T.u.https_port, "/denied/x?t=tlsdeny");
    assert_int_equal(
        sworn_pfx_curl(&T.p, body, sizeof(body), &code, "--cacert", T.p.ca_cert, url, NULL), 0);
    assert_int_equal(code, 403);
    expect_recorded(body, SWORN__V1__EFFECT__EFFECT_DENY, "deny");
    barrier();
    assert_false(sworn_upstream_log_has(&T.u, "t=tlsdeny"));
}

static void test_https_domain_fronting_refused(void **state)
{
    char url[256], body[4096];
    int code = 0;

    (void)state;
    url_of(url, sizeof(url), "https", T.u.https_port, "/allowed/hello.txt?t=front");
    /* curl sends the Host header given inside the tunnel (and its own on the CONNECT) */
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, "--cacert", T.p.ca_cert, "-H",
                                    "Host: evil.example", url, NULL),
                     0);
    assert_int_equal(code, 400);
    assert_non_null(strstr(body, "domain fronting"));
    barrier();
    assert_false(sworn_upstream_log_has(&T.u, "t=front"));
}

static void test_sni_other_than_connect_host_refused(void **state)
{
    char connect[64];
    struct sworn_test_run r;

    (void)state;
    snprintf(connect, sizeof(connect), "127.0.0.1:%u", (unsigned)T.u.https_port);
    sworn_test_runv(&r, NULL, "openssl", "s_client", "-proxy", T.p.hostport, "-connect", connect,
                    "-servername", "evil.example", "-CAfile", T.p.ca_cert, "-verify_return_error",
                    "-brief", NULL);
    /* the handshake fails: the proxy ends the tunnel */
    assert_int_not_equal(r.status, 0);
    sworn_test_run_free(&r);
    assert_int_equal(sworn_pfx_wait_log(&T.p, "does not name the CONNECT host", 10000), 0);

    /* the matching name goes through (and proves the case above failed on the name alone) */
    snprintf(connect, sizeof(connect), "localhost:%u", (unsigned)T.u.https_port);
    sworn_test_runv(&r, NULL, "openssl", "s_client", "-proxy", T.p.hostport, "-connect", connect,
                    "-servername", "localhost", "-CAfile", T.p.ca_cert, "-verify_return_error",
                    "-brief", NULL);
    if (r.status != 0)
        fail_msg("s_client through the tunnel: %s\n%s", r.out, r.err);
    sworn_test_run_free(&r);
}

static void test_https_proxy_listener(void **state)
{
    char url[256], body[4096];
    int code = 0;
    const char *plain[] = {"-x", T.p.tls_url, "--proxy-cacert", T.p.ca_cert, url, NULL};
    const char *tls[] = {"-x", T.p.tls_url, "--proxy-cacert", T.p.ca_cert, "--cacert", T.p.ca_cert,
                         url,  NULL};

    (void)state;
    /* curl speaks TLS to the proxy itself (an HTTPS proxy), trusting its CA (--proxy-cacert) */
    url_of(url, sizeof(url), "http", T.u.http_port, "/allowed/hello.txt?t=tlsproxy");
    assert_int_equal(sworn_upstream_curl(plain, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_string_equal(body, "hello\n");
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=tlsproxy", 20000), 0);
    /* and HTTPS through it: TLS to the proxy, and the tunnel's TLS inside, both the proxy's */
    url_of(url, sizeof(url), "https", T.u.https_port, "/allowed/hello.txt?t=tlsintls");
    assert_int_equal(sworn_upstream_curl(tls, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=tlsintls", 20000), 0);
    url_of(url, sizeof(url), "http", T.u.http_port, "/denied/x?t=tlsproxydeny");
    assert_int_equal(sworn_upstream_curl(plain, body, sizeof(body), &code), 0);
    assert_int_equal(code, 403);
    expect_recorded(body, SWORN__V1__EFFECT__EFFECT_DENY, "deny");
}

/* ---- WebSocket ---- */

static void test_websocket_ws_and_wss(void **state)
{
    char uri[256], out[4096], proxy[64];

    (void)state;
    snprintf(proxy, sizeof(proxy), "%s", T.p.hostport);
    snprintf(uri, sizeof(uri), "ws://127.0.0.1:%u/allowed/chat-ws", (unsigned)T.u.ws_port);
    {
        const char *argv[] = {uri, "--proxy", proxy, "one", "two", NULL};

        assert_int_equal(sworn_upstream_ws_client(argv, out, sizeof(out)), 0);
    }
    assert_non_null(strstr(out, "recv one\nrecv two"));
    snprintf(uri, sizeof(uri), "wss://127.0.0.1:%u/allowed/chat-wss", (unsigned)T.u.wss_port);
    {
        const char *argv[] = {uri, "--proxy", proxy, "--cacert", T.p.ca_cert, "three", NULL};

        assert_int_equal(sworn_upstream_ws_client(argv, out, sizeof(out)), 0);
    }
    assert_non_null(strstr(out, "recv three"));
    assert_int_equal(sworn_upstream_wait_ws_log(&T.u, "/allowed/chat-ws ", 10000), 0);
    assert_int_equal(sworn_upstream_wait_ws_log(&T.u, "/allowed/chat-wss ", 10000), 0);

    snprintf(uri, sizeof(uri), "ws://127.0.0.1:%u/denied/chat", (unsigned)T.u.ws_port);
    {
        const char *argv[] = {uri, "--proxy", proxy, "x", NULL};

        assert_int_equal(sworn_upstream_ws_client(argv, out, sizeof(out)), 2);
    }
    assert_non_null(strstr(out, "status 403"));
    assert_false(sworn_upstream_ws_log_has(&T.u, "/denied/chat"));
}

/* ---- the Unix listener: its own principal, the peer's uid ---- */

static void test_unix_listener_principal_and_uid(void **state)
{
    struct sockaddr_un sun = {0};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    char req[512], buf[8192];
    size_t have = 0;
    ssize_t r;
    Sworn__V1__AdminResponse *tail;
    const Sworn__V1__DecisionRecord *d = NULL;

    (void)state;
    assert_true(fd >= 0);
    sun.sun_family = AF_UNIX;
    snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", T.p.unix_socket);
    assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
    snprintf(req, sizeof(req),
             "GET http://127.0.0.1:%u/allowed/hello.txt?t=unix HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
             "Connection: close\r\n\r\n",
             (unsigned)T.u.http_port, (unsigned)T.u.http_port);
    assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    while ((r = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0)
        have += (size_t)r;
    buf[have] = '\0';
    close(fd);
    if (strstr(buf, "HTTP/1.1 200 ") == NULL || strstr(buf, "\r\n\r\nhello\n") == NULL)
        fail_msg("the answer on the Unix socket: %s", buf);
    /* The record names the socket's principal and the peer's uid (SO_PEERCRED), nothing the
     * request said. */
    tail = sworn_stack_tail(&T.s, 1000);
    for (size_t i = 0; i < tail->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = tail->tail->entries[i];

        if (e->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
            strstr(e->decision->request->resource->path, "t=unix") != NULL)
            d = e->decision;
    }
    assert_non_null(d);
    assert_string_equal(d->request->principal->id, "agent-unix");
    assert_int_equal(d->request->principal->uid, (uint32_t)getuid());
    assert_int_equal(d->effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn__v1__admin_response__free_unpacked(tail, NULL);
}

/* ---- refusals and raw tunnels ---- */

static void test_refusal_recorded_and_closed(void **state)
{
    char req[512], out[8192], *json;
    long n;
    char id[128];
    long long index;
    Sworn__V1__AdminResponse *tail;
    const Sworn__V1__DecisionRecord *d;
    uint64_t at;

    (void)state;
    snprintf(req, sizeof(req),
             "POST http://127.0.0.1:%u/echo/post/x?t=clte HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
             "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             (unsigned)T.u.http_port, (unsigned)T.u.http_port);
    n = sworn_pfx_raw(&T.p, req, strlen(req), 1, 20000, out, sizeof(out));
    assert_true(n > 0);
    assert_non_null(strstr(out, "HTTP/1.1 400 "));
    assert_non_null(strstr(out, "Connection: close"));
    json = strstr(out, "\r\n\r\n");
    assert_non_null(json);
    answer_fields(json + 4, id, sizeof(id), &index);
    d = find_decision(&tail, id, &at);
    assert_non_null(d);
    assert_int_equal(at, (uint64_t)index);
    assert_int_equal(d->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(d->rule_id, "");
    assert_non_null(d->request->refusal);
    assert_int_equal(d->request->refusal->status, 400);
    assert_int_equal(d->request->refusal->head_sha256.len, 32);
    assert_non_null(strstr(d->reason, "refused by the proxy: "));
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    barrier();
    assert_false(sworn_upstream_log_has(&T.u, "t=clte"));
}

/* A connection that sent CONNECT 127.0.0.1:port and got the proxy's 200; returns the fd. */
static int open_tunnel(uint16_t port)
{
    char req[256], buf[4096];
    size_t have = 0;
    int fd = sworn_pfx_dial(T.p.port);

    assert_true(fd >= 0);
    snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
             (unsigned)port, (unsigned)port);
    send_all(fd, req);
    assert_true(sworn_pfx_read_until(fd, buf, sizeof(buf), &have, "\r\n\r\n", 20000));
    assert_non_null(strstr(buf, "HTTP/1.1 200 "));
    return fd;
}

static void test_tcp_connect_raw_port(void **state)
{
    char buf[4096];
    size_t have = 0;
    int fd;

    (void)state;
    fd = open_tunnel(T.echo.port);
    send_all(fd, "ping over raw tcp\n");
    assert_true(sworn_pfx_read_until(fd, buf, sizeof(buf), &have, "ping over raw tcp\n", 20000));
    close(fd);
}

static void test_tunnel_not_tls_decided_as_tcp(void **state)
{
    char buf[4096];
    size_t have = 0;
    int fd;

    (void)state;
    fd = open_tunnel(T.u.http_port);
    /* plain HTTP inside the tunnel: not TLS, so tcp.connect, which no rule allows here */
    send_all(fd, "GET /allowed/hello.txt?t=rawtunnel HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_false(sworn_pfx_read_until(fd, buf, sizeof(buf), &have, "hello", 20000));
    close(fd);
    assert_int_equal(sworn_pfx_wait_log(&T.p, "\"url\":\"tcp://127.0.0.1:", 10000), 0);
    barrier();
    assert_false(sworn_upstream_log_has(&T.u, "t=rawtunnel"));
}

/* ---- escalation: held until the operator answers ---- */

struct held_curl {
    char url[256], body[4096];
    int code, rc;
};

static void *curl_thread(void *arg)
{
    struct held_curl *h = arg;

    h->rc = sworn_pfx_curl(&T.p, h->body, sizeof(h->body), &h->code, h->url, NULL);
    return NULL;
}

static void held_id(const Sworn__V1__PendingEscalation *p, void *arg)
{
    snprintf(arg, 128, "%s", p->request->request_id);
}

static void test_escalation_held_then_allowed(void **state)
{
    struct held_curl h = {0};
    pthread_t t;
    char id[128] = "";
    Sworn__V1__AdminResponse *r;

    (void)state;
    url_of(h.url, sizeof(h.url), "http", T.u.http_port, "/escalate/x?t=held");
    assert_int_equal(pthread_create(&t, NULL, curl_thread, &h), 0);
    /* Wait until decisiond holds it (the proxy asked and is waiting), then approve it. */
    for (int waited = 0; id[0] == '\0'; waited += 10) {
        if (waited > 20000)
            fail_msg("the escalated request was not held within 20 s");
        if (sworn_stack_list_all(sworn_stack_admin_call, &T.s, held_id, id) == 0)
            sworn_test_sleep_ms(10);
    }
    assert_false(sworn_upstream_log_has(&T.u, "t=held"));
    r = sworn_stack_resolve(&T.s, id, 1);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(h.rc, 0);
    /* nginx has no /escalate/: its 404 is the proof the request reached it after the approval */
    assert_int_equal(h.code, 404);
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=held", 20000), 0);
}

/* ---- the delegation chain, read from the configured header ---- */

static void test_delegation_chain_recorded(void **state)
{
    /* {"alg":"ES256"} . {"sub":"user-7","iss":"https://idp.test","act":{"sub":"agent-x"}} . sig */
    static const char jwt[] = "eyJhbGciOiJFUzI1NiJ9."
                              "eyJzdWIiOiJ1c2VyLTciLCJpc3MiOiJodHRwczovL2lkcC50ZXN0IiwiYWN0Ijp7"
                              "InN1YiI6ImFnZW50LXgifX0."
                              "c2ln";
    char url[256], body[4096], header[512];
    int code = 0;
    Sworn__V1__AdminResponse *tail;
    const Sworn__V1__DecisionRecord *d = NULL;

    (void)state;
    url_of(url, sizeof(url), "http", T.u.http_port, "/allowed/hello.txt?t=deleg");
    snprintf(header, sizeof(header), "X-Delegation-Token: %s", jwt);
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, "-H", header, url, NULL), 0);
    assert_int_equal(code, 200);
    assert_int_equal(sworn_upstream_wait_log(&T.u, "t=deleg", 20000), 0);
    tail = sworn_stack_tail(&T.s, 1000);
    for (size_t i = 0; i < tail->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = tail->tail->entries[i];

        if (e->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
            strstr(e->decision->request->resource->path, "t=deleg") != NULL)
            d = e->decision;
    }
    assert_non_null(d);
    assert_non_null(d->request->delegation);
    assert_string_equal(d->request->delegation->subject, "user-7");
    assert_string_equal(d->request->delegation->issuer, "https://idp.test");
    assert_int_equal(d->request->delegation->n_actors, 1);
    assert_string_equal(d->request->delegation->actors[0]->subject, "agent-x");
    assert_int_equal(d->request->delegation->n_token_sha256, 1);
    assert_int_equal(d->request->delegation->token_sha256[0].len, 32);
    sworn__v1__admin_response__free_unpacked(tail, NULL);
}

/* ---- limits.bodies: all bodies held at once ---- */

static void test_bodies_held_bounded(void **state)
{
    struct sworn_pfx p2;
    struct sworn_pfx_opts po = {0};
    char head[512], buf[4096];
    size_t have = 0;
    char *chunk = malloc(600000);
    int a, b;
    struct sockaddr_in sin = {0};

    (void)state;
    assert_non_null(chunk);
    memset(chunk, 'x', 600000);
    po.extra = "limits:\n  body: 1048576\n  bodies: 1048576\n";
    assert_int_equal(sworn_pfx_start(&p2, T.s.decision, &po), 0);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(p2.port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(connect(a, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(connect(b, (struct sockaddr *)&sin, sizeof(sin)), 0);
    /* a: 600000 of a 1000000-byte body, held (not complete, so not yet decided) */
    snprintf(head, sizeof(head),
             "POST http://127.0.0.1:%u/echo/post/a HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
             "Content-Length: 1000000\r\n\r\n",
             (unsigned)T.u.http_port, (unsigned)T.u.http_port);
    send_all(a, head);
    assert_int_equal(write(a, chunk, 600000), 600000);
    /* b: a whole body of 600000, which together with a's would pass limits.bodies */
    snprintf(head, sizeof(head),
             "POST http://127.0.0.1:%u/echo/post/b HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
             "Content-Length: 600000\r\n\r\n",
             (unsigned)T.u.http_port, (unsigned)T.u.http_port);
    send_all(b, head);
    assert_int_equal(write(b, chunk, 600000), 600000);
    /* Which of the two the proxy read first is its business: the other one gets the 503. */
    assert_true(sworn_pfx_read_until(b, buf, sizeof(buf), &have, "\r\n\r\n", 20000));
    if (strstr(buf, "HTTP/1.1 503 ") == NULL) {
        assert_non_null(strstr(buf, "HTTP/1.1 200 "));
        have = 0;
        assert_true(sworn_pfx_read_until(a, buf, sizeof(buf), &have, "\r\n\r\n", 20000));
        assert_non_null(strstr(buf, "HTTP/1.1 503 "));
    }
    close(a);
    close(b);
    free(chunk);
    assert_int_equal(sworn_pfx_stop(&p2), 0);
}

/* ---- metrics ---- */

static void test_metrics_socket(void **state)
{
    char body[65536];
    int code = 0;
    const char *argv[] = {"--unix-socket", T.p.metrics_socket, "http://localhost/metrics", NULL};

    (void)state;
    assert_int_equal(sworn_upstream_curl(argv, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_non_null(strstr(body, "sworn_proxy_requests_total{effect=\"allow\""));
    assert_non_null(strstr(body, "sworn_proxy_requests_total{effect=\"deny\""));
    /* the tests before minted leaves (CONNECT), timed upstreams, opened tunnels and WebSockets */
    assert_null(strstr(body, "sworn_proxy_leaf_certs_minted_total 0\n"));
    assert_null(strstr(body, "sworn_proxy_upstream_seconds_count 0\n"));
    assert_null(strstr(body, "sworn_proxy_websockets_total 0\n"));
    assert_non_null(strstr(body, "sworn_proxy_leaf_certs_minted_total "));
    assert_non_null(strstr(body, "sworn_proxy_upstream_seconds_count "));
    assert_non_null(strstr(body, "sworn_proxy_websockets_total "));
    /* The health check an orchestrator calls, and what the socket does not serve. */
    {
        const char *health[] = {"--unix-socket", T.p.metrics_socket, "http://localhost/health",
                                NULL};
        const char *other[] = {"--unix-socket", T.p.metrics_socket, "http://localhost/other", NULL};

        assert_int_equal(sworn_upstream_curl(health, body, sizeof(body), &code), 0);
        assert_int_equal(code, 200);
        assert_string_equal(body, "ok\n");
        assert_int_equal(sworn_upstream_curl(other, body, sizeof(body), &code), 0);
        assert_int_equal(code, 404);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allow_reaches_upstream_after_record),
        cmocka_unit_test(test_deny_never_reaches_upstream),
        cmocka_unit_test(test_post_body_digest_recorded),
        cmocka_unit_test(test_credential_header_substituted_and_masked),
        cmocka_unit_test(test_credential_query_substituted),
        cmocka_unit_test(test_token_to_other_destination_unchanged),
        cmocka_unit_test(test_https_connect_terminated),
        cmocka_unit_test(test_https_credential_and_deny),
        cmocka_unit_test(test_https_domain_fronting_refused),
        cmocka_unit_test(test_sni_other_than_connect_host_refused),
        cmocka_unit_test(test_https_proxy_listener),
        cmocka_unit_test(test_websocket_ws_and_wss),
        cmocka_unit_test(test_unix_listener_principal_and_uid),
        cmocka_unit_test(test_refusal_recorded_and_closed),
        cmocka_unit_test(test_tcp_connect_raw_port),
        cmocka_unit_test(test_tunnel_not_tls_decided_as_tcp),
        cmocka_unit_test(test_escalation_held_then_allowed),
        cmocka_unit_test(test_bodies_held_bounded),
        cmocka_unit_test(test_delegation_chain_recorded),
        cmocka_unit_test(test_metrics_socket),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
