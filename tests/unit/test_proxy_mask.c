/*
 * test_proxy_mask.c -- proxy/p_mask.c: the credential masked in what upstream sends back.
 *
 * Every spelling the header promises (as is in any letter case, percent-encoded with either hex
 * case or a mix, only some bytes encoded, form-encoded, JSON-escaped), each fed whole, split at
 * every byte offset and byte by byte: the output has the input's length, the spelling's span
 * is all '*', the bytes around it are untouched. The WebSocket mode: a value split across
 * fragments, across messages, with a ping between the parts; the output's framing byte for
 * byte the input's; malformed frame streams refused. What is held back, and the flush.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>

#include "err.h"
#include "p_mask.h"

#define VALUE "real/query+secret=9b2e11aa"

/* prefix, n stars, suffix: what a masked value looks like */
static const char *starred(const char *pre, size_t n, const char *post)
{
    static char buf[8][512];
    static int next;
    char *b = buf[next++ % 8];

    snprintf(b, 512, "%s%.*s%s", pre, (int)n,
             "****************************************************************", post);
    return b;
}

/* --- helpers ------------------------------------------------------------------------------ */

struct out {
    uint8_t *p;
    size_t n;
};

/* Feed in[0..n) cut at the offsets cuts[0..ncuts) (increasing), then flush. */
static struct out run_cuts(struct sworn_pmask *m, const uint8_t *in, size_t n, const size_t *cuts,
                           size_t ncuts)
{
    struct evbuffer *b = evbuffer_new();
    struct out o;
    size_t at = 0;

    assert_non_null(b);
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : n;

        assert_int_equal(sworn_pmask_feed(m, in + at, end - at, b), 0);
        at = end;
    }
    assert_int_equal(sworn_pmask_flush(m, b), 0);
    assert_int_equal(sworn_pmask_pending(m), 0);
    o.n = evbuffer_get_length(b);
    o.p = malloc(o.n + 1);
    assert_non_null(o.p);
    evbuffer_remove(b, o.p, o.n);
    o.p[o.n] = '\0';
    evbuffer_free(b);
    return o;
}

static int all_stars(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != '*')
            return 0;
    return 1;
}

/* prefix + spelling + suffix, masked whole, cut once at every offset, and byte by byte. */
static void check_spelling(const char *value, size_t vlen, const char *spelling)
{
    static const char pre[] = "x=\"", post[] = "\" tail";
    size_t sl = strlen(spelling), n = strlen(pre) + sl + strlen(post);
    uint8_t *in = malloc(n);
    size_t *cuts = malloc(n * sizeof(size_t));

    assert_non_null(in);
    assert_non_null(cuts);
    memcpy(in, pre, strlen(pre));
    memcpy(in + strlen(pre), spelling, sl);
    memcpy(in + strlen(pre) + sl, post, strlen(post));
    for (size_t i = 0; i < n; i++)
        cuts[i] = i;
    for (size_t way = 0; way < n + 2; way++) {
        struct sworn_pmask m;
        struct out o;

        assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)value, vlen), 0);
        if (way == 0)
            o = run_cuts(&m, in, n, NULL, 0);
        else if (way == 1)
            o = run_cuts(&m, in, n, cuts + 1, n - 1);
        else
            o = run_cuts(&m, in, n, &cuts[way - 2], 1);
        if (o.n != n || memcmp(o.p, pre, strlen(pre)) != 0 || !all_stars(o.p + strlen(pre), sl) ||
            memcmp(o.p + strlen(pre) + sl, post, strlen(post)) != 0)
            fail_msg("spelling %s, way %zu: got %s", spelling, way, (const char *)o.p);
        assert_true(m.masked >= 1);
        free(o.p);
        sworn_pmask_free(&m);
    }
    /* and in place (a response head) */
    {
        struct sworn_pmask m;

        assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)value, vlen), 0);
        assert_true(sworn_pmask_inplace(&m, in, n) >= 1);
        assert_true(all_stars(in + strlen(pre), sl));
        assert_memory_equal(in, pre, strlen(pre));
        sworn_pmask_free(&m);
    }
    free(in);
    free(cuts);
}

static void percent(const uint8_t *v, size_t n, int upper, int all, int keep_slash, int form,
                    char *out)
{
    const char *hex = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        uint8_t c = v[i];
        int unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';

        if (form && c == ' ')
            out[k++] = '+';
        else if ((unreserved && !all) || (keep_slash && c == '/'))
            out[k++] = (char)c;
        else {
            out[k++] = '%';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        }
    }
    out[k] = '\0';
}

static void json(const uint8_t *v, size_t n, int escape_slash, char *out)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        uint8_t c = v[i];

        if (c == '/' && escape_slash) {
            out[k++] = '\\';
            out[k++] = '/';
        } else if (c == '"' || c == '\\') {
            out[k++] = '\\';
            out[k++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            k += (size_t)sprintf(out + k, "\\u%04x", c);
        } else {
            out[k++] = (char)c;
        }
    }
    out[k] = '\0';
}

/* --- the spellings ------------------------------------------------------------------------ */

static void test_as_is_any_case(void **state)
{
    (void)state;
    check_spelling(VALUE, strlen(VALUE), VALUE);
    check_spelling(VALUE, strlen(VALUE), "REAL/QUERY+SECRET=9B2E11AA");
    check_spelling(VALUE, strlen(VALUE), "Real/Query+Secret=9b2E11aA");
    check_spelling("Bearer X", 8, "bearer x");
}

static void test_percent_encoded(void **state)
{
    const uint8_t *v = (const uint8_t *)VALUE;
    char enc[512];

    (void)state;
    percent(v, strlen(VALUE), 1, 0, 0, 0, enc);
    assert_string_equal(enc, "real%2Fquery%2Bsecret%3D9b2e11aa");
    check_spelling(VALUE, strlen(VALUE), enc);
    percent(v, strlen(VALUE), 0, 0, 0, 0, enc);
    check_spelling(VALUE, strlen(VALUE), enc);
    check_spelling(VALUE, strlen(VALUE), "real%2fquery%2Bsecret%3d9b2e11aa"); /* mixed hex case */
    percent(v, strlen(VALUE), 1, 1, 0, 0, enc); /* every byte, unreserved too */
    check_spelling(VALUE, strlen(VALUE), enc);
    percent(v, strlen(VALUE), 1, 0, 1, 0, enc); /* Django's safe="/" */
    assert_string_equal(enc, "real/query%2Bsecret%3D9b2e11aa");
    check_spelling(VALUE, strlen(VALUE), enc);
    check_spelling(VALUE, strlen(VALUE), "REAL%2FQUERY%2BSECRET%3D9B2E11AA"); /* upper-cased echo */
    /* a '%' in the value itself, raw and encoded; "%%" and a broken escape before it */
    check_spelling("a%41b", 5, "a%41b");
    check_spelling("a%41b", 5, "a%2541b");
}

/* Masked in place: what a broken or foreign escape next to the value does. */
static void inplace_is(const char *value, const char *in, const char *want)
{
    struct sworn_pmask m;
    char buf[256];

    snprintf(buf, sizeof(buf), "%s", in);
    assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)value, strlen(value)), 0);
    sworn_pmask_inplace(&m, (uint8_t *)buf, strlen(buf));
    if (strcmp(buf, want) != 0)
        fail_msg("%s in %s: got %s, not %s", value, in, buf, want);
    sworn_pmask_free(&m);
}

static void test_escape_edges(void **state)
{
    (void)state;
    inplace_is("zz", "%2zz", "%2**");
    inplace_is("zz/c", "%%zz%2Fc", "%%******");
    inplace_is("ab", "%ab", "%**");        /* the raw view finds what the unescaped hides */
    inplace_is("ab", "\\\\ab", "\\\\**");  /* an escaped backslash before it */
    inplace_is("u", "\\u00e9", "\\*00e9"); /* the raw 'u' of an escape */
    inplace_is("x/", "\\u0078\\u002F!", "************!");
    inplace_is("x\\u0100", "x\\u0100", "*******"); /* above 00FF: left as it is */
}

static void test_form_encoded(void **state)
{
    char enc[512];

    (void)state;
    percent((const uint8_t *)"my secret/key=1", 15, 1, 0, 0, 1, enc);
    assert_string_equal(enc, "my+secret%2Fkey%3D1");
    check_spelling("my secret/key=1", 15, enc);
    check_spelling("my secret/key=1", 15, "my%20secret%2fkey%3d1");
    check_spelling("a+b", 3, "a%2Bb");
    check_spelling("a+b", 3, "a+b");
}

static void test_json_escaped(void **state)
{
    static const uint8_t ctl[] = {'k', 0x01, '/', '"', '\\', 0xe9, 'z'};
    char enc[512];

    (void)state;
    json((const uint8_t *)VALUE, strlen(VALUE), 1, enc);
    assert_string_equal(enc, "real\\/query+secret=9b2e11aa");
    check_spelling(VALUE, strlen(VALUE), enc);
    check_spelling(VALUE, strlen(VALUE), "real\\u002fquery\\u002Bsecret=9b2e11aa");
    json(ctl, sizeof(ctl), 1, enc);
    assert_string_equal(enc, "k\\u0001\\/\\\"\\\\\\u00e9z");
    check_spelling((const char *)ctl, sizeof(ctl), enc);
    json(ctl, sizeof(ctl), 0, enc);
    check_spelling((const char *)ctl, sizeof(ctl), enc);
    check_spelling("a\nb\tc", 5, "a\\nb\\tc");
    /* the raw spelling of a value holding a backslash is still found */
    check_spelling("x\\ny", 4, "x\\ny");
}

/* Overlapping and repeated occurrences are all overwritten; nothing else is. */
static void test_overlaps_and_neighbours(void **state)
{
    struct sworn_pmask m;
    uint8_t buf[] = "aaaXaaaaa-aab";
    size_t n = strlen((char *)buf);

    (void)state;
    assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)"aa", 2), 0);
    assert_true(sworn_pmask_inplace(&m, buf, n) >= 5);
    assert_string_equal((char *)buf, "***X*****-**b");
    sworn_pmask_free(&m);
}

/* A 16384-byte value, spelled all \u00XX (6 x), split in a few places; the hold-back bound. */
static void test_long_value(void **state)
{
    enum { L = 16384 };
    uint8_t *v = malloc(L);
    char *enc = malloc(6 * L + 1);
    size_t cuts[3];
    struct sworn_pmask m;
    struct out o;
    struct evbuffer *b = evbuffer_new();

    (void)state;
    assert_non_null(v);
    assert_non_null(enc);
    for (size_t i = 0; i < L; i++)
        v[i] = (uint8_t)(0x80 + (i * 7919) % 128);
    json(v, L, 1, enc);
    assert_int_equal(strlen(enc), 6 * L);
    cuts[0] = 1;
    cuts[1] = 3 * L + 2;
    cuts[2] = 6 * L - 1;
    assert_int_equal(sworn_pmask_init(&m, v, L), 0);
    o = run_cuts(&m, (const uint8_t *)enc, 6 * L, cuts, 3);
    assert_int_equal(o.n, 6 * L);
    assert_true(all_stars(o.p, o.n));
    free(o.p);
    sworn_pmask_free(&m);
    /* everything but the last byte: held back at most 6 L - 1 */
    assert_int_equal(sworn_pmask_init(&m, v, L), 0);
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)enc, 6 * L - 1, b), 0);
    assert_int_equal(sworn_pmask_pending(&m) + evbuffer_get_length(b), 6 * L - 1);
    assert_true(sworn_pmask_pending(&m) <= 6 * L - 1);
    sworn_pmask_free(&m);
    /* too long a value is refused, not passed unmasked */
    assert_int_equal(sworn_pmask_init(&m, v, SWORN_PMASK_VALUE_MAX + 1), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    evbuffer_free(b);
    free(v);
    free(enc);
}

/* --- holding back and flushing ------------------------------------------------------------- */

static void test_hold_back_only_prefixes(void **state)
{
    struct sworn_pmask m;
    struct evbuffer *b = evbuffer_new();

    (void)state;
    assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)VALUE, strlen(VALUE)), 0);
    /* a short message that cannot begin the value: not held at all */
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)"auth=*", 6, b), 0);
    assert_int_equal(evbuffer_get_length(b), 6);
    assert_int_equal(sworn_pmask_pending(&m), 0);
    /* the start of the value: held; an escape begun: held */
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)" auth=real%2", 12, b), 0);
    assert_int_equal(evbuffer_get_length(b), 12);
    assert_int_equal(sworn_pmask_pending(&m), 6);
    /* the flush (the stream went quiet) sends it and forgets the partial match */
    assert_int_equal(sworn_pmask_flush(&m, b), 0);
    assert_int_equal(sworn_pmask_pending(&m), 0);
    assert_int_equal(evbuffer_get_length(b), 18);
    /* the trade-off documented: the rest of the value after a flush is not caught */
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)"Fquery+secret=9b2e11aa", 22, b), 0);
    assert_int_equal(sworn_pmask_flush(&m, b), 0);
    assert_int_equal(evbuffer_get_length(b), 40);
    assert_int_equal(m.masked, 0);
    sworn_pmask_free(&m);
    /* an inactive mask passes everything at once */
    assert_int_equal(sworn_pmask_init(&m, NULL, 0), 0);
    assert_false(sworn_pmask_active(&m));
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)"real", 4, b), 0);
    assert_int_equal(sworn_pmask_pending(&m), 0);
    assert_int_equal(sworn_pmask_websocket(&m), 0);
    sworn_pmask_free(&m);
    evbuffer_free(b);
}

/* --- WebSocket frames ---------------------------------------------------------------------- */

static size_t frame(uint8_t *out, uint8_t b0, const void *payload, uint64_t n, int form)
{
    size_t k = 0;

    out[k++] = b0;
    if (form == 0 && n < 126) {
        out[k++] = (uint8_t)n;
    } else if (form <= 1 && n <= 0xFFFF) {
        out[k++] = 126;
        out[k++] = (uint8_t)(n >> 8);
        out[k++] = (uint8_t)n;
    } else {
        out[k++] = 127;
        for (int i = 7; i >= 0; i--)
            out[k++] = (uint8_t)(n >> (8 * i));
    }
    if (payload != NULL)
        memcpy(out + k, payload, (size_t)n);
    return k + (payload != NULL ? (size_t)n : 0);
}

/* Parse a server frame stream; the headers and the joined data payload. */
static void parse_frames(const uint8_t *p, size_t n, uint8_t *hdrs, size_t *nh, uint8_t *data,
                         size_t *nd, uint8_t *ctl, size_t *nc)
{
    size_t i = 0;

    *nh = *nd = *nc = 0;
    while (i < n) {
        size_t h = 2, len = p[i + 1] & 0x7f;

        if (len == 126) {
            len = (size_t)p[i + 2] << 8 | p[i + 3];
            h = 4;
        }
        assert_true(len < 126 || h == 4);
        memcpy(hdrs + *nh, p + i, h);
        *nh += h;
        if (p[i] & 0x08) {
            memcpy(ctl + *nc, p + i + h, len);
            *nc += len;
        } else {
            memcpy(data + *nd, p + i + h, len);
            *nd += len;
        }
        i += h + len;
    }
    assert_int_equal(i, n);
}

/* The input's framing, the output's framing: the same bytes; the payload masked. */
static void check_ws(const uint8_t *in, size_t n, const char *want_data, const char *want_ctl)
{
    static uint8_t h1[4096], h2[4096], d1[4096], d2[4096], c1[4096], c2[4096];
    size_t nh1, nh2, nd1, nd2, nc1, nc2;

    parse_frames(in, n, h1, &nh1, d1, &nd1, c1, &nc1);
    for (size_t way = 0; way < n + 2; way++) {
        struct sworn_pmask m;
        struct out o;
        size_t cut = way >= 2 ? way - 2 : 0, cuts[4096];

        for (size_t i = 0; i < n; i++)
            cuts[i] = i + 1;
        assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)VALUE, strlen(VALUE)), 0);
        assert_int_equal(sworn_pmask_websocket(&m), 0);
        o = way == 0   ? run_cuts(&m, in, n, NULL, 0)
            : way == 1 ? run_cuts(&m, in, n, cuts, n - 1)
                       : run_cuts(&m, in, n, &cut, 1);
        assert_int_equal(o.n, n);
        parse_frames(o.p, o.n, h2, &nh2, d2, &nd2, c2, &nc2);
        assert_int_equal(nh1, nh2);
        assert_memory_equal(h1, h2, nh1);
        d2[nd2] = c2[nc2] = '\0';
        if (strcmp((char *)d2, want_data) != 0 || strcmp((char *)c2, want_ctl) != 0)
            fail_msg("way %zu: data \"%s\", control \"%s\"", way, d2, c2);
        free(o.p);
        sworn_pmask_free(&m);
    }
}

static void test_ws_fragments_and_frames(void **state)
{
    uint8_t in[4096];
    size_t n = 0;

    (void)state;
    /* one frame */
    n = frame(in, 0x81, "auth=" VALUE, 5 + strlen(VALUE), 0);
    check_ws(in, n, starred("auth=", 26, ""), "");
    /* two fragments split inside the value, a ping (holding the value) between them */
    n = frame(in, 0x01, "auth=real/qu", 12, 0);
    n += frame(in + n, 0x89, "ping " VALUE, 5 + strlen(VALUE), 0);
    n += frame(in + n, 0x80, "ery+secret=9b2e11aa!", 20, 0);
    check_ws(in, n, starred("auth=", 26, "!"), starred("ping ", 26, ""));
    /* across messages, percent-encoded, one fragment a byte long, an empty one, a 16-bit length */
    n = frame(in, 0x81, "x real%2", 8, 0);
    n += frame(in + n, 0x02, "F", 1, 0);
    n += frame(in + n, 0x00, "", 0, 0);
    n += frame(in + n, 0x8A, "", 0, 0); /* an empty pong */
    {
        char big[300];

        memset(big, 'y', sizeof(big));
        memcpy(big, "query%2Bsecret%3D9b2e11aa", 25);
        n += frame(in + n, 0x80, big, sizeof(big), 0);
    }
    {
        char want[400];

        memset(want, 'y', 309);
        memcpy(want, "x ", 2);
        memset(want + 2, '*', 32);
        want[309] = '\0';
        check_ws(in, n, want, "");
    }
    /* a close frame whose reason holds the value */
    n = frame(in, 0x81, "bye", 3, 0);
    n += frame(in + n, 0x88, "\x03\xe8" VALUE, 2 + strlen(VALUE), 0);
    check_ws(in, n, "bye", starred("\x03\xe8", 26, ""));
}

/* A 2^63 - 1 byte frame passes: only the hold-back is ever buffered. */
static void test_ws_huge_frame(void **state)
{
    uint8_t in[64], chunk[4096];
    struct sworn_pmask m;
    struct evbuffer *b = evbuffer_new();
    size_t n = frame(in, 0x82, NULL, UINT64_MAX >> 1, 2);

    (void)state;
    assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)VALUE, strlen(VALUE)), 0);
    assert_int_equal(sworn_pmask_websocket(&m), 0);
    assert_int_equal(sworn_pmask_feed(&m, in, n, b), 0);
    assert_int_equal(evbuffer_get_length(b), n); /* the header went out at once */
    memset(chunk, 'z', sizeof(chunk));
    memcpy(chunk + sizeof(chunk) - 4, "real", 4);
    for (int i = 0; i < 64; i++)
        assert_int_equal(sworn_pmask_feed(&m, chunk, sizeof(chunk), b), 0);
    assert_int_equal(sworn_pmask_pending(&m), 4);
    assert_true(m.wcap <= 65536 + 4096);
    assert_int_equal(sworn_pmask_flush(&m, b), 0);
    assert_int_equal(evbuffer_get_length(b), n + 64 * sizeof(chunk));
    sworn_pmask_free(&m);
    evbuffer_free(b);
}

static void expect_refused(const uint8_t *in, size_t n, const char *what)
{
    struct sworn_pmask m;
    struct evbuffer *b = evbuffer_new();
    int rc = 0;

    assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)VALUE, strlen(VALUE)), 0);
    assert_int_equal(sworn_pmask_websocket(&m), 0);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = sworn_pmask_feed(&m, in + i, 1, b);
    if (rc != -1)
        fail_msg("%s: not refused", what);
    assert_true(sworn_err_code() == SWORN_ERR_FORMAT || sworn_err_code() == SWORN_ERR_RANGE);
    /* broken from then on */
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)"\x81\x00", 2, b), -1);
    assert_int_equal(sworn_pmask_flush(&m, b), -1);
    sworn_pmask_free(&m);
    evbuffer_free(b);
}

static void test_ws_malformed(void **state)
{
    uint8_t in[70000];
    size_t n;

    (void)state;
    expect_refused((const uint8_t *)"\x83\x00", 2, "reserved opcode 3");
    expect_refused((const uint8_t *)"\x8B\x00", 2, "reserved opcode 11");
    expect_refused((const uint8_t *)"\xC1\x00", 2, "rsv1 (deflate)");
    expect_refused((const uint8_t *)"\x81\x81\x00\x00\x00\x00x", 7, "masked");
    expect_refused((const uint8_t *)"\x89\x7e\x00\x7e", 4, "ping of 126 bytes");
    expect_refused((const uint8_t *)"\x09\x00", 2, "fragmented ping");
    expect_refused((const uint8_t *)"\x82\x7f\x80\x00\x00\x00\x00\x00\x00\x00", 10, "top bit");
    expect_refused((const uint8_t *)"\x82\x7e\x00\x05", 4, "16-bit length under 126");
    expect_refused((const uint8_t *)"\x82\x7f\x00\x00\x00\x00\x00\x00\x01\x00", 10,
                   "64-bit length under 65536");
    expect_refused((const uint8_t *)"\x80\x00", 2, "continuation without a message");
    expect_refused((const uint8_t *)"\x01\x01x\x81\x00", 5, "message inside a message");
    /* framing without end inside a partial match: bounded */
    n = frame(in, 0x01, "real", 4, 0);
    while (n + 2 < sizeof(in)) {
        in[n++] = 0x00;
        in[n++] = 0x00;
    }
    expect_refused(in, n, "endless empty fragments inside a partial match");
}

/* A partial header is not sent by a flush (the agent could not read it); the rest is. */
static void test_ws_flush(void **state)
{
    struct sworn_pmask m;
    struct evbuffer *b = evbuffer_new();
    uint8_t in[64];
    size_t n = frame(in, 0x81, "auth=real", 9, 0);

    (void)state;
    assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)VALUE, strlen(VALUE)), 0);
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)"x", 0, b), 0);
    assert_int_equal(sworn_pmask_websocket(&m), 0);
    assert_int_equal(sworn_pmask_feed(&m, in, n, b), 0);
    assert_int_equal(evbuffer_get_length(b), 2 + 5);
    assert_int_equal(sworn_pmask_pending(&m), 4);
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)"\x81", 1, b), 0);
    assert_int_equal(sworn_pmask_flush(&m, b), 0);
    assert_int_equal(evbuffer_get_length(b), n);
    assert_int_equal(sworn_pmask_pending(&m), 0);
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)"\x01!", 2, b), 0);
    assert_int_equal(evbuffer_get_length(b), n + 3);
    /* switching modes with bytes held is refused */
    sworn_pmask_free(&m);
    assert_int_equal(sworn_pmask_init(&m, (const uint8_t *)VALUE, strlen(VALUE)), 0);
    assert_int_equal(sworn_pmask_feed(&m, (const uint8_t *)"rea", 3, b), 0);
    assert_int_equal(sworn_pmask_websocket(&m), -1);
    sworn_pmask_free(&m);
    evbuffer_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_as_is_any_case),
        cmocka_unit_test(test_percent_encoded),
        cmocka_unit_test(test_escape_edges),
        cmocka_unit_test(test_form_encoded),
        cmocka_unit_test(test_json_escaped),
        cmocka_unit_test(test_overlaps_and_neighbours),
        cmocka_unit_test(test_long_value),
        cmocka_unit_test(test_hold_back_only_prefixes),
        cmocka_unit_test(test_ws_fragments_and_frames),
        cmocka_unit_test(test_ws_huge_frame),
        cmocka_unit_test(test_ws_malformed),
        cmocka_unit_test(test_ws_flush),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
