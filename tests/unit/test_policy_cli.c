/*
 * test_policy_cli.c -- end-to-end tests of the real `sworn-policy` binary (its path in
 * $SWORN_POLICY_BIN, which ctest sets): each case writes a policy and requests into a fresh
 * temporary folder, runs the program with stdout and stderr captured to files, and checks the
 * exit status and what was printed. Exit statuses (policy-cli.c, docs/policy.md): 0 ok or allow,
 * 1 bad policy (check) or deny (eval), 2 usage, 3 escalate, 4 eval could not run.
 *
 * Under the sanitizer build the binary is instrumented too: a sanitizer report fails the case.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/sha.h>

#include "policy_fixture.h"
#include "testutil.h"

#define OUT_MAX 65536

static const char *bin;

struct run {
    int status;
    char out[OUT_MAX], err[OUT_MAX];
};

static int group_setup(void **state)
{
    (void)state;
    bin = sworn_test_bin("SWORN_POLICY_BIN");
    sworn_pfix_mkdir("policy-cli");
    return 0;
}

/* Copy one captured stream into buf (OUT_MAX bytes). */
static void keep(char *buf, const char *text, size_t len)
{
    assert_true(len < OUT_MAX);
    memcpy(buf, text, len + 1);
}

/* Run sworn-policy with the arguments (NULL-terminated); fills r. */
static void run(struct run *r, ...)
{
    struct sworn_test_run got;
    va_list ap;

    va_start(ap, r);
    sworn_test_vrun(&got, NULL, bin, ap);
    va_end(ap);
    r->status = got.status;
    keep(r->out, got.out, got.out_len);
    keep(r->err, got.err, got.err_len);
    sworn_test_run_free(&got);
}

static const char policy[] = "version: 4\n"
                             "rules:\n"
                             "  - id: read\n"
                             "    effect: allow\n"
                             "    resource: {hosts: [api.example], paths: [\"/r/**\"]}\n"
                             "    methods: [GET]\n"
                             "    credential: api-token\n"
                             "  - id: office\n"
                             "    effect: allow\n"
                             "    resource: {paths: [\"/office\"]}\n"
                             "    time: {days: [mon], hours: \"09:00-10:00\"}\n"
                             "  - id: twice\n"
                             "    effect: allow\n"
                             "    resource: {paths: [\"/twice\"]}\n"
                             "    budget: {count: 2, window: 1h}\n"
                             "  - id: ask\n"
                             "    effect: escalate\n"
                             "    resource: {paths: [\"/ask\"]}\n"
                             "    escalation_timeout: 90s\n"
                             "  - id: never\n"
                             "    effect: deny\n"
                             "    reason: \"never /r/secret\"\n"
                             "    resource: {paths: [\"/r/secret\"]}\n";

static char *request(const char *name, const char *path, const char *method)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"request_id\":\"%s\",\"principal\":{\"id\":\"agent-1\"},"
             "\"operation\":\"http.request\",\"resource\":{\"scheme\":\"https\","
             "\"host\":\"api.example\",\"port\":443,\"path\":\"%s\"},"
             "\"context\":{\"method\":\"%s\"}}\n",
             name, path, method);
    return sworn_pfix_put(name, text);
}

static void test_check(void **state)
{
    char *good = sworn_pfix_put("good.yaml", policy), *bad, hex[65], want[512];
    uint8_t digest[32];
    struct run r;

    (void)state;
    SHA256((const unsigned char *)policy, strlen(policy), digest);
    sworn_test_hex(digest, 32, hex);
    run(&r, "check", good, NULL);
    assert_int_equal(r.status, 0);
    snprintf(want, sizeof(want), "%s: ok, 5 rules, version 4, sha256 %s\n", good, hex);
    assert_string_equal(r.out, want);
    assert_string_equal(r.err, "");

    bad = sworn_pfix_put("bad.yaml", "rules:\n  - id: x\n    effect: allow\n    colour: red\n");
    run(&r, "check", bad, NULL);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    snprintf(want, sizeof(want), "%s:4:5: unknown key \"colour\"\n", bad);
    assert_string_equal(r.err, want);
    free(bad);

    bad = sworn_pfix_put("bad2.yaml", "rules:\n  - id: x\n    effect: deny\n    credential: c\n");
    run(&r, "check", bad, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "bad2.yaml:4:17: a credential is only for allow rules"));
    free(bad);

    run(&r, "check", "/nonexistent/policy.yaml", NULL);
    assert_int_equal(r.status, 1);
    assert_true(r.err[0] != '\0');
    free(good);
}

/*
 * Warnings (policy/lint.h, docs/policy.md section 7): printed on stderr as FILE:LINE:COL:
 * warning: ..., at the rule's position; the policy still loads (exit 0, the same ok line), and
 * --strict makes a warning exit 1. A clean policy, and the sample policy, print none.
 */
static void test_check_warnings(void **state)
{
    static const char warned[] = "rules:\n"
                                 "  - id: read-all\n"
                                 "    effect: allow\n"
                                 "  - id: pay-budget\n"
                                 "    effect: allow\n"
                                 "    resource: {paths: [\"/pay/**\"]}\n"
                                 "    budget: {count: 1, window: 1h}\n"
                                 "  - id: no-git\n"
                                 "    effect: deny\n"
                                 "    resource:\n"
                                 "      paths: [\"/**/.git/**\"]\n"
                                 "  -   id: no-evil\n"
                                 "      effect: deny\n"
                                 "      resource: {hosts: [\"**.evil.com\"]}\n";
    char *file = sworn_pfix_put("warned.yaml", warned),
         *clean = sworn_pfix_put("clean.yaml", policy);
    char want[2048], sample[1024], hex[65];
    uint8_t digest[32];
    struct run r;

    (void)state;
    SHA256((const unsigned char *)warned, strlen(warned), digest);
    sworn_test_hex(digest, 32, hex);
    run(&r, "check", file, NULL);
    assert_int_equal(r.status, 0);
    snprintf(want, sizeof(want), "%s: ok, 4 rules, version 0, sha256 %s\n", file, hex);
    assert_string_equal(r.out, want);
    snprintf(want, sizeof(want),
             "%s:4:5: warning: rule \"pay-budget\" can never decide: the earlier allow rule "
             "\"read-all\" (line 2) matches every request it matches, so its reason and credential "
             "are never used (its budgets still count: every matching allow rule's budget must "
             "have room, docs/policy.md section 3); move it above \"read-all\" if it should "
             "decide\n",
             file);
    if (strstr(r.err, want) == NULL)
        fail_msg("stderr lacks\n%s\ngot\n%s", want, r.err);
    snprintf(want, sizeof(want),
             "%s:8:5: warning: path pattern \"/**/.git/**\" needs at least one segment where "
             "\"/**/\" stands, so it does not match the paths of \"/.git/**\"",
             file);
    if (strstr(r.err, want) == NULL)
        fail_msg("stderr lacks\n%s\ngot\n%s", want, r.err);
    snprintf(want, sizeof(want),
             "%s:12:7: warning: host pattern \"**.evil.com\" does not match \"evil.com\" itself",
             file);
    if (strstr(r.err, want) == NULL)
        fail_msg("stderr lacks\n%s\ngot\n%s", want, r.err);
    /* Three warnings, three lines. */
    {
        int lines = 0;

        for (const char *c = r.err; *c != '\0'; c++)
            lines += *c == '\n';
        assert_int_equal(lines, 3);
    }
    /* --strict: the same, and exit 1. */
    run(&r, "check", "--strict", file, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "warning: rule \"pay-budget\" can never decide"));
    snprintf(want, sizeof(want), "%s: 3 warnings (--strict)\n", file);
    assert_non_null(strstr(r.err, want));
    /* A clean policy: no warning, exit 0 with --strict too. */
    run(&r, "check", "--strict", clean, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    /* The sample policy of the dev stack and the demo is clean. */
    snprintf(sample, sizeof(sample), "%s/policy/examples/policy.yaml", sworn_test_source_dir());
    run(&r, "check", "--strict", sample, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, ": ok, 5 rules, version 1, sha256 "));
    /* --strict is an option of check only, before the file. */
    run(&r, "check", file, "--strict", NULL);
    assert_int_equal(r.status, 2);
    free(file);
    free(clean);
}

static void test_usage(void **state)
{
    char *good = sworn_pfix_put("good.yaml", policy), *req = request("u.json", "/r/x", "GET");
    struct run r;

    (void)state;
    run(&r, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "usage:"));
    run(&r, "check", NULL);
    assert_int_equal(r.status, 2);
    run(&r, "check", good, good, NULL);
    assert_int_equal(r.status, 2);
    run(&r, "lint", good, NULL);
    assert_int_equal(r.status, 2);
    run(&r, "eval", good, NULL);
    assert_int_equal(r.status, 2);
    run(&r, "eval", good, req, "--at", NULL);
    assert_int_equal(r.status, 2);
    run(&r, "eval", good, req, "--at", "yesterday", NULL);
    assert_int_equal(r.status, 2);
    run(&r, "eval", good, req, "--at", "2026-03-02T09:00:00", NULL);
    assert_int_equal(r.status, 2);
    run(&r, "eval", good, req, "--at", "2026-02-29T09:00:00Z", NULL);
    assert_int_equal(r.status, 2);
    run(&r, "eval", good, req, "--at", "1", "--at", "2", NULL);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.out, "");
    free(good);
    free(req);
}

static void test_eval(void **state)
{
    char *good = sworn_pfix_put("good.yaml", policy);
    char *allow = request("a.json", "/r/x?y=1", "GET"), *post = request("p.json", "/r/x", "POST");
    char *secret = request("s.json", "/r/secret", "GET"), *ask = request("e.json", "/ask", "GET");
    char *office = request("o.json", "/office", "GET"), *twice = request("t.json", "/twice", "GET");
    char *junk = sworn_pfix_put("junk.json", "{\"request_id\":\"r\",\"colour\":1}");
    char *badpol = sworn_pfix_put("badpol.yaml", "rules: []\n");
    struct run r;

    (void)state;
    run(&r, "eval", good, allow, "--at", "1772409600000", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "{\"effect\":\"allow\",\"rule_id\":\"read\",\"reason\":\"allowed by "
                               "rule read\",\"credential_id\":\"api-token\","
                               "\"escalation_timeout_ms\":0}\n");
    run(&r, "eval", good, post, NULL);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "{\"effect\":\"deny\",\"rule_id\":\"\",\"reason\":\"no rule matched "
                               "(default deny)\",\"credential_id\":\"\","
                               "\"escalation_timeout_ms\":0}\n");
    run(&r, "eval", good, secret, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.out, "\"rule_id\":\"never\",\"reason\":\"never /r/secret\""));
    run(&r, "eval", good, ask, NULL);
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.out, "\"effect\":\"escalate\",\"rule_id\":\"ask\""));
    assert_non_null(strstr(r.out, "\"escalation_timeout_ms\":90000"));

    /* --at: 2026-03-02 is a Monday; offsets are applied; milliseconds are kept. */
    run(&r, "eval", good, office, "--at", "2026-03-02T09:00:00Z", NULL);
    assert_int_equal(r.status, 0);
    run(&r, "eval", good, office, "--at", "2026-03-02t09:59:59.999z", NULL);
    assert_int_equal(r.status, 0);
    run(&r, "eval", good, office, "--at", "2026-03-02T10:00:00Z", NULL);
    assert_int_equal(r.status, 1);
    run(&r, "eval", good, office, "--at", "2026-03-02T11:30:00+02:00", NULL);
    assert_int_equal(r.status, 0);
    run(&r, "eval", good, office, "--at", "2026-03-02T04:30:00-05:00", NULL);
    assert_int_equal(r.status, 0);
    run(&r, "eval", good, office, "--at", "2026-03-03T09:30:00Z", NULL);
    assert_int_equal(r.status, 1);
    run(&r, "eval", good, office, "--at", "1772442000000", NULL); /* Monday 09:00Z */
    assert_int_equal(r.status, 0);

    /* Budgets start empty and are shared by the requests of one run. */
    run(&r, "eval", good, twice, twice, twice, "--at", "2026-03-02T09:00:00Z", NULL);
    assert_int_equal(r.status, 1);
    {
        const char *third = strchr(strchr(r.out, '\n') + 1, '\n') + 1;

        assert_int_equal(strncmp(r.out, "{\"effect\":\"allow\",\"rule_id\":\"twice\"", 35), 0);
        assert_non_null(strstr(third, "\"effect\":\"deny\",\"rule_id\":\"twice\",\"reason\":"
                                      "\"budget exhausted: rule twice allows 2 requests per 1h"));
    }
    run(&r, "eval", good, twice, "--at", "2026-03-02T09:00:00Z", NULL);
    assert_int_equal(r.status, 0);

    /* Could not run: a bad request, a missing one, a bad policy. */
    run(&r, "eval", good, junk, NULL);
    assert_int_equal(r.status, 4);
    assert_non_null(strstr(r.err, "unknown key \"colour\""));
    run(&r, "eval", good, "/nonexistent.json", NULL);
    assert_int_equal(r.status, 4);
    run(&r, "eval", badpol, allow, NULL);
    assert_int_equal(r.status, 4);
    assert_non_null(strstr(r.err, "badpol.yaml:1:8: rules must be a non-empty list"));
    assert_string_equal(r.out, "");
    free(good);
    free(allow);
    free(post);
    free(secret);
    free(ask);
    free(office);
    free(twice);
    free(junk);
    free(badpol);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_check_warnings),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_eval),
    };

    return cmocka_run_group_tests(tests, group_setup, sworn_pfix_teardown);
}
