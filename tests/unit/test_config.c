/*
 * test_config.c -- unit tests of config.c (sworn-decisiond's configuration).
 *
 * A full configuration loads into exactly the expected struct (relative paths made absolute
 * against the file's folder, users resolved, pinned_spki in its three spellings); a minimal one
 * gets every default; every refusal (unknown keys, missing required keys, bounds, wrong kinds,
 * settings of another key kind, bad SPKIs, bad uids, equal sockets) fails with the file:line:col
 * of the offending node; and sworn_dconfig_check finds each problem on the file system in turn.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "config.h"
#include "err.h"
#include "testutil.h"

struct fx {
    char *dir; /* the temporary folder */
    char *etc; /* <dir>/etc: where the configuration lives */
    char *cfg; /* <dir>/etc/sworn.yaml */
    char spki_hex[2 * 200 + 1];
    uint8_t spki[200];
    size_t spki_len;
};

static char *join(const char *a, const char *b)
{
    return sworn_test_path(a, b);
}

static void write_in(const char *dir, const char *name, const char *text, unsigned mode)
{
    char *p = join(dir, name);

    sworn_test_write_file(p, text, strlen(text), mode);
    chmod(p, mode);
    free(p);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    unsigned char *p;
    int n;

    assert_non_null(f);
    assert_non_null(k);
    f->dir = sworn_test_tmpdir("config");
    f->etc = join(f->dir, "etc");
    f->cfg = join(f->etc, "sworn.yaml");
    assert_int_equal(mkdir(f->etc, 0700), 0);
    {
        char *run = join(f->dir, "run"), *db = join(f->dir, "db"), *tiles = join(f->dir, "tiles");
        assert_int_equal(mkdir(run, 0700), 0);
        assert_int_equal(mkdir(db, 0700), 0);
        assert_int_equal(mkdir(tiles, 0700), 0);
        free(run);
        free(db);
        free(tiles);
    }
    n = i2d_PUBKEY(k, NULL);
    assert_true(n > 0 && (size_t)n <= sizeof(f->spki));
    p = f->spki;
    assert_int_equal(i2d_PUBKEY(k, &p), n);
    f->spki_len = (size_t)n;
    sworn_test_hex(f->spki, f->spki_len, f->spki_hex);
    EVP_PKEY_free(k);

    write_in(f->etc, "policy.yaml", "version: 1\n", 0644);
    write_in(f->etc, "pin", "1234\n", 0600);
    write_in(f->etc, "vault.json", "{}", 0600);
    write_in(f->etc, "module.so", "not really a module", 0644);
    write_in(f->etc, "keyring", "sworn keyring v1\n", 0644);
    write_in(f->etc, "extra.bin", "x", 0644);
    write_in(f->etc, "dev-key.pem", "-----BEGIN PRIVATE KEY-----\n", 0600);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_rmtree(f->dir);
    free(f->dir);
    free(f->etc);
    free(f->cfg);
    free(f);
    return 0;
}

/* The full example of docs/configuration.md, with the test's SPKI and folders. */
static char *full_text(const struct fx *f)
{
    static char buf[8192];

    snprintf(buf, sizeof(buf),
             "# sworn-decisiond configuration\n"
             "log:\n"
             "  database: ../db/log.db\n"
             "  origin: sworn.example/log\n"
             "  checkpoint_interval: 500ms\n"
             "  export_dir: %s/tiles\n"
             "signer:\n"
             "  key: \"pkcs11:token=sworn;object=log-key\"\n"
             "  module: module.so\n"
             "  pin_file: ./pin\n"
             "  pinned_spki: %s\n"
             "  user: root\n"
             "  timeout: 3s\n"
             "keyring: keyring\n"
             "tpm:\n"
             "  tcti: \"swtpm:host=127.0.0.1,port=2321\"\n"
             "  required: true\n"
             "  pcrs: [0, 7]\n"
             "  quote_min_interval: 2s\n"
             "  measure: [extra.bin, /usr/bin/../bin/sh]\n"
             "policy: policy.yaml\n"
             "vault: vault.json\n"
             "escalation: { timeout: 10m, max_pending: 50 }\n"
             "sockets:\n"
             "  decision: ../run/decision.sock\n"
             "  admin: ../run/admin.sock\n"
             "peers:\n"
             "  proxy_uids: [1001, root]\n"
             "  operator_uids:\n"
             "    - 0\n"
             "run_as: root\n"
             "workers: 8\n",
             f->dir, f->spki_hex);
    return buf;
}

static const char *minimal_fmt = "log: {database: log.db, origin: o}\n"
                                 "signer: {key: dev-key.pem}\n"
                                 "policy: policy.yaml\n"
                                 "sockets: {decision: d.sock, admin: a.sock}\n"
                                 "peers: {proxy_uids: [1001], operator_uids: [0]}\n";

static struct sworn_dconfig *load_text(const struct fx *f, const char *text)
{
    struct sworn_dconfig *c = NULL;

    sworn_test_write_file(f->cfg, text, strlen(text), 0644);
    if (sworn_dconfig_load(f->cfg, &c) != 0)
        fail_msg("load failed: %s\n--- input:\n%s", sworn_err_msg(), text);
    return c;
}

/* Loading fails with "<cfg>:<pos> <sub>..." where pos is "line:col:". */
static void load_fails(const struct fx *f, const char *text, const char *pos, const char *sub)
{
    struct sworn_dconfig *c = (struct sworn_dconfig *)0x1;
    char want[1024];

    sworn_test_write_file(f->cfg, text, strlen(text), 0644);
    assert_int_equal(sworn_dconfig_load(f->cfg, &c), -1);
    assert_ptr_equal(c, (struct sworn_dconfig *)0x1);
    snprintf(want, sizeof(want), "%s:%s", f->cfg, pos);
    if (strncmp(sworn_err_msg(), want, strlen(want)) != 0 || strstr(sworn_err_msg(), sub) == NULL)
        fail_msg("got \"%s\"; want \"%s ...%s...\"\n--- input:\n%s", sworn_err_msg(), want, sub,
                 text);
}

/* The minimal config with one line appended (a top-level key) or replaced. */
static char *minimal_plus(const char *extra)
{
    static char buf[4096];

    snprintf(buf, sizeof(buf), "%s%s", minimal_fmt, extra);
    return buf;
}

static void test_full(void **state)
{
    struct fx *f = *state;
    struct sworn_dconfig *c = load_text(f, full_text(f));
    char want[1024];

    assert_string_equal(c->path, f->cfg);
    snprintf(want, sizeof(want), "%s/db/log.db", f->dir);
    assert_string_equal(c->log_db, want);
    assert_string_equal(c->origin, "sworn.example/log");
    assert_int_equal(c->checkpoint_interval_ms, 500);
    snprintf(want, sizeof(want), "%s/tiles", f->dir);
    assert_string_equal(c->export_dir, want);
    assert_string_equal(c->signer_key, "pkcs11:token=sworn;object=log-key");
    snprintf(want, sizeof(want), "%s/module.so", f->etc);
    assert_string_equal(c->signer_module, want);
    snprintf(want, sizeof(want), "%s/pin", f->etc);
    assert_string_equal(c->signer_pin_file, want);
    assert_null(c->signer_tcti);
    assert_string_equal(c->signer_spki_hex, f->spki_hex);
    assert_string_equal(c->signer_user, "root");
    assert_int_equal(c->signer_timeout_ms, 3000);
    snprintf(want, sizeof(want), "%s/keyring", f->etc);
    assert_string_equal(c->keyring, want);
    assert_string_equal(c->tpm_tcti, "swtpm:host=127.0.0.1,port=2321");
    assert_int_equal(c->tpm_required, 1);
    assert_int_equal(c->tpm_pcrs, (1u << 0) | (1u << 7) | (1u << 23));
    assert_int_equal(c->quote_min_interval_ms, 2000);
    assert_int_equal(c->n_measure, 2);
    snprintf(want, sizeof(want), "%s/extra.bin", f->etc);
    assert_string_equal(c->measure[0], want);
    assert_string_equal(c->measure[1], "/usr/bin/sh");
    snprintf(want, sizeof(want), "%s/policy.yaml", f->etc);
    assert_string_equal(c->policy_path, want);
    snprintf(want, sizeof(want), "%s/vault.json", f->etc);
    assert_string_equal(c->vault_path, want);
    assert_int_equal(c->escalation_timeout_ms, 600000);
    assert_int_equal(c->max_pending_escalations, 50);
    snprintf(want, sizeof(want), "%s/run/decision.sock", f->dir);
    assert_string_equal(c->decision_socket, want);
    snprintf(want, sizeof(want), "%s/run/admin.sock", f->dir);
    assert_string_equal(c->admin_socket, want);
    assert_int_equal(c->n_proxy_uids, 2);
    assert_int_equal(c->proxy_uids[0], 1001);
    assert_int_equal(c->proxy_uids[1], 0);
    assert_int_equal(c->n_operator_uids, 1);
    assert_int_equal(c->operator_uids[0], 0);
    assert_string_equal(c->run_as_user, "root");
    assert_int_equal(c->workers, 8);
    {
        uint8_t d[32];
        const char *t = full_text(f);
        assert_int_equal(EVP_Digest(t, strlen(t), d, NULL, EVP_sha256(), NULL), 1);
        assert_memory_equal(c->digest, d, 32);
    }
    assert_int_equal(sworn_dconfig_check(c), 0);
    sworn_dconfig_free(c);
    sworn_dconfig_free(NULL);
}

static void test_defaults_and_relative_config_path(void **state)
{
    struct fx *f = *state;
    struct sworn_dconfig *c = NULL;
    char *cwd = getcwd(NULL, 0), want[1024];

    sworn_test_write_file(f->cfg, minimal_fmt, strlen(minimal_fmt), 0644);
    /* Loaded through a relative path: paths still come out absolute. */
    assert_int_equal(chdir(f->dir), 0);
    assert_int_equal(sworn_dconfig_load("etc/sworn.yaml", &c), 0);
    assert_int_equal(chdir(cwd), 0);
    free(cwd);
    assert_string_equal(c->path, "etc/sworn.yaml");
    snprintf(want, sizeof(want), "%s/log.db", f->etc);
    assert_string_equal(c->log_db, want);
    assert_int_equal(c->checkpoint_interval_ms, 1000);
    assert_null(c->export_dir);
    snprintf(want, sizeof(want), "file:%s/dev-key.pem", f->etc);
    assert_string_equal(c->signer_key, want);
    assert_null(c->signer_module);
    assert_null(c->signer_pin_file);
    assert_null(c->signer_spki_hex);
    assert_null(c->signer_user);
    assert_int_equal(c->signer_timeout_ms, 2000);
    assert_null(c->keyring);
    assert_null(c->tpm_tcti);
    assert_int_equal(c->tpm_required, 0);
    assert_int_equal(c->tpm_pcrs, 1u << 23);
    assert_int_equal(c->quote_min_interval_ms, 1000);
    assert_int_equal(c->tpm_ak_handle, 0x8153574Eu);
    assert_int_equal(c->n_measure, 0);
    assert_null(c->vault_path);
    assert_int_equal(c->escalation_timeout_ms, 300000);
    assert_int_equal(c->max_pending_escalations, 1000);
    assert_null(c->run_as_user);
    assert_int_equal(c->workers, 4);
    assert_int_equal(c->replay_max_entries, 0); /* no bound: the whole window is replayed */
    sworn_dconfig_free(c);
    c = load_text(f, minimal_plus("budgets: {replay_max_entries: 8}\n"));
    assert_int_equal(c->replay_max_entries, 8);
    sworn_dconfig_free(c);
}

static void test_signer_forms(void **state)
{
    struct fx *f = *state;
    struct sworn_dconfig *c;
    char text[4096], *p;

    /* A tpm: key takes the TCTI from tpm.tcti unless it has its own. */
    snprintf(text, sizeof(text),
             "log: {database: log.db, origin: o}\n"
             "signer: {key: \"tpm:handle=0x81000001\", pinned_spki: %s}\n"
             "tpm: {tcti: \"device:/dev/tpmrm0\"}\n"
             "policy: policy.yaml\n"
             "sockets: {decision: d.sock, admin: a.sock}\n"
             "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
             f->spki_hex);
    c = load_text(f, text);
    assert_string_equal(c->signer_tcti, "device:/dev/tpmrm0");
    assert_string_equal(c->signer_spki_hex, f->spki_hex);
    sworn_dconfig_free(c);
    snprintf(text, sizeof(text),
             "log: {database: log.db, origin: o}\n"
             "signer: {key: \"tpm:handle=0x81000001\", pinned_spki: %s, tcti: \"mssim:\"}\n"
             "policy: policy.yaml\n"
             "sockets: {decision: d.sock, admin: a.sock}\n"
             "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
             f->spki_hex);
    c = load_text(f, text);
    assert_string_equal(c->signer_tcti, "mssim:");
    assert_null(c->tpm_tcti);
    sworn_dconfig_free(c);

    /* pinned_spki from a file of hex (upper case, with a newline) and from a DER file. */
    p = join(f->etc, "spki.hex");
    {
        char up[sizeof(f->spki_hex) + 2];
        size_t i;
        for (i = 0; f->spki_hex[i] != '\0'; i++)
            up[i] = (f->spki_hex[i] >= 'a' && f->spki_hex[i] <= 'f') ? (char)(f->spki_hex[i] - 32)
                                                                     : f->spki_hex[i];
        up[i++] = '\n';
        up[i] = '\0';
        sworn_test_write_file(p, up, strlen(up), 0644);
    }
    free(p);
    p = join(f->etc, "spki.der");
    sworn_test_write_file(p, f->spki, f->spki_len, 0644);
    free(p);
    for (int i = 0; i < 2; i++) {
        snprintf(text, sizeof(text),
                 "log: {database: log.db, origin: o}\n"
                 "signer: {key: \"tpm:handle=0x81000001\", pinned_spki: %s, tcti: \"mssim:\"}\n"
                 "policy: policy.yaml\n"
                 "sockets: {decision: d.sock, admin: a.sock}\n"
                 "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
                 i == 0 ? "spki.hex" : "./spki.der");
        c = load_text(f, text);
        assert_string_equal(c->signer_spki_hex, f->spki_hex);
        sworn_dconfig_free(c);
    }

    /* file:relative and an absolute bare path. */
    c = load_text(f, "log: {database: log.db, origin: o}\n"
                     "signer: {key: \"file:keys/../dev-key.pem\"}\n"
                     "policy: policy.yaml\n"
                     "sockets: {decision: d.sock, admin: a.sock}\n"
                     "peers: {proxy_uids: [1001], operator_uids: [0]}\n");
    snprintf(text, sizeof(text), "file:%s/dev-key.pem", f->etc);
    assert_string_equal(c->signer_key, text);
    sworn_dconfig_free(c);
}

struct bad {
    const char *extra; /* appended to the minimal config */
    const char *pos;
    const char *sub;
};

static void test_refusals(void **state)
{
    struct fx *f = *state;
    static const struct bad bad[] = {
        {"colour: blue\n", "6:1: ", "unknown key \"colour\""},
        {"workers: 0\n", "6:10: ", "outside [1, 64]"},
        {"workers: 65\n", "6:10: ", "outside [1, 64]"},
        {"workers: four\n", "6:10: ", "unsigned decimal"},
        {"workers: [4]\n", "6:10: ", "found a sequence"},
        {"run_as: no-such-user-sworn\n", "6:9: ", "no such user"},
        {"keyring: ''\n", "6:10: ", "empty path"},
        {"keyring:\n", "6:9: ", "empty path"},
        {"vault: ~\n", "6:8: ", "\"~\" is not a path"},
        {"vault: null\n", "6:8: ", "\"null\" is not a path"},
        {"vault: {a: 1}\n", "6:8: ", "expected a string, found a mapping"},
        {"tpm: {tcti: x, bogus: 1}\n", "6:16: ", "unknown key \"bogus\""},
        {"tpm: {required: true}\n", "6:17: ", "needs tpm.tcti"},
        {"tpm: {tcti: x, required: yes}\n", "6:26: ", "true or false"},
        {"tpm: {pcrs: [24]}\n", "6:14: ", "outside [0, 23]"},
        {"tpm: {pcrs: [7, 7]}\n", "6:17: ", "PCR 7 is listed twice"},
        {"tpm: {pcrs: 7}\n", "6:13: ", "must be a list"},
        {"tpm: {quote_min_interval: 5ms}\n", "6:27: ", "between 10ms"},
        {"tpm: {measure: [a, ./a]}\n", "6:20: ", "listed twice"},
        {"tpm: [tcti]\n", "6:6: ", "expected a mapping"},
        /* tpm.ak_handle: 0x and 8 hex digits, in the owner's persistent range. */
        {"tpm: {tcti: x, ak_handle: 0x8153574}\n", "6:27: ", "0x and 8 hex digits"},
        {"tpm: {tcti: x, ak_handle: 8153574E00}\n", "6:27: ", "0x and 8 hex digits"},
        {"tpm: {tcti: x, ak_handle: 0x8153574G}\n", "6:27: ", "0x and 8 hex digits"},
        {"tpm: {tcti: x, ak_handle: 0x81800000}\n", "6:27: ", "owner's persistent range"},
        {"tpm: {tcti: x, ak_handle: 0x80000000}\n", "6:27: ", "owner's persistent range"},
        {"tpm: {tcti: x, ak_handle: 0x80FFFFFF}\n", "6:27: ", "owner's persistent range"},
        {"tpm: {tcti: x, ak_handle: [0x8153574E]}\n", "6:27: ", "expected a string"},
        {"escalation: {timeout: 500ms}\n", "6:23: ", "between 1000ms"},
        {"escalation: {timeout: 8d}\n", "6:23: ", "604800000ms"},
        {"escalation: {max_pending: 0}\n", "6:27: ", "outside [1, 100000]"},
        {"escalation: {max_pending: 100001}\n", "6:27: ", "outside"},
        {"escalation: {timeout: 5}\n", "6:23: ", "expected a duration"},
        {"log: {database: x}\n", "6:1: ", "duplicate key \"log\""},
        {"budgets: {replay_max_entries: 0}\n", "6:31: ", "outside"},
        {"budgets: {replay_max_entries: many}\n", "6:31: ", "unsigned decimal"},
        {"budgets: {replay_max_entries: -1}\n", "6:31: ", "unsigned decimal"},
        {"budgets: {horizon: 8}\n", "6:11: ", "unknown key \"horizon\""},
        {"budgets: [8]\n", "6:10: ", "expected a mapping"},
    };
    char text[8192];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        load_fails(f, minimal_plus(bad[i].extra), bad[i].pos, bad[i].sub);

    /* Required keys and sections. */
    load_fails(f, "signer: {key: k}\n", "1:1: ", "missing required key \"log\"");
    load_fails(f,
               "log: {origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [1], operator_uids: [0]}\n",
               "1:6: ", "missing required key \"log.database\"");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\n"
               "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [1], operator_uids: [0]}\n",
               "1:1: ", "missing required key \"policy\"");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d}\npeers: {proxy_uids: [1], operator_uids: [0]}\n",
               "4:10: ", "missing required key \"sockets.admin\"");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [1]}\n",
               "5:8: ", "missing required key \"peers.operator_uids\"");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {timeout: 1s}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [1], operator_uids: [0]}\n",
               "2:9: ", "missing required key \"signer.key\"");

    /* Values of log:. */
    load_fails(f,
               "log: {database: l, origin: \"a\\nb\"}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [1], operator_uids: [0]}\n",
               "1:28: ", "printable");
    load_fails(f,
               "log: {database: l, origin: ''}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [1], operator_uids: [0]}\n",
               "1:28: ", "must not be empty");
    {
        char o[300];
        memset(o, 'o', 256);
        o[256] = '\0';
        snprintf(text, sizeof(text),
                 "log: {database: l, origin: %s}\nsigner: {key: k}\npolicy: p\n"
                 "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [1], operator_uids: [0]}\n",
                 o);
        load_fails(f, text, "1:28: ", "longer than 255");
    }
    load_fails(f,
               "log: {database: l, origin: o, checkpoint_interval: 9ms}\nsigner: {key: k}\n"
               "policy: p\nsockets: {decision: d, admin: a}\n"
               "peers: {proxy_uids: [1], operator_uids: [0]}\n",
               "1:52: ", "between 10ms and 86400000ms");
    load_fails(f,
               "log: {database: l, origin: o, checkpoint_interval: 2d}\nsigner: {key: k}\n"
               "policy: p\nsockets: {decision: d, admin: a}\n"
               "peers: {proxy_uids: [1], operator_uids: [0]}\n",
               "1:52: ", "between 10ms");

    /* Sockets. */
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: ./s, admin: s}\npeers: {proxy_uids: [1], operator_uids: [0]}\n",
               "4:33: ", "different sockets");
    /* The metrics socket: a socket of its own, and its group only with it. */
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a, metrics: ./d}\n"
               "peers: {proxy_uids: [1], operator_uids: [0]}\n",
               "4:43: ", "a socket of its own");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a, metrics: a}\n"
               "peers: {proxy_uids: [1], operator_uids: [0]}\n",
               "4:43: ", "a socket of its own");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a, metrics_group: 0}\n"
               "peers: {proxy_uids: [1], operator_uids: [0]}\n",
               "4:49: ", "metrics_group without metrics");
    {
        char longp[200];
        memset(longp, 's', 120);
        longp[120] = '\0';
        snprintf(text, sizeof(text),
                 "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
                 "sockets: {decision: %s, admin: a}\n"
                 "peers: {proxy_uids: [1], operator_uids: [0]}\n",
                 longp);
        load_fails(f, text, "4:21: ", "Unix socket path is at most 107 bytes");
    }

    /* Peers. */
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [], operator_uids: [0]}\n",
               "5:21: ", "at least one uid");
    load_fails(
        f,
        "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
        "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [1, 1], operator_uids: [0]}\n",
        "5:25: ", "uid 1 is listed twice");
    load_fails(
        f,
        "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
        "sockets: {decision: d, admin: a}\npeers: {proxy_uids: [0, root], operator_uids: [0]}\n",
        "5:25: ", "uid 0 is listed twice");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\n"
               "peers: {proxy_uids: [4294967295], operator_uids: [0]}\n",
               "5:22: ", "outside [0, 4294967294]");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\n"
               "peers: {proxy_uids: [01], operator_uids: [0]}\n",
               "5:22: ", "unsigned decimal");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\n"
               "peers: {proxy_uids: [no-such-user-sworn], operator_uids: [0]}\n",
               "5:22: ", "no such user");
    load_fails(f,
               "log: {database: l, origin: o}\nsigner: {key: k}\npolicy: p\n"
               "sockets: {decision: d, admin: a}\n"
               "peers: {proxy_uids: [[1]], operator_uids: [0]}\n",
               "5:22: ", "expected a string");
}

/* witnesses: (issue 18): the URL's parts, the key, the timeout, and every refusal. */
#define WVKEY "witness.example.org/w1+7f6c1329+BEA9S7A9Fr6XTVtC3bNrxizwhNYL97pFQZTSNWmZV06H"
#define WVKEY2 "witness.example.org/w2+3f2b08b2+BNCCFw3JNbl//iIaELS8RV+AP1spnQCs3kR0BV7kCeGB"

static void test_witnesses(void **state)
{
    struct fx *f = *state;
    struct sworn_dconfig *c;
    static const struct bad bad[] = {
        {"witnesses: {url: x}\n", "6:12: ", "must be a list"},
        {"witnesses: [x]\n", "6:13: ", "each item is a map"},
        {"witnesses: [{url: \"http://127.0.0.1\"}]\n", "6:13: ", "witnesses.key"},
        {"witnesses: [{url: \"https://127.0.0.1\", key: \"" WVKEY "\"}]\n",
         "6:19: ", "must start with http://"},
        {"witnesses: [{url: \"http://witness.example.org\", key: \"" WVKEY "\"}]\n",
         "6:19: ", "resolves no names"},
        {"witnesses: [{url: \"http://[::1\", key: \"" WVKEY "\"}]\n", "6:19: ", "no ']'"},
        {"witnesses: [{url: \"http://[127.0.0.1]\", key: \"" WVKEY "\"}]\n",
         "6:19: ", "numeric IPv6"},
        {"witnesses: [{url: \"http://127.0.0.1:0\", key: \"" WVKEY "\"}]\n",
         "6:19: ", "port outside"},
        {"witnesses: [{url: \"http://127.0.0.1:65536\", key: \"" WVKEY "\"}]\n",
         "6:19: ", "port outside"},
        {"witnesses: [{url: \"http://127.0.0.1:80x\", key: \"" WVKEY "\"}]\n",
         "6:19: ", "unexpected text"},
        {"witnesses: [{url: \"http://127.0.0.1/a?b\", key: \"" WVKEY "\"}]\n",
         "6:19: ", "without '?'"},
        {"witnesses: [{url: \"http://127.0.0.1\", key: \"w+7f6c1329+AAAA\"}]\n",
         "6:44: ", "not a cosignature/v1"},
        {"witnesses: [{url: \"http://127.0.0.1\", key: \"" WVKEY "\", timeout: 50ms}]\n",
         "6:133: ", "between 100ms"},
        {"witnesses: [{url: \"http://127.0.0.1\", key: \"" WVKEY "\", port: 1}]\n",
         "6:", "unknown key \"port\""},
        {"witnesses: [{url: \"http://127.0.0.1\", key: \"" WVKEY "\"}, "
         "{url: \"http://127.0.0.2\", key: \"" WVKEY "\"}]\n",
         "6:", "the key or key name of item 1"},
    };

    c = load_text(f, minimal_plus("witnesses:\n"
                                  "  - url: http://192.0.2.10:7380/w/\n"
                                  "    key: \"" WVKEY "\"\n"
                                  "    timeout: 3s\n"
                                  "  - url: \"http://[2001:db8::1]\"\n"
                                  "    key: \"" WVKEY2 "\"\n"));
    assert_int_equal(c->n_witnesses, 2);
    assert_string_equal(c->witnesses[0].host, "192.0.2.10");
    assert_int_equal(c->witnesses[0].port, 7380);
    assert_string_equal(c->witnesses[0].prefix, "/w");
    assert_string_equal(c->witnesses[0].key, WVKEY);
    assert_int_equal(c->witnesses[0].timeout_ms, 3000);
    assert_string_equal(c->witnesses[1].host, "2001:db8::1");
    assert_int_equal(c->witnesses[1].port, 80);
    assert_string_equal(c->witnesses[1].prefix, "");
    assert_int_equal(c->witnesses[1].timeout_ms, 5000);
    sworn_dconfig_free(c);
    c = load_text(f, minimal_fmt);
    assert_int_equal(c->n_witnesses, 0);
    sworn_dconfig_free(c);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        load_fails(f, minimal_plus(bad[i].extra), bad[i].pos, bad[i].sub);
}

static void signer_fails(const struct fx *f, const char *signer, const char *pos, const char *sub)
{
    char text[4096];

    snprintf(text, sizeof(text),
             "log: {database: l, origin: o}\n"
             "signer: %s\n"
             "policy: p\nsockets: {decision: d, admin: a}\n"
             "peers: {proxy_uids: [1], operator_uids: [0]}\n",
             signer);
    load_fails(f, text, pos, sub);
}

static void test_signer_refusals(void **state)
{
    struct fx *f = *state;
    char s[2048];

    signer_fails(f, "{key: \"pkcs11:token=a\", pin_file: p, pinned_spki: 00}",
                 "2:9: ", "missing required key \"signer.module\"");
    signer_fails(f, "{key: \"pkcs11:token=a\", module: m, pinned_spki: 00}",
                 "2:9: ", "missing required key \"signer.pin_file\"");
    snprintf(s, sizeof(s), "{key: \"pkcs11:token=a\", module: m, pin_file: p}");
    signer_fails(f, s, "2:15: ", "pinned_spki is required");
    signer_fails(f, "{key: \"tpm:handle=0x81000001\"}", "2:15: ", "pinned_spki is required");
    signer_fails(f, "{key: k, module: m}", "2:26: ", "module applies only to pkcs11:");
    signer_fails(f, "{key: k, pin_file: p}", "2:28: ", "pin_file applies only to pkcs11:");
    signer_fails(f, "{key: k, tcti: t}", "2:24: ", "tcti applies only to tpm:");
    snprintf(s, sizeof(s), "{key: \"tpm:handle=0x81000001\", pinned_spki: %s}", f->spki_hex);
    signer_fails(f, s, "2:9: ", "needs signer.tcti or tpm.tcti");
    signer_fails(f, "{key: \"tpm:handle=0x01000001\"}", "2:15: ", "tpm:handle=0x81xxxxxx");
    signer_fails(f, "{key: \"tpm:handle=0x8100001\"}", "2:15: ", "tpm:handle=0x81xxxxxx");
    signer_fails(f, "{key: \"tpm:0x81000001\"}", "2:15: ", "tpm:handle=0x81xxxxxx");
    signer_fails(f, "{key: \"file:\"}", "2:15: ", "empty path");
    signer_fails(f, "{key: ''}", "2:15: ", "must not be empty");
    signer_fails(f, "{key: k, timeout: 50ms}", "2:27: ", "between 100ms and 60000ms");
    signer_fails(f, "{key: k, timeout: 2m}", "2:27: ", "between 100ms");
    signer_fails(f, "{key: k, user: no-such-user-sworn}", "2:24: ", "no such user");
    signer_fails(f, "{key: k, pin: p}", "2:18: ", "unknown key \"pin\"");
    /* Bad SPKIs: odd hex, hex that is not an SPKI, a missing file, a file of garbage. */
    signer_fails(f, "{key: k, pinned_spki: abc}", "2:31: ", "even number of hex digits");
    signer_fails(f, "{key: k, pinned_spki: 3000}", "2:31: ", "not a DER SubjectPublicKeyInfo");
    signer_fails(f, "{key: k, pinned_spki: no-such.der}", "2:31: ", "pinned_spki:");
    write_in(f->etc, "junk.der", "\x30\x03\x02\x01\x01 junk", 0644);
    signer_fails(f, "{key: k, pinned_spki: junk.der}", "2:31: ", "not a DER");
    /* An SPKI followed by one more byte. */
    {
        char hex[sizeof(f->spki_hex) + 2];
        snprintf(hex, sizeof(hex), "%s00", f->spki_hex);
        snprintf(s, sizeof(s), "{key: k, pinned_spki: %s}", hex);
        signer_fails(f, s, "2:31: ", "not a DER");
    }
}

/*
 * tpm.ak_handle (issue 11, finding 14): the AK's persistent handle, any in the owner's range, in
 * either case; refused when it is the signer's tpm: key on the same TPM (another TCTI is another
 * TPM, where the same number is another object).
 */
static void test_ak_handle(void **state)
{
    struct fx *f = *state;
    struct sworn_dconfig *c;
    char s[2048];

    c = load_text(f, minimal_plus("tpm: {tcti: x, ak_handle: 0x817fffff}\n"));
    assert_int_equal(c->tpm_ak_handle, 0x817FFFFFu);
    sworn_dconfig_free(c);
    c = load_text(f, minimal_plus("tpm: {tcti: x, ak_handle: 0X81000000}\n"));
    assert_int_equal(c->tpm_ak_handle, 0x81000000u);
    sworn_dconfig_free(c);
    snprintf(s, sizeof(s),
             "log: {database: log.db, origin: o}\n"
             "signer: {key: \"tpm:handle=0x8153574e\", pinned_spki: %s}\n"
             "policy: policy.yaml\n"
             "sockets: {decision: d.sock, admin: a.sock}\n"
             "peers: {proxy_uids: [1001], operator_uids: [0]}\n"
             "tpm: {tcti: t}\n",
             f->spki_hex);
    load_fails(f, s, "6:6: ", "is the signer's key on the same TPM");
    snprintf(s, sizeof(s),
             "log: {database: log.db, origin: o}\n"
             "signer: {key: \"tpm:handle=0x81000002\", pinned_spki: %s}\n"
             "policy: policy.yaml\n"
             "sockets: {decision: d.sock, admin: a.sock}\n"
             "peers: {proxy_uids: [1001], operator_uids: [0]}\n"
             "tpm: {tcti: t, ak_handle: 0x81000002}\n",
             f->spki_hex);
    load_fails(f, s, "6:6: ", "is the signer's key on the same TPM");
    /* The signer's key on another TPM: the same number there is another object. */
    snprintf(s, sizeof(s),
             "log: {database: log.db, origin: o}\n"
             "signer: {key: \"tpm:handle=0x8153574E\", tcti: other, pinned_spki: %s}\n"
             "policy: policy.yaml\n"
             "sockets: {decision: d.sock, admin: a.sock}\n"
             "peers: {proxy_uids: [1001], operator_uids: [0]}\n"
             "tpm: {tcti: t}\n",
             f->spki_hex);
    c = load_text(f, s);
    assert_int_equal(c->tpm_ak_handle, 0x8153574Eu);
    sworn_dconfig_free(c);
}

static void check_fails(const struct fx *f, const char *text, const char *sub)
{
    struct sworn_dconfig *c = load_text(f, text);

    assert_int_equal(sworn_dconfig_check(c), -1);
    if (strstr(sworn_err_msg(), sub) == NULL || strstr(sworn_err_msg(), f->cfg) == NULL)
        fail_msg("got \"%s\", want \"%s\"", sworn_err_msg(), sub);
    sworn_dconfig_free(c);
}

static void test_check(void **state)
{
    struct fx *f = *state;
    struct sworn_dconfig *c;
    char *p;

    c = load_text(f, minimal_fmt);
    assert_int_equal(sworn_dconfig_check(c), 0);
    sworn_dconfig_free(c);

    check_fails(f, minimal_plus("keyring: nope\n"), "keyring: ");
    check_fails(f, minimal_plus("vault: nope.json\n"), "vault: ");
    check_fails(f, minimal_plus("tpm: {measure: [extra.bin, missing.bin]}\n"), "tpm.measure: ");
    check_fails(f, minimal_plus("tpm: {measure: [../run]}\n"), "is not a regular file");
    check_fails(f,
                "log: {database: nodir/log.db, origin: o}\nsigner: {key: dev-key.pem}\n"
                "policy: policy.yaml\nsockets: {decision: d.sock, admin: a.sock}\n"
                "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
                "log.database: ");
    check_fails(f,
                "log: {database: ../run, origin: o}\nsigner: {key: dev-key.pem}\n"
                "policy: policy.yaml\nsockets: {decision: d.sock, admin: a.sock}\n"
                "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
                "is not a regular file");
    check_fails(f,
                "log: {database: l, origin: o, export_dir: policy.yaml}\n"
                "signer: {key: dev-key.pem}\npolicy: policy.yaml\n"
                "sockets: {decision: d.sock, admin: a.sock}\n"
                "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
                "is not a folder");
    check_fails(f,
                "log: {database: l, origin: o}\nsigner: {key: dev-key.pem}\n"
                "policy: nope.yaml\nsockets: {decision: d.sock, admin: a.sock}\n"
                "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
                "policy: ");
    check_fails(f,
                "log: {database: l, origin: o}\nsigner: {key: dev-key.pem}\n"
                "policy: policy.yaml\nsockets: {decision: /nonexistent-sworn/d.sock, admin: a}\n"
                "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
                "sockets.decision: ");
    check_fails(f,
                "log: {database: l, origin: o}\nsigner: {key: dev-key.pem}\n"
                "policy: policy.yaml\nsockets: {decision: d, admin: policy.yaml}\n"
                "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
                "exists and is not a socket");
    check_fails(f,
                "log: {database: l, origin: o}\nsigner: {key: missing.pem}\n"
                "policy: policy.yaml\nsockets: {decision: d, admin: a}\n"
                "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
                "signer.key: ");

    /* Secret files: the PIN file and a key file must be 0600 or stricter; so must the vault. */
    {
        char text[4096];
        snprintf(text, sizeof(text),
                 "log: {database: l, origin: o}\n"
                 "signer: {key: \"pkcs11:token=a\", module: module.so, pin_file: pin, "
                 "pinned_spki: %s}\n"
                 "policy: policy.yaml\nsockets: {decision: d, admin: a}\n"
                 "peers: {proxy_uids: [1001], operator_uids: [0]}\n",
                 f->spki_hex);
        c = load_text(f, text);
        assert_int_equal(sworn_dconfig_check(c), 0);
        sworn_dconfig_free(c);
        p = join(f->etc, "pin");
        assert_int_equal(chmod(p, 0640), 0);
        check_fails(f, text, "mode 0640");
        assert_int_equal(chmod(p, 0600), 0);
        free(p);
        p = join(f->etc, "module.so");
        assert_int_equal(unlink(p), 0);
        check_fails(f, text, "signer.module: ");
        sworn_test_write_file(p, "x", 1, 0644);
        free(p);
    }
    p = join(f->etc, "dev-key.pem");
    assert_int_equal(chmod(p, 0644), 0);
    check_fails(f, minimal_fmt, "mode 0644");
    assert_int_equal(chmod(p, 0600), 0);
    free(p);
    p = join(f->etc, "vault.json");
    assert_int_equal(chmod(p, 0644), 0);
    check_fails(f, minimal_plus("vault: vault.json\n"), "vault: ");
    check_fails(f, minimal_plus("vault: vault.json\n"), "chmod 600");
    assert_int_equal(chmod(p, 0600), 0);
    free(p);
    if (geteuid() == 0) {
        p = join(f->etc, "vault.json");
        assert_int_equal(chown(p, 1, 1), 0);
        check_fails(f, minimal_plus("vault: vault.json\n"), "owned by uid 1");
        assert_int_equal(chown(p, 0, 0), 0);
        free(p);
    }
    c = load_text(f, minimal_plus("vault: vault.json\n"));
    assert_int_equal(sworn_dconfig_check(c), 0);
    sworn_dconfig_free(c);
}

static void test_file_errors(void **state)
{
    struct fx *f = *state;
    struct sworn_dconfig *c = NULL;
    char *p = join(f->etc, "missing.yaml");

    assert_int_equal(sworn_dconfig_load(p, &c), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    assert_null(c);
    free(p);
    load_fails(f, "log: [\n", "", "");
    load_fails(f, "- a\n", "1:1: ", "root must be a mapping");
    load_fails(f, "log: &a {database: x}\n", "1:6: ", "anchors");
}

/* --- sockets: who may connect (issue 11, finding 3) ---------------------------------------- */

static void socket_load_fails(const struct fx *f, const char *sockets, const char *peers,
                              const char *sub)
{
    char text[2048];
    struct sworn_dconfig *c = NULL;

    snprintf(text, sizeof(text),
             "log: {database: log.db, origin: o}\nsigner: {key: dev-key.pem}\npolicy: "
             "policy.yaml\nsockets: %s\npeers: %s\n",
             sockets, peers);
    sworn_test_write_file(f->cfg, text, strlen(text), 0644);
    assert_int_equal(sworn_dconfig_load(f->cfg, &c), -1);
    if (strncmp(sworn_err_msg(), f->cfg, strlen(f->cfg)) != 0 ||
        strstr(sworn_err_msg(), sub) == NULL)
        fail_msg("got \"%s\"; want ...%s...\n--- input:\n%s", sworn_err_msg(), sub, text);
}

static struct sworn_dconfig *socket_load(const struct fx *f, const char *sockets, const char *peers)
{
    char text[2048];

    snprintf(text, sizeof(text),
             "log: {database: log.db, origin: o}\nsigner: {key: dev-key.pem}\npolicy: "
             "policy.yaml\nsockets: %s\npeers: %s\n",
             sockets, peers);
    return load_text(f, text);
}

static void test_socket_modes(void **state)
{
    struct fx *f = *state;
    struct sworn_dconfig *c;
    struct sworn_dconfig_sockmode sm;

    /* No group: 0600, the one peer uid besides root owns it; all root: the monitor's. */
    c = socket_load(f, "{decision: d.sock, admin: a.sock}",
                    "{proxy_uids: [1001, 0], operator_uids: [0]}");
    assert_false(c->has_decision_group);
    assert_int_equal(sworn_dconfig_socket_mode(c, 0, 0, 0, &sm), 0);
    assert_int_equal(sm.owner, 1001);
    assert_int_equal(sm.group, 0);
    assert_int_equal(sm.mode, 0600);
    assert_int_equal(sworn_dconfig_socket_mode(c, 1, 0, 0, &sm), 0);
    assert_int_equal(sm.owner, 0);
    assert_int_equal(sm.mode, 0600);
    sworn_dconfig_free(c);
    /* A group by name and by number: 0660, root's, that group; its peers are members. */
    c = socket_load(f, "{decision: d.sock, admin: a.sock, decision_group: nogroup, admin_group: 0}",
                    "{proxy_uids: [nobody], operator_uids: [root]}");
    assert_true(c->has_decision_group && c->has_admin_group);
    assert_int_equal(c->decision_gid, 65534);
    assert_int_equal(c->admin_gid, 0);
    assert_int_equal(sworn_dconfig_socket_mode(c, 0, 0, 0, &sm), 0);
    assert_int_equal(sm.owner, 0);
    assert_int_equal(sm.group, 65534);
    assert_int_equal(sm.mode, 0660);
    assert_int_equal(sworn_dconfig_socket_mode(c, 1, 0, 0, &sm), 0);
    assert_int_equal(sm.group, 0);
    assert_int_equal(sm.mode, 0660);
    sworn_dconfig_free(c);
    /* Refused: two uids besides root on a 0600 socket; a peer outside the group; a group that
     * does not exist, is out of range, or empty. */
    socket_load_fails(f, "{decision: d.sock, admin: a.sock}",
                      "{proxy_uids: [1001, 1002], operator_uids: [0]}",
                      "peers.proxy_uids lists more than one uid other than root");
    socket_load_fails(f, "{decision: d.sock, admin: a.sock}",
                      "{proxy_uids: [0], operator_uids: [0, 1000, 1001]}",
                      "so set sockets.admin_group");
    socket_load_fails(f, "{decision: d.sock, admin: a.sock, decision_group: nogroup}",
                      "{proxy_uids: [daemon], operator_uids: [0]}",
                      "of peers.proxy_uids is not in sockets.decision_group");
    socket_load_fails(f, "{decision: d.sock, admin: a.sock, admin_group: nogroup}",
                      "{proxy_uids: [0], operator_uids: [4000000]}",
                      "of peers.operator_uids is not in sockets.admin_group");
    socket_load_fails(f, "{decision: d.sock, admin: a.sock, decision_group: no-such-group-sworn}",
                      "{proxy_uids: [0], operator_uids: [0]}", "decision_group: no such group");
    socket_load_fails(f, "{decision: d.sock, admin: a.sock, admin_group: 4294967295}",
                      "{proxy_uids: [0], operator_uids: [0]}", "outside");
    socket_load_fails(f, "{decision: d.sock, admin: a.sock, admin_group: \"\"}",
                      "{proxy_uids: [0], operator_uids: [0]}", "admin_group: empty group name");
    socket_load_fails(f, "{decision: d.sock, admin: a.sock, group: nogroup}",
                      "{proxy_uids: [0], operator_uids: [0]}", "group");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defaults_and_relative_config_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signer_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signer_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ak_handle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socket_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_witnesses, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
