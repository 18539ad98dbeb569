/*
 * test_witness.c -- sworn-witness (witness/, docs/witness.md), the real program driven over HTTP
 * by the real curl.
 *
 * test_tessera_sequence: tessera's testdata log (../shared/vectors; its verifier key read from
 *   the vectors' README.md), checkpoints 0 to 15 submitted in order, each with the consistency
 *   proof from the previous one computed by sworn's proof code over tessera's tiles (imported
 *   with sworn_tiledir_import); every answer is a cosignature that verifies with note.h (type
 *   0x04) and with the openssl command (Ed25519 over the message rebuilt here from the C2SP
 *   spec); a stale old size gets 409 with the latest size, a replay of the latest is cosigned
 *   again, and a step back is refused.
 * test_status_codes: a test log of its own (origin fork.test/log, an Ed25519 note key made
 *   here) and one signed by an ECDSA P-256 key (type 0x02): 404, 405, 400 for malformed bodies
 *   (nothing stored), 413 over the body limit, 404 for an unknown origin, 403 for an untrusted
 *   or a bad signature, 409 with the size, 422 for bad proofs, 409 for a fork (kept as evidence
 *   in the state), and 200 for the honest next checkpoint.
 * test_concurrent: the same old size sent at once by many curl processes to one witness, and
 *   to two witness processes that share a state file: exactly one 200.
 * test_crash_after_commit: the test build (sworn-witness-testfault) stops itself between the
 *   state's commit and the answer; the test sees the stop and kills it with SIGKILL, restarts the
 *   witness on the same state, and shows that the state holds the checkpoint, that forks (same
 *   size, and a larger size with a proof from the other branch) are refused, and that the
 *   honest next checkpoint is cosigned.
 * test_rate_limit: a client over its token bucket gets 429.
 * test_config_and_key: --check, --print-vkey, configuration errors with file:line:col, a key
 *   file readable by others and a P-256 key refused; signer purpose 6's form.
 * test_pkcs11_key: the witness key on a SoftHSMv2 token (CKM_EDDSA), pinned by its SPKI.
 *
 * Every cosignature is checked three ways: transparency-log/note.h (type 0x04), sworn-verify's
 * own note code (verifier/sv_note.h, written apart from it), and the openssl command over the
 * message rebuilt here from the spec. No independent tlog-witness implementation (Go's
 * sumdb/note or torchwood, litewitness, an npm package) is available offline on this machine.
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "checkpoint.h"
#include "encoding.h"
#include "err.h"
#include "logstore.h"
#include "merkle.h"
#include "note.h"
#include "notesign.h"
#include "proof.h"
#include "sigscheme.h"
#include "softhsm_fixture.h"
#include "sv_note.h"
#include "testutil.h"
#include "tiledir.h"
#include "w_state.h"
#include "witness_fixture.h"

#define TESSERA_ORIGIN "example.com/log/testdata"
#define TEST_ORIGIN "fork.test/log"
#define P256_ORIGIN "p256.test/log"
#define WITNESS_NAME "witness.test/w1"
#define WAIT_MS 60000
#define NOTE_CAP 8192

struct wfix {
    char *dir;
    char *wkey;   /* the witness's key file */
    char *conf;   /* its configuration */
    char *state;  /* its state database */
    char *errlog; /* the stderr of the latest start */
    pid_t pid;
    int port;
    int starts;
    /* every witness process started and not yet waited for: teardown kills what a failed test
     * left running (a live witness would hold ctest's output open until its timeout) */
    pid_t children[8];
    size_t nchildren;
    char wvkey[SWORN_NOTE_VKEY_MAX + 1];
    struct sworn_note_verifier wv;
    /* the test log: an honest one and a fork of it, same origin and key */
    struct sworn_note_signer tsig;
    char tvkey[SWORN_NOTE_VKEY_MAX + 1];
    struct sworn_log *honest, *fork;
    /* the P-256 log */
    struct sworn_note_signer psig;
    char pvkey[SWORN_NOTE_VKEY_MAX + 1];
};

/* --- the tessera vectors ------------------------------------------------------------------- */

static char *tessera_dir(void)
{
    return sworn_test_path(sworn_test_vectors(), "tessera-testdata/testdata/log");
}

/* tessera's verifier key, as the vectors' README.md gives it (never copied into the project). */
static void tessera_vkey(char *out, size_t cap)
{
    char *readme = sworn_test_path(sworn_test_vectors(), "README.md");
    char *text = sworn_test_read_file(readme, NULL);
    const char *p = strstr(text, "`" TESSERA_ORIGIN "+");
    const char *end = NULL;

    if (p == NULL || (end = strchr(p + 1, '`')) == NULL || (size_t)(end - p - 1) >= cap)
        fail_msg("no verifier key for %s in %s", TESSERA_ORIGIN, readme);
    memcpy(out, p + 1, (size_t)(end - p - 1));
    out[end - p - 1] = '\0';
    free(text);
    free(readme);
}

/* --- the witness process ------------------------------------------------------------------- */

static void write_config(struct wfix *f, const char *key_block, const char *limits)
{
    char tv[SWORN_NOTE_VKEY_MAX + 1];
    char *text = NULL;

    tessera_vkey(tv, sizeof(tv));
    if (asprintf(&text,
                 "listen: 127.0.0.1:0\n"
                 "state: state.db\n"
                 "%s"
                 "%s"
                 "logs:\n"
                 "  - origin: " TESSERA_ORIGIN "\n"
                 "    keys: [\"%s\"]\n"
                 "  - origin: " TEST_ORIGIN "\n"
                 "    keys: [\"%s\"]\n"
                 "  - origin: " P256_ORIGIN "\n"
                 "    keys: [\"%s\"]\n",
                 key_block != NULL ? key_block
                                   : "key:\n  uri: file:witness.pem\n  name: " WITNESS_NAME "\n",
                 limits != NULL ? limits : "", tv, f->tvkey, f->pvkey) < 0)
        fail_msg("asprintf");
    sworn_test_write_file(f->conf, text, strlen(text), 0644);
    free(text);
}

static int setup(void **state)
{
    struct wfix *f = calloc(1, sizeof(*f));
    char *path, *tvkey_path, *pem;
    struct sworn_test_run r = {0};

    assert_non_null(f);
    f->dir = sworn_test_tmpdir("witness");
    f->wkey = sworn_test_path(f->dir, "witness.pem");
    f->conf = sworn_test_path(f->dir, "witness.yaml");
    f->state = sworn_test_path(f->dir, "state.db");
    sworn_test_run_ok("openssl genpkey ed25519", NULL, "openssl", "genpkey", "-algorithm",
                      "ed25519", "-out", f->wkey, NULL);
    assert_int_equal(chmod(f->wkey, 0600), 0);

    /* The test log's Ed25519 note key, and two logs of that origin that differ from entry 0. */
    tvkey_path = sworn_test_path(f->dir, "test.key");
    if (sworn_note_keygen_ed25519(TEST_ORIGIN, tvkey_path, f->tvkey, sizeof(f->tvkey)) < 0 ||
        sworn_note_signer_open_file(tvkey_path, NULL, &f->tsig) < 0)
        fail_msg("test key: %s", sworn_err_msg());
    free(tvkey_path);
    path = sworn_test_path(f->dir, "honest.db");
    assert_int_equal(sworn_log_create(path, TEST_ORIGIN, &f->honest), 0);
    free(path);
    path = sworn_test_path(f->dir, "fork.db");
    assert_int_equal(sworn_log_create(path, TEST_ORIGIN, &f->fork), 0);
    free(path);
    for (uint64_t i = 0; i < 8; i++) {
        char e[32];

        snprintf(e, sizeof(e), "honest %llu", (unsigned long long)i);
        sworn_test_append(f->honest, e, strlen(e), i);
        snprintf(e, sizeof(e), "fork %llu", (unsigned long long)i);
        sworn_test_append(f->fork, e, strlen(e), i);
    }
    assert_int_equal(sworn_log_integrate(f->honest, NULL), 0);
    assert_int_equal(sworn_log_integrate(f->fork, NULL), 0);

    /* The P-256 log's key (note type 0x02). */
    pem = sworn_test_path(f->dir, "p256.pem");
    sworn_test_run_ok("openssl genpkey p256", NULL, "openssl", "genpkey", "-algorithm", "EC",
                      "-pkeyopt", "ec_paramgen_curve:P-256", "-out", pem, NULL);
    assert_int_equal(chmod(pem, 0600), 0);
    if (sworn_note_signer_open_file(pem, P256_ORIGIN, &f->psig) < 0 ||
        sworn_note_verifier_format(&f->psig.pub, f->pvkey, sizeof(f->pvkey)) < 0)
        fail_msg("p256 key: %s", sworn_err_msg());
    free(pem);

    write_config(f, NULL, NULL);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_WITNESS_BIN"), "--config", f->conf,
                    "--print-vkey", NULL);
    sworn_test_run_must(&r, "sworn-witness --print-vkey");
    if (r.out_len < 2 || r.out[r.out_len - 1] != '\n' ||
        sworn_note_verifier_parse(r.out, r.out_len - 1, &f->wv) < 0)
        fail_msg("--print-vkey printed %s", r.out);
    memcpy(f->wvkey, r.out, r.out_len - 1);
    sworn_test_run_free(&r);
    assert_int_equal(f->wv.alg, SWORN_NOTE_ALG_COSIGNATURE_V1);
    assert_string_equal(f->wv.name, WITNESS_NAME);
    *state = f;
    return 0;
}

static void stop_witness(struct wfix *f);

static int teardown(void **state)
{
    struct wfix *f = *state;

    if (f->pid > 0)
        stop_witness(f);
    for (size_t i = 0; i < f->nchildren; i++) {
        kill(f->children[i], SIGKILL);
        waitpid(f->children[i], NULL, 0);
    }
    sworn_log_close(f->honest);
    sworn_log_close(f->fork);
    sworn_note_signer_close(&f->tsig);
    sworn_note_signer_close(&f->psig);
    free(f->wkey);
    free(f->conf);
    free(f->state);
    free(f->errlog);
    sworn_test_tmpdir_drop(&f->dir);
    free(f);
    return 0;
}

/* The descriptor limit of the next witness started (0: inherited). */
static rlim_t child_nofile;

/* Start bin (the witness, or its fault build with fault armed) on f's configuration and wait
 * for its "listening" line. Returns the pid. */
static pid_t start_bin(struct wfix *f, const char *bin, const char *fault, char **log_out,
                       int *port)
{
    char name[32];
    char *log;
    pid_t pid;

    snprintf(name, sizeof(name), "witness-%d.log", ++f->starts);
    log = sworn_test_path(f->dir, name);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        if (fd < 0 || dup2(fd, 2) < 0 || dup2(fd, 1) < 0)
            _exit(126);
        if (child_nofile != 0) {
            struct rlimit rl = {.rlim_cur = child_nofile, .rlim_max = child_nofile};

            if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                _exit(125);
        }
        if (fault != NULL)
            setenv("SWORN_WITNESS_FAULT", fault, 1);
        else
            unsetenv("SWORN_WITNESS_FAULT");
        execl(bin, bin, "--config", f->conf, (char *)NULL);
        _exit(127);
    }
    assert_true(f->nchildren < sizeof(f->children) / sizeof(f->children[0]));
    f->children[f->nchildren++] = pid;
    if (sworn_test_wait_file_has(log, "\"event\":\"listening\"", WAIT_MS) < 0) {
        char *text = sworn_test_read_file_opt(log, NULL);

        /* teardown kills it (it is in f->children) */
        fail_msg("the witness did not start: %s", text != NULL ? text : "(no log)");
    }
    *port = sworn_wfx_listening_port(log);
    assert_true(*port > 0);
    *log_out = log;
    return pid;
}

static void start_witness(struct wfix *f, const char *fault)
{
    const char *bin =
        sworn_test_bin(fault != NULL ? "SWORN_WITNESS_TESTFAULT_BIN" : "SWORN_WITNESS_BIN");

    free(f->errlog);
    f->errlog = NULL;
    f->pid = start_bin(f, bin, fault, &f->errlog, &f->port);
}

/* pid was waited for: teardown must not signal it (the number may be reused). */
static void forget_child(struct wfix *f, pid_t pid)
{
    for (size_t i = 0; i < f->nchildren; i++)
        if (f->children[i] == pid) {
            f->children[i] = f->children[--f->nchildren];
            return;
        }
}

/* SIGTERM and a clean exit (status 0, no sanitizer report in its log). */
static void stop_pid(struct wfix *f, pid_t pid, const char *log)
{
    int st = 0;
    char *text;

    assert_int_equal(kill(pid, SIGTERM), 0);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    forget_child(f, pid);
    text = sworn_test_read_file_opt(log, NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        (text != NULL && strstr(text, "Sanitizer") != NULL))
        fail_msg("the witness ended badly (%d): %s", st, text != NULL ? text : "");
    free(text);
}

static void stop_witness(struct wfix *f)
{
    pid_t pid = f->pid;

    f->pid = 0;
    stop_pid(f, pid, f->errlog);
}

/* --- requests ------------------------------------------------------------------------------- */

struct answer {
    int status;
    char *body; /* NUL-terminated */
    size_t body_len;
    char ctype[128];
};

static void answer_free(struct answer *a)
{
    free(a->body);
    memset(a, 0, sizeof(*a));
}

/* Write a request body: "old N\n", the proof, "\n", the note. Returns the file's path. */
static char *body_file(struct wfix *f, const char *tag, uint64_t old, const uint8_t *proof,
                       size_t count, const char *note, size_t note_len)
{
    char name[64], text[SWORN_PROOF_TEXT_LEN(SWORN_MERKLE_MAX_PROOF) + 1];
    char *path, *buf;
    size_t len = 0, cap = 64 + sizeof(text) + note_len;
    long n;

    snprintf(name, sizeof(name), "body-%s", tag);
    path = sworn_test_path(f->dir, name);
    buf = malloc(cap);
    assert_non_null(buf);
    len = (size_t)snprintf(buf, cap, "old %llu\n", (unsigned long long)old);
    n = sworn_proof_format(proof, count, text, sizeof(text));
    assert_true(n >= 0);
    memcpy(buf + len, text, (size_t)n);
    len += (size_t)n;
    buf[len++] = '\n';
    memcpy(buf + len, note, note_len);
    len += note_len;
    sworn_test_write_file(path, buf, len, 0600);
    free(buf);
    return path;
}

/* The argv of one curl POST of file to port (GET when file is NULL); outputs under f->dir. */
static void curl_argv(struct wfix *f, int port, const char *file, const char *tag, const char *path,
                      char **out, char **hdr, const char **argv, char *url, size_t url_cap)
{
    char name[64];
    int i = 0;

    snprintf(name, sizeof(name), "resp-%s", tag);
    *out = sworn_test_path(f->dir, name);
    snprintf(name, sizeof(name), "hdr-%s", tag);
    *hdr = sworn_test_path(f->dir, name);
    snprintf(url, url_cap, "http://127.0.0.1:%d%s", port, path);
    argv[i++] = "curl";
    argv[i++] = "-sS";
    argv[i++] = "-H";
    argv[i++] = "Expect:"; /* no 100-continue round: one request, one answer */
    argv[i++] = "-o";
    argv[i++] = *out;
    argv[i++] = "-D";
    argv[i++] = *hdr;
    argv[i++] = "-w";
    argv[i++] = "%{http_code}";
    if (file != NULL) {
        static char data[4200];

        snprintf(data, sizeof(data), "@%s", file);
        argv[i++] = "--data-binary";
        argv[i++] = data;
    }
    argv[i++] = url;
    argv[i] = NULL;
}

static void read_answer(const char *out, const char *hdr, int status, struct answer *a)
{
    char *h = sworn_test_read_file_opt(hdr, NULL);
    const char *ct;

    memset(a, 0, sizeof(*a));
    a->status = status;
    a->body = sworn_test_read_file_opt(out, &a->body_len);
    if (a->body == NULL)
        a->body = strdup("");
    ct = h != NULL ? strcasestr(h, "\r\nContent-Type: ") : NULL;
    if (ct != NULL) {
        ct += 16;
        snprintf(a->ctype, sizeof(a->ctype), "%.*s", (int)strcspn(ct, "\r\n"), ct);
    }
    free(h);
}

/* POST file (GET when NULL) to path on port with curl, and read the answer. */
static void request(struct wfix *f, int port, const char *method_path, const char *file,
                    struct answer *a)
{
    const char *argv[16];
    char url[128];
    char *out, *hdr;
    struct sworn_test_run r = {0};

    curl_argv(f, port, file, "sync", method_path, &out, &hdr, argv, url, sizeof(url));
    unlink(out);
    unlink(hdr);
    sworn_test_run(argv, NULL, &r);
    sworn_test_run_must(&r, "curl");
    read_answer(out, hdr, atoi(r.out), a);
    sworn_test_run_free(&r);
    free(out);
    free(hdr);
}

static void post(struct wfix *f, const char *file, struct answer *a)
{
    request(f, f->port, "/add-checkpoint", file, a);
}

/* Post a body and expect a status; for 409, the body "<latest>\n" as text/x.tlog.size. */
static void expect(struct wfix *f, const char *file, int status, uint64_t latest, const char *what)
{
    struct answer a;

    post(f, file, &a);
    if (a.status != status)
        fail_msg("%s: status %d, want %d (%s)", what, a.status, status, a.body);
    if (status == 409) {
        char want[32];

        snprintf(want, sizeof(want), "%llu\n", (unsigned long long)latest);
        assert_string_equal(a.body, want);
        assert_string_equal(a.ctype, "text/x.tlog.size");
    }
    answer_free(&a);
}

/* --- checkpoints of the test logs ------------------------------------------------------------ */

/* A checkpoint note of log at size, signed by signer (whatever the log's origin: origin). */
static size_t sign_checkpoint(struct sworn_log *log, const char *origin, uint64_t size,
                              struct sworn_note_signer *signer, char *note)
{
    uint8_t root[SWORN_HASH_LEN];
    char body[SWORN_CHECKPOINT_BODY_MAX + 1];
    struct sworn_note_signer *signers[1] = {signer};
    long n;
    size_t len = 0;

    if (size == 0)
        sworn_merkle_empty_root(root);
    else
        assert_int_equal(sworn_log_root(log, size, root), 0);
    n = sworn_checkpoint_format(origin, size, root, body, sizeof(body));
    assert_true(n > 0);
    if (sworn_note_sign(body, (size_t)n, signers, 1, note, NOTE_CAP, &len) < 0)
        fail_msg("sign: %s", sworn_err_msg());
    return len;
}

/* A body for log's checkpoint of size from old (with log's own proof). */
static char *log_body(struct wfix *f, struct sworn_log *log, const char *tag, uint64_t old,
                      uint64_t size)
{
    uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    size_t count = 0, len;
    char note[NOTE_CAP];

    if (old > 0 && old < size)
        assert_int_equal(
            sworn_log_prove_consistency(log, old, size, proof, SWORN_MERKLE_MAX_PROOF, &count), 0);
    len = sign_checkpoint(log, TEST_ORIGIN, size, &f->tsig, note);
    return body_file(f, tag, old, proof, count, note, len);
}

/* --- checking a cosignature ----------------------------------------------------------------- */

/*
 * Check that line (the 200 body) is the witness's cosignature of the checkpoint note `note`:
 * with note.h, and with the openssl command over the message rebuilt from the C2SP spec.
 */
static void check_cosignature(struct wfix *f, const char *note, size_t note_len, const char *line,
                              size_t line_len, const struct sworn_note_verifier *log_key,
                              uint64_t t0)
{
    char *both = malloc(note_len + line_len + 1);
    struct sworn_note parsed;
    struct sworn_note_verifier keys[2] = {*log_key, f->wv};
    uint8_t by[2] = {0};
    uint64_t times[2] = {0};
    size_t count = 0, text_len, got = 0;
    const char *sp, *split;
    uint8_t raw[76],
        pub_der[44] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
    char *msg_path, *sig_path, *pub_path, *msg;
    uint64_t t = 0;
    int mlen;

    assert_non_null(both);
    /* The line: "\u2014 <name> <base64>\n". */
    assert_true(line_len > 5 && line[line_len - 1] == '\n');
    assert_memory_equal(line, "\xe2\x80\x94 " WITNESS_NAME " ", strlen(WITNESS_NAME) + 5);
    sp = line + strlen(WITNESS_NAME) + 5;
    assert_int_equal(
        sworn_base64_decode(sp, (size_t)(line + line_len - 1 - sp), raw, sizeof(raw), &got), 0);
    assert_int_equal(got, 76);
    /* note.h's verification of the note with the cosignature line appended. */
    memcpy(both, note, note_len);
    memcpy(both + note_len, line, line_len);
    if (sworn_note_parse(both, note_len + line_len, &parsed) < 0 ||
        sworn_note_verify(&parsed, keys, 2, &count, by, times) < 0)
        fail_msg("the cosigned note does not verify: %s", sworn_err_msg());
    assert_int_equal(by[0], 1);
    assert_int_equal(by[1], 1);
    for (int i = 0; i < 8; i++)
        t = t << 8 | raw[4 + i];
    assert_int_equal(times[1], t);
    assert_true(t >= t0 && t <= (uint64_t)time(NULL));
    assert_int_equal(parsed.text_len, (size_t)(strstr(note, "\n\n") - note) + 1);
    /* sworn-verify's own note code (verifier/, written apart from transparency-log/). */
    {
        static struct sv_note svn;
        struct sv_vkey wk;
        static struct sv_note_result res;
        char why[512] = "";

        memset(&res, 0, sizeof(res));
        if (sv_vkey_parse(f->wvkey, strlen(f->wvkey), &wk, why) < 0 ||
            sv_note_parse(both, note_len + line_len, &svn, why) < 0 ||
            sv_note_verify(&svn, &wk, 1, &res, why) < 0)
            fail_msg("sworn-verify's note code refuses the cosignature: %s", why);
        assert_int_equal(res.verified[0], 1);
        assert_int_equal(res.cosig_time[0], t);
        sv_vkey_free(&wk);
    }
    /* openssl: Ed25519 over "cosignature/v1\ntime <t>\n" || text, with the key of the vkey. */
    split = strstr(note, "\n\n");
    text_len = (size_t)(split - note) + 1;
    msg = malloc(text_len + 64);
    assert_non_null(msg);
    mlen = snprintf(msg, 64, "cosignature/v1\ntime %llu\n", (unsigned long long)t);
    memcpy(msg + mlen, note, text_len);
    msg_path = sworn_test_path(f->dir, "cosig.msg");
    sig_path = sworn_test_path(f->dir, "cosig.sig");
    pub_path = sworn_test_path(f->dir, "cosig.pub");
    sworn_test_write_file(msg_path, msg, (size_t)mlen + text_len, 0600);
    sworn_test_write_file(sig_path, raw + 12, 64, 0600);
    memcpy(pub_der + 12, f->wv.key, 32);
    sworn_test_write_file(pub_path, pub_der, sizeof(pub_der), 0600);
    sworn_test_run_ok("openssl pkeyutl -verify of the cosignature", NULL, "openssl", "pkeyutl",
                      "-verify", "-pubin", "-keyform", "DER", "-inkey", pub_path, "-rawin", "-in",
                      msg_path, "-sigfile", sig_path, NULL);
    free(msg);
    free(msg_path);
    free(sig_path);
    free(pub_path);
    free(both);
}

/* --- the tests -------------------------------------------------------------------------------- */

static void test_tessera_sequence(void **state)
{
    struct wfix *f = *state;
    char *vectors = tessera_dir(), *db = sworn_test_path(f->dir, "tessera.db");
    char vkey_text[SWORN_NOTE_VKEY_MAX + 1];
    struct sworn_note_verifier tv;
    struct sworn_log *tlog = NULL;
    uint64_t prev = 0, t0 = (uint64_t)time(NULL);
    char *body;
    struct answer a;

    tessera_vkey(vkey_text, sizeof(vkey_text));
    assert_int_equal(sworn_note_verifier_parse(vkey_text, strlen(vkey_text), &tv), 0);
    if (sworn_tiledir_import(vectors, &tv, 1, db, &tlog) < 0)
        fail_msg("import tessera: %s", sworn_err_msg());
    start_witness(f, NULL);
    for (uint64_t n = 0; n <= 15; n++) {
        char name[32], *path, *note;
        uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
        size_t count = 0, note_len;

        snprintf(name, sizeof(name), "checkpoint.%llu", (unsigned long long)n);
        path = sworn_test_path(vectors, name);
        note = sworn_test_read_file(path, &note_len);
        if (prev > 0 && prev < n)
            assert_int_equal(
                sworn_log_prove_consistency(tlog, prev, n, proof, SWORN_MERKLE_MAX_PROOF, &count),
                0);
        body = body_file(f, "tessera", prev, proof, count, note, note_len);
        post(f, body, &a);
        if (a.status != 200)
            fail_msg("checkpoint.%llu from %llu: %d %s", (unsigned long long)n,
                     (unsigned long long)prev, a.status, a.body);
        assert_string_equal(a.ctype, "text/plain; charset=utf-8");
        check_cosignature(f, note, note_len, a.body, a.body_len, &tv, t0);
        answer_free(&a);
        free(body);
        /* Sizes 0..3 one by one, then in steps, so that proofs of several shapes are used. */
        prev = n;
        if (n >= 3 && n < 15)
            n += n % 3;
        free(note);
        free(path);
    }
    assert_int_equal(prev, 15);
    {
        char *path = sworn_test_path(vectors, "checkpoint.15"), *p10;
        size_t len, len10;
        char *note = sworn_test_read_file(path, &len), *note10;

        /* A stale old size: 409 with the latest. */
        body = body_file(f, "stale", 14, NULL, 0, note, len);
        expect(f, body, 409, 15, "stale old size");
        free(body);
        /* The latest again: cosigned again. */
        body = body_file(f, "again", 15, NULL, 0, note, len);
        post(f, body, &a);
        assert_int_equal(a.status, 200);
        check_cosignature(f, note, len, a.body, a.body_len, &tv, t0);
        answer_free(&a);
        free(body);
        /* A step back (old past the checkpoint's size): 400. */
        p10 = sworn_test_path(vectors, "checkpoint.10");
        note10 = sworn_test_read_file(p10, &len10);
        body = body_file(f, "back", 15, NULL, 0, note10, len10);
        expect(f, body, 400, 0, "a step back");
        free(body);
        free(note10);
        free(p10);
        free(note);
        free(path);
    }
    assert_true(sworn_test_file_has_line(f->errlog, "\"outcome\":\"cosigned\""));
    assert_true(sworn_test_file_has_line(f->errlog, "\"origin\":\"" TESSERA_ORIGIN "\""));
    stop_witness(f);
    sworn_log_close(tlog);
    free(db);
    free(vectors);
}

/* The number of rows of the state's table for origin. */
static int state_rows(struct wfix *f, const char *table, const char *origin)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char sql[128];
    int n = -1;

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE origin = ?1", table);
    assert_int_equal(sqlite3_open_v2(f->state, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, origin, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static void test_status_codes(void **state)
{
    struct wfix *f = *state;
    static const char *const malformed[] = {
        "",
        "old 0\n",
        "old 0\n\n",
        "old -1\n\nx\n",
        "old 00\n\nfork.test/log\n",
        "OLD 0\n\nfork.test/log\n",
        "old 0\r\n\r\nfork.test/log\n",
        "old 1\nAAAA\n\nfork.test/log\n",
        "old 0\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\nfork.test/log\n",
        "old 0\n\nfork.test/log\n3\nnot base64\n\n\xe2\x80\x94 fork.test/log AAAA\n",
        "old 0\n\nno signature lines\n",
    };
    char note[NOTE_CAP], *body, other_key[SWORN_NOTE_VKEY_MAX + 1];
    struct sworn_note_signer other;
    struct answer a;
    size_t len;
    uint64_t t0 = (uint64_t)time(NULL);

    write_config(f, NULL, "limits:\n  body_bytes: 4096\n");
    start_witness(f, NULL);
    request(f, f->port, "/", NULL, &a);
    assert_int_equal(a.status, 404);
    answer_free(&a);
    request(f, f->port, "/add-checkpoint", NULL, &a);
    assert_int_equal(a.status, 405);
    answer_free(&a);

    for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
        char *path = sworn_test_path(f->dir, "malformed");

        sworn_test_write_file(path, malformed[i], strlen(malformed[i]), 0600);
        post(f, path, &a);
        if (a.status != 400)
            fail_msg("malformed body %zu: %d %s", i, a.status, a.body);
        answer_free(&a);
        free(path);
    }
    /* Over the body limit: 413, before any parsing. */
    {
        char *big = malloc(5000), *path = sworn_test_path(f->dir, "big");

        memset(big, 'a', 5000);
        memcpy(big, "old 0\n\n", 7);
        sworn_test_write_file(path, big, 5000, 0600);
        post(f, path, &a);
        assert_int_equal(a.status, 413);
        answer_free(&a);
        free(big);
        free(path);
    }
    assert_int_equal(state_rows(f, "latest", TEST_ORIGIN), 0);

    /* An unknown origin: 404. */
    len = sign_checkpoint(f->honest, "unknown.test/log", 3, &f->tsig, note);
    body = body_file(f, "unknown", 0, NULL, 0, note, len);
    expect(f, body, 404, 0, "unknown origin");
    free(body);
    /* Signed by a key the witness does not trust for this origin (same name, other key): 403. */
    {
        char *k = sworn_test_path(f->dir, "other.key");

        if (sworn_note_keygen_ed25519(TEST_ORIGIN, k, other_key, sizeof(other_key)) < 0 ||
            sworn_note_signer_open_file(k, NULL, &other) < 0)
            fail_msg("other key: %s", sworn_err_msg());
        free(k);
    }
    len = sign_checkpoint(f->honest, TEST_ORIGIN, 3, &other, note);
    body = body_file(f, "untrusted", 0, NULL, 0, note, len);
    expect(f, body, 403, 0, "untrusted key");
    free(body);
    sworn_note_signer_close(&other);
    /* The trusted key's signature, damaged: 403. */
    len = sign_checkpoint(f->honest, TEST_ORIGIN, 3, &f->tsig, note);
    /* A character in the middle of the base64 (the last ones carry padding bits). */
    note[len - 20] = note[len - 20] == 'A' ? 'B' : 'A';
    body = body_file(f, "badsig", 0, NULL, 0, note, len);
    expect(f, body, 403, 0, "damaged signature");
    free(body);
    /* A size-0 checkpoint with another root than the empty tree's: 400. */
    {
        uint8_t root[SWORN_HASH_LEN];
        char text[SWORN_CHECKPOINT_BODY_MAX + 1];
        struct sworn_note_signer *signers[1] = {&f->tsig};
        long n;

        memset(root, 0x5a, sizeof(root));
        n = sworn_checkpoint_format(TEST_ORIGIN, 0, root, text, sizeof(text));
        assert_true(n > 0);
        assert_int_equal(sworn_note_sign(text, (size_t)n, signers, 1, note, NOTE_CAP, &len), 0);
        body = body_file(f, "zero", 0, NULL, 0, note, len);
        expect(f, body, 400, 0, "size 0 with a non-empty root");
        free(body);
    }
    assert_int_equal(state_rows(f, "latest", TEST_ORIGIN), 0);

    /* The honest first checkpoint: 200. */
    body = log_body(f, f->honest, "h3", 0, 3);
    post(f, body, &a);
    assert_int_equal(a.status, 200);
    len = sign_checkpoint(f->honest, TEST_ORIGIN, 3, &f->tsig, note);
    check_cosignature(f, note, len, a.body, a.body_len, &f->tsig.pub, t0);
    answer_free(&a);
    /* The same request again: old 0 is no longer the latest size: 409 "3". */
    expect(f, body, 409, 3, "old 0 after 3");
    free(body);
    /* old past the checkpoint: 400. */
    body = log_body(f, f->honest, "h2", 3, 2);
    expect(f, body, 400, 0, "old past the size");
    free(body);
    /* A proof one hash short, a damaged proof, the proof of other sizes: 422. */
    {
        uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
        size_t count = 0;

        assert_int_equal(
            sworn_log_prove_consistency(f->honest, 3, 5, proof, SWORN_MERKLE_MAX_PROOF, &count), 0);
        len = sign_checkpoint(f->honest, TEST_ORIGIN, 5, &f->tsig, note);
        body = body_file(f, "short", 3, proof, count - 1, note, len);
        expect(f, body, 422, 0, "proof one hash short");
        free(body);
        proof[0] ^= 1;
        body = body_file(f, "flipped", 3, proof, count, note, len);
        expect(f, body, 422, 0, "damaged proof");
        free(body);
        assert_int_equal(
            sworn_log_prove_consistency(f->honest, 2, 5, proof, SWORN_MERKLE_MAX_PROOF, &count), 0);
        body = body_file(f, "other", 3, proof, count, note, len);
        expect(f, body, 422, 0, "proof of other sizes");
        free(body);
        /* old == size with proof lines: 422. */
        len = sign_checkpoint(f->honest, TEST_ORIGIN, 3, &f->tsig, note);
        body = body_file(f, "samesize", 3, proof, 1, note, len);
        expect(f, body, 422, 0, "proof lines between equal sizes");
        free(body);
    }
    /* A fork: the same size, another root, validly signed: 409, and kept as evidence. */
    len = sign_checkpoint(f->fork, TEST_ORIGIN, 3, &f->tsig, note);
    body = body_file(f, "fork3", 3, NULL, 0, note, len);
    expect(f, body, 409, 3, "a fork at the same size");
    free(body);
    assert_true(sworn_test_file_has_line(f->errlog, "\"outcome\":\"fork\""));
    assert_int_equal(state_rows(f, "forks", TEST_ORIGIN), 1);
    /* The honest next checkpoint: 200. */
    body = log_body(f, f->honest, "h5", 3, 5);
    expect(f, body, 200, 0, "honest 3 -> 5");
    free(body);
    /* A log signing with ECDSA P-256 (type 0x02): 200. */
    len = sign_checkpoint(f->honest, P256_ORIGIN, 4, &f->psig, note);
    body = body_file(f, "p256", 0, NULL, 0, note, len);
    post(f, body, &a);
    assert_int_equal(a.status, 200);
    check_cosignature(f, note, len, a.body, a.body_len, &f->psig.pub, t0);
    answer_free(&a);
    free(body);
    stop_witness(f);
}

/* Start curl in the background: POST file to port; its answer in resp-<tag>/hdr-<tag>. */
static pid_t curl_async(struct wfix *f, int port, const char *file, const char *tag)
{
    const char *argv[16];
    char url[128];
    char *out, *hdr, *status;
    pid_t pid;
    char name[64];

    curl_argv(f, port, file, tag, "/add-checkpoint", &out, &hdr, argv, url, sizeof(url));
    snprintf(name, sizeof(name), "status-%s", tag);
    status = sworn_test_path(f->dir, name);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(status, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        if (fd < 0 || dup2(fd, 1) < 0)
            _exit(126);
        execvp("curl", (char *const *)argv);
        _exit(127);
    }
    free(out);
    free(hdr);
    free(status);
    return pid;
}

static int curl_status(struct wfix *f, const char *tag)
{
    char name[64], *path, *text;
    int st;

    snprintf(name, sizeof(name), "status-%s", tag);
    path = sworn_test_path(f->dir, name);
    text = sworn_test_read_file(path, NULL);
    st = atoi(text);
    free(text);
    free(path);
    return st;
}

static void test_concurrent(void **state)
{
    struct wfix *f = *state;
    enum { N = 8 };
    pid_t pids[N];
    char *body, *log2 = NULL;
    int port2 = 0, ok = 0, conflict = 0;
    pid_t w2;

    start_witness(f, NULL);
    /* A second witness process on the same state file. */
    w2 = start_bin(f, sworn_test_bin("SWORN_WITNESS_BIN"), NULL, &log2, &port2);
    body = log_body(f, f->honest, "c3", 0, 3);
    for (int i = 0; i < N; i++) {
        char tag[16];

        snprintf(tag, sizeof(tag), "c%d", i);
        pids[i] = curl_async(f, i % 2 == 0 ? f->port : port2, body, tag);
    }
    for (int i = 0; i < N; i++) {
        char tag[16];
        int st = 0, code;

        assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        snprintf(tag, sizeof(tag), "c%d", i);
        code = curl_status(f, tag);
        if (code == 200)
            ok++;
        else if (code == 409)
            conflict++;
        else
            fail_msg("concurrent request %d: status %d", i, code);
    }
    assert_int_equal(ok, 1);
    assert_int_equal(conflict, N - 1);
    free(body);
    stop_pid(f, w2, log2);
    free(log2);
    stop_witness(f);
}

static void test_crash_after_commit(void **state)
{
    struct wfix *f = *state;
    char *body, note[NOTE_CAP];
    pid_t curl;
    int st = 0;
    size_t len;

    /* The fault build stops itself after the commit of old 0 -> 3, before answering. */
    start_witness(f, "after-commit");
    body = log_body(f, f->honest, "k3", 0, 3);
    curl = curl_async(f, f->port, body, "k3");
    assert_int_equal(waitpid(f->pid, &st, WUNTRACED), f->pid);
    assert_true(WIFSTOPPED(st));
    assert_int_equal(kill(f->pid, SIGKILL), 0);
    assert_int_equal(waitpid(f->pid, &st, 0), f->pid);
    forget_child(f, f->pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    f->pid = 0;
    /* curl got no answer (the connection was closed without one). */
    assert_int_equal(waitpid(curl, &st, 0), curl);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);

    start_witness(f, NULL);
    /* The state holds size 3, though nobody saw its cosignature. */
    expect(f, body, 409, 3, "old 0 after the crash");
    free(body);
    /* A fork at the same size: refused. */
    len = sign_checkpoint(f->fork, TEST_ORIGIN, 3, &f->tsig, note);
    body = body_file(f, "kfork3", 3, NULL, 0, note, len);
    expect(f, body, 409, 3, "a fork at size 3 after the crash");
    free(body);
    /* A fork at a larger size, with the fork's own proof from 3: it does not join the stored
     * root, so 422. */
    {
        uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
        size_t count = 0;

        assert_int_equal(
            sworn_log_prove_consistency(f->fork, 3, 6, proof, SWORN_MERKLE_MAX_PROOF, &count), 0);
        len = sign_checkpoint(f->fork, TEST_ORIGIN, 6, &f->tsig, note);
        body = body_file(f, "kfork6", 3, proof, count, note, len);
        expect(f, body, 422, 0, "a fork at size 6 after the crash");
        free(body);
    }
    /* The honest next checkpoint: 200. */
    body = log_body(f, f->honest, "k6", 3, 6);
    expect(f, body, 200, 0, "honest 3 -> 6 after the crash");
    free(body);
    stop_witness(f);
}

static void test_rate_limit(void **state)
{
    struct wfix *f = *state;
    struct sworn_test_run r = {0};
    char url[128], *path = sworn_test_path(f->dir, "tiny"), data[4200];
    const char *argv[64];
    int i = 0;

    write_config(f, NULL, "limits:\n  requests_per_second: 1\n  burst: 1\n");
    start_witness(f, NULL);
    sworn_test_write_file(path, "x", 1, 0600);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/add-checkpoint", f->port);
    snprintf(data, sizeof(data), "@%s", path);
    argv[i++] = "curl";
    argv[i++] = "-sS";
    argv[i++] = "--data-binary";
    argv[i++] = data;
    argv[i++] = "-w";
    argv[i++] = " %{http_code}\n";
    /* Twenty requests from one client on one connection: at most a few fit the bucket. */
    for (int k = 0; k < 20; k++)
        argv[i++] = url;
    argv[i] = NULL;
    sworn_test_run(argv, NULL, &r);
    sworn_test_run_must(&r, "curl");
    if (strstr(r.out, "too many requests\n 429") == NULL)
        fail_msg("no 429 among: %s", r.out);
    assert_non_null(strstr(r.out, " 400"));
    sworn_test_run_free(&r);
    assert_true(sworn_test_file_has_line(f->errlog, "\"outcome\":\"rate-limited\""));
    stop_witness(f);
    free(path);
}

/* sworn-witness --check on a configuration text: its exit status; stderr must hold want. */
static void check_config(struct wfix *f, const char *text, int want_status, const char *want)
{
    struct sworn_test_run r = {0};

    sworn_test_write_file(f->conf, text, strlen(text), 0644);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_WITNESS_BIN"), "--config", f->conf, "--check",
                    NULL);
    if (r.status != want_status || (want != NULL && strstr(r.err, want) == NULL))
        fail_msg("config:\n%s\nstatus %d (want %d), stderr: %s", text, r.status, want_status,
                 r.err);
    sworn_test_run_free(&r);
}

static void test_config_and_key(void **state)
{
    struct wfix *f = *state;
    char *text = NULL, *p256 = sworn_test_path(f->dir, "p256w.pem");
    uint8_t msg[256], tbs[SWORN_SIGNER_TBS_MAX];
    size_t tbs_len = 0;
    int n;

    write_config(f, NULL, NULL);
    {
        struct sworn_test_run r = {0};

        sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_WITNESS_BIN"), "--config", f->conf,
                        "--check", NULL);
        sworn_test_run_must(&r, "--check");
        assert_non_null(strstr(r.out, f->wvkey));
        sworn_test_run_free(&r);
    }
    check_config(f,
                 "listen: 127.0.0.1:0\nstate: s.db\nkey:\n  uri: file:witness.pem\n"
                 "  name: w\nlogs: []\nextra: 1\n",
                 1, "witness.yaml:7:1");
    check_config(f,
                 "listen: 127.0.0.1:0\nstate: s.db\nkey:\n  uri: tpm:handle=0x81000001\n"
                 "  name: w\nlogs:\n  - origin: a\n    keys: [x]\n",
                 1, "TPM cannot hold");
    if (asprintf(&text,
                 "listen: 127.0.0.1:0\nstate: s.db\nkey:\n  uri: file:witness.pem\n  name: w\n"
                 "logs:\n  - origin: a\n    keys: [\"%s\"]\n",
                 f->wvkey) < 0)
        fail_msg("asprintf");
    check_config(f, text, 1, "no log key");
    free(text);
    if (asprintf(&text,
                 "listen: 127.0.0.1:0\nstate: s.db\nkey:\n  uri: file:witness.pem\n  name: w\n"
                 "logs:\n  - origin: a\n    keys: [\"%s\"]\n  - origin: a\n    keys: [\"%s\"]\n",
                 f->tvkey, f->tvkey) < 0)
        fail_msg("asprintf");
    check_config(f, text, 1, "listed twice");
    free(text);
    /* The key file readable by others: refused. */
    write_config(f, NULL, NULL);
    assert_int_equal(chmod(f->wkey, 0644), 0);
    text = sworn_test_read_file(f->conf, NULL);
    check_config(f, text, 1, "key file");
    free(text);
    assert_int_equal(chmod(f->wkey, 0600), 0);
    /* A P-256 key: refused (cosignature/v1 is Ed25519). */
    sworn_test_run_ok("openssl genpkey p256", NULL, "openssl", "genpkey", "-algorithm", "EC",
                      "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p256, NULL);
    assert_int_equal(chmod(p256, 0600), 0);
    write_config(f, "key:\n  uri: file:p256w.pem\n  name: w\n", NULL);
    text = sworn_test_read_file(f->conf, NULL);
    check_config(f, text, 1, "Ed25519");
    free(text);
    free(p256);

    /* The fault point is armed only in the test build: sworn-witness has no trace of it. */
    {
        size_t blen = 0, tlen = 0;
        char *bin = sworn_test_read_file(sworn_test_bin("SWORN_WITNESS_BIN"), &blen);
        char *tbin = sworn_test_read_file(sworn_test_bin("SWORN_WITNESS_TESTFAULT_BIN"), &tlen);

        assert_null(memmem(bin, blen, "SWORN_WITNESS_FAULT", 19));
        assert_non_null(memmem(tbin, tlen, "SWORN_WITNESS_FAULT", 19));
        free(bin);
        free(tbin);
    }
    /* Signer purpose 6's form (sigscheme.h). */
    n = snprintf((char *)msg, sizeof(msg),
                 "cosignature/v1\ntime 1700000000\na.example/log\n3\n"
                 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n");
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_COSIGNATURE, msg, (size_t)n, tbs, &tbs_len), 0);
    assert_int_equal(tbs_len, (size_t)n);
    assert_memory_equal(tbs, msg, tbs_len);
    /* A checkpoint body alone, a leading-zero time, no time line: refused. */
    assert_int_equal(
        sworn_signer_tbs(SWORN_PURPOSE_COSIGNATURE, msg + 31, (size_t)n - 31, tbs, &tbs_len), -1);
    memcpy(msg + 20, "0", 1);
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_COSIGNATURE, msg, (size_t)n, tbs, &tbs_len),
                     -1);
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_COSIGNATURE,
                                      (const uint8_t *)"cosignature/v1\n", 15, tbs, &tbs_len),
                     -1);
    /* A cosignature TBS is no checkpoint body. */
    msg[20] = '1';
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_CHECKPOINT, msg, (size_t)n, tbs, &tbs_len), -1);
}

/* A SoftHSM token with an Ed25519 key (SOFTHSM2_CONF set to it, for the witness child), and the
 * configuration's key block naming it through module (SoftHSM's, or the hanging shim). */
static struct softhsm *token_key(const char *module, char **block)
{
    struct softhsm *h = softhsm_start();
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len = 0;
    char *uri = softhsm_keygen(h, "checkpoint", "ed25519", "20261207", spki, &spki_len);
    char hex[2 * SWORN_SIGNER_SPKI_MAX + 1];

    /* A path, no secret: the witness (a child) finds the fixture's token through it. */
    setenv("SOFTHSM2_CONF", h->conf, 1);
    sworn_test_hex(spki, spki_len, hex);
    if (asprintf(block,
                 "key:\n  uri: \"%s\"\n  module: %s\n  pin_file: %s\n  pinned_spki: %s\n"
                 "  name: " WITNESS_NAME "\n",
                 uri, module, h->pin_file, hex) < 0)
        fail_msg("asprintf");
    free(uri);
    return h;
}

static void test_pkcs11_key(void **state)
{
    struct wfix *f = *state;
    char *block = NULL, note[NOTE_CAP], *body;
    struct softhsm *h = token_key(SOFTHSM_MODULE_PATH, &block);
    struct sworn_test_run r = {0};
    struct answer a;
    size_t len;

    write_config(f, block, NULL);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_WITNESS_BIN"), "--config", f->conf,
                    "--print-vkey", NULL);
    sworn_test_run_must(&r, "--print-vkey with a pkcs11: key");
    assert_true(r.out_len > 1);
    assert_int_equal(sworn_note_verifier_parse(r.out, r.out_len - 1, &f->wv), 0);
    assert_true(r.out_len - 1 < sizeof(f->wvkey));
    memcpy(f->wvkey, r.out, r.out_len - 1);
    f->wvkey[r.out_len - 1] = '\0';
    sworn_test_run_free(&r);
    start_witness(f, NULL);
    body = log_body(f, f->honest, "p11", 0, 4);
    post(f, body, &a);
    assert_int_equal(a.status, 200);
    len = sign_checkpoint(f->honest, TEST_ORIGIN, 4, &f->tsig, note);
    check_cosignature(f, note, len, a.body, a.body_len, &f->tsig.pub, 0);
    answer_free(&a);
    free(body);
    stop_witness(f);
    free(block);
    softhsm_stop(h);
    unsetenv("SOFTHSM2_CONF");
}

/* A PKCS#11 token that stops answering in C_Sign (tests/pkcs11-hang forwards to SoftHSM and
 * blocks while a flag file exists): the signer's watchdog (SWORN_SIGNER_TIMEOUT_MS) ends the
 * call, the witness answers 500 sign-error and rolls the state back, and once the token answers
 * again it cosigns (the state was not moved by the failed request: old 0 is still right). */
static void test_token_hang(void **state)
{
    struct wfix *f = *state;
    char *block = NULL, *flag, *entered, *body;
    struct softhsm *h = token_key(sworn_test_bin("SWORN_HANG_MODULE"), &block);
    struct answer a;

    flag = sworn_test_path(f->dir, "hang");
    entered = sworn_test_path(f->dir, "hang.entered");
    setenv("SWORN_HANG_FILE", flag, 1);
    write_config(f, block, NULL);
    start_witness(f, NULL);
    sworn_test_write_file(flag, "", 0, 0600);
    body = log_body(f, f->honest, "hang", 0, 4);
    post(f, body, &a);
    if (a.status != 500)
        fail_msg("a hung token: status %d (%s), want 500", a.status, a.body);
    answer_free(&a);
    /* The signature was in flight (the module saw it), and the failure is logged as the key's. */
    assert_int_equal(access(entered, F_OK), 0);
    assert_true(sworn_test_file_has_line(f->errlog, "\"outcome\":\"sign-error\""));
    assert_int_equal(state_rows(f, "latest", TEST_ORIGIN), 0);
    /* The token answers again: the same request is cosigned. */
    assert_int_equal(unlink(flag), 0);
    post(f, body, &a);
    if (a.status != 200)
        fail_msg("after the token came back: status %d (%s), want 200", a.status, a.body);
    answer_free(&a);
    free(body);
    stop_witness(f);
    unsetenv("SWORN_HANG_FILE");
    unsetenv("SOFTHSM2_CONF");
    free(flag);
    free(entered);
    free(block);
    softhsm_stop(h);
}

/* --- red team of the witness (docs/threat-model.md, "Red team of the witness") ------------- */

/* One raw HTTP exchange on a new connection to port: send req, read until the peer closes. */
static char *raw_exchange(int port, const char *req, size_t req_len)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    char *out = calloc(1, 65536);
    size_t got = 0;
    ssize_t n;

    assert_true(fd >= 0 && out != NULL);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(write(fd, req, req_len), (ssize_t)req_len);
    while (got < 65535 && (n = read(fd, out + got, 65535 - got)) > 0)
        got += (size_t)n;
    close(fd);
    return out;
}

/* The honest log's first cosignature (0 -> 3) succeeds: the witness still serves after an attack.
 */
static void cosign_honest_0_to_3(struct wfix *f, const char *tag, const char *what)
{
    char *body = log_body(f, f->honest, tag, 0, 3);

    expect(f, body, 200, 0, what);
    free(body);
}
/* Every line of the witness's log is one JSON object: no byte outside printable ASCII. */
static void log_is_json_lines(const char *log)
{
    size_t len = 0;
    char *text = sworn_test_read_file(log, &len);

    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];

        if ((i == 0 || text[i - 1] == '\n') && strncmp(text + i, "{\"event\":", 9) != 0)
            fail_msg("a log line that is not a JSON event: %.80s", text + i);
        if (ch != '\n' && (ch < 0x20 || ch >= 0x7f))
            fail_msg("byte 0x%02x in the log at %zu: %.80s", ch, i, text + (i > 40 ? i - 40 : 0));
    }
    free(text);
}

/* An outsider's request path of invalid UTF-8, DEL and a quote: the log line stays valid JSON
 * (the bytes are written %XX). Before the fix the 0xFF byte went into the line as it was. */
static void test_attack_log_path_bytes(void **state)
{
    struct wfix *f = *state;
    static const char req[] = "POST /x\"\x7f\xff\xfe\x1b[31m HTTP/1.1\r\nHost: w\r\n"
                              "Content-Length: 1\r\nConnection: close\r\n\r\nx";
    char *ans;

    start_witness(f, NULL);
    ans = raw_exchange(f->port, req, sizeof(req) - 1);
    assert_non_null(strstr(ans, " 404 "));
    free(ans);
    assert_true(sworn_test_file_has_line(f->errlog, "\"path\":\"/x\\\"%7F%FF%FE%1B[31m\""));
    stop_witness(f);
    log_is_json_lines(f->errlog);
}

/* An outsider holding more connections than the witness has descriptors: the witness pauses
 * accept() and logs one JSON line instead of spinning on accept() and writing a libevent
 * warning per try; once the connections go, it serves again. */
static void test_attack_connection_flood(void **state)
{
    struct wfix *f = *state;
    enum { CONNS = 96 };
    int fds[CONNS];
    struct sockaddr_in sa = {.sin_family = AF_INET};

    child_nofile = 48;
    start_witness(f, NULL);
    child_nofile = 0;
    sa.sin_port = htons((uint16_t)f->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < CONNS; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(fds[i] >= 0);
        assert_int_equal(connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
    }
    if (sworn_test_wait_file_has(f->errlog, "\"event\":\"accept-paused\"", WAIT_MS) < 0)
        fail_msg("no accept-paused line with %d connections and 48 descriptors", CONNS);
    for (int i = 0; i < CONNS; i++)
        close(fds[i]);
    cosign_honest_0_to_3(f, "flood3", "honest 0 -> 3 after the flood");
    stop_witness(f);
    log_is_json_lines(f->errlog);
}

/* Two client addresses that shared a rate slot under the former unkeyed hash (FNV-1a of
 * "127.0.0.2" and "127.0.0.147" mod 4096): alternating, each request reset the bucket to a full
 * burst, so the pair was never limited. Now a slot's bucket is shared and never refilled by a
 * change of address, and the hash is keyed: some of the twenty requests get 429. */
static void test_attack_rate_slot_collision(void **state)
{
    struct wfix *f = *state;
    char url[128], *path = sworn_test_path(f->dir, "tiny"), data[4200];
    int limited = 0;

    write_config(f, NULL, "limits:\n  requests_per_second: 1\n  burst: 1\n");
    start_witness(f, NULL);
    sworn_test_write_file(path, "x", 1, 0600);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/add-checkpoint", f->port);
    snprintf(data, sizeof(data), "@%s", path);
    for (int k = 0; k < 20; k++) {
        struct sworn_test_run r = {0};

        sworn_test_runv(&r, NULL, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                        "--interface", k % 2 == 0 ? "127.0.0.2" : "127.0.0.147", "--data-binary",
                        data, url, NULL);
        sworn_test_run_must(&r, "curl");
        if (atoi(r.out) == 429)
            limited++;
        else
            assert_int_equal(atoi(r.out), 400);
        sworn_test_run_free(&r);
    }
    if (limited == 0)
        fail_msg("twenty requests from two addresses at 1/s, burst 1: none limited");
    stop_witness(f);
    free(path);
}

/* The cosignature time of the 200 line (its bytes 4..12, big-endian). */
static uint64_t cosignature_time(const char *line)
{
    const char *sp = strrchr(line, ' ');
    uint8_t raw[128];
    size_t n = 0;
    uint64_t t = 0;

    assert_non_null(sp);
    assert_int_equal(sworn_base64_decode(sp + 1, strcspn(sp + 1, "\n"), raw, sizeof(raw), &n), 0);
    assert_int_equal(n, 4 + 8 + 64);
    for (int i = 0; i < 8; i++)
        t = (t << 8) | raw[4 + i];
    return t;
}

/* The witness's clock set back (the state says it cosigned later than its clock's now): the
 * next cosignature of that origin is not dated before the stored one. Before the fix a
 * cosignature of size 6 could carry an older time than the one of size 3. */
static void test_attack_clock_back(void **state)
{
    struct wfix *f = *state;
    struct answer a;
    char *body, sql[160];
    uint64_t later = (uint64_t)time(NULL) + 100000;
    sqlite3 *db = NULL;

    start_witness(f, NULL);
    cosign_honest_0_to_3(f, "t3", "honest 0 -> 3");
    /* As if the clock had read `later` at that cosignature and was then set back. */
    snprintf(sql, sizeof(sql), "UPDATE latest SET cosigned_at = %llu WHERE origin = '%s'",
             (unsigned long long)later, TEST_ORIGIN);
    assert_int_equal(sqlite3_open(f->state, &db), SQLITE_OK);
    assert_int_equal(sqlite3_busy_timeout(db, WAIT_MS), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    body = log_body(f, f->honest, "t6", 3, 6);
    post(f, body, &a);
    assert_int_equal(a.status, 200);
    if (cosignature_time(a.body) < later)
        fail_msg("cosignature of size 6 dated %llu, before the stored %llu",
                 (unsigned long long)cosignature_time(a.body), (unsigned long long)later);
    answer_free(&a);
    free(body);
    stop_witness(f);
}

/* A log that holds its key sends fork after fork (each another root at the stored size): every
 * one is refused with 409 and logged, but only the first SWORN_WITNESS_FORKS_MAX notes are kept,
 * so the forks table cannot fill the disk. */
static void test_attack_fork_flood(void **state)
{
    struct wfix *f = *state;
    char *body;
    enum { N = SWORN_WITNESS_FORKS_MAX + 4 };

    write_config(f, NULL, "limits:\n  requests_per_second: 100000\n  burst: 100000\n");
    start_witness(f, NULL);
    cosign_honest_0_to_3(f, "ff3", "honest 0 -> 3");
    for (int i = 0; i < N; i++) {
        uint8_t root[SWORN_HASH_LEN];
        char text[SWORN_CHECKPOINT_BODY_MAX + 1], note[NOTE_CAP], tag[16];
        struct sworn_note_signer *signers[1] = {&f->tsig};
        size_t len = 0;
        long n;

        memset(root, 0xA0 + i, sizeof(root));
        n = sworn_checkpoint_format(TEST_ORIGIN, 3, root, text, sizeof(text));
        assert_true(n > 0);
        assert_int_equal(sworn_note_sign(text, (size_t)n, signers, 1, note, NOTE_CAP, &len), 0);
        snprintf(tag, sizeof(tag), "ff%d", i);
        body = body_file(f, tag, 3, NULL, 0, note, len);
        expect(f, body, 409, 3, "a fork at size 3");
        free(body);
    }
    assert_int_equal(state_rows(f, "forks", TEST_ORIGIN), SWORN_WITNESS_FORKS_MAX);
    stop_witness(f);
}

/* A checkpoint with extension lines that make its text longer than the signer's 4096 bytes
 * (purpose 6): a validly signed request the witness cannot cosign. It got 500 "sign-error" (an
 * alert about the key, raised at will by any log) after the proof check; now 400 "malformed",
 * decided before the state is read, and the state is unchanged. */
static void test_attack_long_checkpoint(void **state)
{
    struct wfix *f = *state;
    uint8_t root[SWORN_HASH_LEN];
    char *text = malloc(8192), *note = malloc(16384), *body;
    struct sworn_note_signer *signers[1] = {&f->tsig};
    struct answer a;
    size_t len = 0;
    long n;

    assert_true(text != NULL && note != NULL);
    start_witness(f, NULL);
    assert_int_equal(sworn_log_root(f->honest, 3, root), 0);
    n = sworn_checkpoint_format(TEST_ORIGIN, 3, root, text, 8192);
    assert_true(n > 0);
    memset(text + n, 'x', 5000);
    text[n + 5000] = '\n';
    assert_int_equal(sworn_note_sign(text, (size_t)n + 5001, signers, 1, note, 16384, &len), 0);
    body = body_file(f, "long", 0, NULL, 0, note, len);
    post(f, body, &a);
    if (a.status != 400)
        fail_msg("a 5 KB checkpoint: status %d (%s), want 400", a.status, a.body);
    answer_free(&a);
    assert_true(sworn_test_file_has_line(f->errlog, "\"outcome\":\"malformed\""));
    assert_false(sworn_test_file_has_line(f->errlog, "\"outcome\":\"sign-error\""));
    assert_int_equal(state_rows(f, "latest", TEST_ORIGIN), 0);
    free(body);
    free(note);
    free(text);
    stop_witness(f);
}

/* Slow loris: a client sends its headers one byte at a time, each within the idle timeout
 * (limits.timeout 200ms; a byte every 100 ms at most). evhttp's timeout restarts at each byte,
 * so the connection (and its descriptor) was held as long as the client wished; now the whole
 * request must arrive within limits.timeout of the connection's opening, and the witness shuts
 * the connection down and logs "connections-cut". The pacing is a wait for the close (poll). */
static void test_attack_slow_loris(void **state)
{
    struct wfix *f = *state;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    static const char head[] = "POST /add-checkpoint HTTP/1.1\r\nHost: w\r\nX-Slow: ";
    int fd, closed = 0, sent = 0;

    write_config(f, NULL, "limits:\n  timeout: 200ms\n");
    start_witness(f, NULL);
    sa.sin_port = htons((uint16_t)f->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    for (sent = 0; sent < 300 && !closed; sent++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        char ch = (size_t)sent < sizeof(head) - 1 ? head[sent] : 'a';

        if (send(fd, &ch, 1, MSG_NOSIGNAL) != 1)
            closed = 1;
        else if (poll(&p, 1, 100) == 1) {
            char buf[256];

            closed = recv(fd, buf, sizeof(buf), 0) <= 0;
        }
    }
    close(fd);
    if (!closed)
        fail_msg("a client sending a byte every 100 ms still connected after %d bytes", sent);
    assert_int_equal(sworn_test_wait_file_has(f->errlog, "\"event\":\"connections-cut\"", WAIT_MS),
                     0);
    cosign_honest_0_to_3(f, "slow3", "honest 0 -> 3 after the slow client");
    stop_witness(f);
    log_is_json_lines(f->errlog);
}

/* One client floods on one kept-alive connection, at a path the witness does not serve: every
 * 404 was logged, outside the rate limit, and every 429 of /add-checkpoint was logged too (11000
 * lines a second measured). Now the limit holds for every path and only the first 429 of a run
 * is logged. */
static void test_attack_log_flood(void **state)
{
    struct wfix *f = *state;
    struct sworn_test_run r = {0};
    char url[128];
    const char *argv[220];
    int i = 0, lines = 0;
    char *text, *p;

    write_config(f, NULL, "limits:\n  requests_per_second: 1\n  burst: 1\n");
    start_witness(f, NULL);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/nope", f->port);
    argv[i++] = "curl";
    argv[i++] = "-sS";
    argv[i++] = "-o";
    argv[i++] = "/dev/null";
    argv[i++] = "-w";
    argv[i++] = " %{http_code}";
    for (int k = 0; k < 200; k++)
        argv[i++] = url;
    argv[i] = NULL;
    sworn_test_run(argv, NULL, &r);
    sworn_test_run_must(&r, "curl");
    if (strstr(r.out, " 429") == NULL)
        fail_msg("200 requests for /nope at 1/s, burst 1: no 429 among %s", r.out);
    sworn_test_run_free(&r);
    stop_witness(f);
    text = sworn_test_read_file(f->errlog, NULL);
    for (p = text; (p = strstr(p, "\"event\":\"request\"")) != NULL; p++)
        lines++;
    free(text);
    /* One line per request let through (a few: the bucket refills at 1/s) and one per run of
     * 429s; far fewer than the 200 requests. */
    if (lines > 40)
        fail_msg("%d request lines logged for 200 requests of one rate-limited client", lines);
    log_is_json_lines(f->errlog);
}

/* One client address opens more connections than its share (connections_per_address: 4) and
 * sends no whole request: the witness shuts down its newest ones at the next sweep, logs
 * "connections-cut", and serves another address. Before, nothing bounded one address's
 * connections but the descriptor limit (and they held connections x body_bytes of memory:
 * 210 MB for 3000 unfinished 64 KB bodies). */
static void test_attack_connections_per_address(void **state)
{
    struct wfix *f = *state;
    enum { CONNS = 12, SHARE = 4 };
    int fds[CONNS], closed = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET}, me = {.sin_family = AF_INET};
    static const char part[] = "POST /add-checkpoint HTTP/1.1\r\nHost: w\r\nContent-Length: 9";

    /* The bounds of the two settings. */
    {
        char *text = NULL;

        if (asprintf(&text,
                     "listen: 127.0.0.1:0\nstate: s.db\nkey:\n  uri: file:witness.pem\n"
                     "  name: w\nlimits:\n  connections: 15\nlogs:\n  - origin: a\n"
                     "    keys: [\"%s\"]\n",
                     f->tvkey) < 0)
            fail_msg("asprintf");
        check_config(f, text, 1, "witness.yaml:7:");
        free(text);
    }
    write_config(f, NULL, "limits:\n  connections_per_address: 4\n  timeout: 10m\n");
    start_witness(f, NULL);
    sa.sin_port = htons((uint16_t)f->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(inet_pton(AF_INET, "127.0.0.2", &me.sin_addr), 1);
    for (int i = 0; i < CONNS; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(fds[i] >= 0);
        assert_int_equal(bind(fds[i], (struct sockaddr *)&me, sizeof(me)), 0);
        assert_int_equal(connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(send(fds[i], part, sizeof(part) - 1, MSG_NOSIGNAL),
                         (ssize_t)sizeof(part) - 1);
    }
    if (sworn_test_wait_file_has(f->errlog, "\"event\":\"connections-cut\"", WAIT_MS) < 0)
        fail_msg("%d connections from one address with a share of %d: none cut", CONNS, SHARE);
    /* Wait for the closes themselves: CONNS - SHARE of the sockets read end of file. */
    while (closed < CONNS - SHARE) {
        struct pollfd p[CONNS];
        char buf[64];

        for (int i = 0; i < CONNS; i++)
            p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        assert_true(poll(p, CONNS, WAIT_MS) > 0);
        for (int i = 0; i < CONNS; i++)
            if (fds[i] >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
                recv(fds[i], buf, sizeof(buf), 0) <= 0) {
                close(fds[i]);
                fds[i] = -1;
                closed++;
            }
    }
    cosign_honest_0_to_3(f, "share3", "honest 0 -> 3 from another address");
    for (int i = 0; i < CONNS; i++)
        if (fds[i] >= 0) {
            close(fds[i]);
            closed++;
        }
    assert_int_equal(closed, CONNS);
    stop_witness(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tessera_sequence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_after_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_and_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pkcs11_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_hang, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attack_log_path_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attack_connection_flood, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attack_rate_slot_collision, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attack_clock_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attack_fork_flood, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attack_long_checkpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attack_slow_loris, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attack_log_flood, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attack_connections_per_address, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
