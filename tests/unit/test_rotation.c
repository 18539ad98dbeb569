/*
 * test_rotation.c -- key rotation end to end: a real SoftHSMv2 token (softhsm_fixture.h), the real
 * sworn-hsm binary ($SWORN_HSM_BIN) for every keyring and key-event command, root keys made by the
 * real sworn-log binary ($SWORN_LOG_BIN keygen) plus one P-256 PEM root made by openssl, and
 * openssl's command line as the independent check of the key-event signatures.
 *
 * The story, in order (the tests share one token and build on each other's files):
 *   1. keyring version 1 with 2-of-3 roots; version 2 adds the checkpoint key; the chain
 *      verifies, and version 1's roots can be pinned;
 *   2. refusals: a version signed by one root, a root rotation signed by the new roots but not a
 *      threshold of the old ones, a key that is no root, version 1 below its threshold;
 *   3. rotate: the statement verifies (sworn-hsm, the library, and openssl over the TBS bytes),
 *      the retired key's earlier signatures stay valid, later ones do not, the new key works;
 *   4. retire: the key signs its own retirement;
 *   5. revoke: a revoked key's signatures dated after the revocation are refused; a retired key
 *      revoked earlier loses signatures it had; a signed version that takes a revocation back is
 *      refused by `keyring sign` and by verification.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "encoding.h"
#include "err.h"
#include "keyevent.h"
#include "keyring.h"
#include "note.h"
#include "notesign.h"
#include "signer.h"
#include "softhsm_fixture.h"
#include "testutil.h"

#define T(s) time_of(s)
static const char checkpoint_body[] =
    "test.sworn.example/log\n42\nrKbDipCvhuX1GZ7g5BBe8sA6BbJ7ja/1nk427v383cs=\n";

struct fx {
    struct softhsm *h;
    const char *hsm, *log;
    char *vkey[6]; /* roots a, b, c (PEM P-256) and d, e, f (a later root set) */
    char *old_uri, *new_uri;
    uint8_t old_spki[SWORN_SIGNER_SPKI_MAX];
    size_t old_spki_len;
    char *out; /* stdout and stderr of the last command */
};

static struct fx *F;

static int64_t time_of(const char *s)
{
    int64_t t = 0;

    if (sworn_keyring_time_parse(s, strlen(s), &t) != 0)
        fail_msg("bad time %s", s);
    return t;
}

/* Run a shell command in the token folder; its output is kept in F->out. Returns its status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char *cmd, *out_path = sworn_test_path(F->h->dir, "cmd.out");
    va_list ap;
    int st;

    va_start(ap, fmt);
    assert_true(vasprintf(&cmd, fmt, ap) > 0);
    va_end(ap);
    st = softhsm_sh(F->h, cmd, out_path);
    free(F->out);
    F->out = sworn_test_read_file(out_path, NULL);
    free(cmd);
    free(out_path);
    return st;
}

/* Run sworn-hsm with arguments; expect exit status want. */
#define HSM(want, ...) hsm_expect((want), __VA_ARGS__)
static void hsm_expect(int want, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hsm_expect(int want, const char *fmt, ...)
{
    char *args;
    va_list ap;
    int st;

    va_start(ap, fmt);
    assert_true(vasprintf(&args, fmt, ap) > 0);
    va_end(ap);
    st = sh("'%s' %s", F->hsm, args);
    if (st != want) {
        char msg[8192];

        snprintf(msg, sizeof(msg), "sworn-hsm %s\nexited %d, expected %d:\n%s", args, st, want,
                 F->out);
        free(args);
        fail_msg("%s", msg);
    }
    free(args);
}

static char *file_in_dir(const char *name, size_t *len)
{
    char *p = sworn_test_path(F->h->dir, name), *data = sworn_test_read_file(p, len);

    free(p);
    return data;
}

static void write_in_dir(const char *name, const void *data, size_t len)
{
    char *p = sworn_test_path(F->h->dir, name);

    sworn_test_write_file(p, data, len, 0644);
    free(p);
}

/* Verify the keyring chain (files named in dir) in process. OUT: the newest version (free it). */
static struct sworn_keyring *chain(const char *const *names, size_t n)
{
    const char *files[16];
    size_t lens[16];
    struct sworn_keyring *last = sworn_keyring_new();

    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++)
        files[i] = file_in_dir(names[i], &lens[i]);
    if (sworn_keyring_verify_chain(files, lens, n, last) != 0)
        fail_msg("chain: %s", sworn_err_msg());
    for (size_t i = 0; i < n; i++)
        free((void *)files[i]);
    return last;
}

static void write_pem_pub(const char *name, const uint8_t *spki, size_t len)
{
    const unsigned char *p = spki;
    EVP_PKEY *k = d2i_PUBKEY(NULL, &p, (long)len);
    char *path = sworn_test_path(F->h->dir, name);
    FILE *out = fopen(path, "w");

    assert_non_null(k);
    assert_non_null(out);
    assert_int_equal(PEM_write_PUBKEY(out, k), 1);
    fclose(out);
    EVP_PKEY_free(k);
    free(path);
}

/* A signature by an HSM key, made in process (pinned to spki). */
static void hsm_sign(const char *uri, const uint8_t *spki, size_t spki_len,
                     enum sworn_sign_purpose p, const uint8_t *msg, size_t len, uint8_t *sig,
                     size_t *sig_len)
{
    struct sworn_signer_config cfg;
    struct sworn_signer *s = NULL;

    memset(&cfg, 0, sizeof(cfg));
    cfg.uri = uri;
    cfg.module_path = SOFTHSM_MODULE_PATH;
    cfg.pin_file = F->h->pin_file;
    cfg.pinned_spki = spki;
    cfg.pinned_spki_len = spki_len;
    if (sworn_signer_open(&cfg, &s) != 0 ||
        sworn_signer_sign(s, p, msg, len, sig, SWORN_SIGNER_SIG_MAX, sig_len) != 0)
        fail_msg("sign with %s: %s", uri, sworn_err_msg());
    sworn_signer_close(s);
}

/*
 * What a verifier of a checkpoint signature does with the keyring: the key must be valid for its
 * purpose at the time the signature was made, and the signature must verify with the keyring's
 * SPKI. Returns 0 when accepted.
 */
static int accept_signature(const struct sworn_keyring *kr, const uint8_t *spki, size_t spki_len,
                            int64_t made_at, const uint8_t *sig, size_t sig_len)
{
    uint8_t id[SWORN_KEY_ID_LEN];
    const struct sworn_keyring_key *k;

    SHA256(spki, spki_len, id);
    if (sworn_keyring_key_valid_at(kr, id, SWORN_PURPOSE_CHECKPOINT, made_at) != 0)
        return -1;
    k = sworn_keyring_find(kr, id);
    return sworn_signature_verify(k->spki, k->spki_len, SWORN_PURPOSE_CHECKPOINT,
                                  (const uint8_t *)checkpoint_body, strlen(checkpoint_body), sig,
                                  sig_len);
}

/* --- Fixture. -------------------------------------------------------------------------------- */

static int group_setup(void **state)
{
    static const char *const names[6] = {"a", "b", "c", "d", "e", "f"};
    struct fx *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->hsm = getenv("SWORN_HSM_BIN");
    f->log = getenv("SWORN_LOG_BIN");
    if (f->hsm == NULL || f->log == NULL) {
        printf("SKIPPED: SWORN_HSM_BIN and SWORN_LOG_BIN are not set (ctest sets them)\n");
        exit(77);
    }
    f->h = softhsm_start();
    /* The module reads its configuration at C_Initialize, in this process too. */
    setenv("SOFTHSM2_CONF", f->h->conf, 1);
    F = f;
    for (int i = 0; i < 6; i++) {
        if (i == 2) {
            /* Root c is an ECDSA P-256 PEM key; its note name is given beside it. */
            struct sworn_note_signer s;
            char vkey[SWORN_NOTE_VKEY_MAX + 1], *path = sworn_test_path(f->h->dir, "c.pem");

            if (sh("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out c.pem "
                   "&& chmod 600 c.pem") != 0)
                fail_msg("openssl genpkey: %s", f->out);
            if (sworn_note_signer_open_file(path, "root-c.example", &s) != 0 ||
                sworn_note_verifier_format(&s.pub, vkey, sizeof(vkey)) < 0)
                fail_msg("root c: %s", sworn_err_msg());
            f->vkey[i] = strdup(vkey);
            sworn_note_signer_close(&s);
            free(path);
            continue;
        }
        if (sh("'%s' keygen --name root-%s.example --out %s.key", f->log, names[i], names[i]) != 0)
            fail_msg("sworn-log keygen: %s", f->out);
        f->out[strcspn(f->out, "\n")] = '\0';
        f->vkey[i] = strdup(f->out);
    }
    f->old_uri =
        softhsm_keygen(f->h, "checkpoint", "p256", "20260101", f->old_spki, &f->old_spki_len);
    write_in_dir("old.der", f->old_spki, f->old_spki_len);
    *state = f;
    return 0;
}

static int group_teardown(void **state)
{
    struct fx *f = *state;

    softhsm_stop(f->h);
    for (int i = 0; i < 6; i++)
        free(f->vkey[i]);
    free(f->old_uri);
    free(f->new_uri);
    free(f->out);
    free(f);
    return 0;
}

/* --- 1. The chain. --------------------------------------------------------------------------- */

static void test_keyring_chain(void **state)
{
    struct sworn_keyring *last;
    char hex[SWORN_KEY_ID_HEX_LEN + 1], *want;
    uint8_t id[SWORN_KEY_ID_LEN];
    static const char *const v12[] = {"v1", "v2"};

    (void)state;
    /* Version 1: roots a, b, c, 2 of 3, signed by a and the PEM root c. */
    HSM(0,
        "keyring init --out v1 --threshold 2 --root-vkey '%s' --root-vkey '%s' --root-vkey '%s' "
        "--root-key a.key --root-key c.pem",
        F->vkey[0], F->vkey[1], F->vkey[2]);
    HSM(0, "keyring verify v1");
    /* Version 2: the checkpoint key, added and then signed by two roots in two sittings. */
    HSM(0, "keyring add --in v1 --out v2 --spki old.der --purpose checkpoint "
           "--valid-from 2026-01-01T00:00:00Z");
    HSM(2, "keyring sign --in v2 --out v2 --root-key b.key"); /* no --prev: refused */
    HSM(0, "keyring sign --in v2 --out v2 --prev v1 --root-key b.key");
    assert_non_null(strstr(F->out, "version 2 has 1 of the 2 signatures"));
    HSM(1, "keyring verify v1 v2");
    HSM(0, "keyring sign --in v2 --out v2 --prev v1 --root-key c.pem --root-key b.key");
    assert_non_null(strstr(F->out, "has signed already"));
    HSM(0, "keyring verify v1 v2");
    SHA256(F->old_spki, F->old_spki_len, id);
    sworn_hex_encode(id, sizeof(id), hex, sizeof(hex));
    assert_true(asprintf(&want, "key %s checkpoint active 2026-01-01T00:00:00Z -\n", hex) > 0);
    assert_non_null(strstr(F->out, want));
    free(want);
    /* Version 1's roots pinned out of band: exactly a, b, c. */
    HSM(0, "keyring verify --root-vkey '%s' --root-vkey '%s' --root-vkey '%s' v1 v2", F->vkey[2],
        F->vkey[0], F->vkey[1]);
    HSM(1, "keyring verify --root-vkey '%s' --root-vkey '%s' --root-vkey '%s' v1 v2", F->vkey[0],
        F->vkey[1], F->vkey[3]);
    HSM(1, "keyring verify --root-vkey '%s' --root-vkey '%s' v1 v2", F->vkey[0], F->vkey[1]);
    HSM(1, "keyring verify --root-vkey '%s' --root-vkey '%s' --root-vkey '%s' v1 v2", F->vkey[0],
        F->vkey[0], F->vkey[1]);
    /* The library agrees. */
    last = chain(v12, 2);
    assert_int_equal(last->version, 2);
    assert_non_null(sworn_keyring_find(last, id));
    sworn_keyring_free(last);
    /* Outputs are never overwritten; a chain out of order is refused. */
    HSM(2, "keyring add --in v1 --out v2 --spki old.der --purpose checkpoint");
    HSM(1, "keyring verify v2 v1");
    HSM(2, "keyring sign --in v2 --out v1 --prev v1 --root-key a.key"); /* over another version */
    HSM(2, "keyring verify");
}

/* --- 2. Thresholds. -------------------------------------------------------------------------- */

static void test_threshold_refusals(void **state)
{
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len = 0;
    char *uri;

    (void)state;
    /* Version 1 with one signature of two needed. */
    HSM(0,
        "keyring init --out v1-one --threshold 2 --root-vkey '%s' --root-vkey '%s' --root-vkey "
        "'%s' --root-key a.key",
        F->vkey[0], F->vkey[1], F->vkey[2]);
    HSM(1, "keyring verify v1-one");
    assert_non_null(strstr(F->out, "1 valid signature(s)"));
    /* An unsigned version 1. */
    HSM(0, "keyring init --out v1-bare --threshold 1 --root-vkey '%s'", F->vkey[0]);
    HSM(1, "keyring verify v1-bare");

    /* Version 3 with a receipt key, signed by one root only. */
    uri = softhsm_keygen(F->h, "receipt", "ed25519", "20260101", spki, &spki_len);
    write_in_dir("receipt.der", spki, spki_len);
    HSM(0, "keyring add --in v2 --out v3-one --spki receipt.der --purpose receipt");
    HSM(0, "keyring sign --in v3-one --out v3-one --prev v2 --root-key a.key");
    HSM(1, "keyring verify v1 v2 v3-one");
    /* A key that is no root of either version cannot sign at all. */
    HSM(1, "keyring sign --in v3-one --out v3-one --prev v2 --root-key d.key");

    /* A root rotation to d, e, f (2 of 3): the new roots alone cannot let it in. */
    HSM(0,
        "keyring set-roots --in v2 --out v3-roots --threshold 2 --root-vkey '%s' --root-vkey "
        "'%s' --root-vkey '%s'",
        F->vkey[3], F->vkey[4], F->vkey[5]);
    HSM(0, "keyring sign --in v3-roots --out v3-roots --prev v2 --root-key d.key --root-key e.key");
    assert_non_null(strstr(F->out, "and 0 of the 2 of version 2's roots"));
    HSM(1, "keyring verify v1 v2 v3-roots");
    assert_non_null(strstr(F->out, "previous version"));
    HSM(0, "keyring sign --in v3-roots --out v3-roots --prev v2 --root-key a.key");
    HSM(1, "keyring verify v1 v2 v3-roots");
    HSM(0, "keyring sign --in v3-roots --out v3-roots --prev v2 --root-key c.pem");
    HSM(0, "keyring verify v1 v2 v3-roots");
    assert_non_null(strstr(F->out, "version 3 needs 2 of 3 roots"));
    /* From now on the old roots alone are not enough. */
    HSM(0, "keyring add --in v3-roots --out v4-old --spki receipt.der --purpose receipt");
    HSM(0, "keyring sign --in v4-old --out v4-old --prev v3-roots --root-key d.key");
    HSM(1, "keyring sign --in v4-old --out v4-old --prev v3-roots --root-key a.key");
    HSM(1, "keyring verify v1 v2 v3-roots v4-old");
    HSM(0, "keyring sign --in v4-old --out v4-old --prev v3-roots --root-key f.key");
    HSM(0, "keyring verify v1 v2 v3-roots v4-old");
    free(uri);
}

/* --- 3. Rotation. ---------------------------------------------------------------------------- */

/* Check a key-event signature with the openssl command line over the TBS of signer.h. */
static void openssl_check(const char *pem, const uint8_t *msg, size_t len, const uint8_t *sig,
                          size_t sig_len)
{
    uint8_t digest[32], tbs[SWORN_SIGNER_TBS_MAX];
    size_t tbs_len = 0;

    SHA256(msg, len, digest);
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_KEY_EVENT, digest, 32, tbs, &tbs_len), 0);
    assert_int_equal(tbs_len, 20 + 32);
    assert_memory_equal(tbs, "\xffsworn/v1 key-event\0", 20);
    write_in_dir("tbs.bin", tbs, tbs_len);
    write_in_dir("sig.bin", sig, sig_len);
    if (sh("openssl dgst -sha256 -verify %s -signature sig.bin tbs.bin", pem) != 0)
        fail_msg("openssl does not verify the key-event signature: %s", F->out);
    /* A changed byte must fail, or the check proves nothing. */
    tbs[tbs_len - 1] ^= 1;
    write_in_dir("tbs.bin", tbs, tbs_len);
    assert_int_not_equal(sh("openssl dgst -sha256 -verify %s -signature sig.bin tbs.bin", pem), 0);
}

static void test_rotate(void **state)
{
    static const char *const v123[] = {"v1", "v2", "v3"};
    struct sworn_keyring *kr;
    struct sworn_keyevent ev;
    const struct sworn_keyring_key *oldk, *newk;
    uint8_t sig_before[SWORN_SIGNER_SIG_MAX], sig_after[SWORN_SIGNER_SIG_MAX];
    uint8_t sig_new[SWORN_SIGNER_SIG_MAX], old_id[SWORN_KEY_ID_LEN];
    size_t sig_before_len = 0, sig_after_len = 0, sig_new_len = 0, len = 0;
    char *text, *cut, *pop;
    const int64_t eff = T("2026-02-01T00:00:00Z");

    (void)state;
    /* A checkpoint signed by the old key in January (the log dates it 2026-01-15). */
    hsm_sign(F->old_uri, F->old_spki, F->old_spki_len, SWORN_PURPOSE_CHECKPOINT,
             (const uint8_t *)checkpoint_body, strlen(checkpoint_body), sig_before,
             &sig_before_len);

    /* Outputs that exist are refused before any key is made. */
    write_in_dir("taken", "x", 1);
    HSM(2,
        "rotate --token %s --pin-file user.pin --keyring v2 --old-uri '%s' --purpose checkpoint "
        "--date 20260201 --out taken --keyring-out v3",
        SOFTHSM_TOKEN, F->old_uri);
    /* A wrong purpose for the old key is refused too. */
    HSM(2,
        "rotate --token %s --pin-file user.pin --keyring v2 --old-uri '%s' --purpose receipt "
        "--date 20260201 --out ev-rotate --keyring-out v3",
        SOFTHSM_TOKEN, F->old_uri);
    HSM(0,
        "rotate --token %s --pin-file user.pin --keyring v2 --old-uri '%s' --purpose checkpoint "
        "--date 20260201 --effective-from 2026-02-01T00:00:00Z --out ev-rotate --keyring-out v3 "
        "2>/dev/null",
        SOFTHSM_TOKEN, F->old_uri);
    F->out[strcspn(F->out, "\n")] = '\0';
    assert_true(strncmp(F->out, "pkcs11:token=" SOFTHSM_TOKEN ";id=", 22) == 0);
    assert_non_null(strstr(F->out, "object=sworn%2Fcheckpoint%2F20260201"));
    F->new_uri = strdup(F->out);
    /* v3 is unsigned until the roots sign it. */
    HSM(1, "keyring verify v1 v2 v3");
    HSM(0, "keyring sign --in v3 --out v3 --prev v2 --root-key a.key --root-key b.key");
    assert_non_null(strstr(F->out, "active -> retired until 2026-02-01T00:00:00Z"));
    HSM(0, "keyring verify v1 v2 v3");
    HSM(0, "verify-event --statement ev-rotate v1 v2 v3");
    assert_non_null(strstr(F->out, "key-event verified: rotate checkpoint key"));
    assert_non_null(strstr(F->out, "proof of possession verified"));
    /* Against the version before the rotation too. */
    HSM(0, "verify-event --statement ev-rotate v1 v2");

    /* The library agrees, and the keyring says what the statement says. */
    kr = chain(v123, 3);
    text = file_in_dir("ev-rotate", &len);
    if (sworn_keyevent_parse(text, len, &ev) != 0)
        fail_msg("parse ev-rotate: %s", sworn_err_msg());
    assert_int_equal(ev.kind, SWORN_KEYEVENT_ROTATE);
    assert_int_equal(ev.effective_from, eff);
    assert_int_equal(sworn_keyevent_verify(&ev, kr), 0);
    SHA256(F->old_spki, F->old_spki_len, old_id);
    assert_memory_equal(ev.old_id, old_id, SWORN_KEY_ID_LEN);
    oldk = sworn_keyring_find(kr, old_id);
    newk = sworn_keyring_find(kr, ev.new_id);
    assert_non_null(oldk);
    assert_non_null(newk);
    assert_int_equal(oldk->status, SWORN_KEY_RETIRED);
    assert_int_equal(oldk->valid_until, eff);
    assert_int_equal(newk->status, SWORN_KEY_ACTIVE);
    assert_int_equal(newk->valid_from, eff);
    assert_int_equal(newk->purpose, SWORN_PURPOSE_CHECKPOINT);

    /*
     * openssl checks both signatures over the bytes of the file: the statement is everything
     * before the old-signature line (cut here, not rebuilt by our formatter).
     */
    cut = strstr(text, "old-signature ");
    assert_non_null(cut);
    write_pem_pub("old.pem", F->old_spki, F->old_spki_len);
    write_pem_pub("new.pem", ev.new_spki, ev.new_spki_len);
    openssl_check("old.pem", (const uint8_t *)text, (size_t)(cut - text), ev.old_sig,
                  ev.old_sig_len);
    assert_true(asprintf(&pop, "%s%.*s", SWORN_KEYEVENT_POP_PREFIX, (int)(cut - text), text) > 0);
    openssl_check("new.pem", (const uint8_t *)pop, strlen(pop), ev.new_sig, ev.new_sig_len);
    /* And the old key's signature is no proof of possession (nor the reverse). */
    {
        uint8_t d[32];

        assert_int_equal(sworn_keyevent_pop_digest(&ev, d), 0);
        assert_int_equal(sworn_signature_verify(oldk->spki, oldk->spki_len, SWORN_PURPOSE_KEY_EVENT,
                                                d, 32, ev.old_sig, ev.old_sig_len),
                         -1);
    }
    free(pop);

    /* A statement changed after signing does not verify. */
    {
        char *bad = strdup(text);
        char *when = strstr(bad, "effective-from 2026-02-01");

        when[strlen("effective-from 2026-02-0")] = '2';
        write_in_dir("ev-bad", bad, len);
        HSM(1, "verify-event --statement ev-bad v1 v2 v3");
        free(bad);
    }
    free(text);

    /* Old signatures stay valid: the retired key's January checkpoint is accepted... */
    assert_int_equal(accept_signature(kr, F->old_spki, F->old_spki_len, T("2026-01-15T00:00:00Z"),
                                      sig_before, sig_before_len),
                     0);
    /* ...while anything it signs dated from its retirement on is not. */
    hsm_sign(F->old_uri, F->old_spki, F->old_spki_len, SWORN_PURPOSE_CHECKPOINT,
             (const uint8_t *)checkpoint_body, strlen(checkpoint_body), sig_after, &sig_after_len);
    assert_int_equal(
        accept_signature(kr, F->old_spki, F->old_spki_len, eff, sig_after, sig_after_len), -1);
    assert_int_equal(accept_signature(kr, F->old_spki, F->old_spki_len, T("2026-03-01T00:00:00Z"),
                                      sig_after, sig_after_len),
                     -1);
    /* The new key signs, pinned to the keyring's SPKI, and is accepted from effective-from. */
    hsm_sign(F->new_uri, newk->spki, newk->spki_len, SWORN_PURPOSE_CHECKPOINT,
             (const uint8_t *)checkpoint_body, strlen(checkpoint_body), sig_new, &sig_new_len);
    assert_int_equal(accept_signature(kr, newk->spki, newk->spki_len, eff, sig_new, sig_new_len),
                     0);
    assert_int_equal(
        accept_signature(kr, newk->spki, newk->spki_len, eff - 1, sig_new, sig_new_len), -1);
    /* A retired key cannot be rotated again. */
    HSM(2,
        "rotate --token %s --pin-file user.pin --keyring v3 --old-uri '%s' --purpose checkpoint "
        "--date 20260202 --out ev-again --keyring-out v4-again",
        SOFTHSM_TOKEN, F->old_uri);
    sworn_keyring_free(kr);
}

/* --- 4. Retirement. -------------------------------------------------------------------------- */

static void test_retire(void **state)
{
    static const char *const v1234[] = {"v1", "v2", "v3", "v4-retire"};
    struct sworn_keyring *kr;
    struct sworn_keyevent ev;
    char *text;
    size_t len = 0;

    (void)state;
    /* A retirement is signed by the key itself: without the PIN there is none. */
    HSM(2,
        "retire --keyring v3 --uri '%s' --effective-from 2026-03-01T00:00:00Z --out ev-retire "
        "--keyring-out v4-retire",
        F->new_uri);
    HSM(0,
        "retire --pin-file user.pin --keyring v3 --uri '%s' --effective-from "
        "2026-03-01T00:00:00Z --out ev-retire --keyring-out v4-retire",
        F->new_uri);
    HSM(0, "keyring sign --in v4-retire --out v4-retire --prev v3 --root-key b.key --root-key "
           "c.pem");
    HSM(0, "verify-event --statement ev-retire v1 v2 v3 v4-retire");
    assert_non_null(strstr(F->out, "retire checkpoint key"));
    text = file_in_dir("ev-retire", &len);
    assert_int_equal(sworn_keyevent_parse(text, len, &ev), 0);
    assert_true(ev.old_sig_len > 0 && ev.new_sig_len == 0);
    assert_non_null(strstr(text, "\nnew -\nnew-spki -\n"));
    kr = chain(v1234, 4);
    assert_int_equal(sworn_keyring_find(kr, ev.old_id)->status, SWORN_KEY_RETIRED);
    free(text);
    sworn_keyring_free(kr);
}

/* --- 5. Revocation. -------------------------------------------------------------------------- */

/* Sign a keyring text with root key files in process (as a root holder with other tools would). */
static void sign_in_process(const char *in, const char *out, const char *k1, const char *k2)
{
    struct sworn_note_signer a, b, *s[2] = {&a, &b};
    char *p1 = sworn_test_path(F->h->dir, k1), *p2 = sworn_test_path(F->h->dir, k2);
    char *note = malloc(SWORN_NOTE_MAX_LEN + 1), *text;
    size_t len = 0, note_len = 0;

    text = file_in_dir(in, &len);
    if (sworn_note_signer_open_file(p1, NULL, &a) != 0 ||
        sworn_note_signer_open_file(p2, NULL, &b) != 0 ||
        sworn_note_sign(text, len, s, 2, note, SWORN_NOTE_MAX_LEN + 1, &note_len) != 0)
        fail_msg("sign %s: %s", in, sworn_err_msg());
    write_in_dir(out, note, note_len);
    sworn_note_signer_close(&a);
    sworn_note_signer_close(&b);
    free(p1);
    free(p2);
    free(note);
    free(text);
}

static void test_revoke(void **state)
{
    static const char *const v1234[] = {"v1", "v2", "v3", "v4"};
    static const char *const v12345[] = {"v1", "v2", "v3", "v4", "v5"};
    const struct sworn_keyring_key *newk;
    struct sworn_keyring *kr;
    uint8_t sig[SWORN_SIGNER_SIG_MAX], old_sig[SWORN_SIGNER_SIG_MAX], new_id[SWORN_KEY_ID_LEN];
    size_t sig_len = 0, old_sig_len = 0;
    char hex[SWORN_KEY_ID_HEX_LEN + 1], *text, *edited;
    size_t len = 0;

    (void)state;
    kr = chain((const char *const[]){"v1", "v2", "v3"}, 3);
    {
        struct sworn_keyevent ev;
        char *t = file_in_dir("ev-rotate", &len);

        assert_int_equal(sworn_keyevent_parse(t, len, &ev), 0);
        memcpy(new_id, ev.new_id, SWORN_KEY_ID_LEN);
        free(t);
    }
    newk = sworn_keyring_find(kr, new_id);
    assert_non_null(newk);
    sworn_hex_encode(new_id, SWORN_KEY_ID_LEN, hex, sizeof(hex));
    /* The new key signs a checkpoint (dated by the log before and after the revocation). */
    hsm_sign(F->new_uri, newk->spki, newk->spki_len, SWORN_PURPOSE_CHECKPOINT,
             (const uint8_t *)checkpoint_body, strlen(checkpoint_body), sig, &sig_len);
    assert_int_equal(
        accept_signature(kr, newk->spki, newk->spki_len, T("2026-02-20T00:00:00Z"), sig, sig_len),
        0);
    /* Revoked as of 2026-02-15, without the key's signature (it may be compromised). */
    HSM(0,
        "revoke --keyring v3 --key-id %s --effective-from 2026-02-15T00:00:00Z --out ev-revoke "
        "--keyring-out v4",
        hex);
    text = file_in_dir("ev-revoke", &len);
    assert_null(strstr(text, "signature"));
    free(text);
    HSM(0, "keyring sign --in v4 --out v4 --prev v3 --root-key c.pem --root-key b.key");
    assert_non_null(strstr(F->out, "active -> revoked until 2026-02-15T00:00:00Z"));
    HSM(0, "keyring verify v1 v2 v3 v4");
    HSM(0, "verify-event --statement ev-revoke v1 v2 v3 v4");
    assert_non_null(strstr(F->out, "revoke checkpoint key"));
    sworn_keyring_free(kr);

    kr = chain(v1234, 4);
    newk = sworn_keyring_find(kr, new_id);
    assert_int_equal(newk->status, SWORN_KEY_REVOKED);
    /* Before the revocation: accepted. From it on: refused, though the signature is genuine. */
    assert_int_equal(
        accept_signature(kr, newk->spki, newk->spki_len, T("2026-02-10T00:00:00Z"), sig, sig_len),
        0);
    assert_int_equal(
        accept_signature(kr, newk->spki, newk->spki_len, T("2026-02-15T00:00:00Z"), sig, sig_len),
        -1);
    assert_int_equal(
        accept_signature(kr, newk->spki, newk->spki_len, T("2026-02-20T00:00:00Z"), sig, sig_len),
        -1);
    assert_int_equal(sworn_signature_verify(newk->spki, newk->spki_len, SWORN_PURPOSE_CHECKPOINT,
                                            (const uint8_t *)checkpoint_body,
                                            strlen(checkpoint_body), sig, sig_len),
                     0);
    sworn_keyring_free(kr);

    /* The retired old key, found compromised since 2026-01-10: revoked with its own signature. */
    hsm_sign(F->old_uri, F->old_spki, F->old_spki_len, SWORN_PURPOSE_CHECKPOINT,
             (const uint8_t *)checkpoint_body, strlen(checkpoint_body), old_sig, &old_sig_len);
    HSM(0,
        "revoke --keyring v4 --uri '%s' --pin-file user.pin --effective-from "
        "2026-01-10T00:00:00Z --out ev-revoke-old --keyring-out v5",
        F->old_uri);
    text = file_in_dir("ev-revoke-old", &len);
    assert_non_null(strstr(text, "\nold-signature "));
    free(text);
    HSM(0, "keyring sign --in v5 --out v5 --prev v4 --root-key a.key --root-key b.key");
    assert_non_null(strstr(F->out, "retired -> revoked until 2026-01-10T00:00:00Z"));
    HSM(0, "verify-event --statement ev-revoke-old v1 v2 v3 v4 v5");
    kr = chain(v12345, 5);
    /* Its January checkpoint, accepted while it was merely retired, now is not. */
    assert_int_equal(accept_signature(kr, F->old_spki, F->old_spki_len, T("2026-01-15T00:00:00Z"),
                                      old_sig, old_sig_len),
                     -1);
    assert_int_equal(accept_signature(kr, F->old_spki, F->old_spki_len, T("2026-01-05T00:00:00Z"),
                                      old_sig, old_sig_len),
                     0);
    /* And its rotation statement, signed after it was compromised, no longer verifies. */
    HSM(1, "verify-event --statement ev-rotate v1 v2 v3 v4 v5");
    sworn_keyring_free(kr);

    /* A version 6 that takes the revocation back: `keyring sign` refuses to sign it... */
    text = file_in_dir("v5", &len);
    text[strstr(text, "\n\n") - text + 1] = '\0';
    sworn_hex_encode(new_id, SWORN_KEY_ID_LEN, hex, sizeof(hex));
    {
        char *line = strstr(text, hex), *sp, *from;

        assert_non_null(line);
        from = strstr(line, " revoked ");
        assert_non_null(from);
        sp = strchr(from + strlen(" revoked ") + SWORN_KEYRING_TIME_LEN + 1, ' ');
        assert_true(asprintf(&edited, "%.*s active %.*s -%s", (int)(from - text), text,
                             SWORN_KEYRING_TIME_LEN, from + strlen(" revoked "), sp) > 0);
    }
    {
        char *v = strstr(edited, "version 5\n");

        assert_non_null(v);
        v[8] = '6';
    }
    write_in_dir("v6-unrevoke", edited, strlen(edited));
    free(edited);
    free(text);
    HSM(1, "keyring sign --in v6-unrevoke --out v6-unrevoke --prev v5 --root-key a.key");
    assert_non_null(strstr(F->out, "takes back the revocation"));
    /* ...and signed anyway by two roots with another tool, verification refuses it. */
    sign_in_process("v6-unrevoke", "v6-signed", "a.key", "b.key");
    HSM(1, "keyring verify v1 v2 v3 v4 v5 v6-signed");
    assert_non_null(strstr(F->out, "takes back the revocation"));
    /* The same for a version that drops the old key. */
    text = file_in_dir("v5", &len);
    text[strstr(text, "\n\n") - text + 1] = '\0';
    {
        char *line = strstr(text, "\nkey ") + 1, *end = strchr(line, '\n') + 1;

        assert_true(asprintf(&edited, "%.*s%s", (int)(line - text), text, end) > 0);
        edited[strstr(edited, "version 5\n") - edited + 8] = '6';
    }
    write_in_dir("v6-drop", edited, strlen(edited));
    sign_in_process("v6-drop", "v6-drop-signed", "a.key", "b.key");
    HSM(1, "keyring verify v1 v2 v3 v4 v5 v6-drop-signed");
    assert_non_null(strstr(F->out, "never dropped"));
    free(edited);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyring_chain), cmocka_unit_test(test_threshold_refusals),
        cmocka_unit_test(test_rotate),        cmocka_unit_test(test_retire),
        cmocka_unit_test(test_revoke),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
