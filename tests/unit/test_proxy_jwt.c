/*
 * test_proxy_jwt.c -- proxy/p_jwt.c (the RFC 8693 delegation token) and proxy/p_token.c (the
 * symbolic token in a request).
 *
 * Every signed token is made by the openssl command-line tool, not by the code under test: the
 * keys (EC P-256, RSA 2048, Ed25519, and refused ones) by `openssl genpkey`/`ecparam`, the
 * signatures over header.payload by `openssl dgst -sha256 -sign` (ES256, RS256), `openssl pkeyutl
 * -sign -rawin` (Ed25519) and `openssl dgst -mac HMAC` (HS256); the test turns the DER ECDSA
 * signature into JOSE's r || s with its own DER reader, and checks token_sha256 against `openssl
 * dgst -sha256` of the token's file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "err.h"
#include "frame.h"
#include "p_jwt.h"
#include "p_token.h"
#include "testutil.h"

enum signer { SIGN_UNSIGNED, SIGN_EC, SIGN_RSA, SIGN_ED, SIGN_HMAC };

static char *dir;
static char *ec_priv, *ec_pub, *rsa_priv, *rsa_pub, *ed_priv, *ed_pub;
static EVP_PKEY *ec_key, *rsa_key, *ed_key;
static time_t now;

/* --- helpers ------------------------------------------------------------------------------ */

static char *b64url(const uint8_t *p, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *out = malloc(n * 4 / 3 + 4);
    size_t o = 0, i;

    assert_non_null(out);
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = a[(v >> 6) & 63];
        out[o++] = a[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = a[(v >> 6) & 63];
    }
    out[o] = '\0';
    return out;
}

static char *b64url_str(const char *s)
{
    return b64url((const uint8_t *)s, strlen(s));
}

static char *cat3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    assert_non_null(s);
    snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

/* A DER INTEGER at der[*pos] as 32 big-endian bytes (the test's own reader, not OpenSSL's). */
static void der_int32(const uint8_t *der, size_t len, size_t *pos, uint8_t out[32])
{
    size_t n;

    assert_true(*pos + 2 <= len);
    assert_int_equal(der[*pos], 0x02);
    n = der[*pos + 1];
    *pos += 2;
    assert_true(n >= 1 && n <= 33 && *pos + n <= len);
    while (n > 32) { /* the sign byte of a positive integer with its top bit set */
        assert_int_equal(der[*pos], 0);
        (*pos)++;
        n--;
    }
    memset(out, 0, 32);
    memcpy(out + 32 - n, der + *pos, n);
    *pos += n;
}

/* DER ECDSA-Sig-Value (SEQUENCE { r INTEGER, s INTEGER }) to JOSE's r || s. */
static void der_to_raw(const uint8_t *der, size_t len, uint8_t raw[64])
{
    size_t pos = 2;

    assert_true(len >= 8 && len < 128);
    assert_int_equal(der[0], 0x30);
    assert_int_equal(der[1], len - 2);
    der_int32(der, len, &pos, raw);
    der_int32(der, len, &pos, raw + 32);
    assert_int_equal(pos, len);
}

/* The signature of input[] by signer, made by the openssl CLI, as JOSE bytes. OUT: *n. */
static uint8_t *cli_sign(const char *input, enum signer signer, size_t *n)
{
    char *in = sworn_test_path(dir, "signing-input");
    char *sig = sworn_test_path(dir, "signature");
    uint8_t *bytes;

    sworn_test_write_file(in, input, strlen(input), 0600);
    switch (signer) {
    case SIGN_EC:
    case SIGN_RSA:
        sworn_test_run_ok("openssl dgst -sign", NULL, "openssl", "dgst", "-sha256", "-sign",
                          signer == SIGN_EC ? ec_priv : rsa_priv, "-out", sig, in, NULL);
        break;
    case SIGN_ED:
        sworn_test_run_ok("openssl pkeyutl -sign", NULL, "openssl", "pkeyutl", "-sign", "-inkey",
                          ed_priv, "-rawin", "-in", in, "-out", sig, NULL);
        break;
    case SIGN_HMAC:
        sworn_test_run_ok("openssl dgst -mac HMAC", NULL, "openssl", "dgst", "-sha256", "-mac",
                          "HMAC", "-macopt", "key:not-a-secret", "-binary", "-out", sig, in, NULL);
        break;
    case SIGN_UNSIGNED:
    default:
        fail_msg("no signer");
    }
    bytes = (uint8_t *)sworn_test_read_file(sig, n);
    if (signer == SIGN_EC) {
        uint8_t raw[64];
        der_to_raw(bytes, *n, raw);
        bytes = realloc(bytes, 64);
        assert_non_null(bytes);
        memcpy(bytes, raw, 64);
        *n = 64;
    }
    free(in);
    free(sig);
    return bytes;
}

/* header.payload.signature, each part from the JSON given; SIGN_UNSIGNED: an empty signature. */
static char *make_token(const char *header, const char *payload, enum signer signer)
{
    char *h = b64url_str(header), *p = b64url_str(payload);
    char *input = cat3(h, ".", p), *tok;

    if (signer == SIGN_UNSIGNED) {
        tok = cat3(input, ".", "");
    } else {
        size_t n;
        uint8_t *sig = cli_sign(input, signer, &n);
        char *s = b64url(sig, n);
        tok = cat3(input, ".", s);
        free(s);
        free(sig);
    }
    free(h);
    free(p);
    free(input);
    return tok;
}

static const char *header_for(enum signer s)
{
    switch (s) {
    case SIGN_EC:
        return "{\"alg\":\"ES256\",\"typ\":\"JWT\"}";
    case SIGN_RSA:
        return "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
    case SIGN_ED:
        return "{\"alg\":\"EdDSA\",\"typ\":\"JWT\"}";
    case SIGN_HMAC:
        return "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    case SIGN_UNSIGNED:
    default:
        return "{\"alg\":\"none\"}";
    }
}

/* Read tok (NUL-terminated) and expect refusal; returns the sentence. */
static const char *expect_refused(const char *tok, EVP_PKEY *key)
{
    struct sworn_jwt_delegation d;
    const char *why = NULL;
    int rc = sworn_jwt_read(tok, strlen(tok), key, now, &d, &why);

    if (rc != 1)
        fail_msg("expected a refusal, got %d (%s)", rc, sworn_err_msg());
    assert_non_null(why);
    assert_int_equal(sworn_err_code(), SWORN_OK);
    assert_string_equal(d.subject, "");
    assert_int_equal(d.nactors, 0);
    assert_int_equal(d.verified, 0);
    return why;
}

static void expect_read(const char *tok, EVP_PKEY *key, struct sworn_jwt_delegation *d)
{
    const char *why = NULL;
    int rc = sworn_jwt_read(tok, strlen(tok), key, now, d, &why);

    if (rc != 0)
        fail_msg("expected the token read, got %d: %s / %s", rc, why ? why : "-", sworn_err_msg());
    assert_null(why);
    assert_int_equal(d->verified, key != NULL);
    /* Evaluated since issue 16: never unknown. */
    assert_int_not_equal(d->may_act, SWORN__V1__MAY_ACT__RESULT__RESULT_UNKNOWN);
}

/* The token's SHA-256 as `openssl dgst -sha256 -r` prints it, against d->token_sha256. */
static void expect_cli_hash(const char *tok, const struct sworn_jwt_delegation *d)
{
    char *f = sworn_test_path(dir, "token");
    char hex[65];
    struct sworn_test_run r;

    sworn_test_write_file(f, tok, strlen(tok), 0600);
    sworn_test_runv(&r, NULL, "openssl", "dgst", "-sha256", "-r", f, NULL);
    sworn_test_run_must(&r, "openssl dgst -sha256 -r");
    sworn_test_hex(d->token_sha256, 32, hex);
    assert_true(r.out_len >= 64);
    assert_memory_equal(r.out, hex, 64);
    sworn_test_run_free(&r);
    free(f);
}

/* A payload with sub, iss and an act chain of depth n (actor i: sub "svc-i", iss "idp-i"). */
static char *nested_payload(size_t n, const char *extra)
{
    size_t cap = 64 * (n + 4) + strlen(extra);
    char *s = malloc(cap);
    size_t o = 0;

    assert_non_null(s);
    o += (size_t)snprintf(s + o, cap - o, "{\"sub\":\"user-1\",\"iss\":\"https://idp.example\"%s",
                          extra);
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(s + o, cap - o, ",\"act\":{\"sub\":\"svc-%zu\",\"iss\":\"idp-%zu\"",
                              i, i);
    for (size_t i = 0; i < n + 1; i++)
        s[o++] = '}';
    s[o] = '\0';
    assert_true(o < cap);
    return s;
}

/* --- fixture ------------------------------------------------------------------------------ */

static char *keyfile(const char *name)
{
    return sworn_test_path(dir, name);
}

static void pubout(const char *priv, const char *pub)
{
    sworn_test_run_ok("openssl pkey -pubout", NULL, "openssl", "pkey", "-in", priv, "-pubout",
                      "-out", pub, NULL);
}

static int group_setup(void **state)
{
    (void)state;
    now = time(NULL);
    dir = sworn_test_tmpdir("proxy-jwt");
    ec_priv = keyfile("ec.pem");
    ec_pub = keyfile("ec.pub");
    rsa_priv = keyfile("rsa.pem");
    rsa_pub = keyfile("rsa.pub");
    ed_priv = keyfile("ed.pem");
    ed_pub = keyfile("ed.pub");
    sworn_test_run_ok("openssl genpkey ec", NULL, "openssl", "genpkey", "-algorithm", "EC",
                      "-pkeyopt", "ec_paramgen_curve:P-256", "-out", ec_priv, NULL);
    sworn_test_run_ok("openssl genpkey rsa", NULL, "openssl", "genpkey", "-algorithm", "RSA",
                      "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsa_priv, NULL);
    sworn_test_run_ok("openssl genpkey ed25519", NULL, "openssl", "genpkey", "-algorithm",
                      "ed25519", "-out", ed_priv, NULL);
    pubout(ec_priv, ec_pub);
    pubout(rsa_priv, rsa_pub);
    pubout(ed_priv, ed_pub);
    ec_key = sworn_jwt_load_key(ec_pub);
    rsa_key = sworn_jwt_load_key(rsa_pub);
    ed_key = sworn_jwt_load_key(ed_pub);
    if (ec_key == NULL || rsa_key == NULL || ed_key == NULL) {
        fprintf(stderr, "loading the keys: %s\n", sworn_err_msg());
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    EVP_PKEY_free(ec_key);
    EVP_PKEY_free(rsa_key);
    EVP_PKEY_free(ed_key);
    sworn_test_rmtree(dir);
    free(dir);
    free(ec_priv);
    free(ec_pub);
    free(rsa_priv);
    free(rsa_pub);
    free(ed_priv);
    free(ed_pub);
    return 0;
}

/* --- verified tokens ---------------------------------------------------------------------- */

/* Each key type verifies a token the CLI signed; the chain and the hash are as presented. */
static void test_verified_each_alg(void **state)
{
    static const enum signer signers[] = {SIGN_EC, SIGN_RSA, SIGN_ED};
    EVP_PKEY *keys[] = {ec_key, rsa_key, ed_key};
    char payload[256];

    (void)state;
    snprintf(payload, sizeof(payload),
             "{\"sub\":\"alice\",\"iss\":\"https://idp.example\",\"exp\":%lld,"
             "\"act\":{\"sub\":\"agent-7\",\"iss\":\"https://sts.example\"}}",
             (long long)now + 600);
    for (size_t i = 0; i < 3; i++) {
        char *tok = make_token(header_for(signers[i]), payload, signers[i]);
        struct sworn_jwt_delegation d;

        expect_read(tok, keys[i], &d);
        assert_int_equal(d.verified, 1);
        assert_string_equal(d.subject, "alice");
        assert_string_equal(d.issuer, "https://idp.example");
        assert_int_equal(d.nactors, 1);
        assert_string_equal(d.actors[0].subject, "agent-7");
        assert_string_equal(d.actors[0].issuer, "https://sts.example");
        expect_cli_hash(tok, &d);
        /* The same token without a key: read, not verified, same chain and hash. */
        {
            struct sworn_jwt_delegation u;
            expect_read(tok, NULL, &u);
            assert_int_equal(u.verified, 0);
            assert_string_equal(u.subject, "alice");
            assert_memory_equal(u.token_sha256, d.token_sha256, 32);
        }
        /* The other two keys refuse it (alg/key mismatch). */
        for (size_t j = 0; j < 3; j++)
            if (j != i)
                assert_string_equal(expect_refused(tok, keys[j]),
                                    "the token's alg does not match the verification key");
        free(tok);
    }
}

/* RFC 9864's fully specified "Ed25519" is the same signature as "EdDSA". */
static void test_ed25519_alg_name(void **state)
{
    char *tok = make_token("{\"alg\":\"Ed25519\"}", "{\"sub\":\"bob\"}", SIGN_ED);
    struct sworn_jwt_delegation d;

    (void)state;
    expect_read(tok, ed_key, &d);
    assert_string_equal(d.subject, "bob");
    assert_string_equal(d.issuer, "");
    assert_int_equal(d.nactors, 0);
    free(tok);
}

/* An unsigned token (alg none, empty signature) is read without a key, refused with one. */
static void test_alg_none(void **state)
{
    char *tok =
        make_token("{\"alg\":\"none\"}", "{\"sub\":\"carol\",\"iss\":\"x\"}", SIGN_UNSIGNED);
    struct sworn_jwt_delegation d;

    (void)state;
    expect_read(tok, NULL, &d);
    assert_string_equal(d.subject, "carol");
    assert_int_equal(d.verified, 0);
    expect_cli_hash(tok, &d);
    assert_string_equal(expect_refused(tok, ec_key),
                        "alg none is refused when a verification key is configured");
    assert_string_equal(expect_refused(tok, ed_key),
                        "alg none is refused when a verification key is configured");
    free(tok);
}

/* HS256 is refused with every key (no HMAC); read (unverified) without a key. */
static void test_hs256_refused_with_key(void **state)
{
    char *tok = make_token(header_for(SIGN_HMAC), "{\"sub\":\"dave\"}", SIGN_HMAC);
    struct sworn_jwt_delegation d;

    (void)state;
    assert_string_equal(expect_refused(tok, ec_key),
                        "the token's alg does not match the verification key");
    assert_string_equal(expect_refused(tok, rsa_key),
                        "the token's alg does not match the verification key");
    assert_string_equal(expect_refused(tok, ed_key),
                        "the token's alg does not match the verification key");
    expect_read(tok, NULL, &d);
    assert_string_equal(d.subject, "dave");
    free(tok);
}

/* An RS256 token given to an EC key; an RS256 header over an EC signature. */
static void test_alg_key_mismatch(void **state)
{
    char *rs = make_token(header_for(SIGN_RSA), "{\"sub\":\"erin\"}", SIGN_RSA);
    char *lie = make_token(header_for(SIGN_RSA), "{\"sub\":\"erin\"}", SIGN_EC);
    char *es_by_ed = make_token(header_for(SIGN_EC), "{\"sub\":\"erin\"}", SIGN_ED);

    (void)state;
    assert_string_equal(expect_refused(rs, ec_key),
                        "the token's alg does not match the verification key");
    /* RS256 claimed, an ECDSA r || s given, verified with the RSA key: wrong size. */
    assert_string_equal(expect_refused(lie, rsa_key),
                        "the token's RS256 signature is not the size of the key");
    /* ES256 claimed, Ed25519 signature bytes (also 64): the EC key does not verify them. */
    assert_string_equal(expect_refused(es_by_ed, ec_key),
                        "the token's signature does not verify with the configured key");
    free(rs);
    free(lie);
    free(es_by_ed);
}

/* A payload changed after signing, a flipped signature bit, and a DER ES256 signature. */
static void test_tampered(void **state)
{
    char *tok = make_token(header_for(SIGN_EC), "{\"sub\":\"frank\"}", SIGN_EC);
    char *other = b64url_str("{\"sub\":\"admin\"}");
    char *first_dot = strchr(tok, '.'), *second_dot = strchr(first_dot + 1, '.');
    char *h = strndup(tok, (size_t)(first_dot - tok));
    char *forged = cat3(h, ".", other), *forged_tok = cat3(forged, second_dot, "");
    char *flipped = strdup(tok);
    size_t n = strlen(flipped);
    struct sworn_jwt_delegation d;

    (void)state;
    expect_read(tok, ec_key, &d);
    assert_string_equal(expect_refused(forged_tok, ec_key),
                        "the token's signature does not verify with the configured key");
    /* Without a key the forged token is read: what the proxy saw is recorded, unverified. */
    expect_read(forged_tok, NULL, &d);
    assert_string_equal(d.subject, "admin");
    assert_int_equal(d.verified, 0);

    flipped[n - 2] = flipped[n - 2] == 'A' ? 'B' : 'A';
    assert_string_equal(expect_refused(flipped, ec_key),
                        "the token's signature does not verify with the configured key");

    /* ES256 as DER (a common mistake) instead of r || s. */
    {
        char *in = sworn_test_path(dir, "der-input"), *sig = sworn_test_path(dir, "der-sig");
        char *input = strndup(tok, (size_t)(second_dot - tok)), *s, *der_tok;
        uint8_t *der;
        size_t dn;

        sworn_test_write_file(in, input, strlen(input), 0600);
        sworn_test_run_ok("openssl dgst -sign", NULL, "openssl", "dgst", "-sha256", "-sign",
                          ec_priv, "-out", sig, in, NULL);
        der = (uint8_t *)sworn_test_read_file(sig, &dn);
        s = b64url(der, dn);
        der_tok = cat3(input, ".", s);
        assert_string_equal(expect_refused(der_tok, ec_key),
                            "the token's ES256 signature is not 64 bytes (r || s)");
        free(der_tok);
        free(s);
        free(der);
        free(input);
        free(in);
        free(sig);
    }
    free(tok);
    free(other);
    free(h);
    free(forged);
    free(forged_tok);
    free(flipped);
}

/* exp and nbf with a key (60 s leeway), ignored without one. */
static void test_dates(void **state)
{
    struct {
        const char *claims;
        long long offset;
        int ok_with_key;
    } cases[] = {
        {"exp", -3600, 0}, {"exp", -61, 0}, {"exp", -59, 1}, {"exp", 3600, 1},
        {"nbf", 3600, 0},  {"nbf", 61, 0},  {"nbf", 59, 1},  {"nbf", -10, 1},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char payload[128];
        char *tok;
        struct sworn_jwt_delegation d;

        snprintf(payload, sizeof(payload), "{\"sub\":\"gina\",\"%s\":%lld}", cases[i].claims,
                 (long long)now + cases[i].offset);
        tok = make_token(header_for(SIGN_ED), payload, SIGN_ED);
        if (cases[i].ok_with_key) {
            expect_read(tok, ed_key, &d);
        } else {
            const char *why = expect_refused(tok, ed_key);
            assert_string_equal(why, cases[i].claims[0] == 'e'
                                         ? "the token has expired (exp, 60 s leeway)"
                                         : "the token is not valid yet (nbf, 60 s leeway)");
        }
        expect_read(tok, NULL, &d);
        assert_string_equal(d.subject, "gina");
        free(tok);
    }
    /* A date that is not a number is refused with a key, ignored without. */
    {
        char *tok =
            make_token(header_for(SIGN_ED), "{\"sub\":\"gina\",\"exp\":\"tomorrow\"}", SIGN_ED);
        struct sworn_jwt_delegation d;
        assert_string_equal(expect_refused(tok, ed_key), "the token's exp is not a number");
        expect_read(tok, NULL, &d);
        free(tok);
    }
    /* A fractional NumericDate is a number. */
    {
        char payload[96];
        char *tok;
        struct sworn_jwt_delegation d;
        snprintf(payload, sizeof(payload), "{\"sub\":\"gina\",\"exp\":%lld.5}",
                 (long long)now + 600);
        tok = make_token(header_for(SIGN_ED), payload, SIGN_ED);
        expect_read(tok, ed_key, &d);
        free(tok);
    }
}

/* --- the act chain ------------------------------------------------------------------------ */

static void test_act_chain(void **state)
{
    char *payload = nested_payload(3, "");
    char *tok = make_token(header_for(SIGN_RSA), payload, SIGN_RSA);
    struct sworn_jwt_delegation d;

    (void)state;
    expect_read(tok, rsa_key, &d);
    assert_string_equal(d.subject, "user-1");
    assert_string_equal(d.issuer, "https://idp.example");
    assert_int_equal(d.nactors, 3);
    /* Outermost (the current actor) first. */
    assert_string_equal(d.actors[0].subject, "svc-0");
    assert_string_equal(d.actors[0].issuer, "idp-0");
    assert_string_equal(d.actors[1].subject, "svc-1");
    assert_string_equal(d.actors[2].subject, "svc-2");
    assert_string_equal(d.actors[2].issuer, "idp-2");
    free(tok);
    free(payload);
}

static void test_act_depth_limit(void **state)
{
    char *p32 = nested_payload(32, ""), *p33 = nested_payload(33, ""),
         *p40 = nested_payload(40, "");
    char *t32 = make_token(header_for(SIGN_UNSIGNED), p32, SIGN_UNSIGNED);
    char *t33 = make_token(header_for(SIGN_UNSIGNED), p33, SIGN_UNSIGNED);
    char *t40 = make_token(header_for(SIGN_UNSIGNED), p40, SIGN_UNSIGNED);
    struct sworn_jwt_delegation d;

    (void)state;
    expect_read(t32, NULL, &d);
    assert_int_equal(d.nactors, 32);
    assert_string_equal(d.actors[31].subject, "svc-31");
    assert_string_equal(expect_refused(t33, NULL), "the token's act chain has more than 32 actors");
    /* Deeper than the JSON limit: refused as JSON. */
    assert_string_equal(expect_refused(t40, NULL),
                        "the token's payload is not a JSON object nested at most 34 deep");
    free(p32);
    free(p33);
    free(p40);
    free(t32);
    free(t33);
    free(t40);
}

/* The claims' shapes: required sub, string types, act an object. */
static void test_claim_shapes(void **state)
{
    static const struct {
        const char *payload;
        const char *why;
    } cases[] = {
        {"{\"iss\":\"x\"}", "the token has no sub string"},
        {"{\"sub\":\"\"}", "the token has no sub string"},
        {"{\"sub\":7}", "the token's sub is not 1..256 bytes of UTF-8 without control characters"},
        {"{\"sub\":null}",
         "the token's sub is not 1..256 bytes of UTF-8 without control characters"},
        {"{\"sub\":\"a\",\"iss\":[\"x\"]}",
         "the token's iss is not a string of at most 256 bytes of UTF-8 without control "
         "characters"},
        {"{\"sub\":\"a\",\"act\":\"svc\"}", "the token's act claim is not a JSON object"},
        {"{\"sub\":\"a\",\"act\":{\"iss\":\"x\"}}", "an act claim of the token has no sub string"},
        {"{\"sub\":\"a\",\"act\":{\"sub\":\"b\",\"act\":{}}}",
         "an act claim of the token has no sub string"},
        {"{\"sub\":\"a\",\"act\":{\"sub\":\"b\",\"iss\":1}}",
         "an actor's iss in the token is not a string of at most 256 bytes of UTF-8 without "
         "control characters"},
        {"[{\"sub\":\"a\"}]", "the token's payload is not a JSON object nested at most 34 deep"},
        {"{\"sub\":\"a\"} ", NULL}, /* whitespace after the object is JSON */
        {"{\"sub\":\"a\"}x", "the token's payload is not a JSON object nested at most 34 deep"},
        {"{\"sub\":\"a\",}", "the token's payload is not a JSON object nested at most 34 deep"},
        {"{'sub':'a'}", "the token's payload is not a JSON object nested at most 34 deep"},
        {"{\"sub\":\"a\",\"sub\":\"b\"}", "the token's payload has a duplicate key"},
        {"{\"sub\":\"a\",\"\\u0073ub\":\"b\"}", "the token's payload has a duplicate key"},
        {"{\"sub\":\"a\",\"act\":{\"sub\":\"b\",\"sub\":\"c\"}}",
         "the token's payload has a duplicate key"},
        {"{\"sub\":\"a\",\"x\":[{\"k\":1,\"k\":2}]}", "the token's payload has a duplicate key"},
        {"{\"sub\":\"a:b\",\"x\":\"\\\"::\\\\\",\"y\":{\"z\":[1,{\"w\":\":\"}]}}", NULL},
        {"{\"sub\":\"a\",\"may_act\":{\"sub\":\"anyone\"}}", NULL},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *tok = make_token(header_for(SIGN_UNSIGNED), cases[i].payload, SIGN_UNSIGNED);
        if (cases[i].why == NULL) {
            struct sworn_jwt_delegation d;
            expect_read(tok, NULL, &d);
            /* No act claim: no acting party is named, so may_act lists none. */
            assert_int_equal(d.may_act, strstr(cases[i].payload, "may_act") != NULL
                                            ? SWORN__V1__MAY_ACT__RESULT__RESULT_DENIED
                                            : SWORN__V1__MAY_ACT__RESULT__RESULT_NOT_PRESENT);
        } else {
            const char *why = expect_refused(tok, NULL);
            if (strcmp(why, cases[i].why) != 0)
                fail_msg("payload %s: %s", cases[i].payload, why);
        }
        free(tok);
    }
}

/* The wire's string rules: length, UTF-8, controls, bidi, invisible characters. */
static void test_claim_strings(void **state)
{
    static const struct {
        const char *payload;
        int ok;
    } cases[] = {
        {"{\"sub\":\"b\\u0007ell\"}", 0},                               /* BEL */
        {"{\"sub\":\"nul\\u0000cut\"}", 0},                             /* an escaped NUL */
        {"{\"sub\":\"exe\\u202etxt\"}", 0},                             /* RIGHT-TO-LEFT OVERRIDE */
        {"{\"sub\":\"a\",\"iss\":\"line\\u2028sep\"}", 0},              /* LINE SEPARATOR */
        {"{\"sub\":\"zero\\u200bwidth\"}", 0},                          /* ZERO WIDTH SPACE */
        {"{\"sub\":\"a\",\"act\":{\"sub\":\"c1\\u009b\"}}", 0},         /* 8-bit CSI */
        {"{\"sub\":\"a\",\"act\":{\"sub\":\"b\",\"iss\":\"\\t\"}}", 0}, /* TAB */
        {"{\"sub\":\"lone\\ud800\"}", 0},                               /* a lone surrogate */
        {"{\"sub\":\"lone\\udc00\\ud800\"}", 0},          /* a pair the wrong way round */
        {"{\"sub\":\"a\",\"x\":\"\\ud800x\"}", 0},        /* in a claim not taken */
        {"{\"sub\":\"pair\\ud83d\\ude00\\\\ud800\"}", 1}, /* an escaped backslash, then text */
        {"{\"sub\":\"\xc3\xa9l\xc3\xa8ve\"}", 1},         /* UTF-8 accents */
        {"{\"sub\":\"\\u00e9\\ud83d\\ude00\"}", 1},       /* escaped, with a pair */
        {"{\"sub\":\"bad\xff\"}", 0},                     /* not UTF-8 */
        {"{\"sub\":\"over\xc0\xaf\"}", 0},                /* overlong */
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *tok = make_token(header_for(SIGN_UNSIGNED), cases[i].payload, SIGN_UNSIGNED);
        struct sworn_jwt_delegation d;
        if (cases[i].ok)
            expect_read(tok, NULL, &d);
        else
            (void)expect_refused(tok, NULL);
        free(tok);
    }
    {
        char *tok =
            make_token(header_for(SIGN_UNSIGNED), "{\"sub\":\"lone\\ud800\"}", SIGN_UNSIGNED);
        assert_string_equal(expect_refused(tok, NULL),
                            "the token's payload escapes a lone UTF-16 surrogate");
        free(tok);
    }
    /* 256 bytes are accepted, 257 refused, for sub and for an actor's iss. */
    {
        char big[300], payload[700];
        char *tok;
        struct sworn_jwt_delegation d;

        memset(big, 'x', 257);
        big[256] = '\0';
        snprintf(payload, sizeof(payload),
                 "{\"sub\":\"%s\",\"act\":{\"sub\":\"s\",\"iss\":\"%s\"}}", big, big);
        tok = make_token(header_for(SIGN_UNSIGNED), payload, SIGN_UNSIGNED);
        expect_read(tok, NULL, &d);
        assert_int_equal(strlen(d.subject), 256);
        assert_int_equal(strlen(d.actors[0].issuer), 256);
        free(tok);
        big[256] = 'x';
        big[257] = '\0';
        snprintf(payload, sizeof(payload), "{\"sub\":\"%s\"}", big);
        tok = make_token(header_for(SIGN_UNSIGNED), payload, SIGN_UNSIGNED);
        assert_string_equal(
            expect_refused(tok, NULL),
            "the token's sub is not 1..256 bytes of UTF-8 without control characters");
        free(tok);
        snprintf(payload, sizeof(payload), "{\"sub\":\"s\",\"act\":{\"sub\":\"s\",\"iss\":\"%s\"}}",
                 big);
        tok = make_token(header_for(SIGN_UNSIGNED), payload, SIGN_UNSIGNED);
        (void)expect_refused(tok, NULL);
        free(tok);
    }
}

/* --- the token's text --------------------------------------------------------------------- */

static void test_header_rules(void **state)
{
    static const struct {
        const char *header;
        const char *why;
    } cases[] = {
        {"{\"typ\":\"JWT\"}", "the token's header has no alg string"},
        {"{\"alg\":256}", "the token's header has no alg string"},
        {"[\"ES256\"]", "the token's header is not a JSON object"},
        {"{\"alg\":\"none\",\"alg\":\"none\"}", "the token's header has a duplicate key"},
        {"{\"alg\":\"none\",\"crit\":[\"b64\"],\"b64\":false}",
         "the token's header has crit (no JWS extension is understood)"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *tok = make_token(cases[i].header, "{\"sub\":\"a\"}", SIGN_UNSIGNED);
        assert_string_equal(expect_refused(tok, NULL), cases[i].why);
        free(tok);
    }
    /* "ES256\u0000x" must not be taken for ES256. */
    {
        char *tok = make_token("{\"alg\":\"ES256\\u0000x\"}", "{\"sub\":\"a\"}", SIGN_EC);
        assert_string_equal(expect_refused(tok, ec_key),
                            "the token's alg does not match the verification key");
        free(tok);
    }
    /* An unknown alg without a key is recorded as seen. */
    {
        char *tok =
            make_token("{\"alg\":\"PS512-with-a-long-name\"}", "{\"sub\":\"a\"}", SIGN_UNSIGNED);
        struct sworn_jwt_delegation d;
        expect_read(tok, NULL, &d);
        free(tok);
    }
}

static void test_base64url_rules(void **state)
{
    /* {"sub":"henry1"} is 16 bytes: 22 characters unpadded ("...ifQ"), 4 unused bits. */
    char *good = make_token(header_for(SIGN_UNSIGNED), "{\"sub\":\"henry1\"}", SIGN_UNSIGNED);
    char *dot = strchr(good, '.');
    int hlen = (int)(dot - good);
    char buf[512];
    struct sworn_jwt_delegation d;
    const char *part_why = "a part of the token is not unpadded base64url";
    const char *split_why = "the token is not three base64url parts separated by '.'";

    (void)state;
    assert_string_equal(dot + 1, "eyJzdWIiOiJoZW5yeTEifQ.");
    expect_read(good, NULL, &d);
    assert_string_equal(d.subject, "henry1");
    snprintf(buf, sizeof(buf), "%.*s.eyJzdWIiOiJoZW5yeTEifQ==.", hlen, good);
    assert_string_equal(expect_refused(buf, NULL), part_why); /* padded payload */
    snprintf(buf, sizeof(buf), "%sAA==", good);
    assert_string_equal(expect_refused(buf, NULL), part_why); /* padded signature */
    snprintf(buf, sizeof(buf), "%.*s.eyJzdWIiOiJoZW5yeTEifR.", hlen, good);
    assert_string_equal(expect_refused(buf, NULL), part_why); /* unused bits not zero */
    snprintf(buf, sizeof(buf), "%.*s.eyJzdWIiOiJoZW5yeTEifQAAA.", hlen, good);
    assert_string_equal(expect_refused(buf, NULL), part_why); /* length 1 mod 4 */
    snprintf(buf, sizeof(buf), "%s", good);
    buf[hlen + 3] = '+';
    assert_string_equal(expect_refused(buf, NULL), part_why);
    buf[hlen + 3] = '/';
    assert_string_equal(expect_refused(buf, NULL), part_why);
    snprintf(buf, sizeof(buf), "%s\n", good);
    assert_string_equal(expect_refused(buf, NULL), part_why); /* a trailing newline */
    snprintf(buf, sizeof(buf), " %s", good);
    assert_string_equal(expect_refused(buf, NULL), part_why); /* a leading space */
    snprintf(buf, sizeof(buf), "%.*s. %s", hlen, good, dot + 1);
    assert_string_equal(expect_refused(buf, NULL), part_why);
    snprintf(buf, sizeof(buf), "%.*s.eyJzdWIiOiJo ZW5yeTEifQ.", hlen, good);
    assert_string_equal(expect_refused(buf, NULL), part_why);
    /* Standard base64 of the same header is refused where it differs ('+', '/'); here: '='. */
    snprintf(buf, sizeof(buf), "%.*s=.eyJzdWIiOiJoZW5yeTEifQ.", hlen, good);
    assert_string_equal(expect_refused(buf, NULL), part_why);
    /* Not three parts. */
    snprintf(buf, sizeof(buf), "%.*s.eyJzdWIiOiJoZW5yeTEifQ", hlen, good);
    assert_string_equal(expect_refused(buf, NULL), split_why);
    snprintf(buf, sizeof(buf), "%s.", good);
    assert_string_equal(expect_refused(buf, NULL), split_why);
    snprintf(buf, sizeof(buf), "%s.AAAA", good);
    assert_string_equal(expect_refused(buf, NULL), split_why);
    assert_string_equal(expect_refused("..", NULL), "the token's header or payload part is empty");
    snprintf(buf, sizeof(buf), "%s", dot);
    assert_string_equal(expect_refused(buf, NULL), "the token's header or payload part is empty");
    assert_string_equal(expect_refused("", NULL), "the token is empty");
    /* A NUL inside: the length says where the token ends, and NUL is no base64url. */
    {
        const char *why = NULL;
        size_t n = strlen(good);
        snprintf(buf, sizeof(buf), "%s", good);
        buf[hlen + 2] = '\0';
        assert_int_equal(sworn_jwt_read(buf, n, NULL, now, &d, &why), 1);
        assert_string_equal(why, part_why);
    }
    free(good);
}

/* SWORN_JWT_MAX bytes are read; one more is refused; the hash is still of what was sent. */
static void test_size_limit(void **state)
{
    char *header = b64url_str("{\"alg\":\"none\"}");
    char *tok = malloc(SWORN_JWT_MAX + 2);
    size_t hl = strlen(header);
    int found = 0;

    (void)state;
    assert_non_null(tok);
    /* Find a pad length and a signature length (not 1 mod 4) that make exactly the limit. */
    for (size_t pad = 6000; pad < 6200 && !found; pad++) {
        char *payload = malloc(pad + 32), *p;
        size_t pl, sl;
        memset(payload, 0, pad + 32);
        snprintf(payload, pad + 32, "{\"sub\":\"ivan\",\"pad\":\"%0*d\"}", (int)pad, 0);
        p = b64url_str(payload);
        pl = strlen(p);
        if (hl + 1 + pl + 1 <= SWORN_JWT_MAX) {
            sl = SWORN_JWT_MAX - (hl + 1 + pl + 1);
            if (sl % 4 != 1 && sl < 8) {
                char *t1 = cat3(header, ".", p), *t2 = cat3(t1, ".", "");
                memcpy(tok, t2, strlen(t2));
                memset(tok + strlen(t2), 'A', sl);
                tok[strlen(t2) + sl] = '\0';
                free(t1);
                free(t2);
                found = 1;
            }
        }
        free(p);
        free(payload);
    }
    assert_true(found);
    assert_int_equal(strlen(tok), SWORN_JWT_MAX);
    {
        struct sworn_jwt_delegation d;
        expect_read(tok, NULL, &d);
        assert_string_equal(d.subject, "ivan");
        expect_cli_hash(tok, &d);
    }
    /* One byte more is refused on size, before anything else is looked at. */
    strcat(tok, "A");
    {
        struct sworn_jwt_delegation d;
        const char *why = NULL;
        assert_int_equal(sworn_jwt_read(tok, strlen(tok), NULL, now, &d, &why), 1);
        assert_string_equal(why, "the token is longer than 8192 bytes");
        expect_cli_hash(tok, &d); /* the refusal still names the token by its hash */
    }
    free(tok);
    free(header);
}

/* --- keys ----------------------------------------------------------------------------------- */

static void test_load_key(void **state)
{
    static const struct {
        const char *name, *algorithm, *pkeyopt;
    } refused[] = {
        {"p384", "EC", "ec_paramgen_curve:P-384"},
        {"rsa1024", "RSA", "rsa_keygen_bits:1024"},
        {"x25519", "X25519", NULL},
        {"ed448", "ED448", NULL},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char *priv = sworn_test_path(dir, refused[i].name), *pub = cat3(priv, ".pub", "");

        if (refused[i].pkeyopt != NULL)
            sworn_test_run_ok("openssl genpkey", NULL, "openssl", "genpkey", "-algorithm",
                              refused[i].algorithm, "-pkeyopt", refused[i].pkeyopt, "-out", priv,
                              NULL);
        else
            sworn_test_run_ok("openssl genpkey", NULL, "openssl", "genpkey", "-algorithm",
                              refused[i].algorithm, "-out", priv, NULL);
        pubout(priv, pub);
        sworn_err_clear();
        assert_null(sworn_jwt_load_key(pub));
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
        free(priv);
        free(pub);
    }
    /* A private key file, a certificate-less garbage file, a missing file. */
    {
        char *junk = sworn_test_path(dir, "junk.pem"), *missing = sworn_test_path(dir, "none");
        sworn_test_write_file(junk, "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
                              57, 0644);
        assert_null(sworn_jwt_load_key(junk));
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        assert_null(sworn_jwt_load_key(ec_priv));
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        assert_null(sworn_jwt_load_key(missing));
        assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
        free(junk);
        free(missing);
    }
}

/* --- to protobuf ---------------------------------------------------------------------------- */

/* The largest delegation this reader accepts passes decisiond's frame checks. */
static void test_to_pb_passes_frame_checks(void **state)
{
    char big[257];
    size_t cap = 40000, o = 0;
    char *payload = malloc(cap), *tok;
    struct sworn_jwt_delegation d;
    struct sworn_jwt_pb pb;
    Sworn__V1__AuthorizationRequest req = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal principal = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource resource = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__AuthorizationRequest *back;
    uint8_t *frame;
    size_t frame_len;

    (void)state;
    assert_non_null(payload);
    /* 256 bytes of 2-byte characters: 128 x U+00E9. */
    for (size_t i = 0; i < 128; i++)
        memcpy(big + 2 * i, "\xc3\xa9", 2);
    big[256] = '\0';
    o += (size_t)snprintf(payload + o, cap - o, "{\"sub\":\"%s\",\"iss\":\"%s\"", big, big);
    for (size_t i = 0; i < 32; i++)
        o += (size_t)snprintf(payload + o, cap - o, ",\"act\":{\"sub\":\"%s\",\"iss\":\"%s\"", big,
                              big);
    for (size_t i = 0; i < 33; i++)
        payload[o++] = '}';
    payload[o] = '\0';
    /* Too long for a token (8192 bytes): read the largest chain that fits instead below. */
    tok = make_token(header_for(SIGN_UNSIGNED), payload, SIGN_UNSIGNED);
    assert_true(strlen(tok) > SWORN_JWT_MAX);
    free(tok);

    /* A chain of 32 short actors, and long top-level strings, within the size limit. */
    o = 0;
    o += (size_t)snprintf(payload + o, cap - o, "{\"sub\":\"%s\",\"iss\":\"%s\"", big, big);
    for (size_t i = 0; i < 32; i++)
        o += (size_t)snprintf(payload + o, cap - o,
                              ",\"act\":{\"sub\":\"svc-%02zu-\xc3\xa9\",\"iss\":\"https://sts%zu."
                              "example\"",
                              i, i);
    for (size_t i = 0; i < 33; i++)
        payload[o++] = '}';
    payload[o] = '\0';
    tok = make_token(header_for(SIGN_ED), payload, SIGN_ED);
    assert_true(strlen(tok) <= SWORN_JWT_MAX);
    expect_read(tok, ed_key, &d);
    assert_int_equal(d.nactors, 32);

    sworn_jwt_to_pb(&d, &pb);
    assert_ptr_equal(pb.del.subject, d.subject);
    assert_int_equal(pb.del.n_actors, 32);
    assert_non_null(pb.del.may_act); /* evaluated: the token has none */
    assert_int_equal(pb.del.may_act->result, SWORN__V1__MAY_ACT__RESULT__RESULT_NOT_PRESENT);
    assert_non_null(pb.del.verification);
    assert_int_equal(pb.del.verification->result,
                     SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED);
    assert_string_equal(pb.del.verification->alg, "EdDSA");
    assert_int_equal(pb.del.n_token_sha256, 1);
    assert_memory_equal(pb.del.token_sha256[0].data, d.token_sha256, 32);

    principal.id = "agent";
    resource.scheme = "https";
    resource.host = "api.example.com";
    resource.port = 443;
    resource.path = "/";
    req.request_id = "r-1";
    req.principal = &principal;
    req.operation = "http.request";
    req.resource = &resource;
    req.delegation = &pb.del;
    assert_int_equal(sworn_frame_check_request(&req), 0);
    assert_int_equal(sworn_frame_pack_request(&req, &frame, &frame_len), 0);
    back = sworn_frame_unpack_request(frame + SWORN_FRAME_HDR_LEN, frame_len - SWORN_FRAME_HDR_LEN);
    if (back == NULL)
        fail_msg("decisiond's decoder refused the delegation: %s", sworn_err_msg());
    assert_string_equal(back->delegation->subject, d.subject);
    assert_int_equal(back->delegation->n_actors, 32);
    assert_string_equal(back->delegation->actors[31]->subject, d.actors[31].subject);
    assert_string_equal(back->delegation->actors[5]->issuer, "https://sts5.example");
    assert_int_equal(back->delegation->n_token_sha256, 1);
    sworn__v1__authorization_request__free_unpacked(back, NULL);
    free(frame);

    /* A may_act other than unknown is carried. */
    d.may_act = SWORN__V1__MAY_ACT__RESULT__RESULT_NOT_PRESENT;
    d.nactors = 0;
    sworn_jwt_to_pb(&d, &pb);
    assert_non_null(pb.del.may_act);
    assert_int_equal(pb.del.may_act->result, SWORN__V1__MAY_ACT__RESULT__RESULT_NOT_PRESENT);
    assert_null(pb.del.actors);
    assert_int_equal(sworn_frame_check_request(&req), 0);
    free(tok);
    free(payload);
}

/* --- symbolic tokens ------------------------------------------------------------------------ */

#define TOK_A "sym_f3Yc0a9Qm2kX7bLr1uVz8sTn4pHw6eJd"
#define TOK_B "sym_Qw3rTy8uIo9pAs1dFg2hJk4lZx5cVb6n"

static int is_str(const char *s)
{
    return sworn_symtok_is((const uint8_t *)s, strlen(s));
}

static void test_symtok_is(void **state)
{
    char s[300];

    (void)state;
    assert_true(is_str(TOK_A));
    memcpy(s, "sym_", 4);
    memset(s + 4, 'a', 290);
    s[4 + 31] = '\0';
    assert_false(is_str(s)); /* "sym_" + 31 */
    s[4 + 31] = 'a';
    s[4 + 32] = '\0';
    assert_true(is_str(s)); /* "sym_" + 32: 36 bytes */
    s[4 + 32] = 'a';
    s[4 + 251] = '\0';
    assert_true(is_str(s)); /* 255 bytes */
    s[4 + 251] = 'a';
    s[4 + 252] = '\0';
    assert_false(is_str(s)); /* "sym_" + 252 */
    assert_false(is_str("SYM_f3Yc0a9Qm2kX7bLr1uVz8sTn4pHw6eJd"));
    assert_false(is_str("sym-f3Yc0a9Qm2kX7bLr1uVz8sTn4pHw6eJd"));
    assert_false(is_str("sym_f3Yc0a9Qm2kX7bLr1uVz8sTn4pHw6eJ."));
    assert_false(is_str("sym_f3Yc0a9Qm2kX7bLr1uVz8sTn4pHw6eJ="));
    assert_false(is_str("sym_f3Yc0a9Qm2kX7bLr1uVz8sTn4pHw6e%4A"));
    assert_true(is_str("sym_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_"));
    assert_false(sworn_symtok_is(NULL, 0));
}

static int scan(const char *const *headers, size_t n, const char *query,
                struct sworn_symtok_scan *out)
{
    const uint8_t *v[16];
    size_t l[16];

    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++) {
        v[i] = (const uint8_t *)headers[i];
        l[i] = strlen(headers[i]);
    }
    return sworn_symtok_scan(v, l, n, (const uint8_t *)query, query ? strlen(query) : 0, out);
}

static void expect_sha(const struct sworn_symtok_scan *s, const char *tok)
{
    uint8_t want[32];
    assert_int_equal(EVP_Digest(tok, strlen(tok), want, NULL, EVP_sha256(), NULL), 1);
    assert_memory_equal(s->sha256, want, 32);
}

static void test_symtok_scan_headers(void **state)
{
    const char *h[] = {"text/html",     "Bearer " TOK_A, "x",
                       "bearer " TOK_B, " " TOK_A "\t",  "BEARER  " TOK_A};
    struct sworn_symtok_scan s;

    (void)state;
    assert_int_equal(scan(h, 6, NULL, &s), 0);
    assert_int_equal(s.nhits, 4);
    assert_int_equal(s.distinct, 2);
    assert_int_equal(s.hit[0].in_query, 0);
    assert_int_equal(s.hit[0].index, 1);
    assert_int_equal(s.hit[0].off, 7);
    assert_int_equal(s.hit[0].len, strlen(TOK_A));
    assert_int_equal(s.hit[1].index, 3);
    assert_int_equal(s.hit[1].off, 7);
    assert_int_equal(s.hit[2].index, 4); /* a raw value, its OWS set aside */
    assert_int_equal(s.hit[2].off, 1);
    assert_int_equal(s.hit[2].len, strlen(TOK_A));
    assert_int_equal(s.hit[3].index, 5); /* "Bearer" then two spaces: 1*SP, RFC 6750 */
    assert_int_equal(s.hit[3].off, 8);
    expect_sha(&s, TOK_A);

    /* Not presentations. */
    {
        const char *no[] = {"Basic " TOK_A,
                            "token " TOK_A,
                            "Bearer\t" TOK_A,
                            "Bearer" TOK_A,
                            TOK_A " x",
                            "x " TOK_A,
                            "a=" TOK_A,
                            "Bearer " TOK_A ",",
                            "\"" TOK_A "\"",
                            "Bearer sym_f3Yc0a9Qm2kX7bLr1uVz8sTn4pHw6eJ",
                            ""};
        assert_int_equal(scan(no, sizeof(no) / sizeof(no[0]), NULL, &s), 0);
        assert_int_equal(s.nhits, 0);
        assert_int_equal(s.distinct, 0);
        {
            static const uint8_t zero[32];
            assert_memory_equal(s.sha256, zero, 32);
        }
    }
    /* Two equal tokens: one distinct. */
    {
        const char *two[] = {TOK_B, "Bearer " TOK_B};
        assert_int_equal(scan(two, 2, NULL, &s), 0);
        assert_int_equal(s.nhits, 2);
        assert_int_equal(s.distinct, 1);
        expect_sha(&s, TOK_B);
    }
}

static void test_symtok_scan_query(void **state)
{
    const char *none[1] = {NULL};
    struct sworn_symtok_scan s;
    const char *q = "a=" TOK_A "&b=c";

    (void)state;
    assert_int_equal(scan(none, 0, q, &s), 0);
    assert_int_equal(s.nhits, 1);
    assert_int_equal(s.hit[0].in_query, 1);
    assert_int_equal(s.hit[0].index, 2);
    assert_int_equal(s.hit[0].off, 2);
    assert_int_equal(s.hit[0].len, strlen(TOK_A));
    assert_memory_equal(q + s.hit[0].off, TOK_A, strlen(TOK_A));
    assert_int_equal(s.distinct, 1);
    expect_sha(&s, TOK_A);

    /* A header and the query with different tokens: distinct 2, headers first. */
    {
        const char *h[] = {"Bearer " TOK_B};
        assert_int_equal(scan(h, 1, "x=1&key=" TOK_A, &s), 0);
        assert_int_equal(s.nhits, 2);
        assert_int_equal(s.distinct, 2);
        assert_int_equal(s.hit[0].in_query, 0);
        assert_int_equal(s.hit[1].in_query, 1);
        assert_int_equal(s.hit[1].off, 8);
        expect_sha(&s, TOK_B);
    }
    /* Not presentations in a query: percent-encoded, no '=', inside a longer value, '+'. */
    assert_int_equal(scan(none, 0, "a=sym%5Ff3Yc0a9Qm2kX7bLr1uVz8sTn4pHw6eJd", &s), 0);
    assert_int_equal(s.nhits, 0);
    assert_int_equal(scan(none, 0, TOK_A "&" TOK_B, &s), 0);
    assert_int_equal(s.nhits, 0);
    assert_int_equal(scan(none, 0, "a=" TOK_A "x%20", &s), 0);
    assert_int_equal(s.nhits, 0);
    assert_int_equal(scan(none, 0, "a=+" TOK_A, &s), 0);
    assert_int_equal(s.nhits, 0);
    /* The value after the first '=': "a==sym..." has value "=sym...". */
    assert_int_equal(scan(none, 0, "a==" TOK_A, &s), 0);
    assert_int_equal(s.nhits, 0);
    /* An empty name still has a value; empty parameters are skipped. */
    assert_int_equal(scan(none, 0, "&&=" TOK_A "&", &s), 0);
    assert_int_equal(s.nhits, 1);
    assert_int_equal(s.hit[0].off, 3);
}

static void test_symtok_too_many(void **state)
{
    const char *h[9];
    struct sworn_symtok_scan s;
    char q[512];

    (void)state;
    for (size_t i = 0; i < 9; i++)
        h[i] = TOK_A;
    assert_int_equal(scan(h, 8, NULL, &s), 0);
    assert_int_equal(s.nhits, 8);
    assert_int_equal(s.distinct, 1);
    assert_int_equal(scan(h, 9, NULL, &s), 1);
    assert_int_equal(s.nhits, SWORN_SYMTOK_HITS_MAX);
    /* Eight in headers and a ninth in the query. */
    snprintf(q, sizeof(q), "k=%s", TOK_B);
    assert_int_equal(scan(h, 8, q, &s), 1);
    assert_int_equal(s.nhits, 8);
    /* Nine in the query. */
    snprintf(q, sizeof(q), "a=%s&a=%s&a=%s&a=%s&a=%s&a=%s&a=%s&a=%s&a=%s", TOK_A, TOK_A, TOK_A,
             TOK_A, TOK_A, TOK_A, TOK_B, TOK_B, TOK_B);
    assert_int_equal(scan(h, 0, q, &s), 1);
    assert_int_equal(s.distinct, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verified_each_alg),
        cmocka_unit_test(test_ed25519_alg_name),
        cmocka_unit_test(test_alg_none),
        cmocka_unit_test(test_hs256_refused_with_key),
        cmocka_unit_test(test_alg_key_mismatch),
        cmocka_unit_test(test_tampered),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_act_chain),
        cmocka_unit_test(test_act_depth_limit),
        cmocka_unit_test(test_claim_shapes),
        cmocka_unit_test(test_claim_strings),
        cmocka_unit_test(test_header_rules),
        cmocka_unit_test(test_base64url_rules),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_load_key),
        cmocka_unit_test(test_to_pb_passes_frame_checks),
        cmocka_unit_test(test_symtok_is),
        cmocka_unit_test(test_symtok_scan_headers),
        cmocka_unit_test(test_symtok_scan_query),
        cmocka_unit_test(test_symtok_too_many),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
