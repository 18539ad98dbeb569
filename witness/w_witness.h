/*
 * w_witness.h -- one add-checkpoint request, decided: the C2SP tlog-witness rules
 * (https://c2sp.org/tlog-witness) over the parsed body (w_body.h), the configuration's logs
 * (w_config.h), the durable state (w_state.h) and the cosigner (w_cosign.h). No HTTP here
 * (w_server.h carries the answer).
 *
 * The checks, in this order, and the status of the first that fails:
 *   400 the body is malformed (w_body.h), the note is not a signed note, its text is not a
 *       checkpoint (checked before the origin and the signatures); after them: its size is over
 *       2^63 - 1, a size of 0 comes with a root other than the empty tree's, or old > size
 *   404 the origin is not a log of the configuration
 *   403 no signature of the log's keys verifies (or one of them fails)
 *   then, inside one BEGIN IMMEDIATE transaction:
 *   409 old differs from the size of the latest checkpoint cosigned for the origin (0 when
 *       none): the answer carries that size
 *   422 old == size with proof lines, or the consistency proof from (old, stored root) to the
 *       checkpoint does not verify
 *   409 old == size but the root differs from the stored one: a fork; its note is kept
 *       (w_state.h forks) and the answer carries the stored size
 *   500 signing or writing the state failed: nothing was stored
 *   200 the state now holds the checkpoint (durably) and the answer is its cosignature line.
 * The cosignature is made before the commit, so a failed signature leaves the state as it was;
 * the answer is sent only after the commit, so a cosignature is never seen for a checkpoint
 * the state does not hold. A checkpoint equal to the stored one (old == size, same root) is
 * cosigned again: a log that lost an answer asks again.
 *
 * No allocation. Thread safety: as the state and the cosigner (one thread at a time).
 */
#ifndef SWORN_W_WITNESS_H
#define SWORN_W_WITNESS_H

#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"
#include "err.h"
#include "w_config.h"
#include "w_cosign.h"
#include "w_state.h"

struct sworn_witness_result {
    int status;          /* 200, 400, 403, 404, 409, 422 or 500 */
    const char *outcome; /* a word for the log line: "cosigned", "conflict", "fork", ... */
    char reason[SWORN_ERR_MSG_MAX];               /* why, for the log line and the error body */
    char origin[SWORN_CHECKPOINT_ORIGIN_MAX + 1]; /* empty until known */
    uint64_t old_size, size;                      /* as asked (0 until parsed) */
    uint64_t latest_size;                         /* 409: the stored size */
    char line[SWORN_WITNESS_COSIG_LINE_MAX + 1];  /* 200: the cosignature line */
    size_t line_len;
};

/*
 * Decide one request: body[0..len), at time now (seconds since the epoch). The cosignature's
 * time is the later of now and the time stored with the origin's latest cosignature, so it
 * never goes back for an origin whatever the clock does. OUT: *r (always filled). Returns 0
 * (whatever the status: the decision is in *r).
 */
int sworn_witness_add(const struct sworn_witness_config *c, struct sworn_witness_state *st,
                      struct sworn_witness_cosigner *cs, const char *body, size_t len, uint64_t now,
                      struct sworn_witness_result *r);

#endif
