/*
 * seccomp.c -- the seccomp filter builder of sworn's processes (seccomp.h; docs/decisiond.md
 * section 9).
 *
 * The filter is classic BPF, written out here: there is no libseccomp among sworn's libraries,
 * and a filter of a few hundred instructions is easier to audit than a dependency. Its shape:
 *
 *   load arch;  != the build's AUDIT_ARCH          -> KILL_PROCESS
 *   load nr;    (x86_64) nr has the x32 bit         -> KILL_PROCESS
 *   for each call the role allows:  nr == call      -> ALLOW
 *   for each call the role kills:   nr == call      -> KILL_PROCESS
 *   socket, ioctl, prctl, clone, (prlimit64): an argument check ending in RETs
 *   clone3                                          -> ERRNO(ENOSYS)
 *   default                                         -> ERRNO(EPERM) (enforce) / LOG (log)
 *
 * A rule's block is one RET, or an argument check that ends in RETs. The blocks never jump
 * forward past their own end, so every jump offset stays small. Arguments are compared on their
 * low 32 bits only, except prlimit64's pointer: every other argument checked is an int (or
 * unsigned int) in the kernel, which ignores the upper half, and both supported architectures
 * are little-endian (the table is compiled only for a little-endian build).
 *
 * The lists: one allow-list and one kill list that every role shares, then per role. A role's
 * program is made of the lists whose role mask names it, and no call may be on two of them (nor
 * be one of the argument-checked calls): sworn_seccomp_build checks that before it emits
 * anything, so that the order of the lists never decides what a call gets. The scan is linear,
 * and the lists are roughly by frequency; since Linux 5.11 the kernel caches, per call number,
 * the calls a filter allows whatever their arguments, so the order costs nothing there.
 *
 * The numbers come from <sys/syscall.h> (__NR_*), so the same lists serve x86_64 and aarch64,
 * with the older calls that aarch64 lacks behind #ifdef.
 */
#define _GNU_SOURCE /* syscall(2), the __NR_ and SYS_ names */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "err.h"
#include "seccomp.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#if defined(__x86_64__) && !defined(__ILP32__)
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#define SECCOMP_ARCH_NAME "x86_64"
#elif defined(__aarch64__) && !defined(__ILP32__)
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#define SECCOMP_ARCH_NAME "aarch64"
#endif
#endif

/* Sanitizer builds (tests only) need a little more for their reports (seccomp.h). */
#if defined(__SANITIZE_ADDRESS__)
#define SECCOMP_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SECCOMP_SANITIZER 1
#endif
#endif

const char *sworn_seccomp_mode_name(enum sworn_seccomp_mode mode)
{
    switch (mode) {
    case SWORN_SECCOMP_OFF:
        return "off";
    case SWORN_SECCOMP_LOG:
        return "log";
    case SWORN_SECCOMP_ENFORCE:
        return "enforce";
    default:
        return "?";
    }
}

const char *sworn_seccomp_role_name(enum sworn_seccomp_role role)
{
    switch (role) {
    case SWORN_SECCOMP_MONITOR:
        return "monitor";
    case SWORN_SECCOMP_ENGINE:
        return "engine";
    case SWORN_SECCOMP_SIGNER:
        return "signer";
    case SWORN_SECCOMP_PROXY:
        return "proxy";
    default:
        return "?";
    }
}

/* The checks every entry point makes before anything else. */
static int check_args(enum sworn_seccomp_role role, enum sworn_seccomp_mode mode, unsigned flags)
{
    if (role != SWORN_SECCOMP_MONITOR && role != SWORN_SECCOMP_ENGINE &&
        role != SWORN_SECCOMP_SIGNER && role != SWORN_SECCOMP_PROXY)
        return sworn_err_set(SWORN_ERR_ARG, "seccomp: unknown role %d", (int)role);
    if (mode != SWORN_SECCOMP_OFF && mode != SWORN_SECCOMP_LOG && mode != SWORN_SECCOMP_ENFORCE)
        return sworn_err_set(SWORN_ERR_ARG, "seccomp: unknown mode %d", (int)mode);
    if ((flags & ~(SWORN_SECCOMP_INET | SWORN_SECCOMP_NOEXEC)) != 0)
        return sworn_err_set(SWORN_ERR_ARG, "seccomp: unknown flags 0x%x", flags);
    return 0;
}

#ifdef SECCOMP_ARCH

/* --- the lists ---------------------------------------------------------------------------- */

/*
 * Allowed with any arguments in every role. This is what the signer needs once its key is open;
 * the engine and the monitor need all of it too. Roughly by frequency.
 */
static const int base_allowed[] = {
    /* Threads: locks and condition variables (the engine's workers and checkpoint thread,
     * libevent, a thread a PKCS#11 module or TCTI starts in the signer). */
    __NR_futex,
    /* The signer's socketpair and a TPM's device or socket (poll); the monitor's children. */
    __NR_ppoll,
#ifdef __NR_poll
    __NR_poll,
#endif
    /* I/O on descriptors already open or opened below. */
    __NR_read,
    __NR_write,
    __NR_readv,
    __NR_writev,
    __NR_pread64,
    __NR_pwrite64,
    __NR_lseek,
    __NR_close,
    /* Messages on a socket: the signer's requests, the engine's peers and the descriptors the
     * monitor passes it (SCM_RIGHTS), a TPM or HSM over TCP, nscd for user names. */
    __NR_recvmsg,
    __NR_sendmsg,
    __NR_recvfrom,
    __NR_sendto,
    /* Reaching a TPM (swtpm, mssim, tabrmd) or an HSM again after it went away; getaddrinfo's
     * address sort (getsockname on a connected UDP socket) for a TCTI named by host. */
    __NR_connect,
    __NR_getsockopt,
    __NR_setsockopt,
    __NR_getsockname,
    __NR_getpeername,
    /* Files: SoftHSM's token folder after login (objects written, renamed, locked, removed),
     * sqlite's log and journal, the tiles export, /etc/passwd and nsswitch, /proc/self. The
     * older numbers are the same calls with the same rights. */
    __NR_openat,
#ifdef __NR_open
    __NR_open,
#endif
    __NR_fstat,
    __NR_newfstatat,
#ifdef __NR_stat
    __NR_stat,
#endif
#ifdef __NR_lstat
    __NR_lstat,
#endif
    __NR_statx,
    __NR_fcntl, /* sqlite's locks (F_SETLK), O_NONBLOCK, FD_CLOEXEC */
    __NR_flock, /* SoftHSM's token files */
    __NR_getdents64,
    __NR_fsync,
    __NR_fdatasync,
    __NR_ftruncate,
#ifdef __NR_renameat
    __NR_renameat,
#endif
#ifdef __NR_renameat2
    __NR_renameat2,
#endif
#ifdef __NR_rename
    __NR_rename,
#endif
    __NR_unlinkat,
#ifdef __NR_unlink
    __NR_unlink,
#endif
#ifdef __NR_rmdir
    __NR_rmdir, /* unlinkat(AT_REMOVEDIR) under its older number */
#endif
    __NR_mkdirat,
#ifdef __NR_mkdir
    __NR_mkdir,
#endif
    /* Memory: malloc, thread stacks, OpenSSL's and SoftHSM's buffers, locked pages for secrets
     * (SoftHSM's secure allocator unlocks what it frees), the vault's values. */
    __NR_mmap,
    __NR_munmap,
    __NR_mremap,
    __NR_mprotect,
    __NR_madvise,
    __NR_brk,
    __NR_mlock,
    __NR_munlock,
    __NR_mlockall,
    /* Time. Mostly the vDSO, which makes no call; these are its fallbacks and the sleeps. */
    __NR_clock_gettime,
    __NR_clock_getres,
    __NR_gettimeofday,
    __NR_clock_nanosleep,
    __NR_nanosleep,
    __NR_getrandom, /* OpenSSL's DRBG, SoftHSM's RNG */
    __NR_sched_yield,
    __NR_sched_getaffinity, /* pthread_getattr_np (a new thread's stack, in sanitizer runtimes) */
    /* Identity and limits, read only (prlimit64 is checked below: read only outside the
     * monitor). */
    __NR_getpid,
    __NR_gettid,
    __NR_getppid,
    __NR_getuid,
    __NR_geteuid,
    __NR_getgid,
    __NR_getegid,
    __NR_getresuid,
    __NR_getresgid,
    __NR_getgroups,
#ifdef __NR_getrlimit
    __NR_getrlimit,
#endif
    /* Whether a file exists (access(2)): a PKCS#11 module probing its token folder, sqlite. */
    __NR_faccessat,
#ifdef __NR_faccessat2
    __NR_faccessat2,
#endif
#ifdef __NR_access
    __NR_access,
#endif
    /* Signals, and threads and processes ending. */
    __NR_rt_sigaction,
    __NR_rt_sigprocmask,
    __NR_rt_sigreturn,
    __NR_rt_sigpending,
    __NR_sigaltstack,
    __NR_restart_syscall,
    __NR_tgkill, /* raise() and abort() */
    __NR_exit,
    __NR_exit_group,
    __NR_set_robust_list,
    __NR_set_tid_address,
    __NR_rseq,
#ifdef __NR_arch_prctl
    __NR_arch_prctl, /* glibc's thread pointer */
#endif
#ifdef SECCOMP_SANITIZER
    /* LeakSanitizer's stop-the-world: a tracer (clone, below) lists /proc/self/task with the old
     * getdents on x86_64 and attaches to every thread; the symbolizer may be a program. */
    __NR_ptrace,
    __NR_execve,
    __NR_wait4, /* the tracer waits for each thread it attached to (waitpid __WALL) */
#ifdef __NR_getdents
    __NR_getdents,
#endif
#endif
};

/*
 * Allowed with any arguments in the engine (and so in the monitor, whose children inherit its
 * filter). The running daemon's event loop, sqlite, the TPM and operator names.
 */
static const int engine_allowed[] = {
    /* The event loop (libevent's epoll back end). */
    __NR_epoll_pwait,
    __NR_epoll_ctl,
#ifdef __NR_epoll_wait
    __NR_epoll_wait,
#endif
#ifdef __NR_epoll_pwait2
    __NR_epoll_pwait2,
#endif
    __NR_pselect6,
    /* Peers on the listeners the monitor bound; closing a peer's half. */
    __NR_accept4,
    __NR_accept,
    __NR_shutdown,
    /* libevent's notification channel between threads (a socketpair, a pipe, or an eventfd),
     * and timers. */
    __NR_socketpair,
    __NR_pipe2,
#ifdef __NR_pipe
    __NR_pipe,
#endif
    __NR_eventfd2,
    __NR_timerfd_create,
    __NR_timerfd_settime,
    __NR_timerfd_gettime,
    /* Descriptors and vectored I/O: sqlite, stdio. */
    __NR_dup,
    __NR_dup3,
#ifdef __NR_dup2
    __NR_dup2,
#endif
    __NR_preadv,
    __NR_pwritev,
    /* Files: sqlite (the journal's owner and mode when run as root, preallocation, the free
     * space of its folder), the tiles export, /proc/self, operator names. */
    __NR_fallocate,
    __NR_fstatfs,
    __NR_statfs,
    __NR_readlinkat,
#ifdef __NR_readlink
    __NR_readlink,
#endif
    __NR_fchmod,
    __NR_fchown,
    __NR_getcwd,
    __NR_umask,
    /* Memory: the vault's locked pages (mlock2 and the unlocking of them). */
    __NR_mlock2,
    __NR_munlockall,
    __NR_mincore,
    /* Reading about the system and itself: worker counts, metrics. */
    __NR_getrusage,
    __NR_uname,
    __NR_sysinfo,
    __NR_capget,
};

/*
 * Allowed with any arguments in the monitor only. Starting, watching and restarting its
 * children, and what those children do from their fork to their own filter (they run under this
 * one until then, and under both after): the exec and the dynamic loader, their privilege drop,
 * their resource limits, libevent's setup, their own seccomp filter.
 */
static const int monitor_allowed[] = {
/* A child: forked (clone is checked below: no namespaces), exec'd, waited for, signalled. */
#ifdef __NR_fork
    __NR_fork,
#endif
#ifdef __NR_vfork
    __NR_vfork,
#endif
#ifndef SECCOMP_SANITIZER /* already on the shared list in sanitizer builds */
    __NR_execve,
    __NR_wait4,
#endif
    __NR_waitid,
    __NR_kill,
    __NR_pidfd_open,
    __NR_pidfd_send_signal,
    __NR_rt_sigtimedwait,
    __NR_rt_sigsuspend,
    __NR_signalfd4,
/* The child closes what it inherited before the exec (signer/launch.c), in one call. */
#ifdef __NR_close_range
    __NR_close_range,
#endif
    __NR_chdir,
    __NR_fchdir,
    /* The child's privilege drop (privdrop.c). With no_new_privs these can only give privileges
     * away; setuid(0) failing afterwards is one of the checks made after it. */
    __NR_setgroups,
    __NR_setresgid,
    __NR_setresuid,
    __NR_setgid,
    __NR_setuid,
    __NR_setregid,
    __NR_setreuid,
    __NR_setfsgid,
    __NR_setfsuid,
/* RLIMIT_CORE 0 in each child (privdrop.c), RLIMIT_MEMLOCK raised before a drop. */
#ifdef __NR_setrlimit
    __NR_setrlimit,
#endif
    __NR_prlimit64,
    /* The socket files: bound, listening, given their owner and mode, a stale one removed
     * (unlink is on the shared list). */
    __NR_bind,
    __NR_listen,
    __NR_fchmodat,
#ifdef __NR_chmod
    __NR_chmod,
#endif
    __NR_fchownat,
#ifdef __NR_chown
    __NR_chown,
#endif
#ifdef __NR_lchown
    __NR_lchown,
#endif
    /* An exec'd child's start-up: libevent's event base, and its own filter, which stacks on
     * this one (prctl(PR_SET_NO_NEW_PRIVS) is among the prctl options below). */
    __NR_epoll_create1,
#ifdef __NR_epoll_create
    __NR_epoll_create,
#endif
    __NR_seccomp,
};

/*
 * Killed in every role. Never made by any part of sworn, and each a step an attacker takes:
 * inspecting or writing another process, changing the mount or namespace view, loading kernel
 * code, keyrings, setting the clock that receipts and checkpoints carry, and the kernel's own
 * attack surface (bpf, userfaultfd, perf, io_uring, whose operations this filter never sees).
 * The process is killed at once: a request in flight is unanswered, and the proxy fails closed.
 */
static const int base_killed[] = {
#ifndef SECCOMP_SANITIZER
    __NR_ptrace,
#endif
    __NR_execveat,
    __NR_process_vm_readv,
    __NR_process_vm_writev,
    __NR_pidfd_getfd,
    __NR_process_madvise,
    __NR_mount,
    __NR_umount2,
    __NR_pivot_root,
    __NR_chroot,
    __NR_fsopen,
    __NR_fsconfig,
    __NR_fsmount,
    __NR_fspick,
    __NR_move_mount,
    __NR_open_tree,
#ifdef __NR_mount_setattr
    __NR_mount_setattr,
#endif
    __NR_open_by_handle_at,
    __NR_name_to_handle_at,
    __NR_setns,
    __NR_unshare,
    __NR_init_module,
    __NR_finit_module,
    __NR_delete_module,
    __NR_kexec_load,
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
    __NR_reboot,
    __NR_swapon,
    __NR_swapoff,
#ifdef __NR_iopl
    __NR_iopl,
#endif
#ifdef __NR_ioperm
    __NR_ioperm,
#endif
    __NR_keyctl,
    __NR_add_key,
    __NR_request_key,
    __NR_settimeofday,
    __NR_clock_settime,
    __NR_bpf,
    __NR_userfaultfd,
    __NR_perf_event_open,
    __NR_io_uring_setup,
    __NR_io_uring_enter,
    __NR_io_uring_register,
};

/*
 * Killed in the engine and the signer: a new process (a clone without CLONE_THREAD is killed by
 * the clone check), a program, another identity. Only the monitor starts processes, and both
 * have dropped their privileges for good before they install their filter.
 */
static const int confined_killed[] = {
#ifdef __NR_fork
    __NR_fork,
#endif
#ifdef __NR_vfork
    __NR_vfork,
#endif
#ifndef SECCOMP_SANITIZER
    __NR_execve,
#endif
    __NR_setuid,    __NR_setgid,    __NR_setreuid, __NR_setregid, __NR_setresuid,
    __NR_setresgid, __NR_setgroups, __NR_setfsuid, __NR_setfsgid,
};

/* Killed in the signer: it serves one socketpair and no one else. */
static const int signer_killed[] = {
    __NR_bind,
    __NR_listen,
    __NR_accept,
    __NR_accept4,
};

/* Killed in the proxy: every listener is bound before its filter, and no name is served. */
static const int proxy_killed[] = {
    __NR_bind,
    __NR_listen,
};

#define ROLE_BIT(r) (1u << (unsigned)(r))
#define ALL_ROLES                                                                                  \
    (ROLE_BIT(SWORN_SECCOMP_MONITOR) | ROLE_BIT(SWORN_SECCOMP_ENGINE) |                            \
     ROLE_BIT(SWORN_SECCOMP_SIGNER) | ROLE_BIT(SWORN_SECCOMP_PROXY))
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct list {
    const int *nr;
    size_t n;
    unsigned roles; /* ROLE_BIT of each role the list is part of */
};

static const struct list allow_lists[] = {
    {base_allowed, NELEM(base_allowed), ALL_ROLES},
    {engine_allowed, NELEM(engine_allowed),
     ROLE_BIT(SWORN_SECCOMP_ENGINE) | ROLE_BIT(SWORN_SECCOMP_MONITOR) |
         ROLE_BIT(SWORN_SECCOMP_PROXY)},
    {monitor_allowed, NELEM(monitor_allowed), ROLE_BIT(SWORN_SECCOMP_MONITOR)},
};

static const struct list kill_lists[] = {
    {base_killed, NELEM(base_killed), ALL_ROLES},
    {confined_killed, NELEM(confined_killed),
     ROLE_BIT(SWORN_SECCOMP_ENGINE) | ROLE_BIT(SWORN_SECCOMP_SIGNER) |
         ROLE_BIT(SWORN_SECCOMP_PROXY)},
    {signer_killed, NELEM(signer_killed), ROLE_BIT(SWORN_SECCOMP_SIGNER)},
    {proxy_killed, NELEM(proxy_killed), ROLE_BIT(SWORN_SECCOMP_PROXY)},
};

/* Namespaces: a clone that asks for one is an unshare (killed likewise). */
#define CLONE_NS_FLAGS                                                                             \
    (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |     \
     CLONE_NEWCGROUP)

/* socket(2) families: peers, the signer's socketpair, nscd (AF_UNIX); with SWORN_SECCOMP_INET, a
 * TPM or HSM over TCP. */
static const uint32_t socket_families_local[] = {AF_UNIX};
static const uint32_t socket_families_inet[] = {AF_UNIX, AF_INET, AF_INET6};

/* ioctl(2) requests: libevent's FIONREAD, stdio's isatty (TCGETS), FIONBIO, FIOCLEX. */
static const uint32_t ioctl_requests[] = {FIONREAD, TCGETS, TIOCGWINSZ, FIONBIO, FIOCLEX, FIONCLEX};

/* prctl(2) options that only read, or only give something up. PR_SET_DUMPABLE is checked apart:
 * only 0 (privdrop.c sets it again after a credential change). */
static const uint32_t prctl_options[] = {
    PR_GET_DUMPABLE,     PR_SET_NAME,         PR_GET_NAME,    PR_SET_PDEATHSIG, PR_GET_PDEATHSIG,
    PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS, PR_GET_SECCOMP, PR_CAPBSET_READ,
#ifdef SECCOMP_SANITIZER
    PR_SET_PTRACER, /* LeakSanitizer's tracer */
#endif
};

/* The calls judged by an argument check (or clone3's ENOSYS): on no list. prlimit64 is one too,
 * outside the monitor (is_checked). */
static const int checked_calls[] = {__NR_socket, __NR_ioctl, __NR_prctl, __NR_clone, __NR_clone3};

static int is_checked(enum sworn_seccomp_role role, int nr)
{
    for (size_t i = 0; i < NELEM(checked_calls); i++)
        if (checked_calls[i] == nr)
            return 1;
    return role != SWORN_SECCOMP_MONITOR && nr == __NR_prlimit64;
}

/* Whether SWORN_SECCOMP_NOEXEC moves execve from the monitor's allow-list to its kill list. */
static int noexec_moves_execve(enum sworn_seccomp_role role, unsigned flags)
{
#ifdef SECCOMP_SANITIZER
    (void)role;
    (void)flags;
    return 0; /* the symbolizer may be a program (seccomp.h) */
#else
    return role == SWORN_SECCOMP_MONITOR && (flags & SWORN_SECCOMP_NOEXEC) != 0;
#endif
}

/*
 * Whether every call of role's lists is on exactly one of them and none is an argument-checked
 * call; counts the allowed and killed calls into report. 0, or -1 with SWORN_ERR_CORRUPT.
 */
static int check_lists(enum sworn_seccomp_role role, unsigned flags,
                       struct sworn_seccomp_report *report)
{
    const struct list *all[NELEM(allow_lists) + NELEM(kill_lists)];
    size_t nall = 0;

    for (size_t l = 0; l < NELEM(allow_lists); l++)
        if (allow_lists[l].roles & ROLE_BIT(role)) {
            all[nall++] = &allow_lists[l];
            report->allowed += allow_lists[l].n;
        }
    for (size_t l = 0; l < NELEM(kill_lists); l++)
        if (kill_lists[l].roles & ROLE_BIT(role)) {
            all[nall++] = &kill_lists[l];
            report->killed += kill_lists[l].n;
        }
    for (size_t a = 0; a < nall; a++)
        for (size_t i = 0; i < all[a]->n; i++) {
            int nr = all[a]->nr[i];

            if (is_checked(role, nr))
                return sworn_err_set(SWORN_ERR_CORRUPT,
                                     "seccomp: call %d of the %s lists is argument-checked", nr,
                                     sworn_seccomp_role_name(role));
            /* Against every later entry of this list and of the later lists. */
            for (size_t b = a; b < nall; b++)
                for (size_t j = (b == a ? i + 1 : 0); j < all[b]->n; j++)
                    if (all[b]->nr[j] == nr)
                        return sworn_err_set(SWORN_ERR_CORRUPT,
                                             "seccomp: call %d is twice on the %s lists", nr,
                                             sworn_seccomp_role_name(role));
        }
    if (noexec_moves_execve(role, flags)) {
        report->allowed--;
        report->killed++;
    }
    return 0;
}

/* --- the program -------------------------------------------------------------------------- */

#define ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args[i]))
#define ARG_HI(i) ((uint32_t)offsetof(struct seccomp_data, args[i]) + 4u)

struct prog {
    struct sock_filter *insn;
    size_t n, max;
    int overflow;
};

static void emit(struct prog *p, struct sock_filter f)
{
    if (p->n >= p->max) {
        p->overflow = 1;
        return;
    }
    p->insn[p->n++] = f;
}

static void emit_ret(struct prog *p, uint32_t action)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

static void emit_load(struct prog *p, uint32_t offset)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset));
}

static void emit_load_nr(struct prog *p)
{
    emit_load(p, (uint32_t)offsetof(struct seccomp_data, nr));
}

static void emit_jump(struct prog *p, uint16_t op, uint32_t k, uint8_t jt, uint8_t jf)
{
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | op | BPF_K, k, jt, jf));
}

/*
 * if (nr == n) { block } -- returns the jump's index; end_if_nr(p, at) then sets the jump over the
 * block just emitted. The block must end in RETs: nothing falls out of it into the next rule.
 */
static size_t begin_if_nr(struct prog *p, int n)
{
    size_t at = p->n;

    emit_jump(p, BPF_JEQ, (uint32_t)n, 0, 0);
    return at;
}

static void end_if_nr(struct prog *p, size_t at)
{
    size_t len = p->n - at - 1;

    if (p->overflow || len > 255) {
        p->overflow = 1;
        return;
    }
    p->insn[at].jf = (uint8_t)len;
}

/* nr == n: return action. */
static void emit_nr_ret(struct prog *p, int n, uint32_t action)
{
    size_t at = begin_if_nr(p, n);

    emit_ret(p, action);
    end_if_nr(p, at);
}

/* nr == n: allowed when argument arg is one of vals, otherwise other. */
static void emit_arg_in(struct prog *p, int n, unsigned arg, const uint32_t *vals, size_t nvals,
                        uint32_t other)
{
    size_t at = begin_if_nr(p, n);

    emit_load(p, ARG_LO(arg));
    for (size_t i = 0; i < nvals; i++)
        /* On a match, jump over the remaining compares and the "other" return to the allow. */
        emit_jump(p, BPF_JEQ, vals[i], (uint8_t)(nvals - i), 0);
    emit_ret(p, other);
    emit_ret(p, SECCOMP_RET_ALLOW);
    end_if_nr(p, at);
}

/* prctl: the listed options, and PR_SET_DUMPABLE with 0 only; anything else gets other. */
static void emit_prctl(struct prog *p, uint32_t other)
{
    size_t nopt = NELEM(prctl_options);
    size_t at = begin_if_nr(p, __NR_prctl);

    /* load option; a listed one -> allow; != SET_DUMPABLE -> other; load arg2; == 0 -> allow */
    emit_load(p, ARG_LO(0));
    for (size_t i = 0; i < nopt; i++)
        emit_jump(p, BPF_JEQ, prctl_options[i], (uint8_t)(nopt - i + 4), 0);
#ifdef SECCOMP_SANITIZER
    /* LeakSanitizer makes the process dumpable while its tracer attaches, then restores it. */
    emit_jump(p, BPF_JEQ, PR_SET_DUMPABLE, 4, 0);
#else
    emit_jump(p, BPF_JEQ, PR_SET_DUMPABLE, 1, 0);
#endif
    emit_ret(p, other);
    emit_load(p, ARG_LO(1));
    emit_jump(p, BPF_JEQ, 0, 1, 0);
    emit_ret(p, other);
    emit_ret(p, SECCOMP_RET_ALLOW);
    end_if_nr(p, at);
}

/*
 * clone: never into a new namespace (that is an unshare: killed). Outside the monitor also
 * never a new process: only with CLONE_THREAD (which the kernel accepts only with CLONE_SIGHAND
 * and CLONE_VM, so it is a thread of this process), except in sanitizer builds, where
 * LeakSanitizer's tracer is a clone without it.
 */
static void emit_clone(struct prog *p, enum sworn_seccomp_role role, uint32_t kill)
{
    size_t at = begin_if_nr(p, __NR_clone);
    int threads_only = role != SWORN_SECCOMP_MONITOR;

#ifdef SECCOMP_SANITIZER
    threads_only = 0;
#endif
    emit_load(p, ARG_LO(0));
    emit_jump(p, BPF_JSET, CLONE_NS_FLAGS, 0, 1);
    emit_ret(p, kill);
    if (threads_only) {
        emit_jump(p, BPF_JSET, CLONE_THREAD, 1, 0);
        emit_ret(p, kill);
    }
    emit_ret(p, SECCOMP_RET_ALLOW);
    end_if_nr(p, at);
}

/* prlimit64 outside the monitor: reading a limit (new_limit NULL, all 64 bits) only. */
static void emit_prlimit_read(struct prog *p, uint32_t other)
{
    size_t at = begin_if_nr(p, __NR_prlimit64);

    emit_load(p, ARG_LO(2));
    emit_jump(p, BPF_JEQ, 0, 0, 2);
    emit_load(p, ARG_HI(2));
    emit_jump(p, BPF_JEQ, 0, 1, 0);
    emit_ret(p, other);
    emit_ret(p, SECCOMP_RET_ALLOW);
    end_if_nr(p, at);
}

static void emit_program(struct prog *p, enum sworn_seccomp_role role, enum sworn_seccomp_mode mode,
                         unsigned flags)
{
    const uint32_t kill = SECCOMP_RET_KILL_PROCESS;
    const uint32_t other = mode == SWORN_SECCOMP_LOG
                               ? SECCOMP_RET_LOG
                               : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);

    /* Another ABI's numbers mean other calls: no such call is judged by this table. */
    emit_load(p, (uint32_t)offsetof(struct seccomp_data, arch));
    emit_jump(p, BPF_JEQ, SECCOMP_ARCH, 1, 0);
    emit_ret(p, kill);
    emit_load_nr(p);
#if defined(__x86_64__)
    /* The x32 ABI shares AUDIT_ARCH_X86_64 and sets bit 30 of the number. */
    emit_jump(p, BPF_JGE, 0x40000000u, 0, 1);
    emit_ret(p, kill);
#endif
    for (size_t l = 0; l < NELEM(allow_lists); l++)
        if (allow_lists[l].roles & ROLE_BIT(role))
            for (size_t i = 0; i < allow_lists[l].n; i++)
                if (allow_lists[l].nr[i] != __NR_execve || !noexec_moves_execve(role, flags))
                    emit_nr_ret(p, allow_lists[l].nr[i], SECCOMP_RET_ALLOW);
    for (size_t l = 0; l < NELEM(kill_lists); l++)
        if (kill_lists[l].roles & ROLE_BIT(role))
            for (size_t i = 0; i < kill_lists[l].n; i++)
                emit_nr_ret(p, kill_lists[l].nr[i], kill);
    if (noexec_moves_execve(role, flags))
        emit_nr_ret(p, __NR_execve, kill);
    /* Each argument check ends in RETs, so the number is reloaded before the next one. */
    if (flags & SWORN_SECCOMP_INET)
        emit_arg_in(p, __NR_socket, 0, socket_families_inet, NELEM(socket_families_inet), other);
    else
        emit_arg_in(p, __NR_socket, 0, socket_families_local, NELEM(socket_families_local), other);
    emit_load_nr(p);
    emit_arg_in(p, __NR_ioctl, 1, ioctl_requests, NELEM(ioctl_requests), other);
    emit_load_nr(p);
    emit_prctl(p, other);
    emit_load_nr(p);
    emit_clone(p, role, kill);
    if (role != SWORN_SECCOMP_MONITOR) {
        emit_load_nr(p);
        emit_prlimit_read(p, other);
    }
    emit_load_nr(p);
    /* clone3 hides its flags behind a pointer: ENOSYS makes glibc fall back to clone. */
    emit_nr_ret(p, __NR_clone3, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
    emit_ret(p, other);
}

int sworn_seccomp_build(enum sworn_seccomp_role role, enum sworn_seccomp_mode mode, unsigned flags,
                        struct sock_filter *insn, size_t max, struct sworn_seccomp_report *report)
{
    struct prog p;

    memset(report, 0, sizeof(*report));
    report->arch = SECCOMP_ARCH_NAME;
    if (check_args(role, mode, flags) != 0)
        return -1;
    if (mode == SWORN_SECCOMP_OFF)
        return sworn_err_set(SWORN_ERR_ARG, "seccomp: no program to build in mode off");
    if (check_lists(role, flags, report) != 0)
        goto fail;
    p.insn = insn;
    p.n = 0;
    p.max = max;
    p.overflow = 0;
    emit_program(&p, role, mode, flags);
    if (p.overflow) {
        sworn_err_set(SWORN_ERR_RANGE, "seccomp: the %s filter exceeds %zu instructions",
                      sworn_seccomp_role_name(role), max);
        goto fail;
    }
    report->instructions = p.n;
    return 0;

fail:
    report->allowed = report->killed = 0;
    return -1;
}

int sworn_seccomp_install(enum sworn_seccomp_role role, enum sworn_seccomp_mode mode,
                          unsigned flags, struct sworn_seccomp_report *report)
{
    struct sock_filter insn[SWORN_SECCOMP_INSN_MAX];
    struct sworn_seccomp_report r;
    struct sock_fprog fprog;
    uint32_t kill_process = SECCOMP_RET_KILL_PROCESS;
    long rc;

    memset(&r, 0, sizeof(r));
    r.arch = SECCOMP_ARCH_NAME;
    if (report != NULL)
        *report = r;
    if (check_args(role, mode, flags) != 0)
        return -1;
    if (mode == SWORN_SECCOMP_OFF)
        return 1;
    if (sworn_seccomp_build(role, mode, flags, insn, SWORN_SECCOMP_INSN_MAX, &r) != 0)
        return -1;
    /* A filter whose kill would only end one thread would leave the others running half a
     * decision: refuse a kernel without SECCOMP_RET_KILL_PROCESS (Linux < 4.14). */
    if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &kill_process) != 0)
        return sworn_err_set(SWORN_ERR_IO,
                             "seccomp: the kernel has no SECCOMP_RET_KILL_PROCESS: %s",
                             strerror(errno));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return sworn_err_set(SWORN_ERR_IO, "seccomp: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
    fprog.len = (unsigned short)r.instructions;
    fprog.filter = insn;
    /* TSYNC: every thread gets the filter, or none does (rc > 0 names a thread that could not). */
    rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                 SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG, &fprog);
    if (rc > 0)
        return sworn_err_set(SWORN_ERR_IO, "seccomp: thread %ld could not take the filter", rc);
    if (rc != 0)
        return sworn_err_set(SWORN_ERR_IO, "seccomp: %s", strerror(errno));
    if (report != NULL)
        *report = r;
    return 0;
}

#else /* no table for this architecture */

int sworn_seccomp_build(enum sworn_seccomp_role role, enum sworn_seccomp_mode mode, unsigned flags,
                        struct sock_filter *insn, size_t max, struct sworn_seccomp_report *report)
{
    (void)insn;
    (void)max;
    memset(report, 0, sizeof(*report));
    if (check_args(role, mode, flags) != 0)
        return -1;
    if (mode == SWORN_SECCOMP_OFF)
        return sworn_err_set(SWORN_ERR_ARG, "seccomp: no program to build in mode off");
    return 1;
}

int sworn_seccomp_install(enum sworn_seccomp_role role, enum sworn_seccomp_mode mode,
                          unsigned flags, struct sworn_seccomp_report *report)
{
    if (report != NULL)
        memset(report, 0, sizeof(*report));
    if (check_args(role, mode, flags) != 0)
        return -1;
    return 1;
}

#endif
