/*
 * utf8.c -- the strict UTF-8 reader and the escaper of utf8.h.
 */
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/*
 * Decode the code point at p[0..n) (n >= 1). OUT: *cp. Returns its length (1..4), or 0 when the
 * bytes there are not UTF-8. Sets no error: the escaper may be reading the error slot itself.
 */
static size_t decode(const uint8_t *p, size_t n, uint32_t *cp)
{
    uint32_t v, min;
    size_t more;

    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    if ((p[0] & 0xe0) == 0xc0) {
        more = 1;
        v = p[0] & 0x1fu;
        min = 0x80;
    } else if ((p[0] & 0xf0) == 0xe0) {
        more = 2;
        v = p[0] & 0x0fu;
        min = 0x800;
    } else if ((p[0] & 0xf8) == 0xf0) {
        more = 3;
        v = p[0] & 0x07u;
        min = 0x10000;
    } else {
        return 0;
    }
    if (n <= more)
        return 0;
    for (size_t i = 1; i <= more; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3fu);
    }
    /* Overlong forms would give one character two encodings; surrogates are not characters. */
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return more + 1;
}

int sworn_utf8_next(struct sworn_buf *b, uint32_t *cp)
{
    size_t k;

    if (sworn_buf_remaining(b) == 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "utf-8: no more bytes");
    k = decode(b->p + b->off, sworn_buf_remaining(b), cp);
    if (k == 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "utf-8: invalid lead byte, truncated sequence, overlong form, "
                             "surrogate or value out of range");
    b->off += k;
    return 0;
}

/*
 * The unsafe characters of utf8.h, as sorted inclusive ranges. Beyond the controls: Zl and Zp;
 * Default_Ignorable_Code_Point (Unicode 15.1, DerivedCoreProperties.txt), which holds the bidi
 * controls U+061C, U+200E..U+200F, U+202A..U+202E and U+2066..U+2069; and U+FFF9..U+FFFB.
 */
static const struct {
    uint32_t lo, hi;
} unsafe[] = {
    {0x0000, 0x001f},   /* C0 */
    {0x007f, 0x009f},   /* DEL, C1 */
    {0x00ad, 0x00ad},   /* soft hyphen */
    {0x034f, 0x034f},   /* combining grapheme joiner */
    {0x061c, 0x061c},   /* arabic letter mark (bidi) */
    {0x115f, 0x1160},   /* hangul fillers */
    {0x17b4, 0x17b5},   /* khmer inherent vowels */
    {0x180b, 0x180f},   /* mongolian variation selectors, vowel separator */
    {0x200b, 0x200f},   /* zero-width space, non-joiner, joiner; LRM, RLM (bidi) */
    {0x2028, 0x202e},   /* line, paragraph separator; LRE, RLE, PDF, LRO, RLO (bidi) */
    {0x2060, 0x206f},   /* word joiner, invisible operators, LRI..PDI (bidi), deprecated */
    {0x3164, 0x3164},   /* hangul filler */
    {0xfe00, 0xfe0f},   /* variation selectors */
    {0xfeff, 0xfeff},   /* zero-width no-break space (BOM) */
    {0xffa0, 0xffa0},   /* halfwidth hangul filler */
    {0xfff0, 0xfffb},   /* unassigned ignorables; interlinear annotation */
    {0x1bca0, 0x1bca3}, /* shorthand format controls */
    {0x1d173, 0x1d17a}, /* musical format controls */
    {0xe0000, 0xe0fff}, /* tags, variation selectors supplement */
};

int sworn_utf8_is_control(uint32_t cp)
{
    for (size_t i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]) && cp >= unsafe[i].lo; i++)
        if (cp <= unsafe[i].hi)
            return 1;
    return 0;
}

int sworn_utf8_check(const void *p, size_t len, int allow_newline, const char *what)
{
    struct sworn_buf b = sworn_buf_init(p, len);

    while (sworn_buf_remaining(&b) > 0) {
        size_t at = b.off;
        uint32_t cp = 0;

        /* Printable ASCII, most bytes of most strings: a whole code point, and never an unsafe
         * one, so the decoder and the table are skipped (every request's strings pass here
         * several times: bench_cpu, issue 17). */
        if (b.p[at] >= 0x20 && b.p[at] < 0x7f) {
            b.off++;
            continue;
        }
        if (sworn_utf8_next(&b, &cp) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "%s: invalid UTF-8 at offset %zu", what, at);
        if (sworn_utf8_is_control(cp) && !(allow_newline && cp == '\n'))
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 cp < 0x80 ? "%s: control byte 0x%02x at offset %zu"
                                           : "%s: unsafe character U+%04X (a control, separator, "
                                             "bidi or invisible character) at offset %zu",
                                 what, (unsigned)cp, at);
    }
    return 0;
}

/* Append the len bytes of s to out[*n..cap), leaving room for the NUL. Returns 0, or -1. */
static int put(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
    if (cap - *n <= len)
        return -1;
    memcpy(out + *n, s, len);
    *n += len;
    return 0;
}

/* One escape (utf8.h's forms) of code point cp, or of the bad byte cp when bad. */
static int put_escape(char *out, size_t cap, size_t *n, enum sworn_utf8_escape_mode mode,
                      uint32_t cp, int bad)
{
    char e[16];
    int k;

    if (bad)
        k = mode == SWORN_UTF8_ESCAPE_JSON ? snprintf(e, sizeof(e), "\\ufffd")
                                           : snprintf(e, sizeof(e), "\\x%02x", (unsigned)cp);
    else if (cp <= 0xffff)
        k = snprintf(e, sizeof(e), "\\u%04x", (unsigned)cp);
    else if (mode == SWORN_UTF8_ESCAPE_TEXT)
        k = snprintf(e, sizeof(e), "\\U%08x", (unsigned)cp);
    else
        k = snprintf(e, sizeof(e), "\\u%04x\\u%04x", (unsigned)(0xd800 + ((cp - 0x10000) >> 10)),
                     (unsigned)(0xdc00 + ((cp - 0x10000) & 0x3ff)));
    return put(out, cap, n, e, (size_t)k);
}

size_t sworn_utf8_escape(const void *in, size_t len, enum sworn_utf8_escape_mode mode, char *out,
                         size_t cap)
{
    const uint8_t *p = in;
    size_t n = 0;
    int rc = 0;

    if (out == NULL || cap == 0)
        return (size_t)-1;
    for (size_t i = 0, k; rc == 0 && i < len; i += k) {
        uint32_t cp = 0;

        k = decode(p + i, len - i, &cp);
        if (k == 0) {
            k = 1;
            rc = put_escape(out, cap, &n, mode, p[i], 1);
        } else if (sworn_utf8_is_control(cp)) {
            rc = put_escape(out, cap, &n, mode, cp, 0);
        } else if (cp == '\\' && mode == SWORN_UTF8_ESCAPE_TEXT) {
            rc = put(out, cap, &n, "\\\\", 2);
        } else {
            rc = put(out, cap, &n, (const char *)p + i, k);
        }
    }
    out[n] = '\0';
    return rc == 0 ? n : (size_t)-1;
}

char *sworn_utf8_escape_dup(const char *in, enum sworn_utf8_escape_mode mode)
{
    size_t len = strlen(in), cap = SWORN_UTF8_ESCAPE_MAX(len);
    char *out = len < ((size_t)-1 - 1) / 6 ? malloc(cap) : NULL;

    if (out != NULL && sworn_utf8_escape(in, len, mode, out, cap) == (size_t)-1) {
        free(out);
        out = NULL;
    }
    return out;
}
