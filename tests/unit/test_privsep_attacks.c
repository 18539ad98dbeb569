/*
 * test_privsep_attacks.c -- attacks on the separation of sworn-decisiond's three processes (the
 * root monitor, the engine as run_as, the signer as signer.user; docs/decisiond.md, "Processes"),
 * each made from outside a running stack (scripts/dev-stack --privsep), as root playing the
 * attacker's uid. A test fails when the attack gets in.
 *
 * Attacks that got in (each of these tests failed against the code it was written for):
 *   - test_engine_replaces_config: the dev stack's folder was the engine's (drwx--x--x
 *     sworn-engine), and decisiond.yaml is in it. A process of the engine's uid renames a
 *     configuration of its own over it (signer.program: a script of its own); at the next start
 *     (a crash of the engine is enough, under a service manager that restarts) the root monitor
 *     read it and exec'd the script as root. [fixed for the program:
 * test_check_refuses_engine_writable_program]
 *   - test_engine_undoes_separation: the same replacement with signer.user: sworn-engine and
 *     hardening.development: true, which every check accepts: the monitor started on it. Nothing
 *     checked who can replace the configuration (or the folders above it). [fixed: started as
 *     root, the monitor refuses a configuration, and a PIN or key file in a folder, that is not
 *     root's alone, folders up to / included (config.c need_trusted); scripts/dev-stack keeps its
 *     folder root's and gives the engine a log folder of its own. Both tests first check that the
 *     stack's layout stops the replacement, then hand the folder to the engine (an operator's
 *     mistake) and check that the monitor refuses to start]
 *   - test_socket_chmod_follows_symlink: the monitor bound a socket, then chmod(path, 0666). In a
 *     sockets' folder the engine's uid may write (the dev stack's), it swaps the fresh socket for a
 *     symbolic link between bind and chmod; the root monitor's chmod followed it and made any file
 *     0666 (/etc/shadow). The test stops the monitor (ptrace) right after the bind, to make the
 *     race deterministic. [fixed: the socket is made 0666 by a umask at bind, no chmod by path;
 *     since issue 11 (finding 3) the monitor refuses a sockets' folder anyone but root may write,
 *     before any bind, and binds, chowns and chmods relative to the checked folder's descriptor]
 *   - test_check_refuses_engine_writable_program: signer.program and signer.module were only
 *     "existing regular files"; the monitor execs the program (and the signer loads the module)
 *     as root at every signer start, so a program the engine's uid owns, or one in a folder it may
 *     write, is root for the engine the next time it asks for a signer. [fixed: started as root,
 *     both must be owned by root (or the monitor's uid) and not writable by group or others, and
 *     so must every folder above them (a sticky folder may be)]
 *   - test_check_refuses_engine_pin_file: a PIN file owned by run_as (0600) passed --check-config:
 *     the engine reads the PIN. [fixed: a PIN or key file of the engine's uid is refused]
 *   - test_channel_unread_answers: a compromised engine sends 'S' thousands of times and reads no
 *     answer: the monitor blocked in sendmsg on the full channel, deaf to SIGTERM and to its
 *     children's exits, for as long as the engine liked. [fixed: the answer is sent without
 *     blocking; one that cannot leave ends the engine, as any other breach of the channel does]
 *   - test_check_refuses_shared_or_root_gid: only uids were compared. A signer.user in run_as's
 *     group shares the engine's group-accessible files; a run_as or signer.user whose group is 0
 *     runs with root's group. [fixed: started as root, the groups must differ and neither be 0]
 *
 * Attacks that did not get in (guards against regressions of what test_privsep does not look at):
 *   - test_engine_uid_reaches_nothing: as the engine's uid: the PIN file, the token, the signer's
 *     and the monitor's (and the engine's own: not dumpable) /proc/PID/mem and environ, ptrace and
 *     pidfd_getfd of the signer and the engine, signals to the signer and the monitor;
 *   - test_signer_uid_reaches_nothing: as the signer's uid: the vault, the log, the tiles, the
 *     engine's memory, signals to the engine and the monitor; as nobody: no PIN and no vault value
 *     in the three processes' cmdline, their environ unreadable;
 *   - test_signer_descriptors: the signer holds fds 0..3 only (none of the monitor's listeners);
 *   - test_channel_flood_and_garbage: the engine's channel to the monitor (taken from the engine
 *     with pidfd_getfd, as a compromised engine holds it): 20 'S' requests leave one live signer,
 *     never a crowd; a byte that is not 'S' or 'K' ends the engine, the monitor and the signer;
 *   - test_kill_monitor: SIGKILL to the monitor takes the engine and the signer with it;
 *   - test_kill_engine: SIGKILL to the engine (by its own uid) ends the monitor and the signer;
 *   - test_startup_records_development: a configuration that shares the engine's uid with the
 *     signer under hardening.development is recorded as such (the uids and the flag in Startup);
 *   - in test_check_refuses_shared_or_root_gid: signer.user an alias of run_as's uid under another
 *     name, signer.user "0", run_as root.
 * Not root: no users to switch to; skipped.
 */
#define _GNU_SOURCE /* memmem, pidfd */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frame.h"
#include "logstore.h"
#include "monitor.h"
#include "privsep_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"

#define WAIT_GONE_MS 10000
#define REPLY_SIZE sizeof(struct d_monitor_reply)

/* Wait (on a pidfd: the stack's processes are not our children) until pid has exited. */
static int wait_gone(pid_t pid, int timeout_ms)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0), r;
    struct pollfd p;

    if (fd < 0)
        return errno == ESRCH;
    p.fd = fd;
    p.events = POLLIN;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    close(fd);
    return r == 1 || sworn_stack_pid_gone(pid);
}

/* A stack with its three processes running; OUT: the engine's and the signer's pids. */
static void up(struct sworn_stack *s, pid_t *engine, pid_t *signer)
{
    assert_int_equal(sworn_stack_up(s, "--no-tpm --privsep"), 0);
    sworn_stack_expect_allow(s, "first");
    *engine = sworn_stack_engine(s->decisiond_pid);
    *signer = sworn_stack_signer_child(s->decisiond_pid);
    assert_true(*engine > 0 && *signer > 0);
}

/* --- the engine's uid replaces the configuration in its folder ------------------------------ */

/* This build's sworn-signer, beside the sworn-decisiond ctest names. */
static char *signer_binary(void)
{
    const char *d = sworn_test_bin("SWORN_DECISIOND_BIN");
    const char *tail = strstr(d, "decisiond/sworn-decisiond");
    char *out;

    assert_non_null(tail);
    assert_true(asprintf(&out, "%.*ssigner/sworn-signer", (int)(tail - d), d) > 0);
    return out;
}

struct replace_arg {
    const char *dir, *config, *script, *out, *signer;
    int development; /* instead of a program: the signer under the engine's uid, "development" */
};

static int replace_config(void *p)
{
    const struct replace_arg *a = p;
    char tmp[600], line[1024];
    FILE *in, *out;
    int fd;

    /* A "signer" of the engine's: it says who it runs as, then runs the real one. */
    if (!a->development) {
        fd = open(a->script, O_WRONLY | O_CREAT | O_EXCL, 0755);
        if (fd < 0 || dprintf(fd, "#!/bin/sh\nid -u > %s\nexec %s \"$@\"\n", a->out, a->signer) < 0)
            return 1;
        close(fd);
    }
    snprintf(tmp, sizeof(tmp), "%s/.decisiond.yaml.new", a->dir);
    in = fopen(a->config, "r");
    out = fopen(tmp, "w");
    if (in == NULL || out == NULL)
        return 2;
    while (fgets(line, sizeof(line), in) != NULL) {
        if (strcmp(line, "  user: sworn-signer\n") != 0)
            fputs(line, out);
        else if (a->development)
            fputs("  user: sworn-engine\n", out);
        else
            fprintf(out, "%s  program: %s\n", line, a->script);
    }
    if (a->development)
        fputs("hardening:\n  development: true\n", out);
    fclose(in);
    if (fclose(out) != 0)
        return 3;
    /* The folder is the engine's: the root-owned configuration is replaced, not written. */
    return rename(tmp, a->config) == 0 ? 0 : 4;
}

/* The operator's mistake the monitor must catch: the stack's folder (the configuration's) handed
 * to the engine's user. */
static void give_folder_to_engine(struct sworn_stack *s)
{
    assert_int_equal(sworn_stack_sh(s, "chown sworn-engine: \"%s\"", s->dir), 0);
}

static void test_engine_replaces_config(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    struct replace_arg a = {0};
    char *script, *out, *signer;
    pid_t engine, sig;
    int started;

    (void)state;
    up(s, &engine, &sig);
    script = sworn_test_path(s->dir, "engine-signer.sh");
    out = sworn_test_path(s->dir, "engine-signer.uid");
    signer = signer_binary();
    a.dir = s->dir;
    a.config = s->config;
    a.script = script;
    a.out = out;
    a.signer = signer;
    /* In the stack's layout the configuration's folder is root's: the engine cannot replace it. */
    assert_int_not_equal(sworn_privsep_as_user("sworn-engine", replace_config, &a), 0);
    assert_int_not_equal(access(script, F_OK), 0);
    /* An operator who gives the engine the configuration's folder (as the stack once did): the
     * engine replaces it, and the monitor must refuse what it finds there. */
    give_folder_to_engine(s);
    assert_int_equal(sworn_privsep_as_user("sworn-engine", replace_config, &a), 0);
    /* The operator (or a service manager, after the engine crashed) starts it again. */
    assert_int_equal(sworn_stack_stop_daemon(s), 0);
    started = sworn_stack_start(s);
    if (access(out, F_OK) == 0) {
        size_t len;
        char *uid = sworn_test_read_file(out, &len);

        fail_msg("the monitor ran the engine's program %s (as uid %s); the start %s", script, uid,
                 started == 0 ? "succeeded" : "failed");
    }
    assert_int_not_equal(started, 0); /* the monitor refused the engine's configuration */
    free(script);
    free(out);
    free(signer);
}

/* The same replacement, with what every other check accepts: the separation undone. */
static void test_engine_undoes_separation(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    struct replace_arg a = {0};
    pid_t engine, sig;

    (void)state;
    up(s, &engine, &sig);
    a.dir = s->dir;
    a.config = s->config;
    a.development = 1;
    assert_int_not_equal(sworn_privsep_as_user("sworn-engine", replace_config, &a), 0);
    give_folder_to_engine(s);
    assert_int_equal(sworn_privsep_as_user("sworn-engine", replace_config, &a), 0);
    assert_int_equal(sworn_stack_stop_daemon(s), 0);
    if (sworn_stack_start(s) == 0) {
        char path[64], status[4096];
        const char *uid;

        sig = sworn_stack_signer_child(s->decisiond_pid);
        snprintf(path, sizeof(path), "/proc/%ld/status", (long)sig);
        uid = sig > 0 && sworn_test_read_proc(path, status, sizeof(status)) == 0
                  ? strstr(status, "\nUid:")
                  : NULL;
        fail_msg("the root monitor took the configuration the engine's uid wrote (signer.user: "
                 "sworn-engine, hardening.development: true) and is up; signer pid %ld%.*s",
                 (long)sig, uid == NULL ? 0 : (int)strcspn(uid + 1, "\n") + 1, uid);
    }
}

/* --- the socket's chmod follows a symbolic link --------------------------------------------- */

struct swap_arg {
    const char *link_tmp, *sock;
};

static int swap_socket(void *p)
{
    const struct swap_arg *a = p;

    return rename(a->link_tmp, a->sock) == 0 ? 0 : 1;
}

static void test_socket_chmod_follows_symlink(void **state)
{
#if defined(__x86_64__)
    struct sworn_stack *s = &sworn_privsep_stack;
    pid_t engine, sig, pid;
    char *target_dir, *target, *link_tmp;
    struct swap_arg a;
    struct stat st;
    int status, binds = 0, in_call = 0, swapped = 0, exited = 0, exit_status = 0;
    char err_path[600];

    (void)state;
    up(s, &engine, &sig);
    assert_int_equal(sworn_stack_stop_daemon(s), 0);
    /* The sockets in a folder the engine's uid may write (the stack once had them so), the
     * configuration staying in root's. */
    assert_int_equal(
        sworn_stack_sh(s,
                       "mkdir sockets && chown sworn-engine: sockets && "
                       "sed -i 's|^  decision: .*$|  decision: %s/sockets/decision.sock|; "
                       "s|^  admin: .*$|  admin: %s/sockets/admin.sock|' \"$CONFIG\"",
                       s->dir, s->dir),
        0);
    snprintf(s->decision, sizeof(s->decision), "%s/sockets/decision.sock", s->dir);
    snprintf(s->admin, sizeof(s->admin), "%s/sockets/admin.sock", s->dir);
    snprintf(err_path, sizeof(err_path), "%s/attack.err", s->dir);
    /* What the attacker wants to open up: a root file in a root folder. */
    target_dir = sworn_test_tmpdir("attack-target");
    target = sworn_test_path(target_dir, "secret");
    sworn_test_write_file(target, "root's\n", 7, 0600);
    link_tmp = sworn_test_path(s->dir, "sockets/.link");
    assert_int_equal(symlink(target, link_tmp), 0);
    assert_int_equal(lchown(link_tmp, sworn_privsep_user("sworn-engine")->pw_uid,
                            sworn_privsep_user("sworn-engine")->pw_gid),
                     0);

    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR),
            err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        dup2(nul, 1);
        dup2(err >= 0 ? err : nul, 2);
        /* LeakSanitizer cannot run in a traced process (its exit check ptraces the process's
         * own threads, which fails under this test's trace and kills the monitor mid-exit):
         * in the sanitizer build the traced monitor runs without it. Ignored by other builds. */
        setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1", 1);
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execl(sworn_test_bin("SWORN_DECISIOND_BIN"), "sworn-decisiond", "--config", s->config,
              (char *)NULL);
        _exit(127);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid); /* the exec's stop */
    assert_true(WIFSTOPPED(status));
    assert_int_equal(
        ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)),
        0);
    /* Follow the monitor's calls until its second bind (the admin socket) has returned: by then
     * whatever it does to the decision socket's path after binding it is done. */
    while (binds < 2) {
        struct user_regs_struct regs;
        int sig_to_pass = 0;

        assert_int_equal(ptrace(PTRACE_SYSCALL, pid, NULL, NULL), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            exited = 1;
            exit_status = status;
            break;
        }
        if (!(WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80))) {
            sig_to_pass = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;
            if (sig_to_pass != 0 && sig_to_pass != SIGTRAP) {
                assert_int_equal(ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig_to_pass), 0);
                assert_int_equal(waitpid(pid, &status, 0), pid);
            }
            continue;
        }
        in_call = !in_call;
        if (in_call)
            continue;
        assert_int_equal(ptrace(PTRACE_GETREGS, pid, NULL, &regs), 0);
        if (regs.orig_rax != SYS_bind || (long)regs.rax != 0)
            continue;
        binds++;
        if (binds == 1) {
            /* The decision socket exists now: the engine's uid swaps it for a link. */
            a.link_tmp = link_tmp;
            a.sock = s->decision;
            assert_int_equal(sworn_privsep_as_user("sworn-engine", swap_socket, &a), 0);
            swapped = 1;
        }
    }
    kill(pid, SIGKILL);
    (void)waitpid(pid, &status, 0);
    if (!swapped) {
        /* Since issue 11 (finding 3) the monitor binds only in a folder that no one but root can
         * write, so it refuses this one before any bind: there is nothing to swap. */
        size_t elen;
        char *err = sworn_test_read_file(err_path, &elen);

        assert_int_equal(binds, 0);
        assert_true(exited && WIFEXITED(exit_status) && WEXITSTATUS(exit_status) != 0);
        if (strstr(err, "socket folder") == NULL)
            fail_msg("the monitor stopped, but not for the socket folder: %s", err);
        free(err);
    }
    assert_int_equal(stat(target, &st), 0);
    (void)unlink(s->decision);
    if ((st.st_mode & 0777) != 0600)
        fail_msg("the root monitor's chmod followed the engine's link: %s is now %04o", target,
                 (unsigned)(st.st_mode & 0777));
    sworn_test_rmtree(target_dir);
    free(target_dir);
    free(target);
    free(link_tmp);
#else
    (void)state;
    skip();
#endif
}

/* --- what --check-config lets through ------------------------------------------------------- */

static void test_check_refuses_engine_writable_program(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;

    (void)state;
    assert_int_equal(sworn_stack_up(s, "--no-tpm --privsep"), 0);
    assert_int_equal(sworn_privsep_check_config(s, "s/^$//"), 0);
    /* A copy of the real signer that the engine's uid owns. */
    assert_int_equal(sworn_stack_sh(s, "install -m 0755 -o sworn-engine -g sworn-engine "
                                       "\"$BUILD/signer/sworn-signer\" engine-signer"),
                     0);
    assert_int_equal(sworn_privsep_check_config(
                         s, "s|^  user: sworn-signer$|&\\n  program: '\"$PWD\"'/engine-signer|"),
                     1);
    assert_true(sworn_privsep_check_out_has(s, "signer.program"));
    /* Root's, but in a folder of the engine's: the engine renames another over it. */
    assert_int_equal(sworn_stack_sh(s, "mkdir engine-bin && chown sworn-engine: engine-bin && "
                                       "install -m 0755 -o root -g root "
                                       "\"$BUILD/signer/sworn-signer\" engine-bin/root-signer"),
                     0);
    assert_int_equal(
        sworn_privsep_check_config(
            s, "s|^  user: sworn-signer$|&\\n  program: '\"$PWD\"'/engine-bin/root-signer|"),
        1);
    assert_true(sworn_privsep_check_out_has(s, "signer.program"));
    /* The PKCS#11 module, which the signer loads as root: the engine's copy. */
    assert_int_equal(sworn_stack_sh(s, "install -m 0644 -o sworn-engine -g sworn-engine "
                                       "/usr/lib/softhsm/libsofthsm2.so engine-module.so"),
                     0);
    assert_int_equal(
        sworn_privsep_check_config(s, "s|^  module: .*$|  module: '\"$PWD\"'/engine-module.so|"),
        1);
    assert_true(sworn_privsep_check_out_has(s, "signer.module"));
}

static void test_check_refuses_engine_pin_file(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;

    (void)state;
    assert_int_equal(sworn_stack_up(s, "--no-tpm --privsep"), 0);
    assert_int_equal(sworn_stack_sh(s, "install -m 0600 -o sworn-engine -g sworn-engine "
                                       "user.pin engine.pin"),
                     0);
    assert_int_equal(
        sworn_privsep_check_config(s, "s|^  pin_file: .*$|  pin_file: '\"$PWD\"'/engine.pin|"), 1);
    assert_true(sworn_privsep_check_out_has(s, "signer.pin_file"));
}

static void test_check_refuses_shared_or_root_gid(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    const struct passwd *eng;
    char *passwd, pre[1024], extra[512];
    uid_t engine_uid;
    gid_t engine_gid;
    char *text;
    size_t len;

    (void)state;
    eng = sworn_privsep_user("sworn-engine");
    engine_uid = eng->pw_uid;
    engine_gid = eng->pw_gid;
    assert_int_equal(sworn_stack_up(s, "--no-tpm --privsep"), 0);
    /* Users that do not exist on the host, seen only in a mount namespace of the check's own. */
    text = sworn_test_read_file("/etc/passwd", &len);
    snprintf(extra, sizeof(extra),
             "sworn-atk-gid0:x:64990:0::/nonexistent:/usr/sbin/nologin\n"
             "sworn-atk-samegid:x:64991:%lu::/nonexistent:/usr/sbin/nologin\n"
             "sworn-atk-alias:x:%lu:64992::/nonexistent:/usr/sbin/nologin\n"
             "sworn-atk-engine0:x:%lu:0::/nonexistent:/usr/sbin/nologin\n",
             (unsigned long)engine_gid, (unsigned long)engine_uid, (unsigned long)engine_uid);
    passwd = sworn_test_path(s->dir, "passwd.attack");
    {
        FILE *f = fopen(passwd, "w");

        assert_non_null(f);
        fputs(text, f);
        if (len > 0 && text[len - 1] != '\n')
            fputc('\n', f);
        fputs(extra, f);
        assert_int_equal(fclose(f), 0);
    }
    free(text);
    snprintf(pre, sizeof(pre), "unshare -m sh -c 'mount --bind %s /etc/passwd && exec \"$@\"' --",
             passwd);
    /* As written, in the namespace too: separated. */
    assert_int_equal(sworn_privsep_check_config_in(s, pre, "s/^$//"), 0);
    /* Regressions: one uid under two names; a numeric user; run_as root. */
    assert_int_equal(
        sworn_privsep_check_config_in(s, pre, "s/^  user: sworn-signer$/  user: sworn-atk-alias/"),
        1);
    assert_true(sworn_privsep_check_out_has(s, "one uid"));
    assert_int_equal(
        sworn_privsep_check_config_in(s, pre, "s/^  user: sworn-signer$/  user: \"0\"/"), 1);
    assert_int_equal(sworn_privsep_check_config_in(s, pre, "s/^run_as: .*$/run_as: root/"), 1);
    assert_true(sworn_privsep_check_out_has(s, "root"));
    /* The signer with root's group. */
    assert_int_equal(
        sworn_privsep_check_config_in(s, pre, "s/^  user: sworn-signer$/  user: sworn-atk-gid0/"),
        1);
    assert_true(sworn_privsep_check_out_has(s, "group"));
    /* The signer in the engine's group. */
    assert_int_equal(sworn_privsep_check_config_in(
                         s, pre, "s/^  user: sworn-signer$/  user: sworn-atk-samegid/"),
                     1);
    assert_true(sworn_privsep_check_out_has(s, "group"));
    /* The engine (the vault's owner's uid) with root's group. */
    assert_int_equal(
        sworn_privsep_check_config_in(s, pre, "s/^run_as: .*$/run_as: sworn-atk-engine0/"), 1);
    assert_true(sworn_privsep_check_out_has(s, "group"));
    free(passwd);
}

/* --- what the other uids reach -------------------------------------------------------------- */

struct procs {
    pid_t monitor, engine, signer;
    const char *dir, *log_db;
    const char *secret, *pin;
};

static int open_fails(const char *path, int flags, int want_errno)
{
    int fd = open(path, flags | O_CLOEXEC);

    if (fd >= 0) {
        close(fd);
        return 0;
    }
    return errno == want_errno;
}

static int proc_fails(pid_t pid, const char *file)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
    return open_fails(path, O_RDONLY, EACCES);
}

static int engine_probe(void *p)
{
    const struct procs *x = p;
    char path[600];
    int pidfd;

    snprintf(path, sizeof(path), "%s/user.pin", x->dir);
    if (!open_fails(path, O_RDONLY, EACCES))
        return 1;
    snprintf(path, sizeof(path), "%s/token", x->dir);
    if (!open_fails(path, O_RDONLY | O_DIRECTORY, EACCES))
        return 2;
    if (!proc_fails(x->signer, "mem") || !proc_fails(x->signer, "environ"))
        return 3;
    if (!proc_fails(x->monitor, "mem"))
        return 4;
    if (kill(x->signer, 0) == 0 || errno != EPERM || kill(x->monitor, 0) == 0 || errno != EPERM)
        return 5;
    if (ptrace(PTRACE_ATTACH, x->signer, NULL, NULL) == 0)
        return 6;
#ifndef TEST_SANITIZER
    /* The engine itself, not dumpable (in the sanitizer build it stays dumpable on purpose, for
     * LeakSanitizer, so its own uid may look into it there: decisiond/d_harden.c). */
    if (!proc_fails(x->engine, "mem") || !proc_fails(x->engine, "environ"))
        return 8;
    if (ptrace(PTRACE_ATTACH, x->engine, NULL, NULL) == 0)
        return 9;
    pidfd = (int)syscall(SYS_pidfd_open, x->engine, 0);
    if (pidfd < 0 || syscall(SYS_pidfd_getfd, pidfd, 3, 0) >= 0 || errno != EPERM)
        return 7;
    close(pidfd);
#else
    (void)pidfd;
#endif
    return 0;
}

static void test_engine_uid_reaches_nothing(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    struct procs x = {0};

    (void)state;
    up(s, &x.engine, &x.signer);
    x.monitor = s->decisiond_pid;
    x.dir = s->dir;
    assert_int_equal(sworn_privsep_as_user("sworn-engine", engine_probe, &x), 0);
}

static int signer_probe(void *p)
{
    const struct procs *x = p;
    char path[600];

    snprintf(path, sizeof(path), "%s/vault.json", x->dir);
    if (!open_fails(path, O_RDONLY, EACCES))
        return 1;
    if (!open_fails(x->log_db, O_RDONLY, EACCES))
        return 2;
    snprintf(path, sizeof(path), "%s/tiles", x->dir);
    if (!open_fails(path, O_RDONLY | O_DIRECTORY, EACCES))
        return 3;
    if (!proc_fails(x->engine, "mem") || !proc_fails(x->engine, "environ"))
        return 4;
    if (kill(x->engine, 0) == 0 || errno != EPERM || kill(x->monitor, 0) == 0 || errno != EPERM)
        return 5;
    return 0;
}

/* As anyone: the three cmdlines hold neither the PIN nor the vault's value; environ is closed. */
static int anyone_probe(void *p)
{
    const struct procs *x = p;
    pid_t pids[3] = {x->monitor, x->engine, x->signer};

    for (int i = 0; i < 3; i++) {
        char path[64], buf[8192];
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pids[i]);
        fd = open(path, O_RDONLY);
        if (fd < 0)
            return 10 + i;
        n = read(fd, buf, sizeof(buf));
        close(fd);
        if (n <= 0)
            return 20 + i;
        if (memmem(buf, (size_t)n, x->secret, strlen(x->secret)) != NULL ||
            memmem(buf, (size_t)n, x->pin, strlen(x->pin)) != NULL)
            return 30 + i;
        if (!proc_fails(pids[i], "environ"))
            return 40 + i;
    }
    return 0;
}

static void test_signer_uid_reaches_nothing(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    struct procs x = {0};
    char *vault, *vault_path, *pin_path, *pin, *v, *end;
    size_t len;

    (void)state;
    up(s, &x.engine, &x.signer);
    x.monitor = s->decisiond_pid;
    x.dir = s->dir;
    x.log_db = s->log_db;
    assert_int_equal(sworn_privsep_as_user("sworn-signer", signer_probe, &x), 0);
    /* The secrets to look for. */
    vault_path = sworn_test_path(s->dir, "vault.json");
    vault = sworn_test_read_file(vault_path, &len);
    v = strstr(vault, "\"value\": \"");
    assert_non_null(v);
    v += strlen("\"value\": \"");
    end = strchr(v, '"');
    assert_non_null(end);
    *end = '\0';
    x.secret = v;
    pin_path = sworn_test_path(s->dir, "user.pin");
    pin = sworn_test_read_file(pin_path, &len);
    pin[strcspn(pin, "\r\n")] = '\0';
    assert_true(strlen(pin) >= 4);
    x.pin = pin;
    assert_int_equal(sworn_privsep_as_user("nobody", anyone_probe, &x), 0);
    free(pin);
    free(pin_path);
    free(vault);
    free(vault_path);
}

/* sworn_stack_proc_each over /proc/PID/fd: count descriptor name in *arg; fail past 3. */
static int count_low_fd(pid_t pid, const char *name, void *arg)
{
    (void)pid;
    ++*(int *)arg;
    if (atoi(name) > 3)
        fail_msg("the signer holds fd %s", name);
    return 0;
}

static void test_signer_descriptors(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    pid_t engine, signer;
    char link[512];
    int n = 0;

    (void)state;
    up(s, &engine, &signer);
    assert_int_equal(sworn_stack_proc_each(signer, "fd", count_low_fd, &n), 0);
    assert_int_equal(n, 4);
    for (int fd = 0; fd < 2; fd++) {
        char fdp[80];
        ssize_t k;

        snprintf(fdp, sizeof(fdp), "/proc/%ld/fd/%d", (long)signer, fd);
        k = readlink(fdp, link, sizeof(link) - 1);
        assert_true(k > 0);
        link[k] = '\0';
        assert_string_equal(link, "/dev/null");
    }
}

/* --- the monitor's channel, as a compromised engine holds it -------------------------------- */

/* The monitor's live children other than the engine (a signer just forked may not have exec'd
 * yet, so the command name is not looked at). */
struct live {
    pid_t engine;
    int n;
};

static int count_live(pid_t pid, void *arg)
{
    struct live *l = arg;

    if (pid != l->engine && !sworn_stack_pid_gone(pid))
        l->n++;
    return 0;
}

static int live_signers(pid_t monitor, pid_t engine)
{
    struct live l = {engine, 0};

    if (sworn_stack_children_each(monitor, count_live, &l) < 0)
        return -1;
    return l.n;
}

/* A copy of the engine's end of the monitor's channel (its fd 3), as a compromised engine holds
 * it: root may take it with pidfd_getfd, the engine's uid may not. */
static int engine_channel(pid_t engine)
{
    int pidfd = (int)syscall(SYS_pidfd_open, engine, 0), chan;

    assert_true(pidfd >= 0);
    chan = (int)syscall(SYS_pidfd_getfd, pidfd, 3, 0);
    assert_true(chan >= 0);
    close(pidfd);
    return chan;
}

static void test_channel_flood_and_garbage(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    pid_t engine, signer, monitor;
    int chan, replies = 0, last = -1;
    unsigned char c = 'S';

    (void)state;
    up(s, &engine, &signer);
    monitor = s->decisiond_pid;
    chan = engine_channel(engine);
    for (int i = 0; i < 20; i++)
        assert_int_equal(send(chan, &c, 1, MSG_NOSIGNAL), 1);
    /* One answer each (the engine may take one of them, should it ask at the same time). */
    while (replies < 20) {
        struct pollfd p = {.fd = chan, .events = POLLIN};
        char buf[REPLY_SIZE];
        union {
            char b[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } ctl;
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        struct cmsghdr *cm;

        if (poll(&p, 1, 5000) != 1)
            break;
        mh.msg_control = ctl.b;
        mh.msg_controllen = sizeof(ctl.b);
        assert_int_equal(recvmsg(chan, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL), (ssize_t)REPLY_SIZE);
        cm = CMSG_FIRSTHDR(&mh);
        if (cm != NULL && cm->cmsg_type == SCM_RIGHTS) {
            if (last >= 0)
                close(last);
            memcpy(&last, CMSG_DATA(cm), sizeof(int));
        }
        replies++;
    }
    assert_true(replies >= 19);
    /* Twenty starts, each stopping the one before: one signer lives, not twenty. */
    assert_int_equal(live_signers(monitor, engine), 1);
    assert_true(wait_gone(signer, WAIT_GONE_MS));
    /* A byte no one sends: the monitor ends the engine, then itself and the signer. */
    signer = sworn_stack_signer_child(monitor);
    c = 'X';
    assert_int_equal(send(chan, &c, 1, MSG_NOSIGNAL), 1);
    assert_true(wait_gone(engine, WAIT_GONE_MS));
    assert_true(wait_gone(monitor, WAIT_GONE_MS));
    if (signer > 0)
        assert_true(wait_gone(signer, WAIT_GONE_MS));
    if (last >= 0)
        close(last);
    close(chan);
}

/* Requests the engine does not read the answers of: the monitor must not block on a full
 * channel (deaf to signals and to its children), it ends the engine instead. */
static void test_channel_unread_answers(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    pid_t engine, signer, monitor;
    int chan, sent = 0;
    unsigned char c = 'S';

    (void)state;
    up(s, &engine, &signer);
    monitor = s->decisiond_pid;
    chan = engine_channel(engine);
    /* As many as the monitor takes (it reads them one by one; it stops when it blocks). */
    while (sent < 3000) {
        struct pollfd p = {.fd = chan, .events = POLLOUT};

        if (poll(&p, 1, 2000) != 1 || (p.revents & POLLOUT) == 0 ||
            send(chan, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
            break;
        sent++;
    }
    assert_true(sent > 200);
    /* Some hundred answers fill the channel; the monitor then ends the engine, and itself. */
    if (!wait_gone(monitor, 60000)) {
        char path[64], wchan[128] = "";

        snprintf(path, sizeof(path), "/proc/%ld/wchan", (long)monitor);
        if (sworn_test_read_proc(path, wchan, sizeof(wchan)) != 0)
            snprintf(wchan, sizeof(wchan), "an unknown place");
        fail_msg("the monitor is stuck (in %s) on the answers the engine does not read", wchan);
    }
    assert_true(wait_gone(engine, WAIT_GONE_MS));
    close(chan);
}

/* --- killing one of the three --------------------------------------------------------------- */

static void test_kill_monitor(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    pid_t engine, signer;

    (void)state;
    up(s, &engine, &signer);
    assert_int_equal(kill(s->decisiond_pid, SIGKILL), 0);
    assert_true(wait_gone(s->decisiond_pid, WAIT_GONE_MS));
    assert_true(wait_gone(engine, WAIT_GONE_MS)); /* PR_SET_PDEATHSIG */
    assert_true(wait_gone(signer, WAIT_GONE_MS)); /* its socket at end of stream */
}

static int kill_engine(void *p)
{
    return kill(*(pid_t *)p, SIGKILL) == 0 ? 0 : 1;
}

static void test_kill_engine(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    pid_t engine, signer;

    (void)state;
    up(s, &engine, &signer);
    assert_int_equal(sworn_privsep_as_user("sworn-engine", kill_engine, &engine), 0);
    assert_true(wait_gone(engine, WAIT_GONE_MS));
    assert_true(wait_gone(s->decisiond_pid, WAIT_GONE_MS));
    assert_true(wait_gone(signer, WAIT_GONE_MS));
}

/* --- what the log says of the separation ---------------------------------------------------- */

/* The newest Startup entry of the stopped stack's log (free it). */
static Sworn__V1__Entry *last_startup(const struct sworn_stack *s)
{
    struct sworn_log *log;
    Sworn__V1__Entry *found = NULL;

    assert_int_equal(sworn_log_open(s->log_db, &log), 0);
    for (uint64_t i = sworn_log_size(log); i-- > 0 && found == NULL;) {
        static uint8_t entry[SWORN_FRAME_ENTRY_MAX];
        size_t len;
        Sworn__V1__Entry *e;

        assert_int_equal(sworn_log_read_entry(log, i, entry, sizeof(entry), &len), 0);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        if (e->kind_case == SWORN__V1__ENTRY__KIND_STARTUP)
            found = e;
        else
            sworn__v1__entry__free_unpacked(e, NULL);
    }
    sworn_log_close(log);
    assert_non_null(found);
    return found;
}

/* A dishonest operator's development deployment is not hidden: the Startup entry says so, and
 * names the one uid the two share. */
static void test_startup_records_development(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;
    uid_t engine_uid = sworn_privsep_user("sworn-engine")->pw_uid,
          signer_uid = sworn_privsep_user("sworn-signer")->pw_uid;
    Sworn__V1__Entry *e;
    pid_t engine, signer;

    (void)state;
    up(s, &engine, &signer);
    assert_int_equal(sworn_stack_stop_daemon(s), 0);
    e = last_startup(s);
    assert_int_equal(e->startup->engine_uid, engine_uid);
    assert_int_equal(e->startup->signer_uid, signer_uid);
    assert_false(e->startup->development);
    sworn__v1__entry__free_unpacked(e, NULL);
    /* The signer under the engine's user, with the flag. */
    assert_int_equal(sworn_stack_sh(s, "sed -i 's/^  user: sworn-signer$/  user: sworn-engine/; "
                                       "$a hardening:\\n  development: true' \"$CONFIG\""),
                     0);
    assert_int_equal(sworn_stack_start(s), 0);
    /* It stops (whatever its status: the signer, dropped to the engine's user, may no longer use
     * the signer user's token); what matters is what its Startup entry says. */
    assert_true(sworn_stack_stop_daemon(s) >= 0);
    e = last_startup(s);
    assert_true(e->startup->development);
    assert_int_equal(e->startup->engine_uid, engine_uid);
    assert_int_equal(e->startup->signer_uid, engine_uid);
    sworn__v1__entry__free_unpacked(e, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_engine_replaces_config, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_engine_undoes_separation, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_socket_chmod_follows_symlink, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_check_refuses_engine_writable_program,
                                  sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_check_refuses_engine_pin_file, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_check_refuses_shared_or_root_gid, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_engine_uid_reaches_nothing, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_signer_uid_reaches_nothing, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_signer_descriptors, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_channel_flood_and_garbage, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_channel_unread_answers, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_kill_monitor, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_kill_engine, sworn_privsep_teardown),
        cmocka_unit_test_teardown(test_startup_records_development, sworn_privsep_teardown),
    };

    if (geteuid() != 0) {
        fprintf(stderr, "test_privsep_attacks: not root, so there are no users to separate the "
                        "processes into; skipped\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
