/*
 * d_metrics.c -- counters and their Prometheus text (contract in d_metrics.h).
 */
#include "d_metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/* Latency bucket upper bounds in microseconds: 0.1 ms .. 1 s. */
static const uint64_t bucket_us[D_METRICS_BUCKETS] = {100,   250,   500,   1000,   2000,   5000,
                                                      10000, 25000, 50000, 100000, 250000, 1000000};

/* Batch group size bucket upper bounds: powers of two up to SWORN_BATCH_ITEMS_MAX (256). */
static const uint64_t group_le[D_METRICS_GROUP_BUCKETS] = {1, 2, 4, 8, 16, 32, 64, 128, 256};

void d_metrics_init(struct d_metrics *m)
{
    memset(m, 0, sizeof(*m));
}

void d_metrics_decision(struct d_metrics *m, int effect, uint64_t latency_us)
{
    size_t i;

    if (effect >= 1 && effect <= 3)
        atomic_fetch_add(&m->decisions[effect - 1], 1);
    if (effect == 3)
        return; /* held for a human: its latency says nothing about decisiond */
    for (i = 0; i < D_METRICS_BUCKETS && latency_us > bucket_us[i]; i++)
        ;
    atomic_fetch_add(&m->latency_bucket[i], 1);
    atomic_fetch_add(&m->latency_count, 1);
    atomic_fetch_add(&m->latency_sum_us, latency_us);
}

void d_metrics_witnesses(struct d_metrics *m, size_t n, const char *const *names)
{
    m->n_witnesses = n < D_METRICS_WITNESSES ? n : D_METRICS_WITNESSES;
    for (size_t i = 0; i < m->n_witnesses; i++)
        snprintf(m->witness_names[i], sizeof(m->witness_names[i]), "%s", names[i]);
}

void d_metrics_batch_group(struct d_metrics *m, uint64_t items)
{
    uint64_t max = atomic_load(&m->batch_size_max);
    size_t i;

    for (i = 0; i < D_METRICS_GROUP_BUCKETS && items > group_le[i]; i++)
        ;
    /* The counters before the bucket: a scrape reads the buckets first, so its _count is never
     * below its +Inf bucket. */
    atomic_fetch_add(&m->batch_entries, items);
    atomic_fetch_add(&m->batch_groups, 1);
    atomic_fetch_add(&m->batch_size_bucket[i], 1);
    while (items > max && !atomic_compare_exchange_weak(&m->batch_size_max, &max, items))
        ;
}

struct text {
    char *p;
    size_t len, cap;
    int failed;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->failed)
        return;
    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        char *bigger = realloc(t->p, t->cap * 2);

        if (bigger == NULL) {
            t->failed = 1;
            return;
        }
        t->p = bigger;
        t->cap *= 2;
    }
}

static void counter(struct text *t, const char *name, const char *help, uint64_t v)
{
    put(t, "# HELP sworn_%s %s\n# TYPE sworn_%s counter\nsworn_%s %llu\n", name, help, name, name,
        (unsigned long long)v);
}

static void gauge(struct text *t, const char *name, const char *help, double v)
{
    put(t, "# HELP sworn_%s %s\n# TYPE sworn_%s gauge\nsworn_%s %.17g\n", name, help, name, name,
        v);
}

/* A witness's key name as a Prometheus label value: '"' and '\\' escaped (a key name has no
 * line breaks or spaces; note.h). */
static void label(char *out, size_t cap, const char *name)
{
    size_t o = 0;

    for (; *name != '\0' && o + 3 < cap; name++) {
        if (*name == '"' || *name == '\\')
            out[o++] = '\\';
        out[o++] = *name;
    }
    out[o] = '\0';
}

static void witness_metrics(struct text *t, struct d_metrics *m)
{
    static const struct {
        const char *name, *type, *help;
    } families[4] = {
        {"witness_cosignatures_total", "counter", "Checkpoints each witness cosigned."},
        {"witness_failures_total", "counter",
         "Checkpoint rounds a witness gave no cosignature in (unreachable, or it refused)."},
        {"witness_alarms_total", "counter",
         "Consistency failures a witness reported: another tree of this log's origin."},
        {"witness_up", "gauge", "1 when the witness's last round gave a cosignature."},
    };
    char name[2 * 256];

    if (m->n_witnesses == 0)
        return;
    for (size_t k = 0; k < 4; k++) {
        put(t, "# HELP sworn_%s %s\n# TYPE sworn_%s %s\n", families[k].name, families[k].help,
            families[k].name, families[k].type);
        for (size_t i = 0; i < m->n_witnesses; i++) {
            uint64_t v = k == 0   ? atomic_load(&m->witness_cosigned[i])
                         : k == 1 ? atomic_load(&m->witness_failed[i])
                         : k == 2 ? atomic_load(&m->witness_alarms[i])
                                  : (uint64_t)atomic_load(&m->witness_up[i]);

            label(name, sizeof(name), m->witness_names[i]);
            put(t, "sworn_%s{witness=\"%s\"} %llu\n", families[k].name, name,
                (unsigned long long)v);
        }
    }
}

int d_metrics_render(struct d_metrics *m, uint64_t now_unix_ms, char **out, size_t *len)
{
    static const char *const effects[3] = {"allow", "deny", "escalate"};
    struct text t = {.p = malloc(4096), .cap = 4096};
    uint64_t cum = 0, cp_ms;
    size_t i;

    *out = NULL;
    *len = 0;
    if (t.p == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "metrics: out of memory");
    put(&t, "# HELP sworn_decisions_total Decisions answered, by effect.\n"
            "# TYPE sworn_decisions_total counter\n");
    for (i = 0; i < 3; i++)
        put(&t, "sworn_decisions_total{effect=\"%s\"} %llu\n", effects[i],
            (unsigned long long)atomic_load(&m->decisions[i]));
    counter(&t, "decision_errors_total", "Requests answered with an error frame.",
            atomic_load(&m->decision_errors));
    put(&t,
        "# HELP sworn_refused_total Frames or peers refused, by socket.\n"
        "# TYPE sworn_refused_total counter\n"
        "sworn_refused_total{channel=\"decision\"} %llu\n"
        "sworn_refused_total{channel=\"admin\"} %llu\n",
        (unsigned long long)atomic_load(&m->refused[0]),
        (unsigned long long)atomic_load(&m->refused[1]));
    put(&t, "# HELP sworn_decision_latency_seconds From request frame in to answer out.\n"
            "# TYPE sworn_decision_latency_seconds histogram\n");
    for (i = 0; i < D_METRICS_BUCKETS; i++) {
        cum += atomic_load(&m->latency_bucket[i]);
        put(&t, "sworn_decision_latency_seconds_bucket{le=\"%g\"} %llu\n",
            (double)bucket_us[i] / 1e6, (unsigned long long)cum);
    }
    cum += atomic_load(&m->latency_bucket[D_METRICS_BUCKETS]);
    put(&t,
        "sworn_decision_latency_seconds_bucket{le=\"+Inf\"} %llu\n"
        "sworn_decision_latency_seconds_sum %.6f\n"
        "sworn_decision_latency_seconds_count %llu\n",
        (unsigned long long)cum, (double)atomic_load(&m->latency_sum_us) / 1e6,
        (unsigned long long)atomic_load(&m->latency_count));
    gauge(&t, "log_entries", "Durable entries in the log.", (double)atomic_load(&m->log_entries));
    gauge(&t, "checkpoint_size", "Tree size of the newest checkpoint.",
          (double)atomic_load(&m->checkpoint_size));
    cp_ms = atomic_load(&m->checkpoint_unix_ms);
    gauge(&t, "checkpoint_age_seconds", "Seconds since the newest checkpoint (-1: none yet).",
          cp_ms == 0 ? -1.0 : (double)(now_unix_ms > cp_ms ? now_unix_ms - cp_ms : 0) / 1e3);
    counter(&t, "checkpoints_total", "Checkpoints signed.", atomic_load(&m->checkpoints));
    counter(&t, "checkpoints_unquoted_total", "Checkpoints without a TPM quote.",
            atomic_load(&m->checkpoints_unquoted));
    counter(&t, "quotes_total", "TPM quotes stored.", atomic_load(&m->quotes));
    gauge(&t, "signer_up", "1 when the signer's last call succeeded.",
          (double)atomic_load(&m->signer_up));
    gauge(&t, "tpm_up", "1 when the TPM's last call succeeded (0 also when there is no TPM).",
          (double)atomic_load(&m->tpm_up));
    gauge(&t, "escalations_pending", "Requests held for an operator.",
          (double)atomic_load(&m->escalations_pending));
    put(&t,
        "# HELP sworn_policy_reloads_total Policy reloads, by result.\n"
        "# TYPE sworn_policy_reloads_total counter\n"
        "sworn_policy_reloads_total{result=\"ok\"} %llu\n"
        "sworn_policy_reloads_total{result=\"failed\"} %llu\n",
        (unsigned long long)atomic_load(&m->reloads_ok),
        (unsigned long long)atomic_load(&m->reloads_failed));
    gauge(&t, "frame_buffered_bytes", "Bytes of partial frames the connections hold now.",
          (double)atomic_load(&m->frame_buffered));
    gauge(&t, "frame_buffered_peak_bytes", "The most bytes of frames the connections held at once.",
          (double)atomic_load(&m->frame_buffered_peak));
    counter(&t, "frame_buffer_full_total",
            "Connections closed because the frame buffers of all connections were at their cap.",
            atomic_load(&m->frame_buffer_full));
    counter(&t, "frame_deadline_total",
            "Connections closed because a frame was not complete in time after its first byte.",
            atomic_load(&m->frame_deadline));
    counter(&t, "batch_groups_total", "Batch-receipt groups sealed, one signature each.",
            atomic_load(&m->batch_groups));
    counter(&t, "batch_entries_total",
            "Allows covered by the sealed groups' signatures (mean group size: / groups).",
            atomic_load(&m->batch_entries));
    put(&t, "# HELP sworn_batch_group_size Allows per sealed batch-receipt group.\n"
            "# TYPE sworn_batch_group_size histogram\n");
    cum = 0;
    for (i = 0; i < D_METRICS_GROUP_BUCKETS; i++) {
        cum += atomic_load(&m->batch_size_bucket[i]);
        put(&t, "sworn_batch_group_size_bucket{le=\"%llu\"} %llu\n",
            (unsigned long long)group_le[i], (unsigned long long)cum);
    }
    cum += atomic_load(&m->batch_size_bucket[D_METRICS_GROUP_BUCKETS]);
    put(&t,
        "sworn_batch_group_size_bucket{le=\"+Inf\"} %llu\n"
        "sworn_batch_group_size_sum %llu\n"
        "sworn_batch_group_size_count %llu\n",
        (unsigned long long)cum, (unsigned long long)atomic_load(&m->batch_entries),
        (unsigned long long)atomic_load(&m->batch_groups));
    gauge(&t, "batch_group_size_max", "The most allows one sealed batch-receipt group held.",
          (double)atomic_load(&m->batch_size_max));
    witness_metrics(&t, m);
    if (t.failed) {
        free(t.p);
        return sworn_err_set(SWORN_ERR_NOMEM, "metrics: out of memory");
    }
    *out = t.p;
    *len = t.len;
    return 0;
}
