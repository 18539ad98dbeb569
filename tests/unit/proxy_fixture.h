/*
 * proxy_fixture.h -- a real sworn-proxy for a test, in a fresh temporary folder of its own, on the
 * decision socket of a stack the test started (stack_fixture.h, usually with --no-proxy), with a
 * configuration the test shapes: the fault tests restart it, the corpus tests set its limits.
 * (scripts/dev-stack starts one too, with its own generated configuration; tests that need only
 * that use sworn_stack_up with --proxy.)
 *
 * The configuration written (docs/proxy.md):
 *   listen:    with opts->hostlink first a hostlink DIR/hostlink.sock (principal agent-1, uids:
 *              the test's uid: the test is the relay and sends the hello itself);
 *              tcp 127.0.0.1:0 (principal agent-1, port file DIR/port);
 *              unix DIR/agent.sock (principal agent-unix);
 *              with opts->tls_listener also tcp 127.0.0.1:0 with tls: true (principal agent-1,
 *              port file DIR/tls-port): an HTTPS proxy, its leaf minted by the proxy's CA
 *   decisiond: socket (the stack's), then opts->decisiond's lines
 *   ca:        DIR/ca (sworn-proxy ca init)
 *   upstream:  ca_file opts->upstream_ca (when given), allow_private 127.0.0.0/8, then
 *              opts->upstream's lines
 *   log:       DIR/proxy.log;  metrics: DIR/metrics.sock
 *   then opts->extra verbatim (other top-level sections: connect, limits, timeouts, delegation)
 *
 * The proxy's standard error goes to DIR/proxy.err; sworn_pfx_stop fails when it holds a
 * sanitizer report. Test code only: failures print why and return -1.
 */
#ifndef SWORN_PROXY_FIXTURE_H
#define SWORN_PROXY_FIXTURE_H

#include <stdint.h>
#include <sys/types.h>

#include "testutil.h"

struct sworn_stack;

struct sworn_pfx_opts {
    const char *upstream_ca; /* PEM file the proxy trusts for upstream TLS; NULL: the default */
    const char *decisiond;   /* lines (indented two spaces) added under decisiond:, or NULL */
    const char *upstream;    /* lines added under upstream:, or NULL */
    const char *extra;       /* top-level YAML appended, or NULL */
    int tls_listener;        /* also an HTTPS proxy listener (tls_port, tls_url) */
    int hostlink;            /* also a hostlink listener (hostlink_socket) */
};

struct sworn_pfx {
    char *dir;
    char config[1024], log[1024], err[1024], port_file[1024], ca_cert[1024];
    char unix_socket[108], metrics_socket[108];
    char hostlink_socket[108]; /* with opts->hostlink, else "" */
    uint16_t port;             /* the tcp listener's */
    char url[64];              /* http://127.0.0.1:PORT */
    char hostport[32];         /* 127.0.0.1:PORT */
    char tls_port_file[1024];
    uint16_t tls_port; /* the HTTPS listener's, with opts->tls_listener */
    char tls_url[64];  /* https://127.0.0.1:TLS_PORT */
    pid_t pid;
};

/* Make the folder, the CA and the configuration, and start the proxy; waits until its port file
 * is there (60 s at most). Returns 0, or -1 (the proxy's error output is printed). */
SWORN_TEST_MUST_CHECK
int sworn_pfx_start(struct sworn_pfx *p, const char *decision_socket,
                    const struct sworn_pfx_opts *opts);

/* Start the proxy again on the same folder and configuration (after sworn_pfx_kill or a stop);
 * a new port. Returns 0 or -1. */
SWORN_TEST_MUST_CHECK
int sworn_pfx_restart(struct sworn_pfx *p);

/* SIGKILL the proxy and reap it. */
void sworn_pfx_kill(struct sworn_pfx *p);

/* SIGTERM it, wait, remove the folder (kept with SWORN_KEEP_STACK). Returns 0, or -1 when it did
 * not exit 0 or its error output holds a sanitizer report (printed). Safe on a failed start. */
SWORN_TEST_MUST_CHECK
int sworn_pfx_stop(struct sworn_pfx *p);

/* A proxy test's teardown: sworn_pfx_stop(p), then sworn_stack_down(s) (stack_fixture.h) when
 * the stack came up (s->dir not NULL). Both are always tried, in that order (the proxy is the
 * stack's peer). Returns 0, or -1 when either failed (they print why). */
SWORN_TEST_MUST_CHECK
int sworn_pfx_stop_with_stack(struct sworn_pfx *p, struct sworn_stack *s);

/* Whether the proxy is still running (not exited). When it has ended, how (a signal or its exit
 * status) and its error output are printed. */
int sworn_pfx_alive(struct sworn_pfx *p);

/* Wait until a line of the proxy's log contains needle; 0, or -1 after timeout_ms. */
SWORN_TEST_MUST_CHECK
int sworn_pfx_wait_log(struct sworn_pfx *p, const char *needle, int timeout_ms);

/* How many lines of the proxy's log contain needle. */
size_t sworn_pfx_log_count(struct sworn_pfx *p, const char *needle);

/*
 * Send raw bytes to the tcp listener on a new connection, shut down the writing side unless
 * keep_open, and read everything the proxy sends until it closes (or timeout_ms passes: then the
 * answer so far). out: cap bytes, NUL-terminated. Returns the bytes read, or -1 (no connection).
 */
long sworn_pfx_raw(struct sworn_pfx *p, const void *bytes, size_t len, int keep_open,
                   int timeout_ms, char *out, size_t cap);

/*
 * curl through the proxy's tcp listener: sworn_upstream_curl (upstream_fixture.h) with
 * "-x p->url" and then the arguments given, each a const char *, ended by NULL (at most 44; any
 * more are dropped). out, cap, *code and the return value are sworn_upstream_curl's.
 */
int sworn_pfx_curl(struct sworn_pfx *p, char *out, size_t cap, int *code, ...);

/* A new tcp connection to 127.0.0.1:port (a proxy listener's, usually p->port), for a test that
 * writes raw bytes itself. Returns the descriptor (close it), or -1 (why is printed). */
int sworn_pfx_dial(uint16_t port);

/*
 * Read from fd into buf (cap bytes, kept NUL-terminated), appending at *have (updated), until buf
 * holds needle, the peer closes (or errs, or buf is full), or about timeout_ms pass (polled every
 * 50 ms). needle NULL: read until the peer closes or the time is up. Returns 1 when needle came,
 * 0 otherwise (buf holds what came).
 */
int sworn_pfx_read_until(int fd, char *buf, size_t cap, size_t *have, const char *needle,
                         int timeout_ms);

#endif
