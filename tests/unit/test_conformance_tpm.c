/*
 * test_conformance_tpm.c -- T3.measured-start against a stack with a TPM (scripts/dev-stack with
 * swtpm, through stack_fixture.h): the probe appends a mark (a denied request), asks decisiond for
 * a checkpoint now, which must hold it, and the auditor's sworn-verify checks that checkpoint's
 * fresh quote against the record's measured start.
 *
 *   - the good deployment: the running files are the measured ones and the TPM's quote made now
 *     shows that start (attested);
 *   - a trust policy that ignores quotes: still a pass on the files, said "not attested";
 *   - a deployment file without requests: no mark can make the log grow, so no quote is shown
 *     to be made now ("not attested");
 *   - PCR 23 extended behind decisiond's back (tpm2_pcrextend, from tpm2-tools: what something
 *     run after the start would do): the quote made now shows another PCR 23, a failure. The
 *     files on disk are untouched, so only the TPM can tell.
 *   - red team (rt19b): a decision_socket that answers the mark with log index 0 without
 *     appending it (the operator's own server in front of decisiond): the log stays idle, so
 *     CheckpointNow answers with the last checkpoint, made (and quoted) before PCR 23 was
 *     extended. The record does not hold the mark: a failure, never "made now".
 */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "frame.h"
#include "stack_fixture.h"
#include "sworn.pb-c.h"
#include "testutil.h"

static struct sworn_stack stack;
static int stack_up;

/* The auditor's trust policy `name` in the stack's folder: the dev stack's keys, the AK
 * provisioned from the TPM, `quotes <quotes>` and, with measured, `measured-start record` with
 * the digests of the files the auditor checked (the running daemon's image, the signer, the
 * configuration and the policy). */
static char *trust_policy(const char *name, const char *quotes, int measured)
{
    char *path = sworn_test_path(stack.dir, name);

    assert_int_equal(
        sworn_stack_sh(
            &stack,
            "set -e; [ -d ak ] || { mkdir -m 0700 ak && \"%s\" provision --tcti \"$TCTI\" "
            "--out-dir ak >/dev/null; }"
            " && cp \"$SPKI_DER\" signer.spki"
            " && origin=$(head -n 1 tiles/checkpoint)"
            " && { echo \"origin $origin\"; echo \"log $(\"%s\" vkey --name \"$origin\""
            " --spki signer.spki)\"; echo 'entries sworn'; echo 'quotes %s';"
            " echo \"ak-public $PWD/ak/ak.pub\"; echo 'development allowed';"
            " echo \"receipt-key $(base64 -w0 signer.spki)\";"
            " if [ %d = 1 ]; then echo 'measured-start record';"
            " for f in /proc/%ld/exe \"%s\" \"$CONFIG\" policy.yaml; do"
            " echo \"measured-file $(sha256sum < \"$f\" | cut -d' ' -f1)\"; done; fi; } > %s",
            sworn_test_bin("SWORN_TPM_BIN"), sworn_test_bin("SWORN_LOG_BIN"), quotes, measured,
            (long)stack.decisiond_pid, sworn_test_bin("SWORN_SIGNER_BIN"), name),
        0);
    return path;
}

/* A deployment file; with requests, the request shapes of the stack's policy and the decision
 * socket (the probe's mark). */
static char *deployment(const char *name, const char *trust, int requests)
{
    char *path = sworn_test_path(stack.dir, name), *tiles = sworn_test_path(stack.dir, "tiles");
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fprintf(f, "operator: tpm-test\nrecord: %s\ntrust_policy: %s\nsworn_verify: %s\n", tiles, trust,
            sworn_test_bin("SWORN_VERIFY_BIN"));
    fprintf(f, "admin_socket: %s\nagent:\n  uid: 65534\n", stack.admin);
    if (requests)
        fprintf(f,
                "decision_socket: %s\nrequests:\n  principal: agent-1\n  count: 1\n"
                "  allowed: http://127.0.0.1:8080/allowed/conformance\n"
                "  denied: http://127.0.0.1:8080/denied/conformance\n",
                stack.decision);
    fclose(f);
    free(tiles);
    return path;
}

/* sworn-conformance run --only T3.measured-start; its exit status, and the probe's object in
 * *probe (owned by *report, which the caller frees). */
static int run_probe(const char *dep, json_object **report, json_object **probe)
{
    char *json = sworn_test_path(stack.dir, "report.json");
    const char *argv[] = {sworn_test_bin("SWORN_CONFORMANCE_BIN"),
                          "run",
                          "--deployment",
                          dep,
                          "--json",
                          json,
                          "--only",
                          "T3.measured-start",
                          NULL};
    struct sworn_test_run r;
    json_object *probes;
    int status;

    remove(json);
    sworn_test_run(argv, NULL, &r);
    status = r.status;
    if (status > 1)
        print_message("sworn-conformance exit %d:\n%s\n%s\n", status, r.out, r.err);
    sworn_test_run_free(&r);
    *report = json_object_from_file(json);
    free(json);
    assert_non_null(*report);
    assert_true(json_object_object_get_ex(*report, "probes", &probes));
    assert_int_equal(json_object_array_length(probes), 1);
    *probe = json_object_array_get_idx(probes, 0);
    return status;
}

static const char *field(json_object *o, const char *k)
{
    json_object *v;

    if (!json_object_object_get_ex(o, k, &v))
        fail_msg("no \"%s\" in the probe", k);
    return json_object_get_string(v);
}

/* Whether the probe's evidence has a line holding needle. */
static int evidence_has(json_object *p, const char *needle)
{
    json_object *ev;

    if (!json_object_object_get_ex(p, "evidence", &ev))
        return 0;
    for (size_t i = 0; i < json_object_array_length(ev); i++)
        if (strstr(json_object_get_string(json_object_array_get_idx(ev, i)), needle) != NULL)
            return 1;
    return 0;
}

static void expect(json_object *rep, json_object *p, const char *result, const char *observed)
{
    if (strcmp(field(p, "result"), result) != 0 || strstr(field(p, "observed"), observed) == NULL) {
        print_message("%s\n", json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PRETTY));
        fail_msg("T3.measured-start: %s, expected %s with \"%s\"", field(p, "result"), result,
                 observed);
    }
}

static void test_attested(void **state)
{
    char *trust = trust_policy("trust-require.txt", "require", 1),
         *dep = deployment("require.yaml", trust, 1);
    json_object *rep, *p;

    (void)state;
    assert_int_equal(run_probe(dep, &rep, &p), 0);
    expect(rep, p, "pass", "the TPM's quote made now shows that start");
    assert_true(evidence_has(p, "a mark appended first: conformance-"));
    assert_true(evidence_has(p, "a checkpoint asked now: size "));
    assert_true(evidence_has(p, "check quotes: pass"));
    assert_true(evidence_has(p, "check measured-start: pass"));
    json_object_put(rep);
    free(dep);
    free(trust);
}

static void test_quotes_ignored(void **state)
{
    char *trust = trust_policy("trust-ignore.txt", "ignore", 0),
         *dep = deployment("ignore.yaml", trust, 1);
    json_object *rep, *p;

    (void)state;
    assert_int_equal(run_probe(dep, &rep, &p), 0);
    expect(rep, p, "pass", "not attested by a TPM quote made now");
    assert_true(evidence_has(p, "does not check quotes against the record's starts"));
    json_object_put(rep);
    free(dep);
    free(trust);
}

/* No requests in the file: nothing can make the log grow, so no quote is shown to be made now
 * (an idle log's CheckpointNow answers with its last checkpoint). A pass on the files alone. */
static void test_no_mark_not_attested(void **state)
{
    char *trust = trust_policy("trust-nomark.txt", "require", 1),
         *dep = deployment("nomark.yaml", trust, 0);
    json_object *rep, *p;

    (void)state;
    assert_int_equal(run_probe(dep, &rep, &p), 0);
    expect(rep, p, "pass", "not attested by a TPM quote made now");
    assert_true(evidence_has(p, "no mark can be appended"));
    assert_false(evidence_has(p, "a checkpoint asked now"));
    json_object_put(rep);
    free(dep);
    free(trust);
}

/*
 * A decision socket of the operator's at path: it answers each request with reply (a real
 * DenyReply taken earlier, its log index set to 0) without passing it on. Returns the server's
 * pid; it is listening when this returns.
 */
static pid_t lying_decision_socket(const char *path, const Sworn__V1__DecisionReply *reply)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    uint8_t *frame;
    size_t frame_len;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    pid_t pid;

    assert_true(fd >= 0 && strlen(path) < sizeof(sun.sun_path));
    memcpy(sun.sun_path, path, strlen(path));
    remove(path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(sworn_frame_pack_reply(reply, &frame, &frame_len), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Gone with the test (a failed assertion skips its kill), and holding none of its
           outputs (ctest waits for them to close). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(0);
        close(STDOUT_FILENO);
        close(STDERR_FILENO);
        for (;;) {
            int c = accept(fd, NULL, NULL);
            struct sworn_frame_dec d;
            const uint8_t *body = NULL;
            size_t blen;
            uint8_t buf[4096];
            ssize_t n;

            if (c < 0)
                _exit(1);
            sworn_frame_dec_init(&d);
            while (body == NULL && (n = read(c, buf, sizeof(buf))) > 0)
                if (sworn_frame_dec_feed(&d, buf, (size_t)n, &body, &blen) < 0)
                    break;
            if (body != NULL && write(c, frame, frame_len) != (ssize_t)frame_len)
                _exit(1);
            sworn_frame_dec_free(&d);
            close(c);
        }
    }
    free(frame);
    close(fd);
    return pid;
}

/* The mark's index is decisiond's word: a socket that answers it without appending anything
 * leaves the log idle, and CheckpointNow then answers with the last checkpoint, quoted before
 * PCR 23 was extended. Only the record shows whether the mark is in the checkpoint. */
static void test_mark_not_appended(void **state)
{
    char *trust = trust_policy("trust-lie.txt", "check", 1), *dep, *sock,
         *path = sworn_test_path(stack.dir, "lie.yaml");
    Sworn__V1__DecisionReply *reply;
    json_object *rep, *p;
    size_t len;
    char *text, *at;
    pid_t pid;
    FILE *f;

    (void)state;
    reply = sworn_stack_read_reply(sworn_stack_send_only(&stack, "rt19b-captured", "/denied/x"));
    assert_non_null(reply);
    assert_int_equal(reply->body_case, SWORN__V1__DECISION_REPLY__BODY_DECISION);
    reply->decision->log_index = 0;                      /* the Startup entry */
    assert_true(sworn_stack_checkpoint_now(&stack) > 0); /* the last checkpoint, quoted */
    assert_int_equal(sworn_stack_sh(&stack, "tpm2_pcrextend -T \"$TCTI\" "
                                            "23:sha256=$(printf 'run after the last checkpoint' | "
                                            "sha256sum | cut -d' ' -f1)"),
                     0);
    sock = sworn_test_path(stack.dir, "lying-decision.sock");
    pid = lying_decision_socket(sock, reply);
    sworn__v1__decision_reply__free_unpacked(reply, NULL);
    /* The deployment file names the operator's socket as decision_socket. */
    dep = deployment("lie-base.yaml", trust, 1);
    text = sworn_test_read_file(dep, &len);
    at = strstr(text, "decision_socket: ");
    assert_non_null(at);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%.*sdecision_socket: %s%s", (int)(at - text), text, sock, strchr(at, '\n'));
    fclose(f);
    assert_int_equal(run_probe(path, &rep, &p), 1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    expect(rep, p, "fail", "is not at log index 0");
    json_object_put(rep);
    free(text);
    free(sock);
    free(path);
    free(dep);
    free(trust);
}

/* Last: the TPM's PCR 23 no longer replays for the rest of this stack's life. */
static void test_pcr23_extended_after_start(void **state)
{
    char *trust = trust_policy("trust-extended.txt", "require", 1),
         *dep = deployment("extended.yaml", trust, 1);
    json_object *rep, *p;

    (void)state;
    assert_int_equal(sworn_stack_sh(&stack, "tpm2_pcrextend -T \"$TCTI\" "
                                            "23:sha256=$(printf 'run after the start' | "
                                            "sha256sum | cut -d' ' -f1)"),
                     0);
    assert_int_equal(run_probe(dep, &rep, &p), 1);
    expect(rep, p, "fail", "the TPM does not attest the measured start");
    assert_non_null(strstr(field(p, "observed"), "quote-pcr-digest"));
    json_object_put(rep);
    free(dep);
    free(trust);
}

static int setup(void **state)
{
    (void)state;
    if (sworn_stack_up(&stack, "") < 0)
        return -1;
    stack_up = 1;
    return sworn_stack_checkpoint_now(&stack) > 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return stack_up ? sworn_stack_down(&stack) : 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attested),
        cmocka_unit_test(test_quotes_ignored),
        cmocka_unit_test(test_no_mark_not_attested),
        cmocka_unit_test(test_mark_not_appended),
        cmocka_unit_test(test_pcr23_extended_after_start),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
