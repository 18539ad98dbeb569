/*
 * sv_html.c -- see sv_html.h and docs/verifier.md section 10.
 */
#include "sv_html.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------ */
/* The page's buffer: appends never fail on the spot; a failed allocation sets oom and the
 * render returns -1 at the end, so the code that writes the page reads straight down. */

struct hbuf {
    char *p;
    size_t len, cap;
    int oom;
};

static int reserve(struct hbuf *b, size_t more)
{
    size_t cap;
    char *p;

    if (b->oom)
        return -1;
    if (more < b->cap - b->len)
        return 0;
    cap = b->cap == 0 ? 65536 : b->cap;
    while (more >= cap - b->len) {
        if (cap > ((size_t)1 << 40)) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void put(struct hbuf *b, const char *s)
{
    size_t n = strlen(s);

    if (reserve(b, n) != 0)
        return;
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

/* Formatted text of our own making (numbers, fixed words): never record bytes, which go
 * through esc. */
static void putf(struct hbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct hbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* ------------------------------------------------------------------------------------------ */
/* Escaping */

/* Append t to out at *at when it fits (out may be NULL: only count). */
static void emit(char *out, size_t cap, size_t *at, int *over, const char *t)
{
    size_t n = strlen(t);

    if (out != NULL && !*over) {
        if (n >= cap - *at)
            *over = 1;
        else
            memcpy(out + *at, t, n + 1);
    }
    *at += n;
}

size_t sv_html_escape(const char *s, size_t n, char *out, size_t cap)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t at = 0;
    int over = 0;

    if (out != NULL && cap == 0)
        return (size_t)-1;
    if (out != NULL)
        out[0] = '\0';
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t cp = 0;
        char t[64];

        k = sv_utf8_next(p + i, n - i, &cp);
        if (k == 0 || sv_unsafe_cp(cp)) {
            /* Not UTF-8, or a character that would hide, reorder or break the text: its bytes
             * as visible escapes, never the character itself. */
            size_t m = k == 0 ? 1 : k;

            emit(out, cap, &at, &over, "<span class=\"x\">");
            for (size_t j = 0; j < m; j++) {
                snprintf(t, sizeof(t), "\\x%02x", p[i + j]);
                emit(out, cap, &at, &over, t);
            }
            emit(out, cap, &at, &over, "</span>");
            k = m;
            continue;
        }
        switch (cp) {
        case '&':
            emit(out, cap, &at, &over, "&amp;");
            break;
        case '<':
            emit(out, cap, &at, &over, "&lt;");
            break;
        case '>':
            emit(out, cap, &at, &over, "&gt;");
            break;
        case '"':
            emit(out, cap, &at, &over, "&quot;");
            break;
        case '\'':
            emit(out, cap, &at, &over, "&#39;");
            break;
        case '\\':
            emit(out, cap, &at, &over, "\\\\");
            break;
        default:
            if (cp >= 0x80)
                snprintf(t, sizeof(t), "<span class=\"u\">&#x%X;</span>", (unsigned)cp);
            else
                snprintf(t, sizeof(t), "%c", (char)cp);
            emit(out, cap, &at, &over, t);
            break;
        }
    }
    if (over) {
        out[0] = '\0'; /* nothing usable: not a prefix that may end inside an entity */
        return (size_t)-1;
    }
    return at;
}

static void esc_n(struct hbuf *b, const char *s, size_t n)
{
    size_t need = sv_html_escape(s, n, NULL, 0);

    if (reserve(b, need) != 0)
        return;
    sv_html_escape(s, n, b->p + b->len, b->cap - b->len);
    b->len += need;
}

static void esc(struct hbuf *b, const char *s)
{
    esc_n(b, s, strlen(s));
}

/* ------------------------------------------------------------------------------------------ */
/* Pieces */

#define MAX_TIME_S 253402300799ull /* 9999-12-31T23:59:59Z: later times print as numbers */

/* A time for people, "2026-03-01 14:05 UTC", or "t=<ms> ms" when gmtime cannot say (a time
 * stamp is the record's and may be anything). */
static void fmt_time(uint64_t ms, char *out, size_t cap)
{
    time_t t;
    struct tm tm;

    if (ms / 1000 > MAX_TIME_S) {
        snprintf(out, cap, "t=%llu ms", (unsigned long long)ms);
        return;
    }
    t = (time_t)(ms / 1000);
    if (gmtime_r(&t, &tm) == NULL || strftime(out, cap, "%Y-%m-%d %H:%M UTC", &tm) == 0)
        snprintf(out, cap, "t=%llu ms", (unsigned long long)ms);
}

/* The first millisecond of hour h, saturating (an hour near the end of uint64_t's range, from a
 * time stamp the record made up, must not wrap to 1970). */
static uint64_t hour_ms(uint64_t h)
{
    return h > UINT64_MAX / SV_HOUR_MS ? UINT64_MAX : h * SV_HOUR_MS;
}

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "margin:0;color:#1d2430;background:#f5f6f8}"
    "main{max-width:1240px;margin:0 auto;padding:0 20px 40px}"
    "header{padding:18px 20px;color:#fff}header.pass{background:#1f6f3f}"
    "header.fail{background:#a32020}header.unreadable{background:#7a4b00}"
    "header h1{margin:0;font-size:22px}header p{margin:4px 0 0;opacity:.9}"
    "h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #c9ced6;padding-bottom:4px}"
    "table{border-collapse:collapse;background:#fff;width:100%;margin:4px 0}"
    "th,td{border:1px solid #dde1e7;padding:4px 8px;text-align:left;vertical-align:top;"
    "overflow-wrap:anywhere}"
    "th{background:#eef0f4;font-weight:600}td.n{text-align:right;font-variant-numeric:"
    "tabular-nums;white-space:nowrap}table.kv th{width:190px}"
    ".ok{color:#1f6f3f;font-weight:600}.bad{color:#a32020;font-weight:700}.skip{color:#6b7380}"
    "code,.mono{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:12.5px}"
    "span.x{background:#ffe3e3;color:#8a0000;border-radius:2px;padding:0 1px}"
    "span.u{background:#fff4c2;border-bottom:1px dotted #8a6d00}"
    "p.cut{color:#7a4b00;font-style:italic;margin:4px 0}"
    "svg{background:#fff;border:1px solid #dde1e7;width:100%;height:auto}"
    ".legend span{display:inline-block;margin-right:16px}"
    ".sw{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px}"
    "footer{color:#6b7380;font-size:12px;margin-top:30px}";

static void page_head(struct hbuf *b, const char *title, const char *cls, const char *heading,
                      const struct sv_html_meta *meta)
{
    put(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    /* No fetch of any kind, even of something the page would not mean as a resource; inline
     * style only; no script at all (there is none to allow). */
    put(b, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
           "style-src 'unsafe-inline'; img-src 'none'; script-src 'none'; form-action 'none'; "
           "base-uri 'none'\">\n");
    put(b, "<meta name=\"referrer\" content=\"no-referrer\">\n<title>");
    esc(b, title);
    put(b, "</title>\n<style>");
    put(b, css);
    putf(b, "</style></head>\n<body><header class=\"%s\"><h1>", cls);
    put(b, heading);
    put(b, "</h1><p>");
    if (meta != NULL && meta->generator != NULL) {
        put(b, "written by ");
        esc(b, meta->generator);
        put(b, ", offline, from the record's own bytes and the trust policy");
    } else {
        put(b, "written offline from the record's own bytes and the trust policy");
    }
    put(b, "</p></header>\n<main>\n");
}

static void page_tail(struct hbuf *b)
{
    put(b, "<footer>Every string from the record is shown escaped: a character outside ASCII as "
           "itself on a <span class=\"u\">yellow</span> background, a control, invisible or "
           "direction-changing character, or a byte that is not UTF-8, as <span class=\"x\">"
           "\\xNN</span>, and a backslash doubled. The page holds no script and loads nothing. "
           "docs/verifier.md section 10.</footer>\n</main></body></html>\n");
}

static void kv(struct hbuf *b, const char *k, const char *v_escaped_by_caller)
{
    putf(b, "<tr><th>%s</th><td>", k);
    put(b, v_escaped_by_caller);
    put(b, "</td></tr>\n");
}

static void kv_esc(struct hbuf *b, const char *k, const char *v)
{
    putf(b, "<tr><th>%s</th><td class=\"mono\">", k);
    esc(b, v);
    put(b, "</td></tr>\n");
}

static void kv_u64(struct hbuf *b, const char *k, uint64_t v)
{
    putf(b, "<tr><th>%s</th><td>%llu</td></tr>\n", k, (unsigned long long)v);
}

static const char *status_word(enum sv_status s)
{
    return s == SV_PASS   ? "<span class=\"ok\">pass</span>"
           : s == SV_FAIL ? "<span class=\"bad\">FAILED</span>"
                          : "<span class=\"skip\">not checked</span>";
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ------------------------------------------------------------------------------------------ */
/* Sections */

static void section_identity(struct hbuf *b, const struct sv_report *rep, const struct sv_stats *st,
                             const struct sv_html_meta *meta)
{
    char root[64], t0[64], t1[64];

    put(b, "<h2 id=\"record\">Record</h2>\n<table class=\"kv\">\n");
    kv_esc(b, "record", rep->record);
    kv_esc(b, "origin", rep->origin);
    if (meta != NULL && meta->policy != NULL)
        kv_esc(b, "trust policy", meta->policy);
    if (rep->unreadable) {
        kv_esc(b, "unreadable", rep->unreadable_why);
        put(b, "</table>\n");
        return;
    }
    sv_b64_encode(rep->root, SV_HASH, root, sizeof(root));
    kv_u64(b, "tree size", rep->size);
    kv_esc(b, "root (SHA-256, base64)", root);
    kv_u64(b, "checkpoints verified", rep->checkpoints);
    if (rep->state_size > 0 || rep->state_updated)
        putf(b, "<tr><th>state</th><td>previously accepted size %llu%s</td></tr>\n",
             (unsigned long long)rep->state_size,
             rep->state_updated ? "; updated to this record's newest checkpoint" : "");
    if (st != NULL && st->first_ms != 0) {
        fmt_time(st->first_ms, t0, sizeof(t0));
        fmt_time(st->last_ms, t1, sizeof(t1));
        putf(b, "<tr><th>time stamps</th><td>%s to %s (the record's own clock)</td></tr>\n", t0,
             t1);
    }
    if (st != NULL)
        putf(b,
             "<tr><th>decisions</th><td><span id=\"n-allow\">%llu</span> allow, "
             "<span id=\"n-deny\">%llu</span> deny, <span id=\"n-escalate\">%llu</span> "
             "escalate</td></tr>\n",
             (unsigned long long)st->decisions[SV_ALLOW],
             (unsigned long long)st->decisions[SV_DENY],
             (unsigned long long)st->decisions[SV_ESCALATE]);
    if (rep->development)
        kv(b, "development",
           "<span class=\"bad\">a Startup entry says development "
           "(hardening.development): not Accountable</span>");
    if (rep->refused > 0 || rep->refusal_summaries > 0)
        putf(b,
             "<tr><th>refusals</th><td>%llu recorded; %llu more dropped by decisiond's quotas, "
             "counted in %llu summaries</td></tr>\n",
             (unsigned long long)rep->refused, (unsigned long long)rep->refusals_dropped,
             (unsigned long long)rep->refusal_summaries);
    if (rep->clock_behind > 0)
        putf(b,
             "<tr><th>clock</th><td>%llu time mark(s) show decisiond's clock behind the record"
             "</td></tr>\n",
             (unsigned long long)rep->clock_behind);
    if (rep->witness_alarms > 0)
        putf(b,
             "<tr><th>witness alarms</th><td class=\"bad\">%llu consistency alarm(s): a witness "
             "holds a tree of this origin that the log does not extend</td></tr>\n",
             (unsigned long long)rep->witness_alarms);
    if (rep->below_quorum > 0)
        kv_u64(b, "older checkpoints below the witness quorum", rep->below_quorum);
    if (rep->reports > 0)
        putf(b,
             "<tr><th>conformance reports</th><td>%llu (listed in the text and JSON reports)"
             "</td></tr>\n",
             (unsigned long long)rep->reports);
    put(b, "</table>\n");
}

static void section_checks(struct hbuf *b, const struct sv_report *rep)
{
    put(b, "<h2 id=\"checks\">Checks</h2>\n<table>\n<tr><th>check</th><th>result</th>"
           "<th>checked</th><th>failed</th><th>first failure</th><th>note</th></tr>\n");
    for (int i = 0; i < SV_CHECK_COUNT; i++) {
        const struct sv_check *c = &rep->checks[i];

        putf(b,
             "<tr><td class=\"mono\">%s</td><td>%s</td><td class=\"n\">%llu</td>"
             "<td class=\"n\">%llu</td><td>",
             sv_check_name((enum sv_check_id)i), status_word(c->status),
             (unsigned long long)c->count, (unsigned long long)c->failures);
        if (c->status == SV_FAIL) {
            put(b, "<span class=\"mono\">");
            esc(b, c->item);
            put(b, "</span>: ");
            esc(b, c->why);
            put(b, " (<code>");
            esc(b, c->code);
            put(b, "</code>)");
        }
        put(b, "</td><td>");
        esc(b, c->note);
        put(b, "</td></tr>\n");
    }
    put(b, "</table>\n");
}

/* The width of a bar in hours: one hour while the span fits SV_HTML_BARS bars, else the
 * smallest of a few round steps that fits, else whatever fits (a span of centuries is no
 * honest record, but the page must still be drawn). */
static uint64_t bar_hours(uint64_t span)
{
    static const uint64_t steps[] = {1, 2, 3, 4, 6, 12, 24, 48, 72, 168, 336, 720, 2160, 8760};

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (span / steps[i] + (span % steps[i] != 0) <= SV_HTML_BARS)
            return steps[i];
    return span / SV_HTML_BARS + 1;
}

struct bar {
    uint64_t effect[SV_EFFECTS];
    uint64_t mark[SV_MARKS];
};

static const char *const effect_color[SV_EFFECTS] = {"#2e8b57", "#c62828", "#f0a500"};
static const char *const effect_name[SV_EFFECTS] = {"allow", "deny", "escalate"};
static const char *const mark_name[SV_MARKS] = {"checkpoint", "quote", "key event", "policy load",
                                                "start"};
static const char *const mark_color[SV_MARKS] = {"#2b5fb4", "#7b3fb0", "#d2691e", "#111111",
                                                 "#008b8b"};

/* One marker glyph of kind k centred at x on its lane y. */
static void glyph(struct hbuf *b, int k, double x, double y)
{
    switch (k) {
    case SV_MARK_CHECKPOINT:
        putf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"10\" fill=\"%s\"/>", x - 1.5,
             y - 5, mark_color[k]);
        break;
    case SV_MARK_QUOTE:
        putf(b, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>", x,
             y - 6, x + 5, y, x, y + 6, x - 5, y, mark_color[k]);
        break;
    case SV_MARK_KEY_EVENT:
        putf(b, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>", x, y - 6, x + 6,
             y + 5, x - 6, y + 5, mark_color[k]);
        break;
    case SV_MARK_POLICY:
        putf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>", x - 5,
             y - 5, mark_color[k]);
        break;
    default:
        putf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>", x, y, mark_color[k]);
        break;
    }
}

#define SVG_W 1200.0
#define SVG_LEFT 64.0
#define SVG_RIGHT 16.0
#define SVG_PLOT_TOP 16.0
#define SVG_PLOT_H 220.0
#define SVG_LANE_H 20.0

static void section_timeline(struct hbuf *b, const struct sv_stats *st)
{
    uint64_t first, span, width, nbars, maxv = 0;
    struct bar *bars;
    char t0[64], t1[64], tm[64];
    double plot_w = SVG_W - SVG_LEFT - SVG_RIGHT, bw, lanes_top, h;

    put(b, "<h2 id=\"timeline\">Decisions over time</h2>\n");
    if (st == NULL || st->nhours == 0) {
        put(b, "<p>No entry of this record carries a time stamp the verifier could read "
               "(opaque entries, or none passed the entries check): no timeline.</p>\n");
        return;
    }
    first = st->hours[0].hour;
    span = st->hours[st->nhours - 1].hour - first + 1;
    width = bar_hours(span);
    nbars = span / width + (span % width != 0);
    bars = calloc((size_t)nbars, sizeof(*bars));
    if (bars == NULL) {
        b->oom = 1;
        return;
    }
    for (size_t i = 0; i < st->nhours; i++) {
        struct bar *r = &bars[(st->hours[i].hour - first) / width];
        uint64_t sum = 0;

        for (int e = 0; e < SV_EFFECTS; e++)
            r->effect[e] = add_sat(r->effect[e], st->hours[i].effect[e]);
        for (int k = 0; k < SV_MARKS; k++)
            r->mark[k] = add_sat(r->mark[k], st->hours[i].mark[k]);
        for (int e = 0; e < SV_EFFECTS; e++)
            sum = add_sat(sum, r->effect[e]);
        if (sum > maxv)
            maxv = sum;
    }
    fmt_time(hour_ms(first), t0, sizeof(t0));
    fmt_time(hour_ms(first + nbars * width), t1, sizeof(t1));
    putf(b,
         "<p>Decisions per %llu hour%s from %s to %s (%llu bar%s; the time stamps are the "
         "record's own). The markers below the bars show the checkpoints, quotes, key events, "
         "policy loads and starts of each bar's hours.</p>\n",
         (unsigned long long)width, width == 1 ? "" : "s", t0, t1, (unsigned long long)nbars,
         nbars == 1 ? "" : "s");
    if (width > 1)
        putf(b,
             "<p class=\"cut\">The record spans %llu hours, more than %d bars: each bar "
             "holds %llu hours.</p>\n",
             (unsigned long long)span, SV_HTML_BARS, (unsigned long long)width);
    if (st->hours_dropped > 0)
        putf(b,
             "<p class=\"cut\">%llu decision(s) and marker(s) fall in hours beyond the "
             "first %u distinct hours the verifier keeps and are not drawn (they are "
             "counted in the totals).</p>\n",
             (unsigned long long)st->hours_dropped, SV_STATS_HOURS_MAX);
    lanes_top = SVG_PLOT_TOP + SVG_PLOT_H + 26;
    h = lanes_top + SV_MARKS * SVG_LANE_H + 8;
    bw = plot_w / (double)nbars;
    /* Inline SVG in HTML needs no namespace attribute (and the page names no URL at all). */
    putf(b,
         "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
         "aria-label=\"decisions per bar and markers\">\n",
         SVG_W, h);
    /* Axes: the largest bar's count, the first, middle and last times. */
    putf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>", SVG_LEFT,
         SVG_PLOT_TOP + SVG_PLOT_H, SVG_W - SVG_RIGHT, SVG_PLOT_TOP + SVG_PLOT_H);
    putf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%llu</text>",
         SVG_LEFT - 6, SVG_PLOT_TOP + 8, (unsigned long long)maxv);
    putf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">0</text>",
         SVG_LEFT - 6, SVG_PLOT_TOP + SVG_PLOT_H);
    fmt_time(hour_ms(first + (nbars / 2) * width), tm, sizeof(tm));
    putf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>", SVG_LEFT,
         SVG_PLOT_TOP + SVG_PLOT_H + 16, t0);
    putf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>",
         SVG_LEFT + plot_w / 2, SVG_PLOT_TOP + SVG_PLOT_H + 16, tm);
    putf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
         SVG_W - SVG_RIGHT, SVG_PLOT_TOP + SVG_PLOT_H + 16, t1);
    for (int k = 0; k < SV_MARKS; k++)
        putf(b,
             "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\" "
             "fill=\"#555\">%s</text>",
             SVG_LEFT - 6, lanes_top + k * SVG_LANE_H + 4, mark_name[k]);
    put(b, "\n");
    for (uint64_t i = 0; i < nbars; i++) {
        const struct bar *r = &bars[i];
        double x = SVG_LEFT + (double)i * bw, y = SVG_PLOT_TOP + SVG_PLOT_H;
        double gap = bw > 4 ? 1 : 0;
        uint64_t sum = add_sat(add_sat(r->effect[0], r->effect[1]), r->effect[2]);

        if (sum > 0) {
            fmt_time(hour_ms(first + i * width), tm, sizeof(tm));
            putf(b, "<g><title>%s: %llu allow, %llu deny, %llu escalate</title>", tm,
                 (unsigned long long)r->effect[0], (unsigned long long)r->effect[1],
                 (unsigned long long)r->effect[2]);
            for (int e = 0; e < SV_EFFECTS; e++) {
                double hh = maxv == 0 ? 0 : SVG_PLOT_H * (double)r->effect[e] / (double)maxv;

                if (r->effect[e] == 0)
                    continue;
                if (hh < 1)
                    hh = 1; /* one decision in a busy record still shows */
                y -= hh;
                putf(b,
                     "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                     "fill=\"%s\"/>",
                     x + gap / 2, y, bw - gap, hh, effect_color[e]);
            }
            put(b, "</g>\n");
        }
        for (int k = 0; k < SV_MARKS; k++)
            if (r->mark[k] > 0) {
                putf(b, "<g><title>%llu %s%s</title>", (unsigned long long)r->mark[k], mark_name[k],
                     r->mark[k] == 1 ? "" : "(s)");
                glyph(b, k, x + bw / 2, lanes_top + k * SVG_LANE_H);
                put(b, "</g>");
            }
    }
    put(b, "\n</svg>\n<p class=\"legend\">");
    for (int e = 0; e < SV_EFFECTS; e++)
        putf(b, "<span><i class=\"sw\" style=\"background:%s\"></i>%s %llu</span>", effect_color[e],
             effect_name[e], (unsigned long long)st->decisions[e]);
    for (int k = 0; k < SV_MARKS; k++)
        putf(b, "<span><i class=\"sw\" style=\"background:%s\"></i>%ss %llu</span>", mark_color[k],
             mark_name[k], (unsigned long long)st->marks[k]);
    put(b, "</p>\n");
    if (st->untimed > 0)
        putf(b,
             "<p class=\"cut\">%llu marker(s) without a time (a checkpoint over entries "
             "without time stamps) are counted, not drawn.</p>\n",
             (unsigned long long)st->untimed);
    free(bars);
}

static void section_events(struct hbuf *b, const struct sv_stats *st)
{
    char t[64];

    if (st == NULL)
        return;
    put(b, "<h2 id=\"events\">Key events, policy loads and starts</h2>\n");
    if (st->nevents == 0) {
        put(b, "<p>None in this record.</p>\n");
        return;
    }
    put(b, "<table>\n<tr><th>entry</th><th>time</th><th>event</th></tr>\n");
    for (size_t i = 0; i < st->nevents; i++) {
        const struct sv_event *e = &st->events[i];

        if (e->time_ms != 0)
            fmt_time(e->time_ms, t, sizeof(t));
        else
            snprintf(t, sizeof(t), "-");
        putf(b, "<tr><td class=\"n\">%llu</td><td>%s</td><td>%s%s</td></tr>\n",
             (unsigned long long)e->index, t, mark_name[e->kind],
             e->kind == SV_MARK_POLICY && !e->ok ? " (refused: the load failed)" : "");
    }
    put(b, "</table>\n");
    if (st->events_total > st->nevents)
        putf(b, "<p class=\"cut\">%llu more not listed (the first %zu are).</p>\n",
             (unsigned long long)(st->events_total - st->nevents), st->nevents);
}

static void section_names(struct hbuf *b, const struct sv_names *t, const char *id,
                          const char *title, const char *what)
{
    const struct sv_name_count **v;
    size_t n = 0, shown;

    putf(b, "<h2 id=\"%s\">%s</h2>\n", id, title);
    if (t->n == 0 && t->other_names == 0) {
        put(b, "<p>No decision in this record.</p>\n");
        return;
    }
    v = sv_names_sorted(t, &n);
    if (v == NULL && t->n > 0) {
        b->oom = 1;
        return;
    }
    shown = n > SV_HTML_NAME_ROWS ? SV_HTML_NAME_ROWS : n;
    putf(b,
         "<table>\n<tr><th>%s</th><th>allow</th><th>deny</th><th>escalate</th>"
         "<th>total</th></tr>\n",
         what);
    for (size_t i = 0; i < shown; i++) {
        const struct sv_name_count *c = v[i];

        put(b, "<tr><td class=\"mono\">");
        if (c->name[0] == '\0')
            put(b, "<i>(none: a request refused without a target)</i>");
        esc(b, c->name);
        if (c->cut)
            putf(b, " <i>(cut: longer than %d bytes)</i>", SV_LABEL_MAX);
        putf(b,
             "</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td>"
             "<td class=\"n\">%llu</td></tr>\n",
             (unsigned long long)c->effect[0], (unsigned long long)c->effect[1],
             (unsigned long long)c->effect[2],
             (unsigned long long)add_sat(add_sat(c->effect[0], c->effect[1]), c->effect[2]));
    }
    if (t->other_names > 0)
        putf(b,
             "<tr><td><i>others: %llu decision(s) of names beyond the first %u distinct "
             "ones</i></td><td class=\"n\">%llu</td><td class=\"n\">%llu</td>"
             "<td class=\"n\">%llu</td><td class=\"n\">%llu</td></tr>\n",
             (unsigned long long)t->other_names, SV_STATS_NAMES_MAX,
             (unsigned long long)t->other[0], (unsigned long long)t->other[1],
             (unsigned long long)t->other[2],
             (unsigned long long)add_sat(add_sat(t->other[0], t->other[1]), t->other[2]));
    put(b, "</table>\n");
    if (n > shown)
        putf(b,
             "<p class=\"cut\">%zu more %ss not shown (the %d with the most decisions "
             "are).</p>\n",
             n - shown, what, SV_HTML_NAME_ROWS);
    free(v);
}

static void section_failures(struct hbuf *b, const struct sv_report *rep, const struct sv_stats *st)
{
    uint64_t all = 0;

    for (int i = 0; i < SV_CHECK_COUNT; i++)
        all = add_sat(all, rep->checks[i].failures);
    put(b, "<h2 id=\"failures\">Failures</h2>\n");
    if (all == 0 && (st == NULL || st->failures_total == 0)) {
        put(b, "<p>None: every check that ran passed.</p>\n");
        return;
    }
    if (st == NULL || st->nfailures == 0) {
        putf(b, "<p>%llu failure(s); the first of each check is in the table of checks.</p>\n",
             (unsigned long long)all);
        return;
    }
    putf(b,
         "<p>%llu failure(s), each with the entry, file or checkpoint that caused it, in the "
         "order they were found.</p>\n",
         (unsigned long long)st->failures_total);
    put(b, "<table>\n<tr><th>#</th><th>check</th><th>where</th><th>reason</th>"
           "<th>message</th></tr>\n");
    for (size_t i = 0; i < st->nfailures; i++) {
        const struct sv_failure *f = &st->failures[i];

        putf(b, "<tr><td class=\"n\">%zu</td><td class=\"mono\">%s</td><td class=\"mono\">", i + 1,
             sv_check_name((enum sv_check_id)f->check));
        esc(b, f->item);
        put(b, "</td><td><code>");
        esc(b, f->code);
        put(b, "</code></td><td>");
        esc(b, f->why);
        put(b, "</td></tr>\n");
    }
    put(b, "</table>\n");
    if (st->failures_total > st->nfailures)
        putf(b,
             "<p class=\"cut\">%llu more failure(s) not listed (the first %zu are; the "
             "counts per check are in the table of checks).</p>\n",
             (unsigned long long)(st->failures_total - st->nfailures), st->nfailures);
}

/* ------------------------------------------------------------------------------------------ */

int sv_html_render_report(const struct sv_report *rep, const struct sv_stats *st,
                          const struct sv_html_meta *meta, char **page, size_t *len)
{
    struct hbuf b = {0};
    const char *cls = rep->unreadable ? "unreadable" : sv_report_failed(rep) ? "fail" : "pass";
    size_t tl = strlen("sworn-verify: ") + strlen(rep->origin) + 1;
    char *title = malloc(tl);

    *page = NULL;
    *len = 0;
    if (title == NULL)
        return -1;
    snprintf(title, tl, "sworn-verify: %s", rep->origin);
    page_head(&b, title, cls,
              rep->unreadable         ? "sworn record: UNREADABLE"
              : sv_report_failed(rep) ? "sworn record: VERIFICATION FAILED"
                                      : "sworn record: all checks passed",
              meta);
    free(title);
    section_identity(&b, rep, st, meta);
    if (!rep->unreadable) {
        section_checks(&b, rep);
        section_timeline(&b, st);
        section_events(&b, st);
        if (st != NULL) {
            section_names(&b, &st->principals, "principals", "Principals", "principal");
            section_names(&b, &st->hosts, "destinations", "Destinations", "host");
        }
        section_failures(&b, rep, st);
        if (st != NULL && st->oom > 0)
            putf(&b,
                 "<p class=\"cut\">Memory ran out %llu time(s) while the tables were "
                 "gathered: they are incomplete (the checks are not).</p>\n",
                 (unsigned long long)st->oom);
    }
    page_tail(&b);
    if (b.oom) {
        free(b.p);
        return -1;
    }
    *page = b.p;
    *len = b.len;
    return 0;
}

int sv_html_write_report(const char *path, const struct sv_report *rep, const struct sv_stats *st,
                         const struct sv_html_meta *meta, char *why)
{
    char *page;
    size_t len;
    int rc;

    if (sv_html_render_report(rep, st, meta, &page, &len) != 0)
        return sv_fail(why, "%s: out of memory rendering the page", path);
    rc = sv_write_file_atomic_mode(path, page, len, 0644, why);
    free(page);
    return rc;
}

int sv_html_write_compare(const char *path, const char *origin, const char *record_a,
                          const char *record_b, const char *result, const char *message,
                          const char *fork_proof, const struct sv_html_meta *meta, char *why)
{
    struct hbuf b = {0};
    int rc, ok = strcmp(result, "consistent") == 0;

    page_head(&b, "sworn-verify compare", ok ? "pass" : "fail",
              ok                            ? "sworn records: consistent"
              : strcmp(result, "fork") == 0 ? "sworn records: FORK"
              : strcmp(result, "fail") == 0 ? "sworn records: VERIFICATION FAILED"
                                            : "sworn records: UNREADABLE",
              meta);
    put(&b, "<h2 id=\"compare\">Compare</h2>\n<table class=\"kv\">\n");
    kv_esc(&b, "origin", origin);
    if (meta != NULL && meta->policy != NULL)
        kv_esc(&b, "trust policy", meta->policy);
    kv_esc(&b, "record A", record_a);
    kv_esc(&b, "record B", record_b);
    kv_esc(&b, "result", result);
    kv_esc(&b, "message", message);
    if (fork_proof != NULL)
        kv_esc(&b, "fork proof", fork_proof);
    put(&b, "</table>\n<p>Consistent: the smaller record's tree is a prefix of the larger's, "
            "both signed by the log. A fork: two signed checkpoints no append-only log can both "
            "have signed (docs/verifier.md section 6).</p>\n");
    page_tail(&b);
    if (b.oom) {
        free(b.p);
        return sv_fail(why, "%s: out of memory rendering the page", path);
    }
    rc = sv_write_file_atomic_mode(path, b.p, b.len, 0644, why);
    free(b.p);
    return rc;
}
