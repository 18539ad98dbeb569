/*
 * test_refusals.c -- the quotas of recorded refusals and their summaries, without a daemon
 * (decisiond/d_refusals.h), and the RefusalsDropped entry's strict check (wire/frame.c) with the
 * example of docs/formats.md section 1, byte for byte (issue 11, finding 3):
 *   - each (channel, uid) pair has its quota of a second (a configured peer's 100, any other
 *     10); a flood from one pair leaves every other pair's quota whole, the configured peers'
 *     above all;
 *   - 8 strangers' pairs a second; a ninth is dropped, a configured peer still recorded;
 *   - drops are counted per pair, due once the first is 10 s old, taken sorted; a 257th pair
 *     asks for the summary to be written first;
 *   - the `refused` log lines have the same quota per pair, apart from the record's: a pair's
 *     lines over it are suppressed and counted, due once the first is 10 s old, taken sorted; a
 *     pair with no stranger's slot writes none; a 257th pair asks for the lines to be written
 *     first; lines written plus suppressed equal the refusals;
 *   - the entry: the documented bytes; out of order, twice, a count of 0, another channel, no
 *     pairs or 257, times out of order are refused.
 * test_decisiond_sockets drives the same through a real daemon.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "d_refusals.h"
#include "frame.h"
#include "sworn.pb-c.h"

#define T0 1764633600000ull /* 2025-12-02, a second's start */

static struct sworn_dconfig cfg;
static uid_t proxy[1] = {1001}, ops[2] = {0, 1000};

static int setup(void **state)
{
    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    cfg.proxy_uids = proxy;
    cfg.n_proxy_uids = 1;
    cfg.operator_uids = ops;
    cfg.n_operator_uids = 2;
    return 0;
}

static struct d_refusals r; /* large: not on the stack */

static void test_quota_per_pair(void **state)
{
    (void)state;
    d_refusals_init(&r, &cfg);
    /* A flood from nobody on the admin socket... */
    for (int i = 0; i < D_REFUSALS_PER_STRANGER; i++)
        assert_int_equal(d_refusals_admit(&r, 1, 65534, T0 + (uint64_t)i), 1);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(d_refusals_admit(&r, 1, 65534, T0 + 100), 0);
    /* ... leaves the proxy's, the operators' and nobody's on the other socket whole. */
    for (int i = 0; i < D_REFUSALS_PER_STRANGER; i++)
        assert_int_equal(d_refusals_admit(&r, 0, 65534, T0 + 200), 1);
    assert_int_equal(d_refusals_admit(&r, 0, 65534, T0 + 200), 0);
    for (int i = 0; i < D_REFUSALS_PER_PEER; i++) {
        assert_int_equal(d_refusals_admit(&r, 0, 1001, T0 + 200), 1);
        assert_int_equal(d_refusals_admit(&r, 1, 1000, T0 + 200), 1);
        assert_int_equal(d_refusals_admit(&r, 1, 0, T0 + 200), 1);
    }
    assert_int_equal(d_refusals_admit(&r, 0, 1001, T0 + 300), 0);
    /* The proxy's uid on the admin socket is no peer there: a stranger's quota. */
    for (int i = 0; i < D_REFUSALS_PER_STRANGER; i++)
        assert_int_equal(d_refusals_admit(&r, 1, 1001, T0 + 300), 1);
    assert_int_equal(d_refusals_admit(&r, 1, 1001, T0 + 300), 0);
    /* The next second: every quota again. */
    assert_int_equal(d_refusals_admit(&r, 1, 65534, T0 + 1000), 1);
    assert_int_equal(d_refusals_admit(&r, 0, 1001, T0 + 1000), 1);
}

static void test_strangers(void **state)
{
    (void)state;
    d_refusals_init(&r, &cfg);
    for (uint32_t u = 0; u < D_REFUSALS_STRANGERS; u++)
        assert_int_equal(d_refusals_admit(&r, 1, 20000 + u, T0), 1);
    /* A ninth stranger this second: dropped. The configured peers keep their slots. */
    assert_int_equal(d_refusals_admit(&r, 1, 30000, T0 + 1), 0);
    assert_int_equal(d_refusals_admit(&r, 0, 1001, T0 + 1), 1);
    assert_int_equal(d_refusals_admit(&r, 1, 0, T0 + 1), 1);
    assert_int_equal(d_refusals_admit(&r, 1, 1000, T0 + 1), 1);
    /* The proxy's uid on the admin socket is a stranger there. */
    assert_int_equal(d_refusals_admit(&r, 1, 1001, T0 + 1), 0);
    /* A new second frees the strangers' slots. */
    assert_int_equal(d_refusals_admit(&r, 1, 30000, T0 + 1000), 1);
}

static void test_drops_summary(void **state)
{
    static struct d_refusal_summary s;

    (void)state;
    d_refusals_init(&r, &cfg);
    assert_false(d_refusals_pending(&r));
    assert_false(d_refusals_due(&r, T0));
    assert_int_equal(d_refusals_drop(&r, 1, 65534, T0 + 5), 1);
    assert_int_equal(d_refusals_drop(&r, 0, 1001, T0 + 7), 1);
    assert_int_equal(d_refusals_drop(&r, 1, 65534, T0 + 9), 1);
    assert_int_equal(d_refusals_drop(&r, 1, 0, T0 + 9), 1);
    assert_true(d_refusals_pending(&r));
    assert_false(d_refusals_due(&r, T0 + 5 + D_REFUSALS_SUMMARY_MS - 1));
    assert_true(d_refusals_due(&r, T0 + 5 + D_REFUSALS_SUMMARY_MS));
    d_refusals_take(&r, &s);
    assert_false(d_refusals_pending(&r));
    assert_int_equal(s.first_ms, T0 + 5);
    assert_int_equal(s.last_ms, T0 + 9);
    assert_int_equal(s.n_rows, 3);
    /* Sorted as the entry wants: admin before decision, then by uid. */
    assert_int_equal(s.rows[0].channel, 1);
    assert_int_equal(s.rows[0].uid, 0);
    assert_int_equal(s.rows[0].count, 1);
    assert_int_equal(s.rows[1].channel, 1);
    assert_int_equal(s.rows[1].uid, 65534);
    assert_int_equal(s.rows[1].count, 2);
    assert_int_equal(s.rows[2].channel, 0);
    assert_int_equal(s.rows[2].uid, 1001);
    /* A full table: a new pair is not counted until the summary is taken; old pairs still are. */
    for (uint32_t u = 0; u < D_REFUSALS_ROWS; u++)
        assert_int_equal(d_refusals_drop(&r, 0, u, T0 + 20), 1);
    assert_int_equal(d_refusals_drop(&r, 0, 100000, T0 + 21), 0);
    assert_int_equal(d_refusals_drop(&r, 0, 3, T0 + 21), 1);
    d_refusals_take(&r, &s);
    assert_int_equal(s.n_rows, D_REFUSALS_ROWS);
    assert_int_equal(s.rows[3].count, 2);
    assert_int_equal(d_refusals_drop(&r, 0, 100000, T0 + 22), 1);
    /* A clock that steps back keeps the period in order. */
    assert_int_equal(d_refusals_drop(&r, 0, 100000, T0 + 2), 1);
    d_refusals_take(&r, &s);
    assert_true(s.first_ms <= s.last_ms);
}

/* --- the entry ---------------------------------------------------------------------------- */

struct pair {
    const char *channel;
    uint32_t uid;
    uint64_t count;
};

/* Pack an Entry with a RefusalsDropped of n pairs; OUT: *len. Returns the bytes (free them). */
static uint8_t *pack(const struct pair *p, size_t n, uint64_t start, uint64_t end, uint64_t t,
                     size_t *len)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__RefusalsDropped rd = SWORN__V1__REFUSALS_DROPPED__INIT;
    Sworn__V1__DroppedRefusals *d = calloc(n + 1, sizeof(*d)), **dp = calloc(n + 1, sizeof(*dp));
    uint8_t *out;

    assert_non_null(d);
    assert_non_null(dp);
    for (size_t i = 0; i < n; i++) {
        sworn__v1__dropped_refusals__init(&d[i]);
        d[i].channel = (char *)p[i].channel;
        d[i].peer_uid = p[i].uid;
        d[i].count = p[i].count;
        dp[i] = &d[i];
    }
    rd.period_start_unix_ms = start;
    rd.period_end_unix_ms = end;
    rd.time_unix_ms = t;
    rd.n_dropped = n;
    rd.dropped = dp;
    e.kind_case = SWORN__V1__ENTRY__KIND_REFUSALS_DROPPED;
    e.refusals_dropped = &rd;
    *len = sworn__v1__entry__get_packed_size(&e);
    out = malloc(*len);
    assert_non_null(out);
    sworn__v1__entry__pack(&e, out);
    free(dp);
    free(d);
    return out;
}

/* Whether the strict decoder takes the bytes. */
static int accepted(const uint8_t *b, size_t len)
{
    Sworn__V1__Entry *e = sworn_frame_unpack_entry(b, len);

    if (e == NULL)
        return 0;
    sworn__v1__entry__free_unpacked(e, NULL);
    return 1;
}

static void test_log_lines(void **state)
{
    static struct d_refusal_summary s;
    uint64_t logged = 0;

    (void)state;
    d_refusals_init(&r, &cfg);
    assert_false(d_refusals_suppressed_pending(&r));
    /* nobody's flood over 3 seconds: at most its quota of lines each second, the rest counted. */
    for (int i = 0; i < 3000; i++) {
        int rc = d_refusals_log(&r, 1, 65534, T0 + (uint64_t)i);

        assert_true(rc == 0 || rc == 1);
        logged += (uint64_t)rc;
    }
    assert_int_equal(logged, 3 * D_REFUSALS_PER_STRANGER);
    /* The record's quota is apart from the lines': nobody's refusals may still be recorded. */
    assert_int_equal(d_refusals_admit(&r, 1, 65534, T0 + 2999), 1);
    /* Other pairs keep their lines: the proxy's 100, an operator's, nobody's on the other socket.
     */
    for (int i = 0; i < D_REFUSALS_PER_PEER; i++)
        assert_int_equal(d_refusals_log(&r, 0, 1001, T0 + 2999), 1);
    assert_int_equal(d_refusals_log(&r, 0, 1001, T0 + 2999), 0);
    assert_int_equal(d_refusals_log(&r, 1, 0, T0 + 2999), 1);
    assert_int_equal(d_refusals_log(&r, 0, 65534, T0 + 2999), 1);
    assert_true(d_refusals_suppressed_pending(&r));
    assert_false(d_refusals_pending(&r)); /* no drop of the record was counted */
    /* Due once the first suppression (at T0 + 10) is 10 s old. */
    assert_false(d_refusals_suppressed_due(&r, T0 + 10 + D_REFUSALS_SUMMARY_MS - 1));
    assert_true(d_refusals_suppressed_due(&r, T0 + 10 + D_REFUSALS_SUMMARY_MS));
    d_refusals_take_suppressed(&r, &s);
    assert_int_equal(s.n_rows, 2);
    assert_string_equal(d_refusals_channel_name(s.rows[0].channel), "admin");
    assert_int_equal(s.rows[0].uid, 65534);
    assert_int_equal(s.rows[0].count, 3000 - 3 * D_REFUSALS_PER_STRANGER);
    assert_string_equal(d_refusals_channel_name(s.rows[1].channel), "decision");
    assert_int_equal(s.rows[1].uid, 1001);
    assert_int_equal(s.rows[1].count, 1);
    assert_int_equal(s.first_ms, T0 + 10);
    assert_int_equal(s.last_ms, T0 + 2999);
    assert_false(d_refusals_suppressed_pending(&r));

    /* Strangers without a slot this second write no line at all; a 257th suppressed pair asks
     * for the pending lines first. */
    d_refusals_init(&r, &cfg);
    for (uint32_t u = 0; u < D_REFUSALS_STRANGERS; u++)
        assert_int_equal(d_refusals_log(&r, 1, 20000 + u, T0), 1);
    for (uint32_t u = 0; u < D_REFUSALS_ROWS; u++)
        assert_int_equal(d_refusals_log(&r, 1, 30000 + u, T0), 0);
    assert_int_equal(d_refusals_log(&r, 1, 40000, T0), -1);
    assert_int_equal(d_refusals_log(&r, 1, 30000, T0), 0); /* a pending pair: still counted */
    d_refusals_take_suppressed(&r, &s);
    assert_int_equal(s.n_rows, D_REFUSALS_ROWS);
    assert_int_equal(s.rows[0].count, 2);
    assert_int_equal(d_refusals_log(&r, 1, 40000, T0), 0);
    assert_int_equal(d_refusals_log(&r, 0, 1001, T0), 1); /* the proxy's slot is its own */
}

static void test_entry_bytes(void **state)
{
    /* docs/formats.md section 1, the example. */
    static const uint8_t doc[] = {0x42, 0x25, 0x08, 0x80, 0xc0, 0xef, 0xe2, 0xad, 0x33, 0x10,
                                  0x90, 0xc3, 0xef, 0xe2, 0xad, 0x33, 0x1a, 0x0e, 0x0a, 0x05,
                                  0x61, 0x64, 0x6d, 0x69, 0x6e, 0x10, 0xfe, 0xff, 0x03, 0x18,
                                  0x8c, 0x01, 0x20, 0xa0, 0x91, 0xf0, 0xe2, 0xad, 0x33};
    static const struct pair nobody[] = {{"admin", 65534, 140}};
    size_t len;
    uint8_t *b;

    (void)state;
    b = pack(nobody, 1, T0, T0 + 400, T0 + 10400, &len);
    assert_int_equal(len, sizeof(doc));
    assert_memory_equal(b, doc, sizeof(doc));
    assert_true(accepted(b, len));
    free(b);
}

static void test_entry_refused(void **state)
{
    static const struct {
        const char *what;
        struct pair p[2];
        size_t n;
        uint64_t start, end, t;
        int ok;
    } cases[] = {
        {"good", {{"admin", 7, 1}, {"decision", 0, 3}}, 2, 1, 2, 3, 1},
        {"one instant", {{"decision", 7, 1}}, 1, 5, 5, 5, 1},
        {"out of order", {{"decision", 1, 1}, {"admin", 2, 1}}, 2, 1, 2, 3, 0},
        {"a pair twice", {{"admin", 7, 1}, {"admin", 7, 1}}, 2, 1, 2, 3, 0},
        {"uids out of order", {{"admin", 9, 1}, {"admin", 7, 1}}, 2, 1, 2, 3, 0},
        {"a count of 0", {{"admin", 7, 0}}, 1, 1, 2, 3, 0},
        {"another channel", {{"signer", 7, 1}}, 1, 1, 2, 3, 0},
        {"no channel", {{"", 7, 1}}, 1, 1, 2, 3, 0},
        {"no pairs", {{"admin", 7, 1}}, 0, 1, 2, 3, 0},
        {"ends before it starts", {{"admin", 7, 1}}, 1, 5, 2, 6, 0},
        {"recorded before it ends", {{"admin", 7, 1}}, 1, 1, 5, 4, 0},
    };
    static struct pair many[SWORN_FRAME_DROPPED_MAX + 1];
    size_t len;
    uint8_t *b;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        b = pack(cases[i].p, cases[i].n, cases[i].start, cases[i].end, cases[i].t, &len);
        if (accepted(b, len) != cases[i].ok)
            fail_msg("%s: %s", cases[i].what, cases[i].ok ? "refused" : "accepted");
        free(b);
    }
    /* 256 pairs, and 257. */
    for (uint32_t i = 0; i <= SWORN_FRAME_DROPPED_MAX; i++) {
        many[i].channel = "decision";
        many[i].uid = i;
        many[i].count = 1;
    }
    b = pack(many, SWORN_FRAME_DROPPED_MAX, 1, 2, 3, &len);
    assert_true(accepted(b, len));
    free(b);
    b = pack(many, SWORN_FRAME_DROPPED_MAX + 1, 1, 2, 3, &len);
    assert_false(accepted(b, len));
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_quota_per_pair, setup),
        cmocka_unit_test_setup(test_strangers, setup),
        cmocka_unit_test_setup(test_drops_summary, setup),
        cmocka_unit_test_setup(test_log_lines, setup),
        cmocka_unit_test(test_entry_bytes),
        cmocka_unit_test(test_entry_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
