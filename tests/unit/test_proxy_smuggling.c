/*
 * test_proxy_smuggling.c -- the request-smuggling corpus of issue 14, end to end: raw bytes from
 * a TCP client the test writes itself, sworn-proxy (proxy_fixture.h) in front of a real decisiond
 * (a dev stack) and nginx as the upstream.
 *
 * Each row of the table is one connection: the bytes sent, the statuses the proxy must answer in
 * order, and the decision records the log must gain for it, in order: "A" an ALLOW, "D" a DENY
 * by the policy, "Rnnn" the proxy's own refusal (a DENY with request.refusal, rule "", refusal
 * status nnn). A row's target carries its marker (?case=Nz): a record whose path holds a marker
 * must be its row's, and a refusal whose target could not be read (a bad request line, no Host)
 * is matched by the entries the log gained while the row ran (rows run one at a time).
 *
 * Then, after a barrier (an allowed request on a new connection, awaited in nginx's access log:
 * nginx logs in the order it finishes, so anything forwarded before is logged before it), every
 * request nginx saw is tied to the record: its sworn-log-index is an ALLOW entry for that very
 * path, no entry was forwarded twice, each allowed row's request arrived once, and no request
 * hidden in a body (".../smuggled") or pipelined after a refusal (".../after") arrived at all.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "proxy_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "upstream_fixture.h"

#define HEAD_LIMIT 2048 /* limits.head of the proxy under test */
#define FIELDS_LIMIT 16 /* limits.headers */
#define BODY_LIMIT 1024 /* limits.body */

static struct {
    struct sworn_upstream u;
    struct sworn_stack s;
    struct sworn_pfx p;
    char *dir;
    char policy[600];
    int barrier;
} T;

static const char policy_text[] =
    "version: 1\n"
    "rules:\n"
    "  - id: echo\n    effect: allow\n    reason: \"test: echo\"\n"
    "    operations: [\"http.request\"]\n"
    "    resource:\n      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
    "      paths: [\"/echo/**\", \"/allowed/**\"]\n"
    "    methods: [GET, POST]\n"
    "  - id: deny\n    effect: deny\n    reason: \"test: denied\"\n"
    "    resource:\n      hosts: [\"127.0.0.1\"]\n"
    "      paths: [\"/denied\", \"/denied/**\"]\n";

/*
 * The corpus. In bytes: {H} is 127.0.0.1:PORT (nginx), {P} PORT, {N} the row's marker number
 * ("Nz"), {Z} a NUL byte, {B} 3000 bytes of 'a' (a head over limits.head), {F} 20 header fields
 * (over limits.headers), {D} 2000 bytes of 'b' (a body over limits.body), {S} a whole GET request
 * for /echo/smuggled (to hide in a body), {SD} and {SX} its length in decimal and hex. Every
 * request the proxy may keep serving ends with Connection: close, so every row ends with the proxy
 * closing.
 */
struct row {
    const char *name;
    const char *bytes;
    const char *statuses; /* the answers' statuses in order, space-separated */
    const char *records;  /* the decision records the row adds, in order, space-separated */
};

#define T_GET "GET http://{H}/echo/s?case={N} HTTP/1.1\r\nHost: {H}\r\n"
#define T_POST "POST http://{H}/echo/p?case={N} HTTP/1.1\r\nHost: {H}\r\n"
#define CLOSE "Connection: close\r\n"
#define HIDDEN "{S}"
#define HIDDEN_REQUEST "GET http://{H}/echo/smuggled?case={N} HTTP/1.1\r\nHost: {H}\r\n\r\n"

static const struct row corpus[] = {
    /* the baseline: decided by the policy */
    {"allowed", T_GET CLOSE "\r\n", "200", "A"},
    {"denied by policy", "GET http://{H}/denied/x?case={N} HTTP/1.1\r\nHost: {H}\r\n" CLOSE "\r\n",
     "403", "D"},
    /* Content-Length and Transfer-Encoding */
    {"CL then TE", T_POST "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400",
     "R400"},
    {"TE then CL", T_POST "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", "400",
     "R400"},
    {"two CL equal", T_POST "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", "400", "R400"},
    {"two CL different", T_POST "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", "400",
     "R400"},
    {"CL list", T_POST "Content-Length: 5, 5\r\n\r\nhello", "400", "R400"},
    {"CL with sign", T_POST "Content-Length: +5\r\n\r\nhello", "400", "R400"},
    {"CL negative", T_POST "Content-Length: -5\r\n\r\nhello", "400", "R400"},
    {"CL with inner space", T_POST "Content-Length: 5 5\r\n\r\nhello", "400", "R400"},
    {"CL hex", T_POST "Content-Length: 0x5\r\n\r\nhello", "400", "R400"},
    {"CL 19 digits", T_POST "Content-Length: 0000000000000000005\r\n\r\nhello", "400", "R400"},
    {"CL underscore", T_POST "Content_Length: 5\r\n\r\nhello", "400", "R400"},
    {"TE chunked, gzip", T_POST "Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", "400", "R400"},
    {"TE gzip, chunked", T_POST "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "400", "R400"},
    {"TE chunked, chunked", T_POST "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", "400",
     "R400"},
    {"TE xchunked", T_POST "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", "400", "R400"},
    {"TE identity", T_POST "Transfer-Encoding: identity\r\nContent-Length: 1\r\n\r\nx", "400",
     "R400"},
    {"TE name with leading space", T_POST " Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400",
     "R400"},
    {"TE name with space before colon", T_POST "Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
     "400", "R400"},
    {"TE then Transfer-encoding: x",
     T_POST "Transfer-Encoding: chunked\r\nTransfer-encoding: x\r\n\r\n0\r\n\r\n", "400", "R400"},
    {"TE with vertical tab", T_POST "Transfer-Encoding:\vchunked\r\n\r\n0\r\n\r\n", "400", "R400"},
    {"TE value with vertical tab", T_POST "Transfer-Encoding: chunked\v\r\n\r\n0\r\n\r\n", "400",
     "R400"},
    {"TE underscore", T_POST "Transfer_Encoding: chunked\r\n\r\n0\r\n\r\n", "400", "R400"},
    {"TE in HTTP/1.0",
     "POST http://{H}/echo/p?case={N} HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     "400", "R400"},
    /* smuggling payloads: the hidden request must never be decided nor reach upstream */
    {"CL.TE smuggling",
     T_POST "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" HIDDEN, "400",
     "R400"},
    {"TE.CL smuggling",
     T_POST "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n5c\r\n" HIDDEN "\r\n0\r\n\r\n",
     "400", "R400"},
    {"TE.TE smuggling",
     T_POST "Transfer-Encoding: chunked\r\nTransfer-Encoding: cow\r\n\r\n0\r\n\r\n" HIDDEN, "400",
     "R400"},
    {"a request hidden in a chunked body is data",
     T_POST CLOSE "Transfer-Encoding: chunked\r\n\r\n"
                  "{SX}\r\n{S}\r\n0\r\n\r\n",
     "200", "A"},
    {"a request hidden in a Content-Length body is data",
     T_POST CLOSE "Content-Length: {SD}\r\n\r\n{S}", "200", "A"},
    /* chunked bodies */
    {"chunk extension", T_POST "Transfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\n\r\n",
     "400", "R400"},
    {"trailers accepted and dropped",
     T_POST CLOSE "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: t1\r\n\r\n",
     "200", "A"},
    {"chunk size 0x5", T_POST "Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", "400",
     "R400"},
    {"chunk size -1", T_POST "Transfer-Encoding: chunked\r\n\r\n-1\r\nhello\r\n0\r\n\r\n", "400",
     "R400"},
    {"chunk size with leading space",
     T_POST "Transfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n", "400", "R400"},
    {"chunk size 17 hex digits",
     T_POST "Transfer-Encoding: chunked\r\n\r\n00000000000000005\r\nhello\r\n0\r\n\r\n", "400",
     "R400"},
    {"chunk data without CRLF", T_POST "Transfer-Encoding: chunked\r\n\r\n5\r\nhelloX0\r\n\r\n",
     "400", "R400"},
    {"chunk size line with bare LF",
     T_POST "Transfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", "400", "R400"},
    /* line structure and bytes of the head */
    {"obs-fold", T_GET "X-A: a\r\n b\r\n\r\n", "400", "R400"},
    {"bare CR in a value", T_GET "X-A: a\rb\r\n\r\n", "400", "R400"},
    {"bare CR line end", "GET http://{H}/echo/s?case={N} HTTP/1.1\rHost: {H}\r\n\r\n", "400",
     "R400"},
    {"bare LF line ends", "GET http://{H}/echo/s?case={N} HTTP/1.1\nHost: {H}\n\n", "400", "R400"},
    {"bare LF after a field", T_GET "X-A: a\n\r\n", "400", "R400"},
    {"NUL in a value", T_GET "X-A: a{Z}b\r\n\r\n", "400", "R400"},
    {"control in a name", T_GET "X\001A: b\r\n\r\n", "400", "R400"},
    {"control in a value", T_GET "X-A: a\001b\r\n\r\n", "400", "R400"},
    {"DEL in a value", T_GET "X-A: a\177b\r\n\r\n", "400", "R400"},
    {"NUL in the request line", "GET http://{H}/echo/s?case={N}{Z} HTTP/1.1\r\nHost: {H}\r\n\r\n",
     "400", "R400"},
    /* where the request goes */
    {"absolute-form host other than Host",
     "GET http://{H}/echo/s?case={N} HTTP/1.1\r\nHost: other.example\r\n\r\n", "400", "R400"},
    {"absolute-form port other than Host's",
     "GET http://{H}/echo/s?case={N} HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n", "400", "R400"},
    {"Host missing", "GET http://{H}/echo/s?case={N} HTTP/1.1\r\n\r\n", "400", "R400"},
    {"two Hosts", T_GET "Host: {H}\r\n\r\n", "400", "R400"},
    {"userinfo", "GET http://user@{H}/echo/s?case={N} HTTP/1.1\r\nHost: {H}\r\n\r\n", "400",
     "R400"},
    {"userinfo with password",
     "GET http://user:pw@{H}/echo/s?case={N} HTTP/1.1\r\nHost: {H}\r\n\r\n", "400", "R400"},
    {"fragment", "GET http://{H}/echo/s?case={N}#f HTTP/1.1\r\nHost: {H}\r\n\r\n", "400", "R400"},
    {"origin-form outside a tunnel", "GET /echo/s?case={N} HTTP/1.1\r\nHost: {H}\r\n\r\n", "400",
     "R400"},
    {"asterisk-form", "OPTIONS * HTTP/1.1\r\nHost: {H}\r\n\r\n", "400", "R400"},
    /* limits */
    {"head over limits.head", T_GET "X-Big: {B}\r\n\r\n", "431", "R431"},
    {"too many fields", T_GET "{F}\r\n", "431", "R431"},
    {"body over limits.body (Content-Length)", T_POST "Content-Length: 2000\r\n\r\n{D}", "413",
     "R413"},
    {"body over limits.body (chunked)",
     T_POST "Transfer-Encoding: chunked\r\n\r\n7d0\r\n{D}\r\n0\r\n\r\n", "413", "R413"},
    /* versions and methods */
    {"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "505", "R505"},
    {"h2c upgrade",
     T_GET "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
           "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
     "400", "R400"},
    {"HTTP2-Settings alone", T_GET "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", "400",
     "R400"},
    {"HTTP/1.0", "GET http://{H}/echo/s?case={N} HTTP/1.0\r\n\r\n", "200", "A"},
    {"HTTP/3", "GET http://{H}/echo/s?case={N} HTTP/3\r\nHost: {H}\r\n\r\n", "505", "R505"},
    {"HTTP/2.0", "GET http://{H}/echo/s?case={N} HTTP/2.0\r\nHost: {H}\r\n\r\n", "505", "R505"},
    {"HTTP/1.2", "GET http://{H}/echo/s?case={N} HTTP/1.2\r\nHost: {H}\r\n\r\n", "505", "R505"},
    {"lower-case version", "GET http://{H}/echo/s?case={N} http/1.1\r\nHost: {H}\r\n\r\n", "400",
     "R400"},
    {"method over 32 bytes",
     "GETGETGETGETGETGETGETGETGETGETGET http://{H}/echo/s?case={N} HTTP/1.1\r\nHost: {H}\r\n\r\n",
     "501", "R501"},
    {"two spaces in the request line",
     "GET  http://{H}/echo/s?case={N} HTTP/1.1\r\nHost: {H}\r\n\r\n", "400", "R400"},
    /* pipelining */
    {"denied then allowed on one connection",
     "GET http://{H}/denied/x?case={N} HTTP/1.1\r\nHost: {H}\r\n\r\n" T_GET CLOSE "\r\n", "403 200",
     "D A"},
    {"allowed then refused, then more",
     T_GET "\r\n" T_POST "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
           "GET http://{H}/echo/after?case={N} HTTP/1.1\r\nHost: {H}\r\n" CLOSE "\r\n",
     "200 400", "A R400"},
    {"allowed then a bad line, then more",
     T_GET "\r\nGET http://{H}/echo/after?case={N} HTTP/1.1\nHost: {H}\r\n\r\n"
           "GET http://{H}/echo/after?case={N} HTTP/1.1\r\nHost: {H}\r\n" CLOSE "\r\n",
     "200 400", "A R400"},
    {"two allowed", T_GET "\r\n" T_POST CLOSE "Content-Length: 2\r\n\r\nhi", "200 200", "A A"},
    {"allowed with Connection: close, then another",
     T_GET CLOSE "\r\nGET http://{H}/echo/after?case={N} HTTP/1.1\r\nHost: {H}\r\n\r\n", "200",
     "A"},
    /* more framing and syntax */
    {"trailer named Content-Length",
     T_POST CLOSE "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nContent-Length: 50\r\n\r\n",
     "200", "A"},
    {"trailer with obs-fold",
     T_POST "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n", "400",
     "R400"},
    {"trailer with bare LF",
     T_POST "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: a\n\r\n", "400", "R400"},
    {"chunk size with trailing space",
     T_POST "Transfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n", "400", "R400"},
    {"chunk size over every limit",
     T_POST "Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nhello\r\n0\r\n\r\n", "413",
     "R413"},
    {"upper-case chunk size",
     T_POST CLOSE "Transfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", "200", "A"},
    {"Content-Length 0", T_POST CLOSE "Content-Length: 0\r\n\r\n", "200", "A"},
    {"forged sworn-log-index", T_GET CLOSE "Sworn-Log-Index: 1\r\n\r\n", "200", "A"},
    {"field line without a colon", T_GET "X-A b\r\n\r\n", "400", "R400"},
    {"empty field name", T_GET ": b\r\n\r\n", "400", "R400"},
    {"tab in the request line", "GET\thttp://{H}/echo/s?case={N} HTTP/1.1\r\nHost: {H}\r\n\r\n",
     "400", "R400"},
    {"Host with userinfo", "GET http://{H}/echo/s?case={N} HTTP/1.1\r\nHost: u@{H}\r\n\r\n", "400",
     "R400"},
    {"percent-encoded host",
     "GET http://127.0.0.%31:{P}/echo/s?case={N} HTTP/1.1\r\nHost: 127.0.0.%31:{P}\r\n\r\n", "400",
     "R400"},
    {"upper-case scheme and host match",
     "GET HTTP://{H}/echo/s?case={N} HTTP/1.1\r\nHost: {H}\r\n" CLOSE "\r\n", "200", "A"},
    {"an empty line before the request", "\r\n" T_GET CLOSE "\r\n", "400", "R400"},
    {"WebSocket upgrade without a key", T_GET "Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
     "400", "R400"},
    {"Expect other than 100-continue", T_POST "Expect: 200-ok\r\nContent-Length: 1\r\n\r\nx", "417",
     "R417"},
    /* hop-by-hop and Proxy-* fields are not forwarded */
    {"hop-by-hop removed",
     T_GET "Connection: close, X-Drop\r\nX-Drop: secret\r\nProxy-Authorization: Basic eDp5\r\n"
           "Proxy-Connection: keep-alive\r\nKeep-Alive: 5\r\nTE: trailers\r\n\r\n",
     "200", "A"},
};

#define NROWS (sizeof(corpus) / sizeof(corpus[0]))

/* ---- the bytes of a row ---- */

struct bytes {
    char *p;
    size_t len, cap;
};

static void put(struct bytes *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void put_s(struct bytes *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_n(struct bytes *b, char c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(b, &c, 1);
}

static void expand(struct bytes *b, const char *t, int row);

/* The length of the hidden request of a row. */
static size_t hidden_len(int row)
{
    struct bytes h = {0};
    size_t n;

    expand(&h, HIDDEN_REQUEST, row);
    n = h.len;
    free(h.p);
    return n;
}

static void expand(struct bytes *b, const char *t, int row)
{
    char tmp[64];

    b->len = 0;
    put(b, "", 0);
    while (*t != '\0') {
        if (strncmp(t, "{SX}", 4) == 0 || strncmp(t, "{SD}", 4) == 0) {
            snprintf(tmp, sizeof(tmp), t[2] == 'X' ? "%zx" : "%zu", hidden_len(row));
            put_s(b, tmp);
            t += 4;
            continue;
        }
        if (strncmp(t, "{S}", 3) == 0) {
            struct bytes h = {0};

            expand(&h, HIDDEN_REQUEST, row);
            put(b, h.p, h.len);
            free(h.p);
        } else if (strncmp(t, "{H}", 3) == 0) {
            snprintf(tmp, sizeof(tmp), "127.0.0.1:%u", (unsigned)T.u.http_port);
            put_s(b, tmp);
        } else if (strncmp(t, "{N}", 3) == 0) {
            snprintf(tmp, sizeof(tmp), "%dz", row);
            put_s(b, tmp);
        } else if (strncmp(t, "{P}", 3) == 0) {
            snprintf(tmp, sizeof(tmp), "%u", (unsigned)T.u.http_port);
            put_s(b, tmp);
        } else if (strncmp(t, "{Z}", 3) == 0) {
            put(b, "", 1);
        } else if (strncmp(t, "{B}", 3) == 0) {
            put_n(b, 'a', 3000);
        } else if (strncmp(t, "{D}", 3) == 0) {
            put_n(b, 'b', 2000);
        } else if (strncmp(t, "{F}", 3) == 0) {
            for (int i = 0; i < 20; i++) {
                snprintf(tmp, sizeof(tmp), "X-F%d: v\r\n", i);
                put_s(b, tmp);
            }
        } else {
            put(b, t, 1);
            t++;
            continue;
        }
        t += 3;
    }
}

/* ---- the record ---- */

/* The index one past the log's newest entry. */
static uint64_t log_end(void)
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 1);
    uint64_t end = tail->tail->first_index + tail->tail->n_entries;

    sworn__v1__admin_response__free_unpacked(tail, NULL);
    return end;
}

/* The marker of a row ("case=Nz") in s? */
static int has_marker(const char *s, int row)
{
    char m[32];

    snprintf(m, sizeof(m), "case=%dz", row);
    return strstr(s, m) != NULL;
}

/* The row whose marker s holds, or -1. */
static int marker_row(const char *s)
{
    const char *m = strstr(s, "case=");

    if (m == NULL)
        return -1;
    return atoi(m + 5);
}

/* The decision records from index from on match want ("A D R400 ..."), each of them this row's
 * when its path holds a marker; rows whose target was read must name it. */
static void expect_records(int row, int marker, uint64_t from, const char *want)
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 1000);
    const Sworn__V1__TailResponse *t = tail->tail;
    char copy[64];
    size_t k = 0;
    const char *name = corpus[row].name;

    snprintf(copy, sizeof(copy), "%s", want);
    assert_true(from >= t->first_index);
    for (char *w = strtok(copy, " "); w != NULL; w = strtok(NULL, " "), k++) {
        const Sworn__V1__Entry *e = NULL;
        const Sworn__V1__DecisionRecord *d;

        /* the k-th decision record at or after from */
        for (uint64_t i = from - t->first_index, seen = 0; i < t->n_entries; i++) {
            if (t->entries[i]->kind_case != SWORN__V1__ENTRY__KIND_DECISION)
                continue;
            if (seen++ == k) {
                e = t->entries[i];
                break;
            }
        }
        if (e == NULL)
            fail_msg("row %d (%s): record %zu (%s) is missing", row, name, k, w);
        d = e->decision;
        if (d->request->resource != NULL && d->request->resource->path != NULL &&
            marker_row(d->request->resource->path) >= 0 &&
            !has_marker(d->request->resource->path, marker))
            fail_msg("row %d (%s): record %zu is for another row: %s", row, name, k,
                     d->request->resource->path);
        if (strcmp(w, "A") == 0 || strcmp(w, "D") == 0) {
            if (d->request->refusal != NULL)
                fail_msg("row %d (%s): record %zu is a refusal (%s)", row, name, k, d->reason);
            if (!has_marker(d->request->resource->path, marker))
                fail_msg("row %d (%s): record %zu does not name the row", row, name, k);
            assert_int_equal(d->effect, w[0] == 'A' ? SWORN__V1__EFFECT__EFFECT_ALLOW
                                                    : SWORN__V1__EFFECT__EFFECT_DENY);
        } else {
            assert_true(w[0] == 'R');
            if (d->request->refusal == NULL)
                fail_msg("row %d (%s): record %zu is not a refusal (effect %d, %s)", row, name, k,
                         (int)d->effect, d->reason);
            assert_int_equal(d->effect, SWORN__V1__EFFECT__EFFECT_DENY);
            assert_string_equal(d->rule_id, "");
            if ((int)d->request->refusal->status != atoi(w + 1))
                fail_msg("row %d (%s): refused with %u (%s), not %s", row, name,
                         d->request->refusal->status, d->reason, w + 1);
            assert_non_null(strstr(d->reason, "refused by the proxy: "));
            assert_int_equal(d->request->refusal->head_sha256.len, 32);
        }
        assert_string_equal(d->request->principal->id, "agent-1");
    }
    /* and nothing more */
    {
        size_t count = 0;

        for (uint64_t i = from - t->first_index; i < t->n_entries; i++)
            if (t->entries[i]->kind_case == SWORN__V1__ENTRY__KIND_DECISION)
                count++;
        if (count != k)
            fail_msg("row %d (%s): %zu decision records, expected %zu", row, name, count, k);
    }
    sworn__v1__admin_response__free_unpacked(tail, NULL);
}

/* The statuses of the answers in out ("200 403 ..."), space-separated, into buf. */
static void answer_statuses(const char *out, long n, char *buf, size_t cap)
{
    size_t used = 0;

    buf[0] = '\0';
    for (long i = 0; i + 12 <= n; i++) {
        if ((i == 0 || out[i - 1] == '\n') && strncmp(out + i, "HTTP/1.1 ", 9) == 0) {
            int w = snprintf(buf + used, cap - used, "%s%.3s", used > 0 ? " " : "", out + i + 9);

            if (w > 0 && (size_t)w < cap - used)
                used += (size_t)w;
        }
    }
}

/* ---- nginx's access log ---- */

/* Send an allowed request on a new connection and wait for it in nginx's log. */
static void barrier(void)
{
    char url[256], body[256], needle[64];
    int code = 0;
    const char *argv[] = {"-x", T.p.url, url, NULL};

    snprintf(needle, sizeof(needle), "/allowed/hello.txt?barrier=%d", ++T.barrier);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", (unsigned)T.u.http_port, needle);
    assert_int_equal(sworn_upstream_curl(argv, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_int_equal(sworn_upstream_wait_log(&T.u, needle, 20000), 0);
}

/* The access-log line holding needle (a copy; NULL when none). */
static char *access_line(const char *needle)
{
    char *log = sworn_test_read_file(T.u.access_log, NULL), *found = NULL;

    for (char *line = strtok(log, "\n"); line != NULL; line = strtok(NULL, "\n"))
        if (strstr(line, needle) != NULL && found == NULL)
            found = strdup(line);
    free(log);
    return found;
}

/* ---- setup ---- */

static int setup(void **state)
{
    char opts[2048], extra[512];
    struct sworn_pfx_opts po = {0};

    (void)state;
    memset(&T, 0, sizeof(T));
    if (sworn_upstream_start(&T.u) != 0)
        return -1;
    T.dir = sworn_test_tmpdir("proxy-smuggling");
    snprintf(T.policy, sizeof(T.policy), "%s/policy.yaml", T.dir);
    sworn_test_write_file(T.policy, policy_text, strlen(policy_text), 0600);
    snprintf(opts, sizeof(opts), "--no-proxy --no-tpm --policy %s", T.policy);
    if (sworn_stack_up(&T.s, opts) != 0)
        return -1;
    snprintf(extra, sizeof(extra), "limits:\n  head: %d\n  headers: %d\n  body: %d\n", HEAD_LIMIT,
             FIELDS_LIMIT, BODY_LIMIT);
    po.extra = extra;
    return sworn_pfx_start(&T.p, T.s.decision, &po);
}

static int teardown(void **state)
{
    int rc = 0;

    (void)state;
    if (sworn_pfx_stop_with_stack(&T.p, &T.s) != 0)
        rc = -1;
    sworn_upstream_stop(&T.u);
    sworn_test_tmpdir_drop(&T.dir);
    return rc;
}

/* ---- the corpus ---- */

/*
 * Send bytes on a new connection one byte per write (TCP_NODELAY), reading what the proxy answers
 * meanwhile; sending stops once an answer closes the connection (a refusal: more bytes would only
 * draw a reset that could discard the answer unread), not at any answer (a deny before a
 * pipelined allow is answered while the allow is still being sent). Then read until the proxy
 * closes (20 s at most). Returns the bytes read, out NUL-terminated.
 */
static long raw_bytewise(const char *bytes, size_t len, char *out, size_t cap)
{
    struct sockaddr_in sin = {0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    size_t have = 0;

    assert_true(fd >= 0);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(T.p.port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), 0);
    for (size_t i = 0; i < len; i++) {
        struct pollfd pfd = {fd, POLLIN, 0};

        if (poll(&pfd, 1, 0) > 0) {
            ssize_t r = recv(fd, out + have, cap - 1 - have, 0);

            if (r <= 0)
                break; /* closed (or reset): nothing more is read */
            have += (size_t)r;
            out[have] = '\0';
            if (strstr(out, "Connection: close\r\n") != NULL)
                break;
        }
        if (send(fd, bytes + i, 1, MSG_NOSIGNAL) != 1)
            break;
    }
    for (int rounds = 0; rounds < 400 && have + 1 < cap; rounds++) {
        struct pollfd pfd = {fd, POLLIN, 0};
        ssize_t r;

        if (poll(&pfd, 1, 50) <= 0)
            continue;
        r = recv(fd, out + have, cap - 1 - have, 0);
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    out[have] = '\0';
    close(fd);
    return (long)have;
}

/* Run every row (markers marker_base + row), in one write or byte by byte. */
static void run_corpus(int marker_base, int bytewise)
{
    struct bytes b = {0};
    static char out[65536];
    char got[64];

    for (size_t row = 0; row < NROWS; row++) {
        uint64_t from = log_end();
        int marker = marker_base + (int)row;
        long n;

        expand(&b, corpus[row].bytes, marker);
        if (bytewise)
            n = raw_bytewise(b.p, b.len, out, sizeof(out));
        else
            n = sworn_pfx_raw(&T.p, b.p, b.len, 1, 20000, out, sizeof(out));
        if (n < 0)
            fail_msg("row %zu (%s): no connection", row, corpus[row].name);
        answer_statuses(out, n, got, sizeof(got));
        if (strcmp(got, corpus[row].statuses) != 0)
            fail_msg("row %zu (%s%s): answered \"%s\", expected \"%s\":\n%s", row, corpus[row].name,
                     bytewise ? ", byte by byte" : "", got, corpus[row].statuses, out);
        /* a refusal closes the connection with its answer */
        {
            const char *last = strrchr(corpus[row].records, ' ');

            last = last != NULL ? last + 1 : corpus[row].records;
            if (last[0] == 'R' && strstr(out, "Connection: close") == NULL)
                fail_msg("row %zu (%s): the refusal does not close:\n%s", row, corpus[row].name,
                         out);
        }
        expect_records((int)row, marker, from, corpus[row].records);
        assert_true(sworn_pfx_alive(&T.p));
    }
    free(b.p);
}

/* After a barrier: every request nginx saw is an ALLOW entry of the record for that path,
 * forwarded once; every ALLOW entry was forwarded; nothing hidden or refused-after arrived. */
static void expect_upstream_matches_record(void)
{
    barrier();
    /* Every request nginx saw is an ALLOW entry of the record, forwarded once. */
    {
        Sworn__V1__AdminResponse *tail = sworn_stack_tail(&T.s, 1000);
        const Sworn__V1__TailResponse *t = tail->tail;
        char *log = sworn_test_read_file(T.u.access_log, NULL);
        uint8_t *seen = calloc(t->first_index + t->n_entries + 1, 1);
        size_t lines = 0;

        assert_non_null(seen);
        for (char *line = strtok(log, "\n"); line != NULL; line = strtok(NULL, "\n")) {
            char *uri = strchr(line, '"'), *uri_end, *ix = strstr(line, "idx=\"");
            long long idx;
            const Sworn__V1__Entry *e;

            lines++;
            assert_non_null(uri);
            uri_end = strchr(uri + 1, '"');
            assert_non_null(uri_end);
            *uri_end = '\0';
            if (strstr(uri, "/smuggled") != NULL || strstr(uri, "/after") != NULL)
                fail_msg("upstream received a request no one decided: %s", uri + 1);
            assert_non_null(ix);
            idx = strtoll(ix + 5, NULL, 10);
            if (idx < (long long)t->first_index ||
                idx >= (long long)(t->first_index + t->n_entries))
                fail_msg("upstream received %s with index %lld, not in the log", uri + 1, idx);
            e = t->entries[idx - (long long)t->first_index];
            assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
            assert_int_equal(e->decision->effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
            if (strcmp(e->decision->request->resource->path, uri + 1) != 0)
                fail_msg("upstream received %s under the entry for %s", uri + 1,
                         e->decision->request->resource->path);
            if (seen[idx]++)
                fail_msg("entry %lld forwarded twice", idx);
        }
        /* each allowed row's requests arrived (the A records, all of them forwarded) */
        for (uint64_t i = 0; i < t->n_entries; i++) {
            const Sworn__V1__Entry *e = t->entries[i];

            if (e->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
                e->decision->effect == SWORN__V1__EFFECT__EFFECT_ALLOW && !seen[t->first_index + i])
                fail_msg("the allowed %s (entry %llu) did not reach upstream",
                         e->decision->request->resource->path,
                         (unsigned long long)(t->first_index + i));
        }
        assert_true(lines > 0);
        free(seen);
        free(log);
        sworn__v1__admin_response__free_unpacked(tail, NULL);
    }
}

static void test_corpus(void **state)
{
    (void)state;
    run_corpus(0, 0);
    expect_upstream_matches_record();
}

/* The same bytes, one write per byte: the head and the body arrive in pieces, the answers and
 * the records must be the same. */
static void test_corpus_byte_by_byte(void **state)
{
    (void)state;
    run_corpus(1000, 1);
    expect_upstream_matches_record();
}

/* What upstream got for the rows that check how a request is cleaned. */
static int row_named(const char *name)
{
    for (size_t i = 0; i < NROWS; i++)
        if (strcmp(corpus[i].name, name) == 0)
            return (int)i;
    fail_msg("no row %s", name);
    return -1;
}

static void test_forwarded_framing_and_fields(void **state)
{
    char needle[64], *line;

    (void)state;
    /* the trailer's row: de-chunked with a Content-Length of 5, the trailer dropped */
    snprintf(needle, sizeof(needle), "case=%dz\"", row_named("trailers accepted and dropped"));
    line = access_line(needle);
    assert_non_null(line);
    if (strstr(line, " 5 idx=\"") == NULL || strstr(line, "te=\"-\"") == NULL ||
        strstr(line, "trailer=\"-\"") == NULL)
        fail_msg("the trailer's request reached nginx as: %s", line);
    free(line);
    /* a trailer named Content-Length changes nothing: the body's own length goes */
    snprintf(needle, sizeof(needle), "case=%dz\"", row_named("trailer named Content-Length"));
    line = access_line(needle);
    assert_non_null(line);
    if (strstr(line, " 5 idx=\"") == NULL)
        fail_msg("the request with a Content-Length trailer reached nginx as: %s", line);
    free(line);
    /* the hidden request in a chunked body: a body of its length, de-chunked */
    {
        int row = row_named("a request hidden in a chunked body is data");
        char want[32];

        snprintf(needle, sizeof(needle), "case=%dz\"", row);
        snprintf(want, sizeof(want), " %zu idx=\"", hidden_len(row));
        line = access_line(needle);
        assert_non_null(line);
        if (strstr(line, want) == NULL || strstr(line, "te=\"-\"") == NULL)
            fail_msg("the chunked request reached nginx as: %s", line);
        free(line);
    }
    /* hop-by-hop: Connection-listed, Proxy-* and Keep-Alive fields are gone */
    snprintf(needle, sizeof(needle), "case=%dz\"", row_named("hop-by-hop removed"));
    line = access_line(needle);
    assert_non_null(line);
    if (strstr(line, "drop=\"-\"") == NULL || strstr(line, "pauth=\"-\"") == NULL ||
        strstr(line, "pconn=\"-\"") == NULL)
        fail_msg("the hop-by-hop request reached nginx as: %s", line);
    free(line);
}

/* The proxy's own answer to a refusal: JSON with the request id and the log index. */
static void test_refusal_answer_names_the_record(void **state)
{
    static char out[8192];
    struct bytes b = {0};
    uint64_t from = log_end();
    long n;
    Sworn__V1__AdminResponse *tail;
    const Sworn__V1__Entry *e;
    char want[64];

    (void)state;
    expand(&b, T_POST "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 9999);
    n = sworn_pfx_raw(&T.p, b.p, b.len, 1, 20000, out, sizeof(out));
    free(b.p);
    assert_true(n > 0);
    assert_non_null(strstr(out, "HTTP/1.1 400 "));
    assert_non_null(strstr(out, "Content-Type: application/json"));
    tail = sworn_stack_tail(&T.s, 1000);
    assert_true(from >= tail->tail->first_index &&
                from < tail->tail->first_index + tail->tail->n_entries);
    e = tail->tail->entries[from - tail->tail->first_index];
    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
    snprintf(want, sizeof(want), "\"request_id\":\"%s\"", e->decision->request->request_id);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof(want), "\"log_index\":%llu", (unsigned long long)from);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "\"effect\":\"refused\""));
    sworn__v1__admin_response__free_unpacked(tail, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_forwarded_framing_and_fields),
        cmocka_unit_test(test_corpus_byte_by_byte),
        cmocka_unit_test(test_refusal_answer_names_the_record),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
