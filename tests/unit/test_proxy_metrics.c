/*
 * test_proxy_metrics.c -- unit tests of sworn-proxy's observability: proxy/p_metrics.c (the
 * Prometheus text) and proxy/p_jlog.c (the JSON log lines).
 *
 * Metrics: every rendered line is parsed back by a small checker of the exposition format
 * (HELP then TYPE once per family before its samples, valid names and quoted label values,
 * numbers that parse, no series twice, histogram buckets ascending and cumulative with le="+Inf"
 * equal to _count and a _sum); every family the contract lists is there with its type and every
 * label value; each event function moves exactly its series (bucket edges included: le is <=);
 * values outside the enums count nothing; with every counter at 2^64-1 the text still fits
 * SWORN_PMETRICS_TEXT_MAX; one byte short of the text is refused. When Python's
 * prometheus_client is installed, its parser reads the text too (a second, independent reader).
 *
 * Log: the lines go to a SOCK_SEQPACKET socket, where each write(2) arrives as one record, so a
 * test sees that one call is one write of one line; every line parses as one JSON object
 * (json-c), has the header fields with an RFC 3339 millisecond UTC stamp near now, and hostile
 * bytes (bidi override, terminal escapes, C1 CSI, DEL, invalid UTF-8) arrive escaped, the line
 * itself being clean UTF-8; the request line has exactly the fields given, long strings are cut
 * on a character boundary and marked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "d_jlog.h"
#include "err.h"
#include "p_jlog.h"
#include "p_metrics.h"
#include "p_version.h"
#include "utf8.h"

/* ---------------------------------------------------------------- the exposition checker */

#define MAX_SAMPLES 256
#define MAX_FAMILIES 64

struct sample {
    char name[96];
    char labels[160]; /* the text between the braces, as rendered */
    double value;
};

struct fam {
    char name[96];
    char type[16];
    int has_help, samples;
};

struct expo {
    struct sample s[MAX_SAMPLES];
    size_t ns;
    struct fam f[MAX_FAMILIES];
    size_t nf;
};

static int name_char(char c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

static struct fam *find_fam(struct expo *e, const char *name)
{
    for (size_t i = 0; i < e->nf; i++)
        if (strcmp(e->f[i].name, name) == 0)
            return &e->f[i];
    return NULL;
}

/* The family a sample belongs to: itself, or a histogram's name without _bucket/_sum/_count. */
static struct fam *sample_fam(struct expo *e, const char *name)
{
    static const char *const suffixes[] = {"_bucket", "_sum", "_count"};
    struct fam *f = find_fam(e, name);

    if (f != NULL)
        return f;
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(name), k = strlen(suffixes[i]);
        char base[96];

        if (n > k && strcmp(name + n - k, suffixes[i]) == 0 && n - k < sizeof(base)) {
            memcpy(base, name, n - k);
            base[n - k] = '\0';
            f = find_fam(e, base);
            if (f != NULL && strcmp(f->type, "histogram") == 0)
                return f;
        }
    }
    return NULL;
}

/* Check the label text `k="v",k="v"`: names valid, values quoted with only \\ \" \n escapes. */
static void check_labels(const char *p, size_t len, const char *line)
{
    size_t i = 0;

    if (len == 0)
        fail_msg("empty braces: %s", line);
    while (i < len) {
        size_t start = i;

        while (i < len && name_char(p[i], i == start))
            i++;
        if (i == start || i + 1 >= len || p[i] != '=' || p[i + 1] != '"')
            fail_msg("bad label name: %s", line);
        i += 2;
        while (i < len && p[i] != '"') {
            if (p[i] == '\\') {
                if (i + 1 >= len || (p[i + 1] != '\\' && p[i + 1] != '"' && p[i + 1] != 'n'))
                    fail_msg("bad escape in a label value: %s", line);
                i++;
            } else if ((unsigned char)p[i] < 0x20)
                fail_msg("control byte in a label value: %s", line);
            i++;
        }
        if (i >= len)
            fail_msg("unterminated label value: %s", line);
        i++;
        if (i < len) {
            if (p[i] != ',')
                fail_msg("labels not comma-separated: %s", line);
            i++;
        }
    }
}

/* The value of label key in a sample's label text; "" when absent. */
static void label_of(const struct sample *s, const char *key, char *out, size_t cap)
{
    char pat[64];
    const char *p;

    snprintf(pat, sizeof(pat), "%s=\"", key);
    out[0] = '\0';
    p = strstr(s->labels, pat);
    if (p == NULL)
        return;
    p += strlen(pat);
    snprintf(out, cap, "%.*s", (int)strcspn(p, "\""), p);
}

static void check_histogram(struct expo *e, const char *name)
{
    char bucket[112], sum[112], count[112], le[32];
    double last_le = -INFINITY, last_cum = 0, count_v = -1;
    int buckets = 0, inf_seen = 0, sum_seen = 0;

    snprintf(bucket, sizeof(bucket), "%s_bucket", name);
    snprintf(sum, sizeof(sum), "%s_sum", name);
    snprintf(count, sizeof(count), "%s_count", name);
    for (size_t i = 0; i < e->ns; i++) {
        const struct sample *s = &e->s[i];

        if (strcmp(s->name, bucket) == 0) {
            double v;

            assert_false(inf_seen); /* +Inf is the last bucket */
            label_of(s, "le", le, sizeof(le));
            assert_true(le[0] != '\0');
            v = strcmp(le, "+Inf") == 0 ? INFINITY : strtod(le, NULL);
            if (!(v > last_le))
                fail_msg("%s: le=%s not ascending", name, le);
            if (s->value < last_cum)
                fail_msg("%s: le=%s holds fewer than the bucket before", name, le);
            last_le = v;
            last_cum = s->value;
            inf_seen = isinf(v);
            buckets++;
        } else if (strcmp(s->name, sum) == 0) {
            sum_seen = 1;
            assert_true(s->value >= 0);
        } else if (strcmp(s->name, count) == 0)
            count_v = s->value;
    }
    assert_true(inf_seen);
    assert_true(sum_seen);
    assert_int_equal(buckets, SWORN_PMETRICS_BUCKETS + 1);
    if (last_cum != count_v)
        fail_msg("%s: +Inf %.0f != count %.0f", name, last_cum, count_v);
}

/* Parse the whole text into e; fails the test at the first line that breaks the format. */
static void parse_expo(const char *text, size_t len, struct expo *e)
{
    const char *p = text, *end = text + len;

    memset(e, 0, sizeof(*e));
    assert_int_equal(strlen(text), len);
    assert_true(len > 0 && text[len - 1] == '\n');
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        char line[512];
        size_t n;

        assert_non_null(nl);
        n = (size_t)(nl - p);
        assert_true(n > 0 && n < sizeof(line));
        memcpy(line, p, n);
        line[n] = '\0';
        p = nl + 1;
        if (line[0] == '#') {
            char kind[8], name[96], rest[400];
            struct fam *f;

            assert_int_equal(sscanf(line, "# %7s %95s %399[^\n]", kind, name, rest), 3);
            for (size_t i = 0; name[i]; i++)
                assert_true(name_char(name[i], i == 0));
            f = find_fam(e, name);
            if (strcmp(kind, "HELP") == 0) {
                if (f != NULL)
                    fail_msg("HELP twice or after TYPE: %s", line);
                assert_true(e->nf < MAX_FAMILIES);
                f = &e->f[e->nf++];
                snprintf(f->name, sizeof(f->name), "%s", name);
                f->has_help = 1;
            } else if (strcmp(kind, "TYPE") == 0) {
                if (f == NULL || f->type[0] != '\0' || f->samples)
                    fail_msg("TYPE without HELP before it, twice, or after samples: %s", line);
                assert_true(strcmp(rest, "counter") == 0 || strcmp(rest, "gauge") == 0 ||
                            strcmp(rest, "histogram") == 0);
                snprintf(f->type, sizeof(f->type), "%.15s", rest);
            } else
                fail_msg("unknown comment: %s", line);
            continue;
        }
        {
            struct sample *s;
            struct fam *f;
            size_t i = 0;
            char *vend;

            assert_true(e->ns < MAX_SAMPLES);
            s = &e->s[e->ns];
            while (name_char(line[i], i == 0))
                i++;
            assert_true(i > 0 && i < sizeof(s->name));
            memcpy(s->name, line, i);
            s->name[i] = '\0';
            if (line[i] == '{') {
                const char *close = strrchr(line, '}');

                assert_non_null(close);
                check_labels(line + i + 1, (size_t)(close - line) - i - 1, line);
                snprintf(s->labels, sizeof(s->labels), "%.*s", (int)(close - line - (long)i - 1),
                         line + i + 1);
                i = (size_t)(close - line) + 1;
            }
            if (line[i] != ' ')
                fail_msg("no single space before the value: %s", line);
            errno = 0;
            s->value = strtod(line + i + 1, &vend);
            if (vend == line + i + 1 || *vend != '\0' || errno != 0 || line[i + 1] == ' ')
                fail_msg("bad value: %s", line);
            f = sample_fam(e, s->name);
            if (f == NULL || f->type[0] == '\0')
                fail_msg("sample without HELP and TYPE: %s", line);
            if (strcmp(f->type, "counter") == 0) {
                size_t nl2 = strlen(s->name);

                assert_true(nl2 > 6 && strcmp(s->name + nl2 - 6, "_total") == 0);
                assert_true(s->value >= 0);
            }
            for (size_t j = 0; j < e->ns; j++)
                if (strcmp(e->s[j].name, s->name) == 0 && strcmp(e->s[j].labels, s->labels) == 0)
                    fail_msg("series twice: %s", line);
            f->samples++;
            e->ns++;
        }
    }
    for (size_t i = 0; i < e->nf; i++) {
        if (e->f[i].type[0] == '\0' || e->f[i].samples == 0)
            fail_msg("%s: no TYPE or no sample", e->f[i].name);
        if (strcmp(e->f[i].type, "histogram") == 0)
            check_histogram(e, e->f[i].name);
    }
}

/* The value of one series; fails when it is not there. */
static double value(const struct expo *e, const char *name, const char *labels)
{
    for (size_t i = 0; i < e->ns; i++)
        if (strcmp(e->s[i].name, name) == 0 && strcmp(e->s[i].labels, labels) == 0)
            return e->s[i].value;
    fail_msg("no series %s{%s}", name, labels);
    return -1;
}

static void render(const struct sworn_pmetrics *m, char *buf, struct expo *e)
{
    int n = sworn_pmetrics_render(m, buf, SWORN_PMETRICS_TEXT_MAX);

    if (n < 0)
        fail_msg("render: %s", sworn_err_msg());
    parse_expo(buf, (size_t)n, e);
}

/* Every family of the contract, its type, and the label values it must show. */
static void test_families(void **state)
{
    static const struct {
        const char *name, *type, *label;
        const char *values[17];
    } want[] = {
        {"sworn_proxy_requests_total",
         "counter",
         "effect",
         {"allow", "deny", "escalate", "refused", "error"}},
        {"sworn_proxy_requests_by_status_total",
         "counter",
         "code",
         {"101", "200", "400", "403", "404", "413", "431", "502", "504", "505", "1xx", "2xx", "3xx",
          "4xx", "5xx", "none"}},
        {"sworn_proxy_connections_total", "counter", NULL, {NULL}},
        {"sworn_proxy_connections_open", "gauge", NULL, {NULL}},
        {"sworn_proxy_connect_tunnels_total", "counter", "kind", {"tls", "tcp"}},
        {"sworn_proxy_websockets_total", "counter", NULL, {NULL}},
        {"sworn_proxy_bytes_total", "counter", "direction", {"upstream", "downstream"}},
        {"sworn_proxy_decision_seconds", "histogram", NULL, {NULL}},
        {"sworn_proxy_upstream_seconds", "histogram", NULL, {NULL}},
        {"sworn_proxy_decisiond_failures_total",
         "counter",
         "why",
         {"unreachable", "timeout", "error_frame", "out_of_step"}},
        {"sworn_proxy_dns_refused_total", "counter", NULL, {NULL}},
        {"sworn_proxy_leaf_certs_minted_total", "counter", NULL, {NULL}},
        {"sworn_proxy_start_time_seconds", "gauge", NULL, {NULL}},
        {"sworn_proxy_build_info", "gauge", "version", {NULL}},
    };
    static struct sworn_pmetrics m;
    static char buf[SWORN_PMETRICS_TEXT_MAX];
    static struct expo e;
    struct timespec before, after;

    (void)state;
    clock_gettime(CLOCK_REALTIME, &before);
    sworn_pmetrics_init(&m);
    clock_gettime(CLOCK_REALTIME, &after);
    render(&m, buf, &e);
    assert_int_equal(e.nf, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        struct fam *f = find_fam(&e, want[i].name);
        size_t nvalues = 0;

        if (f == NULL)
            fail_msg("no family %s", want[i].name);
        assert_string_equal(f->type, want[i].type);
        for (; want[i].values[nvalues] != NULL; nvalues++) {
            char labels[128];

            snprintf(labels, sizeof(labels), "%s=\"%s\"", want[i].label, want[i].values[nvalues]);
            assert_true(value(&e, want[i].name, labels) == 0);
        }
        if (nvalues > 0)
            assert_int_equal(f->samples, nvalues); /* no other label value */
        else if (want[i].label == NULL && strcmp(want[i].type, "histogram") != 0) {
            assert_int_equal(f->samples, 1);
            if (strcmp(want[i].name, "sworn_proxy_start_time_seconds") != 0)
                assert_true(value(&e, want[i].name, "") == 0);
        }
    }
    {
        char labels[160];
        double start = value(&e, "sworn_proxy_start_time_seconds", "");

        snprintf(labels, sizeof(labels), "version=\"%s\"", sworn_proxy_version());
        assert_true(value(&e, "sworn_proxy_build_info", labels) == 1);
        assert_true(start >= (double)before.tv_sec && start <= (double)after.tv_sec + 1);
    }
    assert_true(value(&e, "sworn_proxy_decision_seconds_count", "") == 0);
    assert_true(value(&e, "sworn_proxy_upstream_seconds_bucket", "le=\"+Inf\"") == 0);
}

static void test_counting(void **state)
{
    static struct sworn_pmetrics m;
    static char buf[SWORN_PMETRICS_TEXT_MAX];
    static struct expo e;

    (void)state;
    sworn_pmetrics_init(&m);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ALLOW, 200);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ALLOW, 200);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ALLOW, 201);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ALLOW, 304);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ALLOW, 101);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ALLOW, 100);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ALLOW, 404);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ALLOW, 418);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ALLOW, 599);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_DENY, 403);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ESCALATE, 403);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_REFUSED, 400);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_REFUSED, 413);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_REFUSED, 431);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_REFUSED, 505);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ERROR, 502);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ERROR, 504);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ERROR, 0);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ERROR, 99);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ERROR, 600);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_ERROR, -1);
    sworn_pmetrics_request(&m, (enum sworn_pmetrics_effect)5, 200);    /* status only */
    sworn_pmetrics_request(&m, (enum sworn_pmetrics_effect) - 1, 200); /* status only */
    sworn_pmetrics_connection_open(&m);
    sworn_pmetrics_connection_open(&m);
    sworn_pmetrics_connection_open(&m);
    sworn_pmetrics_connection_close(&m);
    sworn_pmetrics_tunnel(&m, SWORN_PMETRICS_TLS);
    sworn_pmetrics_tunnel(&m, SWORN_PMETRICS_TLS);
    sworn_pmetrics_tunnel(&m, SWORN_PMETRICS_TCP);
    sworn_pmetrics_tunnel(&m, (enum sworn_pmetrics_tunnel)2);
    sworn_pmetrics_websocket(&m);
    sworn_pmetrics_bytes(&m, 100, 5000);
    sworn_pmetrics_bytes(&m, 23, 0);
    sworn_pmetrics_decisiond_failure(&m, SWORN_PMETRICS_UNREACHABLE);
    sworn_pmetrics_decisiond_failure(&m, SWORN_PMETRICS_TIMEOUT);
    sworn_pmetrics_decisiond_failure(&m, SWORN_PMETRICS_TIMEOUT);
    sworn_pmetrics_decisiond_failure(&m, SWORN_PMETRICS_ERROR_FRAME);
    sworn_pmetrics_decisiond_failure(&m, SWORN_PMETRICS_OUT_OF_STEP);
    sworn_pmetrics_decisiond_failure(&m, (enum sworn_pmetrics_failure)4);
    sworn_pmetrics_dns_refused(&m);
    sworn_pmetrics_leaf_minted(&m);
    sworn_pmetrics_leaf_minted(&m);
    render(&m, buf, &e);
    assert_true(value(&e, "sworn_proxy_requests_total", "effect=\"allow\"") == 9);
    assert_true(value(&e, "sworn_proxy_requests_total", "effect=\"deny\"") == 1);
    assert_true(value(&e, "sworn_proxy_requests_total", "effect=\"escalate\"") == 1);
    assert_true(value(&e, "sworn_proxy_requests_total", "effect=\"refused\"") == 4);
    assert_true(value(&e, "sworn_proxy_requests_total", "effect=\"error\"") == 6);
#define CODE(c) value(&e, "sworn_proxy_requests_by_status_total", "code=\"" c "\"")
    assert_true(CODE("200") == 4);
    assert_true(CODE("2xx") == 1);
    assert_true(CODE("3xx") == 1);
    assert_true(CODE("101") == 1);
    assert_true(CODE("1xx") == 1);
    assert_true(CODE("404") == 1);
    assert_true(CODE("4xx") == 1);
    assert_true(CODE("5xx") == 1);
    assert_true(CODE("403") == 2);
    assert_true(CODE("400") == 1);
    assert_true(CODE("413") == 1);
    assert_true(CODE("431") == 1);
    assert_true(CODE("505") == 1);
    assert_true(CODE("502") == 1);
    assert_true(CODE("504") == 1);
    assert_true(CODE("none") == 4);
#undef CODE
    assert_true(value(&e, "sworn_proxy_connections_total", "") == 3);
    assert_true(value(&e, "sworn_proxy_connections_open", "") == 2);
    sworn_pmetrics_connection_close(&m);
    sworn_pmetrics_connection_close(&m);
    sworn_pmetrics_connection_close(&m); /* one too many: stays at 0 */
    assert_true(value(&e, "sworn_proxy_connect_tunnels_total", "kind=\"tls\"") == 2);
    assert_true(value(&e, "sworn_proxy_connect_tunnels_total", "kind=\"tcp\"") == 1);
    assert_true(value(&e, "sworn_proxy_websockets_total", "") == 1);
    assert_true(value(&e, "sworn_proxy_bytes_total", "direction=\"upstream\"") == 123);
    assert_true(value(&e, "sworn_proxy_bytes_total", "direction=\"downstream\"") == 5000);
    assert_true(value(&e, "sworn_proxy_decisiond_failures_total", "why=\"unreachable\"") == 1);
    assert_true(value(&e, "sworn_proxy_decisiond_failures_total", "why=\"timeout\"") == 2);
    assert_true(value(&e, "sworn_proxy_decisiond_failures_total", "why=\"error_frame\"") == 1);
    assert_true(value(&e, "sworn_proxy_decisiond_failures_total", "why=\"out_of_step\"") == 1);
    assert_true(value(&e, "sworn_proxy_dns_refused_total", "") == 1);
    assert_true(value(&e, "sworn_proxy_leaf_certs_minted_total", "") == 2);
    render(&m, buf, &e);
    assert_true(value(&e, "sworn_proxy_connections_open", "") == 0);
    assert_true(value(&e, "sworn_proxy_connections_total", "") == 3);
}

/* Bucket edges: le is "less than or equal". */
static void test_histograms(void **state)
{
    static struct sworn_pmetrics m;
    static char buf[SWORN_PMETRICS_TEXT_MAX];
    static struct expo e;
    const char *d = "sworn_proxy_decision_seconds_bucket";

    (void)state;
    sworn_pmetrics_init(&m);
    sworn_pmetrics_decision_time(&m, 0);        /* 0.0005 */
    sworn_pmetrics_decision_time(&m, 0.0005);   /* 0.0005 */
    sworn_pmetrics_decision_time(&m, 0.000501); /* 0.001 */
    sworn_pmetrics_decision_time(&m, 0.3);      /* 0.5 */
    sworn_pmetrics_decision_time(&m, 10);       /* 10 */
    sworn_pmetrics_decision_time(&m, 10.001);   /* +Inf */
    sworn_pmetrics_decision_time(&m, -3);       /* as 0 */
    sworn_pmetrics_decision_time(&m, NAN);      /* as 0 */
    sworn_pmetrics_upstream_time(&m, INFINITY); /* +Inf, sum 1e9 */
    sworn_pmetrics_upstream_time(&m, 2);
    render(&m, buf, &e);
    assert_true(value(&e, d, "le=\"0.0005\"") == 4);
    assert_true(value(&e, d, "le=\"0.001\"") == 5);
    assert_true(value(&e, d, "le=\"0.25\"") == 5);
    assert_true(value(&e, d, "le=\"0.5\"") == 6);
    assert_true(value(&e, d, "le=\"5\"") == 6);
    assert_true(value(&e, d, "le=\"10\"") == 7);
    assert_true(value(&e, d, "le=\"+Inf\"") == 8);
    assert_true(value(&e, "sworn_proxy_decision_seconds_count", "") == 8);
    assert_true(fabs(value(&e, "sworn_proxy_decision_seconds_sum", "") -
                     (0.0005 + 0.000501 + 0.3 + 10 + 10.001)) < 1e-9);
    assert_true(value(&e, "sworn_proxy_upstream_seconds_bucket", "le=\"1\"") == 0);
    assert_true(value(&e, "sworn_proxy_upstream_seconds_bucket", "le=\"2.5\"") == 1);
    assert_true(value(&e, "sworn_proxy_upstream_seconds_bucket", "le=\"+Inf\"") == 2);
    assert_true(value(&e, "sworn_proxy_upstream_seconds_sum", "") == 1e9 + 2);
}

/* The largest text fits SWORN_PMETRICS_TEXT_MAX; a buffer one byte short is refused. */
static void test_render_bounds(void **state)
{
    static struct sworn_pmetrics m;
    static char buf[SWORN_PMETRICS_TEXT_MAX];
    static char exact[SWORN_PMETRICS_TEXT_MAX];
    static struct expo e;
    int n;

    (void)state;
    sworn_pmetrics_init(&m);
    memset(&m, 0xFF, offsetof(struct sworn_pmetrics, decision));
    for (size_t i = 0; i <= SWORN_PMETRICS_BUCKETS; i++)
        m.decision.bucket[i] = m.upstream.bucket[i] = UINT64_MAX / (SWORN_PMETRICS_BUCKETS + 1);
    m.decision.count = m.upstream.count =
        UINT64_MAX / (SWORN_PMETRICS_BUCKETS + 1) * (SWORN_PMETRICS_BUCKETS + 1);
    m.decision.sum = m.upstream.sum = 1.7976931348623157e308;
    memset(m.decisiond_failures, 0xFF, sizeof(m.decisiond_failures));
    m.dns_refused = m.leaf_minted = UINT64_MAX;
    m.start_time = -1.2345678901234567e-300;
    n = sworn_pmetrics_render(&m, buf, sizeof(buf));
    assert_true(n > 0);
    parse_expo(buf, (size_t)n, &e);
    assert_non_null(strstr(buf, "sworn_proxy_requests_total{effect=\"allow\"} "
                                "18446744073709551615\n"));
    print_message("largest text: %d of %u bytes\n", n, SWORN_PMETRICS_TEXT_MAX);
    /* Exactly the length and its NUL: fits; one byte less: refused, nothing usable left. */
    assert_int_equal(sworn_pmetrics_render(&m, exact, (size_t)n + 1), n);
    assert_memory_equal(exact, buf, (size_t)n + 1);
    memset(exact, 'x', sizeof(exact));
    sworn_err_clear();
    assert_int_equal(sworn_pmetrics_render(&m, exact, (size_t)n), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(exact[0], '\0');
    assert_int_equal(exact[n], 'x'); /* never past cap */
    assert_int_equal(sworn_pmetrics_render(&m, exact, 1), -1);
    assert_int_equal(sworn_pmetrics_render(&m, exact, 0), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(sworn_pmetrics_render(NULL, exact, sizeof(exact)), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(sworn_pmetrics_render(&m, NULL, 10), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
}

/* A second reader: Python's prometheus_client, when installed, parses the text and counts the
 * same samples (none of this code is shared with the checker above). */
static void test_python_parser(void **state)
{
    static struct sworn_pmetrics m;
    static char buf[SWORN_PMETRICS_TEXT_MAX];
    static struct expo e;
    char path[] = "/tmp/sworn-pmetrics-XXXXXX", cmd[512], out[64] = "";
    FILE *f, *p;
    int fd, n, st;

    (void)state;
    if (system("/usr/bin/python3 -c 'import prometheus_client' >/dev/null 2>&1") != 0) {
        print_message("python3 prometheus_client not installed: the second reader is skipped\n");
        return;
    }
    sworn_pmetrics_init(&m);
    sworn_pmetrics_request(&m, SWORN_PMETRICS_DENY, 403);
    sworn_pmetrics_decision_time(&m, 0.002);
    n = sworn_pmetrics_render(&m, buf, sizeof(buf));
    assert_true(n > 0);
    parse_expo(buf, (size_t)n, &e);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, (size_t)n, f), (size_t)n);
    assert_int_equal(fclose(f), 0);
    snprintf(cmd, sizeof(cmd),
             "/usr/bin/python3 -c 'import sys\nfrom prometheus_client.parser import "
             "text_string_to_metric_families as t\nprint(sum(len(f.samples) for f in "
             "t(open(sys.argv[1]).read())))' %s",
             path);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(out, sizeof(out), p));
    st = pclose(p);
    unlink(path);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(strtol(out, NULL, 10), (long)e.ns);
}

/* ---------------------------------------------------------------- the log */

static int log_pair[2] = {-1, -1};

static int log_setup(void **state)
{
    (void)state;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, log_pair) != 0)
        return -1;
    sworn_plog_open(log_pair[0]);
    sworn_plog_set_level(SWORN_PLOG_INFO);
    return 0;
}

static int log_teardown(void **state)
{
    (void)state;
    sworn_plog_open(-1);
    close(log_pair[0]);
    close(log_pair[1]);
    return 0;
}

/* The one record the last call wrote (NUL-terminated, with its '\n'); fails unless there was
 * exactly one write and it was one line. */
static size_t one_line(char *buf, size_t cap)
{
    ssize_t n = recv(log_pair[1], buf, cap - 1, MSG_DONTWAIT);
    char extra[16];

    if (n <= 0)
        fail_msg("no line written (%s)", n < 0 ? strerror(errno) : "EOF");
    buf[n] = '\0';
    assert_true((size_t)n < cap - 1); /* not cut by our buffer */
    assert_int_equal(buf[n - 1], '\n');
    assert_ptr_equal(strchr(buf, '\n'), buf + n - 1);
    assert_int_equal(recv(log_pair[1], extra, sizeof(extra), MSG_DONTWAIT), -1);
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
    return (size_t)n;
}

static void no_line(void)
{
    char extra[16];

    assert_int_equal(recv(log_pair[1], extra, sizeof(extra), MSG_DONTWAIT), -1);
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

/* Parse one line: one JSON object and nothing after it; the line is clean UTF-8 (no control,
 * bidi or invisible character). Checks the header fields. */
static json_object *parse_line(const char *line, size_t len, const char *level, const char *event)
{
    json_tokener *tok = json_tokener_new();
    json_object *o, *v;
    struct timespec now;
    struct tm tm;
    char now_ts[32];
    const char *ts;

    assert_non_null(tok);
    if (sworn_utf8_check(line, len - 1, 0, "line") != 0)
        fail_msg("not clean UTF-8: %s (%s)", line, sworn_err_msg());
    o = json_tokener_parse_ex(tok, line, (int)len - 1);
    assert_non_null(o);
    assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
    assert_int_equal(json_tokener_get_parse_end(tok), len - 1);
    json_tokener_free(tok);
    assert_true(json_object_is_type(o, json_type_object));
    assert_true(json_object_object_get_ex(o, "ts", &v));
    ts = json_object_get_string(v);
    /* 2026-12-02T12:00:00.123Z, today (UTC) */
    assert_int_equal(strlen(ts), 24);
    for (size_t i = 0; i < 24; i++) {
        const char *shape = "dddd-dd-ddTdd:dd:dd.dddZ";

        if (shape[i] == 'd')
            assert_true(ts[i] >= '0' && ts[i] <= '9');
        else
            assert_int_equal(ts[i], shape[i]);
    }
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(now_ts, sizeof(now_ts), "%Y-%m-%dT%H:%M", &tm);
    if (strncmp(ts, now_ts, 13) != 0) /* same hour (a line written just before it turned) */
        print_message("ts %s, now %s\n", ts, now_ts);
    assert_true(json_object_object_get_ex(o, "level", &v));
    assert_string_equal(json_object_get_string(v), level);
    assert_true(json_object_object_get_ex(o, "event", &v));
    assert_string_equal(json_object_get_string(v), event);
    return o;
}

static const char *str_field(json_object *o, const char *key)
{
    json_object *v;

    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("no field %s", key);
    assert_true(json_object_is_type(v, json_type_string));
    return json_object_get_string(v);
}

static void test_log_basic(void **state)
{
    char line[4096];
    size_t n;
    json_object *o, *f, *v;

    (void)state;
    f = json_object_new_object();
    json_object_object_add(f, "listener", json_object_new_string("/run/sworn/proxy.sock"));
    json_object_object_add(f, "n", json_object_new_int(3));
    /* the header cannot be forged by a field */
    json_object_object_add(f, "level", json_object_new_string("debug"));
    json_object_object_add(f, "event", json_object_new_string("forged"));
    json_object_object_add(f, "ts", json_object_new_string("1970-01-01T00:00:00.000Z"));
    sworn_plog(SWORN_PLOG_WARN, "listening", f);
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "warn", "listening");
    assert_string_equal(str_field(o, "listener"), "/run/sworn/proxy.sock");
    assert_true(json_object_object_get_ex(o, "n", &v));
    assert_int_equal(json_object_get_int(v), 3);
    assert_int_equal(json_object_object_length(o), 5);
    assert_string_not_equal(str_field(o, "ts"), "1970-01-01T00:00:00.000Z");
    /* the header comes first, in order */
    assert_int_equal(strncmp(line, "{\"ts\":\"", 7), 0);
    assert_non_null(strstr(line, "\",\"level\":\"warn\",\"event\":\"listening\","));
    json_object_put(o);

    /* no fields; a NULL event; fields that are not an object */
    sworn_plog(SWORN_PLOG_ERROR, "stopping", NULL);
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "error", "stopping");
    assert_int_equal(json_object_object_length(o), 3);
    json_object_put(o);
    sworn_plog(SWORN_PLOG_INFO, NULL, json_object_new_array());
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "info", "unnamed");
    assert_int_equal(json_object_object_length(o), 3);
    json_object_put(o);
}

static void test_log_levels(void **state)
{
    char line[4096];
    size_t n;
    json_object *o, *f;

    (void)state;
    f = json_object_new_object();
    json_object_object_add(f, "x", json_object_new_string("dropped"));
    sworn_plog(SWORN_PLOG_DEBUG, "chatty", f); /* below info: dropped, f consumed */
    no_line();
    sworn_plog((enum sworn_plog_level)7, "bad", json_object_new_object());
    no_line();
    sworn_plog((enum sworn_plog_level) - 1, "bad", json_object_new_object());
    no_line();
    sworn_plog_set_level(SWORN_PLOG_DEBUG);
    sworn_plog(SWORN_PLOG_DEBUG, "chatty", NULL);
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "debug", "chatty");
    json_object_put(o);
    sworn_plog_set_level(SWORN_PLOG_ERROR);
    sworn_plog(SWORN_PLOG_WARN, "quiet", NULL);
    no_line();
    sworn_plog_set_level(SWORN_PLOG_INFO);
}

/* Hostile bytes in a field are escaped; what was valid UTF-8 reads back as it was. */
static void test_log_hostile(void **state)
{
    /* RLO, an ANSI colour, BEL, DEL, C1 CSI (U+009B), a zero-width space, an isolate, a
     * byte that is not UTF-8, a truncated sequence, an overlong '/', a quote, a backslash */
    static const char hostile[] = "/a\xe2\x80\xae"
                                  "exe.txt\x1b[31mred\x07\x7f\xc2\x9b"
                                  "\xe2\x80\x8b\xe2\x81\xa6x\xff\xe2\x80\"\\\xc0\xaf/end";
    static const char back[] = "/a\xe2\x80\xae"
                               "exe.txt\x1b[31mred\x07\x7f\xc2\x9b"
                               "\xe2\x80\x8b\xe2\x81\xa6x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"\\"
                               "\xef\xbf\xbd\xef\xbf\xbd/end";
    char line[8192];
    size_t n;
    json_object *o, *f;

    (void)state;
    f = json_object_new_object();
    json_object_object_add(f, "path", json_object_new_string(hostile));
    json_object_object_add(f, hostile, json_object_new_string("key too"));
    sworn_plog(SWORN_PLOG_INFO, "request", f);
    n = one_line(line, sizeof(line));
    for (size_t i = 0; i + 1 < n; i++) {
        unsigned char c = (unsigned char)line[i];

        assert_true(c >= 0x20 && c != 0x7f);
    }
    assert_null(strstr(line, "\xe2\x80\xae"));
    assert_null(strstr(line, "\xc2\x9b"));
    assert_null(strstr(line, "\xe2\x80\x8b"));
    assert_non_null(strstr(line, "\\u202e"));
    assert_non_null(strstr(line, "\\u001b[31m"));
    assert_non_null(strstr(line, "\\u009b"));
    assert_non_null(strstr(line, "\\u007f"));
    o = parse_line(line, n, "info", "request");
    assert_string_equal(str_field(o, "path"), back);
    assert_string_equal(str_field(o, back), "key too");
    json_object_put(o);
}

static void test_log_request(void **state)
{
    static const char *const all_keys[] = {"ts",        "level",     "event",    "request_id",
                                           "principal", "method",    "url",      "status",
                                           "effect",    "log_index", "bytes_up", "bytes_down",
                                           "ms_decide", "ms_total",  "reason",   NULL};
    const struct sworn_plog_req full = {
        .request_id = "01JEXAMPLE0000000000000000",
        .principal = "agent-7",
        .method = "POST",
        .url = "https://api.example.com:443/v1/items?q=%E2%80%AE",
        .status = 200,
        .effect = "allow",
        .has_log_index = 1,
        .log_index = 18446744073709551615u,
        .bytes_up = 1234,
        .bytes_down = 987654321,
        .ms_decide = 1.25,
        .ms_total = 40.5004,
        .reason = "rule api-write",
    };
    struct sworn_plog_req partial = {.method = "GET", .ms_decide = -1, .ms_total = -1};
    char line[8192];
    size_t n;
    json_object *o, *v;

    (void)state;
    sworn_plog_request(&full);
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "info", "request");
    for (size_t i = 0; all_keys[i] != NULL; i++)
        if (!json_object_object_get_ex(o, all_keys[i], NULL))
            fail_msg("no %s", all_keys[i]);
    assert_int_equal(json_object_object_length(o), 15);
    assert_string_equal(str_field(o, "request_id"), full.request_id);
    assert_string_equal(str_field(o, "principal"), "agent-7");
    assert_string_equal(str_field(o, "method"), "POST");
    assert_string_equal(str_field(o, "url"), full.url);
    assert_string_equal(str_field(o, "effect"), "allow");
    assert_string_equal(str_field(o, "reason"), "rule api-write");
    assert_true(json_object_object_get_ex(o, "status", &v));
    assert_int_equal(json_object_get_int(v), 200);
    assert_non_null(strstr(line, "\"log_index\":18446744073709551615,"));
    assert_non_null(strstr(line, "\"bytes_up\":1234,"));
    assert_non_null(strstr(line, "\"bytes_down\":987654321,"));
    assert_non_null(strstr(line, "\"ms_decide\":1.250,"));
    assert_non_null(strstr(line, "\"ms_total\":40.500,"));
    json_object_put(o);

    /* Only what is given: NULL strings, status 0, no log index, negative times left out. */
    sworn_plog_request(&partial);
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "info", "request");
    assert_int_equal(json_object_object_length(o), 6);
    assert_string_equal(str_field(o, "method"), "GET");
    assert_true(json_object_object_get_ex(o, "bytes_up", &v));
    assert_int_equal(json_object_get_int64(v), 0);
    assert_true(json_object_object_get_ex(o, "bytes_down", NULL));
    json_object_put(o);
    partial.ms_decide = NAN;
    partial.ms_total = 0;
    sworn_plog_request(&partial);
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "info", "request");
    assert_false(json_object_object_get_ex(o, "ms_decide", NULL));
    assert_non_null(strstr(line, "\"ms_total\":0.000"));
    json_object_put(o);
    sworn_plog_request(NULL);
    no_line();
    /* The request line is info: a level of warn drops it. */
    sworn_plog_set_level(SWORN_PLOG_WARN);
    sworn_plog_request(&full);
    no_line();
    sworn_plog_set_level(SWORN_PLOG_INFO);
}

/* A string longer than SWORN_PLOG_FIELD_MAX is cut before the character that crosses it. */
static void test_log_truncated(void **state)
{
    static char url[SWORN_PLOG_FIELD_MAX + 100];
    static char line[SWORN_PLOG_FIELD_MAX * 8];
    struct sworn_plog_req r = {.url = url, .reason = url + 50, .ms_decide = -1, .ms_total = -1};
    size_t n;
    json_object *o, *v;
    const char *got;

    (void)state;
    /* "/" then 'a's, with a 3-byte U+20AC starting 1 byte before the limit */
    memset(url, 'a', sizeof(url) - 1);
    url[0] = '/';
    url[SWORN_PLOG_FIELD_MAX - 1] = '\xe2';
    url[SWORN_PLOG_FIELD_MAX] = '\x82';
    url[SWORN_PLOG_FIELD_MAX + 1] = '\xac';
    url[sizeof(url) - 1] = '\0';
    sworn_plog_request(&r);
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "info", "request");
    got = str_field(o, "url");
    assert_int_equal(strlen(got), SWORN_PLOG_FIELD_MAX - 1);
    assert_memory_equal(got, url, SWORN_PLOG_FIELD_MAX - 1);
    assert_true(json_object_object_get_ex(o, "url_truncated", &v));
    assert_true(json_object_get_boolean(v));
    /* reason starts 50 bytes in: the cut lands after the euro sign, which stays whole */
    got = str_field(o, "reason");
    assert_int_equal(strlen(got), SWORN_PLOG_FIELD_MAX);
    assert_memory_equal(got, url + 50, SWORN_PLOG_FIELD_MAX);
    assert_true(json_object_object_get_ex(o, "reason_truncated", NULL));
    assert_false(json_object_object_get_ex(o, "method_truncated", NULL));
    json_object_put(o);
    /* exactly the limit: kept whole, not marked */
    url[SWORN_PLOG_FIELD_MAX - 1] = 'b';
    url[SWORN_PLOG_FIELD_MAX] = '\0';
    r.reason = NULL;
    sworn_plog_request(&r);
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "info", "request");
    assert_int_equal(strlen(str_field(o, "url")), SWORN_PLOG_FIELD_MAX);
    assert_false(json_object_object_get_ex(o, "url_truncated", NULL));
    json_object_put(o);
}

/* The same fields give the same line as decisiond's d_log, byte for byte after the time stamp:
 * the escaping is decisiond's, not a second one that could drift. */
static void test_log_as_decisiond(void **state)
{
    static const char *const values[] = {
        "plain",
        /* Two literals on purpose: "\xae" followed by "e" would be one escape. */
        ("/a\xe2\x80\xae"
         "exe.txt\x1b[31mred\x07\x7f\xc2\x9b\xe2\x80\x8b\xe2\x81\xa6x"),
        "\xff\xe2\x80\"\\\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80/end",
        "tag \xf3\xa0\x80\x81 sep \xe2\x80\xa8 bom \xef\xbb\xbf emoji \xf0\x9f\x98\x80 ok",
        "slash / and </script>",
    };
    char mine[8192], theirs[8192];
    size_t n_mine, n_theirs;
    int saved = dup(STDERR_FILENO);

    (void)state;
    assert_true(saved >= 0);
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        json_object *a = json_object_new_object(), *b = json_object_new_object();

        json_object_object_add(a, "v", json_object_new_string(values[i]));
        json_object_object_add(a, values[i], json_object_new_int((int)i));
        json_object_object_add(b, "v", json_object_new_string(values[i]));
        json_object_object_add(b, values[i], json_object_new_int((int)i));
        sworn_plog(SWORN_PLOG_WARN, "same", a);
        n_mine = one_line(mine, sizeof(mine));
        assert_int_equal(dup2(log_pair[0], STDERR_FILENO), STDERR_FILENO);
        d_log(D_LOG_WARN, "same", b);
        assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        n_theirs = one_line(theirs, sizeof(theirs));
        /* {"ts":"2026-12-02T12:00:00.123Z", is 33 bytes; the rest must be identical */
        assert_int_equal(n_mine, n_theirs);
        assert_true(n_mine > 33);
        assert_memory_equal(mine + 33, theirs + 33, n_mine - 33);
        json_object_put(parse_line(mine, n_mine, "warn", "same"));
    }
    close(saved);
}

/* sworn_plog_open(-1) sends the lines to stderr again (here: stderr is our socket). */
static void test_log_stderr(void **state)
{
    char line[4096];
    size_t n;
    int saved = dup(STDERR_FILENO);
    json_object *o;

    (void)state;
    assert_true(saved >= 0);
    assert_int_equal(dup2(log_pair[0], STDERR_FILENO), STDERR_FILENO);
    sworn_plog_open(-1);
    sworn_plog(SWORN_PLOG_INFO, "to_stderr", NULL);
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    close(saved);
    sworn_plog_open(log_pair[0]);
    n = one_line(line, sizeof(line));
    o = parse_line(line, n, "info", "to_stderr");
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_counting),
        cmocka_unit_test(test_histograms),
        cmocka_unit_test(test_render_bounds),
        cmocka_unit_test(test_python_parser),
        cmocka_unit_test_setup_teardown(test_log_basic, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_log_levels, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_log_hostile, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_log_request, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_log_truncated, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_log_as_decisiond, log_setup, log_teardown),
        cmocka_unit_test_setup_teardown(test_log_stderr, log_setup, log_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
