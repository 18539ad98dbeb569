/*
 * w_witness.c -- the add-checkpoint decision (rules and order in w_witness.h).
 */
#include "w_witness.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "merkle.h"
#include "note.h"
#include "sigscheme.h"
#include "w_body.h"
#include "w_fault.h"

/* Set the status, outcome and reason of r; returns 0 (the value sworn_witness_add returns). */
__attribute__((format(printf, 4, 5))) static int decide(struct sworn_witness_result *r, int status,
                                                        const char *outcome, const char *fmt, ...)
{
    va_list ap;

    r->status = status;
    r->outcome = outcome;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
    va_end(ap);
    return 0;
}

/* Steps inside the transaction; returns with the transaction committed or rolled back. */
static int decide_stored(struct sworn_witness_state *st, struct sworn_witness_cosigner *cs,
                         const struct sworn_witness_body *b, const struct sworn_note *note,
                         const struct sworn_checkpoint *cp, uint64_t now,
                         struct sworn_witness_result *r)
{
    uint8_t root[SWORN_HASH_LEN];
    uint64_t latest = 0, last_time = 0;
    int found = 0;
    long n;

    if (sworn_witness_state_begin(st) < 0)
        return decide(r, 500, "state-error", "%s", sworn_err_msg());
    if (sworn_witness_state_get(st, cp->origin, &found, &latest, root, &last_time) < 0) {
        sworn_witness_state_rollback(st);
        return decide(r, 500, "state-error", "%s", sworn_err_msg());
    }
    r->latest_size = latest;
    if (b->old_size != latest) {
        sworn_witness_state_rollback(st);
        return decide(r, 409, "conflict", "old size %llu, but the latest cosigned size is %llu",
                      (unsigned long long)b->old_size, (unsigned long long)latest);
    }
    if (b->old_size == cp->size) {
        if (b->proof_count != 0) {
            sworn_witness_state_rollback(st);
            return decide(r, 422, "bad-proof", "a proof between equal sizes must be empty");
        }
        if (found && memcmp(root, cp->root, SWORN_HASH_LEN) != 0) {
            sworn_witness_state_rollback(st);
            /* Evidence of a split view: keep the signed note (best effort; the 409 stands). */
            (void)sworn_witness_state_record_fork(st, cp->origin, cp->size, b->note, b->note_len,
                                                  now);
            return decide(r, 409, "fork",
                          "a checkpoint of size %llu with another root than the one cosigned",
                          (unsigned long long)cp->size);
        }
    } else if (b->old_size > 0 &&
               sworn_merkle_verify_consistency(b->old_size, cp->size, root, cp->root, b->proof,
                                               b->proof_count) < 0) {
        sworn_witness_state_rollback(st);
        return decide(r, 422, "bad-proof", "consistency proof: %s", sworn_err_msg());
    }
    /* A cosignature says "as of t, the largest consistent tree I saw is this one" (C2SP
     * tlog-cosignature): t must never go back for an origin, or a clock set back (by NTP from
     * the network, or by hand) would make a cosignature of a larger tree older than one of a
     * smaller tree (red team 2026-12). So t is the later of the clock and the stored time. */
    if (last_time > now)
        now = last_time;
    n = sworn_witness_cosign(cs, note->text, note->text_len, now, r->line, sizeof(r->line));
    if (n < 0) {
        sworn_witness_state_rollback(st);
        return decide(r, 500, "sign-error", "%s", sworn_err_msg());
    }
    if (sworn_witness_state_put(st, cp->origin, cp->size, cp->root, note->text, note->text_len,
                                now) < 0 ||
        sworn_witness_state_commit(st) < 0) {
        sworn_witness_state_rollback(st);
        r->line[0] = '\0';
        return decide(r, 500, "state-error", "%s", sworn_err_msg());
    }
    sworn_witness_fault("after-commit");
    r->line_len = (size_t)n;
    return decide(r, 200, "cosigned", "cosigned");
}

int sworn_witness_add(const struct sworn_witness_config *c, struct sworn_witness_state *st,
                      struct sworn_witness_cosigner *cs, const char *body, size_t len, uint64_t now,
                      struct sworn_witness_result *r)
{
    /* Large: kept off the stack of the event loop's thread. One request at a time (header). */
    static struct sworn_witness_body b;
    static struct sworn_note note;
    struct sworn_checkpoint cp;
    const struct sworn_witness_log *log;

    memset(r, 0, sizeof(*r));
    if (sworn_witness_body_parse(body, len, &b) < 0)
        return decide(r, 400, "malformed", "%s", sworn_err_msg());
    r->old_size = b.old_size;
    if (b.note_len > SWORN_NOTE_MAX_LEN || sworn_note_parse(b.note, b.note_len, &note) < 0)
        return decide(r, 400, "malformed", "not a signed note: %s", sworn_err_msg());
    if (sworn_checkpoint_parse(note.text, note.text_len, &cp) < 0)
        return decide(r, 400, "malformed", "not a checkpoint: %s", sworn_err_msg());
    /* The signer cosigns a checkpoint of at most this many bytes (purpose 6): refuse a longer
     * one here, as the malformed request it is for this witness, rather than fail later as a
     * "sign-error" that points at the key (red team 2026-12). */
    if (note.text_len > SWORN_SIGNER_CHECKPOINT_MAX)
        return decide(r, 400, "malformed", "a checkpoint of %zu bytes, over the %d cosigned here",
                      note.text_len, SWORN_SIGNER_CHECKPOINT_MAX);
    memcpy(r->origin, cp.origin, sizeof(r->origin));
    r->size = cp.size;
    log = sworn_witness_config_log(c, cp.origin, strlen(cp.origin));
    if (log == NULL)
        return decide(r, 404, "unknown-origin", "origin %s is not witnessed here", cp.origin);
    if (sworn_note_verify(&note, log->keys, log->nkeys, NULL, NULL, NULL) < 0)
        return decide(r, 403, "bad-signature", "no trusted signature verifies: %s",
                      sworn_err_msg());
    if (cp.size > SWORN_WITNESS_SIZE_MAX)
        return decide(r, 400, "malformed", "a size over 2^63 - 1");
    if (cp.size == 0) {
        uint8_t empty[SWORN_HASH_LEN];

        /* No proof can speak for a tree of no entries: its root is fixed (merkle.h). */
        sworn_merkle_empty_root(empty);
        if (memcmp(empty, cp.root, SWORN_HASH_LEN) != 0)
            return decide(r, 400, "malformed",
                          "a checkpoint of size 0 with another root than "
                          "the empty tree's");
    }
    if (b.old_size > cp.size)
        return decide(r, 400, "malformed", "old size %llu is past the checkpoint's %llu",
                      (unsigned long long)b.old_size, (unsigned long long)cp.size);
    return decide_stored(st, cs, &b, &note, &cp, now, r);
}
