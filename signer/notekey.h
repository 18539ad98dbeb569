/*
 * notekey.h -- a signing key's public half as a C2SP signed note's key (transparency-log/note.h):
 * ECDSA P-256 keys sign as note type 0x02 (key id = SHA-256(SPKI)[:4], DER signature over the note
 * text), Ed25519 keys as type 0x01; RSA keys cannot sign notes. Pure: no device, no process; the
 * direct adapter (notesigner.h), the engine's signer process adapter (decisiond/signerproc.h) and
 * the tools use it.
 *
 * Errors: -1 with sworn_err set. Thread safety: no shared state.
 */
#ifndef SWORN_NOTEKEY_H
#define SWORN_NOTEKEY_H

#include <stddef.h>
#include <stdint.h>

#include "notesign.h"
#include "sigscheme.h"

/*
 * Fill out's public half (name, type, key, key id) from a key's DER SPKI and algorithm; out's ops
 * and ctx are the caller's to set. Returns 0 or -1.
 */
int sworn_note_pub_from_spki(const char *name, const uint8_t *spki, size_t spki_len,
                             enum sworn_sig_alg alg, struct sworn_note_signer *out);

/*
 * The note verifier (name, type, key id, key) of a P-256 (type 0x02) or Ed25519 (type 0x01)
 * public key given as a DER SPKI: what an auditor needs to check checkpoints signed by an HSM or
 * TPM key whose public key was obtained out of band. Returns 0 or -1.
 */
int sworn_note_verifier_from_spki(const char *name, const uint8_t *spki, size_t spki_len,
                                  struct sworn_note_verifier *out);

#endif
