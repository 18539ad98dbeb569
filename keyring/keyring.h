/*
 * keyring.h -- the keyring: every key that ever signed for sworn, with its purpose, validity and
 * status, in versions that a threshold of offline root keys signs (TUF's root-rotation rule).
 *
 * A keyring version is a C2SP signed note (transparency-log/note.h) whose text is, byte by byte
 * (every line ends in one '\n', 0x0A; fields are separated by exactly one space, 0x20; nothing
 * else, no empty lines, no trailing spaces):
 *
 *     sworn keyring v1
 *     version <N>                 canonical decimal, 1 <= N < 2^64-1
 *     threshold <T>               canonical decimal, 1 <= T <= number of root lines
 *     root <verifier key>         1..SWORN_KEYRING_MAX_ROOTS lines (C2SP form name+hexid+base64)
 *     key <id> <purpose> <status> <valid-from> <valid-until> <spki>
 *                                 0..SWORN_KEYRING_MAX_KEYS lines, strictly ascending by id
 *
 *   root       type 0x01 (Ed25519, `sworn-log keygen` key files) or 0x02 (ECDSA P-256, PEM key
 *              files); no two roots share a (name, key id) or a public key, so that one holder
 *              can never count twice. Roots keep the order in which they are written.
 *   id         64 lower-case hex digits: SHA-256 of the DER SPKI (signer.h's key id)
 *   purpose    "checkpoint", "receipt" or "key-event" (signer.h's purposes)
 *   status     "active", "retired" or "revoked"
 *   valid-from RFC 3339 UTC time, exactly YYYY-MM-DDTHH:MM:SSZ (20 bytes), 1970..9999
 *   valid-until "-" for an active key; for a retired key the retirement time, for a revoked key
 *              the revocation time (same form as valid-from, and not before valid-from)
 *   spki       canonical base64 of the DER SubjectPublicKeyInfo, in its one accepted spelling:
 *              P-256 as the 91-byte named-curve form with the uncompressed point (on the curve),
 *              Ed25519 as the 44-byte form, RSA as OpenSSL re-encodes it (at most
 *              SWORN_SIGNER_SPKI_MAX bytes); its SHA-256 must equal id
 * The whole text is at most SWORN_KEYRING_TEXT_MAX bytes.
 *
 * A keyring file is either the text alone (an unsigned version, as `keyring add` and `rotate`
 * write it, waiting for root signatures) or the signed note: text, "\n", signature lines. A file
 * that contains "\n\n" is a signed note; the text never holds an empty line.
 *
 * Verification:
 *   version 1          at least T distinct roots of its own sign (sworn_keyring_verify_root)
 *   N+1 given N        (sworn_keyring_verify_transition) the version is exactly N+1; at least
 *                      T(N) distinct roots of N and at least T(N+1) distinct roots of N+1 sign
 *                      N+1 (a root that is in both counts toward both, but once in each); and
 *                      the content rules of sworn_keyring_check_transition hold
 *   chain              versions 1..N in order, each verified as above (sworn_keyring_verify_chain)
 * A signature line by a key that is no root is ignored; one by a root that does not verify makes
 * the version fail (note.h's rules).
 *
 * Content rules from N to N+1 (old public keys are never dropped):
 *   - every key of N is in N+1 with the same SPKI (so the same id), purpose and valid-from;
 *   - status moves only active->retired, active->revoked, retired->revoked, or stays;
 *   - a valid-until, once set, never moves later; it may move earlier only when the new status is
 *     revoked (a compromise found to have started earlier); retired->retired keeps it exactly;
 *   - keys may be added, with any status.
 *
 * When a signature is acceptable (sworn_keyring_key_valid_at): the key is in the keyring, its
 * purpose is the one asked for, and the signing time t satisfies
 *   active    valid-from <= t
 *   retired   valid-from <= t < valid-until   (signatures made before retirement stay valid)
 *   revoked   valid-from <= t < valid-until   (the revocation time: nothing signed from then on)
 * The time a signature was made must come from something its signer cannot choose (the log
 * position of the entry that carries it); a revoked key could otherwise backdate.
 *
 * Memory: struct sworn_keyring is large (about 1.1 MiB: every SPKI is held decoded); allocate it
 * with sworn_keyring_new, never on the stack. Parsing does not keep pointers into its input.
 * Thread safety: no globals; one keyring is used by one thread at a time. Nothing here handles
 * secrets, so nothing is constant-time.
 * Errors: -1 with sworn_err set (err.h): SWORN_ERR_FORMAT for malformed text, SWORN_ERR_RANGE
 * for a limit exceeded, SWORN_ERR_VERIFY for a signature, threshold or transition rule that fails,
 * SWORN_ERR_NOTFOUND for a key that is not in the keyring, SWORN_ERR_ARG for a broken
 * precondition, SWORN_ERR_NOMEM when an allocation fails.
 */
#ifndef SWORN_KEYRING_H
#define SWORN_KEYRING_H

#include <stddef.h>
#include <stdint.h>

#include "note.h"
#include "signer.h"

#define SWORN_KEYRING_MAX_KEYS 1024
#define SWORN_KEYRING_MAX_ROOTS 64
/* Room is left below the note limit for SWORN_KEYRING_MAX_ROOTS signature lines and more. */
#define SWORN_KEYRING_TEXT_MAX (SWORN_NOTE_MAX_LEN - 64 * 1024)
#define SWORN_KEYRING_TIME_LEN 20                    /* YYYY-MM-DDTHH:MM:SSZ */
#define SWORN_KEYRING_TIME_MIN INT64_C(0)            /* 1970-01-01T00:00:00Z */
#define SWORN_KEYRING_TIME_MAX INT64_C(253402300799) /* 9999-12-31T23:59:59Z */
#define SWORN_KEYRING_NO_TIME INT64_C(-1)            /* valid-until of an active key: "-" */
#define SWORN_KEY_ID_HEX_LEN (2 * SWORN_KEY_ID_LEN)

enum sworn_key_status { SWORN_KEY_ACTIVE = 1, SWORN_KEY_RETIRED = 2, SWORN_KEY_REVOKED = 3 };

struct sworn_keyring_key {
    uint8_t key_id[SWORN_KEY_ID_LEN]; /* SHA-256(spki) */
    enum sworn_sign_purpose purpose;
    enum sworn_key_status status;
    int64_t valid_from;  /* seconds since the epoch, UTC */
    int64_t valid_until; /* SWORN_KEYRING_NO_TIME exactly when the key is active */
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len;
};

struct sworn_keyring {
    uint64_t version;
    size_t threshold;
    size_t root_count;
    struct sworn_note_verifier roots[SWORN_KEYRING_MAX_ROOTS];
    size_t key_count;
    struct sworn_keyring_key keys[SWORN_KEYRING_MAX_KEYS]; /* ascending by key_id */
};

/* A zeroed keyring on the heap (version 0: not a valid keyring until filled). NULL on failure. */
struct sworn_keyring *sworn_keyring_new(void);

/* Free a keyring; NULL is allowed. */
void sworn_keyring_free(struct sworn_keyring *kr);

/*
 * Parse a keyring text of exactly len bytes (no signatures) with the rules above.
 * OUT: *out, filled completely on success; undefined after an error.
 * Returns 0 or -1 (SWORN_ERR_FORMAT, SWORN_ERR_RANGE).
 */
int sworn_keyring_parse(const char *text, size_t len, struct sworn_keyring *out);

/*
 * Write the canonical text of kr into out (capacity cap, NUL-terminated). For every valid text x,
 * format(parse(x)) == x byte for byte. Checks kr against every rule that parse checks (a keyring
 * built by hand or by the mutators below gets the same scrutiny).
 * Returns the text's length, or -1 (SWORN_ERR_FORMAT for an invalid kr, SWORN_ERR_RANGE when it
 * does not fit); out holds "" after an error.
 */
long sworn_keyring_format(const struct sworn_keyring *kr, char *out, size_t cap);

/*
 * Split a keyring file of len bytes and parse its text. A file holding "\n\n" must be a signed
 * note (note.h), otherwise it is the text alone.
 * OUT: *kr; *note (may be NULL) holds the parsed note when the file is signed, pointing into
 * data; *is_signed (may be NULL) is 1 for a signed file, 0 for a bare text.
 * Returns 0 or -1 (SWORN_ERR_FORMAT, SWORN_ERR_RANGE).
 */
int sworn_keyring_load(const char *data, size_t len, struct sworn_keyring *kr,
                       struct sworn_note *note, int *is_signed);

/*
 * Count the distinct roots of kr that signed the note (whose text must be kr's text; the caller
 * parsed both from one file). OUT: *count. Returns 0, or -1 when a signature by a root fails
 * (SWORN_ERR_VERIFY, SWORN_ERR_FORMAT) or OpenSSL fails; *count is 0 after an error. A note
 * without any root signature gives 0 and returns 0.
 */
int sworn_keyring_count_signers(const struct sworn_keyring *kr, const struct sworn_note *note,
                                size_t *count);

/*
 * Version-1 rule: kr->version == 1 and at least kr->threshold of its roots signed note.
 * (Also usable on any version as a check of its own threshold: pass require_v1 = 0.)
 * Returns 0 or -1 (SWORN_ERR_VERIFY).
 */
int sworn_keyring_verify_root(const struct sworn_keyring *kr, const struct sworn_note *note,
                              int require_v1);

/*
 * The content rules from prev to next, without signatures: next->version == prev->version + 1 and
 * the rules above. Root holders run this before they sign. Returns 0 or -1 (SWORN_ERR_VERIFY,
 * naming the first rule broken).
 */
int sworn_keyring_check_transition(const struct sworn_keyring *prev,
                                   const struct sworn_keyring *next);

/*
 * Verify next (signed as next_note) given the already verified prev: the content rules, T(prev)
 * signatures by roots of prev and T(next) by roots of next. Returns 0 or -1 (SWORN_ERR_VERIFY).
 */
int sworn_keyring_verify_transition(const struct sworn_keyring *prev,
                                    const struct sworn_keyring *next,
                                    const struct sworn_note *next_note);

/*
 * Verify a chain of n >= 1 keyring files (files[i] of lens[i] bytes): files[0] is version 1,
 * files[i] is version i+1. Every file must be signed. OUT: *last, the newest version, when the
 * whole chain verifies (undefined otherwise). Allocates one working keyring, freed before return.
 * Returns 0 or -1; the message names the version that failed.
 */
int sworn_keyring_verify_chain(const char *const *files, const size_t *lens, size_t n,
                               struct sworn_keyring *last);

/* The key with this id, or NULL (no error is recorded). */
const struct sworn_keyring_key *sworn_keyring_find(const struct sworn_keyring *kr,
                                                   const uint8_t key_id[SWORN_KEY_ID_LEN]);

/*
 * Is a signature made at time t by key_id for purpose acceptable under kr (rules above)?
 * Returns 0 when it is; -1 otherwise, with sworn_err set: SWORN_ERR_NOTFOUND (no such key),
 * SWORN_ERR_VERIFY (another purpose, before valid-from, at or after retirement or revocation).
 */
int sworn_keyring_key_valid_at(const struct sworn_keyring *kr,
                               const uint8_t key_id[SWORN_KEY_ID_LEN],
                               enum sworn_sign_purpose purpose, int64_t t);

/*
 * Add an active key (valid from valid_from) in its sorted place. The SPKI must be a key of an
 * accepted type in canonical DER. Returns 0 or -1 (SWORN_ERR_ARG for a duplicate id or a bad
 * time, SWORN_ERR_FORMAT for a bad SPKI, SWORN_ERR_RANGE when the keyring is full); kr is
 * unchanged after an error.
 */
int sworn_keyring_add_key(struct sworn_keyring *kr, const uint8_t *spki, size_t spki_len,
                          enum sworn_sign_purpose purpose, int64_t valid_from);

/*
 * Move a key to status (SWORN_KEY_RETIRED or SWORN_KEY_REVOKED) as of time `until`, following
 * the content rules above (not backwards, until not before valid-from, never later than an
 * earlier until, retired->retired not at all). Returns 0 or -1 (SWORN_ERR_NOTFOUND,
 * SWORN_ERR_ARG); kr is unchanged after an error.
 */
int sworn_keyring_set_status(struct sworn_keyring *kr, const uint8_t key_id[SWORN_KEY_ID_LEN],
                             enum sworn_key_status status, int64_t until);

/*
 * Parse exactly SWORN_KEYRING_TIME_LEN bytes of YYYY-MM-DDTHH:MM:SSZ (a real calendar date and
 * time, no leap second, years 1970..9999). OUT: *t, seconds since the epoch.
 * Returns 0 or -1 (SWORN_ERR_FORMAT).
 */
int sworn_keyring_time_parse(const char *s, size_t len, int64_t *t);

/*
 * Format t (SWORN_KEYRING_TIME_MIN..SWORN_KEYRING_TIME_MAX) as YYYY-MM-DDTHH:MM:SSZ into out,
 * NUL-terminated. Returns 0 or -1 (SWORN_ERR_RANGE).
 */
int sworn_keyring_time_format(int64_t t, char out[SWORN_KEYRING_TIME_LEN + 1]);

/* Purposes by name ("checkpoint", "receipt", "key-event"). Returns 0 or -1 (SWORN_ERR_FORMAT). */
int sworn_keyring_purpose_parse(const char *s, size_t len, enum sworn_sign_purpose *p);

/* The name of a purpose, or NULL for a value that is none. */
const char *sworn_keyring_purpose_name(enum sworn_sign_purpose p);

/* The name of a status ("active", "retired", "revoked"), or NULL. */
const char *sworn_keyring_status_name(enum sworn_key_status s);

/*
 * Check that spki[0..len) is an SPKI in the one spelling the keyring accepts (see "spki" above):
 * P-256 named curve with an uncompressed point on the curve, Ed25519, or RSA in OpenSSL's
 * canonical DER; at most SWORN_SIGNER_SPKI_MAX bytes. Returns 0 or -1 (SWORN_ERR_FORMAT).
 * Thread-safe (the P-256 group is built once per process and only read).
 */
int sworn_keyring_spki_check(const uint8_t *spki, size_t len);

#endif
