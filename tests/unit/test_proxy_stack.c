/*
 * test_proxy_stack.c -- scripts/dev-stack with sworn-proxy in front of decisiond (the fixture's
 * "--proxy"): stack.env names the proxy's URL, hostlink socket and its principal, plain unix
 * socket, CA, configuration and pid; the hostlink serves the invoking uid (no warning about it);
 * the CA is a CA certificate (read by the openssl CLI); the proxy logged "ready" before the script
 * returned; `start-proxy` replaces it (new pid, new port, one more ready line); `start` (a new
 * decisiond) leaves it running; `down` stops it. Without "--proxy" the stack has no proxy at all
 * (no PROXY_ variable, decisiond's proxy_uids unchanged). A request through PROXY_URL to a
 * denied URL gets 403 from the proxy, and the deny is in decisiond's log (admin Tail); so does
 * curl over PROXY_UNIX, while curl straight onto the hostlink (no hello) is refused, recorded
 * and closed without an answer. As root,
 * with --privsep: the proxy runs as sworn-proxy, which decisiond serves on the decision socket.
 */
#define _GNU_SOURCE
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "stack_fixture.h"
#include "testutil.h"

/* Run the command fmt makes through the shell; returns its exit status (-1: it did not exit). */
__attribute__((format(printf, 1, 2))) static int shell(const char *fmt, ...)
{
    char *cmd = NULL;
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = vasprintf(&cmd, fmt, ap);
    va_end(ap);
    assert_true(rc >= 0);
    rc = system(cmd);
    free(cmd);
    return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* How many times the file holds needle. */
static int count_lines(const char *path, const char *needle)
{
    char *text = sworn_test_read_file(path, NULL);
    int n = 0;

    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    free(text);
    return n;
}

/* Whether /proc/pid/comm is name. */
static int comm_is(pid_t pid, const char *name)
{
    char path[64], comm[64];
    size_t len = strlen(name);

    snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
    return sworn_test_read_proc(path, comm, sizeof(comm)) == 0 && strncmp(comm, name, len) == 0 &&
           comm[len] == '\n';
}

/* The stack of the running test: the teardown stops what a failed test left up. */
static struct sworn_stack stack;
static char *conf_dir; /* test_callers_proxy_config's folder */

static int down_teardown(void **state)
{
    int rc = 0;

    (void)state;
    if (stack.dir != NULL && sworn_stack_down(&stack) != 0)
        rc = -1; /* a sanitizer report in a log: the test fails */
    if (conf_dir != NULL) {
        sworn_test_rmtree(conf_dir);
        free(conf_dir);
        conf_dir = NULL;
    }
    return rc;
}

/* What a fresh proxy stack must show, whoever runs it. */
static void expect_proxy_up(struct sworn_stack *s)
{
    struct stat st;

    assert_true(strncmp(s->proxy_url, "http://127.0.0.1:", 17) == 0);
    assert_true(atoi(s->proxy_url + 17) > 0);
    assert_true(s->proxy_pid > 0);
    assert_false(sworn_stack_pid_gone(s->proxy_pid));
    assert_true(comm_is(s->proxy_pid, "sworn-proxy"));
    /* The seven variables a client reads, each with a value. */
    assert_int_equal(sworn_stack_sh(s, "for v in PROXY_URL PROXY_SOCKET PROXY_PRINCIPAL PROXY_UNIX "
                                       "PROXY_CA PROXY_CONFIG PROXY_PID; do "
                                       "grep -q \"^$v=.\" stack.env || exit 1; done"),
                     0);
    assert_int_equal(stat(s->proxy_socket, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(sworn_stack_sh(s, "test \"$PROXY_SOCKET\" = \"$PWD/proxy/hostlink.sock\" && "
                                       "test \"$PROXY_UNIX\" = \"$PWD/proxy/agent.sock\""),
                     0);
    assert_string_equal(s->proxy_principal, "agent-1");
    assert_int_equal(stat(s->proxy_unix, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    /* The CA a client trusts: a CA certificate, as the openssl CLI reads it. */
    assert_int_equal(sworn_stack_sh(s, "openssl x509 -in \"$PROXY_CA\" -noout -text | "
                                       "grep -q 'CA:TRUE'"),
                     0);
    assert_int_equal(sworn_stack_sh(s, "test \"$PROXY_CA\" = \"$PWD/proxy-ca/ca.crt\""), 0);
    /* The configuration it runs on is one the proxy itself accepts, and its hostlink lists the
     * uid that runs sworn-run (the invoking one): no warning about it. */
    assert_int_equal(sworn_stack_sh(s, "\"$PROXY_BIN\" --check-config --config \"$PROXY_CONFIG\" "
                                       ">/dev/null 2>check.err && ! grep -q listen.hostlink "
                                       "check.err && grep -qx \"    uids: \\[$(id -u)\\]\" "
                                       "\"$PROXY_CONFIG\""),
                     0);
    /* Ready before the script returned: the line is there already, no waiting. */
    assert_int_equal(count_lines(s->proxy_log, "\"event\":\"ready\""), 1);
}

static void expect_down(struct sworn_stack *s)
{
    pid_t proxy = s->proxy_pid, daemon = s->decisiond_pid;

    assert_int_equal(sworn_stack_down(s), 0);
    assert_true(sworn_stack_pid_gone(proxy));
    assert_true(sworn_stack_pid_gone(daemon));
}

static void test_up_start_proxy_down(void **state)
{
    struct sworn_stack *const sp = &stack;
    pid_t first, daemon;

    (void)state;
    assert_int_equal(sworn_stack_up(sp, "--no-tpm --file-key --proxy"), 0);
    expect_proxy_up(sp);
    /* A development stack: one uid for everything, the invoking one is the proxy's peer uid. */
    assert_int_equal(sworn_stack_sh(sp, "grep -qx \"  proxy_uids: \\[$(id -u)\\]\" decisiond.yaml"),
                     0);

    /* start-proxy: the old proxy is stopped, a new one bound a new port and logged ready. */
    first = sp->proxy_pid;
    assert_int_equal(sworn_stack_start_proxy(sp), 0);
    assert_true(sp->proxy_pid > 0 && sp->proxy_pid != first);
    assert_true(sworn_stack_pid_gone(first));
    assert_false(sworn_stack_pid_gone(sp->proxy_pid));
    assert_int_equal(count_lines(sp->proxy_log, "\"event\":\"ready\""), 2);
    assert_int_equal(sworn_stack_sh(sp, "grep -qx \"PROXY_URL=%s\" stack.env", sp->proxy_url), 0);

    /* start (a new decisiond after a stop) leaves the proxy as it is. */
    daemon = sp->decisiond_pid;
    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    assert_int_equal(sworn_stack_start(sp), 0);
    assert_true(sp->decisiond_pid != daemon);
    assert_false(sworn_stack_pid_gone(sp->proxy_pid));
    assert_int_equal(count_lines(sp->proxy_log, "\"event\":\"ready\""), 2);

    expect_down(sp);
}

static void test_no_proxy_by_default(void **state)
{
    struct sworn_stack *const sp = &stack;

    (void)state;
    assert_int_equal(sworn_stack_up(sp, "--no-tpm --file-key"), 0);
    assert_string_equal(sp->proxy_url, "");
    assert_string_equal(sp->proxy_ca, "");
    assert_int_equal(sp->proxy_pid, 0);
    assert_int_equal(sworn_stack_sh(sp, "! grep -q '^PROXY_' stack.env && test ! -e proxy.yaml && "
                                        "test ! -e proxy.pid"),
                     0);
    assert_int_equal(sworn_stack_sh(sp, "grep -qx \"  proxy_uids: \\[$(id -u)\\]\" decisiond.yaml"),
                     0);
    assert_int_equal(sworn_stack_down(sp), 0);
}

/* The stack's own --proxy-config: the caller's file is used where it is, and read for the
 * variables (its tcp listener's port file, its unix listener, its CA). */
static void test_callers_proxy_config(void **state)
{
    struct sworn_stack *const sp = &stack;
    char *dir = conf_dir = sworn_test_tmpdir("proxyconf"), opts[1024];
    const char *proxy_bin = getenv("SWORN_PROXY_BIN"); /* set by the build (tests/CMakeLists.txt) */

    (void)state;
    assert_non_null(proxy_bin);
    assert_int_equal(shell("mkdir -m 0700 %s/ca %s/run && %s ca init %s/ca >/dev/null && "
                           "cat > %s/proxy.yaml <<EOF\n"
                           "listen:\n"
                           "  - unix: %s/run/agent.sock\n"
                           "    principal: agent-1\n"
                           "  - tcp: \"127.0.0.1:0\"\n"
                           "    principal: agent-1\n"
                           "    port_file: %s/run/port\n"
                           "decisiond:\n"
                           "  socket: %s/run/decision.sock\n"
                           "ca:\n"
                           "  cert: %s/ca/ca.crt\n"
                           "  key: %s/ca/ca.key\n"
                           "log:\n"
                           "  file: %s/run/proxy.log\n"
                           "EOF",
                           dir, dir, proxy_bin, dir, dir, dir, dir, dir, dir, dir, dir),
                     0);
    snprintf(opts, sizeof(opts), "--no-tpm --file-key --proxy-config %s/proxy.yaml", dir);
    assert_int_equal(sworn_stack_up(sp, opts), 0);
    assert_int_equal(
        sworn_stack_sh(sp,
                       "test \"$PROXY_CONFIG\" = %s/proxy.yaml && "
                       "test \"$PROXY_SOCKET\" = %s/run/agent.sock && "
                       "test \"$PROXY_UNIX\" = %s/run/agent.sock && "
                       "test \"$PROXY_PRINCIPAL\" = agent-1 && "
                       "test \"$PROXY_CA\" = %s/ca/ca.crt && "
                       "test \"$PROXY_LOG\" = %s/run/proxy.log && "
                       "test \"$PROXY_URL\" = \"http://127.0.0.1:$(cat %s/run/port)\" && "
                       "test ! -e proxy.yaml",
                       dir, dir, dir, dir, dir, dir),
        0);
    assert_true(comm_is(sp->proxy_pid, "sworn-proxy"));
    assert_int_equal(count_lines(sp->proxy_log, "\"event\":\"ready\""), 1);
    expect_down(sp);
}

/* Among the newest log entries: a deny (rule demo-denied) of GET http://127.0.0.1:8080<path>
 * from agent-1, made of the request the proxy built. */
static void expect_recorded_deny(struct sworn_stack *s, const char *path)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(s, 8);
    int found = 0;

    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];
        const Sworn__V1__AuthorizationRequest *q = sworn_stack_decision_on(e, path);

        if (q == NULL)
            continue;
        assert_int_equal(e->decision->effect, SWORN__V1__EFFECT__EFFECT_DENY);
        assert_string_equal(e->decision->rule_id, "demo-denied");
        assert_string_equal(q->principal->id, "agent-1");
        assert_string_equal(q->resource->host, "127.0.0.1");
        assert_int_equal(q->resource->port, 8080);
        assert_string_equal(q->context->method, "GET");
        found++;
    }
    if (found != 1)
        fail_msg("%d recorded decisions for %s among the newest entries, not 1", found, path);
    sworn__v1__admin_response__free_unpacked(r, NULL);
}

/* The newest decision is the refusal of a connection to the hostlink that sent no hello: a DENY
 * without a rule, operation hostlink.hello, the listener's principal with no sandbox and the
 * peer's uid; and no decision among the newest entries names path. */
static void expect_hostlink_refused(struct sworn_stack *s, const char *path)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(s, 8);
    const Sworn__V1__DecisionRecord *last = NULL;

    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];

        if (e->kind_case != SWORN__V1__ENTRY__KIND_DECISION)
            continue;
        last = e->decision;
        assert_true(last->request->resource == NULL ||
                    strcmp(last->request->resource->path, path) != 0);
    }
    assert_non_null(last);
    assert_int_equal(last->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(last->rule_id, "");
    assert_string_equal(last->request->operation, "hostlink.hello");
    assert_non_null(last->request->refusal);
    assert_string_equal(last->reason, "refused by the proxy: the hostlink hello's length is above "
                                      "1024 bytes (not a hello)");
    assert_string_equal(last->request->principal->id, "agent-1");
    assert_string_equal(last->request->principal->sandbox, "");
    assert_int_equal(last->request->principal->uid, (uint32_t)getuid());
    assert_int_equal(last->request->principal->sandbox_start_index, 0);
    sworn__v1__admin_response__free_unpacked(r, NULL);
}

/* curl through the tcp listener to a URL the sample policy denies: the proxy answers 403 with a
 * JSON body (nothing listens on port 8080: nothing was forwarded), and the deny is recorded. */
static void test_denied_through_proxy(void **state)
{
    struct sworn_stack *const sp = &stack;

    (void)state;
    assert_int_equal(sworn_stack_up(sp, "--no-tpm --file-key --proxy"), 0);
    assert_int_equal(sworn_stack_sh(sp,
                                    "code=$(curl -sS -o body.json -w '%%{http_code}' "
                                    "--max-time 20 -x \"$PROXY_URL\" "
                                    "http://127.0.0.1:8080/denied/secrets) && "
                                    "test \"$code\" = 403 && /usr/bin/python3 -c 'import json,sys; "
                                    "json.load(open(sys.argv[1]))' body.json"),
                     0);
    expect_recorded_deny(sp, "/denied/secrets");
    /* The plain unix socket serves the same: curl over it, the request line in absolute form as
     * a proxy receives it (--request-target). */
    assert_int_equal(sworn_stack_sh(sp, "code=$(curl -sS -o /dev/null -w '%%{http_code}' "
                                        "--max-time 20 --unix-socket \"$PROXY_UNIX\" "
                                        "--request-target http://127.0.0.1:8080/denied/other "
                                        "http://127.0.0.1:8080/) && test \"$code\" = 403"),
                     0);
    expect_recorded_deny(sp, "/denied/other");
    /* The hostlink is sworn-run's relay's: curl sends no hello, so its request line is read as
     * one (a length far above 1024), refused and recorded, and the connection closed without an
     * answer (curl: "Empty reply from server", exit 52); the request is never decided. */
    assert_int_equal(sworn_stack_sh(sp, "rc=0; code=$(curl -sS -o /dev/null -w '%%{http_code}' "
                                        "--max-time 20 --unix-socket \"$PROXY_SOCKET\" "
                                        "--request-target http://127.0.0.1:8080/denied/hostlink "
                                        "http://127.0.0.1:8080/ 2>curl.err) || rc=$?; "
                                        "test \"$rc\" = 52 && test \"$code\" = 000"),
                     0);
    expect_hostlink_refused(sp, "/denied/hostlink");
    expect_down(sp);
}

/* As root with --privsep: the proxy runs as sworn-proxy, decisiond serves that uid on the
 * decision socket (0600, sworn-proxy's); the proxy's folder and CA key stay root's (it binds and
 * reads them before it drops to its user). */
static void test_privsep_proxy(void **state)
{
    struct sworn_stack *const sp = &stack;
    struct passwd *pw = getpwnam("sworn-proxy");
    char path[600];
    struct stat st;

    (void)state;
    assert_non_null(pw); /* scripts/install-deps makes it */
    assert_int_equal(sworn_stack_up(sp, "--no-tpm --privsep --proxy"), 0);
    expect_proxy_up(sp);
    assert_int_equal(sworn_stack_sh(sp, "test \"$(ps -o user= -p \"$PROXY_PID\")\" = sworn-proxy"),
                     0);
    assert_int_equal(sworn_stack_sh(sp, "grep -qx '  proxy_uids: \\[0, %lu\\]' decisiond.yaml",
                                    (unsigned long)pw->pw_uid),
                     0);
    assert_int_equal(stat(sp->decision, &st), 0);
    assert_int_equal(st.st_uid, pw->pw_uid);
    assert_int_equal(st.st_mode & 0777, 0600);
    snprintf(path, sizeof(path), "%s/proxy-ca/ca.key", sp->dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(sworn_stack_sh(sp, "code=$(curl -sS -o /dev/null -w '%%{http_code}' "
                                        "--max-time 20 -x \"$PROXY_URL\" "
                                        "http://127.0.0.1:8080/denied/secrets) && "
                                        "test \"$code\" = 403"),
                     0);
    expect_recorded_deny(sp, "/denied/secrets");
    expect_down(sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_up_start_proxy_down, down_teardown),
        cmocka_unit_test_teardown(test_no_proxy_by_default, down_teardown),
        cmocka_unit_test_teardown(test_callers_proxy_config, down_teardown),
        cmocka_unit_test_teardown(test_denied_through_proxy, down_teardown),
    };
    const struct CMUnitTest root_tests[] = {
        cmocka_unit_test_teardown(test_privsep_proxy, down_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    /* The separated stack needs root (users to separate into); the rest runs as anyone. */
    if (geteuid() == 0)
        rc |= cmocka_run_group_tests(root_tests, NULL, NULL);
    else
        fprintf(stderr, "test_proxy_stack: not root: the --privsep case does not run\n");
    return rc;
}
