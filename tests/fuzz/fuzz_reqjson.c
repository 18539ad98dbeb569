/*
 * fuzz_reqjson.c -- libFuzzer target for the request JSON form (wire/reqjson.c),
 * and for evaluating arbitrary well-formed requests against a policy that uses every matcher.
 *
 * Besides not crashing, it checks:
 *   - a refusal is SWORN_ERR_FORMAT or SWORN_ERR_RANGE and leaves the output untouched;
 *   - an accepted request passes sworn_frame_check_request, prints, and the printed JSON parses
 *     back to a request that packs to exactly the same bytes and prints to the same text;
 *   - evaluating it returns 0 with a valid effect and a non-empty reason.
 * A broken property aborts, which libFuzzer reports as a crash.
 *
 * The seed corpus (corpus/reqjson/) holds full and minimal requests and refused ones (unknown
 * key, bad hash, wrong types, deep nesting, trailing text), a request the proxy refused itself
 * (a "refusal" object with an empty resource) and one with a status out of 400..599, and a raw
 * tunnel (tcp.connect, scheme tcp, no path).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "policy.h"
#include "reqjson.h"
#include "fuzz.h"

static const char policy_text[] =
    "rules:\n"
    "  - id: a\n"
    "    effect: allow\n"
    "    principals: [\"agent-*\", \"?\"]\n"
    "    operations: [\"http.*\"]\n"
    "    resource:\n"
    "      schemes: [https, http]\n"
    "      hosts: [\"**.example.com\", \"api.*.example\", \"127.0.0.1\", \"::1\", \"*\"]\n"
    "      ports: [443, 8080]\n"
    "      paths: [\"/**/x/*/y?\", \"/a/**\", \"/*a*a*a*b\"]\n"
    "    methods: [GET, POST]\n"
    "    delegation: {max_depth: 3, forbid_actors: [\"bad*\"]}\n"
    "    time: {days: [mon, tue], hours: \"00:00-24:00\"}\n"
    "    budget: {count: 2, window: 1m}\n"
    "    sum: {pointer: /amount, max: \"100.5\", window: 1h, per: global}\n"
    "  - id: e\n"
    "    effect: escalate\n"
    "    resource: {tools: [\"t*\"]}\n"
    "    delegation: {required: true, require_actors: [\"svc-?\"], may_act: allowed}\n"
    "  - id: d\n"
    "    effect: deny\n"
    "    delegation: {required: false}\n"
    "    principals: [\"x*\"]\n";

static struct sworn_policy *policy;
static struct sworn_budgets *budgets;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Sworn__V1__AuthorizationRequest *r = (Sworn__V1__AuthorizationRequest *)&r, *r2 = NULL;
    struct sworn_policy_result res;
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t l1, l2;
    char *j1, *j2;

    if (policy == NULL && (sworn_policy_load_mem("fuzz", (const uint8_t *)policy_text,
                                                 strlen(policy_text), &policy) != 0 ||
                           sworn_budgets_new_cap(64, &budgets) != 0))
        abort();
    if (sworn_reqjson_parse((const char *)data, size, &r) != 0) {
        if (r != (Sworn__V1__AuthorizationRequest *)&r)
            abort();
        if (sworn_err_code() != SWORN_ERR_FORMAT && sworn_err_code() != SWORN_ERR_RANGE)
            abort();
        return 0;
    }
    if (sworn_frame_check_request(r) != 0)
        abort();
    j1 = sworn_reqjson_print_request(r);
    if (j1 == NULL || sworn_reqjson_parse(j1, strlen(j1), &r2) != 0)
        abort();
    j2 = sworn_reqjson_print_request(r2);
    if (j2 == NULL || strcmp(j1, j2) != 0)
        abort();
    if (sworn_frame_pack_request(r, &b1, &l1) != 0 || sworn_frame_pack_request(r2, &b2, &l2) != 0 ||
        l1 != l2 || memcmp(b1, b2, l1) != 0)
        abort();
    for (uint64_t t = 0; t < 2; t++) {
        if (sworn_policy_eval(policy, budgets, r, 1772409600000ull + t * 60000u, &res) != 0)
            abort();
        if (res.reason[0] == '\0' || (res.effect != SWORN__V1__EFFECT__EFFECT_ALLOW &&
                                      res.effect != SWORN__V1__EFFECT__EFFECT_DENY &&
                                      res.effect != SWORN__V1__EFFECT__EFFECT_ESCALATE))
            abort();
        sworn_budgets_refund(budgets, &res);
    }
    if (sworn_budgets_count(budgets) != 0)
        abort();
    free(b1);
    free(b2);
    free(j1);
    free(j2);
    sworn__v1__authorization_request__free_unpacked(r, NULL);
    sworn__v1__authorization_request__free_unpacked(r2, NULL);
    return 0;
}
