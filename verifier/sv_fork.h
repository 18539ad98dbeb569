/*
 * sv_fork.h -- comparing two records of one log, and the self-contained fork proof
 * (docs/verifier.md section 6).
 *
 * A fork proof is a text file:
 *     sworn fork-proof v1\n
 *     a <base64 of checkpoint note A>\n      the smaller (or equal) tree, size m
 *     b <base64 of checkpoint note B>\n      the larger tree, size n
 *     proof <base64 hash>\n                  0 to 128 lines (none when m = n)
 * Both notes must verify under the checker's trust policy and have its origin. When m = n the
 * roots differ. When m < n the proof lines are the RFC 9162 consistency path from m to n, with
 * the root of B's first m leaves first even when m is a power of two; recomputing from it must
 * give B's root as the new root and a root other than A's as the old root: then B commits to a
 * first-m-leaves tree that is not A's, which (SHA-256 being collision resistant) no single
 * append-only log can sign. Anyone with the log's verifier key can check it: nothing in it is
 * taken on trust. At most 64 KiB plus two notes.
 */
#ifndef SV_FORK_H
#define SV_FORK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_policy.h"
#include "sv_util.h"

#define SV_FORK_MAX (3u * 1024u * 1024u)

/* Check a fork proof. 0 proven; -1 not a proof (why says what is missing). */
int sv_fork_check(const struct sv_policy *p, const char *text, size_t len, char *why);

/*
 * Compare two verified records of one origin (folders). Returns 0 consistent, 1 forked (then
 * *proof, when proof is non-NULL, is a fresh allocation of *proof_len bytes holding the fork
 * proof), 2 when either record cannot be read or its newest checkpoint does not verify, 3 when
 * a record's entries do not hash to its own checkpoints (not a fork between them: run verify on
 * it). why describes the outcome.
 */
int sv_compare(const struct sv_policy *p, const char *a, const char *b, char **proof,
               size_t *proof_len, char *why);

#endif
