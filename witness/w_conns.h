/*
 * w_conns.h -- the witness's HTTP connections: a deadline on each, a cap on how many are open,
 * in all and from one client address.
 *
 * evhttp's timeout (limits.timeout) is an idle timeout: it restarts at every byte, so a client
 * that sends one byte of its headers every few seconds keeps its connection, and its
 * descriptor, forever (a slow-loris attack: red team 2026-12, 42 s and counting with a 1 s
 * timeout); and libevent 2.1's evhttp has no cap on connections, so one client could hold every
 * descriptor (and connections x limits.body_bytes of memory). This module:
 *   - gives each connection a deadline: its next request must have arrived whole, and the
 *     answer to its previous one must have been taken, within `deadline_ms` of the connection's
 *     opening or of its latest request; past it, the socket is shut down and evhttp closes the
 *     connection as one whose peer went away;
 *   - stops accepting while `max_total` connections are open (the kernel's backlog holds the
 *     next ones) and accepts again when one closes;
 *   - shuts down, at each sweep, the newest connections of any client address that has more
 *     than `max_per_addr` open.
 *
 * How: evhttp builds each connection's bufferevent through our callback (evhttp_set_bevcb),
 * which keeps a reference to it; a sweep every 250 ms learns the peer address of new ones,
 * shuts down the sockets past their deadline or over their address's share, and drops the
 * references of the connections evhttp has freed (those whose event callback it cleared). One
 * thread: every call from the event loop's thread.
 */
#ifndef SWORN_W_CONNS_H
#define SWORN_W_CONNS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

struct sworn_witness_conns;

struct sworn_witness_conns_limits {
    uint64_t deadline_ms;
    size_t max_total, max_per_addr;
};

/* Track every connection of http (on base) under lim; on_cut(count, arg) after a sweep that
 * shut down count > 0 of them (the caller logs it). Returns NULL on allocation failure
 * (sworn_err set). */
struct sworn_witness_conns *sworn_witness_conns_new(struct event_base *base, struct evhttp *http,
                                                    const struct sworn_witness_conns_limits *lim,
                                                    void (*on_cut)(size_t count, void *arg),
                                                    void *arg);

/* The listener to pause while max_total connections are open. */
void sworn_witness_conns_set_listener(struct sworn_witness_conns *t, struct evconnlistener *lev);

/* 1 while max_total connections are open (the listener must stay paused). */
int sworn_witness_conns_full(const struct sworn_witness_conns *t);

/* A whole request arrived on conn: its deadline restarts now. */
void sworn_witness_conns_request(struct sworn_witness_conns *t, struct evhttp_connection *conn);

/* Drop every reference; after evhttp_free, before event_base_free. NULL: nothing. */
void sworn_witness_conns_free(struct sworn_witness_conns *t);

#endif
