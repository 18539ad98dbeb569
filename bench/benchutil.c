/*
 * benchutil.c -- see benchutil.h. Moved here from bench_signer.c, bench_quote.c, bench_decisiond.c
 * and bench_proxy.c, which had their own copies.
 */
#define _GNU_SOURCE
#include "benchutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

#define TPM_START_ATTEMPTS 5 /* fresh port pairs to try when another process takes ours */
#define TPM_READY_MS 5000    /* how long swtpm may take to accept connections */
#define POLL_MS 10
#define FD_SCAN_MAX 4096 /* descriptors to close in a child when close_range is missing */
#define LOG_SHOW_MAX 8192

static const char *prog = "bench";
static pid_t main_pid;
static pid_t swtpm_pid;                  /* the running swtpm, or 0 */
static char down_dir[BENCH_PATH_MAX];    /* the dev stack bench_stack_down stops; "" when none */
static char down_script[BENCH_PATH_MAX]; /* its scripts/dev-stack */

/* ---------------------------------------------------------------------------------------------
 * Failing: print the reason and exit 1 (the atexit handler kills swtpm).
 */

_Noreturn void bench_die_lib(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", prog, what, sworn_err_msg());
    exit(1);
}

_Noreturn void bench_die_sys(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
    exit(1);
}

_Noreturn void bench_die_msg(const char *what)
{
    fprintf(stderr, "%s: %s\n", prog, what);
    exit(1);
}

void bench_check_pt(int rc, const char *what)
{
    if (rc != 0) {
        errno = rc;
        bench_die_sys(what);
    }
}

double bench_now(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        bench_die_sys("clock_gettime");
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bench_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void bench_join_path(char out[BENCH_PATH_MAX], const char *dir, const char *name)
{
    int n = snprintf(out, BENCH_PATH_MAX, "%s/%s", dir, name);

    if (n < 0 || n >= BENCH_PATH_MAX)
        bench_die_msg("path too long");
}

void bench_read_small(const char *path, uint8_t *buf, size_t cap, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t n = 0;

    if (fd < 0)
        bench_die_sys(path);
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            bench_die_sys(path);
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == cap - 1)
            bench_die_msg("a file the tools wrote is larger than expected");
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
}

void bench_dump_log(const char *path)
{
    char text[LOG_SHOW_MAX];
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    fprintf(stderr, "---- %s ----\n%s---- end ----\n", path, text);
}

/* ---------------------------------------------------------------------------------------------
 * External tools and swtpm.
 */

pid_t bench_spawn(char *const argv[], const char *log_path, const char *out_path)
{
    int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int out = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : log;
    pid_t pid;

    if (log < 0 || out < 0)
        bench_die_sys(log < 0 ? log_path : out_path);
    pid = fork();
    if (pid == 0) {
        /* Die with the bench: a killed bench must not leave a swtpm holding its ports. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != main_pid)
            _exit(126);
        if (dup2(out, STDOUT_FILENO) < 0 || dup2(log, STDERR_FILENO) < 0)
            _exit(126);
        /* Nothing of ours (a TSS socket to swtpm above all) may stay open in a tool. */
        if (close_range(STDERR_FILENO + 1, ~0u, 0) != 0)
            for (int fd = STDERR_FILENO + 1; fd < FD_SCAN_MAX; fd++)
                close(fd);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (pid < 0)
        bench_die_sys("fork");
    close(log);
    if (out != log)
        close(out);
    return pid;
}

void bench_run(const char *dir, char *const argv[], const char *out_path)
{
    char log[BENCH_PATH_MAX];
    pid_t pid;
    int status = 0;

    bench_join_path(log, dir, "cmd.log");
    pid = bench_spawn(argv, log, out_path);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            bench_die_sys("waitpid");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    fprintf(stderr, "%s: %s failed (status 0x%x%s)\n", prog, argv[0], (unsigned)status,
            WIFEXITED(status) && WEXITSTATUS(status) == 127 ? ": not installed?" : "");
    bench_dump_log(log);
    if (out_path != NULL)
        bench_dump_log(out_path);
    exit(1);
}

/* Only the bench itself kills swtpm, never a child (the signer process leaves with _exit, but a
 * child must not kill the parent's swtpm anyway). */
void bench_swtpm_stop(void)
{
    if (swtpm_pid > 0 && getpid() == main_pid) {
        kill(swtpm_pid, SIGKILL);
        while (waitpid(swtpm_pid, NULL, 0) < 0 && errno == EINTR)
            ;
        swtpm_pid = 0;
    }
}

void bench_init(const char *name)
{
    prog = name;
    main_pid = getpid();
    if (atexit(bench_swtpm_stop) != 0)
        bench_die_msg("atexit failed");
}

/* Bind a loopback TCP socket to port (0: any). Returns it, or -1. OUT: *bound. */
static int bind_loopback(int port, int *bound)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        close(fd);
        return -1;
    }
    *bound = ntohs(a.sin_port);
    return fd;
}

/* A port P with P and P + 1 free now (swtpm's command and control ports). Another process may
 * still take them first: the caller then tries a new pair. */
static int free_port_pair(void)
{
    for (int i = 0; i < 100; i++) {
        int p = 0, q = 0, a = bind_loopback(0, &p), b = -1;

        if (a >= 0 && p < 65535)
            b = bind_loopback(p + 1, &q);
        if (a >= 0)
            close(a);
        if (b >= 0) {
            close(b);
            return p;
        }
    }
    bench_die_msg("no free pair of loopback ports for swtpm");
}

int bench_port_open(unsigned port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        bench_die_sys("socket");
    ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

void bench_swtpm_start(const char *dir, char *tcti, size_t tcti_cap)
{
    char tdir[BENCH_PATH_MAX], state[BENCH_PATH_MAX], state_arg[BENCH_PATH_MAX + 8],
        log[BENCH_PATH_MAX], server[64], ctrl[64];
    char *setup[] = {"swtpm_setup", "--tpm2", "--tpmstate", state, NULL};
    char *swtpm[] = {"swtpm",
                     "socket",
                     "--tpm2",
                     "--tpmstate",
                     state_arg,
                     "--server",
                     server,
                     "--ctrl",
                     ctrl,
                     "--flags",
                     "not-need-init,startup-clear",
                     NULL};
    int port = 0;

    bench_join_path(tdir, dir, "tpm");
    bench_join_path(state, tdir, "state");
    bench_join_path(log, tdir, "swtpm.log");
    if (mkdir(tdir, 0700) != 0 || mkdir(state, 0700) != 0)
        bench_die_sys("mkdir tpm");
    snprintf(state_arg, sizeof(state_arg), "dir=%s", state);
    /* A manufactured TPM 2.0 state; no EK or certificates, which no bench needs (the AK is a
     * primary of the endorsement seed). */
    bench_run(tdir, setup, NULL);
    for (int attempt = 0; attempt < TPM_START_ATTEMPTS && swtpm_pid == 0; attempt++) {
        port = free_port_pair();
        snprintf(server, sizeof(server), "type=tcp,port=%d,bindaddr=127.0.0.1", port);
        snprintf(ctrl, sizeof(ctrl), "type=tcp,port=%d,bindaddr=127.0.0.1", port + 1);
        swtpm_pid = bench_spawn(swtpm, log, NULL);
        for (long waited = 0; swtpm_pid > 0; waited += POLL_MS) {
            int status;
            pid_t r = waitpid(swtpm_pid, &status, WNOHANG);

            if (r == swtpm_pid) { /* its ports were taken: try another pair */
                swtpm_pid = 0;
                break;
            }
            if (r < 0)
                bench_die_sys("waitpid swtpm");
            if (bench_port_open((unsigned)port) && bench_port_open((unsigned)port + 1))
                break;
            if (waited > TPM_READY_MS) {
                bench_dump_log(log);
                bench_die_msg("swtpm does not accept connections");
            }
            bench_sleep_ms(POLL_MS);
        }
    }
    if (swtpm_pid == 0) {
        bench_dump_log(log);
        bench_die_msg("swtpm did not start");
    }
    snprintf(tcti, tcti_cap, "swtpm:host=127.0.0.1,port=%d", port);
}

/* ---------------------------------------------------------------------------------------------
 * /proc and the dev stack.
 */

double bench_proc_cpu(pid_t pid, pid_t *ppid)
{
    char path[64], text[1024];
    unsigned long long ut = 0, st = 0;
    long pp = 0;
    const char *p;
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    /* Fields after the command name (which may hold spaces): state ppid ... utime(14) stime(15). */
    p = strrchr(text, ')');
    if (p == NULL ||
        sscanf(p + 1, " %*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &pp, &ut, &st) != 3)
        return -1;
    if (ppid != NULL)
        *ppid = (pid_t)pp;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

void bench_env_value(const char *text, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);

    out[0] = '\0';
    for (const char *line = text; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) : strlen(line);

        if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == '=') {
            const char *v = line + klen + 1;
            size_t vlen = len - klen - 1;

            if (vlen >= 2 && (v[0] == '"' || v[0] == '\'') && v[vlen - 1] == v[0]) {
                v++;
                vlen -= 2;
            }
            if (vlen >= cap)
                bench_die_msg("a value in stack.env is too long");
            memcpy(out, v, vlen);
            out[vlen] = '\0';
            return;
        }
        line = end != NULL ? end + 1 : NULL;
    }
}

void bench_stack_watch(const char *stack_dir, const char *source_dir)
{
    if (snprintf(down_dir, sizeof(down_dir), "%s", stack_dir) >= (int)sizeof(down_dir) ||
        snprintf(down_script, sizeof(down_script), "%s/scripts/dev-stack", source_dir) >=
            (int)sizeof(down_script)) {
        down_dir[0] = '\0';
        bench_die_msg("the stack's or the source's path is too long");
    }
}

void bench_stack_down(void)
{
    char log[BENCH_PATH_MAX];
    char *argv[] = {down_script, "down", down_dir, NULL};
    struct stat st;
    pid_t pid;

    if (down_dir[0] == '\0' || getpid() != main_pid)
        return;
    /* dev-stack failed before it made the folder: nothing is up (and bench_spawn, which exits
     * when it cannot open its log, must not run from atexit then). */
    if (stat(down_dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
        snprintf(log, sizeof(log), "%s/down.log", down_dir) >= (int)sizeof(log)) {
        down_dir[0] = '\0';
        return;
    }
    pid = bench_spawn(argv, log, NULL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    down_dir[0] = '\0';
}
