/*
 * w_state.h -- the witness's durable state: per origin, the latest checkpoint it cosigned (size,
 * root and the checkpoint text), in an SQLite database. docs/witness.md "State" has the schema.
 *
 * Durability: WAL journal with synchronous=FULL, so a committed transaction is on disk (fsynced)
 * before sworn_witness_state_commit returns; the witness answers only after that.
 * Atomicity of the compare-and-set: the caller reads and writes an origin inside one
 * BEGIN IMMEDIATE transaction (sworn_witness_state_begin), which takes SQLite's write lock at
 * once, so no other connection (another request, or another process on the same file) can
 * change the state between the check of the old size and the write. A trigger in the schema
 * refuses any update that lowers an origin's size, as a last guard against a bug.
 *
 * Sizes are stored as SQLite integers: at most 2^63 - 1 (the witness refuses larger ones).
 *
 * Thread safety: one state is used by one thread at a time. Errors: -1 with sworn_err set
 * (SWORN_ERR_IO for SQLite failures, SWORN_ERR_CORRUPT for a stored row of the wrong shape,
 * SWORN_ERR_ARG for a size that does not fit).
 */
#ifndef SWORN_W_STATE_H
#define SWORN_W_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "merkle.h"

#define SWORN_WITNESS_SIZE_MAX ((uint64_t)INT64_MAX)
/* Fork notes kept per origin; later ones are not stored (their log line still says "fork"). */
#define SWORN_WITNESS_FORKS_MAX 16

struct sworn_witness_state;

/* Open (creating when absent) the database at path. Waits up to busy_ms for another
 * connection's lock. OUT: *out. Returns 0 or -1. */
int sworn_witness_state_open(const char *path, unsigned busy_ms, struct sworn_witness_state **out);

void sworn_witness_state_close(struct sworn_witness_state *st);

/* BEGIN IMMEDIATE: the write lock, held until commit or rollback. Returns 0 or -1. */
int sworn_witness_state_begin(struct sworn_witness_state *st);

/*
 * Inside a transaction: the latest cosigned (size, root) of origin and the time of its latest
 * cosignature. OUT: *found (0: never cosigned, then *size and *cosigned_at are 0 and root is
 * zeroed), *size, root, *cosigned_at. Returns 0 or -1.
 */
int sworn_witness_state_get(struct sworn_witness_state *st, const char *origin, int *found,
                            uint64_t *size, uint8_t root[SWORN_HASH_LEN], uint64_t *cosigned_at);

/*
 * Inside a transaction: make (size, root, checkpoint text) origin's latest, cosigned at time
 * (seconds). The caller has checked that it extends the stored one (same root at the same size,
 * or a verified consistency proof). Returns 0 or -1.
 */
int sworn_witness_state_put(struct sworn_witness_state *st, const char *origin, uint64_t size,
                            const uint8_t root[SWORN_HASH_LEN], const char *text, size_t text_len,
                            uint64_t time);

/*
 * Keep a signed note that contradicts the state (a fork: the size the witness holds, another
 * root) as evidence, outside any transaction of the caller. A consistency proof that fails is not
 * kept: it may be an honest log's bug, not a second history. Once origin has
 * SWORN_WITNESS_FORKS_MAX rows, stores nothing and returns 0. Returns 0 or -1.
 */
int sworn_witness_state_record_fork(struct sworn_witness_state *st, const char *origin,
                                    uint64_t size, const char *note, size_t note_len,
                                    uint64_t time);

/* COMMIT (durable when it returns 0) or ROLLBACK (never fails the caller). */
int sworn_witness_state_commit(struct sworn_witness_state *st);
void sworn_witness_state_rollback(struct sworn_witness_state *st);

#endif
