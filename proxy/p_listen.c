/*
 * p_listen.c -- the agent listeners (p_proxy.h; docs/proxy.md "Listeners").
 *
 * Unix sockets (unix, hostlink) are bound with common/unixsock.h: the proxy's user owns them,
 * mode 0600 or 0660 with the configured group, so only those can connect. Each accepted
 * connection's SO_PEERCRED uid must be among the listener's `uids` when it lists any (else the
 * connection is closed at once and the proxy's log says so); it is recorded as Principal.uid. The
 * principal itself is the listener's: nothing the agent sends names it. The TCP listener is
 * loopback only (the configuration refuses anything else); its peers have no uid (0).
 */
#define _GNU_SOURCE /* struct ucred */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <json-c/json.h>

#include "err.h"
#include "p_jlog.h"
#include "p_proxy.h"
#include "unixsock.h"

#define BACKLOG 512

static int peer_allowed(const struct sworn_pconf_listener *l, uid_t uid)
{
    if (l->nuids == 0)
        return 1;
    for (size_t i = 0; i < l->nuids; i++)
        if (l->uids[i] == uid)
            return 1;
    return 0;
}

static void on_accept(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    struct sworn_plistener *l = arg;
    uid_t uid = 0;

    (void)lev;
    (void)sa;
    (void)salen;
    if (l->conf->kind != SWORN_PCONF_TCP) {
        struct ucred cred;
        socklen_t cl = sizeof(cred);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || cl != sizeof(cred)) {
            close(fd);
            return;
        }
        if (!peer_allowed(l->conf, cred.uid)) {
            json_object *o = json_object_new_object();

            json_object_object_add(o, "listener", json_object_new_string(l->conf->path));
            json_object_object_add(o, "peer_uid", json_object_new_int64((int64_t)cred.uid));
            sworn_plog(SWORN_PLOG_WARN, "peer_refused", o);
            close(fd);
            return;
        }
        uid = cred.uid;
    }
    sworn_pconn_accept(l, fd, uid);
}

static int listen_tcp(const struct sworn_pconf_listener *c, int *out, uint16_t *port)
{
    struct sockaddr_storage ss = {0};
    socklen_t len;
    int fd, one = 1;

    if (c->family == 6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(c->port);
        if (inet_pton(AF_INET6, c->address, &s6->sin6_addr) != 1)
            return sworn_err_set(SWORN_ERR_ARG, "tcp listener %s: not an address", c->address);
        len = sizeof(*s6);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

        s4->sin_family = AF_INET;
        s4->sin_port = htons(c->port);
        if (inet_pton(AF_INET, c->address, &s4->sin_addr) != 1)
            return sworn_err_set(SWORN_ERR_ARG, "tcp listener %s: not an address", c->address);
        len = sizeof(*s4);
    }
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "socket: %s", strerror(errno));
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, BACKLOG) != 0) {
        int e = errno;

        close(fd);
        return sworn_err_set(SWORN_ERR_IO, "tcp listener %s:%u: %s", c->address, (unsigned)c->port,
                             strerror(e));
    }
    len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        close(fd);
        return sworn_err_set(SWORN_ERR_IO, "getsockname: %s", strerror(errno));
    }
    *port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                           : ((struct sockaddr_in *)&ss)->sin_port);
    *out = fd;
    return 0;
}

/*
 * The port, decimal and a newline, written whole: a temporary file renamed over the name, both in
 * the port file's checked folder (root's or ours, writable by its owner only: p_config.h's
 * sworn_pconf_file_dir), so nobody else can have made the temporary file or swap either name.
 * The temporary name is created with O_EXCL; a stale one is removed first only when it is a
 * regular file of ours with one link (left by a proxy that was killed), anything else refuses.
 * The published file is 0644 and the effective uid's (who writes it).
 */
static int write_port_file(const char *path, uint16_t port)
{
    char base[NAME_MAX + 1], tmp[NAME_MAX + 8], text[16];
    struct stat st;
    int dfd = -1, fd = -1, n = snprintf(text, sizeof(text), "%u\n", (unsigned)port);

    if (sworn_pconf_file_dir(path, "port file folder", &dfd, base) != 0)
        return -1;
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", base) > NAME_MAX) {
        close(dfd);
        return sworn_err_set(SWORN_ERR_ARG, "port file %s: name too long", path);
    }
    if (fstatat(dfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
            close(dfd);
            return sworn_err_set(SWORN_ERR_IO,
                                 "port file %s.tmp is in the way (uid %lu, mode %04o, %lu links): "
                                 "not a stale file of this proxy; remove it",
                                 path, (unsigned long)st.st_uid, (unsigned)(st.st_mode & 07777),
                                 (unsigned long)st.st_nlink);
        }
        if (unlinkat(dfd, tmp, 0) != 0 && errno != ENOENT) {
            int e = errno;

            close(dfd);
            return sworn_err_set(SWORN_ERR_IO, "port file %s.tmp: %s", path, strerror(e));
        }
    }
    fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;

        close(dfd);
        return sworn_err_set(SWORN_ERR_IO, "port file %s.tmp: %s", path, strerror(e));
    }
    /* The umask may have taken bits away: the file is to be readable by every client. */
    if (fchmod(fd, 0644) != 0 || write(fd, text, (size_t)n) != n || fsync(fd) != 0) {
        int e = errno;

        close(fd);
        unlinkat(dfd, tmp, 0);
        close(dfd);
        return sworn_err_set(SWORN_ERR_IO, "port file %s.tmp: %s", path, strerror(e));
    }
    close(fd);
    if (renameat(dfd, tmp, dfd, base) != 0 || fsync(dfd) != 0) {
        int e = errno;

        unlinkat(dfd, tmp, 0);
        close(dfd);
        return sworn_err_set(SWORN_ERR_IO, "port file %s: %s", path, strerror(e));
    }
    close(dfd);
    return 0;
}

int sworn_plisten_open(struct sworn_proxy *px)
{
    const struct sworn_pconf *conf = px->conf;
    uid_t owner = conf->has_user ? conf->uid : geteuid();

    for (size_t i = 0; i < conf->nlisteners; i++) {
        const struct sworn_pconf_listener *c = &conf->listeners[i];
        struct sworn_plistener *l = &px->listeners[i];
        int fd = -1;

        l->px = px;
        l->conf = c;
        if (c->kind == SWORN_PCONF_TCP) {
            if (listen_tcp(c, &fd, &l->bound_port) != 0)
                goto fail;
        } else {
            gid_t group = c->has_group ? c->group : (conf->has_user ? conf->gid : getegid());

            if (sworn_unix_listen(c->path, owner, group, c->mode, BACKLOG, &fd) != 0)
                goto fail;
        }
        l->lev = evconnlistener_new(px->base, on_accept, l, LEV_OPT_CLOSE_ON_FREE, -1, fd);
        if (l->lev == NULL) {
            close(fd);
            sworn_err_set(SWORN_ERR_NOMEM, "evconnlistener_new failed");
            goto fail;
        }
        px->nlisteners = i + 1;
    }
    /* Every listener accepts now: only then do the port files say so. */
    for (size_t i = 0; i < px->nlisteners; i++) {
        const struct sworn_plistener *l = &px->listeners[i];
        json_object *o = json_object_new_object();

        if (l->conf->kind == SWORN_PCONF_TCP) {
            char addr[96];

            snprintf(addr, sizeof(addr), "%s:%u", l->conf->address, (unsigned)l->bound_port);
            json_object_object_add(o, "tcp", json_object_new_string(addr));
            if (l->conf->port_file[0] != '\0' &&
                write_port_file(l->conf->port_file, l->bound_port) != 0) {
                json_object_put(o);
                goto fail;
            }
        } else {
            json_object_object_add(o, l->conf->kind == SWORN_PCONF_HOSTLINK ? "hostlink" : "unix",
                                   json_object_new_string(l->conf->path));
        }
        json_object_object_add(o, "principal", json_object_new_string(l->conf->principal));
        sworn_plog(SWORN_PLOG_INFO, "listening", o);
    }
    return 0;
fail:
    sworn_plisten_close(px);
    return -1;
}

void sworn_plisten_close(struct sworn_proxy *px)
{
    for (size_t i = 0; i < px->nlisteners; i++) {
        if (px->listeners[i].lev != NULL)
            evconnlistener_free(px->listeners[i].lev);
        px->listeners[i].lev = NULL;
    }
    px->nlisteners = 0;
}
