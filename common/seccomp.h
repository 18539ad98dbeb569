/*
 * seccomp.h -- the one seccomp filter builder of sworn's processes: the monitor, the engine and
 * the signer today, the proxy and the agent sandbox later (docs/decisiond.md section 9).
 *
 * What it is: a classic BPF seccomp filter built by hand (no libseccomp) from a few lists in
 * seccomp.c, one shared by every role and one per role, installed with PR_SET_NO_NEW_PRIVS and
 * then seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG), so
 * that every thread of the process has it, and every process it forks or execs later inherits it.
 * A filter can never be removed or loosened: a later filter only adds refusals, and when two
 * filters judge one call the stricter answer wins (kill over an error over log over allow).
 *
 * What it decides, for each system call of the confined process and its children:
 *   - a call from another ABI than the one sworn was built for (i386 int 0x80 or x32 on an x86_64
 *     build): the process is killed (SECCOMP_RET_KILL_PROCESS);
 *   - a call on the role's allow-list: allowed, some only with the arguments sworn uses (socket
 *     families: AF_UNIX, and AF_INET/AF_INET6 only with SWORN_SECCOMP_INET; clone flags; prctl
 *     options; ioctl requests; prlimit64 that only reads, outside the monitor);
 *   - a call on the role's kill list (for every role: ptrace, mount, bpf, module loading,
 *     namespaces, keyrings, userfaultfd, perf_event_open, ...; for the engine and the signer also
 *     fork, exec and the setuid family; for the signer also bind, listen and accept): no part of
 *     that process ever makes one, so one is taken as a sign of a compromise and the process is
 *     killed with SIGSYS;
 *   - clone3: ENOSYS (its flags are behind a pointer the filter cannot read; glibc then uses
 *     clone, whose flags are checked);
 *   - anything else: fails with EPERM in SWORN_SECCOMP_ENFORCE (a benign call that was forgotten
 *     fails closed as an error), or is allowed and logged by the kernel in SWORN_SECCOMP_LOG (for
 *     finding such calls; the kill list still kills).
 *
 * The roles:
 *   - SWORN_SECCOMP_SIGNER (sworn-signer, after it has opened its key): I/O on the descriptors it
 *     has, poll, memory, the files a PKCS#11 module such as SoftHSM touches after login, time,
 *     signals, threads (never a process), sockets to reach a TPM or HSM again; it serves no one.
 *   - SWORN_SECCOMP_ENGINE (policy, vault, log, libevent, workers, TPM): what the running daemon
 *     needs, but never a new process (clone only with CLONE_THREAD), a program, or another
 *     identity.
 *   - SWORN_SECCOMP_PROXY (sworn-proxy, after its listeners are bound, its CA key read and its
 *     privileges dropped): the engine's allow-list (the event loop, descriptors, memory, time,
 *     files for its log) with SWORN_SECCOMP_INET for upstream connections and DNS; never a new
 *     process, a program or another identity, and never bind or listen (killed): nothing it does
 *     after start serves a new address.
 *   - SWORN_SECCOMP_MONITOR (the root process that fork+execs the engine and the signer and
 *     restarts the signer): everything the engine and the signer allow, since its children
 *     inherit its filter and stacked filters are as strict as the strictest of them, plus what
 *     starting a child takes (fork, execve, the setuid family, resource limits, waiting for and
 *     signalling children, the socket files). Its children run under it from their fork on, so it
 *     also allows what an exec'd child does before it installs its own filter: the dynamic loader,
 *     libevent's epoll_create1, and so on. It needs the union of its children's flags. chroot
 *     and the namespace calls stay killed in it, so a child cannot chroot (privdrop.h's
 *     chroot_dir) once the monitor's filter is on.
 *
 * Architectures: x86_64 and aarch64. On any other one, sworn_seccomp_install installs nothing
 * (returns 1), rather than a filter whose numbers would mean other calls.
 *
 * Sanitizer builds (-DSWORN_SANITIZE=ON, tests only): the sanitizer runtime must still be able to
 * write its report, so every role allows ptrace (LeakSanitizer stops the threads with it), execve
 * (an external symbolizer), getdents and clone without CLONE_THREAD, and prctl(PR_SET_DUMPABLE,
 * 1) and PR_SET_PTRACER. Production builds never have this.
 *
 * This module does not log: the caller logs the report.
 *
 * Thread safety: sworn_seccomp_install is meant to be called once per process (a second call
 * stacks a second filter), from any thread; nothing here keeps state between calls. The name
 * functions are pure.
 */
#ifndef SWORN_SECCOMP_H
#define SWORN_SECCOMP_H

#include <stddef.h>

enum sworn_seccomp_mode {
    SWORN_SECCOMP_OFF = 0,     /* no filter */
    SWORN_SECCOMP_LOG = 1,     /* unlisted calls are allowed and logged by the kernel */
    SWORN_SECCOMP_ENFORCE = 2, /* unlisted calls fail with EPERM (the default everywhere) */
};

enum sworn_seccomp_role {
    SWORN_SECCOMP_MONITOR = 1, /* the privileged parent: starts and restarts the others */
    SWORN_SECCOMP_ENGINE = 2,  /* decisiond's engine: policy, vault, log, checkpoints */
    SWORN_SECCOMP_SIGNER = 3,  /* sworn-signer: signs digests on one socketpair */
    SWORN_SECCOMP_PROXY = 4,   /* sworn-proxy: its event loop, TLS, DNS, upstream connections */
};

/* Flags for sworn_seccomp_install. SWORN_SECCOMP_INET: socket(AF_INET/AF_INET6) allowed. */
#define SWORN_SECCOMP_INET 1u /* a TPM or an HSM over the network */
/*
 * execve killed in the monitor too (the engine and the signer always kill it): for a monitor that
 * forks children but never execs one, such as today's single decisiond process, which forks its
 * signer child without an exec. Sanitizer builds still allow execve (their symbolizer).
 */
#define SWORN_SECCOMP_NOEXEC 2u

/* The most instructions a filter may have (the kernel's own limit is 4096). */
#define SWORN_SECCOMP_INSN_MAX 1024

/*
 * What was installed, for the caller's log line. arch is a static string ("x86_64", "aarch64");
 * instructions is the program's length; allowed and killed count the calls the role allows or
 * kills whatever their arguments (the argument-checked calls, socket, ioctl, prctl, clone and
 * prlimit64 outside the monitor, are in neither count).
 */
struct sworn_seccomp_report {
    const char *arch;
    size_t instructions, allowed, killed;
};

/*
 * Install role's filter in mode, with flags (SWORN_SECCOMP_*), for every thread of the process.
 * IN: role, mode, flags. OUT: report (may be NULL).
 * Returns 0 when it is installed (*report filled when report is not NULL), 1 when nothing was
 * installed on purpose (SWORN_SECCOMP_OFF, or an architecture without a table), or -1 with
 * sworn_err set: SWORN_ERR_ARG (an unknown role or mode, or an unknown flag),
 * SWORN_ERR_CORRUPT (the lists contradict each other: a bug here), SWORN_ERR_RANGE (the program
 * would exceed SWORN_SECCOMP_INSN_MAX), or SWORN_ERR_IO (the kernel has no seccomp filters or no
 * SECCOMP_RET_KILL_PROCESS, or a thread could not be synchronised). After -1 nothing is installed
 * and the caller must not run on as though it were confined. After 1 and -1, *report is zeroed
 * except arch (NULL when there is no table for this architecture).
 */
int sworn_seccomp_install(enum sworn_seccomp_role role, enum sworn_seccomp_mode mode,
                          unsigned flags, struct sworn_seccomp_report *report);

struct sock_filter; /* <linux/filter.h> */

/*
 * Build role's program without installing it, into insn (room for max instructions), for tests
 * and for audits (a dump compared with the kernel's view, or an emulator). Same arguments, same
 * returns and same errors as sworn_seccomp_install, except that mode SWORN_SECCOMP_OFF is
 * SWORN_ERR_ARG (there is no program to build) and there is no SWORN_ERR_IO. On 0 the program is
 * insn[0 .. report->instructions - 1]; report must not be NULL. On error insn is undefined.
 */
int sworn_seccomp_build(enum sworn_seccomp_role role, enum sworn_seccomp_mode mode, unsigned flags,
                        struct sock_filter *insn, size_t max, struct sworn_seccomp_report *report);

/* The mode's name as in the configuration ("off", "log", "enforce"); "?" for another value. */
const char *sworn_seccomp_mode_name(enum sworn_seccomp_mode mode);

/* The role's name for logs ("monitor", "engine", "signer"); "?" for another value. */
const char *sworn_seccomp_role_name(enum sworn_seccomp_role role);

#endif
