/*
 * test_proxy_json.c -- unit tests of proxy/p_json.c: strict JSON before json-c, and the numbers
 * of a subtree with their pointers and exact text.
 *
 * Each refusal is checked on a text json-c (STRICT) itself accepts, where that is the point of the
 * rule: a proxy deciding on json-c's reading of such a text would decide on something the server
 * reads another way.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p_json.h"

static int parse(const char *text, const char **why)
{
    struct json_object *root = NULL;
    int rc = sworn_pjson_parse((const uint8_t *)text, strlen(text), &root, why);

    if (rc != 0)
        assert_null(root);
    json_object_put(root);
    return rc;
}

static void test_accepts(void **state)
{
    static const char *const good[] = {
        "{}",
        "[]",
        " {\"a\" : [1, -2.5e+3, 0, -0, 0.0, 1E9, true, false, null, \"x\"]} \r\n",
        "\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
        "null",
        "0",
        "\"\\u0000\"",
        "{\"a\":{\"a\":{\"a\":1}},\"b\":{\"a\":2}}",
        "{\"\xc3\xa9\":1,\"e\\u0301\":2}",
    };
    const char *why = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        if (parse(good[i], &why) != 0)
            fail_msg("refused %s: %s", good[i], why);
        assert_null(why);
    }
}

static void test_refuses(void **state)
{
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"{'a':1}", "an object member does not start with a double-quoted name"},
        {"{\"a\":NaN}", "a value that is none of RFC 8259's"},
        {"{\"a\":Infinity}", "a value that is none of RFC 8259's"},
        {"{\"a\":1}//c", "bytes follow the value"},
        {"{\"a\":1,}", "an object member does not start with a double-quoted name"},
        {"[1,]", "a value that is none of RFC 8259's"},
        {"{\"a\":01}", "an object member is not followed by ',' or '}'"},
        {"{\"a\":+1}", "a value that is none of RFC 8259's"},
        {"{\"a\":.5}", "a value that is none of RFC 8259's"},
        {"{\"a\":1.}", "a number with no digit after '.'"},
        {"{\"a\":1e}", "a number with no digit in its exponent"},
        {"{\"a\":0x10}", "an object member is not followed by ',' or '}'"},
        {"01", "bytes follow the value"},
        {"\xef\xbb\xbf{}", "it starts with a byte order mark"},
        {"", "it is empty"},
        {"  \n", "it is empty"},
        {"{} {}", "bytes follow the value"},
        {"{\"a\":\"x\ty\"}", "a string holds a raw control character"},
        {"{\"a\":\"\xc0\xaf\"}", "a string is not UTF-8"},
        {"{\"a\":\"\xed\xa0\x80\"}", "a string is not UTF-8"},
        {"{\"a\":\"\\x41\"}", "a backslash escape RFC 8259 does not define"},
        {"{\"a\":\"\\u12\"}", "a \\u escape without four hex digits"},
        {"{\"a\":\"\\udc00\"}", "a \\u escape of a lone low surrogate"},
        {"{\"a\":\"\\ud800\"}", "a \\u escape of a high surrogate without its low surrogate"},
        {"{\"a\":\"\\ud800\\u0041\"}", "a \\u escape of a high surrogate without its low"},
        {"{\"a\":1,\"a\":2}", "an object has two members of one name"},
        {"{\"a\":1,\"\\u0061\":2}", "an object has two members of one name"},
        {"{\"\xc3\xa9\":1,\"\\u00e9\":2}", "an object has two members of one name"},
        {"{\"x\":{\"name\":\"safe\",\"b\":1,\"name\":\"pay\"}}", "two members of one name"},
        {"{\"name\":\"pay\",\"name\\u0000x\":\"safe\"}", "a member name holds U+0000"},
        {"{\"a\" 1}", "a member name without ':'"},
        {"{\"a\":1 \"b\":2}", "an object member is not followed by ',' or '}'"},
        {"[1 2]", "an array element is not followed by ',' or ']'"},
        {"{\"a\":\"x", "a string has no closing quote"},
        {"{\"a\":\"x\\", "a string has no closing quote"},
        {"[", "it ends where a value should be"},
        {"tru", "a value that is none of RFC 8259's"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *why = NULL;

        if (parse(bad[i].text, &why) != 1)
            fail_msg("accepted %s", bad[i].text);
        assert_non_null(why);
        assert_int_equal(strncmp(why, "the body is not strict JSON: ", 29), 0);
        if (strstr(why, bad[i].why) == NULL)
            fail_msg("%s: said \"%s\", not \"%s\"", bad[i].text, why, bad[i].why);
    }
}

static void test_depth_and_members(void **state)
{
    char deep[2 * 70 + 1];
    const char *why = NULL;
    char *wide;
    size_t at = 0;

    (void)state;
    for (unsigned d = 64; d <= 65; d++) {
        memset(deep, '[', d);
        memset(deep + d, ']', d);
        deep[2 * d] = '\0';
        assert_int_equal(parse(deep, &why), d <= SWORN_PJSON_DEPTH_MAX ? 0 : 1);
    }
    assert_non_null(strstr(why, "nest more than 64 deep"));
    /* 65537 members of distinct names: refused; 65536 accepted (and checked for duplicates). */
    wide = malloc(65537u * 12u + 4);
    assert_non_null(wide);
    for (unsigned n = 65536; n <= 65537; n++) {
        at = 0;
        wide[at++] = '{';
        for (unsigned i = 0; i < n; i++)
            at += (size_t)sprintf(wide + at, "%s\"%x\":0", i > 0 ? "," : "", i);
        wide[at++] = '}';
        wide[at] = '\0';
        why = NULL;
        assert_int_equal(parse(wide, &why), n <= SWORN_PJSON_MEMBERS_MAX ? 0 : 1);
    }
    assert_non_null(strstr(why, "more than 65536 members"));
    /* The same, with one duplicate at the end: found. */
    at = 0;
    wide[at++] = '{';
    for (unsigned i = 0; i < 1000; i++)
        at += (size_t)sprintf(wide + at, "%s\"%x\":0", i > 0 ? "," : "", i);
    at += (size_t)sprintf(wide + at, ",\"\\u0031f\":0}");
    assert_int_equal(parse(wide, &why), 1);
    assert_non_null(strstr(why, "two members of one name"));
    free(wide);
}

static void test_numbers(void **state)
{
    static const char text[] =
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"params\":{\"name\":\"pay\",\"arguments\":{\"amount\":12."
        "50,"
        "\"a/b\":1e3,\"t~x\":-0,\"list\":[1,{\"deep\":2}],\"s\":\"3\",\"\\u00e9\":4}}}";
    struct sworn_pjson_number out[SWORN_PJSON_NUMBERS_MAX];
    size_t n = 0;
    int more = -1;

    (void)state;
    assert_int_equal(parse(text, &(const char *){NULL}), 0);
    sworn_pjson_numbers((const uint8_t *)text, strlen(text), "/params/arguments", out,
                        SWORN_PJSON_NUMBERS_MAX, &n, &more);
    assert_int_equal(more, 0);
    assert_int_equal(n, 6);
    assert_string_equal(out[0].pointer, "/amount");
    assert_string_equal(out[0].text, "12.50");
    assert_string_equal(out[1].pointer, "/a~1b");
    assert_string_equal(out[1].text, "1e3");
    assert_string_equal(out[2].pointer, "/t~0x");
    assert_string_equal(out[2].text, "-0");
    assert_string_equal(out[3].pointer, "/list/0");
    assert_string_equal(out[4].pointer, "/list/1/deep");
    assert_string_equal(out[5].pointer, "/\xc3\xa9");
    /* The whole text, and a cap: "id" first, then some left out. */
    sworn_pjson_numbers((const uint8_t *)text, strlen(text), "", out, 2, &n, &more);
    assert_int_equal(n, 2);
    assert_int_equal(more, 1);
    assert_string_equal(out[0].pointer, "/id");
    assert_string_equal(out[1].pointer, "/params/arguments/amount");
    /* Under a prefix that is not a whole segment: nothing ("/params/arg" is not
     * "/params/arguments"). */
    sworn_pjson_numbers((const uint8_t *)text, strlen(text), "/params/arg", out, 8, &n, &more);
    assert_int_equal(n, 0);
    assert_int_equal(more, 0);
    /* A number at `under` itself is not below it. */
    sworn_pjson_numbers((const uint8_t *)text, strlen(text), "/id", out, 8, &n, &more);
    assert_int_equal(n, 0);
    /* Refused text: nothing, and "left out". */
    sworn_pjson_numbers((const uint8_t *)"{\"a\":1,\"a\":2}", 13, "", out, 8, &n, &more);
    assert_int_equal(n, 0);
    assert_int_equal(more, 1);
}

static void test_numbers_left_out(void **state)
{
    char text[1024];
    struct sworn_pjson_number out[4];
    size_t n = 0;
    int more = 0;
    char longname[300];

    (void)state;
    /* A member name that makes the pointer longer than 256 bytes, a control character in a
     * name, a number text over 64 bytes: each left out, the others kept. */
    memset(longname, 'k', 260);
    longname[260] = '\0';
    snprintf(text, sizeof(text), "{\"%s\":1,\"c\\nx\":2,\"big\":1%070d,\"ok\":3}", longname, 0);
    assert_int_equal(parse(text, &(const char *){NULL}), 0);
    sworn_pjson_numbers((const uint8_t *)text, strlen(text), "", out, 4, &n, &more);
    assert_int_equal(more, 1);
    assert_int_equal(n, 1);
    assert_string_equal(out[0].pointer, "/ok");
    assert_string_equal(out[0].text, "3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts),           cmocka_unit_test(test_refuses),
        cmocka_unit_test(test_depth_and_members), cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_numbers_left_out),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
