/*
 * w_server.h -- sworn-witness's HTTP/1.1 server (libevent's evhttp, one thread): the C2SP
 * tlog-witness endpoint and nothing else.
 *
 *   POST /add-checkpoint   decided by w_witness.h; the answer:
 *       200  Content-Type text/plain; charset=utf-8, body the cosignature line (w_cosign.h)
 *       409  Content-Type text/x.tlog.size, body "<latest size>\n"
 *       4xx/500 Content-Type text/plain; charset=utf-8, body one line saying why
 *   any other method on /add-checkpoint: 405 with "Allow: POST"; any other path: 404.
 *   Limits: a body over limits.body_bytes is refused by evhttp with 413 before it is read
 *   whole; headers over 8 KiB are refused by evhttp too; a client address over its token bucket
 *   (limits.requests_per_second, limits.burst) gets 429 with "Retry-After: 1", whatever the
 *   path or method; a connection idle past limits.timeout, or whose next request has not
 *   arrived whole within limits.timeout of its opening or of its latest request, is closed;
 *   at most limits.connections are open (accepting pauses) and limits.connections_per_address
 *   from one address (the newest over it are closed) (w_conns.h). accept() failing for want of
 *   descriptors pauses accepting for 250 ms (one "accept-paused" line) instead of a busy loop.
 *
 * Every request that evhttp hands over gets one JSON log line on stderr (docs/witness.md "Log
 * lines"; what evhttp refuses itself, a 413 or broken HTTP, gets none; of a run of 429s to one
 * client only the first, the next line of that client counting the others), and the start one
 * {"event":"listening",...} line with the bound port (tests bind port 0 and read it).
 *
 * Runs until SIGTERM or SIGINT. Errors: -1 with sworn_err set, at start only.
 */
#ifndef SWORN_W_SERVER_H
#define SWORN_W_SERVER_H

#include "w_config.h"
#include "w_cosign.h"
#include "w_state.h"

/* Serve until a stop signal. Returns 0 after a clean stop, -1 when it cannot start. */
int sworn_witness_serve(const struct sworn_witness_config *c, struct sworn_witness_state *st,
                        struct sworn_witness_cosigner *cs);

#endif
