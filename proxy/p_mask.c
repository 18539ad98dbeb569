/*
 * p_mask.c -- masking the credential in upstream's bytes (p_mask.h).
 *
 * Two views of the bytes are matched against the value with Knuth-Morris-Pratt, each one step
 * per byte: the raw view (ASCII case folded) and the unescaped view (a small decoder of %XX and
 * JSON escapes in front of it). The unescaped view remembers, for each of the last len bytes it
 * produced, the raw offset it began at, so an occurrence found there is overwritten over the
 * raw span it came from. What must stay held is decided by the states: the earliest raw byte of
 * a partial match (or of an escape being read).
 */
#include "p_mask.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "encoding.h"
#include "err.h"
#include "wipe.h"

#define FEED_STEP 65536u /* bytes appended to the window at a time: bounds the window */

static uint8_t fold(uint8_t c)
{
    return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

/* The unescaped view also treats ' ' and '+' as one byte (form encoding). */
static uint8_t fold_dec(uint8_t c)
{
    c = fold(c);
    return c == ' ' ? '+' : c;
}

static void build_fail(const uint8_t *pat, uint32_t *fail, size_t len)
{
    size_t k = 0;

    fail[0] = 0;
    for (size_t i = 1; i < len; i++) {
        while (k > 0 && pat[i] != pat[k])
            k = fail[k - 1];
        if (pat[i] == pat[k])
            k++;
        fail[i] = (uint32_t)k;
    }
}

static size_t kmp(const uint8_t *pat, const uint32_t *fail, size_t len, size_t st, uint8_t b,
                  int *hit)
{
    while (st > 0 && pat[st] != b)
        st = fail[st - 1];
    if (pat[st] == b)
        st++;
    if (st == len) {
        *hit = 1;
        st = fail[len - 1];
    }
    return st;
}

static void scan_reset(struct sworn_pmask_scan *s)
{
    s->st_raw = s->st_dec = 0;
    s->npend = 0;
    s->lo = s->hi = 0;
}

/* Overwrite raw offsets [a, e) of buf (buf[0] is offset base), skipping what the last run
 * already covers, so that overlapping occurrences cost their new bytes only. Returns 1 when a
 * byte not yet overwritten was (an occurrence counted once, though both views find it). */
static int overwrite(struct sworn_pmask_scan *s, uint8_t *buf, uint64_t base, uint64_t a,
                     uint64_t e)
{
    if (a >= s->lo && e <= s->hi)
        return 0;
    if (e < s->lo || a > s->hi) {
        memset(buf + (a - base), '*', (size_t)(e - a));
        if (e >= s->hi) {
            s->lo = a;
            s->hi = e;
        }
        return 1;
    }
    if (a < s->lo) {
        memset(buf + (a - base), '*', (size_t)(s->lo - a));
        s->lo = a;
    }
    if (e > s->hi) {
        memset(buf + (s->hi - base), '*', (size_t)(e - s->hi));
        s->hi = e;
    }
    return 1;
}

struct scan_ctx {
    const struct sworn_pmask *m;
    struct sworn_pmask_scan *s;
    uint8_t *buf;
    uint64_t base;
    uint64_t found;
};

/* One byte of the unescaped view, standing for raw offsets [a, e). */
static void dec_emit(struct scan_ctx *x, uint8_t b, uint64_t a, uint64_t e)
{
    const struct sworn_pmask *m = x->m;
    struct sworn_pmask_scan *s = x->s;
    int hit = 0;

    s->ring[s->dcount % m->len] = a;
    s->dcount++;
    s->st_dec = kmp(m->pat_dec, m->fail_dec, m->len, s->st_dec, fold_dec(b), &hit);
    if (hit)
        x->found +=
            (uint64_t)overwrite(s, x->buf, x->base, s->ring[(s->dcount - m->len) % m->len], e);
}

/* The escape being read turned out not to be one: its bytes are themselves. */
static void dec_literal(struct scan_ctx *x)
{
    struct sworn_pmask_scan *s = x->s;
    size_t n = s->npend;

    s->npend = 0;
    for (size_t i = 0; i < n; i++)
        dec_emit(x, s->pend[i], s->pend_at + i, s->pend_at + i + 1);
}

/* The decoder: raw byte c at offset at. */
static void dec_byte(struct scan_ctx *x, uint8_t c, uint64_t at)
{
    struct sworn_pmask_scan *s = x->s;

    for (;;) {
        if (s->npend == 0) {
            if (c == '%' || c == '\\') {
                s->pend[0] = c;
                s->npend = 1;
                s->pend_at = at;
                return;
            }
            dec_emit(x, c, at, at + 1);
            return;
        }
        if (s->pend[0] == '%') {
            if (sworn_hex_digit((char)c) >= 0) {
                if (s->npend == 1) {
                    s->pend[s->npend++] = c;
                    return;
                }
                s->npend = 0;
                dec_emit(
                    x, (uint8_t)(sworn_hex_digit((char)s->pend[1]) << 4 | sworn_hex_digit((char)c)),
                    s->pend_at, at + 1);
                return;
            }
        } else if (s->npend == 1) {
            uint8_t v;

            switch (c) {
            case '/':
            case '"':
            case '\\':
                v = c;
                break;
            case 'b':
                v = '\b';
                break;
            case 'f':
                v = '\f';
                break;
            case 'n':
                v = '\n';
                break;
            case 'r':
                v = '\r';
                break;
            case 't':
                v = '\t';
                break;
            case 'u':
                s->pend[s->npend++] = c;
                return;
            default:
                goto literal;
            }
            s->npend = 0;
            dec_emit(x, v, s->pend_at, at + 1);
            return;
        } else if (sworn_hex_digit((char)c) >= 0) {
            unsigned v = 0;

            s->pend[s->npend++] = c;
            if (s->npend < 6)
                return;
            for (size_t i = 2; i < 6; i++)
                v = v << 4 | (unsigned)sworn_hex_digit((char)s->pend[i]);
            if (v <= 0xFF) {
                s->npend = 0;
                dec_emit(x, (uint8_t)v, s->pend_at, at + 1);
            } else {
                dec_literal(x); /* c included: nothing to read again */
            }
            return;
        }
    literal:
        dec_literal(x);
        /* and c afresh: it may begin an escape */
    }
}

/* Both views over buf[from..to); buf[i] is at raw offset base + i. */
static uint64_t scan(const struct sworn_pmask *m, struct sworn_pmask_scan *s, uint8_t *buf,
                     uint64_t base, size_t from, size_t to)
{
    struct scan_ctx x = {m, s, buf, base, 0};

    for (size_t i = from; i < to; i++) {
        uint8_t c;
        int hit = 0;

        if (s->st_raw == 0 && s->st_dec == 0 && s->npend == 0) {
            while (i < to && !m->start[buf[i]])
                i++;
            if (i == to)
                break;
        }
        c = buf[i];
        s->st_raw = kmp(m->pat_raw, m->fail_raw, m->len, s->st_raw, fold(c), &hit);
        if (hit)
            x.found += (uint64_t)overwrite(s, buf, base, base + i + 1 - m->len, base + i + 1);
        dec_byte(&x, c, base + i);
    }
    return x.found;
}

/* The raw offset of the first byte that may still be part of an occurrence. */
static uint64_t hold_from(const struct sworn_pmask *m, const struct sworn_pmask_scan *s,
                          uint64_t total)
{
    uint64_t h = total - s->st_raw;

    if (s->st_dec > 0) {
        uint64_t a = s->ring[(s->dcount - s->st_dec) % m->len];

        if (a < h)
            h = a;
    }
    if (s->npend > 0 && s->pend_at < h)
        h = s->pend_at;
    return h;
}

int sworn_pmask_init(struct sworn_pmask *m, const uint8_t *value, size_t len)
{
    memset(m, 0, sizeof(*m));
    if (len == 0)
        return 0;
    SWORN_ENSURE(len <= SWORN_PMASK_VALUE_MAX, SWORN_ERR_RANGE,
                 "a credential of %zu bytes is too long to mask (at most %u)", len,
                 SWORN_PMASK_VALUE_MAX);
    m->pat_raw = malloc(len);
    m->pat_dec = malloc(len);
    m->fail_raw = malloc(len * sizeof(uint32_t));
    m->fail_dec = malloc(len * sizeof(uint32_t));
    m->s.ring = malloc(len * sizeof(uint64_t));
    m->scratch.ring = malloc(len * sizeof(uint64_t));
    m->len = len; /* so that sworn_pmask_free frees what was allocated */
    SWORN_ENSURE(m->pat_raw != NULL && m->pat_dec != NULL && m->fail_raw != NULL &&
                     m->fail_dec != NULL && m->s.ring != NULL && m->scratch.ring != NULL,
                 SWORN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < len; i++) {
        m->pat_raw[i] = fold(value[i]);
        m->pat_dec[i] = fold_dec(value[i]);
    }
    build_fail(m->pat_raw, m->fail_raw, len);
    build_fail(m->pat_dec, m->fail_dec, len);
    for (unsigned b = 0; b < 256; b++)
        m->start[b] = fold((uint8_t)b) == m->pat_raw[0] || fold_dec((uint8_t)b) == m->pat_dec[0] ||
                      b == '%' || b == '\\';
    return 0;
fail:
    sworn_pmask_free(m);
    return -1;
}

int sworn_pmask_active(const struct sworn_pmask *m)
{
    return m->len > 0;
}

size_t sworn_pmask_pending(const struct sworn_pmask *m)
{
    return (size_t)(m->wbase + m->wlen - m->emitted) + (m->side_len - m->side_off);
}

int sworn_pmask_websocket(struct sworn_pmask *m)
{
    if (m->len == 0)
        return 0;
    if (sworn_pmask_pending(m) > 0 || m->broken)
        return sworn_err_set(SWORN_ERR_ARG, "the mask switched to WebSocket frames mid-stream");
    m->ws = 1;
    m->ws_phase = 0;
    m->hdr_len = 0;
    m->in_message = 0;
    scan_reset(&m->s);
    return 0;
}

size_t sworn_pmask_inplace(struct sworn_pmask *m, uint8_t *p, size_t n)
{
    uint64_t found;

    if (m->len == 0)
        return 0;
    scan_reset(&m->scratch);
    found = scan(m, &m->scratch, p, 0, 0, n);
    scan_reset(&m->scratch);
    m->masked += found;
    return (size_t)found;
}

/* Wipe and free a buffer that may hold part of the value. */
static void wipe_free(void *p, size_t n)
{
    if (p != NULL) {
        sworn_memzero(p, n);
        free(p);
    }
}

/* Grow-or-compact a buffer of which [off, len) is live so that k more bytes fit after it. */
static int make_room(uint8_t **buf, size_t *cap, size_t *off, size_t *len, size_t k)
{
    size_t live = *len - *off, want;
    uint8_t *nb;

    if (*len + k <= *cap)
        return 0;
    if (live + k <= *cap) {
        memmove(*buf, *buf + *off, live);
        *off = 0;
        *len = live;
        return 0;
    }
    want = *cap * 2 > live + k ? *cap * 2 : live + k;
    if (want < 4096)
        want = 4096;
    nb = malloc(want);
    if (nb == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    if (live > 0)
        memcpy(nb, *buf + *off, live);
    wipe_free(*buf, *cap);
    *buf = nb;
    *cap = want;
    *off = 0;
    *len = live;
    return 0;
}

/* Append payload p[0..k) to the window and match it. */
static int stream_append(struct sworn_pmask *m, const uint8_t *p, size_t k)
{
    size_t off = (size_t)(m->emitted - m->wbase);

    if (make_room(&m->work, &m->wcap, &off, &m->wlen, k) != 0)
        return -1;
    if (off == 0)
        m->wbase = m->emitted; /* (compacted:) the live bytes begin the buffer */
    memcpy(m->work + m->wlen, p, k);
    m->masked += scan(m, &m->s, m->work, m->wbase, m->wlen, m->wlen + k);
    m->wlen += k;
    return 0;
}

static int add(struct evbuffer *out, const uint8_t *p, size_t n)
{
    if (n > 0 && evbuffer_add(out, p, n) != 0)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    return 0;
}

/* Send the window's payload from where it was sent to offset upto. */
static int add_payload(struct sworn_pmask *m, struct evbuffer *out, uint64_t upto)
{
    if (upto <= m->emitted)
        return 0;
    if (add(out, m->work + (m->emitted - m->wbase), (size_t)(upto - m->emitted)) != 0)
        return -1;
    m->emitted = upto;
    return 0;
}

/* Send payload up to offset upto, with the frame headers and control frames that come before
 * it (or at it) in the stream. */
static int emit(struct sworn_pmask *m, struct evbuffer *out, uint64_t upto)
{
    while (m->chunk_off < m->nchunks && m->chunks[m->chunk_off].at <= upto) {
        const struct sworn_pmask_chunk *ch = &m->chunks[m->chunk_off];

        if (add_payload(m, out, ch->at) != 0 || add(out, m->side + m->side_off, ch->len) != 0)
            return -1;
        m->side_off += ch->len;
        m->chunk_off++;
    }
    if (m->chunk_off == m->nchunks)
        m->chunk_off = m->nchunks = m->side_off = m->side_len = 0;
    return add_payload(m, out, upto);
}

static int emit_ready(struct sworn_pmask *m, struct evbuffer *out)
{
    return emit(m, out, hold_from(m, &m->s, m->wbase + m->wlen));
}

/* Queue framing bytes p[0..k) to go out after the payload fed so far. */
static int side_add(struct sworn_pmask *m, const uint8_t *p, size_t k)
{
    size_t queued = m->side_len - m->side_off;

    if (queued + k > SWORN_PMASK_WS_SIDE_MAX)
        return sworn_err_set(SWORN_ERR_RANGE,
                             "more than %u bytes of WebSocket framing inside what may be the "
                             "credential",
                             SWORN_PMASK_WS_SIDE_MAX);
    if (make_room(&m->side, &m->side_cap, &m->side_off, &m->side_len, k) != 0)
        return -1;
    memcpy(m->side + m->side_len, p, k);
    m->side_len += k;
    if (m->nchunks == m->chunk_cap) {
        size_t live = m->nchunks - m->chunk_off;

        if (m->chunk_off > 0) {
            memmove(m->chunks, m->chunks + m->chunk_off, live * sizeof(*m->chunks));
        } else {
            size_t want = m->chunk_cap ? m->chunk_cap * 2 : 16;
            struct sworn_pmask_chunk *nc = realloc(m->chunks, want * sizeof(*nc));

            if (nc == NULL)
                return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
            m->chunks = nc;
            m->chunk_cap = want;
        }
        m->chunk_off = 0;
        m->nchunks = live;
    }
    m->chunks[m->nchunks].at = m->wbase + m->wlen;
    m->chunks[m->nchunks].len = k;
    m->nchunks++;
    return 0;
}

static int bad_frame(struct sworn_pmask *m, const char *why)
{
    m->broken = 1;
    return sworn_err_set(SWORN_ERR_FORMAT, "the upstream's WebSocket frames are refused: %s", why);
}

/* The first two bytes of a frame header are in: check what they say. */
static int ws_check_start(struct sworn_pmask *m)
{
    uint8_t b0 = m->hdr[0], b1 = m->hdr[1], op = b0 & 0x0F, l7 = b1 & 0x7F;
    int fin = (b0 & 0x80) != 0, control = (op & 0x08) != 0;

    if (b0 & 0x70)
        return bad_frame(m, "a reserved bit is set (no extension is in use)");
    if ((op >= 3 && op <= 7) || op >= 11)
        return bad_frame(m, "a reserved opcode");
    if (b1 & 0x80)
        return bad_frame(m, "a frame from the server is masked");
    if (control && (!fin || l7 > 125))
        return bad_frame(m, "a control frame fragmented or over 125 bytes");
    if (op == 0 && !m->in_message)
        return bad_frame(m, "a continuation frame without a message begun");
    if ((op == 1 || op == 2) && m->in_message)
        return bad_frame(m, "a new message inside a fragmented one");
    m->hdr_need = 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0);
    return 0;
}

/* A control frame is whole: mask its payload on its own and queue it. */
static int ws_control_done(struct sworn_pmask *m, struct evbuffer *out)
{
    sworn_pmask_inplace(m, m->ctl + 2, m->ctl_need - 2);
    if (side_add(m, m->ctl, m->ctl_need) != 0)
        return -1;
    sworn_memzero(m->ctl, sizeof(m->ctl));
    m->ws_phase = 0;
    return emit_ready(m, out);
}

/* A frame header is whole. */
static int ws_header_done(struct sworn_pmask *m, struct evbuffer *out)
{
    uint8_t op = m->hdr[0] & 0x0F, l7 = m->hdr[1] & 0x7F;
    uint64_t len = l7;

    m->hdr_len = 0;
    if (l7 == 126) {
        len = (uint64_t)m->hdr[2] << 8 | m->hdr[3];
        if (len < 126)
            return bad_frame(m, "a length not in its shortest form");
    } else if (l7 == 127) {
        len = 0;
        for (int i = 2; i < 10; i++)
            len = len << 8 | m->hdr[i];
        if (len >> 63)
            return bad_frame(m, "a 64-bit length with the top bit set");
        if (len <= 0xFFFF)
            return bad_frame(m, "a length not in its shortest form");
    }
    if (op & 0x08) {
        memcpy(m->ctl, m->hdr, 2);
        m->ctl_len = 2;
        m->ctl_need = 2 + (size_t)len;
        m->ws_phase = 2;
        return len == 0 ? ws_control_done(m, out) : 0;
    }
    m->in_message = (m->hdr[0] & 0x80) == 0;
    if (side_add(m, m->hdr, m->hdr_need) != 0)
        return -1;
    m->remaining = len;
    m->ws_phase = len > 0 ? 1 : 0;
    return emit_ready(m, out);
}

static int ws_feed(struct sworn_pmask *m, const uint8_t *p, size_t n, struct evbuffer *out)
{
    size_t i = 0;

    while (i < n) {
        if (m->ws_phase == 0) {
            m->hdr[m->hdr_len++] = p[i++];
            if (m->hdr_len == 2 && ws_check_start(m) != 0)
                return -1;
            if (m->hdr_len >= 2 && m->hdr_len == m->hdr_need && ws_header_done(m, out) != 0)
                return -1;
        } else if (m->ws_phase == 1) {
            size_t k = n - i;

            if (k > m->remaining)
                k = (size_t)m->remaining;
            if (k > FEED_STEP)
                k = FEED_STEP;
            if (stream_append(m, p + i, k) != 0)
                return -1;
            i += k;
            m->remaining -= k;
            if (m->remaining == 0)
                m->ws_phase = 0;
            if (emit_ready(m, out) != 0)
                return -1;
        } else {
            size_t k = m->ctl_need - m->ctl_len;

            if (k > n - i)
                k = n - i;
            memcpy(m->ctl + m->ctl_len, p + i, k);
            m->ctl_len += k;
            i += k;
            if (m->ctl_len == m->ctl_need && ws_control_done(m, out) != 0)
                return -1;
        }
    }
    return 0;
}

int sworn_pmask_feed(struct sworn_pmask *m, const uint8_t *p, size_t n, struct evbuffer *out)
{
    if (m->len == 0)
        return add(out, p, n);
    if (m->broken)
        return sworn_err_set(SWORN_ERR_FORMAT, "the masked stream is broken");
    if (m->ws) {
        if (ws_feed(m, p, n, out) != 0) {
            m->broken = 1;
            return -1;
        }
        return 0;
    }
    for (size_t i = 0; i < n;) {
        size_t k = n - i < FEED_STEP ? n - i : FEED_STEP;

        if (stream_append(m, p + i, k) != 0 || emit_ready(m, out) != 0) {
            m->broken = 1;
            return -1;
        }
        i += k;
    }
    return 0;
}

int sworn_pmask_flush(struct sworn_pmask *m, struct evbuffer *out)
{
    if (m->len == 0)
        return 0;
    if (m->broken)
        return sworn_err_set(SWORN_ERR_FORMAT, "the masked stream is broken");
    if (emit(m, out, m->wbase + m->wlen) != 0)
        return -1;
    scan_reset(&m->s);
    return 0;
}

void sworn_pmask_free(struct sworn_pmask *m)
{
    wipe_free(m->pat_raw, m->len);
    wipe_free(m->pat_dec, m->len);
    wipe_free(m->fail_raw, m->len * sizeof(uint32_t));
    wipe_free(m->fail_dec, m->len * sizeof(uint32_t));
    free(m->s.ring);
    free(m->scratch.ring);
    wipe_free(m->work, m->wcap);
    wipe_free(m->side, m->side_cap);
    free(m->chunks);
    sworn_memzero(m, sizeof(*m));
}
