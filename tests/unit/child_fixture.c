/*
 * child_fixture.c -- checks in a forked child (child_fixture.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_fixture.h"
#include "testutil.h"

int sworn_child_run(int (*setup)(void *), void *arg, int (*fn)(void), const char *err_path)
{
    pid_t pid;
    int status;

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (err_path != NULL) {
            int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

            if (fd < 0 || dup2(fd, 2) < 0)
                _exit(SWORN_CHILD_ERR_STDERR);
            close(fd);
        }
        if (setup != NULL && setup(arg) != 0)
            _exit(SWORN_CHILD_ERR_SETUP);
        _exit(fn());
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

void sworn_child_expect_exit0(int status)
{
    if (WIFSIGNALED(status))
        fail_msg("the child was killed by signal %d", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("the child's check %d failed", WEXITSTATUS(status));
}

void sworn_child_expect_sigsys(int status, const char *what)
{
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
        fail_msg("%s: expected death by SIGSYS, got %s %d", what,
                 WIFSIGNALED(status) ? "signal" : "exit",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

int sworn_child_confined(pid_t pid)
{
    char path[64], status[8192];

    if (pid == 0)
        snprintf(path, sizeof(path), "/proc/self/status");
    else
        snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    if (sworn_test_read_proc(path, status, sizeof(status)) < 0)
        return 0;
    return strstr(status, "\nSeccomp:\t2\n") != NULL &&
           strstr(status, "\nNoNewPrivs:\t1\n") != NULL;
}
