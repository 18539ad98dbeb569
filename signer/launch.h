/*
 * launch.h -- starting a sworn-signer process: the one way any part of sworn runs the key
 * (docs/decisiond.md, "Processes"). Used by decisiond's monitor, which owns the signer in a
 * deployment, and by sworn_signer_proc's default launcher (decisiond/signerproc.h: tests,
 * benchmarks).
 *
 * sworn_signer_launch makes a socketpair, forks, and in the child:
 *   1. points stdin and stdout at /dev/null (stderr stays: crash and sanitizer reports), puts its
 *      socket end on fd 3 (SWORN_SIGNER_FD) and closes every other descriptor;
 *   2. when running as root, sets RLIMIT_MEMLOCK to opts->memlock_bytes (or
 *      SWORN_SIGNER_MEMLOCK_DEFAULT), so the signer can keep all its memory locked after it has
 *      dropped root: a locked process's later allocations count against that limit once it has no
 *      CAP_IPC_LOCK;
 *   3. execs opts->program (or, when opts->program_fd is set, the file open on it, through
 *      /proc/self/fd: the very file the caller opened and measured, whatever the path names by
 *      then) with the key's configuration in argv (nothing in it is a secret: the PIN
 *      stays in its file, which only the signer reads) and an empty environment, except
 *      SOFTHSM2_CONF, which a SoftHSM module needs to find its tokens, when the caller has it.
 * The exec'd program reads the PIN, opens the key, drops to opts->uid/gid itself, installs its
 * seccomp filter and serves ipc.h frames on fd 3 (signer/sworn-signer.c). No memory of the caller
 * (a vault, a policy, a log) survives the exec.
 *
 * The parent gets its socket end (close-on-exec), the child's pid and a pidfd for it (-1 when the
 * kernel has none: kill(2) by pid is then the fallback). It does not wait for the child to open
 * the key: the first INFO_REQ on the socket does (decisiond/signerproc.c).
 *
 * Errors: -1 with sworn_err set (SWORN_ERR_ARG for bad options, SWORN_ERR_IO when socketpair or
 * fork failed). A failed exec shows up as the socket's end of stream (the child exits 127).
 * Thread safety: fork in a threaded process is safe here because the child calls only
 * async-signal-safe functions before execve.
 */
#ifndef SWORN_SIGNER_LAUNCH_H
#define SWORN_SIGNER_LAUNCH_H

#include <stdint.h>
#include <sys/types.h>

#include "signer.h"

#define SWORN_SIGNER_EXIT_PIN_REFUSED                                                              \
    5                     /* sworn-signer's exit status when the token refused the PIN */
#define SWORN_SIGNER_FD 3 /* the signer's socket, in the signer process */
/* The signer's locked-memory limit when the caller gives none: room for OpenSSL, a PKCS#11 module
 * and its sessions, about ten times what SoftHSM with one key uses. */
#define SWORN_SIGNER_MEMLOCK_DEFAULT (256ull * 1024 * 1024)
/* Below this the signer refuses to start when it must drop root: every allocation after the
 * drop counts against the limit (MCL_FUTURE), and an allocation that fails is a failed signature.
 */
#define SWORN_SIGNER_MEMLOCK_MIN (64ull * 1024 * 1024)
#define SWORN_SIGNER_ARGV_MAX 24        /* program + at most 11 option pairs + NULL */
#define SWORN_SIGNER_ARG_BYTES_MAX 8192 /* the numbers and the pinned SPKI in hex, all together */

struct sworn_signer_launch_opts {
    const char *program; /* the sworn-signer binary (absolute path; argv[0]) */
    /* > 0: exec the file open on this descriptor instead of looking program up again (the
     * monitor's, opened once at start: docs/decisiond.md section 6); 0: exec program by path. */
    int program_fd;
    uid_t uid; /* with root: the signer drops to uid/gid after opening the key; 0: stays */
    gid_t gid;
    const char *chroot_dir; /* with a uid: the signer chroots here before the drop; NULL: none */
    uint64_t memlock_bytes; /* with root: RLIMIT_MEMLOCK of the child; 0: the default above */
    int seccomp_mode;       /* enum sworn_seccomp_mode (common/seccomp.h); passed as --seccomp */
    int inet;               /* 1: the key may need the network (a TCTI or a network HSM) */
    /* 1: the signer dies (SIGKILL) with the process that launched it, set after its drop (a
     * credential change clears it). For a single-threaded launcher only, such as the monitor:
     * the kernel sends it when the launching thread ends. */
    int die_with_parent;
    /* The signer's stderr: this descriptor (the monitor's pipe, whose lines it logs as its own
     * JSON lines, so that a signer cannot write lines that look like the daemon's), or, when -1
     * or 0 (a zeroed struct), the launcher's own stderr. */
    int stderr_fd;
};

/*
 * Start a signer process for cfg (copied into argv). OUT: *fd (the caller's socket end), *pid,
 * *pidfd (-1 when unavailable). 0, or -1 with nothing left running.
 */
int sworn_signer_launch(const struct sworn_signer_config *cfg,
                        const struct sworn_signer_launch_opts *opts, int *fd, pid_t *pid,
                        int *pidfd);

#endif
