/*
 * softhsm_fixture.h -- a real SoftHSMv2 token in a temporary folder, made with the real
 * sworn-hsm binary (init-dev-token, keygen, pubkey), for tests of the PKCS#11 signer.
 *
 * The fixture points SOFTHSM2_CONF (a path, not a secret) at its own configuration, so tests
 * never touch the machine's tokens. PINs are in 0600 files in the folder.
 */
#ifndef SWORN_SOFTHSM_FIXTURE_H
#define SWORN_SOFTHSM_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "testutil.h"

#define SOFTHSM_MODULE_PATH "/usr/lib/softhsm/libsofthsm2.so"
#define SOFTHSM_TOKEN "sworn-test"

struct softhsm {
    char *dir;      /* the temporary folder */
    char *conf;     /* its softhsm2.conf */
    char *tokens;   /* its token folder */
    char *pin_file; /* the user PIN, mode 0600 */
    char *so_pin_file;
};

/* Make the folder and an initialised token. Aborts the test on failure. */
struct softhsm *softhsm_start(void);

/* Remove everything. */
void softhsm_stop(struct softhsm *h);

/*
 * Generate a key with `sworn-hsm keygen` (purpose, alg "p256" or "ed25519", date) and return its
 * URI (free it); its DER SPKI goes into spki (SWORN_SIGNER_SPKI_MAX bytes). Aborts on failure.
 */
char *softhsm_keygen(struct softhsm *h, const char *purpose, const char *alg, const char *date,
                     uint8_t *spki, size_t *spki_len);

/* Run a shell command (with SOFTHSM2_CONF set); returns its exit status. Output to out_file. */
SWORN_TEST_MUST_CHECK
int softhsm_sh(struct softhsm *h, const char *cmd, const char *out_file);

#endif
