/*
 * r_net.h -- the sandbox's network (docs/sandbox.md, "Network"), and passing descriptors.
 *
 * sworn_run_net_enter runs in the sandbox's pid 1, in its new network namespace, which has only a
 * loopback interface (down) and no route: it brings lo up, then makes the hostlink's listeners
 * there, 127.0.0.1:3128 and, when the kernel has IPv6, [::1]:3128, both non-blocking and
 * close-on-exec. Their descriptors go out to sworn-run (sworn_run_fd_send), whose relay accepts
 * on them from the host's side: the agent can connect to the port but never own it, since it is
 * bound before the agent starts and held by a process the agent cannot see.
 *
 * Errors: -1 with sworn_err set (SWORN_ERR_IO with errno).
 */
#ifndef SWORN_R_NET_H
#define SWORN_R_NET_H

#include <stddef.h>

#define SWORN_RUN_LISTENERS_MAX 2

/* OUT: fds[0..*n). */
int sworn_run_net_enter(int fds[SWORN_RUN_LISTENERS_MAX], size_t *n);

/* Send n (1..SWORN_RUN_LISTENERS_MAX) descriptors with one byte over the Unix socket sock, or
 * receive them (OUT: fds, *n; each close-on-exec). */
int sworn_run_fd_send(int sock, const int *fds, size_t n);
int sworn_run_fd_recv(int sock, int fds[SWORN_RUN_LISTENERS_MAX], size_t *n);

#endif
