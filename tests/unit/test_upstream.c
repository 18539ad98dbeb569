/*
 * test_upstream.c -- the upstreams the proxy's tests rely on do what upstream_fixture.h
 * says, checked with real clients (curl, the python3-websockets client, plain sockets):
 *
 *   nginx over HTTP and HTTPS  hello.txt and small.txt served; HTTPS verifies against the test
 *                              CA under the name upstream.test (and 127.0.0.1), and fails
 *                              without it; big.bin streams its 4 MiB pattern
 *   /echo/                     the body shows the method, URI, Authorization, X-Api-Key and
 *                              Sworn-Log-Index upstream received; the access log holds one
 *                              line per request in the documented format
 *   WebSocket ws and wss       every message echoed; each handshake logged with its path and
 *                              Authorization; wss refused without the CA
 *   the ws client via a proxy  (Debian's tinyproxy) wss and ws --tunnel through CONNECT echo;
 *                              plain ws goes as an absolute-form request; a refused CONNECT
 *                              is reported as "connect-status NNN"
 *   raw upstreams              echo, banner, reset after a head (curl: 56), stall (nothing
 *                              comes; stop ends it), half a response (curl: 18), counters
 *   two fixtures at once       distinct folders and ports, both serving (ctest -j)
 *   stop                       no process left (kill(pid, 0) is ESRCH), the folder removed
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "upstream_fixture.h"

#define WAIT_MS 10000 /* for an event that comes at once unless something is broken */

static struct sworn_upstream up; /* the group's fixture; stopped by the group teardown */
static struct sworn_upstream pair_a,
    pair_b; /* test_two_at_once_and_stop's; stopped there or at teardown */

/* Debian's tinyproxy, a proxy no one here wrote, for the ws client's proxy modes. */
struct tinyproxy {
    char *dir, *log;
    uint16_t port;
    pid_t pid;
};
static struct tinyproxy tp; /* test_ws_client_through_proxy's; stopped at teardown too */

static void tinyproxy_stop(struct tinyproxy *t);

static int group_setup(void **state)
{
    (void)state;
    return sworn_upstream_start(&up) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    sworn_upstream_stop(&up);
    sworn_upstream_stop(&pair_a);
    sworn_upstream_stop(&pair_b);
    tinyproxy_stop(&tp);
    return 0;
}

/* "http://127.0.0.1:PORT<path>" or "https://upstream.test:PORT<path>" into out. */
static void url(char *out, size_t cap, int tls, const char *path)
{
    int n = tls ? snprintf(out, cap, "https://%s:%u%s", up.host, (unsigned)up.https_port, path)
                : snprintf(out, cap, "http://127.0.0.1:%u%s", (unsigned)up.http_port, path);

    assert_true(n > 0 && (size_t)n < cap);
}

/* curl --resolve upstream.test:HTTPS_PORT:127.0.0.1, so the name reaches the fixture. */
static void resolve_arg(char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s:%u:127.0.0.1", up.host, (unsigned)up.https_port);

    assert_true(n > 0 && (size_t)n < cap);
}

static void test_http_static(void **state)
{
    char u[256], body[256];
    int code = 0;
    (void)state;

    url(u, sizeof(u), 0, "/allowed/hello.txt");
    const char *hello[] = {"--noproxy", "*", u, NULL};
    assert_int_equal(sworn_upstream_curl(hello, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_string_equal(body, "hello\n");

    url(u, sizeof(u), 0, "/small.txt");
    const char *small[] = {"--noproxy", "*", u, NULL};
    assert_int_equal(sworn_upstream_curl(small, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_string_equal(body, "small\n");

    url(u, sizeof(u), 0, "/no/such/file");
    const char *missing[] = {"--noproxy", "*", u, NULL};
    assert_int_equal(sworn_upstream_curl(missing, body, sizeof(body), &code), 0);
    assert_int_equal(code, 404);
    assert_int_equal(sworn_upstream_wait_log(&up, "GET \"/no/such/file\" 404", WAIT_MS), 0);
}

static void test_https_static(void **state)
{
    char u[256], body[256], resolve[128], ip_url[256];
    int code = 0;
    (void)state;

    url(u, sizeof(u), 1, "/allowed/hello.txt");
    resolve_arg(resolve, sizeof(resolve));
    const char *trusted[] = {"--noproxy", "*",     "--cacert", up.ca_cert,
                             "--resolve", resolve, u,          NULL};
    assert_int_equal(sworn_upstream_curl(trusted, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_string_equal(body, "hello\n");

    /* The certificate names 127.0.0.1 too. */
    snprintf(ip_url, sizeof(ip_url), "https://127.0.0.1:%u/small.txt", (unsigned)up.https_port);
    const char *by_ip[] = {"--noproxy", "*", "--cacert", up.ca_cert, ip_url, NULL};
    assert_int_equal(sworn_upstream_curl(by_ip, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_string_equal(body, "small\n");

    /* Without the test CA (the system's store only) the chain is not trusted: curl's 60. */
    const char *untrusted[] = {"--noproxy", "*", "--resolve", resolve, u, NULL};
    assert_int_equal(sworn_upstream_curl(untrusted, body, sizeof(body), &code), 60);
    assert_int_equal(code, 0);

    /* Under a name the certificate does not carry, the host-name check fails (60 too). */
    char other[256], other_resolve[128];
    snprintf(other, sizeof(other), "https://other.test:%u/small.txt", (unsigned)up.https_port);
    snprintf(other_resolve, sizeof(other_resolve), "other.test:%u:127.0.0.1",
             (unsigned)up.https_port);
    const char *wrong_name[] = {"--noproxy", "*",           "--cacert", up.ca_cert,
                                "--resolve", other_resolve, other,      NULL};
    assert_int_equal(sworn_upstream_curl(wrong_name, body, sizeof(body), &code), 60);
}

static void test_big_streams(void **state)
{
    char u[256], *out = sworn_test_path(up.dir, "big.out"), *data;
    size_t len = 0;
    (void)state;

    url(u, sizeof(u), 0, "/big.bin");
    sworn_test_run_ok("curl big.bin", NULL, "/usr/bin/curl", "-sS", "--noproxy", "*", "--max-time",
                      "60", "-o", out, u, NULL);
    data = sworn_test_read_file(out, &len);
    assert_int_equal(len, SWORN_UPSTREAM_BIG_SIZE);
    for (size_t i = 0; i < len; i++)
        if ((uint8_t)data[i] != (uint8_t)(i % 251))
            fail_msg("big.bin byte %zu is %u", i, (unsigned)(uint8_t)data[i]);
    free(data);
    free(out);
}

static void test_echo_and_log(void **state)
{
    char u[256], body[512], resolve[128];
    int code = 0;
    size_t before = sworn_upstream_log_count(&up);
    (void)state;

    url(u, sizeof(u), 0, "/echo/x?q=1");
    const char *get[] = {"--noproxy", "*",
                         "-H",        "Authorization: Bearer real-secret-1",
                         "-H",        "X-Api-Key: key-1",
                         "-H",        "Sworn-Log-Index: 42",
                         u,           NULL};
    assert_int_equal(sworn_upstream_curl(get, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_string_equal(body, "GET /echo/x?q=1 auth=Bearer real-secret-1 key=key-1 idx=42\n");
    assert_int_equal(
        sworn_upstream_wait_log(&up,
                                "GET \"/echo/x?q=1\" 200 auth=\"Bearer real-secret-1\" "
                                "key=\"key-1\"",
                                WAIT_MS),
        0);
    assert_true(sworn_upstream_log_has(&up, "idx=\"42\" host=\"127.0.0.1:"));

    /* A POST over HTTPS: its body is discarded, its length logged; absent headers are empty. */
    url(u, sizeof(u), 1, "/echo/post");
    resolve_arg(resolve, sizeof(resolve));
    const char *post[] = {"--noproxy", "*",  "--cacert",    up.ca_cert, "--resolve",
                          resolve,     "-d", "hello=world", u,          NULL};
    assert_int_equal(sworn_upstream_curl(post, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_string_equal(body, "POST /echo/post auth= key= idx=\n");
    assert_int_equal(
        sworn_upstream_wait_log(&up, "POST \"/echo/post\" 200 auth=\"-\" key=\"-\"", WAIT_MS), 0);
    assert_true(sworn_upstream_log_has(&up, " 11 idx=\"-\" host=\"upstream.test:"));

    assert_int_equal(sworn_upstream_wait_count(&up, before + 2, WAIT_MS), 0);
    assert_int_equal(sworn_upstream_log_count(&up), before + 2);
    assert_false(sworn_upstream_log_has(&up, "never-sent"));
    assert_int_equal(sworn_upstream_wait_log(&up, "never-sent", 50), -1);
}

static void test_websocket(void **state)
{
    char uri[256], out[512], header[64] = "Authorization: Bearer ws-secret";
    (void)state;

    snprintf(uri, sizeof(uri), "ws://127.0.0.1:%u/chat?room=1", (unsigned)up.ws_port);
    const char *plain[] = {uri, "--header", header, "ping", "second message", NULL};
    assert_int_equal(sworn_upstream_ws_client(plain, out, sizeof(out)), 0);
    assert_string_equal(out, "recv ping\nrecv second message\n");
    assert_int_equal(sworn_upstream_wait_ws_log(&up, "/chat?room=1 auth=Bearer ws-secret", WAIT_MS),
                     0);

    snprintf(uri, sizeof(uri), "wss://127.0.0.1:%u/secure", (unsigned)up.wss_port);
    const char *tls[] = {uri, "--cacert", up.ca_cert, "over tls", NULL};
    assert_int_equal(sworn_upstream_ws_client(tls, out, sizeof(out)), 0);
    assert_string_equal(out, "recv over tls\n");
    assert_int_equal(sworn_upstream_wait_ws_log(&up, "/secure auth=", WAIT_MS), 0);
    assert_true(sworn_upstream_ws_log_has(&up, "/chat?room=1 auth=Bearer ws-secret"));

    /* Without the CA, the client refuses the server's certificate. */
    const char *untrusted[] = {uri, "never echoed", NULL};
    assert_int_equal(sworn_upstream_ws_client(untrusted, out, sizeof(out)), 1);
    assert_string_equal(out, "");

    /* A plain HTTP request to the WebSocket port is refused as a handshake (426 or 400). */
    char http[256], body[256];
    int code = 0;
    snprintf(http, sizeof(http), "http://127.0.0.1:%u/chat", (unsigned)up.ws_port);
    const char *not_ws[] = {"--noproxy", "*", http, NULL};
    assert_int_equal(sworn_upstream_curl(not_ws, body, sizeof(body), &code), 0);
    assert_true(code == 426 || code == 400);
}

/* ---- The WebSocket client through a proxy ---- */

static uint16_t free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One start of tinyproxy on a free port: 0 when it listens (its log says so), 1 when it exited
 * (the port was taken meanwhile: try another). */
static int tinyproxy_attempt(struct tinyproxy *t)
{
    char *conf = sworn_test_path(t->dir, "tinyproxy.conf"), text[1024];
    char *out = sworn_test_path(t->dir, "tinyproxy.out");
    int64_t deadline = monotonic_ms() + SWORN_UPSTREAM_START_MS;
    int n, status, rc = -1;

    t->port = free_port();
    n = snprintf(text, sizeof(text),
                 "Port %u\nListen 127.0.0.1\nTimeout 60\nMaxClients 16\nLogLevel Info\n"
                 "LogFile \"%s\"\n",
                 (unsigned)t->port, t->log);
    assert_true(n > 0 && (size_t)n < sizeof(text));
    sworn_test_write_file(conf, text, (size_t)n, 0600);
    sworn_test_write_file(t->log, "", 0, 0600);
    fflush(stdout);
    fflush(stderr);
    t->pid = fork();
    assert_true(t->pid >= 0);
    if (t->pid == 0) {
        char *const argv[] = {"/usr/bin/tinyproxy", "-d", "-c", conf, NULL};
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    while (rc < 0 && monotonic_ms() <= deadline) {
        char *log = sworn_test_read_file_opt(t->log, NULL);

        if (waitpid(t->pid, &status, WNOHANG) == t->pid) {
            t->pid = 0;
            rc = 1;
        } else if (log != NULL && strstr(log, "listening on fd") != NULL) {
            rc = 0;
        } else {
            sworn_test_sleep_ms(5);
        }
        free(log);
    }
    free(conf);
    free(out);
    if (rc < 0)
        fail_msg("tinyproxy did not listen within %d ms", SWORN_UPSTREAM_START_MS);
    return rc;
}

static void tinyproxy_start(struct tinyproxy *t)
{
    memset(t, 0, sizeof(*t));
    t->dir = sworn_test_tmpdir("tinyproxy");
    t->log = sworn_test_path(t->dir, "tinyproxy.log");
    for (int i = 0; i < 5; i++)
        if (tinyproxy_attempt(t) == 0)
            return;
    fail_msg("tinyproxy found its port taken 5 times");
}

static void tinyproxy_stop(struct tinyproxy *t)
{
    int status;

    if (t->pid > 0) {
        kill(t->pid, SIGTERM);
        while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR)
            ;
        t->pid = 0;
    }
    if (t->dir != NULL && getenv("SWORN_KEEP_STACK") == NULL)
        sworn_test_rmtree(t->dir);
    free(t->dir);
    free(t->log);
    memset(t, 0, sizeof(*t));
}

static void test_ws_client_through_proxy(void **state)
{
    char uri[256], out[512], proxy[64], line[256], *log;
    (void)state;

    tinyproxy_start(&tp);
    snprintf(proxy, sizeof(proxy), "127.0.0.1:%u", (unsigned)tp.port);

    /* wss: CONNECT localhost:PORT, then TLS to the server through the tunnel. */
    snprintf(uri, sizeof(uri), "wss://localhost:%u/through-connect", (unsigned)up.wss_port);
    const char *wss[] = {uri,
                         "--proxy",
                         proxy,
                         "--cacert",
                         up.ca_cert,
                         "--header",
                         "Authorization: Bearer tunnel-token",
                         "hello through",
                         NULL};
    assert_int_equal(sworn_upstream_ws_client(wss, out, sizeof(out)), 0);
    assert_string_equal(out, "recv hello through\n");
    assert_int_equal(
        sworn_upstream_wait_ws_log(&up, "/through-connect auth=Bearer tunnel-token", WAIT_MS), 0);

    /* ws with --tunnel: CONNECT too, then the plain handshake. */
    snprintf(uri, sizeof(uri), "ws://127.0.0.1:%u/plain-tunnel", (unsigned)up.ws_port);
    const char *tunnel[] = {uri, "--proxy", proxy, "--tunnel", "plain", NULL};
    assert_int_equal(sworn_upstream_ws_client(tunnel, out, sizeof(out)), 0);
    assert_string_equal(out, "recv plain\n");
    log = sworn_test_read_file(tp.log, NULL);
    snprintf(line, sizeof(line), "CONNECT 127.0.0.1:%u HTTP/1.1", (unsigned)up.ws_port);
    assert_non_null(strstr(log, line));
    free(log);

    /* ws without --tunnel: an absolute-form request reaches the proxy. tinyproxy drops the
     * Upgrade headers (hop-by-hop), so the server refuses the handshake: exit 2, its status. */
    snprintf(uri, sizeof(uri), "ws://127.0.0.1:%u/absolute", (unsigned)up.ws_port);
    const char *absolute[] = {uri, "--proxy", proxy, "never echoed", NULL};
    assert_int_equal(sworn_upstream_ws_client(absolute, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "status "));
    log = sworn_test_read_file(tp.log, NULL);
    snprintf(line, sizeof(line), "GET http://127.0.0.1:%u/absolute HTTP/1.1", (unsigned)up.ws_port);
    assert_non_null(strstr(log, line));
    free(log);

    /* A CONNECT the proxy cannot make (nothing listens there) is refused: "connect-status". */
    snprintf(uri, sizeof(uri), "ws://127.0.0.1:%u/nowhere", (unsigned)free_port());
    const char *refused[] = {uri, "--proxy", proxy, "--tunnel", "never echoed", NULL};
    assert_int_equal(sworn_upstream_ws_client(refused, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "connect-status "));
    assert_null(strstr(out, "connect-status 200"));
    tinyproxy_stop(&tp);
}

/* ---- Raw upstreams ---- */

static int connect_port(uint16_t port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

static void send_text(int fd, const char *text)
{
    assert_int_equal(send(fd, text, strlen(text), MSG_NOSIGNAL), (ssize_t)strlen(text));
}

/*
 * Read from fd until want bytes came, the peer closed or reset, or WAIT_MS passed. Returns the
 * bytes read (into buf, NUL-terminated); OUT: *end 0 (still open), 1 (EOF), or the errno.
 */
static size_t read_some(int fd, char *buf, size_t cap, size_t want, int *end)
{
    size_t got = 0;

    *end = 0;
    while (got < want && got + 1 < cap) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;

        if (poll(&p, 1, WAIT_MS) <= 0)
            break;
        n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n < 0) {
            *end = errno;
            break;
        }
        if (n == 0) {
            *end = 1;
            break;
        }
        got += (size_t)n;
    }
    buf[got] = '\0';
    return got;
}

static void test_rawup_echo(void **state)
{
    struct sworn_rawup r;
    char buf[256];
    int end, a, b;
    (void)state;

    assert_int_equal(sworn_rawup_start(&r, SWORN_RAWUP_ECHO), 0);
    assert_true(r.port > 0);
    a = connect_port(r.port);
    b = connect_port(r.port);
    send_text(b, "second\r\n\r\n");
    send_text(a, "first");
    assert_int_equal(read_some(a, buf, sizeof(buf), 5, &end), 5);
    assert_string_equal(buf, "first");
    assert_int_equal(read_some(b, buf, sizeof(buf), 10, &end), 10);
    assert_string_equal(buf, "second\r\n\r\n");
    assert_int_equal(sworn_rawup_wait_accepted(&r, 2, WAIT_MS), 0);
    assert_int_equal(sworn_rawup_accepted(&r), 2);
    assert_int_equal(sworn_rawup_bytes(&r), 15);
    assert_int_equal(sworn_rawup_heads(&r), 1);
    assert_int_equal(sworn_rawup_wait_bytes(&r, 16, 50), -1);
    close(a);
    close(b);
    sworn_rawup_stop(&r);
    sworn_rawup_stop(&r); /* twice is harmless */
}

static void test_rawup_banner(void **state)
{
    struct sworn_rawup r;
    char buf[256];
    int end, fd;
    (void)state;

    assert_int_equal(sworn_rawup_start(&r, SWORN_RAWUP_BANNER), 0);
    fd = connect_port(r.port);
    assert_int_equal(read_some(fd, buf, sizeof(buf), strlen(SWORN_RAWUP_BANNER_TEXT), &end),
                     strlen(SWORN_RAWUP_BANNER_TEXT));
    assert_string_equal(buf, "SSH-2.0-test\r\n");
    send_text(fd, "SSH-2.0-client\r\n");
    assert_int_equal(read_some(fd, buf, sizeof(buf), 16, &end), 16);
    assert_string_equal(buf, "SSH-2.0-client\r\n");
    close(fd);
    sworn_rawup_stop(&r);
}

/* curl to the raw upstream's port; returns curl's exit status. */
static int curl_raw(const struct sworn_rawup *r, const char *max_time)
{
    char u[128], body[256];
    int code = -1;

    snprintf(u, sizeof(u), "http://127.0.0.1:%u/x", (unsigned)r->port);
    const char *argv[] = {"--noproxy", "*", "--max-time", max_time, u, NULL};
    return sworn_upstream_curl(argv, body, sizeof(body), &code);
}

static void test_rawup_reset(void **state)
{
    struct sworn_rawup r;
    char buf[256];
    int end, fd;
    (void)state;

    assert_int_equal(sworn_rawup_start(&r, SWORN_RAWUP_RESET_AFTER_HEAD), 0);
    /* Half a head is read and kept; the rest completes it and the answer is a reset. */
    fd = connect_port(r.port);
    send_text(fd, "GET / HTTP/1.1\r\nHost: x\r\n");
    assert_int_equal(sworn_rawup_wait_bytes(&r, 25, WAIT_MS), 0);
    assert_int_equal(sworn_rawup_heads(&r), 0);
    send_text(fd, "\r\n");
    assert_int_equal(read_some(fd, buf, sizeof(buf), 1, &end), 0);
    assert_int_equal(end, ECONNRESET);
    close(fd);
    assert_int_equal(sworn_rawup_heads(&r), 1);
    /* curl sees its connection reset: 56 (receive failure). */
    assert_int_equal(curl_raw(&r, "20"), 56);
    assert_int_equal(sworn_rawup_accepted(&r), 2);
    assert_int_equal(sworn_rawup_heads(&r), 2);
    sworn_rawup_stop(&r);
}

static void test_rawup_stall(void **state)
{
    struct sworn_rawup r;
    char buf[64];
    int end, fd;
    struct pollfd p;
    (void)state;

    assert_int_equal(sworn_rawup_start(&r, SWORN_RAWUP_STALL), 0);
    fd = connect_port(r.port);
    send_text(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_int_equal(sworn_rawup_wait_heads(&r, 1, WAIT_MS), 0);
    /* The head was read, and nothing answers it: curl runs into its own time limit (28). */
    assert_int_equal(curl_raw(&r, "1"), 28);
    assert_int_equal(sworn_rawup_accepted(&r), 2);
    p = (struct pollfd){.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 0), 0);
    /* Stopping closes the stalled connection: the client sees the end. */
    sworn_rawup_stop(&r);
    assert_int_equal(read_some(fd, buf, sizeof(buf), 1, &end), 0);
    assert_int_equal(end, 1);
    close(fd);
}

static void test_rawup_half_response(void **state)
{
    struct sworn_rawup r;
    char buf[256];
    int end, fd;
    (void)state;

    assert_int_equal(sworn_rawup_start(&r, SWORN_RAWUP_HALF_RESPONSE), 0);
    fd = connect_port(r.port);
    send_text(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_int_equal(read_some(fd, buf, sizeof(buf), sizeof(buf), &end), strlen(SWORN_RAWUP_HALF));
    assert_string_equal(buf, SWORN_RAWUP_HALF);
    assert_int_equal(end, 1); /* a FIN after the three bytes, not a reset */
    close(fd);
    /* curl: 18, a transfer closed with bytes outstanding. */
    assert_int_equal(curl_raw(&r, "20"), 18);
    assert_int_equal(sworn_rawup_heads(&r), 2);
    sworn_rawup_stop(&r);
}

/* ---- Whole fixtures ---- */

static void expect_gone(pid_t pid)
{
    assert_true(pid > 0);
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static void test_two_at_once_and_stop(void **state)
{
    char u[256], body[64], dir[512];
    pid_t pids[4];
    struct stat st;
    int code = 0;
    (void)state;

    assert_int_equal(sworn_upstream_start(&pair_a), 0);
    assert_int_equal(sworn_upstream_start(&pair_b), 0);
    assert_string_not_equal(pair_a.dir, pair_b.dir);
    uint16_t ports[] = {pair_a.http_port, pair_a.https_port, pair_a.ws_port,
                        pair_a.wss_port,  pair_b.http_port,  pair_b.https_port,
                        pair_b.ws_port,   pair_b.wss_port,   up.http_port};
    for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
        for (size_t j = i + 1; j < sizeof(ports) / sizeof(ports[0]); j++)
            assert_int_not_equal(ports[i], ports[j]);

    snprintf(u, sizeof(u), "http://127.0.0.1:%u/echo/from-b", (unsigned)pair_b.http_port);
    const char *to_b[] = {"--noproxy", "*", u, NULL};
    assert_int_equal(sworn_upstream_curl(to_b, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    assert_int_equal(sworn_upstream_wait_log(&pair_b, "\"/echo/from-b\" 200", WAIT_MS), 0);
    assert_false(sworn_upstream_log_has(&pair_a, "from-b"));
    assert_int_equal(sworn_upstream_log_count(&pair_a), 0);

    pids[0] = pair_a.nginx_pid;
    pids[1] = pair_a.ws_pid;
    pids[2] = pair_b.nginx_pid;
    pids[3] = pair_b.ws_pid;
    snprintf(dir, sizeof(dir), "%s", pair_a.dir);
    sworn_upstream_stop(&pair_a);
    expect_gone(pids[0]);
    expect_gone(pids[1]);
    assert_int_equal(pair_a.nginx_pid, 0);
    assert_int_equal(pair_a.ws_pid, 0);
    if (getenv("SWORN_KEEP_STACK") == NULL)
        assert_int_equal(stat(dir, &st), -1);
    sworn_upstream_stop(&pair_a); /* twice is harmless */

    /* pair_b is untouched by pair_a's stop. */
    assert_int_equal(kill(pids[2], 0), 0);
    assert_int_equal(sworn_upstream_curl(to_b, body, sizeof(body), &code), 0);
    assert_int_equal(code, 200);
    sworn_upstream_stop(&pair_b);
    expect_gone(pids[2]);
    expect_gone(pids[3]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_static),         cmocka_unit_test(test_https_static),
        cmocka_unit_test(test_big_streams),         cmocka_unit_test(test_echo_and_log),
        cmocka_unit_test(test_websocket),           cmocka_unit_test(test_ws_client_through_proxy),
        cmocka_unit_test(test_rawup_echo),          cmocka_unit_test(test_rawup_banner),
        cmocka_unit_test(test_rawup_reset),         cmocka_unit_test(test_rawup_stall),
        cmocka_unit_test(test_rawup_half_response), cmocka_unit_test(test_two_at_once_and_stop),
    };

    if (getenv("SWORN_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("SWORN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
