/*
 * test_sandbox.c -- sworn-run end to end (docs/sandbox.md): the real program, run as root against
 * a real dev stack (decisiond, sworn-proxy and its hostlink) and a real nginx upstream, with the
 * agent a shell command inside the sandbox. What the record holds is read back with the admin
 * Tail call.
 *
 * What each case holds to:
 *   - the exit status is the agent's (an exit code, 128 + a signal), 127 for a command not found,
 *     124 when the wall-clock limit runs out, 128 + N when sworn-run is stopped by signal N, 125
 *     when the start cannot be recorded (and then the command never ran);
 *   - SandboxStarted holds the principal, the name, the command, the limits, the agent's uid, the
 *     mode, and the SHA-256 of the configuration's canonical text (recomputed here from
 *     docs/sandbox.md's format with the openssl command); SandboxEnded names it, with the
 *     reason and code of the end;
 *   - a request policy allows goes out through the proxy from inside, and its decision names the
 *     sandbox (name, start index, agent uid); a denied one is recorded as denied;
 *   - the agent's environment is exactly the documented one plus the configured tokens, its
 *     files are where the docs say, the filesystem is read-only but /work and /tmp, the secrets
 *     are masked and the stack's folder is not there;
 *   - after the end nothing of the sandbox is left running (no process of the agent's uid) or
 *     on disk (the run folder and its cgroups are gone; the work folder too unless --keep);
 *   - the memory limit holds (the agent is killed, SIGNALED 9).
 * Waits are for events: sworn-run's exit, a file the agent writes (inotify); never a sleep.
 */
#define _GNU_SOURCE
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox_fixture.h"
#include "stack_fixture.h"
#include "sworn.pb-c.h"
#include "testutil.h"
#include "upstream_fixture.h"

#define TOKEN "sym_sandboxtest0123456789abcdef0123456789"

static struct {
    struct sworn_stack s;
    struct sworn_upstream u;
    char *work; /* a folder the tests give with --work */
} T;

/* ---- running sworn-run ---- */

struct run {
    int status;     /* sworn-run's exit status (or 128 + its signal) */
    char out[8192]; /* the agent's standard output */
};

/* sworn_sbx_spawn with its standard output into the file out_path (created or truncated). */
static pid_t spawn_to(const char *const *argv, const char *out_path)
{
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pid_t pid;

    assert_true(fd >= 0);
    pid = sworn_sbx_spawn(argv, -1, fd, -1);
    close(fd);
    return pid;
}

/* sworn-run [options...] -- /bin/sh -c cmd; options end with NULL. */
static void run_v(struct run *r, const char *cmd, va_list ap)
{
    const char *options[SWORN_SBX_ARGS_MAX / 2], *argv[SWORN_SBX_ARGS_MAX];
    const char *agent[] = {"/bin/sh", "-c", cmd, NULL};
    size_t n = 0;
    char *out = sworn_test_path(T.s.dir, "agent.out");
    char *text;
    size_t len;

    while (n < SWORN_SBX_ARGS_MAX / 2 - 1 && (options[n] = va_arg(ap, const char *)) != NULL)
        n++;
    options[n] = NULL;
    sworn_sbx_argv(argv, NULL, options, agent);
    r->status = sworn_sbx_reap(spawn_to(argv, out));
    text = sworn_test_read_file(out, &len);
    snprintf(r->out, sizeof(r->out), "%.*s", (int)len, text);
    free(text);
    free(out);
}

static void run(struct run *r, const char *cmd, ...)
{
    va_list ap;

    va_start(ap, cmd);
    run_v(r, cmd, ap);
    va_end(ap);
}

/* ---- the record ---- */

static void expect_end(uint64_t start_index, Sworn__V1__SandboxEndReason reason, uint32_t code)
{
    Sworn__V1__AdminResponse *r;
    const Sworn__V1__Entry *e =
        sworn_sbx_newest(&T.s, SWORN__V1__ENTRY__KIND_SANDBOX_ENDED, &r, NULL);

    assert_non_null(e);
    assert_int_equal(e->sandbox_ended->start_index, start_index);
    assert_int_equal(e->sandbox_ended->reason, reason);
    assert_int_equal(e->sandbox_ended->code, code);
    assert_string_equal(e->sandbox_ended->operator_, "root");
    sworn__v1__admin_response__free_unpacked(r, NULL);
}

/* The newest SandboxStarted's index (and its agent uid). */
static uint64_t last_start(uid_t *agent_uid)
{
    Sworn__V1__AdminResponse *r;
    uint64_t index = 0;
    const Sworn__V1__Entry *e =
        sworn_sbx_newest(&T.s, SWORN__V1__ENTRY__KIND_SANDBOX_STARTED, &r, &index);

    assert_non_null(e);
    if (agent_uid != NULL)
        *agent_uid = e->sandbox_started->agent_uid;
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return index;
}

/* ---- fixtures ---- */

static int setup(void **state)
{
    char opts[1024];

    (void)state;
    if (sworn_upstream_start(&T.u) != 0)
        return -1;
    /* What the allowed request fetches: a file nginx serves. */
    {
        char path[700];
        snprintf(path, sizeof(path), "%s/www/allowed", T.u.dir);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            return -1;
        snprintf(path, sizeof(path), "%s/www/allowed/from-sandbox", T.u.dir);
        sworn_test_write_file(path, "upstream\n", 9, 0644);
    }
    snprintf(opts, sizeof(opts), "--no-tpm --file-key --proxy --upstream-ca %s", T.u.ca_cert);
    if (sworn_stack_up(&T.s, opts) != 0)
        return -1;
    T.work = sworn_test_tmpdir("sandbox-work");
    return 0;
}

static int teardown(void **state)
{
    int rc;

    (void)state;
    sworn_test_tmpdir_drop(&T.work);
    rc = sworn_stack_down(&T.s);
    sworn_upstream_stop(&T.u);
    return rc;
}

/* ---- the cases ---- */

static void test_exit_status(void **state)
{
    struct run r;
    uint64_t start;

    (void)state;
    run(&r, "exit 7", "--stack", T.s.dir, NULL);
    assert_int_equal(r.status, 7);
    start = last_start(NULL);
    expect_end(start, SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED, 7);

    run(&r, "kill -TERM $$", "--stack", T.s.dir, NULL);
    assert_int_equal(r.status, 128 + SIGTERM);
    expect_end(last_start(NULL), SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_SIGNALED,
               SIGTERM);

    run(&r, "exec /no/such/program", "--stack", T.s.dir, NULL);
    assert_int_equal(r.status, 127);

    /* An agent that ends at once can be reaped before sworn-run takes pid 1's listeners: the
     * listeners' message is then still queued in front of pid 1's report, which sworn-run must
     * read past (it once took that message for a short report and exited 125). Whether a run
     * meets that order depends on scheduling: several runs make it likelier; every one must give
     * the agent's status. */
    for (int i = 0; i < 8; i++) {
        run(&r, "exit 3", "--stack", T.s.dir, NULL);
        if (r.status != 3)
            fail_msg("run %d of an agent that exits at once: status %d, want 3", i, r.status);
    }

    run(&r, "sleep 600", "--stack", T.s.dir, "--timeout", "300ms", NULL);
    assert_int_equal(r.status, 124);
    expect_end(last_start(NULL), SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_TIMEOUT, 0);
    assert_int_equal(sworn_sbx_run_folders_left(&T.s), 0);
}

/* The canonical text of docs/sandbox.md for the stack's configuration, hashed by openssl. */
static void expected_digest(const char *name, uint8_t out[32])
{
    char text[2048], cmd[1024], hex[65] = {0};
    char *path = sworn_test_path(T.s.dir, "canon.txt");
    int n = snprintf(text, sizeof(text),
                     "version=1\nprincipal=agent-1\nname=%s\nhostlink=%s\nadmin_socket=%s\n"
                     "proxy_ca=%s\nwork=\nkeep=0\nlimits.timeout_ms=60000\n"
                     "limits.memory=268435456\nlimits.processes=64\nlimits.connections=64\n",
                     name, T.s.proxy_socket, T.s.admin, T.s.proxy_ca);
    FILE *p;

    sworn_test_write_file(path, text, (size_t)n, 0600);
    snprintf(cmd, sizeof(cmd), "openssl dgst -sha256 -r %s", path);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%64s", hex), 1);
    assert_int_equal(pclose(p), 0);
    for (size_t i = 0; i < 32; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    free(path);
}

static void test_record(void **state)
{
    struct run r;
    Sworn__V1__AdminResponse *resp;
    const Sworn__V1__Entry *e;
    Sworn__V1__SandboxStarted *st;
    uint64_t start = 0;
    uint8_t digest[32];

    (void)state;
    run(&r, "echo hello", "--stack", T.s.dir, "--name", "rec-1", "--timeout", "60s", "--memory",
        "256M", "--processes", "64", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "hello\n");
    e = sworn_sbx_newest(&T.s, SWORN__V1__ENTRY__KIND_SANDBOX_STARTED, &resp, &start);
    assert_non_null(e);
    st = e->sandbox_started;
    assert_string_equal(st->principal, "agent-1");
    assert_string_equal(st->name, "rec-1");
    assert_int_equal(st->sandbox_id.len, 16);
    assert_int_equal(st->n_command, 3);
    assert_string_equal(st->command[0], "/bin/sh");
    assert_string_equal(st->command[2], "echo hello");
    assert_int_equal(st->limits->wall_ms, 60000);
    assert_int_equal(st->limits->memory_bytes, 256u * 1024u * 1024u);
    assert_int_equal(st->limits->processes, 64);
    assert_true(strcmp(st->limits->enforced_by, "cgroup1") == 0 ||
                strcmp(st->limits->enforced_by, "cgroup2") == 0);
    assert_string_equal(st->isolation, "root");
    assert_true(st->agent_uid >= 1000000000u && st->agent_uid < 1000000000u + 65536);
    assert_string_equal(st->operator_, "root");
    expected_digest("rec-1", digest);
    assert_int_equal(st->config_sha256.len, 32);
    assert_memory_equal(st->config_sha256.data, digest, 32);
    sworn__v1__admin_response__free_unpacked(resp, NULL);
    expect_end(start, SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED, 0);
}

/* A request policy allows goes out through the proxy; its decision names the sandbox. */
static void test_request_names_sandbox(void **state)
{
    struct run r;
    char cmd[512];
    Sworn__V1__AdminResponse *resp;
    const Sworn__V1__Entry *e;
    uint64_t start;
    uid_t uid = 0;

    (void)state;
    snprintf(cmd, sizeof(cmd),
             "curl -sS -o /dev/null -w '%%{http_code} ' -x http://127.0.0.1:3128 "
             "http://127.0.0.1:%u/allowed/from-sandbox; "
             "curl -sS -o /dev/null -w '%%{http_code}' -x http://127.0.0.1:3128 "
             "http://127.0.0.1:%u/denied/from-sandbox",
             T.u.http_port, T.u.http_port);
    run(&r, cmd, "--stack", T.s.dir, "--name", "req-1", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "200 403");
    assert_int_equal(sworn_upstream_log_has(&T.u, "/allowed/from-sandbox"), 1);
    assert_int_equal(sworn_upstream_log_has(&T.u, "/denied/from-sandbox"), 0);
    start = last_start(&uid);
    e = sworn_sbx_newest(&T.s, SWORN__V1__ENTRY__KIND_DECISION, &resp, NULL);
    assert_non_null(e);
    /* the newest decision is the denied one; both name the sandbox */
    assert_int_equal(e->decision->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(e->decision->request->principal->id, "agent-1");
    assert_string_equal(e->decision->request->principal->sandbox, "req-1");
    assert_int_equal(e->decision->request->principal->sandbox_start_index, start);
    assert_int_equal(e->decision->request->principal->uid, uid);
    sworn__v1__admin_response__free_unpacked(resp, NULL);
    {
        Sworn__V1__AdminResponse *t = sworn_stack_tail(&T.s, 8);
        int allowed = 0;
        for (size_t i = 0; i < t->tail->n_entries; i++) {
            Sworn__V1__Entry *x = t->tail->entries[i];
            if (sworn_stack_decision_on(x, "/allowed/from-sandbox") != NULL &&
                x->decision->effect == SWORN__V1__EFFECT__EFFECT_ALLOW) {
                assert_string_equal(x->decision->request->principal->sandbox, "req-1");
                assert_int_equal(x->decision->request->principal->sandbox_start_index, start);
                allowed++;
            }
        }
        assert_int_equal(allowed, 1);
        sworn__v1__admin_response__free_unpacked(t, NULL);
    }
}

/* The agent's environment: the documented variables, the configured token, nothing of ours. */
static void test_environment_and_files(void **state)
{
    struct run r;
    char conf[4096];
    char *path = sworn_test_path(T.s.dir, "run-env.yaml");
    int n = snprintf(conf, sizeof(conf),
                     "principal: agent-1\nhostlink: %s\nadmin_socket: %s\nproxy_ca: %s\n"
                     "state_dir: %s/sandboxes\nenv: {GITHUB_TOKEN: " TOKEN "}\n"
                     "files: {github: " TOKEN "}\npass_env: [SWORN_TEST_PASSED]\n",
                     T.s.proxy_socket, T.s.admin, T.s.proxy_ca, T.s.dir);

    (void)state;
    sworn_test_write_file(path, conf, (size_t)n, 0600);
    assert_int_equal(setenv("SWORN_TEST_PASSED", "yes", 1), 0);
    assert_int_equal(setenv("SWORN_TEST_SECRET", "leaked", 1), 0);
    run(&r, "env | sort | tr '\\n' ' '; cat /run/sworn/tokens/github", "--config", path, NULL);
    unsetenv("SWORN_TEST_PASSED");
    unsetenv("SWORN_TEST_SECRET");
    assert_int_equal(r.status, 0);
    assert_string_equal(
        r.out, "ALL_PROXY=http://127.0.0.1:3128 CURL_CA_BUNDLE=/run/sworn/ca-certificates.crt "
               "GITHUB_TOKEN=" TOKEN " GIT_SSL_CAINFO=/run/sworn/ca-certificates.crt "
               "HOME=/work HTTPS_PROXY=http://127.0.0.1:3128 HTTP_PROXY=http://127.0.0.1:3128 "
               "LANG=C.UTF-8 LOGNAME=agent NODE_EXTRA_CA_CERTS=/run/sworn/ca-certificates.crt "
               "NO_PROXY= PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin "
               "PIP_CERT=/run/sworn/ca-certificates.crt PWD=/work "
               "REQUESTS_CA_BUNDLE=/run/sworn/ca-certificates.crt SSL_CERT_FILE=/run/sworn/"
               "ca-certificates.crt SWORN_TEST_PASSED=yes USER=agent all_proxy=http://"
               "127.0.0.1:3128 http_proxy=http://127.0.0.1:3128 https_proxy=http://"
               "127.0.0.1:3128 no_proxy= " TOKEN);
    free(path);
}

/* The filesystem: read-only but /work and /tmp, masked secrets, nothing of the stack. */
static void test_filesystem(void **state)
{
    struct run r;
    char cmd[2048];

    (void)state;
    snprintf(cmd, sizeof(cmd),
             "r=''; "
             "[ -s /etc/shadow ] && r=\"$r shadow-readable\"; "
             "touch /usr/x 2>/dev/null && r=\"$r usr-writable\"; "
             "touch /x 2>/dev/null && r=\"$r root-writable\"; "
             "touch /etc/x 2>/dev/null && r=\"$r etc-writable\"; "
             "echo ok > /work/w && echo ok > /tmp/t || r=\"$r work-or-tmp-not-writable\"; "
             "ls %s >/dev/null 2>&1 && r=\"$r stack-visible\"; "
             "[ -e %s ] && r=\"$r admin-socket-visible\"; "
             "[ -e /run/sworn/proxy ] && r=\"$r proxy-run-visible\"; "
             "ls /sys/kernel >/dev/null 2>&1 && r=\"$r sys-visible\"; "
             "cat /proc/[0-9]*/comm | grep -qE 'sworn-(decisiond|proxy)|nginx|swtpm' && "
             "r=\"$r host-processes\"; "
             "grep -q 'BEGIN CERTIFICATE' /run/sworn/ca-certificates.crt || r=\"$r no-ca\"; "
             "[ \"$(id -u)\" = 1000 ] || r=\"$r uid-$(id -u)\"; "
             "grep -q '^CapEff:.0000000000000000' /proc/self/status || r=\"$r capabilities\"; "
             "grep -q '^NoNewPrivs:.1' /proc/self/status || r=\"$r new-privs\"; "
             "grep -q '^Seccomp:.2' /proc/self/status || r=\"$r no-seccomp\"; "
             "echo \"result:$r\"",
             T.s.dir, T.s.admin);
    run(&r, cmd, "--stack", T.s.dir, "--work", T.work, "--keep", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "result:\n");
    /* --keep: the work folder stays, with what the agent wrote, given back to its owner. */
    {
        char *w = sworn_test_path(T.work, "w");
        struct stat st;
        assert_int_equal(stat(w, &st), 0);
        assert_int_equal(stat(T.work, &st), 0);
        assert_int_equal(st.st_uid, 0);
        free(w);
    }
}

/* After the end nothing is left running or on disk. */
static void test_nothing_left(void **state)
{
    struct run r;
    char *work = sworn_test_tmpdir("sandbox-gone"), agent[512], mark[32];

    (void)state;
    /* Background processes that would outlive a plain exit, and files in /work: one, and a
     * chain of 40000 folders (the removal holds one folder open at a time, whatever the depth).
     * The sleeps' argument is this run's own (a sleep of 1000.PID seconds), so that no other
     * test's process is taken for one of them. */
    snprintf(mark, sizeof(mark), "1000.%ld", (long)getpid());
    snprintf(agent, sizeof(agent),
             "sleep %s & sleep %s & setsid sleep %s & echo data > /work/file; "
             "python3 -c 'import os; os.chdir(\"/work\"); "
             "[(os.mkdir(\"d\"), os.chdir(\"d\")) for i in range(40000)]'; "
             "exit 3",
             mark, mark, mark);
    run(&r, agent, "--stack", T.s.dir, "--work", work, NULL);
    assert_int_equal(r.status, 3);
    /* None of its processes is left. Not by its uid, which another sandbox may take as soon as
     * this one let it go, nor by its pid namespace's name, whose inode number a sandbox started
     * meanwhile may be given again (seen in CI): by the command line only this run used. */
    assert_int_equal(sworn_sbx_processes_named("sleep", mark), 0);
    assert_int_equal(sworn_sbx_run_folders_left(&T.s), 0);
    assert_int_equal(access(work, F_OK), -1); /* no --keep: the work folder is removed */
    /* Its cgroups (named by its sandbox id; other sandboxes may run meanwhile) are gone. */
    {
        Sworn__V1__AdminResponse *resp;
        const Sworn__V1__Entry *e =
            sworn_sbx_newest(&T.s, SWORN__V1__ENTRY__KIND_SANDBOX_STARTED, &resp, NULL);
        char id[33], path[300];
        static const char *const hierarchies[] = {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids",
                                                  "/sys/fs/cgroup/unified", "/sys/fs/cgroup"};
        assert_non_null(e);
        assert_int_equal(e->sandbox_started->sandbox_id.len, 16);
        for (size_t i = 0; i < 16; i++)
            snprintf(id + 2 * i, 3, "%02x", e->sandbox_started->sandbox_id.data[i]);
        sworn__v1__admin_response__free_unpacked(resp, NULL);
        for (size_t i = 0; i < sizeof(hierarchies) / sizeof(hierarchies[0]); i++) {
            snprintf(path, sizeof(path), "%s/sworn-run/%s", hierarchies[i], id);
            if (access(path, F_OK) == 0)
                fail_msg("a cgroup is left: %s", path);
        }
    }
    free(work);
}

static int started_file(void *arg)
{
    return access((const char *)arg, F_OK) == 0;
}

/* SIGTERM to sworn-run: the sandbox is killed, cleaned up, its end recorded as STOPPED. */
static void test_stopped(void **state)
{
    char *work = sworn_test_tmpdir("sandbox-stop");
    char *flag = sworn_test_path(work, "started");
    char *out = sworn_test_path(T.s.dir, "stop.out");
    const char *options[] = {"--work", work, NULL};
    char script[256], mark[32];
    const char *agent[] = {"/bin/sh", "-c", script, NULL};
    const char *argv[SWORN_SBX_ARGS_MAX];
    pid_t pid;
    char *ns;
    size_t len;

    (void)state;
    /* The agent's sleep has an argument only this run uses (test_nothing_left says why). */
    snprintf(mark, sizeof(mark), "1000.%ld", (long)getpid());
    snprintf(script, sizeof(script),
             "readlink /proc/self/ns/pid > /work/ns; mv /work/ns /work/started; exec sleep %s",
             mark);
    sworn_sbx_argv(argv, T.s.dir, options, agent);
    pid = spawn_to(argv, out);
    assert_int_equal(sworn_test_wait_dir(work, started_file, flag, 30000), 0);
    ns = sworn_test_read_file(flag, &len);
    ns[strcspn(ns, "\n")] = '\0';
    assert_true(sworn_sbx_processes_in("pid", ns) >=
                2); /* the sandbox's pid 1 and the agent, at least */
    assert_int_equal(kill(pid, SIGTERM), 0);
    assert_int_equal(sworn_sbx_reap(pid), 128 + SIGTERM);
    expect_end(last_start(NULL), SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_STOPPED,
               SIGTERM);
    assert_int_equal(sworn_sbx_processes_named("sleep", mark), 0);
    free(ns);
    assert_int_equal(access(work, F_OK), -1);
    free(flag);
    free(out);
    free(work);
}

/* No record, no agent: an admin socket that is not there stops it before anything runs. */
static void test_unrecorded_start_runs_nothing(void **state)
{
    struct run r;
    char conf[2048];
    char *path = sworn_test_path(T.s.dir, "run-bad.yaml");
    char *flag = sworn_test_path(T.work, "ran");
    int n = snprintf(conf, sizeof(conf),
                     "principal: agent-1\nhostlink: %s\nadmin_socket: %s/no-such.sock\n"
                     "proxy_ca: %s\nstate_dir: %s/sandboxes\n",
                     T.s.proxy_socket, T.s.dir, T.s.proxy_ca, T.s.dir);

    (void)state;
    sworn_test_write_file(path, conf, (size_t)n, 0600);
    run(&r, "touch /work/ran", "--config", path, "--work", T.work, "--keep", NULL);
    assert_int_equal(r.status, 125);
    assert_int_equal(access(flag, F_OK), -1);
    assert_int_equal(sworn_sbx_run_folders_left(&T.s), 0);
    free(flag);
    free(path);
}

/* The memory limit holds: the agent is killed by the kernel, and the end says so. */
static void test_memory_limit(void **state)
{
    struct run r;

    (void)state;
    run(&r, "exec python3 -c 'x = bytearray(200 * 1024 * 1024); print(len(x))'", "--stack", T.s.dir,
        "--memory", "32M", NULL);
    assert_int_equal(r.status, 128 + SIGKILL);
    assert_string_equal(r.out, "");
    expect_end(last_start(NULL), SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_SIGNALED,
               SIGKILL);
}

/*
 * Unprivileged mode: a whole stack and sworn-run as an ordinary user (nobody, through the
 * util-linux setpriv command), so the agent's uid outside is the caller's and the limits are
 * rlimits; the record says so.
 */
static void test_unprivileged_mode(void **state)
{
    char cmd[4096], *dir, *out, *text;
    size_t len;
    const char *as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp";
    static const char seen[] = "1000\n 1000 65534 1\n65536\n50\nexit=0\n";
    char build_dir[1024];

    (void)state;
    /* The build folder: the one sworn-run was built in (BUILD/sandbox/sworn-run). */
    snprintf(build_dir, sizeof(build_dir), "%s", sworn_test_bin("SWORN_RUN_BIN"));
    *strrchr(build_dir, '/') = '\0';
    *strrchr(build_dir, '/') = '\0';
    dir = sworn_test_tmpdir("sandbox-unpriv");
    assert_int_equal(chown(dir, 65534, 65534), 0);
    snprintf(cmd, sizeof(cmd),
             "%s %s/scripts/dev-stack up %s/s --build %s --no-tpm --file-key >%s/up.log 2>&1",
             as_nobody, sworn_test_source_dir(), dir, build_dir, dir);
    if (system(cmd) != 0) {
        char *log = sworn_test_path(dir, "up.log");
        char *up = sworn_test_read_file(log, &len);
        fail_msg("the unprivileged stack did not come up: %s", up);
    }
    snprintf(cmd, sizeof(cmd),
             "%s %s --stack %s/s --memory 64M --processes 50 -- /bin/sh -c "
             "'id -u; tr -s \" \" < /proc/self/uid_map; ulimit -v; ulimit -p' >%s/agent.out 2>&1; "
             "echo \"exit=$?\" >> %s/agent.out; "
             "%s %s --admin %s/s/admin.sock tail 3 >> %s/agent.out",
             as_nobody, sworn_test_bin("SWORN_RUN_BIN"), dir, dir, dir, as_nobody,
             sworn_test_bin("SWORNCTL_BIN"), dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s %s/scripts/dev-stack down %s/s >/dev/null 2>&1", as_nobody,
             sworn_test_source_dir(), dir);
    assert_int_equal(system(cmd), 0);
    out = sworn_test_path(dir, "agent.out");
    text = sworn_test_read_file(out, &len);
    /* uid 1000 inside is nobody outside; RLIMIT_AS 64 MiB (in KiB) and RLIMIT_NPROC 50 (dash: -p).
     */
    if (strncmp(text, seen, sizeof(seen) - 1) != 0)
        fail_msg("the agent saw: %s", text);
    assert_non_null(strstr(text, "\"kind\":\"sandbox_started\""));
    assert_non_null(strstr(text, "\"enforced_by\":\"rlimit\""));
    assert_non_null(strstr(text, "\"agent_uid\":65534"));
    assert_non_null(strstr(text, "\"isolation\":\"unprivileged\""));
    assert_non_null(strstr(text, "\"kind\":\"sandbox_ended\""));
    assert_non_null(strstr(text, "\"operator\":\"nobody\""));
    free(text);
    free(out);
    sworn_test_tmpdir_drop(&dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_status),
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_request_names_sandbox),
        cmocka_unit_test(test_environment_and_files),
        cmocka_unit_test(test_filesystem),
        cmocka_unit_test(test_nothing_left),
        cmocka_unit_test(test_stopped),
        cmocka_unit_test(test_unrecorded_start_runs_nothing),
        cmocka_unit_test(test_memory_limit),
        cmocka_unit_test(test_unprivileged_mode),
    };
    if (!sworn_sbx_can_run("test_sandbox", "sworn-run's root mode, its cgroups and uid range"))
        return 77;
    return cmocka_run_group_tests(tests, setup, teardown);
}
