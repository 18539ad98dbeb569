/*
 * unixsock.h -- binding a listening Unix stream socket so that at no moment can anyone but the
 * configured peers connect to it: decisiond's decision and admin sockets, sworn-proxy's agent
 * sockets and its metrics socket.
 *
 * The socket's folder must be owned by root or the caller's uid and writable by no one else
 * (otherwise another uid could put a link or its own socket under the name between the bind and
 * the chown); every step names the socket relative to that folder's descriptor. A stale socket
 * at the path is replaced, never another kind of file. The socket is bound with a umask that
 * makes it 0600 and the caller's, then given its owner, group and mode, then checked.
 *
 * Errors (sworn_err): SWORN_ERR_ARG (the path is too long or does not name a file in a folder;
 * the folder is not safe; a non-socket is in the way), SWORN_ERR_IO (a system call failed; the
 * socket is not what was asked). Thread safety: sworn_unix_listen changes the process's working
 * folder for the bind and back: call it while the process runs one thread.
 */
#ifndef SWORN_UNIXSOCK_H
#define SWORN_UNIXSOCK_H

#include <sys/types.h>

/*
 * Open path's folder, checked as above. OUT: *dirfd (close it), base (the socket's name in it;
 * capacity NAME_MAX + 1). Returns 0, or -1 with sworn_err set.
 */
int sworn_unix_socket_dir(const char *path, int *dirfd, char *base);

/*
 * Bind and listen (backlog) on path, non-blocking and close-on-exec, with owner, group and mode.
 * OUT: *out, the listening descriptor. Returns 0, or -1 with sworn_err set (nothing left behind).
 */
int sworn_unix_listen(const char *path, uid_t owner, gid_t group, mode_t mode, int backlog,
                      int *out);

#endif
