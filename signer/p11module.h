/*
 * p11module.h -- the PKCS#11 plumbing shared by the pkcs11 signer backend and the sworn-hsm tool:
 * loading a module, finding a token's slot, and reading a PIN file.
 *
 * Not thread-safe by itself: callers serialise their use of one module handle. A module handle
 * must not be used across fork().
 */
#ifndef SWORN_P11MODULE_H
#define SWORN_P11MODULE_H

#include <stddef.h>
#include <stdint.h>

#include <p11-kit/pkcs11.h>

#include "pkcs11uri.h"

#define SWORN_P11_PIN_MAX 256

struct sworn_p11_module {
    void *dl;
    CK_FUNCTION_LIST_PTR f;
    int initialized; /* 1 when this handle called C_Initialize (and so must C_Finalize) */
};

/*
 * dlopen the module at path (absolute) and C_Initialize it with OS locking. When the module is
 * already initialised in this process, the handle shares it and will not finalise it.
 * OUT: *m. Returns 0 or -1.
 */
int sworn_p11_load(const char *path, struct sworn_p11_module *m);

/* C_Finalize (if ours), keeping the module mapped; safe on a zeroed or partly loaded handle. */
void sworn_p11_unload(struct sworn_p11_module *m);

/*
 * Find the one slot with a token that matches the URI's token attributes (all tokens match a URI
 * without any). Returns 0, or -1: SWORN_ERR_IO when none matches (the token may come back),
 * SWORN_ERR_ARG when several do.
 */
int sworn_p11_find_slot(struct sworn_p11_module *m, const struct sworn_pkcs11_uri *uri,
                        CK_SLOT_ID *slot);

/* Find a slot that has no initialised token yet (for a new token). Returns 0 or -1. */
int sworn_p11_find_free_slot(struct sworn_p11_module *m, CK_SLOT_ID *slot);

/*
 * Read a PIN file (secretfile.h rules), drop one trailing "\n" or "\r\n", refuse an empty PIN.
 * pin holds SWORN_P11_PIN_MAX bytes; the caller wipes it. OUT: *len. Returns 0 or -1.
 */
int sworn_p11_read_pin(const char *path, uint8_t pin[SWORN_P11_PIN_MAX], size_t *len);

/* Record a PKCS#11 failure: SWORN_ERR_IO for device-level errors (rebuild), else CRYPTO. */
int sworn_p11_error(const char *what, CK_RV rv);

/*
 * Whether a token refused a PIN in this process (CKR_PIN_INCORRECT, _LOCKED, _LEN_RANGE,
 * _EXPIRED). sworn-signer exits with a status of its own then, so that the monitor does not start
 * signer after signer offering the same PIN until the token locks (docs/decisiond.md).
 */
void sworn_p11_note_pin_refused(void);
int sworn_p11_pin_was_refused(void);

#endif
