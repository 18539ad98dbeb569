/*
 * sandbox_fixture.h -- the real sworn-run (SWORN_RUN_BIN) for a test, run as root on a dev stack
 * the test started (stack_fixture.h, with --proxy): its command line; a sandbox run to its end, or
 * kept live on pipes while the test looks at it, or run under a controlling terminal of its own;
 * a work folder holding conformance/sworn-conformance-probe (SWORN_PROBE_BIN, copied as
 * sworn-probe); what the log records of a sandbox (its SandboxStarted entry, the newest entry of a
 * kind); and what is left after it
 * (processes in its namespaces, run folders in the stack's state folder). Shared by test_sandbox,
 * test_sandbox_probes and test_sandbox_attacks.
 *
 * Waits are for events (sworn-run's exit, a line the agent prints), never a sleep. Test code
 * only: failures fail the running cmocka test with a message (the command, its status and
 * outputs).
 */
#ifndef SWORN_SANDBOX_FIXTURE_H
#define SWORN_SANDBOX_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/ioctl.h>
#include <termios.h>

#include "sworn.pb-c.h"

#include "testutil.h"

struct sworn_stack;

#define SWORN_SBX_RUN_MS 60000  /* how long one sandbox may take, start to end */
#define SWORN_SBX_ARGS_MAX 48   /* a sandbox's command line, sworn-run's own arguments included */
#define SWORN_SBX_OUT_MAX 16384 /* what a live sandbox's agent (or one under a terminal) prints */
#define SWORN_SBX_TAIL 64       /* the newest log entries searched for a sandbox's record */

/* ---- programs and folders ---- */

/* SWORN_RUN_BIN, or NULL when it is unset or empty (sworn-run is not built: the test skips). */
const char *sworn_sbx_run_bin(void);

/*
 * Whether a test that runs sworn-run as root can run here: 1, or 0 after printing why not on
 * standard error ("TEST: not root: WHY_ROOT; skipped", or "TEST: sworn-run is not built
 * (SWORN_RUN_BIN is empty): skipped"); the test then exits 77 (skipped).
 */
int sworn_sbx_can_run(const char *test, const char *why_root);

/* SWORN_PROBE_BIN (sworn_test_bin: aborts when unset). */
const char *sworn_sbx_probe_bin(void);

/* Whether path exists (lstat: a dangling link counts). */
int sworn_sbx_exists(const char *path);

/* A fresh temporary folder (sworn_test_tmpdir(tag)), mode 0755 (the agent's uid is not ours), with
 * sworn-probe copied into it (0755). Returns its path (free it). */
char *sworn_sbx_work_new(const char *tag);

/* Remove a folder whatever its depth (rm -rf --one-file-system: nftw stops at PATH_MAX, rm does
 * not); nothing when it is not there. */
void sworn_sbx_remove_tree(const char *path);

/* After a sandbox ended: its work folder (kept: it held sworn-probe, see sworn_sbx_argv) must be
 * there and hold nothing of a sandbox uid's (>= 1000000000) and no set-id entry: what the agent
 * made was given back to the folder's owner. The folder is then removed. Frees work. */
void sworn_sbx_expect_work_returned(char *work);

/* ---- a sandbox run to its end ---- */

/*
 * sworn-run's command line into argv (SWORN_SBX_ARGS_MAX entries, NULL-terminated): SWORN_RUN_BIN,
 * "--stack stack_dir" when stack_dir is not NULL, options (NULL-terminated, may be NULL; at most
 * SWORN_SBX_ARGS_MAX / 2 entries in all so far, the rest dropped), "--keep" when options give
 * "--work" with a folder that is not empty, without it (a test's work folder that holds
 * sworn-probe: sworn-run removes only a folder that was empty at the start), "--", then agent
 * (NULL-terminated; what does not fit is dropped).
 */
void sworn_sbx_argv(const char **argv, const char *stack_dir, const char *const *options,
                    const char *const *agent);

/* Run sworn_sbx_argv's command line to its end: its outputs and status in r (sworn_test_run; free
 * them with sworn_test_run_free). */
void sworn_sbx_run(struct sworn_test_run *r, const char *stack_dir, const char *const *options,
                   const char *const *agent);

/* Fail with the run's command, status and outputs unless its exit status is want. */
void sworn_sbx_expect_status(const struct sworn_test_run *r, int want);

/* Whether text holds line as a whole line. */
int sworn_sbx_has_line(const char *text, const char *line);

/* Fail with the run's status and outputs unless its standard output holds line as a whole line. */
void sworn_sbx_expect_line(const struct sworn_test_run *r, const char *line);

/*
 * fork, and exec argv in the child with its standard input, output and error on in, out and err
 * (-1: the test's own). The caller closes its descriptors (open them close-on-exec). A child that
 * cannot set them exits 126, one that cannot exec 127. Returns the child's pid.
 */
pid_t sworn_sbx_spawn(const char *const *argv, int in, int out, int err);

/* Wait for pid (again after EINTR); returns its exit status, or 128 + the signal that ended it. */
int sworn_sbx_reap(pid_t pid);

/* ---- a sandbox that runs while the test looks at it ---- */

struct sworn_sbx_live {
    pid_t pid;      /* sworn-run */
    int in, out;    /* its standard input and output: our ends of the pipes */
    char err[4096]; /* its standard error: a file in a temporary folder of its own */
    char *work;     /* set by the caller, or NULL: its work folder (owned, freed by the end) */
    char buf[SWORN_SBX_OUT_MAX];
    size_t have, used;
};

/*
 * Start argv (a whole command line, as sworn_sbx_argv makes) with pipes on its standard input and
 * output, its standard error in l->err. Until sworn_sbx_live_end, l is remembered (two at once at
 * most) for sworn_sbx_live_abort_all: make it static, a teardown may reach it after a failure.
 */
void sworn_sbx_live_start(struct sworn_sbx_live *l, const char *const *argv);

/* The next line the agent printed (without its newline; valid until the next call), waiting up to
 * ms; fails the test, with what it printed and sworn-run's error output, when none comes. */
const char *sworn_sbx_live_line_within(struct sworn_sbx_live *l, int ms);

/* sworn_sbx_live_line_within SWORN_SBX_RUN_MS. */
const char *sworn_sbx_live_line(struct sworn_sbx_live *l);

/* Write text to the agent's standard input; fails the test unless all of it is written. */
void sworn_sbx_live_write(struct sworn_sbx_live *l, const char *text);

/*
 * Close the agent's standard input and wait for sworn-run (SWORN_SBX_RUN_MS at most: then it is
 * killed and the test fails). Fails the test when its error output holds a sanitizer report, or
 * (l->work set) when the work folder is left (sworn_sbx_expect_work_returned). Removes the error
 * file. Returns sworn-run's exit status (128 + a signal).
 */
int sworn_sbx_live_end(struct sworn_sbx_live *l);

/* A teardown's: end every live sandbox the test left (input closed, SWORN_SBX_RUN_MS, then
 * SIGKILL) and remove its error file and its work folder (l->work). */
void sworn_sbx_live_abort_all(void);

/* ---- a sandbox under a terminal ---- */

/* The window size a terminal of sworn_sbx_run_under_pty starts with (not the kernel's 0 x 0, so
 * that a size left changed shows). */
#define SWORN_SBX_PTY_ROWS 37
#define SWORN_SBX_PTY_COLS 91

/* What sworn_sbx_run_under_pty saw. */
struct sworn_sbx_pty_run {
    int status;                  /* the exit status (128 + a signal); -1 when it was killed */
    int killed;                  /* 1: it did not end within the bound and was killed (SIGKILL) */
    char out[SWORN_SBX_OUT_MAX]; /* the standard output (a pipe), NUL-terminated */
    struct termios before;       /* the terminal's settings when the command started */
    struct termios after;        /* and once it ended */
    struct winsize ws_before;    /* its window size when the command started */
    struct winsize ws_after;     /* and once it ended */
    int excl_after;              /* 1: in exclusive mode (TIOCEXCL) once it ended */
    int writes_after;            /* 1: once it ended, a byte written to the terminal went through
                                    at once (its output was not stopped, TCOOFF) */
};

/*
 * Run argv (a whole command line) in a session of its own whose controlling terminal is a new
 * pseudo-terminal, as a shell's is: standard input and error are the terminal, standard output is
 * a pipe read to its end. The terminal starts with echo and canonical input on and a window of
 * SWORN_SBX_PTY_ROWS x SWORN_SBX_PTY_COLS. The command gets SWORN_SBX_RUN_MS: then it is killed
 * (pr->killed) and pr->status is -1.
 */
void sworn_sbx_run_under_pty(const char *const *argv, struct sworn_sbx_pty_run *pr);

/* sworn_sbx_run_under_pty with a bound of ms milliseconds. */
void sworn_sbx_run_under_pty_within(const char *const *argv, int ms, struct sworn_sbx_pty_run *pr);

/* ---- the record ---- */

/*
 * The newest entry of kind among the newest SWORN_SBX_TAIL entries of the stack's log (admin
 * Tail), or NULL. OUT: *tail (it holds the entry; free it with
 * sworn__v1__admin_response__free_unpacked), *index (when not NULL) the entry's log index.
 */
const Sworn__V1__Entry *sworn_sbx_newest(struct sworn_stack *s, Sworn__V1__Entry__KindCase kind,
                                         Sworn__V1__AdminResponse **tail, uint64_t *index);

/*
 * The newest SandboxStarted entry named name among the newest SWORN_SBX_TAIL entries: its log
 * index, and its agent uid in *agent_uid (when not NULL). With principal not NULL, every
 * SandboxStarted entry named name there must name that principal. Fails the test when none is
 * there.
 */
uint64_t sworn_sbx_started(struct sworn_stack *s, const char *name, const char *principal,
                           uint32_t *agent_uid);

/* ---- what is left ---- */

/* The name of /proc/pid/ns/<ns> ("pid:[4026532123]") into out (cap bytes); "" when it cannot be
 * read. */
void sworn_sbx_ns_name(pid_t pid, const char *ns, char *out, size_t cap);

/* How many processes of the host are in the namespace of kind ("pid", "user", ...) named ns, as
 * /proc/PID/ns/<kind> reads ("pid:[4026532123]"); fails the test unless ns is such a name. */
int sworn_sbx_processes_in(const char *kind, const char *ns);

/*
 * How many processes of the host have exactly the command line argv0 arg1 (/proc/PID/cmdline:
 * "argv0\0arg1\0"). A namespace's inode number is reused once the namespace is gone, so a
 * sandbox started meanwhile (another test's) can show the same "pid:[N]": a process the agent
 * started with an argument no one else uses is what names a leftover for sure.
 */
int sworn_sbx_processes_named(const char *argv0, const char *arg1);

/* How many entries the stack's state folder (DIR/sandboxes) holds but "uids": the run folders
 * left (each is printed). Fails the test when the folder cannot be read. */
int sworn_sbx_run_folders_left(struct sworn_stack *s);

#endif
