/*
 * utf8.c -- the strict UTF-8 reader of utf8.h.
 */
#include "utf8.h"

#include "err.h"

int sworn_utf8_next(struct sworn_buf *b, uint32_t *cp)
{
    uint8_t c = 0, cc = 0;
    uint32_t v, min;
    int more;

    if (sworn_buf_get_u8(b, &c) < 0)
        return -1;
    if (c < 0x80) {
        *cp = c;
        return 0;
    }
    if ((c & 0xe0) == 0xc0) {
        more = 1;
        v = c & 0x1fu;
        min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        more = 2;
        v = c & 0x0fu;
        min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        more = 3;
        v = c & 0x07u;
        min = 0x10000;
    } else {
        return sworn_err_set(SWORN_ERR_FORMAT, "utf-8: invalid lead byte");
    }
    while (more-- > 0) {
        if (sworn_buf_get_u8(b, &cc) < 0 || (cc & 0xc0) != 0x80)
            return sworn_err_set(SWORN_ERR_FORMAT, "utf-8: truncated sequence");
        v = v << 6 | (cc & 0x3fu);
    }
    /* Overlong forms would give one character two encodings; surrogates are not characters. */
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return sworn_err_set(SWORN_ERR_FORMAT, "utf-8: overlong, surrogate or out of range");
    *cp = v;
    return 0;
}

int sworn_utf8_is_control(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7f;
}

int sworn_utf8_check(const void *p, size_t len, int allow_newline, const char *what)
{
    struct sworn_buf b = sworn_buf_init(p, len);

    while (sworn_buf_remaining(&b) > 0) {
        size_t at = b.off;
        uint32_t cp = 0;

        if (sworn_utf8_next(&b, &cp) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "%s: invalid UTF-8 at offset %zu", what, at);
        if (sworn_utf8_is_control(cp) && !(allow_newline && cp == '\n'))
            return sworn_err_set(SWORN_ERR_FORMAT, "%s: control byte 0x%02x at offset %zu", what,
                                 (unsigned)cp, at);
    }
    return 0;
}
