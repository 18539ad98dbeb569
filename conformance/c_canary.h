/*
 * c_canary.h -- the runner's own canaries: listeners an agent that got out of its sandbox could
 * reach, each of which logs every connection or datagram it receives. The T2 probes count what
 * each heard while their attempt ran; a conforming deployment leaves every count at 0.
 *
 * Where they listen (ports picked free by the kernel):
 *   one process on the host:  TCP and UDP on 127.0.0.1 and, when ::1 binds, on ::1; an abstract
 *                             Unix socket "sworn-conformance-<pid>-<random>";
 *   one process in a network namespace of its own, joined to the host by a veth pair
 *   swcf<pid>h / swcf<pid>n with 198.19.<a>.<b>/30 (RFC 2544, never routed): TCP on its end,
 *   and a raw ICMP socket there that logs every echo request reaching the namespace (its kernel
 *   still answers them: the canary only counts).
 *   The namespace needs root and iproute2's `ip` and util-linux's `nsenter`; without them it is
 *   left out and the probe that needs it is skipped, saying why.
 *
 * The log: one line per event, "<label> <id>\n", written in one append each; id is the peer's
 * port (TCP, UDP), "pid<N>" (the Unix socket's peer) or "<identifier>-<sequence>" (an ICMP
 * echo request's, in decimal). A sync (c_canary_sync) sends a marker
 * from the runner to one listener and waits until that listener logged it: it proves the
 * listener hears what reaches its address (the positive control, each time), and since each
 * listener's queue is served in order, the events logged for it before the marker are all that
 * arrived before it. A listener that never logs the marker ends the probe in an error, never a
 * pass.
 *
 * Errors: -1 with sworn_err set. Memory: the struct is the caller's; c_canary_stop ends the
 * processes (by their pids), deletes the pair and is safe to call on a zeroed struct. The
 * children die with the runner (PR_SET_PDEATHSIG). Not thread-safe.
 */
#ifndef SWORN_C_CANARY_H
#define SWORN_C_CANARY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define C_CANARY_MAX 8u

enum c_canary_kind { C_CANARY_TCP, C_CANARY_UDP, C_CANARY_UNIX, C_CANARY_ICMP };

struct c_canary_listener {
    char label[24]; /* tcp4-loopback, udp6-loopback, tcp4-netns, icmp4-netns, unix-abstract */
    enum c_canary_kind kind;
    int family;    /* AF_INET, AF_INET6, AF_UNIX */
    char addr[64]; /* numeric address, or the abstract name (no leading NUL) */
    uint16_t port;
    long offset; /* where in the log the last sync of this listener ended */
};

struct c_canary {
    char log[1100];
    struct c_canary_listener l[C_CANARY_MAX];
    size_t n;
    pid_t host_pid, ns_pid; /* 0 when not running */
    char veth[16];          /* the host's end, "" when no pair was made */
    char netns_why[160];    /* why there is no namespace canary, "" when there is */
};

/* Start both processes in folder dir (the log goes there) and wait until every listener is
 * bound. Returns 0 (the namespace canary may be missing: netns_why), or -1. */
int c_canary_start(struct c_canary *c, const char *dir);

/* The listener labelled label, or NULL. */
const struct c_canary_listener *c_canary_find(const struct c_canary *c, const char *label);

/* Sync listener label (above): OUT *heard = the events it logged since its previous sync, not
 * counting markers. Returns 0, or -1 when the marker could not be sent or was not logged within
 * 10 s. */
int c_canary_sync(struct c_canary *c, const char *label, unsigned *heard);

void c_canary_stop(struct c_canary *c);

#endif
