/*
 * c_report_html.c -- the HTML report (c_report.h): one static page, its style inline, no script
 * and no link to anything, so it opens the same offline, years later. Every text that comes from
 * the deployment file, the record or a probe goes through put_esc.
 */
#include <stdio.h>

#include "c_registry.h"
#include "c_report.h"
#include "err.h"

/* &, <, >, " and ' as entities, other bytes outside printable ASCII as numeric references of
 * the byte (the page is ASCII; a byte is shown, never interpreted). */
static void put_esc(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        switch (*p) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            if (*p < 0x20 || *p >= 0x7f)
                fprintf(out, "&#%u;", (unsigned)*p);
            else
                fputc(*p, out);
        }
}

static void row(FILE *out, const char *k, const char *v)
{
    fprintf(out, "<tr><th>%s</th><td>", k);
    put_esc(out, v);
    fputs("</td></tr>\n", out);
}

static void point_row(FILE *out, const char *k, const struct c_point *p)
{
    char buf[400];

    if (p->known)
        snprintf(buf, sizeof(buf), "size %llu, root %s", (unsigned long long)p->size, p->root);
    else
        snprintf(buf, sizeof(buf), "unreadable: %s", p->error);
    row(out, k, buf);
}

static void tier_table(const struct c_run *run, FILE *out, enum c_tier t)
{
    size_t shown = 0;

    fprintf(out, "<h2>%s</h2>\n", c_tier_name(t));
    for (size_t i = 0; i < run->n; i++) {
        const struct c_probe *p = run->probes[i];
        const struct c_result *r = &run->results[i];
        if (p->tier != t)
            continue;
        if (shown++ == 0)
            fputs("<table class=\"probes\"><tr><th>probe</th><th>property</th><th>technique</th>"
                  "<th>expected</th><th>observed</th><th>result</th><th>evidence</th>"
                  "<th>time</th></tr>\n",
                  out);
        fputs("<tr><td>", out);
        put_esc(out, p->id);
        fputs("</td><td>", out);
        put_esc(out, p->property);
        fputs("</td><td>", out);
        put_esc(out, p->technique);
        fputs("</td><td>", out);
        put_esc(out, p->expected);
        fputs("</td><td>", out);
        put_esc(out, r->observed);
        fprintf(out, "</td><td class=\"%s\">%s</td><td><ul>", c_outcome_name(r->outcome),
                c_outcome_name(r->outcome));
        for (size_t k = 0; k < r->nevidence; k++) {
            fputs("<li>", out);
            put_esc(out, r->evidence[k]);
            fputs("</li>", out);
        }
        if (r->evidence_dropped > 0)
            fprintf(out, "<li>(%zu more items)</li>", r->evidence_dropped);
        fprintf(out, "</ul></td><td>%s, %llu ms</td></tr>\n", r->started,
                (unsigned long long)r->duration_ms);
    }
    if (shown == 0)
        fputs("<p>No probe of this tier ran in this run.</p>\n", out);
    else
        fputs("</table>\n", out);
}

int c_report_html(const struct c_run *run, FILE *out)
{
    char buf[512];

    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"us-ascii\">\n"
          "<title>sworn-conformance report</title>\n<style>\n"
          "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
          "th,td{border:1px solid #999;padding:.3em;vertical-align:top;text-align:left}"
          ".pass{background:#cfc}.fail{background:#f99}.error{background:#fc9}"
          ".skipped{background:#ddd}\n</style></head><body>\n<h1>sworn-conformance report</h1>\n",
          out);
    fputs("<p><strong>", out);
    put_esc(out, c_report_claim(run));
    fprintf(out,
            "</strong>: %u passed, %u failed, %u skipped, %u errors. A passing run means no "
            "failure was found under these probes, never that a property is proven.</p>\n",
            run->counts[C_PASS], run->counts[C_FAIL], run->counts[C_SKIPPED], run->counts[C_ERROR]);
    fputs("<table class=\"identity\">\n", out);
    row(out, "deployment file", run->dep->source);
    snprintf(buf, sizeof(buf), "%s (as given); uid %u, user %s (as seen)", run->dep->operator_name,
             (unsigned)run->uid, run->operator_user[0] != '\0' ? run->operator_user : "(none)");
    row(out, "run by", buf);
    snprintf(buf, sizeof(buf), "%s to %s (UTC)", run->started, run->ended);
    row(out, "when", buf);
    row(out, "log origin", run->origin);
    point_row(out, "checkpoint at the start", &run->cp_start);
    point_row(out, "checkpoint at the end", &run->cp_end);
    if (run->policy_digest[0] != '\0')
        snprintf(buf, sizeof(buf), "%s (PolicyLoaded at log index %llu)", run->policy_digest,
                 (unsigned long long)run->policy_index);
    else
        snprintf(buf, sizeof(buf), "(no PolicyLoaded entry found)");
    row(out, "policy digest", buf);
    row(out, "sworn version", run->sworn_version);
    snprintf(buf, sizeof(buf), "%s (%zu probes in the set, %zu run)", run->probe_set_digest,
             run->probe_set_count, run->n);
    row(out, "probe set", buf);
    fputs("</table>\n", out);
    for (enum c_tier t = C_T1; t <= C_T5; t++)
        tier_table(run, out, t);
    fputs("</body></html>\n", out);
    return ferror(out) ? sworn_err_set(SWORN_ERR_IO, "the HTML report could not be written") : 0;
}
