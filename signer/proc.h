/*
 * proc.h -- the signer process: the parent-side API that decisiond (or a test) uses to run the
 * key in a child process of its own, joined by a socketpair (relayd's "ca" process).
 *
 * The parent never opens the key. sworn_signer_proc_start copies the signer config and forks; the
 * child opens the key (sworn_signer_open), holds the PIN and the HSM session or TPM key context,
 * and answers requests in the frames of ipc.h: sign (purpose, message), key info, health. No
 * signer context exists before the fork and none is ever used across one.
 *
 * THE CHILD, in order:
 *   1. keeps stderr (so crash reports and sanitizer output stay visible; /dev/null instead when it
 *      is closed or one of the socket's ends), points stdin and stdout at /dev/null, moves its
 *      socket end to fd 3 and closes every other descriptor (close_range, or a loop where that
 *      is missing);
 *   2. resets every signal handler to its default, so none of the parent's handlers run in it,
 *      ignores SIGPIPE (a PKCS#11 module may write to a dead network peer), unblocks all signals;
 *   3. sets RLIMIT_CORE to 0 and PR_SET_DUMPABLE to 0 (no core dumps, no ptrace by its own uid);
 *   4. opens the key, WITH the privileges it was started with: this reads the PIN file, loads the
 *      PKCS#11 module or opens the TPM, and logs in;
 *   5. when the parent runs as root and opts->uid is not 0: chroots to opts->chroot_dir when one is
 *      given, then setgroups(0), setresgid(gid x3), setresuid(uid x3), and checks that they stuck
 *      (getres[ug]id, no supplementary groups, setuid(0) fails); any failure ends the child;
 *   6. sets PR_SET_DUMPABLE to 0 again (a credential change resets it to fs.suid_dumpable);
 *   7. answers the parent's first request, INFO_REQ, with the key's algorithm and DER SPKI, or
 *      with the error of steps 4-5 (and then exits);
 *   8. loops: read a request, check it, answer it. It exits 0 when the parent closes the socket,
 *      at once on any malformed or unexpected frame, and after answering a request whose device
 *      call failed with SWORN_ERR_IO (see RESTARTS).
 *
 * PRIVILEGE ORDER AND THE PIN: open first, then drop (step 4 before 5), the relayd way. The PIN
 * file, the key file and the device may therefore stay readable by root only (0600 root); the
 * unprivileged child never needs to read them again, because it never rebuilds its device
 * context itself: on a device failure it exits, and the parent starts a fresh child, which opens
 * everything again with privilege. The price is that sworn_signer_open (PEM parsing, the PKCS#11
 * module's C_Initialize and login, TPM session setup) runs as root, before the parent has sent a
 * single byte; it reads only files and devices that the operator's config names.
 *
 * SIGPIPE: nothing here touches signal dispositions in the parent. Every write on the socket is a
 * send(..., MSG_NOSIGNAL), so a dead child shows up as EPIPE, never as a signal.
 *
 * DEADLINES AND RESTARTS: every request has a deadline (opts->timeout_ms) covering the write of
 * the request and the read of the reply. When the child misses it, closes the socket, resets it,
 * or sends anything malformed or unexpected (wrong type or id), the call kills the child
 * (SIGKILL), reaps it, and returns -1 with SWORN_ERR_IO ("signer process stalled/died: ...") at
 * once; the caller denies. The call does not wait for a new child. The next call starts one
 * (lazily), and a reply carrying SWORN_ERR_IO likewise retires the child, as the device context
 * is suspect. The child makes its device calls inline (cfg->inline_device_calls is set in the
 * child): a hung device call is bounded by this deadline, whose SIGKILL ends the call with the
 * child, and no watchdog thread handoff slows every signature. A child that died while idle
 * (seen before a request is sent) is replaced transparently by that request. When starting a new
 * child fails, further calls fail at once with that error until a backoff passes (100 ms, doubling
 * to 5 s, reset by a success). A new child must present the same SPKI as the first one, or it is
 * killed and the call fails with SWORN_ERR_VERIFY. Reaping: after SIGKILL the call waits up to 200
 * ms for the child to exit; a child stuck longer (uninterruptible sleep in a driver) is reaped by a
 * later call or by stop.
 *
 * Thread safety: every call on one struct sworn_signer_proc takes its mutex, so decisiond may call
 * from several threads; requests are served one at a time, and a stalled child holds the others
 * up for at most one deadline. stop must not race with other calls. spki/alg/software_held read
 * data fixed at start and take no lock.
 *
 * Fork caveats: the child runs library code (malloc, OpenSSL, a PKCS#11 module) after fork()
 * without exec(). glibc makes malloc safe there; a lock held by another parent thread at the
 * moment of the fork (say, inside OpenSSL) could still deadlock the child, which the start
 * deadline turns into an error and a later retry. decisiond should call start before it starts
 * threads. The child also inherits a copy of the parent's memory, and any other child the parent
 * forks holds the parent's socket end until it execs (SOCK_CLOEXEC), which delays the signer's
 * end-of-stream exit until then. The owner should not reap children with waitpid(-1) or set
 * SIGCHLD to SIG_IGN: the reaping here copes (ECHILD counts as reaped), and the child is killed
 * through a pidfd (Linux 5.3+), which cannot hit a recycled pid; only on older kernels does that
 * fall back to kill(2) by pid.
 *
 * Errors: -1 with sworn_err set (err.h). A child's own error (a refused purpose, a message of the
 * wrong form, a key that will not open) comes back with the child's code and message, prefixed
 * "signer process: ".
 */
#ifndef SWORN_SIGNER_PROC_H
#define SWORN_SIGNER_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "signer.h"

#define SWORN_SIGNER_PROC_TIMEOUT_MS 2000        /* default deadline of one request */
#define SWORN_SIGNER_PROC_START_TIMEOUT_MS 10000 /* default deadline of a child's key opening */

struct sworn_signer_proc_opts {
    /*
     * The user and group the child switches to after opening the key, when the parent runs as
     * root (euid 0). uid 0 means no switch (tests only: a production signer must not keep root);
     * a non-zero uid needs a non-zero gid. Ignored when the parent is not root: the child then
     * keeps the parent's uid.
     */
    uid_t uid;
    gid_t gid;
    const char *chroot_dir; /* with a uid switch: chroot here first (NULL: no chroot) */
    /* Per request; 0 means SWORN_SIGNER_PROC_TIMEOUT_MS. This deadline is what bounds a request:
     * the child's device watchdog (cfg->timeout_ms) only acts first when it is set shorter. */
    unsigned timeout_ms;
    unsigned start_timeout_ms; /* per child start; 0 means SWORN_SIGNER_PROC_START_TIMEOUT_MS */
};

struct sworn_signer_proc;

/*
 * Start the signer process for the key cfg names (signer.h) and wait until it has opened the key.
 * IN: cfg (copied; it need not outlive the call), opts (copied; NULL for the defaults).
 * OUT: *out, only on success. Returns 0, or -1 with sworn_err set: SWORN_ERR_ARG (bad options),
 * SWORN_ERR_IO (socketpair/fork failed, the child died or did not answer within
 * start_timeout_ms), or the child's own error from sworn_signer_open (e.g. SWORN_ERR_VERIFY for a
 * pinned-key mismatch). Nothing is left running after an error.
 */
int sworn_signer_proc_start(const struct sworn_signer_config *cfg,
                            const struct sworn_signer_proc_opts *opts,
                            struct sworn_signer_proc **out);

/*
 * Have the child sign msg[0..len) for purpose (signer.h rules). Writes the signature into sig
 * (capacity cap; SWORN_SIGNER_SIG_MAX is always enough). OUT: *sig_len, only on success.
 * Returns 0, or -1 with sworn_err set: SWORN_ERR_ARG (unknown purpose, len 0 or above
 * SWORN_SIGNER_MSG_MAX; refused here, the child never sees it), SWORN_ERR_RANGE (cap too small),
 * SWORN_ERR_IO (the child stalled or died; see RESTARTS), or the child's own error
 * (SWORN_ERR_FORMAT: msg is not of its purpose's form). sig is unchanged after an error.
 */
int sworn_signer_proc_sign(struct sworn_signer_proc *p, enum sworn_sign_purpose purpose,
                           const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                           size_t *sig_len);

/*
 * Ask the child to run sworn_signer_health (sign a fixed digest and verify it).
 * Returns 0, or -1 with sworn_err set (as for sign).
 */
int sworn_signer_proc_health(struct sworn_signer_proc *p);

/* The key's DER SPKI (owned by p, fixed for its life). OUT: *len. */
const uint8_t *sworn_signer_proc_spki(const struct sworn_signer_proc *p, size_t *len);

/* The key's algorithm, and whether it is software-held (file:), as the child reported them. */
enum sworn_sig_alg sworn_signer_proc_alg(const struct sworn_signer_proc *p);
int sworn_signer_proc_software_held(const struct sworn_signer_proc *p);

/* The current child's pid, or -1 when there is none (it died and none was started yet). */
pid_t sworn_signer_proc_pid(struct sworn_signer_proc *p);

/*
 * FOR TESTS: write len raw bytes onto the child's socket, then wait for a reply frame as a
 * request would (same deadline, same kill-and-reap on failure). Returns 0 when a valid reply of
 * any type came back (it is discarded), or -1 with sworn_err set; a child that closes the socket
 * on the bytes gives SWORN_ERR_IO. Lets tests feed hostile frames to the real child.
 */
int sworn_signer_proc_send_raw(struct sworn_signer_proc *p, const uint8_t *bytes, size_t len);

/*
 * Stop the child and free p (NULL is allowed): close the socket, so that the child closes its
 * key and exits 0, wait up to one request deadline for it, then SIGKILL and reap it.
 * No other call on p may run at the same time or after.
 */
void sworn_signer_proc_stop(struct sworn_signer_proc *p);

#endif
