/*
 * p_http.h -- the strict HTTP/1.1 head parser (requests from the agent, responses from upstream)
 * and the chunked body decoder of sworn-proxy.
 *
 * Why strict: the proxy decides on what it parsed, and upstream acts on what it parses. Wherever
 * two HTTP parsers may disagree about where a message ends or where it goes (request smuggling:
 * CL.TE, TE.CL, TE.TE; obs-fold; bare CR or LF; absolute-form vs Host), this parser refuses
 * instead of choosing a reading. docs/proxy.md "Strict HTTP parsing" has the table of refusals.
 *
 * Memory: nothing here allocates. Every pointer in an output points into the caller's bytes p
 * (except a static "/" for an empty absolute-form path), so an output is valid while p is and
 * the bytes are not moved. No function reads past p + len; p may be NULL only when len is 0.
 * Thread safety: pure computation on the caller's memory; no globals.
 * Errors: a refusal is a value, not a sworn_err: -1 with *why a static sentence (lower-case
 * start, < 100 characters, never any input bytes) and, for requests and chunked bodies, *status
 * the HTTP status to answer.
 *
 * Calling pattern: the head parsers keep no state; each call parses p[0..len) from its start, so
 * call again with the same start and more bytes after a 1. A caller that reads in small pieces
 * may look for "\r\n\r\n" itself (evbuffer_search) and call only once it is there or len reaches
 * head_max: a head that is malformed is refused then just the same (a refusal found in the
 * scanned bytes is reported before 431).
 */
#ifndef SWORN_P_HTTP_H
#define SWORN_P_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_HTTP_FIELDS_MAX 128u /* hard cap of fields in one head (limits.headers <= 128) */
#define SWORN_HTTP_METHOD_MAX 32u
#define SWORN_HTTP_HOST_MAX 255u          /* a host as written (resource.host on the wire) */
#define SWORN_HTTP_TRAILERS_MAX 8192u     /* bytes of a chunked body's trailer section */
#define SWORN_HTTP_TRAILER_FIELDS_MAX 32u /* trailer fields of a chunked body */
#define SWORN_HTTP_CHUNK_LINE_MAX 4096u   /* bytes of one chunk-size line (with extensions) */
#define SWORN_HTTP_CONTENT_LENGTH_DIGITS 18u

struct sworn_http_limits {
    /* bytes of request/status line + fields + the final CRLF; more: 431 (requests) */
    size_t head_max;
    size_t fields_max; /* header fields; more: 431; <= SWORN_HTTP_FIELDS_MAX */
};
/* OUT: *l set to head_max 16384, fields_max 100 (limits.head and limits.headers' defaults). */
void sworn_http_limits_default(struct sworn_http_limits *l);

struct sworn_http_field {
    const char *name;
    size_t name_len; /* as sent (case kept) */
    const char *value;
    size_t value_len; /* leading/trailing OWS (SP, HTAB) removed */
};

enum sworn_http_form {
    SWORN_HTTP_ORIGIN = 1,
    SWORN_HTTP_ABSOLUTE,
    SWORN_HTTP_AUTHORITY,
    SWORN_HTTP_ASTERISK
};
enum sworn_http_framing {
    SWORN_HTTP_NO_BODY = 0,
    SWORN_HTTP_LENGTH,
    SWORN_HTTP_CHUNKED,
    SWORN_HTTP_UNTIL_CLOSE /* responses only */
};

struct sworn_http_request {
    const char *method;
    size_t method_len;
    const char *target;
    size_t target_len; /* the request-target exactly as sent */
    enum sworn_http_form form;
    /* ABSOLUTE: scheme (as written; only http, https, ws, wss accepted, any case), host (as
       written; an IPv6 literal keeps its brackets), port (given or the scheme's default), path
       (path and query as written, starting with '/'; for an empty path this points to a static "/"
       with path_len 1). AUTHORITY (CONNECT): host and port (port required). ORIGIN: path = target.
       Unused parts are NULL / 0 (ORIGIN: scheme and host; AUTHORITY: scheme and path;
       ASTERISK: all four). */
    const char *scheme;
    size_t scheme_len;
    const char *host;
    size_t host_len;
    uint16_t port;
    int port_given;
    const char *path;
    size_t path_len;
    unsigned version_minor; /* 0 (HTTP/1.0) or 1 (HTTP/1.1) */
    struct sworn_http_field fields[SWORN_HTTP_FIELDS_MAX];
    size_t nfields;
    size_t head_len; /* bytes p[0..head_len) are the head */
    const char *host_field;
    size_t host_field_len;
    int has_host;                    /* the one Host field's value */
    enum sworn_http_framing framing; /* NO_BODY, LENGTH or CHUNKED */
    uint64_t content_length;         /* LENGTH */
    int connection_close;            /* Connection: close, or 1.0 without keep-alive */
    int upgrade_websocket;           /* a valid WebSocket upgrade request (below) */
    int expect_continue;             /* Expect: 100-continue */
    /* Added: the Host field's value split as an authority (when has_host): host as written (an
       IPv6 literal with its brackets), the port given or 0, and whether one was given. */
    const char *host_field_host;
    size_t host_field_host_len;
    uint16_t host_field_port;
    int host_field_port_given;
};

/*
 * Parse a request head. IN: p[0..len), *lim (fields_max above SWORN_HTTP_FIELDS_MAX is taken as
 * SWORN_HTTP_FIELDS_MAX). OUT: *out, *status, *why (none may be NULL).
 * Returns 0: a complete, valid head is in p[0..out->head_len); 1: need more bytes (no end of head
 * yet, len < head_max, nothing wrong so far: call again with more); -1: refused, *status is the
 * HTTP status to answer (400, 431, 501, 505, 417) and *why a static sentence. out is fully
 * written only on 0 (it is zeroed first on every call). Bytes after head_len (a body, the next
 * pipelined request) are not looked at. Once a prefix is refused, every longer input is refused too
 * (with the same answer).
 *
 * What is accepted (everything else is refused; docs/proxy.md has the table):
 *   request line  method SP request-target SP ("HTTP/1.1" | "HTTP/1.0") CRLF; the method a token
 *                 of 1..32 bytes; no control, no byte >= 0x80 anywhere in the line.
 *   target        0x21..0x7e, no '#'. origin-form "/..."; absolute-form with scheme http, https,
 *                 ws or wss (any case), no userinfo, a path that is empty or starts with '/'
 *                 (a query right after the authority, "http://a?q", is refused: there is no
 *                 "/" to put before it without copying); authority-form host:port for CONNECT
 *                 only and CONNECT only so; "*" for OPTIONS only.
 *   host          a reg-name of letters, digits, '-', '.', '_', '~' (1..255 bytes; the policy's
 *                 canonicaliser judges it further) or an IPv6 literal "[" hex, ':', '.' "]".
 *   port          1..5 decimal digits, 1..65535; "host:" (empty port) refused.
 *   fields        name: a token directly followed by ':'; value: HTAB, SP, VCHAR and obs-text
 *                 (0x80..0xff, kept as sent: the value is opaque here); no obs-fold.
 *   Host          HTTP/1.1: exactly one (CONNECT: at most one), a valid authority; HTTP/1.0: at
 *                 most one. absolute-form: the same host (ASCII case-insensitive) and port
 *                 (no port: the scheme's default). CONNECT: the same host and the same port
 *                 (written out).
 *   framing       no Content-Length and no Transfer-Encoding: NO_BODY; one Content-Length of
 *                 1..18 digits: LENGTH (also for 0); one Transfer-Encoding "chunked" in HTTP/1.1:
 *                 CHUNKED. A CONNECT with a body is refused.
 *   upgrade       "Upgrade: websocket" with Connection listing "upgrade", GET, HTTP/1.1, no body
 *                 (Content-Length 0 allowed) and a Sec-WebSocket-Key: upgrade_websocket.
 *   Expect        "100-continue" only (else 417); expect_continue is set for HTTP/1.1 only.
 *   a field name holding '_' that reads as Content-Length, Transfer-Encoding, Keep-Alive,
 *   HTTP2-Settings, Sec-WebSocket-Key or any Proxy-* once '_' is read as '-' is refused (some
 *   servers map '_' to '-'); in responses too.
 */
int sworn_http_parse_request(const uint8_t *p, size_t len, const struct sworn_http_limits *lim,
                             struct sworn_http_request *out, int *status, const char **why);

struct sworn_http_response {
    unsigned status;
    unsigned version_minor;
    const char *reason;
    size_t reason_len;
    struct sworn_http_field fields[SWORN_HTTP_FIELDS_MAX];
    size_t nfields;
    size_t head_len;
    enum sworn_http_framing
        framing; /* NO_BODY for 1xx/204/304/HEAD, LENGTH, CHUNKED, UNTIL_CLOSE */
    uint64_t content_length;
    int connection_close; /* Connection: close, HTTP/1.0 without keep-alive, or UNTIL_CLOSE */
};
/*
 * Parse a response head. Same returns as sworn_http_parse_request (-1: *why; the proxy answers
 * 502; there is no *status). request_was_head: the request was HEAD (no body). A 101 or any 1xx
 * is NO_BODY. Same strictness as requests for framing (CL+TE, two CL, TE other than chunked, TE in
 * an HTTP/1.0 response -> refused; bare LF, bare CR, NUL/controls, obs-fold refused), checked
 * also when the status makes the body empty. Status codes outside 100..599 are refused.
 */
int sworn_http_parse_response(const uint8_t *p, size_t len, const struct sworn_http_limits *lim,
                              int request_was_head, struct sworn_http_response *out,
                              const char **why);

/* Chunked body decoder (requests and responses). The fields are private: use the functions. */
struct sworn_http_chunked {
    int state;
    int allow_ext;
    uint64_t max_body;
    uint64_t total;     /* decoded bytes so far */
    uint64_t remaining; /* of the current chunk's data */
    unsigned digits;    /* hex digits of the current size */
    size_t line_len;    /* bytes of the current size line */
    size_t trailer_len; /* bytes of the trailer section so far */
    unsigned trailer_fields;
    int status; /* a refusal, sticky */
    const char *why;
};
/*
 * max_body: the most decoded bytes allowed (a request's limits.body; UINT64_MAX for responses).
 * Requests: chunk extensions are refused (allow_ext 0); responses: syntactically valid extensions
 * (RFC 9112 7.1.1: ;token[=token|quoted-string], without BWS) are accepted and skipped
 * (allow_ext 1). Trailers are parsed strictly like fields (bounded: at most 8192 bytes and 32
 * fields in all; more: 400) and dropped.
 */
void sworn_http_chunked_init(struct sworn_http_chunked *c, uint64_t max_body, int allow_ext);
/*
 * Feed len bytes. Consumes up to the end of at most one piece of payload (or framing) and returns
 * how many bytes it consumed (>= 0; 0 only when len == 0 or once done); when payload was found,
 * *data and *data_len give it (pointing into p), else *data NULL, *data_len 0. Call again with the
 * rest. Returns -1 on bad framing (*status 400, *why) or when the decoded total would pass
 * max_body (*status 413; found at the chunk-size line, before its data); a refusal is sticky (every
 * later call returns it again). sworn_http_chunked_done(c) is 1 once the last chunk and the
 * trailers' end are consumed (bytes after that are the next message: not consumed).
 */
long sworn_http_chunked_feed(struct sworn_http_chunked *c, const uint8_t *p, size_t len,
                             const uint8_t **data, size_t *data_len, int *status, const char **why);
int sworn_http_chunked_done(const struct sworn_http_chunked *c);
/* Added: the decoded bytes so far (after done: the body's length, for its Content-Length). */
uint64_t sworn_http_chunked_total(const struct sworn_http_chunked *c);

/* The first field named name (ASCII case-insensitive, NUL-terminated), or NULL. */
const struct sworn_http_field *sworn_http_field_find(const struct sworn_http_field *f, size_t n,
                                                     const char *name);
/*
 * Is the media type of the field value v[0..n) (Content-Type, or a coding such as
 * Content-Encoding's) exactly `type` (ASCII case-insensitive)? The value is OWS, the type, OWS,
 * then its end or ';' and parameters (which are not looked at); anything else (a second type
 * after a space or a comma, an empty value) is not `type`. The type "application/+json" (no
 * subtype before "+json") stands for every "+json" subtype: "application/problem+json".
 */
int sworn_http_media_type_is(const char *v, size_t n, const char *type);
/* 1 when a field of this name must not be forwarded: Connection, Keep-Alive, Proxy-Connection,
   Proxy-Authenticate, Proxy-Authorization, any Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade,
   HTTP2-Settings; 0 otherwise. (A field that a Connection field lists is hop-by-hop too: ask
   sworn_http_connection_lists.) */
int sworn_http_hop_by_hop(const char *name, size_t len);
/* 1 when the Connection fields among f[0..n) list name (comma-separated tokens, OWS around
   them ignored, case-insensitive). */
int sworn_http_connection_lists(const struct sworn_http_field *f, size_t n, const char *name,
                                size_t len);

#endif
