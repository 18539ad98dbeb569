/*
 * test_proxy_httpsig_conf.c -- proxy/p_sign.c: the `signing:` key of the proxy's configuration
 * (read, refusals with their line and column), which canonical resources lie under a signing
 * destination (a WebSocket upgrade under the http(s) destination it upgrades), the field names
 * dropped from the agent's request (every spelling a server reads as the real ones), and the
 * header lines written from a Decision, byte for byte, with the refusals that keep an allow that
 * cannot carry its signature from going upstream.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "p_config.h"
#include "p_sign.h"
#include "resource.h"
#include "testutil.h"

#define NAME "proxy.yaml"
#define MIN                                                                                        \
    "listen: [{unix: /run/a.sock, principal: p}]\n"                                                \
    "decisiond: {socket: /run/d.sock}\n"                                                           \
    "ca: {cert: /etc/c.crt, key: /etc/c.key}\n"

static struct sworn_pconf *load(const char *text, int want)
{
    struct sworn_pconf *c = calloc(1, sizeof(*c));

    assert_non_null(c);
    if (sworn_pconf_load_mem(NAME, (const uint8_t *)text, strlen(text), c) != want)
        fail_msg("load gave not %d: %s\n--- input:\n%s", want, sworn_err_msg(), text);
    return c;
}

static void refused(const char *text, const char *pos, const char *sub)
{
    char want[64];

    free(load(text, -1));
    snprintf(want, sizeof(want), NAME ":%s", pos);
    if (strncmp(sworn_err_msg(), want, strlen(want)) != 0 || strstr(sworn_err_msg(), sub) == NULL)
        fail_msg("got \"%s\"; want \"%s...%s...\"", sworn_err_msg(), want, sub);
}

static void test_config(void **state)
{
    static struct sworn_resource r;
    struct sworn_pconf *c;
    char big[8192];
    size_t at;

    (void)state;
    c = load(MIN, 0);
    assert_int_equal(c->signing.n, 0);
    free(c);
    c = load(MIN "signing:\n  - https://API.example.com/v1/\n  - http://127.0.0.1:8080/s\n", 0);
    assert_int_equal(c->signing.n, 2);
    assert_string_equal(c->signing.dests[0].host, "api.example.com");
    sworn_test_canon("https", "api.example.com", 443, "/v1/a/../b?x=1", &r);
    assert_true(sworn_psign_wants(&c->signing, &r));
    sworn_test_canon("wss", "api.example.com", 443, "/v1/socket",
                     &r); /* the upgrade of https://.../v1/ */
    assert_true(sworn_psign_wants(&c->signing, &r));
    sworn_test_canon("ws", "api.example.com", 443, "/v1/socket",
                     &r); /* not the https destination */
    assert_false(sworn_psign_wants(&c->signing, &r));
    sworn_test_canon("https", "api.example.com", 443, "/v2/x", &r);
    assert_false(sworn_psign_wants(&c->signing, &r));
    sworn_test_canon("http", "127.0.0.1", 8080, "/sx", &r); /* "/s" is a segment, not a prefix */
    assert_false(sworn_psign_wants(&c->signing, &r));
    sworn_test_canon("http", "127.0.0.1", 8080, "/s/x", &r);
    assert_true(sworn_psign_wants(&c->signing, &r));
    sworn_test_canon("tcp", "127.0.0.1", 8080, "", &r);
    assert_false(sworn_psign_wants(&c->signing, &r));
    free(c);
    refused(MIN "signing: https://api.example.com/\n", "4:10: ", "signing must be a list");
    refused(MIN "signing: []\n", "4:10: ", "1 to 32 destination URLs");
    refused(MIN "signing: [\"ftp://a.example/\"]\n", "4:11: ", "signing: ");
    refused(MIN "signing: [\"https://a.example/?q\"]\n", "4:11: ", "signing: ");
    refused(MIN "signing: [\"https://a.example/x\", \"https://A.example:443/x\"]\n",
            "4:", "listed twice");
    refused(MIN "signing: [{url: x}]\n", "4:11: ", "");
    at = (size_t)snprintf(big, sizeof(big), MIN "signing:\n");
    for (int i = 0; i < 33; i++)
        at += (size_t)snprintf(big + at, sizeof(big) - at, "  - https://a%d.example/\n", i);
    refused(big, "5:3: ", "1 to 32 destination URLs");
    /* A token endpoint is never signed (its body is rewritten after the decision): the same
     * URL, a signing prefix above it, and a token endpoint above a signing destination. */
    c = load(MIN "signing: [\"https://api.example/v1/\"]\n"
                 "oauth: {token_endpoints: [\"https://api.example/v2/token\", "
                 "\"https://idp.example/token\"]}\n",
             0);
    free(c);
    refused(MIN "signing: [\"https://idp.example/token\"]\n"
                "oauth: {token_endpoints: [\"https://IDP.example:443/token\"]}\n",
            "4:10: ", "is also an OAuth token endpoint");
    refused(MIN "signing: [\"https://idp.example/\"]\n"
                "oauth: {token_endpoints: [\"https://idp.example/oauth/token\"]}\n",
            "4:10: ", "its body is rewritten after the decision");
    refused(MIN "signing: [\"https://idp.example/oauth/token/x\"]\n"
                "oauth: {token_endpoints: [\"https://idp.example/oauth\"]}\n",
            "4:10: ", "cannot be signed");
}

static void test_fields_dropped(void **state)
{
    static const char *const always[] = {"sworn-entry", "Sworn-Entry", "SWORN_ENTRY",
                                         "sworn_entry"};
    static const char *const signing[] = {"signature",       "Signature",       "SIGNATURE",
                                          "signature-input", "Signature_Input", "content-digest",
                                          "CONTENT_DIGEST"};
    static const char *const kept[] = {"signatures",      "x-signature",  "signature-inputs",
                                       "content-digests", "sworn-entry2", "digest",
                                       "sworn-log-index"};

    (void)state;
    for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++) {
        assert_true(sworn_psign_field_dropped(always[i], strlen(always[i]), 0));
        assert_true(sworn_psign_field_dropped(always[i], strlen(always[i]), 1));
    }
    for (size_t i = 0; i < sizeof(signing) / sizeof(signing[0]); i++) {
        assert_false(sworn_psign_field_dropped(signing[i], strlen(signing[i]), 0));
        assert_true(sworn_psign_field_dropped(signing[i], strlen(signing[i]), 1));
    }
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        assert_false(sworn_psign_field_dropped(kept[i], strlen(kept[i]), 1));
}

static void test_headers(void **state)
{
    static const char params[] = "(\"@method\" \"@authority\" \"@path\" \"@query\" "
                                 "\"content-digest\" \"sworn-entry\");created=1764633600;"
                                 "keyid=\"ab\";alg=\"ecdsa-p256-sha256\";tag=\"sworn\"";
    Sworn__V1__Decision d = SWORN__V1__DECISION__INIT;
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;
    uint8_t sig[64], leaf[32], body[32];
    char out[SWORN_PSIGN_HEADERS_MAX], want[2048];
    size_t len = 0;
    const char *why = NULL;

    (void)state;
    for (int i = 0; i < 64; i++)
        sig[i] = (uint8_t)i;
    for (int i = 0; i < 32; i++) {
        leaf[i] = (uint8_t)(0x80 + i);
        body[i] = (uint8_t)i;
    }
    d.entry_hash.data = leaf;
    d.entry_hash.len = 32;
    /* no receipt, a digest receipt: never sent */
    assert_int_equal(sworn_psign_headers(&d, NULL, 0, out, sizeof(out), &len, &why), 1);
    assert_string_equal(
        why, "this destination is signed and the decision carries no RFC 9421 signature");
    r.signature.data = sig;
    r.signature.len = 64;
    r.alg = 1;
    d.receipt = &r;
    assert_int_equal(sworn_psign_headers(&d, NULL, 0, out, sizeof(out), &len, &why), 1);
    r.form = 1;
    r.created = 1764633600;
    r.signature_params = (char *)params;
    /* a credential in the query is not in the signed query */
    assert_int_equal(sworn_psign_headers(&d, body, 1, out, sizeof(out), &len, &why), 1);
    assert_string_equal(why, "this destination is signed and a credential in the query or the form "
                             "body is not in the signature");
    assert_int_equal(sworn_psign_headers(&d, body, 0, out, sizeof(out), &len, &why), 0);
    snprintf(
        want, sizeof(want),
        "Signature-Input: sworn=%s\r\n"
        "Signature: sworn=:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEy"
        "MzQ1Njc4OTo7PD0+Pw==:\r\n"
        "Content-Digest: sha-256=:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=:\r\n"
        "Sworn-Entry: :gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp8=:\r\n",
        params);
    assert_int_equal(len, strlen(want));
    assert_string_equal(out, want);
    /* no body: no Content-Digest */
    assert_int_equal(sworn_psign_headers(&d, NULL, 0, out, sizeof(out), &len, &why), 0);
    assert_null(strstr(out, "Content-Digest"));
    /* a signature that is not 64 bytes, an entry hash that is not 32 */
    r.signature.len = 63;
    assert_int_equal(sworn_psign_headers(&d, NULL, 0, out, sizeof(out), &len, &why), 1);
    r.signature.len = 64;
    d.entry_hash.len = 31;
    assert_int_equal(sworn_psign_headers(&d, NULL, 0, out, sizeof(out), &len, &why), 1);
    d.entry_hash.len = 32;
    /* too little room */
    assert_int_equal(sworn_psign_headers(&d, NULL, 0, out, 100, &len, &why), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_fields_dropped),
        cmocka_unit_test(test_headers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
