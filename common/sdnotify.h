/*
 * sdnotify.h -- the service manager's readiness protocol (sd_notify(3)), without linking
 * libsystemd: one datagram of "KEY=VALUE" lines to the Unix socket $NOTIFY_SOCKET names (a path,
 * or an abstract name written with a leading '@'). Units of Type=notify wait for "READY=1".
 *
 * Open first (before a seccomp filter that forbids socket and connect), send later with write()
 * on the connected socket. Outside systemd ($NOTIFY_SOCKET unset) both do nothing.
 */
#ifndef SWORN_SDNOTIFY_H
#define SWORN_SDNOTIFY_H

/*
 * OUT: *fd, a connected, close-on-exec datagram socket to $NOTIFY_SOCKET, or -1 when the
 * variable is unset. Returns 0, or -1 with sworn_err set (SWORN_ERR_ARG: a value that is not an
 * absolute path or an '@' name, or too long; SWORN_ERR_IO: the socket or the connect failed).
 */
int sworn_sdnotify_open(int *fd);

/* Send msg (e.g. "READY=1", "STOPPING=1") on fd. fd -1: nothing, 0. Returns 0 or -1 (sworn_err). */
int sworn_sdnotify_send(int fd, const char *msg);

#endif
