/*
 * unixsock.c -- listening Unix sockets with a checked folder, owner, group and mode (unixsock.h).
 */
#define _GNU_SOURCE /* O_PATH */
#include "unixsock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "err.h"

/*
 * The socket's folder, opened once: every later step (unlink of a stale socket, bind, chown,
 * chmod, the final check) names the socket relative to this descriptor, so no one can swap a
 * folder of the path in between. It must be owned by root or the caller's uid and writable by
 * no one else: otherwise another uid could put a link or its own socket under the name between
 * the bind and the chown. OUT: *dirfd, base (the socket's name in it; capacity NAME_MAX + 1).
 */
int sworn_unix_socket_dir(const char *path, int *dirfd, char *base)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    struct stat st;
    size_t dlen;
    int fd;

    if (slash == NULL || slash[1] == '\0' || strlen(slash + 1) > NAME_MAX ||
        strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0)
        return sworn_err_set(SWORN_ERR_ARG, "socket path %s does not name a file in a folder",
                             path);
    dlen = slash == path ? 1 : (size_t)(slash - path);
    if (dlen >= sizeof(dir))
        return sworn_err_set(SWORN_ERR_ARG, "socket path %s is too long", path);
    memcpy(dir, path, dlen);
    dir[dlen] = '\0';
    strcpy(base, slash + 1);
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "socket folder %s: %s", dir, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
        (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        (void)close(fd);
        return sworn_err_set(SWORN_ERR_ARG,
                             "socket folder %s must be owned by root (or the daemon's uid) and "
                             "writable by no one else (mode %04o, owner %lu)",
                             dir, (unsigned)(st.st_mode & 07777), (unsigned long)st.st_uid);
    }
    *dirfd = fd;
    return 0;
}

/*
 * Bind a listening Unix stream socket at path, replacing a stale socket (never another file), with
 * the owner, group and mode given (decisiond: docs/decisiond.md section 3): connecting
 * needs write permission on the file, so other uids cannot connect at all. The umask makes it
 * 0600 and the caller's at bind; the chown and chmod after it only widen it to the configured
 * peers, through the checked folder's descriptor, so at no moment can anyone else connect. A
 * chmod cannot go through the socket's own descriptor (that is the socket, not the file).
 */
int sworn_unix_listen(const char *path, uid_t owner, gid_t group, mode_t mode, int backlog,
                      int *out)
{
    struct sockaddr_un sun;
    struct stat st;
    char base[NAME_MAX + 1];
    mode_t old_mask;
    int fd = -1, dirfd = -1, cwd = -1, rc;

    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sun.sun_path))
        return sworn_err_set(SWORN_ERR_ARG, "socket path %s is too long", path);
    if (sworn_unix_socket_dir(path, &dirfd, base) < 0)
        return -1;
    memcpy(sun.sun_path, base, strlen(base)); /* relative: bound in dirfd (fchdir below) */
    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            sworn_err_set(SWORN_ERR_ARG, "%s exists and is not a socket", path);
            goto fail;
        }
        if (unlinkat(dirfd, base, 0) != 0) {
            sworn_err_set(SWORN_ERR_IO, "unlink %s: %s", path, strerror(errno));
            goto fail;
        }
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        sworn_err_set(SWORN_ERR_IO, "socket: %s", strerror(errno));
        goto fail;
    }
    /* The caller is one thread here (see unixsock.h): its working folder moves for the bind. */
    cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cwd < 0 || fchdir(dirfd) != 0) {
        sworn_err_set(SWORN_ERR_IO, "socket folder of %s: %s", path, strerror(errno));
        goto fail;
    }
    old_mask = umask(0177);
    rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
    (void)umask(old_mask);
    if (fchdir(cwd) != 0 && rc == 0) {
        sworn_err_set(SWORN_ERR_IO, "back to the working folder: %s", strerror(errno));
        goto fail_bound;
    }
    if (rc != 0) {
        sworn_err_set(SWORN_ERR_IO, "bind %s: %s", path, strerror(errno));
        goto fail;
    }
    if (fchownat(dirfd, base, owner, group, AT_SYMLINK_NOFOLLOW) != 0 ||
        (mode != 0600 && fchmodat(dirfd, base, mode, AT_SYMLINK_NOFOLLOW) != 0)) {
        sworn_err_set(SWORN_ERR_IO, "%s: cannot give it owner %lu, group %lu, mode %04o: %s", path,
                      (unsigned long)owner, (unsigned long)group, (unsigned)mode, strerror(errno));
        goto fail_bound;
    }
    /* What clients will find (a folder with a set-group-id bit, say, would give another group). */
    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode) ||
        st.st_uid != owner || st.st_gid != group || (st.st_mode & 07777) != mode) {
        sworn_err_set(SWORN_ERR_IO, "%s is not the socket with owner %lu, group %lu, mode %04o",
                      path, (unsigned long)owner, (unsigned long)group, (unsigned)mode);
        goto fail_bound;
    }
    if (listen(fd, backlog) != 0) {
        sworn_err_set(SWORN_ERR_IO, "listen on %s: %s", path, strerror(errno));
        goto fail_bound;
    }
    (void)close(cwd);
    (void)close(dirfd);
    *out = fd;
    return 0;
fail_bound:
    (void)unlinkat(dirfd, base, 0);
fail:
    if (fd >= 0)
        (void)close(fd);
    if (cwd >= 0)
        (void)close(cwd);
    (void)close(dirfd);
    return -1;
}
