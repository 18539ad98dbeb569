/*
 * c_report_text.c -- the text report and the text listing (c_report.h).
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "c_registry.h"
#include "c_report.h"
#include "err.h"

const char *c_report_claim(const struct c_run *run)
{
    return c_run_clean(run) ? "no failure found under these probes"
                            : "FAILURES FOUND under these probes";
}

/* s with every byte outside printable ASCII (and the backslash) as \xNN. */
static void put_text(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        if (*p < 0x20 || *p >= 0x7f || *p == '\\')
            fprintf(out, "\\x%02x", *p);
        else
            fputc(*p, out);
}

static void put_point(FILE *out, const char *label, const struct c_point *p)
{
    fprintf(out, "%s", label);
    if (p->known)
        fprintf(out, "size %llu, root %s\n", (unsigned long long)p->size, p->root);
    else {
        fprintf(out, "unreadable: ");
        put_text(out, p->error);
        fputc('\n', out);
    }
}

int c_report_text(const struct c_run *run, FILE *out)
{
    fprintf(out, "sworn-conformance report\n");
    fprintf(out, "deployment file:   ");
    put_text(out, run->dep->source);
    fprintf(out, "\nrun by:            ");
    put_text(out, run->dep->operator_name);
    fprintf(out, " (as given); uid %u, user ", (unsigned)run->uid);
    put_text(out, run->operator_user[0] != '\0' ? run->operator_user : "(none)");
    fprintf(out, " (as seen)\nwhen:              %s to %s (UTC)\n", run->started, run->ended);
    fprintf(out, "log origin:        ");
    put_text(out, run->origin[0] != '\0' ? run->origin : "(unknown)");
    fputc('\n', out);
    put_point(out, "checkpoint, start: ", &run->cp_start);
    put_point(out, "checkpoint, end:   ", &run->cp_end);
    if (run->policy_digest[0] != '\0')
        fprintf(out, "policy digest:     %s (PolicyLoaded at log index %llu)\n", run->policy_digest,
                (unsigned long long)run->policy_index);
    else
        fprintf(out, "policy digest:     (no PolicyLoaded entry found)\n");
    if (run->have_startup) {
        fprintf(out, "measured start:    Startup entry at log index %llu\n",
                (unsigned long long)run->startup_index);
        for (size_t i = 0; i < run->nmeasured; i++) {
            fprintf(out, "  %-10s %s ", run->measured[i].role, run->measured[i].sha256);
            put_text(out, run->measured[i].path);
            fputc('\n', out);
        }
    } else {
        fprintf(out, "measured start:    (");
        put_text(out, run->startup_error);
        fprintf(out, ")\n");
    }
    fprintf(out, "sworn version:     ");
    put_text(out, run->sworn_version);
    fprintf(out, "\nprobe set:         %s (%zu probes, %zu run)\n\n", run->probe_set_digest,
            run->probe_set_count, run->n);
    for (size_t i = 0; i < run->n; i++) {
        const struct c_probe *p = run->probes[i];
        const struct c_result *r = &run->results[i];
        fprintf(out, "%-7s %s  %s (%s, %llu ms)\n", c_outcome_name(r->outcome), p->id, p->property,
                r->started, (unsigned long long)r->duration_ms);
        fprintf(out, "        expected: %s\n        observed: ", p->expected);
        put_text(out, r->observed);
        fputc('\n', out);
        for (size_t k = 0; k < r->nevidence; k++) {
            fprintf(out, "        - ");
            put_text(out, r->evidence[k]);
            fputc('\n', out);
        }
        if (r->evidence_dropped > 0)
            fprintf(out, "        - (%zu more items)\n", r->evidence_dropped);
    }
    fprintf(out, "\n%u passed, %u failed, %u skipped, %u errors: %s\n", run->counts[C_PASS],
            run->counts[C_FAIL], run->counts[C_SKIPPED], run->counts[C_ERROR], c_report_claim(run));
    if (run->recorded)
        fprintf(out,
                "recorded: the JSON report (sha256 %s) is the ConformanceReport entry at log "
                "index %llu, signed by decisiond%s\n",
                run->recorded_sha256, (unsigned long long)run->recorded_index,
                run->recorded_exported ? "; its bytes are beside the record" : "");
    return ferror(out) ? sworn_err_set(SWORN_ERR_IO, "the text report could not be written") : 0;
}

int c_report_list(FILE *out, int json)
{
    size_t n;
    const struct c_probe *all = c_registry_all(&n);
    char digest[65];

    if (c_registry_digest(digest) < 0)
        return sworn_err_set(SWORN_ERR_CRYPTO, "the probe set's digest");
    if (json) {
        json_object *o = json_object_new_object(), *a = json_object_new_array();
        json_object_object_add(o, "tool", json_object_new_string("sworn-conformance"));
        json_object_object_add(o, "probe_set_digest", json_object_new_string(digest));
        for (size_t i = 0; i < n; i++) {
            json_object *p = json_object_new_object();
            json_object_object_add(p, "id", json_object_new_string(all[i].id));
            json_object_object_add(p, "tier", json_object_new_string(c_tier_name(all[i].tier)));
            json_object_object_add(p, "property", json_object_new_string(all[i].property));
            json_object_object_add(p, "technique", json_object_new_string(all[i].technique));
            json_object_object_add(p, "expected", json_object_new_string(all[i].expected));
            json_object_array_add(a, p);
        }
        json_object_object_add(o, "probes", a);
        fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
    } else {
        fprintf(out, "probe set %s (%zu probes)\n", digest, n);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "\n%s  [%s, %s]\n  technique: %s\n  expected:  %s\n", all[i].id,
                    c_tier_name(all[i].tier), all[i].property, all[i].technique, all[i].expected);
    }
    return ferror(out) ? sworn_err_set(SWORN_ERR_IO, "the listing could not be written") : 0;
}
