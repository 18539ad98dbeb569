/*
 * test_utf8.c -- common/utf8.h: the one list of unsafe characters (review finding 12: C1
 * controls, bidi controls and invisible characters refused in every recorded string) and the
 * escaper that swornctl and decisiond's JSON log lines go through.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "d_jlog.h"
#include "err.h"
#include "testutil.h"
#include "utf8.h"

/* The UTF-8 encoding of cp into out (NUL-terminated). Returns its length. */
static size_t enc(uint32_t cp, char out[5])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = '\0';
    } else if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        out[2] = '\0';
    } else if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        out[3] = '\0';
    } else {
        out[0] = (char)(0xf0 | cp >> 18);
        out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[3] = (char)(0x80 | (cp & 0x3f));
        out[4] = '\0';
    }
    return cp == 0 ? 1 : strlen(out);
}

/* Refused: the review's two (U+202E, U+009B), every bidi control, C1, the separators and the
 * invisible characters; each edge of each range. */
static const uint32_t refused[] = {
    0x0000,  0x001f,  0x007f,  0x0080,  0x0085,  0x009b,  0x009f,  0x00ad,  0x034f,
    0x061c,  0x115f,  0x1160,  0x17b4,  0x17b5,  0x180b,  0x180e,  0x180f,  0x200b,
    0x200c,  0x200d,  0x200e,  0x200f,  0x2028,  0x2029,  0x202a,  0x202b,  0x202c,
    0x202d,  0x202e,  0x2060,  0x2064,  0x2066,  0x2067,  0x2068,  0x2069,  0x206f,
    0x3164,  0xfe00,  0xfe0f,  0xfeff,  0xffa0,  0xfff0,  0xfff9,  0xfffb,  0x1bca0,
    0x1bca3, 0x1d173, 0x1d17a, 0xe0000, 0xe0001, 0xe0041, 0xe007f, 0xe0100, 0xe0fff,
};

/* Accepted: their neighbours, and ordinary text of other scripts. */
static const uint32_t accepted[] = {
    0x0020,  0x007e,  0x00a0,  0x00a1,  0x00ac,  0x00ae,  0x00e9,  0x034e,   0x0350, 0x061b,
    0x061d,  0x0430,  0x05d0,  0x0627,  0x200a,  0x2010,  0x2027,  0x202f,   0x205f, 0x2070,
    0x20ac,  0x3163,  0x3165,  0x4e2d,  0xfdff,  0xfe10,  0xfefe,  0xff00,   0xfffc, 0xfffd,
    0x1f600, 0x1bc9f, 0x1bca4, 0x1d172, 0x1d17b, 0xdffff, 0xe1000, 0x10fffd,
};

static void test_the_list(void **state)
{
    char s[16], e[5];

    (void)state;
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        size_t k;

        assert_true(sworn_utf8_is_control(refused[i]));
        k = enc(refused[i], e);
        s[0] = 'a';
        memcpy(s + 1, e, k);
        s[k + 1] = 'b';
        if (sworn_utf8_check(s, k + 2, 0, "t") != -1)
            fail_msg("U+%04X accepted", (unsigned)refused[i]);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        /* The error names the code point, never the raw bytes. */
        if (refused[i] >= 0x80) {
            char want[16];

            snprintf(want, sizeof(want), "U+%04X", (unsigned)refused[i]);
            assert_non_null(strstr(sworn_err_msg(), want));
        }
    }
    for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
        assert_false(sworn_utf8_is_control(accepted[i]));
        enc(accepted[i], e);
        snprintf(s, sizeof(s), "a%sb", e);
        if (sworn_utf8_check(s, strlen(s), 0, "t") != 0)
            fail_msg("U+%04X refused: %s", (unsigned)accepted[i], sworn_err_msg());
    }
    /* The newline where a format allows it (notes), and nowhere else. */
    assert_int_equal(sworn_utf8_check("a\nb", 3, 1, "t"), 0);
    assert_int_equal(sworn_utf8_check("a\nb", 3, 0, "t"), -1);
    assert_int_equal(sworn_utf8_check("a\xe2\x80\xa8", 4, 1, "t"), -1); /* U+2028 is not \n */
}

/* What the review put in a path: U+202E and U+009B, with a bad byte and a backslash. */
static const char hostile[] = "/x\xe2\x80\xaetxt.exe\xc2\x9b"
                              "31m\xff\\\xf3\xa0\x80\x81!";

static void test_escape_text(void **state)
{
    char out[SWORN_UTF8_ESCAPE_MAX(sizeof(hostile))], small[8];
    size_t n;

    (void)state;
    n = sworn_utf8_escape(hostile, strlen(hostile), SWORN_UTF8_ESCAPE_TEXT, out, sizeof(out));
    assert_int_not_equal(n, (size_t)-1);
    assert_string_equal(out, "/x\\u202etxt.exe\\u009b31m\\xff\\\\\\U000e0001!");
    assert_int_equal(n, strlen(out));
    /* Printable text passes as it is, other scripts included. */
    n = sworn_utf8_escape("caf\xc3\xa9 \xd0\xb0", 8, SWORN_UTF8_ESCAPE_TEXT, out, sizeof(out));
    assert_string_equal(out, "caf\xc3\xa9 \xd0\xb0");
    /* Too small: an error, and a NUL-terminated prefix without a cut escape. */
    assert_int_equal(
        sworn_utf8_escape(hostile, strlen(hostile), SWORN_UTF8_ESCAPE_TEXT, small, sizeof(small)),
        (size_t)-1);
    assert_string_equal(small, "/x");
    /* The escaper leaves the thread's error alone (swornctl escapes sworn_err_msg() itself). */
    sworn_err_set(SWORN_ERR_IO, "kept \xff");
    n = sworn_utf8_escape(sworn_err_msg(), strlen(sworn_err_msg()), SWORN_UTF8_ESCAPE_TEXT, out,
                          sizeof(out));
    assert_string_equal(out, "kept \\xff");
    assert_string_equal(sworn_err_msg(), "kept \xff");
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
}

/* No byte of s is a control byte, and s holds no unsafe character: what reaches a terminal. */
static void assert_safe(const char *s)
{
    assert_int_equal(sworn_utf8_check(s, strlen(s), 0, "output"), 0);
}

static void test_escape_json(void **state)
{
    json_object *o = json_object_new_object(), *back;
    char *line;

    (void)state;
    /* Exactly what swornctl and the JSON log do: json-c's text, then the escaper. */
    json_object_object_add(o, "path", json_object_new_string(hostile));
    json_object_object_add(o, "ok", json_object_new_string("caf\xc3\xa9 \xf0\x9f\x98\x80"));
    line = sworn_utf8_escape_dup(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        SWORN_UTF8_ESCAPE_JSON);
    assert_non_null(line);
    assert_safe(line);
    assert_non_null(strstr(line, "\\u202e"));
    assert_non_null(strstr(line, "\\u009b"));
    assert_non_null(strstr(line, "\\udb40\\udc01")); /* U+E0001 as a surrogate pair */
    assert_non_null(strstr(line, "\\ufffd"));        /* the byte 0xff */
    /* It is JSON, and means what was given, but for the byte that was not UTF-8. */
    back = json_tokener_parse(line);
    assert_non_null(back);
    assert_string_equal(json_object_get_string(json_object_object_get(back, "path")),
                        "/x\xe2\x80\xaetxt.exe\xc2\x9b"
                        "31m\xef\xbf\xbd\\\xf3\xa0\x80\x81!");
    assert_string_equal(json_object_get_string(json_object_object_get(back, "ok")),
                        "caf\xc3\xa9 \xf0\x9f\x98\x80");
    json_object_put(back);
    json_object_put(o);
    free(line);
}

/* decisiond's JSON log lines: every byte a message holds comes out escaped, as valid JSON. */
static void test_jlog_escapes(void **state)
{
    char *dir = sworn_test_tmpdir("jlog"), *path = sworn_test_path(dir, "err"), *text;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), saved = dup(2);
    json_object *line;

    (void)state;
    assert_true(fd >= 0 && saved >= 0);
    assert_int_equal(dup2(fd, 2), 2);
    d_log_msg(D_LOG_ERROR, "test", hostile);
    assert_int_equal(dup2(saved, 2), 2);
    close(saved);
    close(fd);
    text = sworn_test_read_file(path, NULL);
    assert_safe(strtok(text, "\n"));
    line = json_tokener_parse(text);
    assert_non_null(line);
    assert_non_null(strstr(json_object_get_string(json_object_object_get(line, "msg")),
                           "/x\xe2\x80\xaetxt.exe\xc2\x9b"));
    json_object_put(line);
    free(text);
    free(path);
    sworn_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_list),
        cmocka_unit_test(test_escape_text),
        cmocka_unit_test(test_escape_json),
        cmocka_unit_test(test_jlog_escapes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
