/*
 * d_witness.h -- decisiond submits its checkpoints to witnesses (issue 18; docs/witness.md,
 * "decisiond's submissions"; C2SP tlog-witness).
 *
 * After the checkpoint thread signs (and quotes) a checkpoint, and before it exports it, each
 * configured witness gets it with `POST <prefix>/add-checkpoint`: "old <m>\n", the consistency
 * proof from m (the size the witness holds as far as this run knows; 0 at first), a blank line,
 * the note as the log signed it. What happens with the answer:
 *   200  each line whose key name and ID are the witness's and that verifies as its
 *        cosignature/v1 over this checkpoint is appended to the stored note (sworn_log
 *        put_checkpoint replaces it, after checking origin and root again), so the export and
 *        every later reader get the cosigned note; the witness now holds this size.
 *   409  the witness holds another size, given in the body (text/x.tlog.size). At most our size:
 *        sent again, once, with the proof from that size. Larger than our tree: the alarm (it
 *        cosigned a larger tree of our origin and key: a second log, or ours rolled back).
 *   422  the alarm: our proof from the size it holds does not join its stored tree (a fork).
 *   else, or no answer within the witness's timeout (a refusal, unreachable): no cosignature
 *        this round; the next checkpoint tries again.
 * Nothing here stops decisions: the thread that waits is the checkpoint thread, and a witness
 * costs at most twice its timeout a round (two exchanges after a 409).
 *
 * Recorded (WitnessEvent entries, wire/sworn.proto): a witness's change of state only (to
 * FAILING, to CONSISTENCY, back to cosigning: RECOVERED), so a witness that stays down adds one
 * entry, not one a checkpoint. Every round's outcome is counted in the metrics
 * (sworn_witness_cosignatures_total, _failures_total, _alarms_total, sworn_witness_up, by
 * witness) and logged: a failure at warn level when the state changes, the alarm at error level
 * every time.
 *
 * Thread safety: the checkpoint thread only (d_checkpoint.c), between its start and its stop.
 */
#ifndef SWORN_D_WITNESS_H
#define SWORN_D_WITNESS_H

#include <stddef.h>
#include <stdint.h>

struct d_daemon;
struct d_witnesses;

/* The witnesses of d->cfg (none: *out NULL and 0). Names their metrics. 0, or -1 (sworn_err). */
int d_witnesses_new(struct d_daemon *d, struct d_witnesses **out);

void d_witnesses_free(struct d_witnesses *w);

/*
 * Submit the stored checkpoint note (len bytes) of tree size `size` to every witness whose
 * cosignature it does not carry yet, and store the note with the cosignatures that verified. record
 * 0: a change of state is logged and counted but not recorded (the final round at stop, whose
 * checkpoint is the log's last word: an entry after it would be outside every checkpoint until the
 * next start, whose first rounds find the same state again). OUT: *cosigned, how many witnesses
 * cosigned (may be NULL). Returns 0, or -1 when the cosigned note could not be stored (sworn_err
 * says why; the note as signed stays stored). A witness's failure is not an error of this call.
 */
int d_witnesses_submit(struct d_witnesses *w, const char *note, size_t len, uint64_t size,
                       int record, size_t *cosigned, size_t *added);

/*
 * Whether a witness lacks a cosignature of the checkpoint of tree size `size` as far as this run
 * knows (it failed, raised the alarm, or has not been asked): the checkpoint thread then submits
 * the stored note again in a round where the log did not grow, so a quiet log still gets its
 * newest checkpoint cosigned, and a witness that was down is retried every round.
 */
int d_witnesses_pending(const struct d_witnesses *w, uint64_t size);

#endif
