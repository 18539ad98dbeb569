/*
 * p_conn.c -- one agent connection (docs/proxy.md, "How a request is handled").
 *
 * The phases of a connection, one request at a time:
 *
 *   HELLO     on a hostlink listener only, once, first: sworn-run's relay's HostlinkHello
 *             (p_hostlink.h) within timeouts.head; it names the connection's sandbox, its
 *             SandboxStarted entry and the agent's uid. A bad, late or missing one is recorded
 *             as a refusal and the connection closed without an answer (the relay is not an
 *             HTTP client)
 *   HEAD      read and parse a request head (p_http.h); a refusal is recorded and answered,
 *             and the connection is closed (the stream may be out of step after it)
 *   BODY      read the whole body (de-chunked) up to limits.body: the record holds its digest
 *   DECIDE    ask decisiond (p_decide.h); nothing goes anywhere until the answer
 *   UPSTREAM  after an allow: resolve, filter, connect, TLS (p_upstream.h)
 *   RESPONSE  the request goes upstream with the credential in place; the response head is
 *             parsed, cleaned and masked, its body streamed (masked) to the agent
 *   PEEK      after "200" to a CONNECT: the first bytes tell a TLS ClientHello (terminated with
 *             a leaf for the CONNECT host) from anything else (decided as tcp.connect)
 *   SPLICE    an allowed tcp.connect, or a WebSocket after its 101: bytes both ways, undecided
 *   CLOSING   the last answer is being written; then the connection is freed
 *
 * Every callback is deferred (BEV_OPT_DEFER_CALLBACKS), so no libevent callback runs inside
 * another; but a decision or an upstream result reaches the connection from inside its helper's
 * callback. So every entry point counts itself in c->depth (conn_enter, conn_leave), and a
 * connection that is ended (conn_abort) is only marked, its events stopped, and freed when the
 * outermost entry returns: code after an abort may still read c, and checks c->freeing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "encoding.h"
#include "err.h"
#include "p_build.h"
#include "p_ca.h"
#include "p_decide.h"
#include "p_form.h"
#include "p_hostlink.h"
#include "p_http.h"
#include "p_jlog.h"
#include "p_jwt.h"
#include "p_mask.h"
#include "p_mcp.h"
#include "p_oauth.h"
#include "p_proxy.h"
#include "p_refuse.h"
#include "p_sign.h"
#include "p_sni.h"
#include "p_token.h"
#include "p_upstream.h"
#include "p_model.h"
#include "p_musage.h"
#include "p_usage.h"
#include "resource.h"
#include "wipe.h"

#define RESPONSE_HEAD_MAX 65536u    /* bytes of an upstream response head */
#define AGENT_INPUT_MAX 262144u     /* read no further ahead of the agent than this */
#define OUTPUT_HIGH (1024u * 1024u) /* stop reading the other side above this much unsent */

enum phase {
    PH_HELLO = 1,
    PH_HEAD,
    PH_BODY,
    PH_DECIDE,
    PH_UPSTREAM,
    PH_RESPONSE_HEAD,
    PH_RESPONSE_BODY,
    PH_PEEK,
    PH_SPLICE,
    PH_CLOSING,
};

struct pconn {
    struct sworn_proxy *px;
    struct sworn_plistener *l;
    /* Who, besides the listener's principal: its sandbox and SO_PEERCRED's uid, or on a hostlink
     * (once its hello is accepted) the hello's sandbox, SandboxStarted index and agent uid. */
    uid_t uid;
    char sandbox[SWORN_FRAME_NAME_MAX + 1];
    uint64_t sandbox_start_index;
    int hello_refused;     /* the hostlink hello was refused: the connection ends unanswered */
    struct bufferevent *a; /* the agent (a TLS filter inside a terminated tunnel) */
    /* The agent's side as layers: [0] the socket, then a TLS filter for a TLS listener and one
     * for a terminated tunnel; a == layer[nlayers - 1]. Each filter owns the layer under it and
     * its SSL (BEV_OPT_CLOSE_ON_FREE): freeing the top frees all, whenever libevent is done with
     * them. At an orderly close the TLS layers are shut down (close_notify) and the socket's own
     * output is awaited through an evbuffer callback (closing_progress). */
    struct bufferevent *layer[3];
    SSL *layer_ssl[3];
    int nlayers;
    int tls_closing;       /* the close_notify is sent; waiting for the socket's output to drain */
    struct bufferevent *u; /* upstream, when connected */
    struct event *timer;
    struct sworn_pdecide dec;
    struct sworn_pup pup;
    enum phase ph;
    int freeing; /* set once the connection is to be freed */
    int depth;   /* callbacks of this connection running now: it is freed when the last returns */
    int head_started;
    size_t head_parsed; /* bytes of the head the parser last saw */

    /* CONNECT */
    int in_tunnel;                          /* inside a terminated TLS tunnel */
    int raw_connect;                        /* a CONNECT to a raw port, decided before any answer */
    int tunnel_open;                        /* "200" was sent for the CONNECT */
    struct sworn_resource tun;              /* the CONNECT host (canonical) and port */
    char tun_host[SWORN_HTTP_HOST_MAX + 1]; /* as the CONNECT wrote it */
    uint16_t tun_port;

    /* The request. */
    uint8_t *head;
    size_t head_len;
    struct sworn_http_request rq;
    char *names_buf;
    const char *names[SWORN_FRAME_HEADERS_MAX];
    size_t nnames;
    struct evbuffer *body;
    int has_body;
    uint64_t body_need;
    uint64_t body_charged; /* bytes of px->bodies_held that are this request's */
    struct sworn_http_chunked chunked;
    char id[64];
    const char *operation;
    char scheme[8];
    char host[SWORN_HTTP_HOST_MAX + 1];
    uint16_t port;
    char path[SWORN_RESOURCE_PATH_MAX + 1];
    char method[SWORN_HTTP_METHOD_MAX + 1];
    struct sworn_resource res;
    int res_ok;
    char url[SWORN_RESOURCE_PATH_MAX + 300];
    struct sworn_symtok_scan tok;
    struct sworn_jwt_delegation del;
    struct sworn_pbuild build;
    struct sworn_prefuse refusal;
    int upgrade;
    /* MCP (p_mcp.h): the call this request was read as, when it is to an `mcp:` server
     * (is_mcp); allocated at the first one, kept for the connection. */
    struct sworn_pmcp_call *mcp;
    int is_mcp;

    /* The decision. */
    int has_index;
    uint64_t log_index;
    char reason[SWORN_FRAME_TEXT_MAX + 1];
    int has_cred;
    char cred_header[257], cred_query[257], cred_form[257];
    char cred_id[SWORN_FRAME_ID_MAX + 1];
    uint8_t *cred;
    size_t cred_len;
    struct sworn_pmask mask;
    struct event *flush_timer; /* sends what the mask holds once upstream is quiet (p_mask.h) */
    /* RFC 9421 signature upstream (p_sign.h): the destination is a signing one, and the header
     * lines decisiond's signature gives */
    int signing;
    char sig_headers[SWORN_PSIGN_HEADERS_MAX];
    size_t sig_headers_len;

    /* Upstream and its response. */
    char up_key[SWORN_RESOURCE_HOST_MAX + 32];
    int up_reusable;
    struct sworn_http_response rs;
    uint64_t resp_remaining;
    struct sworn_http_chunked rchunked;
    int resp_chunked_out; /* the agent gets the body chunked (HTTP/1.1) */
    int close_after;
    struct evbuffer *tmp;

    /* OAuth token endpoints (p_oauth.h, the section "OAuth token endpoints" below). */
    int oauth_ep;                /* the request is to a configured token endpoint */
    int body_tok;                /* its form body presents a symbolic token: */
    uint8_t body_tok_sha[32];    /* that token's SHA-256 */
    int oauth_hold;              /* the response body is held whole, not streamed */
    int oauth_over;              /* it was longer than oauth.response_max */
    struct evbuffer *oauth_body; /* the held body */
    uint8_t *oauth_head;         /* a copy of the response head (c->rs points into it) */
    int oauth_cl_set;            /* the agent's head gets Content-Length: oauth_cl */
    size_t oauth_cl;
    struct sworn_poauth_tokens otok; /* the real tokens read (wiped after the exchange) */
    char oauth_xid[64];              /* the TokenExchange's request id */
    /* A model call (p_model.h): its body as read, and once allowed the usage its response
     * reports (p_musage.h), owed to decisiond in one report (model_report). */
    enum sworn_pmodel_api model_api;
    struct sworn_pmodel_req mreq;
    struct sworn_pmusage musage;
    int model_allowed; /* an allowed model call whose usage report is not sent yet */
    int musage_on;     /* the reader has the response's head and is fed its body */
    /* The agent went away while an allowed model call's answer was coming: the rest of it is
     * read from upstream (and dropped) so that its usage is reported all the same; the tokens
     * were spent whether or not the agent stayed to read them (red team rt-A). */
    int agent_gone;

    /* For the request's log line. */
    double t0, ms_decide, t_upstream;
    uint64_t bytes_up, bytes_down;
    int status;
    const char *effect;
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void arm(struct pconn *c, uint64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};

    evtimer_add(c->timer, &tv);
}

static void wipe_credential(struct pconn *c)
{
    if (c->cred != NULL) {
        sworn_memzero(c->cred, c->cred_len);
        free(c->cred);
    }
    c->cred = NULL;
    c->cred_len = 0;
    c->has_cred = 0;
    c->cred_header[0] = c->cred_query[0] = c->cred_form[0] = c->cred_id[0] = '\0';
}

/* Forget what the OAuth interception holds: the real tokens and the body that had them. */
static void oauth_reset(struct pconn *c)
{
    if (c->oauth_body != NULL) {
        size_t n = evbuffer_get_length(c->oauth_body);

        if (n > 0)
            sworn_memzero(evbuffer_pullup(c->oauth_body, -1), n);
        evbuffer_drain(c->oauth_body, n);
    }
    sworn_poauth_tokens_wipe(&c->otok);
    free(c->oauth_head);
    c->oauth_head = NULL;
    c->oauth_ep = c->body_tok = c->oauth_hold = c->oauth_over = c->oauth_cl_set = 0;
    c->oauth_cl = 0;
    c->oauth_xid[0] = '\0';
}

static void model_report(struct pconn *c, int complete);

/* Forget the request (not the connection, the tunnel or a reusable upstream). */
static void reset_request(struct pconn *c)
{
    model_report(c, 0); /* an allowed model call whose response did not end: owed all the same */
    c->model_api = SWORN_PMODEL_NONE;
    free(c->head);
    c->head = NULL;
    c->head_len = 0;
    free(c->names_buf);
    c->names_buf = NULL;
    c->nnames = 0;
    if (c->body != NULL)
        evbuffer_drain(c->body, evbuffer_get_length(c->body));
    c->px->bodies_held -= c->body_charged;
    c->body_charged = 0;
    c->has_body = 0;
    c->body_need = 0;
    c->id[0] = '\0';
    c->operation = NULL;
    /* The target is the next request's to read: a refusal before it is read must not record the
     * previous request's. Inside a terminated tunnel what can be known already is the tunnel's. */
    c->scheme[0] = c->host[0] = c->path[0] = '\0';
    c->port = 0;
    if (c->in_tunnel) {
        snprintf(c->scheme, sizeof(c->scheme), "https");
        snprintf(c->host, sizeof(c->host), "%s", c->tun_host);
        c->port = c->tun_port;
    }
    c->res_ok = 0;
    c->upgrade = 0;
    c->is_mcp = 0;
    c->has_index = 0;
    c->reason[0] = '\0';
    c->url[0] = '\0';
    c->method[0] = '\0';
    wipe_credential(c);
    oauth_reset(c);
    sworn_pmask_free(&c->mask);
    c->status = 0;
    c->effect = NULL;
    c->bytes_up = c->bytes_down = 0;
    c->ms_decide = -1;
    c->head_started = 0;
    c->head_parsed = 0;
    memset(&c->rq, 0, sizeof(c->rq));
}

static void free_upstream(struct pconn *c)
{
    sworn_pup_cancel(&c->pup);
    if (c->u != NULL)
        bufferevent_free(c->u);
    c->u = NULL;
    c->up_key[0] = '\0';
    c->up_reusable = 0;
}

static void on_socket_drained(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg);

static void conn_free(struct pconn *c)
{
    struct sworn_proxy *px = c->px;

    reset_request(c);
    free_upstream(c);
    sworn_pdecide_free(&c->dec);
    sworn_prefuse_free(&c->refusal);
    if (c->nlayers > 0) {
        /* The socket may outlive this (libevent frees a bufferevent when its callbacks are
         * done): nothing of it may call back into c after this. */
        if (c->tls_closing)
            evbuffer_remove_cb(bufferevent_get_output(c->layer[0]), on_socket_drained, c);
        bufferevent_free(c->layer[c->nlayers - 1]);
    }
    if (c->timer != NULL)
        event_free(c->timer);
    if (c->flush_timer != NULL)
        event_free(c->flush_timer);
    if (c->body != NULL)
        evbuffer_free(c->body);
    if (c->tmp != NULL)
        evbuffer_free(c->tmp);
    free(c->mcp);
    if (c->oauth_body != NULL)
        evbuffer_free(c->oauth_body);
    sworn_pmetrics_connection_close(&px->metrics);
    px->connections--;
    c->l->connections--;
    sworn_memzero(c, sizeof(*c));
    free(c);
}

/* End the connection now (nothing more is written); freed once no entry point runs. */
static void conn_abort(struct pconn *c)
{
    if (c->freeing)
        return;
    c->freeing = 1;
    c->ph = PH_CLOSING;
    if (c->depth == 0) {
        conn_free(c);
        return;
    }
    /* Stop everything that could call in again; the memory stays until conn_leave. */
    evtimer_del(c->timer);
    free_upstream(c);
    sworn_pdecide_free(&c->dec);
    if (c->a != NULL)
        bufferevent_disable(c->a, EV_READ | EV_WRITE);
}

static struct pconn *conn_enter(void *arg)
{
    struct pconn *c = arg;

    c->depth++;
    return c;
}

static void conn_leave(struct pconn *c)
{
    if (--c->depth == 0 && c->freeing)
        conn_free(c);
}

static void on_a_write(struct bufferevent *bev, void *arg);
static void on_a_event(struct bufferevent *bev, short what, void *arg);

/*
 * CLOSING: once the agent's output is written, end. Over TLS a filter's output going empty only
 * means it is encrypted into the layer below: each TLS layer is shut down (close_notify) and
 * freed from the top, and the layer below awaited, down to the socket.
 */
/* Is every layer's output written to the socket, and the socket's to the peer? */
static int all_written(const struct pconn *c)
{
    for (int i = 0; i < c->nlayers; i++)
        if (evbuffer_get_length(bufferevent_get_output(c->layer[i])) > 0)
            return 0;
    return 1;
}

static void closing_progress(struct pconn *c)
{
    if (evbuffer_get_length(bufferevent_get_output(c->a)) > 0)
        return; /* on_a_write comes back when it is */
    if (c->nlayers > 1 && !c->tls_closing) {
        c->tls_closing = 1;
        for (int i = c->nlayers - 1; i >= 1; i--)
            (void)SSL_shutdown(c->layer_ssl[i]);
        evbuffer_add_cb(bufferevent_get_output(c->layer[0]), on_socket_drained, c);
    }
    if (all_written(c))
        conn_abort(c);
}

/* The socket's output changed (at the close of a TLS connection): end once all is written. */
static void on_socket_drained(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
    struct pconn *c = arg;

    (void)buf;
    (void)info;
    /* An evbuffer callback may run inside libevent's own calls: end from the loop instead. */
    if (c->ph == PH_CLOSING && !c->freeing && all_written(c))
        event_active(c->timer, EV_TIMEOUT, 1);
}

/* End the connection once what is queued for the agent is written. */
static void conn_close_after_write(struct pconn *c)
{
    c->ph = PH_CLOSING;
    free_upstream(c);
    evtimer_del(c->timer);
    bufferevent_disable(c->a, EV_READ);
    arm(c, 10000); /* an agent that never reads its answer does not hold the slot */
    closing_progress(c);
}

static void log_request(struct pconn *c)
{
    struct sworn_plog_req r = {0};

    r.request_id = c->id[0] != '\0' ? c->id : NULL;
    r.principal = c->l->conf->principal;
    r.sandbox = c->sandbox;
    r.method = c->method[0] != '\0' ? c->method : NULL;
    r.url = c->url[0] != '\0' ? c->url : NULL;
    r.status = c->status;
    r.effect = c->effect;
    r.has_log_index = c->has_index;
    r.log_index = c->log_index;
    r.bytes_up = c->bytes_up;
    r.bytes_down = c->bytes_down;
    r.ms_decide = c->ms_decide;
    r.ms_total = c->t0 > 0 ? (now_s() - c->t0) * 1000.0 : -1;
    r.reason = c->reason[0] != '\0' ? c->reason : NULL;
    sworn_plog_request(&r);
}

static enum sworn_pmetrics_effect metric_effect(const char *effect)
{
    if (effect == NULL)
        return SWORN_PMETRICS_ERROR;
    if (strcmp(effect, "allow") == 0)
        return SWORN_PMETRICS_ALLOW;
    if (strcmp(effect, "deny") == 0)
        return SWORN_PMETRICS_DENY;
    if (strcmp(effect, "refused") == 0)
        return SWORN_PMETRICS_REFUSED;
    return SWORN_PMETRICS_ERROR;
}

static const char *status_text(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 403:
        return "Forbidden";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 417:
        return "Expectation Failed";
    case 431:
        return "Request Header Fields Too Large";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Error";
    }
}

/*
 * Answer the agent itself (a deny, a refusal, a failure): a small JSON body with the request id,
 * the reason and the log index when there is one. Nothing of the request goes anywhere.
 */
static void reply_json(struct pconn *c, int status, const char *effect, int close)
{
    json_object *o = json_object_new_object();
    const char *body;
    size_t body_len;
    struct evbuffer *out = bufferevent_get_output(c->a);

    if (c->id[0] != '\0')
        json_object_object_add(o, "request_id", json_object_new_string(c->id));
    json_object_object_add(o, "effect", json_object_new_string(effect));
    if (c->reason[0] != '\0')
        json_object_object_add(o, "reason", json_object_new_string(c->reason));
    if (c->has_index)
        json_object_object_add(o, "log_index", json_object_new_int64((int64_t)c->log_index));
    body =
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    body_len = strlen(body);
    evbuffer_add_printf(
        out,
        "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
        "Cache-Control: no-store\r\n%s\r\n",
        status, status_text(status), body_len + 1, close ? "Connection: close\r\n" : "");
    evbuffer_add(out, body, body_len);
    evbuffer_add(out, "\n", 1);
    json_object_put(o);
    c->status = status;
    c->effect = effect;
    c->bytes_down += body_len + 1;
    sworn_pmetrics_request(&c->px->metrics, metric_effect(effect), status);
    log_request(c);
}

static void start_head(struct pconn *c);
static void step_head(struct pconn *c);
static void step_body(struct pconn *c);
static void step_peek(struct pconn *c);
static void step_response_head(struct pconn *c);
static void step_response_body(struct pconn *c);
static void splice_move(struct pconn *c, struct bufferevent *from, struct bufferevent *to,
                        int mask);
static void ask(struct pconn *c);

/* After an answer that leaves the connection usable: the next request. */
static void next_request(struct pconn *c)
{
    if (c->rq.connection_close || c->close_after) {
        conn_close_after_write(c);
        return;
    }
    reset_request(c);
    start_head(c);
    if (evbuffer_get_length(bufferevent_get_input(c->a)) > 0)
        step_head(c);
}

/* --- Refusals: recorded denies (p_refuse.h), then the connection is closed. --- */

static void on_refusal_recorded_in(struct pconn *c, void *unused_arg,
                                   const struct sworn_prefuse_result *r)
{
    (void)unused_arg;

    if (r->recorded) {
        c->has_index = 1;
        c->log_index = r->log_index;
    }
    if (c->hello_refused) {
        /* The relay is not an HTTP client: nothing is written, the connection ends. */
        c->status = 0;
        c->effect = "refused";
        sworn_pmetrics_request(&c->px->metrics, SWORN_PMETRICS_REFUSED, r->status);
        log_request(c);
        conn_abort(c);
        return;
    }
    if (c->tunnel_open && !c->in_tunnel) {
        /* A refused tunnel: the agent expects TLS or raw bytes, not an HTTP answer. */
        c->status = 0;
        c->effect = "refused";
        sworn_pmetrics_request(&c->px->metrics, SWORN_PMETRICS_REFUSED, 400);
        log_request(c);
        conn_abort(c);
        return;
    }
    reply_json(c, r->status, "refused", 1);
    conn_close_after_write(c);
}

static void on_refusal_recorded(void *arg, const struct sworn_prefuse_result *r)
{
    struct pconn *c = conn_enter(arg);

    on_refusal_recorded_in(c, arg, r);
    conn_leave(c);
}

/*
 * Refuse the request: status and a static sentence. What could be read of it goes to decisiond
 * with the refusal (recorded as a DENY), then the agent gets the status and the connection ends.
 */
static void refuse(struct pconn *c, int status, const char *why, const uint8_t *head,
                   size_t head_len)
{
    struct sworn_prefuse_in in = {0};

    evtimer_del(c->timer);
    bufferevent_disable(c->a, EV_READ);
    if (c->id[0] == '\0')
        sworn_proxy_next_id(c->px, c->id);
    snprintf(c->reason, sizeof(c->reason), "refused by the proxy: %s", why);
    c->ph = PH_DECIDE;
    in.request_id = c->id;
    in.principal = c->l->conf->principal;
    in.sandbox = c->sandbox;
    in.uid = c->uid;
    in.sandbox_start_index = c->sandbox_start_index;
    in.operation = c->operation != NULL ? c->operation : "http.request";
    in.scheme = c->scheme;
    in.host = c->host;
    in.port = c->port;
    in.path = c->path;
    in.method = c->method;
    in.status = status;
    in.why = why;
    in.head = head;
    in.head_len = head_len;
    in.time_unix_ms = wall_ms();
    sworn_prefuse_start(&c->refusal, &c->dec, &c->build, &in, on_refusal_recorded, c);
}

/* --- Reading the request. --- */

static void start_head(struct pconn *c)
{
    c->ph = PH_HEAD;
    c->head_started = 0;
    evtimer_del(c->timer);
    arm(c, c->px->conf->idle_timeout_ms);
    bufferevent_enable(c->a, EV_READ);
}

static void copy_span(char *dst, size_t cap, const char *p, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, p, n);
    dst[n] = '\0';
}

static void lower(char *s)
{
    for (; *s != '\0'; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

/* The canonical URL for the log line (never the raw target). */
static void make_url(struct pconn *c)
{
    if (!c->res_ok)
        return;
    if (strcmp(c->res.scheme, "tcp") == 0)
        snprintf(c->url, sizeof(c->url), "tcp://%s:%u", c->res.host, (unsigned)c->res.port);
    else
        snprintf(c->url, sizeof(c->url), "%s://%s:%u%s", c->res.scheme, c->res.host,
                 (unsigned)c->res.port, c->res.path);
}

static void canonicalise(struct pconn *c)
{
    Sworn__V1__Resource r = SWORN__V1__RESOURCE__INIT;
    const char *why = NULL;

    r.scheme = c->scheme;
    r.host = c->host;
    r.port = c->port;
    r.path = c->path;
    c->res_ok = sworn_resource_canon(&r, &c->res, &why) == 0;
    make_url(c);
}

/* Is the host:port of an authority (as written) the tunnel's? */
static int names_tunnel(struct pconn *c, const char *host, size_t host_len, uint16_t port)
{
    char in[SWORN_HTTP_HOST_MAX + 1], canon[SWORN_RESOURCE_HOST_MAX + 1];
    enum sworn_resource_host_kind kind;
    uint8_t addr[16];
    const char *why;

    if (host_len == 0 || host_len > SWORN_HTTP_HOST_MAX)
        return 0;
    copy_span(in, sizeof(in), host, host_len);
    if (sworn_resource_canon_host(in, canon, &kind, addr, &why) != 0)
        return 0;
    return strcmp(canon, c->tun.host) == 0 && port == c->tun_port;
}

static void handle_connect(struct pconn *c);

/* A parsed head: which request is it, and may it be asked about? */
static void classify(struct pconn *c)
{
    const struct sworn_http_request *q = &c->rq;

    copy_span(c->method, sizeof(c->method), q->method, q->method_len);
    c->upgrade = q->upgrade_websocket;
    c->operation = c->upgrade ? "ws.upgrade" : "http.request";
    if (q->form == SWORN_HTTP_AUTHORITY) {
        if (c->in_tunnel) {
            refuse(c, 400, "a CONNECT inside a tunnel", c->head, c->head_len);
            return;
        }
        handle_connect(c);
        return;
    }
    if (q->form == SWORN_HTTP_ASTERISK) {
        refuse(c, 400, "an asterisk-form request", c->head, c->head_len);
        return;
    }
    if (c->in_tunnel) {
        uint16_t hport = q->host_field_port_given ? q->host_field_port : 443;

        snprintf(c->scheme, sizeof(c->scheme), "%s", c->upgrade ? "wss" : "https");
        snprintf(c->host, sizeof(c->host), "%s", c->tun_host);
        c->port = c->tun_port;
        copy_span(c->path, sizeof(c->path), q->path, q->path_len);
        if (q->form == SWORN_HTTP_ABSOLUTE) {
            char s[8];

            copy_span(s, sizeof(s), q->scheme, q->scheme_len);
            lower(s);
            if (strcmp(s, "https") != 0 && strcmp(s, "wss") != 0) {
                refuse(c, 400, "a request inside a TLS tunnel names another scheme", c->head,
                       c->head_len);
                return;
            }
            if (!names_tunnel(c, q->host, q->host_len, q->port)) {
                refuse(c, 400, "the target does not name the tunnel's host", c->head, c->head_len);
                return;
            }
        }
        if (!q->has_host || !names_tunnel(c, q->host_field_host, q->host_field_host_len, hport)) {
            refuse(c, 400, "the Host header does not name the tunnel's host (domain fronting)",
                   c->head, c->head_len);
            return;
        }
    } else {
        if (q->form != SWORN_HTTP_ABSOLUTE) {
            refuse(c, 400, "not a proxy request: the target must be an absolute URL", c->head,
                   c->head_len);
            return;
        }
        copy_span(c->scheme, sizeof(c->scheme), q->scheme, q->scheme_len);
        lower(c->scheme);
        if (c->upgrade && strcmp(c->scheme, "http") == 0)
            snprintf(c->scheme, sizeof(c->scheme), "ws");
        else if (c->upgrade && strcmp(c->scheme, "https") == 0)
            snprintf(c->scheme, sizeof(c->scheme), "wss");
        if (!c->upgrade && (strcmp(c->scheme, "ws") == 0 || strcmp(c->scheme, "wss") == 0)) {
            refuse(c, 400, "a ws or wss target without a WebSocket upgrade", c->head, c->head_len);
            return;
        }
        if (q->host_len > SWORN_HTTP_HOST_MAX) {
            refuse(c, 400, "the target's host is too long", c->head, c->head_len);
            return;
        }
        copy_span(c->host, sizeof(c->host), q->host, q->host_len);
        c->port = q->port;
        if (q->path_len > SWORN_RESOURCE_PATH_MAX) {
            refuse(c, 414, "the target's path is too long", c->head, c->head_len);
            return;
        }
        copy_span(c->path, sizeof(c->path), q->path, q->path_len);
    }
    canonicalise(c);
    if (q->framing == SWORN_HTTP_LENGTH && q->content_length > c->px->conf->body_max) {
        refuse(c, 413, "the body is larger than limits.body", c->head, c->head_len);
        return;
    }
    c->has_body = q->framing != SWORN_HTTP_NO_BODY;
    if (!c->has_body) {
        ask(c);
        return;
    }
    if (q->expect_continue)
        evbuffer_add_printf(bufferevent_get_output(c->a), "HTTP/1.1 100 Continue\r\n\r\n");
    c->ph = PH_BODY;
    if (q->framing == SWORN_HTTP_LENGTH)
        c->body_need = q->content_length;
    else
        sworn_http_chunked_init(&c->chunked, c->px->conf->body_max, 0);
    evtimer_del(c->timer);
    arm(c, c->px->conf->body_timeout_ms);
    step_body(c);
}

static void head_sha_refuse(struct pconn *c, int status, const char *why, const uint8_t *p,
                            size_t n)
{
    uint8_t *copy = malloc(n > 0 ? n : 1);

    if (copy == NULL) {
        conn_abort(c);
        return;
    }
    memcpy(copy, p, n);
    free(c->head);
    c->head = copy;
    c->head_len = n;
    refuse(c, status, why, c->head, c->head_len);
}

static void step_head(struct pconn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->a);
    size_t len = evbuffer_get_length(in), n;
    struct sworn_http_limits lim = {c->px->conf->head_max, c->px->conf->headers_max};
    const uint8_t *p;
    int status = 0, r;
    const char *why = NULL;

    if (len == 0)
        return;
    if (!c->head_started) {
        c->head_started = 1;
        c->t0 = now_s();
        evtimer_del(c->timer);
        arm(c, c->px->conf->head_timeout_ms);
    }
    n = len < lim.head_max ? len : lim.head_max;
    p = evbuffer_pullup(in, (ev_ssize_t)n);
    if (p == NULL) {
        conn_abort(c);
        return;
    }
    /* The parser reads from the first byte each time: parse when a line ended since the last
     * parse (the head may be complete, or a line wrong: bare LF ends count), at the limit, or
     * every KiB; not at every byte, which a head sent a byte at a time made quadratic. */
    if (n < lim.head_max && n < c->head_parsed + 1024 &&
        memchr(p + c->head_parsed, '\n', n - c->head_parsed) == NULL &&
        memchr(p + c->head_parsed, '\r', n - c->head_parsed) == NULL)
        return;
    c->head_parsed = n;
    r = sworn_http_parse_request(p, n, &lim, &c->rq, &status, &why);
    if (r == 1) {
        if (n >= lim.head_max)
            head_sha_refuse(c, 431, "the request head is larger than limits.head", p, n);
        return;
    }
    if (r < 0) {
        head_sha_refuse(c, status, why, p, n);
        return;
    }
    c->head_len = c->rq.head_len;
    c->head = malloc(c->head_len);
    if (c->head == NULL) {
        conn_abort(c);
        return;
    }
    memcpy(c->head, p, c->head_len);
    evbuffer_drain(in, c->head_len);
    /* Point the parse at the connection's own copy (the buffer it read may move). */
    r = sworn_http_parse_request(c->head, c->head_len, &lim, &c->rq, &status, &why);
    if (r != 0) {
        refuse(c, 400, "the request head does not parse twice alike", c->head, c->head_len);
        return;
    }
    evtimer_del(c->timer);
    classify(c);
}

/* --- The hostlink hello (p_hostlink.h): the first bytes of a hostlink connection. --- */

static void start_hello(struct pconn *c)
{
    c->ph = PH_HELLO;
    c->t0 = now_s();
    arm(c, c->px->conf->head_timeout_ms); /* from the accept: the relay sends it at once */
    bufferevent_enable(c->a, EV_READ);
}

/*
 * Refuse the hello: recorded as a refusal (operation "hostlink.hello", no target) under the
 * listener's principal and the relay's uid (SO_PEERCRED), with no sandbox: nothing a refused hello
 * says is believed, not even what it would have named. Its digest covers the n bytes it was
 * judged on (what came, when it was late or cut short). Then the connection ends unanswered.
 */
static void refuse_hello(struct pconn *c, int status, const char *why, size_t n)
{
    struct evbuffer *in = bufferevent_get_input(c->a);
    size_t have = evbuffer_get_length(in);
    const uint8_t *p = NULL;

    if (n > have)
        n = have;
    c->hello_refused = 1;
    c->operation = "hostlink.hello";
    if (n == 0) {
        refuse(c, status, why, NULL, 0);
        return;
    }
    p = evbuffer_pullup(in, (ev_ssize_t)n);
    if (p == NULL) {
        conn_abort(c);
        return;
    }
    head_sha_refuse(c, status, why, p, n);
}

static void step_hello(struct pconn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->a);
    size_t have = evbuffer_get_length(in), used = 0;
    size_t n = have < SWORN_PHOSTLINK_FRAME_MAX ? have : SWORN_PHOSTLINK_FRAME_MAX;
    const uint8_t *p = n > 0 ? evbuffer_pullup(in, (ev_ssize_t)n) : NULL;
    struct sworn_phostlink h;
    const char *why = NULL;
    int r;

    if (n > 0 && p == NULL) {
        conn_abort(c);
        return;
    }
    r = sworn_phostlink_read(p, n, c->l->conf->principal, &h, &used, &why);
    if (r == SWORN_PHOSTLINK_MORE)
        return;
    if (r != SWORN_PHOSTLINK_DONE) {
        refuse_hello(c, 400, why, used);
        return;
    }
    evbuffer_drain(in, used);
    memcpy(c->sandbox, h.sandbox, sizeof(c->sandbox));
    c->sandbox_start_index = h.sandbox_start_index;
    c->uid = (uid_t)h.agent_uid;
    /* The agent's bytes may have come with the hello: they are the first request's. */
    start_head(c);
    if (evbuffer_get_length(in) > 0)
        step_head(c);
}

/*
 * Charge n more body bytes to the proxy's whole (limits.bodies): bodies are read whole before the
 * decision, so without a bound for all together many agents' bodies could take the memory. Over
 * it: 503 and the connection ends (capacity, not the request's fault: not a refusal). Returns 0,
 * or -1 when the connection was ended.
 */
static int charge_body(struct pconn *c, size_t n)
{
    if (c->px->bodies_held + n > c->px->conf->bodies_max) {
        snprintf(c->reason, sizeof(c->reason),
                 "the proxy holds limits.bodies of request bodies: try again later");
        reply_json(c, 503, "error", 1);
        conn_close_after_write(c);
        return -1;
    }
    c->px->bodies_held += n;
    c->body_charged += n;
    return 0;
}

static void step_body(struct pconn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->a);

    if (c->rq.framing == SWORN_HTTP_LENGTH) {
        size_t have = evbuffer_get_length(in);
        size_t take = have < c->body_need ? have : (size_t)c->body_need;

        if (take > 0) {
            if (charge_body(c, take) != 0)
                return;
            evbuffer_remove_buffer(in, c->body, take);
            c->body_need -= take;
        }
        if (c->body_need == 0) {
            evtimer_del(c->timer);
            ask(c);
        }
        return;
    }
    while (evbuffer_get_length(in) > 0) {
        size_t n = evbuffer_get_contiguous_space(in);
        const uint8_t *p = evbuffer_pullup(in, (ev_ssize_t)n), *data = NULL;
        size_t data_len = 0;
        int status = 0;
        const char *why = NULL;
        long used = sworn_http_chunked_feed(&c->chunked, p, n, &data, &data_len, &status, &why);

        if (used < 0) {
            refuse(c, status, why, c->head, c->head_len);
            return;
        }
        if (data_len > 0 && charge_body(c, data_len) != 0)
            return;
        if (data_len > 0 && evbuffer_add(c->body, data, data_len) != 0) {
            conn_abort(c);
            return;
        }
        evbuffer_drain(in, (size_t)used);
        if (sworn_http_chunked_done(&c->chunked)) {
            evtimer_del(c->timer);
            ask(c);
            return;
        }
        if (used == 0)
            break;
    }
}

/* --- Asking decisiond. --- */

static void on_decision(void *arg, const struct sworn_pdecide_result *r);

/* The header names as sent, NUL-terminated, in c->names_buf. */
static int collect_names(struct pconn *c)
{
    size_t total = 0, off = 0;

    for (size_t i = 0; i < c->rq.nfields; i++)
        total += c->rq.fields[i].name_len + 1;
    c->names_buf = malloc(total > 0 ? total : 1);
    if (c->names_buf == NULL)
        return -1;
    c->nnames = 0;
    for (size_t i = 0; i < c->rq.nfields && i < SWORN_FRAME_HEADERS_MAX; i++) {
        memcpy(c->names_buf + off, c->rq.fields[i].name, c->rq.fields[i].name_len);
        c->names_buf[off + c->rq.fields[i].name_len] = '\0';
        c->names[c->nnames++] = c->names_buf + off;
        off += c->rq.fields[i].name_len + 1;
    }
    return 0;
}

/* --- MCP (p_mcp.h): a request to an `mcp:` server is read as its JSON-RPC message. --- */

/*
 * When the canonical resource lies under an MCP server, read the request (method, Content-Type,
 * the one JSON-RPC message of the body) into c->mcp and decide it under that operation. Returns
 * 0 (go on: an MCP request read, or not an MCP request), or -1 when the request was refused
 * (recorded, p_refuse.h) or the connection ended.
 */
static int read_mcp(struct pconn *c, const uint8_t *body, size_t body_len)
{
    const char *why = NULL;
    int status = 400, r;

    if (!c->res_ok)
        return 0;
    if (c->upgrade) {
        /* A WebSocket to an MCP endpoint would be an undecided channel to its tools: MCP's
         * transport has none, so it is refused (the resource is ws/wss, the server http/https). */
        char scheme[sizeof(c->res.scheme)];
        int mcp;

        memcpy(scheme, c->res.scheme, sizeof(scheme));
        snprintf(c->res.scheme, sizeof(c->res.scheme), "%s",
                 strcmp(scheme, "wss") == 0 ? "https" : "http");
        mcp = sworn_pmcp_server(&c->px->conf->mcp, &c->res) != NULL;
        memcpy(c->res.scheme, scheme, sizeof(scheme));
        if (mcp) {
            c->operation = "mcp.rpc.refused";
            refuse(c, 405, "an MCP endpoint takes POST, GET and DELETE only (no WebSocket)",
                   c->head, c->head_len);
            return -1;
        }
        return 0;
    }
    if (sworn_pmcp_server(&c->px->conf->mcp, &c->res) == NULL)
        return 0;
    if (c->mcp == NULL && (c->mcp = malloc(sizeof(*c->mcp))) == NULL) {
        conn_abort(c);
        return -1;
    }
    r = sworn_pmcp_read(c->method, c->rq.fields, c->rq.nfields, body, body_len, c->has_body, c->mcp,
                        &status, &why);
    if (r < 0) {
        conn_abort(c);
        return -1;
    }
    if (r > 0) {
        c->operation = "mcp.rpc.refused";
        refuse(c, status, why, c->head, c->head_len);
        return -1;
    }
    c->is_mcp = 1;
    c->operation = c->mcp->operation;
    return 0;
}

/*
 * A denied JSON-RPC request is answered as JSON-RPC: 200 with an error response of the same id
 * (an MCP client surfaces it as the call's error, with the reason; a 403 would be a transport
 * failure to it). The data member is the proxy's deny body (request id, reason, log index).
 */
static void reply_mcp_deny(struct pconn *c)
{
    struct evbuffer *out = bufferevent_get_output(c->a);
    char *body = NULL;
    size_t len;

    if (sworn_pmcp_deny_body(c->mcp, c->id, c->reason, c->has_index, c->log_index, &body) != 0) {
        reply_json(c, 403, "deny", 1);
        conn_close_after_write(c);
        return;
    }
    len = strlen(body);
    evbuffer_add_printf(out,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                        "%zu\r\nCache-Control: no-store\r\n\r\n",
                        len + 1);
    evbuffer_add(out, body, len);
    evbuffer_add(out, "\n", 1);
    free(body);
    c->status = 200;
    c->effect = "deny";
    c->bytes_down += len + 1;
    sworn_pmetrics_request(&c->px->metrics, SWORN_PMETRICS_DENY, 200);
    log_request(c);
    next_request(c);
}

/* --- OAuth token endpoints, the request (docs/proxy.md, "OAuth token endpoints"). --- */

/* The request's one Content-Type field: 0 with *f (NULL: none), or 1 when it has two. */
static int content_type(const struct sworn_http_field *fields, size_t n,
                        const struct sworn_http_field **f)
{
    *f = NULL;
    for (size_t i = 0; i < n; i++)
        if (fields[i].name_len == 12 && strncasecmp(fields[i].name, "content-type", 12) == 0) {
            if (*f != NULL)
                return 1;
            *f = &fields[i];
        }
    return 0;
}

/*
 * A request to a token endpoint: its form body may present a symbolic token (a refresh token, a
 * client secret), as the value of a parameter, decoded (so "sym%5F..." is one too). Two
 * different tokens in the body, or one other than the head's, are refused as ambiguous; so is a
 * form body p_form.h refuses (two parameters of one name, ...). Returns 0, or -1 when the
 * request was refused.
 */
static int oauth_request(struct pconn *c, const uint8_t *body, size_t body_len)
{
    const struct sworn_http_field *ct = NULL;
    struct sworn_pform *f;
    const char *why = NULL;

    c->oauth_ep = c->res_ok && sworn_poauth_is_endpoint(&c->px->conf->oauth, &c->res);
    if (!c->oauth_ep)
        return 0;
    if (content_type(c->rq.fields, c->rq.nfields, &ct) != 0) {
        refuse(c, 400, "the request to a token endpoint has two Content-Type fields", c->head,
               c->head_len);
        return -1;
    }
    if (!c->has_body || ct == NULL || !sworn_pform_is_form_type(ct->value, ct->value_len))
        return 0;
    f = malloc(sizeof(*f));
    if (f == NULL) {
        conn_abort(c);
        return -1;
    }
    if (sworn_pform_parse(body, body_len, f, &why) != 0) {
        free(f);
        refuse(c, 400, why, c->head, c->head_len);
        return -1;
    }
    for (size_t i = 0; i < f->n; i++) {
        uint8_t v[SWORN_SYMTOK_MAX + 1], sha[32];
        long n = sworn_pform_value(body, &f->p[i], v, sizeof(v));

        if (n < 0 || !sworn_symtok_is(v, (size_t)n))
            continue;
        if (EVP_Digest(v, (size_t)n, sha, NULL, EVP_sha256(), NULL) != 1) {
            free(f);
            refuse(c, 502, "the symbolic token could not be hashed", c->head, c->head_len);
            return -1;
        }
        if ((c->body_tok && memcmp(sha, c->body_tok_sha, 32) != 0) ||
            (c->tok.nhits > 0 && memcmp(sha, c->tok.sha256, 32) != 0)) {
            free(f);
            refuse(c, 400, "the request presents two different symbolic tokens", c->head,
                   c->head_len);
            return -1;
        }
        memcpy(c->body_tok_sha, sha, 32);
        c->body_tok = 1;
    }
    free(f);
    return 0;
}

/*
 * A form credential (the vault's `form`, Credential.form_name) goes into the request's form body,
 * percent-encoded, in the place of the parameter of its name (or appended): the body upstream
 * then differs from the one decided on, whose digest the record holds. Returns 0, or -1 with
 * *why when the request has no form body to put it in.
 */
static int put_form_credential(struct pconn *c, const char **why)
{
    const struct sworn_http_field *ct = NULL;
    size_t len = evbuffer_get_length(c->body), out_len = 0;
    const uint8_t *body = len > 0 ? evbuffer_pullup(c->body, -1) : (const uint8_t *)"";
    struct sworn_pform *f;
    uint8_t *out;

    if (!c->has_body || content_type(c->rq.fields, c->rq.nfields, &ct) != 0 || ct == NULL ||
        !sworn_pform_is_form_type(ct->value, ct->value_len)) {
        *why = "the credential goes into a form body, and the request has none";
        return -1;
    }
    f = malloc(sizeof(*f));
    if (f == NULL || sworn_pform_parse(body, len, f, why) != 0) {
        free(f);
        *why = "the credential goes into a form body, and the request's is not one";
        return -1;
    }
    out = sworn_pform_rewrite(body, len, f, c->cred_form, c->cred, c->cred_len, &out_len);
    free(f);
    if (out == NULL) {
        *why = "out of memory";
        return -1;
    }
    evbuffer_drain(c->body, len);
    if (evbuffer_add(c->body, out, out_len) != 0) {
        sworn_memzero(out, out_len);
        free(out);
        *why = "out of memory";
        return -1;
    }
    sworn_memzero(out, out_len);
    free(out);
    return 0;
}

/*
 * A model call (p_model.h): operation "model.call", and its body read. 0, or -1 when the request
 * was refused (recorded, p_refuse.h) or the connection ended.
 */
static int model_call(struct pconn *c, const uint8_t *body, size_t body_len)
{
    const char *why = NULL;
    int r;

    c->model_api =
        sworn_pmodel_classify(&c->px->conf->models, c->method, c->res_ok ? &c->res : NULL);
    if (c->model_api == SWORN_PMODEL_NONE)
        return 0;
    c->operation = SWORN_PMODEL_OPERATION;
    r = sworn_pmodel_read_request(
        c->model_api, body, body_len,
        sworn_http_field_find(c->rq.fields, c->rq.nfields, "content-encoding") != NULL, &c->mreq,
        &why);
    if (r > 0) {
        refuse(c, 400, why, c->head, c->head_len);
        return -1;
    }
    if (r < 0) {
        conn_abort(c);
        return -1;
    }
    return 0;
}

/*
 * The usage report an allowed model call owes (p_usage.h), once: complete is 1 when its response
 * ended where its framing says. Sent on the proxy's own link to decisiond.
 */
static void model_report(struct pconn *c, int complete)
{
    Sworn__V1__UsageReport u = SWORN__V1__USAGE_REPORT__INIT;
    char id[64];
    uint64_t in = 0, out = 0;
    const char *missing = NULL;

    if (!c->model_allowed)
        return;
    c->model_allowed = 0;
    if (!c->musage_on) /* no response head came: nothing was read */
        sworn_pmusage_init(&c->musage, c->model_api, NULL, 0, NULL, 0);
    c->musage_on = 0;
    u.reported = sworn_pmusage_finish(&c->musage, complete, &in, &out, &missing);
    sworn_proxy_next_id(c->px, id);
    u.request_id = id;
    u.allow_request_id = c->id;
    u.allow_log_index = c->log_index;
    u.input_tokens = in;
    u.output_tokens = out;
    u.missing = u.reported ? (char *)"" : (char *)missing;
    if (c->px->usage == NULL)
        c->px->usage = sworn_pusage_new(c->px->base, c->px->conf->decision_socket);
    if (c->px->usage != NULL)
        (void)sworn_pusage_send(c->px->usage, &u); /* a failure is logged there; the
                                                      reservation stands */
}

static void ask(struct pconn *c)
{
    struct sworn_pbuild_in in = {0};
    const uint8_t *values[SWORN_HTTP_FIELDS_MAX];
    size_t lens[SWORN_HTTP_FIELDS_MAX];
    const char *q = strchr(c->path, '?');
    const char *why = NULL;
    int has_del = 0;
    size_t body_len = evbuffer_get_length(c->body);
    const uint8_t *body = body_len > 0 ? evbuffer_pullup(c->body, -1) : NULL;
    int r;

    /* Reading goes on while the request is decided (the next request waits in the buffer: the
       read callback does nothing outside HEAD, BODY, PEEK and SPLICE), so that an agent that goes
       away while its request is held is seen (on_a_event) and its request dropped: an allow that
       comes after it must not be forwarded for no one. */
    c->ph = PH_DECIDE;
    if (c->id[0] == '\0')
        sworn_proxy_next_id(c->px, c->id);
    for (size_t i = 0; i < c->rq.nfields; i++) {
        values[i] = (const uint8_t *)c->rq.fields[i].value;
        lens[i] = c->rq.fields[i].value_len;
    }
    if (sworn_symtok_scan(values, lens, c->rq.nfields, q != NULL ? (const uint8_t *)q + 1 : NULL,
                          q != NULL ? strlen(q + 1) : 0, &c->tok) != 0) {
        refuse(c, 502, "the symbolic token could not be hashed", c->head, c->head_len);
        return;
    }
    if (c->tok.distinct > 1) {
        refuse(c, 400, "the request presents two different symbolic tokens", c->head, c->head_len);
        return;
    }
    if (oauth_request(c, body, body_len) != 0)
        return;
    if (c->px->conf->delegation_header[0] != '\0') {
        const struct sworn_http_field *f =
            sworn_http_field_find(c->rq.fields, c->rq.nfields, c->px->conf->delegation_header);

        if (f != NULL) {
            const char *jwhy = NULL;
            struct sworn_jwt_verifier ver = {c->px->delegation_key, c->px->delegation_key_id,
                                             c->px->delegation_jwks};
            int jr = sworn_jwt_read_with(f->value, f->value_len, &ver, time(NULL), &c->del, &jwhy);

            if (jr != 0) {
                refuse(c, jr > 0 ? 400 : 502,
                       jr > 0 ? jwhy : "the delegation token could not be read", c->head,
                       c->head_len);
                return;
            }
            has_del = 1;
        }
    }
    if (collect_names(c) != 0) {
        conn_abort(c);
        return;
    }
    if (read_mcp(c, body, body_len) != 0)
        return;
    if (!c->is_mcp && model_call(c, body, body_len) != 0)
        return;
    in.request_id = c->id;
    in.principal = c->l->conf->principal;
    in.sandbox = c->sandbox;
    in.uid = c->uid;
    in.sandbox_start_index = c->sandbox_start_index;
    in.operation = c->operation;
    in.scheme = c->scheme;
    in.host = c->host;
    in.port = c->port;
    in.path = c->path;
    in.method = c->method;
    in.canonical = c->res_ok ? &c->res : NULL;
    in.header_names = c->names;
    in.nheader_names = c->nnames;
    in.body = body;
    in.body_len = body_len;
    in.has_body = c->has_body;
    in.token_sha256 = c->tok.nhits > 0 ? c->tok.sha256 : c->body_tok ? c->body_tok_sha : NULL;
    in.delegation = has_del ? &c->del : NULL;
    in.time_unix_ms = wall_ms();
    if (c->is_mcp) {
        in.tool = c->mcp->tool;
        in.uri = c->mcp->uri;
        in.numbers = c->mcp->numbers;
        in.nnumbers = c->mcp->nnumbers;
        in.mcp_session_sha256 = c->mcp->has_session ? c->mcp->session_sha256 : NULL;
    }
    r = sworn_pbuild_request(&c->build, &in, &why);
    if (r == 0 && c->model_api != SWORN_PMODEL_NONE)
        sworn_pmodel_fill(&c->mreq, &c->build.req);
    if (r > 0) {
        refuse(c, 431, why, c->head, c->head_len);
        return;
    }
    if (r == 0 && sworn_pdecide_ask(&c->dec, &c->build.req, on_decision, c) != 0 &&
        sworn_err_code() != SWORN_ERR_NOMEM) {
        /* The message is over the wire's bounds (the header names, the target): recorded as a
         * refusal, which carries neither. */
        refuse(c, 431, "the request is too large to be recorded", c->head, c->head_len);
        return;
    }
    if (r < 0 || sworn_pdecide_busy(&c->dec) == 0) {
        snprintf(c->reason, sizeof(c->reason), "the request could not be sent to decisiond");
        reply_json(c, 502, "error", 1);
        conn_close_after_write(c);
        return;
    }
}

static void start_upstream(struct pconn *c);

static int take_credential(struct pconn *c, const Sworn__V1__Credential *cr)
{
    if (cr == NULL)
        return 0;
    c->cred = malloc(cr->value.len);
    if (c->cred == NULL)
        return -1;
    memcpy(c->cred, cr->value.data, cr->value.len);
    c->cred_len = cr->value.len;
    snprintf(c->cred_header, sizeof(c->cred_header), "%s", cr->header_name);
    snprintf(c->cred_query, sizeof(c->cred_query), "%s", cr->query_name);
    snprintf(c->cred_form, sizeof(c->cred_form), "%s", cr->form_name);
    snprintf(c->cred_id, sizeof(c->cred_id), "%s", cr->id);
    c->has_cred = 1;
    return sworn_pmask_init(&c->mask, c->cred, c->cred_len);
}

static void upstream_failed(struct pconn *c, int status, const char *why);

/* For a signing destination, the header lines of decisiond's signature (p_sign.h); an allow that
 * cannot carry it is not sent (502). 0, or -1 when the request was answered. */
static int sign_upstream(struct pconn *c, const Sworn__V1__Decision *d)
{
    const char *why = NULL;

    c->signing = c->res_ok && sworn_psign_wants(&c->px->conf->signing, &c->res);
    c->sig_headers_len = 0;
    if (!c->signing)
        return 0;
    if (sworn_psign_headers(d, c->has_body ? c->build.body_sha : NULL,
                            c->has_cred && (c->cred_query[0] != '\0' || c->cred_form[0] != '\0'),
                            c->sig_headers, sizeof(c->sig_headers), &c->sig_headers_len,
                            &why) != 0) {
        upstream_failed(c, 502, why);
        return -1;
    }
    return 0;
}

static void on_decision_in(struct pconn *c, void *unused_arg, const struct sworn_pdecide_result *r)
{
    (void)unused_arg;

    c->ms_decide = r->seconds * 1000.0;
    sworn_pmetrics_decision_time(&c->px->metrics, r->seconds);
    if (r->outcome == SWORN_PDECIDE_FAILED) {
        sworn_pmetrics_decisiond_failure(&c->px->metrics, r->failure);
        snprintf(c->reason, sizeof(c->reason), "%s", r->why);
        /* An ErrorFrame is decisiond's recorded refusal; anything else is the proxy's 502. */
        reply_json(c, r->failure == SWORN_PMETRICS_ERROR_FRAME ? 403 : 502, "error", 0);
        if (c->tunnel_open && !c->in_tunnel) {
            conn_close_after_write(c);
            return;
        }
        next_request(c);
        return;
    }
    c->has_index = 1;
    c->log_index = r->decision->log_index;
    snprintf(c->reason, sizeof(c->reason), "%s", r->decision->reason);
    if (r->decision->effect != SWORN__V1__EFFECT__EFFECT_ALLOW) {
        if (c->tunnel_open && !c->in_tunnel) {
            /* A peeked tunnel that tcp.connect does not allow: nothing to answer in HTTP. */
            c->effect = "deny";
            c->status = 0;
            sworn_pmetrics_request(&c->px->metrics, SWORN_PMETRICS_DENY, 403);
            log_request(c);
            conn_abort(c);
            return;
        }
        if (c->is_mcp && c->mcp->kind == SWORN_PMCP_REQUEST) {
            reply_mcp_deny(c);
            return;
        }
        reply_json(c, 403, "deny", 0);
        next_request(c);
        return;
    }
    if (take_credential(c, r->decision->credential) != 0) {
        snprintf(c->reason, sizeof(c->reason), "out of memory");
        reply_json(c, 502, "error", 1);
        conn_close_after_write(c);
        return;
    }
    if (sign_upstream(c, r->decision) != 0)
        return;
    c->effect = "allow";
    c->model_allowed = c->model_api != SWORN_PMODEL_NONE;
    start_upstream(c);
}

static void on_decision(void *arg, const struct sworn_pdecide_result *r)
{
    struct pconn *c = conn_enter(arg);

    on_decision_in(c, arg, r);
    conn_leave(c);
}

/* --- Upstream. --- */

static void on_u_read(struct bufferevent *bev, void *arg);
static void on_u_write(struct bufferevent *bev, void *arg);
static void on_u_event(struct bufferevent *bev, short what, void *arg);

static void upstream_failed(struct pconn *c, int status, const char *why)
{
    free_upstream(c);
    snprintf(c->reason, sizeof(c->reason), "%s", why);
    if (c->agent_gone) { /* no one to answer; the report says the response did not end */
        conn_abort(c);
        return;
    }
    if (c->tunnel_open && !c->in_tunnel) {
        c->status = 0;
        c->effect = "error";
        sworn_pmetrics_request(&c->px->metrics, SWORN_PMETRICS_ERROR, status);
        log_request(c);
        conn_abort(c);
        return;
    }
    reply_json(c, status, "error", 1);
    conn_close_after_write(c);
}

/*
 * The request line's target for upstream: the canonical path and query that the policy decided
 * on (docs/policy.md 2.0: what upstream gets is the form that was judged, never the agent's
 * spelling), with the credential's query parameter.
 */
static int write_target(struct pconn *c, struct evbuffer *out)
{
    const char *path = c->res.path;
    const char *q = strchr(path, '?');
    size_t plen = q != NULL ? (size_t)(q - path) : strlen(path);
    int first = 1;

    if (!c->has_cred || c->cred_query[0] == '\0')
        return evbuffer_add(out, path, strlen(path));
    for (size_t i = 0; i < c->cred_len; i++) {
        uint8_t b = c->cred[i];

        /* A value that would end the target or the parameter cannot go into a query. */
        if (b <= 0x20 || b >= 0x7f || b == '#' || b == '&')
            return -2;
    }
    evbuffer_add(out, path, plen);
    if (q != NULL) {
        const char *s = q + 1;

        while (*s != '\0') {
            const char *e = strchr(s, '&');
            size_t n = e != NULL ? (size_t)(e - s) : strlen(s);
            size_t qn = strlen(c->cred_query);
            int same = n >= qn && strncmp(s, c->cred_query, qn) == 0 && (n == qn || s[qn] == '=');

            if (!same) {
                evbuffer_add(out, first ? "?" : "&", 1);
                evbuffer_add(out, s, n);
                first = 0;
            }
            s += n;
            if (*s == '&')
                s++;
        }
    }
    evbuffer_add(out, first ? "?" : "&", 1);
    evbuffer_add(out, c->cred_query, strlen(c->cred_query));
    evbuffer_add(out, "=", 1);
    evbuffer_add(out, c->cred, c->cred_len);
    return 0;
}

/*
 * Does a field name read as name (lower case, '-') for a server that folds case and reads '_'
 * as '-' (CGI, WSGI, PHP and Rack all map both to HTTP_NAME)?
 */
static int name_reads_as(const char *n, size_t len, const char *name)
{
    size_t i;

    for (i = 0; i < len && name[i] != '\0'; i++) {
        char a = n[i] == '_' ? '-' : n[i];

        if (a >= 'A' && a <= 'Z')
            a = (char)(a - 'A' + 'a');
        if (a != name[i])
            return 0;
    }
    return i == len && name[i] == '\0';
}

/*
 * Fields that, with a credential in flight, would let the response carry it in a form the mask
 * cannot see: a compressed body, a piece of it, a compressed WebSocket.
 */
static const char *const encoding_fields[] = {"accept-encoding", "range", "if-range",
                                              "sec-websocket-extensions", NULL};

/* Is this request field one that must not go upstream as the agent sent it? */
static int field_dropped(struct pconn *c, const struct sworn_http_field *f)
{
    if (sworn_http_hop_by_hop(f->name, f->name_len) ||
        sworn_http_connection_lists(c->rq.fields, c->rq.nfields, f->name, f->name_len))
        return 1;
    if (name_reads_as(f->name, f->name_len, "host") ||
        name_reads_as(f->name, f->name_len, "content-length") ||
        name_reads_as(f->name, f->name_len, "sworn-log-index") ||
        name_reads_as(f->name, f->name_len, "expect"))
        return 1;
    if (sworn_psign_field_dropped(f->name, f->name_len, c->signing))
        return 1;
    if (c->px->conf->delegation_header[0] != '\0' &&
        name_reads_as(f->name, f->name_len, c->px->conf->delegation_header))
        return 1;
    if (c->has_cred && c->cred_header[0] != '\0' &&
        name_reads_as(f->name, f->name_len, c->cred_header))
        return 1;
    /* A model call's usage is read from the body as relayed: never compressed, never a range
     * of it (the agent would choose what the usage reader cannot read). */
    for (size_t i = 0;
         (c->has_cred || c->model_api != SWORN_PMODEL_NONE) && encoding_fields[i] != NULL; i++)
        if (name_reads_as(f->name, f->name_len, encoding_fields[i]))
            return 1;
    return 0;
}

static unsigned default_port(const char *scheme)
{
    return strcmp(scheme, "https") == 0 || strcmp(scheme, "wss") == 0 ? 443 : 80;
}

static void send_request(struct pconn *c)
{
    struct evbuffer *out = bufferevent_get_output(c->u);
    size_t before = evbuffer_get_length(out);
    const char *why = NULL;
    int rc;

    /* A refresh token (the place a minted one has: form refresh_token) goes to a token endpoint
     * only (RFC 6749 6, 10.4). It inherits the destinations of the client credential it came
     * from, which list the APIs its access token is for: without this an agent could have the
     * real refresh token put into a form body sent to a resource server (red team rt-A). */
    if (c->has_cred && strcmp(c->cred_form, "refresh_token") == 0 && c->px->conf->oauth.n > 0 &&
        !c->oauth_ep) {
        upstream_failed(c, 502,
                        "a refresh token goes to a token endpoint only "
                        "(oauth.token_endpoints)");
        return;
    }
    if (c->has_cred && c->cred_form[0] != '\0' && put_form_credential(c, &why) != 0) {
        upstream_failed(c, 502, why);
        return;
    }
    evbuffer_add(out, c->method, strlen(c->method));
    evbuffer_add(out, " ", 1);
    rc = write_target(c, out);
    if (rc != 0) {
        evbuffer_drain(out, evbuffer_get_length(out));
        upstream_failed(c, 502, "the credential cannot be put in a query");
        return;
    }
    /* Host: the canonical authority (the parser checked the agent's Host names the target). */
    evbuffer_add_printf(out, " HTTP/1.1\r\nHost: ");
    if (c->res.port == default_port(c->res.scheme))
        evbuffer_add_printf(out, "%s", c->res.host);
    else
        evbuffer_add_printf(out, "%s:%u", c->res.host, (unsigned)c->res.port);
    evbuffer_add(out, "\r\n", 2);
    for (size_t i = 0; i < c->rq.nfields; i++) {
        const struct sworn_http_field *f = &c->rq.fields[i];

        if (field_dropped(c, f))
            continue;
        evbuffer_add(out, f->name, f->name_len);
        evbuffer_add(out, ": ", 2);
        evbuffer_add(out, f->value, f->value_len);
        evbuffer_add(out, "\r\n", 2);
    }
    if (c->upgrade)
        evbuffer_add_printf(out, "Connection: Upgrade\r\nUpgrade: websocket\r\n");
    if ((c->has_cred || c->model_api != SWORN_PMODEL_NONE) && !c->upgrade)
        evbuffer_add_printf(out, "Accept-Encoding: identity\r\n");
    if (c->has_cred && c->cred_header[0] != '\0') {
        evbuffer_add(out, c->cred_header, strlen(c->cred_header));
        evbuffer_add(out, ": ", 2);
        evbuffer_add(out, c->cred, c->cred_len);
        evbuffer_add(out, "\r\n", 2);
    }
    evbuffer_add_printf(out, "sworn-log-index: %llu\r\n", (unsigned long long)c->log_index);
    if (c->signing)
        evbuffer_add(out, c->sig_headers, c->sig_headers_len);
    if (c->has_body)
        evbuffer_add_printf(out, "Content-Length: %zu\r\n", evbuffer_get_length(c->body));
    evbuffer_add(out, "\r\n", 2);
    if (c->has_body)
        evbuffer_add_buffer(out, c->body);
    c->bytes_up += evbuffer_get_length(out) - before;
    sworn_pmetrics_bytes(&c->px->metrics, evbuffer_get_length(out) - before, 0);
    /* The real value is in the output buffer now; the copy kept is for masking only. */
    c->ph = PH_RESPONSE_HEAD;
    c->t_upstream = now_s();
    {
        struct timeval tv = {(time_t)(c->px->conf->upstream_timeout_ms / 1000),
                             (suseconds_t)(c->px->conf->upstream_timeout_ms % 1000) * 1000};

        bufferevent_set_timeouts(c->u, &tv, NULL);
    }
    bufferevent_setcb(c->u, on_u_read, on_u_write, on_u_event, c);
    bufferevent_enable(c->u, EV_READ | EV_WRITE);
}

static void start_splice(struct pconn *c)
{
    c->ph = PH_SPLICE;
    bufferevent_set_timeouts(c->u, NULL, NULL);
    bufferevent_setcb(c->u, on_u_read, on_u_write, on_u_event, c);
    bufferevent_enable(c->u, EV_READ | EV_WRITE);
    bufferevent_enable(c->a, EV_READ | EV_WRITE);
    splice_move(c, c->a, c->u, 0);
    splice_move(c, c->u, c->a, 1);
}

static void on_upstream_in(struct pconn *c, void *unused_arg, struct bufferevent *bev,
                           enum sworn_pup_failure f, const char *why)
{
    (void)unused_arg;

    sworn_pup_cancel(&c->pup);
    if (f != SWORN_PUP_OK) {
        char text[200];

        snprintf(text, sizeof(text), "upstream %s: %s", sworn_pup_failure_name(f), why);
        upstream_failed(c, 502, text);
        return;
    }
    c->u = bev;
    if (strcmp(c->operation, "tcp.connect") == 0) {
        sworn_pmetrics_tunnel(&c->px->metrics, SWORN_PMETRICS_TCP);
        if (c->raw_connect)
            evbuffer_add_printf(bufferevent_get_output(c->a),
                                "HTTP/1.1 200 Connection established\r\n\r\n");
        c->status = 200;
        sworn_pmetrics_request(&c->px->metrics, SWORN_PMETRICS_ALLOW, 200);
        log_request(c);
        start_splice(c);
        return;
    }
    send_request(c);
}

static void on_upstream(void *arg, struct bufferevent *bev, enum sworn_pup_failure f,
                        const char *why)
{
    struct pconn *c = conn_enter(arg);

    on_upstream_in(c, arg, bev, f, why);
    conn_leave(c);
}

static void start_upstream(struct pconn *c)
{
    int tls = strcmp(c->res.scheme, "https") == 0 || strcmp(c->res.scheme, "wss") == 0;
    char key[sizeof(c->up_key)];

    c->ph = PH_UPSTREAM;
    snprintf(key, sizeof(key), "%s://%s:%u", tls ? "tls" : "tcp", c->res.host,
             (unsigned)c->res.port);
    /* An MCP request is an HTTP request too (its operation names what it calls). */
    if (c->u != NULL && c->up_reusable && !c->has_cred && strcmp(key, c->up_key) == 0 &&
        (strcmp(c->operation, "http.request") == 0 || c->is_mcp)) {
        send_request(c);
        return;
    }
    free_upstream(c);
    snprintf(c->up_key, sizeof(c->up_key), "%s", key);
    if (sworn_pup_start(&c->pup, c->px, &c->res, tls, on_upstream, c) != 0)
        upstream_failed(c, 502, "the upstream connection cannot be started");
}

/* --- The response. --- */

/* --- OAuth token endpoints, the response (docs/proxy.md, "OAuth token endpoints"). --- */

static void write_response_head(struct pconn *c, const uint8_t *p);
static int pass_body(struct pconn *c, const uint8_t *p, size_t n, int final);
static void response_done(struct pconn *c);

/*
 * A token endpoint's response head: refused (502) when p_oauth.h refuses it (a cookie, a token
 * named in a field, no length); else its body is held whole (oauth_hold) and the head kept for
 * later. Returns 0, or -1 when the response was refused.
 */
static int oauth_hold_response(struct pconn *c, const uint8_t *p)
{
    const char *why = NULL;

    if (c->rs.framing == SWORN_HTTP_NO_BODY) {
        if (!(c->has_cred && c->rs.status == 200))
            return 0;
        upstream_failed(c, 502, "the token endpoint's 200 answer has no body");
        return -1;
    }
    if (sworn_poauth_head_refused(&c->rs, NULL, &why) != 0) {
        upstream_failed(c, 502, why);
        return -1;
    }
    if (c->oauth_body == NULL)
        c->oauth_body = evbuffer_new();
    c->oauth_head = malloc(c->rs.head_len);
    if (c->oauth_body == NULL || c->oauth_head == NULL) {
        upstream_failed(c, 502, "out of memory");
        return -1;
    }
    memcpy(c->oauth_head, p, c->rs.head_len);
    c->oauth_hold = 1;
    return 0;
}

/* The agent gets nothing of the answer: the tokens are forgotten, the agent gets 502. */
static void oauth_fail(struct pconn *c, const char *why)
{
    char text[SWORN_FRAME_TEXT_MAX + 1];

    snprintf(text, sizeof(text), "%s", why);
    oauth_reset(c);
    upstream_failed(c, 502, text);
}

/* Send the agent the held response head (Content-Length: len) and body[0..len), then go on. */
static void oauth_deliver(struct pconn *c, const uint8_t *body, size_t len)
{
    c->oauth_cl_set = 1;
    c->oauth_cl = len;
    write_response_head(c, c->oauth_head);
    if (pass_body(c, body, len, 1) != 0) {
        oauth_reset(c);
        conn_abort(c);
        return;
    }
    oauth_reset(c);
    response_done(c);
}

static void on_exchange(void *arg, const struct sworn_pdecide_result *r);

/* The held body is whole: read the tokens and ask decisiond to exchange them, or check it. */
static void oauth_finish(struct pconn *c)
{
    size_t len = evbuffer_get_length(c->oauth_body);
    const uint8_t *body = len > 0 ? evbuffer_pullup(c->oauth_body, -1) : (const uint8_t *)"";
    struct sworn_http_limits lim = {RESPONSE_HEAD_MAX, SWORN_HTTP_FIELDS_MAX};
    const struct sworn_http_field *ct = NULL;
    const char *why = NULL;
    Sworn__V1__TokenExchange ex = SWORN__V1__TOKEN_EXCHANGE__INIT;
    Sworn__V1__TokenValue tv[2], *tvp[2];
    uint8_t *bearer = NULL;
    size_t bearer_len;
    int r;

    c->oauth_hold = 0;
    if (c->oauth_over) {
        oauth_fail(c, "the token endpoint's answer is longer than oauth.response_max");
        return;
    }
    /* c->rs pointed into the upstream's buffer, drained since: read the copy again (it parsed
     * once, so it parses the same). */
    if (sworn_http_parse_response(c->oauth_head, c->rs.head_len, &lim,
                                  strcmp(c->method, "HEAD") == 0, &c->rs, &why) != 0) {
        oauth_fail(c, "the token endpoint's answer head cannot be read again");
        return;
    }
    if (content_type(c->rs.fields, c->rs.nfields, &ct) != 0) {
        oauth_fail(c, "the token endpoint's answer has two Content-Type fields");
        return;
    }
    if (!(c->has_cred && c->rs.status == 200)) {
        r = sworn_poauth_untouched_ok(body, len, &why);
        if (r != 0) {
            oauth_fail(c, r > 0 ? why : "out of memory");
            return;
        }
        oauth_deliver(c, body, len);
        return;
    }
    r = sworn_poauth_read(body, len, ct != NULL ? ct->value : NULL, ct != NULL ? ct->value_len : 0,
                          &c->otok, &why);
    if (r == 0 && sworn_poauth_head_refused(&c->rs, &c->otok, &why) != 0)
        r = 1;
    if (r != 0) {
        oauth_fail(c, r > 0 ? why : "out of memory");
        return;
    }
    /* The access token is stored as it is to be sent: "Bearer <token>" (RFC 6750 2.1). */
    bearer_len = 7 + c->otok.access_len;
    bearer = malloc(bearer_len);
    if (bearer == NULL) {
        oauth_fail(c, "out of memory");
        return;
    }
    memcpy(bearer, "Bearer ", 7);
    memcpy(bearer + 7, c->otok.access, c->otok.access_len);
    sworn__v1__token_value__init(&tv[0]);
    tv[0].field = "access_token";
    tv[0].value.data = bearer;
    tv[0].value.len = bearer_len;
    tvp[0] = &tv[0];
    sworn__v1__token_value__init(&tv[1]);
    tv[1].field = "refresh_token";
    tv[1].value.data = c->otok.refresh;
    tv[1].value.len = c->otok.refresh_len;
    tvp[1] = &tv[1];
    sworn_proxy_next_id(c->px, c->oauth_xid);
    ex.request_id = c->oauth_xid;
    ex.allow_request_id = c->id;
    ex.credential_id = c->cred_id;
    ex.tokens = tvp;
    ex.n_tokens = c->otok.refresh != NULL ? 2 : 1;
    /* The upstream is done with (a connection that carried a credential is never reused). */
    free_upstream(c);
    c->ph = PH_DECIDE;
    r = sworn_pdecide_exchange(&c->dec, &ex, on_exchange, c);
    sworn_memzero(bearer, bearer_len);
    free(bearer);
    if (r != 0)
        oauth_fail(c, "the token exchange could not be sent to decisiond");
}

static void on_exchange_in(struct pconn *c, void *unused_arg, const struct sworn_pdecide_result *r)
{
    const char *why = NULL, *sa = NULL, *sr = NULL;
    size_t len, out_len = 0;
    uint8_t *out = NULL;
    int rc;

    (void)unused_arg;
    if (r->outcome != SWORN_PDECIDE_ANSWER) {
        char text[200];

        snprintf(text, sizeof(text), "the token exchange failed: %s", r->why);
        oauth_fail(c, text);
        return;
    }
    for (size_t i = 0; i < r->exchange->n_tokens; i++) {
        if (strcmp(r->exchange->tokens[i]->field, "access_token") == 0)
            sa = r->exchange->tokens[i]->symbolic;
        else if (strcmp(r->exchange->tokens[i]->field, "refresh_token") == 0)
            sr = r->exchange->tokens[i]->symbolic;
    }
    len = evbuffer_get_length(c->oauth_body);
    rc = sa == NULL || !sworn_symtok_is((const uint8_t *)sa, strlen(sa)) ||
                 (sr != NULL && !sworn_symtok_is((const uint8_t *)sr, strlen(sr)))
             ? 1
             : sworn_poauth_swap(evbuffer_pullup(c->oauth_body, -1), len, &c->otok, sa, sr, &out,
                                 &out_len, &why);
    if (rc != 0) {
        oauth_fail(c,
                   rc > 0 && why != NULL ? why : "the minted tokens cannot be put in the answer");
        return;
    }
    {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "request_id", json_object_new_string(c->id));
        json_object_object_add(o, "exchange_id", json_object_new_string(c->oauth_xid));
        json_object_object_add(o, "log_index",
                               json_object_new_int64((int64_t)r->exchange->log_index));
        sworn_plog(SWORN_PLOG_INFO, "tokens_exchanged", o);
    }
    oauth_deliver(c, out, out_len);
    sworn_memzero(out, out_len);
    free(out);
}

static void on_exchange(void *arg, const struct sworn_pdecide_result *r)
{
    struct pconn *c = conn_enter(arg);

    on_exchange_in(c, arg, r);
    conn_leave(c);
}

static void oauth_finish(struct pconn *c);

static void response_done(struct pconn *c)
{
    if (c->musage_on && !c->agent_gone)
        bufferevent_set_timeouts(c->a, NULL, NULL); /* the model call's write bound ends */
    model_report(c, 1);
    if (c->agent_gone) { /* the usage is reported: nothing more to read, no one to answer */
        free_upstream(c);
        conn_abort(c);
        return;
    }
    if (c->oauth_hold) {
        /* A token endpoint's body is whole: swapped or checked, then sent (oauth_deliver). */
        oauth_finish(c);
        return;
    }
    if (c->flush_timer != NULL)
        evtimer_del(c->flush_timer);
    sworn_pmask_flush(&c->mask, bufferevent_get_output(c->a));
    if (c->mask.masked > 0) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "request_id", json_object_new_string(c->id));
        json_object_object_add(o, "occurrences", json_object_new_int64((int64_t)c->mask.masked));
        sworn_plog(SWORN_PLOG_WARN, "credential_masked", o);
    }
    sworn_pmetrics_request(&c->px->metrics, SWORN_PMETRICS_ALLOW, c->status);
    log_request(c);
    /* Not used again: a connection that carried a credential (an upstream that binds
     * authentication to the connection, NTLM or Negotiate, would run the next request with it),
     * or one with bytes after the response's end (no one's answer: kept, they would be read as
     * the response to the next request sent on it). */
    c->up_reusable = !c->rs.connection_close && c->rs.framing != SWORN_HTTP_UNTIL_CLOSE &&
                     !c->has_cred && c->u != NULL &&
                     evbuffer_get_length(bufferevent_get_input(c->u)) == 0;
    if (!c->up_reusable)
        free_upstream(c);
    else
        bufferevent_set_timeouts(c->u, NULL, NULL);
    next_request(c);
}

static void write_response_head(struct pconn *c, const uint8_t *p)
{
    struct evbuffer *out = c->tmp;
    const struct sworn_http_response *s = &c->rs;
    size_t n;
    uint8_t *flat;

    (void)p;
    if (c->agent_gone)
        return;
    evbuffer_drain(out, evbuffer_get_length(out));
    evbuffer_add_printf(out, "HTTP/1.1 %u ", s->status);
    evbuffer_add(out, s->reason, s->reason_len);
    evbuffer_add(out, "\r\n", 2);
    for (size_t i = 0; i < s->nfields; i++) {
        const struct sworn_http_field *f = &s->fields[i];

        if (sworn_http_hop_by_hop(f->name, f->name_len) ||
            sworn_http_connection_lists(s->fields, s->nfields, f->name, f->name_len))
            continue;
        if (f->name_len == 14 && strncasecmp(f->name, "content-length", 14) == 0 &&
            (s->framing != SWORN_HTTP_LENGTH || c->oauth_cl_set))
            continue;
        evbuffer_add(out, f->name, f->name_len);
        evbuffer_add(out, ": ", 2);
        evbuffer_add(out, f->value, f->value_len);
        evbuffer_add(out, "\r\n", 2);
    }
    if (c->oauth_cl_set)
        evbuffer_add_printf(out, "Content-Length: %zu\r\n", c->oauth_cl);
    if (s->status == 101)
        evbuffer_add_printf(out, "Connection: Upgrade\r\nUpgrade: websocket\r\n");
    else if (c->resp_chunked_out)
        evbuffer_add_printf(out, "Transfer-Encoding: chunked\r\n");
    if (c->close_after && s->status != 101)
        evbuffer_add_printf(out, "Connection: close\r\n");
    evbuffer_add(out, "\r\n", 2);
    n = evbuffer_get_length(out);
    flat = evbuffer_pullup(out, -1);
    sworn_pmask_inplace(&c->mask, flat, n); /* counted in c->mask.masked */
    c->bytes_down += n;
    bufferevent_write_buffer(c->a, out);
}

/* Does field value v (a comma-separated list) hold token, ASCII case aside? */
static int value_lists(const char *v, size_t n, const char *token)
{
    size_t t = strlen(token), i = 0;

    while (i < n) {
        size_t start, end;

        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        start = i;
        while (i < n && v[i] != ',')
            i++;
        end = i;
        while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
            end--;
        if (end - start == t && strncasecmp(v + start, token, t) == 0)
            return 1;
    }
    return 0;
}

/*
 * Is a 101 the WebSocket handshake it answers (RFC 6455 4.2.2: Upgrade websocket, Connection
 * upgrade, Sec-WebSocket-Accept = base64(SHA-1(key + GUID)))? A bare 101 would turn the
 * connection into an undecided tunnel where a second request could be sent.
 */
static int websocket_accepted(struct pconn *c)
{
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    const struct sworn_http_field *key =
        sworn_http_field_find(c->rq.fields, c->rq.nfields, "sec-websocket-key");
    const struct sworn_http_field *up =
        sworn_http_field_find(c->rs.fields, c->rs.nfields, "upgrade");
    const struct sworn_http_field *acc =
        sworn_http_field_find(c->rs.fields, c->rs.nfields, "sec-websocket-accept");
    uint8_t sha[20];
    char text[128], b64[40];
    EVP_MD_CTX *md;
    long n;
    int ok;

    if (key == NULL || up == NULL || acc == NULL ||
        !value_lists(up->value, up->value_len, "websocket"))
        return 0;
    ok = 0;
    for (size_t i = 0; i < c->rs.nfields; i++)
        if (c->rs.fields[i].name_len == 10 &&
            strncasecmp(c->rs.fields[i].name, "connection", 10) == 0 &&
            value_lists(c->rs.fields[i].value, c->rs.fields[i].value_len, "upgrade"))
            ok = 1;
    if (!ok || key->value_len > sizeof(text) - sizeof(guid))
        return 0;
    memcpy(text, key->value, key->value_len);
    memcpy(text + key->value_len, guid, sizeof(guid) - 1);
    md = EVP_MD_CTX_new();
    ok = md != NULL && EVP_DigestInit_ex(md, EVP_sha1(), NULL) == 1 &&
         EVP_DigestUpdate(md, text, key->value_len + sizeof(guid) - 1) == 1 &&
         EVP_DigestFinal_ex(md, sha, NULL) == 1;
    EVP_MD_CTX_free(md);
    if (!ok)
        return 0;
    n = sworn_base64_encode(sha, sizeof(sha), b64, sizeof(b64));
    return n > 0 && (size_t)n == acc->value_len && memcmp(b64, acc->value, (size_t)n) == 0;
}

/* A response head the proxy will not relay (a static sentence), or NULL. */
static const char *response_refused(struct pconn *c)
{
    const struct sworn_http_field *f;

    if (c->rs.status == 101 && !websocket_accepted(c))
        return "the upstream's 101 is not the WebSocket handshake asked for";
    if (!c->has_cred)
        return NULL;
    /* With the credential in flight the body must be one the mask reads: no coding, no piece,
     * no compressed WebSocket (the request asked for none: an upstream sending one anyway is
     * not relayed). */
    for (size_t i = 0; i < c->rs.nfields; i++) {
        f = &c->rs.fields[i];
        if (f->name_len == 16 && strncasecmp(f->name, "content-encoding", 16) == 0 &&
            !(f->value_len == 8 && strncasecmp(f->value, "identity", 8) == 0))
            return "the upstream's encoded response cannot be checked for the credential";
    }
    if (c->rs.status == 206 ||
        sworn_http_field_find(c->rs.fields, c->rs.nfields, "content-range") != NULL)
        return "the upstream's partial response cannot be checked for the credential";
    if (c->rs.status == 101 &&
        sworn_http_field_find(c->rs.fields, c->rs.nfields, "sec-websocket-extensions") != NULL)
        return "the upstream's WebSocket extensions cannot be checked for the credential";
    return NULL;
}

static void step_response_head(struct pconn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->u);
    struct sworn_http_limits lim = {RESPONSE_HEAD_MAX, SWORN_HTTP_FIELDS_MAX};

    for (;;) {
        size_t len = evbuffer_get_length(in), n;
        const uint8_t *p;
        const char *why = NULL;
        int r;

        if (len == 0)
            return;
        n = len < RESPONSE_HEAD_MAX ? len : RESPONSE_HEAD_MAX;
        p = evbuffer_pullup(in, (ev_ssize_t)n);
        r = sworn_http_parse_response(p, n, &lim, strcmp(c->method, "HEAD") == 0, &c->rs, &why);
        if (r == 1) {
            if (n >= RESPONSE_HEAD_MAX)
                upstream_failed(c, 502, "the upstream's response head is too large");
            return;
        }
        if (r < 0) {
            char text[200];

            snprintf(text, sizeof(text), "the upstream's response is refused: %s", why);
            upstream_failed(c, 502, text);
            return;
        }
        if (c->rs.status >= 100 && c->rs.status < 200 && c->rs.status != 101) {
            evbuffer_drain(in, c->rs.head_len); /* interim answers are not relayed */
            continue;
        }
        if (c->rs.status == 101 && !c->upgrade) {
            upstream_failed(c, 502, "the upstream switched protocols without an upgrade");
            return;
        }
        {
            const char *bad = response_refused(c);

            if (bad != NULL) {
                upstream_failed(c, 502, bad);
                return;
            }
        }
        if (c->oauth_ep && oauth_hold_response(c, p) != 0)
            return;
        c->status = (int)c->rs.status;
        sworn_pmetrics_upstream_time(&c->px->metrics, now_s() - c->t_upstream);
        c->close_after = c->rq.connection_close || c->rs.framing == SWORN_HTTP_UNTIL_CLOSE ||
                         (c->rs.framing == SWORN_HTTP_CHUNKED && c->rq.version_minor == 0);
        c->resp_chunked_out = c->rs.framing == SWORN_HTTP_CHUNKED && c->rq.version_minor == 1;
        if (c->model_allowed) {
            /* The usage reader reads the body as it passes (p_musage.h). */
            const struct sworn_http_field *ct =
                sworn_http_field_find(c->rs.fields, c->rs.nfields, "content-type");
            const struct sworn_http_field *ce =
                sworn_http_field_find(c->rs.fields, c->rs.nfields, "content-encoding");

            sworn_pmusage_init(&c->musage, c->model_api, ct != NULL ? ct->value : NULL,
                               ct != NULL ? ct->value_len : 0, ce != NULL ? ce->value : NULL,
                               ce != NULL ? ce->value_len : 0);
            sworn_pmusage_share(&c->musage, &c->px->usage_held);
            c->musage_on = 1;
            /* An agent that takes no byte of the answer for upstream.response_timeout counts as
             * gone (on_a_event: the rest is read for its usage): without this, one that stopped
             * reading held the usage back by backpressure for as long as it liked, past the
             * hour decisiond waits for a report (red team rt-A). */
            {
                struct timeval wtv = {(time_t)(c->px->conf->upstream_timeout_ms / 1000),
                                      (suseconds_t)(c->px->conf->upstream_timeout_ms % 1000) *
                                          1000};

                bufferevent_set_timeouts(c->a, NULL, &wtv);
            }
        }
        if (c->oauth_hold)
            c->resp_chunked_out = 0; /* the whole body is sent with its length */
        else
            write_response_head(c, p);
        evbuffer_drain(in, c->rs.head_len);
        if (c->rs.status == 101 && c->agent_gone) {
            conn_abort(c);
            return;
        }
        if (c->rs.status == 101) {
            sworn_pmetrics_websocket(&c->px->metrics);
            sworn_pmetrics_request(&c->px->metrics, SWORN_PMETRICS_ALLOW, 101);
            log_request(c);
            start_splice(c);
            return;
        }
        c->ph = PH_RESPONSE_BODY;
        switch (c->rs.framing) {
        case SWORN_HTTP_NO_BODY:
            response_done(c);
            return;
        case SWORN_HTTP_LENGTH:
            c->resp_remaining = c->rs.content_length;
            break;
        case SWORN_HTTP_CHUNKED:
            sworn_http_chunked_init(&c->rchunked, UINT64_MAX, 1);
            break;
        case SWORN_HTTP_UNTIL_CLOSE:
            break;
        }
        step_response_body(c);
        return;
    }
}

static void on_mask_flush(evutil_socket_t fd, short what, void *arg);

/* What the mask holds waits for more bytes, at most SWORN_PMASK_FLUSH_MS of upstream's silence
 * (a short message or an SSE event would otherwise stay stuck until upstream closes). */
static void mask_flush_later(struct pconn *c)
{
    struct timeval tv = {0, (suseconds_t)SWORN_PMASK_FLUSH_MS * 1000};

    if (sworn_pmask_pending(&c->mask) == 0) {
        if (c->flush_timer != NULL)
            evtimer_del(c->flush_timer);
        return;
    }
    if (c->flush_timer == NULL)
        c->flush_timer = evtimer_new(bufferevent_get_base(c->a), on_mask_flush, c);
    if (c->flush_timer != NULL)
        evtimer_add(c->flush_timer, &tv);
}

/* Pass body bytes through the mask to the agent, chunked again when the agent gets chunks.
 * final: 0 more comes, 1 the body ends, 2 flush what the mask holds (more may come). */
static int pass_body(struct pconn *c, const uint8_t *p, size_t n, int final)
{
    struct evbuffer *out = bufferevent_get_output(c->a);
    size_t before = evbuffer_get_length(c->tmp);

    if (c->musage_on && n > 0)
        (void)sworn_pmusage_feed(&c->musage, p, n); /* out of memory: "not reported", bytes pass */
    if (c->agent_gone)
        return 0; /* read for its usage only */
    if (c->oauth_hold) {
        /* Held whole for the swap, up to oauth.response_max; the rest is read and dropped. */
        if (c->oauth_over || n == 0)
            return 0;
        if (evbuffer_get_length(c->oauth_body) + n > c->px->conf->oauth.response_max) {
            c->oauth_over = 1;
            return 0;
        }
        return evbuffer_add(c->oauth_body, p, n);
    }
    evbuffer_drain(c->tmp, before);
    if (sworn_pmask_feed(&c->mask, p, n, c->tmp) != 0)
        return -1;
    if (final && sworn_pmask_flush(&c->mask, c->tmp) != 0)
        return -1;
    if (!final)
        mask_flush_later(c);
    n = evbuffer_get_length(c->tmp);
    c->bytes_down += n;
    sworn_pmetrics_bytes(&c->px->metrics, 0, n);
    if (c->resp_chunked_out && n > 0)
        evbuffer_add_printf(out, "%zx\r\n", n);
    evbuffer_add_buffer(out, c->tmp);
    if (c->resp_chunked_out && n > 0)
        evbuffer_add(out, "\r\n", 2);
    if (c->resp_chunked_out && final == 1)
        evbuffer_add(out, "0\r\n\r\n", 5);
    return 0;
}

static void backpressure(struct pconn *c, struct bufferevent *from, struct bufferevent *to)
{
    /* An agent who is gone writes nothing more: what it left unread stays in its output until
     * the connection is freed (a socket bufferevent's output cannot be drained from outside:
     * libevent freezes its start), and must not hold the upstream back. */
    if (c->agent_gone && to == c->a)
        return;
    if (evbuffer_get_length(bufferevent_get_output(to)) > OUTPUT_HIGH) {
        bufferevent_disable(from, EV_READ);
        bufferevent_setwatermark(to, EV_WRITE, OUTPUT_HIGH / 2, 0);
    }
}

static void step_response_body(struct pconn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->u);

    while (c->ph == PH_RESPONSE_BODY && evbuffer_get_length(in) > 0) {
        size_t n = evbuffer_get_contiguous_space(in);
        const uint8_t *p = evbuffer_pullup(in, (ev_ssize_t)n);

        if (c->rs.framing == SWORN_HTTP_LENGTH) {
            size_t take = n < c->resp_remaining ? n : (size_t)c->resp_remaining;
            int last = take == c->resp_remaining;

            if (pass_body(c, p, take, last) != 0) {
                conn_abort(c);
                return;
            }
            evbuffer_drain(in, take);
            c->resp_remaining -= take;
            if (last) {
                response_done(c);
                return;
            }
        } else if (c->rs.framing == SWORN_HTTP_CHUNKED) {
            const uint8_t *data = NULL;
            size_t data_len = 0;
            int status = 0;
            const char *why = NULL;
            long used =
                sworn_http_chunked_feed(&c->rchunked, p, n, &data, &data_len, &status, &why);

            if (used < 0 && c->oauth_hold) { /* nothing went out yet: 502, no token */
                c->oauth_hold = 0;
                oauth_fail(c, "the token endpoint's chunked answer is refused");
                return;
            }
            if (used < 0) {
                /* The head went out: the agent sees the body cut short. */
                snprintf(c->reason, sizeof(c->reason), "the upstream's chunked body is refused: %s",
                         why);
                c->close_after = 1;
                log_request(c);
                conn_abort(c);
                return;
            }
            if (pass_body(c, data, data_len, sworn_http_chunked_done(&c->rchunked)) != 0) {
                conn_abort(c);
                return;
            }
            evbuffer_drain(in, (size_t)used);
            if (sworn_http_chunked_done(&c->rchunked)) {
                response_done(c);
                return;
            }
            if (used == 0)
                break;
        } else {
            if (pass_body(c, p, n, 0) != 0) {
                conn_abort(c);
                return;
            }
            evbuffer_drain(in, n);
        }
    }
    if (c->ph == PH_RESPONSE_BODY && c->u != NULL)
        backpressure(c, c->u, c->a);
}

/* --- Splicing (tcp.connect, WebSocket after 101). --- */

static void splice_move(struct pconn *c, struct bufferevent *from, struct bufferevent *to, int mask)
{
    struct evbuffer *in = bufferevent_get_input(from);
    size_t n = evbuffer_get_length(in);

    if (n == 0)
        return;
    if (mask && sworn_pmask_active(&c->mask)) {
        uint8_t *p = evbuffer_pullup(in, -1);

        /* After a 101 with a credential the bytes are WebSocket frames: matched across the
         * payload of fragments and frames, the framing kept; a malformed stream ends it. */
        if (c->upgrade && c->has_cred && !c->mask.ws && sworn_pmask_websocket(&c->mask) != 0) {
            conn_abort(c);
            return;
        }
        evbuffer_drain(c->tmp, evbuffer_get_length(c->tmp));
        if (sworn_pmask_feed(&c->mask, p, n, c->tmp) != 0) {
            json_object *o = json_object_new_object();

            json_object_object_add(o, "request_id", json_object_new_string(c->id));
            json_object_object_add(o, "error", json_object_new_string(sworn_err_msg()));
            sworn_plog(SWORN_PLOG_WARN, "upstream_stream_refused", o);
            conn_abort(c);
            return;
        }
        evbuffer_drain(in, n);
        bufferevent_write_buffer(to, c->tmp);
        mask_flush_later(c);
    } else {
        bufferevent_write_buffer(to, in);
    }
    if (mask) {
        c->bytes_down += n;
        sworn_pmetrics_bytes(&c->px->metrics, 0, n);
    } else {
        c->bytes_up += n;
        sworn_pmetrics_bytes(&c->px->metrics, n, 0);
    }
    backpressure(c, from, to);
}

static void on_mask_flush_in(struct pconn *c)
{
    if (c->freeing || sworn_pmask_pending(&c->mask) == 0)
        return;
    /* Quiet means upstream sent nothing more, not that the agent reads slowly: while upstream's
     * bytes wait unread (backpressure), the rest of a value may be among them. */
    if (c->u != NULL && (evbuffer_get_length(bufferevent_get_input(c->u)) > 0 ||
                         !(bufferevent_get_enabled(c->u) & EV_READ))) {
        mask_flush_later(c);
        return;
    }
    if (c->ph == PH_RESPONSE_BODY) {
        if (pass_body(c, NULL, 0, 2) != 0)
            conn_abort(c);
    } else if (c->ph == PH_SPLICE) {
        if (sworn_pmask_flush(&c->mask, bufferevent_get_output(c->a)) != 0)
            conn_abort(c);
    }
}

static void on_mask_flush(evutil_socket_t fd, short what, void *arg)
{
    struct pconn *c = conn_enter(arg);

    (void)fd;
    (void)what;
    on_mask_flush_in(c);
    conn_leave(c);
}

/* One side of a splice ended: write what the other side is owed, then close. */
static void splice_end(struct pconn *c, struct bufferevent *ended)
{
    if (ended == c->u) {
        splice_move(c, c->u, c->a, 1);
        if (!c->freeing)
            sworn_pmask_flush(&c->mask, bufferevent_get_output(c->a));
        if (!c->freeing)
            conn_close_after_write(c);
        return;
    }
    conn_abort(c);
}

/* --- CONNECT. --- */

static int raw_port(const struct sworn_pconf *conf, uint16_t port)
{
    for (size_t i = 0; i < conf->nraw_ports; i++)
        if (conf->raw_ports[i] == port)
            return 1;
    return 0;
}

/* Decide the tunnel as raw TCP (a raw port, bytes that are not TLS, or silence). */
static void decide_tcp(struct pconn *c)
{
    evtimer_del(c->timer);
    c->operation = "tcp.connect";
    snprintf(c->scheme, sizeof(c->scheme), "tcp");
    snprintf(c->host, sizeof(c->host), "%s", c->tun_host);
    c->port = c->tun_port;
    c->path[0] = '\0';
    c->method[0] = '\0';
    c->has_body = 0;
    c->upgrade = 0;
    canonicalise(c);
    if (c->t0 <= 0)
        c->t0 = now_s();
    ask(c);
}

static void handle_connect(struct pconn *c)
{
    const struct sworn_http_request *q = &c->rq;
    const char *why = NULL;

    c->operation = "tcp.connect";
    snprintf(c->scheme, sizeof(c->scheme), "tcp");
    copy_span(c->host, sizeof(c->host), q->host, q->host_len);
    c->port = q->port;
    c->path[0] = '\0';
    if (q->host_len > SWORN_HTTP_HOST_MAX ||
        sworn_resource_canon_host(c->host, c->tun.host, &c->tun.host_kind, c->tun.addr, &why) !=
            0) {
        refuse(c, 400, why != NULL ? why : "the CONNECT host is too long", c->head, c->head_len);
        return;
    }
    snprintf(c->tun_host, sizeof(c->tun_host), "%s", c->host);
    c->tun_port = q->port;
    c->tun.port = q->port;
    if (q->framing != SWORN_HTTP_NO_BODY) {
        refuse(c, 400, "a CONNECT with a body", c->head, c->head_len);
        return;
    }
    if (raw_port(c->px->conf, q->port)) {
        c->raw_connect = 1;
        decide_tcp(c);
        return;
    }
    /* Nothing is reached yet: the tunnel's first bytes say what is decided. */
    evbuffer_add_printf(bufferevent_get_output(c->a),
                        "HTTP/1.1 200 Connection established\r\n\r\n");
    c->tunnel_open = 1;
    c->ph = PH_PEEK;
    free(c->head);
    c->head = NULL;
    c->head_len = 0;
    memset(&c->rq, 0, sizeof(c->rq));
    arm(c, c->px->conf->tls_peek_ms);
    bufferevent_enable(c->a, EV_READ);
    step_peek(c);
}

static void on_a_read(struct bufferevent *bev, void *arg);

/*
 * Put a TLS server layer on the agent's side, presenting a leaf for host (canonical). Returns 0,
 * or -1 (the caller ends the connection).
 */
static int push_tls(struct pconn *c, const char *host)
{
    struct sworn_proxy_ca_stats before, after;
    SSL_CTX *ctx;
    SSL *ssl;
    struct bufferevent *tls;

    if (c->nlayers >= 3)
        return -1;
    sworn_proxy_ca_stats(c->px->ca, &before);
    ctx = sworn_proxy_ca_ctx_for(c->px->ca, host, time(NULL));
    sworn_proxy_ca_stats(c->px->ca, &after);
    if (after.mints > before.mints)
        sworn_pmetrics_leaf_minted(&c->px->metrics);
    if (ctx == NULL) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "host", json_object_new_string(host));
        json_object_object_add(o, "error", json_object_new_string(sworn_err_msg()));
        sworn_plog(SWORN_PLOG_ERROR, "leaf_failed", o);
        return -1;
    }
    ssl = SSL_new(ctx);
    SSL_CTX_free(ctx);
    if (ssl == NULL)
        return -1;
    tls = bufferevent_openssl_filter_new(c->px->base, c->a, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                         BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    if (tls == NULL)
        return -1; /* libevent frees ssl on some of its failure paths: never twice, so not here */
    c->layer[c->nlayers] = tls;
    c->layer_ssl[c->nlayers] = ssl;
    c->nlayers++;
    c->a = tls;
    bufferevent_setcb(c->a, on_a_read, on_a_write, on_a_event, c);
    bufferevent_setwatermark(c->a, EV_READ, 0, AGENT_INPUT_MAX);
    bufferevent_enable(c->a, EV_READ | EV_WRITE);
    return 0;
}

static void start_tls(struct pconn *c)
{
    evtimer_del(c->timer);
    if (push_tls(c, c->tun.host) != 0) {
        conn_abort(c);
        return;
    }
    c->in_tunnel = 1;
    sworn_pmetrics_tunnel(&c->px->metrics, SWORN_PMETRICS_TLS);
    reset_request(c);
    start_head(c);
}

static void step_peek(struct pconn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->a);
    size_t len = evbuffer_get_length(in);
    size_t n = len < SWORN_SNI_PEEK_MAX ? len : SWORN_SNI_PEEK_MAX;
    const uint8_t *p;
    struct sworn_sni sni;
    const char *why = NULL;
    int r;

    if (len == 0)
        return;
    p = evbuffer_pullup(in, (ev_ssize_t)n);
    if (!sworn_sni_looks_tls(p, n)) {
        decide_tcp(c);
        return;
    }
    r = sworn_sni_peek(p, n, &sni, &why);
    if (r == 1)
        return;
    c->operation = "tcp.connect";
    if (r < 0) {
        evtimer_del(c->timer);
        snprintf(c->scheme, sizeof(c->scheme), "tcp");
        canonicalise(c);
        refuse(c, 400, why, NULL, 0);
        return;
    }
    if (sni.has_sni) {
        char canon[SWORN_RESOURCE_HOST_MAX + 1];
        enum sworn_resource_host_kind kind;
        uint8_t addr[16];
        const char *cwhy;

        if (sworn_resource_canon_host(sni.name, canon, &kind, addr, &cwhy) != 0 ||
            strcmp(canon, c->tun.host) != 0) {
            evtimer_del(c->timer);
            snprintf(c->scheme, sizeof(c->scheme), "tcp");
            canonicalise(c);
            refuse(c, 400, "the TLS server name does not name the CONNECT host (domain fronting)",
                   NULL, 0);
            return;
        }
    }
    start_tls(c);
}

/* --- The agent's and upstream's callbacks. --- */

static void on_a_read_in(struct pconn *c, struct bufferevent *bev, void *unused_arg)
{
    (void)unused_arg;

    (void)bev;
    switch (c->ph) {
    case PH_HELLO:
        step_hello(c);
        break;
    case PH_HEAD:
        step_head(c);
        break;
    case PH_BODY:
        step_body(c);
        break;
    case PH_PEEK:
        step_peek(c);
        break;
    case PH_SPLICE:
        splice_move(c, c->a, c->u, 0);
        break;
    default:
        break; /* the next request waits in the buffer */
    }
}

static void on_a_read(struct bufferevent *bev, void *arg)
{
    struct pconn *c = conn_enter(arg);

    on_a_read_in(c, bev, arg);
    conn_leave(c);
}

static void on_a_write_in(struct pconn *c, struct bufferevent *bev, void *unused_arg)
{
    (void)unused_arg;

    (void)bev;
    if (c->agent_gone)
        return;
    if (c->ph == PH_CLOSING) {
        closing_progress(c);
        return;
    }
    if (c->u != NULL && (c->ph == PH_RESPONSE_BODY || c->ph == PH_SPLICE)) {
        bufferevent_setwatermark(c->a, EV_WRITE, 0, 0);
        bufferevent_enable(c->u, EV_READ);
        if (evbuffer_get_length(bufferevent_get_input(c->u)) > 0) {
            if (c->ph == PH_SPLICE)
                splice_move(c, c->u, c->a, 1);
            else
                step_response_body(c);
        }
    }
}

static void on_a_write(struct bufferevent *bev, void *arg)
{
    struct pconn *c = conn_enter(arg);

    on_a_write_in(c, bev, arg);
    conn_leave(c);
}

static void on_a_event_in(struct pconn *c, struct bufferevent *bev, short what, void *unused_arg)
{
    (void)unused_arg;

    (void)bev;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
        if (c->ph == PH_HELLO) {
            /* Closed (or reset) before a whole hello: the bytes that came are judged. */
            refuse_hello(c, 400, "the connection closed before a whole hostlink hello",
                         evbuffer_get_length(bufferevent_get_input(c->a)));
            return;
        }
        if (c->ph == PH_SPLICE && c->u != NULL && (what & BEV_EVENT_EOF)) {
            /* The agent finished sending: pass that on and let upstream answer. */
            splice_move(c, c->a, c->u, 0);
            conn_abort(c);
            return;
        }
        if (c->agent_gone)
            return;
        /* The agent went away: whatever is in flight is dropped, nothing more is forwarded. */
        if (c->ph == PH_DECIDE || c->ph == PH_UPSTREAM || c->ph == PH_RESPONSE_HEAD ||
            c->ph == PH_RESPONSE_BODY) {
            if (c->effect == NULL)
                c->effect = "error";
            snprintf(c->reason, sizeof(c->reason), "%s",
                     (what & BEV_EVENT_TIMEOUT) ? "the agent read nothing for "
                                                  "upstream.response_timeout"
                                                : "the agent closed the connection");
            log_request(c);
        }
        /* An allowed model call whose answer is coming: its tokens are being spent. Its answer
         * is read to its end (bounded by upstream.response_timeout, as with the agent there) and
         * its usage reported; a cut or a timeout ends it as before (the reservation stands). */
        if (c->model_allowed && c->u != NULL && !c->oauth_hold &&
            (c->ph == PH_RESPONSE_HEAD || c->ph == PH_RESPONSE_BODY)) {
            c->agent_gone = 1;
            /* Its unread output stays until the connection is freed (backpressure) and no
             * longer counts against the upstream. */
            bufferevent_disable(c->a, EV_READ | EV_WRITE);
            if (c->flush_timer != NULL)
                evtimer_del(c->flush_timer);
            bufferevent_enable(c->u, EV_READ); /* no backpressure from an agent who is gone */
            if (evbuffer_get_length(bufferevent_get_input(c->u)) > 0) {
                if (c->ph == PH_RESPONSE_HEAD)
                    step_response_head(c);
                else
                    step_response_body(c);
            }
            return;
        }
        conn_abort(c);
    }
}

static void on_a_event(struct bufferevent *bev, short what, void *arg)
{
    struct pconn *c = conn_enter(arg);

    on_a_event_in(c, bev, what, arg);
    conn_leave(c);
}

static void on_u_read_in(struct pconn *c, struct bufferevent *bev, void *unused_arg)
{
    (void)unused_arg;

    (void)bev;
    if (c->ph == PH_RESPONSE_HEAD)
        step_response_head(c);
    else if (c->ph == PH_RESPONSE_BODY)
        step_response_body(c);
    else if (c->ph == PH_SPLICE)
        splice_move(c, c->u, c->a, 1);
    else
        free_upstream(c); /* bytes from an idle upstream: it is out of step; not reused */
}

static void on_u_read(struct bufferevent *bev, void *arg)
{
    struct pconn *c = conn_enter(arg);

    on_u_read_in(c, bev, arg);
    conn_leave(c);
}

static void on_u_write_in(struct pconn *c, struct bufferevent *bev, void *unused_arg)
{
    (void)unused_arg;

    (void)bev;
    if (c->ph == PH_SPLICE) {
        bufferevent_setwatermark(c->u, EV_WRITE, 0, 0);
        bufferevent_enable(c->a, EV_READ);
        splice_move(c, c->a, c->u, 0);
    }
}

static void on_u_write(struct bufferevent *bev, void *arg)
{
    struct pconn *c = conn_enter(arg);

    on_u_write_in(c, bev, arg);
    conn_leave(c);
}

static void on_u_event_in(struct pconn *c, struct bufferevent *bev, short what, void *unused_arg)
{
    (void)unused_arg;

    (void)bev;
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)))
        return;
    switch (c->ph) {
    case PH_RESPONSE_HEAD:
        step_response_head(c);
        if (c->ph == PH_RESPONSE_HEAD && !c->freeing)
            upstream_failed(c, (what & BEV_EVENT_TIMEOUT) ? 504 : 502,
                            (what & BEV_EVENT_TIMEOUT) ? "the upstream did not answer in time"
                                                       : "the upstream closed without an answer");
        /* The head and a part of the body came with the end: the end is the body's (below). */
        if (c->freeing || c->ph != PH_RESPONSE_BODY)
            break;
        /* fall through */
    case PH_RESPONSE_BODY:
        step_response_body(c);
        if (c->freeing || c->ph != PH_RESPONSE_BODY)
            break;
        if (c->rs.framing == SWORN_HTTP_UNTIL_CLOSE && (what & BEV_EVENT_EOF)) {
            pass_body(c, NULL, 0, 1);
            free_upstream(c);
            c->close_after = 1;
            response_done(c);
            break;
        }
        if (c->oauth_hold) { /* nothing went out yet: the agent gets a 502, no token */
            c->oauth_hold = 0;
            oauth_fail(c, "the token endpoint's answer was cut short");
            break;
        }
        /* Cut short: the agent's copy cannot be completed; close it so it sees that. */
        snprintf(c->reason, sizeof(c->reason), "the upstream's response was cut short");
        log_request(c);
        conn_abort(c);
        break;
    case PH_SPLICE:
        splice_end(c, c->u);
        break;
    default:
        free_upstream(c); /* an idle kept-alive upstream went away */
        break;
    }
}

static void on_u_event(struct bufferevent *bev, short what, void *arg)
{
    struct pconn *c = conn_enter(arg);

    on_u_event_in(c, bev, what, arg);
    conn_leave(c);
}

static void on_timer_in(struct pconn *c, evutil_socket_t fd, short what, void *unused_arg)
{
    (void)unused_arg;

    (void)fd;
    (void)what;
    switch (c->ph) {
    case PH_HELLO:
        refuse_hello(c, 408, "the hostlink hello did not arrive within timeouts.head",
                     evbuffer_get_length(bufferevent_get_input(c->a)));
        return;
    case PH_HEAD:
        if (!c->head_started) {
            conn_abort(c); /* idle: a kept-alive connection with no next request */
            return;
        }
        snprintf(c->reason, sizeof(c->reason), "the request head did not arrive in time");
        reply_json(c, 408, "error", 1);
        conn_close_after_write(c);
        return;
    case PH_BODY:
        snprintf(c->reason, sizeof(c->reason), "the request body did not arrive in time");
        reply_json(c, 408, "error", 1);
        conn_close_after_write(c);
        return;
    case PH_PEEK:
        decide_tcp(c); /* silence: a protocol where the server speaks first */
        return;
    default:
        conn_abort(c); /* CLOSING: the agent does not read its answer */
        return;
    }
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct pconn *c = conn_enter(arg);

    on_timer_in(c, fd, what, arg);
    conn_leave(c);
}

void sworn_pconn_accept(struct sworn_plistener *l, int fd, uid_t uid)
{
    struct sworn_proxy *px = l->px;
    struct pconn *c;

    /* limits.connections holds per listener: an agent filling its own listener's share cannot
     * turn away the agents of another (each sandbox has a listener of its own). */
    if (l->connections >= px->conf->connections_max) {
        static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                   "Connection: close\r\n\r\n";
        ssize_t w = write(fd, busy, sizeof(busy) - 1);

        (void)w; /* best effort: the connection is refused either way */
        close(fd);
        sworn_pmetrics_request(&px->metrics, SWORN_PMETRICS_ERROR, 503);
        return;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        close(fd);
        return;
    }
    c->px = px;
    c->l = l;
    c->uid = uid;
    memcpy(c->sandbox, l->conf->sandbox, sizeof(c->sandbox)); /* "" on a hostlink (p_config.h) */
    c->ms_decide = -1;
    c->a = bufferevent_socket_new(px->base, fd, BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    c->timer = evtimer_new(px->base, on_timer, c);
    c->body = evbuffer_new();
    c->tmp = evbuffer_new();
    px->connections++;
    l->connections++;
    sworn_pmetrics_connection_open(&px->metrics);
    if (c->a != NULL) {
        c->layer[0] = c->a;
        c->nlayers = 1;
    }
    if (c->a == NULL || c->timer == NULL || c->body == NULL || c->tmp == NULL ||
        sworn_pdecide_init(&c->dec, px->base, px->conf->decision_socket,
                           px->conf->decision_timeout_ms, px->conf->escalation_max_ms) != 0) {
        if (c->a == NULL)
            close(fd);
        conn_abort(c);
        return;
    }
    bufferevent_setcb(c->a, on_a_read, on_a_write, on_a_event, c);
    bufferevent_setwatermark(c->a, EV_READ, 0, AGENT_INPUT_MAX);
    bufferevent_enable(c->a, EV_READ | EV_WRITE);
    if (l->conf->tls) {
        /* An HTTPS proxy listener: the leaf names the listener's address. */
        char host[SWORN_RESOURCE_HOST_MAX + 1];

        snprintf(host, sizeof(host), l->conf->family == 6 ? "[%s]" : "%s", l->conf->address);
        if (push_tls(c, host) != 0) {
            conn_abort(c);
            return;
        }
    }
    if (l->conf->kind == SWORN_PCONF_HOSTLINK)
        start_hello(c);
    else
        start_head(c);
}
