/*
 * launch.c -- fork and exec a sworn-signer process (contract in launch.h).
 */
#define _GNU_SOURCE /* close_range, pidfd_open through syscall */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "encoding.h"
#include "err.h"

/* The environment a signer gets: only what a module or a sanitizer reads, when the caller has it.
 * SOFTHSM2_CONF names SoftHSM's token folder; SWORN_HANG_FILE drives the tests' hanging module. */
static const char *const passed_env[] = {"SOFTHSM2_CONF",
                                         "ASAN_OPTIONS",
                                         "LSAN_OPTIONS",
                                         "UBSAN_OPTIONS",
                                         "TSAN_OPTIONS",
                                         "SWORN_HANG_FILE",
                                         NULL};
#define ENV_MAX (sizeof(passed_env) / sizeof(passed_env[0]))

struct argv_buf {
    char *argv[SWORN_SIGNER_ARGV_MAX];
    size_t argc;
    char text[SWORN_SIGNER_ARG_BYTES_MAX]; /* the formatted numbers and the hex SPKI */
    size_t used;
};

static int add_arg(struct argv_buf *b, const char *s)
{
    if (b->argc + 1 >= SWORN_SIGNER_ARGV_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "signer launch: too many arguments");
    b->argv[b->argc++] = (char *)s;
    b->argv[b->argc] = NULL;
    return 0;
}

static int add_opt(struct argv_buf *b, const char *name, const char *value)
{
    if (value == NULL)
        return 0;
    SWORN_GUARD(add_arg(b, name));
    return add_arg(b, value);
fail:
    return -1;
}

/* Format a number (or take len bytes of text) into the buffer and add it as name's value. */
static int add_num(struct argv_buf *b, const char *name, unsigned long long v)
{
    int n = snprintf(b->text + b->used, sizeof(b->text) - b->used, "%llu", v);

    if (n < 0 || (size_t)n >= sizeof(b->text) - b->used)
        return sworn_err_set(SWORN_ERR_RANGE, "signer launch: arguments too long");
    SWORN_GUARD(add_opt(b, name, b->text + b->used));
    b->used += (size_t)n + 1;
    return 0;
fail:
    return -1;
}

static int add_hex(struct argv_buf *b, const char *name, const uint8_t *bytes, size_t len)
{
    if (len * 2 + 1 > sizeof(b->text) - b->used)
        return sworn_err_set(SWORN_ERR_RANGE, "signer launch: pinned SPKI too long");
    SWORN_GUARD(sworn_hex_encode(bytes, len, b->text + b->used, sizeof(b->text) - b->used));
    SWORN_GUARD(add_opt(b, name, b->text + b->used));
    b->used += len * 2 + 1;
    return 0;
fail:
    return -1;
}

static const char *seccomp_arg(int mode)
{
    return mode == 0 ? "off" : mode == 1 ? "log" : "enforce";
}

static int build_argv(const struct sworn_signer_config *cfg,
                      const struct sworn_signer_launch_opts *opts, struct argv_buf *b)
{
    memset(b, 0, sizeof(*b));
    SWORN_GUARD(add_arg(b, opts->program));
    SWORN_GUARD(add_opt(b, "--uri", cfg->uri));
    SWORN_GUARD(add_opt(b, "--module", cfg->module_path));
    SWORN_GUARD(add_opt(b, "--pin-file", cfg->pin_file));
    SWORN_GUARD(add_opt(b, "--tcti", cfg->tcti));
    if (cfg->pinned_spki != NULL && cfg->pinned_spki_len > 0)
        SWORN_GUARD(add_hex(b, "--pinned-spki", cfg->pinned_spki, cfg->pinned_spki_len));
    if (cfg->timeout_ms != 0)
        SWORN_GUARD(add_num(b, "--timeout-ms", cfg->timeout_ms));
    if (opts->uid != 0) {
        SWORN_GUARD(add_num(b, "--uid", opts->uid));
        SWORN_GUARD(add_num(b, "--gid", opts->gid));
        SWORN_GUARD(add_opt(b, "--chroot", opts->chroot_dir));
    }
    SWORN_GUARD(add_opt(b, "--seccomp", seccomp_arg(opts->seccomp_mode)));
    if (opts->inet)
        SWORN_GUARD(add_arg(b, "--inet"));
    if (opts->die_with_parent)
        SWORN_GUARD(add_arg(b, "--die-with-parent"));
    return 0;
fail:
    return -1;
}

/* Only async-signal-safe calls from here to execve: the parent may have threads. */
static _Noreturn void child(int sock, const struct sworn_signer_launch_opts *opts,
                            char *const argv[], char *const envp[])
{
    int nul = open("/dev/null", O_RDWR | O_CLOEXEC), prog = -1, first_free = SWORN_SIGNER_FD + 1;
    /* The program's descriptor, when given, goes to SWORN_SIGNER_FD + 1, and the exec opens the
     * file through /proc/self/fd. It is inherited, not close-on-exec, so that a program that
     * execs that path again (valgrind --trace-children, bench/bench_cpu.c) still finds the file
     * there; the signer closes every descriptor above SWORN_SIGNER_FD first thing. */
    static const char prog_path[] = "/proc/self/fd/4";
    _Static_assert(SWORN_SIGNER_FD + 1 == 4, "prog_path names SWORN_SIGNER_FD + 1");

    if (nul < 0 || dup2(nul, STDIN_FILENO) < 0 || dup2(nul, STDOUT_FILENO) < 0)
        _exit(126);
    if (opts->stderr_fd > 0 && dup2(opts->stderr_fd, STDERR_FILENO) < 0)
        _exit(126);
    if (fcntl(STDERR_FILENO, F_GETFD) < 0 && dup2(nul, STDERR_FILENO) < 0)
        _exit(126);
    /* Out of the way of fd 3 before the dup2 below, which could otherwise close it. */
    if (opts->program_fd > 0 && (prog = fcntl(opts->program_fd, F_DUPFD_CLOEXEC, 10)) < 0)
        _exit(126);
    /* dup2 clears close-on-exec on the copy; the socket was made above fd 3 by the parent. */
    if (dup2(sock, SWORN_SIGNER_FD) < 0)
        _exit(126);
    if (prog >= 0) {
        if (dup2(prog, SWORN_SIGNER_FD + 1) < 0)
            _exit(126);
        first_free = SWORN_SIGNER_FD + 2;
    }
    if (close_range((unsigned)first_free, ~0U, 0) != 0) {
        for (int fd = first_free; fd < 65536; fd++)
            (void)close(fd); /* EBADF for the many that are not open is expected */
    }
    if (geteuid() == 0) {
        rlim_t lim = opts->memlock_bytes != 0 ? opts->memlock_bytes : SWORN_SIGNER_MEMLOCK_DEFAULT;
        struct rlimit rl = {.rlim_cur = lim, .rlim_max = lim};

        /* EPERM without CAP_SYS_RESOURCE (some containers): the signer then locks what holds the
         * key and not its later buffers (sworn-signer.c, lock_memory). */
        (void)setrlimit(RLIMIT_MEMLOCK, &rl);
    }
    execve(prog >= 0 ? prog_path : argv[0], argv, envp);
    _exit(127);
}

int sworn_signer_launch(const struct sworn_signer_config *cfg,
                        const struct sworn_signer_launch_opts *opts, int *fd, pid_t *pid,
                        int *pidfd)
{
    static struct argv_buf
        args; /* large; built under the caller's lock (signerproc.c, the monitor) */
    char *envp[ENV_MAX];
    char env_text[ENV_MAX][1024];
    size_t n_env = 0;
    int sv[2] = {-1, -1}, high;
    pid_t child_pid;

    SWORN_ENSURE(cfg != NULL && cfg->uri != NULL && opts != NULL && opts->program != NULL &&
                     opts->program[0] == '/',
                 SWORN_ERR_ARG, "signer launch: a key URI and an absolute program path are needed");
    SWORN_ENSURE(opts->uid == 0 || opts->gid != 0, SWORN_ERR_ARG,
                 "signer launch: a uid to switch to needs a non-root gid too");
    SWORN_ENSURE(opts->chroot_dir == NULL || (opts->uid != 0 && opts->chroot_dir[0] == '/'),
                 SWORN_ERR_ARG, "signer launch: chroot_dir must be absolute and needs a uid");
    SWORN_GUARD(build_argv(cfg, opts, &args));
    for (size_t i = 0; passed_env[i] != NULL; i++) {
        const char *v = getenv(passed_env[i]);
        int n;

        if (v == NULL)
            continue;
        n = snprintf(env_text[n_env], sizeof(env_text[n_env]), "%s=%s", passed_env[i], v);
        SWORN_ENSURE(n > 0 && (size_t)n < sizeof(env_text[n_env]), SWORN_ERR_RANGE,
                     "signer launch: %s is too long", passed_env[i]);
        envp[n_env] = env_text[n_env];
        n_env++;
    }
    envp[n_env] = NULL;
    SWORN_ENSURE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, SWORN_ERR_IO,
                 "signer launch: socketpair: %s", strerror(errno));
    /* The child's end above SWORN_SIGNER_FD, so that dup2 onto fd 3 can never close it. */
    high = fcntl(sv[1], F_DUPFD_CLOEXEC, SWORN_SIGNER_FD + 1);
    SWORN_ENSURE(high >= 0, SWORN_ERR_IO, "signer launch: fcntl: %s", strerror(errno));
    (void)close(sv[1]);
    sv[1] = high;
    child_pid = fork();
    SWORN_ENSURE(child_pid >= 0, SWORN_ERR_IO, "signer launch: fork: %s", strerror(errno));
    if (child_pid == 0)
        child(sv[1], opts, args.argv, envp);
    (void)close(sv[1]);
    *fd = sv[0];
    *pid = child_pid;
    /* ENOSYS before Linux 5.3: kill(2) by pid is the fallback (launch.h). */
    *pidfd = (int)syscall(SYS_pidfd_open, child_pid, 0);
    return 0;
fail:
    if (sv[0] >= 0)
        (void)close(sv[0]);
    if (sv[1] >= 0)
        (void)close(sv[1]);
    return -1;
}
