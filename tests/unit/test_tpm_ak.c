/*
 * test_tpm_ak.c -- the persistent attestation key (sworn_tpm_ak_open, attest/tpmattest.h; issue
 * 11, finding 14) against a real software TPM (swtpm, no resource manager), with the TPM's
 * state read back by tpm2-tools, a client that shares no code with sworn.
 *
 *   1. On an empty handle the AK is made and persisted; opened again it is found, with the name
 *      of the template's primary; releasing it evicts nothing; no transient object or session
 *      is left at any point; a quote by it verifies with the auditor's checker (verifier/quote.c),
 *      qualifiedSigner included, under the public area tpm2_readpublic reads at the handle.
 *   2. An AK persisted by the operator with tpm2-tools (the recipe of docs/decisiond.md section
 *      6, for an owner hierarchy with a password) is found as ours.
 *   3. Objects that are not ours are refused and left as they are (same name before and after):
 *      the template in the owner hierarchy, a non-restricted signing key, and an endorsement
 *      primary of the template's kind made with another unique (only the comparison with the
 *      template's primary, made again, tells that one apart). A handle outside the owner's
 *      persistent range is refused before the TPM is asked. A key swapped in at the handle
 *      after the AK was opened makes the next quote fail (checked before it is returned).
 *   4. With every transient slot held by another program, the AK can be neither made nor
 *      read (a persistent object too takes a slot for each command), and the error says so;
 *      nothing is evicted, and once the slots are free the AK is found and quotes.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/sha.h>

#include "err.h"
#include "quote.h"
#include "swtpm_fixture.h"
#include "testutil.h"
#include "tpmattest.h"

#define AK_HANDLE SWORN_TPM_AK_HANDLE_DEFAULT
#define AK_ATTRS "restricted|sign|fixedtpm|fixedparent|sensitivedataorigin|userwithauth"

/* The TPM holds no transient object and no session (tpm2_getcap prints nothing for each). */
static void expect_tpm_clean(struct sworn_test_swtpm *t, const char *when)
{
    if (sworn_test_swtpm_shf(t,
                             "for k in handles-transient handles-loaded-session "
                             "handles-saved-session; do out=$(tpm2_getcap $k) || exit 2; "
                             "[ -z \"$out\" ] || { echo \"%s: $k: $out\" >&2; exit 1; }; done",
                             when) != 0)
        fail_msg("%s: the TPM holds transient objects or sessions (see cmd.log)", when);
}

/* Whether tpm2_getcap lists handle among the persistent objects. */
static int persisted(struct sworn_test_swtpm *t, uint32_t handle)
{
    return sworn_test_swtpm_shf(t, "tpm2_getcap handles-persistent | grep -qix -- '- 0x%08x'",
                                (unsigned)handle) == 0;
}

/* The name tpm2_readpublic reports for the object at handle, as hex, into out (file name.N). */
static void read_name(struct sworn_test_swtpm *t, uint32_t handle, const char *file, char *out,
                      size_t cap)
{
    char *path = sworn_test_path(t->dir, file);

    assert_int_equal(sworn_test_swtpm_shf(t, "tpm2_readpublic -c 0x%08x -n '%s' >/dev/null",
                                          (unsigned)handle, path),
                     0);
    {
        size_t len = 0;
        char *bin = sworn_test_read_file(path, &len);

        assert_true(len * 2 < cap);
        for (size_t i = 0; i < len; i++)
            snprintf(out + 2 * i, cap - 2 * i, "%02x", (unsigned char)bin[i]);
        free(bin);
    }
    free(path);
}

static struct sworn_tpm *open_tpm(struct sworn_test_swtpm *t)
{
    struct sworn_tpm *tpm = NULL;

    if (sworn_tpm_open(t->tcti, &tpm) != 0)
        fail_msg("sworn_tpm_open: %s", sworn_err_msg());
    return tpm;
}

/* The name the template's primary has on this TPM (a transient AK, flushed). */
static void template_name(struct sworn_test_swtpm *t, uint8_t name[SWORN_TPM_NAME_LEN])
{
    struct sworn_tpm *tpm = open_tpm(t);
    struct sworn_tpm_ak ak;

    if (sworn_tpm_ak_create(tpm, &ak) != 0)
        fail_msg("sworn_tpm_ak_create: %s", sworn_err_msg());
    memcpy(name, ak.name, SWORN_TPM_NAME_LEN);
    sworn_tpm_ak_flush(tpm, &ak);
    sworn_tpm_close(tpm);
}

/* Quote PCR 23 with ak and check the quote with the auditor's code, under the public area that
 * tpm2_readpublic reads at ak's handle (not the one sworn_tpm_ak_open returned). */
static void quote_verifies(struct sworn_test_swtpm *t, struct sworn_tpm *tpm,
                           const struct sworn_tpm_ak *ak)
{
    struct sv_quote_policy policy;
    struct sv_quote_result res;
    uint8_t qual[32], *attest = NULL, *sig = NULL;
    size_t attest_len = 0, sig_len = 0, pub_len = 0;
    char *pub_path = sworn_test_path(t->dir, "ak-at-handle.pub"), *pub, why[256];

    memset(&policy, 0, sizeof(policy));
    SHA256((const uint8_t *)"checkpoint", 10, qual);
    policy.pcr_mask = 1u << 23;
    assert_int_equal(sworn_tpm_pcr_read(tpm, 23, policy.pcr_values[23]), 0);
    if (sworn_tpm_quote(tpm, ak, qual, 1u << 23, &attest, &attest_len, &sig, &sig_len) != 0)
        fail_msg("sworn_tpm_quote: %s", sworn_err_msg());
    assert_int_equal(sworn_test_swtpm_shf(t, "tpm2_readpublic -c 0x%08x -f tss -o '%s' >/dev/null",
                                          (unsigned)AK_HANDLE, pub_path),
                     0);
    pub = sworn_test_read_file(pub_path, &pub_len);
    if (sv_quote_check(&policy, (const uint8_t *)pub, pub_len, attest, attest_len, sig, sig_len,
                       qual, &res, why, sizeof(why)) != SV_QUOTE_OK)
        fail_msg("the quote by the persistent AK does not verify: %s", why);
    assert_memory_equal(res.ak_name, ak->name, SWORN_TPM_NAME_LEN);
    free(pub);
    free(pub_path);
    free(attest);
    free(sig);
}

/* --- 1 ------------------------------------------------------------------------------------- */

static void test_persisted_once_then_found(void **state)
{
    struct sworn_test_swtpm *t = *state;
    struct sworn_tpm *tpm;
    struct sworn_tpm_ak ak;
    enum sworn_tpm_ak_how how = 0;
    uint8_t expect[SWORN_TPM_NAME_LEN], first[SWORN_TPM_NAME_LEN];

    template_name(t, expect);
    assert_false(persisted(t, AK_HANDLE));
    tpm = open_tpm(t);
    if (sworn_tpm_ak_open(tpm, AK_HANDLE, &ak, &how) != 0)
        fail_msg("sworn_tpm_ak_open: %s", sworn_err_msg());
    assert_int_equal(how, SWORN_TPM_AK_PERSISTED);
    assert_true(ak.persistent);
    assert_memory_equal(ak.name, expect, SWORN_TPM_NAME_LEN);
    memcpy(first, ak.name, SWORN_TPM_NAME_LEN);
    assert_true(persisted(t, AK_HANDLE));
    expect_tpm_clean(t, "after persisting");
    quote_verifies(t, tpm, &ak);
    expect_tpm_clean(t, "after a quote");
    sworn_tpm_ak_flush(tpm, &ak);
    sworn_tpm_close(tpm);
    assert_true(persisted(t, AK_HANDLE)); /* released, not evicted */

    /* A later start finds it, and it is the same key. */
    tpm = open_tpm(t);
    if (sworn_tpm_ak_open(tpm, AK_HANDLE, &ak, &how) != 0)
        fail_msg("sworn_tpm_ak_open (again): %s", sworn_err_msg());
    assert_int_equal(how, SWORN_TPM_AK_FOUND);
    assert_memory_equal(ak.name, first, SWORN_TPM_NAME_LEN);
    expect_tpm_clean(t, "after finding it");
    quote_verifies(t, tpm, &ak);
    /* Closed without a release, as a killed process leaves it: nothing to leak. */
    sworn_tpm_close(tpm);
    expect_tpm_clean(t, "after a close without release");
    assert_true(persisted(t, AK_HANDLE));
}

/* --- 2 ------------------------------------------------------------------------------------- */

static void test_operator_persisted_ak_is_ours(void **state)
{
    struct sworn_test_swtpm *t = *state;
    struct sworn_tpm *tpm;
    struct sworn_tpm_ak ak;
    enum sworn_tpm_ak_how how = 0;
    uint8_t expect[SWORN_TPM_NAME_LEN];

    template_name(t, expect);
    /* docs/decisiond.md section 6 (with -P for an owner password, which swtpm has not). */
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && tpm2_createprimary -Q -C e -g sha256 -G "
                                          "ecc256:ecdsa-sha256:null -a '" AK_ATTRS "' -c ak.ctx && "
                                          "tpm2_evictcontrol -Q -C o -c ak.ctx 0x%08x && "
                                          "tpm2_flushcontext -t",
                                          t->dir, (unsigned)AK_HANDLE),
                     0);
    tpm = open_tpm(t);
    if (sworn_tpm_ak_open(tpm, AK_HANDLE, &ak, &how) != 0)
        fail_msg("sworn_tpm_ak_open: %s", sworn_err_msg());
    assert_int_equal(how, SWORN_TPM_AK_FOUND);
    assert_memory_equal(ak.name, expect, SWORN_TPM_NAME_LEN);
    sworn_tpm_ak_flush(tpm, &ak);
    sworn_tpm_close(tpm);
    expect_tpm_clean(t, "after opening the operator's AK");
}

/* --- 3 ------------------------------------------------------------------------------------- */

/* sworn_tpm_ak_open at handle fails with SWORN_ERR_VERIFY naming sub, and the object there keeps
 * its name; nothing transient is left. */
static void refused_untouched(struct sworn_test_swtpm *t, uint32_t handle, const char *sub)
{
    struct sworn_tpm *tpm;
    struct sworn_tpm_ak ak;
    enum sworn_tpm_ak_how how = 0;
    char before[256], after[256];

    read_name(t, handle, "name.before", before, sizeof(before));
    tpm = open_tpm(t);
    assert_int_equal(sworn_tpm_ak_open(tpm, handle, &ak, &how), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    if (strstr(sworn_err_msg(), sub) == NULL)
        fail_msg("got \"%s\", want \"...%s...\"", sworn_err_msg(), sub);
    sworn_tpm_close(tpm);
    read_name(t, handle, "name.after", after, sizeof(after));
    assert_string_equal(before, after);
    expect_tpm_clean(t, "after a refusal");
}

static void test_foreign_objects_refused(void **state)
{
    struct sworn_test_swtpm *t = *state;
    struct sworn_tpm *tpm;
    struct sworn_tpm_ak ak;
    enum sworn_tpm_ak_how how = 0;
    uint8_t spki[256];
    size_t spki_len;

    /* The template in the owner hierarchy: right kind, wrong parent (the qualified name). */
    assert_int_equal(sworn_test_swtpm_make_key(t, AK_HANDLE, SWORN_TEST_SWTPM_P256, AK_ATTRS, spki,
                                               sizeof(spki), &spki_len),
                     0);
    refused_untouched(t, AK_HANDLE, "not a primary key of the endorsement hierarchy");
    /* A key a tpm: signer would use (not restricted): not the template. */
    assert_int_equal(sworn_test_swtpm_make_key(t, 0x81000010u, SWORN_TEST_SWTPM_P256,
                                               SWORN_TEST_SWTPM_SIGN_ATTRS, spki, sizeof(spki),
                                               &spki_len),
                     0);
    refused_untouched(t, 0x81000010u, "not an attestation key of sworn's template");
    /* An endorsement primary of the template's kind, from another unique: only the comparison
     * with the template's primary, made again, tells it apart. */
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && printf 'not sworns unique' | "
                                          "tpm2_createprimary -Q -C e -g sha256 -G "
                                          "ecc256:ecdsa-sha256:null -a '" AK_ATTRS "' -u - -c "
                                          "other.ctx && tpm2_evictcontrol -Q -C o -c other.ctx "
                                          "0x81000011 && tpm2_flushcontext -t",
                                          t->dir),
                     0);
    refused_untouched(t, 0x81000011u, "not the one sworn's template gives");
    /* Outside the owner's persistent range: refused before the TPM is asked. */
    tpm = open_tpm(t);
    assert_int_equal(sworn_tpm_ak_open(tpm, 0x81800000u, &ak, &how), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(sworn_tpm_ak_open(tpm, 0x80000000u, &ak, &how), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    sworn_tpm_close(tpm);
    assert_false(persisted(t, 0x81800000u));
}

/*
 * After the AK was opened, someone swaps another key in at its handle (owner authorization is
 * all it takes). The TPM signs with whatever sits at the handle, and password authorization binds
 * no name: the quote must be refused before it is returned, not stored as if it were good.
 */
static void test_swapped_object_refused_at_quote(void **state)
{
    struct sworn_test_swtpm *t = *state;
    struct sworn_tpm *tpm = open_tpm(t);
    struct sworn_tpm_ak ak;
    enum sworn_tpm_ak_how how = 0;
    uint8_t qual[32] = {1}, *attest = NULL, *sig = NULL, spki[256];
    size_t attest_len = 0, sig_len = 0, spki_len;

    assert_int_equal(sworn_tpm_ak_open(tpm, AK_HANDLE, &ak, &how), 0);
    quote_verifies(t, tpm, &ak);
    assert_int_equal(sworn_test_swtpm_evict(t, AK_HANDLE), 0);
    assert_int_equal(sworn_test_swtpm_make_key(t, AK_HANDLE, SWORN_TEST_SWTPM_P256, AK_ATTRS, spki,
                                               sizeof(spki), &spki_len),
                     0);
    assert_int_equal(
        sworn_tpm_quote(tpm, &ak, qual, 1u << 23, &attest, &attest_len, &sig, &sig_len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    if (strstr(sworn_err_msg(), "another signer") == NULL)
        fail_msg("got \"%s\"", sworn_err_msg());
    assert_null(attest);
    assert_null(sig);
    sworn_tpm_ak_flush(tpm, &ak);
    sworn_tpm_close(tpm);
    /* Opened again, the swapped-in key is refused as not ours. */
    refused_untouched(t, AK_HANDLE, "not a primary key of the endorsement hierarchy");
}

/* --- 4 ------------------------------------------------------------------------------------- */

/* Another program fills the TPM's transient slots (three on swtpm) and keeps them. */
static void fill_transient_slots(struct sworn_test_swtpm *t)
{
    assert_int_equal(sworn_test_swtpm_shf(t,
                                          "cd '%s' && for i in 1 2 3; do tpm2_createprimary -Q -C "
                                          "o -G ecc256 -c fill$i.ctx || exit 1; done; "
                                          "! tpm2_createprimary -Q -C o -G ecc256 -c fill4.ctx "
                                          "2>/dev/null",
                                          t->dir),
                     0);
}

/* sworn_tpm_ak_open fails, saying the TPM has no free object slot. */
static void open_fails_full(struct sworn_test_swtpm *t)
{
    struct sworn_tpm *tpm = open_tpm(t);
    struct sworn_tpm_ak ak;
    enum sworn_tpm_ak_how how = 0;

    assert_int_equal(sworn_tpm_ak_open(tpm, AK_HANDLE, &ak, &how), -1);
    if (strstr(sworn_err_msg(), "no free object slot") == NULL ||
        strstr(sworn_err_msg(), "TPM_RC_OBJECT_MEMORY") == NULL)
        fail_msg("got \"%s\"", sworn_err_msg());
    sworn_tpm_close(tpm);
}

static void test_full_tpm(void **state)
{
    struct sworn_test_swtpm *t = *state;
    struct sworn_tpm *tpm;
    struct sworn_tpm_ak ak;
    enum sworn_tpm_ak_how how = 0;
    uint8_t expect[SWORN_TPM_NAME_LEN];

    template_name(t, expect);
    /* Not persisted yet: it cannot be made, and the error says why. */
    fill_transient_slots(t);
    open_fails_full(t);
    assert_false(persisted(t, AK_HANDLE));
    assert_int_equal(sworn_test_swtpm_sh(t, "tpm2_flushcontext -t"), 0);

    /* Persisted, then the slots fill up: a persistent object too needs a free slot for each
     * command, so it cannot be read either (the same error); it stays persisted. */
    tpm = open_tpm(t);
    assert_int_equal(sworn_tpm_ak_open(tpm, AK_HANDLE, &ak, &how), 0);
    assert_int_equal(how, SWORN_TPM_AK_PERSISTED);
    sworn_tpm_ak_flush(tpm, &ak);
    sworn_tpm_close(tpm);
    fill_transient_slots(t);
    open_fails_full(t);
    assert_true(persisted(t, AK_HANDLE));
    /* Exactly the other program's three objects are there, none of ours. */
    assert_int_equal(sworn_test_swtpm_sh(t, "[ \"$(tpm2_getcap handles-transient | wc -l)\" = 3 ]"),
                     0);
    /* Once their owner lets them go, the AK is found and quotes. */
    assert_int_equal(sworn_test_swtpm_sh(t, "tpm2_flushcontext -t"), 0);
    tpm = open_tpm(t);
    assert_int_equal(sworn_tpm_ak_open(tpm, AK_HANDLE, &ak, &how), 0);
    assert_int_equal(how, SWORN_TPM_AK_FOUND);
    assert_memory_equal(ak.name, expect, SWORN_TPM_NAME_LEN);
    quote_verifies(t, tpm, &ak);
    sworn_tpm_ak_flush(tpm, &ak);
    sworn_tpm_close(tpm);
    expect_tpm_clean(t, "after the other program's flush");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_persisted_once_then_found, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_operator_persisted_ak_is_ours, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_foreign_objects_refused, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_swapped_object_refused_at_quote,
                                        sworn_test_swtpm_setup, sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_full_tpm, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
