/*
 * proxy_fixture.c -- a real sworn-proxy for a test (proxy_fixture.h).
 */
#define _GNU_SOURCE
#include "proxy_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stack_fixture.h"
#include "upstream_fixture.h"

#define START_WAIT_MS 60000

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void print_file(const char *what, const char *path)
{
    char *text = sworn_test_read_file_opt(path, NULL);

    fprintf(stderr, "---- %s (%s)\n%s\n----\n", what, path, text != NULL ? text : "(absent)");
    free(text);
}

/* Is the port file there (p->port read), or the proxy gone? */
static int started_or_gone(void *arg)
{
    struct sworn_pfx *p = arg;
    char *text = sworn_test_read_file_opt(p->port_file, NULL);

    if (text != NULL) {
        p->port = (uint16_t)atoi(text);
        free(text);
        return 1;
    }
    return !sworn_pfx_alive(p);
}

static int run_proxy(struct sworn_pfx *p)
{
    const char *bin = getenv("SWORN_PROXY_BIN");
    char *argv[] = {(char *)bin, "--config", p->config, NULL};
    int64_t deadline = mono_ms() + START_WAIT_MS;

    unlink(p->port_file);
    p->port = 0;
    if (p->tls_port_file[0] != '\0')
        unlink(p->tls_port_file);
    p->pid = sworn_upstream_spawn(argv, p->err);
    if (p->pid <= 0)
        return -1;
    /* The port file appears (renamed into place) once every listener accepts; a proxy that
     * fails writes why into its error output, in the same folder. */
    if (sworn_test_wait_dir(p->dir, started_or_gone, p, (int)(deadline - mono_ms())) != 0 ||
        p->port == 0) {
        fprintf(stderr, "sworn-proxy did not start\n");
        print_file("its error output", p->err);
        print_file("its log", p->log);
        return -1;
    }
    if (p->tls_port_file[0] != '\0') {
        /* written before the first listener's (after every listener is bound): there now */
        char *text = sworn_test_read_file_opt(p->tls_port_file, NULL);

        if (text == NULL) {
            fprintf(stderr, "sworn-proxy wrote no port file for its TLS listener\n");
            return -1;
        }
        p->tls_port = (uint16_t)atoi(text);
        free(text);
        snprintf(p->tls_url, sizeof(p->tls_url), "https://127.0.0.1:%u", (unsigned)p->tls_port);
    }
    snprintf(p->url, sizeof(p->url), "http://127.0.0.1:%u", (unsigned)p->port);
    snprintf(p->hostport, sizeof(p->hostport), "127.0.0.1:%u", (unsigned)p->port);
    return 0;
}

int sworn_pfx_start(struct sworn_pfx *p, const char *decision_socket,
                    const struct sworn_pfx_opts *opts)
{
    const char *bin = getenv("SWORN_PROXY_BIN");
    char ca_dir[512], cmd[2048], text[16384], hostlink[256] = "";
    struct sworn_pfx_opts none = {0};
    int n;

    memset(p, 0, sizeof(*p));
    if (opts == NULL)
        opts = &none;
    if (bin == NULL) {
        fprintf(stderr, "SWORN_PROXY_BIN is not set\n");
        return -1;
    }
    p->dir = sworn_test_tmpdir("proxy");
    chmod(p->dir, 0700);
    snprintf(p->config, sizeof(p->config), "%s/proxy.yaml", p->dir);
    snprintf(p->log, sizeof(p->log), "%s/proxy.log", p->dir);
    snprintf(p->err, sizeof(p->err), "%s/proxy.err", p->dir);
    snprintf(p->port_file, sizeof(p->port_file), "%s/port", p->dir);
    snprintf(p->unix_socket, sizeof(p->unix_socket), "%s/agent.sock", p->dir);
    snprintf(p->metrics_socket, sizeof(p->metrics_socket), "%s/metrics.sock", p->dir);
    snprintf(ca_dir, sizeof(ca_dir) - 8, "%s/ca", p->dir);
    snprintf(p->ca_cert, sizeof(p->ca_cert), "%s/ca.crt", ca_dir);
    if (mkdir(ca_dir, 0700) != 0) {
        fprintf(stderr, "mkdir %s: %s\n", ca_dir, strerror(errno));
        return -1;
    }
    snprintf(cmd, sizeof(cmd), "'%s' ca init '%s' >/dev/null", bin, ca_dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "%s failed\n", cmd);
        return -1;
    }
    if (opts->hostlink) {
        snprintf(p->hostlink_socket, sizeof(p->hostlink_socket), "%s/hostlink.sock", p->dir);
        snprintf(hostlink, sizeof(hostlink),
                 "  - hostlink: %s\n    principal: agent-1\n    uids: [%lu]\n", p->hostlink_socket,
                 (unsigned long)getuid());
    }
    if (opts->tls_listener)
        snprintf(p->tls_port_file, sizeof(p->tls_port_file), "%s/tls-port", p->dir);
    n = snprintf(
        text, sizeof(text),
        "listen:\n"
        "%s%s%s%s"
        "  - tcp: \"127.0.0.1:0\"\n    principal: agent-1\n    port_file: %s\n"
        "  - unix: %s\n    principal: agent-unix\n"
        "decisiond:\n  socket: %s\n%s"
        "ca:\n  cert: %s\n  key: %s/ca.key\n"
        "upstream:\n%s%s%s  allow_private: [\"127.0.0.0/8\"]\n%s"
        "log:\n  file: %s\n"
        "metrics:\n  socket: %s\n"
        "%s",
        hostlink,
        opts->tls_listener ? "  - tcp: \"127.0.0.1:0\"\n    principal: agent-1\n    tls: true\n"
                             "    port_file: "
                           : "",
        p->tls_port_file, opts->tls_listener ? "\n" : "", p->port_file, p->unix_socket,
        decision_socket, opts->decisiond != NULL ? opts->decisiond : "", p->ca_cert, ca_dir,
        opts->upstream_ca != NULL ? "  ca_file: " : "",
        opts->upstream_ca != NULL ? opts->upstream_ca : "", opts->upstream_ca != NULL ? "\n" : "",
        opts->upstream != NULL ? opts->upstream : "", p->log, p->metrics_socket,
        opts->extra != NULL ? opts->extra : "");
    if (n < 0 || (size_t)n >= sizeof(text)) {
        fprintf(stderr, "the proxy configuration does not fit\n");
        return -1;
    }
    sworn_test_write_file(p->config, text, (size_t)n, 0600);
    return run_proxy(p);
}

int sworn_pfx_restart(struct sworn_pfx *p)
{
    if (p->pid > 0)
        sworn_upstream_stop_child(&p->pid, "sworn-proxy");
    return run_proxy(p);
}

void sworn_pfx_kill(struct sworn_pfx *p)
{
    if (p->pid <= 0)
        return;
    kill(p->pid, SIGKILL);
    while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    p->pid = 0;
}

int sworn_pfx_alive(struct sworn_pfx *p)
{
    int status;
    pid_t r;

    if (p->pid <= 0)
        return 0;
    while ((r = waitpid(p->pid, &status, WNOHANG)) < 0 && errno == EINTR)
        ;
    if (r == p->pid) {
        /* it ended on its own: say how, and what it said (a test will fail on this) */
        if (WIFSIGNALED(status))
            fprintf(stderr, "sworn-proxy was killed by signal %d\n", WTERMSIG(status));
        else
            fprintf(stderr, "sworn-proxy exited with status %d\n", WEXITSTATUS(status));
        print_file("its error output", p->err);
        p->pid = 0;
        return 0;
    }
    return 1;
}

int sworn_pfx_stop(struct sworn_pfx *p)
{
    int rc = 0, status = 0;
    char *err;

    if (p->dir == NULL)
        return 0;
    if (p->pid > 0) {
        kill(p->pid, SIGTERM);
        while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
            ;
        p->pid = 0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "sworn-proxy ended with status 0x%x\n", (unsigned)status);
            print_file("its error output", p->err);
            rc = -1;
        }
    }
    err = sworn_test_read_file_opt(p->err, NULL);
    if (err != NULL &&
        (strstr(err, "Sanitizer") != NULL || strstr(err, "runtime error:") != NULL)) {
        fprintf(stderr, "sworn-proxy's error output holds a sanitizer report:\n%s\n", err);
        rc = -1;
    }
    free(err);
    if (getenv("SWORN_KEEP_STACK") == NULL)
        sworn_test_rmtree(p->dir);
    else
        fprintf(stderr, "proxy folder kept: %s\n", p->dir);
    free(p->dir);
    p->dir = NULL;
    return rc;
}

size_t sworn_pfx_log_count(struct sworn_pfx *p, const char *needle)
{
    char *text = sworn_test_read_file_opt(p->log, NULL);
    size_t count = 0;

    if (text == NULL)
        return 0;
    for (char *line = text, *end; *line != '\0'; line = end + 1) {
        end = strchr(line, '\n');
        if (end == NULL)
            end = line + strlen(line) - 1;
        else
            *end = '\0';
        if (strstr(line, needle) != NULL)
            count++;
        if (end[1] == '\0' || end < line)
            break;
    }
    free(text);
    return count;
}

struct log_needle {
    struct sworn_pfx *p;
    const char *needle;
};

static int log_has(void *arg)
{
    const struct log_needle *a = arg;

    return sworn_pfx_log_count(a->p, a->needle) > 0;
}

int sworn_pfx_wait_log(struct sworn_pfx *p, const char *needle, int timeout_ms)
{
    struct log_needle a = {p, needle};

    return sworn_test_wait_dir(p->dir, log_has, &a, timeout_ms);
}

int sworn_pfx_dial(uint16_t port)
{
    struct sockaddr_in sin = {0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        fprintf(stderr, "proxy fixture: socket: %s\n", strerror(errno));
        return -1;
    }
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
        fprintf(stderr, "proxy fixture: connect 127.0.0.1:%u: %s\n", (unsigned)port,
                strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int sworn_pfx_read_until(int fd, char *buf, size_t cap, size_t *have, const char *needle,
                         int timeout_ms)
{
    for (int rounds = 0; rounds < timeout_ms / 50; rounds++) {
        struct pollfd pfd = {fd, POLLIN, 0};
        ssize_t r;

        buf[*have] = '\0';
        if (needle != NULL && strstr(buf, needle) != NULL)
            return 1;
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        r = read(fd, buf + *have, cap - 1 - *have);
        if (r <= 0)
            return 0;
        *have += (size_t)r;
    }
    return 0;
}

long sworn_pfx_raw(struct sworn_pfx *p, const void *bytes, size_t len, int keep_open,
                   int timeout_ms, char *out, size_t cap)
{
    int fd = sworn_pfx_dial(p->port);
    size_t have = 0, sent = 0;
    int64_t deadline = mono_ms() + timeout_ms;

    if (fd < 0)
        return -1;
    while (sent < len) {
        ssize_t w = send(fd, (const char *)bytes + sent, len - sent, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break; /* the proxy closed early: read what it said */
        sent += (size_t)w;
    }
    if (!keep_open)
        shutdown(fd, SHUT_WR);
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int64_t left = deadline - mono_ms();
        ssize_t r;

        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
            break;
        if (have + 1 >= cap) {
            char sink[4096];

            r = recv(fd, sink, sizeof(sink), 0);
        } else {
            r = recv(fd, out + have, cap - 1 - have, 0);
            if (r > 0)
                have += (size_t)r;
        }
        if (r <= 0)
            break;
    }
    out[have] = '\0';
    close(fd);
    return (long)have;
}

int sworn_pfx_curl(struct sworn_pfx *p, char *out, size_t cap, int *code, ...)
{
    const char *argv[48];
    size_t n = 0;
    va_list ap;

    argv[n++] = "-x";
    argv[n++] = p->url;
    va_start(ap, code);
    for (const char *a = va_arg(ap, const char *); a != NULL && n < 46;
         a = va_arg(ap, const char *))
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    return sworn_upstream_curl(argv, out, cap, code);
}

int sworn_pfx_stop_with_stack(struct sworn_pfx *p, struct sworn_stack *s)
{
    int rc = 0;

    if (sworn_pfx_stop(p) != 0)
        rc = -1;
    if (s->dir != NULL && sworn_stack_down(s) != 0)
        rc = -1;
    return rc;
}
