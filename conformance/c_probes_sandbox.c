/*
 * c_probes_sandbox.c -- the probes run from inside the deployment's sandbox (c_probes.h;
 * docs/conformance.md, "The probes from inside the sandbox"): sworn-conformance-probe started by
 * sandbox.command (c_sandbox.h), the runner's canaries (c_canary.h) counting what reached them.
 *
 * Three shapes of probe, each guarded against passing when nothing was tried:
 *   escape   the attempt inside must print BLOCKED and every canary it aims at must have heard
 *            nothing; each canary is synced (the runner's own marker must arrive) before and
 *            after, so a canary that hears nothing at all ends the probe in an error;
 *   socket   a kind of socket or a call: the same attempt runs on the host first, and when the
 *            host cannot make it either (no vsock module, no IPv6) the probe is skipped, saying
 *            so, since BLOCKED inside would then mean nothing;
 *   proxy    a request to the proxy as the agent reaches it: the allowed request must first come
 *            back with an upstream's answer through the same path (else a proxy that refuses
 *            everything, or no proxy at all, would pass), then the variant must get the proxy's
 *            own refusal (docs/proxy.md: its JSON answer) or be closed unanswered.
 * The state shared by the probes of one run (the canaries, the marker file, the proxy's
 * control) lives in ctx->sbx, made on first use and freed by c_sbx_state_free.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "c_canary.h"
#include "c_dns.h"
#include "c_probes.h"
#include "c_record.h"
#include "c_sandbox.h"
#include "err.h"
#include "frame.h"
#include "sworn.pb-c.h"

#define REQ_MAX 4096
#define HASHES_MAX (C_DEPLOY_LIST_MAX * 65)
#define PIDS_TEXT_MAX 1024

struct c_sbx_state {
    int canary_started; /* 1 started, -1 failed (why in canary_why) */
    char canary_why[256];
    struct c_canary canary;
    char marker[1200]; /* a host file the agent must not reach (0644, in a 0711 folder) */
    int proxy_control; /* 0 not run, 1 an upstream answered, -1 not */
    char proxy_control_line[1024];
};

void c_sbx_state_free(struct c_ctx *ctx)
{
    if (ctx->sbx == NULL)
        return;
    c_canary_stop(&ctx->sbx->canary);
    free(ctx->sbx);
    ctx->sbx = NULL;
}

/* The sandbox state, or NULL with r set (skipped without a sandbox section, or an error). */
static struct c_sbx_state *state(struct c_ctx *ctx, struct c_result *r)
{
    struct c_sbx_state *s;

    if (!ctx->dep->has_sandbox) {
        c_result_set(r, C_SKIPPED, "the deployment file has no sandbox section");
        return NULL;
    }
    if (ctx->sbx != NULL)
        return ctx->sbx;
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        c_result_set(r, C_ERROR, "out of memory");
        return NULL;
    }
    /* The agent's uid is not ours: it may pass through the scratch folder, never list it. */
    if (chmod(ctx->scratch, 0711) != 0 ||
        c_scratch_path(ctx, "marker", s->marker, sizeof(s->marker)) < 0) {
        free(s);
        c_result_set(r, C_ERROR, "the scratch folder: %s", strerror(errno));
        return NULL;
    }
    int fd = open(s->marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

    if (fd < 0 || write(fd, "sworn-conformance marker\n", 25) != 25 || fchmod(fd, 0644) != 0) {
        if (fd >= 0)
            close(fd);
        free(s);
        c_result_set(r, C_ERROR, "the marker file: %s", strerror(errno));
        return NULL;
    }
    close(fd);
    ctx->sbx = s;
    return s;
}

static struct c_canary *canaries(struct c_ctx *ctx, struct c_result *r)
{
    struct c_sbx_state *s = state(ctx, r);

    if (s == NULL)
        return NULL;
    if (s->canary_started == 0) {
        s->canary_started = c_canary_start(&s->canary, ctx->scratch) == 0 ? 1 : -1;
        if (s->canary_started < 0)
            snprintf(s->canary_why, sizeof(s->canary_why), "%s", sworn_err_msg());
    }
    if (s->canary_started < 0) {
        c_result_set(r, C_ERROR, "the canaries did not start: %s", s->canary_why);
        return NULL;
    }
    return &s->canary;
}

/* Run args in a sandbox; on a failure to run, r is an error and -1 is returned. */
static int inside(struct c_ctx *ctx, struct c_result *r, const char *const *args, const int *leak,
                  size_t nleak, struct c_sbx_out *o)
{
    if (c_sbx_run(ctx, args, leak, nleak, o) < 0) {
        c_result_set(r, C_ERROR, "the sandbox could not be run: %s", sworn_err_msg());
        return -1;
    }
    c_evidence(r, "sandbox %s: exit %d, \"%s\"", o->name, o->status, o->line);
    if (o->verdict == C_V_OTHER) {
        c_result_set(r, C_ERROR,
                     "the probe program gave no verdict inside the sandbox (exit %d): the "
                     "sandbox command failed, or the probe could not run",
                     o->status);
        return -1;
    }
    return 0;
}

/* ---- escape: an attempt at a canary ---- */

/* The attempt args against the canaries labelled in labels (NULL-terminated). */
static void escape(struct c_ctx *ctx, struct c_result *r, const char *const *args,
                   const char *const *labels, const int *leak, size_t nleak)
{
    struct c_canary *c = canaries(ctx, r);
    struct c_sbx_out o;
    unsigned heard, total = 0;

    if (c == NULL)
        return;
    for (size_t i = 0; labels[i] != NULL; i++)
        if (c_canary_sync(c, labels[i], &heard) < 0) {
            c_result_set(r, C_ERROR, "before the attempt: %s", sworn_err_msg());
            return;
        }
    if (inside(ctx, r, args, leak, nleak, &o) < 0)
        return;
    for (size_t i = 0; labels[i] != NULL; i++) {
        if (c_canary_sync(c, labels[i], &heard) < 0) {
            c_result_set(r, C_ERROR, "after the attempt: %s", sworn_err_msg());
            return;
        }
        c_evidence(r, "canary %s heard %u event(s) besides the runner's markers", labels[i], heard);
        total += heard;
    }
    if (o.verdict == C_V_OPEN || total > 0)
        c_result_set(r, C_FAIL, "the attempt got out of the sandbox: \"%s\"; the canaries heard %u",
                     o.line, total);
    else
        c_result_set(r, C_PASS, "blocked (\"%s\"); the canaries heard nothing", o.line);
}

/* An attempt "ATTEMPT ADDR PORT" at the canary labelled label; skipped when it is absent. */
static void at_canary(struct c_ctx *ctx, struct c_result *r, const char *attempt, const char *label)
{
    struct c_canary *c = canaries(ctx, r);
    const struct c_canary_listener *l;
    char port[8];

    if (c == NULL)
        return;
    l = c_canary_find(c, label);
    if (l == NULL) {
        c_result_set(r, C_SKIPPED, "no %s canary here: %s", label,
                     strstr(label, "netns") != NULL ? c->netns_why
                                                    : "the host has no IPv6 (::1 does not bind)");
        return;
    }
    snprintf(port, sizeof(port), "%u", l->port);
    const char *args[] = {attempt, l->addr, port, NULL};
    const char *labels[] = {label, NULL};

    escape(ctx, r, args, labels, NULL, 0);
}

void c_probe_direct_ipv4(struct c_ctx *ctx, struct c_result *r)
{
    at_canary(ctx, r, "tcp4", "tcp4-loopback");
}

void c_probe_direct_ipv6(struct c_ctx *ctx, struct c_result *r)
{
    at_canary(ctx, r, "tcp6", "tcp6-loopback");
}

void c_probe_udp_ipv4(struct c_ctx *ctx, struct c_result *r)
{
    at_canary(ctx, r, "udp4", "udp4-loopback");
}

void c_probe_udp_ipv6(struct c_ctx *ctx, struct c_result *r)
{
    at_canary(ctx, r, "udp6", "udp6-loopback");
}

void c_probe_netns(struct c_ctx *ctx, struct c_result *r)
{
    at_canary(ctx, r, "tcp4", "tcp4-netns");
}

/* ICMP echo requests to the namespace canary's address, on a raw socket and on the ping socket
 * (one fresh sandbox each), counted by the canary's raw ICMP socket there: a sandbox that lets
 * ICMP out is caught even when no reply comes back. */
void c_probe_icmp_netns(struct c_ctx *ctx, struct c_result *r)
{
    struct c_canary *c = canaries(ctx, r);
    const struct c_canary_listener *l;
    static const char *const attempts[] = {"icmp-raw", "icmp-ping"};
    struct c_sbx_out o;
    unsigned heard;
    int open_ = 0;

    if (c == NULL)
        return;
    l = c_canary_find(c, "icmp4-netns");
    if (l == NULL) {
        c_result_set(r, C_SKIPPED, "no icmp4-netns canary here: %s", c->netns_why);
        return;
    }
    if (c_canary_sync(c, "icmp4-netns", &heard) < 0) {
        c_result_set(r, C_ERROR, "before the attempts: %s", sworn_err_msg());
        return;
    }
    for (size_t i = 0; i < 2; i++) {
        const char *args[] = {attempts[i], l->addr, NULL};

        if (inside(ctx, r, args, NULL, 0, &o) < 0)
            return;
        open_ += o.verdict == C_V_OPEN;
    }
    if (c_canary_sync(c, "icmp4-netns", &heard) < 0) {
        c_result_set(r, C_ERROR, "after the attempts: %s", sworn_err_msg());
        return;
    }
    c_evidence(r, "canary icmp4-netns heard %u echo request(s) besides the runner's markers",
               heard);
    if (open_ > 0 || heard > 0)
        c_result_set(r, C_FAIL,
                     "ICMP got out of the sandbox: %d attempt(s) open; the canary heard %u", open_,
                     heard);
    else
        c_result_set(r, C_PASS,
                     "no echo request reached the canary, and both attempts were blocked");
}

void c_probe_abstract_socket(struct c_ctx *ctx, struct c_result *r)
{
    struct c_canary *c = canaries(ctx, r);
    const struct c_canary_listener *l;

    if (c == NULL)
        return;
    l = c_canary_find(c, "unix-abstract");
    if (l == NULL) {
        c_result_set(r, C_ERROR, "no abstract socket canary");
        return;
    }
    const char *args[] = {"unix-abstract", l->addr, NULL};
    const char *labels[] = {"unix-abstract", NULL};

    escape(ctx, r, args, labels, NULL, 0);
}

/* A plain HTTP request straight at the loopback canary, as curl --noproxy '*' (or a client with
 * the proxy variables unset) sends it. */
void c_probe_noproxy(struct c_ctx *ctx, struct c_result *r)
{
    struct c_canary *c = canaries(ctx, r);
    const struct c_canary_listener *l;
    char port[8];

    if (c == NULL)
        return;
    l = c_canary_find(c, "tcp4-loopback");
    snprintf(port, sizeof(port), "%u", l != NULL ? l->port : 0);
    const char *args[] = {"http", "127.0.0.1", port,
                          "GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n",
                          NULL};
    const char *labels[] = {"tcp4-loopback", NULL};

    escape(ctx, r, args, labels, NULL, 0);
}

/* Descriptors handed to the sandbox command on purpose: a host folder (the scratch folder) and a
 * connection to the abstract canary; the probe lists every descriptor beyond 0, 1 and 2. */
void c_probe_leaked_fds(struct c_ctx *ctx, struct c_result *r)
{
    struct c_canary *c = canaries(ctx, r);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    const struct c_canary_listener *l;
    int leak[2] = {-1, -1};
    struct c_sbx_out o;
    unsigned heard;

    if (c == NULL)
        return;
    l = c_canary_find(c, "unix-abstract");
    leak[0] = open(ctx->scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    leak[1] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memcpy(sun.sun_path + 1, l->addr, strlen(l->addr));
    if (leak[0] < 0 || leak[1] < 0 ||
        connect(leak[1], (struct sockaddr *)&sun,
                (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(l->addr))) != 0) {
        c_result_set(r, C_ERROR, "the descriptors to leak: %s", strerror(errno));
        goto done;
    }
    (void)c_canary_sync(c, "unix-abstract", &heard); /* our own connection, logged: skip it */
    c_evidence(r,
               "handed to the sandbox command open: descriptor %d (%s), %d (a connection to "
               "the abstract canary)",
               leak[0], ctx->scratch, leak[1]);
    const char *args[] = {"fds", NULL};

    if (inside(ctx, r, args, leak, 2, &o) < 0)
        goto done;
    if (o.verdict == C_V_OPEN)
        c_result_set(r, C_FAIL, "a descriptor of the host reached the agent: \"%s\"", o.line);
    else
        c_result_set(r, C_PASS, "no descriptor beyond 0, 1 and 2 reached the agent (\"%s\")",
                     o.line);
done:
    for (int i = 0; i < 2; i++)
        if (leak[i] >= 0)
            close(leak[i]);
}

/* ---- socket: a call the host can make, refused inside ---- */

static void socket_probe(struct c_ctx *ctx, struct c_result *r, const char *const *args,
                         const char *what)
{
    struct c_sbx_out h, o;

    if (state(ctx, r) == NULL)
        return;
    if (c_sbx_host(ctx, args, &h) < 0) {
        c_result_set(r, C_ERROR, "the probe program did not run on the host: %s", sworn_err_msg());
        return;
    }
    c_evidence(r, "on the host (positive control): exit %d, \"%s\"", h.status, h.line);
    if (h.verdict != C_V_OPEN) {
        c_result_set(r, C_SKIPPED,
                     "the host itself cannot %s (\"%s\"): a refusal inside would mean nothing",
                     what, h.line);
        return;
    }
    if (inside(ctx, r, args, NULL, 0, &o) < 0)
        return;
    if (o.verdict == C_V_OPEN)
        c_result_set(r, C_FAIL, "the agent can %s: \"%s\"", what, o.line);
    else
        c_result_set(r, C_PASS, "the agent cannot %s (\"%s\")", what, o.line);
}

#define SOCKET_PROBE(fn, what, ...)                                                                \
    void fn(struct c_ctx *ctx, struct c_result *r)                                                 \
    {                                                                                              \
        const char *args[] = {__VA_ARGS__, NULL};                                                  \
        socket_probe(ctx, r, args, what);                                                          \
    }

SOCKET_PROBE(c_probe_raw4, "open a raw IPv4 socket", "raw4")
SOCKET_PROBE(c_probe_raw6, "open a raw IPv6 socket", "raw6")
SOCKET_PROBE(c_probe_packet, "open a packet socket", "packet")
SOCKET_PROBE(c_probe_vsock, "open a vsock socket", "vsock")
SOCKET_PROBE(c_probe_icmp, "send an ICMP echo on a raw socket", "icmp-raw", "127.0.0.1")
SOCKET_PROBE(c_probe_netlink, "list a network interface besides lo", "netlink-ifaces")
SOCKET_PROBE(c_probe_dns_lookup, "resolve a public name (example.com)", "resolve", "example.com")

/* The host's own resolver: the first IPv4 nameserver of the host's /etc/resolv.conf, asked over
 * UDP port 53 (a DNS query for example.com). The host must get an answer first. */
void c_probe_resolver_udp(struct c_ctx *ctx, struct c_result *r)
{
    char line[512], ns[64] = "";
    FILE *f;
    unsigned a, b, c, d;

    if (state(ctx, r) == NULL)
        return;
    f = fopen("/etc/resolv.conf", "re");
    if (f == NULL) {
        c_result_set(r, C_SKIPPED, "the host has no /etc/resolv.conf: %s", strerror(errno));
        return;
    }
    while (ns[0] == '\0' && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, " nameserver %u.%u.%u.%u", &a, &b, &c, &d) == 4 && a < 256 && b < 256 &&
            c < 256 && d < 256)
            snprintf(ns, sizeof(ns), "%u.%u.%u.%u", a, b, c, d);
    fclose(f);
    if (ns[0] == '\0') {
        c_result_set(r, C_SKIPPED, "the host's /etc/resolv.conf names no IPv4 nameserver");
        return;
    }
    c_evidence(r, "the host's resolver: %s, UDP port 53", ns);
    const char *args[] = {"udp4", ns, "53", NULL};

    socket_probe(ctx, r, args, "get an answer from the host's resolver over UDP");
}

/*
 * DNS rebinding: the runner serves sandbox.dns_rebinding.name from its own resolver (c_dns.h:
 * internal addresses only, TTL 0), which the operator made the proxy's (upstream.nameservers),
 * and the agent asks the proxy for http://NAME:PORT/ with PORT the loopback canary's, once per
 * fresh sandbox, until every address of the schedule was served (at most REBIND_MAX requests).
 * Each request must get the proxy's own answer or a close, and the loopback canaries must hear
 * nothing. No query at the runner's resolver is an error: nothing was tried.
 */
#define REBIND_MAX 8
#define REBIND_PATH "/conformance/dns-rebinding"

static void absolute(char *out, size_t cap, const char *method, const char *host, unsigned port,
                     const char *path, const char *extra);

static int all_served(const struct c_dns_counts *k)
{
    for (size_t i = 0; i < C_DNS_ANSWERS; i++)
        if (k->served[i] == 0)
            return 0;
    return 1;
}

/* The canaries the rebound addresses lead to: 127.0.0.1's and ::1's (when it binds). */
static size_t rebind_labels(const struct c_canary *c, const char **labels)
{
    size_t n = 0;

    labels[n++] = "tcp4-loopback";
    if (c_canary_find(c, "tcp6-loopback") != NULL)
        labels[n++] = "tcp6-loopback";
    labels[n] = NULL;
    return n;
}

void c_probe_dns_rebinding(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    struct c_canary *c;
    const struct c_canary_listener *l;
    const char *labels[3];
    struct c_dns_server dns;
    struct c_dns_counts k;
    char req[REQ_MAX], port[8], seen[sizeof(((struct c_sbx_out *)0)->line)] = "";
    unsigned heard, total = 0;
    /* Each request, judged by what it got: an upstream's answer (opened); the proxy's own
       refusal of the addresses (refused) or a close (closed); the proxy's own answer after it
       went, or tried to go, upstream (tried: it kept an internal address); the policy's deny or
       another answer of the proxy's, or a request that brought the resolver no question (not
       tested); no answer at all (unanswered). */
    int opened = 0, refused = 0, closed = 0, tried = 0, denied = 0, untested = 0, unanswered = 0;
    int requests = 0;
    uint64_t before = 0;

    if (state(ctx, r) == NULL)
        return;
    if (!x->has_dns_rebinding) {
        c_result_set(r, C_SKIPPED,
                     "not probed: the deployment file has no sandbox.dns_rebinding (a resolver "
                     "the runner serves, which the proxy's upstream.nameservers must name, and a "
                     "name the policy allows on any port)");
        return;
    }
    c = canaries(ctx, r);
    if (c == NULL)
        return;
    l = c_canary_find(c, "tcp4-loopback");
    if (l == NULL) {
        c_result_set(r, C_ERROR, "no tcp4-loopback canary");
        return;
    }
    rebind_labels(c, labels);
    if (c_dns_start(&dns, x->dns_listen, x->dns_port, x->dns_name) < 0) {
        c_result_set(r, C_ERROR, "%s", sworn_err_msg());
        return;
    }
    c_evidence(r,
               "the runner's resolver: %s%s%s port %u (UDP), answering %s with internal "
               "addresses only, TTL 0",
               strchr(x->dns_listen, ':') != NULL ? "[" : "", x->dns_listen,
               strchr(x->dns_listen, ':') != NULL ? "]" : "", (unsigned)x->dns_port, x->dns_name);
    for (size_t i = 0; labels[i] != NULL; i++)
        if (c_canary_sync(c, labels[i], &heard) < 0) {
            c_result_set(r, C_ERROR, "before the requests: %s", sworn_err_msg());
            goto done;
        }
    absolute(req, sizeof(req), "GET", x->dns_name, l->port, REBIND_PATH, "");
    snprintf(port, sizeof(port), "%u", x->proxy.port);
    for (;;) {
        const char *args[] = {"http", x->proxy.host, port, req, NULL};
        struct c_sbx_out o;
        int asked;

        if (inside(ctx, r, args, NULL, 0, &o) < 0)
            goto done;
        requests++;
        c_dns_read(&dns, &k);
        asked = k.questions > before;
        before = k.questions;
        if (o.verdict == C_V_OPEN)
            opened++;
        else if (strstr(o.line, " PROXY") != NULL && strstr(o.line, ":effect=deny") != NULL)
            denied++;
        else if (strstr(o.line, " PROXY") != NULL &&
                 (strstr(o.line, ":upstream=connect ") != NULL ||
                  strstr(o.line, ":upstream=tls ") != NULL)) {
            tried++;
            if (tried == 1)
                snprintf(seen, sizeof(seen), "%s", o.line);
        } else if (!asked)
            untested++;
        else if (strstr(o.line, " PROXY") != NULL &&
                 strstr(o.line, ":upstream=refused-address ") != NULL)
            refused++;
        else if (strstr(o.line, " CLOSED") != NULL)
            closed++;
        else if (strstr(o.line, " PROXY") != NULL)
            untested++;
        else
            unanswered++;
        if (k.questions == 0 || all_served(&k) || requests >= REBIND_MAX)
            break;
    }
    for (size_t i = 0; labels[i] != NULL; i++) {
        if (c_canary_sync(c, labels[i], &heard) < 0) {
            c_result_set(r, C_ERROR, "after the requests: %s", sworn_err_msg());
            goto done;
        }
        c_evidence(r, "canary %s heard %u event(s) besides the runner's markers", labels[i], heard);
        total += heard;
    }
    c_evidence(r,
               "the runner's resolver: %llu datagram(s), %llu question(s) for %s answered, %llu "
               "refused",
               (unsigned long long)k.datagrams, (unsigned long long)k.questions, x->dns_name,
               (unsigned long long)k.refused);
    for (size_t i = 0; i < C_DNS_ANSWERS; i++)
        c_evidence(r, "answered %s %s: %llu time(s)",
                   c_dns_answers[i].type == C_DNS_TYPE_A ? "A" : "AAAA", c_dns_answers[i].text,
                   (unsigned long long)k.served[i]);
    c_evidence(r,
               "%d request(s): %d refused by the proxy for their addresses, %d closed, %d "
               "answered by an upstream, %d answered by the proxy after it went upstream, %d "
               "denied by the policy, %d not resolved through the runner's resolver, %d "
               "unanswered",
               requests, refused, closed, opened, tried, denied, untested, unanswered);
    if (opened > 0 || total > 0 || tried > 0)
        c_result_set(r, C_FAIL,
                     "a rebound name reached an internal address: %d of %d request(s) got an "
                     "upstream's answer, %d the proxy's answer after it connected or tried to "
                     "connect to an address the runner's resolver gave (\"%s\"); the loopback "
                     "canaries heard %u",
                     opened, requests, tried, seen, total);
    else if (k.questions == 0 || denied == requests)
        c_result_set(
            r, C_ERROR, "the runner's resolver got no question for %s (%llu datagram(s)): %s",
            x->dns_name, (unsigned long long)k.datagrams,
            denied == requests ? "the policy denies the name (allow GET http://NAME/** on any port)"
                               : "the proxy does not use the runner's resolver: set its "
                                 "upstream.nameservers to sandbox.dns_rebinding.listen");
    else if (denied + untested > 0)
        c_result_set(r, C_ERROR,
                     "%d of %d request(s) were not tried against the runner's answers (%d denied "
                     "by the policy, %d with no question at the runner's resolver or another "
                     "answer of the proxy's than its refusal of the addresses)",
                     denied + untested, requests, denied, untested);
    else if (unanswered > 0)
        c_result_set(r, C_ERROR, "%d of %d request(s) got no answer from the proxy", unanswered,
                     requests);
    else
        c_result_set(r, C_PASS,
                     "%d request(s) for %s, which resolved to internal addresses only: each got "
                     "the proxy's own refusal of those addresses or a close, and the loopback "
                     "canaries heard nothing",
                     requests, x->dns_name);
done:
    c_dns_stop(&dns);
}

/* ---- files and processes of the host ---- */

void c_probe_host_file(struct c_ctx *ctx, struct c_result *r)
{
    struct c_sbx_state *s = state(ctx, r);
    struct c_sbx_out o;

    if (s == NULL)
        return;
    const char *args[] = {"read", s->marker, NULL};

    if (inside(ctx, r, args, NULL, 0, &o) < 0)
        return;
    if (o.verdict == C_V_OPEN)
        c_result_set(r, C_FAIL, "the agent read a host file (mode 0644): \"%s\"", o.line);
    else
        c_result_set(r, C_PASS, "the host file is out of reach (\"%s\")", o.line);
}

void c_probe_proc_root(struct c_ctx *ctx, struct c_result *r)
{
    struct c_sbx_state *s = state(ctx, r);
    struct c_sbx_out o;

    if (s == NULL)
        return;
    const char *args[] = {"proc-root", "all", s->marker, NULL};

    if (inside(ctx, r, args, NULL, 0, &o) < 0)
        return;
    if (o.verdict == C_V_OPEN)
        c_result_set(r, C_FAIL, "a host file was read through /proc/PID/root: \"%s\"", o.line);
    else
        c_result_set(r, C_PASS, "no /proc/PID/root reaches the host's files (\"%s\")", o.line);
}

/* One attempt per listed path; any OPEN fails. */
static void each_path(struct c_ctx *ctx, struct c_result *r, const char *attempt,
                      const char (*paths)[C_DEPLOY_PATH_MAX], size_t n, const char *key)
{
    struct c_sbx_out o;
    size_t open_ = 0;

    if (state(ctx, r) == NULL)
        return;
    if (n == 0) {
        c_result_set(r, C_SKIPPED, "the deployment file lists no sandbox.%s", key);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *args[] = {attempt, paths[i], NULL};

        if (inside(ctx, r, args, NULL, 0, &o) < 0)
            return;
        open_ += o.verdict == C_V_OPEN;
    }
    if (open_ > 0)
        c_result_set(r, C_FAIL, "%zu of the %zu paths of sandbox.%s are open to the agent (%s)",
                     open_, n, key, attempt);
    else
        c_result_set(r, C_PASS, "none of the %zu paths of sandbox.%s is open to the agent (%s)", n,
                     key, attempt);
}

void c_probe_control_sockets(struct c_ctx *ctx, struct c_result *r)
{
    each_path(ctx, r, "unix", ctx->dep->sbx.control_sockets, ctx->dep->sbx.ncontrol_sockets,
              "control_sockets");
}

void c_probe_control_read(struct c_ctx *ctx, struct c_result *r)
{
    each_path(ctx, r, "read", ctx->dep->sbx.control_paths, ctx->dep->sbx.ncontrol_paths,
              "control_paths");
}

void c_probe_control_write(struct c_ctx *ctx, struct c_result *r)
{
    each_path(ctx, r, "write", ctx->dep->sbx.control_paths, ctx->dep->sbx.ncontrol_paths,
              "control_paths");
}

/* The pids of the processes running one of sandbox.control_binaries (/proc/PID/exe), spaced. */
static size_t control_pids(const struct c_deploy_sandbox *x, char *out, size_t cap)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t n = 0, len = 0;

    out[0] = '\0';
    while (d != NULL && (e = readdir(d)) != NULL) {
        char link[300], exe[C_DEPLOY_PATH_MAX];
        ssize_t k;

        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(link, sizeof(link), "/proc/%s/exe", e->d_name);
        k = readlink(link, exe, sizeof(exe) - 1);
        if (k <= 0)
            continue;
        exe[k] = '\0';
        for (size_t i = 0; i < x->ncontrol_binaries; i++)
            if (strcmp(exe, x->control_binaries[i]) == 0 && len + strlen(e->d_name) + 2 < cap) {
                len += (size_t)snprintf(out + len, cap - len, "%s%s", n > 0 ? " " : "", e->d_name);
                n++;
            }
    }
    if (d != NULL)
        closedir(d);
    return n;
}

static void control_processes(struct c_ctx *ctx, struct c_result *r, const char *attempt,
                              const char *what)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char pids[PIDS_TEXT_MAX], *save = NULL;
    const char *args[C_SBX_ARGS_MAX + 1];
    size_t n = 0, k = 0;
    struct c_sbx_out o;

    if (state(ctx, r) == NULL)
        return;
    if (x->ncontrol_binaries == 0) {
        c_result_set(r, C_SKIPPED, "the deployment file lists no sandbox.control_binaries");
        return;
    }
    n = control_pids(x, pids, sizeof(pids));
    if (n == 0) {
        c_result_set(r, C_ERROR, "no process runs any of sandbox.control_binaries");
        return;
    }
    c_evidence(r, "control-plane processes: %s", pids);
    args[k++] = attempt;
    for (char *t = strtok_r(pids, " ", &save); t != NULL && k < C_SBX_ARGS_MAX;
         t = strtok_r(NULL, " ", &save))
        args[k++] = t;
    args[k] = NULL;
    if (inside(ctx, r, args, NULL, 0, &o) < 0)
        return;
    if (o.verdict == C_V_OPEN)
        c_result_set(r, C_FAIL, "the agent can %s a control-plane process: \"%s\"", what, o.line);
    else
        c_result_set(r, C_PASS,
                     "the agent cannot %s any of the %zu control-plane processes "
                     "(\"%s\")",
                     what, n, o.line);
}

void c_probe_signal(struct c_ctx *ctx, struct c_result *r)
{
    control_processes(ctx, r, "signal0", "signal");
}

void c_probe_trace(struct c_ctx *ctx, struct c_result *r)
{
    control_processes(ctx, r, "seize", "trace");
}

/* A file and a process left by one task must be gone for the next. */
void c_probe_ephemeral(struct c_ctx *ctx, struct c_result *r)
{
    unsigned char rnd[4];
    char tag[12], host_file[64];
    struct c_sbx_out o;
    struct stat st;
    int left_on_host = 0;

    if (state(ctx, r) == NULL)
        return;
    if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
        c_result_set(r, C_ERROR, "no random bytes");
        return;
    }
    snprintf(tag, sizeof(tag), "%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3]);
    const char *first[] = {"linger", tag, NULL}, *second[] = {"left", tag, NULL};

    if (c_sbx_run(ctx, first, NULL, 0, &o) < 0 || strncmp(o.line, "LEFT ", 5) != 0) {
        c_result_set(r, C_ERROR, "the first task did not leave its file and process: \"%s\"",
                     o.line);
        return;
    }
    c_evidence(r, "first task, sandbox %s: \"%s\"", o.name, o.line);
    if (inside(ctx, r, second, NULL, 0, &o) < 0)
        return;
    /* What a sandbox that is not one leaves on the host: found and removed here (the process by
     * its pid, found by the name the probe gave it). */
    snprintf(host_file, sizeof(host_file), "/tmp/sworn-conformance-%s", tag);
    if (lstat(host_file, &st) == 0) {
        left_on_host = 1;
        unlink(host_file);
        c_evidence(r, "left on the host: %s (removed)", host_file);
    }
    {
        const char *a[] = {"left", tag, NULL};
        struct c_sbx_out h;
        char *p;

        if (c_sbx_host(ctx, a, &h) == 0 && (p = strstr(h.line, "process=")) != NULL) {
            long pid = strtol(p + 8, NULL, 10);

            left_on_host = 1;
            if (pid > 1)
                kill((pid_t)pid, SIGKILL);
            c_evidence(r, "left on the host: process %ld (killed)", pid);
        }
    }
    if (o.verdict == C_V_OPEN || left_on_host)
        c_result_set(r, C_FAIL,
                     "what one task left is still there for the next or on the host: "
                     "\"%s\"",
                     o.line);
    else
        c_result_set(r, C_PASS, "the next task found neither the file nor the process (\"%s\")",
                     o.line);
}

/* ---- T1: credentials ---- */

static int hashes(const struct c_deploy_sandbox *x, char *out, size_t cap)
{
    size_t len = 0;

    out[0] = '\0';
    for (size_t i = 0; i < x->ncredential; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i > 0 ? "," : "",
                                x->credential_sha256[i]);
    return x->ncredential > 0 ? 0 : -1;
}

/* A scan inside: found is a failure; nothing scanned is an error (it did not look). */
static void cred_scan(struct c_ctx *ctx, struct c_result *r, const char *const *args)
{
    struct c_sbx_out o;

    if (inside(ctx, r, args, NULL, 0, &o) < 0)
        return;
    if (o.verdict == C_V_OPEN)
        c_result_set(r, C_FAIL, "a real credential value is within the agent's reach: \"%s\"",
                     o.line);
    else if (strstr(o.line, ":scanned=0 ") != NULL)
        c_result_set(r, C_ERROR, "the probe found nothing to look at (\"%s\")", o.line);
    else if (strstr(o.line, ":cut=") != NULL && strstr(o.line, ":cut=0:") == NULL)
        c_result_set(r, C_ERROR,
                     "the walk ended at its budget in some folders: not everything readable was "
                     "looked at (\"%s\")",
                     o.line);
    else
        c_result_set(r, C_PASS, "no candidate hashed to a credential digest (\"%s\")", o.line);
}

static int cred_args(struct c_ctx *ctx, struct c_result *r, char *h)
{
    if (state(ctx, r) == NULL)
        return -1;
    if (hashes(&ctx->dep->sbx, h, HASHES_MAX) < 0) {
        c_result_set(r, C_SKIPPED, "the deployment file lists no sandbox.credential_sha256");
        return -1;
    }
    return 0;
}

void c_probe_cred_env(struct c_ctx *ctx, struct c_result *r)
{
    char h[HASHES_MAX];

    if (cred_args(ctx, r, h) < 0)
        return;
    const char *args[] = {"cred-env", h, NULL};

    cred_scan(ctx, r, args);
}

void c_probe_cred_proc(struct c_ctx *ctx, struct c_result *r)
{
    char h[HASHES_MAX];

    if (cred_args(ctx, r, h) < 0)
        return;
    const char *args[] = {"cred-proc", h, NULL};

    cred_scan(ctx, r, args);
}

void c_probe_cred_files(struct c_ctx *ctx, struct c_result *r)
{
    char h[HASHES_MAX];

    if (cred_args(ctx, r, h) < 0)
        return;
    /* Small folders first: the budget of the walk (the probe program's) ends in the big ones. */
    const char *args[] = {"cred-files", h,      "/work", "/etc", "/home", "/root", "/run",
                          "/opt",       "/srv", "/mnt",  "/tmp", "/var",  NULL};

    cred_scan(ctx, r, args);
}

/* ---- proxy: requests as the agent sends them ---- */

static void absolute(char *out, size_t cap, const char *method, const char *host, unsigned port,
                     const char *path, const char *extra)
{
    snprintf(out, cap,
             "%s http://%s:%u%s HTTP/1.1\\r\\nHost: %s:%u\\r\\n%sConnection: close\\r\\n\\r\\n",
             method, host, port, path, host, port, extra);
}

/* The control: the allowed URL through the proxy gets an upstream's answer. 0, or -1 with r. */
static int proxy_control(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    struct c_sbx_state *s = state(ctx, r);
    char req[REQ_MAX], port[8];
    struct c_sbx_out o;

    if (s == NULL)
        return -1;
    if (!x->has_allowed || !x->has_denied) {
        c_result_set(r, C_SKIPPED,
                     "the deployment file has no sandbox.allowed and "
                     "sandbox.denied");
        return -1;
    }
    if (s->proxy_control == 0) {
        absolute(req, sizeof(req), "GET", x->allowed.host, x->allowed.port, x->allowed.path, "");
        snprintf(port, sizeof(port), "%u", x->proxy.port);
        const char *args[] = {"http", x->proxy.host, port, req, NULL};

        if (c_sbx_run(ctx, args, NULL, 0, &o) < 0)
            snprintf(s->proxy_control_line, sizeof(s->proxy_control_line), "%s", sworn_err_msg());
        else
            snprintf(s->proxy_control_line, sizeof(s->proxy_control_line), "%s", o.line);
        s->proxy_control = o.verdict == C_V_OPEN ? 1 : -1;
    }
    c_evidence(r, "control: the allowed URL through the proxy: \"%s\"", s->proxy_control_line);
    if (s->proxy_control < 0) {
        c_result_set(r, C_ERROR,
                     "the allowed URL did not get an upstream's answer through the proxy from "
                     "inside: a refusal of the variant would mean nothing");
        return -1;
    }
    return 0;
}

/* Send req (escaped) to the proxy from inside: the proxy's own answer or a close passes. */
static void proxy_probe(struct c_ctx *ctx, struct c_result *r, const char *req, const char *what)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char port[8];
    struct c_sbx_out o;

    snprintf(port, sizeof(port), "%u", x->proxy.port);
    const char *args[] = {"http", x->proxy.host, port, req, NULL};

    if (inside(ctx, r, args, NULL, 0, &o) < 0)
        return;
    if (o.verdict == C_V_OPEN)
        c_result_set(r, C_FAIL, "%s reached an upstream: \"%s\"", what, o.line);
    else if (strstr(o.line, " PROXY") != NULL || strstr(o.line, " CLOSED") != NULL)
        c_result_set(r, C_PASS, "%s: the proxy refused it itself (\"%s\")", what, o.line);
    else
        c_result_set(r, C_ERROR, "%s: no answer from the proxy (\"%s\")", what, o.line);
}

/* The denied URL with its host written another way (numeric forms need a dotted quad). */
static void denied_host(struct c_ctx *ctx, struct c_result *r, int form, const char *what)
{
    const struct c_url *d = &ctx->dep->sbx.denied;
    unsigned a, b, c, e;
    char host[300], req[REQ_MAX];

    if (proxy_control(ctx, r) < 0)
        return;
    if (form != 4 && sscanf(d->host, "%u.%u.%u.%u", &a, &b, &c, &e) != 4) {
        c_result_set(r, C_SKIPPED, "sandbox.denied's host is not a dotted quad");
        return;
    }
    switch (form) {
    case 0:
        snprintf(host, sizeof(host), "%lu",
                 (unsigned long)a << 24 | (unsigned long)b << 16 | (unsigned long)c << 8 | e);
        break;
    case 1:
        snprintf(host, sizeof(host), "0%o.0%o.0%o.0%o", a, b, c, e);
        break;
    case 2:
        snprintf(host, sizeof(host), "0x%x.0x%x.0x%x.0x%x", a, b, c, e);
        break;
    case 3:
        snprintf(host, sizeof(host), "[::ffff:%u.%u.%u.%u]", a, b, c, e);
        break;
    default:
        snprintf(host, sizeof(host), "%s.", d->host);
        break;
    }
    absolute(req, sizeof(req), "GET", host, d->port, d->path, "");
    c_evidence(r, "the denied URL as http://%s:%u%s", host, d->port, d->path);
    proxy_probe(ctx, r, req, what);
}

void c_probe_host_decimal(struct c_ctx *ctx, struct c_result *r)
{
    denied_host(ctx, r, 0, "the denied address in decimal");
}

void c_probe_host_octal(struct c_ctx *ctx, struct c_result *r)
{
    denied_host(ctx, r, 1, "the denied address in octal");
}

void c_probe_host_hex(struct c_ctx *ctx, struct c_result *r)
{
    denied_host(ctx, r, 2, "the denied address in hex");
}

void c_probe_host_mapped(struct c_ctx *ctx, struct c_result *r)
{
    denied_host(ctx, r, 3, "the denied address as IPv4-mapped IPv6");
}

void c_probe_host_trailing_dot(struct c_ctx *ctx, struct c_result *r)
{
    denied_host(ctx, r, 4, "the denied host with a trailing dot");
}

/* The denied path reached from the allowed path's first segment through "%2e%2e". */
void c_probe_dot_segments(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char path[2200], req[REQ_MAX];
    size_t seg;

    if (proxy_control(ctx, r) < 0)
        return;
    seg = strcspn(x->allowed.path + 1, "/") + 1;
    snprintf(path, sizeof(path), "%.*s/%%2e%%2e%s", (int)seg, x->allowed.path, x->denied.path);
    absolute(req, sizeof(req), "GET", x->denied.host, x->denied.port, path, "");
    c_evidence(r, "the denied path as %s", path);
    proxy_probe(ctx, r, req, "the denied path behind percent-encoded dot segments");
}

void c_probe_host_mismatch(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char req[REQ_MAX];

    if (proxy_control(ctx, r) < 0)
        return;
    snprintf(req, sizeof(req),
             "GET http://%s:%u%s HTTP/1.1\\r\\nHost: %s:%u\\r\\nConnection: close\\r\\n\\r\\n",
             x->denied.host, x->denied.port, x->denied.path, x->allowed.host, x->allowed.port);
    proxy_probe(ctx, r, req, "the denied URL with the allowed URL's Host field");
}

void c_probe_smuggle_cl_te(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char req[REQ_MAX], inner[1400];

    if (proxy_control(ctx, r) < 0)
        return;
    snprintf(inner, sizeof(inner), "GET %s HTTP/1.1\\r\\nHost: %s:%u\\r\\n\\r\\n", x->denied.path,
             x->denied.host, x->denied.port);
    snprintf(req, sizeof(req),
             "POST http://%s:%u%s HTTP/1.1\\r\\nHost: %s:%u\\r\\nContent-Length: 5\\r\\n"
             "Transfer-Encoding: chunked\\r\\nConnection: close\\r\\n\\r\\n0\\r\\n\\r\\n%s",
             x->allowed.host, x->allowed.port, x->allowed.path, x->allowed.host, x->allowed.port,
             inner);
    proxy_probe(ctx, r, req, "a request with Content-Length and chunked (CL.TE)");
}

void c_probe_smuggle_double_cl(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char req[REQ_MAX];

    if (proxy_control(ctx, r) < 0)
        return;
    snprintf(req, sizeof(req),
             "POST http://%s:%u%s HTTP/1.1\\r\\nHost: %s:%u\\r\\nContent-Length: 0\\r\\n"
             "Content-Length: 40\\r\\nConnection: close\\r\\n\\r\\nGET %s HTTP/1.1\\r\\n\\r\\n",
             x->allowed.host, x->allowed.port, x->allowed.path, x->allowed.host, x->allowed.port,
             x->denied.path);
    proxy_probe(ctx, r, req, "a request with two Content-Length fields");
}

void c_probe_websocket_denied(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_url *d = &ctx->dep->sbx.denied;
    char req[REQ_MAX];

    if (proxy_control(ctx, r) < 0)
        return;
    absolute(req, sizeof(req), "GET", d->host, d->port, d->path,
             "Upgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Version: 13\\r\\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\n");
    proxy_probe(ctx, r, req, "a WebSocket upgrade to the denied URL");
}

void c_probe_h2_prior_knowledge(struct c_ctx *ctx, struct c_result *r)
{
    if (proxy_control(ctx, r) < 0)
        return;
    /* The HTTP/2 connection preface and an empty SETTINGS frame. */
    proxy_probe(ctx, r,
                "PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n\\x00\\x00\\x00\\x04\\x00\\x00\\x00\\x00"
                "\\x00",
                "HTTP/2 with prior knowledge");
}

/* Whether a cred-http answer shows a credential released and masked on its way back: an
 * upstream's answer (not the proxy's own) that does not show the token as sent and holds the
 * proxy's mask ('*' over the value) where the echo writes what it received. */
static int released_masked(const struct c_sbx_out *o)
{
    return strstr(o->line, ":own=0") != NULL && strstr(o->line, ":seen=0") != NULL &&
           strstr(o->line, ":masked=1") != NULL;
}

/*
 * Domain fronting in a tunnel: CONNECT to the allowed URL's host and port, then a TLS ClientHello
 * naming another server. The control, the same ClientHello without a server_name (accepted:
 * clients send none for an address), must get the proxy's ServerHello; the mismatch must get an
 * alert or a close. The name is the denied URL's host when it differs from the allowed one's,
 * else a name of the reserved .invalid domain (RFC 2606): any name but the CONNECT host's fronts.
 */
void c_probe_connect_sni(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char port[8], tport[8], sni[C_DEPLOY_HOST_MAX];
    struct c_sbx_out o;
    unsigned a, b, c, d;

    if (proxy_control(ctx, r) < 0)
        return;
    if (strcmp(x->denied.host, x->allowed.host) != 0 &&
        sscanf(x->denied.host, "%u.%u.%u.%u", &a, &b, &c, &d) != 4)
        snprintf(sni, sizeof(sni), "%s", x->denied.host);
    else
        snprintf(sni, sizeof(sni), "sworn-conformance-fronted.invalid");
    snprintf(port, sizeof(port), "%u", x->proxy.port);
    snprintf(tport, sizeof(tport), "%u", x->allowed.port);
    {
        const char *args[] = {"connect-tls", x->proxy.host, port, x->allowed.host,
                              tport,         "-",           NULL};

        if (inside(ctx, r, args, NULL, 0, &o) < 0)
            return;
        if (o.verdict != C_V_OPEN) {
            c_result_set(r, C_ERROR,
                         "the control, a CONNECT to the allowed host with a ClientHello naming no "
                         "server, got no ServerHello (\"%s\"): the proxy does not terminate TLS "
                         "there, so a refusal of the mismatch would mean nothing",
                         o.line);
            return;
        }
    }
    {
        const char *args[] = {"connect-tls", x->proxy.host, port, x->allowed.host,
                              tport,         sni,           NULL};

        if (inside(ctx, r, args, NULL, 0, &o) < 0)
            return;
    }
    if (o.verdict == C_V_OPEN)
        c_result_set(r, C_FAIL,
                     "a CONNECT to %s whose ClientHello names %s was answered with a ServerHello "
                     "(\"%s\")",
                     x->allowed.host, sni, o.line);
    else if (strstr(o.line, " ALERT") != NULL || strstr(o.line, " CLOSED") != NULL)
        c_result_set(r, C_PASS, "the ClientHello naming %s was refused (\"%s\")", sni, o.line);
    else
        c_result_set(r, C_ERROR, "the ClientHello naming %s got no judgeable answer (\"%s\")", sni,
                     o.line);
}

/* The status an answer line of connect-tls-http names ("status=S"), 0 when it names none. */
static int line_status(const char *line)
{
    const char *p = strstr(line, "status=");
    long v;

    if (p == NULL)
        return 0;
    v = strtol(p + 7, NULL, 10);
    return v > 0 && v < 1000 ? (int)v : 0;
}

/* One request inside a TLS session in a tunnel to the allowed URL's host and port, its Host
 * field authority (the denied path in origin-form; for the control, the allowed one's). */
static int tls_request(struct c_ctx *ctx, struct c_result *r, const char *path,
                       const char *authority, struct c_sbx_out *o)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char port[8], tport[8], req[REQ_MAX];
    unsigned a, b, c, d;
    /* A client names a host in SNI, never an address (RFC 6066 section 3). */
    const char *sni =
        sscanf(x->allowed.host, "%u.%u.%u.%u", &a, &b, &c, &d) == 4 ? "-" : x->allowed.host;

    snprintf(port, sizeof(port), "%u", x->proxy.port);
    snprintf(tport, sizeof(tport), "%u", x->allowed.port);
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\\r\\nHost: %s\\r\\nConnection: close\\r\\n\\r\\n",
             path, authority);
    const char *args[] = {
        "connect-tls-http", x->proxy.host, port, x->allowed.host, tport, sni, req, NULL};

    return inside(ctx, r, args, NULL, 0, o);
}

/*
 * Domain fronting inside a terminated tunnel: CONNECT to the allowed URL's host and port, a TLS
 * session with the proxy, then a request for the denied path whose Host field names another
 * server. The control, the allowed path with the allowed URL's Host in the same kind of tunnel,
 * must get an HTTP answer inside TLS (the proxy's own or an upstream's: either shows the proxy
 * terminates TLS there and reads what comes in it). The other servers: the denied URL's host and
 * port when they are not the allowed one's, then the runner's loopback canary (a proxy that goes
 * where Host says is heard there, whatever it answers). Each must get the proxy's own refusal or
 * a close, and the canary, synced before and after, must hear nothing.
 */
void c_probe_connect_host(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    struct c_sbx_out o;
    char allowed[C_DEPLOY_HOST_MAX + 8], hosts[2][C_DEPLOY_HOST_MAX + 8], seen[sizeof(o.line)];
    const struct c_canary_listener *l;
    struct c_canary *c;
    size_t n = 0, open_ = 0, unjudged = 0;
    unsigned heard;

    if (proxy_control(ctx, r) < 0 || (c = canaries(ctx, r)) == NULL)
        return;
    l = c_canary_find(c, "tcp4-loopback");
    if (l == NULL) {
        c_result_set(r, C_ERROR, "no tcp4-loopback canary");
        return;
    }
    snprintf(allowed, sizeof(allowed), "%s:%u", x->allowed.host, x->allowed.port);
    if (strcmp(x->denied.host, x->allowed.host) != 0 || x->denied.port != x->allowed.port)
        snprintf(hosts[n++], sizeof(hosts[0]), "%s:%u", x->denied.host, x->denied.port);
    snprintf(hosts[n++], sizeof(hosts[0]), "%s:%u", l->addr, l->port);
    if (tls_request(ctx, r, x->allowed.path, allowed, &o) < 0)
        return;
    if (line_status(o.line) == 0) {
        c_result_set(r, C_ERROR,
                     "the control, the allowed path with Host %s in a TLS session through a "
                     "CONNECT to it, got no HTTP answer (\"%s\"): the proxy does not terminate "
                     "TLS there, so a refusal of the mismatch would mean nothing",
                     allowed, o.line);
        return;
    }
    if (c_canary_sync(c, "tcp4-loopback", &heard) < 0) {
        c_result_set(r, C_ERROR, "before the attempts: %s", sworn_err_msg());
        return;
    }
    for (size_t i = 0; i < n; i++) {
        c_evidence(r, "in the tunnel to %s: GET %s with Host %s", allowed, x->denied.path,
                   hosts[i]);
        if (tls_request(ctx, r, x->denied.path, hosts[i], &o) < 0)
            return;
        /* The proxy's own answer to a failure upstream (":upstream=connect", "dns", ...) comes
           after an allow: the fronted request was let through, wherever it went. */
        if (o.verdict == C_V_OPEN ||
            (strstr(o.line, " PROXY") != NULL && strstr(o.line, ":upstream=") != NULL)) {
            if (open_++ == 0)
                snprintf(seen, sizeof(seen), "%s", o.line);
        } else if (strstr(o.line, " PROXY") == NULL && strstr(o.line, " CLOSED") == NULL) {
            if (open_ == 0 && unjudged == 0)
                snprintf(seen, sizeof(seen), "%s", o.line);
            unjudged++;
        }
    }
    if (open_ == 0 && unjudged == 0)
        snprintf(seen, sizeof(seen), "%s", o.line);
    if (c_canary_sync(c, "tcp4-loopback", &heard) < 0) {
        c_result_set(r, C_ERROR, "after the attempts: %s", sworn_err_msg());
        return;
    }
    c_evidence(r, "canary tcp4-loopback heard %u event(s) besides the runner's markers", heard);
    if (open_ > 0 || heard > 0)
        c_result_set(r, C_FAIL,
                     "a request in the tunnel to %s whose Host names another server went "
                     "through: %zu answered by other than the proxy, or by the proxy after it "
                     "went upstream (\"%s\"); the canary heard %u",
                     allowed, open_, seen, heard);
    else if (unjudged > 0)
        c_result_set(r, C_ERROR,
                     "%zu request(s) whose Host names another server got no judgeable answer in "
                     "the tunnel (\"%s\")",
                     unjudged, seen);
    else
        c_result_set(r, C_PASS,
                     "every request in the tunnel to %s whose Host names another server got the "
                     "proxy's own refusal or a close (\"%s\"); the canary heard nothing",
                     allowed, seen);
}

/* The symbolic tokens sent to the echo URL (allowed, configured for no credential): the answer
 * must show each token as sent and no credential. */
void c_probe_symbolic_unconfigured(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char h[HASHES_MAX], req[REQ_MAX], extra[C_DEPLOY_TOKEN_MAX + 40], port[8];
    struct c_sbx_out o;
    size_t bad = 0;

    if (cred_args(ctx, r, h) < 0)
        return;
    if (!x->has_echo || x->nsymbolic == 0) {
        c_result_set(r, C_SKIPPED,
                     "the deployment file has no sandbox.echo or no "
                     "sandbox.symbolic_tokens");
        return;
    }
    snprintf(port, sizeof(port), "%u", x->proxy.port);
    for (size_t i = 0; i < x->nsymbolic; i++) {
        snprintf(extra, sizeof(extra), "Authorization: Bearer %s\\r\\n", x->symbolic[i]);
        absolute(req, sizeof(req), "GET", x->echo.host, x->echo.port, x->echo.path, extra);
        const char *args[] = {"cred-http", h, x->proxy.host, port, req, x->symbolic[i], NULL};

        if (inside(ctx, r, args, NULL, 0, &o) < 0)
            return;
        if (o.verdict == C_V_OPEN || released_masked(&o))
            bad++;
        else if (strstr(o.line, ":seen=1") == NULL) {
            c_result_set(r, C_ERROR,
                         "the echo URL's answer does not show symbolic token %zu as sent: it "
                         "does not echo, or the token was changed (\"%s\")",
                         i + 1, o.line);
            return;
        }
    }
    if (bad > 0)
        c_result_set(r, C_FAIL,
                     "%zu symbolic token(s) were replaced by a real credential (it came back, or "
                     "came back masked)",
                     bad);
    else
        c_result_set(r, C_PASS,
                     "every symbolic token reached the echo URL as sent, and no "
                     "credential came back");
}

/*
 * The confused deputy: symbolic tokens of credentials the vault binds to other principals, sent
 * by this sandbox's principal to foreign_echo (inside those credentials' destinations, its
 * upstream echoing Authorization). The real value must not come back: the proxy's own refusal or
 * the token echoed as sent both show the credential was not released to this principal.
 */
void c_probe_foreign_token(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char h[HASHES_MAX], req[REQ_MAX], extra[C_DEPLOY_TOKEN_MAX + 40], port[8];
    struct c_sbx_out o;
    size_t bad = 0;

    if (cred_args(ctx, r, h) < 0)
        return;
    if (!x->has_foreign_echo || x->nforeign == 0) {
        c_result_set(r, C_SKIPPED,
                     "the deployment file has no sandbox.foreign_echo or no "
                     "sandbox.foreign_tokens");
        return;
    }
    snprintf(port, sizeof(port), "%u", x->proxy.port);
    if (x->nforeign_argv == 0)
        c_evidence(r, "no positive control: without sandbox.foreign_command a token that releases "
                      "nothing for anyone passes too");
    for (size_t i = 0; i < x->nforeign; i++) {
        snprintf(extra, sizeof(extra), "Authorization: Bearer %s\\r\\n", x->foreign[i]);
        absolute(req, sizeof(req), "GET", x->foreign_echo.host, x->foreign_echo.port,
                 x->foreign_echo.path, extra);
        const char *args[] = {"cred-http", h, x->proxy.host, port, req, x->foreign[i], NULL};

        /* The control: the token from its own principal's sandbox releases the credential (it
         * comes back, or masked), else a refusal from ours would mean nothing. */
        if (x->nforeign_argv > 0) {
            if (c_sbx_run_cmd(ctx, x->foreign_argv, x->nforeign_argv, args, NULL, 0, &o) < 0) {
                c_result_set(r, C_ERROR, "sandbox.foreign_command could not be run: %s",
                             sworn_err_msg());
                return;
            }
            c_evidence(r, "control, sandbox %s of sandbox.foreign_command: exit %d, \"%s\"", o.name,
                       o.status, o.line);
            if (o.verdict != C_V_OPEN && !released_masked(&o)) {
                c_result_set(r, C_ERROR,
                             "foreign token %zu released no credential even from "
                             "sandbox.foreign_command's sandbox (\"%s\"): a refusal to "
                             "sandbox.principal would mean nothing",
                             i + 1, o.line);
                return;
            }
        }
        if (inside(ctx, r, args, NULL, 0, &o) < 0)
            return;
        if (o.verdict == C_V_OPEN || released_masked(&o))
            bad++;
        else if (strstr(o.line, ":own=1") == NULL && strstr(o.line, ":seen=1") == NULL) {
            c_result_set(r, C_ERROR,
                         "foreign token %zu got neither the proxy's own answer nor the echo of the "
                         "token as sent (\"%s\"): the probe cannot tell what happened",
                         i + 1, o.line);
            return;
        }
    }
    if (bad > 0)
        c_result_set(r, C_FAIL,
                     "%zu token(s) of another principal's credential released the real value for "
                     "principal %s (it came back, or came back masked)",
                     bad, x->principal);
    else
        c_result_set(r, C_PASS,
                     "no token of another principal's credential released a real value to "
                     "principal %s",
                     x->principal);
}

/*
 * OAuth interception: the token request of oauth_body POSTed to oauth_token through the proxy, as
 * the agent sends it; the answer as the agent receives it must hold tokens, every one symbolic,
 * and no credential (docs/proxy.md, "OAuth token endpoints").
 */
void c_probe_oauth(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char h[HASHES_MAX], req[REQ_MAX + 2 * C_DEPLOY_FORM_MAX], body[2 * C_DEPLOY_FORM_MAX], port[8];
    struct c_sbx_out o;
    size_t bl = 0;
    int n;

    if (cred_args(ctx, r, h) < 0)
        return;
    if (!x->has_oauth_token) {
        c_result_set(r, C_SKIPPED,
                     "the deployment file has no sandbox.oauth_token and sandbox.oauth_body");
        return;
    }
    for (const char *p = x->oauth_body; *p != '\0'; p++) { /* the probe program unescapes '\\' */
        if (*p == '\\')
            body[bl++] = '\\';
        body[bl++] = *p;
    }
    body[bl] = '\0';
    n = snprintf(req, sizeof(req),
                 "POST http://%s:%u%s HTTP/1.1\\r\\nHost: %s:%u\\r\\nContent-Type: "
                 "application/x-www-form-urlencoded\\r\\nContent-Length: %zu\\r\\nConnection: "
                 "close\\r\\n\\r\\n%s",
                 x->oauth_token.host, x->oauth_token.port, x->oauth_token.path, x->oauth_token.host,
                 x->oauth_token.port, strlen(x->oauth_body), body);
    if (n < 0 || (size_t)n >= sizeof(req)) {
        c_result_set(r, C_ERROR, "the token request does not fit");
        return;
    }
    snprintf(port, sizeof(port), "%u", x->proxy.port);
    const char *args[] = {"oauth", h, x->proxy.host, port, req, NULL};

    if (inside(ctx, r, args, NULL, 0, &o) < 0)
        return;
    if (o.verdict == C_V_OPEN)
        c_result_set(r, C_FAIL,
                     "the token endpoint's answer reached the agent with a real "
                     "credential or token in it (\"%s\")",
                     o.line);
    else if (strstr(o.line, ":tokens=0:") != NULL)
        c_result_set(r, C_ERROR,
                     "the answer holds no token (\"%s\"): the grant failed, or oauth_token is not "
                     "a token endpoint, so nothing was intercepted to judge",
                     o.line);
    else
        c_result_set(r, C_PASS,
                     "every token of the token endpoint's answer reached the agent symbolic "
                     "(\"%s\")",
                     o.line);
}

/* ---- T4: the sandbox's requests in the record ---- */

/* What the record says of one sandbox: its SandboxStarted entry and its decisions. */
struct sbx_seen {
    const char *name, *principal;
    uint64_t start_index; /* of the SandboxStarted entry naming name (0: none seen) */
    int start_principal;  /* that entry names principal */
    size_t decisions;     /* decisions naming sandbox name */
    size_t good;          /* of them: principal, sandbox_start_index and effect as expected */
    int want_allow;       /* the effect expected of its decisions */
    char first_bad[256];  /* the first decision that is not good, and why */
};

static int seen_entry(void *arg, uint64_t index, const struct Sworn__V1__Entry *e)
{
    struct sbx_seen *s = arg;
    const Sworn__V1__Principal *p;

    if (e == NULL)
        return 0;
    if (e->kind_case == SWORN__V1__ENTRY__KIND_SANDBOX_STARTED &&
        strcmp(e->sandbox_started->name, s->name) == 0) {
        s->start_index = index;
        s->start_principal = strcmp(e->sandbox_started->principal, s->principal) == 0;
        return 0;
    }
    if (e->kind_case != SWORN__V1__ENTRY__KIND_DECISION || e->decision->request == NULL ||
        (p = e->decision->request->principal) == NULL || strcmp(p->sandbox, s->name) != 0)
        return 0;
    s->decisions++;
    if (strcmp(p->id, s->principal) != 0)
        snprintf(s->first_bad, sizeof(s->first_bad), "entry %llu names principal %.128s",
                 (unsigned long long)index, p->id);
    else if (p->sandbox_start_index == 0 || p->sandbox_start_index != s->start_index)
        snprintf(s->first_bad, sizeof(s->first_bad),
                 "entry %llu names sandbox_start_index %llu, not its SandboxStarted entry's (%llu)",
                 (unsigned long long)index, (unsigned long long)p->sandbox_start_index,
                 (unsigned long long)s->start_index);
    else if ((e->decision->effect == SWORN__V1__EFFECT__EFFECT_ALLOW) != s->want_allow)
        snprintf(s->first_bad, sizeof(s->first_bad), "entry %llu records effect %d",
                 (unsigned long long)index, (int)e->decision->effect);
    else
        s->good++;
    return 0;
}

/* One request from a fresh sandbox: the allowed one must get an upstream's answer, the denied one
 * the proxy's own refusal (else the request did not show what the record should hold). */
static int sandbox_request(struct c_ctx *ctx, struct c_result *r, const struct c_url *u, int allow,
                           struct c_sbx_out *o)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    char req[REQ_MAX], port[8];

    absolute(req, sizeof(req), "GET", u->host, u->port, u->path, "");
    snprintf(port, sizeof(port), "%u", x->proxy.port);
    const char *args[] = {"http", x->proxy.host, port, req, NULL};

    if (inside(ctx, r, args, NULL, 0, o) < 0)
        return -1;
    if (allow ? o->verdict != C_V_OPEN : strstr(o->line, " PROXY") == NULL) {
        c_result_set(r, C_ERROR,
                     "the %s URL from sandbox %s did not get %s (\"%s\"): the record would show "
                     "nothing",
                     allow ? "allowed" : "denied", o->name,
                     allow ? "an upstream's answer" : "the proxy's own refusal", o->line);
        return -1;
    }
    return 0;
}

/*
 * The allowed URL from one fresh sandbox and the denied URL from another, then CheckpointNow and
 * every entry of the record from the checkpoint taken before: each sandbox must have its
 * SandboxStarted entry (its name, sandbox.principal) and decisions naming its name, the principal
 * and that entry's index as sandbox_start_index, with the effect the proxy showed.
 */
void c_probe_sandbox_recorded(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy *dep = ctx->dep;
    struct sworn_checkpoint before, after;
    struct c_sbx_out oa, od;
    struct sbx_seen seen[2];
    uint64_t size;

    if (proxy_control(ctx, r) < 0)
        return;
    if (dep->admin_socket[0] == '\0') {
        c_result_set(r, C_SKIPPED,
                     "the deployment file has no admin_socket, to make decisiond export the "
                     "record after the requests");
        return;
    }
    if (c_record_checkpoint(dep->record, &before) < 0) {
        c_result_set(r, C_ERROR, "the record's checkpoint: %s", sworn_err_msg());
        return;
    }
    if (sandbox_request(ctx, r, &dep->sbx.allowed, 1, &oa) < 0 ||
        sandbox_request(ctx, r, &dep->sbx.denied, 0, &od) < 0)
        return;
    if (c_checkpoint_now(dep->admin_socket, &size) < 0 ||
        c_record_checkpoint(dep->record, &after) < 0) {
        c_result_set(r, C_ERROR, "the record after CheckpointNow: %s", sworn_err_msg());
        return;
    }
    c_evidence(r, "entries %llu..%llu of the record read (CheckpointNow: tree size %llu)",
               (unsigned long long)before.size, (unsigned long long)after.size,
               (unsigned long long)size);
    memset(seen, 0, sizeof(seen));
    seen[0].name = oa.name, seen[1].name = od.name;
    seen[0].want_allow = 1;
    for (int i = 0; i < 2; i++) {
        seen[i].principal = dep->sbx.principal;
        if (c_record_each(dep->record, after.size, before.size, seen_entry, &seen[i]) < 0) {
            c_result_set(r, C_ERROR, "the record: %s", sworn_err_msg());
            return;
        }
        c_evidence(r,
                   "sandbox %s: SandboxStarted at %llu (principal %s), %zu decision(s) naming it, "
                   "%zu as expected",
                   seen[i].name, (unsigned long long)seen[i].start_index,
                   seen[i].start_principal ? "as expected" : "other or none", seen[i].decisions,
                   seen[i].good);
    }
    for (int i = 0; i < 2; i++) {
        const char *what = i == 0 ? "allowed" : "denied";

        if (seen[i].start_index == 0 || !seen[i].start_principal)
            c_result_set(r, C_FAIL, "no SandboxStarted entry names sandbox %s of principal %s",
                         seen[i].name, seen[i].principal);
        else if (seen[i].decisions == 0)
            c_result_set(r, C_FAIL, "no decision in the record names sandbox %s (the %s request)",
                         seen[i].name, what);
        else if (seen[i].good < seen[i].decisions)
            c_result_set(r, C_FAIL, "the %s request of sandbox %s is not recorded as sent: %s",
                         what, seen[i].name, seen[i].first_bad);
        else
            continue;
        return;
    }
    c_result_set(r, C_PASS,
                 "both sandboxes' requests, the denial included, are in the record with "
                 "principal %s, their sandbox's name and its SandboxStarted index",
                 dep->sbx.principal);
}

/* ---- T3: decisiond's admin protocol on the agent's route out ---- */

static int policy_loaded(void *arg, uint64_t index, const struct Sworn__V1__Entry *e)
{
    (void)index;
    if (e != NULL && e->kind_case == SWORN__V1__ENTRY__KIND_POLICY_LOADED)
        ++*(size_t *)arg;
    return 0;
}

/*
 * An AdminRequest frame (reload_policy, as decisiond's admin socket takes it: docs/protocol.md
 * section 2) sent to the proxy from inside: its answer must be the proxy's own or a close, and,
 * with admin_socket, no PolicyLoaded entry may follow it in the record.
 */
void c_probe_hostlink_admin(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy *dep = ctx->dep;
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__ReloadPolicyRequest rp = SWORN__V1__RELOAD_POLICY_REQUEST__INIT;
    struct sworn_checkpoint before, after;
    uint8_t *frame = NULL;
    size_t len = 0, loaded = 0;
    char req[REQ_MAX];
    uint64_t size;

    if (proxy_control(ctx, r) < 0)
        return;
    rq.version = SWORN_WIRE_VERSION;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_RELOAD_POLICY;
    rq.reload_policy = &rp;
    if (sworn_frame_pack_admin_request(&rq, &frame, &len) < 0 || len * 4 + 9 >= sizeof(req)) {
        free(frame);
        c_result_set(r, C_ERROR, "the admin frame: %s", sworn_err_msg());
        return;
    }
    for (size_t i = 0; i < len; i++)
        snprintf(req + 4 * i, 5, "\\x%02x", frame[i]);
    /* An empty line after it: a proxy reading HTTP has a whole head to judge, rather than waiting
     * for one (decisiond's frame reader would act on the frame before reaching these bytes). */
    memcpy(req + 4 * len, "\\r\\n\\r\\n", 9);
    free(frame);
    c_evidence(r, "sent: an AdminRequest frame (reload_policy), %zu bytes", len);
    if (dep->admin_socket[0] != '\0' && c_record_checkpoint(dep->record, &before) < 0) {
        c_result_set(r, C_ERROR, "the record's checkpoint: %s", sworn_err_msg());
        return;
    }
    proxy_probe(ctx, r, req, "decisiond's admin frame on the agent's route out");
    if (r->outcome != C_PASS || dep->admin_socket[0] == '\0') {
        if (r->outcome == C_PASS)
            c_evidence(r, "no admin_socket: the record was not read for a policy reload");
        return;
    }
    if (c_checkpoint_now(dep->admin_socket, &size) < 0 ||
        c_record_checkpoint(dep->record, &after) < 0 ||
        c_record_each(dep->record, after.size, before.size, policy_loaded, &loaded) < 0) {
        c_result_set(r, C_ERROR, "the record after CheckpointNow: %s", sworn_err_msg());
        return;
    }
    c_evidence(r, "entries %llu..%llu of the record: %zu PolicyLoaded",
               (unsigned long long)before.size, (unsigned long long)after.size, loaded);
    if (loaded > 0)
        c_result_set(r, C_FAIL,
                     "a policy was loaded after the admin frame reached the proxy (%zu "
                     "PolicyLoaded entries)",
                     loaded);
}
