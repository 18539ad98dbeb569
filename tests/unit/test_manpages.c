/*
 * test_manpages.c -- the man pages (man/, plain mdoc): this build is installed with
 * `cmake --install` into a throwaway root (DESTDIR, prefix /usr, as test_conventions does), and
 * every page installed there is rendered by the real man(1) and groff:
 *
 *   man --warnings=w -l PAGE   (MANWIDTH=80; groff -ww: every warning category) exit 0, nothing
 *                              on stderr, NAME and SYNOPSIS in the text; a program's page has
 *                              the program's name in its SYNOPSIS, an EXIT STATUS section, and
 *                              every option its --help names
 *
 * The install must hold exactly the pages listed here, and every program installed in bin/,
 * sbin/ and libexec/sworn must have its page (section 1 for bin, 8 for the others): a new program
 * or page without its place in the list fails.
 */
#define _GNU_SOURCE /* asprintf */
#include <ctype.h>
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

struct page {
    const char *name;
    int section;
    const char *program_dir; /* where its program is installed (under the prefix); NULL: a format */
};

static const struct page pages[] = {
    {"sworn-conformance", 1, "bin"},
    {"sworn-hsm", 1, "bin"},
    {"sworn-log", 1, "bin"},
    {"sworn-policy", 1, "bin"},
    {"sworn-run", 1, "bin"},
    {"sworn-tpm", 1, "bin"},
    {"sworn-verify", 1, "bin"},
    {"swornctl", 1, "bin"},
    {"sworn-decisiond.yaml", 5, NULL},
    {"sworn-policy", 5, NULL},
    {"sworn-proxy.yaml", 5, NULL},
    {"sworn-trust-policy", 5, NULL},
    {"sworn-vault", 5, NULL},
    {"sworn-decisiond", 8, "sbin"},
    {"sworn-proxy", 8, "sbin"},
    {"sworn-witness", 8, "sbin"},
    {"sworn-signer", 8, "libexec/sworn"},
    {"sworn-conformance-probe", 8, "libexec/sworn"},
};
#define N_PAGES (sizeof(pages) / sizeof(pages[0]))

struct fix {
    char *root; /* DESTDIR */
};

static int setup(void **state)
{
    struct fix *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->root = sworn_test_install_root("manpages");
    /* The same text on every machine: 80 columns, UTF-8, man's own pager and settings unused. */
    setenv("MANWIDTH", "80", 1);
    setenv("LC_ALL", "C.UTF-8", 1);
    unsetenv("MANOPT");
    unsetenv("MANPAGER");
    unsetenv("PAGER");
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

static char *page_path(const struct fix *f, const char *name, int section)
{
    char *path = NULL;

    if (asprintf(&path, "%s/usr/share/man/man%d/%s.%d", f->root, section, name, section) < 0)
        fail_msg("asprintf");
    return path;
}

static int listed(const char *name, int section)
{
    for (size_t i = 0; i < N_PAGES; i++)
        if (pages[i].section == section && strcmp(pages[i].name, name) == 0)
            return 1;
    return 0;
}

/* Every file of PREFIX/share/man/manN is a listed page of section N. */
static void check_pages_listed(const struct fix *f, int section)
{
    char *path = NULL, suffix[8];
    DIR *d;
    struct dirent *e;

    if (asprintf(&path, "%s/usr/share/man/man%d", f->root, section) < 0)
        fail_msg("asprintf");
    snprintf(suffix, sizeof(suffix), ".%d", section);
    d = opendir(path);
    if (d == NULL)
        fail_msg("%s: no man%d folder installed", path, section);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), sn = strlen(suffix);
        char name[256];

        if (e->d_name[0] == '.')
            continue;
        if (n <= sn || n - sn >= sizeof(name) || strcmp(e->d_name + n - sn, suffix) != 0)
            fail_msg("man%d/%s is not a page of section %d", section, e->d_name, section);
        memcpy(name, e->d_name, n - sn);
        name[n - sn] = '\0';
        if (!listed(name, section))
            fail_msg("man%d/%s is installed but not in test_manpages's list", section, e->d_name);
    }
    closedir(d);
    free(path);
}

/* Every program of PREFIX/dir has its page in section. */
static void check_programs_paged(const struct fix *f, const char *dir, int section)
{
    char *path = NULL;
    DIR *d;
    struct dirent *e;

    if (asprintf(&path, "%s/usr/%s", f->root, dir) < 0)
        fail_msg("asprintf");
    d = opendir(path);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char *page;
        struct stat st;

        if (e->d_name[0] == '.')
            continue;
        page = page_path(f, e->d_name, section);
        if (!listed(e->d_name, section) || stat(page, &st) != 0 || !S_ISREG(st.st_mode))
            fail_msg("%s/%s is installed without its page %s(%d)", dir, e->d_name, e->d_name,
                     section);
        free(page);
    }
    closedir(d);
    free(path);
}

static void test_every_page_installed(void **state)
{
    struct fix *f = *state;

    for (size_t i = 0; i < N_PAGES; i++) {
        char *path = page_path(f, pages[i].name, pages[i].section);
        struct stat st;

        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0444) != 0444)
            fail_msg("%s is not an installed, readable page", path);
        free(path);
    }
    check_pages_listed(f, 1);
    check_pages_listed(f, 5);
    check_pages_listed(f, 8);
    check_programs_paged(f, "bin", 1);
    check_programs_paged(f, "sbin", 8);
    check_programs_paged(f, "libexec/sworn", 8);
}

/*
 * The rendered text with its lines joined, so that a word broken across two lines is found:
 * a line break after a hyphen ('-', or U+2010, which groff puts where it hyphenated a word)
 * joins the two parts, any other line break and its indentation becomes one space. Free it.
 */
static char *joined(const char *text)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    const char *p = text;

    assert_non_null(out);
    while (*p != '\0') {
        if (*p != '\n') {
            *o++ = *p++;
            continue;
        }
        while (*p == '\n' || *p == ' ')
            p++;
        if (o - out >= 3 && memcmp(o - 3, "\xe2\x80\x90", 3) == 0)
            o -= 3;
        else if (o > out && o[-1] != '-')
            *o++ = ' ';
    }
    *o = '\0';
    return out;
}

/* The text of section title (from its heading to the next heading at column 0). Free it. */
static char *section_text(const char *text, const char *title)
{
    char *head = NULL, *s, *end;
    const char *start;

    if (asprintf(&head, "\n%s\n", title) < 0)
        fail_msg("asprintf");
    start = strstr(text, head);
    free(head);
    if (start == NULL)
        return NULL;
    start += strlen(title) + 2;
    for (end = strchr(start, '\n'); end != NULL && end[1] != '\0'; end = strchr(end + 1, '\n'))
        if (isupper((unsigned char)end[1]))
            break;
    s = strndup(start, end == NULL ? strlen(start) : (size_t)(end - start));
    assert_non_null(s);
    return s;
}

/* Every --option the program's --help names is in its page. */
static void check_help_options(const struct fix *f, const struct page *pg, const char *text)
{
    char *prog = NULL, *flat = joined(text);
    struct sworn_test_run r = {0};

    if (asprintf(&prog, "%s/usr/%s/%s", f->root, pg->program_dir, pg->name) < 0)
        fail_msg("asprintf");
    sworn_test_runv(&r, NULL, prog, "--help", NULL);
    sworn_test_run_must(&r, "--help");
    for (const char *p = strstr(r.out, "--"); p != NULL; p = strstr(p, "--")) {
        size_t n = 2;
        char opt[64];

        while (islower((unsigned char)p[n]) || isdigit((unsigned char)p[n]) ||
               (p[n] == '-' && islower((unsigned char)p[n + 1])))
            n++;
        if (n > 2 && n < sizeof(opt) && (p == r.out || !isalnum((unsigned char)p[-1]))) {
            memcpy(opt, p, n);
            opt[n] = '\0';
            if (strstr(flat, opt) == NULL)
                fail_msg("%s(%d) does not name %s, which %s --help names", pg->name, pg->section,
                         opt, pg->name);
        }
        p += n;
    }
    sworn_test_run_free(&r);
    free(prog);
    free(flat);
}

static void test_render(void **state)
{
    struct fix *f = *state;

    for (size_t i = 0; i < N_PAGES; i++) {
        const struct page *pg = &pages[i];
        char *path = page_path(f, pg->name, pg->section), *name_line = NULL, *synopsis;
        struct sworn_test_run r = {0};

        sworn_test_runv(&r, NULL, "man", "--warnings=w", "-l", path, NULL);
        if (r.status != 0 || r.err_len != 0)
            fail_msg("man --warnings=w -l %s: status %d, stderr:\n%s", path, r.status, r.err);
        /* NAME opens with the page's own name, as whatis(1) and apropos(1) read it. */
        if (asprintf(&name_line, "\nNAME\n     %s ", pg->name) < 0)
            fail_msg("asprintf");
        if (strstr(r.out, name_line) == NULL)
            fail_msg("%s(%d): no NAME section naming %s:\n%s", pg->name, pg->section, pg->name,
                     r.out);
        synopsis = section_text(r.out, "SYNOPSIS");
        if (synopsis == NULL)
            fail_msg("%s(%d): no SYNOPSIS section:\n%s", pg->name, pg->section, r.out);
        if (pg->program_dir != NULL) {
            char *usage = NULL;

            if (asprintf(&usage, "     %s ", pg->name) < 0)
                fail_msg("asprintf");
            if (strncmp(synopsis, usage, strlen(usage)) != 0)
                fail_msg("%s(%d): the SYNOPSIS does not start with %s:\n%s", pg->name, pg->section,
                         pg->name, synopsis);
            if (strstr(r.out, "\nEXIT STATUS\n") == NULL)
                fail_msg("%s(%d): no EXIT STATUS section", pg->name, pg->section);
            check_help_options(f, pg, r.out);
            free(usage);
        }
        free(synopsis);
        free(name_line);
        free(path);
        sworn_test_run_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_page_installed),
        cmocka_unit_test(test_render),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
