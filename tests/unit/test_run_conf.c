/*
 * test_run_conf.c -- sworn-run's configuration (sandbox/r_conf.h, docs/sandbox.md
 * "Configuration"): a full file read as written, the command line over it, a dev stack's
 * stack.env, every refusal with its place and message, and the digest's canonical text byte by
 * byte, its SHA-256 checked with the openssl command.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "r_conf.h"
#include "testutil.h"

#define TOK "sym_0123456789abcdef0123456789abcdef"
#define TOK2 "sym_ffffffffffffffffffffffffffffffff_x"

static const char full[] = "principal: agent-build\n"
                           "name: build-1\n"
                           "hostlink: /run/sworn/proxy/hostlink.sock\n"
                           "admin_socket: /run/sworn/admin.sock\n"
                           "proxy_ca: /etc/sworn/proxy-ca.crt\n"
                           "state_dir: /run/sworn-run\n"
                           "limits: {timeout: 1h, memory: 2147483648, processes: 512, "
                           "connections: 32}\n"
                           "uids: {first: 3000000, count: 16}\n"
                           "env:\n"
                           "  GITHUB_TOKEN: " TOK "\n"
                           "  OTHER: " TOK2 "\n"
                           "files:\n"
                           "  github: " TOK "\n"
                           "pass_env: [TERM]\n"
                           "mask: [/etc/mysecret, /usr/local/etc/app]\n";

static struct sworn_run_conf conf;

static int load(const char *text)
{
    sworn_run_conf_init(&conf);
    return sworn_run_conf_load_yaml_mem(&conf, "t.yaml", (const uint8_t *)text, strlen(text));
}

static void test_full_file(void **state)
{
    (void)state;
    assert_int_equal(load(full), 0);
    assert_string_equal(conf.principal, "agent-build");
    assert_string_equal(conf.name, "build-1");
    assert_string_equal(conf.hostlink, "/run/sworn/proxy/hostlink.sock");
    assert_string_equal(conf.admin_socket, "/run/sworn/admin.sock");
    assert_string_equal(conf.proxy_ca, "/etc/sworn/proxy-ca.crt");
    assert_string_equal(conf.state_dir, "/run/sworn-run");
    assert_int_equal(conf.wall_ms, 3600000);
    assert_int_equal(conf.memory_bytes, 2147483648u);
    assert_int_equal(conf.processes, 512);
    assert_int_equal(conf.connections, 32);
    assert_int_equal(conf.uid_first, 3000000);
    assert_int_equal(conf.uid_count, 16);
    assert_int_equal(conf.nenv, 2);
    assert_string_equal(conf.env[0].name, "GITHUB_TOKEN");
    assert_string_equal(conf.env[0].value, TOK);
    assert_string_equal(conf.env[1].name, "OTHER");
    assert_int_equal(conf.nfiles, 1);
    assert_string_equal(conf.files[0].name, "github");
    assert_int_equal(conf.npass_env, 1);
    assert_string_equal(conf.pass_env[0], "TERM");
    assert_int_equal(conf.nmask, 2);
    assert_string_equal(conf.mask[1], "/usr/local/etc/app");
    sworn_run_conf_free(&conf);
}

/* Each refused file: the message's position and words. */
static void test_refusals(void **state)
{
    static const struct {
        const char *text, *where, *words;
    } rows[] = {
        {"principle: a\n", "t.yaml:1:1", "principle"},
        {"principal: \"a b\"\n", "t.yaml:1:12", "principal must be 1..128 printable ASCII"},
        {"principal: \"\"\n", "t.yaml:1:12", "principal must be 1..128"},
        {"name: \"x\\ty\"\n", "t.yaml:1:7", "name must be"},
        {"hostlink: run/h.sock\n", "t.yaml:1:11", "hostlink must be an absolute path"},
        {"hostlink: /a/../h.sock\n", "t.yaml:1:11", "must be an absolute path"},
        {"hostlink: /a//h.sock\n", "t.yaml:1:11", "must be an absolute path"},
        {"hostlink: /a/\n", "t.yaml:1:11", "must be an absolute path"},
        {"hostlink: "
         "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
         "t.yaml:1:11", "too long for a Unix socket"},
        {"proxy_ca: ./ca.pem\n", "t.yaml:1:11", "proxy_ca must be an absolute path"},
        {"env: {GITHUB_TOKEN: ghp_0123456789abcdef0123456789abcdef}\n", "t.yaml:1:21",
         "env.GITHUB_TOKEN must be a symbolic token"},
        {"env: {A: sym_short}\n", "t.yaml:1:10", "must be a symbolic token"},
        {"env: {HTTPS_PROXY: " TOK "}\n", "t.yaml:1:7", "is set by sworn-run itself"},
        {"env: {LD_PRELOAD: " TOK "}\n", "t.yaml:1:7", "is set by sworn-run itself"},
        {"env: {1A: " TOK "}\n", "t.yaml:1:7", "is not a variable name"},
        {"env: [a]\n", "t.yaml:1:6", "env must be a mapping"},
        {"files: {../x: " TOK "}\n", "t.yaml:1:9", "is not a file name"},
        {"files: {..: " TOK "}\n", "t.yaml:1:9", "is not a file name"},
        {"files: {a: " TOK ", a: " TOK "}\n", "t.yaml:1:", "duplicate"},
        {"pass_env: [PATH]\n", "t.yaml:1:12", "is set by sworn-run itself"},
        {"pass_env: TERM\n", "t.yaml:1:11", "pass_env must be a list"},
        {"env: {A: " TOK "}\npass_env: [A]\n", "t.yaml:2:11", "is also in env"},
        {"mask: [etc/x]\n", "t.yaml:1:8", "must be an absolute path"},
        {"limits: {timeout: 0s}\n", "t.yaml:1:19", "limits.timeout must be 1ms..30d"},
        {"limits: {timeout: 31d}\n", "t.yaml:1:19", "limits.timeout must be 1ms..30d"},
        {"limits: {memory: 1024}\n", "t.yaml:1:18", ""},
        {"limits: {processes: 0}\n", "t.yaml:1:21", ""},
        {"limits: {cpu: 1}\n", "t.yaml:1:10", "cpu"},
        {"limits: {connections: 0}\n", "t.yaml:1:23", ""},
        {"limits: {connections: 1025}\n", "t.yaml:1:23", ""},
        {"uids: {first: 1000}\n", "t.yaml:1:15", ""},
        {"uids: {first: 4294967200, count: 1000}\n", "t.yaml:1:7", "first + count"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (load(rows[i].text) == 0)
            fail_msg("accepted: %s", rows[i].text);
        if (strstr(sworn_err_msg(), rows[i].where) == NULL ||
            strstr(sworn_err_msg(), rows[i].words) == NULL)
            fail_msg("%s -> \"%s\" (wanted %s and \"%s\")", rows[i].text, sworn_err_msg(),
                     rows[i].where, rows[i].words);
        sworn_run_conf_free(&conf);
    }
}

/* The command line: the file first, every option over it, the command after --. */
static void test_command_line(void **state)
{
    char *dir = sworn_test_tmpdir("runconf");
    char *path = sworn_test_path(dir, "run.yaml");
    char *const argv[] = {"sworn-run", "--name", "cli-name", "--config", path,
                          "--timeout", "90s",    "--memory", "64M",      "--processes",
                          "7",         "--keep", "--work",   "/tmp/w",   "--",
                          "/bin/echo", "--name", "x",        NULL};
    char *const no_cmd[] = {"sworn-run", "--config", path, NULL};
    char *const two[] = {"sworn-run", "--config", path, "--stack", "/tmp", "--", "true", NULL};
    char *const bad_opt[] = {"sworn-run", "--config", path, "--net", "--", "true", NULL};
    char *const bad_timeout[] = {"sworn-run", "--config", path, "--timeout", "5x", "--", "t", NULL};
    char *const no_dash[] = {"sworn-run", "--config", path, "true", NULL};
    char *const tab[] = {"sworn-run", "--config", path, "--", "sh", "-c", "a\tb", NULL};
    char *const help[] = {"sworn-run", "--help", NULL};
    char *const version[] = {"sworn-run", "--version", NULL};

    (void)state;
    sworn_test_write_file(path, full, strlen(full), 0600);
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 18, argv), 0);
    assert_string_equal(conf.name, "cli-name"); /* the option wins over the file's build-1 */
    assert_string_equal(conf.principal, "agent-build");
    assert_int_equal(conf.wall_ms, 90000);
    assert_int_equal(conf.memory_bytes, 64u * 1024u * 1024u);
    assert_int_equal(conf.processes, 7);
    assert_int_equal(conf.keep, 1);
    assert_string_equal(conf.work, "/tmp/w");
    assert_int_equal(conf.argc, 3);
    assert_string_equal(conf.argv[0], "/bin/echo");
    assert_string_equal(conf.argv[1], "--name"); /* the agent's own options are its own */
    sworn_run_conf_free(&conf);

    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 3, no_cmd), -1);
    assert_non_null(strstr(sworn_err_msg(), "no command"));
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 7, two), -1);
    assert_non_null(strstr(sworn_err_msg(), "--config and --stack"));
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 6, bad_opt), -1);
    assert_non_null(strstr(sworn_err_msg(), "--net"));
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 7, bad_timeout), -1);
    assert_non_null(strstr(sworn_err_msg(), "--timeout: \"5x\""));
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 4, no_dash), -1);
    assert_non_null(strstr(sworn_err_msg(), "put the agent's command after --"));
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 7, tab), -1);
    assert_non_null(strstr(sworn_err_msg(), "argument 2 of the command cannot be recorded"));
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 2, help), 1);
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 2, version), 2);
    free(path);
    sworn_test_tmpdir_drop(&dir);
}

/* A configuration without a principal or a socket is refused before anything runs. */
static void test_required(void **state)
{
    char *const argv[] = {"sworn-run", "--", "true", NULL};
    char *const only_principal[] = {"sworn-run", "--principal", "p", "--", "true", NULL};

    (void)state;
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 3, argv), -1);
    assert_non_null(strstr(sworn_err_msg(), "a principal (--principal or principal:) is missing"));
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_from_args(&conf, 5, only_principal), -1);
    assert_non_null(strstr(sworn_err_msg(), "hostlink"));
}

static void test_stack_env(void **state)
{
    static const char good[] = "CONFIG=/tmp/s/decisiond.yaml\n"
                               "ADMIN_SOCKET=/tmp/s/admin.sock\n"
                               "PROXY_SOCKET=/tmp/s/proxy/hostlink.sock\n"
                               "PROXY_CA=\"/tmp/s/proxy-ca/ca.crt\"\n"
                               "PROXY_PRINCIPAL=agent-1\n"
                               "PROXY_PRINCIPAL=agent-2\n";
    static const char missing[] = "ADMIN_SOCKET=/tmp/s/admin.sock\n";
    static const char relative[] = "PROXY_SOCKET=h.sock\nADMIN_SOCKET=/a\nPROXY_CA=/c\n"
                                   "PROXY_PRINCIPAL=a\n";
    char *dir = sworn_test_tmpdir("runstack");
    char *env = sworn_test_path(dir, "stack.env");

    (void)state;
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_stack_text(&conf, "s/stack.env", good, strlen(good)), 0);
    assert_string_equal(conf.hostlink, "/tmp/s/proxy/hostlink.sock");
    assert_string_equal(conf.admin_socket, "/tmp/s/admin.sock");
    assert_string_equal(conf.proxy_ca, "/tmp/s/proxy-ca/ca.crt");
    assert_string_equal(conf.principal, "agent-2"); /* the last one, as the shell reads it */
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_stack_text(&conf, "s/stack.env", missing, strlen(missing)), -1);
    assert_non_null(strstr(sworn_err_msg(), "s/stack.env: no PROXY_SOCKET"));
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_stack_text(&conf, "s/stack.env", relative, strlen(relative)),
                     -1);
    assert_non_null(strstr(sworn_err_msg(), "PROXY_SOCKET must be an absolute path"));

    /* From the folder: the state folder is DIR/sandboxes. */
    sworn_test_write_file(env, good, strlen(good), 0600);
    sworn_run_conf_init(&conf);
    assert_int_equal(sworn_run_conf_load_stack(&conf, dir), 0);
    assert_true(strlen(conf.state_dir) > strlen(dir));
    assert_string_equal(conf.state_dir + strlen(dir), "/sandboxes");
    free(env);
    sworn_test_tmpdir_drop(&dir);
}

/* The canonical text, byte by byte, and its SHA-256 as the openssl command computes it. */
static void test_digest(void **state)
{
    static const char expect[] = "version=1\n"
                                 "principal=agent-build\n"
                                 "name=build-1\n"
                                 "hostlink=/run/sworn/proxy/hostlink.sock\n"
                                 "admin_socket=/run/sworn/admin.sock\n"
                                 "proxy_ca=/etc/sworn/proxy-ca.crt\n"
                                 "work=\n"
                                 "keep=0\n"
                                 "limits.timeout_ms=3600000\n"
                                 "limits.memory=2147483648\n"
                                 "limits.processes=512\n"
                                 "limits.connections=32\n"
                                 "env=GITHUB_TOKEN=" TOK "\n"
                                 "env=OTHER=" TOK2 "\n"
                                 "file=github=" TOK "\n"
                                 "pass_env=TERM\n"
                                 "mask=/etc/mysecret\n"
                                 "mask=/usr/local/etc/app\n";
    char text[8192], cmd[1024], hex[65], want[65] = {0};
    uint8_t digest[32];
    char *dir = sworn_test_tmpdir("rundigest");
    char *path = sworn_test_path(dir, "canon");
    FILE *p;

    (void)state;
    assert_int_equal(load(full), 0);
    assert_int_equal(sworn_run_conf_canonical(&conf, text, sizeof(text)), (long)strlen(expect));
    assert_string_equal(text, expect);
    assert_int_equal(sworn_run_conf_canonical(&conf, text, 10), -1); /* never cut short */
    assert_int_equal(sworn_run_conf_digest(&conf, digest), 0);
    for (size_t i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    sworn_test_write_file(path, expect, strlen(expect), 0600);
    snprintf(cmd, sizeof(cmd), "openssl dgst -sha256 -r %s", path);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%64s", want), 1);
    assert_int_equal(pclose(p), 0);
    assert_string_equal(hex, want);
    sworn_run_conf_free(&conf);
    free(path);
    sworn_test_tmpdir_drop(&dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_file),    cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_command_line), cmocka_unit_test(test_required),
        cmocka_unit_test(test_stack_env),    cmocka_unit_test(test_digest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
