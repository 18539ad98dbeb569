/*
 * p_proxy.c -- bringing the proxy up, running its loop, and taking it down (p_proxy.h).
 */
#include "p_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <json-c/json.h>
#include <openssl/rand.h>

#include "encoding.h"
#include "err.h"
#include "p_ca.h"
#include "p_jlog.h"
#include "p_jwks.h"
#include "p_jwt.h"
#include "p_mserve.h"
#include "p_uptls.h"

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct sworn_proxy *px = arg;
    json_object *o = json_object_new_object();

    (void)what;
    json_object_object_add(o, "signal", json_object_new_int((int)sig));
    sworn_plog(SWORN_PLOG_INFO, "stopping", o);
    sworn_proxy_stop(px);
}

void sworn_proxy_next_id(struct sworn_proxy *px, char out[64])
{
    snprintf(out, 64, "%s-%llu", px->id_prefix, (unsigned long long)++px->id_counter);
}

/*
 * Each agent connection may hold three descriptors (the agent's, upstream's, decisiond's); the
 * listeners, the log, the resolver and the loop need some more. Raise the soft RLIMIT_NOFILE to
 * that (never above the hard limit, which only a privileged process could raise), and say so when
 * the hard limit leaves fewer connections than limits.connections: accept would fail with EMFILE
 * long before the configured limit is reached.
 */
#define FDS_PER_CONNECTION 3u
#define FDS_BASE 64u

static void raise_nofile(const struct sworn_pconf *conf)
{
    rlim_t want = (rlim_t)conf->connections_max * FDS_PER_CONNECTION + FDS_BASE;
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        struct rlimit up = rl;

        up.rlim_cur = (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want) ? want : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl = up;
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        json_object *o = json_object_new_object();
        uint64_t can =
            rl.rlim_cur > FDS_BASE ? (uint64_t)(rl.rlim_cur - FDS_BASE) / FDS_PER_CONNECTION : 0;

        json_object_object_add(o, "nofile_limit", json_object_new_int64((int64_t)rl.rlim_cur));
        json_object_object_add(o, "nofile_wanted", json_object_new_int64((int64_t)want));
        json_object_object_add(o, "connections_configured",
                               json_object_new_int64((int64_t)conf->connections_max));
        json_object_object_add(o, "connections_servable", json_object_new_int64((int64_t)can));
        json_object_object_add(
            o, "warning",
            json_object_new_string("the hard RLIMIT_NOFILE is below 3 * limits.connections + 64: "
                                   "only connections_servable agent connections can be served "
                                   "(raise LimitNOFILE= or ulimit -Hn, or lower "
                                   "limits.connections)"));
        sworn_plog(SWORN_PLOG_WARN, "nofile_limit", o);
    }
}

/*
 * The resolver, set up now, before any privilege drop (its files are read once, here). Without
 * upstream.nameservers: /etc/resolv.conf (nameservers, search list, options) and /etc/hosts, as
 * EVDNS_BASE_INITIALIZE_NAMESERVERS reads them. With it: /etc/hosts the same way
 * (evdns_base_load_hosts, what DNS_OPTION_HOSTSFILE does inside the resolv.conf parse), then only
 * the listed resolvers, in order; /etc/resolv.conf is not read, so no search list applies.
 */
static int open_resolver(struct sworn_proxy *px, const struct sworn_pconf *conf)
{
    if (conf->nnameservers == 0) {
        px->dns = evdns_base_new(px->base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
        if (px->dns == NULL)
            return sworn_err_set(SWORN_ERR_IO, "the resolver cannot be set up (/etc/resolv.conf)");
        return 0;
    }
    px->dns = evdns_base_new(px->base, 0);
    if (px->dns == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "the resolver cannot be set up");
    if (evdns_base_load_hosts(px->dns, NULL) != 0)
        return sworn_err_set(SWORN_ERR_IO, "the resolver cannot read /etc/hosts");
    for (size_t i = 0; i < conf->nnameservers; i++) {
        const struct sworn_pconf_nameserver *ns = &conf->nameservers[i];
        struct sockaddr_storage sa = {0};
        socklen_t len;

        if (ns->family == 4) {
            struct sockaddr_in *in = (struct sockaddr_in *)&sa;

            in->sin_family = AF_INET;
            in->sin_port = htons(ns->port);
            memcpy(&in->sin_addr, ns->addr, 4);
            len = sizeof(*in);
        } else {
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

            in6->sin6_family = AF_INET6;
            in6->sin6_port = htons(ns->port);
            memcpy(&in6->sin6_addr, ns->addr, 16);
            len = sizeof(*in6);
        }
        if (evdns_base_nameserver_sockaddr_add(px->dns, (struct sockaddr *)&sa, len, 0) != 0)
            return sworn_err_set(SWORN_ERR_IO, "upstream.nameservers item %zu cannot be used",
                                 i + 1);
    }
    return 0;
}

int sworn_proxy_open(struct sworn_proxy *px, const struct sworn_pconf *conf)
{
    uint8_t rnd[8];

    memset(px, 0, sizeof(*px));
    px->conf = conf;
    raise_nofile(conf);
    sworn_pmetrics_init(&px->metrics);
    /* Request ids: a random prefix per process, so a restarted proxy never repeats one (decisiond
     * refuses an id it took among its last 65536). */
    SWORN_ENSURE(RAND_bytes(rnd, sizeof(rnd)) == 1, SWORN_ERR_CRYPTO, "RAND_bytes failed");
    memcpy(px->id_prefix, "px-", 3);
    SWORN_GUARD(sworn_hex_encode(rnd, sizeof(rnd), px->id_prefix + 3, sizeof(px->id_prefix) - 3));
    px->base = event_base_new();
    SWORN_ENSURE(px->base != NULL, SWORN_ERR_NOMEM, "event_base_new failed");
    if (sworn_proxy_ca_load(conf->ca_cert, conf->ca_key, conf->leaf_ttl_s, conf->leaf_cache,
                            &px->ca) != 0)
        goto fail;
    px->upstream_tls = sworn_uptls_ctx(conf->upstream_ca_file);
    if (px->upstream_tls == NULL)
        goto fail;
    if (open_resolver(px, conf) != 0)
        goto fail;
    if (conf->delegation_verify_key[0] != '\0') {
        px->delegation_key = sworn_jwt_load_key(conf->delegation_verify_key);
        if (px->delegation_key == NULL ||
            sworn_jwt_key_id(px->delegation_key, px->delegation_key_id) != 0)
            goto fail;
    }
    if (conf->delegation_jwks[0] != '\0') {
        px->delegation_jwks = sworn_jwks_load(conf->delegation_jwks);
        if (px->delegation_jwks == NULL)
            goto fail;
    }
    /* The orderly stop is set up before the port files say the proxy is there: a SIGTERM that
     * follows them at once must stop it, not kill it. */
    px->sig_term = evsignal_new(px->base, SIGTERM, on_signal, px);
    px->sig_int = evsignal_new(px->base, SIGINT, on_signal, px);
    if (px->sig_term == NULL || px->sig_int == NULL || evsignal_add(px->sig_term, NULL) != 0 ||
        evsignal_add(px->sig_int, NULL) != 0) {
        sworn_err_set(SWORN_ERR_IO, "signal handlers cannot be set up");
        goto fail;
    }
    if (sworn_plisten_open(px) != 0 || sworn_mserve_open(px) != 0)
        goto fail;
    return 0;
fail:
    sworn_proxy_close(px);
    return -1;
}

int sworn_proxy_run(struct sworn_proxy *px)
{
    if (event_base_dispatch(px->base) < 0)
        return sworn_err_set(SWORN_ERR_IO, "the event loop failed");
    return 0;
}

void sworn_proxy_stop(struct sworn_proxy *px)
{
    px->stopping = 1;
    event_base_loopexit(px->base, NULL);
}

void sworn_proxy_close(struct sworn_proxy *px)
{
    sworn_plisten_close(px);
    sworn_mserve_close(px);
    if (px->sig_term != NULL)
        event_free(px->sig_term);
    if (px->sig_int != NULL)
        event_free(px->sig_int);
    if (px->dns != NULL)
        evdns_base_free(px->dns, 1);
    sworn_pusage_free(px->usage);
    if (px->upstream_tls != NULL)
        SSL_CTX_free(px->upstream_tls);
    sworn_proxy_ca_free(px->ca);
    EVP_PKEY_free(px->delegation_key);
    sworn_jwks_free(px->delegation_jwks);
    if (px->base != NULL)
        event_base_free(px->base);
    memset(px, 0, sizeof(*px));
}
