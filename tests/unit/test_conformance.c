/*
 * test_conformance.c -- sworn-conformance against a real development stack (scripts/dev-stack
 * with sworn-proxy, through stack_fixture.h) and the real sworn-verify: every probe of the first
 * step passes on the good deployment, and each catches what it must on a deployment broken on
 * purpose (a trust policy with another log key, a world-writable record, the agent owning the
 * record, a verifier that accepts anything, a record that is not the exported one). Also the
 * deployment file's refusals (in process and as the program's exit status 2) and the JSON
 * report's fields, read with json-c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "c_deploy.h"
#include "c_submit.h"
#include "err.h"
#include "fileio.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "verify_fixture.h"

static struct sworn_stack stack;
static int stack_up;

struct opts {
    const char *trust;  /* NULL: DIR/trust.txt */
    const char *verify; /* NULL: the real sworn-verify */
    const char *record; /* NULL: DIR/tiles */
    long agent_uid;     /* the agent's uid */
    int fail_closed;    /* with the fail_closed section */
};

static char *deployment(const char *name, const struct opts *o)
{
    char *path = sworn_test_path(stack.dir, name), *tiles = sworn_test_path(stack.dir, "tiles"),
         *trust = sworn_test_path(stack.dir, "trust.txt");
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fprintf(f, "operator: \"Test <Operator> & co\"\n");
    fprintf(f, "record: %s\n", o->record != NULL ? o->record : tiles);
    fprintf(f, "trust_policy: %s\n", o->trust != NULL ? o->trust : trust);
    fprintf(f, "sworn_verify: %s\n",
            o->verify != NULL ? o->verify : sworn_test_bin("SWORN_VERIFY_BIN"));
    fprintf(f, "admin_socket: %s\ndecision_socket: %s\nlog_db: %s\n", stack.admin, stack.decision,
            stack.log_db);
    fprintf(f, "agent:\n  uid: %ld\n  gids: [65534]\n", o->agent_uid);
    fprintf(f, "requests:\n  principal: agent-1\n  count: 3\n"
               "  allowed: http://127.0.0.1:8080/allowed/conformance\n"
               "  denied: http://127.0.0.1:8080/denied/conformance\n");
    if (o->fail_closed)
        fprintf(f,
                "fail_closed:\n  proxy: %s\n  stop: \"%s/scripts/dev-stack stop %s >&2\"\n"
                "  start: \"%s/scripts/dev-stack start %s >&2\"\n",
                stack.proxy_url, sworn_test_source_dir(), stack.dir, sworn_test_source_dir(),
                stack.dir);
    fclose(f);
    free(tiles);
    free(trust);
    return path;
}

/* Run sworn-conformance run with the deployment and extra arguments (NULL-terminated); returns
 * the exit status and the JSON report (NULL when none was written). */
static int run(const char *dep, json_object **report, ...)
{
    const char *argv[32];
    size_t n = 0;
    char *json = sworn_test_path(stack.dir, "report.json");
    struct sworn_test_run r;
    va_list ap;
    const char *a;
    int status;

    remove(json);
    argv[n++] = sworn_test_bin("SWORN_CONFORMANCE_BIN");
    argv[n++] = "run";
    argv[n++] = "--deployment";
    argv[n++] = dep;
    argv[n++] = "--json";
    argv[n++] = json;
    va_start(ap, report);
    while ((a = va_arg(ap, const char *)) != NULL && n < 30)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    sworn_test_run(argv, NULL, &r);
    status = r.status;
    if (status > 1)
        print_message("sworn-conformance exit %d:\n%s\n%s\n", status, r.out, r.err);
    sworn_test_run_free(&r);
    *report = json_object_from_file(json);
    free(json);
    return status;
}

static json_object *get(json_object *o, const char *k)
{
    json_object *v = NULL;

    if (!json_object_object_get_ex(o, k, &v))
        fail_msg("no \"%s\" in the report", k);
    return v;
}

static const char *str(json_object *o, const char *k)
{
    return json_object_get_string(get(o, k));
}

/* The result of probe id in the report (fails the test when it did not run). */
static const char *result_of(json_object *rep, const char *id)
{
    json_object *probes = get(rep, "probes");

    for (size_t i = 0; i < json_object_array_length(probes); i++) {
        json_object *p = json_object_array_get_idx(probes, i);
        if (strcmp(str(p, "id"), id) == 0)
            return str(p, "result");
    }
    fail_msg("probe %s did not run", id);
    return NULL;
}

static void expect_result(json_object *rep, const char *id, const char *want)
{
    const char *got = result_of(rep, id);

    if (strcmp(got, want) != 0) {
        print_message("%s\n", json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PRETTY));
        fail_msg("probe %s: %s, expected %s", id, got, want);
    }
}

static int setup(void **state)
{
    (void)state;
    if (sworn_stack_up(&stack, "--no-tpm --proxy") < 0)
        return -1;
    stack_up = 1;
    (void)sworn_stack_checkpoint_now(&stack);
    sworn_stack_dev_trust(&stack);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return stack_up ? sworn_stack_down(&stack) : 0;
}

static const struct opts good = {NULL, NULL, NULL, 65534, 1};

static void test_good_deployment(void **state)
{
    char *dep = deployment("good.yaml", &good), *html = sworn_test_path(stack.dir, "r.html");
    static const char *const ids[] = {
        "T4.no-write-path",   "T4.decisions-recorded",          "T5.verify",
        "T5.sufficiency",     "T5.tamper-entry-changed",        "T5.tamper-entry-deleted",
        "T5.tamper-rollback", "T5.tamper-checkpoint-signature", "T3.fail-closed",
        "T3.measured-start"};
    json_object *rep = NULL, *d, *p0;
    struct sworn_test_run l;
    json_object *list;
    char *text = NULL;
    size_t len;

    (void)state;
    assert_int_equal(run(dep, &rep, "--html", html, NULL), 0);
    assert_non_null(rep);
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
        expect_result(rep, ids[i], "pass");
    /* The report's fields: who, when, against what, with which probe set. */
    assert_string_equal(str(rep, "tool"), "sworn-conformance");
    assert_string_equal(str(rep, "claim"), "no failure found under these probes");
    assert_string_equal(str(get(rep, "operator"), "name"), "Test <Operator> & co");
    assert_int_equal(json_object_get_int64(get(get(rep, "operator"), "uid")), (int64_t)getuid());
    assert_int_equal(strlen(str(rep, "started")), 24);
    assert_int_equal(strlen(str(rep, "ended")), 24);
    d = get(rep, "deployment");
    assert_true(strlen(str(d, "origin")) > 0);
    assert_true(json_object_get_int64(get(get(d, "checkpoint_end"), "size")) >
                json_object_get_int64(get(get(d, "checkpoint_start"), "size")));
    assert_int_equal(strlen(str(get(d, "checkpoint_start"), "root")), 44);
    assert_int_equal(strlen(str(d, "policy_digest")), 64);
    assert_int_equal(json_object_get_int(get(get(rep, "summary"), "pass")), 10);
    p0 = json_object_array_get_idx(get(rep, "probes"), 0);
    assert_true(json_object_array_length(get(p0, "evidence")) > 0);
    assert_non_null(get(p0, "technique"));
    assert_non_null(get(p0, "expected"));
    assert_non_null(get(p0, "observed"));
    assert_non_null(get(p0, "duration_ms"));
    /* T5.verify reports each of sworn-verify's checks on its own line (the report's quotes,
     * receipts, keyring and witness quorum among them), each as sworn-verify counted it. */
    {
        json_object *probes = get(rep, "probes"), *v = NULL, *ev;
        int quotes = 0, receipts = 0, each = 0;

        for (size_t i = 0; i < json_object_array_length(probes); i++)
            if (strcmp(str(json_object_array_get_idx(probes, i), "id"), "T5.verify") == 0)
                v = json_object_array_get_idx(probes, i);
        assert_non_null(v);
        ev = get(v, "evidence");
        for (size_t i = 0; i < json_object_array_length(ev); i++) {
            const char *line = json_object_get_string(json_object_array_get_idx(ev, i));

            each += strncmp(line, "check ", 6) == 0;
            quotes += strncmp(line, "check quotes: ", 14) == 0;
            receipts += strncmp(line, "check receipts: pass, ", 22) == 0;
        }
        assert_int_equal(quotes, 1);
        assert_int_equal(receipts, 1);
        print_message("T5.verify: %d checks listed\n", each);
        assert_true(each >= 10);
    }
    /* The probe set's digest is the one `list` prints. */
    sworn_test_runv(&l, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "list", "--json", NULL);
    sworn_test_run_must(&l, "list --json");
    list = json_tokener_parse(l.out);
    assert_non_null(list);
    assert_string_equal(str(list, "probe_set_digest"), str(get(rep, "probe_set"), "digest"));
    json_object_put(list);
    sworn_test_run_free(&l);
    /* The HTML page: one table per tier, the operator's name escaped. */
    assert_int_equal(sworn_file_read(html, 1u << 20, &text, &len), 0);
    assert_non_null(strstr(text, "<h2>T5</h2>"));
    assert_non_null(strstr(text, "<h2>T4</h2>"));
    assert_non_null(strstr(text, "Test &lt;Operator&gt; &amp; co"));
    assert_null(strstr(text, "<Operator>"));
    assert_null(strstr(text, "<script"));
    free(text);
    json_object_put(rep);
    free(html);
    free(dep);
}

/* A trust policy whose log key is another key: T5.verify fails, and the tamper probes cannot
 * conclude (their baseline is rejected too). */
static void test_other_log_key(void **state)
{
    struct opts o = good;
    char *trust = sworn_test_path(stack.dir, "other-trust.txt"), *dep;
    json_object *rep = NULL;

    (void)state;
    assert_int_equal(
        sworn_stack_sh(&stack,
                       "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 "
                       "-out other.pem 2>/dev/null && openssl pkey -in other.pem -pubout "
                       "-outform DER -out other.spki && origin=$(head -n 1 tiles/checkpoint) && "
                       "{ echo \"origin $origin\"; echo \"log $(\"%s\" vkey --name \"$origin\" "
                       "--spki other.spki)\"; echo 'entries sworn'; echo 'quotes ignore'; "
                       "echo 'development allowed'; } > other-trust.txt",
                       sworn_test_bin("SWORN_LOG_BIN")),
        0);
    o.trust = trust;
    dep = deployment("other-key.yaml", &o);
    assert_int_equal(
        run(dep, &rep, "--only", "T5.verify", "--only", "T5.tamper-entry-changed", NULL), 1);
    expect_result(rep, "T5.verify", "fail");
    expect_result(rep, "T5.tamper-entry-changed", "error");
    assert_string_equal(str(rep, "claim"), "FAILURES FOUND under these probes");
    json_object_put(rep);
    free(dep);
    free(trust);
}

/* The record folder world-writable, then owned by the agent: T4.no-write-path fails. */
static void test_write_path(void **state)
{
    struct opts o = good;
    char *tiles = sworn_test_path(stack.dir, "tiles"), *dep;
    json_object *rep = NULL;
    struct stat st;

    (void)state;
    assert_int_equal(stat(tiles, &st), 0);
    assert_int_equal(chmod(tiles, 0777), 0);
    dep = deployment("writable.yaml", &o);
    assert_int_equal(run(dep, &rep, "--only", "T4.no-write-path", NULL), 1);
    expect_result(rep, "T4.no-write-path", "fail");
    json_object_put(rep);
    assert_int_equal(chmod(tiles, st.st_mode & 07777), 0);
    free(dep);

    /* The agent's uid is the record's owner (an owner can chmod). */
    o.agent_uid = (long)st.st_uid;
    dep = deployment("owner.yaml", &o);
    assert_int_equal(run(dep, &rep, "--only", "T4.no-write-path", NULL), 1);
    expect_result(rep, "T4.no-write-path", "fail");
    json_object_put(rep);
    free(dep);
    free(tiles);
}

/* A "verifier" that accepts anything: every tamper probe fails. */
static void test_verifier_accepts_anything(void **state)
{
    struct opts o = good;
    char *fake = sworn_test_path(stack.dir, "fake-verify"), *dep;
    FILE *f = fopen(fake, "w");
    json_object *rep = NULL;

    (void)state;
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\necho '{\"tool\":\"sworn-verify\",\"result\":\"pass\",\"tree_size\":1,"
               "\"checks\":[]}'\nexit 0\n");
    fclose(f);
    assert_int_equal(chmod(fake, 0755), 0);
    o.verify = fake;
    dep = deployment("fake.yaml", &o);
    assert_int_equal(run(dep, &rep, "--tier", "T5", "--only", "T5.tamper-entry-changed", "--only",
                         "T5.tamper-entry-deleted", "--only", "T5.tamper-rollback", "--only",
                         "T5.tamper-checkpoint-signature", NULL),
                     1);
    expect_result(rep, "T5.tamper-entry-changed", "fail");
    expect_result(rep, "T5.tamper-entry-deleted", "fail");
    expect_result(rep, "T5.tamper-rollback", "fail");
    expect_result(rep, "T5.tamper-checkpoint-signature", "fail");
    json_object_put(rep);
    free(dep);
    free(fake);
}

/* A record that is not the one decisiond exports (a stale copy): the decisions are not in it. */
static void test_stale_record(void **state)
{
    struct opts o = good;
    char *copy = sworn_test_path(stack.dir, "stale-tiles"), *dep;
    json_object *rep = NULL;

    (void)state;
    assert_int_equal(sworn_stack_sh(&stack, "cp -a tiles stale-tiles"), 0);
    o.record = copy;
    dep = deployment("stale.yaml", &o);
    assert_int_equal(run(dep, &rep, "--only", "T4.decisions-recorded", NULL), 1);
    expect_result(rep, "T4.decisions-recorded", "fail");
    json_object_put(rep);
    free(dep);
    free(copy);
}

/* decisiond's configuration changed on disk after the start the record measured: the record no
 * longer describes the start a restart (or an auditor reading the host) gets. */
static void test_measured_start_differs(void **state)
{
    char *dep = deployment("measured.yaml", &good);
    json_object *rep = NULL, *p;

    (void)state;
    assert_int_equal(sworn_stack_sh(&stack, "cp -p decisiond.yaml decisiond.yaml.orig && "
                                            "echo '# changed after the start' >> decisiond.yaml"),
                     0);
    assert_int_equal(run(dep, &rep, "--only", "T3.measured-start", NULL), 1);
    assert_int_equal(sworn_stack_sh(&stack, "mv decisiond.yaml.orig decisiond.yaml"), 0);
    expect_result(rep, "T3.measured-start", "fail");
    p = json_object_array_get_idx(get(rep, "probes"), 0);
    assert_non_null(strstr(str(p, "observed"), "config"));
    json_object_put(rep);
    free(dep);
}

/* --tier T3 runs only probes of tiers up to T3; skipped probes say why and fail nothing. */
static void test_tier_and_skips(void **state)
{
    char *path = sworn_test_path(stack.dir, "minimal.yaml"),
         *tiles = sworn_test_path(stack.dir, "tiles"),
         *trust = sworn_test_path(stack.dir, "trust.txt");
    FILE *f = fopen(path, "w");
    json_object *rep = NULL;

    (void)state;
    assert_non_null(f);
    fprintf(f, "operator: t\nrecord: %s\ntrust_policy: %s\nsworn_verify: %s\nagent: {uid: 65534}\n",
            tiles, trust, sworn_test_bin("SWORN_VERIFY_BIN"));
    fclose(f);
    assert_int_equal(run(path, &rep, "--tier", "T4", NULL), 0);
    expect_result(rep, "T4.decisions-recorded", "skipped");
    expect_result(rep, "T3.fail-closed", "skipped");
    expect_result(rep, "T4.no-write-path", "pass");
    /* T3.measured-start needs no key: the record and the host's processes. */
    expect_result(rep, "T3.measured-start", "pass");
    /* The four above and the 47 probes from inside the sandbox, each skipped without a sandbox
     * section (never passed). */
    assert_int_equal(json_object_array_length(get(rep, "probes")), 51);
    for (size_t i = 0; i < 51; i++) {
        json_object *p = json_object_array_get_idx(get(rep, "probes"), i);

        if (strcmp(str(p, "id"), "T4.no-write-path") != 0 &&
            strcmp(str(p, "id"), "T3.measured-start") != 0)
            assert_string_equal(str(p, "result"), "skipped");
    }
    json_object_put(rep);
    free(path);
    free(tiles);
    free(trust);
}

/* The deployment file's refusals, in process. */
static void expect_refused(const char *yaml, const char *needle)
{
    struct c_deploy d;

    sworn_err_clear();
    if (c_deploy_load_mem(&d, "dep.yaml", (const uint8_t *)yaml, strlen(yaml)) == 0)
        fail_msg("accepted:\n%s", yaml);
    if (strstr(sworn_err_msg(), needle) == NULL)
        fail_msg("refused with \"%s\", expected \"%s\"", sworn_err_msg(), needle);
}

#define BASE "operator: o\nrecord: /r\ntrust_policy: /t\nsworn_verify: /v\n"

static void test_deployment_refusals(void **state)
{
    struct c_deploy d;
    const char *ok = BASE "agent: {uid: 1000}\n";

    (void)state;
    assert_int_equal(c_deploy_load_mem(&d, "ok.yaml", (const uint8_t *)ok, strlen(ok)), 0);
    assert_int_equal(d.agent_uid, 1000);
    assert_int_equal(d.has_requests, 0);
    expect_refused(BASE "agent: {uid: 1}\nrecrod: /x\n", "dep.yaml:6:1: ");
    expect_refused(BASE "agent: {uid: 1}\nrecrod: /x\n", "recrod");
    expect_refused("operator: o\ntrust_policy: /t\nsworn_verify: /v\nagent: {uid: 1}\n",
                   "record is required");
    expect_refused(BASE, "agent is required");
    expect_refused(BASE "agent: {uid: abc}\n", "dep.yaml:5:");
    expect_refused(BASE "agent: {uid: [1]}\n", "dep.yaml:5:");
    expect_refused(BASE "agent: 7\n", "agent must be a mapping");
    expect_refused(BASE "agent: {uid: 1, gid: 2}\n", "gid");
    expect_refused("operator: o\nrecord: tiles\ntrust_policy: /t\nsworn_verify: /v\n"
                   "agent: {uid: 1}\n",
                   "record must be an absolute path");
    expect_refused("operator: [o]\nrecord: /r\ntrust_policy: /t\nsworn_verify: /v\n"
                   "agent: {uid: 1}\n",
                   "operator must be a string");
    expect_refused(BASE "agent: {uid: 1}\nrequests:\n  principal: a\n  allowed: ftp://x/\n"
                        "  denied: http://x/d\ndecision_socket: /s\n",
                   "allowed: must start with http");
    expect_refused(BASE "agent: {uid: 1}\nrequests:\n  principal: a\n  allowed: http://x:0/\n"
                        "  denied: http://x/d\ndecision_socket: /s\n",
                   "port");
    expect_refused(BASE "agent: {uid: 1}\nrequests:\n  principal: a\n  allowed: http://x/a\n"
                        "  denied: http://x/d\n",
                   "needs decision_socket");
    expect_refused(BASE "agent: {uid: 1}\nrequests:\n  principal: a\n  count: 0\n"
                        "  allowed: http://x/a\n  denied: http://x/d\ndecision_socket: /s\n",
                   "dep.yaml:");
    /* The sandbox's token endpoint and its body go together; a body is a form, without spaces. */
    expect_refused(BASE "agent: {uid: 1}\nsandbox:\n  command: [/bin/true]\n  probe: /p\n"
                        "  principal: a\n  oauth_token: http://x/token\n",
                   "sandbox.oauth_token and sandbox.oauth_body go together");
    expect_refused(BASE "agent: {uid: 1}\nsandbox:\n  command: [/bin/true]\n  probe: /p\n"
                        "  principal: a\n  oauth_token: http://x/token\n  oauth_body: \"a=b c\"\n",
                   "must be a form body");
    expect_refused(BASE "agent: {uid: 1}\nsandbox:\n  command: [/bin/true]\n  probe: /p\n"
                        "  principal: a\n  foreign_command: [sworn-run]\n",
                   "sandbox.foreign_command must start with an absolute path");
    /* sandbox.dns_rebinding: a numeric listen address with a port, and a host name. */
#define SBX BASE "agent: {uid: 1}\nsandbox:\n  command: [/bin/true]\n  probe: /p\n  principal: a\n"
    {
        const char *dns = SBX "  dns_rebinding: {listen: \"[::1]:5353\", name: Rebind.Example}\n";

        assert_int_equal(c_deploy_load_mem(&d, "dns.yaml", (const uint8_t *)dns, strlen(dns)), 0);
        assert_int_equal(d.sbx.has_dns_rebinding, 1);
        assert_string_equal(d.sbx.dns_listen, "::1");
        assert_int_equal(d.sbx.dns_port, 5353);
        assert_string_equal(d.sbx.dns_name, "Rebind.Example");
    }
    expect_refused(SBX "  dns_rebinding: {listen: \"127.0.0.1:53\"}\n",
                   "sandbox.dns_rebinding.name is required");
    expect_refused(SBX "  dns_rebinding: {name: r.example}\n",
                   "sandbox.dns_rebinding.listen is required");
    expect_refused(SBX "  dns_rebinding: {listen: \"127.0.0.1\", name: r.example}\n",
                   "listen must be \"IPV4:PORT\"");
    expect_refused(SBX "  dns_rebinding: {listen: \"localhost:53\", name: r.example}\n",
                   "listen must be \"IPV4:PORT\"");
    expect_refused(SBX "  dns_rebinding: {listen: \"::1:53\", name: r.example}\n",
                   "listen must be \"IPV4:PORT\"");
    expect_refused(SBX "  dns_rebinding: {listen: \"127.0.0.1:0\", name: r.example}\n",
                   "port must be 1..65535");
    expect_refused(SBX "  dns_rebinding: {listen: \"127.0.0.1:65536\", name: r.example}\n",
                   "port must be 1..65535");
    expect_refused(SBX "  dns_rebinding: {listen: \"127.0.0.1:53\", name: 10.0.0.1}\n",
                   "must be a name, not an address");
    expect_refused(SBX "  dns_rebinding: {listen: \"127.0.0.1:53\", name: \"a..b\"}\n",
                   "must be a host name");
    expect_refused(SBX "  dns_rebinding: {listen: \"127.0.0.1:53\", name: \"-a.b\"}\n",
                   "must be a host name");
    expect_refused(SBX "  dns_rebinding: {listen: \"127.0.0.1:53\", name: r.example, ttl: 0}\n",
                   "ttl");
    expect_refused(SBX "  dns_rebinding: [127.0.0.1:53]\n", "must be a mapping");
#undef SBX
}

/* The program: a bad deployment file, an unknown probe and bad usage are exit 2. */
static void test_exit_two(void **state)
{
    char *bad = sworn_test_path(stack.dir, "bad.yaml"), *good_dep = deployment("g2.yaml", &good);
    FILE *f = fopen(bad, "w");
    struct sworn_test_run r;

    (void)state;
    assert_non_null(f);
    fprintf(f, BASE "agent: {uid: 1}\nextra: 1\n");
    fclose(f);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "run", "--deployment", bad,
                    NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, ":6:1: "));
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "run", "--deployment",
                    good_dep, "--only", "T9.nothing", NULL);
    assert_int_equal(r.status, 2);
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "run", "--deployment",
                    good_dep, "--tier", "T6", NULL);
    assert_int_equal(r.status, 2);
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "frobnicate", NULL);
    assert_int_equal(r.status, 2);
    sworn_test_run_free(&r);
    free(bad);
    free(good_dep);
}

/* The newest entries' kinds as swornctl tail prints them (free it). */
static char *tail_text(unsigned n)
{
    struct sworn_test_run t;
    char count[16], *out;

    snprintf(count, sizeof(count), "%u", n);
    sworn_test_runv(&t, NULL, sworn_test_bin("SWORNCTL_BIN"), "--config", stack.config, "tail",
                    count, NULL);
    sworn_test_run_must(&t, "swornctl tail");
    out = strdup(t.out);
    sworn_test_run_free(&t);
    assert_non_null(out);
    return out;
}

/* The report recorded (issue 19): the run names the entry's index; the entry, signed by the
 * deployment's key, is in the exported record with the report's bytes beside it, and the
 * auditor's sworn-verify accepts and lists it. */
static void test_report_recorded(void **state)
{
    char *dep = deployment("rec.yaml", &good), *json = sworn_test_path(stack.dir, "rec.json"),
         rel[64], *exported, *mine = NULL, *theirs = NULL, *tail;
    static const char needle[] = "is the ConformanceReport entry at log index ";
    struct sworn_test_run r;
    const char *at = NULL;
    unsigned long long index;
    size_t mine_len = 0, theirs_len = 0;
    json_object *rep, *list, *l = NULL;

    (void)state;
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "run", "--deployment", dep,
                    "--tier", "T5", "--json", json, NULL);
    if (r.status != 0 || (at = strstr(r.out, needle)) == NULL)
        fail_msg("sworn-conformance exit %d:\n%s\n%s", r.status, r.out, r.err);
    index = strtoull(at + strlen(needle), NULL, 10);
    assert_non_null(strstr(r.out, "its bytes are beside the record"));
    sworn_test_run_free(&r);
    tail = tail_text(1);
    assert_non_null(strstr(tail, "\"kind\":\"conformance_report\""));
    assert_non_null(strstr(tail, "\"result\":\"pass\""));
    free(tail);
    assert_true(sworn_stack_checkpoint_now(&stack) > index);
    /* The bytes beside the tiles are the JSON report the run wrote. */
    snprintf(rel, sizeof(rel), "sworn/reports/%llu.json", index);
    exported = sworn_test_path(stack.tiles, rel);
    assert_int_equal(sworn_file_read(json, 1u << 20, &mine, &mine_len), 0);
    assert_int_equal(sworn_file_read(exported, 1u << 20, &theirs, &theirs_len), 0);
    assert_int_equal(mine_len, theirs_len);
    assert_memory_equal(mine, theirs, mine_len);
    /* sworn-verify checks its signature and digest, and lists it. */
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), stack.dir, "trust.txt", "tiles",
                            NULL, 0, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_pass(rep, "reports");
    list = sworn_verify_get(rep, "report_list");
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *c = json_object_array_get_idx(list, i);

        if ((unsigned long long)json_object_get_int64(sworn_verify_get(c, "index")) == index)
            l = c;
    }
    assert_non_null(l);
    assert_string_equal(json_object_get_string(sworn_verify_get(l, "result")), "pass");
    assert_string_equal(json_object_get_string(sworn_verify_get(l, "tier")), "T5");
    assert_string_equal(json_object_get_string(sworn_verify_get(l, "file")), "matches");
    assert_string_equal(json_object_get_string(sworn_verify_get(l, "operator_name")),
                        "Test <Operator> & co");
    assert_int_equal(json_object_get_int64(sworn_verify_get(l, "peer_uid")), (int64_t)getuid());
    assert_true(json_object_get_boolean(sworn_verify_get(l, "verified")));
    json_object_put(rep);
    free(mine);
    free(theirs);
    free(exported);
    free(json);
    free(dep);
}

/* s with the first `from` replaced by `to` (free it); fails the test when from is not in s. */
static char *replaced(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);

    if (at == NULL)
        fail_msg("\"%s\" is not in the report", from);
    assert_non_null(out);
    snprintf(out, n, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    return out;
}

/* Submit report text; it must be refused with a message holding want, and nothing recorded. */
static void expect_report_refused(const char *path, const char *text, const char *want)
{
    struct c_submitted sub;
    uint64_t before = sworn_stack_checkpoint_now(&stack), after;

    if (c_submit_report(path, text, strlen(text), 30000, &sub) == 0)
        fail_msg("a report was recorded at %llu that must be refused (%s)",
                 (unsigned long long)sub.log_index, want);
    if (strstr(sworn_err_msg(), want) == NULL)
        fail_msg("refused with \"%s\", not for \"%s\"", sworn_err_msg(), want);
    after = sworn_stack_checkpoint_now(&stack);
    if (strcmp(path, stack.admin) == 0)
        assert_int_equal(after, before); /* an admin peer's bad report: no entry at all */
}

/* Bad reports on the admin socket are refused and nothing is recorded: the dishonest operator's
 * claims that the bytes contradict (a pass the probes did not give, a claim of proof, a run
 * against another log), a report that reads two ways (a repeated key, other spacing). On the
 * decision socket (the proxy's, in the agent's direction) the call does not exist: refused as a
 * malformed frame, recorded as a Refused entry, never as a report. */
static void test_report_refused(void **state)
{
    char *dep = deployment("refused.yaml", &good), *json = sworn_test_path(stack.dir, "ref.json"),
         *text = NULL, *bad, *tail;
    size_t len = 0;
    struct sworn_test_run r;

    (void)state;
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "run", "--deployment", dep,
                    "--only", "T5.sufficiency", "--no-record", "--json", json, NULL);
    if (r.status != 0 || strstr(r.out, "ConformanceReport entry") != NULL)
        fail_msg("sworn-conformance --no-record: exit %d:\n%s\n%s", r.status, r.out, r.err);
    sworn_test_run_free(&r);
    assert_int_equal(sworn_file_read(json, 1u << 20, &text, &len), 0);

    /* A pass the probes did not give: the summary says pass, a probe says fail. */
    bad = replaced(text, "\"result\":\"pass\",\"evidence\"", "\"result\":\"fail\",\"evidence\"");
    expect_report_refused(stack.admin, bad, "summary.pass is 1, but 0 probes say pass");
    free(bad);
    /* A claim of proof. */
    bad = replaced(text, "no failure found under these probes", "conformance proven");
    expect_report_refused(stack.admin, bad, "claim is not");
    free(bad);
    /* Another log's checkpoint (a report from another deployment, replayed here). */
    {
        const char *root = strstr(text, "\"checkpoint_start\":{\"size\":"), *end;
        char from[80], to[64];

        assert_non_null(root);
        root = strstr(root, "\"root\":\"");
        assert_non_null(root);
        /* The whole string, to its closing quote: json-c writes a '/' of the base64 as "\/". */
        end = strchr(root + 8, '"');
        assert_non_null(end);
        assert_true(end - root + 1 < (ptrdiff_t)sizeof(from));
        snprintf(from, sizeof(from), "%.*s", (int)(end - root + 1), root);
        snprintf(to, sizeof(to), "\"root\":\"%s\"", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        bad = replaced(text, from, to);
        expect_report_refused(stack.admin, bad, "not this log's tree");
        free(bad);
    }
    /* Two results, a second reader's and decisiond's, and spacing: not canonical. */
    bad = replaced(text, "\"result\":\"pass\"", "\"result\":\"fail\",\"result\":\"pass\"");
    expect_report_refused(stack.admin, bad, "canonical");
    free(bad);
    bad = replaced(text, "{\"tool\"", "{ \"tool\"");
    expect_report_refused(stack.admin, bad, "canonical");
    free(bad);
    /* An older report_version (no selection, no measured start). */
    bad = replaced(text, "\"report_version\":2", "\"report_version\":1");
    expect_report_refused(stack.admin, bad, "report_version");
    free(bad);
    /* The decision socket has no such call. */
    expect_report_refused(stack.decision, text, "");
    tail = tail_text(1);
    assert_non_null(strstr(tail, "\"kind\":\"refused\""));
    assert_null(strstr(tail, "conformance_report"));
    free(tail);
    free(text);
    free(json);
    free(dep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deployment_refusals),
        cmocka_unit_test(test_good_deployment),
        cmocka_unit_test(test_other_log_key),
        cmocka_unit_test(test_write_path),
        cmocka_unit_test(test_verifier_accepts_anything),
        cmocka_unit_test(test_stale_record),
        cmocka_unit_test(test_measured_start_differs),
        cmocka_unit_test(test_tier_and_skips),
        cmocka_unit_test(test_exit_two),
        cmocka_unit_test(test_report_recorded),
        cmocka_unit_test(test_report_refused),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
