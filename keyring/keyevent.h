/*
 * keyevent.h -- key-event statements: the signed record of a rotation, retirement or revocation,
 * which decisiond appends to the log as a key-event entry and operators keep beside the keyring.
 *
 * The statement, byte by byte (seven lines, each ending in one '\n'; one space after each word;
 * ASCII only):
 *
 *     sworn key-event v1
 *     event <rotate|retire|revoke>
 *     purpose <checkpoint|receipt|key-event>      the purpose of the old (and new) key
 *     old <64 lower-case hex digits>               key id of the key that stops being used
 *     new <64 lower-case hex digits | ->           rotate: key id of its successor; else "-"
 *     new-spki <base64 | ->                        rotate: the successor's DER SPKI (canonical
 *                                                  base64; SHA-256 of it is `new`); else "-"
 *     effective-from <YYYY-MM-DDTHH:MM:SSZ>        from this second on the old key is retired or
 *                                                  revoked and (rotate) the new key is active
 *
 * The signed form (what `sworn-hsm rotate|retire|revoke` write) is the statement followed by
 *
 *     old-signature <base64>     the old key's signature:
 * sworn_signer_sign(SWORN_PURPOSE_KEY_EVENT, SHA-256(statement)), i.e. over the TBS
 *                                "\xffsworn/v1 key-event\0" || SHA-256(statement) (signer.h)
 *     new-signature <base64>     rotate only, the proof of possession: the new key's
 *                                sworn_signer_sign(SWORN_PURPOSE_KEY_EVENT,
 *                                SHA-256("sworn proof-of-possession v1\n" || statement))
 *
 * in that order, each line ending in '\n'. Which lines must be there:
 *     rotate   both                  (the old key hands over; the new key proves it is held)
 *     retire   old-signature only    (the key signs its own retirement)
 *     revoke   old-signature optional, new-signature never: a revoked key may be compromised, so
 *              its signature proves nothing; the keyring's root signatures authorise a revocation
 * Signatures are those of signer.h: DER ECDSA P-256, 64-byte Ed25519 or RSA-PSS, 1 to
 * SWORN_SIGNER_SIG_MAX bytes.
 *
 * Verification against a keyring (sworn_keyevent_verify): the old key is in the keyring with the
 * statement's purpose; for rotate and retire it was valid for that purpose in the second before
 * effective-from (sworn_keyring_key_valid_at) and old-signature verifies with its keyring SPKI;
 * for revoke an old-signature, if present, verifies too; for rotate new-signature verifies with
 * new-spki, and when the keyring already holds the new key, it has the same purpose. The keyring
 * may be the version before the event or the one that records it.
 *
 * Parsing is strict and bounded (at most SWORN_KEYEVENT_MAX bytes) and canonical: formatting a
 * parsed event gives back exactly its input. No allocation; thread-safe; public data only.
 * Errors: -1 with sworn_err set (SWORN_ERR_FORMAT, SWORN_ERR_RANGE, SWORN_ERR_VERIFY,
 * SWORN_ERR_NOTFOUND for an old key that is not in the keyring, SWORN_ERR_ARG).
 */
#ifndef SWORN_KEYEVENT_H
#define SWORN_KEYEVENT_H

#include <stddef.h>
#include <stdint.h>

#include "keyring.h"
#include "signer.h"

#define SWORN_KEYEVENT_STATEMENT_MAX 2048 /* the longest statement is about 1.6 KiB */
#define SWORN_KEYEVENT_MAX 4096           /* a statement and two signature lines */
#define SWORN_KEYEVENT_POP_PREFIX "sworn proof-of-possession v1\n"

enum sworn_keyevent_kind {
    SWORN_KEYEVENT_ROTATE = 1,
    SWORN_KEYEVENT_RETIRE = 2,
    SWORN_KEYEVENT_REVOKE = 3
};

struct sworn_keyevent {
    enum sworn_keyevent_kind kind;
    enum sworn_sign_purpose purpose;
    uint8_t old_id[SWORN_KEY_ID_LEN];
    uint8_t new_id[SWORN_KEY_ID_LEN];        /* rotate only */
    uint8_t new_spki[SWORN_SIGNER_SPKI_MAX]; /* rotate only */
    size_t new_spki_len;                     /* 0 exactly when the kind is not rotate */
    int64_t effective_from;                  /* seconds since the epoch, UTC */
    uint8_t old_sig[SWORN_SIGNER_SIG_MAX];
    size_t old_sig_len; /* 0: no old-signature line */
    uint8_t new_sig[SWORN_SIGNER_SIG_MAX];
    size_t new_sig_len; /* 0: no new-signature line */
};

/*
 * Write the statement (without signature lines) of ev into out (capacity cap, NUL-terminated).
 * Checks the statement's fields (kind, purpose, times, new id = SHA-256(new SPKI), new != old,
 * new fields present exactly for rotate); the signature fields are not looked at.
 * Returns its length, or -1 (SWORN_ERR_FORMAT, SWORN_ERR_RANGE); out holds "" after an error.
 */
long sworn_keyevent_statement(const struct sworn_keyevent *ev, char *out, size_t cap);

/*
 * Write the signed form of ev (statement and the signature lines it has) into out (capacity cap,
 * NUL-terminated). The signature lines must be those the kind requires (rules above).
 * Returns its length or -1; out holds "" after an error.
 */
long sworn_keyevent_format(const struct sworn_keyevent *ev, char *out, size_t cap);

/*
 * Parse the signed form of exactly len bytes. OUT: *out (undefined after an error).
 * Returns 0 or -1 (SWORN_ERR_FORMAT, SWORN_ERR_RANGE).
 */
int sworn_keyevent_parse(const char *data, size_t len, struct sworn_keyevent *out);

/*
 * The digests the signatures are made over: SHA-256(statement) for the old key, and
 * SHA-256(SWORN_KEYEVENT_POP_PREFIX || statement) for the new key's proof of possession.
 * Returns 0 or -1 (the statement's fields are invalid).
 */
int sworn_keyevent_digest(const struct sworn_keyevent *ev, uint8_t out[32]);
int sworn_keyevent_pop_digest(const struct sworn_keyevent *ev, uint8_t out[32]);

/*
 * Verify ev against kr with the rules above. Returns 0 when it holds, or -1 (SWORN_ERR_VERIFY,
 * SWORN_ERR_NOTFOUND, SWORN_ERR_FORMAT).
 */
int sworn_keyevent_verify(const struct sworn_keyevent *ev, const struct sworn_keyring *kr);

/* The name of a kind ("rotate", "retire", "revoke"), or NULL. */
const char *sworn_keyevent_kind_name(enum sworn_keyevent_kind k);

#endif
