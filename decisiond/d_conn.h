/*
 * d_conn.h -- one connection of the decision or admin socket: framing, one request in flight at
 * a time, the answer, and the holds that keep it alive while a job works on its request.
 *
 * A connection knows nothing of what its frames mean: each complete frame body goes to its
 * channel's handler (struct d_channel_ops, d_dispatch.h), which must answer it exactly once with
 * d_conn_reply or d_conn_reply_error, at once or later from a job. Until then reading is paused,
 * so answers are in request order (docs/protocol.md section 1).
 *
 * Two kinds: a socket connection (a bufferevent on an accepted fd, d_server.c) and a local one
 * (d_conn_new_local) whose answers go to a function instead of a socket: the in-process entry
 * point (d_local.h) drives the same handlers through it.
 *
 * Lifetime: a connection holds one reference for itself and one per job (d_conn_hold); its
 * memory goes with the last d_conn_release. When the peer hangs up, I/O stops at once and answers
 * given later are dropped. Loop thread only.
 */
#ifndef SWORN_D_CONN_H
#define SWORN_D_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/util.h>

#include "d_record.h"
#include "frame.h"

struct d_daemon;
struct d_conn;

/* What a channel does with its frames. A const table per channel (d_dispatch.c). */
struct d_channel_ops {
    enum d_channel ch;
    /* Handle one complete frame body of connection c; the body is valid during the call only. */
    void (*on_frame)(struct d_daemon *d, struct d_conn *c, const uint8_t *body, size_t len);
    /* Pack e as this channel's answer type (DecisionReply, AdminResponse), framed. 0 or -1. */
    int (*pack_error)(const Sworn__V1__ErrorFrame *e, uint8_t **frame, size_t *len);
};

/*
 * A connection on accepted socket fd of peer uid/pid, reading at once. Returns it, or NULL (fd
 * closed) when out of memory.
 */
struct d_conn *d_conn_new_socket(struct d_daemon *d, const struct d_channel_ops *ops,
                                 evutil_socket_t fd, uid_t uid, pid_t pid);

/*
 * A local connection: each answer's frame body is handed to sink(arg, body, len) (valid during
 * the call). uid and pid are what the handlers see as the peer. Returns it, or NULL.
 */
struct d_conn *d_conn_new_local(struct d_daemon *d, const struct d_channel_ops *ops, uid_t uid,
                                pid_t pid, void (*sink)(void *arg, const uint8_t *body, size_t len),
                                void *arg);

/*
 * Hand body (a frame body, copied by nobody: used during the call) to a local connection's
 * handler as if it had been read. Returns 0, or -1 (SWORN_ERR_ARG) when a request is in flight.
 */
int d_conn_local_submit(struct d_conn *c, const uint8_t *body, size_t len);

/* Close c as if its peer had hung up (the memory goes with the last hold). */
void d_conn_close(struct d_conn *c);

/* Close every connection (shutdown, after the workers have stopped). */
void d_conn_close_all(struct d_daemon *d);

/* The peer of a connection, as SO_PEERCRED gave it at accept. */
uid_t d_conn_uid(const struct d_conn *c);
pid_t d_conn_pid(const struct d_conn *c);
/* The monotonic time (us) the connection's current request frame was complete. */
uint64_t d_conn_request_start_us(const struct d_conn *c);

/*
 * Send one framed answer (frame holds header + body; copied) and let the connection read its next
 * request. When the peer is gone, the answer is dropped.
 */
void d_conn_reply(struct d_conn *c, const uint8_t *frame, size_t len);
/* As d_conn_reply with an ErrorFrame, in the channel's reply type; then close when close_after. */
void d_conn_reply_error(struct d_conn *c, int code, const char *message, const char *request_id,
                        int close_after);

/*
 * Has the peer hung up? While a request is in flight the connection does not read (one request at
 * a time), so a hang-up is seen only by asking the socket: 1 when it is gone or its peer closed
 * it (a Unix socket polls POLLHUP then), else 0 (a local connection: 0).
 */
int d_conn_peer_gone(struct d_conn *c);

/* A connection is kept alive while a job holds it (its peer may hang up meanwhile). */
void d_conn_hold(struct d_conn *c);
void d_conn_release(struct d_conn *c);

#endif
