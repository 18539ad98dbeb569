/*
 * p_http.c -- the strict HTTP/1.1 head parser and chunked decoder (contract in p_http.h).
 *
 * A head is read line by line: each line must end in CRLF (a LF without CR, or a CR without LF,
 * is refused wherever it is), the first line is the request (status) line, the lines after it
 * fields, and the first empty line ends the head. Each complete line is checked as soon as it is
 * there, and the incomplete last one for what can already be wrong with it (controls, obs-fold,
 * a bad byte in a field name), so garbage is refused early rather than at head_max. Meaning
 * (Host, framing, upgrades) is checked once the head is complete.
 */
#include "p_http.h"

#include <string.h>

/* The path of an absolute-form target with an empty path (RFC 9112 3.2.2: it is "/"). */
static const char slash_path[] = "/";

void sworn_http_limits_default(struct sworn_http_limits *l)
{
    l->head_max = 16384;
    l->fields_max = 100;
}

/* ---- character classes (RFC 9110 5.6.2, RFC 3986 2.3) ---- */

static int is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

static int is_alpha(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_hex(uint8_t c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hex_value(uint8_t c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c - 'A' + 10;
}

static int is_tchar(uint8_t c)
{
    return is_alpha(c) || is_digit(c) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* A byte a field value (or reason phrase) may hold: HTAB, SP, VCHAR, obs-text. */
static int is_value_byte(uint8_t c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static int is_ows(uint8_t c)
{
    return c == ' ' || c == '\t';
}

static uint8_t lower(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c - 'A' + 'a') : c;
}

/* a[0..an) equals b[0..bn) ignoring ASCII case. */
static int ci_eq(const char *a, size_t an, const char *b, size_t bn)
{
    if (an != bn)
        return 0;
    for (size_t i = 0; i < an; i++)
        if (lower((uint8_t)a[i]) != lower((uint8_t)b[i]))
            return 0;
    return 1;
}

/* a[0..an) equals the NUL-terminated lower-case word ignoring ASCII case. */
static int ci_is(const char *a, size_t an, const char *word)
{
    return ci_eq(a, an, word, strlen(word));
}

/* Whether the comma-separated list v[0..n) holds the element token[0..tn) (case-insensitive;
   OWS around elements ignored; empty elements skipped, RFC 9110 5.6.1). */
static int list_has(const char *v, size_t n, const char *token, size_t tn)
{
    size_t i = 0;

    while (i <= n) {
        size_t s = i, e;

        while (i < n && v[i] != ',')
            i++;
        e = i;
        while (s < e && is_ows((uint8_t)v[s]))
            s++;
        while (e > s && is_ows((uint8_t)v[e - 1]))
            e--;
        if (e > s && ci_eq(v + s, e - s, token, tn))
            return 1;
        i++;
    }
    return 0;
}

/* ---- public helpers ---- */

const struct sworn_http_field *sworn_http_field_find(const struct sworn_http_field *f, size_t n,
                                                     const char *name)
{
    size_t len = strlen(name);

    for (size_t i = 0; i < n; i++)
        if (ci_eq(f[i].name, f[i].name_len, name, len))
            return &f[i];
    return NULL;
}

int sworn_http_media_type_is(const char *v, size_t n, const char *type)
{
    size_t s = 0, e, k = strlen(type);

    while (s < n && (v[s] == ' ' || v[s] == '\t'))
        s++;
    e = s;
    while (e < n && v[e] != ';' && v[e] != ' ' && v[e] != '\t')
        e++;
    {
        size_t t = e;

        while (t < n && (v[t] == ' ' || v[t] == '\t'))
            t++;
        if (t != n && v[t] != ';')
            return 0;
    }
    if (k > 6 && strcmp(type + k - 6, "/+json") == 0) {
        size_t major = k - 5; /* "application/" */

        return e - s > major + 5 && ci_eq(v + s, major, type, major) &&
               ci_eq(v + e - 5, 5, "+json", 5);
    }
    return ci_eq(v + s, e - s, type, k);
}

int sworn_http_hop_by_hop(const char *name, size_t len)
{
    static const char *const names[] = {"connection",    "keep-alive",        "te",
                                        "trailer",       "transfer-encoding", "upgrade",
                                        "http2-settings"};

    if (len >= 6 && ci_eq(name, 6, "proxy-", 6))
        return 1;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (ci_is(name, len, names[i]))
            return 1;
    return 0;
}

int sworn_http_connection_lists(const struct sworn_http_field *f, size_t n, const char *name,
                                size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (ci_is(f[i].name, f[i].name_len, "connection") &&
            list_has(f[i].value, f[i].value_len, name, len))
            return 1;
    return 0;
}

/* ---- lines ---- */

enum line_result { LINE_OK, LINE_MORE, LINE_BAD };

/*
 * The line starting at pos in p[0..n). LINE_OK: it ends at *end with CRLF at p[*end..*end+2).
 * LINE_MORE: no CRLF yet; p[pos..*end) is what there is (a CR in the last byte left out).
 * LINE_BAD: a bare LF or bare CR (*why) at *end.
 */
static enum line_result next_line(const uint8_t *p, size_t n, size_t pos, size_t *end,
                                  const char **why)
{
    for (size_t i = pos; i < n; i++) {
        if (p[i] == '\n') {
            *end = i;
            *why = "a bare LF (line feed without carriage return) in the head";
            return LINE_BAD;
        }
        if (p[i] == '\r') {
            *end = i;
            if (i + 1 == n)
                return LINE_MORE;
            if (p[i + 1] != '\n') {
                *why = "a bare CR (carriage return without line feed) in the head";
                return LINE_BAD;
            }
            return LINE_OK;
        }
    }
    *end = n;
    return LINE_MORE;
}

/*
 * One field line s[0..n) (without its CRLF). partial: the line is not complete yet, so only what
 * is already wrong is refused, and nothing is written to *f. Returns 0 or -1 (*why).
 */
static int parse_field_line(const uint8_t *s, size_t n, int partial, struct sworn_http_field *f,
                            const char **why)
{
    size_t i = 0, vs, ve;

    if (n > 0 && is_ows(s[0])) {
        *why = "obs-fold (a field line starting with whitespace)";
        return -1;
    }
    while (i < n && is_tchar(s[i]))
        i++;
    if (i == n) {
        if (partial)
            return 0;
        *why = "a field line without a colon";
        return -1;
    }
    if (s[i] != ':') {
        *why = is_ows(s[i]) ? "whitespace in a field name or before its colon"
                            : "an invalid character in a field name";
        return -1;
    }
    if (i == 0) {
        *why = "an empty field name";
        return -1;
    }
    for (size_t j = i + 1; j < n; j++) {
        if (!is_value_byte(s[j])) {
            *why =
                s[j] == 0 ? "a NUL byte in a field value" : "a control character in a field value";
            return -1;
        }
    }
    if (partial)
        return 0;
    vs = i + 1;
    ve = n;
    while (vs < ve && is_ows(s[vs]))
        vs++;
    while (ve > vs && is_ows(s[ve - 1]))
        ve--;
    f->name = (const char *)s;
    f->name_len = i;
    f->value = (const char *)s + vs;
    f->value_len = ve - vs;
    return 0;
}

/* What a start line parser is given and answers: 0, or -1 with *status and *why. */
typedef int (*start_line_fn)(const uint8_t *s, size_t n, void *ctx, int *status, const char **why);
/* The incomplete start line s[0..n): -1 (*why) when it is already wrong. */
typedef int (*start_partial_fn)(const uint8_t *s, size_t n, const char **why);

/*
 * Split p[0..len) into a start line and fields, as far as the head goes. Returns 0 (head
 * complete: *nfields, *head_len), 1 (more needed) or -1 (*status 400 or 431, or the start line
 * parser's status; *why).
 */
static int scan_head(const uint8_t *p, size_t len, const struct sworn_http_limits *lim,
                     start_line_fn start, start_partial_fn start_partial, void *ctx,
                     struct sworn_http_field *fields, size_t *nfields, size_t *head_len,
                     int *status, const char **why)
{
    size_t n = len < lim->head_max ? len : lim->head_max;
    size_t fmax = lim->fields_max < SWORN_HTTP_FIELDS_MAX ? lim->fields_max : SWORN_HTTP_FIELDS_MAX;
    size_t pos = 0, end = 0;
    int first = 1;

    *nfields = 0;
    if (n == 0) { /* nothing to look at yet (p may be NULL) */
        if (len >= lim->head_max) {
            *status = 431;
            *why = "a head longer than the limit";
            return -1;
        }
        return 1;
    }
    for (;;) {
        const char *bad_end = NULL;
        enum line_result r = next_line(p, n, pos, &end, &bad_end);

        if (r != LINE_OK) {
            /* What a shorter input would have found first is found first (in the order a
               complete line is checked in), so that the answer stays the same as more bytes
               come: the bytes before a bare CR or LF, or those of the incomplete line. */
            if (!first && *nfields == fmax && end > pos) {
                *status = 431;
                *why = "more header fields than the limit";
                return -1;
            }
            if ((first ? start_partial(p + pos, end - pos, why)
                       : parse_field_line(p + pos, end - pos, 1, NULL, why)) != 0) {
                *status = 400;
                return -1;
            }
        }
        if (r == LINE_BAD) {
            *status = 400;
            *why = bad_end;
            return -1;
        }
        if (r == LINE_MORE) {
            if (len >= lim->head_max) {
                *status = 431;
                *why = "a head longer than the limit";
                return -1;
            }
            return 1;
        }
        if (first) {
            if (end == pos) {
                *status = 400;
                *why = "an empty line before the request or status line";
                return -1;
            }
            if (start(p, end, ctx, status, why) != 0)
                return -1;
            first = 0;
        } else if (end == pos) {
            *head_len = end + 2;
            return 0;
        } else {
            if (*nfields == fmax) {
                *status = 431;
                *why = "more header fields than the limit";
                return -1;
            }
            if (parse_field_line(p + pos, end - pos, 0, &fields[*nfields], why) != 0) {
                *status = 400;
                return -1;
            }
            (*nfields)++;
        }
        pos = end + 2;
    }
}

/* ---- authorities (RFC 3986 3.2, as the proxy accepts them) ---- */

struct authority {
    const char *host;
    size_t host_len;
    uint16_t port;
    int port_given;
};

/* A host of a reg-name is unreserved characters only (the policy canonicaliser takes LDH). */
static int is_host_byte(uint8_t c)
{
    return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static int parse_port(const char *s, size_t n, uint16_t *port)
{
    unsigned v = 0;

    if (n < 1 || n > 5)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit((uint8_t)s[i]))
            return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v < 1 || v > 65535)
        return -1;
    *port = (uint16_t)v;
    return 0;
}

/* host [":" port] in s[0..n). Returns 0 (*a) or -1 (*why). */
static int parse_authority(const char *s, size_t n, int port_required, struct authority *a,
                           const char **why)
{
    const char *rest;
    size_t host_len;

    memset(a, 0, sizeof(*a));
    if (n == 0) {
        *why = "an empty authority (host)";
        return -1;
    }
    if (memchr(s, '@', n) != NULL) {
        *why = "userinfo (@) in an authority";
        return -1;
    }
    if (s[0] == '[') {
        const char *close = memchr(s, ']', n);
        int colon = 0;

        if (close == NULL) {
            *why = "an IPv6 literal without its closing bracket";
            return -1;
        }
        host_len = (size_t)(close - s) + 1;
        for (size_t i = 1; i + 1 < host_len; i++) {
            uint8_t c = (uint8_t)s[i];

            if (c == ':')
                colon = 1;
            else if (!is_hex(c) && c != '.') {
                *why = "an invalid IPv6 literal";
                return -1;
            }
        }
        if (!colon || host_len < 4) {
            *why = "an invalid IPv6 literal";
            return -1;
        }
        rest = s + host_len;
        if (rest != s + n && *rest != ':') {
            *why = "bytes after an IPv6 literal";
            return -1;
        }
    } else {
        const char *colon = memchr(s, ':', n);

        host_len = colon != NULL ? (size_t)(colon - s) : n;
        if (host_len == 0) {
            *why = "an empty host";
            return -1;
        }
        for (size_t i = 0; i < host_len; i++) {
            if (!is_host_byte((uint8_t)s[i])) {
                *why = "an invalid character in a host";
                return -1;
            }
        }
        rest = s + host_len;
    }
    if (host_len > SWORN_HTTP_HOST_MAX) {
        *why = "a host longer than 255 bytes";
        return -1;
    }
    a->host = s;
    a->host_len = host_len;
    if (rest != s + n) { /* *rest == ':' */
        if (parse_port(rest + 1, (size_t)(s + n - rest - 1), &a->port) != 0) {
            *why = "an invalid port (1 to 65535, decimal digits only)";
            return -1;
        }
        a->port_given = 1;
    } else if (port_required) {
        *why = "an authority without a port (host:port is required)";
        return -1;
    }
    return 0;
}

static uint16_t scheme_default_port(const char *s, size_t n)
{
    return (ci_is(s, n, "https") || ci_is(s, n, "wss")) ? 443 : 80;
}

/* ---- versions ---- */

/*
 * s[0..n) as an HTTP-version. Returns 0 (1.0 or 1.1: *minor), 1 (a well-formed version this
 * proxy does not speak: "HTTP/" DIGIT ["." DIGIT]) or -1 (malformed, lower-case "http" too).
 */
static int parse_version(const uint8_t *s, size_t n, unsigned *minor)
{
    if (n < 6 || memcmp(s, "HTTP/", 5) != 0 || !is_digit(s[5]))
        return -1;
    if (n == 6)
        return 1; /* HTTP/2, HTTP/3 */
    if (n != 8 || s[6] != '.' || !is_digit(s[7]))
        return -1;
    if (s[5] == '1' && (s[7] == '0' || s[7] == '1')) {
        *minor = (unsigned)(s[7] - '0');
        return 0;
    }
    return 1;
}

/* ---- requests ---- */

static int request_partial(const uint8_t *s, size_t n, const char **why)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] < 0x20 || s[i] >= 0x7f) {
            *why = "a control character or non-ASCII byte in the request line";
            return -1;
        }
    }
    return 0;
}

static int refuse(int *status, int code, const char **why, const char *sentence)
{
    *status = code;
    *why = sentence;
    return -1;
}

/* The request-target t[0..n) of method m[0..mn), into r. */
static int parse_target(struct sworn_http_request *r, int *status, const char **why)
{
    const char *t = r->target;
    size_t n = r->target_len;
    int is_connect = r->method_len == 7 && memcmp(r->method, "CONNECT", 7) == 0;
    struct authority a;

    if (memchr(t, '#', n) != NULL)
        return refuse(status, 400, why, "a fragment (#) in the request-target");
    if (is_connect) {
        if (memchr(t, '/', n) != NULL || (n == 1 && t[0] == '*'))
            return refuse(status, 400, why, "a CONNECT target not in authority-form (host:port)");
        if (parse_authority(t, n, 1, &a, why) != 0) {
            *status = 400;
            return -1;
        }
        r->form = SWORN_HTTP_AUTHORITY;
        r->host = a.host;
        r->host_len = a.host_len;
        r->port = a.port;
        r->port_given = 1;
        return 0;
    }
    if (n == 1 && t[0] == '*') {
        if (!(r->method_len == 7 && memcmp(r->method, "OPTIONS", 7) == 0))
            return refuse(status, 400, why, "the asterisk-form (*) is for OPTIONS only");
        r->form = SWORN_HTTP_ASTERISK;
        return 0;
    }
    if (t[0] == '/') {
        r->form = SWORN_HTTP_ORIGIN;
        r->path = t;
        r->path_len = n;
        return 0;
    }
    /* absolute-form: scheme "://" authority path-abempty [ "?" query ] */
    size_t i = 0;

    if (is_alpha((uint8_t)t[0])) {
        i = 1;
        while (i < n && (is_alpha((uint8_t)t[i]) || is_digit((uint8_t)t[i]) || t[i] == '+' ||
                         t[i] == '-' || t[i] == '.'))
            i++;
    }
    if (i == 0 || n - i < 3 || memcmp(t + i, "://", 3) != 0) {
        if (parse_authority(t, n, 1, &a, why) == 0)
            return refuse(status, 400, why, "the authority-form (host:port) is for CONNECT only");
        return refuse(status, 400, why, "a request-target in no valid form");
    }
    if (!ci_is(t, i, "http") && !ci_is(t, i, "https") && !ci_is(t, i, "ws") && !ci_is(t, i, "wss"))
        return refuse(status, 400, why, "a scheme other than http, https, ws and wss");
    r->scheme = t;
    r->scheme_len = i;

    size_t as = i + 3, ae = as;

    while (ae < n && t[ae] != '/' && t[ae] != '?')
        ae++;
    if (memchr(t + as, '@', ae - as) != NULL)
        return refuse(status, 400, why, "userinfo (@) in the request-target");
    if (ae < n && t[ae] == '?')
        return refuse(status, 400, why, "an absolute-form target with a query but no path");
    if (parse_authority(t + as, ae - as, 0, &a, why) != 0) {
        *status = 400;
        return -1;
    }
    r->form = SWORN_HTTP_ABSOLUTE;
    r->host = a.host;
    r->host_len = a.host_len;
    r->port_given = a.port_given;
    r->port = a.port_given ? a.port : scheme_default_port(t, i);
    if (ae < n) {
        r->path = t + ae;
        r->path_len = n - ae;
    } else {
        r->path = slash_path;
        r->path_len = 1;
    }
    return 0;
}

static int request_line(const uint8_t *s, size_t n, void *ctx, int *status, const char **why)
{
    struct sworn_http_request *r = ctx;
    const uint8_t *sp1, *sp2;
    int v;

    if (request_partial(s, n, why) != 0) {
        *status = 400;
        return -1;
    }
    sp1 = memchr(s, ' ', n);
    sp2 = sp1 != NULL ? memchr(sp1 + 1, ' ', (size_t)(s + n - sp1 - 1)) : NULL;
    if (sp1 == NULL || sp2 == NULL || sp1 == s || sp2 == sp1 + 1 || sp2 + 1 == s + n ||
        memchr(sp2 + 1, ' ', (size_t)(s + n - sp2 - 1)) != NULL)
        return refuse(status, 400, why,
                      "a request line that is not method, target and version with one space "
                      "between");
    v = parse_version(sp2 + 1, (size_t)(s + n - sp2 - 1), &r->version_minor);
    if (v < 0)
        return refuse(status, 400, why, "a malformed HTTP version");
    if (v > 0)
        return refuse(status, 505, why, "an HTTP version other than 1.0 and 1.1");
    r->method = (const char *)s;
    r->method_len = (size_t)(sp1 - s);
    for (size_t i = 0; i < r->method_len; i++)
        if (!is_tchar(s[i]))
            return refuse(status, 400, why, "an invalid character in the method");
    if (r->method_len > SWORN_HTTP_METHOD_MAX)
        return refuse(status, 501, why, "a method longer than 32 bytes");
    r->target = (const char *)sp1 + 1;
    r->target_len = (size_t)(sp2 - sp1 - 1);
    return parse_target(r, status, why);
}

/* Whether name[0..n) holds '_' and reads, with '_' as '-', as a field this parser or a
   hop-by-hop rule acts on (some servers map '_' to '-': Content_Length would be their
   Content-Length). */
static int underscore_spelling(const char *name, size_t n)
{
    static const char *const names[] = {"content-length", "transfer-encoding", "keep-alive",
                                        "http2-settings", "sec-websocket-key"};
    char buf[32];

    if (memchr(name, '_', n) == NULL)
        return 0;
    if (n >= 6) {
        for (size_t i = 0; i < 6; i++)
            buf[i] = name[i] == '_' ? '-' : name[i];
        if (ci_eq(buf, 6, "proxy-", 6))
            return 1;
    }
    if (n > sizeof(buf))
        return 0;
    for (size_t i = 0; i < n; i++)
        buf[i] = name[i] == '_' ? '-' : name[i];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (ci_is(buf, n, names[i]))
            return 1;
    return 0;
}

/* The framing fields shared by requests and responses. */
struct framing {
    size_t ncl, nte;
    const struct sworn_http_field *cl, *te;
    uint64_t content_length;
};

/* Count and check Content-Length / Transfer-Encoding among f[0..n). Returns 0 or -1 (*why). */
static int check_framing(const struct sworn_http_field *f, size_t n, unsigned minor,
                         struct framing *fr, const char **why)
{
    memset(fr, 0, sizeof(*fr));
    for (size_t i = 0; i < n; i++) {
        if (underscore_spelling(f[i].name, f[i].name_len)) {
            *why = "a field name spelling a framing or hop-by-hop field with '_'";
            return -1;
        }
        if (ci_is(f[i].name, f[i].name_len, "content-length")) {
            fr->ncl++;
            fr->cl = &f[i];
        } else if (ci_is(f[i].name, f[i].name_len, "transfer-encoding")) {
            fr->nte++;
            fr->te = &f[i];
        }
    }
    if (fr->ncl > 0 && fr->nte > 0) {
        *why = "both Content-Length and Transfer-Encoding";
        return -1;
    }
    if (fr->ncl > 1) {
        *why = "more than one Content-Length field";
        return -1;
    }
    if (fr->nte > 1) {
        *why = "more than one Transfer-Encoding field";
        return -1;
    }
    if (fr->cl != NULL) {
        const char *v = fr->cl->value;
        size_t vn = fr->cl->value_len;

        if (vn < 1 || vn > SWORN_HTTP_CONTENT_LENGTH_DIGITS) {
            *why = "a Content-Length that is not 1 to 18 decimal digits";
            return -1;
        }
        for (size_t i = 0; i < vn; i++) {
            if (!is_digit((uint8_t)v[i])) {
                *why = "a Content-Length that is not 1 to 18 decimal digits";
                return -1;
            }
            fr->content_length = fr->content_length * 10 + (uint64_t)(v[i] - '0');
        }
    }
    if (fr->te != NULL) {
        if (minor == 0) {
            *why = "a Transfer-Encoding field in an HTTP/1.0 message";
            return -1;
        }
        if (!ci_is(fr->te->value, fr->te->value_len, "chunked")) {
            *why = "a Transfer-Encoding other than chunked";
            return -1;
        }
    }
    return 0;
}

/* Host, upgrades, Expect and the connection flags of a complete request head. */
static int request_meaning(struct sworn_http_request *r, int *status, const char **why)
{
    const struct sworn_http_field *f = r->fields;
    size_t n = r->nfields, nhost = 0, nup = 0;
    const struct sworn_http_field *hostf = NULL, *upf = NULL;
    int has_key = 0, is_get = r->method_len == 3 && memcmp(r->method, "GET", 3) == 0;
    struct framing fr;

    if (check_framing(f, n, r->version_minor, &fr, why) != 0) {
        *status = 400;
        return -1;
    }
    if (fr.te != NULL) {
        r->framing = SWORN_HTTP_CHUNKED;
    } else if (fr.cl != NULL) {
        r->framing = SWORN_HTTP_LENGTH;
        r->content_length = fr.content_length;
    }
    if (r->form == SWORN_HTTP_AUTHORITY &&
        (fr.te != NULL || (fr.cl != NULL && fr.content_length > 0)))
        return refuse(status, 400, why, "a CONNECT request with a body");
    for (size_t i = 0; i < n; i++) {
        const char *name = f[i].name;
        size_t nl = f[i].name_len;

        if (ci_is(name, nl, "host")) {
            nhost++;
            hostf = &f[i];
        } else if (ci_is(name, nl, "upgrade")) {
            nup++;
            upf = &f[i];
        } else if (ci_is(name, nl, "http2-settings")) {
            return refuse(status, 400, why, "an HTTP2-Settings field (an upgrade to HTTP/2)");
        } else if (ci_is(name, nl, "sec-websocket-key")) {
            has_key = 1;
        }
    }
    if (nhost > 1)
        return refuse(status, 400, why, "more than one Host field");
    if (nhost == 0 && r->version_minor == 1 && r->form != SWORN_HTTP_AUTHORITY)
        return refuse(status, 400, why, "an HTTP/1.1 request without a Host field");
    if (hostf != NULL) {
        struct authority a;

        if (parse_authority(hostf->value, hostf->value_len, 0, &a, why) != 0)
            return refuse(status, 400, why, "a Host field that is not a valid host[:port]");
        r->has_host = 1;
        r->host_field = hostf->value;
        r->host_field_len = hostf->value_len;
        r->host_field_host = a.host;
        r->host_field_host_len = a.host_len;
        r->host_field_port = a.port;
        r->host_field_port_given = a.port_given;
        if (r->form == SWORN_HTTP_ABSOLUTE) {
            uint16_t hp = a.port_given ? a.port : scheme_default_port(r->scheme, r->scheme_len);

            if (!ci_eq(a.host, a.host_len, r->host, r->host_len) || hp != r->port)
                return refuse(status, 400, why,
                              "a Host field naming another host or port than "
                              "the target");
        } else if (r->form == SWORN_HTTP_AUTHORITY) {
            if (!ci_eq(a.host, a.host_len, r->host, r->host_len) || !a.port_given ||
                a.port != r->port)
                return refuse(status, 400, why,
                              "a Host field naming another host or port than "
                              "the target");
        }
    }
    if (nup > 1)
        return refuse(status, 400, why, "more than one Upgrade field");
    if (upf != NULL) {
        if (list_has(upf->value, upf->value_len, "h2c", 3))
            return refuse(status, 400, why, "an upgrade to h2c (HTTP/2 over cleartext)");
        if (!ci_is(upf->value, upf->value_len, "websocket"))
            return refuse(status, 400, why, "an Upgrade other than websocket");
        if (!is_get)
            return refuse(status, 400, why, "a WebSocket upgrade with a method other than GET");
        if (r->version_minor != 1)
            return refuse(status, 400, why, "a WebSocket upgrade in HTTP/1.0");
        if (!sworn_http_connection_lists(f, n, "upgrade", 7))
            return refuse(status, 400, why, "a WebSocket upgrade without Connection: upgrade");
        if (r->framing == SWORN_HTTP_CHUNKED ||
            (r->framing == SWORN_HTTP_LENGTH && r->content_length > 0))
            return refuse(status, 400, why, "a WebSocket upgrade with a body");
        if (!has_key)
            return refuse(status, 400, why, "a WebSocket upgrade without Sec-WebSocket-Key");
        r->upgrade_websocket = 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!ci_is(f[i].name, f[i].name_len, "expect"))
            continue;
        if (!ci_is(f[i].value, f[i].value_len, "100-continue"))
            return refuse(status, 417, why, "an Expect other than 100-continue");
        /* An HTTP/1.0 client does not wait for a 100 (RFC 9110 10.1.1). */
        r->expect_continue = r->version_minor == 1;
    }
    if (r->version_minor == 1)
        r->connection_close = sworn_http_connection_lists(f, n, "close", 5);
    else
        r->connection_close = !sworn_http_connection_lists(f, n, "keep-alive", 10) ||
                              sworn_http_connection_lists(f, n, "close", 5);
    return 0;
}

int sworn_http_parse_request(const uint8_t *p, size_t len, const struct sworn_http_limits *lim,
                             struct sworn_http_request *out, int *status, const char **why)
{
    int rc;

    memset(out, 0, sizeof(*out));
    *status = 0;
    rc = scan_head(p, len, lim, request_line, request_partial, out, out->fields, &out->nfields,
                   &out->head_len, status, why);
    if (rc != 0)
        return rc;
    return request_meaning(out, status, why);
}

/* ---- responses ---- */

static int response_partial(const uint8_t *s, size_t n, const char **why)
{
    for (size_t i = 0; i < n; i++) {
        if (!is_value_byte(s[i])) {
            *why = "a control character in the status line";
            return -1;
        }
    }
    return 0;
}

static int status_line(const uint8_t *s, size_t n, void *ctx, int *status, const char **why)
{
    struct sworn_http_response *r = ctx;
    int v;

    *status = 502;
    if (response_partial(s, n, why) != 0)
        return -1;
    if (n < 13 || s[8] != ' ' || s[12] != ' ' || !is_digit(s[9]) || !is_digit(s[10]) ||
        !is_digit(s[11])) {
        *why = "a status line that is not version, 3-digit code and reason";
        return -1;
    }
    v = parse_version(s, 8, &r->version_minor);
    if (v != 0) {
        *why = v < 0 ? "a malformed HTTP version" : "an HTTP version other than 1.0 and 1.1";
        return -1;
    }
    r->status = (unsigned)((s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0'));
    if (r->status < 100 || r->status > 599) {
        *why = "a status code outside 100 to 599";
        return -1;
    }
    r->reason = (const char *)s + 13;
    r->reason_len = n - 13;
    return 0;
}

int sworn_http_parse_response(const uint8_t *p, size_t len, const struct sworn_http_limits *lim,
                              int request_was_head, struct sworn_http_response *out,
                              const char **why)
{
    struct framing fr;
    int rc, status = 0;

    memset(out, 0, sizeof(*out));
    rc = scan_head(p, len, lim, status_line, response_partial, out, out->fields, &out->nfields,
                   &out->head_len, &status, why);
    if (rc != 0)
        return rc;
    if (check_framing(out->fields, out->nfields, out->version_minor, &fr, why) != 0)
        return -1;
    /* RFC 9112 6.3: in this order. */
    if (request_was_head || out->status < 200 || out->status == 204 || out->status == 304) {
        out->framing = SWORN_HTTP_NO_BODY;
    } else if (fr.te != NULL) {
        out->framing = SWORN_HTTP_CHUNKED;
    } else if (fr.cl != NULL) {
        out->framing = SWORN_HTTP_LENGTH;
        out->content_length = fr.content_length;
    } else {
        out->framing = SWORN_HTTP_UNTIL_CLOSE;
    }
    if (out->version_minor == 1)
        out->connection_close = sworn_http_connection_lists(out->fields, out->nfields, "close", 5);
    else
        out->connection_close =
            !sworn_http_connection_lists(out->fields, out->nfields, "keep-alive", 10) ||
            sworn_http_connection_lists(out->fields, out->nfields, "close", 5);
    if (out->framing == SWORN_HTTP_UNTIL_CLOSE)
        out->connection_close = 1;
    return 0;
}

/* ---- chunked bodies (RFC 9112 7.1) ---- */

enum chunk_state {
    C_SIZE = 0,  /* hex digits of a chunk size */
    C_EXT_NAME0, /* after ';': the first byte of an extension name */
    C_EXT_NAME,
    C_EXT_VAL0, /* after '=' */
    C_EXT_VAL,
    C_EXT_QUOTED,
    C_EXT_QESC,
    C_EXT_QEND, /* after a quoted-string's closing quote */
    C_SIZE_LF,  /* the LF of the size line */
    C_DATA,
    C_DATA_CR,
    C_DATA_LF,
    C_TRAILER0, /* the start of a trailer line (or of the final CRLF) */
    C_TNAME,
    C_TVALUE,
    C_TLF,
    C_END_LF,
    C_DONE,
    C_ERROR,
};

void sworn_http_chunked_init(struct sworn_http_chunked *c, uint64_t max_body, int allow_ext)
{
    memset(c, 0, sizeof(*c));
    c->state = C_SIZE;
    c->max_body = max_body;
    c->allow_ext = allow_ext != 0;
}

int sworn_http_chunked_done(const struct sworn_http_chunked *c)
{
    return c->state == C_DONE;
}

uint64_t sworn_http_chunked_total(const struct sworn_http_chunked *c)
{
    return c->total;
}

static long chunk_fail(struct sworn_http_chunked *c, int code, const char *sentence, int *status,
                       const char **why)
{
    c->state = C_ERROR;
    c->status = code;
    c->why = sentence;
    *status = code;
    *why = sentence;
    return -1;
}

/* The size line's end: a byte that may follow a size or an extension (';' or CR). */
static int size_line_next(struct sworn_http_chunked *c, uint8_t b)
{
    if (b == ';') {
        c->state = C_EXT_NAME0;
        return 0;
    }
    if (b == '\r') {
        c->state = C_SIZE_LF;
        return 0;
    }
    return -1;
}

long sworn_http_chunked_feed(struct sworn_http_chunked *c, const uint8_t *p, size_t len,
                             const uint8_t **data, size_t *data_len, int *status, const char **why)
{
    size_t i = 0;

    *data = NULL;
    *data_len = 0;
    if (c->state == C_ERROR) {
        *status = c->status;
        *why = c->why;
        return -1;
    }
    while (i < len && c->state != C_DONE) {
        uint8_t b = p[i];

        if (c->state == C_DATA) {
            size_t k = len - i;

            if ((uint64_t)k > c->remaining)
                k = (size_t)c->remaining;
            *data = p + i;
            *data_len = k;
            c->remaining -= k;
            c->total += k;
            if (c->remaining == 0)
                c->state = C_DATA_CR;
            return (long)(i + k);
        }
        if (c->state <= C_SIZE_LF && ++c->line_len > SWORN_HTTP_CHUNK_LINE_MAX)
            return chunk_fail(c, 400, "a chunk-size line longer than 4096 bytes", status, why);
        if (c->state >= C_TRAILER0 && c->state <= C_END_LF &&
            ++c->trailer_len > SWORN_HTTP_TRAILERS_MAX)
            return chunk_fail(c, 400, "trailers longer than 8192 bytes", status, why);
        switch (c->state) {
        case C_SIZE:
            if (is_hex(b)) {
                if (++c->digits > 16)
                    return chunk_fail(c, 400, "a chunk size of more than 16 hex digits", status,
                                      why);
                c->remaining = c->remaining << 4 | (uint64_t)hex_value(b);
                break;
            }
            if (c->digits == 0)
                return chunk_fail(c, 400, "an invalid chunk size", status, why);
            if (b == ';' && !c->allow_ext)
                return chunk_fail(c, 400, "a chunk extension in a request body", status, why);
            if (size_line_next(c, b) != 0)
                return chunk_fail(c, 400, "an invalid chunk size", status, why);
            break;
        case C_EXT_NAME0:
            if (!is_tchar(b))
                return chunk_fail(c, 400, "an invalid chunk extension", status, why);
            c->state = C_EXT_NAME;
            break;
        case C_EXT_NAME:
            if (is_tchar(b))
                break;
            if (b == '=')
                c->state = C_EXT_VAL0;
            else if (size_line_next(c, b) != 0)
                return chunk_fail(c, 400, "an invalid chunk extension", status, why);
            break;
        case C_EXT_VAL0:
            if (is_tchar(b))
                c->state = C_EXT_VAL;
            else if (b == '"')
                c->state = C_EXT_QUOTED;
            else
                return chunk_fail(c, 400, "an invalid chunk extension", status, why);
            break;
        case C_EXT_VAL:
            if (!is_tchar(b) && size_line_next(c, b) != 0)
                return chunk_fail(c, 400, "an invalid chunk extension", status, why);
            break;
        case C_EXT_QUOTED:
            if (b == '"')
                c->state = C_EXT_QEND;
            else if (b == '\\')
                c->state = C_EXT_QESC;
            else if (!is_value_byte(b))
                return chunk_fail(c, 400, "an invalid chunk extension", status, why);
            break;
        case C_EXT_QESC:
            if (!is_value_byte(b))
                return chunk_fail(c, 400, "an invalid chunk extension", status, why);
            c->state = C_EXT_QUOTED;
            break;
        case C_EXT_QEND:
            if (size_line_next(c, b) != 0)
                return chunk_fail(c, 400, "an invalid chunk extension", status, why);
            break;
        case C_SIZE_LF:
            if (b != '\n')
                return chunk_fail(c, 400, "a chunk-size line not ended by CRLF", status, why);
            if (c->remaining == 0) {
                c->state = C_TRAILER0;
            } else {
                if (c->remaining > c->max_body - c->total)
                    return chunk_fail(c, 413, "a body larger than the limit", status, why);
                c->state = C_DATA;
            }
            break;
        case C_DATA_CR:
            if (b != '\r')
                return chunk_fail(c, 400, "chunk data not followed by CRLF", status, why);
            c->state = C_DATA_LF;
            break;
        case C_DATA_LF:
            if (b != '\n')
                return chunk_fail(c, 400, "chunk data not followed by CRLF", status, why);
            c->state = C_SIZE;
            c->digits = 0;
            c->line_len = 0;
            c->remaining = 0;
            break;
        case C_TRAILER0:
            if (b == '\r') {
                c->state = C_END_LF;
            } else if (is_ows(b)) {
                return chunk_fail(c, 400, "obs-fold (a trailer line starting with whitespace)",
                                  status, why);
            } else if (is_tchar(b)) {
                if (++c->trailer_fields > SWORN_HTTP_TRAILER_FIELDS_MAX)
                    return chunk_fail(c, 400, "more than 32 trailer fields", status, why);
                c->state = C_TNAME;
            } else {
                return chunk_fail(c, 400,
                                  b == ':' ? "an empty trailer field name"
                                           : "an invalid character in a trailer field name",
                                  status, why);
            }
            break;
        case C_TNAME:
            if (b == ':')
                c->state = C_TVALUE;
            else if (!is_tchar(b))
                return chunk_fail(c, 400,
                                  b == '\r' ? "a trailer field line without a colon"
                                            : "an invalid character in a trailer field name",
                                  status, why);
            break;
        case C_TVALUE:
            if (b == '\r')
                c->state = C_TLF;
            else if (!is_value_byte(b))
                return chunk_fail(c, 400, "a control character in a trailer field value", status,
                                  why);
            break;
        case C_TLF:
            if (b != '\n')
                return chunk_fail(c, 400, "a bare CR in the trailers", status, why);
            c->state = C_TRAILER0;
            break;
        case C_END_LF:
            if (b != '\n')
                return chunk_fail(c, 400, "a bare CR at the end of the trailers", status, why);
            c->state = C_DONE;
            break;
        default:
            return chunk_fail(c, 400, "a chunked decoder in an impossible state", status, why);
        }
        i++;
    }
    return (long)i;
}
