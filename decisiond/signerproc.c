/*
 * signerproc.c -- the engine's side of the signer process (contract in signerproc.h): start through
 * a launcher, requests with deadlines, kill-and-reap, lazy restart with backoff. The signer itself
 * is another program (sworn-signer.c); no signer code runs in this process.
 */
#define _GNU_SOURCE
#include "signerproc.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "ipc.h"
#include "launch.h"
#include "notekey.h"

#define REAP_WAIT_MS 200     /* how long a failing call waits for a killed child to exit */
#define BACKOFF_FIRST_MS 100 /* after a failed start; doubles up to BACKOFF_MAX_MS */
#define BACKOFF_MAX_MS 5000
#define UNREAPED_MAX 8 /* killed children still to reap (stuck in a driver) */

struct sworn_signer_proc {
    pthread_mutex_t lock; /* held by every call but spki/alg/software_held and stop */
    /* The config, deep-copied: every (re)started child opens the key from it. */
    struct sworn_signer_config cfg;
    char *uri, *module_path, *pin_file, *tcti;
    uint8_t *pinned_spki;
    /* The options with defaults filled in. */
    struct sworn_signer_launch_opts launch;
    char *program, *chroot_dir;
    struct sworn_signer_launcher launcher; /* start == NULL: sworn_signer_launch here */
    unsigned timeout_ms, start_timeout_ms;
    /* The key as the first child reported it; every later child must report the same. */
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len;
    enum sworn_sig_alg alg;
    int software_held;
    /* The current child: fd -1 when there is none. pid is -1 when unknown (a launcher that does
     * not say), and only a child started here (no launcher) is killed and reaped here. */
    pid_t pid;
    int fd;
    int pidfd; /* -1 also when the kernel has no pidfd_open; kill(2) is used then */
    uint32_t last_id;
    /* After a failed start: no new attempt before retry_at (CLOCK_MONOTONIC ms). */
    unsigned backoff_ms;
    int64_t retry_at;
    enum sworn_err_code start_code;
    char start_msg[SWORN_ERR_MSG_MAX];
    /* Children that were killed but had not exited within REAP_WAIT_MS. */
    pid_t unreaped[UNREAPED_MAX];
    size_t n_unreaped;
};

/* ---------------------------------------------------------------------------------------------
 * The parent.
 */

/* Kill the child that pidfd refers to (safe against pid reuse), or pid when there is no pidfd. */
static void kill_child(pid_t pid, int pidfd)
{
    if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
        return;
    /* ESRCH: it is gone already. Anything else cannot happen for our own child; the wait that
     * follows is bounded either way. */
    if (pidfd < 0)
        (void)kill(pid, SIGKILL);
}

/*
 * Reap pid, waiting up to wait_ms (< 0: as long as it takes). Returns 1 when it is gone (ECHILD
 * counts: someone else reaped it), 0 when it is still running.
 */
static int reap(pid_t pid, int wait_ms)
{
    int64_t deadline = sworn_ipc_deadline(wait_ms);

    for (;;) {
        struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000L};
        int status;
        pid_t r = waitpid(pid, &status, deadline == SWORN_IPC_FOREVER ? 0 : WNOHANG);

        if (r == pid || (r < 0 && errno == ECHILD))
            return 1;
        if (r < 0 && errno != EINTR)
            return 1; /* EINVAL cannot happen with these flags; do not spin on it */
        if (deadline != SWORN_IPC_FOREVER && sworn_ipc_deadline(0) >= deadline)
            return 0;
        if (r == 0)
            (void)nanosleep(&ms, NULL); /* EINTR only shortens one step of the poll */
    }
}

/* Reap what earlier calls had to leave behind, without waiting. */
static void reap_leftovers(struct sworn_signer_proc *p)
{
    size_t kept = 0;

    for (size_t i = 0; i < p->n_unreaped; i++)
        if (!reap(p->unreaped[i], 0))
            p->unreaped[kept++] = p->unreaped[i];
    p->n_unreaped = kept;
}

/*
 * Retire the current child: close the socket, SIGKILL it, reap it within REAP_WAIT_MS or
 * remember it for later. Afterwards there is no current child.
 */
static void retire(struct sworn_signer_proc *p)
{
    if (p->fd >= 0) {
        (void)close(p->fd); /* the descriptor is gone even when close reports an error */
        p->fd = -1;
    }
    if (p->launcher.start != NULL) {
        /* Not our child (another uid's, even): whoever launched it stops it. */
        if (p->pid != -1 && p->launcher.stop != NULL)
            p->launcher.stop(p->launcher.arg);
        p->pid = -1;
    } else if (p->pid > 0) {
        kill_child(p->pid, p->pidfd);
        if (!reap(p->pid, REAP_WAIT_MS)) {
            /* A full list means children stuck in the kernel for good; wait for the oldest
             * rather than leak zombies without bound. */
            if (p->n_unreaped == UNREAPED_MAX) {
                (void)reap(p->unreaped[0], -1);
                memmove(p->unreaped, p->unreaped + 1, (UNREAPED_MAX - 1) * sizeof(pid_t));
                p->n_unreaped--;
            }
            p->unreaped[p->n_unreaped++] = p->pid;
        }
        p->pid = -1;
    }
    if (p->pidfd >= 0) {
        (void)close(p->pidfd);
        p->pidfd = -1;
    }
}

/*
 * Write out[0..out_len) to the child and read its reply before deadline. want is the reply type
 * expected with id (0: any valid frame, id unchecked, for sworn_signer_proc_send_raw).
 * OUT: *resp, pointing into frame. On any failure the child is retired and -1 returned with
 * SWORN_ERR_IO.
 */
static int transact(struct sworn_signer_proc *p, const uint8_t *out, size_t out_len,
                    enum sworn_ipc_type want, uint32_t id, uint8_t frame[SWORN_IPC_FRAME_MAX],
                    struct sworn_ipc_msg *resp, int64_t deadline)
{
    char why[SWORN_ERR_MSG_MAX];
    pid_t pid = p->pid;
    int rc;

    if (sworn_ipc_write_all(p->fd, out, out_len, deadline) < 0)
        goto dead;
    rc = sworn_ipc_recv(p->fd, frame, resp, deadline);
    if (rc == 1)
        sworn_err_set(SWORN_ERR_IO, "it closed the socket");
    if (rc != 0)
        goto dead;
    if (want != 0 && (resp->type != want || resp->id != id)) {
        sworn_err_set(SWORN_ERR_IO, "unexpected reply (type %d, id %lu; wanted type %d, id %lu)",
                      (int)resp->type, (unsigned long)resp->id, (int)want, (unsigned long)id);
        goto dead;
    }
    return 0;
dead:
    snprintf(why, sizeof(why), "%s", sworn_err_msg());
    retire(p);
    return sworn_err_set(SWORN_ERR_IO, "signer process stalled/died (pid %ld, killed): %s",
                         (long)pid, why);
}

/* Send one request message and read the reply of type want. As transact. */
static int request(struct sworn_signer_proc *p, struct sworn_ipc_msg *req, enum sworn_ipc_type want,
                   uint8_t frame[SWORN_IPC_FRAME_MAX], struct sworn_ipc_msg *resp, int64_t deadline)
{
    uint8_t out[SWORN_IPC_FRAME_MAX];
    long n;

    /* Ids only need to differ between consecutive requests on one socket; 0 is skipped so that
     * a zeroed frame never matches. */
    if (++p->last_id == 0)
        p->last_id = 1;
    req->id = p->last_id;
    n = sworn_ipc_encode(req, out, sizeof(out));
    if (n < 0)
        return -1;
    return transact(p, out, (size_t)n, want, req->id, frame, resp, deadline);
}

/*
 * Turn a reply's non-zero status into this thread's error (the child's code and message). A
 * device failure also retires the child, which exits by itself anyway. Returns 0 for status 0.
 */
static int child_error(struct sworn_signer_proc *p, const struct sworn_ipc_msg *resp)
{
    if (resp->status == SWORN_OK)
        return 0;
    sworn_err_set(resp->status, "signer process: %.*s", (int)resp->data_len,
                  (const char *)resp->data);
    if (resp->status == SWORN_ERR_IO) {
        char why[SWORN_ERR_MSG_MAX];

        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        retire(p);
        sworn_err_set(SWORN_ERR_IO, "%s", why);
    }
    return -1;
}

/*
 * Fork a new child and wait for its INFO_RESP. On success it is the current child; on failure
 * nothing is left running and -1 is returned with sworn_err set.
 */
static int spawn(struct sworn_signer_proc *p)
{
    uint8_t frame[SWORN_IPC_FRAME_MAX];
    struct sworn_ipc_msg req = {.type = SWORN_IPC_INFO_REQ}, resp;

    if (p->launcher.start != NULL) {
        if (p->launcher.start(p->launcher.arg, &p->fd, &p->pid) < 0) {
            p->fd = -1;
            p->pid = -1;
            return -1;
        }
    } else if (sworn_signer_launch(&p->cfg, &p->launch, &p->fd, &p->pid, &p->pidfd) < 0) {
        return -1;
    }
    if (request(p, &req, SWORN_IPC_INFO_RESP, frame, &resp,
                sworn_ipc_deadline((int)p->start_timeout_ms)) < 0)
        return -1;
    if (child_error(p, &resp) < 0) {
        /* A signer that could not open its key exits by itself once it has said so, with a
         * status that tells its launcher why (a refused PIN: launch.h); a launcher's stop would
         * kill it first and lose that. Our own child is reaped as always. */
        if (p->launcher.start != NULL)
            p->pid = -1;
        retire(p);
        return -1;
    }
    if (p->spki_len == 0) {
        memcpy(p->spki, resp.data, resp.data_len);
        p->spki_len = resp.data_len;
        p->alg = resp.alg;
        p->software_held = resp.software_held;
    } else if (resp.data_len != p->spki_len || memcmp(resp.data, p->spki, p->spki_len) != 0 ||
               resp.alg != p->alg || resp.software_held != p->software_held) {
        retire(p);
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "signer process: the restarted child holds a different key than the "
                             "first one");
    }
    return 0;
}

/*
 * Make sure there is a live child: replace one that died while idle, and start one after a
 * failure, unless the backoff of a failed start says not yet.
 */
static int ensure_child(struct sworn_signer_proc *p)
{
    int64_t now;

    reap_leftovers(p);
    if (p->fd >= 0) {
        struct pollfd pfd = {.fd = p->fd, .events = POLLIN, .revents = 0};

        /* An idle child never writes: readable means it closed the socket (it died) or sent
         * something unasked, and either way it is done. */
        int r = poll(&pfd, 1, 0);

        if (r > 0 || (r < 0 && errno != EINTR))
            retire(p);
    }
    if (p->fd >= 0)
        return 0;
    now = sworn_ipc_deadline(0);
    if (p->backoff_ms > 0 && now < p->retry_at)
        return sworn_err_set(p->start_code,
                             "signer process: not restarted yet (next attempt in %ld ms): %s",
                             (long)(p->retry_at - now), p->start_msg);
    if (spawn(p) < 0) {
        p->backoff_ms = p->backoff_ms == 0 ? BACKOFF_FIRST_MS : p->backoff_ms * 2;
        if (p->backoff_ms > BACKOFF_MAX_MS)
            p->backoff_ms = BACKOFF_MAX_MS;
        p->retry_at = now + p->backoff_ms;
        p->start_code = sworn_err_code();
        snprintf(p->start_msg, sizeof(p->start_msg), "%s", sworn_err_msg());
        return -1;
    }
    p->backoff_ms = 0;
    return 0;
}

static int lock(struct sworn_signer_proc *p)
{
    int rc = pthread_mutex_lock(&p->lock);

    if (rc != 0)
        return sworn_err_set(SWORN_ERR_IO, "signer process: lock: %s", strerror(rc));
    return 0;
}

static void unlock(struct sworn_signer_proc *p)
{
    /* Unlocking a mutex this thread holds cannot fail. */
    (void)pthread_mutex_unlock(&p->lock);
}

/* Copy a string that may be NULL. Returns 0, or -1 (SWORN_ERR_NOMEM). */
static int dup_opt(const char *s, char **out)
{
    *out = NULL;
    if (s == NULL)
        return 0;
    *out = strdup(s);
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "signer process: out of memory");
    return 0;
}

static void free_proc(struct sworn_signer_proc *p)
{
    free(p->uri);
    free(p->module_path);
    free(p->pin_file);
    free(p->tcti);
    free(p->pinned_spki);
    free(p->chroot_dir);
    free(p->program);
    free(p);
}

int sworn_signer_proc_start(const struct sworn_signer_config *cfg,
                            const struct sworn_signer_proc_opts *opts,
                            struct sworn_signer_proc **out)
{
    static const struct sworn_signer_proc_opts defaults = {0};
    struct sworn_signer_proc *p = NULL;
    int locked = 0;

    if (opts == NULL)
        opts = &defaults;
    SWORN_ENSURE(cfg != NULL && cfg->uri != NULL, SWORN_ERR_ARG, "signer process: no key URI");
    SWORN_ENSURE(opts->timeout_ms <= INT_MAX && opts->start_timeout_ms <= INT_MAX, SWORN_ERR_ARG,
                 "signer process: timeout out of range");
    p = calloc(1, sizeof(*p));
    SWORN_ENSURE(p != NULL, SWORN_ERR_NOMEM, "signer process: out of memory");
    p->pid = -1;
    p->fd = -1;
    p->pidfd = -1;
    SWORN_GUARD(dup_opt(cfg->uri, &p->uri));
    SWORN_GUARD(dup_opt(cfg->module_path, &p->module_path));
    SWORN_GUARD(dup_opt(cfg->pin_file, &p->pin_file));
    SWORN_GUARD(dup_opt(cfg->tcti, &p->tcti));
    SWORN_GUARD(dup_opt(opts->chroot_dir, &p->chroot_dir));
    if (cfg->pinned_spki != NULL && cfg->pinned_spki_len > 0) {
        p->pinned_spki = malloc(cfg->pinned_spki_len);
        SWORN_ENSURE(p->pinned_spki != NULL, SWORN_ERR_NOMEM, "signer process: out of memory");
        memcpy(p->pinned_spki, cfg->pinned_spki, cfg->pinned_spki_len);
    }
    p->cfg.uri = p->uri;
    p->cfg.module_path = p->module_path;
    p->cfg.pin_file = p->pin_file;
    p->cfg.tcti = p->tcti;
    p->cfg.pinned_spki = p->pinned_spki;
    p->cfg.pinned_spki_len = p->pinned_spki != NULL ? cfg->pinned_spki_len : 0;
    p->cfg.timeout_ms = cfg->timeout_ms;
    SWORN_GUARD(dup_opt(opts->program != NULL ? opts->program : SWORN_SIGNER_PROGRAM, &p->program));
    p->launch.program = p->program;
    /* Without root there is nobody to switch to: the signer keeps the caller's uid. */
    if (geteuid() == 0 && opts->uid != 0) {
        p->launch.uid = opts->uid;
        p->launch.gid = opts->gid;
        p->launch.chroot_dir = p->chroot_dir;
    }
    p->launch.memlock_bytes = opts->memlock_bytes;
    p->launch.seccomp_mode = opts->seccomp_mode;
    p->launch.inet = opts->inet;
    if (opts->launcher != NULL)
        p->launcher = *opts->launcher;
    p->timeout_ms = opts->timeout_ms != 0 ? opts->timeout_ms : SWORN_SIGNER_PROC_TIMEOUT_MS;
    p->start_timeout_ms =
        opts->start_timeout_ms != 0 ? opts->start_timeout_ms : SWORN_SIGNER_PROC_START_TIMEOUT_MS;
    SWORN_ENSURE(pthread_mutex_init(&p->lock, NULL) == 0, SWORN_ERR_NOMEM,
                 "signer process: cannot create its mutex");
    locked = 1;
    SWORN_GUARD(spawn(p));
    *out = p;
    return 0;
fail:
    if (p != NULL) {
        retire(p);
        for (size_t i = 0; i < p->n_unreaped; i++)
            (void)reap(p->unreaped[i], -1);
        if (locked)
            (void)pthread_mutex_destroy(&p->lock);
        free_proc(p);
    }
    return -1;
}

int sworn_signer_proc_sign(struct sworn_signer_proc *p, enum sworn_sign_purpose purpose,
                           const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                           size_t *sig_len)
{
    uint8_t frame[SWORN_IPC_FRAME_MAX];
    struct sworn_ipc_msg req = {.type = SWORN_IPC_SIGN_REQ}, resp;
    int rc = -1;

    if (!sworn_sign_purpose_known((unsigned)purpose))
        return sworn_err_set(SWORN_ERR_ARG, "signer process: unknown purpose %d", (int)purpose);
    if (msg == NULL || len == 0 || len > SWORN_SIGNER_MSG_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "signer process: message of %zu bytes (1..%d)", len,
                             SWORN_SIGNER_MSG_MAX);
    req.purpose = purpose;
    req.data = msg;
    req.data_len = len;
    if (lock(p) < 0)
        return -1;
    if (ensure_child(p) < 0 ||
        request(p, &req, SWORN_IPC_SIGN_RESP, frame, &resp,
                sworn_ipc_deadline((int)p->timeout_ms)) < 0 ||
        child_error(p, &resp) < 0)
        goto out;
    if (resp.data_len > cap) {
        sworn_err_set(SWORN_ERR_RANGE, "signer process: a %zu-byte signature for %zu bytes of room",
                      resp.data_len, cap);
        goto out;
    }
    memcpy(sig, resp.data, resp.data_len);
    *sig_len = resp.data_len;
    rc = 0;
out:
    unlock(p);
    return rc;
}

int sworn_signer_proc_health(struct sworn_signer_proc *p)
{
    uint8_t frame[SWORN_IPC_FRAME_MAX];
    struct sworn_ipc_msg req = {.type = SWORN_IPC_HEALTH_REQ}, resp;
    int rc = -1;

    if (lock(p) < 0)
        return -1;
    if (ensure_child(p) == 0 &&
        request(p, &req, SWORN_IPC_HEALTH_RESP, frame, &resp,
                sworn_ipc_deadline((int)p->timeout_ms)) == 0 &&
        child_error(p, &resp) == 0)
        rc = 0;
    unlock(p);
    return rc;
}

int sworn_signer_proc_send_raw(struct sworn_signer_proc *p, const uint8_t *bytes, size_t len)
{
    uint8_t frame[SWORN_IPC_FRAME_MAX];
    struct sworn_ipc_msg resp;
    int rc = -1;

    if (lock(p) < 0)
        return -1;
    if (ensure_child(p) == 0 &&
        transact(p, bytes, len, 0, 0, frame, &resp, sworn_ipc_deadline((int)p->timeout_ms)) == 0)
        rc = 0;
    unlock(p);
    return rc;
}

const uint8_t *sworn_signer_proc_spki(const struct sworn_signer_proc *p, size_t *len)
{
    *len = p->spki_len;
    return p->spki;
}

enum sworn_sig_alg sworn_signer_proc_alg(const struct sworn_signer_proc *p)
{
    return p->alg;
}

int sworn_signer_proc_software_held(const struct sworn_signer_proc *p)
{
    return p->software_held;
}

pid_t sworn_signer_proc_pid(struct sworn_signer_proc *p)
{
    pid_t pid;

    if (lock(p) < 0)
        return -1;
    pid = p->pid;
    unlock(p);
    return pid;
}

void sworn_signer_proc_stop(struct sworn_signer_proc *p)
{
    if (p == NULL)
        return;
    if (p->fd >= 0) {
        /* EOF lets the child close its session and log out of the HSM before it exits. */
        (void)close(p->fd);
        p->fd = -1;
        if (p->pid > 0 && reap(p->pid, (int)p->timeout_ms)) {
            p->pid = -1;
        }
    }
    retire(p);
    for (size_t i = 0; i < p->n_unreaped; i++)
        (void)reap(p->unreaped[i], -1);
    (void)pthread_mutex_destroy(&p->lock);
    free_proc(p);
}

/* --- as the log's checkpoint note signer ------------------------------------------------------ */

static int proc_checkpoint_sign(void *ctx, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                                size_t *sig_len)
{
    return sworn_signer_proc_sign(ctx, SWORN_PURPOSE_CHECKPOINT, msg, len, sig, cap, sig_len);
}

/* The signer process belongs to its owner: closing the note signer leaves it running. */
static void proc_checkpoint_close(void *ctx)
{
    (void)ctx;
}

static const struct sworn_note_signer_ops proc_ops = {
    .kind = "sworn-signer-process",
    .sign = proc_checkpoint_sign,
    .close = proc_checkpoint_close,
};

int sworn_signer_proc_as_note_signer(struct sworn_signer_proc *p, const char *name,
                                     struct sworn_note_signer *out)
{
    size_t spki_len;
    const uint8_t *spki = sworn_signer_proc_spki(p, &spki_len);

    if (sworn_note_pub_from_spki(name, spki, spki_len, sworn_signer_proc_alg(p), out) < 0)
        return -1;
    out->ops = &proc_ops;
    out->ctx = p;
    return 0;
}
