/*
 * test_package.c -- the Debian packages (cmake/package.cmake; docs/operations.md, "Install"),
 * built from this build by the real cpack, read by the real dpkg-deb, and the main one installed
 * by the real dpkg into a throwaway root.
 *
 *   - cpack (CPackConfig.cmake of this build, its output in a folder of the test's own) makes
 *     sworn_0.1.0-1_ARCH.deb and sworn-verify_0.1.0-1_ARCH.deb;
 *   - their control fields: names, the project's version, dependencies from dpkg-shlibdeps
 *     (libc6 in both), adduser for sworn only;
 *   - their contents (dpkg-deb --contents): sworn-verify holds the verifier and its two man pages
 *     and nothing else; sworn holds the daemons, the signer, the units and the examples but not
 *     the verifier; every path is root's;
 *   - their maintainer scripts: sworn-verify has none; sworn's start and enable nothing (no
 *     systemctl, deb-systemd-helper, deb-systemd-invoke, invoke-rc.d or service command);
 *   - sworn installed with `dpkg --root ROOT --force-script-chrootless` (dpkg runs the postinst
 *     on this machine with DPKG_ROOT=ROOT; the root has an empty dpkg database, hence
 *     --force-depends): the four system users exist (on this machine: adduser has no root),
 *     each with a group of its own; the folders under ROOT have the owners and modes of
 *     docs/operations.md; nothing is enabled (ROOT/etc/systemd is absent);
 *   - the installed example configuration (/usr/share/sworn/examples/decisiond.yaml), its paths
 *     moved into ROOT, with the files it names made as its comments say (the example policy, a
 *     vault of sworn-engine's, a SoftHSM token made by the installed sworn-hsm, whose key the
 *     example's URI names, its SPKI, the PIN where systemd's LoadCredential= puts it), passes
 *     the installed `sworn-decisiond --check-config` as root; with /etc/sworn group-writable it
 *     does not;
 *   - dpkg --purge removes the programs and leaves the configuration, the folders that hold it
 *     and the users.
 *
 * Root only (dpkg --root, adduser, chown): skipped otherwise. CI runs as root.
 */
#define _GNU_SOURCE /* asprintf */
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#define VERSION "0.1.0-1"

/*
 * Strings made during the run, freed by the group's teardown (so that paths can be made inline,
 * and LeakSanitizer still sees nothing left).
 */
static char *kept[512];
static size_t n_kept;

static char *work, *root, *deb_main, *deb_verify;

static char *keep(char *s)
{
    if (s == NULL || n_kept == sizeof(kept) / sizeof(kept[0]))
        fail_msg("keep: out of room");
    kept[n_kept++] = s;
    return s;
}

/* A fresh formatted string, kept. */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    char *s = NULL;

    va_start(ap, f);
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return keep(s);
}

/* What prog ARGS (NULL-terminated) printed on stdout, kept; it must exit 0. */
static char *out_of(const char *what, const char *prog, ...)
{
    struct sworn_test_run r = {0};
    va_list ap;
    char *out;

    va_start(ap, prog);
    sworn_test_vrun(&r, NULL, prog, ap);
    va_end(ap);
    sworn_test_run_must(&r, what);
    out = r.out;
    r.out = NULL;
    sworn_test_run_free(&r);
    return keep(out);
}

static int group_setup(void **state)
{
    char *arch, *pkgdir;

    (void)state;
    work = keep(sworn_test_tmpdir("package"));
    pkgdir = fmt("%s/pkg", work);
    sworn_test_run_ok("cpack", NULL, sworn_test_bin("SWORN_CPACK"), "--config",
                      fmt("%s/CPackConfig.cmake", sworn_test_binary_dir()), "-B", pkgdir, NULL);
    arch = out_of("dpkg --print-architecture", "dpkg", "--print-architecture", NULL);
    arch[strcspn(arch, "\n")] = '\0';
    deb_main = fmt("%s/sworn_%s_%s.deb", pkgdir, VERSION, arch);
    deb_verify = fmt("%s/sworn-verify_%s_%s.deb", pkgdir, VERSION, arch);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (root != NULL)
        sworn_test_rmtree(root);
    if (work != NULL)
        sworn_test_rmtree(work);
    while (n_kept > 0)
        free(kept[--n_kept]);
    return 0;
}

/* One control field of a package (kept), without its trailing newline. */
static char *field(const char *deb, const char *name)
{
    char *v = out_of("dpkg-deb --field", "dpkg-deb", "--field", deb, name, NULL);

    v[strcspn(v, "\n")] = '\0';
    return v;
}

static void test_control(void **state)
{
    const char *debs[] = {deb_main, deb_verify}, *names[] = {"sworn", "sworn-verify"};

    (void)state;
    for (int i = 0; i < 2; i++) {
        const char *depends = field(debs[i], "Depends");

        assert_string_equal(field(debs[i], "Package"), names[i]);
        assert_string_equal(field(debs[i], "Version"), VERSION);
        /* dpkg-shlibdeps found what the programs link. */
        if (strstr(depends, "libc6") == NULL)
            fail_msg("%s: Depends: %s names no libc6 (dpkg-shlibdeps)", names[i], depends);
        /* The postinst's adduser; the verifier has no maintainer script. */
        if ((strstr(depends, "adduser") != NULL) != (i == 0))
            fail_msg("%s: Depends: %s", names[i], depends);
    }
}

/*
 * The lines of a dpkg-deb --contents listing, one at a time: *line is the next one (cut at its
 * newline, in place), its path (after " ./") in *path. Returns 0 at the end.
 */
static int next_line(char **cursor, char **line, const char **path)
{
    char *p = *cursor, *nl, *at;

    if (*p == '\0')
        return 0;
    nl = strchr(p, '\n');
    if (nl != NULL)
        *nl = '\0';
    *cursor = nl != NULL ? nl + 1 : p + strlen(p);
    at = strstr(p, " ./");
    if (at == NULL)
        fail_msg("a listing line without a path: %s", p);
    *line = p;
    *path = at + 3;
    return 1;
}

/* Whether the listing (as dpkg-deb printed it) holds ./path. */
static int lists(const char *listing, const char *path)
{
    return strstr(listing, fmt(" ./%s\n", path)) != NULL;
}

static void test_contents(void **state)
{
    static const char *verifier[] = {"usr/bin/sworn-verify", "usr/share/man/man1/sworn-verify.1",
                                     "usr/share/man/man5/sworn-trust-policy.5"};
    static const char *main_has[] = {
        "usr/sbin/sworn-decisiond",
        "usr/sbin/sworn-proxy",
        "usr/sbin/sworn-witness",
        "usr/libexec/sworn/sworn-signer",
        "usr/bin/swornctl",
        "usr/bin/sworn-hsm",
        "usr/bin/sworn-run",
        "usr/lib/systemd/system/sworn-decisiond.service",
        "usr/lib/systemd/system/sworn-proxy.service",
        "usr/lib/systemd/system/sworn-witness.service",
        "usr/share/sworn/examples/decisiond.yaml",
        "usr/share/sworn/examples/policy.yaml",
        "usr/share/sworn/examples/proxy.yaml",
        "usr/share/man/man8/sworn-decisiond.8",
        "usr/share/doc/sworn/operations.md",
    };
    const size_t n_verifier = sizeof(verifier) / sizeof(verifier[0]);
    char *lv = out_of("dpkg-deb --contents", "dpkg-deb", "--contents", deb_verify, NULL),
         *lm = out_of("dpkg-deb --contents", "dpkg-deb", "--contents", deb_main, NULL), *cursor,
         *line;
    const char *path;
    size_t files = 0;

    (void)state;
    for (size_t k = 0; k < n_verifier; k++) {
        if (!lists(lv, verifier[k]))
            fail_msg("sworn-verify lacks %s", verifier[k]);
        if (lists(lm, verifier[k]))
            fail_msg("sworn holds the verifier's %s", verifier[k]);
    }
    for (size_t k = 0; k < sizeof(main_has) / sizeof(main_has[0]); k++)
        if (!lists(lm, main_has[k]))
            fail_msg("sworn lacks %s", main_has[k]);
    /* The verifier's package: those three files and the folders above them, nothing else. */
    for (cursor = lv; next_line(&cursor, &line, &path);) {
        int known = 0;

        if (line[0] == 'd')
            continue;
        for (size_t k = 0; k < n_verifier; k++)
            known |= strcmp(path, verifier[k]) == 0;
        if (!known)
            fail_msg("sworn-verify holds more than the verifier: %s", line);
        files++;
    }
    assert_int_equal(files, n_verifier);
    /* Every path root's: the postinst gives the folders their owners, on the machine. */
    for (cursor = lm; next_line(&cursor, &line, &path);)
        if (strstr(line, " root/root ") == NULL)
            fail_msg("sworn: not root's: %s", line);
}

/* Fail when a line of script outside its comments runs a command that starts or enables. */
static void starts_nothing(const char *name, const char *script)
{
    static const char *starters[] = {"systemctl",   "deb-systemd-helper", "deb-systemd-invoke",
                                     "invoke-rc.d", "service ",           "start-stop-daemon"};

    for (const char *line = script; *line != '\0';) {
        size_t len = strcspn(line, "\n");
        const char *p = line + strspn(line, " \t");

        if (*p != '#')
            for (size_t k = 0; k < sizeof(starters) / sizeof(starters[0]); k++) {
                const char *at = strstr(p, starters[k]);

                if (at != NULL && at < line + len)
                    fail_msg("%s runs %s: %.*s", name, starters[k], (int)len, line);
            }
        line += len;
        if (*line == '\n')
            line++;
    }
}

static void test_scripts(void **state)
{
    static const char *scripts[] = {"preinst", "postinst", "prerm", "postrm"};
    char *cm = fmt("%s/control-sworn", work), *cv = fmt("%s/control-verify", work);

    (void)state;
    sworn_test_run_ok("dpkg-deb --control", NULL, "dpkg-deb", "--control", deb_main, cm, NULL);
    sworn_test_run_ok("dpkg-deb --control", NULL, "dpkg-deb", "--control", deb_verify, cv, NULL);
    for (size_t k = 0; k < sizeof(scripts) / sizeof(scripts[0]); k++) {
        char *pm = fmt("%s/%s", cm, scripts[k]), *text = sworn_test_read_file_opt(pm, NULL);
        struct stat st;

        if (access(fmt("%s/%s", cv, scripts[k]), F_OK) == 0)
            fail_msg("sworn-verify has a %s; it needs none", scripts[k]);
        if (text == NULL) {
            if (strcmp(scripts[k], "postinst") == 0)
                fail_msg("sworn has no postinst");
            continue;
        }
        keep(text);
        starts_nothing(scripts[k], text);
        assert_int_equal(stat(pm, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0755);
    }
}

/* Fail unless ROOT/path is a folder of owner:group with mode. */
static void folder_is(const char *path, const char *owner, const char *group, unsigned mode)
{
    struct passwd *pw = getpwnam(owner);
    struct group *gr = getgrnam(group);
    struct stat st;

    assert_non_null(pw);
    assert_non_null(gr);
    if (lstat(fmt("%s%s", root, path), &st) != 0 || !S_ISDIR(st.st_mode))
        fail_msg("%s: no folder", path);
    if (st.st_uid != pw->pw_uid || st.st_gid != gr->gr_gid || (st.st_mode & 07777) != mode)
        fail_msg("%s: %u:%u mode %04o; want %s:%s %04o", path, (unsigned)st.st_uid,
                 (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777), owner, group, mode);
}

/* dpkg on the throwaway root: its scripts run here with DPKG_ROOT set (see the top). */
static void dpkg_root(const char *what, const char *action, const char *arg)
{
    sworn_test_run_ok(what, NULL, "dpkg", fmt("--root=%s", root), "--force-script-chrootless",
                      "--force-depends", action, arg, NULL);
}

static void test_install(void **state)
{
    static const char *users[] = {"sworn-engine", "sworn-signer", "sworn-proxy", "sworn-witness"};

    (void)state;
    /* An empty dpkg database in a fresh root, 0755 (the engine's user passes through it). */
    root = keep(sworn_test_tmpdir("package-root"));
    assert_int_equal(chmod(root, 0755), 0);
    sworn_test_run_ok("mkdir", NULL, "mkdir", "-p", fmt("%s/var/lib/dpkg/info", root),
                      fmt("%s/var/lib/dpkg/updates", root), fmt("%s/var/lib/dpkg/triggers", root),
                      NULL);
    sworn_test_write_file(fmt("%s/var/lib/dpkg/status", root), "", 0, 0644);
    dpkg_root("dpkg --root --install sworn", "--install", deb_main);
    for (size_t k = 0; k < sizeof(users) / sizeof(users[0]); k++) {
        struct passwd *pw = getpwnam(users[k]);
        struct group *gr = getgrnam(users[k]);

        if (pw == NULL || gr == NULL)
            fail_msg("no user or group %s after the postinst", users[k]);
        /* A group of its own (the monitor refuses an engine and a signer that share one). */
        assert_int_equal(pw->pw_gid, gr->gr_gid);
        assert_int_not_equal(pw->pw_uid, 0);
    }
    folder_is("/etc/sworn", "root", "root", 0755);
    folder_is("/etc/sworn/credentials", "root", "root", 0700);
    folder_is("/var/lib/sworn", "root", "root", 0711);
    folder_is("/var/lib/sworn/log", "sworn-engine", "sworn-engine", 0700);
    folder_is("/var/lib/sworn/tiles", "sworn-engine", "sworn-engine", 0755);
    folder_is("/var/lib/sworn-witness", "sworn-witness", "sworn-witness", 0700);
    /* Nothing enabled: no unit linked into a target. */
    if (access(fmt("%s/etc/systemd", root), F_OK) == 0)
        fail_msg("the install made %s/etc/systemd", root);
}

/*
 * The example with every path of the package's layout moved into the root (kept): /etc/sworn,
 * /var/lib/sworn, /run/ and /usr/libexec/sworn where a path starts (after a space, a quote or a
 * bracket). The PKCS#11 module stays the machine's.
 */
static char *moved_into_root(const char *text)
{
    static const char *prefixes[] = {"/etc/sworn", "/var/lib/sworn", "/run/", "/usr/libexec/sworn"};
    size_t rl = strlen(root);
    char *out = keep(malloc(strlen(text) * (rl + 1) + 1)), *w = out;

    for (const char *p = text; *p != '\0'; p++) {
        if (p > text && strchr(" \"'[", p[-1]) != NULL)
            for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++)
                if (strncmp(p, prefixes[k], strlen(prefixes[k])) == 0) {
                    memcpy(w, root, rl);
                    w += rl;
                    break;
                }
        *w++ = *p;
    }
    *w = '\0';
    return out;
}

/* The value of the example's signer.key line, without its quotes (kept). */
static char *example_key(const char *text)
{
    const char *at = strstr(text, "\n  key: \"");

    if (at == NULL)
        fail_msg("the example names no signer.key");
    at += strlen("\n  key: \"");
    return keep(strndup(at, strcspn(at, "\"")));
}

/* The installed sworn-hsm with the arguments after what (NULL-terminated); it must exit 0. */
static void hsm(const char *what, ...)
{
    struct sworn_test_run r = {0};
    va_list ap;

    va_start(ap, what);
    sworn_test_vrun(&r, NULL, fmt("%s/usr/bin/sworn-hsm", root), ap);
    va_end(ap);
    sworn_test_run_must(&r, what);
    sworn_test_run_free(&r);
}

/* The installed sworn-decisiond --check-config on path; its exit status, its output in r. */
static int check_config(const char *path, struct sworn_test_run *r)
{
    sworn_test_runv(r, NULL, fmt("%s/usr/sbin/sworn-decisiond", root), "--config", path,
                    "--check-config", NULL);
    return r->status;
}

static void test_check_config(void **state)
{
    struct passwd *engine = getpwnam("sworn-engine");
    struct sworn_test_run r = {0};
    char *example, *conf, *tok, *so, *pin, *cred_dir, *vault, *path;

    (void)state;
    assert_non_null(root); /* test_install ran */
    assert_non_null(engine);
    example =
        keep(sworn_test_read_file(fmt("%s/usr/share/sworn/examples/decisiond.yaml", root), NULL));
    conf = moved_into_root(example);
    path = fmt("%s/etc/sworn/decisiond.yaml", root);
    sworn_test_write_file(path, conf, strlen(conf), 0644);
    sworn_test_run_ok("cp policy", NULL, "cp", fmt("%s/usr/share/sworn/examples/policy.yaml", root),
                      fmt("%s/etc/sworn/policy.yaml", root), NULL);
    /* The vault: sworn-engine's, 0600. */
    vault = fmt("%s/etc/sworn/vault.json", root);
    sworn_test_write_file(vault, "{\"version\": 1, \"credentials\": []}\n", 34, 0600);
    assert_int_equal(chown(vault, engine->pw_uid, engine->pw_gid), 0);
    /* The token the example's comment makes, with the installed sworn-hsm, and the PIN where
     * the unit's LoadCredential= reads it. */
    tok = fmt("%s/tok", work);
    so = fmt("%s/so.pin", work);
    pin = fmt("%s/etc/sworn/credentials/hsm.pin", root);
    sworn_test_write_file(pin, "4711\n", 5, 0600);
    sworn_test_write_file(so, "87654321", 8, 0600);
    setenv("SOFTHSM2_CONF", fmt("%s/softhsm2.conf", tok), 1);
    hsm("sworn-hsm init-dev-token", "init-dev-token", "--dir", tok, "--label", "sworn",
        "--so-pin-file", so, "--pin-file", pin, NULL);
    hsm("sworn-hsm keygen", "keygen", "--token", "sworn", "--pin-file", pin, "--purpose",
        "checkpoint", "--date", "20250101", NULL);
    /* The example's URI names that key: its public key is the pinned SPKI. */
    hsm("sworn-hsm pubkey", "pubkey", "--uri", example_key(example), "--der", "--out",
        fmt("%s/etc/sworn/log-key.spki", root), NULL);
    /* What RuntimeDirectory= and LoadCredential= make before the unit's ExecStartPre. */
    cred_dir = fmt("%s/run/credentials/sworn-decisiond.service", root);
    sworn_test_run_ok("mkdir", NULL, "mkdir", "-p", "-m", "0755", fmt("%s/run/sworn", root),
                      cred_dir, NULL);
    sworn_test_run_ok("install", NULL, "install", "-m", "0400", pin, fmt("%s/hsm.pin", cred_dir),
                      NULL);
    assert_int_equal(chmod(cred_dir, 0500), 0);

    if (check_config(path, &r) != 0 || strstr(r.out, "configuration ok") == NULL ||
        strstr(r.out, "policy ok") == NULL)
        fail_msg("the installed sworn-decisiond --check-config on the example: status %d\n%s%s",
                 r.status, r.out, r.err);
    sworn_test_run_free(&r);

    /* The folders' modes are what makes it pass: /etc/sworn writable by its group is refused. */
    assert_int_equal(chmod(fmt("%s/etc/sworn", root), 0775), 0);
    if (check_config(path, &r) == 0)
        fail_msg("--check-config accepted /etc/sworn at mode 0775:\n%s", r.out);
    sworn_test_run_free(&r);
    assert_int_equal(chmod(fmt("%s/etc/sworn", root), 0755), 0);
    unsetenv("SOFTHSM2_CONF");
}

static void test_purge(void **state)
{
    (void)state;
    assert_non_null(root); /* test_install ran */
    dpkg_root("dpkg --root --purge sworn", "--purge", "sworn");
    if (access(fmt("%s/usr/sbin/sworn-decisiond", root), F_OK) == 0)
        fail_msg("sworn-decisiond is still there after the purge");
    /* The operator's files and the folders that hold them stay; so do the users. */
    if (access(fmt("%s/etc/sworn/decisiond.yaml", root), F_OK) != 0)
        fail_msg("the purge removed /etc/sworn/decisiond.yaml");
    folder_is("/etc/sworn/credentials", "root", "root", 0700);
    assert_non_null(getpwnam("sworn-engine"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control),      cmocka_unit_test(test_contents),
        cmocka_unit_test(test_scripts),      cmocka_unit_test(test_install),
        cmocka_unit_test(test_check_config), cmocka_unit_test(test_purge),
    };

    if (geteuid() != 0) {
        fprintf(stderr, "test_package: not root (dpkg --root, adduser and chown need root); "
                        "skipped\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
