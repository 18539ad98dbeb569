/*
 * verify_fixture.c -- see verify_fixture.h.
 */
#include "verify_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

json_object *sworn_verify_json(const char *verify_bin, const char *dir, const char *policy,
                               const char *record, const char *state_file, int want_status,
                               unsigned flags)
{
    char *pol = sworn_test_path(dir, policy), *rec = sworn_test_path(dir, record);
    char *st = state_file != NULL ? sworn_test_path(dir, state_file) : NULL;
    const char *argv[12];
    struct sworn_test_run r;
    json_object *o;
    size_t n = 0;

    argv[n++] = verify_bin;
    argv[n++] = "verify";
    argv[n++] = "--json";
    if (flags & SWORN_VERIFY_NO_PROGRESS)
        argv[n++] = "--no-progress";
    argv[n++] = "--policy";
    argv[n++] = pol;
    if (st != NULL) {
        argv[n++] = "--state";
        argv[n++] = st;
    }
    argv[n++] = rec;
    argv[n] = NULL;
    sworn_test_run(argv, NULL, &r);
    if (r.status != want_status)
        fail_msg("verify %s: status %d, want %d\n%s%s", record, r.status, want_status, r.out,
                 r.err);
    o = json_tokener_parse(r.out);
    if (o == NULL)
        fail_msg("verify %s: not JSON: %s", record, r.out);
    sworn_test_run_free(&r);
    free(pol);
    free(rec);
    free(st);
    return o;
}

json_object *sworn_verify_get(json_object *o, const char *k)
{
    json_object *v = NULL;

    if (!json_object_object_get_ex(o, k, &v))
        fail_msg("no '%s' in %s", k, json_object_to_json_string(o));
    return v;
}

json_object *sworn_verify_check(json_object *rep, const char *name)
{
    json_object *checks = sworn_verify_get(rep, "checks");

    for (size_t i = 0; i < json_object_array_length(checks); i++) {
        json_object *c = json_object_array_get_idx(checks, i);

        if (strcmp(json_object_get_string(sworn_verify_get(c, "name")), name) == 0)
            return c;
    }
    fail_msg("no check %s", name);
    return NULL;
}

const char *sworn_verify_failed(json_object *rep, const char *what, const char *name)
{
    json_object *c = sworn_verify_check(rep, name);

    if (strcmp(json_object_get_string(sworn_verify_get(c, "result")), "fail") != 0)
        fail_msg("%s%scheck %s did not fail: %s", what ? what : "", what ? ": " : "", name,
                 json_object_to_json_string(rep));
    return json_object_get_string(sworn_verify_get(sworn_verify_get(c, "first_failure"), "reason"));
}

void sworn_verify_expect_fail(json_object *rep, const char *name, const char *reason,
                              const char *item)
{
    const char *got = sworn_verify_failed(rep, NULL, name);
    json_object *c = sworn_verify_check(rep, name);

    if (strcmp(got, reason) != 0 ||
        (item != NULL && strcmp(json_object_get_string(
                                    sworn_verify_get(sworn_verify_get(c, "first_failure"), "item")),
                                item) != 0))
        fail_msg("check %s: %s, want %s at %s", name, json_object_to_json_string(c), reason,
                 item ? item : "-");
}

void sworn_verify_expect_pass(json_object *rep, const char *name)
{
    json_object *c = sworn_verify_check(rep, name);

    if (strcmp(json_object_get_string(sworn_verify_get(c, "result")), "pass") != 0)
        fail_msg("check %s did not pass: %s", name, json_object_to_json_string(c));
}

void sworn_verify_expect_only(json_object *rep, const char *except)
{
    json_object *checks = sworn_verify_get(rep, "checks");

    for (size_t i = 0; i < json_object_array_length(checks); i++) {
        json_object *c = json_object_array_get_idx(checks, i);
        const char *n = json_object_get_string(sworn_verify_get(c, "name"));

        if (strcmp(n, except) != 0 &&
            strcmp(json_object_get_string(sworn_verify_get(c, "result")), "fail") == 0)
            fail_msg("%s failed too: %s", n, json_object_to_json_string(c));
    }
}

uint8_t *sworn_verify_read_rel(const char *dir, const char *rel, size_t *len)
{
    char *path = sworn_test_path(dir, rel);
    uint8_t *d = (uint8_t *)sworn_test_read_file(path, len);

    free(path);
    return d;
}

void sworn_verify_write_rel(const char *dir, const char *rel, const void *d, size_t len)
{
    char *path = sworn_test_path(dir, rel);

    sworn_test_write_file(path, d, len, 0644);
    free(path);
}

size_t sworn_verify_item_offset(const uint8_t *b, unsigned i)
{
    size_t pos = 0;

    while (i-- > 0)
        pos += 2 + ((size_t)b[pos] << 8 | b[pos + 1]);
    return pos;
}
