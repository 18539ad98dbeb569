/*
 * canary_fixture.h -- canary servers for the sandbox tests (docs/sandbox.md, "Probes"): listeners
 * an agent that got out of its sandbox could reach, each of which writes one line to a log for
 * every connection, datagram or echo request it receives. A test runs its probes inside the
 * sandbox and then checks that the log is still empty; the same probes run from the host reach
 * every canary first (sworn_canary_* positive controls in the test), so an empty log means
 * nothing arrived, not that nothing could have been seen.
 *
 * Where they listen (every port picked free by the kernel, port 0):
 *   on the host (one process):        TCP and UDP on 127.0.0.1 and ::1; on the machine's own
 *                                     first non-loopback IPv4 and global IPv6 address (when it
 *                                     has them); on the host's end of the veth pair; a Unix
 *                                     socket DIR/canary.sock and an abstract Unix socket
 *   in a network namespace of its own TCP and UDP on its end of the veth pair (IPv4 and IPv6),
 *   (a second process, joined to it): and ICMP and ICMPv6 echo requests (a raw socket each:
 *                                     the kernel still answers them)
 * The namespace is named sworn-canary-PID (`ip netns add`), the pair swcPIDh (host) and swcPIDn
 * (namespace), with addresses from 198.18.0.0/15 (RFC 2544, for test networks: never routed)
 * and fd5e:57::/32 (a unique local prefix), a /30 and a /64 per PID. sworn_canary_stop deletes
 * them (deleting the namespace deletes its end of the pair, and the pair with it). On a machine
 * without IPv6 (::1 cannot be bound) every IPv6 canary and address is left out. Needs root.
 *
 * The log, DIR/hits.log, one line per event, written in one append each:
 *   "<kind> <label> from <address>\n"   kind: tcp, udp, unix, icmp
 * A UDP canary answers each datagram with its own bytes, so the probe's wait for an answer ends.
 *
 * Test code only: failures print why and return -1. The servers are children of the thread that
 * called sworn_canary_start and die with it (PR_SET_PDEATHSIG).
 */
#ifndef SWORN_CANARY_FIXTURE_H
#define SWORN_CANARY_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "testutil.h"

#define SWORN_CANARY_MAX 24       /* listeners of both processes */
#define SWORN_CANARY_ADDR_MAX 64  /* a numeric address, NUL included */
#define SWORN_CANARY_LABEL_MAX 40 /* "udp6-machine" */

/* One listener: how a probe names it (sworn-probe ATTEMPT ADDR PORT) and how the log names it. */
struct sworn_canary_listener {
    char label[SWORN_CANARY_LABEL_MAX]; /* "<attempt>-<where>": tcp4-loopback, udp6-netns, ... */
    char attempt[8];                    /* sworn-probe's attempt: tcp4, tcp6, udp4, udp6 */
    char addr[SWORN_CANARY_ADDR_MAX];   /* numeric */
    uint16_t port;
    int in_netns; /* 1: the namespace's process serves it */
};

struct sworn_canary {
    char *dir;                            /* the temporary folder (hits.log, canary.sock) */
    char hits[512];                       /* DIR/hits.log */
    char netns[32];                       /* sworn-canary-PID */
    char veth_host[16], veth_ns[16];      /* swcPIDh, swcPIDn */
    char host4[SWORN_CANARY_ADDR_MAX];    /* the host's end of the pair (198.18.x.1) */
    char ns4[SWORN_CANARY_ADDR_MAX];      /* the namespace's end (198.18.x.2) */
    char host6[SWORN_CANARY_ADDR_MAX];    /* fd5e:57:0:x::1 ("" without IPv6) */
    char ns6[SWORN_CANARY_ADDR_MAX];      /* fd5e:57:0:x::2 ("" without IPv6) */
    char machine4[SWORN_CANARY_ADDR_MAX]; /* the machine's own address, "" when it has none */
    char machine6[SWORN_CANARY_ADDR_MAX]; /* its global IPv6 address, "" when it has none */
    char unix_path[108];                  /* DIR/canary.sock */
    char abstract[64];                    /* the abstract socket's name (no leading NUL) */
    struct sworn_canary_listener l[SWORN_CANARY_MAX];
    size_t n;
    pid_t host_pid, ns_pid; /* the two servers; 0 when not running */
    int netns_made;         /* the namespace and pair exist (sworn_canary_stop removes them) */
    int ipv6;               /* the machine has IPv6 (::1 binds); else no IPv6 canary at all */
};

/*
 * Find the machine's addresses, make the namespace and the pair, start both servers and wait (up
 * to 20 s) until every listener is bound (the servers report their ports on a pipe). Returns 0,
 * or -1 after printing why (what was made is removed again: c is as sworn_canary_stop leaves it).
 */
SWORN_TEST_MUST_CHECK
int sworn_canary_start(struct sworn_canary *c);

/* Stop both servers, delete the namespace and the pair, remove the folder. Safe on a zeroed,
 * failed or stopped fixture. */
void sworn_canary_stop(struct sworn_canary *c);

/* The lines of the log now (0 when it does not exist). */
size_t sworn_canary_hits(struct sworn_canary *c);

/* The log's text (free it), "" when it does not exist: for a failure's message. */
char *sworn_canary_log(struct sworn_canary *c);

/* Wait until a line of the log contains needle (a label, "icmp ..."); 0, or -1 after timeout_ms. */
SWORN_TEST_MUST_CHECK
int sworn_canary_wait_hit(struct sworn_canary *c, const char *needle, int timeout_ms);

/*
 * Move the log aside (renamed to DIR/controls.log) so that hits.log starts empty: after the
 * positive controls, each of which was waited for, so no event of theirs is still on its way.
 * Returns 0, or -1 (printed).
 */
SWORN_TEST_MUST_CHECK
int sworn_canary_rotate(struct sworn_canary *c);

#endif
