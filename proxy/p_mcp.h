/*
 * p_mcp.h -- MCP servers behind the proxy (Model Context Protocol 2025-06-18, Streamable HTTP
 * transport; docs/proxy.md "MCP"): which destinations are MCP servers (the configuration's `mcp:`
 * list), and the reading of one HTTP request to such an endpoint into what decisiond is asked.
 *
 * A request whose canonical resource lies under one of the `mcp:` destinations (p_dest.h) is an
 * MCP request, read here before anything is asked:
 *   POST     the body is exactly one JSON-RPC 2.0 message (strict JSON, proxy/p_json.h), with
 *            Content-Type application/json (charset utf-8 at most) and no Content-Encoding. A
 * request or notification is decided as operation "mcp.<method>"; tools/call names its tool
 * (Resource.tool) and the numbers of params.arguments (Context.json_numbers, pointers relative to
 *            arguments: "/amount"); prompts/get names its prompt (Resource.tool);
 *            resources/read, resources/subscribe and resources/unsubscribe name the URI
 *            (Resource.uri). A client's response to a server's request is "mcp.rpc.response".
 *   GET      (the server's SSE stream) "mcp.rpc.listen"; DELETE (the session's end)
 *            "mcp.rpc.end"; neither may carry a body.
 *   other    refused (405).
 * Method names beginning with "rpc." are reserved by JSON-RPC 2.0 (section 4) and refused, so the
 * proxy's own operation names "mcp.rpc.*" can never be spelt by a message.
 *
 * Everything else is refused with a static sentence and an HTTP status (the caller records the
 * refusal, p_refuse.h): not strict JSON, not an object, a batch (an array: MCP 2025-06-18 removed
 * JSON-RPC batching), jsonrpc other than "2.0", a member JSON-RPC does not define, a method that
 * is not 1..59 bytes of printable ASCII, params that are not an object, an id that is not a string
 * of 1..256 bytes or an integer within +-(2^53 - 1), a response without exactly one of result and
 * error, tools/call or prompts/get without a name, a tools/call whose arguments are not an object,
 * a resources/read without a uri.
 *
 * Pure computation over the caller's bytes (json-c's tree is freed before returning); no I/O, no
 * globals; thread-safe. Inputs are the agent's: bounded and refused, never trusted.
 */
#ifndef SWORN_P_MCP_H
#define SWORN_P_MCP_H

#include <stddef.h>
#include <stdint.h>

#include "p_dest.h"
#include "p_http.h"
#include "p_json.h"
#include "resource.h"

struct sworn_yaml_doc;
struct sworn_yaml_node;

#define SWORN_PMCP_SERVERS_MAX 16u /* destinations in `mcp:` */
#define SWORN_PMCP_METHOD_MAX 59u  /* a JSON-RPC method: "mcp." + it fits the wire's 64 bytes */
#define SWORN_PMCP_OPERATION_MAX 63u
#define SWORN_PMCP_ID_MAX 256u                   /* a string id, in bytes */
#define SWORN_PMCP_ID_INT_MAX 9007199254740991LL /* 2^53 - 1: what a JavaScript peer can hold */
#define SWORN_PMCP_DENY_CODE -32001 /* the JSON-RPC error code of a deny (docs/proxy.md "MCP") */

/* The operations of what is not a JSON-RPC request or notification. */
#define SWORN_PMCP_OP_RESPONSE "mcp.rpc.response"
#define SWORN_PMCP_OP_LISTEN "mcp.rpc.listen"
#define SWORN_PMCP_OP_END "mcp.rpc.end"

/* The configuration's `mcp:` key: a list of 1..16 destination URLs (p_dest.h's syntax). */
struct sworn_pmcp_conf {
    struct sworn_pdest servers[SWORN_PMCP_SERVERS_MAX];
    size_t nservers; /* 0: no MCP servers (the key is absent) */
};

/*
 * Read the `mcp:` node n of document d (NULL: the key is absent, no servers) into *out. Returns
 * 0, or -1 with sworn_err set through sworn_yaml_error ("<file>:<line>:<col>: mcp: ...").
 */
int sworn_pmcp_conf_read(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                         struct sworn_pmcp_conf *out);

/* The MCP server that the canonical resource c lies under, or NULL (not an MCP request). */
const struct sworn_pdest *sworn_pmcp_server(const struct sworn_pmcp_conf *conf,
                                            const struct sworn_resource *c);

enum sworn_pmcp_kind {
    SWORN_PMCP_REQUEST = 1,  /* method and id */
    SWORN_PMCP_NOTIFICATION, /* method, no id */
    SWORN_PMCP_RESPONSE,     /* id and result or error: the client answers a server's request */
    SWORN_PMCP_LISTEN,       /* GET: the server's SSE stream */
    SWORN_PMCP_END,          /* DELETE: the session's end */
};

enum sworn_pmcp_id_kind { SWORN_PMCP_ID_NONE = 0, SWORN_PMCP_ID_STRING, SWORN_PMCP_ID_INT };

/* What one MCP request is decided as. Large (the numbers): keep it off small stacks. */
struct sworn_pmcp_call {
    enum sworn_pmcp_kind kind;
    char operation[SWORN_PMCP_OPERATION_MAX + 1]; /* "mcp.tools/call", "mcp.rpc.listen", ... */
    char tool[SWORN_RESOURCE_TOOL_MAX + 1];       /* the tool or prompt; "" for other methods */
    char uri[SWORN_RESOURCE_URI_MAX + 1];         /* resources/read etc.; "" otherwise */
    struct sworn_pjson_number numbers[SWORN_PJSON_NUMBERS_MAX]; /* tools/call's arguments */
    size_t nnumbers;
    int numbers_more; /* some were left out (p_json.h) */
    int has_session;  /* an Mcp-Session-Id was sent: its SHA-256 below */
    uint8_t session_sha256[32];
    enum sworn_pmcp_id_kind id_kind;    /* a request's or response's id */
    char id_str[SWORN_PMCP_ID_MAX + 1]; /* ID_STRING: its bytes (no NUL inside) */
    size_t id_len;
    long long id_int; /* ID_INT */
};

/*
 * Read one JSON-RPC message, body[0..len), into *out (fully written; kind REQUEST, NOTIFICATION
 * or RESPONSE). Returns 0, 1 when refused (*why: a static sentence), or -1 when memory ran out
 * (sworn_err set).
 */
int sworn_pmcp_read_message(const uint8_t *body, size_t len, struct sworn_pmcp_call *out,
                            const char **why);

/*
 * Read one HTTP request to an MCP endpoint: its method (NUL-terminated, as sent), its header
 * fields, and its body (has_body: the request had a body, of body_len bytes). Returns 0 with *out
 * written, 1 when refused (*status 400, 405 or 415 and *why set), -1 when memory ran out or the
 * hash failed. The Mcp-Session-Id field, when sent (once: two are refused, last), is kept as its
 * SHA-256 (the value is a bearer of the session and is never recorded).
 */
int sworn_pmcp_read(const char *method, const struct sworn_http_field *fields, size_t nfields,
                    const uint8_t *body, size_t body_len, int has_body, struct sworn_pmcp_call *out,
                    int *status, const char **why);

/*
 * The answer to a denied JSON-RPC request (c->kind REQUEST): a JSON-RPC error response with the
 * request's id, code SWORN_PMCP_DENY_CODE, message "denied by sworn: <reason>" and data
 * {"request_id", "effect": "deny", "reason", "log_index"} (the proxy's deny body). OUT: *out, a
 * malloc'd NUL-terminated line without a newline (free it). Returns 0 or -1 (out of memory).
 */
int sworn_pmcp_deny_body(const struct sworn_pmcp_call *c, const char *request_id,
                         const char *reason, int has_index, uint64_t log_index, char **out);

#endif
