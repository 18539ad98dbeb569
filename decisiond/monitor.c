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
#include "vault.h"

#define LISTEN_BACKLOG 128
#define SIGNER_LINE_MAX 1024 /* a line of the signer's stderr, as logged (longer ones are cut) */
#define SIGNER_STOP_WAIT_MS 2000 /* after the engine ended: the signer's own orderly exit */

extern char **environ;

struct monitor {
    struct sworn_dconfig *cfg;
    struct sworn_dconfig_users users;
    struct sworn_signer_config sc;
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    char self[PATH_MAX];
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

/* Bind a listening Unix stream socket at path, replacing a stale socket (never another file). */
static int bind_unix(const char *path, int *out)
{
    struct sockaddr_un sun;
    struct stat st;
    mode_t old_mask;
    int fd, rc;

    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sun.sun_path))
        return sworn_err_set(SWORN_ERR_ARG, "socket path %s is too long", path);
    memcpy(sun.sun_path, path, strlen(path));
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return sworn_err_set(SWORN_ERR_ARG, "%s exists and is not a socket", path);
        if (unlink(path) != 0)
            return sworn_err_set(SWORN_ERR_IO, "unlink %s: %s", path, strerror(errno));
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "socket: %s", strerror(errno));
    /* Anyone may connect; SO_PEERCRED decides who is served (and every refusal is recorded). The
     * socket is made 0666 by the umask at bind: a chmod by path after it would follow whatever
     * a writer of the folder put there in between (a link to /etc/shadow). */
    old_mask = umask(0111);
    rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
    (void)umask(old_mask);
    if (rc != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        sworn_err_set(SWORN_ERR_IO, "listen on %s: %s", path, strerror(errno));
        (void)close(fd);
        return -1;
    }
    *out = fd;
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
                        int adm)
{
    char *argv[8];
    int sv[2], argc = 0;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return sworn_err_set(SWORN_ERR_IO, "socketpair: %s", strerror(errno));
    argv[argc++] = m->self;
    argv[argc++] = (char *)"--engine";
    argv[argc++] = (char *)"--config";
    argv[argc++] = (char *)config;
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
            a = fcntl(adm, F_DUPFD, 10);

        if (ch < 0 || d < 0 || a < 0 || place(ch, D_ENGINE_FD_MONITOR) < 0 ||
            place(d, D_ENGINE_FD_DECISION) < 0 || place(a, D_ENGINE_FD_ADMIN) < 0 ||
            close_range(D_ENGINE_FD_ADMIN + 1, ~0U, 0) != 0)
            _exit(126);
        if (geteuid() == 0 && m->users.engine_uid != 0 &&
            sworn_drop_privileges(m->users.engine_uid, m->users.engine_gid, NULL) < 0)
            _exit(126);
        /* After the drop (a credential change clears it): the engine dies with the monitor. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
            _exit(126);
        execve(m->self, argv, environ);
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
    sigset_t set;
    int dec = -1, adm = -1, rc = 1;

    m->engine = m->signer = -1;
    m->signer_pidfd = m->chan = m->signer_err = -1;
    /* Separation first: a configuration that would run the signer as root is wrong whatever else
     * it says. */
    if (sworn_dconfig_load(config, &m->cfg) < 0 || sworn_dconfig_check_separation(m->cfg) < 0 ||
        sworn_dconfig_check(m->cfg) < 0 ||
        sworn_dconfig_users(m->cfg, geteuid() == 0, &m->users) < 0) {
        fprintf(stderr, "sworn-decisiond: %s\n", sworn_err_msg());
        goto out;
    }
    if (check_only) {
        rc = check_only_run(m);
        goto out;
    }
    /* The program the monitor runs as the engine is this one: root's alone as signer.program
     * (the checked open of safefile.h, as root), or anyone could change what root starts. */
    if (realpath("/proc/self/exe", m->self) == NULL || check_self(m->self) < 0 ||
        signer_config(m) < 0) {
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
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 || bind_unix(m->cfg->decision_socket, &dec) < 0 ||
        bind_unix(m->cfg->admin_socket, &adm) < 0 ||
        d_seccomp_install(SWORN_SECCOMP_MONITOR, (enum d_seccomp_mode)m->cfg->seccomp_mode,
                          d_seccomp_flags(m->cfg)) < 0 ||
        start_engine(m, config, log_level, dec, adm) < 0) {
        d_log_msg(D_LOG_ERROR, "start_failed", sworn_err_msg());
        goto out;
    }
    /* The engine owns the listeners now. The monitor's filter was installed before the engine
     * started, so the engine and every signer start under it (and add their own). */
    (void)close(dec);
    (void)close(adm);
    dec = adm = -1;
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
    rc = m->engine_status;
out:
    if (dec >= 0)
        (void)close(dec);
    if (adm >= 0)
        (void)close(adm);
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
