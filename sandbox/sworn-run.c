/*
 * sworn-run -- run one agent in one ephemeral sandbox whose only way out is sworn-proxy
 * (docs/sandbox.md). This file is the supervisor: it reads the configuration, records the
 * sandbox's start, starts its pid 1 in new namespaces, serves the hostlink, and at the end kills
 * what is left, removes every file and records the end. The pieces are r_*.h.
 *
 * Process shape:
 *   sworn-run (the host's pid namespace; root or the caller)
 *     |- relay: accepts the agent's connections to 127.0.0.1:3128, hands them to the proxy
 *     `- pid 1 of the sandbox (new user, mount, net, pid, ipc, uts and cgroup namespaces; the
 *        agent's uid): builds the filesystem and loopback, passes the listeners out, forks the
 *        agent, reaps, and reports the agent's status; when it exits, the kernel kills every
 *        other process of the pid namespace, so reaping it proves the sandbox has no process left
 *          `- the agent: no capabilities, no_new_privs, the deny-list seccomp filter, a new
 *             environment, then exec COMMAND.
 *
 * Exit status: the agent's; 128+N if it died of signal N (or sworn-run was stopped by signal
 * N); 124 on timeout; 125 when sworn-run failed (then, if the start was recorded, the end is
 * recorded as FAILED).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "encoding.h"
#include "cli.h"
#include "err.h"
#include "fileio.h"
#include "frame.h"
#include "privdrop.h"
#include "r_conf.h"
#include "r_env.h"
#include "r_fs.h"
#include "r_limits.h"
#include "r_net.h"
#include "r_record.h"
#include "r_relay.h"
#include "r_seccomp.h"
#include "r_uid.h"
#include "r_work.h"
#include "safefile.h"

#define EXIT_TIMEOUT 124
#define EXIT_FAILURE_RUN 125
#define CA_BUNDLE_MAX (4u * 1024u * 1024u)
#define PROXY_CA_MAX (64u * 1024u)
#define SETUP_TIMEOUT_MS 10000

static void usage(FILE *f)
{
    fprintf(f, "usage: sworn-run [--config FILE | --stack DIR] [--principal P] [--name N]\n"
               "                 [--work DIR] [--keep] [--timeout S] [--memory BYTES]\n"
               "                 [--processes N] -- COMMAND ARGS...\n"
               "Runs COMMAND as an agent in an ephemeral sandbox whose only way out is\n"
               "sworn-proxy (docs/sandbox.md).\n"
               "\n"
               "Exit status (a wrapper, like timeout(1)): the agent's own; 128+N when the\n"
               "agent was killed by signal N; 124 on --timeout; 125 when sworn-run itself\n"
               "failed or was used wrongly. (--help and --version exit 0.)\n");
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;

    fputs("sworn-run: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* --- the run: everything the supervisor and the sandbox's pid 1 share ------------------------ */

struct run {
    struct sworn_run_conf conf;
    int root_mode;
    uint8_t id[SWORN_RUN_ID_LEN];
    char id_hex[2 * SWORN_RUN_ID_LEN + 1];
    uid_t agent_uid; /* outside */
    gid_t agent_gid;
    int uid_lock; /* root mode: the held lock on the agent uid; -1 */
    char run_dir[SWORN_RUN_PATH_MAX];
    char root_dir[SWORN_RUN_PATH_MAX];
    char work_dir[SWORN_RUN_PATH_MAX];
    int work_fd;    /* the work folder, opened once: chowned by it */
    dev_t work_dev; /* and what it is: pid 1 binds only that folder */
    ino_t work_ino;
    mode_t work_mode; /* its mode before, restored with --keep */
    int work_made;    /* we made the work folder */
    int started;      /* pid 1 was cloned: the work folder may hold what an agent made */
    int start_asked;  /* the SandboxStarted answer was waited for (recorded tells how it went) */
    int work_taken;   /* the work folder passed its checks and is the sandbox's: only then does
                       * the end remove it or give it back (a refused one is never touched) */
    uid_t work_owner; /* root mode, --work: its owner before, restored with --keep */
    gid_t work_group;
    char *ca_bundle;
    size_t ca_len;
    struct sworn_run_limits limits;
    struct sworn_run_env env;
    uint64_t start_index;
    int recorded;
    uint64_t t0;
    pid_t pid1;      /* > 0 until reaped */
    int pid1_status; /* its wait status once reaped */
    int ctl[2];      /* SOCK_SEQPACKET: listeners out, the agent's status out */
    int sync[2];     /* pipe: the maps are written */
    /* the end */
    Sworn__V1__SandboxEndReason reason;
    uint32_t code;
    int exit_status;
};

static struct run R; /* one per process; large (the configuration and environment) */

/* The terminal sworn-run was started from, as it was: the agent can change its settings through
 * the descriptors it inherits (stty -echo on its standard input), and they would outlive it. */
static struct {
    struct termios saved[3];
    struct winsize size[3];
    int have[3], have_size[3];
} tty;

static void tty_save(void)
{
    for (int fd = 0; fd < 3; fd++) {
        tty.have[fd] = isatty(fd) && tcgetattr(fd, &tty.saved[fd]) == 0;
        tty.have_size[fd] = tty.have[fd] && ioctl(fd, TIOCGWINSZ, &tty.size[fd]) == 0;
    }
}

/* Settings, window size, output flowing, open to others: as they were (or as a terminal is). */
static void tty_restore(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (!tty.have[fd])
            continue;
        (void)tcsetattr(fd, TCSANOW, &tty.saved[fd]);
        (void)tcflow(fd, TCOON);
        (void)ioctl(fd, TIOCNXCL);
        if (tty.have_size[fd])
            (void)ioctl(fd, TIOCSWINSZ, &tty.size[fd]);
    }
}

/* --- the sandbox's pid 1 and the agent ------------------------------------------------------- */

/* Write text to the file at path (a /proc or cgroup file). 0, or -1 with sworn_err set. */
static int write_text(const char *path, const char *text)
{
    size_t n = strlen(text);
    ssize_t w;
    int fd = open(path, O_WRONLY | O_CLOEXEC);

    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "%s: %s", path, strerror(errno));
    w = write(fd, text, n);
    if (w != (ssize_t)n) {
        int e = errno;
        close(fd);
        return sworn_err_set(SWORN_ERR_IO, "%s: %s", path, strerror(e));
    }
    return close(fd) < 0 ? sworn_err_set(SWORN_ERR_IO, "%s: %s", path, strerror(errno)) : 0;
}

static void child_fail(const char *what) __attribute__((noreturn));
static void child_fail(const char *what)
{
    say("sandbox: %s: %s", what, sworn_err_msg());
    _exit(EXIT_FAILURE_RUN);
}

static int drop_capabilities(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];

    for (int cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            return sworn_err_set(SWORN_ERR_IO, "dropping capability %d: %s", cap, strerror(errno));
    (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    memset(d, 0, sizeof(d));
    if (syscall(SYS_capset, &h, d) < 0)
        return sworn_err_set(SWORN_ERR_IO, "capset: %s", strerror(errno));
    return 0;
}

/* execve COMMAND, searching the sandbox's PATH when it has no '/'. Returns only on failure. */
static void exec_agent(char *const *argv, char *const *envp)
{
    static const char *const path[] = {"/usr/local/bin",  "/usr/bin",  "/bin",
                                       "/usr/local/sbin", "/usr/sbin", "/sbin"};
    char full[4096];
    int saved = ENOENT;

    if (strchr(argv[0], '/') != NULL) {
        execve(argv[0], argv, envp);
        return;
    }
    for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
        if ((size_t)snprintf(full, sizeof(full), "%s/%s", path[i], argv[0]) >= sizeof(full))
            continue;
        execve(full, argv, envp);
        if (errno != ENOENT && errno != ENOTDIR)
            saved = errno;
    }
    errno = saved;
}

static void agent_main(void) __attribute__((noreturn));
static void agent_main(void)
{
    /* sworn-run ignores SIGPIPE, and an ignored signal stays ignored across exec: the agent gets
     * every default back. */
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)signal(sig, SIG_DFL);
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    /* pid 1 is spared by the out-of-memory killer (root mode); the agent is not. Raising the
     * score needs no privilege. */
    if (R.root_mode &&
        (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || write_text("/proc/self/oom_score_adj", "0") < 0))
        child_fail("agent");
    if (sworn_run_limits_apply_rlimits(&R.limits) < 0)
        child_fail("limits");
    if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0)
        for (int fd = 3; fd < 65536; fd++)
            (void)close(fd);
    if (chdir("/work") < 0) {
        sworn_err_set(SWORN_ERR_IO, "chdir /work: %s", strerror(errno));
        child_fail("agent");
    }
    if (drop_capabilities() < 0)
        child_fail("agent");
    if (sworn_run_seccomp_install() != 0)
        child_fail("agent seccomp");
    exec_agent(R.conf.argv, R.env.envp);
    fprintf(stderr, "sworn-run: %s: %s\n", R.conf.argv[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
}

/* Close every descriptor above 2 but a and b. */
static void close_all_but(int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;

    if (lo > 3)
        (void)syscall(SYS_close_range, 3u, (unsigned)lo - 1, 0u);
    if (hi > lo + 1)
        (void)syscall(SYS_close_range, (unsigned)lo + 1, (unsigned)hi - 1, 0u);
    (void)syscall(SYS_close_range, (unsigned)hi + 1, ~0u, 0u);
}

static void pid1_main(void) __attribute__((noreturn));
static void pid1_main(void)
{
    int fds[SWORN_RUN_LISTENERS_MAX];
    size_t nfds = 0;
    char byte, work[64];
    int work_fd, root_fd;
    struct stat st;
    pid_t agent;
    int status;
    sigset_t none;

    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    /* Of sworn-run's descriptors (the admin connection, the uid lock, the work folder, ...) pid 1
     * keeps only its two channels. */
    close_all_but(R.ctl[1], R.sync[0]);
    /* Dumpable for a moment, so that sworn-run can write our uid and gid maps (a process that is
     * not dumpable has its /proc files owned by root); it says when by the ctl socket. */
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || send(R.ctl[1], "D", 1, MSG_NOSIGNAL) != 1)
        _exit(EXIT_FAILURE_RUN);
    /* If sworn-run goes, the sandbox goes with it. Had it gone already, the read below sees the
     * pipe's end instead of its byte (getppid is 0 here: the parent is outside the pid ns). */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        _exit(EXIT_FAILURE_RUN);
    if (read(R.sync[0], &byte, 1) != 1 || byte != 'g')
        _exit(EXIT_FAILURE_RUN); /* sworn-run gave up before the maps were written */
    /* With the identity it was cloned with (root in root mode, the caller otherwise), which can
     * walk to the run folder and the work folder, pid 1 mounts the root and opens both; from
     * then on it names them by descriptor. */
    if (sworn_run_fs_mount_root(R.root_dir, SWORN_RUN_AGENT_UID, SWORN_RUN_AGENT_UID, &root_fd) < 0)
        child_fail("filesystem");
    /* The work folder, opened again in this mount namespace (a bind takes its source from the
     * caller's own namespace) and checked to be the one sworn-run opened and gave the agent. */
    work_fd = open(R.work_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (work_fd < 0 || fstat(work_fd, &st) < 0 || st.st_dev != R.work_dev ||
        st.st_ino != R.work_ino) {
        sworn_err_set(SWORN_ERR_IO, "the work folder %s was replaced", R.work_dir);
        child_fail("filesystem");
    }
    snprintf(work, sizeof(work), "/proc/self/fd/%d", work_fd);
    if (R.root_mode && setgroups(0, NULL) < 0) {
        sworn_err_set(SWORN_ERR_IO, "setgroups: %s", strerror(errno));
        child_fail("identity");
    }
    if (setresgid(SWORN_RUN_AGENT_UID, SWORN_RUN_AGENT_UID, SWORN_RUN_AGENT_UID) < 0 ||
        setresuid(SWORN_RUN_AGENT_UID, SWORN_RUN_AGENT_UID, SWORN_RUN_AGENT_UID) < 0) {
        sworn_err_set(SWORN_ERR_IO, "becoming uid %u: %s", SWORN_RUN_AGENT_UID, strerror(errno));
        child_fail("identity");
    }
    if (sethostname("sandbox", 7) < 0) {
        sworn_err_set(SWORN_ERR_IO, "hostname: %s", strerror(errno));
        child_fail("namespaces");
    }
    if (sworn_run_net_enter(fds, &nfds) < 0)
        child_fail("network");
    if (sworn_run_fs_enter(&R.conf, root_fd, work, R.ca_bundle, R.ca_len) < 0)
        child_fail("filesystem");
    close(work_fd);
    close(root_fd);
    if (sworn_run_fd_send(R.ctl[1], fds, nfds) < 0)
        child_fail("hostlink");
    for (size_t i = 0; i < nfds; i++)
        close(fds[i]); /* only the relay holds them: the agent never sees a listener */
    (void)sworn_not_dumpable();
    /* sworn-run puts pid 1 in its cgroup and reads the SandboxStarted answer while pid 1 builds
     * the above (a cgroup v1 move and a durable append take milliseconds each), and says "c" when
     * both are done: nothing of the agent runs outside the cgroup or before its start is in the
     * log. */
    if (read(R.sync[0], &byte, 1) != 1 || byte != 'c')
        _exit(EXIT_FAILURE_RUN);
    close(R.sync[0]);
    /* Now in its cgroup: that is the cgroup namespace's root. */
    if (unshare(CLONE_NEWCGROUP) < 0) {
        sworn_err_set(SWORN_ERR_IO, "cgroup namespace: %s", strerror(errno));
        child_fail("namespaces");
    }
    /* A session of its own: no controlling terminal, so the agent cannot take over sworn-run's
     * (job control, /dev/tty, signals to its foreground group). */
    if (setsid() < 0) {
        sworn_err_set(SWORN_ERR_IO, "setsid: %s", strerror(errno));
        child_fail("pid 1");
    }

    agent = fork();
    if (agent < 0) {
        sworn_err_set(SWORN_ERR_IO, "fork: %s", strerror(errno));
        child_fail("agent");
    }
    if (agent == 0)
        agent_main();
    /* pid 1 needs nothing more than to wait: it keeps no capability and gets the agent's filter. */
    if (drop_capabilities() < 0 || sworn_run_seccomp_install() != 0)
        child_fail("pid 1");
    for (;;) {
        pid_t p = waitpid(-1, &status, 0);
        if (p == agent) {
            int msg[2] = {'S', status};
            (void)send(R.ctl[1], msg, sizeof(msg), MSG_NOSIGNAL);
            _exit(0);
        }
        if (p < 0 && errno != EINTR)
            _exit(EXIT_FAILURE_RUN);
    }
}

/* --- the supervisor -----------------------------------------------------------------------------
 */

static int write_proc(pid_t pid, const char *file, const char *text)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
    return write_text(path, text);
}

static int write_maps(void)
{
    char map[64];

    if (!R.root_mode)
        SWORN_GUARD(write_proc(R.pid1, "setgroups", "deny"));
    snprintf(map, sizeof(map), "%u %u 1\n", SWORN_RUN_AGENT_UID, (unsigned)R.agent_uid);
    SWORN_GUARD(write_proc(R.pid1, "uid_map", map));
    snprintf(map, sizeof(map), "%u %u 1\n", SWORN_RUN_AGENT_UID, (unsigned)R.agent_gid);
    SWORN_GUARD(write_proc(R.pid1, "gid_map", map));
    return 0;
fail:
    return -1;
}

/* The start's answer: no record, no agent. */
static int record_started(void)
{
    R.start_asked = 1; /* once: the connection is closed after the answer or its failure */
    if (sworn_run_record_start_wait(&R.start_index) < 0)
        return -1;
    R.recorded = 1;
    return 0;
}

/* Root mode: the out-of-memory killer spares pid 1 (oom_score_adj -1000), so that memory
 * pressure in the sandbox kills the agent, whose end pid 1 then reports. Best effort: it needs
 * CAP_SYS_RESOURCE, which some hosts (containers, some microVMs) do not give even to root; pid 1
 * killed all the same is reported as SIGNALED by its signal (conclude). */
static void spare_pid1(void)
{
    if (R.root_mode && write_proc(R.pid1, "oom_score_adj", "-1000") < 0)
        sworn_err_clear();
}

/* pid 1 says "D" once its /proc files are ours to write (bounded). */
static int wait_dumpable(void)
{
    struct pollfd p = {R.ctl[0], POLLIN, 0};
    char byte = 0;
    int r;

    do
        r = poll(&p, 1, SETUP_TIMEOUT_MS);
    while (r < 0 && errno == EINTR);
    if (r <= 0 || recv(R.ctl[0], &byte, 1, 0) != 1 || byte != 'D')
        return sworn_err_set(SWORN_ERR_IO, "the sandbox's pid 1 did not start");
    return 0;
}

/* Root mode: the agent's uid, held until sworn-run exits (r_uid.h). */
static int take_uid(void)
{
    if (sworn_run_uid_take(R.conf.uid_first, R.conf.uid_count, &R.agent_uid, &R.uid_lock) < 0)
        return -1;
    R.agent_gid = (gid_t)R.agent_uid;
    return 0;
}

static int default_state_dir(char *out, size_t cap)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");

    if (R.root_mode)
        snprintf(out, cap, "/run/sworn-run");
    else if (xdg != NULL && xdg[0] == '/' && strlen(xdg) + sizeof("/sworn-run") <= cap)
        snprintf(out, cap, "%s/sworn-run", xdg);
    else
        snprintf(out, cap, "/tmp/sworn-run-%u", (unsigned)getuid());
    return 0;
}

/* The bundle the agent trusts: the system's CAs (when there are) and the proxy's CA. */
static int read_ca_bundle(void)
{
    char *sys = NULL, *proxy = NULL;
    size_t sys_len = 0, proxy_len = 0;
    BIO *bio;
    X509 *x;

    if (sworn_file_read(SWORN_RUN_CA_BUNDLE, CA_BUNDLE_MAX, &sys, &sys_len) < 0 &&
        sworn_err_code() != SWORN_ERR_NOTFOUND)
        return sworn_err_set(sworn_err_code(), "the system's CAs: %s", sworn_err_msg());
    if (sworn_file_read(R.conf.proxy_ca, PROXY_CA_MAX, &proxy, &proxy_len) < 0) {
        free(sys);
        return sworn_err_set(sworn_err_code(), "proxy_ca: %s", sworn_err_msg());
    }
    bio = BIO_new_mem_buf(proxy, (int)proxy_len);
    x = bio != NULL ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    if (x == NULL) {
        free(sys);
        free(proxy);
        return sworn_err_set(SWORN_ERR_FORMAT, "proxy_ca %s: not a PEM certificate",
                             R.conf.proxy_ca);
    }
    X509_free(x);
    R.ca_bundle = malloc(sys_len + proxy_len + 2);
    if (R.ca_bundle == NULL) {
        free(sys);
        free(proxy);
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    }
    if (sys_len > 0)
        memcpy(R.ca_bundle, sys, sys_len);
    R.ca_len = sys_len;
    if (R.ca_len > 0 && R.ca_bundle[R.ca_len - 1] != '\n')
        R.ca_bundle[R.ca_len++] = '\n';
    memcpy(R.ca_bundle + R.ca_len, proxy, proxy_len);
    R.ca_len += proxy_len;
    free(sys);
    free(proxy);
    return 0;
}

/* The run folder (0700, the agent's: its pid 1 builds the root there), the root's mount point,
 * and the work folder. */
static int make_folders(void)
{
    char state[SWORN_RUN_PATH_MAX];
    int state_fd = -1;
    struct stat st;

    if (R.conf.state_dir[0] != '\0')
        snprintf(state, sizeof(state), "%s", R.conf.state_dir);
    else
        default_state_dir(state, sizeof(state));
    SWORN_GUARD(sworn_safefile_opendir(state, 1, "sworn-run's state folder", &state_fd));
    if (R.root_mode)
        SWORN_GUARD(take_uid());
    if ((size_t)snprintf(R.run_dir, sizeof(R.run_dir), "%s/%s", state, R.id_hex) >=
            sizeof(R.run_dir) - sizeof("/root") ||
        (size_t)snprintf(R.root_dir, sizeof(R.root_dir), "%s/root", R.run_dir) >=
            sizeof(R.root_dir))
        SWORN_ENSURE(0, SWORN_ERR_RANGE, "the state folder's path is too long");
    SWORN_ENSURE(mkdirat(state_fd, R.id_hex, 0700) == 0, SWORN_ERR_IO, "%s: %s", R.run_dir,
                 strerror(errno));
    SWORN_ENSURE(mkdir(R.root_dir, 0755) == 0, SWORN_ERR_IO, "%s: %s", R.root_dir, strerror(errno));
    if (R.root_mode)
        SWORN_ENSURE(chown(R.run_dir, R.agent_uid, R.agent_gid) == 0 &&
                         chown(R.root_dir, R.agent_uid, R.agent_gid) == 0,
                     SWORN_ERR_IO, "%s: chown: %s", R.run_dir, strerror(errno));
    if (R.conf.work[0] == '\0') {
        SWORN_ENSURE((size_t)snprintf(R.work_dir, sizeof(R.work_dir), "%s/work", R.run_dir) <
                         sizeof(R.work_dir),
                     SWORN_ERR_RANGE, "the state folder's path is too long");
        SWORN_ENSURE(mkdir(R.work_dir, 0700) == 0, SWORN_ERR_IO, "%s: %s", R.work_dir,
                     strerror(errno));
        R.work_made = 1;
    } else {
        snprintf(R.work_dir, sizeof(R.work_dir), "%s", R.conf.work);
    }
    /* From here on the folder is the one opened now, checked by what it is and named by its
     * descriptor (pid 1 binds it only if what it opens again is the same folder, and the end
     * removes or gives back through the descriptor): a link or another folder put at its path
     * later changes nothing. */
    R.work_fd = open(R.work_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    SWORN_ENSURE(R.work_fd >= 0 && fstat(R.work_fd, &st) == 0, SWORN_ERR_ARG,
                 "--work %s: not a folder (it must exist; a link is refused): %s", R.work_dir,
                 strerror(errno));
    if (!R.work_made)
        SWORN_GUARD(sworn_run_work_check(R.work_fd, R.work_dir, state_fd, &R.conf));
    R.work_owner = st.st_uid;
    R.work_group = st.st_gid;
    R.work_dev = st.st_dev;
    R.work_ino = st.st_ino;
    R.work_mode = st.st_mode & 07777;
    if (R.root_mode)
        SWORN_ENSURE(fchown(R.work_fd, R.agent_uid, R.agent_gid) == 0, SWORN_ERR_IO,
                     "%s: chown: %s", R.work_dir, strerror(errno));
    R.work_taken = 1;
    close(state_fd);
    return 0;
fail:
    if (state_fd >= 0)
        close(state_fd);
    return -1;
}

/* The signals the supervisor handles: the child's end, and the four that stop the sandbox. */
static const int stop_signals[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT};

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct event_base *base = arg;
    int status;

    (void)what;
    if (sig == SIGCHLD) {
        if (waitpid(R.pid1, &status, WNOHANG) == R.pid1) {
            R.pid1_status = status;
            R.pid1 = -1; /* reaped: never signal the pid again */
            event_base_loopbreak(base);
        }
        return;
    }
    if (R.reason == SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_UNSPECIFIED) {
        R.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_STOPPED;
        R.code = (uint32_t)sig;
    }
    if (R.pid1 > 0)
        (void)kill(R.pid1, SIGKILL);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    if (R.reason == SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_UNSPECIFIED)
        R.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_TIMEOUT;
    if (R.pid1 > 0)
        (void)kill(R.pid1, SIGKILL);
}

/* Wait for the listeners from pid 1, bounded. */
static int receive_listeners(int fds[SWORN_RUN_LISTENERS_MAX], size_t *n)
{
    struct pollfd p = {R.ctl[0], POLLIN, 0};
    int r;

    do
        r = poll(&p, 1, SETUP_TIMEOUT_MS);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        return sworn_err_set(SWORN_ERR_IO, "the sandbox was not set up within %d ms",
                             SETUP_TIMEOUT_MS);
    return sworn_run_fd_recv(R.ctl[0], fds, n);
}

/* Serve the hostlink until pid 1 has been reaped. */
static int supervise(void)
{
    struct event *sigev[sizeof(stop_signals) / sizeof(stop_signals[0])] = {NULL};
    sigset_t stops;
    struct event *timer = NULL;
    struct event_base *base = NULL;
    struct sworn_run_relay *relay = NULL;
    Sworn__V1__HostlinkHello h = SWORN__V1__HOSTLINK_HELLO__INIT;
    uint8_t *hello = NULL;
    size_t hello_len = 0;
    int fds[SWORN_RUN_LISTENERS_MAX];
    size_t nfds = 0;
    int rc = -1;

    base = event_base_new();
    SWORN_ENSURE(base != NULL, SWORN_ERR_NOMEM, "event loop: out of memory");
    sigemptyset(&stops);
    for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
        sigev[i] = evsignal_new(base, stop_signals[i], on_signal, base);
        SWORN_ENSURE(sigev[i] != NULL && evsignal_add(sigev[i], NULL) == 0, SWORN_ERR_IO,
                     "signal %d: cannot be handled", stop_signals[i]);
        sigaddset(&stops, stop_signals[i]);
    }
    (void)sigprocmask(SIG_UNBLOCK, &stops, NULL); /* what came during the set-up is handled now */
    /* A child that ended before the handlers existed: check once now. */
    on_signal(SIGCHLD, 0, base);
    if (R.pid1 > 0) {
        if (receive_listeners(fds, &nfds) < 0) {
            (void)kill(R.pid1, SIGKILL);
            goto reap;
        }
        h.principal = R.conf.principal;
        h.sandbox = R.conf.name;
        h.sandbox_start_index = R.start_index;
        h.agent_uid = (uint32_t)R.agent_uid;
        SWORN_GUARD(sworn_frame_pack_hostlink_hello(&h, &hello, &hello_len));
        SWORN_GUARD(sworn_run_relay_start(base, fds, nfds, R.conf.hostlink, hello, hello_len,
                                          R.conf.connections, &relay));
        if (R.conf.wall_ms > 0) {
            struct timeval tv = {(time_t)(R.conf.wall_ms / 1000),
                                 (suseconds_t)(R.conf.wall_ms % 1000) * 1000};
            timer = evtimer_new(base, on_timeout, NULL);
            SWORN_ENSURE(timer != NULL && evtimer_add(timer, &tv) == 0, SWORN_ERR_IO,
                         "the wall-clock limit cannot be set");
        }
        SWORN_ENSURE(event_base_dispatch(base) >= 0, SWORN_ERR_IO, "event loop failed");
    }
reap:
    while (R.pid1 > 0) {
        int status;
        pid_t p = waitpid(R.pid1, &status, 0);
        if (p == R.pid1) {
            R.pid1_status = status;
            R.pid1 = -1;
        } else if (p < 0 && errno != EINTR)
            break;
    }
    rc = 0;
fail:
    if (rc < 0 && R.pid1 > 0) {
        (void)kill(R.pid1, SIGKILL);
        goto reap;
    }
    sworn_run_relay_free(relay);
    free(hello);
    if (timer != NULL)
        event_free(timer);
    for (size_t i = 0; i < sizeof(sigev) / sizeof(sigev[0]); i++)
        if (sigev[i] != NULL)
            event_free(sigev[i]);
    if (base != NULL)
        event_base_free(base);
    return rc;
}

/* From pid 1's report (the agent's wait status) or its absence, the reason and the exit status. */
static void conclude(int supervise_rc)
{
    int msg[2] = {0, 0};
    ssize_t n = -1;
    int recv_errno = EAGAIN;

    /* pid 1 has been reaped, so all it sent is queued, the report last. An agent that ended
     * before the supervisor took the listeners leaves their message (1 byte and descriptors,
     * which a recv without room for them closes) in front of the report: pass over it. */
    for (int i = 0; i < 4; i++) {
        n = recv(R.ctl[0], msg, sizeof(msg), MSG_DONTWAIT);
        recv_errno = errno;
        if (n != 1)
            break;
    }

    if (R.reason == SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_TIMEOUT) {
        R.exit_status = EXIT_TIMEOUT;
        return;
    }
    if (R.reason == SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_STOPPED) {
        R.exit_status = 128 + (int)R.code;
        return;
    }
    if (supervise_rc == 0 && n == (ssize_t)sizeof(msg) && msg[0] == 'S') {
        if (WIFEXITED(msg[1])) {
            R.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED;
            R.code = (uint32_t)WEXITSTATUS(msg[1]);
            R.exit_status = (int)R.code;
            return;
        }
        if (WIFSIGNALED(msg[1])) {
            R.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_SIGNALED;
            R.code = (uint32_t)WTERMSIG(msg[1]);
            R.exit_status = 128 + (int)R.code;
            return;
        }
    }
    /* No report: pid 1 itself was killed (the out-of-memory killer, when even its adjusted
     * score did not spare it), and the whole sandbox with it. */
    if (supervise_rc == 0 && WIFSIGNALED(R.pid1_status)) {
        R.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_SIGNALED;
        R.code = (uint32_t)WTERMSIG(R.pid1_status);
        R.exit_status = 128 + (int)R.code;
        return;
    }
    /* Say why: the exit status alone (125) would not tell a failed set-up from a lost report. */
    if (supervise_rc == 0)
        say("pid 1 ended without the agent's status (pid 1's wait status 0x%x; its report: %zd "
            "bytes%s)",
            (unsigned)R.pid1_status, n,
            n < 0 ? (recv_errno == EAGAIN ? ", none" : ", unreadable") : "");
    R.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_FAILED;
    R.code = 0;
    R.exit_status = EXIT_FAILURE_RUN;
}

/* Remove what the sandbox left on disk; release its cgroup and its uid. */
/* --keep, root mode: what the agent made in the work folder (its uid's) back to the folder's
 * owner, and the folder itself with its mode; a kept run folder (the work folder was its own)
 * back to root. Through the descriptor opened at the start: never a folder put at the path. */
static int give_back_work(void)
{
    if (sworn_run_fs_give_back_fd(R.work_fd, R.work_dir, R.agent_uid, R.work_owner, R.work_group) <
        0)
        return -1;
    if (fchown(R.work_fd, R.work_owner, R.work_group) < 0 || fchmod(R.work_fd, R.work_mode) < 0)
        return sworn_err_set(SWORN_ERR_IO, "%s: %s", R.work_dir, strerror(errno));
    if (R.work_made && chown(R.run_dir, 0, 0) < 0)
        return sworn_err_set(SWORN_ERR_IO, "%s: %s", R.run_dir, strerror(errno));
    return 0;
}

static int clean_up(void)
{
    int rc = 0;

    if (sworn_run_limits_release(&R.limits) < 0) {
        say("cleanup: %s", sworn_err_msg());
        rc = -1;
    }
    if (R.run_dir[0] != '\0' && R.work_taken) {
        if (!R.conf.keep) {
            /* The work folder (the run folder's own, or --work's, which was empty) and the run
             * folder go. */
            if (!R.work_made && sworn_run_fs_remove_fd(R.work_fd, R.work_dir) < 0) {
                say("cleanup: %s", sworn_err_msg());
                rc = -1;
            }
            if (sworn_run_fs_remove(R.run_dir) < 0) {
                say("cleanup: %s", sworn_err_msg());
                rc = -1;
            }
        } else {
            /* --keep: the work folder stays, given back (root mode); everything else of the run
             * folder goes. */
            if (R.root_mode && give_back_work() < 0) {
                say("--keep: %s: giving it back to its owner: %s", R.work_dir, sworn_err_msg());
                rc = -1;
            }
            if (sworn_run_fs_remove(R.work_made ? R.root_dir : R.run_dir) < 0) {
                say("cleanup: %s", sworn_err_msg());
                rc = -1;
            }
            if (rc == 0 && R.started)
                say("--keep: the work folder %s stays", R.work_dir);
        }
    } else if (R.run_dir[0] != '\0' && sworn_run_fs_remove(R.run_dir) < 0) {
        say("cleanup: %s", sworn_err_msg());
        rc = -1;
    }
    if (R.work_fd >= 0)
        close(R.work_fd);
    if (R.uid_lock >= 0)
        close(R.uid_lock);
    return rc;
}

int main(int argc, char **argv)
{
    int start_sent = 0;
    sigset_t stops;
    uint8_t digest[32];
    struct sworn_run_start start;
    int rc;

    R.uid_lock = -1;
    R.work_fd = -1;
    R.ctl[0] = R.ctl[1] = R.sync[0] = R.sync[1] = -1;
    R.pid1 = 0;
    /* OpenSSL without its configuration file: sworn-run needs SHA-256, random bytes and a PEM
     * reader, none of which a system's openssl.cnf should change, and reading it costs start. */
    (void)OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
    sworn_run_conf_init(&R.conf);
    rc = sworn_run_conf_from_args(&R.conf, argc, argv);
    if (rc == 1 || rc == 2) {
        if (rc == 1)
            usage(stdout);
        else
            sworn_cli_print_version("sworn-run");
        return 0;
    }
    if (rc < 0) {
        say("%s", sworn_err_msg());
        usage(stderr);
        return EXIT_FAILURE_RUN;
    }
    if (sworn_no_dumps() < 0) {
        say("%s", sworn_err_msg());
        return EXIT_FAILURE_RUN;
    }
    signal(SIGPIPE, SIG_IGN);
    /* The restore below is one write from the background of the terminal's session: without
     * this, the kernel would stop sworn-run for it (SIGTTOU) when a shell put it there. */
    signal(SIGTTOU, SIG_IGN);
    tty_save();
    /* A stop signal during the set-up waits until the loop handles it (supervise): the sandbox
     * is then killed, cleaned up and its end recorded, never left half made. */
    sigemptyset(&stops);
    for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
        sigaddset(&stops, stop_signals[i]);
    (void)sigprocmask(SIG_BLOCK, &stops, NULL);
    R.root_mode = geteuid() == 0;
    R.agent_uid = getuid();
    R.agent_gid = getgid();
    R.t0 = now_ms();
    if (RAND_bytes(R.id, sizeof(R.id)) != 1) {
        say("no random bytes for the sandbox id");
        return EXIT_FAILURE_RUN;
    }
    (void)sworn_hex_encode(R.id, sizeof(R.id), R.id_hex, sizeof(R.id_hex));
    if (R.conf.name[0] == '\0')
        snprintf(R.conf.name, sizeof(R.conf.name), "run-%.16s", R.id_hex);

    if (sworn_run_conf_digest(&R.conf, digest) < 0 || read_ca_bundle() < 0 ||
        sworn_run_env_build(&R.env, &R.conf) < 0 || make_folders() < 0 ||
        sworn_run_limits_prepare(&R.limits, &R.conf, R.id_hex) < 0)
        goto failed;

    /* The record first: no agent runs that the log does not name. */
    memset(&start, 0, sizeof(start));
    start.conf = &R.conf;
    memcpy(start.id, R.id, sizeof(R.id));
    memcpy(start.config_sha256, digest, sizeof(digest));
    start.enforced_by = sworn_run_limits_name(&R.limits);
    start.agent_uid = R.agent_uid;
    start.isolation = R.root_mode ? "root" : "unprivileged";
    /* Sent now, read before the agent may run: decisiond makes it durable while pid 1 builds. */
    if (sworn_run_record_start_send(&start) < 0)
        goto failed;
    start_sent = 1;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, R.ctl) < 0 ||
        pipe2(R.sync, O_CLOEXEC) < 0) {
        sworn_err_set(SWORN_ERR_IO, "socketpair: %s", strerror(errno));
        goto failed;
    }
    R.pid1 = (pid_t)syscall(SYS_clone,
                            CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID |
                                CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD,
                            NULL, NULL, NULL, NULL);
    if (R.pid1 < 0) {
        sworn_err_set(SWORN_ERR_IO, "new namespaces: %s (does this kernel allow user namespaces?)",
                      strerror(errno));
        goto failed;
    }
    if (R.pid1 == 0)
        pid1_main();
    R.started = 1;
    close(R.ctl[1]);
    close(R.sync[0]);
    /* The maps first ("g": pid 1 builds the sandbox meanwhile), then the cgroup ("c": before
     * pid 1 starts the agent). */
    sworn_err_clear();
    if (wait_dumpable() < 0 || write_maps() < 0 || (spare_pid1(), 0) ||
        write(R.sync[1], "g", 1) != 1 || sworn_run_limits_join(&R.limits, R.pid1) < 0 ||
        record_started() < 0 || write(R.sync[1], "c", 1) != 1) {
        if (sworn_err_code() == SWORN_OK)
            sworn_err_set(SWORN_ERR_IO, "the sandbox's pid 1 went away: %s", strerror(errno));
        (void)kill(R.pid1, SIGKILL);
        (void)waitpid(R.pid1, NULL, 0);
        R.pid1 = 0;
        close(R.sync[1]);
        goto failed;
    }
    close(R.sync[1]);
    rc = supervise();
    if (rc < 0)
        say("%s", sworn_err_msg());
    conclude(rc);
    goto end;

failed:
    say("%s", sworn_err_msg());
    /* A start that was sent and not yet answered may be in the log: learn its index, so that
     * its end is recorded (FAILED) and the record shows no sandbox left running. */
    if (start_sent && !R.start_asked && record_started() < 0)
        say("the start's answer: %s", sworn_err_msg());
    R.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_FAILED;
    R.code = 0; /* FAILED carries no code (a stop signal may have set one) */
    R.exit_status = EXIT_FAILURE_RUN;
end:
    tty_restore();
    /* Files left behind are a failure of the sandbox, whatever the agent's status: the end
     * records FAILED (what was left is in sworn-run's message). */
    if (clean_up() < 0) {
        R.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_FAILED;
        R.code = 0;
        R.exit_status = EXIT_FAILURE_RUN;
    }
    if (R.recorded && sworn_run_record_end(R.conf.admin_socket, R.start_index, R.id, R.reason,
                                           R.code, now_ms() - R.t0) < 0) {
        say("recording the end: %s", sworn_err_msg());
        if (R.exit_status == 0)
            R.exit_status = EXIT_FAILURE_RUN;
    }
    free(R.ca_bundle);
    sworn_run_env_free(&R.env);
    sworn_run_conf_free(&R.conf);
    return R.exit_status;
}
