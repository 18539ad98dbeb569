/*
 * fuzz_pmcp.c -- libFuzzer target for proxy/p_mcp.c: one JSON-RPC message of an MCP POST, and the
 * HTTP rules of an MCP endpoint.
 *
 * Input: the first byte picks the HTTP method (POST mostly, GET, DELETE, PUT) and the
 * Content-Type sent with it; the rest is the body. Asserted on every input:
 *   - sworn_pmcp_read_message and sworn_pmcp_read answer 0 or 1 (-1 only for out of memory);
 *     on 1 a sentence and (for the HTTP reader) a status of 400, 405 or 415, and the call zeroed;
 *   - on 0: a known kind; the operation is "mcp." and 1..59 printable ASCII bytes for a request or
 *     a notification (never "mcp.rpc.": JSON-RPC reserves "rpc."), the proxy's own name for the
 *     rest; a tool (or prompt) only for tools/call and prompts/get, 1..256 bytes; a URI only for
 *     the resources methods, 1..2048 bytes; numbers only for tools/call, at most 64, each pointer
 *     starting with '/'; an id as its kind says (an integer within +-(2^53 - 1));
 *   - reading the same body twice gives the same call; the message reader and the HTTP reader
 *     agree on a POST with Content-Type application/json;
 *   - the deny answer of an accepted request is one line of JSON that json-c reads back, with the
 *     request's id.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz.h"
#include "p_mcp.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

static struct sworn_pmcp_call a, b; /* large: not on the stack */

static void check_call(const struct sworn_pmcp_call *c)
{
    size_t ol = strlen(c->operation), tl = strlen(c->tool), ul = strlen(c->uri);
    int tool = strcmp(c->operation, "mcp.tools/call") == 0;
    int named = tool || strcmp(c->operation, "mcp.prompts/get") == 0;
    int res = strcmp(c->operation, "mcp.resources/read") == 0 ||
              strcmp(c->operation, "mcp.resources/subscribe") == 0 ||
              strcmp(c->operation, "mcp.resources/unsubscribe") == 0;

    switch (c->kind) {
    case SWORN_PMCP_REQUEST:
    case SWORN_PMCP_NOTIFICATION:
        CHECK(ol > 4 && ol <= 4 + SWORN_PMCP_METHOD_MAX && memcmp(c->operation, "mcp.", 4) == 0);
        CHECK(strncmp(c->operation, "mcp.rpc.", 8) != 0);
        for (size_t i = 4; i < ol; i++)
            CHECK(c->operation[i] >= 0x21 && c->operation[i] <= 0x7e);
        CHECK((c->kind == SWORN_PMCP_REQUEST) == (c->id_kind != SWORN_PMCP_ID_NONE));
        break;
    case SWORN_PMCP_RESPONSE:
        CHECK(strcmp(c->operation, SWORN_PMCP_OP_RESPONSE) == 0);
        CHECK(c->id_kind != SWORN_PMCP_ID_NONE);
        break;
    case SWORN_PMCP_LISTEN:
        CHECK(strcmp(c->operation, SWORN_PMCP_OP_LISTEN) == 0);
        break;
    case SWORN_PMCP_END:
        CHECK(strcmp(c->operation, SWORN_PMCP_OP_END) == 0);
        break;
    default:
        abort();
    }
    CHECK(named ? tl >= 1 && tl <= SWORN_RESOURCE_TOOL_MAX : tl == 0);
    CHECK(res ? ul >= 1 && ul <= SWORN_RESOURCE_URI_MAX : ul == 0);
    CHECK(tool || (c->nnumbers == 0 && c->numbers_more == 0));
    CHECK(c->nnumbers <= SWORN_PJSON_NUMBERS_MAX);
    for (size_t i = 0; i < c->nnumbers; i++)
        CHECK(c->numbers[i].pointer[0] == '/' && c->numbers[i].text[0] != '\0');
    if (c->id_kind == SWORN_PMCP_ID_INT)
        CHECK(c->id_int >= -SWORN_PMCP_ID_INT_MAX && c->id_int <= SWORN_PMCP_ID_INT_MAX);
    if (c->id_kind == SWORN_PMCP_ID_STRING)
        CHECK(c->id_len >= 1 && c->id_len <= SWORN_PMCP_ID_MAX && strlen(c->id_str) == c->id_len);
}

static void check_deny(const struct sworn_pmcp_call *c)
{
    char *text = NULL;
    json_object *o, *id;

    if (c->kind != SWORN_PMCP_REQUEST)
        return;
    if (sworn_pmcp_deny_body(c, "px-1", "no rule matched (default deny)", 1, 7, &text) != 0)
        return; /* out of memory */
    CHECK(strchr(text, '\n') == NULL);
    o = json_tokener_parse(text);
    CHECK(o != NULL && json_object_object_get_ex(o, "id", &id));
    if (c->id_kind == SWORN_PMCP_ID_INT)
        CHECK(json_object_is_type(id, json_type_int) && json_object_get_int64(id) == c->id_int);
    else
        CHECK((size_t)json_object_get_string_len(id) == c->id_len &&
              memcmp(json_object_get_string(id), c->id_str, c->id_len) == 0);
    json_object_put(o);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"POST", "POST",   "POST", "POST",
                                          "GET",  "DELETE", "PUT",  "POST"};
    static const char *const types[] = {"application/json", "application/json; charset=utf-8",
                                        "text/plain", "Application/JSON;charset=\"UTF-8\""};
    struct sworn_http_field f;
    const char *why = NULL, *why2 = NULL, *method;
    int status = 0, r, r2;

    if (size == 0)
        return 0;
    method = methods[data[0] & 7];
    f.name = "Content-Type";
    f.name_len = 12;
    f.value = types[(data[0] >> 3) & 3];
    f.value_len = strlen(f.value);
    data++;
    size--;

    r = sworn_pmcp_read_message(data, size, &a, &why);
    CHECK(r == 0 || r == 1 || r == -1);
    if (r == 1)
        CHECK(why != NULL && why[0] != '\0' && a.operation[0] == '\0');
    if (r == 0) {
        check_call(&a);
        r2 = sworn_pmcp_read_message(data, size, &b, &why2);
        CHECK(r2 == 0 && memcmp(&a, &b, sizeof(a)) == 0);
        check_deny(&a);
    }

    r2 = sworn_pmcp_read(method, &f, 1, data, size, 1, &b, &status, &why2);
    CHECK(r2 == 0 || r2 == 1 || r2 == -1);
    if (r2 == 1)
        CHECK(why2 != NULL && (status == 400 || status == 405 || status == 415));
    if (r2 == 0)
        check_call(&b);
    if (strcmp(method, "POST") == 0 && strcmp(f.value, "application/json") == 0 && size > 0 &&
        r >= 0 && r2 >= 0) {
        CHECK(r == r2);
        if (r == 0)
            CHECK(memcmp(&a, &b, sizeof(a)) == 0);
    }
    return 0;
}
