/*
 * test_conformance_sandbox.c -- sworn-conformance's probes from inside the sandbox (issue 19;
 * docs/conformance.md) against a real development stack (scripts/dev-stack with sworn-proxy,
 * through stack_fixture.h), an nginx upstream (upstream_fixture.h: its /echo/ writes back the
 * Authorization field it received) and the real sworn-run: every sandbox probe passes (or is
 * skipped with its reason) on the good deployment, and the deliberately broken ones are caught:
 *   - a "sandbox" command that runs the probe program on the host: the T2 escape probes fail and
 *     the canaries hear it;
 *   - the same with a real credential value in the agent's environment and in a file it can read:
 *     the T1 probes fail;
 *   - the same as an unprivileged user with the policy file made writable by everyone: T3's
 *     write probe fails while the vault (0600) stays out of reach;
 *   - tunnel_proxy.py as the proxy: tunnels that do not check the ClientHello's server name, do
 *     not check the Host field inside a terminated tunnel, or do not terminate TLS at all.
 *   - the proxy's DNS rebinding protection switched off (upstream.allow_private: 127.0.0.0/8):
 *     T2.dns-rebinding fails (the loopback canary hears the request), and a runner's resolver the
 *     proxy does not ask is an error.
 * The stack's proxy asks the runner's resolver (upstream.nameservers: [127.0.0.1:dns_port], in
 * place of dev-stack's allow_private for loopback: every upstream here is an IP literal).
 * Needs root (sworn-run's root mode, the canaries' network namespace) and sworn-run: without
 * either it exits 77 (skipped) and says why.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/sha.h>

#include "sandbox_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "upstream_fixture.h"

static struct sworn_stack stack;
static struct sworn_upstream upstream;
/* The vault (write_vault): credential 0 "demo" as dev-stack makes it, "bound" bound to another
 * principal (agent-2) and "shared" to every principal ("*"), the last two for the echo's
 * /echo/bound/ and /echo/shared/ (policy rules naming them). */
enum { DEMO, BOUND, SHARED, NCRED };
static const char *const cred_id[NCRED] = {"demo", "bound", "shared"};
static char sym[NCRED][64], val[NCRED][64];
/* SHA-256 of each value and of its token part, then of the OAuth client's secret ("client", a
 * form credential: oauth_upstream.py's CLIENT_SECRET, at its token endpoints). */
#define NDIGESTS (2 * NCRED + 1)
#define CLIENT_SECRET "cs+5f0c/2a9e=&x"
static char digests[NDIGESTS][65];
static char client_sym[64];
static pid_t oauth_pid; /* oauth_upstream.py: the token endpoints */
static char run2[1024]; /* sworn-run's configuration for agent-2's sandboxes (add_agent2) */
static uint16_t oauth_port;

static char *fakes;       /* a 0755 folder for the fake sandbox commands (nobody runs one) */
static uint16_t dns_port; /* where the proxy's upstream.nameservers points: the runner's resolver */
#define REBIND_NAME "rebind.conformance.example"
/* dev-stack's line, replaced in setup: the proxy asks the runner's resolver and protects loopback
 */
#define DEV_ALLOW_PRIVATE "  allow_private: [\"127.0.0.0/8\", \"::1/128\"]\n"

static void hex(const unsigned char *d, char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void random_text(char *out, size_t n)
{
    static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char b[64];
    FILE *f = fopen("/dev/urandom", "rb");

    assert_non_null(f);
    assert_int_equal(fread(b, 1, n, f), n);
    fclose(f);
    for (size_t i = 0; i < n; i++)
        out[i] = abc[b[i] % (sizeof(abc) - 1)];
    out[n] = '\0';
}

/* The vault: its credentials' values are the test's own (never in an argv), written 0600. */
static char *write_vault(const char *dir)
{
    /* rnd: 40 random characters at most, and their NUL. */
    char *path = sworn_test_path(dir, "vault.json"), text[4096], rnd[41];
    size_t len;
    int n;

    len = (size_t)snprintf(text, sizeof(text), "{\"version\": 1, \"credentials\": [\n");
    for (int i = 0; i < NCRED; i++) {
        unsigned char d[32];

        random_text(rnd, 40);
        snprintf(sym[i], sizeof(sym[i]), "sym_%s", rnd);
        random_text(rnd, 24);
        snprintf(val[i], sizeof(val[i]), "Bearer %s-real-token-%s", cred_id[i], rnd);
        SHA256((const unsigned char *)val[i], strlen(val[i]), d);
        hex(d, digests[2 * i]);
        SHA256((const unsigned char *)strchr(val[i], ' ') + 1, strlen(strchr(val[i], ' ') + 1), d);
        hex(d, digests[2 * i + 1]);
        if (i == DEMO)
            n = snprintf(text + len, sizeof(text) - len,
                         "{\"id\": \"demo\", \"symbolic\": \"%s\", \"value\": \"%s\", "
                         "\"header\": \"authorization\", \"principals\": [\"*\"], "
                         "\"destinations\": [{\"scheme\": \"http\", \"host\": \"127.0.0.1\", "
                         "\"port\": 8080, \"path_prefix\": \"/with-credential/\"}]},\n",
                         sym[i], val[i]);
        else
            n = snprintf(text + len, sizeof(text) - len,
                         "{\"id\": \"%s\", \"symbolic\": \"%s\", \"value\": \"%s\", "
                         "\"header\": \"authorization\", \"principals\": [\"%s\"], "
                         "\"destinations\": [{\"scheme\": \"http\", \"host\": \"127.0.0.1\", "
                         "\"port\": %u, \"path_prefix\": \"/echo/%s/\"}]}%s\n",
                         cred_id[i], sym[i], val[i], i == BOUND ? "agent-2" : "*",
                         upstream.http_port, cred_id[i], i + 1 < NCRED ? "," : "");
        assert_true(n > 0 && (size_t)n < sizeof(text) - len);
        len += (size_t)n;
    }
    {
        unsigned char d[32];

        random_text(rnd, 40);
        snprintf(client_sym, sizeof(client_sym), "sym_%s", rnd);
        SHA256((const unsigned char *)CLIENT_SECRET, strlen(CLIENT_SECRET), d);
        hex(d, digests[2 * NCRED]);
    }
    n = snprintf(text + len, sizeof(text) - len,
                 ",{\"id\": \"client\", \"symbolic\": \"%s\", \"value\": \"" CLIENT_SECRET
                 "\", \"form\": \"client_secret\", \"principals\": [\"agent-1\"], "
                 "\"destinations\": [{\"scheme\": \"http\", \"host\": \"127.0.0.1\", "
                 "\"port\": %u}]}\n]}\n",
                 client_sym, oauth_port);
    assert_true(n > 0 && (size_t)n < sizeof(text) - len);
    sworn_test_write_file(path, text, len + (size_t)n, 0600);
    return path;
}

/* The sample policy, the token endpoints' rule (the OAuth client's secret) and the echo's rules:
 * /echo/bound/ and /echo/shared/ with their credentials (first: the first matching allow
 * decides), everything else under /echo/ with none. */
static char *write_policy(const char *dir)
{
    static const char rule[] = "\n  - id: conformance-oauth\n    effect: allow\n"
                               "    reason: \"conformance: the token endpoints, the client's "
                               "secret\"\n"
                               "    operations: [\"http.request\"]\n    resource:\n"
                               "      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
                               "      paths: [\"/token/**\", \"/btoken/**\"]\n    methods: [POST]\n"
                               "    credential: client\n"
                               "\n  - id: conformance-echo-bound\n    effect: allow\n"
                               "    reason: \"conformance: the echo, agent-2's credential\"\n"
                               "    operations: [\"http.request\"]\n    resource:\n"
                               "      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
                               "      paths: [\"/echo/bound/**\"]\n    methods: [GET]\n"
                               "    credential: bound\n"
                               "\n  - id: conformance-echo-shared\n    effect: allow\n"
                               "    reason: \"conformance: the echo, a shared credential\"\n"
                               "    operations: [\"http.request\"]\n    resource:\n"
                               "      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
                               "      paths: [\"/echo/shared/**\"]\n    methods: [GET]\n"
                               "    credential: shared\n"
                               "\n  - id: conformance-rebinding\n    effect: allow\n"
                               "    reason: \"conformance: a name the runner's resolver "
                               "answers\"\n"
                               "    operations: [\"http.request\"]\n    resource:\n"
                               "      schemes: [http]\n      hosts: [\"" REBIND_NAME "\"]\n"
                               "      paths: [\"/conformance/**\"]\n    methods: [GET]\n"
                               "\n  - id: conformance-echo\n    effect: allow\n"
                               "    reason: \"conformance: the echo, no credential\"\n"
                               "    operations: [\"http.request\"]\n    resource:\n"
                               "      schemes: [http]\n      hosts: [\"127.0.0.1\"]\n"
                               "      paths: [\"/echo/**\"]\n    methods: [GET]\n";
    char *sample = sworn_test_path(sworn_test_source_dir(), "policy/examples/policy.yaml");
    char *path = sworn_test_path(dir, "policy.yaml"), *text, *all;
    size_t len;

    text = sworn_test_read_file(sample, &len);
    all = malloc(len + sizeof(rule));
    assert_non_null(all);
    memcpy(all, text, len);
    memcpy(all + len, rule, sizeof(rule));
    sworn_test_write_file(path, all, len + sizeof(rule) - 1, 0644);
    free(all);
    free(text);
    free(sample);
    return path;
}

/* A "sandbox" that is not one: it runs the agent on the host, in the work folder, with what
 * it was told to add (an environment variable read from a file: never in an argv). */
static char *write_fake(const char *name, const char *secret_file)
{
    char *path = sworn_test_path(fakes, name), text[2048];

    snprintf(text, sizeof(text),
             "#!/bin/sh\n"
             "# test_conformance_sandbox: a sandbox command that runs the agent on the host.\n"
             "while [ $# -gt 0 ]; do\n"
             "  case \"$1\" in --work) work=$2; shift 2 ;; --) shift; break ;; *) shift ;; esac\n"
             "done\n"
             "%s%s%s"
             "cd \"$work\" && exec \"$@\"\n",
             secret_file != NULL ? "API_TOKEN=$(cat " : "", secret_file != NULL ? secret_file : "",
             secret_file != NULL ? ")\nexport API_TOKEN\n" : "");
    sworn_test_write_file(path, text, strlen(text), 0755);
    return path;
}

/* What a deployment file may change from the good one. */
struct dep_opts {
    const char *proxy;      /* sandbox.proxy (NULL: the default, sworn-run's relay) */
    const char *echo;       /* the path of sandbox.echo (NULL: /echo/conformance) */
    int echo_token;         /* the credential whose token symbolic_tokens lists */
    int foreign_token;      /* the credential whose token foreign_tokens lists */
    const char *requests;   /* lines of a requests and fail_closed section, or NULL */
    const char *oauth_path; /* the token endpoint's path (NULL: /token/json, intercepted) */
    const char *denied;     /* sandbox.denied's host (NULL: 127.0.0.1, the allowed URL's) */
    uint16_t dns_port;      /* sandbox.dns_rebinding's listen port (0: no such section) */
};

static const struct dep_opts good_opts = {NULL, NULL, DEMO, BOUND, NULL, NULL, NULL, 0};

/* The deployment file: command is the sandbox command's YAML list. */
static char *deployment_with(const char *name, const char *command, const struct dep_opts *o)
{
    char *path = sworn_test_path(stack.dir, name);
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fprintf(f, "operator: \"Test Operator\"\nrecord: %s\ntrust_policy: %s/trust.txt\n", stack.tiles,
            stack.dir);
    fprintf(f, "sworn_verify: %s\nagent: {uid: 65534}\n", sworn_test_bin("SWORN_VERIFY_BIN"));
    fprintf(f, "admin_socket: %s\ndecision_socket: %s\n", stack.admin, stack.decision);
    if (o->requests != NULL)
        fputs(o->requests, f);
    fprintf(f, "sandbox:\n  command: %s\n  probe: %s\n  principal: agent-1\n", command,
            sworn_test_bin("SWORN_PROBE_BIN"));
    if (o->proxy != NULL)
        fprintf(f, "  proxy: %s\n", o->proxy);
    fprintf(f,
            "  allowed: http://127.0.0.1:%u/allowed/hello.txt\n"
            "  denied: http://%s:%u/denied/conformance\n"
            "  echo: http://127.0.0.1:%u%s\n",
            upstream.http_port, o->denied != NULL ? o->denied : "127.0.0.1", upstream.http_port,
            upstream.http_port, o->echo != NULL ? o->echo : "/echo/conformance");
    fprintf(f, "  foreign_echo: http://127.0.0.1:%u/echo/%s/conformance\n", upstream.http_port,
            cred_id[o->foreign_token]);
    fprintf(f, "  foreign_command: [%s, --config, %s]\n", sworn_sbx_run_bin(), run2);
    fprintf(f, "  symbolic_tokens: [%s]\n  foreign_tokens: [%s]\n  credential_sha256: [",
            sym[o->echo_token], sym[o->foreign_token]);
    for (int i = 0; i < NDIGESTS; i++)
        fprintf(f, "%s%s", i > 0 ? ", " : "", digests[i]);
    fprintf(f, "]\n");
    fprintf(f,
            "  oauth_token: http://127.0.0.1:%u%s\n"
            "  oauth_body: grant_type=client_credentials&client_id=app&client_secret=%s\n",
            oauth_port, o->oauth_path != NULL ? o->oauth_path : "/token/json", client_sym);
    fprintf(f, "  control_paths: [%s, %s/policy.yaml, %s/vault.json, %s]\n", stack.config,
            stack.dir, stack.dir, stack.proxy_config);
    fprintf(f, "  control_sockets: [%s, %s, %s]\n", stack.decision, stack.admin,
            stack.proxy_socket);
    fprintf(f, "  control_binaries: [%s, %s]\n", sworn_test_bin("SWORN_PROXY_BIN"),
            sworn_test_bin("SWORN_DECISIOND_BIN"));
    if (o->dns_port != 0)
        fprintf(f, "  dns_rebinding: {listen: \"127.0.0.1:%u\", name: " REBIND_NAME "}\n",
                (unsigned)o->dns_port);
    fclose(f);
    return path;
}

static char *deployment(const char *name, const char *command)
{
    return deployment_with(name, command, &good_opts);
}

/* The probes that failed or ended in an error, with what they observed (the text report is too
 * long for cmocka's messages). */
static void print_failures(json_object *rep)
{
    json_object *probes = NULL;

    if (rep == NULL || !json_object_object_get_ex(rep, "probes", &probes))
        return;
    for (size_t i = 0; i < json_object_array_length(probes); i++) {
        json_object *p = json_object_array_get_idx(probes, i), *id, *res, *obs;

        if (json_object_object_get_ex(p, "id", &id) &&
            json_object_object_get_ex(p, "result", &res) &&
            json_object_object_get_ex(p, "observed", &obs) &&
            (strcmp(json_object_get_string(res), "fail") == 0 ||
             strcmp(json_object_get_string(res), "error") == 0))
            print_message("%s %s: %s\n", json_object_get_string(res), json_object_get_string(id),
                          json_object_get_string(obs));
    }
}

/* sworn-conformance run --deployment dep --no-record and the selection (NULL: --tier T4, every
 * probe of T1..T4; else the one --only ID): the exit status and the JSON report. The report is
 * not recorded here (test_conformance records one); T4's probes still ask for checkpoints. */
static int run_only(const char *dep, const char *only, json_object **report)
{
    char *json = sworn_test_path(stack.dir, "report.json");
    struct sworn_test_run r;
    int status;

    remove(json);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "run",
                    only != NULL ? "--only" : "--tier", only != NULL ? only : "T4", "--no-record",
                    "--deployment", dep, "--json", json, NULL);
    status = r.status;
    if (status > 1)
        print_message("sworn-conformance exit %d:\n%s\n", status, r.err);
    sworn_test_run_free(&r);
    *report = json_object_from_file(json);
    free(json);
    print_failures(*report);
    return status;
}

static int run(const char *dep, json_object **report)
{
    return run_only(dep, NULL, report);
}

static json_object *probe(json_object *rep, const char *id)
{
    json_object *probes = NULL;

    assert_true(json_object_object_get_ex(rep, "probes", &probes));
    for (size_t i = 0; i < json_object_array_length(probes); i++) {
        json_object *p = json_object_array_get_idx(probes, i), *v = NULL;

        if (json_object_object_get_ex(p, "id", &v) && strcmp(json_object_get_string(v), id) == 0)
            return p;
    }
    fail_msg("probe %s did not run", id);
    return NULL;
}

static void expect(json_object *rep, const char *id, const char *want)
{
    json_object *p = probe(rep, id), *res = NULL;

    assert_true(json_object_object_get_ex(p, "result", &res));
    if (strcmp(json_object_get_string(res), want) != 0)
        fail_msg("probe %s: %s, expected %s:\n%s", id, json_object_get_string(res), want,
                 json_object_to_json_string_ext(p, JSON_C_TO_STRING_PRETTY));
}

static void expect_either(json_object *rep, const char *id, const char *a, const char *b)
{
    json_object *p = probe(rep, id), *res = NULL;

    assert_true(json_object_object_get_ex(p, "result", &res));
    if (strcmp(json_object_get_string(res), a) != 0 && strcmp(json_object_get_string(res), b) != 0)
        fail_msg("probe %s: %s, expected %s or %s:\n%s", id, json_object_get_string(res), a, b,
                 json_object_to_json_string_ext(p, JSON_C_TO_STRING_PRETTY));
}

/* Whether an evidence item of probe id holds needle. */
static int evidence_has(json_object *rep, const char *id, const char *needle)
{
    json_object *ev = NULL;

    assert_true(json_object_object_get_ex(probe(rep, id), "evidence", &ev));
    for (size_t i = 0; i < json_object_array_length(ev); i++)
        if (strstr(json_object_get_string(json_object_array_get_idx(ev, i)), needle) != NULL)
            return 1;
    return 0;
}

/* A second hostlink listener in the proxy's configuration, of principal agent-2, put after the
 * stack's own (its PROXY_SOCKET stays the first hostlink listener, agent-1's), and sworn-run's
 * configuration naming it (run2). */
static int add_agent2(void)
{
    size_t len;
    char *text = sworn_test_read_file(stack.proxy_config, &len), *at, block[1024], yaml[2048];
    FILE *f;
    int n;

    at = strstr(text, "  - unix: ");
    if (at == NULL) {
        free(text);
        return -1;
    }
    n = snprintf(block, sizeof(block),
                 "  - hostlink: %s/proxy/hostlink2.sock\n    principal: agent-2\n    uids: [%u]\n",
                 stack.dir, (unsigned)getuid());
    f = fopen(stack.proxy_config, "w");
    if (f == NULL || fwrite(text, 1, (size_t)(at - text), f) != (size_t)(at - text) ||
        fwrite(block, 1, (size_t)n, f) != (size_t)n || fputs(at, f) < 0 || fclose(f) != 0) {
        free(text);
        return -1;
    }
    free(text);
    snprintf(run2, sizeof(run2), "%s/run2.yaml", stack.dir);
    n = snprintf(yaml, sizeof(yaml),
                 "principal: agent-2\nhostlink: %s/proxy/hostlink2.sock\nadmin_socket: %s\n"
                 "proxy_ca: %s\nstate_dir: %s/sandboxes\n",
                 stack.dir, stack.admin, stack.proxy_ca, stack.dir);
    sworn_test_write_file(run2, yaml, (size_t)n, 0644);
    return 0;
}

/* Replace the line old of the proxy's configuration with new and start the proxy again. */
static int proxy_reconfigure(const char *old, const char *new)
{
    size_t len;
    char *text = sworn_test_read_file(stack.proxy_config, &len), *at = strstr(text, old);
    FILE *f;
    int ok;

    if (at == NULL) {
        print_message("the proxy's configuration has no line \"%s\"\n", old);
        free(text);
        return -1;
    }
    f = fopen(stack.proxy_config, "w");
    ok = f != NULL && fwrite(text, 1, (size_t)(at - text), f) == (size_t)(at - text) &&
         fputs(new, f) >= 0 && fputs(at + strlen(old), f) >= 0;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    free(text);
    return ok ? sworn_stack_start_proxy(&stack) : -1;
}

/* A UDP port of 127.0.0.1 free now (the runner binds it for its resolver at each run). */
static uint16_t free_udp_port(void)
{
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(in);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    uint16_t port = 0;

    if (fd >= 0 && bind(fd, (struct sockaddr *)&in, sizeof(in)) == 0 &&
        getsockname(fd, (struct sockaddr *)&in, &len) == 0)
        port = ntohs(in.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static int setup(void **state)
{
    char opts[2048], *policy, *vault, script[1024], port_file[1024], log[1024], out[1024];
    char extra[256];
    char *argv[] = {"/usr/bin/python3", script, port_file, log, NULL};
    FILE *f;

    (void)state;
    if (sworn_upstream_start(&upstream) != 0)
        return -1;
    snprintf(script, sizeof(script), "%s/tests/unit/oauth_upstream.py", sworn_test_source_dir());
    snprintf(port_file, sizeof(port_file), "%s/oauth.port", upstream.dir);
    snprintf(log, sizeof(log), "%s/oauth.log", upstream.dir);
    snprintf(out, sizeof(out), "%s/oauth.out", upstream.dir);
    oauth_pid =
        sworn_upstream_spawn_port(argv, out, port_file, SWORN_UPSTREAM_START_MS, &oauth_port);
    if (oauth_pid <= 0)
        return -1;
    policy = write_policy(upstream.dir);
    vault = write_vault(upstream.dir);
    snprintf(opts, sizeof(opts), "--no-tpm --proxy --policy %s --vault %s", policy, vault);
    free(policy);
    free(vault);
    if (sworn_stack_up(&stack, opts) != 0)
        return -1;
    /* The token endpoints the proxy intercepts: /token only (/btoken is the one left out, for
     * test_oauth_endpoint_missed), and a hostlink listener of agent-2 (the principal "bound" is
     * bound to: T1.foreign-token's positive control, through sworn-run --config run2.yaml); the
     * proxy is started again to read them. */
    if (add_agent2() != 0)
        return -1;
    /* The proxy asks the runner's resolver (T2.dns-rebinding), and loopback is no longer admitted
     * for names (every upstream here is an IP literal, which the policy names itself). */
    dns_port = free_udp_port();
    if (dns_port == 0)
        return -1;
    {
        size_t len;
        char *text = sworn_test_read_file(stack.proxy_config, &len), *at, line[128];

        at = strstr(text, DEV_ALLOW_PRIVATE);
        snprintf(line, sizeof(line), "  nameservers: [\"127.0.0.1:%u\"]\n", (unsigned)dns_port);
        f = at != NULL ? fopen(stack.proxy_config, "w") : NULL;
        if (f == NULL || fwrite(text, 1, (size_t)(at - text), f) != (size_t)(at - text) ||
            fputs(line, f) < 0 || fputs(at + strlen(DEV_ALLOW_PRIVATE), f) < 0 || fclose(f) != 0) {
            free(text);
            return -1;
        }
        free(text);
    }
    snprintf(extra, sizeof(extra), "oauth:\n  token_endpoints: [\"http://127.0.0.1:%u/token\"]\n",
             oauth_port);
    f = fopen(stack.proxy_config, "a");
    if (f == NULL || fputs(extra, f) < 0 || fclose(f) != 0)
        return -1;
    if (sworn_stack_start_proxy(&stack) != 0)
        return -1;
    (void)sworn_stack_checkpoint_now(&stack);
    sworn_stack_dev_trust(&stack);
    fakes = sworn_test_tmpdir("fakes");
    return chmod(fakes, 0755);
}

static int teardown(void **state)
{
    int rc = 0;

    (void)state;
    if (stack.dir != NULL && sworn_stack_down(&stack) != 0)
        rc = -1;
    sworn_upstream_stop_child(&oauth_pid, "oauth_upstream.py");
    sworn_upstream_stop(&upstream);
    sworn_test_tmpdir_drop(&fakes);
    return rc;
}

static const char *const must_pass[] = {"T1.credential-env",
                                        "T1.credential-files",
                                        "T1.credential-proc",
                                        "T1.symbolic-unconfigured",
                                        "T1.oauth-interception",
                                        "T2.direct-ipv4",
                                        "T2.udp-ipv4",
                                        "T2.other-netns",
                                        "T2.icmp-netns",
                                        "T2.noproxy",
                                        "T2.abstract-socket",
                                        "T2.leaked-descriptors",
                                        "T2.raw-ipv4",
                                        "T2.packet-socket",
                                        "T2.icmp",
                                        "T2.host-file",
                                        "T2.proc-root",
                                        "T2.ephemeral",
                                        "T2.host-decimal",
                                        "T2.host-octal",
                                        "T2.host-hex",
                                        "T2.host-ipv4-mapped",
                                        "T2.host-trailing-dot",
                                        "T2.path-dot-segments",
                                        "T2.host-mismatch",
                                        "T2.smuggling-cl-te",
                                        "T2.smuggling-double-cl",
                                        "T2.websocket-denied",
                                        "T2.h2-prior-knowledge",
                                        "T2.connect-sni-mismatch",
                                        "T2.connect-host-mismatch",
                                        "T2.control-sockets",
                                        "T3.control-read",
                                        "T3.control-write",
                                        "T3.signal-control-plane",
                                        "T3.trace-control-plane",
                                        "T1.foreign-token",
                                        "T3.hostlink-admin-frame",
                                        "T3.measured-start",
                                        "T4.sandbox-recorded",
                                        "T4.no-write-path"};

static void test_good_deployment(void **state)
{
    char command[1200], *dep;
    struct dep_opts o = good_opts;
    json_object *rep = NULL;

    (void)state;
    snprintf(command, sizeof(command), "[%s, --stack, %s]", sworn_sbx_run_bin(), stack.dir);
    o.dns_port = dns_port;
    dep = deployment_with("good.yaml", command, &o);
    assert_int_equal(run(dep, &rep), 0);
    assert_non_null(rep);
    for (size_t i = 0; i < sizeof(must_pass) / sizeof(must_pass[0]); i++)
        expect(rep, must_pass[i], "pass");
    /* The evidence names the sandbox's line and the canary's count. */
    assert_true(evidence_has(rep, "T2.direct-ipv4", "canary tcp4-loopback heard 0 event(s)"));
    assert_true(evidence_has(rep, "T2.direct-ipv4", "BLOCKED tcp4:127.0.0.1:"));
    /* The new probes passed for their reasons, not for want of trying: the token answer held
     * tokens (all symbolic); the tunnel's control got the proxy's ServerHello; agent-2's token got
     * the proxy's own refusal; no policy was loaded after the admin frame; each sandbox's request
     * is in the record; the ICMP canary was synced. */
    assert_true(evidence_has(rep, "T1.oauth-interception", ":tokens=2:"));
    assert_true(evidence_has(rep, "T2.connect-sni-mismatch", "sni=- serverhello"));
    /* The tunnel's control got an HTTP answer in a TLS session verified against the sandbox's CA
     * bundle; the request whose Host names the canary got the proxy's own refusal, and the
     * canary heard nothing. */
    assert_true(evidence_has(rep, "T2.connect-host-mismatch", ":verify=ok:ca=SSL_CERT_FILE"));
    assert_true(evidence_has(rep, "T2.connect-host-mismatch", ":status=400:effect="));
    assert_true(
        evidence_has(rep, "T2.connect-host-mismatch", "canary tcp4-loopback heard 0 event(s)"));
    assert_true(evidence_has(rep, "T1.foreign-token", ":own=1:"));
    assert_true(evidence_has(rep, "T1.foreign-token", "control, sandbox "));
    assert_true(evidence_has(rep, "T3.hostlink-admin-frame", ": 0 PolicyLoaded"));
    assert_true(evidence_has(rep, "T4.sandbox-recorded", "1 decision(s) naming it, 1 as expected"));
    assert_true(evidence_has(rep, "T2.icmp-netns", "canary icmp4-netns heard 0 echo request(s)"));
    /* The rebound name was asked of the runner's resolver, every internal answer was served,
     * and the loopback canary heard nothing. The host's resolver is probed when the host
     * reaches it. */
    expect(rep, "T2.dns-rebinding", "pass");
    assert_false(evidence_has(rep, "T2.dns-rebinding", ": 0 time(s)"));
    assert_true(evidence_has(rep, "T2.dns-rebinding", "answered A 127.0.0.1: "));
    assert_true(evidence_has(rep, "T2.dns-rebinding", "answered AAAA ::ffff:127.0.0.1: "));
    assert_true(evidence_has(rep, "T2.dns-rebinding", "canary tcp4-loopback heard 0 event(s)"));
    assert_true(evidence_has(rep, "T2.dns-rebinding", "resolves only to addresses") ||
                evidence_has(rep, "T2.dns-rebinding", ":status=502:"));
    expect_either(rep, "T2.resolver-udp", "pass", "skipped");
    json_object_put(rep);
    free(dep);
}

/* The probe program run on the host by a fake sandbox command: the escapes are found. */
static void test_no_sandbox(void **state)
{
    char command[1200], *fake = write_fake("fake-sandbox.sh", NULL), *dep;
    json_object *rep = NULL;
    static const char *const caught[] = {"T2.direct-ipv4",
                                         "T2.udp-ipv4",
                                         "T2.other-netns",
                                         "T2.icmp-netns",
                                         "T2.noproxy",
                                         "T2.abstract-socket",
                                         "T2.leaked-descriptors",
                                         "T2.raw-ipv4",
                                         "T2.packet-socket",
                                         "T2.host-file",
                                         "T2.proc-root",
                                         "T2.ephemeral",
                                         "T2.control-sockets",
                                         "T3.control-read",
                                         "T3.control-write",
                                         "T3.signal-control-plane",
                                         "T3.trace-control-plane"};

    (void)state;
    snprintf(command, sizeof(command), "[/bin/sh, %s]", fake);
    dep = deployment("no-sandbox.yaml", command);
    assert_int_equal(run(dep, &rep), 1);
    assert_non_null(rep);
    for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
        expect(rep, caught[i], "fail");
    /* The canaries heard it: their counts are in the evidence. */
    assert_true(evidence_has(rep, "T2.direct-ipv4", "canary tcp4-loopback heard 1 event(s)"));
    assert_true(evidence_has(rep, "T2.other-netns", "canary tcp4-netns heard 1 event(s)"));
    /* The raw socket's echo on the host reached the namespace canary, counted there. */
    assert_false(evidence_has(rep, "T2.icmp-netns", "canary icmp4-netns heard 0 echo"));
    /* No sandbox.dns_rebinding: not probed, saying what to configure. */
    expect(rep, "T2.dns-rebinding", "skipped");
    json_object_put(rep);
    free(dep);
    free(fake);
}

/* A real credential value in the agent's environment and in a file it can read. */
static void test_credential_reachable(void **state)
{
    char command[1200], *secret = sworn_test_path(stack.dir, "leaked-secret"), *fake, *dep;
    json_object *rep = NULL;
    char *planted = sworn_test_path("/etc", "sworn-conformance-test-planted.conf");

    (void)state;
    sworn_test_write_file(secret, val[DEMO], strlen(val[DEMO]), 0600);
    {
        char text[600];

        snprintf(text, sizeof(text), "token = \"%s\"\n", val[DEMO]);
        sworn_test_write_file(planted, text, strlen(text), 0644);
    }
    fake = write_fake("fake-env.sh", secret);
    snprintf(command, sizeof(command), "[/bin/sh, %s]", fake);
    dep = deployment("credential.yaml", command);
    assert_int_equal(run(dep, &rep), 1);
    assert_non_null(rep);
    expect(rep, "T1.credential-env", "fail");
    expect(rep, "T1.credential-files", "fail");
    expect(rep, "T1.credential-proc", "fail");
    remove(planted);
    json_object_put(rep);
    free(planted);
    free(dep);
    free(fake);
    free(secret);
}

/* The policy file made writable by everyone, the agent an unprivileged user on the host. */
static void test_policy_writable(void **state)
{
    char command[1200], *fake = write_fake("fake-nobody.sh", NULL), *dep;
    char *policy = sworn_test_path(stack.dir, "policy.yaml");
    json_object *rep = NULL;
    struct stat st, dir_st;

    (void)state;
    assert_int_equal(stat(policy, &st), 0);
    assert_int_equal(stat(stack.dir, &dir_st), 0);
    assert_int_equal(chmod(policy, 0666), 0);
    assert_int_equal(chmod(stack.dir, 0711), 0); /* a folder anyone may pass through */
    snprintf(command, sizeof(command),
             "[/usr/bin/setpriv, --reuid, '65534', --regid, '65534', --clear-groups, /bin/sh, %s]",
             fake);
    dep = deployment("writable.yaml", command);
    assert_int_equal(run(dep, &rep), 1);
    assert_int_equal(chmod(policy, st.st_mode & 07777), 0);
    assert_int_equal(chmod(stack.dir, dir_st.st_mode & 07777), 0);
    assert_non_null(rep);
    expect(rep, "T3.control-write", "fail");
    /* The vault (0600) stays out of an unprivileged agent's reach: T3.control-read finds only
     * the policy (and the other 0644 files) readable, and says how many. */
    expect(rep, "T3.trace-control-plane", "pass");
    json_object_put(rep);
    free(dep);
    free(policy);
    free(fake);
}

/* The route out is the proxy, but not through the sandbox's relay: the "sandbox" runs on the host
 * and reaches the proxy's plain TCP listener, which names no sandbox. The proxy still decides,
 * so its refusals pass; the record cannot tie the requests to the sandbox: T4 catches it. */
static void test_route_without_sandbox(void **state)
{
    char command[1200], *fake = write_fake("fake-route.sh", NULL), *dep;
    struct dep_opts o = good_opts;
    json_object *rep = NULL;

    (void)state;
    o.proxy = stack.proxy_url;
    snprintf(command, sizeof(command), "[/bin/sh, %s]", fake);
    dep = deployment_with("route.yaml", command, &o);
    assert_int_equal(run_only(dep, "T4.sandbox-recorded", &rep), 1);
    assert_non_null(rep);
    expect(rep, "T4.sandbox-recorded", "fail");
    json_object_put(rep);
    free(dep);
    free(fake);
}

/* The agent's route out is not the proxy: sandbox.proxy is the upstream itself (a deployment
 * whose "proxy" forwards everything). The control passes (the upstream answers the allowed URL);
 * every variant reaches the upstream, and the admin frame gets its answer: all caught. */
static void test_proxy_bypassed(void **state)
{
    char command[1200], proxy[64], *fake = write_fake("fake-bypass.sh", NULL), *dep;
    struct dep_opts o = good_opts;
    json_object *rep = NULL;
    static const char *const caught[] = {
        "T2.host-decimal",       "T2.host-octal",          "T2.host-hex",
        "T2.host-trailing-dot",  "T2.host-mismatch",       "T2.path-dot-segments",
        "T2.smuggling-cl-te",    "T2.smuggling-double-cl", "T2.websocket-denied",
        "T2.h2-prior-knowledge", "T3.hostlink-admin-frame"};

    (void)state;
    snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%u", upstream.http_port);
    o.proxy = proxy;
    snprintf(command, sizeof(command), "[/bin/sh, %s]", fake);
    dep = deployment_with("bypass.yaml", command, &o);
    assert_int_equal(run(dep, &rep), 1);
    assert_non_null(rep);
    for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
        expect(rep, caught[i], "fail");
    /* No proxy refused the denied URL: T4 cannot find what it needs, and says so. */
    expect(rep, "T4.sandbox-recorded", "error");
    json_object_put(rep);
    free(dep);
    free(fake);
}

/* tunnel_proxy.py in front of the upstream (tls: the port its CONNECT tunnels go to; admin: a
 * Unix socket its frames go to, or NULL; terminate: its tunnels terminated with the upstream's
 * certificate, each inner request sent where its Host field says): the pid; OUT proxy, its URL. */
static pid_t start_tunnel(unsigned tls, const char *admin, int terminate, char *proxy, size_t cap)
{
    char script[1024], port_file[1024], out[1024], http[8], tport[8];
    char *argv[] = {"/usr/bin/python3",
                    script,
                    port_file,
                    http,
                    tport,
                    admin != NULL ? (char *)admin : "-",
                    terminate ? upstream.cert : NULL,
                    upstream.key,
                    NULL};
    uint16_t port = 0;
    pid_t pid;

    snprintf(script, sizeof(script), "%s/tests/unit/tunnel_proxy.py", sworn_test_source_dir());
    snprintf(port_file, sizeof(port_file), "%s/tunnel-%u.port", fakes, tls);
    snprintf(out, sizeof(out), "%s/tunnel-%u.out", fakes, tls);
    snprintf(http, sizeof(http), "%u", upstream.http_port);
    snprintf(tport, sizeof(tport), "%u", tls);
    remove(port_file);
    pid = sworn_upstream_spawn_port(argv, out, port_file, SWORN_UPSTREAM_START_MS, &port);
    assert_true(pid > 0);
    snprintf(proxy, cap, "http://127.0.0.1:%u", port);
    return pid;
}

/* One probe through tunnel_proxy.py (terminate: as start_tunnel; denied: as dep_opts): its result
 * must be want; OUT *out the report (the caller puts it), unless out is NULL. */
static void through_tunnel_rep(unsigned tls, const char *admin, int terminate, const char *denied,
                               const char *id, const char *want, json_object **out)
{
    char command[1200], proxy[64], *fake = write_fake("fake-tunnel.sh", NULL), *dep;
    struct dep_opts o = good_opts;
    json_object *rep = NULL;
    pid_t pid = start_tunnel(tls, admin, terminate, proxy, sizeof(proxy));

    o.proxy = proxy;
    o.denied = denied;
    snprintf(command, sizeof(command), "[/bin/sh, %s]", fake);
    dep = deployment_with("tunnel.yaml", command, &o);
    assert_int_equal(run_only(dep, id, &rep), 1);
    sworn_upstream_stop_child(&pid, "tunnel_proxy.py");
    assert_non_null(rep);
    expect(rep, id, want);
    if (out != NULL)
        *out = rep;
    else
        json_object_put(rep);
    free(dep);
    free(fake);
}

static void through_tunnel(unsigned tls, const char *admin, const char *id, const char *want)
{
    through_tunnel_rep(tls, admin, 0, NULL, id, want, NULL);
}

/* A "proxy" that tunnels every CONNECT to the TLS upstream without reading the ClientHello: a
 * ClientHello naming another server gets that server's ServerHello. */
static void test_tunnel_without_sni_check(void **state)
{
    (void)state;
    through_tunnel(upstream.https_port, NULL, "T2.connect-sni-mismatch", "fail");
}

/* The same tunnel to a listener that never answers: the silence is an error, never a refusal. */
static void test_tunnel_silent(void **state)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(in);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
    assert_int_equal(listen(fd, 16), 0); /* never accepted: the kernel queues, nobody reads */
    assert_int_equal(getsockname(fd, (struct sockaddr *)&in, &len), 0);
    through_tunnel(ntohs(in.sin_port), NULL, "T2.connect-sni-mismatch", "error");
    /* No TLS session in the tunnel: T2.connect-host-mismatch's control gets no answer. */
    through_tunnel(ntohs(in.sin_port), NULL, "T2.connect-host-mismatch", "error");
    close(fd);
}

/* A "proxy" that terminates its tunnels (with the upstream's certificate) and sends each inner
 * request where its Host field says, never checking it against the CONNECT: the control gets the
 * upstream's answer inside TLS, the request whose Host names the loopback canary reaches the
 * canary; with the denied URL on another host (localhost, the same nginx), that request gets the
 * upstream's answer (its 404) as well. */
static void test_tunnel_without_host_check(void **state)
{
    json_object *rep = NULL;

    (void)state;
    through_tunnel_rep(upstream.https_port, NULL, 1, NULL, "T2.connect-host-mismatch", "fail",
                       &rep);
    assert_true(evidence_has(rep, "T2.connect-host-mismatch", "\"OPEN connect-tls-http:"));
    assert_true(
        evidence_has(rep, "T2.connect-host-mismatch", "canary tcp4-loopback heard 1 event(s)"));
    /* The fake runs on the host, where the upstream's test CA is in no store. */
    assert_true(evidence_has(rep, "T2.connect-host-mismatch", ":verify=no:ca="));
    json_object_put(rep);
    through_tunnel_rep(upstream.https_port, NULL, 1, "localhost", "T2.connect-host-mismatch",
                       "fail", &rep);
    assert_true(evidence_has(rep, "T2.connect-host-mismatch", "with Host localhost:"));
    assert_true(evidence_has(rep, "T2.connect-host-mismatch", " status=404 "));
    json_object_put(rep);
}

/* A tunnel without TLS termination: CONNECT goes to the upstream's plain HTTP port, which answers
 * the ClientHello in HTTP. No TLS session, no answer inside it: an error, never a pass. */
static void test_tunnel_not_terminated(void **state)
{
    json_object *rep = NULL;

    (void)state;
    through_tunnel_rep(upstream.http_port, NULL, 0, NULL, "T2.connect-host-mismatch", "error",
                       &rep);
    assert_true(evidence_has(rep, "T2.connect-host-mismatch", " NOTLS"));
    json_object_put(rep);
}

/* A route out that hands decisiond's frames to its admin socket: the admin frame gets decisiond's
 * answer (and reloads the policy, the same file: harmless to the other tests). */
static void test_route_to_admin_socket(void **state)
{
    (void)state;
    through_tunnel(upstream.https_port, stack.admin, "T3.hostlink-admin-frame", "fail");
}

/* A token endpoint the proxy's oauth.token_endpoints leaves out (/btoken, same server): its answer
 * reaches the agent with the real tokens in it. */
static void test_oauth_endpoint_missed(void **state)
{
    char command[1200], *dep;
    struct dep_opts o = good_opts;
    json_object *rep = NULL;

    (void)state;
    o.oauth_path = "/btoken/json";
    snprintf(command, sizeof(command), "[%s, --stack, %s]", sworn_sbx_run_bin(), stack.dir);
    dep = deployment_with("oauth-missed.yaml", command, &o);
    assert_int_equal(run_only(dep, "T1.oauth-interception", &rep), 1);
    assert_non_null(rep);
    expect(rep, "T1.oauth-interception", "fail");
    assert_true(evidence_has(rep, "T1.oauth-interception", "OPEN oauth:access_token real"));
    json_object_put(rep);
    free(dep);
}

/* A credential bound to every principal ("*", a shared service account): its token, listed as
 * another principal's, releases the real value to agent-1; listed as unconfigured for the echo,
 * it comes back as the real value. Both T1 probes catch it. */
static void test_shared_credential(void **state)
{
    char command[1200], *dep;
    struct dep_opts o = good_opts;
    json_object *rep = NULL;

    (void)state;
    o.echo = "/echo/shared/conformance";
    o.echo_token = SHARED;
    o.foreign_token = SHARED;
    snprintf(command, sizeof(command), "[%s, --stack, %s]", sworn_sbx_run_bin(), stack.dir);
    dep = deployment_with("shared.yaml", command, &o);
    assert_int_equal(run_only(dep, "T1.foreign-token", &rep), 1);
    expect(rep, "T1.foreign-token", "fail");
    json_object_put(rep);
    assert_int_equal(run_only(dep, "T1.symbolic-unconfigured", &rep), 1);
    expect(rep, "T1.symbolic-unconfigured", "fail");
    json_object_put(rep);
    free(dep);
}

/* fail_closed.stop that does not stop decisiond, and an allowed URL whose upstream answers 503:
 * a 5xx that is not the proxy's own answer went through, and must not pass as a refusal. */
static void test_fail_closed_upstream_error(void **state)
{
    char command[1200], requests[1024], *dep;
    struct dep_opts o = good_opts;
    json_object *rep = NULL, *obs = NULL;

    (void)state;
    snprintf(requests, sizeof(requests),
             "requests:\n  principal: agent-1\n  count: 1\n"
             "  allowed: http://127.0.0.1:%u/allowed/upstream-503\n"
             "  denied: http://127.0.0.1:%u/denied/conformance\n"
             "fail_closed:\n  proxy: %s\n  stop: \"true\"\n  start: \"true\"\n",
             upstream.http_port, upstream.http_port, stack.proxy_url);
    o.requests = requests;
    snprintf(command, sizeof(command), "[%s, --stack, %s]", sworn_sbx_run_bin(), stack.dir);
    dep = deployment_with("fail-open.yaml", command, &o);
    assert_int_equal(run_only(dep, "T3.fail-closed", &rep), 1);
    expect(rep, "T3.fail-closed", "fail");
    assert_true(json_object_object_get_ex(probe(rep, "T3.fail-closed"), "observed", &obs));
    assert_non_null(strstr(json_object_get_string(obs), "503"));
    json_object_put(rep);
    free(dep);
}

/* T2.dns-rebinding alone, on deployment o: its result must be want (the exit status follows). */
static json_object *rebinding(const char *name, const struct dep_opts *o, const char *want)
{
    char command[1200], *dep;
    json_object *rep = NULL;

    snprintf(command, sizeof(command), "[%s, --stack, %s]", sworn_sbx_run_bin(), stack.dir);
    dep = deployment_with(name, command, o);
    assert_int_equal(run_only(dep, "T2.dns-rebinding", &rep), strcmp(want, "pass") == 0 ? 0 : 1);
    assert_non_null(rep);
    expect(rep, "T2.dns-rebinding", want);
    free(dep);
    return rep;
}

/* The proxy's protection switched off for loopback (upstream.allow_private: 127.0.0.0/8): the
 * rebound name reaches the loopback canary, and the probe fails. */
static void test_rebinding_protection_off(void **state)
{
    struct dep_opts o = good_opts;
    char ns[128], off[192];
    json_object *rep;

    (void)state;
    snprintf(ns, sizeof(ns), "  nameservers: [\"127.0.0.1:%u\"]\n", (unsigned)dns_port);
    snprintf(off, sizeof(off), "%s  allow_private: [\"127.0.0.0/8\"]\n", ns);
    assert_int_equal(proxy_reconfigure(ns, off), 0);
    o.dns_port = dns_port;
    rep = rebinding("rebind-off.yaml", &o, "fail");
    assert_false(evidence_has(rep, "T2.dns-rebinding", "canary tcp4-loopback heard 0 event(s)"));
    json_object_put(rep);
    assert_int_equal(proxy_reconfigure(off, ns), 0);
}

/* Red team (rt19b): the proxy admits the metadata address and 10/8 (upstream.allow_private)
 * but not loopback, and gives up on an address after 100 ms: its answer to the rebound name is
 * then its own 502 ("upstream connect"), after it tried to connect to 169.254.169.254 or
 * 10.0.0.1. That is the proxy's own answer, but not its refusal of the addresses: the probe
 * fails (it passed before, taking any answer of the proxy's as the refusal). */
static void test_rebinding_private_admitted(void **state)
{
    struct dep_opts o = good_opts;
    char ns[128], off[256];
    json_object *rep;

    (void)state;
    snprintf(ns, sizeof(ns), "  nameservers: [\"127.0.0.1:%u\"]\n", (unsigned)dns_port);
    snprintf(off, sizeof(off),
             "%s  allow_private: [\"169.254.0.0/16\", \"10.0.0.0/8\"]\n  connect_timeout: 100ms\n",
             ns);
    assert_int_equal(proxy_reconfigure(ns, off), 0);
    o.dns_port = dns_port;
    rep = rebinding("rebind-private.yaml", &o, "fail");
    assert_true(evidence_has(rep, "T2.dns-rebinding", "canary tcp4-loopback heard 0 event(s)"));
    json_object_put(rep);
    assert_int_equal(proxy_reconfigure(off, ns), 0);
}

/* The runner's resolver on a port the proxy does not ask: no question arrives, an error (never a
 * pass) that says what to configure. */
static void test_rebinding_resolver_unused(void **state)
{
    struct dep_opts o = good_opts;
    json_object *rep, *obs = NULL;

    (void)state;
    o.dns_port = free_udp_port();
    assert_true(o.dns_port != 0 && o.dns_port != dns_port);
    rep = rebinding("rebind-unused.yaml", &o, "error");
    assert_true(json_object_object_get_ex(probe(rep, "T2.dns-rebinding"), "observed", &obs));
    assert_non_null(strstr(json_object_get_string(obs), "upstream.nameservers"));
    json_object_put(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_deployment),
        cmocka_unit_test(test_no_sandbox),
        cmocka_unit_test(test_credential_reachable),
        cmocka_unit_test(test_policy_writable),
        cmocka_unit_test(test_route_without_sandbox),
        cmocka_unit_test(test_proxy_bypassed),
        cmocka_unit_test(test_tunnel_without_sni_check),
        cmocka_unit_test(test_tunnel_silent),
        cmocka_unit_test(test_tunnel_without_host_check),
        cmocka_unit_test(test_tunnel_not_terminated),
        cmocka_unit_test(test_route_to_admin_socket),
        cmocka_unit_test(test_oauth_endpoint_missed),
        cmocka_unit_test(test_shared_credential),
        cmocka_unit_test(test_fail_closed_upstream_error),
        cmocka_unit_test(test_rebinding_protection_off),
        cmocka_unit_test(test_rebinding_resolver_unused),
        cmocka_unit_test(test_rebinding_private_admitted),
    };

    if (!sworn_sbx_can_run("test_conformance_sandbox", "sworn-run's root mode, a veth pair"))
        return 77;
    return cmocka_run_group_tests(tests, setup, teardown);
}
