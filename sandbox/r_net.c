/* r_net.c -- loopback, the hostlink's listeners inside the sandbox, descriptor passing (r_net.h).
 */
#define _GNU_SOURCE
#include "r_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "err.h"
#include "r_conf.h"

static int lo_up(void)
{
    struct ifreq ifr;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (s < 0)
        return sworn_err_set(SWORN_ERR_IO, "sandbox network: socket: %s", strerror(errno));
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, "lo", 3);
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        goto fail;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        goto fail;
    close(s);
    return 0;
fail:
    sworn_err_set(SWORN_ERR_IO, "sandbox network: bringing lo up: %s", strerror(errno));
    close(s);
    return -1;
}

static int listen_on(const struct sockaddr *sa, socklen_t len, int family, int *out)
{
    int one = 1;
    int s = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (s < 0)
        return -1;
    if (family == AF_INET6)
        (void)setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(s, sa, len) < 0 || listen(s, 128) < 0) {
        int e = errno;
        close(s);
        errno = e;
        return -1;
    }
    *out = s;
    return 0;
}

int sworn_run_net_enter(int fds[SWORN_RUN_LISTENERS_MAX], size_t *n)
{
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;

    *n = 0;
    if (lo_up() < 0)
        return -1;
    memset(&a4, 0, sizeof(a4));
    a4.sin_family = AF_INET;
    a4.sin_port = htons(SWORN_RUN_PROXY_PORT);
    a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (listen_on((struct sockaddr *)&a4, sizeof(a4), AF_INET, &fds[0]) < 0)
        return sworn_err_set(SWORN_ERR_IO, "sandbox network: listening on 127.0.0.1:%u: %s",
                             SWORN_RUN_PROXY_PORT, strerror(errno));
    *n = 1;
    memset(&a6, 0, sizeof(a6));
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons(SWORN_RUN_PROXY_PORT);
    a6.sin6_addr = in6addr_loopback;
    if (listen_on((struct sockaddr *)&a6, sizeof(a6), AF_INET6, &fds[1]) == 0)
        *n = 2;
    else if (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL) {
        close(fds[0]);
        *n = 0;
        return sworn_err_set(SWORN_ERR_IO, "sandbox network: listening on [::1]:%u: %s",
                             SWORN_RUN_PROXY_PORT, strerror(errno));
    }
    return 0;
}

/* The one message both ends use: one byte and room for the descriptors. */
union fd_control {
    char buf[CMSG_SPACE(sizeof(int) * SWORN_RUN_LISTENERS_MAX)];
    struct cmsghdr align;
};

static void fd_message(struct msghdr *m, struct iovec *iov, char *byte, union fd_control *u,
                       size_t control_len)
{
    memset(m, 0, sizeof(*m));
    memset(u, 0, sizeof(*u));
    iov->iov_base = byte;
    iov->iov_len = 1;
    m->msg_iov = iov;
    m->msg_iovlen = 1;
    m->msg_control = u->buf;
    m->msg_controllen = control_len;
}

int sworn_run_fd_send(int sock, const int *fds, size_t n)
{
    union fd_control u;
    struct msghdr m;
    struct iovec iov;
    struct cmsghdr *cm;
    char byte = 'L';
    ssize_t w;

    if (n == 0 || n > SWORN_RUN_LISTENERS_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "descriptor passing: %zu descriptors", n);
    fd_message(&m, &iov, &byte, &u, CMSG_SPACE(sizeof(int) * n));
    cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
    do
        w = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    return w == 1 ? 0
                  : sworn_err_set(SWORN_ERR_IO, "descriptor passing: sendmsg: %s", strerror(errno));
}

int sworn_run_fd_recv(int sock, int fds[SWORN_RUN_LISTENERS_MAX], size_t *n)
{
    union fd_control u;
    struct msghdr m;
    struct iovec iov;
    struct cmsghdr *cm;
    char byte = 0;
    ssize_t r;
    size_t count;

    *n = 0;
    fd_message(&m, &iov, &byte, &u, sizeof(u.buf));
    do
        r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    if (r != 1 || byte != 'L')
        return sworn_err_set(SWORN_ERR_IO, "descriptor passing: the sandbox sent no listener%s%s",
                             r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
    cm = CMSG_FIRSTHDR(&m);
    if (cm == NULL || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
        (m.msg_flags & MSG_CTRUNC) != 0)
        return sworn_err_set(SWORN_ERR_IO, "descriptor passing: no descriptors came");
    count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    /* More than fit would have set MSG_CTRUNC (and the kernel closes what did not fit). */
    if (count == 0 || count > SWORN_RUN_LISTENERS_MAX)
        return sworn_err_set(SWORN_ERR_IO, "descriptor passing: %zu descriptors", count);
    memcpy(fds, CMSG_DATA(cm), sizeof(int) * count);
    *n = count;
    return 0;
}
