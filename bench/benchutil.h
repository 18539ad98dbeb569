/*
 * benchutil.h -- what the benchmarks share: failing loudly, the clock, paths, starting external
 * tools and swtpm, probing loopback ports, CPU time from /proc, small files, (bench_decisiond,
 * bench_proxy, bench_run) starting a dev stack (scripts/dev-stack), reading its stack.env and
 * stopping it at exit, and (bench_log, bench_decisiond) measuring the log's commits: sqlite's
 * syncs and bytes through a counting VFS, and appends of one entry per call from many threads.
 * Benchmarks are standalone programs (they cannot link the test fixtures), and every failure here
 * prints "<program>: <why>" to stderr and exits 1; the atexit handler bench_init installs
 * (bench_stop_all) stops the dev stack, the servers and the swtpm the bench started, on every exit.
 *
 * Processes are started with fork + execvp while the bench runs no other thread (setup comes
 * first), so the child may call anything before exec. A child dies with the bench
 * (PR_SET_PDEATHSIG): a killed bench must not leave a swtpm holding its ports. Not thread-safe
 * except the die_* functions, bench_check_pt, bench_now, bench_sleep_ms, bench_port_open,
 * bench_free_port, bench_wait, bench_put_text, bench_make_dir, bench_last_line, bench_self_dir,
 * bench_proc_cpu and bench_env_value (no state of their own), and the counting VFS's counters
 * (atomics).
 */
#ifndef SWORN_BENCHUTIL_H
#define SWORN_BENCHUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sworn_log;

#define BENCH_PATH_MAX 4096

/* The build and the source a bench that starts a dev stack uses by default (CMake defines them
 * for those benches: the build they were built in, their source). */
#ifndef SWORN_BENCH_BUILD_DIR
#define SWORN_BENCH_BUILD_DIR "."
#endif
#ifndef SWORN_BENCH_SOURCE_DIR
#define SWORN_BENCH_SOURCE_DIR "."
#endif

/* Record the program name for messages and the bench's pid, and install the swtpm stop. */
void bench_init(const char *prog);

/* Print "<prog>: <what>: <sworn_err_msg() | strerror(errno)>" or "<prog>: <what>"; exit 1. */
_Noreturn void bench_die_lib(const char *what);
_Noreturn void bench_die_sys(const char *what);
_Noreturn void bench_die_msg(const char *what);

/* pthread calls return their error instead of setting errno: die when rc != 0. */
void bench_check_pt(int rc, const char *what);

/* Print ", load average L" (the last minute's, from /proc/loadavg), or nothing when unknown. */
void bench_print_load(void);

/* CLOCK_MONOTONIC in seconds. */
double bench_now(void);

void bench_sleep_ms(long ms);

/* out = dir "/" name (BENCH_PATH_MAX bytes), or die. */
void bench_join_path(char out[BENCH_PATH_MAX], const char *dir, const char *name);

/* The folder of this program (/proc/self/exe's), where the benches built beside it are. */
void bench_self_dir(char out[BENCH_PATH_MAX]);

/* Read a small file whole. OUT: *len. The buffer is NUL-terminated (cap includes the NUL). */
void bench_read_small(const char *path, uint8_t *buf, size_t cap, size_t *len);

/* Write text to path (created or truncated, with mode), or die. */
void bench_put_text(const char *path, const char *text, mode_t mode);

/* mkdir(path, mode), or die (also when it exists). */
void bench_make_dir(const char *path, mode_t mode);

/*
 * The last non-empty line of the file at path, without its newline, cut to cap bytes with the NUL
 * (a one-line reason): the last of the lines that start with prefer when there is one (prefer NULL:
 * none is preferred). out is "" when the file is missing or empty.
 */
void bench_last_line(const char *path, const char *prefer, char *out, size_t cap);

/* Print a tool's log to stderr, so that a failing command explains itself (missing: nothing). */
void bench_dump_log(const char *path);

/*
 * Start argv with stdout to out_path (NULL: to log_path) and stderr to log_path (both
 * truncated). The child dies with the bench and keeps no descriptor of ours. Returns its pid.
 */
pid_t bench_spawn(char *const argv[], const char *log_path, const char *out_path);

/* Wait for a child of this process (again after EINTR); dies with what (e.g. "waitpid nginx") when
 * waitpid fails. Returns its wait status. */
int bench_wait(pid_t pid, const char *what);

/* Print "<prog>: <name> failed (status 0x..)", then the log and (not NULL) out_path; exit 1. */
_Noreturn void bench_die_status(const char *name, int status, const char *log,
                                const char *out_path);

/* Run a tool that must succeed; stderr (and stdout when out_path is NULL) to <dir>/cmd.log,
 * printed (with out_path) when it fails. */
void bench_run(const char *dir, char *const argv[], const char *out_path);

/*
 * Make a fresh TPM 2.0 state in <dir>/tpm/state (swtpm_setup --tpm2, no EK or certificates),
 * start swtpm on free loopback ports (flags not-need-init,startup-clear; log <dir>/tpm/swtpm.log)
 * and wait until it accepts connections. OUT: tcti ("swtpm:host=127.0.0.1,port=N").
 */
void bench_swtpm_start(const char *dir, char *tcti, size_t tcti_cap);

/* Kill swtpm (if this process started it); also run at exit. */
void bench_swtpm_stop(void);

/* 1 when a TCP connection to 127.0.0.1:port succeeds now, 0 otherwise; dies when no socket. */
int bench_port_open(unsigned port);

/* A TCP port on 127.0.0.1 that is free now (the kernel's pick for port 0); another process may
 * take it before the caller's server binds it. Dies when no socket can be bound. */
unsigned bench_free_port(void);

/*
 * Start a server (argv, stdout and stderr to log) and wait until ports[0..nports) on 127.0.0.1
 * accept connections (20 s at most). Returns its pid, which bench_stop_all stops (at most 8
 * servers); 0 when it exited at start with one of logs[0..nlogs) saying "in use" (the caller tries
 * new ports). Dies, printing the logs, when it exits otherwise or does not listen in time.
 */
pid_t bench_server_start(char *const argv[], const char *name, const char *log,
                         const unsigned *ports, int nports, const char *const *logs, int nlogs);

/* What nginx serves at /small.txt. */
#define BENCH_SMALL_BODY "small\n"

/* nginx, started by bench_nginx_start. */
struct bench_nginx {
    char dir[BENCH_PATH_MAX]; /* DIR/nginx: its prefix, nginx.conf, nginx.out, error.log, tmp/ */
    char www[BENCH_PATH_MAX]; /* its root, holding small.txt */
    unsigned http_port;       /* on 127.0.0.1 */
    unsigned https_port;      /* on 127.0.0.1, with tls; else 0 */
    pid_t pid;
};

/*
 * Write nginx.conf's http block after the shared lines (and before its closing brace) into text
 * (cap bytes with the NUL) for n's ports: its own settings and its server. Returns snprintf's
 * result.
 */
typedef int bench_nginx_http(char *text, size_t cap, const struct bench_nginx *n, const void *arg);

/* Make DIR/nginx with www/small.txt (BENCH_SMALL_BODY) and tmp/. OUT: n (no ports, no pid). */
void bench_nginx_prepare(struct bench_nginx *n, const char *dir);

/*
 * Start the prepared nginx as one process (master_process off), no access log, on a free loopback
 * port (and a second, https_port, when tls is 1), with worker_connections connections and the http
 * block's lines http writes; new ports (5 times at most) when nginx finds them taken. A server of
 * bench_server_start. Dies when it does not start.
 */
void bench_nginx_start(struct bench_nginx *n, int tls, unsigned worker_connections,
                       bench_nginx_http *http, const void *arg);

/*
 * utime + stime of one process (all its threads) in seconds, from /proc/PID/stat. OUT: *ppid
 * (may be NULL). Returns -1 when the process is gone or the file cannot be parsed.
 */
double bench_proc_cpu(pid_t pid, pid_t *ppid);

/*
 * The value of key in text, scripts/dev-stack's stack.env (lines KEY=VALUE, KEY="VALUE" or
 * KEY='VALUE'; the quotes are removed), into out (cap bytes with the NUL); "" when the key is
 * absent. Dies when the value does not fit.
 */
void bench_env_value(const char *text, const char *key, char *out, size_t cap);

/*
 * Start a dev stack: bench_stack_watch(stack_dir, source_dir), then run
 * "<source_dir>/scripts/dev-stack up <stack_dir> --build <build_dir> OPTS..." (opts:
 * NULL-terminated, at most 24) with stdout to out_path and stderr to log_path, and wait for it.
 * Returns its wait status: 0 when the stack is up. The caller stops a stack that failed with
 * bench_stack_down.
 */
int bench_stack_up(const char *stack_dir, const char *source_dir, const char *build_dir,
                   char *const opts[], const char *log_path, const char *out_path);

/*
 * The files of a dev stack in DIR/sworn (made here, 0700): OUT: stack (DIR/sworn/stack, which
 * dev-stack up makes), policy (DIR/sworn/policy.yaml, which the caller writes), out and log
 * (DIR/sworn/up.out and up.log, for dev-stack up's stdout and stderr). Each BENCH_PATH_MAX bytes.
 */
void bench_stack_files(const char *dir, char *stack, char *policy, char *out, char *log);

/* Read <stack_dir>/stack.env (for bench_env_value) into env, cap bytes with the NUL, or die. */
void bench_stack_env(const char *stack_dir, char *env, size_t cap);

/*
 * The pid stack.env's text env gives under key (DECISIOND_PID, PROXY_PID, SWTPM_PID): a daemon of
 * the stack, which from now on gets SIGTERM when a signal ends the bench (bench_signals_install;
 * at most 4, forgotten by bench_stack_down). Returns it, or 0 when the key is absent or no pid.
 */
pid_t bench_stack_daemon(const char *env, const char *key);

/*
 * The dev stack to stop: from this call on, bench_stack_down runs
 * "<source_dir>/scripts/dev-stack down <stack_dir>" (both copied). Call it before
 * "dev-stack up", so that a stack that came partly up is stopped too.
 */
void bench_stack_watch(const char *stack_dir, const char *source_dir);

/*
 * Run dev-stack down on the watched stack and wait for it (its output to <stack_dir>/down.log),
 * then forget the stack and its daemons (bench_stack_daemon). Does nothing when none is
 * watched, when stack_dir was never made (dev-stack failed before it made it: nothing is up), or in
 * any process but the bench's own. Never exits, so it may run from an atexit handler; not from a
 * signal handler.
 */
void bench_stack_down(void);

/*
 * What bench_init's atexit handler does, callable before: bench_stack_down, then every server of
 * bench_server_start stopped (SIGTERM, SIGKILL after 5 s; the last started first), then
 * bench_swtpm_stop. Only in the bench's own process; never exits.
 */
void bench_stop_all(void);

/*
 * On SIGINT, SIGTERM and SIGHUP: SIGKILL the servers, SIGTERM the stack's daemons
 * (bench_stack_daemon) and _exit(130) (a signal handler may only do that much: dev-stack
 * down does not run). Dies when sigaction fails.
 */
void bench_signals_install(void);

/* ---------------------------------------------------------------------------------------------
 * The log's commits (bench_log, bench_decisiond).
 */

/*
 * Register a counting sqlite3 VFS as the default: every sqlite file opened from then on (in this
 * process) counts its syncs by kind (main database, WAL, other), the bytes handed to xWrite, and
 * the commits (a WAL sync right after a WAL frame header that carries a database size: only
 * commit frames do). Call once, before any log is opened; dies when sqlite refuses.
 */
void bench_sqlite_count_install(void);

/* What-if runs only: 1 makes the counting VFS count syncs without performing them; 0 undoes it.
 * bench_sqlite_eliding says which is in force. */
void bench_sqlite_elide_syncs(int on);
int bench_sqlite_eliding(void);

/* Files opened that the counting VFS could not wrap (its method copies ran out): should be 0. */
int bench_sqlite_uncounted(void);

/* The counting VFS's counters (all zero before bench_sqlite_count_install). */
struct bench_sync_snap {
    unsigned long db, wal, other, commits; /* syncs by file kind; commits: WAL syncs of commits */
    unsigned long long bytes;              /* written to every sqlite file */
    unsigned long long wal_bytes;          /* of which to the WAL (the rest: checkpoints) */
};
struct bench_sync_snap bench_sync_snap(void);
/* b - a, field by field. */
struct bench_sync_snap bench_sync_diff(struct bench_sync_snap a, struct bench_sync_snap b);
/* Every sync: db + wal + other. */
unsigned long bench_sync_total(struct bench_sync_snap s);

#define BENCH_COMMIT_THREADS_MAX 64

/* What bench_log_commits measured. */
struct bench_commits {
    unsigned threads;
    unsigned long entries;          /* appended, by all threads */
    unsigned long long entry_bytes; /* their bytes */
    double seconds;                 /* wall time from the common start to the last thread's end */
    struct bench_sync_snap syncs;   /* what sqlite did meanwhile (zeros without the counting VFS) */
};

/*
 * The log's group commit: threads threads (1..BENCH_COMMIT_THREADS_MAX) start together and each
 * appends one entry per sworn_log_append call (a durable commit each, which the log may group
 * with other threads' into one transaction) to log, until seconds have passed or it has appended
 * max_per_thread. Thread i's k-th entry is entries[(k * threads + i) % n_entries] (lens: their
 * lengths). OUT: *out. Dies when a call fails.
 */
void bench_log_commits(struct sworn_log *log, unsigned threads, double seconds,
                       unsigned long max_per_thread, const uint8_t *const *entries,
                       const size_t *lens, size_t n_entries, struct bench_commits *out);

#endif
