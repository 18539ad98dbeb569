/*
 * backend.h -- what a signer backend (pkcs11.c, tpm2.c, file.c) provides to signer.c.
 *
 * signer.c owns the generic work: choosing the backend by URI scheme, pinning the public key,
 * building the purpose's TBS bytes, hashing them for digest-signing algorithms, rebuilding a
 * failed device context with backoff, and the health check. A backend only opens a key, signs
 * what it is given, and rebuilds or closes its device context.
 *
 * Backends are const tables (no #ifdef inside functions); each lives in its own file.
 */
#ifndef SWORN_SIGNER_BACKEND_H
#define SWORN_SIGNER_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "signer.h"

struct sworn_signer_backend {
    const char *scheme; /* the URI scheme, without ':' */
    int software_held;  /* 1 when the key is held in this process's memory */
    /*
     * Open the key that cfg names. Writes its DER SPKI into spki (capacity SWORN_SIGNER_SPKI_MAX)
     * and its algorithm. OUT: *ctx, *spki_len, *alg. Must refuse keys that do not meet signer.h's
     * rules for the backend (extractable, not sensitive, ambiguous). Need not check the pin:
     * signer.c compares the SPKI with cfg->pinned_spki.
     * Returns 0, or -1 with sworn_err set; nothing stays open after an error.
     */
    int (*open)(const struct sworn_signer_config *cfg, void **ctx, uint8_t *spki, size_t *spki_len,
                enum sworn_sig_alg *alg);
    /*
     * Sign. For SWORN_SIG_ECDSA_P256_SHA256 and SWORN_SIG_RSA_PSS_SHA256, data is the 32-byte
     * SHA-256 of the TBS; for SWORN_SIG_ED25519, data is the TBS itself. Writes the signature in
     * the encoding signer.h gives (DER for ECDSA). OUT: *sig_len.
     * Returns 0, or -1 with sworn_err set; SWORN_ERR_IO means the device context is suspect and
     * signer.c will call reset before the next sign.
     */
    int (*sign)(void *ctx, const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
                size_t *sig_len);
    /*
     * Tear the device context down completely and build it again (new library context, new
     * session, new login, the key found again and its SPKI checked against the one found at
     * open). Returns 0, or -1 with sworn_err set (the context stays torn down; reset may be
     * called again later). While a call abandoned by the watchdog is still inside the device
     * library, reset fails at once with SWORN_ERR_IO rather than tear down under it.
     */
    int (*reset)(void *ctx);
    /* Release everything and wipe secrets. ctx may be NULL. */
    void (*close)(void *ctx);
};

/* The watchdogs cfg asks for: one device call, and opening or rebuilding (signer.h's defaults). */
unsigned sworn_signer_call_timeout(const struct sworn_signer_config *cfg);
unsigned sworn_signer_open_timeout(const struct sworn_signer_config *cfg);

extern const struct sworn_signer_backend sworn_signer_backend_file;
extern const struct sworn_signer_backend sworn_signer_backend_pkcs11;
extern const struct sworn_signer_backend sworn_signer_backend_tpm;

#endif
