/*
 * test_tpm_attest.c -- the recording side of attestation (sworn-tpm provision, measure, quote)
 * driven through the real binary against a real software TPM (swtpm), with every result checked
 * by something other than sworn's own code.
 *
 * Evidence:
 *   1. provision twice on one TPM gives the same AK (a primary re-derives from the seed), and
 *      ak.name is 0x000b || SHA-256 of the TPMT_PUBLIC inside ak.pub, computed here.
 *   2. measure: the printed PCR 23 equals the replay of the event log from zeros, computed here
 *      with OpenSSL, and equals what tpm2_pcrread (an independent tool) reads.
 *   3. quote: tpm2_checkquote accepts the quote with ak.pub and with the PEM of ak.spki.der, for
 *      qualifying data SHA-256(note text without signature lines) computed here, and refuses
 *      other qualifying data; the attest, parsed here, has the right magic and type and that
 *      extraData; a second quote's clock is not behind the first's.
 *   4. With EK certificates in NV, provision writes the ECC one, equal to tpm2_nvread's bytes.
 *   5. Usage errors exit 2; a TCTI with nothing behind it exits 1.
 *   6. Firmware floor: provision's tpm.info records the manufacturer (IBM for swtpm) and the
 *      firmware version, which equals the firmwareVersion of the signed quote; the verifier
 *      accepts the quote with that floor and refuses it (SV_QUOTE_FIRMWARE) one above.
 *   7. The quote rate limiter allows one quote per interval and never a clock going back.
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
#include <openssl/sha.h>

#include "swtpm_fixture.h"
#include "quote.h"
#include "testutil.h"
#include "tpmattest.h"

#define CMD_MAX 4096
#define HEX_MAX 129
#define TPM_GENERATED 0xff544347u /* TPMS_ATTEST.magic */
#define ST_ATTEST_QUOTE 0x8018u   /* TPMS_ATTEST.type of a quote */

static const char note_text[] = "test.sworn.example/log\n"
                                "7\n"
                                "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
/* A signature line of the right form (the quote binds only the text, not the signatures). */
static const char note_sigs[] = "\n\xe2\x80\x94 test.sworn.example/log AAAAAAAAAAAAAAAA\n";

/* The first line of a file, without its newline (the tools print one hex value a line). */
static char *first_line(const char *path)
{
    char *s = sworn_test_read_file(path, NULL);
    char *nl = strchr(s, '\n');

    if (nl != NULL)
        *nl = '\0';
    return s;
}

static void provision(struct sworn_test_swtpm *t, const char *name)
{
    char *dir = sworn_test_path(t->dir, name);

    assert_int_equal(sworn_test_swtpm_shf(
                         t, "mkdir -p '%s' && '%s' provision --tcti '%s' --out-dir '%s' > '%s.out'",
                         dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti, dir, dir),
                     0);
    free(dir);
}

static void test_provision_is_stable(void **state)
{
    struct sworn_test_swtpm *t = *state;
    char *p[2], *name[2], *spki[2], *pub[2], *out, *path;
    size_t pub_len[2], name_len, spki_len[2];
    uint8_t want[34];
    char want_hex[HEX_MAX];
    const char *dirs[2] = {"p1", "p2"};

    for (int i = 0; i < 2; i++) {
        provision(t, dirs[i]);
        p[i] = sworn_test_path(t->dir, dirs[i]);
        path = sworn_test_path(p[i], "ak.name");
        name[i] = sworn_test_read_file(path, &name_len);
        assert_int_equal(name_len, 34);
        free(path);
        path = sworn_test_path(p[i], "ak.spki.der");
        spki[i] = sworn_test_read_file(path, &spki_len[i]);
        free(path);
        path = sworn_test_path(p[i], "ak.pub");
        pub[i] = sworn_test_read_file(path, &pub_len[i]);
        free(path);
        /* The fixture's TPM has no EK certificate: provision must not invent one. */
        path = sworn_test_path(p[i], "ek.cert.der");
        assert_null(sworn_test_read_file_opt(path, NULL));
        free(path);
    }
    assert_memory_equal(name[0], name[1], 34);
    assert_int_equal(spki_len[0], spki_len[1]);
    assert_int_equal(spki_len[0], 91); /* a P-256 SPKI */
    assert_memory_equal(spki[0], spki[1], spki_len[0]);
    assert_int_equal(pub_len[0], pub_len[1]);
    assert_memory_equal(pub[0], pub[1], pub_len[0]);

    /* The name, computed here from ak.pub: a TPM2B (u16 size) around the TPMT_PUBLIC. */
    assert_true(pub_len[0] > 2);
    assert_int_equal(((size_t)(uint8_t)pub[0][0] << 8 | (uint8_t)pub[0][1]), pub_len[0] - 2);
    want[0] = 0x00;
    want[1] = 0x0b;
    SHA256((const uint8_t *)pub[0] + 2, pub_len[0] - 2, want + 2);
    assert_memory_equal(name[0], want, sizeof(want));
    sworn_test_hex(want, sizeof(want), want_hex);
    path = sworn_test_path(t->dir, "p1.out");
    out = first_line(path);
    assert_string_equal(out, want_hex);
    free(out);
    free(path);

    /* The SPKI is the one tpm2-tools would derive from ak.pub. */
    assert_int_equal(
        sworn_test_swtpm_shf(
            t,
            "cd '%s' && openssl pkey -pubin -inform der -in p1/ak.spki.der -outform der "
            "-out p1/reencoded.der && cmp p1/ak.spki.der p1/reencoded.der",
            t->dir),
        0);
    for (int i = 0; i < 2; i++) {
        free(p[i]);
        free(name[i]);
        free(spki[i]);
        free(pub[i]);
    }
}

static void test_measure_replays_from_zeros(void **state)
{
    struct sworn_test_swtpm *t = *state;
    char *f1 = sworn_test_path(t->dir, "decisiond.bin");
    char *f2 = sworn_test_path(t->dir, "policy.conf");
    char *log = sworn_test_path(t->dir, "events.log");
    char *outp = sworn_test_path(t->dir, "measure.out");
    char *pcrp = sworn_test_path(t->dir, "pcr23.bin");
    uint8_t pcr[32] = {0}, buf[64], digest[32];
    char pcr_hex[HEX_MAX], digest_hex[HEX_MAX], *text, *line, *save = NULL, *out, *tpm_pcr;
    size_t tpm_pcr_len;
    int lines = 0;

    sworn_test_write_file(f1, "binary bytes\x00\x01\x02", 15, 0644);
    sworn_test_write_file(f2, "allow read\n", 11, 0644);
    assert_int_equal(
        sworn_test_swtpm_shf(t, "'%s' measure --tcti '%s' --event-log '%s' '%s' '%s' > '%s'",
                             sworn_test_bin("SWORN_TPM_BIN"), t->tcti, log, f1, f2, outp),
        0);

    /* Replay the event log from the reset value, checking each digest against the file. */
    text = sworn_test_read_file(log, NULL);
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        const char *path = lines == 0 ? f1 : f2;
        char *content;
        size_t len;

        assert_true(lines < 2);
        assert_int_equal(strncmp(line, "sha256 ", 7), 0);
        content = sworn_test_read_file(path, &len);
        SHA256((const uint8_t *)content, len, digest);
        free(content);
        sworn_test_hex(digest, sizeof(digest), digest_hex);
        assert_int_equal(strncmp(line + 7, digest_hex, 64), 0);
        assert_string_equal(line + 7 + 64 + 1, path);
        memcpy(buf, pcr, 32);
        memcpy(buf + 32, digest, 32);
        SHA256(buf, sizeof(buf), pcr);
        lines++;
    }
    assert_int_equal(lines, 2);
    sworn_test_hex(pcr, sizeof(pcr), pcr_hex);
    out = first_line(outp);
    assert_string_equal(out, pcr_hex);

    /* And an independent tool reads the same value from the TPM. */
    assert_int_equal(sworn_test_swtpm_shf(t, "tpm2_pcrread sha256:23 -o '%s'", pcrp), 0);
    tpm_pcr = sworn_test_read_file(pcrp, &tpm_pcr_len);
    assert_int_equal(tpm_pcr_len, 32);
    assert_memory_equal(tpm_pcr, pcr, 32);

    /* A missing file measures nothing: the log and the PCR stay as they were. */
    assert_int_equal(
        sworn_test_swtpm_shf(t, "'%s' measure --tcti '%s' --event-log '%s' '%s/absent' > /dev/null",
                             sworn_test_bin("SWORN_TPM_BIN"), t->tcti, log, t->dir),
        1);
    free(tpm_pcr);
    assert_int_equal(sworn_test_swtpm_shf(t, "tpm2_pcrread sha256:23 -o '%s'", pcrp), 0);
    tpm_pcr = sworn_test_read_file(pcrp, &tpm_pcr_len);
    assert_memory_equal(tpm_pcr, pcr, 32);

    free(tpm_pcr);
    free(out);
    free(text);
    free(f1);
    free(f2);
    free(log);
    free(outp);
    free(pcrp);
}

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* The parts of a quote's TPMS_ATTEST this test checks (TPM 2.0 Part 2, 10.12.12). */
struct attest_view {
    uint32_t magic;
    uint16_t type;
    const uint8_t *extra;
    size_t extra_len;
    uint64_t clock;
};

static void parse_attest(const uint8_t *a, size_t len, struct attest_view *v)
{
    size_t off = 0, n;

    assert_true(len >= 6);
    v->magic = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
    v->type = be16(a + 4);
    off = 6;
    assert_true(off + 2 <= len);
    n = be16(a + off); /* qualifiedSigner */
    off += 2 + n;
    assert_true(off + 2 <= len);
    n = be16(a + off); /* extraData */
    v->extra = a + off + 2;
    v->extra_len = n;
    off += 2 + n;
    assert_true(off + 8 <= len);
    v->clock = 0;
    for (int i = 0; i < 8; i++)
        v->clock = v->clock << 8 | a[off + i];
}

static void test_quote_checked_by_tpm2_checkquote(void **state)
{
    struct sworn_test_swtpm *t = *state;
    char *note = sworn_test_path(t->dir, "checkpoint");
    char *attest_path, *outp, *out, *attest[2], *full;
    uint8_t qual[32];
    char qual_hex[HEX_MAX];
    size_t attest_len[2], text_len = strlen(note_text), sigs_len = strlen(note_sigs);
    struct attest_view v[2];

    full = malloc(text_len + sigs_len);
    assert_non_null(full);
    memcpy(full, note_text, text_len);
    memcpy(full + text_len, note_sigs, sigs_len);
    sworn_test_write_file(note, full, text_len + sigs_len, 0644);
    free(full);
    SHA256((const uint8_t *)note_text, text_len, qual);
    sworn_test_hex(qual, sizeof(qual), qual_hex);

    provision(t, "p");
    /* Something in PCR 23, so the quoted digest is not the all-zero PCR's. */
    assert_int_equal(
        sworn_test_swtpm_shf(t, "'%s' measure --tcti '%s' --event-log '%s/ev' '%s' > /dev/null",
                             sworn_test_bin("SWORN_TPM_BIN"), t->tcti, t->dir, note),
        0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(
            sworn_test_swtpm_shf(t,
                                 "cd '%s' && '%s' quote --tcti '%s' --checkpoint '%s' --out-attest "
                                 "q%d.attest --out-sig q%d.sig > q%d.out",
                                 t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti, note, i, i, i),
            0);
    }
    outp = sworn_test_path(t->dir, "q0.out");
    out = first_line(outp);
    assert_string_equal(out, qual_hex);

    /* tpm2_checkquote: with the TPM2B_PUBLIC, and with the PEM of our SPKI. */
    assert_int_equal(
        sworn_test_swtpm_shf(t, "cd '%s' && tpm2_pcrread sha256:23 -F serialized -o pcrs", t->dir),
        0);
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && tpm2_checkquote -u p/ak.pub -m q0.attest -s q0.sig -f pcrs "
                         "-g sha256 -q %s",
                         t->dir, qual_hex),
                     0);
    assert_int_equal(sworn_test_swtpm_shf(
                         t,
                         "cd '%s' && openssl pkey -pubin -inform der -in p/ak.spki.der -out ak.pem "
                         "&& tpm2_checkquote -u ak.pem -m q1.attest -s q1.sig -f pcrs -g sha256 "
                         "-q %s",
                         t->dir, qual_hex),
                     0);
    /* Other qualifying data (the hash of the note with its signatures) must be refused. */
    assert_int_not_equal(
        sworn_test_swtpm_shf(
            t,
            "cd '%s' && tpm2_checkquote -u p/ak.pub -m q0.attest -s q0.sig -f pcrs "
            "-g sha256 -q $(sha256sum checkpoint | cut -c1-64)",
            t->dir),
        0);

    for (int i = 0; i < 2; i++) {
        char name[16];

        snprintf(name, sizeof(name), "q%d.attest", i);
        attest_path = sworn_test_path(t->dir, name);
        attest[i] = sworn_test_read_file(attest_path, &attest_len[i]);
        free(attest_path);
        parse_attest((const uint8_t *)attest[i], attest_len[i], &v[i]);
        assert_int_equal(v[i].magic, TPM_GENERATED);
        assert_int_equal(v[i].type, ST_ATTEST_QUOTE);
        assert_int_equal(v[i].extra_len, 32);
        assert_memory_equal(v[i].extra, qual, 32);
    }
    assert_true(v[1].clock >= v[0].clock);

    /* The auditor's own checker (verifier/quote.c, no code shared with sworn-tpm) agrees. */
    {
        char *p = sworn_test_path(t->dir, "p/ak.pub"), *sp = sworn_test_path(t->dir, "q0.sig");
        size_t ak_len, sig_len;
        char *ak = sworn_test_read_file(p, &ak_len), *sig = sworn_test_read_file(sp, &sig_len);
        struct sv_quote_policy policy;
        struct sv_quote_result res;
        uint8_t other[32];
        char why[256];

        memset(&policy, 0, sizeof(policy));
        policy.pcr_mask = 1u << 23;
        /* The expected PCR 23, replayed: the fresh TPM's zeros extended with the note's hash. */
        {
            size_t note_len;
            char *note_bytes = sworn_test_read_file(note, &note_len);
            uint8_t chain[64];

            memset(chain, 0, 32);
            SHA256((const uint8_t *)note_bytes, note_len, chain + 32);
            SHA256(chain, sizeof(chain), policy.pcr_values[23]);
            free(note_bytes);
        }
        if (sv_quote_check(&policy, (const uint8_t *)ak, ak_len, (const uint8_t *)attest[0],
                           attest_len[0], (const uint8_t *)sig, sig_len, qual, &res, why,
                           sizeof(why)) != SV_QUOTE_OK)
            fail_msg("our quote checker refuses sworn-tpm's quote: %s", why);
        /* The firmware version provision recorded (TPM_PT_FIRMWARE_VERSION_1 and _2, asked
         * with GetCapability) is the one the quote carries, signed; a floor at it passes, one
         * above it refuses the genuine quote with its own reason. */
        {
            char *ip = sworn_test_path(t->dir, "p/tpm.info");
            char *info = sworn_test_read_file(ip, NULL);
            const char *fw_line = strstr(info, "\nfirmware_version 0x");
            struct sv_quote_result floor_res;
            unsigned long long fw;

            assert_non_null(fw_line);
            assert_int_equal(sscanf(fw_line, "\nfirmware_version 0x%llx", &fw), 1);
            assert_true(fw == res.firmware_version);
            assert_true(fw != 0);
            /* swtpm says it is IBM's (libtpms): "IBM\0" as TPM_PT_MANUFACTURER. */
            assert_non_null(strstr(info, "manufacturer IBM\nmanufacturer_id 0x49424d00\n"));
            policy.min_firmware_version = fw;
            assert_int_equal(sv_quote_check(&policy, (const uint8_t *)ak, ak_len,
                                            (const uint8_t *)attest[0], attest_len[0],
                                            (const uint8_t *)sig, sig_len, qual, &floor_res, why,
                                            sizeof(why)),
                             SV_QUOTE_OK);
            policy.min_firmware_version = fw + 1;
            assert_int_equal(sv_quote_check(&policy, (const uint8_t *)ak, ak_len,
                                            (const uint8_t *)attest[0], attest_len[0],
                                            (const uint8_t *)sig, sig_len, qual, &floor_res, why,
                                            sizeof(why)),
                             SV_QUOTE_FIRMWARE);
            assert_string_equal(sv_quote_reason_name(SV_QUOTE_FIRMWARE), "firmware-version");
            assert_non_null(strstr(why, "below the policy's floor"));
            /* A forged quote is still refused for what it is, not for its firmware number. */
            policy.min_firmware_version = UINT64_MAX;
            memcpy(other, qual, 32);
            other[0] ^= 1;
            assert_int_equal(sv_quote_check(&policy, (const uint8_t *)ak, ak_len,
                                            (const uint8_t *)attest[0], attest_len[0],
                                            (const uint8_t *)sig, sig_len, other, &floor_res, why,
                                            sizeof(why)),
                             SV_QUOTE_EXTRA);
            policy.min_firmware_version = 0;
            free(info);
            free(ip);
        }
        memcpy(other, qual, 32);
        other[0] ^= 1;
        assert_int_not_equal(sv_quote_check(&policy, (const uint8_t *)ak, ak_len,
                                            (const uint8_t *)attest[0], attest_len[0],
                                            (const uint8_t *)sig, sig_len, other, &res, why,
                                            sizeof(why)),
                             SV_QUOTE_OK);
        free(ak);
        free(sig);
        free(p);
        free(sp);
    }

    for (int i = 0; i < 2; i++)
        free(attest[i]);
    free(out);
    free(outp);
    free(note);
}

/*
 * With EK certificates in NV (swtpm_setup --create-ek-cert, signed by a private local CA),
 * provision copies the ECC one, byte for byte what tpm2_nvread reads, and it parses as X.509.
 */
static void test_provision_copies_ek_cert(void **state)
{
    struct sworn_test_swtpm *t = *state;

    /* The fixture's TPM has EK certificates from a CA of its own (sworn_test_swtpm_setup_ek). */
    provision(t, "pe");
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && tpm2_nvread 0x01c00016 -C o -o ek.nv && cmp ek.nv "
                             "pe/ek.cert.der && openssl x509 -inform der -in pe/ek.cert.der -noout",
                             t->dir),
        0);
}

/* The quote rate limit decisiond applies (tpmattest.h; TPM-Fail, firmware-notes 4). */
static void test_quote_limiter(void **state)
{
    struct sworn_quote_limiter l;

    (void)state;
    memset(&l, 0, sizeof(l));
    l.min_interval_ms = 1000;
    /* The first quote is always allowed, at any clock value (even 0). */
    assert_int_equal(sworn_quote_limiter_take(&l, 0), 1);
    assert_int_equal(sworn_quote_limiter_take(&l, 0), 0);
    assert_int_equal(sworn_quote_limiter_take(&l, 999), 0);
    /* Exactly the interval later: allowed, and the interval restarts from there. */
    assert_int_equal(sworn_quote_limiter_take(&l, 1000), 1);
    assert_int_equal(sworn_quote_limiter_take(&l, 1999), 0);
    /* Refused attempts do not push the next allowed time back. */
    assert_int_equal(sworn_quote_limiter_take(&l, 2000), 1);
    /* A clock behind the last quote (never on CLOCK_MONOTONIC): wait, do not quote. */
    assert_int_equal(sworn_quote_limiter_take(&l, 1500), 0);
    assert_true(l.last_ms == 2000);
    /* Far apart, near the top of the range: no overflow. */
    assert_int_equal(sworn_quote_limiter_take(&l, UINT64_MAX - 5), 1);
    assert_int_equal(sworn_quote_limiter_take(&l, UINT64_MAX), 0);
    /* No limit configured: every call may quote. */
    memset(&l, 0, sizeof(l));
    for (int i = 0; i < 3; i++)
        assert_int_equal(sworn_quote_limiter_take(&l, 42), 1);
}

static void test_usage_and_dead_tcti(void **state)
{
    struct sworn_test_swtpm *t = *state;

    assert_int_equal(
        sworn_test_swtpm_shf(t, "'%s' --help > /dev/null", sworn_test_bin("SWORN_TPM_BIN")), 0);
    assert_int_equal(sworn_test_swtpm_shf(t, "'%s'", sworn_test_bin("SWORN_TPM_BIN")), 2);
    assert_int_equal(sworn_test_swtpm_shf(t, "'%s' frobnicate", sworn_test_bin("SWORN_TPM_BIN")),
                     2);
    assert_int_equal(sworn_test_swtpm_shf(t, "'%s' provision --tcti '%s'",
                                          sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     2);
    assert_int_equal(sworn_test_swtpm_shf(t, "'%s' measure --tcti '%s' --event-log x",
                                          sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
                     2);
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "'%s' quote --tcti '%s' --checkpoint x --out-attest a --out-sig s "
                             "--pcrs 24",
                             sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
        2);
    /* A checkpoint that is not a signed note is bad input. */
    assert_int_equal(
        sworn_test_swtpm_shf(
            t,
            "cd '%s' && printf 'no signatures\\n' > bad.note && '%s' quote --tcti '%s' "
            "--checkpoint bad.note --out-attest a --out-sig s",
            t->dir, sworn_test_bin("SWORN_TPM_BIN"), t->tcti),
        2);
    /* Port 1 on loopback: nothing listens there. */
    assert_int_equal(
        sworn_test_swtpm_shf(t,
                             "cd '%s' && '%s' provision --tcti swtpm:host=127.0.0.1,port=1 "
                             "--out-dir .",
                             t->dir, sworn_test_bin("SWORN_TPM_BIN")),
        1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_provision_is_stable, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_measure_replays_from_zeros, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_quote_checked_by_tpm2_checkquote,
                                        sworn_test_swtpm_setup, sworn_test_swtpm_teardown),
        cmocka_unit_test_setup_teardown(test_provision_copies_ek_cert, sworn_test_swtpm_setup_ek,
                                        sworn_test_swtpm_teardown),
        cmocka_unit_test(test_quote_limiter),
        cmocka_unit_test_setup_teardown(test_usage_and_dead_tcti, sworn_test_swtpm_setup,
                                        sworn_test_swtpm_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
