/*
 * d_seccomp.h -- decisiond's seccomp filter, installed once the daemon runs (docs/decisiond.md
 * section 9, "Hardening"): a thin layer over the shared builder (common/seccomp.h), which says
 * what the filter decides, that adds what only decisiond knows (which configurations need the
 * network) and decisiond's log line.
 *
 * Which role: today's decisiond is still one process that forks its signer child from inside
 * (restarted from a worker thread after a crash) and changes that child's uid, so it installs
 * SWORN_SECCOMP_MONITOR, whose lists are a superset of the engine's and the signer's, with
 * SWORN_SECCOMP_NOEXEC (it never execs, so execve stays killed); a restarted signer child
 * inherits it. When the monitor/engine/signer split lands, this installs
 * SWORN_SECCOMP_ENGINE in the engine (no fork, exec or setuid), and the monitor and the signer
 * install their own roles.
 *
 * When: after the last thread has started and the signal events are set, before the event loop
 * runs (daemon.c). Nothing after that point needs a call outside the list; start-up (loading
 * files, starting the signer child, creating the log, binding the sockets, dropping privileges)
 * is over.
 *
 * Thread safety: call once, from the main thread. Not reentrant.
 */
#ifndef SWORN_D_SECCOMP_H
#define SWORN_D_SECCOMP_H

#include "seccomp.h"

enum d_seccomp_mode {
    D_SECCOMP_OFF = SWORN_SECCOMP_OFF,         /* no filter (logged as a warning) */
    D_SECCOMP_LOG = SWORN_SECCOMP_LOG,         /* unlisted calls are allowed and logged */
    D_SECCOMP_ENFORCE = SWORN_SECCOMP_ENFORCE, /* unlisted calls fail with EPERM (the default) */
};

struct sworn_dconfig;

/* Flags for d_seccomp_install (SWORN_SECCOMP_NOEXEC is always added). */
#define D_SECCOMP_INET                                                                             \
    SWORN_SECCOMP_INET /* allow socket(AF_INET/AF_INET6): a TPM or HSM over TCP */

/*
 * The flags a configuration needs: D_SECCOMP_INET unless the daemon provably never needs the
 * network, i.e. the signing key is a file or a TPM key, and every TCTI configured (tpm.tcti,
 * signer.tcti) is a local device ("device" or "device:PATH"). A PKCS#11 module may reach its
 * HSM over TCP (network HSMs, yubihsm-connector), and swtpm, mssim and tabrmd TCTIs may too.
 */
unsigned d_seccomp_flags(const struct sworn_dconfig *cfg);

/*
 * Install the filter (role SWORN_SECCOMP_MONITOR until the process split, above) in the given
 * mode, with flags (D_SECCOMP_*), for every thread of the process. Returns 0 when it is
 * installed (logged "seccomp" at info, with the role, mode, arch, inet and the report's counts),
 * 1 when nothing was installed on purpose (D_SECCOMP_OFF, or an architecture without a table;
 * logged at warn), or -1 with sworn_err set as sworn_seccomp_install sets it (SWORN_ERR_IO when
 * the kernel refused it: no seccomp, or a thread could not be synchronised): the caller must not
 * run on as though it were confined.
 */
int d_seccomp_install(enum d_seccomp_mode mode, unsigned flags);

/* The mode's name as in the configuration ("off", "log", "enforce"). */
const char *d_seccomp_mode_name(enum d_seccomp_mode mode);

#endif
