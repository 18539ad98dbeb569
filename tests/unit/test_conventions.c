/*
 * test_conventions.c -- the command-line conventions (common/cli.h, docs/cli.md) on every installed
 * program: this build is installed with `cmake --install` into a throwaway root (DESTDIR, prefix
 * /usr), and each program found there is run with --help, --version and an unknown option.
 *
 *   --help      exit 0, "usage: PROGRAM" first, the shared exit statuses, nothing on stderr
 *   --version   exit 0, exactly "PROGRAM RELEASE (commit COMMIT)\n", nothing on stderr
 *   --no-such-option   exit 2 (sworn-run, a wrapper: 125), a message on stderr, nothing on stdout
 *
 * The install must hold exactly the programs listed here: a new program without its place in the
 * list (and so without this test) fails.
 */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "testutil.h"

struct program {
    const char *dir; /* under the prefix */
    const char *name;
    int usage_status; /* the exit status of an unknown option */
};

static const struct program programs[] = {
    {"bin", "sworn-conformance", 2},
    {"bin", "sworn-hsm", 2},
    {"bin", "sworn-log", 2},
    {"bin", "sworn-policy", 2},
    {"bin", "sworn-run", 125},
    {"bin", "sworn-tpm", 2},
    {"bin", "sworn-verify", 2},
    {"bin", "swornctl", 2},
    {"sbin", "sworn-decisiond", 2},
    {"sbin", "sworn-proxy", 2},
    {"sbin", "sworn-witness", 2},
    {"libexec/sworn", "sworn-signer", 2},
    {"libexec/sworn", "sworn-conformance-probe", 2},
};
#define N_PROGRAMS (sizeof(programs) / sizeof(programs[0]))

struct fix {
    char *root; /* DESTDIR */
};

static int setup(void **state)
{
    struct fix *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->root = sworn_test_install_root("conventions");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;

    sworn_test_tmpdir_drop(&f->root);
    free(f);
    return 0;
}

static char *installed(const struct fix *f, const struct program *p)
{
    char *path = NULL;

    if (asprintf(&path, "%s/usr/%s/%s", f->root, p->dir, p->name) < 0)
        fail_msg("asprintf");
    return path;
}

/* Every file of PREFIX/dir is a listed program (none forgotten by this test). */
static void check_listed(const struct fix *f, const char *dir)
{
    char *path = NULL;
    DIR *d;
    struct dirent *e;

    if (asprintf(&path, "%s/usr/%s", f->root, dir) < 0)
        fail_msg("asprintf");
    d = opendir(path);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        int known = 0;

        if (e->d_name[0] == '.')
            continue;
        for (size_t i = 0; i < N_PROGRAMS; i++)
            known |= strcmp(programs[i].dir, dir) == 0 && strcmp(programs[i].name, e->d_name) == 0;
        if (!known)
            fail_msg("%s/%s is installed but not in test_conventions's list", dir, e->d_name);
    }
    closedir(d);
    free(path);
}

static void test_every_program_installed(void **state)
{
    struct fix *f = *state;

    for (size_t i = 0; i < N_PROGRAMS; i++) {
        char *path = installed(f, &programs[i]);
        struct stat st;

        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0111) != 0111)
            fail_msg("%s is not an installed executable", path);
        free(path);
    }
    check_listed(f, "bin");
    check_listed(f, "sbin");
    check_listed(f, "libexec/sworn");
}

static void test_help(void **state)
{
    struct fix *f = *state;

    for (size_t i = 0; i < N_PROGRAMS; i++) {
        const struct program *p = &programs[i];
        char *path = installed(f, p), *want = NULL;
        struct sworn_test_run r = {0};

        sworn_test_runv(&r, NULL, path, "--help", NULL);
        if (r.status != 0 || r.err_len != 0)
            fail_msg("%s --help: status %d, stderr \"%s\"", p->name, r.status, r.err);
        if (asprintf(&want, "usage: %s ", p->name) < 0)
            fail_msg("asprintf");
        if (strncmp(r.out, want, strlen(want)) != 0)
            fail_msg("%s --help does not start with \"%s\": %.80s", p->name, want, r.out);
        /* Each --help says what its exit statuses mean. */
        if (strstr(r.out, "Exit status") == NULL)
            fail_msg("%s --help says nothing of its exit statuses", p->name);
        if (p->usage_status == 2 &&
            (strstr(r.out, "  0  done") == NULL || strstr(r.out, "  1  failed") == NULL ||
             strstr(r.out, "  2  bad usage") == NULL))
            fail_msg("%s --help lacks the shared exit statuses:\n%s", p->name, r.out);
        free(want);
        free(path);
        sworn_test_run_free(&r);
    }
}

/* "PROGRAM RELEASE (commit COMMIT)\n": RELEASE three dot-separated numbers, COMMIT non-empty
 * printable text without spaces or parentheses. */
static void check_version_line(const char *name, const char *out)
{
    size_t n = strlen(name), dots = 0;
    const char *p = out + n + 1, *c;

    if (strncmp(out, name, n) != 0 || out[n] != ' ')
        fail_msg("%s --version: \"%s\"", name, out);
    if (*p < '0' || *p > '9')
        fail_msg("%s --version: no release number: \"%s\"", name, out);
    while ((*p >= '0' && *p <= '9') || *p == '.')
        dots += *p++ == '.';
    if (dots != 2 || strncmp(p, " (commit ", 9) != 0)
        fail_msg("%s --version: \"%s\"", name, out);
    c = p + 9;
    for (p = c; *p != ')'; p++)
        if (*p <= ' ' || *p > '~' || *p == '(')
            fail_msg("%s --version: a bad commit: \"%s\"", name, out);
    if (p == c || strcmp(p, ")\n") != 0)
        fail_msg("%s --version: \"%s\"", name, out);
}

static void test_version(void **state)
{
    struct fix *f = *state;
    char first[256] = "";

    for (size_t i = 0; i < N_PROGRAMS; i++) {
        const struct program *p = &programs[i];
        char *path = installed(f, p);
        struct sworn_test_run r = {0};
        const char *rest;

        sworn_test_runv(&r, NULL, path, "--version", NULL);
        if (r.status != 0 || r.err_len != 0)
            fail_msg("%s --version: status %d, stderr \"%s\"", p->name, r.status, r.err);
        check_version_line(p->name, r.out);
        /* One build, one release and commit: every program says the same after its name. */
        rest = r.out + strlen(p->name);
        if (first[0] == '\0')
            snprintf(first, sizeof(first), "%s", rest);
        else if (strcmp(first, rest) != 0)
            fail_msg("%s --version says%s, another program%s", p->name, rest, first);
        free(path);
        sworn_test_run_free(&r);
    }
}

static void test_unknown_option(void **state)
{
    struct fix *f = *state;

    for (size_t i = 0; i < N_PROGRAMS; i++) {
        const struct program *p = &programs[i];
        char *path = installed(f, p);
        struct sworn_test_run r = {0};

        sworn_test_runv(&r, NULL, path, "--no-such-option", NULL);
        if (r.status != p->usage_status || r.err_len == 0 || r.out_len != 0)
            fail_msg("%s --no-such-option: status %d (want %d), stdout %zu bytes, stderr \"%s\"",
                     p->name, r.status, p->usage_status, r.out_len, r.err);
        free(path);
        sworn_test_run_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_program_installed),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_unknown_option),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
