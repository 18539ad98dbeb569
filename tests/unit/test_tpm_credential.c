/*
 * test_tpm_credential.c -- credential activation (sworn-tpm ek-pub, make-credential,
 * activate-credential) through the real binary against real software TPMs (swtpm), checked
 * against tpm2-tools in both directions so that our software TPM2_MakeCredential is not only
 * consistent with itself.
 *
 * Evidence:
 *   1. ek-pub writes exactly what tpm2_createek -G rsa -u writes; make-credential, offline, with
 *      a random secret gives the tpm2-tools file layout (parsed here), and activate-credential on
 *      the TPM recovers the secret.
 *   2. tpm2_makecredential's credential for our AK is opened by our activate-credential, and
 *      our credential for a tpm2_createak AK is opened by tpm2_activatecredential.
 *   3. The TPM refuses: a credential for another AK name, a flipped bit in the blob or in the
 *      encrypted seed, and a credential made for a second TPM's EK; no secret is written.
 *   4. Usage and input errors exit 2 (a TCTI given to the offline side, a 33-byte secret, a name
 *      of the wrong length, an ECC public as the EK, a file that is not a credential).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/rand.h>

#include "swtpm_fixture.h"
#include "testutil.h"

#define CMD_MAX 4096
#define HEX_MAX 129
#define SECRET_LEN 32
#define NAME_LEN 34
#define CRED_MAGIC 0xBADCC0DEu
/* Header 8, TPM2B_ID_OBJECT 2 + (2 + 32 HMAC + 2 + 32 encrypted secret), TPM2B seed 2 + 256. */
#define ID_OBJECT_LEN (2 + 32 + 2 + SECRET_LEN)
#define CRED_LEN (8 + 2 + ID_OBJECT_LEN + 2 + 256)

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static size_t be16(const uint8_t *p)
{
    return (size_t)p[0] << 8 | p[1];
}

/* A fresh random secret in <dir>/name; its bytes in out. */
static void make_secret(struct sworn_test_swtpm *t, const char *name, uint8_t out[SECRET_LEN])
{
    char *path = sworn_test_path(t->dir, name);

    assert_int_equal(RAND_bytes(out, SECRET_LEN), 1);
    sworn_test_write_file(path, out, SECRET_LEN, 0600);
    free(path);
}

/* Assert that <dir>/name holds exactly want. */
static void assert_file_is(struct sworn_test_swtpm *t, const char *name, const uint8_t *want,
                           size_t want_len)
{
    char *path = sworn_test_path(t->dir, name);
    size_t len = 0;
    char *got = sworn_test_read_file(path, &len);

    assert_int_equal(len, want_len);
    assert_memory_equal(got, want, want_len);
    free(got);
    free(path);
}

/* The TPM side: ek-pub and provision (AK name) into <dir>/ek.pub and <dir>/p/. */
static void tpm_side(struct sworn_test_swtpm *t)
{
    assert_int_equal(sworn_test_swtpm_shf(t, "cd '%s' && '%s' ek-pub --tcti '%s' --out ek.pub",
                                          t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     0);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && mkdir -p p && '%s' provision --tcti '%s' --out-dir p "
                             "> p.out",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
        0);
}

static void test_roundtrip(void **state)
{
    struct sworn_test_swtpm *t = *state;
    uint8_t secret[SECRET_LEN];
    char *path, *cred;
    const uint8_t *c;
    size_t len = 0;

    tpm_side(t);
    /* Our EK is the standard one: the same public as tpm2-tools derives. */
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && tpm2_createek -c ek.ctx -G rsa -u ek.tools.pub && "
                             "tpm2_flushcontext -t && cmp ek.pub ek.tools.pub",
                             t->dir),
        0);
    make_secret(t, "secret", secret);
    /* Offline: no TCTI, and the TPM stopped, so nothing can reach it. */
    assert_int_equal(sworn_test_swtpm_kill(t), 0);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' make-credential --ek-pub ek.pub --ak-name p/ak.name "
                             "--secret secret --out cred",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN")),
        0);
    assert_int_equal(sworn_test_swtpm_restart(t), 0);

    /* The tpm2-tools layout, parsed here. */
    path = sworn_test_path(t->dir, "cred");
    cred = sworn_test_read_file(path, &len);
    c = (const uint8_t *)cred;
    assert_int_equal(len, CRED_LEN);
    assert_int_equal(be32(c), CRED_MAGIC);
    assert_int_equal(be32(c + 4), 1);
    assert_int_equal(be16(c + 8), ID_OBJECT_LEN);
    assert_int_equal(be16(c + 10), 32); /* integrityHMAC */
    assert_int_equal(be16(c + 10 + ID_OBJECT_LEN), 256);
    /* The secret is encrypted: it does not appear in the file. */
    assert_null(memmem(cred, len, secret, SECRET_LEN));
    free(cred);
    free(path);

    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' activate-credential --tcti '%s' --in cred --out "
                             "secret.out",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
        0);
    assert_file_is(t, "secret.out", secret, SECRET_LEN);

    /* A short secret works as well (a TPM2B_DIGEST of any size up to 32). */
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && printf 'hi' > short && '%s' make-credential --ek-pub ek.pub "
                         "--ak-name p/ak.name --secret short --out cred.short && '%s' "
                         "activate-credential --tcti '%s' --in cred.short --out short.out && cmp "
                         "short short.out",
                         t->dir, sworn_test_bin("SWORN_TPM_BIN"), sworn_test_bin("SWORN_TPM_BIN"),
                         t->tcti),
                     0);
}

static void test_tpm2_tools_both_ways(void **state)
{
    struct sworn_test_swtpm *t = *state;
    uint8_t secret[SECRET_LEN], name[NAME_LEN];
    char name_hex[HEX_MAX], *path, *nb;
    size_t len = 0;

    tpm_side(t);
    make_secret(t, "secret", secret);
    path = sworn_test_path(t->dir, "p/ak.name");
    nb = sworn_test_read_file(path, &len);
    assert_int_equal(len, NAME_LEN);
    memcpy(name, nb, NAME_LEN);
    sworn_test_hex(name, NAME_LEN, name_hex);
    free(nb);
    free(path);

    /* tpm2_makecredential (offline) -> our activate-credential. */
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && tpm2_makecredential --tcti none -u ek.pub -s secret -n %s "
                         "-o cred.tools && '%s' activate-credential --tcti '%s' --in cred.tools "
                         "--out secret.a",
                         t->dir, name_hex, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     0);
    assert_file_is(t, "secret.a", secret, SECRET_LEN);

    /* Our make-credential -> tpm2_activatecredential, with an AK tpm2-tools made (a child of
     * the EK, nothing of ours on the TPM side). swtpm has no resource manager: flush between. */
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && tpm2_createek -c ek.ctx -G rsa -u ek.tools.pub && "
                             "tpm2_createak -C ek.ctx -c ak.ctx -G ecc -g sha256 -s ecdsa -n "
                             "ak.tools.name && tpm2_flushcontext -t",
                             t->dir),
        0);
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && '%s' make-credential --ek-pub ek.pub --ak-name ak.tools.name "
                         "--secret secret --out cred.ours",
                         t->dir, sworn_test_bin("SWORN_TPM_BIN")),
                     0);
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && tpm2_startauthsession --policy-session -S sess.ctx && "
                         "tpm2_policysecret -S sess.ctx -c e && tpm2_activatecredential -c ak.ctx "
                         "-C ek.ctx -i cred.ours -o secret.b -P session:sess.ctx; r=$?; "
                         "tpm2_flushcontext sess.ctx; tpm2_flushcontext -t; exit $r",
                         t->dir),
                     0);
    assert_file_is(t, "secret.b", secret, SECRET_LEN);
}

/* Flip one bit of <dir>/from at offset into <dir>/to. */
static void flip(struct sworn_test_swtpm *t, const char *from, const char *to, size_t offset)
{
    char *src = sworn_test_path(t->dir, from), *dst = sworn_test_path(t->dir, to);
    size_t len = 0;
    char *b = sworn_test_read_file(src, &len);

    assert_true(offset < len);
    b[offset] ^= 0x01;
    sworn_test_write_file(dst, b, len, 0600);
    free(b);
    free(src);
    free(dst);
}

/* activate-credential on t with <dir>/cred must exit 1 and write no secret. */
static void assert_refused(struct sworn_test_swtpm *t, const char *cred)
{
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && rm -f refused.out && '%s' activate-credential --tcti '%s' "
                             "--in %s --out refused.out",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti, cred),
        1);
    assert_int_equal(sworn_test_swtpm_shf(t, "test ! -e '%s/refused.out'", t->dir), 0);
}

static void test_tpm_refuses(void **state)
{
    struct sworn_test_swtpm *t = *state;
    struct sworn_test_swtpm other;
    uint8_t secret[SECRET_LEN];

    tpm_side(t);
    make_secret(t, "secret", secret);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' make-credential --ek-pub ek.pub --ak-name p/ak.name "
                             "--secret secret --out cred",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN")),
        0);

    /* Another AK's name (the last byte flipped): the TPM's integrity check fails. */
    flip(t, "p/ak.name", "other.name", NAME_LEN - 1);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' make-credential --ek-pub ek.pub --ak-name other.name "
                             "--secret secret --out cred.name",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN")),
        0);
    assert_refused(t, "cred.name");
    /* A flipped bit in the HMAC, in the encrypted identity, in the encrypted seed. */
    flip(t, "cred", "cred.hmac", 12);
    assert_refused(t, "cred.hmac");
    flip(t, "cred", "cred.ident", 8 + 2 + 34 + 5);
    assert_refused(t, "cred.ident");
    flip(t, "cred", "cred.seed", CRED_LEN - 7);
    assert_refused(t, "cred.seed");

    /* A second TPM: a credential for its EK (and our AK's name) does not open here. */
    memset(&other, 0, sizeof(other));
    assert_int_equal(sworn_test_swtpm_start(&other), 0);
    assert_int_equal(sworn_test_swtpm_shf(&other, "cd '%s' && '%s' ek-pub --tcti '%s' --out ek.pub",
                                          other.dir, sworn_test_bin("SWORN_TPM_BIN"), other.tcti),
                     0);
    assert_int_equal(sworn_test_swtpm_shf(t, "cmp -s '%s/ek.pub' '%s/ek.pub'", t->dir, other.dir),
                     1);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' make-credential --ek-pub '%s/ek.pub' --ak-name "
                             "p/ak.name --secret secret --out cred.other",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN"), other.dir),
        0);
    assert_refused(t, "cred.other");
    sworn_test_swtpm_stop(&other);

    /* And the untouched credential still opens: the refusals were about the changes. */
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' activate-credential --tcti '%s' --in cred --out "
                             "secret.out",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
        0);
    assert_file_is(t, "secret.out", secret, SECRET_LEN);
}

static void test_usage_and_bad_input(void **state)
{
    struct sworn_test_swtpm *t = *state;
    uint8_t secret[SECRET_LEN];

    tpm_side(t);
    make_secret(t, "secret", secret);
    assert_int_equal(sworn_test_swtpm_shf(t, "'%s' ek-pub --tcti '%s'",
                                          sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     2);
    assert_int_equal(sworn_test_swtpm_shf(t, "'%s' activate-credential --tcti '%s' --in x",
                                          sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     2);
    /* The auditor side never talks to a TPM. */
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && '%s' make-credential --tcti '%s' --ek-pub ek.pub --ak-name "
                         "p/ak.name --secret secret --out c",
                         t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     2);
    /* 33 bytes: longer than the EK's nameAlg digest, which the TPM would refuse. */
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && head -c 33 /dev/zero > long && '%s' make-credential --ek-pub "
                         "ek.pub --ak-name p/ak.name --secret long --out c",
                         t->dir, sworn_test_bin("SWORN_TPM_BIN")),
                     2);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && head -c 33 p/ak.name > long.name && '%s' make-credential "
                             "--ek-pub ek.pub --ak-name long.name --secret secret --out c",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN")),
        2);
    /* The AK's public is a valid TPM2B_PUBLIC but no RSA EK. */
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && '%s' make-credential --ek-pub p/ak.pub --ak-name p/ak.name "
                         "--secret secret --out c",
                         t->dir, sworn_test_bin("SWORN_TPM_BIN")),
                     2);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' make-credential --ek-pub secret --ak-name p/ak.name "
                             "--secret secret --out c",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN")),
        2);
    assert_int_equal(sworn_test_swtpm_shf(t, "cd '%s' && test ! -e c", t->dir), 0);
    /* Not a credential file: refused before the TPM is asked. */
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && '%s' activate-credential --tcti '%s' --in secret --out s.out",
                         t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_tpm2_tools_both_ways, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_tpm_refuses, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_usage_and_bad_input, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
