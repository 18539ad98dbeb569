/*
 * test_safefile.c -- the checked open of common/safefile.h (review finding 13), alone and where
 * it is used: the configuration (sworn_dconfig_load), the policy (sworn_policy_load_trusted), the
 * PIN and key files (sworn_secretfile_read) and the vault. A symbolic link (at the file or at a
 * folder on the way), a file or a folder that group or others may write, and (as root, which can
 * give files to other users) a file or folder of another uid are refused; /tmp's sticky bit is
 * not a way around the check of what is inside it, nor is a hard link made there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "policy.h"
#include "safefile.h"
#include "secretfile.h"
#include "testutil.h"
#include "vault.h"

struct fx {
    char *dir; /* a fresh folder of ours, 0700, in /tmp */
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    f->dir = sworn_test_tmpdir("safefile");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* dir/name, written with text and mode (the caller frees the path). */
static char *put(const char *dir, const char *name, const char *text, unsigned mode)
{
    char *p = sworn_test_path(dir, name);

    sworn_test_write_file(p, text, strlen(text), 0600);
    assert_int_equal(chmod(p, mode), 0);
    return p;
}

/* sworn_safefile_read of path must fail with code and a message holding want. */
static void refused(const char *path, unsigned flags, uid_t also, enum sworn_err_code code,
                    const char *want)
{
    char *data = NULL;
    size_t len = 0;

    if (sworn_safefile_read(path, flags, also, "test file", 1024, &data, &len) == 0)
        fail_msg("%s accepted", path);
    assert_null(data);
    assert_int_equal(sworn_err_code(), code);
    if (strstr(sworn_err_msg(), want) == NULL)
        fail_msg("%s: '%s' lacks '%s'", path, sworn_err_msg(), want);
}

static void accepted(const char *path, unsigned flags, uid_t also, const char *text)
{
    char *data = NULL;
    size_t len = 0;

    if (sworn_safefile_read(path, flags, also, "test file", 1024, &data, &len) != 0)
        fail_msg("%s refused: %s", path, sworn_err_msg());
    assert_int_equal(len, strlen(text));
    assert_memory_equal(data, text, len);
    free(data);
}

static void test_checks(void **state)
{
    struct fx *f = *state;
    char *ok = put(f->dir, "ok", "bytes", 0644), *p, *sub, *link, *fifo;
    char cwd[4096], rel[4096];

    accepted(ok, 0, SWORN_SAFEFILE_NOBODY, "bytes");
    /* Relative, with "." and "..": the same file. */
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(f->dir), 0);
    accepted("ok", 0, SWORN_SAFEFILE_NOBODY, "bytes");
    snprintf(rel, sizeof(rel), "./../%s/ok", strrchr(f->dir, '/') + 1);
    accepted(rel, 0, SWORN_SAFEFILE_NOBODY, "bytes");
    assert_int_equal(chdir(cwd), 0);
    /* Writable by group or others. */
    assert_int_equal(chmod(ok, 0664), 0);
    refused(ok, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "mode 0664");
    assert_int_equal(chmod(ok, 0666), 0);
    refused(ok, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "mode 0666");
    assert_int_equal(chmod(ok, 0644), 0);
    /* A secret that group or others may read. */
    refused(ok, SWORN_SAFEFILE_SECRET, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "0600 or stricter");
    /* A link to it. */
    link = sworn_test_path(f->dir, "link");
    assert_int_equal(symlink(ok, link), 0);
    refused(link, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "symbolic link");
    /* A folder on the way that is a link. */
    sub = sworn_test_path(f->dir, "sub");
    assert_int_equal(mkdir(sub, 0755), 0);
    p = put(sub, "f", "in sub", 0644);
    accepted(p, 0, SWORN_SAFEFILE_NOBODY, "in sub");
    free(p);
    free(link);
    link = sworn_test_path(f->dir, "sublink");
    assert_int_equal(symlink(sub, link), 0);
    p = sworn_test_path(link, "f");
    refused(p, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "symbolic link");
    free(p);
    /* A folder on the way that group or others may write; sticky is fine (as /tmp is). */
    p = sworn_test_path(sub, "f");
    assert_int_equal(chmod(sub, 0775), 0);
    refused(p, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "not writable by group or others");
    assert_int_equal(chmod(sub, 0757), 0);
    refused(p, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "not writable by group or others");
    assert_int_equal(chmod(sub, 01777), 0);
    accepted(p, 0, SWORN_SAFEFILE_NOBODY, "in sub");
    /* A hard link in that sticky folder: its owner and mode are the linked file's, whoever
     * made the link (a user may link a file of root's into /tmp under the name checked when
     * fs.protected_hardlinks is off): refused. The same file with two links in folders only
     * their owner writes (sub made 01755, and the test's own folder) is fine. */
    {
        char *hard = sworn_test_path(sub, "hard"), *other = sworn_test_path(f->dir, "hard2");

        assert_int_equal(linkat(AT_FDCWD, ok, AT_FDCWD, hard, 0), 0);
        refused(hard, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "2 hard links");
        accepted(ok, 0, SWORN_SAFEFILE_NOBODY, "bytes");
        assert_int_equal(chmod(sub, 01755), 0);
        accepted(hard, 0, SWORN_SAFEFILE_NOBODY, "bytes");
        assert_int_equal(unlink(hard), 0);
        assert_int_equal(linkat(AT_FDCWD, ok, AT_FDCWD, other, 0), 0);
        accepted(other, 0, SWORN_SAFEFILE_NOBODY, "bytes");
        accepted(ok, 0, SWORN_SAFEFILE_NOBODY, "bytes");
        assert_int_equal(unlink(other), 0);
        free(hard);
        free(other);
    }
    assert_int_equal(chmod(sub, 0755), 0);
    /* Missing; a folder; a FIFO (refused at once, never waited on). */
    free(p);
    p = sworn_test_path(f->dir, "missing");
    refused(p, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_NOTFOUND, "does not exist");
    refused(sub, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "not a regular file");
    fifo = sworn_test_path(f->dir, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    refused(fifo, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "not a regular file");
    /* Other owners (root can give files away). */
    if (geteuid() == 0) {
        char *q = sworn_test_path(sub, "f");

        assert_int_equal(chown(q, 65534, 65534), 0);
        refused(q, 0, SWORN_SAFEFILE_NOBODY, SWORN_ERR_IO, "owned by uid 65534");
        accepted(q, 0, 65534, "in sub");
        accepted(q, 0, SWORN_SAFEFILE_ANYONE, "in sub");
        assert_int_equal(chown(q, 0, 0), 0);
        /* A folder of another user's: they could replace the file. */
        assert_int_equal(chown(sub, 65534, 65534), 0);
        refused(q, 0, 65534, SWORN_ERR_IO, "owner uid 65534");
        assert_int_equal(chown(sub, 0, 0), 0);
        free(q);
    } else {
        print_message("not root: the other-owner cases are not run\n");
    }
    free(p);
    free(fifo);
    free(link);
    free(sub);
    free(ok);
}

/* A minimal configuration for sworn_dconfig_load (shape only; the files need not exist). */
static const char config_text[] = "log: {database: log.db, origin: t.example/log}\n"
                                  "signer: {key: k.pem}\n"
                                  "policy: policy.yaml\n"
                                  "sockets: {decision: d.sock, admin: a.sock}\n"
                                  "peers: {proxy_uids: [1001], operator_uids: [0]}\n";

static void test_configuration_and_policy(void **state)
{
    struct fx *f = *state;
    char *cfg = put(f->dir, "decisiond.yaml", config_text, 0644), *link, *sub, *pol, *pollink;
    struct sworn_dconfig *c = NULL;
    struct sworn_policy *p = NULL;

    assert_int_equal(sworn_dconfig_load(cfg, &c), 0);
    sworn_dconfig_free(c);
    c = NULL;
    /* Symlinked: refused. */
    link = sworn_test_path(f->dir, "link.yaml");
    assert_int_equal(symlink(cfg, link), 0);
    assert_int_equal(sworn_dconfig_load(link, &c), -1);
    assert_null(c);
    assert_non_null(strstr(sworn_err_msg(), "symbolic link"));
    /* World-writable: refused. */
    assert_int_equal(chmod(cfg, 0666), 0);
    assert_int_equal(sworn_dconfig_load(cfg, &c), -1);
    assert_non_null(strstr(sworn_err_msg(), "mode 0666"));
    assert_int_equal(chmod(cfg, 0644), 0);
    /* In a group-writable folder: refused. */
    sub = sworn_test_path(f->dir, "etc");
    assert_int_equal(mkdir(sub, 0775), 0);
    assert_int_equal(chmod(sub, 0775), 0);
    free(cfg);
    cfg = put(sub, "decisiond.yaml", config_text, 0644);
    assert_int_equal(sworn_dconfig_load(cfg, &c), -1);
    assert_non_null(strstr(sworn_err_msg(), "not writable by group or others"));
    assert_int_equal(chmod(sub, 0755), 0);
    assert_int_equal(sworn_dconfig_load(cfg, &c), 0);
    sworn_dconfig_free(c);

    /* The policy as the daemon loads it: the same checks. */
    pol = put(f->dir, "policy.yaml", "version: 1\nrules:\n  - {id: a, effect: deny}\n", 0644);
    if (sworn_policy_load_trusted(pol, &p) != 0)
        fail_msg("%s", sworn_err_msg());
    sworn_policy_free(p);
    p = NULL;
    pollink = sworn_test_path(f->dir, "policy-link.yaml");
    assert_int_equal(symlink(pol, pollink), 0);
    assert_int_equal(sworn_policy_load_trusted(pollink, &p), -1);
    assert_non_null(strstr(sworn_err_msg(), "symbolic link"));
    assert_int_equal(chmod(pol, 0646), 0);
    assert_int_equal(sworn_policy_load_trusted(pol, &p), -1);
    assert_non_null(strstr(sworn_err_msg(), "mode 0646"));
    assert_null(p);
    free(pollink);
    free(pol);
    free(sub);
    free(link);
    free(cfg);
}

static void test_pin_key_and_vault(void **state)
{
    struct fx *f = *state;
    char *pin = put(f->dir, "user.pin", "1234\n", 0600), *link, *sub, *inner;
    uint8_t buf[64];
    size_t len = 0;
    struct sworn_vault *v = NULL;

    assert_int_equal(sworn_secretfile_read(pin, "PIN file", buf, sizeof(buf), &len), 0);
    assert_int_equal(len, 5);
    /* Symlinked PIN file: refused. */
    link = sworn_test_path(f->dir, "pin-link");
    assert_int_equal(symlink(pin, link), 0);
    assert_int_equal(sworn_secretfile_read(link, "PIN file", buf, sizeof(buf), &len), -1);
    assert_non_null(strstr(sworn_err_msg(), "symbolic link"));
    /* In a folder others may write (they could swap it): refused. */
    sub = sworn_test_path(f->dir, "pins");
    assert_int_equal(mkdir(sub, 0700), 0);
    inner = put(sub, "user.pin", "1234\n", 0600);
    assert_int_equal(chmod(sub, 0770), 0);
    assert_int_equal(sworn_secretfile_read(inner, "PIN file", buf, sizeof(buf), &len), -1);
    assert_non_null(strstr(sworn_err_msg(), "not writable by group or others"));
    assert_int_equal(chmod(sub, 0700), 0);
    if (geteuid() == 0) {
        /* Another user's PIN file: refused (the review: its owner was not checked), unless the
         * caller names that user (root checking the signer's user's file). */
        assert_int_equal(chown(pin, 65534, 65534), 0);
        assert_int_equal(sworn_secretfile_read(pin, "PIN file", buf, sizeof(buf), &len), -1);
        assert_non_null(strstr(sworn_err_msg(), "owned by uid 65534"));
        assert_int_equal(
            sworn_secretfile_read_owned(pin, "PIN file", 65534, buf, sizeof(buf), &len), 0);
        assert_int_equal(chown(pin, 0, 0), 0);
    }
    /* The vault: a link on its folders is refused as well. */
    free(link);
    link = sworn_test_path(f->dir, "pins-link");
    assert_int_equal(symlink(sub, link), 0);
    free(inner);
    inner = sworn_test_path(link, "vault.json");
    assert_int_equal(sworn_vault_load(inner, &v), -1);
    assert_null(v);
    assert_non_null(strstr(sworn_err_msg(), "symbolic link"));
    memset(buf, 0, sizeof(buf));
    free(inner);
    free(sub);
    free(link);
    free(pin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_configuration_and_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pin_key_and_vault, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
