/*
 * p_mcp.c -- MCP servers and their JSON-RPC messages (see p_mcp.h and docs/proxy.md "MCP").
 */
#define _GNU_SOURCE /* asprintf */
#include "p_mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "err.h"
#include "utf8.h"
#include "yamldoc.h"

/* --- The configuration. --- */

int sworn_pmcp_conf_read(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                         struct sworn_pmcp_conf *out)
{
    size_t len;

    memset(out, 0, sizeof(*out));
    if (n == NULL)
        return 0;
    if (sworn_yaml_kind(n) != SWORN_YAML_SEQ)
        return sworn_yaml_error(d, n, "mcp: a list of MCP server URLs (\"https://host/mcp\")");
    len = sworn_yaml_len(n);
    if (len == 0 || len > SWORN_PMCP_SERVERS_MAX)
        return sworn_yaml_error(d, n, "mcp: 1 to %u MCP server URLs (leave the key out for none)",
                                SWORN_PMCP_SERVERS_MAX);
    for (size_t i = 0; i < len; i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(n, i);
        const char *url = NULL, *why = NULL;

        if (sworn_yaml_str(d, it, &url) != 0)
            return -1;
        if (sworn_pdest_parse(url, &out->servers[i], &why) != 0)
            return sworn_yaml_error(d, it, "mcp: %s", why);
        for (size_t j = 0; j < i; j++) {
            const struct sworn_pdest *a = &out->servers[j], *b = &out->servers[i];

            if (strcmp(a->scheme, b->scheme) == 0 && strcmp(a->host, b->host) == 0 &&
                a->port == b->port && strcmp(a->path, b->path) == 0)
                return sworn_yaml_error(d, it, "mcp: the same server is listed twice");
        }
        out->nservers = i + 1;
    }
    return 0;
}

const struct sworn_pdest *sworn_pmcp_server(const struct sworn_pmcp_conf *conf,
                                            const struct sworn_resource *c)
{
    /* The wide reading (p_dest.h): "/MCP" and "/mcp;x" reach an MCP server on routers that
     * ignore case or drop parameters; read as http.request they were decided by rules that know
     * nothing of tools (red team rt-A). */
    return sworn_pdest_find_wide(conf->servers, conf->nservers, c);
}

/* --- One JSON-RPC message. --- */

/* A string member's bytes (json-c keeps the length; a value may hold U+0000). */
static const char *str_of(json_object *v, size_t *len)
{
    if (v == NULL || !json_object_is_type(v, json_type_string))
        return NULL;
    *len = (size_t)json_object_get_string_len(v);
    return json_object_get_string(v);
}

/* A name the record holds (tool, prompt): 1..max bytes of UTF-8 without an unsafe character
 * (utf8.h's list, which the decision socket applies to every string). */
static int name_ok(const char *s, size_t len, size_t max)
{
    return s != NULL && len >= 1 && len <= max && memchr(s, '\0', len) == NULL &&
           sworn_utf8_check(s, len, 0, "an MCP name") == 0;
}

static int read_id(json_object *v, struct sworn_pmcp_call *out, const char **why)
{
    const char *s;
    size_t len;

    if (json_object_is_type(v, json_type_int)) {
        int64_t i = json_object_get_int64(v);

        /* json-c clamps an integer it cannot hold to INT64_MAX or UINT64_MAX: both are outside
         * this range, so a clamped id is refused rather than echoed as another number. */
        if (i >= -SWORN_PMCP_ID_INT_MAX && i <= SWORN_PMCP_ID_INT_MAX) {
            out->id_kind = SWORN_PMCP_ID_INT;
            out->id_int = (long long)i;
            return 0;
        }
    } else if ((s = str_of(v, &len)) != NULL && len >= 1 && len <= SWORN_PMCP_ID_MAX &&
               memchr(s, '\0', len) == NULL) {
        out->id_kind = SWORN_PMCP_ID_STRING;
        memcpy(out->id_str, s, len);
        out->id_str[len] = '\0';
        out->id_len = len;
        return 0;
    }
    *why = "the JSON-RPC id is not a string of 1..256 bytes or an integer within +-(2^53 - 1)";
    return 1;
}

/* The method's own parameters: the tool, prompt or URI it names, and a tool call's numbers. */
static int read_params(const uint8_t *body, size_t len, const char *method, json_object *params,
                       struct sworn_pmcp_call *out, const char **why)
{
    json_object *v = NULL;
    const char *s;
    size_t sl = 0;
    int tool = strcmp(method, "tools/call") == 0, prompt = strcmp(method, "prompts/get") == 0;

    if (tool || prompt) {
        if (params == NULL || !json_object_object_get_ex(params, "name", &v) ||
            (s = str_of(v, &sl)) == NULL) {
            *why = tool ? "tools/call has no params.name string (the tool)"
                        : "prompts/get has no params.name string (the prompt)";
            return 1;
        }
        if (!name_ok(s, sl, SWORN_RESOURCE_TOOL_MAX)) {
            *why = "the tool or prompt name is not 1..256 bytes of UTF-8 without control or "
                   "invisible characters";
            return 1;
        }
        memcpy(out->tool, s, sl);
        out->tool[sl] = '\0';
        if (json_object_object_get_ex(params, "arguments", &v) &&
            !json_object_is_type(v, json_type_object)) {
            /* Also null: a server may read null as "no arguments", but nothing then says what a
             * budget would have read. */
            *why = "params.arguments is not an object";
            return 1;
        }
        if (tool)
            sworn_pjson_numbers(body, len, "/params/arguments", out->numbers,
                                SWORN_PJSON_NUMBERS_MAX, &out->nnumbers, &out->numbers_more);
        return 0;
    }
    if (strcmp(method, "resources/read") == 0 || strcmp(method, "resources/subscribe") == 0 ||
        strcmp(method, "resources/unsubscribe") == 0) {
        if (params == NULL || !json_object_object_get_ex(params, "uri", &v) ||
            (s = str_of(v, &sl)) == NULL) {
            *why = "a resources method has no params.uri string";
            return 1;
        }
        /* Its form is decisiond's to judge (policy/resource.h: refused unless canonical, and
         * recorded); here only what the wire can carry. */
        if (sl == 0 || sl > SWORN_RESOURCE_URI_MAX || memchr(s, '\0', sl) != NULL) {
            *why = "params.uri is not 1..2048 bytes without NUL";
            return 1;
        }
        memcpy(out->uri, s, sl);
        out->uri[sl] = '\0';
    }
    return 0;
}

static int read_object(const uint8_t *body, size_t len, json_object *root,
                       struct sworn_pmcp_call *out, const char **why)
{
    /* json-c reads a null value as NULL: presence is kept apart from the value. */
    json_object *jsonrpc = NULL, *method = NULL, *params = NULL, *id = NULL, *error = NULL;
    int has_method = 0, has_params = 0, has_id = 0, has_result = 0, has_error = 0;
    const char *s;
    size_t sl = 0;

    json_object_object_foreach(root, key, val)
    {
        if (strcmp(key, "jsonrpc") == 0) {
            jsonrpc = val;
        } else if (strcmp(key, "method") == 0) {
            method = val;
            has_method = 1;
        } else if (strcmp(key, "params") == 0) {
            params = val;
            has_params = 1;
        } else if (strcmp(key, "id") == 0) {
            id = val;
            has_id = 1;
        } else if (strcmp(key, "result") == 0) {
            has_result = 1;
        } else if (strcmp(key, "error") == 0) {
            error = val;
            has_error = 1;
        } else {
            *why = "the JSON-RPC message has a member other than jsonrpc, method, params, id, "
                   "result and error";
            return 1;
        }
    }
    if ((s = str_of(jsonrpc, &sl)) == NULL || sl != 3 || memcmp(s, "2.0", 3) != 0) {
        *why = "the JSON-RPC message's jsonrpc member is not \"2.0\"";
        return 1;
    }
    if (has_id && id == NULL) {
        *why = "the JSON-RPC id is null (MCP requires a string or an integer)";
        return 1;
    }
    if (has_id && read_id(id, out, why) != 0)
        return 1;
    if (!has_method) {
        /* A response: the client answers a request of the server (sampling, elicitation,
         * roots). */
        if (!has_id) {
            *why = "the JSON-RPC message has neither a method nor an id";
            return 1;
        }
        if (has_result == has_error) {
            *why = "a JSON-RPC response has exactly one of result and error";
            return 1;
        }
        if (has_params) {
            *why = "a JSON-RPC response has no params";
            return 1;
        }
        if (has_error && !json_object_is_type(error, json_type_object)) {
            *why = "the JSON-RPC error is not an object";
            return 1;
        }
        out->kind = SWORN_PMCP_RESPONSE;
        snprintf(out->operation, sizeof(out->operation), "%s", SWORN_PMCP_OP_RESPONSE);
        return 0;
    }
    if ((s = str_of(method, &sl)) == NULL) {
        *why = "the JSON-RPC method is not a string";
        return 1;
    }
    for (size_t i = 0; i < sl; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            sl = 0; /* refused just below */
    if (sl < 1 || sl > SWORN_PMCP_METHOD_MAX) {
        *why = "the JSON-RPC method is not 1..59 bytes of printable ASCII";
        return 1;
    }
    if (sl >= 4 && memcmp(s, "rpc.", 4) == 0) {
        *why = "a JSON-RPC method beginning with \"rpc.\" is reserved (JSON-RPC 2.0 section 4)";
        return 1;
    }
    if (has_result || has_error) {
        *why = "a JSON-RPC message with a method has no result or error";
        return 1;
    }
    if (has_params && !json_object_is_type(params, json_type_object)) {
        *why = "the JSON-RPC params is not an object (MCP sends named parameters)";
        return 1;
    }
    out->kind = has_id ? SWORN_PMCP_REQUEST : SWORN_PMCP_NOTIFICATION;
    snprintf(out->operation, sizeof(out->operation), "mcp.%.*s", (int)sl, s);
    return read_params(body, len, out->operation + 4, params, out, why);
}

int sworn_pmcp_read_message(const uint8_t *body, size_t len, struct sworn_pmcp_call *out,
                            const char **why)
{
    json_object *root = NULL;
    int r;

    memset(out, 0, sizeof(*out));
    r = sworn_pjson_parse(body, len, &root, why);
    if (r != 0)
        return r;
    if (json_object_is_type(root, json_type_array)) {
        *why = "the body is a JSON-RPC batch (an array): MCP 2025-06-18 removed batching, send one "
               "message per POST";
        r = 1;
    } else if (!json_object_is_type(root, json_type_object)) {
        *why = "the body is not a JSON-RPC message (a JSON object)";
        r = 1;
    } else {
        r = read_object(body, len, root, out, why);
    }
    json_object_put(root);
    if (r != 0) {
        const char *keep = *why;

        memset(out, 0, sizeof(*out));
        *why = keep;
    }
    return r;
}

/*
 * The Content-Type rule of an MCP POST: exactly one field, media type application/json (type and
 * subtype case-insensitive, RFC 9110 8.3.1), and no parameter but charset=utf-8 (any case, the
 * value optionally quoted). Anything else may be read by a server as another encoding.
 */
static int content_type_ok(const struct sworn_http_field *fields, size_t nfields)
{
    static const char type[] = "application/json";
    const struct sworn_http_field *f = NULL;
    const char *p, *end;

    for (size_t i = 0; i < nfields; i++)
        if (fields[i].name_len == 12 && strncasecmp(fields[i].name, "content-type", 12) == 0) {
            if (f != NULL)
                return 0;
            f = &fields[i];
        }
    if (f == NULL || f->value_len < sizeof(type) - 1 ||
        strncasecmp(f->value, type, sizeof(type) - 1) != 0)
        return 0;
    p = f->value + sizeof(type) - 1;
    end = f->value + f->value_len;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end)
        return 1;
    if (*p++ != ';')
        return 0;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if ((size_t)(end - p) < 8 || strncasecmp(p, "charset=", 8) != 0)
        return 0;
    p += 8;
    if ((size_t)(end - p) == 5 && strncasecmp(p, "utf-8", 5) == 0)
        return 1;
    return (size_t)(end - p) == 7 && p[0] == '"' && strncasecmp(p + 1, "utf-8", 5) == 0 &&
           p[6] == '"';
}

static int read_kind(const char *method, const struct sworn_http_field *fields, size_t nfields,
                     const uint8_t *body, size_t body_len, int has_body,
                     struct sworn_pmcp_call *out, int *status, const char **why)
{
    int r;

    memset(out, 0, sizeof(*out));
    *status = 400;
    /* A body of zero bytes (Content-Length: 0) is no body. */
    if (!has_body)
        body_len = 0;
    if (strcmp(method, "GET") == 0 || strcmp(method, "DELETE") == 0) {
        if (body_len > 0) {
            *why = "a GET or DELETE to an MCP endpoint has a body";
            return 1;
        }
        out->kind = method[0] == 'G' ? SWORN_PMCP_LISTEN : SWORN_PMCP_END;
        snprintf(out->operation, sizeof(out->operation), "%s",
                 method[0] == 'G' ? SWORN_PMCP_OP_LISTEN : SWORN_PMCP_OP_END);
        return 0;
    }
    if (strcmp(method, "POST") != 0) {
        *status = 405;
        *why = "an MCP endpoint takes POST, GET and DELETE only";
        return 1;
    }
    for (size_t i = 0; i < nfields; i++)
        if (fields[i].name_len == 16 && strncasecmp(fields[i].name, "content-encoding", 16) == 0) {
            /* The message decided on is the bytes as sent: a server that decodes them would act
             * on another message. */
            *status = 415;
            *why = "an MCP POST's body may not be encoded (Content-Encoding)";
            return 1;
        }
    if (!content_type_ok(fields, nfields)) {
        *status = 415;
        *why = "an MCP POST needs one Content-Type: application/json (a charset parameter only "
               "as utf-8)";
        return 1;
    }
    if (body_len == 0) {
        *why = "an MCP POST without a body (it carries one JSON-RPC message)";
        return 1;
    }
    r = sworn_pmcp_read_message(body, body_len, out, why);
    return r;
}

/* The Mcp-Session-Id: none, or one field, whose SHA-256 goes into out. 0, 1 (two fields), or -1
 * (the hash failed). */
static int read_session(const struct sworn_http_field *fields, size_t nfields,
                        struct sworn_pmcp_call *out)
{
    const struct sworn_http_field *f = NULL;
    unsigned int len = 32;

    for (size_t i = 0; i < nfields; i++)
        if (fields[i].name_len == 14 && strncasecmp(fields[i].name, "mcp-session-id", 14) == 0) {
            if (f != NULL)
                return 1;
            f = &fields[i];
        }
    if (f == NULL)
        return 0;
    if (EVP_Digest(f->value, f->value_len, out->session_sha256, &len, EVP_sha256(), NULL) != 1)
        return sworn_err_set(SWORN_ERR_CRYPTO, "SHA-256 failed");
    out->has_session = 1;
    return 0;
}

int sworn_pmcp_read(const char *method, const struct sworn_http_field *fields, size_t nfields,
                    const uint8_t *body, size_t body_len, int has_body, struct sworn_pmcp_call *out,
                    int *status, const char **why)
{
    int r = read_kind(method, fields, nfields, body, body_len, has_body, out, status, why);

    if (r != 0)
        return r;
    r = read_session(fields, nfields, out);
    if (r > 0) {
        /* Which would the server take? */
        memset(out, 0, sizeof(*out));
        *status = 400;
        *why = "an MCP request has two Mcp-Session-Id fields";
    }
    return r;
}

/* --- The answer to a denied request. --- */

int sworn_pmcp_deny_body(const struct sworn_pmcp_call *c, const char *request_id,
                         const char *reason, int has_index, uint64_t log_index, char **out)
{
    json_object *o = json_object_new_object(), *err = json_object_new_object(),
                *data = json_object_new_object(), *id = NULL;
    char *message = NULL;
    const char *text;
    int ok;

    *out = NULL;
    if (c->id_kind == SWORN_PMCP_ID_STRING)
        id = json_object_new_string_len(c->id_str, (int)c->id_len);
    else if (c->id_kind == SWORN_PMCP_ID_INT)
        id = json_object_new_int64(c->id_int);
    ok = o != NULL && err != NULL && data != NULL && id != NULL &&
         asprintf(&message, "denied by sworn: %s", reason) >= 0;
    if (ok) {
        json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
        json_object_object_add(o, "id", id);
        id = NULL;
        json_object_object_add(err, "code", json_object_new_int(SWORN_PMCP_DENY_CODE));
        json_object_object_add(err, "message", json_object_new_string(message));
        json_object_object_add(data, "request_id", json_object_new_string(request_id));
        json_object_object_add(data, "effect", json_object_new_string("deny"));
        json_object_object_add(data, "reason", json_object_new_string(reason));
        if (has_index)
            json_object_object_add(data, "log_index", json_object_new_int64((int64_t)log_index));
        json_object_object_add(err, "data", data);
        data = NULL;
        json_object_object_add(o, "error", err);
        err = NULL;
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                     JSON_C_TO_STRING_NOSLASHESCAPE);
        ok = text != NULL && (*out = strdup(text)) != NULL;
    }
    free(message);
    json_object_put(id);
    json_object_put(data);
    json_object_put(err);
    json_object_put(o);
    if (!ok)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    return 0;
}
