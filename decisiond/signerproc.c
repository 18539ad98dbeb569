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

/* The largest data a reply carries: a signature, an SPKI or an error message. */
#define REPLY_DATA_MAX                                                                             \
    (SWORN_SIGNER_SPKI_MAX > SWORN_SIGNER_SIG_MAX ? SWORN_SIGNER_SPKI_MAX : SWORN_SIGNER_SIG_MAX)
_Static_assert(SWORN_IPC_ERRMSG_MAX <= REPLY_DATA_MAX, "an error message fits a slot");

/*
 * One child's socket. Threads write requests to it and the leader reads replies from it without
 * holding the lock, so it is not closed while any of them uses it: retiring the child shuts it
 * down (which wakes every poll on it at once) and marks it dead, and the last user closes it.
 */
struct conn {
    int fd;
    unsigned users;             /* threads in I/O on fd outside the lock */
    int dead;                   /* retired: every request on it has failed; no new one is sent */
    pid_t pid;                  /* the child it leads to, for messages */
    struct sworn_ipc_reader in; /* used by the leader only */
};

enum slot_state {
    SLOT_FREE = 0,
    SLOT_WAITING, /* sent, or being sent; no reply yet */
    SLOT_DONE,    /* reply holds the answer */
    SLOT_FAILED   /* code, why: the child was retired with this request outstanding */
};

/* One outstanding request and, once it came, its reply. */
struct slot {
    enum slot_state state;
    uint32_t id;
    enum sworn_ipc_type want;   /* the reply type that answers it */
    struct conn *conn;          /* the socket it was sent on */
    pthread_cond_t wake;        /* its thread waits here: for the reply, a failure, or to lead */
    struct sworn_ipc_msg reply; /* DONE: data points to data below */
    uint8_t data[REPLY_DATA_MAX];
    enum sworn_err_code code; /* FAILED */
    char why[SWORN_ERR_MSG_MAX];
};

struct sworn_signer_proc {
    pthread_mutex_t
        lock; /* held by every call but spki/alg/software_held and stop, except in I/O */
    pthread_mutex_t wlock; /* one request frame at a time onto the socket; taken without lock */
    pthread_cond_t room;   /* a slot became free */
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
    /* The current child: conn NULL when there is none. pid is -1 when unknown (a launcher that
     * does not say), and only a child started here (no launcher) is killed and reaped here. */
    pid_t pid;
    struct conn *conn;
    int pidfd; /* -1 also when the kernel has no pidfd_open; kill(2) is used then */
    uint32_t last_id;
    /* The pipeline: requests sent and not yet answered, and whether a thread is reading. */
    struct slot slots[SWORN_SIGNER_PROC_INFLIGHT_MAX];
    unsigned n_inflight; /* slots in use (waiting, or answered and not yet released) */
    unsigned n_waiting;  /* of these, requests on the current child still unanswered */
    int leading;
    /* Since when the child has been free to work on the oldest unanswered request: the time of
     * its last reply, or of that request's registration when the child had nothing to do. The
     * child must answer by head_since + timeout_ms (DEADLINES in signerproc.h). */
    int64_t head_since;
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

static struct conn *conn_new(int fd, pid_t pid)
{
    struct conn *c = malloc(sizeof(*c));

    if (c == NULL) {
        (void)close(fd);
        sworn_err_set(SWORN_ERR_NOMEM, "signer process: out of memory");
        return NULL;
    }
    c->fd = fd;
    c->users = 0;
    c->dead = 0;
    c->pid = pid;
    sworn_ipc_reader_init(&c->in);
    return c;
}

/* A user is done with c (lock held): the last one out of a dead socket closes it. */
static void conn_put(struct conn *c)
{
    c->users--;
    if (c->dead && c->users == 0) {
        (void)close(c->fd); /* the descriptor is gone even when close reports an error */
        free(c);
    }
}

/*
 * Kill the current child: SIGKILL it and reap it within REAP_WAIT_MS or remember it for later,
 * or have its launcher stop it. Its socket is the caller's to deal with.
 */
static void kill_current(struct sworn_signer_proc *p)
{
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
 * Retire the current child (lock held): fail every request outstanding on it with
 * SWORN_ERR_IO and why, wake their threads, shut its socket down (any thread in I/O on it
 * returns at once), kill it. Afterwards there is no current child. Fail closed: not one
 * outstanding request is answered from it after this.
 */
static void retire(struct sworn_signer_proc *p, const char *why)
{
    struct conn *c = p->conn;
    char msg[SWORN_ERR_MSG_MAX];

    snprintf(msg, sizeof(msg), "signer process stalled/died (pid %ld, killed): %s",
             (long)(c != NULL ? c->pid : p->pid), why);
    if (c != NULL) {
        for (size_t i = 0; i < SWORN_SIGNER_PROC_INFLIGHT_MAX; i++) {
            struct slot *s = &p->slots[i];

            if (s->state == SLOT_WAITING && s->conn == c) {
                p->n_waiting--;
                s->state = SLOT_FAILED;
                s->code = SWORN_ERR_IO;
                snprintf(s->why, sizeof(s->why), "%s", msg);
                (void)pthread_cond_signal(&s->wake);
            }
        }
        (void)shutdown(c->fd, SHUT_RDWR);
        c->dead = 1;
        p->conn = NULL;
        c->users++;
        conn_put(c); /* closes it now when nobody is in I/O on it */
    }
    kill_current(p);
}

/* The current child misbehaved or failed: retire it, and return -1 with why as SWORN_ERR_IO. */
static int retire_err(struct sworn_signer_proc *p, const char *why)
{
    char saved[SWORN_ERR_MSG_MAX];
    pid_t pid = p->conn != NULL ? p->conn->pid : p->pid;

    snprintf(saved, sizeof(saved), "%s", why);
    retire(p, saved);
    return sworn_err_set(SWORN_ERR_IO, "signer process stalled/died (pid %ld, killed): %s",
                         (long)pid, saved);
}

/* Monotonic deadline (ms) as a timespec on CLOCK_MONOTONIC, for pthread_cond_timedwait. */
static struct timespec abstime(int64_t deadline)
{
    struct timespec ts = {.tv_sec = (time_t)(deadline / 1000),
                          .tv_nsec = (long)(deadline % 1000) * 1000000L};
    return ts;
}

/* Wait on cv (lock held) until signalled or deadline. Returns 1 when the deadline passed. */
static int wait_until(struct sworn_signer_proc *p, pthread_cond_t *cv, int64_t deadline)
{
    struct timespec ts = abstime(deadline);
    int rc = pthread_cond_timedwait(cv, &p->lock, &ts);

    return rc == ETIMEDOUT || sworn_ipc_deadline(0) >= deadline;
}

/* The request outstanding on c with id, or NULL. */
static struct slot *find_slot(struct sworn_signer_proc *p, struct conn *c, uint32_t id)
{
    for (size_t i = 0; i < SWORN_SIGNER_PROC_INFLIGHT_MAX; i++)
        if (p->slots[i].state == SLOT_WAITING && p->slots[i].conn == c && p->slots[i].id == id)
            return &p->slots[i];
    return NULL;
}

/* Hand the reading on (lock held, nobody leading): wake one waiting thread to lead. */
static void pass_lead(struct sworn_signer_proc *p)
{
    for (size_t i = 0; i < SWORN_SIGNER_PROC_INFLIGHT_MAX; i++)
        if (p->slots[i].state == SLOT_WAITING) {
            (void)pthread_cond_signal(&p->slots[i].wake);
            return;
        }
}

/*
 * As the leader (lock held on entry and exit, released while reading): read one reply from c and
 * give it to the request it answers. A reply that answers no outstanding request on c (an id
 * never sent or already answered, a type that does not answer its request), a malformed frame,
 * an end of stream, an error, or no reply by head_since + timeout_ms retire the child. Only the
 * leader moves head_since while it reads (its own request is unanswered), so the deadline holds.
 */
static void lead_once(struct sworn_signer_proc *p, struct conn *c)
{
    int64_t deadline = p->head_since + (int64_t)p->timeout_ms;
    struct sworn_ipc_msg m;
    struct slot *s;
    int rc;

    p->leading = 1;
    c->users++;
    (void)pthread_mutex_unlock(&p->lock);
    rc = sworn_ipc_reader_next(&c->in, c->fd, &m, deadline);
    (void)pthread_mutex_lock(&p->lock);
    p->leading = 0;
    if (c->dead) {
        conn_put(c); /* retired meanwhile; whatever was read is of no use */
        return;
    }
    c->users--;
    if (rc == 1) {
        (void)retire_err(p, "it closed the socket");
        return;
    }
    if (rc < 0) {
        (void)retire_err(p, sworn_err_msg());
        return;
    }
    s = find_slot(p, c, m.id);
    if (s == NULL || m.type != s->want) {
        char why[128];

        snprintf(why, sizeof(why), "unexpected reply (type %d, id %lu%s)", (int)m.type,
                 (unsigned long)m.id,
                 s == NULL ? ": no request with that id is outstanding" : ", the wrong type");
        (void)retire_err(p, why);
        return;
    }
    s->reply = m;
    memcpy(s->data, m.data, m.data_len);
    s->reply.data = s->data;
    s->state = SLOT_DONE;
    /* The child answers one request at a time: from now on it works on the next one. */
    p->n_waiting--;
    p->head_since = sworn_ipc_deadline(0);
    (void)pthread_cond_signal(&s->wake);
}

/* An id not outstanding (lock held). 0 is skipped so that a zeroed frame never matches. */
static uint32_t next_id(struct sworn_signer_proc *p)
{
    do {
        if (++p->last_id == 0)
            p->last_id = 1;
    } while (find_slot(p, p->conn, p->last_id) != NULL);
    return p->last_id;
}

static void put_be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

static int ensure_child(struct sworn_signer_proc *p);

/*
 * How long a thread may wait, from now, for something that depends on the child working through
 * the requests ahead of it, each within its own timeout_ms: a bound that a slow but healthy child
 * never reaches (the leader's head_since deadline catches a stalled one first).
 */
static int64_t queue_deadline(const struct sworn_signer_proc *p)
{
    return sworn_ipc_deadline(0) + (int64_t)(p->n_waiting + 1) * p->timeout_ms;
}

/*
 * One request through the pipeline (lock held on entry and exit). out[0..out_len) is the frame;
 * when id is 0 a fresh id is written into its header, else the frame already carries id (for
 * sworn_signer_proc_send_raw). Waits for a free slot, registers the request, writes the frame,
 * then waits for its reply, leading the reading when nobody else does. OUT: *slot, the request's
 * slot with its reply or its failure, when one was taken (the caller releases it). Returns 0, or
 * -1 with sworn_err set.
 */
static int pipeline(struct sworn_signer_proc *p, uint8_t *out, size_t out_len,
                    enum sworn_ipc_type want, uint32_t id, struct slot **slot)
{
    struct slot *s = NULL;
    struct conn *c;
    int64_t limit;
    int rc;

    if (ensure_child(p) < 0)
        return -1;
    /* Full: the places free up as the child answers, or all at once when it is retired. */
    while (p->n_inflight == SWORN_SIGNER_PROC_INFLIGHT_MAX) {
        if (wait_until(p, &p->room, queue_deadline(p)) &&
            p->n_inflight == SWORN_SIGNER_PROC_INFLIGHT_MAX)
            return retire_err(p, "no place in the pipeline came free");
        if (ensure_child(p) < 0)
            return -1;
    }
    c = p->conn;
    if (id == 0) {
        id = next_id(p);
        put_be32(out + 4, id);
    } else if (find_slot(p, c, id) != NULL) {
        return sworn_err_set(SWORN_ERR_ARG, "signer process: id %lu is outstanding",
                             (unsigned long)id);
    }
    for (size_t i = 0; s == NULL; i++)
        if (p->slots[i].state == SLOT_FREE)
            s = &p->slots[i];
    s->state = SLOT_WAITING;
    s->id = id;
    s->want = want;
    s->conn = c;
    p->n_inflight++;
    if (p->n_waiting++ == 0)
        p->head_since = sworn_ipc_deadline(0); /* an idle child starts on this one */
    /* Write without the lock, so that replies keep flowing while a large frame waits for room:
     * the socket fills only while the child signs what is ahead. */
    limit = queue_deadline(p);
    c->users++;
    (void)pthread_mutex_unlock(&p->lock);
    (void)pthread_mutex_lock(&p->wlock);
    /* Retired meanwhile, the socket is shut down: the write fails at once (EPIPE), and the
     * descriptor stays open while this thread holds a use of it. */
    rc = sworn_ipc_write_all(c->fd, out, out_len, limit);
    (void)pthread_mutex_unlock(&p->wlock);
    (void)pthread_mutex_lock(&p->lock);
    if (rc < 0 && !c->dead)
        (void)retire_err(p, sworn_err_msg()); /* fails s too: a partial frame ends the stream */
    conn_put(c);
    /* Wait for the reply; read when nobody else does. A follower's own bound is a safety net:
     * the leader's deadline retires a stalled child first. */
    limit = queue_deadline(p);
    while (s->state == SLOT_WAITING) {
        if (!p->leading)
            lead_once(p, c);
        else if (wait_until(p, &s->wake, limit) && s->state == SLOT_WAITING)
            (void)retire_err(p, "no reply within the deadlines of the requests ahead");
    }
    /* Replies already read and buffered go to their callers now, before the reading is handed
     * on: no thread is woken just to find them. (c itself may be gone by now: once s was
     * answered this thread held no use of it, and the child may have been retired since.) */
    while (!p->leading && p->conn != NULL && sworn_ipc_reader_ready(&p->conn->in))
        lead_once(p, p->conn);
    if (!p->leading)
        pass_lead(p);
    *slot = s;
    if (s->state == SLOT_DONE)
        return 0;
    sworn_err_set(s->code, "%s", s->why);
    return -1;
}

/* Give a slot back (lock held). */
static void release(struct sworn_signer_proc *p, struct slot *s)
{
    s->state = SLOT_FREE;
    s->conn = NULL;
    p->n_inflight--;
    (void)pthread_cond_signal(&p->room);
}

/* Encode req with id 0 (pipeline sets it) and run it. As pipeline. */
static int request(struct sworn_signer_proc *p, const struct sworn_ipc_msg *req,
                   enum sworn_ipc_type want, struct slot **slot)
{
    uint8_t out[SWORN_IPC_FRAME_MAX];
    struct sworn_ipc_msg m = *req;
    long n;

    m.id = 1; /* a placeholder the encoder accepts; pipeline writes the real one */
    n = sworn_ipc_encode(&m, out, sizeof(out));
    if (n < 0)
        return -1;
    put_be32(out + 4, 0);
    return pipeline(p, out, (size_t)n, want, 0, slot);
}

/*
 * Turn a reply's non-zero status into this thread's error (the child's code and message). A
 * device failure also retires the child, which exits by itself anyway, failing whatever else was
 * outstanding on it. Returns 0 for status 0.
 */
static int child_error(struct sworn_signer_proc *p, const struct slot *s)
{
    const struct sworn_ipc_msg *resp = &s->reply;

    if (resp->status == SWORN_OK)
        return 0;
    sworn_err_set(resp->status, "signer process: %.*s", (int)resp->data_len,
                  (const char *)resp->data);
    if (resp->status == SWORN_ERR_IO) {
        char why[SWORN_ERR_MSG_MAX];

        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        if (p->conn == s->conn)
            retire(p, why);
        sworn_err_set(SWORN_ERR_IO, "%s", why);
    }
    return -1;
}

/*
 * Start a new child and wait for its INFO_RESP (lock held; there is no current child, and
 * nothing is outstanding). On success it is the current child; on failure nothing is left
 * running and -1 is returned with sworn_err set.
 */
static int spawn(struct sworn_signer_proc *p)
{
    struct sworn_ipc_msg req = {.type = SWORN_IPC_INFO_REQ, .id = 1}, resp;
    int64_t deadline = sworn_ipc_deadline((int)p->start_timeout_ms);
    struct conn *c;
    int fd = -1, rc;

    if (p->launcher.start != NULL) {
        if (p->launcher.start(p->launcher.arg, &fd, &p->pid) < 0) {
            p->pid = -1;
            return -1;
        }
    } else if (sworn_signer_launch(&p->cfg, &p->launch, &fd, &p->pid, &p->pidfd) < 0) {
        return -1;
    }
    c = conn_new(fd, p->pid);
    if (c == NULL) {
        kill_current(p);
        return -1;
    }
    /* Nobody else sees this child before it answers: no pipeline yet, the lock is kept. */
    p->conn = c;
    if (++p->last_id == 0)
        p->last_id = 1;
    req.id = p->last_id;
    if (sworn_ipc_send(c->fd, &req, deadline) < 0)
        return retire_err(p, sworn_err_msg());
    rc = sworn_ipc_reader_next(&c->in, c->fd, &resp, deadline);
    if (rc == 1)
        return retire_err(p, "it closed the socket");
    if (rc < 0)
        return retire_err(p, sworn_err_msg());
    if (resp.type != SWORN_IPC_INFO_RESP || resp.id != req.id) {
        char why[128];

        snprintf(why, sizeof(why), "unexpected reply (type %d, id %lu; wanted INFO_RESP, id %lu)",
                 (int)resp.type, (unsigned long)resp.id, (unsigned long)req.id);
        return retire_err(p, why);
    }
    if (resp.status != SWORN_OK) {
        char why[SWORN_ERR_MSG_MAX];

        snprintf(why, sizeof(why), "signer process: %.*s", (int)resp.data_len,
                 (const char *)resp.data);
        /* A signer that could not open its key exits by itself once it has said so, with a
         * status that tells its launcher why (a refused PIN: launch.h); a launcher's stop would
         * kill it first and lose that. Our own child is reaped as always. */
        if (p->launcher.start != NULL)
            p->pid = -1;
        retire(p, why);
        return sworn_err_set(resp.status, "%s", why);
    }
    if (p->spki_len == 0) {
        memcpy(p->spki, resp.data, resp.data_len);
        p->spki_len = resp.data_len;
        p->alg = resp.alg;
        p->software_held = resp.software_held;
    } else if (resp.data_len != p->spki_len || memcmp(resp.data, p->spki, p->spki_len) != 0 ||
               resp.alg != p->alg || resp.software_held != p->software_held) {
        retire(p, "a different key");
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "signer process: the restarted child holds a different key than the "
                             "first one");
    }
    return 0;
}

/*
 * Make sure there is a live child (lock held): replace one that died while idle, and start one
 * after a failure, unless the backoff of a failed start says not yet.
 */
static int ensure_child(struct sworn_signer_proc *p)
{
    int64_t now;

    reap_leftovers(p);
    if (p->conn != NULL && p->n_inflight == 0 && sworn_ipc_reader_buffered(&p->conn->in) == 0) {
        struct pollfd pfd = {.fd = p->conn->fd, .events = POLLIN, .revents = 0};

        /* An idle child never writes: readable means it closed the socket (it died) or sent
         * something unasked, and either way it is done. */
        int r = poll(&pfd, 1, 0);

        if (r > 0 || (r < 0 && errno != EINTR))
            retire(p, "it died or wrote while idle");
    } else if (p->conn != NULL && p->n_inflight == 0) {
        retire(p, "it sent a reply nobody asked for");
    }
    if (p->conn != NULL)
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

/* The mutexes and condition variables; the waits use CLOCK_MONOTONIC, as the deadlines do. */
static int init_sync(struct sworn_signer_proc *p)
{
    pthread_condattr_t attr;
    size_t n = 0;
    int ok;

    if (pthread_condattr_init(&attr) != 0)
        return sworn_err_set(SWORN_ERR_NOMEM, "signer process: cannot create its condition");
    ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
         pthread_mutex_init(&p->lock, NULL) == 0;
    if (ok && pthread_mutex_init(&p->wlock, NULL) != 0) {
        (void)pthread_mutex_destroy(&p->lock);
        ok = 0;
    }
    if (ok && pthread_cond_init(&p->room, &attr) != 0) {
        (void)pthread_mutex_destroy(&p->wlock);
        (void)pthread_mutex_destroy(&p->lock);
        ok = 0;
    }
    while (ok && n < SWORN_SIGNER_PROC_INFLIGHT_MAX &&
           pthread_cond_init(&p->slots[n].wake, &attr) == 0)
        n++;
    if (ok && n < SWORN_SIGNER_PROC_INFLIGHT_MAX) {
        while (n > 0)
            (void)pthread_cond_destroy(&p->slots[--n].wake);
        (void)pthread_cond_destroy(&p->room);
        (void)pthread_mutex_destroy(&p->wlock);
        (void)pthread_mutex_destroy(&p->lock);
        ok = 0;
    }
    (void)pthread_condattr_destroy(&attr);
    if (!ok)
        return sworn_err_set(SWORN_ERR_NOMEM, "signer process: cannot create its mutexes");
    return 0;
}

static void destroy_sync(struct sworn_signer_proc *p)
{
    for (size_t i = 0; i < SWORN_SIGNER_PROC_INFLIGHT_MAX; i++)
        (void)pthread_cond_destroy(&p->slots[i].wake);
    (void)pthread_cond_destroy(&p->room);
    (void)pthread_mutex_destroy(&p->wlock);
    (void)pthread_mutex_destroy(&p->lock);
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
    SWORN_GUARD(init_sync(p));
    locked = 1;
    SWORN_GUARD(spawn(p));
    *out = p;
    return 0;
fail:
    if (p != NULL) {
        retire(p, "start failed");
        for (size_t i = 0; i < p->n_unreaped; i++)
            (void)reap(p->unreaped[i], -1);
        if (locked)
            destroy_sync(p);
        free_proc(p);
    }
    return -1;
}

int sworn_signer_proc_sign(struct sworn_signer_proc *p, enum sworn_sign_purpose purpose,
                           const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                           size_t *sig_len)
{
    struct sworn_ipc_msg req = {.type = SWORN_IPC_SIGN_REQ};
    struct slot *s = NULL;
    int rc = -1;

    if (!sworn_ipc_purpose_allowed((unsigned)purpose))
        return sworn_err_set(SWORN_ERR_ARG, "signer process: unknown purpose %d", (int)purpose);
    if (msg == NULL || len == 0 || len > SWORN_SIGNER_MSG_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "signer process: message of %zu bytes (1..%d)", len,
                             SWORN_SIGNER_MSG_MAX);
    req.purpose = purpose;
    req.data = msg;
    req.data_len = len;
    if (lock(p) < 0)
        return -1;
    if (request(p, &req, SWORN_IPC_SIGN_RESP, &s) < 0 || child_error(p, s) < 0)
        goto out;
    if (s->reply.data_len > cap) {
        sworn_err_set(SWORN_ERR_RANGE, "signer process: a %zu-byte signature for %zu bytes of room",
                      s->reply.data_len, cap);
        goto out;
    }
    memcpy(sig, s->reply.data, s->reply.data_len);
    *sig_len = s->reply.data_len;
    rc = 0;
out:
    if (s != NULL)
        release(p, s);
    unlock(p);
    return rc;
}

int sworn_signer_proc_health(struct sworn_signer_proc *p)
{
    struct sworn_ipc_msg req = {.type = SWORN_IPC_HEALTH_REQ};
    struct slot *s = NULL;
    int rc = -1;

    if (lock(p) < 0)
        return -1;
    if (request(p, &req, SWORN_IPC_HEALTH_RESP, &s) == 0 && child_error(p, s) == 0)
        rc = 0;
    if (s != NULL)
        release(p, s);
    unlock(p);
    return rc;
}

int sworn_signer_proc_send_raw(struct sworn_signer_proc *p, const uint8_t *bytes, size_t len,
                               enum sworn_ipc_type want, uint32_t id)
{
    uint8_t *copy;
    struct slot *s = NULL;
    int rc = -1;

    if (len == 0 || id == 0 ||
        (want != SWORN_IPC_SIGN_RESP && want != SWORN_IPC_INFO_RESP &&
         want != SWORN_IPC_HEALTH_RESP))
        return sworn_err_set(SWORN_ERR_ARG, "signer process: raw bytes need a reply type and id");
    copy = malloc(len);
    if (copy == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "signer process: out of memory");
    memcpy(copy, bytes, len);
    if (lock(p) < 0) {
        free(copy);
        return -1;
    }
    if (pipeline(p, copy, len, want, id, &s) == 0)
        rc = 0;
    if (s != NULL)
        release(p, s);
    unlock(p);
    free(copy);
    return rc;
}

unsigned sworn_signer_proc_outstanding(struct sworn_signer_proc *p)
{
    unsigned n;

    if (lock(p) < 0)
        return 0;
    n = p->n_inflight;
    unlock(p);
    return n;
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
    if (p->conn != NULL) {
        /* EOF lets the child close its session and log out of the HSM before it exits. Nothing
         * is outstanding: stop runs alone. */
        (void)close(p->conn->fd);
        free(p->conn);
        p->conn = NULL;
        if (p->pid > 0 && reap(p->pid, (int)p->timeout_ms)) {
            p->pid = -1;
        }
    }
    retire(p, "stopped");
    for (size_t i = 0; i < p->n_unreaped; i++)
        (void)reap(p->unreaped[i], -1);
    destroy_sync(p);
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
