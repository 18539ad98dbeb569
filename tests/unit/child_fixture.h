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

#endif
