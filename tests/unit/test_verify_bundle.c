/*
 * test_verify_bundle.c -- the one-file bundle of a range of entries: written by the recording
 * side (transparency-log/bundle.c, what `sworn-log export-bundle` calls) from a log made by the
 * real `sworn-log` binary, read by the real `sworn-verify`. Every range shape passes (from
 * entry 0, from the middle, up to the checkpoint's size, a single entry, ranges starting at a
 * power of two and not); each tampering is refused with its reason: a changed entry, a dropped
 * entry line, a changed left hash or proof hash, a forged checkpoint, a truncated file, a bundle
 * under a smaller checkpoint than the saved state. Also: ranges outside the tree are refused by
 * the writer, and an existing output file is never overwritten.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "bundle.h"
#include "err.h"
#include "logstore.h"
#include "testutil.h"

#define ORIGIN "bundle.sworn.example/log"

static const char *log_bin, *verify_bin;

struct fx {
    char *dir, *db;
};

static char *P(const struct fx *f, const char *name)
{
    return sworn_test_path(f->dir, name);
}

/*
 * Run prog with the arguments after it (NULL-terminated); returns its exit status. With out, its
 * stdout goes to *out (free it); without, a failure fails the test.
 */
static int runv(const struct fx *f, char **out, const char *in_path, const char *prog, ...)
{
    struct sworn_test_run r;
    va_list ap;
    int st;

    (void)f;
    va_start(ap, prog);
    sworn_test_vrun(&r, in_path, prog, ap);
    va_end(ap);
    st = r.status;
    if (out != NULL) {
        *out = r.out;
        r.out = NULL;
    } else if (r.status != 0) {
        fail_msg("%s: status %d: %s", r.cmd, r.status, r.err);
    }
    sworn_test_run_free(&r);
    return st;
}

/* A log of 700 entries "b0".."b699" with checkpoints at 300 and 700, and its policy. */
static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    char *key, *in, *out, *pol, text[1024];
    FILE *fp;

    f->dir = sworn_test_tmpdir("vbundle");
    f->db = P(f, "db");
    key = P(f, "log.key");
    in = P(f, "lines");
    runv(f, &out, NULL, log_bin, "keygen", "--name", "bundle.sworn.example", "--out", key, NULL);
    out[strcspn(out, "\n")] = '\0';
    pol = P(f, "policy");
    snprintf(text, sizeof(text), "origin %s\nlog %s\nentries opaque\n", ORIGIN, out);
    sworn_test_write_file(pol, text, strlen(text), 0600);
    free(out);
    runv(f, NULL, NULL, log_bin, "init", "--db", f->db, "--origin", ORIGIN, "--key", key,
         "--key-name", "bundle.sworn.example", NULL);
    fp = fopen(in, "w");
    for (int i = 0; i < 300; i++)
        fprintf(fp, "b%d\n", i);
    fclose(fp);
    runv(f, NULL, in, log_bin, "append", "--db", f->db, NULL);
    runv(f, NULL, NULL, log_bin, "checkpoint", "--db", f->db, NULL);
    fp = fopen(in, "w");
    for (int i = 300; i < 700; i++)
        fprintf(fp, "b%d\n", i);
    fclose(fp);
    runv(f, NULL, in, log_bin, "append", "--db", f->db, NULL);
    runv(f, NULL, NULL, log_bin, "checkpoint", "--db", f->db, NULL);
    free(key);
    free(in);
    free(pol);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    return 0;
}

/* Write the bundle of [start, start + count) under the checkpoint of `size` to name. */
static void make_bundle(struct fx *f, uint64_t size, uint64_t start, uint64_t count,
                        const char *name)
{
    struct sworn_log *log;
    char *path = P(f, name);

    unlink(path);
    assert_int_equal(sworn_log_open(f->db, &log), 0);
    if (sworn_bundle_export(log, size, start, count, path) != 0)
        fail_msg("export %llu+%llu: %s", (unsigned long long)start, (unsigned long long)count,
                 sworn_err_msg());
    sworn_log_close(log);
    free(path);
}

/* Verify a bundle; expect the status, and when reason is set, that check's first reason. */
static void expect(struct fx *f, const char *name, const char *state_file, int want,
                   const char *check, const char *reason)
{
    char *pol = P(f, "policy"), *b = P(f, name), *st = state_file ? P(f, state_file) : NULL, *out;
    int rc = st ? runv(f, &out, NULL, verify_bin, "verify", "--json", "--policy", pol, "--state",
                       st, b, NULL)
                : runv(f, &out, NULL, verify_bin, "verify", "--json", "--policy", pol, b, NULL);

    if (rc != want)
        fail_msg("%s: status %d, want %d: %s", name, rc, want, out);
    if (reason != NULL) {
        char needle[256];

        snprintf(needle, sizeof(needle), "\"name\":\"%s\",\"result\":\"fail\"", check);
        if (strstr(out, needle) == NULL)
            fail_msg("%s: %s did not fail: %s", name, check, out);
        snprintf(needle, sizeof(needle), "\"reason\":\"%s\"", reason);
        if (strstr(strstr(out, check), needle) == NULL)
            fail_msg("%s: %s: no reason %s: %s", name, check, reason, out);
    }
    free(out);
    free(pol);
    free(b);
    free(st);
}

static void test_ranges_pass(void **state)
{
    struct fx *f = *state;
    const uint64_t r[][3] = {{UINT64_MAX, 0, 700}, {UINT64_MAX, 0, 1},    {UINT64_MAX, 256, 44},
                             {UINT64_MAX, 699, 1}, {UINT64_MAX, 5, 300},  {300, 100, 200},
                             {300, 299, 1},        {UINT64_MAX, 512, 100}};

    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
        make_bundle(f, r[i][0], r[i][1], r[i][2], "b");
        expect(f, "b", NULL, 0, NULL, NULL);
    }
}

/* Rewrite one line (1-based, counting from the file's first) of a bundle file. */
static void edit_line(struct fx *f, const char *name, const char *tag, int nth, int drop)
{
    char *path = P(f, name), *text, *p;
    size_t len;
    int seen = 0;

    text = sworn_test_read_file(path, &len);
    for (p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, tag, strlen(tag)) == 0 && ++seen == nth) {
            char *nl = strchr(p, '\n');

            if (drop) {
                memmove(p, nl + 1, strlen(nl + 1) + 1);
                len -= (size_t)(nl + 1 - p);
            } else {
                /* change one base64 character in the middle of the value */
                char *c = p + strlen(tag) + (size_t)(nl - p - (long)strlen(tag)) / 2;

                *c = *c == 'A' ? 'B' : 'A';
            }
            break;
        }
    }
    assert_int_equal(seen, nth);
    sworn_test_write_file(path, text, len, 0644);
    free(text);
    free(path);
}

static void test_tampered(void **state)
{
    struct fx *f = *state;

    make_bundle(f, UINT64_MAX, 300, 100, "t");
    edit_line(f, "t", "entry ", 7, 0);
    expect(f, "t", NULL, 1, "roots", "root-mismatch");

    make_bundle(f, UINT64_MAX, 300, 100, "t");
    edit_line(f, "t", "entry ", 7, 1);
    expect(f, "t", NULL, 1, "entry-bundles", "bundle-malformed");

    make_bundle(f, UINT64_MAX, 300, 100, "t");
    edit_line(f, "t", "left ", 2, 0);
    expect(f, "t", NULL, 1, "roots", "root-mismatch");

    make_bundle(f, UINT64_MAX, 300, 100, "t");
    edit_line(f, "t", "proof ", 1, 0);
    expect(f, "t", NULL, 1, "roots", "root-mismatch");

    make_bundle(f, UINT64_MAX, 300, 100, "t");
    edit_line(f, "t", "proof ", 1, 1);
    expect(f, "t", NULL, 1, "roots", "root-mismatch");

    make_bundle(f, UINT64_MAX, 300, 100, "t");
    edit_line(f, "t", "checkpoint ", 1, 0);
    expect(f, "t", NULL, 1, "checkpoint-signatures", NULL);

    make_bundle(f, UINT64_MAX, 300, 100, "t");
    {
        char *path = P(f, "t"), *text;
        size_t len;

        text = sworn_test_read_file(path, &len);
        sworn_test_write_file(path, text, len / 2, 0644);
        free(text);
        free(path);
    }
    expect(f, "t", NULL, 1, "entry-bundles", "bundle-malformed");
}

/* A second log under the same key and origin whose entries differ from entry 0 on: a fork. */
static char *make_fork(struct fx *f)
{
    char *db = P(f, "fork.db"), *key = P(f, "log.key"), *in = P(f, "fork-lines");
    FILE *fp;

    runv(f, NULL, NULL, log_bin, "init", "--db", db, "--origin", ORIGIN, "--key", key, "--key-name",
         "bundle.sworn.example", NULL);
    for (int part = 0; part < 2; part++) {
        fp = fopen(in, "w");
        assert_non_null(fp);
        for (int i = part ? 300 : 0; i < (part ? 700 : 300); i++)
            fprintf(fp, "forked%d\n", i);
        fclose(fp);
        runv(f, NULL, in, log_bin, "append", "--db", db, NULL);
        runv(f, NULL, NULL, log_bin, "checkpoint", "--db", db, NULL);
    }
    free(key);
    free(in);
    return db;
}

/*
 * A bundle whose range neither ends at the saved size nor has its checkpoint there proved
 * nothing about the saved tree, and passed with a note: a fork's bundle went unseen (found
 * attacking issue 13's fixes). It now fails `state-unconnected`, and `export-bundle --old M`
 * adds the consistency proof from the saved size M, which ties it.
 */
static void test_state_tied_by_since(void **state)
{
    struct fx *f = *state;
    char *fork_db = make_fork(f), *st = P(f, "state"), *saved = P(f, "state-300"), *b;
    char *data;
    size_t len = 0;

    /* The auditor accepts the tree of 300 (a bundle of all of it) and keeps that state. */
    make_bundle(f, 300, 0, 300, "first");
    expect(f, "first", "state", 0, NULL, NULL);
    data = sworn_test_read_file(st, &len);
    assert_non_null(data);
    sworn_test_write_file(saved, data, len, 0600);
    free(data);
    /* A later bundle of entries 600..699 under the checkpoint of 700: nothing ties it to 300. */
    make_bundle(f, UINT64_MAX, 600, 100, "late");
    expect(f, "late", "state", 1, "state", "state-unconnected");
    /* With the proof from 300 (written by the real sworn-log), it passes and moves the state. */
    b = P(f, "late-since");
    runv(f, NULL, NULL, log_bin, "export-bundle", "--db", f->db, "--start", "600", "--count", "100",
         "--old", "300", b, NULL);
    expect(f, "late-since", "state", 0, NULL, NULL);
    free(b);
    /* The fork's bundle of the same range under the state of 300: unconnected without the
     * proof, and with it the proof fails, since the fork's tree of 300 is another. */
    data = sworn_test_read_file(saved, &len);
    assert_non_null(data);
    sworn_test_write_file(st, data, len, 0600);
    free(data);
    b = P(f, "fork-late");
    runv(f, NULL, NULL, log_bin, "export-bundle", "--db", fork_db, "--start", "600", "--count",
         "100", b, NULL);
    expect(f, "fork-late", "state", 1, "state", "state-unconnected");
    free(b);
    b = P(f, "fork-late-since");
    runv(f, NULL, NULL, log_bin, "export-bundle", "--db", fork_db, "--start", "600", "--count",
         "100", "--old", "300", b, NULL);
    expect(f, "fork-late-since", "state", 1, "state", "fork");
    free(b);
    /* The writer refuses a saved size above the checkpoint's tree and 0. */
    b = P(f, "bad-since");
    {
        char *out = NULL;

        assert_int_equal(runv(f, &out, NULL, log_bin, "export-bundle", "--db", f->db, "--start",
                              "0", "--count", "1", "--old", "701", b, NULL),
                         2);
        free(out);
        assert_int_equal(runv(f, &out, NULL, log_bin, "export-bundle", "--db", f->db, "--start",
                              "0", "--count", "1", "--old", "0", b, NULL),
                         2);
        free(out);
    }
    free(b);
    free(st);
    free(saved);
    free(fork_db);
}

static void test_state_and_writer_refusals(void **state)
{
    struct fx *f = *state;
    struct sworn_log *log;
    char *path = P(f, "exists");

    /* Accept the newest (700), then a bundle under the checkpoint of 300 is a rollback. */
    make_bundle(f, UINT64_MAX, 600, 100, "new");
    expect(f, "new", "state", 0, NULL, NULL);
    make_bundle(f, 300, 0, 300, "old");
    expect(f, "old", "state", 1, "state", "rollback");
    /* The same checkpoint again: the state's root is compared. */
    expect(f, "new", "state", 0, NULL, NULL);

    assert_int_equal(sworn_log_open(f->db, &log), 0);
    assert_int_equal(sworn_bundle_export(log, UINT64_MAX, 700, 1, path), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(sworn_bundle_export(log, UINT64_MAX, 650, 51, path), -1);
    assert_int_equal(sworn_bundle_export(log, UINT64_MAX, 0, 0, path), -1);
    assert_int_equal(sworn_bundle_export(log, 123, 0, 1, path), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    assert_int_equal(sworn_bundle_export(log, UINT64_MAX, 0, 1, path), 0);
    assert_int_equal(sworn_bundle_export(log, UINT64_MAX, 0, 1, path), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    sworn_log_close(log);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ranges_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tampered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_and_writer_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_tied_by_since, setup, teardown),
    };

    log_bin = sworn_test_bin("SWORN_LOG_BIN");
    verify_bin = sworn_test_bin("SWORN_VERIFY_BIN");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
