/* r_seccomp.c -- the agent's deny-list seccomp filter (r_seccomp.h). */
#define _GNU_SOURCE
#include "r_seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "err.h"

#if defined(__x86_64__)
#define RUN_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define RUN_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif
#define CLONE_NEW_ANY                                                                              \
    (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |     \
     CLONE_NEWCGROUP | 0x00000080 /* CLONE_NEWTIME */)

#ifdef RUN_ARCH
static const long denied[] = {
    SYS_ptrace,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_kcmp,
    SYS_bpf,
    SYS_perf_event_open,
    SYS_userfaultfd,
    SYS_keyctl,
    SYS_add_key,
    SYS_request_key,
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
    SYS_setns,
    SYS_unshare,
    SYS_name_to_handle_at,
    SYS_open_by_handle_at,
    SYS_kexec_load,
    SYS_kexec_file_load,
    SYS_init_module,
    SYS_finit_module,
    SYS_delete_module,
    SYS_reboot,
    SYS_swapon,
    SYS_swapoff,
    SYS_acct,
    SYS_quotactl,
    SYS_syslog,
    SYS_personality,
    SYS_lookup_dcookie,
#ifdef SYS_io_uring_setup
    SYS_io_uring_setup,
    SYS_io_uring_enter,
    SYS_io_uring_register,
#endif
#ifdef SYS_move_mount
    SYS_move_mount,
    SYS_open_tree,
    SYS_fsopen,
    SYS_fsconfig,
    SYS_fsmount,
    SYS_fspick,
#endif
#ifdef SYS_mount_setattr
    SYS_mount_setattr,
#endif
#ifdef SYS_iopl
    SYS_iopl,
    SYS_ioperm,
#endif
#ifdef SYS_modify_ldt
    SYS_modify_ldt,
#endif
    447, /* memfd_secret (the same number on x86_64 and aarch64) */
};

/* The calls that take a file mode, and which argument it is. */
static const struct {
    long nr;
    unsigned mode_arg;
} mode_calls[] = {
#ifdef SYS_chmod
    {SYS_chmod, 1},   {SYS_open, 2},     {SYS_creat, 1},
    {SYS_mkdir, 1},   {SYS_mknod, 1},
#endif
    {SYS_fchmod, 1},  {SYS_fchmodat, 2}, {SYS_openat, 3},
    {SYS_mkdirat, 2}, {SYS_mknodat, 2},  {452 /* fchmodat2 */, 2},
};

#define PROG_MAX 320
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8u * (i))

struct prog {
    struct sock_filter f[PROG_MAX];
    unsigned short n;
};

static void emit(struct prog *p, unsigned short code, unsigned int k, unsigned char jt,
                 unsigned char jf)
{
    if (p->n < PROG_MAX)
        p->f[p->n] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
    p->n++;
}

static void ret(struct prog *p, unsigned int v)
{
    emit(p, BPF_RET | BPF_K, v, 0, 0);
}

/* if (nr == call) { A = low word of arg; <body> } -- body is what the caller emits next; this
 * emits the test and returns the index of its jump, to patch with the body's length. */
static unsigned short if_nr(struct prog *p, long call)
{
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)call, 0, 0);
    return (unsigned short)(p->n - 1);
}

static void patch_skip(struct prog *p, unsigned short at)
{
    p->f[at].jf = (unsigned char)(p->n - at - 1);
}

static void load_nr(struct prog *p)
{
    emit(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
}

static void load_arg(struct prog *p, unsigned i)
{
    emit(p, BPF_LD | BPF_W | BPF_ABS, (unsigned int)ARG_LO(i), 0, 0);
}

/* Call nr fails with EPERM when any of bits is set in the low word of argument arg. */
static void deny_bits(struct prog *p, long nr, unsigned arg, unsigned int bits)
{
    unsigned short at = if_nr(p, nr);

    load_arg(p, arg);
    emit(p, BPF_JMP | BPF_JSET | BPF_K, bits, 0, 1);
    ret(p, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    ret(p, SECCOMP_RET_ALLOW);
    patch_skip(p, at);
}

static int build(struct prog *p)
{
    const unsigned int eperm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    unsigned short at;

    p->n = 0;
    emit(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, RUN_ARCH, 1, 0);
    ret(p, SECCOMP_RET_KILL_PROCESS);
    load_nr(p);
#if defined(__x86_64__)
    emit(p, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u /* __X32_SYSCALL_BIT */, 0, 1);
    ret(p, SECCOMP_RET_KILL_PROCESS);
#endif
    for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)denied[i], 0, 1);
        ret(p, eperm);
    }
#ifdef SYS_clone3
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
    ret(p, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
#endif
    /* openat2: its mode is behind a pointer too; the C library's open uses openat. */
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, 437 /* openat2 */, 0, 1);
    ret(p, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
    /* clone: no new namespace (flags are argument 0 on x86_64 and aarch64). */
    deny_bits(p, SYS_clone, 0, CLONE_NEW_ANY);
    /* socket: an allow-list of families: AF_UNIX, AF_INET and AF_INET6 (but no raw or packet
     * type), and AF_NETLINK for NETLINK_ROUTE only (what ip and the C library's interface
     * listing use; for netlink SOCK_DGRAM is the same as SOCK_RAW, and every other netlink
     * family is a kernel surface of its own). Every other family (packet, key, vsock, alg,
     * tipc, rds, kcm, smc, xdp, can, bluetooth, ...) is refused whether the kernel has it or
     * not. Offsets are counted by hand, from the numbers on the right. */
    at = if_nr(p, SYS_socket);
    load_arg(p, 0);                                                     /* 0 */
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 9, 0);                  /* 1 -> 11 */
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 6, 0);               /* 2 -> 9 */
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0);                  /* 3 -> 5 */
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 7);                 /* 4 -> 5 or 12 */
    load_arg(p, 1);                                                     /* 5 */
    emit(p, BPF_ALU | BPF_AND | BPF_K, 0xf /* SOCK_TYPE_MASK */, 0, 0); /* 6 */
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, SOCK_RAW, 4, 0);                 /* 7 -> 12 */
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, SOCK_PACKET, 3, 2);              /* 8 -> 12 or 11 */
    load_arg(p, 2);                                                     /* 9 */
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0 /* NETLINK_ROUTE */, 0, 1);    /* 10 -> 11 or 12 */
    ret(p, SECCOMP_RET_ALLOW);                                          /* 11 */
    ret(p, eperm);                                                      /* 12 */
    patch_skip(p, at);
    /* socketpair: AF_UNIX only. */
    at = if_nr(p, SYS_socketpair);
    load_arg(p, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, eperm);
    patch_skip(p, at);
    /* ioctl: never TIOCSTI or TIOCLINUX (typing into the terminal), TIOCSETD (its line
     * discipline), TCXONC (stopping its output) or TIOCEXCL (shutting others out of it): the
     * terminal sworn-run was started from outlives the agent. */
    at = if_nr(p, SYS_ioctl);
    load_arg(p, 1);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 4, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 3, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, TIOCSETD, 2, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, TCXONC, 1, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, TIOCEXCL, 0, 1);
    ret(p, eperm);
    ret(p, SECCOMP_RET_ALLOW);
    patch_skip(p, at);
    /* No set-user-id or set-group-id bit on anything the agent makes or changes: on the host its
     * files are the sandbox uid's, and such a program in /work would be a way for anyone who can
     * reach the folder to become that uid (and so reach the next sandbox given it). */
    for (size_t i = 0; i < sizeof(mode_calls) / sizeof(mode_calls[0]); i++)
        deny_bits(p, mode_calls[i].nr, mode_calls[i].mode_arg, S_ISUID | S_ISGID);
    ret(p, SECCOMP_RET_ALLOW);
    return p->n <= PROG_MAX ? 0 : sworn_err_set(SWORN_ERR_RANGE, "agent seccomp: program too long");
}

int sworn_run_seccomp_install(void)
{
    static struct prog p;
    struct sock_fprog fp;

    if (build(&p) < 0)
        return -1;
    fp.len = p.n;
    fp.filter = p.f;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return sworn_err_set(SWORN_ERR_IO, "no_new_privs: %s", strerror(errno));
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
        return sworn_err_set(SWORN_ERR_IO, "agent seccomp: %s", strerror(errno));
    return 0;
}
#else
int sworn_run_seccomp_install(void)
{
    return 1;
}
#endif
