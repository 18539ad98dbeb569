/*
 * notesigner.h -- a sworn_signer (an HSM, TPM or file key) as the log's checkpoint note signer
 * (transparency-log/notesign.h), so that hardware keys sign checkpoints without the log knowing.
 *
 * ECDSA P-256 keys sign as note type 0x02 (key id = SHA-256(SPKI)[:4], DER signature over the
 * note text); Ed25519 keys as type 0x01. Every signature is made for SWORN_PURPOSE_CHECKPOINT, so
 * the signer checks that what it signs is a checkpoint body. RSA keys cannot sign notes.
 */
#ifndef SWORN_NOTESIGNER_H
#define SWORN_NOTESIGNER_H

#include "notesign.h"
#include "proc.h"
#include "signer.h"

/*
 * Wrap signer s (which must outlive the note signer) as a note signer named `name`.
 * OUT: *out, to be closed with sworn_note_signer_close (which does not close s).
 * Returns 0 or -1.
 */
int sworn_signer_as_note_signer(struct sworn_signer *s, const char *name,
                                struct sworn_note_signer *out);

/* The same for a key held by a signer process (proc.h), which must outlive the note signer. */
int sworn_signer_proc_as_note_signer(struct sworn_signer_proc *p, const char *name,
                                     struct sworn_note_signer *out);

/*
 * The note verifier (name, type, key id, key) of a P-256 (type 0x02) or Ed25519 (type 0x01)
 * public key given as a DER SPKI: what an auditor needs to check checkpoints signed by an HSM or
 * TPM key whose public key was obtained out of band. Returns 0 or -1.
 */
int sworn_note_verifier_from_spki(const char *name, const uint8_t *spki, size_t spki_len,
                                  struct sworn_note_verifier *out);

#endif
