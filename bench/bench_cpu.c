/*
 * bench_cpu.c -- what one decision costs sworn-decisiond in CPU, counted three ways that do not
 * depend on how busy the machine is, so that two builds (or two commits) can be compared on a
 * noisy shared VM (issue 17: "daemon CPU per decision <= 60 us; count instructions with callgrind
 * too").
 *
 * Usage: bench_cpu DIR [options]
 *   DIR               an existing folder (absolute); each stack goes into DIR/<build>-<mode>
 *   --decisions N     decisions per measured window (default 2000; callgrind: N / 4, at least 100)
 *   --receipts MODE   per-request, batch or both (default both): decisiond's `receipts:`
 *   --build DIR       the build whose sworn-decisiond is measured (default: this bench's build)
 *   --baseline DIR    another build, measured first in the same run, with the same requests: the
 *                     ratios are this build's figures over the baseline's (e.g. a build of the
 *                     commit before a change)
 *   --source DIR      the source folder holding scripts/dev-stack (default: this bench's source)
 *   --workers N       decisiond's worker threads (default 4, the dev stack's default)
 *   --no-callgrind    skip the callgrind window (valgrind missing, or in a hurry)
 *   --no-strace       skip the strace window
 *   --read-callgrind FILE N   only read FILE, a callgrind output file of the engine, as N
 *                     decisions' worth, and print it as the callgrind window does
 *
 * Each (build, mode) gets a new dev stack (scripts/dev-stack up --no-tpm --no-proxy, SoftHSM P-256
 * key, a policy that allows everything, checkpoints every CHECKPOINT_INTERVAL so the background
 * work per decision is small) and three windows, each after WARMUP decisions:
 *   cpu        N decisions from one client, then N from CLIENTS_MANY clients (one connection
 *              each), one request in flight per connection: user and system CPU time of the
 *              engine and of the signer process (/proc/PID/stat, all threads) per decision, and
 *              their voluntary and involuntary context switches (/proc/PID/status of every
 *              thread) per decision: the wake-ups.
 *   strace     N decisions from one client with `strace -f -c` attached to the engine and the
 *              signer: system calls per decision, in all and the most frequent ones. strace slows
 *              the daemon down; the counts do not change with it.
 *   callgrind  the stack's daemon is stopped and started again on the same configuration and log
 *              under `valgrind --tool=callgrind --trace-children=yes` (with `hardening.seccomp:
 *              off`: valgrind makes calls the filter would refuse); after the warm-up its counters
 *              are zeroed (callgrind_control -z), then N / 4 decisions from one client, then a
 *              dump (callgrind_control -d): instructions (Ir) per decision of the engine and the
 *              signer, by module (sqlite, protobuf-c, openssl, libevent, json-c, libc, SoftHSM,
 *              sworn's own code) and the functions that cost the most. Callgrind counts user-space
 *              instructions only: the kernel's share is the strace and system-time figures.
 * Every reply must be an allow with a receipt for the request's id, or the bench fails.
 *
 * Exit status: 0, or 1 when a library or system call fails, a stack does not start or a reply is
 * not the expected allow. There is no target line: the figures are compared with the baseline.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchreq.h"
#include "benchutil.h"
#include "dclient.h"
#include "err.h"
#include "frame.h"

#define WARMUP 200        /* untimed decisions before each window */
#define CALLGRIND_DIV 4   /* the callgrind window is N / 4 decisions (valgrind is slow) */
#define CALLGRIND_MIN 100 /* ... and at least this many */
#define CLIENTS_MANY 16   /* the second cpu window's connections */
#define CHECKPOINT_INTERVAL "60s"
#define READY_SECONDS 600.0 /* how long the daemon under valgrind may take to start */
#define STOP_SECONDS 120.0  /* ... and to stop */
#define TOP_FUNCTIONS 15    /* functions listed per callgrind window */
#define TOP_SYSCALLS 8      /* system calls listed per strace window */
#define ENV_MAX 8192
#define MAX_VARIANTS 4

static const char *source_dir = SWORN_BENCH_SOURCE_DIR;

/* ---------------------------------------------------------------------------------------------
 * The stack and its processes.
 */

struct stack {
    char dir[BENCH_PATH_MAX]; /* DIR/<variant>/stack */
    char sock[BENCH_PATH_MAX];
    char config[BENCH_PATH_MAX];
    char softhsm_conf[BENCH_PATH_MAX];
    char bin[BENCH_PATH_MAX];
    pid_t monitor, engine, signer;
    unsigned run; /* request ids: bench-<run>-<client>-<seq>, unique within the stack's log */
};

/* The monitor's children: the engine (comm "sworn-engine") and the signer (any other). */
static void find_children(struct stack *s)
{
    DIR *dir = opendir("/proc");
    struct dirent *e;

    if (dir == NULL)
        bench_die_sys("/proc");
    s->engine = s->signer = 0;
    while ((e = readdir(dir)) != NULL) {
        pid_t pid = (pid_t)atol(e->d_name), ppid = 0;
        char path[64], comm[64] = "";
        FILE *f;

        if (pid <= 0 || bench_proc_cpu(pid, &ppid) < 0 || ppid != s->monitor)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
        f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(comm, sizeof(comm), f) == NULL)
            comm[0] = '\0';
        fclose(f);
        if (strncmp(comm, "sworn-engine", 12) == 0)
            s->engine = pid;
        else
            s->signer = pid;
    }
    closedir(dir);
}

static void stack_up(struct stack *s, const char *dir, const char *build, int batch,
                     unsigned workers)
{
    char policy[BENCH_PATH_MAX], out[BENCH_PATH_MAX], log[BENCH_PATH_MAX], w[16], env[ENV_MAX];
    char *opts[16];
    int n = 0, status;

    memset(s, 0, sizeof(*s));
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        bench_die_sys(dir);
    bench_join_path(policy, dir, "allow-all.yaml");
    bench_put_text(policy, bench_allow_all_policy, 0600);
    snprintf(w, sizeof(w), "%u", workers);
    bench_join_path(out, dir, "up.log");
    bench_join_path(log, dir, "cmd.log");
    bench_join_path(s->dir, dir, "stack");
    opts[n++] = "--no-tpm";
    opts[n++] = "--no-proxy";
    opts[n++] = "--policy";
    opts[n++] = policy;
    opts[n++] = "--workers";
    opts[n++] = w;
    opts[n++] = "--checkpoint-interval";
    opts[n++] = CHECKPOINT_INTERVAL;
    opts[n++] = "--receipts";
    opts[n++] = batch ? "batch" : "per-request";
    opts[n] = NULL;
    status = bench_stack_up(s->dir, source_dir, build, opts, log, out);
    if (status != 0)
        bench_die_status("scripts/dev-stack up", status, log, out);
    bench_stack_env(s->dir, env, sizeof(env));
    s->monitor = bench_stack_daemon(env, "DECISIOND_PID");
    bench_env_value(env, "DECISION_SOCKET", s->sock, sizeof(s->sock));
    bench_env_value(env, "CONFIG", s->config, sizeof(s->config));
    bench_env_value(env, "SOFTHSM2_CONF", s->softhsm_conf, sizeof(s->softhsm_conf));
    bench_env_value(env, "DECISIOND_BIN", s->bin, sizeof(s->bin));
    if (s->monitor <= 0 || s->sock[0] == '\0' || s->config[0] == '\0' || s->bin[0] == '\0')
        bench_die_msg("stack.env lacks the daemon's pid, socket, configuration or binary");
    find_children(s);
    if (s->engine <= 0 || s->signer <= 0)
        bench_die_msg("the daemon's engine or signer process is not running");
}

/* ---------------------------------------------------------------------------------------------
 * Clients: one connection each, one request in flight; every reply an allow with a receipt.
 */

struct client {
    const struct stack *st;
    int id;
    unsigned n;
    uint64_t seq;
    struct sworn_dclient dc;
    pthread_t thread;
};

static void client_open(struct client *c, const struct stack *s, int id)
{
    memset(c, 0, sizeof(*c));
    c->st = s;
    c->id = id;
    sworn_dclient_init(&c->dc);
    if (sworn_dclient_connect(&c->dc, s->sock) < 0)
        bench_die_lib("connect to the decision socket");
}

static void decide_one(struct client *c)
{
    struct bench_request b;
    Sworn__V1__DecisionReply *r = NULL;
    char id[64];

    snprintf(id, sizeof(id), "bench-%u-%d-%llu", c->st->run, c->id, (unsigned long long)c->seq++);
    bench_request_init(&b, id);
    if (sworn_dclient_decide(&c->dc, &b.req, SWORN_DCLIENT_FOREVER, &r) < 0)
        bench_die_lib("a decision");
    if (r->body_case != SWORN__V1__DECISION_REPLY__BODY_DECISION ||
        r->decision->effect != SWORN__V1__EFFECT__EFFECT_ALLOW || r->decision->receipt == NULL ||
        strcmp(r->decision->request_id, id) != 0) {
        fprintf(stderr, "bench_cpu: not an allow with a receipt for %s\n", id);
        exit(1);
    }
    sworn__v1__decision_reply__free_unpacked(r, NULL);
}

static void *client_main(void *arg)
{
    struct client *c = arg;

    for (unsigned i = 0; i < c->n; i++)
        decide_one(c);
    return NULL;
}

/* n decisions spread over k connections (new ones), all answered when this returns. */
static void decide(struct stack *s, unsigned n, int k)
{
    struct client *cs = calloc((size_t)k, sizeof(*cs));

    if (cs == NULL)
        bench_die_msg("out of memory");
    s->run++;
    for (int i = 0; i < k; i++) {
        client_open(&cs[i], s, i);
        cs[i].n = n / (unsigned)k + ((unsigned)i < n % (unsigned)k);
    }
    if (k == 1) {
        client_main(&cs[0]);
    } else {
        for (int i = 0; i < k; i++)
            bench_check_pt(pthread_create(&cs[i].thread, NULL, client_main, &cs[i]),
                           "pthread_create");
        for (int i = 0; i < k; i++)
            bench_check_pt(pthread_join(cs[i].thread, NULL), "pthread_join");
    }
    for (int i = 0; i < k; i++)
        sworn_dclient_close(&cs[i].dc);
    free(cs);
}

/* ---------------------------------------------------------------------------------------------
 * The cpu window: /proc.
 */

struct proc_use {
    double user, sys;            /* seconds */
    unsigned long long vcs, ics; /* context switches, all threads */
};

static void proc_use(pid_t pid, struct proc_use *u)
{
    char path[512], buf[1024], line[256];
    DIR *dir;
    struct dirent *e;
    unsigned long long ut = 0, st = 0;
    long hz = sysconf(_SC_CLK_TCK);
    char *p;
    FILE *f;

    memset(u, 0, sizeof(*u));
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (f == NULL || fgets(buf, sizeof(buf), f) == NULL)
        bench_die_sys(path);
    fclose(f);
    /* After the command's closing parenthesis: state is field 3, utime 14, stime 15. */
    p = strrchr(buf, ')');
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        bench_die_msg("cannot parse /proc/PID/stat");
    u->user = (double)ut / (double)hz;
    u->sys = (double)st / (double)hz;
    snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
    dir = opendir(path);
    if (dir == NULL)
        bench_die_sys(path);
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/task/%s/status", (long)pid, e->d_name);
        f = fopen(path, "r");
        if (f == NULL)
            continue; /* a thread that ended */
        while (fgets(line, sizeof(line), f) != NULL) {
            if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
                u->vcs += strtoull(line + 24, NULL, 10);
            else if (strncmp(line, "nonvoluntary_ctxt_switches:", 27) == 0)
                u->ics += strtoull(line + 27, NULL, 10);
        }
        fclose(f);
    }
    closedir(dir);
}

struct cpu_row {
    double engine_user, engine_sys, signer_user, signer_sys; /* us per decision */
    double engine_cs, signer_cs;                             /* switches per decision */
};

static void cpu_window(struct stack *s, unsigned n, int k, struct cpu_row *row)
{
    struct proc_use e0, e1, s0, s1;

    decide(s, WARMUP, k);
    proc_use(s->engine, &e0);
    proc_use(s->signer, &s0);
    decide(s, n, k);
    proc_use(s->engine, &e1);
    proc_use(s->signer, &s1);
    row->engine_user = (e1.user - e0.user) * 1e6 / n;
    row->engine_sys = (e1.sys - e0.sys) * 1e6 / n;
    row->signer_user = (s1.user - s0.user) * 1e6 / n;
    row->signer_sys = (s1.sys - s0.sys) * 1e6 / n;
    row->engine_cs = (double)(e1.vcs + e1.ics - e0.vcs - e0.ics) / n;
    row->signer_cs = (double)(s1.vcs + s1.ics - s0.vcs - s0.ics) / n;
}

/* ---------------------------------------------------------------------------------------------
 * The strace window.
 */

struct sys_count {
    char name[32];
    unsigned long long calls;
};

struct strace_row {
    double per_decision;
    struct sys_count top[TOP_SYSCALLS];
    int n_top;
};

/* Is every thread of pid traced now (TracerPid set)? */
static int all_traced(pid_t pid)
{
    char path[512], line[256];
    DIR *dir;
    struct dirent *e;
    int all = 1;

    snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
    dir = opendir(path);
    if (dir == NULL)
        bench_die_sys(path);
    while (all && (e = readdir(dir)) != NULL) {
        FILE *f;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/task/%s/status", (long)pid, e->d_name);
        f = fopen(path, "r");
        if (f == NULL)
            continue;
        while (fgets(line, sizeof(line), f) != NULL)
            if (strncmp(line, "TracerPid:", 10) == 0 && atol(line + 10) == 0)
                all = 0;
        fclose(f);
    }
    closedir(dir);
    return all;
}

static int cmp_calls(const void *a, const void *b)
{
    const struct sys_count *x = a, *y = b;

    return x->calls < y->calls ? 1 : x->calls > y->calls ? -1 : 0;
}

/* strace -c's table: "% time seconds usecs/call calls [errors] syscall", then "total". */
static void strace_parse(const char *path, unsigned n, struct strace_row *row)
{
    static struct sys_count all[512];
    char line[512];
    int m = 0;
    FILE *f = fopen(path, "r");

    if (f == NULL)
        bench_die_sys(path);
    memset(row, 0, sizeof(*row));
    while (fgets(line, sizeof(line), f) != NULL) {
        char *tok[8];
        int nt = 0;

        for (char *t = strtok(line, " \t\n"); t != NULL && nt < 8; t = strtok(NULL, " \t\n"))
            tok[nt++] = t;
        if (nt < 5 || !isdigit((unsigned char)tok[0][0]))
            continue;
        if (strcmp(tok[nt - 1], "total") == 0) {
            row->per_decision = (double)strtoull(tok[3], NULL, 10) / n;
            continue;
        }
        if (m < (int)(sizeof(all) / sizeof(all[0]))) {
            snprintf(all[m].name, sizeof(all[m].name), "%s", tok[nt - 1]);
            all[m].calls = strtoull(tok[3], NULL, 10);
            m++;
        }
    }
    fclose(f);
    qsort(all, (size_t)m, sizeof(all[0]), cmp_calls);
    row->n_top = m < TOP_SYSCALLS ? m : TOP_SYSCALLS;
    memcpy(row->top, all, (size_t)row->n_top * sizeof(all[0]));
}

static void strace_window(struct stack *s, const char *dir, unsigned n, struct strace_row *row)
{
    char out[BENCH_PATH_MAX], log[BENCH_PATH_MAX], e[24], g[24];
    double t0;
    pid_t pid;
    int status;

    decide(s, WARMUP, 1);
    bench_join_path(out, dir, "strace.txt");
    bench_join_path(log, dir, "strace.log");
    snprintf(e, sizeof(e), "%ld", (long)s->engine);
    snprintf(g, sizeof(g), "%ld", (long)s->signer);
    {
        char *argv[] = {"strace", "-f", "-c", "-o", out, "-p", e, "-p", g, NULL};

        pid = bench_spawn(argv, log, NULL);
    }
    t0 = bench_now();
    while (!all_traced(s->engine) || !all_traced(s->signer)) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            bench_die_status("strace", status, log, NULL);
        if (bench_now() - t0 > 30)
            bench_die_msg("strace did not attach in 30 s");
        bench_sleep_ms(10);
    }
    decide(s, n, 1);
    if (kill(pid, SIGINT) != 0)
        bench_die_sys("kill strace");
    status = bench_wait(pid, "waitpid strace");
    if (!WIFEXITED(status) && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT))
        bench_die_status("strace", status, log, NULL);
    strace_parse(out, n, row);
}

/* ---------------------------------------------------------------------------------------------
 * The callgrind window: the daemon under valgrind, and its dump read back.
 */

enum module {
    M_SWORN,
    M_SQLITE,
    M_PROTOBUF,
    M_OPENSSL,
    M_LIBEVENT,
    M_JSONC,
    M_LIBC,
    M_SOFTHSM,
    M_OTHER,
    M_COUNT
};

static const char *const module_names[M_COUNT] = {"sworn (its own code)",
                                                  "sqlite",
                                                  "protobuf-c",
                                                  "openssl",
                                                  "libevent",
                                                  "json-c",
                                                  "libc",
                                                  "softhsm",
                                                  "other"};

static enum module module_of(const char *ob)
{
    const char *b = strrchr(ob, '/');

    b = b != NULL ? b + 1 : ob;
    if (strstr(b, "sworn-") == b)
        return M_SWORN;
    if (strstr(b, "libsqlite3") != NULL)
        return M_SQLITE;
    if (strstr(b, "libprotobuf-c") != NULL)
        return M_PROTOBUF;
    if (strstr(b, "libcrypto") != NULL || strstr(b, "libssl") != NULL)
        return M_OPENSSL;
    if (strstr(b, "libevent") != NULL)
        return M_LIBEVENT;
    if (strstr(b, "libjson-c") != NULL)
        return M_JSONC;
    if (strstr(b, "libc.so") != NULL || strstr(b, "ld-linux") != NULL ||
        strstr(b, "libm.so") != NULL)
        return M_LIBC;
    if (strstr(b, "softhsm") != NULL || strstr(b, "p11-kit") != NULL)
        return M_SOFTHSM;
    return M_OTHER;
}

struct fn_cost {
    char *name;
    int ob; /* the object its cost was counted in */
    unsigned long long ir;
};

struct cg_profile {
    unsigned long long total, by_module[M_COUNT];
    struct fn_cost *fns;
    size_t n_fns;
};

/* A name table of callgrind's compressed names: "(id) name" defines, "(id)" refers. */
struct names {
    char **v;
    size_t cap;
};

static int name_ref(struct names *t, const char *s)
{
    char *end;
    long id;

    if (s[0] != '(')
        return -1; /* uncompressed names are not written by callgrind with its defaults */
    id = strtol(s + 1, &end, 10);
    if (*end != ')' || id < 0 || id > 10000000)
        return -1;
    if ((size_t)id >= t->cap) {
        size_t cap = (size_t)id * 2 + 16;
        char **v = realloc(t->v, cap * sizeof(*v));

        if (v == NULL)
            bench_die_msg("out of memory");
        memset(v + t->cap, 0, (cap - t->cap) * sizeof(*v));
        t->v = v;
        t->cap = cap;
    }
    if (end[1] == ' ' && t->v[id] == NULL) {
        t->v[id] = strdup(end + 2);
        if (t->v[id] == NULL)
            bench_die_msg("out of memory");
    }
    return (int)id;
}

/*
 * Self cost by object and by function of one callgrind output file (positions "line", one event,
 * Ir). A cost line right after "calls=" is the call's inclusive cost, which is not self cost.
 */
static void cg_read(const char *path, struct cg_profile *p)
{
    struct names obs = {0}, fns = {0};
    unsigned long long *fn_ir = NULL, *ob_ir = NULL;
    int *fn_ob = NULL;
    size_t fn_cap = 0, ob_cap = 0;
    int ob = -1, fn = -1, skip = 0;
    char line[8192];
    FILE *f = fopen(path, "r");

    if (f == NULL)
        bench_die_sys(path);
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "ob=", 3) == 0) {
            ob = name_ref(&obs, line + 3);
        } else if (strncmp(line, "cob=", 4) == 0) {
            (void)name_ref(&obs, line + 4);
        } else if (strncmp(line, "fn=", 3) == 0) {
            fn = name_ref(&fns, line + 3);
        } else if (strncmp(line, "cfn=", 4) == 0) {
            (void)name_ref(&fns, line + 4);
        } else if (strncmp(line, "calls=", 6) == 0) {
            skip = 1;
        } else if (isdigit((unsigned char)line[0]) || line[0] == '+' || line[0] == '-' ||
                   line[0] == '*') {
            char *sp = strchr(line, ' ');
            unsigned long long ir = sp != NULL ? strtoull(sp + 1, NULL, 10) : 0;

            if (skip) {
                skip = 0;
                continue;
            }
            if (fn < 0 || ob < 0)
                continue;
            if ((size_t)fn >= fn_cap) {
                size_t cap = (size_t)fn * 2 + 16;

                fn_ir = realloc(fn_ir, cap * sizeof(*fn_ir));
                fn_ob = realloc(fn_ob, cap * sizeof(*fn_ob));
                if (fn_ir == NULL || fn_ob == NULL)
                    bench_die_msg("out of memory");
                memset(fn_ir + fn_cap, 0, (cap - fn_cap) * sizeof(*fn_ir));
                fn_cap = cap;
            }
            if ((size_t)ob >= ob_cap) {
                size_t cap = (size_t)ob * 2 + 16;

                ob_ir = realloc(ob_ir, cap * sizeof(*ob_ir));
                if (ob_ir == NULL)
                    bench_die_msg("out of memory");
                memset(ob_ir + ob_cap, 0, (cap - ob_cap) * sizeof(*ob_ir));
                ob_cap = cap;
            }
            fn_ir[fn] += ir;
            fn_ob[fn] = ob;
            ob_ir[ob] += ir;
            p->total += ir;
        }
    }
    fclose(f);
    for (size_t i = 0; i < ob_cap; i++)
        if (ob_ir[i] > 0)
            p->by_module[module_of(i < obs.cap && obs.v[i] != NULL ? obs.v[i] : "?")] += ob_ir[i];
    for (size_t i = 0; i < fn_cap; i++) {
        struct fn_cost *v;
        const char *name, *obn, *b;
        char full[512];

        if (fn_ir[i] == 0)
            continue; /* fn_ob[i] is set only where a cost was counted */
        name = i < fns.cap && fns.v[i] != NULL ? fns.v[i] : "?";
        obn = fn_ob[i] >= 0 && fn_ob[i] < (int)obs.cap && obs.v[fn_ob[i]] ? obs.v[fn_ob[i]] : "?";
        b = strrchr(obn, '/');
        v = realloc(p->fns, (p->n_fns + 1) * sizeof(*v));
        if (v == NULL)
            bench_die_msg("out of memory");
        p->fns = v;
        snprintf(full, sizeof(full), "%s (%s)", name, b != NULL ? b + 1 : obn);
        p->fns[p->n_fns].name = strdup(full);
        p->fns[p->n_fns].ob = fn_ob[i];
        p->fns[p->n_fns].ir = fn_ir[i];
        if (p->fns[p->n_fns].name == NULL)
            bench_die_msg("out of memory");
        p->n_fns++;
    }
    for (size_t i = 0; i < obs.cap; i++)
        free(obs.v[i]);
    for (size_t i = 0; i < fns.cap; i++)
        free(fns.v[i]);
    free(obs.v);
    free(fns.v);
    free(fn_ir);
    free(fn_ob);
    free(ob_ir);
}

static void cg_free(struct cg_profile *p)
{
    for (size_t i = 0; i < p->n_fns; i++)
        free(p->fns[i].name);
    free(p->fns);
    memset(p, 0, sizeof(*p));
}

static int cmp_ir(const void *a, const void *b)
{
    const struct fn_cost *x = a, *y = b;

    return x->ir < y->ir ? 1 : x->ir > y->ir ? -1 : 0;
}

struct cg_row {
    unsigned n;
    struct cg_profile engine, signer;
};

/* The configuration with `seccomp: off` after `development: true` (dev-stack writes that line). */
static void config_without_seccomp(const char *path)
{
    static char text[1 << 16], out[(1 << 16) + 64];
    const char *key = "  development: true\n";
    size_t len = 0;
    char *at;

    bench_read_small(path, (uint8_t *)text, sizeof(text), &len);
    at = strstr(text, key);
    if (at == NULL)
        bench_die_msg("the stack's configuration has no `development: true` line");
    at += strlen(key);
    snprintf(out, sizeof(out), "%.*s  seccomp: off\n%s", (int)(at - text), text, at);
    bench_put_text(path, out, 0600);
}

/* Is pid gone (or a zombie nobody reaped yet)? */
static int gone(pid_t pid)
{
    char path[64], buf[512], *p;
    FILE *f;
    int z;

    if (kill(pid, 0) != 0)
        return 1;
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 1;
    z = fgets(buf, sizeof(buf), f) != NULL && (p = strrchr(buf, ')')) != NULL && p[2] == 'Z';
    fclose(f);
    return z;
}

static void stop_pid(pid_t pid, const char *what)
{
    double t0 = bench_now();

    if (kill(pid, SIGTERM) != 0 && errno != ESRCH)
        bench_die_sys(what);
    while (!gone(pid)) {
        if (bench_now() - t0 > STOP_SECONDS)
            bench_die_msg("the daemon did not stop");
        bench_sleep_ms(20);
    }
}

static int count_ready(const char *log)
{
    char line[4096];
    int n = 0;
    FILE *f = fopen(log, "r");

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        n += strstr(line, "\"event\":\"ready\"") != NULL;
    fclose(f);
    return n;
}

static void callgrind_control(const char *dir, const char *flag, pid_t pid)
{
    char p[24];
    char *argv[] = {"callgrind_control", (char *)flag, p, NULL};

    snprintf(p, sizeof(p), "%ld", (long)pid);
    bench_run(dir, argv, NULL);
}

static void callgrind_window(struct stack *s, const char *dir, unsigned n, struct cg_row *row)
{
    char out[BENCH_PATH_MAX], log[BENCH_PATH_MAX], vglog[BENCH_PATH_MAX], dump[BENCH_PATH_MAX + 64],
        cfgarg[BENCH_PATH_MAX];
    double t0;

    stop_pid(s->monitor, "kill the daemon");
    config_without_seccomp(s->config);
    bench_join_path(out, dir, "callgrind.out.%p");
    bench_join_path(log, dir, "callgrind-decisiond.log");
    bench_join_path(vglog, dir, "valgrind.%p.log");
    snprintf(cfgarg, sizeof(cfgarg), "%s", s->config);
    if (s->softhsm_conf[0] != '\0' && setenv("SOFTHSM2_CONF", s->softhsm_conf, 1) != 0)
        bench_die_sys("setenv");
    {
        char o[BENCH_PATH_MAX + 32], l[BENCH_PATH_MAX + 16];
        char *argv[] = {"valgrind",
                        "--tool=callgrind",
                        "--trace-children=yes",
                        "--dump-instr=no",
                        o,
                        l,
                        s->bin,
                        "--config",
                        cfgarg,
                        NULL};

        snprintf(o, sizeof(o), "--callgrind-out-file=%s", out);
        snprintf(l, sizeof(l), "--log-file=%s", vglog);
        s->monitor = bench_spawn(argv, log, "/dev/null");
    }
    t0 = bench_now();
    while (count_ready(log) < 1) {
        int status;

        if (waitpid(s->monitor, &status, WNOHANG) == s->monitor)
            bench_die_status("sworn-decisiond under valgrind", status, log, NULL);
        if (bench_now() - t0 > READY_SECONDS)
            bench_die_msg("the daemon under valgrind did not become ready");
        bench_sleep_ms(100);
    }
    find_children(s);
    if (s->engine <= 0 || s->signer <= 0)
        bench_die_msg("under valgrind: the engine or the signer process is not running");
    decide(s, WARMUP / 4, 1);
    callgrind_control(dir, "-z", s->engine);
    callgrind_control(dir, "-z", s->signer);
    decide(s, n, 1);
    callgrind_control(dir, "-d", s->engine);
    callgrind_control(dir, "-d", s->signer);
    row->n = n;
    memset(&row->engine, 0, sizeof(row->engine));
    memset(&row->signer, 0, sizeof(row->signer));
    snprintf(dump, sizeof(dump), "%s/callgrind.out.%ld.1", dir, (long)s->engine);
    cg_read(dump, &row->engine);
    snprintf(dump, sizeof(dump), "%s/callgrind.out.%ld.1", dir, (long)s->signer);
    cg_read(dump, &row->signer);
    if (kill(s->monitor, SIGTERM) != 0)
        bench_die_sys("kill the daemon under valgrind");
    (void)bench_wait(s->monitor, "waitpid valgrind");
}

/* By module for the engine and the signer (NULL: none), then the engine's costliest functions. */
static void print_profile(const struct cg_profile *engine, const struct cg_profile *signer,
                          unsigned m)
{
    struct fn_cost *all;
    size_t k = engine->n_fns;

    printf("  %-22s %12s %12s\n", "module", "engine Ir", "signer Ir");
    for (int i = 0; i < M_COUNT; i++)
        printf("  %-22s %12.0f %12.0f\n", module_names[i], (double)engine->by_module[i] / m,
               signer != NULL ? (double)signer->by_module[i] / m : 0.0);
    all = malloc((k + 1) * sizeof(*all));
    if (all == NULL)
        bench_die_msg("out of memory");
    memcpy(all, engine->fns, k * sizeof(*all));
    qsort(all, k, sizeof(*all), cmp_ir);
    printf("  the engine's costliest functions (self Ir per decision):\n");
    for (size_t i = 0; i < k && i < TOP_FUNCTIONS; i++)
        printf("    %10.0f  %s\n", (double)all[i].ir / m, all[i].name);
    free(all);
}

/* ---------------------------------------------------------------------------------------------
 * One variant (build, mode), and the report.
 */

struct variant {
    char label[64];
    const char *build;
    int batch;
    int have_cg, have_st;
    struct cpu_row one, many;
    struct strace_row st;
    struct cg_row cg;
};

static void run_variant(struct variant *v, const char *top, unsigned n, unsigned workers, int do_cg,
                        int do_st)
{
    char dir[BENCH_PATH_MAX];
    struct stack s;

    bench_join_path(dir, top, v->label);
    printf("\n#### %s: scripts/dev-stack up --no-tpm --no-proxy --receipts %s --workers %u "
           "--checkpoint-interval %s --build %s\n",
           v->label, v->batch ? "batch" : "per-request", workers, CHECKPOINT_INTERVAL, v->build);
    fflush(stdout);
    stack_up(&s, dir, v->build, v->batch, workers);
    cpu_window(&s, n, 1, &v->one);
    cpu_window(&s, n, CLIENTS_MANY, &v->many);
    printf("cpu, 1 client:   engine %.1f us user + %.1f us sys, signer %.1f + %.1f us; "
           "context switches: engine %.2f, signer %.2f per decision\n",
           v->one.engine_user, v->one.engine_sys, v->one.signer_user, v->one.signer_sys,
           v->one.engine_cs, v->one.signer_cs);
    printf("cpu, %d clients: engine %.1f us user + %.1f us sys, signer %.1f + %.1f us; "
           "context switches: engine %.2f, signer %.2f per decision\n",
           CLIENTS_MANY, v->many.engine_user, v->many.engine_sys, v->many.signer_user,
           v->many.signer_sys, v->many.engine_cs, v->many.signer_cs);
    fflush(stdout);
    if (do_st) {
        strace_window(&s, dir, n, &v->st);
        v->have_st = 1;
        printf("system calls per decision (strace -f -c, engine and signer, 1 client): %.2f;",
               v->st.per_decision);
        for (int i = 0; i < v->st.n_top; i++)
            printf(" %s %.2f", v->st.top[i].name, (double)v->st.top[i].calls / n);
        printf("\n");
        fflush(stdout);
    }
    if (do_cg) {
        unsigned m = n / CALLGRIND_DIV < CALLGRIND_MIN ? CALLGRIND_MIN : n / CALLGRIND_DIV;

        callgrind_window(&s, dir, m, &v->cg);
        v->have_cg = 1;
        printf("instructions per decision (callgrind, 1 client, %u decisions): engine %.0f, "
               "signer %.0f, both %.0f\n",
               m, (double)v->cg.engine.total / m, (double)v->cg.signer.total / m,
               (double)(v->cg.engine.total + v->cg.signer.total) / m);
        print_profile(&v->cg.engine, &v->cg.signer, m);
        fflush(stdout);
    }
    bench_stack_down();
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

static void summary(const struct variant *v, int nv, unsigned n)
{
    printf("\n#### summary (per decision; ratio: this build / the baseline's, same run)\n");
    printf("%-26s %10s %10s %10s %10s %8s %12s %8s\n", "variant", "cpu us 1c", "sys us 1c",
           "cpu us 16c", "syscalls", "cs 1c", "Ir (cg)", "ratio");
    for (int i = 0; i < nv; i++) {
        const struct variant *x = &v[i];
        double one =
            x->one.engine_user + x->one.engine_sys + x->one.signer_user + x->one.signer_sys;
        double many =
            x->many.engine_user + x->many.engine_sys + x->many.signer_user + x->many.signer_sys;
        double ir = x->have_cg ? (double)(x->cg.engine.total + x->cg.signer.total) / x->cg.n : 0;
        char r[32] = "";

        /* The baseline of a variant is the variant of the same mode measured first. */
        for (int j = 0; j < i; j++)
            if (v[j].batch == x->batch && v[j].build != x->build && x->have_cg)
                snprintf(
                    r, sizeof(r), "%.2fx",
                    ratio(ir, (double)(v[j].cg.engine.total + v[j].cg.signer.total) / v[j].cg.n));
        printf("%-26s %10.1f %10.1f %10.1f %10.2f %8.2f %12.0f %8s\n", x->label, one,
               x->one.engine_sys + x->one.signer_sys, many, x->have_st ? x->st.per_decision : 0,
               x->one.engine_cs + x->one.signer_cs, ir, r);
    }
    printf("(cpu: engine + signer, user + system, /proc; %u decisions a window; Ir: user-space "
           "instructions, engine + signer)\n",
           n);
}

static _Noreturn void usage(void)
{
    fprintf(stderr, "usage: bench_cpu DIR [--decisions N] [--receipts per-request|batch|both] "
                    "[--build DIR] [--baseline DIR] [--source DIR] [--workers N] "
                    "[--no-callgrind] [--no-strace]   (DIR absolute)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *build = SWORN_BENCH_BUILD_DIR, *baseline = NULL, *receipts = "both";
    unsigned n = 2000, workers = 4;
    int do_cg = 1, do_st = 1, nv = 0;
    static struct variant v[MAX_VARIANTS];

    bench_init("bench_cpu");
    for (int i = 1; i < argc; i++) {
        int has = i + 1 < argc;

        if (argv[i][0] != '-') {
            if (dir != NULL)
                usage();
            dir = argv[i];
        } else if (strcmp(argv[i], "--decisions") == 0 && has) {
            n = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--receipts") == 0 && has) {
            receipts = argv[++i];
        } else if (strcmp(argv[i], "--build") == 0 && has) {
            build = argv[++i];
        } else if (strcmp(argv[i], "--baseline") == 0 && has) {
            baseline = argv[++i];
        } else if (strcmp(argv[i], "--source") == 0 && has) {
            source_dir = argv[++i];
        } else if (strcmp(argv[i], "--workers") == 0 && has) {
            workers = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--no-callgrind") == 0) {
            do_cg = 0;
        } else if (strcmp(argv[i], "--read-callgrind") == 0 && i + 2 < argc) {
            /* A callgrind output file of the engine, read for N decisions, and nothing else. */
            struct cg_profile p = {0};
            unsigned k = (unsigned)strtoul(argv[i + 2], NULL, 10);

            cg_read(argv[i + 1], &p);
            printf("instructions per decision: %.0f\n", (double)p.total / (k ? k : 1));
            print_profile(&p, NULL, k ? k : 1);
            cg_free(&p);
            return 0;
        } else if (strcmp(argv[i], "--no-strace") == 0) {
            do_st = 0;
        } else {
            usage();
        }
    }
    if (dir == NULL || dir[0] != '/' || n < 100 || workers < 1 ||
        (strcmp(receipts, "per-request") != 0 && strcmp(receipts, "batch") != 0 &&
         strcmp(receipts, "both") != 0))
        usage();
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) /* DIR itself; each variant's folder in it */
        bench_die_sys(dir);
    bench_signals_install();
    for (int b = baseline != NULL ? 0 : 1; b < 2; b++)
        for (int m = 0; m < 2; m++) {
            if ((m == 0 && strcmp(receipts, "batch") == 0) ||
                (m == 1 && strcmp(receipts, "per-request") == 0))
                continue;
            v[nv].build = b == 0 ? baseline : build;
            v[nv].batch = m;
            snprintf(v[nv].label, sizeof(v[nv].label), "%s-%s", b == 0 ? "baseline" : "this",
                     m ? "batch" : "per-request");
            nv++;
        }
    printf("bench_cpu: %u decisions a window (callgrind: %u), %u workers", n,
           n / CALLGRIND_DIV < CALLGRIND_MIN ? CALLGRIND_MIN : n / CALLGRIND_DIV, workers);
    bench_print_load();
    printf("\n");
    for (int i = 0; i < nv; i++)
        run_variant(&v[i], dir, n, workers, do_cg, do_st);
    summary(v, nv, n);
    for (int i = 0; i < nv; i++) {
        cg_free(&v[i].cg.engine);
        cg_free(&v[i].cg.signer);
    }
    return 0;
}
