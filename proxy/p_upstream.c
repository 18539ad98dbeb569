/*
 * p_upstream.c -- resolve after the allow, filter, connect, TLS (p_upstream.h).
 */
#include "p_upstream.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <openssl/ssl.h>

#include "err.h"
#include "p_addr.h"
#include "p_proxy.h"
#include "p_uptls.h"

const char *sworn_pup_failure_name(enum sworn_pup_failure f)
{
    switch (f) {
    case SWORN_PUP_OK:
        return "ok";
    case SWORN_PUP_DNS:
        return "dns";
    case SWORN_PUP_REFUSED_ADDRESS:
        return "refused-address";
    case SWORN_PUP_CONNECT:
        return "connect";
    case SWORN_PUP_TLS:
        return "tls";
    }
    return "unknown";
}

static void finish(struct sworn_pup *u, struct bufferevent *bev, enum sworn_pup_failure f,
                   const char *why)
{
    sworn_pup_cb cb = u->cb;
    void *arg = u->cb_arg;

    if (u->timer != NULL)
        evtimer_del(u->timer);
    u->active = 0;
    cb(arg, bev, f, why);
}

/* Report a failure from the loop (never from inside sworn_pup_start). */
static void fail_later(struct sworn_pup *u, enum sworn_pup_failure f, const char *why)
{
    u->pending = f;
    u->pending_why = why;
    event_active(u->timer, EV_TIMEOUT, 1);
}

static void try_next(struct sworn_pup *u);

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct sworn_pup *u = arg;

    if (what & BEV_EVENT_CONNECTED) {
        const char *why = NULL;

        if (u->tls && sworn_uptls_check(bufferevent_openssl_get_ssl(bev), &why) != 0) {
            bufferevent_free(bev);
            u->bev = NULL;
            finish(u, NULL, SWORN_PUP_TLS, why);
            return;
        }
        bufferevent_setcb(bev, NULL, NULL, NULL, NULL);
        u->bev = NULL;
        finish(u, bev, SWORN_PUP_OK, NULL);
        return;
    }
    if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF | BEV_EVENT_TIMEOUT)) {
        /* A TLS error is final (the address answered; its certificate is what failed). */
        int tls_failed = u->tls && bufferevent_get_openssl_error(bev) != 0;

        bufferevent_free(bev);
        u->bev = NULL;
        if (tls_failed) {
            finish(u, NULL, SWORN_PUP_TLS, "the upstream's TLS handshake or certificate failed");
            return;
        }
        try_next(u);
    }
}

/*
 * Is sa one of the proxy's own TCP listeners (its port, on a loopback or unspecified address or
 * the listener's own)? Connecting there would let a tunnel re-enter the proxy as the principal of
 * another listener.
 */
static int is_own_listener(const struct sworn_pup *u, const struct sockaddr *sa)
{
    uint16_t port;
    enum sworn_addr_class k = sworn_addr_classify(sa);

    if (sa->sa_family == AF_INET)
        port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
    else if (sa->sa_family == AF_INET6)
        port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    else
        return 0;
    if (k != SWORN_ADDR_LOOPBACK && k != SWORN_ADDR_UNSPECIFIED)
        return 0;
    for (size_t i = 0; i < u->px->nlisteners; i++) {
        const struct sworn_plistener *l = &u->px->listeners[i];

        if (l->conf->kind == SWORN_PCONF_TCP && l->bound_port == port)
            return 1;
    }
    return 0;
}

static void start_attempt(struct sworn_pup *u)
{
    const struct sockaddr *sa = (const struct sockaddr *)&u->addrs[u->next];
    int len = (int)u->addr_lens[u->next];
    int opts = BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS;
    struct timeval tv = {(time_t)(u->px->conf->connect_timeout_ms / 1000),
                         (suseconds_t)(u->px->conf->connect_timeout_ms % 1000) * 1000};

    sworn_addr_format(sa, u->peer, sizeof(u->peer));
    u->next++;
    if (is_own_listener(u, sa)) {
        fail_later(u, SWORN_PUP_REFUSED_ADDRESS, "the destination is the proxy's own listener");
        return;
    }
    if (u->tls) {
        SSL *ssl = SSL_new(u->px->upstream_tls);

        if (ssl == NULL || sworn_uptls_prepare(ssl, u->host) != 0) {
            SSL_free(ssl);
            fail_later(u, SWORN_PUP_TLS, "the upstream TLS connection cannot be set up");
            return;
        }
        u->bev =
            bufferevent_openssl_socket_new(u->px->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING, opts);
        if (u->bev == NULL) {
            SSL_free(ssl);
            fail_later(u, SWORN_PUP_CONNECT, "out of memory");
            return;
        }
    } else {
        u->bev = bufferevent_socket_new(u->px->base, -1, opts);
        if (u->bev == NULL) {
            fail_later(u, SWORN_PUP_CONNECT, "out of memory");
            return;
        }
    }
    bufferevent_setcb(u->bev, NULL, NULL, on_event, u);
    evtimer_add(u->timer, &tv);
    if (bufferevent_socket_connect(u->bev, sa, len) != 0) {
        bufferevent_free(u->bev);
        u->bev = NULL;
        fail_later(u, SWORN_PUP_CONNECT, "the upstream connection failed");
    }
}

static void try_next(struct sworn_pup *u)
{
    if (u->next >= u->naddrs) {
        finish(u, NULL, SWORN_PUP_CONNECT, "no upstream address accepted the connection");
        return;
    }
    start_attempt(u);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct sworn_pup *u = arg;

    (void)fd;
    (void)what;
    if (u->pending != SWORN_PUP_OK) {
        enum sworn_pup_failure f = u->pending;

        u->pending = SWORN_PUP_OK;
        if (f == SWORN_PUP_CONNECT && u->next < u->naddrs) {
            start_attempt(u);
            return;
        }
        finish(u, NULL, f, u->pending_why);
        return;
    }
    /* This attempt took longer than connect_timeout: the next address, or the end. */
    if (u->bev != NULL) {
        bufferevent_free(u->bev);
        u->bev = NULL;
    }
    try_next(u);
}

/*
 * A lookup's own small allocation: libevent reports a cancelled lookup later, from the loop, when
 * the struct sworn_pup may be gone; the token outlives it and is freed by the last callback.
 */
struct pup_lookup {
    struct sworn_pup *u; /* NULL once cancelled */
};

/* The lookup's answer: keep what may be reached, then connect. */
static void on_resolved(int result, struct evutil_addrinfo *res, void *arg)
{
    struct pup_lookup *lk = arg;
    struct sworn_pup *u = lk->u;
    const struct sworn_pconf *c;
    struct sworn_addr_cidr allow[SWORN_PCONF_CIDRS_MAX];
    size_t refused = 0;

    free(lk);
    if (u == NULL) {
        if (res != NULL)
            evutil_freeaddrinfo(res);
        return;
    }
    u->lookup = NULL;
    u->lookup_token = NULL;
    c = u->px->conf;
    if (result != 0 || res == NULL) {
        if (res != NULL)
            evutil_freeaddrinfo(res);
        fail_later(u, SWORN_PUP_DNS, "the name does not resolve");
        return;
    }
    for (size_t i = 0; i < c->nallow_private; i++) {
        allow[i].family = c->allow_private[i].family;
        memcpy(allow[i].addr, c->allow_private[i].addr, 16);
        allow[i].prefix = c->allow_private[i].prefix;
    }
    for (struct evutil_addrinfo *ai = res; ai != NULL && u->naddrs < SWORN_PUP_ADDRS_MAX;
         ai = ai->ai_next) {
        if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
            ai->ai_addrlen > sizeof(u->addrs[0]))
            continue;
        if (!sworn_addr_permitted(ai->ai_addr, allow, c->nallow_private)) {
            refused++;
            continue;
        }
        memcpy(&u->addrs[u->naddrs], ai->ai_addr, ai->ai_addrlen);
        u->addr_lens[u->naddrs] = (socklen_t)ai->ai_addrlen;
        if (ai->ai_family == AF_INET)
            ((struct sockaddr_in *)&u->addrs[u->naddrs])->sin_port = htons(u->port);
        else
            ((struct sockaddr_in6 *)&u->addrs[u->naddrs])->sin6_port = htons(u->port);
        u->naddrs++;
    }
    evutil_freeaddrinfo(res);
    if (u->naddrs == 0) {
        if (refused > 0) {
            sworn_pmetrics_dns_refused(&u->px->metrics);
            fail_later(u, SWORN_PUP_REFUSED_ADDRESS,
                       "the name resolves only to addresses the proxy may not reach");
        } else {
            fail_later(u, SWORN_PUP_DNS, "the name has no usable address");
        }
        return;
    }
    start_attempt(u);
}

int sworn_pup_start(struct sworn_pup *u, struct sworn_proxy *px, const struct sworn_resource *res,
                    int tls, sworn_pup_cb cb, void *arg)
{
    memset(u, 0, sizeof(*u));
    u->px = px;
    u->tls = tls;
    u->cb = cb;
    u->cb_arg = arg;
    u->port = (uint16_t)res->port;
    snprintf(u->host, sizeof(u->host), "%s", res->host);
    u->timer = evtimer_new(px->base, on_timer, u);
    SWORN_ENSURE(u->timer != NULL, SWORN_ERR_NOMEM, "evtimer_new failed");
    u->active = 1;
    if (res->host_kind == SWORN_RESOURCE_HOST_IPV4) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&u->addrs[0];

        sin->sin_family = AF_INET;
        sin->sin_port = htons(u->port);
        memcpy(&sin->sin_addr, res->addr, 4);
        u->addr_lens[0] = sizeof(*sin);
        u->naddrs = 1;
        start_attempt(u);
        return 0;
    }
    if (res->host_kind == SWORN_RESOURCE_HOST_IPV6) {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&u->addrs[0];

        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(u->port);
        memcpy(&sin6->sin6_addr, res->addr, 16);
        u->addr_lens[0] = sizeof(*sin6);
        u->naddrs = 1;
        start_attempt(u);
        return 0;
    }
    {
        struct evutil_addrinfo hints = {0};

        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_protocol = IPPROTO_TCP;
        /* May answer at once (the hosts file): on_resolved then runs inside this call, and
         * reports only through the timer. */
        struct pup_lookup *lk = malloc(sizeof(*lk));

        SWORN_ENSURE(lk != NULL, SWORN_ERR_NOMEM, "out of memory");
        lk->u = u;
        u->lookup_token = lk;
        u->lookup = evdns_getaddrinfo(px->dns, u->host, NULL, &hints, on_resolved, lk);
    }
    return 0;
fail:
    return -1;
}

void sworn_pup_cancel(struct sworn_pup *u)
{
    if (u->lookup != NULL) {
        struct evdns_getaddrinfo_request *l = u->lookup;

        ((struct pup_lookup *)u->lookup_token)->u = NULL;
        u->lookup = NULL;
        u->lookup_token = NULL;
        evdns_getaddrinfo_cancel(l); /* on_resolved comes later and only frees the token */
    }
    if (u->bev != NULL) {
        bufferevent_free(u->bev);
        u->bev = NULL;
    }
    if (u->timer != NULL) {
        event_free(u->timer);
        u->timer = NULL;
    }
    u->active = 0;
}
