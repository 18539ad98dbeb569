/*
 * note.h -- C2SP signed notes (https://c2sp.org/signed-note): parsing, verification, and the
 * verifier key form `<name>+<hex key id>+<base64(type byte || key)>`.
 *
 * A signed note is
 *     text            one or more lines, each ending in '\n' (UTF-8, no other control bytes)
 *     "\n"            one empty line
 *     signature lines "\u2014 <name> <base64(4-byte key id || signature)>\n", at least one
 * The note is split at the last "\n\n"; the text includes its final '\n' and is what every
 * signature covers.
 *
 * Signature types understood here (the type byte of the verifier key):
 *   0x01 Ed25519: key id = SHA-256(name || "\n" || 0x01 || 32-byte public key)[:4];
 *        signature = Ed25519 over the text.
 *   0x02 ECDSA P-256: key = DER SubjectPublicKeyInfo; key id = SHA-256(SPKI)[:4] (the name is
 *        not hashed); signature = DER ECDSA-SHA256 over the text.
 *   0x04 C2SP tlog-cosignature/v1: key = 32-byte Ed25519 public key; key id =
 *        SHA-256(name || "\n" || 0x04 || key)[:4]; signature bytes = u64 big-endian timestamp ||
 *        Ed25519 over ("cosignature/v1\ntime <timestamp>\n" || text).
 *
 * Verification rules: a signature line whose (name, key id) matches no given verifier is
 * ignored; one that matches and fails makes the whole note fail; at least one signature must
 * verify. Up to SWORN_NOTE_MAX_SIGS signature lines are accepted (more is a format error).
 *
 * No allocation: a parsed note points into the caller's bytes, which must outlive it. Thread-safe.
 * All inputs are public, so nothing here is constant-time.
 */
#ifndef SWORN_NOTE_H
#define SWORN_NOTE_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_NOTE_MAX_LEN (1u << 20) /* a whole note, text and signatures */
#define SWORN_NOTE_MAX_SIGS 100
#define SWORN_NOTE_NAME_MAX 255 /* bytes in a key name */
#define SWORN_NOTE_KEY_MAX 256  /* bytes in a verifier key after its type byte */
#define SWORN_NOTE_SIG_MAX 512  /* bytes in one decoded signature after its key id */
#define SWORN_NOTE_VKEY_MAX (SWORN_NOTE_NAME_MAX + 10 + 4 * (SWORN_NOTE_KEY_MAX + 3) / 3 + 4)

enum sworn_note_alg {
    SWORN_NOTE_ALG_ED25519 = 0x01,
    SWORN_NOTE_ALG_ECDSA_P256 = 0x02,
    SWORN_NOTE_ALG_COSIGNATURE_V1 = 0x04
};

/* A key that can check signatures: parsed from, or formatted as, a verifier key string. */
struct sworn_note_verifier {
    char name[SWORN_NOTE_NAME_MAX + 1]; /* NUL-terminated */
    uint32_t key_id;
    uint8_t alg; /* enum sworn_note_alg */
    uint8_t key[SWORN_NOTE_KEY_MAX];
    size_t key_len;
};

/* One signature line, pointing into the note's bytes. */
struct sworn_note_sig {
    const char *name;
    size_t name_len;
    uint32_t key_id;
    const char *sig_b64; /* base64 of (key id || signature), as on the line */
    size_t sig_b64_len;
};

struct sworn_note {
    const char *text; /* the signed text, including its final '\n' */
    size_t text_len;
    size_t sig_count;
    struct sworn_note_sig sigs[SWORN_NOTE_MAX_SIGS];
};

/*
 * Parse a verifier key string of exactly len bytes. Checks the name (non-empty, no '+', no
 * white space or control bytes), the hex id (8 hex digits), the type, the key length for known
 * types (32 for 0x01 and 0x04; a parseable P-256 SPKI for 0x02), and that the id equals the one
 * computed from the key. Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT).
 */
int sworn_note_verifier_parse(const char *vkey, size_t len, struct sworn_note_verifier *out);

/* Format a verifier key string into out (NUL-terminated). Returns its length or -1. */
long sworn_note_verifier_format(const struct sworn_note_verifier *v, char *out, size_t cap);

/*
 * Check a key name: 1..SWORN_NOTE_NAME_MAX bytes of valid UTF-8 with no '+', no Unicode white
 * space and no control bytes. Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT).
 */
int sworn_note_name_check(const char *name, size_t len);

/*
 * Check a text that is about to be signed: non-empty, at most SWORN_NOTE_MAX_LEN bytes, ending in
 * '\n', valid UTF-8 without control bytes other than '\n', and without empty lines (the signing
 * side is stricter than the parser, which accepts empty lines inside a text as C2SP allows; the
 * texts sworn signs, checkpoints, never have any). Returns 0, or -1 with sworn_err set
 * (SWORN_ERR_FORMAT or SWORN_ERR_RANGE).
 */
int sworn_note_text_check(const char *text, size_t len);

/*
 * Compute the key id of (name, alg, key) per the rules above (types other than 0x02 use the
 * name-hashing form C2SP recommends). name_len <= SWORN_NOTE_NAME_MAX and
 * key_len <= SWORN_NOTE_KEY_MAX. Returns 0, or -1 with sworn_err set (SWORN_ERR_ARG).
 */
int sworn_note_key_id(const char *name, size_t name_len, uint8_t alg, const uint8_t *key,
                      size_t key_len, uint32_t *key_id);

/*
 * Split and check the form of a signed note of len bytes (at most SWORN_NOTE_MAX_LEN).
 * Verifies nothing cryptographically. Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT or
 * SWORN_ERR_RANGE).
 */
int sworn_note_parse(const char *msg, size_t len, struct sworn_note *out);

/*
 * Verify a parsed note against nkeys verifiers with the rules above.
 * OUT (each may be NULL): *verified_count, the number of signatures that verified, where a line
 * repeating the (name, key id) of an earlier line is checked but not counted again;
 * verified_by[i] = 1 when keys[i] verified a signature, else 0 (nkeys entries);
 * cosig_time[i] = the timestamp of keys[i]'s cosignature when keys[i] is of type 0x04 and
 * verified, else 0 (nkeys entries).
 * When several keys share a (name, key id), a signature verified by any of them counts.
 * Returns 0 when at least one known signature verified and none failed; otherwise -1 with
 * sworn_err set (SWORN_ERR_VERIFY; SWORN_ERR_FORMAT for a malformed signature of a known key;
 * SWORN_ERR_CRYPTO or SWORN_ERR_NOMEM when OpenSSL itself fails). After an error every output
 * is zero.
 */
int sworn_note_verify(const struct sworn_note *note, const struct sworn_note_verifier *keys,
                      size_t nkeys, size_t *verified_count, uint8_t *verified_by,
                      uint64_t *cosig_time);

#endif
