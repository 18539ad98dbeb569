/*
 * policy-cli.c -- sworn-policy: check a policy file, or evaluate requests against it offline,
 * exactly as sworn-decisiond would (the same library, the same code path).
 *
 *   sworn-policy check [--strict] FILE
 *       Load FILE. On success print "FILE:LINE:COL: warning: message" on stderr for each warning
 *       of lint.h (a shadowed rule, a glob that misses a bare name), then
 *       "FILE: ok, N rules, version V, sha256 HEX", and exit 0 (with --strict: 1 when there was
 *       a warning); on a bad policy print "FILE:LINE:COL: message" on stderr and exit 1.
 *   sworn-policy eval FILE REQUEST.json [REQUEST.json ...] [--at TIME]
 *       Evaluate each request in order, with budgets that start empty and are shared by the
 *       requests of this run, at TIME (RFC 3339, e.g. 2026-03-02T09:30:00Z or with an offset,
 *       or Unix milliseconds; default: now). Print one JSON line per request:
 *       {"effect":..,"rule_id":..,"reason":..,"credential_id":..,"escalation_timeout_ms":..}.
 *       The exit status is that of the last request: 0 allow, 1 deny, 3 escalate.
 *
 * Exit statuses (docs/policy.md): 0 ok / allow, 1 bad policy (check) or deny (eval), 2 usage,
 * 3 escalate, 4 eval could not run (unreadable or invalid policy or request, internal failure).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "civil.h"
#include "cli.h"
#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "frame.h"
#include "lint.h"
#include "policy.h"
#include "reqjson.h"

#define EXIT_DENY 1
#define EXIT_USAGE 2
#define EXIT_ESCALATE 3
#define EXIT_FAIL 4
#define MAX_REQUESTS 1000

static const char usage_text[] =
    "usage: sworn-policy check [--strict] FILE\n"
    "       sworn-policy eval FILE REQUEST.json [REQUEST.json ...] [--at TIME]\n"
    "       sworn-policy --help | --version\n"
    "check: load and lint a policy (docs/policy.md); eval: decide each request in order, one\n"
    "JSON line each, the exit status the last one's.\n"
    "TIME: RFC 3339 (2026-03-02T09:30:00Z) or Unix milliseconds\n";

/* check: 1 is a policy that does not load (or, with --strict, lints with findings). */
static const char own_exits[] =
    "  (check: 1 the policy does not load; eval: 1 the last request is denied)\n"
    "  3  eval: the last request escalates to a human\n"
    "  4  eval could not run: an unreadable or invalid policy or request,\n"
    "     or an internal failure\n";

static void usage(void)
{
    fputs(usage_text, stderr);
}

/* n decimal digits at s into *v; 0 or -1. */
static int digits(const char *s, int n, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        *v = *v * 10 + (unsigned)(s[i] - '0');
    }
    return 0;
}

/* Parse --at: Unix milliseconds, or RFC 3339 date-time (seconds fraction cut to ms). */
static int parse_at(const char *s, uint64_t *out)
{
    static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    unsigned y, mo, d, h, mi, sec, ms = 0, oh = 0, om = 0;
    int64_t t, sign = 0;
    const char *p;

    if (s[0] >= '0' && s[0] <= '9' && strspn(s, "0123456789") == strlen(s))
        return sworn_parse_u64(s, strlen(s), out);
    if (strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
        digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
        s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &sec))
        return -1;
    p = s + 19;
    if (*p == '.') {
        int n = 0;

        for (p++; *p >= '0' && *p <= '9'; p++, n++)
            if (n < 3)
                ms = ms * 10 + (unsigned)(*p - '0');
        if (n == 0)
            return -1;
        for (; n < 3; n++)
            ms *= 10;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p == '+' ? 1 : -1;
        if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return -1;
        p += 6;
    } else {
        return -1;
    }
    if (*p != '\0' || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
        (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) || h > 23 ||
        mi > 59 || sec > 60)
        return -1;
    if (sec == 60) /* a leap second: Unix time repeats the next second */
        sec = 59;
    t = sworn_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    t -= sign * ((int64_t)oh * 3600 + om * 60);
    if (t < 0)
        return -1;
    *out = (uint64_t)t * 1000 + ms;
    return 0;
}

/* A warning of lint.h, as "FILE:LINE:COL: warning: message" (the form of load errors). */
static void print_warning(void *arg, const struct sworn_lint_warning *w)
{
    fprintf(stderr, "%s:%u:%u: warning: %s\n", (const char *)arg, w->line, w->col, w->message);
}

static int cmd_check(const char *file, int strict)
{
    struct sworn_policy *p = NULL;
    uint8_t digest[32];
    char hex[65];
    int warnings;

    if (sworn_policy_load_file(file, &p) != 0) {
        fprintf(stderr, "%s\n", sworn_err_msg());
        return 1;
    }
    warnings = sworn_policy_lint(p, print_warning, (void *)file);
    if (warnings < 0) {
        fprintf(stderr, "sworn-policy: %s\n", sworn_err_msg());
        sworn_policy_free(p);
        return 1;
    }
    sworn_policy_digest(p, digest);
    sworn_hex_encode(digest, sizeof(digest), hex, sizeof(hex));
    printf("%s: ok, %zu rules, version %llu, sha256 %s\n", file, sworn_policy_rule_count(p),
           (unsigned long long)sworn_policy_version(p), hex);
    sworn_policy_free(p);
    if (strict && warnings > 0) {
        fprintf(stderr, "%s: %d warning%s (--strict)\n", file, warnings, warnings == 1 ? "" : "s");
        return 1;
    }
    return 0;
}

static int eval_one(const struct sworn_policy *p, struct sworn_budgets *b, const char *file,
                    uint64_t at)
{
    Sworn__V1__AuthorizationRequest *req = NULL;
    struct sworn_policy_result res;
    char *text = NULL, *json = NULL;
    size_t len;
    int rc = EXIT_FAIL;

    if (sworn_file_read(file, SWORN_REQJSON_MAX, &text, &len) != 0) {
        fprintf(stderr, "sworn-policy: %s: %s\n", file, sworn_err_msg());
        return EXIT_FAIL;
    }
    if (sworn_reqjson_parse(text, len, &req) != 0) {
        fprintf(stderr, "sworn-policy: %s: %s\n", file, sworn_err_msg());
        goto out;
    }
    if (sworn_policy_eval(p, b, req, at, &res) != 0) {
        fprintf(stderr, "sworn-policy: %s: evaluation failed: %s\n", file, sworn_err_msg());
        goto out;
    }
    json = sworn_policy_result_json(&res);
    if (json == NULL) {
        fprintf(stderr, "sworn-policy: %s\n", sworn_err_msg());
        goto out;
    }
    printf("%s\n", json);
    rc = res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW      ? 0
         : res.effect == SWORN__V1__EFFECT__EFFECT_ESCALATE ? EXIT_ESCALATE
                                                            : EXIT_DENY;
out:
    free(json);
    free(text);
    if (req != NULL)
        sworn__v1__authorization_request__free_unpacked(req, NULL);
    return rc;
}

static int cmd_eval(int argc, char **argv)
{
    const char *files[MAX_REQUESTS], *policy = NULL;
    struct sworn_policy *p = NULL;
    struct sworn_budgets *b = NULL;
    uint64_t at = 0;
    int have_at = 0, n = 0, rc = EXIT_FAIL;

    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--at") == 0) {
            if (i + 1 >= argc || have_at || parse_at(argv[i + 1], &at) != 0) {
                fprintf(stderr, "sworn-policy: --at needs one RFC 3339 time (with Z or an "
                                "offset) or Unix milliseconds\n");
                return EXIT_USAGE;
            }
            have_at = 1;
            i++;
        } else if (policy == NULL) {
            policy = argv[i];
        } else if (n < MAX_REQUESTS) {
            files[n++] = argv[i];
        } else {
            fprintf(stderr, "sworn-policy: at most %d requests\n", MAX_REQUESTS);
            return EXIT_USAGE;
        }
    }
    if (policy == NULL || n == 0) {
        usage();
        return EXIT_USAGE;
    }
    if (!have_at) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        at = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    }
    if (sworn_policy_load_file(policy, &p) != 0) {
        fprintf(stderr, "%s\n", sworn_err_msg());
        return EXIT_FAIL;
    }
    if (sworn_budgets_new(&b) != 0) {
        fprintf(stderr, "sworn-policy: %s\n", sworn_err_msg());
        goto out;
    }
    for (int i = 0; i < n; i++) {
        rc = eval_one(p, b, files[i], at);
        if (rc == EXIT_FAIL)
            break;
    }
out:
    sworn_budgets_free(b);
    sworn_policy_free(p);
    return rc;
}

int main(int argc, char **argv)
{
    int status;

    if (sworn_cli_standard(argc, argv, "sworn-policy", usage_text, own_exits, &status))
        return status;
    if (argc == 3 && strcmp(argv[1], "check") == 0)
        return cmd_check(argv[2], 0);
    if (argc == 4 && strcmp(argv[1], "check") == 0 && strcmp(argv[2], "--strict") == 0)
        return cmd_check(argv[3], 1);
    if (argc >= 4 && strcmp(argv[1], "eval") == 0)
        return cmd_eval(argc - 2, argv + 2);
    usage();
    return EXIT_USAGE;
}
