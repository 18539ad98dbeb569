/*
 * upstream_fixture.h -- the upstreams the proxy's tests send to: a real nginx (Debian's
 * /usr/sbin/nginx) over HTTP and HTTPS, a WebSocket echo server (python3-websockets, ws and wss),
 * both in a fresh temporary folder with a test CA made by the openssl CLI; and raw TCP servers
 * under the test's control (echo, reset, stall, half a response, a banner) for fault tests.
 *
 * Everything listens on 127.0.0.1 on ports picked free at start (never fixed ones), so tests can
 * run in parallel (ctest -j). Test code only: functions that can fail print why to stderr and
 * return -1 (a missing nginx, python3-websockets or openssl is a failure, never a skip).
 *
 * The children (nginx, python) are started with PR_SET_PDEATHSIG: they die with the thread that
 * started them, so call sworn_upstream_start from a thread that outlives the fixture (the test's
 * main thread, or a cmocka setup).
 *
 * What nginx serves (dir/www, and one server for all names):
 *   /allowed/hello.txt    "hello\n" (text/plain)
 *   /small.txt            "small\n" (the benchmark's small static file)
 *   /big.bin              SWORN_UPSTREAM_BIG_SIZE bytes, byte i = i % 251 (streamed responses)
 *   /echo/<anything>      200, text/plain, any method (a request body is discarded), the body
 *                         "<METHOD> <URI> auth=<Authorization> key=<X-Api-Key>
 *                          idx=<Sworn-Log-Index>\n" on one line (URI as sent, query included;
 *                         absent headers empty), so a test sees what upstream received
 *   anything else         as nginx does: 404, or 405 for a POST to a static file
 * The access log (u->access_log) has one line per request, written after the response:
 *   $msec $request_method "$request_uri" $status auth="$http_authorization"
 *   key="$http_x_api_key" $request_length $content_length idx="$http_sworn_log_index"
 *   host="$http_host" drop="$http_x_drop" pauth="$http_proxy_authorization"
 *   pconn="$http_proxy_connection" te="$http_transfer_encoding" trailer="$http_x_trailer"
 * (the last five show that hop-by-hop fields, Proxy-* and a chunked body's trailer were dropped)
 * (one line; nginx writes "-" for an empty variable and escapes '"', '\' and bytes outside
 * 0x20..0x7e as \xHH).
 *
 * Thread safety: a struct sworn_upstream is used by one thread at a time. A struct sworn_rawup
 * is served by its own thread; its counters and waits may be read from any thread.
 */
#ifndef SWORN_UPSTREAM_FIXTURE_H
#define SWORN_UPSTREAM_FIXTURE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "testutil.h"

#define SWORN_UPSTREAM_HOST "upstream.test"        /* the certificate's name */
#define SWORN_UPSTREAM_BIG_SIZE (4u * 1024 * 1024) /* /big.bin */
#define SWORN_UPSTREAM_START_MS 20000              /* how long each server may take to listen */

struct sworn_upstream {
    char dir[512]; /* the temporary folder (removed at stop unless SWORN_KEEP_STACK is set) */
    uint16_t http_port, https_port, ws_port, wss_port; /* all on 127.0.0.1 */
    char ca_cert[512];        /* the test CA's certificate (PEM): trust it to reach https/wss */
    char ca_key[512];         /* its key (PEM), for a test that needs to sign another certificate */
    char cert[512], key[512]; /* the servers' certificate and key (PEM), signed by the CA */
    /* the certificate's name: "upstream.test"; its SAN is DNS:upstream.test, DNS:localhost,
     * IP:127.0.0.1. Reach it with curl --resolve upstream.test:PORT:127.0.0.1. */
    char host[64];
    char access_log[512];    /* nginx's access log (format above) */
    char error_log[512];     /* nginx's error log, printed when start fails */
    char ws_log[512];        /* the WebSocket server's handshake log: "PATH auth=VALUE" per line */
    pid_t nginx_pid, ws_pid; /* 0 when not running */
};

/*
 * Make the folder, the CA and the certificate, start nginx and the WebSocket server, and wait (up
 * to SWORN_UPSTREAM_START_MS each) until every port accepts connections. nginx's ports are found
 * free by binding port 0; when another process takes one before nginx binds it, nginx fails and
 * is started again on new ports (up to 5 times). Returns 0, or -1 after printing why (everything
 * started is stopped again and the folder removed; u is then as sworn_upstream_stop leaves it).
 */
SWORN_TEST_MUST_CHECK
int sworn_upstream_start(struct sworn_upstream *u);

/* SIGTERM both servers, wait for them (SIGKILL after 10 s), and remove the folder (kept when
 * SWORN_KEEP_STACK is set). Safe on a zeroed, failed or already stopped fixture. */
void sworn_upstream_stop(struct sworn_upstream *u);

/*
 * Start argv (argv[0] a full path) with stdin from /dev/null and stdout and stderr appended to
 * log_path; the child dies with the thread that started it (PR_SET_PDEATHSIG). Returns the pid,
 * or -1 (printed). For other servers a test starts (sworn-proxy: proxy_fixture.h).
 */
pid_t sworn_upstream_spawn(char *const argv[], const char *log_path);

/*
 * sworn_upstream_spawn, then wait up to timeout_ms for the server to write the port it listens on
 * (decimal) to port_file, in a folder the test owns (the folder is watched, never polled). Returns
 * the pid and sets *port; -1 when it did not start or wrote no port in time (printed, with the
 * server's output from log_path; a started child is stopped).
 */
pid_t sworn_upstream_spawn_port(char *const argv[], const char *log_path, const char *port_file,
                                int timeout_ms, uint16_t *port);

/* SIGTERM *pid, wait up to 10 s, then SIGKILL; reap it and set *pid to 0. Safe when 0. */
void sworn_upstream_stop_child(pid_t *pid, const char *what);

/* How many requests the access log holds now (its lines). */
size_t sworn_upstream_log_count(struct sworn_upstream *u);

/* Whether a line of the access log contains needle (a plain substring). */
int sworn_upstream_log_has(struct sworn_upstream *u, const char *needle);

/*
 * Wait until a line of the access log contains needle: nginx writes a request's line after its
 * response, so a client can have its answer a moment before the line is there. Polls the file
 * every 5 ms. Returns 0 when the line came, -1 after timeout_ms.
 */
SWORN_TEST_MUST_CHECK
int sworn_upstream_wait_log(struct sworn_upstream *u, const char *needle, int timeout_ms);

/* Wait until the access log holds at least n lines; returns 0, or -1 after timeout_ms. */
SWORN_TEST_MUST_CHECK
int sworn_upstream_wait_count(struct sworn_upstream *u, size_t n, int timeout_ms);

/* The same two for the WebSocket server's handshake log (u->ws_log). */
int sworn_upstream_ws_log_has(struct sworn_upstream *u, const char *needle);
SWORN_TEST_MUST_CHECK
int sworn_upstream_wait_ws_log(struct sworn_upstream *u, const char *needle, int timeout_ms);

/*
 * Run /usr/bin/curl -sS -o - -w '\n%{http_code}' --max-time 60, then argv_tail (NULL-terminated;
 * at most 48), directly (never through a shell), with the test's environment. The body curl
 * printed goes into out (cap bytes, NUL-terminated; cut to fit), without the status line the -w
 * adds. OUT: *http_code (may be NULL): the HTTP status of the last response, 0 when there was
 * none. Returns curl's exit status (0: a response came, whatever its status; 7: no connection;
 * 28: timeout; 35/60: TLS failures; ...); when it is not 0, what curl said is printed to stderr.
 * Fails the running test when curl cannot be started.
 */
int sworn_upstream_curl(const char *const argv_tail[], char *out, size_t cap, int *http_code);

/*
 * Run the WebSocket client of tests/unit/ws_echo.py: `/usr/bin/python3 ws_echo.py client
 * argv_tail...` (argv_tail: URI, options --proxy HOST:PORT, --tunnel, --cacert FILE, --header
 * "Name: value", then the messages; NULL-terminated, at most 48). What it printed goes into out
 * (cap bytes, NUL-terminated, cut to fit): one "recv MESSAGE" line per message echoed, or "status
 * NNN" / "connect-status NNN" for a refused handshake. Returns its exit status: 0 every message
 * came back, 2 the handshake was refused, 1 another failure (printed to stderr).
 */
int sworn_upstream_ws_client(const char *const argv_tail[], char *out, size_t cap);

/* ---- Raw TCP upstreams ---- */

enum sworn_rawup_mode {
    SWORN_RAWUP_ECHO,             /* send back every byte received (tcp.connect tests) */
    SWORN_RAWUP_RESET_AFTER_HEAD, /* read up to the end of a request head (CRLF CRLF), then
                                     close with SO_LINGER 0: the peer gets a RST */
    SWORN_RAWUP_STALL,            /* accept and read (discarding), never answer, until stopped */
    SWORN_RAWUP_HALF_RESPONSE,    /* after a request head, send SWORN_RAWUP_HALF (a response
                                     promising 100 bytes, giving 3), then shut the connection
                                     down for writing (a FIN) and read until the peer closes */
    SWORN_RAWUP_BANNER,           /* send SWORN_RAWUP_BANNER_TEXT on accept, then echo */
    SWORN_RAWUP_CANNED,           /* after each request head, send r->canned (set it before
                                     start: any bytes, e.g. a response the proxy must refuse, or
                                     more than one response); the connection stays open */
};

#define SWORN_RAWUP_HALF "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"
#define SWORN_RAWUP_BANNER_TEXT "SSH-2.0-test\r\n"
#define SWORN_RAWUP_CONNS 64 /* connections served at once; more wait in the listen backlog */

struct sworn_rawup {
    uint16_t port; /* 127.0.0.1:port, bound (by the kernel's choice) before start returns */
    /* Internals: the serving thread's. */
    enum sworn_rawup_mode mode;
    const char *canned; /* CANNED: the caller's NUL-terminated text (it outlives the server) */
    int listen_fd, wake[2];
    int conn[SWORN_RAWUP_CONNS];
    unsigned head_match[SWORN_RAWUP_CONNS]; /* bytes of CRLF CRLF matched so far */
    int answered[SWORN_RAWUP_CONNS];        /* HALF_RESPONSE: sent, now draining */
    pthread_t thread;
    int running;
    /* Under lock, signalled through changed at every change. */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    size_t accepted;       /* connections accepted so far */
    size_t bytes_received; /* bytes read from all connections */
    size_t heads;          /* CRLF CRLF sequences in the bytes received (request heads), in
                              every mode; RESET_AFTER_HEAD stops reading at the first one */
};

/* Bind 127.0.0.1:0 and start the serving thread in mode. Every field is reset but r->canned
 * (for CANNED: set it before the call). Returns 0, or -1 (printed). */
SWORN_TEST_MUST_CHECK
int sworn_rawup_start(struct sworn_rawup *r, enum sworn_rawup_mode mode);

/* Stop the thread and close every connection (plainly) and the listener. Safe on a zeroed,
 * failed or stopped one. */
void sworn_rawup_stop(struct sworn_rawup *r);

/* The counters, read under the lock. */
size_t sworn_rawup_accepted(struct sworn_rawup *r);
size_t sworn_rawup_bytes(struct sworn_rawup *r);
size_t sworn_rawup_heads(struct sworn_rawup *r);

/* Wait until at least n connections were accepted / n bytes received / n request heads seen.
 * Returns 0, or -1 after timeout_ms. */
SWORN_TEST_MUST_CHECK
int sworn_rawup_wait_accepted(struct sworn_rawup *r, size_t n, int timeout_ms);
SWORN_TEST_MUST_CHECK
int sworn_rawup_wait_bytes(struct sworn_rawup *r, size_t n, int timeout_ms);
SWORN_TEST_MUST_CHECK
int sworn_rawup_wait_heads(struct sworn_rawup *r, size_t n, int timeout_ms);

#endif
