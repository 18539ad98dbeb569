/*
 * test_proof.c -- unit tests of proof.c, the text form of Merkle proofs: round trips of proofs of
 * every length up to SWORN_MERKLE_MAX_PROOF, and hostile text (wrong line lengths, missing or
 * extra newlines, CR, non-canonical base64, too many lines, small output buffers).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "proof.h"

/* One text line of a proof: 44 base64 characters and '\n'. */
#define LINE_LEN (SWORN_BASE64_LEN(SWORN_HASH_LEN) + 1)

/* Deterministic filler so every run checks the same hashes. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

/* Parse text (not NUL-terminated as far as the parser knows), expecting failure with code. */
static void expect_parse_error(const char *text, size_t len, size_t max_count,
                               enum sworn_err_code code)
{
    uint8_t out[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    size_t count = 12345;

    assert_true(max_count <= SWORN_MERKLE_MAX_PROOF);
    sworn_err_clear();
    assert_int_equal(sworn_proof_parse(text, len, out, max_count, &count), -1);
    assert_int_equal(sworn_err_code(), code);
}

/* The text form of n filler hashes (free it). */
static char *text_of(size_t n, uint32_t seed, uint8_t *hashes)
{
    size_t cap = SWORN_PROOF_TEXT_LEN(n) + 1;
    char *text = malloc(cap);

    assert_non_null(text);
    fill(hashes, n * SWORN_HASH_LEN, seed);
    assert_int_equal(sworn_proof_format(hashes, n, text, cap), (long)SWORN_PROOF_TEXT_LEN(n));
    return text;
}

static void test_round_trip(void **state)
{
    static uint8_t hashes[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    static uint8_t back[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];

    (void)state;
    for (size_t n = 0; n <= SWORN_MERKLE_MAX_PROOF; n++) {
        char *text = text_of(n, (uint32_t)n + 1, hashes);
        size_t len = strlen(text), count = 0;
        /* The parser gets an exact-size copy, so reading past text_len shows up under ASan. */
        char *exact = malloc(len ? len : 1);

        assert_non_null(exact);
        memcpy(exact, text, len);
        assert_int_equal(len, SWORN_PROOF_TEXT_LEN(n));
        for (size_t i = 0; i < n; i++)
            assert_int_equal(text[i * LINE_LEN + LINE_LEN - 1], '\n');
        assert_int_equal(sworn_proof_parse(exact, len, back, n, &count), 0);
        assert_int_equal(count, n);
        assert_memory_equal(back, hashes, n * SWORN_HASH_LEN);
        free(exact);
        free(text);
    }
}

static void test_known_text(void **state)
{
    /* The all-zero hash and the 0x00..0x1f hash, worked out by hand from RFC 4648. */
    static const char text[] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"
                               "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n";
    uint8_t want[2 * SWORN_HASH_LEN], got[2 * SWORN_HASH_LEN];
    char out[SWORN_PROOF_TEXT_LEN(2) + 1];
    size_t count = 0;

    (void)state;
    memset(want, 0, SWORN_HASH_LEN);
    for (int i = 0; i < SWORN_HASH_LEN; i++)
        want[SWORN_HASH_LEN + i] = (uint8_t)i;
    assert_int_equal(sworn_proof_parse(text, sizeof(text) - 1, got, 2, &count), 0);
    assert_int_equal(count, 2);
    assert_memory_equal(got, want, sizeof(want));
    assert_int_equal(sworn_proof_format(want, 2, out, sizeof(out)), (long)sizeof(text) - 1);
    assert_string_equal(out, text);
}

static void test_empty_proof(void **state)
{
    uint8_t out[SWORN_HASH_LEN];
    char text[1] = {'x'};
    size_t count = 99;

    (void)state;
    assert_int_equal(sworn_proof_parse("", 0, out, 1, &count), 0);
    assert_int_equal(count, 0);
    /* Empty text parses even with nowhere to put hashes. */
    count = 99;
    assert_int_equal(sworn_proof_parse(NULL, 0, NULL, 0, &count), 0);
    assert_int_equal(count, 0);
    assert_int_equal(sworn_proof_format(NULL, 0, text, sizeof(text)), 0);
    assert_int_equal(text[0], '\0');
    /* No room even for the NUL. */
    assert_int_equal(sworn_proof_format(NULL, 0, text, 0), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
}

static void test_bad_lines(void **state)
{
    uint8_t hashes[3 * SWORN_HASH_LEN];
    char *good = text_of(3, 7, hashes);
    size_t len = strlen(good);
    char buf[4 * LINE_LEN + 8];

    (void)state;
    assert_true(len + 8 < sizeof(buf));

    /* Missing final newline, and a lone trailing byte. */
    expect_parse_error(good, len - 1, 3, SWORN_ERR_FORMAT);
    memcpy(buf, good, len);
    buf[len] = 'A';
    expect_parse_error(buf, len + 1, 4, SWORN_ERR_FORMAT);

    /* A blank line at the start, in the middle and at the end. */
    buf[0] = '\n';
    memcpy(buf + 1, good, len);
    expect_parse_error(buf, len + 1, 4, SWORN_ERR_FORMAT);
    memcpy(buf, good, LINE_LEN);
    buf[LINE_LEN] = '\n';
    memcpy(buf + LINE_LEN + 1, good + LINE_LEN, len - LINE_LEN);
    expect_parse_error(buf, len + 1, 4, SWORN_ERR_FORMAT);
    memcpy(buf, good, len);
    buf[len] = '\n';
    expect_parse_error(buf, len + 1, 4, SWORN_ERR_FORMAT);

    /* CRLF line ends, and a CR replacing the newline. */
    memcpy(buf, good, LINE_LEN - 1);
    buf[LINE_LEN - 1] = '\r';
    buf[LINE_LEN] = '\n';
    expect_parse_error(buf, LINE_LEN + 1, 3, SWORN_ERR_FORMAT);
    memcpy(buf, good, LINE_LEN);
    buf[LINE_LEN - 1] = '\r';
    expect_parse_error(buf, LINE_LEN, 3, SWORN_ERR_FORMAT);

    /* A line one character short (padding dropped) and one character long. */
    memcpy(buf, good, LINE_LEN - 2);
    buf[LINE_LEN - 2] = '\n';
    expect_parse_error(buf, LINE_LEN - 1, 3, SWORN_ERR_FORMAT);
    memcpy(buf, good, LINE_LEN - 1);
    buf[LINE_LEN - 1] = 'A';
    buf[LINE_LEN] = '\n';
    expect_parse_error(buf, LINE_LEN + 1, 3, SWORN_ERR_FORMAT);

    /* Two lines whose lengths (43 + 45) add up to two good ones. */
    memcpy(buf, good, LINE_LEN - 2);
    buf[LINE_LEN - 2] = '\n';
    memcpy(buf + LINE_LEN - 1, good + LINE_LEN, LINE_LEN - 1);
    buf[2 * LINE_LEN - 2] = 'A';
    buf[2 * LINE_LEN - 1] = '\n';
    expect_parse_error(buf, 2 * LINE_LEN, 3, SWORN_ERR_FORMAT);

    /* Spaces and tabs, leading or trailing. */
    memcpy(buf, good, LINE_LEN);
    buf[0] = ' ';
    expect_parse_error(buf, LINE_LEN, 3, SWORN_ERR_FORMAT);
    memcpy(buf, good, LINE_LEN);
    buf[LINE_LEN - 2] = '\t';
    expect_parse_error(buf, LINE_LEN, 3, SWORN_ERR_FORMAT);

    /* A NUL inside a line. */
    memcpy(buf, good, LINE_LEN);
    buf[10] = '\0';
    expect_parse_error(buf, LINE_LEN, 3, SWORN_ERR_FORMAT);
    free(good);
}

static void test_bad_base64(void **state)
{
    char line[LINE_LEN + 1];
    uint8_t hash[SWORN_HASH_LEN];

    (void)state;
    memset(hash, 0xff, sizeof(hash));
    assert_int_equal(sworn_proof_format(hash, 1, line, sizeof(line)), LINE_LEN);
    /* 32 bytes end in one '=' and two leftover bits that must be zero: the last data character
     * of 0xff..ff is '8' (111100); '9' (111101) sets a discarded bit. */
    assert_int_equal(line[42], '8');
    line[42] = '9';
    expect_parse_error(line, LINE_LEN, 1, SWORN_ERR_FORMAT);
    line[42] = '8';

    /* No padding: 44 data characters would be 33 bytes. */
    line[43] = 'A';
    expect_parse_error(line, LINE_LEN, 1, SWORN_ERR_FORMAT);
    /* Two '=' (31 bytes). */
    line[42] = '=';
    line[43] = '=';
    expect_parse_error(line, LINE_LEN, 1, SWORN_ERR_FORMAT);
    /* Padding in the middle, the URL-safe alphabet, other junk. */
    memset(line, 'A', LINE_LEN - 2);
    line[LINE_LEN - 2] = '=';
    line[LINE_LEN - 1] = '\n';
    line[5] = '=';
    expect_parse_error(line, LINE_LEN, 1, SWORN_ERR_FORMAT);
    line[5] = '-';
    expect_parse_error(line, LINE_LEN, 1, SWORN_ERR_FORMAT);
    line[5] = '_';
    expect_parse_error(line, LINE_LEN, 1, SWORN_ERR_FORMAT);
    line[5] = (char)0xc3;
    expect_parse_error(line, LINE_LEN, 1, SWORN_ERR_FORMAT);
    line[5] = 'A';
    /* And the clean line parses. */
    {
        uint8_t out[SWORN_HASH_LEN];
        size_t count = 0;

        assert_int_equal(sworn_proof_parse(line, LINE_LEN, out, 1, &count), 0);
        assert_int_equal(count, 1);
    }
}

static void test_too_many_lines(void **state)
{
    static uint8_t hashes[(SWORN_MERKLE_MAX_PROOF + 1) * SWORN_HASH_LEN];
    char *limit = text_of(SWORN_MERKLE_MAX_PROOF, 3, hashes);
    size_t len = strlen(limit) + LINE_LEN;
    char *text = malloc(len + 1);
    char small[8];

    (void)state;
    /* The formatter refuses what the parser would refuse: more than the limit. */
    assert_int_equal(sworn_proof_format(hashes, SWORN_MERKLE_MAX_PROOF + 1, small, sizeof(small)),
                     -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    /* One line past the limit: the limit's text and its first line once more. */
    assert_non_null(text);
    memcpy(text, limit, len - LINE_LEN);
    memcpy(text + len - LINE_LEN, limit, LINE_LEN);
    text[len] = '\0';
    free(limit);
    /* More than max_count lines. */
    expect_parse_error(text, 3 * LINE_LEN, 2, SWORN_ERR_RANGE);
    expect_parse_error(text, LINE_LEN, 0, SWORN_ERR_RANGE);
    /* More than SWORN_MERKLE_MAX_PROOF lines, however large max_count is. */
    {
        uint8_t *out = malloc(len);
        size_t count = 0;

        assert_non_null(out);
        sworn_err_clear();
        assert_int_equal(sworn_proof_parse(text, len, out, SWORN_MERKLE_MAX_PROOF + 1, &count), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
        assert_int_equal(sworn_proof_parse(text, len, out, SIZE_MAX, &count), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
        /* Exactly the limit is fine. */
        assert_int_equal(sworn_proof_parse(text, len - LINE_LEN, out, SIZE_MAX, &count), 0);
        assert_int_equal(count, SWORN_MERKLE_MAX_PROOF);
        free(out);
    }
    free(text);
}

static void test_format_small_buffer(void **state)
{
    uint8_t hashes[2 * SWORN_HASH_LEN];
    char out[SWORN_PROOF_TEXT_LEN(2) + 1];

    (void)state;
    fill(hashes, sizeof(hashes), 5);
    /* One byte short (no room for the NUL), and nothing is written on failure. */
    memset(out, '#', sizeof(out));
    sworn_err_clear();
    assert_int_equal(sworn_proof_format(hashes, 2, out, sizeof(out) - 1), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    for (size_t i = 0; i < sizeof(out); i++)
        assert_int_equal(out[i], '#');
    /* Counts so large the size would overflow. */
    assert_int_equal(sworn_proof_format(hashes, SIZE_MAX, out, sizeof(out)), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(sworn_proof_format(hashes, SIZE_MAX / LINE_LEN + 1, out, SIZE_MAX), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    /* Exactly enough. */
    assert_int_equal(sworn_proof_format(hashes, 2, out, sizeof(out)), (long)sizeof(out) - 1);
    assert_int_equal(out[sizeof(out) - 1], '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),          cmocka_unit_test(test_known_text),
        cmocka_unit_test(test_empty_proof),         cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_bad_base64),          cmocka_unit_test(test_too_many_lines),
        cmocka_unit_test(test_format_small_buffer),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
