/*
 * test_cli.c -- end-to-end tests of the real `sworn-log` binary (STYLE.md 2.14): each case runs
 * the built program (its path in $SWORN_LOG_BIN, which ctest sets) in a fresh temporary folder,
 * with stdin from a file, stdout and stderr captured to files, and checks the exit status and what
 * was printed. Exit statuses are those of sworn-log.c: 0 success, 1 a verification failed, 2 bad
 * usage or input.
 *
 * The ECDSA case makes a P-256 key with the `openssl` command and checks a checkpoint signature
 * with `openssl dgst -verify`, independently of sworn's own verifier; it is skipped when there is
 * no `openssl` command.
 *
 * Under the sanitizer build the binary is instrumented too: any sanitizer report on its stderr
 * fails the case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "checkpoint.h"
#include "encoding.h"
#include "err.h"
#include "note.h"
#include "testutil.h"

#define ORIGIN "cli.sworn.example/log"
#define KEY_NAME "cli.sworn.example"

static const char *bin;

/*
 * One test's folder, and every allocation made for it, freed in teardown: a failed assertion
 * leaves the test by longjmp, and should not leave leaks for LeakSanitizer to report as well.
 */
struct fixture {
    char *dir;
    void **owned;
    size_t nowned, cap;
};

static struct fixture *current;

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    f->dir = sworn_test_tmpdir("cli");
    current = f;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    sworn_test_rmtree(f->dir);
    for (size_t i = 0; i < f->nowned; i++)
        free(f->owned[i]);
    free(f->owned);
    free(f->dir);
    free(f);
    current = NULL;
    return 0;
}

/* Hand an allocation to the running test's fixture; returns it. */
static void *own(void *p)
{
    struct fixture *f = current;

    assert_non_null(p);
    if (f->nowned == f->cap) {
        void **grown = realloc(f->owned, (f->cap ? 2 * f->cap : 64) * sizeof(*grown));

        assert_non_null(grown);
        f->owned = grown;
        f->cap = f->cap ? 2 * f->cap : 64;
    }
    f->owned[f->nowned++] = p;
    return p;
}

/* A path in the test's folder, owned by the fixture. */
static const char *P(struct fixture *f, const char *name)
{
    return own(sworn_test_path(f->dir, name));
}

/* Forget a run's result (its buffers belong to the fixture). */
static void result_free(struct sworn_test_run *r)
{
    memset(r, 0, sizeof(*r));
}

/*
 * Run argv (argv[0] found on PATH unless it has a '/'), stdin from in_path (NULL: /dev/null),
 * and capture its output, owned by the fixture. A sanitizer report on its stderr fails the test.
 */
static void run_argv(struct sworn_test_run *r, const char *in_path, const char *const *argv)
{
    sworn_test_run(argv, in_path, r);
    own(r->out);
    own(r->err);
}

/* Run sworn-log with the given arguments (a NULL-terminated list); the outputs go to the fixture.
 */
static void sworn(struct fixture *f, struct sworn_test_run *r, const char *in_path, ...)
{
    va_list ap;

    (void)f; /* the run's buffers go to the current fixture */
    va_start(ap, in_path);
    sworn_test_vrun(r, in_path, bin, ap);
    va_end(ap);
    own(r->out);
    own(r->err);
}

/* Run another program (openssl, cp: the first argument), expecting success. */
static void tool(struct fixture *f, ...)
{
    struct sworn_test_run r;
    const char *prog;
    va_list ap;

    va_start(ap, f);
    prog = va_arg(ap, const char *);
    sworn_test_vrun(&r, NULL, prog, ap);
    va_end(ap);
    own(r.out);
    own(r.err);
    if (r.status != 0)
        fail_msg("%s failed with status %d: %s", r.cmd, r.status, r.err);
    result_free(&r);
}

/* Check the exit status; on a mismatch show both outputs. */
static void expect_status(const struct sworn_test_run *r, int want, const char *what)
{
    if (r->status != want)
        fail_msg("%s: exit status %d, want %d\nstdout: %s\nstderr: %s", what, r->status, want,
                 r->out, r->err);
}

static void expect_in(const char *text, const char *needle, const char *what)
{
    if (strstr(text, needle) == NULL)
        fail_msg("%s: \"%s\" is missing from:\n%s", what, needle, text);
}

/* A failure: the given status, a "sworn-log: ..." line on stderr holding `needle`, no stdout. */
static void expect_failure(struct sworn_test_run *r, int want, const char *needle, const char *what)
{
    expect_status(r, want, what);
    expect_in(r->err, "sworn-log: ", what);
    expect_in(r->err, needle, what);
    if (r->out_len != 0)
        fail_msg("%s: failed, yet printed on stdout:\n%s", what, r->out);
    result_free(r);
}

static void write_text(const char *path, const char *text)
{
    sworn_test_write_file(path, text, strlen(text), 0600);
}

/* Save a result's stdout to a file, and free the result. */
static void save_out(struct sworn_test_run *r, const char *path)
{
    sworn_test_write_file(path, r->out, r->out_len, 0600);
    result_free(r);
}

/* "first\n...\n(first+n-1)\n". */
static char *index_lines(uint64_t first, uint64_t n)
{
    char *s = own(malloc(n * 21 + 1));
    size_t off = 0;

    assert_non_null(s);
    s[0] = '\0';
    for (uint64_t i = 0; i < n; i++)
        off += (size_t)sprintf(s + off, "%llu\n", (unsigned long long)(first + i));
    return s;
}

static void expect_indices(struct sworn_test_run *r, uint64_t first, uint64_t n, const char *what)
{
    char *want = index_lines(first, n);

    expect_status(r, 0, what);
    if (strcmp(r->out, want) != 0)
        fail_msg("%s: printed\n%s\nwant the indices %llu..%llu", what, r->out,
                 (unsigned long long)first, (unsigned long long)(first + n - 1));
    result_free(r);
}

/* Make an Ed25519 key `file` named `name`; returns its verifier key (free it). */
static char *keygen(struct fixture *f, const char *name, const char *file)
{
    struct sworn_test_run r;
    char *vkey;

    sworn(f, &r, NULL, "keygen", "--name", name, "--out", P(f, file), NULL);
    expect_status(&r, 0, "keygen");
    if (r.out_len < 2 || r.out[r.out_len - 1] != '\n' || memchr(r.out, '\n', r.out_len - 1))
        fail_msg("keygen: want one line, printed:\n%s", r.out);
    vkey = own(strndup(r.out, r.out_len - 1));
    assert_non_null(vkey);
    result_free(&r);
    return vkey;
}

/* keygen, init, and append `n` entries "entry-<i>"; returns the verifier key (free it). */
static char *make_log(struct fixture *f, unsigned n)
{
    char *vkey = keygen(f, KEY_NAME, "log.key");
    struct sworn_test_run r;

    sworn(f, &r, NULL, "init", "--db", P(f, "log.db"), "--origin", ORIGIN, "--key", P(f, "log.key"),
          NULL);
    expect_status(&r, 0, "init");
    if (r.out_len != strlen(vkey) + 1 || strncmp(r.out, vkey, strlen(vkey)) != 0)
        fail_msg("init printed\n%s\nnot the key's verifier key\n%s", r.out, vkey);
    result_free(&r);
    if (n > 0) {
        char *text = own(malloc((size_t)n * 24 + 1));
        size_t off = 0;

        assert_non_null(text);
        for (unsigned i = 0; i < n; i++)
            off += (size_t)sprintf(text + off, "entry-%u\n", i);
        write_text(P(f, "entries.txt"), text);
        sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "entries.txt"), NULL);
        expect_indices(&r, 0, n, "append of the first entries");
    }
    return vkey;
}

/* Sign a checkpoint into `file`; returns its tree size. */
static uint64_t checkpoint(struct fixture *f, const char *file)
{
    struct sworn_note note;
    struct sworn_checkpoint cp;
    struct sworn_test_run r;

    sworn(f, &r, NULL, "checkpoint", "--db", P(f, "log.db"), NULL);
    expect_status(&r, 0, "checkpoint");
    if (sworn_note_parse(r.out, r.out_len, &note) != 0 ||
        sworn_checkpoint_parse(note.text, note.text_len, &cp) != 0)
        fail_msg("checkpoint printed something that is not a checkpoint note (%s):\n%s",
                 sworn_err_msg(), r.out);
    assert_string_equal(cp.origin, ORIGIN);
    save_out(&r, P(f, file));
    return cp.size;
}

/* ---- the cases ---- */

static void test_help(void **state)
{
    struct fixture *f = *state;
    static const char *const forms[][2] = {
        {"--help", NULL}, {"-h", NULL}, {"help", NULL}, {"append", "--help"}};
    struct sworn_test_run r;

    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        sworn(f, &r, NULL, forms[i][0], forms[i][1], NULL);
        expect_status(&r, 0, forms[i][0]);
        expect_in(r.out, "usage: sworn-log COMMAND", "help text");
        expect_in(r.out, "verify-consistency", "help text");
        expect_in(r.out, "Exit status", "help text");
        if (r.err_len != 0)
            fail_msg("%s wrote to stderr: %s", forms[i][0], r.err);
        result_free(&r);
    }
}

static void test_usage_errors(void **state)
{
    struct fixture *f = *state;
    struct sworn_test_run r;

    sworn(f, &r, NULL, NULL);
    expect_failure(&r, 2, "no command given", "no command");
    sworn(f, &r, NULL, "frobnicate", NULL);
    expect_failure(&r, 2, "unknown command", "an unknown command");
    sworn(f, &r, NULL, "append", "--frobnicate", NULL);
    expect_failure(&r, 2, "unknown", "an unknown option");
    sworn(f, &r, NULL, "init", "--db", NULL);
    expect_failure(&r, 2, "option", "an option without its value");
    sworn(f, &r, NULL, "prove-inclusion", "--db", P(f, "x.db"), "--index", "-1", NULL);
    expect_failure(&r, 2, "--index", "a negative --index");
    sworn(f, &r, NULL, "init", "--db", P(f, "x.db"), NULL);
    expect_failure(&r, 2, "--origin", "init without --origin and --key");
    sworn(f, &r, NULL, "append", "--db", P(f, "missing.db"), NULL);
    expect_failure(&r, 2, "missing.db", "append to a database that does not exist");
    if (access(P(f, "missing.db"), F_OK) == 0)
        fail_msg("append to a missing database created it");
}

static void test_keygen(void **state)
{
    struct fixture *f = *state;
    struct sworn_note_verifier v;
    struct sworn_test_run r;
    struct stat st;
    char *vkey = keygen(f, "alice.example", "alice.key");

    if (strncmp(vkey, "alice.example+", 14) != 0 ||
        sworn_note_verifier_parse(vkey, strlen(vkey), &v) != 0 || v.alg != SWORN_NOTE_ALG_ED25519)
        fail_msg("keygen printed \"%s\", not an Ed25519 verifier key named alice.example", vkey);
    assert_int_equal(stat(P(f, "alice.key"), &st), 0);
    if ((st.st_mode & 07777) != 0600)
        fail_msg("the key file has mode %04o, want 0600", (unsigned)(st.st_mode & 07777));
    /* Never overwrite a key. */
    sworn(f, &r, NULL, "keygen", "--name", "alice.example", "--out", P(f, "alice.key"), NULL);
    expect_failure(&r, 2, "alice.key", "keygen over an existing key file");
    sworn(f, &r, NULL, "keygen", "--name", "bad+name", "--out", P(f, "bad.key"), NULL);
    expect_status(&r, 2, "keygen with a '+' in the name");
    result_free(&r);
    sworn(f, &r, NULL, "keygen", "--name", "alice.example", NULL);
    expect_failure(&r, 2, "--out", "keygen without --out");
}

static void test_init(void **state)
{
    struct fixture *f = *state;
    char *vkey = keygen(f, KEY_NAME, "log.key");
    struct sworn_test_run r;

    /* A key readable by others is refused, and no database is left behind. */
    assert_int_equal(chmod(P(f, "log.key"), 0644), 0);
    sworn(f, &r, NULL, "init", "--db", P(f, "log.db"), "--origin", ORIGIN, "--key", P(f, "log.key"),
          NULL);
    expect_failure(&r, 2, "init: ", "init with a key file of mode 0644");
    if (access(P(f, "log.db"), F_OK) == 0)
        fail_msg("init with a refused key still created the database");
    assert_int_equal(chmod(P(f, "log.key"), 0600), 0);

    sworn(f, &r, NULL, "init", "--db", P(f, "log.db"), "--origin", ORIGIN, "--key", P(f, "log.key"),
          NULL);
    expect_status(&r, 0, "init");
    if (r.out_len != strlen(vkey) + 1 || strncmp(r.out, vkey, strlen(vkey)) != 0)
        fail_msg("init printed\n%s\nnot the key's verifier key\n%s", r.out, vkey);
    result_free(&r);

    sworn(f, &r, NULL, "init", "--db", P(f, "log.db"), "--origin", ORIGIN, "--key", P(f, "log.key"),
          NULL);
    expect_failure(&r, 2, "log.db", "init twice on one database");

    sworn(f, &r, NULL, "vkey", "--db", P(f, "log.db"), NULL);
    expect_status(&r, 0, "vkey");
    if (r.out_len != strlen(vkey) + 1 || strncmp(r.out, vkey, strlen(vkey)) != 0)
        fail_msg("vkey --db printed\n%s\nnot the verifier key init printed\n%s", r.out, vkey);
    result_free(&r);

    /* The log still works after the refused second init. */
    assert_int_equal(checkpoint(f, "cp"), 0);
}

static void test_append(void **state)
{
    struct fixture *f = *state;
    char *vkey = make_log(f, 0), *big, *text;
    struct sworn_test_run r;
    size_t off = 0;

    /* From a file: an empty line is an empty entry, and a last line needs no newline. */
    write_text(P(f, "a.txt"), "one\n\nthree\nfour\nfive");
    sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "a.txt"), NULL);
    expect_indices(&r, 0, 5, "append from a file");
    /* From stdin. */
    write_text(P(f, "b.txt"), "six\nseven\neight\n");
    sworn(f, &r, P(f, "b.txt"), "append", "--db", P(f, "log.db"), NULL);
    expect_indices(&r, 5, 3, "append from stdin");

    /* A line too long for an entry stops the command before its batch is stored. */
    big = own(malloc(70000 + 64));
    assert_non_null(big);
    off = (size_t)sprintf(big, "ok-1\nok-2\n");
    memset(big + off, 'x', 70000);
    off += 70000;
    strcpy(big + off, "\nok-4\n");
    write_text(P(f, "big.txt"), big);
    sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "big.txt"), NULL);
    expect_failure(&r, 2, "line 3", "append with a 70000-byte line");
    /* ... so the next append continues at 8. */
    write_text(P(f, "c.txt"), "nine\n");
    sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "c.txt"), NULL);
    expect_indices(&r, 8, 1, "append after the refused batch");

    /* A line of exactly 65535 bytes is an entry. */
    memset(big, 'y', 65535);
    strcpy(big + 65535, "\n");
    write_text(P(f, "max.txt"), big);
    sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "max.txt"), NULL);
    expect_indices(&r, 9, 1, "append of a 65535-byte line");
    memset(big, 'y', 65536);
    strcpy(big + 65536, "\n");
    write_text(P(f, "over.txt"), big);
    sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "over.txt"), NULL);
    expect_status(&r, 2, "append of a 65536-byte line");
    expect_in(r.err, "line 1 has 65536 bytes", "append of a 65536-byte line");
    result_free(&r);

    /*
     * Batches are of 256 lines: with a bad line at 290, the first 256 lines are stored and
     * printed, the rest of that input is not.
     */
    text = own(malloc(300 * 16 + 70000));
    assert_non_null(text);
    off = 0;
    for (int i = 1; i <= 300; i++) {
        if (i == 290) {
            memset(text + off, 'z', 70000);
            off += 70000;
            text[off++] = '\n';
        } else {
            off += (size_t)sprintf(text + off, "line-%d\n", i);
        }
    }
    text[off] = '\0';
    write_text(P(f, "batches.txt"), text);
    sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "batches.txt"), NULL);
    expect_status(&r, 2, "append with a bad line in the second batch");
    expect_in(r.err, "line 290", "append with a bad line in the second batch");
    {
        char *want = index_lines(10, 256);

        if (strcmp(r.out, want) != 0)
            fail_msg("append with a bad line at 290 printed\n%s\nwant the indices 10..265", r.out);
    }
    result_free(&r);
    sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "c.txt"), NULL);
    expect_indices(&r, 266, 1, "append after a partly stored input");
    assert_int_equal(checkpoint(f, "cp"), 267);

    /* The stored bytes are the lines without their newlines: entry 1 is empty. */
    sworn(f, &r, NULL, "prove-inclusion", "--db", P(f, "log.db"), "--index", "1", NULL);
    expect_status(&r, 0, "prove-inclusion of the empty entry");
    save_out(&r, P(f, "proof1"));
    write_text(P(f, "empty"), "");
    sworn(f, &r, NULL, "verify-inclusion", "--vkey", vkey, "--checkpoint", P(f, "cp"), "--index",
          "1", "--entry", P(f, "empty"), P(f, "proof1"), NULL);
    expect_status(&r, 0, "verify-inclusion of the empty entry");
    result_free(&r);
}

/* The signature line of a note: where its base64 starts. */
static char *sig_b64(char *note, const char *name)
{
    char prefix[SWORN_NOTE_NAME_MAX + 8];
    char *line;

    snprintf(prefix, sizeof(prefix), "\n\xe2\x80\x94 %s ", name);
    line = strstr(note, prefix);
    if (line == NULL)
        fail_msg("no signature line by %s in:\n%s", name, note);
    return line + strlen(prefix);
}

static void test_checkpoint_and_verify_note(void **state)
{
    struct fixture *f = *state;
    char *vkey = make_log(f, 7), *other = keygen(f, "other.example", "other.key"), *note, *b64;
    size_t len;
    struct sworn_test_run r;

    assert_int_equal(checkpoint(f, "cp"), 7);
    sworn(f, &r, NULL, "verify-note", "--vkey", vkey, P(f, "cp"), NULL);
    expect_status(&r, 0, "verify-note of a fresh checkpoint");
    expect_in(r.out, "OK: 1 signature verified", "verify-note");
    result_free(&r);
    /* Another key as well does no harm; another key alone verifies nothing. */
    sworn(f, &r, NULL, "verify-note", "--vkey", other, "--vkey", vkey, P(f, "cp"), NULL);
    expect_status(&r, 0, "verify-note with an extra key");
    result_free(&r);
    sworn(f, &r, NULL, "verify-note", "--vkey", other, P(f, "cp"), NULL);
    expect_failure(&r, 1, "verify-note: ", "verify-note with an unknown key only");

    /* One changed character in the signature. */
    note = own(sworn_test_read_file(P(f, "cp"), &len));
    b64 = sig_b64(note, KEY_NAME);
    b64[20] = b64[20] == 'A' ? 'B' : 'A';
    sworn_test_write_file(P(f, "bad-sig"), note, len, 0600);
    sworn(f, &r, NULL, "verify-note", "--vkey", vkey, P(f, "bad-sig"), NULL);
    expect_failure(&r, 1, "verify-note: ", "verify-note with a flipped signature byte");
    /* One changed character in the text (the tree size). */
    note = own(sworn_test_read_file(P(f, "cp"), &len));
    *(strchr(note, '\n') + 1) = '8';
    sworn_test_write_file(P(f, "bad-text"), note, len, 0600);
    sworn(f, &r, NULL, "verify-note", "--vkey", vkey, P(f, "bad-text"), NULL);
    expect_failure(&r, 1, "verify-note: ", "verify-note of a note with a changed size");

    /* Not a note at all, a missing file, a bad key: bad input, 2. */
    write_text(P(f, "not-a-note"), "hello\nworld\n");
    sworn(f, &r, NULL, "verify-note", "--vkey", vkey, P(f, "not-a-note"), NULL);
    expect_failure(&r, 2, "verify-note: ", "verify-note of a file that is not a note");
    sworn(f, &r, NULL, "verify-note", "--vkey", vkey, P(f, "no-such-file"), NULL);
    expect_failure(&r, 2, "no-such-file", "verify-note of a missing file");
    sworn(f, &r, NULL, "verify-note", "--vkey", "nonsense+1234+AAAA", P(f, "cp"), NULL);
    expect_failure(&r, 2, "--vkey", "verify-note with a malformed --vkey");
    sworn(f, &r, NULL, "verify-note", P(f, "cp"), NULL);
    expect_failure(&r, 2, "--vkey", "verify-note without --vkey");
}

static void test_inclusion(void **state)
{
    struct fixture *f = *state;
    char *vkey = make_log(f, 10);
    struct sworn_test_run r;

    assert_int_equal(checkpoint(f, "cp"), 10);
    sworn(f, &r, NULL, "prove-inclusion", "--db", P(f, "log.db"), "--index", "3", NULL);
    expect_status(&r, 0, "prove-inclusion --index 3");
    if (r.out_len != 4 * 45)
        fail_msg("prove-inclusion of 3 in 10 printed %zu bytes, want 4 hash lines:\n%s", r.out_len,
                 r.out);
    save_out(&r, P(f, "proof3"));
    write_text(P(f, "entry3"), "entry-3");
    write_text(P(f, "entry4"), "entry-4");

    sworn(f, &r, NULL, "verify-inclusion", "--vkey", vkey, "--checkpoint", P(f, "cp"), "--index",
          "3", "--entry", P(f, "entry3"), P(f, "proof3"), NULL);
    expect_status(&r, 0, "verify-inclusion of entry 3");
    expect_in(r.out, "OK: entry 3 is in the tree of size 10", "verify-inclusion");
    result_free(&r);
    /* The proof from stdin. */
    sworn(f, &r, P(f, "proof3"), "verify-inclusion", "--vkey", vkey, "--checkpoint", P(f, "cp"),
          "--index", "3", "--entry", P(f, "entry3"), NULL);
    expect_status(&r, 0, "verify-inclusion with the proof on stdin");
    result_free(&r);

    sworn(f, &r, NULL, "verify-inclusion", "--vkey", vkey, "--checkpoint", P(f, "cp"), "--index",
          "3", "--entry", P(f, "entry4"), P(f, "proof3"), NULL);
    expect_failure(&r, 1, "not proven", "verify-inclusion with the wrong entry");
    sworn(f, &r, NULL, "verify-inclusion", "--vkey", vkey, "--checkpoint", P(f, "cp"), "--index",
          "4", "--entry", P(f, "entry3"), P(f, "proof3"), NULL);
    expect_failure(&r, 1, "not proven", "verify-inclusion at the wrong index");
    sworn(f, &r, NULL, "verify-inclusion", "--vkey", vkey, "--checkpoint", P(f, "cp"), "--index",
          "3", "--entry", P(f, "entry3"), P(f, "entry3"), NULL);
    expect_failure(&r, 2, "verify-inclusion: ", "verify-inclusion with a proof file of garbage");

    sworn(f, &r, NULL, "prove-inclusion", "--db", P(f, "log.db"), "--index", "10", NULL);
    expect_failure(&r, 2, "index 10", "prove-inclusion --index 10 in a tree of 10");
    sworn(f, &r, NULL, "prove-inclusion", "--db", P(f, "log.db"), "--index", "2", "--size", "11",
          NULL);
    expect_failure(&r, 2, "size 11", "prove-inclusion --size beyond the tree");
    sworn(f, &r, NULL, "prove-inclusion", "--db", P(f, "log.db"), NULL);
    expect_failure(&r, 2, "--index", "prove-inclusion without --index");
}

static void test_consistency(void **state)
{
    struct fixture *f = *state;
    char *vkey = make_log(f, 5);
    struct sworn_test_run r;
    char *proof;
    size_t len;

    /* No checkpoint yet, and no --size: nothing to prove against. */
    sworn(f, &r, NULL, "prove-consistency", "--db", P(f, "log.db"), "--old", "1", NULL);
    expect_failure(&r, 2, "no checkpoint yet", "prove-consistency before any checkpoint");
    assert_int_equal(checkpoint(f, "cp5"), 5);
    write_text(P(f, "more.txt"), "a\nb\nc\nd\ne\nf\ng\n");
    sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "more.txt"), NULL);
    expect_indices(&r, 5, 7, "append of 7 more");
    assert_int_equal(checkpoint(f, "cp12"), 12);

    sworn(f, &r, NULL, "prove-consistency", "--db", P(f, "log.db"), "--old", "5", NULL);
    expect_status(&r, 0, "prove-consistency --old 5");
    save_out(&r, P(f, "proof"));
    sworn(f, &r, NULL, "verify-consistency", "--vkey", vkey, "--old", P(f, "cp5"), "--new",
          P(f, "cp12"), P(f, "proof"), NULL);
    expect_status(&r, 0, "verify-consistency 5 -> 12");
    expect_in(r.out, "OK: the tree of size 12 extends the tree of size 5", "verify-consistency");
    result_free(&r);

    /* A tree extends itself, with the empty proof. */
    sworn(f, &r, NULL, "prove-consistency", "--db", P(f, "log.db"), "--old", "12", NULL);
    expect_status(&r, 0, "prove-consistency --old 12 in a tree of 12");
    if (r.out_len != 0)
        fail_msg("the consistency proof of a tree with itself is not empty:\n%s", r.out);
    save_out(&r, P(f, "empty-proof"));
    sworn(f, &r, NULL, "verify-consistency", "--vkey", vkey, "--old", P(f, "cp12"), "--new",
          P(f, "cp12"), P(f, "empty-proof"), NULL);
    expect_status(&r, 0, "verify-consistency of a checkpoint with itself");
    result_free(&r);

    /* Swapped: the older tree cannot extend the newer one. */
    sworn(f, &r, NULL, "verify-consistency", "--vkey", vkey, "--old", P(f, "cp12"), "--new",
          P(f, "cp5"), P(f, "proof"), NULL);
    if (r.status == 0)
        fail_msg("verify-consistency with old and new swapped succeeded: %s", r.out);
    expect_in(r.err, "does not extend", "verify-consistency with old and new swapped");
    expect_in(r.err, "size 12", "verify-consistency with old and new swapped");
    result_free(&r);

    /* A changed hash in the proof. */
    proof = own(sworn_test_read_file(P(f, "proof"), &len));
    assert_true(len >= 45);
    proof[10] = proof[10] == 'A' ? 'B' : 'A';
    sworn_test_write_file(P(f, "bad-proof"), proof, len, 0600);
    sworn(f, &r, NULL, "verify-consistency", "--vkey", vkey, "--old", P(f, "cp5"), "--new",
          P(f, "cp12"), P(f, "bad-proof"), NULL);
    expect_failure(&r, 1, "does not extend", "verify-consistency with a changed proof hash");
    /* One hash short. */
    sworn_test_write_file(P(f, "short-proof"), proof, len - 45, 0600);
    sworn(f, &r, NULL, "verify-consistency", "--vkey", vkey, "--old", P(f, "cp5"), "--new",
          P(f, "cp12"), P(f, "short-proof"), NULL);
    expect_failure(&r, 1, "does not extend", "verify-consistency with a proof one hash short");

    sworn(f, &r, NULL, "prove-consistency", "--db", P(f, "log.db"), "--old", "13", NULL);
    expect_failure(&r, 2, "13", "prove-consistency --old beyond the tree");
    sworn(f, &r, NULL, "prove-consistency", "--db", P(f, "log.db"), "--old", "0", NULL);
    expect_failure(&r, 2, "prove-consistency: ", "prove-consistency --old 0");
}

/* Is `path` absent? */
static int absent(const char *path)
{
    return access(path, F_OK) != 0 && errno == ENOENT;
}

static void test_tiles(void **state)
{
    struct fixture *f = *state;
    char *vkey = make_log(f, 300), *other = keygen(f, "other.example", "other.key"), *data;
    size_t len;
    struct sworn_test_run r;

    assert_int_equal(checkpoint(f, "cp"), 300);
    sworn(f, &r, NULL, "export-tiles", "--db", P(f, "log.db"), P(f, "tiles"), NULL);
    expect_status(&r, 0, "export-tiles");
    expect_in(r.out, "exported the tree of size 300", "export-tiles");
    result_free(&r);
    if (absent(P(f, "tiles/checkpoint")) || absent(P(f, "tiles/tile/entries/000")) ||
        absent(P(f, "tiles/tile/entries/001.p/44")) || absent(P(f, "tiles/tile/0/000")) ||
        absent(P(f, "tiles/tile/0/001.p/44")) || absent(P(f, "tiles/tile/1/000.p/1")))
        fail_msg("export-tiles of 300 entries did not write the expected tile files");

    sworn(f, &r, NULL, "import-tiles", "--db", P(f, "copy.db"), "--vkey", vkey, P(f, "tiles"),
          NULL);
    expect_status(&r, 0, "import-tiles");
    expect_in(r.out, "OK: imported and verified 300 entries", "import-tiles");
    result_free(&r);
    /* The imported log proves what the original does. */
    sworn(f, &r, NULL, "prove-inclusion", "--db", P(f, "copy.db"), "--index", "299", NULL);
    expect_status(&r, 0, "prove-inclusion in the imported log");
    save_out(&r, P(f, "proof"));
    write_text(P(f, "entry"), "entry-299");
    sworn(f, &r, NULL, "verify-inclusion", "--vkey", vkey, "--checkpoint", P(f, "cp"), "--index",
          "299", "--entry", P(f, "entry"), P(f, "proof"), NULL);
    expect_status(&r, 0, "verify-inclusion against the imported log's proof");
    result_free(&r);
    /* Into an existing database: refused. */
    sworn(f, &r, NULL, "import-tiles", "--db", P(f, "copy.db"), "--vkey", vkey, P(f, "tiles"),
          NULL);
    expect_failure(&r, 2, "import-tiles: ", "import-tiles over an existing database");
    if (absent(P(f, "copy.db")))
        fail_msg("import-tiles refused to overwrite an existing database, but removed it");
    /* Signed by a key not given. */
    sworn(f, &r, NULL, "import-tiles", "--db", P(f, "other.db"), "--vkey", other, P(f, "tiles"),
          NULL);
    expect_failure(&r, 1, "import-tiles: ", "import-tiles with only an unknown key");
    if (!absent(P(f, "other.db")))
        fail_msg("a refused import-tiles left its database behind");

    /* One changed byte in an entry (entry 0's first byte, after its 2-byte length). */
    tool(f, "cp", "-R", P(f, "tiles"), P(f, "tiles-bad-entry"), NULL);
    data = own(sworn_test_read_file(P(f, "tiles-bad-entry/tile/entries/000"), &len));
    assert_true(len > 3 && data[2] == 'e');
    data[2] = 'E';
    sworn_test_write_file(P(f, "tiles-bad-entry/tile/entries/000"), data, len, 0644);
    sworn(f, &r, NULL, "import-tiles", "--db", P(f, "bad1.db"), "--vkey", vkey,
          P(f, "tiles-bad-entry"), NULL);
    expect_failure(&r, 1, "import-tiles: ", "import-tiles with a changed entry byte");
    if (!absent(P(f, "bad1.db")))
        fail_msg("a failed import-tiles left its database behind");

    /* A missing hash tile. */
    tool(f, "cp", "-R", P(f, "tiles"), P(f, "tiles-missing"), NULL);
    assert_int_equal(unlink(P(f, "tiles-missing/tile/0/000")), 0);
    sworn(f, &r, NULL, "import-tiles", "--db", P(f, "bad2.db"), "--vkey", vkey,
          P(f, "tiles-missing"), NULL);
    expect_failure(&r, 2, "import-tiles: ", "import-tiles with a hash tile deleted");
    if (!absent(P(f, "bad2.db")))
        fail_msg("a failed import-tiles left its database behind");

    /* A missing entry bundle. */
    tool(f, "cp", "-R", P(f, "tiles"), P(f, "tiles-no-bundle"), NULL);
    assert_int_equal(unlink(P(f, "tiles-no-bundle/tile/entries/001.p/44")), 0);
    sworn(f, &r, NULL, "import-tiles", "--db", P(f, "bad3.db"), "--vkey", vkey,
          P(f, "tiles-no-bundle"), NULL);
    expect_failure(&r, 2, "import-tiles: ", "import-tiles with an entry bundle deleted");

    /* Exporting again into the same folder is allowed (the tiles are identical). */
    sworn(f, &r, NULL, "export-tiles", "--db", P(f, "log.db"), P(f, "tiles"), NULL);
    expect_status(&r, 0, "export-tiles again into the same folder");
    result_free(&r);
}

/* Does the `openssl` command run? */
static int have_openssl(void)
{
    const char *argv[] = {"openssl", "version", NULL};
    struct sworn_test_run r;
    pid_t pid;
    int status = 0;

    /* run_argv fails the test on 127, so probe with a bare fork first. */
    fflush(stdout);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);

        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        execvp("openssl", (char *const *)argv);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        assert_int_equal(errno, EINTR);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 0;
    run_argv(&r, NULL, argv);
    result_free(&r);
    return 1;
}

static void test_ecdsa(void **state)
{
    struct fixture *f = *state;
    struct sworn_note_verifier v;
    struct sworn_test_run r;
    char *vkey, *note, *b64, *end, *body_end, *digest;
    uint8_t sig[4 + SWORN_NOTE_SIG_MAX];
    size_t len, sig_len = 0, digest_len;

    if (!have_openssl()) {
        printf("SKIPPED: no openssl command to make and check an ECDSA key\n");
        skip();
    }
    tool(f, "openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
         P(f, "k.pem"), NULL);
    assert_int_equal(chmod(P(f, "k.pem"), 0600), 0);
    tool(f, "openssl", "pkey", "-in", P(f, "k.pem"), "-pubout", "-out", P(f, "pub.pem"), NULL);
    tool(f, "openssl", "pkey", "-in", P(f, "k.pem"), "-pubout", "-outform", "DER", "-out",
         P(f, "pub.der"), NULL);

    sworn(f, &r, NULL, "init", "--db", P(f, "log.db"), "--origin", ORIGIN, "--key", P(f, "k.pem"),
          "--key-name", "ecdsa.example", NULL);
    expect_status(&r, 0, "init with an ECDSA P-256 PEM key");
    if (r.out_len < 2 || r.out[r.out_len - 1] != '\n')
        fail_msg("init printed no verifier key line: %s", r.out);
    vkey = own(strndup(r.out, r.out_len - 1));
    result_free(&r);
    if (strncmp(vkey, "ecdsa.example+", 14) != 0 ||
        sworn_note_verifier_parse(vkey, strlen(vkey), &v) != 0 ||
        v.alg != SWORN_NOTE_ALG_ECDSA_P256)
        fail_msg("init printed \"%s\", not an ECDSA verifier key named ecdsa.example", vkey);
    sworn(f, &r, NULL, "vkey", "--db", P(f, "log.db"), NULL);
    expect_status(&r, 0, "vkey of an ECDSA log");
    if (r.out_len != strlen(vkey) + 1 || strncmp(r.out, vkey, strlen(vkey)) != 0)
        fail_msg("vkey --db printed\n%s\nnot the verifier key init printed\n%s", r.out, vkey);
    result_free(&r);
    /* An auditor derives the same verifier key from the public key alone. */
    sworn(f, &r, NULL, "vkey", "--name", "ecdsa.example", "--spki", P(f, "pub.der"), NULL);
    expect_status(&r, 0, "vkey --name --spki");
    if (r.out_len != strlen(vkey) + 1 || strncmp(r.out, vkey, strlen(vkey)) != 0)
        fail_msg("vkey --spki printed\n%s\nnot the verifier key init printed\n%s", r.out, vkey);
    result_free(&r);
    sworn(f, &r, NULL, "vkey", "--name", "ecdsa.example", "--spki", P(f, "k.pem"), NULL);
    expect_status(&r, 2, "vkey --spki of a file that is not a DER SPKI");
    result_free(&r);
    sworn(f, &r, NULL, "vkey", "--spki", P(f, "pub.der"), NULL);
    expect_status(&r, 2, "vkey --spki without --name");
    result_free(&r);

    write_text(P(f, "in.txt"), "alpha\nbeta\ngamma\n");
    sworn(f, &r, NULL, "append", "--db", P(f, "log.db"), P(f, "in.txt"), NULL);
    expect_indices(&r, 0, 3, "append to an ECDSA log");
    assert_int_equal(checkpoint(f, "cp"), 3);
    sworn(f, &r, NULL, "verify-note", "--vkey", vkey, P(f, "cp"), NULL);
    expect_status(&r, 0, "verify-note of an ECDSA checkpoint");
    result_free(&r);

    /* Check the signature with openssl alone: body = the text up to the blank line. */
    note = own(sworn_test_read_file(P(f, "cp"), &len));
    body_end = strstr(note, "\n\n");
    assert_non_null(body_end);
    sworn_test_write_file(P(f, "body.txt"), note, (size_t)(body_end - note) + 1, 0600);
    b64 = sig_b64(note, "ecdsa.example");
    end = strchr(b64, '\n');
    assert_non_null(end);
    if (sworn_base64_decode(b64, (size_t)(end - b64), sig, sizeof(sig), &sig_len) != 0 ||
        sig_len <= 4)
        fail_msg("the ECDSA signature line does not decode: %.*s", (int)(end - b64), b64);
    sworn_test_write_file(P(f, "sig.der"), sig + 4, sig_len - 4, 0600);
    {
        const char *argv[] = {"openssl",       "dgst",           "-sha256",
                              "-verify",       P(f, "pub.pem"),  "-signature",
                              P(f, "sig.der"), P(f, "body.txt"), NULL};

        run_argv(&r, NULL, argv);
        expect_status(&r, 0, "openssl dgst -verify of the checkpoint signature");
        expect_in(r.out, "Verified OK", "openssl dgst -verify");
        result_free(&r);
    }
    /* The key id is SHA-256 of the DER public key, first 4 bytes. */
    tool(f, "openssl", "dgst", "-sha256", "-binary", "-out", P(f, "spki.sha256"), P(f, "pub.der"),
         NULL);
    digest = own(sworn_test_read_file(P(f, "spki.sha256"), &digest_len));
    assert_int_equal(digest_len, 32);
    if (memcmp(digest, sig, 4) != 0)
        fail_msg("the signature's key id is not the first 4 bytes of SHA-256(SPKI)");

    /* The body changed: openssl refuses it as well (the check above is not vacuous). */
    note[0] = note[0] == 'c' ? 'C' : 'c';
    sworn_test_write_file(P(f, "body2.txt"), note, (size_t)(body_end - note) + 1, 0600);
    {
        const char *argv[] = {
            "openssl",    "dgst",          "-sha256",         "-verify", P(f, "pub.pem"),
            "-signature", P(f, "sig.der"), P(f, "body2.txt"), NULL};

        run_argv(&r, NULL, argv);
        if (r.status == 0)
            fail_msg("openssl verified the ECDSA signature over a changed body");
        result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_help, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keygen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpoint_and_verify_note, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inclusion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_consistency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tiles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ecdsa, setup, teardown),
    };

    bin = getenv("SWORN_LOG_BIN");
    if (bin == NULL || *bin == '\0') {
        printf("SKIPPED: SWORN_LOG_BIN is not set (ctest sets it to the built sworn-log)\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
