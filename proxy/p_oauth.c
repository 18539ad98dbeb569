/*
 * p_oauth.c -- OAuth token endpoints: configuration and the token response's swap (p_oauth.h).
 */
#define _GNU_SOURCE
#include "p_oauth.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "err.h"
#include "p_form.h"
#include "p_http.h"
#include "p_json.h"
#include "wipe.h"
#include "yamldoc.h"

/* --- Configuration. --- */

int sworn_poauth_conf_read(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *root,
                           struct sworn_poauth_conf *out)
{
    static const char *const keys[] = {"token_endpoints", "response_max", NULL};
    const struct sworn_yaml_node *m = sworn_yaml_get(root, "oauth"), *seq, *n;
    uint64_t v;

    memset(out, 0, sizeof(*out));
    out->response_max = SWORN_POAUTH_RESPONSE_DEFAULT;
    if (m == NULL)
        return 0;
    if (sworn_yaml_kind(m) != SWORN_YAML_MAP)
        return sworn_yaml_error(d, m, "oauth: a mapping (token_endpoints, response_max)");
    if (sworn_yaml_only_keys(d, m, keys) != 0)
        return -1;
    seq = sworn_yaml_get(m, "token_endpoints");
    if (seq == NULL)
        return sworn_yaml_error(d, m, "missing required key \"oauth.token_endpoints\"");
    if (sworn_yaml_kind(seq) != SWORN_YAML_SEQ || sworn_yaml_len(seq) < 1 ||
        sworn_yaml_len(seq) > SWORN_POAUTH_ENDPOINTS_MAX)
        return sworn_yaml_error(d, seq, "oauth.token_endpoints: a list of 1..%u URLs",
                                SWORN_POAUTH_ENDPOINTS_MAX);
    for (size_t i = 0; i < sworn_yaml_len(seq); i++) {
        const char *s, *why = NULL;

        n = sworn_yaml_item(seq, i);
        if (sworn_yaml_kind(n) != SWORN_YAML_SCALAR || sworn_yaml_str(d, n, &s) != 0)
            return sworn_yaml_error(d, n, "oauth.token_endpoints: each item is a URL");
        if (sworn_pdest_parse(s, &out->endpoints[i], &why) != 0)
            return sworn_yaml_error(d, n, "oauth.token_endpoints: %s", why);
        for (size_t k = 0; k < i; k++)
            if (memcmp(&out->endpoints[k], &out->endpoints[i], sizeof(out->endpoints[i])) == 0)
                return sworn_yaml_error(d, n, "oauth.token_endpoints: item %zu repeats item %zu",
                                        i + 1, k + 1);
        out->n = i + 1;
    }
    n = sworn_yaml_get(m, "response_max");
    if (n != NULL) {
        if (sworn_yaml_u64(d, n, SWORN_POAUTH_RESPONSE_MIN, SWORN_POAUTH_RESPONSE_MAX, &v) != 0)
            return sworn_yaml_error(d, n, "oauth.response_max: a number of bytes from %u to %u",
                                    SWORN_POAUTH_RESPONSE_MIN, SWORN_POAUTH_RESPONSE_MAX);
        out->response_max = (size_t)v;
    }
    return 0;
}

int sworn_poauth_is_endpoint(const struct sworn_poauth_conf *c, const struct sworn_resource *r)
{
    /* The wide reading (p_dest.h): a token answer to "/OAuth/Token" must be intercepted too. */
    return c->n > 0 && sworn_pdest_find_wide(c->endpoints, c->n, r) != NULL;
}

/* --- Helpers. --- */

/* Does h[0..n) hold s (ASCII case aside)? */
static int holds_nocase(const uint8_t *h, size_t n, const char *s)
{
    size_t k = strlen(s);

    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (strncasecmp((const char *)h + i, s, k) == 0)
            return 1;
    return 0;
}

static int token_name(const char *s, size_t n)
{
    return (n == 12 && memcmp(s, "access_token", 12) == 0) ||
           (n == 13 && memcmp(s, "refresh_token", 13) == 0) ||
           (n == 8 && memcmp(s, "id_token", 8) == 0);
}

/* Does the tree hold a member named like a token below depth `from` (1: the top level's own
 * members count; 2: only nested ones)? */
static int names_token(struct json_object *o, int depth, int from)
{
    if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            if (names_token(json_object_array_get_idx(o, i), depth + 1, from))
                return 1;
        return 0;
    }
    if (!json_object_is_type(o, json_type_object))
        return 0;
    json_object_object_foreach(o, k, v)
    {
        if (depth >= from && token_name(k, strlen(k)))
            return 1;
        if (names_token(v, depth + 1, from))
            return 1;
    }
    return 0;
}

/* Copy a JSON string member's value (the whole length: it may hold U+0000). 0, 1 refused, -1. */
static int take_string(struct json_object *root, const char *name, int required, uint8_t **out,
                       size_t *len, const char **why, const char *bad)
{
    struct json_object *v;
    int n;

    *out = NULL;
    *len = 0;
    if (!json_object_object_get_ex(root, name, &v)) {
        if (required) {
            *why = bad;
            return 1;
        }
        return 0;
    }
    n = json_object_is_type(v, json_type_string) ? json_object_get_string_len(v) : 0;
    if (n <= 0 || (size_t)n > SWORN_POAUTH_TOKEN_MAX) {
        *why = bad;
        return 1;
    }
    *out = malloc((size_t)n);
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    memcpy(*out, json_object_get_string(v), (size_t)n);
    *len = (size_t)n;
    return 0;
}

/*
 * The top-level members of a JSON object text that p_json accepted: for each, the decoded name
 * (up to 31 bytes; longer names are never ours) and the span of its value.
 */
static size_t skip_ws(const uint8_t *p, size_t n, size_t i)
{
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    return i;
}

/* i at a '"': the index after the closing quote. */
static size_t skip_string(const uint8_t *p, size_t n, size_t i)
{
    for (i++; i < n && p[i] != '"'; i++)
        if (p[i] == '\\')
            i++;
    return i < n ? i + 1 : n;
}

static size_t skip_value(const uint8_t *p, size_t n, size_t i)
{
    size_t depth = 0;

    if (i < n && p[i] == '"')
        return skip_string(p, n, i);
    while (i < n) {
        if (p[i] == '"') {
            i = skip_string(p, n, i);
            continue;
        }
        if (p[i] == '{' || p[i] == '[')
            depth++;
        else if (p[i] == '}' || p[i] == ']') {
            if (depth == 0)
                return i;
            if (--depth == 0)
                return i + 1;
        } else if (depth == 0 &&
                   (p[i] == ',' || p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
            return i;
        i++;
    }
    return i;
}

static int hex4(const uint8_t *p, unsigned *out)
{
    *out = 0;
    for (int k = 0; k < 4; k++) {
        uint8_t c = p[k];
        unsigned v = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (v > 15)
            return -1;
        *out = *out * 16 + v;
    }
    return 0;
}

/* Decode the JSON string literal p[s..e) (quotes included) into out (cap - 1 bytes and a NUL).
 * Returns the length, or -1 when it is longer (never one of ours). Non-ASCII escapes decode to
 * a byte that matches no ASCII name, which is all the comparison needs. */
static long decode_name(const uint8_t *p, size_t s, size_t e, char *out, size_t cap)
{
    size_t o = 0;

    for (size_t i = s + 1; i + 1 < e; i++) {
        uint8_t c = p[i];

        if (c == '\\' && i + 2 < e) {
            uint8_t x = p[++i];
            unsigned u;

            if (x == 'u' && i + 4 < e && hex4(p + i + 1, &u) == 0) {
                c = u < 0x80 ? (uint8_t)u : 0x80;
                i += 4;
            } else {
                c = x == 'n'   ? '\n'
                    : x == 't' ? '\t'
                    : x == 'r' ? '\r'
                    : x == 'b' ? '\b'
                    : x == 'f' ? '\f'
                               : x;
            }
        }
        if (o + 1 >= cap)
            return -1;
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return (long)o;
}

/* The spans of the top-level string values named access_token and refresh_token. */
static void value_spans(const uint8_t *p, size_t n, struct sworn_poauth_tokens *t)
{
    size_t i = skip_ws(p, n, 0);

    if (i >= n || p[i] != '{')
        return;
    i++;
    for (;;) {
        size_t ks, ke, vs, ve;
        char name[32];
        long nl;

        i = skip_ws(p, n, i);
        if (i >= n || p[i] != '"')
            return;
        ks = i;
        ke = skip_string(p, n, i);
        i = skip_ws(p, n, ke);
        if (i >= n || p[i] != ':')
            return;
        vs = skip_ws(p, n, i + 1);
        ve = skip_value(p, n, vs);
        nl = decode_name(p, ks, ke, name, sizeof(name));
        if (nl == 12 && strcmp(name, "access_token") == 0) {
            t->access_off = vs;
            t->access_span = ve - vs;
        } else if (nl == 13 && strcmp(name, "refresh_token") == 0) {
            t->refresh_off = vs;
            t->refresh_span = ve - vs;
        }
        i = skip_ws(p, n, ve);
        if (i >= n || p[i] != ',')
            return;
        i++;
    }
}

/* Is the media type of ctype application/json or a "+json" type? */
static int is_json_type(const char *v, size_t n)
{
    return sworn_http_media_type_is(v, n, "application/json") ||
           sworn_http_media_type_is(v, n, "application/+json");
}

static int check_type(const uint8_t *type, size_t len, const char **why)
{
    if (len != 6 || strncasecmp((const char *)type, "bearer", 6) != 0) {
        *why = "the token response's token_type is not Bearer";
        return 1;
    }
    return 0;
}

/* --- Reading a token response. --- */

static int read_json(const uint8_t *body, size_t len, struct sworn_poauth_tokens *t,
                     const char **why)
{
    struct json_object *root = NULL;
    uint8_t *type = NULL;
    size_t type_len = 0;
    int r = sworn_pjson_parse(body, len, &root, why);

    if (r != 0)
        return r;
    r = 1;
    if (!json_object_is_type(root, json_type_object))
        *why = "the token response is not a JSON object";
    else if (names_token(root, 1, 2))
        *why = "the token response names a token below its top level";
    else if (json_object_object_get_ex(root, "id_token", NULL))
        *why = "the token response holds an id_token, which sworn does not swap";
    else if ((r = take_string(root, "access_token", 1, &t->access, &t->access_len, why,
                              "the token response's access_token is not a string of 1..16377 "
                              "bytes")) == 0 &&
             (r = take_string(root, "refresh_token", 0, &t->refresh, &t->refresh_len, why,
                              "the token response's refresh_token is not a string of 1..16377 "
                              "bytes")) == 0 &&
             (r = take_string(root, "token_type", 1, &type, &type_len, why,
                              "the token response's token_type is not Bearer")) == 0)
        r = check_type(type, type_len, why);
    free(type);
    json_object_put(root);
    if (r != 0)
        return r;
    value_spans(body, len, t);
    if (t->access_span == 0 || (t->refresh != NULL && t->refresh_span == 0)) {
        *why = "the token response's tokens cannot be found in its text";
        return 1;
    }
    return 0;
}

/* A form parameter's decoded value, copied. 0, 1 refused (bad), -1. */
static int take_param(const uint8_t *body, const struct sworn_pform *f, const char *name,
                      int required, uint8_t **out, size_t *len, const char **why, const char *bad)
{
    const struct sworn_pform_param *p = sworn_pform_find(f, name);
    long n;

    *out = NULL;
    *len = 0;
    if (p == NULL) {
        if (required) {
            *why = bad;
            return 1;
        }
        return 0;
    }
    if (!p->has_value || p->value_len == 0) {
        *why = bad;
        return 1;
    }
    *out = malloc(p->value_len);
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    n = sworn_pform_value(body, p, *out, p->value_len);
    if (n <= 0 || (size_t)n > SWORN_POAUTH_TOKEN_MAX) {
        *why = bad;
        return 1;
    }
    *len = (size_t)n;
    return 0;
}

static int read_form(const uint8_t *body, size_t len, struct sworn_poauth_tokens *t,
                     const char **why)
{
    struct sworn_pform *f = malloc(sizeof(*f));
    uint8_t *type = NULL;
    size_t type_len = 0;
    int r;

    if (f == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    t->form = 1;
    r = sworn_pform_parse(body, len, f, why);
    if (r == 0 && sworn_pform_find(f, "id_token") != NULL) {
        *why = "the token response holds an id_token, which sworn does not swap";
        r = 1;
    }
    if (r == 0)
        r = take_param(body, f, "access_token", 1, &t->access, &t->access_len, why,
                       "the token response's access_token is not 1..16377 bytes");
    if (r == 0)
        r = take_param(body, f, "refresh_token", 0, &t->refresh, &t->refresh_len, why,
                       "the token response's refresh_token is not 1..16377 bytes");
    if (r == 0)
        r = take_param(body, f, "token_type", 1, &type, &type_len, why,
                       "the token response's token_type is not Bearer");
    if (r == 0)
        r = check_type(type, type_len, why);
    free(type);
    free(f);
    return r;
}

int sworn_poauth_read(const uint8_t *body, size_t len, const char *ctype, size_t ctype_len,
                      struct sworn_poauth_tokens *t, const char **why)
{
    memset(t, 0, sizeof(*t));
    if (ctype != NULL && is_json_type(ctype, ctype_len))
        return read_json(body, len, t, why);
    if (ctype != NULL && sworn_pform_is_form_type(ctype, ctype_len))
        return read_form(body, len, t, why);
    *why = "the token response is neither JSON nor a form (its Content-Type)";
    return 1;
}

void sworn_poauth_tokens_wipe(struct sworn_poauth_tokens *t)
{
    if (t->access != NULL) {
        sworn_memzero(t->access, t->access_len);
        free(t->access);
    }
    if (t->refresh != NULL) {
        sworn_memzero(t->refresh, t->refresh_len);
        free(t->refresh);
    }
    memset(t, 0, sizeof(*t));
}

/* --- The swap. --- */

static int holds(const uint8_t *h, size_t n, const uint8_t *s, size_t k)
{
    return k > 0 && memmem(h, n, s, k) != NULL;
}

/* JSON: replace the spans (in text order) with string literals of the symbolic tokens. */
static uint8_t *swap_json(const uint8_t *body, size_t len, const struct sworn_poauth_tokens *t,
                          const char *sa, const char *sr, size_t *out_len)
{
    struct {
        size_t off, span;
        const char *sym;
    } r[2] = {{t->access_off, t->access_span, sa}, {t->refresh_off, t->refresh_span, sr}};
    size_t nr = t->refresh != NULL ? 2 : 1, cap = len + strlen(sa) + 2 + 1, o = 0, at = 0;
    uint8_t *out;

    if (nr == 2)
        cap += strlen(sr) + 2;
    if (nr == 2 && r[1].off < r[0].off) {
        r[0].off = t->refresh_off, r[0].span = t->refresh_span, r[0].sym = sr;
        r[1].off = t->access_off, r[1].span = t->access_span, r[1].sym = sa;
    }
    out = malloc(cap);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < nr; i++) {
        memcpy(out + o, body + at, r[i].off - at);
        o += r[i].off - at;
        out[o++] = '"';
        memcpy(out + o, r[i].sym, strlen(r[i].sym));
        o += strlen(r[i].sym);
        out[o++] = '"';
        at = r[i].off + r[i].span;
    }
    memcpy(out + o, body + at, len - at);
    *out_len = o + len - at;
    return out;
}

static uint8_t *swap_form(const uint8_t *body, size_t len, const struct sworn_poauth_tokens *t,
                          const char *sa, const char *sr, size_t *out_len)
{
    struct sworn_pform *f = malloc(sizeof(*f));
    uint8_t *one = NULL, *two = NULL;
    size_t one_len = 0;
    const char *why = NULL;

    if (f == NULL)
        return NULL;
    if (sworn_pform_parse(body, len, f, &why) == 0)
        one = sworn_pform_rewrite(body, len, f, "access_token", (const uint8_t *)sa, strlen(sa),
                                  &one_len);
    if (one != NULL && t->refresh == NULL) {
        free(f);
        *out_len = one_len;
        return one;
    }
    if (one != NULL && sworn_pform_parse(one, one_len, f, &why) == 0)
        two = sworn_pform_rewrite(one, one_len, f, "refresh_token", (const uint8_t *)sr, strlen(sr),
                                  out_len);
    free(one);
    free(f);
    return two;
}

/* Does a decoded JSON string (a member name or a value, at any depth) hold either token? */
static int json_holds(struct json_object *o, const struct sworn_poauth_tokens *t)
{
    if (json_object_is_type(o, json_type_string)) {
        const uint8_t *s = (const uint8_t *)json_object_get_string(o);
        size_t n = (size_t)json_object_get_string_len(o);

        return holds(s, n, t->access, t->access_len) || holds(s, n, t->refresh, t->refresh_len);
    }
    if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            if (json_holds(json_object_array_get_idx(o, i), t))
                return 1;
        return 0;
    }
    if (!json_object_is_type(o, json_type_object))
        return 0;
    json_object_object_foreach(o, k, v)
    {
        if (holds((const uint8_t *)k, strlen(k), t->access, t->access_len) ||
            holds((const uint8_t *)k, strlen(k), t->refresh, t->refresh_len) || json_holds(v, t))
            return 1;
    }
    return 0;
}

/*
 * Does the swapped body hold either real token as the agent reads it: its strings unescaped
 * (JSON: "\u0041T-..." is "AT-..."), its names and values percent-decoded (a form)? Red team
 * of issue 16 (B): a search of the bytes alone let an escaped second copy through. 1 (or when
 * the swapped body no longer parses: it is refused all the same), 0, -1 out of memory.
 */
static int decoded_holds(const uint8_t *b, size_t n, const struct sworn_poauth_tokens *t)
{
    if (!t->form) {
        struct json_object *root = NULL;
        const char *ignored = NULL;
        int r;

        if (sworn_pjson_parse(b, n, &root, &ignored) != 0 || root == NULL)
            return 1;
        r = json_holds(root, t);
        json_object_put(root);
        return r;
    }
    {
        struct sworn_pform *f = malloc(sizeof(*f));
        uint8_t *v = malloc(n + 1);
        const char *ignored = NULL;
        int r = 0;

        if (f == NULL || v == NULL) {
            free(f);
            free(v);
            return -1;
        }
        if (sworn_pform_parse(b, n, f, &ignored) != 0)
            r = 1;
        for (size_t i = 0; r == 0 && i < f->n; i++) {
            long k = sworn_pform_value(b, &f->p[i], v, n + 1);
            const uint8_t *nm = (const uint8_t *)f->p[i].name;

            if (k < 0 || holds(nm, strlen(f->p[i].name), t->access, t->access_len) ||
                holds(nm, strlen(f->p[i].name), t->refresh, t->refresh_len) ||
                holds(v, (size_t)k, t->access, t->access_len) ||
                holds(v, (size_t)k, t->refresh, t->refresh_len))
                r = 1;
        }
        sworn_memzero(v, n + 1);
        free(v);
        free(f);
        return r;
    }
}

int sworn_poauth_swap(const uint8_t *body, size_t len, const struct sworn_poauth_tokens *t,
                      const char *sym_access, const char *sym_refresh, uint8_t **out,
                      size_t *out_len, const char **why)
{
    int dh;

    *out = NULL;
    *out_len = 0;
    if (t->refresh != NULL && sym_refresh == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "oauth: no symbolic refresh token");
    *out = t->form ? swap_form(body, len, t, sym_access, sym_refresh, out_len)
                   : swap_json(body, len, t, sym_access, sym_refresh, out_len);
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    dh = decoded_holds(*out, *out_len, t);
    if (dh < 0) {
        free(*out);
        *out = NULL;
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    }
    if (dh > 0 || holds(*out, *out_len, t->access, t->access_len) ||
        holds(*out, *out_len, t->refresh, t->refresh_len)) {
        free(*out);
        *out = NULL;
        *why = "the token response holds a token a second time";
        return 1;
    }
    return 0;
}

/* --- Answers that are not swapped. --- */

int sworn_poauth_untouched_ok(const uint8_t *body, size_t len, const char **why)
{
    struct json_object *root = NULL;
    const char *ignored = NULL;
    struct sworn_pform *f;
    int found = 0;

    /* A JSON or form body is judged by its member names, decoded (an error_description may
     * well say "the refresh_token expired"); any other body by its bytes. */
    if (len > 0 && sworn_pjson_parse(body, len, &root, &ignored) == 0) {
        found = root != NULL && names_token(root, 1, 1);
        json_object_put(root);
    } else {
        f = malloc(sizeof(*f));
        if (f == NULL)
            return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        if (len > 0 && sworn_pform_parse(body, len, f, &ignored) == 0) {
            for (size_t i = 0; i < f->n; i++)
                if (token_name(f->p[i].name, strlen(f->p[i].name)))
                    found = 1;
        } else {
            found =
                holds_nocase(body, len, "access_token") || holds_nocase(body, len, "refresh_token");
        }
        free(f);
    }
    if (found) {
        *why = "the token endpoint's answer carries a token that sworn does not swap";
        return 1;
    }
    return 0;
}

int sworn_poauth_head_refused(const struct sworn_http_response *rs,
                              const struct sworn_poauth_tokens *tokens, const char **why)
{
    if (rs->framing == SWORN_HTTP_UNTIL_CLOSE) {
        *why = "the token endpoint's answer has no length (read until close)";
        return 1;
    }
    /* The status line's reason phrase reaches the agent too (red team of issue 16, B). */
    if (rs->reason != NULL &&
        (holds_nocase((const uint8_t *)rs->reason, rs->reason_len, "access_token") ||
         holds_nocase((const uint8_t *)rs->reason, rs->reason_len, "refresh_token") ||
         (tokens != NULL &&
          (holds((const uint8_t *)rs->reason, rs->reason_len, tokens->access, tokens->access_len) ||
           holds((const uint8_t *)rs->reason, rs->reason_len, tokens->refresh,
                 tokens->refresh_len))))) {
        *why = "the status line of the token endpoint's answer carries a token";
        return 1;
    }
    for (size_t i = 0; i < rs->nfields; i++) {
        const struct sworn_http_field *f = &rs->fields[i];
        const uint8_t *v = (const uint8_t *)f->value;

        if ((f->name_len == 10 && strncasecmp(f->name, "set-cookie", 10) == 0) ||
            (f->name_len == 11 && strncasecmp(f->name, "set-cookie2", 11) == 0)) {
            *why = "the token endpoint's answer sets a cookie";
            return 1;
        }
        if (holds_nocase(v, f->value_len, "access_token") ||
            holds_nocase(v, f->value_len, "refresh_token") ||
            (tokens != NULL && (holds(v, f->value_len, tokens->access, tokens->access_len) ||
                                holds(v, f->value_len, tokens->refresh, tokens->refresh_len)))) {
            *why = "a header of the token endpoint's answer carries a token";
            return 1;
        }
        /* A field's name reaches the agent as well (red team of issue 16, B). */
        if (tokens != NULL &&
            (holds((const uint8_t *)f->name, f->name_len, tokens->access, tokens->access_len) ||
             holds((const uint8_t *)f->name, f->name_len, tokens->refresh, tokens->refresh_len))) {
            *why = "a header of the token endpoint's answer carries a token";
            return 1;
        }
    }
    return 0;
}
