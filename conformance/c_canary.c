/*
 * c_canary.c -- the runner's canaries (c_canary.h). The host's listeners are bound here, before
 * the fork, so their ports are known at once; the namespace's one is bound by its child after
 * unshare (on 0.0.0.0: reachable only through the pair), which reports the port on a pipe, and
 * the pair is made afterwards with `ip` and `nsenter` (argv, never a shell).
 */
#define _GNU_SOURCE
#include "c_canary.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "c_exec.h"
#include "err.h"

#define SYNC_MS 10000
#define LOG_READ_MAX (1u << 20)

static int bind_inet(int family, int type, const char *addr, uint16_t *port)
{
    struct sockaddr_storage sa = {0};
    socklen_t len;
    int fd = socket(family, type | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&sa;

        in->sin_family = AF_INET;
        len = sizeof(*in);
        if (inet_pton(AF_INET, addr, &in->sin_addr) != 1)
            goto fail;
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

        in6->sin6_family = AF_INET6;
        len = sizeof(*in6);
        if (inet_pton(AF_INET6, addr, &in6->sin6_addr) != 1)
            goto fail;
    }
    if (bind(fd, (struct sockaddr *)&sa, len) != 0 ||
        (type == SOCK_STREAM && listen(fd, 64) != 0) ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
        goto fail;
    *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port
                                    : ((struct sockaddr_in6 *)&sa)->sin6_port);
    return fd;
fail:
    close(fd);
    return -1;
}

static uint16_t peer_port(const struct sockaddr_storage *sa)
{
    return ntohs(sa->ss_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port
                                          : ((const struct sockaddr_in6 *)sa)->sin6_port);
}

static void log_line(int logfd, const char *label, const char *id)
{
    char line[96];
    int n = snprintf(line, sizeof(line), "%s %s\n", label, id);

    if (n > 0 && write(logfd, line, (size_t)n) != n)
        _exit(1);
}

/* The children's loop: every event on fds[i] is logged as l[i]'s. Never returns. */
static void serve(const struct c_canary_listener *l, const int *fds, size_t n, int logfd)
{
    struct pollfd p[C_CANARY_MAX];

    for (size_t i = 0; i < n; i++)
        p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
    for (;;) {
        if (poll(p, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        for (size_t i = 0; i < n; i++) {
            struct sockaddr_storage sa;
            socklen_t len = sizeof(sa);
            char id[32], buf[2048];
            int cfd;

            if (!(p[i].revents & POLLIN))
                continue;
            if (l[i].kind == C_CANARY_ICMP) {
                ssize_t got = recv(fds[i], buf, sizeof(buf), 0);
                size_t ihl;
                const struct icmphdr *ic;

                /* A raw IPv4 socket gets the IP header first; only echo requests count (the
                 * namespace's own replies leave, and are not read here). */
                if (got < (ssize_t)sizeof(struct iphdr))
                    continue;
                ihl = (size_t)(((const struct iphdr *)buf)->ihl) * 4;
                if (ihl < sizeof(struct iphdr) || (size_t)got < ihl + sizeof(struct icmphdr))
                    continue;
                ic = (const struct icmphdr *)(buf + ihl);
                if (ic->type != ICMP_ECHO)
                    continue;
                snprintf(id, sizeof(id), "%u-%u", ntohs(ic->un.echo.id),
                         ntohs(ic->un.echo.sequence));
                log_line(logfd, l[i].label, id);
                continue;
            }
            if (l[i].kind == C_CANARY_UDP) {
                ssize_t got = recvfrom(fds[i], buf, sizeof(buf), 0, (struct sockaddr *)&sa, &len);

                if (got < 0)
                    continue;
                snprintf(id, sizeof(id), "%u", peer_port(&sa));
                log_line(logfd, l[i].label, id);
                sendto(fds[i], buf, (size_t)got, MSG_DONTWAIT, (struct sockaddr *)&sa, len);
                continue;
            }
            cfd = accept4(fds[i], (struct sockaddr *)&sa, &len, SOCK_CLOEXEC);
            if (cfd < 0)
                continue;
            if (l[i].kind == C_CANARY_UNIX) {
                struct ucred cr = {0};
                socklen_t cl = sizeof(cr);

                getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &cl);
                snprintf(id, sizeof(id), "pid%ld", (long)cr.pid);
            } else {
                snprintf(id, sizeof(id), "%u", peer_port(&sa));
            }
            log_line(logfd, l[i].label, id);
            close(cfd);
        }
    }
}

static void add(struct c_canary *c, const char *label, enum c_canary_kind kind, int family,
                const char *addr, uint16_t port)
{
    struct c_canary_listener *l = &c->l[c->n++];

    snprintf(l->label, sizeof(l->label), "%s", label);
    l->kind = kind;
    l->family = family;
    snprintf(l->addr, sizeof(l->addr), "%s", addr);
    l->port = port;
}

static int start_host(struct c_canary *c, int logfd)
{
    int fds[C_CANARY_MAX];
    size_t n = 0;
    uint16_t port;
    unsigned char rnd[6];
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    char name[64];
    static const struct {
        const char *label;
        int family, type;
        const char *addr;
    } inet[] = {{"tcp4-loopback", AF_INET, SOCK_STREAM, "127.0.0.1"},
                {"udp4-loopback", AF_INET, SOCK_DGRAM, "127.0.0.1"},
                {"tcp6-loopback", AF_INET6, SOCK_STREAM, "::1"},
                {"udp6-loopback", AF_INET6, SOCK_DGRAM, "::1"}};

    for (size_t i = 0; i < 4; i++) {
        int fd = bind_inet(inet[i].family, inet[i].type, inet[i].addr, &port);

        if (fd < 0 && inet[i].family == AF_INET6)
            continue; /* no IPv6 here: the IPv6 probes are skipped, saying so */
        if (fd < 0)
            return sworn_err_set(SWORN_ERR_IO, "canary %s: %s", inet[i].label, strerror(errno));
        fds[n++] = fd;
        add(c, inet[i].label, inet[i].type == SOCK_STREAM ? C_CANARY_TCP : C_CANARY_UDP,
            inet[i].family, inet[i].addr, port);
    }
    if (RAND_bytes(rnd, sizeof(rnd)) != 1)
        return sworn_err_set(SWORN_ERR_IO, "no random bytes for the canary's name");
    snprintf(name, sizeof(name), "sworn-conformance-%ld-%02x%02x%02x%02x%02x%02x", (long)getpid(),
             rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
    memcpy(sun.sun_path + 1, name, strlen(name));
    fds[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fds[n] < 0 ||
        bind(fds[n], (struct sockaddr *)&sun,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))) != 0 ||
        listen(fds[n], 64) != 0)
        return sworn_err_set(SWORN_ERR_IO, "canary unix-abstract: %s", strerror(errno));
    n++;
    add(c, "unix-abstract", C_CANARY_UNIX, AF_UNIX, name, 0);
    c->host_pid = fork();
    if (c->host_pid < 0)
        return sworn_err_set(SWORN_ERR_IO, "fork: %s", strerror(errno));
    if (c->host_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        serve(c->l, fds, n, logfd);
    }
    for (size_t i = 0; i < n; i++)
        close(fds[i]);
    return 0;
}

static int run(const char *const *argv)
{
    int status = -1;

    return c_exec_capture((char *const *)argv, 0, NULL, NULL, &status) == 0 && status == 0 ? 0 : -1;
}

/* The namespace's canary; on failure netns_why says why and the rest goes on without it. */
static void start_netns(struct c_canary *c, int logfd)
{
    int p[2];
    uint16_t port = 0;
    unsigned a = ((unsigned)getpid() >> 6) & 0xff, b = ((unsigned)getpid() & 63) * 4;
    char host[32], ns[32], hostnet[40], nsnet[40], pid[16], peer[16];

    if (geteuid() != 0) {
        snprintf(c->netns_why, sizeof(c->netns_why), "not root: no network namespace canary");
        return;
    }
    if (pipe2(p, O_CLOEXEC) != 0)
        return;
    c->ns_pid = fork();
    if (c->ns_pid == 0) {
        int fd[2];

        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (unshare(CLONE_NEWNET) != 0 ||
            (fd[0] = bind_inet(AF_INET, SOCK_STREAM, "0.0.0.0", &port)) < 0 ||
            (fd[1] = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP)) < 0)
            _exit(1);
        if (write(p[1], &port, sizeof(port)) != sizeof(port))
            _exit(1);
        struct c_canary_listener l[2] = {{.label = "tcp4-netns", .kind = C_CANARY_TCP},
                                         {.label = "icmp4-netns", .kind = C_CANARY_ICMP}};

        serve(l, fd, 2, logfd);
    }
    close(p[1]);
    if (c->ns_pid < 0 || read(p[0], &port, sizeof(port)) != sizeof(port)) {
        close(p[0]);
        snprintf(c->netns_why, sizeof(c->netns_why), "the namespace canary did not start");
        return;
    }
    close(p[0]);
    snprintf(c->veth, sizeof(c->veth), "swcf%uh", (unsigned)getpid() % 100000);
    snprintf(peer, sizeof(peer), "swcf%un", (unsigned)getpid() % 100000);
    snprintf(host, sizeof(host), "198.19.%u.%u", a, b + 1);
    snprintf(ns, sizeof(ns), "198.19.%u.%u", a, b + 2);
    snprintf(hostnet, sizeof(hostnet), "%s/30", host);
    snprintf(nsnet, sizeof(nsnet), "%s/30", ns);
    snprintf(pid, sizeof(pid), "%ld", (long)c->ns_pid);
    {
        const char *mk[] = {"/usr/bin/env", "ip",   "link", "add",   c->veth, "type", "veth",
                            "peer",         "name", peer,   "netns", pid,     NULL};
        const char *addr[] = {"/usr/bin/env", "ip", "addr", "add", hostnet, "dev", c->veth, NULL};
        const char *up[] = {"/usr/bin/env", "ip", "link", "set", c->veth, "up", NULL};
        const char *naddr[] = {"/usr/bin/env", "nsenter", "-t",  pid,   "-n", "ip",
                               "addr",         "add",     nsnet, "dev", peer, NULL};
        const char *nup[] = {"/usr/bin/env", "nsenter", "-t", pid,  "-n", "ip",
                             "link",         "set",     peer, "up", NULL};

        if (run(mk) != 0) {
            c->veth[0] = '\0';
            snprintf(c->netns_why, sizeof(c->netns_why),
                     "could not make the veth pair (ip link add ... type veth)");
            return;
        }
        if (run(addr) != 0 || run(up) != 0 || run(naddr) != 0 || run(nup) != 0) {
            snprintf(c->netns_why, sizeof(c->netns_why), "could not set up the veth pair");
            return;
        }
    }
    add(c, "tcp4-netns", C_CANARY_TCP, AF_INET, ns, port);
    add(c, "icmp4-netns", C_CANARY_ICMP, AF_INET, ns, 0);
}

int c_canary_start(struct c_canary *c, const char *dir)
{
    int logfd;

    memset(c, 0, sizeof(*c));
    if ((size_t)snprintf(c->log, sizeof(c->log), "%s/canary.log", dir) >= sizeof(c->log))
        return sworn_err_set(SWORN_ERR_RANGE, "the canary log's path is too long");
    logfd = open(c->log, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (logfd < 0)
        return sworn_err_set(SWORN_ERR_IO, "%s: %s", c->log, strerror(errno));
    if (start_host(c, logfd) < 0) {
        close(logfd);
        c_canary_stop(c);
        return -1;
    }
    start_netns(c, logfd);
    close(logfd);
    return 0;
}

const struct c_canary_listener *c_canary_find(const struct c_canary *c, const char *label)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->l[i].label, label) == 0)
            return &c->l[i];
    return NULL;
}

/* The Internet checksum (RFC 1071) of an ICMP message. */
static uint16_t inet_sum(const unsigned char *b, size_t n)
{
    uint32_t sum = 0;

    for (size_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)(b[i] << 8 | b[i + 1]);
    if (n % 2 != 0)
        sum += (uint32_t)(b[n - 1] << 8);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* The ICMP marker: an echo request from a raw socket with a random identifier and a sequence
 * number of its own (the runner is root: the namespace canary needs it). */
static int icmp_marker(const struct c_canary_listener *l, char *id, size_t cap)
{
    static uint16_t seq;
    unsigned char pkt[16] = {ICMP_ECHO, 0};
    unsigned char rnd[2];
    struct sockaddr_in in = {.sin_family = AF_INET};
    uint16_t ident, sum;
    int fd;

    if (RAND_bytes(rnd, sizeof(rnd)) != 1 || inet_pton(AF_INET, l->addr, &in.sin_addr) != 1)
        return -1;
    ident = (uint16_t)(rnd[0] << 8 | rnd[1]);
    seq++;
    pkt[4] = (unsigned char)(ident >> 8), pkt[5] = (unsigned char)ident;
    pkt[6] = (unsigned char)(seq >> 8), pkt[7] = (unsigned char)seq;
    memcpy(pkt + 8, "swcfsync", 8);
    sum = inet_sum(pkt, sizeof(pkt));
    pkt[2] = (unsigned char)(sum >> 8), pkt[3] = (unsigned char)sum;
    fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
    if (fd < 0)
        return -1;
    if (sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&in, sizeof(in)) !=
        (ssize_t)sizeof(pkt)) {
        close(fd);
        return -1;
    }
    close(fd);
    snprintf(id, cap, "%u-%u", ident, seq);
    return 0;
}

/* Send the marker to l; its id into id. */
static int marker(const struct c_canary_listener *l, char *id, size_t cap)
{
    struct sockaddr_storage sa = {0};
    socklen_t len;
    struct timeval tv = {.tv_sec = 5};
    int fd;

    if (l->kind == C_CANARY_ICMP)
        return icmp_marker(l, id, cap);
    fd = socket(l->family, (l->kind == C_CANARY_UDP ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (l->kind == C_CANARY_UNIX) {
        struct sockaddr_un *sun = (struct sockaddr_un *)&sa;

        sun->sun_family = AF_UNIX;
        memcpy(sun->sun_path + 1, l->addr, strlen(l->addr));
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(l->addr));
        snprintf(id, cap, "pid%ld", (long)getpid());
    } else if (l->family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&sa;

        in->sin_family = AF_INET;
        in->sin_port = htons(l->port);
        inet_pton(AF_INET, l->addr, &in->sin_addr);
        len = sizeof(*in);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(l->port);
        inet_pton(AF_INET6, l->addr, &in6->sin6_addr);
        len = sizeof(*in6);
    }
    if (connect(fd, (struct sockaddr *)&sa, len) != 0 ||
        (l->kind == C_CANARY_UDP && send(fd, "sync", 4, 0) != 4)) {
        close(fd);
        return -1;
    }
    if (l->kind != C_CANARY_UNIX) {
        len = sizeof(sa);
        if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
            close(fd);
            return -1;
        }
        snprintf(id, cap, "%u", peer_port(&sa));
    }
    close(fd);
    return 0;
}

/* Look for the marker in the log from l->offset: 1 found (offset moved past it), 0 not yet. */
static int scan(struct c_canary *c, struct c_canary_listener *l, const char *id, unsigned *heard)
{
    FILE *f = fopen(c->log, "re");
    char line[160];
    size_t label_len = strlen(l->label);
    unsigned count = 0;
    int found = 0;

    if (f == NULL || fseek(f, l->offset, SEEK_SET) != 0) {
        if (f != NULL)
            fclose(f);
        return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, l->label, label_len) != 0 || line[label_len] != ' ')
            continue;
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line + label_len + 1, id) == 0) {
            l->offset = ftell(f);
            found = 1;
            break;
        }
        count++;
    }
    fclose(f);
    if (found)
        *heard = count;
    return found;
}

int c_canary_sync(struct c_canary *c, const char *label, unsigned *heard)
{
    struct c_canary_listener *l = (struct c_canary_listener *)c_canary_find(c, label);
    char id[32];
    struct timespec step = {.tv_nsec = 5000000}; /* the log is polled: no event tells us */

    if (l == NULL)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "no canary %s", label);
    if (marker(l, id, sizeof(id)) != 0)
        return sworn_err_set(SWORN_ERR_IO,
                             "canary %s (%s port %u): the runner's marker could "
                             "not be sent: %s",
                             label, l->addr, l->port, strerror(errno));
    for (int waited = 0; waited < SYNC_MS; waited += 5) {
        if (scan(c, l, id, heard))
            return 0;
        nanosleep(&step, NULL);
    }
    return sworn_err_set(SWORN_ERR_IO, "canary %s did not log the runner's marker within %d ms",
                         label, SYNC_MS);
}

static void end(pid_t *pid)
{
    if (*pid > 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
    }
    *pid = 0;
}

void c_canary_stop(struct c_canary *c)
{
    if (c->veth[0] != '\0') {
        const char *del[] = {"/usr/bin/env", "ip", "link", "del", c->veth, NULL};

        (void)run(del);
        c->veth[0] = '\0';
    }
    end(&c->host_pid);
    end(&c->ns_pid);
}
