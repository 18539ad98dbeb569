/*
 * d_seccomp.h -- decisiond's seccomp filter, installed once the daemon runs (docs/decisiond.md
 * section 9, "Hardening"): a thin layer over the shared builder (common/seccomp.h), which says
 * what the filter decides, that adds what only decisiond knows (which configurations need the
 * network) and decisiond's log line.
 *
 * Which role: the engine installs SWORN_SECCOMP_ENGINE (no fork, exec or setuid: it never
 * starts a process or changes its uid; the monitor does), the monitor SWORN_SECCOMP_MONITOR
 * (monitor.c), whose lists are the union of its children's, since they inherit its filter.
 * The signer installs its own (signer/sworn-signer.c).
 *
 * When: in the engine, after the last thread has started and the signal events are set, before
 * the event loop runs (daemon.c); start-up (loading files, creating the log) is over. In the
 * monitor, once the sockets are bound and before the engine is started, so every child inherits
 * it.
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

/* Flags for d_seccomp_install. */
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
 * Install role's filter in the given mode, with flags (D_SECCOMP_*), for every thread of the
 * process. Returns 0 when it is installed (logged "seccomp" at info, with the role, mode, arch,
 * inet and the report's counts), 1 when nothing was installed on purpose (D_SECCOMP_OFF, or an
 * architecture without a table; logged at warn), or -1 with sworn_err set as sworn_seccomp_install
 * sets it (SWORN_ERR_IO when the kernel refused it: no seccomp, or a thread could not be
 * synchronised): the caller must not run on as though it were confined.
 */
int d_seccomp_install(enum sworn_seccomp_role role, enum d_seccomp_mode mode, unsigned flags);

/* The mode's name as in the configuration ("off", "log", "enforce"). */
const char *d_seccomp_mode_name(enum d_seccomp_mode mode);

#endif
