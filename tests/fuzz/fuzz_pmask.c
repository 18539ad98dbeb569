/*
 * fuzz_pmask.c -- libFuzzer target for proxy/p_mask.c: the credential mask, in bytes mode and in
 * WebSocket mode (a parser of server frames). The input is what an upstream sends back; the
 * value masked is a fixed test secret holding letters, '/', '+', '=', ' ' and a control byte.
 * Asserted, for every input:
 *   - bytes mode: the output has the input's length, and is the same whether the input is fed at
 *     once, split at an input-chosen offset, or byte by byte, and the same as the in-place mask
 *     of the whole (masking never depends on how upstream's writes were cut);
 *   - WebSocket mode on the raw input: fed at once and byte by byte, the same answer, and on
 *     success the same output, of the input's length less the incomplete frame at its end;
 *   - a spelling of the secret (as is with letter case flipped, percent-encoded with mixed hex
 *     case, all of it or only some bytes, form-encoded, JSON-escaped), chosen by the input and
 *     put inside the input's bytes, comes out all '*' over its span, in bytes mode split at an
 *     input-chosen offset, and in WebSocket mode inside a message cut into fragments at
 *     input-chosen offsets with a ping between two of them; the framing comes out unchanged.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "fuzz.h"
#include "p_mask.h"

static const uint8_t SECRET[] = {'k', 'E', 'y', '/', '+', '=', ' ', '9', 0x01, 'z'};
#define SLEN sizeof(SECRET)
#define IN_MAX 4096

static uint8_t *flat(struct evbuffer *b, size_t *n)
{
    *n = evbuffer_get_length(b);
    return evbuffer_pullup(b, -1);
}

/* Feed p[0..n) in pieces of step bytes (0: at once), or cut once at cut; then flush. */
static int run(int ws, const uint8_t *p, size_t n, size_t step, size_t cut, struct evbuffer *out,
               size_t *incomplete)
{
    struct sworn_pmask m;
    int rc = 0;

    if (sworn_pmask_init(&m, SECRET, SLEN) != 0)
        abort();
    if (ws && sworn_pmask_websocket(&m) != 0)
        abort();
    if (step > 0) {
        for (size_t i = 0; i < n && rc == 0; i += step)
            rc = sworn_pmask_feed(&m, p + i, n - i < step ? n - i : step, out);
    } else {
        rc = sworn_pmask_feed(&m, p, cut, out);
        if (rc == 0)
            rc = sworn_pmask_feed(&m, p + cut, n - cut, out);
    }
    if (rc == 0) {
        rc = sworn_pmask_flush(&m, out);
        if (rc != 0 || sworn_pmask_pending(&m) != 0)
            abort();
    }
    *incomplete = m.ws ? m.hdr_len + (m.ws_phase == 2 ? m.ctl_len : 0) : 0;
    sworn_pmask_free(&m);
    return rc;
}

static void check_bytes(const uint8_t *p, size_t n, size_t cut)
{
    struct evbuffer *a = evbuffer_new(), *b = evbuffer_new(), *c = evbuffer_new();
    size_t na, nb, nc, inc;
    uint8_t *copy = malloc(n + 1);
    struct sworn_pmask m;

    if (a == NULL || b == NULL || c == NULL || copy == NULL)
        abort();
    if (run(0, p, n, 0, n, a, &inc) != 0 || run(0, p, n, 0, cut, b, &inc) != 0 ||
        run(0, p, n, 1, 0, c, &inc) != 0)
        abort();
    {
        const uint8_t *oa = flat(a, &na), *ob = flat(b, &nb), *oc = flat(c, &nc);

        if (na != n || nb != n || nc != n)
            abort();
        if (n > 0 && (memcmp(oa, ob, n) != 0 || memcmp(oa, oc, n) != 0))
            abort();
        memcpy(copy, p, n);
        if (sworn_pmask_init(&m, SECRET, SLEN) != 0)
            abort();
        sworn_pmask_inplace(&m, copy, n);
        sworn_pmask_free(&m);
        if (n > 0 && memcmp(oa, copy, n) != 0)
            abort();
    }
    free(copy);
    evbuffer_free(a);
    evbuffer_free(b);
    evbuffer_free(c);
}

static void check_ws_raw(const uint8_t *p, size_t n)
{
    struct evbuffer *a = evbuffer_new(), *b = evbuffer_new();
    size_t na, nb, ia, ib;
    int ra, rb;

    if (a == NULL || b == NULL)
        abort();
    ra = run(1, p, n, 0, n, a, &ia);
    rb = run(1, p, n, 1, 0, b, &ib);
    if (ra != rb)
        abort();
    if (ra == 0) {
        const uint8_t *oa = flat(a, &na), *ob = flat(b, &nb);

        if (na != nb || na + ia != n || ia != ib || (na > 0 && memcmp(oa, ob, na) != 0))
            abort();
    }
    evbuffer_free(a);
    evbuffer_free(b);
}

/* A spelling of the secret chosen by the bits of r; starts with 'k' or '%', so that no byte
 * before it can join its first byte into an escape. */
static size_t spell(uint64_t r, uint8_t *out)
{
    static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
    unsigned kind = (unsigned)(r & 7);
    size_t k = 0;

    r >>= 3;
    for (size_t i = 0; i < SLEN; i++, r = r >> 2 | r << 62) {
        uint8_t c = SECRET[i];
        int unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
        const char *hex = (r & 1) ? up : lo;

        if (kind == 0 || (kind == 4 && c != ' ' && c >= 0x20)) { /* as is, case flipped */
            out[k++] = (c >= 'a' && c <= 'z' && (r & 2))   ? (uint8_t)(c - 32)
                       : (c >= 'A' && c <= 'Z' && (r & 2)) ? (uint8_t)(c + 32)
                                                           : c;
        } else if (kind <= 4) { /* 1 percent, 2 percent all but the first, 3 form, 4 some */
            if ((kind == 1 || kind == 3 || kind == 4) && unreserved &&
                !(i > 0 && (r & 2) && kind == 1))
                out[k++] = c;
            else if (kind == 3 && c == ' ')
                out[k++] = '+';
            else if (kind == 2 && i == 0)
                out[k++] = c;
            else {
                out[k++] = '%';
                out[k++] = (uint8_t)hex[c >> 4];
                out[k++] = (uint8_t)hex[c & 15];
            }
        } else { /* JSON: 5 \/ escaped, 6 not, 7 every byte but the first as \u00XX */
            if (i == 0) {
                out[k++] = c;
            } else if (kind == 7 || c < 0x20) {
                out[k++] = '\\';
                out[k++] = 'u';
                out[k++] = '0';
                out[k++] = '0';
                out[k++] = (uint8_t)hex[c >> 4];
                out[k++] = (uint8_t)hex[c & 15];
            } else if (c == '/' && kind == 5) {
                out[k++] = '\\';
                out[k++] = '/';
            } else {
                out[k++] = c;
            }
        }
    }
    return k;
}

static int all_stars(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != '*')
            return 0;
    return 1;
}

static size_t ws_head(uint8_t *out, uint8_t b0, size_t n)
{
    out[0] = b0;
    if (n < 126) {
        out[1] = (uint8_t)n;
        return 2;
    }
    out[1] = 126;
    out[2] = (uint8_t)(n >> 8);
    out[3] = (uint8_t)n;
    return 4;
}

static void check_spelling(const uint8_t *p, size_t n)
{
    uint8_t sp[6 * SLEN], *msg, *frames;
    uint64_t r = 0;
    size_t sl, at, mlen, cut, fl = 0, nf;
    size_t cuts[4], ping_after;
    struct evbuffer *out = evbuffer_new();
    size_t olen, inc;
    const uint8_t *o;

    if (n < 12 || out == NULL) {
        evbuffer_free(out);
        return;
    }
    for (int i = 0; i < 8; i++)
        r = r << 8 | p[i];
    sl = spell(r, sp);
    at = ((size_t)p[8] << 8 | p[9]) % (n - 12 + 1);
    mlen = (n - 12) + sl;
    msg = malloc(mlen);
    frames = malloc(mlen + 64 + 2 + 4 * 4);
    if (msg == NULL || frames == NULL)
        abort();
    memcpy(msg, p + 12, at);
    memcpy(msg + at, sp, sl);
    memcpy(msg + at + sl, p + 12 + at, n - 12 - at);
    /* bytes mode, cut once */
    cut = ((size_t)p[10] << 8 | p[11]) % (mlen + 1);
    if (run(0, msg, mlen, 0, cut, out, &inc) != 0)
        abort();
    o = flat(out, &olen);
    if (olen != mlen || !all_stars(o + at, sl))
        abort();
    evbuffer_drain(out, olen);
    /* WebSocket mode: the message in up to 4 fragments, a ping after one of them */
    nf = 1 + p[10] % 4;
    for (size_t i = 0; i + 1 < nf; i++)
        cuts[i] = (size_t)p[i + 4] * mlen / 256;
    cuts[nf - 1] = mlen;
    for (size_t i = 1; i + 1 < nf; i++)
        if (cuts[i] < cuts[i - 1])
            cuts[i] = cuts[i - 1];
    ping_after = p[11] % nf;
    for (size_t i = 0, from = 0; i < nf; i++) {
        size_t len = cuts[i] - from;
        uint8_t b0 = (uint8_t)((i == 0 ? 0x01 : 0x00) | (i + 1 == nf ? 0x80 : 0x00));

        fl += ws_head(frames + fl, b0, len);
        memcpy(frames + fl, msg + from, len);
        fl += len;
        from = cuts[i];
        if (i == ping_after && i + 1 < nf) {
            fl += ws_head(frames + fl, 0x89, 4);
            memcpy(frames + fl, "ping", 4);
            fl += 4;
        }
    }
    cut = ((size_t)p[9] << 8 | p[10]) % (fl + 1);
    if (run(1, frames, fl, 0, cut, out, &inc) != 0)
        abort();
    o = flat(out, &olen);
    if (olen != fl || inc != 0)
        abort();
    {
        /* walk the output's frames: the same headers, the payload joined */
        uint8_t *joined = malloc(mlen + 1);
        size_t i = 0, jn = 0;

        if (joined == NULL)
            abort();
        while (i < olen) {
            size_t h = 2, len = o[i + 1] & 0x7f;

            if (len == 126) {
                len = (size_t)o[i + 2] << 8 | o[i + 3];
                h = 4;
            }
            if (memcmp(o + i, frames + i, h) != 0)
                abort();
            if (!(o[i] & 0x08)) {
                memcpy(joined + jn, o + i + h, len);
                jn += len;
            } else if (memcmp(o + i + h, "ping", 4) != 0) {
                abort();
            }
            i += h + len;
        }
        if (jn != mlen || !all_stars(joined + at, sl))
            abort();
        free(joined);
    }
    free(msg);
    free(frames);
    evbuffer_free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t cut;

    if (size > IN_MAX)
        return 0;
    cut = size > 0 ? data[0] % (size + 1) : 0;
    check_bytes(data, size, cut);
    check_ws_raw(data, size);
    check_spelling(data, size);
    return 0;
}
