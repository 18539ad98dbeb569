/*
 * p_form.c -- application/x-www-form-urlencoded bodies (p_form.h has the rules).
 */
#include "p_form.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "encoding.h"
#include "p_http.h"

/* Decode s[0..n) into out (cap bytes; out NULL: check only). Returns the length, -1 (a bad
 * escape) or -2 (longer than cap). */
static long decode(const uint8_t *s, size_t n, uint8_t *out, size_t cap)
{
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        uint8_t b = s[i];

        if (b == '%') {
            int h, l;

            if (i + 2 >= n)
                return -1;
            h = sworn_hex_digit((char)s[i + 1]);
            l = sworn_hex_digit((char)s[i + 2]);
            if (h < 0 || l < 0)
                return -1;
            b = (uint8_t)(h * 16 + l);
            i += 2;
        } else if (b == '+') {
            b = ' ';
        }
        if (out != NULL) { /* NULL: only check the escapes */
            if (o == cap)
                return -2;
            out[o] = b;
        }
        o++;
    }
    return (long)o;
}

int sworn_pform_parse(const uint8_t *body, size_t len, struct sworn_pform *out, const char **why)
{
    size_t start = 0;

    out->n = 0;
    if (len > SWORN_PFORM_BODY_MAX) {
        *why = "the form body is longer than 65536 bytes";
        return 1;
    }
    for (size_t i = 0; i < len; i++)
        if (body[i] < 0x21 || body[i] > 0x7e) {
            *why = "the form body holds a byte a form encoder escapes (a space, a control, a "
                   "non-ASCII byte)";
            return 1;
        }
    for (size_t i = 0; i <= len; i++) {
        struct sworn_pform_param *p;
        size_t eq;
        long n;

        if (i < len && body[i] != '&')
            continue;
        if (i == start) {
            start = i + 1;
            continue;
        }
        if (out->n == SWORN_PFORM_PARAMS_MAX) {
            out->n = 0;
            *why = "the form body has more than 64 parameters";
            return 1;
        }
        p = &out->p[out->n];
        memset(p, 0, sizeof(*p));
        p->off = start;
        p->len = i - start;
        for (eq = start; eq < i && body[eq] != '='; eq++)
            ;
        if (eq < i) {
            p->has_value = 1;
            p->value_off = eq + 1;
            p->value_len = i - eq - 1;
        }
        n = decode(body + start, eq - start, (uint8_t *)p->name, SWORN_PFORM_NAME_MAX);
        if (n == -1 || (p->has_value && decode(body + p->value_off, p->value_len, NULL, 0) == -1)) {
            out->n = 0;
            *why = "the form body has a '%' that is not followed by two hex digits";
            return 1;
        }
        if (n < 0) {
            out->n = 0;
            *why = "a parameter name of the form body is longer than 256 bytes";
            return 1;
        }
        p->name[n] = '\0';
        for (long k = 0; k < n; k++)
            if ((uint8_t)p->name[k] < 0x20 || (uint8_t)p->name[k] == 0x7f) {
                out->n = 0;
                *why = "a parameter name of the form body holds a control character";
                return 1;
            }
        for (size_t k = 0; k < out->n; k++)
            if (strlen(out->p[k].name) == (size_t)n && memcmp(out->p[k].name, p->name, n) == 0) {
                out->n = 0;
                *why = "the form body has two parameters of one name";
                return 1;
            }
        out->n++;
        start = i + 1;
    }
    return 0;
}

const struct sworn_pform_param *sworn_pform_find(const struct sworn_pform *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->p[i].name, name) == 0)
            return &f->p[i];
    return NULL;
}

long sworn_pform_value(const uint8_t *body, const struct sworn_pform_param *p, uint8_t *out,
                       size_t cap)
{
    long n;

    if (!p->has_value)
        return 0;
    n = decode(body + p->value_off, p->value_len, out, cap);
    return n < 0 ? -1 : n;
}

static int unreserved(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

/* Append the encoded form of s[0..n) at out + *o. */
static void encode(const uint8_t *s, size_t n, uint8_t *out, size_t *o)
{
    static const char hex[] = "0123456789ABCDEF";

    for (size_t i = 0; i < n; i++) {
        if (unreserved(s[i])) {
            out[(*o)++] = s[i];
        } else {
            out[(*o)++] = '%';
            out[(*o)++] = (uint8_t)hex[s[i] >> 4];
            out[(*o)++] = (uint8_t)hex[s[i] & 15];
        }
    }
}

uint8_t *sworn_pform_rewrite(const uint8_t *body, size_t len, const struct sworn_pform *f,
                             const char *name, const uint8_t *value, size_t vlen, size_t *out_len)
{
    const struct sworn_pform_param *p = sworn_pform_find(f, name);
    size_t nlen = strlen(name), o = 0;
    /* Worst case: the body, '&', the name and the value each byte escaped, '='. */
    size_t cap = len + 1 + 3 * nlen + 1 + 3 * vlen + 1;
    uint8_t *out = malloc(cap);

    if (out == NULL)
        return NULL;
    if (p != NULL) {
        memcpy(out, body, p->off);
        o = p->off;
        encode((const uint8_t *)name, nlen, out, &o);
        out[o++] = '=';
        encode(value, vlen, out, &o);
        memcpy(out + o, body + p->off + p->len, len - p->off - p->len);
        o += len - p->off - p->len;
    } else {
        memcpy(out, body, len);
        o = len;
        if (len > 0 && body[len - 1] != '&')
            out[o++] = '&';
        encode((const uint8_t *)name, nlen, out, &o);
        out[o++] = '=';
        encode(value, vlen, out, &o);
    }
    *out_len = o;
    return out;
}

int sworn_pform_is_form_type(const char *v, size_t n)
{
    return sworn_http_media_type_is(v, n, "application/x-www-form-urlencoded");
}
