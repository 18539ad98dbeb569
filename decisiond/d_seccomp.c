/*
 * d_seccomp.c -- decisiond's seccomp allow-list (d_seccomp.h; docs/decisiond.md section 9).
 *
 * The filter is classic BPF, written out here: there is no libseccomp among sworn's libraries,
 * and a filter of a few hundred instructions is easier to audit than a dependency. Its shape:
 *
 *   load arch;  != the build's AUDIT_ARCH          -> KILL_PROCESS
 *   load nr;    (x86_64) nr has the x32 bit         -> KILL_PROCESS
 *   for each rule: nr == rule.nr ? rule's block : next rule
 *   default                                         -> ERRNO(EPERM) (enforce) / LOG (log)
 *
 * A rule's block is one RET (allow, kill, an errno), or an argument check that ends in RETs. The
 * blocks never jump forward past their own end, so every jump offset stays small. Arguments are
 * compared on their low 32 bits only: every argument checked is an int (or unsigned int) in the
 * kernel, which ignores the upper half, and both supported architectures are little-endian.
 *
 * The lists below say who needs each call; the numbers come from <sys/syscall.h> (__NR_*), so
 * the same list serves x86_64 and aarch64, with the older calls that aarch64 lacks behind #ifdef.
 */
#define _GNU_SOURCE /* syscall(2), the __NR_ and SYS_ names */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "config.h"
#include "d_jlog.h"
#include "d_seccomp.h"
#include "err.h"

#if defined(__x86_64__)
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#define SECCOMP_ARCH_NAME "x86_64"
#elif defined(__aarch64__)
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#define SECCOMP_ARCH_NAME "aarch64"
#endif

/* Sanitizer builds (tests only) need a little more for their reports (d_seccomp.h). */
#if defined(__SANITIZE_ADDRESS__)
#define SECCOMP_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SECCOMP_SANITIZER 1
#endif
#endif

const char *d_seccomp_mode_name(enum d_seccomp_mode mode)
{
    switch (mode) {
    case D_SECCOMP_OFF:
        return "off";
    case D_SECCOMP_LOG:
        return "log";
    case D_SECCOMP_ENFORCE:
        return "enforce";
    default:
        return "?";
    }
}

/* Whether a TCTI configuration string names the local device TCTI ("device", "device:PATH"). */
static int tcti_is_device(const char *tcti)
{
    return tcti == NULL || strcmp(tcti, "device") == 0 || strncmp(tcti, "device:", 7) == 0;
}

unsigned d_seccomp_flags(const struct sworn_dconfig *cfg)
{
    if (cfg->signer_module != NULL || strncmp(cfg->signer_key, "pkcs11:", 7) == 0)
        return D_SECCOMP_INET;
    if (!tcti_is_device(cfg->tpm_tcti) || !tcti_is_device(cfg->signer_tcti))
        return D_SECCOMP_INET;
    return 0;
}

#ifdef SECCOMP_ARCH

/* --- the lists ---------------------------------------------------------------------------- */

/* Allowed with any arguments. Roughly by frequency: the filter is a linear scan. */
static const int allowed[] = {
    /* Threads: locks and condition variables (workers, the checkpoint thread, libevent). */
    __NR_futex,
    /* The event loop (libevent's epoll back end) and the signer socket (poll). */
    __NR_epoll_pwait,
    __NR_epoll_ctl,
#ifdef __NR_epoll_wait
    __NR_epoll_wait,
#endif
#ifdef __NR_epoll_pwait2
    __NR_epoll_pwait2,
#endif
    __NR_ppoll,
#ifdef __NR_poll
    __NR_poll,
#endif
    __NR_pselect6,
    /* I/O on descriptors already open or opened below. */
    __NR_read,
    __NR_write,
    __NR_readv,
    __NR_writev,
    __NR_pread64,
    __NR_pwrite64,
    __NR_preadv,
    __NR_pwritev,
    __NR_lseek,
    __NR_close,
#ifdef __NR_close_range
    __NR_close_range, /* a restarted signer child closes what it inherited (signer/proc.c) */
#endif
    __NR_fcntl, /* sqlite's locks (F_SETLK), O_NONBLOCK, FD_CLOEXEC */
    __NR_flock, /* SoftHSM's token files, in a restarted signer child */
    __NR_dup,
    __NR_dup3,
#ifdef __NR_dup2
    __NR_dup2,
#endif
    __NR_pipe2,
#ifdef __NR_pipe
    __NR_pipe,
#endif
    /* Sockets: accepting peers (the listeners are already bound), SO_PEERCRED, the signer's
     * socketpair, the TPM over TCP (swtpm) for a reopened TCTI, nscd for user names. */
    __NR_accept4,
    __NR_accept,
    __NR_connect,
    __NR_recvfrom,
    __NR_sendto,
    __NR_recvmsg,
    __NR_sendmsg,
    __NR_getsockopt,
    __NR_setsockopt,
    __NR_getsockname,
    __NR_getpeername,
    __NR_shutdown,
    /* Files: sqlite (the log and its journal), the tiles export, the PIN file and token folder in
     * a restarted signer child, /etc/passwd and nsswitch for operator names, /proc/self. */
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
    __NR_fstatfs,
    __NR_statfs,
    __NR_fsync,
    __NR_fdatasync,
    __NR_ftruncate,
    __NR_fallocate,
    __NR_getdents64,
    __NR_faccessat,
#ifdef __NR_faccessat2
    __NR_faccessat2,
#endif
#ifdef __NR_access
    __NR_access,
#endif
    __NR_readlinkat,
#ifdef __NR_readlink
    __NR_readlink,
#endif
    __NR_mkdirat,
#ifdef __NR_mkdir
    __NR_mkdir,
#endif
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
    __NR_fchmod,
    __NR_fchown, /* sqlite gives a journal its database's owner when run as root */
    __NR_getcwd,
    __NR_umask,
    /* Memory: malloc, thread stacks, sqlite's and OpenSSL's buffers, the vault's locked pages,
     * dlopen of a PKCS#11 module or TCTI in a restarted signer child. */
    __NR_mmap,
    __NR_munmap,
    __NR_mremap,
    __NR_mprotect,
    __NR_madvise,
    __NR_brk,
    __NR_mlock,
    __NR_mlock2,
    __NR_munlock,
    __NR_mlockall,
    __NR_munlockall,
    __NR_mincore,
    /* Time. Mostly the vDSO, which makes no call; these are its fallbacks and the sleeps. */
    __NR_clock_gettime,
    __NR_clock_getres,
    __NR_gettimeofday,
    __NR_clock_nanosleep,
    __NR_nanosleep,
    __NR_timerfd_create,
    __NR_timerfd_settime,
    __NR_timerfd_gettime,
    __NR_eventfd2,
    /* Identity and limits (read; setrlimit for RLIMIT_CORE in the signer child). */
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
    __NR_getrlimit,
    __NR_setrlimit,
    __NR_prlimit64,
    __NR_getrusage,
    __NR_uname,
    __NR_sysinfo,
    __NR_getrandom, /* OpenSSL's DRBG */
    __NR_sched_yield,
    __NR_sched_getaffinity,
    /* The signer child's privilege drop after a restart (privdrop.c). With no_new_privs these
     * can only give privileges away; setuid(0) failing is one of the checks made after it. */
    __NR_setgroups,
    __NR_setresgid,
    __NR_setresuid,
    __NR_setgid,
    __NR_setuid,
    __NR_capget,
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
    /* The signer child: killed (by pidfd), reaped, restarted (clone, checked below). */
    __NR_kill,
    __NR_wait4,
    __NR_waitid,
    __NR_pidfd_open,
    __NR_pidfd_send_signal,
    __NR_socketpair,
#ifdef __NR_arch_prctl
    __NR_arch_prctl, /* glibc's thread pointer in a new thread or child */
#endif
#ifdef SECCOMP_SANITIZER
    /* LeakSanitizer's stop-the-world: a tracer (clone, below) lists /proc/self/task with the old
     * getdents on x86_64 and attaches to every thread; the symbolizer may be a program. */
    __NR_ptrace,
    __NR_execve,
#ifdef __NR_getdents
    __NR_getdents,
#endif
#endif
};

/*
 * Never made by any part of the daemon, and each a step an attacker takes: running a program,
 * inspecting or writing another process, changing the mount or namespace view, loading kernel
 * code, keyrings, and the kernel's own attack surface (bpf, userfaultfd, perf). The process is
 * killed at once: a request in flight is unanswered, and the proxy fails closed.
 */
static const int killed[] = {
#ifndef SECCOMP_SANITIZER
    __NR_execve,
    __NR_ptrace,
#endif
    __NR_execveat,
    __NR_process_vm_readv,
    __NR_process_vm_writev,
    __NR_mount,
    __NR_umount2,
    __NR_pivot_root,
    __NR_chroot,
    __NR_bpf,
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
    __NR_setns,
    __NR_unshare,
    __NR_keyctl,
    __NR_add_key,
    __NR_request_key,
    __NR_userfaultfd,
    __NR_perf_event_open,
    __NR_open_by_handle_at,
    __NR_name_to_handle_at,
    __NR_pidfd_getfd,
    __NR_process_madvise,
    __NR_fsopen,
    __NR_fsconfig,
    __NR_fsmount,
    __NR_fspick,
    __NR_move_mount,
    __NR_open_tree,
#ifdef __NR_mount_setattr
    __NR_mount_setattr,
#endif
#ifdef __NR_iopl
    __NR_iopl,
#endif
#ifdef __NR_ioperm
    __NR_ioperm,
#endif
};

/* Namespaces: a clone that asks for one is an unshare (killed likewise). */
#define CLONE_NS_FLAGS                                                                             \
    (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |     \
     CLONE_NEWCGROUP)

/* socket(2) families: peers and nscd (AF_UNIX); with D_SECCOMP_INET, a TPM or HSM over TCP. */
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

/* --- the program -------------------------------------------------------------------------- */

#define PROG_MAX 1024
#define ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args[i]))

struct prog {
    struct sock_filter insn[PROG_MAX];
    size_t n;
    int overflow;
};

static void emit(struct prog *p, struct sock_filter f)
{
    if (p->n >= PROG_MAX) {
        p->overflow = 1;
        return;
    }
    p->insn[p->n++] = f;
}

static void emit_ret(struct prog *p, uint32_t action)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

static void emit_load_nr(struct prog *p)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                         (uint32_t)offsetof(struct seccomp_data, nr)));
}

/*
 * if (nr == n) { block } -- returns the jump's index; end_if_nr(p, at) then sets the jump over the
 * block just emitted. The block must end in RETs: nothing falls out of it into the next rule.
 */
static size_t begin_if_nr(struct prog *p, int n)
{
    size_t at = p->n;

    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)n, 0, 0));
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

    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(arg)));
    for (size_t i = 0; i < nvals; i++)
        /* On a match, jump over the remaining compares and the "other" return to the allow. */
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, vals[i],
                                             (uint8_t)(nvals - i), 0));
    emit_ret(p, other);
    emit_ret(p, SECCOMP_RET_ALLOW);
    end_if_nr(p, at);
}

/* nr == n: allowed when argument arg has none of mask's bits, otherwise other. */
static void emit_arg_clear(struct prog *p, int n, unsigned arg, uint32_t mask, uint32_t other)
{
    size_t at = begin_if_nr(p, n);

    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(arg)));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1));
    emit_ret(p, other);
    emit_ret(p, SECCOMP_RET_ALLOW);
    end_if_nr(p, at);
}

/* prctl: the listed options, and PR_SET_DUMPABLE with 0 only; anything else gets other. */
static void emit_prctl(struct prog *p, uint32_t other)
{
    size_t nopt = sizeof(prctl_options) / sizeof(prctl_options[0]);
    size_t at = begin_if_nr(p, __NR_prctl);

    /* load option; a listed one -> allow; != SET_DUMPABLE -> other; load arg2; == 0 -> allow */
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)));
    for (size_t i = 0; i < nopt; i++)
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, prctl_options[i],
                                             (uint8_t)(nopt - i + 4), 0));
#ifdef SECCOMP_SANITIZER
    /* LeakSanitizer makes the process dumpable while its tracer attaches, then restores it. */
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_DUMPABLE, 4, 0));
#else
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_DUMPABLE, 1, 0));
#endif
    emit_ret(p, other);
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
    emit_ret(p, other);
    emit_ret(p, SECCOMP_RET_ALLOW);
    end_if_nr(p, at);
}

static void build(struct prog *p, enum d_seccomp_mode mode, unsigned flags)
{
    const uint32_t kill = SECCOMP_RET_KILL_PROCESS;
    const uint32_t other =
        mode == D_SECCOMP_LOG ? SECCOMP_RET_LOG : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);

    memset(p, 0, sizeof(*p));
    /* Another ABI's numbers mean other calls: no such call is judged by this table. */
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                         (uint32_t)offsetof(struct seccomp_data, arch)));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_ARCH, 1, 0));
    emit_ret(p, kill);
    emit_load_nr(p);
#if defined(__x86_64__)
    /* The x32 ABI shares AUDIT_ARCH_X86_64 and sets bit 30 of the number. */
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
    emit_ret(p, kill);
#endif
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
        emit_nr_ret(p, allowed[i], SECCOMP_RET_ALLOW);
    for (size_t i = 0; i < sizeof(killed) / sizeof(killed[0]); i++)
        emit_nr_ret(p, killed[i], kill);
    /* Each argument check ends in RETs, so the number is reloaded before the next one. */
    if (flags & D_SECCOMP_INET)
        emit_arg_in(p, __NR_socket, 0, socket_families_inet,
                    sizeof(socket_families_inet) / sizeof(socket_families_inet[0]), other);
    else
        emit_arg_in(p, __NR_socket, 0, socket_families_local,
                    sizeof(socket_families_local) / sizeof(socket_families_local[0]), other);
    emit_load_nr(p);
    emit_arg_in(p, __NR_ioctl, 1, ioctl_requests,
                sizeof(ioctl_requests) / sizeof(ioctl_requests[0]), other);
    emit_load_nr(p);
    emit_prctl(p, other);
    emit_load_nr(p);
    /* clone: the fork of a restarted signer child, a thread a library starts (glibc falls back
     * to clone when clone3 is refused, below), and in sanitizer builds LeakSanitizer's tracer.
     * Never a new namespace: that is an unshare, killed likewise. */
    emit_arg_clear(p, __NR_clone, 0, CLONE_NS_FLAGS, kill);
    emit_load_nr(p);
    /* clone3 hides its flags behind a pointer: ENOSYS makes glibc fall back to clone. */
    emit_nr_ret(p, __NR_clone3, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
#ifdef __NR_fork
    emit_nr_ret(p, __NR_fork, SECCOMP_RET_ALLOW); /* the old fork(2): as clone(SIGCHLD) */
#endif
    emit_ret(p, other);
}

int d_seccomp_install(enum d_seccomp_mode mode, unsigned flags)
{
    static struct prog p; /* large; built once, from the main thread */
    struct sock_fprog fprog;
    uint32_t kill_process = SECCOMP_RET_KILL_PROCESS;
    long rc;

    if (mode == D_SECCOMP_OFF) {
        d_log_msg(D_LOG_WARN, "seccomp", "off: the running daemon is not confined by a filter");
        return 1;
    }
    if (mode != D_SECCOMP_LOG && mode != D_SECCOMP_ENFORCE)
        return sworn_err_set(SWORN_ERR_ARG, "seccomp: unknown mode %d", (int)mode);
    build(&p, mode, flags);
    if (p.overflow)
        return sworn_err_set(SWORN_ERR_RANGE, "seccomp: the filter exceeds %d instructions",
                             PROG_MAX);
    /* A filter whose kill would only end one thread would leave the others running half a
     * decision: refuse a kernel without SECCOMP_RET_KILL_PROCESS (Linux < 4.14). */
    if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &kill_process) != 0)
        return sworn_err_set(SWORN_ERR_IO,
                             "seccomp: the kernel has no SECCOMP_RET_KILL_PROCESS: %s",
                             strerror(errno));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return sworn_err_set(SWORN_ERR_IO, "seccomp: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
    fprog.len = (unsigned short)p.n;
    fprog.filter = p.insn;
    /* TSYNC: every thread gets the filter, or none does (rc > 0 names a thread that could not). */
    rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                 SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG, &fprog);
    if (rc > 0)
        return sworn_err_set(SWORN_ERR_IO, "seccomp: thread %ld could not take the filter", rc);
    if (rc != 0)
        return sworn_err_set(SWORN_ERR_IO, "seccomp: %s", strerror(errno));
    {
        json_object *f = json_object_new_object();

        if (f != NULL) {
            json_object_object_add(f, "mode", json_object_new_string(d_seccomp_mode_name(mode)));
            json_object_object_add(f, "arch", json_object_new_string(SECCOMP_ARCH_NAME));
            json_object_object_add(f, "inet", json_object_new_boolean(flags & D_SECCOMP_INET));
            json_object_object_add(f, "instructions", json_object_new_int64((int64_t)p.n));
            json_object_object_add(
                f, "allowed",
                json_object_new_int64((int64_t)(sizeof(allowed) / sizeof(allowed[0]))));
            json_object_object_add(
                f, "killed", json_object_new_int64((int64_t)(sizeof(killed) / sizeof(killed[0]))));
        }
        d_log(D_LOG_INFO, "seccomp", f);
    }
    return 0;
}

#else /* no table for this architecture */

int d_seccomp_install(enum d_seccomp_mode mode, unsigned flags)
{
    if (mode == D_SECCOMP_OFF) {
        d_log_msg(D_LOG_WARN, "seccomp", "off: the running daemon is not confined by a filter");
        return 1;
    }
    d_log_msg(D_LOG_WARN, "seccomp",
              "not installed: no system call table for this architecture (x86_64 and aarch64 "
              "only); the running daemon is not confined by a filter");
    return 1;
}

#endif
