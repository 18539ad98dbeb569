/*
 * ecutil.c -- encodings that devices leave to us: DER ECDSA signatures from (r, s), and a P-256
 * SubjectPublicKeyInfo from an uncompressed point (declared in sigscheme.h).
 */
#include "sigscheme.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>

#include "err.h"

int sworn_ecdsa_rs_to_der(const uint8_t *r, size_t r_len, const uint8_t *s, size_t s_len,
                          uint8_t *out, size_t cap, size_t *len)
{
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *br = BN_bin2bn(r, (int)r_len, NULL), *bs = BN_bin2bn(s, (int)s_len, NULL);
    unsigned char *p = out;
    int n;

    if (sig == NULL || br == NULL || bs == NULL || r_len > 32 || s_len > 32) {
        BN_free(br);
        BN_free(bs);
        ECDSA_SIG_free(sig);
        return sworn_err_set(SWORN_ERR_FORMAT, "ecdsa: bad r or s");
    }
    ECDSA_SIG_set0(sig, br, bs); /* sig owns br and bs now */
    n = i2d_ECDSA_SIG(sig, NULL);
    if (n <= 0 || (size_t)n > cap) {
        ECDSA_SIG_free(sig);
        return sworn_err_set(SWORN_ERR_RANGE, "ecdsa: DER signature does not fit");
    }
    n = i2d_ECDSA_SIG(sig, &p);
    ECDSA_SIG_free(sig);
    *len = (size_t)n;
    return 0;
}

int sworn_p256_spki_from_point(const uint8_t point[65], uint8_t *out, size_t cap, size_t *len)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *key = NULL;
    unsigned char *p = out;
    int n, rc = -1;

    SWORN_ENSURE(point[0] == 0x04, SWORN_ERR_FORMAT, "p256: point is not uncompressed");
    SWORN_ENSURE(bld != NULL && ctx != NULL, SWORN_ERR_NOMEM, "p256: out of memory");
    SWORN_ENSURE(
        OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1 &&
            OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, 65) == 1 &&
            (params = OSSL_PARAM_BLD_to_param(bld)) != NULL,
        SWORN_ERR_CRYPTO, "p256: cannot build key parameters");
    /* fromdata checks that the point is on the curve. */
    SWORN_ENSURE(EVP_PKEY_fromdata_init(ctx) == 1 &&
                     EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) == 1,
                 SWORN_ERR_FORMAT, "p256: the point is not a valid P-256 public key");
    n = i2d_PUBKEY(key, NULL);
    SWORN_ENSURE(n > 0 && (size_t)n <= cap, SWORN_ERR_RANGE, "p256: SPKI does not fit");
    n = i2d_PUBKEY(key, &p);
    *len = (size_t)n;
    rc = 0;
fail:
    EVP_PKEY_free(key);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    return rc;
}
