/*
 * child_fixture.c -- checks in a forked child (child_fixture.h).
 */
#define _GNU_SOURCE /* syscall, unshare, setresuid, CLONE_NEWNET */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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

int sworn_child_call_execve(void)
{
    char *const argv[] = {"true", NULL}, *const envp[] = {NULL};

    execve("/bin/true", argv, envp);
    return 50;
}

int sworn_child_call_fork(void)
{
    pid_t pid = fork();

    if (pid == 0)
        _exit(0);
    return 50;
}

int sworn_child_call_setresuid_own(void)
{
    uid_t uid = getuid();

    if (setresuid(uid, uid, uid) == 0)
        return 51;
    return 50;
}

int sworn_child_call_unshare(void)
{
    unshare(CLONE_NEWUSER);
    return 50;
}

int sworn_child_call_clone_newnet(void)
{
    syscall(SYS_clone, (unsigned long)(CLONE_NEWNET | SIGCHLD), NULL, NULL, NULL, 0);
    return 50;
}

int sworn_child_call_ptrace(void)
{
    ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    return 50;
}

int sworn_child_call_mount(void)
{
    mount("none", "/tmp", "tmpfs", 0, NULL);
    return 50;
}

void sworn_child_expect_kills(int (*run)(const void *ctx, int (*fn)(void)), const void *ctx,
                              const struct sworn_child_kill *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
#ifdef TEST_SANITIZER
        if (cases[i].sanitizer_allows)
            continue;
#endif
        sworn_child_expect_sigsys(run(ctx, cases[i].fn), cases[i].name);
    }
}

int sworn_child_inet_allowed(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return 2;
    close(fd);
    fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0)
        close(fd);
    else if (errno == EPERM)
        return 3;
    return 0;
}

int sworn_child_inet_refused(void)
{
    errno = 0;
    if (socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0) != -1 || errno != EPERM)
        return 2;
    errno = 0;
    if (socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0) != -1 || errno != EPERM)
        return 3;
    return 0;
}

int sworn_child_log_checks(void)
{
    if (!sworn_child_confined(0))
        return 2;
    if (syscall(SYS_personality, 0xffffffffUL) == -1)
        return 3;
    return 0;
}
