/*
 * sandbox_fixture.c -- sworn-run for tests (contract in sandbox_fixture.h).
 */
#define _GNU_SOURCE /* pipe2, posix_openpt's companions */
#include "sandbox_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "stack_fixture.h"

/* ---- programs and folders ---- */

const char *sworn_sbx_run_bin(void)
{
    const char *bin = getenv("SWORN_RUN_BIN");

    return bin != NULL && bin[0] != '\0' ? bin : NULL;
}

int sworn_sbx_can_run(const char *test, const char *why_root)
{
    if (geteuid() != 0) {
        fprintf(stderr, "%s: not root: %s; skipped\n", test, why_root);
        return 0;
    }
    if (sworn_sbx_run_bin() == NULL) {
        fprintf(stderr, "%s: sworn-run is not built (SWORN_RUN_BIN is empty): skipped\n", test);
        return 0;
    }
    return 1;
}

const char *sworn_sbx_probe_bin(void)
{
    return sworn_test_bin("SWORN_PROBE_BIN");
}

int sworn_sbx_exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

char *sworn_sbx_work_new(const char *tag)
{
    char *dir = sworn_test_tmpdir(tag), *dst = sworn_test_path(dir, "sworn-probe");
    size_t len;
    char *bin = sworn_test_read_file(sworn_sbx_probe_bin(), &len);

    assert_int_equal(chmod(dir, 0755), 0);
    sworn_test_write_file(dst, bin, len, 0755);
    free(bin);
    free(dst);
    return dir;
}

void sworn_sbx_remove_tree(const char *path)
{
    const char *argv[] = {"/bin/rm", "-rf", "--one-file-system", path, NULL};
    struct sworn_test_run r = {0};

    if (!sworn_sbx_exists(path))
        return;
    sworn_test_run(argv, NULL, &r);
    sworn_test_run_free(&r);
}

void sworn_sbx_expect_work_returned(char *work)
{
    /* find walks a tree of any depth; -xdev: never into another mount. */
    const char *argv[] = {"find",  work,    "-xdev", "(",      "-uid",  "+999999999", "-o",
                          "-perm", "/6000", ")",     "-print", "-quit", NULL};
    struct sworn_test_run r;
    int kept = sworn_sbx_exists(work);

    if (kept)
        sworn_test_run(argv, NULL, &r);
    if (kept && (r.status != 0 || r.out[0] != '\0')) {
        sworn_sbx_remove_tree(work);
        fail_msg("the kept work folder %s still holds a sandbox uid's or a set-id entry (find: "
                 "status %d): %s",
                 work, r.status, r.out);
    }
    if (kept)
        sworn_test_run_free(&r);
    sworn_sbx_remove_tree(work);
    if (!kept)
        fail_msg("the kept work folder %s is gone", work);
    free(work);
}

/* Whether the folder path has no entry (a folder that cannot be read counts as not empty). */
static int folder_empty(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int empty = d != NULL;

    while (d != NULL && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            empty = 0;
    if (d != NULL)
        closedir(d);
    return empty;
}

/* ---- a sandbox run to its end ---- */

void sworn_sbx_argv(const char **argv, const char *stack_dir, const char *const *options,
                    const char *const *agent)
{
    size_t n = 0;
    int work = 0, keep = 0;

    argv[n++] = sworn_sbx_run_bin();
    if (stack_dir != NULL) {
        argv[n++] = "--stack";
        argv[n++] = stack_dir;
    }
    for (size_t i = 0; options != NULL && options[i] != NULL && n < SWORN_SBX_ARGS_MAX / 2; i++) {
        if (strcmp(options[i], "--work") == 0 && options[i + 1] != NULL)
            work = !folder_empty(options[i + 1]);
        if (strcmp(options[i], "--keep") == 0)
            keep = 1;
        argv[n++] = options[i];
    }
    /* A test's work folder that holds sworn-probe (or anything) is kept: sworn-run removes only a
     * folder that was empty; sworn_sbx_expect_work_returned checks what came back. */
    if (work && !keep)
        argv[n++] = "--keep";
    argv[n++] = "--";
    for (size_t i = 0; agent[i] != NULL && n < SWORN_SBX_ARGS_MAX - 1; i++)
        argv[n++] = agent[i];
    argv[n] = NULL;
}

void sworn_sbx_run(struct sworn_test_run *r, const char *stack_dir, const char *const *options,
                   const char *const *agent)
{
    const char *argv[SWORN_SBX_ARGS_MAX];

    sworn_sbx_argv(argv, stack_dir, options, agent);
    sworn_test_run(argv, NULL, r);
}

void sworn_sbx_expect_status(const struct sworn_test_run *r, int want)
{
    if (r->status != want)
        fail_msg("%s: status %d, expected %d\nstdout:\n%s\nstderr:\n%s", r->cmd, r->status, want,
                 r->out, r->err);
}

int sworn_sbx_has_line(const char *text, const char *line)
{
    size_t len = strlen(line);

    for (const char *p = text; p != NULL && *p != '\0';) {
        if (strncmp(p, line, len) == 0 && (p[len] == '\n' || p[len] == '\0'))
            return 1;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return 0;
}

void sworn_sbx_expect_line(const struct sworn_test_run *r, const char *line)
{
    if (!sworn_sbx_has_line(r->out, line))
        fail_msg("the agent did not print \"%s\"; status %d\nstdout:\n%s\nstderr:\n%s", line,
                 r->status, r->out, r->err);
}

pid_t sworn_sbx_spawn(const char *const *argv, int in, int out, int err)
{
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if ((in >= 0 && dup2(in, 0) < 0) || (out >= 0 && dup2(out, 1) < 0) ||
            (err >= 0 && dup2(err, 2) < 0))
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

int sworn_sbx_reap(pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0)
        assert_int_equal(errno, EINTR);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- a sandbox that runs while the test looks at it ---- */

#define LIVE_MAX 2
static struct sworn_sbx_live *live_open[LIVE_MAX]; /* for sworn_sbx_live_abort_all */

void sworn_sbx_live_start(struct sworn_sbx_live *l, const char *const *argv)
{
    int in[2], out[2], errfd;
    char *tmp = sworn_test_tmpdir("sandbox-live");

    memset(l, 0, sizeof(*l));
    snprintf(l->err, sizeof(l->err), "%s/err", tmp);
    free(tmp);
    assert_int_equal(pipe2(in, O_CLOEXEC), 0);
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    errfd = open(l->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(errfd >= 0);
    l->pid = sworn_sbx_spawn(argv, in[0], out[1], errfd);
    close(in[0]);
    close(out[1]);
    close(errfd);
    l->in = in[1];
    l->out = out[0];
    for (size_t i = 0; i < LIVE_MAX; i++)
        if (live_open[i] == NULL) {
            live_open[i] = l;
            break;
        }
}

static void live_forget(struct sworn_sbx_live *l)
{
    for (size_t i = 0; i < LIVE_MAX; i++)
        if (live_open[i] == l)
            live_open[i] = NULL;
}

/* Wait up to SWORN_SBX_RUN_MS for sworn-run; SIGKILL it after that. Returns its exit status, or
 * -1 when it had to be killed. */
static int live_wait(struct sworn_sbx_live *l)
{
    int pidfd = (int)syscall(SYS_pidfd_open, l->pid, 0), status, killed = 0;

    if (pidfd >= 0) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};

        if (poll(&p, 1, SWORN_SBX_RUN_MS) <= 0) {
            kill(l->pid, SIGKILL);
            killed = 1;
        }
        close(pidfd);
    }
    status = sworn_sbx_reap(l->pid);
    return killed ? -1 : status;
}

/* Remove the error file and its folder. */
static void live_err_drop(struct sworn_sbx_live *l)
{
    char *dir = strdup(l->err);

    assert_non_null(dir);
    unlink(l->err);
    rmdir(dirname(dir));
    free(dir);
}

void sworn_sbx_live_abort_all(void)
{
    for (size_t i = 0; i < LIVE_MAX; i++) {
        struct sworn_sbx_live *l = live_open[i];

        if (l == NULL)
            continue;
        live_open[i] = NULL;
        close(l->in);
        close(l->out);
        (void)live_wait(l);
        live_err_drop(l);
        if (l->work != NULL) {
            sworn_sbx_remove_tree(l->work);
            free(l->work);
            l->work = NULL;
        }
    }
}

const char *sworn_sbx_live_line_within(struct sworn_sbx_live *l, int ms)
{
    static char line[SWORN_SBX_OUT_MAX];
    char *err;

    for (;;) {
        char *nl = memchr(l->buf + l->used, '\n', l->have - l->used);
        struct pollfd p = {.fd = l->out, .events = POLLIN};
        ssize_t n;

        if (nl != NULL) {
            size_t len = (size_t)(nl - (l->buf + l->used));

            memcpy(line, l->buf + l->used, len);
            line[len] = '\0';
            l->used += len + 1;
            return line;
        }
        if (l->have >= sizeof(l->buf) - 1 || poll(&p, 1, ms) <= 0)
            break;
        n = read(l->out, l->buf + l->have, sizeof(l->buf) - 1 - l->have);
        if (n <= 0)
            break;
        l->have += (size_t)n;
        l->buf[l->have] = '\0';
    }
    l->buf[l->have] = '\0';
    err = sworn_test_read_file_opt(l->err, NULL);
    fprintf(stderr, "sworn-run's error output:\n%s", err != NULL ? err : "");
    free(err);
    fail_msg("no line from the sandbox's agent within %d ms; it printed:\n%s", ms, l->buf);
    return NULL;
}

const char *sworn_sbx_live_line(struct sworn_sbx_live *l)
{
    return sworn_sbx_live_line_within(l, SWORN_SBX_RUN_MS);
}

void sworn_sbx_live_write(struct sworn_sbx_live *l, const char *text)
{
    size_t len = strlen(text);

    assert_int_equal(write(l->in, text, len), (ssize_t)len);
}

int sworn_sbx_live_end(struct sworn_sbx_live *l)
{
    int status;
    char *err, *work = l->work;

    live_forget(l);
    l->work = NULL;
    close(l->in);
    status = live_wait(l);
    close(l->out);
    if (status < 0) {
        live_err_drop(l);
        if (work != NULL)
            sworn_sbx_remove_tree(work);
        free(work);
        fail_msg("sworn-run did not end within %d ms after its agent's input closed",
                 SWORN_SBX_RUN_MS);
    }
    err = sworn_test_read_file_opt(l->err, NULL);
    live_err_drop(l);
    if (err != NULL && strstr(err, "Sanitizer") != NULL) {
        if (work != NULL)
            sworn_sbx_remove_tree(work);
        free(work);
        fail_msg("a sanitizer report in sworn-run's error output:\n%s", err);
    }
    free(err);
    if (work != NULL)
        sworn_sbx_expect_work_returned(work);
    return status;
}

/* ---- a sandbox under a terminal ---- */

/* How long a pty run has left of its bound (ms, at least 0). */
static int pty_left(long long deadline)
{
    struct timespec ts;
    long long now;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    return deadline > now ? (int)(deadline - now) : 0;
}

void sworn_sbx_run_under_pty_within(const char *const *argv, int ms, struct sworn_sbx_pty_run *pr)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), slave, out[2], pidfd, excl = 0;
    struct winsize ws = {.ws_row = SWORN_SBX_PTY_ROWS, .ws_col = SWORN_SBX_PTY_COLS};
    struct timespec ts;
    long long deadline;
    size_t have = 0;
    pid_t pid;
    char *name;

    memset(pr, 0, sizeof(*pr));
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    name = ptsname(master);
    assert_non_null(name);
    slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC); /* ours: to read its settings */
    assert_true(slave >= 0);
    assert_int_equal(tcgetattr(slave, &pr->before), 0);
    pr->before.c_lflag |= ECHO | ICANON;
    assert_int_equal(tcsetattr(slave, TCSANOW, &pr->before), 0);
    assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
    assert_int_equal(ioctl(slave, TIOCGWINSZ, &pr->ws_before), 0);
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    fflush(stdout);
    fflush(stderr);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    deadline = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + ms;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int tty;

        if (setsid() < 0 || (tty = open(name, O_RDWR)) < 0 || ioctl(tty, TIOCSCTTY, 0) != 0 ||
            dup2(tty, 0) < 0 || dup2(out[1], 1) < 0 || dup2(tty, 2) < 0)
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    /* Its output to its end, within the bound (a command that hangs holds the pipe open). */
    for (;;) {
        struct pollfd p = {.fd = out[0], .events = POLLIN};
        int r = poll(&p, 1, pty_left(deadline));
        ssize_t n;

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n = read(out[0], pr->out + have, sizeof(pr->out) - 1 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += (size_t)n;
        if (have >= sizeof(pr->out) - 1)
            break;
    }
    pr->out[have] = '\0';
    close(out[0]);
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    assert_true(pidfd >= 0);
    {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};

        while (poll(&p, 1, pty_left(deadline)) < 0 && errno == EINTR)
            ;
        if (p.revents == 0) {
            kill(pid, SIGKILL);
            pr->killed = 1;
        }
    }
    close(pidfd);
    pr->status = sworn_sbx_reap(pid);
    if (pr->killed)
        pr->status = -1;
    assert_int_equal(tcgetattr(slave, &pr->after), 0);
    assert_int_equal(ioctl(slave, TIOCGWINSZ, &pr->ws_after), 0);
    assert_int_equal(ioctl(slave, TIOCGEXCL, &excl), 0);
    pr->excl_after = excl != 0;
    /* One byte, without waiting: a terminal whose output is stopped takes none (EAGAIN). Output
     * goes to the master, which nobody reads: a few bytes fit. */
    {
        int flags = fcntl(slave, F_GETFL);

        assert_true(flags >= 0 && fcntl(slave, F_SETFL, flags | O_NONBLOCK) == 0);
        pr->writes_after = write(slave, "\n", 1) == 1;
    }
    close(slave);
    close(master);
}

void sworn_sbx_run_under_pty(const char *const *argv, struct sworn_sbx_pty_run *pr)
{
    sworn_sbx_run_under_pty_within(argv, SWORN_SBX_RUN_MS, pr);
}

/* ---- the record ---- */

const Sworn__V1__Entry *sworn_sbx_newest(struct sworn_stack *s, Sworn__V1__Entry__KindCase kind,
                                         Sworn__V1__AdminResponse **tail, uint64_t *index)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(s, SWORN_SBX_TAIL);

    *tail = r;
    for (size_t i = r->tail->n_entries; i-- > 0;)
        if (r->tail->entries[i]->kind_case == kind) {
            if (index != NULL)
                *index = r->tail->first_index + i;
            return r->tail->entries[i];
        }
    return NULL;
}

uint64_t sworn_sbx_started(struct sworn_stack *s, const char *name, const char *principal,
                           uint32_t *agent_uid)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(s, SWORN_SBX_TAIL);
    uint64_t index = 0;
    int found = 0;

    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];

        if (e->kind_case != SWORN__V1__ENTRY__KIND_SANDBOX_STARTED ||
            strcmp(e->sandbox_started->name, name) != 0)
            continue;
        index = r->tail->first_index + i;
        if (agent_uid != NULL)
            *agent_uid = e->sandbox_started->agent_uid;
        if (principal != NULL)
            assert_string_equal(e->sandbox_started->principal, principal);
        found = 1;
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    if (!found)
        fail_msg("no SandboxStarted entry named %s among the newest %d entries", name,
                 SWORN_SBX_TAIL);
    return index;
}

/* ---- what is left ---- */

void sworn_sbx_ns_name(pid_t pid, const char *ns, char *out, size_t cap)
{
    char path[64];
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/%ld/ns/%s", (long)pid, ns);
    n = readlink(path, out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
}

int sworn_sbx_processes_in(const char *kind, const char *ns)
{
    size_t klen = strlen(kind);
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    assert_true(strncmp(ns, kind, klen) == 0 && strncmp(ns + klen, ":[", 2) == 0);
    while ((e = readdir(d)) != NULL) {
        char name[128];

        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        sworn_sbx_ns_name((pid_t)atol(e->d_name), kind, name, sizeof(name));
        if (strcmp(name, ns) == 0) /* "" when the process is gone meanwhile */
            n++;
    }
    closedir(d);
    return n;
}

int sworn_sbx_processes_named(const char *argv0, const char *arg1)
{
    size_t l0 = strlen(argv0), l1 = strlen(arg1);
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[300], buf[256];
        ssize_t got;
        int fd;

        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* gone meanwhile */
        got = read(fd, buf, sizeof(buf));
        close(fd);
        if (got == (ssize_t)(l0 + l1 + 2) && memcmp(buf, argv0, l0 + 1) == 0 &&
            memcmp(buf + l0 + 1, arg1, l1 + 1) == 0)
            n++;
    }
    closedir(d);
    return n;
}

int sworn_sbx_run_folders_left(struct sworn_stack *s)
{
    char *state = sworn_test_path(s->dir, "sandboxes");
    DIR *d = opendir(state);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        fail_msg("the state folder %s: %s", state, strerror(errno));
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strcmp(e->d_name, "uids") != 0) {
            printf("  left in the state folder: %s\n", e->d_name);
            n++;
        }
    closedir(d);
    free(state);
    return n;
}
