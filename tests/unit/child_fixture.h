/*
 * child_fixture.h -- run a check in a forked child and see how it ended: for tests of what a
 * process may still do once it is confined (a seccomp filter, a privilege drop), which must run
 * in a process of their own, since nothing confines a process only for a while.
 *
 * Test code only: the expect helpers fail the running cmocka test with a message. The child ends
 * with _exit, so no atexit handler, cmocka's state or stdio buffer of the test runs twice (the
 * helpers flush stdio before they fork).
 */
#ifndef SWORN_CHILD_FIXTURE_H
#define SWORN_CHILD_FIXTURE_H

#include <stddef.h>
#include <sys/types.h>

/* The exit statuses the child itself uses when its set-up fails (the check's own are below). */
#define SWORN_CHILD_ERR_STDERR 100 /* err_path could not be opened */
#define SWORN_CHILD_ERR_SETUP 101  /* setup returned nonzero */

/*
 * Fork; in the child, send stderr to err_path (truncated) when it is not NULL, run setup(arg)
 * (NULL: none) and then fn, whose return is the child's exit status (0: every check held; each
 * failed check its own small number). Returns the wait status, which expect_exit0 and
 * expect_sigsys judge.
 */
int sworn_child_run(int (*setup)(void *), void *arg, int (*fn)(void), const char *err_path);

/* Fail the test unless the child exited with status 0 (naming the signal or failed check). */
void sworn_child_expect_exit0(int status);

/* Fail the test unless the child was killed by SIGSYS (a seccomp kill); what names the call. */
void sworn_child_expect_sigsys(int status, const char *what);

/* Whether /proc/<pid>/status (pid 0: this process) shows a seccomp filter (Seccomp 2) and
 * no_new_privs (NoNewPrivs 1). */
int sworn_child_confined(pid_t pid);

/*
 * Calls a filter kills, one per child: each returns 50 when the call came back (a test failure),
 * 51 where it also succeeded. call_mount mounts on /tmp, call_clone_newnet clones into a new
 * network namespace, call_setresuid_own sets the process's own uid.
 */
int sworn_child_call_execve(void);
int sworn_child_call_fork(void);
int sworn_child_call_setresuid_own(void);
int sworn_child_call_unshare(void);
int sworn_child_call_clone_newnet(void);
int sworn_child_call_ptrace(void);
int sworn_child_call_mount(void);

/* A call that should kill: its name for the message, the call, and whether the sanitizer runtime
 * needs it for its reports (seccomp.h), so that a sanitizer build allows it. */
struct sworn_child_kill {
    const char *name;
    int (*fn)(void);
    int sanitizer_allows;
};

/*
 * For each of the n cases (in a sanitizer build, those the sanitizer does not need), fail the
 * test unless run(ctx, fn), a wait status as sworn_child_run returns, is a death by SIGSYS.
 */
void sworn_child_expect_kills(int (*run)(const void *ctx, int (*fn)(void)), const void *ctx,
                              const struct sworn_child_kill *cases, size_t n);

/* Checks for a child under a filter; each returns 0 when they held, 2 or 3 for the one failed.
 * inet_allowed: a TCP socket can be made (IPv6 too, unless the kernel has none); inet_refused:
 * neither an IPv4 nor an IPv6 socket, EPERM; log_checks: the process is confined, and an unlisted
 * call (personality) is allowed, as a filter in log mode allows it. */
int sworn_child_inet_allowed(void);
int sworn_child_inet_refused(void);
int sworn_child_log_checks(void);

#endif
