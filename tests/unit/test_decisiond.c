/*
 * test_decisiond.c -- sworn-decisiond driven as the proxy and the operator drive it: a real stack
 * (scripts/dev-stack: swtpm, a SoftHSM token, the daemon), real sockets, and the record checked
 * afterwards with the log's own reader and with openssl.
 *
 * What is asserted: record before effect (every acknowledged decision is in the log at the index
 * it names, with that leaf hash; every allow carries a receipt that openssl verifies over the
 * documented TBS with the exported public key, and that is stored beside the entry), credentials
 * released only inside an allow and never written to the log, checkpoints quoted by the TPM,
 * protocol refusals (garbage, oversized and zero lengths, unknown fields, the admin protocol on
 * the decision socket, a peer of the wrong uid) answered and recorded, escalations approved,
 * denied and timed out, policy reloads (a broken file keeps the old policy and is recorded), and
 * budgets that survive a crash of the daemon, rebuilt from every allow of their window however
 * many entries follow it (finding 11 of the control-plane review: test_budget_replay_whole_window;
 * budgets.replay_max_entries refuses the start rather than forget an allow).
 */
#define _GNU_SOURCE /* memmem */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "err.h"
#include "dclient.h"
#include "frame.h"
#include "logstore.h"
#include "merkle.h"
#include "note.h"
#include "quote.h"
#include "sig_base.h"
#include "sigscheme.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "utf8.h"

/* Verify a receipt with openssl over TBS = FF "sworn/v1 receipt" 00 || leaf. 0 = verified. */
/* openssl's verdict on bytes tbs signed (DER ECDSA) by the key in spki_der. */
static int openssl_verify(const char *dir, const char *spki_der, const uint8_t *tbs, size_t len,
                          const uint8_t *sig, size_t sig_len)
{
    char *tbs_path = sworn_test_path(dir, "receipt.tbs"),
         *sig_path = sworn_test_path(dir, "receipt.sig");
    char cmd[2048];
    int rc;

    sworn_test_write_file(tbs_path, tbs, len, 0600);
    sworn_test_write_file(sig_path, sig, sig_len, 0600);
    snprintf(cmd, sizeof(cmd),
             "openssl pkey -pubin -inform DER -in %s -out %s/pub.pem 2>/dev/null && "
             "openssl dgst -sha256 -verify %s/pub.pem -signature %s %s >/dev/null 2>&1",
             spki_der, dir, dir, sig_path, tbs_path);
    rc = system(cmd);
    free(tbs_path);
    free(sig_path);
    return rc == 0 ? 0 : -1;
}

/*
 * The receipt r of the decision entry d with leaf hash leaf, checked by openssl: a digest
 * receipt (form 0) over FF "sworn/v1 receipt" 00 || leaf; an http-message receipt (form 1) over
 * sworn's RFC 9421 base of the entry's request (docs/formats.md section 13), its r||s as DER.
 */
static int openssl_verify_receipt(const char *dir, const char *spki_der, const uint8_t leaf[32],
                                  const Sworn__V1__Receipt *r, const Sworn__V1__DecisionRecord *d)
{
    static const char prefix[] = "\xffsworn/v1 receipt";
    uint8_t tbs[sizeof(prefix) + 32], base[SWORN_SIGBASE_MAX], der[80];
    char keyid[65], params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t base_len, params_len, der_len;
    const char *why = NULL;
    struct sworn_httpsig_request h;

    if (r->form == 0) {
        memcpy(tbs, prefix, sizeof(prefix)); /* includes the NUL that ends the prefix */
        memcpy(tbs + sizeof(prefix), leaf, 32);
        return openssl_verify(dir, spki_der, tbs, sizeof(tbs), r->signature.data, r->signature.len);
    }
    assert_int_equal(r->form, 1);
    assert_int_equal(r->signature.len, 64);
    assert_int_equal(r->created, d->time_unix_ms / 1000);
    for (int i = 0; i < 32; i++)
        snprintf(keyid + 2 * i, 3, "%02x", r->key_id.data[i]);
    h = (struct sworn_httpsig_request){
        .method = d->request->context->method,
        .scheme = d->canonical_resource->scheme,
        .host = d->canonical_resource->host,
        .port = d->canonical_resource->port,
        .path = d->canonical_resource->path,
        .body_sha256 = d->request->context->body_sha256.len == 32
                           ? d->request->context->body_sha256.data
                           : NULL,
        .leaf = leaf,
    };
    assert_int_equal(sworn_httpsig_base(&h, (int64_t)r->created, keyid, base, sizeof(base),
                                        &base_len, params, sizeof(params), &params_len, &why),
                     0);
    assert_string_equal(params, r->signature_params);
    assert_int_equal(sworn_ecdsa_rs_to_der(r->signature.data, 32, r->signature.data + 32, 32, der,
                                           sizeof(der), &der_len),
                     0);
    return openssl_verify(dir, spki_der, base, base_len, der, der_len);
}

/* The vault's demo credential value, as dev-stack wrote it. */
static char *demo_credential_value(struct sworn_stack *s)
{
    char *path = sworn_test_path(s->dir, "vault.json"), *text = sworn_test_read_file(path, NULL);
    char *v = strstr(text, "\"value\": \""), *end, *out;

    assert_non_null(v);
    v += strlen("\"value\": \"");
    end = strchr(v, '"');
    out = strndup(v, (size_t)(end - v));
    free(text);
    free(path);
    return out;
}

/*
 * Record before effect, receipts, credentials, checkpoints and quotes, on SoftHSM and swtpm.
 */
static void test_recorded_before_effect(void **state)
{
    struct sworn_stack s;
    static const struct {
        const char *id, *path;
        Sworn__V1__Effect effect;
    } cases[] = {
        {"t-allow", "/allowed/a", SWORN__V1__EFFECT__EFFECT_ALLOW},
        {"t-deny", "/denied/a", SWORN__V1__EFFECT__EFFECT_DENY},
        {"t-default", "/nowhere", SWORN__V1__EFFECT__EFFECT_DENY},
        {"t-cred", "/with-credential/a", SWORN__V1__EFFECT__EFFECT_ALLOW},
        {"t-allow2", "/allowed/b", SWORN__V1__EFFECT__EFFECT_ALLOW},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    Sworn__V1__DecisionReply *replies[N];
    struct sworn_log *log;
    char *cred_value;
    struct sworn_stack_quotes quotes;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, ""), 0);
    cred_value = demo_credential_value(&s);
    for (int i = 0; i < N; i++) {
        Sworn__V1__Decision *d;

        replies[i] = sworn_stack_decide_path(&s, cases[i].id, cases[i].path);
        d = sworn_stack_expect_decision(replies[i], cases[i].effect);
        assert_string_equal(d->request_id, cases[i].id);
        if (cases[i].effect == SWORN__V1__EFFECT__EFFECT_ALLOW) {
            assert_non_null(d->receipt);
            assert_int_equal(d->receipt->alg, 1);
            /* an http request with a method: the receipt is its RFC 9421 signature */
            assert_int_equal(d->receipt->form, 1);
            assert_int_equal(d->receipt->signature.len, 64);
        } else {
            assert_null(d->receipt);
            assert_null(d->credential);
        }
        if (strcmp(cases[i].id, "t-cred") == 0) {
            /* The credential comes only inside the allow, for its destination. */
            assert_non_null(d->credential);
            assert_string_equal(d->credential->id, "demo");
            assert_string_equal(d->credential->header_name, "authorization");
            assert_int_equal(d->credential->value.len, strlen(cred_value));
            assert_memory_equal(d->credential->value.data, cred_value, strlen(cred_value));
        } else {
            assert_null(d->credential);
        }
    }
    /* An orderly stop signs and quotes a final checkpoint. */
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_log_open(s.log_db, &log), 0);
    for (int i = 0; i < N; i++) {
        const Sworn__V1__Decision *d = replies[i]->decision;
        uint8_t entry[SWORN_FRAME_ENTRY_MAX], leaf[32], rbuf[SWORN_LOG_RECEIPT_MAX];
        size_t len, rlen;
        Sworn__V1__Entry *e;

        assert_int_equal(sworn_log_read_entry(log, d->log_index, entry, sizeof(entry), &len), 0);
        sworn_merkle_leaf_hash(entry, len, leaf);
        assert_memory_equal(leaf, d->entry_hash.data, 32);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
        assert_string_equal(e->decision->request->request_id, cases[i].id);
        assert_int_equal(e->decision->effect, cases[i].effect);
        assert_int_equal(e->decision->policy_digest.len, 32);
        if (d->receipt != NULL) {
            Sworn__V1__Receipt *stored;

            /* The receipt is stored beside the entry, and openssl verifies it. */
            assert_int_equal(sworn_log_read_receipt(log, d->log_index, rbuf, sizeof(rbuf), &rlen),
                             0);
            stored = sworn__v1__receipt__unpack(NULL, rlen, rbuf);
            assert_non_null(stored);
            assert_int_equal(stored->signature.len, d->receipt->signature.len);
            assert_memory_equal(stored->signature.data, d->receipt->signature.data,
                                stored->signature.len);
            sworn__v1__receipt__free_unpacked(stored, NULL);
            assert_int_equal(
                openssl_verify_receipt(s.dir, s.spki_der, leaf, d->receipt, e->decision), 0);
            /* ... and not for another entry's hash. */
            leaf[0] ^= 1;
            assert_int_equal(
                openssl_verify_receipt(s.dir, s.spki_der, leaf, d->receipt, e->decision), -1);
        } else {
            assert_int_equal(sworn_log_read_receipt(log, d->log_index, rbuf, sizeof(rbuf), &rlen),
                             -1);
        }
        if (strcmp(cases[i].id, "t-cred") == 0) {
            assert_string_equal(e->decision->credential_id, "demo");
            assert_int_equal(e->decision->credential_sha256.len, 32);
        }
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    /* The credential value is nowhere in the log. */
    for (uint64_t i = 0; i < sworn_log_size(log); i++) {
        uint8_t entry[SWORN_FRAME_ENTRY_MAX];
        size_t len;

        assert_int_equal(sworn_log_read_entry(log, i, entry, sizeof(entry), &len), 0);
        assert_null(memmem(entry, len, cred_value, strlen(cred_value)));
    }
    /* The first entries are the measured start and the policy; the final checkpoint covers all,
     * and the TPM quoted checkpoints. */
    {
        uint8_t entry[SWORN_FRAME_ENTRY_MAX];
        size_t len;
        Sworn__V1__Entry *e;

        assert_int_equal(sworn_log_read_entry(log, 0, entry, sizeof(entry), &len), 0);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_STARTUP);
        assert_true(e->startup->n_files >= 3);
        assert_int_equal(e->startup->pcr23.len, 32);
        sworn__v1__entry__free_unpacked(e, NULL);
        assert_int_equal(sworn_log_read_entry(log, 1, entry, sizeof(entry), &len), 0);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_POLICY_LOADED);
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    sworn_stack_expect_final_checkpoint(log);
    sworn_stack_log_quotes(log, &quotes);
    assert_true(quotes.n >= 1);
    sworn_log_close(log);
    for (int i = 0; i < N; i++)
        sworn__v1__decision_reply__free_unpacked(replies[i], NULL);
    free(cred_value);
    assert_int_equal(sworn_stack_down(&s), 0);
}

static uint32_t error_code(const uint8_t *body, size_t len)
{
    Sworn__V1__DecisionReply *r = sworn_frame_unpack_reply(body, len);
    uint32_t code;

    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
    code = r->error->code;
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    return code;
}

static int count_refused(struct sworn_stack *s)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__TailRequest t = SWORN__V1__TAIL_REQUEST__INIT;
    Sworn__V1__AdminResponse *r;
    int n = 0;

    t.count = 100;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_TAIL;
    rq.tail = &t;
    r = sworn_stack_admin(s, &rq);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_TAIL);
    for (size_t i = 0; i < r->tail->n_entries; i++)
        if (r->tail->entries[i]->kind_case == SWORN__V1__ENTRY__KIND_REFUSED)
            n++;
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return n;
}

/* Send r as the proxy would but without the client's own checks (it would refuse to encode the
 * strings below); returns the answer's error code, or 0 when the answer was a decision.
 * OUT: sha256, the SHA-256 of the body sent (what a Refused entry records). */
static uint32_t send_raw_request(struct sworn_stack *s, Sworn__V1__AuthorizationRequest *req,
                                 uint8_t sha256[32])
{
    Sworn__V1__DecisionRequest env = SWORN__V1__DECISION_REQUEST__INIT;
    Sworn__V1__DecisionReply *rep;
    size_t raw_len, len;
    uint8_t *raw, *body = NULL;
    uint32_t code;
    int fd = sworn_stack_connect(s->decision);

    assert_true(fd >= 0);
    env.body_case = SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE;
    env.authorize = req;
    env.version = SWORN_WIRE_VERSION;
    raw_len = sworn__v1__decision_request__get_packed_size(&env);
    raw = malloc(SWORN_FRAME_HDR_LEN + raw_len);
    assert_non_null(raw);
    sworn__v1__decision_request__pack(&env, raw + SWORN_FRAME_HDR_LEN);
    raw[0] = raw[1] = 0;
    raw[2] = (uint8_t)(raw_len >> 8);
    raw[3] = (uint8_t)raw_len;
    assert_int_equal(
        EVP_Digest(raw + SWORN_FRAME_HDR_LEN, raw_len, sha256, NULL, EVP_sha256(), NULL), 1);
    assert_int_equal(
        sworn_stack_exchange(fd, raw, SWORN_FRAME_HDR_LEN + raw_len, 10000, &body, &len), 0);
    close(fd);
    free(raw);
    rep = sworn_frame_unpack_reply(body, len);
    free(body);
    assert_non_null(rep);
    code = rep->body_case == SWORN__V1__DECISION_REPLY__BODY_ERROR ? rep->error->code : 0;
    sworn__v1__decision_reply__free_unpacked(rep, NULL);
    return code;
}

/* Every byte of the file at path is printable: valid UTF-8 without an unsafe character, but
 * newlines (what a terminal shows as it is). */
static void assert_file_printable(const char *path)
{
    size_t len = 0;
    char *text = sworn_test_read_file(path, &len);

    if (sworn_utf8_check(text, len, 1, path) != 0)
        fail_msg("%s", sworn_err_msg());
    free(text);
}

/*
 * Review finding 12: a request whose path holds U+202E (RIGHT-TO-LEFT OVERRIDE) and U+009B (the
 * 8-bit CSI) was decided and recorded with the raw bytes, which `swornctl tail` printed. Now
 * every string of a request is refused when it holds a control, bidi or invisible character
 * (common/utf8.h): an error frame, a Refused entry (a deny) naming the code point, and nothing
 * unescaped in swornctl's output or the daemon's log.
 */
static void test_spoofing_characters_refused(void **state)
{
    static const struct {
        const char *principal, *path, *names;
    } cases[] = {
        {"agent-1",
         "/allowed/\xe2\x80\xaetxt.exe\xc2\x9b"
         "31m",
         "U+202E"}, /* the review's */
        {"agent-1",
         "/allowed/a\xc2\x9b"
         "31m",
         "U+009B"},
        {"agent-1", "/allowed/\xe2\x81\xa6x", "U+2066"},
        {"agent-1", "/allowed/a\xe2\x80\x8b", "U+200B"},
        {"agent-1", "/allowed/a\xe2\x80\xa8", "U+2028"},
        {"agent-1", "/allowed/a\xef\xbb\xbf", "U+FEFF"},
        {"agent-1", "/allowed/a\xf3\xa0\x81\x81", "U+E0041"},
        {"agent\xe2\x80\x8f-1", "/allowed/a", "U+200F"}, /* in another string */
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    struct sworn_stack s;
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__TailRequest t = SWORN__V1__TAIL_REQUEST__INIT;
    Sworn__V1__AdminResponse *r;
    uint8_t sha[N][32];
    char *out, *log;
    int before, found = 0;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    before = count_refused(&s);
    for (int i = 0; i < N; i++) {
        struct sworn_stack_req req;
        char id[32];

        snprintf(id, sizeof(id), "spoof-%d", i);
        sworn_stack_req_init(&req, id, cases[i].principal, cases[i].path);
        /* Refused (before the fix: decided, and recorded with the raw bytes). */
        assert_int_equal(send_raw_request(&s, &req.req, sha[i]), SWORN_ERR_FORMAT);
    }
    /* Every refusal is in the record (appended off the loop: wait for them). */
    for (int i = 0; i < 50 && count_refused(&s) - before < N; i++)
        sworn_test_sleep_ms(100);
    assert_int_equal(count_refused(&s) - before, N);
    t.count = 100;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_TAIL;
    rq.tail = &t;
    r = sworn_stack_admin(&s, &rq);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_TAIL);
    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];

        /* No decision was made for any of them. */
        if (e->kind_case == SWORN__V1__ENTRY__KIND_DECISION)
            assert_null(strstr(e->decision->request->request_id, "spoof-"));
        if (e->kind_case != SWORN__V1__ENTRY__KIND_REFUSED)
            continue;
        for (int k = 0; k < N; k++) {
            if (e->refused->frame_sha256.len != 32 ||
                memcmp(e->refused->frame_sha256.data, sha[k], 32) != 0)
                continue;
            assert_int_equal(e->refused->code, SWORN_ERR_FORMAT);
            assert_string_equal(e->refused->channel, "decision");
            /* The reason names the character, as U+XXXX. */
            if (strstr(e->refused->message, cases[k].names) == NULL)
                fail_msg("case %d: %s", k, e->refused->message);
            found++;
        }
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    assert_int_equal(found, N);
    /* What the operator sees: swornctl's tail, the daemon's log lines. */
    assert_int_equal(
        sworn_stack_sh(&s, "\"$SWORNCTL_BIN\" --config \"$CONFIG\" tail 100 > tail.out"), 0);
    out = sworn_test_path(s.dir, "tail.out");
    assert_file_printable(out);
    log = sworn_test_path(s.dir, "decisiond.log");
    assert_file_printable(log);
    free(out);
    free(log);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* Hostile frames are answered with an error frame, recorded, and cost nothing else. */
static void test_protocol_refusals(void **state)
{
    struct sworn_stack s;
    struct sworn_stack_req r;
    uint8_t *frame, *body, bad[64];
    size_t frame_len, len;
    int fd, refused_before, expected = 0;

    (void)state;
    /* As root, the sockets' group (nogroup) lets the wrong-uid peer below reach them: then only
     * SO_PEERCRED stops it (test_decisiond_sockets checks that no one else can connect). */
    assert_int_equal(sworn_stack_up(&s, geteuid() == 0
                                            ? "--no-tpm --file-key --socket-group nogroup"
                                            : "--no-tpm --file-key"),
                     0);
    refused_before = count_refused(&s);

    /* A body that is not protobuf: an error frame, and the connection goes on working. */
    fd = sworn_stack_connect(s.decision);
    assert_true(fd >= 0);
    memcpy(bad, "\x00\x00\x00\x05\xff\xff\xff\xff\xff", 9);
    assert_int_equal(sworn_stack_exchange(fd, bad, 9, 10000, &body, &len), 0);
    assert_int_equal(error_code(body, len), SWORN_ERR_FORMAT);
    free(body);
    expected++;
    sworn_stack_req_init(&r, "after-garbage", "agent-1", "/allowed/x");
    assert_int_equal(sworn_frame_pack_authorize(&r.req, &frame, &frame_len), 0);
    assert_int_equal(sworn_stack_exchange(fd, frame, frame_len, 10000, &body, &len), 0);
    {
        Sworn__V1__DecisionReply *rep = sworn_frame_unpack_reply(body, len);

        sworn_stack_expect_decision(rep, SWORN__V1__EFFECT__EFFECT_ALLOW);
        sworn__v1__decision_reply__free_unpacked(rep, NULL);
    }
    free(body);

    /* An unknown field appended to a valid request: refused, never ignored. */
    {
        uint8_t *u = malloc(frame_len + 3);

        memcpy(u, frame, frame_len);
        u[frame_len] = 0x98; /* field 99, varint */
        u[frame_len + 1] = 0x06;
        u[frame_len + 2] = 0x01;
        u[0] = 0;
        u[1] = 0;
        u[2] = (uint8_t)((frame_len + 3 - 4) >> 8);
        u[3] = (uint8_t)(frame_len + 3 - 4);
        assert_int_equal(sworn_stack_exchange(fd, u, frame_len + 3, 10000, &body, &len), 0);
        assert_int_equal(error_code(body, len), SWORN_ERR_FORMAT);
        free(body);
        free(u);
        expected++;
    }
    free(frame);

    /* The admin protocol on the decision socket does not decode as a request. */
    {
        Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
        Sworn__V1__StatusRequest st = SWORN__V1__STATUS_REQUEST__INIT;

        rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_STATUS;
        rq.status = &st;
        assert_int_equal(sworn_frame_pack_admin_request(&rq, &frame, &frame_len), 0);
        assert_int_equal(sworn_stack_exchange(fd, frame, frame_len, 10000, &body, &len), 0);
        assert_int_equal(error_code(body, len), SWORN_ERR_FORMAT);
        free(body);
        free(frame);
        expected++;
    }

    /* A bare request, as wire version 0 sent it (no envelope), and an envelope of another
     * version: refused and recorded, never taken for what they might mean. */
    {
        Sworn__V1__DecisionRequest env = SWORN__V1__DECISION_REQUEST__INIT;
        uint8_t *raw;
        size_t raw_len;

        sworn_stack_req_init(&r, "bare-v0", "agent-1", "/allowed/x");
        assert_int_equal(sworn_frame_pack_request(&r.req, &frame, &frame_len), 0);
        assert_int_equal(sworn_stack_exchange(fd, frame, frame_len, 10000, &body, &len), 0);
        assert_int_equal(error_code(body, len), SWORN_ERR_FORMAT);
        free(body);
        free(frame);
        expected++;
        env.body_case = SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE;
        env.authorize = &r.req;
        env.version = SWORN_WIRE_VERSION + 1;
        raw_len = sworn__v1__decision_request__get_packed_size(&env);
        raw = malloc(SWORN_FRAME_HDR_LEN + raw_len);
        assert_non_null(raw);
        sworn__v1__decision_request__pack(&env, raw + SWORN_FRAME_HDR_LEN);
        raw[0] = raw[1] = 0;
        raw[2] = (uint8_t)(raw_len >> 8);
        raw[3] = (uint8_t)raw_len;
        assert_int_equal(
            sworn_stack_exchange(fd, raw, SWORN_FRAME_HDR_LEN + raw_len, 10000, &body, &len), 0);
        assert_int_equal(error_code(body, len), SWORN_ERR_FORMAT);
        free(body);
        free(raw);
        expected++;
    }

    /* An oversized length: an error frame, then the connection is closed. */
    memcpy(bad, "\x7f\xff\xff\xff", 4);
    assert_int_equal(sworn_stack_exchange(fd, bad, 4, 10000, &body, &len), 0);
    assert_int_equal(error_code(body, len), SWORN_ERR_RANGE);
    free(body);
    assert_int_equal(sworn_stack_exchange(fd, NULL, 0, 10000, &body, &len), 1);
    close(fd);
    expected++;

    /* A zero length likewise. */
    fd = sworn_stack_connect(s.decision);
    memset(bad, 0, 4);
    assert_int_equal(sworn_stack_exchange(fd, bad, 4, 10000, &body, &len), 0);
    assert_int_equal(error_code(body, len), SWORN_ERR_RANGE);
    free(body);
    close(fd);
    expected++;

    /* A peer of another uid is closed before anything is read (needs root to be another uid). */
    if (geteuid() == 0) {
        pid_t pid;

        /* Let the other uid reach the socket through the folder and the socket's group (nogroup,
         * above): then only SO_PEERCRED stops it. */
        assert_int_equal(chmod(s.dir, 0711), 0);
        pid = fork();

        if (pid == 0) {
            int cfd, rc;

            if (setgid(65534) != 0 || setuid(65534) != 0)
                _exit(3);
            cfd = sworn_stack_connect(s.decision);
            if (cfd < 0)
                _exit(4);
            sworn_stack_req_init(&r, "wrong-uid", "agent-1", "/allowed/x");
            if (sworn_frame_pack_authorize(&r.req, &frame, &frame_len) < 0)
                _exit(5);
            rc = sworn_stack_exchange(cfd, frame, frame_len, 10000, &body, &len);
            _exit(rc == 1 ? 0 : 6); /* closed without an answer */
        }
        int status;

        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        expected++;
    } else {
        print_message("not root: the wrong-uid peer case is not run\n");
    }
    /* Every refusal is in the record (appended off the loop: give it a moment). */
    for (int i = 0; i < 50 && count_refused(&s) - refused_before < expected; i++)
        sworn_test_sleep_ms(100);
    assert_int_equal(count_refused(&s) - refused_before, expected);

    /* A burst of bad frames in one write: each gets its error frame, in order, the daemon stays
     * up (no recursion per pipelined frame), and the record takes at most 100 per second. */
    {
        enum { BURST = 20000 };
        uint8_t *burst = malloc(BURST * 5), buf[65536];
        struct sworn_dclient *dec = malloc(sizeof(*dec)); /* the client's incremental mode */
        size_t got = 0, sent = 0;
        Sworn__V1__DecisionReply *rep;

        for (int i = 0; i < BURST; i++)
            memcpy(burst + 5 * i, "\x00\x00\x00\x01\xff", 5);
        fd = sworn_stack_connect(s.decision);
        assert_true(fd >= 0);
        assert_non_null(dec);
        sworn_dclient_init(dec);
        while (got < BURST) {
            struct pollfd pfd = {fd, POLLIN | (sent < BURST * 5 ? POLLOUT : 0), 0};

            assert_true(poll(&pfd, 1, 30000) > 0);
            if ((pfd.revents & POLLOUT) && sent < BURST * 5) {
                ssize_t w = send(fd, burst + sent, BURST * 5 - sent, MSG_NOSIGNAL | MSG_DONTWAIT);

                assert_true(w > 0);
                sent += (size_t)w;
            }
            if (pfd.revents & POLLIN) {
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                size_t off = 0;

                assert_true(n > 0);
                while (off < (size_t)n) {
                    const uint8_t *b = NULL;
                    size_t blen = 0;
                    long used = sworn_dclient_feed(dec, buf + off, (size_t)n - off, &b, &blen);

                    assert_true(used > 0);
                    off += (size_t)used;
                    if (b != NULL) {
                        assert_int_equal(error_code(b, blen), SWORN_ERR_FORMAT);
                        got++;
                    }
                }
            }
        }
        sworn_dclient_close(dec);
        free(dec);
        close(fd);
        free(burst);
        rep = sworn_stack_decide_path(&s, "after-burst", "/allowed/x");
        sworn_stack_expect_decision(rep, SWORN__V1__EFFECT__EFFECT_ALLOW);
        sworn__v1__decision_reply__free_unpacked(rep, NULL);
    }
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* Escalations: held, then approved (with a receipt), denied by the operator, or timed out. */
static void test_escalations(void **state)
{
    struct sworn_stack s;
    char *policy_path;
    char policy[1024];
    int fa, fb, fc;
    uint64_t b_index;
    Sworn__V1__AdminResponse *ar;
    Sworn__V1__DecisionReply *r;
    Sworn__V1__Decision *d;

    (void)state;
    /* The sample policy, with a 1 s escalation deadline. */
    policy_path = sworn_test_tmpdir("escpolicy");
    snprintf(policy, sizeof(policy),
             "version: 7\nrules:\n  - id: esc\n    effect: escalate\n    resource:\n"
             "      paths: [\"/escalate/**\"]\n    escalation_timeout: %s\n",
             "1s");
    {
        char *p = sworn_test_path(policy_path, "policy.yaml"), opts[600];

        sworn_test_write_file(p, policy, strlen(policy), 0644);
        snprintf(opts, sizeof(opts), "--no-tpm --file-key --policy %s", p);
        assert_int_equal(sworn_stack_up(&s, opts), 0);
        free(p);
    }
    fa = sworn_stack_send_only(&s, "esc-a", "/escalate/a");
    fb = sworn_stack_send_only(&s, "esc-b", "/escalate/b");
    for (int i = 0; i < 50 && sworn_stack_pending(&s) < 2; i++)
        sworn_test_sleep_ms(20);
    assert_int_equal(sworn_stack_pending(&s), 2);
    /* Approve a: the resolution is recorded, then a gets its allow with a receipt. */
    ar = sworn_stack_resolve(&s, "esc-a", 1);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
    r = sworn_stack_read_reply(fa);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(d->log_index, ar->resolve->log_index);
    assert_non_null(d->receipt);
    assert_string_equal(d->reason, "checked by the test");
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    /* Deny b. */
    b_index = sworn_stack_index_of(&s, "esc-b");
    ar = sworn_stack_resolve_at(&s, b_index, 0);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
    r = sworn_stack_read_reply(fb);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_null(d->receipt);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    /* Resolving it again: no such pending escalation. */
    ar = sworn_stack_resolve_at(&s, b_index, 1);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_ERROR);
    assert_int_equal(ar->error->code, SWORN_ERR_NOTFOUND);
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    /* c times out into a deny after its 1 s deadline. */
    fc = sworn_stack_send_only(&s, "esc-c", "/escalate/c");
    r = sworn_stack_read_reply(fc);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_non_null(strstr(d->reason, "deadline"));
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    assert_int_equal(sworn_stack_pending(&s), 0);
    assert_int_equal(sworn_stack_down(&s), 0);
    sworn_test_rmtree(policy_path);
    free(policy_path);
}

static Sworn__V1__AdminResponse *reload(struct sworn_stack *s)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__ReloadPolicyRequest rl = SWORN__V1__RELOAD_POLICY_REQUEST__INIT;

    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_RELOAD_POLICY;
    rq.reload_policy = &rl;
    return sworn_stack_admin(s, &rq);
}

/* A broken policy file keeps the old policy, and the failed reload is recorded; a good one
 * takes effect, and decisions carry its digest from then on. */
/*
 * A refused reload is recorded whatever the refused file holds. The policy reader's message
 * quotes a key it does not know; a key holding U+202E (or invisible characters) once went into
 * the PolicyLoaded entry's error raw, the entry failed its own check ("policy_loaded.error:
 * unsafe character U+202E"), and the refusal was not recorded at all: the tree did not grow.
 * Now the key is shown escaped, in the operator's answer, the log line and the entry.
 */
static void test_policy_error_recorded(void **state)
{
    static const char *const keys[] = {"a\xe2\x80\xae"
                                       "b", /* U+202E */
                                       "\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b"
                                       "\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b"
                                       "\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b"
                                       "\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b"
                                       "\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b"
                                       "\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b",
                                       "\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x81\xa6x"}; /* U+2066 */
    static const char *const shown[] = {"a\\u202eb", "\\u200b\\u200b", "\\u2066x"};
    struct sworn_stack s;
    Sworn__V1__AdminResponse *ar;
    Sworn__V1__DecisionReply *r;
    struct sworn_log *log;
    uint8_t entry[SWORN_FRAME_ENTRY_MAX];
    size_t len, orig_len;
    char *path, *path2, *orig, *text, *logtext;
    uint64_t size;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    path = sworn_test_path(s.dir, "policy.yaml");
    orig = sworn_test_read_file(path, &orig_len);
    assert_non_null(orig);
    assert_non_null(strstr(orig, "  - id: demo-allowed\n"));
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        const char *at = strstr(orig, "  - id: demo-allowed\n") + strlen("  - id: demo-allowed\n");
        uint8_t want[32];
        Sworn__V1__Entry *e;

        assert_true(asprintf(&text, "%.*s    %s: 1\n%s", (int)(at - orig), orig, keys[k], at) > 0);
        sworn_test_write_file(path, text, strlen(text), 0644);
        assert_int_equal(sworn_log_open(s.log_db, &log), 0);
        size = sworn_log_size(log);
        sworn_log_close(log);
        ar = reload(&s);
        assert_non_null(ar); /* an answer, which the strict decoder took */
        assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_ERROR);
        assert_non_null(strstr(ar->error->message, "unknown key"));
        assert_non_null(strstr(ar->error->message, shown[k]));
        sworn__v1__admin_response__free_unpacked(ar, NULL);
        /* The refusal is the next entry, with the escaped key and the refused bytes' digest. */
        assert_int_equal(sworn_log_open(s.log_db, &log), 0);
        assert_int_equal(sworn_log_size(log), size + 1);
        assert_int_equal(sworn_log_read_entry(log, size, entry, sizeof(entry), &len), 0);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_POLICY_LOADED);
        assert_non_null(strstr(e->policy_loaded->error, "unknown key"));
        assert_non_null(strstr(e->policy_loaded->error, shown[k]));
        EVP_Digest(text, strlen(text), want, NULL, EVP_sha256(), NULL);
        assert_memory_equal(e->policy_loaded->digest.data, want, 32);
        sworn__v1__entry__free_unpacked(e, NULL);
        sworn_log_close(log);
        free(text);
    }
    /* The old policy still decides. */
    r = sworn_stack_decide_path(&s, "after-refused-reloads", "/allowed/a");
    sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* And the log lines hold none of the raw characters. */
    path2 = sworn_test_path(s.dir, "decisiond.log");
    logtext = sworn_test_read_file(path2, &len);
    free(path2);
    assert_non_null(logtext);
    assert_null(memmem(logtext, len, "\xe2\x80\xae", 3));
    assert_null(memmem(logtext, len, "\xe2\x80\x8b", 3));
    assert_null(memmem(logtext, len, "\xe2\x81\xa6", 3));
    free(logtext);
    sworn_test_write_file(path, orig, orig_len, 0644);
    free(orig);
    free(path);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/*
 * Review finding 13, on a real stack: the engine reads the policy through the checked open at
 * every reload. A policy file replaced by a symbolic link (to a policy that denies everything),
 * then one that others may write, is refused (the error says why), and the old policy stays.
 */
static void test_policy_file_checked(void **state)
{
    static const char deny_all[] = "version: 2\nrules:\n  - id: none\n    effect: deny\n";
    struct sworn_stack s;
    Sworn__V1__AdminResponse *ar;
    char *path, *other;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    path = sworn_test_path(s.dir, "policy.yaml");
    other = sworn_test_path(s.dir, "other.yaml");
    sworn_test_write_file(other, deny_all, strlen(deny_all), 0644);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(other, path), 0);
    ar = reload(&s);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_ERROR);
    assert_non_null(strstr(ar->error->message, "symbolic link"));
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    sworn_stack_expect_path(&s, "after-link", "/allowed/a", SWORN__V1__EFFECT__EFFECT_ALLOW);
    /* The file itself, but world-writable. */
    assert_int_equal(unlink(path), 0);
    sworn_test_write_file(path, deny_all, strlen(deny_all), 0644);
    assert_int_equal(chmod(path, 0666), 0);
    ar = reload(&s);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_ERROR);
    assert_non_null(strstr(ar->error->message, "mode 0666"));
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    sworn_stack_expect_path(&s, "after-mode", "/allowed/a", SWORN__V1__EFFECT__EFFECT_ALLOW);
    /* Put right: taken. */
    assert_int_equal(chmod(path, 0644), 0);
    ar = reload(&s);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RELOAD_POLICY);
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    sworn_stack_expect_path(&s, "after-fix", "/allowed/a", SWORN__V1__EFFECT__EFFECT_DENY);
    free(other);
    free(path);
    assert_int_equal(sworn_stack_down(&s), 0);
}

static void test_policy_reload(void **state)
{
    struct sworn_stack s;
    Sworn__V1__AdminResponse *ar;
    Sworn__V1__DecisionReply *r;
    char *path, *orig;
    size_t orig_len;
    uint8_t old_digest[32];
    struct sworn_log *log;
    uint8_t entry[SWORN_FRAME_ENTRY_MAX];
    size_t len;
    Sworn__V1__Entry *e;
    uint64_t failed_index = 0, allow_index;
    static const char broken[] = "version: 1\nrules:\n  - id: x\n    effect: perhaps\n";
    static const char deny_all[] = "version: 2\nrules:\n  - id: none\n    effect: deny\n";

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    path = sworn_test_path(s.dir, "policy.yaml");
    orig = sworn_test_read_file(path, &orig_len);
    sworn_stack_expect_path(&s, "before", "/allowed/a", SWORN__V1__EFFECT__EFFECT_ALLOW);

    sworn_test_write_file(path, broken, strlen(broken), 0644);
    ar = reload(&s);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_ERROR);
    assert_non_null(strstr(ar->error->message, "policy.yaml:4:"));
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    /* Still the old policy. */
    sworn_stack_expect_path(&s, "during", "/allowed/a", SWORN__V1__EFFECT__EFFECT_ALLOW);

    /* A good policy that denies everything. */
    sworn_test_write_file(path, deny_all, strlen(deny_all), 0644);
    ar = reload(&s);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RELOAD_POLICY);
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    r = sworn_stack_decide_path(&s, "after", "/allowed/a");
    sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    allow_index = r->decision->log_index;
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);

    /* The record: the first policy, the refused reload with its error, the new policy, and the
     * last decision carries the new policy's digest. */
    assert_int_equal(sworn_log_open(s.log_db, &log), 0);
    assert_int_equal(sworn_log_read_entry(log, 1, entry, sizeof(entry), &len), 0);
    e = sworn_frame_unpack_entry(entry, len);
    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_POLICY_LOADED);
    memcpy(old_digest, e->policy_loaded->digest.data, 32);
    sworn__v1__entry__free_unpacked(e, NULL);
    for (uint64_t i = 2; i < sworn_log_size(log); i++) {
        assert_int_equal(sworn_log_read_entry(log, i, entry, sizeof(entry), &len), 0);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        if (e->kind_case == SWORN__V1__ENTRY__KIND_POLICY_LOADED) {
            uint8_t want[32];

            /* Each digest is of the bytes that reload read (the refused ones, then the new). */
            if (failed_index == 0) {
                failed_index = i;
                assert_non_null(strstr(e->policy_loaded->error, "effect"));
                EVP_Digest(broken, strlen(broken), want, NULL, EVP_sha256(), NULL);
            } else {
                assert_string_equal(e->policy_loaded->error, "");
                assert_memory_not_equal(e->policy_loaded->digest.data, old_digest, 32);
                memcpy(old_digest, e->policy_loaded->digest.data, 32);
                EVP_Digest(deny_all, strlen(deny_all), want, NULL, EVP_sha256(), NULL);
            }
            assert_memory_equal(e->policy_loaded->digest.data, want, 32);
        }
        if (i == allow_index) {
            assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
            assert_memory_equal(e->decision->policy_digest.data, old_digest, 32);
        }
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    assert_true(failed_index > 0);
    sworn_log_close(log);
    sworn_test_write_file(path, orig, orig_len, 0644);
    free(orig);
    free(path);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* A budget spent before a crash stays spent after the restart (rebuilt from the log). */
static void test_budget_survives_crash(void **state)
{
    struct sworn_stack s;
    char id[32];

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --test-clock"), 0);
    /* The sample budget is 3 per minute, windows aligned to the minute: the daemon's clock is
     * moved to one second into a minute, so the whole test runs inside one window. */
    sworn_stack_clock_advance(&s, (61000 - sworn_stack_clock_unix_ms(&s) % 60000) % 60000);
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof(id), "budget-%d", i);
        sworn_stack_expect_path(&s, id, "/budget/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    }
    sworn_stack_expect_path(&s, "budget-3", "/budget/x", SWORN__V1__EFFECT__EFFECT_DENY);
    sworn_stack_kill_daemon(&s);
    assert_int_equal(sworn_stack_start(&s), 0);
    sworn_stack_expect_path(&s, "budget-4", "/budget/x", SWORN__V1__EFFECT__EFFECT_DENY);
    /* The next minute is a new window: the budget allows again. */
    sworn_stack_clock_advance(&s, 60000);
    sworn_stack_expect_path(&s, "budget-5", "/budget/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/*
 * Finding 11: the replay at start walked back at most a fixed number of entries (10 million) and
 * silently forgot the allows before them, so a long log gave the agent a fresh budget at each
 * restart. Here two allows of the 3-per-minute budget are followed by more entries than a small
 * horizon (12 denies, 16 entries in the window), the clock moves 20 s (still the same window),
 * and the daemon restarts: the two allows still count (one more allow, then a deny). The code
 * before the fix, with its horizon set to 8 entries as a test-sized stand-in for 10 million,
 * allowed three more. budgets.replay_max_entries, the operator's bound on the walk, refuses the
 * start when the window holds more entries than it, rather than under-count.
 */
static void test_budget_replay_whole_window(void **state)
{
    struct sworn_stack s;
    char id[32], *log_path, *log_text;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --test-clock"), 0);
    /* One second into a minute: the whole test runs inside one window of the budget. */
    sworn_stack_clock_advance(&s, (61000 - sworn_stack_clock_unix_ms(&s) % 60000) % 60000);
    for (int i = 0; i < 2; i++) {
        snprintf(id, sizeof(id), "window-allow-%d", i);
        sworn_stack_expect_path(&s, id, "/budget/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    }
    for (int i = 0; i < 12; i++) {
        snprintf(id, sizeof(id), "window-deny-%d", i);
        sworn_stack_expect_path(&s, id, "/nothing/here", SWORN__V1__EFFECT__EFFECT_DENY);
    }
    sworn_stack_clock_advance(&s, 20000);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_stack_sh(&s, "cp decisiond.yaml decisiond.base"), 0);

    /* No bound (the default): the whole window is replayed. */
    assert_int_equal(sworn_stack_start(&s), 0);
    sworn_stack_expect_path(&s, "window-allow-2", "/budget/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn_stack_expect_path(&s, "window-over", "/budget/x", SWORN__V1__EFFECT__EFFECT_DENY);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);

    /* A bound smaller than the window's entries: the start is refused, and says why. */
    assert_int_equal(sworn_stack_sh(&s, "{ cat decisiond.base;"
                                        " printf 'budgets:\\n  replay_max_entries: 8\\n'; }"
                                        " > decisiond.yaml"),
                     0);
    assert_int_equal(sworn_stack_start(&s), -1);
    log_path = sworn_test_path(s.dir, "decisiond.log");
    log_text = sworn_test_read_file(log_path, NULL);
    assert_non_null(strstr(log_text, "holds more than 8 log entries (budgets.replay_max_entries)"));
    free(log_text);
    free(log_path);

    /* A bound the window fits in: the start goes on, the budget still spent. */
    assert_int_equal(sworn_stack_sh(&s, "{ cat decisiond.base;"
                                        " printf 'budgets:\\n  replay_max_entries: 1000\\n'; }"
                                        " > decisiond.yaml"),
                     0);
    assert_int_equal(sworn_stack_start(&s), 0);
    sworn_stack_expect_path(&s, "window-over-2", "/budget/x", SWORN__V1__EFFECT__EFFECT_DENY);
    assert_int_equal(sworn_stack_sh(&s, "cp decisiond.base decisiond.yaml"), 0);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/*
 * Finding 7 of the policy review: an ALLOW charges the budgets of every matching allow rule, and
 * the replay at start must charge the same set. Before, the replay charged only the rule named
 * in rule_id: an allow decided by read-all (no budget) that spent pay-budget's only unit was
 * forgotten at a restart, and pay-budget allowed once more.
 */
static void test_budget_replay_every_matching_rule(void **state)
{
    static const char policy[] = "rules:\n"
                                 "  - id: read-all\n"
                                 "    effect: allow\n"
                                 "    methods: [GET]\n"
                                 "  - id: pay-budget\n"
                                 "    effect: allow\n"
                                 "    resource: {paths: [\"/pay/**\"]}\n"
                                 "    budget: {count: 1, window: 1h}\n"
                                 "  - id: no-secret\n"
                                 "    effect: deny\n"
                                 "    resource: {paths: [\"/pay/secret/**\"]}\n";
    struct sworn_stack s;
    char *dir = sworn_test_tmpdir("f7policy"), *p = sworn_test_path(dir, "policy.yaml"), opts[600];
    char *log_path, *log_text;

    (void)state;
    sworn_test_write_file(p, policy, strlen(policy), 0644);
    snprintf(opts, sizeof(opts), "--no-tpm --file-key --test-clock --policy %s", p);
    assert_int_equal(sworn_stack_up(&s, opts), 0);
    /* One second into an hour: the whole test runs inside one window of the budget. */
    sworn_stack_clock_advance(&s, (3601000 - sworn_stack_clock_unix_ms(&s) % 3600000) % 3600000);
    sworn_stack_expect_path(&s, "f7-pay-1", "/pay/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn_stack_expect_path(&s, "f7-pay-2", "/pay/x", SWORN__V1__EFFECT__EFFECT_DENY);
    sworn_stack_expect_path(&s, "f7-other", "/other", SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn_stack_clock_advance(&s, 20000);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_stack_start(&s), 0);
    /* The allow of f7-pay-1 (rule_id read-all) still counts in pay-budget after the restart. */
    sworn_stack_expect_path(&s, "f7-pay-3", "/pay/x", SWORN__V1__EFFECT__EFFECT_DENY);
    sworn_stack_expect_path(&s, "f7-other-2", "/other", SWORN__V1__EFFECT__EFFECT_ALLOW);
    /* The policy's warning (policy/lint.h) is logged at each start, with its position. */
    log_path = sworn_test_path(s.dir, "decisiond.log");
    log_text = sworn_test_read_file(log_path, NULL);
    assert_non_null(log_text);
    assert_non_null(strstr(log_text, "\"event\":\"policy_warning\""));
    assert_non_null(strstr(log_text, "\"line\":9,\"col\":5,\"rule\":\"no-secret\""));
    assert_non_null(strstr(log_text, "path pattern \\\"/pay/secret/**\\\" does not match"));
    {
        int starts = 0;

        for (const char *c = log_text; (c = strstr(c, "\"event\":\"policy_warning\"")) != NULL; c++)
            starts++;
        assert_int_equal(starts, 2); /* the first start and the restart */
    }
    free(log_text);
    /* A reload logs the new policy's warnings too. */
    {
        static const char more[] = "  - id: no-evil\n"
                                   "    effect: deny\n"
                                   "    resource: {hosts: [\"**.evil.com\"]}\n";
        char *pp = sworn_test_path(s.dir, "policy.yaml"), *text;
        Sworn__V1__AdminResponse *ar;

        assert_true(asprintf(&text, "%s%s", policy, more) > 0);
        sworn_test_write_file(pp, text, strlen(text), 0644);
        ar = reload(&s);
        assert_non_null(ar);
        assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RELOAD_POLICY);
        sworn__v1__admin_response__free_unpacked(ar, NULL);
        log_text = sworn_test_read_file(log_path, NULL);
        assert_non_null(log_text);
        assert_non_null(strstr(log_text, "\"line\":12,\"col\":5,\"rule\":\"no-evil\""));
        free(log_text);
        free(text);
        free(pp);
    }
    free(log_path);
    assert_int_equal(sworn_stack_down(&s), 0);
    free(p);
    free(dir);
}

struct quote_walk {
    struct sworn_log *log;
    const uint8_t *ak;
    size_t ak_len;
    const uint8_t *pcr23_first, *pcr23_second; /* PCR 23 after each measured start */
    uint64_t second_start;                     /* index of the second Startup entry */
    struct sv_quote_clock prev;
    int count;
};

/* Each stored quote verifies with the independent checker against its checkpoint and the PCR 23
 * value of the measured start, and TPM time goes forward from one to the next. */
static int check_quote(void *arg, uint64_t size, const uint8_t *attest, size_t attest_len,
                       const uint8_t *sig, size_t sig_len)
{
    struct quote_walk *w = arg;
    struct sv_quote_policy policy;
    struct sv_quote_result res;
    struct sworn_note note;
    char text[4096], why[256];
    size_t len;
    uint64_t got;
    uint8_t extra[32];
    enum sv_quote_reason r;

    memset(&policy, 0, sizeof(policy));
    policy.pcr_mask = 1u << 23;
    /* A checkpoint that includes the second Startup entry was quoted after the second start. */
    memcpy(policy.pcr_values[23], size > w->second_start ? w->pcr23_second : w->pcr23_first, 32);
    assert_int_equal(sworn_log_get_checkpoint(w->log, size, text, sizeof(text), &len, &got), 0);
    assert_int_equal(sworn_note_parse(text, len, &note), 0);
    EVP_Digest(note.text, note.text_len, extra, NULL, EVP_sha256(), NULL);
    r = sv_quote_check(&policy, w->ak, w->ak_len, attest, attest_len, sig, sig_len, extra, &res,
                       why, sizeof(why));
    if (r != SV_QUOTE_OK)
        fail_msg("quote of checkpoint %llu: %s: %s", (unsigned long long)size,
                 sv_quote_reason_name(r), why);
    if (w->count > 0)
        assert_int_equal(sv_quote_time_order(&w->prev, &res.clock, NULL), SV_ORDER_OK);
    w->prev = res.clock;
    w->count++;
    return 0;
}

static Sworn__V1__Entry *read_entry(struct sworn_log *log, uint64_t index)
{
    uint8_t entry[SWORN_FRAME_ENTRY_MAX];
    size_t len;

    assert_int_equal(sworn_log_read_entry(log, index, entry, sizeof(entry), &len), 0);
    return sworn_frame_unpack_entry(entry, len);
}

/*
 * Issue 4 through the daemon: the Startup entry lists what was measured, its digests are those of
 * the files, replaying them onto PCR 23 before gives PCR 23 after, and every quote of every
 * checkpoint verifies (our own checker: AK, magic, type, signer, extraData = SHA-256 of the
 * checkpoint text, PCR 23 = the measured value, signature) in TPM time order. A restart measures
 * again, starting from the value the previous start left.
 */
static void test_measured_start_and_quotes(void **state)
{
    struct sworn_stack s;
    Sworn__V1__Entry *first, *second = NULL;
    struct sworn_log *log;
    struct quote_walk w;
    char *ak_dir, *ak_path;
    uint8_t *ak;
    size_t ak_len;
    uint64_t second_index = 0;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--file-key --test-clock"), 0);
    for (int i = 0; i < 3; i++) {
        char id[16];

        snprintf(id, sizeof(id), "m-%d", i);
        sworn_stack_expect_path(&s, id, "/allowed/m", SWORN__V1__EFFECT__EFFECT_ALLOW);
        /* A quoted checkpoint in between: past the 1 s tpm.quote_min_interval, then stored. */
        sworn_stack_clock_advance(&s, 1100);
        sworn_stack_checkpoint_now(&s);
    }
    /* A second start on the same TPM measures again. */
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_stack_start(&s), 0);
    sworn_stack_expect_path(&s, "m-after", "/allowed/m", SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);

    /* The auditor's AK, from the same TPM (swtpm is still running). */
    ak_dir = sworn_test_path(s.dir, "ak");
    assert_int_equal(sworn_stack_sh(&s,
                                    "mkdir -p ak && \"%s\" provision --tcti \"$TCTI\" "
                                    "--out-dir ak >/dev/null 2>&1",
                                    sworn_test_bin("SWORN_TPM_BIN")),
                     0);
    ak_path = sworn_test_path(ak_dir, "ak.pub");
    ak = (uint8_t *)sworn_test_read_file(ak_path, &ak_len);

    assert_int_equal(sworn_log_open(s.log_db, &log), 0);
    first = read_entry(log, 0);
    assert_non_null(first);
    assert_int_equal(first->kind_case, SWORN__V1__ENTRY__KIND_STARTUP);
    /* sworn-decisiond, sworn-signer, the configuration, the policy. */
    assert_int_equal(first->startup->n_files, 4);
    assert_non_null(strstr(first->startup->files[1]->path, "/sworn-signer"));
    {
        /* The digests are the files' own, and they replay onto PCR 23. */
        uint8_t pcr[32], cat[64];

        memcpy(pcr, first->startup->pcr23_before.data, 32);
        for (size_t i = 0; i < first->startup->n_files; i++) {
            const Sworn__V1__MeasuredFile *mf = first->startup->files[i];
            size_t flen;
            char *data = sworn_test_read_file(mf->path, &flen);
            uint8_t h[32];

            assert_true(mf->path[0] == '/');
            EVP_Digest(data, flen, h, NULL, EVP_sha256(), NULL);
            assert_memory_equal(h, mf->sha256.data, 32);
            free(data);
            memcpy(cat, pcr, 32);
            memcpy(cat + 32, mf->sha256.data, 32);
            EVP_Digest(cat, 64, pcr, NULL, EVP_sha256(), NULL);
        }
        assert_memory_equal(pcr, first->startup->pcr23.data, 32);
    }
    for (uint64_t i = 1; i < sworn_log_size(log) && second == NULL; i++) {
        Sworn__V1__Entry *e = read_entry(log, i);

        assert_non_null(e);
        if (e->kind_case == SWORN__V1__ENTRY__KIND_STARTUP) {
            second = e;
            second_index = i;
        } else {
            sworn__v1__entry__free_unpacked(e, NULL);
        }
    }
    assert_non_null(second);
    /* The second start began where the first left PCR 23. */
    assert_memory_equal(second->startup->pcr23_before.data, first->startup->pcr23.data, 32);

    /* Quotes of the first run show the first start's PCR 23; of the second run, the second's. */
    memset(&w, 0, sizeof(w));
    w.log = log;
    w.ak = ak;
    w.ak_len = ak_len;
    w.pcr23_first = first->startup->pcr23.data;
    w.pcr23_second = second->startup->pcr23.data;
    w.second_start = second_index;
    assert_int_equal(sworn_log_each_quote(log, check_quote, &w), 0);
    assert_true(w.count >= 3);
    sworn_log_close(log);
    sworn__v1__entry__free_unpacked(first, NULL);
    sworn__v1__entry__free_unpacked(second, NULL);
    free(ak);
    free(ak_path);
    free(ak_dir);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* Send one TokenExchange on a new connection; returns the reply. */
static Sworn__V1__DecisionReply *exchange(struct sworn_stack *s, const char *id,
                                          const char *allow_id, const char *cred_id)
{
    Sworn__V1__TokenExchange ex = SWORN__V1__TOKEN_EXCHANGE__INIT;
    Sworn__V1__TokenValue at = SWORN__V1__TOKEN_VALUE__INIT, rt = SWORN__V1__TOKEN_VALUE__INIT;
    Sworn__V1__TokenValue *tv[2] = {&at, &rt};
    uint8_t *frame, *body;
    size_t frame_len, len;
    Sworn__V1__DecisionReply *r;
    int fd = sworn_stack_connect(s->decision);

    assert_true(fd >= 0);
    at.field = "access_token";
    at.value.data = (uint8_t *)"Bearer real-access-9f2c";
    at.value.len = strlen("Bearer real-access-9f2c");
    rt.field = "refresh_token";
    rt.value.data = (uint8_t *)"real-refresh-77aa";
    rt.value.len = strlen("real-refresh-77aa");
    ex.request_id = (char *)id;
    ex.allow_request_id = (char *)allow_id;
    ex.credential_id = (char *)cred_id;
    ex.tokens = tv;
    ex.n_tokens = 2;
    assert_int_equal(sworn_frame_pack_token_exchange(&ex, &frame, &frame_len), 0);
    assert_int_equal(sworn_stack_exchange(fd, frame, frame_len, 30000, &body, &len), 0);
    r = sworn_frame_unpack_reply(body, len);
    assert_non_null(r);
    free(frame);
    free(body);
    close(fd);
    return r;
}

/*
 * OAuth token interception: after an allow released the demo credential, the proxy hands the
 * real tokens of the token endpoint's response to decisiond, which stores them under the demo
 * credential's scope and answers symbolic tokens; presenting one later releases the stored real
 * value (and only inside that scope). The record holds hashes, never the values; an exchange not
 * backed by a recent allow of that credential is refused and recorded.
 */
static void test_token_exchange(void **state)
{
    struct sworn_stack s;
    struct sworn_stack_req r;
    Sworn__V1__DecisionReply *rep, *ex;
    Sworn__V1__Decision *d;
    struct sworn_log *log;
    uint8_t token_hash[32];
    const Sworn__V1__TokenExchangeResult *res;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    /* Not backed by an allow: refused. */
    ex = exchange(&s, "x-0", "never-allowed", "demo");
    assert_int_equal(ex->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
    sworn__v1__decision_reply__free_unpacked(ex, NULL);

    rep = sworn_stack_decide_path(&s, "oauth-1", "/with-credential/oauth/token");
    sworn_stack_expect_decision(rep, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_non_null(rep->decision->credential);
    sworn__v1__decision_reply__free_unpacked(rep, NULL);
    /* Another credential than the one that allow released: refused. */
    ex = exchange(&s, "x-1", "oauth-1", "other");
    assert_int_equal(ex->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
    sworn__v1__decision_reply__free_unpacked(ex, NULL);

    ex = exchange(&s, "x-2", "oauth-1", "demo");
    assert_int_equal(ex->body_case, SWORN__V1__DECISION_REPLY__BODY_TOKEN_EXCHANGE);
    res = ex->token_exchange;
    assert_int_equal(res->n_tokens, 2);
    assert_string_equal(res->tokens[0]->field, "access_token");
    assert_true(strncmp(res->tokens[0]->symbolic, "sym_", 4) == 0);
    assert_true(strncmp(res->tokens[0]->credential_id, "demo.oauth.", 11) == 0);
    assert_string_not_equal(res->tokens[0]->symbolic, res->tokens[1]->symbolic);

    /* The agent presents the minted symbolic access token: the real one is released. */
    sworn_stack_req_init(&r, "oauth-2", "agent-1", "/with-credential/api/me");
    EVP_Digest(res->tokens[0]->symbolic, strlen(res->tokens[0]->symbolic), token_hash, NULL,
               EVP_sha256(), NULL);
    r.context.credential_token_sha256.data = token_hash;
    r.context.credential_token_sha256.len = 32;
    rep = sworn_stack_decide(&s, &r);
    d = sworn_stack_expect_decision(rep, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_non_null(d->credential);
    assert_string_equal(d->credential->id, res->tokens[0]->credential_id);
    assert_int_equal(d->credential->value.len, strlen("Bearer real-access-9f2c"));
    assert_memory_equal(d->credential->value.data, "Bearer real-access-9f2c",
                        d->credential->value.len);
    sworn__v1__decision_reply__free_unpacked(rep, NULL);
    /* Outside the scope (another path) the minted credential is not released: a deny. */
    sworn_stack_req_init(&r, "oauth-3", "agent-1", "/allowed/x");
    r.context.credential_token_sha256.data = token_hash;
    r.context.credential_token_sha256.len = 32;
    rep = sworn_stack_decide(&s, &r);
    sworn_stack_expect_decision(
        rep, SWORN__V1__EFFECT__EFFECT_ALLOW); /* the rule injects nothing there */
    assert_null(rep->decision->credential);
    sworn__v1__decision_reply__free_unpacked(rep, NULL);

    /* The record: a CredentialsMinted entry with hashes, and no real value anywhere. */
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_log_open(s.log_db, &log), 0);
    {
        Sworn__V1__Entry *e = read_entry(log, res->log_index);
        uint8_t h[32];

        assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED);
        assert_int_equal(e->credentials_minted->n_minted, 2);
        assert_string_equal(e->credentials_minted->from_credential_id, "demo");
        EVP_Digest("Bearer real-access-9f2c", strlen("Bearer real-access-9f2c"), h, NULL,
                   EVP_sha256(), NULL);
        assert_memory_equal(e->credentials_minted->minted[0]->value_sha256.data, h, 32);
        assert_memory_equal(e->credentials_minted->minted[0]->symbolic_sha256.data, token_hash, 32);
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    for (uint64_t i = 0; i < sworn_log_size(log); i++) {
        uint8_t entry[SWORN_FRAME_ENTRY_MAX];
        size_t len;

        assert_int_equal(sworn_log_read_entry(log, i, entry, sizeof(entry), &len), 0);
        assert_null(memmem(entry, len, "real-access-9f2c", 16));
        assert_null(memmem(entry, len, "real-refresh-77aa", 17));
    }
    sworn_log_close(log);
    sworn__v1__decision_reply__free_unpacked(ex, NULL);
    /* The auditor's verifier accepts the record, CredentialsMinted entry included (a development
     * stack, hardening.development: true: the policy accepts that knowingly). */
    sworn_stack_dev_trust(&s);
    assert_int_equal(
        sworn_stack_sh(&s, "\"%s\" verify --policy trust.txt --no-progress tiles >verify.out",
                       sworn_test_bin("SWORN_VERIFY_BIN")),
        0);
    assert_int_equal(sworn_stack_down(&s), 0);
}

static int find_quote(void *arg, uint64_t size, const uint8_t *attest, size_t attest_len,
                      const uint8_t *sig, size_t sig_len)
{
    uint64_t *want = arg;

    (void)attest;
    (void)attest_len;
    (void)sig;
    (void)sig_len;
    if (size == *want)
        *want = 0;
    return 0;
}

/*
 * The last word is quoted: a checkpoint made inside tpm.quote_min_interval stays unquoted, and
 * when the log does not grow after it, the stop signs that size again and quotes it, and the
 * export carries that quote.
 */
static void test_final_checkpoint_quoted(void **state)
{
    struct sworn_stack s;
    struct sworn_log *log;
    uint64_t size, want;
    char *path, rel[64];

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--file-key --checkpoint-interval 1h --test-clock"), 0);
    sworn_stack_expect_path(&s, "last-1", "/allowed/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    /* Right after the start's quoted checkpoint (the test clock stands still): this one falls
     * inside the 1 s interval. The call answers once the checkpoint is stored. */
    size = sworn_stack_checkpoint_now(&s);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_log_open(s.log_db, &log), 0);
    assert_int_equal(sworn_log_size(log), size);
    want = size;
    assert_int_equal(sworn_log_each_quote(log, find_quote, &want), 0);
    assert_int_equal(want, 0);
    sworn_log_close(log);
    snprintf(rel, sizeof(rel), "tiles/sworn/quote/%llu.attest", (unsigned long long)size);
    path = sworn_test_path(s.dir, rel);
    assert_true(access(path, F_OK) == 0);
    free(path);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/*
 * An operator's CheckpointNow is quoted even inside tpm.quote_min_interval: it waits for the
 * interval's end (real clock). Two in a row, each after a new decision, the second certainly
 * inside the interval after the first's quote: both sizes have a stored quote while the daemon
 * runs (not only the final one at stop).
 */
static void test_checkpoint_now_quoted(void **state)
{
    struct sworn_stack s;
    uint64_t size[2];

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--file-key --checkpoint-interval 1h"), 0);
    for (int i = 0; i < 2; i++) {
        char id[16];

        snprintf(id, sizeof(id), "now-%d", i);
        sworn_stack_expect_path(&s, id, "/allowed/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
        size[i] = sworn_stack_checkpoint_now(&s);
    }
    assert_true(size[1] > size[0]);
    /* The round exports before CheckpointNow answers: each size's quote is there already. */
    for (int i = 0; i < 2; i++) {
        char rel[64], *path;

        snprintf(rel, sizeof(rel), "tiles/sworn/quote/%llu.attest", (unsigned long long)size[i]);
        path = sworn_test_path(s.dir, rel);
        if (access(path, F_OK) != 0)
            fail_msg("the CheckpointNow of size %llu has no quote", (unsigned long long)size[i]);
        free(path);
    }
    assert_int_equal(sworn_stack_down(&s), 0);
}

/*
 * The keyring pins the key: with a keyring signed by its root that lists the signer's key,
 * decisiond starts and serves; with one that does not list it, or an unsigned one, it refuses
 * to start and says why.
 */
static void test_keyring_pins_the_key(void **state)
{
    struct sworn_stack s;
    char *log_path, *log_text;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(
        sworn_stack_sh(
            &s,
            "L=\"%s\"; H=\"%s\";"
            " openssl pkey -in signer.pem -pubout -outform DER -out signer.spki 2>/dev/null"
            " && V=$(\"$L\" keygen --name root-a.example --out root.key)"
            " && \"$H\" keyring init --out kr1.txt --threshold 1 --root-vkey \"$V\""
            " && \"$H\" keyring add --in kr1.txt --out kr2.txt --spki signer.spki --purpose"
            " checkpoint && \"$H\" keyring sign --in kr1.txt --out kr1.signed --root-key root.key"
            " && \"$H\" keyring sign --in kr2.txt --out kr2.signed --root-key root.key --prev"
            " kr1.signed && cp decisiond.yaml decisiond.base"
            " && { cat decisiond.base; echo \"keyring: $PWD/kr2.signed\"; } > decisiond.yaml",
            sworn_test_bin("SWORN_LOG_BIN"), sworn_test_bin("SWORN_HSM_BIN")),
        0);
    assert_int_equal(sworn_stack_start(&s), 0);
    sworn_stack_expect_path(&s, "kr-1", "/allowed/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);

    /* Version 1 does not list the key: refused. */
    assert_int_equal(sworn_stack_sh(&s, "{ cat decisiond.base; echo \"keyring: $PWD/kr1.signed\"; }"
                                        " > decisiond.yaml"),
                     0);
    assert_int_equal(sworn_stack_start(&s), -1);
    /* The unsigned text: refused. */
    assert_int_equal(sworn_stack_sh(&s, "{ cat decisiond.base; echo \"keyring: $PWD/kr2.txt\"; }"
                                        " > decisiond.yaml"),
                     0);
    assert_int_equal(sworn_stack_start(&s), -1);
    log_path = sworn_test_path(s.dir, "decisiond.log");
    log_text = sworn_test_read_file(log_path, NULL);
    assert_non_null(strstr(log_text, "the key is not in the keyring"));
    assert_non_null(strstr(log_text, "is not signed by its roots"));
    free(log_text);
    free(log_path);
    /* Back to the configuration without a keyring, for an orderly teardown. */
    assert_int_equal(sworn_stack_sh(&s, "cp decisiond.base decisiond.yaml"), 0);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* SHA-256 of what process pid runs (/proc/PID/exe: the file the kernel runs, whatever its path). */
static void sha256_of_exe(pid_t pid, uint8_t out[32])
{
    char path[64], *data;
    size_t len = 0;

    snprintf(path, sizeof(path), "/proc/%ld/exe", (long)pid);
    data = sworn_test_read_file(path, &len);
    EVP_Digest(data, len, out, NULL, EVP_sha256(), NULL);
    free(data);
}

/* The file of role in Startup entry e (exactly one). */
static const Sworn__V1__MeasuredFile *startup_file(const Sworn__V1__Entry *e,
                                                   Sworn__V1__MeasuredRole role)
{
    const Sworn__V1__MeasuredFile *f = NULL;

    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_STARTUP);
    for (size_t i = 0; i < e->startup->n_files; i++)
        if (e->startup->files[i]->role == role) {
            assert_null(f);
            f = e->startup->files[i];
        }
    assert_non_null(f);
    return f;
}

/* The newest Startup entry of the stopped stack's log, and the entry after it (free both). */
static void last_start(struct sworn_stack *s, Sworn__V1__Entry **start, Sworn__V1__Entry **next)
{
    struct sworn_log *log;

    assert_int_equal(sworn_log_open(s->log_db, &log), 0);
    *start = *next = NULL;
    for (uint64_t i = sworn_log_size(log); i-- > 0 && *start == NULL;) {
        Sworn__V1__Entry *e = read_entry(log, i);

        assert_non_null(e);
        if (e->kind_case == SWORN__V1__ENTRY__KIND_STARTUP) {
            *start = e;
            assert_true(i + 1 < sworn_log_size(log));
            *next = read_entry(log, i + 1);
            assert_non_null(*next);
        } else {
            sworn__v1__entry__free_unpacked(e, NULL);
        }
    }
    assert_non_null(*start);
    sworn_log_close(log);
}

/* Wait for a signer other than old (the monitor starts one when the engine asks); its pid. */
static pid_t new_signer(struct sworn_stack *s, pid_t old)
{
    for (int i = 0; i < 1500; i++) {
        pid_t p = sworn_stack_signer_child(s->decisiond_pid);

        if (p > 0 && p != old)
            return p;
        sworn_test_sleep_ms(20); /* polling for the process, with a deadline */
    }
    fail_msg("no new signer within 30 s");
    return -1;
}

/*
 * Finding 1 on the running stack: the Startup entry records what the processes run (the
 * engine's and the signer's /proc/PID/exe), the configuration and the policy as the daemon
 * parsed them, and the start's PolicyLoaded entry the same policy. signer.program is then a copy
 * in the stack's folder:
 *   - another file renamed over it after the start: every later signer still runs the file the
 *     monitor opened at start, the one measured (the code before the fix exec'd the path, so the
 *     new signer ran the replacement, unmeasured);
 *   - the measured file itself rewritten in place (through the monitor's own descriptor, what
 *     root can do): the monitor starts no signer from it (signer_not_started), the allows are
 *     recorded denies;
 *   - an engine handed another configuration digest than its own reading refuses to run.
 */
static void test_measured_what_runs(void **state)
{
    struct sworn_stack s;
    Sworn__V1__Entry *start, *next;
    uint8_t engine_sha[32], signer_sha[32], cfg_sha[32], sha[32];
    pid_t signer;
    char *text, *path;
    size_t len;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    sha256_of_exe(sworn_stack_engine(s.decisiond_pid), engine_sha);
    signer = sworn_stack_signer_child(s.decisiond_pid);
    assert_true(signer > 0);
    sha256_of_exe(signer, signer_sha);
    text = sworn_test_read_file(s.config, &len);
    EVP_Digest(text, len, cfg_sha, NULL, EVP_sha256(), NULL);
    free(text);
    /* A copy of the signer as signer.program, for what follows. */
    assert_int_equal(
        sworn_stack_sh(&s,
                       "cp /proc/%ld/exe sworn-signer && chmod 0755 sworn-signer && "
                       "cp sworn-signer sworn-signer.orig && sed -i "
                       "\"s|^  key: .*signer.pem\\$|&\\n  program: $PWD/sworn-signer|\" "
                       "decisiond.yaml && grep -q '^  program: ' decisiond.yaml",
                       (long)signer),
        0);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    last_start(&s, &start, &next);
    assert_memory_equal(
        startup_file(start, SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE)->sha256.data,
        engine_sha, 32);
    assert_memory_equal(
        startup_file(start, SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_SIGNER)->sha256.data,
        signer_sha, 32);
    assert_memory_equal(
        startup_file(start, SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_CONFIG)->sha256.data, cfg_sha,
        32);
    assert_int_equal(next->kind_case, SWORN__V1__ENTRY__KIND_POLICY_LOADED);
    assert_memory_equal(
        startup_file(start, SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY)->sha256.data,
        next->policy_loaded->digest.data, 32);
    sworn__v1__entry__free_unpacked(start, NULL);
    sworn__v1__entry__free_unpacked(next, NULL);

    /* Another file renamed over signer.program after the start: the same signer binary with a
     * byte more (it still runs). The next signer is the measured one. */
    assert_int_equal(sworn_stack_start(&s), 0);
    signer = sworn_stack_signer_child(s.decisiond_pid);
    assert_true(signer > 0);
    assert_int_equal(sworn_stack_sh(&s, "cp sworn-signer.orig swap && printf x >> swap && "
                                        "chmod 0755 swap && mv swap sworn-signer"),
                     0);
    assert_int_equal(kill(signer, SIGKILL), 0);
    signer = new_signer(&s, signer);
    sha256_of_exe(signer, sha);
    assert_memory_equal(sha, signer_sha, 32);
    sworn_stack_expect_allow(&s, "runs-1");
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);

    /* The measured file rewritten in place, while no signer runs it: refused. */
    assert_int_equal(sworn_stack_sh(&s, "cp sworn-signer.orig sworn-signer"), 0);
    assert_int_equal(sworn_stack_start(&s), 0);
    signer = sworn_stack_signer_child(s.decisiond_pid);
    assert_true(signer > 0);
    assert_int_equal(kill(sworn_stack_engine(s.decisiond_pid), SIGSTOP), 0);
    assert_int_equal(kill(signer, SIGKILL), 0);
    for (int i = 0; i < 1500 && !sworn_stack_pid_gone(signer); i++)
        sworn_test_sleep_ms(20);
    assert_true(sworn_stack_pid_gone(signer));
    assert_int_equal(sworn_stack_sh(&s, "printf x >> sworn-signer"), 0);
    assert_int_equal(kill(sworn_stack_engine(s.decisiond_pid), SIGCONT), 0);
    for (int i = 0; i < 5; i++) {
        char id[32];

        snprintf(id, sizeof(id), "runs-rewritten-%d", i);
        sworn_stack_expect_path(&s, id, "/allowed/x", SWORN__V1__EFFECT__EFFECT_DENY);
    }
    path = sworn_test_path(s.dir, "decisiond.log");
    text = sworn_test_read_file(path, NULL);
    assert_non_null(strstr(text, "signer_not_started"));
    assert_non_null(strstr(text, "was rewritten since decisiond started and measured it"));
    free(text);
    free(path);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);

    /* An engine whose configuration is not the one the monitor read. */
    assert_int_equal(sworn_stack_sh(&s,
                                    "cp sworn-signer.orig sworn-signer && "
                                    "\"$DECISIOND_BIN\" --engine --config \"$CONFIG\" "
                                    "--config-sha256 %064d 2>engine.err; test $? -ne 0 && "
                                    "grep -q \"changed between the monitor's reading and the "
                                    "engine's\" engine.err",
                                    0),
                     0);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* Whether the file at path holds the bytes of word. */
static int file_holds(const char *path, const char *word)
{
    size_t len, wlen = strlen(word);
    char *data = sworn_test_read_file(path, &len);
    int found = 0;

    for (size_t i = 0; !found && i + wlen <= len; i++)
        found = memcmp(data + i, word, wlen) == 0;
    free(data);
    return found;
}

/*
 * The test clock is in the tests' daemon only: sworn-decisiond has no code that reads
 * SWORN_TEST_CLOCK_FILE (docs/decisiond.md, "The test clock"), and the testclock binary, which
 * the other tests' stacks run with --test-clock, does (so this check can fail).
 */
static void test_clock_only_in_test_binary(void **state)
{
    (void)state;
    assert_false(file_holds(sworn_test_bin("SWORN_DECISIOND_BIN"), "SWORN_TEST_CLOCK_FILE"));
    assert_true(
        file_holds(sworn_test_bin("SWORN_DECISIOND_TESTCLOCK_BIN"), "SWORN_TEST_CLOCK_FILE"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_only_in_test_binary),
        cmocka_unit_test(test_recorded_before_effect),
        cmocka_unit_test(test_protocol_refusals),
        cmocka_unit_test(test_spoofing_characters_refused),
        cmocka_unit_test(test_escalations),
        cmocka_unit_test(test_policy_reload),
        cmocka_unit_test(test_policy_error_recorded),
        cmocka_unit_test(test_policy_file_checked),
        cmocka_unit_test(test_budget_survives_crash),
        cmocka_unit_test(test_budget_replay_whole_window),
        cmocka_unit_test(test_budget_replay_every_matching_rule),
        cmocka_unit_test(test_measured_start_and_quotes),
        cmocka_unit_test(test_measured_what_runs),
        cmocka_unit_test(test_token_exchange),
        cmocka_unit_test(test_final_checkpoint_quoted),
        cmocka_unit_test(test_checkpoint_now_quoted),
        cmocka_unit_test(test_keyring_pins_the_key),
    };

    if (getenv("SWORN_DECISIOND_BIN") == NULL) {
        fprintf(stderr, "test_decisiond: sworn-decisiond is not built\n");
        return 1;
    }
    /* One test by name (a glob), for a quick rerun: SWORN_TEST_FILTER=test_policy_reload. */
    if (getenv("SWORN_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("SWORN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
