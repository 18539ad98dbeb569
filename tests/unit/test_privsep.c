/*
 * test_privsep.c -- sworn-decisiond as three processes (docs/decisiond.md, "Processes"), looked at
 * from outside while it runs, as root with run_as and a signer user of its own (the users
 * scripts/install-deps makes):
 *   - the process tree: the monitor (root) has two children, the engine (sworn-engine) and the
 *     signer (sworn-signer, the exec'd sworn-signer program), each with every uid and gid its own,
 *     no supplementary groups, not dumpable (its /proc files are root's), no core files, and
 *     `Seccomp: 2` and `NoNewPrivs: 1` in its status;
 *   - the engine holds no descriptor of the key's files, the signer none of the log or the vault;
 *   - the vault's secret value is in the engine's memory and nowhere in the signer's (both read
 *     through /proc/PID/mem as root: the engine's hit shows the scan works);
 *   - the PIN file and the token are the signer user's alone;
 *   - allows carry receipts; after the signer is killed, allows carry receipts again, from a new
 *     signer process started by the monitor with full rights (the PIN file stays 0600, the
 *     signer's), under the same user;
 *   - a stop: the monitor forwards SIGTERM, the engine makes its final checkpoint, everything
 *     exits 0;
 *   - --check-config refuses a signer left as root, and a signer and engine under one uid, unless
 *     hardening.development is true.
 * Not root: there are no users to switch to; the test says so and is skipped.
 */
#define _GNU_SOURCE /* memmem, syscall */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "privsep_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"

#define PROC_TEXT_MAX 8192

/* TEST_SANITIZER (testutil.h): the sanitizer build keeps the monitor and the engine dumpable, so
 * that LeakSanitizer can run at their exit (decisiond/d_harden.c); the signer is never dumpable. */

static void proc_text(pid_t pid, const char *file, char *buf)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
    if (sworn_test_read_proc(path, buf, PROC_TEXT_MAX) != 0)
        fail_msg("cannot read %s", path);
}

/*
 * Every uid (real, effective, saved, fs) and gid of pid is uid's and its group's; no groups; a
 * filter; no core files; not dumpable (but in the sanitizer build when sanitizer_dumpable).
 */
static void expect_identity(pid_t pid, uid_t uid, int sanitizer_dumpable)
{
    char status[PROC_TEXT_MAX], want[128], path[64];
    const char *groups;
    struct passwd *pw = getpwuid(uid);
    struct stat st;

    assert_non_null(pw);
    proc_text(pid, "status", status);
    snprintf(want, sizeof(want), "\nUid:\t%lu\t%lu\t%lu\t%lu\n", (unsigned long)uid,
             (unsigned long)uid, (unsigned long)uid, (unsigned long)uid);
    if (strstr(status, want) == NULL)
        fail_msg("pid %ld: want uid %lu in all four places:\n%s", (long)pid, (unsigned long)uid,
                 status);
    snprintf(want, sizeof(want), "\nGid:\t%lu\t%lu\t%lu\t%lu\n", (unsigned long)pw->pw_gid,
             (unsigned long)pw->pw_gid, (unsigned long)pw->pw_gid, (unsigned long)pw->pw_gid);
    assert_non_null(strstr(status, want));
    if (uid != 0) {
        groups = strstr(status, "\nGroups:");
        assert_non_null(groups);
        assert_true(strcspn(groups + 8, "\n") == strspn(groups + 8, " \t"));
    }
    assert_non_null(strstr(status, "\nNoNewPrivs:\t1\n"));
    assert_non_null(strstr(status, "\nSeccomp:\t2\n"));
    /* Not dumpable: the kernel gives such a process's /proc files to root, whatever its uid. */
    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    assert_int_equal(stat(path, &st), 0);
#ifdef TEST_SANITIZER
    if (!sanitizer_dumpable)
        assert_int_equal(st.st_uid, 0);
#else
    (void)sanitizer_dumpable;
    assert_int_equal(st.st_uid, 0);
#endif
    proc_text(pid, "limits", status);
    assert_non_null(strstr(status, "Max core file size        0"));
}

/* Whether any readable mapping of pid holds needle (read through /proc/PID/mem, as root). */
static int memory_holds(pid_t pid, const char *needle)
{
    char path[64], line[512];
    FILE *maps;
    int mem, found = 0;
    size_t nlen = strlen(needle);

    snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
    maps = fopen(path, "r");
    assert_non_null(maps);
    snprintf(path, sizeof(path), "/proc/%ld/mem", (long)pid);
    mem = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(mem >= 0);
    while (!found && fgets(line, sizeof(line), maps) != NULL) {
        unsigned long lo, hi;
        char perms[8];
        uint8_t *buf;
        ssize_t n;

        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r')
            continue;
        if (strstr(line, "[vvar]") != NULL || hi - lo > (256ul << 20))
            continue; /* vvar cannot be read; no heap of a signer is that large */
        buf = malloc(hi - lo);
        assert_non_null(buf);
        n = pread(mem, buf, hi - lo, (off_t)lo);
        if (n > 0 && memmem(buf, (size_t)n, needle, nlen) != NULL)
            found = 1;
        free(buf);
    }
    close(mem);
    fclose(maps);
    return found;
}

/* The vault's one secret value, as the stack wrote it. */
static char *vault_secret(const struct sworn_stack *s)
{
    char *path = sworn_test_path(s->dir, "vault.json"), *text, *v, *end, *out;
    size_t len;

    text = sworn_test_read_file(path, &len);
    v = strstr(text, "\"value\": \"");
    assert_non_null(v);
    v += strlen("\"value\": \"");
    end = strchr(v, '"');
    assert_non_null(end);
    out = strndup(v, (size_t)(end - v));
    free(text);
    free(path);
    return out;
}

/* sworn_stack_proc_each over /proc/PID/fd: 1 when descriptor name links under prefix (arg). */
static int fd_under(pid_t pid, const char *name, void *arg)
{
    const char *prefix = arg;
    char fdpath[320], link[1024];
    ssize_t n;

    snprintf(fdpath, sizeof(fdpath), "/proc/%ld/fd/%s", (long)pid, name);
    n = readlink(fdpath, link, sizeof(link) - 1);
    if (n <= 0)
        return 0;
    link[n] = '\0';
    return strncmp(link, prefix, strlen(prefix)) == 0;
}

/* Whether pid has a descriptor open on a path that starts with prefix. */
static int has_fd_under(pid_t pid, const char *prefix)
{
    int rc = sworn_stack_proc_each(pid, "fd", fd_under, (void *)prefix);

    assert_true(rc >= 0);
    return rc;
}

/* Wait (up to 10 s) until pid has exited: its pidfd becomes readable then. */
static void wait_exited(pid_t pid)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    struct pollfd p = {.fd = fd, .events = POLLIN};

    if (fd < 0)
        return; /* ESRCH: gone already */
    assert_int_equal(poll(&p, 1, 10000), 1);
    close(fd);
}

static void test_three_processes(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    uid_t engine_uid = sworn_privsep_user("sworn-engine")->pw_uid,
          signer_uid = sworn_privsep_user("sworn-signer")->pw_uid;
    pid_t engine, signer, again;
    char *secret, *pin, *token;
    struct stat st;

    (void)state;
    assert_int_equal(sworn_stack_up(s, "--no-tpm --privsep"), 0);
    engine = sworn_stack_engine(s->decisiond_pid);
    assert_true(engine > 0);
    /* The first allow has the engine ask the monitor for its signer. */
    sworn_stack_expect_allow(s, "first");
    signer = sworn_stack_signer_child(s->decisiond_pid);
    assert_true(signer > 0);

    expect_identity(s->decisiond_pid, 0, 1);
    expect_identity(engine, engine_uid, 1);
    expect_identity(signer, signer_uid, 0);
    assert_true(engine_uid != signer_uid);

    /* Who holds which files: the key's are the signer's alone, the log the engine's. */
    pin = sworn_test_path(s->dir, "user.pin");
    token = sworn_test_path(s->dir, "token");
    assert_int_equal(stat(pin, &st), 0);
    assert_int_equal(st.st_uid, signer_uid);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_false(has_fd_under(engine, token));
    assert_false(has_fd_under(signer, s->log_db));
    assert_true(has_fd_under(engine, s->log_db));

    /* The vault's secret: in the engine (which serves it), never in the signer. */
    secret = vault_secret(s);
    assert_true(strlen(secret) > 20);
    assert_true(memory_holds(engine, secret));
    assert_false(memory_holds(signer, secret));

    /* Kill the signer: the next allows are signed by a fresh one, as the same user. */
    assert_int_equal(kill(signer, SIGKILL), 0);
    wait_exited(signer);
    sworn_stack_expect_allow(s, "after-kill-1");
    /* The engine asked the monitor for the new signer before it answered that allow. */
    again = sworn_stack_signer_child(s->decisiond_pid);
    assert_true(again > 0 && again != signer);
    expect_identity(again, signer_uid, 0);
    sworn_stack_expect_allow(s, "after-kill-2");
    assert_false(memory_holds(again, secret));
    assert_int_equal(stat(pin, &st), 0);
    assert_int_equal(st.st_uid, signer_uid);
    assert_int_equal(st.st_mode & 0777, 0600);

    /* An orderly stop through the monitor. */
    assert_int_equal(sworn_stack_stop_daemon(s), 0);
    assert_true(sworn_stack_pid_gone(engine));
    assert_true(sworn_stack_pid_gone(again));
    free(secret);
    free(pin);
    free(token);
}

/* How many lines of the daemon's log hold needle. */
static int log_count(struct sworn_stack *s, const char *needle)
{
    char *path = sworn_test_path(s->dir, "decisiond.log"), *text, *at;
    size_t len;
    int n = 0;

    text = sworn_test_read_file(path, &len);
    for (at = text; (at = strstr(at, needle)) != NULL; at += strlen(needle))
        n++;
    free(text);
    free(path);
    return n;
}

/* An allow, or the deny that says the signer cannot sign: which one came. */
static int allow_or_signer_deny(struct sworn_stack *s, const char *id)
{
    Sworn__V1__DecisionReply *r = sworn_stack_decide_path(s, id, "/allowed/x");
    int allowed;

    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_DECISION);
    allowed = r->decision->effect == SWORN__V1__EFFECT__EFFECT_ALLOW;
    if (allowed)
        assert_non_null(r->decision->receipt);
    else
        assert_non_null(strstr(r->decision->reason, "signer"));
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    return allowed;
}

/*
 * A token that refused a PIN counts the try: the monitor must not start signer after signer with
 * the same PIN file (each a fresh process, which cannot know its predecessor was refused) until
 * the token locks. Once the PIN file changes, a signer is started again. And what a signer writes
 * to its stderr reaches the daemon's log only inside the monitor's JSON lines.
 */
static void test_refused_pin_not_offered_again(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    pid_t signer;
    int started, allowed = 0;
    char id[32];

    (void)state;
    assert_int_equal(sworn_stack_up(s, "--no-tpm"), 0);
    sworn_stack_expect_allow(s, "before");
    /* A wrong PIN in the PIN file's place (a new file, as an operator's edit makes one). */
    assert_int_equal(sworn_stack_sh(s, "cp -p \"$PIN_FILE\" good.pin && "
                                       "printf '000000\\n' > wrong.pin && chmod 600 wrong.pin && "
                                       "mv wrong.pin \"$PIN_FILE\""),
                     0);
    signer = sworn_stack_signer_child(s->decisiond_pid);
    assert_true(signer > 0);
    started = log_count(s, "\"event\":\"signer_started\"");
    assert_int_equal(kill(signer, SIGKILL), 0);
    wait_exited(signer);
    /* The next request finds no signer: one is started, the token refuses its PIN. Every later
     * request is denied without another signer (the engine asks again after its backoff). */
    assert_false(allow_or_signer_deny(s, "refused-0"));
    for (int i = 1; i < 400; i++) {
        snprintf(id, sizeof(id), "refused-%d", i);
        assert_false(allow_or_signer_deny(s, id));
    }
    assert_int_equal(log_count(s, "\"event\":\"signer_pin_refused\""), 1);
    assert_int_equal(log_count(s, "\"event\":\"signer_started\""), started + 1);
    /* The right PIN again: a signer is started when the engine next asks. */
    assert_int_equal(sworn_stack_sh(s, "mv good.pin \"$PIN_FILE\""), 0);
    for (int i = 0; i < 20000 && !allowed; i++) {
        snprintf(id, sizeof(id), "fixed-%d", i);
        allowed = allow_or_signer_deny(s, id);
    }
    assert_true(allowed);
    assert_int_equal(log_count(s, "\"event\":\"signer_started\""), started + 2);
    /* Every line of the log is the daemon's JSON: the signer's own words come wrapped. */
    assert_int_equal(sworn_stack_sh(s, "grep -v '^{' decisiond.log | grep -v '^==[0-9]*==' | "
                                       "grep -q . && exit 1 || exit 0"),
                     0);
    assert_int_equal(sworn_stack_stop_daemon(s), 0);
}

static void test_check_config_refuses_shared_uids(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;

    (void)state;
    assert_int_equal(sworn_stack_up(s, "--no-tpm --privsep"), 0);
    /* As written: separated. */
    assert_int_equal(sworn_privsep_check_config(s, "s/^$//"), 0);
    /* The signer left as root. */
    assert_int_equal(sworn_privsep_check_config(s, "/^  user: sworn-signer$/d"), 1);
    assert_true(sworn_privsep_check_out_has(s, "the signer would run as root"));
    /* The signer under the engine's uid. */
    assert_int_equal(
        sworn_privsep_check_config(s, "s/^  user: sworn-signer$/  user: sworn-engine/"), 1);
    assert_true(sworn_privsep_check_out_has(s, "one uid"));
    /* The engine left as root. */
    assert_int_equal(sworn_privsep_check_config(s, "/^run_as: /d"), 1);
    assert_true(sworn_privsep_check_out_has(s, "the engine would run as root"));
    /* The same, with the development flag: accepted, and said so. */
    assert_int_equal(sworn_privsep_check_config(s,
                                                "s/^  user: sworn-signer$/  user: sworn-engine/; "
                                                "$a hardening:\\n  development: true"),
                     0);
    assert_true(sworn_privsep_check_out_has(s, "development"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_three_processes, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_check_config_refuses_shared_uids, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_refused_pin_not_offered_again, sworn_privsep_teardown),
    };

    if (geteuid() != 0) {
        fprintf(stderr, "test_privsep: not root, so there are no users to separate the "
                        "processes into; skipped\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
