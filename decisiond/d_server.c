/*
 * d_server.c -- the two Unix sockets and their peers (d_server.h).
 *
 * Rules (docs/protocol.md section 1): a peer whose SO_PEERCRED uid is not configured for the
 * socket is recorded and closed before any byte is read; a peer that is served gets a connection
 * (d_conn.c) that hands its frames to the channel's handler table (d_dispatch.c).
 */
#define _GNU_SOURCE /* struct ucred, SO_PEERCRED */
#include "d_server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/listener.h>

#include "d_conn.h"
#include "d_daemon.h"
#include "d_record.h"
#include "d_dispatch.h"
#include "err.h"

#define D_MAX_CONNS 1024

static int uid_allowed(const uid_t *uids, size_t n, uid_t uid)
{
    for (size_t i = 0; i < n; i++)
        if (uids[i] == uid)
            return 1;
    return 0;
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg, enum d_channel ch)
{
    struct d_daemon *d = arg;
    struct ucred cred;
    socklen_t cl = sizeof(cred);
    int allowed;

    (void)l;
    (void)sa;
    (void)salen;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || cl != sizeof(cred)) {
        d_record_refused(d, ch, (uid_t)-1, 0, SWORN_ERR_IO, "SO_PEERCRED failed", NULL, NULL, 0);
        close(fd);
        return;
    }
    allowed = ch == D_CHANNEL_DECISION
                  ? uid_allowed(d->cfg->proxy_uids, d->cfg->n_proxy_uids, cred.uid)
                  : uid_allowed(d->cfg->operator_uids, d->cfg->n_operator_uids, cred.uid);
    if (!allowed) {
        char msg[96];

        snprintf(msg, sizeof(msg), "uid %u may not use the %s socket", (unsigned)cred.uid,
                 ch == D_CHANNEL_DECISION ? "decision" : "admin");
        d_record_refused(d, ch, cred.uid, cred.pid, SWORN_ERR_ARG, msg, NULL, NULL, 0);
        close(fd);
        return;
    }
    if (d->n_conns >= D_MAX_CONNS || d->stopping) {
        d_record_refused(d, ch, cred.uid, cred.pid, SWORN_ERR_RANGE,
                         d->stopping ? "shutting down" : "too many connections", NULL, NULL, 0);
        close(fd);
        return;
    }
    (void)d_conn_new_socket(d, ch == D_CHANNEL_DECISION ? &d_decision_channel : &d_admin_channel,
                            fd, cred.uid, cred.pid);
}

static void on_accept_decision(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                               int salen, void *arg)
{
    on_accept(l, fd, sa, salen, arg, D_CHANNEL_DECISION);
}

static void on_accept_admin(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                            int salen, void *arg)
{
    on_accept(l, fd, sa, salen, arg, D_CHANNEL_ADMIN);
}

/*
 * Accept on a socket the monitor bound and listens on (monitor.h): the engine binds nothing, and
 * never touches a socket's path with its own rights. Backlog -1 leaves the monitor's as it is.
 */
static int accept_on(struct d_daemon *d, const char *path, evconnlistener_cb cb, int fd,
                     struct evconnlistener **out)
{
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_ARG, "%s: no socket from the monitor", path);
    *out =
        evconnlistener_new(d->base, cb, d, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_IO, "accept on %s: %s", path, strerror(errno));
    return 0;
}

int d_server_listen(struct d_daemon *d)
{
    if (accept_on(d, d->cfg->decision_socket, on_accept_decision, d->listen_fds[D_CHANNEL_DECISION],
                  &d->decision_listener) < 0)
        return -1;
    return accept_on(d, d->cfg->admin_socket, on_accept_admin, d->listen_fds[D_CHANNEL_ADMIN],
                     &d->admin_listener);
}

/* The socket files are the monitor's: it removes them when the engine has ended. */
void d_server_close_listeners(struct d_daemon *d)
{
    if (d->decision_listener != NULL) {
        evconnlistener_free(d->decision_listener);
        d->decision_listener = NULL;
    }
    if (d->admin_listener != NULL) {
        evconnlistener_free(d->admin_listener);
        d->admin_listener = NULL;
    }
}

void d_server_drop_all(struct d_daemon *d)
{
    d_conn_close_all(d);
}
