/*
 * c_verify.c -- sworn-verify, run and read (c_verify.h).
 */
#include "c_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "c_exec.h"
#include "err.h"

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;

    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static void read_checks(json_object *rep, struct c_verify *v)
{
    json_object *checks;

    if (!json_object_object_get_ex(rep, "checks", &checks) ||
        !json_object_is_type(checks, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(checks); i++) {
        json_object *c = json_object_array_get_idx(checks, i), *ff;
        const char *name = str_of(c, "name"), *res = str_of(c, "result");
        json_object *n;

        v->checks++;
        if (v->neach < C_VERIFY_CHECKS_MAX) {
            struct c_verify_check *e = &v->each[v->neach++];

            snprintf(e->name, sizeof(e->name), "%s", name != NULL ? name : "?");
            snprintf(e->result, sizeof(e->result), "%s", res != NULL ? res : "?");
            e->count =
                json_object_object_get_ex(c, "count", &n) ? (uint64_t)json_object_get_int64(n) : 0;
            e->failures = json_object_object_get_ex(c, "failures", &n)
                              ? (uint64_t)json_object_get_int64(n)
                              : 0;
        }
        if (res != NULL && strcmp(res, "pass") == 0)
            v->passed++;
        if (res == NULL || strcmp(res, "fail") != 0 || v->nfailed == C_VERIFY_FAILED_MAX)
            continue;
        ff = NULL;
        (void)json_object_object_get_ex(c, "first_failure", &ff);
        snprintf(v->failed[v->nfailed++], sizeof(v->failed[0]), "%s: %s (%s)",
                 name != NULL ? name : "?",
                 ff != NULL && str_of(ff, "reason") ? str_of(ff, "reason") : "?",
                 ff != NULL && str_of(ff, "item") ? str_of(ff, "item") : "?");
    }
}

int c_verify_run(const struct c_deploy *dep, const char *policy, const char *record,
                 const char *state, struct c_verify *v)
{
    char *argv[12], *out = NULL;
    size_t n = 0, len = 0;
    json_object *rep, *o;
    const char *s;

    memset(v, 0, sizeof(*v));
    argv[n++] = (char *)dep->verify_bin;
    argv[n++] = "verify";
    argv[n++] = "--policy";
    argv[n++] = (char *)policy;
    if (state != NULL) {
        argv[n++] = "--state";
        argv[n++] = (char *)state;
    }
    argv[n++] = "--json";
    argv[n++] = "--no-progress";
    argv[n++] = (char *)record;
    argv[n] = NULL;
    if (c_exec_capture(argv, C_VERIFY_REPORT_MAX, &out, &len, &v->status) < 0)
        return -1;
    rep = json_tokener_parse(out);
    free(out);
    if (rep == NULL || !json_object_is_type(rep, json_type_object) ||
        (s = str_of(rep, "result")) == NULL) {
        json_object_put(rep);
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "sworn-verify (exit %d) wrote no JSON report with a result",
                             v->status);
    }
    snprintf(v->result, sizeof(v->result), "%s", s);
    if ((s = str_of(rep, "error")) != NULL)
        snprintf(v->error, sizeof(v->error), "%s", s);
    if ((s = str_of(rep, "root")) != NULL)
        snprintf(v->root, sizeof(v->root), "%s", s);
    if (json_object_object_get_ex(rep, "tree_size", &o))
        v->tree_size = (uint64_t)json_object_get_int64(o);
    if (json_object_object_get_ex(rep, "development", &o))
        v->development = json_object_get_boolean(o);
    read_checks(rep, v);
    json_object_put(rep);
    return 0;
}

int c_verify_failed(const struct c_verify *v, const char *name, const char *reason)
{
    char want[256];

    snprintf(want, sizeof(want), "%s: %s ", name, reason);
    for (unsigned i = 0; i < v->nfailed; i++)
        if (strncmp(v->failed[i], want, strlen(want)) == 0)
            return 1;
    return 0;
}
