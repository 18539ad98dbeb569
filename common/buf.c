/*
 * buf.c -- the bounded reader of buf.h.
 */
#include "buf.h"

#include <string.h>

#include "err.h"

struct sworn_buf sworn_buf_init(const void *p, size_t len)
{
    struct sworn_buf b = {.p = p, .len = len, .off = 0};
    return b;
}

size_t sworn_buf_remaining(const struct sworn_buf *b)
{
    return b->len - b->off;
}

int sworn_buf_get_ptr(struct sworn_buf *b, size_t n, const uint8_t **ptr)
{
    if (n > sworn_buf_remaining(b))
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "input truncated: need %zu bytes at offset %zu, %zu left", n, b->off,
                             sworn_buf_remaining(b));
    *ptr = b->p + b->off;
    b->off += n;
    return 0;
}

int sworn_buf_get_bytes(struct sworn_buf *b, void *out, size_t n)
{
    const uint8_t *src = NULL;

    if (sworn_buf_get_ptr(b, n, &src) < 0)
        return -1;
    if (n > 0)
        memcpy(out, src, n);
    return 0;
}

int sworn_buf_get_u8(struct sworn_buf *b, uint8_t *v)
{
    return sworn_buf_get_bytes(b, v, 1);
}

int sworn_buf_get_u16be(struct sworn_buf *b, uint16_t *v)
{
    const uint8_t *s = NULL;

    if (sworn_buf_get_ptr(b, 2, &s) < 0)
        return -1;
    *v = (uint16_t)((unsigned)s[0] << 8 | s[1]);
    return 0;
}

int sworn_buf_get_u32be(struct sworn_buf *b, uint32_t *v)
{
    const uint8_t *s = NULL;

    if (sworn_buf_get_ptr(b, 4, &s) < 0)
        return -1;
    *v = (uint32_t)s[0] << 24 | (uint32_t)s[1] << 16 | (uint32_t)s[2] << 8 | s[3];
    return 0;
}

int sworn_buf_get_u64be(struct sworn_buf *b, uint64_t *v)
{
    const uint8_t *s = NULL;
    uint64_t r = 0;

    if (sworn_buf_get_ptr(b, 8, &s) < 0)
        return -1;
    for (int i = 0; i < 8; i++)
        r = r << 8 | s[i];
    *v = r;
    return 0;
}

int sworn_buf_get_line(struct sworn_buf *b, size_t max, const uint8_t **line, size_t *line_len)
{
    const uint8_t *start = b->p + b->off;
    size_t left = sworn_buf_remaining(b);
    size_t scan = left < max + 1 ? left : max + 1;
    const uint8_t *nl = scan > 0 ? memchr(start, '\n', scan) : NULL;

    if (nl == NULL) {
        if (scan == max + 1)
            return sworn_err_set(SWORN_ERR_FORMAT, "line at offset %zu longer than %zu bytes",
                                 b->off, max);
        return sworn_err_set(SWORN_ERR_FORMAT, "line at offset %zu has no terminating newline",
                             b->off);
    }
    *line = start;
    *line_len = (size_t)(nl - start);
    b->off += *line_len + 1;
    return 0;
}

void sworn_put_u16be(uint8_t out[2], uint16_t v)
{
    out[0] = (uint8_t)(v >> 8);
    out[1] = (uint8_t)v;
}

void sworn_put_u32be(uint8_t out[4], uint32_t v)
{
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(v >> (24 - 8 * i));
}

void sworn_put_u64be(uint8_t out[8], uint64_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (56 - 8 * i));
}
