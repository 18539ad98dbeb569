/*
 * sig_base.c -- RFC 9421 signature bases and sworn's profile of them (sig_base.h).
 *
 * libc only: the verifier compiles this file in its own build.
 */
#include "sig_base.h"

#include <stdio.h>
#include <string.h>

#define SF_INT_MAX 999999999999999LL /* RFC 8941 section 3.3.1: at most 15 digits */

/* A growing text in a fixed buffer; overflow sticks. */
struct out {
    char *p;
    size_t cap, len;
    int full;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->full || n > o->cap - o->len) {
        o->full = 1;
        return;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static int lcalpha(char c)
{
    return c >= 'a' && c <= 'z';
}

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

/* RFC 8941 sf-string body without escapes: printable ASCII other than '"' and '\\'. */
static int plain_string(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
            return 0;
    }
    return 1;
}

/* An RFC 8941 key: lcalpha or '*', then lcalpha, digits, '_', '-', '.', '*'. */
static size_t key_len(const char *s)
{
    size_t i = 0;

    if (!lcalpha(s[0]) && s[0] != '*')
        return 0;
    while (lcalpha(s[i]) || digit(s[i]) || s[i] == '_' || s[i] == '-' || s[i] == '.' || s[i] == '*')
        i++;
    return i;
}

/* A quoted plain string at s: its length including both quotes, or 0. */
static size_t quoted_len(const char *s)
{
    const char *end;

    if (s[0] != '"')
        return 0;
    end = strchr(s + 1, '"');
    if (end == NULL || !plain_string(s + 1, (size_t)(end - s - 1)))
        return 0;
    return (size_t)(end - s) + 1;
}

/*
 * A serialized component identifier: a quoted lower-case name (RFC 9421 section 2: field names
 * are lower-cased; derived names start with '@'), then any ";key=\"value\"" parameters.
 */
static int valid_id(const char *id)
{
    size_t n = quoted_len(id), i;

    if (n < 3)
        return 0;
    for (i = 1; i + 1 < n; i++) {
        char c = id[i];

        if (!(lcalpha(c) || digit(c) || c == '@' || c == '-' || c == '_' || c == '.'))
            return 0;
    }
    i = n;
    while (id[i] != '\0') {
        size_t k, q;

        if (id[i] != ';')
            return 0;
        i++;
        if ((k = key_len(id + i)) == 0)
            return 0;
        i += k;
        if (id[i] != '=') /* a bare key (a boolean true) is written without a value */
            continue;
        i++;
        if ((q = quoted_len(id + i)) == 0)
            return 0;
        i += q;
    }
    return 1;
}

static int known_param(const char *name, int *is_int)
{
    static const char *const ints[] = {"created", "expires"};
    static const char *const strs[] = {"nonce", "alg", "keyid", "tag"};

    for (size_t i = 0; i < 2; i++)
        if (strcmp(name, ints[i]) == 0)
            return *is_int = 1, 1;
    for (size_t i = 0; i < 4; i++)
        if (strcmp(name, strs[i]) == 0)
            return *is_int = 0, 1;
    return 0;
}

int sworn_sigbase_params_text(const struct sworn_sigbase_item *items, size_t n,
                              const struct sworn_sigbase_param *params, size_t np, char *out,
                              size_t cap, size_t *len, const char **why)
{
    struct out o = {out, cap > 0 ? cap - 1 : 0, 0, 0};

    if (cap == 0)
        return *why = "no room for the signature parameters", -1;
    if (n > SWORN_SIGBASE_COMPONENTS_MAX)
        return *why = "too many covered components", -1;
    puts_(&o, "(");
    for (size_t i = 0; i < n; i++) {
        if (items[i].id == NULL || !valid_id(items[i].id))
            return *why = "a component identifier is not a lower-case sf-string", -1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(items[i].id, items[j].id) == 0) /* RFC 9421 section 2.5 */
                return *why = "a component is covered twice", -1;
        if (i > 0)
            puts_(&o, " ");
        puts_(&o, items[i].id);
    }
    puts_(&o, ")");
    for (size_t i = 0; i < np; i++) {
        int is_int = 0;
        char num[24];

        if (params[i].name == NULL || !known_param(params[i].name, &is_int))
            return *why = "an unknown signature parameter", -1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(params[i].name, params[j].name) == 0)
                return *why = "a signature parameter is given twice", -1;
        puts_(&o, ";");
        puts_(&o, params[i].name);
        puts_(&o, "=");
        if (is_int) {
            if (params[i].ival < 0 || params[i].ival > SF_INT_MAX)
                return *why = "an integer signature parameter is out of range", -1;
            snprintf(num, sizeof(num), "%lld", (long long)params[i].ival);
            puts_(&o, num);
        } else {
            if (params[i].sval == NULL || !plain_string(params[i].sval, strlen(params[i].sval)))
                return *why = "a string signature parameter is not printable ASCII without "
                              "quotes or backslashes",
                       -1;
            puts_(&o, "\"");
            puts_(&o, params[i].sval);
            puts_(&o, "\"");
        }
    }
    if (o.full || o.len > SWORN_SIGBASE_PARAMS_TEXT_MAX)
        return *why = "the signature parameters are too long", -1;
    out[o.len] = '\0';
    *len = o.len;
    return 0;
}

int sworn_sigbase_build(const struct sworn_sigbase_item *items, size_t n, const char *params_text,
                        size_t params_len, uint8_t *base, size_t cap, size_t *len, const char **why)
{
    struct out o = {(char *)base, cap < SWORN_SIGBASE_MAX ? cap : SWORN_SIGBASE_MAX, 0, 0};

    if (n > SWORN_SIGBASE_COMPONENTS_MAX)
        return *why = "too many covered components", -1;
    if (params_len == 0 || params_text[0] != '(' || params_len > SWORN_SIGBASE_PARAMS_TEXT_MAX)
        return *why = "the signature parameters are not an inner list", -1;
    for (size_t i = 0; i < params_len; i++) {
        unsigned char c = (unsigned char)params_text[i];

        if (c < 0x20 || c > 0x7e)
            return *why = "the signature parameters are not printable ASCII", -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (items[i].id == NULL || !valid_id(items[i].id))
            return *why = "a component identifier is not a lower-case sf-string", -1;
        /* RFC 9421 section 2.5: a value with a newline fails; we take printable ASCII only. */
        for (size_t k = 0; k < items[i].value_len; k++) {
            unsigned char c = (unsigned char)items[i].value[k];

            if (c < 0x20 || c > 0x7e)
                return *why = "a component value is not printable ASCII", -1;
        }
        puts_(&o, items[i].id);
        puts_(&o, ": ");
        put(&o, items[i].value, items[i].value_len);
        puts_(&o, "\n");
    }
    puts_(&o, "\"@signature-params\": ");
    put(&o, params_text, params_len);
    if (o.full)
        return *why = "the signature base is too long", -1;
    *len = o.len;
    return 0;
}

int sworn_sigbase_check_shape(const uint8_t *msg, size_t len, const char **why)
{
    static const char last[] = "\"@signature-params\": ";
    size_t line = 0;

    if (len < 2 || len > SWORN_SIGBASE_MAX)
        return *why = "an http-message base is 2..16384 bytes", -1;
    if (msg[0] != '"' || msg[1] != '@')
        return *why = "an http-message base starts with \"@", -1;
    if (msg[len - 1] == '\n')
        return *why = "an http-message base does not end with LF", -1;
    for (size_t i = 0; i < len; i++) {
        if (msg[i] == 0 || msg[i] == '\r' || msg[i] == 0xff)
            return *why = "an http-message base holds no NUL, CR or 0xFF byte", -1;
        if (msg[i] == '\n')
            line = i + 1;
    }
    if (line == 0 || len - line < sizeof(last) - 1 ||
        memcmp(msg + line, last, sizeof(last) - 1) != 0)
        return *why = "the last line of an http-message base is its \"@signature-params\"", -1;
    return 0;
}

/* --- sworn's profile ------------------------------------------------------------------------ */

size_t sworn_httpsig_base64(const uint8_t *in, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0, i = 0;

    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];

        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = a[(v >> 6) & 63];
        out[o++] = a[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0);

        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = i + 1 < n ? a[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    return o;
}

void sworn_httpsig_content_digest(const uint8_t sha256[32], char out[64])
{
    memcpy(out, "sha-256=:", 9);
    sworn_httpsig_base64(sha256, 32, out + 9); /* 44 characters */
    memcpy(out + 53, ":", 2);
}

void sworn_httpsig_entry_value(const uint8_t leaf[32], char out[64])
{
    out[0] = ':';
    sworn_httpsig_base64(leaf, 32, out + 1);
    memcpy(out + 45, ":", 2);
}

int sworn_httpsig_applies(const char *scheme, const char *method)
{
    static const char *const schemes[] = {"http", "https", "ws", "wss"};

    if (scheme == NULL || method == NULL || method[0] == '\0')
        return 0;
    for (size_t i = 0; i < 4; i++)
        if (strcmp(scheme, schemes[i]) == 0)
            return 1;
    return 0;
}

static unsigned default_port(const char *scheme)
{
    return strcmp(scheme, "https") == 0 || strcmp(scheme, "wss") == 0 ? 443 : 80;
}

static int hex_keyid(const char *k)
{
    size_t i = 0;

    for (; k[i] != '\0'; i++)
        if (!digit(k[i]) && !(k[i] >= 'a' && k[i] <= 'f'))
            return 0;
    return i == SWORN_HTTPSIG_KEYID_HEX;
}

int sworn_httpsig_base(const struct sworn_httpsig_request *r, int64_t created,
                       const char *keyid_hex, uint8_t *base, size_t cap, size_t *base_len,
                       char *params, size_t params_cap, size_t *params_len, const char **why)
{
    /* host (at most 255) ':' port */
    char authority[300], query[SWORN_SIGBASE_MAX], digest[64], entry[64];
    struct sworn_sigbase_item items[6];
    struct sworn_sigbase_param ps[4] = {{"created", created, NULL},
                                        {"keyid", 0, keyid_hex},
                                        {"alg", 0, SWORN_HTTPSIG_ALG},
                                        {"tag", 0, SWORN_HTTPSIG_TAG}};
    const char *q;
    size_t n = 0, path_len, qlen;

    if (r->method == NULL || r->scheme == NULL || r->host == NULL || r->path == NULL ||
        r->leaf == NULL || !sworn_httpsig_applies(r->scheme, r->method))
        return *why = "the request has no method or no http, https, ws or wss resource", -1;
    if (r->port < 1 || r->port > 65535 || r->host[0] == '\0' || strlen(r->host) > 255)
        return *why = "the request's host or port is out of range", -1;
    if (keyid_hex == NULL || !hex_keyid(keyid_hex))
        return *why = "the key id is not 64 lower-case hex digits", -1;
    if (r->port == default_port(r->scheme))
        snprintf(authority, sizeof(authority), "%s", r->host);
    else
        snprintf(authority, sizeof(authority), "%s:%u", r->host, r->port);
    /* RFC 9421 section 2.2.6 and 2.2.7: the path without its query ("/" when empty), and the
     * query with its leading '?' ("?" alone when there is none). */
    q = strchr(r->path, '?');
    path_len = q != NULL ? (size_t)(q - r->path) : strlen(r->path);
    qlen = q != NULL ? strlen(q) : 0;
    if (qlen >= sizeof(query))
        return *why = "the signature base is too long", -1;
    if (q != NULL)
        memcpy(query, q, qlen + 1);
    else
        memcpy(query, "?", 2), qlen = 1;
    items[n++] = (struct sworn_sigbase_item){"\"@method\"", r->method, strlen(r->method)};
    items[n++] = (struct sworn_sigbase_item){"\"@authority\"", authority, strlen(authority)};
    items[n++] = path_len > 0 ? (struct sworn_sigbase_item){"\"@path\"", r->path, path_len}
                              : (struct sworn_sigbase_item){"\"@path\"", "/", 1};
    items[n++] = (struct sworn_sigbase_item){"\"@query\"", query, qlen};
    if (r->body_sha256 != NULL) {
        sworn_httpsig_content_digest(r->body_sha256, digest);
        items[n++] = (struct sworn_sigbase_item){"\"content-digest\"", digest, strlen(digest)};
    }
    sworn_httpsig_entry_value(r->leaf, entry);
    items[n++] = (struct sworn_sigbase_item){"\"sworn-entry\"", entry, strlen(entry)};
    if (sworn_sigbase_params_text(items, n, ps, 4, params, params_cap, params_len, why) < 0)
        return -1;
    return sworn_sigbase_build(items, n, params, *params_len, base, cap, base_len, why);
}

/* The value of line "<name>: <value>" at *p (up to end), which must start with name: its
 * start and length, *p moved past its LF. 0, or -1. */
static int take_line(const char **p, const char *end, const char *name, const char **v,
                     size_t *vlen)
{
    size_t n = strlen(name);
    const char *lf;

    if ((size_t)(end - *p) < n + 2 || memcmp(*p, name, n) != 0 || (*p)[n] != ':' ||
        (*p)[n + 1] != ' ')
        return -1;
    *v = *p + n + 2;
    lf = memchr(*v, '\n', (size_t)(end - *v));
    if (lf == NULL)
        return -1;
    *vlen = (size_t)(lf - *v);
    for (size_t i = 0; i < *vlen; i++)
        if ((unsigned char)(*v)[i] < 0x20 || (unsigned char)(*v)[i] > 0x7e)
            return -1;
    *p = lf + 1;
    return *vlen > 0 ? 0 : -1;
}

static int b64_sized(const char *v, size_t n, const char *prefix)
{
    size_t p = strlen(prefix);

    if (n != p + 45 || memcmp(v, prefix, p) != 0 || v[n - 1] != ':' || v[n - 2] != '=')
        return 0;
    for (size_t i = p; i < n - 2; i++) {
        char c = v[i];

        if (!(lcalpha(c) || digit(c) || (c >= 'A' && c <= 'Z') || c == '+' || c == '/'))
            return 0;
    }
    return 1;
}

int sworn_httpsig_check_profile(const uint8_t *msg, size_t len, const char *keyid_hex,
                                const char **why)
{
    const char *p = (const char *)msg, *end = p + len, *v;
    char want[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t vlen, digits = 0;
    int body;

    if (sworn_sigbase_check_shape(msg, len, why) < 0)
        return -1;
    if (keyid_hex == NULL || !hex_keyid(keyid_hex))
        return *why = "the signer's key id is not 64 lower-case hex digits", -1;
    if (take_line(&p, end, "\"@method\"", &v, &vlen) < 0 ||
        take_line(&p, end, "\"@authority\"", &v, &vlen) < 0 ||
        take_line(&p, end, "\"@path\"", &v, &vlen) < 0 || v[0] != '/' ||
        take_line(&p, end, "\"@query\"", &v, &vlen) < 0 || v[0] != '?')
        return *why = "not sworn's base: @method, @authority, @path, @query first", -1;
    body = (size_t)(end - p) > 17 && memcmp(p, "\"content-digest\": ", 18) == 0;
    if (body && (take_line(&p, end, "\"content-digest\"", &v, &vlen) < 0 ||
                 !b64_sized(v, vlen, "sha-256=:")))
        return *why = "not sworn's base: content-digest is not sha-256=:<base64>:", -1;
    if (take_line(&p, end, "\"sworn-entry\"", &v, &vlen) < 0 || !b64_sized(v, vlen, ":"))
        return *why = "not sworn's base: sworn-entry is not :<base64 of 32 bytes>:", -1;
    /* the last line: its params, exactly sworn's */
    if ((size_t)(end - p) < 21 || memcmp(p, "\"@signature-params\": ", 21) != 0)
        return *why = "not sworn's base: no @signature-params after sworn-entry", -1;
    p += 21;
    snprintf(want, sizeof(want),
             "(\"@method\" \"@authority\" \"@path\" \"@query\" %s\"sworn-entry\");created=",
             body ? "\"content-digest\" " : "");
    if ((size_t)(end - p) < strlen(want) || memcmp(p, want, strlen(want)) != 0)
        return *why = "not sworn's base: the covered components are not sworn's", -1;
    p += strlen(want);
    while (p + digits < end && digit(p[digits]))
        digits++;
    if (digits == 0 || digits > 15 || (digits > 1 && p[0] == '0'))
        return *why = "not sworn's base: created is not a decimal sf-integer", -1;
    p += digits;
    snprintf(want, sizeof(want),
             ";keyid=\"%s\";alg=\"" SWORN_HTTPSIG_ALG "\";tag=\"" SWORN_HTTPSIG_TAG "\"",
             keyid_hex);
    if ((size_t)(end - p) != strlen(want) || memcmp(p, want, strlen(want)) != 0)
        return *why = "not sworn's base: keyid, alg or tag is not this key's sworn signature's", -1;
    return 0;
}
