/*
 * signer.h -- one interface over every key that signs for sworn: PKCS#11 HSM keys, TPM keys, and
 * (for development only) PEM key files.
 *
 * A signer is opened from a URI:
 *     pkcs11:token=<label>;id=<%xx..>;object=<label>    RFC 7512; module and PIN file in the config
 *     tpm:handle=0x81xxxxxx                               a persistent TPM signing key
 *     file:/absolute/path/key.pem                         development only: marked software-held
 *
 * Purposes, the bytes each signature covers and the encodings: sigscheme.h.
 *
 * Keys are identified by their key id: SHA-256 of their DER SubjectPublicKeyInfo. PKCS#11 and TPM
 * keys must be pinned: the config names the SPKI the key must have, and open refuses any other.
 *
 * Secrets: the PIN is read from a file (mode 0600 or stricter, refused otherwise), a single
 * trailing newline stripped, and wiped after login. It never comes from argv, the environment or
 * the URI (a pin-value attribute is refused).
 *
 * Thread safety: one struct sworn_signer is used by one thread at a time. No signer may be used
 * across fork(): open a new one in the child.
 * Errors: -1 with sworn_err set (err.h): SWORN_ERR_ARG for a bad config, SWORN_ERR_VERIFY for a
 * pinned-key mismatch, SWORN_ERR_IO for a device failure (the caller denies; the signer rebuilds
 * its device context on the next call).
 */
#ifndef SWORN_SIGNER_H
#define SWORN_SIGNER_H

#include <stddef.h>
#include <stdint.h>

#include "sigscheme.h"

#define SWORN_SIGNER_TIMEOUT_MS 5000 /* default watchdog for one device call */
/*
 * Default watchdog for opening or rebuilding the device context (load the module, initialise, open
 * a session, log in, find and check the key; or connect to the TPM and read the key). That is many
 * device calls, and a slow but working device must not be abandoned in the middle of it: the same
 * deadline as the signer process's start (decisiond/signerproc.h).
 */
#define SWORN_SIGNER_OPEN_TIMEOUT_MS 10000

struct sworn_signer_config {
    const char *uri;         /* pkcs11:..., tpm:..., file:... (required) */
    const char *module_path; /* pkcs11: the PKCS#11 module to load */
    const char *pin_file;    /* pkcs11: the user PIN file */
    const char *tcti; /* tpm: the TCTI configuration, e.g. "swtpm:host=127.0.0.1,port=2321" */
    const uint8_t *pinned_spki; /* pkcs11:, tpm: the DER SPKI the key must have (required) */
    size_t pinned_spki_len;
    unsigned timeout_ms; /* watchdog for one device call; 0 means SWORN_SIGNER_TIMEOUT_MS */
    /* Watchdog for opening or rebuilding the device context; 0 means the larger of timeout_ms
     * and SWORN_SIGNER_OPEN_TIMEOUT_MS. */
    unsigned open_timeout_ms;
    /*
     * 1: make device calls in the caller's thread, without the watchdog. Only where something else
     * bounds a hung call: the signer process sets it, since its parent kills a stalled child.
     */
    int inline_device_calls;
};

struct sworn_signer;

/*
 * Open the key named by cfg->uri. For pkcs11: and tpm: exactly one key must match, it must be a
 * private signing key that is sensitive and not extractable (PKCS#11) or fixed to its TPM
 * (fixedTPM, fixedParent, sensitiveDataOrigin), and its public key must equal the pinned SPKI.
 * OUT: *out. Returns 0 or -1; nothing is left open after an error.
 */
int sworn_signer_open(const struct sworn_signer_config *cfg, struct sworn_signer **out);

/* Close a signer and wipe what it holds; NULL is allowed. */
void sworn_signer_close(struct sworn_signer *s);

/* The signer's DER SPKI (owned by the signer). */
const uint8_t *sworn_signer_spki(const struct sworn_signer *s, size_t *len);

/* The key id: SHA-256 of the SPKI. */
void sworn_signer_key_id(const struct sworn_signer *s, uint8_t out[SWORN_KEY_ID_LEN]);

enum sworn_sig_alg sworn_signer_alg(const struct sworn_signer *s);

/* 1 for keys held in software (file:), which verifiers and conformance must treat as such. */
int sworn_signer_software_held(const struct sworn_signer *s);

/* The backend's scheme: "pkcs11", "tpm" or "file". */
const char *sworn_signer_scheme(const struct sworn_signer *s);

/*
 * Sign msg[0..len) for a purpose (rules above). Writes the signature into sig (capacity cap).
 * OUT: *sig_len. Returns 0 or -1; a device failure marks the context for a rebuild, which the
 * next call attempts (with backoff) before signing.
 */
int sworn_signer_sign(struct sworn_signer *s, enum sworn_sign_purpose purpose, const uint8_t *msg,
                      size_t len, uint8_t *sig, size_t cap, size_t *sig_len);

/* Sign a fixed message and verify the signature with the public key. Returns 0 or -1. */
int sworn_signer_health(struct sworn_signer *s);

#endif
