/*
 * test_proxy_httpsig.c -- RFC 9421 signatures upstream, end to end, checked by an implementation
 * no one here wrote.
 *
 * The real stack: decisiond with its signer on a SoftHSM key (stack_fixture, no TPM), sworn-proxy
 * (proxy_fixture) with `signing: [http://127.0.0.1:PORT/signed/]`, curl as the agent, and as the
 * upstream tests/npm/httpsig-upstream.mjs: node with the npm http-message-signatures package
 * 1.0.6, which verifies each request it receives with the operator's public key (the SoftHSM
 * key's DER SPKI; the key id computed there from it), checks Content-Digest against the body, and
 * re-verifies the captured request with its method, path, query, body, body and digest, and
 * Sworn-Entry changed, each of which must be rejected. The upstream answers its verdict as JSON,
 * which the proxy relays to curl.
 *
 * Attacks turned into tests (as the agent): forged Signature, Signature-Input, Content-Digest and
 * Sworn-Entry fields in every spelling the drop rule covers never reach upstream beside the
 * proxy's; a path spelt with dot segments and escapes goes upstream in the canonical form that was
 * signed; a chunked body is signed as the bytes sent. A destination not listed keeps the agent's
 * own Signature but never an agent's Sworn-Entry.
 *
 * Every test runs twice: with decisiond's `receipts: per-request` (the Signature is an RFC 9421
 * signature over the base) and with `receipts: batch` (docs/formats.md section 14: the Signature
 * covers the root of a commit group's tree, the Sworn-Batch field carries the request's place in
 * it; the upstream gives the library a verify function that hashes the base the library built and
 * walks the path, docs/api-owners.md "Batch signatures"). In batch mode the verdict must also
 * reject the request with its Sworn-Batch group size changed, and an agent's Sworn-Batch never
 * reaches upstream.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proxy_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "upstream_fixture.h"

static const char policy_text[] = "version: 1\n"
                                  "rules:\n"
                                  "  - id: signed\n"
                                  "    effect: allow\n"
                                  "    reason: \"signed destination\"\n"
                                  "    operations: [\"http.request\", \"ws.upgrade\"]\n"
                                  "    resource:\n"
                                  "      schemes: [http, ws]\n"
                                  "      hosts: [\"127.0.0.1\"]\n"
                                  "      paths: [\"/signed/**\", \"/plain/**\"]\n"
                                  "    methods: [GET, POST, PUT, DELETE, PATCH]\n";

static struct {
    int batch; /* decisiond runs with receipts: batch */
    struct sworn_stack s;
    struct sworn_pfx p;
    char *dir;
    pid_t node;
    unsigned port;
} T;

/* Start the node upstream (SWORN_NODE_MODULES tells it where the npm packages are); wait for
 * its port file. */
static int start_upstream(void)
{
    char script[1024], port_file[1024], out[1024], env[1100];
    char *argv[7];
    uint16_t port = 0;

    snprintf(script, sizeof(script), "%s/tests/npm/httpsig-upstream.mjs", sworn_test_source_dir());
    snprintf(port_file, sizeof(port_file), "%s/upstream.port", T.dir);
    snprintf(out, sizeof(out), "%s/upstream.out", T.dir);
    snprintf(env, sizeof(env), "SWORN_NODE_MODULES=%s", sworn_test_node_modules());
    argv[0] = "/usr/bin/env";
    argv[1] = env;
    argv[2] = "node";
    argv[3] = script;
    argv[4] = port_file;
    argv[5] = (char *)T.s.spki_der;
    argv[6] = NULL;
    T.node = sworn_upstream_spawn_port(argv, out, port_file, SWORN_UPSTREAM_START_MS, &port);
    T.port = port;
    return T.node > 0 ? 0 : -1;
}

static int setup_mode(int batch)
{
    char policy[1024], opts[2048], extra[512];
    struct sworn_pfx_opts po = {0};

    memset(&T, 0, sizeof(T));
    T.batch = batch;
    (void)sworn_test_node_modules(); /* skips (77) outside CI when the npm clients are missing */
    T.dir = sworn_test_tmpdir("httpsig");
    snprintf(policy, sizeof(policy), "%s/policy.yaml", T.dir);
    sworn_test_write_file(policy, policy_text, sizeof(policy_text) - 1, 0600);
    snprintf(opts, sizeof(opts), "--no-proxy --no-tpm --policy %s --receipts %s", policy,
             batch ? "batch" : "per-request");
    if (sworn_stack_up(&T.s, opts) != 0 || start_upstream() != 0)
        return -1;
    snprintf(extra, sizeof(extra), "signing:\n  - http://127.0.0.1:%u/signed/\n", T.port);
    po.extra = extra;
    return sworn_pfx_start(&T.p, T.s.decision, &po);
}

static int setup(void **state)
{
    (void)state;
    return setup_mode(0);
}

static int setup_batch(void **state)
{
    (void)state;
    return setup_mode(1);
}

static int teardown(void **state)
{
    int rc = 0;

    (void)state;
    sworn_upstream_stop_child(&T.node, "the node upstream");
    if (sworn_pfx_stop_with_stack(&T.p, &T.s) != 0)
        rc = -1;
    sworn_test_tmpdir_drop(&T.dir);
    return rc;
}

/* curl through the proxy with the arguments given (NULL-ended); the upstream's verdict. */
static json_object *verdict_of(int want_code, ...)
{
    const char *args[40];
    char body[16384];
    int code = 0, n = 0;
    va_list ap;
    json_object *v;

    va_start(ap, want_code);
    while (n < 39 && (args[n] = va_arg(ap, const char *)) != NULL)
        n++;
    va_end(ap);
    args[n] = NULL;
    assert_int_equal(sworn_pfx_curl(&T.p, body, sizeof(body), &code, args[0], args[1], args[2],
                                    args[3], args[4], args[5], args[6], args[7], args[8], args[9],
                                    args[10], args[11], args[12], args[13], args[14], args[15],
                                    args[16], args[17], args[18], args[19], NULL),
                     0);
    if (code != want_code)
        fail_msg("status %d, not %d: %s", code, want_code, body);
    if (want_code != 200)
        return NULL;
    v = json_tokener_parse(body);
    if (v == NULL)
        fail_msg("the upstream's answer is not JSON: %s", body);
    return v;
}

static json_object *get(json_object *o, const char *path)
{
    char buf[128], *save = NULL;
    json_object *cur = o;

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *k = strtok_r(buf, ".", &save); k != NULL; k = strtok_r(NULL, ".", &save))
        if (!json_object_object_get_ex(cur, k, &cur))
            fail_msg("no %s in the upstream's verdict: %s", path, json_object_to_json_string(o));
    return cur;
}

static int truth(json_object *o, const char *path)
{
    return json_object_get_boolean(get(o, path));
}

static int count(json_object *o, const char *name)
{
    char p[64];

    snprintf(p, sizeof(p), "counts.%s", name);
    return json_object_get_int(get(o, p));
}

/* A signed request as the library sees it: verified, every tampered variant rejected, exactly
 * one of each sworn field (content-digest only with a body). */
static void expect_signed(json_object *v, int with_body)
{
    static const char *const tampered[] = {"method",
                                           "path",
                                           "query",
                                           "body",
                                           "body_and_digest",
                                           "sworn_entry",
                                           "replay",
                                           "path_dots",
                                           "path_escaped_dots",
                                           "path_backslash",
                                           "authority_userinfo",
                                           "authority_port"};

    if (!truth(v, "verified"))
        fail_msg("the library did not verify sworn's signature: %s", json_object_to_json_string(v));
    for (size_t i = 0; i < sizeof(tampered) / sizeof(tampered[0]); i++) {
        char p[64];

        snprintf(p, sizeof(p), "tampered.%s", tampered[i]);
        if (!truth(v, p))
            fail_msg("a request with its %s changed still verifies: %s", tampered[i],
                     json_object_to_json_string(v));
    }
    assert_int_equal(count(v, "signature"), 1);
    assert_int_equal(count(v, "signature-input"), 1);
    assert_int_equal(count(v, "sworn-entry"), 1);
    assert_int_equal(count(v, "sworn-batch"), T.batch ? 1 : 0);
    if (T.batch && !truth(v, "tampered.batch"))
        fail_msg("a batch signature with its group size changed still verifies: %s",
                 json_object_to_json_string(v));
    assert_int_equal(count(v, "content-digest"), with_body ? 1 : 0);
    if (with_body)
        assert_true(truth(v, "digest_ok"));
    assert_string_equal(json_object_get_string(get(v, "tag")), "sworn");
    assert_int_equal(strlen(json_object_get_string(get(v, "keyid"))), 64);
    assert_non_null(json_object_get_string(get(v, "log_index")));
}

static void test_get_signed(void **state)
{
    char url[256];
    json_object *v;

    (void)state;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/signed/a?b=1&c=2", T.port);
    v = verdict_of(200, url, NULL);
    expect_signed(v, 0);
    assert_string_equal(json_object_get_string(get(v, "url")), "/signed/a?b=1&c=2");
    json_object_put(v);
    /* No query: "@query" is "?" (RFC 9421 section 2.2.7), and the library agrees. */
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/signed/", T.port);
    v = verdict_of(200, url, NULL);
    expect_signed(v, 0);
    json_object_put(v);
}

static void test_methods_and_bodies_signed(void **state)
{
    char url[256];
    json_object *v;

    (void)state;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/signed/items?x=%%41", T.port);
    v = verdict_of(200, "-X", "POST", "-H", "content-type: application/json", "--data-binary",
                   "{\"amount\": 12.5}", url, NULL);
    expect_signed(v, 1);
    assert_int_equal(json_object_get_int(get(v, "body_len")), 16);
    json_object_put(v);
    v = verdict_of(200, "-X", "PUT", "--data-binary", "", url, NULL); /* an empty body */
    expect_signed(v, 1);
    json_object_put(v);
    v = verdict_of(200, "-X", "DELETE", url, NULL);
    expect_signed(v, 0);
    json_object_put(v);
    /* A chunked body: the proxy reads it whole, signs its digest, sends it with a length. */
    v = verdict_of(200, "-X", "PATCH", "-H", "transfer-encoding: chunked", "--data-binary",
                   "chunked payload", url, NULL);
    expect_signed(v, 1);
    assert_int_equal(json_object_get_int(get(v, "body_len")), 15);
    json_object_put(v);
}

/* As the agent: forged signature fields, in every spelling a server reads as the real ones. */
static void test_forged_fields_dropped(void **state)
{
    char url[256];
    json_object *v;

    (void)state;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/signed/forged", T.port);
    v = verdict_of(200, "-H", "Signature: sworn=:AAAA:", "-H",
                   "Signature-Input: sworn=(\"@method\");created=1;keyid=\"x\";tag=\"sworn\"", "-H",
                   "signature_input: evil=()", "-H", "SIGNATURE: evil=:AAAA:", "-H",
                   "Content-Digest: sha-256=:AAAA:", "-H", "content_digest: sha-256=:AAAA:", "-H",
                   "Sworn-Entry: :AAAA:", "-H", "SWORN_ENTRY: :AAAA:", "-H", "sworn-log-index: 1",
                   url, NULL);
    expect_signed(v, 0);
    json_object_put(v);
    /* A forged Sworn-Batch (a batch of one, no path) never reaches upstream, in either mode: in
     * batch mode the only one is the proxy's (expect_signed counts it). */
    v = verdict_of(200, "-H", "Sworn-Batch: i=0, n=1, path=::", "-H",
                   "sworn_batch: i=0, n=1, path=::", url, NULL);
    expect_signed(v, 0);
    json_object_put(v);
    /* ... with a body too: the only Content-Digest upstream is the proxy's, of the real body. */
    v = verdict_of(200, "-H",
                   "Content-Digest: sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:",
                   "--data-binary", "real", url, NULL);
    expect_signed(v, 1);
    json_object_put(v);
}

/* As the agent: a target spelt to differ from the canonical one still goes upstream as the
 * form that was decided and signed, so the signature verifies over what upstream sees. */
static void test_spelling_goes_canonical(void **state)
{
    char url[256];
    json_object *v;

    (void)state;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/plain/../signed/x/./%%7euser?q=1", T.port);
    v = verdict_of(200, "--path-as-is", url, NULL);
    expect_signed(v, 0);
    assert_string_equal(json_object_get_string(get(v, "url")), "/signed/x/~user?q=1");
    json_object_put(v);
}

/* A destination not listed: nothing is added; the agent's own Signature passes, its
 * Sworn-Entry never does (only the proxy names the log entry). */
static void test_unlisted_destination(void **state)
{
    char url[256];
    json_object *v;

    (void)state;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/plain/a", T.port);
    v = verdict_of(200, "-H", "Signature: mine=:AAAA:", "-H", "Sworn-Entry: :AAAA:", url, NULL);
    assert_int_equal(count(v, "signature"), 1);
    assert_int_equal(count(v, "signature-input"), 0);
    assert_int_equal(count(v, "sworn-entry"), 0);
    assert_int_equal(count(v, "content-digest"), 0);
    json_object_put(v);
}

/* A WebSocket upgrade to a signing destination (ws.upgrade, scheme ws under the http
 * destination): signed like any request; the upstream answers 101 and its verdict as one text
 * frame. */
static void test_websocket_upgrade_signed(void **state)
{
    char req[512], out[16384];
    const char *json;
    long n;
    json_object *v;

    (void)state;
    snprintf(req, sizeof(req),
             "GET http://127.0.0.1:%u/signed/socket?room=1 HTTP/1.1\r\n"
             "Host: 127.0.0.1:%u\r\n"
             "Upgrade: websocket\r\n"
             "Connection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             "Sec-WebSocket-Version: 13\r\n"
             "Signature: sworn=:AAAA:\r\n"
             "\r\n",
             T.port, T.port);
    n = sworn_pfx_raw(&T.p, req, strlen(req), 1, 10000, out, sizeof(out));
    assert_true(n > 0);
    if (strncmp(out, "HTTP/1.1 101", 12) != 0)
        fail_msg("no 101: %s", out);
    json = strchr(out, '{');
    assert_non_null(json);
    v = json_tokener_parse(json);
    if (v == NULL)
        fail_msg("no verdict after the 101: %s", out);
    expect_signed(v, 0);
    assert_string_equal(json_object_get_string(get(v, "url")), "/signed/socket?room=1");
    json_object_put(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_signed),
        cmocka_unit_test(test_methods_and_bodies_signed),
        cmocka_unit_test(test_forged_fields_dropped),
        cmocka_unit_test(test_spelling_goes_canonical),
        cmocka_unit_test(test_unlisted_destination),
        cmocka_unit_test(test_websocket_upgrade_signed),
    };

    int failed = cmocka_run_group_tests_name("per-request receipts", tests, setup, teardown);

    return failed + cmocka_run_group_tests_name("batch receipts", tests, setup_batch, teardown);
}
