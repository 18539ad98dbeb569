/*
 * test_proxy_model.c -- model APIs through the real stack (docs/proxy.md, "Model APIs"): curl is
 * the agent, sworn-proxy in front of decisiond (SoftHSM signer), and tests/unit/model_upstream.py
 * the model API, speaking OpenAI's chat completions and responses and Anthropic's messages, as
 * JSON and as SSE streams, reporting more tokens than each request's ceiling asked for.
 *
 *   - a token budget of N per window denies once the reported usage reaches N, although each
 *     request asked for less (the reservation is settled to input + output);
 *   - every allowed model call has its UsageRecorded entry, linked by index and leaf hash;
 *   - a restart of decisiond keeps the spent tokens (the replay settles usage entries too);
 *   - every shape, framing (Content-Length, chunked, until close), SSE split one byte a write,
 *     and over HTTPS (a CONNECT tunnel the proxy terminates; the upstream's own test CA);
 *   - attacks: hostile usage (negative, fraction, exponent, huge, a string, two usage objects),
 *     a cut stream, hostile ceilings (0, huge, fraction, string, two of them, none), a stream
 *     that does not ask for its usage, a second report for one allow, a report for a deny or for
 *     an allow that was no model call;
 *   - sworn-verify accepts the record, its token-usage check counting every usage entry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "frame.h"
#include "merkle.h"
#include "proxy_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "upstream_fixture.h"
#include "verify_fixture.h"

static struct {
    char *dir;
    struct sworn_stack s;
    struct sworn_pfx p;
    char policy[1024], up_port_file[1024], up_log[1024], up_out[1024];
    pid_t up_pid;
    uint16_t up_port;
    /* The same model API over HTTPS (its own CA, which the proxy trusts upstream). */
    char tls_port_file[1024], ca_pem[1024];
    pid_t tls_pid;
    uint16_t tls_port;
    size_t reports; /* usage reports the proxy has had answered so far */
    int usage_entries;
} T;

static const char policy_text[] = "rules:\n"
                                  "  - id: deny-banned\n"
                                  "    effect: deny\n"
                                  "    resource: {models: [\"banned-*\"]}\n"
                                  "  - id: budget-a\n"
                                  "    effect: allow\n"
                                  "    operations: [model.call]\n"
                                  "    resource: {models: [\"budget-*\"]}\n"
                                  "    tokens: {max: 100, window: 1h}\n"
                                  "  - id: replay-b\n"
                                  "    effect: allow\n"
                                  "    operations: [model.call]\n"
                                  "    resource: {models: [\"replay-*\"]}\n"
                                  "    tokens: {max: 100, window: 1h}\n"
                                  "  - id: gone-c\n"
                                  "    effect: allow\n"
                                  "    operations: [model.call]\n"
                                  "    resource: {models: [\"gone-*\"]}\n"
                                  "    tokens: {max: 100, window: 1h}\n"
                                  "  - id: free\n"
                                  "    effect: allow\n"
                                  "    operations: [model.call]\n"
                                  "    resource: {models: [\"free-*\"]}\n"
                                  "    tokens: {max: 1000000000, window: 1h, per: sandbox}\n"
                                  "  - id: plain\n"
                                  "    effect: allow\n"
                                  "    operations: [http.request]\n";

/* ---- helpers ---- */

/* A CA and a certificate for 127.0.0.1 signed by it (the openssl CLI), in T.dir. */
static int make_certs(void)
{
    static const char ext[] = "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n";
    char *ca_key = sworn_test_path(T.dir, "ca.key"), *leaf_key = sworn_test_path(T.dir, "leaf.key");
    char *csr = sworn_test_path(T.dir, "leaf.csr"), *leaf = sworn_test_path(T.dir, "leaf.pem");
    char *extf = sworn_test_path(T.dir, "leaf.ext"), *serial = sworn_test_path(T.dir, "ca.srl");

    snprintf(T.ca_pem, sizeof(T.ca_pem), "%s/ca.pem", T.dir);
    sworn_test_write_file(extf, ext, strlen(ext), 0600);
    sworn_test_run_ok("ca", NULL, "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                      "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", ca_key, "-out", T.ca_pem,
                      "-subj", "/CN=sworn model test CA", "-days", "2", NULL);
    sworn_test_run_ok("csr", NULL, "/usr/bin/openssl", "req", "-newkey", "ec", "-pkeyopt",
                      "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", leaf_key, "-out", csr,
                      "-subj", "/CN=127.0.0.1", NULL);
    sworn_test_run_ok("leaf", NULL, "/usr/bin/openssl", "x509", "-req", "-in", csr, "-CA", T.ca_pem,
                      "-CAkey", ca_key, "-CAserial", serial, "-CAcreateserial", "-out", leaf,
                      "-days", "2", "-extfile", extf, NULL);
    {
        char script[1024];
        char *argv[7];

        snprintf(script, sizeof(script), "%s/tests/unit/model_upstream.py",
                 sworn_test_source_dir());
        snprintf(T.tls_port_file, sizeof(T.tls_port_file), "%s/tls.port", T.dir);
        argv[0] = "/usr/bin/python3";
        argv[1] = script;
        argv[2] = T.tls_port_file;
        argv[3] = T.up_log;
        argv[4] = leaf;
        argv[5] = leaf_key;
        argv[6] = NULL;
        T.tls_pid = sworn_upstream_spawn_port(argv, T.up_out, T.tls_port_file,
                                              SWORN_UPSTREAM_START_MS, &T.tls_port);
    }
    free(ca_key);
    free(leaf_key);
    free(csr);
    free(leaf);
    free(extf);
    free(serial);
    return T.tls_pid > 0 ? 0 : -1;
}

/* Usage reports answered (recorded or refused) or lost, by the proxy's log. */
static size_t reports_done(void)
{
    return sworn_pfx_log_count(&T.p, "\"usage_recorded\"") +
           sworn_pfx_log_count(&T.p, "\"usage_report_refused\"") +
           sworn_pfx_log_count(&T.p, "\"usage_report_lost\"");
}

static int reports_reach(void *want)
{
    return reports_done() >= *(size_t *)want;
}

/* Wait for the proxy's next usage report to be answered. */
static void wait_report(void)
{
    size_t want = ++T.reports;

    if (sworn_test_wait_dir(T.p.dir, reports_reach, &want, 60000) != 0)
        fail_msg("no usage report answered (%zu of %zu)", reports_done(), want);
}

/* POST body to path (and query) of the upstream through the proxy: curl's exit status, and the
 * HTTP status in *code. */
static int post_rc(const char *path, const char *body, char *out, size_t cap, int *code)
{
    char url[512];

    snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", (unsigned)T.up_port, path);
    return sworn_pfx_curl(&T.p, out, cap, code, "-s", "-H", "Content-Type: application/json",
                          "--data-binary", body, url, NULL);
}

/* The same, a whole response expected; returns the status. */
static int post(const char *path, const char *body, char *out, size_t cap)
{
    int code = 0;

    assert_int_equal(post_rc(path, body, out, cap, &code), 0);
    return code;
}

/* A chat completion request body for model with max_tokens ceiling. */
static const char *chat(char *buf, size_t cap, const char *model, int ceiling, int stream)
{
    snprintf(buf, cap,
             "{\"model\": \"%s\", \"max_tokens\": %d, \"messages\": [{\"role\": \"user\", "
             "\"content\": \"hi\"}]%s}",
             model, ceiling,
             stream ? ", \"stream\": true, \"stream_options\": {\"include_usage\": true}" : "");
    return buf;
}

/* The newest UsageRecorded entry of the log (a copy of its fields), and the allow it names. */
struct usage_seen {
    int found;
    uint64_t index;
    int reported;
    uint64_t in, out, reserved, charged, allow_index;
    char model[257], missing[257], allow_id[129];
    int linked; /* the allow entry: an ALLOW of model.call with that leaf hash and id */
};

static struct usage_seen newest_usage(void)
{
    struct usage_seen u = {0};
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 64);

    for (size_t i = tail->tail->n_entries; i-- > 0 && !u.found;) {
        const Sworn__V1__Entry *e = tail->tail->entries[i];
        const Sworn__V1__UsageRecorded *r = e->usage_recorded;

        if (e->kind_case != SWORN__V1__ENTRY__KIND_USAGE_RECORDED)
            continue;
        u.found = 1;
        u.index = tail->tail->first_index + i;
        u.reported = r->reported;
        u.in = r->input_tokens;
        u.out = r->output_tokens;
        u.reserved = r->reserved_tokens;
        u.charged = r->charged_tokens;
        u.allow_index = r->allow_log_index;
        snprintf(u.model, sizeof(u.model), "%s", r->model);
        snprintf(u.missing, sizeof(u.missing), "%s", r->missing);
        snprintf(u.allow_id, sizeof(u.allow_id), "%s", r->allow_request_id);
        if (r->allow_log_index >= tail->tail->first_index) {
            const Sworn__V1__Entry *a =
                tail->tail->entries[r->allow_log_index - tail->tail->first_index];
            uint8_t *bytes = NULL, leaf[32];
            size_t len = 0;

            assert_int_equal(sworn_frame_pack_entry(a, &bytes, &len), 0);
            sworn_merkle_leaf_hash(bytes, len, leaf);
            free(bytes);
            u.linked = a->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
                       a->decision->effect == SWORN__V1__EFFECT__EFFECT_ALLOW &&
                       strcmp(a->decision->request->operation, "model.call") == 0 &&
                       strcmp(a->decision->request->request_id, r->allow_request_id) == 0 &&
                       memcmp(leaf, r->allow_entry_hash.data, 32) == 0;
        }
    }
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    return u;
}

/* One allowed call whose usage is expected as given (reported with in and out, or not with
 * missing), linked to its allow and charged as the record says. */
static struct usage_seen expect_usage(const char *path, const char *body, int reported, uint64_t in,
                                      uint64_t out, const char *missing)
{
    char resp[8192];
    struct usage_seen u;
    int code = post(path, body, resp, sizeof(resp));

    if (code != 200)
        fail_msg("%s: status %d: %s", path, code, resp);
    wait_report();
    u = newest_usage();
    assert_true(u.found);
    assert_true(u.linked);
    T.usage_entries++;
    if (u.reported != reported)
        fail_msg("%s: reported %d (missing \"%s\")", path, u.reported, u.missing);
    if (reported) {
        assert_int_equal(u.in, in);
        assert_int_equal(u.out, out);
        assert_int_equal(u.charged, in + out);
    } else {
        assert_string_equal(u.missing, missing);
        assert_int_equal(u.charged, u.reserved);
    }
    return u;
}

/* ---- setup ---- */

static int setup(void **state)
{
    char opts[2048], extra[1024];
    char script[1024];
    char *argv[5];
    struct sworn_pfx_opts po = {0};

    (void)state;
    memset(&T, 0, sizeof(T));
    T.dir = sworn_test_tmpdir("proxy-model");
    snprintf(T.policy, sizeof(T.policy), "%s/policy.yaml", T.dir);
    snprintf(T.up_port_file, sizeof(T.up_port_file), "%s/up.port", T.dir);
    snprintf(T.up_log, sizeof(T.up_log), "%s/up.log", T.dir);
    snprintf(T.up_out, sizeof(T.up_out), "%s/up.out", T.dir);
    snprintf(script, sizeof(script), "%s/tests/unit/model_upstream.py", sworn_test_source_dir());
    argv[0] = "/usr/bin/python3";
    argv[1] = script;
    argv[2] = T.up_port_file;
    argv[3] = T.up_log;
    argv[4] = NULL;
    T.up_pid = sworn_upstream_spawn_port(argv, T.up_out, T.up_port_file, SWORN_UPSTREAM_START_MS,
                                         &T.up_port);
    if (T.up_pid <= 0)
        return -1;
    if (make_certs() != 0) {
        fprintf(stderr, "model_upstream.py over TLS did not start\n");
        return -1;
    }
    sworn_test_write_file(T.policy, policy_text, strlen(policy_text), 0600);
    snprintf(opts, sizeof(opts), "--no-proxy --no-tpm --policy %s", T.policy);
    if (sworn_stack_up(&T.s, opts) != 0)
        return -1;
    snprintf(extra, sizeof(extra),
             "models:\n"
             "  - url: http://127.0.0.1:%u/\n"
             "    api: openai\n"
             "  - url: http://127.0.0.1:%u/anthropic/\n"
             "    api: anthropic\n"
             "  - url: https://127.0.0.1:%u/\n"
             "    api: openai\n",
             (unsigned)T.up_port, (unsigned)T.up_port, (unsigned)T.tls_port);
    po.extra = extra;
    po.upstream_ca = T.ca_pem;
    po.upstream = "  response_timeout: 5s\n";
    return sworn_pfx_start(&T.p, T.s.decision, &po);
}

static int teardown(void **state)
{
    int rc = 0;

    (void)state;
    if (sworn_pfx_stop_with_stack(&T.p, &T.s) != 0)
        rc = -1;
    sworn_upstream_stop_child(&T.up_pid, "model_upstream.py");
    sworn_upstream_stop_child(&T.tls_pid, "model_upstream.py (TLS)");
    sworn_test_tmpdir_drop(&T.dir);
    return rc;
}

/* ---- the budget ---- */

/* The case: a budget of 100 tokens; each request asks for 10 and uses 70. The first two
 * are allowed (0 + 10, then 70 + 10, fit), the third denied (140 already used). */
static void test_budget_holds_above_ceiling(void **state)
{
    char body[512], resp[8192];
    struct usage_seen u;

    (void)state;
    chat(body, sizeof(body), "budget-a", 10, 0);
    u = expect_usage("/v1/chat/completions?in=40&out=30", body, 1, 40, 30, NULL);
    assert_string_equal(u.model, "budget-a");
    assert_int_equal(u.reserved, 10);
    expect_usage("/v1/chat/completions?in=40&out=30", body, 1, 40, 30, NULL);
    /* The operator's view (swornctl tail) shows the usage entry with every field. */
    assert_int_equal(sworn_stack_sh(&T.s,
                                    "\"%s\" --config \"$CONFIG\" tail 1 | grep -q "
                                    "'\"kind\":\"usage_recorded\",.*\"model\":\"budget-a\","
                                    "\"reported\":true,\"input_tokens\":40,\"output_tokens\":30,"
                                    "\"reserved_tokens\":10,\"charged_tokens\":70'",
                                    sworn_test_bin("SWORNCTL_BIN")),
                     0);
    assert_int_equal(post("/v1/chat/completions?in=40&out=30", body, resp, sizeof(resp)), 403);
    if (strstr(resp, "token budget exhausted: rule budget-a allows 100 tokens per 1h") == NULL ||
        strstr(resp, "140 already used or reserved") == NULL)
        fail_msg("the deny says: %s", resp);
    /* max_tokens 0 reserves nothing, yet a spent budget denies it too. */
    chat(body, sizeof(body), "budget-a", 0, 0);
    assert_int_equal(post("/v1/chat/completions", body, resp, sizeof(resp)), 403);
}

/* A restart keeps the spent tokens: 70 used of 100, then decisiond restarts; a request reserving
 * 40 is denied (70 + 40 > 100; without the usage replayed, 10 + 40 would fit), one reserving 25
 * is allowed (the reservation of 10 was replaced by the 70 used, not added to it). */
static void test_restart_keeps_spent_tokens(void **state)
{
    char body[512], resp[8192];

    (void)state;
    chat(body, sizeof(body), "replay-b", 10, 0);
    expect_usage("/v1/chat/completions?in=40&out=30", body, 1, 40, 30, NULL);
    assert_int_equal(sworn_stack_stop_daemon(&T.s), 0);
    assert_int_equal(sworn_stack_start(&T.s), 0);
    chat(body, sizeof(body), "replay-b", 40, 0);
    assert_int_equal(post("/v1/chat/completions?in=1&out=1", body, resp, sizeof(resp)), 403);
    assert_non_null(strstr(resp, "70 already used or reserved"));
    chat(body, sizeof(body), "replay-b", 25, 0);
    expect_usage("/v1/chat/completions?in=1&out=1", body, 1, 1, 1, NULL);
}

/* ---- the shapes ---- */

static void test_shapes(void **state)
{
    char body[1024];

    (void)state;
    chat(body, sizeof(body), "free-chat", 10, 0);
    expect_usage("/v1/chat/completions?in=11&out=21", body, 1, 11, 21, NULL);
    expect_usage("/v1/chat/completions?in=12&out=22&frame=chunked", body, 1, 12, 22, NULL);
    expect_usage("/v1/chat/completions?in=13&out=23&frame=close", body, 1, 13, 23, NULL);
    chat(body, sizeof(body), "free-chat-stream", 10, 1);
    expect_usage("/v1/chat/completions?in=14&out=24", body, 1, 14, 24, NULL);
    expect_usage("/v1/chat/completions?in=15&out=25&slow=1", body, 1, 15, 25, NULL);
    expect_usage("/v1/chat/completions?in=16&out=26&crlf=1&frame=close", body, 1, 16, 26, NULL);
    expect_usage("/v1/chat/completions?in=17&out=27&frame=length", body, 1, 17, 27, NULL);
    snprintf(body, sizeof(body),
             "{\"model\": \"free-resp\", \"max_output_tokens\": 10, "
             "\"input\": \"hi\"}");
    expect_usage("/v1/responses?in=31&out=41", body, 1, 31, 41, NULL);
    snprintf(body, sizeof(body),
             "{\"model\": \"free-resp\", \"max_output_tokens\": 10, "
             "\"input\": \"hi\", \"stream\": true}");
    expect_usage("/v1/responses?in=32&out=42", body, 1, 32, 42, NULL);
    expect_usage("/v1/responses?in=33&out=43&slow=1&crlf=1", body, 1, 33, 43, NULL);
    snprintf(body, sizeof(body),
             "{\"model\": \"free-claude\", \"max_tokens\": 10, "
             "\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}");
    expect_usage("/anthropic/v1/messages?in=51&out=61", body, 1, 51, 61, NULL);
    snprintf(body, sizeof(body),
             "{\"model\": \"free-claude\", \"max_tokens\": 10, "
             "\"messages\": [], \"stream\": true}");
    expect_usage("/anthropic/v1/messages?in=52&out=62", body, 1, 52, 62, NULL);
    expect_usage("/anthropic/v1/messages?in=53&out=63&slow=1", body, 1, 53, 63, NULL);
    /* Over HTTPS, as agents reach model APIs: a CONNECT tunnel the proxy terminates with its CA,
     * the model call decided inside it, the usage read from the decrypted stream. */
    {
        char url[256], resp[8192];
        int code = 0;
        struct usage_seen u;

        chat(body, sizeof(body), "free-tls", 10, 1);
        snprintf(url, sizeof(url), "https://127.0.0.1:%u/v1/chat/completions?in=81&out=82",
                 (unsigned)T.tls_port);
        assert_int_equal(sworn_pfx_curl(&T.p, resp, sizeof(resp), &code, "-s", "--cacert",
                                        T.p.ca_cert, "-H", "Content-Type: application/json",
                                        "--data-binary", body, url, NULL),
                         0);
        if (code != 200)
            fail_msg("https: status %d: %s", code, resp);
        wait_report();
        T.usage_entries++;
        u = newest_usage();
        assert_true(u.linked && u.reported);
        assert_int_equal(u.in, 81);
        assert_int_equal(u.out, 82);
        assert_string_equal(u.model, "free-tls");
    }
    /* Two calls on one kept-alive connection: one report each. */
    {
        char url1[256], url2[256], resp[8192];
        int code = 0;
        struct usage_seen u;

        chat(body, sizeof(body), "free-keepalive", 10, 0);
        snprintf(url1, sizeof(url1), "http://127.0.0.1:%u/v1/chat/completions?in=71&out=72",
                 (unsigned)T.up_port);
        snprintf(url2, sizeof(url2), "http://127.0.0.1:%u/v1/chat/completions?in=73&out=74",
                 (unsigned)T.up_port);
        assert_int_equal(sworn_pfx_curl(&T.p, resp, sizeof(resp), &code, "-s", "-H",
                                        "Content-Type: application/json", "--data-binary", body,
                                        url1, url2, NULL),
                         0);
        assert_int_equal(code, 200);
        wait_report();
        wait_report();
        T.usage_entries += 2;
        u = newest_usage();
        assert_true(u.linked && u.reported);
        assert_int_equal(u.in, 73);
        assert_int_equal(u.out, 74);
    }
    /* OpenAI's newer ceiling, and none at all for a model no token budget covers (plain's
     * http.request never matches model.call, so it is the free rule's: denied below). */
    snprintf(body, sizeof(body),
             "{\"model\": \"free-new\", \"max_completion_tokens\": 5, "
             "\"messages\": []}");
    expect_usage("/v1/chat/completions?in=1&out=2", body, 1, 1, 2, NULL);
}

/* ---- a dishonest upstream ---- */

static void test_hostile_usage(void **state)
{
    static const char bad_count[] = "the response's usage is not an integer of 0..4294967295";
    static const char *const raws[] = {"-5", "12.5", "1e3", "99999999999999999999", "%227%22"};
    char body[512], path[256];
    struct usage_seen u;

    (void)state;
    chat(body, sizeof(body), "free-hostile", 10, 0);
    for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++) {
        snprintf(path, sizeof(path), "/v1/chat/completions?raw=%s", raws[i]);
        u = expect_usage(path, body, 0, 0, 0, bad_count);
        assert_int_equal(u.charged, 10); /* the reservation stands */
    }
    chat(body, sizeof(body), "free-hostile", 10, 1);
    for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++) {
        snprintf(path, sizeof(path), "/v1/chat/completions?raw=%s", raws[i]);
        expect_usage(path, body, 0, 0, 0, bad_count);
    }
    /* Two usage objects: in JSON a duplicate member (not strict JSON: nothing is read); in a
     * stream a second, lower report (the larger counts are charged). */
    chat(body, sizeof(body), "free-hostile", 10, 0);
    expect_usage("/v1/chat/completions?twice=1", body, 0, 0, 0,
                 "the response body is not strict JSON");
    chat(body, sizeof(body), "free-hostile", 10, 1);
    expect_usage("/v1/chat/completions?twice=1&in=40&out=30", body, 1, 40, 30, NULL);
    snprintf(body, sizeof(body),
             "{\"model\": \"free-claude\", \"max_tokens\": 10, "
             "\"messages\": [], \"stream\": true}");
    expect_usage("/anthropic/v1/messages?twice=1&in=40&out=30", body, 1, 40, 30, NULL);
    /* The agent offers gzip (curl --compressed): the upstream would compress, and the usage
     * could not be read; the proxy drops Accept-Encoding (and Range) of a model call. */
    {
        char url[256], resp[8192];
        int code = 0;

        chat(body, sizeof(body), "free-gzip", 10, 0);
        snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/chat/completions?in=8&out=9",
                 (unsigned)T.up_port);
        assert_int_equal(sworn_pfx_curl(&T.p, resp, sizeof(resp), &code, "-s", "--compressed", "-H",
                                        "Content-Type: application/json", "--data-binary", body,
                                        url, NULL),
                         0);
        assert_int_equal(code, 200);
        wait_report();
        u = newest_usage();
        T.usage_entries++;
        assert_true(u.linked);
        assert_true(u.reported);
        assert_int_equal(u.in, 8);
        assert_int_equal(u.out, 9);
    }
    /* A stream cut before its usage: not reported, the reservation stands. */
    chat(body, sizeof(body), "free-hostile", 10, 1);
    {
        char resp[8192];

        int code = 0;

        /* curl says the body was cut (18): what matters is the record. */
        assert_int_not_equal(post_rc("/v1/chat/completions?cut=1", body, resp, sizeof(resp), &code),
                             0);
        wait_report();
        u = newest_usage();
        T.usage_entries++;
        assert_true(u.linked);
        assert_false(u.reported);
        assert_string_equal(u.missing, "the response ended before its end");
        assert_int_equal(u.charged, 10);
    }
}

/* ---- red team (issue 16, rt-A) ---- */

/* The agent reads a streamed answer up to its text and closes its connection before the usage
 * comes (every token was spent by then). The proxy used to drop the upstream and leave the
 * reservation (the ceiling, 1 token) standing: input tokens were never charged, so calls of
 * max_tokens 1 with a long prompt spent a budget of 100 tokens without end. The proxy now reads
 * the rest of the answer without the agent and reports the usage (1000 + 1): the next call is
 * denied. */
static void test_rt16_a_agent_leaves_before_usage(void **state)
{
    char body[512], req[2048], buf[16384], gate[1200], resp[8192];
    size_t have = 0;
    struct usage_seen u;
    int fd, n;

    (void)state;
    chat(body, sizeof(body), "gone-x", 1, 1);
    n = snprintf(req, sizeof(req),
                 "POST http://127.0.0.1:%u/v1/chat/completions?in=1000&out=1&gate=gone-open "
                 "HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\n\r\n%s",
                 (unsigned)T.up_port, (unsigned)T.up_port, strlen(body), body);
    fd = sworn_pfx_dial(T.p.port);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, req, (size_t)n), n);
    /* The answer's text has come: the agent has what it wanted and goes. */
    assert_int_equal(sworn_pfx_read_until(fd, buf, sizeof(buf), &have, "\"lo\"", 20000), 1);
    close(fd);
    assert_int_equal(sworn_pfx_wait_log(&T.p, "the agent closed the connection", 20000), 0);
    snprintf(gate, sizeof(gate), "%s/gone-open", T.dir);
    sworn_test_write_file(gate, "", 0, 0600);
    wait_report();
    u = newest_usage();
    T.usage_entries++;
    assert_true(u.linked);
    if (!u.reported)
        fail_msg("the usage was not reported (\"%s\"): charged %llu for 1001 spent", u.missing,
                 (unsigned long long)u.charged);
    assert_int_equal(u.in, 1000);
    assert_int_equal(u.out, 1);
    assert_int_equal(u.charged, 1001);
    /* The budget of 100 is spent: the next call is denied. */
    chat(body, sizeof(body), "gone-x", 1, 0);
    assert_int_equal(post("/v1/chat/completions?in=1000&out=1", body, resp, sizeof(resp)), 403);
}

/* Anthropic's prompt cache: input the cache wrote or read is reported apart from input_tokens
 * (cache_creation_input_tokens, cache_read_input_tokens), and is spent (and billed) all the same.
 * The proxy read input_tokens alone: an agent that marks its long prompt cache_control charged
 * a few tokens for it. The input now is the sum of the three. */
static void test_rt16_a_anthropic_cache_tokens(void **state)
{
    char body[512];

    (void)state;
    snprintf(body, sizeof(body),
             "{\"model\": \"free-claude-cache\", \"max_tokens\": 10, \"messages\": []}");
    /* 4 + 5000 + 5001 */
    expect_usage("/anthropic/v1/messages?in=4&out=3&cache=5000", body, 1, 10005, 3, NULL);
    snprintf(body, sizeof(body),
             "{\"model\": \"free-claude-cache\", \"max_tokens\": 10, \"messages\": [], "
             "\"stream\": true}");
    expect_usage("/anthropic/v1/messages?in=4&out=3&cache=5000", body, 1, 10005, 3, NULL);
}

/* Red team rt-A: an answer the agent makes larger than the usage reader's bound (4 MiB: logprobs
 * with top_logprobs, n choices, audio or images in base64) was "not reported", and only the
 * reservation (the output ceiling) was charged: the input tokens of such calls never were. Past
 * the bound the body is now scanned for its top-level usage as it passes. */
static void test_rt16_a_large_answer_hides_input(void **state)
{
    char body[512];

    (void)state;
    snprintf(body, sizeof(body),
             "{\"model\": \"free-large\", \"max_tokens\": 1, \"logprobs\": true, "
             "\"top_logprobs\": 20, \"messages\": []}");
    expect_usage("/v1/chat/completions?in=100000&out=1&pad=5000000", body, 1, 100000, 1, NULL);
}

/* Red team rt-A: the agent reads the head of a large answer and then stops reading, its
 * connection open. The proxy stopped reading upstream (backpressure) and the usage never came:
 * no report, so only the reservation counted, and decisiond refuses a report after 60 minutes.
 * An agent that takes no byte for upstream.response_timeout now counts as gone: the rest is read
 * from upstream for its usage, which is reported. */
static void test_rt16_a_agent_stops_reading(void **state)
{
    char body[512], req[2048], buf[4096];
    size_t have = 0;
    struct usage_seen u;
    int fd, n;

    (void)state;
    snprintf(body, sizeof(body),
             "{\"model\": \"free-stall\", \"max_tokens\": 1, \"logprobs\": true, "
             "\"top_logprobs\": 20, \"messages\": []}");
    n = snprintf(req, sizeof(req),
                 "POST http://127.0.0.1:%u/v1/chat/completions?in=1000&out=1&pad=48000000 "
                 "HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\n\r\n%s",
                 (unsigned)T.up_port, (unsigned)T.up_port, strlen(body), body);
    fd = sworn_pfx_dial(T.p.port);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, req, (size_t)n), n);
    assert_int_equal(sworn_pfx_read_until(fd, buf, sizeof(buf), &have, "\r\n\r\n", 20000), 1);
    /* ... and reads no more. */
    assert_int_equal(
        sworn_pfx_wait_log(&T.p, "the agent read nothing for upstream.response_timeout", 20000), 0);
    wait_report();
    u = newest_usage();
    T.usage_entries++;
    assert_true(u.linked);
    if (!u.reported)
        fail_msg("the usage was not reported (\"%s\")", u.missing);
    assert_int_equal(u.in, 1000);
    assert_int_equal(u.out, 1);
    close(fd);
}

/* ---- a hostile agent ---- */

static void expect_refused(const char *path, const char *body, int status, const char *reason)
{
    char resp[8192];
    int code = post(path, body, resp, sizeof(resp));

    if (code != status || strstr(resp, reason) == NULL)
        fail_msg("%s %s: status %d: %s", path, body, code, resp);
}

static void test_hostile_requests(void **state)
{
    static const char ceiling[] = "the model API body's token ceiling is not an integer of "
                                  "0..4294967295";

    (void)state;
    expect_refused("/v1/chat/completions", "{\"model\": \"free-x\", \"max_tokens\": 5000000000}",
                   400, ceiling);
    expect_refused("/v1/chat/completions", "{\"model\": \"free-x\", \"max_tokens\": -1}", 400,
                   ceiling);
    expect_refused("/v1/chat/completions", "{\"model\": \"free-x\", \"max_tokens\": 1.5}", 400,
                   ceiling);
    expect_refused("/v1/chat/completions", "{\"model\": \"free-x\", \"max_tokens\": 1e2}", 400,
                   ceiling);
    expect_refused("/v1/chat/completions", "{\"model\": \"free-x\", \"max_tokens\": \"10\"}", 400,
                   ceiling);
    expect_refused("/v1/chat/completions",
                   "{\"model\": \"free-x\", \"max_tokens\": 1, \"max_completion_tokens\": 1}", 400,
                   "names its token ceiling more than once");
    expect_refused("/v1/chat/completions",
                   "{\"model\": \"free-x\", \"max_tokens\": 1, \"max_tokens\": 9}", 400,
                   "not strict JSON");
    expect_refused("/v1/chat/completions",
                   "{\"model\": \"free-x\", \"model\": \"banned-x\", \"max_tokens\": 1}", 400,
                   "not strict JSON");
    expect_refused("/v1/chat/completions", "{\"model\": \"free x\", \"max_tokens\": 1}", 400,
                   "is not 1..256 bytes of printable ASCII");
    expect_refused("/v1/chat/completions", "{\"max_tokens\": 1}", 400, "names no model");
    expect_refused("/v1/chat/completions", "[1]", 400, "is not a JSON object");
    expect_refused("/v1/chat/completions", "{'model': 'free-x'}", 400, "not strict JSON");
    expect_refused("/v1/chat/completions",
                   "{\"model\": \"free-x\", \"max_tokens\": 1, \"stream\": true}", 400,
                   "must ask for its usage");
    /* No ceiling under a token budget: nothing can be reserved, so denied. */
    expect_refused("/v1/chat/completions", "{\"model\": \"free-x\"}", 403,
                   "token budget of rule free: the request names no token ceiling");
    /* A ceiling larger than the budget. */
    expect_refused("/v1/chat/completions", "{\"model\": \"budget-z\", \"max_tokens\": 1000}", 403,
                   "token budget exhausted: rule budget-a");
    /* The deny of a model in any case, any spelling of the endpoint's path. */
    expect_refused("/v1/chat/completions", "{\"model\": \"BANNED-x\", \"max_tokens\": 1}", 403,
                   "denied by rule deny-banned");
    expect_refused("/v1/chat/completions", "{\"model\": \"banned-\\u0078\", \"max_tokens\": 1}",
                   403, "denied by rule deny-banned");
    expect_refused("/V1/Chat/Completions/", "{\"model\": \"banned-x\", \"max_tokens\": 1}", 403,
                   "denied by rule deny-banned");
    expect_refused("/v1/chat/%63ompletions", "{\"model\": \"banned-x\", \"max_tokens\": 1}", 403,
                   "denied by rule deny-banned");
    /* A chunked body, and a body whose Content-Type is not JSON, are read all the same. */
    {
        char url[256], resp[4096];
        int code = 0;

        snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/chat/completions", (unsigned)T.up_port);
        assert_int_equal(sworn_pfx_curl(&T.p, resp, sizeof(resp), &code, "-s", "-H",
                                        "Transfer-Encoding: chunked", "-H",
                                        "Content-Type: text/plain", "--data-binary",
                                        "{\"model\": \"banned-x\", \"max_tokens\": 1}", url, NULL),
                         0);
        if (code != 403 || strstr(resp, "denied by rule deny-banned") == NULL)
            fail_msg("chunked: status %d: %s", code, resp);
    }
}

/* ---- reports decisiond refuses ---- */

/* Send report u on a connection of its own; returns the reply's body case. */
static int send_report(const char *id, const char *allow_id, uint64_t allow_index)
{
    Sworn__V1__UsageReport u = SWORN__V1__USAGE_REPORT__INIT;
    uint8_t *frame = NULL, *body = NULL;
    size_t len = 0, blen = 0;
    Sworn__V1__DecisionReply *r;
    int fd, kind;

    u.request_id = (char *)id;
    u.allow_request_id = (char *)allow_id;
    u.allow_log_index = allow_index;
    u.reported = 1;
    u.input_tokens = 0;
    u.output_tokens = 0;
    u.missing = "";
    assert_int_equal(sworn_frame_pack_usage_report(&u, &frame, &len), 0);
    fd = sworn_stack_connect(T.s.decision);
    assert_true(fd >= 0);
    assert_int_equal(sworn_stack_exchange(fd, frame, len, 10000, &body, &blen), 0);
    close(fd);
    free(frame);
    r = sworn_frame_unpack_reply(body, blen);
    assert_non_null(r);
    kind = (int)r->body_case;
    if (r->body_case == SWORN__V1__DECISION_REPLY__BODY_ERROR)
        assert_non_null(strstr(r->error->message, "usage report refused"));
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    free(body);
    return kind;
}

/* The newest decision entry with the given operation and effect: its index and request id. */
static int newest_decision(const char *operation, Sworn__V1__Effect effect, uint64_t *index,
                           char id[129])
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 200);
    int found = 0;

    for (size_t i = tail->tail->n_entries; i-- > 0 && !found;) {
        const Sworn__V1__Entry *e = tail->tail->entries[i];

        if (e->kind_case != SWORN__V1__ENTRY__KIND_DECISION || e->decision->effect != effect ||
            strcmp(e->decision->request->operation, operation) != 0)
            continue;
        found = 1;
        *index = tail->tail->first_index + i;
        snprintf(id, 129, "%s", e->decision->request->request_id);
    }
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    return found;
}

static void test_reports_refused(void **state)
{
    struct usage_seen u;
    char resp[4096], id[129], url[256];
    uint64_t at = 0;
    int code = 0;

    (void)state;
    /* A second report for an allow already reported (the proxy's, replayed). */
    u = newest_usage();
    assert_true(u.found);
    assert_int_equal(send_report("replay-1", u.allow_id, u.allow_index),
                     SWORN__V1__DECISION_REPLY__BODY_ERROR);
    /* A report for a deny. */
    assert_true(newest_decision("model.call", SWORN__V1__EFFECT__EFFECT_DENY, &at, id));
    assert_int_equal(send_report("deny-1", id, at), SWORN__V1__DECISION_REPLY__BODY_ERROR);
    /* A report for an allow that was no model call. */
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/other", (unsigned)T.up_port);
    assert_int_equal(sworn_pfx_curl(&T.p, resp, sizeof(resp), &code, "-s", url, NULL), 0);
    assert_int_equal(code, 200);
    assert_true(newest_decision("http.request", SWORN__V1__EFFECT__EFFECT_ALLOW, &at, id));
    assert_int_equal(send_report("plain-1", id, at), SWORN__V1__DECISION_REPLY__BODY_ERROR);
    /* The right id with another index, the right index with another id. */
    assert_int_equal(send_report("bad-index", u.allow_id, u.allow_index + 1),
                     SWORN__V1__DECISION_REPLY__BODY_ERROR);
}

/* ---- the auditor ---- */

/* Last: the record verifies, and token-usage counted every usage entry made above. */
static void test_record_verifies(void **state)
{
    json_object *rep;

    (void)state;
    assert_int_equal(sworn_stack_stop_daemon(&T.s), 0);
    /* The trust file of a development stack (sworn_stack_dev_trust's), with the SoftHSM key. */
    assert_int_equal(
        sworn_stack_sh(&T.s,
                       "cp \"%s\" signer.spki && origin=$(head -n 1 tiles/checkpoint)"
                       " && { echo \"origin $origin\"; echo \"log $(\"%s\" vkey --name "
                       "\"$origin\" --spki signer.spki)\"; echo 'entries sworn'; echo 'quotes "
                       "ignore'; echo 'development allowed';"
                       " echo \"receipt-key $(base64 -w0 signer.spki)\"; } > trust.txt",
                       T.s.spki_der, sworn_test_bin("SWORN_LOG_BIN")),
        0);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), T.s.dir, "trust.txt", "tiles", NULL,
                            0, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_pass(rep, "token-usage");
    sworn_verify_expect_pass(rep, "entries");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "token-usage"), "count")),
        T.usage_entries);
    json_object_put(rep);
    assert_int_equal(sworn_stack_start(&T.s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_holds_above_ceiling),
        cmocka_unit_test(test_restart_keeps_spent_tokens),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_hostile_usage),
        cmocka_unit_test(test_hostile_requests),
        cmocka_unit_test(test_rt16_a_agent_leaves_before_usage),
        cmocka_unit_test(test_rt16_a_anthropic_cache_tokens),
        cmocka_unit_test(test_rt16_a_large_answer_hides_input),
        cmocka_unit_test(test_rt16_a_agent_stops_reading),
        cmocka_unit_test(test_reports_refused),
        cmocka_unit_test(test_record_verifies),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
