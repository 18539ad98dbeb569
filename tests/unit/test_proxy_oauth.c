/*
 * test_proxy_oauth.c -- OAuth token response interception through the real stack (docs/proxy.md,
 * "OAuth token endpoints"): decisiond with its signer (stack_fixture.h), a real sworn-proxy
 * (proxy_fixture.h) configured with two token endpoints, curl as the agent, and
 * tests/unit/oauth_upstream.py as the authorization server and protected API.
 *
 * What must hold: the agent only ever holds symbolic tokens (every real token the server issued,
 * which it logs, is absent from everything curl received, head and body); its API calls with
 * them reach the server with the real ones; a refresh with the symbolic refresh token works and
 * yields new symbolic tokens; a second exchange for one allow is refused and recorded; every
 * shape of answer that could let a real token through is refused with 502.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "proxy_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "upstream_fixture.h"

#define SYM "sym_clientclientclientclientclientcl01"
#define SYM2 "sym_basicbasicbasicbasicbasicbasicba02"
/* The client secret holds bytes a form must escape: the proxy percent-encodes it, the server's
 * own decoder (Python's parse_qs) must read it back exactly. */
#define SECRET "cs+5f0c/2a9e=&x"
#define SECRET_FORM "cs%2B5f0c%2F2a9e%3D%26x"
#define BASIC "Basic YXBwOmNzKzVmMGMvMmE5ZT0meA==" /* base64("app:" SECRET) */
#define ATTACK_TOKEN "AT-attack-0123456789abcdef"

static struct {
    struct sworn_stack s;
    struct sworn_pfx p;
    char *dir;
    char policy[600], vault[600], up_port_file[600], up_log[600], up_out[600];
    pid_t up_pid;
    uint16_t up_port;
    char *seen; /* everything the agent received, all tests */
    size_t seen_len;
} T;

static const char policy_text[] =
    "version: 1\n"
    "rules:\n"
    "  - id: token\n    effect: allow\n    reason: \"oauth: token endpoint\"\n"
    "    operations: [\"http.request\"]\n"
    "    resource:\n      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
    "      paths: [\"/token/**\", \"/api/**\"]\n"
    "    credential: client\n"
    "  - id: btoken\n    effect: allow\n    reason: \"oauth: basic client\"\n"
    "    operations: [\"http.request\"]\n"
    "    resource:\n      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
    "      paths: [\"/btoken/**\", \"/bapi/**\"]\n"
    "    credential: basic\n";

static int setup(void **state)
{
    char opts[2048], vault[2048], extra[512], script[1024];
    char *argv[5];
    struct sworn_pfx_opts po = {0};
    int n;

    (void)state;
    memset(&T, 0, sizeof(T));
    T.dir = sworn_test_tmpdir("proxy-oauth");
    snprintf(T.policy, sizeof(T.policy), "%s/policy.yaml", T.dir);
    snprintf(T.vault, sizeof(T.vault), "%s/vault.json", T.dir);
    snprintf(T.up_port_file, sizeof(T.up_port_file), "%s/up.port", T.dir);
    snprintf(T.up_log, sizeof(T.up_log), "%s/up.log", T.dir);
    snprintf(T.up_out, sizeof(T.up_out), "%s/up.out", T.dir);
    snprintf(script, sizeof(script), "%s/tests/unit/oauth_upstream.py", sworn_test_source_dir());
    argv[0] = "/usr/bin/python3";
    argv[1] = script;
    argv[2] = T.up_port_file;
    argv[3] = T.up_log;
    argv[4] = NULL;
    T.up_pid = sworn_upstream_spawn_port(argv, T.up_out, T.up_port_file, SWORN_UPSTREAM_START_MS,
                                         &T.up_port);
    if (T.up_pid <= 0)
        return -1;
    sworn_test_write_file(T.policy, policy_text, strlen(policy_text), 0600);
    n = snprintf(vault, sizeof(vault),
                 "{\"version\": 1, \"credentials\": [\n"
                 " {\"id\": \"client\", \"symbolic\": \"" SYM "\", \"value\": \"" SECRET
                 "\", \"form\": \"client_secret\", \"principals\": [\"agent-1\"],\n"
                 "  \"destinations\": [{\"scheme\": \"http\", \"host\": \"127.0.0.1\", \"port\": "
                 "%u}]},\n"
                 " {\"id\": \"basic\", \"symbolic\": \"" SYM2 "\", \"value\": \"" BASIC
                 "\", \"header\": \"authorization\", \"principals\": [\"agent-1\"],\n"
                 "  \"destinations\": [{\"scheme\": \"http\", \"host\": \"127.0.0.1\", \"port\": "
                 "%u}]}\n"
                 "]}\n",
                 (unsigned)T.up_port, (unsigned)T.up_port);
    sworn_test_write_file(T.vault, vault, (size_t)n, 0600);
    snprintf(opts, sizeof(opts), "--no-proxy --no-tpm --policy %s --vault %s", T.policy, T.vault);
    if (sworn_stack_up(&T.s, opts) != 0)
        return -1;
    snprintf(extra, sizeof(extra),
             "oauth:\n  token_endpoints: [\"http://127.0.0.1:%u/token\", "
             "\"http://127.0.0.1:%u/btoken\"]\n",
             (unsigned)T.up_port, (unsigned)T.up_port);
    po.extra = extra;
    return sworn_pfx_start(&T.p, T.s.decision, &po);
}

static int teardown(void **state)
{
    int rc = 0;

    (void)state;
    if (sworn_pfx_stop_with_stack(&T.p, &T.s) != 0)
        rc = -1;
    sworn_upstream_stop_child(&T.up_pid, "oauth_upstream.py");
    sworn_test_tmpdir_drop(&T.dir);
    free(T.seen);
    return rc;
}

/* ---- helpers ---- */

static void url(char *out, size_t cap, const char *path)
{
    snprintf(out, cap, "http://127.0.0.1:%u%s", (unsigned)T.up_port, path);
}

/* Keep what the agent received, for no_real_token_reached_the_agent. */
static void saw(const char *text)
{
    size_t n = strlen(text);

    if (getenv("SWORN_TEST_VERBOSE") != NULL)
        fprintf(stderr, "--- the agent received:\n%s\n", text);

    T.seen = realloc(T.seen, T.seen_len + n + 1);
    assert_non_null(T.seen);
    memcpy(T.seen + T.seen_len, text, n + 1);
    T.seen_len += n;
}

/* POST body to path as the agent (with one extra header, or NULL); head and body into out. */
static int post(const char *path, const char *header, const char *body, char *out, size_t cap)
{
    char u[256];
    int code = 0;

    url(u, sizeof(u), path);
    if (header != NULL)
        assert_int_equal(sworn_pfx_curl(&T.p, out, cap, &code, "-s", "-i", "-H", header,
                                        "--data-raw", body, u, NULL),
                         0);
    else
        assert_int_equal(
            sworn_pfx_curl(&T.p, out, cap, &code, "-s", "-i", "--data-raw", body, u, NULL), 0);
    saw(out);
    return code;
}

static int get(const char *path, const char *header, char *out, size_t cap)
{
    char u[256];
    int code = 0;

    url(u, sizeof(u), path);
    assert_int_equal(sworn_pfx_curl(&T.p, out, cap, &code, "-s", "-i", "-H", header, u, NULL), 0);
    saw(out);
    return code;
}

/* The body of a curl -i answer. */
static const char *body_of(const char *out)
{
    const char *b = strstr(out, "\r\n\r\n");

    assert_non_null(b);
    return b + 4;
}

/* The string member name of the JSON body of out, copied into v (cap). */
static void json_member(const char *out, const char *name, char *v, size_t cap)
{
    json_object *o = json_tokener_parse(body_of(out)), *m;

    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, name, &m));
    snprintf(v, cap, "%s", json_object_get_string(m));
    json_object_put(o);
}

/* The value of parameter name of the form body of out (undecoded: tokens need no escapes). */
static void form_member(const char *out, const char *name, char *v, size_t cap)
{
    const char *b = body_of(out), *p;
    size_t n = strlen(name), k = 0;

    for (p = b; p != NULL; p = strchr(p, '&') != NULL ? strchr(p, '&') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && p[n] == '=')
            break;
    assert_non_null(p);
    p += n + 1;
    while (p[k] != '\0' && p[k] != '&' && k + 1 < cap) {
        v[k] = p[k];
        k++;
    }
    v[k] = '\0';
}

static int is_symbolic(const char *s)
{
    return strncmp(s, "sym_", 4) == 0 && strlen(s) == 47;
}

/* Every real token the server issued (its log's "issued" lines) is absent from what the agent
 * received; and at least min were issued. */
static void no_real_token_reached_the_agent(size_t min)
{
    char *log = sworn_test_read_file(T.up_log, NULL);
    size_t issued = 0;

    for (char *p = log; (p = strstr(p, "\"issued\": [")) != NULL;) {
        p += strlen("\"issued\": [");
        for (int k = 0; k < 2; k++) {
            char tok[64];
            char *q = strchr(p, '"');

            assert_non_null(q);
            snprintf(tok, sizeof(tok), "%.35s", q + 1);
            assert_int_equal(strlen(tok), 35);
            if (T.seen != NULL && strstr(T.seen, tok) != NULL)
                fail_msg("the agent received the real token %s", tok);
            issued++;
            p = strchr(q + 1, '"') + 1;
        }
    }
    assert_true(issued >= min);
    assert_null(T.seen != NULL ? strstr(T.seen, ATTACK_TOKEN) : NULL);
    assert_null(T.seen != NULL ? strstr(T.seen, SECRET) : NULL);
    free(log);
}

/* The server's log has a line holding both needles. */
static int up_line_has(const char *a, const char *b)
{
    char *log = sworn_test_read_file(T.up_log, NULL);
    int found = 0;

    for (char *line = strtok(log, "\n"); line != NULL && !found; line = strtok(NULL, "\n"))
        found = strstr(line, a) != NULL && (b == NULL || strstr(line, b) != NULL);
    free(log);
    return found;
}

/* ---- the grants ---- */

/* client_secret_post, JSON answers: mint, use, refresh, use again. */
static void test_client_credentials_and_refresh(void **state)
{
    char out[16384], at[128], rt[128], at2[128], rt2[128], auth[256], body[512];

    (void)state;
    assert_int_equal(post("/token/json", NULL,
                          "grant_type=client_credentials&client_id=app&client_secret=" SYM, out,
                          sizeof(out)),
                     200);
    json_member(out, "access_token", at, sizeof(at));
    json_member(out, "refresh_token", rt, sizeof(rt));
    assert_true(is_symbolic(at));
    assert_true(is_symbolic(rt));
    assert_string_not_equal(at, rt);
    assert_non_null(strstr(body_of(out), "\"expires_in\": 3600")); /* the rest is kept */
    /* The server got the real secret in the form body, never the symbolic one. */
    assert_true(up_line_has("client_secret=" SECRET_FORM, "client_credentials"));
    assert_false(up_line_has("client_secret=" SYM, NULL));

    /* The API call with the symbolic access token reaches the server with the real one. */
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", at);
    assert_int_equal(get("/api/items", auth, out, sizeof(out)), 200);
    assert_non_null(strstr(body_of(out), "{\"ok\":true}"));
    assert_true(up_line_has("Bearer AT-", "/api/items"));

    /* The refresh grant with the symbolic refresh token: new symbolic tokens. */
    snprintf(body, sizeof(body), "grant_type=refresh_token&client_id=app&refresh_token=%s", rt);
    assert_int_equal(post("/token/json", NULL, body, out, sizeof(out)), 200);
    json_member(out, "access_token", at2, sizeof(at2));
    json_member(out, "refresh_token", rt2, sizeof(rt2));
    assert_true(is_symbolic(at2) && is_symbolic(rt2));
    assert_string_not_equal(at, at2);
    assert_string_not_equal(rt, rt2);
    assert_true(up_line_has("refresh_token=RT-", "grant_type=refresh_token"));
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", at2);
    assert_int_equal(get("/api/after-refresh", auth, out, sizeof(out)), 200);

    /* The first refresh token was rotated by the server: its OAuth error passes unchanged. */
    assert_int_equal(post("/token/json", NULL, body, out, sizeof(out)), 400);
    assert_string_equal(body_of(out), "{\"error\":\"invalid_grant\",\"error_description\":"
                                      "\"the refresh_token is unknown or used\"}");
    /* The same refresh token written percent-encoded is the same presentation. */
    snprintf(body, sizeof(body), "grant_type=refresh_token&client_id=app&refresh_token=sym%%5F%s",
             rt2 + 4);
    assert_int_equal(post("/token/json", NULL, body, out, sizeof(out)), 200);
    no_real_token_reached_the_agent(3);
}

/* client_secret_basic (the secret in Authorization), form-encoded answers. */
static void test_basic_client_form_answers(void **state)
{
    char out[16384], at[128], rt[128], auth[256];

    (void)state;
    assert_int_equal(post("/btoken/form", "Authorization: " SYM2, "grant_type=client_credentials",
                          out, sizeof(out)),
                     200);
    assert_non_null(strstr(out, "application/x-www-form-urlencoded"));
    form_member(out, "access_token", at, sizeof(at));
    form_member(out, "refresh_token", rt, sizeof(rt));
    assert_true(is_symbolic(at) && is_symbolic(rt));
    assert_true(up_line_has(BASIC, "/btoken/form"));
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", at);
    assert_int_equal(get("/bapi/x", auth, out, sizeof(out)), 200);
    /* A minted token of one family is not released under the other credential's rule. */
    assert_int_equal(get("/api/x", auth, out, sizeof(out)), 403);
    no_real_token_reached_the_agent(1);
}

/* A chunked answer, and member names written with escapes, are swapped like any other. */
static void test_chunked_and_escaped_answers(void **state)
{
    char out[16384], at[128];

    (void)state;
    assert_int_equal(post("/token/chunked", NULL,
                          "grant_type=client_credentials&client_id=app&client_secret=" SYM, out,
                          sizeof(out)),
                     200);
    assert_null(strstr(out, "Transfer-Encoding"));
    assert_non_null(strstr(out, "Content-Length: "));
    json_member(out, "access_token", at, sizeof(at));
    assert_true(is_symbolic(at));
    assert_int_equal(post("/token/escaped", NULL,
                          "grant_type=client_credentials&client_id=app&client_secret=" SYM, out,
                          sizeof(out)),
                     200);
    json_member(out, "access_token", at, sizeof(at));
    assert_true(is_symbolic(at));
    json_member(out, "refresh_token", at, sizeof(at));
    assert_true(is_symbolic(at));
    no_real_token_reached_the_agent(2);
}

/* ---- a dishonest or odd token endpoint: 502, no token ---- */

static void test_answers_refused(void **state)
{
    static const char *const kinds[] = {
        "dup",      "number",       "nested",       "twice",   "header",    "headeronly", "cookie",
        "idtoken",  "dpop",         "text",         "formdup", "large",     "errortoken", "cut",
        "badchunk", "twiceescaped", "formtwiceenc", "reason",  "headername"};
    char out[16384], path[64];

    (void)state;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        snprintf(path, sizeof(path), "/token/%s", kinds[i]);
        if (post(path, NULL, "grant_type=client_credentials&client_id=app&client_secret=" SYM, out,
                 sizeof(out)) != 502)
            fail_msg("%s: not refused: %s", kinds[i], out);
        assert_non_null(strstr(body_of(out), "\"effect\":\"error\""));
    }
    no_real_token_reached_the_agent(0);
}

/* An OAuth error answer carries no token: relayed unchanged (even when its description says
 * "refresh_token"). */
static void test_error_answer_relayed(void **state)
{
    char out[16384];

    (void)state;
    assert_int_equal(post("/token/error", NULL,
                          "grant_type=client_credentials&client_id=app&client_secret=" SYM, out,
                          sizeof(out)),
                     400);
    assert_string_equal(body_of(out), "{\"error\":\"invalid_grant\",\"error_description\":"
                                      "\"the refresh_token expired\"}");
}

/* ---- the agent's token requests ---- */

static void test_request_attacks(void **state)
{
    char out[16384];

    (void)state;
    /* The secret's parameter twice: which one would the server take? Refused, recorded. */
    assert_int_equal(post("/token/json", NULL,
                          "grant_type=client_credentials&client_id=app&client_secret=" SYM
                          "&client%5Fsecret=x",
                          out, sizeof(out)),
                     400);
    assert_non_null(strstr(body_of(out), "two parameters of one name"));
    assert_non_null(strstr(body_of(out), "\"log_index\""));
    /* Two different symbolic tokens, one in the head and one in the body. */
    assert_int_equal(post("/token/json", "Authorization: " SYM2,
                          "grant_type=client_credentials&client_id=app&client_secret=" SYM, out,
                          sizeof(out)),
                     400);
    assert_non_null(strstr(body_of(out), "two different symbolic tokens"));
    /* A bad escape in the form body. */
    assert_int_equal(
        post("/token/json", NULL, "grant_type=client%zz&client_secret=" SYM, out, sizeof(out)),
        400);
    /* A form credential with no form body to go into: nothing is sent. */
    assert_int_equal(get("/api/x", "X-Nothing: 1", out, sizeof(out)), 502);
    no_real_token_reached_the_agent(0);
}

static size_t count_of(const char *h, const char *needle)
{
    size_t n = 0;

    for (const char *p = h; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Two token requests pipelined on one connection: each answer swapped, nothing of the first
 * exchange's state leaks into the second. */
static void test_pipelined_token_requests(void **state)
{
    static const char body[] = "grant_type=client_credentials&client_id=app&client_secret=" SYM;
    char req[2048], out[32768];
    int n, one;
    long got;
    const char *p;

    (void)state;
    one = snprintf(req, sizeof(req),
                   "POST http://127.0.0.1:%u/token/json HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                   "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n"
                   "\r\n%s",
                   (unsigned)T.up_port, (unsigned)T.up_port, strlen(body), body);
    /* The second asks the proxy to close after it: the read ends there (the writing side stays
     * open: an agent that goes away is not answered). */
    n = snprintf(req + one, sizeof(req) - (size_t)one,
                 "POST http://127.0.0.1:%u/token/json HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                 "Connection: close\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 "Content-Length: %zu\r\n\r\n%s",
                 (unsigned)T.up_port, (unsigned)T.up_port, strlen(body), body);
    got = sworn_pfx_raw(&T.p, req, (size_t)(one + n), 1, 30000, out, sizeof(out));
    assert_true(got > 0);
    saw(out);
    p = strstr(out, "HTTP/1.1 200");
    assert_non_null(p);
    assert_non_null(strstr(p + 1, "HTTP/1.1 200"));
    assert_int_equal(count_of(out, "\"access_token\": \"sym_"), 2);
    no_real_token_reached_the_agent(2);
}

/* Is the refusal of "replayed-exchange-1" among the newest entries? */
static int replay_refused(void *unused)
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 10);
    int found = 0;

    (void)unused;
    for (size_t i = 0; i < tail->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = tail->tail->entries[i];

        if (e->kind_case == SWORN__V1__ENTRY__KIND_REFUSED &&
            strcmp(e->refused->request_id, "replayed-exchange-1") == 0 &&
            strstr(e->refused->message, "token exchange refused") != NULL)
            found = 1;
    }
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    return found;
}

/* decisiond takes one exchange per allow: a second one naming the same allow is refused and
 * recorded (the proxy never sends one; a peer of the decision socket could). */
static void test_second_exchange_refused(void **state)
{
    char out[16384];
    Sworn__V1__AdminResponse *tail;
    const Sworn__V1__CredentialsMinted *cm = NULL;
    Sworn__V1__TokenExchange ex = SWORN__V1__TOKEN_EXCHANGE__INIT;
    Sworn__V1__TokenValue tv = SWORN__V1__TOKEN_VALUE__INIT, *tvp = &tv;
    Sworn__V1__DecisionReply *r;
    uint8_t *frame, *body;
    size_t frame_len, len;
    int fd, refused = 0;

    (void)state;
    assert_int_equal(post("/token/json", NULL,
                          "grant_type=client_credentials&client_id=app&client_secret=" SYM, out,
                          sizeof(out)),
                     200);
    tail = sworn_stack_tail(&T.s, 20);
    for (size_t i = 0; i < tail->tail->n_entries; i++)
        if (tail->tail->entries[i]->kind_case == SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED)
            cm = tail->tail->entries[i]->credentials_minted;
    assert_non_null(cm);
    assert_string_equal(cm->from_credential_id, "client");
    assert_int_equal(cm->n_minted, 2);
    assert_string_equal(cm->minted[0]->field, "access_token");
    assert_string_equal(cm->minted[1]->field, "refresh_token");
    ex.request_id = "replayed-exchange-1";
    ex.allow_request_id = cm->allow_request_id;
    ex.credential_id = cm->from_credential_id;
    tv.field = "access_token";
    tv.value.data = (uint8_t *)"Bearer AT-made-up";
    tv.value.len = strlen("Bearer AT-made-up");
    ex.tokens = &tvp;
    ex.n_tokens = 1;
    assert_int_equal(sworn_frame_pack_token_exchange(&ex, &frame, &frame_len), 0);
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    fd = sworn_stack_connect(T.s.decision);
    assert_true(fd >= 0);
    assert_int_equal(sworn_stack_exchange(fd, frame, frame_len, 60000, &body, &len), 0);
    close(fd);
    free(frame);
    r = sworn_frame_unpack_reply(body, len);
    free(body);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* A Refused entry is written after the answer (decisiond's refusal quotas): wait for it in
     * the log's folder. */
    {
        char dir[512];

        snprintf(dir, sizeof(dir), "%s", T.s.log_db);
        *strrchr(dir, '/') = '\0';
        refused = sworn_test_wait_dir(dir, replay_refused, NULL, 30000) == 0;
    }
    assert_true(refused);
    no_real_token_reached_the_agent(1);
}

/* Red team rt-A: the minted refresh token inherits the destinations of the client credential,
 * which list the APIs too (for the access token). The agent posted a form body with the symbolic
 * refresh token to an API path: the proxy put the real refresh token into it and sent it to the
 * resource server (which may store it and hand it back later, unmasked, to another request). A
 * refresh token now goes to a configured token endpoint only (RFC 6749 6, 10.4): elsewhere 502. */
static void test_rt16_a_refresh_token_only_to_token_endpoint(void **state)
{
    char out[16384], at[128], rt[128], body[512], hdr[256];
    int rc;

    (void)state;
    assert_int_equal(post("/token/json", NULL,
                          "grant_type=client_credentials&client_id=app&client_secret=" SYM, out,
                          sizeof(out)),
                     200);
    json_member(out, "access_token", at, sizeof(at));
    json_member(out, "refresh_token", rt, sizeof(rt));
    assert_true(is_symbolic(rt));
    /* Outside a token endpoint a form body is not read for tokens: the agent names the minted
     * refresh credential by a header presentation and sends a form body to put it in. */
    snprintf(hdr, sizeof(hdr), "X-Note-Key: %s", rt);
    rc = post("/api/notes", hdr, "note=keep", out, sizeof(out));
    if (up_line_has("/api/notes", "RT-"))
        fail_msg("the real refresh token reached the API (status %d)", rc);
    assert_int_equal(rc, 502);
    assert_non_null(strstr(out, "a refresh token goes to a token endpoint only"));
    /* At the token endpoint it still works. */
    snprintf(body, sizeof(body), "grant_type=refresh_token&client_id=app&refresh_token=%s", rt);
    assert_int_equal(post("/token/json", NULL, body, out, sizeof(out)), 200);
    no_real_token_reached_the_agent(2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_credentials_and_refresh),
        cmocka_unit_test(test_basic_client_form_answers),
        cmocka_unit_test(test_chunked_and_escaped_answers),
        cmocka_unit_test(test_answers_refused),
        cmocka_unit_test(test_error_answer_relayed),
        cmocka_unit_test(test_request_attacks),
        cmocka_unit_test(test_pipelined_token_requests),
        cmocka_unit_test(test_second_exchange_refused),
        cmocka_unit_test(test_rt16_a_refresh_token_only_to_token_endpoint),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
