/*
 * test_proxy_mcp_sdk.c -- MCP through sworn-proxy against a server and a client no one here wrote:
 * the npm @modelcontextprotocol/sdk 1.32.2 (tests/npm/mcp-server.mjs: McpServer and
 * StreamableHTTPServerTransport with five tools, a resource and a prompt; tests/npm/mcp-client.mjs:
 * the SDK's Client over StreamableHTTPClientTransport, its fetch going through the proxy with
 * undici's ProxyAgent). The stack (decisiond, signer, proxy) runs a policy that allows the session
 * methods, the tool echo, the tool pay up to 10 per window (a sum budget on /amount), the URIs
 * file:///docs/ (all below) and the prompt review, and nothing else.
 *
 * What is checked: every step of the client comes out as the policy says (echo allowed; delete_all
 * denied as a JSON-RPC error the SDK surfaces, with the log index; pay allowed until the window's
 * cap, then denied; a resource read and a prompt allowed; an SSE progress event relayed before the
 * server ends the stream: the client releases the server's wait only once the event came, so the
 * call cannot end otherwise); what reached the server (its calls file) is exactly what was allowed;
 * and the log holds each decision with its operation, tool, URI and the amount's number. Then the
 * agent's attacks, sent raw with curl through the proxy, each recorded: a batch, two "name"
 * members, a byte order mark, a second JSON value, a huge id, arguments that are not an object, a
 * wrong Content-Type, a GET with a body, other methods; "method" and the tool name spelt with
 * unicode escapes and a tool name in another case are decided as what the server would read; a
 * chunked POST is read whole and decided. After each part, the auditor's sworn-verify accepts
 * the record (the MCP decisions with their URIs, and the refusals).
 */
#define _GNU_SOURCE
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

#include "stack_fixture.h"
#include "testutil.h"
#include "upstream_fixture.h"
#include "verify_fixture.h"

static struct sworn_stack stack;
static char *dir;        /* the node scripts, their node_modules link, the server's files */
static pid_t server = 0; /* the node MCP server */
static char server_url[128];

static const char policy[] =
    "rules:\n"
    "  - id: mcp-session\n"
    "    effect: allow\n"
    "    operations: [mcp.initialize, \"mcp.notifications/*\", mcp.tools/list, mcp.ping,\n"
    "                 mcp.rpc.listen, mcp.rpc.end]\n"
    "  - id: mcp-echo\n"
    "    effect: allow\n"
    "    operations: [mcp.tools/call]\n"
    "    resource: {tools: [echo, slow, release]}\n"
    "  - id: mcp-pay\n"
    "    effect: allow\n"
    "    operations: [mcp.tools/call]\n"
    "    resource: {tools: [pay]}\n"
    "    sum: {pointer: /amount, max: \"10.00\", window: 1d}\n"
    "  - id: mcp-docs\n"
    "    effect: allow\n"
    "    operations: [mcp.resources/read]\n"
    "    resource: {uris: [\"file:///docs/*\"]}\n"
    "  - id: mcp-review\n"
    "    effect: allow\n"
    "    resource: {prompts: [review]}\n";

static int teardown(void **state)
{
    int rc = 0;

    (void)state;
    sworn_upstream_stop_child(&server, "the MCP server");
    if (stack.dir != NULL && sworn_stack_down(&stack) != 0)
        rc = -1;
    if (dir != NULL) {
        if (getenv("SWORN_KEEP_STACK") == NULL)
            sworn_test_rmtree(dir);
        free(dir);
        dir = NULL;
    }
    return rc;
}

/* The node scripts beside a link to the npm packages (ESM resolves bare names from the script's
 * folder up), the server started and its port read. */
static void start_server(void)
{
    const char *nm = sworn_test_node_modules();
    char *port_path, *calls, *log, *link;
    uint16_t port = 0;
    char *argv[6];

    dir = sworn_test_tmpdir("mcp-sdk");
    link = sworn_test_path(dir, "node_modules");
    assert_int_equal(symlink(nm, link), 0);
    free(link);
    for (int i = 0; i < 2; i++) {
        const char *name = i == 0 ? "mcp-server.mjs" : "mcp-client.mjs";
        char *src, *dst, *body;
        size_t len;

        assert_true(asprintf(&src, "%s/tests/npm/%s", sworn_test_source_dir(), name) > 0);
        dst = sworn_test_path(dir, name);
        body = sworn_test_read_file(src, &len);
        sworn_test_write_file(dst, body, len, 0600);
        free(body);
        free(src);
        free(dst);
    }
    port_path = sworn_test_path(dir, "port");
    calls = sworn_test_path(dir, "calls.log");
    log = sworn_test_path(dir, "server.log");
    argv[0] = "/usr/bin/env";
    argv[1] = "node";
    argv[2] = sworn_test_path(dir, "mcp-server.mjs");
    argv[3] = port_path;
    argv[4] = calls;
    argv[5] = NULL;
    server = sworn_upstream_spawn_port(argv, log, port_path, 30000, &port);
    if (server <= 0)
        fail_msg("the MCP server did not start (its output is above)");
    snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%u/mcp", (unsigned)port);
    free(argv[2]);
    free(port_path);
    free(calls);
    free(log);
}

/* The stack with the test's policy, and the proxy restarted with the server as its `mcp:`. */
static void start_stack(void)
{
    char *pol = sworn_test_path(dir, "policy.yaml"), opts[1024];

    sworn_test_write_file(pol, policy, strlen(policy), 0600);
    snprintf(opts, sizeof(opts), "--no-tpm --file-key --proxy --policy %s", pol);
    free(pol);
    assert_int_equal(sworn_stack_up(&stack, opts), 0);
    assert_int_equal(
        sworn_stack_sh(&stack, "printf 'mcp:\\n  - %s\\n' >> \"$PROXY_CONFIG\"", server_url), 0);
    assert_int_equal(sworn_stack_start_proxy(&stack), 0);
}

/* The newest decision entries (oldest first), at most n of the newest 64 entries. */
static size_t decisions(Sworn__V1__AdminResponse **tail, const Sworn__V1__DecisionRecord **out,
                        size_t n)
{
    size_t k = 0;

    *tail = sworn_stack_tail(&stack, 64);
    for (size_t i = 0; i < (*tail)->tail->n_entries && k < n; i++)
        if ((*tail)->tail->entries[i]->kind_case == SWORN__V1__ENTRY__KIND_DECISION)
            out[k++] = (*tail)->tail->entries[i]->decision;
    return k;
}

/* The i-th decision (from 0, oldest first) whose operation and tool are these, or NULL. */
static const Sworn__V1__DecisionRecord *nth(const Sworn__V1__DecisionRecord **d, size_t n,
                                            const char *op, const char *tool, int i)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(d[k]->request->operation, op) == 0 &&
            (tool == NULL || strcmp(d[k]->request->resource->tool, tool) == 0) && i-- == 0)
            return d[k];
    return NULL;
}

static void expect_amount(const Sworn__V1__DecisionRecord *r, Sworn__V1__Effect effect,
                          const char *rule, const char *amount)
{
    const Sworn__V1__Context *c;

    assert_non_null(r);
    c = r->request->context;
    assert_int_equal(r->effect, effect);
    assert_string_equal(r->rule_id, rule);
    assert_string_equal(r->request->resource->tool, "pay");
    assert_string_equal(r->canonical_resource->tool, "pay");
    assert_string_equal(c->method, "POST");
    assert_int_equal(c->n_json_numbers, 1);
    assert_string_equal(c->json_numbers[0]->pointer, "/amount");
    assert_string_equal(c->json_numbers[0]->value, amount);
}

/* The auditor's verifier accepts the (stopped) stack's record: the MCP decisions, their tools,
 * URIs (the canonical URI is the request's) and numbers, and the proxy's refusals. */
static void expect_verified(void)
{
    json_object *rep;

    assert_int_equal(sworn_stack_stop_daemon(&stack), 0);
    sworn_stack_dev_trust(&stack);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), stack.dir, "trust.txt", "tiles",
                            NULL, 0, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_pass(rep, "entries");
    sworn_verify_expect_pass(rep, "receipts");
    json_object_put(rep);
}

static void test_sdk_through_proxy(void **state)
{
    struct sworn_test_run r = {0};
    Sworn__V1__AdminResponse *tail = NULL;
    const Sworn__V1__DecisionRecord *d[64], *e;
    size_t n;
    char *calls_path, *calls, *client;
    static const char *const steps[] = {
        "connect", "list",        "echo",          "delete_all", "pay-4",   "pay-5.5", "pay-1",
        "pay-0.5", "read-readme", "prompt-review", "slow",       "release", "end"};

    (void)state;
    start_server();
    start_stack();
    client = sworn_test_path(dir, "mcp-client.mjs");
    sworn_test_runv(&r, NULL, "node", client, stack.proxy_url, server_url, NULL);
    free(client);
    if (r.status != 0)
        fail_msg("the SDK client failed (%d):\n%s\n%s", r.status, r.out, r.err);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        char want[64];

        snprintf(want, sizeof(want), "{\"step\":\"%s\",\"ok\":true", steps[i]);
        if (strstr(r.out, want) == NULL)
            fail_msg("step %s did not pass:\n%s", steps[i], r.out);
    }
    sworn_test_run_free(&r);

    /* What reached the server: the allowed calls, none of the denied ones. */
    calls_path = sworn_test_path(dir, "calls.log");
    calls = sworn_test_read_file(calls_path, NULL);
    assert_string_equal(calls, "{\"tool\":\"echo\",\"arguments\":{\"text\":\"hello\"}}\n"
                               "{\"tool\":\"pay\",\"arguments\":{\"to\":\"bob\",\"amount\":4}}\n"
                               "{\"tool\":\"pay\",\"arguments\":{\"to\":\"bob\",\"amount\":5.5}}\n"
                               "{\"tool\":\"pay\",\"arguments\":{\"to\":\"eve\",\"amount\":0.5}}\n"
                               "{\"tool\":\"slow\",\"arguments\":{}}\n"
                               "{\"tool\":\"release\",\"arguments\":{}}\n");
    free(calls);
    free(calls_path);

    /* The record: each decision with its tool and numbers. */
    n = decisions(&tail, d, 64);
    assert_non_null(nth(d, n, "mcp.initialize", NULL, 0));
    assert_non_null(nth(d, n, "mcp.notifications/initialized", NULL, 0));
    assert_non_null(nth(d, n, "mcp.tools/list", NULL, 0));
    e = nth(d, n, "mcp.tools/call", "echo", 0);
    assert_non_null(e);
    assert_int_equal(e->effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_string_equal(e->rule_id, "mcp-echo");
    assert_int_equal(e->request->context->n_json_numbers, 0);
    e = nth(d, n, "mcp.tools/call", "delete_all", 0);
    assert_non_null(e);
    assert_int_equal(e->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(e->rule_id, "");
    assert_string_equal(e->reason, "no rule matched (default deny)");
    expect_amount(nth(d, n, "mcp.tools/call", "pay", 0), SWORN__V1__EFFECT__EFFECT_ALLOW, "mcp-pay",
                  "4");
    expect_amount(nth(d, n, "mcp.tools/call", "pay", 1), SWORN__V1__EFFECT__EFFECT_ALLOW, "mcp-pay",
                  "5.5");
    e = nth(d, n, "mcp.tools/call", "pay", 2);
    expect_amount(e, SWORN__V1__EFFECT__EFFECT_DENY, "mcp-pay", "1");
    assert_non_null(strstr(e->reason, "budget exhausted: rule mcp-pay allows a sum of 10 at "
                                      "/amount per 1d per principal; 9.5 already used"));
    expect_amount(nth(d, n, "mcp.tools/call", "pay", 3), SWORN__V1__EFFECT__EFFECT_ALLOW, "mcp-pay",
                  "0.5");
    e = nth(d, n, "mcp.resources/read", NULL, 0);
    assert_non_null(e);
    assert_int_equal(e->effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_string_equal(e->request->resource->uri, "file:///docs/readme");
    assert_string_equal(e->canonical_resource->uri, "file:///docs/readme");
    e = nth(d, n, "mcp.prompts/get", "review", 0);
    assert_non_null(e);
    assert_string_equal(e->rule_id, "mcp-review");
    e = nth(d, n, "mcp.rpc.end", NULL, 0);
    assert_non_null(e);
    assert_string_equal(e->request->context->method, "DELETE");
    assert_int_equal(e->effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    /* Every request after initialize names the session, as a digest: the same one throughout. */
    e = nth(d, n, "mcp.initialize", NULL, 0);
    assert_int_equal(e->request->context->mcp_session_sha256.len, 0);
    e = nth(d, n, "mcp.tools/call", "echo", 0);
    assert_int_equal(e->request->context->mcp_session_sha256.len, 32);
    for (size_t k = 0; k < n; k++)
        if (strncmp(d[k]->request->operation, "mcp.", 4) == 0 &&
            strcmp(d[k]->request->operation, "mcp.initialize") != 0) {
            assert_int_equal(d[k]->request->context->mcp_session_sha256.len, 32);
            assert_memory_equal(d[k]->request->context->mcp_session_sha256.data,
                                e->request->context->mcp_session_sha256.data, 32);
        }
    /* The SDK's GET stream for server messages, decided on its own. */
    e = nth(d, n, "mcp.rpc.listen", NULL, 0);
    assert_non_null(e);
    assert_string_equal(e->request->context->method, "GET");
    sworn__v1__admin_response__free_unpacked(tail, NULL);

    /* swornctl tail shows the same to the operator: the tool and the amount. */
    assert_int_equal(sworn_stack_sh(&stack, "\"$SWORNCTL_BIN\" --admin \"$ADMIN_SOCKET\" tail 64 "
                                            "> tail.json && grep -q '\"operation\":\"mcp.tools/"
                                            "call\",\"resource\":{[^}]*\"tool\":\"pay\"' tail.json "
                                            "&& grep -q '\"json_numbers\":\\[{\"pointer\":\"/"
                                            "amount\",\"value\":\"5.5\"}\\]' tail.json"),
                     0);

    expect_verified();
}

/* --- The agent's attacks, raw through the proxy. --- */

/*
 * POST (or method) body to the MCP server through the proxy with curl; extra: more curl options.
 * Returns the HTTP status; the answer's head is in DIR/headers, its body in DIR/answer.
 */
static int send_raw(const char *method, const char *body, size_t len, const char *extra)
{
    char *path = sworn_test_path(dir, "body"), *code_path = sworn_test_path(dir, "code");
    char *code;
    int status;

    sworn_test_write_file(path, body, len, 0600);
    assert_int_equal(sworn_stack_sh(&stack,
                                    "curl -sS -o %s/answer -D %s/headers -w '%%{http_code}' "
                                    "--max-time 20 -x \"$PROXY_URL\" -X %s %s --data-binary @%s "
                                    "%s > %s",
                                    dir, dir, method, extra, path, server_url, code_path),
                     0);
    code = sworn_test_read_file(code_path, NULL);
    status = atoi(code);
    free(code);
    free(path);
    free(code_path);
    return status;
}

#define JSON_CT "-H 'Content-Type: application/json'"

/* The newest decision: a recorded refusal of an MCP request with this sentence. */
static void expect_refused(const char *why)
{
    Sworn__V1__AdminResponse *tail = NULL;
    const Sworn__V1__DecisionRecord *d[64];
    size_t n = decisions(&tail, d, 64);
    char want[512];

    assert_true(n > 0);
    snprintf(want, sizeof(want), "refused by the proxy: %s", why);
    assert_int_equal(d[n - 1]->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(d[n - 1]->rule_id, "");
    if (strncmp(d[n - 1]->reason, want, strlen(want)) != 0)
        fail_msg("newest decision: \"%s\", expected \"%s...\"", d[n - 1]->reason, want);
    assert_non_null(d[n - 1]->request->refusal);
    assert_string_equal(d[n - 1]->request->operation, "mcp.rpc.refused");
    sworn__v1__admin_response__free_unpacked(tail, NULL);
}

/* The newest decision: a deny of tools/call for tool, answered as a JSON-RPC error with id 7. */
static void expect_tool_denied(const char *tool)
{
    Sworn__V1__AdminResponse *tail = NULL;
    const Sworn__V1__DecisionRecord *d[64];
    size_t n = decisions(&tail, d, 64);
    char *answer_path = sworn_test_path(dir, "answer"), *answer;

    assert_true(n > 0);
    assert_int_equal(d[n - 1]->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(d[n - 1]->request->operation, "mcp.tools/call");
    assert_string_equal(d[n - 1]->request->resource->tool, tool);
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    answer = sworn_test_read_file(answer_path, NULL);
    if (strncmp(answer, "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32001,", 47) != 0)
        fail_msg("answer: %s", answer);
    free(answer);
    free(answer_path);
}

static void refused_body(const char *body, size_t len, const char *why)
{
    assert_int_equal(send_raw("POST", body, len, JSON_CT), 400);
    expect_refused(why);
}

#define REFUSED(body, why) refused_body(body, sizeof(body) - 1, why)

static void test_attacks(void **state)
{
    static const char two_names[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                                    "\"params\":{\"name\":\"echo\",\"name\":\"delete_all\"}}";
    static const char bom[] = "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}";
    static const char second[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}{\"jsonrpc\":"
                                 "\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
                                 "\"delete_all\"}}";
    static const char batch[] = "[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"delete_all\"}}]";
    static const char huge_id[] = "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":"
                                  "\"ping\"}";
    static const char args_array[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                                     "\"params\":{\"name\":\"pay\",\"arguments\":[1000]}}";
    static const char escaped[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"\\u006Dethod\":\"tools\\u002f"
                                  "call\",\"params\":{\"name\":\"\\u0064elete_all\"}}";
    static const char cased[] =
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
        "{\"name\":\"ECHO\",\"arguments\":{\"text\":\"x\"}}}";
    static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":"
                               "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                               "\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}";
    Sworn__V1__AdminResponse *tail = NULL;
    const Sworn__V1__DecisionRecord *d[64];
    size_t n;
    char *answer_path, *answer;

    (void)state;
    start_server();
    start_stack();
    REFUSED(two_names, "the body is not strict JSON: ");
    REFUSED(bom, "the body is not strict JSON: ");
    REFUSED(second, "the body is not strict JSON: ");
    REFUSED(batch, "the body is a JSON-RPC batch (an array): MCP 2025-06-18 removed batching");
    REFUSED(huge_id, "the JSON-RPC id is not a string of 1..256 bytes or an integer");
    REFUSED(args_array, "params.arguments is not an object");
    /* Content-Type games: none (curl's form type), text/plain, another charset. */
    assert_int_equal(send_raw("POST", init, sizeof(init) - 1, ""), 415);
    expect_refused("an MCP POST needs one Content-Type: application/json");
    assert_int_equal(send_raw("POST", init, sizeof(init) - 1,
                              "-H 'Content-Type: application/json; charset=utf-16'"),
                     415);
    expect_refused("an MCP POST needs one Content-Type: application/json");
    /* GET with a body; a method MCP does not use. */
    assert_int_equal(send_raw("GET", init, sizeof(init) - 1, JSON_CT), 400);
    expect_refused("a GET or DELETE to an MCP endpoint has a body");
    assert_int_equal(send_raw("PUT", init, sizeof(init) - 1, JSON_CT), 405);
    expect_refused("an MCP endpoint takes POST, GET and DELETE only");
    /* A body the server would decode into another message. */
    assert_int_equal(
        send_raw("POST", init, sizeof(init) - 1, JSON_CT " -H 'Content-Encoding: gzip'"), 415);
    expect_refused("an MCP POST's body may not be encoded (Content-Encoding)");
    /* A WebSocket to the endpoint: an undecided channel to its tools. */
    assert_int_equal(sworn_stack_sh(&stack,
                                    "code=$(curl -sS -o /dev/null -w '%%{http_code}' --max-time 20 "
                                    "-x \"$PROXY_URL\" -H 'Connection: Upgrade' -H 'Upgrade: "
                                    "websocket' -H 'Sec-WebSocket-Version: 13' -H "
                                    "'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' %s) && test "
                                    "\"$code\" = 405",
                                    server_url),
                     0);
    expect_refused("an MCP endpoint takes POST, GET and DELETE only (no WebSocket)");

    /* Escapes and case decide what the server would run: delete_all, ECHO; both denied, and
     * answered as JSON-RPC errors with the request's id. Nothing reached the server. */
    assert_int_equal(send_raw("POST", escaped, sizeof(escaped) - 1, JSON_CT), 200);
    expect_tool_denied("delete_all");
    assert_int_equal(send_raw("POST", cased, sizeof(cased) - 1, JSON_CT), 200);
    expect_tool_denied("ECHO");
    answer_path = sworn_test_path(dir, "calls.log");
    assert_null(sworn_test_read_file_opt(answer_path, NULL));
    free(answer_path);

    /* A chunked POST is read whole, decided, and forwarded with its one framing: the server
     * answers the initialize (an Mcp-Session-Id comes back through the proxy). */
    assert_int_equal(send_raw("POST", init, sizeof(init) - 1,
                              JSON_CT " -H 'Accept: application/json, text/event-stream' "
                                      "-H 'Transfer-Encoding: chunked'"),
                     200);
    n = decisions(&tail, d, 64);
    assert_string_equal(d[n - 1]->request->operation, "mcp.initialize");
    assert_int_equal(d[n - 1]->effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(d[n - 1]->request->context->body_length, sizeof(init) - 1);
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    answer_path = sworn_test_path(dir, "answer");
    answer = sworn_test_read_file(answer_path, NULL);
    if (strstr(answer, "\"serverInfo\":{\"name\":\"sworn-test-server\"") == NULL)
        fail_msg("initialize answer: %s", answer);
    free(answer);
    free(answer_path);
    answer_path = sworn_test_path(dir, "headers");
    answer = sworn_test_read_file(answer_path, NULL);
    if (strcasestr(answer, "\nmcp-session-id: ") == NULL)
        fail_msg("no Mcp-Session-Id came back:\n%s", answer);
    free(answer);
    free(answer_path);
    expect_verified();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sdk_through_proxy, teardown),
        cmocka_unit_test_teardown(test_attacks, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
