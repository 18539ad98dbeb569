/*
 * fuzz_http_head.c -- libFuzzer target for proxy/p_http.c: the request and response head
 * parsers, and the chunked decoder on the bytes after a head (or on the whole input when it is
 * not a head). The input is the bytes an agent or an upstream sends.
 * Asserted, for every input, with the default limits and with small ones:
 *   - the answer is 0, 1 or -1, the same twice; -1 comes with a short sentence starting
 *     lower-case and (requests) a status of 400, 417, 431, 501 or 505; 1 only while
 *     len < head_max;
 *   - on 0: head_len <= len and <= head_max, the head ends in CRLF CRLF, nfields <= fields_max,
 *     every span (method, target, scheme, host, path, Host field, names, values) lies inside
 *     [p, p + head_len) (an empty absolute-form path aside: the static "/"), the parts take
 *     their documented values (method 1..32 bytes, version 0 or 1, a port for absolute and
 *     authority forms, the framing a request may have; responses: 100..599, NO_BODY for
 *     1xx/204/304 and HEAD), and the head alone gives the same answer;
 *   - monotonic: when a prefix is refused, so is the whole, with the same sentence;
 *   - the chunked decoder never consumes more than it is given, consumes something whenever it
 *     is given bytes before its end, hands out payload only inside what it consumed, never more
 *     than max_body in all, and decodes the same bytes to the same result whether fed at once or
 *     in pieces of 1 and 7 bytes.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "p_http.h"

static struct sworn_http_request rq, rq2;
static struct sworn_http_response rs, rs2;

static void check_why(const char *why)
{
    size_t n;

    if (why == NULL)
        abort();
    n = strlen(why);
    if (n == 0 || n >= 100 || why[0] < 'a' || why[0] > 'z')
        abort();
}

static void inside(const uint8_t *p, size_t head_len, const char *s, size_t n)
{
    const char *lo = (const char *)p, *hi = (const char *)p + head_len;

    if (s == NULL) {
        if (n != 0)
            abort();
        return;
    }
    if (s < lo || s > hi || n > (size_t)(hi - s))
        abort();
}

static void check_request(const uint8_t *p, size_t len, const struct sworn_http_limits *lim)
{
    int status = 0, status2 = 0;
    const char *why = NULL, *why2 = NULL;
    int rc = sworn_http_parse_request(p, len, lim, &rq, &status, &why);
    int rc2 = sworn_http_parse_request(p, len, lim, &rq2, &status2, &why2);
    size_t fmax = lim->fields_max < SWORN_HTTP_FIELDS_MAX ? lim->fields_max : SWORN_HTTP_FIELDS_MAX;

    if (rc != rc2)
        abort();
    if (rc == -1) {
        check_why(why);
        if (status != 400 && status != 417 && status != 431 && status != 501 && status != 505)
            abort();
        if (status2 != status || strcmp(why, why2) != 0)
            abort();
    } else if (rc == 1) {
        if (len >= lim->head_max)
            abort();
    } else if (rc == 0) {
        if (rq.head_len > len || rq.head_len > lim->head_max || rq.head_len < 4 ||
            memcmp(p + rq.head_len - 4, "\r\n\r\n", 4) != 0 || rq.nfields > fmax)
            abort();
        if (memcmp(&rq, &rq2, sizeof(rq)) != 0)
            abort();
        inside(p, rq.head_len, rq.method, rq.method_len);
        inside(p, rq.head_len, rq.target, rq.target_len);
        inside(p, rq.head_len, rq.scheme, rq.scheme_len);
        inside(p, rq.head_len, rq.host, rq.host_len);
        if (!(rq.form == SWORN_HTTP_ABSOLUTE && rq.path_len == 1 && rq.path[0] == '/'))
            inside(p, rq.head_len, rq.path, rq.path_len);
        inside(p, rq.head_len, rq.host_field, rq.host_field_len);
        inside(p, rq.head_len, rq.host_field_host, rq.host_field_host_len);
        for (size_t i = 0; i < rq.nfields; i++) {
            if (rq.fields[i].name_len == 0)
                abort();
            inside(p, rq.head_len, rq.fields[i].name, rq.fields[i].name_len);
            inside(p, rq.head_len, rq.fields[i].value, rq.fields[i].value_len);
        }
        if (rq.method_len < 1 || rq.method_len > SWORN_HTTP_METHOD_MAX || rq.version_minor > 1)
            abort();
        if (rq.form < SWORN_HTTP_ORIGIN || rq.form > SWORN_HTTP_ASTERISK)
            abort();
        if ((rq.form == SWORN_HTTP_ABSOLUTE || rq.form == SWORN_HTTP_AUTHORITY) &&
            (rq.port == 0 || rq.host_len == 0 || rq.host_len > SWORN_HTTP_HOST_MAX))
            abort();
        if (rq.form == SWORN_HTTP_ABSOLUTE && (rq.path_len == 0 || rq.path[0] != '/'))
            abort();
        if (rq.framing != SWORN_HTTP_NO_BODY && rq.framing != SWORN_HTTP_LENGTH &&
            rq.framing != SWORN_HTTP_CHUNKED)
            abort();
        if (rq.version_minor == 1 && rq.form != SWORN_HTTP_AUTHORITY && !rq.has_host)
            abort();
        /* The head alone parses the same. */
        if (sworn_http_parse_request(p, rq.head_len, lim, &rq2, &status2, &why2) != 0 ||
            memcmp(&rq, &rq2, sizeof(rq)) != 0)
            abort();
    } else {
        abort();
    }
    /* Monotonic: a refused prefix makes the whole refused, with the same sentence. */
    rc2 = sworn_http_parse_request(p, len / 2, lim, &rq2, &status2, &why2);
    if (rc2 == -1 && (rc != -1 || status2 != status || strcmp(why, why2) != 0))
        abort();
    if (rc2 == 0 && rc != 0)
        abort();
}

static void check_response(const uint8_t *p, size_t len, const struct sworn_http_limits *lim,
                           int head)
{
    const char *why = NULL, *why2 = NULL;
    int rc = sworn_http_parse_response(p, len, lim, head, &rs, &why);
    int rc2 = sworn_http_parse_response(p, len, lim, head, &rs2, &why2);
    size_t fmax = lim->fields_max < SWORN_HTTP_FIELDS_MAX ? lim->fields_max : SWORN_HTTP_FIELDS_MAX;

    if (rc != rc2)
        abort();
    if (rc == -1) {
        check_why(why);
    } else if (rc == 1) {
        if (len >= lim->head_max)
            abort();
    } else if (rc == 0) {
        if (rs.head_len > len || rs.head_len > lim->head_max || rs.nfields > fmax ||
            memcmp(p + rs.head_len - 4, "\r\n\r\n", 4) != 0)
            abort();
        if (memcmp(&rs, &rs2, sizeof(rs)) != 0)
            abort();
        inside(p, rs.head_len, rs.reason, rs.reason_len);
        for (size_t i = 0; i < rs.nfields; i++) {
            inside(p, rs.head_len, rs.fields[i].name, rs.fields[i].name_len);
            inside(p, rs.head_len, rs.fields[i].value, rs.fields[i].value_len);
        }
        if (rs.status < 100 || rs.status > 599 || rs.version_minor > 1)
            abort();
        if ((head || rs.status < 200 || rs.status == 204 || rs.status == 304) &&
            rs.framing != SWORN_HTTP_NO_BODY)
            abort();
        if (rs.framing == SWORN_HTTP_UNTIL_CLOSE && !rs.connection_close)
            abort();
        if (rs.framing != SWORN_HTTP_LENGTH && rs.content_length != 0)
            abort();
    } else {
        abort();
    }
    rc2 = sworn_http_parse_response(p, len / 2, lim, head, &rs2, &why2);
    if (rc2 == -1 && (rc != -1 || strcmp(why, why2) != 0))
        abort();
}

struct decoded {
    long rc;         /* 0 done or ran out, -1 refused */
    int status;      /* on -1 */
    size_t consumed; /* bytes consumed in all */
    uint64_t total;
    uint64_t hash; /* FNV-1a of the payload */
};

static void decode(const uint8_t *p, size_t len, uint64_t max_body, int allow_ext, size_t step,
                   struct decoded *d)
{
    struct sworn_http_chunked c;
    size_t off = 0;

    memset(d, 0, sizeof(*d));
    d->hash = 1469598103934665603ull;
    sworn_http_chunked_init(&c, max_body, allow_ext);
    while (off < len && !sworn_http_chunked_done(&c)) {
        size_t piece = step == 0 || len - off < step ? len - off : step;
        const uint8_t *data;
        size_t data_len;
        int status = 0;
        const char *why = NULL;
        long r = sworn_http_chunked_feed(&c, p + off, piece, &data, &data_len, &status, &why);

        if (r < 0) {
            check_why(why);
            if (r != -1 || (status != 400 && status != 413))
                abort();
            d->rc = -1;
            d->status = status;
            break;
        }
        if ((size_t)r > piece)
            abort();
        if (r == 0 && !sworn_http_chunked_done(&c))
            abort();
        if (data != NULL) {
            if (data < p + off || data_len == 0 || data_len > (size_t)r - (size_t)(data - p - off))
                abort();
            for (size_t i = 0; i < data_len; i++)
                d->hash = (d->hash ^ data[i]) * 1099511628211ull;
            d->total += data_len;
        } else if (data_len != 0) {
            abort();
        }
        off += (size_t)r;
    }
    if (d->total > max_body || d->total != sworn_http_chunked_total(&c))
        abort();
    d->consumed = off;
    d->rc = d->rc == -1 ? -1 : sworn_http_chunked_done(&c);
}

static void check_chunked(const uint8_t *p, size_t len, uint64_t max_body, int allow_ext)
{
    struct decoded a, b;

    decode(p, len, max_body, allow_ext, 0, &a);
    decode(p, len, max_body, allow_ext, 1, &b);
    if (a.rc != b.rc || a.status != b.status || a.total != b.total || a.hash != b.hash)
        abort();
    if (a.rc != -1 && a.consumed != b.consumed)
        abort();
    decode(p, len, max_body, allow_ext, 7, &b);
    if (a.rc != b.rc || a.status != b.status || a.total != b.total || a.hash != b.hash)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sworn_http_limits lim, small;
    int status;
    const char *why;
    const uint8_t *body = data;
    size_t body_len = size;

    sworn_http_limits_default(&lim);
    small.head_max = 64 + (size > 0 ? data[0] : 0);
    small.fields_max = 3;
    check_request(data, size, &lim);
    check_request(data, size, &small);
    check_response(data, size, &lim, 0);
    check_response(data, size, &lim, 1);
    check_response(data, size, &small, 0);
    if (sworn_http_parse_request(data, size, &lim, &rq, &status, &why) == 0) {
        body = data + rq.head_len;
        body_len = size - rq.head_len;
    } else if (sworn_http_parse_response(data, size, &lim, 0, &rs, &why) == 0) {
        body = data + rs.head_len;
        body_len = size - rs.head_len;
    }
    check_chunked(body, body_len, UINT64_MAX, 1);
    check_chunked(body, body_len, 64, 0);
    return 0;
}
