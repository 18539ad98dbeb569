/*
 * bench_decisiond.c -- sworn-decisiond under load, over its real decision socket: decisions per
 * second and latency with N concurrent clients, next to the raw signing rate of the same key and
 * the fdatasync rate of the same filesystem, measured in the same run; the p99 latency at half the
 * peak rate (open loop); and the daemon's memory as its log grows.
 *
 * Usage: bench_decisiond DIR [options]
 *   DIR              an existing folder (absolute); each stack goes into DIR/<variant>
 *                    (scripts/bench makes DIR and removes it afterwards)
 *   --stacks LIST    a comma-separated list of notpm, tpm and tpmkey, or both (notpm,tpm) or all
 *                    (the default): the dev stack with its SoftHSM key without swtpm (notpm) and
 *                    with swtpm quoting every checkpoint (tpm: the decision path is the same; the
 *                    quotes run on the checkpoint thread and compete for the CPU), and the stack
 *                    whose signing key is a TPM key on swtpm (tpmkey: dev-stack --tpm-key; its
 *                    checkpoints are not quoted)
 *   --entries N      grow the log by N decisions and print the daemon's RSS at every tenth of the
 *                    way (default 30000; 1000000 for the "a million entries"); 0: skip.
 *                    On the notpm stack, and on the tpmkey stack with batch receipts (one TPM
 *                    signature per allow would take minutes).
 *   --seconds S      measured time per closed-loop point (default 1.5)
 *   --workers N      decisiond's worker threads (default 4, the dev stack's default)
 *   --receipts MODE  per-request, batch or both (default both): decisiond's `receipts:` (one
 *                    signature per allow, or one per commit group, docs/formats.md section 14);
 *                    each mode is measured on its own stack (DIR/<stack>-<mode>)
 *   --checkpoint-interval D   passed to dev-stack (default 1s, its default): how often the
 *                    checkpoint thread signs, exports tiles (and quotes)
 *   --build DIR      the build folder holding decisiond/sworn-decisiond and hsm/sworn-hsm
 *                    (default: the one this bench was built in)
 *   --source DIR     the source folder holding scripts/dev-stack (default: this bench's source)
 *   --before-build DIR   instead of all of the above, the tail before and after: another build
 *                    folder (an older daemon, e.g. a build of main) against --build, measured in
 *                    one run (below, "tail"), per stack and receipts mode selected
 *   --tail-age S     with --before-build: seconds of closed loop on each stack before it is
 *                    measured (default 20, about what the sweep above puts on a stack)
 *
 * Each stack is started with scripts/dev-stack (SoftHSM token with a generated P-256 key, as an
 * operator's dev stack, or with --tpm-key a P-256 key persisted in swtpm) and a policy that allows
 * every request, and each stack is measured by a new process of this program (`--variant V
 * DIR/V`): SoftHSM reads its configuration once per process, and the stacks have a token each. The
 * stack is stopped (`dev-stack down`) at the end, after an error too (atexit), and on SIGINT,
 * SIGTERM or SIGHUP the daemon and swtpm are killed.
 *
 * What is measured, per stack:
 *   baselines  before every closed-loop point, each for BASE_SECONDS, with the daemon idle: the
 *              raw signing rate of the stack's own key (sworn_signer_sign on the same token, with
 *              inline device calls, one thread: the fastest way through the library); the same
 *              key through a signer process (sworn_signer_proc_sign, one caller: what the daemon
 *              does for every allow, and the daemon has one signer process); and 4 KiB pwrite +
 *              fdatasync on a preallocated file in the stack's folder (how the log's sqlite
 *              syncs its WAL). A TPM key on swtpm is the exception: swtpm serves one connection
 *              at a time and the daemon's signer process holds it, so the bench stops the daemon
 *              (`dev-stack stop`), measures the signer figures below with the raw signer and the
 *              signer process taking turns on the key, and starts the daemon again (`dev-stack
 *              start`); every point then uses those raw and signer-process rates, and after the
 *              run the daemon is stopped again and the raw rate measured once more (printed, to
 *              show the drift). The fsync baseline is still taken before every point.
 *   signer     once per stack, with the daemon idle: the key's raw signing rate (as above) and
 *              its rate through one signer process shared by 1, 2, 4 and 8 calling threads
 *              (pipelined requests, signerproc.h), each as a ratio to raw; PIPE_ROUNDS rounds of
 *              BASE_SECONDS per figure, taking turns. Target: 2+ callers >= TARGET_PROC_RATIO x raw
 *   log commits  once per stack, after the closed loop, with the daemon idle: 1, LOG_THREADS and
 *              MAX_CLIENTS threads appending one entry per call to a new log database in the
 *              stack's folder through the log library (sworn_log_append, its group commit) for
 *              LOG_SECONDS each, each after an fdatasync baseline (bench_log_commits in
 *              benchutil.c, the measurement bench_log prints too): entries/s, and with one
 *              thread the bytes sqlite wrote per entry byte (benchutil's counting VFS). The larger
 *              rate of LOG_THREADS and MAX_CLIENTS threads is the log's own group-commit rate
 *   closed loop  N = 1, 2, 4, 8, 16, 32 client threads, each with its own persistent connection:
 *              send an AuthorizationRequest, wait for its DecisionReply, repeat. Decisions/s, and
 *              p50, p99, p99.9 latency (send to answer). Every reply must be an ALLOW with a
 *              receipt and the request's id; the first reply of every connection is also decoded
 *              strictly (frame.h) and its receipt verified against the pinned SPKI.
 *   cpu        per closed-loop point, the CPU time per decision of the daemon (the monitor and
 *              its engine, all threads), its signer process and this program (the clients), and
 *              how busy the whole machine was (/proc/stat, other work included): what bounds the
 *              rate
 *   open loop  at half the peak closed-loop rate: as many paced senders as the peak had clients
 *              (at least OPEN_SENDERS), each with its own
 *              connection, each sending on a fixed schedule (its share of the rate); latency is
 *              counted from the scheduled send time, so a late answer also delays (and counts in)
 *              the next request (no coordinated omission).
 *   memory     (notpm; tpmkey with batch receipts) the closed loop with MEM_CLIENTS clients
 *              until the log has grown by --entries; VmRSS of the daemon (/proc/PID/status of the
 *              monitor and its engine, the signer process apart) at every tenth.
 *   tail       (--before-build only) four stacks up at once: the --before-build daemon and this
 *              build's, each with checkpoints every --checkpoint-interval and with checkpoints
 *              effectively off (TAIL_OFF_INTERVAL); each stack is held up by a process of its
 *              own (`--variant keep-...`). The rate is half the lower of the two daemons' closed-
 *              loop peaks (16 and 32 clients, checkpoints on); the open loop (as above) runs on
 *              the four in turns, TAIL_ROUNDS rounds with the order rotated, and p50/p99/p99.9 are
 *              printed per turn and over all rounds, with after / before and the checkpoints'
 *              share of p99 (on minus off) for each daemon.
 * Targets (issue 17's table), printed at the end in one summary table, per stack and receipt
 * mode, each row with its figure, its target and met or MISSED (each variant writes its rows to
 * DIR/<variant>/summary.tsv; the parent prints them all):
 *   peak decisions/s, one signature per allow       >= TARGET_SIGN_RATIO x raw signing
 *   signer process, 2, 4 and 8 callers (the lowest) >= TARGET_PROC_RATIO x raw signing
 *   daemon CPU per decision at the peak             <= TARGET_CPU_US (monitor and engine; the
 *                                                      signer process apart: it holds the key)
 *   p99 at half the peak rate, open loop            <= TARGET_P99_MS
 *   log, one entry per commit                       <= TARGET_LOG_BYTES x the entry bytes
 *                                                      written, >= TARGET_LOG_ONE x fdatasync/s
 *   log, LOG_THREADS threads group commit           >= TARGET_LOG_GROUP x fdatasync/s
 *   memory as the log grows                         flat: the final RSS below MEM_FLAT_FACTOR x
 *                                                      the RSS at the first tenth of the growth
 *                                                      (`-` on a stack where it is not measured)
 *   batch receipts decisions/s                      >= TARGET_BATCH_SIGN_RATIO x raw signing and
 *                                                      >= TARGET_BATCH_LOG_RATIO x the log's own
 *                                                      group-commit rate
 *
 * Exit status: 0, or 1 when a library or system call fails, the stack does not start, or a reply
 * is not the expected allow. A missed target is information, not a failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "benchreq.h"
#include "benchutil.h"
#include "err.h"
#include "dclient.h"
#include "frame.h"
#include "logstore.h"
#include "merkle.h"
#include "signerproc.h"
#include "sig_base.h"
#include "signer.h"

#define P11_MODULE "/usr/lib/softhsm/libsofthsm2.so" /* what scripts/dev-stack configures */
#define BASE_SECONDS 0.3   /* each baseline, before every closed-loop point */
#define WARMUP_SECONDS 0.3 /* untimed load before every measured window */
#define OPEN_SECONDS 4.0   /* the measured open-loop window */
#define OPEN_SENDERS 16    /* the fewest paced senders (connections) of the open loop */
#define MEM_CLIENTS 16     /* closed-loop clients while the log grows */
#define MEM_STEPS 10       /* RSS samples: one per tenth of the growth */
#define TARGET_SIGN_RATIO 0.8
#define TARGET_BATCH_SIGN_RATIO 3.0
#define TARGET_BATCH_LOG_RATIO 0.5
#define LOG_THREADS 8   /* the "log, 8 threads group commit" */
#define LOG_SECONDS 0.5 /* each log group-commit baseline */
#define LOG_ENTRY_BYTES 120
#define LOG_POOL 64 /* distinct entries the log-commit threads cycle through */
#define TARGET_P99_MS 2.0
#define TARGET_CPU_US 60.0    /* daemon CPU per decision */
#define TARGET_LOG_BYTES 4.0  /* one entry per commit: bytes written / entry bytes */
#define TARGET_LOG_ONE 0.9    /* one entry per commit: entries/s / fdatasync/s */
#define TARGET_LOG_GROUP 5.0  /* LOG_THREADS threads: entries/s / fdatasync/s */
#define TARGET_PROC_RATIO 0.9 /* signer process with 2+ callers / raw signing (issue 17) */
#define PIPE_ROUNDS 3         /* rounds of the signer-process figures, taking turns */
#define MEM_FLAT_FACTOR 2.0
#define MAX_CLIENTS 64
#define FSYNC_FILE_BYTES (4u * 1024u * 1024u)
#define FSYNC_BLOCK 4096u
#define ENV_VALUE_MAX 1024

static const int client_counts[] = {1, 2, 4, 8, 16, 32, 64};
#define N_POINTS (sizeof(client_counts) / sizeof(client_counts[0]))

/* The policy of the bench: every request is allowed (and so signed). */
/* ---------------------------------------------------------------------------------------------
 * The stack: scripts/dev-stack up / down, and what stack.env says.
 */

/* The stack variants (--stacks): which key signs, and whether swtpm quotes checkpoints. */
enum variant { V_NOTPM, V_TPM, V_TPMKEY, N_VARIANTS };
static const char *const variant_names[N_VARIANTS] = {"notpm", "tpm", "tpmkey"};
static const char *const variant_what[N_VARIANTS] = {
    "SoftHSM P-256 key, --no-tpm", "SoftHSM P-256 key, swtpm quoting every checkpoint",
    "TPM P-256 key on swtpm (--tpm-key), checkpoints unquoted"};

struct stack {
    char dir[BENCH_PATH_MAX];
    char sock[BENCH_PATH_MAX];
    char softhsm_conf[BENCH_PATH_MAX]; /* SoftHSM keys only */
    char uri[ENV_VALUE_MAX];           /* HSM_URI, or TPM_KEY_URI */
    char pin_file[BENCH_PATH_MAX];     /* SoftHSM keys only */
    char tcti[ENV_VALUE_MAX];          /* the TPM key's (tpmkey only) */
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len;
    pid_t daemon_pid;
    enum variant v;
    int tpm_key; /* swtpm holds the key: one connection at a time (dev-stack stop first) */
};

static const char *source_dir = SWORN_BENCH_SOURCE_DIR, *build_dir = SWORN_BENCH_BUILD_DIR;
static const char *checkpoint_interval = "1s"; /* dev-stack's default */
static int batch_mode;                         /* the variant's receipts: batch */
static pid_t main_pid;
/* The largest log index any reply carried, + 1: the log's size as the clients saw it. */
static atomic_uint_least64_t log_size_seen;

static void stack_up(struct stack *s, const char *dir, enum variant v, unsigned workers)
{
    char policy[BENCH_PATH_MAX], out[BENCH_PATH_MAX], log[BENCH_PATH_MAX],
        spki_path[BENCH_PATH_MAX], w[16], env[8192];
    uint8_t spki[SWORN_SIGNER_SPKI_MAX + 1];
    char *opts[16];
    int n = 0, status;

    memset(s, 0, sizeof(*s));
    s->v = v;
    s->tpm_key = v == V_TPMKEY;
    snprintf(s->dir, sizeof(s->dir), "%s", dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        bench_die_sys(dir);
    bench_join_path(policy, dir, "allow-all.yaml");
    bench_put_text(policy, bench_allow_all_policy, 0600);
    snprintf(w, sizeof(w), "%u", workers);
    bench_join_path(out, dir, "up.log");
    bench_join_path(log, dir, "cmd.log");
    bench_join_path(s->dir, dir, "stack");
    if (v == V_NOTPM)
        opts[n++] = "--no-tpm";
    if (v == V_TPMKEY)
        opts[n++] = "--tpm-key";
    opts[n++] = "--no-proxy"; /* decisiond alone is measured */
    opts[n++] = "--policy";
    opts[n++] = policy;
    opts[n++] = "--workers";
    opts[n++] = w;
    opts[n++] = "--checkpoint-interval";
    opts[n++] = (char *)checkpoint_interval;
    opts[n++] = "--receipts";
    opts[n++] = batch_mode ? "batch" : "per-request";
    opts[n] = NULL;
    status = bench_stack_up(s->dir, source_dir, build_dir, opts, log, out);
    if (status != 0)
        bench_die_status("scripts/dev-stack up", status, log, out);

    bench_stack_env(s->dir, env, sizeof(env));
    s->daemon_pid = bench_stack_daemon(env, "DECISIOND_PID");
    (void)bench_stack_daemon(env, "SWTPM_PID");
    bench_env_value(env, "DECISION_SOCKET", s->sock, sizeof(s->sock));
    bench_env_value(env, "SPKI_DER", spki_path, sizeof(spki_path));
    if (s->tpm_key) {
        bench_env_value(env, "TPM_KEY_URI", s->uri, sizeof(s->uri));
        bench_env_value(env, "TCTI", s->tcti, sizeof(s->tcti));
        if (s->tcti[0] == '\0')
            bench_die_msg("stack.env lacks the TPM key's TCTI");
    } else {
        bench_env_value(env, "SOFTHSM2_CONF", s->softhsm_conf, sizeof(s->softhsm_conf));
        bench_env_value(env, "HSM_URI", s->uri, sizeof(s->uri));
        bench_env_value(env, "PIN_FILE", s->pin_file, sizeof(s->pin_file));
        if (s->softhsm_conf[0] == '\0' || s->pin_file[0] == '\0')
            bench_die_msg("stack.env lacks the SoftHSM token's configuration or PIN file");
    }
    if (s->daemon_pid <= 0 || s->sock[0] == '\0' || s->uri[0] == '\0' || spki_path[0] == '\0')
        bench_die_msg("stack.env lacks the daemon's pid, socket or key");
    bench_read_small(spki_path, spki, sizeof(spki), &s->spki_len);
    if (s->spki_len == 0)
        bench_die_msg("the stack's SPKI file is empty");
    memcpy(s->spki, spki, s->spki_len);
}

/* `dev-stack stop` (stop=1) or `dev-stack start` on the stack: the daemon alone, so that a TPM key
 * on swtpm is free for this program's signers meanwhile. After a start, the new daemon's pid. */
static void stack_daemon(struct stack *s, int stop)
{
    char script[BENCH_PATH_MAX], env[8192];
    char *argv[] = {script, stop ? "stop" : "start", s->dir, NULL};

    bench_join_path(script, source_dir, "scripts/dev-stack");
    bench_run(s->dir, argv, NULL);
    if (stop) {
        s->daemon_pid = 0;
        return;
    }
    bench_stack_env(s->dir, env, sizeof(env));
    s->daemon_pid = bench_stack_daemon(env, "DECISIOND_PID");
    if (s->daemon_pid <= 0)
        bench_die_msg("stack.env lacks the restarted daemon's pid");
}

/* VmRSS (or VmHWM) of a process in KiB. */
static long proc_kib(pid_t pid, const char *field)
{
    char path[64], line[256];
    size_t flen = strlen(field);
    long kib = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        bench_die_sys(path);
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, field, flen) == 0 && line[flen] == ':')
            kib = atol(line + flen + 1);
    fclose(f);
    if (kib < 0)
        bench_die_msg("no VmRSS in /proc/PID/status: is the daemon still running?");
    return kib;
}

/* ---------------------------------------------------------------------------------------------
 * CPU time, to say what bounds a figure: the daemon (all its threads), its children (the signer
 * process), this program (the clients) and the whole machine (other work included).
 */

struct cpu_snap {
    double daemon, children, bench; /* seconds of CPU; daemon: the monitor and its engine */
    uint64_t busy, total;           /* /proc/stat jiffies, all CPUs */
};

/* 1 when pid's command is sworn-signer (/proc/PID/comm). */
static int is_signer(pid_t pid)
{
    char path[64], comm[32] = "";
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    if (fgets(comm, sizeof(comm), f) == NULL)
        comm[0] = '\0';
    fclose(f);
    return strcmp(comm, "sworn-signer\n") == 0;
}

static void cpu_snap(pid_t daemon, struct cpu_snap *c)
{
    struct timespec ts;
    unsigned long long v[8] = {0};
    DIR *dir;
    struct dirent *e;
    FILE *f;

    memset(c, 0, sizeof(*c));
    c->daemon = bench_proc_cpu(daemon, NULL);
    /* The daemon's children: its engine, counted as the daemon, and its signer process (a
     * restarted one too), which holds the key: SoftHSM's signing runs in it. */
    dir = opendir("/proc");
    if (dir == NULL)
        bench_die_sys("/proc");
    while ((e = readdir(dir)) != NULL) {
        pid_t pid = (pid_t)atol(e->d_name), ppid = 0;
        double t;

        if (pid > 0 && (t = bench_proc_cpu(pid, &ppid)) >= 0 && ppid == daemon) {
            if (is_signer(pid))
                c->children += t;
            else
                c->daemon += t;
        }
    }
    closedir(dir);
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        bench_die_sys("clock_gettime");
    c->bench = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    f = fopen("/proc/stat", "r");
    if (f == NULL)
        bench_die_sys("/proc/stat");
    /* cpu user nice system idle iowait irq softirq steal */
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) != 8)
        bench_die_msg("/proc/stat has no cpu line");
    fclose(f);
    for (int i = 0; i < 8; i++)
        c->total += v[i];
    c->busy = c->total - v[3] - v[4];
}

/* What one window cost: CPU microseconds per decision, and how busy the machine was. */
struct cpu_use {
    double daemon_us, signer_us, bench_us; /* per decision */
    double machine_busy;                   /* 0..1 of all CPUs, whoever used them */
};

static void cpu_use(const struct cpu_snap *a, const struct cpu_snap *b, uint64_t decisions,
                    struct cpu_use *u)
{
    double n = decisions > 0 ? (double)decisions : 1;

    u->daemon_us = (b->daemon - a->daemon) * 1e6 / n;
    u->signer_us = (b->children - a->children) * 1e6 / n;
    u->bench_us = (b->bench - a->bench) * 1e6 / n;
    u->machine_busy =
        b->total > a->total ? (double)(b->busy - a->busy) / (double)(b->total - a->total) : 0;
}

/* ---------------------------------------------------------------------------------------------
 * Baselines.
 */

struct baselines {
    struct sworn_signer *raw;       /* NULL while closed (a TPM key: while the daemon runs) */
    struct sworn_signer_proc *proc; /* likewise */
    int fsync_fd;
    uint64_t counter;  /* makes every digest new */
    double fixed_raw;  /* a TPM key: the rates signer_rows measured with the daemon stopped, */
    double fixed_proc; /* which every point uses */
};

struct base_rates {
    double raw, proc, fsync;
};

static void digest_of(uint64_t n, uint8_t d[32])
{
    memset(d, 0xa5, 32);
    for (int i = 0; i < 8; i++)
        d[i] = (uint8_t)(n >> (8 * i));
}

/* Signatures/s of one signer (raw != NULL) or signer process, for about BASE_SECONDS. */
static double sign_rate(struct baselines *b, int use_proc, const struct stack *s)
{
    uint8_t d[32], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len;
    double t0 = bench_now(), t;
    unsigned long n = 0;

    do {
        digest_of(b->counter++, d);
        if (use_proc ? sworn_signer_proc_sign(b->proc, SWORN_PURPOSE_RECEIPT, d, 32, sig,
                                              sizeof(sig), &sig_len)
                     : sworn_signer_sign(b->raw, SWORN_PURPOSE_RECEIPT, d, 32, sig, sizeof(sig),
                                         &sig_len))
            bench_die_lib(use_proc ? "sworn_signer_proc_sign" : "sworn_signer_sign");
        if (n == 0 && sworn_signature_verify(s->spki, s->spki_len, SWORN_PURPOSE_RECEIPT, d, 32,
                                             sig, sig_len) < 0)
            bench_die_lib("a baseline signature does not verify");
        n++;
        t = bench_now();
    } while (t - t0 < BASE_SECONDS);
    return (double)n / (t - t0);
}

static double fsync_rate(struct baselines *b)
{
    static const uint8_t block[FSYNC_BLOCK] = {1};
    double t0 = bench_now(), t;
    unsigned long n = 0;

    do {
        off_t off = (off_t)((n % (FSYNC_FILE_BYTES / FSYNC_BLOCK)) * FSYNC_BLOCK);

        if (pwrite(b->fsync_fd, block, sizeof(block), off) != (ssize_t)sizeof(block) ||
            fdatasync(b->fsync_fd) != 0)
            bench_die_sys("pwrite + fdatasync");
        n++;
        t = bench_now();
    } while (t - t0 < BASE_SECONDS);
    return (double)n / (t - t0);
}

static void baselines_measure(struct baselines *b, const struct stack *s, struct base_rates *r)
{
    r->fsync = fsync_rate(b);
    r->raw = b->raw != NULL ? sign_rate(b, 0, s) : b->fixed_raw;
    r->proc = b->proc != NULL ? sign_rate(b, 1, s) : b->fixed_proc;
}

/* The stack's key as a signer config: the SoftHSM token's, or the TPM key's through its TCTI. */
static struct sworn_signer_config key_config(const struct stack *s)
{
    struct sworn_signer_config cfg = {
        .uri = s->uri, .pinned_spki = s->spki, .pinned_spki_len = s->spki_len};

    if (s->tpm_key) {
        cfg.tcti = s->tcti;
    } else {
        cfg.module_path = P11_MODULE;
        cfg.pin_file = s->pin_file;
    }
    return cfg;
}

/* The signer process on the stack's key (it forks: call it while this process runs no other
 * thread). */
static void open_proc(struct baselines *b, const struct stack *s)
{
    struct sworn_signer_config cfg = key_config(s);

    if (sworn_signer_proc_start(&cfg, NULL, &b->proc) < 0)
        bench_die_lib("sworn_signer_proc_start");
}

/* The raw signer: device calls in this thread, no watchdog handoff. */
static void open_raw(struct baselines *b, const struct stack *s)
{
    struct sworn_signer_config cfg = key_config(s);

    cfg.inline_device_calls = 1;
    if (sworn_signer_open(&cfg, &b->raw) < 0)
        bench_die_lib("sworn_signer_open");
}

static void close_raw(struct baselines *b)
{
    sworn_signer_close(b->raw);
    b->raw = NULL;
}

static void close_proc(struct baselines *b)
{
    if (b->proc != NULL)
        sworn_signer_proc_stop(b->proc);
    b->proc = NULL;
}

/* Open both signers on the stack's key (the process first: it forks, and nothing is loaded or
 * running in this process yet), and the fsync probe file in the stack's folder. A TPM key's
 * signers are opened by signer_rows only, one at a time, while the daemon is stopped. */
static void baselines_open(struct baselines *b, const struct stack *s)
{
    char path[BENCH_PATH_MAX];
    static const uint8_t zero[FSYNC_BLOCK];

    memset(b, 0, sizeof(*b));
    /* SoftHSM finds the stack's token through this, here and in the signer process. */
    if (!s->tpm_key && setenv("SOFTHSM2_CONF", s->softhsm_conf, 1) != 0)
        bench_die_sys("setenv");
    if (!s->tpm_key) {
        open_proc(b, s);
        open_raw(b, s);
    }
    bench_join_path(path, s->dir, "fsync-probe");
    b->fsync_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (b->fsync_fd < 0)
        bench_die_sys(path);
    for (unsigned off = 0; off < FSYNC_FILE_BYTES; off += FSYNC_BLOCK)
        if (pwrite(b->fsync_fd, zero, sizeof(zero), off) != (ssize_t)sizeof(zero))
            bench_die_sys("pwrite");
    if (fsync(b->fsync_fd) != 0)
        bench_die_sys("fsync");
}

/* The log's commits, measured as bench_log measures them (benchutil.c, bench_log_commits). */
struct log_figure {
    double rate;        /* entries/s */
    double fsync;       /* fdatasync/s measured just before */
    double bytes_ratio; /* bytes sqlite wrote / entry bytes (benchutil's counting VFS) */
};

/* threads threads appending one LOG_ENTRY_BYTES entry per call (a commit each, grouped by the
 * log) to a new log in the stack's folder for LOG_SECONDS, after an fdatasync baseline. */
static struct log_figure log_commits(struct baselines *b, const struct stack *s, unsigned threads)
{
    static uint8_t pool[LOG_POOL][LOG_ENTRY_BYTES];
    static const uint8_t *ptrs[LOG_POOL];
    static size_t lens[LOG_POOL];
    char path[BENCH_PATH_MAX], name[64];
    struct bench_commits c;
    struct log_figure f;
    struct sworn_log *log;

    for (unsigned i = 0; i < LOG_POOL; i++) { /* distinct entries, as decisions are */
        memset(pool[i], 0x5a, LOG_ENTRY_BYTES);
        memcpy(pool[i], &i, sizeof(i));
        ptrs[i] = pool[i];
        lens[i] = LOG_ENTRY_BYTES;
    }
    snprintf(name, sizeof(name), "commits-%u.db", threads);
    bench_join_path(path, s->dir, name);
    if (sworn_log_create(path, "bench.sworn.example/log", &log) < 0)
        bench_die_lib("sworn_log_create");
    f.fsync = fsync_rate(b);
    bench_log_commits(log, threads, LOG_SECONDS, ULONG_MAX, ptrs, lens, LOG_POOL, &c);
    sworn_log_close(log);
    f.rate = (double)c.entries / c.seconds;
    f.bytes_ratio = c.entry_bytes > 0 ? (double)c.syncs.bytes / (double)c.entry_bytes : 0;
    return f;
}

static void baselines_close(struct baselines *b)
{
    close_raw(b);
    close_proc(b);
    close(b->fsync_fd);
}

/* One thread of a signer-process figure: signs new digests for BASE_SECONDS. */
struct pipe_caller {
    struct sworn_signer_proc *proc;
    unsigned id;
    unsigned long n;
    double seconds;
    pthread_t thread;
};

static void *pipe_caller_main(void *arg)
{
    struct pipe_caller *c = arg;
    uint8_t d[32], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len;
    double t0 = bench_now(), t;

    do {
        digest_of(((uint64_t)c->id << 48) | c->n, d);
        if (sworn_signer_proc_sign(c->proc, SWORN_PURPOSE_RECEIPT, d, 32, sig, sizeof(sig),
                                   &sig_len) < 0)
            bench_die_lib("sworn_signer_proc_sign");
        c->n++;
        t = bench_now();
    } while (t - t0 < BASE_SECONDS);
    c->seconds = t - t0;
    return NULL;
}

/* Signatures/s through b's signer process with callers threads at once. */
static double proc_rate(struct baselines *b, int callers, unsigned round)
{
    struct pipe_caller c[8];
    unsigned long n = 0;
    double longest = 0;

    for (int i = 0; i < callers; i++) {
        c[i] = (struct pipe_caller){.proc = b->proc, .id = round * 8 + (unsigned)i + 1};
        bench_check_pt(pthread_create(&c[i].thread, NULL, pipe_caller_main, &c[i]),
                       "pthread_create");
    }
    for (int i = 0; i < callers; i++) {
        bench_check_pt(pthread_join(c[i].thread, NULL), "pthread_join");
        n += c[i].n;
        if (c[i].seconds > longest)
            longest = c[i].seconds;
    }
    return (double)n / longest;
}

/*
 * Issue 17's row "rate through the signer process vs raw signing": 1, 2, 4 and 8 callers on one
 * signer process, each against the raw rate of the same key, measured in turns. A TPM key on
 * swtpm serves one connection at a time: each round opens the raw signer, measures it and closes
 * it, then does the same with a signer process; the caller has stopped the daemon (whose signer
 * holds the connection otherwise), and the rates are kept for every point (fixed_raw, fixed_proc).
 * Returns the lowest ratio of 2, 4 and 8 callers to raw (the summary's row).
 */
static double signer_rows(struct baselines *b, const struct stack *s)
{
    static const int callers[] = {1, 2, 4, 8};
    double raw = 0, proc[4] = {0}, lowest = 0;

    for (unsigned r = 0; r < PIPE_ROUNDS; r++) {
        if (s->tpm_key)
            open_raw(b, s);
        raw += sign_rate(b, 0, s) / PIPE_ROUNDS;
        if (s->tpm_key) {
            close_raw(b);
            open_proc(b, s);
        }
        for (int i = 0; i < 4; i++)
            proc[i] += proc_rate(b, callers[i], r) / PIPE_ROUNDS;
        if (s->tpm_key)
            close_proc(b);
    }
    printf("\n== Signer process vs raw signing (daemon %s; %d rounds of %.1f s per figure)\n",
           s->tpm_key ? "stopped: swtpm serves one connection" : "idle", PIPE_ROUNDS, BASE_SECONDS);
    printf("  raw sign, 1 thread: %.0f sigs/s\n", raw);
    for (int i = 0; i < 4; i++) {
        printf("  signer process, %d caller%s %8.0f sigs/s = %.2f x raw  target >= %.2f  %s\n",
               callers[i], callers[i] == 1 ? ": " : "s:", proc[i], proc[i] / raw, TARGET_PROC_RATIO,
               callers[i] == 1 ? "(one caller: no pipelining)"
                               : (proc[i] / raw >= TARGET_PROC_RATIO ? "PASS" : "MISS"));
        if (i > 0 && (i == 1 || proc[i] / raw < lowest))
            lowest = proc[i] / raw;
    }
    b->fixed_raw = raw;
    b->fixed_proc = proc[0];
    return lowest;
}

/* ---------------------------------------------------------------------------------------------
 * Clients: one connection each, one request in flight.
 */

struct run {
    const struct stack *st;
    unsigned no;     /* request ids are bench-<no>-<client>-<seq>: unique within a stack's log */
    atomic_int stop; /* threads leave after their current request */
    atomic_int measuring;           /* closed loop: completions now are counted */
    atomic_uint_least64_t answered; /* every reply, measured or not (the memory run) */
    int open_loop;
    int record;                       /* keep latencies */
    double interval;                  /* open loop: seconds between one sender's requests */
    int senders;                      /* open loop: how many */
    double t_start, t_measure, t_end; /* open loop: schedule start, measured window */
};

struct client {
    struct run *run;
    int id;
    uint64_t seq;
    struct sworn_dclient dc; /* the connection: the client all tools use (wire/dclient.h) */
    uint32_t *lat;           /* latencies in us */
    size_t n_lat, cap_lat;
    uint64_t counted; /* replies inside the measured window */
    pthread_t thread;
};

static void request_id(const struct client *c, char *id, size_t cap)
{
    snprintf(id, cap, "bench-%u-%d-%llu", c->run->no, c->id, (unsigned long long)c->seq);
}

static void send_request(struct client *c)
{
    struct bench_request b;
    char id[64];
    uint8_t *frame;
    size_t len;

    request_id(c, id, sizeof(id));
    bench_request_init(&b, id);
    if (sworn_frame_pack_authorize(&b.req, &frame, &len) < 0)
        bench_die_lib("sworn_frame_pack_authorize");
    if (sworn_dclient_send(&c->dc, frame, len, SWORN_DCLIENT_FOREVER) < 0)
        bench_die_lib("send to the decision socket");
    free(frame);
}

/*
 * The receipt of an allow of the bench's request (GET http://127.0.0.1:8080/allowed/bench, no
 * body) verifies with the stack's key: a digest receipt over the entry hash, an http-message
 * receipt over sworn's RFC 9421 base of that request (docs/formats.md section 13), or a batch
 * receipt (section 14) whose item (the entry hash, form 2, or SHA-256 of that base, form 3) leads
 * by its path to the root its group's one signature covers. 0 or -1.
 */
static int receipt_ok(const uint8_t *spki, size_t spki_len, const Sworn__V1__Decision *d)
{
    const Sworn__V1__Receipt *r = d->receipt;
    static _Thread_local uint8_t base[SWORN_SIGBASE_MAX]; /* clients verify at once */
    char keyid[65], params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    uint8_t der[80], msg[36], *root = msg + 4;
    const uint8_t *sig = r->signature.data;
    size_t base_len = 0, plen = 0, der_len = 0, sig_len = r->signature.len;
    const char *why = NULL;
    struct sworn_httpsig_request h = {BENCH_REQ_METHOD,  BENCH_REQ_SCHEME, BENCH_REQ_HOST,
                                      BENCH_REQ_PORT,    BENCH_REQ_PATH,   NULL,
                                      d->entry_hash.data};

    if (r->form == 0)
        return sworn_signature_verify(spki, spki_len, SWORN_PURPOSE_RECEIPT, d->entry_hash.data, 32,
                                      r->signature.data, r->signature.len);
    if (r->form == 1 || r->form == 3) {
        if (r->signature.len != 64 || r->key_id.len != 32)
            return -1;
        for (int i = 0; i < 32; i++)
            snprintf(keyid + 2 * i, 3, "%02x", r->key_id.data[i]);
        if (sworn_httpsig_base(&h, (int64_t)r->created, keyid, base, sizeof(base), &base_len,
                               params, sizeof(params), &plen, &why) != 0 ||
            strcmp(params, r->signature_params) != 0 ||
            sworn_ecdsa_rs_to_der(r->signature.data, 32, r->signature.data + 32, 32, der,
                                  sizeof(der), &der_len) != 0)
            return -1;
        if (r->form == 1)
            return sworn_signature_verify(spki, spki_len, SWORN_PURPOSE_HTTP_MESSAGE, base,
                                          base_len, der, der_len);
        sig = der;
        sig_len = der_len;
    }
    {
        uint64_t fn = r->batch_index, sn = (uint64_t)r->batch_size - 1;
        size_t k = r->batch_path.len / 32;
        uint8_t item[32];

        if (r->batch_size < 1 || r->batch_index >= r->batch_size || r->batch_path.len % 32 != 0)
            return -1;
        if (r->form == 3)
            SHA256(base, base_len, item);
        else
            memcpy(item, d->entry_hash.data, 32);
        sworn_merkle_leaf_hash(item, 32, root);
        for (size_t i = 0; i < k; i++) { /* RFC 9162 2.1.3.2 */
            const uint8_t *p = r->batch_path.data + 32 * i;

            if (sn == 0)
                return -1;
            if ((fn & 1) || fn == sn) {
                sworn_merkle_node_hash(p, root, root);
                while (!(fn & 1) && fn != 0) {
                    fn >>= 1;
                    sn >>= 1;
                }
            } else {
                sworn_merkle_node_hash(root, p, root);
            }
            fn >>= 1;
            sn >>= 1;
        }
        if (sn != 0)
            return -1;
    }
    msg[0] = (uint8_t)(r->batch_size >> 24);
    msg[1] = (uint8_t)(r->batch_size >> 16);
    msg[2] = (uint8_t)(r->batch_size >> 8);
    msg[3] = (uint8_t)r->batch_size;
    return sworn_signature_verify(spki, spki_len, SWORN_PURPOSE_BATCH, msg, sizeof(msg), sig,
                                  sig_len);
}

/* Read the answer to the request just sent and check it: an ALLOW with a receipt, for our id. */
static void read_reply(struct client *c)
{
    const uint8_t *body = NULL;
    size_t body_len = 0;
    char id[64];
    Sworn__V1__DecisionReply *r;
    const Sworn__V1__Decision *d;
    uint64_t idx, cur;

    switch (sworn_dclient_recv(&c->dc, SWORN_DCLIENT_FOREVER, &body, &body_len)) {
    case 0:
        break;
    case 1:
        bench_die_msg("the daemon closed a connection");
        break;
    default:
        bench_die_lib("a reply frame");
    }
    /* The first reply is decoded strictly and its receipt verified; the rest only unpacked. */
    r = c->seq == 0 ? sworn_frame_unpack_reply(body, body_len)
                    : sworn__v1__decision_reply__unpack(NULL, body_len, body);
    if (r == NULL)
        bench_die_lib("a DecisionReply");
    if (r->body_case != SWORN__V1__DECISION_REPLY__BODY_DECISION) {
        fprintf(stderr, "bench_decisiond: the daemon answered with an error: %u %s\n",
                r->error != NULL ? r->error->code : 0,
                r->error != NULL && r->error->message != NULL ? r->error->message : "");
        exit(1);
    }
    d = r->decision;
    request_id(c, id, sizeof(id));
    if (d->effect != SWORN__V1__EFFECT__EFFECT_ALLOW || d->receipt == NULL ||
        strcmp(d->request_id, id) != 0 || d->entry_hash.len != 32) {
        fprintf(stderr, "bench_decisiond: not an allow with a receipt for %s: effect %d, %s\n", id,
                (int)d->effect, d->reason != NULL ? d->reason : "");
        exit(1);
    }
    if (c->seq == 0 && receipt_ok(c->run->st->spki, c->run->st->spki_len, d) < 0)
        bench_die_lib("a receipt does not verify with the stack's pinned key");
    idx = d->log_index + 1;
    cur = atomic_load(&log_size_seen);
    while (idx > cur && !atomic_compare_exchange_weak(&log_size_seen, &cur, idx))
        ;
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    c->seq++;
}

static void keep_latency(struct client *c, double seconds)
{
    double us = seconds * 1e6;

    if (!c->run->record)
        return;
    if (c->n_lat == c->cap_lat) {
        size_t cap = c->cap_lat ? 2 * c->cap_lat : 4096;
        uint32_t *p = realloc(c->lat, cap * sizeof(*p));

        if (p == NULL)
            bench_die_msg("out of memory");
        c->lat = p;
        c->cap_lat = cap;
    }
    c->lat[c->n_lat++] = us > 4e9 ? UINT32_MAX : (uint32_t)us;
}

static void *closed_loop(void *arg)
{
    struct client *c = arg;
    struct run *r = c->run;

    while (!atomic_load(&r->stop)) {
        double t0 = bench_now(), t1;

        send_request(c);
        read_reply(c);
        t1 = bench_now();
        atomic_fetch_add(&r->answered, 1);
        if (atomic_load(&r->measuring)) {
            c->counted++;
            keep_latency(c, t1 - t0);
        }
    }
    return NULL;
}

static void sleep_until(double t)
{
    struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Open loop: request k of this sender is due at t_start + (k + id / senders) * interval. */
static void *open_loop(void *arg)
{
    struct client *c = arg;
    struct run *r = c->run;
    double phase = r->interval * c->id / r->senders;

    for (uint64_t k = 0;; k++) {
        double due = r->t_start + phase + (double)k * r->interval, t1;

        if (due >= r->t_end || atomic_load(&r->stop))
            break;
        sleep_until(due);
        send_request(c);
        read_reply(c);
        t1 = bench_now();
        atomic_fetch_add(&r->answered, 1);
        if (due >= r->t_measure) {
            c->counted++;
            keep_latency(c, t1 - due);
        }
    }
    return NULL;
}

static void clients_start(struct run *r, struct client *cs, int n)
{
    static unsigned runs;

    r->no = runs++;
    memset(cs, 0, (size_t)n * sizeof(*cs));
    for (int i = 0; i < n; i++) {
        cs[i].run = r;
        cs[i].id = i;
        if (sworn_dclient_connect(&cs[i].dc, r->st->sock) < 0)
            bench_die_lib(r->st->sock);
    }
    for (int i = 0; i < n; i++)
        bench_check_pt(
            pthread_create(&cs[i].thread, NULL, r->open_loop ? open_loop : closed_loop, &cs[i]),
            "pthread_create");
}

static void clients_join(struct client *cs, int n)
{
    for (int i = 0; i < n; i++) {
        bench_check_pt(pthread_join(cs[i].thread, NULL), "pthread_join");
        sworn_dclient_close(&cs[i].dc);
    }
}

static void clients_free(struct client *cs, int n)
{
    for (int i = 0; i < n; i++)
        free(cs[i].lat);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

struct lat_stats {
    uint64_t n;
    double p50, p99, p999, max; /* ms */
};

/* Percentiles (nearest rank) over every client's latencies. */
static void lat_stats(const struct client *cs, int n, struct lat_stats *out)
{
    size_t total = 0, k = 0;
    uint32_t *all;

    for (int i = 0; i < n; i++)
        total += cs[i].n_lat;
    memset(out, 0, sizeof(*out));
    if (total == 0)
        return;
    all = malloc(total * sizeof(*all));
    if (all == NULL)
        bench_die_msg("out of memory");
    for (int i = 0; i < n; i++) {
        if (cs[i].n_lat == 0) /* a client answered nothing in the window: lat is NULL */
            continue;
        memcpy(all + k, cs[i].lat, cs[i].n_lat * sizeof(*all));
        k += cs[i].n_lat;
    }
    qsort(all, total, sizeof(*all), cmp_u32);
#define RANK(q) all[(size_t)((q) * (double)(total - 1) + 0.5)] / 1000.0
    out->n = total;
    out->p50 = RANK(0.50);
    out->p99 = RANK(0.99);
    out->p999 = RANK(0.999);
    out->max = all[total - 1] / 1000.0;
#undef RANK
    free(all);
}

/* ---------------------------------------------------------------------------------------------
 * One stack.
 */

struct point {
    int clients;
    double rate;
    struct lat_stats lat;
    struct cpu_use cpu;
    struct base_rates base;
};

static double closed_point(const struct stack *s, int n, double seconds, struct lat_stats *lat,
                           struct cpu_use *cpu)
{
    struct cpu_snap c0, c1;
    struct client *cs = calloc((size_t)n, sizeof(*cs));
    struct run r = {.st = s, .record = 1};
    uint64_t counted = 0;
    double t0, t1;

    if (cs == NULL)
        bench_die_msg("out of memory");
    clients_start(&r, cs, n);
    bench_sleep_ms((long)(WARMUP_SECONDS * 1000));
    cpu_snap(s->daemon_pid, &c0);
    t0 = bench_now();
    atomic_store(&r.measuring, 1);
    bench_sleep_ms((long)(seconds * 1000));
    atomic_store(&r.measuring, 0);
    t1 = bench_now();
    cpu_snap(s->daemon_pid, &c1);
    atomic_store(&r.stop, 1);
    clients_join(cs, n);
    for (int i = 0; i < n; i++)
        counted += cs[i].counted;
    cpu_use(&c0, &c1, counted, cpu);
    lat_stats(cs, n, lat);
    clients_free(cs, n);
    free(cs);
    return (double)counted / (t1 - t0);
}

struct lat_pool;
static void pool_add(struct lat_pool *p, const struct client *cs, int n);

/* The open loop at rate from n senders (OPEN_SENDERS..MAX_CLIENTS), each one connection. Every
 * latency is also added to pool, when not NULL. */
static double open_point(const struct stack *s, double rate, int n, struct lat_stats *lat,
                         struct lat_pool *pool)
{
    struct client cs[MAX_CLIENTS];
    struct run r = {.st = s, .record = 1, .open_loop = 1, .senders = n};
    uint64_t counted = 0;

    r.interval = n / rate;
    r.t_start = bench_now() + 0.05; /* after every sender has connected and started */
    r.t_measure = r.t_start + WARMUP_SECONDS;
    r.t_end = r.t_measure + OPEN_SECONDS;
    clients_start(&r, cs, n);
    clients_join(cs, n);
    for (int i = 0; i < n; i++)
        counted += cs[i].counted;
    lat_stats(cs, n, lat);
    if (pool != NULL)
        pool_add(pool, cs, n);
    clients_free(cs, n);
    return (double)counted / OPEN_SECONDS;
}

/*
 * A field of /proc/PID/status (KiB) of the daemon without its signer process: the monitor and
 * its engine, which holds the log, the connections and the tables (the signer holds only the
 * key). Counted across every child, so a restarted engine is found too.
 */
static long daemon_kib(pid_t daemon, const char *field)
{
    long kib = proc_kib(daemon, field);
    DIR *dir = opendir("/proc");
    struct dirent *e;

    if (dir == NULL)
        bench_die_sys("/proc");
    while ((e = readdir(dir)) != NULL) {
        pid_t pid = (pid_t)atol(e->d_name), ppid = 0;

        if (pid > 0 && bench_proc_cpu(pid, &ppid) >= 0 && ppid == daemon && !is_signer(pid))
            kib += proc_kib(pid, field);
    }
    closedir(dir);
    return kib;
}

struct mem_result {
    int done;
    long rss_first, rss_last; /* KiB */
};

static void memory_growth(const struct stack *s, uint64_t entries, struct mem_result *m)
{
    struct client cs[MEM_CLIENTS];
    struct run r = {.st = s};
    uint64_t start_size = atomic_load(&log_size_seen), step = entries / MEM_STEPS, prev = 0;
    double t0, t_prev;
    long rss0 = daemon_kib(s->daemon_pid, "VmRSS");
    int k = 1;

    memset(m, 0, sizeof(*m));
    if (step == 0)
        step = 1;
    printf("\n== Memory as the log grows by %llu decisions (%d clients, closed loop; daemon pid "
           "%ld)\n",
           (unsigned long long)entries, MEM_CLIENTS, (long)s->daemon_pid);
    printf("  RSS: the monitor's and its engine's (the daemon without its signer process); VmLck: "
           "memory\n  they locked (mlockall when they run as root), part of their RSS\n");
    printf("  %-10s %12s %10s %10s %10s %12s\n", "step", "log size", "RSS MiB", "x step 1",
           "VmLck MiB", "decisions/s");
    printf("  %-10s %12s %10.1f %10s %10.1f %12s\n", "start", "", rss0 / 1024.0, "",
           daemon_kib(s->daemon_pid, "VmLck") / 1024.0, "");
    clients_start(&r, cs, MEM_CLIENTS);
    t0 = t_prev = bench_now();
    while (k <= MEM_STEPS) {
        uint64_t done = atomic_load(&r.answered);

        if (done >= (k == MEM_STEPS ? entries : (uint64_t)k * step)) {
            double t = bench_now();
            long rss = daemon_kib(s->daemon_pid, "VmRSS");

            if (k == 1)
                m->rss_first = rss;
            m->rss_last = rss;
            printf("  %3d%% %5s %12llu %10.1f %10.2f %10.1f %12.0f\n", k * 100 / MEM_STEPS, "",
                   (unsigned long long)atomic_load(&log_size_seen), rss / 1024.0,
                   (double)rss / (double)m->rss_first, daemon_kib(s->daemon_pid, "VmLck") / 1024.0,
                   (double)(done - prev) / (t - t_prev));
            prev = done;
            t_prev = t;
            k++;
            continue;
        }
        bench_sleep_ms(20);
    }
    atomic_store(&r.stop, 1);
    clients_join(cs, MEM_CLIENTS);
    clients_free(cs, MEM_CLIENTS);
    printf("  %llu decisions in %.1f s; log size %llu (it held %llu before); peak RSS (VmHWM) "
           "%.1f MiB\n",
           (unsigned long long)atomic_load(&r.answered), bench_now() - t0,
           (unsigned long long)atomic_load(&log_size_seen), (unsigned long long)start_size,
           daemon_kib(s->daemon_pid, "VmHWM") / 1024.0);
    m->done = 1;
}

static const char *verdict(int ok)
{
    return ok ? "PASS" : "MISS";
}

/* ---------------------------------------------------------------------------------------------
 * The summary: each variant writes its rows of issue 17's table to DIR/<variant>/summary.tsv
 * (stack, receipts, row, figure, target, verdict: tab-separated, one row per line); the parent
 * prints the rows of every variant in one table at the end.
 */

#define SUMMARY_FILE "summary.tsv"
#define SUMMARY_LINE_MAX 512

static FILE *summary;

static void summary_open(const char *dir)
{
    char path[BENCH_PATH_MAX];

    bench_join_path(path, dir, SUMMARY_FILE);
    summary = fopen(path, "w");
    if (summary == NULL)
        bench_die_sys(path);
}

/* One row; met: 1 met, 0 missed, -1 not measured on this stack (figure says why). */
static void summary_row(const struct stack *s, const char *row, const char *target, int met,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void summary_row(const struct stack *s, const char *row, const char *target, int met,
                        const char *fmt, ...)
{
    char figure[128];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(figure, sizeof(figure), fmt, ap);
    va_end(ap);
    if (fprintf(summary, "%s\t%s\t%s\t%s\t%s\t%s\n", variant_names[s->v],
                batch_mode ? "batch" : "per-request", row, figure, target,
                met < 0 ? "-" : (met ? "met" : "MISSED")) < 0)
        bench_die_sys("writing the summary");
}

static void summary_close(void)
{
    if (fclose(summary) != 0)
        bench_die_sys("writing the summary");
    summary = NULL;
}

/* The parent: every variant's rows, in the order they ran, as one table. */
static void summary_print(const char *dir, char subs[][64], int n)
{
    printf("\n== Summary: issue 17's targets, per stack and receipt mode (figures of this run, "
           "each ratio against\n   a baseline measured in the same run; information, not an "
           "exit status)\n");
    printf("  %-7s %-11s %-46s %-40s %-22s %s\n", "stack", "receipts", "row", "figure", "target",
           "");
    for (int i = 0; i < n; i++) {
        char path[BENCH_PATH_MAX], sub[BENCH_PATH_MAX], line[SUMMARY_LINE_MAX];
        FILE *f;

        bench_join_path(sub, dir, subs[i]);
        bench_join_path(path, sub, SUMMARY_FILE);
        f = fopen(path, "r");
        if (f == NULL) {
            printf("  %-19s (no rows: the variant failed)\n", subs[i]);
            continue;
        }
        while (fgets(line, sizeof(line), f) != NULL) {
            char *col[6], *save = NULL, *p = line;
            int k = 0;

            line[strcspn(line, "\n")] = '\0';
            while (k < 6 && (col[k] = strtok_r(p, "\t", &save)) != NULL) {
                p = NULL;
                k++;
            }
            if (k == 6)
                printf("  %-7s %-11s %-46s %-40s %-22s %s\n", col[0], col[1], col[2], col[3],
                       col[4], col[5]);
        }
        fclose(f);
    }
    printf("  The log rows are measured by bench_decisiond on each stack's folder with "
           "bench_log's own measurement\n  (benchutil.c, bench_log_commits); bench_log prints "
           "them too, with the syncs per commit.\n");
}

static int run_variant(const char *dir, enum variant v, uint64_t entries, double seconds,
                       unsigned workers)
{
    struct stack s;
    struct baselines b;
    struct point pts[N_POINTS];
    struct lat_stats open_lat;
    struct mem_result mem = {0};
    struct log_figure one, group, most;
    size_t peak = 0;
    double t0 = bench_now(), open_rate, open_target, log_rate, proc_lowest, raw_after = 0;
    int open_senders, memory = entries > 0 && (v == V_NOTPM || (v == V_TPMKEY && batch_mode));

    bench_signals_install();
    /* Before any log is opened here: the log rows count sqlite's bytes (benchutil.h). */
    bench_sqlite_count_install();

    /* Setup, while this process runs no other thread (it forks dev-stack and a signer). */
    stack_up(&s, dir, v, workers);
    baselines_open(&b, &s);
    printf("\n#### stack %s, receipts: %s: scripts/dev-stack up %s (%s, %u workers, checkpoint "
           "every %s, allow-all policy): %.1f s\n",
           variant_names[v], batch_mode ? "batch" : "per-request", s.dir, variant_what[v], workers,
           checkpoint_interval, bench_now() - t0);
    if (s.tpm_key)
        stack_daemon(&s, 1); /* its signer holds swtpm's one connection */
    proc_lowest = signer_rows(&b, &s);
    if (s.tpm_key) {
        stack_daemon(&s, 0);
        printf("  (a TPM key: these raw and signer-process rates, measured with the daemon "
               "stopped, are every point's)\n");
    }

    printf("\n== Closed loop: N clients, one connection each, one request in flight each\n");
    printf("  each point: %.1f s warm-up, %.1f s measured; before it, with the daemon idle, "
           "%.1f s of each baseline\n",
           WARMUP_SECONDS, seconds, BASE_SECONDS);
    printf("  raw sign: sworn_signer_sign on the stack's key (same %s), 1 thread; proc: "
           "through a signer process, 1 caller\n",
           s.tpm_key ? "TPM" : "token");
    printf("  dec/fsync: decisions/s / fdatasync/s (above 1: several decisions share a sync)\n\n");
    printf("  %7s %9s %7s %7s %8s | %8s %6s | %8s %6s | %8s %9s\n", "clients", "dec/s", "p50 ms",
           "p99 ms", "p99.9 ms", "raw sign", "x raw", "proc", "x proc", "fsync/s", "dec/fsync");
    for (size_t i = 0; i < N_POINTS; i++) {
        struct point *p = &pts[i];

        p->clients = client_counts[i];
        baselines_measure(&b, &s, &p->base);
        p->rate = closed_point(&s, p->clients, seconds, &p->lat, &p->cpu);
        printf("  %7d %9.0f %7.2f %7.2f %8.2f | %8.0f %6.2f | %8.0f %6.2f | %8.0f %9.2f\n",
               p->clients, p->rate, p->lat.p50, p->lat.p99, p->lat.p999, p->base.raw,
               p->rate / p->base.raw, p->base.proc, p->rate / p->base.proc, p->base.fsync,
               p->rate / p->base.fsync);
        if (p->rate > pts[peak].rate)
            peak = i;
    }
    printf("  peak: %.0f decisions/s with %d clients\n", pts[peak].rate, pts[peak].clients);
    /* The log's own commits, with the daemon idle: what batch receipts aim at. */
    one = log_commits(&b, &s, 1);
    group = log_commits(&b, &s, LOG_THREADS);
    most = log_commits(&b, &s, MAX_CLIENTS);
    log_rate = most.rate > group.rate ? most.rate : group.rate;
    printf("  log commits (sworn_log_append, one %d-byte entry per call, a new log each, "
           "bench_log's measurement):\n"
           "    1 thread %.0f entries/s = %.2f x fdatasync/s (%.0f), %.1f x the entry bytes "
           "written; %d threads %.0f = %.2f x (%.0f); %d threads %.0f = %.2f x (%.0f)\n",
           LOG_ENTRY_BYTES, one.rate, one.rate / one.fsync, one.fsync, one.bytes_ratio, LOG_THREADS,
           group.rate, group.rate / group.fsync, group.fsync, MAX_CLIENTS, most.rate,
           most.rate / most.fsync, most.fsync);
    printf("\n  CPU in the measured windows, per decision (us), and how busy the whole machine "
           "was\n  (other work on it included); daemon: the monitor and its engine; signer: "
           "the signer process\n  (with SoftHSM inside it; a TPM's work is swtpm's, not "
           "counted); cores x 1e6 / (daemon + signer +\n  clients) is the CPU-only ceiling\n\n");
    printf("  %7s %9s %9s %9s %9s %10s %12s\n", "clients", "dec/s", "daemon", "signer", "clients",
           "machine", "CPU ceiling");
    for (size_t i = 0; i < N_POINTS; i++) {
        const struct point *p = &pts[i];
        double per = p->cpu.daemon_us + p->cpu.signer_us + p->cpu.bench_us;

        printf("  %7d %9.0f %9.0f %9.0f %9.0f %9.0f%% %12.0f\n", p->clients, p->rate,
               p->cpu.daemon_us, p->cpu.signer_us, p->cpu.bench_us, 100 * p->cpu.machine_busy,
               per > 0 ? (double)sysconf(_SC_NPROCESSORS_ONLN) * 1e6 / per : 0);
    }

    open_target = pts[peak].rate / 2;
    /* As many connections as the peak had: half its rate through fewer connections, each with
     * one request in flight, would measure the connections' own limit, not the daemon's. */
    open_senders = pts[peak].clients > OPEN_SENDERS ? pts[peak].clients : OPEN_SENDERS;
    printf("\n== Open loop at half the peak: %.0f requests/s from %d paced senders, %.1f s "
           "measured\n",
           open_target, open_senders, OPEN_SECONDS);
    printf("  latency from each request's scheduled send time to its answer\n");
    open_rate = open_point(&s, open_target, open_senders, &open_lat, NULL);
    printf("  answered %.0f/s (%.2f of the schedule): p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, "
           "max %.2f ms (%llu requests)\n",
           open_rate, open_rate / open_target, open_lat.p50, open_lat.p99, open_lat.p999,
           open_lat.max, (unsigned long long)open_lat.n);

    if (memory)
        memory_growth(&s, entries, &mem);
    if (s.tpm_key) { /* the raw rate once more, to show how far it drifted over the run */
        stack_daemon(&s, 1);
        open_raw(&b, &s);
        raw_after = sign_rate(&b, 0, &s);
        close_raw(&b);
        printf("\n  TPM key, raw sign after the run (daemon stopped): %.0f sigs/s (%.2f x the "
               "rate before, which the ratios use)\n",
               raw_after, raw_after / b.fixed_raw);
    }

    baselines_close(&b);
    bench_stack_down();

    printf("\n== Against the spec, stack %s, receipts: %s (information, not an exit status)\n",
           variant_names[v], batch_mode ? "batch" : "per-request");
    {
        const struct point *p = &pts[peak];
        double ratio = p->rate / p->base.raw;

        if (!batch_mode)
            printf("  %-62s %s (%.2f; target >= %.2f)\n",
                   "peak decisions/s / raw signing rate (one signature per allow)",
                   verdict(ratio >= TARGET_SIGN_RATIO), ratio, TARGET_SIGN_RATIO);
        else {
            printf("  %-62s %s (%.2f; target >= %.2f)\n",
                   "peak decisions/s / raw signing rate (batch receipts)",
                   verdict(ratio >= TARGET_BATCH_SIGN_RATIO), ratio, TARGET_BATCH_SIGN_RATIO);
            printf("  %-62s %s (%.2f; target >= %.2f)\n",
                   "peak decisions/s / the log's own group-commit rate (batch)",
                   verdict(p->rate / log_rate >= TARGET_BATCH_LOG_RATIO), p->rate / log_rate,
                   TARGET_BATCH_LOG_RATIO);
        }
        printf("  %-62s %.2f (%.0f / %.0f entries/s)\n",
               "peak decisions/s / the log's own group-commit rate", p->rate / log_rate, p->rate,
               log_rate);
        printf("  %-62s %s (%.2f ms; target <= %.1f ms)\n", "p99 latency at half the peak rate",
               verdict(open_lat.p99 <= TARGET_P99_MS), open_lat.p99, TARGET_P99_MS);
        if (mem.done)
            printf("  %-62s %s (%.2f; target < %.1f)\n",
                   "memory flat: final RSS / RSS at the first tenth of the growth",
                   verdict((double)mem.rss_last < MEM_FLAT_FACTOR * (double)mem.rss_first),
                   (double)mem.rss_last / (double)mem.rss_first, MEM_FLAT_FACTOR);
        printf("  at the peak: %.2f of the signer process's rate, %.2f decisions per fdatasync\n",
               p->rate / p->base.proc, p->rate / p->base.fsync);

        /* Issue 17's table, for the parent's summary. */
        summary_open(dir);
        if (!batch_mode)
            summary_row(&s, "peak decisions/s, one signature per allow", ">= 0.80 x raw sign",
                        ratio >= TARGET_SIGN_RATIO, "%.0f/s = %.2f x raw (%.0f/s)", p->rate, ratio,
                        p->base.raw);
        summary_row(&s, "signer process, 2/4/8 callers vs raw signing", ">= 0.90 x raw sign",
                    proc_lowest >= TARGET_PROC_RATIO, "lowest %.2f x raw (%.0f/s)", proc_lowest,
                    b.fixed_raw);
        summary_row(&s, "daemon CPU per decision, at the peak", "<= 60 us",
                    p->cpu.daemon_us <= TARGET_CPU_US, "%.0f us (signer process %.0f us)",
                    p->cpu.daemon_us, p->cpu.signer_us);
        summary_row(&s, "p99 at half the peak rate, open loop", "<= 2.0 ms",
                    open_lat.p99 <= TARGET_P99_MS, "%.2f ms at %.0f/s", open_lat.p99, open_rate);
        summary_row(&s, "log, 1 entry per commit: bytes written", "<= 4 x entry bytes",
                    one.bytes_ratio <= TARGET_LOG_BYTES, "%.1f x the entry bytes", one.bytes_ratio);
        summary_row(&s, "log, 1 entry per commit: entries/s", ">= 0.9 x fdatasync/s",
                    one.rate / one.fsync >= TARGET_LOG_ONE, "%.2f x fdatasync/s (%.0f/s)",
                    one.rate / one.fsync, one.rate);
        summary_row(&s, "log, 8 threads group commit: entries/s", ">= 5 x fdatasync/s",
                    group.rate / group.fsync >= TARGET_LOG_GROUP, "%.2f x fdatasync/s (%.0f/s)",
                    group.rate / group.fsync, group.rate);
        if (mem.done)
            summary_row(&s, "memory as the log grows (daemon RSS)", "flat: < 2 x",
                        (double)mem.rss_last < MEM_FLAT_FACTOR * (double)mem.rss_first,
                        "+%llu entries: %.2f x the first tenth's", (unsigned long long)entries,
                        (double)mem.rss_last / (double)mem.rss_first);
        else
            summary_row(&s, "memory as the log grows (daemon RSS)", "flat: < 2 x", -1, "%s",
                        entries == 0 ? "not measured (--entries 0)" : "not measured on this stack");
        if (batch_mode) {
            summary_row(&s, "batch receipts: peak decisions/s vs raw sign", ">= 3 x raw sign",
                        ratio >= TARGET_BATCH_SIGN_RATIO, "%.0f/s = %.2f x raw (%.0f/s)", p->rate,
                        ratio, p->base.raw);
            summary_row(&s, "batch receipts: peak vs the log's group commit", ">= 0.5 x log",
                        p->rate / log_rate >= TARGET_BATCH_LOG_RATIO, "%.2f x the log (%.0f/s)",
                        p->rate / log_rate, log_rate);
        }
        summary_close();
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The tail, before and after (--before-build): the open loop at half the peak on four stacks up
 * at once, the daemon of --before-build and this build's, each with checkpoints every
 * --checkpoint-interval and with checkpoints effectively off (TAIL_OFF_INTERVAL), measured in
 * turns (TAIL_ROUNDS rounds, the order rotated every round), so that one run compares them on
 * the same machine at the same time and shows the checkpoint's own share of the tail.
 */

#define TAIL_ROUNDS 4
#define TAIL_OFF_INTERVAL "1h" /* no checkpoint inside the run but the start's */
#define TAIL_CONFIGS 4

/* Every latency of one configuration over all its rounds. */
struct lat_pool {
    uint32_t *v;
    size_t n, cap;
};

static void pool_add(struct lat_pool *p, const struct client *cs, int n)
{
    for (int i = 0; i < n; i++) {
        if (p->n + cs[i].n_lat > p->cap) {
            size_t cap = p->cap ? p->cap : 65536;
            uint32_t *v;

            while (cap < p->n + cs[i].n_lat)
                cap *= 2;
            v = realloc(p->v, cap * sizeof(*v));
            if (v == NULL)
                bench_die_msg("out of memory");
            p->v = v;
            p->cap = cap;
        }
        if (cs[i].n_lat > 0)
            memcpy(p->v + p->n, cs[i].lat, cs[i].n_lat * sizeof(*p->v));
        p->n += cs[i].n_lat;
    }
}

static void pool_stats(const struct lat_pool *p, struct lat_stats *out)
{
    struct client c = {.lat = p->v, .n_lat = p->n};

    lat_stats(&c, 1, out);
}

/* One of the four: a daemon (build folder) and a checkpoint interval, on a stack of its own. */
struct tail_cfg {
    const char *daemon; /* "before" or "after" */
    const char *build;
    const char *interval;
    char dir[BENCH_PATH_MAX];
    pid_t keeper; /* the process that holds the stack up (--variant keep) */
    int hold_fd;  /* closing it brings the stack down */
    struct stack st;
    double peak;
    int peak_clients;
    struct lat_pool pool;
    double answered;                    /* requests answered over all rounds */
    struct lat_stats turn[TAIL_ROUNDS]; /* each round's own figures */
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The median over the rounds of one figure of the turns (offset: which field of lat_stats):
 * a turn that met a burst of other work on the machine moves it less than the pooled figure. */
static double turn_median(const struct tail_cfg *c, size_t offset)
{
    double v[TAIL_ROUNDS];

    for (int i = 0; i < TAIL_ROUNDS; i++)
        memcpy(&v[i], (const char *)&c->turn[i] + offset, sizeof(double));
    qsort(v, TAIL_ROUNDS, sizeof(v[0]), cmp_double);
    return TAIL_ROUNDS % 2 ? v[TAIL_ROUNDS / 2] : (v[TAIL_ROUNDS / 2 - 1] + v[TAIL_ROUNDS / 2]) / 2;
}

/*
 * --variant keep: bring a stack up (this process's build_dir and checkpoint_interval), write one
 * byte on ready_fd, and hold it up until hold_fd reads end of file (the measuring process closed
 * it or died); then dev-stack down. One process per stack: benchutil watches one stack a process.
 */
static int keep_stack(const char *dir, int tpm, unsigned workers, int ready_fd, int hold_fd)
{
    struct stack s;
    char c;

    bench_signals_install();
    stack_up(&s, dir, tpm ? V_TPM : V_NOTPM, workers);
    if (write(ready_fd, "1", 1) != 1)
        bench_die_sys("keep: ready");
    close(ready_fd);
    for (;;) {
        ssize_t n = read(hold_fd, &c, 1);

        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    bench_stack_down();
    return 0;
}

/* Start the keeper of c's stack and wait until it is up. */
static void tail_keeper_start(struct tail_cfg *c, int tpm, const char *workers)
{
    int ready[2], hold[2];
    char rfd[16], hfd[16];
    ssize_t got;
    char b;
    pid_t pid;

    if (pipe(ready) != 0 || pipe(hold) != 0)
        bench_die_sys("pipe");
    snprintf(rfd, sizeof(rfd), "%d", ready[1]);
    snprintf(hfd, sizeof(hfd), "%d", hold[0]);
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        bench_die_sys("fork");
    if (pid == 0) {
        char *args[] = {"bench_decisiond",
                        c->dir,
                        "--variant",
                        tpm ? "keep-tpm" : "keep-notpm",
                        "--workers",
                        (char *)workers,
                        "--build",
                        (char *)c->build,
                        "--source",
                        (char *)source_dir,
                        "--checkpoint-interval",
                        (char *)c->interval,
                        "--receipts",
                        batch_mode ? "batch" : "per-request",
                        "--ready-fd",
                        rfd,
                        "--hold-fd",
                        hfd,
                        NULL};

        close(ready[0]);
        close(hold[1]);
        execv("/proc/self/exe", args);
        _exit(127);
    }
    close(ready[1]);
    close(hold[0]);
    c->keeper = pid;
    c->hold_fd = hold[1];
    (void)fcntl(c->hold_fd, F_SETFD, FD_CLOEXEC); /* the later keepers must not hold it open */
    do
        got = read(ready[0], &b, 1);
    while (got < 0 && errno == EINTR);
    close(ready[0]);
    if (got != 1)
        bench_die_msg("a stack of the before/after comparison did not come up (its up.log "
                      "says why)");
}

/* The stack a keeper holds up, from its stack.env (as stack_up reads it). */
static void tail_attach(struct tail_cfg *c)
{
    char env[8192], spki_path[BENCH_PATH_MAX], pid[32];
    uint8_t spki[SWORN_SIGNER_SPKI_MAX + 1];
    struct stack *s = &c->st;

    memset(s, 0, sizeof(*s));
    bench_join_path(s->dir, c->dir, "stack");
    bench_stack_env(s->dir, env, sizeof(env));
    bench_env_value(env, "DECISIOND_PID", pid, sizeof(pid));
    bench_env_value(env, "DECISION_SOCKET", s->sock, sizeof(s->sock));
    bench_env_value(env, "SPKI_DER", spki_path, sizeof(spki_path));
    s->daemon_pid = (pid_t)strtol(pid, NULL, 10);
    if (s->daemon_pid <= 0 || s->sock[0] == '\0' || spki_path[0] == '\0')
        bench_die_msg("stack.env lacks the daemon's pid, socket or SPKI");
    bench_read_small(spki_path, spki, sizeof(spki), &s->spki_len);
    if (s->spki_len == 0)
        bench_die_msg("the stack's SPKI file is empty");
    memcpy(s->spki, spki, s->spki_len);
}

static void print_tail_row(const struct tail_cfg *c, const struct lat_stats *l, double rate)
{
    printf("  %-7s %-12s %8.0f %8.2f %8.2f %8.2f %8.2f %9llu\n", c->daemon, c->interval, rate,
           l->p50, l->p99, l->p999, l->max, (unsigned long long)l->n);
}

static int run_tail(const char *dir, int tpm, double seconds, const char *workers,
                    const char *before_build, double tail_age)
{
    struct tail_cfg cfg[TAIL_CONFIGS] = {
        {.daemon = "before", .build = before_build, .interval = checkpoint_interval},
        {.daemon = "after", .build = build_dir, .interval = checkpoint_interval},
        {.daemon = "before", .build = before_build, .interval = TAIL_OFF_INTERVAL},
        {.daemon = "after", .build = build_dir, .interval = TAIL_OFF_INTERVAL},
    };
    static const int peak_clients[] = {16, 32};
    struct lat_stats l[TAIL_CONFIGS];
    double rate, t0 = bench_now();
    int senders = OPEN_SENDERS;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        bench_die_sys(dir);
    for (int i = 0; i < TAIL_CONFIGS; i++) {
        char name[64];

        snprintf(name, sizeof(name), "%s-%s", cfg[i].daemon, i < 2 ? "on" : "off");
        bench_join_path(cfg[i].dir, dir, name);
        tail_keeper_start(&cfg[i], tpm, workers);
        tail_attach(&cfg[i]);
    }
    printf("\n#### the tail before and after, stack %s, receipts: %s: four dev stacks up at "
           "once (%.1f s)\n",
           tpm ? "tpm" : "notpm", batch_mode ? "batch" : "per-request", bench_now() - t0);
    printf("  before: %s\n  after:  %s\n", before_build, build_dir);
    printf("  each daemon with checkpoints every %s (tiles exported to the stack's tiles "
           "folder%s) and every %s (none in the run)\n",
           checkpoint_interval, tpm ? ", quoted by swtpm" : "", TAIL_OFF_INTERVAL);

    /* The rate: half the lower of the two daemons' peaks, so that neither is past its own. */
    /* Age: a daemon that has run a while holds a larger log and more checkpoints (the bench
     * above measures its open loop after its whole closed-loop sweep, about 20 s of load). */
    if (tail_age > 0) {
        for (int i = 0; i < TAIL_CONFIGS; i++) {
            struct lat_stats lat;
            struct cpu_use cpu;

            (void)closed_point(&cfg[i].st, 16, tail_age, &lat, &cpu);
        }
        printf("\n  aged: %.0f s of closed loop (16 clients) on each stack first; the logs now "
               "hold %llu entries or so\n",
               tail_age, (unsigned long long)atomic_load(&log_size_seen));
    }
    printf("\n  closed-loop peak (checkpoints every %s), %.1f s per point:", checkpoint_interval,
           seconds);
    for (int i = 0; i < 2; i++) {
        for (size_t k = 0; k < sizeof(peak_clients) / sizeof(peak_clients[0]); k++) {
            struct lat_stats lat;
            struct cpu_use cpu;
            double r = closed_point(&cfg[i].st, peak_clients[k], seconds, &lat, &cpu);

            if (r > cfg[i].peak) {
                cfg[i].peak = r;
                cfg[i].peak_clients = peak_clients[k];
            }
        }
        printf(" %s %.0f/s (%d clients);", cfg[i].daemon, cfg[i].peak, cfg[i].peak_clients);
        if (cfg[i].peak_clients > senders)
            senders = cfg[i].peak_clients;
    }
    rate = (cfg[0].peak < cfg[1].peak ? cfg[0].peak : cfg[1].peak) / 2;
    printf("\n  open loop: %.0f requests/s (half the lower peak) from %d paced senders, %.1f s "
           "measured per turn, %d rounds, latency from each request's scheduled send time\n\n",
           rate, senders, OPEN_SECONDS, TAIL_ROUNDS);
    printf("  %-7s %-7s %-12s %8s %8s %8s %8s %8s %9s\n", "round", "daemon", "checkpoints",
           "answ/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "requests");
    for (int round = 0; round < TAIL_ROUNDS; round++) {
        for (int j = 0; j < TAIL_CONFIGS; j++) {
            struct tail_cfg *c = &cfg[(j + round) % TAIL_CONFIGS];
            struct lat_stats one;
            double got = open_point(&c->st, rate, senders, &one, &c->pool);

            c->turn[round] = one;
            c->answered += got * OPEN_SECONDS;
            printf("  %-7d", round + 1);
            print_tail_row(c, &one, got);
        }
    }
    printf("\n  all rounds together:\n  %-7s %-12s %8s %8s %8s %8s %8s %9s\n", "daemon",
           "checkpoints", "answ/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "requests");
    for (int i = 0; i < TAIL_CONFIGS; i++) {
        pool_stats(&cfg[i].pool, &l[i]);
        print_tail_row(&cfg[i], &l[i], cfg[i].answered / (TAIL_ROUNDS * OPEN_SECONDS));
    }
    printf("\n  the median of the %d turns (a turn that met a burst of other work moves it "
           "less):\n  %-7s %-12s %8s %8s %8s\n",
           TAIL_ROUNDS, "daemon", "checkpoints", "p50 ms", "p99 ms", "p99.9 ms");
    for (int i = 0; i < TAIL_CONFIGS; i++)
        printf("  %-7s %-12s %8.2f %8.2f %8.2f\n", cfg[i].daemon, cfg[i].interval,
               turn_median(&cfg[i], offsetof(struct lat_stats, p50)),
               turn_median(&cfg[i], offsetof(struct lat_stats, p99)),
               turn_median(&cfg[i], offsetof(struct lat_stats, p999)));
    printf("\n  after / before, checkpoints every %s: p50 %.2f, p99 %.2f, p99.9 %.2f (all rounds); "
           "p99 %.2f (median of the turns)\n",
           checkpoint_interval, l[1].p50 / l[0].p50, l[1].p99 / l[0].p99, l[1].p999 / l[0].p999,
           turn_median(&cfg[1], offsetof(struct lat_stats, p99)) /
               turn_median(&cfg[0], offsetof(struct lat_stats, p99)));
    printf("  the checkpoints' share of p99 (every %s minus none): before %.2f ms, after %.2f "
           "ms (all rounds); before %.2f ms, after %.2f ms (medians of the turns)\n",
           checkpoint_interval, l[0].p99 - l[2].p99, l[1].p99 - l[3].p99,
           turn_median(&cfg[0], offsetof(struct lat_stats, p99)) -
               turn_median(&cfg[2], offsetof(struct lat_stats, p99)),
           turn_median(&cfg[1], offsetof(struct lat_stats, p99)) -
               turn_median(&cfg[3], offsetof(struct lat_stats, p99)));
    printf("  %-62s %s (%.2f ms; target <= %.1f ms)\n",
           "after: p99 at half the peak, checkpoints on", verdict(l[1].p99 <= TARGET_P99_MS),
           l[1].p99, TARGET_P99_MS);

    for (int i = 0; i < TAIL_CONFIGS; i++)
        close(cfg[i].hold_fd);
    for (int i = 0; i < TAIL_CONFIGS; i++) {
        (void)bench_wait(cfg[i].keeper, "waitpid");
        free(cfg[i].pool.v);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The parent: one child process per stack.
 */

static int run_child(char *const argv[])
{
    pid_t pid = fork();
    int status = 0;

    if (pid < 0)
        bench_die_sys("fork");
    if (pid == 0) {
        /* A killed bench stops the child's stack (its SIGTERM handler). */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != main_pid)
            _exit(126);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    status = bench_wait(pid, "waitpid");
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static _Noreturn void usage(void)
{
    fprintf(stderr, "usage: bench_decisiond DIR [--stacks notpm,tpm,tpmkey|both|all] [--entries N] "
                    "[--seconds S] [--workers N] [--receipts per-request|batch|both] "
                    "[--checkpoint-interval D] [--build DIR] [--source DIR] "
                    "[--before-build DIR [--tail-age S]]   (DIR absolute)\n");
    exit(1);
}

/* The variant named name, or -1. */
static int variant_of(const char *name, size_t len)
{
    for (int v = 0; v < N_VARIANTS; v++)
        if (strlen(variant_names[v]) == len && strncmp(variant_names[v], name, len) == 0)
            return v;
    return -1;
}

/* --stacks: a comma-separated list of variants, "both" (notpm,tpm, as before tpmkey) or "all".
 * Returns the set as a bit mask, 0 when the list is bad. */
static unsigned stacks_of(const char *list)
{
    unsigned mask = 0;

    if (strcmp(list, "all") == 0)
        return (1u << N_VARIANTS) - 1;
    if (strcmp(list, "both") == 0)
        return (1u << V_NOTPM) | (1u << V_TPM);
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        int v = variant_of(p, len);

        if (v < 0)
            return 0;
        mask |= 1u << v;
        if (p[len] == '\0')
            return mask;
        p += len + 1;
    }
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *stacks = "all", *variant = NULL, *receipts = "both",
               *before_build = NULL;
    char subs[2 * N_VARIANTS][64];
    int n_subs = 0, ready_fd = -1, hold_fd = -1;
    unsigned mask;
    char entries_s[32] = "30000", seconds_s[32] = "1.5", workers_s[16] = "4", tail_age_s[32] = "20";
    uint64_t entries;
    double seconds;
    long workers;
    int failed = 0;

    main_pid = getpid();
    bench_init("bench_decisiond");
    if (setvbuf(stdout, NULL, _IOLBF, 0) != 0)
        bench_die_msg("setvbuf failed");
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-') {
            if (dir != NULL)
                usage();
            dir = argv[i];
            continue;
        }
        if (i + 1 >= argc)
            usage();
        if (strcmp(argv[i], "--stacks") == 0)
            stacks = argv[++i];
        else if (strcmp(argv[i], "--variant") == 0)
            variant = argv[++i];
        else if (strcmp(argv[i], "--entries") == 0)
            snprintf(entries_s, sizeof(entries_s), "%s", argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0)
            snprintf(seconds_s, sizeof(seconds_s), "%s", argv[++i]);
        else if (strcmp(argv[i], "--workers") == 0)
            snprintf(workers_s, sizeof(workers_s), "%s", argv[++i]);
        else if (strcmp(argv[i], "--build") == 0)
            build_dir = argv[++i];
        else if (strcmp(argv[i], "--source") == 0)
            source_dir = argv[++i];
        else if (strcmp(argv[i], "--checkpoint-interval") == 0)
            checkpoint_interval = argv[++i];
        else if (strcmp(argv[i], "--receipts") == 0)
            receipts = argv[++i];
        else if (strcmp(argv[i], "--before-build") == 0)
            before_build = argv[++i];
        else if (strcmp(argv[i], "--tail-age") == 0)
            snprintf(tail_age_s, sizeof(tail_age_s), "%s", argv[++i]);
        else if (strcmp(argv[i], "--ready-fd") == 0)
            ready_fd = atoi(argv[++i]);
        else if (strcmp(argv[i], "--hold-fd") == 0)
            hold_fd = atoi(argv[++i]);
        else
            usage();
    }
    entries = strtoull(entries_s, NULL, 10);
    seconds = strtod(seconds_s, NULL);
    workers = strtol(workers_s, NULL, 10);
    mask = stacks_of(stacks);
    if (dir == NULL || dir[0] != '/' || !(seconds >= 0.1 && seconds <= 600) || workers < 1 ||
        workers > 64 || mask == 0 ||
        (strcmp(receipts, "per-request") != 0 && strcmp(receipts, "batch") != 0 &&
         strcmp(receipts, "both") != 0))
        usage();

    batch_mode = strcmp(receipts, "batch") == 0;
    if (variant != NULL && strncmp(variant, "keep-", 5) == 0) {
        if (ready_fd < 0 || hold_fd < 0)
            usage();
        return keep_stack(dir, strcmp(variant, "keep-tpm") == 0, (unsigned)workers, ready_fd,
                          hold_fd);
    }
    if (variant != NULL && strncmp(variant, "tail-", 5) == 0) {
        if (before_build == NULL)
            usage();
        return run_tail(dir, strcmp(variant, "tail-tpm") == 0, seconds, workers_s, before_build,
                        strtod(tail_age_s, NULL));
    }
    if (variant != NULL) {
        int v = variant_of(variant, strlen(variant));

        if (v < 0)
            usage();
        return run_variant(dir, (enum variant)v, entries, seconds, (unsigned)workers);
    }

    printf("bench_decisiond: build %s, source %s; %ld CPUs online", build_dir, source_dir,
           sysconf(_SC_NPROCESSORS_ONLN));
    bench_print_load();
    printf("\nthe clients, the daemon, its signer process and sqlite share these CPUs\n");
    /* One child per stack and receipt mode; with --before-build, the tail of both daemons instead
     * of the whole bench (run_tail: notpm and tpm only). */
    for (int v = 0; v < 2 * N_VARIANTS; v++) {
        const char *name = variant_names[v / 2], *mode = v % 2 == 0 ? "per-request" : "batch";
        const char *prefix = before_build != NULL ? "tail-" : "";
        char sub[BENCH_PATH_MAX], subname[64], child_variant[16];
        char *args[] = {"bench_decisiond",
                        sub,
                        "--variant",
                        child_variant,
                        "--entries",
                        entries_s,
                        "--seconds",
                        seconds_s,
                        "--workers",
                        workers_s,
                        "--build",
                        (char *)build_dir,
                        "--source",
                        (char *)source_dir,
                        "--checkpoint-interval",
                        (char *)checkpoint_interval,
                        "--receipts",
                        (char *)mode,
                        before_build != NULL ? "--before-build" : NULL,
                        (char *)before_build,
                        "--tail-age",
                        tail_age_s,
                        NULL};

        if (!(mask & (1u << (v / 2))) ||
            (strcmp(receipts, "both") != 0 && strcmp(receipts, mode) != 0) ||
            (before_build != NULL && v / 2 == V_TPMKEY))
            continue;
        snprintf(child_variant, sizeof(child_variant), "%s%s", prefix, name);
        snprintf(subname, sizeof(subname), "%s%s-%s", prefix, name, mode);
        if (before_build == NULL)
            snprintf(subs[n_subs++], sizeof(subs[0]), "%s", subname);
        bench_join_path(sub, dir, subname);
        if (run_child(args) < 0) {
            fprintf(stderr, "bench_decisiond: the %s%s stack (receipts: %s) failed\n",
                    before_build != NULL ? "tail comparison on the " : "", name, mode);
            failed = 1;
        }
    }
    if (before_build != NULL)
        return failed;
    summary_print(dir, subs, n_subs);
    return failed;
}
