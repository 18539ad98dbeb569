/*
 * test_proxy_dest.c -- unit tests of proxy/p_dest.c: destination URLs of the proxy's
 * configuration are read into the canonical form, refused with a sentence when malformed, and
 * matched against canonical resources so that no spelling of a request's target escapes one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "p_dest.h"
#include "resource.h"
#include "testutil.h"

static void test_parse_ok(void **state)
{
    struct sworn_pdest d;
    const char *why = NULL;

    (void)state;
    assert_int_equal(sworn_pdest_parse("https://API.Example.com./v1/", &d, &why), 0);
    assert_string_equal(d.scheme, "https");
    assert_string_equal(d.host, "api.example.com");
    assert_int_equal(d.port, 443);
    assert_string_equal(d.path, "/v1/");
    assert_int_equal(sworn_pdest_parse("http://127.0.0.1:8080", &d, &why), 0);
    assert_string_equal(d.host, "127.0.0.1");
    assert_int_equal(d.port, 8080);
    assert_string_equal(d.path, "/");
    assert_int_equal(sworn_pdest_parse("http://[::1]:9/a/%7Eb/../c", &d, &why), 0);
    assert_string_equal(d.host, "[::1]");
    assert_int_equal(d.port, 9);
    assert_string_equal(d.path, "/a/c");
}

static void test_parse_refused(void **state)
{
    static const char *const bad[] = {
        "ftp://a.example/",       "https:/a.example/",      "https://",
        "https://:443/",          "https://a.example:0",    "https://a.example:65536/",
        "https://a.example:08",   "https://a.example:x",    "https://u@a.example/",
        "https://a.example/?q",   "https://a.example/#f",   "https://a.example/a b",
        "https://[::1/",          "https://[::1]x/",        "https://0x7f.1/",
        "https://a.example/%2F",  "https://a.example/a;p/", "HTTPS://a.example/",
        "https://a.example/\x01",
    };
    struct sworn_pdest d;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *why = NULL;

        assert_int_equal(sworn_pdest_parse(bad[i], &d, &why), 1);
        assert_non_null(why);
        assert_string_equal(d.host, "");
    }
    {
        char big[SWORN_PDEST_URL_MAX + 16] = "https://a.example/";
        const char *why = NULL;

        size_t used = strlen(big);

        memset(big + used, 'a', sizeof(big) - used - 1);
        big[sizeof(big) - 1] = '\0';
        assert_int_equal(sworn_pdest_parse(big, &d, &why), 1);
    }
}

static void test_matches(void **state)
{
    struct sworn_pdest d[2];
    struct sworn_resource c;
    const char *why = NULL;

    (void)state;
    assert_int_equal(sworn_pdest_parse("https://mcp.example/mcp", &d[0], &why), 0);
    assert_int_equal(sworn_pdest_parse("http://models.example:8080/v1/", &d[1], &why), 0);
    sworn_test_canon("https", "MCP.example", 443, "/mcp", &c);
    assert_ptr_equal(sworn_pdest_find(d, 2, &c), &d[0]);
    sworn_test_canon("https", "mcp.example", 443, "/x/../mcp/", &c);
    assert_ptr_equal(sworn_pdest_find(d, 2, &c), &d[0]);
    sworn_test_canon("https", "mcp.example", 443, "/%6Dcp?x=1", &c);
    assert_ptr_equal(sworn_pdest_find(d, 2, &c), &d[0]);
    sworn_test_canon("https", "mcp.example", 443, "/mcpx", &c);
    assert_null(sworn_pdest_find(d, 2, &c));
    sworn_test_canon("https", "mcp.example", 443, "/mcp;x/y", &c);
    assert_null(sworn_pdest_find(d, 2, &c));
    sworn_test_canon("http", "mcp.example", 443, "/mcp", &c);
    assert_null(sworn_pdest_find(d, 2, &c));
    sworn_test_canon("wss", "mcp.example", 443, "/mcp", &c);
    assert_null(sworn_pdest_find(d, 2, &c));
    sworn_test_canon("https", "mcp.example", 8443, "/mcp", &c);
    assert_null(sworn_pdest_find(d, 2, &c));
    sworn_test_canon("http", "models.example", 8080, "/v1/chat/completions", &c);
    assert_ptr_equal(sworn_pdest_find(d, 2, &c), &d[1]);
    sworn_test_canon("http", "models.example", 8080, "/v1", &c);
    assert_null(sworn_pdest_find(d, 2, &c));
    sworn_test_canon("tcp", "models.example", 8080, "", &c);
    assert_null(sworn_pdest_find(d, 2, &c));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ok),
        cmocka_unit_test(test_parse_refused),
        cmocka_unit_test(test_matches),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
