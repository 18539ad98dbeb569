/*
 * test_witness_answer.c -- decisiond's reading of a witness's answers (decisiond/witness_answer.h):
 * the 409 size (text/x.tlog.size, canonical decimals, bounds) and the 200's cosignature lines,
 * with a real pair: a dev-stack log's checkpoint and the cosignature its sworn-witness made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "note.h"
#include "witness_answer.h"

#include "../fuzz/witness_answer_vector.h"

static const char note[] = WAV_NOTE;
static const char vkey[] = WAV_VKEY;
#define COSIG WAV_COSIG

static void test_sizes(void **state)
{
    static const struct {
        const char *ctype, *body;
        int ok;
        uint64_t v;
    } cases[] = {
        {"text/x.tlog.size", "17\n", 1, 17},
        {"TEXT/X.TLOG.SIZE; charset=utf-8", "0\n", 1, 0},
        {"text/x.tlog.size", "18446744073709551615\n", 1, UINT64_MAX},
        {"text/x.tlog.size", "18446744073709551616\n", 0, 0},
        {"text/x.tlog.size", "99999999999999999999\n", 0, 0},
        {"text/x.tlog.size", "05\n", 0, 0},
        {"text/x.tlog.size", "-1\n", 0, 0},
        {"text/x.tlog.size", " 5\n", 0, 0},
        {"text/x.tlog.size", "5", 0, 0},
        {"text/x.tlog.size", "5\n\n", 0, 0},
        {"text/x.tlog.size", "\n", 0, 0},
        {"text/x.tlog.sizes", "5\n", 0, 0},
        {"text/plain", "5\n", 0, 0},
        {NULL, "5\n", 0, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 12345;
        int rc =
            sworn_witness_answer_size(cases[i].ctype, cases[i].body, strlen(cases[i].body), &v);

        if (rc != (cases[i].ok ? 0 : -1) || (cases[i].ok && v != cases[i].v))
            fail_msg("case %zu (%s, %s): rc %d, size %llu", i,
                     cases[i].ctype ? cases[i].ctype : "-", cases[i].body, rc,
                     (unsigned long long)v);
    }
}

static int take(const char *body, char **out, size_t *out_len)
{
    struct sworn_note_verifier key;

    assert_int_equal(sworn_note_verifier_parse(vkey, strlen(vkey), &key), 0);
    return sworn_witness_answer_cosignatures(&key, note, strlen(note), body, strlen(body), 8, out,
                                             out_len);
}

static void test_cosignatures(void **state)
{
    char *out = NULL, other[] = COSIG, *bad;
    size_t out_len = 0;

    (void)state;
    /* The witness's line: kept, exactly. */
    assert_int_equal(take(COSIG, &out, &out_len), 1);
    assert_int_equal(out_len, strlen(COSIG));
    assert_string_equal(out, COSIG);
    /* The same line again, in this answer or a later one: not kept twice. */
    assert_int_equal(take(COSIG COSIG, &out, &out_len), 0);
    assert_int_equal(out_len, strlen(COSIG));
    free(out);
    out = NULL;
    out_len = 0;
    /* Among other lines (another key's, garbage, an empty line), only it. */
    assert_int_equal(take("\xe2\x80\x94 other.example/w AAAAAAAA\nhello\n\n" COSIG, &out, &out_len),
                     1);
    assert_string_equal(out, COSIG);
    free(out);
    out = NULL;
    out_len = 0;
    /* At most max lines are kept: none with 0. */
    {
        struct sworn_note_verifier key;

        assert_int_equal(sworn_note_verifier_parse(vkey, strlen(vkey), &key), 0);
        assert_int_equal(sworn_witness_answer_cosignatures(&key, note, strlen(note), COSIG,
                                                           strlen(COSIG), 0, &out, &out_len),
                         0);
        assert_null(out);
    }
    /* One bit of the signature changed, the line without its "\n", the log's own line: none. */
    other[strlen(other) - 4] ^= 1;
    assert_int_equal(take(other, &out, &out_len), 0);
    bad = strndup(COSIG, strlen(COSIG) - 1);
    assert_non_null(bad);
    assert_int_equal(take(bad, &out, &out_len), 0);
    free(bad);
    assert_int_equal(take(strstr(note, "\xe2\x80\x94"), &out, &out_len), 0);
    assert_null(out);
    assert_int_equal(out_len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_cosignatures),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
