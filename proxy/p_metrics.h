/*
 * p_metrics.h -- sworn-proxy's counters, gauges and histograms, rendered as Prometheus text
 * (exposition format 0.0.4) for the metrics socket (`metrics.socket` in the configuration; never
 * on an agent's listener).
 *
 * Metrics (every family is always rendered, with every label value, so series never appear or
 * vanish between scrapes):
 *   sworn_proxy_requests_total{effect}            requests answered, by the outcome the agent
 *                                                  got: "allow", "deny", "escalate" (decisiond's
 *                                                  answer was escalate, not resolved: nothing
 *                                                  forwarded; an escalation that ends in an allow
 *                                                  or a deny counts as that), "refused" (the
 *                                                  proxy's own parser or limits refused it: 400,
 *                                                  413, 431, 505, ...), "error" (failed closed:
 *                                                  decisiond or upstream failed)
 *   sworn_proxy_requests_by_status_total{code}    the status sent to the agent: exact for
 *                                                  "101", "200", "400", "403", "404", "413",
 *                                                  "431", "502", "504", "505" (what the proxy
 *                                                  answers itself, and the common ones); else
 *                                                  the class "1xx" .. "5xx" (a "4xx" counts only
 *                                                  the 4xx codes not listed); "none" for 0 (no
 *                                                  status was sent: the agent went away) or a
 *                                                  value outside 100..599
 *   sworn_proxy_connections_total                 agent connections accepted
 *   sworn_proxy_connections_open (gauge)          agent connections open now
 *   sworn_proxy_connect_tunnels_total{kind}       CONNECT tunnels established: "tls"
 *                                                  (terminated), "tcp" (raw, tcp.connect)
 *   sworn_proxy_websockets_total                  WebSocket upgrades relayed (after the 101)
 *   sworn_proxy_bytes_total{direction}            bytes relayed: "upstream" (agent to upstream),
 *                                                  "downstream" (upstream to agent)
 *   sworn_proxy_decision_seconds (histogram)      request sent to decisiond to its answer
 *   sworn_proxy_upstream_seconds (histogram)      connect to upstream to its response head
 *   sworn_proxy_decisiond_failures_total{why}     decisions that failed closed: "unreachable",
 *                                                  "timeout", "error_frame", "out_of_step"
 *   sworn_proxy_dns_refused_total                 allowed names not connected to: every address
 *                                                  was refused (p_addr.h: DNS rebinding)
 *   sworn_proxy_leaf_certs_minted_total           leaf certificates minted (cache misses)
 *   sworn_proxy_start_time_seconds (gauge)        Unix time the metrics were initialised
 *   sworn_proxy_build_info{version} (gauge)       1, labelled with sworn_proxy_version()
 * Histogram buckets (seconds, both histograms): 0.0005 0.001 0.0025 0.005 0.01 0.025 0.05 0.1
 * 0.25 0.5 1 2.5 5 10 +Inf.
 *
 * Memory: struct sworn_pmetrics is plain data the caller owns (no pointer inside, no free).
 * Thread safety: none. sworn-proxy counts and renders on its one event-loop thread, so a counter
 * is a plain increment; a caller with threads must serialise every call on one structure.
 * A counter wraps at 2^64 (it does not saturate: Prometheus treats a decrease as a reset).
 */
#ifndef SWORN_P_METRICS_H
#define SWORN_P_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Enough for sworn_pmetrics_render with every counter at its maximum (the tests check it). */
#define SWORN_PMETRICS_TEXT_MAX 16384u

#define SWORN_PMETRICS_BUCKETS 14u /* finite bounds; one more counter for +Inf */

enum sworn_pmetrics_effect {
    SWORN_PMETRICS_ALLOW = 0,
    SWORN_PMETRICS_DENY,
    SWORN_PMETRICS_ESCALATE,
    SWORN_PMETRICS_REFUSED,
    SWORN_PMETRICS_ERROR,
    SWORN_PMETRICS_EFFECTS /* how many */
};

enum sworn_pmetrics_tunnel { SWORN_PMETRICS_TLS = 0, SWORN_PMETRICS_TCP, SWORN_PMETRICS_TUNNELS };

enum sworn_pmetrics_failure {
    SWORN_PMETRICS_UNREACHABLE = 0, /* could not connect to or write to decisiond */
    SWORN_PMETRICS_TIMEOUT,         /* no answer within decisiond.timeout / escalation_max */
    SWORN_PMETRICS_ERROR_FRAME,     /* decisiond answered with an ErrorFrame */
    SWORN_PMETRICS_OUT_OF_STEP,     /* an answer for another request, or not a frame */
    SWORN_PMETRICS_FAILURES
};

#define SWORN_PMETRICS_STATUS_SLOTS 16u /* the code label's values (see sworn_pmetrics.c) */

struct sworn_pmetrics_histogram {
    uint64_t bucket[SWORN_PMETRICS_BUCKETS + 1]; /* per bucket (not cumulative); last: +Inf */
    uint64_t count;
    double sum; /* seconds */
};

struct sworn_pmetrics {
    uint64_t requests[SWORN_PMETRICS_EFFECTS];
    uint64_t status[SWORN_PMETRICS_STATUS_SLOTS];
    uint64_t connections;
    uint64_t connections_open;
    uint64_t tunnels[SWORN_PMETRICS_TUNNELS];
    uint64_t websockets;
    uint64_t bytes_upstream, bytes_downstream;
    struct sworn_pmetrics_histogram decision, upstream;
    uint64_t decisiond_failures[SWORN_PMETRICS_FAILURES];
    uint64_t dns_refused;
    uint64_t leaf_minted;
    double start_time; /* Unix seconds, set by init */
};

/* Zero every metric and set the start time to now (CLOCK_REALTIME). */
void sworn_pmetrics_init(struct sworn_pmetrics *m);

/* One request answered: its effect and the HTTP status sent (0: none). An effect outside the
 * enum is not counted (its status still is). */
void sworn_pmetrics_request(struct sworn_pmetrics *m, enum sworn_pmetrics_effect effect,
                            int status);

/* An agent connection accepted (total and open), and one closed (open; never below 0). */
void sworn_pmetrics_connection_open(struct sworn_pmetrics *m);
void sworn_pmetrics_connection_close(struct sworn_pmetrics *m);

/* A CONNECT tunnel established (kind outside the enum: not counted). */
void sworn_pmetrics_tunnel(struct sworn_pmetrics *m, enum sworn_pmetrics_tunnel kind);

/* A WebSocket upgrade relayed. */
void sworn_pmetrics_websocket(struct sworn_pmetrics *m);

/* Bytes relayed, agent to upstream and upstream to agent. */
void sworn_pmetrics_bytes(struct sworn_pmetrics *m, uint64_t upstream, uint64_t downstream);

/* One observation of each histogram, in seconds. A negative or NaN value counts as 0; a value
 * above 1e9 (or infinite) as 1e9, so the sum stays finite. */
void sworn_pmetrics_decision_time(struct sworn_pmetrics *m, double seconds);
void sworn_pmetrics_upstream_time(struct sworn_pmetrics *m, double seconds);

/* A decision that failed closed (why outside the enum: not counted). */
void sworn_pmetrics_decisiond_failure(struct sworn_pmetrics *m, enum sworn_pmetrics_failure why);

/* An allowed name not connected to because every address it had was refused. */
void sworn_pmetrics_dns_refused(struct sworn_pmetrics *m);

/* A leaf certificate minted. */
void sworn_pmetrics_leaf_minted(struct sworn_pmetrics *m);

/*
 * Render every metric, with "# HELP" and "# TYPE" lines, into out[0..cap) (NUL-terminated).
 * Returns the length written (without the NUL), or -1 with sworn_err set (SWORN_ERR_RANGE) when
 * cap is too small (out then holds nothing usable); SWORN_PMETRICS_TEXT_MAX is always enough.
 * SWORN_ERR_ARG for a NULL m or out.
 */
int sworn_pmetrics_render(const struct sworn_pmetrics *m, char *out, size_t cap);

#endif
