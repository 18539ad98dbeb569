/*
 * policy_match.c -- the matchers of the policy engine: globs, host patterns, exact decimals and
 * the check that path patterns are written in canonical form. docs/policy.md gives their semantics;
 * the comments here say how.
 *
 * Globs are compiled into tokens and run as a set of states (a Thompson-style simulation of the
 * pattern's automaton): each text character advances every live state once, so matching costs
 * O(len(text) * tokens) whatever the pattern, and a hostile pattern such as "*a*a*a*a*b" cannot
 * make it backtrack. The state sets live on the stack (tokens <= SWORN_POLICY_GLOB_MAX).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

/* --- Globs --- */

int pglob_compile(const char *pattern, int path, struct pglob *g, const char **why)
{
    size_t len = strlen(pattern), i, n = 0;
    int wild = 0;

    memset(g, 0, sizeof(*g));
    if (len == 0) {
        *why = "an empty pattern";
        return -1;
    }
    if (len > SWORN_POLICY_GLOB_MAX) {
        *why = "a pattern longer than 512 bytes";
        return -1;
    }
    for (i = 0; i < len; i++) {
        if ((unsigned char)pattern[i] < 0x20 || pattern[i] == 0x7f) {
            *why = "a control character in a pattern";
            return -1;
        }
        if (pattern[i] == '*' && i + 2 < len && pattern[i + 1] == '*' && pattern[i + 2] == '*') {
            *why = "\"***\" in a pattern (use * or **)";
            return -1;
        }
        if (!path && pattern[i] == '*' && pattern[i + 1] == '*') {
            *why = "\"**\" outside a path pattern (* already matches any run)";
            return -1;
        }
    }
    g->toks = malloc(len * sizeof(*g->toks));
    g->text = strdup(pattern);
    if (g->toks == NULL || g->text == NULL) {
        pglob_free(g);
        *why = "out of memory";
        return -1;
    }
    for (i = 0; i < len; i++) {
        if (pattern[i] == '?') {
            g->toks[n++] = PGLOB_ONE;
            wild = 1;
        } else if (pattern[i] == '*' && pattern[i + 1] == '*') {
            g->toks[n++] = PGLOB_ALL;
            wild = 1;
            i++;
        } else if (pattern[i] == '*') {
            g->toks[n++] = PGLOB_STAR;
            wild = 1;
        } else {
            g->toks[n++] = (int16_t)(unsigned char)pattern[i];
        }
    }
    g->ntok = n;
    g->literal = !wild;
    while (g->prefix < n && g->toks[g->prefix] >= 0)
        g->prefix++;
    g->path = path;
    return 0;
}

void pglob_free(struct pglob *g)
{
    if (g == NULL)
        return;
    free(g->text);
    free(g->toks);
    memset(g, 0, sizeof(*g));
}

/* Let every live state skip the star tokens it stands on (they may match nothing). */
static void closure(const struct pglob *g, unsigned char *s)
{
    for (size_t i = 0; i < g->ntok; i++)
        if (s[i] && (g->toks[i] == PGLOB_STAR || g->toks[i] == PGLOB_ALL))
            s[i + 1] = 1;
}

int pglob_match(const struct pglob *g, const char *text, size_t len)
{
    unsigned char a[SWORN_POLICY_GLOB_MAX + 1], b[SWORN_POLICY_GLOB_MAX + 1];
    unsigned char *cur = a, *nxt = b, *t;
    size_t m = g->ntok, i, k;

    if (g->literal)
        return len == m && memcmp(g->text, text, len) == 0;
    /* The literal prefix is the pattern's first bytes, one token each: a cheap early refusal. */
    if (len < g->prefix || memcmp(g->text, text, g->prefix) != 0)
        return 0;
    memset(cur, 0, m + 1);
    cur[0] = 1;
    closure(g, cur);
    for (k = 0; k < len; k++) {
        unsigned char c = (unsigned char)text[k];
        int live = 0, slash = g->path && c == '/';

        memset(nxt, 0, m + 1);
        for (i = 0; i < m; i++) {
            int16_t tk = g->toks[i];

            if (!cur[i])
                continue;
            if (tk >= 0) {
                if (c == (unsigned char)tk)
                    nxt[i + 1] = live = 1;
            } else if (tk == PGLOB_ONE) {
                if (!slash)
                    nxt[i + 1] = live = 1;
            } else if (tk == PGLOB_STAR) {
                if (!slash)
                    nxt[i] = live = 1;
            } else {
                nxt[i] = live = 1;
            }
        }
        if (!live)
            return 0;
        closure(g, nxt);
        t = cur;
        cur = nxt;
        nxt = t;
    }
    return cur[m];
}

/* --- Hosts --- */

static int is_label_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* Labels in a canonical name (dot-separated, none empty). */
static size_t count_labels(const char *s)
{
    size_t n = 1;

    for (; *s != '\0'; s++)
        n += *s == '.';
    return n;
}

/*
 * A wildcard pattern: lower-cased, one trailing dot dropped, then "**." first or not, and labels
 * that are LDH (1..63 bytes) or exactly "*". Fills h->multi, h->nlabels and buf (the labels).
 */
static int wild_compile(const char *pattern, struct phost *h, char *buf, size_t cap,
                        const char **rest_out, const char **why)
{
    size_t len = strlen(pattern), lab = 0, labels = 0, i;
    const char *rest = buf, *p;

    if (len > 0 && pattern[len - 1] == '.')
        len--;
    if (len >= cap) {
        *why = "a host pattern longer than 253 bytes";
        return -1;
    }
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)pattern[i];
        buf[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    buf[len] = '\0';
    if (strncmp(buf, "**.", 3) == 0) {
        h->multi = 1;
        rest = buf + 3;
    }
    if (*rest == '\0') {
        *why = "a host pattern with no labels";
        return -1;
    }
    if (strlen(rest) > SWORN_RESOURCE_HOST_MAX) {
        *why = "a host pattern longer than 253 bytes";
        return -1;
    }
    for (p = rest;; p++) {
        if (*p == '.' || *p == '\0') {
            if (lab == 0) {
                *why = "an empty label in a host pattern";
                return -1;
            }
            if (lab > SWORN_RESOURCE_LABEL_MAX) {
                *why = "a label longer than 63 bytes in a host pattern";
                return -1;
            }
            labels++;
            lab = 0;
            if (*p == '\0')
                break;
            continue;
        }
        if (*p == '*') {
            if ((p != rest && p[-1] != '.') || (p[1] != '.' && p[1] != '\0')) {
                *why = "'*' that is not a whole label in a host pattern (\"**.\" only as "
                       "the first label)";
                return -1;
            }
        } else if (!is_label_char((unsigned char)*p)) {
            *why = "a character other than a-z, 0-9, '-', '.' and '*' in a host pattern";
            return -1;
        }
        lab++;
    }
    h->nlabels = labels;
    *rest_out = rest;
    return 0;
}

int phost_compile(const char *pattern, struct phost *h, const char **why)
{
    char buf[SWORN_RESOURCE_HOST_IN_MAX + 8];
    const char *rest = buf, *p;
    enum sworn_resource_host_kind kind;

    memset(h, 0, sizeof(*h));
    if (pattern[0] == '\0') {
        *why = "an empty host pattern";
        return -1;
    }
    for (p = pattern; *p != '\0'; p++)
        if ((unsigned char)*p >= 0x80) {
            *why = "a non-ASCII host pattern (write internationalised names as A-labels, xn--...)";
            return -1;
        }
    if (strlen(pattern) > SWORN_RESOURCE_HOST_IN_MAX) {
        *why = "a host pattern longer than 253 bytes";
        return -1;
    }
    if (strchr(pattern, '*') == NULL) {
        /* A literal host: exactly the canonical form a request's host must have to match. */
        if (sworn_resource_canon_host(pattern, buf, &kind, h->addr, why) != 0) {
            if (strchr(pattern, ':') != NULL && strstr(*why, "not an IPv6 address") != NULL)
                *why = "a host pattern with ':' that is not an IPv6 address (ports go in ports:)";
            return -1;
        }
        h->ip = kind == SWORN_RESOURCE_HOST_NAME ? 0 : (int)kind;
        h->nlabels = count_labels(buf);
    } else if (wild_compile(pattern, h, buf, sizeof(buf), &rest, why) != 0) {
        return -1;
    }
    h->text = strdup(pattern);
    h->norm = strdup(rest);
    if (h->text == NULL || h->norm == NULL) {
        phost_free(h);
        *why = "out of memory";
        return -1;
    }
    return 0;
}

void phost_free(struct phost *h)
{
    if (h == NULL)
        return;
    free(h->text);
    free(h->norm);
    memset(h, 0, sizeof(*h));
}

/*
 * Match a canonical host against h. IP patterns match the same address only, name patterns
 * names only. Labels are compared from the right: the pattern's last label with the host's
 * last, and so on.
 */
int phost_match(const struct phost *h, const struct sworn_resource *res)
{
    const char *host = res->host, *pe, *he;
    size_t hn, i;

    if (res->host_kind != SWORN_RESOURCE_HOST_NAME || h->ip != 0)
        return (int)res->host_kind == h->ip && memcmp(res->addr, h->addr, 16) == 0;
    hn = count_labels(host);
    if (h->multi ? hn < h->nlabels + 1 : hn != h->nlabels)
        return 0;
    pe = h->norm + strlen(h->norm);
    he = host + strlen(host);
    for (i = 0; i < h->nlabels; i++) {
        const char *ps = pe, *hs = he;
        size_t pl, hl;

        while (ps > h->norm && ps[-1] != '.')
            ps--;
        while (hs > host && hs[-1] != '.')
            hs--;
        pl = (size_t)(pe - ps);
        hl = (size_t)(he - hs);
        if (!(pl == 1 && ps[0] == '*') && (pl != hl || memcmp(ps, hs, pl) != 0))
            return 0;
        pe = ps > h->norm ? ps - 1 : ps;
        he = hs > host ? hs - 1 : hs;
    }
    return 1;
}

/* --- Decimals --- */

#define MICRO_DIGITS 6

/* v = v * 10 + d without overflow; 0 or -1. */
static int mul10_add(uint64_t *v, unsigned d)
{
    if (*v > (UINT64_MAX - d) / 10)
        return -1;
    *v = *v * 10 + d;
    return 0;
}

int pdec_parse_max(const char *s, uint64_t *out, const char **why)
{
    uint64_t v = 0;
    size_t nint = 0, nfrac = 0;
    const char *p = s;

    while (*p >= '0' && *p <= '9') {
        if (mul10_add(&v, (unsigned)(*p - '0')) != 0)
            goto big;
        p++;
        nint++;
    }
    if (nint == 0)
        goto bad;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            if (++nfrac > MICRO_DIGITS) {
                *why = "more than 6 decimal places";
                return -1;
            }
            if (mul10_add(&v, (unsigned)(*p - '0')) != 0)
                goto big;
            p++;
        }
        if (nfrac == 0)
            goto bad;
    }
    if (*p != '\0')
        goto bad;
    for (; nfrac < MICRO_DIGITS; nfrac++)
        if (mul10_add(&v, 0) != 0)
            goto big;
    *out = v;
    return 0;
big:
    *why = "an amount too large (at most 18446744073709.551615)";
    return -1;
bad:
    *why = "not a decimal amount (digits, optionally '.' and at most 6 decimals)";
    return -1;
}

int pdec_parse_json(const char *s, uint64_t *out, const char **why)
{
    const char *p = s, *digits, *frac = NULL, *end;
    int neg = 0, eneg = 0, nonzero = 0;
    long exp = 0, shift;
    size_t nd = 0, nfrac = 0, i, keep;
    char d[160];
    uint64_t v = 0;

    if (*p == '-') {
        neg = 1;
        p++;
    }
    digits = p;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        goto bad;
    end = p;
    if (*p == '.') {
        frac = ++p;
        if (!(*p >= '0' && *p <= '9'))
            goto bad;
        while (*p >= '0' && *p <= '9')
            p++;
        nfrac = (size_t)(p - frac);
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            eneg = *p++ == '-';
        if (!(*p >= '0' && *p <= '9'))
            goto bad;
        while (*p >= '0' && *p <= '9') {
            /* Saturate: any exponent beyond 100000 is out of range anyway. */
            if (exp < 100000)
                exp = exp * 10 + (*p - '0');
            p++;
        }
    }
    if (*p != '\0')
        goto bad;
    /* All digits, integer then fraction, as one integer D; value = D * 10^(exp - nfrac). */
    for (i = 0; digits + i < end; i++) {
        if (nd >= sizeof(d))
            goto big;
        d[nd++] = digits[i];
    }
    for (i = 0; i < nfrac; i++) {
        if (nd >= sizeof(d))
            goto big;
        d[nd++] = frac[i];
    }
    for (i = 0; i < nd; i++)
        if (d[i] != '0')
            nonzero = 1;
    if (!nonzero) {
        *out = 0;
        return 0;
    }
    if (neg) {
        *why = "a negative amount";
        return -1;
    }
    shift = (eneg ? -exp : exp) - (long)nfrac + MICRO_DIGITS;
    keep = nd;
    if (shift < 0) {
        /* The digits dropped must all be zero, or the value has more than 6 decimals. */
        size_t drop = (size_t)-shift;

        for (i = 0; i < drop && i < nd; i++)
            if (d[nd - 1 - i] != '0') {
                *why = "more than 6 decimal places";
                return -1;
            }
        keep = drop >= nd ? 0 : nd - drop;
        shift = 0;
    }
    for (i = 0; i < keep; i++)
        if (mul10_add(&v, (unsigned)(d[i] - '0')) != 0)
            goto big;
    for (; shift > 0 && v != 0; shift--)
        if (mul10_add(&v, 0) != 0)
            goto big;
    *out = v;
    return 0;
big:
    *why = "an amount too large";
    return -1;
bad:
    *why = "not a JSON number";
    return -1;
}

void pdec_format(uint64_t micros, char *buf, size_t cap)
{
    char frac[8];
    int n = MICRO_DIGITS;
    uint64_t f = micros % 1000000u;

    for (int i = MICRO_DIGITS - 1; i >= 0; i--) {
        frac[i] = (char)('0' + f % 10);
        f /= 10;
    }
    while (n > 0 && frac[n - 1] == '0')
        n--;
    frac[n] = '\0';
    if (n == 0)
        snprintf(buf, cap, "%llu", (unsigned long long)(micros / 1000000u));
    else
        snprintf(buf, cap, "%llu.%s", (unsigned long long)(micros / 1000000u), frac);
}

/* --- Path patterns --- */

static int hexdig_upper(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

static unsigned hexval_upper(char c)
{
    return c <= '9' ? (unsigned)(c - '0') : (unsigned)(c - 'A' + 10);
}

int ppath_pattern_check(const char *pattern, const char **why)
{
    const char *seg = pattern + 1, *p;

    for (p = pattern; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;

        if (c >= 0x80 || c == '\\' || c == ';' || c == '#') {
            *why = "a byte that a canonical path never holds (non-ASCII, '\\', ';' or '#'; "
                   "percent-encode it)";
            return -1;
        }
        if (c == '%') {
            unsigned v;

            if (!hexdig_upper(p[1]) || !hexdig_upper(p[2])) {
                *why = "a percent escape not written as '%' and two upper-case hex digits";
                return -1;
            }
            v = hexval_upper(p[1]) << 4 | hexval_upper(p[2]);
            if ((v >= 'A' && v <= 'Z') || (v >= 'a' && v <= 'z') || (v >= '0' && v <= '9') ||
                v == '-' || v == '.' || v == '_' || v == '~') {
                *why = "an escaped unreserved character (a canonical path has it decoded)";
                return -1;
            }
            if (v < 0x20 || v == 0x7f || v == '/' || v == '\\' ||
                (v == '%' && hexdig_upper(p[3]) && hexdig_upper(p[4]))) {
                *why = "an escape that a canonical path never holds (%00, %2F, %5C, a control "
                       "character or double encoding)";
                return -1;
            }
        }
        if (p[0] == '/' && p[1] == '/') {
            *why = "\"//\" in a path pattern (a canonical path has no empty segment)";
            return -1;
        }
        if (p[1] == '/' || p[1] == '\0') {
            size_t n = (size_t)(p + 1 - seg);

            if (p >= seg &&
                ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))) {
                *why = "a \".\" or \"..\" segment in a path pattern (a canonical path has none)";
                return -1;
            }
            seg = p + 2;
        }
    }
    return 0;
}

/* --- Methods --- */

int pmethod_check(const char *m, char *why_buf, size_t cap, const char **why)
{
    size_t n = strlen(m), i;

    if (n == 0 || n > SWORN_POLICY_METHOD_MAX) {
        snprintf(why_buf, cap, "a method is 1..%u bytes", SWORN_POLICY_METHOD_MAX);
        *why = why_buf;
        return -1;
    }
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)m[i];

        if (c >= 'a' && c <= 'z') {
            /* Frameworks that upper-case the method would run another method than the one
             * judged (`delete` is executed as DELETE). */
            snprintf(why_buf, cap,
                     "it holds the lower-case letter '%c' at offset %zu (a method is a "
                     "case-sensitive token in upper case)",
                     c, i);
            *why = why_buf;
            return -1;
        }
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL))) {
            /* Space, tab, separators, non-ASCII: servers trim, split or reject them, each its
             * own way, so the method judged need not be the method run. */
            snprintf(why_buf, cap,
                     "byte 0x%02X at offset %zu is not an RFC 9110 token character (a method is "
                     "A-Z 0-9 and !#$%%&'*+-.^_`|~ only)",
                     c, i);
            *why = why_buf;
            return -1;
        }
    }
    return 0;
}

/* --- Actors --- */

static int cmp_issuer(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(char *const *)elem);
}

int pactor_match(const struct pactor *it, int narrow, const char *subject, const char *issuer,
                 char *const *trusted, size_t n)
{
    if (it->issuer != NULL) {
        if (strcmp(it->issuer, issuer) != 0)
            return 0;
    } else if (narrow) {
        /* trusted_issuers never holds "": an actor without an issuer is never trusted. */
        if (issuer[0] == '\0' || n == 0 ||
            bsearch(issuer, trusted, n, sizeof(*trusted), cmp_issuer) == NULL)
            return 0;
    }
    return pglob_match(&it->subject, subject, strlen(subject));
}
