/*
 * sworn-conformance-probe.c -- the adversarial agent that sworn-conformance starts inside the
 * deployment's sandbox (docs/conformance.md) and test_sandbox_probes and test_sandbox_attacks run
 * inside sworn-run (docs/sandbox.md, "Probes"): one attempt to get out of a sandbox per
 * subcommand.
 *
 *   sworn-conformance-probe ATTEMPT ARGS...
 *
 * Each attempt prints exactly one line on standard output and exits with its verdict:
 *   BLOCKED <what> <why>   exit 0: the attempt failed; why is the errno name of the call that
 *                          stopped it (ECONNREFUSED, EPERM, ...) or one of the names below
 *   OPEN <what> [detail]   exit 3: the attempt got through (a connection, an answer, a byte, a
 *                          descriptor, a signal delivered, a kernel object created)
 * and exit 2 with a message on standard error for a usage error. (kill and ptrace with "-" print
 * a "READY" line before it; hold prints a "HOLD" line and no verdict; conns, deep and exchange
 * are not attempts either: they print "CONNS ...", "DEEP N" and "EXCHANG..." lines for
 * test_sandbox_attacks to judge.)
 * <what> is one word (no spaces): the attempt and its target, e.g. "tcp4:192.0.2.1:80".
 *
 * Names used for why besides errno names:
 *   ETIMEDOUT  (an errno name, also used when no answer came within the wait)
 *   EMPTY      the file opened but held no byte (a masked file: /dev/null bound over it)
 *   ONLY_LO    the route netlink dump listed the loopback interface alone
 *   NONE       nothing to try (no descriptor beyond 0, 1 and 2; no terminal on 0, 1 or 2)
 *   NOREPLY    an ICMP echo was sent, and no reply from the target came back
 *
 * The same binary runs outside the sandbox as the tests' positive control (the canaries must see
 * it there), so it judges only what it sees: an answer from anyone is OPEN. It links libc and
 * the system's libssl (connect-tls-http's TLS session), nothing of sworn's, and
 * conformance/CMakeLists.txt builds it without sanitizers, so that it runs from the work folder
 * inside the sandbox, where only the system's /usr and /lib are mounted.
 *
 * The waits (a TCP connect, an answer to a datagram or an echo) last SWORN_PROBE_WAIT_MS
 * milliseconds (default 2000). Inside the sandbox no packet leaves: a connect to an address with
 * no route fails at once (ENETUNREACH), and loopback is the sandbox's own.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/rtnetlink.h>
#include <linux/vm_sockets.h>
#include <netdb.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "probe_cred.h"
#include "sworn_version.h"

#define PROBE_BLOCKED 0
#define PROBE_USAGE 2
#define PROBE_OPEN 3

#define WAIT_MS_DEFAULT 2000
#define WHAT_MAX 600         /* an attempt's name with its target (a path fits) */
#define DETAIL_MAX 2048      /* what an OPEN line adds (the descriptors, the interfaces) */
#define PIDS_MAX 64          /* targets read from standard input by kill and ptrace */
#define NL_BUF 32768         /* one read of a netlink dump */
#define PROBE_CONNS_MAX 4096 /* connections conns holds */
#define ICMP_ID 0x5357       /* the echo's identifier ("SW") for the raw socket */
#define KEY_SPEC_SESSION (-3)
#define KEYCTL_GET_ID 0
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* A DNS query for "example.com" A, as a resolver receives it: what the UDP attempts send. */
static const unsigned char dns_query[] = {
    0x53, 0x57, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 'e', 'x',
    'a',  'm',  'p',  'l',  'e',  0x03, 'c',  'o',  'm',  0x00, 0x00, 0x01, 0x00, 0x01};

static int wait_ms = WAIT_MS_DEFAULT;

static const char *errno_name(int e)
{
    const char *name = strerrorname_np(e);
    static char other[24];

    if (name != NULL)
        return name;
    snprintf(other, sizeof(other), "E%d", e);
    return other;
}

static int blocked_why(const char *what, const char *why)
{
    printf("BLOCKED %s %s\n", what, why);
    return PROBE_BLOCKED;
}

static int blocked(const char *what, int err)
{
    return blocked_why(what, errno_name(err));
}

static int open_(const char *what, const char *detail)
{
    if (detail != NULL && detail[0] != '\0')
        printf("OPEN %s %s\n", what, detail);
    else
        printf("OPEN %s\n", what);
    return PROBE_OPEN;
}

static int usage(const char *msg)
{
    fprintf(
        stderr,
        "sworn-conformance-probe: %s (see the comment at the top of sworn-conformance-probe.c)\n",
        msg);
    return PROBE_USAGE;
}

/* Append ", "-separated text to a detail buffer, cut to fit. */
static void detail_add(char *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void detail_add(char *d, const char *fmt, ...)
{
    size_t len = strlen(d);
    va_list ap;

    if (len + 2 >= DETAIL_MAX)
        return;
    if (len > 0) {
        d[len++] = ',';
        d[len] = '\0';
    }
    va_start(ap, fmt);
    vsnprintf(d + len, DETAIL_MAX - len, fmt, ap);
    va_end(ap);
}

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A numeric address and port into sa (family AF_INET or AF_INET6). Returns 0, -1 if bad. */
static int parse_addr(int family, const char *host, const char *port, struct sockaddr_storage *sa,
                      socklen_t *len)
{
    char *end;
    long p = strtol(port != NULL ? port : "0", &end, 10);

    if (*end != '\0' || p < 0 || p > 65535)
        return -1;
    memset(sa, 0, sizeof(*sa));
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)sa;

        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)p);
        *len = sizeof(*in);
        return inet_pton(AF_INET, host, &in->sin_addr) == 1 ? 0 : -1;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((uint16_t)p);
    *len = sizeof(*in6);
    return inet_pton(AF_INET6, host, &in6->sin6_addr) == 1 ? 0 : -1;
}

/* Wait up to wait_ms for events on fd; returns poll's answer (0 on a timeout). */
static int wait_fd(int fd, short events)
{
    struct pollfd p = {.fd = fd, .events = events};
    long deadline = now_ms() + wait_ms;
    int r;

    do {
        long left = deadline - now_ms();

        r = poll(&p, 1, left > 0 ? (int)left : 0);
    } while (r < 0 && errno == EINTR);
    return r;
}

/* tcp4/tcp6 HOST PORT: a connection is OPEN. */
static int probe_tcp(int family, const char *name, const char *host, const char *port)
{
    struct sockaddr_storage sa;
    socklen_t len;
    char what[WHAT_MAX];
    int fd, err = 0;
    socklen_t elen = sizeof(err);

    if (parse_addr(family, host, port, &sa, &len) != 0)
        return usage("bad address or port");
    snprintf(what, sizeof(what), "%s:%s:%s", name, host, port);
    fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return blocked(what, errno);
    if (connect(fd, (struct sockaddr *)&sa, len) == 0)
        return open_(what, NULL);
    if (errno != EINPROGRESS)
        return blocked(what, errno);
    if (wait_fd(fd, POLLOUT) <= 0)
        return blocked(what, ETIMEDOUT);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
        return blocked(what, errno);
    if (err != 0)
        return blocked(what, err);
    return open_(what, NULL);
}

/* udp4/udp6 HOST PORT: send a DNS query; any answer is OPEN. The socket is connected so that an
 * ICMP error (port unreachable) comes back as an errno. */
static int probe_udp(int family, const char *name, const char *host, const char *port)
{
    struct sockaddr_storage sa;
    socklen_t len;
    char what[WHAT_MAX], detail[64];
    unsigned char answer[512];
    int fd;
    ssize_t n;

    if (parse_addr(family, host, port, &sa, &len) != 0)
        return usage("bad address or port");
    snprintf(what, sizeof(what), "%s:%s:%s", name, host, port);
    fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return blocked(what, errno);
    if (connect(fd, (struct sockaddr *)&sa, len) != 0)
        return blocked(what, errno);
    if (send(fd, dns_query, sizeof(dns_query), 0) < 0)
        return blocked(what, errno);
    if (wait_fd(fd, POLLIN) <= 0)
        return blocked(what, ETIMEDOUT);
    n = recv(fd, answer, sizeof(answer), MSG_DONTWAIT);
    if (n < 0)
        return blocked(what, errno);
    snprintf(detail, sizeof(detail), "answer=%zd", n);
    return open_(what, detail);
}

/* One echo request (type: ICMP_ECHO or ICMP6_ECHO_REQUEST) with our identifier and sequence 1. */
static size_t echo_request(unsigned char *b, size_t cap, int v6)
{
    uint32_t sum = 0;

    memset(b, 0, cap);
    b[0] = v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
    b[4] = ICMP_ID >> 8;
    b[5] = ICMP_ID & 0xff;
    b[7] = 1;
    memcpy(b + 8, "sworn-probe", 11);
    if (!v6) { /* the kernel fills ICMPv6's checksum (it covers a pseudo-header) */
        for (size_t i = 0; i < 20; i += 2)
            sum += (uint32_t)(b[i] << 8 | b[i + 1]);
        while (sum >> 16)
            sum = (sum & 0xffff) + (sum >> 16);
        sum = ~sum & 0xffff;
        b[2] = (unsigned char)(sum >> 8);
        b[3] = (unsigned char)(sum & 0xff);
    }
    return 20;
}

/* Whether the bytes received (after the IPv4 header on a raw v4 socket) are an echo reply. */
static int is_echo_reply(const unsigned char *b, ssize_t n, int v6, int raw)
{
    if (raw && !v6) {
        size_t ihl;

        if (n < 20)
            return 0;
        ihl = (size_t)(b[0] & 0x0f) * 4;
        if ((size_t)n < ihl + 8)
            return 0;
        b += ihl;
        n -= (ssize_t)ihl;
    }
    if (n < 8)
        return 0;
    return b[0] == (v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY);
}

/* icmp-raw / icmp-ping HOST: an echo request on a raw socket (SOCK_RAW, needs CAP_NET_RAW) or on
 * the unprivileged ping socket (SOCK_DGRAM, net.ipv4.ping_group_range); a reply is OPEN, and so is
 * the raw socket itself (a raw socket is a way around every port rule). */
static int probe_icmp(int raw, const char *host)
{
    int v6 = strchr(host, ':') != NULL, family = v6 ? AF_INET6 : AF_INET;
    int proto = v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
    struct sockaddr_storage sa;
    socklen_t len;
    char what[WHAT_MAX];
    unsigned char req[64], answer[1024];
    size_t n;
    long deadline;
    int fd;

    if (parse_addr(family, host, "0", &sa, &len) != 0)
        return usage("bad address");
    snprintf(what, sizeof(what), "%s:%s", raw ? "icmp-raw" : "icmp-ping", host);
    fd = socket(family, (raw ? SOCK_RAW : SOCK_DGRAM) | SOCK_CLOEXEC, proto);
    if (fd < 0)
        return blocked(what, errno);
    n = echo_request(req, sizeof(req), v6);
    if (sendto(fd, req, n, 0, (struct sockaddr *)&sa, len) < 0)
        return raw ? open_(what, "socket") : blocked(what, errno);
    deadline = now_ms() + wait_ms;
    while (now_ms() < deadline) {
        struct sockaddr_storage from;
        socklen_t flen = sizeof(from);
        ssize_t got;

        if (wait_fd(fd, POLLIN) <= 0)
            break;
        got = recvfrom(fd, answer, sizeof(answer), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
        if (got < 0)
            return raw ? open_(what, "socket") : blocked(what, errno);
        if (is_echo_reply(answer, got, v6, raw))
            return open_(what, "reply");
    }
    return raw ? open_(what, "socket") : blocked_why(what, "NOREPLY");
}

/* raw4/raw6/packet/vsock: the socket itself is OPEN. */
static int probe_socket(const char *what, int family, int type, int proto)
{
    int fd = socket(family, type | SOCK_CLOEXEC, proto);

    if (fd < 0)
        return blocked(what, errno);
    close(fd);
    return open_(what, "socket");
}

/* netlink-ifaces: a route netlink dump of the links; an interface besides lo is OPEN. */
static int probe_netlink(void)
{
    struct {
        struct nlmsghdr h;
        struct ifinfomsg i;
    } req = {
        .h = {.nlmsg_len = sizeof(req),
              .nlmsg_type = RTM_GETLINK,
              .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
              .nlmsg_seq = 1},
        .i = {.ifi_family = AF_UNSPEC},
    };
    static char buf[NL_BUF];
    char detail[DETAIL_MAX] = "", names[DETAIL_MAX] = "";
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), others = 0;

    if (fd < 0)
        return blocked("netlink-ifaces", errno);
    if (send(fd, &req, sizeof(req), 0) < 0)
        return blocked("netlink-ifaces", errno);
    for (;;) {
        ssize_t n;

        if (wait_fd(fd, POLLIN) <= 0)
            return blocked("netlink-ifaces", ETIMEDOUT);
        n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0)
            return blocked("netlink-ifaces", errno);
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
             h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_DONE)
                goto done;
            if (h->nlmsg_type == NLMSG_ERROR)
                return blocked("netlink-ifaces", -((struct nlmsgerr *)NLMSG_DATA(h))->error);
            if (h->nlmsg_type != RTM_NEWLINK)
                continue;
            struct ifinfomsg *ifi = NLMSG_DATA(h);
            int alen = (int)IFLA_PAYLOAD(h);

            for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
                if (a->rta_type != IFLA_IFNAME)
                    continue;
                detail_add(names, "%.*s", (int)RTA_PAYLOAD(a), (char *)RTA_DATA(a));
                if (strncmp(RTA_DATA(a), "lo", RTA_PAYLOAD(a)) != 0) {
                    detail_add(detail, "%.*s", (int)RTA_PAYLOAD(a), (char *)RTA_DATA(a));
                    others++;
                }
            }
        }
    }
done:
    if (others > 0)
        return open_("netlink-ifaces", detail);
    return blocked_why("netlink-ifaces", "ONLY_LO");
}

/* unix PATH / unix-abstract NAME: a connection is OPEN. */
static int probe_unix(int abstract, const char *name)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    char what[WHAT_MAX];
    size_t len = strlen(name);
    socklen_t salen;
    int fd;

    if (len + (abstract ? 1 : 0) >= sizeof(sun.sun_path))
        return usage("socket name too long");
    snprintf(what, sizeof(what), "%s:%s", abstract ? "unix-abstract" : "unix", name);
    memcpy(sun.sun_path + (abstract ? 1 : 0), name, len);
    salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (abstract ? 1 : 0));
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return blocked(what, errno);
    if (connect(fd, (struct sockaddr *)&sun, salen) != 0)
        return blocked(what, errno);
    close(fd);
    return open_(what, NULL);
}

/*
 * Read path: a byte of a file, or an entry of a folder besides . and .. (its names are a leak
 * already). Returns 1 when something was read (names into detail for a folder), 0 when it opened
 * but held nothing, -1 with errno set when it did not open or read.
 */
static int try_read(const char *path, char *detail)
{
    struct stat st;
    char byte;
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), found = 0, err;
    DIR *d;
    struct dirent *e;

    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
        n = read(fd, &byte, 1);
        err = errno;
        close(fd);
        errno = err;
        return n < 0 ? -1 : n > 0;
    }
    d = fdopendir(fd);
    if (d == NULL) {
        err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        detail_add(detail, "%s", e->d_name);
        found = 1;
    }
    err = errno;
    closedir(d);
    errno = err;
    return found ? 1 : err != 0 ? -1 : 0;
}

/* One verdict line for try_read's answer. */
static int read_verdict(const char *what, const char *path)
{
    char detail[DETAIL_MAX] = "";
    int r = try_read(path, detail);

    if (r < 0)
        return blocked(what, errno);
    return r > 0 ? open_(what, detail) : blocked_why(what, "EMPTY");
}

/* read PATH: a byte read, or a folder's entry, is OPEN. */
static int probe_read(const char *path)
{
    char what[WHAT_MAX];

    snprintf(what, sizeof(what), "read:%s", path);
    return read_verdict(what, path);
}

/* write PATH: opening an existing file for writing is OPEN (nothing is written: the tests point
 * it at the control plane's files). create PATH: a new file is OPEN (it is removed again). */
static int probe_write(int create, const char *path)
{
    char what[WHAT_MAX];
    int fd;

    snprintf(what, sizeof(what), "%s:%s", create ? "create" : "write", path);
    if (create)
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    else
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return blocked(what, errno);
    close(fd);
    if (create)
        unlink(path);
    return open_(what, NULL);
}

/*
 * The target pids of kill and ptrace: the arguments, or with "-" one line of standard input
 * (space-separated), so that a test can name processes that exist only once the sandbox runs
 * (sworn-run's relay): the probe then prints "READY" on a line of its own first, before its
 * verdict line, and reads; after the verdict it stays until standard input ends. Returns how
 * many, or -1 on a bad number.
 */
static int read_pids(char **args, int nargs, pid_t *pids)
{
    static char line[1024];
    char *save = NULL, *tok;
    int n = 0;

    if (nargs == 1 && strcmp(args[0], "-") == 0) {
        printf("READY\n");
        fflush(stdout);
        if (fgets(line, sizeof(line), stdin) == NULL)
            return -1;
        for (tok = strtok_r(line, " \t\n", &save); tok != NULL && n < PIDS_MAX;
             tok = strtok_r(NULL, " \t\n", &save)) {
            char *end;
            long v = strtol(tok, &end, 10);

            if (*end != '\0' || v <= 0 || v > INT_MAX)
                return -1;
            pids[n++] = (pid_t)v;
        }
        return n;
    }
    for (int i = 0; i < nargs && n < PIDS_MAX; i++) {
        char *end;
        long v = strtol(args[i], &end, 10);

        if (*end != '\0' || v <= 0 || v > INT_MAX)
            return -1;
        pids[n++] = (pid_t)v;
    }
    return n;
}

/* With "-": after the verdict, stay until standard input ends, so that the test sees every target
 * (and the sandbox around us) still running while the sandbox still runs. */
static void hold_if_stdin(char **args, int nargs)
{
    char buf[256];

    if (nargs != 1 || strcmp(args[0], "-") != 0)
        return;
    fflush(stdout);
    while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
        ;
}

/* kill PID...|-: signal 0, then SIGKILL, to each; any delivered is OPEN. Our own pid is refused
 * (a test's mistake, not an attempt). */
static int probe_kill(char **args, int nargs)
{
    pid_t pids[PIDS_MAX];
    int n = read_pids(args, nargs, pids), last = ESRCH, rc;
    char detail[DETAIL_MAX] = "";

    if (n <= 0)
        return usage("kill: PID... or - (pids on standard input)");
    for (int i = 0; i < n; i++) {
        if (pids[i] == getpid())
            return usage("kill: refusing to kill the probe itself");
        if (kill(pids[i], 0) == 0)
            detail_add(detail, "%ld:0", (long)pids[i]);
        else
            last = errno;
        if (kill(pids[i], SIGKILL) == 0)
            detail_add(detail, "%ld:KILL", (long)pids[i]);
        else
            last = errno;
    }
    rc = detail[0] != '\0' ? open_("kill", detail) : blocked("kill", last);
    hold_if_stdin(args, nargs);
    return rc;
}

/* ptrace PID...|-: PTRACE_ATTACH to each; any attach is OPEN (detached again at once). */
static int probe_ptrace(char **args, int nargs)
{
    pid_t pids[PIDS_MAX];
    int n = read_pids(args, nargs, pids), last = ESRCH, rc;
    char detail[DETAIL_MAX] = "";

    if (n <= 0)
        return usage("ptrace: PID... or - (pids on standard input)");
    for (int i = 0; i < n; i++) {
        if (ptrace(PTRACE_ATTACH, pids[i], NULL, NULL) == 0) {
            detail_add(detail, "%ld", (long)pids[i]);
            waitpid(pids[i], NULL, __WALL);
            ptrace(PTRACE_DETACH, pids[i], NULL, NULL);
        } else {
            last = errno;
        }
    }
    rc = detail[0] != '\0' ? open_("ptrace", detail) : blocked("ptrace", last);
    hold_if_stdin(args, nargs);
    return rc;
}

/* proc-root PID|all PATH: read /proc/PID/root/PATH (for all: through every pid this /proc lists;
 * the first that reads wins); a host file reached through another process's root is OPEN. */
static int probe_proc_root(const char *pid, const char *path)
{
    char what[WHAT_MAX], full[PATH_MAX], detail[DETAIL_MAX] = "";
    int last = ENOENT, empty = 0;
    DIR *d;
    struct dirent *e;

    if (path[0] != '/')
        return usage("proc-root: PATH must be absolute");
    snprintf(what, sizeof(what), "proc-root:%s:%s", pid, path);
    if (strcmp(pid, "all") != 0) {
        snprintf(full, sizeof(full), "/proc/%s/root%s", pid, path);
        return read_verdict(what, full);
    }
    d = opendir("/proc");
    if (d == NULL)
        return blocked(what, errno);
    while ((e = readdir(d)) != NULL) {
        int r;

        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(full, sizeof(full), "/proc/%s/root%s", e->d_name, path);
        r = try_read(full, detail);
        if (r > 0) {
            char through[300];

            snprintf(through, sizeof(through), "through=%s", e->d_name);
            closedir(d);
            return open_(what, through);
        }
        if (r == 0)
            empty = 1;
        else
            last = errno;
    }
    closedir(d);
    return empty ? blocked_why(what, "EMPTY") : blocked(what, last);
}

/* fds: every descriptor beyond 0, 1 and 2 (but the one listing them) is OPEN, with where it
 * points; a folder is tried further (its parent opened: the way out of a mount namespace). */
static int probe_fds(void)
{
    char detail[DETAIL_MAX] = "";
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    if (d == NULL)
        return blocked("fds", errno);
    while ((e = readdir(d)) != NULL) {
        char link[64], target[PATH_MAX];
        int fd = atoi(e->d_name);
        ssize_t n;
        struct stat st;

        if (e->d_name[0] == '.' || fd <= STDERR_FILENO || fd == dirfd(d))
            continue;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = '\0';
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
            int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

            detail_add(detail, "%d=%s(parent:%s)", fd, target, up >= 0 ? "opened" : "refused");
            if (up >= 0)
                close(up);
        } else {
            detail_add(detail, "%d=%s", fd, target);
        }
    }
    closedir(d);
    return detail[0] != '\0' ? open_("fds", detail) : blocked_why("fds", "NONE");
}

/* tiocsti: push a character into the input of a terminal on 0, 1 or 2 (a shell outside would
 * read it as typed: CVE-2017-5226); pushed is OPEN. */
static int probe_tiocsti(void)
{
    int last = 0;

    for (int fd = 0; fd <= 2; fd++) {
        char c = '\n';

        if (!isatty(fd))
            continue;
        if (ioctl(fd, TIOCSTI, &c) == 0)
            return open_("tiocsti", NULL);
        last = errno;
    }
    return last != 0 ? blocked("tiocsti", last) : blocked_why("tiocsti", "NONE");
}

/* mount: a tmpfs over /tmp (a mount namespace of our own would let us rearrange the view). */
static int probe_mount(void)
{
    if (mount("sworn-probe", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, NULL) != 0)
        return blocked("mount", errno);
    umount2("/tmp", MNT_DETACH);
    return open_("mount", "tmpfs");
}

/* unshare-user: a new user namespace (root inside it: the way to every namespaced power). */
static int probe_unshare_user(void)
{
    if (unshare(CLONE_NEWUSER) != 0)
        return blocked("unshare-user", errno);
    return open_("unshare-user", NULL);
}

/* setns: join the network and mount namespaces of pid 1 (or of any process /proc shows). */
static int probe_setns(void)
{
    static const struct {
        const char *name;
        int type;
    } ns[] = {{"net", CLONE_NEWNET}, {"mnt", CLONE_NEWNS}, {"pid", CLONE_NEWPID}};
    int last = ENOENT;

    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/1/ns/%s", ns[i].name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            last = errno;
            continue;
        }
        if (setns(fd, ns[i].type) == 0)
            return open_("setns", ns[i].name);
        last = errno;
        close(fd);
    }
    return blocked("setns", last);
}

/* chroot: chroot(2) needs CAP_SYS_CHROOT (with a held folder descriptor it leads out). */
static int probe_chroot(void)
{
    if (chroot(".") != 0)
        return blocked("chroot", errno);
    return open_("chroot", NULL);
}

/* mknod: a character device (1,3, /dev/null) in the work folder needs CAP_MKNOD. */
static int probe_mknod(void)
{
    const char *path = "sworn-probe.node";

    if (mknod(path, S_IFCHR | 0600, makedev(1, 3)) != 0)
        return blocked("mknod", errno);
    unlink(path);
    return open_("mknod", NULL);
}

/* bpf: an array map (BPF_MAP_CREATE). */
static int probe_bpf(void)
{
    union bpf_attr attr;
    long fd;

    memset(&attr, 0, sizeof(attr));
    attr.map_type = BPF_MAP_TYPE_ARRAY;
    attr.key_size = 4;
    attr.value_size = 4;
    attr.max_entries = 1;
    fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
    if (fd < 0)
        return blocked("bpf", errno);
    close((int)fd);
    return open_("bpf", NULL);
}

/* perf: a software counter on ourselves (allowed by perf_event_paranoid 2 without seccomp). */
static int probe_perf(void)
{
    struct perf_event_attr attr;
    long fd;

    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0)
        return blocked("perf", errno);
    close((int)fd);
    return open_("perf", NULL);
}

/* userfaultfd: user-mode faults only (allowed without privilege since Linux 5.11). */
static int probe_userfaultfd(void)
{
    long fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);

    if (fd < 0)
        return blocked("userfaultfd", errno);
    close((int)fd);
    return open_("userfaultfd", NULL);
}

/* keyctl: the session keyring's id (kernel keyrings are not namespaced by the user namespace). */
static int probe_keyctl(void)
{
    long id = syscall(SYS_keyctl, KEYCTL_GET_ID, KEY_SPEC_SESSION, 1);

    if (id < 0)
        return blocked("keyctl", errno);
    return open_("keyctl", NULL);
}

/* io_uring: a one-entry ring (its operations are not seen by a seccomp filter). */
static int probe_io_uring(void)
{
    unsigned char params[120]; /* struct io_uring_params, zeroed: its size since Linux 5.1 */
    long fd;

    memset(params, 0, sizeof(params));
    fd = syscall(SYS_io_uring_setup, 1, params);
    if (fd < 0)
        return blocked("io_uring", errno);
    close((int)fd);
    return open_("io_uring", NULL);
}

/* ---- the red team's findings on sworn-run (test_sandbox_attacks) ---- */

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; the same number on every architecture */
#endif
#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif
#define SETID_BITS (S_ISUID | S_ISGID)

/* The mode a setid attempt left on path, for an OPEN line ("mode=4755"), or "" when it is gone. */
static void mode_detail(int dirfd, const char *path, char *detail, size_t cap)
{
    struct stat st;

    detail[0] = '\0';
    if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
        snprintf(detail, cap, "mode=%o", (unsigned)(st.st_mode & 07777));
}

/* openat2 with a mode (glibc has no wrapper before 2.39's; the struct is the kernel's). */
static long openat2_mode(const char *path, mode_t mode)
{
    struct {
        uint64_t flags, mode, resolve;
    } how = {O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode, 0};

    return syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/*
 * setid CALL MODE PATH: give PATH the octal MODE (with a set-user-ID or set-group-ID bit) through
 * one system call: chmod, fchmod, fchmodat, fchmodat2 change an existing file; open, openat,
 * creat, openat2 create a file; mkdir, mkdirat a folder; mknod, mknodat a regular file. A call
 * that succeeds is OPEN (its mode in the detail; the file stays for the test to see). A file from
 * /work with such a bit, owned by the sandbox's uid, runs as that uid on the host.
 */
static int probe_setid(const char *call, const char *mode_text, const char *path)
{
    char what[WHAT_MAX], detail[32];
    char *end;
    unsigned long m = strtoul(mode_text, &end, 8);
    mode_t mode = (mode_t)m;
    long r;
    int fd;

    if (*end != '\0' || m > 07777 || (m & SETID_BITS) == 0)
        return usage("setid: MODE must be octal with 4000 or 2000 in it");
    snprintf(what, sizeof(what), "setid-%s:%s:%s", call, mode_text, path);
    if (strcmp(call, "chmod") == 0) {
        r = chmod(path, mode);
    } else if (strcmp(call, "fchmod") == 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return usage("setid fchmod: PATH must exist");
        r = fchmod(fd, mode);
        close(fd);
    } else if (strcmp(call, "fchmodat") == 0) {
        r = fchmodat(AT_FDCWD, path, mode, 0);
    } else if (strcmp(call, "fchmodat2") == 0) {
        r = syscall(SYS_fchmodat2, AT_FDCWD, path, mode, 0);
    } else if (strcmp(call, "open") == 0) {
#ifdef SYS_open
        r = syscall(SYS_open, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
#else /* aarch64 has openat alone */
        r = openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
#endif
    } else if (strcmp(call, "openat") == 0) {
        r = openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    } else if (strcmp(call, "creat") == 0) {
#ifdef SYS_creat
        r = syscall(SYS_creat, path, mode);
#else
        r = openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
#endif
    } else if (strcmp(call, "openat2") == 0) {
        r = openat2_mode(path, mode);
    } else if (strcmp(call, "mkdir") == 0) {
#ifdef SYS_mkdir
        r = syscall(SYS_mkdir, path, mode);
#else
        r = mkdirat(AT_FDCWD, path, mode);
#endif
    } else if (strcmp(call, "mkdirat") == 0) {
        r = mkdirat(AT_FDCWD, path, mode);
    } else if (strcmp(call, "mknod") == 0) {
#ifdef SYS_mknod
        r = syscall(SYS_mknod, path, S_IFREG | mode, 0);
#else
        r = mknodat(AT_FDCWD, path, S_IFREG | mode, 0);
#endif
    } else if (strcmp(call, "mknodat") == 0) {
        r = mknodat(AT_FDCWD, path, S_IFREG | mode, 0);
    } else {
        return usage("setid: CALL is one of chmod fchmod fchmodat fchmodat2 open openat creat "
                     "openat2 mkdir mkdirat mknod mknodat");
    }
    if (r < 0)
        return blocked(what, errno);
    if (strncmp(call, "open", 4) == 0 || strcmp(call, "creat") == 0)
        close((int)r);
    mode_detail(AT_FDCWD, path, detail, sizeof(detail));
    return open_(what, detail);
}

/*
 * conns HOST PORT N: open N TCP connections to HOST:PORT and hold them; not an attempt, and no
 * verdict. Prints "CONNS held=H closed=C" once they are open and again each time the peer closes
 * one (C of them closed so far, H still held), and once more for each line read on standard
 * input; exits 0 when standard input ends. A relay that takes a bounded number of connections
 * from one sandbox closes the ones above its bound as it accepts them.
 */
static int probe_conns(const char *host, const char *port, const char *count)
{
    struct sockaddr_storage sa;
    socklen_t len;
    char *end;
    long n = strtol(count, &end, 10);
    static struct pollfd p[PROBE_CONNS_MAX + 1];
    int held = 0, closed = 0;

    if (parse_addr(AF_INET, host, port, &sa, &len) != 0 || *end != '\0' || n < 1 ||
        n > PROBE_CONNS_MAX)
        return usage("conns HOST PORT N (N: 1..4096)");
    p[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    for (long i = 1; i <= n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) != 0) {
            fprintf(stderr, "sworn-conformance-probe conns: connection %ld: %s\n", i,
                    strerror(errno));
            return usage("conns: a connection could not be opened");
        }
        p[i] = (struct pollfd){.fd = fd, .events = POLLIN};
        held++;
    }
    printf("CONNS held=%d closed=%d\n", held, closed);
    fflush(stdout);
    for (;;) {
        int changed = 0;

        if (poll(p, (nfds_t)n + 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return usage("conns: poll failed");
        }
        for (long i = 1; i <= n; i++) {
            char buf[512];
            ssize_t got;

            if (p[i].fd < 0 || p[i].revents == 0)
                continue;
            got = recv(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (got > 0 || (got < 0 && (errno == EAGAIN || errno == EINTR)))
                continue; /* bytes from the other side: still held */
            close(p[i].fd);
            p[i].fd = -1;
            held--;
            closed++;
            changed = 1;
        }
        if (changed) {
            printf("CONNS held=%d closed=%d\n", held, closed);
            fflush(stdout);
        }
        if (p[0].revents != 0) {
            char line[256];

            if (fgets(line, sizeof(line), stdin) == NULL)
                return 0;
            printf("CONNS held=%d closed=%d\n", held, closed);
            fflush(stdout);
        }
    }
}

/* deep N: N folders, each in the last (mkdir "d", chdir "d"), from the current folder: a tree
 * deeper than any path or descriptor limit, for the cleanup to remove. Not an attempt: prints
 * "DEEP N" and exits 0, or a message and exit 1 when a level cannot be made. */
static int probe_deep(const char *count)
{
    char *end;
    long n = strtol(count, &end, 10);

    if (*end != '\0' || n < 1 || n > 1000000)
        return usage("deep N (1..1000000)");
    for (long i = 0; i < n; i++)
        if (mkdir("d", 0700) != 0 || chdir("d") != 0) {
            fprintf(stderr, "sworn-conformance-probe deep: level %ld: %s\n", i, strerror(errno));
            return 1;
        }
    printf("DEEP %ld\n", n);
    return 0;
}

/* Field k (1-based, as proc(5) counts: 1 pid, 6 session, 7 tty_nr) of /proc/self/stat. */
static long self_stat_field(int k)
{
    char text[1024], *p;
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    if (k == 1)
        return strtol(text, NULL, 10);
    p = strrchr(text, ')'); /* field 2 is the command name, which may hold spaces */
    if (p == NULL)
        return -1;
    p += 2; /* field 3 */
    for (int i = 3; i < k; i++) {
        p = strchr(p, ' ');
        if (p == NULL)
            return -1;
        p++;
    }
    return strtol(p, NULL, 10);
}

/* ctty: a controlling terminal (tty_nr in /proc/self/stat, /dev/tty opens) or the session of
 * whoever started the sandbox is OPEN: the terminal is the caller's. A session whose leader is
 * outside our pid namespace reads as session 0 in /proc/self/stat. */
static int probe_ctty(void)
{
    long tty = self_stat_field(7), sid = self_stat_field(6);
    char detail[DETAIL_MAX] = "";
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC), err = errno;

    if (tty != 0)
        detail_add(detail, "tty_nr=%ld", tty);
    if (sid <= 0)
        detail_add(detail, "session=%ld", sid);
    if (fd >= 0) {
        detail_add(detail, "/dev/tty");
        close(fd);
    }
    return detail[0] != '\0' ? open_("ctty", detail) : blocked("ctty", err);
}

/* tiocsetd: set the line discipline of the terminal on 0 to the one it has (TIOCGETD, then
 * TIOCSETD): a line discipline is kernel code the caller picks, on a terminal that outlives us. */
static int probe_tiocsetd(void)
{
    int ldisc = 0;

    if (!isatty(STDIN_FILENO))
        return blocked_why("tiocsetd", "NONE");
    if (ioctl(STDIN_FILENO, TIOCGETD, &ldisc) != 0)
        return blocked("tiocsetd", errno);
    if (ioctl(STDIN_FILENO, TIOCSETD, &ldisc) != 0)
        return blocked("tiocsetd", errno);
    return open_("tiocsetd", NULL);
}

/* netlink-proto P: socket(AF_NETLINK, SOCK_DGRAM, P); the socket is OPEN (route netlink, 0, is
 * one the sandbox keeps). */
static int probe_netlink_proto(const char *proto)
{
    char what[64], *end;
    long p = strtol(proto, &end, 10);

    if (*end != '\0' || p < 0 || p > 31)
        return usage("netlink-proto P (0..31)");
    snprintf(what, sizeof(what), "netlink-proto:%ld", p);
    return probe_socket(what, AF_NETLINK, SOCK_DGRAM, (int)p);
}

/* modify_ldt: read the local descriptor table (x86 only: elsewhere ENOSYS). */
static int probe_modify_ldt(void)
{
#ifdef SYS_modify_ldt
    static unsigned char ldt[8192];
    long r = syscall(SYS_modify_ldt, 0, ldt, sizeof(ldt));

    if (r < 0)
        return blocked("modify_ldt", errno);
    return open_("modify_ldt", NULL);
#else
    return blocked("modify_ldt", ENOSYS);
#endif
}

/* memfd_secret: memory even the kernel does not map (a surface of its own). */
static int probe_memfd_secret(void)
{
    long fd = syscall(SYS_memfd_secret, O_CLOEXEC);

    if (fd < 0)
        return blocked("memfd_secret", errno);
    close((int)fd);
    return open_("memfd_secret", NULL);
}

/* tcooff: stop the output of the terminal on 0 (tcflow TCOOFF: the TCXONC ioctl) and leave it
 * stopped: every later write to it blocks, sworn-run's own at the end included. Stopped is OPEN
 * (run it on a terminal of its own: sworn_sbx_run_under_pty's). */
static int probe_tcooff(void)
{
    if (!isatty(STDIN_FILENO))
        return blocked_why("tcooff", "NONE");
    if (tcflow(STDIN_FILENO, TCOOFF) != 0)
        return blocked("tcooff", errno);
    return open_("tcooff", NULL);
}

/* tiocexcl: put the terminal on 0 in exclusive mode (TIOCEXCL: every later open of it but root's
 * fails with EBUSY, the terminal's owner's included) and leave it so; set is OPEN. */
static int probe_tiocexcl(void)
{
    if (!isatty(STDIN_FILENO))
        return blocked_why("tiocexcl", "NONE");
    if (ioctl(STDIN_FILENO, TIOCEXCL) != 0)
        return blocked("tiocexcl", errno);
    return open_("tiocexcl", NULL);
}

/* winsz ROWS COLS: set the window size of the terminal on 0 (TIOCSWINSZ) and leave it so; set is
 * OPEN (what a run leaves on its caller's terminal is the test's to judge). */
static int probe_winsz(const char *rows, const char *cols)
{
    char what[64], *end_r, *end_c;
    long r = strtol(rows, &end_r, 10), c = strtol(cols, &end_c, 10);
    struct winsize ws = {0};

    if (*end_r != '\0' || *end_c != '\0' || r < 0 || r > 65535 || c < 0 || c > 65535)
        return usage("winsz ROWS COLS (0..65535)");
    snprintf(what, sizeof(what), "winsz:%ld:%ld", r, c);
    if (!isatty(STDIN_FILENO))
        return blocked_why(what, "NONE");
    ws.ws_row = (unsigned short)r;
    ws.ws_col = (unsigned short)c;
    if (ioctl(STDIN_FILENO, TIOCSWINSZ, &ws) != 0)
        return blocked(what, errno);
    return open_(what, NULL);
}

/* A number of 0..max for family, socketpair and exchange; -1 when it is not one. */
static long number_arg(const char *text, long max)
{
    char *end;
    long v = strtol(text, &end, 10);

    return end == text || *end != '\0' || v < 0 || v > max ? -1 : v;
}

/* family N TYPE PROTO: socket(N, TYPE, PROTO), all three numbers; the socket is OPEN. */
static int probe_family(const char *family, const char *type, const char *proto)
{
    long f = number_arg(family, 255), t = number_arg(type, 15), p = number_arg(proto, 65535);
    char what[96]; /* room for any three longs: the compiler cannot see the bounds above */

    if (f < 0 || t < 0 || p < 0)
        return usage("family N TYPE PROTO (0..255, 0..15, 0..65535)");
    snprintf(what, sizeof(what), "family:%ld:%ld:%ld", f, t, p);
    return probe_socket(what, (int)f, (int)t, (int)p);
}

/* socketpair N TYPE PROTO: socketpair(N, TYPE, PROTO); the pair is OPEN. */
static int probe_socketpair(const char *family, const char *type, const char *proto)
{
    long f = number_arg(family, 255), t = number_arg(type, 15), p = number_arg(proto, 65535);
    char what[96]; /* room for any three longs: the compiler cannot see the bounds above */
    int sv[2];

    if (f < 0 || t < 0 || p < 0)
        return usage("socketpair N TYPE PROTO (0..255, 0..15, 0..65535)");
    snprintf(what, sizeof(what), "socketpair:%ld:%ld:%ld", f, t, p);
    if (socketpair((int)f, (int)t | SOCK_CLOEXEC, (int)p, sv) != 0)
        return blocked(what, errno);
    close(sv[0]);
    close(sv[1]);
    return open_(what, "pair");
}

/*
 * exchange A B MS: not an attempt (the other local user of test_sandbox_attacks, outside any
 * sandbox). Swap the entries A and B of one folder (renameat2 RENAME_EXCHANGE: a folder and a
 * symbolic link trade places, atomically) as fast as it can, for MS milliseconds or until
 * standard input ends, whichever is first. Prints "EXCHANGING" once the first swap is done and
 * "EXCHANGED N" at the end (N swaps, so the test knows which way round they are left); exit 0,
 * or 1 with a message when a swap fails.
 */
static int probe_exchange(const char *a, const char *b, const char *ms_text)
{
    long ms = number_arg(ms_text, 600000), n = 0, deadline;
    struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};

    if (ms < 1)
        return usage("exchange A B MS (1..600000)");
    deadline = now_ms() + ms;
    for (;;) {
        if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0) {
            fprintf(stderr, "sworn-conformance-probe exchange %s %s: %s\n", a, b, strerror(errno));
            return 1;
        }
        if (++n == 1) {
            printf("EXCHANGING\n");
            fflush(stdout);
        }
        /* Now and then: the deadline, and standard input's end (a read of 0 bytes). */
        if (n % 256 == 0) {
            char buf[64];

            if (now_ms() >= deadline)
                break;
            if (poll(&in, 1, 0) > 0 && read(STDIN_FILENO, buf, sizeof(buf)) <= 0)
                break;
        }
    }
    printf("EXCHANGED %ld\n", n);
    return 0;
}

/* ---- the conformance attempts (docs/conformance.md, "The probes from inside the sandbox") ---- */

#define CRED_FILE_MAX (256 * 1024)         /* larger files are not read by cred-files */
#define CRED_FILES_MAX 20000               /* files cred-files reads, at most */
#define CRED_BYTES_MAX (16L * 1024 * 1024) /* bytes cred-files reads per root, at most */
#define CRED_DEPTH_MAX 16                  /* folder depth cred-files walks */
#define HTTP_ANSWER_MAX 65536              /* bytes of an answer http reads */
#define LINGER_TAG_MAX 11                  /* "swc-" and the tag fit a process name (15 bytes) */

/* Found: "OPEN <what> sha256=<first 8 hex digits of the digest>" (never the value). */
static int cred_found(const char *what, const struct probe_cred *c, size_t which)
{
    char detail[32];

    snprintf(detail, sizeof(detail), "sha256=%02x%02x%02x%02x", c->digest[which][0],
             c->digest[which][1], c->digest[which][2], c->digest[which][3]);
    return open_(what, detail);
}

/* Nothing found: "BLOCKED <what>:scanned=N NONE" (N candidates hashed: 0 means it did not look). */
static int cred_none(const char *what, const struct probe_cred *c)
{
    char w[WHAT_MAX];

    snprintf(w, sizeof(w), "%s:scanned=%lu", what, c->scanned);
    return blocked_why(w, "NONE");
}

/* cred-env HASHES: every variable of our environment, name=value as a line. */
static int probe_cred_env(const char *hashes)
{
    extern char **environ;
    struct probe_cred c;
    size_t which;

    if (probe_cred_parse(&c, hashes) != 0)
        return usage("cred-env HEX64[,HEX64...]");
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        const char *eq = strchr(*e, '=');

        if (probe_cred_scan(&c, *e, strlen(*e), &which) ||
            (eq != NULL && probe_cred_scan(&c, eq + 1, strlen(eq + 1), &which))) {
            char what[WHAT_MAX];

            snprintf(what, sizeof(what), "cred-env:%.*s", eq != NULL ? (int)(eq - *e) : 0, *e);
            return cred_found(what, &c, which);
        }
    }
    return cred_none("cred-env", &c);
}

/* Read at most CRED_FILE_MAX bytes of an open file into buf; returns the count or -1. */
static ssize_t read_some(int fd, char *buf)
{
    size_t got = 0;

    while (got < CRED_FILE_MAX) {
        ssize_t n = read(fd, buf + got, CRED_FILE_MAX - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return got > 0 ? (ssize_t)got : -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* Scan one file (opened with O_NONBLOCK: a FIFO never blocks us); 1 when found. */
static int scan_file(int dirfd, const char *name, char *buf, struct probe_cred *c, size_t *which,
                     long *bytes)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    ssize_t n;
    int found = 0;

    if (fd < 0)
        return 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= CRED_FILE_MAX &&
        (n = read_some(fd, buf)) > 0) {
        *bytes += n;
        found = probe_cred_scan(c, buf, (size_t)n, which);
    }
    close(fd);
    return found;
}

struct walk {
    struct probe_cred *c;
    char *buf;
    long files, bytes;
    size_t which;
    char where[PATH_MAX];
};

/* Walk path (not following links, not into /proc, /sys or /dev); 1 when found (w->where). */
static int walk(struct walk *w, const char *path, int depth)
{
    DIR *d;
    struct dirent *e;
    int found = 0;

    if (depth > CRED_DEPTH_MAX || strcmp(path, "/proc") == 0 || strcmp(path, "/sys") == 0 ||
        strcmp(path, "/dev") == 0)
        return 0;
    d = opendir(path);
    if (d == NULL)
        return 0;
    while (!found && w->files < CRED_FILES_MAX && w->bytes < CRED_BYTES_MAX &&
           (e = readdir(d)) != NULL) {
        char child[PATH_MAX];
        struct stat st;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (snprintf(child, sizeof(child), "%s/%s", strcmp(path, "/") == 0 ? "" : path,
                     e->d_name) >= (int)sizeof(child) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            found = walk(w, child, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            w->files++;
            if (scan_file(dirfd(d), e->d_name, w->buf, w->c, &w->which, &w->bytes)) {
                snprintf(w->where, sizeof(w->where), "%s", child);
                found = 1;
            }
        }
    }
    closedir(d);
    return found;
}

/* cred-files HASHES ROOT...: every regular file readable under the roots (each root at most
 * CRED_BYTES_MAX bytes, CRED_FILES_MAX files in all); "cut=N" says how many roots the budgets
 * cut short. */
static int probe_cred_files(const char *hashes, char **roots, int nroots)
{
    static char buf[CRED_FILE_MAX];
    struct probe_cred c;
    struct walk w = {.c = &c, .buf = buf};
    char what[WHAT_MAX];
    long total = 0;
    int cut = 0; /* roots whose walk ended at a budget: not all of them was looked at */

    if (probe_cred_parse(&c, hashes) != 0 || nroots < 1)
        return usage("cred-files HEX64[,HEX64...] ROOT...");
    for (int i = 0; i < nroots; i++) {
        if (roots[i][0] != '/')
            return usage("cred-files: ROOT must be absolute");
        total += w.bytes;
        w.bytes = 0; /* each root has its own budget: a big one does not hide the next */
        if (w.files >= CRED_FILES_MAX)
            cut++;
        else if (walk(&w, roots[i], 0)) {
            snprintf(what, sizeof(what), "cred-files:%.500s", w.where);
            return cred_found(what, &c, w.which);
        } else if (w.bytes >= CRED_BYTES_MAX) {
            cut++;
        }
    }
    snprintf(what, sizeof(what), "cred-files:files=%ld:bytes=%ld:cut=%d", w.files, total + w.bytes,
             cut);
    return cred_none(what, &c);
}

/* cred-proc HASHES: the environment and command line of every process this /proc lists. */
static int probe_cred_proc(const char *hashes)
{
    static char buf[CRED_FILE_MAX];
    static const char *const files[] = {"environ", "cmdline"};
    struct probe_cred c;
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t which;
    long procs = 0;
    char what[WHAT_MAX];

    if (probe_cred_parse(&c, hashes) != 0)
        return usage("cred-proc HEX64[,HEX64...]");
    if (d == NULL)
        return blocked("cred-proc", errno);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        procs++;
        for (size_t i = 0; i < 2; i++) {
            char path[300];
            int fd;
            ssize_t n;

            snprintf(path, sizeof(path), "/proc/%s/%s", e->d_name, files[i]);
            fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            n = read_some(fd, buf);
            close(fd);
            if (n > 0 && probe_cred_scan(&c, buf, (size_t)n, &which)) {
                closedir(d);
                snprintf(what, sizeof(what), "cred-proc:%s", path);
                return cred_found(what, &c, which);
            }
        }
    }
    closedir(d);
    snprintf(what, sizeof(what), "cred-proc:procs=%ld", procs);
    return cred_none(what, &c);
}

/* Undo the escapes of a request given on the command line: \r, \n, \t, \\ and \xHH. Returns the
 * length, or -1 on a bad escape. */
static ssize_t unescape(const char *in, char *out, size_t cap)
{
    size_t n = 0;

    for (const char *p = in; *p != '\0'; p++) {
        char ch = *p;

        if (n + 1 >= cap)
            return -1;
        if (ch == '\\') {
            p++;
            if (*p == 'r')
                ch = '\r';
            else if (*p == 'n')
                ch = '\n';
            else if (*p == 't')
                ch = '\t';
            else if (*p == '\\')
                ch = '\\';
            else if (*p == 'x' && p[1] != '\0' && p[2] != '\0') {
                char hex[3] = {p[1], p[2], '\0'}, *end;

                ch = (char)strtol(hex, &end, 16);
                if (*end != '\0')
                    return -1;
                p += 2;
            } else
                return -1;
        }
        out[n++] = ch;
    }
    out[n] = '\0';
    return (ssize_t)n;
}

/*
 * Send the request (escaped, as unescape takes it) to HOST:PORT and read the answer until the
 * peer closes, HTTP_ANSWER_MAX bytes or wait_ms without a byte. Returns the bytes read (0: the
 * peer closed without a byte), or -1 with errno (ETIMEDOUT: connected, sent, no byte came).
 */
static ssize_t http_exchange(const char *host, const char *port, const char *escaped, char *answer)
{
    static char req[16384];
    struct sockaddr_storage sa;
    socklen_t len;
    ssize_t rn = unescape(escaped, req, sizeof(req)), got = 0;
    int fd, err = 0;
    socklen_t elen = sizeof(err);

    if (rn < 0) {
        errno = EINVAL;
        return -1;
    }
    if (parse_addr(strchr(host, ':') != NULL ? AF_INET6 : AF_INET, host, port, &sa, &len) != 0) {
        errno = EINVAL;
        return -1;
    }
    fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, len) != 0 && errno != EINPROGRESS)
        return -1;
    if (wait_fd(fd, POLLOUT) <= 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
        errno = err != 0 ? err : errno;
        return -1;
    }
    for (ssize_t sent = 0; sent < rn;) {
        ssize_t w = send(fd, req + sent, (size_t)(rn - sent), MSG_NOSIGNAL);

        if (w < 0 && errno == EAGAIN && wait_fd(fd, POLLOUT) > 0)
            continue;
        if (w <= 0)
            break; /* the peer may answer and close before reading all: read what it said */
        sent += w;
    }
    while (got < HTTP_ANSWER_MAX - 1) {
        ssize_t n;

        if (wait_fd(fd, POLLIN) <= 0) {
            if (got == 0) {
                close(fd);
                errno = ETIMEDOUT;
                return -1;
            }
            break;
        }
        n = recv(fd, answer + got, (size_t)(HTTP_ANSWER_MAX - 1 - got), 0);
        if (n <= 0)
            break;
        got += n;
    }
    answer[got] = '\0';
    close(fd);
    return got;
}

/* The status of an HTTP/1.x answer, or 0 when the bytes are not one. */
static int http_status(const char *a)
{
    if (strncmp(a, "HTTP/1.", 7) != 0 || a[8] != ' ' || a[9] < '1' || a[9] > '5')
        return 0;
    return atoi(a + 9);
}

/*
 * Whether the answer is the proxy's own (docs/proxy.md: Content-Type application/json and one
 * JSON line {"request_id":"px-...","effect":...}); its effect into effect (a word), and after
 * it, when the reason is one of an upstream failure ("reason":"upstream WORD: ..."; docs/proxy.md
 * "The request upstream": dns, refused-address, connect, tls), ":upstream=WORD": the request was
 * allowed and the proxy went (or tried to go) upstream.
 */
static int http_own(const char *a, char *effect, size_t cap)
{
    const char *body = strstr(a, "\r\n\r\n"), *e;

    snprintf(effect, cap, "none");
    if (body == NULL || strncmp(body + 4, "{\"request_id\":\"px-", 18) != 0 ||
        strcasestr(a, "\r\ncontent-type: application/json") == NULL)
        return 0;
    e = strstr(body, "\"effect\":\"");
    if (e != NULL)
        snprintf(effect, cap, "%.*s", (int)strcspn(e + 10, "\""), e + 10);
    e = strstr(body, "\"reason\":\"upstream ");
    if (e != NULL && strlen(effect) + 27 < cap) {
        size_t w = strspn(e + 19, "abcdefghijklmnopqrstuvwxyz-");

        if (w > 0 && w < 16 && e[19 + w] == ':')
            snprintf(effect + strlen(effect), cap - strlen(effect), ":upstream=%.*s", (int)w,
                     e + 19);
    }
    return 1;
}

/*
 * http HOST PORT REQUEST: one request (escaped: \r \n \t \\ \xHH) to the proxy at HOST:PORT.
 * The proxy's own answer (a deny or refusal) is "BLOCKED http:...:status=S:effect=E PROXY" (E
 * followed by ":upstream=W" when the proxy went upstream and failed there: http_own); the
 * connection closed or left silent after the request is "BLOCKED http:... CLOSED" or ETIMEDOUT;
 * any other answer (an upstream's: the request went through) is "OPEN http:... status=S".
 * A connection that could not be made is BLOCKED with its errno: the runner takes it as "the
 * proxy was not reached", never as a refusal.
 */
static int probe_http(const char *host, const char *port, const char *request)
{
    static char answer[HTTP_ANSWER_MAX];
    char what[WHAT_MAX], effect[64], detail[64];
    ssize_t n = http_exchange(host, port, request, answer);
    int status;

    snprintf(what, sizeof(what), "http:%s:%s", host, port);
    if (n < 0)
        return errno == EINVAL ? usage("http HOST PORT REQUEST") : blocked(what, errno);
    if (n == 0)
        return blocked_why(what, "CLOSED");
    status = http_status(answer);
    if (http_own(answer, effect, sizeof(effect))) {
        snprintf(what, sizeof(what), "http:%s:%s:status=%d:effect=%s", host, port, status, effect);
        return blocked_why(what, "PROXY");
    }
    snprintf(detail, sizeof(detail), "status=%d bytes=%zd", status, n);
    return open_(what, detail);
}

/*
 * cred-http HASHES HOST PORT REQUEST EXPECT: the request as http sends it, then the whole answer
 * (head and body) scanned for a credential. Found: OPEN. Else "BLOCKED cred-http:status=S:
 * own=0|1:seen=0|1:masked=0|1:scanned=N NONE", seen saying whether EXPECT (what the upstream
 * must echo, e.g. the symbolic token sent) is in the answer: without it the runner cannot tell a
 * refusal from an echo that did not echo. masked says whether the answer holds a run of
 * MASK_RUN: sworn-proxy overwrites a released credential that comes back with '*', byte for byte
 * (docs/proxy.md, "Masking the credential"), so an echo that shows such a run where the token
 * should be shows a credential was released for the request, masked on its way back.
 */
#define MASK_RUN "********"

static int probe_cred_http(const char *hashes, const char *host, const char *port,
                           const char *request, const char *expect)
{
    static char answer[HTTP_ANSWER_MAX];
    struct probe_cred c;
    char what[WHAT_MAX], effect[64];
    size_t which;
    ssize_t n;

    if (probe_cred_parse(&c, hashes) != 0)
        return usage("cred-http HEX64[,HEX64...] HOST PORT REQUEST EXPECT");
    n = http_exchange(host, port, request, answer);
    if (n < 0)
        return errno == EINVAL ? usage("cred-http: bad request") : blocked("cred-http", errno);
    if (probe_cred_scan(&c, answer, (size_t)n, &which))
        return cred_found("cred-http", &c, which);
    snprintf(what, sizeof(what), "cred-http:status=%d:own=%d:seen=%d:masked=%d",
             http_status(answer), http_own(answer, effect, sizeof(effect)),
             strstr(answer, expect) != NULL, strstr(answer, MASK_RUN) != NULL);
    return cred_none(what, &c);
}

/*
 * The value of token field name in an answer body, JSON ("name" : "value") or form
 * (name=value, at the start or after '&'), from *from on: its start and length, or NULL. *from
 * moves past it, so every occurrence is seen.
 */
static const char *token_field(const char *body, const char *name, const char **from, size_t *len)
{
    size_t nl = strlen(name);

    for (const char *p = *from; (p = strstr(p, name)) != NULL; p += nl) {
        const char *v = p + nl;

        if (p > body && p[-1] == '"' && *v == '"') {
            v++;
            while (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n')
                v++;
            if (*v != ':')
                continue;
            v++;
            while (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n')
                v++;
            if (*v != '"')
                continue; /* a number, an object: not a token the agent could present */
            v++;
            *len = strcspn(v, "\"");
        } else if ((p == body || p[-1] == '&') && *v == '=') {
            v++;
            *len = strcspn(v, "&\r\n");
        } else {
            continue;
        }
        *from = v + *len;
        return v;
    }
    return NULL;
}

/*
 * oauth HASHES HOST PORT REQUEST: a token request (escaped, as http sends it) to the proxy; the
 * whole answer scanned for a credential (found: OPEN), then every access_token, refresh_token
 * and id_token of its body, JSON or form: a value that is not a symbolic token (sym_...) is the
 * real one, OPEN "oauth:FIELD real". Else "BLOCKED oauth:status=S:tokens=N:scanned=M NONE", N
 * the tokens seen (all symbolic): 0 means the answer held none, which the runner cannot judge.
 */
static int probe_oauth(const char *hashes, const char *host, const char *port, const char *request)
{
    static char answer[HTTP_ANSWER_MAX];
    static const char *const fields[] = {"access_token", "refresh_token", "id_token"};
    struct probe_cred c;
    char what[WHAT_MAX];
    const char *body;
    size_t which, tokens = 0;
    ssize_t n;

    if (probe_cred_parse(&c, hashes) != 0)
        return usage("oauth HEX64[,HEX64...] HOST PORT REQUEST");
    n = http_exchange(host, port, request, answer);
    if (n < 0)
        return errno == EINVAL ? usage("oauth: bad request") : blocked("oauth", errno);
    if (probe_cred_scan(&c, answer, (size_t)n, &which))
        return cred_found("oauth", &c, which);
    body = strstr(answer, "\r\n\r\n");
    body = body != NULL ? body + 4 : answer + n;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        const char *from = body, *v;
        size_t len;

        while ((v = token_field(body, fields[i], &from, &len)) != NULL) {
            tokens++;
            if (len < 4 || strncmp(v, "sym_", 4) != 0) {
                snprintf(what, sizeof(what), "oauth:%s", fields[i]);
                return open_(what, "real");
            }
        }
    }
    snprintf(what, sizeof(what), "oauth:status=%d:tokens=%zu", http_status(answer), tokens);
    return cred_none(what, &c);
}

/* Append n bytes to b at *len (the caller sized b for the whole hello). */
static void put(unsigned char *b, size_t *len, const void *p, size_t n)
{
    memcpy(b + *len, p, n);
    *len += n;
}

static void put16(unsigned char *b, size_t *len, size_t v)
{
    unsigned char x[2] = {(unsigned char)(v >> 8), (unsigned char)v};

    put(b, len, x, 2);
}

/*
 * A TLS ClientHello as a client offering TLS 1.3 and 1.2 sends it (RFC 8446 section 4.1.2): the
 * usual suites, groups x25519 and P-256, signature algorithms, ALPN http/1.1, a key share of 32
 * random bytes (any 32 bytes are an X25519 public key; the handshake goes no further than the
 * server's first answer), and a server_name of sni unless it is NULL. Returns its length.
 */
static size_t client_hello(unsigned char *b, const char *sni)
{
    static const unsigned char suites[] = {0x13, 0x01, 0x13, 0x02, 0x13, 0x03, 0xc0,
                                           0x2b, 0xc0, 0x2f, 0xc0, 0x2c, 0xc0, 0x30};
    static const unsigned char rest[] = {
        0x00, 0x0a, 0x00, 0x06, 0x00, 0x04, 0x00, 0x1d, 0x00, 0x17,              /* groups */
        0x00, 0x0b, 0x00, 0x02, 0x01, 0x00,                                      /* points */
        0x00, 0x0d, 0x00, 0x0a, 0x00, 0x08, 0x04, 0x03, 0x08, 0x04, 0x04, 0x01,  /* sigalgs */
        0x05, 0x03, 0x00, 0x10, 0x00, 0x0b, 0x00, 0x09, 0x08, 'h',  't',  't',   /* ALPN */
        'p',  '/',  '1',  '.',  '1',  0x00, 0x2b, 0x00, 0x05, 0x04, 0x03, 0x04,  /* versions */
        0x03, 0x03, 0x00, 0x33, 0x00, 0x26, 0x00, 0x24, 0x00, 0x1d, 0x00, 0x20}; /* key share */
    unsigned char rnd[64];
    size_t len = 0, hs, ext, sn = sni != NULL ? strlen(sni) : 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd < 0 || read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd))
        memset(rnd, 0x5a, sizeof(rnd)); /* not a secret: any bytes serve */
    if (fd >= 0)
        close(fd);
    put(b, &len, "\x16\x03\x01\x00\x00", 5); /* record, its length below */
    hs = len;
    put(b, &len, "\x01\x00\x00\x00\x03\x03", 6); /* ClientHello, its length below; legacy 1.2 */
    put(b, &len, rnd, 32);
    put(b, &len, "\x00", 1); /* no session id */
    put16(b, &len, sizeof(suites));
    put(b, &len, suites, sizeof(suites));
    put(b, &len, "\x01\x00", 2); /* compression: null */
    ext = len;
    put16(b, &len, 0);
    if (sni != NULL) {
        put16(b, &len, 0x0000);
        put16(b, &len, sn + 5);
        put16(b, &len, sn + 3);
        put(b, &len, "\x00", 1);
        put16(b, &len, sn);
        put(b, &len, sni, sn);
    }
    put(b, &len, rest, sizeof(rest));
    put(b, &len, rnd + 32, 32);
    b[ext] = (unsigned char)((len - ext - 2) >> 8), b[ext + 1] = (unsigned char)(len - ext - 2);
    b[hs + 1] = (unsigned char)((len - hs - 4) >> 16);
    b[hs + 2] = (unsigned char)((len - hs - 4) >> 8), b[hs + 3] = (unsigned char)(len - hs - 4);
    b[3] = (unsigned char)((len - 5) >> 8), b[4] = (unsigned char)(len - 5);
    return len;
}

/* Read until the peer closes, n bytes, or wait_ms without a byte: the bytes read, -1 on error. */
static ssize_t read_some_wait(int fd, unsigned char *b, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t k;

        if (wait_fd(fd, POLLIN) <= 0)
            break;
        k = recv(fd, b + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
        if (got >= 4 && memmem(b, got, "\r\n\r\n", 4) != NULL)
            break; /* a CONNECT answer's head is all that is read of it */
    }
    return (ssize_t)got;
}

/*
 * Through the proxy at HOST:PORT, CONNECT TARGET:TPORT and read the answer's head. Returns the
 * tunnel (a non-blocking socket), or -1 once the verdict is printed (*rc): the errno of a
 * connection that could not be made, or "BLOCKED <what>:connect=S REFUSED" for an answer other
 * than 200. what is the attempt's name, extended in place on a refusal (cap bytes).
 */
static int tunnel_open(const char *host, const char *port, const char *target, const char *tport,
                       char *what, size_t cap, int *rc)
{
    struct sockaddr_storage sa;
    socklen_t len;
    unsigned char ans[4096];
    char req[1024];
    ssize_t n;
    int fd, err = 0;
    socklen_t elen = sizeof(err);

    if (parse_addr(strchr(host, ':') != NULL ? AF_INET6 : AF_INET, host, port, &sa, &len) != 0) {
        *rc = usage("bad proxy address or port");
        return -1;
    }
    fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *rc = blocked(what, errno);
        return -1;
    }
    if ((connect(fd, (struct sockaddr *)&sa, len) != 0 && errno != EINPROGRESS) ||
        wait_fd(fd, POLLOUT) <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 ||
        err != 0) {
        int e = err != 0 ? err : errno != 0 ? errno : ETIMEDOUT;

        close(fd);
        *rc = blocked(what, e);
        return -1;
    }
    n = snprintf(req, sizeof(req), "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", target, tport,
                 target, tport);
    if (n <= 0 || (size_t)n >= sizeof(req)) {
        close(fd);
        *rc = usage("the CONNECT target is too long");
        return -1;
    }
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        *rc = blocked(what, errno);
        return -1;
    }
    n = read_some_wait(fd, ans, sizeof(ans) - 1);
    ans[n > 0 ? n : 0] = '\0';
    if (n <= 0 || http_status((char *)ans) != 200) {
        snprintf(what + strlen(what), cap - strlen(what), ":connect=%d",
                 n > 0 ? http_status((char *)ans) : 0);
        close(fd);
        *rc = blocked_why(what, "REFUSED");
        return -1;
    }
    return fd;
}

/*
 * connect-tls HOST PORT TARGET TPORT SNI: through the proxy at HOST:PORT, CONNECT TARGET:TPORT,
 * then a TLS ClientHello with server_name SNI ("-": none). The server's first record answering it
 * is judged: a ServerHello (the proxy terminates the tunnel with this name) is OPEN "serverhello";
 * an alert is "BLOCKED ... ALERT", a close "CLOSED", silence ETIMEDOUT; a CONNECT answered with
 * anything but 200 is "BLOCKED ...:connect=S REFUSED". Nothing past the ServerHello is done.
 */
static int probe_connect_tls(const char *host, const char *port, const char *target,
                             const char *tport, const char *sni)
{
    unsigned char hello[1024], ans[8];
    char what[WHAT_MAX];
    ssize_t n;
    size_t hl;
    int fd, rc;

    snprintf(what, sizeof(what), "connect-tls:%s:%s:sni=%s", target, tport, sni);
    if (strlen(sni) > 255)
        return usage("connect-tls HOST PORT TARGET TPORT SNI");
    fd = tunnel_open(host, port, target, tport, what, sizeof(what), &rc);
    if (fd < 0)
        return rc;
    hl = client_hello(hello, strcmp(sni, "-") == 0 ? NULL : sni);
    if (send(fd, hello, hl, MSG_NOSIGNAL) != (ssize_t)hl) {
        close(fd);
        return blocked(what, errno);
    }
    n = 0;
    while (n < 6) {
        ssize_t k;

        if (wait_fd(fd, POLLIN) <= 0) {
            close(fd);
            return blocked_why(what, n > 0 ? "SHORT" : "ETIMEDOUT");
        }
        k = recv(fd, ans + n, (size_t)(6 - n), 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += k;
    }
    close(fd);
    if (n >= 6 && ans[0] == 0x16 && ans[5] == 0x02)
        return open_(what, "serverhello");
    if (n >= 1 && ans[0] == 0x15)
        return blocked_why(what, "ALERT");
    return blocked_why(what, n == 0 ? "CLOSED" : "OTHER");
}

/*
 * Wait, until deadline (now_ms), for what the last TLS call (its return rc) needs from the socket.
 * Returns 1 to call again, 0 at the deadline, -1 when the call failed for good (a close, an alert,
 * a bad record).
 */
static int tls_wait(SSL *ssl, int rc, int fd, long deadline)
{
    int e = SSL_get_error(ssl, rc), r;
    struct pollfd p = {.fd = fd};

    if (e == SSL_ERROR_WANT_READ)
        p.events = POLLIN;
    else if (e == SSL_ERROR_WANT_WRITE)
        p.events = POLLOUT;
    else
        return -1;
    do {
        long left = deadline - now_ms();

        if (left <= 0)
            return 0;
        r = poll(&p, 1, (int)left);
    } while (r < 0 && errno == EINTR);
    return r > 0 ? 1 : r == 0 ? 0 : -1;
}

/*
 * One TLS session in a tunnel: the handshake (SNI, none for "-"; ALPN http/1.1), the request
 * sent, the answer read into answer (NUL-terminated) until the peer closes, HTTP_ANSWER_MAX - 1
 * bytes, wait_ms without a byte, or 4 * wait_ms in all. The certificate is not required to
 * verify: whether it did against the default store (SSL_CERT_FILE, SSL_CERT_DIR when set) for
 * target goes into verify. Returns the bytes read (0: closed unanswered), -1 when no TLS session
 * was made (the handshake failed or timed out), -2 when it was made and the request could not be
 * sent, -3 when nothing came back within the wait.
 */
static ssize_t tls_exchange(int fd, const char *target, const char *sni, const char *req, size_t rn,
                            char *answer, char *verify, size_t vcap)
{
    static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL *ssl = ctx != NULL ? SSL_new(ctx) : NULL;
    long deadline = now_ms() + 4L * wait_ms;
    ssize_t got = -1;
    size_t sent = 0;
    int rc, w;

    snprintf(verify, vcap, "none");
    if (ssl == NULL || SSL_CTX_set_default_verify_paths(ctx) != 1 || SSL_set_fd(ssl, fd) != 1 ||
        SSL_set_alpn_protos(ssl, alpn, sizeof(alpn)) != 0)
        goto done;
    SSL_set_verify(ssl, SSL_VERIFY_NONE, NULL); /* judged after: a refusal must still be read */
    SSL_set_options(ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
    if (strchr(target, ':') != NULL || strspn(target, "0123456789.") == strlen(target))
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), target);
    else
        SSL_set1_host(ssl, target);
    if (strcmp(sni, "-") != 0 && SSL_set_tlsext_host_name(ssl, sni) != 1)
        goto done;
    while ((rc = SSL_connect(ssl)) != 1)
        if (tls_wait(ssl, rc, fd, deadline) <= 0)
            goto done;
    {
        long v = SSL_get_verify_result(ssl);

        snprintf(verify, vcap, "%s:ca=%s", v == X509_V_OK ? "ok" : "no",
                 getenv("SSL_CERT_FILE") != NULL ? "SSL_CERT_FILE" : "default");
        if (v != X509_V_OK)
            snprintf(verify + strlen(verify), vcap - strlen(verify), ":x509=%ld", v);
    }
    got = -2;
    while (sent < rn) {
        rc = SSL_write(ssl, req + sent, (int)(rn - sent));
        if (rc > 0)
            sent += (size_t)rc;
        else if (tls_wait(ssl, rc, fd, deadline) <= 0)
            goto done;
    }
    got = 0;
    while (got < HTTP_ANSWER_MAX - 1) {
        long idle = now_ms() + wait_ms;

        rc = SSL_read(ssl, answer + got, (int)(HTTP_ANSWER_MAX - 1 - got));
        if (rc > 0) {
            got += rc;
            continue;
        }
        w = tls_wait(ssl, rc, fd, idle < deadline ? idle : deadline);
        if (w == 0 && got == 0)
            got = -3;
        if (w <= 0)
            break;
    }
done:
    if (got >= 0)
        answer[got] = '\0';
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    return got;
}

/*
 * connect-tls-http HOST PORT TARGET TPORT SNI REQUEST: through the proxy at HOST:PORT, CONNECT
 * TARGET:TPORT, make a TLS session in the tunnel (server_name SNI, "-": none) and send REQUEST
 * (escaped, as http takes it) inside it. <what> is "connect-tls-http:TARGET:TPORT" and, once the
 * handshake is done, ":verify=ok|no:ca=SSL_CERT_FILE|default[:x509=N]" (whether the certificate
 * verified for TARGET against the store the sandbox gives, N the X509 error). The answer:
 *   the proxy's own (as http judges it)  "BLOCKED <what>:status=S:effect=E[:upstream=W] PROXY"
 *   closed without a byte, or silence    "BLOCKED <what> CLOSED", "BLOCKED <what> ETIMEDOUT"
 *   anything else (an upstream's)        "OPEN <what> status=S bytes=N" (S 0: not HTTP)
 * A CONNECT not answered 200 is "BLOCKED ...:connect=S REFUSED", and a tunnel in which no TLS
 * session could be made is "BLOCKED <what> NOTLS": neither reached the request.
 */
static int probe_connect_tls_http(const char *host, const char *port, const char *target,
                                  const char *tport, const char *sni, const char *request)
{
    static char req[16384], answer[HTTP_ANSWER_MAX];
    char what[WHAT_MAX], verify[96], effect[64], detail[64];
    ssize_t rn = unescape(request, req, sizeof(req)), n;
    int fd, rc;

    snprintf(what, sizeof(what), "connect-tls-http:%s:%s", target, tport);
    if (rn < 0 || strlen(sni) > 255)
        return usage("connect-tls-http HOST PORT TARGET TPORT SNI REQUEST");
    fd = tunnel_open(host, port, target, tport, what, sizeof(what), &rc);
    if (fd < 0)
        return rc;
    n = tls_exchange(fd, target, sni, req, (size_t)rn, answer, verify, sizeof(verify));
    close(fd);
    if (n == -1)
        return blocked_why(what, "NOTLS");
    snprintf(what + strlen(what), sizeof(what) - strlen(what), ":verify=%s", verify);
    if (n == -2)
        return blocked_why(what, "CLOSED"); /* the request was not taken: nothing answered it */
    if (n == -3)
        return blocked_why(what, "ETIMEDOUT");
    if (n == 0)
        return blocked_why(what, "CLOSED");
    if (http_own(answer, effect, sizeof(effect))) {
        snprintf(what + strlen(what), sizeof(what) - strlen(what), ":status=%d:effect=%s",
                 http_status(answer), effect);
        return blocked_why(what, "PROXY");
    }
    snprintf(detail, sizeof(detail), "status=%d bytes=%zd", http_status(answer), n);
    return open_(what, detail);
}

/*
 * linger TAG: leave a file /tmp/sworn-conformance-TAG and a process named swc-TAG behind (the
 * process detaches: a new session, its outputs closed) and print "LEFT TAG pid=P". Not an
 * attempt: the next task's "left TAG" looks for them.
 */
static int probe_linger(const char *tag)
{
    char path[PATH_MAX], name[16];
    int fd, ready[2];
    pid_t pid;

    if (strlen(tag) > LINGER_TAG_MAX || strchr(tag, '/') != NULL)
        return usage("linger TAG (1..11 bytes, no '/')");
    snprintf(path, sizeof(path), "/tmp/sworn-conformance-%s", tag);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0)
        close(fd);
    if (pipe2(ready, O_CLOEXEC) != 0)
        return usage("linger: pipe");
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);

        setsid();
        if (fork() != 0)
            _exit(0);
        snprintf(name, sizeof(name), "swc-%s", tag);
        prctl(PR_SET_NAME, name, 0, 0, 0);
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
        close(ready[0]);
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        close(ready[1]);
        for (;;)
            pause();
    }
    close(ready[1]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    char byte;
    ssize_t got = read(ready[0], &byte, 1);

    close(ready[0]);
    printf("LEFT %s file=%s process=%s\n", tag, fd >= 0 ? "made" : errno_name(errno),
           got == 1 ? "running" : "none");
    return 0;
}

/* left TAG: the file and the process of a linger TAG; either found is OPEN. */
static int probe_left(const char *tag)
{
    char path[PATH_MAX], name[20], detail[DETAIL_MAX] = "", what[WHAT_MAX];
    struct stat st;
    DIR *d = opendir("/proc");
    struct dirent *e;
    long procs = 0;

    if (strlen(tag) > LINGER_TAG_MAX || strchr(tag, '/') != NULL)
        return usage("left TAG (1..11 bytes, no '/')");
    snprintf(path, sizeof(path), "/tmp/sworn-conformance-%s", tag);
    if (lstat(path, &st) == 0)
        detail_add(detail, "file=%s", path);
    snprintf(name, sizeof(name), "swc-%s\n", tag);
    while (d != NULL && (e = readdir(d)) != NULL) {
        char comm[300], text[32] = "";
        int fd;

        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        procs++;
        snprintf(comm, sizeof(comm), "/proc/%s/comm", e->d_name);
        fd = open(comm, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (read(fd, text, sizeof(text) - 1) > 0 && strcmp(text, name) == 0)
            detail_add(detail, "process=%s", e->d_name);
        close(fd);
    }
    if (d != NULL)
        closedir(d);
    snprintf(what, sizeof(what), "left:%s:procs=%ld", tag, procs);
    return detail[0] != '\0' ? open_(what, detail) : blocked_why(what, "NONE");
}

/* resolve NAME: the system's resolver (getaddrinfo, as any program asks it); an address is OPEN. */
static int probe_resolve(const char *name)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    char what[WHAT_MAX], addr[INET6_ADDRSTRLEN] = "?";
    int rc = getaddrinfo(name, NULL, &hints, &res);

    snprintf(what, sizeof(what), "resolve:%s", name);
    if (rc != 0) {
        const char *why = rc == EAI_NONAME   ? "EAI_NONAME"
                          : rc == EAI_AGAIN  ? "EAI_AGAIN"
                          : rc == EAI_FAIL   ? "EAI_FAIL"
                          : rc == EAI_SYSTEM ? errno_name(errno)
                                             : "EAI_OTHER";

        return blocked_why(what, why);
    }
    if (res->ai_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, addr, sizeof(addr));
    else if (res->ai_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)res->ai_addr)->sin6_addr, addr, sizeof(addr));
    freeaddrinfo(res);
    return open_(what, addr);
}

/* signal0 PID...: signal 0 to each (nothing is delivered: whether one could be); any is OPEN.
 * seize PID...: PTRACE_SEIZE (the target is not stopped), detached at once; any is OPEN. Unlike
 * kill and ptrace, neither disturbs a running deployment's processes when the attempt succeeds. */
static int probe_touch(int seize, char **args, int nargs)
{
    pid_t pids[PIDS_MAX];
    int n = read_pids(args, nargs, pids), last = ESRCH;
    char detail[DETAIL_MAX] = "";

    if (n <= 0)
        return usage("signal0 / seize PID...");
    for (int i = 0; i < n; i++) {
        if (pids[i] == getpid())
            return usage("refusing to aim at the probe itself");
        if (seize ? ptrace(PTRACE_SEIZE, pids[i], NULL, NULL) == 0 : kill(pids[i], 0) == 0) {
            detail_add(detail, "%ld", (long)pids[i]);
            if (seize)
                ptrace(PTRACE_DETACH, pids[i], NULL, NULL);
        } else {
            last = errno;
        }
    }
    return detail[0] != '\0' ? open_(seize ? "seize" : "signal0", detail)
                             : blocked(seize ? "seize" : "signal0", last);
}

/* hold: not an attempt. Print "HOLD pid=P uid=U", then wait until standard input ends, so that a
 * test can look at the running sandbox from outside. Exit 0. */
static int probe_hold(void)
{
    char buf[256];

    printf("HOLD pid=%ld uid=%ld\n", (long)getpid(), (long)getuid());
    fflush(stdout);
    while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
        ;
    return 0;
}

/* --help's text: the conventions of every sworn program (common/cli.h), kept here because this
 * program links nothing of sworn's. */
static const char help_text[] =
    "usage: sworn-conformance-probe ATTEMPT ARGS...\n"
    "       sworn-conformance-probe --help | --version\n"
    "One attempt to get out of a sandbox, as sworn-conformance starts it inside the deployment's\n"
    "sandbox (the attempts: docs/conformance.md, section 3a). It prints one line, BLOCKED or\n"
    "OPEN, and exits with its verdict.\n"
    "\n"
    "Exit status:\n"
    "  0  done: succeeded, or the answer is yes\n"
    "  1  failed, or the answer is no\n"
    "  2  bad usage: an unknown option or command, a missing or malformed argument\n"
    "  (0: the attempt was blocked: the sandbox held)\n"
    "  3  the attempt got through\n";

int main(int argc, char **argv)
{
    const char *w = getenv("SWORN_PROBE_WAIT_MS");
    const char *cmd;
    int rc;

    if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
        fputs(help_text, stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("sworn-conformance-probe %s (commit %s)\n", SWORN_RELEASE, SWORN_COMMIT);
        return fflush(stdout) == 0 ? 0 : 1;
    }

    if (w != NULL && atoi(w) > 0)
        wait_ms = atoi(w);
    if (argc < 2)
        return usage("no attempt named");
    cmd = argv[1];
    argc -= 2;
    argv += 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(cmd, "tcp4") == 0 && argc == 2)
        rc = probe_tcp(AF_INET, cmd, argv[0], argv[1]);
    else if (strcmp(cmd, "tcp6") == 0 && argc == 2)
        rc = probe_tcp(AF_INET6, cmd, argv[0], argv[1]);
    else if (strcmp(cmd, "udp4") == 0 && argc == 2)
        rc = probe_udp(AF_INET, cmd, argv[0], argv[1]);
    else if (strcmp(cmd, "udp6") == 0 && argc == 2)
        rc = probe_udp(AF_INET6, cmd, argv[0], argv[1]);
    else if (strcmp(cmd, "icmp-raw") == 0 && argc == 1)
        rc = probe_icmp(1, argv[0]);
    else if (strcmp(cmd, "icmp-ping") == 0 && argc == 1)
        rc = probe_icmp(0, argv[0]);
    else if (strcmp(cmd, "raw4") == 0 && argc == 0)
        rc = probe_socket("raw4", AF_INET, SOCK_RAW, IPPROTO_UDP);
    else if (strcmp(cmd, "raw6") == 0 && argc == 0)
        rc = probe_socket("raw6", AF_INET6, SOCK_RAW, IPPROTO_UDP);
    else if (strcmp(cmd, "packet") == 0 && argc == 0)
        rc = probe_socket("packet", AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    else if (strcmp(cmd, "vsock") == 0 && argc == 0)
        rc = probe_socket("vsock", AF_VSOCK, SOCK_STREAM, 0);
    else if (strcmp(cmd, "netlink-ifaces") == 0 && argc == 0)
        rc = probe_netlink();
    else if (strcmp(cmd, "unix") == 0 && argc == 1)
        rc = probe_unix(0, argv[0]);
    else if (strcmp(cmd, "unix-abstract") == 0 && argc == 1)
        rc = probe_unix(1, argv[0]);
    else if (strcmp(cmd, "read") == 0 && argc == 1)
        rc = probe_read(argv[0]);
    else if (strcmp(cmd, "write") == 0 && argc == 1)
        rc = probe_write(0, argv[0]);
    else if (strcmp(cmd, "create") == 0 && argc == 1)
        rc = probe_write(1, argv[0]);
    else if (strcmp(cmd, "kill") == 0 && argc >= 1)
        rc = probe_kill(argv, argc);
    else if (strcmp(cmd, "ptrace") == 0 && argc >= 1)
        rc = probe_ptrace(argv, argc);
    else if (strcmp(cmd, "proc-root") == 0 && argc == 2)
        rc = probe_proc_root(argv[0], argv[1]);
    else if (strcmp(cmd, "fds") == 0 && argc == 0)
        rc = probe_fds();
    else if (strcmp(cmd, "tiocsti") == 0 && argc == 0)
        rc = probe_tiocsti();
    else if (strcmp(cmd, "mount") == 0 && argc == 0)
        rc = probe_mount();
    else if (strcmp(cmd, "unshare-user") == 0 && argc == 0)
        rc = probe_unshare_user();
    else if (strcmp(cmd, "setns") == 0 && argc == 0)
        rc = probe_setns();
    else if (strcmp(cmd, "chroot") == 0 && argc == 0)
        rc = probe_chroot();
    else if (strcmp(cmd, "mknod") == 0 && argc == 0)
        rc = probe_mknod();
    else if (strcmp(cmd, "bpf") == 0 && argc == 0)
        rc = probe_bpf();
    else if (strcmp(cmd, "perf") == 0 && argc == 0)
        rc = probe_perf();
    else if (strcmp(cmd, "userfaultfd") == 0 && argc == 0)
        rc = probe_userfaultfd();
    else if (strcmp(cmd, "keyctl") == 0 && argc == 0)
        rc = probe_keyctl();
    else if (strcmp(cmd, "io_uring") == 0 && argc == 0)
        rc = probe_io_uring();
    else if (strcmp(cmd, "setid") == 0 && argc == 3)
        rc = probe_setid(argv[0], argv[1], argv[2]);
    else if (strcmp(cmd, "conns") == 0 && argc == 3)
        rc = probe_conns(argv[0], argv[1], argv[2]);
    else if (strcmp(cmd, "deep") == 0 && argc == 1)
        rc = probe_deep(argv[0]);
    else if (strcmp(cmd, "ctty") == 0 && argc == 0)
        rc = probe_ctty();
    else if (strcmp(cmd, "tiocsetd") == 0 && argc == 0)
        rc = probe_tiocsetd();
    else if (strcmp(cmd, "netlink-proto") == 0 && argc == 1)
        rc = probe_netlink_proto(argv[0]);
    else if (strcmp(cmd, "modify_ldt") == 0 && argc == 0)
        rc = probe_modify_ldt();
    else if (strcmp(cmd, "memfd_secret") == 0 && argc == 0)
        rc = probe_memfd_secret();
    else if (strcmp(cmd, "tcooff") == 0 && argc == 0)
        rc = probe_tcooff();
    else if (strcmp(cmd, "tiocexcl") == 0 && argc == 0)
        rc = probe_tiocexcl();
    else if (strcmp(cmd, "winsz") == 0 && argc == 2)
        rc = probe_winsz(argv[0], argv[1]);
    else if (strcmp(cmd, "family") == 0 && argc == 3)
        rc = probe_family(argv[0], argv[1], argv[2]);
    else if (strcmp(cmd, "socketpair") == 0 && argc == 3)
        rc = probe_socketpair(argv[0], argv[1], argv[2]);
    else if (strcmp(cmd, "exchange") == 0 && argc == 3)
        rc = probe_exchange(argv[0], argv[1], argv[2]);
    else if (strcmp(cmd, "hold") == 0 && argc == 0)
        rc = probe_hold();
    else if (strcmp(cmd, "cred-env") == 0 && argc == 1)
        rc = probe_cred_env(argv[0]);
    else if (strcmp(cmd, "cred-files") == 0 && argc >= 2)
        rc = probe_cred_files(argv[0], argv + 1, argc - 1);
    else if (strcmp(cmd, "cred-proc") == 0 && argc == 1)
        rc = probe_cred_proc(argv[0]);
    else if (strcmp(cmd, "http") == 0 && argc == 3)
        rc = probe_http(argv[0], argv[1], argv[2]);
    else if (strcmp(cmd, "cred-http") == 0 && argc == 5)
        rc = probe_cred_http(argv[0], argv[1], argv[2], argv[3], argv[4]);
    else if (strcmp(cmd, "oauth") == 0 && argc == 4)
        rc = probe_oauth(argv[0], argv[1], argv[2], argv[3]);
    else if (strcmp(cmd, "connect-tls") == 0 && argc == 5)
        rc = probe_connect_tls(argv[0], argv[1], argv[2], argv[3], argv[4]);
    else if (strcmp(cmd, "connect-tls-http") == 0 && argc == 6)
        rc = probe_connect_tls_http(argv[0], argv[1], argv[2], argv[3], argv[4], argv[5]);
    else if (strcmp(cmd, "linger") == 0 && argc == 1)
        rc = probe_linger(argv[0]);
    else if (strcmp(cmd, "left") == 0 && argc == 1)
        rc = probe_left(argv[0]);
    else if (strcmp(cmd, "resolve") == 0 && argc == 1)
        rc = probe_resolve(argv[0]);
    else if (strcmp(cmd, "signal0") == 0 && argc >= 1)
        rc = probe_touch(0, argv, argc);
    else if (strcmp(cmd, "seize") == 0 && argc >= 1)
        rc = probe_touch(1, argv, argc);
    else
        rc = usage("unknown attempt or wrong number of arguments");
    fflush(stdout);
    return rc;
}
