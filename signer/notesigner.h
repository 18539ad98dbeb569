/*
 * notesigner.h -- a sworn_signer opened in this process (an HSM, TPM or file key: the operator's
 * tools) as the log's checkpoint note signer (transparency-log/notesign.h), so that hardware keys
 * sign checkpoints without the log knowing. The key's note form is notekey.h's. Every signature is
 * made for SWORN_PURPOSE_CHECKPOINT, so the signer checks that what it signs is a checkpoint body.
 * decisiond's engine, which never opens a key, uses decisiond/signerproc.h's adapter instead.
 */
#ifndef SWORN_NOTESIGNER_H
#define SWORN_NOTESIGNER_H

#include "notesign.h"
#include "notekey.h"
#include "signer.h"

/*
 * Wrap signer s (which must outlive the note signer) as a note signer named `name`.
 * OUT: *out, to be closed with sworn_note_signer_close (which does not close s).
 * Returns 0 or -1.
 */
int sworn_signer_as_note_signer(struct sworn_signer *s, const char *name,
                                struct sworn_note_signer *out);

#endif
