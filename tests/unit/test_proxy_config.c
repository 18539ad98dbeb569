/*
 * test_proxy_config.c -- unit tests of proxy/p_config.c (sworn-proxy's configuration).
 *
 * The shipped example (proxy/examples/proxy.yaml) loads into exactly the values it shows; a
 * minimal file gets every default; every refusal (one table: a file and the line:col and message
 * expected) fails at the offending node with *out untouched; every bounded key is accepted at both
 * edges and refused one step outside; user, group and uid names resolve (root and 0 alike);
 * loading from a file digests its bytes and refuses a file others may write; and
 * sworn_pconf_check finds each problem on the file system in turn.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "err.h"
#include "p_config.h"
#include "seccomp.h"
#include "testutil.h"

#define NAME "proxy.yaml"

/* The three required sections, one line each (lines 1, 2 and 3). */
#define L1 "listen: [{unix: /run/a.sock, principal: p}]\n"
#define D2 "decisiond: {socket: /run/d.sock}\n"
#define C3 "ca: {cert: /etc/c.crt, key: /etc/c.key}\n"
#define MIN L1 D2 C3

static struct sworn_pconf *conf(void)
{
    struct sworn_pconf *c = malloc(sizeof(*c));

    assert_non_null(c);
    memset(c, 0xA5, sizeof(*c));
    return c;
}

/* Load text (name NAME) or fail the test with the message. */
static struct sworn_pconf *load_ok(const char *text)
{
    struct sworn_pconf *c = conf();

    if (sworn_pconf_load_mem(NAME, (const uint8_t *)text, strlen(text), c) != 0)
        fail_msg("load failed: %s\n--- input:\n%s", sworn_err_msg(), text);
    return c;
}

/* Loading fails with "NAME:<pos><sub>..." (pos "line:col: ") and leaves *out untouched. */
static void load_fails(const char *text, const char *pos, const char *sub)
{
    struct sworn_pconf *c = conf(), *before = conf();
    char want[256];

    assert_int_equal(sworn_pconf_load_mem(NAME, (const uint8_t *)text, strlen(text), c), -1);
    assert_memory_equal(c, before, sizeof(*c));
    snprintf(want, sizeof(want), NAME ":%s", pos);
    if (strncmp(sworn_err_msg(), want, strlen(want)) != 0 || strstr(sworn_err_msg(), sub) == NULL)
        fail_msg("got \"%s\"; want \"%s...%s...\"\n--- input:\n%s", sworn_err_msg(), want, sub,
                 text);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    free(c);
    free(before);
}

/* The example, with the users and groups it names (which this machine need not have) as root. */
static char *example_text(void)
{
    static const char *const swap[][2] = {
        {"user: sworn-proxy\n", "user: root       \n"},
        {"group: sworn-run ", "group: root      "},
        {"uids: [sworn-run]", "uids: [root]     "},
    };
    char *path = sworn_test_path(sworn_test_source_dir(), "proxy/examples/proxy.yaml");
    char *text = sworn_test_read_file(path, NULL);

    free(path);
    for (size_t i = 0; i < sizeof(swap) / sizeof(swap[0]); i++) {
        char *at = strstr(text, swap[i][0]);

        assert_non_null(at);
        assert_int_equal(strlen(swap[i][0]), strlen(swap[i][1]));
        memcpy(at, swap[i][1], strlen(swap[i][1]));
    }
    return text;
}

static void test_example(void **state)
{
    char *text = example_text();
    struct sworn_pconf *c = load_ok(text);
    const struct sworn_pconf_listener *l;
    uint8_t d[32];

    (void)state;
    assert_string_equal(c->path, NAME);
    assert_int_equal(EVP_Digest(text, strlen(text), d, NULL, EVP_sha256(), NULL), 1);
    assert_memory_equal(c->digest, d, 32);
    assert_int_equal(c->has_user, 1);
    assert_string_equal(c->user, "root");
    assert_int_equal(c->uid, 0);
    assert_int_equal(c->gid, 0);
    assert_int_equal(c->nlisteners, 3);
    l = &c->listeners[0];
    assert_int_equal(l->kind, SWORN_PCONF_HOSTLINK);
    assert_string_equal(l->path, "/run/sworn/proxy/hostlink.sock");
    assert_string_equal(l->principal, "agent-build");
    assert_string_equal(l->sandbox, "");
    assert_int_equal(l->mode, 0660);
    assert_int_equal(l->has_group, 1);
    assert_int_equal(l->group, 0);
    assert_int_equal(l->nuids, 1);
    assert_int_equal(l->uids[0], 0);
    assert_string_equal(l->address, "");
    assert_string_equal(l->port_file, "");
    l = &c->listeners[1];
    assert_int_equal(l->kind, SWORN_PCONF_UNIX);
    assert_string_equal(l->path, "/run/sworn/proxy/agent.sock");
    assert_string_equal(l->principal, "agent-local");
    assert_string_equal(l->sandbox, "build-sandbox-1");
    assert_int_equal(l->mode, 0600);
    assert_int_equal(l->has_group, 0);
    assert_int_equal(l->nuids, 0);
    l = &c->listeners[2];
    assert_int_equal(l->kind, SWORN_PCONF_TCP);
    assert_string_equal(l->path, "");
    assert_string_equal(l->address, "127.0.0.1");
    assert_int_equal(l->family, 4);
    assert_int_equal(l->port, 3128);
    assert_string_equal(l->port_file, "/run/sworn/proxy/dev.port");
    assert_string_equal(l->principal, "agent-dev");
    assert_string_equal(c->decision_socket, "/run/sworn/decision.sock");
    assert_int_equal(c->decision_timeout_ms, 5000);
    assert_int_equal(c->escalation_max_ms, 600000);
    assert_string_equal(c->ca_cert, "/etc/sworn/proxy-ca.crt");
    assert_string_equal(c->ca_key, "/etc/sworn/proxy-ca.key");
    assert_int_equal(c->leaf_ttl_s, 3600);
    assert_int_equal(c->leaf_cache, 1024);
    assert_string_equal(c->upstream_ca_file, "/etc/ssl/certs/ca-certificates.crt");
    assert_int_equal(c->connect_timeout_ms, 10000);
    assert_int_equal(c->upstream_timeout_ms, 60000);
    assert_int_equal(c->nallow_private, 2);
    {
        static const uint8_t v4[16] = {10, 20};
        static const uint8_t v6[16] = {0xfd, 0x00, 0x00, 0x20};

        assert_int_equal(c->allow_private[0].family, 4);
        assert_int_equal(c->allow_private[0].prefix, 16);
        assert_memory_equal(c->allow_private[0].addr, v4, 16);
        assert_int_equal(c->allow_private[1].family, 6);
        assert_int_equal(c->allow_private[1].prefix, 32);
        assert_memory_equal(c->allow_private[1].addr, v6, 16);
    }
    assert_int_equal(c->nraw_ports, 1);
    assert_int_equal(c->raw_ports[0], 22);
    assert_int_equal(c->tls_peek_ms, 5000);
    assert_int_equal(c->head_max, 16384);
    assert_int_equal(c->headers_max, 100);
    assert_int_equal(c->body_max, 8388608);
    assert_int_equal(c->connections_max, 1024);
    assert_int_equal(c->head_timeout_ms, 30000);
    assert_int_equal(c->body_timeout_ms, 60000);
    assert_int_equal(c->idle_timeout_ms, 60000);
    assert_string_equal(c->delegation_header, "x-delegation-token");
    assert_string_equal(c->delegation_verify_key, "/etc/sworn/delegation.pub");
    assert_string_equal(c->metrics_socket, "/run/sworn/proxy/metrics.sock");
    assert_string_equal(c->log_path, "/var/log/sworn/proxy.log");
    assert_int_equal(c->log_debug, 0);
    assert_int_equal(c->seccomp_mode, SWORN_SECCOMP_ENFORCE);
    free(c);
    free(text);
}

static void test_defaults(void **state)
{
    struct sworn_pconf *c = load_ok(MIN);
    const struct sworn_pconf_listener *l = &c->listeners[0];

    (void)state;
    assert_int_equal(c->has_user, 0);
    assert_string_equal(c->user, "");
    assert_int_equal(c->nlisteners, 1);
    assert_int_equal(l->kind, SWORN_PCONF_UNIX);
    assert_string_equal(l->path, "/run/a.sock");
    assert_int_equal(l->mode, 0600);
    assert_int_equal(l->has_group, 0);
    assert_int_equal(l->nuids, 0);
    assert_string_equal(l->principal, "p");
    assert_string_equal(l->sandbox, "");
    assert_int_equal(l->line, 1);
    assert_int_equal(l->col, 10);
    assert_string_equal(c->decision_socket, "/run/d.sock");
    assert_int_equal(c->decision_timeout_ms, 5000);
    assert_int_equal(c->escalation_max_ms, 600000);
    assert_string_equal(c->ca_cert, "/etc/c.crt");
    assert_string_equal(c->ca_key, "/etc/c.key");
    assert_int_equal(c->leaf_ttl_s, 3600);
    assert_int_equal(c->leaf_cache, 1024);
    assert_string_equal(c->upstream_ca_file, "");
    assert_int_equal(c->connect_timeout_ms, 10000);
    assert_int_equal(c->upstream_timeout_ms, 60000);
    assert_int_equal(c->nallow_private, 0);
    assert_int_equal(c->nraw_ports, 0);
    assert_int_equal(c->tls_peek_ms, 5000);
    assert_int_equal(c->head_max, 16384);
    assert_int_equal(c->headers_max, 100);
    assert_int_equal(c->body_max, 8388608);
    assert_int_equal(c->connections_max, 1024);
    assert_int_equal(c->head_timeout_ms, 30000);
    assert_int_equal(c->body_timeout_ms, 60000);
    assert_int_equal(c->idle_timeout_ms, 60000);
    assert_string_equal(c->delegation_header, "");
    assert_string_equal(c->delegation_verify_key, "");
    assert_string_equal(c->metrics_socket, "");
    assert_string_equal(c->log_path, "");
    assert_int_equal(c->log_debug, 0);
    assert_int_equal(c->seccomp_mode, SWORN_SECCOMP_ENFORCE);
    free(c);

    /* Empty sections take every default too. */
    c = load_ok(MIN "upstream: {}\nconnect: {}\nlimits: {}\ntimeouts: {}\ndelegation: {}\n"
                    "metrics: {}\nlog: {}\nhardening: {}\n");
    assert_int_equal(c->connect_timeout_ms, 10000);
    assert_int_equal(c->head_max, 16384);
    assert_int_equal(c->idle_timeout_ms, 60000);
    assert_int_equal(c->seccomp_mode, SWORN_SECCOMP_ENFORCE);
    free(c);
}

static void test_values(void **state)
{
    struct sworn_pconf *c;

    (void)state;
    /* Paths are cleaned lexically; the other spellings of the same settings. */
    c = load_ok(
        "listen:\n"
        "  - {unix: //run/./x/../a.sock, principal: p, mode: 600, uids: [0, 1001, 4294967294]}\n"
        "  - {hostlink: /run/h.sock, principal: \"a!~\", mode: 660, group: 0, uids: [0]}\n"
        "  - {tcp: \"[::1]:0\", principal: q}\n"
        "  - {tcp: \"127.1.2.3:0\", principal: q}\n"
        "  - {tcp: \"127.0.0.1:0\", principal: q}\n"
        "  - {tcp: \"127.0.0.1:0\", principal: q}\n"
        "  - {tcp: \"127.0.0.1:65535\", principal: q}\n"
        "  - {tcp: \"127.0.0.1:1\", principal: q, port_file: /tmp/p1}\n"
        "  - {tcp: \"127.0.0.2:1\", principal: q, port_file: /tmp/p2}\n"
        "decisiond: {socket: /run/d.sock}\n"
        "ca: {cert: /etc/c.crt, key: /etc/c.key}\n"
        "upstream: {allow_private: [\"0.0.0.0/0\", \"::/0\", \"10.1.2.3/32\", "
        "\"::1/128\", \"127.0.0.0/8\", \"10.0.0.0/8\"]}\n"
        "connect: {raw_ports: [1, 65535, 22]}\n"
        "delegation: {header: \"Authorization-Chain_1\"}\n"
        "log: {level: debug}\n"
        "hardening: {seccomp: log}\n");
    assert_int_equal(c->nlisteners, 9);
    assert_string_equal(c->listeners[0].path, "/run/a.sock");
    assert_int_equal(c->listeners[0].mode, 0600);
    assert_int_equal(c->listeners[1].mode, 0660);
    assert_int_equal(c->listeners[1].group, 0);
    assert_string_equal(c->listeners[1].principal, "a!~");
    assert_int_equal(c->listeners[1].nuids, 1);
    assert_int_equal(c->listeners[0].nuids, 3);
    assert_int_equal(c->listeners[0].uids[1], 1001);
    assert_int_equal(c->listeners[0].uids[2], 4294967294u);
    assert_string_equal(c->listeners[2].address, "::1");
    assert_int_equal(c->listeners[2].family, 6);
    assert_int_equal(c->listeners[2].port, 0);
    assert_int_equal(c->listeners[2].mode, 0);
    assert_string_equal(c->listeners[3].address, "127.1.2.3");
    assert_int_equal(c->listeners[6].port, 65535);
    assert_int_equal(c->listeners[7].port, 1);
    assert_string_equal(c->listeners[7].port_file, "/tmp/p1");
    assert_int_equal(c->listeners[8].line, 10);
    assert_int_equal(c->nallow_private, 6);
    assert_int_equal(c->allow_private[0].prefix, 0);
    assert_int_equal(c->allow_private[1].family, 6);
    assert_int_equal(c->allow_private[1].prefix, 0);
    assert_int_equal(c->allow_private[2].prefix, 32);
    assert_int_equal(c->allow_private[2].addr[3], 3);
    assert_int_equal(c->allow_private[3].addr[15], 1);
    assert_int_equal(c->allow_private[3].prefix, 128);
    assert_int_equal(c->nraw_ports, 3);
    assert_int_equal(c->raw_ports[1], 65535);
    assert_string_equal(c->delegation_header, "authorization-chain_1");
    assert_int_equal(c->log_debug, 1);
    assert_int_equal(c->seccomp_mode, SWORN_SECCOMP_LOG);
    free(c);
    /* upstream.nameservers: numeric, a port each, in the order given. */
    c = load_ok(MIN "upstream: {nameservers: [\"127.0.0.1:5353\", \"[::1]:53\", "
                    "\"192.0.2.53:65535\", \"[fd00::53]:1\", \"127.0.0.1:53\"]}\n");
    assert_int_equal(c->nnameservers, 5);
    assert_int_equal(c->nameservers[0].family, 4);
    assert_int_equal(c->nameservers[0].port, 5353);
    assert_int_equal(c->nameservers[0].addr[0], 127);
    assert_int_equal(c->nameservers[0].addr[3], 1);
    assert_int_equal(c->nameservers[1].family, 6);
    assert_int_equal(c->nameservers[1].addr[15], 1);
    assert_int_equal(c->nameservers[1].port, 53);
    assert_int_equal(c->nameservers[2].port, 65535);
    assert_int_equal(c->nameservers[3].port, 1);
    assert_int_equal(c->nameservers[3].addr[0], 0xfd);
    free(c);
    c = load_ok(MIN);
    assert_int_equal(c->nnameservers, 0); /* /etc/resolv.conf's */
    free(c);
    c = load_ok(MIN "hardening: {seccomp: off}\nlog: {level: info}\n");
    assert_int_equal(c->seccomp_mode, SWORN_SECCOMP_OFF);
    assert_int_equal(c->log_debug, 0);
    free(c);
}

/* user, group and uids: names and numbers resolve to the same ids. */
static void test_identities(void **state)
{
    struct sworn_pconf *c;
    struct passwd *pw;
    char text[1024];

    (void)state;
    c = load_ok("user: root\n" MIN);
    assert_int_equal(c->has_user, 1);
    assert_string_equal(c->user, "root");
    assert_int_equal(c->uid, 0);
    assert_int_equal(c->gid, 0);
    free(c);
    c = load_ok("user: 0\n" MIN);
    assert_int_equal(c->has_user, 1);
    assert_string_equal(c->user, "root"); /* the name of uid 0 */
    assert_int_equal(c->uid, 0);
    free(c);
    c = load_ok("listen: [{unix: /run/a.sock, principal: p, mode: \"0660\", group: root, uids: "
                "[root]}]\n" D2 C3);
    assert_int_equal(c->listeners[0].group, 0);
    assert_int_equal(c->listeners[0].nuids, 1);
    assert_int_equal(c->listeners[0].uids[0], 0);
    free(c);
    /* Without a group (mode 0600), any uid may be listed: the socket's owner decides. */
    c = load_ok("listen: [{unix: /run/a.sock, principal: p, uids: [root, 1001]}]\n" D2 C3);
    assert_int_equal(c->listeners[0].nuids, 2);
    assert_int_equal(c->listeners[0].uids[1], 1001);
    free(c);
    /* Another user of this machine, by name: its own uid and primary gid. */
    pw = getpwnam("nobody");
    if (pw != NULL) {
        uid_t uid = pw->pw_uid;
        gid_t gid = pw->pw_gid;

        c = load_ok("user: nobody\n" MIN);
        assert_int_equal(c->uid, uid);
        assert_int_equal(c->gid, gid);
        free(c);
        snprintf(text, sizeof(text), "user: %lu\n" MIN, (unsigned long)uid);
        c = load_ok(text);
        assert_string_equal(c->user, "nobody");
        free(c);
        /* A peer in the socket's group (its primary group) may be listed with 0660. */
        snprintf(text, sizeof(text),
                 "listen: [{unix: /run/a.sock, principal: p, mode: \"0660\", group: %lu, uids: "
                 "[nobody]}]\n" D2 C3,
                 (unsigned long)gid);
        c = load_ok(text);
        assert_int_equal(c->listeners[0].uids[0], uid);
        free(c);
    }
}

struct bad {
    const char *text;
    const char *pos; /* "line:col: " */
    const char *sub;
};

static void test_refusals(void **state)
{
    static const struct bad bad[] = {
        /* The document and the top level. */
        {MIN "colour: blue\n", "4:1: ", "unknown key \"colour\""},
        {MIN "Listen: []\n", "4:1: ", "unknown key \"Listen\""},
        {L1 L1 D2 C3, "2:1: ", "duplicate key \"listen\""},
        {D2 C3, "1:1: ", "missing required key \"listen\""},
        {L1 C3, "1:1: ", "missing required key \"decisiond\""},
        {L1 D2, "1:1: ", "missing required key \"ca\""},
        {"- a\n", "1:1: ", "mapping"},
        {MIN "user: [root]\n", "4:7: ", "expected a string, found a sequence"},
        {MIN "x: &a 1\n", "4:4: ", "anchors"},
        /* user: */
        {MIN "user: no-such-user-sworn\n", "4:7: ", "user: no such user"},
        {MIN "user: ''\n", "4:7: ", "user: empty user name"},
        {MIN "user: 4294967294\n", "4:7: ", "user: no user has uid 4294967294"},
        {MIN "user: 4294967295\n", "4:7: ", "outside [0, 4294967294]"},
        {MIN "user: 007\n", "4:7: ", "unsigned decimal"},
        /* listen: the list */
        {"listen: {unix: /run/a.sock}\n" D2 C3, "1:9: ", "listen must be a list"},
        {"listen: []\n" D2 C3, "1:9: ", "listen: at least one listener"},
        {"listen: [{unix: /a, principal: p}, {unix: /b, principal: p}, {unix: /c, principal: p}, "
         "{unix: /d, principal: p}, {unix: /e, principal: p}, {unix: /f, principal: p}, {unix: "
         "/g, principal: p}, {unix: /h, principal: p}, {unix: /i, principal: p}, {unix: /j, "
         "principal: p}, {unix: /k, principal: p}, {unix: /l, principal: p}, {unix: /m, "
         "principal: p}, {unix: /n, principal: p}, {unix: /o, principal: p}, {unix: /p, "
         "principal: p}, {unix: /q, principal: p}]\n" D2 C3,
         "1:9: ", "listen: more than 16 items"},
        {"listen: [/run/a.sock]\n" D2 C3, "1:10: ", "expected a mapping, found a scalar"},
        /* listen: one listener */
        {"listen: [{unix: /run/a.sock, principal: p, colour: blue}]\n" D2 C3,
         "1:44: ", "unknown key \"colour\""},
        {"listen: [{principal: p}]\n" D2 C3, "1:10: ", "needs one of unix, hostlink and tcp"},
        {"listen: [{unix: /run/a.sock, hostlink: /run/b.sock, principal: p}]\n" D2 C3,
         "1:40: ", "exactly one of unix, hostlink and tcp (this one also has unix)"},
        {"listen: [{unix: /run/a.sock, tcp: \"127.0.0.1:1\", principal: p}]\n" D2 C3,
         "1:35: ", "exactly one of unix, hostlink and tcp"},
        {"listen: [{unix: /run/a.sock, unix: /run/b.sock, principal: p}]\n" D2 C3,
         "1:30: ", "duplicate key \"unix\""},
        {"listen: [{unix: /run/a.sock}]\n" D2 C3,
         "1:10: ", "missing required key \"listen.principal\""},
        {"listen: [{unix: run/a.sock, principal: p}]\n" D2 C3,
         "1:17: ", "listen.unix: \"run/a.sock\" is not an absolute path"},
        {"listen: [{unix: '', principal: p}]\n" D2 C3, "1:17: ", "listen.unix: empty path"},
        {"listen: [{unix: ~, principal: p}]\n" D2 C3, "1:17: ", "\"~\" is not a path"},
        {"listen: [{hostlink: null, principal: p}]\n" D2 C3, "1:21: ", "\"null\" is not a path"},
        {"listen: [{unix: \"/run/a\\tb\", principal: p}]\n" D2 C3,
         "1:17: ", "a path must be one line of printable text"},
        {"listen: [{unix: "
         "/run/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock, principal: p}]\n" D2 C3,
         "1:17: ", "listen.unix: a Unix socket path is at most 107 bytes"},
        {"listen: [{unix: /run/a.sock, principal: ''}]\n" D2 C3,
         "1:41: ", "listen.principal: 1 to 128 characters"},
        {"listen: [{unix: /run/a.sock, principal: \"a b\"}]\n" D2 C3,
         "1:41: ", "listen.principal: printable ASCII only, without spaces (character 2 is not)"},
        {"listen: [{unix: /run/a.sock, principal: \"\xc3\xa9\"}]\n" D2 C3,
         "1:41: ", "printable ASCII only"},
        {"listen: [{unix: /run/a.sock, principal: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}]\n" D2
             C3,
         "1:41: ", "listen.principal: 1 to 128 characters"},
        {"listen: [{unix: /run/a.sock, principal: [p]}]\n" D2 C3, "1:41: ", "expected a string"},
        {"listen: [{unix: /run/a.sock, principal: p, sandbox: \"s\\x7f\"}]\n" D2 C3,
         "1:53: ", "listen.sandbox: printable ASCII only"},
        /* On the hostlink the relay's hello names the sandbox: a configured one is refused. */
        {"listen: [{hostlink: /run/h.sock, principal: p, sandbox: s}]\n" D2 C3, "1:57: ",
         "listen.sandbox is refused on a hostlink listener: each connection's sandbox is named "
         "by sworn-run's hostlink hello"},
        {"listen: [{unix: /run/a.sock, principal: p, mode: \"0666\"}]\n" D2 C3,
         "1:50: ", "listen.mode must be \"0600\" or \"0660\" (octal)"},
        {"listen: [{unix: /run/a.sock, principal: p, mode: 384}]\n" D2 C3,
         "1:50: ", "listen.mode must be \"0600\" or \"0660\""},
        {"listen: [{unix: /run/a.sock, principal: p, mode: \"0700\"}]\n" D2 C3,
         "1:50: ", "listen.mode must be"},
        {"listen: [{unix: /run/a.sock, principal: p, mode: \"0660\"}]\n" D2 C3,
         "1:50: ", "listen.mode 0660 needs listen.group"},
        {"listen: [{unix: /run/a.sock, principal: p, group: root}]\n" D2 C3,
         "1:51: ", "listen.group has no effect with mode 0600"},
        {"listen: [{unix: /run/a.sock, principal: p, mode: \"0660\", group: "
         "no-such-group-sworn}]\n" D2 C3,
         "1:65: ", "listen.group: no such group"},
        {"listen: [{unix: /run/a.sock, principal: p, mode: \"0660\", group: 4294967295}]\n" D2 C3,
         "1:65: ", "outside [0, 4294967294]"},
        {"listen: [{unix: /run/a.sock, principal: p, uids: []}]\n" D2 C3,
         "1:50: ", "listen.uids: at least one uid"},
        {"listen: [{unix: /run/a.sock, principal: p, uids: 0}]\n" D2 C3,
         "1:50: ", "listen.uids must be a list"},
        {"listen: [{unix: /run/a.sock, principal: p, uids: [0, root]}]\n" D2 C3,
         "1:54: ", "listen.uids: uid 0 is listed twice"},
        {"listen: [{unix: /run/a.sock, principal: p, uids: [no-such-user-sworn]}]\n" D2 C3,
         "1:51: ", "listen.uids: no such user"},
        {"listen: [{unix: /run/a.sock, principal: p, uids: [-1]}]\n" D2 C3,
         "1:51: ", "listen.uids: no such user"},
        {"listen: [{unix: /run/a.sock, principal: p, uids: [4294967295]}]\n" D2 C3,
         "1:51: ", "outside [0, 4294967294]"},
        {"listen: [{unix: /run/a.sock, principal: p, mode: \"0660\", group: 0, uids: "
         "[4000000]}]\n" D2 C3,
         "1:75: ", "uid 4000000 is not in listen.group (gid 0), so it could not connect"},
        {"listen: [{unix: /run/a.sock, principal: p, port_file: /run/p}]\n" D2 C3,
         "1:55: ", "listen.port_file applies only to tcp listeners"},
        {"listen: [{unix: /run/a.sock, principal: p, tls: true}]\n" D2 C3,
         "1:49: ", "listen.tls applies only to tcp listeners"},
        {"listen: [{tcp: \"127.0.0.1:1\", principal: p, tls: yes}]\n" D2 C3,
         "1:50: ", "expected true or false"},
        {"listen: [{tcp: \"127.0.0.1:1\", principal: p, mode: \"0600\"}]\n" D2 C3,
         "1:51: ", "listen.mode applies only to unix and hostlink listeners"},
        {"listen: [{tcp: \"127.0.0.1:1\", principal: p, group: root}]\n" D2 C3,
         "1:52: ", "listen.group applies only to unix and hostlink listeners"},
        {"listen: [{tcp: \"127.0.0.1:1\", principal: p, uids: [0]}]\n" D2 C3,
         "1:51: ", "listen.uids applies only to unix and hostlink listeners"},
        {"listen: [{tcp: \"127.0.0.1:1\", principal: p, port_file: run/p}]\n" D2 C3,
         "1:56: ", "listen.port_file: \"run/p\" is not an absolute path"},
        /* listen: tcp addresses */
        {"listen: [{tcp: \"10.0.0.1:3128\", principal: p}]\n" D2 C3,
         "1:16: ", "a TCP listener must be on loopback (development only)"},
        {"listen: [{tcp: \"0.0.0.0:3128\", principal: p}]\n" D2 C3,
         "1:16: ", "a TCP listener must be on loopback (development only)"},
        {"listen: [{tcp: \"128.0.0.1:3128\", principal: p}]\n" D2 C3,
         "1:16: ", "must be on loopback"},
        {"listen: [{tcp: \"[::]:3128\", principal: p}]\n" D2 C3, "1:16: ", "must be on loopback"},
        {"listen: [{tcp: \"[::ffff:127.0.0.1]:3128\", principal: p}]\n" D2 C3,
         "1:16: ", "must be on loopback"},
        {"listen: [{tcp: \"localhost:3128\", principal: p}]\n" D2 C3,
         "1:16: ", "listen.tcp: want \"127.0.0.1:PORT\" or \"[::1]:PORT\""},
        {"listen: [{tcp: \"::1:3128\", principal: p}]\n" D2 C3, "1:16: ", "listen.tcp: want"},
        {"listen: [{tcp: \"127.0.0.1\", principal: p}]\n" D2 C3, "1:16: ", "listen.tcp: want"},
        {"listen: [{tcp: \"[::1]3128\", principal: p}]\n" D2 C3, "1:16: ", "listen.tcp: want"},
        {"listen: [{tcp: \"127.0.0.01:3128\", principal: p}]\n" D2 C3,
         "1:16: ", "listen.tcp: want"},
        {"listen: [{tcp: \"127.0.0.1:65536\", principal: p}]\n" D2 C3,
         "1:16: ", "listen.tcp: the port must be a decimal number 0..65535"},
        {"listen: [{tcp: \"127.0.0.1:03128\", principal: p}]\n" D2 C3,
         "1:16: ", "the port must be a decimal number"},
        {"listen: [{tcp: \"127.0.0.1:\", principal: p}]\n" D2 C3,
         "1:16: ", "the port must be a decimal number"},
        {"listen: [{tcp: \"127.0.0.1:-1\", principal: p}]\n" D2 C3,
         "1:16: ", "the port must be a decimal number"},
        {"listen: [{tcp: \"127.0.0.1:999999\", principal: p}]\n" D2 C3,
         "1:16: ", "the port must be a decimal number"},
        /* listen: listeners against each other and the other sockets */
        {"listen:\n  - {unix: /run/a.sock, principal: p}\n  - {hostlink: /run/./a.sock, "
         "principal: q}\n" D2 C3,
         "3:16: ", "listen: /run/a.sock is already the socket of the listener at line 2"},
        {"listen:\n  - {tcp: \"127.0.0.1:8080\", principal: p}\n  - {tcp: \"127.0.0.1:8080\", "
         "principal: q}\n" D2 C3,
         "3:11: ", "listen: 127.0.0.1 port 8080 is already the listener at line 2"},
        {"listen:\n  - {tcp: \"[::1]:0\", principal: p, port_file: /run/p}\n  - {tcp: "
         "\"127.0.0.1:0\", principal: q, port_file: /run//p}\n" D2 C3,
         "3:51: ", "listen: /run/p is already the port_file of the listener at line 2"},
        {"listen: [{unix: /run/d.sock, principal: p}]\n" D2 C3,
         "1:17: ", "listen: /run/d.sock is decisiond.socket"},
        {MIN "metrics: {socket: /run/a.sock}\n", "1:17: ", "listen: /run/a.sock is metrics.socket"},
        {MIN "metrics: {socket: /run/d.sock}\n",
         "4:19: ", "metrics.socket: /run/d.sock is decisiond.socket"},
        /* decisiond: */
        {L1 "decisiond: {}\n" C3, "2:12: ", "missing required key \"decisiond.socket\""},
        {L1 "decisiond: /run/d.sock\n" C3, "2:12: ", "expected a mapping, found a scalar"},
        {L1 "decisiond: {socket: /run/d.sock, timeot: 5s}\n" C3,
         "2:34: ", "unknown key \"timeot\""},
        {L1 "decisiond: {socket: d.sock}\n" C3,
         "2:21: ", "decisiond.socket: \"d.sock\" is not an absolute path"},
        {L1 "decisiond: {socket: /run/d.sock, timeout: 5}\n" C3, "2:43: ", "expected a duration"},
        {L1 "decisiond: {socket: /run/d.sock, timeout: 1.5s}\n" C3,
         "2:43: ", "expected a duration"},
        /* ca: */
        {L1 D2 "ca: {cert: /etc/c.crt}\n", "3:5: ", "missing required key \"ca.key\""},
        {L1 D2 "ca: {key: /etc/c.key}\n", "3:5: ", "missing required key \"ca.cert\""},
        {L1 D2 "ca: {cert: /etc/c.pem, key: /etc/./c.pem}\n",
         "3:29: ", "ca.key must be a file of its own"},
        {L1 D2 "ca: {cert: /etc/c.crt, key: /etc/c.key, leaf_lifetime: 3601500ms}\n",
         "3:56: ", "ca.leaf_lifetime must be a whole number of seconds"},
        {L1 D2 "ca: {cert: /etc/c.crt, key: /etc/c.key, cache: many}\n",
         "3:48: ", "unsigned decimal"},
        {L1 D2 "ca: {cert: /etc/c.crt, key: etc/c.key}\n",
         "3:29: ", "ca.key: \"etc/c.key\" is not an absolute path"},
        /* upstream: */
        {MIN "upstream: {allow_private: \"10.0.0.0/8\"}\n",
         "4:27: ", "upstream.allow_private must be a list"},
        {MIN "upstream: {nameservers: \"127.0.0.1:53\"}\n",
         "4:25: ", "upstream.nameservers must be a list"},
        {MIN "upstream: {nameservers: []}\n", "4:25: ",
         "upstream.nameservers: at least one resolver (leave the key out to use "
         "/etc/resolv.conf's)"},
        {MIN "upstream: {nameservers: [\"127.0.0.1\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\" or \"[IPV6]:PORT\""},
        {MIN "upstream: {nameservers: [\"localhost:53\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\""},
        {MIN "upstream: {nameservers: [\"::1:53\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\""},
        {MIN "upstream: {nameservers: [\"[::1]53\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\""},
        {MIN "upstream: {nameservers: [\"[127.0.0.1]:53\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\""},
        {MIN "upstream: {nameservers: [\"127.0.0.1:0\"]}\n",
         "4:26: ", "upstream.nameservers: the port must be a decimal number 1..65535"},
        {MIN "upstream: {nameservers: [\"127.0.0.1:053\"]}\n",
         "4:26: ", "the port must be a decimal number 1..65535"},
        {MIN "upstream: {nameservers: [\"127.0.0.1:65536\"]}\n",
         "4:26: ", "the port must be a decimal number 1..65535"},
        {MIN "upstream: {nameservers: [\"127.0.0.1:\"]}\n",
         "4:26: ", "the port must be a decimal number 1..65535"},
        {MIN "upstream: {nameservers: [\"127.0.0.1:53\", \"127.0.0.1:53\"]}\n",
         "4:42: ", "upstream.nameservers: listed twice"},
        /* Red team (rt19b): hostile spellings, each refused with its position. */
        {MIN "upstream: {nameservers: [\"[fe80::1%lo]:53\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\""},
        {MIN "upstream: {nameservers: [\"127.0.0.01:53\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\""},
        {MIN "upstream: {nameservers: [\"0x7f.0.0.1:53\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\""},
        {MIN "upstream: {nameservers: [\"[]:53\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\""},
        {MIN "upstream: {nameservers: [\"[::1]:53]\"]}\n",
         "4:26: ", "the port must be a decimal number 1..65535"},
        {MIN "upstream: {nameservers: [\"127.0.0.1:+53\"]}\n",
         "4:26: ", "the port must be a decimal number 1..65535"},
        {MIN "upstream: {nameservers: [\"127.0.0.1: 53\"]}\n",
         "4:26: ", "the port must be a decimal number 1..65535"},
        {MIN "upstream: {nameservers: [\"127.0.0.1:99999999999999999999\"]}\n",
         "4:26: ", "the port must be a decimal number 1..65535"},
        {MIN "upstream: {nameservers: [\"[::1]:\"]}\n",
         "4:26: ", "the port must be a decimal number 1..65535"},
        {MIN "upstream: {nameservers: [\"[0::1]:53\", \"[::1]:53\"]}\n",
         "4:39: ", "upstream.nameservers: listed twice"},
        {MIN "upstream: {nameservers: [\"[1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa:bbbb:"
             "cccc:dddd]:53\"]}\n",
         "4:26: ", "upstream.nameservers: want \"IPV4:PORT\""},
        {MIN "upstream: {nameservers: [\"1.0.0.1:1\", \"1.0.0.2:1\", \"1.0.0.3:1\", "
             "\"1.0.0.4:1\", \"1.0.0.5:1\", \"1.0.0.6:1\", \"1.0.0.7:1\", \"1.0.0.8:1\", "
             "\"1.0.0.9:1\"]}\n",
         "4:25: ", "upstream.nameservers: more than 8 items"},
        {MIN "upstream: {allow_private: [\"10.0.0.1/8\"]}\n", "4:28: ",
         "upstream.allow_private: 10.0.0.1/8 has host bits set (the network is 10.0.0.0/8)"},
        {MIN "upstream: {allow_private: [\"fd00::1/8\"]}\n",
         "4:28: ", "fd00::1/8 has host bits set (the network is fd00::/8)"},
        {MIN "upstream: {allow_private: [\"10.0.0.0/33\"]}\n",
         "4:28: ", "the prefix length must be a decimal number 0..32 for IPv4"},
        {MIN "upstream: {allow_private: [\"::/129\"]}\n",
         "4:28: ", "the prefix length must be a decimal number 0..128 for IPv6"},
        {MIN "upstream: {allow_private: [\"10.0.0.0/08\"]}\n",
         "4:28: ", "the prefix length must be a decimal number"},
        {MIN "upstream: {allow_private: [\"10.0.0.0/\"]}\n",
         "4:28: ", "the prefix length must be a decimal number"},
        {MIN "upstream: {allow_private: [\"10.0.0.0\"]}\n",
         "4:28: ", "upstream.allow_private: want ADDRESS/PREFIX"},
        {MIN "upstream: {allow_private: [\"intranet/8\"]}\n",
         "4:28: ", "\"intranet\" is not a numeric IPv4 or IPv6 address"},
        {MIN "upstream: {allow_private: [\"/8\"]}\n", "4:28: ", "is not a numeric"},
        {MIN "upstream: {allow_private: [\"10.0.0.0/8\", \"10.0.0.0/8\"]}\n",
         "4:42: ", "upstream.allow_private: listed twice"},
        {MIN "upstream: {ca_file: ''}\n", "4:21: ", "upstream.ca_file: empty path"},
        {MIN "upstream: {proxy: x}\n", "4:12: ", "unknown key \"proxy\""},
        /* connect: */
        {MIN "connect: {raw_ports: [0]}\n", "4:23: ", "connect.raw_ports: 0 is not a port"},
        {MIN "connect: {raw_ports: [65536]}\n", "4:23: ", "outside [0, 65535]"},
        {MIN "connect: {raw_ports: [22, 22]}\n",
         "4:27: ", "connect.raw_ports: port 22 is listed twice"},
        {MIN "connect: {raw_ports: 22}\n", "4:22: ", "connect.raw_ports must be a list"},
        {MIN "connect: {raw_ports: [ssh]}\n", "4:23: ", "unsigned decimal"},
        /* limits:, timeouts: */
        {MIN "limits: {head: 16k}\n", "4:16: ", "unsigned decimal"},
        {MIN "limits: {header: 100}\n", "4:10: ", "unknown key \"header\""},
        {MIN "limits: {body: 4194304, bodies: 2097152}\n",
         "4:33: ", "limits.bodies (2097152) must be at least limits.body (4194304)"},
        {MIN "limits: {bodies: 1048575}\n", "4:18: ", "1048575"},
        {MIN "timeouts: {head: 30}\n", "4:18: ", "expected a duration"},
        {MIN "timeouts: {read: 30s}\n", "4:12: ", "unknown key \"read\""},
        /* delegation: */
        {MIN "delegation: {header: \"X Token\"}\n", "4:22: ",
         "delegation.header: not a header field name (letters, digits and !#$%&'*+-.^_`|~ only; "
         "character 2 is not)"},
        {MIN "delegation: {header: \"X-Token:\"}\n", "4:22: ", "not a header field name"},
        {MIN "delegation: {header: ''}\n", "4:22: ", "delegation.header: 1 to 256 characters"},
        {MIN "delegation: {header: Proxy-Authorization}\n", "4:22: ",
         "delegation.header: \"proxy-authorization\" is removed by the proxy or frames the "
         "request"},
        {MIN "delegation: {header: Connection}\n", "4:22: ", "\"connection\" is removed"},
        {MIN "delegation: {header: Transfer-Encoding}\n",
         "4:22: ", "\"transfer-encoding\" is removed"},
        {MIN "delegation: {header: HOST}\n", "4:22: ", "\"host\" is removed"},
        {MIN "delegation: {verify_key: /etc/k.pem}\n",
         "4:26: ", "delegation.verify_key needs delegation.header"},
        /* metrics:, log:, hardening: */
        {MIN "metrics: {socket: m.sock}\n",
         "4:19: ", "metrics.socket: \"m.sock\" is not an absolute"},
        {MIN "metrics: {port: 9100}\n", "4:11: ", "unknown key \"port\""},
        {MIN "log: {level: warn}\n", "4:14: ", "log.level must be info or debug"},
        {MIN "log: {level: DEBUG}\n", "4:14: ", "log.level must be info or debug"},
        {MIN "log: {file: relative.log}\n", "4:13: ", "log.file: \"relative.log\" is not an"},
        {MIN "hardening: {seccomp: strict}\n",
         "4:22: ", "hardening.seccomp must be enforce, log or off"},
        {MIN "hardening: {seccomp: true}\n", "4:22: ", "hardening.seccomp must be"},
        {MIN "hardening: {development: true}\n", "4:13: ", "unknown key \"development\""},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        load_fails(bad[i].text, bad[i].pos, bad[i].sub);
}

/* A path longer than the limit, and one that is at the limit. */
static void test_path_lengths(void **state)
{
    char path[SWORN_PCONF_PATH_MAX + 2], text[SWORN_PCONF_PATH_MAX + 512];
    struct sworn_pconf *c;

    (void)state;
    /* "/" and 4094 more bytes: 4095, the most a path may have. */
    path[0] = '/';
    memset(path + 1, 'a', SWORN_PCONF_PATH_MAX - 2);
    path[SWORN_PCONF_PATH_MAX - 1] = '\0';
    snprintf(text, sizeof(text), MIN "log: {file: %s}\n", path);
    c = load_ok(text);
    assert_int_equal(strlen(c->log_path), SWORN_PCONF_PATH_MAX - 1);
    free(c);
    /* With a "/." more, which cleaning removes: still accepted. */
    snprintf(text, sizeof(text), MIN "log: {file: %s/.}\n", path);
    c = load_ok(text);
    assert_int_equal(strlen(c->log_path), SWORN_PCONF_PATH_MAX - 1);
    free(c);
    snprintf(text, sizeof(text), MIN "log: {file: %sb}\n", path);
    load_fails(text, "4:13: ", "log.file: a path is at most 4095 bytes");

    /* A socket path: 107 bytes fit sun_path with its NUL, 108 do not. */
    {
        struct sockaddr_un sa;
        char sock[sizeof(sa.sun_path) + 1];

        sock[0] = '/';
        memset(sock + 1, 's', sizeof(sa.sun_path) - 2);
        sock[sizeof(sa.sun_path) - 1] = '\0';
        snprintf(text, sizeof(text), "listen: [{unix: %s, principal: p}]\n" D2 C3, sock);
        c = load_ok(text);
        assert_int_equal(strlen(c->listeners[0].path), sizeof(sa.sun_path) - 1);
        free(c);
        snprintf(text, sizeof(text), "listen: [{unix: %sx, principal: p}]\n" D2 C3, sock);
        load_fails(text, "1:17: ", "a Unix socket path is at most 107 bytes");
        snprintf(text, sizeof(text), L1 "decisiond: {socket: %sx}\n" C3, sock);
        load_fails(text, "2:21: ", "decisiond.socket: a Unix socket path is at most 107 bytes");
    }
    /* 16 listeners is the most; 128 characters of principal too. */
    {
        char p[SWORN_PCONF_PRINCIPAL_MAX + 1];
        size_t o;

        o = (size_t)snprintf(text, sizeof(text), "listen:\n");
        for (int i = 0; i < 16; i++)
            o += (size_t)snprintf(text + o, sizeof(text) - o, "  - {unix: /run/%d, principal: p}\n",
                                  i);
        snprintf(text + o, sizeof(text) - o, D2 C3);
        c = load_ok(text);
        assert_int_equal(c->nlisteners, 16);
        assert_string_equal(c->listeners[15].path, "/run/15");
        free(c);
        memset(p, 'x', SWORN_PCONF_PRINCIPAL_MAX);
        p[SWORN_PCONF_PRINCIPAL_MAX] = '\0';
        snprintf(text, sizeof(text), "listen: [{unix: /a, principal: %s, sandbox: %s}]\n" D2 C3, p,
                 p);
        c = load_ok(text);
        assert_string_equal(c->listeners[0].principal, p);
        assert_string_equal(c->listeners[0].sandbox, p);
        free(c);
    }
    /* 64 uids, 64 raw ports, 64 ranges are the most; 65 are refused. */
    {
        size_t o;

        for (int extra = 0; extra <= 1; extra++) {
            o = (size_t)snprintf(text, sizeof(text), "listen: [{unix: /a, principal: p, uids: [0");
            for (int i = 1; i < 64 + extra; i++)
                o += (size_t)snprintf(text + o, sizeof(text) - o, ", %d", 1000 + i);
            o += (size_t)snprintf(text + o, sizeof(text) - o,
                                  "]}]\n" D2 C3 "connect: {raw_ports: [1");
            for (int i = 1; i < 64 + extra; i++)
                o += (size_t)snprintf(text + o, sizeof(text) - o, ", %d", 1 + i);
            o += (size_t)snprintf(text + o, sizeof(text) - o, "]}\nupstream: {allow_private: [");
            for (int i = 0; i < 64 + extra; i++)
                o += (size_t)snprintf(text + o, sizeof(text) - o, "%s\"10.%d.0.0/16\"",
                                      i ? ", " : "", i);
            snprintf(text + o, sizeof(text) - o, "]}\n");
            if (extra == 0) {
                c = load_ok(text);
                assert_int_equal(c->listeners[0].nuids, 64);
                assert_int_equal(c->nraw_ports, 64);
                assert_int_equal(c->nallow_private, 64);
                assert_int_equal(c->allow_private[63].addr[1], 63);
                free(c);
            } else
                load_fails(text, "1:41: ", "listen.uids: more than 64 items");
        }
    }
}

/* Each bounded key at both edges, and one step outside each. */
struct bound {
    const char *section, *key;
    const char *lo, *hi;       /* the edges, as written */
    const char *below, *above; /* one step outside (NULL: no value below the edge) */
    uint64_t lo_v, hi_v;       /* what the field then holds */
    size_t off, size;          /* the field */
    const char *why;           /* a part of the refusal's message */
};

#define FIELD(f) offsetof(struct sworn_pconf, f), sizeof(((struct sworn_pconf *)0)->f)

static uint64_t field(const struct sworn_pconf *c, size_t off, size_t size)
{
    const unsigned char *p = (const unsigned char *)c + off;

    if (size == sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    if (size == sizeof(unsigned)) {
        unsigned v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    fail_msg("field size %zu", size);
    return 0;
}

static void test_bounds(void **state)
{
    static const struct bound b[] = {
        {"decisiond", "timeout", "100ms", "60s", "99ms", "60001ms", 100, 60000,
         FIELD(decision_timeout_ms), "decisiond.timeout must be between 100ms and 60s"},
        {"decisiond", "escalation_max", "1s", "24h", "999ms", "86400001ms", 1000, 86400000,
         FIELD(escalation_max_ms), "decisiond.escalation_max must be between 1s and 24h"},
        {"ca", "leaf_lifetime", "5m", "7d", "299s", "604801s", 300, 604800, FIELD(leaf_ttl_s),
         "ca.leaf_lifetime must be between 5m and 7d"},
        {"ca", "cache", "1", "65536", "0", "65537", 1, 65536, FIELD(leaf_cache),
         "outside [1, 65536]"},
        {"upstream", "connect_timeout", "100ms", "5m", "99ms", "300001ms", 100, 300000,
         FIELD(connect_timeout_ms), "upstream.connect_timeout must be between 100ms and 5m"},
        {"upstream", "response_timeout", "100ms", "1h", "99ms", "3600001ms", 100, 3600000,
         FIELD(upstream_timeout_ms), "upstream.response_timeout must be between 100ms and 1h"},
        {"connect", "tls_wait", "100ms", "60s", "99ms", "60001ms", 100, 60000, FIELD(tls_peek_ms),
         "connect.tls_wait must be between 100ms and 60s"},
        {"limits", "head", "1024", "1048576", "1023", "1048577", 1024, 1048576, FIELD(head_max),
         "outside [1024, 1048576]"},
        {"limits", "headers", "8", "128", "7", "129", 8, 128, FIELD(headers_max),
         "outside [8, 128]"},
        {"limits", "body", "0", "1073741824", NULL, "1073741825", 0, 1073741824, FIELD(body_max),
         "outside [0, 1073741824]"},
        {"limits", "connections", "1", "65536", "0", "65537", 1, 65536, FIELD(connections_max),
         "outside [1, 65536]"},
        {"timeouts", "head", "100ms", "1h", "99ms", "3601s", 100, 3600000, FIELD(head_timeout_ms),
         "timeouts.head must be between 100ms and 1h"},
        {"timeouts", "body", "100ms", "1h", "99ms", "61m", 100, 3600000, FIELD(body_timeout_ms),
         "timeouts.body must be between 100ms and 1h"},
        {"timeouts", "idle", "100ms", "1h", "0ms", "2h", 100, 3600000, FIELD(idle_timeout_ms),
         "timeouts.idle must be between 100ms and 1h"},
    };
    char text[1024], pos[32];

    (void)state;
    for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
        const char *vals[] = {b[i].lo, b[i].hi, b[i].below, b[i].above};
        int is_ca = strcmp(b[i].section, "ca") == 0,
            is_dec = strcmp(b[i].section, "decisiond") == 0;

        for (int k = 0; k < 4; k++) {
            char needle[64];
            const char *at;

            if (vals[k] == NULL)
                continue;
            /* The section on line 4 (decisiond and ca leave their own line empty). */
            if (is_dec)
                snprintf(text, sizeof(text),
                         L1 "\n" C3 "decisiond: {socket: /run/d.sock, %s: %s}\n", b[i].key,
                         vals[k]);
            else if (is_ca)
                snprintf(text, sizeof(text),
                         L1 D2 "\nca: {cert: /etc/c.crt, key: /etc/c.key, %s: %s}\n", b[i].key,
                         vals[k]);
            else
                snprintf(text, sizeof(text), MIN "%s: {%s: %s}\n", b[i].section, b[i].key, vals[k]);
            if (k < 2) {
                struct sworn_pconf *c = load_ok(text);
                uint64_t want = k == 0 ? b[i].lo_v : b[i].hi_v;

                if (field(c, b[i].off, b[i].size) != want)
                    fail_msg("%s.%s: %s gave %llu, want %llu", b[i].section, b[i].key, vals[k],
                             (unsigned long long)field(c, b[i].off, b[i].size),
                             (unsigned long long)want);
                free(c);
            } else {
                /* The value's column on line 4. */
                const char *line4 = strchr(strchr(strchr(text, '\n') + 1, '\n') + 1, '\n') + 1;

                snprintf(needle, sizeof(needle), "%s: %s}", b[i].key, vals[k]);
                at = strstr(line4, needle);
                assert_non_null(at);
                snprintf(pos, sizeof(pos), "4:%zu: ", (size_t)(at - line4) + strlen(b[i].key) + 3);
                load_fails(text, pos, b[i].why);
            }
        }
    }
}

/* Loading from a file: the path is kept, the bytes digested, and the checked open applies. */
static void test_load_file(void **state)
{
    char *dir = sworn_test_tmpdir("pconf"), *path = sworn_test_path(dir, "proxy.yaml");
    struct sworn_pconf *c = conf(), *before = conf();
    uint8_t d[32];

    (void)state;
    sworn_test_write_file(path, MIN, strlen(MIN), 0644);
    chmod(path, 0644);
    assert_int_equal(sworn_pconf_load(path, c), 0);
    assert_string_equal(c->path, path);
    assert_int_equal(EVP_Digest(MIN, strlen(MIN), d, NULL, EVP_sha256(), NULL), 1);
    assert_memory_equal(c->digest, d, 32);
    free(c);
    /* Writable by others: refused before it is parsed, *out untouched. */
    c = conf();
    chmod(path, 0666);
    assert_int_equal(sworn_pconf_load(path, c), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_memory_equal(c, before, sizeof(*c));
    chmod(path, 0644);
    /* An error in the file names the path. */
    sworn_test_write_file(path, MIN "limits: {head: 1}\n", strlen(MIN) + 18, 0644);
    assert_int_equal(sworn_pconf_load(path, c), -1);
    {
        char want[512];

        snprintf(want, sizeof(want), "%s:4:16: 1 is outside [1024, 1048576]", path);
        assert_string_equal(sworn_err_msg(), want);
    }
    unlink(path);
    assert_int_equal(sworn_pconf_load(path, c), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    assert_int_equal(sworn_pconf_load(NULL, c), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(sworn_pconf_load(path, NULL), -1);
    assert_int_equal(sworn_pconf_load_mem(NAME, NULL, 1, c), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(sworn_pconf_load_mem(NAME, (const uint8_t *)"", 0, c), -1);
    assert_memory_equal(c, before, sizeof(*c));
    free(c);
    free(before);
    sworn_test_rmtree(dir);
    free(dir);
    free(path);
}

/* sworn_pconf_check: each problem on the file system in turn, then none. */
static void test_check(void **state)
{
    char *dir = sworn_test_tmpdir("pconf-check"), text[4096], want[1024];
    struct sworn_pconf *c;
    char *p;

    (void)state;
    snprintf(text, sizeof(text),
             "listen:\n"
             "  - {unix: %s/run/a.sock, principal: p}\n"
             "  - {tcp: \"127.0.0.1:0\", principal: p, port_file: %s/run/port}\n"
             "decisiond: {socket: %s/run/d.sock}\n"
             "ca: {cert: %s/ca.crt, key: %s/ca.key}\n"
             "upstream: {ca_file: %s/roots.pem}\n"
             "delegation: {header: x-token, verify_key: %s/deleg.pub}\n"
             "metrics: {socket: %s/run/m.sock}\n"
             "log: {file: %s/log/proxy.log}\n",
             dir, dir, dir, dir, dir, dir, dir, dir, dir);
    c = load_ok(text);

#define CHECK_FAILS(sub)                                                                           \
    do {                                                                                           \
        assert_int_equal(sworn_pconf_check(c), -1);                                                \
        if (strstr(sworn_err_msg(), (sub)) == NULL)                                                \
            fail_msg("got \"%s\"; want ...%s...", sworn_err_msg(), (sub));                         \
    } while (0)

    snprintf(want, sizeof(want), "%s: ca.cert: %s/ca.crt: No such file", NAME, dir);
    CHECK_FAILS(want);
    p = sworn_test_path(dir, "ca.crt");
    assert_int_equal(mkdir(p, 0700), 0);
    CHECK_FAILS("ca.cert: ");
    CHECK_FAILS("ca.crt is not a regular file");
    assert_int_equal(rmdir(p), 0);
    sworn_test_write_file(p, "cert", 4, 0644);
    free(p);
    CHECK_FAILS("ca.key: ");
    p = sworn_test_path(dir, "ca.key");
    sworn_test_write_file(p, "key", 3, 0644);
    chmod(p, 0644);
    CHECK_FAILS("ca.key: ");
    CHECK_FAILS("0600");
    chmod(p, 0600);
    free(p);
    snprintf(want, sizeof(want), "upstream.ca_file: %s/roots.pem", dir);
    CHECK_FAILS(want);
    p = sworn_test_path(dir, "roots.pem");
    sworn_test_write_file(p, "roots", 5, 0644);
    free(p);
    CHECK_FAILS("delegation.verify_key: ");
    p = sworn_test_path(dir, "deleg.pub");
    sworn_test_write_file(p, "pub", 3, 0644);
    free(p);
    /* The sockets' folder is missing. */
    snprintf(want, sizeof(want), "listen.unix: %s/run: No such file", dir);
    CHECK_FAILS(want);
    p = sworn_test_path(dir, "run");
    assert_int_equal(mkdir(p, 0700), 0);
    free(p);
    /* A regular file where a socket goes is not the proxy's to replace. */
    p = sworn_test_path(dir, "run/a.sock");
    sworn_test_write_file(p, "x", 1, 0644);
    CHECK_FAILS("a.sock exists and is not a socket");
    assert_int_equal(unlink(p), 0);
    free(p);
    p = sworn_test_path(dir, "run/port");
    assert_int_equal(mkdir(p, 0700), 0);
    CHECK_FAILS("listen.port_file: ");
    CHECK_FAILS("port exists and is not a regular file");
    assert_int_equal(rmdir(p), 0);
    free(p);
    snprintf(want, sizeof(want), "log.file: %s/log: No such file", dir);
    CHECK_FAILS(want);
    p = sworn_test_path(dir, "log");
    assert_int_equal(mkdir(p, 0700), 0);
    /* The log's folder: writable by its owner only (else another user swaps the file). */
    assert_int_equal(chmod(p, 0770), 0);
    CHECK_FAILS("log.file: log.file folder ");
    CHECK_FAILS("writable");
    assert_int_equal(chmod(p, 01777), 0);
    CHECK_FAILS("log.file: log.file folder ");
    assert_int_equal(chmod(p, 0755), 0);
    free(p);
    assert_int_equal(sworn_pconf_check(c), 0);
    /* An existing log file others may write or read (every URL line) is refused, ... */
    p = sworn_test_path(dir, "log/proxy.log");
    sworn_test_write_file(p, "", 0, 0600);
    assert_int_equal(chmod(p, 0666), 0);
    snprintf(want, sizeof(want), "log.file: log.file %s has mode 0666", p);
    CHECK_FAILS(want);
    CHECK_FAILS("chmod 0640");
    assert_int_equal(chmod(p, 0620), 0);
    CHECK_FAILS("has mode 0620");
    assert_int_equal(chmod(p, 0644), 0);
    CHECK_FAILS("has mode 0644");
    /* ... as is one with a second name (a hard link reaches it from elsewhere), ... */
    assert_int_equal(chmod(p, 0640), 0);
    {
        char *q = sworn_test_path(dir, "log/other-name");

        assert_int_equal(link(p, q), 0);
        CHECK_FAILS("has 2 links");
        assert_int_equal(unlink(q), 0);
        free(q);
    }
    /* ... and, when the test can make one, a file of another user's. */
    if (geteuid() == 0) {
        assert_int_equal(chown(p, 65534, 65534), 0);
        CHECK_FAILS("is owned by uid 65534, not by root or uid 0");
        assert_int_equal(chown(p, 0, 0), 0);
    }
    assert_int_equal(sworn_pconf_check(c), 0);
    assert_int_equal(chmod(p, 0600), 0);
    assert_int_equal(sworn_pconf_check(c), 0);
    /* sworn_pconf_open_log applies the same rules on the descriptor it returns. */
    {
        int fd = -1;
        struct stat st;

        assert_int_equal(chmod(p, 0666), 0);
        assert_int_equal(sworn_pconf_open_log(c, &fd), -1);
        assert_int_equal(fd, -1);
        assert_non_null(strstr(sworn_err_msg(), "has mode 0666"));
        assert_int_equal(unlink(p), 0);
        assert_int_equal(symlink("/etc/passwd", p), 0);
        assert_int_equal(sworn_pconf_open_log(c, &fd), -1);
        assert_int_equal(unlink(p), 0);
        /* missing: made 0640 (or stricter, by the umask) */
        assert_int_equal(sworn_pconf_open_log(c, &fd), 0);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_true(S_ISREG(st.st_mode) && (st.st_mode & 0137) == 0);
        close(fd);
        assert_int_equal(sworn_pconf_check(c), 0);
    }
    free(p);
    /* The port file's folder, the same rule. */
    p = sworn_test_path(dir, "run");
    assert_int_equal(chmod(p, 0777), 0);
    CHECK_FAILS("listen.port_file: port file folder ");
    assert_int_equal(chmod(p, 0700), 0);
    free(p);
    assert_int_equal(sworn_pconf_check(c), 0);
    /* An existing socket at a listener's path is fine: the proxy replaces it. */
    {
        struct sockaddr_un sa;
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);

        assert_true(fd >= 0);
        memset(&sa, 0, sizeof(sa));
        sa.sun_family = AF_UNIX;
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/run/a.sock", dir);
        assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(sworn_pconf_check(c), 0);
        close(fd);
    }
    assert_int_equal(sworn_pconf_check(NULL), -1);
    free(c);
    sworn_test_rmtree(dir);
    free(dir);
#undef CHECK_FAILS
}

/* Collects the warnings of sworn_pconf_warnings, joined by newlines. */
struct warned {
    char text[4096];
    size_t n;
};

static void collect(void *arg, const char *key, const char *message)
{
    struct warned *w = arg;
    size_t at = strlen(w->text);

    snprintf(w->text + at, sizeof(w->text) - at, "%s: %s\n", key, message);
    w->n++;
}

/* One warning row: text loaded, checked as uid euid, gives n warnings, each sub among them. */
static void warns(const char *text, uid_t euid, size_t n, const char *sub1, const char *sub2)
{
    struct sworn_pconf *c = load_ok(text);
    struct warned w = {{0}, 0};
    size_t got = sworn_pconf_warnings(c, euid, collect, &w);

    if (got != n || w.n != n || (sub1 != NULL && strstr(w.text, sub1) == NULL) ||
        (sub2 != NULL && strstr(w.text, sub2) == NULL))
        fail_msg("got %zu warnings:\n%s\nwant %zu with \"%s\" and \"%s\"\n--- input:\n%s", got,
                 w.text, n, sub1 ? sub1 : "", sub2 ? sub2 : "", text);
    assert_int_equal(sworn_pconf_warnings(c, euid, NULL, NULL), n);
    free(c);
}

static void test_warnings(void **state)
{
    (void)state;
    /* the minimal file as a user: nothing to say */
    warns(MIN, 1000, 0, NULL, NULL);
    /* as root with no user: */
    warns(MIN, 0, 1, "user: no user: the proxy is running as root", NULL);
    warns("user: root\n" MIN, 0, 1, "user: user: root is uid 0: the proxy is running as root",
          NULL);
    warns("user: 0\n" MIN, 1000, 1, "the proxy is running as root", NULL);
    if (getpwnam("nobody") != NULL) /* a user of this machine that is not root */
        warns("user: nobody\n" MIN, 0, 0, NULL, NULL);
    /* seccomp */
    warns(MIN "hardening: {seccomp: log}\n", 1000, 1, "hardening.seccomp: seccomp is log", NULL);
    warns(MIN "hardening: {seccomp: off}\n", 1000, 1, "hardening.seccomp: seccomp is off", NULL);
    warns(MIN "hardening: {seccomp: enforce}\n", 1000, 0, NULL, NULL);
    /* allow_private: shorter than /8 (IPv4), /16 (IPv6), /104 through the mapped form */
    warns(MIN "upstream: {allow_private: [\"0.0.0.0/0\"]}\n", 1000, 1,
          "upstream.allow_private: allow_private 0.0.0.0/0 is broad (shorter than /8)", NULL);
    warns(MIN "upstream: {allow_private: [\"10.0.0.0/7\", \"10.0.0.0/8\", \"127.0.0.0/8\"]}\n",
          1000, 1, "allow_private 10.0.0.0/7 is broad", NULL);
    warns(MIN "upstream: {allow_private: [\"::/0\", \"fd00::/15\", \"fd00::/16\", \"::1/128\"]}\n",
          1000, 2, "allow_private ::/0 is broad (shorter than /16)", "fd00::/15");
    warns(MIN "upstream: {allow_private: [\"::ffff:0.0.0.0/96\", \"::ffff:10.0.0.0/104\"]}\n", 1000,
          1, "allow_private ::ffff:0.0.0.0/96 is broad (shorter than /104)", NULL);
    /* every TCP listener, with its principal */
    warns("listen:\n"
          "  - {tcp: \"127.0.0.1:8080\", principal: agent-7}\n"
          "  - {tcp: \"[::1]:0\", principal: agent-8}\n"
          "  - {unix: /run/a.sock, principal: p}\n" D2 C3,
          1000, 2,
          "listen.tcp: tcp listener 127.0.0.1:8080 (line 2): any local user can connect as "
          "principal agent-7",
          "tcp listener [::1]:0 (line 3): any local user can connect as principal agent-8");
    /* a hostlink listener without uids: whoever opens the socket names the sandbox */
    warns("listen:\n"
          "  - {hostlink: /run/h1.sock, principal: agent-9}\n"
          "  - {hostlink: /run/h2.sock, principal: agent-9, uids: [0]}\n"
          "  - {unix: /run/a.sock, principal: p}\n" D2 C3,
          1000, 1,
          "listen.hostlink: hostlink listener /run/h1.sock (line 2) has no uids: any peer that "
          "can open the socket may send a hostlink hello and name any sandbox of principal "
          "agent-9 (list sworn-run's uid in uids)",
          NULL);
    /* all at once */
    warns("listen: [{tcp: \"127.0.0.1:0\", principal: a}]\n" D2 C3
          "upstream: {allow_private: [\"0.0.0.0/0\", \"::/0\"]}\n"
          "hardening: {seccomp: off}\n",
          0, 5, "running as root", "seccomp is off");
    assert_int_equal(sworn_pconf_warnings(NULL, 0, collect, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example),  cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_values),   cmocka_unit_test(test_identities),
        cmocka_unit_test(test_refusals), cmocka_unit_test(test_path_lengths),
        cmocka_unit_test(test_bounds),   cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_check),    cmocka_unit_test(test_warnings),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
