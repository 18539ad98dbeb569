/*
 * test_decisiond_refusal.c -- requests the proxy refused itself (AuthorizationRequest.refusal,
 * a ProxyRefusal) through a real dev stack (scripts/dev-stack: decisiond, SoftHSM, the log).
 *
 * decisiond denies such a request by no rule, with the reason "refused by the proxy: <reason>",
 * before the policy (a path the stack's policy allows with a credential is denied, with no
 * credential and no receipt), and records it as every deny: the admin tail shows the entry with
 * the refusal, effect DENY, rule "", no credential, the canonical resource when the resource
 * has one and the raw target digest always; the independent verifier accepts each entry. A
 * duplicate request id is still the duplicate deny (the id is taken first). A refusal whose
 * resource is empty (no readable target: scheme and host "", port 0) is decided and recorded the
 * same way, without a canonical resource. A refusal out of shape (status 399 or 600, an empty
 * reason, a head digest of 31 bytes) makes the frame malformed: an ErrorFrame, recorded as a
 * Refused entry, as every malformed request is.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "err.h"
#include "frame.h"
#include "stack_fixture.h"
#include "sv_entry.h"
#include "testutil.h"

#define REASON "obs-fold (a header line continued on the next line)"

static const char head_text[] = "GET /with-credential/x HTTP/1.1\r\nX-A: 1\r\n 2\r\n\r\n";

/* The DecisionRecord at log index (the admin tail of the newest 64 entries holds it). OUT:
 * *tail, to free with sworn__v1__admin_response__free_unpacked. */
static const Sworn__V1__DecisionRecord *record_at(struct sworn_stack *s, uint64_t index,
                                                  Sworn__V1__AdminResponse **tail)
{
    const Sworn__V1__Entry *e = sworn_stack_entry_at(s, index, 64, tail);

    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
    return e->decision;
}

/* The verifier's own entry check accepts d's entry. */
static void verifier_accepts(const Sworn__V1__DecisionRecord *d)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    struct sv_entry_info info;
    char code[32], why[512];
    size_t n;
    uint8_t *b;

    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = (Sworn__V1__DecisionRecord *)d;
    n = sworn__v1__entry__get_packed_size(&e);
    b = malloc(n);
    assert_non_null(b);
    sworn__v1__entry__pack(&e, b);
    if (sv_entry_check(b, n, &info, code, why) != 0)
        fail_msg("the verifier refuses the entry: %s %s", code, why);
    free(b);
}

static void expect_raw(const Sworn__V1__DecisionRecord *d, const char *text)
{
    uint8_t h[32];

    SHA256((const unsigned char *)text, strlen(text), h);
    assert_int_equal(d->raw_target_sha256.len, 32);
    assert_memory_equal(d->raw_target_sha256.data, h, 32);
}

/*
 * Wait (up to 10 s: Refused entries are appended off the loop) for a Refused entry among the
 * newest 100 whose frame_sha256 is digest; checks its channel, peer, code and message.
 */
static void wait_refused(struct sworn_stack *s, const uint8_t digest[32], const char *what)
{
    for (int round = 0; round < 100; round++) {
        Sworn__V1__AdminResponse *r = sworn_stack_tail(s, 100);
        int found = 0;

        for (size_t i = 0; i < r->tail->n_entries && !found; i++) {
            const Sworn__V1__Entry *e = r->tail->entries[i];

            if (e->kind_case != SWORN__V1__ENTRY__KIND_REFUSED ||
                e->refused->frame_sha256.len != 32 ||
                memcmp(e->refused->frame_sha256.data, digest, 32) != 0)
                continue;
            assert_string_equal(e->refused->channel, "decision");
            assert_int_equal(e->refused->peer_uid, (uint32_t)getuid());
            assert_true(e->refused->code != 0);
            assert_non_null(strstr(e->refused->message, "refusal"));
            found = 1;
        }
        sworn__v1__admin_response__free_unpacked(r, NULL);
        if (found)
            return;
        sworn_test_sleep_ms(100);
    }
    fail_msg("no Refused entry for the malformed refusal %s", what);
}

static void test_refusals(void **state)
{
    struct sworn_stack s;
    struct sworn_stack_req q;
    Sworn__V1__ProxyRefusal rf = SWORN__V1__PROXY_REFUSAL__INIT;
    Sworn__V1__DecisionReply *r;
    Sworn__V1__Decision *d;
    Sworn__V1__AdminResponse *t;
    const Sworn__V1__DecisionRecord *rec;
    uint8_t head[32];
    uint64_t index;

    (void)state;
    SHA256((const unsigned char *)head_text, sizeof(head_text) - 1, head);
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);

    /* The policy allows this path with a credential; the proxy's refusal comes first. */
    sworn_stack_req_init(&q, "refused-1", "agent-1", "/with-credential/x");
    rf.status = 400;
    rf.reason = REASON;
    rf.head_sha256.data = head;
    rf.head_sha256.len = 32;
    q.req.refusal = &rf;
    r = sworn_stack_decide(&s, &q);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(d->rule_id, "");
    assert_string_equal(d->reason, "refused by the proxy: " REASON);
    assert_null(d->credential);
    assert_null(d->receipt);
    index = d->log_index;
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    rec = record_at(&s, index, &t);
    assert_int_equal(rec->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rec->rule_id, "");
    assert_string_equal(rec->reason, "refused by the proxy: " REASON);
    assert_string_equal(rec->credential_id, "");
    assert_int_equal(rec->credential_sha256.len, 0);
    assert_string_equal(rec->request->request_id, "refused-1");
    assert_non_null(rec->request->refusal);
    assert_int_equal(rec->request->refusal->status, 400);
    assert_string_equal(rec->request->refusal->reason, REASON);
    assert_int_equal(rec->request->refusal->head_sha256.len, 32);
    assert_memory_equal(rec->request->refusal->head_sha256.data, head, 32);
    assert_non_null(rec->canonical_resource); /* this resource has a canonical form */
    assert_string_equal(rec->canonical_resource->path, "/with-credential/x");
    expect_raw(rec, "http://127.0.0.1:8080/with-credential/x");
    verifier_accepts(rec);
    sworn__v1__admin_response__free_unpacked(t, NULL);
    /* The same request without the refusal: the policy's allow, with its credential (the
     * refusal was no rule's business, so nothing of the policy changed). */
    sworn_stack_req_init(&q, "not-refused-1", "agent-1", "/with-credential/x");
    r = sworn_stack_decide(&s, &q);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_non_null(d->credential);
    sworn__v1__decision_reply__free_unpacked(r, NULL);

    /* A duplicate id is the duplicate deny, also with a refusal: the id is taken first. */
    sworn_stack_req_init(&q, "refused-1", "agent-1", "/allowed/x");
    q.req.refusal = &rf;
    r = sworn_stack_decide(&s, &q);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(d->rule_id, "");
    assert_non_null(strstr(d->reason, "duplicate request id"));
    assert_null(strstr(d->reason, "refused by the proxy"));
    sworn__v1__decision_reply__free_unpacked(r, NULL);

    /* No readable target: an empty resource (scheme and host "", port 0, no path). */
    sworn_stack_req_init(&q, "refused-empty", "agent-1", "");
    q.resource.scheme = "";
    q.resource.host = "";
    q.resource.port = 0;
    q.req.context = NULL;
    rf.status = 431;
    rf.reason = "the request head is larger than 65536 bytes";
    rf.head_sha256.len = 0;
    q.req.refusal = &rf;
    r = sworn_stack_decide(&s, &q);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(d->rule_id, "");
    assert_string_equal(d->reason,
                        "refused by the proxy: the request head is larger than 65536 bytes");
    index = d->log_index;
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    rec = record_at(&s, index, &t);
    assert_int_equal(rec->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_non_null(rec->request->refusal);
    assert_int_equal(rec->request->refusal->status, 431);
    assert_int_equal(rec->request->refusal->head_sha256.len, 0);
    assert_string_equal(rec->request->resource->scheme, "");
    assert_int_equal(rec->request->resource->port, 0);
    assert_null(rec->canonical_resource); /* no canonical form */
    expect_raw(rec, "://:0");
    verifier_accepts(rec);
    sworn__v1__admin_response__free_unpacked(t, NULL);

    /* Out of shape: an ErrorFrame, and a Refused entry with the frame's digest; the connection
     * takes the next request. */
    for (int k = 0; k < 4; k++) {
        static const char *const ids[] = {"bad-399", "bad-600", "bad-noreason", "bad-head"};
        static const uint32_t codes[] = {SWORN_ERR_RANGE, SWORN_ERR_RANGE, SWORN_ERR_FORMAT,
                                         SWORN_ERR_FORMAT};
        Sworn__V1__DecisionReply *er;
        uint8_t *frame, digest[32], *body;
        size_t len, blen;
        int fd;

        sworn_stack_req_init(&q, ids[k], "agent-1", "/allowed/x");
        rf.status = k == 0 ? 399 : k == 1 ? 600 : 400;
        rf.reason = k == 2 ? "" : REASON;
        rf.head_sha256.data = head;
        rf.head_sha256.len = k == 3 ? 31 : 32;
        q.req.refusal = &rf;
        frame = sworn_stack_raw_frame(&q.req, &len, digest);
        fd = sworn_stack_connect(s.decision);
        assert_true(fd >= 0);
        assert_int_equal(sworn_stack_exchange(fd, frame, len, 30000, &body, &blen), 0);
        er = sworn_frame_unpack_reply(body, blen);
        assert_non_null(er);
        assert_int_equal(er->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
        assert_int_equal(er->error->code, codes[k]);
        assert_non_null(strstr(er->error->message, "refusal"));
        sworn__v1__decision_reply__free_unpacked(er, NULL);
        free(body);
        close(fd);
        free(frame);
        wait_refused(&s, digest, ids[k]);
    }
    /* None of them took its id: the same ids, well formed, are decided. */
    sworn_stack_expect_path(&s, "bad-399", "/allowed/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(sworn_stack_down(&s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
