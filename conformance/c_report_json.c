/*
 * c_report_json.c -- the JSON report (c_report.h; the fields are listed in docs/conformance.md).
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "c_registry.h"
#include "c_report.h"
#include "err.h"

static json_object *point(const struct c_point *p)
{
    json_object *o = json_object_new_object();

    if (p->known) {
        json_object_object_add(o, "size", json_object_new_int64((int64_t)p->size));
        json_object_object_add(o, "root", json_object_new_string(p->root));
    } else {
        json_object_object_add(o, "error", json_object_new_string(p->error));
    }
    return o;
}

static json_object *probe(const struct c_probe *p, const struct c_result *r)
{
    json_object *o = json_object_new_object(), *ev = json_object_new_array();

    json_object_object_add(o, "id", json_object_new_string(p->id));
    json_object_object_add(o, "tier", json_object_new_string(c_tier_name(p->tier)));
    json_object_object_add(o, "property", json_object_new_string(p->property));
    json_object_object_add(o, "technique", json_object_new_string(p->technique));
    json_object_object_add(o, "expected", json_object_new_string(p->expected));
    json_object_object_add(o, "observed", json_object_new_string(r->observed));
    json_object_object_add(o, "result", json_object_new_string(c_outcome_name(r->outcome)));
    for (size_t k = 0; k < r->nevidence; k++)
        json_object_array_add(ev, json_object_new_string(r->evidence[k]));
    json_object_object_add(o, "evidence", ev);
    json_object_object_add(o, "evidence_dropped",
                           json_object_new_int64((int64_t)r->evidence_dropped));
    json_object_object_add(o, "started", json_object_new_string(r->started));
    json_object_object_add(o, "duration_ms", json_object_new_int64((int64_t)r->duration_ms));
    return o;
}

/* {index, files [{role, path, sha256}]} of the measured start, or {error}. */
static json_object *measured(const struct c_run *run)
{
    json_object *o = json_object_new_object(), *files;

    if (!run->have_startup) {
        json_object_object_add(o, "error", json_object_new_string(run->startup_error));
        return o;
    }
    files = json_object_new_array();
    for (size_t i = 0; i < run->nmeasured; i++) {
        json_object *f = json_object_new_object();

        json_object_object_add(f, "role", json_object_new_string(run->measured[i].role));
        json_object_object_add(f, "path", json_object_new_string(run->measured[i].path));
        json_object_object_add(f, "sha256", json_object_new_string(run->measured[i].sha256));
        json_object_array_add(files, f);
    }
    json_object_object_add(o, "index", json_object_new_int64((int64_t)run->startup_index));
    json_object_object_add(o, "files", files);
    return o;
}

static json_object *selection(const struct c_run *run)
{
    json_object *o = json_object_new_object(), *only = json_object_new_array();

    json_object_object_add(o, "tier", json_object_new_string(c_tier_name(run->max_tier)));
    for (size_t i = 0; i < run->nonly; i++)
        json_object_array_add(only, json_object_new_string(run->only[i]));
    json_object_object_add(o, "only", only);
    return o;
}

char *c_report_json(const struct c_run *run)
{
    json_object *o = json_object_new_object(), *who = json_object_new_object(),
                *dep = json_object_new_object(), *set = json_object_new_object(),
                *sum = json_object_new_object(), *probes = json_object_new_array();
    char *s;

    json_object_object_add(o, "tool", json_object_new_string("sworn-conformance"));
    json_object_object_add(o, "report_version", json_object_new_int(C_REPORT_VERSION));
    json_object_object_add(o, "claim", json_object_new_string(c_report_claim(run)));
    json_object_object_add(o, "result", json_object_new_string(c_run_clean(run) ? "pass" : "fail"));
    json_object_object_add(who, "name", json_object_new_string(run->dep->operator_name));
    json_object_object_add(who, "uid", json_object_new_int64((int64_t)run->uid));
    json_object_object_add(who, "user", json_object_new_string(run->operator_user));
    json_object_object_add(o, "operator", who);
    json_object_object_add(o, "started", json_object_new_string(run->started));
    json_object_object_add(o, "ended", json_object_new_string(run->ended));
    json_object_object_add(dep, "file", json_object_new_string(run->dep->source));
    json_object_object_add(dep, "record", json_object_new_string(run->dep->record));
    json_object_object_add(dep, "origin", json_object_new_string(run->origin));
    json_object_object_add(dep, "checkpoint_start", point(&run->cp_start));
    json_object_object_add(dep, "checkpoint_end", point(&run->cp_end));
    json_object_object_add(
        dep, "policy_digest",
        run->policy_digest[0] != '\0' ? json_object_new_string(run->policy_digest) : NULL);
    if (run->policy_digest[0] != '\0')
        json_object_object_add(dep, "policy_index",
                               json_object_new_int64((int64_t)run->policy_index));
    json_object_object_add(dep, "measured_start", measured(run));
    json_object_object_add(dep, "sworn_version", json_object_new_string(run->sworn_version));
    json_object_object_add(o, "deployment", dep);
    json_object_object_add(o, "selection", selection(run));
    json_object_object_add(set, "digest", json_object_new_string(run->probe_set_digest));
    json_object_object_add(set, "probes", json_object_new_int64((int64_t)run->probe_set_count));
    json_object_object_add(o, "probe_set", set);
    json_object_object_add(sum, "pass", json_object_new_int((int)run->counts[C_PASS]));
    json_object_object_add(sum, "fail", json_object_new_int((int)run->counts[C_FAIL]));
    json_object_object_add(sum, "skipped", json_object_new_int((int)run->counts[C_SKIPPED]));
    json_object_object_add(sum, "error", json_object_new_int((int)run->counts[C_ERROR]));
    json_object_object_add(o, "summary", sum);
    for (size_t i = 0; i < run->n; i++)
        json_object_array_add(probes, probe(run->probes[i], &run->results[i]));
    json_object_object_add(o, "probes", probes);
    s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    if (s == NULL)
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    return s;
}
