/*
 * upstream_fixture.c -- nginx, a WebSocket echo server and raw TCP upstreams for the proxy's
 * tests (contract in upstream_fixture.h).
 *
 * Children are started as swtpm_fixture.c starts swtpm (whose spawn is private to it): the
 * environment and argv are built before fork, and the child only redirects its output, closes
 * inherited descriptors (a test may hold sockets the child must not keep open) and asks to die
 * with its parent before it execs.
 *
 * Readiness is an event, never a fixed sleep: nginx is up when it wrote its pid file (it does so
 * after binding every listen address, so the ports are its own and not another process's) and its
 * ports accept connections; the WebSocket server is up when it wrote ws.ports (after listening)
 * and its ports accept connections. Both waits poll every POLL_MS within a deadline.
 */
#define _GNU_SOURCE
#include "upstream_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
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

#include <cmocka.h>

#include "testutil.h"

#ifndef SWORN_SOURCE_DIR
#error "SWORN_SOURCE_DIR must be defined by the build"
#endif

#define NGINX_BIN "/usr/sbin/nginx"
#define PYTHON_BIN "/usr/bin/python3"
#define CURL_BIN "/usr/bin/curl"
#define OPENSSL_BIN "openssl"
#define WS_SCRIPT SWORN_SOURCE_DIR "/tests/unit/ws_echo.py"

#define NGINX_ATTEMPTS 5   /* fresh ports to try when another process takes ours */
#define POLL_MS 5          /* between readiness probes (a port that accepts, an exit) */
#define STOP_WAIT_MS 10000 /* how long a server may take to exit on SIGTERM */
#define FD_SCAN_MAX 4096   /* descriptors to close when close_range is missing */
#define TAIL_MAX 48        /* arguments a caller may add to curl or the ws client */
#define CERT_DAYS "7"      /* the test certificates' validity */

extern char **environ;

static int complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int complain(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "upstream fixture: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return -1;
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Print a file to stderr, so a failing start explains itself. */
static void dump_file(const char *path)
{
    char *text = sworn_test_read_file_opt(path, NULL);

    if (text != NULL)
        fprintf(stderr, "---- %s ----\n%s---- end ----\n", path, text);
    free(text);
}

/* dir/name into out (cap bytes); -1 when it does not fit. */
static int join(char *out, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);

    if (n < 0 || (size_t)n >= cap)
        return complain("path %s/%s is too long", dir, name);
    return 0;
}

static int put_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const uint8_t *p = data;

    if (fd < 0)
        return complain("cannot create %s: %s", path, strerror(errno));
    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return complain("cannot write %s: %s", path, strerror(errno));
        }
        p += n;
        len -= (size_t)n;
    }
    if (close(fd) != 0)
        return complain("cannot write %s: %s", path, strerror(errno));
    return 0;
}

static int put_text(const char *dir, const char *name, const char *text)
{
    char path[1024];

    if (join(path, sizeof(path), dir, name) < 0)
        return -1;
    return put_file(path, text, strlen(text));
}

static int make_dir(const char *dir, const char *name)
{
    char path[1024];

    if (join(path, sizeof(path), dir, name) < 0)
        return -1;
    if (mkdir(path, 0700) != 0)
        return complain("mkdir %s: %s", path, strerror(errno));
    return 0;
}

/* A TCP port on 127.0.0.1 that is free now (the kernel's pick for port 0), or 0. */
static uint16_t free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    uint16_t port = 0;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* 1 when something accepts TCP connections on 127.0.0.1:port. */
static int port_open(uint16_t port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return 0;
    ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/*
 * Start argv (argv[0] a full path) with stdin from /dev/null and stdout and stderr appended to
 * log_path. The child dies with the thread that started it. Returns the pid, or -1.
 */
pid_t sworn_upstream_spawn(char *const argv[], const char *log_path)
{
    int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t parent = getpid(), pid;

    if (log < 0 || null < 0) {
        if (log >= 0)
            close(log);
        if (null >= 0)
            close(null);
        return complain("cannot open %s or /dev/null: %s", log_path, strerror(errno));
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(126); /* the parent is already gone: no orphan server */
        if (dup2(null, STDIN_FILENO) < 0 || dup2(log, STDOUT_FILENO) < 0 ||
            dup2(log, STDERR_FILENO) < 0)
            _exit(126);
        if (close_range(STDERR_FILENO + 1, ~0u, 0) != 0)
            for (int fd = STDERR_FILENO + 1; fd < FD_SCAN_MAX; fd++)
                close(fd);
        execve(argv[0], argv, environ);
        _exit(127);
    }
    close(log);
    close(null);
    if (pid < 0)
        return complain("fork: %s", strerror(errno));
    return pid;
}

/* Has the server written its port file? (A sworn_test_wait_dir question.) */
struct port_wait {
    const char *file;
    uint16_t port;
};

static int port_written(void *arg)
{
    struct port_wait *w = arg;
    char *text = sworn_test_read_file_opt(w->file, NULL);
    long v;

    if (text == NULL)
        return 0;
    v = strtol(text, NULL, 10);
    free(text);
    if (v <= 0 || v > 65535)
        return 0; /* still being written */
    w->port = (uint16_t)v;
    return 1;
}

pid_t sworn_upstream_spawn_port(char *const argv[], const char *log_path, const char *port_file,
                                int timeout_ms, uint16_t *port)
{
    struct port_wait w = {port_file, 0};
    char *dir = strdup(port_file), *slash;
    pid_t pid;
    int rc;

    if (dir == NULL || (slash = strrchr(dir, '/')) == NULL) {
        free(dir);
        return complain("port file %s is not a path in a folder", port_file);
    }
    *slash = '\0';
    pid = sworn_upstream_spawn(argv, log_path);
    if (pid < 0) {
        free(dir);
        return -1;
    }
    rc = sworn_test_wait_dir(dir, port_written, &w, timeout_ms);
    free(dir);
    if (rc != 0) {
        char *out = sworn_test_read_file_opt(log_path, NULL);

        fprintf(stderr, "%s wrote no port to %s in %d ms; its output:\n%s\n", argv[0], port_file,
                timeout_ms, out != NULL ? out : "");
        free(out);
        sworn_upstream_stop_child(&pid, argv[0]);
        return -1;
    }
    *port = w.port;
    return pid;
}

/* 1 when our child pid has exited (it is reaped, *status set), 0 while it runs. */
static int exited(pid_t pid, int *status)
{
    pid_t r;

    while ((r = waitpid(pid, status, WNOHANG)) < 0 && errno == EINTR)
        ;
    return r == pid || (r < 0 && errno == ECHILD);
}

/* SIGTERM pid, wait up to STOP_WAIT_MS for it, then SIGKILL it; reaps it. */
void sworn_upstream_stop_child(pid_t *pid, const char *what)
{
    int status = 0;
    int64_t deadline = now_ms() + STOP_WAIT_MS;

    if (*pid <= 0)
        return;
    kill(*pid, SIGTERM);
    while (!exited(*pid, &status)) {
        if (now_ms() > deadline) {
            complain("%s (pid %d) ignored SIGTERM for %d ms: killing it", what, (int)*pid,
                     STOP_WAIT_MS);
            kill(*pid, SIGKILL);
            while (waitpid(*pid, &status, 0) < 0 && errno == EINTR)
                ;
            break;
        }
        sworn_test_sleep_ms(POLL_MS);
    }
    *pid = 0;
}

/* Run argv to its end with the output captured; 0 when it exited 0, else -1 (printed). */
static int run_ok(const char *const argv[], const char *what)
{
    struct sworn_test_run r;
    int rc = 0;

    sworn_test_run(argv, NULL, &r);
    if (r.status != 0)
        rc = complain("%s failed (status %d):\n%s%s", what, r.status, r.out, r.err);
    sworn_test_run_free(&r);
    return rc;
}

/* ---- The certificates ---- */

static const char openssl_cnf[] =
    "[req]\n"
    "distinguished_name = dn\n"
    "prompt = no\n"
    "[dn]\n"
    "CN = " SWORN_UPSTREAM_HOST "\n"
    "[v3_ca]\n"
    "basicConstraints = critical,CA:TRUE\n"
    "keyUsage = critical,keyCertSign,cRLSign\n"
    "subjectKeyIdentifier = hash\n"
    "[v3_leaf]\n"
    "basicConstraints = critical,CA:FALSE\n"
    "keyUsage = critical,digitalSignature\n"
    "extendedKeyUsage = serverAuth\n"
    "subjectAltName = DNS:" SWORN_UPSTREAM_HOST ",DNS:localhost,IP:127.0.0.1\n"
    "subjectKeyIdentifier = hash\n"
    "authorityKeyIdentifier = keyid\n";

/* A P-256 test CA and a server certificate it signs, with the openssl CLI, in u->dir. */
static int make_certs(struct sworn_upstream *u)
{
    char cnf[1024], csr[1024], srl[1024];

    if (join(cnf, sizeof(cnf), u->dir, "openssl.cnf") < 0 ||
        join(csr, sizeof(csr), u->dir, "server.csr") < 0 ||
        join(srl, sizeof(srl), u->dir, "ca.srl") < 0 ||
        put_file(cnf, openssl_cnf, strlen(openssl_cnf)) < 0)
        return -1;
    const char *ca[] = {OPENSSL_BIN,
                        "req",
                        "-x509",
                        "-new",
                        "-newkey",
                        "ec",
                        "-pkeyopt",
                        "ec_paramgen_curve:P-256",
                        "-nodes",
                        "-keyout",
                        u->ca_key,
                        "-out",
                        u->ca_cert,
                        "-days",
                        CERT_DAYS,
                        "-config",
                        cnf,
                        "-extensions",
                        "v3_ca",
                        "-subj",
                        "/CN=sworn test upstream CA",
                        NULL};
    const char *req[] = {OPENSSL_BIN,
                         "req",
                         "-new",
                         "-newkey",
                         "ec",
                         "-pkeyopt",
                         "ec_paramgen_curve:P-256",
                         "-nodes",
                         "-keyout",
                         u->key,
                         "-out",
                         csr,
                         "-config",
                         cnf,
                         "-subj",
                         "/CN=" SWORN_UPSTREAM_HOST,
                         NULL};
    const char *sign[] = {OPENSSL_BIN, "x509",        "-req",    "-in",     csr,
                          "-CA",       u->ca_cert,    "-CAkey",  u->ca_key, "-CAcreateserial",
                          "-CAserial", srl,           "-days",   CERT_DAYS, "-extfile",
                          cnf,         "-extensions", "v3_leaf", "-out",    u->cert,
                          NULL};

    if (run_ok(ca, "openssl req -x509 (the test CA)") < 0 ||
        run_ok(req, "openssl req (the server's key)") < 0 ||
        run_ok(sign, "openssl x509 -req (the server's certificate)") < 0)
        return -1;
    return 0;
}

/* ---- The content ---- */

static int make_www(struct sworn_upstream *u)
{
    char www[1024], path[1024];
    uint8_t *big;
    int rc;

    if (make_dir(u->dir, "www") < 0 || join(www, sizeof(www), u->dir, "www") < 0 ||
        make_dir(www, "allowed") < 0 || put_text(www, "allowed/hello.txt", "hello\n") < 0 ||
        put_text(www, "small.txt", "small\n") < 0 || join(path, sizeof(path), www, "big.bin") < 0)
        return -1;
    big = malloc(SWORN_UPSTREAM_BIG_SIZE);
    if (big == NULL)
        return complain("out of memory");
    for (size_t i = 0; i < SWORN_UPSTREAM_BIG_SIZE; i++)
        big[i] = (uint8_t)(i % 251);
    rc = put_file(path, big, SWORN_UPSTREAM_BIG_SIZE);
    free(big);
    return rc;
}

/* ---- nginx ---- */

/* nginx.conf for the current ports. Every path nginx writes is in u->dir. */
static int write_nginx_conf(struct sworn_upstream *u)
{
    char text[8192], path[1024];
    const char *d = u->dir;
    int n = snprintf(
        text, sizeof(text),
        "master_process off;\n"
        "pid %s/nginx.pid;\n"
        "lock_file %s/nginx.lock;\n"
        "error_log %s/error.log info;\n"
        "events { worker_connections 1024; }\n"
        "http {\n"
        "  log_format sworn '$msec $request_method \"$request_uri\" $status "
        "auth=\"$http_authorization\" key=\"$http_x_api_key\" $request_length $content_length "
        "idx=\"$http_sworn_log_index\" host=\"$http_host\" drop=\"$http_x_drop\" "
        "pauth=\"$http_proxy_authorization\" pconn=\"$http_proxy_connection\" "
        "te=\"$http_transfer_encoding\" trailer=\"$http_x_trailer\"';\n"
        "  access_log %s/access.log sworn;\n"
        "  client_body_temp_path %s/tmp/body;\n"
        "  proxy_temp_path %s/tmp/proxy;\n"
        "  fastcgi_temp_path %s/tmp/fastcgi;\n"
        "  uwsgi_temp_path %s/tmp/uwsgi;\n"
        "  scgi_temp_path %s/tmp/scgi;\n"
        "  types { text/plain txt; application/octet-stream bin; }\n"
        "  default_type application/octet-stream;\n"
        "  keepalive_requests 1000000;\n"
        "  server {\n"
        "    listen 127.0.0.1:%u;\n"
        "    listen 127.0.0.1:%u ssl;\n"
        "    server_name " SWORN_UPSTREAM_HOST " localhost;\n"
        "    ssl_certificate %s;\n"
        "    ssl_certificate_key %s;\n"
        "    root %s/www;\n"
        "    location = /allowed/upstream-503 {\n"
        "      default_type text/plain;\n"
        "      return 503 \"the upstream is unavailable\\n\";\n"
        "    }\n"
        "    location /echo/ {\n"
        "      default_type text/plain;\n"
        "      return 200 \"$request_method $request_uri auth=$http_authorization "
        "key=$http_x_api_key idx=$http_sworn_log_index\\n\";\n"
        "    }\n"
        "  }\n"
        "}\n",
        d, d, d, d, d, d, d, d, d, (unsigned)u->http_port, (unsigned)u->https_port, u->cert, u->key,
        d);

    if (n < 0 || (size_t)n >= sizeof(text))
        return complain("nginx.conf does not fit");
    if (join(path, sizeof(path), d, "nginx.conf") < 0)
        return -1;
    return put_file(path, text, (size_t)n);
}

/* 1 when nginx wrote its pid file with pid in it (it has bound every listen address). */
static int pid_file_is(const char *path, pid_t pid)
{
    char *text = sworn_test_read_file_opt(path, NULL);
    int ok = text != NULL && atol(text) == (long)pid;

    free(text);
    return ok;
}

/* Whether nginx's error log says a port was taken (then new ports are worth a try). */
static int port_was_taken(const struct sworn_upstream *u)
{
    char *text = sworn_test_read_file_opt(u->error_log, NULL);
    int taken = text != NULL && strstr(text, "Address already in use") != NULL;

    free(text);
    return taken;
}

/* One attempt on fresh ports: 0 up, 1 a port was taken (try again), -1 failed. */
static int nginx_attempt(struct sworn_upstream *u)
{
    char conf[1024], pidfile[1024], nginx_out[1024];
    char *argv[] = {NGINX_BIN, "-p",         u->dir, "-c",          conf,
                    "-e",      u->error_log, "-g",   "daemon off;", NULL};
    int64_t deadline = now_ms() + SWORN_UPSTREAM_START_MS;
    int status = 0;

    u->http_port = free_port();
    do
        u->https_port = free_port();
    while (u->https_port == u->http_port);
    if (u->http_port == 0 || u->https_port == 0)
        return complain("no free port: %s", strerror(errno));
    if (join(conf, sizeof(conf), u->dir, "nginx.conf") < 0 ||
        join(pidfile, sizeof(pidfile), u->dir, "nginx.pid") < 0 ||
        join(nginx_out, sizeof(nginx_out), u->dir, "nginx.out") < 0 || write_nginx_conf(u) < 0)
        return -1;
    if ((unlink(pidfile) != 0 && errno != ENOENT) ||
        (truncate(u->error_log, 0) != 0 && errno != ENOENT))
        return complain("cannot clear %s or %s: %s", pidfile, u->error_log, strerror(errno));
    u->nginx_pid = sworn_upstream_spawn(argv, nginx_out);
    if (u->nginx_pid < 0) {
        u->nginx_pid = 0;
        return -1;
    }
    while (now_ms() <= deadline) {
        if (exited(u->nginx_pid, &status)) {
            u->nginx_pid = 0;
            if (port_was_taken(u))
                return 1;
            complain("nginx exited at start (status 0x%x)", (unsigned)status);
            dump_file(nginx_out);
            dump_file(u->error_log);
            return -1;
        }
        if (pid_file_is(pidfile, u->nginx_pid) && port_open(u->http_port) &&
            port_open(u->https_port))
            return 0;
        sworn_test_sleep_ms(POLL_MS);
    }
    complain("nginx did not listen on ports %u and %u within %d ms", (unsigned)u->http_port,
             (unsigned)u->https_port, SWORN_UPSTREAM_START_MS);
    dump_file(u->error_log);
    sworn_upstream_stop_child(&u->nginx_pid, "nginx");
    return -1;
}

static int start_nginx(struct sworn_upstream *u)
{
    for (int i = 0; i < NGINX_ATTEMPTS; i++) {
        int rc = nginx_attempt(u);

        if (rc <= 0)
            return rc;
    }
    dump_file(u->error_log);
    return complain("nginx found its ports taken %d times", NGINX_ATTEMPTS);
}

/* ---- The WebSocket server ---- */

static int start_ws(struct sworn_upstream *u)
{
    char ports[1024], out[1024];
    char *argv[] = {PYTHON_BIN, "-I", WS_SCRIPT, "serve", u->dir, u->cert, u->key, NULL};
    int64_t deadline = now_ms() + SWORN_UPSTREAM_START_MS;
    int status = 0, have_ports = 0;

    if (join(ports, sizeof(ports), u->dir, "ws.ports") < 0 ||
        join(out, sizeof(out), u->dir, "ws.out") < 0)
        return -1;
    u->ws_pid = sworn_upstream_spawn(argv, out);
    if (u->ws_pid < 0) {
        u->ws_pid = 0;
        return -1;
    }
    while (now_ms() <= deadline) {
        if (exited(u->ws_pid, &status)) {
            u->ws_pid = 0;
            complain("the WebSocket server exited at start (status 0x%x)", (unsigned)status);
            dump_file(out);
            return -1;
        }
        if (!have_ports) {
            char *text = sworn_test_read_file_opt(ports, NULL);
            unsigned ws = 0, wss = 0;

            if (text != NULL && sscanf(text, "%u %u", &ws, &wss) == 2 && ws > 0 && ws < 65536 &&
                wss > 0 && wss < 65536) {
                u->ws_port = (uint16_t)ws;
                u->wss_port = (uint16_t)wss;
                have_ports = 1;
            }
            free(text);
        }
        if (have_ports && port_open(u->ws_port) && port_open(u->wss_port))
            return 0;
        sworn_test_sleep_ms(POLL_MS);
    }
    complain("the WebSocket server did not listen within %d ms", SWORN_UPSTREAM_START_MS);
    dump_file(out);
    sworn_upstream_stop_child(&u->ws_pid, "the WebSocket server");
    return -1;
}

/* ---- The fixture ---- */

int sworn_upstream_start(struct sworn_upstream *u)
{
    char *dir;

    memset(u, 0, sizeof(*u));
    dir = sworn_test_tmpdir("upstream");
    if (strlen(dir) + 64 >= sizeof(u->dir)) {
        complain("the temporary folder %s is too long", dir);
        sworn_test_rmtree(dir);
        free(dir);
        return -1;
    }
    memcpy(u->dir, dir, strlen(dir) + 1);
    free(dir);
    snprintf(u->host, sizeof(u->host), "%s", SWORN_UPSTREAM_HOST);
    if (join(u->ca_cert, sizeof(u->ca_cert), u->dir, "ca.pem") < 0 ||
        join(u->ca_key, sizeof(u->ca_key), u->dir, "ca.key") < 0 ||
        join(u->cert, sizeof(u->cert), u->dir, "server.pem") < 0 ||
        join(u->key, sizeof(u->key), u->dir, "server.key") < 0 ||
        join(u->access_log, sizeof(u->access_log), u->dir, "access.log") < 0 ||
        join(u->error_log, sizeof(u->error_log), u->dir, "error.log") < 0 ||
        join(u->ws_log, sizeof(u->ws_log), u->dir, "ws.log") < 0 || make_dir(u->dir, "tmp") < 0 ||
        make_certs(u) < 0 || make_www(u) < 0 || start_nginx(u) < 0 || start_ws(u) < 0) {
        sworn_upstream_stop(u);
        return -1;
    }
    return 0;
}

void sworn_upstream_stop(struct sworn_upstream *u)
{
    sworn_upstream_stop_child(&u->nginx_pid, "nginx");
    sworn_upstream_stop_child(&u->ws_pid, "the WebSocket server");
    if (u->dir[0] == '\0')
        return;
    if (getenv("SWORN_KEEP_STACK") == NULL)
        sworn_test_rmtree(u->dir);
    else
        fprintf(stderr, "upstream fixture: kept %s\n", u->dir);
    u->dir[0] = '\0';
}

/* ---- The logs ---- */

static size_t count_lines(const char *path)
{
    char *text = sworn_test_read_file_opt(path, NULL);
    size_t n = 0;

    for (const char *p = text; p != NULL && *p != '\0'; p++)
        n += *p == '\n';
    free(text);
    return n;
}

size_t sworn_upstream_log_count(struct sworn_upstream *u)
{
    return count_lines(u->access_log);
}

int sworn_upstream_log_has(struct sworn_upstream *u, const char *needle)
{
    return sworn_test_file_has_line(u->access_log, needle);
}

int sworn_upstream_wait_log(struct sworn_upstream *u, const char *needle, int timeout_ms)
{
    return sworn_test_wait_file_has(u->access_log, needle, timeout_ms);
}

struct count_arg {
    const char *path;
    size_t n;
};

static int has_count(void *arg)
{
    const struct count_arg *a = arg;

    return count_lines(a->path) >= a->n;
}

int sworn_upstream_wait_count(struct sworn_upstream *u, size_t n, int timeout_ms)
{
    struct count_arg a = {u->access_log, n};

    return sworn_test_wait_dir(u->dir, has_count, &a, timeout_ms);
}

int sworn_upstream_ws_log_has(struct sworn_upstream *u, const char *needle)
{
    return sworn_test_file_has_line(u->ws_log, needle);
}

int sworn_upstream_wait_ws_log(struct sworn_upstream *u, const char *needle, int timeout_ms)
{
    return sworn_test_wait_file_has(u->ws_log, needle, timeout_ms);
}

/* ---- Clients ---- */

/* Run head (NULL-terminated) then tail (NULL-terminated, at most TAIL_MAX) with the output
 * captured. The caller frees r. */
static void run_with_tail(const char *const *head, const char *const *tail,
                          struct sworn_test_run *r)
{
    const char *argv[TAIL_MAX + 16];
    size_t n = 0;

    for (; *head != NULL; head++) {
        assert_true(n < 16);
        argv[n++] = *head;
    }
    for (size_t i = 0; tail != NULL && tail[i] != NULL; i++) {
        if (i >= TAIL_MAX)
            fail_msg("more than %d arguments for %s", TAIL_MAX, argv[0]);
        argv[n++] = tail[i];
    }
    argv[n] = NULL;
    sworn_test_run(argv, NULL, r);
}

static void copy_out(char *out, size_t cap, const char *text, size_t len)
{
    if (cap == 0)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(out, text, len);
    out[len] = '\0';
}

int sworn_upstream_curl(const char *const argv_tail[], char *out, size_t cap, int *http_code)
{
    const char *head[] = {CURL_BIN,         "-sS",        "-o", "-", "-w",
                          "\n%{http_code}", "--max-time", "60", NULL};
    struct sworn_test_run r;
    char *last;
    int status;

    run_with_tail(head, argv_tail, &r);
    last = strrchr(r.out, '\n');
    if (http_code != NULL)
        *http_code = last != NULL ? atoi(last + 1) : 0;
    copy_out(out, cap, r.out, last != NULL ? (size_t)(last - r.out) : r.out_len);
    if (r.status != 0)
        fprintf(stderr, "upstream fixture: curl exited %d: %s", r.status, r.err);
    status = r.status;
    sworn_test_run_free(&r);
    return status;
}

int sworn_upstream_ws_client(const char *const argv_tail[], char *out, size_t cap)
{
    const char *head[] = {PYTHON_BIN, "-I", WS_SCRIPT, "client", NULL};
    struct sworn_test_run r;
    int status;

    run_with_tail(head, argv_tail, &r);
    copy_out(out, cap, r.out, r.out_len);
    if (r.status == 1)
        fprintf(stderr, "upstream fixture: ws client: %s", r.err);
    status = r.status;
    sworn_test_run_free(&r);
    return status;
}

/* ---- Raw TCP upstreams ---- */

static void rawup_note(struct sworn_rawup *r, size_t accepted, size_t bytes, size_t heads)
{
    pthread_mutex_lock(&r->lock);
    r->accepted += accepted;
    r->bytes_received += bytes;
    r->heads += heads;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

/* Send all of buf on fd; gives up when the fixture is being stopped (or the peer is gone). */
static int rawup_send(struct sworn_rawup *r, int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd w[2] = {{.fd = fd, .events = POLLOUT},
                                  {.fd = r->wake[0], .events = POLLIN}};

            if (poll(w, 2, -1) < 0 && errno != EINTR)
                return -1;
            if (w[1].revents != 0)
                return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

static void rawup_close(struct sworn_rawup *r, int slot, int reset)
{
    if (reset) {
        struct linger l = {.l_onoff = 1, .l_linger = 0};

        (void)setsockopt(r->conn[slot], SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    }
    close(r->conn[slot]);
    r->conn[slot] = -1;
    r->head_match[slot] = 0;
    r->answered[slot] = 0;
}

/* Count the request heads ending in buf[0..n) (matching across reads). OUT: *first_end, the
 * offset just past the first one (n when none ends here). */
static size_t rawup_scan(unsigned *match, const uint8_t *buf, size_t n, size_t *first_end)
{
    static const char end[] = "\r\n\r\n";
    size_t heads = 0;

    *first_end = n;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == (uint8_t)end[*match])
            (*match)++;
        else
            *match = buf[i] == '\r' ? 1 : 0;
        if (*match == 4) {
            *match = 0;
            if (heads++ == 0)
                *first_end = i + 1;
        }
    }
    return heads;
}

static void rawup_accept(struct sworn_rawup *r)
{
    int fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC), slot = -1;

    if (fd < 0)
        return;
    for (int i = 0; i < SWORN_RAWUP_CONNS && slot < 0; i++)
        if (r->conn[i] < 0)
            slot = i;
    if (slot < 0) { /* not polled for when full; kept for safety */
        close(fd);
        return;
    }
    r->conn[slot] = fd;
    rawup_note(r, 1, 0, 0);
    if (r->mode == SWORN_RAWUP_BANNER &&
        rawup_send(r, fd, SWORN_RAWUP_BANNER_TEXT, strlen(SWORN_RAWUP_BANNER_TEXT)) < 0)
        rawup_close(r, slot, 0);
}

static void rawup_read(struct sworn_rawup *r, int slot)
{
    uint8_t buf[16384];
    ssize_t n = recv(r->conn[slot], buf, sizeof(buf), MSG_DONTWAIT);
    size_t first_end, heads;

    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        rawup_close(r, slot, 0);
        return;
    }
    heads = rawup_scan(&r->head_match[slot], buf, (size_t)n, &first_end);
    rawup_note(r, 0, (size_t)n, heads);
    switch (r->mode) {
    case SWORN_RAWUP_ECHO:
    case SWORN_RAWUP_BANNER:
        if (rawup_send(r, r->conn[slot], buf, (size_t)n) < 0)
            rawup_close(r, slot, 0);
        break;
    case SWORN_RAWUP_RESET_AFTER_HEAD:
        if (heads > 0)
            rawup_close(r, slot, 1);
        break;
    case SWORN_RAWUP_HALF_RESPONSE:
        if (heads > 0 && !r->answered[slot]) {
            r->answered[slot] = 1;
            if (rawup_send(r, r->conn[slot], SWORN_RAWUP_HALF, strlen(SWORN_RAWUP_HALF)) < 0 ||
                shutdown(r->conn[slot], SHUT_WR) != 0)
                rawup_close(r, slot, 0);
        }
        break;
    case SWORN_RAWUP_CANNED:
        for (size_t i = 0; i < heads && r->canned != NULL; i++)
            if (rawup_send(r, r->conn[slot], r->canned, strlen(r->canned)) < 0) {
                rawup_close(r, slot, 0);
                break;
            }
        break;
    case SWORN_RAWUP_STALL:
    default:
        break;
    }
}

static void *rawup_main(void *arg)
{
    struct sworn_rawup *r = arg;

    for (;;) {
        struct pollfd p[SWORN_RAWUP_CONNS + 2];
        int slot_of[SWORN_RAWUP_CONNS + 2];
        nfds_t n = 0;
        int full = 1;

        p[n++] = (struct pollfd){.fd = r->wake[0], .events = POLLIN};
        for (int i = 0; i < SWORN_RAWUP_CONNS; i++) {
            if (r->conn[i] < 0) {
                full = 0;
                continue;
            }
            slot_of[n] = i;
            p[n++] = (struct pollfd){.fd = r->conn[i], .events = POLLIN};
        }
        if (!full) {
            slot_of[n] = -1;
            p[n++] = (struct pollfd){.fd = r->listen_fd, .events = POLLIN};
        }
        if (poll(p, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            complain("rawup: poll: %s", strerror(errno));
            return NULL;
        }
        if (p[0].revents != 0)
            return NULL;
        for (nfds_t i = 1; i < n; i++) {
            if (p[i].revents == 0)
                continue;
            if (slot_of[i] < 0)
                rawup_accept(r);
            else if (r->conn[slot_of[i]] == p[i].fd)
                rawup_read(r, slot_of[i]);
        }
    }
}

int sworn_rawup_start(struct sworn_rawup *r, enum sworn_rawup_mode mode)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t len = sizeof(a);
    pthread_condattr_t ca;

    const char *canned = r->canned; /* the one field a caller sets before start */

    memset(r, 0, sizeof(*r));
    r->mode = mode;
    r->canned = canned;
    r->listen_fd = r->wake[0] = r->wake[1] = -1;
    for (int i = 0; i < SWORN_RAWUP_CONNS; i++)
        r->conn[i] = -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (r->listen_fd < 0 || bind(r->listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(r->listen_fd, 128) != 0 ||
        getsockname(r->listen_fd, (struct sockaddr *)&a, &len) != 0 ||
        pipe2(r->wake, O_CLOEXEC) != 0) {
        complain("rawup: cannot listen on 127.0.0.1: %s", strerror(errno));
        goto fail_fds;
    }
    r->port = ntohs(a.sin_port);
    if (pthread_condattr_init(&ca) != 0)
        goto fail_fds;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&r->changed, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        goto fail_fds;
    }
    pthread_condattr_destroy(&ca);
    if (pthread_mutex_init(&r->lock, NULL) != 0)
        goto fail_cond;
    if (pthread_create(&r->thread, NULL, rawup_main, r) != 0) {
        complain("rawup: cannot start the thread");
        pthread_mutex_destroy(&r->lock);
        goto fail_cond;
    }
    r->running = 1;
    return 0;
fail_cond:
    pthread_cond_destroy(&r->changed);
fail_fds:
    if (r->listen_fd >= 0)
        close(r->listen_fd);
    if (r->wake[0] >= 0)
        close(r->wake[0]);
    if (r->wake[1] >= 0)
        close(r->wake[1]);
    r->listen_fd = r->wake[0] = r->wake[1] = -1;
    return -1;
}

void sworn_rawup_stop(struct sworn_rawup *r)
{
    if (!r->running)
        return;
    while (write(r->wake[1], "x", 1) < 0 && errno == EINTR)
        ;
    pthread_join(r->thread, NULL);
    for (int i = 0; i < SWORN_RAWUP_CONNS; i++)
        if (r->conn[i] >= 0)
            rawup_close(r, i, 0);
    close(r->listen_fd);
    close(r->wake[0]);
    close(r->wake[1]);
    r->listen_fd = r->wake[0] = r->wake[1] = -1;
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    r->running = 0;
}

static size_t rawup_get(struct sworn_rawup *r, const size_t *field)
{
    size_t v;

    pthread_mutex_lock(&r->lock);
    v = *field;
    pthread_mutex_unlock(&r->lock);
    return v;
}

size_t sworn_rawup_accepted(struct sworn_rawup *r)
{
    return rawup_get(r, &r->accepted);
}

size_t sworn_rawup_bytes(struct sworn_rawup *r)
{
    return rawup_get(r, &r->bytes_received);
}

size_t sworn_rawup_heads(struct sworn_rawup *r)
{
    return rawup_get(r, &r->heads);
}

static int rawup_wait(struct sworn_rawup *r, const size_t *field, size_t n, int timeout_ms)
{
    struct timespec until;
    int rc = 0;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->lock);
    while (*field < n && rc == 0)
        rc = pthread_cond_timedwait(&r->changed, &r->lock, &until);
    rc = *field >= n ? 0 : -1;
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int sworn_rawup_wait_accepted(struct sworn_rawup *r, size_t n, int timeout_ms)
{
    return rawup_wait(r, &r->accepted, n, timeout_ms);
}

int sworn_rawup_wait_bytes(struct sworn_rawup *r, size_t n, int timeout_ms)
{
    return rawup_wait(r, &r->bytes_received, n, timeout_ms);
}

int sworn_rawup_wait_heads(struct sworn_rawup *r, size_t n, int timeout_ms)
{
    return rawup_wait(r, &r->heads, n, timeout_ms);
}
