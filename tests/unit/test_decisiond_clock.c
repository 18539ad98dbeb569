/*
 * test_decisiond_clock.c -- budgets and the record across wall-clock steps (issue 12, finding 4),
 * on a real stack with the test clock (sworn-decisiond-testclock): sworn_stack_clock_step sets
 * the daemon's wall clock back or forward while its monotonic clock keeps going, as an NTP step
 * or a VM restored from a snapshot does.
 *
 * What is asserted:
 *   - test_budget_replay_clock_step: the scenario of the finding. Three allows of a count-3-per-
 *     hour budget at T; a restart with the wall clock at T - 2h records one decision; a restart
 *     at T + 1 min. The replay once stopped at that one decision, older than the window, and
 *     the budget allowed three more in the same window; now the fourth is denied.
 *   - test_budget_replay_clock_ahead_at_start: the clock a day ahead at start, set right while
 *     running: the allows of the hour it comes back to were replayed (the window is measured
 *     back from the earlier of the clock and the log's high water), so the fourth is denied.
 *   - test_start_mark_clock_behind: a start with the clock behind the newest entry writes a
 *     TimeMark with clock_behind_ms = high water - clock, and logs a `clock_behind` warning.
 *   - test_replay_stops_at_mark: a start whose newest mark's high water is older than the window
 *     reads only the entries after it (budgets_replayed: entries_read, stopped_at_mark).
 *   - test_periodic_mark: after 10 minutes of monotonic time with entries written, a periodic
 *     TimeMark whose high water is the largest stamp before it; a burst of decisions around it
 *     keeps the invariant (every mark's high water is the maximum stamp of every entry before
 *     it, checked by sworn-verify on the exported record).
 *   - test_crash_between_decision_and_mark: kill -9 right after allows: the next start's walk
 *     finds them (no mark covers them, so they are read) and the budget holds.
 * Tests wait for answers, log lines and the test clock; none sleeps for time to pass.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "verify_fixture.h"

#define HOUR_MS (3600u * 1000u)
#define MINUTE_MS (60u * 1000u)

/* How many times needle occurs in the daemon's log. */
static int log_count(struct sworn_stack *s, const char *needle)
{
    char *path = sworn_test_path(s->dir, "decisiond.log");
    char *text = sworn_test_read_file_opt(path, NULL), *p;
    int n = 0;

    for (p = text; p != NULL && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    free(text);
    free(path);
    return n;
}

/* Wait (up to 30 s) until the daemon's log holds needle at least n times. */
static void wait_log(struct sworn_stack *s, const char *needle, int n)
{
    for (int i = 0; i < 3000; i++) {
        if (log_count(s, needle) >= n)
            return;
        sworn_test_sleep_ms(10); /* polling for the line, not waiting for time to pass */
    }
    fail_msg("the daemon's log never held %d x %s", n, needle);
}

/* The value of "key":<number> in the last line of the log holding event. */
static long long last_field(struct sworn_stack *s, const char *event, const char *key)
{
    char *path = sworn_test_path(s->dir, "decisiond.log");
    char *text = sworn_test_read_file(path, NULL), *line = NULL, *p, needle[96], *v;
    long long r;

    snprintf(needle, sizeof(needle), "\"event\":\"%s\"", event);
    for (p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        line = p;
    if (line == NULL)
        fail_msg("no %s line in the daemon's log", event);
    snprintf(needle, sizeof(needle), "\"%s\":", key);
    v = strstr(line, needle);
    if (v == NULL || (strchr(line, '\n') != NULL && v > strchr(line, '\n')))
        fail_msg("the last %s line has no %s", event, key);
    r = strtoll(v + strlen(needle), NULL, 10);
    free(text);
    free(path);
    return r;
}

/*
 * The auditor's verifier on the (stopped) stack's record: the time-marks check passes with at
 * least marks marks, and at least behind of them show the clock behind.
 */
static void expect_verified(struct sworn_stack *s, long long marks, long long behind)
{
    json_object *rep;

    sworn_stack_dev_trust(s);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), s->dir, "trust.txt", "tiles", NULL,
                            0, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_pass(rep, "entries");
    sworn_verify_expect_pass(rep, "time-marks");
    assert_true(json_object_get_int64(
                    sworn_verify_get(sworn_verify_check(rep, "time-marks"), "count")) >= marks);
    assert_true(json_object_get_int64(sworn_verify_get(rep, "clock_behind")) >= behind);
    json_object_put(rep);
}

/* The sample policy with its budget window turned into an hour (stop, edit, start). */
static void budget_per_hour(struct sworn_stack *s)
{
    assert_int_equal(sworn_stack_stop_daemon(s), 0);
    assert_int_equal(sworn_stack_sh(s, "sed -i 's/window: 1m/window: 1h/' policy.yaml && "
                                       "grep -q 'window: 1h' policy.yaml"),
                     0);
    assert_int_equal(sworn_stack_start(s), 0);
}

/* Move the wall clock to one minute into an hour: the test then runs inside one hour window. */
static void to_minute_one_of_an_hour(struct sworn_stack *s)
{
    uint64_t now = sworn_stack_clock_unix_ms(s);

    sworn_stack_clock_advance(s, (HOUR_MS + MINUTE_MS - now % HOUR_MS) % HOUR_MS);
}

/* The newest TimeMark among the log's newest entries (admin Tail). OUT: *m (copied). */
static void newest_mark(struct sworn_stack *s, Sworn__V1__TimeMark *m, uint64_t *index)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(s, 16);
    int found = 0;

    for (size_t i = 0; i < r->tail->n_entries; i++)
        if (r->tail->entries[i]->kind_case == SWORN__V1__ENTRY__KIND_TIME_MARK) {
            *m = *r->tail->entries[i]->time_mark;
            if (index != NULL)
                *index = r->tail->first_index + i;
            found = 1;
        }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    if (!found)
        fail_msg("no TimeMark among the log's newest 16 entries");
}

static void test_budget_replay_clock_step(void **state)
{
    struct sworn_stack s;
    char id[32];

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --test-clock"), 0);
    budget_per_hour(&s);
    to_minute_one_of_an_hour(&s);
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof(id), "step-allow-%d", i);
        sworn_stack_expect_path(&s, id, "/budget/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    }
    sworn_stack_expect_path(&s, "step-over-0", "/budget/x", SWORN__V1__EFFECT__EFFECT_DENY);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);

    /* The clock two hours behind (a VM restored from a snapshot): one decision is recorded. */
    sworn_stack_clock_step(&s, -2 * (int64_t)HOUR_MS);
    assert_int_equal(sworn_stack_start(&s), 0);
    sworn_stack_expect_path(&s, "step-behind", "/nothing/here", SWORN__V1__EFFECT__EFFECT_DENY);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);

    /* The clock right again, one minute later, in the same hour window as the three allows. */
    sworn_stack_clock_step(&s, 2 * (int64_t)HOUR_MS);
    sworn_stack_clock_advance(&s, MINUTE_MS);
    assert_int_equal(sworn_stack_start(&s), 0);
    /* The replay read every allow of the window, past the decision stamped two hours back. */
    assert_true(last_field(&s, "budgets_replayed", "decisions") >= 5);
    sworn_stack_expect_path(&s, "step-over-1", "/budget/x", SWORN__V1__EFFECT__EFFECT_DENY);
    sworn_stack_expect_path(&s, "step-over-2", "/budget/x", SWORN__V1__EFFECT__EFFECT_DENY);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    /* Four starts, four marks; the one at T - 2h shows the clock behind. */
    expect_verified(&s, 4, 1);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/*
 * The other way round: the clock is a day ahead at start (stepped forward by mistake) and set
 * right while the daemon runs. The replay measured the window back from the clock alone and
 * skipped the allows of the hour the clock comes back to; it now measures back from the earlier
 * of the clock and the log's high water.
 */
static void test_budget_replay_clock_ahead_at_start(void **state)
{
    struct sworn_stack s;
    char id[32];

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --test-clock"), 0);
    budget_per_hour(&s);
    to_minute_one_of_an_hour(&s);
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof(id), "ahead-allow-%d", i);
        sworn_stack_expect_path(&s, id, "/budget/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    }
    /* A periodic mark covers the three allows (ten minutes on, still in their hour). */
    sworn_stack_clock_advance(&s, 10 * MINUTE_MS);
    wait_log(&s, "\"reason\":\"periodic\"", 1);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    sworn_stack_clock_step(&s, 24 * (int64_t)HOUR_MS);
    assert_int_equal(sworn_stack_start(&s), 0);
    /* Set right while running: back in the hour of the three allows. */
    sworn_stack_clock_step(&s, -24 * (int64_t)HOUR_MS);
    sworn_stack_expect_path(&s, "ahead-over", "/budget/x", SWORN__V1__EFFECT__EFFECT_DENY);
    assert_int_equal(sworn_stack_down(&s), 0);
}

static void test_start_mark_clock_behind(void **state)
{
    struct sworn_stack s;
    Sworn__V1__TimeMark m;
    uint64_t before, index;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --test-clock"), 0);
    /* The first start's mark: the clock is not behind. */
    newest_mark(&s, &m, NULL);
    assert_int_equal(m.reason, SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_START);
    assert_int_equal(m.clock_behind_ms, 0);
    assert_true(m.high_water_unix_ms <= m.time_unix_ms);
    assert_int_equal(log_count(&s, "\"event\":\"clock_behind\""), 0);
    sworn_stack_expect_path(&s, "behind-0", "/nothing/here", SWORN__V1__EFFECT__EFFECT_DENY);
    before = sworn_stack_clock_unix_ms(&s);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);

    /* Ten minutes behind: the start's mark says how far, and the log warns. */
    sworn_stack_clock_step(&s, -10 * (int64_t)MINUTE_MS);
    assert_int_equal(sworn_stack_start(&s), 0);
    newest_mark(&s, &m, &index);
    assert_int_equal(m.reason, SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_START);
    assert_true(m.high_water_unix_ms >= before - 5000 && m.high_water_unix_ms <= before + 5000);
    assert_true(m.time_unix_ms < m.high_water_unix_ms);
    assert_int_equal(m.clock_behind_ms, m.high_water_unix_ms - m.time_unix_ms);
    assert_true(m.clock_behind_ms >= 9 * MINUTE_MS && m.clock_behind_ms <= 11 * MINUTE_MS);
    assert_int_equal(log_count(&s, "\"event\":\"clock_behind\""), 1);
    assert_int_equal(last_field(&s, "clock_behind", "clock_behind_ms"),
                     (long long)m.clock_behind_ms);
    assert_int_equal(last_field(&s, "clock_behind", "index"), (long long)index);
    assert_int_equal(sworn_stack_down(&s), 0);
}

static void test_replay_stops_at_mark(void **state)
{
    struct sworn_stack s;
    char id[32];

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --test-clock"), 0);
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof(id), "walk-deny-%d", i);
        sworn_stack_expect_path(&s, id, "/nothing/here", SWORN__V1__EFFECT__EFFECT_DENY);
    }
    /* Past the sample policy's window (1 min) and the slack (10 min): the periodic mark covers
     * the twenty denies, whose stamps are older than any window from the log's end on. */
    sworn_stack_clock_advance(&s, 12 * MINUTE_MS);
    wait_log(&s, "\"reason\":\"periodic\"", 1);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    /* The next start stops at that mark: its Startup and PolicyLoaded entries and the mark. */
    assert_int_equal(sworn_stack_start(&s), 0);
    assert_int_equal(last_field(&s, "budgets_replayed", "entries_read"), 3);
    assert_true(log_count(&s, "\"stopped_at_mark\":true") >= 1);
    /* And the budget is still whole in the new window. */
    sworn_stack_expect_path(&s, "walk-allow", "/budget/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(sworn_stack_down(&s), 0);
}

static void test_periodic_mark(void **state)
{
    struct sworn_stack s;
    Sworn__V1__TimeMark m;
    Sworn__V1__AdminResponse *r;
    uint64_t index, hw = 0;
    char id[32];
    int fds[6];

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --test-clock"), 0);
    sworn_stack_expect_path(&s, "periodic-0", "/nothing/here", SWORN__V1__EFFECT__EFFECT_DENY);
    /* The clock steps back a minute: the next decision is stamped before the first. */
    sworn_stack_clock_step(&s, -(int64_t)MINUTE_MS);
    sworn_stack_expect_path(&s, "periodic-1", "/nothing/here", SWORN__V1__EFFECT__EFFECT_DENY);
    /* Ten minutes of monotonic time: one periodic mark. */
    sworn_stack_clock_advance(&s, 10 * MINUTE_MS);
    wait_log(&s, "\"reason\":\"periodic\"", 1);
    newest_mark(&s, &m, &index);
    assert_int_equal(m.reason, SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_PERIODIC);
    /* Its high water: the largest stamp of every entry before it (periodic-0's, not -1's). */
    r = sworn_stack_tail(&s, 16);
    for (size_t i = 0; i < r->tail->n_entries && r->tail->first_index + i < index; i++)
        if (r->tail->entries[i]->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
            r->tail->entries[i]->decision->time_unix_ms > hw)
            hw = r->tail->entries[i]->decision->time_unix_ms;
    sworn__v1__admin_response__free_unpacked(r, NULL);
    assert_true(hw > 0);
    assert_int_equal(m.high_water_unix_ms, hw);
    assert_int_equal(m.clock_behind_ms, 0); /* ten minutes on: the clock is past it again */
    /* Requests in flight while the next mark falls due (allows being signed, denies), sent
     * before the clock moves and answered after: wherever the mark lands among them, its high
     * water covers exactly the entries before it (sworn-verify checks it below). */
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof(id), "periodic-burst-%d", i);
        fds[i] = sworn_stack_send_only(&s, id, i % 2 ? "/allowed/x" : "/nothing/here");
    }
    sworn_stack_clock_advance(&s, 10 * MINUTE_MS);
    for (int i = 0; i < 6; i++) {
        Sworn__V1__DecisionReply *rep = sworn_stack_read_reply(fds[i]);

        sworn_stack_expect_decision(rep, i % 2 ? SWORN__V1__EFFECT__EFFECT_ALLOW
                                               : SWORN__V1__EFFECT__EFFECT_DENY);
        sworn__v1__decision_reply__free_unpacked(rep, NULL);
    }
    wait_log(&s, "\"reason\":\"periodic\"", 2);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    /* The whole record verifies: every mark's high water is the maximum before it. */
    expect_verified(&s, 3, 0);
    assert_int_equal(sworn_stack_down(&s), 0);
}

static void test_crash_between_decision_and_mark(void **state)
{
    struct sworn_stack s;
    char id[32];

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --test-clock"), 0);
    budget_per_hour(&s);
    to_minute_one_of_an_hour(&s);
    /* A mark after one allow, then two more allows that no mark covers, then a crash. */
    sworn_stack_expect_path(&s, "crash-allow-0", "/budget/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn_stack_clock_advance(&s, 10 * MINUTE_MS);
    wait_log(&s, "\"reason\":\"periodic\"", 1);
    for (int i = 1; i < 3; i++) {
        snprintf(id, sizeof(id), "crash-allow-%d", i);
        sworn_stack_expect_path(&s, id, "/budget/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    }
    sworn_stack_kill_daemon(&s);
    /* Back with the clock behind every stamp, then right: the window's three allows count. */
    sworn_stack_clock_step(&s, -3 * (int64_t)HOUR_MS);
    assert_int_equal(sworn_stack_start(&s), 0);
    sworn_stack_kill_daemon(&s);
    sworn_stack_clock_step(&s, 3 * (int64_t)HOUR_MS);
    assert_int_equal(sworn_stack_start(&s), 0);
    sworn_stack_expect_path(&s, "crash-over", "/budget/x", SWORN__V1__EFFECT__EFFECT_DENY);
    assert_int_equal(sworn_stack_down(&s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_replay_clock_step),
        cmocka_unit_test(test_budget_replay_clock_ahead_at_start),
        cmocka_unit_test(test_start_mark_clock_behind),
        cmocka_unit_test(test_replay_stops_at_mark),
        cmocka_unit_test(test_periodic_mark),
        cmocka_unit_test(test_crash_between_decision_and_mark),
    };

    if (getenv("SWORN_DECISIOND_TESTCLOCK_BIN") == NULL) {
        fprintf(stderr, "test_decisiond_clock: sworn-decisiond-testclock is not built\n");
        return 1;
    }
    if (getenv("SWORN_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("SWORN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
