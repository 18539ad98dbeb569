/*
 * test_sandbox_probes.c -- an adversarial agent inside the real sworn-run sandbox must find no way
 * out (issue 15, "Tests"; docs/sandbox.md, "Probes"). A real dev stack (decisiond, sworn-proxy)
 * and an nginx upstream run on the host; canaries (canary_fixture.h) listen on the host's
 * loopback, on the machine's own addresses and in a veth namespace of the test's own. Each test
 * runs `sworn-run --stack DIR --work W -- ./sworn-probe ATTEMPT ...` (the probe copied into a
 * fresh work folder W) and expects the line "BLOCKED ..." with exit status 0, the work folder
 * gone afterwards, and every canary's log still empty (each test's teardown checks it).
 *
 * Before any of that, the group setup runs the same probes from the host against every canary
 * and waits until each one logged them (the positive controls): an empty log then means nothing
 * arrived, not that the canary could not have seen it. The probes at the documentation addresses
 * (192.0.2.1, 198.51.100.1, 203.0.113.1, 2001:db8::1, RFC 5737 and RFC 3849) run only inside the
 * sandbox, where there is no route: no packet is ever sent to them, and none would reach anyone
 * on a public network if one were.
 *
 * Then the allowed way out works (curl through the proxy, HTTP and HTTPS, with the variables and
 * CA bundle sworn-run sets), the record names the sandbox (Principal.sandbox,
 * sandbox_start_index, uid) whatever headers the agent adds, and when the sandbox ends none of
 * its processes and none of its files are left.
 *
 * Needs root (namespaces, the veth pair, the canaries' raw sockets) and sworn-run (SWORN_RUN_BIN,
 * set by tests/CMakeLists.txt once sandbox/ builds it): without either it exits 77 (skipped) and
 * says why. SWORN_RUN_BIN may name another runner with sworn-run's command line (a plain
 * `unshare` wrapper shows the probes finding the holes it leaves).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "canary_fixture.h"
#include "frame.h"
#include "sandbox_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "upstream_fixture.h"

#define PROCS_MAX 4096      /* processes scanned in /proc */
#define TARGETS_MAX 32      /* processes the kill and ptrace probes aim at */
#define PRINCIPAL "agent-1" /* the dev stack's hostlink principal (PROXY_PRINCIPAL) */

static const char *const public4[] = {"192.0.2.1", "198.51.100.1", "203.0.113.1"};
static const char *const public6[] = {"2001:db8::1"};

static struct sworn_stack stack;
static struct sworn_canary canary;
static struct sworn_upstream upstream;
static const char *probe_bin;
static char *marker; /* a host file the sandbox must not reach: canary.dir/marker */

/* ---- small helpers ---- */

/* The value of NAME in the stack's stack.env (quotes stripped), or "" (a static copy). */
static const char *stack_env(const char *name)
{
    static char value[1024];
    char *path = sworn_test_path(stack.dir, "stack.env");
    char *text = sworn_test_read_file(path, NULL), *line, *save = NULL;
    size_t len = strlen(name);

    value[0] = '\0';
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, name, len) != 0 || line[len] != '=')
            continue;
        snprintf(value, sizeof(value), "%s", line + len + 1);
        len = strlen(value);
        if (len >= 2 && (value[0] == '"' || value[0] == '\'') && value[len - 1] == value[0]) {
            memmove(value, value + 1, len - 2);
            value[len - 2] = '\0';
        }
        break;
    }
    free(text);
    free(path);
    return value;
}

/* sworn-run --stack DIR --work work [--name name] -- agent... into argv (SWORN_SBX_ARGS_MAX). */
static void run_argv(const char **argv, const char *work, const char *name,
                     const char *const *agent)
{
    const char *options[] = {"--work", work, name != NULL ? "--name" : NULL, name, NULL};

    sworn_sbx_argv(argv, stack.dir, options, agent);
}

/* Run agent in a sandbox on work (from work_new; freed) and wait for it (its output in r);
 * checks that the work folder is gone. */
static void sandbox_run_in(struct sworn_test_run *r, char *work, const char *name,
                           const char *const *agent)
{
    const char *argv[SWORN_SBX_ARGS_MAX];

    run_argv(argv, work, name, agent);
    sworn_test_run(argv, NULL, r);
    if (r->status == 125) { /* sworn-run's own failure: nothing ran, say why first */
        sworn_test_rmtree(work);
        free(work);
        fail_msg("sworn-run failed (status 125):\n%s", r->err);
    }
    sworn_sbx_expect_work_returned(work);
}

/* sandbox_run_in a fresh work folder. */
static void sandbox_run(struct sworn_test_run *r, const char *name, const char *const *agent)
{
    sandbox_run_in(r, sworn_sbx_work_new("work"), name, agent);
}

/* Whether a canary heard anything (its log is then printed). */
static int canaries_heard(void)
{
    char *log;

    if (sworn_canary_hits(&canary) == 0)
        return 0;
    log = sworn_canary_log(&canary);
    fprintf(stderr, "a canary heard from the sandbox:\n%s", log);
    free(log);
    return 1;
}

/* The canaries heard nothing: fails the test with their log otherwise. */
static void expect_canaries_quiet(void)
{
    if (canaries_heard())
        fail_msg("a canary heard from the sandbox (its log is above)");
}

/* Fail unless out is exactly one line starting with "BLOCKED " and status is 0. */
static void expect_blocked_line(const struct sworn_test_run *r)
{
    const char *nl = strchr(r->out, '\n');

    if (r->status != 0 || strncmp(r->out, "BLOCKED ", 8) != 0 || nl == NULL || nl[1] != '\0')
        fail_msg(
            "expected one BLOCKED line and status 0 from %s; status %d\nstdout:\n%s\nstderr:\n%s",
            r->cmd, r->status, r->out, r->err);
    printf("  %s", r->out);
}

/* argv: probe, attempt, then the arguments in ap up to their NULL (SWORN_SBX_ARGS_MAX in all). */
static void probe_argv(const char **argv, const char *probe, const char *attempt, va_list ap)
{
    size_t n = 2;

    argv[0] = probe;
    argv[1] = attempt;
    while (n < SWORN_SBX_ARGS_MAX - 1 && (argv[n] = va_arg(ap, const char *)) != NULL)
        n++;
    argv[n] = NULL;
}

/* sworn-probe ATTEMPT ARGS... (NULL-terminated) inside a fresh sandbox: BLOCKED, canaries
 * quiet. */
static void expect_blocked(const char *attempt, ...)
{
    const char *agent[SWORN_SBX_ARGS_MAX];
    struct sworn_test_run r = {0};
    va_list ap;

    va_start(ap, attempt);
    probe_argv(agent, "./sworn-probe", attempt, ap);
    va_end(ap);
    sandbox_run(&r, NULL, agent);
    expect_blocked_line(&r);
    sworn_test_run_free(&r);
    expect_canaries_quiet();
}

/* The same attempt from the host, outside any sandbox: OPEN (exit 3). */
static void expect_open_on_host(const char *attempt, ...)
{
    const char *argv[SWORN_SBX_ARGS_MAX];
    struct sworn_test_run r = {0};
    va_list ap;

    va_start(ap, attempt);
    probe_argv(argv, probe_bin, attempt, ap);
    va_end(ap);
    sworn_test_run(argv, NULL, &r);
    if (r.status != 3 || strncmp(r.out, "OPEN ", 5) != 0)
        fail_msg("positive control: %s %s from the host: status %d, %s%s", probe_bin, attempt,
                 r.status, r.out, r.err);
    sworn_test_run_free(&r);
}

static const struct sworn_canary_listener *listener(const char *label)
{
    for (size_t i = 0; i < canary.n; i++)
        if (strcmp(canary.l[i].label, label) == 0)
            return &canary.l[i];
    return NULL;
}

/* The listener's attempt at its address and port, from inside: BLOCKED. Absent: nothing. */
static void probe_listener(const char *label)
{
    const struct sworn_canary_listener *l = listener(label);
    char port[8];

    if (l == NULL) {
        printf("  (no %s canary on this machine)\n", label);
        return;
    }
    snprintf(port, sizeof(port), "%u", l->port);
    expect_blocked(l->attempt, l->addr, port, NULL);
}

/* ---- a sandbox that runs while the test looks at it ---- */

/* Start agent in a fresh sandbox (sworn_sbx_live_start), its work folder in l->work. */
static void live_start(struct sworn_sbx_live *l, const char *name, const char *const *agent)
{
    const char *argv[SWORN_SBX_ARGS_MAX];
    char *work = sworn_sbx_work_new("work");

    run_argv(argv, work, name, agent);
    sworn_sbx_live_start(l, argv);
    l->work = work;
}

/* ---- processes, from /proc ---- */

struct proc {
    pid_t pid, ppid;
    uid_t uid, euid;
    unsigned long long start; /* starttime: a pid reused later is another process */
    char comm[32];
};

/* One /proc/PID/stat and status into p; 0, or -1 when it is gone. */
static int proc_read(pid_t pid, struct proc *p)
{
    char path[64], text[4096], *open_, *close_;
    unsigned long long field;
    int i = 0;

    memset(p, 0, sizeof(*p));
    p->pid = pid;
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if (sworn_test_read_proc(path, text, sizeof(text)) != 0)
        return -1;
    open_ = strchr(text, '(');
    close_ = strrchr(text, ')');
    if (open_ == NULL || close_ == NULL)
        return -1;
    snprintf(p->comm, sizeof(p->comm), "%.*s", (int)(close_ - open_ - 1), open_ + 1);
    /* After ") ": state (3), ppid (4), ..., starttime (22). */
    for (char *s = close_ + 2, *tok, *save = NULL; (tok = strtok_r(s, " ", &save)) != NULL;
         s = NULL) {
        i++;
        field = strtoull(tok, NULL, 10);
        if (i == 2)
            p->ppid = (pid_t)field;
        if (i == 20) {
            p->start = field;
            break;
        }
    }
    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    if (sworn_test_read_proc(path, text, sizeof(text)) != 0)
        return -1;
    char *uid = strstr(text, "\nUid:");
    unsigned long r, e;

    if (uid == NULL || sscanf(uid + 5, "%lu %lu", &r, &e) != 2)
        return -1;
    p->uid = (uid_t)r;
    p->euid = (uid_t)e;
    return 0;
}

/* Every process /proc lists now; returns how many. */
static size_t procs_all(struct proc *out, size_t cap)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL && n < cap) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (proc_read((pid_t)atol(e->d_name), &out[n]) == 0)
            n++;
    }
    closedir(d);
    return n;
}

/* The descendants of root (not root itself) among the processes now. */
static size_t descendants(pid_t root, struct proc *out, size_t cap)
{
    static struct proc all[PROCS_MAX];
    size_t n = procs_all(all, PROCS_MAX), k = 0;

    for (size_t i = 0; i < n; i++) {
        pid_t up = all[i].ppid;

        for (int depth = 0; up > 1 && depth < 64; depth++) {
            if (up == root) {
                if (k < cap)
                    out[k++] = all[i];
                break;
            }
            size_t j;

            for (j = 0; j < n && all[j].pid != up; j++)
                ;
            up = j < n ? all[j].ppid : 0;
        }
    }
    return k;
}

/* The process is gone, or its pid now names another process. */
static int proc_gone(const struct proc *p)
{
    struct proc now;

    return proc_read(p->pid, &now) != 0 || now.start != p->start;
}

/* Whether /proc/a/ns/<ns> and /proc/b/ns/<ns> name the same namespace. */
static int same_ns(pid_t a, pid_t b, const char *ns)
{
    char pa[64], pb[64], la[128] = "", lb[128] = "";

    snprintf(pa, sizeof(pa), "/proc/%ld/ns/%s", (long)a, ns);
    snprintf(pb, sizeof(pb), "/proc/%ld/ns/%s", (long)b, ns);
    assert_true(readlink(pa, la, sizeof(la) - 1) > 0);
    assert_true(readlink(pb, lb, sizeof(lb) - 1) > 0);
    return strcmp(la, lb) == 0;
}

/* The agent among sworn-run's descendants: the one process named sworn-probe. */
static struct proc find_agent(pid_t run, struct proc *desc, size_t *ndesc)
{
    struct proc agent = {0};
    int found = 0;

    *ndesc = descendants(run, desc, PROCS_MAX);
    for (size_t i = 0; i < *ndesc; i++)
        if (strcmp(desc[i].comm, "sworn-probe") == 0) {
            agent = desc[i];
            found++;
        }
    if (found != 1)
        fail_msg("%d processes named sworn-probe under sworn-run (pid %ld), not 1", found,
                 (long)run);
    return agent;
}

/* ---- the group's setup: stack, upstream, canaries, positive controls ---- */

/* Every canary hears the host's probe (and the log names it), then the log starts empty. */
static int positive_controls(void)
{
    char port[8], needle[96];

    for (size_t i = 0; i < canary.n; i++) {
        const struct sworn_canary_listener *l = &canary.l[i];

        snprintf(port, sizeof(port), "%u", l->port);
        expect_open_on_host(l->attempt, l->addr, port, NULL);
        snprintf(needle, sizeof(needle), " %s from ", l->label);
        if (sworn_canary_wait_hit(&canary, needle, 10000) != 0) {
            fprintf(stderr, "positive control: the %s canary heard nothing\n", l->label);
            return -1;
        }
    }
    expect_open_on_host("unix", canary.unix_path, NULL);
    expect_open_on_host("unix-abstract", canary.abstract, NULL);
    expect_open_on_host("icmp-raw", canary.ns4, NULL);
    if (canary.ipv6)
        expect_open_on_host("icmp-raw", canary.ns6, NULL);
    expect_open_on_host("read", marker, NULL);
    if (sworn_canary_wait_hit(&canary, "unix unix-path from", 10000) != 0 ||
        sworn_canary_wait_hit(&canary, "unix unix-abstract from", 10000) != 0 ||
        sworn_canary_wait_hit(&canary, "icmp icmp4-netns from", 10000) != 0 ||
        (canary.ipv6 && sworn_canary_wait_hit(&canary, "icmp icmp6-netns from", 10000) != 0)) {
        fprintf(stderr, "positive control: a Unix or ICMP canary heard nothing\n");
        return -1;
    }
    printf("positive controls: %zu canaries (and the Unix and ICMP ones) heard the host\n",
           canary.n);
    return sworn_canary_rotate(&canary);
}

/* The sample policy (policy/examples/policy.yaml) and one rule more: HTTPS to localhost under
 * /allowed/, which the sample allows over plain HTTP only, so that an allowed request through
 * CONNECT shows the sandbox's CA bundle at work. Written into dir; returns its path (free it). */
static char *write_policy(const char *dir)
{
    static const char tls_rule[] = "\n"
                                   "  # test_sandbox_probes: HTTPS under /allowed/.\n"
                                   "  - id: probe-allowed-tls\n"
                                   "    effect: allow\n"
                                   "    reason: \"probes: read-only HTTPS to /allowed/\"\n"
                                   "    operations: [\"http.request\"]\n"
                                   "    resource:\n"
                                   "      schemes: [https]\n"
                                   "      hosts: [\"localhost\"]\n"
                                   "      paths: [\"/allowed/**\"]\n"
                                   "    methods: [GET, HEAD]\n";
    char *sample = sworn_test_path(sworn_test_source_dir(), "policy/examples/policy.yaml");
    char *path = sworn_test_path(dir, "policy.yaml"), *text, *all;
    size_t len;

    text = sworn_test_read_file(sample, &len);
    all = malloc(len + sizeof(tls_rule));
    assert_non_null(all);
    memcpy(all, text, len);
    memcpy(all + len, tls_rule, sizeof(tls_rule));
    sworn_test_write_file(path, all, len + sizeof(tls_rule) - 1, 0644);
    free(all);
    free(text);
    free(sample);
    return path;
}

static int group_setup(void **state)
{
    char opts[2048], *policy;

    (void)state;
    if (sworn_upstream_start(&upstream) != 0)
        return -1;
    policy = write_policy(upstream.dir);
    snprintf(opts, sizeof(opts), "--no-tpm --proxy --upstream-ca %s --policy %s", upstream.ca_cert,
             policy);
    free(policy);
    if (sworn_stack_up(&stack, opts) != 0)
        return -1;
    if (sworn_canary_start(&canary) != 0)
        return -1;
    marker = sworn_test_path(canary.dir, "marker");
    sworn_test_write_file(marker, "a host file\n", 12, 0644);
    return positive_controls();
}

static int group_teardown(void **state)
{
    int rc = 0;

    (void)state;
    sworn_canary_stop(&canary);
    free(marker);
    marker = NULL;
    if (stack.dir != NULL && sworn_stack_down(&stack) != 0)
        rc = -1;
    sworn_upstream_stop(&upstream);
    return rc;
}

/* Each test's teardown: a sandbox it left running is ended; whatever it did, the canaries heard
 * nothing. */
static int canaries_quiet(void **state)
{
    (void)state;
    sworn_sbx_live_abort_all();
    return canaries_heard() ? -1 : 0;
}

/* ---- the probes ---- */

/* Direct TCP to the host's loopback: the canaries, the proxy's own TCP listener, nginx. Inside,
 * 127.0.0.1 is the sandbox's loopback, where nothing of the host listens. */
static void test_tcp_host_loopback(void **state)
{
    char port[8];
    const char *proxy_port = strrchr(stack.proxy_url, ':');

    (void)state;
    probe_listener("tcp4-loopback");
    probe_listener("tcp6-loopback");
    assert_non_null(proxy_port);
    expect_blocked("tcp4", "127.0.0.1", proxy_port + 1, NULL);
    snprintf(port, sizeof(port), "%u", upstream.http_port);
    expect_blocked("tcp4", "127.0.0.1", port, NULL);
    expect_blocked("tcp6", "::1", port, NULL);
}

/* Direct TCP to the machine's own addresses and to both ends of the veth pair. */
static void test_tcp_machine_address(void **state)
{
    (void)state;
    probe_listener("tcp4-machine");
    probe_listener("tcp6-machine");
    probe_listener("tcp4-vethhost");
    probe_listener("tcp6-vethhost");
    probe_listener("tcp4-netns");
    probe_listener("tcp6-netns");
}

/* Direct TCP to public addresses (documentation ranges: never routed, and no route inside). */
static void test_tcp_public(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(public4) / sizeof(public4[0]); i++) {
        expect_blocked("tcp4", public4[i], "80", NULL);
        expect_blocked("tcp4", public4[i], "443", NULL);
    }
}

/* IPv6: public, loopback, the machine's and the namespace's, TCP and UDP. */
static void test_ipv6(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(public6) / sizeof(public6[0]); i++) {
        expect_blocked("tcp6", public6[i], "443", NULL);
        expect_blocked("udp6", public6[i], "53", NULL);
    }
    probe_listener("tcp6-loopback");
    probe_listener("udp6-loopback");
    probe_listener("tcp6-machine");
    probe_listener("udp6-machine");
    probe_listener("udp6-netns");
}

/* A DNS query over UDP to public resolvers' addresses, and every UDP canary. */
static void test_udp_dns_public(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(public4) / sizeof(public4[0]); i++)
        expect_blocked("udp4", public4[i], "53", NULL);
    for (size_t i = 0; i < canary.n; i++)
        if (strncmp(canary.l[i].attempt, "udp", 3) == 0)
            probe_listener(canary.l[i].label);
}

/* A DNS query to the host's own resolvers (every nameserver of the host's /etc/resolv.conf),
 * over UDP and TCP. */
static void test_udp_dns_host_resolver(void **state)
{
    char *text = sworn_test_read_file_opt("/etc/resolv.conf", NULL), *line, *save = NULL;
    int n = 0;

    (void)state;
    if (text == NULL) {
        printf("  (no /etc/resolv.conf on this machine)\n");
        return;
    }
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char ns[64];
        int v6;

        if (sscanf(line, "nameserver %63s", ns) != 1)
            continue;
        v6 = strchr(ns, ':') != NULL;
        if (v6 && strchr(ns, '%') != NULL)
            continue; /* a scoped link-local address: sworn-probe takes numeric ones only */
        expect_blocked(v6 ? "udp6" : "udp4", ns, "53", NULL);
        expect_blocked(v6 ? "tcp6" : "tcp4", ns, "53", NULL);
        n++;
    }
    free(text);
    printf("  %d resolvers of the host probed\n", n);
}

/* ICMP echo, on a raw socket and on the unprivileged ping socket, to the namespace, the
 * machine, loopback and a public address. */
static void test_icmp(void **state)
{
    const char *targets[] = {canary.ns4,     canary.ns6,    canary.host4,   "127.0.0.1",
                             "198.51.100.1", "2001:db8::1", canary.machine4};

    (void)state;
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
        if (targets[i] == NULL || targets[i][0] == '\0') /* no such address here */
            continue;
        expect_blocked("icmp-raw", targets[i], NULL);
        expect_blocked("icmp-ping", targets[i], NULL);
    }
}

/* Raw IP sockets (v4 and v6) and packet sockets: refused at creation. */
static void test_raw_and_packet_sockets(void **state)
{
    (void)state;
    expect_blocked("raw4", NULL);
    expect_blocked("raw6", NULL);
    expect_blocked("packet", NULL);
}

/* AF_VSOCK (the way out of a VM to its host): refused at creation. */
static void test_vsock(void **state)
{
    (void)state;
    expect_open_on_host("vsock", NULL); /* the kernel has it: the refusal is the sandbox's */
    expect_blocked("vsock", NULL);
}

/* The route netlink dump lists loopback alone: no interface to leave by. */
static void test_netlink_interfaces(void **state)
{
    (void)state;
    expect_blocked("netlink-ifaces", NULL);
}

/* curl run by the agent with a flag or an environment that skips the proxy. */
static void expect_curl_fails(const char *const *curl_argv)
{
    struct sworn_test_run r = {0};

    sandbox_run(&r, NULL, curl_argv);
    /* curl's own failures, to resolve (6) or to connect (7), and at once: not sworn-run's (125),
     * not a timeout (28: a packet went somewhere), not an answer (0). */
    if (r.status != 6 && r.status != 7)
        fail_msg("curl inside the sandbox: status %d (expected 6 or 7)\nstdout:\n%s\nstderr:\n%s",
                 r.status, r.out, r.err);
    printf("  %s ... -> status %d\n", curl_argv[0], r.status);
    sworn_test_run_free(&r);
    expect_canaries_quiet();
}

/* The http URL of a TCP canary (IPv6 addresses in brackets). */
static const char *canary_url(const char *label, char *buf, size_t cap)
{
    const struct sworn_canary_listener *l = listener(label);

    if (l == NULL)
        return NULL;
    if (strchr(l->addr, ':') != NULL)
        snprintf(buf, cap, "http://[%s]:%u/", l->addr, l->port);
    else
        snprintf(buf, cap, "http://%s:%u/", l->addr, l->port);
    return buf;
}

static const char *const curl_targets[] = {"tcp4-loopback", "tcp6-loopback", "tcp4-machine",
                                           "tcp6-machine",  "tcp4-netns",    "tcp6-netns"};

/* The agent's command prefix (NULL-terminated), then "-g" (an IPv6 address in brackets is not a
 * glob) and the URL of each TCP canary (curl_targets) there is, then a public name: curl fails
 * each time (expect_curl_fails). */
static void expect_curl_fails_everywhere(const char *const *prefix)
{
    const char *argv[SWORN_SBX_ARGS_MAX];
    char url[128];
    size_t n = 0;

    while (prefix[n] != NULL && n < SWORN_SBX_ARGS_MAX - 3) {
        argv[n] = prefix[n];
        n++;
    }
    for (size_t i = 0; i < sizeof(curl_targets) / sizeof(curl_targets[0]); i++) {
        if (canary_url(curl_targets[i], url, sizeof(url)) == NULL)
            continue;
        argv[n] = "-g";
        argv[n + 1] = url;
        argv[n + 2] = NULL;
        expect_curl_fails(argv);
    }
    argv[n] = "http://example.com/";
    argv[n + 1] = NULL;
    expect_curl_fails(argv);
}

/* curl --noproxy '*': straight to each TCP canary, and to a public name. */
static void test_curl_noproxy(void **state)
{
    const char *const curl[] = {"/usr/bin/curl", "-sS", "--max-time", "10", "--noproxy", "*", NULL};

    (void)state;
    expect_curl_fails_everywhere(curl);
}

/* The proxy variables unset (env -u each), then curl to each canary and a public name. */
static void test_unset_proxy_variables(void **state)
{
    const char *const curl[] = {"/usr/bin/env", "-u",
                                "http_proxy",   "-u",
                                "HTTP_PROXY",   "-u",
                                "https_proxy",  "-u",
                                "HTTPS_PROXY",  "-u",
                                "all_proxy",    "-u",
                                "ALL_PROXY",    "/usr/bin/curl",
                                "-sS",          "--max-time",
                                "10",           NULL};

    (void)state;
    expect_curl_fails_everywhere(curl);
}

/* The control plane's Unix sockets (decisiond's decision and admin sockets, the proxy's hostlink
 * and metrics sockets), a canary's socket file, and an abstract socket of the host. */
static void test_control_plane_sockets(void **state)
{
    char metrics[600];

    (void)state;
    snprintf(metrics, sizeof(metrics), "%s/proxy/metrics.sock", stack.dir);
    expect_blocked("unix", stack.decision, NULL);
    expect_blocked("unix", stack.admin, NULL);
    expect_blocked("unix", stack.proxy_socket, NULL);
    if (sworn_sbx_exists(metrics))
        expect_blocked("unix", metrics, NULL);
    expect_blocked("unix", canary.unix_path, NULL);
    expect_blocked("unix-abstract", canary.abstract, NULL);
}

/* Reading the vault, the PIN, the CA key, the log and the rest of the stack's folder, and the
 * system's secrets that sworn-run masks. */
static void test_read_secrets(void **state)
{
    char vault[600], ca_key[600], dlog[600];
    const char *pin = stack_env("PIN_FILE");

    (void)state;
    snprintf(vault, sizeof(vault), "%s/vault.json", stack.dir);
    snprintf(ca_key, sizeof(ca_key), "%s/proxy-ca/ca.key", stack.dir);
    snprintf(dlog, sizeof(dlog), "%s/decisiond.log", stack.dir);
    assert_true(sworn_sbx_exists(vault) && sworn_sbx_exists(ca_key) &&
                sworn_sbx_exists(stack.log_db));
    expect_open_on_host("read", vault, NULL); /* the control: each is there to read */
    expect_blocked("read", vault, NULL);
    assert_true(pin[0] != '\0' && sworn_sbx_exists(pin));
    expect_blocked("read", pin, NULL);
    expect_blocked("read", ca_key, NULL);
    expect_blocked("read", stack.log_db, NULL);
    expect_blocked("read", dlog, NULL);
    expect_blocked("read", stack.proxy_log, NULL);
    expect_blocked("read", stack.dir, NULL);
    expect_blocked("read", marker, NULL);
    expect_blocked("read", "/etc/shadow", NULL);
    expect_blocked("read", "/etc/gshadow", NULL);
    expect_blocked("read", "/etc/ssl/private", NULL);
    expect_blocked("read", "/etc/sworn", NULL);
}

/* Writing the tiles and the log, and anywhere but the work folder. */
static void test_write_tiles(void **state)
{
    char tile[600];

    (void)state;
    snprintf(tile, sizeof(tile), "%s/probe-tile", stack.tiles);
    expect_blocked("create", tile, NULL);
    expect_blocked("write", stack.log_db, NULL);
    expect_blocked("create", "/etc/sworn-probe", NULL);
    expect_blocked("write", "/etc/passwd", NULL);
    expect_blocked("create", "/usr/sworn-probe", NULL);
    expect_blocked("create", "/sworn-probe", NULL);
    /* The kernel's knobs: a core_pattern pipe runs as root on the host; sysrq; the cgroup tree. */
    expect_blocked("write", "/proc/sys/kernel/core_pattern", NULL);
    expect_blocked("write", "/proc/sysrq-trigger", NULL);
    expect_blocked("create", "/sys/fs/cgroup/sworn-probe", NULL);
    assert_false(sworn_sbx_exists(tile));
}

/*
 * Run `sworn-probe ATTEMPT -` (kill or ptrace) in a sandbox and, once it is READY, give it the
 * pids of everything outside its pid namespace that it might want dead or traced: sworn-run and
 * its other descendants (the relay), the proxy, decisiond and its engine and signer. BLOCKED, and
 * every one of them still runs.
 */
static void expect_control_plane_untouched(const char *attempt)
{
    static struct proc desc[PROCS_MAX];
    const char *agent_argv[] = {"./sworn-probe", attempt, "-", NULL};
    struct proc targets[TARGETS_MAX], agent;
    size_t ndesc, nt = 0;
    char line[1024] = "";
    static struct sworn_sbx_live l; /* static: the teardown may reach it after a failure */
    const char *verdict;

    live_start(&l, NULL, agent_argv);
    assert_string_equal(sworn_sbx_live_line(&l), "READY");
    agent = find_agent(l.pid, desc, &ndesc);
    assert_int_equal(proc_read(l.pid, &targets[nt++]), 0);
    for (size_t i = 0; i < ndesc && nt < TARGETS_MAX - 4; i++)
        if (!same_ns(desc[i].pid, agent.pid, "pid"))
            targets[nt++] = desc[i];
    assert_int_equal(proc_read(stack.proxy_pid, &targets[nt++]), 0);
    assert_int_equal(proc_read(stack.decisiond_pid, &targets[nt++]), 0);
    if (sworn_stack_engine(stack.decisiond_pid) > 0)
        assert_int_equal(proc_read(sworn_stack_engine(stack.decisiond_pid), &targets[nt++]), 0);
    if (sworn_stack_signer_child(stack.decisiond_pid) > 0)
        assert_int_equal(proc_read(sworn_stack_signer_child(stack.decisiond_pid), &targets[nt++]),
                         0);
    for (size_t i = 0; i < nt; i++)
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%ld ", (long)targets[i].pid);
    printf("  %s targets (outside pids): %s\n", attempt, line);
    line[strlen(line) - 1] = '\n';
    sworn_sbx_live_write(&l, line);
    verdict = sworn_sbx_live_line(&l);
    if (strncmp(verdict, "BLOCKED ", 8) != 0)
        fail_msg("%s from the sandbox: %s", attempt, verdict);
    printf("  %s\n", verdict);
    for (size_t i = 0; i < nt; i++)
        if (proc_gone(&targets[i]))
            fail_msg("%s (pid %ld) is gone after the %s probe", targets[i].comm,
                     (long)targets[i].pid, attempt);
    assert_int_equal(sworn_sbx_live_end(&l), 0);
    assert_false(sworn_stack_pid_gone(stack.proxy_pid));
    assert_false(sworn_stack_pid_gone(stack.decisiond_pid));
}

static void test_kill_control_plane(void **state)
{
    (void)state;
    expect_control_plane_untouched("kill");
}

static void test_trace_control_plane(void **state)
{
    (void)state;
    expect_control_plane_untouched("ptrace");
}

/* ---- the record ---- */

/*
 * The sandbox named name is in the log's tail: its SandboxStarted entry (the configured principal),
 * then exactly one decision on path with effect, which names the sandbox (Principal.sandbox,
 * sandbox_start_index, uid = the SandboxStarted agent_uid) and the configured principal, then its
 * SandboxEnded entry (reason EXITED). The tests run one sandbox at a time, so the decisions
 * between its start and its end are its own.
 */
static void expect_recorded(const char *name, const char *path, Sworn__V1__Effect effect)
{
    uint32_t uid = 0;
    uint64_t start = sworn_sbx_started(&stack, name, PRINCIPAL, &uid), end = 0;
    Sworn__V1__AdminResponse *r = sworn_stack_tail(&stack, SWORN_SBX_TAIL);
    int decisions = 0;

    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];

        if (e->kind_case == SWORN__V1__ENTRY__KIND_SANDBOX_ENDED &&
            e->sandbox_ended->start_index == start) {
            assert_int_equal(e->sandbox_ended->reason,
                             SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED);
            assert_int_equal(end, 0);
            end = r->tail->first_index + i;
        }
    }
    if (end == 0)
        fail_msg("sandbox %s (started at %llu): no SandboxEnded entry", name,
                 (unsigned long long)start);
    assert_true(start >= r->tail->first_index);
    for (uint64_t index = start + 1; index < end; index++) {
        const Sworn__V1__Entry *e = r->tail->entries[index - r->tail->first_index];
        const Sworn__V1__AuthorizationRequest *q = sworn_stack_decision_on(e, path);

        if (q == NULL)
            continue;
        assert_non_null(q->principal);
        assert_string_equal(q->principal->id, PRINCIPAL);
        assert_string_equal(q->principal->sandbox, name);
        assert_int_equal(q->principal->sandbox_start_index, start);
        assert_int_equal(q->principal->uid, uid);
        assert_int_equal(e->decision->effect, effect);
        decisions++;
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    if (decisions != 1)
        fail_msg("sandbox %s: %d decisions on %s between its start and its end, not 1", name,
                 decisions, path);
}

/* A request the policy allows works from inside, through the proxy at 127.0.0.1:3128 that the
 * sandbox's proxy variables name: HTTP, and HTTPS through CONNECT with the proxy's CA in the
 * bundle the CA variables name. The record names the sandbox. */
static void test_allowed_request_works(void **state)
{
    char url[128], surl[128];
    struct sworn_test_run r = {0};

    (void)state;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/allowed/hello.txt", upstream.http_port);
    const char *http[] = {"/usr/bin/curl", "-sS", "--max-time", "30", url, NULL};

    sandbox_run(&r, "probe-allowed", http);
    if (r.status != 0 || strcmp(r.out, "hello\n") != 0)
        fail_msg("an allowed request from the sandbox: status %d, %s%s", r.status, r.out, r.err);
    sworn_test_run_free(&r);
    expect_recorded("probe-allowed", "/allowed/hello.txt", SWORN__V1__EFFECT__EFFECT_ALLOW);

    snprintf(surl, sizeof(surl), "https://localhost:%u/allowed/hello.txt", upstream.https_port);
    const char *https[] = {"/usr/bin/curl", "-sS", "--max-time", "30", surl, NULL};

    sandbox_run(&r, "probe-allowed-tls", https);
    if (r.status != 0 || strcmp(r.out, "hello\n") != 0)
        fail_msg("an allowed HTTPS request from the sandbox: status %d, %s%s", r.status, r.out,
                 r.err);
    sworn_test_run_free(&r);
    expect_recorded("probe-allowed-tls", "/allowed/hello.txt", SWORN__V1__EFFECT__EFFECT_ALLOW);
}

/* Headers that claim another principal or sandbox change nothing: the record names the principal
 * and sandbox sworn-run configured, which the relay told the proxy. */
static void test_forged_principal(void **state)
{
    char url[128];
    struct sworn_test_run r = {0};

    (void)state;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/allowed/forged", upstream.http_port);
    const char *argv[] = {"/usr/bin/curl",
                          "-sS",
                          "-o",
                          "/dev/null",
                          "--max-time",
                          "30",
                          "-H",
                          "Sworn-Principal: operator",
                          "-H",
                          "X-Sworn-Principal: operator",
                          "-H",
                          "Sworn-Sandbox: another-sandbox",
                          "-H",
                          "X-Sworn-Sandbox: another-sandbox",
                          "-H",
                          "Sworn-Sandbox-Start-Index: 1",
                          "-H",
                          "Forwarded: for=127.0.0.1;by=sworn",
                          "--proxy-user",
                          "operator:operator",
                          url,
                          NULL};

    sandbox_run(&r, "probe-forged", argv);
    if (r.status != 0)
        fail_msg("the forged request got no answer: status %d, %s%s", r.status, r.out, r.err);
    sworn_test_run_free(&r);
    expect_recorded("probe-forged", "/allowed/forged", SWORN__V1__EFFECT__EFFECT_ALLOW);
}

/*
 * A HostlinkHello of the agent's own (principal "operator", sandbox "forged-sandbox"), sent on
 * 127.0.0.1:3128 before an allowed request: the relay's hello came first, so the proxy reads the
 * agent's frame as the start of an HTTP request and refuses it; nothing is served, and no
 * decision names the forged principal or sandbox.
 */
static void test_forged_hello(void **state)
{
    Sworn__V1__HostlinkHello hello = SWORN__V1__HOSTLINK_HELLO__INIT;
    Sworn__V1__AdminResponse *tail;
    struct sworn_test_run r = {0};
    char *work = sworn_sbx_work_new("work"), *path, script[1024];
    uint8_t *frame;
    size_t len;

    (void)state;
    hello.principal = "operator";
    hello.sandbox = "forged-sandbox";
    hello.sandbox_start_index = 1;
    hello.agent_uid = 0;
    assert_int_equal(sworn_frame_pack_hostlink_hello(&hello, &frame, &len), 0);
    path = sworn_test_path(work, "hello.bin");
    sworn_test_write_file(path, frame, len, 0644);
    free(path);
    free(frame);
    /* The request in a file too: sworn-run records the command, and refuses control bytes in it. */
    snprintf(script, sizeof(script),
             "GET http://127.0.0.1:%u/allowed/hello.txt HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
             "Connection: close\r\n\r\n",
             upstream.http_port, upstream.http_port);
    path = sworn_test_path(work, "request.txt");
    sworn_test_write_file(path, script, strlen(script), 0644);
    free(path);
    const char *agent[] = {"/bin/bash", "-c",
                           "exec 3<>/dev/tcp/127.0.0.1/3128 && cat hello.bin request.txt >&3 && "
                           "timeout 20 cat <&3",
                           NULL};

    sandbox_run_in(&r, work, "probe-forged-hello", agent);
    if (r.status != 0)
        fail_msg("the agent could not send its hello: status %d\n%s%s", r.status, r.out, r.err);
    if (strstr(r.out, "hello\n") != NULL || strstr(r.out, " 200 ") != NULL)
        fail_msg("a request behind a forged hello was served:\n%s", r.out);
    printf("  the proxy answered: %.*s\n", (int)strcspn(r.out, "\r\n"), r.out);
    sworn_test_run_free(&r);
    tail = sworn_stack_tail(&stack, SWORN_SBX_TAIL);
    for (size_t i = 0; i < tail->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = tail->tail->entries[i];
        const Sworn__V1__Principal *p;

        if (e->kind_case != SWORN__V1__ENTRY__KIND_DECISION)
            continue;
        p = e->decision->request->principal;
        if (p != NULL &&
            (strcmp(p->id, "operator") == 0 || strcmp(p->sandbox, "forged-sandbox") == 0))
            fail_msg("a decision names the forged hello's principal %s, sandbox %s", p->id,
                     p->sandbox);
    }
    sworn__v1__admin_response__free_unpacked(tail, NULL);
}

/* ---- escapes through /proc and descriptors ---- */

/* Another process's root (/proc/1/root is the sandbox's own; every pid inside /proc): a host
 * file stays out of reach, and so does the stack's vault. */
static void test_proc_root_escape(void **state)
{
    char vault[600];

    (void)state;
    snprintf(vault, sizeof(vault), "%s/vault.json", stack.dir);
    /* The control: on the host, a process's root leads to the marker (our own: pid 1 may be
     * another user namespace's when the tests run in a container). */
    expect_open_on_host("proc-root", "self", marker, NULL);
    expect_blocked("proc-root", "1", marker, NULL);
    expect_blocked("proc-root", "all", marker, NULL);
    expect_blocked("proc-root", "all", vault, NULL);
    expect_blocked("proc-root", "1", "/etc/shadow", NULL);
}

/* Descriptors the caller leaked into sworn-run (no close-on-exec): a folder of the host, a
 * connection to decisiond's admin socket, a host file open for writing. The agent gets 0, 1
 * and 2 alone. */
static void test_leaked_descriptor(void **state)
{
    int dir = open(stack.dir, O_RDONLY | O_DIRECTORY);
    int admin = sworn_stack_connect(stack.admin);
    int host_file = open(marker, O_WRONLY | O_APPEND);

    (void)state;
    assert_true(dir >= 0 && admin >= 0 && host_file >= 0);
    /* sworn_stack_connect sets close-on-exec; the leak is the point here. */
    assert_int_equal(fcntl(admin, F_SETFD, 0), 0);
    expect_open_on_host("fds", NULL); /* the control: the probe sees what it inherits */
    expect_blocked("fds", NULL);
    close(dir);
    close(admin);
    close(host_file);
}

/* A terminal on the agent's standard input, the controlling terminal of sworn-run's session:
 * TIOCSTI would type into the shell that started sworn-run (CVE-2017-5226). */
static void test_terminal_injection(void **state)
{
    const char *argv[SWORN_SBX_ARGS_MAX], *agent[] = {"./sworn-probe", "tiocsti", NULL};
    char *work = sworn_sbx_work_new("work");
    struct sworn_sbx_pty_run pr;

    (void)state;
    run_argv(argv, work, NULL, agent);
    sworn_sbx_run_under_pty(argv, &pr);
    sworn_sbx_expect_work_returned(work);
    if (pr.status != 0 || strncmp(pr.out, "BLOCKED ", 8) != 0)
        fail_msg("tiocsti from the sandbox: status %d, %s", pr.status, pr.out);
    printf("  %s", pr.out);
}

/* ---- what the seccomp filter and the dropped capabilities refuse ---- */

/* New namespaces, mounts, setns into pid 1's namespaces, chroot, device nodes. */
static void test_namespace_escapes(void **state)
{
    (void)state;
    expect_blocked("mount", NULL);
    expect_blocked("unshare-user", NULL);
    expect_blocked("setns", NULL);
    expect_blocked("chroot", NULL);
    expect_blocked("mknod", NULL);
}

/* The kernel interfaces an agent has no business calling (docs/sandbox.md, "Seccomp"). Each is
 * first shown to work on the host (as root), so the refusal inside is the sandbox's. */
static void test_refused_syscalls(void **state)
{
    static const char *const calls[] = {"bpf", "perf", "userfaultfd", "keyctl", "io_uring"};

    (void)state;
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        expect_open_on_host(calls[i], NULL);
        expect_blocked(calls[i], NULL);
    }
}

/* ---- the end of a sandbox ---- */

/* Fail when folder (if it exists) holds any entry. */
static void expect_folder_empty(const char *folder)
{
    DIR *d = opendir(folder);
    struct dirent *e;

    if (d == NULL && errno == ENOENT)
        return;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        closedir(d);
        fail_msg("%s/%s is left after the sandbox ended", folder, e->d_name);
    }
    closedir(d);
}

/* Every namespace of the agent is its own; it runs as uid 1000 inside and a uid of its own
 * outside, without capabilities, with no_new_privs and a seccomp filter. When it ends, nothing of
 * the sandbox is left running (no process of sworn-run's tree, none with the agent's uid in its
 * namespaces) or on disk (the work folder, the stack's sandboxes folder). */
static void test_nothing_left(void **state)
{
    static struct proc desc[PROCS_MAX], all[PROCS_MAX];
    static const char *const ns[] = {"user", "mnt", "net", "pid", "ipc", "uts", "cgroup"};
    const char *agent_argv[] = {"./sworn-probe", "hold", NULL};
    struct proc agent;
    size_t ndesc, nall;
    char path[64], status[4096], sandboxes[600], agent_pidns[64], agent_userns[64];
    static struct sworn_sbx_live l; /* static: the teardown may reach it after a failure */
    const char *line;

    (void)state;
    live_start(&l, "probe-hold", agent_argv);
    line = sworn_sbx_live_line(&l);
    if (strncmp(line, "HOLD ", 5) != 0 || strstr(line, " uid=1000") == NULL)
        fail_msg("the agent says: %s (expected uid 1000 inside)", line);
    agent = find_agent(l.pid, desc, &ndesc);
    printf("  agent: pid %ld outside, uid %lu outside; %zu processes under sworn-run\n",
           (long)agent.pid, (unsigned long)agent.uid, ndesc);
    assert_true(agent.uid != 0 && agent.uid != getuid() && agent.euid == agent.uid);
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
        if (same_ns(agent.pid, getpid(), ns[i]))
            fail_msg("the agent shares the %s namespace of the host", ns[i]);
    sworn_sbx_ns_name(agent.pid, "pid", agent_pidns, sizeof(agent_pidns));
    sworn_sbx_ns_name(agent.pid, "user", agent_userns, sizeof(agent_userns));
    assert_true(agent_pidns[0] != '\0' && agent_userns[0] != '\0');
    snprintf(path, sizeof(path), "/proc/%ld/status", (long)agent.pid);
    assert_int_equal(sworn_test_read_proc(path, status, sizeof(status)), 0);
    if (strstr(status, "\nNoNewPrivs:\t1\n") == NULL ||
        strstr(status, "\nCapEff:\t0000000000000000\n") == NULL ||
        strstr(status, "\nCapPrm:\t0000000000000000\n") == NULL ||
        strstr(status, "\nCapBnd:\t0000000000000000\n") == NULL ||
        strstr(status, "\nSeccomp:\t2\n") == NULL)
        fail_msg("the agent's status (no_new_privs, no capabilities, a seccomp filter):\n%s",
                 status);

    assert_int_equal(sworn_sbx_live_end(&l), 0);
    for (size_t i = 0; i < ndesc; i++)
        if (!proc_gone(&desc[i]))
            fail_msg("%s (pid %ld, uid %lu) of the sandbox still runs after it ended", desc[i].comm,
                     (long)desc[i].pid, (unsigned long)desc[i].uid);
    /* A process that left sworn-run's tree (a double fork) is still in the sandbox's pid and
     * user namespaces, with the agent's uid. The uid alone does not name this sandbox: sworn-runs
     * of other state folders (other tests' stacks, running in parallel) may take the same uid. */
    nall = procs_all(all, PROCS_MAX);
    for (size_t i = 0; i < nall; i++) {
        char pidns[64], userns[64];

        if (all[i].uid != agent.uid && all[i].euid != agent.uid)
            continue;
        sworn_sbx_ns_name(all[i].pid, "pid", pidns, sizeof(pidns));
        sworn_sbx_ns_name(all[i].pid, "user", userns, sizeof(userns));
        if (strcmp(pidns, agent_pidns) == 0 || strcmp(userns, agent_userns) == 0)
            fail_msg("%s (pid %ld, uid %lu) of the sandbox's namespaces runs after it ended",
                     all[i].comm, (long)all[i].pid, (unsigned long)agent.uid);
    }
    /* sworn-run's state folder (--stack: DIR/sandboxes) holds one run folder per running
     * sandbox: none is left. (The uid's lock, in /run/sworn-run/uids, is a flock: released by
     * the kernel when sworn-run exits, which it has.) */
    snprintf(sandboxes, sizeof(sandboxes), "%s/sandboxes", stack.dir);
    expect_folder_empty(sandboxes);
}

int main(void)
{
#define PROBE(t) cmocka_unit_test_teardown(t, canaries_quiet)
    const struct CMUnitTest tests[] = {
        PROBE(test_tcp_host_loopback),
        PROBE(test_tcp_machine_address),
        PROBE(test_tcp_public),
        PROBE(test_ipv6),
        PROBE(test_udp_dns_public),
        PROBE(test_udp_dns_host_resolver),
        PROBE(test_icmp),
        PROBE(test_raw_and_packet_sockets),
        PROBE(test_vsock),
        PROBE(test_netlink_interfaces),
        PROBE(test_curl_noproxy),
        PROBE(test_unset_proxy_variables),
        PROBE(test_control_plane_sockets),
        PROBE(test_read_secrets),
        PROBE(test_write_tiles),
        PROBE(test_kill_control_plane),
        PROBE(test_trace_control_plane),
        PROBE(test_forged_principal),
        PROBE(test_forged_hello),
        PROBE(test_proc_root_escape),
        PROBE(test_leaked_descriptor),
        PROBE(test_terminal_injection),
        PROBE(test_namespace_escapes),
        PROBE(test_refused_syscalls),
        PROBE(test_allowed_request_works),
        PROBE(test_nothing_left),
    };
#undef PROBE

    if (!sworn_sbx_can_run("test_sandbox_probes",
                           "the sandbox, the veth namespace and the canaries need root"))
        return 77;
    probe_bin = sworn_sbx_probe_bin();
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
