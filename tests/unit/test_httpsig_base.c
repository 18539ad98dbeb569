/*
 * test_httpsig_base.c -- httpsig/sig_base.c against RFC 9421 appendix B, and sworn's profile.
 *
 * RFC 9421 appendix B.2 signs parts of the test request of appendix B.2 (POST
 * /foo?param=Value&Pet=dog on example.com, its Date, Content-Type, Content-Digest and
 * Content-Length) and the test response (200, ...). Each B.2.x base is rebuilt here from its
 * components and parameters and compared byte for byte with the RFC's (lines unwrapped per
 * RFC 8792). Three signatures of the appendix then check that the bytes are really the ones
 * signed: B.2.4's ecdsa-p256-sha256 signature (r||s, section 3.3.4) verifies with
 * test-key-ecc-p256's public key (appendix B.1.3) through the independent verifier's own
 * verification code (sv_httpsig_verify_p256, verifier/sv_receipt.c); B.2.5's hmac-sha256 value
 * is recomputed with test-shared-secret (B.1.5); B.2.6's ed25519 signature verifies with
 * test-key-ed25519 (B.1.4).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include "sig_base.h"
#include "sv_note.h"
#include "sv_receipt.h"

#define REQ_DIGEST                                                                                 \
    "sha-512=:WZDPaVn/"                                                                            \
    "7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"
#define RESP_DIGEST                                                                                \
    "sha-512=:"                                                                                    \
    "mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:"
#define DATE "Tue, 20 Apr 2021 02:07:55 GMT"

#define ITEM(id, v)                                                                                \
    {                                                                                              \
        id, v, sizeof(v) - 1                                                                       \
    }

static const struct sworn_sigbase_param created_keyid_rsa[] = {{"created", 1618884473, NULL},
                                                               {"keyid", 0, "test-key-rsa-pss"}};

/* Build the base of items and params; compare it with want. */
static void check_base(const struct sworn_sigbase_item *items, size_t n,
                       const struct sworn_sigbase_param *params, size_t np, const char *want,
                       uint8_t *base, size_t *len)
{
    char text[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t tl = 0;
    const char *why = NULL;

    assert_int_equal(sworn_sigbase_params_text(items, n, params, np, text, sizeof(text), &tl, &why),
                     0);
    assert_int_equal(sworn_sigbase_build(items, n, text, tl, base, SWORN_SIGBASE_MAX, len, &why),
                     0);
    assert_int_equal(*len, strlen(want));
    assert_memory_equal(base, want, *len);
}

/* RFC 9421 B.2.1: minimal signature, no component, parameters created, keyid, nonce. */
static void test_b21(void **state)
{
    static const struct sworn_sigbase_param p[] = {{"created", 1618884473, NULL},
                                                   {"keyid", 0, "test-key-rsa-pss"},
                                                   {"nonce", 0, "b3k2pp5k7z-50gnwp.yemd"}};
    uint8_t base[SWORN_SIGBASE_MAX];
    size_t len;

    (void)state;
    check_base(NULL, 0, p, 3,
               "\"@signature-params\": ();created=1618884473;keyid=\"test-key-rsa-pss\";"
               "nonce=\"b3k2pp5k7z-50gnwp.yemd\"",
               base, &len);
}

/* RFC 9421 B.2.2: selective components, one of them a component with a parameter. */
static void test_b22(void **state)
{
    static const struct sworn_sigbase_item it[] = {ITEM("\"@authority\"", "example.com"),
                                                   ITEM("\"content-digest\"", REQ_DIGEST),
                                                   ITEM("\"@query-param\";name=\"Pet\"", "dog")};
    static const struct sworn_sigbase_param p[] = {{"created", 1618884473, NULL},
                                                   {"keyid", 0, "test-key-rsa-pss"},
                                                   {"tag", 0, "header-example"}};
    uint8_t base[SWORN_SIGBASE_MAX];
    size_t len;

    (void)state;
    check_base(it, 3, p, 3,
               "\"@authority\": example.com\n"
               "\"content-digest\": " REQ_DIGEST "\n"
               "\"@query-param\";name=\"Pet\": dog\n"
               "\"@signature-params\": (\"@authority\" \"content-digest\" "
               "\"@query-param\";name=\"Pet\");created=1618884473;keyid=\"test-key-rsa-pss\";"
               "tag=\"header-example\"",
               base, &len);
}

/* RFC 9421 B.2.3: full coverage of the test request. */
static void test_b23(void **state)
{
    static const struct sworn_sigbase_item it[] = {ITEM("\"date\"", DATE),
                                                   ITEM("\"@method\"", "POST"),
                                                   ITEM("\"@path\"", "/foo"),
                                                   ITEM("\"@query\"", "?param=Value&Pet=dog"),
                                                   ITEM("\"@authority\"", "example.com"),
                                                   ITEM("\"content-type\"", "application/json"),
                                                   ITEM("\"content-digest\"", REQ_DIGEST),
                                                   ITEM("\"content-length\"", "18")};
    uint8_t base[SWORN_SIGBASE_MAX];
    size_t len;

    (void)state;
    check_base(it, 8, created_keyid_rsa, 2,
               "\"date\": " DATE "\n"
               "\"@method\": POST\n"
               "\"@path\": /foo\n"
               "\"@query\": ?param=Value&Pet=dog\n"
               "\"@authority\": example.com\n"
               "\"content-type\": application/json\n"
               "\"content-digest\": " REQ_DIGEST "\n"
               "\"content-length\": 18\n"
               "\"@signature-params\": (\"date\" \"@method\" \"@path\" \"@query\" "
               "\"@authority\" \"content-type\" \"content-digest\" \"content-length\");"
               "created=1618884473;keyid=\"test-key-rsa-pss\"",
               base, &len);
}

static EVP_PKEY *pem_key(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);

    BIO_free(b);
    assert_non_null(k);
    return k;
}

static void b64d(const char *s, uint8_t *out, size_t want)
{
    uint8_t buf[256];
    int n = EVP_DecodeBlock(buf, (const unsigned char *)s, (int)strlen(s));

    assert_true(n >= (int)want);
    memcpy(out, buf, want); /* EVP_DecodeBlock counts the padding's zero bytes */
}

/* RFC 9421 B.2.4: the test response, ecdsa-p256-sha256; the RFC's signature verifies with
 * test-key-ecc-p256 (B.1.3) through the verifier's raw r||s check (section 3.3.4). */
static void test_b24(void **state)
{
    static const struct sworn_sigbase_item it[] = {
        ITEM("\"@status\"", "200"), ITEM("\"content-type\"", "application/json"),
        ITEM("\"content-digest\"", RESP_DIGEST), ITEM("\"content-length\"", "23")};
    static const struct sworn_sigbase_param p[] = {{"created", 1618884473, NULL},
                                                   {"keyid", 0, "test-key-ecc-p256"}};
    static const char pub[] = "-----BEGIN PUBLIC KEY-----\n"
                              "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqIVYZVLCrPZHGHjP17CTW0/+D9Lf\n"
                              "w0EkjqF7xB4FivAxzic30tMM4GF+hR6Dxh71Z50VGGdldkkDXZCnTNnoXQ==\n"
                              "-----END PUBLIC KEY-----\n";
    uint8_t base[SWORN_SIGBASE_MAX], sig[64];
    size_t len;
    EVP_PKEY *k = pem_key(pub);

    (void)state;
    check_base(it, 4, p, 2,
               "\"@status\": 200\n"
               "\"content-type\": application/json\n"
               "\"content-digest\": " RESP_DIGEST "\n"
               "\"content-length\": 23\n"
               "\"@signature-params\": (\"@status\" \"content-type\" \"content-digest\" "
               "\"content-length\");created=1618884473;keyid=\"test-key-ecc-p256\"",
               base, &len);
    b64d("wNmSUAhwb5LxtOtOpNa6W5xj067m5hFrj0XQ4fvpaCLx0NKocgPquLgyahnzDnDAUy5eCdlYUEkLIj+32oiasw==",
         sig, 64);
    assert_int_equal(sv_httpsig_verify_p256(k, base, len, sig, 64), 1);
    /* One byte of the base changed, one bit of the signature, a short signature: no. */
    base[10] ^= 1;
    assert_int_equal(sv_httpsig_verify_p256(k, base, len, sig, 64), 0);
    base[10] ^= 1;
    sig[63] ^= 1;
    assert_int_equal(sv_httpsig_verify_p256(k, base, len, sig, 64), 0);
    sig[63] ^= 1;
    assert_int_equal(sv_httpsig_verify_p256(k, base, len, sig, 63), 0);
    EVP_PKEY_free(k);
}

/* RFC 9421 B.2.5: hmac-sha256 with test-shared-secret (B.1.5): deterministic, so the value
 * itself is compared. */
static void test_b25(void **state)
{
    static const struct sworn_sigbase_item it[] = {ITEM("\"date\"", DATE),
                                                   ITEM("\"@authority\"", "example.com"),
                                                   ITEM("\"content-type\"", "application/json")};
    static const struct sworn_sigbase_param p[] = {{"created", 1618884473, NULL},
                                                   {"keyid", 0, "test-shared-secret"}};
    uint8_t base[SWORN_SIGBASE_MAX], secret[64], mac[32];
    unsigned mac_len = 0;
    char b64[64];
    size_t len;

    (void)state;
    check_base(it, 3, p, 2,
               "\"date\": " DATE "\n"
               "\"@authority\": example.com\n"
               "\"content-type\": application/json\n"
               "\"@signature-params\": (\"date\" \"@authority\" \"content-type\");"
               "created=1618884473;keyid=\"test-shared-secret\"",
               base, &len);
    b64d("uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ==",
         secret, 64);
    assert_non_null(HMAC(EVP_sha256(), secret, 64, base, len, mac, &mac_len));
    assert_int_equal(mac_len, 32);
    sworn_httpsig_base64(mac, 32, b64);
    assert_string_equal(b64, "pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=");
}

/* RFC 9421 B.2.6: ed25519 with test-key-ed25519 (B.1.4). */
static void test_b26(void **state)
{
    static const struct sworn_sigbase_item it[] = {ITEM("\"date\"", DATE),
                                                   ITEM("\"@method\"", "POST"),
                                                   ITEM("\"@path\"", "/foo"),
                                                   ITEM("\"@authority\"", "example.com"),
                                                   ITEM("\"content-type\"", "application/json"),
                                                   ITEM("\"content-length\"", "18")};
    static const struct sworn_sigbase_param p[] = {{"created", 1618884473, NULL},
                                                   {"keyid", 0, "test-key-ed25519"}};
    static const char pub[] = "-----BEGIN PUBLIC KEY-----\n"
                              "MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n"
                              "-----END PUBLIC KEY-----\n";
    uint8_t base[SWORN_SIGBASE_MAX], sig[64];
    size_t len;
    EVP_PKEY *k = pem_key(pub);

    (void)state;
    check_base(it, 6, p, 2,
               "\"date\": " DATE "\n"
               "\"@method\": POST\n"
               "\"@path\": /foo\n"
               "\"@authority\": example.com\n"
               "\"content-type\": application/json\n"
               "\"content-length\": 18\n"
               "\"@signature-params\": (\"date\" \"@method\" \"@path\" \"@authority\" "
               "\"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\"",
               base, &len);
    b64d("wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==",
         sig, 64);
    assert_int_equal(sv_sig_verify(k, 1, base, len, sig, 64), 1);
    EVP_PKEY_free(k);
}

/* What the module refuses: bad identifiers, values a verifier could read otherwise, a
 * component twice, unknown or duplicate parameters, out-of-range integers. */
static void test_refused(void **state)
{
    struct sworn_sigbase_item it[2] = {ITEM("\"@method\"", "GET"), ITEM("\"@path\"", "/")};
    struct sworn_sigbase_param p[2] = {{"created", 1, NULL}, {"tag", 0, "x"}};
    static const char *const bad_ids[] = {"@method",   "\"@Method\"", "\"\"",      "\"a\";B=\"x\"",
                                          "\"a\";b=x", "\"a\" ",      "\"a\\\"\"", "\"a b\""};
    static const char *const bad_values[] = {"a\nb", "a\rb", "\x7f", "\xc3\xa9"};
    char text[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    uint8_t base[SWORN_SIGBASE_MAX];
    size_t len;
    const char *why = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
        it[0].id = bad_ids[i];
        assert_int_equal(sworn_sigbase_params_text(it, 2, p, 2, text, sizeof(text), &len, &why),
                         -1);
        assert_int_equal(sworn_sigbase_build(it, 2, "()", 2, base, sizeof(base), &len, &why), -1);
    }
    it[0].id = "\"@method\"";
    for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
        it[0].value = bad_values[i];
        it[0].value_len = strlen(bad_values[i]);
        assert_int_equal(sworn_sigbase_build(it, 2, "()", 2, base, sizeof(base), &len, &why), -1);
        assert_string_equal(why, "a component value is not printable ASCII");
    }
    it[0].value = "GET";
    it[0].value_len = 3;
    it[1].id = "\"@method\"";
    assert_int_equal(sworn_sigbase_params_text(it, 2, p, 2, text, sizeof(text), &len, &why), -1);
    assert_string_equal(why, "a component is covered twice");
    it[1].id = "\"@path\"";
    p[1].name = "created";
    assert_int_equal(sworn_sigbase_params_text(it, 2, p, 2, text, sizeof(text), &len, &why), -1);
    p[1].name = "algorithm";
    assert_int_equal(sworn_sigbase_params_text(it, 2, p, 2, text, sizeof(text), &len, &why), -1);
    p[1] = (struct sworn_sigbase_param){"tag", 0, "a\"b"};
    assert_int_equal(sworn_sigbase_params_text(it, 2, p, 2, text, sizeof(text), &len, &why), -1);
    p[1] = (struct sworn_sigbase_param){"tag", 0, "x"};
    p[0].ival = -1;
    assert_int_equal(sworn_sigbase_params_text(it, 2, p, 2, text, sizeof(text), &len, &why), -1);
    p[0].ival = 1000000000000000LL;
    assert_int_equal(sworn_sigbase_params_text(it, 2, p, 2, text, sizeof(text), &len, &why), -1);
    p[0].ival = 999999999999999LL;
    assert_int_equal(sworn_sigbase_params_text(it, 2, p, 2, text, sizeof(text), &len, &why), 0);
    /* a base longer than the bound */
    {
        static char big[SWORN_SIGBASE_MAX];

        memset(big, 'a', sizeof(big));
        it[1].value = big;
        it[1].value_len = sizeof(big);
        assert_int_equal(sworn_sigbase_build(it, 2, "()", 2, base, sizeof(base), &len, &why), -1);
        assert_string_equal(why, "the signature base is too long");
    }
}

/* The signer's shape check (docs/formats.md section 10). */
static void test_shape(void **state)
{
    static const char ok[] = "\"@method\": GET\n\"@signature-params\": (\"@method\")";
    static const char *const bad[] = {
        "\"@method\": GET\n\"@signature-params\": (\"@method\")\n", /* ends with LF */
        "\"date\": x\n\"@signature-params\": ()",                   /* not "\"@" */
        "\"@method\": GET\n\"@signature-paramz\": ()",              /* last line */
        "\"@method\": GET\r\n\"@signature-params\": ()",            /* CR */
        "\"@method\": G\xff\n\"@signature-params\": ()",            /* 0xFF */
        "\"@signature-params\": ()",                                /* one line: no LF */
        "\"",
        "",
    };
    static const uint8_t nul[] = "\"@method\": G\0T\n\"@signature-params\": ()";
    static uint8_t big[SWORN_SIGBASE_MAX + 1];
    const char *why = NULL;

    (void)state;
    assert_int_equal(sworn_sigbase_check_shape((const uint8_t *)ok, strlen(ok), &why), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(sworn_sigbase_check_shape((const uint8_t *)bad[i], strlen(bad[i]), &why),
                         -1);
    assert_int_equal(sworn_sigbase_check_shape(nul, sizeof(nul) - 1, &why), -1);
    memcpy(big, ok, strlen(ok));
    memset(big + strlen(ok), 'a', sizeof(big) - strlen(ok));
    assert_int_equal(sworn_sigbase_check_shape(big, sizeof(big) - 1, &why), 0);
    assert_int_equal(sworn_sigbase_check_shape(big, sizeof(big), &why), -1);
    /* A checkpoint body (ends with LF) and a receipt TBS (0xFF first) are never bases. */
    assert_int_equal(
        sworn_sigbase_check_shape((const uint8_t *)"example.com/log\n1\nAAAA\n", 22, &why), -1);
    assert_int_equal(sworn_sigbase_check_shape((const uint8_t *)"\xffsworn/v1 receipt", 17, &why),
                     -1);
}

/* sworn's profile: the worked example of docs/formats.md section 13, byte for byte. */
static void test_sworn_profile(void **state)
{
    uint8_t leaf[32], body_sha[32], base[SWORN_SIGBASE_MAX];
    char params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    const char *keyid = "c3a1b2d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff00";
    struct sworn_httpsig_request r = {"POST",      "https",  "api.example", 443,
                                      "/v1/x?a=b", body_sha, leaf};
    size_t len, plen;
    const char *why = NULL;
    static const char want[] =
        "\"@method\": POST\n"
        "\"@authority\": api.example\n"
        "\"@path\": /v1/x\n"
        "\"@query\": ?a=b\n"
        "\"content-digest\": sha-256=:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=:\n"
        "\"sworn-entry\": :gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp8=:\n"
        "\"@signature-params\": (\"@method\" \"@authority\" \"@path\" \"@query\" "
        "\"content-digest\" \"sworn-entry\");created=1764633600;"
        "keyid=\"c3a1b2d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff00\";"
        "alg=\"ecdsa-p256-sha256\";tag=\"sworn\"";
    static const char want_get[] =
        "\"@method\": GET\n"
        "\"@authority\": 10.0.0.1:8080\n"
        "\"@path\": /\n"
        "\"@query\": ?\n"
        "\"sworn-entry\": :gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp8=:\n"
        "\"@signature-params\": (\"@method\" \"@authority\" \"@path\" \"@query\" "
        "\"sworn-entry\");created=1764633600;"
        "keyid=\"c3a1b2d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff00\";"
        "alg=\"ecdsa-p256-sha256\";tag=\"sworn\"";

    (void)state;
    for (int i = 0; i < 32; i++) {
        body_sha[i] = (uint8_t)i;
        leaf[i] = (uint8_t)(0x80 + i);
    }
    assert_int_equal(sworn_httpsig_base(&r, 1764633600, keyid, base, sizeof(base), &len, params,
                                        sizeof(params), &plen, &why),
                     0);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(base, want, len);
    assert_string_equal(params, strstr(want, "\"@signature-params\": ") + 21);
    assert_int_equal(sworn_sigbase_check_shape(base, len, &why), 0);
    /* The signer's profile check: this base under its key id, and not under another. */
    assert_int_equal(sworn_httpsig_check_profile(base, len, keyid, &why), 0);
    assert_int_equal(
        sworn_httpsig_check_profile(
            base, len, "d3a1b2d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff00", &why),
        -1);
    /* ... nor with a line or parameter changed (any of them breaks the profile). */
    {
        static const char *const swaps[][2] = {
            {"tag=\"sworn\"", "tag=\"swore\""},
            {"alg=\"ecdsa-p256-sha256\"", "alg=\"ecdsa-p384-sha384\""},
            {"\"@query\": ?a=b\n", "\"@query\": /a=b\n"},
            {"created=1764633600", "created=01764633600"},
            {"\"content-digest\" \"sworn-entry\"", "\"sworn-entry\" \"content-digest\""},
            {"sha-256=:AAEC", "sha-512=:AAEC"},
        };
        char copy[SWORN_SIGBASE_MAX + 64];

        for (size_t i = 0; i < sizeof(swaps) / sizeof(swaps[0]); i++) {
            char *at;

            memcpy(copy, base, len);
            copy[len] = '\0';
            at = strstr(copy, swaps[i][0]);
            assert_non_null(at);
            memmove(at + strlen(swaps[i][1]), at + strlen(swaps[i][0]),
                    strlen(at + strlen(swaps[i][0])) + 1);
            memcpy(at, swaps[i][1], strlen(swaps[i][1]));
            assert_int_equal(
                sworn_httpsig_check_profile((const uint8_t *)copy, strlen(copy), keyid, &why), -1);
        }
    }
    /* No body, no query, a port that is not the scheme's default, http. */
    r = (struct sworn_httpsig_request){"GET", "http", "10.0.0.1", 8080, "/", NULL, leaf};
    assert_int_equal(sworn_httpsig_base(&r, 1764633600, keyid, base, sizeof(base), &len, params,
                                        sizeof(params), &plen, &why),
                     0);
    assert_int_equal(len, strlen(want_get));
    assert_memory_equal(base, want_get, len);
    assert_int_equal(sworn_httpsig_check_profile(base, len, keyid, &why), 0);
    /* Refused: no method, scheme tcp, a key id that is not 64 lower-case hex, created < 0. */
    r.method = "";
    assert_int_equal(sworn_httpsig_base(&r, 1, keyid, base, sizeof(base), &len, params,
                                        sizeof(params), &plen, &why),
                     -1);
    r.method = "GET";
    r.scheme = "tcp";
    assert_int_equal(sworn_httpsig_base(&r, 1, keyid, base, sizeof(base), &len, params,
                                        sizeof(params), &plen, &why),
                     -1);
    r.scheme = "wss";
    assert_int_equal(sworn_httpsig_base(&r, 1, "C3A1", base, sizeof(base), &len, params,
                                        sizeof(params), &plen, &why),
                     -1);
    assert_int_equal(sworn_httpsig_base(&r, -1, keyid, base, sizeof(base), &len, params,
                                        sizeof(params), &plen, &why),
                     -1);
    assert_int_equal(sworn_httpsig_base(&r, 1, keyid, base, sizeof(base), &len, params,
                                        sizeof(params), &plen, &why),
                     0);
    assert_true(sworn_httpsig_applies("ws", "GET"));
    assert_false(sworn_httpsig_applies("tcp", "CONNECT"));
    assert_false(sworn_httpsig_applies("https", ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_b21),           cmocka_unit_test(test_b22),
        cmocka_unit_test(test_b23),           cmocka_unit_test(test_b24),
        cmocka_unit_test(test_b25),           cmocka_unit_test(test_b26),
        cmocka_unit_test(test_refused),       cmocka_unit_test(test_shape),
        cmocka_unit_test(test_sworn_profile),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
