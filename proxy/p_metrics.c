/*
 * p_metrics.c -- sworn-proxy's metrics and their Prometheus text (contract in p_metrics.h).
 */
#include "p_metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "p_version.h"

/* The bucket bounds, as numbers (for counting) and as the text of their le label. */
static const double bucket_s[SWORN_PMETRICS_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
static const char *const bucket_le[SWORN_PMETRICS_BUCKETS] = {
    "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
    "0.1",    "0.25",  "0.5",    "1",     "2.5",  "5",     "10"};

static const char *const effect_names[SWORN_PMETRICS_EFFECTS] = {"allow", "deny", "escalate",
                                                                 "refused", "error"};
static const char *const tunnel_names[SWORN_PMETRICS_TUNNELS] = {"tls", "tcp"};
static const char *const failure_names[SWORN_PMETRICS_FAILURES] = {"unreachable", "timeout",
                                                                   "error_frame", "out_of_step"};

/*
 * The code label: the statuses counted exactly (what the proxy answers itself, 101 and 200), then
 * the classes for the rest, then "none". The slot of a status is found by status_slot.
 */
static const int exact_codes[] = {101, 200, 400, 403, 404, 413, 431, 502, 504, 505};
#define EXACT_CODES (sizeof(exact_codes) / sizeof(exact_codes[0]))
#define CLASS_SLOT(c) (EXACT_CODES + (size_t)(c)-1) /* c = 1..5 */
#define NONE_SLOT (EXACT_CODES + 5)
_Static_assert(EXACT_CODES + 6 == SWORN_PMETRICS_STATUS_SLOTS, "status slots");

static size_t status_slot(int status)
{
    if (status < 100 || status > 599)
        return NONE_SLOT;
    for (size_t i = 0; i < EXACT_CODES; i++)
        if (exact_codes[i] == status)
            return i;
    return CLASS_SLOT(status / 100);
}

static void status_label(size_t slot, char out[8])
{
    if (slot < EXACT_CODES)
        snprintf(out, 8, "%d", exact_codes[slot]);
    else if (slot < NONE_SLOT)
        snprintf(out, 8, "%dxx", (int)(slot - EXACT_CODES + 1));
    else
        snprintf(out, 8, "none");
}

void sworn_pmetrics_init(struct sworn_pmetrics *m)
{
    struct timespec now;

    memset(m, 0, sizeof(*m));
    clock_gettime(CLOCK_REALTIME, &now);
    m->start_time = (double)now.tv_sec + (double)(now.tv_nsec / 1000000) / 1e3;
}

void sworn_pmetrics_request(struct sworn_pmetrics *m, enum sworn_pmetrics_effect effect, int status)
{
    if ((unsigned)effect < SWORN_PMETRICS_EFFECTS)
        m->requests[effect]++;
    m->status[status_slot(status)]++;
}

void sworn_pmetrics_connection_open(struct sworn_pmetrics *m)
{
    m->connections++;
    m->connections_open++;
}

void sworn_pmetrics_connection_close(struct sworn_pmetrics *m)
{
    if (m->connections_open > 0)
        m->connections_open--;
}

void sworn_pmetrics_tunnel(struct sworn_pmetrics *m, enum sworn_pmetrics_tunnel kind)
{
    if ((unsigned)kind < SWORN_PMETRICS_TUNNELS)
        m->tunnels[kind]++;
}

void sworn_pmetrics_websocket(struct sworn_pmetrics *m)
{
    m->websockets++;
}

void sworn_pmetrics_bytes(struct sworn_pmetrics *m, uint64_t upstream, uint64_t downstream)
{
    m->bytes_upstream += upstream;
    m->bytes_downstream += downstream;
}

static void observe(struct sworn_pmetrics_histogram *h, double s)
{
    size_t i;

    if (!(s >= 0)) /* negative or NaN */
        s = 0;
    if (s > 1e9)
        s = 1e9;
    for (i = 0; i < SWORN_PMETRICS_BUCKETS && s > bucket_s[i]; i++)
        ;
    h->bucket[i]++;
    h->count++;
    h->sum += s;
}

void sworn_pmetrics_decision_time(struct sworn_pmetrics *m, double seconds)
{
    observe(&m->decision, seconds);
}

void sworn_pmetrics_upstream_time(struct sworn_pmetrics *m, double seconds)
{
    observe(&m->upstream, seconds);
}

void sworn_pmetrics_decisiond_failure(struct sworn_pmetrics *m, enum sworn_pmetrics_failure why)
{
    if ((unsigned)why < SWORN_PMETRICS_FAILURES)
        m->decisiond_failures[why]++;
}

void sworn_pmetrics_dns_refused(struct sworn_pmetrics *m)
{
    m->dns_refused++;
}

void sworn_pmetrics_leaf_minted(struct sworn_pmetrics *m)
{
    m->leaf_minted++;
}

/* The text being written: out[0..len) so far; full once something did not fit. */
struct text {
    char *out;
    size_t len, cap;
    int full;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->full)
        return;
    va_start(ap, fmt);
    n = vsnprintf(t->out + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= t->cap - t->len) {
        t->full = 1;
        return;
    }
    t->len += (size_t)n;
}

static void family(struct text *t, const char *name, const char *type, const char *help)
{
    put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(struct text *t, const char *name, const char *help, uint64_t v)
{
    family(t, name, "counter", help);
    put(t, "%s %llu\n", name, (unsigned long long)v);
}

/* A counter with one label, one series per value. */
static void labelled(struct text *t, const char *name, const char *help, const char *label,
                     const char *const *values, const uint64_t *v, size_t n)
{
    family(t, name, "counter", help);
    for (size_t i = 0; i < n; i++)
        put(t, "%s{%s=\"%s\"} %llu\n", name, label, values[i], (unsigned long long)v[i]);
}

static void histogram(struct text *t, const char *name, const char *help,
                      const struct sworn_pmetrics_histogram *h)
{
    uint64_t cum = 0;

    family(t, name, "histogram", help);
    for (size_t i = 0; i < SWORN_PMETRICS_BUCKETS; i++) {
        cum += h->bucket[i];
        put(t, "%s_bucket{le=\"%s\"} %llu\n", name, bucket_le[i], (unsigned long long)cum);
    }
    cum += h->bucket[SWORN_PMETRICS_BUCKETS];
    put(t, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.17g\n%s_count %llu\n", name,
        (unsigned long long)cum, name, h->sum, name, (unsigned long long)h->count);
}

/* A label value as the exposition format wants it: backslash, quote and newline escaped. */
static void label_value(const char *in, char *out, size_t cap)
{
    size_t o = 0;

    for (; *in != '\0' && o + 3 < cap; in++) {
        if (*in == '\\' || *in == '"') {
            out[o++] = '\\';
            out[o++] = *in;
        } else if (*in == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else
            out[o++] = *in;
    }
    out[o] = '\0';
}

int sworn_pmetrics_render(const struct sworn_pmetrics *m, char *out, size_t cap)
{
    struct text t = {.out = out, .cap = cap};
    const char *status_names[SWORN_PMETRICS_STATUS_SLOTS];
    char status_text[SWORN_PMETRICS_STATUS_SLOTS][8];
    char version[128];

    if (m == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "metrics: NULL argument");
    if (cap == 0)
        return sworn_err_set(SWORN_ERR_RANGE, "metrics: no room for the text");
    for (size_t i = 0; i < SWORN_PMETRICS_STATUS_SLOTS; i++) {
        status_label(i, status_text[i]);
        status_names[i] = status_text[i];
    }
    labelled(&t, "sworn_proxy_requests_total", "Requests answered, by the effect the agent got.",
             "effect", effect_names, m->requests, SWORN_PMETRICS_EFFECTS);
    labelled(&t, "sworn_proxy_requests_by_status_total",
             "Requests answered, by the status sent (exact for the proxy's own, else by class).",
             "code", status_names, m->status, SWORN_PMETRICS_STATUS_SLOTS);
    counter(&t, "sworn_proxy_connections_total", "Agent connections accepted.", m->connections);
    family(&t, "sworn_proxy_connections_open", "gauge", "Agent connections open now.");
    put(&t, "sworn_proxy_connections_open %llu\n", (unsigned long long)m->connections_open);
    labelled(&t, "sworn_proxy_connect_tunnels_total",
             "CONNECT tunnels established: tls (terminated) or tcp (raw).", "kind", tunnel_names,
             m->tunnels, SWORN_PMETRICS_TUNNELS);
    counter(&t, "sworn_proxy_websockets_total", "WebSocket upgrades relayed.", m->websockets);
    {
        static const char *const directions[2] = {"upstream", "downstream"};
        const uint64_t bytes[2] = {m->bytes_upstream, m->bytes_downstream};

        labelled(&t, "sworn_proxy_bytes_total",
                 "Bytes relayed: upstream (agent to upstream), downstream (upstream to agent).",
                 "direction", directions, bytes, 2);
    }
    histogram(&t, "sworn_proxy_decision_seconds", "From a request sent to decisiond to its answer.",
              &m->decision);
    histogram(&t, "sworn_proxy_upstream_seconds",
              "From connecting to upstream to its response head.", &m->upstream);
    labelled(&t, "sworn_proxy_decisiond_failures_total",
             "Decisions that failed closed, by why (nothing was forwarded).", "why", failure_names,
             m->decisiond_failures, SWORN_PMETRICS_FAILURES);
    counter(&t, "sworn_proxy_dns_refused_total",
            "Allowed names not connected to: every address was internal (DNS rebinding).",
            m->dns_refused);
    counter(&t, "sworn_proxy_leaf_certs_minted_total", "Leaf certificates minted.", m->leaf_minted);
    family(&t, "sworn_proxy_start_time_seconds", "gauge",
           "Unix time at which the proxy started counting.");
    put(&t, "sworn_proxy_start_time_seconds %.17g\n", m->start_time);
    label_value(sworn_proxy_version(), version, sizeof(version));
    family(&t, "sworn_proxy_build_info", "gauge", "The proxy's version, as a label; always 1.");
    put(&t, "sworn_proxy_build_info{version=\"%s\"} 1\n", version);
    if (t.full) {
        out[0] = '\0';
        return sworn_err_set(SWORN_ERR_RANGE, "metrics: the text needs more than %zu bytes", cap);
    }
    return (int)t.len;
}
