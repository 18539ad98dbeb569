/*
 * swtpm_fixture.c -- see swtpm_fixture.h.
 *
 * Processes are started with fork and execvpe, with their environment built before the fork:
 * the test process may already run watchdog threads, so the child does nothing between fork and
 * exec but redirect its output, close inherited descriptors and ask to die with its parent.
 *
 * Closing inherited descriptors matters: the TSS opens its sockets without O_CLOEXEC, and a
 * watchdog thread may be inside a TPM call when we fork. A child holding a copy of that call's
 * swtpm control connection keeps it open after the thread closed its own copy, and swtpm, which
 * serves one control connection at a time, then never accepts the next client's: a deadlock
 * that was seen here (tpm2_flushcontext hung until killed) before the children closed them.
 */
#define _GNU_SOURCE
#include "swtpm_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define START_ATTEMPTS 5          /* fresh port pairs to try when another process takes ours */
#define READY_WAIT_MS 5000        /* how long swtpm may take to accept connections */
#define RESTART_WAIT_MS 3000      /* how long a restart may retry binding its old ports */
#define POLL_MS 10                /* between readiness probes */
#define HANDLE_ARG_MAX 16         /* "0x81000001" */
#define ENV_TCTI "TPM2TOOLS_TCTI" /* the TCTI of tpm2-tools: not a secret, just an address */
#define FD_SCAN_MAX 4096          /* descriptors to close when close_range is missing */

extern char **environ;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "swtpm fixture: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return -1;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Print a log file to stderr, so a failing command explains itself. */
static void dump_log(const char *path)
{
    char *text = sworn_test_read_file_opt(path, NULL);

    if (text != NULL)
        fprintf(stderr, "---- %s ----\n%s---- end ----\n", path, text);
    free(text);
}

/* Bind a loopback TCP socket to port (0: any). Returns the socket, or -1. OUT: *bound. */
static int bind_loopback(int port, int *bound)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        close(fd);
        return -1;
    }
    *bound = ntohs(a.sin_port);
    return fd;
}

/*
 * Find a port P such that P and P + 1 are both free now. Another process may still take them
 * before swtpm binds them; sworn_test_swtpm_start then tries a new pair.
 */
static int free_port_pair(void)
{
    for (int i = 0; i < 100; i++) {
        int p = 0, q = 0, a = bind_loopback(0, &p), b = -1;

        if (a >= 0 && p < 65535)
            b = bind_loopback(p + 1, &q);
        if (a >= 0)
            close(a);
        if (b >= 0) {
            close(b);
            return p;
        }
    }
    return -1;
}

/* 1 when something accepts TCP connections on 127.0.0.1:port. */
static int port_open(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return 0;
    ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/*
 * The environment for tpm2-tools: ours plus TPM2TOOLS_TCTI. Built before fork (setenv in the
 * child could deadlock on a lock another thread held). Free with free_env.
 */
static char **tools_env(const struct sworn_test_swtpm *t)
{
    size_t n = 0, k = 0;
    char **env;

    while (environ[n] != NULL)
        n++;
    env = calloc(n + 2, sizeof(*env));
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], ENV_TCTI "=", strlen(ENV_TCTI) + 1) != 0)
            env[k++] = environ[i];
    if (asprintf(&env[k], "%s=%s", ENV_TCTI, t->tcti) < 0) {
        free(env);
        return NULL;
    }
    return env;
}

static void free_env(char **env)
{
    size_t n = 0;

    if (env == NULL)
        return;
    while (env[n] != NULL)
        n++;
    free(env[n - 1]); /* the TPM2TOOLS_TCTI entry, the only one we allocated */
    free(env);
}

/*
 * Start argv with stdout and stderr appended to log_path. The child dies with the test process.
 * Returns the pid, or -1.
 */
static pid_t spawn(char *const argv[], char *const envp[], const char *log_path)
{
    int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    pid_t pid;

    if (log < 0)
        return fail("cannot open %s: %s", log_path, strerror(errno));
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
        if (close_range(STDERR_FILENO + 1, ~0u, 0) != 0)
            for (int fd = STDERR_FILENO + 1; fd < FD_SCAN_MAX; fd++)
                close(fd);
        execvpe(argv[0], argv, envp);
        _exit(127);
    }
    close(log);
    if (pid < 0)
        return fail("fork: %s", strerror(errno));
    return pid;
}

/*
 * Run a command to its end, its output going to <dir>/cmd.log.
 * Returns its wait status, or -1 when it could not be started.
 */
static int run_status(struct sworn_test_swtpm *t, char *const argv[])
{
    char *log = sworn_test_path(t->dir, "cmd.log");
    char **env = tools_env(t);
    int status = -1;
    pid_t pid;

    /* A test that failed while swtpm was paused left it so: continue it first, or this command
     * (and every later test of the group) would wait for ever instead of failing. */
    if (t->paused && sworn_test_swtpm_resume(t) != 0)
        goto out;
    if (env == NULL) {
        fail("out of memory");
        goto out;
    }
    if (truncate(log, 0) != 0 && errno != ENOENT) {
        fail("cannot truncate %s: %s", log, strerror(errno));
        goto out;
    }
    pid = spawn(argv, env, log);
    if (pid < 0)
        goto out;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
out:
    free_env(env);
    free(log);
    return status;
}

/* Run a command that must succeed; when it fails, say so and print its output. */
static int run(struct sworn_test_swtpm *t, char *const argv[])
{
    int status = run_status(t, argv);
    char *log;

    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (status == -1)
        return -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        fail("%s: not found or cannot run (is it installed?)", argv[0]);
    else
        fail("%s failed (status 0x%x)", argv[0], (unsigned)status);
    log = sworn_test_path(t->dir, "cmd.log");
    dump_log(log);
    free(log);
    return -1;
}

int sworn_test_swtpm_sh(struct sworn_test_swtpm *t, const char *cmd)
{
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    int status = run_status(t, argv);

    if (status == -1 || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

int sworn_test_swtpm_shf(struct sworn_test_swtpm *t, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof(cmd)) {
        fprintf(stderr, "swtpm fixture: command line longer than %zu bytes\n", sizeof(cmd));
        abort();
    }
    return sworn_test_swtpm_sh(t, cmd);
}

/*
 * Start swtpm on t->port and t->port + 1 and wait until both accept connections, or until it
 * exits (its ports were taken) or wait_ms passes. Returns 0, or -1 (t->pid is 0 then).
 */
static int launch(struct sworn_test_swtpm *t, long wait_ms, int quiet)
{
    char *log = sworn_test_path(t->dir, "swtpm.log");
    char state_arg[4200], server[64], ctrl[64];
    char *argv[] = {"swtpm",
                    "socket",
                    "--tpm2",
                    "--tpmstate",
                    state_arg,
                    "--server",
                    server,
                    "--ctrl",
                    ctrl,
                    "--flags",
                    "not-need-init,startup-clear",
                    NULL};
    int status;

    snprintf(state_arg, sizeof(state_arg), "dir=%s", t->state);
    snprintf(server, sizeof(server), "type=tcp,port=%d,bindaddr=127.0.0.1", t->port);
    snprintf(ctrl, sizeof(ctrl), "type=tcp,port=%d,bindaddr=127.0.0.1", t->port + 1);
    snprintf(t->tcti, sizeof(t->tcti), "swtpm:host=127.0.0.1,port=%d", t->port);
    t->pid = spawn(argv, environ, log);
    if (t->pid < 0) {
        t->pid = 0;
        free(log);
        return -1;
    }
    for (long waited = 0; waited <= wait_ms; waited += POLL_MS) {
        pid_t r = waitpid(t->pid, &status, WNOHANG);

        if (r == t->pid) {
            t->pid = 0;
            if (!quiet) {
                fail("swtpm exited at start (status 0x%x)", (unsigned)status);
                dump_log(log);
            }
            free(log);
            return -1;
        }
        if (port_open(t->port) && port_open(t->port + 1)) {
            free(log);
            return 0;
        }
        sleep_ms(POLL_MS);
    }
    fail("swtpm did not accept connections on port %d within %ld ms", t->port, wait_ms);
    dump_log(log);
    kill(t->pid, SIGKILL);
    waitpid(t->pid, &status, 0);
    t->pid = 0;
    free(log);
    return -1;
}

/* Write a file that must be written (test fixture: failures are reported, not survived). */
static int put_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        return fail("cannot create %s: %s", path, strerror(errno));
    if (fputs(text, f) == EOF || fclose(f) != 0)
        return fail("cannot write %s", path);
    return 0;
}

/*
 * The configuration that makes swtpm_setup's certificate tool (swtpm_localca) keep its CA in
 * <dir>/ca rather than the system's /var/lib/swtpm-localca: a private CA per test.
 */
static int write_localca_config(struct sworn_test_swtpm *t, char **setup_conf)
{
    char *ca = sworn_test_path(t->dir, SWORN_TEST_SWTPM_CA_DIR);
    char *localca = sworn_test_path(ca, "swtpm-localca.conf");
    char *options = sworn_test_path(ca, "swtpm-localca.options");
    char text[4096];
    int rc = -1;

    *setup_conf = sworn_test_path(ca, "swtpm_setup.conf");
    if (mkdir(ca, 0700) != 0) {
        fail("mkdir %s: %s", ca, strerror(errno));
        goto out;
    }
    snprintf(text, sizeof(text),
             "statedir = %s\nsigningkey = %s/signkey.pem\nissuercert = %s/issuercert.pem\n"
             "certserial = %s/certserial\n",
             ca, ca, ca, ca);
    if (put_text(localca, text) < 0 || put_text(options, "") < 0)
        goto out;
    snprintf(text, sizeof(text),
             "create_certs_tool = swtpm_localca\ncreate_certs_tool_config = %s\n"
             "create_certs_tool_options = %s\nactive_pcr_banks = sha256\n",
             localca, options);
    if (put_text(*setup_conf, text) < 0)
        goto out;
    rc = 0;
out:
    free(ca);
    free(localca);
    free(options);
    return rc;
}

static int start(struct sworn_test_swtpm *t, int ek_certs)
{
    memset(t, 0, sizeof(*t));
    t->dir = sworn_test_tmpdir("swtpm");
    t->state = sworn_test_path(t->dir, "state");
    if (mkdir(t->state, 0700) != 0)
        return fail("mkdir %s: %s", t->state, strerror(errno));
    if (!ek_certs) {
        /* A manufactured TPM 2.0 state; no EK or certificates, which most tests do not need. */
        char *argv[] = {"swtpm_setup", "--tpm2", "--tpmstate", t->state, NULL};

        if (run(t, argv) < 0)
            return -1;
    } else {
        char *conf = NULL;
        int rc = write_localca_config(t, &conf);

        if (rc == 0) {
            char *argv[] = {"swtpm_setup", "--tpm2", "--tpmstate",       t->state,
                            "--config",    conf,     "--create-ek-cert", "--write-ek-cert-files",
                            t->dir,        NULL};

            rc = run(t, argv);
        }
        free(conf);
        if (rc < 0)
            return -1;
    }
    for (int i = 0; i < START_ATTEMPTS; i++) {
        t->port = free_port_pair();
        if (t->port < 0)
            return fail("no free pair of loopback ports");
        if (launch(t, READY_WAIT_MS, i + 1 < START_ATTEMPTS) == 0)
            return 0;
    }
    return -1;
}

int sworn_test_swtpm_start(struct sworn_test_swtpm *t)
{
    return start(t, 0);
}

int sworn_test_swtpm_start_ek(struct sworn_test_swtpm *t)
{
    return start(t, 1);
}

void sworn_test_swtpm_stop(struct sworn_test_swtpm *t)
{
    if (t->pid > 0) {
        kill(t->pid, SIGKILL);
        waitpid(t->pid, NULL, 0);
    }
    if (t->dir != NULL)
        sworn_test_rmtree(t->dir);
    free(t->dir);
    free(t->state);
    memset(t, 0, sizeof(*t));
}

int sworn_test_swtpm_kill(struct sworn_test_swtpm *t)
{
    if (t->pid <= 0)
        return fail("kill: swtpm is not running");
    if (kill(t->pid, SIGKILL) != 0)
        return fail("kill %d: %s", (int)t->pid, strerror(errno));
    waitpid(t->pid, NULL, 0);
    t->pid = 0;
    t->paused = 0;
    return 0;
}

int sworn_test_swtpm_restart(struct sworn_test_swtpm *t)
{
    if (t->pid > 0)
        return fail("restart: swtpm is still running");
    /* The old listening sockets died with the process; retry briefly should a bind still fail. */
    for (long waited = 0; waited < RESTART_WAIT_MS; waited += 100) {
        if (launch(t, READY_WAIT_MS, 1) == 0)
            return 0;
        sleep_ms(100);
    }
    return launch(t, READY_WAIT_MS, 0);
}

int sworn_test_swtpm_pause(struct sworn_test_swtpm *t)
{
    int status;

    if (t->pid <= 0 || kill(t->pid, SIGSTOP) != 0)
        return fail("cannot stop swtpm");
    /* Wait until it has really stopped, so the next command surely goes unanswered. */
    if (waitpid(t->pid, &status, WUNTRACED) != t->pid || !WIFSTOPPED(status))
        return fail("swtpm did not stop");
    t->paused = 1;
    return 0;
}

int sworn_test_swtpm_resume(struct sworn_test_swtpm *t)
{
    int status;

    if (t->pid <= 0 || kill(t->pid, SIGCONT) != 0)
        return fail("cannot continue swtpm");
    if (waitpid(t->pid, &status, WCONTINUED) != t->pid || !WIFCONTINUED(status))
        return fail("swtpm did not continue");
    t->paused = 0;
    return 0;
}

int sworn_test_swtpm_make_key(struct sworn_test_swtpm *t, uint32_t handle, const char *alg,
                              const char *attrs, uint8_t *spki, size_t cap, size_t *spki_len)
{
    char h[HANDLE_ARG_MAX], name[64];
    char *ctx, *der, *data = NULL;
    size_t len = 0;
    int rc = -1;

    snprintf(h, sizeof(h), "0x%08x", (unsigned)handle);
    snprintf(name, sizeof(name), "key-%08x.ctx", (unsigned)handle);
    ctx = sworn_test_path(t->dir, name);
    snprintf(name, sizeof(name), "key-%08x.der", (unsigned)handle);
    der = sworn_test_path(t->dir, name);
    {
        /* No resource manager: flush transient objects before and after, or slots run out. */
        char *flush[] = {"tpm2_flushcontext", "-t", NULL};
        char *create[] = {"tpm2_createprimary", "-Q", "-C",          "o",  "-g", "sha256", "-G",
                          (char *)alg,          "-a", (char *)attrs, "-c", ctx,  NULL};
        char *evict[] = {"tpm2_evictcontrol", "-Q", "-C", "o", "-c", ctx, h, NULL};
        char *readpub[] = {"tpm2_readpublic", "-Q", "-c", h, "-f", "der", "-o", der, NULL};
        int made;

        if (run(t, flush) < 0)
            goto out;
        made = run(t, create) == 0 && run(t, evict) == 0;
        if (run(t, flush) < 0 || !made || run(t, readpub) < 0)
            goto out;
    }
    data = sworn_test_read_file_opt(der, &len);
    if (data == NULL || len == 0 || len > cap) {
        fail("tpm2_readpublic wrote no usable SPKI to %s", der);
        goto out;
    }
    memcpy(spki, data, len);
    *spki_len = len;
    rc = 0;
out:
    free(data);
    free(der);
    free(ctx);
    return rc;
}

int sworn_test_swtpm_evict(struct sworn_test_swtpm *t, uint32_t handle)
{
    char h[HANDLE_ARG_MAX];
    char *evict[] = {"tpm2_evictcontrol", "-Q", "-C", "o", "-c", h, NULL};

    snprintf(h, sizeof(h), "0x%08x", (unsigned)handle);
    return run(t, evict);
}

int sworn_test_swtpm_setup(void **state)
{
    struct sworn_test_swtpm *t = calloc(1, sizeof(*t));

    if (t == NULL || sworn_test_swtpm_start(t) < 0) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

int sworn_test_swtpm_teardown(void **state)
{
    struct sworn_test_swtpm *t = *state;

    sworn_test_swtpm_stop(t);
    free(t);
    return 0;
}

int sworn_test_swtpm_setup_ek(void **state)
{
    struct sworn_test_swtpm *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return -1;
    if (sworn_test_swtpm_start_ek(t) < 0) {
        sworn_test_swtpm_stop(t);
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}
