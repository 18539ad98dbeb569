/*
 * test_pkcs11uri.c -- RFC 7512 URIs: the forms sworn-hsm prints and the RFC's examples parse;
 * hostile and secret-bearing URIs are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "pkcs11uri.h"

static int parse(const char *uri, struct sworn_pkcs11_uri *out)
{
    return sworn_pkcs11_uri_parse(uri, strlen(uri), out);
}

static void test_accepts(void **state)
{
    struct sworn_pkcs11_uri u;

    (void)state;
    assert_int_equal(
        parse("pkcs11:token=sworn-test;id=%C8%25%84;object=sworn%2Fcheckpoint%2F20261129", &u), 0);
    assert_string_equal(u.token, "sworn-test");
    assert_string_equal(u.object, "sworn/checkpoint/20261129");
    assert_int_equal(u.id_len, 3);
    assert_memory_equal(u.id, "\xc8\x25\x84", 3);
    /* From RFC 7512 section 3.3 (the query part aside, which sworn refuses). */
    assert_int_equal(parse("pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;"
                           "manufacturer=Snake%20Oil,%20Inc.;model=1.0;object=my-certificate;"
                           "type=private",
                           &u),
                     0);
    assert_string_equal(u.token, "The Software PKCS#11 Softtoken");
    assert_string_equal(u.manufacturer, "Snake Oil, Inc.");
    assert_string_equal(u.model, "1.0");
    assert_int_equal(parse("pkcs11:object=a;serial=DECC0401648", &u), 0);
    assert_string_equal(u.serial, "DECC0401648");
    assert_int_equal(parse("pkcs11:id=%01", &u), 0);
    assert_int_equal(u.has_id, 1);
}

static void expect_refused(const char *uri, const char *needle)
{
    struct sworn_pkcs11_uri u;

    if (parse(uri, &u) == 0)
        fail_msg("accepted %s", uri);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    if (needle != NULL && strstr(sworn_err_msg(), needle) == NULL)
        fail_msg("%s refused with \"%s\", expected \"%s\"", uri, sworn_err_msg(), needle);
}

static void test_refuses(void **state)
{
    char longer[2048];

    (void)state;
    expect_refused("", NULL);
    expect_refused("pkcs11", NULL);
    expect_refused("PKCS11:object=a", NULL);
    expect_refused("pkcs11:", "name the key");
    expect_refused("pkcs11:token=t", "name the key");
    expect_refused("pkcs11:object=a?pin-value=1234", "query");
    expect_refused("pkcs11:object=a?pin-source=file:/etc/pin", "query");
    expect_refused("pkcs11:object=a?module-path=/tmp/evil.so", "query");
    expect_refused("pkcs11:object=a;object=b", "twice");
    expect_refused("pkcs11:object=a;library-version=1", "unknown attribute");
    expect_refused("pkcs11:object=", "empty");
    expect_refused("pkcs11:object", "without '='");
    expect_refused("pkcs11:object=a;", "trailing");
    expect_refused("pkcs11:object=a%2", "cut");
    expect_refused("pkcs11:object=a%zz", "bad");
    expect_refused("pkcs11:object=a b", "escaped");
    expect_refused("pkcs11:object=a/b", "escaped");
    expect_refused("pkcs11:object=a%00b", "NUL");
    expect_refused("pkcs11:type=public;object=a", "private");
    expect_refused("pkcs11:object=a;token=123456789012345678901234567890123", "longer");
    memset(longer, 'a', sizeof(longer) - 1);
    memcpy(longer, "pkcs11:object=", 14);
    longer[sizeof(longer) - 1] = '\0';
    expect_refused(longer, "longer");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts),
        cmocka_unit_test(test_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
