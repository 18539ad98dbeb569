/*
 * p_jwks.c -- JSON Web Key Sets for delegation tokens (p_jwks.h has the rules).
 */
#include "p_jwks.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/param_build.h>

#include "err.h"
#include "fileio.h"
#include "p_json.h"
#include "p_jwt.h"
#include "utf8.h"

#define B64_MAX 2048u /* bytes of one decoded member: a 16384-bit modulus */

/* A failure naming the file and the key. */
#define BAD(...) (sworn_err_set(SWORN_ERR_FORMAT, __VA_ARGS__), -1)

/* The string member name of o, or NULL when absent; -1 when present and not a string. */
static int member_str(struct json_object *o, const char *name, const char **s, size_t *n)
{
    struct json_object *v;

    *s = NULL;
    *n = 0;
    if (!json_object_object_get_ex(o, name, &v))
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return -1;
    *s = json_object_get_string(v);
    *n = (size_t)json_object_get_string_len(v);
    return 0;
}

/* Decode the base64url member name into out (B64_MAX). Returns the length, or -1. */
static long member_b64(struct json_object *o, const char *name, uint8_t *out)
{
    const char *s;
    size_t n, len = 0;

    if (member_str(o, name, &s, &n) != 0 || s == NULL || n == 0 || n > B64_MAX / 3 * 4 ||
        sworn_jwt_b64url_decode((const uint8_t *)s, n, out, B64_MAX, &len) != 0)
        return -1;
    return (long)len;
}

static EVP_PKEY *from_params(const char *type, OSSL_PARAM_BLD *bld)
{
    OSSL_PARAM *params = bld != NULL ? OSSL_PARAM_BLD_to_param(bld) : NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    EVP_PKEY *key = NULL;

    if (params != NULL && ctx != NULL && EVP_PKEY_fromdata_init(ctx) == 1 &&
        EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1)
        key = NULL;
    OSSL_PARAM_free(params);
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/* Is key's public part sound (an EC point on the curve, ...)? */
static int public_ok(EVP_PKEY *key)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    int ok = ctx != NULL && EVP_PKEY_public_check(ctx) == 1;

    EVP_PKEY_CTX_free(ctx);
    return ok;
}

static EVP_PKEY *ec_key(struct json_object *o)
{
    uint8_t x[B64_MAX], y[B64_MAX], point[65];
    const char *crv;
    size_t crv_n;
    OSSL_PARAM_BLD *bld;
    EVP_PKEY *key = NULL;

    if (member_str(o, "crv", &crv, &crv_n) != 0 || crv == NULL || strcmp(crv, "P-256") != 0 ||
        member_b64(o, "x", x) != 32 || member_b64(o, "y", y) != 32)
        return NULL;
    point[0] = 0x04;
    memcpy(point + 1, x, 32);
    memcpy(point + 33, y, 32);
    bld = OSSL_PARAM_BLD_new();
    if (bld != NULL &&
        OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0) == 1 &&
        OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point)) == 1)
        key = from_params("EC", bld);
    OSSL_PARAM_BLD_free(bld);
    return key;
}

static EVP_PKEY *rsa_key(struct json_object *o)
{
    uint8_t n[B64_MAX], e[B64_MAX];
    long nl = member_b64(o, "n", n), el = member_b64(o, "e", e);
    BIGNUM *bn = NULL, *be = NULL;
    OSSL_PARAM_BLD *bld;
    EVP_PKEY *key = NULL;

    /* No leading zero bytes (one text, one key), the size bounds of p_jwt.h, an odd e >= 3. */
    if (nl < (long)(SWORN_JWT_RSA_MIN_BITS / 8) || nl > (long)(SWORN_JWT_RSA_MAX_BITS / 8) ||
        n[0] == 0 || el < 1 || el > 8 || e[0] == 0 || (e[el - 1] & 1) == 0 || (el == 1 && e[0] < 3))
        return NULL;
    bn = BN_bin2bn(n, (int)nl, NULL);
    be = BN_bin2bn(e, (int)el, NULL);
    bld = OSSL_PARAM_BLD_new();
    if (bn != NULL && be != NULL && bld != NULL &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) == 1 &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) == 1)
        key = from_params("RSA", bld);
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn);
    BN_free(be);
    return key;
}

static EVP_PKEY *okp_key(struct json_object *o)
{
    uint8_t x[B64_MAX];
    const char *crv;
    size_t crv_n;

    if (member_str(o, "crv", &crv, &crv_n) != 0 || crv == NULL || strcmp(crv, "Ed25519") != 0 ||
        member_b64(o, "x", x) != 32)
        return NULL;
    return EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x, 32);
}

/* Read JWK o (index i of the file name) into k. 0 or -1 (sworn_err). */
static int read_jwk(const char *name, size_t i, struct json_object *o, struct sworn_jwk *k)
{
    static const char *const private_members[] = {"d",  "p",   "q", "dp", "dq",
                                                  "qi", "oth", "k", NULL};
    const char *kty, *s;
    size_t n;
    struct json_object *ops;

    if (!json_object_is_type(o, json_type_object))
        return BAD("jwks %s: keys[%zu] is not a JSON object", name, i);
    for (size_t m = 0; private_members[m] != NULL; m++)
        if (json_object_object_get_ex(o, private_members[m], NULL))
            return BAD("jwks %s: keys[%zu] holds a private or secret key member (\"%s\"): a JWKS "
                       "for verification holds public keys only",
                       name, i, private_members[m]);
    if (member_str(o, "kty", &kty, &n) != 0 || kty == NULL)
        return BAD("jwks %s: keys[%zu] has no kty string", name, i);
    if (strcmp(kty, "EC") == 0)
        k->key = ec_key(o);
    else if (strcmp(kty, "RSA") == 0)
        k->key = rsa_key(o);
    else if (strcmp(kty, "OKP") == 0)
        k->key = okp_key(o);
    else
        return BAD("jwks %s: keys[%zu]: kty must be EC, RSA or OKP", name, i);
    ERR_clear_error();
    if (k->key == NULL || !public_ok(k->key)) {
        ERR_clear_error();
        return BAD("jwks %s: keys[%zu] is not an EC P-256 (crv, x, y of 32 bytes, a point on the "
                   "curve), RSA 2048..16384-bit (n, e) or Ed25519 (crv, x) public key",
                   name, i);
    }
    if (member_str(o, "kid", &s, &n) != 0 || (s != NULL && (n == 0 || n > SWORN_JWKS_KID_MAX)))
        return BAD("jwks %s: keys[%zu]: kid must be a string of 1..256 bytes", name, i);
    if (s != NULL) {
        if (sworn_utf8_check(s, n, 0, "kid") != 0)
            return BAD("jwks %s: keys[%zu]: kid must be UTF-8 without control characters", name, i);
        memcpy(k->kid, s, n);
        k->kid[n] = '\0';
        k->has_kid = 1;
    }
    if (member_str(o, "alg", &s, &n) != 0)
        return BAD("jwks %s: keys[%zu]: alg must be a string", name, i);
    if (s != NULL) {
        if (n >= sizeof(k->alg) || memchr(s, '\0', n) != NULL || !sworn_jwt_alg_fits(k->key, s))
            return BAD("jwks %s: keys[%zu]: alg does not fit the key (ES256 for EC P-256, RS256 "
                       "for RSA, EdDSA or Ed25519 for Ed25519)",
                       name, i);
        memcpy(k->alg, s, n + 1);
    }
    k->verifies = 1;
    if (member_str(o, "use", &s, &n) != 0)
        return BAD("jwks %s: keys[%zu]: use must be a string", name, i);
    if (s != NULL && strcmp(s, "sig") != 0)
        k->verifies = 0;
    if (json_object_object_get_ex(o, "key_ops", &ops)) {
        int verify = 0;

        if (!json_object_is_type(ops, json_type_array))
            return BAD("jwks %s: keys[%zu]: key_ops must be an array of strings", name, i);
        for (size_t m = 0; m < json_object_array_length(ops); m++) {
            struct json_object *op = json_object_array_get_idx(ops, m);

            if (!json_object_is_type(op, json_type_string))
                return BAD("jwks %s: keys[%zu]: key_ops must be an array of strings", name, i);
            if (strcmp(json_object_get_string(op), "verify") == 0)
                verify = 1;
        }
        if (!verify)
            k->verifies = 0;
    }
    return 0;
}

struct sworn_jwks *sworn_jwks_parse(const char *name, const uint8_t *text, size_t len)
{
    struct json_object *root = NULL, *keys;
    struct sworn_jwks *s = NULL;
    const char *why = NULL;
    int r;

    if (len > SWORN_JWKS_FILE_MAX) {
        sworn_err_set(SWORN_ERR_RANGE, "jwks %s: more than %u bytes", name, SWORN_JWKS_FILE_MAX);
        return NULL;
    }
    r = sworn_pjson_parse(text, len, &root, &why);
    if (r != 0) {
        if (r > 0)
            sworn_err_set(SWORN_ERR_FORMAT, "jwks %s: %s", name, why);
        return NULL;
    }
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "keys", &keys) ||
        !json_object_is_type(keys, json_type_array) || json_object_array_length(keys) < 1 ||
        json_object_array_length(keys) > SWORN_JWKS_KEYS_MAX) {
        sworn_err_set(SWORN_ERR_FORMAT,
                      "jwks %s: not a JSON object with \"keys\", an array of 1..%u keys", name,
                      SWORN_JWKS_KEYS_MAX);
        goto fail;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "jwks: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < json_object_array_length(keys); i++) {
        struct sworn_jwk *k = &s->keys[i];

        s->n = i + 1;
        if (read_jwk(name, i, json_object_array_get_idx(keys, i), k) != 0)
            goto fail;
        for (size_t j = 0; j < i; j++)
            if (s->keys[j].has_kid == k->has_kid && strcmp(s->keys[j].kid, k->kid) == 0) {
                sworn_err_set(SWORN_ERR_FORMAT,
                              k->has_kid ? "jwks %s: keys[%zu] has the kid of keys[%zu]"
                                         : "jwks %s: keys[%zu] and keys[%zu] both have no kid",
                              name, i, j);
                goto fail;
            }
    }
    json_object_put(root);
    return s;
fail:
    json_object_put(root);
    sworn_jwks_free(s);
    return NULL;
}

struct sworn_jwks *sworn_jwks_load(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    struct sworn_jwks *s;

    if (sworn_file_read(path, SWORN_JWKS_FILE_MAX, &text, &len) != 0)
        return NULL;
    s = sworn_jwks_parse(path, (const uint8_t *)text, len);
    free(text);
    return s;
}

void sworn_jwks_free(struct sworn_jwks *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n; i++)
        EVP_PKEY_free(s->keys[i].key);
    free(s);
}

const struct sworn_jwk *sworn_jwks_select(const struct sworn_jwks *s, const char *kid,
                                          size_t kid_len, int has_kid, const char *alg,
                                          const char **why)
{
    const struct sworn_jwk *k = NULL;

    if (has_kid) {
        for (size_t i = 0; i < s->n && k == NULL; i++)
            if (s->keys[i].has_kid && strlen(s->keys[i].kid) == kid_len &&
                memcmp(s->keys[i].kid, kid, kid_len) == 0)
                k = &s->keys[i];
        if (k == NULL) {
            *why = "the token's kid names no key of the JWKS";
            return NULL;
        }
    } else {
        for (size_t i = 0; i < s->n; i++)
            if (s->keys[i].verifies) {
                if (k != NULL) {
                    *why = "the token has no kid and the JWKS has more than one key";
                    return NULL;
                }
                k = &s->keys[i];
            }
        if (k == NULL) {
            *why = "the JWK the token names is not for verification (use, key_ops)";
            return NULL;
        }
    }
    if (!k->verifies) {
        *why = "the JWK the token names is not for verification (use, key_ops)";
        return NULL;
    }
    if (!sworn_jwt_alg_fits(k->key, alg) || (k->alg[0] != '\0' && strcmp(k->alg, alg) != 0)) {
        *why = "the token's alg does not match its JWK";
        return NULL;
    }
    return k;
}
