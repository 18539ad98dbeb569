/*
 * test_proxy_mcp.c -- unit tests of proxy/p_mcp.c (docs/proxy.md "MCP"): the `mcp:` key of the
 * proxy's configuration; the JSON-RPC reader (every message kind, every refusal with its
 * sentence, and the agent's spellings that must not dodge a rule: duplicate names, unicode
 * escapes, case, a byte order mark, a second value, a huge id, arguments that are not an
 * object); the HTTP rules of an MCP endpoint (methods, Content-Type, bodies); the JSON-RPC error
 * a deny is answered with; the canonical form of a resource URI (policy/resource.h); and the
 * policy over what the reader produces: tools, prompts and URIs matched each in its own
 * operation, and a sum budget on a tool's argument fed with the numbers the proxy sends.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <openssl/sha.h>

#include "err.h"
#include "frame.h"
#include "p_build.h"
#include "p_config.h"
#include "p_mcp.h"
#include "policy.h"
#include "policy_fixture.h"
#include "resource.h"
#include "sv_entry.h"
#include "testutil.h"

static struct sworn_pmcp_call call; /* large: not on the stack */

/* Read body (a C string) as one JSON-RPC message: must be accepted. */
static const struct sworn_pmcp_call *read_ok(const char *body)
{
    const char *why = NULL;

    if (sworn_pmcp_read_message((const uint8_t *)body, strlen(body), &call, &why) != 0)
        fail_msg("refused: %s\n--- body: %s", why, body);
    return &call;
}

/* Read body[0..len): must be refused with exactly the sentence want. */
static void refused_len(const char *body, size_t len, const char *want)
{
    const char *why = NULL;

    if (sworn_pmcp_read_message((const uint8_t *)body, len, &call, &why) != 1)
        fail_msg("accepted: %.*s", (int)len, body);
    if (strncmp(why, want, strlen(want)) != 0)
        fail_msg("refused with \"%s\", expected \"%s...\"\n--- body: %.*s", why, want, (int)len,
                 body);
    assert_string_equal(call.operation, ""); /* nothing of a refused message is kept */
}

static void refused(const char *body, const char *want)
{
    refused_len(body, strlen(body), want);
}

static void test_message_kinds(void **state)
{
    const struct sworn_pmcp_call *c;

    (void)state;
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":"
                "\"c\",\"version\":\"1\"}}}");
    assert_int_equal(c->kind, SWORN_PMCP_REQUEST);
    assert_string_equal(c->operation, "mcp.initialize");
    assert_string_equal(c->tool, "");
    assert_int_equal(c->nnumbers, 0);
    assert_int_equal(c->id_kind, SWORN_PMCP_ID_INT);
    assert_int_equal(c->id_int, 0);

    c = read_ok("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    assert_int_equal(c->kind, SWORN_PMCP_NOTIFICATION);
    assert_string_equal(c->operation, "mcp.notifications/initialized");
    assert_int_equal(c->id_kind, SWORN_PMCP_ID_NONE);

    c = read_ok("{\"method\":\"tools/call\",\"params\":{\"name\":\"pay\",\"arguments\":{"
                "\"amount\":12.50,\"to\":\"bob\",\"split\":[1,2e3],\"a/b\":{\"~c\":-0}}},"
                "\"jsonrpc\":\"2.0\",\"id\":\"call-7\"}");
    assert_int_equal(c->kind, SWORN_PMCP_REQUEST);
    assert_string_equal(c->operation, "mcp.tools/call");
    assert_string_equal(c->tool, "pay");
    assert_int_equal(c->id_kind, SWORN_PMCP_ID_STRING);
    assert_string_equal(c->id_str, "call-7");
    /* The numbers of arguments, pointers relative to it, the exact text kept. */
    assert_int_equal(c->nnumbers, 4);
    assert_int_equal(c->numbers_more, 0);
    assert_string_equal(c->numbers[0].pointer, "/amount");
    assert_string_equal(c->numbers[0].text, "12.50");
    assert_string_equal(c->numbers[1].pointer, "/split/0");
    assert_string_equal(c->numbers[2].pointer, "/split/1");
    assert_string_equal(c->numbers[2].text, "2e3");
    assert_string_equal(c->numbers[3].pointer, "/a~1b/~0c");
    assert_string_equal(c->numbers[3].text, "-0");

    /* A tool call without arguments: no numbers (a sum budget then denies: "no number"). */
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"echo\"}}");
    assert_string_equal(c->tool, "echo");
    assert_int_equal(c->nnumbers, 0);

    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":"
                "\"file:///docs/a.txt\"}}");
    assert_string_equal(c->operation, "mcp.resources/read");
    assert_string_equal(c->uri, "file:///docs/a.txt");
    assert_string_equal(c->tool, "");
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/subscribe\",\"params\":{"
                "\"uri\":\"db://t/1\"}}");
    assert_string_equal(c->uri, "db://t/1");

    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{\"name\":"
                "\"review\",\"arguments\":{\"n\":\"3\"}}}");
    assert_string_equal(c->operation, "mcp.prompts/get");
    assert_string_equal(c->tool, "review");
    assert_int_equal(c->nnumbers, 0); /* a prompt's numbers are not a tool's arguments */

    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
    assert_string_equal(c->operation, "mcp.ping");
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{}}");
    assert_string_equal(c->operation, "mcp.tools/list");

    /* The client's answers to the server's requests. */
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
    assert_int_equal(c->kind, SWORN_PMCP_RESPONSE);
    assert_string_equal(c->operation, "mcp.rpc.response");
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"result\":null}");
    assert_string_equal(c->operation, "mcp.rpc.response");
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-1,\"message\":\"no\"}}");
    assert_string_equal(c->operation, "mcp.rpc.response");

    /* Whitespace around the value is RFC 8259's. */
    c = read_ok(" \r\n\t{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":-9007199254740991}\n");
    assert_int_equal(c->id_int, -9007199254740991LL);
}

/* Spellings an agent may try so that the proxy reads one thing and the server another. */
static void test_spellings(void **state)
{
    const struct sworn_pmcp_call *c;

    (void)state;
    /* Unicode escapes are read as the server reads them: this is tools/call of pay. */
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"\\u006dethod\":\"tools\\u002Fcall\",\"params\":"
                "{\"name\":\"\\u0070ay\",\"arguments\":{\"\\u0061mount\":5}}}");
    assert_string_equal(c->operation, "mcp.tools/call");
    assert_string_equal(c->tool, "pay");
    assert_int_equal(c->nnumbers, 1);
    assert_string_equal(c->numbers[0].pointer, "/amount");
    assert_string_equal(c->numbers[0].text, "5");
    /* Case is kept: "Pay" is another tool (a policy naming pay does not allow it). */
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"Pay\"}}");
    assert_string_equal(c->tool, "Pay");
    c = read_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"Tools/Call\",\"params\":{\"name\":"
                "\"pay\"}}");
    assert_string_equal(c->operation, "mcp.Tools/Call"); /* not mcp.tools/call: no tool read */
    assert_string_equal(c->tool, "");

    /* Two members of one name, however spelt: refused (one reader keeps the first, another the
     * last). */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
            "\"name\":\"pay\"}}",
            "the body is not strict JSON: ");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
            "\"n\\u0061me\":\"pay\"}}",
            "the body is not strict JSON: ");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"method\":\"tools/call\"}",
            "the body is not strict JSON: ");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"pay\","
            "\"arguments\":{\"amount\":1,\"amount\":1000}}}",
            "the body is not strict JSON: ");
    /* A name cut at an escaped NUL by C readers. */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"echo\\u0000pay\"}}",
            "the tool or prompt name is not 1..256 bytes");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\\u0000\",\"params\":{\"name\":"
            "\"pay\"}}",
            "the JSON-RPC method is not 1..59 bytes of printable ASCII");
    /* A byte order mark, a second value, comments, a trailing comma, NaN. */
    refused("\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}",
            "the body is not strict JSON: ");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}{\"jsonrpc\":\"2.0\",\"method\":"
            "\"tools/call\",\"id\":2,\"params\":{\"name\":\"pay\"}}",
            "the body is not strict JSON: ");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n{}",
            "the body is not strict JSON: ");
    refused("{\"jsonrpc\":\"2.0\",/*x*/\"method\":\"ping\",\"id\":1}",
            "the body is not strict JSON: ");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,}", "the body is not strict JSON: ");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":1,\"params\":{\"name\":\"pay\","
            "\"arguments\":{\"amount\":NaN}}}",
            "the body is not strict JSON: ");
    refused_len("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\0", 43,
                "the body is not strict JSON: ");
    /* A huge id: never clamped into another number. */
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":99999999999999999999}",
            "the JSON-RPC id is not a string of 1..256 bytes or an integer within +-(2^53 - 1)");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":9007199254740992}",
            "the JSON-RPC id is not a string");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":-9007199254740992}",
            "the JSON-RPC id is not a string");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1.5}",
            "the JSON-RPC id is not a string");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1e2}",
            "the JSON-RPC id is not a string");
}

static void test_refusals(void **state)
{
    char big[400], id[300];

    (void)state;
    refused("", "the body is not strict JSON: ");
    refused("not json", "the body is not strict JSON: ");
    refused("[{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}]",
            "the body is a JSON-RPC batch (an array): MCP 2025-06-18 removed batching, send one "
            "message per POST");
    refused("[]", "the body is a JSON-RPC batch");
    refused("null", "the body is not a JSON-RPC message (a JSON object)");
    refused("\"tools/call\"", "the body is not a JSON-RPC message (a JSON object)");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"name\":\"pay\"}",
            "the JSON-RPC message has a member other than jsonrpc, method, params, id, result and "
            "error");
    refused("{\"method\":\"ping\",\"id\":1}",
            "the JSON-RPC message's jsonrpc member is not \"2.0\"");
    refused("{\"jsonrpc\":\"1.0\",\"method\":\"ping\",\"id\":1}",
            "the JSON-RPC message's jsonrpc member is not \"2.0\"");
    refused("{\"jsonrpc\":2.0,\"method\":\"ping\",\"id\":1}",
            "the JSON-RPC message's jsonrpc member is not \"2.0\"");
    refused("{\"jsonrpc\":\"2.0\",\"method\":1,\"id\":1}", "the JSON-RPC method is not a string");
    refused("{\"jsonrpc\":\"2.0\",\"method\":null,\"id\":1}",
            "the JSON-RPC method is not a string");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"\",\"id\":1}",
            "the JSON-RPC method is not 1..59 bytes of printable ASCII");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"tools call\",\"id\":1}",
            "the JSON-RPC method is not 1..59 bytes of printable ASCII");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"tools/c\\u00e4ll\",\"id\":1}",
            "the JSON-RPC method is not 1..59 bytes of printable ASCII");
    memset(big, 'm', 60);
    snprintf(big + 60, sizeof(big) - 60, "\",\"id\":1}");
    {
        char body[512];

        snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"method\":\"%s", big);
        refused(body, "the JSON-RPC method is not 1..59 bytes of printable ASCII");
        body[strlen("{\"jsonrpc\":\"2.0\",\"method\":\"") + 59] = '\0';
        strcat(body, "\",\"id\":1}");
        assert_int_equal(strlen(read_ok(body)->operation), 63);
    }
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"rpc.listen\",\"id\":1}",
            "a JSON-RPC method beginning with \"rpc.\" is reserved (JSON-RPC 2.0 section 4)");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"result\":{}}",
            "a JSON-RPC message with a method has no result or error");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"error\":{}}",
            "a JSON-RPC message with a method has no result or error");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":1,\"params\":[\"pay\"]}",
            "the JSON-RPC params is not an object (MCP sends named parameters)");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"params\":null}",
            "the JSON-RPC params is not an object (MCP sends named parameters)");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":null}",
            "the JSON-RPC id is null (MCP requires a string or an integer)");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"\"}",
            "the JSON-RPC id is not a string");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":true}",
            "the JSON-RPC id is not a string");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":{}}",
            "the JSON-RPC id is not a string");
    refused("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"a\\u0000b\"}",
            "the JSON-RPC id is not a string");
    memset(id, 'i', 257);
    id[257] = '\0';
    snprintf(big, sizeof(big), "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"%s\"}", id);
    refused(big, "the JSON-RPC id is not a string");
    id[256] = '\0';
    snprintf(big, sizeof(big), "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"%s\"}", id);
    assert_int_equal(read_ok(big)->id_len, 256);
    refused("{\"jsonrpc\":\"2.0\"}", "the JSON-RPC message has neither a method nor an id");
    refused("{\"jsonrpc\":\"2.0\",\"result\":{}}",
            "the JSON-RPC message has neither a method nor an id");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1}",
            "a JSON-RPC response has exactly one of result and error");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}",
            "a JSON-RPC response has exactly one of result and error");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"params\":{}}",
            "a JSON-RPC response has no params");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"no\"}",
            "the JSON-RPC error is not an object");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":null}", "the JSON-RPC error is not an object");
    /* The methods that name what they act on. */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}",
            "tools/call has no params.name string (the tool)");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}",
            "tools/call has no params.name string (the tool)");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":7}}",
            "tools/call has no params.name string (the tool)");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":null}}",
            "prompts/get has no params.name string (the prompt)");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\"}}",
            "the tool or prompt name is not 1..256 bytes of UTF-8 without control or invisible "
            "characters");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"pay\\u202e\"}}",
            "the tool or prompt name is not 1..256 bytes");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"pay\\n\"}}",
            "the tool or prompt name is not 1..256 bytes");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"pay\","
            "\"arguments\":[5]}}",
            "params.arguments is not an object");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"pay\","
            "\"arguments\":\"{\\\"amount\\\":5}\"}}",
            "params.arguments is not an object");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"pay\","
            "\"arguments\":null}}",
            "params.arguments is not an object");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":\"p\","
            "\"arguments\":5}}",
            "params.arguments is not an object");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{}}",
            "a resources method has no params.uri string");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/unsubscribe\"}",
            "a resources method has no params.uri string");
    refused(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"\"}}",
        "params.uri is not 1..2048 bytes without NUL");
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
            "\"file:///a\\u0000b\"}}",
            "params.uri is not 1..2048 bytes without NUL");
}

/* More numbers than the wire carries: the first 64 kept, and "more" said. */
static void test_many_numbers(void **state)
{
    char body[4096];
    size_t o;

    (void)state;
    o = (size_t)snprintf(body, sizeof(body),
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                         "\"name\":\"pay\",\"arguments\":{\"n\":[");
    for (int i = 0; i < 70; i++)
        o += (size_t)snprintf(body + o, sizeof(body) - o, "%s%d", i ? "," : "", i);
    snprintf(body + o, sizeof(body) - o, "],\"amount\":3}}}");
    read_ok(body);
    assert_int_equal(call.nnumbers, SWORN_PJSON_NUMBERS_MAX);
    assert_int_equal(call.numbers_more, 1);
    assert_string_equal(call.numbers[63].pointer, "/n/63");
}

/* --- The HTTP side of an MCP endpoint. --- */

static int http_read(const char *method, const char *ctype, const char *body, int has_body,
                     int *status, const char **why)
{
    struct sworn_http_field f[2];
    size_t n = 0;

    if (ctype != NULL) {
        f[n].name = "Content-Type";
        f[n].name_len = 12;
        f[n].value = ctype;
        f[n].value_len = strlen(ctype);
        n++;
    }
    return sworn_pmcp_read(method, f, n, (const uint8_t *)body, body != NULL ? strlen(body) : 0,
                           has_body, &call, status, why);
}

static void test_http(void **state)
{
    static const char ping[] = "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}";
    static const char *const types_ok[] = {
        "application/json",
        "Application/JSON",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        "application/json ;\tcharset=\"utf-8\"",
    };
    static const char *const types_bad[] = {
        "text/plain",
        "application/json5",
        "application/jsonx",
        "application/json; charset=utf-16",
        "application/json; charset=latin1",
        "application/json; boundary=x",
        "application/json; charset=utf-8; x=y",
        "application/json, text/plain",
        "application/x-www-form-urlencoded",
        "",
        "application/json;",
        "application/json; charset=\"utf-8",
    };
    struct sworn_http_field two[2] = {{"content-type", 12, "application/json", 16},
                                      {"Content-Type", 12, "application/json", 16}};
    const char *why = NULL;
    int status = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(types_ok) / sizeof(types_ok[0]); i++) {
        if (http_read("POST", types_ok[i], ping, 1, &status, &why) != 0)
            fail_msg("%s refused: %s", types_ok[i], why);
        assert_string_equal(call.operation, "mcp.ping");
    }
    for (size_t i = 0; i < sizeof(types_bad) / sizeof(types_bad[0]); i++) {
        if (http_read("POST", types_bad[i], ping, 1, &status, &why) != 1)
            fail_msg("Content-Type %s accepted", types_bad[i]);
        assert_int_equal(status, 415);
        assert_string_equal(why, "an MCP POST needs one Content-Type: application/json (a charset "
                                 "parameter only as utf-8)");
    }
    assert_int_equal(http_read("POST", NULL, ping, 1, &status, &why), 1);
    assert_int_equal(status, 415);
    /* An encoded body: the server would decode it into another message. */
    {
        struct sworn_http_field enc[2] = {{"Content-Type", 12, "application/json", 16},
                                          {"Content-Encoding", 16, "identity", 8}};

        assert_int_equal(sworn_pmcp_read("POST", enc, 2, (const uint8_t *)ping, strlen(ping), 1,
                                         &call, &status, &why),
                         1);
        assert_int_equal(status, 415);
        assert_string_equal(why, "an MCP POST's body may not be encoded (Content-Encoding)");
    }
    /* Two Content-Type fields, even equal ones: which would the server read? */
    assert_int_equal(sworn_pmcp_read("POST", two, 2, (const uint8_t *)ping, strlen(ping), 1, &call,
                                     &status, &why),
                     1);
    assert_int_equal(status, 415);
    assert_int_equal(http_read("POST", "application/json", "", 1, &status, &why), 1);
    assert_int_equal(status, 400);
    assert_string_equal(why, "an MCP POST without a body (it carries one JSON-RPC message)");
    assert_int_equal(http_read("POST", "application/json", NULL, 0, &status, &why), 1);
    assert_int_equal(status, 400);
    assert_int_equal(http_read("POST", "application/json", "[]", 1, &status, &why), 1);
    assert_int_equal(status, 400);
    assert_string_equal(why, "the body is a JSON-RPC batch (an array): MCP 2025-06-18 removed "
                             "batching, send one message per POST");

    /* The session: its SHA-256 kept (never the value); two fields refused. */
    {
        struct sworn_http_field sf[3] = {{"Content-Type", 12, "application/json", 16},
                                         {"Mcp-Session-Id", 14, "abc", 3},
                                         {"mcp-session-id", 14, "abc", 3}};
        static const uint8_t abc[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
                                        0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
                                        0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
                                        0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};

        assert_int_equal(sworn_pmcp_read("POST", sf, 2, (const uint8_t *)ping, strlen(ping), 1,
                                         &call, &status, &why),
                         0);
        assert_int_equal(call.has_session, 1);
        assert_memory_equal(call.session_sha256, abc, 32);
        assert_int_equal(sworn_pmcp_read("GET", sf + 1, 1, NULL, 0, 0, &call, &status, &why), 0);
        assert_int_equal(call.has_session, 1);
        assert_int_equal(sworn_pmcp_read("POST", sf, 3, (const uint8_t *)ping, strlen(ping), 1,
                                         &call, &status, &why),
                         1);
        assert_int_equal(status, 400);
        assert_string_equal(why, "an MCP request has two Mcp-Session-Id fields");
        assert_int_equal(call.has_session, 0);
        assert_int_equal(http_read("POST", "application/json", ping, 1, &status, &why), 0);
        assert_int_equal(call.has_session, 0);
    }
    /* GET: the server's SSE stream; DELETE: the session's end; neither with a body. */
    assert_int_equal(http_read("GET", NULL, NULL, 0, &status, &why), 0);
    assert_int_equal(call.kind, SWORN_PMCP_LISTEN);
    assert_string_equal(call.operation, "mcp.rpc.listen");
    assert_int_equal(http_read("DELETE", NULL, "", 1, &status, &why), 0); /* Content-Length: 0 */
    assert_int_equal(call.kind, SWORN_PMCP_END);
    assert_string_equal(call.operation, "mcp.rpc.end");
    assert_int_equal(http_read("GET", "application/json", ping, 1, &status, &why), 1);
    assert_int_equal(status, 400);
    assert_string_equal(why, "a GET or DELETE to an MCP endpoint has a body");
    assert_int_equal(http_read("DELETE", NULL, ping, 1, &status, &why), 1);
    assert_string_equal(why, "a GET or DELETE to an MCP endpoint has a body");
    static const char *const others[] = {"PUT", "PATCH", "HEAD", "OPTIONS", "post", "TRACE"};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        assert_int_equal(http_read(others[i], "application/json", ping, 1, &status, &why), 1);
        assert_int_equal(status, 405);
        assert_string_equal(why, "an MCP endpoint takes POST, GET and DELETE only");
    }
}

/* The JSON-RPC error a denied request is answered with, as a JSON parser reads it. */
static void test_deny_body(void **state)
{
    char *text = NULL;
    json_object *o, *v, *err, *data;

    (void)state;
    read_ok("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"pay\"}}");
    assert_int_equal(
        sworn_pmcp_deny_body(&call, "px-1-2", "no rule matched (default deny)", 1, 42, &text), 0);
    assert_null(strchr(text, '\n'));
    o = json_tokener_parse(text);
    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, "jsonrpc", &v));
    assert_string_equal(json_object_get_string(v), "2.0");
    assert_true(json_object_object_get_ex(o, "id", &v));
    assert_string_equal(json_object_get_string(v), "a\"b");
    assert_false(json_object_object_get_ex(o, "result", NULL));
    assert_true(json_object_object_get_ex(o, "error", &err));
    assert_true(json_object_object_get_ex(err, "code", &v));
    assert_int_equal(json_object_get_int(v), -32001);
    assert_true(json_object_object_get_ex(err, "message", &v));
    assert_string_equal(json_object_get_string(v),
                        "denied by sworn: no rule matched (default deny)");
    assert_true(json_object_object_get_ex(err, "data", &data));
    assert_true(json_object_object_get_ex(data, "request_id", &v));
    assert_string_equal(json_object_get_string(v), "px-1-2");
    assert_true(json_object_object_get_ex(data, "effect", &v));
    assert_string_equal(json_object_get_string(v), "deny");
    assert_true(json_object_object_get_ex(data, "log_index", &v));
    assert_int_equal(json_object_get_int64(v), 42);
    json_object_put(o);
    free(text);

    read_ok("{\"jsonrpc\":\"2.0\",\"id\":9007199254740991,\"method\":\"ping\"}");
    assert_int_equal(sworn_pmcp_deny_body(&call, "px-1-3", "r", 0, 0, &text), 0);
    assert_non_null(strstr(text, "\"id\":9007199254740991,"));
    assert_null(strstr(text, "log_index"));
    free(text);
}

/* --- The configuration's `mcp:` key. --- */

#define MIN                                                                                        \
    "listen: [{unix: /run/a.sock, principal: p}]\n"                                                \
    "decisiond: {socket: /run/d.sock}\n"                                                           \
    "ca: {cert: /etc/c.crt, key: /etc/c.key}\n"

static struct sworn_pconf conf;

static void conf_fails(const char *text, const char *sub)
{
    if (sworn_pconf_load_mem("proxy.yaml", (const uint8_t *)text, strlen(text), &conf) != -1)
        fail_msg("accepted:\n%s", text);
    if (strstr(sworn_err_msg(), sub) == NULL)
        fail_msg("got \"%s\"; want \"...%s...\"", sworn_err_msg(), sub);
}

static void test_config(void **state)
{
    static const char ok[] = MIN "mcp:\n"
                                 "  - http://127.0.0.1:9000/mcp\n"
                                 "  - \"https://Tools.Example:443/a/../v1/\"\n";
    char many[4096];
    size_t o;
    Sworn__V1__Resource r = SWORN__V1__RESOURCE__INIT;
    struct sworn_resource c;
    const char *why = NULL;

    (void)state;
    assert_int_equal(sworn_pconf_load_mem("proxy.yaml", (const uint8_t *)MIN, strlen(MIN), &conf),
                     0);
    assert_int_equal(conf.mcp.nservers, 0);
    assert_int_equal(sworn_pconf_load_mem("proxy.yaml", (const uint8_t *)ok, strlen(ok), &conf), 0);
    assert_int_equal(conf.mcp.nservers, 2);
    assert_string_equal(conf.mcp.servers[0].host, "127.0.0.1");
    assert_int_equal(conf.mcp.servers[0].port, 9000);
    assert_string_equal(conf.mcp.servers[0].path, "/mcp");
    assert_string_equal(conf.mcp.servers[1].host, "tools.example");
    assert_string_equal(conf.mcp.servers[1].path, "/v1/");
    /* Which requests are MCP requests: under a server's path, in any spelling. */
    r.scheme = "HTTP";
    r.host = "127.0.0.1";
    r.port = 9000;
    r.path = "/x/../mcp?session=1";
    assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
    assert_non_null(sworn_pmcp_server(&conf.mcp, &c));
    r.path = "/mcpx";
    assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
    assert_null(sworn_pmcp_server(&conf.mcp, &c));
    /* Red team rt-A: routers that match paths without case (Express's default, for app.post and
     * app.use alike; ASP.NET; IIS) and ones that drop path parameters (Tomcat, Jetty, Spring)
     * run the MCP server for these: they are MCP requests, decided per message, never as
     * http.request (whose rules know nothing of tools). */
    {
        static const char *const also[] = {"/MCP", "/Mcp/x", "/mCp?session=1", "/mcp;jsessionid=1",
                                           "/MCP;x/y"};

        for (size_t i = 0; i < sizeof(also) / sizeof(also[0]); i++) {
            r.path = (char *)also[i];
            assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
            if (sworn_pmcp_server(&conf.mcp, &c) == NULL)
                fail_msg("%s is not read as a request to the MCP server at /mcp", also[i]);
        }
        r.path = "/MCPX";
        assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
        assert_null(sworn_pmcp_server(&conf.mcp, &c));
    }
    /* The same for OAuth token endpoints: a token answer to "/OAuth/Token" (a router without
     * case) or "/oauth/token;x" must be intercepted, or the real tokens reach the agent. */
    {
        static const char oauth[] =
            MIN "oauth:\n  token_endpoints: [\"http://127.0.0.1:9000/oauth/token\"]\n";
        static const char *const also[] = {"/oauth/token", "/OAuth/Token", "/oauth/token;x",
                                           "/OAUTH/TOKEN/x?a=1"};
        static struct sworn_pconf oc; /* large: not on the stack */

        assert_int_equal(
            sworn_pconf_load_mem("proxy.yaml", (const uint8_t *)oauth, strlen(oauth), &oc), 0);
        for (size_t i = 0; i < sizeof(also) / sizeof(also[0]); i++) {
            r.path = (char *)also[i];
            assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
            if (!sworn_poauth_is_endpoint(&oc.oauth, &c))
                fail_msg("%s is not read as the token endpoint /oauth/token", also[i]);
        }
        r.path = "/oauth/tokens";
        assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
        assert_false(sworn_poauth_is_endpoint(&oc.oauth, &c));
    }
    r.port = 9001;
    r.path = "/mcp";
    assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
    assert_null(sworn_pmcp_server(&conf.mcp, &c));

    /* The shipped example's server. */
    {
        static const char *const swap[][2] = {
            {"user: sworn-proxy\n", "user: root       \n"},
            {"group: sworn-run ", "group: root      "},
            {"uids: [sworn-run]", "uids: [root]     "},
        };
        char *path = sworn_test_path(sworn_test_source_dir(), "proxy/examples/proxy.yaml");
        char *text = sworn_test_read_file(path, NULL);

        for (size_t i = 0; i < sizeof(swap) / sizeof(swap[0]); i++) {
            char *at = strstr(text, swap[i][0]);

            assert_non_null(at);
            memcpy(at, swap[i][1], strlen(swap[i][1]));
        }
        if (sworn_pconf_load_mem("proxy.yaml", (const uint8_t *)text, strlen(text), &conf) != 0)
            fail_msg("the example: %s", sworn_err_msg());
        assert_int_equal(conf.mcp.nservers, 1);
        assert_string_equal(conf.mcp.servers[0].scheme, "https");
        assert_string_equal(conf.mcp.servers[0].host, "tools.example.com");
        assert_int_equal(conf.mcp.servers[0].port, 443);
        assert_string_equal(conf.mcp.servers[0].path, "/mcp");
        free(text);
        free(path);
    }
    conf_fails(MIN "mcp: http://127.0.0.1:9000/mcp\n", "4:6: mcp: a list of MCP server URLs");
    conf_fails(MIN "mcp: []\n", "4:6: mcp: 1 to 16 MCP server URLs");
    conf_fails(MIN "mcp: {a: 1}\n", "4:6: mcp: a list of MCP server URLs");
    conf_fails(MIN "mcp: [\"ftp://a.example/\"]\n", "4:7: mcp: ");
    conf_fails(MIN "mcp: [\"https://a.example/mcp?x=1\"]\n", "4:7: mcp: ");
    conf_fails(MIN "mcp: [[1]]\n", "4:7: ");
    conf_fails(MIN "mcp: [\"http://a.example/mcp\", \"http://A.example:80/x/../mcp\"]\n",
               "mcp: the same server is listed twice");
    o = (size_t)snprintf(many, sizeof(many), MIN "mcp:\n");
    for (int i = 0; i < 17; i++)
        o += (size_t)snprintf(many + o, sizeof(many) - o, "  - http://a.example/m%d\n", i);
    conf_fails(many, "mcp: 1 to 16 MCP server URLs");
}

/* --- Resource URIs: taken only in canonical form (policy/resource.h). --- */

static void test_uri_form(void **state)
{
    static const char *const good[] = {
        "file:///docs/a.txt",  "db://users/42?fields=name,mail", "https://api.example/x%20y",
        "urn:isbn:0451450523", "mem:notes/.hidden/..x",          "x-custom+s.2:a/b@c!$&'()*+,;=:[]",
        "file:///a?x=../y", /* a query is never resolved as a path */
    };
    static const struct {
        const char *uri, *why;
    } bad[] = {
        {"", "the resource URI is empty or longer than 2048 bytes"},
        {"File:///a", "the resource URI's scheme is not in lower case"},
        {"fiLe:///a", "the resource URI's scheme is not in lower case"},
        {"/docs/a", "the resource URI does not start with a scheme"},
        {"1x:/a", "the resource URI does not start with a scheme"},
        {"file", "the resource URI does not start with a scheme"},
        {"fi_le:/a", "the resource URI does not start with a scheme"},
        {"https://API.example/x", "the resource URI's authority is not in lower case"},
        {"file:///docs/../secret", "the resource URI holds a dot segment (\".\" or \"..\")"},
        {"file:///docs/./a", "the resource URI holds a dot segment"},
        {"file:///docs/..", "the resource URI holds a dot segment"},
        {"file:..", "the resource URI holds a dot segment"},
        {"file:///a/..?x", "the resource URI holds a dot segment"},
        {"file:///a/%2e%2e/b",
         "a percent escape in the resource URI is not '%' and two upper-case"},
        {"file:///a/%2E%2E/b", "the resource URI escapes an unreserved character (write it as is)"},
        {"file:///a%41", "the resource URI escapes an unreserved character"},
        {"file:///a%2Fb",
         "the resource URI encodes a control character, '/', '\\' or a byte >= 0x80"},
        {"file:///a%5Cb", "the resource URI encodes a control character"},
        {"file:///a%00", "the resource URI encodes a control character"},
        {"file:///a%0A", "the resource URI encodes a control character"},
        {"file:///a%C3%A4", "the resource URI encodes a control character"},
        {"file:///a%252E", "the resource URI is percent-encoded twice"},
        {"file:///a%2", "a percent escape in the resource URI is not"},
        {"file:///a%G0", "a percent escape in the resource URI is not"},
        {"file:///a b", "the resource URI holds a byte a URI may not hold"},
        {"file:///a#frag", "the resource URI holds a byte a URI may not hold"},
        {"file:///a\\..\\b", "the resource URI holds a byte a URI may not hold"},
        {"file:///\xc3\xa4", "the resource URI holds a byte a URI may not hold"},
        {"file:///a\tb", "the resource URI holds a byte a URI may not hold"},
        {"file:///a<b>", "the resource URI holds a byte a URI may not hold"},
    };
    char *longest = malloc(SWORN_RESOURCE_URI_MAX + 2);
    const char *why = NULL;
    Sworn__V1__Resource r = SWORN__V1__RESOURCE__INIT;
    struct sworn_resource c;

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (sworn_resource_check_uri(good[i], &why) != 0)
            fail_msg("%s refused: %s", good[i], why);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (sworn_resource_check_uri(bad[i].uri, &why) != 1)
            fail_msg("%s accepted", bad[i].uri);
        if (strncmp(why, bad[i].why, strlen(bad[i].why)) != 0)
            fail_msg("%s: \"%s\", expected \"%s...\"", bad[i].uri, why, bad[i].why);
    }
    assert_non_null(longest);
    memcpy(longest, "x:", 2);
    memset(longest + 2, 'a', SWORN_RESOURCE_URI_MAX - 2);
    longest[SWORN_RESOURCE_URI_MAX] = '\0';
    assert_int_equal(sworn_resource_check_uri(longest, &why), 0);
    /* In the canonical resource: kept as carried; a refused one refuses the resource. */
    r.scheme = "http";
    r.host = "127.0.0.1";
    r.port = 9000;
    r.path = "/mcp";
    r.uri = longest;
    assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
    assert_string_equal(c.uri, longest);
    longest[SWORN_RESOURCE_URI_MAX] = 'a';
    longest[SWORN_RESOURCE_URI_MAX + 1] = '\0';
    assert_int_equal(sworn_resource_canon(&r, &c, &why), 1);
    assert_string_equal(why, "the resource URI is empty or longer than 2048 bytes");
    r.uri = "file:///a/../b";
    assert_int_equal(sworn_resource_canon(&r, &c, &why), 1);
    assert_string_equal(c.host, ""); /* zeroed */
    free(longest);
}

/* --- The policy over what the reader produces. --- */

static struct sworn_pbuild build; /* large */

/* Evaluate the request the proxy would send for body (to http://127.0.0.1:9000/mcp). */
static struct sworn_policy_result eval_body(const struct sworn_policy *p, struct sworn_budgets *b,
                                            const char *body, uint64_t now)
{
    struct sworn_pbuild_in in = {0};
    struct sworn_policy_result res;
    const char *why = NULL;

    read_ok(body);
    in.request_id = "r1";
    in.principal = "agent-1";
    in.sandbox = "";
    in.operation = call.operation;
    in.scheme = "http";
    in.host = "127.0.0.1";
    in.port = 9000;
    in.path = "/mcp";
    in.method = "POST";
    in.body = (const uint8_t *)body;
    in.body_len = strlen(body);
    in.has_body = 1;
    in.time_unix_ms = now;
    in.tool = call.tool;
    in.uri = call.uri;
    in.numbers = call.numbers;
    in.nnumbers = call.nnumbers;
    assert_int_equal(sworn_pbuild_request(&build, &in, &why), 0);
    if (sworn_policy_eval(p, b, &build.req, now, &res) != 0)
        fail_msg("eval failed: %s", sworn_err_msg());
    return res;
}

static void expect_body(const struct sworn_policy *p, struct sworn_budgets *b, const char *body,
                        uint64_t now, Sworn__V1__Effect effect, const char *rule,
                        const char *reason)
{
    struct sworn_policy_result res = eval_body(p, b, body, now);

    if (res.effect != effect || strcmp(res.rule_id, rule) != 0 ||
        (reason != NULL && strcmp(res.reason, reason) != 0))
        fail_msg("got %d/%s (%s), expected %d/%s (%s)\n--- body: %s", res.effect, res.rule_id,
                 res.reason, effect, rule, reason != NULL ? reason : "", body);
}

#define ALLOW SWORN__V1__EFFECT__EFFECT_ALLOW
#define DENY SWORN__V1__EFFECT__EFFECT_DENY
#define T0 1772409600000ull /* 2026-03-02T00:00:00Z */
#define PAY(amount)                                                                                \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"pay\","        \
    "\"arguments\":{\"to\":\"bob\",\"amount\":" amount "}}}"

static void test_policy(void **state)
{
    struct sworn_policy *p;
    struct sworn_budgets *b = NULL;

    (void)state;
    sworn_pfix_mkdir("mcp");
    p = sworn_pfix_load(
        "rules:\n"
        "  - id: session\n"
        "    effect: allow\n"
        "    operations: [mcp.initialize, \"mcp.notifications/*\", mcp.tools/list, mcp.ping]\n"
        "  - id: echo\n"
        "    effect: allow\n"
        "    operations: [mcp.tools/call]\n"
        "    resource: {tools: [echo]}\n"
        "  - id: pay\n"
        "    effect: allow\n"
        "    resource: {tools: [pay]}\n"
        "    sum: {pointer: /amount, max: \"10.00\", window: 1h}\n"
        "  - id: docs\n"
        "    effect: allow\n"
        "    resource: {uris: [\"file:///docs/*\"]}\n"
        "  - id: no-secret\n"
        "    effect: deny\n"
        "    resource: {uris: [\"file:///docs/secret*\"]}\n"
        "  - id: review\n"
        "    effect: allow\n"
        "    resource: {prompts: [review]}\n");
    assert_int_equal(sworn_budgets_new(&b), 0);
    expect_body(p, b, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}", T0,
                ALLOW, "session", NULL);
    expect_body(p, b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0, ALLOW,
                "session", NULL);
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
                T0, ALLOW, "echo", NULL);
    /* Another tool on the same server: no rule. */
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"delete_all\"}}",
                T0, DENY, "", "no rule matched (default deny)");
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"Echo\"}}",
                T0, DENY, "", NULL);
    /* The amount cap per window, on the numbers the proxy sends (pointers under arguments). */
    expect_body(p, b, PAY("4"), T0, ALLOW, "pay", NULL);
    expect_body(p, b, PAY("5.50"), T0 + 1000, ALLOW, "pay", NULL);
    expect_body(p, b, PAY("0.51"), T0 + 2000, DENY, "pay",
                "budget exhausted: rule pay allows a sum of 10 at /amount per 1h per principal; "
                "9.5 already used in the window that began 2026-03-02T00:00:00Z, this request "
                "asks 0.51");
    expect_body(p, b, PAY("0.5"), T0 + 3000, ALLOW, "pay", NULL);
    expect_body(p, b, PAY("0"), T0 + 4000, ALLOW, "pay", NULL);
    /* The next window. */
    expect_body(p, b, PAY("10"), T0 + 3600000, ALLOW, "pay", NULL);
    /* What a budget cannot measure is denied: no amount, a string, a nested one only. */
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"pay\",\"arguments\":{\"amount\":\"1\"}}}",
                T0 + 7200000, DENY, "pay",
                "sum budget of rule pay: the request has no number at /amount");
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"pay\",\"arguments\":{\"x\":{\"amount\":1}}}}",
                T0 + 7200000, DENY, "pay", NULL);
    expect_body(p, b, PAY("-1"), T0 + 7200000, DENY, "pay", NULL);
    /* A number at /amount outside arguments is not the tool's amount. */
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"pay\",\"amount\":1,\"arguments\":{}}}",
                T0 + 7200000, DENY, "pay", NULL);
    /* The unicode-escaped spelling of the same call is charged the same. */
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools\\/call\",\"params\":{\"name\":"
                "\"\\u0070ay\",\"arguments\":{\"\\u0061mount\":10}}}",
                T0 + 7200000, ALLOW, "pay", NULL);
    expect_body(p, b, PAY("0.000001"), T0 + 7200001, DENY, "pay", NULL);

    /* URIs: allowed under /docs/, the deny wins for a secret, nothing else. */
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
                "\"file:///docs/a.txt\"}}",
                T0, ALLOW, "docs", NULL);
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
                "\"file:///docs/secret.txt\"}}",
                T0, DENY, "no-secret", NULL);
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
                "\"file:///docs/../etc/passwd\"}}",
                T0, DENY, "",
                "the resource is refused: the resource URI holds a dot segment (\".\" or \"..\"); "
                "denied before any rule");
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
                "\"FILE:///docs/secret.txt\"}}",
                T0, DENY, "", NULL);
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
                "\"file:///etc/passwd\"}}",
                T0, DENY, "", "no rule matched (default deny)");
    /* Tools and prompts are matched each in its own operation: the prompt "pay" and the tool
     * "review" are not the tool pay and the prompt review. */
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":"
                "\"review\"}}",
                T0, ALLOW, "review", NULL);
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":"
                "\"echo\"}}",
                T0, DENY, "", NULL);
    expect_body(p, b,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"review\"}}",
                T0, DENY, "", NULL);
    sworn_budgets_free(b);
    sworn_policy_free(p);
}

/* --- The record: the recording side's decoder and the independent verifier on the URI. --- */

static uint8_t digest32[32] = {1};

static int verify_entry(const Sworn__V1__Entry *e, char code[32])
{
    size_t n = sworn__v1__entry__get_packed_size(e);
    uint8_t *b = malloc(n);
    struct sv_entry_info info;
    char why[512];
    int rc;

    assert_non_null(b);
    sworn__v1__entry__pack(e, b);
    code[0] = '\0';
    rc = sv_entry_check(b, n, &info, code, why);
    free(b);
    return rc;
}

static void test_record_uri(void **state)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord d = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__AuthorizationRequest r = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal p = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource res = SWORN__V1__RESOURCE__INIT, canon = SWORN__V1__RESOURCE__INIT;
    uint8_t raw[32];
    char code[32], *long_uri = malloc(SWORN_FRAME_URI_MAX + 2);
    static const char target[] = "http://127.0.0.1:9000/mcp";

    (void)state;
    assert_non_null(long_uri);
    p.id = "agent-1";
    r.request_id = "r1";
    r.operation = "mcp.resources/read";
    r.principal = &p;
    res.scheme = "http";
    res.host = "127.0.0.1";
    res.port = 9000;
    res.path = "/mcp";
    res.uri = "file:///docs/a";
    r.resource = &res;
    canon = res;
    d.request = &r;
    d.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    d.rule_id = "docs";
    d.reason = "allowed by rule docs";
    d.time_unix_ms = 1764633600000ull;
    d.policy_digest.data = digest32;
    d.policy_digest.len = 32;
    d.canonical_resource = &canon;
    SHA256((const unsigned char *)target, strlen(target), raw);
    d.raw_target_sha256.data = raw;
    d.raw_target_sha256.len = 32;
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &d;
    assert_int_equal(sworn_frame_check_entry(&e), 0);
    assert_int_equal(verify_entry(&e, code), 0);
    /* A canonical URI that is not the request's: a record rewritten after the decision. */
    canon.uri = "file:///docs/b";
    assert_int_equal(verify_entry(&e, code), -1);
    assert_string_equal(code, "bad-field");
    canon.uri = "";
    assert_int_equal(verify_entry(&e, code), -1);
    assert_string_equal(code, "bad-field");
    canon.uri = res.uri;
    /* Over the wire's bound: both decoders refuse it. */
    memset(long_uri, 'u', SWORN_FRAME_URI_MAX + 1);
    long_uri[SWORN_FRAME_URI_MAX + 1] = '\0';
    res.uri = canon.uri = long_uri;
    assert_int_equal(sworn_frame_check_entry(&e), -1);
    assert_int_equal(verify_entry(&e, code), -1);
    assert_string_equal(code, "field-too-long");
    long_uri[SWORN_FRAME_URI_MAX] = '\0';
    assert_int_equal(sworn_frame_check_entry(&e), 0);
    assert_int_equal(verify_entry(&e, code), 0);
    free(long_uri);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_message_kinds), cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_refusals),      cmocka_unit_test(test_many_numbers),
        cmocka_unit_test(test_http),          cmocka_unit_test(test_deny_body),
        cmocka_unit_test(test_config),        cmocka_unit_test(test_uri_form),
        cmocka_unit_test(test_policy),        cmocka_unit_test(test_record_uri),
    };

    return cmocka_run_group_tests(tests, NULL, sworn_pfix_teardown);
}
