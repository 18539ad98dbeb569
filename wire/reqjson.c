/*
 * reqjson.c -- AuthorizationRequest <-> JSON (see reqjson.h for the form and the rules).
 *
 * Parsing builds the protobuf-c structs with their strings borrowed from the json-c tree and
 * every allocation recorded in a small arena, packs them, and decodes the bytes again with
 * sworn_frame_unpack_request: the caller gets a normally unpacked message (one free call), and
 * the JSON route can never accept a request the decision socket would refuse.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "encoding.h"
#include "err.h"
#include "frame.h"
#include "reqjson.h"

#define JSON_DEPTH 8
#define ARENA_MAX 512u

struct arena {
    void *p[ARENA_MAX];
    size_t n;
};

static void *alloc(struct arena *a, size_t n)
{
    void *p;

    if (a->n >= ARENA_MAX) {
        sworn_err_set(SWORN_ERR_RANGE, "request JSON has too many parts");
        return NULL;
    }
    p = calloc(1, n == 0 ? 1 : n);
    if (p == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory reading request JSON");
        return NULL;
    }
    a->p[a->n++] = p;
    return p;
}

static void arena_free(struct arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->p[i]);
    a->n = 0;
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad(const char *fmt, ...)
{
    char msg[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return sworn_err_set(SWORN_ERR_FORMAT, "request JSON: %s", msg);
}

/* o must be an object whose keys are all in allowed (NULL-terminated). */
static int only_keys(json_object *o, const char *what, const char *const *allowed)
{
    if (!json_object_is_type(o, json_type_object))
        return bad("%s must be an object", what);
    json_object_object_foreach(o, key, val)
    {
        size_t i = 0;

        (void)val;
        while (allowed[i] != NULL && strcmp(allowed[i], key) != 0)
            i++;
        if (allowed[i] == NULL)
            return bad("unknown key \"%.64s\" in %s", key, what);
    }
    return 0;
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;

    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A string member (absent: ""); NUL inside is refused. */
static int get_str(json_object *o, const char *key, char **out)
{
    json_object *v = get(o, key);
    const char *s;

    *out = (char *)"";
    if (v == NULL)
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return bad("%s must be a string", key);
    s = json_object_get_string(v);
    if ((size_t)json_object_get_string_len(v) != strlen(s))
        return bad("%s holds a NUL character", key);
    *out = (char *)s;
    return 0;
}

/* An unsigned integer member at most max (absent: 0). */
static int get_uint(json_object *o, const char *key, uint64_t max, uint64_t *out)
{
    json_object *v = get(o, key);
    uint64_t u;

    *out = 0;
    if (v == NULL)
        return 0;
    if (!json_object_is_type(v, json_type_int))
        return bad("%s must be an integer", key);
    if (json_object_get_int64(v) < 0)
        return bad("%s must not be negative", key);
    errno = 0;
    u = json_object_get_uint64(v);
    if (errno != 0 || u > max)
        return sworn_err_set(SWORN_ERR_RANGE, "request JSON: %s is out of range", key);
    *out = u;
    return 0;
}

/* A hash: exactly 64 lower-case hex digits (absent or "": empty). */
static int hex32(struct arena *a, json_object *v, const char *key, ProtobufCBinaryData *out)
{
    const char *s;
    size_t i;

    out->len = 0;
    out->data = NULL;
    if (v == NULL)
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return bad("%s must be a hex string", key);
    s = json_object_get_string(v);
    if (s[0] == '\0')
        return 0;
    if (json_object_get_string_len(v) != 64)
        return bad("%s must be 64 hex digits", key);
    for (i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return bad("%s must be lower-case hex", key);
    if ((out->data = alloc(a, 32)) == NULL)
        return -1;
    if (sworn_hex_decode(s, 64, out->data, 32) != 0)
        return bad("%s is not hex", key);
    out->len = 32;
    return 0;
}

/* An array member (absent: 0 items) of at most max items. */
static int get_array(json_object *o, const char *key, size_t max, json_object **arr, size_t *n)
{
    json_object *v = get(o, key);

    *arr = NULL;
    *n = 0;
    if (v == NULL)
        return 0;
    if (!json_object_is_type(v, json_type_array))
        return bad("%s must be an array", key);
    *n = json_object_array_length(v);
    if (*n > max)
        return sworn_err_set(SWORN_ERR_RANGE, "request JSON: %s has more than %zu items", key, max);
    *arr = v;
    return 0;
}

static int parse_principal(struct arena *a, json_object *o, Sworn__V1__Principal **out)
{
    static const char *const keys[] = {"id", "sandbox", "uid", "sandbox_start_index", NULL};
    Sworn__V1__Principal *m = alloc(a, sizeof(*m));
    uint64_t uid;

    if (m == NULL)
        return -1;
    sworn__v1__principal__init(m);
    SWORN_GUARD(only_keys(o, "principal", keys));
    SWORN_GUARD(get_str(o, "id", &m->id));
    SWORN_GUARD(get_str(o, "sandbox", &m->sandbox));
    SWORN_GUARD(get_uint(o, "uid", UINT32_MAX, &uid));
    m->uid = (uint32_t)uid;
    SWORN_GUARD(get_uint(o, "sandbox_start_index", UINT64_MAX, &m->sandbox_start_index));
    *out = m;
    return 0;
fail:
    return -1;
}

static int parse_resource(struct arena *a, json_object *o, Sworn__V1__Resource **out)
{
    static const char *const keys[] = {"scheme", "host", "port",  "path",
                                       "tool",   "uri",  "model", NULL};
    Sworn__V1__Resource *m = alloc(a, sizeof(*m));
    uint64_t port;

    if (m == NULL)
        return -1;
    sworn__v1__resource__init(m);
    SWORN_GUARD(only_keys(o, "resource", keys));
    SWORN_GUARD(get_str(o, "scheme", &m->scheme));
    SWORN_GUARD(get_str(o, "host", &m->host));
    SWORN_GUARD(get_uint(o, "port", UINT32_MAX, &port));
    m->port = (uint32_t)port;
    SWORN_GUARD(get_str(o, "path", &m->path));
    SWORN_GUARD(get_str(o, "tool", &m->tool));
    SWORN_GUARD(get_str(o, "uri", &m->uri));
    SWORN_GUARD(get_str(o, "model", &m->model));
    *out = m;
    return 0;
fail:
    return -1;
}

static int parse_context(struct arena *a, json_object *o, Sworn__V1__Context **out)
{
    static const char *const keys[] = {"method",
                                       "header_names",
                                       "body_sha256",
                                       "covered",
                                       "body_length",
                                       "json_numbers",
                                       "credential_token_sha256",
                                       "mcp_session_sha256",
                                       "token_ceiling",
                                       "model_api",
                                       NULL};
    static const char *const ckeys[] = {"name", "value_sha256", NULL};
    static const char *const tkeys[] = {"field", "tokens", NULL};
    static const char *const nkeys[] = {"pointer", "value", NULL};
    Sworn__V1__Context *m = alloc(a, sizeof(*m));
    json_object *arr;
    size_t i, n;

    if (m == NULL)
        return -1;
    sworn__v1__context__init(m);
    SWORN_GUARD(only_keys(o, "context", keys));
    SWORN_GUARD(get_str(o, "method", &m->method));
    SWORN_GUARD(get_array(o, "header_names", SWORN_FRAME_HEADERS_MAX, &arr, &n));
    if (n > 0 && (m->header_names = alloc(a, n * sizeof(char *))) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(arr, i);

        if (!json_object_is_type(it, json_type_string))
            return bad("header_names[%zu] must be a string", i);
        m->header_names[i] = (char *)json_object_get_string(it);
        if ((size_t)json_object_get_string_len(it) != strlen(m->header_names[i]))
            return bad("header_names[%zu] holds a NUL character", i);
        m->n_header_names = i + 1;
    }
    SWORN_GUARD(hex32(a, get(o, "body_sha256"), "body_sha256", &m->body_sha256));
    SWORN_GUARD(get_array(o, "covered", SWORN_FRAME_COVERED_MAX, &arr, &n));
    if (n > 0 && (m->covered = alloc(a, n * sizeof(*m->covered))) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(arr, i);
        Sworn__V1__CoveredComponent *c = alloc(a, sizeof(*c));

        if (c == NULL)
            return -1;
        sworn__v1__covered_component__init(c);
        SWORN_GUARD(only_keys(it, "covered[]", ckeys));
        SWORN_GUARD(get_str(it, "name", &c->name));
        SWORN_GUARD(hex32(a, get(it, "value_sha256"), "value_sha256", &c->value_sha256));
        m->covered[i] = c;
        m->n_covered = i + 1;
    }
    SWORN_GUARD(get_uint(o, "body_length", UINT64_MAX, &m->body_length));
    SWORN_GUARD(get_array(o, "json_numbers", SWORN_FRAME_NUMBERS_MAX, &arr, &n));
    if (n > 0 && (m->json_numbers = alloc(a, n * sizeof(*m->json_numbers))) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(arr, i);
        Sworn__V1__JsonNumber *jn = alloc(a, sizeof(*jn));

        if (jn == NULL)
            return -1;
        sworn__v1__json_number__init(jn);
        SWORN_GUARD(only_keys(it, "json_numbers[]", nkeys));
        SWORN_GUARD(get_str(it, "pointer", &jn->pointer));
        SWORN_GUARD(get_str(it, "value", &jn->value));
        m->json_numbers[i] = jn;
        m->n_json_numbers = i + 1;
    }
    SWORN_GUARD(hex32(a, get(o, "credential_token_sha256"), "credential_token_sha256",
                      &m->credential_token_sha256));
    SWORN_GUARD(
        hex32(a, get(o, "mcp_session_sha256"), "mcp_session_sha256", &m->mcp_session_sha256));
    if (get(o, "token_ceiling") != NULL) {
        json_object *t = get(o, "token_ceiling");
        Sworn__V1__TokenCeiling *tc = alloc(a, sizeof(*tc));

        if (tc == NULL)
            return -1;
        sworn__v1__token_ceiling__init(tc);
        SWORN_GUARD(only_keys(t, "token_ceiling", tkeys));
        SWORN_GUARD(get_str(t, "field", &tc->field));
        SWORN_GUARD(get_uint(t, "tokens", UINT64_MAX, &tc->tokens));
        m->token_ceiling = tc;
    }
    SWORN_GUARD(get_str(o, "model_api", &m->model_api));
    *out = m;
    return 0;
fail:
    return -1;
}

static const char *const may_names[] = {"unknown", "allowed", "denied", "not_present"};

/* A list of strings (at most max) into *out, *n. */
static int get_strs(struct arena *a, json_object *o, const char *key, size_t max, char ***out,
                    size_t *n)
{
    json_object *arr;
    size_t len;

    SWORN_GUARD(get_array(o, key, max, &arr, &len));
    if (len > 0 && (*out = alloc(a, len * sizeof(**out))) == NULL)
        return -1;
    for (size_t i = 0; i < len; i++) {
        json_object *it = json_object_array_get_idx(arr, i);

        if (!json_object_is_type(it, json_type_string) ||
            (size_t)json_object_get_string_len(it) != strlen(json_object_get_string(it)))
            return bad("%s[] must be strings without NUL", key);
        (*out)[i] = (char *)json_object_get_string(it);
        *n = i + 1;
    }
    return 0;
fail:
    return -1;
}

static const char *const verification_names[] = {"", "not_verified", "verified"};

/* Issue 16's members of a delegation: client_id, audience, scopes, jti, expires_unix and
 * verification {"result": "verified"|"not_verified", "key_id", "alg"}. */
static int parse_delegation_claims(struct arena *a, json_object *o, Sworn__V1__Delegation *m)
{
    static const char *const vkeys[] = {"result", "key_id", "alg", NULL};
    json_object *v;

    SWORN_GUARD(get_str(o, "client_id", &m->client_id));
    SWORN_GUARD(get_str(o, "jti", &m->jti));
    SWORN_GUARD(get_strs(a, o, "audience", 16, &m->audience, &m->n_audience));
    SWORN_GUARD(get_strs(a, o, "scopes", 64, &m->scopes, &m->n_scopes));
    SWORN_GUARD(get_uint(o, "expires_unix", UINT64_MAX, &m->expires_unix));
    if ((v = get(o, "verification")) != NULL) {
        char *r;
        size_t i;

        if ((m->verification = alloc(a, sizeof(*m->verification))) == NULL)
            return -1;
        sworn__v1__delegation_verification__init(m->verification);
        SWORN_GUARD(only_keys(v, "verification", vkeys));
        SWORN_GUARD(get_str(v, "result", &r));
        for (i = 1; i < 3 && strcmp(r, verification_names[i]) != 0; i++)
            ;
        if (i == 3)
            return bad("verification.result must be not_verified or verified");
        m->verification->result = (Sworn__V1__DelegationVerification__Result)i;
        SWORN_GUARD(get_str(v, "key_id", &m->verification->key_id));
        SWORN_GUARD(get_str(v, "alg", &m->verification->alg));
    }
    return 0;
fail:
    return -1;
}

static int parse_delegation(struct arena *a, json_object *o, Sworn__V1__Delegation **out)
{
    static const char *const keys[] = {"subject",      "issuer",       "actors",       "may_act",
                                       "token_sha256", "client_id",    "audience",     "scopes",
                                       "jti",          "expires_unix", "verification", NULL};
    static const char *const akeys[] = {"subject", "issuer", NULL};
    Sworn__V1__Delegation *m = alloc(a, sizeof(*m));
    json_object *arr, *v;
    size_t i, n;

    if (m == NULL)
        return -1;
    sworn__v1__delegation__init(m);
    SWORN_GUARD(only_keys(o, "delegation", keys));
    SWORN_GUARD(get_str(o, "subject", &m->subject));
    SWORN_GUARD(get_str(o, "issuer", &m->issuer));
    SWORN_GUARD(get_array(o, "actors", SWORN_FRAME_ACTORS_MAX, &arr, &n));
    if (n > 0 && (m->actors = alloc(a, n * sizeof(*m->actors))) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(arr, i);
        Sworn__V1__Actor *ac = alloc(a, sizeof(*ac));

        if (ac == NULL)
            return -1;
        sworn__v1__actor__init(ac);
        SWORN_GUARD(only_keys(it, "actors[]", akeys));
        SWORN_GUARD(get_str(it, "subject", &ac->subject));
        SWORN_GUARD(get_str(it, "issuer", &ac->issuer));
        m->actors[i] = ac;
        m->n_actors = i + 1;
    }
    if ((v = get(o, "may_act")) != NULL) {
        const char *s;

        if (!json_object_is_type(v, json_type_string))
            return bad("may_act must be a string");
        s = json_object_get_string(v);
        if ((m->may_act = alloc(a, sizeof(*m->may_act))) == NULL)
            return -1;
        sworn__v1__may_act__init(m->may_act);
        for (i = 0; i < 4 && strcmp(s, may_names[i]) != 0; i++)
            ;
        if (i == 4)
            return bad("may_act must be unknown, allowed, denied or not_present");
        m->may_act->result = (Sworn__V1__MayAct__Result)i;
    }
    SWORN_GUARD(get_array(o, "token_sha256", SWORN_FRAME_TOKENS_MAX, &arr, &n));
    if (n > 0 && (m->token_sha256 = alloc(a, n * sizeof(*m->token_sha256))) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        SWORN_GUARD(
            hex32(a, json_object_array_get_idx(arr, i), "token_sha256[]", &m->token_sha256[i]));
        if (m->token_sha256[i].len == 0)
            return bad("token_sha256[%zu] is empty", i);
        m->n_token_sha256 = i + 1;
    }
    SWORN_GUARD(parse_delegation_claims(a, o, m));
    *out = m;
    return 0;
fail:
    return -1;
}

static int parse_refusal(struct arena *a, json_object *o, Sworn__V1__ProxyRefusal **out)
{
    static const char *const keys[] = {"status", "reason", "head_sha256", NULL};
    Sworn__V1__ProxyRefusal *m = alloc(a, sizeof(*m));
    uint64_t status;

    if (m == NULL)
        return -1;
    sworn__v1__proxy_refusal__init(m);
    SWORN_GUARD(only_keys(o, "refusal", keys));
    SWORN_GUARD(get_uint(o, "status", UINT32_MAX, &status));
    m->status = (uint32_t)status;
    SWORN_GUARD(get_str(o, "reason", &m->reason));
    SWORN_GUARD(hex32(a, get(o, "head_sha256"), "refusal.head_sha256", &m->head_sha256));
    *out = m;
    return 0;
fail:
    return -1;
}

static int build(struct arena *a, json_object *o, Sworn__V1__AuthorizationRequest *m)
{
    static const char *const keys[] = {"request_id", "principal",    "operation",
                                       "resource",   "context",      "delegation",
                                       "refusal",    "time_unix_ms", NULL};
    json_object *v;

    SWORN_GUARD(only_keys(o, "the request", keys));
    SWORN_GUARD(get_str(o, "request_id", &m->request_id));
    if ((v = get(o, "principal")) != NULL)
        SWORN_GUARD(parse_principal(a, v, &m->principal));
    SWORN_GUARD(get_str(o, "operation", &m->operation));
    if ((v = get(o, "resource")) != NULL)
        SWORN_GUARD(parse_resource(a, v, &m->resource));
    if ((v = get(o, "context")) != NULL)
        SWORN_GUARD(parse_context(a, v, &m->context));
    if ((v = get(o, "delegation")) != NULL)
        SWORN_GUARD(parse_delegation(a, v, &m->delegation));
    if ((v = get(o, "refusal")) != NULL)
        SWORN_GUARD(parse_refusal(a, v, &m->refusal));
    SWORN_GUARD(get_uint(o, "time_unix_ms", UINT64_MAX, &m->time_unix_ms));
    return 0;
fail:
    return -1;
}

/*
 * json-c saturates integers beyond 64 bits instead of refusing them; find them first. Scans the
 * text outside strings for integer tokens whose magnitude exceeds UINT64_MAX.
 */
static int check_big_ints(const char *t, size_t len)
{
    size_t i = 0;
    int in_str = 0;

    while (i < len) {
        char c = t[i];

        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
            i++;
            continue;
        }
        if (c == '"') {
            in_str = 1;
            i++;
            continue;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            size_t start = i + (c == '-'), end = start;
            uint64_t v = 0;
            int big = 0;

            while (end < len && t[end] >= '0' && t[end] <= '9') {
                unsigned d = (unsigned)(t[end] - '0');

                if (v > (UINT64_MAX - d) / 10)
                    big = 1;
                else
                    v = v * 10 + d;
                end++;
            }
            if (big && (end >= len || (t[end] != '.' && t[end] != 'e' && t[end] != 'E')))
                return sworn_err_set(SWORN_ERR_RANGE,
                                     "request JSON: an integer beyond 64 bits at offset %zu", i);
            i = end > i ? end : i + 1;
            continue;
        }
        i++;
    }
    return 0;
}

int sworn_reqjson_parse(const char *text, size_t len, Sworn__V1__AuthorizationRequest **out)
{
    Sworn__V1__AuthorizationRequest m = SWORN__V1__AUTHORIZATION_REQUEST__INIT, *r = NULL;
    struct json_tokener *tok = NULL;
    json_object *o = NULL;
    struct arena *a = NULL;
    uint8_t *packed = NULL;
    size_t plen, i;

    if (text == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_reqjson_parse: bad arguments");
    SWORN_ENSURE(len > 0 && len <= SWORN_REQJSON_MAX && len <= INT32_MAX, SWORN_ERR_RANGE,
                 "request JSON is %zu bytes, not 1..%u", len, SWORN_REQJSON_MAX);
    SWORN_ENSURE(memchr(text, '\0', len) == NULL, SWORN_ERR_FORMAT,
                 "request JSON holds a NUL byte");
    SWORN_GUARD(check_big_ints(text, len));
    tok = json_tokener_new_ex(JSON_DEPTH);
    SWORN_ENSURE(tok != NULL, SWORN_ERR_NOMEM, "out of memory reading request JSON");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    o = json_tokener_parse_ex(tok, text, (int)len);
    if (o == NULL) {
        enum json_tokener_error e = json_tokener_get_error(tok);

        if (e == json_tokener_continue)
            sworn_err_set(SWORN_ERR_FORMAT, "request JSON: truncated");
        else
            sworn_err_set(SWORN_ERR_FORMAT, "request JSON: %s at offset %zu",
                          json_tokener_error_desc(e), json_tokener_get_parse_end(tok));
        goto fail;
    }
    /* Only white space may follow the object. */
    for (i = json_tokener_get_parse_end(tok); i < len; i++)
        SWORN_ENSURE(text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r',
                     SWORN_ERR_FORMAT, "request JSON: text after the object at offset %zu", i);
    SWORN_ENSURE(json_object_is_type(o, json_type_object), SWORN_ERR_FORMAT,
                 "request JSON: not an object");
    a = calloc(1, sizeof(*a));
    SWORN_ENSURE(a != NULL, SWORN_ERR_NOMEM, "out of memory reading request JSON");
    SWORN_GUARD(build(a, o, &m));
    SWORN_GUARD(sworn_frame_check_request(&m));
    plen = sworn__v1__authorization_request__get_packed_size(&m);
    SWORN_ENSURE(plen > 0 && plen <= SWORN_FRAME_MAX, SWORN_ERR_RANGE,
                 "request JSON: the request packs to %zu bytes, more than a frame holds", plen);
    packed = malloc(plen);
    SWORN_ENSURE(packed != NULL, SWORN_ERR_NOMEM, "out of memory reading request JSON");
    SWORN_ENSURE(sworn__v1__authorization_request__pack(&m, packed) == plen, SWORN_ERR_FORMAT,
                 "request JSON: packing failed");
    r = sworn_frame_unpack_request(packed, plen);
    if (r == NULL)
        goto fail;
    *out = r;
    free(packed);
    arena_free(a);
    free(a);
    json_object_put(o);
    json_tokener_free(tok);
    return 0;
fail:
    free(packed);
    if (a != NULL)
        arena_free(a);
    free(a);
    if (o != NULL)
        json_object_put(o);
    if (tok != NULL)
        json_tokener_free(tok);
    return -1;
}

/* --- Printing --- */

static int add(json_object *o, const char *key, json_object *v)
{
    if (v == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory printing JSON");
    if (json_object_object_add(o, key, v) != 0) {
        json_object_put(v);
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory printing JSON");
    }
    return 0;
}

static int add_str(json_object *o, const char *key, const char *s)
{
    return add(o, key, json_object_new_string(s != NULL ? s : ""));
}

static json_object *hex_obj(ProtobufCBinaryData b)
{
    char buf[2 * SWORN_FRAME_SIG_MAX + 1];

    if (b.len > SWORN_FRAME_SIG_MAX || sworn_hex_encode(b.data, b.len, buf, sizeof(buf)) != 0)
        return NULL;
    return json_object_new_string(buf);
}

static int add_hex(json_object *o, const char *key, ProtobufCBinaryData b)
{
    return add(o, key, hex_obj(b));
}

static int append(json_object *arr, json_object *v)
{
    if (v == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory printing JSON");
    if (json_object_array_add(arr, v) != 0) {
        json_object_put(v);
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory printing JSON");
    }
    return 0;
}

/* Serialise o (consumed) into a new string. */
static char *finish(json_object *o)
{
    const char *s =
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *r = s != NULL ? strdup(s) : NULL;

    json_object_put(o);
    if (r == NULL)
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory printing JSON");
    return r;
}

static int print_context(json_object *o, const Sworn__V1__Context *c)
{
    json_object *arr;
    size_t i;

    SWORN_GUARD(add_str(o, "method", c->method));
    SWORN_GUARD(add(o, "header_names", arr = json_object_new_array()));
    for (i = 0; i < c->n_header_names; i++)
        SWORN_GUARD(append(arr, json_object_new_string(c->header_names[i])));
    SWORN_GUARD(add_hex(o, "body_sha256", c->body_sha256));
    SWORN_GUARD(add(o, "covered", arr = json_object_new_array()));
    for (i = 0; i < c->n_covered; i++) {
        json_object *it = json_object_new_object();

        SWORN_GUARD(append(arr, it));
        SWORN_GUARD(add_str(it, "name", c->covered[i]->name));
        SWORN_GUARD(add_hex(it, "value_sha256", c->covered[i]->value_sha256));
    }
    SWORN_GUARD(add(o, "body_length", json_object_new_uint64(c->body_length)));
    SWORN_GUARD(add(o, "json_numbers", arr = json_object_new_array()));
    for (i = 0; i < c->n_json_numbers; i++) {
        json_object *it = json_object_new_object();

        SWORN_GUARD(append(arr, it));
        SWORN_GUARD(add_str(it, "pointer", c->json_numbers[i]->pointer));
        SWORN_GUARD(add_str(it, "value", c->json_numbers[i]->value));
    }
    SWORN_GUARD(add_hex(o, "credential_token_sha256", c->credential_token_sha256));
    if (c->mcp_session_sha256.len != 0) /* absent: empty, as in the proto */
        SWORN_GUARD(add_hex(o, "mcp_session_sha256", c->mcp_session_sha256));
    if (c->token_ceiling != NULL) {
        json_object *t = json_object_new_object();

        SWORN_GUARD(add(o, "token_ceiling", t));
        SWORN_GUARD(add_str(t, "field", c->token_ceiling->field));
        SWORN_GUARD(add(t, "tokens", json_object_new_uint64(c->token_ceiling->tokens)));
    }
    if (c->model_api != NULL && c->model_api[0] != '\0')
        SWORN_GUARD(add_str(o, "model_api", c->model_api));
    return 0;
fail:
    return -1;
}

static int print_delegation(json_object *o, const Sworn__V1__Delegation *g)
{
    json_object *arr;
    size_t i;

    SWORN_GUARD(add_str(o, "subject", g->subject));
    SWORN_GUARD(add_str(o, "issuer", g->issuer));
    SWORN_GUARD(add(o, "actors", arr = json_object_new_array()));
    for (i = 0; i < g->n_actors; i++) {
        json_object *it = json_object_new_object();

        SWORN_GUARD(append(arr, it));
        SWORN_GUARD(add_str(it, "subject", g->actors[i]->subject));
        SWORN_GUARD(add_str(it, "issuer", g->actors[i]->issuer));
    }
    if (g->may_act != NULL) {
        unsigned v = (unsigned)g->may_act->result;

        SWORN_GUARD(add_str(o, "may_act", v < 4 ? may_names[v] : "unknown"));
    }
    SWORN_GUARD(add(o, "token_sha256", arr = json_object_new_array()));
    for (i = 0; i < g->n_token_sha256; i++)
        SWORN_GUARD(append(arr, hex_obj(g->token_sha256[i])));
    SWORN_GUARD(add_str(o, "client_id", g->client_id));
    SWORN_GUARD(add(o, "audience", arr = json_object_new_array()));
    for (i = 0; i < g->n_audience; i++)
        SWORN_GUARD(append(arr, json_object_new_string(g->audience[i])));
    SWORN_GUARD(add(o, "scopes", arr = json_object_new_array()));
    for (i = 0; i < g->n_scopes; i++)
        SWORN_GUARD(append(arr, json_object_new_string(g->scopes[i])));
    SWORN_GUARD(add_str(o, "jti", g->jti));
    SWORN_GUARD(add(o, "expires_unix", json_object_new_uint64(g->expires_unix)));
    if (g->verification != NULL) {
        json_object *vo = json_object_new_object();
        unsigned r = (unsigned)g->verification->result;

        SWORN_GUARD(add(o, "verification", vo));
        SWORN_GUARD(add_str(vo, "result", r >= 1 && r <= 2 ? verification_names[r] : ""));
        SWORN_GUARD(add_str(vo, "key_id", g->verification->key_id));
        SWORN_GUARD(add_str(vo, "alg", g->verification->alg));
    }
    return 0;
fail:
    return -1;
}

char *sworn_reqjson_print_request(const Sworn__V1__AuthorizationRequest *m)
{
    json_object *o = json_object_new_object(), *sub;

    if (o == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory printing JSON");
        return NULL;
    }
    SWORN_GUARD(sworn_frame_check_request(m));
    SWORN_GUARD(add_str(o, "request_id", m->request_id));
    SWORN_GUARD(add(o, "principal", sub = json_object_new_object()));
    SWORN_GUARD(add_str(sub, "id", m->principal->id));
    SWORN_GUARD(add_str(sub, "sandbox", m->principal->sandbox));
    SWORN_GUARD(add(sub, "uid", json_object_new_uint64(m->principal->uid)));
    if (m->principal->sandbox_start_index != 0) /* absent: 0, as in the proto */
        SWORN_GUARD(add(sub, "sandbox_start_index",
                        json_object_new_uint64(m->principal->sandbox_start_index)));
    SWORN_GUARD(add_str(o, "operation", m->operation));
    SWORN_GUARD(add(o, "resource", sub = json_object_new_object()));
    SWORN_GUARD(add_str(sub, "scheme", m->resource->scheme));
    SWORN_GUARD(add_str(sub, "host", m->resource->host));
    SWORN_GUARD(add(sub, "port", json_object_new_uint64(m->resource->port)));
    SWORN_GUARD(add_str(sub, "path", m->resource->path));
    SWORN_GUARD(add_str(sub, "tool", m->resource->tool));
    if (m->resource->uri != NULL && m->resource->uri[0] != '\0') /* absent: "", as in the proto */
        SWORN_GUARD(add_str(sub, "uri", m->resource->uri));
    if (m->resource->model != NULL && m->resource->model[0] != '\0')
        SWORN_GUARD(add_str(sub, "model", m->resource->model));
    if (m->context != NULL) {
        SWORN_GUARD(add(o, "context", sub = json_object_new_object()));
        SWORN_GUARD(print_context(sub, m->context));
    }
    if (m->delegation != NULL) {
        SWORN_GUARD(add(o, "delegation", sub = json_object_new_object()));
        SWORN_GUARD(print_delegation(sub, m->delegation));
    }
    if (m->refusal != NULL) {
        SWORN_GUARD(add(o, "refusal", sub = json_object_new_object()));
        SWORN_GUARD(add(sub, "status", json_object_new_uint64(m->refusal->status)));
        SWORN_GUARD(add_str(sub, "reason", m->refusal->reason));
        SWORN_GUARD(add_hex(sub, "head_sha256", m->refusal->head_sha256));
    }
    SWORN_GUARD(add(o, "time_unix_ms", json_object_new_uint64(m->time_unix_ms)));
    return finish(o);
fail:
    json_object_put(o);
    return NULL;
}

char *sworn_reqjson_print_decision(const Sworn__V1__Decision *m)
{
    json_object *o = json_object_new_object(), *sub;

    if (o == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory printing JSON");
        return NULL;
    }
    SWORN_GUARD(sworn_frame_check_decision(m));
    SWORN_GUARD(add_str(o, "request_id", m->request_id));
    SWORN_GUARD(add_str(o, "effect", sworn_frame_effect_name(m->effect)));
    SWORN_GUARD(add_str(o, "rule_id", m->rule_id));
    SWORN_GUARD(add_str(o, "reason", m->reason));
    SWORN_GUARD(add(o, "log_index", json_object_new_uint64(m->log_index)));
    SWORN_GUARD(add_hex(o, "entry_hash", m->entry_hash));
    if (m->receipt != NULL) {
        SWORN_GUARD(add(o, "receipt", sub = json_object_new_object()));
        SWORN_GUARD(add_hex(sub, "key_id", m->receipt->key_id));
        SWORN_GUARD(add_hex(sub, "signature", m->receipt->signature));
        SWORN_GUARD(add(sub, "alg", json_object_new_uint64(m->receipt->alg)));
    }
    if (m->credential != NULL) {
        /* Never the value: a printed decision ends up in terminals, logs and bug reports. */
        SWORN_GUARD(add(o, "credential", sub = json_object_new_object()));
        SWORN_GUARD(add_str(sub, "id", m->credential->id));
        SWORN_GUARD(add_str(sub, "header_name", m->credential->header_name));
        SWORN_GUARD(add_str(sub, "query_name", m->credential->query_name));
    }
    return finish(o);
fail:
    json_object_put(o);
    return NULL;
}
