/*
 * test_seccomp.c -- the shared seccomp filter builder (common/seccomp.h), role by role.
 *
 * What is asserted:
 *   - the programs: every role builds in both modes and with every flag, within
 *     SWORN_SECCOMP_INSN_MAX; bad roles, modes and flags and a too small buffer are errors; off
 *     installs nothing; the names;
 *   - stacking, by running the programs in an emulator over every call number and a spread of
 *     arguments: whatever the engine or the signer allows, the monitor allows too, and nothing the
 *     monitor kills or refuses is allowed to a child (its children inherit its filter, and the
 *     stricter answer wins); calls from another ABI are killed in every role;
 *   - each role installed in a forked child, with its real calls:
 *       engine: threads, socketpair, descriptors received with SCM_RIGHTS, limits read but not
 *       set, no kill; a fork, a clone without CLONE_THREAD, execve and the setuid family
 *       (setresuid to its own uid) kill with SIGSYS;
 *       signer: I/O on its socketpair, the files SoftHSM's token folder needs, a thread;
 *       socket(AF_INET) is EPERM without SWORN_SECCOMP_INET and works with it; bind, listen,
 *       accept, fork and execve kill;
 *       monitor: fork+execve of /bin/true and of /bin/cat, whose /proc/self/status shows the
 *       inherited filter; a socket file bound, listening, given a mode and removed; a child
 *       that stacks the signer's filter, forked or exec'd (this program again, as the monitor
 *       will exec sworn-signer), is killed by the signer's kill list; ptrace, unshare,
 *       mount and chroot kill; with SWORN_SECCOMP_NOEXEC execve kills;
 *     and /proc/self/status shows Seccomp 2 and NoNewPrivs 1 under each;
 *   - log mode: an unlisted call is allowed, the kill list still kills.
 * In sanitizer builds, the calls the sanitizer runtime needs (seccomp.h: ptrace, execve, clone
 * without CLONE_THREAD, so also glibc's fork) are allowed and their kill checks are not run; the
 * old fork(2) number still kills.
 */
#define _GNU_SOURCE /* syscall, unshare, CLONE_*, pipe2 */
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
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "child_fixture.h"
#include "err.h"
#include "seccomp.h"
#include "testutil.h"

extern char **environ;

#if defined(__x86_64__)
#define TEST_ARCH AUDIT_ARCH_X86_64
#define TEST_ARCH_NAME "x86_64"
#elif defined(__aarch64__)
#define TEST_ARCH AUDIT_ARCH_AARCH64
#define TEST_ARCH_NAME "aarch64"
#else
#define TEST_ARCH_NAME "" /* no table: main() skips every test */
#endif

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const enum sworn_seccomp_role roles[] = {SWORN_SECCOMP_MONITOR, SWORN_SECCOMP_ENGINE,
                                                SWORN_SECCOMP_SIGNER};

/* The clone flags of glibc's pthread_create, and of its fork. */
#define THREAD_FLAGS                                                                               \
    (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |            \
     CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)
#define FORK_FLAGS (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD)

/* --- the programs ------------------------------------------------------------------------- */

static void test_build(void **state)
{
    static const enum sworn_seccomp_mode modes[] = {SWORN_SECCOMP_LOG, SWORN_SECCOMP_ENFORCE};
    static const unsigned flag_sets[] = {0, SWORN_SECCOMP_INET, SWORN_SECCOMP_NOEXEC,
                                         SWORN_SECCOMP_INET | SWORN_SECCOMP_NOEXEC};
    static struct sock_filter insn[SWORN_SECCOMP_INSN_MAX];
    struct sworn_seccomp_report r, mon, eng, sig;

    (void)state;
#ifndef TEST_ARCH
    skip();
#else
    for (size_t i = 0; i < NELEM(roles); i++)
        for (size_t m = 0; m < NELEM(modes); m++)
            for (size_t f = 0; f < NELEM(flag_sets); f++) {
                if (sworn_seccomp_build(roles[i], modes[m], flag_sets[f], insn, NELEM(insn), &r) !=
                    0)
                    fail_msg("%s %s 0x%x: %s", sworn_seccomp_role_name(roles[i]),
                             sworn_seccomp_mode_name(modes[m]), flag_sets[f], sworn_err_msg());
                assert_string_equal(r.arch, TEST_ARCH_NAME);
                assert_true(r.instructions > 2 * (r.allowed + r.killed));
                assert_true(r.instructions <= SWORN_SECCOMP_INSN_MAX);
            }
    /* The monitor allows what its children allow (and more); the signer is the smallest. */
    assert_int_equal(sworn_seccomp_build(SWORN_SECCOMP_MONITOR, SWORN_SECCOMP_ENFORCE, 0, insn,
                                         NELEM(insn), &mon),
                     0);
    assert_int_equal(sworn_seccomp_build(SWORN_SECCOMP_ENGINE, SWORN_SECCOMP_ENFORCE, 0, insn,
                                         NELEM(insn), &eng),
                     0);
    assert_int_equal(sworn_seccomp_build(SWORN_SECCOMP_SIGNER, SWORN_SECCOMP_ENFORCE, 0, insn,
                                         NELEM(insn), &sig),
                     0);
    assert_true(mon.allowed > eng.allowed && eng.allowed > sig.allowed);
    /* The proxy: the engine's allow-list; the engine's kill list plus bind and listen. */
    {
        struct sworn_seccomp_report px;

        assert_int_equal(sworn_seccomp_build(SWORN_SECCOMP_PROXY, SWORN_SECCOMP_ENFORCE,
                                             SWORN_SECCOMP_INET, insn, NELEM(insn), &px),
                         0);
        assert_int_equal(px.allowed, eng.allowed);
        assert_int_equal(px.killed, eng.killed + 2);
    }
    assert_true(sig.killed > eng.killed && eng.killed > mon.killed);
    /* SWORN_SECCOMP_NOEXEC moves execve to the monitor's kill list (outside sanitizer builds). */
    assert_int_equal(sworn_seccomp_build(SWORN_SECCOMP_MONITOR, SWORN_SECCOMP_ENFORCE,
                                         SWORN_SECCOMP_NOEXEC, insn, NELEM(insn), &r),
                     0);
#ifdef TEST_SANITIZER
    assert_int_equal(r.killed, mon.killed);
#else
    assert_int_equal(r.killed, mon.killed + 1);
    assert_int_equal(r.allowed, mon.allowed - 1);
#endif
    /* Errors. */
    assert_int_equal(
        sworn_seccomp_build((enum sworn_seccomp_role)0, SWORN_SECCOMP_ENFORCE, 0, insn, 10, &r),
        -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(
        sworn_seccomp_build((enum sworn_seccomp_role)5, SWORN_SECCOMP_ENFORCE, 0, insn, 10, &r),
        -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(sworn_seccomp_build(SWORN_SECCOMP_ENGINE, (enum sworn_seccomp_mode)3, 0, insn,
                                         NELEM(insn), &r),
                     -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(
        sworn_seccomp_build(SWORN_SECCOMP_ENGINE, SWORN_SECCOMP_ENFORCE, 4u, insn, NELEM(insn), &r),
        -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(
        sworn_seccomp_build(SWORN_SECCOMP_ENGINE, SWORN_SECCOMP_OFF, 0, insn, NELEM(insn), &r), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(
        sworn_seccomp_build(SWORN_SECCOMP_SIGNER, SWORN_SECCOMP_ENFORCE, 0, insn, 10, &r), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(r.instructions, 0);
    assert_int_equal(
        sworn_seccomp_install((enum sworn_seccomp_role)9, SWORN_SECCOMP_ENFORCE, 0, &r), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(r.instructions, 0);
#endif
    /* Names. */
    assert_string_equal(sworn_seccomp_role_name(SWORN_SECCOMP_MONITOR), "monitor");
    assert_string_equal(sworn_seccomp_role_name(SWORN_SECCOMP_ENGINE), "engine");
    assert_string_equal(sworn_seccomp_role_name(SWORN_SECCOMP_SIGNER), "signer");
    assert_string_equal(sworn_seccomp_role_name(SWORN_SECCOMP_PROXY), "proxy");
    assert_string_equal(sworn_seccomp_role_name((enum sworn_seccomp_role)0), "?");
    assert_string_equal(sworn_seccomp_mode_name(SWORN_SECCOMP_OFF), "off");
    assert_string_equal(sworn_seccomp_mode_name(SWORN_SECCOMP_LOG), "log");
    assert_string_equal(sworn_seccomp_mode_name(SWORN_SECCOMP_ENFORCE), "enforce");
    assert_string_equal(sworn_seccomp_mode_name((enum sworn_seccomp_mode)7), "?");
}

/* Off installs nothing, in every role. */
static int off_checks(void)
{
    struct sworn_seccomp_report r;

    for (size_t i = 0; i < NELEM(roles); i++) {
        memset(&r, 0xff, sizeof(r));
        if (sworn_seccomp_install(roles[i], SWORN_SECCOMP_OFF, 0, &r) != 1)
            return 2;
        if (r.instructions != 0 || r.allowed != 0 || r.killed != 0)
            return 3;
    }
    return sworn_child_confined(0) ? 4 : 0;
}

static void test_off(void **state)
{
    (void)state;
    sworn_child_expect_exit0(sworn_child_run(NULL, NULL, off_checks, NULL));
}

/* --- stacking, in an emulator ------------------------------------------------------------- */

#ifdef TEST_ARCH
/* Run a classic BPF seccomp program on d, as the kernel would; fails the test on an instruction
 * the builder never emits, a jump out of the program, or a program that falls off its end. */
static uint32_t emulate(const struct sock_filter *f, size_t n, const struct seccomp_data *d)
{
    uint32_t a = 0;
    size_t pc = 0;

    while (pc < n) {
        const struct sock_filter *in = &f[pc];
        size_t next = pc + 1;

        switch (in->code) {
        case BPF_LD | BPF_W | BPF_ABS:
            if (in->k % 4 != 0 || in->k + 4 > sizeof(*d))
                fail_msg("load of offset %u at %zu", in->k, pc);
            memcpy(&a, (const unsigned char *)d + in->k, 4);
            break;
        case BPF_JMP | BPF_JA:
            next += in->k;
            break;
        case BPF_JMP | BPF_JEQ | BPF_K:
            next += a == in->k ? in->jt : in->jf;
            break;
        case BPF_JMP | BPF_JGE | BPF_K:
            next += a >= in->k ? in->jt : in->jf;
            break;
        case BPF_JMP | BPF_JGT | BPF_K:
            next += a > in->k ? in->jt : in->jf;
            break;
        case BPF_JMP | BPF_JSET | BPF_K:
            next += (a & in->k) != 0 ? in->jt : in->jf;
            break;
        case BPF_RET | BPF_K:
            return in->k;
        default:
            fail_msg("instruction 0x%x at %zu", in->code, pc);
        }
        if (next >= n)
            fail_msg("a jump out of the program at %zu", pc);
        pc = next;
    }
    fail_msg("the program falls off its end");
    return 0;
}

/* How strict an action is, in the kernel's order of precedence between stacked filters. */
static int strictness(uint32_t action)
{
    switch (action & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_ALLOW:
        return 0;
    case SECCOMP_RET_LOG:
        return 1;
    case SECCOMP_RET_ERRNO:
        return 2;
    case SECCOMP_RET_KILL_PROCESS:
        return 3;
    default:
        fail_msg("an unexpected action 0x%x", action);
        return 9;
    }
}

struct progs {
    struct sock_filter insn[3][SWORN_SECCOMP_INSN_MAX]; /* by roles[] */
    size_t n[3];
};

static void build_all(struct progs *p, enum sworn_seccomp_mode mode, unsigned flags)
{
    struct sworn_seccomp_report r;

    for (size_t i = 0; i < NELEM(roles); i++) {
        assert_int_equal(
            sworn_seccomp_build(roles[i], mode, flags, p->insn[i], SWORN_SECCOMP_INSN_MAX, &r), 0);
        p->n[i] = r.instructions;
    }
}

static uint32_t run_role(const struct progs *p, size_t role_index, int nr, uint64_t a0, uint64_t a1,
                         uint64_t a2)
{
    struct seccomp_data d;

    memset(&d, 0, sizeof(d));
    d.nr = nr;
    d.arch = TEST_ARCH;
    d.args[0] = a0;
    d.args[1] = a1;
    d.args[2] = a2;
    return emulate(p->insn[role_index], p->n[role_index], &d);
}

/* roles[] indices */
#define MON 0
#define ENG 1
#define SIG 2

static void check_stacking(enum sworn_seccomp_mode mode, unsigned flags)
{
    /* Arguments the argument checks look at (socket families, clone flags, prctl options in
     * args[0]; ioctl requests in args[1]; prlimit64's new limit in args[2]), and others. */
    static const uint64_t a0s[] = {0,
                                   AF_UNIX,
                                   AF_INET,
                                   AF_INET6,
                                   AF_PACKET,
                                   AF_NETLINK,
                                   THREAD_FLAGS,
                                   FORK_FLAGS,
                                   CLONE_VM | CLONE_VFORK | SIGCHLD,
                                   FORK_FLAGS | CLONE_NEWUSER,
                                   THREAD_FLAGS | CLONE_NEWNET,
                                   PR_SET_DUMPABLE,
                                   PR_SET_NAME,
                                   PR_SET_NO_NEW_PRIVS,
                                   PR_SET_KEEPCAPS,
                                   PR_CAP_AMBIENT,
                                   0xffffffffull};
    static const uint64_t a1s[] = {0, 1, FIONREAD, TCGETS, TIOCSTI};
    static const uint64_t a2s[] = {0, 0x7ffc0000ull, 1ull << 32};
    static struct progs p;
    size_t allowed_to_children = 0;

    build_all(&p, mode, flags);
    for (int nr = 0; nr < 512; nr++)
        for (size_t i = 0; i < NELEM(a0s); i++)
            for (size_t j = 0; j < NELEM(a1s); j++)
                for (size_t k = 0; k < NELEM(a2s); k++) {
                    uint32_t m = run_role(&p, MON, nr, a0s[i], a1s[j], a2s[k]);

                    for (size_t c = ENG; c <= SIG; c++) {
                        uint32_t x = run_role(&p, c, nr, a0s[i], a1s[j], a2s[k]);

                        if (strictness(m) > strictness(x))
                            fail_msg("call %d (0x%llx, 0x%llx, 0x%llx): the %s gets 0x%x, the "
                                     "monitor 0x%x",
                                     nr, (unsigned long long)a0s[i], (unsigned long long)a1s[j],
                                     (unsigned long long)a2s[k], sworn_seccomp_role_name(roles[c]),
                                     x, m);
                        allowed_to_children += x == SECCOMP_RET_ALLOW;
                    }
                }
    assert_true(allowed_to_children > 0);
}

static void test_stacking(void **state)
{
    static struct progs p;
    struct seccomp_data d;

    (void)state;
    check_stacking(SWORN_SECCOMP_ENFORCE, 0);
    check_stacking(SWORN_SECCOMP_ENFORCE, SWORN_SECCOMP_INET);
    check_stacking(SWORN_SECCOMP_LOG, SWORN_SECCOMP_INET);

    /* A few answers by name. */
    build_all(&p, SWORN_SECCOMP_ENFORCE, 0);
    for (size_t i = 0; i < NELEM(roles); i++) {
        assert_int_equal(run_role(&p, i, __NR_clone, THREAD_FLAGS, 0, 0), SECCOMP_RET_ALLOW);
        assert_int_equal(run_role(&p, i, __NR_clone, THREAD_FLAGS | CLONE_NEWNET, 0, 0),
                         SECCOMP_RET_KILL_PROCESS);
        assert_int_equal(run_role(&p, i, __NR_clone3, 0, 0, 0), SECCOMP_RET_ERRNO | ENOSYS);
        assert_int_equal(run_role(&p, i, __NR_socket, AF_INET, 0, 0), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(run_role(&p, i, __NR_prlimit64, 0, RLIMIT_CORE, 0), SECCOMP_RET_ALLOW);
        assert_int_equal(run_role(&p, i, __NR_unshare, 0, 0, 0), SECCOMP_RET_KILL_PROCESS);
        /* Another ABI, whatever the call. */
        memset(&d, 0, sizeof(d));
        d.nr = __NR_getpid;
        d.arch = AUDIT_ARCH_I386;
        assert_int_equal(emulate(p.insn[i], p.n[i], &d), SECCOMP_RET_KILL_PROCESS);
#if defined(__x86_64__)
        d.arch = TEST_ARCH;
        d.nr = 0x40000000 | __NR_getpid;
        assert_int_equal(emulate(p.insn[i], p.n[i], &d), SECCOMP_RET_KILL_PROCESS);
#endif
    }
    assert_int_equal(run_role(&p, MON, __NR_clone, FORK_FLAGS, 0, 0), SECCOMP_RET_ALLOW);
    assert_int_equal(run_role(&p, MON, __NR_bind, 0, 0, 0), SECCOMP_RET_ALLOW);
    assert_int_equal(run_role(&p, MON, __NR_prlimit64, 0, RLIMIT_CORE, 0x1000), SECCOMP_RET_ALLOW);
    assert_int_equal(run_role(&p, ENG, __NR_bind, 0, 0, 0), SECCOMP_RET_ERRNO | EPERM);
    assert_int_equal(run_role(&p, SIG, __NR_bind, 0, 0, 0), SECCOMP_RET_KILL_PROCESS);
    assert_int_equal(run_role(&p, ENG, __NR_accept4, 0, 0, 0), SECCOMP_RET_ALLOW);
    assert_int_equal(run_role(&p, SIG, __NR_accept4, 0, 0, 0), SECCOMP_RET_KILL_PROCESS);
    for (size_t c = ENG; c <= SIG; c++) {
        /* A limit is read, never set; a new limit's pointer is 64 bits wide. */
        assert_int_equal(run_role(&p, c, __NR_prlimit64, 0, RLIMIT_CORE, 0x1000),
                         SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(run_role(&p, c, __NR_prlimit64, 0, RLIMIT_CORE, 1ull << 32),
                         SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(run_role(&p, c, __NR_setresuid, 0, 0, 0), SECCOMP_RET_KILL_PROCESS);
        assert_int_equal(run_role(&p, c, __NR_kill, 1, 0, 0), SECCOMP_RET_ERRNO | EPERM);
#ifndef TEST_SANITIZER
        assert_int_equal(run_role(&p, c, __NR_clone, FORK_FLAGS, 0, 0), SECCOMP_RET_KILL_PROCESS);
        assert_int_equal(run_role(&p, c, __NR_execve, 0, 0, 0), SECCOMP_RET_KILL_PROCESS);
#endif
    }
}
#else
static void test_stacking(void **state)
{
    (void)state;
    skip();
}
#endif

/* --- each role in a forked child ---------------------------------------------------------- */

struct install_args {
    enum sworn_seccomp_role role;
    enum sworn_seccomp_mode mode;
    unsigned flags;
};

/* Descriptors and a folder made before the filter, for the checks to use under it. */
static int pre_sv[2] = {-1, -1};
static char *tmp_dir;

static int install(void *arg)
{
    const struct install_args *a = arg;
    struct sworn_seccomp_report r;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pre_sv) != 0)
        return 1;
    if (sworn_seccomp_install(a->role, a->mode, a->flags, &r) != 0) {
        fprintf(stderr, "seccomp: %s\n", sworn_err_msg());
        return 1;
    }
    return r.instructions == 0 || strcmp(r.arch, TEST_ARCH_NAME) != 0;
}

static int in_role(enum sworn_seccomp_role role, enum sworn_seccomp_mode mode, unsigned flags,
                   int (*fn)(void))
{
    struct install_args a = {role, mode, flags};

    return sworn_child_run(install, &a, fn, NULL);
}

static void *thread_confined(void *arg)
{
    *(int *)arg = sworn_child_confined(0) && sworn_child_confined(syscall(SYS_gettid)) ? 0 : 1;
    return NULL;
}

/* A thread can start under the filter (clone with CLONE_THREAD, after clone3's ENOSYS). */
static int start_thread(void)
{
    pthread_t t;
    int result = -1;

    if (pthread_create(&t, NULL, thread_confined, &result) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    return result;
}

/* One byte each way on the socketpair made before the filter, through poll. */
static int socketpair_io(void)
{
    struct pollfd pfd = {pre_sv[1], POLLIN, 0};
    char c = 'x';

    if (write(pre_sv[0], &c, 1) != 1 || poll(&pfd, 1, -1) != 1 || read(pre_sv[1], &c, 1) != 1)
        return 1;
    return c == 'x' ? 0 : 1;
}

/* What every role does: its memory, time, randomness, identity, signals. */
static int common_checks(void)
{
    struct timespec ts;
    struct rlimit rl;
    unsigned char rnd[16];
    void *m;

    if (!sworn_child_confined(0))
        return 2;
    if (getpid() <= 0 || getuid() != geteuid())
        return 3;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0 || getrandom(rnd, sizeof(rnd), 0) != 16)
        return 4;
    m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mlock(m, 4096) != 0 || munlock(m, 4096) != 0 || munmap(m, 4096) != 0)
        return 5;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 6;
    if (signal(SIGUSR1, SIG_IGN) == SIG_ERR || raise(SIGUSR1) != 0)
        return 7;
    if (socketpair_io() != 0)
        return 8;
    if (start_thread() != 0)
        return 9;
    /* An unlisted benign call: EPERM, not a kill; clone3: ENOSYS. */
    errno = 0;
    if (syscall(SYS_personality, 0xffffffffUL) != -1 || errno != EPERM)
        return 10;
    errno = 0;
    if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
        return 11;
    return 0;
}

/* The engine: threads, its event loop's channels, descriptors passed to it, limits read only. */
static int engine_checks(void)
{
    int rc = common_checks(), sv[2], fd, got = -1;
    struct rlimit rl = {0, 0};
    char c = 'f';
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } cm;
    struct iovec iov = {&c, 1};
    struct msghdr msg;
    struct stat st;

    if (rc != 0)
        return rc;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return 20;
    /* A descriptor received with SCM_RIGHTS (as the monitor passes the listeners). */
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 21;
    memset(&msg, 0, sizeof(msg));
    memset(&cm, 0, sizeof(cm));
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cm.buf;
    msg.msg_controllen = sizeof(cm.buf);
    CMSG_FIRSTHDR(&msg)->cmsg_level = SOL_SOCKET;
    CMSG_FIRSTHDR(&msg)->cmsg_type = SCM_RIGHTS;
    CMSG_FIRSTHDR(&msg)->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(CMSG_FIRSTHDR(&msg)), &fd, sizeof(int));
    if (sendmsg(sv[0], &msg, 0) != 1)
        return 22;
    close(fd);
    memset(&cm, 0, sizeof(cm));
    msg.msg_controllen = sizeof(cm.buf);
    if (recvmsg(sv[1], &msg, MSG_CMSG_CLOEXEC) != 1 || CMSG_FIRSTHDR(&msg) == NULL ||
        CMSG_FIRSTHDR(&msg)->cmsg_type != SCM_RIGHTS)
        return 23;
    memcpy(&got, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
    if (fstat(got, &st) != 0 || !S_ISCHR(st.st_mode))
        return 24;
    close(got);
    if (pipe2(sv, O_CLOEXEC) != 0)
        return 25;
    /* No limit set, no process signalled: EPERM (the monitor does both). */
    errno = 0;
    if (setrlimit(RLIMIT_CORE, &rl) != -1 || errno != EPERM)
        return 26;
    errno = 0;
    if (kill(getppid(), 0) != -1 || errno != EPERM)
        return 27;
    return 0;
}

static void test_engine_allowed(void **state)
{
    (void)state;
    sworn_child_expect_exit0(
        in_role(SWORN_SECCOMP_ENGINE, SWORN_SECCOMP_ENFORCE, SWORN_SECCOMP_INET, engine_checks));
}

/* Calls that kill besides child_fixture.h's, one per child. Each returns when the call came back
 * (a test failure). */
#ifdef SYS_fork
static int call_sys_fork(void)
{
    if (syscall(SYS_fork) == 0)
        _exit(0);
    return 50;
}
#endif

static int call_clone_process(void)
{
    if (syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, 0) == 0)
        _exit(0);
    return 50;
}

static int call_setresuid_root(void)
{
    if (setresuid(0, 0, 0) == 0)
        return 51;
    return 50;
}

static int call_setgroups(void)
{
    if (setgroups(0, NULL) == 0)
        return 51;
    return 50;
}

static int call_setuid(void)
{
    if (setuid(getuid()) == 0)
        return 51;
    return 50;
}

static int call_chroot(void)
{
    if (chroot("/") == 0)
        return 51;
    return 50;
}

static int call_bind(void)
{
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    bind(fd, (struct sockaddr *)&sa, sizeof(sa_family_t)); /* an autobind name */
    return 50;
}

static int call_listen(void)
{
    listen(pre_sv[0], 1);
    return 50;
}

static int call_accept(void)
{
    accept4(pre_sv[0], NULL, NULL, SOCK_CLOEXEC);
    return 50;
}

/* One kill case in a child with the filter of the role, mode and flags in ctx (install_args). */
static int run_in_role(const void *ctx, int (*fn)(void))
{
    const struct install_args *a = ctx;

    return sworn_child_run(install, (void *)a, fn, NULL);
}

static void expect_kills(enum sworn_seccomp_role role, const struct sworn_child_kill *cases,
                         size_t n, unsigned flags)
{
    struct install_args a = {role, SWORN_SECCOMP_ENFORCE, flags};

    sworn_child_expect_kills(run_in_role, &a, cases, n);
}

static void test_engine_kills(void **state)
{
    static const struct sworn_child_kill cases[] = {
        {"fork", sworn_child_call_fork, 1},
#ifdef SYS_fork
        {"fork(2)", call_sys_fork, 0},
#endif
        {"clone without CLONE_THREAD", call_clone_process, 1},
        {"execve", sworn_child_call_execve, 1},
        {"setresuid (own uid)", sworn_child_call_setresuid_own, 0},
        {"setresuid (0)", call_setresuid_root, 0},
        {"setuid", call_setuid, 0},
        {"setgroups", call_setgroups, 0},
        {"unshare", sworn_child_call_unshare, 0},
        {"ptrace", sworn_child_call_ptrace, 1},
        {"mount", sworn_child_call_mount, 0},
    };

    (void)state;
    expect_kills(SWORN_SECCOMP_ENGINE, cases, NELEM(cases), SWORN_SECCOMP_INET);
}

/* The signer: the files SoftHSM's token folder needs after login, sockets to reach its token. */
static int signer_checks(void)
{
    int rc = common_checks(), fd, entries, sv[2];
    char path[512], path2[512], sub[512];
    struct stat st;
    DIR *dir;
    struct sockaddr_un sa;

    if (rc != 0)
        return rc;
    snprintf(path, sizeof(path), "%s/token.object", tmp_dir);
    snprintf(path2, sizeof(path2), "%s/token.object.new", tmp_dir);
    snprintf(sub, sizeof(sub), "%s/a-token", tmp_dir);
    if (mkdir(sub, 0700) != 0)
        return 20;
    fd = open(path2, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(fd, "obj", 3) != 3 || fsync(fd) != 0 ||
        fdatasync(fd) != 0 || ftruncate(fd, 2) != 0 || lseek(fd, 0, SEEK_SET) != 0 ||
        fstat(fd, &st) != 0 || st.st_size != 2 || fcntl(fd, F_GETFD) < 0)
        return 21;
    if (flock(fd, LOCK_UN) != 0 || close(fd) != 0)
        return 22;
    if (rename(path2, path) != 0 || stat(path, &st) != 0)
        return 23;
    dir = opendir(tmp_dir);
    if (dir == NULL)
        return 24;
    entries = 0;
    while (readdir(dir) != NULL)
        entries++;
    closedir(dir);
    if (entries < 4) /* ., .., a-token, token.object */
        return 25;
    if (unlink(path) != 0 || rmdir(sub) != 0)
        return 26;
    /* A Unix socket to reach a TPM resource manager or an HSM daemon again. */
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 27;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/no-such-socket", tmp_dir);
    errno = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != -1 || errno != ENOENT)
        return 28;
    {
        int v = 1;

        if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, sizeof(v)) != 0)
            return 29;
    }
    close(fd);
    /* It keeps the one socketpair it was given: it makes none. */
    errno = 0;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != -1 || errno != EPERM)
        return 30;
    return 0;
}

static int tmp_setup(void **state)
{
    (void)state;
    tmp_dir = sworn_test_tmpdir("seccomp");
    return 0;
}

static int tmp_teardown(void **state)
{
    (void)state;
    sworn_test_rmtree(tmp_dir);
    free(tmp_dir);
    tmp_dir = NULL;
    return 0;
}

static void test_signer_allowed(void **state)
{
    (void)state;
    sworn_child_expect_exit0(
        in_role(SWORN_SECCOMP_SIGNER, SWORN_SECCOMP_ENFORCE, 0, signer_checks));
    sworn_child_expect_exit0(
        in_role(SWORN_SECCOMP_SIGNER, SWORN_SECCOMP_ENFORCE, 0, sworn_child_inet_refused));
    sworn_child_expect_exit0(in_role(SWORN_SECCOMP_SIGNER, SWORN_SECCOMP_ENFORCE,
                                     SWORN_SECCOMP_INET, sworn_child_inet_allowed));
}

static void test_signer_kills(void **state)
{
    static const struct sworn_child_kill cases[] = {
        {"bind", call_bind, 0},
        {"listen", call_listen, 0},
        {"accept", call_accept, 0},
        {"fork", sworn_child_call_fork, 1},
#ifdef SYS_fork
        {"fork(2)", call_sys_fork, 0},
#endif
        {"clone without CLONE_THREAD", call_clone_process, 1},
        {"execve", sworn_child_call_execve, 1},
        {"setresuid (own uid)", sworn_child_call_setresuid_own, 0},
        {"unshare", sworn_child_call_unshare, 0},
        {"ptrace", sworn_child_call_ptrace, 1},
    };

    (void)state;
    expect_kills(SWORN_SECCOMP_SIGNER, cases, NELEM(cases), 0);
}

/* The proxy: the engine's calls, plus an upstream TCP socket and a UDP socket (DNS). */
static int proxy_checks(void)
{
    int rc = engine_checks(), fd;
    struct sockaddr_in sin;

    if (rc != 0)
        return rc;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons(9); /* discard: nobody listens; the connect is refused or sent */
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
        sendto(fd, "q", 1, 0, NULL, 0) != 1)
        return 60;
    close(fd);
    fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 61;
    close(fd);
    return 0;
}

static void test_proxy_allowed(void **state)
{
    (void)state;
    sworn_child_expect_exit0(
        in_role(SWORN_SECCOMP_PROXY, SWORN_SECCOMP_ENFORCE, SWORN_SECCOMP_INET, proxy_checks));
}

static void test_proxy_kills(void **state)
{
    static const struct sworn_child_kill cases[] = {
        {"bind", call_bind, 0},
        {"listen", call_listen, 0},
        {"fork", sworn_child_call_fork, 1},
        {"clone without CLONE_THREAD", call_clone_process, 1},
        {"execve", sworn_child_call_execve, 1},
        {"setresuid (own uid)", sworn_child_call_setresuid_own, 0},
        {"setuid", call_setuid, 0},
        {"unshare", sworn_child_call_unshare, 0},
        {"ptrace", sworn_child_call_ptrace, 1},
        {"mount", sworn_child_call_mount, 0},
    };

    (void)state;
    expect_kills(SWORN_SECCOMP_PROXY, cases, NELEM(cases), SWORN_SECCOMP_INET);
}

/* Fork and exec argv (with envp, NULL: none) with stdout into out (cap bytes, NUL-terminated);
 * the wait status, or -1. */
static int spawn(char *const argv[], char *const envp[], char *out, size_t cap)
{
    char *const no_env[] = {NULL};
    int p[2], status;
    size_t len = 0;
    ssize_t got;
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (dup2(p[1], 1) < 0)
            _exit(126);
        execve(argv[0], argv, envp != NULL ? envp : no_env);
        _exit(127);
    }
    close(p[1]);
    while (len + 1 < cap && (got = read(p[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)got;
    out[len] = '\0';
    close(p[0]);
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

/* A child of the monitor stacks the signer's filter, whose kill list then applies to it. */
static int stacked_signer(void)
{
    struct sworn_seccomp_report r;
    char status[8192];
    pid_t pid = fork();
    int ws;

    if (pid < 0)
        return 1;
    if (pid == 0) {
        if (sworn_seccomp_install(SWORN_SECCOMP_SIGNER, SWORN_SECCOMP_ENFORCE, 0, &r) != 0)
            _exit(2);
        if (sworn_test_read_proc("/proc/self/status", status, sizeof(status)) < 0 ||
            strstr(status, "\nSeccomp_filters:\t2\n") == NULL)
            _exit(3);
        if (socketpair_io() != 0)
            _exit(4);
        call_bind();
        _exit(5);
    }
    if (waitpid(pid, &ws, 0) != pid)
        return 1;
    if (WIFEXITED(ws))
        return 10 + WEXITSTATUS(ws);
    return WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSYS ? 0 : 9;
}

/*
 * main() of this program exec'd by a child of the monitor (monitor_checks): it runs under the
 * inherited filter, installs the signer's, can start a thread, and is killed by its first bind.
 * Any return is a failed check (the exit status says which).
 */
#define AS_SIGNER_CHILD "--as-signer-child"

static int as_signer_child(void)
{
    struct sworn_seccomp_report r;
    char status[8192];

    if (sworn_test_read_proc("/proc/self/status", status, sizeof(status)) < 0 ||
        strstr(status, "\nSeccomp_filters:\t1\n") == NULL ||
        strstr(status, "\nNoNewPrivs:\t1\n") == NULL)
        return 2;
    if (sworn_seccomp_install(SWORN_SECCOMP_SIGNER, SWORN_SECCOMP_ENFORCE, 0, &r) != 0)
        return 3;
    if (sworn_test_read_proc("/proc/self/status", status, sizeof(status)) < 0 ||
        strstr(status, "\nSeccomp_filters:\t2\n") == NULL)
        return 4;
    if (start_thread() != 0)
        return 5;
    call_bind();
    return 6;
}

/* The monitor: children forked and exec'd (inheriting the filter), a socket file, signals. */
static int monitor_checks(void)
{
    int rc = common_checks(), fd, status, p[2];
    char *const true_argv[] = {"/bin/true", NULL};
    char *const cat_argv[] = {"/bin/cat", "/proc/self/status", NULL};
    char *const self_argv[] = {"/proc/self/exe", AS_SIGNER_CHILD, NULL};
    static char out[16384];
    struct sockaddr_un sa;
    struct rlimit rl = {0, 0};
    uid_t uid = getuid();
    gid_t gid = getgid();
    pid_t pid;

    if (rc != 0)
        return rc;
    status = spawn(true_argv, NULL, out, sizeof(out));
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 20;
    /* The exec'd program runs under the inherited filter. */
    status = spawn(cat_argv, NULL, out, sizeof(out));
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 21;
    if (strstr(out, "\nSeccomp:\t2\n") == NULL || strstr(out, "\nNoNewPrivs:\t1\n") == NULL)
        return 22;
    /* A child is signalled and reaped. */
    if (pipe2(p, O_CLOEXEC) != 0)
        return 23;
    pid = fork();
    if (pid < 0)
        return 23;
    if (pid == 0) {
        char c;

        close(p[1]);
        _exit(read(p[0], &c, 1) == 0 ? 0 : 1); /* blocks until the SIGKILL below */
    }
    close(p[0]);
    if (kill(pid, SIGKILL) != 0 || waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) ||
        WTERMSIG(status) != SIGKILL)
        return 24;
    close(p[1]);
    /* Its children's privilege drop and limits (here to the ids it has). */
    if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
        return 25;
    if (setrlimit(RLIMIT_CORE, &rl) != 0)
        return 26;
    /* A socket file: bound, listening, its mode set, removed. */
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/decision.sock", tmp_dir);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 8) != 0)
        return 27;
    if (chmod(sa.sun_path, 0660) != 0 || chown(sa.sun_path, uid, gid) != 0 ||
        unlink(sa.sun_path) != 0)
        return 28;
    close(fd);
    /* A child that installs its own (signer) filter on top of this one, forked; and exec'd, as
     * the monitor starts sworn-signer: this test program again, dynamically linked against
     * OpenSSL, cmocka and (in sanitizer builds) the sanitizer runtime, whose start runs under
     * the monitor's filter alone. */
    rc = stacked_signer();
    if (rc != 0)
        return 40 + rc;
    status = spawn(self_argv, environ, out, sizeof(out));
    if (status < 0)
        return 29;
    if (WIFEXITED(status))
        return 60 + WEXITSTATUS(status);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
        return 30;
    return 0;
}

static void test_monitor_allowed(void **state)
{
    (void)state;
    sworn_child_expect_exit0(
        in_role(SWORN_SECCOMP_MONITOR, SWORN_SECCOMP_ENFORCE, SWORN_SECCOMP_INET, monitor_checks));
}

static void test_monitor_kills(void **state)
{
    static const struct sworn_child_kill cases[] = {
        {"ptrace", sworn_child_call_ptrace, 1},
        {"unshare", sworn_child_call_unshare, 0},
        {"clone NEWNET", sworn_child_call_clone_newnet, 0},
        {"mount", sworn_child_call_mount, 0},
        {"chroot", call_chroot, 0},
    };
    static const struct sworn_child_kill noexec[] = {
        {"execve (NOEXEC)", sworn_child_call_execve, 1}};

    (void)state;
    expect_kills(SWORN_SECCOMP_MONITOR, cases, NELEM(cases), SWORN_SECCOMP_INET);
    expect_kills(SWORN_SECCOMP_MONITOR, noexec, NELEM(noexec),
                 SWORN_SECCOMP_INET | SWORN_SECCOMP_NOEXEC);
}

/* Log mode: an unlisted call is allowed (and logged by the kernel); the kill list still kills. */
static void test_log_mode(void **state)
{
    (void)state;
    for (size_t i = 0; i < NELEM(roles); i++) {
        sworn_child_expect_exit0(in_role(roles[i], SWORN_SECCOMP_LOG, 0, sworn_child_log_checks));
        sworn_child_expect_sigsys(in_role(roles[i], SWORN_SECCOMP_LOG, 0, sworn_child_call_unshare),
                                  "unshare (log)");
    }
    sworn_child_expect_sigsys(
        in_role(SWORN_SECCOMP_ENGINE, SWORN_SECCOMP_LOG, 0, sworn_child_call_setresuid_own),
        "setresuid (engine, log)");
    sworn_child_expect_sigsys(in_role(SWORN_SECCOMP_SIGNER, SWORN_SECCOMP_LOG, 0, call_bind),
                              "bind (signer, log)");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_off),
        cmocka_unit_test(test_stacking),
        cmocka_unit_test(test_engine_allowed),
        cmocka_unit_test(test_engine_kills),
        cmocka_unit_test_setup_teardown(test_signer_allowed, tmp_setup, tmp_teardown),
        cmocka_unit_test(test_signer_kills),
        cmocka_unit_test(test_proxy_allowed),
        cmocka_unit_test(test_proxy_kills),
        cmocka_unit_test_setup_teardown(test_monitor_allowed, tmp_setup, tmp_teardown),
        cmocka_unit_test(test_monitor_kills),
        cmocka_unit_test(test_log_mode),
    };

#ifndef TEST_ARCH
    fprintf(stderr, "test_seccomp: no system call table for this architecture\n");
    return 77;
#endif
    if (argc == 2 && strcmp(argv[1], AS_SIGNER_CHILD) == 0)
        return as_signer_child();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
