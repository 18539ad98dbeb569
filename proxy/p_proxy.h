/*
 * p_proxy.h -- the running proxy: the state every agent connection shares (the event loop, the
 * configuration, the CA, the upstream TLS context, the resolver, the metrics), and the entry
 * points of the loop's modules (docs/proxy.md, "How a request is handled").
 *
 *   p_listen   opens the listeners (Unix sockets with their mode and group, the loopback TCP
 *              port with its port file) and accepts: SO_PEERCRED's uid is checked against the
 *              listener's `uids` and recorded as the principal's uid.
 *   p_conn     one agent connection: read a head, read the body, ask decisiond, then forward,
 *              answer 403, or refuse; CONNECT tunnels; WebSocket upgrades.
 *   p_decide   the connection's decisiond connection (one request in flight).
 *   p_upstream resolve (only after an allow), filter the addresses, connect, TLS.
 *
 * Threading: one thread runs the event loop; nothing here is locked.
 */
#ifndef SWORN_P_PROXY_H
#define SWORN_P_PROXY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "p_config.h"
#include "p_jwks.h"
#include "p_jwt.h"
#include "p_metrics.h"
#include "p_usage.h"

struct evdns_base;
struct evconnlistener;
struct sworn_textserve;
struct sworn_proxy_ca;

/* One listener as opened. */
struct sworn_plistener {
    struct sworn_proxy *px;
    const struct sworn_pconf_listener *conf;
    struct evconnlistener *lev;
    uint16_t bound_port; /* TCP: the port the kernel gave */
    size_t connections;  /* agent connections open on it now (limits.connections each) */
};

struct sworn_proxy {
    struct event_base *base;
    const struct sworn_pconf *conf;
    struct sworn_proxy_ca *ca;
    SSL_CTX *upstream_tls;
    struct evdns_base *dns;
    EVP_PKEY *delegation_key; /* NULL: delegation tokens are read, not verified */
    char delegation_key_id[SWORN_JWT_KEY_ID_MAX + 1]; /* its id in the record (sworn_jwt_key_id) */
    struct sworn_jwks *delegation_jwks;               /* delegation.jwks, or NULL (p_jwks.h) */
    struct sworn_pmetrics metrics;
    struct sworn_plistener listeners[SWORN_PCONF_LISTENERS_MAX];
    size_t nlisteners;
    struct sworn_textserve *metrics_srv; /* metrics.socket (p_mserve.h), or NULL */
    size_t connections;                  /* agent connections open now */
    uint64_t bodies_held; /* request body bytes all connections hold now (limits.bodies) */
    char id_prefix[24];   /* random per process: request ids are "<prefix>-<counter>" */
    uint64_t id_counter;
    struct event *sig_term, *sig_int;
    int stopping;
    struct sworn_pusage *usage; /* usage reports of model calls (p_usage.h); made when needed */
    size_t usage_held;          /* bytes the usage readers of all connections hold (p_musage.h) */
};

/*
 * Bring the proxy up on a loaded and checked configuration: the CA, the upstream context, the
 * resolver, the delegation key, then every listener (bound and listening; port files written
 * after all are). Returns 0, or -1 with sworn_err set (everything opened is closed again).
 */
int sworn_proxy_open(struct sworn_proxy *px, const struct sworn_pconf *conf);

/* Run the loop until SIGTERM or SIGINT (or sworn_proxy_stop). Returns 0, or -1 on a loop error. */
int sworn_proxy_run(struct sworn_proxy *px);

/* Stop accepting and end the loop (connections in flight are dropped). */
void sworn_proxy_stop(struct sworn_proxy *px);

/* Close everything sworn_proxy_open opened. Safe on a zeroed or failed one. */
void sworn_proxy_close(struct sworn_proxy *px);

/* p_listen.c: open the listeners of px->conf (0, or -1 with sworn_err set); close them. */
int sworn_plisten_open(struct sworn_proxy *px);
void sworn_plisten_close(struct sworn_proxy *px);

/*
 * p_conn.c: take an accepted agent connection (fd, non-blocking). l: the listener it came on;
 * uid: SO_PEERCRED's uid (0 when unknown: TCP). The connection owns fd from here (closed on
 * failure too).
 */
void sworn_pconn_accept(struct sworn_plistener *l, int fd, uid_t uid);

/* A new request id into out (at most 64 bytes with the NUL). */
void sworn_proxy_next_id(struct sworn_proxy *px, char out[64]);

#endif
