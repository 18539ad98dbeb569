/*
 * p_token.c -- symbolic tokens in header values and the query (p_token.h has the rules).
 */
#include "p_token.h"

#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "err.h"

static int is_token_char(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

int sworn_symtok_is(const uint8_t *s, size_t n)
{
    if (s == NULL || n < SWORN_SYMTOK_MIN || n > SWORN_SYMTOK_MAX || memcmp(s, "sym_", 4) != 0)
        return 0;
    for (size_t i = 4; i < n; i++)
        if (!is_token_char(s[i]))
            return 0;
    return 1;
}

static uint8_t lower(uint8_t c)
{
    return c >= 'A' && c <= 'Z' ? (uint8_t)(c - 'A' + 'a') : c;
}

/* Where a header value v[0..n) presents a token, if it does. OUT: *off, *len. Returns 1 or 0. */
static int in_header_value(const uint8_t *v, size_t n, size_t *off, size_t *len)
{
    static const uint8_t bearer[6] = {'b', 'e', 'a', 'r', 'e', 'r'};
    size_t s = 0, e = n, p;

    while (s < e && (v[s] == ' ' || v[s] == '\t'))
        s++;
    while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
        e--;
    if (sworn_symtok_is(v + s, e - s)) {
        *off = s;
        *len = e - s;
        return 1;
    }
    if (e - s < sizeof(bearer) + 1 || v[s + sizeof(bearer)] != ' ')
        return 0;
    for (size_t i = 0; i < sizeof(bearer); i++)
        if (lower(v[s + i]) != bearer[i])
            return 0;
    p = s + sizeof(bearer);
    while (p < e && v[p] == ' ')
        p++;
    if (!sworn_symtok_is(v + p, e - p))
        return 0;
    *off = p;
    *len = e - p;
    return 1;
}

/* The scan under way: the hits and the bytes each one's offsets are relative to. */
struct scan_state {
    struct sworn_symtok_scan *out;
    const uint8_t *src[SWORN_SYMTOK_HITS_MAX]; /* the hit's token bytes */
    int overflow;
};

static void add_hit(struct scan_state *st, int in_query, size_t index, const uint8_t *base,
                    size_t off, size_t len)
{
    struct sworn_symtok_scan *out = st->out;
    struct sworn_symtok_hit *h;

    if (out->nhits == SWORN_SYMTOK_HITS_MAX) {
        st->overflow = 1;
        return;
    }
    h = &out->hit[out->nhits];
    h->in_query = in_query;
    h->index = index;
    h->off = off;
    h->len = len;
    st->src[out->nhits] = base + off;
    out->nhits++;
}

static void scan_query(struct scan_state *st, const uint8_t *q, size_t n)
{
    size_t start = 0;

    for (size_t i = 0; i <= n; i++) {
        if (i < n && q[i] != '&')
            continue;
        /* The parameter q[start..i): its value follows its first '='. */
        for (size_t j = start; j < i; j++) {
            if (q[j] != '=')
                continue;
            if (sworn_symtok_is(q + j + 1, i - j - 1))
                add_hit(st, 1, j + 1, q, j + 1, i - j - 1);
            break;
        }
        start = i + 1;
    }
}

int sworn_symtok_scan(const uint8_t *const *values, const size_t *value_lens, size_t nvalues,
                      const uint8_t *query, size_t query_len, struct sworn_symtok_scan *out)
{
    struct scan_state st;

    if (out == NULL || (nvalues > 0 && (values == NULL || value_lens == NULL)) ||
        (query == NULL && query_len > 0))
        return sworn_err_set(SWORN_ERR_ARG, "symtok: NULL argument");
    memset(out, 0, sizeof(*out));
    memset(&st, 0, sizeof(st));
    st.out = out;
    for (size_t i = 0; i < nvalues && !st.overflow; i++) {
        size_t off, len;
        if (values[i] == NULL && value_lens[i] > 0)
            return sworn_err_set(SWORN_ERR_ARG, "symtok: NULL header value");
        if (values[i] != NULL && in_header_value(values[i], value_lens[i], &off, &len))
            add_hit(&st, 0, i, values[i], off, len);
    }
    if (query != NULL && !st.overflow)
        scan_query(&st, query, query_len);

    for (size_t i = 0; i < out->nhits; i++) {
        size_t j = 0;
        while (j < i && !(out->hit[j].len == out->hit[i].len &&
                          memcmp(st.src[j], st.src[i], out->hit[i].len) == 0))
            j++;
        if (j == i)
            out->distinct++;
    }
    if (out->nhits > 0 &&
        EVP_Digest(st.src[0], out->hit[0].len, out->sha256, NULL, EVP_sha256(), NULL) != 1) {
        ERR_clear_error();
        memset(out, 0, sizeof(*out));
        return sworn_err_set(SWORN_ERR_CRYPTO, "symtok: SHA-256 failed");
    }
    return st.overflow ? 1 : 0;
}
