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
 *   5. ECC P-256 EK (template L-2, ECDH seed with KDFe): ek-pub --ek-alg ecc writes what
 *      tpm2_createek -G ecc writes; our credential opens with our activate-credential and with
 *      tpm2_activatecredential (for a tpm2_createak AK under tpm2-tools' ECC EK), and
 *      tpm2_makecredential's opens with ours; a changed ephemeral point is refused by the TPM,
 *      an EK point off the curve by make-credential.
 *   6. ROCA: the RSA EK public with its modulus replaced by a published ROCA modulus (the CRoCS
 *      detector's mod03, 2048 bits) is refused by make-credential (exit 1), nothing written.
 *   7. EK certificate (a TPM manufactured with EK certificates by a private swtpm_localca CA):
 *      verify-ek-cert accepts the RSA EK certificate with root and intermediate and the EK
 *      public; refuses it with the intermediate alone, with an unrelated CA, with a CA of the
 *      same name but another key, and for another EK public (the ECC one), and refuses the
 *      P-384 EK certificate (valid chain) for the RSA EK; make-credential --ek-cert --ca works
 *      with the genuine chain and writes nothing otherwise.
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
/* With an ECC EK the seed is a TPMS_ECC_POINT: 2 + 32 + 2 + 32. */
#define CRED_ECC_LEN (8 + 2 + ID_OBJECT_LEN + 2 + 68)

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

/* crocs-muni/roca roca/tests/data/mod03.txt: a 2048-bit modulus with the ROCA fingerprint. */
static const char roca_mod03[] =
    "9dcd7420e420c270a68060eb8b5aa7457a9f6648f86fafed2775cc1f79ae962f1e63f1b9e51c55f9ea6fdc7332e9b0"
    "058c9ff2eb1fc89855029cf6aafe21e689feb38ac9ffb12f1ce371bb5d0e9aae64161abce74b4244bf68f1edb4411f"
    "756a097c8929c14740245ea355f8332d1aa36bb50c7dcb4505da8de02e4e53d38f8df06097da7524df0df93db48eac"
    "8cc4af2d3a16257eb2b2adca6ba464e5974fa92550d31b1babf161e7692d00b86e3dd886ecab4abfbe1a8f8cc263ff"
    "4af55cdb45f4249a5193925f5e983d762f0b6800943eb0267b08f42ed311ce1f5c86eacbc8ce4d3cb7a2fee1ef5641"
    "423a1cf4114e5ecf50034a60a412523af9e6f4aa11";

/* The ECC P-256 EK, both ways against tpm2-tools (see the file comment, 5). */
static void test_ecc_ek(void **state)
{
    struct sworn_test_swtpm *t = *state;
    uint8_t secret[SECRET_LEN], name[NAME_LEN];
    char name_hex[HEX_MAX], *path, *nb, *cred;
    const uint8_t *c;
    size_t len = 0;

    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' ek-pub --tcti '%s' --ek-alg ecc --out ek.ecc.pub && "
                             "mkdir -p p && '%s' provision --tcti '%s' --out-dir p > p.out",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti,
                             sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
        0);
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && '%s' ek-pub --tcti '%s' --ek-alg dsa --out x",
                                          t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     2);
    /* The standard L-2 EK: the same public as tpm2-tools derives. */
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && tpm2_createek -c ek.ctx -G ecc -u ek.tools.pub && "
                             "tpm2_flushcontext -t && cmp ek.ecc.pub ek.tools.pub",
                             t->dir),
        0);
    make_secret(t, "secret", secret);

    /* Ours, offline (TPM stopped), then opened by the TPM. */
    assert_int_equal(sworn_test_swtpm_kill(t), 0);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' make-credential --ek-pub ek.ecc.pub --ak-name "
                             "p/ak.name --secret secret --out cred",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN")),
        0);
    assert_int_equal(sworn_test_swtpm_restart(t), 0);
    /* The layout: the seed is the ephemeral TPMS_ECC_POINT, two 32-byte coordinates. */
    path = sworn_test_path(t->dir, "cred");
    cred = sworn_test_read_file(path, &len);
    c = (const uint8_t *)cred;
    assert_int_equal(len, 8 + 2 + ID_OBJECT_LEN + 2 + 68);
    assert_int_equal(be32(c), CRED_MAGIC);
    assert_int_equal(be16(c + 10 + ID_OBJECT_LEN), 68);
    assert_int_equal(be16(c + 12 + ID_OBJECT_LEN), 32);
    assert_int_equal(be16(c + 12 + ID_OBJECT_LEN + 34), 32);
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
    /* Another ephemeral point (y's last byte flipped: off the curve), or another x: refused. */
    flip(t, "cred", "cred.point", CRED_ECC_LEN - 1);
    assert_refused(t, "cred.point");
    flip(t, "cred", "cred.x", CRED_ECC_LEN - 40);
    assert_refused(t, "cred.x");

    /* tpm2_makecredential (offline) -> our activate-credential. */
    path = sworn_test_path(t->dir, "p/ak.name");
    nb = sworn_test_read_file(path, &len);
    assert_int_equal(len, NAME_LEN);
    memcpy(name, nb, NAME_LEN);
    sworn_test_hex(name, NAME_LEN, name_hex);
    free(nb);
    free(path);
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && tpm2_makecredential --tcti none -u ek.ecc.pub -s secret -n "
                         "%s -o cred.tools && '%s' activate-credential --tcti '%s' --in cred.tools "
                         "--out secret.a",
                         t->dir, name_hex, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     0);
    assert_file_is(t, "secret.a", secret, SECRET_LEN);

    /* Our make-credential -> tpm2_activatecredential, AK and ECC EK made by tpm2-tools. */
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && tpm2_createek -c ek.ctx -G ecc -u ek.tools.pub && "
                             "tpm2_createak -C ek.ctx -c ak.ctx -G ecc -g sha256 -s ecdsa -n "
                             "ak.tools.name && tpm2_flushcontext -t",
                             t->dir),
        0);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' make-credential --ek-pub ek.ecc.pub --ak-name "
                             "ak.tools.name --secret secret --out cred.ours",
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

    /* An EK public whose point is off the curve (y's last byte flipped) is bad input. */
    {
        char *src = sworn_test_path(t->dir, "ek.ecc.pub"), *dst;
        size_t n = 0;
        char *b = sworn_test_read_file(src, &n);

        b[n - 1] ^= 0x01;
        dst = sworn_test_path(t->dir, "ek.bad.pub");
        sworn_test_write_file(dst, b, n, 0644);
        free(b);
        free(src);
        free(dst);
    }
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && '%s' make-credential --ek-pub ek.bad.pub --ak-name p/ak.name "
                         "--secret secret --out cred.bad",
                         t->dir, sworn_test_bin("SWORN_TPM_BIN")),
                     2);
    assert_int_equal(sworn_test_swtpm_shf(t, "test ! -e '%s/cred.bad'", t->dir), 0);
}

static void test_roca_ek_refused(void **state)
{
    struct sworn_test_swtpm *t = *state;
    uint8_t secret[SECRET_LEN];
    char *src, *dst, *b, *log;
    size_t n = 0;

    tpm_side(t);
    make_secret(t, "secret", secret);
    /* The RSA EK's TPM2B_PUBLIC ends with its 256-byte modulus: put the ROCA one there. */
    src = sworn_test_path(t->dir, "ek.pub");
    b = sworn_test_read_file(src, &n);
    assert_true(n > 256);
    for (size_t i = 0; i < 256; i++) {
        unsigned v;

        assert_int_equal(sscanf(roca_mod03 + 2 * i, "%2x", &v), 1);
        b[n - 256 + i] = (char)v;
    }
    dst = sworn_test_path(t->dir, "ek.roca.pub");
    sworn_test_write_file(dst, b, n, 0644);
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && '%s' make-credential --ek-pub ek.roca.pub --ak-name p/ak.name "
                         "--secret secret --out cred.roca",
                         t->dir, sworn_test_bin("SWORN_TPM_BIN")),
                     1);
    /* Each command truncates cmd.log: read the refusal's message first. */
    log = sworn_test_path(t->dir, "cmd.log");
    free(b);
    b = sworn_test_read_file(log, NULL);
    assert_non_null(strstr(b, "ROCA"));
    assert_int_equal(sworn_test_swtpm_shf(t, "test ! -e '%s/cred.roca'", t->dir), 0);
    /* The genuine EK is fine. */
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' make-credential --ek-pub ek.pub --ak-name p/ak.name "
                             "--secret secret --out cred",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN")),
        0);
    free(log);
    free(b);
    free(src);
    free(dst);
}

/* verify-ek-cert with the given arguments (after "--ek-cert"); its exit status. */
static int verify_ek_cert(struct sworn_test_swtpm *t, const char *args)
{
    return sworn_test_swtpm_shf(t, "cd '%s' && '%s' verify-ek-cert %s > verify.out", t->dir,
                                sworn_test_bin("SWORN_TPM_BIN"), args);
}

static void test_ek_cert_chain(void **state)
{
    struct sworn_test_swtpm *t = *state;
    uint8_t secret[SECRET_LEN];
    const char *chain = "--ca " SWORN_TEST_SWTPM_CA_ROOT " --ca " SWORN_TEST_SWTPM_CA_ISSUER;
    char args[CMD_MAX];

    tpm_side(t);
    make_secret(t, "secret", secret);
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && '%s' ek-pub --tcti '%s' --ek-alg ecc "
                                          "--out ek.ecc.pub",
                                          t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     0);
    /* openssl agrees the fixture's chain is genuine: the test is about us, not the fixture. */
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && openssl verify -CAfile %s -untrusted %s "
                                          "-inform der ek-rsa2048.crt 2>/dev/null ||"
                                          "(openssl x509 -inform der -in ek-rsa2048.crt -out "
                                          "ek.pem && openssl verify -CAfile %s -untrusted %s "
                                          "ek.pem)",
                                          t->dir, SWORN_TEST_SWTPM_CA_ROOT,
                                          SWORN_TEST_SWTPM_CA_ISSUER, SWORN_TEST_SWTPM_CA_ROOT,
                                          SWORN_TEST_SWTPM_CA_ISSUER),
                     0);

    /* Genuine: the chain, and the chain with the EK public it certifies. */
    snprintf(args, sizeof(args), "--ek-cert ek-rsa2048.crt %s", chain);
    assert_int_equal(verify_ek_cert(t, args), 0);
    assert_int_equal(sworn_test_swtpm_shf(t, "grep -qx ok '%s/verify.out'", t->dir), 0);
    snprintf(args, sizeof(args), "--ek-cert ek-rsa2048.crt %s --ek-pub ek.pub", chain);
    assert_int_equal(verify_ek_cert(t, args), 0);
    /* The intermediate alone is not a trust anchor: no chain to a root. */
    assert_int_equal(verify_ek_cert(t, "--ek-cert ek-rsa2048.crt --ca " SWORN_TEST_SWTPM_CA_ISSUER),
                     1);
    /* Another CA, and a CA with the same name as the fixture's root and intermediate but other
     * keys: the signatures do not verify. */
    assert_int_equal(
        sworn_test_swtpm_shf(
            t,
            "cd '%s' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
            "-subj /CN=other -keyout o.key -out other.pem -days 2 && "
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
            "-subj \"$(openssl x509 -in %s -noout -subject -nameopt compat | sed "
            "'s/^subject=//')\" "
            "-keyout f.key -out fake-root.pem -days 2 -addext basicConstraints=critical,CA:TRUE && "
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
            "-subj \"$(openssl x509 -in %s -noout -subject -nameopt compat | sed "
            "'s/^subject=//')\" "
            "-keyout g.key -out fake-issuer.pem -days 2 -addext basicConstraints=critical,CA:TRUE",
            t->dir, SWORN_TEST_SWTPM_CA_ROOT, SWORN_TEST_SWTPM_CA_ISSUER),
        0);
    assert_int_equal(verify_ek_cert(t, "--ek-cert ek-rsa2048.crt --ca other.pem"), 1);
    assert_int_equal(verify_ek_cert(t, "--ek-cert ek-rsa2048.crt --ca fake-issuer.pem"), 1);
    assert_int_equal(
        verify_ek_cert(t, "--ek-cert ek-rsa2048.crt --ca fake-root.pem --ca fake-issuer.pem"), 1);
    /* A genuine certificate of another key: the ECC EK public, and the P-384 EK's certificate
     * (its chain is fine) for the RSA EK. */
    snprintf(args, sizeof(args), "--ek-cert ek-rsa2048.crt %s --ek-pub ek.ecc.pub", chain);
    assert_int_equal(verify_ek_cert(t, args), 1);
    snprintf(args, sizeof(args), "--ek-cert ek-secp384r1.crt %s", chain);
    assert_int_equal(verify_ek_cert(t, args), 0);
    snprintf(args, sizeof(args), "--ek-cert ek-secp384r1.crt %s --ek-pub ek.pub", chain);
    assert_int_equal(verify_ek_cert(t, args), 1);
    /* Not a certificate; and usage. */
    snprintf(args, sizeof(args), "--ek-cert secret %s", chain);
    assert_int_equal(verify_ek_cert(t, args), 2);
    assert_int_equal(verify_ek_cert(t, "--ek-cert ek-rsa2048.crt"), 2);

    /* make-credential with the certificate: made only when the chain and the key hold. */
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && '%s' make-credential --ek-pub ek.pub "
                                          "--ak-name p/ak.name --secret secret --out cred "
                                          "--ek-cert ek-rsa2048.crt %s",
                                          t->dir, sworn_test_bin("SWORN_TPM_BIN"), chain),
                     0);
    assert_int_equal(sworn_test_swtpm_shf(
                         t, "cd '%s' && '%s' activate-credential --tcti '%s' --in cred --out s.out",
                         t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     0);
    assert_file_is(t, "s.out", secret, SECRET_LEN);
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && '%s' make-credential --ek-pub ek.ecc.pub "
                                          "--ak-name p/ak.name --secret secret --out cred.x "
                                          "--ek-cert ek-rsa2048.crt %s",
                                          t->dir, sworn_test_bin("SWORN_TPM_BIN"), chain),
                     1);
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && '%s' make-credential --ek-pub ek.pub "
                                          "--ak-name p/ak.name --secret secret --out cred.y "
                                          "--ek-cert ek-rsa2048.crt --ca other.pem",
                                          t->dir, sworn_test_bin("SWORN_TPM_BIN")),
                     1);
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && '%s' make-credential --ek-pub ek.pub "
                                          "--ak-name p/ak.name --secret secret --out cred.z "
                                          "--ek-cert ek-rsa2048.crt",
                                          t->dir, sworn_test_bin("SWORN_TPM_BIN")),
                     2);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && test ! -e cred.x && test ! -e cred.y && test ! -e "
                             "cred.z",
                             t->dir),
        0);
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
        cmocka_unit_test_setup_teardown(test_ecc_ek, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_roca_ek_refused, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_ek_cert_chain, sworn_test_swtpm_setup_ek,
                                        sworn_test_swtpm_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
