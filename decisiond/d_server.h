/*
 * d_server.h -- the two listening Unix sockets and their peers: accept, the SO_PEERCRED check,
 * and a connection (d_conn.h) with its channel's handler table (d_dispatch.h) for each peer
 * served. Loop thread.
 */
#ifndef SWORN_D_SERVER_H
#define SWORN_D_SERVER_H

struct d_daemon;

/* Start accepting on both sockets, which the monitor bound (d->listen_fds). 0 or -1. */
int d_server_listen(struct d_daemon *d);
/* Stop accepting and close the listening sockets (connections finish their current request). */
void d_server_close_listeners(struct d_daemon *d);
/* Close every connection (shutdown, after the workers have stopped). */
void d_server_drop_all(struct d_daemon *d);

#endif
