/*
 * benchutil.h -- what the benchmarks share: failing loudly, the clock, paths, starting external
 * tools and swtpm, probing loopback ports, CPU time from /proc, and (bench_decisiond, bench_proxy)
 * reading scripts/dev-stack's stack.env and stopping its stack at exit. Benchmarks are standalone
 * programs (they cannot link the test fixtures), and every failure here prints "<program>: <why>"
 * to stderr and exits 1; the atexit handler bench_init installs kills the swtpm bench_swtpm_start
 * started, on every exit.
 *
 * Processes are started with fork + execvp while the bench runs no other thread (setup comes
 * first), so the child may call anything before exec. A child dies with the bench
 * (PR_SET_PDEATHSIG): a killed bench must not leave a swtpm holding its ports. Not thread-safe
 * except the die_* functions, bench_check_pt, bench_now, bench_sleep_ms, bench_port_open,
 * bench_proc_cpu and bench_env_value (no state of their own).
 */
#ifndef SWORN_BENCHUTIL_H
#define SWORN_BENCHUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BENCH_PATH_MAX 4096

/* Record the program name for messages and the bench's pid, and install the swtpm stop. */
void bench_init(const char *prog);

/* Print "<prog>: <what>: <sworn_err_msg() | strerror(errno)>" or "<prog>: <what>"; exit 1. */
_Noreturn void bench_die_lib(const char *what);
_Noreturn void bench_die_sys(const char *what);
_Noreturn void bench_die_msg(const char *what);

/* pthread calls return their error instead of setting errno: die when rc != 0. */
void bench_check_pt(int rc, const char *what);

/* CLOCK_MONOTONIC in seconds. */
double bench_now(void);

void bench_sleep_ms(long ms);

/* out = dir "/" name (BENCH_PATH_MAX bytes), or die. */
void bench_join_path(char out[BENCH_PATH_MAX], const char *dir, const char *name);

/* Read a small file whole. OUT: *len. The buffer is NUL-terminated (cap includes the NUL). */
void bench_read_small(const char *path, uint8_t *buf, size_t cap, size_t *len);

/* Print a tool's log to stderr, so that a failing command explains itself (missing: nothing). */
void bench_dump_log(const char *path);

/*
 * Start argv with stdout to out_path (NULL: to log_path) and stderr to log_path (both
 * truncated). The child dies with the bench and keeps no descriptor of ours. Returns its pid.
 */
pid_t bench_spawn(char *const argv[], const char *log_path, const char *out_path);

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
 * The dev stack to stop: from this call on, bench_stack_down runs
 * "<source_dir>/scripts/dev-stack down <stack_dir>" (both copied). Call it before
 * "dev-stack up", so that a stack that came partly up is stopped too.
 */
void bench_stack_watch(const char *stack_dir, const char *source_dir);

/*
 * Run dev-stack down on the watched stack and wait for it (its output to <stack_dir>/down.log),
 * then forget the stack. Does nothing when none is watched, when stack_dir was never made
 * (dev-stack failed before it made it: nothing is up), or in any process but the bench's own.
 * Never exits, so it may run from an atexit handler; not from a signal handler.
 */
void bench_stack_down(void);

#endif
