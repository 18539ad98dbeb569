/*
 * test_roca.c -- the ROCA fingerprint (common/roca.h) and where it is enforced.
 *
 * Evidence:
 *   1. Positive: the CRoCS detector's published positive test moduli (github.com/crocs-muni/roca,
 *      fingerprint/tests/data/mod01.txt, 512 bits, and roca/tests/data/mod03.txt, 2048 bits) are
 *      found, and refused with SWORN_ERR_VERIFY.
 *   2. Positive, made here: a 2048-bit N = p * q whose primes have the Infineon form
 *      p = k * M + (65537^a mod M), M the primorial of 701 (the paper's M for 1984..3936-bit
 *      keys), random k and a; as an EVP_PKEY (sworn_roca_refuse_pkey) and as an SPKI given to
 *      the keyring (sworn_keyring_spki_check), both refused.
 *   3. Negative: fresh OpenSSL RSA-2048 keys, a ROCA-form prime times an ordinary prime, an EC
 *      key (not RSA: nothing to test), and the detector's "fake" moduli, which pass the residue
 *      test but not the discrete-log one (test_fingerprint.py, test_fake_mods).
 *   4. The order of 65537 mod the primorial of 167 derived at run time equals the detector's
 *      constant (2454106387091158800); bad inputs are argument errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "err.h"
#include "keyring.h"
#include "roca.h"
#include "testutil.h"

/* crocs-muni/roca fingerprint/tests/data/mod01.txt (positive). */
static const char mod01[] =
    "944e13208a280c37efc31c3114485e590192adbb8e11c87cad60cdef0037ce99278330d3"
    "f471a2538fa667802ed2a3c44a8b7dea826e888d0aa341fd664f7fa7";
/* crocs-muni/roca roca/tests/data/mod03.txt (positive, 2048 bits). */
static const char mod03[] =
    "9dcd7420e420c270a68060eb8b5aa7457a9f6648f86fafed2775cc1f79ae962f1e63f1b9e51c55f9ea6fdc7332e9b0"
    "058c9ff2eb1fc89855029cf6aafe21e689feb38ac9ffb12f1ce371bb5d0e9aae64161abce74b4244bf68f1edb4411f"
    "756a097c8929c14740245ea355f8332d1aa36bb50c7dcb4505da8de02e4e53d38f8df06097da7524df0df93db48eac"
    "8cc4af2d3a16257eb2b2adca6ba464e5974fa92550d31b1babf161e7692d00b86e3dd886ecab4abfbe1a8f8cc263ff"
    "4af55cdb45f4249a5193925f5e983d762f0b6800943eb0267b08f42ed311ce1f5c86eacbc8ce4d3cb7a2fee1ef5641"
    "423a1cf4114e5ecf50034a60a412523af9e6f4aa11";
/* Two of the detector's fake moduli (decimal): positive by residues, negative by dlog. */
static const char *const fake_mods[] = {
    "7241412897396787268833273653501761420862036824201579710279608682788275400626020406179954700498"
    "3"
    "7314267775964456588898868610270450337600149480480674679479603182054537789739758675329104892279"
    "70"
    "1430911847257602901729358727522223203341000977304836008926863537198553973813163842441478602601"
    "53"
    "198611313067061116317",
    "1383459732651636146943524770044691912864591110705645162993814951886249466710654519246777046288"
    "9"
    "2476011773201612117597303315530745738015579159106259811204610647347662150159814774894784524366"
    "13"
    "8220226431598991937057442020694466365850170057813627445465881816985939192840583168136876337135"
    "35"
    "1417253708364245923133",
};

/* A BIGNUM's big-endian bytes into a fresh buffer. */
static uint8_t *bn_bytes(const BIGNUM *b, size_t *len)
{
    uint8_t *out = malloc((size_t)BN_num_bytes(b));

    assert_non_null(out);
    *len = (size_t)BN_bn2bin(b, out);
    return out;
}

static int check_hex(const char *hex)
{
    BIGNUM *b = NULL;
    uint8_t *n;
    size_t len;
    int r;

    assert_true(BN_hex2bn(&b, hex) > 0);
    n = bn_bytes(b, &len);
    r = sworn_roca_modulus(n, len);
    free(n);
    BN_free(b);
    return r;
}

static void test_published_positives(void **state)
{
    BIGNUM *b = NULL;
    uint8_t *n;
    size_t len;

    (void)state;
    assert_int_equal(check_hex(mod01), 1);
    assert_int_equal(check_hex(mod03), 1);
    assert_true(BN_hex2bn(&b, mod03) > 0);
    n = bn_bytes(b, &len);
    assert_int_equal(len, 256);
    sworn_err_clear();
    assert_int_equal(sworn_roca_refuse_modulus(n, len, "test"), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    assert_non_null(strstr(sworn_err_msg(), "ROCA"));
    free(n);
    BN_free(b);
}

static void test_fake_moduli(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(fake_mods) / sizeof(fake_mods[0]); i++) {
        BIGNUM *b = NULL;
        uint8_t *n;
        size_t len;

        assert_true(BN_dec2bn(&b, fake_mods[i]) > 0);
        n = bn_bytes(b, &len);
        assert_int_equal(sworn_roca_residue_test(n, len), 1);
        assert_int_equal(sworn_roca_dlog_test(n, len), 0);
        assert_int_equal(sworn_roca_modulus(n, len), 0);
        assert_int_equal(sworn_roca_refuse_modulus(n, len, "test"), 0);
        free(n);
        BN_free(b);
    }
}

/* A prime of about bits bits in the Infineon form k * M + (65537^a mod M). */
static BIGNUM *roca_prime(const BIGNUM *m, int bits, BN_CTX *ctx)
{
    BIGNUM *p = BN_new(), *k = BN_new(), *a = BN_new(), *g = BN_new(), *r = BN_new();

    assert_true(p != NULL && k != NULL && a != NULL && g != NULL && r != NULL);
    assert_int_equal(BN_set_word(g, 65537), 1);
    for (;;) {
        /* k makes up the bits above M; a is any exponent (its range does not matter here). */
        assert_int_equal(BN_rand(k, bits - BN_num_bits(m), BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY), 1);
        assert_int_equal(BN_rand(a, 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY), 1);
        assert_int_equal(BN_mod_exp(r, g, a, m, ctx), 1);
        assert_int_equal(BN_mul(p, k, m, ctx), 1);
        assert_int_equal(BN_add(p, p, r), 1);
        if (BN_check_prime(p, ctx, NULL) == 1)
            break;
    }
    BN_free(k);
    BN_free(a);
    BN_free(g);
    BN_free(r);
    return p;
}

static EVP_PKEY *rsa_public(const BIGNUM *n)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    BIGNUM *e = BN_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY *key = NULL;

    assert_true(bld != NULL && ctx != NULL && e != NULL && BN_set_word(e, 65537) == 1);
    assert_int_equal(OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n), 1);
    assert_int_equal(OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e), 1);
    params = OSSL_PARAM_BLD_to_param(bld);
    assert_non_null(params);
    assert_int_equal(EVP_PKEY_fromdata_init(ctx), 1);
    assert_int_equal(EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params), 1);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    BN_free(e);
    return key;
}

static void test_constructed_roca_key(void **state)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *m = BN_new(), *p, *q, *n = BN_new(), *plain = BN_new();
    EVP_PKEY *key;
    unsigned char *spki = NULL;
    int spki_len;

    (void)state;
    assert_true(ctx != NULL && m != NULL && n != NULL && plain != NULL);
    /* M = the product of the primes up to 701 (126 primes, 971 bits). */
    assert_int_equal(BN_one(m), 1);
    for (unsigned c = 2; c <= 701; c++) {
        int prime = 1;

        for (unsigned d = 2; d * d <= c; d++)
            prime &= c % d != 0;
        if (prime)
            assert_int_equal(BN_mul_word(m, c), 1);
    }
    assert_int_equal(BN_num_bits(m), 971);
    p = roca_prime(m, 1024, ctx);
    q = roca_prime(m, 1024, ctx);
    assert_int_equal(BN_mul(n, p, q, ctx), 1);
    key = rsa_public(n);
    sworn_err_clear();
    assert_int_equal(sworn_roca_refuse_pkey(key, "constructed"), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    /* The keyring refuses it as a key of any purpose. */
    spki_len = i2d_PUBKEY(key, &spki);
    assert_true(spki_len > 0);
    sworn_err_clear();
    assert_int_equal(sworn_keyring_spki_check(spki, (size_t)spki_len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    OPENSSL_free(spki);
    EVP_PKEY_free(key);

    /* One Infineon-form prime is not enough: times an ordinary prime, no fingerprint. */
    assert_int_equal(BN_generate_prime_ex2(plain, 1024, 0, NULL, NULL, NULL, ctx), 1);
    assert_int_equal(BN_mul(n, p, plain, ctx), 1);
    key = rsa_public(n);
    assert_int_equal(sworn_roca_refuse_pkey(key, "mixed"), 0);
    EVP_PKEY_free(key);
    BN_free(p);
    BN_free(q);
    BN_free(n);
    BN_free(m);
    BN_free(plain);
    BN_CTX_free(ctx);
}

static void test_openssl_keys_negative(void **state)
{
    unsigned char *spki = NULL;
    int spki_len;

    (void)state;
    for (int i = 0; i < 4; i++) {
        EVP_PKEY *key = EVP_RSA_gen(2048);

        assert_non_null(key);
        assert_int_equal(sworn_roca_refuse_pkey(key, "openssl"), 0);
        if (i == 0) {
            spki_len = i2d_PUBKEY(key, &spki);
            assert_true(spki_len > 0);
            assert_int_equal(sworn_keyring_spki_check(spki, (size_t)spki_len), 0);
            OPENSSL_free(spki);
        }
        EVP_PKEY_free(key);
    }
    {
        EVP_PKEY *ec = EVP_EC_gen("P-256");

        assert_non_null(ec);
        assert_int_equal(sworn_roca_refuse_pkey(ec, "ec"), 0);
        EVP_PKEY_free(ec);
    }
}

static void test_order_and_bad_input(void **state)
{
    uint8_t big[SWORN_ROCA_MODULUS_MAX + 1];

    (void)state;
    assert_true(sworn_roca_generator_order() == UINT64_C(2454106387091158800));
    memset(big, 0xff, sizeof(big));
    assert_int_equal(sworn_roca_modulus(NULL, 4), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(sworn_roca_modulus(big, 0), -1);
    assert_int_equal(sworn_roca_modulus(big, sizeof(big)), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(sworn_roca_refuse_pkey(NULL, "x"), -1);
    /* Degenerate values are simply not ROCA moduli. */
    assert_int_equal(sworn_roca_modulus((const uint8_t *)"\x00", 1), 0);
    assert_int_equal(sworn_roca_dlog_test((const uint8_t *)"\x01", 1), 1);
    assert_int_equal(sworn_roca_modulus(big, sizeof(big) - 1) >= 0, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_positives),  cmocka_unit_test(test_fake_moduli),
        cmocka_unit_test(test_constructed_roca_key), cmocka_unit_test(test_openssl_keys_negative),
        cmocka_unit_test(test_order_and_bad_input),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
