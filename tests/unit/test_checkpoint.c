/*
 * test_checkpoint.c -- unit tests of checkpoint.c (C2SP tlog-checkpoint bodies).
 *
 * Formatting then parsing gives back what went in, for edge values of every field; every
 * hostile body (missing or extra lines, non-canonical sizes, roots of the wrong length, bad
 * origins and extension lines, missing newlines) is refused with sworn_err set, and the output
 * struct is left untouched. Real checkpoints from the tessera vectors are covered in test_note.c,
 * which verifies their signatures and parses their bodies.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "encoding.h"
#include "err.h"
#include "testutil.h"

/* A valid root line: base64 of 32 bytes 0x00..0x1f. */
static const char root_b64[] = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

static void round_trip(const char *origin, uint64_t size)
{
    uint8_t root[SWORN_HASH_LEN];
    char body[SWORN_CHECKPOINT_BODY_MAX + 1];
    struct sworn_checkpoint cp;
    long len;

    for (int i = 0; i < SWORN_HASH_LEN; i++)
        root[i] = (uint8_t)(i * 7 + (int)(size & 0xff));
    len = sworn_checkpoint_format(origin, size, root, body, sizeof(body));
    if (len < 0)
        fail_msg("format failed for %s: %s", origin, sworn_err_msg());
    assert_int_equal((size_t)len, strlen(body));
    assert_int_equal(sworn_checkpoint_parse(body, (size_t)len, &cp), 0);
    assert_string_equal(cp.origin, origin);
    assert_int_equal(cp.size, size);
    assert_memory_equal(cp.root, root, SWORN_HASH_LEN);
    assert_null(cp.extensions);
    assert_int_equal(cp.extensions_len, 0);
    /* Exactly enough room (length plus NUL) works; one byte less does not. */
    assert_int_equal(sworn_checkpoint_format(origin, size, root, body, (size_t)len + 1), len);
    assert_int_equal(sworn_checkpoint_format(origin, size, root, body, (size_t)len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_string_equal(body, "");
}

static void test_round_trip(void **state)
{
    char longest[SWORN_CHECKPOINT_ORIGIN_MAX + 1];

    (void)state;
    memset(longest, 'o', SWORN_CHECKPOINT_ORIGIN_MAX);
    longest[SWORN_CHECKPOINT_ORIGIN_MAX] = '\0';
    round_trip("example.com/log", 0);
    round_trip("example.com/log", 1);
    round_trip("example.com/log", 10);
    round_trip("example.com/log", UINT64_MAX);
    round_trip("a", 12345678901234567890u);
    round_trip("an origin with spaces", 3);
    round_trip("caf\xc3\xa9.example/\xe2\x9c\x93", 4);
    round_trip(longest, UINT64_MAX); /* the longest body: SWORN_CHECKPOINT_BODY_MAX */
}

static void test_exact_text(void **state)
{
    uint8_t root[SWORN_HASH_LEN];
    char body[256];
    size_t n = 0;

    (void)state;
    assert_int_equal(sworn_base64_decode(root_b64, strlen(root_b64), root, sizeof(root), &n), 0);
    assert_int_equal(sworn_checkpoint_format("example.com/log", 42, root, body, sizeof(body)),
                     (long)strlen("example.com/log\n42\n") + 44 + 1);
    assert_string_equal(body,
                        "example.com/log\n42\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n");
}

static void test_extensions(void **state)
{
    static const char body[] = "example.com/log\n5\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n"
                               "ext one\n"
                               "\xe2\x80\x94 two\n";
    struct sworn_checkpoint cp;

    (void)state;
    assert_int_equal(sworn_checkpoint_parse(body, strlen(body), &cp), 0);
    assert_int_equal(cp.size, 5);
    assert_non_null(cp.extensions);
    assert_int_equal(cp.extensions_len, strlen("ext one\n\xe2\x80\x94 two\n"));
    assert_memory_equal(cp.extensions, "ext one\n\xe2\x80\x94 two\n", cp.extensions_len);
    assert_ptr_equal(cp.extensions, body + strlen(body) - cp.extensions_len);
}

static void expect_bad(const char *body, size_t len, enum sworn_err_code code, const char *what)
{
    struct sworn_checkpoint cp;

    memset(&cp, 0x5a, sizeof(cp));
    sworn_err_clear();
    if (sworn_checkpoint_parse(body, len, &cp) == 0)
        fail_msg("accepted a checkpoint with %s", what);
    if (sworn_err_code() != code)
        fail_msg("%s: error %s (%s), expected %s", what, sworn_err_name(sworn_err_code()),
                 sworn_err_msg(), sworn_err_name(code));
    /* Nothing written on error. */
    assert_int_equal(((unsigned char *)&cp)[0], 0x5a);
    assert_int_equal(((unsigned char *)&cp)[sizeof(cp) - 1], 0x5a);
}

#define BAD(body, code, what) expect_bad(body, sizeof(body) - 1, code, what)
#define ROOT "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

static void test_hostile(void **state)
{
    char origin[SWORN_CHECKPOINT_ORIGIN_MAX + 64];

    (void)state;
    /* Missing lines and newlines. */
    BAD("", SWORN_ERR_FORMAT, "nothing");
    BAD("example.com/log", SWORN_ERR_FORMAT, "only an unterminated origin");
    BAD("example.com/log\n", SWORN_ERR_FORMAT, "only an origin");
    BAD("example.com/log\n5\n", SWORN_ERR_FORMAT, "no root");
    BAD("example.com/log\n5\n" ROOT, SWORN_ERR_FORMAT, "no final newline");
    BAD("example.com/log\n" ROOT "\n", SWORN_ERR_FORMAT, "no size");
    BAD("5\n" ROOT "\n", SWORN_ERR_FORMAT, "no origin");
    /* The size. */
    BAD("example.com/log\n05\n" ROOT "\n", SWORN_ERR_FORMAT, "a leading zero");
    BAD("example.com/log\n00\n" ROOT "\n", SWORN_ERR_FORMAT, "a zero with a leading zero");
    BAD("example.com/log\n+5\n" ROOT "\n", SWORN_ERR_FORMAT, "a plus sign");
    BAD("example.com/log\n-5\n" ROOT "\n", SWORN_ERR_FORMAT, "a minus sign");
    BAD("example.com/log\n 5\n" ROOT "\n", SWORN_ERR_FORMAT, "a leading space");
    BAD("example.com/log\n5 \n" ROOT "\n", SWORN_ERR_FORMAT, "a trailing space");
    BAD("example.com/log\n\n" ROOT "\n", SWORN_ERR_FORMAT, "an empty size");
    BAD("example.com/log\n0x5\n" ROOT "\n", SWORN_ERR_FORMAT, "hex");
    BAD("example.com/log\n5\r\n" ROOT "\n", SWORN_ERR_FORMAT, "CRLF");
    BAD("example.com/log\n18446744073709551616\n" ROOT "\n", SWORN_ERR_RANGE, "2^64");
    BAD("example.com/log\n99999999999999999999\n" ROOT "\n", SWORN_ERR_RANGE, "20 nines");
    BAD("example.com/log\n100000000000000000000\n" ROOT "\n", SWORN_ERR_FORMAT, "21 digits");
    /* The root. */
    BAD("example.com/log\n5\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg==\n", SWORN_ERR_FORMAT,
        "a 31-byte root");
    BAD("example.com/log\n5\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g\n", SWORN_ERR_FORMAT,
        "a 33-byte root (44 characters, unpadded)");
    BAD("example.com/log\n5\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gIQ==\n", SWORN_ERR_FORMAT,
        "a 34-byte root");
    BAD("example.com/log\n5\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\n", SWORN_ERR_FORMAT,
        "an unpadded root");
    BAD("example.com/log\n5\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9=\n", SWORN_ERR_FORMAT,
        "non-zero trailing bits");
    BAD("example.com/log\n5\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\r\n", SWORN_ERR_FORMAT,
        "CR after the root");
    BAD("example.com/log\n5\n\n", SWORN_ERR_FORMAT, "an empty root");
    BAD("example.com/log\n5\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd-h8=\n", SWORN_ERR_FORMAT,
        "URL-safe base64");
    /* The origin. */
    BAD("\n5\n" ROOT "\n", SWORN_ERR_FORMAT, "an empty origin");
    BAD("example.com/log\r\n5\n" ROOT "\n", SWORN_ERR_FORMAT, "CR in the origin");
    BAD("example\tcom\n5\n" ROOT "\n", SWORN_ERR_FORMAT, "TAB in the origin");
    BAD("example\x7f"
        "com\n5\n" ROOT "\n",
        SWORN_ERR_FORMAT, "DEL in the origin");
    BAD("example\xff"
        "com\n5\n" ROOT "\n",
        SWORN_ERR_FORMAT, "a 0xff byte in the origin");
    BAD("example\xc0\xae"
        "com\n5\n" ROOT "\n",
        SWORN_ERR_FORMAT, "an overlong '.'");
    BAD("example\xed\xb0\x80"
        "com\n5\n" ROOT "\n",
        SWORN_ERR_FORMAT, "a surrogate");
    BAD("example\xe2\x80\n5\n" ROOT "\n", SWORN_ERR_FORMAT, "a truncated sequence");
    expect_bad("a\0b\n5\n" ROOT "\n", 4 + 2 + 45, SWORN_ERR_FORMAT, "NUL in the origin");
    memset(origin, 'o', sizeof(origin));
    memcpy(origin + SWORN_CHECKPOINT_ORIGIN_MAX + 1, "\n5\n" ROOT "\n", 3 + 45);
    expect_bad(origin, SWORN_CHECKPOINT_ORIGIN_MAX + 1 + 3 + 45, SWORN_ERR_FORMAT,
               "a 256-byte origin");
    /* ...while 255 bytes are fine. */
    {
        struct sworn_checkpoint cp;

        assert_int_equal(
            sworn_checkpoint_parse(origin + 1, SWORN_CHECKPOINT_ORIGIN_MAX + 3 + 45, &cp), 0);
        assert_int_equal(strlen(cp.origin), SWORN_CHECKPOINT_ORIGIN_MAX);
    }
    /* Extension lines. */
    BAD("example.com/log\n5\n" ROOT "\n\n", SWORN_ERR_FORMAT, "an empty extension line");
    BAD("example.com/log\n5\n" ROOT "\next\n\n", SWORN_ERR_FORMAT, "a trailing empty line");
    BAD("example.com/log\n5\n" ROOT "\next\n\nmore\n", SWORN_ERR_FORMAT, "an empty line inside");
    BAD("example.com/log\n5\n" ROOT "\next", SWORN_ERR_FORMAT, "an unterminated extension");
    BAD("example.com/log\n5\n" ROOT "\next\r\n", SWORN_ERR_FORMAT, "CR in an extension");
    BAD("example.com/log\n5\n" ROOT "\ne\xffxt\n", SWORN_ERR_FORMAT, "bad UTF-8 in an extension");
    /* NULL arguments. */
    {
        struct sworn_checkpoint cp;

        assert_int_equal(sworn_checkpoint_parse(NULL, 0, &cp), -1);
        assert_int_equal(sworn_checkpoint_parse("x", 1, NULL), -1);
    }
}

static void test_format_refuses(void **state)
{
    uint8_t root[SWORN_HASH_LEN] = {0};
    char body[SWORN_CHECKPOINT_BODY_MAX + 64];
    char origin[SWORN_CHECKPOINT_ORIGIN_MAX + 2];
    static const char *const bad[] = {"",     "a\nb", "a\rb",     "a\tb",
                                      "\x7f", "\xff", "\xc0\x80", "\xe2\x80"};

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (sworn_checkpoint_format(bad[i], 1, root, body, sizeof(body)) >= 0)
            fail_msg("formatted bad origin %zu", i);
        assert_string_equal(body, "");
    }
    memset(origin, 'o', sizeof(origin) - 1);
    origin[sizeof(origin) - 1] = '\0';
    assert_int_equal(sworn_checkpoint_format(origin, 1, root, body, sizeof(body)), -1);
    assert_int_equal(sworn_checkpoint_format(NULL, 1, root, body, sizeof(body)), -1);
    assert_int_equal(sworn_checkpoint_format("o", 1, NULL, body, sizeof(body)), -1);
    assert_int_equal(sworn_checkpoint_format("o", 1, root, NULL, 10), -1);
    assert_int_equal(sworn_checkpoint_format("o", 1, root, body, 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),     cmocka_unit_test(test_exact_text),
        cmocka_unit_test(test_extensions),     cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_format_refuses),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
