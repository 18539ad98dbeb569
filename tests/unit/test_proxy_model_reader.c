/*
 * test_proxy_model_reader.c -- the model API parts of the proxy and the policy, as units:
 *   - proxy/p_model: the `models:` configuration, which requests are model calls, and the request
 *     body's reading, every refusal with its sentence;
 *   - proxy/p_musage: the usage of JSON responses and SSE streams of every shape, every refusal,
 *     and each stream fed split at every byte (and one byte a feed), which must read the same;
 *   - policy: `models:` and `tokens:` (load refusals, reservation, a spent budget denying a
 *     ceiling of 0, settlement up and down, per: sandbox, replay with the usage settled).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "frame.h"
#include "lint.h"
#include "p_model.h"
#include "p_musage.h"
#include "policy.h"
#include "reqjson.h"
#include "resource.h"
#include "testutil.h"
#include "yamldoc.h"

/* ---- p_model ---- */

static int conf_of(const char *yaml, struct sworn_pmodel_conf *c, char *err, size_t cap)
{
    struct sworn_yaml_doc *d = NULL;
    int rc;

    assert_int_equal(sworn_yaml_load_mem("t.yaml", (const uint8_t *)yaml, strlen(yaml), &d), 0);
    rc = sworn_pmodel_conf_read(d, sworn_yaml_get(sworn_yaml_root(d), "models"), c);
    if (rc != 0)
        snprintf(err, cap, "%s", sworn_err_msg());
    sworn_yaml_free(d);
    return rc;
}

/* Which requests are model calls, of which API: any spelling of a destination's URL. */
static const struct {
    const char *scheme, *host;
    uint32_t port;
    const char *path, *method;
    enum sworn_pmodel_api want;
} calls[] = {
    {"https", "api.example.com", 443, "/v1/chat/completions", "POST", SWORN_PMODEL_OPENAI_CHAT},
    {"https", "api.example.com", 443, "/v1/chat/completions", "GET", SWORN_PMODEL_NONE},
    {"https", "API.example.com.", 443, "/x/v1/Responses/?a=1", "POST",
     SWORN_PMODEL_OPENAI_RESPONSES},
    {"https", "api.example.com", 443, "/v1/chat/completions;x", "POST", SWORN_PMODEL_OPENAI_CHAT},
    {"https", "api.example.com", 443, "/claude/v1/messages", "POST",
     SWORN_PMODEL_ANTHROPIC_MESSAGES},
    {"https", "api.example.com", 443, "/claude/v1/chat/completions", "POST", SWORN_PMODEL_NONE},
    /* Red team rt-A: a destination's path is matched without case and with or without path
     * parameters (routers that ignore case or drop ";x" send these to the same handler). */
    {"https", "api.example.com", 443, "/Claude/v1/messages", "POST",
     SWORN_PMODEL_ANTHROPIC_MESSAGES},
    {"https", "api.example.com", 443, "/claude;x/v1/messages", "POST",
     SWORN_PMODEL_ANTHROPIC_MESSAGES},
    {"https", "api.example.com", 443, "/CLAUDE/v1/Messages/", "POST",
     SWORN_PMODEL_ANTHROPIC_MESSAGES},
    {"https", "api.example.com", 443, "/v1/embeddings", "POST", SWORN_PMODEL_NONE},
    {"https", "other.example.com", 443, "/v1/chat/completions", "POST", SWORN_PMODEL_NONE},
    {"http", "api.example.com", 443, "/v1/chat/completions", "POST", SWORN_PMODEL_NONE},
};

static void test_conf_and_classify(void **state)
{
    struct sworn_pmodel_conf c;
    struct sworn_resource res;
    char err[512];
    static const char *const bad[][2] = {
        {"models: []\n", "a list of 1..64 model APIs"},
        {"models: {url: x}\n", "a list of 1..64 model APIs"},
        {"models:\n  - https://api.openai.com/\n", "an item is a mapping"},
        {"models:\n  - {api: openai}\n", "missing required key \"url\""},
        {"models:\n  - {url: \"https://api.openai.com/\"}\n", "missing required key \"api\""},
        {"models:\n  - {url: \"https://api.openai.com/\", api: gemini}\n", "openai or anthropic"},
        {"models:\n  - {url: \"ftp://x/\", api: openai}\n", "models.url"},
        {"models:\n  - {url: \"https://a/\", api: openai, extra: 1}\n", "extra"},
        {"models:\n  - {url: \"https://a/\", api: openai}\n  - {url: \"https://A:443/\", api: "
         "anthropic}\n",
         "the same model API twice"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (conf_of(bad[i][0], &c, err, sizeof(err)) == 0 || strstr(err, bad[i][1]) == NULL)
            fail_msg("%s: %s", bad[i][0], err);
    }
    assert_int_equal(conf_of("x: 1\n", &c, err, sizeof(err)), 0);
    assert_int_equal(c.n, 0);
    assert_int_equal(conf_of("models:\n"
                             "  - {url: \"https://api.example.com/\", api: openai}\n"
                             "  - {url: \"https://api.example.com/claude/\", api: anthropic}\n",
                             &c, err, sizeof(err)),
                     0);
    assert_int_equal(c.n, 2);
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        sworn_test_canon(calls[i].scheme, calls[i].host, calls[i].port, calls[i].path, &res);
        if (sworn_pmodel_classify(&c, calls[i].method, &res) != calls[i].want)
            fail_msg("%s %s://%s:%u%s is not read as API %d", calls[i].method, calls[i].scheme,
                     calls[i].host, (unsigned)calls[i].port, calls[i].path, (int)calls[i].want);
    }
    assert_int_equal(sworn_pmodel_classify(&c, "POST", NULL), SWORN_PMODEL_NONE);
}

static int req_of(enum sworn_pmodel_api api, const char *body, struct sworn_pmodel_req *r,
                  const char **why)
{
    return sworn_pmodel_read_request(api, (const uint8_t *)body, strlen(body), 0, r, why);
}

static void test_request_bodies(void **state)
{
    struct sworn_pmodel_req r;
    const char *why = NULL;
    static const char ceiling[] =
        "the model API body's token ceiling is not an integer of 0..4294967295";
    static const char *const bad[][2] = {
        {"", "has no body"},
        {"null", "not a JSON object"},
        {"[]", "not a JSON object"},
        {"{\"model\": 5}", "names no model"},
        {"{}", "names no model"},
        {"{\"model\": \"\"}", "printable ASCII"},
        {"{\"model\": \"a b\"}", "printable ASCII"},
        {"{\"model\": \"a\\u0000b\"}", "printable ASCII"},
        {"{\"model\": \"\\u00e9\"}", "printable ASCII"},
        {"{\"model\": \"m\", \"max_tokens\": -1}", ceiling},
        {"{\"model\": \"m\", \"max_tokens\": 4294967296}", ceiling},
        {"{\"model\": \"m\", \"max_tokens\": 99999999999999999999}", ceiling},
        {"{\"model\": \"m\", \"max_tokens\": 10.0}", ceiling},
        {"{\"model\": \"m\", \"max_tokens\": 1e1}", ceiling},
        {"{\"model\": \"m\", \"max_tokens\": \"1\"}", ceiling},
        {"{\"model\": \"m\", \"max_tokens\": true}", ceiling},
        {"{\"model\": \"m\", \"max_tokens\": 1, \"max_output_tokens\": 1}", "more than once"},
        {"{\"model\": \"m\", \"max_tokens\": 1, \"max_tokens\": 1}", "not strict JSON"},
        {"{\"model\": \"m\", \"model\": \"n\"}", "not strict JSON"},
        {"{\"model\": \"m\",}", "not strict JSON"},
        {"{\"model\": \"m\"} x", "not strict JSON"},
        {"{\"model\": \"m\", \"stream\": true}", "must ask for its usage"},
        {"{\"model\": \"m\", \"stream\": true, \"stream_options\": {\"include_usage\": 1}}",
         "must ask for its usage"},
        /* red team of issue 16 (B): n choices, each up to the ceiling */
        {"{\"model\": \"m\", \"max_tokens\": 10, \"n\": 128}", "more than one choice"},
        {"{\"model\": \"m\", \"max_tokens\": 10, \"n\": 1.0}", "more than one choice"},
        {"{\"model\": \"m\", \"max_tokens\": 10, \"n\": \"2\"}", "more than one choice"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why = NULL;
        if (req_of(SWORN_PMODEL_OPENAI_CHAT, bad[i][0], &r, &why) != 1 || why == NULL ||
            strstr(why, bad[i][1]) == NULL)
            fail_msg("%s: %s", bad[i][0], why != NULL ? why : "(accepted)");
    }
    assert_int_equal(sworn_pmodel_read_request(SWORN_PMODEL_OPENAI_CHAT,
                                               (const uint8_t *)"{\"model\": \"m\"}", 14, 1, &r,
                                               &why),
                     1);
    assert_non_null(strstr(why, "Content-Encoding"));
    assert_int_equal(req_of(SWORN_PMODEL_OPENAI_CHAT,
                            "{\"model\": \"gpt-4o\", \"max_completion_tokens\": 0, \"max_tokens\": "
                            "null, \"stream\": true, \"stream_options\": {\"include_usage\": "
                            "true}}",
                            &r, &why),
                     0);
    assert_string_equal(r.model, "gpt-4o");
    assert_int_equal(req_of(SWORN_PMODEL_OPENAI_CHAT,
                            "{\"model\": \"m\", \"max_tokens\": 1, \"n\": 1}", &r, &why),
                     0);
    assert_int_equal(req_of(SWORN_PMODEL_OPENAI_CHAT,
                            "{\"model\": \"m\", \"max_tokens\": 1, \"n\": null}", &r, &why),
                     0);
    assert_int_equal(req_of(SWORN_PMODEL_OPENAI_CHAT,
                            "{\"model\": \"gpt-4o\", \"max_completion_tokens\": 0, \"max_tokens\": "
                            "null, \"stream\": true, \"stream_options\": {\"include_usage\": "
                            "true}}",
                            &r, &why),
                     0);
    assert_true(r.has_ceiling);
    assert_string_equal(r.ceiling_field, "max_completion_tokens");
    assert_int_equal(r.ceiling, 0);
    assert_true(r.stream);
    /* A stream without include_usage is another shape's business. */
    assert_int_equal(req_of(SWORN_PMODEL_ANTHROPIC_MESSAGES,
                            "{\"model\": \"claude\\u002d3\", \"max_tokens\": 4294967295, "
                            "\"stream\": true}",
                            &r, &why),
                     0);
    assert_string_equal(r.model, "claude-3");
    assert_int_equal(r.ceiling, 4294967295u);
    assert_int_equal(req_of(SWORN_PMODEL_OPENAI_RESPONSES, "{\"model\": \"o3\"}", &r, &why), 0);
    assert_false(r.has_ceiling);
    {
        Sworn__V1__AuthorizationRequest q = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
        Sworn__V1__Resource res = SWORN__V1__RESOURCE__INIT;
        Sworn__V1__Context cx = SWORN__V1__CONTEXT__INIT;

        q.resource = &res;
        q.context = &cx;
        assert_int_equal(req_of(SWORN_PMODEL_OPENAI_RESPONSES,
                                "{\"model\": \"o3\", \"max_output_tokens\": 7}", &r, &why),
                         0);
        sworn_pmodel_fill(&r, &q);
        assert_string_equal(q.operation, "model.call");
        assert_string_equal(res.model, "o3");
        assert_string_equal(cx.model_api, "openai.responses");
        assert_non_null(cx.token_ceiling);
        assert_string_equal(cx.token_ceiling->field, "max_output_tokens");
        assert_int_equal(cx.token_ceiling->tokens, 7);
    }
}

/* ---- p_musage ---- */

struct usage_case {
    enum sworn_pmodel_api api;
    const char *ctype;
    const char *body;
    int complete;
    int reported;
    uint64_t in, out;
    const char *missing;
};

/* Read body fed in pieces: first `split` bytes, then the rest (split 0: one feed; split -1: one
 * byte a feed). */
static int read_usage(const struct usage_case *c, long split, uint64_t *in, uint64_t *out,
                      const char **missing)
{
    struct sworn_pmusage u;
    size_t n = strlen(c->body);

    sworn_pmusage_init(&u, c->api, c->ctype, c->ctype != NULL ? strlen(c->ctype) : 0, NULL, 0);
    if (split < 0) {
        for (size_t i = 0; i < n; i++)
            assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)c->body + i, 1), 0);
    } else {
        assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)c->body, (size_t)split), 0);
        assert_int_equal(
            sworn_pmusage_feed(&u, (const uint8_t *)c->body + split, n - (size_t)split), 0);
    }
    return sworn_pmusage_finish(&u, c->complete, in, out, missing);
}

static void expect_case(const struct usage_case *c, size_t k)
{
    size_t n = strlen(c->body);

    for (long split = -1; split <= (long)n; split++) {
        uint64_t in = 7, out = 7;
        const char *missing = NULL;
        int rep = read_usage(c, split, &in, &out, &missing);

        if (rep != c->reported || (rep && (in != c->in || out != c->out)) ||
            (!rep && (missing == NULL || strcmp(missing, c->missing) != 0)))
            fail_msg("case %zu split %ld: reported %d in %llu out %llu missing %s", k, split, rep,
                     (unsigned long long)in, (unsigned long long)out,
                     missing != NULL ? missing : "-");
    }
}

#define SSE "text/event-stream; charset=utf-8"
#define JSON "application/json"
#define BADN "the response's usage is not an integer of 0..4294967295"

static const struct usage_case usage_cases[] = {
    /* JSON, each shape */
    {SWORN_PMODEL_OPENAI_CHAT, JSON,
     "{\"choices\": [], \"usage\": {\"prompt_tokens\": 12, \"completion_tokens\": 34, "
     "\"prompt_tokens_details\": {\"cached_tokens\": 5}}}",
     1, 1, 12, 34, NULL},
    {SWORN_PMODEL_OPENAI_RESPONSES, NULL,
     "{\"output\": [], \"usage\": {\"input_tokens\": 1, \"output_tokens\": 2}}", 1, 1, 1, 2, NULL},
    {SWORN_PMODEL_ANTHROPIC_MESSAGES, JSON,
     "{\"content\": [], \"usage\": {\"input_tokens\": 0, \"output_tokens\": 4294967295}}", 1, 1, 0,
     4294967295u, NULL},
    /* JSON refusals */
    {SWORN_PMODEL_OPENAI_CHAT, JSON, "{\"usage\": {\"prompt_tokens\": 1}}", 1, 0, 0, 0,
     "the response reports no usage"},
    {SWORN_PMODEL_OPENAI_CHAT, JSON, "{\"usage\": null}", 1, 0, 0, 0,
     "the response reports no usage"},
    {SWORN_PMODEL_OPENAI_CHAT, JSON, "{\"usage\": {\"input_tokens\": 1, \"output_tokens\": 2}}", 1,
     0, 0, 0, "the response reports no usage"},
    {SWORN_PMODEL_OPENAI_CHAT, JSON,
     "{\"usage\": {\"prompt_tokens\": -1, \"completion_tokens\": 2}}", 1, 0, 0, 0, BADN},
    {SWORN_PMODEL_OPENAI_CHAT, JSON,
     "{\"usage\": {\"prompt_tokens\": 1.5, \"completion_tokens\": 2}}", 1, 0, 0, 0, BADN},
    {SWORN_PMODEL_OPENAI_CHAT, JSON,
     "{\"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 2e0}}", 1, 0, 0, 0, BADN},
    {SWORN_PMODEL_OPENAI_CHAT, JSON,
     "{\"usage\": {\"prompt_tokens\": 4294967296, \"completion_tokens\": 2}}", 1, 0, 0, 0, BADN},
    {SWORN_PMODEL_OPENAI_CHAT, JSON,
     "{\"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": \"2\"}}", 1, 0, 0, 0, BADN},
    {SWORN_PMODEL_OPENAI_CHAT, JSON,
     "{\"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 2}, \"usage\": {}}", 1, 0, 0, 0,
     "the response body is not strict JSON"},
    {SWORN_PMODEL_OPENAI_CHAT, JSON, "{\"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 2}",
     1, 0, 0, 0, "the response body is not strict JSON"},
    {SWORN_PMODEL_OPENAI_CHAT, JSON,
     "{\"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 2}}", 0, 0, 0, 0,
     "the response ended before its end"},
    /* SSE: OpenAI chat stream */
    {SWORN_PMODEL_OPENAI_CHAT, SSE,
     ": keep-alive\n\n"
     "data: {\"choices\": [{\"delta\": {\"content\": \"hi\"}}], \"usage\": null}\n\n"
     "data: {\"choices\": [], \"usage\": {\"prompt_tokens\": 9, \"completion_tokens\": 8}}\n\n"
     "data: [DONE]\n\n",
     1, 1, 9, 8, NULL},
    /* CRLF and CR line ends, a data line split over two "data:" lines, no space after ':' */
    {SWORN_PMODEL_OPENAI_CHAT, SSE,
     "event: x\r\ndata:{\"usage\": {\"prompt_tokens\": 3,\r\ndata: \"completion_tokens\": 4}}"
     "\r\n\r\n",
     1, 1, 3, 4, NULL},
    {SWORN_PMODEL_OPENAI_CHAT, SSE,
     "data: {\"usage\": {\"prompt_tokens\": 3, \"completion_tokens\": 4}}\r\r", 1, 1, 3, 4, NULL},
    /* a second, lower report: the larger is charged */
    {SWORN_PMODEL_OPENAI_CHAT, SSE,
     "data: {\"usage\": {\"prompt_tokens\": 30, \"completion_tokens\": 40}}\n\n"
     "data: {\"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 1}}\n\n",
     1, 1, 30, 40, NULL},
    /* the last event without its blank line: the body's end ends it */
    {SWORN_PMODEL_OPENAI_CHAT, SSE,
     "data: {\"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 6}}\n", 1, 1, 5, 6, NULL},
    /* a hostile count in any event poisons the usage */
    {SWORN_PMODEL_OPENAI_CHAT, SSE,
     "data: {\"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 6}}\n\n"
     "data: {\"usage\": {\"prompt_tokens\": -5, \"completion_tokens\": 6}}\n\n",
     1, 0, 0, 0, BADN},
    {SWORN_PMODEL_OPENAI_CHAT, SSE, "data: [DONE]\n\n", 1, 0, 0, 0,
     "the response reports no usage"},
    {SWORN_PMODEL_OPENAI_CHAT, SSE,
     "data: {\"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 6}}\n\n", 0, 0, 0, 0,
     "the response ended before its end"},
    /* another field named like data is not data */
    {SWORN_PMODEL_OPENAI_CHAT, SSE,
     "datax: {\"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 6}}\n\n", 1, 0, 0, 0,
     "the response reports no usage"},
    /* SSE: Responses API */
    {SWORN_PMODEL_OPENAI_RESPONSES, SSE,
     "event: response.created\ndata: {\"type\": \"response.created\", \"response\": {\"usage\": "
     "null}}\n\n"
     "event: response.completed\ndata: {\"type\": \"response.completed\", \"response\": "
     "{\"usage\": {\"input_tokens\": 21, \"output_tokens\": 22}}}\n\n",
     1, 1, 21, 22, NULL},
    /* SSE: Anthropic messages */
    {SWORN_PMODEL_ANTHROPIC_MESSAGES, SSE,
     "event: message_start\ndata: {\"type\": \"message_start\", \"message\": {\"usage\": "
     "{\"input_tokens\": 25, \"output_tokens\": 1}}}\n\n"
     "event: ping\ndata: {\"type\": \"ping\"}\n\n"
     "event: message_delta\ndata: {\"type\": \"message_delta\", \"usage\": {\"output_tokens\": "
     "15}}\n\n"
     "event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n",
     1, 1, 25, 15, NULL},
    /* message_start alone: the output is not known */
    {SWORN_PMODEL_ANTHROPIC_MESSAGES, SSE,
     "data: {\"type\": \"message_start\", \"message\": {\"usage\": {\"input_tokens\": 25}}}\n\n", 1,
     0, 0, 0, "the response reports no usage"},
};

static void test_usage_reader(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof(usage_cases) / sizeof(usage_cases[0]); k++)
        expect_case(&usage_cases[k], k);
}

static void test_usage_bounds(void **state)
{
    struct sworn_pmusage u;
    uint64_t in, out;
    const char *missing = NULL;
    size_t big = SWORN_PMUSAGE_BUF_MAX + 1;
    uint8_t *junk = malloc(big);
    static const char tail[] =
        "\n\ndata: {\"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 2}}\n\n";

    (void)state;
    assert_non_null(junk);
    memset(junk, 'a', big);
    /* A JSON body over the bound. */
    sworn_pmusage_init(&u, SWORN_PMODEL_OPENAI_CHAT, JSON, strlen(JSON), NULL, 0);
    assert_int_equal(sworn_pmusage_feed(&u, junk, big), 0);
    assert_int_equal(sworn_pmusage_finish(&u, 1, &in, &out, &missing), 0);
    assert_string_equal(missing, "the response body is larger than the usage reader's bound");
    /* Red team rt-A: a JSON body over the bound (logprobs, n choices, audio) is scanned for its
     * top-level usage as it passes; what a model wrote inside a string never counts, two
     * top-level usage members (or an escaped name) are not strict JSON. */
    {
        static const char head[] = "{\"id\": \"c1\", \"text\": \"\\\"usage\\\": {\\\"prompt_tokens"
                                   "\\\": 1, \\\"completion_tokens\\\": 1}}, \\\\\", \"pad\": \"";
        static const char end[] = "\", \"nested\": {\"usage\": {\"prompt_tokens\": 2}}, "
                                  "\"usage\": {\"prompt_tokens\": 7000, \"completion_tokens\": 9}, "
                                  "\"z\": [1, {\"a\": \"}\"}]}";
        static const char twice[] =
            "\", \"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 1}, "
            "\"usage\": {\"prompt_tokens\": 7000, \"completion_tokens\": 9}}";
        static const char escaped[] =
            "\", \"us\\u0061ge\": {\"prompt_tokens\": 1, "
            "\"completion_tokens\": 1}, \"usage\": {\"prompt_tokens\": 7000, "
            "\"completion_tokens\": 9}}";
        const char *ends[] = {end, twice, escaped};

        for (size_t k = 0; k < 3; k++) {
            sworn_pmusage_init(&u, SWORN_PMODEL_OPENAI_CHAT, JSON, strlen(JSON), NULL, 0);
            assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)head, strlen(head)), 0);
            assert_int_equal(sworn_pmusage_feed(&u, junk, big), 0);
            assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)ends[k], strlen(ends[k])), 0);
            if (k == 0) {
                assert_int_equal(sworn_pmusage_finish(&u, 1, &in, &out, &missing), 1);
                assert_int_equal(in, 7000);
                assert_int_equal(out, 9);
            } else {
                assert_int_equal(sworn_pmusage_finish(&u, 1, &in, &out, &missing), 0);
                assert_string_equal(missing, "the response body is not strict JSON");
            }
        }
        /* Cut short: not reported. */
        sworn_pmusage_init(&u, SWORN_PMODEL_OPENAI_CHAT, JSON, strlen(JSON), NULL, 0);
        assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)head, strlen(head)), 0);
        assert_int_equal(sworn_pmusage_feed(&u, junk, big), 0);
        assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)end, strlen(end)), 0);
        assert_int_equal(sworn_pmusage_finish(&u, 0, &in, &out, &missing), 0);
        assert_string_equal(missing, "the response ended before its end");
    }
    /* An SSE event over the bound is skipped; a later one is read. */
    sworn_pmusage_init(&u, SWORN_PMODEL_OPENAI_CHAT, SSE, strlen(SSE), NULL, 0);
    assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)"data: ", 6), 0);
    assert_int_equal(sworn_pmusage_feed(&u, junk, big), 0);
    assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)tail, strlen(tail)), 0);
    assert_int_equal(sworn_pmusage_finish(&u, 1, &in, &out, &missing), 1);
    assert_int_equal(in, 1);
    assert_int_equal(out, 2);
    /* ... and alone, it says so. */
    sworn_pmusage_init(&u, SWORN_PMODEL_OPENAI_CHAT, SSE, strlen(SSE), NULL, 0);
    assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)"data: ", 6), 0);
    assert_int_equal(sworn_pmusage_feed(&u, junk, big), 0);
    assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)"\n\n", 2), 0);
    assert_int_equal(sworn_pmusage_finish(&u, 1, &in, &out, &missing), 0);
    assert_string_equal(missing, "the response body is larger than the usage reader's bound");
    free(junk);
    /* The bound of all readers together: a reader that would grow past it reads nothing more,
     * and the count goes back when it is done. */
    {
        size_t held = SWORN_PMUSAGE_HELD_MAX - 100;

        sworn_pmusage_init(&u, SWORN_PMODEL_OPENAI_CHAT, JSON, strlen(JSON), NULL, 0);
        sworn_pmusage_share(&u, &held);
        assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)"{}", 2), 0);
        assert_int_equal(sworn_pmusage_finish(&u, 1, &in, &out, &missing), 0);
        assert_string_equal(missing, "the proxy holds its bound of usage buffers for all "
                                     "responses (SWORN_PMUSAGE_HELD_MAX)");
        assert_int_equal(held, SWORN_PMUSAGE_HELD_MAX - 100);
        held = 0;
        sworn_pmusage_init(&u, SWORN_PMODEL_OPENAI_CHAT, SSE, strlen(SSE), NULL, 0);
        sworn_pmusage_share(&u, &held);
        assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)tail, strlen(tail)), 0);
        assert_true(held > 0);
        assert_int_equal(sworn_pmusage_finish(&u, 1, &in, &out, &missing), 1);
        assert_int_equal(held, 0);
    }
    /* A compressed body is never read. */
    sworn_pmusage_init(&u, SWORN_PMODEL_OPENAI_CHAT, JSON, strlen(JSON), "gzip", 4);
    assert_int_equal(sworn_pmusage_feed(&u, (const uint8_t *)"{}", 2), 0);
    assert_int_equal(sworn_pmusage_finish(&u, 1, &in, &out, &missing), 0);
    assert_string_equal(missing, "the response body is compressed (Content-Encoding)");
    sworn_pmusage_init(&u, SWORN_PMODEL_OPENAI_CHAT, JSON, strlen(JSON), "identity", 8);
    assert_int_equal(sworn_pmusage_feed(&u,
                                        (const uint8_t *)"{\"usage\": {\"prompt_tokens\": 1, "
                                                         "\"completion_tokens\": 1}}",
                                        55),
                     0);
    assert_int_equal(sworn_pmusage_finish(&u, 1, &in, &out, &missing), 1);
}

/* ---- policy: models and tokens ---- */

static struct sworn_policy *load(const char *text)
{
    struct sworn_policy *p = NULL;

    if (sworn_policy_load_mem("p.yaml", (const uint8_t *)text, strlen(text), &p) != 0)
        fail_msg("load: %s", sworn_err_msg());
    return p;
}

static void load_refused(const char *text, const char *msg)
{
    struct sworn_policy *p = NULL;

    if (sworn_policy_load_mem("p.yaml", (const uint8_t *)text, strlen(text), &p) == 0 ||
        strstr(sworn_err_msg(), msg) == NULL)
        fail_msg("%s: %s", text, p != NULL ? "(loaded)" : sworn_err_msg());
}

struct mreq {
    Sworn__V1__AuthorizationRequest q;
    Sworn__V1__Principal pr;
    Sworn__V1__Resource res;
    Sworn__V1__Context cx;
    Sworn__V1__TokenCeiling tc;
};

static void mreq_init(struct mreq *m, const char *id, const char *model, int64_t ceiling,
                      uint64_t sandbox)
{
    sworn__v1__authorization_request__init(&m->q);
    sworn__v1__principal__init(&m->pr);
    sworn__v1__resource__init(&m->res);
    sworn__v1__context__init(&m->cx);
    sworn__v1__token_ceiling__init(&m->tc);
    m->pr.id = "agent-1";
    m->pr.sandbox_start_index = sandbox;
    m->res.scheme = "https";
    m->res.host = "api.example.com";
    m->res.port = 443;
    m->res.path = "/v1/chat/completions";
    m->res.model = (char *)model;
    m->cx.method = "POST";
    m->cx.model_api = "openai.chat";
    m->tc.field = "max_tokens";
    m->tc.tokens = ceiling >= 0 ? (uint64_t)ceiling : 0;
    m->cx.token_ceiling = ceiling >= 0 ? &m->tc : NULL;
    m->q.request_id = (char *)id;
    m->q.principal = &m->pr;
    m->q.operation = "model.call";
    m->q.resource = &m->res;
    m->q.context = &m->cx;
}

#define T0 1700000000000ull

static const char tokens_policy[] = "rules:\n"
                                    "  - id: no-mini\n"
                                    "    effect: deny\n"
                                    "    resource: {models: [\"*-mini\"]}\n"
                                    "  - id: gpt\n"
                                    "    effect: allow\n"
                                    "    operations: [model.call]\n"
                                    "    resource: {models: [\"gpt-*\"]}\n"
                                    "    tokens: {max: 100, window: 1h}\n"
                                    "  - id: run\n"
                                    "    effect: allow\n"
                                    "    resource: {models: [\"run-*\"]}\n"
                                    "    tokens: {max: 50, window: 1h, per: sandbox}\n";

static void test_policy_tokens(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b;
    struct sworn_policy_result r, r2;
    struct mreq m;

    (void)state;
    load_refused("rules:\n  - {id: a, effect: allow, resource: {models: [\"GPT-*\"]}}\n",
                 "a model pattern is lower-case printable ASCII");
    load_refused("rules:\n  - {id: a, effect: deny, tokens: {max: 1, window: 1h}}\n",
                 "budgets are only for allow rules");
    load_refused("rules:\n  - {id: a, effect: allow, tokens: {window: 1h}}\n",
                 "tokens needs a max");
    load_refused("rules:\n  - {id: a, effect: allow, tokens: {max: 0, window: 1h}}\n",
                 "0 is outside [1, 1000000000000]");
    load_refused("rules:\n  - {id: a, effect: allow, tokens: {max: 1000000000001, window: 1h}}\n",
                 "is outside [1, 1000000000000]");
    load_refused("rules:\n  - {id: a, effect: allow, tokens: {max: 1}}\n", "tokens needs a window");
    load_refused("rules:\n  - {id: a, effect: allow, tokens: {max: 1, window: 1h, per: task}}\n",
                 "per must be principal, sandbox or global");
    load_refused("rules:\n  - {id: a, effect: allow, tokens: {max: 1, window: 1h, pointer: /x}}\n",
                 "pointer");
    p = load(tokens_policy);
    assert_int_equal(sworn_budgets_new(&b), 0);
    /* The deny of a model in any case. */
    mreq_init(&m, "r-0", "GPT-4o-MINI", 1, 0);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0, &r), 0);
    assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(r.rule_id, "no-mini");
    /* A bad model has no canonical form. */
    mreq_init(&m, "r-0", "gpt 4o", 1, 0);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0, &r), 0);
    assert_non_null(strstr(r.reason, "the resource is refused: the model name holds a space"));
    /* No ceiling: nothing to reserve. */
    mreq_init(&m, "r-1", "gpt-4o", -1, 0);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0, &r), 0);
    assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_non_null(strstr(r.reason, "token budget of rule gpt: the request names no token "
                                     "ceiling"));
    /* Reserve 10, settle to 70; reserve 10 again (80), settle to 140: spent. */
    mreq_init(&m, "r-2", "gpt-4o", 10, 0);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0, &r), 0);
    assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn_budgets_settle(b, r.charges, SWORN_POLICY_CHARGES, 70);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0 + 1, &r2), 0);
    assert_int_equal(r2.effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn_budgets_settle(b, r2.charges, SWORN_POLICY_CHARGES, 70);
    mreq_init(&m, "r-3", "gpt-4o", 0, 0);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0 + 2, &r), 0);
    assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_non_null(strstr(r.reason, "token budget exhausted: rule gpt allows 100 tokens per 1h "
                                     "per principal; 140 already used or reserved"));
    /* Settling down gives back: a reservation of 30 that used 5. */
    mreq_init(&m, "r-4", "run-a", 30, 7);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0, &r), 0);
    assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    mreq_init(&m, "r-5", "run-a", 30, 7);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0, &r2), 0);
    assert_int_equal(r2.effect, SWORN__V1__EFFECT__EFFECT_DENY); /* 30 + 30 > 50 */
    assert_non_null(strstr(r2.reason, "per sandbox run"));
    sworn_budgets_settle(b, r.charges, SWORN_POLICY_CHARGES, 5);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0, &r2), 0);
    assert_int_equal(r2.effect, SWORN__V1__EFFECT__EFFECT_ALLOW); /* 5 + 30 */
    /* per: sandbox: another run of the same principal has its own counter. */
    mreq_init(&m, "r-6", "run-a", 50, 8);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0, &r), 0);
    assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn_budgets_free(b);

    /* Replay: the allow's reservation, then its usage settled (as d_startup.c does). */
    {
        Sworn__V1__DecisionRecord rec = SWORN__V1__DECISION_RECORD__INIT;
        struct sworn_policy_charge ch[SWORN_POLICY_BUDGET_RULES_MAX];
        size_t n = 0;

        assert_int_equal(sworn_budgets_new(&b), 0);
        mreq_init(&m, "r-7", "gpt-4o", 10, 0);
        rec.request = &m.q;
        rec.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
        rec.rule_id = "gpt";
        rec.time_unix_ms = T0;
        assert_int_equal(sworn_budgets_replay(b, p, &rec), 0);
        assert_int_equal(sworn_budgets_token_charges(p, &rec, ch, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(ch[0].amount, 10);
        sworn_budgets_settle(b, ch, n, 95);
        mreq_init(&m, "r-8", "gpt-4o", 6, 0);
        assert_int_equal(sworn_policy_eval(p, b, &m.q, T0 + 5, &r), 0);
        assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_DENY); /* 95 + 6 > 100 */
        mreq_init(&m, "r-9", "gpt-4o", 5, 0);
        assert_int_equal(sworn_policy_eval(p, b, &m.q, T0 + 5, &r), 0);
        assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_ALLOW); /* 95 + 5 */
        sworn_budgets_free(b);
    }
    sworn_policy_free(p);
}

/* docs/formats.md's UsageRecorded example, byte for byte. */
static void test_usage_entry_bytes(void **state)
{
    static const uint8_t want_head[] = {0x62, 0x47, 0x0a, 0x03, 0x75, 0x2d, 0x31, 0x12,
                                        0x03, 0x6d, 0x2d, 0x31, 0x18, 0x05, 0x22, 0x20};
    static const uint8_t want_tail[] = {0x2a, 0x06, 0x67, 0x70, 0x74, 0x2d, 0x34, 0x6f, 0x30,
                                        0x01, 0x38, 0x28, 0x40, 0x1e, 0x50, 0x0a, 0x58, 0x46,
                                        0x60, 0x80, 0xc0, 0xef, 0xe2, 0xad, 0x33};
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__UsageRecorded u = SWORN__V1__USAGE_RECORDED__INIT;
    uint8_t hash[32], *bytes = NULL;
    size_t len = 0;

    (void)state;
    memset(hash, 0xab, sizeof(hash));
    u.request_id = "u-1";
    u.allow_request_id = "m-1";
    u.allow_log_index = 5;
    u.allow_entry_hash.data = hash;
    u.allow_entry_hash.len = 32;
    u.model = "gpt-4o";
    u.reported = 1;
    u.input_tokens = 40;
    u.output_tokens = 30;
    u.missing = "";
    u.reserved_tokens = 10;
    u.charged_tokens = 70;
    u.time_unix_ms = 1764633600000ull;
    e.kind_case = SWORN__V1__ENTRY__KIND_USAGE_RECORDED;
    e.usage_recorded = &u;
    assert_int_equal(sworn_frame_pack_entry(&e, &bytes, &len), 0);
    assert_int_equal(len, sizeof(want_head) + 32 + sizeof(want_tail));
    assert_memory_equal(bytes, want_head, sizeof(want_head));
    assert_memory_equal(bytes + sizeof(want_head), hash, 32);
    assert_memory_equal(bytes + sizeof(want_head) + 32, want_tail, sizeof(want_tail));
    free(bytes);
    /* The arithmetic is the format's: charged that is not input + output is refused. */
    u.charged_tokens = 71;
    assert_int_not_equal(sworn_frame_pack_entry(&e, &bytes, &len), 0);
    u.charged_tokens = 70;
    u.reported = 0;
    assert_int_not_equal(sworn_frame_pack_entry(&e, &bytes, &len), 0); /* no missing sentence */
}

static void count_warning(void *arg, const struct sworn_lint_warning *w)
{
    if (strcmp(w->rule_id, "gpt-4o") == 0)
        (*(int *)arg)++;
}

/* sworn-policy check sees through models: an allow of gpt-4o under a deny of gpt-* is dead. */
static void test_lint_models(void **state)
{
    struct sworn_policy *p =
        load("rules:\n"
             "  - {id: no-gpt, effect: deny, resource: {models: [\"gpt-*\"]}}\n"
             "  - {id: gpt-4o, effect: allow, resource: {models: "
             "[\"gpt-4o\"]}}\n");
    int n = 0;

    (void)state;
    assert_true(sworn_policy_lint(p, count_warning, &n) >= 0);
    assert_int_equal(n, 1);
    sworn_policy_free(p);
    p = load("rules:\n"
             "  - {id: no-gpt, effect: deny, resource: {models: [\"gpt-4o-*\"]}}\n"
             "  - {id: gpt-4o, effect: allow, resource: {models: [\"gpt-4o\"]}}\n");
    n = 0;
    assert_true(sworn_policy_lint(p, count_warning, &n) >= 0);
    assert_int_equal(n, 0);
    sworn_policy_free(p);
}

/* The wire's rules for the new fields and messages (frame.c): each breach refused. */
static void test_wire_bounds(void **state)
{
    Sworn__V1__UsageReport u = SWORN__V1__USAGE_REPORT__INIT;
    struct mreq m;
    uint8_t *out = NULL;
    size_t len = 0;
    char big[300];

    (void)state;
    u.request_id = "u-1";
    u.allow_request_id = "m-1";
    u.allow_log_index = 3;
    u.reported = 1;
    u.input_tokens = 4294967295u;
    u.output_tokens = 4294967295u;
    u.missing = "";
    assert_int_equal(sworn_frame_pack_usage_report(&u, &out, &len), 0);
    assert_int_equal(out[4], 0x1a); /* DecisionRequest member 3 */
    free(out);
    u.input_tokens = 4294967296u; /* above the bound */
    assert_int_not_equal(sworn_frame_pack_usage_report(&u, &out, &len), 0);
    u.input_tokens = 1;
    u.missing = "why"; /* reported with a reason */
    assert_int_not_equal(sworn_frame_pack_usage_report(&u, &out, &len), 0);
    u.reported = 0; /* not reported, with counts */
    assert_int_not_equal(sworn_frame_pack_usage_report(&u, &out, &len), 0);
    u.input_tokens = u.output_tokens = 0;
    assert_int_equal(sworn_frame_pack_usage_report(&u, &out, &len), 0);
    free(out);
    u.allow_log_index = 0;
    assert_int_not_equal(sworn_frame_pack_usage_report(&u, &out, &len), 0);

    mreq_init(&m, "r-1", "gpt-4o", 10, 0);
    assert_int_equal(sworn_frame_check_request(&m.q), 0);
    m.tc.field = "max_tokenz";
    assert_int_not_equal(sworn_frame_check_request(&m.q), 0);
    m.tc.field = "max_tokens";
    m.tc.tokens = 4294967296u;
    assert_int_not_equal(sworn_frame_check_request(&m.q), 0);
    m.tc.tokens = 1;
    m.cx.model_api = "gemini";
    assert_int_not_equal(sworn_frame_check_request(&m.q), 0);
    m.cx.model_api = "anthropic.messages";
    memset(big, 'm', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    m.res.model = big;
    assert_int_not_equal(sworn_frame_check_request(&m.q), 0);
}

/* Two token budgets on one request (a model's and the principal's for all models): the allow
 * reserves in both, and the settlement replaces the reservation in both. */
static void test_two_token_budgets(void **state)
{
    struct sworn_policy *p = load("rules:\n"
                                  "  - {id: gpt, effect: allow, resource: {models: [\"gpt-*\"]},\n"
                                  "     tokens: {max: 1000, window: 1h}}\n"
                                  "  - {id: all, effect: allow, operations: [model.call],\n"
                                  "     tokens: {max: 100, window: 1d}}\n");
    struct sworn_budgets *b;
    struct sworn_policy_result r;
    struct mreq m;
    size_t tokens = 0;

    (void)state;
    assert_int_equal(sworn_budgets_new(&b), 0);
    mreq_init(&m, "r-1", "gpt-4o", 10, 0);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0, &r), 0);
    assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_string_equal(r.rule_id, "gpt");
    for (size_t i = 0; i < SWORN_POLICY_CHARGES; i++)
        tokens += r.charges[i].used && r.charges[i].tokens;
    assert_int_equal(tokens, 2);
    sworn_budgets_settle(b, r.charges, SWORN_POLICY_CHARGES, 95);
    /* "all" now holds 95 of 100: a ceiling of 6 is denied by it, although gpt has room. */
    mreq_init(&m, "r-2", "gpt-4o", 6, 0);
    assert_int_equal(sworn_policy_eval(p, b, &m.q, T0 + 1, &r), 0);
    assert_int_equal(r.effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(r.rule_id, "all");
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

/* The shipped example shows the models key, and its section loads as shown (the whole file names
 * users and groups of a deployment: test_proxy_config loads it with them). */
static void test_example_models(void **state)
{
    char *path = sworn_test_path(sworn_test_source_dir(), "proxy/examples/proxy.yaml");
    char *text = sworn_test_read_file_opt(path, NULL), *at, err[512];
    struct sworn_pmodel_conf c;

    (void)state;
    assert_non_null(text);
    at = strstr(text, "\nmodels:\n");
    assert_non_null(at);
    if (conf_of(at + 1, &c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.dests[0].dest.host, "api.openai.com");
    assert_false(c.dests[0].anthropic);
    assert_string_equal(c.dests[1].dest.host, "api.anthropic.com");
    assert_true(c.dests[1].anthropic);
    free(text);
    free(path);
}

/* sworn-policy eval reads a model call as JSON, and prints it back to the same request. */
static void test_reqjson_model(void **state)
{
    static const char text[] =
        "{\"request_id\": \"r-1\", \"principal\": {\"id\": \"agent-1\"}, \"operation\": "
        "\"model.call\", \"resource\": {\"scheme\": \"https\", \"host\": \"api.example.com\", "
        "\"port\": 443, \"path\": \"/v1/chat/completions\", \"model\": \"GPT-4o\"}, "
        "\"context\": {\"method\": \"POST\", \"token_ceiling\": {\"field\": "
        "\"max_completion_tokens\", \"tokens\": 7}, \"model_api\": \"openai.chat\"}}";
    Sworn__V1__AuthorizationRequest *q = NULL, *q2 = NULL;
    char *printed;

    (void)state;
    assert_int_equal(sworn_reqjson_parse(text, strlen(text), &q), 0);
    assert_string_equal(q->resource->model, "GPT-4o");
    assert_non_null(q->context->token_ceiling);
    assert_int_equal(q->context->token_ceiling->tokens, 7);
    printed = sworn_reqjson_print_request(q);
    assert_non_null(printed);
    assert_int_equal(sworn_reqjson_parse(printed, strlen(printed), &q2), 0);
    assert_string_equal(q2->resource->model, "GPT-4o");
    assert_string_equal(q2->context->model_api, "openai.chat");
    assert_string_equal(q2->context->token_ceiling->field, "max_completion_tokens");
    free(printed);
    sworn__v1__authorization_request__free_unpacked(q, NULL);
    sworn__v1__authorization_request__free_unpacked(q2, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conf_and_classify), cmocka_unit_test(test_request_bodies),
        cmocka_unit_test(test_usage_reader),      cmocka_unit_test(test_usage_bounds),
        cmocka_unit_test(test_policy_tokens),     cmocka_unit_test(test_usage_entry_bytes),
        cmocka_unit_test(test_lint_models),       cmocka_unit_test(test_wire_bounds),
        cmocka_unit_test(test_two_token_budgets), cmocka_unit_test(test_example_models),
        cmocka_unit_test(test_reqjson_model),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
