/*
 * sworn-signer.c -- the signer process: the only program that holds the key (docs/decisiond.md,
 * "Processes"; relayd's "ca" process). It is exec'd by decisiond's monitor (or by
 * sworn_signer_proc's launcher in tests and benchmarks, signer/launch.h) with its socket on fd 3:
 *
 *   sworn-signer --uri URI [--module PATH] [--pin-file PATH] [--tcti CONF] [--pinned-spki HEX]
 *                [--timeout-ms N] [--uid N --gid N [--chroot DIR]] [--seccomp off|log|enforce]
 *                [--inet] [--die-with-parent]
 *
 * In order:
 *   1. no core dumps, not dumpable; every signal handler default, SIGPIPE ignored, none blocked;
 *      fd 3 must be a socket and nothing above it is open (the launcher closed the rest);
 *   2. opens the key WITH the privileges it started with: reads the PIN file, loads the PKCS#11
 *      module or opens the TPM, logs in (signer.h);
 *   3. locks its memory (lock_memory: what holds the key now, and later mappings where
 *      RLIMIT_MEMLOCK leaves room): a SoftHSM key is in this process's memory;
 *   4. when root and --uid is given: chroots to --chroot when given, drops to uid/gid for good
 *      (common/privdrop.h), not dumpable
 *      again (a credential change resets the flag);
 *   5. installs its own seccomp filter (role SIGNER, common/seccomp.h): no fork, exec, setuid,
 *      bind or accept from here on;
 *   6. answers the first request, INFO_REQ, with the key's algorithm and SPKI, or with the error of
 *      steps 2-5 (and then exits), and serves sign and health requests (ipc.h) until the socket
 *      closes. The engine may send several requests before the first reply (it pipelines them);
 *      they are read as they arrive and answered one at a time, in order, each reply with its
 *      request's id.
 * It never reads anything else: no vault, no policy, no log, no configuration file.
 *
 * Exit status (seen only by the monitor, except --help and --version, common/cli.h): 0 at end of
 * stream, 1 when the key could not be opened or privileges not dropped (told in INFO_RESP), 2 on
 * bad usage, 3 after a device failure (a fresh signer must open the device again, with
 * privilege), 4 when its setup failed, 5 when the token refused the PIN
 * (SWORN_SIGNER_EXIT_PIN_REFUSED: the monitor starts no other signer until the PIN file
 * changes), 6 on a malformed or unexpected frame.
 */
#define _GNU_SOURCE /* close_range */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "encoding.h"
#include "err.h"
#include "ipc.h"
#include "launch.h"
#include "p11module.h"
#include "privdrop.h"
#include "safefile.h"
#include "secretfile.h"
#include "seccomp.h"
#include "signer.h"

/* Sanitizer builds (tests only) reserve terabytes of shadow memory, which cannot be locked. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SIGNER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SIGNER_SANITIZER 1
#endif
#endif

enum signer_exit {
    SIGNER_EXIT_EOF = 0,    /* the engine closed the socket */
    SIGNER_EXIT_OPEN = 1,   /* opening the key or dropping privileges failed (told in INFO_RESP) */
    SIGNER_EXIT_USAGE = 2,  /* bad usage: the shared meaning of 2 (common/cli.h) */
    SIGNER_EXIT_DEVICE = 3, /* a device call failed; a fresh signer must open the device again */
    SIGNER_EXIT_SETUP = 4,  /* descriptors, signals or limits could not be set up */
    SIGNER_EXIT_PIN = SWORN_SIGNER_EXIT_PIN_REFUSED, /* the token refused the PIN: launch.h */
    SIGNER_EXIT_PROTOCOL = 6, /* a malformed or unexpected frame, or the socket failed */
};

static const char usage_text[] =
    "usage: sworn-signer --uri URI [--module PATH] [--pin-file PATH] [--tcti CONF]\n"
    "                    [--pinned-spki HEX] [--timeout-ms N] [--uid N --gid N [--chroot DIR]]\n"
    "                    [--seccomp off|log|enforce] [--inet] [--die-with-parent]\n"
    "       sworn-signer --help | --version\n"
    "The process that holds the signing key. It is started by sworn-decisiond's monitor with\n"
    "its socket on descriptor 3, never by hand (docs/decisiond.md, \"Processes\").\n";

static const char own_exits[] =
    "  (1: the key could not be opened, or the privileges not dropped)\n"
    "  3  a device call failed: a fresh signer must open the device again\n"
    "  4  its setup failed (descriptors, signals, limits)\n"
    "  5  the token refused the PIN\n"
    "  6  a malformed or unexpected frame on its socket\n";

struct signer_args {
    struct sworn_signer_config cfg;
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    uid_t uid;
    gid_t gid;
    const char *chroot_dir;
    int drop;
    const char *seccomp;
    int inet;
    int die_with_parent; /* --die-with-parent: SIGKILL when the monitor dies (launch.h) */
};

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end = NULL;
    unsigned long long v;

    if (s == NULL || s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, struct signer_args *a)
{
    unsigned long long v;

    memset(a, 0, sizeof(*a));
    a->seccomp = "enforce";
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(opt, "--inet") == 0) {
            a->inet = 1;
            continue;
        }
        if (strcmp(opt, "--die-with-parent") == 0) {
            a->die_with_parent = 1;
            continue;
        }
        if (val == NULL)
            return -1;
        i++;
        if (strcmp(opt, "--uri") == 0) {
            a->cfg.uri = val;
        } else if (strcmp(opt, "--module") == 0) {
            a->cfg.module_path = val;
        } else if (strcmp(opt, "--pin-file") == 0) {
            a->cfg.pin_file = val;
        } else if (strcmp(opt, "--tcti") == 0) {
            a->cfg.tcti = val;
        } else if (strcmp(opt, "--pinned-spki") == 0) {
            size_t n = strlen(val);

            if (n % 2 != 0 || n / 2 > sizeof(a->spki) ||
                sworn_hex_decode(val, n, a->spki, n / 2) < 0)
                return -1;
            a->cfg.pinned_spki = a->spki;
            a->cfg.pinned_spki_len = n / 2;
        } else if (strcmp(opt, "--timeout-ms") == 0) {
            if (parse_uint(val, 600000, &v) < 0)
                return -1;
            a->cfg.timeout_ms = (unsigned)v;
        } else if (strcmp(opt, "--uid") == 0) {
            if (parse_uint(val, UINT32_MAX - 1, &v) < 0 || v == 0)
                return -1;
            a->uid = (uid_t)v;
            a->drop = 1;
        } else if (strcmp(opt, "--gid") == 0) {
            if (parse_uint(val, UINT32_MAX - 1, &v) < 0 || v == 0)
                return -1;
            a->gid = (gid_t)v;
        } else if (strcmp(opt, "--chroot") == 0) {
            if (val[0] != '/')
                return -1;
            a->chroot_dir = val;
        } else if (strcmp(opt, "--seccomp") == 0) {
            if (strcmp(val, "off") != 0 && strcmp(val, "log") != 0 && strcmp(val, "enforce") != 0)
                return -1;
            a->seccomp = val;
        } else {
            return -1;
        }
    }
    if (a->cfg.uri == NULL || (a->drop && a->gid == 0) || (a->chroot_dir != NULL && !a->drop))
        return -1;
    return 0;
}

/*
 * Default dispositions for every signal, none blocked, SIGPIPE ignored: a PKCS#11 module may write
 * to a network socket without MSG_NOSIGNAL; our own writes never raise it.
 */
static int setup_signals(void)
{
    struct sigaction sa;
    sigset_t none;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    if (sigemptyset(&sa.sa_mask) != 0)
        return -1;
    /* Errors are expected and harmless here: SIGKILL, SIGSTOP and the C library's internal
     * real-time signals cannot be changed. */
    for (int sig = 1; sig < NSIG; sig++)
        (void)sigaction(sig, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &sa, NULL) != 0)
        return -1;
    if (sigemptyset(&none) != 0 || sigprocmask(SIG_SETMASK, &none, NULL) != 0)
        return -1;
    return 0;
}

/* fd 3 is our socket; nothing above it may be open (a descriptor we did not ask for). */
static int check_fds(void)
{
    struct stat st;

    if (fstat(SWORN_SIGNER_FD, &st) != 0 || !S_ISSOCK(st.st_mode))
        return -1;
    return close_range(SWORN_SIGNER_FD + 1, ~0U, 0) == 0 ? 0 : -1;
}

/* Fill a reply's status and error message from this thread's error slot. */
static void reply_error(struct sworn_ipc_msg *resp, char msg[SWORN_IPC_ERRMSG_MAX + 1])
{
    /* A failure that forgot to set the slot is still a failure; IO makes the engine start over. */
    resp->status = sworn_err_code() == SWORN_OK ? SWORN_ERR_IO : sworn_err_code();
    resp->data_len = sworn_ipc_errmsg_clean(sworn_err_msg(), msg);
    resp->data = (const uint8_t *)msg;
}

/*
 * _exit, not exit: nothing of ours is buffered (the socket is written whole), and a process that
 * is not dumpable cannot run LeakSanitizer's exit-time check in the sanitizer build (it attaches
 * to itself), which would then report a fatal error instead of the exit status.
 */
static _Noreturn void signer_exit(struct sworn_signer *s, int status)
{
    sworn_signer_close(s);
    _exit(status);
}

/*
 * Serve requests on fd until the engine closes it. s is the open key, or NULL when opening failed
 * with (code, msg), which the first INFO_RESP reports before the process exits.
 */
static _Noreturn void serve(int fd, struct sworn_signer *s, enum sworn_err_code code,
                            const char *msg)
{
    /* Static: two frames of the largest size (33 KiB) are kept off the stack. */
    static struct sworn_ipc_reader in;
    uint8_t sig[SWORN_SIGNER_SIG_MAX];
    char err[SWORN_IPC_ERRMSG_MAX + 1];
    int first = 1;

    sworn_ipc_reader_init(&in);
    for (;;) {
        struct sworn_ipc_msg req, resp;
        size_t len = 0;
        int rc;

        /* The engine pipelines its requests (signerproc.h): while we sign, the next ones queue
         * in the socket, and one read takes all that has arrived. They are answered one at a
         * time, in the order they came, each with its own id. */
        rc = sworn_ipc_reader_next(&in, fd, &req, SWORN_IPC_FOREVER);
        if (rc == 1)
            signer_exit(s, SIGNER_EXIT_EOF);
        /* The engine always opens with INFO_REQ; anything else there is as fatal as garbage. */
        if (rc < 0 || (first && req.type != SWORN_IPC_INFO_REQ))
            signer_exit(s, SIGNER_EXIT_PROTOCOL);
        first = 0;
        memset(&resp, 0, sizeof(resp));
        resp.id = req.id;
        sworn_err_clear();
        switch (req.type) {
        case SWORN_IPC_INFO_REQ:
            resp.type = SWORN_IPC_INFO_RESP;
            if (s == NULL) {
                resp.status = code;
                resp.data_len = sworn_ipc_errmsg_clean(msg, err);
                resp.data = (const uint8_t *)err;
            } else {
                resp.alg = sworn_signer_alg(s);
                resp.software_held = sworn_signer_software_held(s) ? 1 : 0;
                resp.data = sworn_signer_spki(s, &resp.data_len);
            }
            break;
        case SWORN_IPC_SIGN_REQ:
            resp.type = SWORN_IPC_SIGN_RESP;
            /* sworn_signer_sign checks the purpose and the message's form once more. */
            if (sworn_signer_sign(s, req.purpose, req.data, req.data_len, sig, sizeof(sig), &len) ==
                0) {
                resp.data = sig;
                resp.data_len = len;
            } else {
                reply_error(&resp, err);
            }
            break;
        case SWORN_IPC_HEALTH_REQ:
            resp.type = SWORN_IPC_HEALTH_RESP;
            if (sworn_signer_health(s) < 0)
                reply_error(&resp, err);
            break;
        case SWORN_IPC_SIGN_RESP:
        case SWORN_IPC_INFO_RESP:
        case SWORN_IPC_HEALTH_RESP:
        default:
            signer_exit(s, SIGNER_EXIT_PROTOCOL);
        }
        /* No deadline: the reply fits the socket buffer, and an engine that stops reading has
         * the monitor kill us anyway. */
        if (sworn_ipc_send(fd, &resp, SWORN_IPC_FOREVER) < 0)
            signer_exit(s, SIGNER_EXIT_PROTOCOL);
        if (s == NULL)
            signer_exit(s, sworn_p11_pin_was_refused() ? SIGNER_EXIT_PIN : SIGNER_EXIT_OPEN);
        /* The device context is suspect. Rebuilding it here would need the PIN file and the
         * device, which this unprivileged process may no longer open; a fresh signer can. */
        if (resp.status == SWORN_ERR_IO)
            signer_exit(s, SIGNER_EXIT_DEVICE);
    }
}

/*
 * Lock the memory that holds the key: called as soon as the key is open, before the drop, so
 * that the PKCS#11 module's or TPM's context and everything else mapped now is locked (root
 * has CAP_IPC_LOCK; pages stay locked across the uid change). Later mappings are locked too
 * (MCL_FUTURE) only when RLIMIT_MEMLOCK leaves room for them after the drop: once the process has
 * no CAP_IPC_LOCK, a locked process's new mappings count against that limit, and one that fails
 * is a failed signature. The monitor raises the limit before the exec where it may (launch.h);
 * where it may not (no CAP_SYS_RESOURCE), the key's memory is still locked, later buffers are not.
 * Without root (development) the lock is tried and its failure is not an error.
 */
static int lock_memory(int will_drop)
{
#ifdef SIGNER_SANITIZER
    (void)will_drop; /* sanitizer builds (tests only): their shadow memory cannot be locked */
    return 0;
#else
    struct rlimit rl;
    int future = 1;

    if (geteuid() != 0) {
        (void)mlockall(MCL_CURRENT); /* best effort within the caller's limit */
        return 0;
    }
    if (will_drop) {
        if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
            return sworn_err_set(SWORN_ERR_IO, "getrlimit: %s", strerror(errno));
        future = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= SWORN_SIGNER_MEMLOCK_MIN;
    }
    if (mlockall(MCL_CURRENT | (future ? MCL_FUTURE : 0)) != 0)
        return sworn_err_set(SWORN_ERR_IO, "mlockall: %s", strerror(errno));
    return 0;
#endif
}

static int install_filter(const struct signer_args *a)
{
    enum sworn_seccomp_mode mode = strcmp(a->seccomp, "off") == 0   ? SWORN_SECCOMP_OFF
                                   : strcmp(a->seccomp, "log") == 0 ? SWORN_SECCOMP_LOG
                                                                    : SWORN_SECCOMP_ENFORCE;

    return sworn_seccomp_install(SWORN_SECCOMP_SIGNER, mode, a->inet ? SWORN_SECCOMP_INET : 0,
                                 NULL) < 0
               ? -1
               : 0;
}

/* Remember the first error of the start-up steps for INFO_RESP. */
static void first_error(enum sworn_err_code *code, char msg[SWORN_IPC_ERRMSG_MAX + 1],
                        const char *what)
{
    char full[SWORN_ERR_MSG_MAX + 64];

    if (*code != SWORN_OK)
        return;
    *code = sworn_err_code() == SWORN_OK ? SWORN_ERR_IO : sworn_err_code();
    snprintf(full, sizeof(full), "%s%s", what, sworn_err_msg());
    sworn_ipc_errmsg_clean(full, msg);
}

int main(int argc, char **argv)
{
    static struct signer_args a;
    struct sworn_signer *s = NULL;
    enum sworn_err_code code = SWORN_OK;
    char msg[SWORN_IPC_ERRMSG_MAX + 1] = "";
    int status;

    /* Before the descriptor checks: --help and --version are for a person at a terminal. */
    if (sworn_cli_standard(argc, argv, "sworn-signer", usage_text, own_exits, &status))
        return status;
    if (sworn_no_dumps() < 0 || setup_signals() < 0)
        signer_exit(NULL, SIGNER_EXIT_SETUP);
    if (parse_args(argc, argv, &a) < 0) {
        fprintf(stderr, "sworn-signer: bad usage (it is started by sworn-decisiond's monitor with "
                        "its socket on fd 3; docs/decisiond.md)\n");
        signer_exit(NULL, SIGNER_EXIT_USAGE);
    }
    if (check_fds() < 0)
        signer_exit(NULL, SIGNER_EXIT_SETUP);
    /* The monitor execs this file through /proc/self/fd/4 (the descriptor the engine measured:
     * signer/launch.h), which leaves "4" as the command name: say what this process is. */
    (void)prctl(PR_SET_NAME, "sworn-signer", 0, 0, 0);
    /* A hung device call is bounded by the engine's deadline (the monitor kills this process),
     * so device calls run inline, without the watchdog's thread handoff. */
    a.cfg.inline_device_calls = 1;
    /* Opened as root before the drop, so the key and PIN files are the user's it drops to, or
     * root's: the root monitor that starts it checked their owners against the configured users
     * (decisiond/config.c, need_secret; docs/configuration.md, "File checks"). Their links,
     * modes and folders are checked here again. */
    if (a.drop)
        sworn_secretfile_allow_owner(SWORN_SAFEFILE_ANYONE);
    if (sworn_signer_open(&a.cfg, &s) < 0)
        first_error(&code, msg, "");
    if (code == SWORN_OK && lock_memory(a.drop) < 0)
        first_error(&code, msg, "cannot lock memory: ");
    /* Drop even when the open failed: nothing from the engine is read with privilege. */
    if (a.drop && geteuid() == 0 && sworn_drop_privileges(a.uid, a.gid, a.chroot_dir) < 0) {
        first_error(&code, msg, "cannot drop privileges: ");
        sworn_signer_close(s);
        s = NULL;
    }
    /* Changing credentials set the dumpable flag back to fs.suid_dumpable, and cleared the
     * parent-death signal: a signer outlives no monitor (not even one stuck in a C_Sign). */
    if (sworn_not_dumpable() < 0 ||
        (a.die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)))
        signer_exit(s, SIGNER_EXIT_SETUP);
    /* From here on: its socket, the device, memory; no fork, exec, setuid, bind or accept. */
    if (install_filter(&a) < 0)
        first_error(&code, msg, "seccomp: ");
    if (code != SWORN_OK) {
        sworn_signer_close(s);
        s = NULL;
    }
    serve(SWORN_SIGNER_FD, s, code, msg);
}
