/*
 * test_proxy_delegation.c -- delegation tokens verified with a JWKS (docs/proxy.md,
 * "Delegation"): tokens and keys made by jose (tests/unit/jose_tokens.mjs, an implementation no
 * one here wrote), read by proxy/p_jwt.c with proxy/p_jwks.c, then the same through a real stack
 * (stack_fixture.h, proxy_fixture.h) with curl as the agent: the record holds the chain's claims
 * and whether, and with which key, it was verified; an invalid token is a recorded deny; a policy
 * matches on verified, scopes and may_act.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "err.h"
#include "p_config.h"
#include "p_jwks.h"
#include "p_jwt.h"
#include "proxy_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"

static struct {
    char *dir;
    char jwks[600], one[600], policy[600];
    struct json_object *tokens;
    struct sworn_jwks *set;
} T;

static int setup(void **state)
{
    char script[1024], out[700];
    struct sworn_test_run r;
    char *text;

    (void)state;
    memset(&T, 0, sizeof(T));
    T.dir = sworn_test_tmpdir("proxy-delegation");
    snprintf(script, sizeof(script), "%s/tests/unit/jose_tokens.mjs", sworn_test_source_dir());
    sworn_test_runv(&r, NULL, "node", script, sworn_test_node_modules(), T.dir, NULL);
    sworn_test_run_must(&r, "jose_tokens.mjs");
    sworn_test_run_free(&r);
    snprintf(T.jwks, sizeof(T.jwks), "%s/jwks.json", T.dir);
    snprintf(T.one, sizeof(T.one), "%s/one.json", T.dir);
    snprintf(out, sizeof(out), "%s/tokens.json", T.dir);
    text = sworn_test_read_file(out, NULL);
    T.tokens = json_tokener_parse(text);
    free(text);
    T.set = sworn_jwks_load(T.jwks);
    if (T.tokens == NULL || T.set == NULL) {
        fprintf(stderr, "setup: %s\n", sworn_err_msg());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_object_put(T.tokens);
    sworn_jwks_free(T.set);
    sworn_test_tmpdir_drop(&T.dir);
    return 0;
}

static const char *token(const char *name)
{
    struct json_object *v;

    assert_true(json_object_object_get_ex(T.tokens, name, &v));
    return json_object_get_string(v);
}

/* Read token name with the JWKS set (or NULL: nothing); returns 0/1 and why. */
static int read_tok(const char *name, const struct sworn_jwks *set, struct sworn_jwt_delegation *d,
                    const char **why)
{
    struct sworn_jwt_verifier v = {NULL, NULL, set};
    const char *t = token(name);

    *why = NULL;
    return sworn_jwt_read_with(t, strlen(t), &v, time(NULL), d, why);
}

/* ---- the reader with jose's tokens ---- */

static void test_each_key_type_verifies(void **state)
{
    static const struct {
        const char *name, *kid, *alg;
    } cases[] = {{"ec", "ec-1", "ES256"}, {"rsa", "rsa-1", "RS256"}, {"ed", "ed-1", "EdDSA"}};
    struct sworn_jwt_delegation d;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (read_tok(cases[i].name, T.set, &d, &why) != 0)
            fail_msg("%s: %s", cases[i].name, why != NULL ? why : sworn_err_msg());
        assert_int_equal(d.verified, 1);
        assert_string_equal(d.key_id, cases[i].kid);
        assert_string_equal(d.alg, cases[i].alg);
        assert_string_equal(d.subject, "alice@example.com");
        assert_string_equal(d.issuer, "https://idp.example");
        assert_int_equal(d.nactors, 2);
        assert_string_equal(d.actors[0].subject, "agent-svc");
        assert_string_equal(d.actors[1].subject, "planner");
        assert_int_equal(d.may_act, SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED);
        assert_string_equal(d.client_id, "agent-client");
        assert_string_equal(d.jti, "tok-0001");
        assert_int_equal(d.naudience, 2);
        assert_string_equal(d.audience[1], "https://other.example");
        assert_int_equal(d.nscopes, 2);
        assert_string_equal(d.scopes[0], "repo:read");
        assert_string_equal(d.scopes[1], "issues:write");
        assert_true(d.expires_unix > (uint64_t)time(NULL));
    }
    /* Without a key: the same chain, not verified. */
    assert_int_equal(read_tok("ec", NULL, &d, &why), 0);
    assert_int_equal(d.verified, 0);
    assert_string_equal(d.key_id, "");
    assert_string_equal(d.client_id, "agent-client");
}

static void test_may_act_and_audience(void **state)
{
    struct sworn_jwt_delegation d;
    const char *why;

    (void)state;
    assert_int_equal(read_tok("may_act_other", T.set, &d, &why), 0);
    assert_int_equal(d.may_act, SWORN__V1__MAY_ACT__RESULT__RESULT_DENIED);
    assert_int_equal(read_tok("one_aud", T.set, &d, &why), 0);
    assert_int_equal(d.may_act, SWORN__V1__MAY_ACT__RESULT__RESULT_NOT_PRESENT);
    assert_int_equal(d.naudience, 1);
    assert_string_equal(d.audience[0], "https://api.example");
    assert_int_equal(d.nscopes, 1);
}

static void test_refused_tokens(void **state)
{
    static const struct {
        const char *name, *why;
    } cases[] = {
        {"expired", "the token has expired (exp, 60 s leeway)"},
        {"wrong_kid", "the token's alg does not match its JWK"},
        {"unknown_kid", "the token's kid names no key of the JWKS"},
        {"enc_key", "the JWK the token names is not for verification (use, key_ops)"},
        {"ops_key", "the JWK the token names is not for verification (use, key_ops)"},
        {"hs256_pem", "the token's alg does not match its JWK"},
        {"none", "alg none is refused when a verification key is configured"},
        {"tampered", "the token's signature does not verify with the configured key"},
        {"ed_nokid", "the token has no kid and the JWKS has more than one key"},
    };
    struct sworn_jwt_delegation d;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (read_tok(cases[i].name, T.set, &d, &why) != 1)
            fail_msg("%s: not refused", cases[i].name);
        if (strcmp(why, cases[i].why) != 0)
            fail_msg("%s: %s", cases[i].name, why);
        assert_int_equal(d.verified, 0);
    }
}

/* A set of one key without kid verifies a token without kid, and only that key's. */
static void test_single_key_without_kid(void **state)
{
    struct sworn_jwks *one = sworn_jwks_load(T.one);
    struct sworn_jwt_delegation d;
    const char *why;

    (void)state;
    assert_non_null(one);
    assert_int_equal(read_tok("ed_nokid", one, &d, &why), 0);
    assert_int_equal(d.verified, 1);
    assert_string_equal(d.key_id, "");
    assert_int_equal(read_tok("ec", one, &d, &why), 1);
    assert_string_equal(why, "the token's kid names no key of the JWKS");
    sworn_jwks_free(one);
}

/* ---- the JWKS reader's refusals ---- */

static void jwks_refused(const char *text, const char *needle)
{
    struct sworn_jwks *s = sworn_jwks_parse("t", (const uint8_t *)text, strlen(text));

    if (s != NULL)
        fail_msg("accepted: %s", text);
    if (strstr(sworn_err_msg(), needle) == NULL)
        fail_msg("%s: %s (wanted %s)", text, sworn_err_msg(), needle);
}

static void test_jwks_refusals(void **state)
{
    /* A valid Ed25519 x (32 bytes) to build on. */
    static const char x[] = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
    char text[1024];

    (void)state;
    jwks_refused("{\"keys\":[]}", "an array of 1..64 keys");
    jwks_refused("[1]", "an array of 1..64 keys");
    jwks_refused("{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}]}", "private or secret");
    snprintf(text, sizeof(text),
             "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\","
             "\"d\":\"%s\"}]}",
             x, x);
    jwks_refused(text, "private or secret");
    jwks_refused("{\"keys\":[{\"kty\":\"XYZ\"}]}", "kty must be EC, RSA or OKP");
    snprintf(text, sizeof(text), "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed448\",\"x\":\"%s\"}]}",
             x);
    jwks_refused(text, "is not an EC P-256");
    snprintf(text, sizeof(text),
             "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"alg\":\"ES256\"}]}",
             x);
    jwks_refused(text, "alg does not fit the key");
    snprintf(text, sizeof(text),
             "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"alg\":\"HS256\"}]}",
             x);
    jwks_refused(text, "alg does not fit the key");
    snprintf(text, sizeof(text),
             "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"kid\":\"a\"},"
             "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"kid\":\"a\"}]}",
             x, x);
    jwks_refused(text, "has the kid of keys[0]");
    /* Two members of one name: which x would be the key? */
    snprintf(text, sizeof(text),
             "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"x\":\"%s\"}]}", x, x);
    jwks_refused(text, "two members of one name");
    /* A point not on the curve. */
    jwks_refused("{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\","
                 "\"x\":\"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\","
                 "\"y\":\"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}]}",
                 "is not an EC P-256");
    /* Padding in base64url. */
    snprintf(text, sizeof(text), "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s=\"}]}",
             x);
    jwks_refused(text, "is not an EC P-256");
    /* A short RSA modulus. */
    jwks_refused("{\"keys\":[{\"kty\":\"RSA\",\"n\":\"AQAB\",\"e\":\"AQAB\"}]}",
                 "is not an EC P-256");
}

/* ---- the configuration keys (delegation.jwks, oauth) ---- */

#define MIN                                                                                        \
    "listen: [{unix: /run/a.sock, principal: p}]\ndecisiond: {socket: /run/d.sock}\n"              \
    "ca: {cert: /etc/c.crt, key: /etc/c.key}\n"

static void conf_fails(const char *text, const char *sub)
{
    struct sworn_pconf *c = calloc(1, sizeof(*c));

    assert_non_null(c);
    if (sworn_pconf_load_mem("p.yaml", (const uint8_t *)text, strlen(text), c) == 0)
        fail_msg("accepted: %s", text);
    if (strstr(sworn_err_msg(), sub) == NULL)
        fail_msg("%s: %s (wanted %s)", text, sworn_err_msg(), sub);
    free(c);
}

static void test_config_keys(void **state)
{
    static const char ok[] = MIN "delegation: {header: X-Deleg, jwks: /etc/sworn/jwks.json}\n"
                                 "oauth:\n  token_endpoints: [\"https://idp.example/oauth/token\", "
                                 "\"http://127.0.0.1:8080/t\"]\n  response_max: 2048\n";
    struct sworn_pconf *c = calloc(1, sizeof(*c));

    (void)state;
    assert_non_null(c);
    assert_int_equal(sworn_pconf_load_mem("p.yaml", (const uint8_t *)ok, strlen(ok), c), 0);
    assert_string_equal(c->delegation_jwks, "/etc/sworn/jwks.json");
    assert_int_equal(c->oauth.n, 2);
    assert_int_equal(c->oauth.response_max, 2048);
    assert_string_equal(c->oauth.endpoints[0].path, "/oauth/token");
    free(c);
    conf_fails(MIN "delegation: {jwks: /etc/j.json}\n", "delegation.jwks needs delegation.header");
    conf_fails(MIN "delegation: {header: x, jwks: /etc/j.json, verify_key: /etc/k.pem}\n",
               "name one of them");
    conf_fails(MIN "oauth: {}\n", "oauth.token_endpoints");
    conf_fails(MIN "oauth: {token_endpoints: []}\n", "a list of 1..16 URLs");
    conf_fails(MIN "oauth: {token_endpoints: [\"ftp://x/\"]}\n", "oauth.token_endpoints: ");
    conf_fails(MIN "oauth: {token_endpoints: [\"https://a/t\", \"https://A/t\"]}\n", "repeats");
    conf_fails(MIN "oauth: {token_endpoints: [\"https://a/t\"], response_max: 10}\n",
               "response_max");
    conf_fails(MIN "oauth: {token_endpoints: [\"https://a/t\"], extra: 1}\n", "extra");
}

/* ---- through the stack ---- */

static const char policy_text[] =
    "version: 1\n"
    "rules:\n"
    "  - id: delegated\n    effect: allow\n    reason: \"verified delegation\"\n"
    "    operations: [\"http.request\"]\n"
    "    resource:\n      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
    "      paths: [\"/v/**\"]\n"
    "    delegation:\n      verified: true\n      may_act: allowed\n"
    "      require_scopes: [\"repo:read\"]\n";

/* The request of the newest decision entry on path (the tail holds it), or fail. */
static Sworn__V1__AdminResponse *newest_on(struct sworn_stack *s, const char *path,
                                           const Sworn__V1__AuthorizationRequest **q,
                                           Sworn__V1__Effect *effect)
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(s, 10);

    *q = NULL;
    for (size_t i = 0; i < tail->tail->n_entries; i++) {
        const Sworn__V1__AuthorizationRequest *r =
            sworn_stack_decision_on(tail->tail->entries[i], path);

        if (r != NULL) {
            *q = r;
            *effect = tail->tail->entries[i]->decision->effect;
        }
    }
    assert_non_null(*q);
    return tail;
}

static int agent(struct sworn_pfx *p, const char *path, const char *tok, char *out, size_t cap)
{
    char url[128], header[10000];
    int code = 0;

    snprintf(url, sizeof(url), "http://127.0.0.1:9%s", path);
    snprintf(header, sizeof(header), "X-Delegation: %s", tok);
    assert_int_equal(sworn_pfx_curl(p, out, cap, &code, "-s", "-H", header, url, NULL), 0);
    return code;
}

static void test_through_the_stack(void **state)
{
    struct sworn_stack s;
    struct sworn_pfx p, plain;
    struct sworn_pfx_opts po = {0}, plain_opts = {0};
    char opts[1400], extra[1400], out[4096];
    const Sworn__V1__AuthorizationRequest *q;
    Sworn__V1__AdminResponse *tail;
    Sworn__V1__Effect effect;

    (void)state;
    memset(&s, 0, sizeof(s));
    memset(&p, 0, sizeof(p));
    memset(&plain, 0, sizeof(plain));
    snprintf(T.policy, sizeof(T.policy), "%s/policy.yaml", T.dir);
    sworn_test_write_file(T.policy, policy_text, strlen(policy_text), 0600);
    snprintf(opts, sizeof(opts), "--no-proxy --no-tpm --policy %s", T.policy);
    assert_int_equal(sworn_stack_up(&s, opts), 0);
    snprintf(extra, sizeof(extra), "delegation:\n  header: x-delegation\n  jwks: %s\n", T.jwks);
    po.extra = extra;
    assert_int_equal(sworn_pfx_start(&p, s.decision, &po), 0);

    /* A verified chain: allowed (the upstream is not there: 502 after the allow); the record
     * holds the claims and the key that verified them. */
    assert_int_equal(agent(&p, "/v/ec", token("ec"), out, sizeof(out)), 502);
    tail = newest_on(&s, "/v/ec", &q, &effect);
    assert_int_equal(effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_non_null(q->delegation);
    assert_string_equal(q->delegation->subject, "alice@example.com");
    assert_int_equal(q->delegation->n_actors, 2);
    assert_string_equal(q->delegation->actors[0]->subject, "agent-svc");
    assert_non_null(q->delegation->verification);
    assert_int_equal(q->delegation->verification->result,
                     SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED);
    assert_string_equal(q->delegation->verification->key_id, "ec-1");
    assert_string_equal(q->delegation->verification->alg, "ES256");
    assert_string_equal(q->delegation->client_id, "agent-client");
    assert_string_equal(q->delegation->jti, "tok-0001");
    assert_int_equal(q->delegation->n_scopes, 2);
    assert_int_equal(q->delegation->n_audience, 2);
    assert_true(q->delegation->expires_unix > 0);
    assert_int_equal(q->delegation->may_act->result, SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED);
    sworn__v1__admin_response__free_unpacked(tail, NULL);

    /* may_act names someone else: the rule does not match, default deny. */
    assert_int_equal(agent(&p, "/v/other", token("may_act_other"), out, sizeof(out)), 403);
    /* A tampered token: refused by the proxy, recorded as a deny. */
    assert_int_equal(agent(&p, "/v/tampered", token("tampered"), out, sizeof(out)), 400);
    assert_non_null(strstr(out, "the token's signature does not verify"));
    tail = newest_on(&s, "/v/tampered", &q, &effect);
    assert_int_equal(effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_non_null(q->refusal);
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    assert_int_equal(agent(&p, "/v/expired", token("expired"), out, sizeof(out)), 400);
    assert_int_equal(agent(&p, "/v/none", token("none"), out, sizeof(out)), 400);
    assert_int_equal(agent(&p, "/v/hs", token("hs256_pem"), out, sizeof(out)), 400);

    /* Without a JWKS: the chain is read and recorded as not verified; verified: true fails. */
    plain_opts.extra = "delegation:\n  header: x-delegation\n";
    assert_int_equal(sworn_pfx_start(&plain, s.decision, &plain_opts), 0);
    assert_int_equal(agent(&plain, "/v/plain", token("ec"), out, sizeof(out)), 403);
    tail = newest_on(&s, "/v/plain", &q, &effect);
    assert_int_equal(effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_int_equal(q->delegation->verification->result,
                     SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_NOT_VERIFIED);
    assert_string_equal(q->delegation->verification->key_id, "");
    assert_string_equal(q->delegation->subject, "alice@example.com");
    sworn__v1__admin_response__free_unpacked(tail, NULL);

    assert_int_equal(sworn_pfx_stop(&plain), 0);
    assert_int_equal(sworn_pfx_stop_with_stack(&p, &s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_key_type_verifies),
        cmocka_unit_test(test_may_act_and_audience),
        cmocka_unit_test(test_refused_tokens),
        cmocka_unit_test(test_single_key_without_kid),
        cmocka_unit_test(test_jwks_refusals),
        cmocka_unit_test(test_config_keys),
        cmocka_unit_test(test_through_the_stack),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
