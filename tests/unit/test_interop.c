/*
 * test_interop.c -- signed notes made by production systems that no one here wrote, with keys
 * published by their operators: our note code must accept them exactly as they are, and reject
 * any change. (The external vectors of ../shared are exercised in test_note.c and
 * test_log_vectors.c; these are further real-world inputs.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "checkpoint.h"
#include "err.h"
#include "note.h"

/* The Go checksum database's published verifier key (golang.org/x/mod/sumdb). */
static const char sumdb_vkey[] =
    "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8";

/* A signed tree head served by sum.golang.org (a lookup of golang.org/x/sync@v0.1.0). */
static const char sumdb_note[] = "go.sum database tree\n"
                                 "65209736\n"
                                 "5+uGFjx6xBZG8ip1+wi77v+grwbhhukIrxEUS8PXvRo=\n"
                                 "\n"
                                 "\xe2\x80\x94 sum.golang.org "
                                 "Az3grnbssgK7ubgFX36gVETtNv0U23qxyAhAMai2QUfeGa3nB/"
                                 "akvkMdlUErfcZz7l/R3cVtYspg3dxXABkGZZKdsQ8=\n";

static int verify(const char *msg, size_t len, const struct sworn_note_verifier *v)
{
    struct sworn_note *note = malloc(sizeof(*note));
    int rc;

    assert_non_null(note);
    rc = sworn_note_parse(msg, len, note);
    if (rc == 0)
        rc = sworn_note_verify(note, v, 1, NULL, NULL, NULL);
    free(note);
    return rc;
}

static void test_go_sumdb_tree_head(void **state)
{
    struct sworn_note_verifier v;
    struct sworn_note *note = malloc(sizeof(*note));
    struct sworn_checkpoint cp;
    size_t len = strlen(sumdb_note);
    char *copy = malloc(len);

    (void)state;
    assert_int_equal(sworn_note_verifier_parse(sumdb_vkey, strlen(sumdb_vkey), &v), 0);
    assert_int_equal(v.alg, SWORN_NOTE_ALG_ED25519);
    if (verify(sumdb_note, len, &v) != 0)
        fail_msg("sum.golang.org tree head rejected: %s", sworn_err_msg());
    /* Its body is a tlog-checkpoint whose origin is "go.sum database tree". */
    assert_int_equal(sworn_note_parse(sumdb_note, len, note), 0);
    assert_int_equal(sworn_checkpoint_parse(note->text, note->text_len, &cp), 0);
    assert_string_equal(cp.origin, "go.sum database tree");
    assert_int_equal(cp.size, 65209736);
    /* Any single changed byte of the text or the signature is caught. */
    for (size_t i = 0; i < len; i++) {
        memcpy(copy, sumdb_note, len);
        copy[i] ^= 0x01;
        if (verify(copy, len, &v) == 0)
            fail_msg("a tree head with byte %zu changed was accepted", i);
    }
    free(copy);
    free(note);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_go_sumdb_tree_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
