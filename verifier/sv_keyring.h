/*
 * sv_keyring.h -- the verifier's own reading of the sworn keyring and key events (docs/keys.md
 * sections 3 and 4), written from that document (no code shared with keyring/keyring.c).
 *
 * sv_keyring_load reads the policy's `keyring` files (versions 1..N in order), checks that each
 * is a signed note in the keyring text format, that version 1 is signed by at least the
 * policy's `keyring-threshold` of its `keyring-root` keys and by its own threshold of its own
 * roots, that each version N+1 is signed by T(N) roots of N and T(N+1) roots of N+1, and the
 * content rules (no key dropped or altered; statuses move only forward; valid-until never
 * later, earlier only on revocation). The newest version then answers which key was valid for
 * which purpose at which time (valid-from <= t, and t < valid-until unless active).
 *
 * Key events (the statement of a key_event entry) are checked against the newest version: the
 * old key exists with the statement's purpose; for rotate and retire it was valid in the second
 * before effective-from and its signature verifies; a revocation's signature, when present,
 * verifies; a rotation's proof of possession verifies with new-spki; and the keyring records
 * the event (the old key retired or revoked from at most effective-from).
 *
 * Keys are P-256 or Ed25519 (RSA keys are read but their signatures are reported as not
 * checkable). Thread-safe once loaded (read-only).
 */
#ifndef SV_KEYRING_H
#define SV_KEYRING_H

#include <stddef.h>
#include <stdint.h>

#include "sv_policy.h"
#include "sv_util.h"

struct sv_keyring_state;
struct evp_pkey_st;

/*
 * 0; -1 with why; -2 with why when a version lists one root key twice (under two names, or one
 * name and id twice): identity is the public key, and such a version would let one root meet
 * a threshold of two. Thresholds count distinct keys.
 */
int sv_keyring_load(const struct sv_policy *p, struct sv_keyring_state **out, char *why);
void sv_keyring_free(struct sv_keyring_state *k);

/* Parse and check one keyring version's text (for tests and fuzzing): 0, or -1 (-2 for a root
 * key listed twice) with why. */
int sv_keyring_parse_text(const char *text, size_t len, char *why);

int sv_keyring_has_purpose(const struct sv_keyring_state *k, const char *purpose);
int sv_keyring_knows(const struct sv_keyring_state *k, const uint8_t id[SV_HASH]);

/* The key with this id if it may sign for purpose at time t (seconds): its public key (owned
 * by k) and *ed = 1 for Ed25519. NULL with why otherwise. t = 0 is 1970-01-01, a time like any
 * other, never "any time" (issue 13, finding 6). t = SV_TIME_UNKNOWN means no time is known (an
 * opaque log, a checkpoint over no entry): then the key must be valid now, at the verifier's own
 * clock, and stay so (active, valid-from not after now): neither a retired or revoked key nor
 * one valid only later counts. Whatever t, a key valid only from after now fails: what the
 * record holds was signed no later than now (an entry stamped in the future moves t, not that). */
#define SV_TIME_UNKNOWN UINT64_MAX
struct evp_pkey_st *sv_keyring_key(const struct sv_keyring_state *k, const uint8_t id[SV_HASH],
                                   const char *purpose, uint64_t t, int *ed, char *why);

/* As sv_keyring_key for a time known only to be t or later (a bundle file whose range ends
 * before its checkpoint: the checkpoint was signed after its newest entry, how much later the
 * bundle does not show): the key may sign for purpose at some time >= t, so it must not have
 * been retired or revoked at or before t; a valid-from after t is no failure, one after now is.
 * SV_TIME_UNKNOWN as in
 * sv_keyring_key. */
struct evp_pkey_st *sv_keyring_key_from(const struct sv_keyring_state *k, const uint8_t id[SV_HASH],
                                        const char *purpose, uint64_t t, int *ed, char *why);

/* The keyring time (seconds) of a time stamp in milliseconds. 0 stays 0 (no time: the unknown
 * time of sv_keyring_key); a stamp inside the first second of 1970 is second 1, not 0, so an entry
 * stamped 1..999 ms is held to its keys' validity instead of passing as one without a time. */
static inline uint64_t sv_keyring_seconds(uint64_t ms)
{
    return ms != 0 && ms < 1000 ? 1 : ms / 1000;
}

/* Check a key-event statement found at log index. 0 or -1 with why. */
int sv_keyring_event(struct sv_keyring_state *k, const uint8_t *st, size_t len, uint64_t index,
                     char *why);

/* Parse "YYYY-MM-DDTHH:MM:SSZ" (1970..9999) into seconds. 0 or -1. */
int sv_parse_time(const char *s, size_t len, uint64_t *out);

#endif
