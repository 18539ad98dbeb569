/*
 * resource.c -- the canonical form of a resource (see resource.h for the rules, docs/policy.md
 * section 2.0 for them in prose).
 *
 * Every function reads its input once, left to right, with an explicit bound, and writes into
 * fixed caller-owned buffers whose sizes the header names. The path is handled in three passes
 * over at most SWORN_RESOURCE_PATH_MAX bytes: escapes normalised (and refusals), dot segments
 * removed, and a last scan of the output for double encoding, so that "%25%32%66" (which only
 * becomes "%252F" after its digits are decoded) is caught like "%252F" itself.
 */
/* SHA256_Init/Update/Final for the raw target's digest: see sworn_resource_raw_sha256. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "resource.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

/* --- characters ------------------------------------------------------------------------- */

static int is_alpha(unsigned c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(unsigned c)
{
    return c >= '0' && c <= '9';
}

static int hex_val(unsigned c)
{
    if (is_digit(c))
        return (int)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F')
        return (int)(c - 'A' + 10);
    return -1;
}

/* RFC 3986 unreserved: ALPHA DIGIT - . _ ~ */
static int is_unreserved(unsigned c)
{
    return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 3986 sub-delims, ':' and '@' (pchar without unreserved and escapes); ';' is not here:
 * in a path it starts path parameters (check_params), in a query it is an ordinary byte. */
static int is_pchar_other(unsigned c)
{
    return c != '\0' && strchr("!$&'()*+,=:@", (int)c) != NULL;
}

static unsigned lower(unsigned c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* --- scheme ----------------------------------------------------------------------------- */

static int canon_scheme(const char *in, char out[SWORN_RESOURCE_SCHEME_MAX + 1], const char **why)
{
    static const char *const ok[] = {"http", "https", "ws", "wss", SWORN_RESOURCE_SCHEME_TCP};
    char buf[SWORN_RESOURCE_SCHEME_MAX + 1];
    size_t n = in == NULL ? 0 : strlen(in);

    if (n == 0 || n > SWORN_RESOURCE_SCHEME_MAX)
        goto bad;
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)lower((unsigned char)in[i]);
    buf[n] = '\0';
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(buf, ok[i]) == 0) {
            memcpy(out, buf, n + 1);
            return 0;
        }
bad:
    *why = "the scheme is not http, https, ws, wss or tcp";
    return 1;
}

/* --- host ------------------------------------------------------------------------------- */

/* RFC 5952 text of a 16-byte address: lower-case hex, no leading zeros, the longest run of two
 * or more zero groups (the first of equal runs) as "::". out holds at least 40 bytes. */
static void ipv6_text(const uint8_t a[16], char *out, size_t cap)
{
    unsigned g[8];
    int best = -1, best_len = 0;
    size_t n = 0;

    for (int i = 0; i < 8; i++)
        g[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
    for (int i = 0; i < 8;) {
        int j = i;

        while (j < 8 && g[j] == 0)
            j++;
        if (j - i > best_len && j - i >= 2) {
            best = i;
            best_len = j - i;
        }
        i = j > i ? j : i + 1;
    }
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            n += (size_t)snprintf(out + n, cap - n, "::");
            i += best_len - 1;
            continue;
        }
        n +=
            (size_t)snprintf(out + n, cap - n, "%s%x", n > 0 && out[n - 1] != ':' ? ":" : "", g[i]);
    }
}

/*
 * The IPv6 text s[0..n) (without brackets) into out: "[" RFC 5952 "]" with *kind IPv6, or, for
 * an IPv4-mapped address (::ffff:0:0/96, which every dual-stack socket connects to as the IPv4
 * address), the dotted quad with *kind IPv4 and addr[0..4) the IPv4 address.
 */
static int canon_ipv6(const char *s, size_t n, char *out, enum sworn_resource_host_kind *kind,
                      uint8_t addr[16], const char **why)
{
    char buf[INET6_ADDRSTRLEN + 1], text[INET6_ADDRSTRLEN + 1];
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const uint8_t translated[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
    static const uint8_t zero[16] = {0};

    if (memchr(s, '%', n) != NULL) {
        *why = "an IPv6 zone identifier in the host";
        return 1;
    }
    if (n == 0 || n >= sizeof(buf)) {
        *why = "the host is not an IPv6 address";
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        if (hex_val((unsigned char)s[i]) < 0 && s[i] != ':' && s[i] != '.') {
            *why = "the host is not an IPv6 address";
            return 1;
        }
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (inet_pton(AF_INET6, buf, addr) != 1) {
        *why = "the host is not an IPv6 address";
        return 1;
    }
    if (memcmp(addr, mapped, 12) == 0) {
        uint8_t v4[4];

        memcpy(v4, addr + 12, 4);
        memset(addr, 0, 16);
        if (v4[0] == 0 && v4[1] == 0 && v4[2] == 0 && v4[3] == 0) {
            *why = "the unspecified address 0.0.0.0 (it connects to this host), IPv4-mapped";
            return 1;
        }
        memcpy(addr, v4, 4);
        snprintf(out, SWORN_RESOURCE_HOST_MAX + 1, "%u.%u.%u.%u", v4[0], v4[1], v4[2], v4[3]);
        *kind = SWORN_RESOURCE_HOST_IPV4;
        return 0;
    }
    if (memcmp(addr, translated, 12) == 0 ||
        (memcmp(addr, zero, 12) == 0 && memcmp(addr + 12, zero, 3) != 0) ||
        (memcmp(addr, zero, 12) == 0 && addr[15] > 1)) {
        *why = "an IPv4-translated or IPv4-compatible IPv6 address (write the IPv4 address)";
        return 1;
    }
    if (memcmp(addr, zero, 16) == 0) {
        *why = "the unspecified address [::] (it connects to this host)";
        return 1;
    }
    ipv6_text(addr, text, sizeof(text));
    snprintf(out, SWORN_RESOURCE_HOST_MAX + 1, "[%s]", text);
    *kind = SWORN_RESOURCE_HOST_IPV6;
    return 0;
}

/* A label that is a number in some IPv4 spelling: all digits, or "0x" and hex digits. */
static int numeric_label(const char *s, size_t n)
{
    size_t i = 0;

    if (n >= 2 && s[0] == '0' && s[1] == 'x') {
        for (i = 2; i < n; i++)
            if (hex_val((unsigned char)s[i]) < 0)
                return 0;
        return 1;
    }
    for (i = 0; i < n; i++)
        if (!is_digit((unsigned char)s[i]))
            return 0;
    return n > 0;
}

/* s (lower case, n bytes) as a dotted quad of decimal octets without leading zeros. */
static int dotted_quad(const char *s, size_t n, uint8_t addr[4])
{
    size_t i = 0;

    for (int part = 0; part < 4; part++) {
        unsigned v = 0;
        size_t start = i;

        while (i < n && is_digit((unsigned char)s[i]) && i - start < 3)
            v = v * 10 + (unsigned)(s[i++] - '0');
        if (i == start || v > 255 || (i - start > 1 && s[start] == '0'))
            return 0;
        addr[part] = (uint8_t)v;
        if (part < 3) {
            if (i >= n || s[i] != '.')
                return 0;
            i++;
        }
    }
    return i == n;
}

int sworn_resource_canon_host(const char *in, char out[SWORN_RESOURCE_HOST_MAX + 1],
                              enum sworn_resource_host_kind *kind, uint8_t addr[16],
                              const char **why)
{
    char buf[SWORN_RESOURCE_HOST_IN_MAX + 1];
    size_t n = in == NULL ? 0 : strlen(in), lab = 0, last = 0;

    out[0] = '\0';
    memset(addr, 0, 16);
    *kind = 0;
    if (n == 0) {
        *why = "the host is empty";
        return 1;
    }
    if (n > SWORN_RESOURCE_HOST_IN_MAX) {
        *why = "the host is longer than 253 bytes";
        return 1;
    }
    if (in[0] == '[' || memchr(in, ':', n) != NULL) {
        int rc;

        if (in[0] == '[' && (n < 2 || in[n - 1] != ']')) {
            *why = "a '[' in the host without its ']'";
            return 1;
        }
        rc = in[0] == '[' ? canon_ipv6(in + 1, n - 2, buf, kind, addr, why)
                          : canon_ipv6(in, n, buf, kind, addr, why);
        if (rc != 0) {
            memset(addr, 0, 16);
            *kind = 0;
            return 1;
        }
        memcpy(out, buf, strlen(buf) + 1);
        return 0;
    }
    if (n > 1 && in[n - 1] == '.')
        n--; /* the root's empty label: "a.example." is "a.example" */
    if (n > SWORN_RESOURCE_HOST_MAX) {
        *why = "the host is longer than 253 bytes";
        return 1;
    }
    for (size_t i = 0; i <= n; i++) {
        unsigned c = i < n ? lower((unsigned char)in[i]) : '.';

        if (c == '.') {
            if (lab == 0) {
                *why = "an empty label in the host";
                return 1;
            }
            if (lab > SWORN_RESOURCE_LABEL_MAX) {
                *why = "a label longer than 63 bytes in the host";
                return 1;
            }
            if (buf[i - 1] == '-' || buf[i - lab] == '-') {
                *why = "a label that starts or ends with '-' in the host";
                return 1;
            }
            last = i - lab;
            lab = 0;
        } else if (c >= 0x80) {
            *why = "a non-ASCII host (write internationalised names as A-labels, xn--...)";
            return 1;
        } else if (!is_alpha(c) && !is_digit(c) && c != '-') {
            *why = "a character other than a-z, 0-9, '-' and '.' in the host";
            return 1;
        } else {
            lab++;
        }
        if (i < n)
            buf[i] = (char)c;
    }
    buf[n] = '\0';
    if (numeric_label(buf + last, n - last)) {
        if (!dotted_quad(buf, n, addr)) {
            memset(addr, 0, 16);
            *why = "an IPv4 address not written as a dotted quad of decimal octets (octal, hex, "
                   "short, integer or leading-zero forms are refused)";
            return 1;
        }
        if (addr[0] == 0 && addr[1] == 0 && addr[2] == 0 && addr[3] == 0) {
            *why = "the unspecified address 0.0.0.0 (it connects to this host)";
            return 1;
        }
        *kind = SWORN_RESOURCE_HOST_IPV4;
    } else {
        *kind = SWORN_RESOURCE_HOST_NAME;
    }
    memcpy(out, buf, n + 1);
    return 0;
}

/* --- path and query --------------------------------------------------------------------- */

/*
 * A strict UTF-8 (RFC 3629) decoder fed one percent-decoded byte >= 0x80 at a time; any other
 * byte in between ends a sequence. need = continuation bytes still expected.
 */
struct u8state {
    unsigned need;
    uint32_t cp, min;
};

/*
 * Code points that Unicode normalisation (NFKC) or the "best fit" code-page mappings of some
 * servers turn into '.', '/' or '\\': a server that applies one would see "/a/../b" in
 * "/a/%EF%BC%8E%EF%BC%8E/b". Refused, like %2F.
 */
static int lookalike(uint32_t cp)
{
    static const uint32_t cps[] = {0x2024, 0x2025, 0x2044, 0x2215, 0x29f8, 0x29f9,
                                   0xfe52, 0xfe68, 0xff0e, 0xff0f, 0xff3c};

    for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++)
        if (cp == cps[i])
            return 1;
    return 0;
}

/* Feed b (>= 0x80). Returns 0, 1 when the bytes are not UTF-8, 2 for a look-alike. */
static int u8_feed(struct u8state *u, unsigned b)
{
    if (u->need > 0) {
        if (b < 0x80 || b > 0xbf)
            return 1;
        u->cp = u->cp << 6 | (b & 0x3f);
        if (--u->need == 0 &&
            (u->cp < u->min || u->cp > 0x10ffff || (u->cp >= 0xd800 && u->cp <= 0xdfff)))
            return 1;
        if (u->need == 0 && lookalike(u->cp))
            return 2;
        return 0;
    }
    if (b >= 0xc2 && b <= 0xdf) {
        u->need = 1;
        u->cp = b & 0x1f;
        u->min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
        u->need = 2;
        u->cp = b & 0x0f;
        u->min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
        u->need = 3;
        u->cp = b & 0x07;
        u->min = 0x10000;
    } else {
        return 1;
    }
    return 0;
}

/*
 * Normalise the escapes of in[0..n) (the path when query is 0, else the query after its '?')
 * into out, which has room for n bytes. Returns the bytes written, or -1 with *why set.
 */
static long norm_escapes(const char *in, size_t n, int query, char *out, const char **why)
{
    static const char hex[] = "0123456789ABCDEF";
    struct u8state u = {0, 0, 0};
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        unsigned c = (unsigned char)in[i];
        int hi, lo;

        if (c != '%') {
            if (!query && u.need > 0)
                goto not_utf8;
            if (c < 0x20 || c == 0x7f) {
                *why = "a control character in the path or query";
                return -1;
            }
            if (c >= 0x80) {
                *why = "a raw non-ASCII byte in the path or query (percent-encode it)";
                return -1;
            }
            if (c == '\\') {
                *why = "a backslash in the path or query";
                return -1;
            }
            if (c == '#') {
                *why = "a '#' (fragment) in the path or query";
                return -1;
            }
            if (!is_unreserved(c) && !is_pchar_other(c) && c != '/' && c != ';' &&
                !(query && c == '?')) {
                *why = "a character in the path or query that must be percent-encoded";
                return -1;
            }
            out[o++] = (char)c;
            continue;
        }
        hi = i + 1 < n ? hex_val((unsigned char)in[i + 1]) : -1;
        lo = i + 2 < n ? hex_val((unsigned char)in[i + 2]) : -1;
        if (hi < 0 || lo < 0) {
            *why = "a '%' not followed by two hex digits in the path or query";
            return -1;
        }
        c = (unsigned)(hi << 4 | lo);
        i += 2;
        if (c == 0) {
            *why = "an encoded NUL (%00) in the path or query";
            return -1;
        }
        if (!query && c == '/') {
            *why = "an encoded '/' (%2F) in the path";
            return -1;
        }
        if (!query && c == '\\') {
            *why = "an encoded backslash (%5C) in the path";
            return -1;
        }
        if (!query && (c < 0x20 || c == 0x7f)) {
            *why = "an encoded control character in the path";
            return -1;
        }
        if (!query && c >= 0x80) {
            int r = u8_feed(&u, c);

            if (r == 2) {
                *why = "an escaped Unicode look-alike of '.', '/' or '\\' in the path (servers "
                       "that normalise Unicode read it as one)";
                return -1;
            }
            if (r != 0)
                goto not_utf8;
        } else if (!query && u.need > 0) {
            goto not_utf8;
        }
        if (is_unreserved(c)) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    if (!query && u.need > 0)
        goto not_utf8;
    return (long)o;
not_utf8:
    *why = "percent-encoded bytes in the path that are not UTF-8 (overlong forms included)";
    return -1;
}

/* Is s[0..n) a dot segment ("." or "..", escapes already decoded by norm_escapes)? */
static int dot_segment(const char *s, size_t n)
{
    return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/*
 * Path parameters in the normalised path p[0..n) (before dot removal). A segment holding ';' is
 * "name;params": Tomcat, Jetty and Spring drop ";params" from each segment before they resolve
 * dot segments, so the name must be a real segment: not empty ("/;x/", which they read as "//")
 * and not a dot segment ("..;", "%2e%2e;x", ".;", which they read as ".." and "."). A name that
 * is a dot segment before an escaped ';' ("..%3B") is refused too: a server or proxy on the way
 * that decodes %3B would make it one. Sets *has when a ';' is present. 0, or -1 with *why.
 */
static int check_params(const char *p, size_t n, int *has, const char **why)
{
    *has = 0;
    for (size_t i = 1; i <= n;) {
        size_t s = i, semi = 0, esc = 0;
        int seen_semi = 0, seen_esc = 0;

        while (i < n && p[i] != '/') {
            if (p[i] == ';' && !seen_semi) {
                seen_semi = 1;
                semi = i;
            }
            if (p[i] == '%' && i + 2 < n && p[i + 1] == '3' && p[i + 2] == 'B' && !seen_esc &&
                !seen_semi) {
                seen_esc = 1;
                esc = i;
            }
            i++;
        }
        if (seen_semi) {
            *has = 1;
            if (semi == s) {
                *why = "a path segment that is only parameters (';x'): servers that drop path "
                       "parameters read it as an empty segment";
                return -1;
            }
            if (dot_segment(p + s, semi - s)) {
                *why = "a dot segment with path parameters ('..;', '.;', %2e forms too): "
                       "Tomcat, Jetty and Spring read it as '..' or '.'";
                return -1;
            }
        }
        if (seen_esc && dot_segment(p + s, esc - s)) {
            *why = "a dot segment before an encoded ';' ('..%3B'): a server that decodes it "
                   "reads '..;'";
            return -1;
        }
        i++;
    }
    return 0;
}

/*
 * p[0..n) (canonical, no query) with every segment's parameters (from its first ';' to the end
 * of the segment) removed, into out (room for n + 1 bytes, NUL-terminated). Returns the length.
 */
static size_t strip_params(const char *p, size_t n, char *out)
{
    size_t o = 0;
    int in_params = 0;

    for (size_t i = 0; i < n; i++) {
        if (p[i] == '/')
            in_params = 0;
        else if (p[i] == ';')
            in_params = 1;
        if (!in_params)
            out[o++] = p[i];
    }
    out[o] = '\0';
    return o;
}

/*
 * RFC 3986 section 5.2.4 on p[0..n) (starts with '/', no empty segment but perhaps the last),
 * in place. Returns the new length (>= 1).
 */
static size_t remove_dots(char *p, size_t n)
{
    size_t o = 0, i = 1;

    while (i <= n) {
        size_t s = i, len;
        int last;

        while (i < n && p[i] != '/')
            i++;
        len = i - s;
        last = i >= n;
        if (len == 1 && p[s] == '.') {
            /* nothing */
        } else if (len == 2 && p[s] == '.' && p[s + 1] == '.') {
            while (o > 0 && p[o - 1] != '/')
                o--;
            if (o > 0)
                o--; /* the '/' before the dropped segment */
        } else {
            p[o++] = '/';
            memmove(p + o, p + s, len);
            o += len;
            if (last)
                return o;
        }
        if (last) {
            p[o++] = '/';
            return o;
        }
        i++;
    }
    return o;
}

/*
 * sworn_resource_canon_path; clear_tail 0 when out is all zero already (sworn_resource_canon has
 * just cleared the struct: clearing its 8 KiB again, on every decision, is waste).
 */
static int canon_path(const char *in, char *out, size_t *path_len, const char **why,
                      int clear_tail);

int sworn_resource_canon_path(const char *in, char *out, size_t *path_len, const char **why)
{
    return canon_path(in, out, path_len, why, 1);
}

static int canon_path(const char *in, char *out, size_t *path_len, const char **why, int clear_tail)
{
    size_t n = in == NULL ? 0 : strlen(in), pn;
    const char *q;
    long w, qw = 0, written;
    int has_params = 0;

    out[0] = '\0';
    *path_len = 0;
    if (n > SWORN_RESOURCE_PATH_MAX) {
        *why = "the path and query are longer than 8192 bytes";
        return 1;
    }
    if (n == 0) {
        memcpy(out, "/", 2);
        *path_len = 1;
        return 0;
    }
    if (in[0] != '/') {
        *why = "the path does not start with '/'";
        return 1;
    }
    q = memchr(in, '?', n);
    pn = q != NULL ? (size_t)(q - in) : n;
    w = norm_escapes(in, pn, 0, out, why);
    if (w < 0)
        goto refused;
    for (long i = 0; i + 1 < w; i++)
        if (out[i] == '/' && out[i + 1] == '/') {
            *why = "an empty path segment (\"//\"): servers disagree on what it means";
            goto refused;
        }
    if (check_params(out, (size_t)w, &has_params, why) != 0)
        goto refused;
    written = w; /* remove_dots may shorten it: the bytes it let go are cleared below */
    w = (long)remove_dots(out, (size_t)w);
    *path_len = (size_t)w;
    if (q != NULL) {
        out[w] = '?';
        qw = norm_escapes(q + 1, n - pn - 1, 1, out + w + 1, why);
        if (qw < 0)
            goto refused;
        qw++;
    }
    out[w + qw] = '\0';
    /* No bytes of the input linger after the NUL (the form can be compared with memcmp). */
    if (clear_tail)
        memset(out + w + qw + 1, 0, SWORN_RESOURCE_PATH_MAX - (size_t)(w + qw));
    else if (written > w + qw + 1)
        memset(out + w + qw + 1, 0, (size_t)(written - (w + qw + 1)));
    for (long i = 0; i + 4 < w + qw; i++)
        if (out[i] == '%' && out[i + 1] == '2' && out[i + 2] == '5' &&
            hex_val((unsigned char)out[i + 3]) >= 0 && hex_val((unsigned char)out[i + 4]) >= 0) {
            *why = "double percent-encoding (%25 followed by two hex digits) in the path or query";
            goto refused;
        }
    return 0;
refused:
    out[0] = '\0';
    *path_len = 0;
    return 1;
}

/* --- the whole resource ----------------------------------------------------------------- */

/* --- MCP resource URIs ------------------------------------------------------------------- */

/* A byte RFC 3986 allows in a URI, '%' and '#' aside (unreserved, gen-delims but '#', sub-delims).
 */
static int uri_byte(unsigned c)
{
    return is_unreserved(c) || (c != '\0' && strchr(":/?[]@!$&'()*+,;=", (int)c) != NULL);
}

static int upper_hex(unsigned c)
{
    return is_digit(c) || (c >= 'A' && c <= 'F');
}

int sworn_resource_check_uri(const char *uri, const char **why)
{
    size_t n = strlen(uri), i = 0, seg, a;
    int in_query = 0;

    if (n == 0 || n > SWORN_RESOURCE_URI_MAX) {
        *why = "the resource URI is empty or longer than 2048 bytes";
        return 1;
    }
    /* scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":", lower case only */
    if (!(uri[0] >= 'a' && uri[0] <= 'z')) {
        *why = is_alpha((unsigned char)uri[0])
                   ? "the resource URI's scheme is not in lower case"
                   : "the resource URI does not start with a scheme (a letter, then letters, "
                     "digits, '+', '-', '.', then ':')";
        return 1;
    }
    for (i = 1; i < n && uri[i] != ':'; i++) {
        unsigned c = (unsigned char)uri[i];

        if (c >= 'A' && c <= 'Z') {
            *why = "the resource URI's scheme is not in lower case";
            return 1;
        }
        if (!(c >= 'a' && c <= 'z') && !is_digit(c) && c != '+' && c != '-' && c != '.') {
            *why = "the resource URI does not start with a scheme (a letter, then letters, "
                   "digits, '+', '-', '.', then ':')";
            return 1;
        }
    }
    if (i == n) {
        *why = "the resource URI does not start with a scheme (a letter, then letters, digits, "
               "'+', '-', '.', then ':')";
        return 1;
    }
    i++; /* past ':' */
    if (n - i >= 2 && uri[i] == '/' && uri[i + 1] == '/') {
        /* The authority: up to the next '/', '?' or the end; its host is case-insensitive, so
         * only the lower-case spelling is taken. */
        for (a = i + 2; a < n && uri[a] != '/' && uri[a] != '?'; a++)
            if (uri[a] >= 'A' && uri[a] <= 'Z') {
                *why = "the resource URI's authority is not in lower case";
                return 1;
            }
    }
    for (seg = i; i <= n; i++) {
        unsigned c = i < n ? (unsigned char)uri[i] : '\0';

        if (!in_query && (c == '/' || c == '?' || c == '\0')) {
            /* The end of a segment of the hierarchical part: never "." or "..", which a
             * server resolving the URI as a path would step out with. */
            if ((i - seg == 1 && uri[seg] == '.') ||
                (i - seg == 2 && uri[seg] == '.' && uri[seg + 1] == '.')) {
                *why = "the resource URI holds a dot segment (\".\" or \"..\")";
                return 1;
            }
            seg = i + 1;
            in_query = c == '?';
        }
        if (c == '\0')
            break;
        if (c == '%') {
            unsigned v;

            if (i + 2 >= n || !upper_hex((unsigned char)uri[i + 1]) ||
                !upper_hex((unsigned char)uri[i + 2])) {
                *why = "a percent escape in the resource URI is not '%' and two upper-case hex "
                       "digits";
                return 1;
            }
            v = (unsigned)(hex_val((unsigned char)uri[i + 1]) * 16 +
                           hex_val((unsigned char)uri[i + 2]));
            if (is_unreserved(v)) {
                *why = "the resource URI escapes an unreserved character (write it as is)";
                return 1;
            }
            if (v < 0x20 || v == 0x7f || v == '/' || v == '\\' || v >= 0x80) {
                *why = "the resource URI encodes a control character, '/', '\\' or a byte >= 0x80";
                return 1;
            }
            if (v == '%' && i + 4 < n && hex_val((unsigned char)uri[i + 3]) >= 0 &&
                hex_val((unsigned char)uri[i + 4]) >= 0) {
                *why = "the resource URI is percent-encoded twice (\"%25\" and two hex digits)";
                return 1;
            }
            i += 2;
            continue;
        }
        if (!uri_byte(c)) {
            *why = "the resource URI holds a byte a URI may not hold (a space, a control, a byte "
                   ">= 0x80, '\\', '#', '\"', '<', '>', '^', '`', '{', '|' or '}')";
            return 1;
        }
    }
    return 0;
}

int sworn_resource_canon(const Sworn__V1__Resource *r, struct sworn_resource *out, const char **why)
{
    size_t tl;

    memset(out, 0, sizeof(*out));
    if (r == NULL) {
        *why = "the request has no resource";
        return 1;
    }
    if (canon_scheme(r->scheme, out->scheme, why) != 0)
        goto refused;
    if (sworn_resource_canon_host(r->host, out->host, &out->host_kind, out->addr, why) != 0)
        goto refused;
    if (r->port < 1 || r->port > 65535) {
        *why = "the port is outside 1..65535";
        goto refused;
    }
    out->port = r->port;
    if (strcmp(out->scheme, SWORN_RESOURCE_SCHEME_TCP) == 0) {
        /* A raw tunnel (operation tcp.connect) has a host and a port and nothing else: its path
         * is "" (and stays "", so the form is idempotent); any path is refused. */
        if (r->path != NULL && r->path[0] != '\0') {
            *why = "a tcp resource (a raw tunnel) has no path";
            goto refused;
        }
    } else {
        if (canon_path(r->path, out->path, &out->path_len, why, 0) != 0)
            goto refused;
        out->path_params = memchr(out->path, ';', out->path_len) != NULL;
        out->bare_len = strip_params(out->path, out->path_len, out->bare);
    }
    tl = r->tool == NULL ? 0 : strlen(r->tool);
    if (tl > SWORN_RESOURCE_TOOL_MAX) {
        *why = "the tool name is longer than 256 bytes";
        goto refused;
    }
    if (tl > 0)
        memcpy(out->tool, r->tool, tl + 1);
    if (r->uri != NULL && r->uri[0] != '\0') {
        if (sworn_resource_check_uri(r->uri, why) != 0)
            goto refused;
        memcpy(out->uri, r->uri, strlen(r->uri) + 1);
    }
    if (sworn_resource_canon_model(r->model, out->model, why) != 0)
        goto refused;
    return 0;
refused:
    memset(out, 0, sizeof(*out));
    return 1;
}

void sworn_resource_canonicalise(const Sworn__V1__Resource *r, struct sworn_resource_canonical *out)
{
    out->of = r;
    out->why = NULL;
    out->rc = sworn_resource_canon(r, &out->res, &out->why);
    if (out->rc == 0)
        out->why = NULL;
}

int sworn_resource_canonical_is_of(const struct sworn_resource_canonical *c,
                                   const Sworn__V1__Resource *r)
{
    return c != NULL && c->of == r;
}

int sworn_resource_canon_model(const char *in, char out[SWORN_RESOURCE_MODEL_MAX + 1],
                               const char **why)
{
    size_t n = in == NULL ? 0 : strlen(in);

    out[0] = '\0';
    if (n > SWORN_RESOURCE_MODEL_MAX) {
        *why = "the model name is longer than 256 bytes";
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)in[i];

        if (ch < 0x21 || ch > 0x7e) {
            *why = "the model name holds a space, a control character or a byte that is not "
                   "printable ASCII";
            out[0] = '\0';
            return 1;
        }
        out[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    }
    out[n] = '\0';
    return 0;
}

void sworn_resource_to_pb(const struct sworn_resource *c, Sworn__V1__Resource *out)
{
    out->scheme = (char *)c->scheme;
    out->host = (char *)c->host;
    out->port = c->port;
    out->path = (char *)c->path;
    out->tool = (char *)c->tool;
    out->uri = (char *)c->uri;
}

/*
 * SHA256_Init/Update/Final are deprecated in OpenSSL 3, but an EVP digest allocates its context
 * and fetches the algorithm on every call: a third of this function's cost on every decision
 * (as in transparency-log/merkle.c, the low-level calls do neither).
 */
int sworn_resource_raw_sha256(const Sworn__V1__Resource *r, uint8_t out[SWORN_RESOURCE_SHA256_LEN])
{
    SHA256_CTX ctx;
    char port[16];
    int ok = 0;

    memset(out, 0, SWORN_RESOURCE_SHA256_LEN);
    if (r == NULL || r->scheme == NULL || r->host == NULL)
        return -1;
    snprintf(port, sizeof(port), ":%u", (unsigned)r->port);
    ok = SHA256_Init(&ctx) == 1 && SHA256_Update(&ctx, r->scheme, strlen(r->scheme)) == 1 &&
         SHA256_Update(&ctx, "://", 3) == 1 && SHA256_Update(&ctx, r->host, strlen(r->host)) == 1 &&
         SHA256_Update(&ctx, port, strlen(port)) == 1 &&
         (r->path == NULL || SHA256_Update(&ctx, r->path, strlen(r->path)) == 1) &&
         SHA256_Final(out, &ctx) == 1;
    if (!ok) {
        memset(out, 0, SWORN_RESOURCE_SHA256_LEN);
        return -1;
    }
    return 0;
}

static int under(const char *path, size_t len, const char *prefix, size_t pl)
{
    if (pl == 0 || len < pl || memcmp(path, prefix, pl) != 0)
        return 0;
    return prefix[pl - 1] == '/' || len == pl || path[pl] == '/';
}

int sworn_resource_under_prefix(const struct sworn_resource *c, const char *prefix)
{
    size_t pl = strlen(prefix);

    /* Both readings of a path with parameters (as the policy's allow rules require). */
    return under(c->bare, c->bare_len, prefix, pl) && under(c->path, c->path_len, prefix, pl);
}
