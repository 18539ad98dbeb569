/*
 * canary_fixture.c -- canary servers on the host and in a veth namespace (contract in
 * canary_fixture.h).
 *
 * Each server is a forked child of the test (no exec: the code is here) that binds its listeners,
 * writes "label port" for each on a pipe, then "ready", and from then on only polls and logs.
 * The parent reads the pipe within a deadline, so readiness is the servers' own word, not a
 * sleep. The namespace's child joins the namespace (setns) before it binds anything.
 */
#define _GNU_SOURCE
#include "canary_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
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

#include "testutil.h"

#define IP_BIN "/usr/sbin/ip"
#define START_MS 20000   /* how long the servers may take to bind everything */
#define NET_SLOTS 32768u /* /30 subnets in 198.18.0.0/15 */
#define LINE_MAX_ 256

extern char **environ;

static int complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int complain(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "canary_fixture: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

/* Run ip with the arguments after it (NULL-terminated), output to our stderr; 0 when it exits 0. */
static int ip(const char *first, ...)
{
    const char *argv[24] = {IP_BIN, first};
    size_t n = 2;
    va_list ap;
    pid_t pid;
    int status;

    va_start(ap, first);
    while (n < 23 && (argv[n] = va_arg(ap, const char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    if (posix_spawn(&pid, IP_BIN, NULL, NULL, (char *const *)argv, environ) != 0)
        return complain("cannot run %s", IP_BIN);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return complain("waitpid ip: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "canary_fixture: failed:");
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, " %s", argv[i]);
        fputc('\n', stderr);
        return -1;
    }
    return 0;
}

/* The machine's first non-loopback IPv4 address and global IPv6 address on an interface that is
 * up (not ours nor another run's pair: names starting "swc"). */
static void machine_addrs(struct sworn_canary *c)
{
    struct ifaddrs *ifs, *i;

    if (getifaddrs(&ifs) != 0)
        return;
    for (i = ifs; i != NULL; i = i->ifa_next) {
        if (i->ifa_addr == NULL || (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP) ||
            strncmp(i->ifa_name, "swc", 3) == 0)
            continue;
        if (i->ifa_addr->sa_family == AF_INET && c->machine4[0] == '\0') {
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, c->machine4,
                      sizeof(c->machine4));
        } else if (i->ifa_addr->sa_family == AF_INET6 && c->machine6[0] == '\0') {
            const struct in6_addr *a = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;

            if (!IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_LOOPBACK(a))
                inet_ntop(AF_INET6, a, c->machine6, sizeof(c->machine6));
        }
    }
    freeifaddrs(ifs);
}

static void add_listener(struct sworn_canary *c, const char *attempt, const char *where,
                         const char *addr, int in_netns)
{
    struct sworn_canary_listener *l;

    if (addr[0] == '\0' || c->n >= SWORN_CANARY_MAX)
        return;
    l = &c->l[c->n++];
    snprintf(l->label, sizeof(l->label), "%s-%s", attempt, where);
    snprintf(l->attempt, sizeof(l->attempt), "%s", attempt);
    snprintf(l->addr, sizeof(l->addr), "%s", addr);
    l->in_netns = in_netns;
}

/* TCP and UDP listeners on addr (IPv4 or IPv6 by its shape). */
static void add_pair(struct sworn_canary *c, const char *where, const char *addr, int in_netns)
{
    int v6 = strchr(addr, ':') != NULL;

    add_listener(c, v6 ? "tcp6" : "tcp4", where, addr, in_netns);
    add_listener(c, v6 ? "udp6" : "udp4", where, addr, in_netns);
}

/* Whether this machine has IPv6 at all (::1 can be bound): a host or container may have it
 * disabled (net.ipv6.conf.all.disable_ipv6), and then the IPv6 canaries are left out. */
static int have_ipv6(void)
{
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

    if (fd < 0)
        return 0;
    ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    close(fd);
    return ok;
}

/* The namespace, the pair and its addresses (IPv6 without duplicate address detection, so the
 * addresses can be bound at once; none without IPv6). */
static int make_netns(struct sworn_canary *c)
{
    unsigned slot = (unsigned)getpid() % NET_SLOTS;
    unsigned a = 198 * 16777216u + 18 * 65536u + slot * 4u; /* 198.18.0.0 + slot * 4 */
    char h4[SWORN_CANARY_ADDR_MAX + 4], n4[SWORN_CANARY_ADDR_MAX + 4];
    char h6[SWORN_CANARY_ADDR_MAX + 4], n6[SWORN_CANARY_ADDR_MAX + 4];

    snprintf(c->netns, sizeof(c->netns), "sworn-canary-%ld", (long)getpid());
    snprintf(c->veth_host, sizeof(c->veth_host), "swc%ldh", (long)getpid() % 10000000);
    snprintf(c->veth_ns, sizeof(c->veth_ns), "swc%ldn", (long)getpid() % 10000000);
    snprintf(c->host4, sizeof(c->host4), "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
             (a & 255) + 1);
    snprintf(c->ns4, sizeof(c->ns4), "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
             (a & 255) + 2);
    if (c->ipv6) {
        snprintf(c->host6, sizeof(c->host6), "fd5e:57:0:%x::1", slot);
        snprintf(c->ns6, sizeof(c->ns6), "fd5e:57:0:%x::2", slot);
    }
    snprintf(h4, sizeof(h4), "%s/30", c->host4);
    snprintf(n4, sizeof(n4), "%s/30", c->ns4);
    snprintf(h6, sizeof(h6), "%s/64", c->host6);
    snprintf(n6, sizeof(n6), "%s/64", c->ns6);
    if (ip("netns", "add", c->netns, NULL) != 0)
        return -1;
    c->netns_made = 1;
    if (ip("link", "add", c->veth_host, "type", "veth", "peer", "name", c->veth_ns, NULL) != 0 ||
        ip("link", "set", c->veth_ns, "netns", c->netns, NULL) != 0 ||
        ip("addr", "add", h4, "dev", c->veth_host, NULL) != 0 ||
        (c->ipv6 && ip("addr", "add", h6, "dev", c->veth_host, "nodad", NULL) != 0) ||
        ip("link", "set", c->veth_host, "up", NULL) != 0 ||
        ip("-n", c->netns, "addr", "add", n4, "dev", c->veth_ns, NULL) != 0 ||
        (c->ipv6 && ip("-n", c->netns, "addr", "add", n6, "dev", c->veth_ns, "nodad", NULL) != 0) ||
        ip("-n", c->netns, "link", "set", c->veth_ns, "up", NULL) != 0 ||
        ip("-n", c->netns, "link", "set", "lo", "up", NULL) != 0)
        return -1;
    return 0;
}

/* ---- the servers (children: they print to stderr and _exit on a setup failure) ---- */

struct server {
    struct sworn_canary *c;
    int in_netns;
    int fds[SWORN_CANARY_MAX + 4];
    const char *labels[SWORN_CANARY_MAX + 4];
    char kinds[SWORN_CANARY_MAX + 4]; /* 't' tcp, 'u' udp, 'x' unix, 'i' icmp */
    size_t n;
    int log;
};

static void die(const char *what)
{
    fprintf(stderr, "canary_fixture: server: %s: %s\n", what, strerror(errno));
    _exit(1);
}

static void log_line(struct server *s, const char *kind, const char *label, const char *from)
{
    char line[LINE_MAX_];
    int n = snprintf(line, sizeof(line), "%s %s from %s\n", kind, label, from);
    int fd = open(s->c->hits, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

    /* Opened per line: sworn_canary_rotate renames the file between events. */
    if (fd < 0 || n <= 0)
        die("open hits.log");
    if (write(fd, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1)) < 0)
        die("write hits.log");
    close(fd);
}

static void peer_text(const struct sockaddr_storage *sa, char *out, size_t cap)
{
    if (sa->ss_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)cap);
    else if (sa->ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)cap);
    else
        snprintf(out, cap, "local");
}

static void serve_add(struct server *s, int fd, const char *label, char kind)
{
    s->fds[s->n] = fd;
    s->labels[s->n] = label;
    s->kinds[s->n] = kind;
    s->n++;
}

/* Bind listener l on port 0 and report its port on the pipe. */
static void bind_inet(struct server *s, struct sworn_canary_listener *l, FILE *out)
{
    int v6 = strchr(l->addr, ':') != NULL, tcp = l->attempt[0] == 't', one = 1;
    struct sockaddr_storage sa;
    socklen_t len;
    int fd = socket(v6 ? AF_INET6 : AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);

    memset(&sa, 0, sizeof(sa));
    if (v6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

        in6->sin6_family = AF_INET6;
        inet_pton(AF_INET6, l->addr, &in6->sin6_addr);
        len = sizeof(*in6);
        if (fd >= 0)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    } else {
        struct sockaddr_in *in = (struct sockaddr_in *)&sa;

        in->sin_family = AF_INET;
        inet_pton(AF_INET, l->addr, &in->sin_addr);
        len = sizeof(*in);
    }
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) != 0)
        die(l->label);
    if (tcp && listen(fd, 64) != 0)
        die(l->label);
    len = sizeof(sa);
    if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
        die("getsockname");
    fprintf(out, "%s %u\n", l->label,
            ntohs(v6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                     : ((struct sockaddr_in *)&sa)->sin_port));
    serve_add(s, fd, l->label, tcp ? 't' : 'u');
}

static void bind_unix(struct server *s, const char *name, int abstract, const char *label)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    memcpy(sun.sun_path + (abstract ? 1 : 0), name, len);
    if (fd < 0 ||
        bind(fd, (struct sockaddr *)&sun,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (abstract ? 1 : 0))) != 0 ||
        listen(fd, 64) != 0)
        die(label);
    /* Anyone may try to connect: the sandbox's uid is not the test's. */
    if (!abstract && chmod(name, 0777) != 0)
        die("chmod canary.sock");
    serve_add(s, fd, label, 'x');
}

/* Raw ICMP (or ICMPv6, filtered to echo requests) sockets: they see a copy of each echo the
 * kernel answers. */
static void bind_icmp(struct server *s)
{
    int fd4 = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
    int fd6 = s->c->ipv6 ? socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6) : -1;
    struct icmp6_filter f;

    if (fd4 < 0 || (s->c->ipv6 && fd6 < 0))
        die("raw icmp socket");
    serve_add(s, fd4, "icmp4-netns", 'i');
    if (!s->c->ipv6)
        return;
    ICMP6_FILTER_SETBLOCKALL(&f);
    ICMP6_FILTER_SETPASS(ICMP6_ECHO_REQUEST, &f);
    if (setsockopt(fd6, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f)) != 0)
        die("ICMP6_FILTER");
    serve_add(s, fd6, "icmp6-netns", 'i');
}

static void on_event(struct server *s, size_t i)
{
    struct sockaddr_storage from;
    socklen_t flen = sizeof(from);
    unsigned char buf[2048];
    char peer[SWORN_CANARY_ADDR_MAX];
    ssize_t n;
    int fd;

    memset(&from, 0, sizeof(from));
    switch (s->kinds[i]) {
    case 't':
    case 'x':
        fd = accept4(s->fds[i], (struct sockaddr *)&from, &flen, SOCK_CLOEXEC);
        if (fd < 0)
            return;
        peer_text(&from, peer, sizeof(peer));
        log_line(s, s->kinds[i] == 't' ? "tcp" : "unix", s->labels[i], peer);
        close(fd);
        return;
    case 'u':
        n = recvfrom(s->fds[i], buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
        if (n < 0)
            return;
        peer_text(&from, peer, sizeof(peer));
        log_line(s, "udp", s->labels[i], peer);
        sendto(s->fds[i], buf, (size_t)n, 0, (struct sockaddr *)&from, flen);
        return;
    case 'i':
        n = recvfrom(s->fds[i], buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
        if (n <= 0)
            return;
        /* IPv4 raw sockets get the IP header; ICMPv6 ones do not (and are filtered already). */
        if (from.ss_family == AF_INET) {
            size_t ihl = (size_t)(buf[0] & 0x0f) * 4;

            if ((size_t)n <= ihl || buf[ihl] != 8 /* echo request */)
                return;
        }
        peer_text(&from, peer, sizeof(peer));
        log_line(s, "icmp", s->labels[i], peer);
        return;
    default:
        return;
    }
}

static void serve(struct sworn_canary *c, int in_netns, int report)
{
    struct server s = {.c = c, .in_netns = in_netns};
    FILE *out = fdopen(report, "w");
    struct pollfd p[SWORN_CANARY_MAX + 4];

    if (out == NULL)
        die("fdopen");
    if (in_netns) {
        char path[128];
        int fd;

        snprintf(path, sizeof(path), "/run/netns/%s", c->netns);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns(fd, CLONE_NEWNET) != 0)
            die("join the namespace");
        close(fd);
        bind_icmp(&s);
    } else {
        bind_unix(&s, c->unix_path, 0, "unix-path");
        bind_unix(&s, c->abstract, 1, "unix-abstract");
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->l[i].in_netns == in_netns)
            bind_inet(&s, &c->l[i], out);
    fprintf(out, "ready\n");
    fclose(out);
    for (size_t i = 0; i < s.n; i++)
        p[i] = (struct pollfd){.fd = s.fds[i], .events = POLLIN};
    for (;;) {
        if (poll(p, s.n, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("poll");
        }
        for (size_t i = 0; i < s.n; i++)
            if (p[i].revents & POLLIN)
                on_event(&s, i);
    }
}

/* Fork one server; read its ports into c until "ready". Returns the pid, or -1. */
static pid_t start_server(struct sworn_canary *c, int in_netns)
{
    int pipefd[2];
    pid_t parent = getpid(), pid;
    char buf[4096];
    size_t have = 0;
    struct timespec t0, t;

    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return complain("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(1);
        close(pipefd[0]);
        serve(c, in_netns, pipefd[1]);
        _exit(1);
    }
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        return complain("fork: %s", strerror(errno));
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
        long spent;
        ssize_t n;

        clock_gettime(CLOCK_MONOTONIC, &t);
        spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (spent >= START_MS || poll(&p, 1, (int)(START_MS - spent)) <= 0)
            break;
        n = read(pipefd[0], buf + have, sizeof(buf) - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = '\0';
        if (strstr(buf, "ready\n") != NULL) {
            close(pipefd[0]);
            for (char *line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n")) {
                char label[SWORN_CANARY_LABEL_MAX];
                unsigned port;

                if (sscanf(line, "%39s %u", label, &port) != 2)
                    continue;
                for (size_t i = 0; i < c->n; i++)
                    if (strcmp(c->l[i].label, label) == 0)
                        c->l[i].port = (uint16_t)port;
            }
            return pid;
        }
    }
    close(pipefd[0]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return complain("the %s server did not report ready", in_netns ? "namespace's" : "host's");
}

int sworn_canary_start(struct sworn_canary *c)
{
    memset(c, 0, sizeof(*c));
    c->dir = sworn_test_tmpdir("canary");
    snprintf(c->hits, sizeof(c->hits), "%s/hits.log", c->dir);
    snprintf(c->unix_path, sizeof(c->unix_path), "%s/canary.sock", c->dir);
    snprintf(c->abstract, sizeof(c->abstract), "sworn-canary-%ld-%lx", (long)getpid(),
             (unsigned long)time(NULL));
    c->ipv6 = have_ipv6();
    machine_addrs(c);
    if (!c->ipv6)
        c->machine6[0] = '\0';
    if (make_netns(c) != 0)
        goto fail;
    add_pair(c, "loopback", "127.0.0.1", 0);
    add_pair(c, "loopback", c->ipv6 ? "::1" : "", 0);
    add_pair(c, "machine", c->machine4, 0);
    add_pair(c, "machine", c->machine6, 0);
    add_pair(c, "vethhost", c->host4, 0);
    add_pair(c, "vethhost", c->host6, 0);
    add_pair(c, "netns", c->ns4, 1);
    add_pair(c, "netns", c->ns6, 1);
    c->host_pid = start_server(c, 0);
    if (c->host_pid < 0) {
        c->host_pid = 0;
        goto fail;
    }
    c->ns_pid = start_server(c, 1);
    if (c->ns_pid < 0) {
        c->ns_pid = 0;
        goto fail;
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->l[i].port == 0) {
            complain("listener %s reported no port", c->l[i].label);
            goto fail;
        }
    return 0;
fail:
    sworn_canary_stop(c);
    return -1;
}

/* The servers hold nothing to flush (each line is written whole): SIGKILL, and reap. */
static void stop_child(pid_t *pid)
{
    if (*pid <= 0)
        return;
    kill(*pid, SIGKILL);
    while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
        ;
    *pid = 0;
}

void sworn_canary_stop(struct sworn_canary *c)
{
    stop_child(&c->ns_pid);
    stop_child(&c->host_pid);
    if (c->netns_made) {
        /* The host's end first (it takes its peer with it), then the namespace. */
        if (ip("link", "del", c->veth_host, NULL) != 0)
            complain("the pair %s was not there to delete", c->veth_host);
        if (ip("netns", "del", c->netns, NULL) != 0)
            complain("cannot delete the namespace %s", c->netns);
        c->netns_made = 0;
    }
    if (c->dir != NULL) {
        if (getenv("SWORN_KEEP_STACK") == NULL)
            sworn_test_rmtree(c->dir);
        free(c->dir);
        c->dir = NULL;
    }
}

size_t sworn_canary_hits(struct sworn_canary *c)
{
    char *text = sworn_test_read_file_opt(c->hits, NULL);
    size_t n = 0;

    if (text == NULL)
        return 0;
    for (const char *p = text; *p != '\0'; p++)
        n += *p == '\n';
    free(text);
    return n;
}

char *sworn_canary_log(struct sworn_canary *c)
{
    char *text = sworn_test_read_file_opt(c->hits, NULL);

    return text != NULL ? text : strdup("");
}

int sworn_canary_wait_hit(struct sworn_canary *c, const char *needle, int timeout_ms)
{
    return sworn_test_wait_file_has(c->hits, needle, timeout_ms);
}

int sworn_canary_rotate(struct sworn_canary *c)
{
    char *controls = sworn_test_path(c->dir, "controls.log");
    int rc = 0;

    /* A server opens the log by name for each line, so the next line starts a new hits.log. */
    if (rename(c->hits, controls) != 0 && errno != ENOENT)
        rc = complain("cannot move %s aside: %s", c->hits, strerror(errno));
    free(controls);
    return rc;
}
