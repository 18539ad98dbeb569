/*
 * buf.h -- one bounded reader for all untrusted bytes.
 *
 * A sworn_buf is a view of bytes that someone else owns (p, len) plus a read cursor (off). Every
 * getter checks that enough bytes remain before it reads; on failure it sets sworn_err to
 * SWORN_ERR_FORMAT, leaves the cursor where it was, writes nothing to its outputs and returns -1.
 * Parsers therefore never do pointer arithmetic on wire data of their own.
 *
 * Invariant: off <= len. The struct holds no pointer into itself, so it may be copied to save and
 * restore a position.
 *
 * Thread safety: a sworn_buf is used by one thread at a time; it never allocates.
 */
#ifndef SWORN_BUF_H
#define SWORN_BUF_H

#include <stddef.h>
#include <stdint.h>

struct sworn_buf {
    const uint8_t *p; /* the bytes; may be NULL only when len is 0 */
    size_t len;       /* how many bytes p holds */
    size_t off;       /* the next byte to read */
};

/* A reader over p[0..len), cursor at 0. */
struct sworn_buf sworn_buf_init(const void *p, size_t len);

/* How many bytes are left to read. */
size_t sworn_buf_remaining(const struct sworn_buf *b);

/* Big-endian fixed-size getters. OUT: *v only on success. */
int sworn_buf_get_u8(struct sworn_buf *b, uint8_t *v);
int sworn_buf_get_u16be(struct sworn_buf *b, uint16_t *v);
int sworn_buf_get_u32be(struct sworn_buf *b, uint32_t *v);
int sworn_buf_get_u64be(struct sworn_buf *b, uint64_t *v);

/* Copy the next n bytes into out (which holds at least n bytes). */
int sworn_buf_get_bytes(struct sworn_buf *b, void *out, size_t n);

/*
 * Take the next n bytes without copying: *ptr points into the buffer's own bytes and stays valid
 * as long as they do.
 */
int sworn_buf_get_ptr(struct sworn_buf *b, size_t n, const uint8_t **ptr);

/*
 * Take the next line: the bytes up to, not including, the next '\n', which is consumed too.
 * Fails (SWORN_ERR_FORMAT) when no '\n' remains or when the line would be longer than max bytes.
 * OUT: *line, *line_len point into the buffer.
 */
int sworn_buf_get_line(struct sworn_buf *b, size_t max, const uint8_t **line, size_t *line_len);

/* Big-endian writers for fixed-size fields into caller-owned memory. */
void sworn_put_u16be(uint8_t out[2], uint16_t v);
void sworn_put_u32be(uint8_t out[4], uint32_t v);
void sworn_put_u64be(uint8_t out[8], uint64_t v);

#endif
