/*
 * fuzz_policy.c -- libFuzzer target for the policy loader (policy/policy.c over yamldoc.c)
 * and, for every policy that loads, for evaluation and budgets.
 *
 * Besides not crashing, it checks properties that a broken engine would break:
 *   - a refused policy sets a message naming the input ("fuzz:...") with a code other than
 *     SWORN_OK, and leaves the output pointer untouched;
 *   - a loaded policy has 1..SWORN_POLICY_RULES_MAX rules, and the digest of the bytes;
 *   - every evaluation of a fixed set of requests at fixed times returns 0 with an effect that
 *     is ALLOW, DENY or ESCALATE, a non-empty reason without control characters, a rule id that
 *     is "" (deny only) or one of the policy's rules, and a credential only on an allow;
 *   - evaluation is deterministic: the same sequence on fresh budgets gives the same results;
 *   - refunding every ALLOW leaves no budget counter behind (a decision's charges, across all
 *     the matching allow rules it charged, are undone together; finding 7 of the policy review);
 *   - every warning of lint.h names a rule of the policy at a position (line and column >= 1)
 *     and has a non-empty one-line message; lint never fails on a loaded policy.
 * A broken property aborts, which libFuzzer reports as a crash.
 *
 * The seed corpus (corpus/policy/) holds the sample policy, a policy using every key, and
 * refused files (unknown key, bad glob, budget on a deny rule, hostile patterns, bad methods,
 * bad trusted_issuers and actor mappings, a narrow actor item without trusted_issuers).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "err.h"
#include "lint.h"
#include "policy.h"
#include "reqjson.h"
#include "fuzz.h"

static const char *const texts[] = {
    "{\"request_id\":\"1\",\"principal\":{\"id\":\"agent-1\"},\"operation\":\"http.request\","
    "\"resource\":{\"scheme\":\"http\",\"host\":\"127.0.0.1\",\"port\":8080,\"path\":"
    "\"/allowed/x?q=1\"},\"context\":{\"method\":\"GET\"}}",
    "{\"request_id\":\"2\",\"principal\":{\"id\":\"agent-2\"},\"operation\":\"http.request\","
    "\"resource\":{\"scheme\":\"https\",\"host\":\"api.github.com\",\"port\":443,\"path\":"
    "\"/repos/a/b\"},\"context\":{\"method\":\"POST\",\"json_numbers\":[{\"pointer\":"
    "\"/amount\",\"value\":\"12.50\"}]},\"delegation\":{\"subject\":\"u\",\"actors\":[{"
    "\"subject\":\"svc-a\"},{\"subject\":\"svc-b\"}],\"may_act\":\"allowed\"}}",
    "{\"request_id\":\"3\",\"principal\":{\"id\":\"bot\"},\"operation\":\"mcp.tools/call\","
    "\"resource\":{\"scheme\":\"https\",\"host\":\"a.b.example.com\",\"port\":1,\"path\":"
    "\"/mcp\",\"tool\":\"search_code\"}}",
    "{\"request_id\":\"4\",\"principal\":{\"id\":\"agent-1\"},\"operation\":\"ws.upgrade\","
    "\"resource\":{\"scheme\":\"wss\",\"host\":\"::1\",\"port\":65535,\"path\":\"/budget/x\"},"
    "\"context\":{\"method\":\"GET\",\"json_numbers\":[{\"pointer\":\"/amount\",\"value\":"
    "\"1e3\"}]}}",
    /* Actors with issuers (trusted, untrusted, none) and a method refused before any rule. */
    "{\"request_id\":\"5\",\"principal\":{\"id\":\"agent-1\"},\"operation\":\"http.request\","
    "\"resource\":{\"scheme\":\"https\",\"host\":\"api.github.com\",\"port\":443,\"path\":"
    "\"/repos/a\"},\"context\":{\"method\":\"GET\"},\"delegation\":{\"subject\":\"u\","
    "\"issuer\":\"https://idp.example\",\"actors\":[{\"subject\":\"svc-a\",\"issuer\":"
    "\"https://idp.example\"},{\"subject\":\"runner-1\",\"issuer\":\"https://ci.example.com\"},"
    "{\"subject\":\"svc-evil\",\"issuer\":\"\"}]}}",
    "{\"request_id\":\"6\",\"principal\":{\"id\":\"agent-1\"},\"operation\":\"http.request\","
    "\"resource\":{\"scheme\":\"http\",\"host\":\"127.0.0.1\",\"port\":8080,\"path\":"
    "\"/allowed/x\"},\"context\":{\"method\":\"delete\"},\"delegation\":{\"subject\":\"u\","
    "\"actors\":[{\"subject\":\"svc-a\",\"issuer\":\"attacker-idp\"}]}}",
};
#define NREQ (sizeof(texts) / sizeof(texts[0]))
static const uint64_t times[] = {0, 1772442000000ull, 1772442059999ull, 1772528399999ull};
#define NTIME (sizeof(times) / sizeof(times[0]))

static Sworn__V1__AuthorizationRequest *reqs[NREQ];

static void setup(void)
{
    for (size_t i = 0; i < NREQ; i++)
        if (reqs[i] == NULL && sworn_reqjson_parse(texts[i], strlen(texts[i]), &reqs[i]) != 0)
            abort();
}

static void check_result(const struct sworn_policy *p, const struct sworn_policy_result *r)
{
    size_t n = strnlen(r->reason, sizeof(r->reason));

    if (r->effect != SWORN__V1__EFFECT__EFFECT_ALLOW &&
        r->effect != SWORN__V1__EFFECT__EFFECT_DENY &&
        r->effect != SWORN__V1__EFFECT__EFFECT_ESCALATE)
        abort();
    if (n == 0 || n >= sizeof(r->reason))
        abort();
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)r->reason[i] < 0x20 || r->reason[i] == 0x7f)
            abort();
    if (r->rule_id[0] == '\0' && r->effect != SWORN__V1__EFFECT__EFFECT_DENY)
        abort();
    if (r->credential_id[0] != '\0' && r->effect != SWORN__V1__EFFECT__EFFECT_ALLOW)
        abort();
    (void)p;
}

/* Every ALLOW at once refunded: the budgets end as they began, empty. */
static void refund_all(const struct sworn_policy *p)
{
    struct sworn_budgets *b;
    struct sworn_policy_result r;

    if (sworn_budgets_new(&b) != 0)
        abort();
    for (size_t t = 0; t < NTIME; t++)
        for (size_t i = 0; i < NREQ; i++) {
            if (sworn_policy_eval(p, b, reqs[i], times[t], &r) != 0)
                abort();
            sworn_budgets_refund(b, &r);
            if (sworn_budgets_count(b) != 0)
                abort();
        }
    sworn_budgets_free(b);
}

static void check_warning(void *arg, const struct sworn_lint_warning *w)
{
    const struct sworn_policy *p = arg;

    (void)p;
    if (w->line < 1 || w->col < 1 || w->rule_id == NULL || w->rule_id[0] == '\0' ||
        w->message == NULL || w->message[0] == '\0')
        abort();
    for (const char *c = w->message; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            abort();
}

/* Run every request at every time on fresh budgets; out gets the effects in order. */
static void run_all(const struct sworn_policy *p, int *out)
{
    struct sworn_budgets *b;
    struct sworn_policy_result r;
    size_t k = 0;

    if (sworn_budgets_new(&b) != 0)
        abort();
    for (size_t t = 0; t < NTIME; t++)
        for (size_t i = 0; i < NREQ; i++)
            for (int rep = 0; rep < 2; rep++) {
                if (sworn_policy_eval(p, b, reqs[i], times[t], &r) != 0)
                    abort();
                check_result(p, &r);
                out[k++] = (int)r.effect * 1000 + (int)strlen(r.rule_id);
                if (rep == 1)
                    sworn_budgets_refund(b, &r);
            }
    sworn_budgets_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sworn_policy *p = (struct sworn_policy *)&p;
    int a[NTIME * NREQ * 2], b[NTIME * NREQ * 2];
    uint8_t digest[32], want[32];

    setup();
    if (sworn_policy_load_mem("fuzz", data, size, &p) != 0) {
        if (p != (struct sworn_policy *)&p || sworn_err_code() == SWORN_OK)
            abort();
        if (sworn_err_code() == SWORN_ERR_FORMAT && strncmp(sworn_err_msg(), "fuzz", 4) != 0)
            abort();
        return 0;
    }
    if (sworn_policy_rule_count(p) < 1 || sworn_policy_rule_count(p) > SWORN_POLICY_RULES_MAX)
        abort();
    sworn_policy_digest(p, digest);
    SHA256(data, size, want);
    if (memcmp(digest, want, 32) != 0)
        abort();
    run_all(p, a);
    run_all(p, b);
    if (memcmp(a, b, sizeof(a)) != 0)
        abort();
    refund_all(p);
    if (sworn_policy_lint(p, check_warning, p) < 0)
        abort();
    sworn_policy_free(p);
    return 0;
}
