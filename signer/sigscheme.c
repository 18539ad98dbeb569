/*
 * sigscheme.c -- purpose TBS bytes and verification with a public key (contract in sigscheme.h).
 */
#include "sigscheme.h"

#include <string.h>

#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "checkpoint.h"
#include "encoding.h"
#include "err.h"
#include "sig_base.h"

#define RECEIPT_PREFIX "\xffsworn/v1 receipt"
#define KEY_EVENT_PREFIX "\xffsworn/v1 key-event"
#define BATCH_PREFIX "\xffsworn/v1 batch"
#define REPORT_PREFIX "\xffsworn/v1 conformance-report"
#define DIGEST_LEN 32

int sworn_sign_purpose_known(unsigned purpose)
{
    switch (purpose) {
    case SWORN_PURPOSE_CHECKPOINT:
    case SWORN_PURPOSE_RECEIPT:
    case SWORN_PURPOSE_KEY_EVENT:
    case SWORN_PURPOSE_HTTP_MESSAGE:
    case SWORN_PURPOSE_BATCH:
    case SWORN_PURPOSE_COSIGNATURE:
    case SWORN_PURPOSE_REPORT:
        return 1;
    default:
        return 0;
    }
}

/*
 * Purpose 6's form: the header line, a "time <canonical decimal>" line, and a checkpoint body of
 * at most SWORN_SIGNER_CHECKPOINT_MAX bytes.
 */
static int cosignature_check(const uint8_t *msg, size_t len)
{
    const char *p = (const char *)msg;
    size_t hlen = strlen(SWORN_COSIGNATURE_HEADER), at, end;
    struct sworn_checkpoint cp;
    uint64_t t;

    if (len > SWORN_COSIGNATURE_MSG_MAX || len < hlen + 7 ||
        memcmp(p, SWORN_COSIGNATURE_HEADER, hlen) != 0 || memcmp(p + hlen, "time ", 5) != 0)
        return sworn_err_set(
            SWORN_ERR_FORMAT,
            "signer: a cosignature message starts with \"cosignature/v1\\ntime \"");
    at = hlen + 5;
    for (end = at; end < len && p[end] != '\n'; end++)
        ;
    if (end == len || sworn_parse_u64(p + at, end - at, &t) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "signer: a cosignature's time is not a decimal");
    end++;
    if (len - end > SWORN_SIGNER_CHECKPOINT_MAX)
        return sworn_err_set(SWORN_ERR_FORMAT, "signer: checkpoint longer than %d bytes",
                             SWORN_SIGNER_CHECKPOINT_MAX);
    if (sworn_checkpoint_parse(p + end, len - end, &cp) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "signer: a cosignature covers no checkpoint body: %s",
                             sworn_err_msg());
    return 0;
}

int sworn_signer_tbs(enum sworn_sign_purpose purpose, const uint8_t *msg, size_t len, uint8_t *out,
                     size_t *out_len)
{
    const char *prefix;
    size_t prefix_len;

    switch (purpose) {
    case SWORN_PURPOSE_CHECKPOINT: {
        struct sworn_checkpoint cp;

        if (len > SWORN_SIGNER_CHECKPOINT_MAX)
            return sworn_err_set(SWORN_ERR_FORMAT, "signer: checkpoint longer than %d bytes",
                                 SWORN_SIGNER_CHECKPOINT_MAX);
        if (sworn_checkpoint_parse((const char *)msg, len, &cp) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "signer: not a checkpoint body: %s",
                                 sworn_err_msg());
        memcpy(out, msg, len);
        *out_len = len;
        return 0;
    }
    case SWORN_PURPOSE_COSIGNATURE:
        if (cosignature_check(msg, len) < 0)
            return -1;
        memcpy(out, msg, len);
        *out_len = len;
        return 0;
    case SWORN_PURPOSE_HTTP_MESSAGE: {
        const char *why = NULL;

        if (sworn_sigbase_check_shape(msg, len, &why) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "signer: not an http-message base: %s", why);
        memcpy(out, msg, len);
        *out_len = len;
        return 0;
    }
    case SWORN_PURPOSE_BATCH: {
        uint32_t n;

        if (len != SWORN_BATCH_MSG_LEN)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "signer: a batch root is a u32 group size and a 32-byte root "
                                 "(36 bytes), not %zu bytes",
                                 len);
        n = (uint32_t)msg[0] << 24 | (uint32_t)msg[1] << 16 | (uint32_t)msg[2] << 8 | msg[3];
        if (n < 1 || n > SWORN_BATCH_ITEMS_MAX)
            return sworn_err_set(SWORN_ERR_FORMAT, "signer: a batch of %u items is not 1..%d", n,
                                 SWORN_BATCH_ITEMS_MAX);
        prefix_len = strlen(BATCH_PREFIX) + 1;
        memcpy(out, BATCH_PREFIX, prefix_len);
        memcpy(out + prefix_len, msg, len);
        *out_len = prefix_len + len;
        return 0;
    }
    case SWORN_PURPOSE_RECEIPT:
        prefix = RECEIPT_PREFIX;
        break;
    case SWORN_PURPOSE_KEY_EVENT:
        prefix = KEY_EVENT_PREFIX;
        break;
    case SWORN_PURPOSE_REPORT:
        prefix = REPORT_PREFIX;
        break;
    default:
        return sworn_err_set(SWORN_ERR_ARG, "signer: unknown purpose %d", (int)purpose);
    }
    if (len != DIGEST_LEN)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "signer: this purpose signs a 32-byte digest, not %zu bytes", len);
    /* The prefix's own NUL terminator is part of the TBS: it ends the label unambiguously. */
    prefix_len = strlen(prefix) + 1;
    memcpy(out, prefix, prefix_len);
    memcpy(out + prefix_len, msg, DIGEST_LEN);
    *out_len = prefix_len + DIGEST_LEN;
    return 0;
}

int sworn_signature_verify(const uint8_t *spki, size_t spki_len, enum sworn_sign_purpose purpose,
                           const uint8_t *msg, size_t len, const uint8_t *sig, size_t sig_len)
{
    uint8_t tbs[SWORN_SIGNER_TBS_MAX];
    size_t tbs_len;
    const unsigned char *p = spki;
    EVP_PKEY *key = NULL;
    EVP_MD_CTX *md = NULL;
    EVP_PKEY_CTX *pctx = NULL;
    int id, ok = 0;

    SWORN_GUARD(sworn_signer_tbs(purpose, msg, len, tbs, &tbs_len));
    key = d2i_PUBKEY(NULL, &p, (long)spki_len);
    SWORN_ENSURE(key != NULL && p == spki + spki_len, SWORN_ERR_FORMAT,
                 "signature: the public key is not a DER SubjectPublicKeyInfo");
    md = EVP_MD_CTX_new();
    SWORN_ENSURE(md != NULL, SWORN_ERR_NOMEM, "signature: out of memory");
    id = EVP_PKEY_get_base_id(key);
    SWORN_ENSURE(purpose != SWORN_PURPOSE_COSIGNATURE || id == EVP_PKEY_ED25519, SWORN_ERR_FORMAT,
                 "signature: a cosignature is made with an Ed25519 key only");
    if (id == EVP_PKEY_ED25519) {
        SWORN_ENSURE(EVP_DigestVerifyInit(md, NULL, NULL, NULL, key) == 1, SWORN_ERR_CRYPTO,
                     "signature: Ed25519 init failed");
    } else if (id == EVP_PKEY_EC || id == EVP_PKEY_RSA) {
        SWORN_ENSURE(EVP_DigestVerifyInit(md, &pctx, EVP_sha256(), NULL, key) == 1,
                     SWORN_ERR_CRYPTO, "signature: verify init failed");
        if (id == EVP_PKEY_RSA)
            SWORN_ENSURE(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
                             EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, DIGEST_LEN) == 1 &&
                             EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) == 1,
                         SWORN_ERR_CRYPTO, "signature: RSA-PSS parameters refused");
    } else {
        sworn_err_set(SWORN_ERR_FORMAT, "signature: unsupported key type");
        goto fail;
    }
    ok = EVP_DigestVerify(md, sig, sig_len, tbs, tbs_len) == 1;
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    if (!ok)
        return sworn_err_set(SWORN_ERR_VERIFY, "signature: does not verify");
    return 0;
fail:
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    return -1;
}
