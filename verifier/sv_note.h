/*
 * sv_note.h -- C2SP signed notes, verifier keys and checkpoints for the verifier, written from
 * docs/formats.md sections 4 to 6 (no code shared with transparency-log/note.c).
 *
 * Verifier keys: "<name>+<8 hex key id>+<base64(type || key)>", types 0x01 (Ed25519), 0x02
 * (ECDSA P-256, DER SPKI) and 0x04 (cosignature/v1, Ed25519); the key id must be the one the
 * key gives. A note (at most 1 MiB) is split at its last "\n\n"; every signature line is
 * "— <name> <base64(key id || sig)>\n" (1 to 100 lines). sv_note_verify checks every line whose
 * (name, key id) matches a given key: a line that does not verify fails the note; a line that
 * matches nothing is ignored and counted. Checkpoints: origin, canonical decimal size, base64
 * root, optional extension lines.
 *
 * Parsed notes point into the caller's buffer. Keys hold an OpenSSL EVP_PKEY: free them with
 * sv_vkey_free. Thread-safe for distinct objects; verifying with one key from several threads is
 * safe (OpenSSL's verify contexts are made per call).
 */
#ifndef SV_NOTE_H
#define SV_NOTE_H

#include <stddef.h>
#include <stdint.h>

#include "sv_util.h"

#define SV_NOTE_MAX (1u << 20)
#define SV_NOTE_SIGS_MAX 100
#define SV_NAME_MAX 255
#define SV_ORIGIN_MAX 255
#define SV_VKEY_TEXT_MAX 1099 /* a verifier key string as written */
#define SV_NOTE_SIG_MAX 516   /* a signature line's bytes after the 4-byte key id */
#define SV_NOTE_KEYS_MAX 64   /* keys one sv_note_verify call checks against */

struct evp_pkey_st;

struct sv_vkey {
    char name[SV_NAME_MAX + 1];
    uint32_t id;
    uint8_t type;               /* 0x01, 0x02 or 0x04 */
    uint8_t spki_hash[SV_HASH]; /* SHA-256 of the key's DER SPKI (the sworn key id) */
    struct evp_pkey_st *pkey;
    char text[SV_VKEY_TEXT_MAX + 1]; /* the key as written */
};

/* Parse one verifier key string (len bytes, no newline). 0, or -1 with why. */
int sv_vkey_parse(const char *s, size_t len, struct sv_vkey *out, char *why);
void sv_vkey_free(struct sv_vkey *k);

/* A type 0x02 key from a DER SPKI (name is the note name it signs under). 0 or -1 with why. */
int sv_vkey_from_spki(const char *name, const uint8_t *spki, size_t spki_len, struct sv_vkey *out,
                      char *why);

struct sv_note_sig {
    const char *name;
    size_t name_len;
    uint32_t id;
    uint8_t sig[SV_NOTE_SIG_MAX];
    size_t sig_len; /* after the 4-byte key id */
};

struct sv_note {
    const char *text; /* up to and including the text's final '\n' */
    size_t text_len;
    struct sv_note_sig sigs[SV_NOTE_SIGS_MAX];
    size_t nsigs;
};

/* Split and check the shape of a note. 0, or -1 with why. */
int sv_note_parse(const char *note, size_t len, struct sv_note *out, char *why);

/* Per key: how many lines matched it and how many verified. */
struct sv_note_result {
    unsigned matched[SV_NOTE_KEYS_MAX];
    unsigned verified[SV_NOTE_KEYS_MAX];
    uint64_t cosig_time[SV_NOTE_KEYS_MAX]; /* type 0x04: the timestamp of its (last) valid line */
    unsigned unknown;                      /* lines that matched no key */
};

/*
 * Verify every signature line of n that matches one of keys[0..nkeys) (nkeys <= SV_NOTE_KEYS_MAX).
 * Returns 0 when no matching line failed (counts in res), -1 with why at the first line that
 * matched a key and did not verify.
 */
int sv_note_verify(const struct sv_note *n, const struct sv_vkey *keys, size_t nkeys,
                   struct sv_note_result *res, char *why);

/* Verify a raw signature (no note) with a key of type 0x01/0x02 over msg: 1 valid, 0 not. */
int sv_sig_verify(struct evp_pkey_st *pkey, int ed25519, const uint8_t *msg, size_t msg_len,
                  const uint8_t *sig, size_t sig_len);

struct sv_checkpoint {
    char origin[SV_ORIGIN_MAX + 1];
    uint64_t size;
    uint8_t root[SV_HASH];
};

/* Parse a checkpoint body (a note's text). 0, or -1 with why. */
int sv_checkpoint_parse(const char *text, size_t len, struct sv_checkpoint *out, char *why);

#endif
