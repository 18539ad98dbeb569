/*
 * test_quote.c -- the verifier's independent quote check (verifier/quote.c) against quotes made
 * by a real software TPM (swtpm) with an independent tool (tpm2-tools 5.4).
 *
 * Evidence, in order of weight:
 *   1. A genuine quote by a restricted ECDSA P-256 primary of the endorsement hierarchy verifies
 *      with sv_quote_check and with tpm2_checkquote (an independent positive check), and the
 *      PCR 23 value tpm2_pcrread reports is the one we compute from the extended digest.
 *   2. Each wrong input is refused with its own reason: the CVE-2024-29038 forgery (magic
 *      changed, signed through TPM2_Hash + TPM2_Sign, which tpm2_checkquote 5.4 accepts), an
 *      NV certification offered as a quote, the extraData of another checkpoint, another PCR
 *      selection, another PCR 23 value, a quote by another TPM's AK, a flipped signature bit,
 *      a non-restricted key, truncated or padded structures.
 *   3. Time order on the real clockInfo of successive quotes: OK, REPLAY, ROLLBACK for an older
 *      quote, OK_RESET with a gap after swtpm is SIGKILLed and restarted (safe == 0), and
 *      ROLLBACK after TPM2_Clear (the endorsement primary is the same key afterwards).
 *
 * With SV_QUOTE_SEED_DIR set it also writes fuzz seeds (tests/fuzz/fuzz_quote.c layout) there.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <openssl/sha.h>

#include "quote.h"
#include "swtpm_fixture.h"
#include "testutil.h"

#define AK_ATTRS "restricted|sign|fixedtpm|fixedparent|sensitivedataorigin|userwithauth"
#define PCR 23
#define NV_INDEX "0x01500010"

struct fx {
    struct sworn_test_swtpm tpm, other;
    uint8_t measurement[32]; /* what decisiond would extend into PCR 23 */
    uint8_t pcr23[32];       /* PCR 23 after that extend, from tpm2_pcrread */
    uint8_t qd[32], qd2[32]; /* SHA-256 of two checkpoint texts */
    struct sv_quote_policy policy;
};

/* A quote as files read back: AK public, attest, signature. */
struct q {
    char *ak;
    size_t ak_len;
    char *msg;
    size_t msg_len;
    char *sig;
    size_t sig_len;
};

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

static int sh(struct sworn_test_swtpm *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int sh(struct sworn_test_swtpm *t, const char *fmt, ...)
{
    char *cmd, *full;
    va_list ap;
    int st;

    va_start(ap, fmt);
    assert_true(vasprintf(&cmd, fmt, ap) > 0);
    va_end(ap);
    assert_true(asprintf(&full, "cd '%s' && %s", t->dir, cmd) > 0);
    st = sworn_test_swtpm_sh(t, full);
    free(cmd);
    free(full);
    return st;
}

static void sh_ok(struct sworn_test_swtpm *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sh_ok(struct sworn_test_swtpm *t, const char *fmt, ...)
{
    char *cmd;
    va_list ap;

    va_start(ap, fmt);
    assert_true(vasprintf(&cmd, fmt, ap) > 0);
    va_end(ap);
    if (sh(t, "%s", cmd) != 0) {
        char *log = sworn_test_path(t->dir, "cmd.log");
        char *text = sworn_test_read_file_opt(log, NULL);

        fail_msg("command failed: %s\n%s", cmd, text ? text : "");
    }
    free(cmd);
}

static char *rd(struct sworn_test_swtpm *t, const char *name, size_t *len)
{
    char *p = sworn_test_path(t->dir, name);
    char *b = sworn_test_read_file(p, len);

    free(p);
    return b;
}

static void wr(struct sworn_test_swtpm *t, const char *name, const void *b, size_t len)
{
    char *p = sworn_test_path(t->dir, name);

    sworn_test_write_file(p, b, len, 0600);
    free(p);
}

/* (Re)create the AK: a primary is derived from the template and the endorsement seed, so the
 * same template gives the same key, after a reset and after TPM2_Clear alike. */
static void make_ak(struct sworn_test_swtpm *t)
{
    sh_ok(t, "tpm2_createprimary -C e -G " SWORN_TEST_SWTPM_P256 " -a '" AK_ATTRS "' -c ak.ctx"
             " >/dev/null && tpm2_flushcontext -t && tpm2_readpublic -c ak.ctx -f tss -o ak.pub"
             " >/dev/null && tpm2_flushcontext -t");
}

/* PCR 23 starts at zero after every TPM Reset: extend it as decisiond does at start. */
static void measure(struct fx *f)
{
    char h[65];

    hex(f->measurement, 32, h);
    sh_ok(&f->tpm, "tpm2_pcrextend %d:sha256=%s && tpm2_pcrread sha256:%d -o pcr23.bin >/dev/null",
          PCR, h, PCR);
}

/* Quote pcrs (tpm2-tools -l syntax) with qualifying data qd into <name>.msg/.sig. */
static void quote(struct sworn_test_swtpm *t, const char *pcrs, const uint8_t qd[32],
                  const char *name)
{
    char h[65];

    hex(qd, 32, h);
    make_ak(t);
    sh_ok(t,
          "tpm2_quote -c ak.ctx -l %s -q %s -m %s.msg -s %s.sig -o %s.pcrs -g sha256 >/dev/null"
          " && tpm2_flushcontext -t",
          pcrs, h, name, name, name);
}

static void load(struct sworn_test_swtpm *t, const char *name, struct q *q)
{
    char *m, *s;

    assert_true(asprintf(&m, "%s.msg", name) > 0);
    assert_true(asprintf(&s, "%s.sig", name) > 0);
    q->ak = rd(t, "ak.pub", &q->ak_len);
    q->msg = rd(t, m, &q->msg_len);
    q->sig = rd(t, s, &q->sig_len);
    free(m);
    free(s);
}

static void unload(struct q *q)
{
    free(q->ak);
    free(q->msg);
    free(q->sig);
}

static enum sv_quote_reason check(struct fx *f, const struct q *q, const uint8_t qd[32],
                                  struct sv_quote_result *res, char *why, size_t cap)
{
    return sv_quote_check(&f->policy, (const uint8_t *)q->ak, q->ak_len, (const uint8_t *)q->msg,
                          q->msg_len, (const uint8_t *)q->sig, q->sig_len, qd, res, why, cap);
}

static void expect(struct fx *f, const struct q *q, const uint8_t qd[32], enum sv_quote_reason want)
{
    struct sv_quote_result res;
    char why[256];
    enum sv_quote_reason got = check(f, q, qd, &res, why, sizeof(why));

    if (got != want)
        fail_msg("expected %s, got %s: %s", sv_quote_reason_name(want), sv_quote_reason_name(got),
                 why);
    assert_true(strlen(why) > 0);
}

/* A fuzz seed: extra(32) || pcr23(32) || u16 ak_len || ak || u16 msg_len || msg || sig. */
static void seed(struct fx *f, const struct q *q, const uint8_t qd[32], const char *name)
{
    const char *dir = getenv("SV_QUOTE_SEED_DIR");
    size_t n = 64 + 2 + q->ak_len + 2 + q->msg_len + q->sig_len, o = 0;
    uint8_t *b;
    char *p;

    if (dir == NULL)
        return;
    b = malloc(n);
    assert_non_null(b);
    memcpy(b + o, qd, 32), o += 32;
    memcpy(b + o, f->pcr23, 32), o += 32;
    b[o++] = (uint8_t)(q->ak_len >> 8), b[o++] = (uint8_t)q->ak_len;
    memcpy(b + o, q->ak, q->ak_len), o += q->ak_len;
    b[o++] = (uint8_t)(q->msg_len >> 8), b[o++] = (uint8_t)q->msg_len;
    memcpy(b + o, q->msg, q->msg_len), o += q->msg_len;
    memcpy(b + o, q->sig, q->sig_len);
    p = sworn_test_path(dir, name);
    sworn_test_write_file(p, b, n, 0644);
    free(p);
    free(b);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    uint8_t zero_then[64] = {0};
    size_t n;
    char *pcr;

    assert_non_null(f);
    if (sworn_test_swtpm_start(&f->tpm) != 0 || sworn_test_swtpm_start(&f->other) != 0)
        fail_msg("cannot start swtpm");
    SHA256((const uint8_t *)"decisiond binaries+config+policy", 32, f->measurement);
    SHA256((const uint8_t *)"example.org/log\n1\nAAAA\n", 23, f->qd);
    SHA256((const uint8_t *)"example.org/log\n2\nBBBB\n", 23, f->qd2);
    measure(f);
    pcr = rd(&f->tpm, "pcr23.bin", &n);
    assert_int_equal(n, 32);
    memcpy(f->pcr23, pcr, 32);
    free(pcr);
    /* PCR extend: new = H(old || digest), old = 0 after startup; tpm2_pcrread must agree */
    memcpy(zero_then + 32, f->measurement, 32);
    {
        uint8_t want[32];

        SHA256(zero_then, 64, want);
        assert_memory_equal(want, f->pcr23, 32);
    }
    f->policy.pcr_mask = 1u << PCR;
    memcpy(f->policy.pcr_values[PCR], f->pcr23, 32);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_swtpm_stop(&f->tpm);
    sworn_test_swtpm_stop(&f->other);
    free(f);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Tests
 */

static void test_genuine(void **state)
{
    struct fx *f = *state;
    struct sv_quote_result res;
    uint8_t name[SV_QUOTE_NAME_LEN], qn[SV_QUOTE_NAME_LEN];
    char why[256], h[65];
    struct q q;

    quote(&f->tpm, "sha256:23", f->qd, "genuine");
    load(&f->tpm, "genuine", &q);
    assert_int_equal(check(f, &q, f->qd, &res, why, sizeof(why)), SV_QUOTE_OK);
    print_message("%s\n", why);
    /* the name is the one tpm2-tools computes */
    assert_int_equal(sv_quote_ak_name((const uint8_t *)q.ak, q.ak_len, name, qn, why, sizeof(why)),
                     SV_QUOTE_OK);
    assert_memory_equal(name, res.ak_name, sizeof(name));
    assert_memory_equal(qn, res.ak_qualified_name, sizeof(qn));
    sh_ok(&f->tpm, "tpm2_readpublic -c ak.ctx -n ak.name >/dev/null && tpm2_flushcontext -t");
    {
        size_t n;
        char *tn = rd(&f->tpm, "ak.name", &n);

        assert_int_equal(n, SV_QUOTE_NAME_LEN);
        assert_memory_equal(tn, name, n);
        free(tn);
    }
    /* the bare TPMT_PUBLIC is accepted as well */
    assert_int_equal(sv_quote_check(&f->policy, (const uint8_t *)q.ak + 2, q.ak_len - 2,
                                    (const uint8_t *)q.msg, q.msg_len, (const uint8_t *)q.sig,
                                    q.sig_len, f->qd, &res, why, sizeof(why)),
                     SV_QUOTE_OK);
    /* independent positive check */
    hex(f->qd, 32, h);
    sh_ok(&f->tpm,
          "tpm2_checkquote -u ak.pub -m genuine.msg -s genuine.sig -f genuine.pcrs -g "
          "sha256 -q %s >/dev/null",
          h);
    seed(f, &q, f->qd, "genuine");
    unload(&q);
}

static void test_forged_magic(void **state)
{
    struct fx *f = *state;
    char h[65];
    struct q q;
    size_t n;
    char *m;

    quote(&f->tpm, "sha256:23", f->qd, "base");
    m = rd(&f->tpm, "base.msg", &n);
    m[3] = 0x48; /* 0xff544348: TPM2_Hash now gives a ticket, so the restricted AK signs it */
    wr(&f->tpm, "forged.msg", m, n);
    free(m);
    sh_ok(&f->tpm, "tpm2_hash -C e -g sha256 -t forged.ticket -o forged.digest forged.msg"
                   " >/dev/null && tpm2_flushcontext -t && tpm2_sign -c ak.ctx -g sha256 -d -t "
                   "forged.ticket -o forged.sig forged.digest && tpm2_flushcontext -t");
    /* the vulnerable tool accepts it (CVE-2024-29038); just a note, not our evidence */
    hex(f->qd, 32, h);
    print_message("tpm2_checkquote on the forgery: %s\n",
                  sh(&f->tpm,
                     "tpm2_checkquote -u ak.pub -m forged.msg -s forged.sig -g sha256 "
                     "-q %s >/dev/null 2>&1",
                     h) == 0
                      ? "accepted (CVE-2024-29038)"
                      : "rejected");
    load(&f->tpm, "forged", &q);
    expect(f, &q, f->qd, SV_QUOTE_MAGIC);
    seed(f, &q, f->qd, "forged-magic");
    unload(&q);
}

static void test_nv_certify(void **state)
{
    struct fx *f = *state;
    char h[65];
    struct q q;

    hex(f->qd, 32, h);
    make_ak(&f->tpm);
    sh_ok(&f->tpm,
          "tpm2_nvdefine " NV_INDEX " -C o -a 'ownerread|ownerwrite|authread|authwrite|nt=counter'"
          " -s 8 >/dev/null && tpm2_nvincrement " NV_INDEX " -C o && tpm2_nvcertify -C ak.ctx -c o"
          " -g sha256 -o nvcert.sig --attestation nvcert.msg -q %s --size 8 --offset 0 " NV_INDEX
          " && tpm2_flushcontext -t",
          h);
    load(&f->tpm, "nvcert", &q);
    expect(f, &q, f->qd, SV_QUOTE_TYPE);
    seed(f, &q, f->qd, "nv-certify");
    unload(&q);
}

static void test_wrong_extra(void **state)
{
    struct fx *f = *state;
    struct q q;

    quote(&f->tpm, "sha256:23", f->qd2, "other-cp");
    load(&f->tpm, "other-cp", &q);
    expect(f, &q, f->qd, SV_QUOTE_EXTRA);
    expect(f, &q, f->qd2, SV_QUOTE_OK);
    unload(&q);
}

static void test_wrong_selection(void **state)
{
    struct fx *f = *state;
    struct q q;

    quote(&f->tpm, "sha256:16,23", f->qd, "sel");
    load(&f->tpm, "sel", &q);
    expect(f, &q, f->qd, SV_QUOTE_PCR_SELECT);
    seed(f, &q, f->qd, "pcr-16-23");
    unload(&q);
    /* another bank */
    quote(&f->tpm, "sha1:23", f->qd, "sha1");
    load(&f->tpm, "sha1", &q);
    expect(f, &q, f->qd, SV_QUOTE_PCR_SELECT);
    unload(&q);
}

static void test_wrong_pcr_value(void **state)
{
    struct fx *f = *state;
    struct sv_quote_policy saved = f->policy;
    struct q q;

    quote(&f->tpm, "sha256:23", f->qd, "pcr");
    load(&f->tpm, "pcr", &q);
    /* the policy expects the PCR of another binary */
    SHA256((const uint8_t *)"another binary", 14, f->policy.pcr_values[PCR]);
    expect(f, &q, f->qd, SV_QUOTE_PCR_DIGEST);
    f->policy = saved;
    expect(f, &q, f->qd, SV_QUOTE_OK);
    unload(&q);
}

static void test_other_tpm(void **state)
{
    struct fx *f = *state;
    struct q ours, theirs;

    quote(&f->tpm, "sha256:23", f->qd, "ours");
    quote(&f->other, "sha256:23", f->qd, "theirs");
    load(&f->tpm, "ours", &ours);
    load(&f->other, "theirs", &theirs);
    /* another TPM's endorsement seed gives another key from the same template */
    assert_false(ours.ak_len == theirs.ak_len && memcmp(ours.ak, theirs.ak, ours.ak_len) == 0);
    free(theirs.ak);
    theirs.ak = ours.ak; /* checked against our pinned AK */
    theirs.ak_len = ours.ak_len;
    ours.ak = NULL;
    expect(f, &theirs, f->qd, SV_QUOTE_SIGNER);
    unload(&theirs);
    unload(&ours);
}

static void test_flipped_and_malformed(void **state)
{
    struct fx *f = *state;
    struct q q;
    char *orig;

    quote(&f->tpm, "sha256:23", f->qd, "flip");
    load(&f->tpm, "flip", &q);
    q.sig[q.sig_len - 1] ^= 0x01;
    expect(f, &q, f->qd, SV_QUOTE_SIG_INVALID);
    q.sig[q.sig_len - 1] ^= 0x01;
    expect(f, &q, f->qd, SV_QUOTE_OK);
    /* a bit in the signed attest (the low byte of clockInfo.clock, offset 76 + 7) */
    q.msg[83] ^= 0x01;
    expect(f, &q, f->qd, SV_QUOTE_SIG_INVALID);
    q.msg[83] ^= 0x01;
    /* truncated / trailing bytes, each structure */
    q.msg_len--;
    expect(f, &q, f->qd, SV_QUOTE_ATTEST_PARSE);
    q.msg_len++;
    q.sig_len--;
    expect(f, &q, f->qd, SV_QUOTE_SIG_PARSE);
    q.sig_len++;
    orig = q.ak;
    q.ak = malloc(q.ak_len + 1);
    assert_non_null(q.ak);
    memcpy(q.ak, orig, q.ak_len);
    q.ak[q.ak_len] = 0;
    q.ak_len++;
    expect(f, &q, f->qd, SV_QUOTE_AK_PARSE);
    q.ak_len--;
    q.ak[9] ^= 0x02; /* size(2) type(2) nameAlg(2) attributes(4): clear fixedTPM, bit 1 */
    expect(f, &q, f->qd, SV_QUOTE_AK_ATTRS);
    q.ak[9] ^= 0x02;
    q.ak[q.ak_len - 1] ^= 0x01; /* y: off the curve */
    expect(f, &q, f->qd, SV_QUOTE_AK_POINT);
    free(q.ak);
    q.ak = orig;
    unload(&q);
    /* a plain (not restricted) signing key */
    sh_ok(&f->tpm, "tpm2_createprimary -C e -G " SWORN_TEST_SWTPM_P256
                   " -a '" SWORN_TEST_SWTPM_SIGN_ATTRS "' -c plain.ctx >/dev/null && "
                   "tpm2_flushcontext -t && tpm2_readpublic -c plain.ctx -f tss -o plain.pub "
                   ">/dev/null && tpm2_flushcontext -t");
    load(&f->tpm, "flip", &q);
    free(q.ak);
    q.ak = rd(&f->tpm, "plain.pub", &q.ak_len);
    expect(f, &q, f->qd, SV_QUOTE_AK_ATTRS);
    unload(&q);
}

static void verified(struct fx *f, const char *name, struct sv_quote_result *res)
{
    struct q q;
    char why[256];

    load(&f->tpm, name, &q);
    if (check(f, &q, f->qd, res, why, sizeof(why)) != SV_QUOTE_OK)
        fail_msg("%s: %s", name, why);
    print_message("%s: %s\n", name, why);
    unload(&q);
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&t, NULL);
}

static void test_time_order(void **state)
{
    struct fx *f = *state;
    struct sv_quote_result a, b, c, d;
    int gap = -1;

    quote(&f->tpm, "sha256:23", f->qd, "t1");
    sleep_ms(50);
    quote(&f->tpm, "sha256:23", f->qd, "t2");
    verified(f, "t1", &a);
    verified(f, "t2", &b);
    assert_int_equal(sv_quote_time_order(&a.clock, &b.clock, &gap), SV_ORDER_OK);
    assert_int_equal(gap, 0);
    assert_int_equal(sv_quote_time_order(&b.clock, &b.clock, &gap), SV_ORDER_REPLAY);
    assert_int_equal(sv_quote_time_order(&b.clock, &a.clock, &gap), SV_ORDER_ROLLBACK);

    /* disorderly restart: the TPM dies without TPM2_Shutdown */
    assert_int_equal(sworn_test_swtpm_kill(&f->tpm), 0);
    assert_int_equal(sworn_test_swtpm_restart(&f->tpm), 0);
    measure(f);
    quote(&f->tpm, "sha256:23", f->qd, "t3");
    verified(f, "t3", &c);
    assert_true(c.clock.reset_count > b.clock.reset_count);
    assert_int_equal(c.clock.safe, 0);
    assert_int_equal(sv_quote_time_order(&b.clock, &c.clock, &gap), SV_ORDER_OK_RESET);
    assert_int_equal(gap, 1);

    /* TPM2_Clear: resetCount back to 0; the endorsement primary is the same key */
    sh_ok(&f->tpm, "tpm2_clear -c p");
    quote(&f->tpm, "sha256:23", f->qd, "t4");
    verified(f, "t4", &d);
    assert_int_equal(sv_quote_time_order(&c.clock, &d.clock, &gap), SV_ORDER_ROLLBACK);
    assert_int_equal(sv_quote_time_order(&b.clock, &d.clock, &gap), SV_ORDER_ROLLBACK);
}

static void test_order_table(void **state)
{
    struct sv_quote_clock p = {1000, 3, 0, 1}, n;
    int gap;

    (void)state;
    n = p, n.clock = 1001;
    assert_int_equal(sv_quote_time_order(&p, &n, &gap), SV_ORDER_OK);
    /* A Reset after an orderly shutdown (safe = 1) keeps the clock: forward is a reset, back a
     * restored TPM state (issue 13 finding 10); after a disorderly one (safe = 0) the clock may
     * have lost time, a possible gap. */
    n = p, n.reset_count = 4, n.clock = 1000, n.safe = 1;
    assert_int_equal(sv_quote_time_order(&p, &n, &gap), SV_ORDER_OK_RESET);
    assert_int_equal(gap, 0);
    n = p, n.reset_count = 4, n.clock = 10, n.safe = 1;
    assert_int_equal(sv_quote_time_order(&p, &n, &gap), SV_ORDER_RESET_CLOCK_BACK);
    n.safe = 0;
    assert_int_equal(sv_quote_time_order(&p, &n, &gap), SV_ORDER_OK_RESET);
    assert_int_equal(gap, 1);
    n = p, n.reset_count = 4, n.clock = 999, n.safe = 2; /* any non-zero TPMI_YES_NO is yes */
    assert_int_equal(sv_quote_time_order(&p, &n, &gap), SV_ORDER_RESET_CLOCK_BACK);
    n = p, n.reset_count = 2, n.clock = 5000;
    assert_int_equal(sv_quote_time_order(&p, &n, &gap), SV_ORDER_ROLLBACK);
    n = p, n.clock = 999;
    assert_int_equal(sv_quote_time_order(&p, &n, &gap), SV_ORDER_ROLLBACK);
    n = p, n.restart_count = 1;
    assert_int_equal(sv_quote_time_order(&p, &n, &gap), SV_ORDER_REPLAY);
    p.restart_count = 2, n = p, n.clock = 2000, n.restart_count = 1;
    assert_int_equal(sv_quote_time_order(&p, &n, &gap), SV_ORDER_ROLLBACK);
    assert_string_equal(sv_quote_order_name(SV_ORDER_OK_RESET), "ok-reset");
    assert_string_equal(sv_quote_order_name(SV_ORDER_RESET_CLOCK_BACK), "reset-clock-back");
}

static void test_bad_args(void **state)
{
    struct fx *f = *state;
    struct sv_quote_policy p = f->policy;
    struct sv_quote_result res;
    uint8_t junk[8] = {0};
    char why[8]; /* short on purpose: messages are truncated, never overflow */

    assert_int_equal(sv_quote_check(NULL, junk, 8, junk, 8, junk, 8, f->qd, &res, why, sizeof(why)),
                     SV_QUOTE_BAD_ARG);
    p.pcr_mask = 0;
    assert_int_equal(sv_quote_check(&p, junk, 8, junk, 8, junk, 8, f->qd, &res, why, sizeof(why)),
                     SV_QUOTE_BAD_ARG);
    p.pcr_mask = 1u << 24;
    assert_int_equal(sv_quote_check(&p, junk, 8, junk, 8, junk, 8, f->qd, &res, NULL, 0),
                     SV_QUOTE_BAD_ARG);
    assert_int_equal(
        sv_quote_check(&f->policy, junk, 8, junk, 8, junk, 8, f->qd, &res, why, sizeof(why)),
        SV_QUOTE_AK_PARSE);
    assert_int_equal(strlen(why), sizeof(why) - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_genuine),
        cmocka_unit_test(test_forged_magic),
        cmocka_unit_test(test_nv_certify),
        cmocka_unit_test(test_wrong_extra),
        cmocka_unit_test(test_wrong_selection),
        cmocka_unit_test(test_wrong_pcr_value),
        cmocka_unit_test(test_other_tpm),
        cmocka_unit_test(test_flipped_and_malformed),
        cmocka_unit_test(test_order_table),
        cmocka_unit_test(test_bad_args),
        /* last: it kills and clears the TPM */
        cmocka_unit_test(test_time_order),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
