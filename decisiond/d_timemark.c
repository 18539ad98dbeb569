/*
 * d_timemark.c -- the log's time high water and its TimeMark entries (d_timemark.h).
 */
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np: a lock that prefers writers */
#include "d_timemark.h"

#include <stdlib.h>
#include <string.h>

#include "d_daemon.h"
#include "d_jlog.h"
#include "err.h"

int d_timemark_init(struct d_timemark *t)
{
    pthread_rwlockattr_t a;
    int rc;

    if (pthread_rwlockattr_init(&a) != 0)
        return sworn_err_set(SWORN_ERR_NOMEM, "time marks: cannot make the order lock");
    (void)pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    rc = pthread_rwlock_init(&t->order, &a);
    (void)pthread_rwlockattr_destroy(&a);
    if (rc != 0)
        return sworn_err_set(SWORN_ERR_NOMEM, "time marks: cannot make the order lock");
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        (void)pthread_rwlock_destroy(&t->order);
        return sworn_err_set(SWORN_ERR_NOMEM, "time marks: cannot make their mutex");
    }
    t->ready = 1;
    t->last_mark_us = d_now_mono_us();
    return 0;
}

void d_timemark_destroy(struct d_timemark *t)
{
    if (!t->ready)
        return;
    (void)pthread_rwlock_destroy(&t->order);
    (void)pthread_mutex_destroy(&t->mu);
    t->ready = 0;
}

void d_timemark_set_high_water(struct d_daemon *d, uint64_t high_water)
{
    pthread_mutex_lock(&d->tm.mu);
    if (high_water > d->tm.high_water)
        d->tm.high_water = high_water;
    pthread_mutex_unlock(&d->tm.mu);
}

/* Raise the high water by t after one more durable entry (a mark resets the count). */
static void note_durable(struct d_timemark *tm, uint64_t t, int is_mark)
{
    pthread_mutex_lock(&tm->mu);
    if (t > tm->high_water)
        tm->high_water = t;
    tm->since_mark = is_mark ? 0 : tm->since_mark + 1;
    if (is_mark)
        tm->last_mark_us = d_now_mono_us();
    pthread_mutex_unlock(&tm->mu);
}

static int log_append(struct d_daemon *d, const uint8_t *entry, size_t len, const uint8_t *receipt,
                      size_t receipt_len, uint64_t *index)
{
    const uint8_t *entries[1] = {entry};
    const uint8_t *receipts[1] = {receipt};
    size_t lens[1] = {len}, rlens[1] = {receipt_len};

    if (sworn_log_append_receipts(d->log, entries, lens, receipt != NULL ? receipts : NULL,
                                  receipt != NULL ? rlens : NULL, 1, index) < 0)
        return -1;
    atomic_store(&d->metrics.log_entries, *index + 1);
    return 0;
}

int d_timemark_append_entry(struct d_daemon *d, const uint8_t *entry, size_t len,
                            const uint8_t *receipt, size_t receipt_len, uint64_t *index)
{
    /* The entry's own stamp, read back from its bytes: no caller can forget to pass it. Every
     * entry here was packed (and checked) by this daemon, so it unpacks. A decision's or a
     * resolution's (every decision) is read without unpacking the whole entry. */
    Sworn__V1__Entry *e;
    uint64_t t = 0;
    int has = 0, rc;

    if (d_entry_time_bytes(entry, len, &t, &has) != 0) {
        e = sworn__v1__entry__unpack(NULL, len, entry);
        if (e == NULL)
            return sworn_err_set(SWORN_ERR_FORMAT, "append: the entry does not unpack");
        has = d_entry_time(e, &t);
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    if (!d->tm.ready)
        return sworn_err_set(SWORN_ERR_ARG, "append: the time marks are not initialised");
    pthread_rwlock_rdlock(&d->tm.order);
    rc = log_append(d, entry, len, receipt, receipt_len, index);
    if (rc == 0)
        note_durable(&d->tm, has ? t : 0, 0);
    pthread_rwlock_unlock(&d->tm.order);
    return rc;
}

int d_timemark_append_entries(struct d_daemon *d, const uint8_t *const *entries, const size_t *lens,
                              const uint8_t *const *receipts, const size_t *receipt_lens, size_t n,
                              uint64_t *first_index)
{
    uint64_t latest = 0;
    int rc;

    if (!d->tm.ready)
        return sworn_err_set(SWORN_ERR_ARG, "append: the time marks are not initialised");
    for (size_t i = 0; i < n; i++) {
        /* Each entry's own stamp, read back from its bytes (as d_timemark_append_entry). */
        Sworn__V1__Entry *e;
        uint64_t t = 0;
        int has = 0;

        if (d_entry_time_bytes(entries[i], lens[i], &t, &has) != 0) {
            e = sworn__v1__entry__unpack(NULL, lens[i], entries[i]);
            if (e == NULL)
                return sworn_err_set(SWORN_ERR_FORMAT, "append: entry %zu does not unpack", i);
            has = d_entry_time(e, &t);
            sworn__v1__entry__free_unpacked(e, NULL);
        }
        if (has && t > latest)
            latest = t;
    }
    pthread_rwlock_rdlock(&d->tm.order);
    rc = sworn_log_append_receipts(d->log, entries, lens, receipts, receipt_lens, n, first_index);
    if (rc == 0) {
        atomic_store(&d->metrics.log_entries, *first_index + n);
        pthread_mutex_lock(&d->tm.mu);
        if (latest > d->tm.high_water)
            d->tm.high_water = latest;
        d->tm.since_mark += n;
        pthread_mutex_unlock(&d->tm.mu);
    }
    pthread_rwlock_unlock(&d->tm.order);
    return rc;
}

int d_timemark_append(struct d_daemon *d, Sworn__V1__TimeMarkReason reason, uint64_t *index,
                      uint64_t *behind_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__TimeMark m = SWORN__V1__TIME_MARK__INIT;
    uint8_t *bytes = NULL;
    size_t len = 0;
    uint64_t at = 0;
    int rc;

    if (!d->tm.ready)
        return sworn_err_set(SWORN_ERR_ARG, "time mark: the time marks are not initialised");
    /* Exclusive: every append queued before this one has returned and raised the high water;
     * none queues until the mark is durable. So high_water is that of exactly the entries
     * before the mark in log order. */
    pthread_rwlock_wrlock(&d->tm.order);
    pthread_mutex_lock(&d->tm.mu);
    m.high_water_unix_ms = d->tm.high_water;
    pthread_mutex_unlock(&d->tm.mu);
    m.time_unix_ms = d_now_unix_ms();
    m.clock_behind_ms =
        m.high_water_unix_ms > m.time_unix_ms ? m.high_water_unix_ms - m.time_unix_ms : 0;
    m.reason = reason;
    e.kind_case = SWORN__V1__ENTRY__KIND_TIME_MARK;
    e.time_mark = &m;
    rc = sworn_frame_pack_entry(&e, &bytes, &len);
    if (rc == 0)
        rc = log_append(d, bytes, len, NULL, 0, &at);
    if (rc == 0)
        note_durable(&d->tm, m.time_unix_ms, 1);
    pthread_rwlock_unlock(&d->tm.order);
    free(bytes);
    if (rc < 0)
        return -1;
    {
        json_object *f = json_object_new_object();

        if (f != NULL) {
            json_object_object_add(f, "index", json_object_new_int64((int64_t)at));
            json_object_object_add(
                f, "reason",
                json_object_new_string(reason == SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_START
                                           ? "start"
                                           : "periodic"));
            json_object_object_add(f, "time_unix_ms",
                                   json_object_new_int64((int64_t)m.time_unix_ms));
            json_object_object_add(f, "high_water_unix_ms",
                                   json_object_new_int64((int64_t)m.high_water_unix_ms));
            json_object_object_add(f, "clock_behind_ms",
                                   json_object_new_int64((int64_t)m.clock_behind_ms));
        }
        d_log(m.clock_behind_ms > 0 ? D_LOG_WARN : D_LOG_INFO,
              m.clock_behind_ms > 0 ? "clock_behind" : "time_mark", f);
    }
    if (index != NULL)
        *index = at;
    if (behind_ms != NULL)
        *behind_ms = m.clock_behind_ms;
    return 0;
}

/* --- the periodic marks ------------------------------------------------------------------- */

static void mark_work(void *arg)
{
    struct d_daemon *d = arg;

    if (d_timemark_append(d, SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_PERIODIC, NULL, NULL) <
        0)
        d_log_msg(D_LOG_ERROR, "time_mark_failed", sworn_err_msg());
}

static void mark_done(void *arg)
{
    struct d_daemon *d = arg;

    d->tm.pending = 0;
}

/* Every second: a mark is due once D_TIMEMARK_PERIOD_US of monotonic time passed since the last
 * one and entries were appended since (an idle log gets no marks). */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct d_daemon *d = arg;
    uint64_t since, last;

    (void)fd;
    (void)what;
    if (d->tm.pending || d->workq == NULL)
        return;
    pthread_mutex_lock(&d->tm.mu);
    since = d->tm.since_mark;
    last = d->tm.last_mark_us;
    pthread_mutex_unlock(&d->tm.mu);
    if (since == 0 || d_now_mono_us() - last < D_TIMEMARK_PERIOD_US)
        return;
    d->tm.pending = 1;
    if (d_workq_submit(d->workq, mark_work, mark_done, d) < 0) {
        d->tm.pending = 0;
        d_log_msg(D_LOG_ERROR, "time_mark_failed", sworn_err_msg());
    }
}

int d_timemark_start(struct d_daemon *d)
{
    struct timeval tick = {1, 0};

    d->tm.timer = event_new(d->base, -1, EV_PERSIST, on_tick, d);
    if (d->tm.timer == NULL || event_add(d->tm.timer, &tick) != 0)
        return sworn_err_set(SWORN_ERR_IO, "cannot start the time-mark timer");
    return 0;
}

void d_timemark_stop(struct d_daemon *d)
{
    if (d->tm.timer != NULL) {
        event_free(d->tm.timer);
        d->tm.timer = NULL;
    }
}
