/*
 * d_seccomp.h -- decisiond's seccomp allow-list, installed once the daemon runs
 * (docs/decisiond.md section 9, "Hardening").
 *
 * What it is: a classic BPF seccomp filter built by hand (no libseccomp), installed with
 * PR_SET_NO_NEW_PRIVS and then seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC), so
 * that every thread of the process has it, and every process forked later (a restarted signer
 * child) inherits it. A filter can never be removed or loosened: later filters only add refusals.
 *
 * When: after the last thread has started and the signal events are set, before the event loop
 * runs (daemon.c). Nothing after that point needs a call outside the list; start-up (loading
 * files, starting the signer child, creating the log, binding the sockets, dropping privileges)
 * is over.
 *
 * What it decides, for each system call of the running daemon and its children:
 *   - a call from another ABI than the one the daemon was built for (i386 int 0x80 or x32 on an
 *     x86_64 daemon): the process is killed (SECCOMP_RET_KILL_PROCESS);
 *   - a call on the allow-list (the event loop, the workers, sqlite, OpenSSL, the signer socket
 *     and the signer child's restart, the TPM over TCP or a device): allowed, some only with the
 *     arguments the daemon uses (socket families: AF_UNIX, and AF_INET/AF_INET6 only when the
 *     configuration needs the network, d_seccomp_flags; clone flags without namespaces; prctl
 *     options; ioctl requests);
 *   - a call on the kill list (execve, ptrace, mount, bpf, module loading, namespaces, keyrings,
 *     userfaultfd, perf_event_open, ...): no part of the daemon ever makes one, so one is taken as
 *     a sign of a compromise and the process is killed (SIGSYS);
 *   - clone3: ENOSYS (its flags are behind a pointer the filter cannot read; glibc then uses
 *     clone, whose flags are checked);
 *   - anything else: fails with EPERM in D_SECCOMP_ENFORCE (a benign call that was forgotten
 *     fails closed as an error, which the daemon turns into a deny), or is allowed and logged by
 *     the kernel in D_SECCOMP_LOG (for finding such calls; the kill list still kills).
 *
 * Architectures: x86_64 and aarch64. On any other one, d_seccomp_install installs nothing and
 * logs a warning (returns 1), rather than a filter whose numbers would mean other calls.
 *
 * Sanitizer builds (-DSWORN_SANITIZE=ON, tests only): the sanitizer runtime must still be able to
 * write its report, so ptrace (LeakSanitizer stops the threads with it), execve (the symbolizer)
 * and clone without CLONE_THREAD are allowed there. Production builds never have this.
 *
 * Thread safety: call once, from the main thread. Not reentrant.
 */
#ifndef SWORN_D_SECCOMP_H
#define SWORN_D_SECCOMP_H

enum d_seccomp_mode {
    D_SECCOMP_OFF = 0,     /* no filter (logged as a warning) */
    D_SECCOMP_LOG = 1,     /* unlisted calls are allowed and logged by the kernel */
    D_SECCOMP_ENFORCE = 2, /* unlisted calls fail with EPERM (the default) */
};

struct sworn_dconfig;

/* Flags for d_seccomp_install. */
#define D_SECCOMP_INET 1u /* allow socket(AF_INET/AF_INET6): a TPM or an HSM over the network */

/*
 * The flags a configuration needs: D_SECCOMP_INET unless the daemon provably never needs the
 * network, i.e. the signing key is a file or a TPM key, and every TCTI configured (tpm.tcti,
 * signer.tcti) is a local device ("device" or "device:PATH"). A PKCS#11 module may reach its
 * HSM over TCP (network HSMs, yubihsm-connector), and swtpm, mssim and tabrmd TCTIs may too.
 */
unsigned d_seccomp_flags(const struct sworn_dconfig *cfg);

/*
 * Install the filter in the given mode, with flags (D_SECCOMP_*), for every thread of the process.
 * Returns 0 when it is installed (logged "seccomp" at info), 1 when nothing was installed on
 * purpose (D_SECCOMP_OFF, or an architecture without a table; logged at warn), or -1 with sworn_err
 * set (SWORN_ERR_IO) when the kernel refused it (no seccomp, or a thread could not be
 * synchronised): the caller must not run on as though it were confined.
 */
int d_seccomp_install(enum d_seccomp_mode mode, unsigned flags);

/* The mode's name as in the configuration ("off", "log", "enforce"). */
const char *d_seccomp_mode_name(enum d_seccomp_mode mode);

#endif
