/*
 * test_decisiond_witness.c -- decisiond submits every checkpoint to its witnesses (issue 18;
 * decisiond/d_witness.h, docs/witness.md "decisiond's submissions"), against a real stack
 * (scripts/dev-stack: SoftHSM key, sworn-decisiond) and a real sworn-witness:
 *   - cosigned: the published checkpoint carries the witness's cosignature, which verifies under
 *     its key (note.c, and sworn-verify with a policy requiring the witness: quorum), and the
 *     metrics count it;
 *   - a witness that goes away costs no decision: one FAILING entry while it stays down (not
 *     one a checkpoint), counted; when it is back, a RECOVERED entry and cosignatures again;
 *   - a split view: the operator keeps a copy of the log and runs decisiond on it with the same
 *     key and origin after the witness cosigned the original further. The copy's decisiond is
 *     refused (no cosignature) and records the alarm (a CONSISTENCY entry, status 409 naming the
 *     larger size the witness holds), logs it at error level and counts it; grown past that size,
 *     its proof does not join the witness's tree (422), counted and logged again.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "err.h"
#include "note.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "verify_fixture.h"
#include "witness_fixture.h"

#define WITNESS_NAME "w1.test/witness"

struct wtest {
    int stack_up; /* the stack is up: teardown takes it down when a test failed first */
    struct sworn_stack s;
    struct sworn_wfx w;
    char origin[256];
    char log_vkey[SWORN_NOTE_VKEY_MAX + 1];
};

/* A stack without a TPM, a witness of its log, and decisiond restarted to submit to it. */
static void wtest_up(struct wtest *t)
{
    char *wdir;

    memset(t, 0, sizeof(*t));
    assert_int_equal(sworn_stack_up(&t->s, "--no-tpm"), 0);
    t->stack_up = 1;
    sworn_stack_dev_trust(&t->s);
    sworn_stack_trust_value(&t->s, "origin", t->origin, sizeof(t->origin));
    sworn_stack_trust_value(&t->s, "log", t->log_vkey, sizeof(t->log_vkey));
    wdir = sworn_test_path(t->s.dir, "w");
    assert_int_equal(mkdir(wdir, 0700), 0);
    sworn_wfx_init(&t->w, wdir, WITNESS_NAME, t->origin, t->log_vkey);
    sworn_wfx_start(&t->w);
    assert_int_equal(sworn_stack_stop_daemon(&t->s), 0);
    assert_int_equal(sworn_stack_sh(&t->s,
                                    "printf 'witnesses:\\n  - url: %s\\n    key: \"%s\"\\n"
                                    "    timeout: 10s\\n' >> decisiond.yaml",
                                    t->w.url, t->w.vkey),
                     0);
    assert_int_equal(sworn_stack_start(&t->s), 0);
}

static void wtest_down(struct wtest *t)
{
    char *wdir = t->w.dir;

    if (t->w.pid > 0)
        sworn_wfx_stop(&t->w);
    t->stack_up = 0;
    t->w.dir = NULL;
    assert_int_equal(sworn_stack_down(&t->s), 0);
    free(wdir);
}

static int setup(void **state)
{
    *state = calloc(1, sizeof(struct wtest));
    return *state == NULL ? -1 : 0;
}

/* After a failed test too: nothing it started stays running (a live daemon or witness would
 * outlive the test run). */
static int teardown(void **state)
{
    struct wtest *t = *state;
    int rc = 0;

    sworn_wfx_kill(&t->w);
    if (t->stack_up && sworn_stack_down(&t->s) != 0)
        rc = -1; /* a sanitizer report in the daemon's log: printed */
    free(t->w.dir);
    free(t);
    return rc;
}

/* Whether DIR/rel (a checkpoint note) carries a cosignature of w that verifies. */
static int cosigned_by(const char *dir, const char *rel, const struct sworn_wfx *w)
{
    size_t len = 0;
    char *note = (char *)sworn_verify_read_rel(dir, rel, &len);
    struct sworn_note n;
    uint8_t by[1] = {0};
    uint64_t at[1] = {0};
    int ok;

    assert_int_equal(sworn_note_parse(note, len, &n), 0);
    ok = sworn_note_verify(&n, &w->verifier, 1, NULL, by, at) == 0 && by[0] == 1 && at[0] > 0;
    free(note);
    return ok;
}

static double witness_metric(struct sworn_stack *s, const char *family)
{
    char name[256];

    snprintf(name, sizeof(name), "sworn_%s{witness=\"" WITNESS_NAME "\"}", family);
    return sworn_stack_metric(s, name);
}

/* The WitnessEvent entries among the newest 64 entries, in log order: up to max into out (copied
 * kinds, statuses and witness sizes). Returns how many there are. */
struct event {
    int kind, status;
    uint64_t witness_size, checkpoint_size;
};

static size_t witness_events(struct sworn_stack *s, struct event *out, size_t max)
{
    Sworn__V1__AdminResponse *tail = sworn_stack_tail(s, 64);
    size_t n = 0;

    for (size_t i = 0; i < tail->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = tail->tail->entries[i];

        if (e->kind_case != SWORN__V1__ENTRY__KIND_WITNESS_EVENT)
            continue;
        assert_string_equal(e->witness_event->witness, WITNESS_NAME);
        assert_int_equal(e->witness_event->key_id.len, 4);
        assert_true(e->witness_event->time_unix_ms > 0);
        assert_true(strlen(e->witness_event->reason) > 0);
        if (n < max)
            out[n] =
                (struct event){(int)e->witness_event->kind, (int)e->witness_event->status,
                               e->witness_event->witness_size, e->witness_event->checkpoint_size};
        n++;
    }
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    return n;
}

/* trust-w.txt: the stack's trust policy (trust.txt) with the witness required. 0 or -1. */
static int witness_trust(struct wtest *t)
{
    return sworn_stack_sh(&t->s,
                          "{ cat trust.txt; printf 'witness w1 %s\\nquorum w1\\n'; } > trust-w.txt",
                          t->w.vkey);
}

static void allow(struct sworn_stack *s, const char *tag, int i)
{
    char id[64];

    snprintf(id, sizeof(id), "%s-%d", tag, i);
    sworn_stack_expect_allow(s, id);
}

/* --- tests ----------------------------------------------------------------------------------- */

static void test_cosigned(void **state)
{
    struct wtest *t = *state;
    json_object *rep;

    wtest_up(t);
    for (int i = 0; i < 3; i++)
        allow(&t->s, "c", i);
    assert_true(sworn_stack_checkpoint_now(&t->s) >= 3);
    assert_true(cosigned_by(t->s.dir, "tiles/checkpoint", &t->w));
    assert_true(witness_metric(&t->s, "witness_cosignatures_total") >= 1);
    assert_true(witness_metric(&t->s, "witness_up") == 1);
    assert_true(witness_metric(&t->s, "witness_alarms_total") == 0);
    assert_int_equal(witness_events(&t->s, NULL, 0), 0);
    assert_true(sworn_test_file_has_line(t->w.log, "\"outcome\":\"cosigned\""));
    /* The auditor requires the witness: sworn-verify checks the cosignature and the quorum. */
    assert_int_equal(witness_trust(t), 0);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), t->s.dir, "trust-w.txt", "tiles",
                            NULL, 0, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_pass(rep, "witness-quorum");
    /* the start's own checkpoints were never submitted: counted, not failed */
    assert_true(json_object_get_int64(sworn_verify_get(rep, "checkpoints_below_quorum")) >= 1);
    json_object_put(rep);
    wtest_down(t);
}

static void test_unreachable_then_recovered(void **state)
{
    struct wtest *t = *state;
    struct event ev[4];
    json_object *rep;

    wtest_up(t);
    allow(&t->s, "u", 0);
    (void)sworn_stack_checkpoint_now(&t->s);
    assert_true(cosigned_by(t->s.dir, "tiles/checkpoint", &t->w));

    /* Down: decisions go on, the checkpoint is published without its cosignature. */
    sworn_wfx_stop(&t->w);
    for (int round = 0; round < 3; round++) {
        allow(&t->s, "down", round);
        (void)sworn_stack_checkpoint_now(&t->s);
        assert_false(cosigned_by(t->s.dir, "tiles/checkpoint", &t->w));
    }
    /* One FAILING entry for the three rounds, each counted. */
    assert_int_equal(witness_events(&t->s, ev, 4), 1);
    assert_int_equal(ev[0].kind, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_FAILING);
    assert_int_equal(ev[0].status, 0);
    assert_true(witness_metric(&t->s, "witness_failures_total") >= 3);
    assert_true(witness_metric(&t->s, "witness_up") == 0);
    {
        char *log = sworn_test_path(t->s.dir, "decisiond.log");

        assert_true(sworn_test_file_has_line(log, "\"event\":\"witness_failing\""));
        free(log);
    }

    /* Back on its port: a RECOVERED entry, and the next checkpoint is cosigned. */
    sworn_wfx_start(&t->w);
    allow(&t->s, "up", 0);
    (void)sworn_stack_checkpoint_now(&t->s);
    assert_true(cosigned_by(t->s.dir, "tiles/checkpoint", &t->w));
    assert_int_equal(witness_events(&t->s, ev, 4), 2);
    assert_int_equal(ev[1].kind, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_RECOVERED);
    assert_int_equal(ev[1].status, 200);
    assert_true(witness_metric(&t->s, "witness_up") == 1);
    /* The record, with its two WitnessEvent entries, verifies with the witness required: the
     * newest checkpoint is cosigned, the ones of the outage are counted below the quorum. */
    assert_int_equal(witness_trust(t), 0);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), t->s.dir, "trust-w.txt", "tiles",
                            NULL, 0, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_pass(rep, "witness-quorum");
    sworn_verify_expect_pass(rep, "entries");
    assert_true(json_object_get_int64(sworn_verify_get(rep, "checkpoints_below_quorum")) >= 3);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "witness_alarms")), 0);
    json_object_put(rep);
    wtest_down(t);
}

static void test_split_view(void **state)
{
    struct wtest *t = *state;
    struct event ev[4];
    uint64_t held;
    char *log;
    json_object *rep;

    wtest_up(t);
    for (int i = 0; i < 2; i++)
        allow(&t->s, "a", i);
    (void)sworn_stack_checkpoint_now(&t->s);
    assert_true(cosigned_by(t->s.dir, "tiles/checkpoint", &t->w));

    /* The operator keeps a copy of the log as it is now. */
    assert_int_equal(sworn_stack_stop_daemon(&t->s), 0);
    assert_int_equal(sworn_stack_sh(&t->s, "cp \"$LOG_DB\" fork.db && "
                                           "{ [ ! -e \"$LOG_DB-wal\" ] || cp \"$LOG_DB-wal\" "
                                           "fork.db-wal; }"),
                     0);
    /* The original grows and the witness cosigns it further. */
    assert_int_equal(sworn_stack_start(&t->s), 0);
    for (int i = 0; i < 6; i++)
        allow(&t->s, "b", i);
    held = sworn_stack_checkpoint_now(&t->s);
    assert_true(cosigned_by(t->s.dir, "tiles/checkpoint", &t->w));

    /* The copy, with the same key and origin, shown to someone else: its first checkpoint is
     * smaller than what the witness holds (409 naming a larger size). */
    assert_int_equal(sworn_stack_stop_daemon(&t->s), 0);
    assert_int_equal(sworn_stack_sh(&t->s,
                                    "sed -i \"s|database: .*|database: $PWD/fork.db|\" "
                                    "decisiond.yaml && mv tiles tiles.original && mkdir tiles"),
                     0);
    assert_int_equal(sworn_stack_start(&t->s), 0);
    allow(&t->s, "f", 0); /* the start's own checkpoint is not submitted: grow past it */
    assert_true(sworn_stack_checkpoint_now(&t->s) < held);
    assert_false(cosigned_by(t->s.dir, "tiles/checkpoint", &t->w));
    assert_int_equal(witness_events(&t->s, ev, 4), 1);
    assert_int_equal(ev[0].kind, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_CONSISTENCY);
    assert_int_equal(ev[0].status, 409);
    assert_true(ev[0].witness_size == held);
    assert_true(witness_metric(&t->s, "witness_alarms_total") >= 1);
    log = sworn_test_path(t->s.dir, "decisiond.log");
    assert_true(sworn_test_file_has_line(log, "\"level\":\"error\",\"event\":\"witness_alarm\""));

    /* Grown past that size: the proof from the witness's size does not join its tree (422),
     * refused again, counted and logged (the state did not change: no second entry). */
    for (int i = 1; i < 12; i++)
        allow(&t->s, "f", i);
    assert_true(sworn_stack_checkpoint_now(&t->s) > held);
    assert_false(cosigned_by(t->s.dir, "tiles/checkpoint", &t->w));
    assert_true(sworn_test_file_has_line(log, "\"status\":422"));
    assert_true(witness_metric(&t->s, "witness_alarms_total") >= 2);
    assert_int_equal(witness_events(&t->s, ev, 4), 1);
    /* The witness kept the original's tree. */
    assert_true(sworn_test_file_has_line(t->w.log, "\"status\":422"));
    free(log);
    /* An auditor who requires the witness refuses the copy: its newest checkpoint has no
     * cosignature. One who does not still sees the copy's own alarm in its record. */
    assert_int_equal(witness_trust(t), 0);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), t->s.dir, "trust-w.txt", "tiles",
                            NULL, 1, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_fail(rep, "witness-quorum", "quorum-not-met", "checkpoint");
    json_object_put(rep);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), t->s.dir, "trust.txt", "tiles",
                            NULL, 0, SWORN_VERIFY_NO_PROGRESS);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "witness_alarms")), 1);
    json_object_put(rep);
    wtest_down(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cosigned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreachable_then_recovered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_view, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
