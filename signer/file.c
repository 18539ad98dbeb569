/*
 * file.c -- the development-only signer backend: a PEM private key file (EC P-256, Ed25519 or
 * RSA). Its keys live in this process's memory, so the signer marks them software-held, and
 * verifiers and conformance treat their signatures as such. Never for production records.
 */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "err.h"
#include "secretfile.h"
#include "wipe.h"

#define PEM_MAX 16384

struct file_key {
    EVP_PKEY *key;
    enum sworn_sig_alg alg;
};

/* Refuse to prompt for a passphrase: an encrypted PEM would need one from somewhere. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

static int file_open(const struct sworn_signer_config *cfg, void **ctx, uint8_t *spki,
                     size_t *spki_len, enum sworn_sig_alg *alg)
{
    const char *path = cfg->uri + strlen("file:");
    uint8_t *pem = malloc(PEM_MAX);
    struct file_key *fk = calloc(1, sizeof(*fk));
    BIO *bio = NULL;
    unsigned char *p = spki;
    size_t pem_len = 0;
    int n;

    SWORN_ENSURE(pem != NULL && fk != NULL, SWORN_ERR_NOMEM, "file signer: out of memory");
    SWORN_ENSURE(path[0] == '/', SWORN_ERR_ARG, "file signer: the key path must be absolute");
    SWORN_GUARD(sworn_secretfile_read(path, "key file", pem, PEM_MAX, &pem_len));
    bio = BIO_new_mem_buf(pem, (int)pem_len);
    SWORN_ENSURE(bio != NULL, SWORN_ERR_NOMEM, "file signer: out of memory");
    fk->key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    SWORN_ENSURE(fk->key != NULL, SWORN_ERR_FORMAT, "file signer: %s is not an unencrypted PEM key",
                 path);
    switch (EVP_PKEY_get_base_id(fk->key)) {
    case EVP_PKEY_EC: {
        char group[32] = "";

        SWORN_ENSURE(EVP_PKEY_get_group_name(fk->key, group, sizeof(group), NULL) == 1 &&
                         (strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0),
                     SWORN_ERR_FORMAT, "file signer: EC keys must be on P-256");
        fk->alg = SWORN_SIG_ECDSA_P256_SHA256;
        break;
    }
    case EVP_PKEY_ED25519:
        fk->alg = SWORN_SIG_ED25519;
        break;
    case EVP_PKEY_RSA:
        SWORN_ENSURE(EVP_PKEY_get_bits(fk->key) >= 2048, SWORN_ERR_FORMAT,
                     "file signer: RSA keys must have at least 2048 bits");
        fk->alg = SWORN_SIG_RSA_PSS_SHA256;
        break;
    default:
        sworn_err_set(SWORN_ERR_FORMAT, "file signer: unsupported key type");
        goto fail;
    }
    n = i2d_PUBKEY(fk->key, NULL);
    SWORN_ENSURE(n > 0 && n <= SWORN_SIGNER_SPKI_MAX, SWORN_ERR_RANGE,
                 "file signer: public key too large");
    n = i2d_PUBKEY(fk->key, &p);
    *spki_len = (size_t)n;
    *alg = fk->alg;
    *ctx = fk;
    BIO_free(bio);
    sworn_memzero(pem, PEM_MAX);
    free(pem);
    return 0;
fail:
    BIO_free(bio);
    if (pem != NULL)
        sworn_memzero(pem, PEM_MAX);
    free(pem);
    if (fk != NULL)
        EVP_PKEY_free(fk->key);
    free(fk);
    return -1;
}

static int file_sign(void *ctx, const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
                     size_t *sig_len)
{
    struct file_key *fk = ctx;
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new(fk->key, NULL);
    EVP_MD_CTX *md = NULL;
    size_t n = cap;
    int rc = -1;

    SWORN_ENSURE(pctx != NULL, SWORN_ERR_NOMEM, "file signer: out of memory");
    if (fk->alg == SWORN_SIG_ED25519) {
        md = EVP_MD_CTX_new();
        SWORN_ENSURE(md != NULL && EVP_DigestSignInit(md, NULL, NULL, NULL, fk->key) == 1 &&
                         EVP_DigestSign(md, sig, &n, data, len) == 1,
                     SWORN_ERR_CRYPTO, "file signer: Ed25519 signing failed");
    } else {
        /* data is the SHA-256 of the TBS: sign it as a digest. */
        SWORN_ENSURE(EVP_PKEY_sign_init(pctx) == 1 &&
                         EVP_PKEY_CTX_set_signature_md(pctx, EVP_sha256()) == 1,
                     SWORN_ERR_CRYPTO, "file signer: sign init failed");
        if (fk->alg == SWORN_SIG_RSA_PSS_SHA256)
            SWORN_ENSURE(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
                             EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 32) == 1 &&
                             EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) == 1,
                         SWORN_ERR_CRYPTO, "file signer: RSA-PSS parameters refused");
        SWORN_ENSURE(EVP_PKEY_sign(pctx, sig, &n, data, len) == 1, SWORN_ERR_CRYPTO,
                     "file signer: signing failed");
    }
    *sig_len = n;
    rc = 0;
fail:
    EVP_MD_CTX_free(md);
    EVP_PKEY_CTX_free(pctx);
    return rc;
}

/* Nothing to rebuild: the key is in memory. */
static int file_reset(void *ctx)
{
    (void)ctx;
    return 0;
}

static void file_close(void *ctx)
{
    struct file_key *fk = ctx;

    if (fk == NULL)
        return;
    EVP_PKEY_free(fk->key);
    free(fk);
}

const struct sworn_signer_backend sworn_signer_backend_file = {
    .scheme = "file",
    .software_held = 1,
    .open = file_open,
    .sign = file_sign,
    .reset = file_reset,
    .close = file_close,
};
