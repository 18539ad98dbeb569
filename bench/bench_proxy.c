/*
 * bench_proxy.c -- sworn-proxy against the forward proxies an operator would otherwise run: the
 * requests/s and p50/p99 latency of 16 keep-alive connections fetching a small static file from
 * nginx, directly, through squid (plain forwarding, no cache), through tinyproxy and through
 * sworn-proxy (decisiond deciding, recording durably and signing every request), with the ratios
 * to squid; the same over HTTPS through CONNECT (sworn-proxy terminates TLS, squid and tinyproxy
 * only tunnel it); and the CPU time per request of each proxy and of decisiond.
 *
 * Usage: bench_proxy DIR [--seconds S] [--tls-host NAME] [--no-decisiond]
 *                    [--receipts per-request|batch] [--build DIR] [--source DIR]
 *   DIR              an existing, empty folder (absolute); scripts/bench makes it and removes it
 *   --seconds S      measured time per case (default 10, or $SWORN_BENCH_SECONDS); each case
 *                    also runs WARMUP_SECONDS untimed first
 *   --tls-host NAME  the name the HTTPS cases CONNECT to and verify (default localhost; nginx's
 *                    certificate names localhost, 127.0.0.1 and upstream.test)
 *   --no-decisiond   when the target is missed, do not run bench_decisiond (built beside this
 *                    program, on a stack of its own, after this one's is down) for decisiond's
 *                    decisions/s alone
 *   --receipts MODE  decisiond's `receipts:` (dev-stack up --receipts MODE, and bench_decisiond's
 *                    run in the same mode): per-request (the default: one signature per allow)
 *                    or batch (one per commit group, docs/formats.md section 14)
 *   --build DIR      the build holding decisiond/sworn-decisiond, proxy/sworn-proxy and
 *                    hsm/sworn-hsm (default: the one this bench was built in)
 *   --source DIR     the source folder holding scripts/dev-stack (default: this bench's source)
 *
 * Setup, in DIR: a P-256 CA and a server certificate made with the openssl CLI; nginx
 * (/usr/sbin/nginx) on free loopback ports, HTTP and HTTPS, serving small.txt ("small\n", 6
 * bytes); squid (/usr/sbin/squid -N, no cache, its own minimal configuration); tinyproxy
 * (/usr/bin/tinyproxy -d); and a dev stack (scripts/dev-stack up, --no-tpm: the decision path is
 * the one of the TPM stack) with sworn-proxy, whose policy allows GET of /small.txt on nginx's
 * two ports and the MCP tools echo and pay (a sum budget on /amount) and nothing else, with the
 * bench CA as the proxy's upstream CA. Every child dies with the bench (PR_SET_PDEATHSIG) and is
 * stopped at exit; the stack with dev-stack down.
 *
 * Cases:
 *   HTTP    wrk -t2 -c16 --latency (Debian's wrk 4). Through a proxy, a Lua script makes wrk
 *           send absolute-form requests (http://127.0.0.1:PORT/small.txt) to the proxy, with
 *           Host set to nginx's authority (sworn-proxy refuses a Host that differs from the
 *           absolute-form host). requests/s, p50 and p99 are wrk's.
 *   HTTPS   wrk cannot CONNECT, so this program's own client: CLIENTS threads, one connection
 *           each: CONNECT once (through a proxy), TLS (verifying the bench CA, or PROXY_CA for
 *           sworn-proxy, which terminates TLS with a leaf it mints), then keep-alive GETs until
 *           the end. Compared with the same client going directly to nginx's HTTPS port.
 *   CPU     utime + stime (/proc/PID/stat) of each proxy and of decisiond, each with all its
 *           descendants (/proc/PID/task/TID/children: decisiond's engine and signer), before and
 *           after each measured window, per request.
 *   log     sworn-proxy's own request lines (PROXY_LOG) written in each window: the p50 and p99
 *           of ms_decide (its wait for decisiond) and of ms_total.
 *   MCP     (issue 16) the same wrk load through sworn-proxy, POSTing one JSON-RPC tools/call
 *           each to nginx's /mcp, which the proxy's configuration names as an MCP server (`mcp:`,
 *           added to the stack's proxy.yaml and the proxy restarted before any case, so the plain
 *           cases run on the same proxy): the echo call's body POSTed to /post, which is not an
 *           MCP server (decided as http.request: what a body costs without MCP), tools/call echo,
 *           and tools/call pay, whose amount a sum budget adds up. Decisions/s (one per request),
 * p50, p99 and CPU per request, each as a ratio to the plain HTTP GET through sworn-proxy of the
 * same run. nginx answers a fixed JSON-RPC result (the server's cost is nginx's, as for the file);
 * a probe before and after each load must get that result (a deny would be a JSON-RPC error, which
 * wrk counts as a 200). Every case is probed first with one request that must answer 200 with the
 * file's bytes; a probe that fails is a setup failure. Target (issue text): sworn-proxy with the
 * full record at least 1.0x squid's plain-forwarding requests/s, with a p50 no worse than squid's.
 *
 * When dev-stack cannot start the proxy (the proxy is not built yet, or dev-stack does not know
 * the proxy options yet) or writes no PROXY_URL, the sworn-proxy rows say "not available yet".
 *
 * Exit status: 0, or 1 when a tool or the setup fails (a probe included). A missed target is
 * information, not a failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "benchutil.h"

#define SQUID_BIN "/usr/sbin/squid"
#define TINYPROXY_BIN "/usr/bin/tinyproxy"
#define WRK_BIN "/usr/bin/wrk"
#define OPENSSL_BIN "openssl"

#define SMALL_BODY BENCH_SMALL_BODY /* /small.txt */
#define CLIENTS 16                  /* keep-alive connections of every case (wrk -c, TLS threads) */
#define WRK_THREADS "2"             /* wrk -t: one per core of the 2-core machine it was set for */
#define WARMUP_SECONDS 1            /* untimed load before every measured window */
#define DEFAULT_SECONDS 10.0        /* measured time per case (the issue's) */
#define START_ATTEMPTS 5            /* fresh ports to try when another process takes ours */
#define IO_TIMEOUT_S 10             /* socket timeouts of the TLS client and the probes */
#define RESP_MAX 16384              /* a response head and body the client reads */
#define ENV_VALUE_MAX 1024          /* a value in stack.env */
#define TARGET_RATE_RATIO 1.0       /* sworn-proxy's requests/s over squid's, at least */
#define CERT_DAYS "7"
/* The MCP cases: what nginx answers at /mcp, and the tools/call bodies wrk posts. */
#define MCP_RESULT "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}"
#define MCP_ECHO                                                                                   \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","       \
    "\"arguments\":{\"text\":\"hello\"}}}"
#define MCP_PAY                                                                                    \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"pay\","        \
    "\"arguments\":{\"to\":\"bob\",\"amount\":1.25}}}"

static const char *source_dir = SWORN_BENCH_SOURCE_DIR, *build_dir = SWORN_BENCH_BUILD_DIR;
static const char *receipts = "per-request"; /* --receipts: decisiond's receipts: */

/* ---------------------------------------------------------------------------------------------
 * The certificates and nginx.
 */

struct upstream {
    struct bench_nginx ng; /* its folder, ports and pid */
    char ca_cert[BENCH_PATH_MAX], ca_key[BENCH_PATH_MAX], cert[BENCH_PATH_MAX], key[BENCH_PATH_MAX];
};

static void make_certs(struct upstream *u)
{
    char cnf[BENCH_PATH_MAX], csr[BENCH_PATH_MAX], srl[BENCH_PATH_MAX];
    char *ca[] = {OPENSSL_BIN,
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
                  "/CN=sworn bench upstream CA",
                  NULL};
    char *req[] = {OPENSSL_BIN,
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
                   "/CN=localhost",
                   NULL};
    char *sign[] = {OPENSSL_BIN, "x509",        "-req",    "-in",     csr,
                    "-CA",       u->ca_cert,    "-CAkey",  u->ca_key, "-CAcreateserial",
                    "-CAserial", srl,           "-days",   CERT_DAYS, "-extfile",
                    cnf,         "-extensions", "v3_leaf", "-out",    u->cert,
                    NULL};

    bench_join_path(cnf, u->ng.dir, "openssl.cnf");
    bench_join_path(csr, u->ng.dir, "server.csr");
    bench_join_path(srl, u->ng.dir, "ca.srl");
    bench_put_text(cnf,
                   "[req]\n"
                   "distinguished_name = dn\n"
                   "prompt = no\n"
                   "[dn]\n"
                   "CN = localhost\n"
                   "[v3_ca]\n"
                   "basicConstraints = critical,CA:TRUE\n"
                   "keyUsage = critical,keyCertSign,cRLSign\n"
                   "subjectKeyIdentifier = hash\n"
                   "[v3_leaf]\n"
                   "basicConstraints = critical,CA:FALSE\n"
                   "keyUsage = critical,digitalSignature\n"
                   "extendedKeyUsage = serverAuth\n"
                   "subjectAltName = DNS:localhost,DNS:upstream.test,IP:127.0.0.1\n"
                   "subjectKeyIdentifier = hash\n"
                   "authorityKeyIdentifier = keyid\n",
                   0600);
    bench_run(u->ng.dir, ca, NULL);
    bench_run(u->ng.dir, req, NULL);
    bench_run(u->ng.dir, sign, NULL);
}

/* 1 when [::1] can be bound here (IPv6 loopback is up). */
static int have_ipv6_loopback(void)
{
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

    if (fd < 0)
        return 0;
    ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* nginx's http block: keep-alive for the whole run, and its server on both ports (and on ::1
 * where the host has it). One worker (master_process off), no access log: nginx's own cost is the
 * same in every case, and the direct case shows it. */
static int nginx_http(char *text, size_t cap, const struct bench_nginx *n, const void *arg)
{
    const struct upstream *u = arg;
    char v6[128] = "";

    /* A proxy that resolves the --tls-host name (localhost) may get ::1 first. */
    if (have_ipv6_loopback())
        snprintf(v6, sizeof(v6), "    listen [::1]:%u;\n    listen [::1]:%u ssl;\n", n->http_port,
                 n->https_port);
    return snprintf(text, cap,
                    "  default_type application/octet-stream;\n"
                    "  keepalive_requests 100000000;\n"
                    "  keepalive_timeout 300s;\n"
                    "  server {\n"
                    "    listen 127.0.0.1:%u;\n"
                    "    listen 127.0.0.1:%u ssl;\n"
                    "%s"
                    "    server_name localhost upstream.test;\n"
                    "    ssl_certificate %s;\n"
                    "    ssl_certificate_key %s;\n"
                    "    root %s;\n"
                    "    location = /mcp {\n" /* the MCP cases' server: one fixed JSON-RPC result */
                    "      default_type application/json;\n"
                    "      return 200 '" MCP_RESULT "';\n"
                    "    }\n"
                    "    location = /post {\n" /* the same, for the same body as a plain POST */
                    "      default_type application/json;\n"
                    "      return 200 '" MCP_RESULT "';\n"
                    "    }\n"
                    "  }\n",
                    n->http_port, n->https_port, v6, u->cert, u->key, n->www);
}

static void start_nginx(struct upstream *u, const char *dir)
{
    memset(u, 0, sizeof(*u));
    bench_nginx_prepare(&u->ng, dir);
    bench_join_path(u->ca_cert, u->ng.dir, "ca.pem");
    bench_join_path(u->ca_key, u->ng.dir, "ca.key");
    bench_join_path(u->cert, u->ng.dir, "server.pem");
    bench_join_path(u->key, u->ng.dir, "server.key");
    make_certs(u);
    bench_nginx_start(&u->ng, 1, 1024, nginx_http, u);
}

/* ---------------------------------------------------------------------------------------------
 * squid and tinyproxy.
 */

struct fwd {
    const char *name;
    unsigned port;
    pid_t pid;
};

/* squid drops to its effective user (Debian: proxy) when started as root: its folder must be
 * that user's then. */
static void give_to_proxy_user(const char *path)
{
    const struct passwd *pw;

    if (geteuid() != 0)
        return;
    pw = getpwnam("proxy");
    if (pw == NULL)
        bench_die_msg("squid runs as the user proxy when started as root, and there is none");
    if (chown(path, pw->pw_uid, pw->pw_gid) != 0)
        bench_die_sys(path);
}

/* A forwarder's files, in DIR/<name>: its configuration, its stdout+stderr and its own log. */
struct fwd_files {
    char dir[BENCH_PATH_MAX], conf[BENCH_PATH_MAX], out[BENCH_PATH_MAX], log[BENCH_PATH_MAX];
};

/* Write the forwarder's configuration (files->conf) for listening on 127.0.0.1:port. */
typedef void fwd_configure(const struct fwd_files *files, unsigned port);

static void fwd_files_make(struct fwd_files *files, const char *dir, const char *name,
                           const char *log_name)
{
    char conf_name[64], out_name[64];

    snprintf(conf_name, sizeof(conf_name), "%s.conf", name);
    snprintf(out_name, sizeof(out_name), "%s.out", name);
    bench_join_path(files->dir, dir, name);
    bench_make_dir(files->dir, 0755);
    bench_join_path(files->conf, files->dir, conf_name);
    bench_join_path(files->out, files->dir, out_name);
    bench_join_path(files->log, files->dir, log_name);
}

/*
 * Start "bin fg_flag conf_flag CONF" (fg_flag: stay in the foreground) on a free port, written
 * into its configuration by configure; a new port each time it exits saying the port was taken,
 * START_ATTEMPTS times at most. OUT: f (name, port, pid). Dies when it fails otherwise.
 */
static void start_fwd(struct fwd *f, const char *name, const struct fwd_files *files,
                      const char *bin, const char *fg_flag, const char *conf_flag,
                      fwd_configure *configure)
{
    char *argv[] = {(char *)bin, (char *)fg_flag, (char *)conf_flag, (char *)files->conf, NULL};
    const char *logs[] = {files->log, files->out};
    char why[128];

    f->name = name;
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        f->port = bench_free_port();
        configure(files, f->port);
        f->pid = bench_server_start(argv, name, files->out, &f->port, 1, logs, 2);
        if (f->pid > 0)
            return;
    }
    snprintf(why, sizeof(why), "%s found its port taken every time", name);
    bench_die_msg(why);
}

/* Write conf (a forwarder's configuration file, an absolute path) from text (n: snprintf's
 * return into cap bytes), or die saying it does not fit. */
static void put_conf(const char *conf, const char *text, int n, size_t cap)
{
    if (n < 0 || (size_t)n >= cap) {
        char why[BENCH_PATH_MAX + 32];

        snprintf(why, sizeof(why), "%s does not fit", strrchr(conf, '/') + 1);
        bench_die_msg(why);
    }
    bench_put_text(conf, text, 0644);
}

static void squid_configure(const struct fwd_files *files, unsigned port)
{
    char text[4096];
    /* Plain forwarding: nothing cached, every request goes to nginx; one access log line per
     * request as an installed squid writes it (sworn-proxy records every request too). */
    int n = snprintf(text, sizeof(text),
                     "http_port 127.0.0.1:%u\n"
                     "visible_hostname sworn-bench\n"
                     "acl bench_client src 127.0.0.1\n"
                     "http_access allow bench_client\n"
                     "http_access deny all\n"
                     "cache deny all\n"
                     "cache_mem 0 MB\n"
                     "%s"
                     "pid_filename %s/squid.pid\n"
                     "cache_log %s\n"
                     "access_log stdio:%s/access.log\n"
                     "netdb_filename none\n"
                     "pinger_enable off\n"
                     "coredump_dir %s\n"
                     "shutdown_lifetime 0 seconds\n"
                     "logfile_rotate 0\n",
                     port, geteuid() == 0 ? "cache_effective_user proxy\n" : "", files->dir,
                     files->log, files->dir, files->dir);

    put_conf(files->conf, text, n, sizeof(text));
    /* A fresh cache.log: start_server reads it for "in use" (the port taken this time). */
    if (truncate(files->log, 0) != 0 && errno != ENOENT)
        bench_die_sys(files->log);
}

static void start_squid(struct fwd *f, const char *dir)
{
    struct fwd_files files;

    fwd_files_make(&files, dir, "squid", "cache.log");
    give_to_proxy_user(files.dir);
    start_fwd(f, "squid", &files, SQUID_BIN, "-N", "-f", squid_configure);
}

static void tinyproxy_configure(const struct fwd_files *files, unsigned port)
{
    char text[4096];
    /* LogLevel Warning: no line per request. At Debian's default, Info (several lines per
     * request), it answered about 900 requests/s here, at Connect about 1,800, at Warning about
     * 6,000: its logging, not its forwarding, would be measured. No ConnectPort: CONNECT to any
     * port. MaxClients above CLIENTS. */
    int n = snprintf(text, sizeof(text),
                     "Port %u\n"
                     "Listen 127.0.0.1\n"
                     "Timeout 600\n"
                     "MaxClients 100\n"
                     "Allow 127.0.0.1\n"
                     "LogFile \"%s\"\n"
                     "LogLevel Warning\n"
                     "PidFile \"%s/tinyproxy.pid\"\n"
                     "ViaProxyName \"sworn-bench\"\n",
                     port, files->log, files->dir);

    put_conf(files->conf, text, n, sizeof(text));
}

static void start_tinyproxy(struct fwd *f, const char *dir)
{
    struct fwd_files files;

    fwd_files_make(&files, dir, "tinyproxy", "tinyproxy.log");
    start_fwd(f, "tinyproxy", &files, TINYPROXY_BIN, "-d", "-c", tinyproxy_configure);
}

/* ---------------------------------------------------------------------------------------------
 * The dev stack with sworn-proxy.
 */

struct stack {
    int up;                         /* 1: the proxy serves at port */
    char why[BENCH_PATH_MAX + 512]; /* when not up: what failed */
    char dir[BENCH_PATH_MAX];       /* the stack's folder */
    char proxy_ca[BENCH_PATH_MAX];  /* PROXY_CA */
    char proxy_log[BENCH_PATH_MAX]; /* PROXY_LOG: its JSON lines; "" when not given */
    unsigned port;                  /* from PROXY_URL */
    pid_t proxy_pid, decisiond_pid;
};

/* nginx's /mcp as the proxy's MCP server (`mcp:`), and the proxy restarted on that
 * configuration: the plain cases run on the same proxy as the MCP cases. */
static void mcp_server(struct stack *s, const struct upstream *u, char *env, size_t cap)
{
    char conf[ENV_VALUE_MAX], out[BENCH_PATH_MAX], script[BENCH_PATH_MAX];
    char *argv[] = {script, "start-proxy", s->dir, NULL};
    FILE *f;

    bench_stack_env(s->dir, env, cap);
    bench_env_value(env, "PROXY_CONFIG", conf, sizeof(conf));
    if (conf[0] == '\0')
        return; /* no proxy: its rows say so */
    f = fopen(conf, "a");
    if (f == NULL || fprintf(f, "mcp:\n  - http://127.0.0.1:%u/mcp\n", u->ng.http_port) < 0 ||
        fclose(f) != 0)
        bench_die_sys(conf);
    snprintf(script, sizeof(script), "%s/scripts/dev-stack", source_dir);
    bench_join_path(out, s->dir, "start-proxy.out");
    bench_run(s->dir, argv, out);
}

static void stack_up(struct stack *s, const char *dir, const struct upstream *u,
                     const char *tls_host)
{
    char policy[BENCH_PATH_MAX], out[BENCH_PATH_MAX], log[BENCH_PATH_MAX], value[ENV_VALUE_MAX],
        text[4096], reason[256], env[16384];
    char *opts[] = {"--no-tpm",         "--policy",   policy,           "--upstream-ca",
                    (char *)u->ca_cert, "--receipts", (char *)receipts, NULL};
    int status, n;

    memset(s, 0, sizeof(*s));
    bench_stack_files(dir, s->dir, policy, out, log);
    /* GET of the small file on nginx's two ports, nothing else: every request the bench sends
     * is decided, recorded and signed as an allow. */
    n = snprintf(text, sizeof(text),
                 "# bench_proxy: GET /small.txt on the bench's nginx, over http and https.\n"
                 "version: 1\n"
                 "rules:\n"
                 "  - id: bench-small-http\n"
                 "    effect: allow\n"
                 "    reason: \"bench: the small file over http\"\n"
                 "    operations: [\"http.request\"]\n"
                 "    resource:\n"
                 "      schemes: [http]\n"
                 "      hosts: [\"127.0.0.1\"]\n"
                 "      ports: [%u]\n"
                 "      paths: [\"/small.txt\"]\n"
                 "    methods: [GET]\n"
                 "  - id: bench-small-https\n"
                 "    effect: allow\n"
                 "    reason: \"bench: the small file over https (CONNECT, TLS terminated)\"\n"
                 "    operations: [\"http.request\"]\n"
                 "    resource:\n"
                 "      schemes: [https]\n"
                 "      hosts: [\"%s\"]\n"
                 "      ports: [%u]\n"
                 "      paths: [\"/small.txt\"]\n"
                 "    methods: [GET]\n"
                 "  - id: bench-post\n"
                 "    effect: allow\n"
                 "    reason: \"bench: a plain POST of the MCP body, not to an MCP server\"\n"
                 "    operations: [\"http.request\"]\n"
                 "    resource: {schemes: [http], hosts: [\"127.0.0.1\"], paths: [\"/post\"]}\n"
                 "    methods: [POST]\n"
                 "  - id: bench-mcp-echo\n"
                 "    effect: allow\n"
                 "    reason: \"bench: the MCP tool echo\"\n"
                 "    operations: [\"mcp.tools/call\"]\n"
                 "    resource: {tools: [echo]}\n"
                 "  - id: bench-mcp-pay\n"
                 "    effect: allow\n"
                 "    reason: \"bench: the MCP tool pay, its amount summed\"\n"
                 "    operations: [\"mcp.tools/call\"]\n"
                 "    resource: {tools: [pay]}\n"
                 "    sum: {pointer: /amount, max: \"18446744073709.551615\", window: 366d}\n",
                 u->ng.http_port, tls_host, u->ng.https_port);
    if (n < 0 || (size_t)n >= sizeof(text))
        bench_die_msg("the policy does not fit");
    bench_put_text(policy, text, 0600);

    status = bench_stack_up(s->dir, source_dir, build_dir, opts, log, out);
    if (status != 0) {
        /* Exit 2 is dev-stack's usage: it does not take the proxy options (yet). */
        if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
            snprintf(reason, sizeof(reason), "it takes no proxy options yet");
        else
            bench_last_line(log, "dev-stack:", reason, sizeof(reason));
        snprintf(s->why, sizeof(s->why), "scripts/dev-stack up failed (exit %d%s%s; %s)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, reason[0] ? ": " : "", reason, log);
        bench_stack_down();
        return;
    }
    mcp_server(s, u, env, sizeof(env));
    bench_stack_env(s->dir, env, sizeof(env));
    s->decisiond_pid = bench_stack_daemon(env, "DECISIOND_PID");
    s->proxy_pid = bench_stack_daemon(env, "PROXY_PID");
    bench_env_value(env, "PROXY_CA", s->proxy_ca, sizeof(s->proxy_ca));
    bench_env_value(env, "PROXY_LOG", s->proxy_log, sizeof(s->proxy_log));
    bench_env_value(env, "PROXY_URL", value, sizeof(value));
    if (value[0] == '\0') {
        snprintf(s->why, sizeof(s->why), "scripts/dev-stack wrote no PROXY_URL");
        bench_stack_down();
        return;
    }
    if (sscanf(value, "http://127.0.0.1:%u", &s->port) != 1 || s->port == 0 || s->port > 65535 ||
        s->proxy_pid <= 0 || s->decisiond_pid <= 0 || s->proxy_ca[0] == '\0')
        bench_die_msg("stack.env: PROXY_URL is not http://127.0.0.1:PORT, or a pid or PROXY_CA "
                      "is missing");
    s->up = 1;
}

/* ---------------------------------------------------------------------------------------------
 * CPU time of a process and its descendants.
 */

/* utime + stime of one process in seconds; 0 when it is gone. */
static double proc_cpu(pid_t pid)
{
    double t = bench_proc_cpu(pid, NULL);

    return t < 0 ? 0 : t;
}

/* The process and every descendant (each thread's children file), depth bounded. */
static double tree_cpu(pid_t pid, int depth)
{
    char path[96];
    double t = proc_cpu(pid);
    DIR *d;
    struct dirent *e;

    if (depth > 8)
        return t;
    snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
    d = opendir(path);
    if (d == NULL)
        return t;
    while ((e = readdir(d)) != NULL) {
        char cpath[320];
        FILE *f;
        long kid;

        if (e->d_name[0] == '.')
            continue;
        snprintf(cpath, sizeof(cpath), "/proc/%ld/task/%s/children", (long)pid, e->d_name);
        f = fopen(cpath, "r");
        if (f == NULL)
            continue;
        while (fscanf(f, "%ld", &kid) == 1)
            t += tree_cpu((pid_t)kid, depth + 1);
        fclose(f);
    }
    closedir(d);
    return t;
}

/* ---------------------------------------------------------------------------------------------
 * One case's figures.
 */

struct result {
    int done;          /* measured */
    double rate;       /* requests/s */
    double p50, p99;   /* ms */
    uint64_t requests; /* in the measured window */
    uint64_t errors;   /* wrk: non-2xx answers, connect, write and timeout errors; the client:
                          failed connections and requests */
    uint64_t closes;   /* wrk's read errors: the server closed a kept-alive connection */
    double cpu_us[2];  /* per request: [0] the proxy (with descendants), [1] decisiond (same) */
    double nginx_us;   /* nginx, per request */
    /* sworn-proxy's own request lines (PROXY_LOG) written in the window: how many, and the p50
     * and p99 of ms_decide (waiting for decisiond) and of ms_total, in ms */
    size_t jlines;
    double decide_p50, decide_p99, total_p50, total_p99;
};

struct target {
    const char *label;
    unsigned proxy_port; /* 0: direct to nginx */
    pid_t cpu_pid[2];    /* processes whose CPU is counted (0: none) */
    int sworn;           /* sworn-proxy: terminates TLS, checks Host */
    const char *jlog;    /* sworn-proxy's log file (one JSON line per request), or NULL */
};

/* ---------------------------------------------------------------------------------------------
 * wrk.
 */

/* "12.34us", "1.20ms", "2.00s" to ms; -1 when it is not one. */
static double wrk_ms(const char *s)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s)
        return -1;
    if (strncmp(end, "us", 2) == 0)
        return v / 1000;
    if (strncmp(end, "ms", 2) == 0)
        return v;
    if (strncmp(end, "s", 1) == 0)
        return v * 1000;
    if (strncmp(end, "m", 1) == 0)
        return v * 60000;
    return -1;
}

/* wrk's output: Requests/sec, "N requests in", the 50% and 99% lines, errors. */
static void wrk_parse(const char *text, struct result *r)
{
    const char *p;
    unsigned long long v;
    int have = 0;

    if ((p = strstr(text, "Requests/sec:")) != NULL &&
        sscanf(p, "Requests/sec: %lf", &r->rate) == 1)
        have |= 1;
    for (p = text; (p = strstr(p, " requests in ")) != NULL; p++) {
        const char *b = p;

        while (b > text && isdigit((unsigned char)b[-1]))
            b--;
        if (b < p && sscanf(b, "%llu", &v) == 1) {
            r->requests = v;
            have |= 2;
            break;
        }
    }
    if ((p = strstr(text, "Latency Distribution")) != NULL) {
        const char *q50 = strstr(p, " 50% "), *q99 = strstr(p, " 99% ");

        if (q50 != NULL && (r->p50 = wrk_ms(q50 + 5 + strspn(q50 + 5, " "))) >= 0)
            have |= 4;
        if (q99 != NULL && (r->p99 = wrk_ms(q99 + 5 + strspn(q99 + 5, " "))) >= 0)
            have |= 8;
    }
    if ((p = strstr(text, "Non-2xx or 3xx responses:")) != NULL &&
        sscanf(p, "Non-2xx or 3xx responses: %llu", &v) == 1)
        r->errors += v;
    if ((p = strstr(text, "Socket errors:")) != NULL) {
        unsigned long long c, rd, w, t;

        if (sscanf(p, "Socket errors: connect %llu, read %llu, write %llu, timeout %llu", &c, &rd,
                   &w, &t) == 4) {
            r->errors += c + w + t;
            r->closes = rd;
        }
    }
    if (have != 15) {
        fprintf(stderr, "---- wrk's output ----\n%s---- end ----\n", text);
        bench_die_msg("cannot read wrk's output");
    }
}

/* Run wrk for seconds (a whole number, at least 1) against the target; OUT: its output. */
static void wrk_run(const char *dir, const struct target *t, const struct upstream *u,
                    unsigned seconds, char *text, size_t cap)
{
    char script[BENCH_PATH_MAX], out[BENCH_PATH_MAX], url[128], dur[32], lua[512];
    char *argv[] = {WRK_BIN, "-t" WRK_THREADS, "-c", "16", "-d", dur, "--latency",
                    "-s",    script,           url,  NULL};
    size_t len;

    snprintf(dur, sizeof(dur), "%us", seconds);
    bench_join_path(script, dir, "wrk.lua");
    bench_join_path(out, dir, "wrk.out");
    if (t->proxy_port == 0) {
        snprintf(url, sizeof(url), "http://127.0.0.1:%u/small.txt", u->ng.http_port);
        bench_put_text(script, "-- direct: wrk's own request\n", 0600);
    } else {
        /* A forward proxy takes absolute-form requests; wrk connects to the proxy and sends
         * this path, with Host naming nginx (not the proxy, whose address is in the URL). */
        snprintf(url, sizeof(url), "http://127.0.0.1:%u", t->proxy_port);
        snprintf(lua, sizeof(lua),
                 "wrk.path = \"http://127.0.0.1:%u/small.txt\"\n"
                 "wrk.headers[\"Host\"] = \"127.0.0.1:%u\"\n",
                 u->ng.http_port, u->ng.http_port);
        bench_put_text(script, lua, 0600);
    }
    bench_run(dir, argv, out);
    bench_read_small(out, (uint8_t *)text, cap, &len);
}

/* ---------------------------------------------------------------------------------------------
 * The HTTP(S) client: probes, and the HTTPS load (wrk cannot CONNECT).
 */

struct conn {
    int fd;
    SSL *ssl; /* NULL: plain */
    char buf[RESP_MAX];
    size_t have; /* bytes in buf not yet consumed */
    int status;  /* of the last answer (CONNECT's too); 0 before one */
};

static int tcp_connect(unsigned port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
        connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int conn_write(struct conn *c, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n;

        if (c->ssl != NULL) {
            size_t w = 0;

            if (SSL_write_ex(c->ssl, p, len, &w) != 1)
                return -1;
            n = (ssize_t)w;
        } else {
            n = send(c->fd, p, len, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int conn_fill(struct conn *c)
{
    size_t room = sizeof(c->buf) - 1 - c->have;

    if (room == 0)
        return -1;
    if (c->ssl != NULL) {
        size_t n = 0;

        if (SSL_read_ex(c->ssl, c->buf + c->have, room, &n) != 1)
            return -1;
        c->have += n;
    } else {
        ssize_t n;

        do
            n = recv(c->fd, c->buf + c->have, room, 0);
        while (n < 0 && errno == EINTR);
        if (n <= 0)
            return -1;
        c->have += (size_t)n;
    }
    c->buf[c->have] = '\0';
    return 0;
}

/* Fill until a CRLF follows pos; OUT: *eol, the offset of that CR. 0, or -1. */
static int line_at(struct conn *c, size_t pos, size_t *eol)
{
    for (;;) {
        const char *p = c->have > pos ? memmem(c->buf + pos, c->have - pos, "\r\n", 2) : NULL;

        if (p != NULL) {
            *eol = (size_t)(p - c->buf);
            return 0;
        }
        if (conn_fill(c) < 0)
            return -1;
    }
}

/* A chunked body from pos (the end of the head), trailers skipped. OUT: *end, the offset after
 * it; the body's bytes appended to body (NUL-terminated, at most cap - 1). 0, or -1. */
static int read_chunked(struct conn *c, size_t pos, char *body, size_t cap, size_t *end)
{
    size_t kept = 0, eol;

    for (;;) {
        char *hex_end;
        unsigned long size;

        if (line_at(c, pos, &eol) < 0)
            return -1;
        size = strtoul(c->buf + pos, &hex_end, 16);
        if (hex_end == c->buf + pos || size > sizeof(c->buf))
            return -1;
        pos = eol + 2;
        if (size == 0)
            break;
        while (c->have < pos + size + 2)
            if (conn_fill(c) < 0)
                return -1;
        if (body != NULL && kept < cap - 1) {
            size_t k = size < cap - 1 - kept ? size : cap - 1 - kept;

            memcpy(body + kept, c->buf + pos, k);
            kept += k;
        }
        pos += size + 2;
    }
    for (;;) { /* trailer fields, then the empty line */
        if (line_at(c, pos, &eol) < 0)
            return -1;
        if (eol == pos)
            break;
        pos = eol + 2;
    }
    if (body != NULL)
        body[kept] = '\0';
    *end = pos + 2;
    return 0;
}

/*
 * Read one response (head, then Content-Length bytes of body, or a chunked body). OUT: *status,
 * the body (NUL-terminated, at most cap - 1 bytes kept) when body != NULL. Leaves bytes after it
 * in the buffer. CONNECT's answer has no body (head_only). Returns 0, or -1 on I/O or framing
 * errors (a body larger than the buffer included).
 */
static int read_response(struct conn *c, int head_only, int *status, char *body, size_t cap)
{
    char *end, *cl;
    size_t head_len, body_len = 0, total;

    for (;;) {
        c->buf[c->have] = '\0';
        end = strstr(c->buf, "\r\n\r\n");
        if (end != NULL)
            break;
        if (conn_fill(c) < 0)
            return -1;
    }
    head_len = (size_t)(end - c->buf) + 4;
    if (sscanf(c->buf, "HTTP/1.%*d %d", status) != 1)
        return -1;
    if (!head_only) {
        *end = '\0';
        cl = strcasestr(c->buf, "\r\ncontent-length:");
        if (cl == NULL) {
            int chunked = strcasestr(c->buf, "\r\ntransfer-encoding: chunked") != NULL;

            *end = '\r';
            if (!chunked || read_chunked(c, head_len, body, cap, &total) < 0)
                return -1;
            memmove(c->buf, c->buf + total, c->have - total);
            c->have -= total;
            return 0;
        }
        body_len = strtoul(cl + 17, NULL, 10);
        *end = '\r';
        if (body_len > sizeof(c->buf) - 1 - head_len)
            return -1;
    }
    total = head_len + body_len;
    while (c->have < total)
        if (conn_fill(c) < 0)
            return -1;
    if (body != NULL) {
        size_t k = body_len < cap - 1 ? body_len : cap - 1;

        memcpy(body, c->buf + head_len, k);
        body[k] = '\0';
    }
    memmove(c->buf, c->buf + total, c->have - total);
    c->have -= total;
    return 0;
}

struct tls_case {
    SSL_CTX *ctx;
    const char *host; /* the name (or address) connected to and verified */
    unsigned nginx_port;
    unsigned proxy_port; /* 0: direct */
    char request[512];
};

/* Connect (and CONNECT, and TLS when ctx is set); 0 or -1 with why. */
static int conn_open(struct conn *c, const struct tls_case *tc, const char **why)
{
    char line[512];
    int status = 0;

    memset(c, 0, sizeof(*c));
    c->fd = tcp_connect(tc->proxy_port ? tc->proxy_port : tc->nginx_port);
    if (c->fd < 0) {
        *why = "cannot connect";
        return -1;
    }
    if (tc->ctx == NULL)
        return 0;
    if (tc->proxy_port != 0) {
        snprintf(line, sizeof(line), "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", tc->host,
                 tc->nginx_port, tc->host, tc->nginx_port);
        if (conn_write(c, line, strlen(line)) < 0 || read_response(c, 1, &status, NULL, 0) < 0) {
            *why = "CONNECT: no answer";
            return -1;
        }
        c->status = status;
        if (status != 200 || c->have != 0) {
            *why = "CONNECT was not answered 200";
            return -1;
        }
    }
    c->ssl = SSL_new(tc->ctx);
    if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1) {
        *why = "SSL_new";
        return -1;
    }
    if (isalpha((unsigned char)tc->host[0])) {
        if (SSL_set_tlsext_host_name(c->ssl, tc->host) != 1 ||
            SSL_set1_host(c->ssl, tc->host) != 1) {
            *why = "SSL_set1_host";
            return -1;
        }
    } else if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), tc->host) != 1) {
        *why = "X509_VERIFY_PARAM_set1_ip_asc";
        return -1;
    }
    if (SSL_connect(c->ssl) != 1) {
        *why = "the TLS handshake failed (certificate or name?)";
        return -1;
    }
    return 0;
}

static void conn_close(struct conn *c)
{
    if (c->ssl != NULL) {
        SSL_shutdown(c->ssl);
        SSL_free(c->ssl);
    }
    if (c->fd >= 0)
        close(c->fd);
    c->ssl = NULL;
    c->fd = -1;
}

/* One GET on an open connection; 0 when it answered 200 with the file. */
static int conn_get(struct conn *c, const struct tls_case *tc, const char **why)
{
    char body[64];
    int status = 0;

    if (conn_write(c, tc->request, strlen(tc->request)) < 0 ||
        read_response(c, 0, &status, body, sizeof(body)) < 0) {
        *why = "the request got no complete answer";
        return -1;
    }
    c->status = status;
    if (status != 200 || strcmp(body, SMALL_BODY) != 0) {
        *why = status != 200 ? "the answer was not 200" : "the answer was not the file";
        return -1;
    }
    return 0;
}

static void tls_case_init(struct tls_case *tc, SSL_CTX *ctx, const char *host, unsigned nginx_port,
                          unsigned proxy_port)
{
    memset(tc, 0, sizeof(*tc));
    tc->ctx = ctx;
    tc->host = host;
    tc->nginx_port = nginx_port;
    tc->proxy_port = proxy_port;
    if (ctx == NULL && proxy_port != 0) /* plain HTTP through a proxy: absolute form */
        snprintf(tc->request, sizeof(tc->request),
                 "GET http://%s:%u/small.txt HTTP/1.1\r\nHost: %s:%u\r\n\r\n", host, nginx_port,
                 host, nginx_port);
    else
        snprintf(tc->request, sizeof(tc->request), "GET /small.txt HTTP/1.1\r\nHost: %s:%u\r\n\r\n",
                 host, nginx_port);
}

/* One request on a new connection; the reason on failure, NULL when it answered the file. */
static const char *probe(const struct tls_case *tc)
{
    struct conn c;
    const char *why = NULL;

    static char text[160]; /* probes run on the main thread only */

    if (conn_open(&c, tc, &why) == 0)
        (void)conn_get(&c, tc, &why);
    conn_close(&c);
    if (why != NULL && c.status != 0 && c.status != 200) {
        snprintf(text, sizeof(text), "%s (status %d)", why, c.status);
        why = text;
    }
    return why;
}

static SSL_CTX *client_ctx(const char *ca_file)
{
    static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

    if (ctx == NULL || SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1 ||
        SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn)) != 0) {
        ERR_print_errors_fp(stderr);
        bench_die_msg("cannot make the TLS client context");
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

/* The HTTPS load: CLIENTS threads, each with one connection kept alive. */

struct load {
    const struct tls_case *tc;
    atomic_int measuring, stop;
};

struct worker {
    pthread_t th;
    struct load *ld;
    uint32_t *lat; /* microseconds, one per request in the window */
    size_t n_lat, cap_lat;
    uint64_t errors;
    const char *why; /* the last failure */
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct conn c;

    while (!atomic_load(&w->ld->stop)) {
        const char *why = NULL;

        if (conn_open(&c, w->ld->tc, &why) < 0) {
            conn_close(&c);
            w->errors++;
            w->why = why;
            bench_sleep_ms(10);
            continue;
        }
        while (!atomic_load(&w->ld->stop)) {
            double t0 = bench_now();

            if (conn_get(&c, w->ld->tc, &why) < 0) {
                w->errors++;
                w->why = why;
                break;
            }
            if (atomic_load(&w->ld->measuring)) {
                if (w->n_lat == w->cap_lat) {
                    size_t cap = w->cap_lat ? 2 * w->cap_lat : 65536;
                    uint32_t *p = realloc(w->lat, cap * sizeof(*p));

                    if (p == NULL)
                        bench_die_msg("out of memory");
                    w->lat = p;
                    w->cap_lat = cap;
                }
                w->lat[w->n_lat++] = (uint32_t)((bench_now() - t0) * 1e6);
            }
        }
        conn_close(&c);
    }
    return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

/* The window's cost: CPU of the target's processes and nginx before and after. */
struct cpu_mark {
    double t[2], nginx;
    off_t jlog_size; /* the proxy's log file's size */
    const char *jlog;
};

static void cpu_mark(const struct target *t, pid_t nginx, struct cpu_mark *m)
{
    struct stat st;

    for (int i = 0; i < 2; i++)
        m->t[i] = t->cpu_pid[i] > 0 ? tree_cpu(t->cpu_pid[i], 0) : 0;
    m->nginx = proc_cpu(nginx);
    m->jlog = t->jlog;
    m->jlog_size = t->jlog != NULL && stat(t->jlog, &st) == 0 ? st.st_size : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* sworn-proxy's request lines between two marks: the time it waited for decisiond and its
 * total, as it logged them ("ms_decide", "ms_total"; docs/proxy.md). A line cut at the end of
 * the window is skipped. */
static void jlog_window(const struct cpu_mark *a, const struct cpu_mark *b, struct result *r)
{
    char line[4096];
    double *dec = NULL, *tot = NULL;
    size_t n = 0, cap = 0;
    FILE *f;
    off_t pos;

    if (a->jlog == NULL || b->jlog_size <= a->jlog_size || (f = fopen(a->jlog, "r")) == NULL)
        return;
    if (fseeko(f, a->jlog_size, SEEK_SET) != 0) {
        fclose(f);
        return;
    }
    for (pos = a->jlog_size; pos < b->jlog_size && fgets(line, sizeof(line), f) != NULL;
         pos += (off_t)strlen(line)) {
        const char *d = strstr(line, "\"ms_decide\":"), *t = strstr(line, "\"ms_total\":");

        if (strchr(line, '\n') == NULL || d == NULL || t == NULL ||
            strstr(line, "\"event\":\"request\"") == NULL)
            continue;
        if (n == cap) {
            size_t c = cap ? 2 * cap : 65536;
            double *nd = realloc(dec, c * sizeof(*nd)), *nt;

            if (nd == NULL)
                bench_die_msg("out of memory");
            dec = nd;
            nt = realloc(tot, c * sizeof(*nt));
            if (nt == NULL)
                bench_die_msg("out of memory");
            tot = nt;
            cap = c;
        }
        dec[n] = strtod(d + 12, NULL);
        tot[n] = strtod(t + 11, NULL);
        n++;
    }
    fclose(f);
    if (n > 0) {
        qsort(dec, n, sizeof(*dec), cmp_double);
        qsort(tot, n, sizeof(*tot), cmp_double);
        r->jlines = n;
        r->decide_p50 = dec[(size_t)(0.50 * (double)(n - 1) + 0.5)];
        r->decide_p99 = dec[(size_t)(0.99 * (double)(n - 1) + 0.5)];
        r->total_p50 = tot[(size_t)(0.50 * (double)(n - 1) + 0.5)];
        r->total_p99 = tot[(size_t)(0.99 * (double)(n - 1) + 0.5)];
    }
    free(dec);
    free(tot);
}

static void cpu_per_request(const struct cpu_mark *a, const struct cpu_mark *b, struct result *r)
{
    double n = r->requests > 0 ? (double)r->requests : 1;

    for (int i = 0; i < 2; i++)
        r->cpu_us[i] = (b->t[i] - a->t[i]) * 1e6 / n;
    r->nginx_us = (b->nginx - a->nginx) * 1e6 / n;
    jlog_window(a, b, r);
}

static void tls_load(const struct tls_case *tc, const struct target *t, pid_t nginx, double seconds,
                     struct result *r)
{
    struct load ld = {.tc = tc};
    struct worker ws[CLIENTS];
    struct cpu_mark c0, c1;
    size_t total = 0, k = 0;
    uint32_t *all;
    double t0, t1;

    memset(ws, 0, sizeof(ws));
    for (int i = 0; i < CLIENTS; i++) {
        ws[i].ld = &ld;
        bench_check_pt(pthread_create(&ws[i].th, NULL, worker_main, &ws[i]), "pthread_create");
    }
    bench_sleep_ms(WARMUP_SECONDS * 1000L);
    cpu_mark(t, nginx, &c0);
    t0 = bench_now();
    atomic_store(&ld.measuring, 1);
    bench_sleep_ms((long)(seconds * 1000));
    atomic_store(&ld.measuring, 0);
    t1 = bench_now();
    cpu_mark(t, nginx, &c1);
    atomic_store(&ld.stop, 1);
    for (int i = 0; i < CLIENTS; i++) {
        bench_check_pt(pthread_join(ws[i].th, NULL), "pthread_join");
        total += ws[i].n_lat;
        r->errors += ws[i].errors;
        if (ws[i].errors > 0)
            fprintf(stderr, "bench_proxy: %s: a connection failed: %s\n", t->label, ws[i].why);
    }
    r->requests = total;
    r->rate = (double)total / (t1 - t0);
    cpu_per_request(&c0, &c1, r);
    if (total > 0) {
        all = malloc(total * sizeof(*all));
        if (all == NULL)
            bench_die_msg("out of memory");
        for (int i = 0; i < CLIENTS; i++) {
            if (ws[i].n_lat > 0)
                memcpy(all + k, ws[i].lat, ws[i].n_lat * sizeof(*all));
            k += ws[i].n_lat;
        }
        qsort(all, total, sizeof(*all), cmp_u32);
        r->p50 = all[(size_t)(0.50 * (double)(total - 1) + 0.5)] / 1000.0;
        r->p99 = all[(size_t)(0.99 * (double)(total - 1) + 0.5)] / 1000.0;
        free(all);
    }
    for (int i = 0; i < CLIENTS; i++)
        free(ws[i].lat);
    r->done = 1;
}

/* ---------------------------------------------------------------------------------------------
 * The cases, and the output.
 */

/* 0, or -1 when the probe failed (printed; the caller marks the run failed). */
static int http_case(const char *dir, const struct target *t, const struct upstream *u,
                     double seconds, struct result *r)
{
    char text[16384], wdir[BENCH_PATH_MAX];
    struct tls_case tc;
    struct cpu_mark c0, c1;
    const char *why;
    unsigned whole = seconds < 1 ? 1 : (unsigned)(seconds + 0.5);

    memset(r, 0, sizeof(*r));
    tls_case_init(&tc, NULL, "127.0.0.1", u->ng.http_port, t->proxy_port);
    if ((why = probe(&tc)) != NULL) {
        fprintf(stderr, "bench_proxy: HTTP %s: the probe failed: %s\n", t->label, why);
        return -1;
    }
    bench_join_path(wdir, dir, "wrk");
    if (mkdir(wdir, 0700) != 0 && errno != EEXIST)
        bench_die_sys(wdir);
    wrk_run(wdir, t, u, WARMUP_SECONDS, text, sizeof(text));
    cpu_mark(t, u->ng.pid, &c0);
    wrk_run(wdir, t, u, whole, text, sizeof(text));
    cpu_mark(t, u->ng.pid, &c1);
    wrk_parse(text, r);
    cpu_per_request(&c0, &c1, r);
    r->done = 1;
    return 0;
}

/* 0, or -1 when the probe failed (printed; the caller marks the run failed). */
static int https_case(const struct target *t, const struct upstream *u, SSL_CTX *ctx,
                      const char *host, double seconds, struct result *r)
{
    struct tls_case tc;
    const char *why;

    memset(r, 0, sizeof(*r));
    tls_case_init(&tc, ctx, host, u->ng.https_port, t->proxy_port);
    if ((why = probe(&tc)) != NULL) {
        fprintf(stderr, "bench_proxy: HTTPS %s: the probe failed: %s\n", t->label, why);
        ERR_print_errors_fp(stderr);
        if (t->sworn && isalpha((unsigned char)host[0]))
            fprintf(stderr,
                    "bench_proxy: (the proxy must resolve %s to 127.0.0.1 and may "
                    "refuse loopback for a name: upstream.allow_private; --tls-host "
                    "127.0.0.1 connects to the literal address)\n",
                    host);
        return -1;
    }
    tls_load(&tc, t, u->ng.pid, seconds, r);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * MCP tool calls through sworn-proxy: each a POST of one JSON-RPC tools/call to nginx's /mcp,
 * which the proxy reads (strict JSON, the tool, the numbers of the arguments) and decides as
 * mcp.tools/call before it goes on. The same wrk load as the plain HTTP case, on the same proxy.
 */

/* One tools/call (body) through the proxy on a new connection; NULL when it was forwarded and
 * answered with nginx's JSON-RPC result (an allow: a deny is a JSON-RPC error), else why. */
static const char *mcp_probe(const struct upstream *u, unsigned proxy_port, const char *path,
                             const char *body)
{
    struct tls_case tc;
    struct conn c;
    char req[1024], answer[256];
    const char *why = NULL;
    int status = 0;

    tls_case_init(&tc, NULL, "127.0.0.1", u->ng.http_port, proxy_port);
    snprintf(req, sizeof(req),
             "POST http://127.0.0.1:%u%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
             "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
             u->ng.http_port, path, u->ng.http_port, strlen(body), body);
    if (conn_open(&c, &tc, &why) == 0) {
        if (conn_write(&c, req, strlen(req)) < 0 ||
            read_response(&c, 0, &status, answer, sizeof(answer)) < 0)
            why = "the tools/call got no complete answer";
        else if (status != 200 || strcmp(answer, MCP_RESULT) != 0)
            why = "the tools/call was not answered with the server's result (denied?)";
    }
    conn_close(&c);
    return why;
}

/* wrk posting body to /mcp through the target for seconds; OUT: its output. */
static void mcp_wrk_run(const char *dir, const struct target *t, const struct upstream *u,
                        const char *path, const char *body, unsigned seconds, char *text,
                        size_t cap)
{
    char script[BENCH_PATH_MAX], out[BENCH_PATH_MAX], url[128], dur[32], lua[1024];
    char *argv[] = {WRK_BIN, "-t" WRK_THREADS, "-c", "16", "-d", dur, "--latency",
                    "-s",    script,           url,  NULL};
    size_t len;

    snprintf(dur, sizeof(dur), "%us", seconds);
    bench_join_path(script, dir, "wrk-mcp.lua");
    bench_join_path(out, dir, "wrk-mcp.out");
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", t->proxy_port);
    snprintf(lua, sizeof(lua),
             "wrk.method = \"POST\"\n"
             "wrk.path = \"http://127.0.0.1:%u%s\"\n"
             "wrk.headers[\"Host\"] = \"127.0.0.1:%u\"\n"
             "wrk.headers[\"Content-Type\"] = \"application/json\"\n"
             "wrk.body = [[%s]]\n",
             u->ng.http_port, path, u->ng.http_port, body);
    bench_put_text(script, lua, 0600);
    bench_run(dir, argv, out);
    bench_read_small(out, (uint8_t *)text, cap, &len);
}

/* 0, or -1 when a probe (before or after the load) failed (printed). */
static int mcp_case(const char *dir, const struct target *t, const struct upstream *u,
                    const char *path, const char *body, double seconds, struct result *r)
{
    char text[16384], wdir[BENCH_PATH_MAX];
    struct cpu_mark c0, c1;
    const char *why;
    unsigned whole = seconds < 1 ? 1 : (unsigned)(seconds + 0.5);

    memset(r, 0, sizeof(*r));
    if ((why = mcp_probe(u, t->proxy_port, path, body)) != NULL) {
        fprintf(stderr, "bench_proxy: MCP: the probe failed: %s\n", why);
        return -1;
    }
    bench_join_path(wdir, dir, "wrk");
    if (mkdir(wdir, 0700) != 0 && errno != EEXIST)
        bench_die_sys(wdir);
    mcp_wrk_run(wdir, t, u, path, body, WARMUP_SECONDS, text, sizeof(text));
    cpu_mark(t, u->ng.pid, &c0);
    mcp_wrk_run(wdir, t, u, path, body, whole, text, sizeof(text));
    cpu_mark(t, u->ng.pid, &c1);
    wrk_parse(text, r);
    cpu_per_request(&c0, &c1, r);
    /* Still allowed after the load: wrk counts HTTP statuses, and a deny is a 200 too. */
    if ((why = mcp_probe(u, t->proxy_port, path, body)) != NULL) {
        fprintf(stderr, "bench_proxy: MCP: the probe after the load failed: %s\n", why);
        return -1;
    }
    r->done = 1;
    return 0;
}

static void print_mcp_row(const char *label, const struct result *r, const struct result *plain)
{
    if (!r->done) {
        printf("  %-34s %s\n", label, "not measured (see above)");
        return;
    }
    printf("  %-34s %10.0f %8.2f %8.2f %8.2f %8.2f %7llu %8.1f %8.1f\n", label, r->rate, r->p50,
           r->p99, plain->done && plain->rate > 0 ? r->rate / plain->rate : 0,
           plain->done && plain->p50 > 0 ? r->p50 / plain->p50 : 0, (unsigned long long)r->errors,
           r->cpu_us[0], r->cpu_us[1]);
}

/* The MCP section: the plain sworn-proxy row of the HTTP section, then the two tool calls, with
 * the ratios to the plain row (decisions per second: every request is one decision). 0 or -1. */
static int mcp_section(const char *dir, const struct target *t, const struct upstream *u,
                       const struct result *plain, double seconds)
{
    struct result post, echo, pay;
    int failed = 0;

    printf("\n== MCP tool calls through sworn-proxy: wrk -t%s -c%d --latency, POST /mcp, one "
           "JSON-RPC tools/call\n  each (%zu and %zu bytes), read (strict JSON, tool, numbers of "
           "the arguments) and decided as\n  mcp.tools/call; nginx answers a fixed JSON-RPC "
           "result; %d s warm-up, %.0f s measured per case.\n  x plain: the ratio to the plain "
           "GET through the same sworn-proxy above (one decision each)\n\n",
           WRK_THREADS, CLIENTS, strlen(MCP_ECHO), strlen(MCP_PAY), WARMUP_SECONDS, seconds);
    if (mcp_case(dir, t, u, "/post", MCP_ECHO, seconds, &post) < 0)
        failed = 1;
    if (mcp_case(dir, t, u, "/mcp", MCP_ECHO, seconds, &echo) < 0)
        failed = 1;
    if (mcp_case(dir, t, u, "/mcp", MCP_PAY, seconds, &pay) < 0)
        failed = 1;
    printf("  %-34s %10s %8s %8s %8s %8s %7s %8s %8s\n", "case", "dec/s", "p50 ms", "p99 ms",
           "x plain", "p50 x pl", "errors", "proxy us", "dec. us");
    print_mcp_row("plain GET /small.txt (above)", plain, plain);
    print_mcp_row("POST /post, echo's body, not MCP", &post, plain);
    print_mcp_row("tools/call echo", &echo, plain);
    print_mcp_row("tools/call pay (sum budget /amount)", &pay, plain);
    printf("  proxy us, dec. us: CPU per request of sworn-proxy and of decisiond (+children)\n");
    if (post.done && echo.done)
        printf("  tools/call echo / the same body POSTed to a path that is not MCP: %.2f (what "
               "reading it as MCP costs)\n",
               post.rate > 0 ? echo.rate / post.rate : 0);
    return failed ? -1 : 0;
}

static void print_head(void)
{
    printf("  %-34s %10s %8s %8s %8s %8s %7s %8s\n", "case", "req/s", "p50 ms", "p99 ms", "x squid",
           "p50 x sq", "errors", "closes");
}

static void print_row(const char *label, const struct result *r, const struct result *squid,
                      const char *missing)
{
    if (!r->done) {
        printf("  %-34s %s\n", label, missing);
        return;
    }
    printf("  %-34s %10.0f %8.2f %8.2f %8.2f %8.2f %7llu %8llu\n", label, r->rate, r->p50, r->p99,
           squid->done && squid->rate > 0 ? r->rate / squid->rate : 0,
           squid->done && squid->p50 > 0 ? r->p50 / squid->p50 : 0, (unsigned long long)r->errors,
           (unsigned long long)r->closes);
}

static void print_cpu(const char *label, const struct result *r, const char *what0,
                      const char *what1)
{
    if (!r->done)
        return;
    printf("  %-34s %8.1f us %-18s", label, r->cpu_us[0], what0);
    if (what1 != NULL)
        printf(" %8.1f us %-22s", r->cpu_us[1], what1);
    printf(" (nginx %.1f us)\n", r->nginx_us);
}

/* What bench_decisiond measured: its peak, and its point with CLIENTS clients (the concurrency
 * of this bench: one decisiond connection per agent connection). */
struct alone {
    double peak;
    double at_clients, p50_at_clients; /* decisions/s and p50 ms; 0 when not found */
};

/*
 * Run bench_decisiond (built beside this program) on a stack of its own, after ours is down:
 * decisiond's closed-loop decisions/s alone on this machine. 0, or -1 when that run failed
 * (printed: information, not a failure of this bench).
 */
static int decisiond_alone(const char *dir, double seconds, struct alone *a)
{
    char self[BENCH_PATH_MAX], prog[BENCH_PATH_MAX + 32], sub[BENCH_PATH_MAX], out[BENCH_PATH_MAX],
        log[BENCH_PATH_MAX], secs[32], text[65536];
    char *argv[] = {prog,         sub,
                    "--stacks",   "notpm",
                    "--entries",  "0",
                    "--seconds",  secs,
                    "--receipts", (char *)receipts,
                    "--build",    (char *)build_dir,
                    "--source",   (char *)source_dir,
                    NULL};
    const char *p;
    size_t len;
    int status;

    bench_self_dir(self);
    snprintf(prog, sizeof(prog), "%s/bench_decisiond", self);
    snprintf(secs, sizeof(secs), "%.1f", seconds / 5 < 1.5 ? 1.5 : seconds / 5);
    bench_join_path(sub, dir, "decisiond-alone");
    bench_make_dir(sub, 0700);
    bench_join_path(out, dir, "decisiond-alone.out");
    bench_join_path(log, dir, "decisiond-alone.log");
    printf("  running bench_decisiond for decisiond's own rate (about 40 s) ...\n");
    status = bench_wait(bench_spawn(argv, log, out), "waitpid bench_decisiond");
    bench_read_small(out, (uint8_t *)text, sizeof(text), &len);
    memset(a, 0, sizeof(*a));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || (p = strstr(text, "  peak: ")) == NULL ||
        sscanf(p, "  peak: %lf", &a->peak) != 1) {
        fprintf(stderr, "bench_proxy: bench_decisiond failed (status 0x%x): see %s\n",
                (unsigned)status, log);
        return -1;
    }
    /* The closed-loop rows: "  clients dec/s p50 ...". */
    for (p = strstr(text, "== Closed loop"); p != NULL && p < strstr(text, "  peak: ");
         p = strchr(p + 1, '\n')) {
        int clients = 0;
        double rate = 0, p50 = 0;

        if (sscanf(p + 1, " %d %lf %lf", &clients, &rate, &p50) == 3 && clients == CLIENTS) {
            a->at_clients = rate;
            a->p50_at_clients = p50;
            break;
        }
    }
    return 0;
}

static _Noreturn void usage(void)
{
    fprintf(stderr, "usage: bench_proxy DIR [--seconds S] [--tls-host NAME] [--no-decisiond] "
                    "[--receipts per-request|batch] [--build DIR] [--source DIR]   (DIR "
                    "absolute)\n");
    exit(1);
}

enum { C_DIRECT, C_SQUID, C_TINY, C_SWORN, N_CASES };

/* ---------------------------------------------------------------------------------------------
 * Issue 16: the cost of the RFC 9421 signature headers. The same destination (nginx's
 * /small.txt over http), through the same stack, back to back: first as it is, then with the
 * proxy restarted on its configuration plus `signing: [http://127.0.0.1:PORT/]`, so every
 * request also leaves with Signature-Input, Signature and Sworn-Entry. decisiond signs the same
 * RFC 9421 base for every allow either way (the receipt is the signature), so the ratio is the
 * proxy's share: writing the header lines.
 */
static void signing_figure(const char *dir, const struct stack *st, const struct upstream *u,
                           double seconds)
{
    char env[16384], conf[BENCH_PATH_MAX], value[ENV_VALUE_MAX], script[BENCH_PATH_MAX],
        out[BENCH_PATH_MAX], line[128];
    char *argv[4];
    struct target t = {.label = "sworn-proxy, unsigned destination", .sworn = 1};
    struct result plain, sig;
    unsigned port = 0;
    FILE *f;

    printf("\n== Signatures upstream (RFC 9421): GET /small.txt over http through sworn-proxy, "
           "%.0f s each,\n  the destination unsigned, then listed under signing: (the same stack, "
           "the proxy restarted)\n\n",
           seconds);
    t.proxy_port = st->port;
    t.cpu_pid[0] = st->proxy_pid;
    t.cpu_pid[1] = st->decisiond_pid;
    if (http_case(dir, &t, u, seconds, &plain) < 0)
        return;
    bench_stack_env(st->dir, env, sizeof(env));
    bench_env_value(env, "PROXY_CONFIG", conf, sizeof(conf));
    if (conf[0] == '\0' || (f = fopen(conf, "a")) == NULL) {
        printf("  not measured: the proxy's configuration cannot be extended\n");
        return;
    }
    snprintf(line, sizeof(line), "signing:\n  - http://127.0.0.1:%u/\n", u->ng.http_port);
    fputs(line, f);
    if (fclose(f) != 0)
        bench_die_sys(conf);
    snprintf(script, sizeof(script), "%s/scripts/dev-stack", source_dir);
    bench_join_path(out, dir, "start-proxy.out");
    argv[0] = script;
    argv[1] = "start-proxy";
    argv[2] = (char *)st->dir;
    argv[3] = NULL;
    bench_run(dir, argv, out);
    bench_stack_env(st->dir, env, sizeof(env));
    bench_env_value(env, "PROXY_URL", value, sizeof(value));
    if (sscanf(value, "http://127.0.0.1:%u", &port) != 1 || port == 0 || port > 65535)
        bench_die_msg("stack.env: PROXY_URL is not http://127.0.0.1:PORT after start-proxy");
    t.label = "sworn-proxy, signing destination";
    t.proxy_port = port;
    t.cpu_pid[0] = bench_stack_daemon(env, "PROXY_PID");
    if (http_case(dir, &t, u, seconds, &sig) < 0)
        return;
    print_head();
    print_row("unsigned destination", &plain, &plain, "failed (see above)");
    print_row("signing destination", &sig, &plain, "failed (see above)");
    printf("  signed / unsigned req/s: %.3f (p50 %.2f ms vs %.2f ms); sworn-proxy CPU per "
           "request %.1f us vs %.1f us\n",
           plain.rate > 0 ? sig.rate / plain.rate : 0, sig.p50, plain.p50, sig.cpu_us[0],
           plain.cpu_us[0]);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *tls_host = "localhost", *env_seconds = getenv("SWORN_BENCH_SECONDS");
    double seconds = env_seconds != NULL ? strtod(env_seconds, NULL) : DEFAULT_SECONDS;
    struct upstream u;
    struct fwd squid = {0}, tiny = {0};
    struct stack st;
    struct target tg[N_CASES];
    struct result http[N_CASES], https[N_CASES];
    SSL_CTX *ctx_bench, *ctx_sworn = NULL;
    int failed = 0, with_decisiond = 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    double t_setup;

    bench_init("bench_proxy");
    if (setvbuf(stdout, NULL, _IOLBF, 0) != 0)
        bench_die_msg("setvbuf failed");
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-') {
            if (dir != NULL)
                usage();
            dir = argv[i];
            continue;
        }
        if (strcmp(argv[i], "--no-decisiond") == 0) {
            with_decisiond = 0;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--tls-host") == 0)
            tls_host = argv[++i];
        else if (strcmp(argv[i], "--build") == 0)
            build_dir = argv[++i];
        else if (strcmp(argv[i], "--source") == 0)
            source_dir = argv[++i];
        else if (strcmp(argv[i], "--receipts") == 0)
            receipts = argv[++i];
        else
            usage();
    }
    if (dir == NULL || dir[0] != '/' || !(seconds >= 1 && seconds <= 600) || tls_host[0] == '\0' ||
        strlen(tls_host) > 200 ||
        (strcmp(receipts, "per-request") != 0 && strcmp(receipts, "batch") != 0))
        usage();

    bench_signals_install();
    signal(SIGPIPE, SIG_IGN);
    /* squid's effective user must be able to reach its folder inside DIR. */
    if (geteuid() == 0 && chmod(dir, 0755) != 0)
        bench_die_sys(dir);

    printf("bench_proxy: build %s, source %s, decisiond receipts: %s; %ld CPUs online", build_dir,
           source_dir, receipts, cpus);
    bench_print_load();
    printf("\nwrk (or the HTTPS client), nginx, the proxy and decisiond share these CPUs\n");

    /* Setup: every server, before any thread of this program runs. */
    t_setup = bench_now();
    start_nginx(&u, dir);
    start_squid(&squid, dir);
    start_tinyproxy(&tiny, dir);
    stack_up(&st, dir, &u, tls_host);
    printf("setup: nginx 127.0.0.1:%u (http) and :%u (https), squid :%u, tinyproxy :%u, ",
           u.ng.http_port, u.ng.https_port, squid.port, tiny.port);
    if (st.up)
        printf("sworn-proxy :%u (pid %ld, decisiond pid %ld; dev-stack --no-tpm)", st.port,
               (long)st.proxy_pid, (long)st.decisiond_pid);
    else
        printf("sworn-proxy not available yet: %s", st.why);
    printf(": %.1f s\n", bench_now() - t_setup);

    memset(tg, 0, sizeof(tg));
    tg[C_DIRECT] = (struct target){.label = "direct to nginx"};
    tg[C_SQUID] =
        (struct target){.label = "squid", .proxy_port = squid.port, .cpu_pid = {squid.pid, 0}};
    tg[C_TINY] =
        (struct target){.label = "tinyproxy", .proxy_port = tiny.port, .cpu_pid = {tiny.pid, 0}};
    tg[C_SWORN] = (struct target){.label = "sworn-proxy (decide, record, sign)",
                                  .proxy_port = st.port,
                                  .cpu_pid = {st.proxy_pid, st.decisiond_pid},
                                  .sworn = 1,
                                  .jlog = st.proxy_log[0] != '\0' ? st.proxy_log : NULL};
    memset(http, 0, sizeof(http));
    memset(https, 0, sizeof(https));

    printf("\n== HTTP: wrk -t%s -c%d --latency, GET /small.txt (%zu bytes), keep-alive; %d s "
           "warm-up, %.0f s measured per case\n",
           WRK_THREADS, CLIENTS, strlen(SMALL_BODY), WARMUP_SECONDS, seconds);
    printf("  through a proxy: absolute-form requests (wrk -s script), Host = nginx's "
           "authority\n\n");
    for (int i = 0; i < N_CASES; i++)
        if ((i != C_SWORN || st.up) && http_case(dir, &tg[i], &u, seconds, &http[i]) < 0)
            failed = 1;
    print_head();
    for (int i = 0; i < N_CASES; i++)
        print_row(tg[i].label, &http[i], &http[C_SQUID],
                  i == C_SWORN && st.up ? "failed (see above)" : "not available yet");
    printf("  errors: non-2xx answers, connect, write and timeout errors; closes: wrk's read "
           "errors, a kept-alive\n  connection closed by the server (tinyproxy closes after every "
           "answer, so wrk reconnects each time)\n");
    if (st.up && http[C_SWORN].done &&
        mcp_section(dir, &tg[C_SWORN], &u, &http[C_SWORN], seconds) < 0)
        failed = 1;

    ctx_bench = client_ctx(u.ca_cert);
    if (st.up)
        ctx_sworn = client_ctx(st.proxy_ca);
    printf("\n== HTTPS through CONNECT: this program's client, %d threads, one connection each: "
           "CONNECT once,\n  TLS to %s (TLS 1.3, ALPN http/1.1), then keep-alive GETs; %d s "
           "warm-up, %.0f s measured\n",
           CLIENTS, tls_host, WARMUP_SECONDS, seconds);
    printf("  squid and tinyproxy only tunnel the bytes (TLS is end to end, nginx's certificate);"
           "\n  sworn-proxy terminates TLS (a leaf it mints, trusted through PROXY_CA), decides "
           "every\n  inner request and opens its own TLS connection to nginx\n\n");
    for (int i = 0; i < N_CASES; i++) {
        if (i == C_SWORN && !st.up)
            continue;
        if (https_case(&tg[i], &u, i == C_SWORN ? ctx_sworn : ctx_bench, tls_host, seconds,
                       &https[i]) < 0)
            failed = 1;
    }
    print_head();
    for (int i = 0; i < N_CASES; i++)
        print_row(tg[i].label, &https[i], &https[C_SQUID],
                  i == C_SWORN && st.up ? "failed (see above)" : "not available yet");

    printf("\n== CPU per request (utime + stime, the process and its descendants, in the "
           "measured window)\n");
    printf("  sworn-proxy's decisiond line includes its engine and signer processes\n\n");
    if (http[C_DIRECT].done)
        printf("  %-34s nginx %.1f us (HTTP), %.1f us (HTTPS)\n", "direct", http[C_DIRECT].nginx_us,
               https[C_DIRECT].nginx_us);
    print_cpu("HTTP squid", &http[C_SQUID], "squid", NULL);
    print_cpu("HTTP tinyproxy", &http[C_TINY], "tinyproxy", NULL);
    print_cpu("HTTP sworn-proxy", &http[C_SWORN], "sworn-proxy", "decisiond (+children)");
    print_cpu("HTTPS squid (tunnel)", &https[C_SQUID], "squid", NULL);
    print_cpu("HTTPS tinyproxy (tunnel)", &https[C_TINY], "tinyproxy", NULL);
    print_cpu("HTTPS sworn-proxy (terminated)", &https[C_SWORN], "sworn-proxy",
              "decisiond (+children)");
    for (int k = 0; k < 2; k++) {
        const struct result *r = k == 0 ? &http[C_SWORN] : &https[C_SWORN];

        if (r->done && r->jlines > 0)
            printf("  %-34s %zu request lines in the window: waiting for decisiond p50 %.2f ms, "
                   "p99 %.2f ms;\n  %-34s in the proxy in all p50 %.2f ms, p99 %.2f ms\n",
                   k == 0 ? "HTTP sworn-proxy, its own log" : "HTTPS sworn-proxy, its own log",
                   r->jlines, r->decide_p50, r->decide_p99, "", r->total_p50, r->total_p99);
    }
    if (http[C_SWORN].done) {
        double d = http[C_SWORN].cpu_us[1], p = http[C_SWORN].cpu_us[0];

        /* Below a microsecond per request a process did no work per request (or the window
         * saw no clock tick of it): no ceiling to show. */
        if (d >= 1 && p >= 1)
            printf("  CPU-only ceilings on %ld CPUs (if nothing else ran): decisiond %.0f req/s, "
                   "sworn-proxy %.0f req/s\n",
                   cpus, (double)cpus * 1e6 / d, (double)cpus * 1e6 / p);
    }

    if (st.up)
        signing_figure(dir, &st, &u, seconds);

    SSL_CTX_free(ctx_bench);
    SSL_CTX_free(ctx_sworn);
    bench_stop_all();

    printf("\n== Against the target (information, not an exit status)\n");
    if (!http[C_SWORN].done || !http[C_SQUID].done) {
        printf("  sworn-proxy >= %.1fx squid's req/s with p50 <= squid's: NOT MEASURED "
               "(sworn-proxy not available yet)\n",
               TARGET_RATE_RATIO);
    } else {
        const struct result *s = &http[C_SWORN], *q = &http[C_SQUID];
        int rate_ok = s->rate >= TARGET_RATE_RATIO * q->rate, p50_ok = s->p50 <= q->p50;

        printf("  sworn-proxy req/s / squid's                  %s (%.2f; target >= %.1f)\n",
               rate_ok ? "PASS" : "MISS", s->rate / q->rate, TARGET_RATE_RATIO);
        printf("  sworn-proxy p50 / squid's                    %s (%.2f ms vs %.2f ms)\n",
               p50_ok ? "PASS" : "MISS", s->p50, q->p50);
        printf("  target %s\n", rate_ok && p50_ok ? "MET" : "NOT MET");
        if (!(rate_ok && p50_ok) && with_decisiond) {
            struct alone a;

            if (decisiond_alone(dir, seconds, &a) == 0) {
                double same = a.at_clients > 0 ? a.at_clients : a.peak;

                printf("  decisiond alone (bench_decisiond --stacks notpm, its own clients on the "
                       "decision socket):\n");
                printf("    peak %.0f decisions/s; with %d clients (this bench's concurrency) "
                       "%.0f/s, p50 %.2f ms\n",
                       a.peak, CLIENTS, a.at_clients, a.p50_at_clients);
                printf("    sworn-proxy reached %.2f of decisiond's rate with %d clients%s;\n"
                       "    squid's rate is %.2f x decisiond's peak: decisiond would have to be "
                       "that much faster\n",
                       same > 0 ? s->rate / same : 0, CLIENTS,
                       same > 0 && s->rate >= 0.8 * same ? " (decisiond is the limit)" : "",
                       a.peak > 0 ? q->rate / a.peak : 0);
            }
        }
    }
    return failed;
}
