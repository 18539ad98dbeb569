/*
 * benchutil.c -- see benchutil.h. Moved here from bench_signer.c, bench_quote.c, bench_decisiond.c,
 * bench_proxy.c and bench_run.c, which had their own copies.
 */
#define _GNU_SOURCE
#include "benchutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
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
#include "logstore.h"

#define TPM_START_ATTEMPTS 5 /* fresh port pairs to try when another process takes ours */
#define TPM_READY_MS 5000    /* how long swtpm may take to accept connections */
#define POLL_MS 10
#define FD_SCAN_MAX 4096 /* descriptors to close in a child when close_range is missing */
#define LOG_SHOW_MAX 8192
#define START_ATTEMPTS 5  /* fresh ports to try when another process takes a server's */
#define READY_MS 20000    /* how long a server may take to accept connections */
#define STOP_MS 5000      /* how long a server may take to exit on SIGTERM */
#define MAX_SERVERS 8     /* servers a bench starts itself */
#define MAX_STACK_PIDS 4  /* the stack's daemons to SIGTERM on a signal */
#define STACK_OPTS_MAX 24 /* options of dev-stack up */
#define LINE_MAX_LEN 1024 /* a line bench_last_line reads */

static const char *prog = "bench";
static pid_t main_pid;
static pid_t swtpm_pid;                  /* the running swtpm, or 0 */
static char down_dir[BENCH_PATH_MAX];    /* the dev stack bench_stack_down stops; "" when none */
static char down_script[BENCH_PATH_MAX]; /* its scripts/dev-stack */
/* For the signal handler, which may only kill(): the servers and the stack's daemons. */
static volatile pid_t servers[MAX_SERVERS];
static volatile pid_t stack_pids[MAX_STACK_PIDS];

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

void bench_print_load(void)
{
    FILE *la = fopen("/proc/loadavg", "r");
    char text[128];

    if (la == NULL)
        return;
    if (fgets(text, sizeof(text), la) != NULL)
        printf(", load average %.*s", (int)strcspn(text, " "), text);
    fclose(la);
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

void bench_self_dir(char out[BENCH_PATH_MAX])
{
    ssize_t n = readlink("/proc/self/exe", out, BENCH_PATH_MAX - 1);
    char *slash;

    if (n <= 0)
        bench_die_sys("/proc/self/exe");
    out[n] = '\0';
    slash = strrchr(out, '/');
    if (slash == NULL)
        bench_die_msg("/proc/self/exe is not a path");
    *slash = '\0';
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

void bench_put_text(const char *path, const char *text, mode_t mode)
{
    size_t len = strlen(text);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

    if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) != 0)
        bench_die_sys(path);
}

void bench_make_dir(const char *path, mode_t mode)
{
    if (mkdir(path, mode) != 0)
        bench_die_sys(path);
}

void bench_last_line(const char *path, const char *prefer, char *out, size_t cap)
{
    char line[LINE_MAX_LEN];
    FILE *f = fopen(path, "r");
    int preferred_seen = 0;

    out[0] = '\0';
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        int preferred = prefer != NULL && strncmp(line, prefer, strlen(prefer)) == 0;

        line[strcspn(line, "\n")] = '\0';
        if (line[0] != '\0' && (preferred || !preferred_seen)) {
            size_t n = strlen(line) < cap - 1 ? strlen(line) : cap - 1; /* cut, not an error */

            preferred_seen |= preferred;
            memcpy(out, line, n);
            out[n] = '\0';
        }
    }
    fclose(f);
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

int bench_wait(pid_t pid, const char *what)
{
    int status = 0;

    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            bench_die_sys(what);
    return status;
}

_Noreturn void bench_die_status(const char *name, int status, const char *log, const char *out_path)
{
    fprintf(stderr, "%s: %s failed (status 0x%x%s)\n", prog, name, (unsigned)status,
            WIFEXITED(status) && WEXITSTATUS(status) == 127 ? ": not installed?" : "");
    bench_dump_log(log);
    if (out_path != NULL)
        bench_dump_log(out_path);
    exit(1);
}

void bench_run(const char *dir, char *const argv[], const char *out_path)
{
    char log[BENCH_PATH_MAX];
    int status;

    bench_join_path(log, dir, "cmd.log");
    status = bench_wait(bench_spawn(argv, log, out_path), "waitpid");
    if (status != 0)
        bench_die_status(argv[0], status, log, out_path);
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
    if (atexit(bench_stop_all) != 0)
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

unsigned bench_free_port(void)
{
    int port = 0, fd = bind_loopback(0, &port);

    if (fd < 0)
        bench_die_sys("a free loopback port");
    close(fd);
    return (unsigned)port;
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
 * Servers and nginx.
 */

/* 1 when pid (ours) has exited (reaped), 0 while it runs. */
static int child_exited(pid_t pid, int *status)
{
    pid_t r;

    while ((r = waitpid(pid, status, WNOHANG)) < 0 && errno == EINTR)
        ;
    return r == pid || (r < 0 && errno == ECHILD);
}

/* SIGTERM, wait up to STOP_MS, SIGKILL; reaps. */
static void child_stop(pid_t pid)
{
    double deadline = bench_now() + STOP_MS / 1000.0;
    int status;

    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    while (!child_exited(pid, &status)) {
        if (bench_now() > deadline) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            break;
        }
        bench_sleep_ms(POLL_MS);
    }
}

static void server_add(pid_t pid)
{
    for (int i = 0; i < MAX_SERVERS; i++)
        if (servers[i] == 0) {
            servers[i] = pid;
            return;
        }
    bench_die_msg("too many servers");
}

/* 1 when the file at path holds the word (an error log saying a port was taken). */
static int file_has(const char *path, const char *word)
{
    char text[65536];
    size_t n;
    FILE *f = fopen(path, "r");

    if (f == NULL)
        return 0;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return strstr(text, word) != NULL;
}

pid_t bench_server_start(char *const argv[], const char *name, const char *log,
                         const unsigned *ports, int nports, const char *const *logs, int nlogs)
{
    pid_t pid = bench_spawn(argv, log, NULL);
    double deadline = bench_now() + READY_MS / 1000.0;
    int status = 0;

    for (;;) {
        int up = 1;

        if (child_exited(pid, &status)) {
            for (int i = 0; i < nlogs; i++)
                if (file_has(logs[i], "in use"))
                    return 0;
            bench_dump_log(log);
            for (int i = 0; i < nlogs; i++)
                bench_dump_log(logs[i]);
            fprintf(stderr, "%s: %s exited at start (status 0x%x)\n", prog, name, (unsigned)status);
            exit(1);
        }
        for (int i = 0; i < nports && up; i++)
            up = bench_port_open(ports[i]);
        if (up) {
            server_add(pid);
            return pid;
        }
        if (bench_now() > deadline) {
            kill(pid, SIGKILL);
            bench_dump_log(log);
            fprintf(stderr, "%s: %s did not listen within %d ms\n", prog, name, READY_MS);
            exit(1);
        }
        bench_sleep_ms(POLL_MS);
    }
}

void bench_nginx_prepare(struct bench_nginx *n, const char *dir)
{
    char path[BENCH_PATH_MAX];

    memset(n, 0, sizeof(*n));
    bench_join_path(n->dir, dir, "nginx");
    bench_make_dir(n->dir, 0700);
    bench_join_path(n->www, n->dir, "www");
    bench_make_dir(n->www, 0755);
    bench_join_path(path, n->www, "small.txt");
    bench_put_text(path, BENCH_SMALL_BODY, 0644);
    bench_join_path(path, n->dir, "tmp");
    bench_make_dir(path, 0700);
}

/* nginx.conf for n's ports: the shared lines, then what http writes into the http block. */
static void nginx_conf(const char *conf, const struct bench_nginx *n, unsigned worker_connections,
                       bench_nginx_http *http, const void *arg)
{
    char text[8192];
    const char *d = n->dir;
    int len = snprintf(text, sizeof(text),
                       "master_process off;\n"
                       "pid %s/nginx.pid;\n"
                       "lock_file %s/nginx.lock;\n"
                       "error_log %s/error.log warn;\n"
                       "events { worker_connections %u; }\n"
                       "http {\n"
                       "  access_log off;\n"
                       "  client_body_temp_path %s/tmp/body;\n"
                       "  proxy_temp_path %s/tmp/proxy;\n"
                       "  fastcgi_temp_path %s/tmp/fastcgi;\n"
                       "  uwsgi_temp_path %s/tmp/uwsgi;\n"
                       "  scgi_temp_path %s/tmp/scgi;\n"
                       "  types { text/plain txt; }\n",
                       d, d, d, worker_connections, d, d, d, d, d);
    int more;

    if (len < 0 || (size_t)len >= sizeof(text))
        bench_die_msg("nginx.conf does not fit");
    more = http(text + len, sizeof(text) - (size_t)len, n, arg);
    if (more < 0 || (size_t)more >= sizeof(text) - (size_t)len ||
        (size_t)(len + more) + 2 >= sizeof(text))
        bench_die_msg("nginx.conf does not fit");
    memcpy(text + len + more, "}\n", 3);
    bench_put_text(conf, text, 0600);
}

void bench_nginx_start(struct bench_nginx *n, int tls, unsigned worker_connections,
                       bench_nginx_http *http, const void *arg)
{
    char conf[BENCH_PATH_MAX], log[BENCH_PATH_MAX], err[BENCH_PATH_MAX];
    char *argv[] = {"/usr/sbin/nginx", "-p", n->dir, "-c", conf, "-e", err, "-g",
                    "daemon off;",     NULL};
    const char *logs[] = {err};

    bench_join_path(conf, n->dir, "nginx.conf");
    bench_join_path(log, n->dir, "nginx.out");
    bench_join_path(err, n->dir, "error.log");
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        unsigned ports[2];

        n->http_port = bench_free_port();
        n->https_port = 0;
        if (tls)
            do
                n->https_port = bench_free_port();
            while (n->https_port == n->http_port);
        nginx_conf(conf, n, worker_connections, http, arg);
        /* A fresh error.log: bench_server_start reads it for "in use" (a port taken this time). */
        if (truncate(err, 0) != 0 && errno != ENOENT)
            bench_die_sys(err);
        ports[0] = n->http_port;
        ports[1] = n->https_port;
        n->pid = bench_server_start(argv, "nginx", log, ports, tls ? 2 : 1, logs, 1);
        if (n->pid > 0)
            return;
    }
    bench_die_msg("nginx found its ports taken every time");
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

int bench_stack_up(const char *stack_dir, const char *source_dir, const char *build_dir,
                   char *const opts[], const char *log_path, const char *out_path)
{
    char *argv[STACK_OPTS_MAX + 6];
    int n = 0;

    /* From here on, a stack may be (partly) up: stop it at exit, whatever happens. */
    bench_stack_watch(stack_dir, source_dir);
    argv[n++] = down_script;
    argv[n++] = "up";
    argv[n++] = (char *)stack_dir;
    argv[n++] = "--build";
    argv[n++] = (char *)build_dir;
    for (int i = 0; opts[i] != NULL; i++) {
        if (i >= STACK_OPTS_MAX)
            bench_die_msg("too many options for dev-stack up");
        argv[n++] = opts[i];
    }
    argv[n] = NULL;
    return bench_wait(bench_spawn(argv, log_path, out_path), "waitpid dev-stack");
}

void bench_stack_files(const char *dir, char *stack, char *policy, char *out, char *log)
{
    char sdir[BENCH_PATH_MAX];

    bench_join_path(sdir, dir, "sworn");
    bench_make_dir(sdir, 0700);
    bench_join_path(stack, sdir, "stack");
    bench_join_path(policy, sdir, "policy.yaml");
    bench_join_path(out, sdir, "up.out");
    bench_join_path(log, sdir, "up.log");
}

void bench_stack_env(const char *stack_dir, char *env, size_t cap)
{
    char path[BENCH_PATH_MAX];
    size_t len;

    bench_join_path(path, stack_dir, "stack.env");
    bench_read_small(path, (uint8_t *)env, cap, &len);
}

pid_t bench_stack_daemon(const char *env, const char *key)
{
    char value[32];
    pid_t pid;

    bench_env_value(env, key, value, sizeof(value));
    pid = (pid_t)atol(value);
    if (pid <= 0)
        return 0;
    for (int i = 0; i < MAX_STACK_PIDS; i++)
        if (stack_pids[i] == 0) {
            stack_pids[i] = pid;
            return pid;
        }
    bench_die_msg("too many daemons of the stack");
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

/* No stack to stop any more: none to stop at exit, no daemon to kill on a signal. */
static void stack_forget(void)
{
    down_dir[0] = '\0';
    for (int i = 0; i < MAX_STACK_PIDS; i++)
        stack_pids[i] = 0;
}

void bench_stack_down(void)
{
    char log[BENCH_PATH_MAX];
    char *argv[] = {down_script, "down", down_dir, NULL};
    struct stat st;
    pid_t pid;

    if (getpid() != main_pid)
        return;
    /* None watched, or dev-stack failed before it made the folder: nothing is up (and bench_spawn,
     * which exits when it cannot open its log, must not run from atexit then). */
    if (down_dir[0] == '\0' || stat(down_dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
        snprintf(log, sizeof(log), "%s/down.log", down_dir) >= (int)sizeof(log)) {
        stack_forget();
        return;
    }
    pid = bench_spawn(argv, log, NULL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    stack_forget();
}

/* ---------------------------------------------------------------------------------------------
 * Exit and signals.
 */

void bench_stop_all(void)
{
    if (getpid() != main_pid)
        return;
    bench_stack_down();
    for (int i = MAX_SERVERS - 1; i >= 0; i--)
        if (servers[i] > 0) {
            child_stop(servers[i]);
            servers[i] = 0;
        }
    bench_swtpm_stop();
}

static void on_signal(int sig)
{
    (void)sig;
    for (int i = 0; i < MAX_SERVERS; i++)
        if (servers[i] > 0)
            kill(servers[i], SIGKILL);
    for (int i = 0; i < MAX_STACK_PIDS; i++)
        if (stack_pids[i] > 0)
            kill(stack_pids[i], SIGTERM);
    _exit(130);
}

void bench_signals_install(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0 ||
        sigaction(SIGHUP, &sa, NULL) != 0)
        bench_die_sys("sigaction");
}

/* ---------------------------------------------------------------------------------------------
 * The log's commits: the counting VFS, and appends of one entry per call from many threads.
 * Moved here from bench_log.c, so that bench_decisiond measures the log the same way.
 *
 * The counting VFS wraps the default VFS's xOpen and gives each opened file a copy of its
 * io_methods in which xSync and xWrite count before calling the original. The copy is found back
 * from the file (its pMethods points at it), so no per-file state is needed. One copy is made per
 * (original methods, file kind) pair; the unix VFS has only a handful of method tables.
 */

enum file_kind { KIND_DB, KIND_WAL, KIND_OTHER, KIND_COUNT };

struct method_copy {
    sqlite3_io_methods m; /* first: a file's pMethods is cast back to the copy */
    const sqlite3_io_methods *orig;
    enum file_kind kind;
};

#define METHOD_COPIES 16
static struct method_copy copies[METHOD_COPIES];
static int copy_count;
static pthread_mutex_t copies_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *base_vfs;
static sqlite3_vfs counting_vfs;

static atomic_ulong syncs[KIND_COUNT];
static atomic_ullong written[KIND_COUNT]; /* bytes handed to xWrite */
static atomic_ulong commits;              /* WAL syncs that made a transaction durable */
static atomic_int commit_pending;         /* a commit frame was written and not yet synced */
static atomic_int uncounted_opens;        /* files the shim could not wrap (should stay 0) */
static atomic_int elide_syncs; /* what-if runs only: count syncs but do not perform them */

/* WAL frame headers are 24 bytes written on their own after the 32-byte WAL header; bytes 4..7
 * hold the database size in pages for a commit frame and zero for every other frame. */
#define WAL_HEADER_LEN 32
#define WAL_FRAME_HEADER_LEN 24

static int counting_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
    const struct method_copy *c = (const struct method_copy *)f->pMethods;

    atomic_fetch_add(&written[c->kind], (unsigned long long)amt);
    if (c->kind == KIND_WAL && amt == WAL_FRAME_HEADER_LEN && off >= WAL_HEADER_LEN) {
        const unsigned char *h = buf;
        if ((h[4] | h[5] | h[6] | h[7]) != 0)
            atomic_store(&commit_pending, 1);
    }
    return c->orig->xWrite(f, buf, amt, off);
}

static int counting_sync(sqlite3_file *f, int flags)
{
    const struct method_copy *c = (const struct method_copy *)f->pMethods;

    atomic_fetch_add(&syncs[c->kind], 1);
    /* The sync right after a commit frame is the commit's; WAL syncs without one are the
     * checkpointer's or the WAL header's after a reset. */
    if (c->kind == KIND_WAL && atomic_exchange(&commit_pending, 0))
        atomic_fetch_add(&commits, 1);
    if (atomic_load(&elide_syncs))
        return SQLITE_OK;
    return c->orig->xSync(f, flags);
}

static const struct method_copy *copy_for(const sqlite3_io_methods *orig, enum file_kind kind)
{
    const struct method_copy *found = NULL;

    if (pthread_mutex_lock(&copies_lock) != 0)
        return NULL;
    for (int i = 0; i < copy_count && found == NULL; i++)
        if (copies[i].orig == orig && copies[i].kind == kind)
            found = &copies[i];
    if (found == NULL && copy_count < METHOD_COPIES) {
        struct method_copy *c = &copies[copy_count++];

        c->m = *orig;
        c->m.xWrite = counting_write;
        c->m.xSync = counting_sync;
        c->orig = orig;
        c->kind = kind;
        found = c;
    }
    (void)pthread_mutex_unlock(&copies_lock);
    return found;
}

static int counting_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
                         int *out_flags)
{
    enum file_kind kind = (flags & SQLITE_OPEN_WAL)       ? KIND_WAL
                          : (flags & SQLITE_OPEN_MAIN_DB) ? KIND_DB
                                                          : KIND_OTHER;
    const struct method_copy *c;
    int rc;

    (void)vfs;
    rc = base_vfs->xOpen(base_vfs, name, f, flags, out_flags);
    if (rc != SQLITE_OK || f->pMethods == NULL)
        return rc;
    c = copy_for(f->pMethods, kind);
    if (c == NULL)
        atomic_fetch_add(&uncounted_opens, 1);
    else
        f->pMethods = &c->m;
    return rc;
}

void bench_sqlite_count_install(void)
{
    base_vfs = sqlite3_vfs_find(NULL);
    if (base_vfs == NULL)
        bench_die_msg("sqlite3 has no default VFS");
    /* Everything but xOpen (and the name) is the base VFS's own: the unix VFS methods only read
     * fields of the struct that the copy shares (szOsFile, mxPathname, pAppData). */
    counting_vfs = *base_vfs;
    counting_vfs.zName = "counting";
    counting_vfs.pNext = NULL;
    counting_vfs.xOpen = counting_open;
    if (sqlite3_vfs_register(&counting_vfs, 1) != SQLITE_OK)
        bench_die_msg("sqlite3_vfs_register failed");
}

void bench_sqlite_elide_syncs(int on)
{
    atomic_store(&elide_syncs, on);
}

int bench_sqlite_eliding(void)
{
    return atomic_load(&elide_syncs);
}

int bench_sqlite_uncounted(void)
{
    return atomic_load(&uncounted_opens);
}

struct bench_sync_snap bench_sync_snap(void)
{
    struct bench_sync_snap s = {atomic_load(&syncs[KIND_DB]),
                                atomic_load(&syncs[KIND_WAL]),
                                atomic_load(&syncs[KIND_OTHER]),
                                atomic_load(&commits),
                                atomic_load(&written[KIND_DB]) + atomic_load(&written[KIND_WAL]) +
                                    atomic_load(&written[KIND_OTHER]),
                                atomic_load(&written[KIND_WAL])};
    return s;
}

unsigned long bench_sync_total(struct bench_sync_snap s)
{
    return s.db + s.wal + s.other;
}

struct bench_sync_snap bench_sync_diff(struct bench_sync_snap a, struct bench_sync_snap b)
{
    struct bench_sync_snap d = {b.db - a.db,       b.wal - a.wal,
                                b.other - a.other, b.commits - a.commits,
                                b.bytes - a.bytes, b.wal_bytes - a.wal_bytes};
    return d;
}

/* One thread of bench_log_commits. */
struct commit_thread {
    struct sworn_log *log;
    pthread_barrier_t *start;
    const uint8_t *const *entries;
    const size_t *lens;
    size_t n_entries;
    unsigned id, threads;
    unsigned long max, appended;
    unsigned long long bytes; /* entry bytes appended */
    double seconds;
};

static void *commit_main(void *arg)
{
    struct commit_thread *t = arg;
    int brc = pthread_barrier_wait(t->start);
    double deadline;

    if (brc != 0 && brc != PTHREAD_BARRIER_SERIAL_THREAD)
        bench_die_msg("pthread_barrier_wait failed");
    deadline = bench_now() + t->seconds;
    while (t->appended < t->max && bench_now() < deadline) {
        size_t at = (size_t)((t->appended * t->threads + t->id) % t->n_entries);
        uint64_t first;

        if (sworn_log_append(t->log, t->entries + at, t->lens + at, 1, &first) < 0)
            bench_die_lib("sworn_log_append"); /* sworn_err is this thread's */
        t->appended++;
        t->bytes += t->lens[at];
    }
    return NULL;
}

void bench_log_commits(struct sworn_log *log, unsigned threads, double seconds,
                       unsigned long max_per_thread, const uint8_t *const *entries,
                       const size_t *lens, size_t n_entries, struct bench_commits *out)
{
    struct commit_thread t[BENCH_COMMIT_THREADS_MAX];
    pthread_t tid[BENCH_COMMIT_THREADS_MAX];
    pthread_barrier_t start;
    struct bench_sync_snap before;
    double t0;
    int brc;

    if (threads < 1 || threads > BENCH_COMMIT_THREADS_MAX || n_entries == 0)
        bench_die_msg("bench_log_commits: bad arguments");
    memset(out, 0, sizeof(*out));
    out->threads = threads;
    bench_check_pt(pthread_barrier_init(&start, NULL, threads + 1), "pthread_barrier_init");
    for (unsigned i = 0; i < threads; i++) {
        t[i] = (struct commit_thread){.log = log,
                                      .start = &start,
                                      .entries = entries,
                                      .lens = lens,
                                      .n_entries = n_entries,
                                      .id = i,
                                      .threads = threads,
                                      .max = max_per_thread,
                                      .seconds = seconds};
        bench_check_pt(pthread_create(&tid[i], NULL, commit_main, &t[i]), "pthread_create");
    }
    before = bench_sync_snap();
    brc = pthread_barrier_wait(&start);
    if (brc != 0 && brc != PTHREAD_BARRIER_SERIAL_THREAD)
        bench_die_msg("pthread_barrier_wait failed");
    t0 = bench_now();
    for (unsigned i = 0; i < threads; i++)
        bench_check_pt(pthread_join(tid[i], NULL), "pthread_join");
    out->seconds = bench_now() - t0;
    out->syncs = bench_sync_diff(before, bench_sync_snap());
    bench_check_pt(pthread_barrier_destroy(&start), "pthread_barrier_destroy");
    for (unsigned i = 0; i < threads; i++) {
        out->entries += t[i].appended;
        out->entry_bytes += t[i].bytes;
    }
}
