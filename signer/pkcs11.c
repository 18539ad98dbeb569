/*
 * pkcs11.c -- placeholder until the pkcs11 backend lands: every open fails with a clear error.
 */
#include "backend.h"

#include "err.h"

static int not_built_open(const struct sworn_signer_config *cfg, void **ctx, uint8_t *spki,
                          size_t *spki_len, enum sworn_sig_alg *alg)
{
    (void)cfg;
    (void)ctx;
    (void)spki;
    (void)spki_len;
    (void)alg;
    return sworn_err_set(SWORN_ERR_ARG, "signer: the pkcs11 backend is not built yet");
}

static int not_built_sign(void *ctx, const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
                          size_t *sig_len)
{
    (void)ctx;
    (void)data;
    (void)len;
    (void)sig;
    (void)cap;
    (void)sig_len;
    return sworn_err_set(SWORN_ERR_ARG, "signer: the pkcs11 backend is not built yet");
}

static int not_built_reset(void *ctx)
{
    (void)ctx;
    return -1;
}

static void not_built_close(void *ctx)
{
    (void)ctx;
}

const struct sworn_signer_backend sworn_signer_backend_pkcs11 = {
    .scheme = "pkcs11",
    .software_held = 0,
    .open = not_built_open,
    .sign = not_built_sign,
    .reset = not_built_reset,
    .close = not_built_close,
};
