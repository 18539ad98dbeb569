/*
 * bench_run.c -- issue 15's figure: how long sworn-run takes to start an agent, to let it make its
 * first allowed request through sworn-proxy, and to tear the sandbox down, next to bubblewrap and
 * unshare(1) giving the same isolation, timed in the same run, round by round.
 *
 * Usage: bench_run DIR [--runs N] [--build DIR] [--source DIR]
 *   DIR           an existing, empty folder (absolute); scripts/bench makes it and removes it
 *   --runs N      timed runs of every case and runner (default 30, or $SWORN_BENCH_RUNS); each
 *                 case also runs WARMUP_RUNS untimed first
 *   --build DIR   the build holding sandbox/sworn-run, decisiond/sworn-decisiond, proxy/sworn-proxy
 *                 and hsm/sworn-hsm (default: the one this bench was built in)
 *   --source DIR  the source folder holding scripts/dev-stack (default: this bench's source)
 *
 * The agent is run_stamp (built beside this program, statically linked where the build allows):
 * it prints CLOCK_MONOTONIC at its first instruction, optionally makes one request through a
 * proxy and prints when the status line arrived, and prints the clock again as it exits. This
 * program reads the same clock before it forks the runner and after it reaped it, so:
 *   start      = the agent's first stamp - the fork of the runner
 *   request    = the answer's stamp - the fork (start to the first allowed request answered)
 *   teardown   = the runner reaped - the agent's last stamp (agent exit to runner exit)
 *   /bin/true  = the whole run of /bin/true, fork to reaped
 *
 * Runners (every one gets a fresh work folder holding run_stamp, made before the clock starts):
 *   sworn-run  BUILD/sandbox/sworn-run --stack STACK --work W --keep -- /work/run_stamp
 *              [127.0.0.1:3128 URL]: SandboxStarted and SandboxEnded are recorded durably through
 *              decisiond, the work folder (it holds run_stamp) is kept and what the agent made in
 *              it given back; the request goes through the relay and the hostlink
 *   bwrap      /usr/bin/bwrap --unshare-all --unshare-user (--share-net for the request) with
 *              read-only binds of /usr /etc /lib* (/bin /sbin as the host has them), --proc /proc,
 *              --dev /dev, --tmpfs /tmp, --bind W /work, uid and gid 1000, every capability
 *              dropped, a cleared environment, --die-with-parent
 *   unshare    /usr/bin/unshare --user --map-root-user --mount --net --pid --ipc --uts --fork
 *              --mount-proc W/run_stamp (without --net for the request)
 *   none       W/run_stamp, fork and exec only: what any runner costs at least
 * The baselines have no hostlink: they keep the host's network for the request and send it to the
 * same sworn-proxy's TCP listener (the same decisiond, policy and nginx).
 *
 * Setup, in DIR: nginx (/usr/sbin/nginx) on a free loopback port serving /small.txt, and a dev
 * stack (scripts/dev-stack up --no-tpm) whose policy allows GET of it and nothing else. Every
 * child dies with the bench (PR_SET_PDEATHSIG); the stack is stopped with dev-stack down at exit;
 * on SIGINT, SIGTERM or SIGHUP nginx is killed and the stack's daemons get SIGTERM (benchutil.h).
 *
 * Also measured each round, in DIR: one 4 KiB pwrite + fdatasync, the least a durable log append
 * costs; sworn-run makes one before the agent runs (SandboxStarted) and one after (SandboxEnded).
 *
 * When sworn-run cannot run an agent on the stack (its first run fails: not built, or the stack
 * does not handle its records yet), its rows say "not available" with its last message, and the
 * baselines are measured alone. Target (issue text): start under 20 ms and within 2x of bwrap.
 *
 * Exit status: 0, or 1 when a tool or the setup fails, or a run fails after its first succeeded.
 * A missed target is information, not a failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"

#define BWRAP_BIN "/usr/bin/bwrap"
#define UNSHARE_BIN "/usr/bin/unshare"
#define TRUE_BIN "/bin/true"
#define DEFAULT_RUNS 30
#define RUNS_MAX 10000
#define WARMUP_RUNS 2
#define OUT_MAX 4096           /* what a runner prints to standard output */
#define ARGV_MAX 96            /* a runner's command line */
#define ENV_VALUE_MAX 1024     /* a value in stack.env */
#define TARGET_START_MS 20.0   /* sworn-run's start, at most (median) */
#define TARGET_BWRAP_RATIO 2.0 /* sworn-run's start over bwrap's, at most (medians) */
#define SYNC_BYTES 4096

enum runner { R_SWORN, R_BWRAP, R_UNSHARE, R_NONE, R_COUNT };
enum fig { F_START, F_REQUEST, F_ALONE, F_TEARDOWN, F_TRUE, F_COUNT };

static const char *const runner_name[R_COUNT] = {"sworn-run --stack", "bwrap", "unshare",
                                                 "none (fork + exec)"};
static const char *const runner_log[R_COUNT] = {"sworn-run.err", "bwrap.err", "unshare.err",
                                                "none.err"};

struct series {
    double *v; /* ms */
    int n;
};

static struct {
    const char *dir;
    const char *build, *source;
    int runs;
    char stamp[BENCH_PATH_MAX]; /* run_stamp, beside this program */
    char sworn_run[BENCH_PATH_MAX];
    char stack[BENCH_PATH_MAX];
    char logs[BENCH_PATH_MAX];
    char works[BENCH_PATH_MAX];
    char url[128];      /* http://127.0.0.1:NGINX/small.txt */
    char proxy_tcp[64]; /* 127.0.0.1:PORT of the stack's TCP listener */
    struct bench_nginx nginx;
    int available[R_COUNT];
    char why[R_COUNT][512]; /* why a runner is not available */
    struct series fig[R_COUNT][F_COUNT];
    struct series sync;
    unsigned work_seq;
    char lib_dirs[16][64]; /* the host's /lib* entries */
    int lib_links[16];     /* 1: a symbolic link (its target in lib_targets) */
    char lib_targets[16][64];
    int nlibs, bin_link, sbin_link;
} B;

/* ---------------------------------------------------------------------------------------------
 * Files and the setup.
 */

static void copy_file(const char *from, const char *to, mode_t mode)
{
    char buf[65536];
    int in = open(from, O_RDONLY | O_CLOEXEC), out;
    ssize_t n;

    if (in < 0)
        bench_die_sys(from);
    out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (out < 0)
        bench_die_sys(to);
    while ((n = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n)
            bench_die_sys(to);
    if (n < 0 || close(out) != 0)
        bench_die_sys(to);
    close(in);
}

/* Remove a folder the bench made (files and folders one level deep at most: a work folder). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char sub[BENCH_PATH_MAX];

    if (d == NULL) {
        if (errno == ENOENT)
            return;
        bench_die_sys(path);
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        bench_join_path(sub, path, e->d_name);
        if (e->d_type == DT_DIR)
            remove_tree(sub);
        else if (unlink(sub) != 0)
            bench_die_sys(sub);
    }
    closedir(d);
    if (rmdir(path) != 0)
        bench_die_sys(path);
}

/* nginx's server: GET /small.txt on its port. */
static int nginx_http(char *text, size_t cap, const struct bench_nginx *n, const void *arg)
{
    (void)arg;
    return snprintf(text, cap, "  server {\n    listen 127.0.0.1:%u;\n    root %s;\n  }\n",
                    n->http_port, n->www);
}

/* src into out (cap bytes with the NUL), cut when longer: for messages and short names. */
static void copy_cut(char *out, size_t cap, const char *src)
{
    size_t n = strlen(src) < cap - 1 ? strlen(src) : cap - 1;

    memcpy(out, src, n);
    out[n] = '\0';
}

/* Runner r is not measured: its rows say why. */
static void not_available(enum runner r, const char *why)
{
    B.available[r] = 0;
    copy_cut(B.why[r], sizeof(B.why[r]), why);
}

/* A dev stack whose policy allows GET /small.txt on nginx; the proxy's TCP listener's address. */
static void stack_up(void)
{
    char policy[BENCH_PATH_MAX], out[BENCH_PATH_MAX], log[BENCH_PATH_MAX], value[ENV_VALUE_MAX],
        text[1024], env[16384];
    char *opts[] = {"--no-tpm", "--policy", policy, NULL};
    unsigned port = 0;
    int n;

    bench_stack_files(B.dir, B.stack, policy, out, log);
    n = snprintf(text, sizeof(text),
                 "# bench_run: GET /small.txt on the bench's nginx, nothing else.\n"
                 "version: 1\nrules:\n"
                 "  - id: bench-run-small\n    effect: allow\n"
                 "    reason: \"bench: the small file\"\n    operations: [\"http.request\"]\n"
                 "    resource:\n      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
                 "      ports: [%u]\n      paths: [\"/small.txt\"]\n    methods: [GET]\n",
                 B.nginx.http_port);
    if (n < 0 || (size_t)n >= sizeof(text))
        bench_die_msg("the policy does not fit");
    bench_put_text(policy, text, 0600);
    if (bench_stack_up(B.stack, B.source, B.build, opts, log, out) != 0) {
        bench_dump_log(log);
        bench_die_msg("scripts/dev-stack up failed");
    }
    bench_stack_env(B.stack, env, sizeof(env));
    /* A signal ends the stack's daemons (dev-stack down runs at exit only). */
    (void)bench_stack_daemon(env, "DECISIOND_PID");
    (void)bench_stack_daemon(env, "PROXY_PID");
    bench_env_value(env, "PROXY_URL", value, sizeof(value));
    if (sscanf(value, "http://127.0.0.1:%u", &port) != 1 || port == 0 || port > 65535)
        bench_die_msg("stack.env: PROXY_URL is not http://127.0.0.1:PORT");
    snprintf(B.proxy_tcp, sizeof(B.proxy_tcp), "127.0.0.1:%u", port);
    bench_env_value(env, "PROXY_PRINCIPAL", value, sizeof(value));
    if (value[0] == '\0')
        not_available(
            R_SWORN,
            "stack.env has no PROXY_PRINCIPAL (scripts/dev-stack is older than sworn-run)");
}

/* The host's /lib* entries and whether /bin and /sbin are links, for bwrap's binds. */
static void scan_root(void)
{
    DIR *d = opendir("/");
    struct dirent *e;
    struct stat st;
    char path[BENCH_PATH_MAX];

    if (d == NULL)
        bench_die_sys("/");
    while ((e = readdir(d)) != NULL && B.nlibs < 16) {
        ssize_t n;

        if (strncmp(e->d_name, "lib", 3) != 0 || strlen(e->d_name) >= sizeof(B.lib_dirs[0]) - 1)
            continue;
        snprintf(path, sizeof(path), "/%s", e->d_name);
        if (lstat(path, &st) != 0)
            continue;
        copy_cut(B.lib_dirs[B.nlibs], sizeof(B.lib_dirs[0]), path);
        B.lib_links[B.nlibs] = 0;
        if (S_ISLNK(st.st_mode)) {
            n = readlink(path, B.lib_targets[B.nlibs], sizeof(B.lib_targets[0]) - 1);
            if (n <= 0)
                continue;
            B.lib_targets[B.nlibs][n] = '\0';
            B.lib_links[B.nlibs] = 1;
        } else if (!S_ISDIR(st.st_mode)) {
            continue;
        }
        B.nlibs++;
    }
    closedir(d);
    B.bin_link = lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode);
    B.sbin_link = lstat("/sbin", &st) == 0 && S_ISLNK(st.st_mode);
}

/* ---------------------------------------------------------------------------------------------
 * One run: a command line, its stamps, its times.
 */

struct argv_buf {
    char *v[ARGV_MAX];
    int n;
};

static void arg(struct argv_buf *a, const char *s)
{
    if (a->n >= ARGV_MAX - 1)
        bench_die_msg("a runner's command line is too long");
    a->v[a->n++] = (char *)s;
    a->v[a->n] = NULL;
}

/* Append the arguments given, in order. */
#define ARGS(a, ...) args((a), (const char *const[]){__VA_ARGS__, NULL})
static void args(struct argv_buf *a, const char *const list[])
{
    for (int i = 0; list[i] != NULL; i++)
        arg(a, list[i]);
}

/* bwrap's bind (--ro-bind PATH PATH) or link (--symlink TARGET PATH) of a folder of the root. */
static void bwrap_root_entry(struct argv_buf *a, int link, const char *target, const char *path)
{
    ARGS(a, link ? "--symlink" : "--ro-bind", link ? target : path, path);
}

/* The command line of runner r running the agent (stamp: 1 run_stamp, 0 /bin/true), with a
 * request when request is 1. work: the run's work folder; agent: W/run_stamp. */
static void command(struct argv_buf *a, enum runner r, int stamp, int request, const char *work,
                    const char *agent)
{
    static char inside_proxy[] = "127.0.0.1:3128";
    const char *inside_agent = stamp ? "/work/run_stamp" : TRUE_BIN;

    a->n = 0;
    switch (r) {
    case R_SWORN:
        /* --keep: the folder holds run_stamp, and sworn-run removes only a folder that was
         * empty; it gives back what the agent made instead (the bench removes the folder). */
        ARGS(a, B.sworn_run, "--stack", B.stack, "--work", work, "--keep", "--", inside_agent);
        break;
    case R_BWRAP:
        ARGS(a, BWRAP_BIN, "--unshare-all", "--unshare-user");
        if (request)
            arg(a, "--share-net");
        ARGS(a, "--die-with-parent", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL",
             "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/work");
        bwrap_root_entry(a, 0, NULL, "/usr");
        bwrap_root_entry(a, 0, NULL, "/etc");
        for (int i = 0; i < B.nlibs; i++)
            bwrap_root_entry(a, B.lib_links[i], B.lib_targets[i], B.lib_dirs[i]);
        bwrap_root_entry(a, B.bin_link, "usr/bin", "/bin");
        bwrap_root_entry(a, B.sbin_link, "usr/sbin", "/sbin");
        ARGS(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", work, "/work",
             "--chdir", "/work", "--", inside_agent);
        break;
    case R_UNSHARE:
        ARGS(a, UNSHARE_BIN, "--user", "--map-root-user", "--mount");
        if (!request)
            arg(a, "--net");
        ARGS(a, "--pid", "--ipc", "--uts", "--fork", "--mount-proc", stamp ? agent : TRUE_BIN);
        break;
    case R_NONE:
    case R_COUNT:
    default:
        arg(a, stamp ? agent : TRUE_BIN);
        break;
    }
    if (stamp && request)
        ARGS(a, r == R_SWORN ? inside_proxy : B.proxy_tcp, B.url);
}

struct outcome {
    int ok;
    double t_start, t_response, t_exit; /* the agent's stamps, s (0: absent) */
    double t0, t_end;                   /* the fork, the reap */
    int status;                         /* the runner's wait status */
    char out[OUT_MAX];
};

static double stamp_value(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    unsigned long long ns;

    if (p == NULL || (p != out && p[-1] != '\n') || sscanf(p + strlen(key), " %llu", &ns) != 1)
        return 0;
    return (double)ns / 1e9;
}

/* Run argv once, stdout to a pipe (the stamps), stderr appended to log; timed. */
static void run_once(char *const argv[], const char *log, struct outcome *o)
{
    int p[2];
    size_t got = 0;
    pid_t pid;

    memset(o, 0, sizeof(*o));
    if (pipe2(p, O_CLOEXEC) != 0)
        bench_die_sys("pipe");
    o->t0 = bench_now();
    pid = fork();
    if (pid < 0)
        bench_die_sys("fork");
    if (pid == 0) {
        int err = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (err < 0 || null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(err, 2) < 0)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    for (;;) {
        ssize_t n = read(p[0], o->out + got, sizeof(o->out) - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got == sizeof(o->out) - 1)
            break;
    }
    close(p[0]);
    o->out[got] = '\0';
    o->status = bench_wait(pid, "waitpid");
    o->t_end = bench_now();
    o->t_start = stamp_value(o->out, "start");
    o->t_response = stamp_value(o->out, "response");
    o->t_exit = stamp_value(o->out, "exit");
    o->ok = WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0;
}

/* A fresh work folder holding run_stamp; OUT: its path and the agent's path in it. */
static void new_work(char work[BENCH_PATH_MAX], char agent[BENCH_PATH_MAX])
{
    char name[32];

    snprintf(name, sizeof(name), "w%u", B.work_seq++);
    bench_join_path(work, B.works, name);
    bench_make_dir(work, 0755);
    bench_join_path(agent, work, "run_stamp");
    copy_file(B.stamp, agent, 0755);
}

static void add(struct series *s, double ms)
{
    s->v[s->n++] = ms;
}

enum case_kind { C_STAMP, C_REQUEST, C_TRUE };

/*
 * One run of a case by runner r. Returns 1 when it ran (the figures are added when record is 1),
 * 0 when it failed (why, when not NULL, says how).
 */
static int run_case(enum runner r, enum case_kind c, int record, char *why, size_t why_cap)
{
    char work[BENCH_PATH_MAX], agent[BENCH_PATH_MAX], log[BENCH_PATH_MAX];
    struct argv_buf a;
    struct outcome o;
    int need_stamps = c != C_TRUE;

    new_work(work, agent);
    command(&a, r, c != C_TRUE, c == C_REQUEST, work, agent);
    bench_join_path(log, B.logs, runner_log[r]);
    if (truncate(log, 0) != 0 && errno != ENOENT)
        bench_die_sys(log);
    run_once(a.v, log, &o);
    remove_tree(work); /* kept by sworn-run (--keep), or bwrap's and unshare's */
    if (!o.ok || (need_stamps && (o.t_start <= 0 || o.t_exit <= 0)) ||
        (c == C_REQUEST && o.t_response <= 0)) {
        char last[400], msg[BENCH_PATH_MAX + 1024];
        int n;

        bench_last_line(log, NULL, last, sizeof(last));
        n = snprintf(msg, sizeof(msg), "%.4095s exited with %d%s%s%s%.100s", a.v[0],
                     WIFEXITED(o.status) ? WEXITSTATUS(o.status) : 128 + WTERMSIG(o.status),
                     last[0] ? ": " : "", last, o.out[0] ? "; agent said: " : "", o.out);
        if (why != NULL && n > 0)
            copy_cut(why, why_cap, msg); /* a long reason is cut, not an error */
        return 0;
    }
    if (!record)
        return 1;
    switch (c) {
    case C_STAMP:
        add(&B.fig[r][F_START], (o.t_start - o.t0) * 1e3);
        add(&B.fig[r][F_TEARDOWN], (o.t_end - o.t_exit) * 1e3);
        break;
    case C_REQUEST:
        add(&B.fig[r][F_REQUEST], (o.t_response - o.t0) * 1e3);
        add(&B.fig[r][F_ALONE], (o.t_response - o.t_start) * 1e3);
        break;
    case C_TRUE:
    default:
        add(&B.fig[r][F_TRUE], (o.t_end - o.t0) * 1e3);
        break;
    }
    return 1;
}

/* One 4 KiB pwrite + fdatasync in DIR, in ms. */
static double one_sync(int fd)
{
    static char block[SYNC_BYTES];
    double t0 = bench_now();

    if (pwrite(fd, block, sizeof(block), 0) != (ssize_t)sizeof(block) || fdatasync(fd) != 0)
        bench_die_sys("pwrite + fdatasync");
    return (bench_now() - t0) * 1e3;
}

/* ---------------------------------------------------------------------------------------------
 * Figures.
 */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

struct stats {
    double min, median, p90;
    int n;
};

static struct stats stats_of(const struct series *s)
{
    struct stats st = {0, 0, 0, s->n};
    double *v;

    if (s->n == 0)
        return st;
    v = malloc(sizeof(double) * (size_t)s->n);
    if (v == NULL)
        bench_die_msg("out of memory");
    memcpy(v, s->v, sizeof(double) * (size_t)s->n);
    qsort(v, (size_t)s->n, sizeof(double), cmp_double);
    st.min = v[0];
    st.median = s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
    st.p90 = v[(int)((s->n - 1) * 0.9 + 0.5)];
    free(v);
    return st;
}

static void print_row(const char *label, const struct series *s, const struct series *base)
{
    struct stats st = stats_of(s), b = base != NULL ? stats_of(base) : st;

    printf("  %-22s %5d %9.2f %9.2f %9.2f", label, st.n, st.min, st.median, st.p90);
    if (base != NULL && b.n > 0 && b.median > 0)
        printf("   %6.2fx\n", st.median / b.median);
    else
        printf("\n");
}

static void print_figure(const char *title, enum fig f)
{
    const struct series *base = B.available[R_BWRAP] ? &B.fig[R_BWRAP][f] : NULL;

    printf("\n%s\n", title);
    printf("  %-22s %5s %9s %9s %9s   %s\n", "runner", "runs", "min ms", "median", "p90",
           "median / bwrap");
    for (int r = 0; r < R_COUNT; r++) {
        if (!B.available[r]) {
            printf("  %-22s not available (see above)\n", runner_name[r]);
            continue;
        }
        print_row(runner_name[r], &B.fig[r][f], r == R_BWRAP ? NULL : base);
    }
}

static void print_targets(void)
{
    struct stats s = stats_of(&B.fig[R_SWORN][F_START]), b = stats_of(&B.fig[R_BWRAP][F_START]);
    char value[64];

    printf("\nAgainst the target (issue 15: start under %.0f ms, within %.0fx of bwrap; medians "
           "of start -> first instruction):\n",
           TARGET_START_MS, TARGET_BWRAP_RATIO);
    if (!B.available[R_SWORN] || s.n == 0) {
        printf("  sworn-run not available: %s\n", B.why[R_SWORN]);
        return;
    }
    snprintf(value, sizeof(value), "%.2f ms", s.median);
    printf("  start under %.0f ms       %-26s %s\n", TARGET_START_MS, value,
           s.median < TARGET_START_MS ? "met" : "NOT met");
    if (!B.available[R_BWRAP] || b.n == 0 || b.median <= 0) {
        printf("  within %.0fx of bwrap      bwrap not available: %s\n", TARGET_BWRAP_RATIO,
               B.why[R_BWRAP]);
        return;
    }
    snprintf(value, sizeof(value), "%.2fx (bwrap %.2f ms)", s.median / b.median, b.median);
    printf("  within %.0fx of bwrap      %-26s %s\n", TARGET_BWRAP_RATIO, value,
           s.median <= TARGET_BWRAP_RATIO * b.median ? "met" : "NOT met");
}

/* ---------------------------------------------------------------------------------------------
 * Main.
 */

static _Noreturn void usage(void)
{
    fprintf(stderr, "usage: bench_run DIR [--runs N] [--build DIR] [--source DIR]\n");
    exit(2);
}

static void find_tools(void)
{
    char self[BENCH_PATH_MAX];

    bench_self_dir(self);
    bench_join_path(B.stamp, self, "run_stamp");
    if (access(B.stamp, X_OK) != 0)
        bench_die_sys(B.stamp);
    bench_join_path(B.sworn_run, B.build, "sandbox/sworn-run");
    for (int r = 0; r < R_COUNT; r++)
        B.available[r] = 1;
    if (access(B.sworn_run, X_OK) != 0)
        not_available(R_SWORN, "BUILD/sandbox/sworn-run is not built");
    if (access(BWRAP_BIN, X_OK) != 0)
        not_available(R_BWRAP, BWRAP_BIN " missing (scripts/install-deps installs bubblewrap)");
    if (access(UNSHARE_BIN, X_OK) != 0)
        not_available(R_UNSHARE, UNSHARE_BIN " missing");
}

int main(int argc, char **argv)
{
    static const enum case_kind cases[] = {C_STAMP, C_REQUEST, C_TRUE};
    const char *runs_env = getenv("SWORN_BENCH_RUNS");
    char sync_path[BENCH_PATH_MAX];
    int sync_fd;

    bench_init("bench_run");
    B.build = SWORN_BENCH_BUILD_DIR;
    B.source = SWORN_BENCH_SOURCE_DIR;
    B.runs = runs_env != NULL ? atoi(runs_env) : DEFAULT_RUNS;
    if (argc < 2 || argv[1][0] != '/')
        usage();
    B.dir = argv[1];
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            B.runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--build") == 0 && i + 1 < argc)
            B.build = argv[++i];
        else if (strcmp(argv[i], "--source") == 0 && i + 1 < argc)
            B.source = argv[++i];
        else
            usage();
    }
    if (B.runs < 1 || B.runs > RUNS_MAX)
        bench_die_msg("--runs must be 1..10000");
    bench_signals_install();
    signal(SIGPIPE, SIG_IGN);
    find_tools();
    scan_root();
    bench_join_path(B.logs, B.dir, "logs");
    bench_make_dir(B.logs, 0700);
    bench_join_path(B.works, B.dir, "work");
    bench_make_dir(B.works, 0700);
    for (int r = 0; r < R_COUNT; r++)
        for (int f = 0; f < F_COUNT; f++) {
            B.fig[r][f].v = calloc((size_t)B.runs, sizeof(double));
            if (B.fig[r][f].v == NULL)
                bench_die_msg("out of memory");
        }
    B.sync.v = calloc((size_t)B.runs, sizeof(double));
    if (B.sync.v == NULL)
        bench_die_msg("out of memory");

    bench_nginx_prepare(&B.nginx, B.dir);
    bench_nginx_start(&B.nginx, 0, 256, nginx_http, NULL);
    snprintf(B.url, sizeof(B.url), "http://127.0.0.1:%u/small.txt", B.nginx.http_port);
    stack_up();
    bench_join_path(sync_path, B.dir, "sync.bin");
    sync_fd = open(sync_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (sync_fd < 0)
        bench_die_sys(sync_path);

    printf("bench_run: %d timed runs of each case and runner (after %d untimed), round by round;\n"
           "nginx on 127.0.0.1:%u, the dev stack in %s (sworn-proxy's TCP listener %s)\n",
           B.runs, WARMUP_RUNS, B.nginx.http_port, B.stack, B.proxy_tcp);
    /* First runs: a runner that cannot run its agent is shown as not available (sworn-run before
     * the stack records sandboxes); the others must work. Then the warmup. */
    for (int r = 0; r < R_COUNT; r++)
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]) && B.available[r]; c++)
            for (int w = 0; w < WARMUP_RUNS && B.available[r]; w++)
                if (!run_case((enum runner)r, cases[c], 0, B.why[r], sizeof(B.why[r]))) {
                    if (r != R_SWORN) {
                        fprintf(stderr, "bench_run: %s: %s\n", runner_name[r], B.why[r]);
                        exit(1);
                    }
                    B.available[r] = 0;
                }
    for (int r = 0; r < R_COUNT; r++)
        if (!B.available[r])
            printf("%s: not available: %s\n", runner_name[r], B.why[r]);
    fflush(stdout);
    for (int i = 0; i < B.runs; i++) {
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
            for (int r = 0; r < R_COUNT; r++) {
                char why[1024];
                if (!B.available[r])
                    continue;
                if (!run_case((enum runner)r, cases[c], 1, why, sizeof(why))) {
                    fprintf(stderr, "bench_run: %s, run %d: %s\n", runner_name[r], i + 1, why);
                    exit(1);
                }
            }
        add(&B.sync, one_sync(sync_fd));
    }
    close(sync_fd);

    print_figure("start -> the agent's first instruction (ms)", F_START);
    print_figure("start -> its first allowed request answered, through sworn-proxy (ms)",
                 F_REQUEST);
    print_figure("  of which the request alone (the agent's start -> the answer)", F_ALONE);
    print_figure("teardown: the agent's exit -> the runner's exit (ms)", F_TEARDOWN);
    print_figure("the whole run of /bin/true (ms)", F_TRUE);
    printf("\nbaseline in this folder: one 4 KiB pwrite + fdatasync (a durable log append costs "
           "at least this;\nsworn-run makes one before the agent starts and one after it ends)\n");
    print_row("pwrite + fdatasync", &B.sync, NULL);
    print_targets();
    return 0;
}
