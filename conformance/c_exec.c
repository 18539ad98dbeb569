/*
 * c_exec.c -- fork, exec, capture (c_exec.h).
 */
#include "c_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"

static int wait_child(pid_t pid, int *status)
{
    int st;

    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return sworn_err_set(SWORN_ERR_IO, "waitpid: %s", strerror(errno));
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 0;
}

/* In the child: stdin from /dev/null, stdout to fd (or /dev/null when fd < 0), then exec. */
static void child(char *const argv[], int fd, int pipe_r)
{
    int null = open("/dev/null", O_RDWR);

    if (null < 0 || dup2(null, 0) < 0 || dup2(fd >= 0 ? fd : null, 1) < 0)
        _exit(127);
    if (pipe_r >= 0)
        close(pipe_r);
    execv(argv[0], argv);
    _exit(127);
}

int c_exec_capture(char *const argv[], size_t max, char **out, size_t *out_len, int *status)
{
    int p[2] = {-1, -1}, rc = -1;
    size_t len = 0, cap = 0;
    char *buf = NULL;
    pid_t pid;

    if (out != NULL && pipe(p) < 0)
        return sworn_err_set(SWORN_ERR_IO, "pipe: %s", strerror(errno));
    pid = fork();
    if (pid < 0) {
        sworn_err_set(SWORN_ERR_IO, "fork: %s", strerror(errno));
        goto done;
    }
    if (pid == 0)
        child(argv, p[1], p[0]);
    if (out == NULL)
        return wait_child(pid, status);
    close(p[1]);
    p[1] = -1;
    for (;;) {
        ssize_t n;
        if (cap - len < 4096) {
            size_t ncap = cap == 0 ? 65536 : cap * 2;
            char *nb = ncap > max + 4096 + 1 ? NULL : realloc(buf, ncap);
            if (nb == NULL) {
                /* Over the bound: stop reading; the child then dies of SIGPIPE or ends. */
                sworn_err_set(len > max ? SWORN_ERR_RANGE : SWORN_ERR_NOMEM,
                              "%s wrote more than %zu bytes", argv[0], max);
                close(p[0]);
                p[0] = -1;
                (void)wait_child(pid, status);
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        n = read(p[0], buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    if (wait_child(pid, status) < 0)
        goto done;
    if (len > max) {
        sworn_err_set(SWORN_ERR_RANGE, "%s wrote more than %zu bytes", argv[0], max);
        goto done;
    }
    if (buf == NULL && (buf = malloc(1)) == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        goto done;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    return rc;
}

int c_exec_shell(const char *command, int *status)
{
    char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};

    return c_exec_capture(argv, 0, NULL, NULL, status);
}
