/*
 * test_policy.c -- unit tests of the policy engine (policy/policy.c, policy_match.c,
 * budget.c) and of the request JSON form (policy_reqjson.c).
 *
 * Every policy is a real file written to a temporary folder and loaded with
 * sworn_policy_load_file; requests are written as JSON and read with sworn_reqjson_parse, so
 * the tests go through the same path as `sworn-policy eval`. Covered: each matcher positive and
 * negative, host wildcard edges, path globs (hostile ones included), path normalisation,
 * deny-overrides and escalate combining, time windows at their edges, count and sum budgets
 * across windows and scopes, exact decimals and overflow, refund, replay, the counter cap,
 * atomic check-and-charge under threads, delegation conditions, every load-time refusal with its
 * line:col, reload semantics, and the JSON form's round trip and refusals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <openssl/sha.h>

#include "err.h"
#include "frame.h"
#include "lint.h"
#include "policy.h"
#include "policy_fixture.h"
#include "reqjson.h"
#include "resource.h"
#include "testutil.h"

/* 2026-03-02 is a Monday; T0 is that day at 00:00:00Z, in Unix milliseconds. */
#define T0 1772409600000ull
#define MIN 60000ull
#define HOUR 3600000ull
#define DAY 86400000ull

static int group_setup(void **state)
{
    (void)state;
    sworn_pfix_mkdir("policy");
    return 0;
}

/* The policy must be refused with a message containing "policy.yaml:<want>". */
static void refused(const char *text, const char *want)
{
    char *path = sworn_pfix_put("policy.yaml", text);
    struct sworn_policy *p = (struct sworn_policy *)&p; /* a sentinel: must stay untouched */
    char expect[300];

    if (sworn_policy_load_file(path, &p) == 0)
        fail_msg("policy accepted, expected \"%s\":\n%s", want, text);
    assert_ptr_equal(p, (struct sworn_policy *)&p);
    snprintf(expect, sizeof(expect), "policy.yaml:%s", want);
    if (strstr(sworn_err_msg(), expect) == NULL)
        fail_msg("error \"%s\" lacks \"%s\"", sworn_err_msg(), expect);
    free(path);
}

/* A request from JSON text built like printf. */
static Sworn__V1__AuthorizationRequest *rq(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static Sworn__V1__AuthorizationRequest *rq(const char *fmt, ...)
{
    char buf[8192];
    Sworn__V1__AuthorizationRequest *r = NULL;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (sworn_reqjson_parse(buf, strlen(buf), &r) != 0)
        fail_msg("request refused: %s\n%s", sworn_err_msg(), buf);
    return r;
}

/* An http.request with the given parts; extra is appended inside the top object. */
static Sworn__V1__AuthorizationRequest *http(const char *principal, const char *scheme,
                                             const char *host, unsigned port, const char *path,
                                             const char *method, const char *extra)
{
    return rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"%s\"},\"operation\":\"http.request\","
              "\"resource\":{\"scheme\":\"%s\",\"host\":\"%s\",\"port\":%u,\"path\":\"%s\"},"
              "\"context\":{\"method\":\"%s\"}%s}",
              principal, scheme, host, port, path, method, extra);
}

static void rfree(Sworn__V1__AuthorizationRequest *r)
{
    sworn__v1__authorization_request__free_unpacked(r, NULL);
}

/* Evaluate and return the result (the call must succeed). */
static struct sworn_policy_result ev(const struct sworn_policy *p, struct sworn_budgets *b,
                                     Sworn__V1__AuthorizationRequest *r, uint64_t now)
{
    struct sworn_policy_result res;

    if (sworn_policy_eval(p, b, r, now, &res) != 0)
        fail_msg("eval failed: %s", sworn_err_msg());
    assert_true(res.reason[0] != '\0');
    assert_true(res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW ||
                res.effect == SWORN__V1__EFFECT__EFFECT_DENY ||
                res.effect == SWORN__V1__EFFECT__EFFECT_ESCALATE);
    return res;
}

/* Evaluate a request, free it, and check effect and rule id. */
static void expect(const struct sworn_policy *p, struct sworn_budgets *b,
                   Sworn__V1__AuthorizationRequest *r, uint64_t now, Sworn__V1__Effect effect,
                   const char *rule)
{
    struct sworn_policy_result res = ev(p, b, r, now);

    if (res.effect != effect || strcmp(res.rule_id, rule) != 0)
        fail_msg("got %s/%s (%s), expected %s/%s", sworn_frame_effect_name(res.effect), res.rule_id,
                 res.reason, sworn_frame_effect_name(effect), rule);
    rfree(r);
}

#define ALLOW SWORN__V1__EFFECT__EFFECT_ALLOW
#define DENY SWORN__V1__EFFECT__EFFECT_DENY
#define ESCALATE SWORN__V1__EFFECT__EFFECT_ESCALATE

/* Whether a policy allowing only resource key (hosts or paths) [pattern] allows GET host path. */
static int resource_allowed(const char *key, const char *pattern, const char *host,
                            const char *path)
{
    char text[2048];
    struct sworn_policy *p;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;

    snprintf(text, sizeof(text),
             "rules:\n  - id: r\n    effect: allow\n    resource:\n"
             "      %s: [\"%s\"]\n",
             key, pattern);
    p = sworn_pfix_load(text);
    r = http("a", "https", host, 443, path, "GET", "");
    res = ev(p, NULL, r, T0);
    rfree(r);
    sworn_policy_free(p);
    return res.effect == ALLOW;
}

/* Allow only when the host matches one pattern. */
static int host_allowed(const char *pattern, const char *host)
{
    return resource_allowed("hosts", pattern, host, "/");
}

/* Allow only when the path matches one pattern. */
static int path_allowed(const char *pattern, const char *path)
{
    return resource_allowed("paths", pattern, "h.example", path);
}

static void test_sample_policy(void **state)
{
    /* The sample the demo and the dev stack use. */
    char path[1024];
    struct sworn_policy *p = NULL;
    struct sworn_budgets *b;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    snprintf(path, sizeof(path), "%s/policy/examples/policy.yaml", sworn_test_source_dir());
    if (sworn_policy_load_file(path, &p) != 0)
        fail_msg("%s", sworn_err_msg());
    assert_int_equal(sworn_policy_rule_count(p), 5);
    assert_int_equal(sworn_policy_max_window_ms(p), MIN);
    assert_int_equal(sworn_budgets_new(&b), 0);
    expect(p, b, http("a", "http", "127.0.0.1", 8080, "/allowed/x?y=1", "GET", ""), T0, ALLOW,
           "demo-allowed");
    expect(p, b, http("a", "http", "localhost", 8080, "/allowed/x", "POST", ""), T0, DENY, "");
    expect(p, b, http("a", "http", "localhost", 8080, "/denied/x", "GET", ""), T0, DENY,
           "demo-denied");
    r = http("a", "http", "127.0.0.1", 8080, "/escalate/x", "GET", "");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, ESCALATE);
    assert_int_equal(res.escalation_timeout_ms, 2 * MIN);
    rfree(r);
    r = http("a", "http", "127.0.0.1", 8080, "/with-credential/x", "GET", "");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, ALLOW);
    assert_string_equal(res.credential_id, "demo");
    rfree(r);
    for (int i = 0; i < 3; i++)
        expect(p, b, http("a", "http", "127.0.0.1", 8080, "/budget/x", "GET", ""), T0 + 59999,
               ALLOW, "demo-budget");
    expect(p, b, http("a", "http", "127.0.0.1", 8080, "/budget/x", "GET", ""), T0 + 59999, DENY,
           "demo-budget");
    expect(p, b, http("a", "http", "127.0.0.1", 8080, "/budget/x", "GET", ""), T0 + MIN, ALLOW,
           "demo-budget");
    expect(p, b, http("a", "https", "127.0.0.1", 443, "/other", "GET", ""), T0, DENY, "");
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

static void test_principal_operation(void **state)
{
    struct sworn_policy *p;

    (void)state;
    p = sworn_pfix_load("version: 7\n"
                        "rules:\n"
                        "  - id: agents\n"
                        "    effect: allow\n"
                        "    principals: [\"agent-*\", \"bot-?\"]\n"
                        "    operations: [\"http.*\", \"mcp.tools/call\"]\n");
    assert_int_equal(sworn_policy_version(p), 7);
    assert_int_equal(sworn_policy_max_window_ms(p), 0);
    expect(p, NULL, http("agent-1", "https", "x.example", 443, "/", "GET", ""), T0, ALLOW,
           "agents");
    expect(p, NULL, http("agent-", "https", "x.example", 443, "/", "GET", ""), T0, ALLOW, "agents");
    expect(p, NULL, http("bot-1", "https", "x.example", 443, "/", "GET", ""), T0, ALLOW, "agents");
    expect(p, NULL, http("bot-12", "https", "x.example", 443, "/", "GET", ""), T0, DENY, "");
    expect(p, NULL, http("Agent-1", "https", "x.example", 443, "/", "GET", ""), T0, DENY, "");
    expect(p, NULL, http("xagent-1", "https", "x.example", 443, "/", "GET", ""), T0, DENY, "");
    expect(p, NULL,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"agent-1\"},\"operation\":\"ws."
              "upgrade\",\"resource\":{\"scheme\":\"wss\",\"host\":\"x\",\"port\":443}}"),
           T0, DENY, "");
    expect(p, NULL,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"agent-1\"},\"operation\":\"mcp."
              "tools/call\",\"resource\":{\"scheme\":\"https\",\"host\":\"x\",\"port\":443,"
              "\"tool\":\"t\"}}"),
           T0, ALLOW, "agents");
    sworn_policy_free(p);
}

static void test_scheme_port_method_tool(void **state)
{
    struct sworn_policy *p;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: web\n"
                        "    effect: allow\n"
                        "    resource:\n"
                        "      schemes: [HTTPS, wss]\n"
                        "      ports: [443, 8443]\n"
                        "    methods: [GET, HEAD]\n"
                        "  - id: tools\n"
                        "    effect: allow\n"
                        "    operations: [\"mcp.tools/call\"]\n"
                        "    resource:\n"
                        "      tools: [\"search_*\", \"read\"]\n");
    expect(p, NULL, http("a", "https", "x", 443, "/", "GET", ""), T0, ALLOW, "web");
    expect(p, NULL, http("a", "HTTPS", "x", 8443, "/", "HEAD", ""), T0, ALLOW, "web");
    expect(p, NULL, http("a", "http", "x", 443, "/", "GET", ""), T0, DENY, "");
    expect(p, NULL, http("a", "https", "x", 80, "/", "GET", ""), T0, DENY, "");
    expect(p, NULL, http("a", "https", "x", 443, "/", "POST", ""), T0, DENY, "");
    expect(p, NULL, http("a", "https", "x", 443, "/", "get", ""), T0, DENY, "");
    /* No context: no method, so a methods list does not match. */
    expect(p, NULL,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"ws.upgrade\","
              "\"resource\":{\"scheme\":\"wss\",\"host\":\"x\",\"port\":443}}"),
           T0, DENY, "");
    expect(p, NULL,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"mcp.tools/"
              "call\",\"resource\":{\"scheme\":\"http\",\"host\":\"x\",\"port\":80,"
              "\"tool\":\"search_code\"}}"),
           T0, ALLOW, "tools");
    expect(p, NULL,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"mcp.tools/"
              "call\",\"resource\":{\"scheme\":\"http\",\"host\":\"x\",\"port\":80,"
              "\"tool\":\"reader\"}}"),
           T0, DENY, "");
    /* An empty tool never matches a tools list, not even "*". */
    expect(p, NULL,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"mcp.tools/"
              "call\",\"resource\":{\"scheme\":\"http\",\"host\":\"x\",\"port\":80}}"),
           T0, DENY, "");
    sworn_policy_free(p);
}

static void test_hosts(void **state)
{
    (void)state;
    assert_true(host_allowed("api.github.com", "api.github.com"));
    assert_true(host_allowed("API.GitHub.com", "api.github.com"));
    assert_true(host_allowed("api.github.com", "API.GITHUB.COM"));
    assert_true(host_allowed("api.github.com", "api.github.com."));
    assert_true(host_allowed("api.github.com.", "api.github.com"));
    assert_false(host_allowed("api.github.com", "github.com"));
    assert_false(host_allowed("api.github.com", "xapi.github.com"));
    assert_false(host_allowed("api.github.com", "api.github.com.evil"));
    /* "*" is exactly one label: not the bare parent, not two labels. */
    assert_true(host_allowed("*.githubusercontent.com", "raw.githubusercontent.com"));
    assert_false(host_allowed("*.githubusercontent.com", "githubusercontent.com"));
    assert_false(host_allowed("*.githubusercontent.com", "a.b.githubusercontent.com"));
    assert_false(host_allowed("*.githubusercontent.com", ".githubusercontent.com"));
    assert_false(host_allowed("*.githubusercontent.com", "evilgithubusercontent.com"));
    assert_true(host_allowed("api.*.example.com", "api.eu.example.com"));
    assert_false(host_allowed("api.*.example.com", "api.example.com"));
    assert_true(host_allowed("*", "localhost"));
    assert_false(host_allowed("*", "a.b"));
    /* "**." is one or more labels, never none. */
    assert_true(host_allowed("**.example.com", "a.example.com"));
    assert_true(host_allowed("**.example.com", "a.b.c.example.com"));
    assert_false(host_allowed("**.example.com", "example.com"));
    assert_false(host_allowed("**.example.com", "a..example.com"));
    assert_false(host_allowed("**.example.com", "badexample.com"));
    /* IP literals match exactly (as addresses), and wildcards never match them. */
    assert_true(host_allowed("127.0.0.1", "127.0.0.1"));
    assert_false(host_allowed("127.0.0.1", "127.0.0.2"));
    assert_false(host_allowed("*.0.0.1", "127.0.0.1"));
    assert_false(host_allowed("**.1", "127.0.0.1"));
    assert_true(host_allowed("::1", "::1"));
    assert_true(host_allowed("[::1]", "0:0:0:0:0:0:0:1"));
    assert_true(host_allowed("2001:DB8::1", "[2001:db8::1]"));
    assert_false(host_allowed("::1", "::2"));
    assert_false(host_allowed("127.0.0.1", "localhost"));
    /* Internationalised names are compared as A-labels; a U-label host never matches. */
    assert_true(host_allowed("xn--bcher-kva.example", "XN--BCHER-KVA.example"));
    assert_false(host_allowed("xn--bcher-kva.example", "b\u00fccher.example"));
    assert_false(host_allowed("*.example", "b\u00fccher.example"));
}

static void test_paths(void **state)
{
    char pat[600], path[4200];

    (void)state;
    assert_true(path_allowed("/repos/**", "/repos/a/b/c"));
    assert_true(path_allowed("/repos/**", "/repos/"));
    assert_false(path_allowed("/repos/**", "/repos"));
    assert_false(path_allowed("/repos/**", "/reposx/a"));
    assert_true(path_allowed("/repos/*/issues", "/repos/x/issues"));
    assert_false(path_allowed("/repos/*/issues", "/repos/x/y/issues"));
    /* An empty segment is refused (canonical form, resource.h): servers disagree on "//". */
    assert_false(path_allowed("/repos/*/issues", "/repos//issues"));
    assert_true(path_allowed("/a/**/z", "/a/b/c/z"));
    assert_false(path_allowed("/a/**/z", "/a//z"));
    assert_false(path_allowed("/a/**/z", "/a/z"));
    assert_true(path_allowed("/v?/x", "/v1/x"));
    assert_false(path_allowed("/v?/x", "/v/x"));
    assert_false(path_allowed("/v?/x", "/v//x"));
    assert_true(path_allowed("/exact", "/exact"));
    assert_false(path_allowed("/exact", "/exact/"));
    assert_false(path_allowed("/Exact", "/exact"));
    /* The query is not matched: it is cut at the first '?'. */
    assert_true(path_allowed("/exact", "/exact?a=b/c"));
    assert_false(path_allowed("/exact?a=b", "/exact?a=b"));
    assert_true(path_allowed("/**", "/"));
    /* An empty path is "/" in the canonical form (RFC 9110 4.2.3). */
    assert_true(path_allowed("/**", ""));
    assert_false(path_allowed("/x/**", ""));
    /* Hostile patterns: no backtracking, a long text with no match returns at once. */
    snprintf(pat, sizeof(pat), "/%s", "**a**a**a**a**a**a**a**a**a**a**a**a**a**a**a**b");
    path[0] = '/';
    for (size_t i = 1; i < 4100; i++)
        path[i] = i % 50 == 0 ? '/' : 'a';
    path[4100] = '\0';
    assert_false(path_allowed(pat, path));
    path[4099] = 'b';
    assert_true(path_allowed(pat, path));
    snprintf(pat, sizeof(pat), "/%s", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b");
    memset(path + 1, 'a', 4000);
    path[4001] = '\0';
    assert_false(path_allowed(pat, path));
}

static void test_path_normalisation(void **state)
{
    struct sworn_policy *p;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;
    static const char *const refused[] = {"/allowed/%2fx",   "/allowed/a%5Cb",
                                          "/allowed/a\\\\b", "/allowed/%252e%252e/x",
                                          "/allowed//x",     "/allowed/%c0%ae%c0%ae/x"};

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: allowed\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/allowed/**\"]}\n"
                        "  - id: denied\n"
                        "    effect: deny\n"
                        "    resource: {paths: [\"/denied/**\"]}\n");
    /* Dot segments (also written %2e) are removed before matching (RFC 3986 5.2.4): a path is
     * judged where it leads, so "/allowed/../denied/x" is "/denied/x". */
    expect(p, NULL, http("a", "https", "x", 443, "/allowed/../denied/x", "GET", ""), T0, DENY,
           "denied");
    expect(p, NULL, http("a", "https", "x", 443, "/allowed/%2e%2E/denied/x", "GET", ""), T0, DENY,
           "denied");
    expect(p, NULL, http("a", "https", "x", 443, "/allowed/./x", "GET", ""), T0, ALLOW, "allowed");
    expect(p, NULL, http("a", "https", "x", 443, "/allowed/%2E", "GET", ""), T0, ALLOW, "allowed");
    expect(p, NULL, http("a", "https", "x", 443, "/x/../allowed/y", "GET", ""), T0, ALLOW,
           "allowed");
    expect(p, NULL, http("a", "https", "x", 443, "/allowed/..", "GET", ""), T0, DENY, "");
    expect(p, NULL, http("a", "https", "x", 443, "/allowed/.%2e", "GET", ""), T0, DENY, "");
    expect(p, NULL, http("a", "https", "x", 443, "/allowed/..?x", "GET", ""), T0, DENY, "");
    /* What stays ambiguous is refused: denied before any rule, the reason says why. */
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        r = http("a", "https", "x", 443, refused[i], "GET", "");
        res = ev(p, NULL, r, T0);
        assert_int_equal(res.effect, DENY);
        assert_string_equal(res.rule_id, "");
        assert_non_null(strstr(res.reason, "the resource is refused: "));
        rfree(r);
    }
    sworn_policy_free(p);
    p = sworn_pfix_load("rules:\n"
                        "  - id: all\n"
                        "    effect: allow\n");
    /* Dots inside a segment, and a dot-segment only in the query, are fine. */
    expect(p, NULL, http("a", "https", "x", 443, "/a/...x/.b/c..", "GET", ""), T0, ALLOW, "all");
    expect(p, NULL, http("a", "https", "x", 443, "/a/...", "GET", ""), T0, ALLOW, "all");
    expect(p, NULL, http("a", "https", "x", 443, "/a?p=/../x", "GET", ""), T0, ALLOW, "all");
    sworn_policy_free(p);
}

static void test_combining(void **state)
{
    struct sworn_policy *p;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: allow-all\n"
                        "    effect: allow\n"
                        "  - id: allow-second\n"
                        "    effect: allow\n"
                        "    credential: never-used\n"
                        "  - id: esc-admin\n"
                        "    effect: escalate\n"
                        "    resource: {paths: [\"/admin/**\"]}\n"
                        "  - id: esc-admin-2\n"
                        "    effect: escalate\n"
                        "    resource: {paths: [\"/admin/**\"]}\n"
                        "    escalation_timeout: 30s\n"
                        "  - id: deny-secret\n"
                        "    effect: deny\n"
                        "    reason: \"no secrets\"\n"
                        "    resource: {paths: [\"/secret/**\", \"/admin/secret/**\"]}\n");
    /* The first matching allow decides; a later one (without a budget) changes nothing. */
    r = http("a", "https", "x", 443, "/public", "GET", "");
    res = ev(p, NULL, r, T0);
    assert_int_equal(res.effect, ALLOW);
    assert_string_equal(res.rule_id, "allow-all");
    assert_string_equal(res.reason, "allowed by rule allow-all");
    assert_string_equal(res.credential_id, "");
    rfree(r);
    /* Escalate beats allow, and the first matching escalate rule is named. */
    r = http("a", "https", "x", 443, "/admin/x", "GET", "");
    res = ev(p, NULL, r, T0);
    assert_int_equal(res.effect, ESCALATE);
    assert_string_equal(res.rule_id, "esc-admin");
    assert_string_equal(res.reason, "escalated by rule esc-admin");
    assert_int_equal(res.escalation_timeout_ms, 0);
    rfree(r);
    /* Deny beats both, wherever it is in the file. */
    r = http("a", "https", "x", 443, "/admin/secret/k", "GET", "");
    res = ev(p, NULL, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.rule_id, "deny-secret");
    assert_string_equal(res.reason, "no secrets");
    rfree(r);
    expect(p, NULL, http("a", "https", "x", 443, "/secret/k", "GET", ""), T0, DENY, "deny-secret");
    sworn_policy_free(p);

    p = sworn_pfix_load("rules:\n"
                        "  - id: only-deny\n"
                        "    effect: deny\n"
                        "    principals: [\"bad\"]\n");
    r = http("good", "https", "x", 443, "/", "GET", "");
    res = ev(p, NULL, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.rule_id, "");
    assert_string_equal(res.reason, "no rule matched (default deny)");
    rfree(r);
    sworn_policy_free(p);
}

static void test_time(void **state)
{
    struct sworn_policy *p;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: office\n"
                        "    effect: allow\n"
                        "    time:\n"
                        "      days: [mon, tue, wed, thu, fri]\n"
                        "      hours: \"09:00-17:30\"\n"
                        "  - id: sunday-all-day\n"
                        "    effect: allow\n"
                        "    time: {days: [sun]}\n"
                        "  - id: late\n"
                        "    effect: allow\n"
                        "    principals: [late]\n"
                        "    time: {hours: \"23:59-24:00\"}\n");
#define AT(t, eff, rule) expect(p, NULL, http("a", "https", "x", 443, "/", "GET", ""), t, eff, rule)
    AT(T0 + 9 * HOUR, ALLOW, "office");                 /* Monday 09:00:00.000 */
    AT(T0 + 9 * HOUR - 1, DENY, "");                    /* Monday 08:59:59.999 */
    AT(T0 + 17 * HOUR + 30 * MIN - 1, ALLOW, "office"); /* 17:29:59.999 */
    AT(T0 + 17 * HOUR + 30 * MIN, DENY, "");            /* 17:30 is outside */
    AT(T0 + 4 * DAY + 12 * HOUR, ALLOW, "office");      /* Friday noon */
    AT(T0 + 5 * DAY + 12 * HOUR, DENY, "");             /* Saturday noon */
    AT(T0 + 6 * DAY, ALLOW, "sunday-all-day");          /* Sunday 00:00 */
    AT(T0 + 7 * DAY - 1, ALLOW, "sunday-all-day");      /* Sunday 23:59:59.999 */
    AT(T0 - 1, ALLOW, "sunday-all-day");                /* the Sunday before */
    AT(T0 + 7 * DAY + 9 * HOUR, ALLOW, "office");       /* next Monday */
    AT(0, DENY, "");                                    /* 1970-01-01 was a Thursday, 00:00 */
    AT(9 * HOUR, ALLOW, "office");
    AT(3 * DAY, ALLOW, "sunday-all-day"); /* 1970-01-04 was a Sunday */
#undef AT
    expect(p, NULL, http("late", "https", "x", 443, "/", "GET", ""), T0 + DAY - 1, ALLOW, "late");
    expect(p, NULL, http("late", "https", "x", 443, "/", "GET", ""), T0 + DAY - MIN - 1, DENY, "");
    sworn_policy_free(p);
}

static void test_count_budget(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: per-principal\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/p/**\"]}\n"
                        "    budget: {count: 2, window: 1h}\n"
                        "  - id: shared\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/g/**\"]}\n"
                        "    budget: {count: 3, window: 10m, per: global}\n");
    assert_int_equal(sworn_policy_max_window_ms(p), HOUR);
    assert_int_equal(sworn_budgets_new(&b), 0);
    /* Per principal: each has its own 2 per hour; windows are aligned to the epoch. */
    expect(p, b, http("a", "https", "x", 443, "/p/1", "GET", ""), T0 + HOUR - 2, ALLOW,
           "per-principal");
    expect(p, b, http("a", "https", "x", 443, "/p/1", "GET", ""), T0 + HOUR - 2, ALLOW,
           "per-principal");
    r = http("a", "https", "x", 443, "/p/1", "GET", "");
    res = ev(p, b, r, T0 + HOUR - 1);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.rule_id, "per-principal");
    assert_string_equal(res.reason, "budget exhausted: rule per-principal allows 2 requests per "
                                    "1h per principal; 2 already allowed in the window that "
                                    "began 2026-03-02T00:00:00Z");
    assert_false(res.charges[0].used);
    rfree(r);
    expect(p, b, http("b", "https", "x", 443, "/p/1", "GET", ""), T0 + HOUR - 1, ALLOW,
           "per-principal");
    /* The next window starts empty. */
    expect(p, b, http("a", "https", "x", 443, "/p/1", "GET", ""), T0 + HOUR, ALLOW,
           "per-principal");
    /* Global: all principals share 3 per 10 minutes. */
    expect(p, b, http("a", "https", "x", 443, "/g", "GET", ""), T0, DENY, "");
    expect(p, b, http("a", "https", "x", 443, "/g/1", "GET", ""), T0, ALLOW, "shared");
    expect(p, b, http("b", "https", "x", 443, "/g/1", "GET", ""), T0 + 1, ALLOW, "shared");
    expect(p, b, http("c", "https", "x", 443, "/g/1", "GET", ""), T0 + 10 * MIN - 1, ALLOW,
           "shared");
    r = http("d", "https", "x", 443, "/g/1", "GET", "");
    res = ev(p, b, r, T0 + 10 * MIN - 1);
    assert_int_equal(res.effect, DENY);
    assert_non_null(strstr(res.reason, "budget exhausted: rule shared allows 3 requests per 10m "
                                       "for all principals together"));
    rfree(r);
    expect(p, b, http("d", "https", "x", 443, "/g/1", "GET", ""), T0 + 10 * MIN, ALLOW, "shared");
    /* Without budget state a budget rule cannot allow. */
    expect(p, NULL, http("z", "https", "x", 443, "/g/1", "GET", ""), T0, DENY, "shared");
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

static Sworn__V1__AuthorizationRequest *pay(const char *principal, const char *numbers)
{
    return rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"%s\"},\"operation\":\"http."
              "request\",\"resource\":{\"scheme\":\"https\",\"host\":\"pay.example\","
              "\"port\":443,\"path\":\"/pay\"},\"context\":{\"method\":\"POST\","
              "\"json_numbers\":[%s]}}",
              principal, numbers);
}

#define AMT(v) "{\"pointer\":\"/amount\",\"value\":\"" v "\"}"

static void test_sum_budget(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: payments\n"
                        "    effect: allow\n"
                        "    resource: {paths: [/pay]}\n"
                        "    sum:\n"
                        "      pointer: /amount\n"
                        "      max: \"1.00\"\n"
                        "      window: 24h\n"
                        "      per: principal\n");
    assert_int_equal(sworn_policy_max_window_ms(p), DAY);
    assert_int_equal(sworn_budgets_new(&b), 0);
    /* 0.1 + 0.2 + 0.7 is exactly 1.00 in fixed point (not in binary floating point). */
    expect(p, b, pay("a", AMT("0.1")), T0, ALLOW, "payments");
    expect(p, b, pay("a", AMT("0.2")), T0, ALLOW, "payments");
    expect(p, b, pay("a", AMT("0.7")), T0, ALLOW, "payments");
    r = pay("a", AMT("0.000001"));
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.reason,
                        "budget exhausted: rule payments allows a sum of 1 at /amount per 24h "
                        "per principal; 1 already used in the window that began "
                        "2026-03-02T00:00:00Z, this request asks 0.000001");
    rfree(r);
    expect(p, b, pay("a", AMT("0")), T0, ALLOW, "payments");
    expect(p, b, pay("a", AMT("-0.0")), T0, ALLOW, "payments");
    expect(p, b, pay("b", AMT("1e0")), T0, ALLOW, "payments");
    expect(p, b, pay("c", AMT("10e-1")), T0, ALLOW, "payments");
    expect(p, b, pay("d", AMT("0.5000000000")), T0, ALLOW, "payments");
    expect(p, b, pay("d", AMT("5E-1")), T0, ALLOW, "payments");
    expect(p, b, pay("d", AMT("0.000001")), T0, DENY, "payments");
    /* The refusals: each a deny naming the rule, never a partial charge. */
    static const struct {
        const char *numbers, *why;
    } bad[] = {
        {"", "has no number at /amount"},
        {"{\"pointer\":\"/other\",\"value\":\"1\"}", "has no number at /amount"},
        {AMT("0.1") "," AMT("0.1"), "more than one number at /amount"},
        {AMT("-0.5"), "a negative amount"},
        {AMT("0.0000001"), "more than 6 decimal places"},
        {AMT("1e-7"), "more than 6 decimal places"},
        {AMT("18446744073709.551616"), "too large"},
        {AMT("1e30"), "too large"},
        {AMT("1e99999999999999999999"), "too large"},
        {AMT("1.5"), "budget exhausted"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = pay("e", bad[i].numbers);
        res = ev(p, b, r, T0);
        assert_int_equal(res.effect, DENY);
        assert_string_equal(res.rule_id, "payments");
        if (strstr(res.reason, bad[i].why) == NULL)
            fail_msg("case %zu: reason \"%s\" lacks \"%s\"", i, res.reason, bad[i].why);
        rfree(r);
    }
    /* A huge exact zero is zero; and e's budget is still whole after the refusals. */
    expect(p, b, pay("e", AMT("0e999999999")), T0, ALLOW, "payments");
    expect(p, b, pay("e", AMT("1.000000")), T0, ALLOW, "payments");
    /* The next day's window is empty again. */
    expect(p, b, pay("a", AMT("1")), T0 + DAY, ALLOW, "payments");
    sworn_budgets_free(b);
    sworn_policy_free(p);

    /* The largest max, and a sum that would overflow 64 bits, which denies. */
    p = sworn_pfix_load("rules:\n"
                        "  - id: big\n"
                        "    effect: allow\n"
                        "    budget: {count: 5, window: 1m}\n"
                        "    sum: {pointer: \"/a~1b\", max: 18446744073709.551615, window: 1m}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    expect(p, b,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
              "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1},\"context\":{"
              "\"json_numbers\":[{\"pointer\":\"/a~1b\",\"value\":\"18446744073709.551615\"}]}}"),
           T0, ALLOW, "big");
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
           "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1},\"context\":{"
           "\"json_numbers\":[{\"pointer\":\"/a~1b\",\"value\":\"0.000001\"}]}}");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_non_null(strstr(res.reason, "budget exhausted"));
    rfree(r);
    /* The count was not charged by the denied request: 4 more allows of 0 fit. */
    for (int i = 0; i < 4; i++)
        expect(p, b,
               rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
                  "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1},\"context\":{"
                  "\"json_numbers\":[{\"pointer\":\"/a~1b\",\"value\":\"0\"}]}}"),
               T0, ALLOW, "big");
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
           "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1},\"context\":{"
           "\"json_numbers\":[{\"pointer\":\"/a~1b\",\"value\":\"0\"}]}}");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_non_null(strstr(res.reason, "allows 5 requests per 1m"));
    rfree(r);
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

static void test_refund_and_reload(void **state)
{
    struct sworn_policy *p, *p2;
    struct sworn_budgets *b;
    struct sworn_policy_result res, res2;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: one\n"
                        "    effect: allow\n"
                        "    budget: {count: 1, window: 1m}\n"
                        "    sum: {pointer: /n, max: 5, window: 1m}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
           "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1},\"context\":{"
           "\"json_numbers\":[{\"pointer\":\"/n\",\"value\":\"5\"}]}}");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, ALLOW);
    assert_int_equal(sworn_budgets_count(b), 2);
    res2 = ev(p, b, r, T0);
    assert_int_equal(res2.effect, DENY);
    /* Refund: the same request fits again, and the counters are gone. */
    sworn_budgets_refund(b, &res);
    assert_int_equal(sworn_budgets_count(b), 0);
    sworn_budgets_refund(b, &res2); /* charged nothing: a no-op */
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, ALLOW);
    /* Same inputs, same state: the same result, deterministically. */
    res2 = ev(p, b, r, T0);
    assert_int_equal(res2.effect, DENY);
    assert_string_equal(res2.rule_id, "one");

    /* A broken reload leaves nothing behind; a good one keeps the counters of rule "one". */
    p2 = (struct sworn_policy *)&p2;
    {
        static const char broken[] = "rules:\n  - id: one\n    effect: allow\n    bogus: 1\n";
        char *path = sworn_pfix_put("policy.yaml", broken);

        assert_int_equal(sworn_policy_load_file(path, &p2), -1);
        assert_ptr_equal(p2, (struct sworn_policy *)&p2);
        free(path);
    }
    p2 = sworn_pfix_load("version: 2\n"
                         "rules:\n"
                         "  - id: one\n"
                         "    effect: allow\n"
                         "    reason: reloaded\n"
                         "    budget: {count: 1, window: 1m}\n"
                         "    sum: {pointer: /n, max: 5, window: 1m}\n");
    res2 = ev(p2, b, r, T0 + 1);
    assert_int_equal(res2.effect, DENY);
    assert_non_null(strstr(res2.reason, "budget exhausted"));
    res2 = ev(p2, b, r, T0 + MIN);
    assert_int_equal(res2.effect, ALLOW);
    assert_string_equal(res2.reason, "reloaded");
    rfree(r);
    sworn_budgets_free(b);
    sworn_policy_free(p2);
    sworn_policy_free(p);
}

static void test_replay(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    Sworn__V1__DecisionRecord rec = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: counted\n"
                        "    effect: allow\n"
                        "    budget: {count: 2, window: 1h}\n"
                        "    sum: {pointer: /n, max: 10, window: 1h}\n"
                        "  - id: free\n"
                        "    effect: allow\n"
                        "    principals: [nobody]\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
           "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1},\"context\":{"
           "\"json_numbers\":[{\"pointer\":\"/n\",\"value\":\"4\"}]}}");
    rec.request = r;
    rec.effect = ALLOW;
    rec.rule_id = (char *)"counted";
    rec.time_unix_ms = T0 + 10 * MIN;
    assert_int_equal(sworn_budgets_replay(b, p, &rec), 0);
    /* Ignored: not an allow. */
    rec.effect = DENY;
    assert_int_equal(sworn_budgets_replay(b, p, &rec), 0);
    rec.effect = ESCALATE;
    assert_int_equal(sworn_budgets_replay(b, p, &rec), 0);
    assert_int_equal(sworn_budgets_count(b), 2);
    /* An earlier window: counters of their own. (An allow named by a rule that is gone or has no
     * budget still charges "counted", which matches its request: test_replay_every_matching.) */
    rec.effect = ALLOW;
    rec.time_unix_ms = T0 - 1;
    assert_int_equal(sworn_budgets_replay(b, p, &rec), 0);
    assert_int_equal(sworn_budgets_count(b), 4);
    /* One allow (4 of 10) is replayed in this hour: one more of 4 fits, then the sum is 8. */
    expect(p, b,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
              "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1},\"context\":{"
              "\"json_numbers\":[{\"pointer\":\"/n\",\"value\":\"4\"}]}}"),
           T0 + 30 * MIN, ALLOW, "counted");
    expect(p, b,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
              "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1},\"context\":{"
              "\"json_numbers\":[{\"pointer\":\"/n\",\"value\":\"1\"}]}}"),
           T0 + 30 * MIN, DENY, "counted");
    rfree(r);
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

static void test_budget_cap(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: c\n"
                        "    effect: allow\n"
                        "    budget: {count: 10, window: 1m}\n");
    assert_int_equal(sworn_budgets_new_cap(2, &b), 0);
    expect(p, b, http("a", "https", "x", 443, "/", "GET", ""), T0, ALLOW, "c");
    expect(p, b, http("b", "https", "x", 443, "/", "GET", ""), T0, ALLOW, "c");
    expect(p, b, http("a", "https", "x", 443, "/", "GET", ""), T0, ALLOW, "c");
    r = http("c", "https", "x", 443, "/", "GET", "");
    res = ev(p, b, r, T0 + 1);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.rule_id, "c");
    assert_non_null(strstr(res.reason, "budget state full"));
    rfree(r);
    assert_int_equal(sworn_budgets_count(b), 2);
    /* Once the window has ended its counters are dropped and there is room again. */
    expect(p, b, http("c", "https", "x", 443, "/", "GET", ""), T0 + MIN, ALLOW, "c");
    assert_int_equal(sworn_budgets_count(b), 1);
    sworn_budgets_free(b);
    /* Many principals with the default cap: memory grows with the counters, and stays sane. */
    assert_int_equal(sworn_budgets_new(&b), 0);
    for (int i = 0; i < 3000; i++) {
        char who[32];

        snprintf(who, sizeof(who), "agent-%d", i);
        expect(p, b, http(who, "https", "x", 443, "/", "GET", ""), T0, ALLOW, "c");
    }
    assert_int_equal(sworn_budgets_count(b), 3000);
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

struct racer {
    const struct sworn_policy *p;
    struct sworn_budgets *b;
    Sworn__V1__AuthorizationRequest *r;
    int allowed, failed;
};

static void *race(void *arg)
{
    struct racer *x = arg;
    struct sworn_policy_result res;

    for (int i = 0; i < 500; i++) {
        if (sworn_policy_eval(x->p, x->b, x->r, T0, &res) != 0)
            x->failed++;
        else if (res.effect == ALLOW)
            x->allowed++;
    }
    return NULL;
}

/* Many threads on one global budget: check-and-charge is atomic, so exactly the limit passes. */
static void test_budget_threads(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    struct racer x[4];
    pthread_t th[4];
    int total = 0;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: shared\n"
                        "    effect: allow\n"
                        "    budget: {count: 1000, window: 1h, per: global}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    for (int i = 0; i < 4; i++) {
        char who[16];

        snprintf(who, sizeof(who), "t%d", i);
        x[i].p = p;
        x[i].b = b;
        x[i].r = http(who, "https", "x", 443, "/", "GET", "");
        x[i].allowed = x[i].failed = 0;
        assert_int_equal(pthread_create(&th[i], NULL, race, &x[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(x[i].failed, 0);
        total += x[i].allowed;
        rfree(x[i].r);
    }
    assert_int_equal(total, 1000);
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

/*
 * Finding 7 of the policy review: the first matching allow decided alone, so a broader allow
 * earlier in the file ("read-all", no budget) switched off a later rule's budget ("pay-budget",
 * count 1): three /pay/x GETs were all allowed. Now every matching allow rule's budget must have
 * room; the first matching allow still decides (id, reason, credential).
 */
static void test_budgets_every_matching_allow(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: read-all\n"
                        "    effect: allow\n"
                        "    reason: \"reads are fine\"\n"
                        "    methods: [GET]\n"
                        "    credential: ro\n"
                        "  - id: pay-budget\n"
                        "    effect: allow\n"
                        "    reason: \"never the reason of a GET\"\n"
                        "    resource: {paths: [\"/pay/**\"]}\n"
                        "    budget: {count: 1, window: 1h}\n"
                        "    credential: never-used\n"
                        "  - id: no-secret\n"
                        "    effect: deny\n"
                        "    resource: {paths: [\"/pay/secret\"]}\n"
                        "  - id: ask\n"
                        "    effect: escalate\n"
                        "    resource: {paths: [\"/pay/ask\"]}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    /* A deny and an escalate charge nothing. */
    expect(p, b, http("a", "https", "x", 443, "/pay/secret", "GET", ""), T0, DENY, "no-secret");
    expect(p, b, http("a", "https", "x", 443, "/pay/ask", "GET", ""), T0, ESCALATE, "ask");
    assert_int_equal(sworn_budgets_count(b), 0);
    /* The first allow decides (its reason and credential), the later one's budget is charged. */
    r = http("a", "https", "x", 443, "/pay/x", "GET", "");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, ALLOW);
    assert_string_equal(res.rule_id, "read-all");
    assert_string_equal(res.reason, "reads are fine");
    assert_string_equal(res.credential_id, "ro");
    assert_true(res.charges[0].used);
    assert_int_equal(sworn_budgets_count(b), 1);
    /* The second and third: the budget of pay-budget has no room. */
    for (int i = 0; i < 2; i++) {
        res = ev(p, b, r, T0 + 1);
        assert_int_equal(res.effect, DENY);
        assert_string_equal(res.rule_id, "pay-budget");
        assert_string_equal(res.reason, "budget exhausted: rule pay-budget allows 1 requests per "
                                        "1h per principal; 1 already allowed in the window that "
                                        "began 2026-03-02T00:00:00Z");
        assert_string_equal(res.credential_id, "");
        assert_false(res.charges[0].used);
    }
    rfree(r);
    /* Requests outside /pay are untouched, and another principal has its own budget. */
    expect(p, b, http("a", "https", "x", 443, "/other", "GET", ""), T0, ALLOW, "read-all");
    expect(p, b, http("b", "https", "x", 443, "/pay/x", "GET", ""), T0, ALLOW, "read-all");
    /* A POST is allowed by pay-budget alone, which decides and is charged once. */
    expect(p, b, http("c", "https", "x", 443, "/pay/x", "POST", ""), T0, ALLOW, "pay-budget");
    expect(p, b, http("c", "https", "x", 443, "/pay/x", "GET", ""), T0, DENY, "pay-budget");
    /* The next window starts empty. */
    expect(p, b, http("a", "https", "x", 443, "/pay/x", "GET", ""), T0 + HOUR, ALLOW, "read-all");
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

/*
 * All or none: a decision that one rule's budget refuses charges no other rule's budget, and the
 * DENY names the first refusing rule in file order; different per: scopes and sums included.
 */
static void test_budgets_all_or_none(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: wide\n"
                        "    effect: allow\n"
                        "    budget: {count: 2, window: 1h}\n"
                        "  - id: narrow\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/pay/**\"]}\n"
                        "    budget: {count: 1, window: 1h}\n"
                        "  - id: shared\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/g/**\"]}\n"
                        "    budget: {count: 2, window: 1h, per: global}\n"
                        "  - id: spend\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/g/**\", \"/s/**\"]}\n"
                        "    sum: {pointer: /amount, max: 10, window: 1h}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    /* /pay/x charges wide and narrow; the second is refused by narrow and charges wide nothing,
     * so wide still has room for one more, and then none. */
    expect(p, b, http("a", "https", "x", 443, "/pay/x", "GET", ""), T0, ALLOW, "wide");
    assert_int_equal(sworn_budgets_count(b), 2);
    expect(p, b, http("a", "https", "x", 443, "/pay/x", "GET", ""), T0, DENY, "narrow");
    expect(p, b, http("a", "https", "x", 443, "/pay/x", "GET", ""), T0, DENY, "narrow");
    expect(p, b, http("a", "https", "x", 443, "/other", "GET", ""), T0, ALLOW, "wide");
    /* Both exhausted: the first in file order is named. */
    r = http("a", "https", "x", 443, "/pay/x", "GET", "");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.rule_id, "wide");
    assert_non_null(strstr(res.reason, "budget exhausted: rule wide allows 2 requests"));
    rfree(r);
    /* A global budget and a per-principal sum on one request: b, then c, each with 4. */
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"b\"},\"operation\":\"x\",\"resource\":"
           "{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":\"/g/1\"},\"context\":{"
           "\"json_numbers\":[" AMT("4") "]}}");
    expect(p, b, r, T0, ALLOW, "wide");
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"c\"},\"operation\":\"x\",\"resource\":"
           "{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":\"/g/1\"},\"context\":{"
           "\"json_numbers\":[" AMT("4") "]}}");
    expect(p, b, r, T0, ALLOW, "wide");
    /* The global count is spent: d is refused by shared, and neither d's wide count nor d's sum
     * is charged: d then spends all 10 under /s, and has one more wide allow, then none. */
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"d\"},\"operation\":\"x\",\"resource\":"
           "{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":\"/g/1\"},\"context\":{"
           "\"json_numbers\":[" AMT("4") "]}}");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.rule_id, "shared");
    assert_non_null(strstr(res.reason, "for all principals together"));
    rfree(r);
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"d\"},\"operation\":\"x\",\"resource\":"
           "{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":\"/s/1\"},\"context\":{"
           "\"json_numbers\":[" AMT("10") "]}}");
    expect(p, b, r, T0, ALLOW, "wide");
    expect(p, b, http("d", "https", "x", 443, "/other", "GET", ""), T0, ALLOW, "wide");
    expect(p, b, http("d", "https", "x", 443, "/other", "GET", ""), T0, DENY, "wide");
    /* A sum that cannot be measured refuses with its own reason, unless an earlier rule's budget
     * refuses first (file order). */
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"e\"},\"operation\":\"x\",\"resource\":"
           "{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":\"/s/1\"}}");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.rule_id, "spend");
    assert_string_equal(res.reason, "sum budget of rule spend: the request has no number at "
                                    "/amount");
    rfree(r);
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"d\"},\"operation\":\"x\",\"resource\":"
           "{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":\"/s/1\"}}");
    expect(p, b, r, T0, DENY, "wide");
    /* Without budget state: the first budget rule, with the sum's reason when it is the sum. */
    expect(p, NULL, http("f", "https", "x", 443, "/pay/x", "GET", ""), T0, DENY, "wide");
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

/* A refund undoes every charge of the decision, in every rule; the counter cap and the bound. */
static void test_budgets_refund_cap_bound(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    struct sworn_policy_result res, res2;
    Sworn__V1__AuthorizationRequest *r;
    char text[8192];
    size_t n = 0;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: first\n"
                        "    effect: allow\n"
                        "  - id: one\n"
                        "    effect: allow\n"
                        "    budget: {count: 1, window: 1m}\n"
                        "  - id: two\n"
                        "    effect: allow\n"
                        "    budget: {count: 1, window: 1h, per: global}\n"
                        "    sum: {pointer: /n, max: 5, window: 1m}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
           "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1},\"context\":{"
           "\"json_numbers\":[{\"pointer\":\"/n\",\"value\":\"5\"}]}}");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, ALLOW);
    assert_string_equal(res.rule_id, "first");
    assert_int_equal(sworn_budgets_count(b), 3);
    res2 = ev(p, b, r, T0);
    assert_int_equal(res2.effect, DENY);
    assert_string_equal(res2.rule_id, "one");
    sworn_budgets_refund(b, &res2); /* charged nothing: a no-op */
    assert_int_equal(sworn_budgets_count(b), 3);
    sworn_budgets_refund(b, &res);
    assert_int_equal(sworn_budgets_count(b), 0);
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, ALLOW);
    sworn_budgets_free(b);
    /* The cap of counters: the decision needs three, one is left: nothing is charged, and the
     * first rule that needed a new counter is named. */
    assert_int_equal(sworn_budgets_new_cap(2, &b), 0);
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.rule_id, "one");
    assert_non_null(strstr(res.reason, "budget state full"));
    assert_int_equal(sworn_budgets_count(b), 0);
    rfree(r);
    sworn_budgets_free(b);
    sworn_policy_free(p);

    /* At most SWORN_POLICY_BUDGET_RULES_MAX budget rules per request: 16 allow, 17 deny. */
    for (int k = 0; k < 2; k++) {
        unsigned rules = SWORN_POLICY_BUDGET_RULES_MAX + (unsigned)k;

        n = (size_t)snprintf(text, sizeof(text), "rules:\n  - id: free\n    effect: allow\n");
        for (unsigned i = 0; i < rules; i++)
            n += (size_t)snprintf(text + n, sizeof(text) - n,
                                  "  - id: b%u\n    effect: allow\n"
                                  "    budget: {count: 5, window: 1m}\n",
                                  i);
        p = sworn_pfix_load(text);
        assert_int_equal(sworn_budgets_new(&b), 0);
        r = http("a", "https", "x", 443, "/", "GET", "");
        res = ev(p, b, r, T0);
        if (k == 0) {
            assert_int_equal(res.effect, ALLOW);
            assert_string_equal(res.rule_id, "free");
            assert_int_equal(sworn_budgets_count(b), SWORN_POLICY_BUDGET_RULES_MAX);
        } else {
            assert_int_equal(res.effect, DENY);
            assert_string_equal(res.rule_id, "b16");
            assert_non_null(strstr(res.reason, "too many budgets"));
            assert_int_equal(sworn_budgets_count(b), 0);
        }
        rfree(r);
        sworn_budgets_free(b);
        sworn_policy_free(p);
    }
}

struct racer2 {
    const struct sworn_policy *p;
    struct sworn_budgets *b;
    Sworn__V1__AuthorizationRequest *r;
    int allowed, failed;
};

static void *race2(void *arg)
{
    struct racer2 *x = arg;
    struct sworn_policy_result res;

    for (int i = 0; i < 400; i++) {
        if (sworn_policy_eval(x->p, x->b, x->r, T0, &res) != 0)
            x->failed++;
        else if (res.effect == ALLOW)
            x->allowed++;
    }
    return NULL;
}

/*
 * Threads on two global budgets that one request charges together, and on the wider one alone:
 * no thread ever sees one charged and the other refused, so exactly 600 of the requests under
 * /pay pass (the narrow budget) and the wide budget holds exactly what was allowed.
 */
static void test_budgets_threads_two_rules(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    struct racer2 x[4];
    pthread_t th[4];
    int pay = 0, other = 0;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: wide\n"
                        "    effect: allow\n"
                        "    budget: {count: 1000, window: 1h, per: global}\n"
                        "  - id: narrow\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/pay/**\"]}\n"
                        "    budget: {count: 600, window: 1h, per: global}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    for (int i = 0; i < 4; i++) {
        char who[16];

        snprintf(who, sizeof(who), "t%d", i);
        x[i].p = p;
        x[i].b = b;
        x[i].r = http(who, "https", "x", 443, i < 2 ? "/pay/x" : "/other", "GET", "");
        x[i].allowed = x[i].failed = 0;
    }
    /* The /pay threads first, alone: 800 tries for 600. */
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race2, &x[i]), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(x[i].failed, 0);
        pay += x[i].allowed;
    }
    assert_int_equal(pay, 600);
    /* Then all four: wide has exactly 400 left (the 200 refused /pay tries charged nothing). */
    for (int i = 0; i < 4; i++) {
        x[i].allowed = 0;
        assert_int_equal(pthread_create(&th[i], NULL, race2, &x[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(x[i].failed, 0);
        if (i < 2)
            assert_int_equal(x[i].allowed, 0);
        else
            other += x[i].allowed;
    }
    assert_int_equal(other, 400);
    for (int i = 0; i < 4; i++)
        rfree(x[i].r);
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

/*
 * The replay at start charges what the ALLOW charged: every matching allow rule with a budget,
 * not only the rule named in rule_id; the named rule even when a reload narrowed it; nothing for
 * rules that do not match; deny rules are not consulted (the decision was taken).
 */
static void test_replay_every_matching(void **state)
{
    struct sworn_policy *p, *p2;
    struct sworn_budgets *b;
    Sworn__V1__DecisionRecord rec = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__Resource canon = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__AuthorizationRequest *r;

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - id: read-all\n"
                        "    effect: allow\n"
                        "    methods: [GET]\n"
                        "  - id: pay-budget\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/pay/**\"]}\n"
                        "    budget: {count: 1, window: 1h}\n"
                        "  - id: spend\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/pay/**\"]}\n"
                        "    sum: {pointer: /amount, max: 10, window: 1h}\n"
                        "  - id: other-budget\n"
                        "    effect: allow\n"
                        "    resource: {paths: [\"/other/**\"]}\n"
                        "    budget: {count: 1, window: 1h}\n"
                        "  - id: later-deny\n"
                        "    effect: deny\n"
                        "    resource: {paths: [\"/pay/closed\"]}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    /* Decided by read-all (no budget of its own), a non-canonical spelling of /pay/x. */
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\",\"resource\":"
           "{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":\"/a/../pay/x\"},\"context\":{"
           "\"method\":\"GET\",\"json_numbers\":[" AMT("6") "]}}");
    rec.request = r;
    rec.effect = ALLOW;
    rec.rule_id = (char *)"read-all";
    rec.time_unix_ms = T0 + 10 * MIN;
    assert_int_equal(sworn_budgets_replay(b, p, &rec), 0);
    assert_int_equal(sworn_budgets_count(b), 2); /* pay-budget and spend, not other-budget */
    expect(p, b, http("a", "https", "h", 1, "/pay/y", "GET", ""), T0 + 20 * MIN, DENY,
           "pay-budget");
    expect(p, b, http("a", "https", "h", 1, "/other/1", "GET", ""), T0 + 20 * MIN, ALLOW,
           "read-all");
    sworn_budgets_free(b);

    /* The recorded canonical form is what is matched when the record has one. */
    assert_int_equal(sworn_budgets_new(&b), 0);
    canon.scheme = (char *)"https";
    canon.host = (char *)"h";
    canon.port = 1;
    canon.path = (char *)"/other/1";
    canon.tool = (char *)"";
    rec.canonical_resource = &canon;
    assert_int_equal(sworn_budgets_replay(b, p, &rec), 0);
    assert_int_equal(sworn_budgets_count(b), 1);
    expect(p, b, http("a", "https", "h", 1, "/other/2", "GET", ""), T0 + 20 * MIN, DENY,
           "other-budget");
    expect(p, b,
           rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"x\","
              "\"resource\":{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":"
              "\"/pay/y\"},\"context\":{\"method\":\"GET\",\"json_numbers\":[" AMT("10") "]}}"),
           T0 + 20 * MIN, ALLOW, "read-all");
    rec.canonical_resource = NULL;
    sworn_budgets_free(b);

    /* A rule id that no longer exists: the request's matching rules are still charged; a deny
     * that matches now is not consulted. */
    assert_int_equal(sworn_budgets_new(&b), 0);
    rec.rule_id = (char *)"gone";
    assert_int_equal(sworn_budgets_replay(b, p, &rec), 0);
    assert_int_equal(sworn_budgets_count(b), 2);
    rfree(r);
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"b\"},\"operation\":\"x\",\"resource\":"
           "{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":\"/pay/closed\"},\"context\":{"
           "\"method\":\"GET\",\"json_numbers\":[" AMT("6") "]}}");
    rec.request = r;
    assert_int_equal(sworn_budgets_replay(b, p, &rec), 0);
    assert_int_equal(sworn_budgets_count(b), 4);
    sworn_budgets_free(b);

    /* Reloaded since: pay-budget now covers /shop only. It decided the allow, so it is still
     * charged; spend no longer exists. A record whose resource is refused now charges only the
     * rule that decided it. */
    p2 = sworn_pfix_load("rules:\n"
                         "  - id: pay-budget\n"
                         "    effect: allow\n"
                         "    resource: {paths: [\"/shop/**\"]}\n"
                         "    budget: {count: 1, window: 1h}\n"
                         "  - id: other-budget\n"
                         "    effect: allow\n"
                         "    budget: {count: 1, window: 1h}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    rec.rule_id = (char *)"pay-budget";
    assert_int_equal(sworn_budgets_replay(b, p2, &rec), 0);
    assert_int_equal(sworn_budgets_count(b), 2); /* pay-budget (named), other-budget (matches) */
    expect(p2, b, http("b", "https", "h", 1, "/shop/1", "GET", ""), T0 + 20 * MIN, DENY,
           "pay-budget");
    sworn_budgets_free(b);
    rfree(r);
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"c\"},\"operation\":\"x\",\"resource\":"
           "{\"scheme\":\"https\",\"host\":\"h\",\"port\":1,\"path\":\"/x%%2Fy\"}}");
    rec.request = r;
    assert_int_equal(sworn_budgets_new(&b), 0);
    assert_int_equal(sworn_budgets_replay(b, p2, &rec), 0);
    assert_int_equal(sworn_budgets_count(b), 1);
    sworn_budgets_free(b);
    rfree(r);
    sworn_policy_free(p2);
    sworn_policy_free(p);
}

/* --- Warnings (policy/lint.h) --- */

struct lint_seen {
    int n;
    char text[8][2700];
    unsigned line[8], col[8];
    char rule[8][129];
};

static void lint_collect(void *arg, const struct sworn_lint_warning *w)
{
    struct lint_seen *s = arg;

    assert_non_null(w->message);
    assert_null(strchr(w->message, '\n'));
    /* The first 7 and the last warning are kept. */
    {
        int i = s->n < 8 ? s->n : 7;

        snprintf(s->text[i], sizeof(s->text[i]), "%s", w->message);
        snprintf(s->rule[i], sizeof(s->rule[i]), "%s", w->rule_id);
        s->line[i] = w->line;
        s->col[i] = w->col;
    }
    s->n++;
}

/* The warnings of a policy given as text (it must load). */
static struct lint_seen lint_of(const char *text)
{
    struct sworn_policy *p = sworn_pfix_load(text);
    struct lint_seen s;
    int n;

    memset(&s, 0, sizeof(s));
    n = sworn_policy_lint(p, lint_collect, &s);
    assert_int_equal(n, s.n);
    sworn_policy_free(p);
    return s;
}

/* A policy that must give exactly one warning, about rule, at line:col, containing want. */
static void lint_one(const char *text, const char *rule, unsigned line, unsigned col,
                     const char *want)
{
    struct lint_seen s = lint_of(text);

    if (s.n != 1)
        fail_msg("%d warnings (expected one containing \"%s\"):\n%s\n%s\n---\n%s", s.n, want,
                 s.n > 0 ? s.text[0] : "", s.n > 1 ? s.text[1] : "", text);
    assert_string_equal(s.rule[0], rule);
    assert_int_equal(s.line[0], line);
    assert_int_equal(s.col[0], col);
    if (strstr(s.text[0], want) == NULL)
        fail_msg("warning \"%s\" lacks \"%s\"", s.text[0], want);
}

/* A policy that must give no warning. */
static void lint_none(const char *text)
{
    struct lint_seen s = lint_of(text);

    if (s.n != 0)
        fail_msg("unexpected warning: %s\n---\n%s", s.text[0], text);
}

static void test_lint_shadowed(void **state)
{
    (void)state;
    /* Finding 7's policy: read-all does not cover pay-budget (POSTs reach it). */
    lint_none("rules:\n"
              "  - {id: read-all, effect: allow, methods: [GET]}\n"
              "  - id: pay-budget\n"
              "    effect: allow\n"
              "    resource: {paths: [\"/pay/**\"]}\n"
              "    budget: {count: 1, window: 1h}\n");
    /* An allow for everything shadows any later allow: its budgets still count. */
    lint_one("rules:\n"
             "  - id: all\n"
             "    effect: allow\n"
             "  - id: pay-budget\n"
             "    effect: allow\n"
             "    resource: {paths: [\"/pay/**\"]}\n"
             "    budget: {count: 1, window: 1h}\n"
             "    credential: pay\n",
             "pay-budget", 4, 5,
             "rule \"pay-budget\" can never decide: the earlier allow rule \"all\" (line 2) "
             "matches every request it matches, so its reason and credential are never used (its "
             "budgets still count");
    /* Lists: items, "*", globs over literals, literal prefixes, hosts, schemes, ports, time. */
    lint_one(
        "rules:\n"
        "  - id: wide\n"
        "    effect: allow\n"
        "    principals: [\"agent-*\"]\n"
        "    operations: [\"*\"]\n"
        "    resource:\n"
        "      schemes: [https, http]\n"
        "      hosts: [\"**.example.com\", \"*.example.org\", \"10.0.0.1\"]\n"
        "      ports: [443, 8443]\n"
        "      paths: [\"/api/**\", \"/x\"]\n"
        "    methods: [GET, POST]\n"
        "  - id: narrow\n"
        "    effect: allow\n"
        "    principals: [agent-1, \"agent-b*\"]\n"
        "    operations: [http.request]\n"
        "    resource:\n"
        "      schemes: [https]\n"
        "      hosts: [a.example.com, \"*.b.example.com\", \"**.c.example.com\", x.example.org,"
        " \"*.example.org\", \"10.0.0.1\"]\n"
        "      ports: [443]\n"
        "      paths: [\"/api/v1/*\", \"/api/x/**\", \"/x\"]\n"
        "    methods: [GET]\n"
        "    time: {days: [mon], hours: \"09:00-10:00\"}\n",
        "narrow", 12, 5, "the earlier allow rule \"wide\" (line 2)");
    /* Deny and escalate rules shadowed by earlier ones of their effect. */
    lint_one("rules:\n"
             "  - {id: d1, effect: deny, resource: {paths: [\"/**\"]}}\n"
             "  - {id: d2, effect: deny, reason: never, resource: {paths: [\"/a/b\"]}}\n",
             "d2", 3, 5,
             "the earlier deny rule \"d1\" (line 2) matches every request it matches, "
             "so its reason is never used");
    lint_one("rules:\n"
             "  - {id: e1, effect: escalate, resource: {paths: [\"/a/b\"]}}\n"
             "  - {id: e2, effect: escalate, resource: {paths: [\"/a/b\"]}}\n",
             "e2", 3, 5, "its reason and escalation_timeout is never used");
    /* A later deny of another effect is not "shadowing": it overrides, one warning, not two. */
    lint_one("rules:\n"
             "  - {id: ask, effect: escalate, resource: {paths: [\"/a/b\"]}}\n"
             "  - {id: no, effect: deny, resource: {paths: [\"/a/b\"]}}\n",
             "ask", 2, 5, "rule \"ask\" can never escalate: deny rule \"no\" (line 3)");
}

static void test_lint_overridden(void **state)
{
    (void)state;
    /* A deny anywhere in the file that covers an allow or an escalate rule. */
    lint_one("rules:\n"
             "  - {id: reads, effect: allow, resource: {hosts: [api.example]}, methods: [GET]}\n"
             "  - {id: no-api, effect: deny, resource: {hosts: [api.example]}}\n",
             "reads", 2, 5,
             "rule \"reads\" can never allow: deny rule \"no-api\" (line 3) matches every "
             "request it matches, and a deny wins wherever it is in the file");
    lint_one("rules:\n"
             "  - {id: no, effect: deny, principals: [\"*\"]}\n"
             "  - {id: ask, effect: escalate, resource: {paths: [\"/ask\"]}}\n",
             "ask", 3, 5, "rule \"ask\" can never escalate: deny rule \"no\" (line 2)");
    lint_one("rules:\n"
             "  - {id: ok, effect: allow, resource: {paths: [\"/ask/x\"]}}\n"
             "  - {id: ask, effect: escalate, resource: {paths: [\"/ask/*\", \"/ask\"]}}\n",
             "ok", 2, 5, "rule \"ok\" can never allow: escalate rule \"ask\" (line 3)");
    /* Scheme tcp (raw tunnels): a deny without schemes matches it, so it overrides an allow
     * naming tcp; an escalate without schemes does not (it never matches tcp), so no warning,
     * and neither does an allow without schemes shadow a later allow naming tcp. */
    lint_one("rules:\n"
             "  - {id: db, effect: allow, resource: {schemes: [tcp], ports: [5432]}}\n"
             "  - {id: no-db, effect: deny, resource: {ports: [5432]}}\n",
             "db", 2, 5, "rule \"db\" can never allow: deny rule \"no-db\" (line 3)");
    lint_none("rules:\n"
              "  - {id: ask, effect: escalate, resource: {ports: [5432]}}\n"
              "  - {id: db, effect: allow, resource: {schemes: [tcp], ports: [5432]}}\n");
    lint_none("rules:\n"
              "  - {id: all, effect: allow}\n"
              "  - {id: db, effect: allow, reason: raw, resource: {schemes: [tcp]}}\n");
    /* An allow naming tcp and the HTTP schemes is not covered by a deny naming only http. */
    lint_none("rules:\n"
              "  - {id: db, effect: allow, resource: {schemes: [tcp, http, ws], ports: [80]}}\n"
              "  - {id: no-http, effect: deny, resource: {schemes: [http, ws], ports: [80]}}\n");
}

static void test_lint_no_false_positives(void **state)
{
    char path[1024], *text;

    (void)state;
    /* The sample policy is clean. */
    snprintf(path, sizeof(path), "%s/policy/examples/policy.yaml", sworn_test_source_dir());
    text = sworn_test_read_file(path, NULL);
    assert_non_null(text);
    lint_none(text);
    free(text);
    /* Overlap is not cover: each of these rules still decides some request. */
    lint_none(
        "rules:\n"
        "  - {id: a, effect: allow, resource: {paths: [\"/a/*\"]}}\n"
        "  - {id: b, effect: allow, resource: {paths: [\"/*/b\"]}}\n"
        "  - {id: c, effect: allow, resource: {paths: [\"/a/**\"]}}\n"
        "  - {id: d, effect: allow, resource: {hosts: [\"*.example.com\"]}}\n"
        "  - {id: e, effect: allow, resource: {hosts: [\"**.example.com\"]}}\n"
        "  - {id: f, effect: allow, resource: {hosts: [example.com]}}\n"
        "  - {id: g, effect: allow, resource: {hosts: [\"*.a.example.net\"]}}\n"
        "  - {id: h, effect: allow, resource: {hosts: [\"**.example.net\"]}, methods: [PUT]}\n"
        "  - {id: i, effect: allow, resource: {schemes: [https]}}\n"
        "  - {id: j, effect: allow, resource: {ports: [443]}, methods: [GET]}\n"
        "  - {id: k, effect: allow, resource: {tools: [\"*\"]}}\n"
        "  - {id: l, effect: allow, methods: [DELETE]}\n"
        "  - {id: m, effect: allow, time: {days: [mon]}}\n"
        "  - {id: n, effect: allow, time: {days: [tue], hours: \"09:00-10:00\"}}\n"
        "  - {id: o, effect: allow, principals: [\"agent-*\"], methods: [PATCH]}\n"
        "  - {id: p, effect: allow, principals: [\"*-1\"], methods: [PATCH]}\n");
    /* A tools list never matches a request without a tool, so "*" does not cover no tools. */
    lint_none("rules:\n"
              "  - {id: tools, effect: allow, resource: {tools: [\"*\"]}}\n"
              "  - {id: any, effect: allow, resource: {hosts: [a.example]}}\n");
    /* A schemes list without ws and wss does not cover a rule without schemes. */
    lint_none("rules:\n"
              "  - {id: web, effect: allow, resource: {schemes: [http, https]}}\n"
              "  - {id: any, effect: allow, resource: {hosts: [a.example]}}\n");
    /* Delegation conditions are never judged: no warning either way. */
    lint_none("rules:\n"
              "  - {id: chain, effect: deny, delegation: {require_actors: [\"x*\"]}}\n"
              "  - {id: any, effect: allow, resource: {hosts: [a.example]}}\n");
    /* A deny for a bare prefix and its tree, names and subdomains: clean. */
    lint_none(
        "rules:\n"
        "  - id: no\n"
        "    effect: deny\n"
        "    resource:\n"
        "      hosts: [evil.com, \"**.evil.com\", \"*.bad.example\", bad.example, "
        "\"*.*.bad.example\"]\n"
        "      paths: [\"/admin\", \"/admin/**\", \"/.git\", \"/.git/**\", \"/**/.git/**\"]\n"
        "  - {id: x, effect: deny, resource: {paths: [\"/**/x\", \"/x\"]}}\n"
        "  - {id: y, effect: deny, resource: {hosts: [y.example], paths: [\"/**/y\", \"/**\"]}}\n"
        "  - {id: open, effect: allow, resource: {hosts: [pub.example], paths: [\"/pub/**\"]},"
        " principals: [agent-1]}\n");
}

/* The work is bounded: a policy too large to compare every pair gets one last warning saying so,
 * and no claim about the rules not compared. */
static void test_lint_bounded(void **state)
{
    size_t cap = 8001 * 100, n;
    char *text = malloc(cap);
    struct lint_seen s;

    (void)state;
    assert_non_null(text);
    n = (size_t)snprintf(text, cap, "rules:\n");
    for (int i = 0; i < 8000; i++)
        n += (size_t)snprintf(text + n, cap - n,
                              "  - {id: r%d, effect: allow, resource: {paths: [\"/a%d/*\"]}}\n", i,
                              i);
    /* The last rule's glob warning is still given: those look at one rule at a time. */
    n += (size_t)snprintf(text + n, cap - n,
                          "  - {id: last, effect: deny, resource: {hosts: [\"**.evil.com\"]}}\n");
    s = lint_of(text);
    assert_int_equal(s.n, 2);
    assert_non_null(strstr(s.text[0], "the policy is too large to compare every pair of rules"));
    assert_string_equal(s.rule[1], "last");
    assert_non_null(strstr(s.text[1], "add \"evil.com\" to hosts"));
    free(text);

    /* The bare-prefix check matches every path pattern of a rule against every other: with long
     * patterns full of "**" each match is costly, and 500 + 500 of them kept a load (and the
     * decisions waiting on a reload) busy for minutes. Now the matches share the steps: 60 + 60
     * of them already spend the budget, and the last warning says so. */
    cap = 200000;
    text = malloc(cap);
    assert_non_null(text);
    n = (size_t)snprintf(text, cap,
                         "rules:\n  - id: slow\n    effect: deny\n    resource:\n"
                         "      paths: [");
    for (int i = 0; i < 120; i++) {
        n += (size_t)snprintf(text + n, cap - n, "%s\"/", i > 0 ? ", " : "");
        if (i < 60) {
            n += (size_t)snprintf(text + n, cap - n, "%04d", i);
            for (int k = 0; k < 500; k++)
                text[n++] = 'a';
            n += (size_t)snprintf(text + n, cap - n, "/**\"");
        } else {
            for (int k = 0; k < 169; k++)
                n += (size_t)snprintf(text + n, cap - n, "**a");
            n += (size_t)snprintf(text + n, cap - n, "q%d\"", i);
        }
    }
    n += (size_t)snprintf(text + n, cap - n, "]\n");
    assert_true(n < cap);
    s = lint_of(text);
    /* Before, every one of the 60 bare prefixes was checked and warned about, and no more. */
    assert_true(s.n >= 1 && s.n < 60);
    assert_non_null(strstr(s.text[s.n < 8 ? s.n - 1 : 7],
                           "the policy is too large to compare every pair of "
                           "rules: rules from \"slow\" on were not checked for "
                           "shadowing nor for their path patterns"));
    free(text);
}

static void test_lint_globs(void **state)
{
    (void)state;
    lint_one("rules:\n"
             "  - id: no-admin\n"
             "    effect: deny\n"
             "    resource: {paths: [\"/admin/**\"]}\n",
             "no-admin", 2, 5,
             "path pattern \"/admin/**\" does not match \"/admin\" itself (only \"/admin/\" and "
             "below): a request for \"/admin\" escapes this deny rule; add \"/admin\" to paths");
    lint_one("rules:\n"
             "  - id: ask\n"
             "    effect: escalate\n"
             "    resource: {paths: [\"/pay/**\"]}\n",
             "ask", 2, 5, "a request for \"/pay\" skips the operator (escalate rule)");
    lint_one("rules:\n"
             "  - id: no-evil\n"
             "    effect: deny\n"
             "    resource: {hosts: [\"**.evil.com\"]}\n",
             "no-evil", 2, 5,
             "host pattern \"**.evil.com\" does not match \"evil.com\" itself (only names below "
             "it): a request to \"evil.com\" escapes this deny rule; add \"evil.com\" to hosts");
    lint_one("rules:\n"
             "  - id: no-evil\n"
             "    effect: deny\n"
             "    resource: {hosts: [\"*.Evil.com.\", \"*.*.evil.com\"]}\n",
             "no-evil", 2, 5, "add \"evil.com\" to hosts");
    /* "*.x" is one label before x (the vault's "*.x" is one or more): a.b.x escapes a deny. */
    lint_one("rules:\n"
             "  - id: no-evil\n"
             "    effect: deny\n"
             "    resource: {hosts: [\"*.evil.com\", evil.com]}\n",
             "no-evil", 2, 5,
             "host pattern \"*.evil.com\" matches exactly one label before \"evil.com\": a request "
             "to \"a.b.evil.com\" escapes this deny rule; write \"**.evil.com\" for every name "
             "below \"evil.com\"");
    lint_one("rules:\n"
             "  - id: ask\n"
             "    effect: escalate\n"
             "    resource: {hosts: [\"*.pay.example\", pay.example]}\n",
             "ask", 2, 5, "a request to \"a.b.pay.example\" skips the operator (escalate rule)");
    lint_one("rules:\n"
             "  - id: no-git\n"
             "    effect: deny\n"
             "    resource: {paths: [\"/**/.git/**\"]}\n",
             "no-git", 2, 5,
             "path pattern \"/**/.git/**\" needs at least one segment where \"/**/\" stands, so it "
             "does not match the paths of \"/.git/**\"");
    lint_one("rules:\n"
             "  - id: no-z\n"
             "    effect: deny\n"
             "    resource: {paths: [\"/a/**/z\"]}\n",
             "no-z", 2, 5, "add \"/a/z\" to paths");
    /* A WebSocket request is an HTTP GET to the same server: "http" without "ws" in a deny. */
    lint_one("rules:\n"
             "  - id: no-plain\n"
             "    effect: deny\n"
             "    resource: {schemes: [HTTP], hosts: [\"10.0.0.5\"]}\n",
             "no-plain", 2, 5,
             "schemes has \"http\" but not \"ws\": a WebSocket request (ws://) to the same server "
             "is an HTTP GET there, and escapes this deny rule; add \"ws\" to schemes");
    lint_one("rules:\n"
             "  - id: ask\n"
             "    effect: escalate\n"
             "    resource: {schemes: [https, ws]}\n",
             "ask", 2, 5, "schemes has \"https\" but not \"wss\"");
    lint_none("rules:\n"
              "  - {id: no, effect: deny, resource: {schemes: [http, ws, wss, https], hosts: "
              "[x.example]}}\n"
              "  - {id: web, effect: allow, resource: {schemes: [https]}}\n");
    /* In an allow rule a bare name that is not matched is denied by default: no warning. */
    lint_none("rules:\n"
              "  - id: repos\n"
              "    effect: allow\n"
              "    resource: {hosts: [\"**.github.com\"], paths: [\"/repos/**\", \"/**/x\"]}\n");
}

static void test_delegation(void **state)
{
    struct sworn_policy *p;
    static const char *const d0 = "";
    /* Since finding 6 of issue 12, an actor is (issuer, subject): the chain's actors come from
     * the trusted issuer "idp", and require_actors of an allow needs trusted_issuers. */
    static const char *const d1 = ",\"delegation\":{\"subject\":\"user\",\"actors\":[{"
                                  "\"subject\":\"svc-a\",\"issuer\":\"idp\"}],\"may_act\":"
                                  "\"allowed\"}";
    static const char *const d3 =
        ",\"delegation\":{\"subject\":\"user\",\"actors\":[{\"subject\":\"svc-c\",\"issuer\":"
        "\"idp\"},{\"subject\":\"svc-b\",\"issuer\":\"idp\"},{\"subject\":\"svc-a\",\"issuer\":"
        "\"idp\"}],\"may_act\":\"denied\"}";
    static const char *const dbad =
        ",\"delegation\":{\"subject\":\"user\",\"actors\":[{\"subject\":\"svc-a\",\"issuer\":"
        "\"idp\"},{\"subject\":\"untrusted-x\",\"issuer\":\"idp\"}]}";

    (void)state;
    p = sworn_pfix_load("trusted_issuers: [idp]\n"
                        "rules:\n"
                        "  - id: direct-only\n"
                        "    effect: allow\n"
                        "    principals: [direct]\n"
                        "    delegation: {required: false}\n"
                        "  - id: chain\n"
                        "    effect: allow\n"
                        "    principals: [chain]\n"
                        "    delegation:\n"
                        "      required: true\n"
                        "      max_depth: 2\n"
                        "      require_actors: [\"svc-a\"]\n"
                        "      forbid_actors: [\"untrusted-*\"]\n"
                        "      may_act: allowed\n"
                        "  - id: depth\n"
                        "    effect: allow\n"
                        "    principals: [depth]\n"
                        "    delegation: {max_depth: 1}\n"
                        "  - id: no-untrusted\n"
                        "    effect: deny\n"
                        "    delegation: {require_actors: [\"untrusted-*\"]}\n"
                        "    principals: [forbid]\n"
                        "  - id: forbid-fallback\n"
                        "    effect: allow\n"
                        "    principals: [forbid]\n");
#define D(who, extra, eff, rule)                                                                   \
    expect(p, NULL, http(who, "https", "x", 443, "/", "GET", extra), T0, eff, rule)
    D("direct", d0, ALLOW, "direct-only");
    D("direct", d1, DENY, "");
    D("chain", d0, DENY, "");
    D("chain", d1, ALLOW, "chain");
    D("chain", d3, DENY, ""); /* depth 3 > 2, and may_act denied */
    D("chain", dbad, DENY, "");
    D("depth", d0, ALLOW, "depth"); /* no delegation: depth 0 */
    D("depth", d1, ALLOW, "depth");
    D("depth", d3, DENY, "");
    /* require_actors in a deny rule: only a chain with such an actor is denied. */
    D("forbid", d0, ALLOW, "forbid-fallback");
    D("forbid", d1, ALLOW, "forbid-fallback");
    D("forbid", dbad, DENY, "no-untrusted");
#undef D
    sworn_policy_free(p);
    p = sworn_pfix_load("trusted_issuers: [idp]\n"
                        "rules:\n"
                        "  - id: may\n"
                        "    effect: allow\n"
                        "    delegation: {may_act: not_present, require_actors: [\"svc-?\"]}\n");
    expect(p, NULL,
           http("a", "https", "x", 443, "/", "GET",
                ",\"delegation\":{\"subject\":\"u\",\"actors\":[{\"subject\":\"svc-a\","
                "\"issuer\":\"idp\"}],\"may_act\":\"not_present\"}"),
           T0, ALLOW, "may");
    /* may_act absent in the request counts as unknown. */
    expect(p, NULL,
           http("a", "https", "x", 443, "/", "GET",
                ",\"delegation\":{\"subject\":\"u\",\"actors\":[{\"subject\":\"svc-a\","
                "\"issuer\":\"idp\"}]}"),
           T0, DENY, "");
    expect(p, NULL, http("a", "https", "x", 443, "/", "GET", ""), T0, DENY, "");
    sworn_policy_free(p);

    /* Issue 16: verified and require_scopes. */
    p = sworn_pfix_load("rules:\n"
                        "  - id: v\n"
                        "    effect: allow\n"
                        "    delegation: {verified: true, require_scopes: [\"repo:read\"]}\n"
                        "  - id: unverified-only\n"
                        "    effect: allow\n"
                        "    principals: [u]\n"
                        "    delegation: {verified: false}\n");
#define V(who, extra, eff, rule)                                                                   \
    expect(                                                                                        \
        p, NULL,                                                                                   \
        http(who, "https", "x", 443, "/", "GET", ",\"delegation\":{\"subject\":\"u\"" extra "}"),  \
        T0, eff, rule)
    V("a",
      ",\"scopes\":[\"a\",\"repo:read\"],\"verification\":{\"result\":\"verified\","
      "\"key_id\":\"k\",\"alg\":\"ES256\"}",
      ALLOW, "v");
    /* Not verified, or no verification recorded (an older proxy): not verified. */
    V("a", ",\"scopes\":[\"repo:read\"],\"verification\":{\"result\":\"not_verified\"}", DENY, "");
    V("a", ",\"scopes\":[\"repo:read\"]", DENY, "");
    /* A scope is matched whole: "repo:read:all" and "repo" are other scopes. */
    V("a",
      ",\"scopes\":[\"repo:read:all\",\"repo\"],\"verification\":{\"result\":\"verified\","
      "\"key_id\":\"k\",\"alg\":\"ES256\"}",
      DENY, "");
    V("u", ",\"verification\":{\"result\":\"not_verified\"}", ALLOW, "unverified-only");
    V("u", "", ALLOW, "unverified-only");
#undef V
    /* verified without a delegation: no match. */
    expect(p, NULL, http("u", "https", "x", 443, "/", "GET", ""), T0, DENY, "");
    sworn_policy_free(p);

    /* client_ids and audiences: exact strings. */
    p = sworn_pfix_load("rules:\n"
                        "  - id: c\n"
                        "    effect: allow\n"
                        "    delegation: {client_ids: [agent-client], audiences: "
                        "[\"https://api.example\"]}\n");
#define C(extra, eff, rule)                                                                        \
    expect(                                                                                        \
        p, NULL,                                                                                   \
        http("a", "https", "x", 443, "/", "GET", ",\"delegation\":{\"subject\":\"u\"" extra "}"),  \
        T0, eff, rule)
    C(",\"client_id\":\"agent-client\",\"audience\":[\"x\",\"https://api.example\"]", ALLOW, "c");
    C(",\"client_id\":\"Agent-client\",\"audience\":[\"https://api.example\"]", DENY, "");
    C(",\"client_id\":\"agent-client\",\"audience\":[\"https://api.example/\"]", DENY, "");
    C(",\"client_id\":\"agent-client\"", DENY, "");
    C("", DENY, "");
#undef C
    sworn_policy_free(p);
}

/* A delegation of one actor (subject, issuer), as the extra text of http(). */
static const char *deleg1(const char *subject, const char *issuer)
{
    static char buf[1024];

    snprintf(buf, sizeof(buf),
             ",\"delegation\":{\"subject\":\"user\",\"issuer\":\"idp\",\"actors\":[{"
             "\"subject\":\"%s\",\"issuer\":\"%s\"}]}",
             subject, issuer);
    return buf;
}

/*
 * Finding 6 of issue 12: an actor is the pair (issuer, subject). Before the fix, svc-a from
 * attacker-idp satisfied require_actors: [svc-a] (the review's case, first below). Plain items
 * read in the direction that fails closed, for each effect; mapping items name the issuer.
 */
static void test_actor_issuers(void **state)
{
    struct sworn_policy *p;

    (void)state;
    p = sworn_pfix_load("trusted_issuers: [\"https://idp\", \"https://b\", \"https://a\"]\n"
                        "rules:\n"
                        "  - id: no-evil\n"
                        "    effect: deny\n"
                        "    principals: [deny-req]\n"
                        "    delegation: {require_actors: [svc-evil]}\n"
                        "  - id: need-auditor\n"
                        "    effect: deny\n"
                        "    principals: [deny-forbid]\n"
                        "    delegation: {forbid_actors: [auditor]}\n"
                        "  - id: ask-evil\n"
                        "    effect: escalate\n"
                        "    principals: [esc-req]\n"
                        "    delegation: {require_actors: [svc-evil]}\n"
                        "  - id: ask-unless-reviewer\n"
                        "    effect: escalate\n"
                        "    principals: [esc-forbid]\n"
                        "    delegation: {forbid_actors: [reviewer]}\n"
                        "  - id: svc-a\n"
                        "    effect: allow\n"
                        "    principals: [allow-req]\n"
                        "    delegation: {require_actors: [svc-a]}\n"
                        "  - id: not-untrusted\n"
                        "    effect: allow\n"
                        "    principals: [allow-forbid]\n"
                        "    delegation: {forbid_actors: [\"untrusted-*\"]}\n"
                        "  - id: mapped\n"
                        "    effect: allow\n"
                        "    principals: [allow-map]\n"
                        "    delegation:\n"
                        "      require_actors: [{issuer: \"https://other\", subject: \"svc-*\"}]\n"
                        "  - id: fallback\n"
                        "    effect: allow\n"
                        "    principals: [deny-req, deny-forbid, esc-req, esc-forbid]\n");
#define A(who, sub, iss, eff, rule)                                                                \
    expect(p, NULL, http(who, "https", "x", 443, "/", "GET", deleg1(sub, iss)), T0, eff, rule)
    /* allow, require_actors: narrow. */
    A("allow-req", "svc-a", "attacker-idp", DENY, ""); /* the review's: allowed before */
    A("allow-req", "svc-a", "https://idp", ALLOW, "svc-a");
    A("allow-req", "svc-a", "https://a", ALLOW, "svc-a"); /* every trusted issuer (bsearch) */
    A("allow-req", "svc-a", "https://b", ALLOW, "svc-a");
    A("allow-req", "svc-a", "", DENY, "");
    A("allow-req", "svc-a", "HTTPS://IDP", DENY, "");
    A("allow-req", "svc-a", "https://idp/", DENY, "");
    A("allow-req", "svc-a", "https://c", DENY, "");
    A("allow-req", "svc-a", "https://0", DENY, "");
    /* allow, forbid_actors: broad. */
    A("allow-forbid", "untrusted-x", "attacker-idp", DENY, "");
    A("allow-forbid", "untrusted-x", "", DENY, "");
    A("allow-forbid", "untrusted-x", "https://idp", DENY, "");
    A("allow-forbid", "svc-a", "attacker-idp", ALLOW, "not-untrusted");
    /* allow, mapping: that issuer exactly. */
    A("allow-map", "svc-b", "https://other", ALLOW, "mapped");
    A("allow-map", "svc-b", "https://idp", DENY, "");
    A("allow-map", "svc-b", "https://OTHER", DENY, "");
    A("allow-map", "svc-b", "", DENY, "");
    A("allow-map", "x", "https://other", DENY, "");
    /* deny, require_actors: broad. */
    A("deny-req", "svc-evil", "attacker-idp", DENY, "no-evil");
    A("deny-req", "svc-evil", "", DENY, "no-evil");
    A("deny-req", "svc-evil", "https://idp", DENY, "no-evil");
    A("deny-req", "svc-good", "attacker-idp", ALLOW, "fallback");
    /* deny, forbid_actors: narrow. */
    A("deny-forbid", "auditor", "https://idp", ALLOW, "fallback");
    A("deny-forbid", "auditor", "attacker-idp", DENY, "need-auditor");
    A("deny-forbid", "auditor", "", DENY, "need-auditor");
    A("deny-forbid", "auditor", "HTTPS://IDP", DENY, "need-auditor");
    /* escalate, require_actors: broad. */
    A("esc-req", "svc-evil", "attacker-idp", ESCALATE, "ask-evil");
    A("esc-req", "svc-evil", "", ESCALATE, "ask-evil");
    A("esc-req", "svc-evil", "https://idp", ESCALATE, "ask-evil");
    /* escalate, forbid_actors: narrow. */
    A("esc-forbid", "reviewer", "https://idp", ALLOW, "fallback");
    A("esc-forbid", "reviewer", "attacker-idp", ESCALATE, "ask-unless-reviewer");
    A("esc-forbid", "reviewer", "", ESCALATE, "ask-unless-reviewer");
#undef A
    sworn_policy_free(p);

    /* Broad plain items and mapping items need no trusted_issuers. */
    p = sworn_pfix_load("rules:\n"
                        "  - id: no-evil\n"
                        "    effect: deny\n"
                        "    delegation: {require_actors: [svc-evil]}\n"
                        "  - id: ok\n"
                        "    effect: allow\n"
                        "    delegation:\n"
                        "      forbid_actors: [\"untrusted-*\"]\n"
                        "      require_actors:\n"
                        "        - {issuer: \"https://idp\", subject: svc-a}\n"
                        "        - issuer: \"https://idp\"\n"
                        "          subject: \"svc-?\"\n");
    expect(p, NULL, http("a", "https", "x", 443, "/", "GET", deleg1("svc-a", "https://idp")), T0,
           ALLOW, "ok");
    expect(p, NULL, http("a", "https", "x", 443, "/", "GET", deleg1("svc-a", "other")), T0, DENY,
           "");
    expect(p, NULL, http("a", "https", "x", 443, "/", "GET", deleg1("svc-evil", "https://idp")), T0,
           DENY, "no-evil");
    sworn_policy_free(p);
}

/*
 * Finding 6: what the loader refuses about actors and issuers (section 5 of docs/policy.md).
 * A narrow plain item without trusted_issuers would match nothing: refused, naming the way out.
 */
static void test_actor_load_refusals(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {require_actors: [svc-a]}\n",
         "4:35: \"svc-a\" in require_actors of allow rule a matches only actors of a trusted "
         "issuer, and the policy has no trusted_issuers: name the issuer ({issuer: \"...\", "
         "subject: \"svc-a\"}) or list trusted_issuers"},
        {"rules:\n  - id: a\n    effect: deny\n    delegation: {forbid_actors: [x]}\n",
         "4:34: \"x\" in forbid_actors of a deny or escalate rule a matches only actors of a "
         "trusted issuer"},
        {"rules:\n  - id: a\n    effect: escalate\n    delegation: {forbid_actors: [x]}\n",
         "4:34: \"x\" in forbid_actors of a deny or escalate rule a"},
        {"trusted_issuers: []\nrules:\n  - {id: a, effect: deny}\n",
         "1:18: trusted_issuers is an empty list"},
        {"trusted_issuers: idp\nrules:\n  - {id: a, effect: deny}\n",
         "1:18: trusted_issuers must be a list"},
        {"trusted_issuers: [\"\"]\nrules:\n  - {id: a, effect: deny}\n",
         "1:19: a trusted issuer is empty (an actor without an issuer is never trusted"},
        {"trusted_issuers: [[idp]]\nrules:\n  - {id: a, effect: deny}\n",
         "1:19: items of trusted_issuers must be strings"},
        {"trusted_issuers: [{issuer: idp}]\nrules:\n  - {id: a, effect: deny}\n",
         "1:19: items of trusted_issuers must be strings"},
        {"trusted_issuers: [\"a\\tb\"]\nrules:\n  - {id: a, effect: deny}\n",
         "1:19: a trusted issuer is 1..1024 bytes on one line"},
        {"trusted_issuers: [\"https://*.idp\"]\nrules:\n  - {id: a, effect: deny}\n",
         "1:19: a trusted issuer \"https://*.idp\" holds '*' or '?': issuers are compared exactly"},
        {"trusted_issuers: [\"https://idp?\"]\nrules:\n  - {id: a, effect: deny}\n",
         "1:19: a trusted issuer \"https://idp?\" holds '*' or '?'"},
        {"trusted_issuer: [idp]\nrules:\n  - {id: a, effect: deny}\n",
         "1:1: unknown key \"trusted_issuer\""},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {require_actors: [{subject: x}]}\n",
         "4:35: an item of require_actors that is a mapping needs an issuer"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {require_actors: [{issuer: i}]}\n",
         "4:35: an item of require_actors that is a mapping needs a subject"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: [{}]}\n",
         "4:34: an actor is an empty mapping"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: [{issuer: i, "
         "subject: x, sub: y}]}\n",
         "4:58: unknown key \"sub\""},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: [{issuer: \"\", "
         "subject: x}]}\n",
         "4:43: an actor's issuer is empty"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: [{issuer: \"*\", "
         "subject: x}]}\n",
         "4:43: an actor's issuer \"*\" holds '*' or '?'"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: [{issuer: [i], "
         "subject: x}]}\n",
         "4:43:"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: [{issuer: i, "
         "subject: \"a**\"}]}\n",
         "4:55: bad pattern in forbid_actors: \"**\" outside a path pattern"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: [{issuer: i, "
         "subject: \"\"}]}\n",
         "4:55: bad pattern in forbid_actors: an empty pattern"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: [[x]]}\n",
         "4:34: items of forbid_actors are subject globs or {issuer, subject} mappings"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: x}\n",
         "4:33: forbid_actors must be a list"},
        /* Only these two lists hold mappings. */
        {"rules:\n  - id: a\n    effect: allow\n    principals: [{issuer: i, subject: x}]\n",
         "4:18: items of principals must be strings"},
    };
    char *big, *text;
    size_t n = 1025;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        refused(cases[i].text, cases[i].want);
    /* An issuer of 1025 bytes is refused; 1024 loads. */
    big = malloc(n + 1);
    text = malloc(n + 128);
    assert_non_null(big);
    assert_non_null(text);
    memset(big, 'i', n);
    big[n] = '\0';
    snprintf(text, n + 128, "trusted_issuers: [\"%s\"]\nrules:\n  - {id: a, effect: deny}\n", big);
    refused(text, "1:19: a trusted issuer is 1..1024 bytes");
    big[n - 1] = '\0';
    snprintf(text, n + 128, "trusted_issuers: [\"%s\"]\nrules:\n  - {id: a, effect: deny}\n", big);
    sworn_policy_free(sworn_pfix_load(text));
    free(big);
    free(text);
}

/*
 * Finding 5 of issue 12: a non-empty method that is not an upper-case RFC 9110 token is denied
 * before any rule (before the fix `delete` passed a deny of DELETE). What the decision socket's
 * decoder refuses as a malformed frame (control characters, invalid UTF-8, more than 32 bytes)
 * makes the evaluation fail, and decisiond refuses and records the frame.
 */
static void test_method_refused(void **state)
{
    static const char *const refused_methods[] = {
        "delete",   "Delete", "DELETE ", " DELETE", "DEL ETE", " ",    "DEL\xc3\x89TE",
        "GET,POST", "(GET)",  "GET/1",   "\"GET\"", "G@T",     "GE:T",
    };
    static const char *const malformed[] = {
        "GET\t",      "GET\r\n", "\tGET",           "GET\x7f",
        "G\xc2\x85T", "G\xffT",  "GET\xe2\x80\x8b", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"};
    struct sworn_policy *p =
        sworn_pfix_load("rules:\n"
                        "  - {id: no-delete, effect: deny, methods: [DELETE]}\n"
                        "  - {id: open, effect: allow}\n");
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;
    char *saved;

    (void)state;
    expect(p, NULL, http("a", "https", "x", 443, "/", "DELETE", ""), T0, DENY, "no-delete");
    expect(p, NULL, http("a", "https", "x", 443, "/", "GET", ""), T0, ALLOW, "open");
    expect(p, NULL, http("a", "https", "x", 443, "/", "", ""), T0, ALLOW, "open");
    expect(p, NULL, http("a", "https", "x", 443, "/", "!#$%&'*+-.^_`|~09AZ", ""), T0, ALLOW,
           "open");
    for (size_t i = 0; i < sizeof(refused_methods) / sizeof(refused_methods[0]); i++) {
        r = http("a", "https", "x", 443, "/", "GET", "");
        saved = r->context->method;
        r->context->method = (char *)refused_methods[i];
        res = ev(p, NULL, r, T0);
        if (res.effect != DENY || res.rule_id[0] != '\0' ||
            strncmp(res.reason, "the method is refused: ", 23) != 0 ||
            strstr(res.reason, "; denied before any rule") == NULL)
            fail_msg("method \"%s\": %s", refused_methods[i], res.reason);
        r->context->method = saved;
        rfree(r);
    }
    for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
        r = http("a", "https", "x", 443, "/", "GET", "");
        saved = r->context->method;
        r->context->method = (char *)malformed[i];
        if (sworn_policy_eval(p, NULL, r, T0, &res) != -1)
            fail_msg("method %zu passed the decoder's check: %s", i, res.reason);
        assert_int_equal(res.effect, DENY);
        r->context->method = saved;
        rfree(r);
    }
    /* A hand-built message without a method string is no method. */
    r = http("a", "https", "x", 443, "/", "GET", "");
    saved = r->context->method;
    r->context->method = NULL;
    res = ev(p, NULL, r, T0);
    assert_int_equal(res.effect, ALLOW);
    r->context->method = saved;
    rfree(r);
    /* A method-override header, in any case, is refused whatever the method: its value (not
     * seen by the policy) is what some frameworks run. */
    {
        /* '_' for '-' (CGI, WSGI, Rack and PHP carry both as HTTP_X_HTTP_METHOD_OVERRIDE, so
         * Puma and Rack::MethodOverride run it) and spaces around the name (lenient parsers
         * trim them) are the same header. */
        static const char *const names[] = {"X-HTTP-Method-Override", "x-http-method",
                                            "X-Method-Override",      "X_HTTP_METHOD_OVERRIDE",
                                            "x_http-method",          "X_Method_Override"};
        /* Spaces around a name, a colon, non-ASCII: not a token, refused as such first. */
        static const char *const not_tokens[] = {
            "x-http-method-override ", " X-HTTP-Method",
            "x-http-method-override:", "X-HTTP-Method-Override\u00a0"};

        for (size_t i = 0; i < sizeof(not_tokens) / sizeof(not_tokens[0]); i++) {
            r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":"
                   "\"http.request\",\"resource\":{\"scheme\":\"https\",\"host\":\"x\","
                   "\"port\":443,\"path\":\"/\"},\"context\":{\"method\":\"POST\","
                   "\"header_names\":[\"accept\",\"%s\"]}}",
                   not_tokens[i]);
            res = ev(p, NULL, r, T0);
            if (res.effect != DENY || res.rule_id[0] != '\0' ||
                strstr(res.reason, "the request is refused: header name 1 ") == NULL)
                fail_msg("header %s: %s", not_tokens[i], res.reason);
            rfree(r);
        }

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":"
                   "\"http.request\",\"resource\":{\"scheme\":\"https\",\"host\":\"x\","
                   "\"port\":443,\"path\":\"/\"},\"context\":{\"method\":\"POST\","
                   "\"header_names\":[\"accept\",\"%s\"]}}",
                   names[i]);
            res = ev(p, NULL, r, T0);
            if (res.effect != DENY || res.rule_id[0] != '\0' ||
                strstr(res.reason, "the method is refused: the request carries a method-override "
                                   "header") == NULL)
                fail_msg("header %s: %s", names[i], res.reason);
            rfree(r);
        }
        r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":"
               "\"http.request\",\"resource\":{\"scheme\":\"https\",\"host\":\"x\","
               "\"port\":443,\"path\":\"/\"},\"context\":{\"method\":\"POST\","
               "\"header_names\":[\"x-http-method-overridden\",\"x_http_method_overrides\","
               "\"xhttpmethod\"]}}");
        res = ev(p, NULL, r, T0);
        assert_int_equal(res.effect, ALLOW);
        rfree(r);
    }
    /* At load, the same test: a method no request can carry is refused. */
    refused("rules:\n  - {id: a, effect: deny, methods: [\"DEL ETE\"]}\n",
            "2:37: \"DEL ETE\" is not an HTTP method in upper case");
    sworn_policy_free(p);
}

static void test_load_refusals(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"rules: []\n", "1:8: rules must be a non-empty list"},
        {"version: 1\n", "1:1: the policy needs a rules list"},
        {"rulez: []\n", "1:1: unknown key \"rulez\""},
        {"version: -1\nrules:\n  - {id: a, effect: deny}\n", "1:10:"},
        {"rules:\n  - id: a\n    effect: allow\n    colour: red\n", "4:5: unknown key \"colour\""},
        {"rules:\n  - id: a\n    effect: permit\n", "3:13: effect must be allow, deny or escalate"},
        {"rules:\n  - effect: deny\n", "2:5: a rule needs an id"},
        {"rules:\n  - id: a\n", "2:5: rule a needs an effect"},
        {"rules:\n  - id: \"a b\"\n    effect: deny\n", "2:9: a rule id is 1..128"},
        {"rules:\n  - id: a\n    effect: deny\n  - id: a\n    effect: allow\n",
         "4:9: duplicate rule id \"a\""},
        {"rules:\n  - id: a\n    effect: deny\n    principals: []\n",
         "4:17: principals is an empty"},
        {"rules:\n  - id: a\n    effect: deny\n    principals: agent\n",
         "4:17: principals must be a list"},
        {"rules:\n  - id: a\n    effect: deny\n    principals: [[x]]\n",
         "4:18: items of principals must be strings"},
        {"rules:\n  - id: a\n    effect: deny\n    principals: [\"a**\"]\n",
         "4:18: bad pattern in principals: \"**\" outside a path pattern"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {paths: [\"/a/***\"]}\n",
         "4:24: bad pattern in paths: \"***\""},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {paths: [\"a/*\"]}\n",
         "4:24: path pattern \"a/*\" does not start with '/'"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"a*.example\"]}\n",
         "4:24: bad host pattern: '*' that is not a whole label"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"a.**.example\"]}\n",
         "4:24: bad host pattern"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"a..example\"]}\n",
         "4:24: bad host pattern: an empty label"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"b\u00fccher.example\"]}\n",
         "4:24: bad host pattern: a non-ASCII host pattern"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"x.example:443\"]}\n",
         "4:24: bad host pattern: a host pattern with ':'"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"**.\"]}\n",
         "4:24: bad host pattern"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {ports: [0]}\n", "4:24: 0 is outside"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {ports: [65536]}\n", "4:24:"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {schemes: [\"ht tp\"]}\n",
         "4:26: \"ht tp\" is not a URI scheme"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {}\n", "4:15: resource is an empty"},
        {"rules:\n  - id: a\n    effect: deny\n    resource: {port: [1]}\n",
         "4:16: unknown key \"port\""},
        {"rules:\n  - id: a\n    effect: deny\n    methods: [get]\n",
         "4:15: \"get\" is not an HTTP method in upper case"},
        {"rules:\n  - id: a\n    effect: deny\n    time: {hours: \"9:00-17:00\"}\n",
         "4:19: hours must be \"HH:MM-HH:MM\""},
        {"rules:\n  - id: a\n    effect: deny\n    time: {hours: \"17:00-09:00\"}\n",
         "4:19: hours must start before they end"},
        {"rules:\n  - id: a\n    effect: deny\n    time: {hours: \"09:00-24:01\"}\n", "4:19:"},
        {"rules:\n  - id: a\n    effect: deny\n    time: {hours: \"24:00-24:00\"}\n", "4:19:"},
        {"rules:\n  - id: a\n    effect: deny\n    time: {hours: \"09:60-10:00\"}\n", "4:19:"},
        {"rules:\n  - id: a\n    effect: deny\n    time: {days: [monday]}\n",
         "4:19: a day is one of"},
        {"rules:\n  - id: a\n    effect: deny\n    time: {days: [mon, mon]}\n",
         "4:24: day mon is listed twice"},
        {"rules:\n  - id: a\n    effect: deny\n    budget: {count: 1, window: 1m}\n",
         "4:13: budgets are only for allow rules"},
        {"rules:\n  - id: a\n    effect: escalate\n    sum: {pointer: /a, max: 1, window: 1m}\n",
         "4:10: budgets are only for allow rules"},
        {"rules:\n  - id: a\n    effect: deny\n    credential: gh\n",
         "4:17: a credential is only for allow rules"},
        {"rules:\n  - id: a\n    effect: allow\n    credential: \"g h\"\n",
         "4:17: a credential id"},
        {"rules:\n  - id: a\n    effect: allow\n    escalation_timeout: 1m\n",
         "4:25: escalation_timeout is only for escalate rules"},
        {"rules:\n  - id: a\n    effect: escalate\n    escalation_timeout: 8d\n",
         "4:25: escalation_timeout is 1s..7d"},
        {"rules:\n  - id: a\n    effect: allow\n    budget: {count: 0, window: 1m}\n",
         "4:21: 0 is outside"},
        {"rules:\n  - id: a\n    effect: allow\n    budget: {window: 1m}\n",
         "4:13: budget needs a count"},
        {"rules:\n  - id: a\n    effect: allow\n    budget: {count: 1}\n",
         "4:13: budget needs a window"},
        {"rules:\n  - id: a\n    effect: allow\n    budget: {count: 1, window: 500ms}\n",
         "4:32: a window is 1s..366d"},
        {"rules:\n  - id: a\n    effect: allow\n    budget: {count: 1, window: 1m, per: user}\n",
         "4:41: per must be principal, sandbox or global"},
        {"rules:\n  - id: a\n    effect: allow\n    budget: {count: 1, window: soon}\n", "4:32:"},
        {"rules:\n  - id: a\n    effect: allow\n    sum: {pointer: amount, max: 1, window: 1m}\n",
         "4:20: pointer must be an RFC 6901 JSON pointer"},
        {"rules:\n  - id: a\n    effect: allow\n    sum: {pointer: \"/a~2\", max: 1, window: 1m}\n",
         "4:20: pointer must be"},
        {"rules:\n  - id: a\n    effect: allow\n    sum: {pointer: /a, max: \"1.0000001\", window: "
         "1m}\n",
         "4:29: max: more than 6 decimal places"},
        {"rules:\n  - id: a\n    effect: allow\n    sum: {pointer: /a, max: -1, window: 1m}\n",
         "4:29: max: not a decimal amount"},
        {"rules:\n  - id: a\n    effect: allow\n    sum: {pointer: /a, max: 1e3, window: 1m}\n",
         "4:29: max: not a decimal amount"},
        {"rules:\n  - id: a\n    effect: allow\n    sum: {pointer: /a, max: 18446744073709.551616, "
         "window: 1m}\n",
         "4:29: max: an amount too large"},
        {"rules:\n  - id: a\n    effect: allow\n    sum: {pointer: /a, window: 1m}\n",
         "4:10: sum needs a max"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {required: false, max_depth: 1}\n",
         "4:28: required: false (no delegation) cannot be combined"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {required: yes}\n",
         "4:28: expected true or false"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {max_depth: 33}\n",
         "4:29: 33 is outside [0, 32]"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {may_act: maybe}\n",
         "4:27: may_act must be one of"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {client_ids: [\"\"]}\n",
         "4:31: client_ids: each item is 1..256 bytes"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {verified: yes}\n",
         "4:28: expected true or false"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {require_scopes: [\"a b\"]}\n",
         "4:35: require_scopes: each item is an RFC 6749 scope-token"},
        {"rules:\n  - id: a\n    effect: allow\n    delegation: {forbid_actors: []}\n",
         "4:33: forbid_actors is an empty list"},
        {"rules:\n  - id: a\n    effect: allow\n    reason: \"\"\n", "4:13: a reason is 1..1024"},
        {"rules:\n  - id: a\n    effect: allow\n    reason: \"two\\nlines\"\n",
         "4:13: a reason is 1..1024"},
        {"rules:\n  - id: a\n    effect: deny\n  - id: a\n    effect: deny\n    id: b\n", "6:5:"},
        {"rules:\n  - just-a-string\n", "2:5: a rule must be a mapping"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        refused(cases[i].text, cases[i].want);
}

static void test_digest_and_mem(void **state)
{
    static const char text[] = "version: 18446744073709551615\nrules:\n  - {id: x, effect: deny}\n";
    struct sworn_policy *p = NULL, *q;
    uint8_t d[32], want[32];

    (void)state;
    q = sworn_pfix_load(text);
    assert_int_equal(sworn_policy_load_mem("mem", (const uint8_t *)text, strlen(text), &p), 0);
    SHA256((const unsigned char *)text, strlen(text), want);
    sworn_policy_digest(p, d);
    assert_memory_equal(d, want, 32);
    sworn_policy_digest(q, d);
    assert_memory_equal(d, want, 32);
    assert_int_equal(sworn_policy_version(p), UINT64_MAX);
    sworn_policy_free(p);
    sworn_policy_free(q);
    assert_int_equal(sworn_policy_load_mem("mem", (const uint8_t *)"rules: [", 8, &p), -1);
    assert_non_null(strstr(sworn_err_msg(), "mem:"));
    assert_int_equal(sworn_policy_load_file("/nonexistent/policy.yaml", &p), -1);
}

static void test_eval_refuses_bad_request(void **state)
{
    struct sworn_policy *p = sworn_pfix_load("rules:\n  - {id: x, effect: allow}\n");
    Sworn__V1__AuthorizationRequest *r = http("a", "https", "x", 443, "/", "GET", "");
    struct sworn_policy_result res;
    char *saved = r->principal->id;

    (void)state;
    r->principal->id = (char *)"";
    assert_int_equal(sworn_policy_eval(p, NULL, r, T0, &res), -1);
    assert_int_equal(res.effect, DENY);
    assert_true(res.reason[0] != '\0');
    r->principal->id = saved;
    assert_int_equal(sworn_policy_eval(p, NULL, r, T0, &res), 0);
    assert_int_equal(res.effect, ALLOW);
    rfree(r);
    sworn_policy_free(p);
}

/*
 * sworn_policy_eval_canonical (decisiond's call: the resource canonicalised once per decision, on
 * a request checked as it was decoded) decides as sworn_policy_eval does, on an allow, a deny,
 * and a resource with no canonical form (the same reason); a canonical form of another request's
 * resource is an internal failure (-1, a deny), even when its bytes are equal.
 */
static void test_eval_canonical(void **state)
{
    struct sworn_policy *p =
        sworn_pfix_load("rules:\n"
                        "  - {id: d, effect: deny, resource: {paths: [\"/secret/**\"]}}\n"
                        "  - {id: a, effect: allow}\n");
    static const char *const paths[] = {"/x", "/secret/y", "/a/%2e%2e/secret/z", "/%2F"};
    static struct sworn_resource_canonical canon, other;
    struct sworn_policy_result want, got;

    (void)state;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        Sworn__V1__AuthorizationRequest *r = http("a", "https", "x", 443, paths[i], "GET", "");
        Sworn__V1__AuthorizationRequest *r2 = http("a", "https", "x", 443, paths[i], "GET", "");

        assert_int_equal(sworn_policy_eval(p, NULL, r, T0, &want), 0);
        sworn_resource_canonicalise(r->resource, &canon);
        assert_ptr_equal(canon.of, r->resource);
        assert_true(sworn_resource_canonical_is_of(&canon, r->resource));
        assert_int_equal(sworn_policy_eval_canonical(p, NULL, r, &canon, T0, &got), 0);
        assert_int_equal(got.effect, want.effect);
        assert_string_equal(got.rule_id, want.rule_id);
        assert_string_equal(got.reason, want.reason);
        /* NULL: canonicalised inside, as sworn_policy_eval. */
        assert_int_equal(sworn_policy_eval_canonical(p, NULL, r, NULL, T0, &got), 0);
        assert_string_equal(got.reason, want.reason);
        /* The same bytes, but not this request's resource. */
        sworn_resource_canonicalise(r2->resource, &other);
        assert_false(sworn_resource_canonical_is_of(&other, r->resource));
        assert_int_equal(sworn_policy_eval_canonical(p, NULL, r, &other, T0, &got), -1);
        assert_int_equal(got.effect, DENY);
        rfree(r);
        rfree(r2);
    }
    assert_int_equal(want.effect, DENY); /* "/%2F" has no canonical form */
    assert_non_null(strstr(want.reason, "the resource is refused"));
    sworn_policy_free(p);
}

/*
 * A request the proxy refused itself (AuthorizationRequest.refusal): sworn_policy_refusal and
 * sworn_policy_eval deny it by no rule, "refused by the proxy: <reason>", before every rule
 * (an allow-all policy, a credential rule), every resource check (an empty or uncanonical
 * resource) and every budget (nothing charged); without a refusal it returns 0.
 */
static void test_proxy_refusal(void **state)
{
    struct sworn_policy *p = sworn_pfix_load("rules:\n"
                                             "  - id: all\n"
                                             "    effect: allow\n"
                                             "    credential: github\n"
                                             "    budget: {count: 1, window: 1h}\n");
    struct sworn_budgets *b;
    struct sworn_policy_result res;
    Sworn__V1__AuthorizationRequest *r;
    char *back;
    static const char refusal[] =
        ",\"refusal\":{\"status\":400,\"reason\":\"obs-fold in a header\",\"head_sha256\":"
        "\"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\"}";

    (void)state;
    assert_int_equal(sworn_budgets_new(&b), 0);
    /* The function itself: 1 with the deny, or 0 leaving out untouched. */
    r = http("a", "https", "x", 443, "/", "GET", refusal);
    memset(&res, 0x55, sizeof(res));
    assert_int_equal(sworn_policy_refusal(r, &res), 1);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.rule_id, "");
    assert_string_equal(res.reason, "refused by the proxy: obs-fold in a header");
    assert_string_equal(res.credential_id, "");
    assert_int_equal(res.escalation_timeout_ms, 0);
    for (size_t i = 0; i < SWORN_POLICY_CHARGES; i++)
        assert_int_equal(res.charges[i].used, 0);
    /* The JSON form round-trips the refusal. */
    back = sworn_reqjson_print_request(r);
    assert_non_null(back);
    assert_non_null(strstr(back, "\"refusal\":{\"status\":400,\"reason\":\"obs-fold in a "
                                 "header\",\"head_sha256\":\"000102"));
    {
        Sworn__V1__AuthorizationRequest *again = NULL;
        char *twice;

        assert_int_equal(sworn_reqjson_parse(back, strlen(back), &again), 0);
        twice = sworn_reqjson_print_request(again);
        assert_string_equal(twice, back);
        free(twice);
        rfree(again);
    }
    free(back);
    /* Eval gives the same answer, charges nothing: the allow that follows still has its 1. */
    expect(p, b, r, T0, DENY, "");
    r = http("a", "https", "x", 443, "/", "GET", refusal);
    res = ev(p, b, r, T0);
    assert_string_equal(res.reason, "refused by the proxy: obs-fold in a header");
    rfree(r);
    assert_int_equal(sworn_budgets_count(b), 0);
    /* Before the resource checks: an empty resource, an uncanonical one, a refused method. */
    r = rq("{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"http.request\","
           "\"resource\":{},\"refusal\":{\"status\":431,\"reason\":\"request head too large\"}}");
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, DENY);
    assert_string_equal(res.reason, "refused by the proxy: request head too large");
    rfree(r);
    expect(p, b, http("a", "https", "0177.0.0.1", 443, "/a/%2F", "get", refusal), T0, DENY, "");
    /* Without a refusal: 0, and the result is left alone; the policy decides. */
    r = http("a", "https", "x", 443, "/", "GET", "");
    memset(&res, 0x55, sizeof(res));
    assert_int_equal(sworn_policy_refusal(r, &res), 0);
    assert_int_equal(res.rule_id[0], 0x55);
    assert_int_equal(sworn_policy_refusal(NULL, &res), 0);
    res = ev(p, b, r, T0);
    assert_int_equal(res.effect, ALLOW);
    assert_string_equal(res.credential_id, "github");
    rfree(r);
    /* Refusals the request form itself refuses: status out of 400..599, an empty reason. */
    {
        static const char *const badr[] = {
            "{\"status\":399,\"reason\":\"x\"}",
            "{\"status\":600,\"reason\":\"x\"}",
            "{\"status\":400}",
            "{\"status\":400,\"reason\":\"\"}",
            "{\"reason\":\"x\"}",
            "{\"status\":400,\"reason\":\"x\",\"head_sha256\":\"00\"}",
            "{\"status\":400,\"reason\":\"x\",\"why\":1}"};

        for (size_t i = 0; i < sizeof(badr) / sizeof(badr[0]); i++) {
            char buf[512];

            snprintf(buf, sizeof(buf),
                     "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":"
                     "\"http.request\",\"resource\":{},\"refusal\":%s}",
                     badr[i]);
            r = NULL;
            if (sworn_reqjson_parse(buf, strlen(buf), &r) == 0)
                fail_msg("accepted: %s", buf);
        }
    }
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

static void test_reqjson(void **state)
{
    static const char full[] =
        "{\"request_id\":\"r-1\",\"principal\":{\"id\":\"agent-1\",\"sandbox\":\"sb\",\"uid\":"
        "1000},\"operation\":\"http.request\",\"resource\":{\"scheme\":\"https\",\"host\":\"api."
        "github.com\",\"port\":443,\"path\":\"/repos/x?page=2\",\"tool\":\"\"},\"context\":{"
        "\"method\":\"POST\",\"header_names\":[\"accept\",\"content-type\"],\"body_sha256\":"
        "\"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\",\"covered\":[{"
        "\"name\":\"@method\",\"value_sha256\":"
        "\"ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\"}],\"body_length\":"
        "12,\"json_numbers\":[{\"pointer\":\"/amount\",\"value\":\"12.50\"}],"
        "\"credential_token_sha256\":"
        "\"aa0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\"},\"delegation\":{"
        "\"subject\":\"user\",\"issuer\":\"idp\",\"actors\":[{\"subject\":\"svc-a\",\"issuer\":"
        "\"\"}],\"may_act\":\"allowed\",\"token_sha256\":["
        "\"bb0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\"],\"client_id\":"
        "\"agent-client\",\"audience\":[\"https://api.example\"],\"scopes\":[\"repo:read\","
        "\"issues:write\"],\"jti\":\"j-1\",\"expires_unix\":1772409600,\"verification\":{"
        "\"result\":\"verified\",\"key_id\":\"ec-1\",\"alg\":\"ES256\"}},\"time_unix_ms\":"
        "18446744073709551615}";
    static const char *const bad[] = {
        "",
        "[]",
        "{\"request_id\":\"r\"",
        "{} {}",
        "{\"request_id\":\"r\",\"extra\":1}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\",\"role\":\"x\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":-1}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1.5}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":70000}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":\"1\"}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\",\"uid\":4294967296},\"operation\":"
        "\"o\",\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\"}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\\u0000b\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\\nb\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1},\"context\":{\"body_sha256\":"
        "\"00\"}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1},\"context\":{\"body_sha256\":"
        "\"000102030405060708090A0B0C0D0E0F101112131415161718191a1b1c1d1e1f\"}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1},\"context\":{"
        "\"json_numbers\":[{\"pointer\":\"/a\",\"value\":12}]}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1},\"context\":{"
        "\"json_numbers\":[{\"pointer\":\"/a\",\"value\":\"1.\"}]}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1},\"delegation\":{"
        "\"subject\":\"u\",\"may_act\":\"sometimes\"}}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1},\"delegation\":{"
        "\"subject\":\"u\",\"token_sha256\":[\"\"]}}",
        "{'request_id':'r'}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1},\"time_unix_ms\":"
        "18446744073709551616}",
        "{\"request_id\":\"r\",\"principal\":{\"id\":\"a\"},\"operation\":\"o\","
        "\"resource\":{\"scheme\":\"s\",\"host\":\"h\",\"port\":1},\"time_unix_ms\":"
        "-99999999999999999999}",
        "{\"a\":[[[[[[[[[[[[1]]]]]]]]]]]]}",
    };
    Sworn__V1__AuthorizationRequest *r, *r2;
    uint8_t *b1, *b2;
    size_t l1, l2;
    char *out;

    (void)state;
    assert_int_equal(sworn_reqjson_parse(full, strlen(full), &r), 0);
    assert_string_equal(r->principal->sandbox, "sb");
    assert_int_equal(r->principal->uid, 1000);
    assert_int_equal(r->time_unix_ms, UINT64_MAX);
    assert_int_equal(r->context->body_sha256.len, 32);
    assert_int_equal(r->context->body_sha256.data[31], 0x1f);
    assert_int_equal(r->delegation->may_act->result, SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED);
    out = sworn_reqjson_print_request(r);
    assert_non_null(out);
    assert_string_equal(out, full);
    assert_int_equal(sworn_reqjson_parse(out, strlen(out), &r2), 0);
    assert_int_equal(sworn_frame_pack_request(r, &b1, &l1), 0);
    assert_int_equal(sworn_frame_pack_request(r2, &b2, &l2), 0);
    assert_int_equal(l1, l2);
    assert_memory_equal(b1, b2, l1);
    free(b1);
    free(b2);
    free(out);
    rfree(r);
    rfree(r2);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = (Sworn__V1__AuthorizationRequest *)&r;
        if (sworn_reqjson_parse(bad[i], strlen(bad[i]), &r) == 0)
            fail_msg("accepted: %s", bad[i]);
        assert_ptr_equal(r, (Sworn__V1__AuthorizationRequest *)&r);
        assert_true(sworn_err_code() == SWORN_ERR_FORMAT || sworn_err_code() == SWORN_ERR_RANGE);
    }
}

static void test_print_result_and_decision(void **state)
{
    struct sworn_policy_result res;
    Sworn__V1__Decision d = SWORN__V1__DECISION__INIT;
    Sworn__V1__Credential c = SWORN__V1__CREDENTIAL__INIT;
    uint8_t hash[32], secret[] = "Bearer s3cr3t-value";
    char *out;

    (void)state;
    memset(&res, 0, sizeof(res));
    res.effect = ESCALATE;
    strcpy(res.rule_id, "r\"1");
    strcpy(res.reason, "needs \"approval\"");
    res.escalation_timeout_ms = 5000;
    out = sworn_policy_result_json(&res);
    assert_string_equal(out, "{\"effect\":\"escalate\",\"rule_id\":\"r\\\"1\",\"reason\":\"needs "
                             "\\\"approval\\\"\",\"credential_id\":\"\","
                             "\"escalation_timeout_ms\":5000}");
    free(out);
    memset(hash, 0xab, sizeof(hash));
    d.request_id = (char *)"q";
    d.effect = ALLOW;
    d.rule_id = (char *)"r";
    d.reason = (char *)"ok";
    d.log_index = 7;
    d.entry_hash.data = hash;
    d.entry_hash.len = 32;
    c.id = (char *)"gh";
    c.header_name = (char *)"authorization";
    c.value.data = secret;
    c.value.len = sizeof(secret) - 1;
    d.credential = &c;
    out = sworn_reqjson_print_decision(&d);
    assert_non_null(out);
    assert_null(strstr(out, "s3cr3t"));
    assert_non_null(strstr(out, "\"credential\":{\"id\":\"gh\",\"header_name\":\"authorization\""));
    assert_non_null(strstr(out, "\"log_index\":7"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_policy),
        cmocka_unit_test(test_eval_canonical),
        cmocka_unit_test(test_principal_operation),
        cmocka_unit_test(test_scheme_port_method_tool),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_path_normalisation),
        cmocka_unit_test(test_combining),
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_count_budget),
        cmocka_unit_test(test_sum_budget),
        cmocka_unit_test(test_refund_and_reload),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_budget_cap),
        cmocka_unit_test(test_budget_threads),
        cmocka_unit_test(test_budgets_every_matching_allow),
        cmocka_unit_test(test_budgets_all_or_none),
        cmocka_unit_test(test_budgets_refund_cap_bound),
        cmocka_unit_test(test_budgets_threads_two_rules),
        cmocka_unit_test(test_replay_every_matching),
        cmocka_unit_test(test_lint_shadowed),
        cmocka_unit_test(test_lint_overridden),
        cmocka_unit_test(test_lint_no_false_positives),
        cmocka_unit_test(test_lint_globs),
        cmocka_unit_test(test_lint_bounded),
        cmocka_unit_test(test_delegation),
        cmocka_unit_test(test_actor_issuers),
        cmocka_unit_test(test_actor_load_refusals),
        cmocka_unit_test(test_method_refused),
        cmocka_unit_test(test_proxy_refusal),
        cmocka_unit_test(test_load_refusals),
        cmocka_unit_test(test_digest_and_mem),
        cmocka_unit_test(test_eval_refuses_bad_request),
        cmocka_unit_test(test_reqjson),
        cmocka_unit_test(test_print_result_and_decision),
    };

    return cmocka_run_group_tests(tests, group_setup, sworn_pfix_teardown);
}
