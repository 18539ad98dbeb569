/*
 * notesign.h -- the signer interface through which the log signs checkpoint notes, and its two
 * software backends.
 *
 * The log never touches key material: it hands the note text to a sworn_note_signer and gets a
 * signature back. Hardware backends (PKCS#11, TPM; a later issue) plug in by filling the same
 * struct with their own ops, without changing the log.
 *
 * Backends here:
 *   Ed25519 (type 0x01) from a key file in the Go/C2SP form
 *       PRIVATE+KEY+<name>+<hex key id>+<base64(0x01 || 32-byte seed)>
 *   ECDSA P-256 (type 0x02) from a PEM private key file (PKCS#8 or SEC1); its note name is given
 *       by the caller, since PEM carries none.
 * Key files must not be readable or writable by group or others (mode 0600 or stricter) and must
 * be regular files; anything else is refused. Seeds and PEM bytes are wiped after loading.
 *
 * Thread safety: one signer is used by one thread at a time.
 */
#ifndef SWORN_NOTESIGN_H
#define SWORN_NOTESIGN_H

#include <stddef.h>
#include <stdint.h>

#include "note.h"

struct sworn_note_signer_ops {
    const char *kind; /* a short name for logs: "ed25519-file", "ecdsa-p256-pem" */
    /*
     * Sign msg[0..len). Writes the signature bytes (without the key id; for 0x02 the DER
     * signature, for 0x01 the 64-byte Ed25519 signature) into sig (capacity cap).
     * OUT: *sig_len. Returns 0, or -1 with sworn_err set; nothing useful in sig after an error.
     */
    int (*sign)(void *ctx, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                size_t *sig_len);
    /* Release ctx and wipe any key material it holds. */
    void (*close)(void *ctx);
};

struct sworn_note_signer {
    const struct sworn_note_signer_ops *ops;
    void *ctx;
    struct sworn_note_verifier pub; /* name, key id, type and public key of this signer */
};

/*
 * Open a key file: a PRIVATE+KEY+ file gives an Ed25519 signer named as in the file (name must
 * then be NULL or equal that name); a PEM file gives an ECDSA P-256 signer named `name` (which
 * must not be NULL). Returns 0, or -1 with sworn_err set; *out is untouched after an error.
 */
int sworn_note_signer_open_file(const char *path, const char *name, struct sworn_note_signer *out);

/* Release a signer opened by any backend; safe on a zeroed struct. */
void sworn_note_signer_close(struct sworn_note_signer *s);

/*
 * Sign `text` (text_len bytes, which must end in '\n' and form a valid note text) with each of
 * the n signers, and write the whole signed note into out (capacity cap, NUL-terminated):
 * text, "\n", then one signature line per signer in the order given.
 * OUT: *out_len. Returns 0, or -1 with sworn_err set.
 */
int sworn_note_sign(const char *text, size_t text_len, struct sworn_note_signer *const *signers,
                    size_t n, char *out, size_t cap, size_t *out_len);

/*
 * Make a new Ed25519 key named `name` and write it as a PRIVATE+KEY+ file at path (created with
 * mode 0600, refusing to overwrite), and its verifier key string into vkey (capacity vkey_cap).
 * Returns 0, or -1 with sworn_err set.
 */
int sworn_note_keygen_ed25519(const char *name, const char *path, char *vkey, size_t vkey_cap);

#endif
