/*
 * r_relay.h -- the hostlink relay (docs/sandbox.md, "The hostlink"). In sworn-run's own process,
 * in the host's pid namespace, out of the agent's sight and reach: it accepts each connection the
 * agent makes to 127.0.0.1:3128 (or [::1]:3128) on the listeners the sandbox handed out, connects
 * to the proxy's hostlink socket, writes the HostlinkHello frame first (the sandbox's identity,
 * chosen by sworn-run, never by the agent), then copies bytes both ways unchanged. A side that
 * ends its sending ends the other side's sending once what was read has been written; the
 * connection is freed when both have ended or either fails. At most max_conns (limits.connections)
 * connections at once (a further one is closed at once); each direction holds at most
 * SWORN_RUN_RELAY_BUF bytes not yet written (reading pauses until they are).
 *
 * Memory: the relay owns its listeners (closed by sworn_run_relay_free) and every connection.
 * Thread safety: one thread, the event base's.
 */
#ifndef SWORN_R_RELAY_H
#define SWORN_R_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#define SWORN_RUN_RELAY_BUF (256u * 1024u)

struct sworn_run_relay;

/* Take the listeners fds[0..n) and start accepting, at most max_conns connections at once.
 * hello[0..hello_len) is the packed frame. */
int sworn_run_relay_start(struct event_base *base, const int *fds, size_t n, const char *hostlink,
                          const uint8_t *hello, size_t hello_len, size_t max_conns,
                          struct sworn_run_relay **out);

/* How many connections are open now (for the log line at the end). */
size_t sworn_run_relay_served(const struct sworn_run_relay *r);

void sworn_run_relay_free(struct sworn_run_relay *r);

#endif
