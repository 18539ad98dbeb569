/*
 * test_signer_pkcs11.c -- the PKCS#11 signer against a real SoftHSMv2 token made by the real
 * sworn-hsm, checked by independent tools: openssl verifies every signature, pkcs11-tool shows
 * the key attributes. Then the refusals (pin mismatch, PIN file too open, wrong PIN without
 * retry loops, extractable keys, ambiguous URIs) and the faults (sessions closed behind the
 * library's back, a module call that hangs).
 */
#define _GNU_SOURCE
/* RSA_new and friends: the plainest way to assemble the test's independent RSA SPKI. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "err.h"
#include "logstore.h"
#include "note.h"
#include "notesigner.h"
#include "p11module.h"
#include "signer.h"
#include "softhsm_fixture.h"
#include "testutil.h"

static const char checkpoint_body[] =
    "test.sworn.example/log\n42\nrKbDipCvhuX1GZ7g5BBe8sA6BbJ7ja/1nk427v383cs=\n";

struct fx {
    struct softhsm *h;
    char *p256_uri, *ed_uri;
    uint8_t p256_spki[SWORN_SIGNER_SPKI_MAX], ed_spki[SWORN_SIGNER_SPKI_MAX];
    size_t p256_spki_len, ed_spki_len;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    f->h = softhsm_start();
    /* The module reads its configuration at C_Initialize, in this process. */
    setenv("SOFTHSM2_CONF", f->h->conf, 1);
    f->p256_uri =
        softhsm_keygen(f->h, "checkpoint", "p256", "20261129", f->p256_spki, &f->p256_spki_len);
    f->ed_uri = softhsm_keygen(f->h, "receipt", "ed25519", "20261129", f->ed_spki, &f->ed_spki_len);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    softhsm_stop(f->h);
    free(f->p256_uri);
    free(f->ed_uri);
    free(f);
    return 0;
}

static struct sworn_signer_config config(struct fx *f, const char *uri, const uint8_t *spki,
                                         size_t spki_len)
{
    struct sworn_signer_config c = {
        .uri = uri,
        .module_path = SOFTHSM_MODULE_PATH,
        .pin_file = f->h->pin_file,
        .pinned_spki = spki,
        .pinned_spki_len = spki_len,
        .timeout_ms = 2000,
    };
    return c;
}

static struct sworn_signer *open_ok(struct sworn_signer_config c)
{
    struct sworn_signer *s = NULL;

    if (sworn_signer_open(&c, &s) != 0)
        fail_msg("open %s: %s", c.uri, sworn_err_msg());
    return s;
}

static void write_pem(const char *path, const uint8_t *spki, size_t len)
{
    const unsigned char *p = spki;
    EVP_PKEY *k = d2i_PUBKEY(NULL, &p, (long)len);
    FILE *out = fopen(path, "w");

    assert_non_null(k);
    assert_non_null(out);
    assert_int_equal(PEM_write_PUBKEY(out, k), 1);
    fclose(out);
    EVP_PKEY_free(k);
}

/* Sign msg for a purpose, verify with our verifier and with the openssl command line. */
static void sign_and_cross_check(struct fx *f, struct sworn_signer *s, const uint8_t *spki,
                                 size_t spki_len, enum sworn_sign_purpose purpose,
                                 const uint8_t *msg, size_t len)
{
    uint8_t sig[SWORN_SIGNER_SIG_MAX], tbs[SWORN_SIGNER_TBS_MAX];
    size_t sig_len, tbs_len;
    char *pem = sworn_test_path(f->h->dir, "check.pem"),
         *tbs_path = sworn_test_path(f->h->dir, "tbs.bin");
    char *sig_path = sworn_test_path(f->h->dir, "sig.bin"), *cmd;

    if (sworn_signer_sign(s, purpose, msg, len, sig, sizeof(sig), &sig_len) != 0)
        fail_msg("sign: %s", sworn_err_msg());
    assert_int_equal(sworn_signature_verify(spki, spki_len, purpose, msg, len, sig, sig_len), 0);
    assert_int_equal(sworn_signer_tbs(purpose, msg, len, tbs, &tbs_len), 0);
    write_pem(pem, spki, spki_len);
    sworn_test_write_file(tbs_path, tbs, tbs_len, 0600);
    sworn_test_write_file(sig_path, sig, sig_len, 0600);
    if (sworn_signer_alg(s) == SWORN_SIG_ED25519)
        assert_true(asprintf(&cmd, "openssl pkeyutl -verify -pubin -inkey check.pem -rawin -in "
                                   "tbs.bin -sigfile sig.bin") > 0);
    else
        assert_true(asprintf(&cmd, "openssl dgst -sha256 -verify check.pem -signature sig.bin "
                                   "tbs.bin") > 0);
    if (softhsm_sh(f->h, cmd, NULL) != 0)
        fail_msg("openssl does not verify the %s signature",
                 sworn_signer_alg(s) == SWORN_SIG_ED25519 ? "Ed25519" : "ECDSA");
    /* A changed byte of the TBS: openssl must reject it too, or the check proves nothing. */
    tbs[tbs_len - 1] ^= 1;
    sworn_test_write_file(tbs_path, tbs, tbs_len, 0600);
    assert_int_not_equal(softhsm_sh(f->h, cmd, NULL), 0);
    free(cmd);
    free(pem);
    free(tbs_path);
    free(sig_path);
}

/* openssl's own RSA-PSS check (SHA-256, MGF1-SHA-256, salt 32) of a receipt signature. */
static void sign_and_cross_check_rsa(struct fx *f, struct sworn_signer *s, const uint8_t *spki,
                                     size_t spki_len, const uint8_t digest[32])
{
    uint8_t sig[SWORN_SIGNER_SIG_MAX], tbs[SWORN_SIGNER_TBS_MAX];
    size_t sig_len, tbs_len;
    char *pem = sworn_test_path(f->h->dir, "rsa.pem"),
         *tbs_path = sworn_test_path(f->h->dir, "tbs.bin");
    char *sig_path = sworn_test_path(f->h->dir, "sig.bin");
    const char *cmd = "openssl dgst -sha256 -sigopt rsa_padding_mode:pss -sigopt "
                      "rsa_pss_saltlen:32 -sigopt rsa_mgf1_md:sha256 -verify rsa.pem -signature "
                      "sig.bin tbs.bin";

    assert_int_equal(
        sworn_signer_sign(s, SWORN_PURPOSE_RECEIPT, digest, 32, sig, sizeof(sig), &sig_len), 0);
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_RECEIPT, digest, 32, tbs, &tbs_len), 0);
    write_pem(pem, spki, spki_len);
    sworn_test_write_file(tbs_path, tbs, tbs_len, 0600);
    sworn_test_write_file(sig_path, sig, sig_len, 0600);
    if (softhsm_sh(f->h, cmd, NULL) != 0)
        fail_msg("openssl does not verify the RSA-PSS signature");
    tbs[0] ^= 1;
    sworn_test_write_file(tbs_path, tbs, tbs_len, 0600);
    assert_int_not_equal(softhsm_sh(f->h, cmd, NULL), 0);
    free(pem);
    free(tbs_path);
    free(sig_path);
}

static void test_sign_every_purpose_p256_and_ed25519(void **state)
{
    struct fx *f = *state;
    static uint8_t base[16384];
    uint8_t digest[32];
    size_t base_len;
    struct sworn_signer *s;

    SHA256((const uint8_t *)"a request", 9, digest);
    s = open_ok(config(f, f->p256_uri, f->p256_spki, f->p256_spki_len));
    assert_string_equal(sworn_signer_scheme(s), "pkcs11");
    assert_int_equal(sworn_signer_software_held(s), 0);
    assert_int_equal(sworn_signer_alg(s), SWORN_SIG_ECDSA_P256_SHA256);
    sign_and_cross_check(f, s, f->p256_spki, f->p256_spki_len, SWORN_PURPOSE_CHECKPOINT,
                         (const uint8_t *)checkpoint_body, strlen(checkpoint_body));
    sign_and_cross_check(f, s, f->p256_spki, f->p256_spki_len, SWORN_PURPOSE_RECEIPT, digest, 32);
    sign_and_cross_check(f, s, f->p256_spki, f->p256_spki_len, SWORN_PURPOSE_KEY_EVENT, digest, 32);
    /* purpose 4: sworn's RFC 9421 base for this key, signed as is (openssl checks it over the
     * base itself); a base under another key's id is refused */
    base_len = sworn_test_httpsig_base(f->p256_spki, f->p256_spki_len, base);
    sign_and_cross_check(f, s, f->p256_spki, f->p256_spki_len, SWORN_PURPOSE_HTTP_MESSAGE, base,
                         base_len);
    {
        uint8_t sig[SWORN_SIGNER_SIG_MAX];
        size_t sig_len;
        size_t other = sworn_test_httpsig_base(f->ed_spki, f->ed_spki_len, base);

        assert_int_equal(sworn_signer_sign(s, SWORN_PURPOSE_HTTP_MESSAGE, base, other, sig,
                                           sizeof(sig), &sig_len),
                         -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    }
    assert_int_equal(sworn_signer_health(s), 0);
    sworn_signer_close(s);

    s = open_ok(config(f, f->ed_uri, f->ed_spki, f->ed_spki_len));
    assert_int_equal(sworn_signer_alg(s), SWORN_SIG_ED25519);
    sign_and_cross_check(f, s, f->ed_spki, f->ed_spki_len, SWORN_PURPOSE_RECEIPT, digest, 32);
    base_len = sworn_test_httpsig_base(f->ed_spki, f->ed_spki_len, base);
    sign_and_cross_check(f, s, f->ed_spki, f->ed_spki_len, SWORN_PURPOSE_HTTP_MESSAGE, base,
                         base_len);
    sign_and_cross_check(f, s, f->ed_spki, f->ed_spki_len, SWORN_PURPOSE_CHECKPOINT,
                         (const uint8_t *)checkpoint_body, strlen(checkpoint_body));
    sworn_signer_close(s);
}

/* A signature made for one purpose never verifies for another. */
static void test_purposes_are_separated(void **state)
{
    struct fx *f = *state;
    struct sworn_signer *s = open_ok(config(f, f->p256_uri, f->p256_spki, f->p256_spki_len));
    uint8_t digest[32], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len;

    SHA256((const uint8_t *)checkpoint_body, strlen(checkpoint_body), digest);
    assert_int_equal(
        sworn_signer_sign(s, SWORN_PURPOSE_RECEIPT, digest, 32, sig, sizeof(sig), &sig_len), 0);
    assert_int_equal(sworn_signature_verify(f->p256_spki, f->p256_spki_len, SWORN_PURPOSE_KEY_EVENT,
                                            digest, 32, sig, sig_len),
                     -1);
    /* Nor as a checkpoint signature over a text whose hash is the digest it signed. */
    assert_int_equal(sworn_signature_verify(
                         f->p256_spki, f->p256_spki_len, SWORN_PURPOSE_CHECKPOINT,
                         (const uint8_t *)checkpoint_body, strlen(checkpoint_body), sig, sig_len),
                     -1);
    /* And a checkpoint purpose takes only checkpoint bodies. */
    assert_int_equal(
        sworn_signer_sign(s, SWORN_PURPOSE_CHECKPOINT, digest, 32, sig, sizeof(sig), &sig_len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    assert_int_equal(
        sworn_signer_sign(s, (enum sworn_sign_purpose)9, digest, 32, sig, sizeof(sig), &sig_len),
        -1);
    sworn_signer_close(s);
}

/* pkcs11-tool, which no one here wrote, sees the generated keys as sign-only and locked in. */
static void test_pkcs11_tool_sees_locked_keys(void **state)
{
    struct fx *f = *state;
    char *out = sworn_test_path(f->h->dir, "list.out"), *text;

    /* pkcs11-tool reads the PIN from a terminal: give it one, fed from the PIN file. */
    assert_int_equal(softhsm_sh(f->h,
                                "(sleep 0.3; cat user.pin) | script -qec \"pkcs11-tool --module "
                                "/usr/lib/softhsm/libsofthsm2.so --token-label sworn-test --login "
                                "--list-objects --type privkey\" /dev/null",
                                out),
                     0);
    text = sworn_test_read_file(out, NULL);
    assert_non_null(strstr(text, "sworn/checkpoint/20261129"));
    assert_non_null(strstr(text, "sworn/receipt/20261129"));
    /* Both keys: usage sign only, and sensitive, always sensitive, never extractable. */
    for (const char *p = text; (p = strstr(p, "Private Key Object")) != NULL; p++) {
        const char *usage = strstr(p, "Usage:"), *access = strstr(p, "Access:");

        assert_non_null(usage);
        assert_non_null(access);
        /* "sign" and nothing else (the terminal ends lines with \r\n). */
        assert_true(strncmp(usage, "Usage:      sign", 16) == 0 &&
                    (usage[16] == '\r' || usage[16] == '\n'));
        assert_true(
            strncmp(access, "Access:     sensitive, always sensitive, never extractable", 57) == 0);
    }
    free(text);
    free(out);
}

static void expect_open_fails(struct sworn_signer_config c, enum sworn_err_code code,
                              const char *needle)
{
    struct sworn_signer *s = NULL;

    if (sworn_signer_open(&c, &s) == 0) {
        sworn_signer_close(s);
        fail_msg("open of %s succeeded; expected a refusal containing \"%s\"", c.uri, needle);
    }
    if (sworn_err_code() != code || strstr(sworn_err_msg(), needle) == NULL)
        fail_msg("open refused with %s: %s; expected %s containing \"%s\"",
                 sworn_err_name(sworn_err_code()), sworn_err_msg(), sworn_err_name(code), needle);
}

static void test_refusals(void **state)
{
    struct fx *f = *state;
    struct sworn_signer_config c;
    char *bad_pin = sworn_test_path(f->h->dir, "bad.pin");

    /* The token's key is not the pinned key. */
    expect_open_fails(config(f, f->p256_uri, f->ed_spki, f->ed_spki_len), SWORN_ERR_VERIFY,
                      "not the pinned key");
    /* No pin at all. */
    expect_open_fails(config(f, f->p256_uri, NULL, 0), SWORN_ERR_ARG, "pinned public key");
    /* A PIN file others can read. */
    c = config(f, f->p256_uri, f->p256_spki, f->p256_spki_len);
    sworn_test_write_file(bad_pin, "4711", 4, 0644);
    c.pin_file = bad_pin;
    expect_open_fails(c, SWORN_ERR_IO, "mode 0644");
    /* A wrong PIN: refused, clearly. */
    sworn_test_write_file(bad_pin, "0000", 4, 0600);
    expect_open_fails(c, SWORN_ERR_ARG, "refused the PIN");
    /* URIs that name no key, or a key that does not exist, or ask for the PIN in the URI. */
    expect_open_fails(config(f, "pkcs11:token=sworn-test", f->p256_spki, f->p256_spki_len),
                      SWORN_ERR_FORMAT, "name the key");
    expect_open_fails(
        config(f, "pkcs11:token=sworn-test;object=nothing", f->p256_spki, f->p256_spki_len),
        SWORN_ERR_ARG, "no private key");
    expect_open_fails(config(f, "pkcs11:token=sworn-test;object=x?pin-value=4711", f->p256_spki,
                             f->p256_spki_len),
                      SWORN_ERR_FORMAT, "query attributes");
    expect_open_fails(
        config(f, "pkcs11:token=no-such-token;object=x", f->p256_spki, f->p256_spki_len),
        SWORN_ERR_IO, "no token");
    free(bad_pin);
}

/* A logged-in read-write session on the test token, for making keys the way others might. */
static void open_user_session(struct fx *f, struct sworn_p11_module *m, CK_SESSION_HANDLE *s)
{
    struct sworn_pkcs11_uri uri;
    uint8_t pin[SWORN_P11_PIN_MAX];
    size_t pin_len;
    CK_SLOT_ID slot;

    memset(&uri, 0, sizeof(uri));
    strcpy(uri.token, SOFTHSM_TOKEN);
    assert_int_equal(sworn_p11_load(SOFTHSM_MODULE_PATH, m), 0);
    assert_int_equal(sworn_p11_find_slot(m, &uri, &slot), 0);
    assert_int_equal(m->f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, s),
                     CKR_OK);
    assert_int_equal(sworn_p11_read_pin(f->h->pin_file, pin, &pin_len), 0);
    assert_int_equal(m->f->C_Login(*s, CKU_USER, pin, (CK_ULONG)pin_len), CKR_OK);
}

/* Generate a key pair on the token with chosen attributes, as a careless operator might. */
static void raw_keygen(struct fx *f, const char *label, CK_BBOOL extractable)
{
    static const uint8_t p256_oid[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
    struct sworn_p11_module m;
    CK_SESSION_HANDLE s;
    CK_OBJECT_HANDLE pub, priv;
    CK_BBOOL yes = CK_TRUE;
    CK_MECHANISM mech = {CKM_EC_KEY_PAIR_GEN, NULL, 0};
    CK_ATTRIBUTE pub_t[] = {{CKA_TOKEN, &yes, 1},
                            {CKA_VERIFY, &yes, 1},
                            {CKA_EC_PARAMS, (void *)p256_oid, sizeof(p256_oid)},
                            {CKA_LABEL, (void *)label, strlen(label)},
                            {CKA_ID, (void *)label, strlen(label)}};
    CK_ATTRIBUTE priv_t[] = {{CKA_TOKEN, &yes, 1},
                             {CKA_PRIVATE, &yes, 1},
                             {CKA_SENSITIVE, &yes, 1},
                             {CKA_EXTRACTABLE, &extractable, 1},
                             {CKA_SIGN, &yes, 1},
                             {CKA_LABEL, (void *)label, strlen(label)},
                             {CKA_ID, (void *)label, strlen(label)}};

    open_user_session(f, &m, &s);
    assert_int_equal(m.f->C_GenerateKeyPair(s, &mech, pub_t, 5, priv_t, 7, &pub, &priv), CKR_OK);
    sworn_p11_unload(&m);
}

static void test_refuses_extractable_and_ambiguous_keys(void **state)
{
    struct fx *f = *state;

    raw_keygen(f, "careless", CK_TRUE);
    expect_open_fails(
        config(f, "pkcs11:token=sworn-test;object=careless", f->p256_spki, f->p256_spki_len),
        SWORN_ERR_ARG, "extractable");
    raw_keygen(f, "twice", CK_FALSE);
    raw_keygen(f, "twice", CK_FALSE);
    expect_open_fails(
        config(f, "pkcs11:token=sworn-test;object=twice", f->p256_spki, f->p256_spki_len),
        SWORN_ERR_ARG, "more than one");
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Close every session of the token from outside the signer, as a device reset would. */
static void close_sessions_behind_its_back(void)
{
    struct sworn_p11_module m;
    struct sworn_pkcs11_uri uri;
    CK_SLOT_ID slot;

    memset(&uri, 0, sizeof(uri));
    strcpy(uri.token, SOFTHSM_TOKEN);
    assert_int_equal(sworn_p11_load(SOFTHSM_MODULE_PATH, &m), 0);
    assert_int_equal(sworn_p11_find_slot(&m, &uri, &slot), 0);
    assert_int_equal(m.f->C_CloseAllSessions(slot), CKR_OK);
    sworn_p11_unload(&m);
}

/* Like close_sessions_behind_its_back, but the token may be gone already. */
static void close_sessions_behind_its_back_ok_if_gone(void)
{
    struct sworn_p11_module m;
    struct sworn_pkcs11_uri uri;
    CK_SLOT_ID slot;

    memset(&uri, 0, sizeof(uri));
    strcpy(uri.token, SOFTHSM_TOKEN);
    assert_int_equal(sworn_p11_load(SOFTHSM_MODULE_PATH, &m), 0);
    if (sworn_p11_find_slot(&m, &uri, &slot) == 0)
        (void)m.f->C_CloseAllSessions(slot);
    sworn_p11_unload(&m);
}

static int try_sign(struct sworn_signer *s)
{
    uint8_t digest[32] = {1}, sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len;

    return sworn_signer_sign(s, SWORN_PURPOSE_RECEIPT, digest, 32, sig, sizeof(sig), &sig_len);
}

/* Sign every 50 ms, at most `tries` times, until it works; 1 when it did (the signer recovered). */
static int signs_again(struct sworn_signer *s, int tries)
{
    for (int i = 0; i < tries; i++) {
        if (try_sign(s) == 0)
            return 1;
        sleep_ms(50);
    }
    return 0;
}

static void test_sessions_closed_behind_its_back(void **state)
{
    struct fx *f = *state;
    struct sworn_signer *s = open_ok(config(f, f->p256_uri, f->p256_spki, f->p256_spki_len));

    assert_int_equal(try_sign(s), 0);
    close_sessions_behind_its_back();
    /* The next sign fails (the caller denies), then the signer rebuilds and works again. */
    assert_int_equal(try_sign(s), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    if (!signs_again(s, 50))
        fail_msg("the signer did not recover: %s", sworn_err_msg());
    assert_int_equal(sworn_signer_health(s), 0);
    sworn_signer_close(s);
}

/* A PIN that the token refuses is offered once, never again, until the PIN file changes. */
static void test_wrong_pin_is_not_retried(void **state)
{
    struct fx *f = *state;
    struct sworn_signer_config c = config(f, f->p256_uri, f->p256_spki, f->p256_spki_len);
    char *pin = sworn_test_path(f->h->dir, "changing.pin");
    struct sworn_signer *s;
    int refused = 0;

    sworn_test_write_file(pin, "4711", 4, 0600);
    c.pin_file = pin;
    s = open_ok(c);
    /* The PIN file now holds a wrong PIN, and the device needs a new login. */
    sworn_test_write_file(pin, "9999", 4, 0600);
    close_sessions_behind_its_back();
    /* Every attempt fails; once a rebuild has offered the PIN and been refused, the signer says
     * it will not offer that PIN again, however often it is asked. */
    for (int i = 0; i < 100 && !refused; i++) {
        assert_int_equal(try_sign(s), -1);
        refused = strstr(sworn_err_msg(), "not offering it again") != NULL;
        if (!refused)
            sleep_ms(50);
    }
    if (!refused)
        fail_msg("the wrong PIN was never reported as withheld: %s", sworn_err_msg());
    /* The token is not locked: the right PIN in the file brings the signer back. */
    sworn_test_write_file(pin, "4711\n", 5, 0600);
    if (!signs_again(s, 120))
        fail_msg("no recovery after the PIN was fixed: %s", sworn_err_msg());
    sworn_signer_close(s);
    free(pin);
}

/* A module call that hangs becomes an error within the deadline, and the signer recovers. */
static void test_hung_call_becomes_an_error(void **state)
{
    struct fx *f = *state;
    struct sworn_signer_config c = config(f, f->p256_uri, f->p256_spki, f->p256_spki_len);
    char *flag = sworn_test_path(f->h->dir, "hang");
    struct sworn_signer *s;
    struct timespec t0, t1;
    double waited;

    c.module_path = getenv("SWORN_HANG_MODULE");
    assert_non_null(c.module_path);
    /* One signature gets 300 ms; the opening (module load, login, key search: slower than 300 ms
     * under ASan on a loaded machine) keeps its own deadline, open_timeout_ms's default. */
    c.timeout_ms = 300;
    assert_int_equal(c.open_timeout_ms, 0);
    setenv("SWORN_HANG_FILE", flag, 1);
    s = open_ok(c);
    assert_int_equal(try_sign(s), 0);
    sworn_test_write_file(flag, "", 0, 0600);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(try_sign(s), -1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    if (waited > 2.0)
        fail_msg("the hung call took %.2f s to become an error (deadline 0.3 s)", waited);
    /* While the call is still stuck inside the module, the signer answers at once: no. */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(try_sign(s), -1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 2);
    /* The device answers again: the stuck call returns, and the signer rebuilds and signs. */
    assert_int_equal(remove(flag), 0);
    if (!signs_again(s, 100))
        fail_msg("no recovery after the device answered again: %s", sworn_err_msg());
    assert_int_equal(sworn_signer_health(s), 0);
    sworn_signer_close(s);
    unsetenv("SWORN_HANG_FILE");
    free(flag);
}

/* The log signs its checkpoints with the HSM key: a standard C2SP note, verifiable by anyone. */
static void test_log_checkpoint_signed_by_hsm(void **state)
{
    struct fx *f = *state;
    struct sworn_signer *s = open_ok(config(f, f->p256_uri, f->p256_spki, f->p256_spki_len));
    struct sworn_note_signer ns;
    struct sworn_note_signer *signers[1] = {&ns};
    struct sworn_log *log = NULL;
    char *db = sworn_test_path(f->h->dir, "log.db"), vkey[SWORN_NOTE_VKEY_MAX + 1], text[4096];
    struct sworn_note_verifier v;
    struct sworn_note *note = malloc(sizeof(*note));
    size_t len;

    assert_int_equal(sworn_signer_as_note_signer(s, "test.sworn.example/log", &ns), 0);
    assert_int_equal(ns.pub.alg, SWORN_NOTE_ALG_ECDSA_P256);
    assert_int_equal(sworn_log_create(db, "test.sworn.example/log", &log), 0);
    for (int i = 0; i < 3; i++)
        sworn_test_append(log, "decision", 8, (uint64_t)i);
    if (sworn_log_checkpoint(log, signers, 1, text, sizeof(text), &len, NULL) != 0)
        fail_msg("checkpoint: %s", sworn_err_msg());
    assert_true(sworn_note_verifier_format(&ns.pub, vkey, sizeof(vkey)) > 0);
    assert_int_equal(sworn_note_verifier_parse(vkey, strlen(vkey), &v), 0);
    assert_int_equal(sworn_note_parse(text, len, note), 0);
    assert_int_equal(sworn_note_verify(note, &v, 1, NULL, NULL, NULL), 0);
    text[strlen("test.sworn.example/log\n")] ^= 1; /* the size line */
    assert_int_equal(sworn_note_parse(text, len, note), 0);
    assert_int_equal(sworn_note_verify(note, &v, 1, NULL, NULL, NULL), -1);
    sworn_note_signer_close(&ns);
    sworn_log_close(log);
    sworn_signer_close(s);
    free(note);
    free(db);
}

/* The real sworn-log, initialised with the HSM key, signs checkpoints that verify-note accepts. */
static void test_sworn_log_with_hsm_key(void **state)
{
    struct fx *f = *state;
    char *cmd;
    const char *log = getenv("SWORN_LOG_BIN");
    const char *hsm = getenv("SWORN_HSM_BIN");

    assert_non_null(log);
    assert_true(asprintf(&cmd, "'%s' pubkey --module %s --uri '%s' --der --out cp.der", hsm,
                         SOFTHSM_MODULE_PATH, f->p256_uri) > 0);
    assert_int_equal(softhsm_sh(f->h, cmd, NULL), 0);
    free(cmd);
    assert_true(asprintf(&cmd,
                         "'%s' init --db hw.db --origin test.sworn.example/hw --key '%s' --module "
                         "%s --pin-file user.pin --pinned-spki cp.der > hw.vkey && printf "
                         "'a\\nb\\n' | '%s' append --db hw.db && '%s' checkpoint --db hw.db "
                         "> hw.cp && '%s' verify-note --vkey \"$(cat hw.vkey)\" hw.cp",
                         log, f->p256_uri, SOFTHSM_MODULE_PATH, log, log, log) > 0);
    assert_int_equal(softhsm_sh(f->h, cmd, NULL), 0);
    free(cmd);
    /* Pinned to another key (the Ed25519 one): init refuses, and no database is left behind. */
    assert_true(asprintf(&cmd, "'%s' pubkey --module %s --uri '%s' --der --out ed.der", hsm,
                         SOFTHSM_MODULE_PATH, f->ed_uri) > 0);
    assert_int_equal(softhsm_sh(f->h, cmd, NULL), 0);
    free(cmd);
    assert_true(asprintf(&cmd,
                         "'%s' init --db other.db --origin o --key '%s' --module %s --pin-file "
                         "user.pin --pinned-spki ed.der; test ! -e other.db",
                         log, f->p256_uri, SOFTHSM_MODULE_PATH) > 0);
    assert_int_equal(softhsm_sh(f->h, cmd, NULL), 0);
    free(cmd);
}

/*
 * The token's folder disappears (a storage failure, an operator's mistake) and comes back: signing
 * fails cleanly, never hangs, and works again once the folder is back.
 */
static void test_token_folder_removed_and_restored(void **state)
{
    struct fx *f = *state;
    struct sworn_signer *s = open_ok(config(f, f->p256_uri, f->p256_spki, f->p256_spki_len));
    char *moved = sworn_test_path(f->h->dir, "tokens.away");
    int failed = 0;

    assert_int_equal(try_sign(s), 0);
    assert_int_equal(rename(f->h->tokens, moved), 0);
    /* Close the sessions too, as a device reset would: the signer must rebuild, and cannot. */
    close_sessions_behind_its_back_ok_if_gone();
    for (int i = 0; i < 20 && !failed; i++) {
        failed = try_sign(s) != 0;
        if (!failed)
            sleep_ms(50);
    }
    if (!failed)
        fail_msg("signing went on with the token folder gone");
    assert_int_equal(rename(moved, f->h->tokens), 0);
    if (!signs_again(s, 200))
        fail_msg("no recovery after the token folder came back: %s", sworn_err_msg());
    sworn_signer_close(s);
    free(moved);
}

/* An RSA-3072 key on the token: signed with RSA-PSS (the token offers it), checked by openssl. */
static void test_rsa_pss_where_offered(void **state)
{
    struct fx *f = *state;
    struct sworn_p11_module m;
    uint8_t n[512], e[16], spki[SWORN_SIGNER_SPKI_MAX], digest[32] = {7};
    uint8_t sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len;
    CK_SESSION_HANDLE s;
    CK_OBJECT_HANDLE pub, priv;
    CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
    CK_ULONG bits = 3072;
    CK_MECHANISM mech = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
    CK_ATTRIBUTE pub_t[] = {{CKA_TOKEN, &yes, 1},
                            {CKA_VERIFY, &yes, 1},
                            {CKA_MODULUS_BITS, &bits, sizeof(bits)},
                            {CKA_LABEL, "rsa", 3},
                            {CKA_ID, "rsa", 3}};
    CK_ATTRIBUTE priv_t[] = {{CKA_TOKEN, &yes, 1},     {CKA_PRIVATE, &yes, 1},
                             {CKA_SENSITIVE, &yes, 1}, {CKA_EXTRACTABLE, &no, 1},
                             {CKA_SIGN, &yes, 1},      {CKA_LABEL, "rsa", 3},
                             {CKA_ID, "rsa", 3}};
    CK_ATTRIBUTE get[2] = {{CKA_MODULUS, n, sizeof(n)}, {CKA_PUBLIC_EXPONENT, e, sizeof(e)}};
    BIGNUM *bn_n, *bn_e;
    RSA *rsa = RSA_new();
    EVP_PKEY *key = EVP_PKEY_new();
    unsigned char *o = spki;
    size_t spki_len;
    struct sworn_signer *signer;

    open_user_session(f, &m, &s);
    assert_int_equal(m.f->C_GenerateKeyPair(s, &mech, pub_t, 5, priv_t, 7, &pub, &priv), CKR_OK);
    assert_int_equal(m.f->C_GetAttributeValue(s, pub, get, 2), CKR_OK);
    sworn_p11_unload(&m);
    /* The SPKI the operator pins, built here independently of the backend's own code. */
    bn_n = BN_bin2bn(n, (int)get[0].ulValueLen, NULL);
    bn_e = BN_bin2bn(e, (int)get[1].ulValueLen, NULL);
    assert_int_equal(RSA_set0_key(rsa, bn_n, bn_e, NULL), 1);
    assert_int_equal(EVP_PKEY_assign_RSA(key, rsa), 1);
    spki_len = (size_t)i2d_PUBKEY(key, &o);
    EVP_PKEY_free(key);

    signer = open_ok(config(f, "pkcs11:token=sworn-test;object=rsa", spki, spki_len));
    assert_int_equal(sworn_signer_alg(signer), SWORN_SIG_RSA_PSS_SHA256);
    assert_int_equal(
        sworn_signer_sign(signer, SWORN_PURPOSE_RECEIPT, digest, 32, sig, sizeof(sig), &sig_len),
        0);
    assert_int_equal(sig_len, 384);
    assert_int_equal(
        sworn_signature_verify(spki, spki_len, SWORN_PURPOSE_RECEIPT, digest, 32, sig, sig_len), 0);
    sign_and_cross_check_rsa(f, signer, spki, spki_len, digest);
    sworn_signer_close(signer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sign_every_purpose_p256_and_ed25519, setup, teardown),
        cmocka_unit_test_setup_teardown(test_purposes_are_separated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pkcs11_tool_sees_locked_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_extractable_and_ambiguous_keys, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sessions_closed_behind_its_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_pin_is_not_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hung_call_becomes_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_checkpoint_signed_by_hsm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sworn_log_with_hsm_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_folder_removed_and_restored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rsa_pss_where_offered, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
