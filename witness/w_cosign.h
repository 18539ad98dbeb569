/*
 * w_cosign.h -- the witness's C2SP tlog-cosignature/v1 signatures (note type 0x04,
 * https://c2sp.org/tlog-cosignature), made with an Ed25519 key held by a signer (signer.h:
 * a PKCS#11 token or a development key file) for purpose SWORN_PURPOSE_COSIGNATURE.
 *
 * For a checkpoint text T (the signed note's text, ending in '\n') and a time t (seconds since
 * the epoch, UTC), the signed message is "cosignature/v1\ntime <t>\n" || T, and the note
 * signature line is
 *     "\u2014 " <name> " " base64(key id (4, big-endian) || t (8, big-endian) || Ed25519 (64)) "\n"
 * where key id = SHA-256(<name> || "\n" || 0x04 || public key)[:4] (note.h). The verifier key the
 * operator hands to auditors is <name>+<8 hex id>+base64(0x04 || public key).
 *
 * No allocation. Thread safety: as the signer (one thread at a time).
 */
#ifndef SWORN_W_COSIGN_H
#define SWORN_W_COSIGN_H

#include <stddef.h>
#include <stdint.h>

#include "note.h"
#include "signer.h"

/* "\u2014 " (4 bytes), a name, " ", base64 of 76 bytes (104), "\n" */
#define SWORN_WITNESS_COSIG_LINE_MAX (4 + SWORN_NOTE_NAME_MAX + 1 + 104 + 1)

struct sworn_witness_cosigner {
    struct sworn_signer *signer;    /* not owned */
    struct sworn_note_verifier pub; /* name, type 0x04, the 32-byte key, its id */
};

/*
 * Bind signer (an Ed25519 key; anything else is refused) to the key name name.
 * OUT: *c. Returns 0, or -1 with sworn_err set (SWORN_ERR_ARG: not Ed25519, bad name).
 */
int sworn_witness_cosigner_init(struct sworn_witness_cosigner *c, struct sworn_signer *signer,
                                const char *name);

/* The verifier key string into out (capacity cap, NUL-terminated). Returns its length or -1. */
long sworn_witness_cosigner_vkey(const struct sworn_witness_cosigner *c, char *out, size_t cap);

/*
 * Cosign the checkpoint text (text_len bytes, a checkpoint body as checkpoint.h parses) at time
 * t: write the signature line into out (capacity cap, at least SWORN_WITNESS_COSIG_LINE_MAX + 1;
 * NUL-terminated). Returns its length, or -1 with sworn_err set (the signer's errors;
 * SWORN_ERR_FORMAT when text is no checkpoint body).
 */
long sworn_witness_cosign(struct sworn_witness_cosigner *c, const char *text, size_t text_len,
                          uint64_t t, char *out, size_t cap);

#endif
