/*
 * p_hostlink.h -- the hostlink hello reader (docs/proxy.md, "The hostlink"; wire/sworn.proto,
 * HostlinkHello; docs/protocol.md section 4.1).
 *
 * Every connection on a hostlink listener starts with one frame from sworn-run's relay, before
 * the agent's first byte:
 *
 *     offset 0   u32, big-endian: the body's length L, 1..SWORN_HOSTLINK_HELLO_MAX (1024)
 *     offset 4   L bytes: a HostlinkHello, as wire/frame.h's sworn_frame_unpack_hostlink_hello
 *                accepts it (canonical protobuf, no unknown field, version 1, principal and
 *                sandbox names of 1..128 bytes 0x21..0x7e, sandbox_start_index not 0)
 *     offset 4+L the agent's bytes (HTTP), which may come in the same read
 *
 * and its principal must be the listener's. sworn_phostlink_read looks at the connection's first
 * bytes, as many as have come (the caller keeps them: at most SWORN_PHOSTLINK_FRAME_MAX are ever
 * looked at), and says whether they are a whole good hello, the start of one, or not one. The
 * length is judged as soon as its 4 bytes are there, before any byte of the body is waited for,
 * so a length out of range (an HTTP request line where the hello should be reads as one) is
 * refused at once.
 *
 * The result depends only on the bytes, never on how they were split into reads: for a prefix
 * of bytes that are refused the answer is "more" or the same refusal, and for a prefix of an
 * accepted frame it is "more".
 *
 * Memory: nothing is kept (the decoded message is freed before the call returns). Thread safety:
 * none needed (no state).
 */
#ifndef SWORN_P_HOSTLINK_H
#define SWORN_P_HOSTLINK_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

/* The most bytes of a connection the reader ever looks at: the length and the largest body. */
#define SWORN_PHOSTLINK_FRAME_MAX (4u + SWORN_HOSTLINK_HELLO_MAX)

/* An accepted hello: what the connection's Principal gets (its id stays the listener's). */
struct sworn_phostlink {
    char sandbox[SWORN_FRAME_NAME_MAX + 1]; /* Principal.sandbox */
    uint64_t sandbox_start_index;           /* Principal.sandbox_start_index, not 0 */
    uint32_t agent_uid;                     /* Principal.uid */
};

enum sworn_phostlink_status {
    SWORN_PHOSTLINK_REFUSED = -1, /* not a good hello: *why; refuse the connection */
    SWORN_PHOSTLINK_MORE = 0,     /* a prefix of a frame that may still be good: read on */
    SWORN_PHOSTLINK_DONE = 1,     /* a good hello: *out; the agent's bytes start at *used */
};

/*
 * Read the hello at the start of p[0..n) (p may be NULL when n is 0) for a listener whose
 * principal is `principal`.
 * OUT: *out (DONE only; untouched otherwise); *used: DONE: the frame's size (4 + L); REFUSED:
 * how many bytes the refusal was judged on (4 for a bad length, 4 + L for a bad body: what the
 * refusal's digest covers); MORE: 0. *why (REFUSED only): a static sentence, one of
 *   "the hostlink hello's length is 0"
 *   "the hostlink hello's length is above 1024 bytes (not a hello)"
 *   "the hostlink hello does not decode as a HostlinkHello"
 *   "the hostlink hello is not of wire version 1"
 *   "the hostlink hello's principal is not a name of 1..128 bytes 0x21..0x7e"
 *   "the hostlink hello's sandbox is not a name of 1..128 bytes 0x21..0x7e"
 *   "the hostlink hello has no sandbox_start_index (0)"
 *   "the hostlink hello is not canonically encoded or holds unknown fields"
 *   "the hostlink hello names another principal than the listener's"
 *   "the hostlink hello could not be checked (out of memory)"
 * Returns one of enum sworn_phostlink_status.
 */
int sworn_phostlink_read(const uint8_t *p, size_t n, const char *principal,
                         struct sworn_phostlink *out, size_t *used, const char **why);

#endif
