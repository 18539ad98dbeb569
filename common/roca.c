/*
 * roca.c -- the ROCA fingerprint (contract and sources in roca.h).
 *
 * Everything the test needs is derived here from the primes 2..167 and the generator 65537 (the
 * primorial M, the order of 65537 mod M and its factorisation), rather than copied as opaque
 * constants; test_roca.c checks the derived order against the detector's published value.
 */
#include "roca.h"

#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>

#include "err.h"

#define GENERATOR 65537u
/* The primes up to 167: the primorial of the 512..960-bit keys, and the detector's list. */
static const unsigned primes[] = {2,   3,   5,   7,   11,  13,  17,  19,  23,  29,  31,  37,  41,
                                  43,  47,  53,  59,  61,  67,  71,  73,  79,  83,  89,  97,  101,
                                  103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167};
#define NPRIMES (sizeof(primes) / sizeof(primes[0]))
/* ord(65537 mod M) has at most one factor per prime below 167. */
#define MAX_FACTORS NPRIMES

/* The multiplicative order of g mod p (p prime, g not a multiple of p). */
static unsigned small_order(unsigned g, unsigned p)
{
    unsigned x = g % p, k = 1;

    while (x != 1) {
        x = (x * (g % p)) % p;
        k++;
    }
    return k;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;

        a = b;
        b = t;
    }
    return a;
}

/* ord(65537 mod M) = lcm of the orders mod each prime (M is square-free): 2454106387091158800,
 * which fits in 62 bits, as do all the partial lcms. */
uint64_t sworn_roca_generator_order(void)
{
    uint64_t ord = 1;

    for (size_t i = 0; i < NPRIMES; i++) {
        uint64_t o = small_order(GENERATOR, primes[i]);

        ord = ord / gcd64(ord, o) * o;
    }
    return ord;
}

static int check_input(const uint8_t *n, size_t n_len)
{
    if (n == NULL || n_len == 0 || n_len > SWORN_ROCA_MODULUS_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "roca: a modulus of %zu bytes (1..%d)", n_len,
                             SWORN_ROCA_MODULUS_MAX);
    return 0;
}

int sworn_roca_residue_test(const uint8_t *n, size_t n_len)
{
    BIGNUM *bn;
    int ret = 1;

    if (check_input(n, n_len) < 0)
        return -1;
    bn = BN_bin2bn(n, (int)n_len, NULL);
    if (bn == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "roca: out of memory");
    /* 2 is left out as the detector does: every odd N is 1 mod 2, and 65537 is too. */
    for (size_t i = 1; i < NPRIMES && ret == 1; i++) {
        unsigned p = primes[i], g = GENERATOR % p, x = 1;
        BN_ULONG r = BN_mod_word(bn, p);
        int in = 0;

        if (r == (BN_ULONG)-1) {
            ret = sworn_err_set(SWORN_ERR_CRYPTO, "roca: BN_mod_word failed");
            break;
        }
        /* Walk the subgroup <g> (at most p - 1 elements). */
        do {
            in |= x == r;
            x = (x * g) % p;
        } while (x != 1);
        if (!in)
            ret = 0;
    }
    BN_free(bn);
    return ret;
}

/* A BIGNUM from a 64-bit value, independent of the width of BN_ULONG. */
static int bn_set_u64(BIGNUM *b, uint64_t v)
{
    uint8_t be[8];

    for (int i = 7; i >= 0; i--) {
        be[i] = (uint8_t)v;
        v >>= 8;
    }
    return BN_bin2bn(be, sizeof(be), b) != NULL;
}

int sworn_roca_dlog_test(const uint8_t *n, size_t n_len)
{
    uint64_t ord = sworn_roca_generator_order(), rest = ord, factors[MAX_FACTORS];
    size_t nf = 0;
    BN_CTX *ctx = NULL;
    BIGNUM *m, *g, *h, *e, *gs, *hs, *cur;
    int ret = -1;

    if (check_input(n, n_len) < 0)
        return -1;
    /* ord = product of q^e over its prime factors q, all among our primes. */
    for (size_t i = 0; i < NPRIMES && rest > 1; i++) {
        uint64_t qe = 1;

        while (rest % primes[i] == 0) {
            rest /= primes[i];
            qe *= primes[i];
        }
        if (qe > 1)
            factors[nf++] = qe;
    }
    if (rest != 1)
        return sworn_err_set(SWORN_ERR_CRYPTO, "roca: the generator's order did not factor");
    ctx = BN_CTX_new();
    if (ctx == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "roca: out of memory");
    BN_CTX_start(ctx);
    m = BN_CTX_get(ctx);
    g = BN_CTX_get(ctx);
    h = BN_CTX_get(ctx);
    e = BN_CTX_get(ctx);
    gs = BN_CTX_get(ctx);
    hs = BN_CTX_get(ctx);
    cur = BN_CTX_get(ctx);
    SWORN_ENSURE(cur != NULL && BN_one(m) == 1 && BN_set_word(g, GENERATOR) == 1 &&
                     BN_bin2bn(n, (int)n_len, h) != NULL,
                 SWORN_ERR_NOMEM, "roca: out of memory");
    for (size_t i = 0; i < NPRIMES; i++)
        SWORN_ENSURE(BN_mul_word(m, primes[i]) == 1, SWORN_ERR_NOMEM, "roca: out of memory");
    SWORN_ENSURE(BN_nnmod(h, h, m, ctx) == 1 && bn_set_u64(e, ord) &&
                     BN_mod_exp(cur, h, e, m, ctx) == 1,
                 SWORN_ERR_CRYPTO, "roca: modular arithmetic failed");
    /* Not even of an order dividing ord (or not a unit mod M): outside <65537>. */
    if (!BN_is_one(cur)) {
        ret = 0;
        goto fail;
    }
    for (size_t i = 0; i < nf; i++) {
        int found = 0;

        SWORN_ENSURE(bn_set_u64(e, ord / factors[i]) && BN_mod_exp(gs, g, e, m, ctx) == 1 &&
                         BN_mod_exp(hs, h, e, m, ctx) == 1 && BN_one(cur) == 1,
                     SWORN_ERR_CRYPTO, "roca: modular arithmetic failed");
        /* The q-part of h must be one of the q^e powers of the q-part of 65537. */
        for (uint64_t j = 0; j < factors[i] && !found; j++) {
            found = BN_cmp(cur, hs) == 0;
            SWORN_ENSURE(BN_mod_mul(cur, cur, gs, m, ctx) == 1, SWORN_ERR_CRYPTO,
                         "roca: modular arithmetic failed");
        }
        if (!found) {
            ret = 0;
            goto fail;
        }
    }
    ret = 1;
fail:
    BN_CTX_end(ctx);
    BN_CTX_free(ctx);
    return ret;
}

int sworn_roca_modulus(const uint8_t *n, size_t n_len)
{
    int r = sworn_roca_residue_test(n, n_len);

    if (r != 1)
        return r;
    return sworn_roca_dlog_test(n, n_len);
}

int sworn_roca_refuse_modulus(const uint8_t *n, size_t n_len, const char *what)
{
    int r = sworn_roca_modulus(n, n_len);

    if (r < 0)
        return -1;
    if (r == 1)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "%s: the RSA key has the ROCA fingerprint (CVE-2017-15361: made by "
                             "an affected Infineon library, factorable from the public key); "
                             "regenerate it on patched firmware or use an ECC key",
                             what);
    return 0;
}

int sworn_roca_refuse_pkey(const EVP_PKEY *key, const char *what)
{
    BIGNUM *n = NULL;
    uint8_t buf[SWORN_ROCA_MODULUS_MAX];
    int len, ret = -1;

    if (key == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "%s: no key", what);
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA && EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA_PSS)
        return 0;
    if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &n) != 1) {
        ERR_clear_error();
        return sworn_err_set(SWORN_ERR_CRYPTO, "%s: cannot read the RSA modulus", what);
    }
    len = BN_num_bytes(n);
    SWORN_ENSURE(len > 0 && (size_t)len <= sizeof(buf), SWORN_ERR_RANGE,
                 "%s: an RSA modulus of %d bytes", what, len);
    SWORN_ENSURE(BN_bn2bin(n, buf) == len, SWORN_ERR_CRYPTO, "%s: cannot encode the modulus", what);
    ret = sworn_roca_refuse_modulus(buf, (size_t)len, what);
fail:
    BN_free(n);
    return ret;
}
