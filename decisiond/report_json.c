/*
 * report_json.c -- a sworn-conformance JSON report read into a ConformanceSummary (contract in
 * report_json.h).
 */
#include "report_json.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/sha.h>

#include "civil.h"
#include "encoding.h"
#include "err.h"

#define DEPTH 8
#define TOP_KEYS 12
#define CLAIM_PASS "no failure found under these probes"
#define CLAIM_FAIL "FAILURES FOUND under these probes"

/* Member key of o, of type t. */
static int member(json_object *o, const char *key, json_type t, json_object **out)
{
    if (!json_object_object_get_ex(o, key, out) || !json_object_is_type(*out, t))
        return sworn_err_set(SWORN_ERR_FORMAT, "report: \"%s\" is missing or not of its type", key);
    return 0;
}

/* A string member of min..max bytes without NUL. OUT: *s (owned by o), *n. */
static int string_member(json_object *o, const char *key, size_t min, size_t max, const char **s,
                         size_t *n)
{
    json_object *v;

    if (member(o, key, json_type_string, &v) < 0)
        return -1;
    *s = json_object_get_string(v);
    *n = (size_t)json_object_get_string_len(v);
    if (*n < min || *n > max || strlen(*s) != *n)
        return sworn_err_set(SWORN_ERR_RANGE, "report: \"%s\" is not %zu..%zu bytes without NUL",
                             key, min, max);
    return 0;
}

/* An integer member of 0..max. */
static int uint_member(json_object *o, const char *key, uint64_t max, uint64_t *v)
{
    json_object *j;
    int64_t x;

    if (member(o, key, json_type_int, &j) < 0)
        return -1;
    x = json_object_get_int64(j);
    if (x < 0 || (uint64_t)x > max)
        return sworn_err_set(SWORN_ERR_RANGE, "report: \"%s\" is not 0..%llu", key,
                             (unsigned long long)max);
    *v = (uint64_t)x;
    return 0;
}

/* Copy a string member of min..max bytes into out (capacity max + 1). */
static int copy_member(json_object *o, const char *key, size_t min, size_t max, char *out)
{
    const char *s;
    size_t n;

    if (string_member(o, key, min, max, &s, &n) < 0)
        return -1;
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

static int digits(const char *s, size_t n, unsigned *v)
{
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        *v = *v * 10 + (unsigned)(s[i] - '0');
    }
    return 0;
}

static unsigned month_days(unsigned y, unsigned m)
{
    static const unsigned days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
        return 29;
    return days[m - 1];
}

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" (c_utc_now's form) as ms since the epoch. */
static int time_member(json_object *o, const char *key, uint64_t *ms)
{
    const char *s;
    size_t n;
    unsigned y, mo, d, h, mi, se, milli;

    if (string_member(o, key, 24, 24, &s, &n) < 0)
        return -1;
    if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
        s[19] != '.' || s[23] != 'Z' || digits(s, 4, &y) < 0 || digits(s + 5, 2, &mo) < 0 ||
        digits(s + 8, 2, &d) < 0 || digits(s + 11, 2, &h) < 0 || digits(s + 14, 2, &mi) < 0 ||
        digits(s + 17, 2, &se) < 0 || digits(s + 20, 3, &milli) < 0 || y < 1970 || mo < 1 ||
        mo > 12 || d < 1 || d > month_days(y, mo) || h > 23 || mi > 59 || se > 59)
        return sworn_err_set(SWORN_ERR_FORMAT, "report: \"%s\" is not YYYY-MM-DDTHH:MM:SS.mmmZ",
                             key);
    *ms = ((uint64_t)sworn_days_from_civil(y, mo, d) * 86400u + h * 3600u + mi * 60u + se) * 1000u +
          milli;
    return 0;
}

/* The checkpoint the run started from, and the Startup entry it read the measured files of. */
static int deployment(json_object *o, struct sworn_report_summary *out)
{
    json_object *dep, *cp, *ms, *files;
    const char *root;
    size_t n, got = 0;

    if (member(o, "deployment", json_type_object, &dep) < 0 ||
        member(dep, "checkpoint_start", json_type_object, &cp) < 0 ||
        member(dep, "measured_start", json_type_object, &ms) < 0)
        return -1;
    if (json_object_object_get_ex(cp, "size", NULL)) {
        if (json_object_object_length(cp) != 2 ||
            uint_member(cp, "size", INT64_MAX, &out->s.checkpoint_size) < 0 ||
            string_member(cp, "root", 44, 44, &root, &n) < 0 ||
            sworn_base64_decode(root, n, out->checkpoint_root, 32, &got) < 0 || got != 32)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "report: deployment.checkpoint_start is not {size, root} with a "
                                 "32-byte base64 root");
        if (out->s.checkpoint_size != 0) {
            out->s.checkpoint_root.data = out->checkpoint_root;
            out->s.checkpoint_root.len = 32;
        }
    } else if (json_object_object_length(cp) != 1 ||
               string_member(cp, "error", 1, 1024, &root, &n) < 0) {
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "report: deployment.checkpoint_start is neither {size, root} nor "
                             "{error}");
    }
    if (json_object_object_get_ex(ms, "index", NULL)) {
        if (json_object_object_length(ms) != 2 ||
            uint_member(ms, "index", INT64_MAX, &out->s.startup_index) < 0 ||
            member(ms, "files", json_type_array, &files) < 0 ||
            json_object_array_length(files) > SWORN_FRAME_FILES_MAX)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "report: deployment.measured_start is not {index, files} with "
                                 "at most %u files",
                                 SWORN_FRAME_FILES_MAX);
        if (out->s.checkpoint_size == 0 || out->s.startup_index >= out->s.checkpoint_size)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "report: deployment.measured_start.index is not an entry of "
                                 "the checkpoint the run started from");
    } else if (json_object_object_length(ms) != 1 ||
               string_member(ms, "error", 1, 1024, &root, &n) < 0) {
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "report: deployment.measured_start is neither {index, files} nor "
                             "{error}");
    }
    return 0;
}

static int selection(json_object *o, struct sworn_report_summary *out)
{
    json_object *sel, *only;
    const char *tier;
    size_t n;

    if (member(o, "selection", json_type_object, &sel) < 0 || json_object_object_length(sel) != 2 ||
        string_member(sel, "tier", 2, 2, &tier, &n) < 0 ||
        member(sel, "only", json_type_array, &only) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "report: selection is not {tier, only}");
    if (tier[0] != 'T' || tier[1] < '1' || tier[1] > '5')
        return sworn_err_set(SWORN_ERR_FORMAT, "report: selection.tier is not T1..T5");
    out->s.tier = (uint32_t)(tier[1] - '0');
    n = json_object_array_length(only);
    if (n > SWORN_FRAME_ONLY_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "report: selection.only has more than %u ids",
                             SWORN_FRAME_ONLY_MAX);
    for (size_t i = 0; i < n; i++) {
        json_object *id = json_object_array_get_idx(only, i);
        size_t len = (size_t)json_object_get_string_len(id);

        if (!json_object_is_type(id, json_type_string) || len < 1 ||
            len > SWORN_FRAME_PROBE_ID_MAX || strlen(json_object_get_string(id)) != len)
            return sworn_err_set(SWORN_ERR_FORMAT, "report: selection.only[%zu] is not an id", i);
        memcpy(out->only_ids[i], json_object_get_string(id), len + 1);
        out->only[i] = out->only_ids[i];
    }
    out->s.n_only = n;
    out->s.only = n > 0 ? out->only : NULL;
    return 0;
}

/* summary {pass, fail, skipped, error}, and the probes' own results counted to the same. */
static int counts(json_object *o, struct sworn_report_summary *out)
{
    static const char *const names[4] = {"pass", "fail", "skipped", "error"};
    json_object *sum, *probes;
    uint64_t want[4], seen[4] = {0, 0, 0, 0};
    size_t n;

    if (member(o, "summary", json_type_object, &sum) < 0 || json_object_object_length(sum) != 4 ||
        member(o, "probes", json_type_array, &probes) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "report: summary is not {pass, fail, skipped, error}, or no probes");
    for (int k = 0; k < 4; k++)
        if (uint_member(sum, names[k], SWORN_FRAME_PROBE_SET_MAX, &want[k]) < 0)
            return -1;
    n = json_object_array_length(probes);
    if (n > SWORN_FRAME_PROBE_SET_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "report: more than %u probes",
                             SWORN_FRAME_PROBE_SET_MAX);
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(probes, i), *r;
        int k;

        if (!json_object_is_type(p, json_type_object) ||
            !json_object_object_get_ex(p, "result", &r) ||
            !json_object_is_type(r, json_type_string))
            return sworn_err_set(SWORN_ERR_FORMAT, "report: probes[%zu] has no result", i);
        for (k = 0; k < 4 && strcmp(json_object_get_string(r), names[k]) != 0; k++)
            ;
        if (k == 4)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "report: probes[%zu].result is not pass, fail, skipped or error",
                                 i);
        seen[k]++;
    }
    for (int k = 0; k < 4; k++)
        if (seen[k] != want[k])
            return sworn_err_set(
                SWORN_ERR_FORMAT, "report: summary.%s is %llu, but %llu probes say %s", names[k],
                (unsigned long long)want[k], (unsigned long long)seen[k], names[k]);
    out->s.passed = (uint32_t)want[0];
    out->s.failed = (uint32_t)want[1];
    out->s.skipped = (uint32_t)want[2];
    out->s.errors = (uint32_t)want[3];
    return 0;
}

static int fields(json_object *o, struct sworn_report_summary *out)
{
    static const char *const top[TOP_KEYS] = {
        "tool",  "report_version", "claim",     "result",    "operator", "started",
        "ended", "deployment",     "selection", "probe_set", "summary",  "probes"};
    json_object *who, *set;
    const char *s, *claim;
    size_t n;
    uint64_t v;
    int pass;

    if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) != TOP_KEYS)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "report: not an object of the %d members of "
                             "report_version 2",
                             TOP_KEYS);
    for (int i = 0; i < TOP_KEYS; i++)
        if (!json_object_object_get_ex(o, top[i], NULL))
            return sworn_err_set(SWORN_ERR_FORMAT, "report: \"%s\" is missing", top[i]);
    if (string_member(o, "tool", 1, 64, &s, &n) < 0 || strcmp(s, "sworn-conformance") != 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "report: tool is not \"sworn-conformance\"");
    if (uint_member(o, "report_version", 1000, &v) < 0 || v != SWORN_REPORT_JSON_VERSION)
        return sworn_err_set(SWORN_ERR_FORMAT, "report: report_version is not %d",
                             SWORN_REPORT_JSON_VERSION);
    if (string_member(o, "result", 4, 4, &s, &n) < 0 ||
        (strcmp(s, "pass") != 0 && strcmp(s, "fail") != 0))
        return sworn_err_set(SWORN_ERR_FORMAT, "report: result is not \"pass\" or \"fail\"");
    pass = strcmp(s, "pass") == 0;
    if (string_member(o, "claim", 1, 256, &claim, &n) < 0 ||
        strcmp(claim, pass ? CLAIM_PASS : CLAIM_FAIL) != 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "report: claim is not \"%s\"",
                             pass ? CLAIM_PASS : CLAIM_FAIL);
    out->s.result = pass ? SWORN__V1__CONFORMANCE_RESULT__CONFORMANCE_RESULT_PASS
                         : SWORN__V1__CONFORMANCE_RESULT__CONFORMANCE_RESULT_FAIL;
    if (member(o, "operator", json_type_object, &who) < 0 || json_object_object_length(who) != 3 ||
        copy_member(who, "name", 1, SWORN_FRAME_OPERATOR_MAX, out->operator_name) < 0 ||
        copy_member(who, "user", 0, SWORN_FRAME_USER_MAX, out->operator_user) < 0 ||
        uint_member(who, "uid", UINT32_MAX, &v) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "report: operator is not {name, uid, user}: %s",
                             sworn_err_msg());
    out->s.operator_uid = (uint32_t)v;
    out->s.operator_name = out->operator_name;
    out->s.operator_user = out->operator_user;
    if (time_member(o, "started", &out->s.started_unix_ms) < 0 ||
        time_member(o, "ended", &out->s.ended_unix_ms) < 0)
        return -1;
    if (member(o, "probe_set", json_type_object, &set) < 0 || json_object_object_length(set) != 2 ||
        string_member(set, "digest", 64, 64, &s, &n) < 0 ||
        sworn_hex_decode(s, n, out->probe_set_sha256, 32) < 0 ||
        uint_member(set, "probes", SWORN_FRAME_PROBE_SET_MAX, &v) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "report: probe_set is not {digest (64 hex digits), probes}");
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 'A' && s[i] <= 'F')
            return sworn_err_set(SWORN_ERR_FORMAT, "report: probe_set.digest is not lower-case");
    out->s.probe_set_sha256.data = out->probe_set_sha256;
    out->s.probe_set_sha256.len = 32;
    out->s.probe_set_size = (uint32_t)v;
    if (deployment(o, out) < 0 || selection(o, out) < 0 || counts(o, out) < 0)
        return -1;
    return sworn_frame_check_conformance_summary(&out->s);
}

int sworn_report_json_read(const uint8_t *json, size_t len, struct sworn_report_summary *out)
{
    struct json_tokener *tok = NULL;
    json_object *o = NULL;
    const char *again;
    size_t again_len = 0;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    sworn__v1__conformance_summary__init(&out->s);
    if (len < 1 || len > SWORN_FRAME_REPORT_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "report: %zu bytes, not 1..%u", len,
                             SWORN_FRAME_REPORT_MAX);
    if (memchr(json, '\0', len) != NULL)
        return sworn_err_set(SWORN_ERR_FORMAT, "report: a NUL byte");
    tok = json_tokener_new_ex(DEPTH);
    if (tok == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    o = json_tokener_parse_ex(tok, (const char *)json, (int)len);
    if (o == NULL || json_tokener_get_parse_end(tok) != len) {
        sworn_err_set(SWORN_ERR_FORMAT, "report: not one JSON object (%s at byte %zu)",
                      json_tokener_error_desc(json_tokener_get_error(tok)),
                      json_tokener_get_parse_end(tok));
        goto out;
    }
    again = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &again_len);
    if (again == NULL || again_len != len || memcmp(again, json, len) != 0) {
        sworn_err_set(SWORN_ERR_FORMAT,
                      "report: not in its canonical form (sworn-conformance's own bytes: no "
                      "spacing, no repeated key)");
        goto out;
    }
    SHA256(json, len, out->report_sha256);
    out->s.report_sha256.data = out->report_sha256;
    out->s.report_sha256.len = 32;
    out->s.report_length = len;
    if (fields(o, out) < 0)
        goto out;
    rc = 0;
out:
    json_object_put(o);
    json_tokener_free(tok);
    return rc;
}
