/*
 * test_verify_quote.c -- TPM quotes of checkpoints in a record made by the real stack: a
 * software TPM (swtpm), `sworn-tpm provision`, `measure` and `quote`, `sworn-log add-quote` and
 * `export-tiles`. The trust policy names the AK public area and the measured-start event log,
 * which the verifier replays into PCR 23. A good record passes; each mutation is detected with
 * its own reason: a forged quote (magic changed; a signature byte flipped), a replayed quote
 * (another checkpoint's), a foreign quote (another TPM's AK), a quote out of TPM time order,
 * a missing quote when the policy requires one, PCR values other than the event log's, and a
 * TPM firmware version below the policy's floor. And TPM time across a Reset (issue 13 finding
 * 10): a TPM state copied, restored and restarted in order quotes with safe = 1 and a clock
 * below an earlier quote's (quote-reset-clock-back), while an orderly Reset passes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "swtpm_fixture.h"
#include "testutil.h"

#define ORIGIN "quote.sworn.example/log"

static const char *log_bin, *verify_bin, *tpm_bin;

struct fx {
    struct sworn_test_swtpm tpm, other;
    char *dir;
    char vkey[256];
};

static char *P(const struct fx *f, const char *name)
{
    return sworn_test_path(f->dir, name);
}

/* Run a program; returns its status; stdout into *out when out is non-NULL (free it). */
static int runv(const struct fx *f, char **out, const char *prog, ...)
{
    struct sworn_test_run r;
    va_list ap;
    int st;

    (void)f;
    va_start(ap, prog);
    sworn_test_vrun(&r, NULL, prog, ap);
    va_end(ap);
    st = r.status;
    if (out != NULL) {
        *out = r.out;
        r.out = NULL;
    } else if (r.status != 0 && strcmp(prog, verify_bin) != 0) {
        fail_msg("%s: status %d: %s", r.cmd, r.status, r.err);
    }
    sworn_test_run_free(&r);
    return st;
}

/* Quote checkpoint note file `note` with TPM t into <name>.attest/.sig. */
static void quote(struct fx *f, struct sworn_test_swtpm *t, const char *note, const char *name)
{
    char a[64], s[64], *pa, *ps, *pn = P(f, note);

    snprintf(a, sizeof(a), "%s.attest", name);
    snprintf(s, sizeof(s), "%s.sig", name);
    pa = P(f, a);
    ps = P(f, s);
    sworn_test_sleep_ms(30); /* the TPM clock counts milliseconds: successive quotes differ */
    runv(f, NULL, tpm_bin, "quote", "--tcti", t->tcti, "--checkpoint", pn, "--out-attest", pa,
         "--out-sig", ps, NULL);
    free(pa);
    free(ps);
    free(pn);
}

static void add_quote(struct fx *f, const char *size, const char *name)
{
    char a[64], s[64], *pa, *ps, *db = P(f, "db");

    snprintf(a, sizeof(a), "%s.attest", name);
    snprintf(s, sizeof(s), "%s.sig", name);
    pa = P(f, a);
    ps = P(f, s);
    runv(f, NULL, log_bin, "add-quote", "--db", db, "--size", size, "--attest", pa, "--sig", ps,
         NULL);
    free(pa);
    free(ps);
    free(db);
}

static void append_and_checkpoint(struct fx *f, unsigned from, unsigned to, const char *note)
{
    char *db = P(f, "db"), *in = P(f, ".lines"), *out, *pn = P(f, note);
    FILE *fp = fopen(in, "w");

    for (unsigned i = from; i < to; i++)
        fprintf(fp, "q%u\n", i);
    fclose(fp);
    {
        /* append reads its FILE argument */
        runv(f, NULL, log_bin, "append", "--db", db, in, NULL);
    }
    runv(f, &out, log_bin, "checkpoint", "--db", db, NULL);
    sworn_test_write_file(pn, out, strlen(out), 0644);
    free(out);
    free(pn);
    free(in);
    free(db);
}

static void write_policy(const struct fx *f, const char *name, const char *extra)
{
    char *p = P(f, name), text[2048];

    snprintf(text, sizeof(text),
             "origin %s\nlog %s\nentries opaque\nak-public ak/ak.pub\nevent-log events\n%s", ORIGIN,
             f->vkey, extra);
    sworn_test_write_file(p, text, strlen(text), 0600);
    free(p);
}

static int group_setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    char *out, *key, *db, *ak, *ak2, *ev, *m1;

    if (sworn_test_swtpm_start(&f->tpm) != 0 || sworn_test_swtpm_start(&f->other) != 0)
        fail_msg("cannot start swtpm");
    f->dir = sworn_test_tmpdir("vquote");
    key = P(f, "log.key");
    db = P(f, "db");
    ak = P(f, "ak");
    ak2 = P(f, "ak2");
    ev = P(f, "events");
    m1 = P(f, "decisiond.bin");
    assert_int_equal(mkdir(ak, 0700), 0);
    assert_int_equal(mkdir(ak2, 0700), 0);
    runv(f, NULL, tpm_bin, "provision", "--tcti", f->tpm.tcti, "--out-dir", ak, NULL);
    runv(f, NULL, tpm_bin, "provision", "--tcti", f->other.tcti, "--out-dir", ak2, NULL);
    sworn_test_write_file(m1, "the binary", 10, 0644);
    runv(f, NULL, tpm_bin, "measure", "--tcti", f->tpm.tcti, "--event-log", ev, m1, NULL);
    {
        char *ev2 = P(f, "events-other");

        runv(f, NULL, tpm_bin, "measure", "--tcti", f->other.tcti, "--event-log", ev2, m1, NULL);
        free(ev2);
    }
    runv(f, &out, log_bin, "keygen", "--name", "quote.sworn.example", "--out", key, NULL);
    snprintf(f->vkey, sizeof(f->vkey), "%.*s", (int)strcspn(out, "\n"), out);
    free(out);
    runv(f, NULL, log_bin, "init", "--db", db, "--origin", ORIGIN, "--key", key, "--key-name",
         "quote.sworn.example", NULL);
    append_and_checkpoint(f, 0, 10, "cp10");
    quote(f, &f->tpm, "cp10", "q10");
    append_and_checkpoint(f, 10, 20, "cp20");
    quote(f, &f->tpm, "cp20", "q20");
    append_and_checkpoint(f, 20, 30, "cp30");
    quote(f, &f->tpm, "cp30", "q30");
    quote(f, &f->tpm, "cp10", "q10late");      /* cp10 again, later in TPM time */
    quote(f, &f->other, "cp20", "q20foreign"); /* another TPM */
    add_quote(f, "10", "q10");
    add_quote(f, "20", "q20");
    add_quote(f, "30", "q30");
    {
        char *good = P(f, "good");

        runv(f, NULL, log_bin, "export-tiles", "--db", db, good, NULL);
        free(good);
    }
    write_policy(f, "policy", "quotes require\n");
    free(key);
    free(db);
    free(ak);
    free(ak2);
    free(ev);
    free(m1);
    *state = f;
    return 0;
}

static int group_teardown(void **state)
{
    struct fx *f = *state;

    if (f == NULL)
        return 0;
    sworn_test_swtpm_stop(&f->tpm);
    sworn_test_swtpm_stop(&f->other);
    sworn_test_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void copy_file(struct fx *f, const char *from, const char *to)
{
    char *a = P(f, from), *b = P(f, to);
    size_t n;
    char *d = sworn_test_read_file(a, &n);

    sworn_test_write_file(b, d, n, 0644);
    free(d);
    free(a);
    free(b);
}

static void copy_record(struct fx *f, const char *to)
{
    char *a = P(f, "good"), *b = P(f, to);

    sworn_test_rmtree(b);
    runv(f, NULL, "cp", "-a", a, b, NULL);
    free(a);
    free(b);
}

/* Verify record name with policy pol; expect the quotes check's result and reason, or, when
 * reason is NULL, a pass of want_count quotes. */
static void expect_quotes_n(struct fx *f, const char *pol, const char *name, int want_status,
                            const char *reason, const char *item, int want_count)
{
    char *pp = P(f, pol), *rec = P(f, name), *out;
    int st = runv(f, &out, verify_bin, "verify", "--json", "--policy", pp, rec, NULL);
    json_object *o = json_tokener_parse(out), *checks, *c = NULL;

    if (st != want_status || o == NULL)
        fail_msg("verify %s: status %d, want %d: %s", name, st, want_status, out);
    json_object_object_get_ex(o, "checks", &checks);
    for (size_t i = 0; i < json_object_array_length(checks); i++) {
        json_object *x = json_object_array_get_idx(checks, i), *nm;

        json_object_object_get_ex(x, "name", &nm);
        if (strcmp(json_object_get_string(nm), "quotes") == 0)
            c = x;
    }
    assert_non_null(c);
    if (reason == NULL) {
        json_object *r, *cnt;

        json_object_object_get_ex(c, "result", &r);
        json_object_object_get_ex(c, "count", &cnt);
        assert_string_equal(json_object_get_string(r), "pass");
        assert_int_equal(json_object_get_int(cnt), want_count);
    } else {
        json_object *ff, *r, *it;

        if (!json_object_object_get_ex(c, "first_failure", &ff))
            fail_msg("%s: quotes did not fail: %s", name, out);
        json_object_object_get_ex(ff, "reason", &r);
        json_object_object_get_ex(ff, "item", &it);
        if (strcmp(json_object_get_string(r), reason) != 0 ||
            strcmp(json_object_get_string(it), item) != 0)
            fail_msg("%s: %s, want %s at %s", name, json_object_to_json_string(ff), reason, item);
    }
    json_object_put(o);
    free(out);
    free(pp);
    free(rec);
}

static void expect_quotes(struct fx *f, const char *pol, const char *name, int want_status,
                          const char *reason, const char *item)
{
    expect_quotes_n(f, pol, name, want_status, reason, item, 3);
}

static void test_good(void **state)
{
    expect_quotes(*state, "policy", "good", 0, NULL, NULL);
}

static void test_forged(void **state)
{
    struct fx *f = *state;
    char *p;
    size_t n;
    char *d;

    copy_record(f, "forged");
    p = P(f, "forged/sworn/quote/20.attest");
    d = sworn_test_read_file(p, &n);
    d[0] ^= 0x01; /* TPM_GENERATED_VALUE no more */
    sworn_test_write_file(p, d, n, 0644);
    expect_quotes(f, "policy", "forged", 1, "quote-magic", "sworn/quote/20");
    free(d);
    free(p);

    copy_record(f, "flipped");
    p = P(f, "flipped/sworn/quote/20.sig");
    d = sworn_test_read_file(p, &n);
    d[n - 3] ^= 0x01;
    sworn_test_write_file(p, d, n, 0644);
    expect_quotes(f, "policy", "flipped", 1, "quote-signature-invalid", "sworn/quote/20");
    free(d);
    free(p);
}

static void test_replayed_and_foreign(void **state)
{
    struct fx *f = *state;

    copy_record(f, "replayed");
    copy_file(f, "q10.attest", "replayed/sworn/quote/20.attest");
    copy_file(f, "q10.sig", "replayed/sworn/quote/20.sig");
    expect_quotes(f, "policy", "replayed", 1, "quote-extra-data", "sworn/quote/20");

    copy_record(f, "foreign");
    copy_file(f, "q20foreign.attest", "foreign/sworn/quote/20.attest");
    copy_file(f, "q20foreign.sig", "foreign/sworn/quote/20.sig");
    expect_quotes(f, "policy", "foreign", 1, "quote-qualified-signer", "sworn/quote/20");
}

static void test_time_order(void **state)
{
    struct fx *f = *state;

    /* The quote of checkpoint 10 replaced by one made after checkpoint 30's: TPM time runs
     * backwards from 10 to 20. */
    copy_record(f, "order");
    copy_file(f, "q10late.attest", "order/sworn/quote/10.attest");
    copy_file(f, "q10late.sig", "order/sworn/quote/10.sig");
    expect_quotes(f, "policy", "order", 1, "quote-time-rollback", "sworn/quote/20");
}

static void test_missing_and_pcrs(void **state)
{
    struct fx *f = *state;
    char *p;

    copy_record(f, "missing");
    p = P(f, "missing/sworn/quote/30.attest");
    assert_int_equal(unlink(p), 0);
    free(p);
    expect_quotes(f, "policy", "missing", 1, "quote-missing", "sworn/quote/30");
    /* Only checked when present under 'quotes check'. */
    write_policy(f, "policy-check", "quotes check\n");
    {
        char *pp = P(f, "policy-check"), *rec = P(f, "missing"), *out;

        assert_int_equal(runv(f, &out, verify_bin, "verify", "--policy", pp, rec, NULL), 0);
        free(out);
        free(pp);
        free(rec);
    }
    /* Expected PCR 23 other than what was measured. */
    write_policy(f, "policy-pcr", "");
    {
        char *pp = P(f, "policy-pcr");
        char text[2048];

        snprintf(text, sizeof(text),
                 "origin %s\nlog %s\nentries opaque\nak-public ak/ak.pub\npcr 23 "
                 "%064d\nquotes require\n",
                 ORIGIN, f->vkey, 0);
        sworn_test_write_file(pp, text, strlen(text), 0600);
        free(pp);
    }
    expect_quotes(f, "policy-pcr", "good", 1, "quote-pcr-digest", "sworn/quote/10");
    /* A firmware floor above swtpm's version; then one at zero. */
    write_policy(f, "policy-fw", "quotes require\ntpm-firmware-min 0xffffffffffffffff\n");
    expect_quotes(f, "policy-fw", "good", 1, "quote-firmware-version", "sworn/quote/10");
    write_policy(f, "policy-fw0", "quotes require\ntpm-firmware-min 0x0000000000000001\n");
    expect_quotes(f, "policy-fw0", "good", 0, NULL, NULL);
}

/* Shut TPM t down in order (TPM2_Shutdown(CLEAR)), then kill it: its next start is a TPM
 * Reset after an orderly shutdown, so its quotes say safe = 1. */
static void orderly_stop(struct sworn_test_swtpm *t)
{
    if (sworn_test_swtpm_sh(t, "tpm2_shutdown -c") != 0)
        fail_msg("tpm2_shutdown -c failed");
    if (sworn_test_swtpm_kill(t) != 0)
        fail_msg("cannot kill swtpm");
}

/* Measure the binary into PCR 23 of t again (after a reset), as at the start, into a throwaway
 * event log: the same one extend from zero, so the policy's event log still replays to it. */
static void measure_again(struct fx *f, struct sworn_test_swtpm *t, const char *log_name)
{
    char *ev = P(f, log_name), *m1 = P(f, "decisiond.bin");

    runv(f, NULL, tpm_bin, "measure", "--tcti", t->tcti, "--event-log", ev, m1, NULL);
    free(ev);
    free(m1);
}

/*
 * Issue 13 finding 10: TPM time order across a Reset. A real swtpm, provisioned and then shut
 * down in order, its state copied. A Reset after an orderly shutdown keeps the clock (saved to
 * NV, restored at power-on, safe = 1): quotes across it pass. Then the clock is set far forward
 * (TPM2_ClockSet, as time passing would), a checkpoint quoted; the copy of the TPM state is
 * put back (a dishonest operator rolling the TPM back), and after an orderly restart the TPM
 * quotes the next checkpoint with a higher resetCount, safe = 1 and a clock far below the
 * previous quote's: quote-reset-clock-back (today's code took any resetCount rise as a reset).
 */
static void test_reset_clock_back(void **state)
{
    struct fx *f = *state;
    struct sworn_test_swtpm t;
    char *out, *db = P(f, "rdb"), *akd = P(f, "rak"), *snap = P(f, "rsnap"), *in = P(f, ".rlines");
    char text[2048];

    memset(&t, 0, sizeof(t));
    if (sworn_test_swtpm_start(&t) != 0)
        fail_msg("cannot start swtpm");
    assert_int_equal(mkdir(akd, 0700), 0);
    runv(f, NULL, tpm_bin, "provision", "--tcti", t.tcti, "--out-dir", akd, NULL);
    measure_again(f, &t, "rev0");
    /* A log of its own: checkpoints at 10, 20 and 30. */
    {
        char *key = P(f, "log.key");

        runv(f, NULL, log_bin, "init", "--db", db, "--origin", ORIGIN, "--key", key, "--key-name",
             "quote.sworn.example", NULL);
        free(key);
    }
    for (unsigned k = 0; k < 3; k++) {
        FILE *fp = fopen(in, "w");
        char note[16], *pn;

        assert_non_null(fp);
        for (unsigned i = 10 * k; i < 10 * k + 10; i++)
            fprintf(fp, "r%u\n", i);
        fclose(fp);
        runv(f, NULL, log_bin, "append", "--db", db, in, NULL);
        runv(f, &out, log_bin, "checkpoint", "--db", db, NULL);
        snprintf(note, sizeof(note), "rcp%u", 10 * (k + 1));
        pn = P(f, note);
        sworn_test_write_file(pn, out, strlen(out), 0644);
        free(pn);
        free(out);
    }
    quote(f, &t, "rcp10", "r10");
    orderly_stop(&t);
    sworn_test_rmtree(snap);
    runv(f, NULL, "cp", "-a", t.state, snap, NULL);
    /* An orderly Reset: the clock goes on from where it was. */
    if (sworn_test_swtpm_restart(&t) != 0)
        fail_msg("cannot restart swtpm");
    measure_again(f, &t, "rev1");
    quote(f, &t, "rcp20", "r20");
    /* Time passes (set forward: TPM2_ClockSet never goes back), then quotes of checkpoints 20
     * and 30. */
    if (sworn_test_swtpm_sh(&t, "tpm2_setclock 100000000") != 0)
        fail_msg("tpm2_setclock failed");
    quote(f, &t, "rcp20", "r20late");
    quote(f, &t, "rcp30", "r30late");
    /* The TPM state copied after the first shutdown comes back; two orderly restarts later the
     * resetCount is above that of r20late, safe is 1, and the clock is where the copy left it. */
    orderly_stop(&t);
    sworn_test_rmtree(t.state);
    runv(f, NULL, "cp", "-a", snap, t.state, NULL);
    if (sworn_test_swtpm_restart(&t) != 0)
        fail_msg("cannot restart swtpm");
    orderly_stop(&t);
    if (sworn_test_swtpm_restart(&t) != 0)
        fail_msg("cannot restart swtpm");
    measure_again(f, &t, "rev2");
    quote(f, &t, "rcp30", "r30back");
    sworn_test_swtpm_stop(&t);

    {
        const char *qs[][3] = {{"r10", "r20", "r30late"}, {"r10", "r20late", "r30back"}};
        const char *recs[] = {"reset-ok", "reset-back"};
        char *pdb;

        for (int r = 0; r < 2; r++) {
            char *rec = P(f, recs[r]), sz[8], a[64], sg[64], *pa, *ps;

            pdb = P(f, "rdb.copy");
            runv(f, NULL, "cp", "-a", db, pdb, NULL);
            for (int q = 0; q < 3; q++) {
                snprintf(sz, sizeof(sz), "%d", 10 * (q + 1));
                snprintf(a, sizeof(a), "%s.attest", qs[r][q]);
                snprintf(sg, sizeof(sg), "%s.sig", qs[r][q]);
                pa = P(f, a);
                ps = P(f, sg);
                runv(f, NULL, log_bin, "add-quote", "--db", pdb, "--size", sz, "--attest", pa,
                     "--sig", ps, NULL);
                free(pa);
                free(ps);
            }
            runv(f, NULL, log_bin, "export-tiles", "--db", pdb, rec, NULL);
            unlink(pdb);
            free(pdb);
            free(rec);
        }
    }
    {
        char *pp = P(f, "rpolicy");

        snprintf(text, sizeof(text),
                 "origin %s\nlog %s\nentries opaque\nak-public rak/ak.pub\nevent-log rev0\n"
                 "quotes require\n",
                 ORIGIN, f->vkey);
        sworn_test_write_file(pp, text, strlen(text), 0600);
        free(pp);
    }
    /* Forward across an orderly reset and within one cycle: all three pass. */
    expect_quotes_n(f, "rpolicy", "reset-ok", 0, NULL, NULL, 3);
    /* Back across an orderly reset: refused at the quote after the rollback. */
    expect_quotes_n(f, "rpolicy", "reset-back", 1, "quote-reset-clock-back", "sworn/quote/30", 0);
    free(db);
    free(akd);
    free(snap);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_forged),
        cmocka_unit_test(test_replayed_and_foreign),
        cmocka_unit_test(test_time_order),
        cmocka_unit_test(test_missing_and_pcrs),
        cmocka_unit_test(test_reset_clock_back),
    };

    log_bin = sworn_test_bin("SWORN_LOG_BIN");
    verify_bin = sworn_test_bin("SWORN_VERIFY_BIN");
    tpm_bin = sworn_test_bin("SWORN_TPM_BIN");
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
