/*
 * pkcs11.c -- the PKCS#11 signer backend (contract in backend.h and signer.h).
 *
 * It speaks PKCS#11 directly to the module (dlopen + C_GetFunctionList), not through libp11,
 * because on this platform libp11 0.4.12 (a) fails to enumerate every key of a token that holds
 * an Ed25519 key, (b) can wait forever inside C_OpenSession, (c) does not expose CKA_SENSITIVE,
 * CKA_EXTRACTABLE or CKA_NEVER_EXTRACTABLE, which we must check, and (d) keeps a session pool
 * that must not cross fork. Speaking PKCS#11 directly also gives one code path for ECDSA P-256
 * (CKM_ECDSA over our SHA-256: SoftHSM has no CKM_ECDSA_SHA256), Ed25519 (CKM_EDDSA) and, where
 * the token offers CKM_RSA_PKCS_PSS, RSA-PSS (SHA-256, MGF1-SHA-256, 32-byte salt).
 *
 * The key must be: exactly one private key object matching the URI, with CKA_SIGN, CKA_SENSITIVE,
 * CKA_ALWAYS_SENSITIVE and CKA_NEVER_EXTRACTABLE true and CKA_EXTRACTABLE false (a key that was
 * ever extractable may have been copied), and exactly one public key object with the same CKA_ID,
 * from which the SPKI is built.
 *
 * Every call into the module runs on a watchdog thread (watchdog.h) with the configured deadline.
 * A device-level failure (session or handle invalid, device removed or in error, token absent,
 * the module not initialised, a missed deadline) gives SWORN_ERR_IO; reset() then closes the
 * session, finalises the module and builds everything again. A wrong PIN is never retried with
 * the same PIN: the token counts failures, and a loop would lock it.
 */
#define _GNU_SOURCE
#include "backend.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <p11-kit/pkcs11.h>

#include "err.h"
#include "p11module.h"
#include "pkcs11uri.h"
#include "roca.h"
#include "secretfile.h"
#include "watchdog.h"
#include "wipe.h"

#define EC_POINT_MAX 80
#define RSA_MODULUS_MAX 512 /* 4096 bits */
/* DER of the P-256 OID, as CKA_EC_PARAMS holds it: OBJECT IDENTIFIER 1.2.840.10045.3.1.7. */
static const uint8_t p256_params[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
/* CKA_EC_PARAMS of Ed25519: the OID 1.3.101.112 or the PrintableString "edwards25519". */
static const uint8_t ed25519_oid[] = {0x06, 0x03, 0x2b, 0x65, 0x70};
static const uint8_t ed25519_name[] = {0x13, 0x0c, 'e', 'd', 'w', 'a', 'r',
                                       'd',  's',  '2', '5', '5', '1', '9'};

struct p11 {
    struct sworn_pkcs11_uri uri;
    char module_path[PATH_MAX];
    char pin_file[PATH_MAX];
    unsigned timeout_ms;      /* one device call */
    unsigned open_timeout_ms; /* build and rebuild_call: many device calls */
    struct sworn_watchdog *wd;

    struct sworn_p11_module mod;
    CK_FUNCTION_LIST_PTR f; /* mod.f, while the module is loaded; NULL otherwise */
    CK_SLOT_ID slot;
    CK_SESSION_HANDLE session;
    int have_session;
    CK_OBJECT_HANDLE key;
    CK_KEY_TYPE key_type;

    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len;
    enum sworn_sig_alg alg;

    /*
     * The one call in flight: its input and output live here, not on the caller's stack, because a
     * call abandoned by the watchdog may return long after its caller has, and must find them.
     */
    uint8_t call_data[SWORN_SIGNER_TBS_MAX];
    size_t call_len;
    uint8_t call_sig[SWORN_SIGNER_SIG_MAX];
    size_t call_sig_len;

    /* SHA-256 of a PIN the token refused: never offered again until the PIN file changes. */
    uint8_t refused_pin[SHA256_DIGEST_LENGTH]; /* SHA-256 of the PIN the token refused */
    int have_refused_pin;
};

/* Read the PIN file and log in, never offering a PIN the token refused before. */
static int login(struct p11 *p)
{
    uint8_t pin[SWORN_P11_PIN_MAX], digest[SHA256_DIGEST_LENGTH];
    size_t len = 0;
    CK_RV rv;
    int rc = -1;

    SWORN_GUARD(sworn_p11_read_pin(p->pin_file, pin, &len));
    SHA256(pin, len, digest);
    SWORN_ENSURE(
        !p->have_refused_pin || memcmp(digest, p->refused_pin, sizeof(digest)) != 0, SWORN_ERR_ARG,
        "pkcs11: the token refused this PIN before; not offering it again (fix %s)", p->pin_file);
    rv = p->f->C_Login(p->session, CKU_USER, pin, (CK_ULONG)len);
    if (rv == CKR_PIN_INCORRECT || rv == CKR_PIN_LOCKED || rv == CKR_PIN_LEN_RANGE ||
        rv == CKR_PIN_EXPIRED) {
        memcpy(p->refused_pin, digest, sizeof(digest));
        p->have_refused_pin = 1;
        sworn_p11_note_pin_refused();
        sworn_err_set(SWORN_ERR_ARG,
                      "pkcs11: the token refused the PIN in %s (CKR 0x%lx); it will not be retried",
                      p->pin_file, (unsigned long)rv);
        goto fail;
    }
    if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
        sworn_p11_error("C_Login", rv);
        goto fail;
    }
    p->have_refused_pin = 0;
    rc = 0;
fail:
    sworn_memzero(pin, sizeof(pin));
    sworn_memzero(digest, sizeof(digest));
    return rc;
}

/* Find objects of a class matching the URI's label and id; at most max. OUT: *count. */
static int find_objects(struct p11 *p, CK_OBJECT_CLASS cls, const uint8_t *id, size_t id_len,
                        CK_OBJECT_HANDLE *out, CK_ULONG max, CK_ULONG *count)
{
    CK_ATTRIBUTE tmpl[3];
    CK_ULONG n = 0;
    CK_RV rv;

    tmpl[n++] = (CK_ATTRIBUTE){CKA_CLASS, &cls, sizeof(cls)};
    if (id != NULL)
        tmpl[n++] = (CK_ATTRIBUTE){CKA_ID, (void *)id, id_len};
    if (cls == CKO_PRIVATE_KEY && p->uri.object[0] != '\0')
        tmpl[n++] = (CK_ATTRIBUTE){CKA_LABEL, p->uri.object, strlen(p->uri.object)};
    rv = p->f->C_FindObjectsInit(p->session, tmpl, n);
    if (rv != CKR_OK)
        return sworn_p11_error("C_FindObjectsInit", rv);
    rv = p->f->C_FindObjects(p->session, out, max, count);
    (void)p->f->C_FindObjectsFinal(p->session);
    if (rv != CKR_OK)
        return sworn_p11_error("C_FindObjects", rv);
    return 0;
}

static int get_bool(struct p11 *p, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_TYPE t, CK_BBOOL *v)
{
    CK_ATTRIBUTE a = {t, v, sizeof(*v)};
    CK_RV rv = p->f->C_GetAttributeValue(p->session, o, &a, 1);

    if (rv != CKR_OK)
        return sworn_p11_error("C_GetAttributeValue", rv);
    return 0;
}

/* Unwrap CKA_EC_POINT, a DER OCTET STRING (some modules give the raw point). */
static int unwrap_point(const uint8_t *der, size_t len, const uint8_t **point, size_t *point_len)
{
    if (len >= 2 && der[0] == 0x04 && der[1] == len - 2 && (len - 2 == 65 || len - 2 == 32)) {
        *point = der + 2;
        *point_len = len - 2;
        return 0;
    }
    if (len == 65 && der[0] == 0x04) {
        *point = der;
        *point_len = len;
        return 0;
    }
    return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11: CKA_EC_POINT is not an encoded point");
}

/* Build the SPKI of an RSA public key object from its modulus and public exponent. */
static int read_rsa_public_key(struct p11 *p, CK_OBJECT_HANDLE pub)
{
    uint8_t n[RSA_MODULUS_MAX], e[16];
    CK_ATTRIBUTE a[2] = {{CKA_MODULUS, n, sizeof(n)}, {CKA_PUBLIC_EXPONENT, e, sizeof(e)}};
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *key = NULL;
    BIGNUM *bn_n = NULL, *bn_e = NULL;
    unsigned char *o = p->spki;
    int len, rc = -1;
    CK_RV rv = p->f->C_GetAttributeValue(p->session, pub, a, 2);

    if (rv != CKR_OK)
        return sworn_p11_error("C_GetAttributeValue(MODULUS, PUBLIC_EXPONENT)", rv);
    SWORN_ENSURE(a[0].ulValueLen * 8 >= 2048, SWORN_ERR_ARG,
                 "pkcs11: RSA keys must have at least 2048 bits");
    bn_n = BN_bin2bn(n, (int)a[0].ulValueLen, NULL);
    bn_e = BN_bin2bn(e, (int)a[1].ulValueLen, NULL);
    bld = OSSL_PARAM_BLD_new();
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    SWORN_ENSURE(bn_n != NULL && bn_e != NULL && bld != NULL && ctx != NULL &&
                     OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1 &&
                     OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1 &&
                     (params = OSSL_PARAM_BLD_to_param(bld)) != NULL &&
                     EVP_PKEY_fromdata_init(ctx) == 1 &&
                     EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) == 1,
                 SWORN_ERR_CRYPTO, "pkcs11: cannot build the RSA public key");
    /* A ROCA modulus (CVE-2017-15361) is factorable from this public key: refuse to sign. */
    SWORN_GUARD(sworn_roca_refuse_pkey(key, "pkcs11"));
    len = i2d_PUBKEY(key, NULL);
    SWORN_ENSURE(len > 0 && (size_t)len <= sizeof(p->spki), SWORN_ERR_RANGE,
                 "pkcs11: RSA public key too large");
    len = i2d_PUBKEY(key, &o);
    p->spki_len = (size_t)len;
    p->alg = SWORN_SIG_RSA_PSS_SHA256;
    rc = 0;
fail:
    EVP_PKEY_free(key);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn_n);
    BN_free(bn_e);
    return rc;
}

/* Build the SPKI from the public key object with the private key's CKA_ID. */
static int read_public_key(struct p11 *p, const uint8_t *id, size_t id_len)
{
    CK_OBJECT_HANDLE pub[2];
    CK_ULONG count = 0;
    uint8_t params[64], ec_point[EC_POINT_MAX];
    CK_ATTRIBUTE a[2] = {{CKA_EC_PARAMS, params, sizeof(params)},
                         {CKA_EC_POINT, ec_point, sizeof(ec_point)}};
    const uint8_t *point = NULL;
    size_t point_len = 0;
    CK_RV rv;

    SWORN_GUARD(find_objects(p, CKO_PUBLIC_KEY, id, id_len, pub, 2, &count));
    SWORN_ENSURE(count == 1, SWORN_ERR_ARG,
                 "pkcs11: the key needs exactly one public key object with its CKA_ID (found %lu)",
                 (unsigned long)count);
    if (p->key_type == CKK_RSA)
        return read_rsa_public_key(p, pub[0]);
    rv = p->f->C_GetAttributeValue(p->session, pub[0], a, 2);
    if (rv != CKR_OK)
        return sworn_p11_error("C_GetAttributeValue(EC_PARAMS, EC_POINT)", rv);
    SWORN_GUARD(unwrap_point(ec_point, a[1].ulValueLen, &point, &point_len));
    if (p->key_type == CKK_EC) {
        SWORN_ENSURE(a[0].ulValueLen == sizeof(p256_params) &&
                         memcmp(params, p256_params, sizeof(p256_params)) == 0 && point_len == 65,
                     SWORN_ERR_ARG, "pkcs11: EC keys must be on P-256");
        p->alg = SWORN_SIG_ECDSA_P256_SHA256;
        return sworn_p256_spki_from_point(point, p->spki, sizeof(p->spki), &p->spki_len);
    }
    SWORN_ENSURE(point_len == 32 && ((a[0].ulValueLen == sizeof(ed25519_oid) &&
                                      memcmp(params, ed25519_oid, sizeof(ed25519_oid)) == 0) ||
                                     (a[0].ulValueLen == sizeof(ed25519_name) &&
                                      memcmp(params, ed25519_name, sizeof(ed25519_name)) == 0)),
                 SWORN_ERR_ARG, "pkcs11: Edwards keys must be Ed25519");
    {
        EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, point, 32);
        unsigned char *o = p->spki;
        int n = k ? i2d_PUBKEY(k, &o) : -1;

        EVP_PKEY_free(k);
        SWORN_ENSURE(n > 0, SWORN_ERR_CRYPTO, "pkcs11: cannot encode the Ed25519 public key");
        p->spki_len = (size_t)n;
    }
    p->alg = SWORN_SIG_ED25519;
    return 0;
fail:
    return -1;
}

/* Find the one private key the URI names and check its attributes. */
static int find_key(struct p11 *p)
{
    CK_OBJECT_HANDLE keys[2];
    CK_ULONG count = 0;
    CK_BBOOL sign = 0, sensitive = 0, always_sensitive = 0, extractable = 1, never_extractable = 0;
    uint8_t id[SWORN_PKCS11_ID_MAX];
    CK_ATTRIBUTE a[2] = {{CKA_KEY_TYPE, &p->key_type, sizeof(p->key_type)},
                         {CKA_ID, id, sizeof(id)}};
    CK_RV rv;

    SWORN_GUARD(find_objects(p, CKO_PRIVATE_KEY, p->uri.has_id ? p->uri.id : NULL, p->uri.id_len,
                             keys, 2, &count));
    SWORN_ENSURE(count > 0, SWORN_ERR_ARG, "pkcs11: no private key matches the URI");
    SWORN_ENSURE(count == 1, SWORN_ERR_ARG,
                 "pkcs11: more than one private key matches the URI; name one with id=");
    p->key = keys[0];
    SWORN_GUARD(get_bool(p, p->key, CKA_SIGN, &sign));
    SWORN_GUARD(get_bool(p, p->key, CKA_SENSITIVE, &sensitive));
    SWORN_GUARD(get_bool(p, p->key, CKA_ALWAYS_SENSITIVE, &always_sensitive));
    SWORN_GUARD(get_bool(p, p->key, CKA_EXTRACTABLE, &extractable));
    SWORN_GUARD(get_bool(p, p->key, CKA_NEVER_EXTRACTABLE, &never_extractable));
    SWORN_ENSURE(sign, SWORN_ERR_ARG, "pkcs11: the key may not sign (CKA_SIGN is false)");
    SWORN_ENSURE(sensitive && always_sensitive, SWORN_ERR_ARG,
                 "pkcs11: the key is not (always) sensitive; refusing it");
    SWORN_ENSURE(!extractable && never_extractable, SWORN_ERR_ARG,
                 "pkcs11: the key is or was extractable; refusing it");
    rv = p->f->C_GetAttributeValue(p->session, p->key, a, 2);
    if (rv != CKR_OK)
        return sworn_p11_error("C_GetAttributeValue(KEY_TYPE, ID)", rv);
    SWORN_ENSURE(p->key_type == CKK_EC || p->key_type == CKK_EC_EDWARDS || p->key_type == CKK_RSA,
                 SWORN_ERR_ARG,
                 "pkcs11: only ECDSA P-256, Ed25519 and RSA-PSS keys are supported (key type "
                 "0x%lx)",
                 (unsigned long)p->key_type);
    if (p->key_type == CKK_RSA) {
        /* RSA only where the token itself offers PSS: never fall back to PKCS#1 v1.5. */
        CK_MECHANISM_INFO info;

        rv = p->f->C_GetMechanismInfo(p->slot, CKM_RSA_PKCS_PSS, &info);
        SWORN_ENSURE(rv == CKR_OK && (info.flags & CKF_SIGN), SWORN_ERR_ARG,
                     "pkcs11: the token does not offer RSA-PSS signing for this RSA key");
    }
    return read_public_key(p, id, a[1].ulValueLen);
fail:
    return -1;
}

/* Close the session and finalise the module. Safe to call on a partly built context. */
static void teardown(struct p11 *p)
{
    if (p->f != NULL && p->have_session)
        (void)p->f->C_CloseSession(p->session);
    p->have_session = 0;
    p->f = NULL;
    sworn_p11_unload(&p->mod);
}

/* Everything from loading the module to checking the key, on the watchdog thread. */
static int build(void *arg)
{
    struct p11 *p = arg;
    CK_SLOT_ID slot = 0;
    CK_RV rv;

    SWORN_GUARD(sworn_p11_load(p->module_path, &p->mod));
    p->f = p->mod.f;
    SWORN_GUARD(sworn_p11_find_slot(&p->mod, &p->uri, &slot));
    p->slot = slot;
    rv = p->f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &p->session);
    if (rv != CKR_OK)
        return sworn_p11_error("C_OpenSession", rv);
    p->have_session = 1;
    SWORN_GUARD(login(p));
    SWORN_GUARD(find_key(p));
    return 0;
fail:
    return -1;
}

static int teardown_call(void *arg)
{
    teardown(arg);
    return 0;
}

static void p11_free(struct p11 *p)
{
    if (p == NULL)
        return;
    if (p->wd != NULL && !sworn_watchdog_busy(p->wd))
        (void)sworn_watchdog_run(p->wd, teardown_call, p, p->timeout_ms);
    /* A call still hung inside the module keeps using p: leave it allocated (leaked on purpose)
     * rather than free memory under it. */
    if (p->wd != NULL && sworn_watchdog_busy(p->wd))
        return;
    sworn_watchdog_free(p->wd);
    sworn_memzero(p, sizeof(*p));
    free(p);
}

static int p11_open(const struct sworn_signer_config *cfg, void **ctx, uint8_t *spki,
                    size_t *spki_len, enum sworn_sig_alg *alg)
{
    struct p11 *p = calloc(1, sizeof(*p));

    SWORN_ENSURE(p != NULL, SWORN_ERR_NOMEM, "pkcs11: out of memory");
    SWORN_GUARD(sworn_pkcs11_uri_parse(cfg->uri, strlen(cfg->uri), &p->uri));
    SWORN_ENSURE(cfg->module_path != NULL && cfg->module_path[0] == '/', SWORN_ERR_ARG,
                 "pkcs11: the module path must be given and absolute");
    SWORN_ENSURE(cfg->pin_file != NULL, SWORN_ERR_ARG, "pkcs11: no PIN file configured");
    SWORN_ENSURE(strlen(cfg->module_path) < sizeof(p->module_path) &&
                     strlen(cfg->pin_file) < sizeof(p->pin_file),
                 SWORN_ERR_ARG, "pkcs11: path too long");
    strcpy(p->module_path, cfg->module_path);
    strcpy(p->pin_file, cfg->pin_file);
    p->timeout_ms = sworn_signer_call_timeout(cfg);
    p->open_timeout_ms = sworn_signer_open_timeout(cfg);
    SWORN_GUARD(sworn_watchdog_new(&p->wd));
    sworn_watchdog_set_inline(p->wd, cfg->inline_device_calls);
    if (sworn_watchdog_run(p->wd, build, p, p->open_timeout_ms) < 0)
        goto fail;
    memcpy(spki, p->spki, p->spki_len);
    *spki_len = p->spki_len;
    *alg = p->alg;
    *ctx = p;
    return 0;
fail:
    p11_free(p);
    return -1;
}

static int sign_on_device(void *arg)
{
    struct p11 *p = arg;
    /* RSA-PSS with SHA-256, MGF1-SHA-256 and a 32-byte salt, over our SHA-256 digest. */
    CK_RSA_PKCS_PSS_PARAMS pss = {CKM_SHA256, CKG_MGF1_SHA256, 32};
    CK_MECHANISM mech = {p->alg == SWORN_SIG_ED25519 ? CKM_EDDSA : CKM_ECDSA, NULL, 0};
    uint8_t raw[SWORN_SIGNER_SIG_MAX];
    CK_ULONG raw_len = sizeof(raw);
    CK_RV rv;

    if (p->alg == SWORN_SIG_RSA_PSS_SHA256) {
        mech.mechanism = CKM_RSA_PKCS_PSS;
        mech.pParameter = &pss;
        mech.ulParameterLen = sizeof(pss);
    }
    rv = p->f->C_SignInit(p->session, &mech, p->key);
    if (rv != CKR_OK)
        return sworn_p11_error("C_SignInit", rv);
    rv = p->f->C_Sign(p->session, p->call_data, (CK_ULONG)p->call_len, raw, &raw_len);
    if (rv != CKR_OK)
        return sworn_p11_error("C_Sign", rv);
    if (p->alg == SWORN_SIG_RSA_PSS_SHA256) {
        memcpy(p->call_sig, raw, raw_len);
        p->call_sig_len = raw_len;
        return 0;
    }
    if (p->alg == SWORN_SIG_ED25519) {
        if (raw_len != 64)
            return sworn_err_set(SWORN_ERR_CRYPTO, "pkcs11: Ed25519 signature of %lu bytes",
                                 (unsigned long)raw_len);
        memcpy(p->call_sig, raw, 64);
        p->call_sig_len = 64;
        return 0;
    }
    /* CKM_ECDSA gives r || s, each as long as the order: 64 bytes for P-256. */
    if (raw_len != 64)
        return sworn_err_set(SWORN_ERR_CRYPTO, "pkcs11: ECDSA signature of %lu bytes",
                             (unsigned long)raw_len);
    return sworn_ecdsa_rs_to_der(raw, 32, raw + 32, 32, p->call_sig, sizeof(p->call_sig),
                                 &p->call_sig_len);
}

static int p11_sign(void *ctx, const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
                    size_t *sig_len)
{
    struct p11 *p = ctx;

    if (p->f == NULL)
        return sworn_err_set(SWORN_ERR_IO, "pkcs11: no device context (rebuild pending)");
    if (len > sizeof(p->call_data))
        return sworn_err_set(SWORN_ERR_RANGE, "pkcs11: %zu bytes to sign is too many", len);
    memcpy(p->call_data, data, len);
    p->call_len = len;
    if (sworn_watchdog_run(p->wd, sign_on_device, p, p->timeout_ms) < 0)
        return -1;
    if (p->call_sig_len > cap)
        return sworn_err_set(SWORN_ERR_RANGE, "pkcs11: signature does not fit");
    memcpy(sig, p->call_sig, p->call_sig_len);
    *sig_len = p->call_sig_len;
    return 0;
}

/* Rebuild from nothing, and check that the key found is the key found at open. */
static int rebuild_call(void *arg)
{
    struct p11 *p = arg;
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len = p->spki_len;

    memcpy(spki, p->spki, spki_len);
    teardown(p);
    if (build(p) < 0)
        return -1;
    if (p->spki_len != spki_len || memcmp(p->spki, spki, spki_len) != 0) {
        teardown(p);
        return sworn_err_set(SWORN_ERR_VERIFY, "pkcs11: after a rebuild the URI names another key");
    }
    return 0;
}

static int p11_reset(void *ctx)
{
    struct p11 *p = ctx;

    /* A call still hung inside the module would race with C_Finalize. A device that has just
     * come back returns it within moments: wait for it at most one signature's deadline, so that
     * the first request after the recovery is served; one still hung after that fails this
     * rebuild (the signer's backoff spaces the next), or the signer process is restarted by its
     * parent. */
    if (sworn_watchdog_wait_idle(p->wd, p->timeout_ms))
        return sworn_err_set(SWORN_ERR_IO,
                             "pkcs11: a call is still hung inside the module; cannot rebuild");
    return sworn_watchdog_run(p->wd, rebuild_call, p, p->open_timeout_ms);
}

static void p11_close(void *ctx)
{
    p11_free(ctx);
}

const struct sworn_signer_backend sworn_signer_backend_pkcs11 = {
    .scheme = "pkcs11",
    .software_held = 0,
    .open = p11_open,
    .sign = p11_sign,
    .reset = p11_reset,
    .close = p11_close,
};
