/*
 * test_http_parse.c -- unit tests of proxy/p_http.c, sworn-proxy's strict HTTP/1.1 head parser
 * and chunked decoder.
 *
 * A table of refused request heads covers every rule of p_http.h (request line, versions and the
 * HTTP/2 preface, targets and their forms, line ends, controls, field syntax, Host, framing,
 * upgrades, Expect), each with its exact status and sentence; the smuggling variants (CL.TE,
 * TE.CL, TE.TE spellings, '_' spellings) have their own table. Every prefix of a refused head
 * answers 1 until it is refused and then the same refusal (the answer is monotonic). A table of
 * accepted heads checks every parsed part; every prefix of each answers 1 and the whole the same
 * result. Pipelined requests parse one after the other from head_len. The limits are checked at
 * exactly head_max / fields_max and one over. The chunked decoder: valid bodies (extensions in
 * response mode, trailers dropped) decode to the same bytes at every split point and byte by
 * byte; bad sizes, extensions in requests, bad CRLFs, bad and oversized trailers, and max_body
 * are refused with their sentences, stickily. Responses: the framing table of RFC 9112 6.3 and
 * the same strict refusals. The hop-by-hop, Connection-list and field-find helpers. Every
 * sentence is checked to be short, static-looking (lower-case start) and free of the input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "p_http.h"
#include "testutil.h"
#include "upstream_fixture.h"

/* The structs are large; one of each is enough. */
static struct sworn_http_request req, req2;
static struct sworn_http_response resp, resp2;

/* A refusal's sentence: set, < 100 characters, starting lower-case, not holding the input. */
static void check_why(const char *why)
{
    assert_non_null(why);
    assert_true(strlen(why) > 0 && strlen(why) < 100);
    assert_true(why[0] >= 'a' && why[0] <= 'z');
}

static int parse_req(const char *p, size_t n, int *status, const char **why)
{
    struct sworn_http_limits lim;

    sworn_http_limits_default(&lim);
    *status = 0;
    *why = NULL;
    return sworn_http_parse_request((const uint8_t *)p, n, &lim, &req, status, why);
}

/* A span (ptr, len) equals the expected text (NULL: no span). */
static void assert_span(const char *ptr, size_t len, const char *want)
{
    if (want == NULL) {
        assert_null(ptr);
        assert_int_equal(len, 0);
        return;
    }
    assert_non_null(ptr);
    if (len != strlen(want) || memcmp(ptr, want, len) != 0) {
        fprintf(stderr, "span \"%.*s\" != \"%s\"\n", (int)len, ptr, want);
        fail();
    }
}

/* ---- refused requests ---- */

struct refusal {
    const char *head;
    size_t len; /* 0: strlen(head) */
    int status;
    const char *why;
};

/* A row whose head holds a NUL: its length is the literal's. */
#define WITH_NUL(lit, st, w)                                                                       \
    {                                                                                              \
        lit, sizeof(lit) - 1, st, w                                                                \
    }
#define HA "Host: a\r\n"
#define GET "GET / HTTP/1.1\r\n" HA
#define WS                                                                                         \
    "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

static const char one_space[] =
    "a request line that is not method, target and version with one space between";
static const char bad_version[] = "a malformed HTTP version";
static const char other_version[] = "an HTTP version other than 1.0 and 1.1";
static const char value_control[] = "a control character in a field value";
static const char bad_port[] = "an invalid port (1 to 65535, decimal digits only)";
static const char bad_hostf[] = "a Host field that is not a valid host[:port]";
static const char other_host[] = "a Host field naming another host or port than the target";
static const char bad_cl[] = "a Content-Length that is not 1 to 18 decimal digits";
static const char not_chunked[] = "a Transfer-Encoding other than chunked";
static const char both[] = "both Content-Length and Transfer-Encoding";
static const char fold[] = "obs-fold (a field line starting with whitespace)";
static const char ws_name[] = "whitespace in a field name or before its colon";
static const char underscore[] = "a field name spelling a framing or hop-by-hop field with '_'";
static const char bare_lf[] = "a bare LF (line feed without carriage return) in the head";
static const char bare_cr[] = "a bare CR (carriage return without line feed) in the head";
static const char line_control[] = "a control character or non-ASCII byte in the request line";

static const struct refusal refusals[] = {
    /* the request line */
    {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA / HTTP/1.1\r\n" HA "\r\n", 0, 501,
     "a method longer than 32 bytes"},
    {"G(T / HTTP/1.1\r\n" HA "\r\n", 0, 400, "an invalid character in the method"},
    {"GET  / HTTP/1.1\r\n" HA "\r\n", 0, 400, one_space},
    {"GET /  HTTP/1.1\r\n" HA "\r\n", 0, 400, one_space},
    {"GET / HTTP/1.1 \r\n" HA "\r\n", 0, 400, one_space},
    {" GET / HTTP/1.1\r\n" HA "\r\n", 0, 400, one_space},
    {"GET /a b HTTP/1.1\r\n" HA "\r\n", 0, 400, one_space},
    {"GET / \r\n" HA "\r\n", 0, 400, one_space},
    {"GET /\r\n" HA "\r\n", 0, 400, one_space},
    {"GET\t/ HTTP/1.1\r\n" HA "\r\n", 0, 400, line_control},
    {"GET /\x01 HTTP/1.1\r\n" HA "\r\n", 0, 400, line_control},
    {"GET /\x7f HTTP/1.1\r\n" HA "\r\n", 0, 400, line_control},
    {"GET /caf\xc3\xa9 HTTP/1.1\r\n" HA "\r\n", 0, 400, line_control},
    {"G\xc3T / HTTP/1.1\r\n" HA "\r\n", 0, 400, line_control},
    WITH_NUL("GET /\0 HTTP/1.1\r\n" HA "\r\n", 400, line_control),
    {"GET / HTTP/2.0\r\n" HA "\r\n", 0, 505, other_version},
    {"GET / HTTP/3\r\n" HA "\r\n", 0, 505, other_version},
    {"GET / HTTP/2\r\n" HA "\r\n", 0, 505, other_version},
    {"GET / HTTP/1.2\r\n" HA "\r\n", 0, 505, other_version},
    {"GET / HTTP/0.9\r\n" HA "\r\n", 0, 505, other_version},
    {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 0, 505, other_version},
    {"GET / http/1.1\r\n" HA "\r\n", 0, 400, bad_version},
    {"GET / Http/1.1\r\n" HA "\r\n", 0, 400, bad_version},
    {"GET / HTTP/1.1x\r\n" HA "\r\n", 0, 400, bad_version},
    {"GET / HTTP/1.\r\n" HA "\r\n", 0, 400, bad_version},
    {"GET / HTTP/11.1\r\n" HA "\r\n", 0, 400, bad_version},
    {"GET / HTTP/\r\n" HA "\r\n", 0, 400, bad_version},
    {"GET / FOO\r\n" HA "\r\n", 0, 400, bad_version},
    {"\r\nGET / HTTP/1.1\r\n" HA "\r\n", 0, 400, "an empty line before the request or status line"},
    /* targets */
    {"GET /a#b HTTP/1.1\r\n" HA "\r\n", 0, 400, "a fragment (#) in the request-target"},
    {"GET http://a/#x HTTP/1.1\r\n" HA "\r\n", 0, 400, "a fragment (#) in the request-target"},
    {"GET http://u@a/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "userinfo (@) in the request-target"},
    {"GET http://u:p@a/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "userinfo (@) in the request-target"},
    {"GET http://a@/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "userinfo (@) in the request-target"},
    {"GET ftp://a/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "a scheme other than http, https, ws and wss"},
    {"GET file:///etc/passwd HTTP/1.1\r\n" HA "\r\n", 0, 400,
     "a scheme other than http, https, ws and wss"},
    {"GET httpx://a/ HTTP/1.1\r\n" HA "\r\n", 0, 400,
     "a scheme other than http, https, ws and wss"},
    {"GET http:/a/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "a request-target in no valid form"},
    {"GET a HTTP/1.1\r\n" HA "\r\n", 0, 400, "a request-target in no valid form"},
    {"GET 1http://a/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "a request-target in no valid form"},
    {"GET a:80 HTTP/1.1\r\n" HA "\r\n", 0, 400,
     "the authority-form (host:port) is for CONNECT only"},
    {"GET http:// HTTP/1.1\r\n" HA "\r\n", 0, 400, "an empty authority (host)"},
    {"GET http://:80/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "an empty host"},
    {"GET http://a?x HTTP/1.1\r\n" HA "\r\n", 0, 400,
     "an absolute-form target with a query but no path"},
    {"GET http://a:0/ HTTP/1.1\r\n" HA "\r\n", 0, 400, bad_port},
    {"GET http://a:/ HTTP/1.1\r\n" HA "\r\n", 0, 400, bad_port},
    {"GET http://a:65536/ HTTP/1.1\r\n" HA "\r\n", 0, 400, bad_port},
    {"GET http://a:+80/ HTTP/1.1\r\n" HA "\r\n", 0, 400, bad_port},
    {"GET http://a:000080/ HTTP/1.1\r\n" HA "\r\n", 0, 400, bad_port},
    {"GET http://a:8x/ HTTP/1.1\r\n" HA "\r\n", 0, 400, bad_port},
    {"GET http://a:1:2/ HTTP/1.1\r\n" HA "\r\n", 0, 400, bad_port},
    {"GET http://a%41/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "an invalid character in a host"},
    {"GET http://a\\b/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "an invalid character in a host"},
    {"GET http://[::1/ HTTP/1.1\r\n" HA "\r\n", 0, 400,
     "an IPv6 literal without its closing bracket"},
    {"GET http://[]/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "an invalid IPv6 literal"},
    {"GET http://[1234]/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "an invalid IPv6 literal"},
    {"GET http://[v1.x]/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "an invalid IPv6 literal"},
    {"GET http://[fe80::1%25eth0]/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "an invalid IPv6 literal"},
    {"GET http://[::1]x/ HTTP/1.1\r\n" HA "\r\n", 0, 400, "bytes after an IPv6 literal"},
    {"GET "
     "http://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/ HTTP/"
     "1.1\r\n" HA "\r\n",
     0, 400, "a host longer than 255 bytes"},
    {"CONNECT / HTTP/1.1\r\n" HA "\r\n", 0, 400,
     "a CONNECT target not in authority-form (host:port)"},
    {"CONNECT * HTTP/1.1\r\n" HA "\r\n", 0, 400,
     "a CONNECT target not in authority-form (host:port)"},
    {"CONNECT http://a:443 HTTP/1.1\r\n\r\n", 0, 400,
     "a CONNECT target not in authority-form (host:port)"},
    {"CONNECT http://a:443/ HTTP/1.1\r\n\r\n", 0, 400,
     "a CONNECT target not in authority-form (host:port)"},
    {"CONNECT a HTTP/1.1\r\n\r\n", 0, 400, "an authority without a port (host:port is required)"},
    {"CONNECT [::1] HTTP/1.1\r\n\r\n", 0, 400,
     "an authority without a port (host:port is required)"},
    {"CONNECT a:0 HTTP/1.1\r\n\r\n", 0, 400, bad_port},
    {"CONNECT a: HTTP/1.1\r\n\r\n", 0, 400, bad_port},
    {"CONNECT a:65536 HTTP/1.1\r\n\r\n", 0, 400, bad_port},
    {"CONNECT a:+443 HTTP/1.1\r\n\r\n", 0, 400, bad_port},
    {"CONNECT a:-443 HTTP/1.1\r\n\r\n", 0, 400, bad_port},
    {"CONNECT a:000443 HTTP/1.1\r\n\r\n", 0, 400, bad_port},
    {"CONNECT a:44a HTTP/1.1\r\n\r\n", 0, 400, bad_port},
    {"CONNECT ::1:443 HTTP/1.1\r\n\r\n", 0, 400, "an empty host"},
    {"CONNECT [::1]443 HTTP/1.1\r\n\r\n", 0, 400, "bytes after an IPv6 literal"},
    {"CONNECT u@a:443 HTTP/1.1\r\n\r\n", 0, 400, "userinfo (@) in an authority"},
    {"CONNECT a:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 0, 400,
     "a CONNECT request with a body"},
    {"CONNECT a:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 0, 400,
     "a CONNECT request with a body"},
    {"GET * HTTP/1.1\r\n" HA "\r\n", 0, 400, "the asterisk-form (*) is for OPTIONS only"},
    {"OPTIONS *x HTTP/1.1\r\n" HA "\r\n", 0, 400, "a request-target in no valid form"},
    /* line ends */
    {"GET / HTTP/1.1\nHost: a\r\n\r\n", 0, 400, bare_lf},
    {"GET / HTTP/1.1\r\nHost: a\n\r\n", 0, 400, bare_lf},
    {"GET / HTTP/1.1\r\nHost: a\r\n\n", 0, 400, bare_lf},
    {"GET / HTTP/1.1\r\nHost: a\r\nX: a\nb\r\n\r\n", 0, 400, bare_lf},
    {"GET / HTTP/1.1\rHost: a\r\n\r\n", 0, 400, bare_cr},
    {"GET / HTTP/1.1\r\nX: a\rb\r\n" HA "\r\n", 0, 400, bare_cr},
    {"GET / HTTP/1.1\r\n" HA "\r\r\n", 0, 400, bare_cr},
    {"GET / HTTP/1.1\r\n" HA "\r\r", 0, 400, bare_cr},
    /* controls and bytes in fields */
    WITH_NUL(GET "X: a\0b\r\n\r\n", 400, "a NUL byte in a field value"),
    /* the first wrong byte decides, as it would for a shorter input (found by the fuzzer) */
    WITH_NUL("GET h\0\r\xf6"
             "ost: a\r\n\r\n",
             400, line_control),
    {GET "X: \x01\n\r\n", 0, 400, value_control},
    {GET "X(\r\r\n", 0, 400, "an invalid character in a field name"},
    {GET "X: a\x01z\r\n\r\n", 0, 400, value_control},
    {GET "X: \x0b\r\n\r\n", 0, 400, value_control},
    {GET "X: \x0c\r\n\r\n", 0, 400, value_control},
    {GET "X: a\x7f\r\n\r\n", 0, 400, value_control},
    {GET "X: a\x1b[0m\r\n\r\n", 0, 400, value_control},
    {GET "X\xc3\xa9: a\r\n\r\n", 0, 400, "an invalid character in a field name"},
    {GET "X(: a\r\n\r\n", 0, 400, "an invalid character in a field name"},
    {GET "X/Y: a\r\n\r\n", 0, 400, "an invalid character in a field name"},
    WITH_NUL(GET "X\0: a\r\n\r\n", 400, "an invalid character in a field name"),
    {GET "Host : a\r\n\r\n", 0, 400, ws_name},
    {GET "X\t: a\r\n\r\n", 0, 400, ws_name},
    {GET "X Y: a\r\n\r\n", 0, 400, ws_name},
    {GET ": a\r\n\r\n", 0, 400, "an empty field name"},
    {GET "Xa\r\n\r\n", 0, 400, "a field line without a colon"},
    {"GET / HTTP/1.1\r\n Host: a\r\n\r\n", 0, 400, fold},
    {"GET / HTTP/1.1\r\n\tHost: a\r\n\r\n", 0, 400, fold},
    {GET "X: a\r\n b\r\n\r\n", 0, 400, fold},
    {GET "X: a\r\n\tb\r\n\r\n", 0, 400, fold},
    /* Host */
    {"GET / HTTP/1.1\r\n\r\n", 0, 400, "an HTTP/1.1 request without a Host field"},
    {"GET http://a/ HTTP/1.1\r\n\r\n", 0, 400, "an HTTP/1.1 request without a Host field"},
    {GET HA "\r\n", 0, 400, "more than one Host field"},
    {GET "host: a\r\n\r\n", 0, 400, "more than one Host field"},
    {"GET / HTTP/1.0\r\n" HA HA "\r\n", 0, 400, "more than one Host field"},
    {"GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 0, 400, bad_hostf},
    {"GET / HTTP/1.1\r\nHost: \r\n\r\n", 0, 400, bad_hostf},
    {"GET / HTTP/1.1\r\nHost: a:0\r\n\r\n", 0, 400, bad_hostf},
    {"GET / HTTP/1.1\r\nHost: a:\r\n\r\n", 0, 400, bad_hostf},
    {"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 0, 400, bad_hostf},
    {"GET / HTTP/1.1\r\nHost: a,b\r\n\r\n", 0, 400, bad_hostf},
    {"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 0, 400, bad_hostf},
    {"GET / HTTP/1.1\r\nHost: http://a\r\n\r\n", 0, 400, bad_hostf},
    {"GET http://a/ HTTP/1.1\r\nHost: b\r\n\r\n", 0, 400, other_host},
    {"GET http://a/ HTTP/1.1\r\nHost: a:8080\r\n\r\n", 0, 400, other_host},
    {"GET http://a:8080/ HTTP/1.1\r\nHost: a\r\n\r\n", 0, 400, other_host},
    {"GET https://a/ HTTP/1.1\r\nHost: a:80\r\n\r\n", 0, 400, other_host},
    {"GET http://a.example/ HTTP/1.1\r\nHost: a.example.\r\n\r\n", 0, 400, other_host},
    {"GET http://[::1]/ HTTP/1.1\r\nHost: [::2]\r\n\r\n", 0, 400, other_host},
    {"GET http://a/ HTTP/1.0\r\nHost: b\r\n\r\n", 0, 400, other_host},
    {"CONNECT a:443 HTTP/1.1\r\nHost: b:443\r\n\r\n", 0, 400, other_host},
    {"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 0, 400, other_host},
    {"CONNECT a:443 HTTP/1.1\r\nHost: a:8443\r\n\r\n", 0, 400, other_host},
    {"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nHost: a:443\r\n\r\n", 0, 400,
     "more than one Host field"},
    /* Content-Length */
    {GET "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 0, 400,
     "more than one Content-Length field"},
    {GET "Content-Length: 5, 5\r\n\r\nhello", 0, 400, bad_cl},
    {GET "Content-Length: +5\r\n\r\nhello", 0, 400, bad_cl},
    {GET "Content-Length: -1\r\n\r\n", 0, 400, bad_cl},
    {GET "Content-Length: 5 5\r\n\r\n", 0, 400, bad_cl},
    {GET "Content-Length: 0x5\r\n\r\n", 0, 400, bad_cl},
    {GET "Content-Length: 5.0\r\n\r\n", 0, 400, bad_cl},
    {GET "Content-Length:\r\n\r\n", 0, 400, bad_cl},
    {GET "Content-Length: 1000000000000000000\r\n\r\n", 0, 400, bad_cl},
    {GET "Content-Length: 99999999999999999999999\r\n\r\n", 0, 400, bad_cl},
    /* Transfer-Encoding */
    {GET "Transfer-Encoding: chunked, chunked\r\n\r\n", 0, 400, not_chunked},
    {GET "Transfer-Encoding: gzip, chunked\r\n\r\n", 0, 400, not_chunked},
    {GET "Transfer-Encoding: chunked, gzip\r\n\r\n", 0, 400, not_chunked},
    {GET "Transfer-Encoding: identity\r\n\r\n", 0, 400, not_chunked},
    {GET "Transfer-Encoding:\r\n\r\n", 0, 400, not_chunked},
    {GET "Transfer-Encoding: \"chunked\"\r\n\r\n", 0, 400, not_chunked},
    {GET "Transfer-Encoding: chunked;q=1\r\n\r\n", 0, 400, not_chunked},
    {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 0, 400,
     "a Transfer-Encoding field in an HTTP/1.0 message"},
    /* upgrades */
    {GET
     "Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQ\r\n\r\n",
     0, 400, "an HTTP2-Settings field (an upgrade to HTTP/2)"},
    {GET "HTTP2-Settings: AAMAAABkAAQ\r\n\r\n", 0, 400,
     "an HTTP2-Settings field (an upgrade to HTTP/2)"},
    {GET "Upgrade: h2c\r\nConnection: Upgrade\r\n\r\n", 0, 400,
     "an upgrade to h2c (HTTP/2 over cleartext)"},
    {GET "Upgrade: H2C\r\nConnection: Upgrade\r\n\r\n", 0, 400,
     "an upgrade to h2c (HTTP/2 over cleartext)"},
    {GET "Upgrade: websocket, h2c\r\nConnection: Upgrade\r\n\r\n", 0, 400,
     "an upgrade to h2c (HTTP/2 over cleartext)"},
    {GET "Upgrade: TLS/1.2\r\nConnection: Upgrade\r\n\r\n", 0, 400,
     "an Upgrade other than websocket"},
    {GET "Upgrade: websocket, foo\r\nConnection: Upgrade\r\n\r\n", 0, 400,
     "an Upgrade other than websocket"},
    {GET "Upgrade:\r\n\r\n", 0, 400, "an Upgrade other than websocket"},
    {GET WS "Upgrade: websocket\r\n\r\n", 0, 400, "more than one Upgrade field"},
    {"POST / HTTP/1.1\r\n" HA WS "\r\n", 0, 400,
     "a WebSocket upgrade with a method other than GET"},
    {"get / HTTP/1.1\r\n" HA WS "\r\n", 0, 400, "a WebSocket upgrade with a method other than GET"},
    {"GET / HTTP/1.0\r\n" HA WS "\r\n", 0, 400, "a WebSocket upgrade in HTTP/1.0"},
    {GET "Upgrade: websocket\r\nSec-WebSocket-Key: x\r\n\r\n", 0, 400,
     "a WebSocket upgrade without Connection: upgrade"},
    {GET "Upgrade: websocket\r\nConnection: upgraded\r\nSec-WebSocket-Key: x\r\n\r\n", 0, 400,
     "a WebSocket upgrade without Connection: upgrade"},
    {GET WS "Content-Length: 5\r\n\r\nhello", 0, 400, "a WebSocket upgrade with a body"},
    {GET WS "Transfer-Encoding: chunked\r\n\r\n", 0, 400, "a WebSocket upgrade with a body"},
    {GET "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n", 0, 400,
     "a WebSocket upgrade without Sec-WebSocket-Key"},
    /* Expect */
    {GET "Expect: foo\r\n\r\n", 0, 417, "an Expect other than 100-continue"},
    {GET "Expect: 100-continue, foo\r\n\r\n", 0, 417, "an Expect other than 100-continue"},
    {GET "Expect:\r\n\r\n", 0, 417, "an Expect other than 100-continue"},
    {GET "Expect: 100-continue\r\nExpect: 200-ok\r\n\r\n", 0, 417,
     "an Expect other than 100-continue"},
};

/* The smuggling variants: CL.TE, TE.CL, TE.TE and the spellings that split parsers. */
static const struct refusal smuggling[] = {
    /* CL.TE and TE.CL */
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n"
     "0\r\n\r\nG",
     0, 400, both},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n"
     "5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n",
     0, 400, both},
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
     400, both},
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: gzip\r\n\r\n", 0, 400,
     both},
    /* TE.TE */
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n", 0, 400, not_chunked},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunkedx\r\n\r\n", 0, 400, not_chunked},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunk\r\n\r\n", 0, 400, not_chunked},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: x\r\n\r\n", 0, 400, not_chunked},
    {"POST / HTTP/1.1\r\nHost: a\r\n Transfer-Encoding: chunked\r\n\r\n", 0, 400, fold},
    {"POST / HTTP/1.1\r\n Transfer-Encoding: chunked\r\nHost: a\r\n\r\n", 0, 400, fold},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n", 0, 400, ws_name},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding\t: chunked\r\n\r\n", 0, 400, ws_name},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-encoding: x\r\n\r\n", 0,
     400, "more than one Transfer-Encoding field"},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"
     "\r\n",
     0, 400, "more than one Transfer-Encoding field"},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\x0b"
     "chunked\r\n\r\n",
     0, 400, value_control},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\x0b\r\n\r\n", 0, 400, value_control},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\x0c"
     "chunked\r\n\r\n",
     0, 400, value_control},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\tx\r\n\r\n", 0, 400, fold},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\n\r\n", 0, 400, bare_lf},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\r\n\r\n", 0, 400, bare_cr},
    WITH_NUL("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ch\0unked\r\n\r\n", 400,
             "a NUL byte in a field value"),
    /* the '_' spellings some servers read as '-' */
    {"POST / HTTP/1.1\r\nHost: a\r\nContent_Length: 5\r\n\r\nhello", 0, 400, underscore},
    {"POST / HTTP/1.1\r\nHost: a\r\ncontent_length: 5\r\n\r\nhello", 0, 400, underscore},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer_Encoding: chunked\r\n\r\n", 0, 400, underscore},
    {"POST / HTTP/1.1\r\nHost: a\r\nTRANSFER_ENCODING: chunked\r\n\r\n", 0, 400, underscore},
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent_Length: 6\r\n\r\nhello", 0, 400,
     underscore},
    {"POST / HTTP/1.1\r\nHost: a\r\nProxy_Authorization: x\r\n\r\n", 0, 400, underscore},
    {"POST / HTTP/1.1\r\nHost: a\r\nKeep_Alive: 1\r\n\r\n", 0, 400, underscore},
    {"POST / HTTP/1.1\r\nHost: a\r\nHTTP2_Settings: x\r\n\r\n", 0, 400, underscore},
    /* two Content-Length */
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", 0, 400,
     "more than one Content-Length field"},
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\nhello", 0, 400,
     "more than one Content-Length field"},
};

static size_t row_len(const struct refusal *r)
{
    return r->len != 0 ? r->len : strlen(r->head);
}

/* The row is refused as listed, and every prefix answers 1 until it is refused, after which
   every longer prefix gives the same refusal. */
static void check_refusal(const struct refusal *r)
{
    size_t n = row_len(r), first_bad = n + 1;
    int status, first_status = 0;
    const char *why, *first_why = NULL;
    int rc = parse_req(r->head, n, &status, &why);

    if (rc != -1 || status != r->status || why == NULL || strcmp(why, r->why) != 0) {
        fprintf(stderr, "row \"%.*s\": rc %d status %d why \"%s\", wanted %d \"%s\"\n", (int)n,
                r->head, rc, status, why ? why : "(null)", r->status, r->why);
        fail();
    }
    check_why(why);
    for (size_t k = 0; k <= n; k++) {
        rc = parse_req(r->head, k, &status, &why);
        if (k < first_bad) {
            if (rc == -1) {
                first_bad = k;
                first_status = status;
                first_why = why;
            } else if (rc != 1) {
                fprintf(stderr, "row \"%.*s\": prefix %zu answers %d\n", (int)n, r->head, k, rc);
                fail();
            }
        } else {
            assert_int_equal(rc, -1);
            assert_int_equal(status, first_status);
            assert_string_equal(why, first_why);
        }
    }
}

static void test_request_refusals(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
        check_refusal(&refusals[i]);
}

static void test_smuggling(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(smuggling) / sizeof(smuggling[0]); i++)
        check_refusal(&smuggling[i]);
}

/* ---- accepted requests ---- */

struct accept {
    const char *head;
    const char *method, *target;
    enum sworn_http_form form;
    const char *scheme, *host;
    unsigned port;
    int port_given;
    const char *path;
    unsigned minor;
    const char *host_field;
    enum sworn_http_framing framing;
    uint64_t content_length;
    int close, ws, expect;
    size_t nfields;
};

#define O SWORN_HTTP_ORIGIN
#define ABS SWORN_HTTP_ABSOLUTE
#define AUTH SWORN_HTTP_AUTHORITY
#define AST SWORN_HTTP_ASTERISK
#define NB SWORN_HTTP_NO_BODY
#define LEN SWORN_HTTP_LENGTH
#define CH SWORN_HTTP_CHUNKED

static const struct accept accepts[] = {
    {GET "\r\n", "GET", "/", O, NULL, NULL, 0, 0, "/", 1, "a", NB, 0, 0, 0, 0, 1},
    {"GET /a/b?c=d&e=%2F HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\n", "GET",
     "/a/b?c=d&e=%2F", O, NULL, NULL, 0, 0, "/a/b?c=d&e=%2F", 1, "example.com:8080", NB, 0, 0, 0, 0,
     2},
    {"GET http://a.example/x?y HTTP/1.1\r\nHost: a.example\r\n\r\n", "GET", "http://a.example/x?y",
     ABS, "http", "a.example", 80, 0, "/x?y", 1, "a.example", NB, 0, 0, 0, 0, 1},
    {"GET HTTP://A.Example HTTP/1.1\r\nHost: a.example:80\r\n\r\n", "GET", "HTTP://A.Example", ABS,
     "HTTP", "A.Example", 80, 0, "/", 1, "a.example:80", NB, 0, 0, 0, 0, 1},
    {"GET https://a:8443/ HTTP/1.1\r\nHost: A:8443\r\n\r\n", "GET", "https://a:8443/", ABS, "https",
     "a", 8443, 1, "/", 1, "A:8443", NB, 0, 0, 0, 0, 1},
    {"GET https://a/ HTTP/1.1\r\nHost: a:443\r\n\r\n", "GET", "https://a/", ABS, "https", "a", 443,
     0, "/", 1, "a:443", NB, 0, 0, 0, 0, 1},
    {"GET wss://a/s HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "wss://a/s", ABS, "wss", "a", 443, 0, "/s",
     1, "a", NB, 0, 0, 0, 0, 1},
    {"GET ws://a:80/s HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "ws://a:80/s", ABS, "ws", "a", 80, 1,
     "/s", 1, "a", NB, 0, 0, 0, 0, 1},
    {"GET http://[::1]:8080/p HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", "GET", "http://[::1]:8080/p",
     ABS, "http", "[::1]", 8080, 1, "/p", 1, "[::1]:8080", NB, 0, 0, 0, 0, 1},
    {"GET http://[::ffff:1.2.3.4]/ HTTP/1.1\r\nHost: [::FFFF:1.2.3.4]\r\n\r\n", "GET",
     "http://[::ffff:1.2.3.4]/", ABS, "http", "[::ffff:1.2.3.4]", 80, 0, "/", 1, "[::FFFF:1.2.3.4]",
     NB, 0, 0, 0, 0, 1},
    {"GET http://a/@b HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "http://a/@b", ABS, "http", "a", 80, 0,
     "/@b", 1, "a", NB, 0, 0, 0, 0, 1},
    {"GET http://a/ HTTP/1.0\r\n\r\n", "GET", "http://a/", ABS, "http", "a", 80, 0, "/", 0, NULL,
     NB, 0, 1, 0, 0, 0},
    {"CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n", "CONNECT", "a.example:443",
     AUTH, NULL, "a.example", 443, 1, NULL, 1, "a.example:443", NB, 0, 0, 0, 0, 1},
    {"CONNECT A.example:443 HTTP/1.1\r\nhost: a.EXAMPLE:443\r\n\r\n", "CONNECT", "A.example:443",
     AUTH, NULL, "A.example", 443, 1, NULL, 1, "a.EXAMPLE:443", NB, 0, 0, 0, 0, 1},
    {"CONNECT a:1 HTTP/1.1\r\n\r\n", "CONNECT", "a:1", AUTH, NULL, "a", 1, 1, NULL, 1, NULL, NB, 0,
     0, 0, 0, 0},
    {"CONNECT [2001:db8::1]:65535 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "CONNECT",
     "[2001:db8::1]:65535", AUTH, NULL, "[2001:db8::1]", 65535, 1, NULL, 1, NULL, LEN, 0, 0, 0, 0,
     1},
    {"CONNECT 10.0.0.1:00443 HTTP/1.0\r\n\r\n", "CONNECT", "10.0.0.1:00443", AUTH, NULL, "10.0.0.1",
     443, 1, NULL, 0, NULL, NB, 0, 1, 0, 0, 0},
    {"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "OPTIONS", "*", AST, NULL, NULL, 0, 0, NULL, 1, "a",
     NB, 0, 0, 0, 0, 1},
    {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA / HTTP/1.1\r\n" HA "\r\n",
     "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "/", O, NULL, NULL, 0, 0, "/", 1, "a", NB, 0, 0, 0, 0, 1},
    {"M-SEARCH! /~x HTTP/1.1\r\n" HA "\r\n", "M-SEARCH!", "/~x", O, NULL, NULL, 0, 0, "/~x", 1, "a",
     NB, 0, 0, 0, 0, 1},
    /* HTTP/1.0 and the connection flags */
    {"GET / HTTP/1.0\r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0, "/", 0, NULL, NB, 0, 1, 0, 0, 0},
    {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0, "/", 0,
     NULL, NB, 0, 0, 0, 0, 1},
    {"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0,
     "/", 0, NULL, NB, 0, 1, 0, 0, 1},
    {GET "Connection: close\r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0, "/", 1, "a", NB, 0, 1, 0, 0,
     2},
    {GET "Connection: foo,\r\nConnection: , CLOSE \r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0, "/",
     1, "a", NB, 0, 1, 0, 0, 3},
    {GET "Connection: closed\r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0, "/", 1, "a", NB, 0, 0, 0, 0,
     2},
    /* framing */
    {"POST /u HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", "POST", "/u", O, NULL, NULL,
     0, 0, "/u", 1, "a", LEN, 5, 0, 0, 0, 2},
    {"POST /u HTTP/1.1\r\nHost: a\r\nContent-Length:   0\t\r\n\r\n", "POST", "/u", O, NULL, NULL, 0,
     0, "/u", 1, "a", LEN, 0, 0, 0, 0, 2},
    {"POST /u HTTP/1.1\r\nHost: a\r\ncontent-length: 000000000000000042\r\n\r\n", "POST", "/u", O,
     NULL, NULL, 0, 0, "/u", 1, "a", LEN, 42, 0, 0, 0, 2},
    {"POST /u HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999999999999\r\n\r\n", "POST", "/u", O,
     NULL, NULL, 0, 0, "/u", 1, "a", LEN, 999999999999999999ull, 0, 0, 0, 2},
    {"POST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", "POST", "/u", O, NULL,
     NULL, 0, 0, "/u", 1, "a", CH, 0, 0, 0, 0, 2},
    {"POST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\tCHUNKED\t\r\n\r\n", "POST", "/u", O, NULL,
     NULL, 0, 0, "/u", 1, "a", CH, 0, 0, 0, 0, 2},
    {"POST /u HTTP/1.0\r\nContent-Length: 1\r\n\r\nx", "POST", "/u", O, NULL, NULL, 0, 0, "/u", 0,
     NULL, LEN, 1, 1, 0, 0, 1},
    /* upgrades, Expect, field values */
    {GET WS "Sec-WebSocket-Version: 13\r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0, "/", 1, "a", NB,
     0, 0, 1, 0, 5},
    {GET "upgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nsec-websocket-key: x\r\n"
         "Content-Length: 0\r\n\r\n",
     "GET", "/", O, NULL, NULL, 0, 0, "/", 1, "a", LEN, 0, 0, 1, 0, 5},
    {GET "Connection: upgrade\r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0, "/", 1, "a", NB, 0, 0, 0,
     0, 2},
    {"PUT /f HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\nabc", "PUT",
     "/f", O, NULL, NULL, 0, 0, "/f", 1, "a", LEN, 3, 0, 0, 1, 3},
    {"PUT /f HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc", "PUT", "/f", O,
     NULL, NULL, 0, 0, "/f", 0, NULL, LEN, 3, 1, 0, 0, 2},
    {GET "X-Name: caf\xc3\xa9 \xff\r\nX-Empty:\r\nX-Tab:\t a\tb \t\r\nX_Other: 1\r\n\r\n", "GET",
     "/", O, NULL, NULL, 0, 0, "/", 1, "a", NB, 0, 0, 0, 0, 5},
    {"GET / HTTP/1.1\r\nHost:a\r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0, "/", 1, "a", NB, 0, 0, 0,
     0, 1},
    {"GET / HTTP/1.1\r\nHost: xn--bcher-kva.example_1~\r\n\r\n", "GET", "/", O, NULL, NULL, 0, 0,
     "/", 1, "xn--bcher-kva.example_1~", NB, 0, 0, 0, 0, 1},
};

static size_t head_of(const char *s)
{
    const char *e = strstr(s, "\r\n\r\n");

    assert_non_null(e);
    return (size_t)(e - s) + 4;
}

/* Every span of a parsed request lies inside its head (or is the static "/"). */
static void check_spans(const uint8_t *p, const struct sworn_http_request *r)
{
    const char *lo = (const char *)p, *hi = (const char *)p + r->head_len;
#define INSIDE(ptr, len) assert_true((ptr) == NULL || ((ptr) >= lo && (ptr) + (len) <= hi))
    INSIDE(r->method, r->method_len);
    INSIDE(r->target, r->target_len);
    INSIDE(r->scheme, r->scheme_len);
    INSIDE(r->host, r->host_len);
    if (!(r->path_len == 1 && r->path != NULL && r->path[0] == '/' && r->form == ABS))
        INSIDE(r->path, r->path_len);
    INSIDE(r->host_field, r->host_field_len);
    INSIDE(r->host_field_host, r->host_field_host_len);
    for (size_t i = 0; i < r->nfields; i++) {
        INSIDE(r->fields[i].name, r->fields[i].name_len);
        INSIDE(r->fields[i].value, r->fields[i].value_len);
    }
#undef INSIDE
}

static void check_accept(const struct accept *a, const struct sworn_http_request *r)
{
    assert_span(r->method, r->method_len, a->method);
    assert_span(r->target, r->target_len, a->target);
    assert_int_equal(r->form, a->form);
    assert_span(r->scheme, r->scheme_len, a->scheme);
    assert_span(r->host, r->host_len, a->host);
    assert_int_equal(r->port, a->port);
    assert_int_equal(r->port_given, a->port_given);
    assert_span(r->path, r->path_len, a->path);
    assert_int_equal(r->version_minor, a->minor);
    assert_int_equal(r->has_host, a->host_field != NULL);
    assert_span(r->host_field, r->host_field_len, a->host_field);
    assert_int_equal(r->framing, a->framing);
    assert_int_equal(r->content_length, a->content_length);
    assert_int_equal(r->connection_close, a->close);
    assert_int_equal(r->upgrade_websocket, a->ws);
    assert_int_equal(r->expect_continue, a->expect);
    assert_int_equal(r->nfields, a->nfields);
    assert_int_equal(r->head_len, head_of(a->head));
}

static void test_request_accepts(void **state)
{
    int status;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(accepts) / sizeof(accepts[0]); i++) {
        const struct accept *a = &accepts[i];
        int rc = parse_req(a->head, strlen(a->head), &status, &why);

        if (rc != 0) {
            fprintf(stderr, "row \"%s\": rc %d status %d why \"%s\"\n", a->head, rc, status,
                    why ? why : "(null)");
            fail();
        }
        check_accept(a, &req);
        check_spans((const uint8_t *)a->head, &req);
    }
    /* Field names keep their case; values lose their OWS only. */
    assert_int_equal(parse_req(accepts[38].head, strlen(accepts[38].head), &status, &why), 0);
    assert_span(req.fields[1].name, req.fields[1].name_len, "X-Name");
    assert_span(req.fields[1].value, req.fields[1].value_len, "caf\xc3\xa9 \xff");
    assert_span(req.fields[2].value, req.fields[2].value_len, "");
    assert_span(req.fields[3].value, req.fields[3].value_len, "a\tb");
    assert_span(req.fields[4].name, req.fields[4].name_len, "X_Other");
    /* The Host field as an authority. */
    assert_int_equal(parse_req(accepts[1].head, strlen(accepts[1].head), &status, &why), 0);
    assert_span(req.host_field_host, req.host_field_host_len, "example.com");
    assert_int_equal(req.host_field_port, 8080);
    assert_int_equal(req.host_field_port_given, 1);
    assert_int_equal(parse_req(accepts[8].head, strlen(accepts[8].head), &status, &why), 0);
    assert_span(req.host_field_host, req.host_field_host_len, "[::1]");
    /* An empty absolute-form path is the static "/", not a byte of the input. */
    assert_int_equal(parse_req(accepts[3].head, strlen(accepts[3].head), &status, &why), 0);
    assert_true(req.path < accepts[3].head ||
                req.path >= accepts[3].head + strlen(accepts[3].head));
}

/* Every prefix of a valid head answers 1; the whole the same result as at once. */
static void test_request_incremental(void **state)
{
    int status;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(accepts) / sizeof(accepts[0]); i++) {
        const struct accept *a = &accepts[i];
        size_t hl = head_of(a->head);

        for (size_t k = 0; k < hl; k++) {
            int rc = parse_req(a->head, k, &status, &why);

            if (rc != 1) {
                fprintf(stderr, "row \"%s\": prefix %zu answers %d (%s)\n", a->head, k, rc,
                        why ? why : "");
                fail();
            }
        }
        /* A copy in a buffer of exactly the head's size: nothing past len is read (ASan). */
        uint8_t *copy = malloc(hl);

        assert_non_null(copy);
        memcpy(copy, a->head, hl);
        assert_int_equal(parse_req((const char *)copy, hl, &status, &why), 0);
        memcpy(&req2, &req, sizeof(req));
        assert_int_equal(parse_req(a->head, strlen(a->head), &status, &why), 0);
        assert_int_equal(req2.head_len, req.head_len);
        assert_int_equal(req2.nfields, req.nfields);
        assert_int_equal(req2.framing, req.framing);
        assert_int_equal(req2.method - (const char *)copy, req.method - a->head);
        for (size_t f = 0; f < req.nfields; f++) {
            assert_int_equal(req2.fields[f].value - (const char *)copy,
                             req.fields[f].value - a->head);
            assert_int_equal(req2.fields[f].value_len, req.fields[f].value_len);
        }
        free(copy);
    }
    /* Nothing yet, and a NULL pointer with no bytes. */
    struct sworn_http_limits lim;

    sworn_http_limits_default(&lim);
    assert_int_equal(sworn_http_parse_request(NULL, 0, &lim, &req, &status, &why), 1);
}

static void test_pipelined(void **state)
{
    static const char two[] = "GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
                              "POST /b HTTP/1.1\r\nHost: b\r\nContent-Length: 3\r\n\r\nxyz"
                              "GET /c HTTP/1.1\r\nHost: c\r\n\r\n"
                              "GET /d HTT";
    size_t off = 0, n = strlen(two);
    int status;
    const char *why;

    (void)state;
    assert_int_equal(parse_req(two, n, &status, &why), 0);
    assert_int_equal(req.head_len, strlen("GET /a HTTP/1.1\r\nHost: a\r\n\r\n"));
    assert_span(req.path, req.path_len, "/a");
    assert_int_equal(req.nfields, 1);
    off = req.head_len;
    assert_int_equal(parse_req(two + off, n - off, &status, &why), 0);
    assert_span(req.method, req.method_len, "POST");
    assert_span(req.path, req.path_len, "/b");
    assert_span(req.host_field, req.host_field_len, "b");
    assert_int_equal(req.framing, LEN);
    assert_int_equal(req.content_length, 3);
    assert_int_equal(req.head_len,
                     strlen("POST /b HTTP/1.1\r\nHost: b\r\nContent-Length: 3\r\n\r\n"));
    off += req.head_len + req.content_length;
    assert_int_equal(parse_req(two + off, n - off, &status, &why), 0);
    assert_span(req.path, req.path_len, "/c");
    off += req.head_len;
    assert_int_equal(parse_req(two + off, n - off, &status, &why), 1);

    /* A chunked body ends where its last chunk and trailers end; the next head starts there. */
    static const char chunked[] =
        "POST /e HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        "3\r\nabc\r\n0\r\nT: 1\r\n\r\n"
        "GET /f HTTP/1.1\r\nHost: a\r\n\r\n";
    struct sworn_http_chunked c;
    const uint8_t *data;
    size_t data_len;

    n = strlen(chunked);
    assert_int_equal(parse_req(chunked, n, &status, &why), 0);
    assert_int_equal(req.framing, CH);
    off = req.head_len;
    sworn_http_chunked_init(&c, 100, 0);
    while (!sworn_http_chunked_done(&c)) {
        long r = sworn_http_chunked_feed(&c, (const uint8_t *)chunked + off, n - off, &data,
                                         &data_len, &status, &why);

        assert_true(r > 0);
        off += (size_t)r;
    }
    assert_int_equal(sworn_http_chunked_total(&c), 3);
    assert_memory_equal(chunked + off, "GET /f ", 7);
    assert_int_equal(parse_req(chunked + off, n - off, &status, &why), 0);
    assert_span(req.path, req.path_len, "/f");
    assert_int_equal(req.head_len, n - off);
}

/* A head of exactly head_max bytes is accepted, one more is 431; the same for fields_max. */
static void test_limits(void **state)
{
    static char buf[20000];
    struct sworn_http_limits lim;
    int status;
    const char *why;
    size_t n;

    (void)state;
    sworn_http_limits_default(&lim);
    assert_int_equal(lim.head_max, 16384);
    assert_int_equal(lim.fields_max, 100);
    for (size_t extra = 0; extra < 2; extra++) {
        n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\nHost: a\r\nX: ");
        while (n < lim.head_max + extra - 4)
            buf[n++] = 'x';
        memcpy(buf + n, "\r\n\r\n", 4);
        n += 4;
        assert_int_equal(n, lim.head_max + extra);
        int rc = sworn_http_parse_request((uint8_t *)buf, n, &lim, &req, &status, &why);

        if (extra == 0) {
            assert_int_equal(rc, 0);
            assert_int_equal(req.head_len, lim.head_max);
            /* Incomplete one byte short of the limit: more; at the limit: 431. */
            assert_int_equal(
                sworn_http_parse_request((uint8_t *)buf, n - 1, &lim, &req, &status, &why), 1);
            assert_int_equal(
                sworn_http_parse_request((uint8_t *)buf, n - 2, &lim, &req, &status, &why), 1);
        } else {
            assert_int_equal(rc, -1);
            assert_int_equal(status, 431);
            assert_string_equal(why, "a head longer than the limit");
            assert_int_equal(
                sworn_http_parse_request((uint8_t *)buf, lim.head_max, &lim, &req, &status, &why),
                -1);
            assert_int_equal(status, 431);
            assert_int_equal(sworn_http_parse_request((uint8_t *)buf, lim.head_max - 1, &lim, &req,
                                                      &status, &why),
                             1);
        }
    }
    /* A refusal in the bytes scanned wins over the length. */
    memcpy(buf, "GET / HTTP/1.1\n", 15);
    assert_int_equal(sworn_http_parse_request((uint8_t *)buf, 18000, &lim, &req, &status, &why),
                     -1);
    assert_int_equal(status, 400);

    /* fields_max fields (Host and 99 others), then one more. */
    for (size_t extra = 0; extra < 2; extra++) {
        n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\nHost: a\r\n");
        for (size_t i = 1; i < lim.fields_max + extra; i++)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "X-%zu: %zu\r\n", i, i);
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\r\n");
        int rc = sworn_http_parse_request((uint8_t *)buf, n, &lim, &req, &status, &why);

        if (extra == 0) {
            assert_int_equal(rc, 0);
            assert_int_equal(req.nfields, lim.fields_max);
        } else {
            assert_int_equal(rc, -1);
            assert_int_equal(status, 431);
            assert_string_equal(why, "more header fields than the limit");
            /* Found as soon as the extra field starts. */
            const char *last = strstr(buf, "X-100:");

            assert_non_null(last);
            assert_int_equal(sworn_http_parse_request((uint8_t *)buf, (size_t)(last - buf) + 1,
                                                      &lim, &req, &status, &why),
                             -1);
            assert_int_equal(status, 431);
            assert_int_equal(sworn_http_parse_request((uint8_t *)buf, (size_t)(last - buf), &lim,
                                                      &req, &status, &why),
                             1);
        }
    }
    /* A small limit, and one above the hard cap (taken as 128). */
    lim.fields_max = 2;
    n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\r\n");
    assert_int_equal(sworn_http_parse_request((uint8_t *)buf, n, &lim, &req, &status, &why), 0);
    n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\nY: 2\r\n\r\n");
    assert_int_equal(sworn_http_parse_request((uint8_t *)buf, n, &lim, &req, &status, &why), -1);
    assert_int_equal(status, 431);
    lim.fields_max = 1000;
    n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\nHost: a\r\n");
    for (size_t i = 1; i < SWORN_HTTP_FIELDS_MAX + 1; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "X: %zu\r\n", i);
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\r\n");
    assert_int_equal(sworn_http_parse_request((uint8_t *)buf, n, &lim, &req, &status, &why), -1);
    assert_int_equal(status, 431);
    /* A head_max of 0 refuses everything but nothing. */
    lim.head_max = 0;
    assert_int_equal(sworn_http_parse_request((uint8_t *)buf, 1, &lim, &req, &status, &why), -1);
    assert_int_equal(status, 431);
}

/* ---- chunked bodies ---- */

/* Decode all of p[0..n) in pieces of at most step bytes (0: at once); the payload into out.
   Returns the feed's last answer (-1) or 0, with *consumed. */
static int decode(struct sworn_http_chunked *c, const char *p, size_t n, size_t step, char *out,
                  size_t *out_len, size_t *consumed, int *status, const char **why)
{
    size_t off = 0;

    *out_len = 0;
    while (off < n && !sworn_http_chunked_done(c)) {
        size_t piece = step == 0 || n - off < step ? n - off : step;
        size_t used = 0;

        while (used < piece && !sworn_http_chunked_done(c)) {
            const uint8_t *data = (const uint8_t *)"junk";
            size_t data_len = 99;
            long r = sworn_http_chunked_feed(c, (const uint8_t *)p + off + used, piece - used,
                                             &data, &data_len, status, why);

            if (r < 0) {
                *consumed = off + used;
                return -1;
            }
            assert_true(r > 0 && (size_t)r <= piece - used);
            if (data != NULL) {
                assert_true(data >= (const uint8_t *)p + off + used);
                assert_true(data + data_len <= (const uint8_t *)p + off + used + (size_t)r);
                assert_true(data_len > 0);
                memcpy(out + *out_len, data, data_len);
                *out_len += data_len;
            } else {
                assert_int_equal(data_len, 0);
            }
            used += (size_t)r;
        }
        off += used;
    }
    *consumed = off;
    return 0;
}

struct chunk_ok {
    const char *body;
    int allow_ext;
    const char *decoded;
    size_t rest; /* bytes after the body's end (not consumed) */
};

static const struct chunk_ok chunk_oks[] = {
    {"0\r\n\r\n", 0, "", 0},
    {"5\r\nhello\r\n0\r\n\r\n", 0, "hello", 0},
    {"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nGET / HTTP/1.1\r\n", 0, "hello world", 16},
    {"A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n", 0, "0123456789abcdefghij", 0},
    {"0005\r\nhello\r\n0000\r\n\r\n", 0, "hello", 0},
    {"0000000000000005\r\nhello\r\n0\r\n\r\n", 0, "hello", 0},
    {"5\r\nhello\r\n0\r\nX-Trailer: 1\r\nChecksum: abc\t def\xff\r\nEmpty:\r\n\r\nX", 0, "hello",
     1},
    {"3\r\n\r\n\r\r\n0\r\n\r\n", 0, "\r\n\r", 0},
    {"5;a=b;c;d=\"q\\\"x y\";e=\"\"\r\nhello\r\n0;last=1\r\nT: v\r\n\r\n", 1, "hello", 0},
    {"1;x-y.z=~!\r\nA\r\n0\r\n\r\n", 1, "A", 0},
};

static void test_chunked_decode(void **state)
{
    struct sworn_http_chunked c;
    char out[256];
    size_t out_len, consumed;
    int status;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(chunk_oks) / sizeof(chunk_oks[0]); i++) {
        const struct chunk_ok *k = &chunk_oks[i];
        size_t n = strlen(k->body);

        /* at once, byte by byte, and at every split point into two */
        for (size_t step = 0; step <= n; step++) {
            sworn_http_chunked_init(&c, UINT64_MAX, k->allow_ext);
            assert_int_equal(decode(&c, k->body, n, step, out, &out_len, &consumed, &status, &why),
                             0);
            assert_int_equal(sworn_http_chunked_done(&c), 1);
            assert_int_equal(consumed, n - k->rest);
            assert_int_equal(out_len, strlen(k->decoded));
            assert_memory_equal(out, k->decoded, out_len);
            assert_int_equal(sworn_http_chunked_total(&c), out_len);
        }
        for (size_t split = 1; split < n; split++) {
            size_t a_len, b_len, ca, cb;

            sworn_http_chunked_init(&c, UINT64_MAX, k->allow_ext);
            assert_int_equal(decode(&c, k->body, split, 0, out, &a_len, &ca, &status, &why), 0);
            assert_int_equal(
                decode(&c, k->body + ca, n - ca, 0, out + a_len, &b_len, &cb, &status, &why), 0);
            assert_int_equal(sworn_http_chunked_done(&c), 1);
            assert_int_equal(ca + cb, n - k->rest);
            assert_int_equal(a_len + b_len, strlen(k->decoded));
            assert_memory_equal(out, k->decoded, a_len + b_len);
        }
        /* Once done, nothing more is consumed. */
        const uint8_t *data;
        size_t data_len;

        assert_int_equal(sworn_http_chunked_feed(&c, (const uint8_t *)"0\r\n", 3, &data, &data_len,
                                                 &status, &why),
                         0);
        assert_null(data);
    }
    /* One feed returns at most one piece of payload and stops at its end. */
    const char *two = "2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n";
    const uint8_t *data;
    size_t data_len;

    sworn_http_chunked_init(&c, UINT64_MAX, 0);
    assert_int_equal(sworn_http_chunked_feed(&c, (const uint8_t *)two, strlen(two), &data,
                                             &data_len, &status, &why),
                     5);
    assert_ptr_equal(data, (const uint8_t *)two + 3);
    assert_int_equal(data_len, 2);
    assert_int_equal(sworn_http_chunked_feed(&c, (const uint8_t *)two + 5, strlen(two) - 5, &data,
                                             &data_len, &status, &why),
                     7);
    assert_ptr_equal(data, (const uint8_t *)two + 10);
    assert_int_equal(sworn_http_chunked_feed(&c, (const uint8_t *)two + 12, strlen(two) - 12, &data,
                                             &data_len, &status, &why),
                     (long)strlen(two) - 12);
    assert_null(data);
    assert_int_equal(sworn_http_chunked_done(&c), 1);
    /* len 0 consumes nothing. */
    sworn_http_chunked_init(&c, UINT64_MAX, 0);
    assert_int_equal(sworn_http_chunked_feed(&c, NULL, 0, &data, &data_len, &status, &why), 0);
    /* max_body: exactly the limit passes, one byte over is 413 at the size line. */
    sworn_http_chunked_init(&c, 11, 0);
    assert_int_equal(decode(&c, chunk_oks[2].body, strlen(chunk_oks[2].body), 0, out, &out_len,
                            &consumed, &status, &why),
                     0);
    assert_int_equal(out_len, 11);
    sworn_http_chunked_init(&c, 10, 0);
    assert_int_equal(decode(&c, chunk_oks[2].body, strlen(chunk_oks[2].body), 0, out, &out_len,
                            &consumed, &status, &why),
                     -1);
    assert_int_equal(status, 413);
    assert_string_equal(why, "a body larger than the limit");
    assert_int_equal(out_len, 5); /* the first chunk was handed out */
    /* "5\r\nhello" was consumed; the call that read "\r\n6\r\n" refused (a -1 consumes nothing
       the caller could use: the connection is closed). */
    assert_int_equal(consumed, 8);
    /* Sticky. */
    assert_int_equal(sworn_http_chunked_feed(&c, (const uint8_t *)"0\r\n\r\n", 5, &data, &data_len,
                                             &status, &why),
                     -1);
    assert_int_equal(status, 413);
    /* The largest size: 16 hex digits. */
    sworn_http_chunked_init(&c, UINT64_MAX, 0);
    assert_int_equal(sworn_http_chunked_feed(&c, (const uint8_t *)"FFFFFFFFFFFFFFFF\r\nab", 20,
                                             &data, &data_len, &status, &why),
                     20);
    assert_int_equal(data_len, 2);
    sworn_http_chunked_init(&c, UINT64_MAX - 1, 0);
    assert_int_equal(sworn_http_chunked_feed(&c, (const uint8_t *)"FFFFFFFFFFFFFFFF\r\nab", 20,
                                             &data, &data_len, &status, &why),
                     -1);
    assert_int_equal(status, 413);
}

struct chunk_bad {
    const char *body;
    int allow_ext;
    const char *why;
};

static const char bad_size[] = "an invalid chunk size";
static const char bad_ext[] = "an invalid chunk extension";
static const char no_crlf[] = "chunk data not followed by CRLF";

static const struct chunk_bad chunk_bads[] = {
    {"0x5\r\nhello\r\n0\r\n\r\n", 0, bad_size},
    {"-1\r\n", 0, bad_size},
    {"+5\r\nhello\r\n", 0, bad_size},
    {" 5\r\nhello\r\n", 0, bad_size},
    {"5 \r\nhello\r\n", 0, bad_size},
    {"5\t\r\nhello\r\n", 0, bad_size},
    {"\r\n", 0, bad_size},
    {"\r\n5\r\nhello\r\n", 0, bad_size},
    {"g\r\n", 0, bad_size},
    {"5\nhello\r\n", 0, bad_size},
    {"5\r\nhello\r\n0\n\r\n", 0, bad_size},
    {"00000000000000005\r\nhello\r\n", 0, "a chunk size of more than 16 hex digits"},
    {"10000000000000000\r\n", 0, "a chunk size of more than 16 hex digits"},
    {"5;ext=1\r\nhello\r\n0\r\n\r\n", 0, "a chunk extension in a request body"},
    {"5\r\nhello\r\n0;x\r\n\r\n", 0, "a chunk extension in a request body"},
    {"5\rhello\r\n", 0, "a chunk-size line not ended by CRLF"},
    {"5\r\nhelloX\r\n0\r\n\r\n", 0, no_crlf},
    {"5\r\nhello\n0\r\n\r\n", 0, no_crlf},
    {"5\r\nhello\r0\r\n\r\n", 0, no_crlf},
    {"5\r\nhell\r\n0\r\n\r\n", 0, no_crlf},
    /* extensions in a response */
    {"5;\r\nhello\r\n", 1, bad_ext},
    {"5;=x\r\nhello\r\n", 1, bad_ext},
    {"5;a=\r\nhello\r\n", 1, bad_ext},
    {"5 ;a\r\nhello\r\n", 1, bad_size},
    {"5; a\r\nhello\r\n", 1, bad_ext},
    {"5;a =b\r\nhello\r\n", 1, bad_ext},
    {"5;a=b c\r\nhello\r\n", 1, bad_ext},
    {"5;a=\"x\r\nhello\r\n", 1, bad_ext},
    {"5;a=\"x\"y\r\nhello\r\n", 1, bad_ext},
    {"5;a=\"\x01\"\r\nhello\r\n", 1, bad_ext},
    {"5;a=\"\\\x01\"\r\nhello\r\n", 1, bad_ext},
    {"5;a(\r\nhello\r\n", 1, bad_ext},
    /* trailers */
    {"0\r\n T: 1\r\n\r\n", 0, "obs-fold (a trailer line starting with whitespace)"},
    {"0\r\nT: 1\r\n\tx\r\n\r\n", 0, "obs-fold (a trailer line starting with whitespace)"},
    {"0\r\n: 1\r\n\r\n", 0, "an empty trailer field name"},
    {"0\r\nT : 1\r\n\r\n", 0, "an invalid character in a trailer field name"},
    {"0\r\n(: 1\r\n\r\n", 0, "an invalid character in a trailer field name"},
    {"0\r\nT\r\n\r\n", 0, "a trailer field line without a colon"},
    {"0\r\nT: a\nb\r\n\r\n", 0, "a control character in a trailer field value"},
    {"0\r\nT: a\x7f\r\n\r\n", 0, "a control character in a trailer field value"},
    {"0\r\nT: a\rb\r\n\r\n", 0, "a bare CR in the trailers"},
    {"0\r\n\rX", 0, "a bare CR at the end of the trailers"},
    {"0\r\n\n", 0, "an invalid character in a trailer field name"},
};

static void test_chunked_refusals(void **state)
{
    struct sworn_http_chunked c;
    char out[256];
    static char big[16384];
    size_t out_len, consumed, n;
    int status;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(chunk_bads) / sizeof(chunk_bads[0]); i++) {
        const struct chunk_bad *k = &chunk_bads[i];

        n = strlen(k->body);
        for (size_t step = 0; step < 3; step++) {
            sworn_http_chunked_init(&c, UINT64_MAX, k->allow_ext);
            int rc = decode(&c, k->body, n, step, out, &out_len, &consumed, &status, &why);

            if (rc != -1 || status != 400 || strcmp(why, k->why) != 0) {
                fprintf(stderr, "chunked row %zu: rc %d why \"%s\", wanted \"%s\"\n", i, rc,
                        rc == -1 ? why : "", k->why);
                fail();
            }
            check_why(why);
            assert_int_equal(sworn_http_chunked_done(&c), 0);
        }
    }
    /* A NUL in a trailer value. */
    static const char nul[] = "0\r\nT: a\0b\r\n\r\n";

    sworn_http_chunked_init(&c, UINT64_MAX, 0);
    assert_int_equal(decode(&c, nul, sizeof(nul) - 1, 0, out, &out_len, &consumed, &status, &why),
                     -1);
    assert_string_equal(why, "a control character in a trailer field value");
    /* The trailer section: 8192 bytes pass, 8193 do not; 32 fields pass, 33 do not. */
    for (size_t extra = 0; extra < 2; extra++) {
        n = (size_t)snprintf(big, sizeof(big), "0\r\nT: ");
        /* trailers counted from the first trailer byte through the final CRLF */
        while (n - 3 < SWORN_HTTP_TRAILERS_MAX + extra - 4)
            big[n++] = 'v';
        memcpy(big + n, "\r\n\r\n", 4);
        n += 4;
        sworn_http_chunked_init(&c, UINT64_MAX, 0);
        int rc = decode(&c, big, n, 0, out, &out_len, &consumed, &status, &why);

        assert_int_equal(rc, extra == 0 ? 0 : -1);
        if (extra)
            assert_string_equal(why, "trailers longer than 8192 bytes");
        else
            assert_int_equal(sworn_http_chunked_done(&c), 1);
    }
    for (size_t extra = 0; extra < 2; extra++) {
        n = (size_t)snprintf(big, sizeof(big), "0\r\n");
        for (size_t i = 0; i < SWORN_HTTP_TRAILER_FIELDS_MAX + extra; i++)
            n += (size_t)snprintf(big + n, sizeof(big) - n, "T%zu: x\r\n", i);
        n += (size_t)snprintf(big + n, sizeof(big) - n, "\r\n");
        sworn_http_chunked_init(&c, UINT64_MAX, 0);
        int rc = decode(&c, big, n, 0, out, &out_len, &consumed, &status, &why);

        assert_int_equal(rc, extra == 0 ? 0 : -1);
        if (extra)
            assert_string_equal(why, "more than 32 trailer fields");
    }
    /* A size line of extensions: 4096 bytes pass, more do not. */
    for (size_t extra = 0; extra < 2; extra++) {
        n = (size_t)snprintf(big, sizeof(big), "1;a=");
        while (n < SWORN_HTTP_CHUNK_LINE_MAX + extra - 2)
            big[n++] = 'b';
        n += (size_t)snprintf(big + n, sizeof(big) - n, "\r\nX\r\n0\r\n\r\n");
        sworn_http_chunked_init(&c, UINT64_MAX, 1);
        int rc = decode(&c, big, n, 0, out, &out_len, &consumed, &status, &why);

        assert_int_equal(rc, extra == 0 ? 0 : -1);
        if (extra)
            assert_string_equal(why, "a chunk-size line longer than 4096 bytes");
    }
}

/* ---- responses ---- */

static int parse_resp(const char *p, int head, const char **why)
{
    struct sworn_http_limits lim;

    sworn_http_limits_default(&lim);
    *why = NULL;
    return sworn_http_parse_response((const uint8_t *)p, strlen(p), &lim, head, &resp, why);
}

struct resp_case {
    const char *head;
    int request_was_head;
    unsigned status, minor;
    const char *reason;
    enum sworn_http_framing framing;
    uint64_t content_length;
    int close;
};

#define UC SWORN_HTTP_UNTIL_CLOSE

static const struct resp_case resp_cases[] = {
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0, 200, 1, "OK", LEN, 5, 0},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 0, 200, 1, "OK", CH, 0, 0},
    {"HTTP/1.1 200 OK\r\n\r\n", 0, 200, 1, "OK", UC, 0, 1},
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 1, 200, 1, "OK", NB, 0, 0},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 1, 200, 1, "OK", NB, 0, 0},
    {"HTTP/1.1 204 No Content\r\n\r\n", 0, 204, 1, "No Content", NB, 0, 0},
    {"HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n", 0, 304, 1, "Not Modified", NB, 0,
     0},
    {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", 0,
     101, 1, "Switching Protocols", NB, 0, 0},
    {"HTTP/1.1 100 Continue\r\n\r\n", 0, 100, 1, "Continue", NB, 0, 0},
    {"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n", 0, 103, 1, "Early Hints",
     NB, 0, 0},
    {"HTTP/1.1 404 \r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 0, 404, 1, "", LEN, 0, 1},
    {"HTTP/1.1 500 It\tbroke \xc3\xa9\r\nContent-Length: 1\r\n\r\nx", 0, 500, 1,
     "It\tbroke \xc3\xa9", LEN, 1, 0},
    {"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", 0, 200, 0, "OK", LEN, 2, 1},
    {"HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nhi", 0, 200, 0, "OK",
     LEN, 2, 0},
    {"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", 0, 200, 0, "OK", UC, 0, 1},
    {"HTTP/1.1 599 x\r\nContent-Length: 000\r\n\r\n", 0, 599, 1, "x", LEN, 0, 0},
};

static const struct {
    const char *head;
    const char *why;
} resp_bads[] = {
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", both},
    {"HTTP/1.1 304 x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", both},
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
     "more than one Content-Length field"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", bad_cl},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", not_chunked},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", not_chunked},
    {"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
     "a Transfer-Encoding field in an HTTP/1.0 message"},
    {"HTTP/1.1 200 OK\r\nContent_Length: 5\r\n\r\n", underscore},
    {"HTTP/1.1 200 OK\nContent-Length: 5\r\n\r\n", bare_lf},
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\r\n\r\n", bare_cr},
    {"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", fold},
    {"HTTP/1.1 200 OK\r\nX : a\r\n\r\n", ws_name},
    {"HTTP/1.1 200 O\x01K\r\n\r\n", "a control character in the status line"},
    {"HTTP/1.1 200 OK\r\nX: \x01\r\n\r\n", value_control},
    {"HTTP/1.1 200\r\n\r\n", "a status line that is not version, 3-digit code and reason"},
    {"HTTP/1.1 20 OK\r\n\r\n", "a status line that is not version, 3-digit code and reason"},
    {"HTTP/1.1 2000 OK\r\n\r\n", "a status line that is not version, 3-digit code and reason"},
    {"HTTP/1.1  200 OK\r\n\r\n", "a status line that is not version, 3-digit code and reason"},
    {"HTTP/1.1 099 x\r\n\r\n", "a status code outside 100 to 599"},
    {"HTTP/1.1 600 x\r\n\r\n", "a status code outside 100 to 599"},
    {"HTTP/2.0 200 OK\r\n\r\n", other_version},
    {"HTTP/1.2 200 OK\r\n\r\n", other_version},
    {"http/1.1 200 OK\r\n\r\n", bad_version},
    {"HTTP/1.1x200 OK\r\n\r\n", "a status line that is not version, 3-digit code and reason"},
    {"\r\nHTTP/1.1 200 OK\r\n\r\n", "an empty line before the request or status line"},
};

static void test_response_framing(void **state)
{
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(resp_cases) / sizeof(resp_cases[0]); i++) {
        const struct resp_case *r = &resp_cases[i];

        if (parse_resp(r->head, r->request_was_head, &why) != 0) {
            fprintf(stderr, "response row %zu refused: %s\n", i, why);
            fail();
        }
        assert_int_equal(resp.status, r->status);
        assert_int_equal(resp.version_minor, r->minor);
        assert_span(resp.reason, resp.reason_len, r->reason);
        assert_int_equal(resp.framing, r->framing);
        assert_int_equal(resp.content_length, r->content_length);
        assert_int_equal(resp.connection_close, r->close);
        assert_int_equal(resp.head_len, head_of(r->head));
        /* every prefix of the head: more */
        struct sworn_http_limits lim;

        sworn_http_limits_default(&lim);
        for (size_t k = 0; k < resp.head_len; k++)
            assert_int_equal(sworn_http_parse_response((const uint8_t *)r->head, k, &lim,
                                                       r->request_was_head, &resp2, &why),
                             1);
    }
    for (size_t i = 0; i < sizeof(resp_bads) / sizeof(resp_bads[0]); i++) {
        if (parse_resp(resp_bads[i].head, 0, &why) != -1 || strcmp(why, resp_bads[i].why) != 0) {
            fprintf(stderr, "response row \"%s\": why \"%s\"\n", resp_bads[i].head,
                    why ? why : "(accepted)");
            fail();
        }
        check_why(why);
    }
    /* The head limit applies to responses too. */
    struct sworn_http_limits lim = {32, 100};

    assert_int_equal(
        sworn_http_parse_response((const uint8_t *)"HTTP/1.1 200 OK\r\nX: 0123456789abcdef\r\n\r\n",
                                  40, &lim, 0, &resp, &why),
        -1);
    assert_string_equal(why, "a head longer than the limit");
}

/* ---- helpers ---- */

static void test_hop_by_hop(void **state)
{
    static const char *const yes[] = {"Connection",
                                      "connection",
                                      "Keep-Alive",
                                      "PROXY-CONNECTION",
                                      "Proxy-Authenticate",
                                      "Proxy-Authorization",
                                      "Proxy-Foo",
                                      "proxy-",
                                      "TE",
                                      "te",
                                      "Trailer",
                                      "Transfer-Encoding",
                                      "Upgrade",
                                      "HTTP2-Settings"};
    static const char *const no[] = {
        "Content-Length", "Host", "Authorization", "Proxy",     "Proxyx-Foo", "Connections",
        "Connectio",      "TEx",  "Trailers",      "X-Upgrade", "",           "Cookie"};

    (void)state;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        assert_int_equal(sworn_http_hop_by_hop(yes[i], strlen(yes[i])), 1);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        assert_int_equal(sworn_http_hop_by_hop(no[i], strlen(no[i])), 0);
    /* Only len bytes are read. */
    assert_int_equal(sworn_http_hop_by_hop("TEapot", 2), 1);
}

static void test_connection_lists(void **state)
{
    static const char head[] = "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\n"
                               "X: close\r\nconnection: ,, X-Secret ,\t\r\nConnection:\r\n\r\n";
    int status;
    const char *why;

    (void)state;
    assert_int_equal(parse_req(head, strlen(head), &status, &why), 0);
    assert_int_equal(sworn_http_connection_lists(req.fields, req.nfields, "upgrade", 7), 1);
    assert_int_equal(sworn_http_connection_lists(req.fields, req.nfields, "KEEP-ALIVE", 10), 1);
    assert_int_equal(sworn_http_connection_lists(req.fields, req.nfields, "x-secret", 8), 1);
    assert_int_equal(sworn_http_connection_lists(req.fields, req.nfields, "close", 5), 0);
    assert_int_equal(sworn_http_connection_lists(req.fields, req.nfields, "up", 2), 0);
    assert_int_equal(sworn_http_connection_lists(req.fields, req.nfields, "x-secre", 7), 0);
    assert_int_equal(sworn_http_connection_lists(req.fields, req.nfields, "", 0), 0);
    assert_int_equal(req.connection_close, 0);
    assert_int_equal(sworn_http_connection_lists(req.fields, 0, "upgrade", 7), 0);

    const struct sworn_http_field *f = sworn_http_field_find(req.fields, req.nfields, "CONNECTION");

    assert_ptr_equal(f, &req.fields[1]);
    assert_span(f->value, f->value_len, "keep-alive, Upgrade");
    assert_ptr_equal(sworn_http_field_find(req.fields, req.nfields, "x"), &req.fields[2]);
    assert_null(sworn_http_field_find(req.fields, req.nfields, "Connectio"));
    assert_null(sworn_http_field_find(req.fields, req.nfields, "Content-Length"));
    assert_null(sworn_http_field_find(req.fields, 0, "Host"));
}

/* ---- what real clients send ---- */

/* A listening socket on 127.0.0.1 and a port the kernel picked. */
static int listen_local(unsigned *port)
{
    struct sockaddr_in sin;
    socklen_t sl = sizeof(sin);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
    *port = ntohs(sin.sin_port);
    return fd;
}

/* Wait (at most 20 s) until fd is readable; fails the test on a timeout. */
static void wait_readable(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};

    assert_int_equal(poll(&pfd, 1, 20000), 1);
}

struct captured {
    char buf[65536];
    size_t len;
    int rc, status;
    const char *why;
    char body[4096];
    size_t body_len;
};

/*
 * Start argv (a client pointed at the listener lfd), accept its connection and read what it sends
 * until the request head is parsed (or refused) and, for a body, until the body is complete; then
 * close the connection (the client gives up: no answer is sent) and reap the client. *cap holds
 * the parse's answer (on 0, req holds the head) and the decoded body.
 */
static void capture(int lfd, char *const argv[], struct captured *cap)
{
    struct sworn_http_chunked ch;
    size_t body_off = 0;
    int fd, wst;
    pid_t pid;

    memset(cap, 0, sizeof(*cap));
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);

        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    wait_readable(lfd);
    fd = accept(lfd, NULL, NULL);
    assert_true(fd >= 0);
    for (;;) {
        ssize_t got;

        cap->rc = parse_req(cap->buf, cap->len, &cap->status, &cap->why);
        if (cap->rc == 0) {
            body_off = req.head_len;
            if (req.framing == SWORN_HTTP_NO_BODY)
                break;
            if (req.framing == SWORN_HTTP_LENGTH && cap->len - body_off >= req.content_length) {
                memcpy(cap->body, cap->buf + body_off, (size_t)req.content_length);
                cap->body_len = (size_t)req.content_length;
                break;
            }
            if (req.framing == SWORN_HTTP_CHUNKED) {
                size_t off = body_off;

                sworn_http_chunked_init(&ch, sizeof(cap->body), 0);
                cap->body_len = 0;
                while (off < cap->len && !sworn_http_chunked_done(&ch)) {
                    const uint8_t *d;
                    size_t dl;
                    int st;
                    const char *w;
                    long r = sworn_http_chunked_feed(&ch, (const uint8_t *)cap->buf + off,
                                                     cap->len - off, &d, &dl, &st, &w);

                    assert_true(r > 0);
                    if (d != NULL) {
                        memcpy(cap->body + cap->body_len, d, dl);
                        cap->body_len += dl;
                    }
                    off += (size_t)r;
                }
                if (sworn_http_chunked_done(&ch))
                    break;
            }
        } else if (cap->rc == -1) {
            break;
        }
        assert_true(cap->len < sizeof(cap->buf));
        wait_readable(fd);
        got = read(fd, cap->buf + cap->len, sizeof(cap->buf) - cap->len);
        assert_true(got > 0);
        cap->len += (size_t)got;
    }
    close(fd);
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) != 127);
}

static void test_real_clients(void **state)
{
    static struct captured cap;
    char proxy[64], origin[64], proxy_hp[64], ws_script[512];
    unsigned port;
    int lfd = listen_local(&port);

    (void)state;
    snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%u", port);
    snprintf(proxy_hp, sizeof(proxy_hp), "127.0.0.1:%u", port);
    snprintf(origin, sizeof(origin), "http://127.0.0.1:%u/o", port);
    snprintf(ws_script, sizeof(ws_script), "%s/tests/unit/ws_echo.py", sworn_test_source_dir());

    /* curl as a forward proxy's client: absolute-form, Host, Proxy-Connection. */
    {
        char *argv[] = {
            "curl", "-s", "--max-time", "20", "-x", proxy, "http://a.example:8080/p?q=1", NULL};

        capture(lfd, argv, &cap);
        assert_int_equal(cap.rc, 0);
        assert_int_equal(req.form, SWORN_HTTP_ABSOLUTE);
        assert_span(req.host, req.host_len, "a.example");
        assert_int_equal(req.port, 8080);
        assert_span(req.path, req.path_len, "/p?q=1");
        assert_span(req.host_field, req.host_field_len, "a.example:8080");
        assert_int_equal(req.connection_close, 0);
        assert_non_null(sworn_http_field_find(req.fields, req.nfields, "Proxy-Connection"));
    }
    /* curl's CONNECT for https. */
    {
        char *argv[] = {"curl", "-s", "--max-time", "20", "-x", proxy, "https://a.example/", NULL};

        capture(lfd, argv, &cap);
        assert_int_equal(cap.rc, 0);
        assert_int_equal(req.form, SWORN_HTTP_AUTHORITY);
        assert_span(req.method, req.method_len, "CONNECT");
        assert_span(req.host, req.host_len, "a.example");
        assert_int_equal(req.port, 443);
        assert_span(req.host_field, req.host_field_len, "a.example:443");
    }
    /* A body with a Content-Length, and a chunked one. */
    {
        char *argv[] = {"curl", "-s",    "--max-time",         "20", "-x", proxy,
                        "-d",   "hello", "http://a.example/f", NULL};

        capture(lfd, argv, &cap);
        assert_int_equal(cap.rc, 0);
        assert_span(req.method, req.method_len, "POST");
        assert_int_equal(req.framing, SWORN_HTTP_LENGTH);
        assert_int_equal(cap.body_len, 5);
        assert_memory_equal(cap.body, "hello", 5);
    }
    {
        char *argv[] = {"curl",
                        "-s",
                        "--max-time",
                        "20",
                        "-x",
                        proxy,
                        "-H",
                        "Transfer-Encoding: chunked",
                        "-d",
                        "hello chunks",
                        "http://a.example/f",
                        NULL};

        capture(lfd, argv, &cap);
        assert_int_equal(cap.rc, 0);
        assert_int_equal(req.framing, SWORN_HTTP_CHUNKED);
        assert_int_equal(cap.body_len, 12);
        assert_memory_equal(cap.body, "hello chunks", 12);
    }
    /* Expect: 100-continue (curl waits a moment for the 100, then sends the body). */
    {
        char *argv[] = {
            "curl", "-s",  "--max-time",         "20", "-x", proxy, "-H", "Expect: 100-continue",
            "-d",   "abc", "http://a.example/f", NULL};

        capture(lfd, argv, &cap);
        assert_int_equal(cap.rc, 0);
        assert_int_equal(req.expect_continue, 1);
        assert_memory_equal(cap.body, "abc", 3);
    }
    /* HTTP/1.0, and an IPv6 literal. */
    {
        char *argv[] = {"curl", "-s", "-0", "--max-time", "20", "-x", proxy, "http://[::1]:8080/v6",
                        NULL};

        capture(lfd, argv, &cap);
        assert_int_equal(cap.rc, 0);
        assert_int_equal(req.version_minor, 0);
        assert_int_equal(req.connection_close, 1);
        assert_span(req.host, req.host_len, "[::1]");
        assert_int_equal(req.port, 8080);
        assert_span(req.host_field, req.host_field_len, "[::1]:8080");
    }
    /* wget as a proxy client. */
    {
        char *argv[] = {
            "wget",          "-q", "--tries=1", "--timeout=20",       "-O", "/dev/null", "-e",
            "use_proxy=yes", "-e", NULL,        "http://a.example/w", NULL};
        char setting[96];

        snprintf(setting, sizeof(setting), "http_proxy=%s", proxy);
        argv[9] = setting;
        capture(lfd, argv, &cap);
        assert_int_equal(cap.rc, 0);
        assert_int_equal(req.form, SWORN_HTTP_ABSOLUTE);
        assert_span(req.path, req.path_len, "/w");
        assert_span(req.host_field, req.host_field_len, "a.example");
    }
    /* A WebSocket client (python3-websockets) through a forward proxy: a valid upgrade. */
    {
        char *argv[] = {"/usr/bin/python3", ws_script, "client", "ws://a.example/s",
                        "--proxy",          proxy_hp,  "hi",     NULL};

        if (access("/usr/bin/python3", X_OK) == 0) {
            capture(lfd, argv, &cap);
            assert_int_equal(cap.rc, 0);
            assert_int_equal(req.upgrade_websocket, 1);
            assert_span(req.path, req.path_len, "/s");
        }
    }
    /* curl's h2c upgrade and its HTTP/2 preface are refused. */
    {
        char *argv[] = {"curl", "-s", "--max-time", "20", "--http2", origin, NULL};

        capture(lfd, argv, &cap);
        assert_int_equal(cap.rc, -1);
        assert_int_equal(cap.status, 400);
        assert_string_equal(cap.why, "an HTTP2-Settings field (an upgrade to HTTP/2)");
    }
    {
        char *argv[] = {"curl", "-s", "--max-time", "20", "--http2-prior-knowledge", origin, NULL};

        capture(lfd, argv, &cap);
        assert_int_equal(cap.rc, -1);
        assert_int_equal(cap.status, 505);
    }
    close(lfd);
}

/* A connection to 127.0.0.1:port. */
static int connect_local(unsigned port)
{
    struct sockaddr_in sin;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons((uint16_t)port);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    return fd;
}

struct stream {
    int fd;
    char *buf;
    size_t len, cap, off; /* off: where the next response starts */
    int eof;
};

/* Read more of the stream (at most 20 s of waiting); 0 at EOF. */
static size_t stream_more(struct stream *st)
{
    ssize_t got;

    assert_true(st->len < st->cap);
    wait_readable(st->fd);
    got = read(st->fd, st->buf + st->len, st->cap - st->len);
    assert_true(got >= 0);
    if (got == 0)
        st->eof = 1;
    st->len += (size_t)got;
    return (size_t)got;
}

/*
 * The next response of the stream into resp (request_was_head as given), its body read as its
 * framing says (decoded into body, at most body_cap bytes kept; *body_len counts all of it); the
 * stream's offset is moved past it.
 */
static void next_response(struct stream *st, int head, char *body, size_t body_cap,
                          size_t *body_len)
{
    struct sworn_http_limits lim;
    const char *why = NULL;
    int rc;

    sworn_http_limits_default(&lim);
    *body_len = 0;
    while ((rc = sworn_http_parse_response((const uint8_t *)st->buf + st->off, st->len - st->off,
                                           &lim, head, &resp, &why)) == 1)
        assert_true(stream_more(st) > 0);
    if (rc != 0) {
        fprintf(stderr, "response refused: %s\n", why);
        fail();
    }
    st->off += resp.head_len;
    if (resp.framing == SWORN_HTTP_LENGTH) {
        while (st->len - st->off < resp.content_length)
            assert_true(stream_more(st) > 0);
        *body_len = (size_t)resp.content_length;
    } else if (resp.framing == SWORN_HTTP_UNTIL_CLOSE) {
        while (!st->eof)
            stream_more(st);
        *body_len = st->len - st->off;
    } else if (resp.framing == SWORN_HTTP_CHUNKED) {
        struct sworn_http_chunked c;

        sworn_http_chunked_init(&c, UINT64_MAX, 1);
        while (!sworn_http_chunked_done(&c)) {
            const uint8_t *d;
            size_t dl;
            int status;
            long r;

            if (st->off == st->len)
                assert_true(stream_more(st) > 0);
            r = sworn_http_chunked_feed(&c, (const uint8_t *)st->buf + st->off, st->len - st->off,
                                        &d, &dl, &status, &why);
            assert_true(r > 0);
            if (d != NULL && *body_len + dl <= body_cap)
                memcpy(body + *body_len, d, dl);
            if (d != NULL)
                *body_len += dl;
            st->off += (size_t)r;
        }
        return;
    }
    if (*body_len <= body_cap)
        memcpy(body, st->buf + st->off, *body_len);
    st->off += *body_len;
}

/* Real upstreams' responses (nginx, python3-websockets) parse with the framing they mean. */
static void test_real_responses(void **state)
{
    static struct sworn_upstream u;
    struct stream st = {.fd = -1};
    char body[256], req_text[1024], etag[128];
    size_t body_len;
    const struct sworn_http_field *f;

    (void)state;
    assert_int_equal(sworn_upstream_start(&u), 0);
    st.cap = SWORN_UPSTREAM_BIG_SIZE + 65536;
    st.buf = malloc(st.cap);
    assert_non_null(st.buf);
    st.fd = connect_local(u.http_port);

    /* Four requests pipelined on one connection: GET, HEAD, a large GET, a 404. */
    snprintf(req_text, sizeof(req_text),
             "GET /allowed/hello.txt HTTP/1.1\r\nHost: localhost\r\n\r\n"
             "HEAD /allowed/hello.txt HTTP/1.1\r\nHost: localhost\r\n\r\n"
             "GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"
             "GET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assert_int_equal(write(st.fd, req_text, strlen(req_text)), (ssize_t)strlen(req_text));
    next_response(&st, 0, body, sizeof(body), &body_len);
    assert_int_equal(resp.status, 200);
    assert_int_equal(resp.framing, SWORN_HTTP_LENGTH);
    assert_int_equal(body_len, 6);
    assert_memory_equal(body, "hello\n", 6);
    assert_int_equal(resp.connection_close, 0);
    f = sworn_http_field_find(resp.fields, resp.nfields, "ETag");
    assert_non_null(f);
    assert_true(f->value_len < sizeof(etag));
    memcpy(etag, f->value, f->value_len);
    etag[f->value_len] = '\0';
    next_response(&st, 1, body, sizeof(body), &body_len);
    assert_int_equal(resp.status, 200);
    assert_int_equal(resp.framing, SWORN_HTTP_NO_BODY);
    assert_int_equal(body_len, 0);
    assert_non_null(sworn_http_field_find(resp.fields, resp.nfields, "Content-Length"));
    next_response(&st, 0, body, sizeof(body), &body_len);
    assert_int_equal(resp.framing, SWORN_HTTP_LENGTH);
    assert_int_equal(body_len, SWORN_UPSTREAM_BIG_SIZE);
    next_response(&st, 0, body, sizeof(body), &body_len);
    assert_int_equal(resp.status, 404);
    assert_int_equal(resp.framing, SWORN_HTTP_LENGTH);

    /* 304 to a conditional GET (its Content-Length, if any, is not a body), then close. */
    snprintf(req_text, sizeof(req_text),
             "GET /allowed/hello.txt HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: %s\r\n\r\n"
             "GET /echo/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
             etag);
    assert_int_equal(write(st.fd, req_text, strlen(req_text)), (ssize_t)strlen(req_text));
    next_response(&st, 0, body, sizeof(body), &body_len);
    assert_int_equal(resp.status, 304);
    assert_int_equal(resp.framing, SWORN_HTTP_NO_BODY);
    next_response(&st, 0, body, sizeof(body), &body_len);
    assert_int_equal(resp.status, 200);
    assert_int_equal(resp.connection_close, 1);
    assert_true(body_len > 6 && memcmp(body, "GET /echo/x", 11) == 0);
    assert_int_equal(st.off, st.len);
    close(st.fd);

    /* HTTP/1.0: nginx closes after the response. */
    st.fd = connect_local(u.http_port);
    st.len = st.off = 0;
    st.eof = 0;
    snprintf(req_text, sizeof(req_text), "GET /allowed/hello.txt HTTP/1.0\r\n\r\n");
    assert_int_equal(write(st.fd, req_text, strlen(req_text)), (ssize_t)strlen(req_text));
    next_response(&st, 0, body, sizeof(body), &body_len);
    assert_int_equal(resp.status, 200);
    assert_int_equal(resp.connection_close, 1);
    close(st.fd);

    /* A WebSocket server's 101. */
    st.fd = connect_local(u.ws_port);
    st.len = st.off = 0;
    st.eof = 0;
    snprintf(req_text, sizeof(req_text),
             "GET /s HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    assert_int_equal(write(st.fd, req_text, strlen(req_text)), (ssize_t)strlen(req_text));
    next_response(&st, 0, body, sizeof(body), &body_len);
    assert_int_equal(resp.status, 101);
    assert_int_equal(resp.framing, SWORN_HTTP_NO_BODY);
    close(st.fd);

    free(st.buf);
    sworn_upstream_stop(&u);
}

/* sworn_http_media_type_is: the one reading of a Content-Type (or a coding) every module uses. */
static void test_media_type(void **state)
{
    static const struct {
        const char *value, *type;
        int want;
    } cases[] = {
        {"application/json", "application/json", 1},
        {"  Application/JSON ; charset=utf-8", "application/json", 1},
        {"application/json;", "application/json", 1},
        {"application/json x", "application/json", 0},
        {"application/json, text/plain", "application/json", 0},
        {"application/jsonx", "application/json", 0},
        {"", "application/json", 0},
        {"application/problem+json", "application/+json", 1},
        {"APPLICATION/Problem+JSON; x=1", "application/+json", 1},
        {"application/+json", "application/+json", 0},
        {"text/problem+json", "application/+json", 0},
        {"application/json", "application/+json", 0},
        {"text/event-stream", "text/event-stream", 1},
        {"text/event-stream garbage", "text/event-stream", 0},
        {"identity", "identity", 1},
        {"gzip, identity", "identity", 0},
        {"application/x-www-form-urlencoded;charset=UTF-8", "application/x-www-form-urlencoded", 1},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (sworn_http_media_type_is(cases[i].value, strlen(cases[i].value), cases[i].type) !=
            cases[i].want)
            fail_msg("\"%s\" as %s: not %d", cases[i].value, cases[i].type, cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_refusals), cmocka_unit_test(test_smuggling),
        cmocka_unit_test(test_request_accepts),  cmocka_unit_test(test_request_incremental),
        cmocka_unit_test(test_pipelined),        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_chunked_decode),   cmocka_unit_test(test_chunked_refusals),
        cmocka_unit_test(test_response_framing), cmocka_unit_test(test_hop_by_hop),
        cmocka_unit_test(test_connection_lists), cmocka_unit_test(test_real_clients),
        cmocka_unit_test(test_real_responses),   cmocka_unit_test(test_media_type),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
