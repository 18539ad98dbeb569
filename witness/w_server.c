/*
 * w_server.c -- the witness's HTTP server (contract in w_server.h).
 */
#include "w_server.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <json-c/json.h>
#include <sys/random.h>

#include "err.h"
#include "sdnotify.h"
#include "w_conns.h"
#include "w_witness.h"

#define PATH_ADD "/add-checkpoint"
#define HEADERS_MAX 8192
#define RATE_SLOTS 4096 /* client addresses tracked at once (direct-mapped, see rate_allow) */
#define ADDR_MAX 64
#define PATH_LOG_MAX 512    /* bytes of a request path kept in its log line */
#define ACCEPT_PAUSE_MS 250 /* accept() out of descriptors: wait this long before the next try */

struct bucket {
    char addr[ADDR_MAX]; /* empty: a free slot */
    double tokens;
    struct timespec last;
    int limited;            /* the latest request of this slot got 429 */
    unsigned long unlogged; /* 429s since the one logged, not logged */
};

struct server {
    const struct sworn_witness_config *c;
    struct sworn_witness_state *st;
    struct sworn_witness_cosigner *cs;
    struct event_base *base;
    struct bucket *buckets; /* RATE_SLOTS */
    uint32_t hash_key;      /* random per process: slots cannot be aimed at from outside */
    struct evconnlistener *listener;
    struct sworn_witness_conns *conns; /* the deadline on each connection (w_conns.h) */
    struct event *resume;              /* re-enables the listener after an accept() failure */
    unsigned long accept_errors;
};

/* --- log lines ---------------------------------------------------------------------------- */

static void log_line(struct json_object *o)
{
    char ts[64];
    struct timespec now;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, now.tv_nsec / 1000000L);
    json_object_object_add(o, "time", json_object_new_string(ts));
    fprintf(
        stderr, "%s\n",
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    fflush(stderr);
    json_object_put(o);
}

/*
 * The request path as it goes into a log line: bytes outside printable ASCII (controls, DEL,
 * any byte >= 0x80) are written as %XX, so a path of invalid UTF-8 cannot make the line invalid
 * JSON (json-c copies such bytes as they are) and a log reader sees what was sent. Cut at
 * PATH_LOG_MAX bytes, marked with "...".
 */
static struct json_object *path_string(const char *uri)
{
    static const char hex[] = "0123456789ABCDEF";
    char out[PATH_LOG_MAX * 3 + 4];
    size_t o = 0, i;

    for (i = 0; uri[i] != '\0' && i < PATH_LOG_MAX; i++) {
        unsigned char ch = (unsigned char)uri[i];

        if (ch >= 0x20 && ch < 0x7f) {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 0x0f];
        }
    }
    if (uri[i] != '\0') {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    return json_object_new_string_len(out, (int)o);
}

static struct json_object *event_object(const char *event)
{
    struct json_object *o = json_object_new_object();

    json_object_object_add(o, "event", json_object_new_string(event));
    return o;
}

/* --- rate limit ----------------------------------------------------------------------------- */

static uint32_t fnv1a(uint32_t key, const char *s)
{
    uint32_t h = 2166136261u ^ key;

    for (; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/*
 * A token bucket per slot: rate_per_sec tokens a second, at most burst. The table is
 * direct-mapped by a hash of the client address keyed with a random value drawn at start (so an
 * outsider cannot choose addresses that land in a given slot). Addresses that share a slot share
 * its bucket: a new address in a slot takes the bucket as it is, it never refills it (a refill
 * on every change of address let two colliding addresses alternate without limit, red team
 * 2026-12). The limit is against a misbehaving log or a casual flood from a few addresses, not a
 * distributed attack, which a front proxy or firewall must absorb (docs/witness.md).
 * Returns 1 when the request may go on.
 */
static int rate_allow(struct server *s, const char *addr, struct bucket **slot)
{
    struct bucket *b = &s->buckets[fnv1a(s->hash_key, addr) % RATE_SLOTS];
    struct timespec now;
    double dt;

    *slot = b;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (b->addr[0] == '\0') {
        b->tokens = s->c->burst;
        b->last = now;
    }
    snprintf(b->addr, sizeof(b->addr), "%s", addr);
    dt = (double)(now.tv_sec - b->last.tv_sec) + (double)(now.tv_nsec - b->last.tv_nsec) / 1e9;
    b->last = now;
    b->tokens += dt * s->c->rate_per_sec;
    if (b->tokens > s->c->burst)
        b->tokens = s->c->burst;
    if (b->tokens < 1.0)
        return 0;
    b->tokens -= 1.0;
    return 1;
}

/* --- requests ------------------------------------------------------------------------------- */

static void reply(struct evhttp_request *req, int status, const char *ctype, const char *body,
                  size_t len)
{
    struct evbuffer *out = evbuffer_new();
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);

    if (out == NULL) {
        evhttp_send_error(req, 500, NULL);
        return;
    }
    evhttp_add_header(h, "Content-Type", ctype);
    evhttp_add_header(h, "Cache-Control", "no-store");
    evbuffer_add(out, body, len);
    evhttp_send_reply(req, status, NULL, out);
    evbuffer_free(out);
}

static void reply_text(struct evhttp_request *req, int status, const char *text)
{
    char line[SWORN_ERR_MSG_MAX + 2];
    int n = snprintf(line, sizeof(line), "%s\n", text);

    reply(req, status, "text/plain; charset=utf-8", line,
          n < 0 ? 0 : ((size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1));
}

static const char *method_name(enum evhttp_cmd_type m)
{
    switch (m) {
    case EVHTTP_REQ_GET:
        return "GET";
    case EVHTTP_REQ_POST:
        return "POST";
    case EVHTTP_REQ_HEAD:
        return "HEAD";
    case EVHTTP_REQ_PUT:
        return "PUT";
    case EVHTTP_REQ_DELETE:
        return "DELETE";
    default:
        return "OTHER";
    }
}

static void handle(struct evhttp_request *req, void *arg)
{
    struct server *s = arg;
    static struct sworn_witness_result r;
    static char body[SWORN_WITNESS_BODY_MAX];
    struct evhttp_connection *conn = evhttp_request_get_connection(req);
    const char *uri = evhttp_request_get_uri(req);
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    struct json_object *o = event_object("request");
    struct bucket *slot = NULL;
    char *peer = NULL;
    char addr[ADDR_MAX] = "";
    ev_uint16_t port = 0;
    size_t len;
    uint64_t now;

    if (conn != NULL) {
        sworn_witness_conns_request(s->conns, conn);
        evhttp_connection_get_peer(conn, &peer, &port);
        if (peer != NULL)
            snprintf(addr, sizeof(addr), "%s", peer);
    }
    json_object_object_add(o, "client", json_object_new_string(addr));
    json_object_object_add(o, "method",
                           json_object_new_string(method_name(evhttp_request_get_command(req))));
    json_object_object_add(o, "path", path_string(uri != NULL ? uri : ""));
    /*
     * The rate limit comes first, for every path and method: a 404 or 405 costs a log line too.
     * Only the first 429 of a run is logged; the next line of that slot's client that gets
     * through says how many were not (red team 2026-12: one client on one kept-alive
     * connection made 11000 log lines a second of 429s).
     */
    if (!rate_allow(s, addr, &slot)) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
        reply_text(req, 429, "too many requests");
        if (slot->limited) {
            slot->unlogged++;
            json_object_put(o);
            return;
        }
        slot->limited = 1;
        json_object_object_add(o, "status", json_object_new_int(429));
        json_object_object_add(o, "outcome", json_object_new_string("rate-limited"));
        log_line(o);
        return;
    }
    if (slot->limited) {
        json_object_object_add(o, "unlogged_429", json_object_new_uint64(slot->unlogged));
        slot->limited = 0;
        slot->unlogged = 0;
    }
    if (uri == NULL || strcmp(uri, PATH_ADD) != 0) {
        reply_text(req, 404, "not found: this witness serves POST " PATH_ADD " only");
        json_object_object_add(o, "status", json_object_new_int(404));
        json_object_object_add(o, "outcome", json_object_new_string("no-such-path"));
        log_line(o);
        return;
    }
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "POST");
        reply_text(req, 405, "method not allowed: POST only");
        json_object_object_add(o, "status", json_object_new_int(405));
        json_object_object_add(o, "outcome", json_object_new_string("bad-method"));
        log_line(o);
        return;
    }
    /* evhttp has already refused bodies over body_bytes (413); this only copies. */
    len = evbuffer_get_length(in);
    if (len > s->c->body_bytes || len > sizeof(body)) {
        reply_text(req, 413, "body too large");
        json_object_object_add(o, "status", json_object_new_int(413));
        json_object_object_add(o, "outcome", json_object_new_string("too-large"));
        log_line(o);
        return;
    }
    evbuffer_copyout(in, body, len);
    now = (uint64_t)time(NULL);
    sworn_witness_add(s->c, s->st, s->cs, body, len, now, &r);
    if (r.status == 200) {
        reply(req, 200, "text/plain; charset=utf-8", r.line, r.line_len);
    } else if (r.status == 409) {
        char size[32];
        int n = snprintf(size, sizeof(size), "%llu\n", (unsigned long long)r.latest_size);

        reply(req, 409, "text/x.tlog.size", size, (size_t)n);
    } else {
        reply_text(req, r.status, r.reason);
    }
    json_object_object_add(o, "status", json_object_new_int(r.status));
    json_object_object_add(o, "outcome", json_object_new_string(r.outcome));
    if (r.origin[0] != '\0')
        json_object_object_add(o, "origin", json_object_new_string(r.origin));
    if (r.status != 400 || r.size != 0) {
        json_object_object_add(o, "old", json_object_new_uint64(r.old_size));
        json_object_object_add(o, "size", json_object_new_uint64(r.size));
    }
    if (r.status == 409)
        json_object_object_add(o, "latest", json_object_new_uint64(r.latest_size));
    if (r.status != 200)
        json_object_object_add(o, "reason", json_object_new_string(r.reason));
    log_line(o);
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
    struct server *s = arg;

    (void)fd;
    (void)what;
    event_base_loopexit(s->base, NULL);
}

/*
 * libevent's own warnings (evhttp's, the listener's) become JSON lines like every other, so
 * stderr stays one JSON object per line whatever a client does.
 */
static void libevent_log(int severity, const char *msg)
{
    struct json_object *o = event_object("libevent");

    json_object_object_add(o, "severity",
                           json_object_new_string(severity >= EVENT_LOG_ERR    ? "error"
                                                  : severity >= EVENT_LOG_WARN ? "warning"
                                                                               : "debug"));
    json_object_object_add(o, "message", json_object_new_string(msg != NULL ? msg : ""));
    log_line(o);
}

static void log_cut(size_t count, void *arg)
{
    struct json_object *o = event_object("connections-cut");

    (void)arg;
    json_object_object_add(o, "count", json_object_new_uint64(count));
    json_object_object_add(o, "reason",
                           json_object_new_string("no whole request, or the answer not taken, "
                                                  "within limits.timeout; or over "
                                                  "limits.connections_per_address"));
    log_line(o);
}

static void resume_accept(evutil_socket_t fd, short what, void *arg)
{
    struct server *s = arg;
    struct json_object *o = event_object("accept-resumed");

    (void)fd;
    (void)what;
    json_object_object_add(o, "failures", json_object_new_uint64(s->accept_errors));
    log_line(o);
    s->accept_errors = 0;
    if (!sworn_witness_conns_full(s->conns)) /* else w_conns enables it when one closes */
        evconnlistener_enable(s->listener);
}

/*
 * accept() failed for a reason that is not "try again" (out of descriptors, mostly: a client
 * holding thousands of connections). libevent would retry at once, forever, in a busy loop
 * that also writes a warning per try (red team 2026-12: 94% of a core and 85 MB of log in ten
 * seconds). Instead: stop accepting for ACCEPT_PAUSE_MS, log one line, and try again; the
 * connections already open go on being served and timing out.
 */
static struct server *accepting; /* the listener's user data is evhttp's: the server is here */

static void accept_error(struct evconnlistener *lev, void *arg)
{
    struct server *s = accepting;
    int err = EVUTIL_SOCKET_ERROR();
    struct timeval tv = {.tv_sec = 0, .tv_usec = ACCEPT_PAUSE_MS * 1000};

    (void)arg;
    evconnlistener_disable(lev);
    if (s->accept_errors++ == 0) {
        struct json_object *o = event_object("accept-paused");

        json_object_object_add(o, "reason",
                               json_object_new_string(evutil_socket_error_to_string(err)));
        log_line(o);
    }
    evtimer_add(s->resume, &tv);
}

/* Log the bound address and port (the port may have been 0 in the configuration). */
static int log_listening(struct evhttp_bound_socket *bound, const char *host)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int port;
    struct json_object *o;

    if (getsockname(evhttp_bound_socket_get_fd(bound), (struct sockaddr *)&ss, &sl) < 0)
        return sworn_err_set(SWORN_ERR_IO, "witness: getsockname failed");
    if (ss.ss_family == AF_INET)
        port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    else
        port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    o = event_object("listening");
    json_object_object_add(o, "address", json_object_new_string(host));
    json_object_object_add(o, "port", json_object_new_int(port));
    log_line(o);
    return 0;
}

int sworn_witness_serve(const struct sworn_witness_config *c, struct sworn_witness_state *st,
                        struct sworn_witness_cosigner *cs)
{
    struct server s = {.c = c, .st = st, .cs = cs};
    struct evhttp *http = NULL;
    struct evhttp_bound_socket *bound;
    struct event *sigterm = NULL, *sigint = NULL;
    struct timeval tv = {.tv_sec = (time_t)(c->timeout_ms / 1000),
                         .tv_usec = (suseconds_t)(c->timeout_ms % 1000) * 1000};
    int rc = -1, notify_fd = -1;

    signal(SIGPIPE, SIG_IGN);
    event_set_log_callback(libevent_log);
    SWORN_ENSURE(getrandom(&s.hash_key, sizeof(s.hash_key), 0) == (ssize_t)sizeof(s.hash_key),
                 SWORN_ERR_IO, "witness: getrandom failed");
    s.buckets = calloc(RATE_SLOTS, sizeof(*s.buckets));
    s.base = event_base_new();
    SWORN_ENSURE(s.buckets != NULL && s.base != NULL, SWORN_ERR_NOMEM, "witness: out of memory");
    s.resume = evtimer_new(s.base, resume_accept, &s);
    SWORN_ENSURE(s.resume != NULL, SWORN_ERR_NOMEM, "witness: out of memory");
    http = evhttp_new(s.base);
    SWORN_ENSURE(http != NULL, SWORN_ERR_NOMEM, "witness: out of memory");
    evhttp_set_max_body_size(http, (ev_ssize_t)c->body_bytes);
    evhttp_set_max_headers_size(http, HEADERS_MAX);
    evhttp_set_timeout_tv(http, &tv);
    {
        struct sworn_witness_conns_limits lim = {.deadline_ms = c->timeout_ms,
                                                 .max_total = c->connections,
                                                 .max_per_addr = c->connections_per_address};

        s.conns = sworn_witness_conns_new(s.base, http, &lim, log_cut, &s);
    }
    SWORN_GUARD(s.conns != NULL ? 0 : -1);
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                         EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
                                         EVHTTP_REQ_PATCH);
    evhttp_set_gencb(http, handle, &s);
    bound = evhttp_bind_socket_with_handle(http, c->listen_host, c->listen_port);
    SWORN_ENSURE(bound != NULL, SWORN_ERR_IO, "witness: cannot listen on %s port %u",
                 c->listen_host, (unsigned)c->listen_port);
    s.listener = evhttp_bound_socket_get_listener(bound);
    accepting = &s;
    evconnlistener_set_error_cb(s.listener, accept_error);
    sworn_witness_conns_set_listener(s.conns, s.listener);
    SWORN_GUARD(log_listening(bound, c->listen_host));
    sigterm = evsignal_new(s.base, SIGTERM, on_signal, &s);
    sigint = evsignal_new(s.base, SIGINT, on_signal, &s);
    SWORN_ENSURE(sigterm != NULL && sigint != NULL && event_add(sigterm, NULL) == 0 &&
                     event_add(sigint, NULL) == 0,
                 SWORN_ERR_IO, "witness: cannot watch signals");
    /* Listening: a Type=notify unit's start is over (common/sdnotify.h). */
    SWORN_GUARD(sworn_sdnotify_open(&notify_fd));
    SWORN_GUARD(sworn_sdnotify_send(notify_fd, "READY=1"));
    SWORN_ENSURE(event_base_dispatch(s.base) >= 0, SWORN_ERR_IO, "witness: event loop failed");
    log_line(event_object("stopped"));
    rc = 0;
fail:
    if (notify_fd >= 0)
        close(notify_fd);
    accepting = NULL;
    if (sigterm != NULL)
        event_free(sigterm);
    if (sigint != NULL)
        event_free(sigint);
    if (s.resume != NULL)
        event_free(s.resume);
    if (http != NULL)
        evhttp_free(http);
    sworn_witness_conns_free(s.conns);
    if (s.base != NULL)
        event_base_free(s.base);
    free(s.buckets);
    return rc;
}
