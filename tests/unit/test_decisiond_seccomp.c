/*
 * test_decisiond_seccomp.c -- decisiond's seccomp filters (decisiond/d_seccomp.h): the engine's
 * role of the shared builder as the engine installs it (test_seccomp.c tests each role), and the
 * three processes of a running stack.
 *
 * What is asserted:
 *   - the filter itself, installed in a forked child exactly as the daemon installs it: a call on
 *     the allow-list works, an unlisted benign call fails with EPERM (and is allowed in log mode),
 *     clone3 gets ENOSYS, arguments outside the allowed sets are refused (a packet socket,
 *     prctl(PR_SET_DUMPABLE, 1), ioctl(TIOCSTI)), a call on the kill list (execve, fork,
 *     setresuid, unshare, ptrace, mount, bpf, a clone into a new namespace) kills the process with
 *     SIGSYS, and so does a call through another ABI (x32; i386 int 0x80 where the kernel has it);
 *     every thread has the filter (TSYNC); /proc shows Seccomp 2 and NoNewPrivs 1;
 *   - in a sanitizer build, a sanitizer report is still written under the filter;
 *   - a whole stack (SoftHSM, swtpm, the daemon) runs under them: the monitor, the engine (every
 *     thread) and the signer each confined; allows with receipts, denies, escalations approved and
 *     denied by an operator, checkpoints quoted by the TPM, a signer killed and started again by
 *     the monitor (confined again), an orderly stop with a final quoted checkpoint.
 */
#define _GNU_SOURCE /* syscall, unshare, personality, CLONE_* */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pwd.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_fixture.h"
#include "config.h"
#include "d_seccomp.h"
#include "frame.h"
#include "logstore.h"
#include "stack_fixture.h"
#include "testutil.h"

/* --- the filter in a forked child (child_fixture.h) --------------------------------------- */

/* Install the filter as the daemon does; arg points to the mode and flags. */
struct filter_args {
    enum d_seccomp_mode mode;
    unsigned flags;
};

static int install_filter(void *arg)
{
    const struct filter_args *a = arg;

    return d_seccomp_install(SWORN_SECCOMP_ENGINE, a->mode, a->flags) != 0;
}

/*
 * Run fn in a forked child after installing the filter in mode (fn's return is the exit status;
 * the child's stderr goes to err_path when not NULL). Returns the wait status.
 */
static int in_filtered_child_flags(enum d_seccomp_mode mode, unsigned flags, int (*fn)(void),
                                   const char *err_path)
{
    struct filter_args a = {mode, flags};

    return sworn_child_run(install_filter, &a, fn, err_path);
}

static int in_filtered_child(enum d_seccomp_mode mode, int (*fn)(void), const char *err_path)
{
    return in_filtered_child_flags(mode, D_SECCOMP_INET, fn, err_path);
}

static void *thread_personality(void *arg)
{
    long r = syscall(SYS_personality, 0xffffffffUL);

    *(int *)arg = (r == -1 && errno == EPERM) ? 0 : 1;
    return NULL;
}

/* Checks made inside an enforcing filter; each failure has its own exit status. */
static int enforce_checks(void)
{
    long r;
    int fd, sv[2];
    char byte = 'x';

    if (!sworn_child_confined(0))
        return 2;
    if (getpid() <= 0 || syscall(SYS_getpid) <= 0)
        return 3;
    /* An unlisted benign call: EPERM, not a kill. */
    errno = 0;
    r = syscall(SYS_personality, 0xffffffffUL); /* only reads the persona */
    if (r != -1 || errno != EPERM)
        return 4;
    errno = 0;
    if (syscall(SYS_acct, NULL) != -1 || errno != EPERM)
        return 5;
    /* clone3: ENOSYS, so that glibc falls back to clone. */
    errno = 0;
    if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
        return 6;
    /* Sockets: a Unix socket yes, a packet socket no. */
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 7;
    close(fd);
    errno = 0;
    if (socket(AF_PACKET, SOCK_RAW, 0) != -1 || errno != EPERM)
        return 8;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return 9;
    /* ioctl: FIONREAD yes, TIOCSTI (typing into a terminal) no. */
    if (write(sv[0], &byte, 1) != 1 || ioctl(sv[1], FIONREAD, &fd) != 0 || fd != 1)
        return 10;
    errno = 0;
    if (ioctl(sv[1], TIOCSTI, &byte) != -1 || errno != EPERM)
        return 11;
    /* prctl: giving up dumpability yes, taking it back no. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return 12;
#ifndef TEST_SANITIZER /* LeakSanitizer needs it (d_seccomp.h) */
    errno = 0;
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != -1 || errno != EPERM)
        return 13;
#endif
    errno = 0;
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != -1 || errno != EPERM)
        return 14;
    /* What a restarted signer child or the checkpoint thread does to reach a TPM by name (a
     * swtpm TCTI host), and the admin socket to name an operator: resolver and nsswitch work. */
    {
        struct addrinfo hints, *res = NULL;
        struct passwd pw, *pwres = NULL;
        char buf[4096];

        memset(&hints, 0, sizeof(hints));
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_ADDRCONFIG;
        if (getaddrinfo("localhost", "2321", &hints, &res) != 0 || res == NULL)
            return 18;
        freeaddrinfo(res);
        if (getpwuid_r(0, &pw, buf, sizeof(buf), &pwres) != 0 || pwres == NULL)
            return 19;
    }
    /* A thread started after the filter has it. (The engine forks nothing: a fork kills it,
     * test_filter_kills; the monitor's filter, inherited by its children, is test_seccomp's.) */
    {
        pthread_t t;
        int result = -1;

        if (pthread_create(&t, NULL, thread_personality, &result) != 0 ||
            pthread_join(t, NULL) != 0 || result != 0)
            return 15;
    }
    return 0;
}

static void test_filter_enforce(void **state)
{
    (void)state;
    sworn_child_expect_exit0(in_filtered_child(D_SECCOMP_ENFORCE, enforce_checks, NULL));
}

/* With D_SECCOMP_INET a TCP socket can be made (a TPM or HSM over the network); without, not. */
static int inet_refused(void)
{
    int r = sworn_child_inet_refused(), fd;

    if (r != 0)
        return r;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 4;
    close(fd);
    return 0;
}

static void test_filter_inet(void **state)
{
    struct sworn_dconfig c;

    (void)state;
    sworn_child_expect_exit0(
        in_filtered_child_flags(D_SECCOMP_ENFORCE, D_SECCOMP_INET, sworn_child_inet_allowed, NULL));
    sworn_child_expect_exit0(in_filtered_child_flags(D_SECCOMP_ENFORCE, 0, inet_refused, NULL));
    /* Which configurations need the network. */
    memset(&c, 0, sizeof(c));
    c.signer_key = "/etc/sworn/dev-key.pem";
    assert_int_equal(d_seccomp_flags(&c), 0);
    c.tpm_tcti = "device:/dev/tpmrm0";
    assert_int_equal(d_seccomp_flags(&c), 0);
    c.signer_key = "tpm:0x81000002";
    c.signer_tcti = "device";
    assert_int_equal(d_seccomp_flags(&c), 0);
    c.tpm_tcti = "swtpm:host=127.0.0.1,port=2321";
    assert_int_equal(d_seccomp_flags(&c), D_SECCOMP_INET);
    c.tpm_tcti = "device:/dev/tpmrm0";
    c.signer_tcti = "tabrmd";
    assert_int_equal(d_seccomp_flags(&c), D_SECCOMP_INET);
    c.signer_tcti = NULL;
    c.signer_key = "pkcs11:token=sworn;object=checkpoint";
    c.signer_module = "/usr/lib/softhsm/libsofthsm2.so";
    assert_int_equal(d_seccomp_flags(&c), D_SECCOMP_INET);
}

/* A thread that exists before the filter is installed (TSYNC) has it too. */
static pthread_mutex_t early_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t early_cv = PTHREAD_COND_INITIALIZER;
static int early_go, early_result = -1;

static void *early_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&early_m);
    while (!early_go)
        pthread_cond_wait(&early_cv, &early_m);
    pthread_mutex_unlock(&early_m);
    errno = 0;
    early_result = (syscall(SYS_personality, 0xffffffffUL) == -1 && errno == EPERM) ? 0 : 1;
    return NULL;
}

/* In the child: a thread started, then the filter installed, then the thread's check. */
static int tsync_child(void)
{
    pthread_t t;

    if (pthread_create(&t, NULL, early_thread, NULL) != 0)
        return 2;
    if (d_seccomp_install(SWORN_SECCOMP_ENGINE, D_SECCOMP_ENFORCE, D_SECCOMP_INET) != 0)
        return 3;
    pthread_mutex_lock(&early_m);
    early_go = 1;
    pthread_cond_signal(&early_cv);
    pthread_mutex_unlock(&early_m);
    pthread_join(t, NULL);
    return early_result == 0 ? 0 : 4;
}

static void test_filter_tsync(void **state)
{
    (void)state;
    sworn_child_expect_exit0(sworn_child_run(NULL, NULL, tsync_child, NULL));
}

static void test_filter_log_mode(void **state)
{
    (void)state;
    sworn_child_expect_exit0(in_filtered_child(D_SECCOMP_LOG, sworn_child_log_checks, NULL));
}

/* Calls on the kill list besides child_fixture.h's, one per child. */
static int call_bpf(void)
{
    syscall(SYS_bpf, 0, NULL, 0);
    return 50;
}

static int call_userfaultfd(void)
{
    syscall(SYS_userfaultfd, 0);
    return 50;
}

#if defined(__x86_64__)
/* The x32 ABI: the x86_64 number with bit 30 set (getpid here). */
static int call_x32(void)
{
    syscall(0x40000000L | SYS_getpid);
    return 50;
}

/* The i386 ABI through int 0x80 (getpid is 20 there). */
static long i386_getpid(void)
{
    long ret;

    __asm__ volatile("int $0x80" : "=a"(ret) : "0"(20L) : "memory");
    return ret;
}

/* 0 where the kernel has the i386 ABI (run unfiltered: without it int 0x80 is a SIGSEGV). */
static int i386_works(void)
{
    return i386_getpid() == (long)getpid() ? 0 : 1;
}

static int call_i386(void)
{
    i386_getpid();
    return 50;
}
#endif

/* One kill case in a child with the filter in the mode ctx points to. */
static int run_filtered(const void *ctx, int (*fn)(void))
{
    return in_filtered_child(*(const enum d_seccomp_mode *)ctx, fn, NULL);
}

static void test_filter_kills(void **state)
{
    static const struct sworn_child_kill calls[] = {
        {"execve", sworn_child_call_execve, 1},
        {"fork", sworn_child_call_fork, 1},
        {"setresuid", sworn_child_call_setresuid_own, 0},
        {"unshare", sworn_child_call_unshare, 0},
        {"clone NEWNET", sworn_child_call_clone_newnet, 0},
        {"ptrace", sworn_child_call_ptrace, 1},
        {"mount", sworn_child_call_mount, 0},
        {"bpf", call_bpf, 0},
        {"userfaultfd", call_userfaultfd, 0},
#if defined(__x86_64__)
        {"x32 getpid", call_x32, 0},
#endif
    };
    static const enum d_seccomp_mode enforce = D_SECCOMP_ENFORCE, logged = D_SECCOMP_LOG;

    (void)state;
    sworn_child_expect_kills(run_filtered, &enforce, calls, sizeof(calls) / sizeof(calls[0]));
    /* The kill list kills in log mode too. */
    sworn_child_expect_kills(run_filtered, &logged, calls, sizeof(calls) / sizeof(calls[0]));
#if defined(__x86_64__)
    /* int 0x80 only where the kernel has the i386 ABI (otherwise it is a SIGSEGV anyway). */
    {
        int status = sworn_child_run(NULL, NULL, i386_works, NULL);

        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            sworn_child_expect_sigsys(in_filtered_child(D_SECCOMP_ENFORCE, call_i386, NULL),
                                      "int 0x80");
        else
            print_message("no i386 ABI in this kernel: the int 0x80 case is not run\n");
    }
#endif
}

/* Off installs nothing. */
static int off_checks(void)
{
    return sworn_child_confined(0) ? 2 : 0;
}

static int off_child(void)
{
    return d_seccomp_install(SWORN_SECCOMP_ENGINE, D_SECCOMP_OFF, 0) == 1 ? off_checks() : 3;
}

static void test_filter_off(void **state)
{
    (void)state;
    sworn_child_expect_exit0(sworn_child_run(NULL, NULL, off_child, NULL));
}

/* --- a sanitizer report under the filter --------------------------------------------------- */

#ifdef TEST_SANITIZER
static int heap_overflow(void)
{
    /* Through a volatile pointer, so that UndefinedBehaviorSanitizer's object-size check cannot
     * see the size and AddressSanitizer (whose report symbolizes a stack) is the one to report. */
    void *(*volatile alloc)(size_t) = malloc;
    volatile char *p = alloc(8);
    volatile size_t i = 8;

    p[i] = 1; /* one past the end: AddressSanitizer reports and aborts or exits */
    free((void *)p);
    return 0;
}

/* A leak, found at exit by LeakSanitizer, which stops the threads with ptrace to scan them. */
static void *volatile leaked;

static int leak(void)
{
    void *(*volatile alloc)(size_t) = malloc;

    leaked = alloc(64);
    leaked = NULL;
    exit(0);
}

/* Only in the sanitizer build (where it runs, never skipped): the report survives the filter. */
static void test_sanitizer_report(void **state)
{
    char *dir = sworn_test_tmpdir("seccomp-asan"), *path = sworn_test_path(dir, "stderr");
    char *text;
    int status;

    (void)state;
    status = in_filtered_child(D_SECCOMP_ENFORCE, heap_overflow, path);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
        fail_msg("the sanitizer runtime was killed by the filter");
    assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    text = sworn_test_read_file(path, NULL);
    if (strstr(text, "ERROR: AddressSanitizer: heap-buffer-overflow") == NULL ||
        strstr(text, "SUMMARY: AddressSanitizer") == NULL || strstr(text, "#0 ") == NULL)
        fail_msg("no complete sanitizer report under the filter:\n%s", text);
    free(text);
    /* LeakSanitizer's report at exit, unless the run turned leak detection off. */
    if (getenv("ASAN_OPTIONS") == NULL ||
        strstr(getenv("ASAN_OPTIONS"), "detect_leaks=0") == NULL) {
        status = in_filtered_child(D_SECCOMP_ENFORCE, leak, path);
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
            fail_msg("LeakSanitizer was killed by the filter");
        text = sworn_test_read_file(path, NULL);
        if (strstr(text, "ERROR: LeakSanitizer: detected memory leaks") == NULL ||
            strstr(text, "fatal error") != NULL)
            fail_msg("no complete leak report under the filter:\n%s", text);
        free(text);
    }
    free(path);
    sworn_test_rmtree(dir);
    free(dir);
}
#endif

/* --- the whole stack under the filter ------------------------------------------------------ */

/* sworn_stack_proc_each over /proc/PID/task: thread name is confined; counted in *arg. */
static int thread_confined(pid_t pid, const char *name, void *arg)
{
    (void)pid;
    assert_true(sworn_child_confined((pid_t)atol(name)));
    ++*(int *)arg;
    return 0;
}

static void expect_deny(struct sworn_stack *s, const char *id)
{
    Sworn__V1__DecisionReply *r = sworn_stack_decide_path(s, id, "/denied/x");
    Sworn__V1__Decision *d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);

    assert_null(d->receipt);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
}

/* The largest tree size of a "checkpoint ... quoted":true line in the daemon's log (0: none). */
static uint64_t quoted_in_log(struct sworn_stack *s)
{
    char path[600], *text, *at;
    uint64_t best = 0;

    snprintf(path, sizeof(path), "%s/decisiond.log", s->dir);
    text = sworn_test_read_file(path, NULL);
    for (at = text; (at = strstr(at, "\"event\":\"checkpoint\",\"size\":")) != NULL;) {
        unsigned long long size;
        char *end;

        at += strlen("\"event\":\"checkpoint\",\"size\":");
        size = strtoull(at, &end, 10);
        if (strncmp(end, ",\"quoted\":true", 14) == 0 && size > best)
            best = size;
    }
    free(text);
    return best;
}

static struct sworn_stack *stack_up; /* brought down by the teardown when a test fails */

static int stack_teardown(void **state)
{
    int rc = 0;

    (void)state;
    if (stack_up != NULL) {
        rc = sworn_stack_down(stack_up); /* a sanitizer report in the daemon's log fails it */
        stack_up = NULL;
    }
    return rc;
}

static void test_stack_under_filter(void **state)
{
    static struct sworn_stack s;
    pid_t child, fresh = -1, engine;
    struct sworn_log *log;
    struct sworn_stack_quotes quotes = {0, 0};
    int allowed = 0;
    char *daemon_log;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, ""), 0);
    stack_up = &s;
    assert_true(s.swtpm_pid > 0);
    /* Each of the three processes has a filter (the engine's on every thread), and the engine's
     * is logged. */
    engine = sworn_stack_engine(s.decisiond_pid);
    assert_true(engine > 0);
    if (!sworn_child_confined(s.decisiond_pid))
        fail_msg("the monitor %ld runs without its seccomp filter", (long)s.decisiond_pid);
    if (!sworn_child_confined(engine))
        fail_msg("the engine %ld runs without its seccomp filter", (long)engine);
    {
        char path[600];

        snprintf(path, sizeof(path), "%s/decisiond.log", s.dir);
        daemon_log = sworn_test_read_file(path, NULL);
        assert_non_null(strstr(daemon_log, "\"event\":\"seccomp\",\"mode\":\"enforce\""));
        free(daemon_log);
    }
    {
        int threads = 0;

        assert_int_equal(sworn_stack_proc_each(engine, "task", thread_confined, &threads), 0);
        assert_true(threads >= 3); /* the loop, workers, the checkpoint thread */
    }

    sworn_stack_expect_allow(&s, "sc-allow-1");
    expect_deny(&s, "sc-deny-1");
    sworn_stack_escalate(&s, "sc-esc-approve", 1);
    sworn_stack_escalate(&s, "sc-esc-deny", 0);

    /* The signer dies: the monitor starts a new one, with its own filter (and the monitor's,
     * inherited), and it signs. */
    child = sworn_stack_signer_child(s.decisiond_pid);
    assert_true(child > 0);
    assert_true(sworn_child_confined(child));
    assert_int_equal(kill(child, SIGKILL), 0);
    for (int i = 0; i < 500 && !sworn_stack_pid_gone(child); i++)
        sworn_test_sleep_ms(20);
    assert_true(sworn_stack_pid_gone(child));
    /* The first request after the death may be the one that finds it (a recorded deny). */
    for (int i = 0; i < 50 && allowed == 0; i++) {
        char id[32];
        Sworn__V1__DecisionReply *r;

        snprintf(id, sizeof(id), "sc-after-kill-%d", i);
        r = sworn_stack_decide_path(&s, id, "/allowed/x");
        assert_non_null(r);
        if (r->body_case == SWORN__V1__DECISION_REPLY__BODY_DECISION &&
            r->decision->effect == SWORN__V1__EFFECT__EFFECT_ALLOW) {
            assert_non_null(r->decision->receipt);
            allowed = 1;
        }
        sworn__v1__decision_reply__free_unpacked(r, NULL);
        if (!allowed)
            sworn_test_sleep_ms(100);
    }
    assert_true(allowed);
    fresh = sworn_stack_signer_child(s.decisiond_pid);
    assert_true(fresh > 0);
    assert_int_not_equal(fresh, child);
    assert_true(sworn_child_confined(fresh));
    sworn_stack_expect_allow(&s, "sc-allow-2");
    expect_deny(&s, "sc-deny-2");
    /* The checkpoint thread signs and quotes under the filter (the first quote, of the start-up
     * entries, was made before it was installed): wait for a quote of a later size. */
    {
        uint64_t before = quoted_in_log(&s);

        for (int i = 0; i < 100 && quoted_in_log(&s) <= before; i++)
            sworn_test_sleep_ms(100);
        if (quoted_in_log(&s) <= before)
            fail_msg("no checkpoint was quoted under the filter");
    }
    assert_true(sworn_child_confined(s.decisiond_pid));

    /* An orderly stop (exit status 0, not SIGSYS) with a final quoted checkpoint: an escalation
     * is held when SIGTERM comes, so its recorded deny makes the log grow at the stop, and the
     * final round signs and quotes it. */
    {
        int fd = sworn_stack_send_only(&s, "sc-held-at-stop", "/escalate/y");

        for (int i = 0; i < 250 && sworn_stack_pending(&s) < 1; i++)
            sworn_test_sleep_ms(20);
        assert_int_equal(sworn_stack_pending(&s), 1);
        assert_int_equal(sworn_stack_stop_daemon(&s), 0);
        close(fd);
    }
    assert_int_equal(sworn_log_open(s.log_db, &log), 0);
    sworn_stack_expect_final_checkpoint(log);
    /* Quoted while running, and the final checkpoint (the whole log) quoted too. */
    sworn_stack_log_quotes(log, &quotes);
    assert_true(quotes.n >= 2);
    assert_int_equal(quotes.largest, sworn_log_size(log));
    sworn_log_close(log);
    stack_up = NULL;
    assert_int_equal(sworn_stack_down(&s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_enforce),
        cmocka_unit_test(test_filter_inet),
        cmocka_unit_test(test_filter_tsync),
        cmocka_unit_test(test_filter_log_mode),
        cmocka_unit_test(test_filter_kills),
        cmocka_unit_test(test_filter_off),
#ifdef TEST_SANITIZER
        cmocka_unit_test(test_sanitizer_report),
#endif
        cmocka_unit_test_teardown(test_stack_under_filter, stack_teardown),
    };

    if (getenv("SWORN_DECISIOND_BIN") == NULL) {
        fprintf(stderr, "test_decisiond_seccomp: sworn-decisiond is not built\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
