/*
 * c_sandbox.c -- the probe program in the deployment's sandbox or on the host (c_sandbox.h).
 */
#define _GNU_SOURCE
#include "c_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "c_record.h"
#include "err.h"

#define PROBE_NAME "sworn-conformance-probe"

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Copy the probe program into folder dir, mode 0755. */
static int copy_probe(const char *src, const char *dir)
{
    char dst[1200], buf[65536];
    int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
    ssize_t n;

    if (in < 0)
        return sworn_err_set(SWORN_ERR_IO, "sandbox.probe %s: %s", src, strerror(errno));
    snprintf(dst, sizeof(dst), "%s/" PROBE_NAME, dir);
    out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
    if (out < 0) {
        sworn_err_set(SWORN_ERR_IO, "%s: %s", dst, strerror(errno));
        goto done;
    }
    while ((n = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n)
            break;
    if (n != 0 || fchmod(out, 0755) != 0) {
        sworn_err_set(SWORN_ERR_IO, "copying %s: %s", src, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    close(in);
    if (out >= 0)
        close(out);
    return rc;
}

/* Fork argv with stdout on a pipe; read it all into o->out; wait. */
static int spawn(char *const *argv, const int *leak, size_t nleak, struct c_sbx_out *o)
{
    int p[2], st;
    size_t len = 0;
    long deadline = now_ms() + C_SBX_WAIT_MS;
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) != 0)
        return sworn_err_set(SWORN_ERR_IO, "pipe: %s", strerror(errno));
    pid = fork();
    if (pid < 0) {
        close(p[0]), close(p[1]);
        return sworn_err_set(SWORN_ERR_IO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);

        if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0)
            _exit(127);
        for (size_t i = 0; i < nleak; i++) /* handed on open, on purpose */
            fcntl(leak[i], F_SETFD, 0);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    for (;;) {
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        long left = deadline - now_ms();
        ssize_t n;

        if (left <= 0 || poll(&pf, 1, (int)left) == 0) {
            kill(pid, SIGKILL); /* the sandbox command we started, by its pid */
            waitpid(pid, NULL, 0);
            close(p[0]);
            return sworn_err_set(SWORN_ERR_IO, "the sandbox did not end within %d ms",
                                 C_SBX_WAIT_MS);
        }
        n = read(p[0], o->out + len, sizeof(o->out) - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        if (len == sizeof(o->out) - 1) { /* the rest is drained and dropped */
            char sink[4096];

            while (read(p[0], sink, sizeof(sink)) > 0)
                ;
            break;
        }
    }
    o->out[len] = '\0';
    close(p[0]);
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return sworn_err_set(SWORN_ERR_IO, "waitpid: %s", strerror(errno));
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 0;
}

/* The verdict line and the verdict. */
static void judge(struct c_sbx_out *o)
{
    o->verdict = C_V_OTHER;
    o->line[0] = '\0';
    for (const char *l = o->out; *l != '\0';) {
        size_t n = strcspn(l, "\n");

        if (strncmp(l, "BLOCKED ", 8) == 0 || strncmp(l, "OPEN ", 5) == 0 ||
            strncmp(l, "LEFT ", 5) == 0) {
            snprintf(o->line, sizeof(o->line), "%.*s", (int)n, l);
            break;
        }
        l += n + (l[n] == '\n');
    }
    if (o->status == 0 && strncmp(o->line, "BLOCKED ", 8) == 0)
        o->verdict = C_V_BLOCKED;
    else if (o->status == 3 && strncmp(o->line, "OPEN ", 5) == 0)
        o->verdict = C_V_OPEN;
}

int c_sbx_run(struct c_ctx *ctx, const char *const *args, const int *leak, size_t nleak,
              struct c_sbx_out *o)
{
    return c_sbx_run_cmd(ctx, ctx->dep->sbx.argv, ctx->dep->sbx.nargv, args, leak, nleak, o);
}

int c_sbx_run_cmd(struct c_ctx *ctx, const char (*cmd)[C_DEPLOY_PATH_MAX], size_t ncmd,
                  const char *const *args, const int *leak, size_t nleak, struct c_sbx_out *o)
{
    const struct c_deploy_sandbox *x = &ctx->dep->sbx;
    const char *argv[C_DEPLOY_ARGV_MAX + C_SBX_ARGS_MAX + 10];
    char work[1200];
    unsigned char rnd[8];
    size_t n = 0;
    int rc;

    memset(o, 0, sizeof(*o));
    if (c_scratch_path(ctx, "work", work, sizeof(work)) < 0 || mkdir(work, 0755) != 0 ||
        chmod(work, 0755) != 0)
        return sworn_err_set(SWORN_ERR_IO, "no work folder in %s", ctx->scratch);
    if (copy_probe(x->probe, work) < 0) {
        c_record_remove(work);
        return -1;
    }
    if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
        c_record_remove(work);
        return sworn_err_set(SWORN_ERR_IO, "no random bytes");
    }
    snprintf(o->name, sizeof(o->name), "conformance-%02x%02x%02x%02x%02x%02x%02x%02x-%u", rnd[0],
             rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7], ctx->scratch_seq);
    for (size_t i = 0; i < ncmd && i < C_DEPLOY_ARGV_MAX; i++)
        argv[n++] = cmd[i];
    argv[n++] = "--name";
    argv[n++] = o->name;
    argv[n++] = "--work";
    argv[n++] = work;
    argv[n++] = "--keep";
    argv[n++] = "--";
    argv[n++] = "./" PROBE_NAME;
    for (size_t i = 0; args[i] != NULL && i < C_SBX_ARGS_MAX; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    rc = spawn((char *const *)argv, leak, nleak, o);
    c_record_remove(work);
    if (rc == 0)
        judge(o);
    return rc;
}

int c_sbx_host(struct c_ctx *ctx, const char *const *args, struct c_sbx_out *o)
{
    const char *argv[C_SBX_ARGS_MAX + 2];
    size_t n = 0;
    int rc;

    memset(o, 0, sizeof(*o));
    argv[n++] = ctx->dep->sbx.probe;
    for (size_t i = 0; args[i] != NULL && i < C_SBX_ARGS_MAX; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    rc = spawn((char *const *)argv, NULL, 0, o);
    if (rc == 0)
        judge(o);
    return rc;
}
