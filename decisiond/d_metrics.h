/*
 * d_metrics.h -- decisiond's counters and gauges, rendered in the Prometheus text exposition
 * format (version 0.0.4) for the admin socket's metrics call (`swornctl metrics`).
 *
 * Every counter is an atomic, so any thread may count without a lock; rendering reads each value
 * once (a scrape is a consistent-enough snapshot, never a torn number).
 *
 * Metrics (all prefixed sworn_):
 *   decisions_total{effect="allow|deny|escalate"}   answers sent (escalations count when held)
 *   decision_errors_total                            requests answered with an ErrorFrame
 *   refused_total{channel="decision|admin"}          frames or peers refused
 *   decision_latency_seconds (histogram)             frame in to answer out, escalations excluded
 *   log_entries                                      durable entries
 *   checkpoint_size, checkpoint_age_seconds          newest checkpoint
 *   checkpoints_total, checkpoints_unquoted_total    checkpoints signed; those without a quote
 *   quotes_total                                     quotes stored
 *   signer_up, tpm_up                                1 when the last call succeeded
 *   escalations_pending                              held requests
 *   policy_reloads_total{result="ok|failed"}
 *   frame_buffered_bytes, frame_buffered_peak_bytes  frame bytes the connections hold, now and
 *                                                    at most (D_CONN_BUFFERED_MAX caps both)
 *   frame_buffer_full_total                          connections closed: the cap had no room
 *   frame_deadline_total                             connections closed: a frame not complete
 *                                                    D_FRAME_DEADLINE_S after its first byte
 *   batch_groups_total                               batch-receipt groups sealed (one signature
 *                                                    each; receipts: batch only)
 *   batch_entries_total                              allows those signatures cover (the items
 *                                                    of the groups' trees): / groups = mean size
 *   batch_group_size (histogram), batch_group_size_max   allows per sealed group
 *   witness_cosignatures_total{witness="NAME"}       checkpoints each witness cosigned
 *   witness_failures_total{witness="NAME"}           rounds it gave no cosignature (unreachable,
 *                                                    refused)
 *   witness_alarms_total{witness="NAME"}             consistency failures it reported (d_witness.h)
 *   witness_up{witness="NAME"}                       1 when its last round gave a cosignature
 */
#ifndef SWORN_D_METRICS_H
#define SWORN_D_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define D_METRICS_BUCKETS 12
#define D_METRICS_EFFECTS 3       /* allow, deny, escalate: Effect - 1 */
#define D_METRICS_CHANNELS 2      /* decision, admin: enum d_channel */
#define D_METRICS_WITNESSES 16    /* SWORN_DCONFIG_WITNESSES_MAX */
#define D_METRICS_GROUP_BUCKETS 9 /* batch group sizes 1, 2, 4 .. 256 (SWORN_BATCH_ITEMS_MAX) */

struct d_metrics {
    atomic_uint_fast64_t decisions[D_METRICS_EFFECTS]; /* allow, deny, escalate */
    atomic_uint_fast64_t decision_errors;
    atomic_uint_fast64_t refused[D_METRICS_CHANNELS];           /* decision, admin */
    atomic_uint_fast64_t latency_bucket[D_METRICS_BUCKETS + 1]; /* last: +Inf */
    atomic_uint_fast64_t latency_count;
    atomic_uint_fast64_t latency_sum_us;
    atomic_uint_fast64_t log_entries;
    atomic_uint_fast64_t checkpoint_size;
    atomic_uint_fast64_t checkpoint_unix_ms;
    atomic_uint_fast64_t checkpoints;
    atomic_uint_fast64_t checkpoints_unquoted;
    atomic_uint_fast64_t quotes;
    atomic_int signer_up;
    atomic_int tpm_up;
    atomic_uint_fast64_t escalations_pending;
    atomic_uint_fast64_t reloads_ok;
    atomic_uint_fast64_t reloads_failed;
    atomic_uint_fast64_t frame_buffered;      /* d_conn.c: the frame pool's used, */
    atomic_uint_fast64_t frame_buffered_peak; /* and its peak */
    atomic_uint_fast64_t frame_buffer_full;
    atomic_uint_fast64_t frame_deadline;
    atomic_uint_fast64_t batch_groups;
    atomic_uint_fast64_t batch_entries;
    atomic_uint_fast64_t batch_size_bucket[D_METRICS_GROUP_BUCKETS + 1]; /* last: +Inf */
    atomic_uint_fast64_t batch_size_max;
    /* the witnesses (d_witness.h), by their index in the configuration; names set once at start,
     * before any thread renders (d_metrics_witnesses) */
    size_t n_witnesses;
    char witness_names[D_METRICS_WITNESSES][256]; /* note key names: at most 255 bytes */
    atomic_uint_fast64_t witness_cosigned[D_METRICS_WITNESSES];
    atomic_uint_fast64_t witness_failed[D_METRICS_WITNESSES];
    atomic_uint_fast64_t witness_alarms[D_METRICS_WITNESSES];
    atomic_int witness_up[D_METRICS_WITNESSES];
};

/* Zero every metric. */
void d_metrics_init(struct d_metrics *m);

/* Count one answered decision (effect 1..3 as in sworn.proto) and its latency. */
void d_metrics_decision(struct d_metrics *m, int effect, uint64_t latency_us);

/* Name the witnesses' metrics: witness i (i < n <= D_METRICS_WITNESSES) is labelled names[i], its
 * key name (copied). Once, before any thread counts or renders them. */
void d_metrics_witnesses(struct d_metrics *m, size_t n, const char *const *names);

/* Count one batch-receipt group sealed: its one signature covers items allows (1..). */
void d_metrics_batch_group(struct d_metrics *m, uint64_t items);

/*
 * Render the metrics as Prometheus text into a new buffer. OUT: *out (free it), *len.
 * now_unix_ms gives the checkpoint age. Returns 0 or -1 (SWORN_ERR_NOMEM).
 */
int d_metrics_render(struct d_metrics *m, uint64_t now_unix_ms, char **out, size_t *len);

#endif
