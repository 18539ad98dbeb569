/*
 * w_conns.h -- a deadline on every HTTP connection of the witness.
 *
 * evhttp's timeout (limits.timeout) is an idle timeout: it restarts at every byte, so a client
 * that sends one byte of its headers every few seconds keeps its connection, and its
 * descriptor, forever (a slow-loris attack: red team 2026-12, 42 s and counting with a 1 s
 * timeout). This module gives each connection a deadline: its next request must have arrived
 * whole, and the answer to its previous one must have been taken, within `deadline_ms` of the
 * connection's opening or of its latest request; past it, the socket is shut down and evhttp
 * closes the connection as one whose peer went away.
 *
 * How: evhttp builds each connection's bufferevent through our callback (evhttp_set_bevcb),
 * which keeps a reference to it; a sweep every SWEEP_MS shuts down the sockets past their
 * deadline and drops the references of the connections evhttp has freed (those whose event
 * callback it cleared). One thread: all calls from the event loop's thread.
 */
#ifndef SWORN_W_CONNS_H
#define SWORN_W_CONNS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/http.h>

struct sworn_witness_conns;

/* Track every connection of http (on base) with a deadline of deadline_ms; on_cut(count, arg)
 * after a sweep that shut down count > 0 of them (the caller logs it). Returns NULL on
 * allocation failure (sworn_err set). */
struct sworn_witness_conns *sworn_witness_conns_new(struct event_base *base, struct evhttp *http,
                                                    uint64_t deadline_ms,
                                                    void (*on_cut)(size_t count, void *arg),
                                                    void *arg);

/* A whole request arrived on conn: its deadline restarts now. */
void sworn_witness_conns_request(struct sworn_witness_conns *t, struct evhttp_connection *conn);

/* Drop every reference; after evhttp_free, before event_base_free. NULL: nothing. */
void sworn_witness_conns_free(struct sworn_witness_conns *t);

#endif
