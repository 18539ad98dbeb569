/*
 * monitor.c -- sworn-decisiond's monitor and the engine's side of its channel (monitor.h).
 */
#define _GNU_SOURCE /* close_range, signalfd, pidfd through syscall */
#include "monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "d_jlog.h"
#include "d_seccomp.h"
#include "encoding.h"
#include "err.h"
#include "launch.h"
#include "policy.h"
#include "privdrop.h"
#include "safefile.h"
#include "unixsock.h"
#include "vault.h"

#include <openssl/evp.h>

#define LISTEN_BACKLOG 128
#define SIGNER_LINE_MAX 1024 /* a line of the signer's stderr, as logged (longer ones are cut) */
#define SIGNER_STOP_WAIT_MS 2000 /* after the engine ended: the signer's own orderly exit */

extern char **environ;

struct monitor {
    struct sworn_dconfig *cfg;
    struct sworn_dconfig_users users;
    struct sworn_signer_config sc;
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    char self[PATH_MAX]; /* the image's path: argv[0] of the engine, nothing more */
    /* What is exec'd, opened once at start (docs/decisiond.md section 6): this image
     * (/proc/self/exe), exec'd as the engine through /proc/self/fd, so the engine runs the very
     * file the monitor runs whatever its path names later; and the signer program, exec'd the
     * same way at every signer start and handed to the engine, which measures it through it. */
    int exe_fd;
    int signer_fd;
    uint8_t signer_sha256[32]; /* of signer_fd's bytes at start: each launch checks them again */
    pid_t engine;
    int engine_status;
    pid_t signer;
    int signer_pidfd;
    int signer_err; /* the read end of the current signer's stderr pipe, or -1 */
    char err_line[SIGNER_LINE_MAX + 1];
    size_t err_len;
    int chan; /* the monitor's end of the engine's channel */
    /* A token refused the PIN of this file (the signer said so by its exit status): no signer is
     * started with it again until the file changes, or the token would count every try until it
     * locks. The file's identity when refused: */
    int pin_refused;
    struct stat pin_refused_st;
};

/* --- sockets ------------------------------------------------------------------------------ */

/* Both sockets' owner, group and mode (config.h), and their folders checked (also for
 * --check-config, which binds nothing). */
static int socket_modes(const struct monitor *m, struct sworn_dconfig_sockmode sm[2])
{
    const char *paths[2] = {m->cfg->decision_socket, m->cfg->admin_socket};

    for (int admin = 0; admin <= 1; admin++) {
        char base[NAME_MAX + 1];
        int dirfd;

        if (sworn_dconfig_socket_mode(m->cfg, admin, geteuid(), getegid(), &sm[admin]) < 0 ||
            sworn_unix_socket_dir(paths[admin], &dirfd, base) < 0)
            return -1;
        (void)close(dirfd);
    }
    return 0;
}

/* --- the signer --------------------------------------------------------------------------- */

static int signer_config(struct monitor *m)
{
    const struct sworn_dconfig *c = m->cfg;

    memset(&m->sc, 0, sizeof(m->sc));
    m->sc.uri = c->signer_key;
    m->sc.module_path = c->signer_module;
    m->sc.pin_file = c->signer_pin_file;
    m->sc.tcti = c->signer_tcti;
    m->sc.timeout_ms = (unsigned)c->signer_timeout_ms;
    if (c->signer_spki_hex != NULL) {
        size_t hex_len = strlen(c->signer_spki_hex), len = hex_len / 2;

        if (hex_len % 2 != 0 || len > sizeof(m->spki) ||
            sworn_hex_decode(c->signer_spki_hex, hex_len, m->spki, len) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "signer.pinned_spki is not a DER SPKI in hex");
        m->sc.pinned_spki = m->spki;
        m->sc.pinned_spki_len = len;
    }
    return 0;
}

/* SHA-256 of the whole regular file open on fd (pread from 0: the offset is the exec's). */
static int hash_program(int fd, uint8_t out[32])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    uint8_t buf[65536];
    unsigned int len = 0;
    off_t off = 0;
    int ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;

    while (ok) {
        ssize_t n = pread(fd, buf, sizeof(buf), off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        ok = EVP_DigestUpdate(ctx, buf, (size_t)n) == 1;
        off += n;
    }
    ok = ok && EVP_DigestFinal_ex(ctx, out, &len) == 1 && len == 32;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : sworn_err_set(SWORN_ERR_IO, "cannot read signer.program to hash it");
}

/* Open what the monitor execs, once (struct monitor: exe_fd, signer_fd). */
static int open_programs(struct monitor *m)
{
    struct stat st;

    m->exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (m->exe_fd < 0 || realpath("/proc/self/exe", m->self) == NULL)
        return sworn_err_set(SWORN_ERR_IO, "/proc/self/exe: %s", strerror(errno));
    /* As root, through the checked open: the descriptor that every signer is exec'd from is the
     * one whose file, owner and folders were checked. */
    if (geteuid() == 0) {
        if (sworn_safefile_open(m->cfg->signer_program, 0, SWORN_SAFEFILE_NOBODY, "signer.program",
                                &m->signer_fd, &st) < 0)
            return -1;
    } else {
        m->signer_fd = open(m->cfg->signer_program, O_RDONLY | O_CLOEXEC);
    }
    if (m->signer_fd < 0 || fstat(m->signer_fd, &st) != 0 || !S_ISREG(st.st_mode))
        return sworn_err_set(SWORN_ERR_IO, "signer.program %s: not a regular file to open",
                             m->cfg->signer_program);
    return hash_program(m->signer_fd, m->signer_sha256);
}

/*
 * The signer program open since start still holds the bytes it held then (the engine measured
 * them through the same descriptor). Only root or the file's owner (root's alone:
 * sworn_dconfig_check) can write it in place; a start with other bytes is refused. 0 or -1.
 */
static int signer_unchanged(struct monitor *m)
{
    uint8_t now[32];

    if (hash_program(m->signer_fd, now) < 0)
        return -1;
    if (memcmp(now, m->signer_sha256, 32) != 0)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "signer.program %s was rewritten since decisiond started and "
                             "measured it: no signer is started from it",
                             m->cfg->signer_program);
    return 0;
}

/* What a signer's exit says: a refused PIN is remembered with its file's identity. */
static void signer_exited(struct monitor *m, int status)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == SWORN_SIGNER_EXIT_PIN_REFUSED &&
        m->cfg->signer_pin_file != NULL && stat(m->cfg->signer_pin_file, &m->pin_refused_st) == 0) {
        m->pin_refused = 1;
        d_log_msg(D_LOG_ERROR, "signer_pin_refused",
                  "the token refused the PIN file's PIN; no signer is started with it again "
                  "until the file changes");
    }
}

/* Whether the PIN file is still the one whose PIN the token refused. */
static int pin_still_refused(struct monitor *m)
{
    struct stat st;

    if (!m->pin_refused)
        return 0;
    if (stat(m->cfg->signer_pin_file, &st) == 0 && st.st_dev == m->pin_refused_st.st_dev &&
        st.st_ino == m->pin_refused_st.st_ino && st.st_size == m->pin_refused_st.st_size &&
        st.st_mtim.tv_sec == m->pin_refused_st.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == m->pin_refused_st.st_mtim.tv_nsec)
        return 1;
    m->pin_refused = 0;
    return 0;
}

/* Log one line of the signer's stderr as a JSON line of the monitor's. */
static void log_signer_line(struct monitor *m)
{
    json_object *f = json_object_new_object();

    m->err_line[m->err_len] = '\0';
    if (f != NULL) {
        json_object_object_add(f, "pid", json_object_new_int64((int64_t)m->signer));
        json_object_object_add(f, "text", json_object_new_string(m->err_line));
    }
    d_log(D_LOG_WARN, "signer_stderr", f);
    m->err_len = 0;
}

/* Read what the signer wrote to its stderr; at end of stream (it exited), close the pipe. */
static void drain_signer_err(struct monitor *m)
{
    char buf[4096];
    ssize_t n;

    while ((n = read(m->signer_err, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n' || m->err_len == SIGNER_LINE_MAX) {
                log_signer_line(m);
                if (buf[i] == '\n')
                    continue;
            }
            m->err_line[m->err_len++] = buf[i];
        }
    }
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        if (m->err_len > 0)
            log_signer_line(m);
        (void)close(m->signer_err);
        m->signer_err = -1;
    }
}

/* Kill the current signer (by pidfd: never a recycled pid) and reap it within a bound. */
static void stop_signer(struct monitor *m, int wait_ms)
{
    struct timespec step = {0, 1000000L};

    if (m->signer <= 0)
        return;
    if (m->signer_pidfd < 0 ||
        syscall(SYS_pidfd_send_signal, m->signer_pidfd, SIGKILL, NULL, 0) != 0)
        (void)kill(m->signer, SIGKILL);
    for (int i = 0; i < wait_ms; i++) {
        int status;
        pid_t r = waitpid(m->signer, &status, WNOHANG);

        if (r == m->signer)
            signer_exited(m, status);
        if (r == m->signer || (r < 0 && errno == ECHILD))
            break;
        (void)nanosleep(&step, NULL); /* a SIGKILLed process ends within microseconds */
    }
    /* Still there (stuck in a driver): the SIGCHLD handler reaps it later. */
    if (m->signer_pidfd >= 0)
        (void)close(m->signer_pidfd);
    m->signer = -1;
    m->signer_pidfd = -1;
}

/* Answer 'S': a fresh signer, its socket sent to the engine. */
static int start_signer(struct monitor *m)
{
    struct sworn_signer_launch_opts lo = {0};
    struct d_monitor_reply reply;
    struct msghdr mh;
    struct iovec iov;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    int fd = -1;
    pid_t pid = -1;
    ssize_t n;

    int err_pipe[2] = {-1, -1};

    stop_signer(m, 200);
    if (m->signer_err >= 0) {
        drain_signer_err(m); /* the last words of the signer just stopped */
        if (m->signer_err >= 0)
            (void)close(m->signer_err);
        m->signer_err = -1;
    }
    memset(&reply, 0, sizeof(reply));
    lo.program = m->cfg->signer_program;
    lo.program_fd = m->signer_fd;
    lo.die_with_parent = 1;
    if (geteuid() == 0 && m->users.signer_uid != 0) {
        lo.uid = m->users.signer_uid;
        lo.gid = m->users.signer_gid;
    }
    lo.seccomp_mode = m->cfg->seccomp_mode;
    lo.inet = (d_seccomp_flags(m->cfg) & D_SECCOMP_INET) != 0;
    if (pin_still_refused(m)) {
        reply.status = SWORN_ERR_ARG;
        snprintf(reply.msg, sizeof(reply.msg),
                 "the token refused the PIN in %s; no signer is started with it again until the "
                 "file changes",
                 m->cfg->signer_pin_file);
    } else if (signer_unchanged(m) < 0) {
        reply.status = sworn_err_code();
        snprintf(reply.msg, sizeof(reply.msg), "%s", sworn_err_msg());
        d_log_msg(D_LOG_ERROR, "signer_not_started", sworn_err_msg());
    } else if (pipe2(err_pipe, O_CLOEXEC) == 0 && (lo.stderr_fd = err_pipe[1]) > 0 &&
               sworn_signer_launch(&m->sc, &lo, &fd, &pid, &m->signer_pidfd) == 0) {
        json_object *f = json_object_new_object();

        if (f != NULL)
            json_object_object_add(f, "pid", json_object_new_int64((int64_t)pid));
        d_log(D_LOG_INFO, "signer_started", f);
        m->signer = pid;
        reply.pid = (int32_t)pid;
        m->signer_err = err_pipe[0];
        err_pipe[0] = -1;
        (void)fcntl(m->signer_err, F_SETFL, O_NONBLOCK);
    } else {
        reply.status = sworn_err_code() == SWORN_OK ? SWORN_ERR_IO : sworn_err_code();
        snprintf(reply.msg, sizeof(reply.msg), "%s", sworn_err_msg());
    }
    memset(&mh, 0, sizeof(mh));
    iov.iov_base = &reply;
    iov.iov_len = sizeof(reply);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (fd >= 0) {
        struct cmsghdr *cm;

        memset(&ctl, 0, sizeof(ctl));
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof(ctl.buf);
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    }
    /* Never blocking: an engine that asks without reading the answers would otherwise stop the
     * monitor here, deaf to signals and to its children's exits. */
    if (err_pipe[0] >= 0)
        (void)close(err_pipe[0]);
    if (err_pipe[1] >= 0)
        (void)close(err_pipe[1]); /* the signer has its copy */
    n = sendmsg(m->chan, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (fd >= 0)
        (void)close(fd); /* the engine has its copy now; the monitor never talks to the signer */
    if (n != (ssize_t)sizeof(reply))
        return sworn_err_set(SWORN_ERR_IO, "monitor: cannot answer the engine: %s",
                             strerror(errno));
    return 0;
}

/* --- the engine --------------------------------------------------------------------------- */

/* Move fd to want in the child (want may be taken by another of ours: they were moved high). */
static int place(int fd, int want)
{
    return fd == want ? (fcntl(fd, F_SETFD, 0) == 0 ? 0 : -1) : (dup2(fd, want) < 0 ? -1 : 0);
}

static int start_engine(struct monitor *m, const char *config, const char *log_level, int dec,
                        int adm, int met)
{
    char *argv[10], exe_path[32], config_hex[2 * SWORN_DCONFIG_HASH_LEN + 1];
    int sv[2], argc = 0;
    pid_t pid;

    /* The engine is this very image, through the descriptor opened at start (its number in the
     * child, D_ENGINE_FD_EXE); the configuration's digest lets the engine refuse to run on other
     * bytes than the monitor read. The descriptor is inherited, not close-on-exec, so that a
     * program that execs its path again (valgrind --trace-children, bench/bench_cpu.c) still
     * finds the file there; the engine closes it first thing (engine_inputs). */
    snprintf(exe_path, sizeof(exe_path), "/proc/self/fd/%d", D_ENGINE_FD_EXE);
    if (sworn_hex_encode(m->cfg->digest, SWORN_DCONFIG_HASH_LEN, config_hex, sizeof(config_hex)) <
        0)
        return -1;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return sworn_err_set(SWORN_ERR_IO, "socketpair: %s", strerror(errno));
    argv[argc++] = m->self;
    argv[argc++] = (char *)"--engine";
    argv[argc++] = (char *)"--config";
    argv[argc++] = (char *)config;
    argv[argc++] = (char *)"--config-sha256";
    argv[argc++] = config_hex;
    if (log_level != NULL) {
        argv[argc++] = (char *)"--log-level";
        argv[argc++] = (char *)log_level;
    }
    argv[argc] = NULL;
    pid = fork();
    if (pid < 0) {
        (void)close(sv[0]);
        (void)close(sv[1]);
        return sworn_err_set(SWORN_ERR_IO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        /* Above every target number first, so that no dup2 below closes one of them. */
        int ch = fcntl(sv[1], F_DUPFD, 10), d = fcntl(dec, F_DUPFD, 10),
            a = fcntl(adm, F_DUPFD, 10), sp = fcntl(m->signer_fd, F_DUPFD, 10),
            ex = fcntl(m->exe_fd, F_DUPFD, 10), mt = met >= 0 ? fcntl(met, F_DUPFD, 10) : -1;

        if (ch < 0 || d < 0 || a < 0 || sp < 0 || ex < 0 || (met >= 0 && mt < 0) ||
            place(ch, D_ENGINE_FD_MONITOR) < 0 || place(d, D_ENGINE_FD_DECISION) < 0 ||
            place(a, D_ENGINE_FD_ADMIN) < 0 || place(sp, D_ENGINE_FD_SIGNER_PROGRAM) < 0 ||
            dup2(ex, D_ENGINE_FD_EXE) < 0 || (mt >= 0 && place(mt, D_ENGINE_FD_METRICS) < 0) ||
            close_range(D_ENGINE_FD_METRICS + (mt >= 0 ? 1 : 0), ~0U, 0) != 0)
            _exit(126);
        if (geteuid() == 0 && m->users.engine_uid != 0 &&
            sworn_drop_privileges(m->users.engine_uid, m->users.engine_gid, NULL) < 0)
            _exit(126);
        /* After the drop (a credential change clears it): the engine dies with the monitor. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
            _exit(126);
        execve(exe_path, argv, environ);
        _exit(127);
    }
    (void)close(sv[1]);
    m->chan = sv[0];
    m->engine = pid;
    return 0;
}

/* --- the loop ----------------------------------------------------------------------------- */

static void reap_children(struct monitor *m, int *engine_done)
{
    for (;;) {
        int status;
        pid_t r = waitpid(-1, &status, WNOHANG);

        if (r <= 0)
            return;
        if (r == m->engine) {
            m->engine_status = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
            m->engine = -1;
            *engine_done = 1;
        } else if (r == m->signer) {
            signer_exited(m, status);
            if (m->signer_pidfd >= 0)
                (void)close(m->signer_pidfd);
            m->signer = -1;
            m->signer_pidfd = -1;
        }
    }
}

static int run(struct monitor *m)
{
    sigset_t set;
    int sfd, done = 0;

    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (sfd < 0)
        return sworn_err_set(SWORN_ERR_IO, "signalfd: %s", strerror(errno));
    while (!done) {
        /* A negative fd is skipped by poll: the channel once closed, no signer's stderr. */
        struct pollfd p[3] = {{.fd = sfd, .events = POLLIN},
                              {.fd = m->chan, .events = POLLIN},
                              {.fd = m->signer_err, .events = POLLIN}};

        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[0].revents & POLLIN) {
            struct signalfd_siginfo si;

            if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                if (si.ssi_signo == SIGCHLD)
                    reap_children(m, &done);
                else if (m->engine > 0)
                    (void)kill(m->engine, (int)si.ssi_signo); /* the engine stops or reloads */
            }
        }
        if (m->signer_err >= 0 && p[2].fd == m->signer_err &&
            (p[2].revents & (POLLIN | POLLHUP | POLLERR)))
            drain_signer_err(m);
        if (m->chan >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            unsigned char cmd;
            ssize_t n = read(m->chan, &cmd, 1);

            if (n == 1 && cmd == D_MONITOR_START_SIGNER) {
                if (start_signer(m) < 0) { /* an answer that cannot leave: channel over */
                    d_log_msg(D_LOG_ERROR, "monitor", sworn_err_msg());
                    if (m->engine > 0)
                        (void)kill(m->engine, SIGKILL);
                    (void)close(m->chan);
                    m->chan = -1;
                }
            } else if (n == 1 && cmd == D_MONITOR_STOP_SIGNER) {
                stop_signer(m, 200);
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else {
                /* End of stream (the engine is ending) or a byte no one sends: channel over. */
                if (n == 1 && m->engine > 0) {
                    d_log_msg(D_LOG_ERROR, "monitor", "unexpected byte from the engine");
                    (void)kill(m->engine, SIGKILL);
                }
                (void)close(m->chan);
                m->chan = -1;
            }
        }
    }
    (void)close(sfd);
    return 0;
}

/* --- main --------------------------------------------------------------------------------- */

/* Load the policy and the vault as the engine will, and say what was found. */
static int check_load(const struct monitor *m)
{
    struct sworn_policy *policy = NULL;
    struct sworn_vault *vault = NULL;
    int rc = 1;

    if (sworn_policy_load_trusted(m->cfg->policy_path, &policy) < 0 ||
        (m->cfg->vault_path != NULL && sworn_vault_load(m->cfg->vault_path, &vault) < 0)) {
        fprintf(stderr, "sworn-decisiond: %s\n", sworn_err_msg());
    } else {
        printf("configuration ok: %s\npolicy ok: %s (%zu rules)\n", m->cfg->path,
               m->cfg->policy_path, sworn_policy_rule_count(policy));
        if (m->cfg->development)
            printf("development: the signer and the engine are not separated by uid\n");
        rc = 0;
    }
    sworn_vault_free(vault);
    sworn_policy_free(policy);
    return rc;
}

/*
 * --check-config: the policy and the vault are loaded by a child that has become the engine's
 * user first, as the engine would load them; the vault never enters the monitor's memory.
 */
static int check_only_run(struct monitor *m)
{
    pid_t pid;
    int status;

    if (geteuid() != 0 || m->users.engine_uid == 0)
        return check_load(m);
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "sworn-decisiond: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        if (sworn_drop_privileges(m->users.engine_uid, m->users.engine_gid, NULL) < 0) {
            fprintf(stderr, "sworn-decisiond: %s\n", sworn_err_msg());
            _exit(1);
        }
        status = check_load(m);
        fflush(NULL);
        _exit(status);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return 1;
    return WEXITSTATUS(status);
}

/* The binary at path (the monitor's own) is what safefile.h accepts, when started as root. */
static int check_self(const char *path)
{
    int fd = -1;

    if (geteuid() != 0)
        return 0;
    if (sworn_safefile_open(path, 0, SWORN_SAFEFILE_NOBODY, "the daemon's binary", &fd, NULL) < 0)
        return -1;
    (void)close(fd);
    return 0;
}

int d_monitor_main(const char *config, const char *log_level, int check_only)
{
    static struct monitor mon;
    struct monitor *m = &mon;
    struct sworn_dconfig_sockmode sm[2];
    sigset_t set;
    int dec = -1, adm = -1, met = -1, rc = 1;

    m->engine = m->signer = -1;
    m->signer_pidfd = m->chan = m->signer_err = -1;
    m->exe_fd = m->signer_fd = -1;
    /* Separation first: a configuration that would run the signer as root is wrong whatever else
     * it says. */
    if (sworn_dconfig_load(config, &m->cfg) < 0 || sworn_dconfig_check_separation(m->cfg) < 0 ||
        sworn_dconfig_check(m->cfg) < 0 ||
        sworn_dconfig_users(m->cfg, geteuid() == 0, &m->users) < 0) {
        fprintf(stderr, "sworn-decisiond: %s\n", sworn_err_msg());
        goto out;
    }
    if (socket_modes(m, sm) < 0) {
        fprintf(stderr, "sworn-decisiond: %s: %s\n", m->cfg->path, sworn_err_msg());
        goto out;
    }
    if (check_only) {
        rc = check_only_run(m);
        goto out;
    }
    /* The programs the monitor runs (the engine is this one) are opened once; as root both must be
     * what the checked open of safefile.h accepts (root's alone, as signer.program), or anyone
     * could change what root starts. */
    if (open_programs(m) < 0 || check_self(m->self) < 0 || signer_config(m) < 0) {
        d_log_msg(D_LOG_ERROR, "start_failed", sworn_err_msg());
        goto out;
    }
    /* Signals go through the signalfd: blocked from here, before any child exists. The engine
     * unblocks its own (exec keeps the mask; libevent's signal events need them delivered). */
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    signal(SIGPIPE, SIG_IGN);
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
        sworn_unix_listen(m->cfg->decision_socket, sm[0].owner, sm[0].group, sm[0].mode,
                          LISTEN_BACKLOG, &dec) < 0 ||
        sworn_unix_listen(m->cfg->admin_socket, sm[1].owner, sm[1].group, sm[1].mode,
                          LISTEN_BACKLOG, &adm) < 0 ||
        (m->cfg->metrics_socket != NULL &&
         sworn_unix_listen(m->cfg->metrics_socket, geteuid(),
                           m->cfg->has_metrics_group ? m->cfg->metrics_gid : getegid(),
                           m->cfg->has_metrics_group ? 0660 : 0600, LISTEN_BACKLOG, &met) < 0) ||
        d_seccomp_install(SWORN_SECCOMP_MONITOR, (enum d_seccomp_mode)m->cfg->seccomp_mode,
                          d_seccomp_flags(m->cfg)) < 0 ||
        start_engine(m, config, log_level, dec, adm, met) < 0) {
        d_log_msg(D_LOG_ERROR, "start_failed", sworn_err_msg());
        goto out;
    }
    /* The engine owns the listeners now. The monitor's filter was installed before the engine
     * started, so the engine and every signer start under it (and add their own). */
    (void)close(dec);
    (void)close(adm);
    if (met >= 0)
        (void)close(met);
    dec = adm = met = -1;
    if (run(m) < 0)
        d_log_msg(D_LOG_ERROR, "monitor", sworn_err_msg());
    if (m->engine > 0) {
        (void)kill(m->engine, SIGKILL);
        (void)waitpid(m->engine, NULL, 0);
        m->engine_status = 1;
    }
    /* The engine is gone, so the signer's socket is at end of stream and it is closing its
     * session; give it that time, then make sure. */
    for (int i = 0; m->signer > 0 && i < SIGNER_STOP_WAIT_MS; i++) {
        struct timespec step = {0, 1000000L};
        pid_t r = waitpid(m->signer, NULL, WNOHANG);

        if (r == m->signer || (r < 0 && errno == ECHILD))
            m->signer = -1;
        else
            (void)nanosleep(&step, NULL);
    }
    stop_signer(m, 200);
    if (m->signer_err >= 0)
        drain_signer_err(m);
    /* The sockets it bound: nobody accepts on them any more (unlink never follows a link). */
    (void)unlink(m->cfg->decision_socket);
    (void)unlink(m->cfg->admin_socket);
    if (m->cfg->metrics_socket != NULL)
        (void)unlink(m->cfg->metrics_socket);
    rc = m->engine_status;
out:
    if (dec >= 0)
        (void)close(dec);
    if (adm >= 0)
        (void)close(adm);
    if (met >= 0)
        (void)close(met);
    if (m->exe_fd >= 0)
        (void)close(m->exe_fd);
    if (m->signer_fd >= 0)
        (void)close(m->signer_fd);
    sworn_dconfig_free(m->cfg);
    return rc;
}

/* --- the engine's side -------------------------------------------------------------------- */

int d_monitor_link_start(void *arg, int *fd, pid_t *pid)
{
    struct d_monitor_link *l = arg;
    struct d_monitor_reply reply;
    unsigned char cmd = D_MONITOR_START_SIGNER;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh;
    struct iovec iov;
    struct pollfd p = {.fd = l->fd, .events = POLLIN};
    struct cmsghdr *cm;
    ssize_t n;
    int got = -1, r;

    if (send(l->fd, &cmd, 1, MSG_NOSIGNAL) != 1)
        return sworn_err_set(SWORN_ERR_IO, "monitor channel: %s", strerror(errno));
    do
        r = poll(&p, 1, (int)l->timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return sworn_err_set(SWORN_ERR_IO, "monitor channel: no answer within %u ms",
                             l->timeout_ms);
    memset(&mh, 0, sizeof(mh));
    memset(&ctl, 0, sizeof(ctl));
    iov.iov_base = &reply;
    iov.iov_len = sizeof(reply);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof(ctl.buf);
    n = recvmsg(l->fd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    cm = CMSG_FIRSTHDR(&mh);
    if (cm != NULL && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
        cm->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&got, CMSG_DATA(cm), sizeof(int));
    if (n != (ssize_t)sizeof(reply) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
        if (got >= 0)
            (void)close(got);
        return sworn_err_set(SWORN_ERR_IO, "monitor channel: a malformed answer");
    }
    reply.msg[D_MONITOR_ERR_MAX] = '\0';
    if (reply.status != 0 || got < 0) {
        if (got >= 0)
            (void)close(got);
        return sworn_err_set(reply.status != 0 ? (enum sworn_err_code)reply.status : SWORN_ERR_IO,
                             "monitor: %s", reply.status != 0 ? reply.msg : "no signer socket");
    }
    *fd = got;
    *pid = (pid_t)reply.pid;
    return 0;
}

void d_monitor_link_stop(void *arg)
{
    struct d_monitor_link *l = arg;
    unsigned char cmd = D_MONITOR_STOP_SIGNER;

    /* Best effort: a monitor that is gone took the signer with it (the engine dies next). */
    (void)send(l->fd, &cmd, 1, MSG_NOSIGNAL);
}
