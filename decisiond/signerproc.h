/*
 * signerproc.h -- the signer process from its caller's side: the API decisiond's engine (or a
 * test, or a benchmark) uses to have the key, held by a sworn-signer process of its own, sign over
 * a socketpair (relayd's "ca" process). The signer's own code is signer/sworn-signer.c.
 *
 * The parent never opens the key. sworn_signer_proc_start copies the signer config and starts the
 * child, which opens the key (sworn_signer_open), holds the PIN and the HSM session or TPM key
 * context, and answers requests in the frames of ipc.h: sign (purpose, message), key info, health.
 *
 * THE CHILD is the sworn-signer program (signer/sworn-signer.c gives its steps), started through
 * a launcher: by default sworn_signer_launch (launch.h: fork and exec here, so this process is
 * its parent and kills and reaps it), or the caller's (decisiond's engine asks its monitor, which
 * owns the signer: opts->launcher). Either way the child is a fresh program: nothing of this
 * process's memory reaches it.
 *
 * PRIVILEGE ORDER AND THE PIN: the signer opens the key with the privileges it is started with,
 * then drops to opts->uid (the relayd way). The PIN file, the key file and the device may
 * therefore stay readable by root only, or by the signer's user alone; the unprivileged signer
 * never needs to read them again, because it never rebuilds its device context itself: on a
 * device failure it exits, and a fresh signer, started with privilege by its launcher, opens
 * everything again.
 *
 * SIGPIPE: nothing here touches signal dispositions in the parent. Every write on the socket is a
 * send(..., MSG_NOSIGNAL), so a dead child shows up as EPIPE, never as a signal.
 *
 * PIPELINING: requests from several threads share the one socket without waiting for each
 * other. Each call registers its request (up to SWORN_SIGNER_PROC_INFLIGHT_MAX outstanding; a
 * call beyond waits for a place, within its own deadline), writes its frame with a fresh id (one
 * frame at a time: a write lock), and waits for the reply with that id. The child reads requests
 * as they arrive and answers them one at a time, so while it signs the next requests already wait
 * in its socket and it never idles between signatures while callers are waiting. Replies are
 * matched to requests by id, not by order. One caller at a time reads the socket (the leader);
 * it hands each reply to its caller's condition variable and, once its own reply has come, passes
 * the reading on to a caller still waiting (leader/follower: no extra thread, no extra hop for a
 * single caller). A reply that answers nothing outstanding (an id never sent or already answered,
 * a duplicate) or that is of the wrong type for its id is as fatal as a malformed frame.
 *
 * DEADLINES AND RESTARTS: the child has opts->timeout_ms for each request, counted from the
 * moment it is free to work on it: from its previous reply, or from the request's sending when
 * nothing was outstanding (what one request alone would have had; the time a request waits
 * behind others in the pipeline is not held against the child, so a slow device with many callers
 * is not taken for a stalled one). A request's whole wait, for a place, the write of its frame
 * and its reply, is thus at most (requests ahead of it + 1) x timeout_ms. When the child misses
 * its deadline, closes the socket, resets it, or sends anything malformed or unexpected (above),
 * it is killed (SIGKILL) and reaped, and EVERY request outstanding on it fails at once with -1 and
 * SWORN_ERR_IO ("signer process stalled/died (pid N, killed): ..."): the socket is shut down, so
 * a thread in the middle of a write or a read returns at once too, and no reply read from that
 * child afterwards is given to anyone. Fail closed: the callers deny. Failing calls do not wait
 * for a new child. The next call starts one (lazily), and a reply carrying SWORN_ERR_IO likewise
 * retires the child (and fails what else was outstanding on it), as the device context is
 * suspect. The child makes its device calls inline (cfg->inline_device_calls is set in the
 * child): a hung device call is bounded by this deadline, whose SIGKILL ends the call with the
 * child, and no watchdog thread handoff slows every signature. A child that died, or wrote
 * anything, while nothing was outstanding (seen before a request is sent) is replaced
 * transparently by that request. When starting a new child fails, further calls fail at once
 * with that error until a backoff passes (100 ms, doubling to 5 s, reset by a success). A new
 * child must present the same SPKI as the first one, or it is killed and the call fails with
 * SWORN_ERR_VERIFY. Reaping: after SIGKILL the call waits up to 200 ms for the child to exit; a
 * child stuck longer (uninterruptible sleep in a driver) is reaped by a later call or by stop.
 *
 * Thread safety: every call on one struct sworn_signer_proc may run from any thread at the same
 * time as the others but stop. The state is under one mutex, released while a thread writes or
 * reads the socket. Starting a child (the first call after a failure) holds the mutex, so calls
 * wait for it, up to start_timeout_ms. A stalled child holds callers up for at most one deadline.
 * stop must not race with other calls. spki/alg/software_held read data fixed at start and take
 * no lock.
 *
 * Reaping (default launcher): the owner should not reap children with waitpid(-1) or set
 * SIGCHLD to SIG_IGN: the reaping here copes (ECHILD counts as reaped), and the child is killed
 * through a pidfd (Linux 5.3+), which cannot hit a recycled pid; only on older kernels does that
 * fall back to kill(2) by pid. With a caller's launcher nothing is killed or reaped here.
 *
 * Errors: -1 with sworn_err set (err.h). A child's own error (a refused purpose, a message of the
 * wrong form, a key that will not open) comes back with the child's code and message, prefixed
 * "signer process: ".
 */
#ifndef SWORN_SIGNERPROC_H
#define SWORN_SIGNERPROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc.h" /* enum sworn_ipc_type, for sworn_signer_proc_send_raw */
#include "notesign.h"
#include "sigscheme.h"
#include "signer.h" /* struct sworn_signer_config: what the signer opens */

#define SWORN_SIGNER_PROC_TIMEOUT_MS 2000        /* default deadline of one request */
#define SWORN_SIGNER_PROC_INFLIGHT_MAX 32        /* requests outstanding on one child at most */
#define SWORN_SIGNER_PROC_START_TIMEOUT_MS 10000 /* default deadline of a child's key opening */

/* The build's sworn-signer, for callers that name none (tests, benchmarks). */
#ifndef SWORN_SIGNER_PROGRAM
#define SWORN_SIGNER_PROGRAM "/usr/libexec/sworn/sworn-signer"
#endif

/*
 * A launcher other than fork and exec in this process. start: stop any earlier signer, start a
 * fresh one and give the caller's end of its socket (and its pid, or -1). 0, or -1 with sworn_err
 * set. stop: the current signer stalled, died or misbehaved; stop it now (it may hold the device).
 */
struct sworn_signer_launcher {
    int (*start)(void *arg, int *fd, pid_t *pid);
    void (*stop)(void *arg);
    void *arg;
};

struct sworn_signer_proc_opts {
    /*
     * Default launcher only. The user and group the child switches to after opening the key, when
     * the parent runs as root (euid 0). uid 0 means no switch (tests only: a production signer must
     * not keep root); a non-zero uid needs a non-zero gid. Ignored when the parent is not root: the
     * child then keeps the parent's uid.
     */
    uid_t uid;
    gid_t gid;
    const char *chroot_dir; /* with a uid switch: chroot here first (NULL: no chroot) */
    /* The child's time for one request (DEADLINES above); 0 means SWORN_SIGNER_PROC_TIMEOUT_MS.
     * This deadline is what bounds a device call: the child's device watchdog (cfg->timeout_ms)
     * only acts first when it is set shorter. */
    unsigned timeout_ms;
    unsigned start_timeout_ms; /* per child start; 0 means SWORN_SIGNER_PROC_START_TIMEOUT_MS */
    const char *program;       /* the sworn-signer binary; NULL: SWORN_SIGNER_PROGRAM */
    uint64_t memlock_bytes;    /* with root: the signer's RLIMIT_MEMLOCK (launch.h); 0: as is */
    int seccomp_mode;          /* the signer's filter (common/seccomp.h modes); 0: off */
    int inet;                  /* 1: its filter allows the network (TCTI or network HSM) */
    const struct sworn_signer_launcher *launcher; /* NULL: sworn_signer_launch (copied) */
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
 * FOR TESTS: write len raw bytes onto the child's socket as one request whose reply is of type
 * want with id (which the bytes should ask for; id must not be outstanding), then wait for that
 * reply as a request would (same deadline, pipeline, kill-and-reap on failure). Returns 0 when
 * the reply came back (it is discarded), or -1 with sworn_err set: SWORN_ERR_ARG (want is not a
 * reply type, id is 0 or outstanding), SWORN_ERR_IO (the child closed the socket on the bytes,
 * missed the deadline, or answered with anything else). Lets tests feed hostile frames to the
 * real child, or make it answer a request that was not sent.
 */
int sworn_signer_proc_send_raw(struct sworn_signer_proc *p, const uint8_t *bytes, size_t len,
                               enum sworn_ipc_type want, uint32_t id);

/* The requests outstanding now (sent or being sent, not yet answered): for tests and metrics. */
unsigned sworn_signer_proc_outstanding(struct sworn_signer_proc *p);

/*
 * Stop the child and free p (NULL is allowed): close the socket, so that the child closes its
 * key and exits 0, wait up to one request deadline for it, then SIGKILL and reap it.
 * No other call on p may run at the same time or after.
 */
void sworn_signer_proc_stop(struct sworn_signer_proc *p);

/*
 * p as the log's checkpoint note signer named name (notekey.h's note form of its key): every
 * signature is made for SWORN_PURPOSE_CHECKPOINT. p must outlive *out. Returns 0 or -1.
 */
int sworn_signer_proc_as_note_signer(struct sworn_signer_proc *p, const char *name,
                                     struct sworn_note_signer *out);

#endif
