/*
 * p_upstream.h -- reaching an allowed destination: resolve it (only now, after the allow: a
 * lookup is itself a way out, docs/proxy.md "No DNS before an allow"), keep only the addresses
 * the proxy may connect to, connect within upstream.connect_timeout, and for https and wss
 * complete a verified TLS handshake (p_uptls.h).
 *
 * Addresses: a host that is an IP literal is connected to as it is (the policy named it). A
 * name's addresses pass through p_addr.h: loopback, private, link-local, metadata, shared,
 * unspecified, multicast and reserved addresses are dropped unless upstream.allow_private holds
 * them (DNS rebinding cannot turn an allowed name into an internal address); when none is left
 * the connection fails with "refused-address". The addresses left are tried in the resolver's
 * order until one connects.
 *
 * The outcome is handed to the callback exactly once, from the loop, unless cancelled first:
 * a connected bufferevent (the caller owns it from then on) or NULL with a static sentence.
 *
 * Thread safety: the event loop's thread only.
 */
#ifndef SWORN_P_UPSTREAM_H
#define SWORN_P_UPSTREAM_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "resource.h"

struct sworn_proxy;
struct bufferevent;
struct evdns_getaddrinfo_request;
struct event;

#define SWORN_PUP_ADDRS_MAX 16u

enum sworn_pup_failure {
    SWORN_PUP_OK = 0,
    SWORN_PUP_DNS,             /* the name did not resolve */
    SWORN_PUP_REFUSED_ADDRESS, /* it resolved only to addresses the proxy may not reach */
    SWORN_PUP_CONNECT,         /* no address accepted the connection in time */
    SWORN_PUP_TLS,             /* the TLS handshake or the certificate check failed */
};

/* cb(arg, bev, failure, why): bev is connected (and TLS done) when failure is SWORN_PUP_OK. */
typedef void (*sworn_pup_cb)(void *arg, struct bufferevent *bev, enum sworn_pup_failure failure,
                             const char *why);

struct sworn_pup {
    struct sworn_proxy *px;
    char host[SWORN_RESOURCE_HOST_MAX + 1]; /* canonical */
    uint16_t port;
    int tls;
    struct sockaddr_storage addrs[SWORN_PUP_ADDRS_MAX];
    socklen_t addr_lens[SWORN_PUP_ADDRS_MAX];
    size_t naddrs, next;
    struct evdns_getaddrinfo_request *lookup;
    void *lookup_token;
    struct bufferevent *bev;
    struct event *timer; /* connect_timeout, per attempt; also reports failures from the loop */
    enum sworn_pup_failure pending;
    const char *pending_why;
    char peer[64]; /* the address connected to, for the log */
    sworn_pup_cb cb;
    void *cb_arg;
    int active;
};

/*
 * Start reaching res (canonical: scheme, host, kind, addr, port); tls: 1 for https and wss.
 * Returns 0 (cb will be called), or -1 with sworn_err set (no callback).
 */
int sworn_pup_start(struct sworn_pup *u, struct sworn_proxy *px, const struct sworn_resource *res,
                    int tls, sworn_pup_cb cb, void *arg);

/*
 * Release u: a lookup or a connection in progress is dropped (no callback comes after this), and
 * the timer is freed. Call it after the callback too. Safe on a zeroed or released one.
 */
void sworn_pup_cancel(struct sworn_pup *u);

/* The name of a failure for logs ("dns", "refused-address", "connect", "tls"). */
const char *sworn_pup_failure_name(enum sworn_pup_failure f);

#endif
