/*
 * test_frame.c -- unit tests of wire/frame.c: the socket framing and the strict decoding of
 * sworn.proto's AuthorizationRequest, DecisionReply and Entry.
 *
 * Evidence:
 *   1. Round trips: each message packs, frames, goes through the incremental decoder one byte
 *      at a time and in one piece, unpacks, and re-packs to the same bytes.
 *   2. Hostile frames: length 0, SWORN_FRAME_MAX + 1 and 0xffffffff are refused after the
 *      4 header bytes; truncated headers and bodies yield no frame; garbage bodies, a wrong hash
 *      length, invalid UTF-8, an embedded NUL, unknown fields, an explicit default, missing
 *      required fields, a credential in a deny and over-long repeated fields are all refused.
 *   3. Envelopes: a request travels in a DecisionRequest of SWORN_WIRE_VERSION; a bare request
 *      (wire version 0), another or no version, an empty envelope and an admin request are
 *      refused as one; the admin envelopes are versioned too.
 */
#define _GNU_SOURCE /* memmem */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "frame.h"

static uint8_t hash_a[64], hash_b[64]; /* 64: room for the over-long hash tests */

static ProtobufCBinaryData bin(const uint8_t *p, size_t n)
{
    ProtobufCBinaryData b;

    b.data = (uint8_t *)p;
    b.len = n;
    return b;
}

/* A full request built on the caller's stack: every sub-message present. */
struct req_parts {
    Sworn__V1__AuthorizationRequest r;
    Sworn__V1__Principal principal;
    Sworn__V1__Resource resource;
    Sworn__V1__Context context;
    Sworn__V1__CoveredComponent cov;
    Sworn__V1__CoveredComponent *covp[1];
    char *headers[2];
    Sworn__V1__Delegation del;
    Sworn__V1__Actor actor;
    Sworn__V1__Actor *actorp[1];
    Sworn__V1__MayAct may;
    ProtobufCBinaryData tokens[1];
};

static void build_request(struct req_parts *q)
{
    Sworn__V1__AuthorizationRequest r = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource rs = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__Context cx = SWORN__V1__CONTEXT__INIT;
    Sworn__V1__CoveredComponent cv = SWORN__V1__COVERED_COMPONENT__INIT;
    Sworn__V1__Delegation dl = SWORN__V1__DELEGATION__INIT;
    Sworn__V1__Actor ac = SWORN__V1__ACTOR__INIT;
    Sworn__V1__MayAct ma = SWORN__V1__MAY_ACT__INIT;

    memset(hash_a, 0xa5, sizeof(hash_a));
    memset(hash_b, 0x5a, sizeof(hash_b));
    q->r = r;
    q->principal = pr;
    q->resource = rs;
    q->context = cx;
    q->cov = cv;
    q->del = dl;
    q->actor = ac;
    q->may = ma;

    q->r.request_id = "req-0001";
    q->principal.id = "agent-1";
    q->principal.sandbox = "sb-7";
    q->principal.uid = 100123;
    q->r.principal = &q->principal;
    q->r.operation = "http.request";
    q->resource.scheme = "https";
    q->resource.host = "api.example.com";
    q->resource.port = 443;
    q->resource.path = "/v1/charges?x=\xc3\xa9";
    q->r.resource = &q->resource;
    q->context.method = "POST";
    q->headers[0] = "content-type";
    q->headers[1] = "authorization";
    q->context.header_names = q->headers;
    q->context.n_header_names = 2;
    q->context.body_sha256 = bin(hash_a, 32);
    q->cov.name = "@method";
    q->cov.value_sha256 = bin(hash_b, 32);
    q->covp[0] = &q->cov;
    q->context.covered = q->covp;
    q->context.n_covered = 1;
    q->context.body_length = 1234;
    q->r.context = &q->context;
    q->del.subject = "user@example.com";
    q->del.issuer = "https://idp.example.com";
    q->actor.subject = "agent-1";
    q->actorp[0] = &q->actor;
    q->del.actors = q->actorp;
    q->del.n_actors = 1;
    q->may.result = SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED;
    q->del.may_act = &q->may;
    q->tokens[0] = bin(hash_a, 32);
    q->del.token_sha256 = q->tokens;
    q->del.n_token_sha256 = 1;
    q->r.delegation = &q->del;
    q->r.time_unix_ms = 1700000000123ull;
}

/* Feed a whole stream through a decoder, chunk bytes at a time; return the frames' count. */
static int feed_all(const uint8_t *p, size_t len, size_t chunk, const uint8_t *want, size_t wlen)
{
    struct sworn_frame_dec d;
    size_t off = 0;
    int frames = 0;

    sworn_frame_dec_init(&d);
    while (off < len) {
        size_t n = len - off < chunk ? len - off : chunk;
        const uint8_t *body;
        size_t blen;
        long used = sworn_frame_dec_feed(&d, p + off, n, &body, &blen);

        if (used < 0) {
            sworn_frame_dec_free(&d);
            return -1;
        }
        assert_true(used > 0);
        off += (size_t)used;
        if (body != NULL) {
            if (want != NULL) {
                assert_int_equal(blen, wlen);
                assert_memory_equal(body, want, wlen);
            }
            frames++;
        }
    }
    assert_true(sworn_frame_dec_idle(&d) || frames == 0);
    sworn_frame_dec_free(&d);
    return frames;
}

static void test_request_round_trip(void **state)
{
    struct req_parts q;
    uint8_t *f, *again;
    size_t flen, alen;
    Sworn__V1__AuthorizationRequest *m;

    (void)state;
    build_request(&q);
    assert_int_equal(sworn_frame_pack_request(&q.r, &f, &flen), 0);
    assert_true(flen > SWORN_FRAME_HDR_LEN);
    assert_int_equal(f[0], 0);
    assert_int_equal((size_t)f[2] << 8 | f[3], flen - SWORN_FRAME_HDR_LEN);
    assert_int_equal(feed_all(f, flen, 1, f + 4, flen - 4), 1);
    assert_int_equal(feed_all(f, flen, flen, f + 4, flen - 4), 1);

    m = sworn_frame_unpack_request(f + 4, flen - 4);
    assert_non_null(m);
    assert_string_equal(m->request_id, "req-0001");
    assert_string_equal(m->principal->id, "agent-1");
    assert_int_equal(m->resource->port, 443);
    assert_int_equal(m->context->n_covered, 1);
    assert_memory_equal(m->context->covered[0]->value_sha256.data, hash_b, 32);
    assert_int_equal(m->delegation->may_act->result, SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED);
    assert_int_equal(m->time_unix_ms, 1700000000123ull);
    assert_int_equal(sworn_frame_pack_request(m, &again, &alen), 0);
    assert_int_equal(alen, flen);
    assert_memory_equal(again, f, flen);
    sworn__v1__authorization_request__free_unpacked(m, NULL);
    free(again);
    free(f);
}

static uint8_t *raw_pack(const ProtobufCMessage *m, size_t *len);

/* Does q (packed without the checks) decode, and does the checked packer take it? */
static int request_ok(struct req_parts *q)
{
    uint8_t *b, *f;
    size_t blen, flen;
    Sworn__V1__AuthorizationRequest *m;
    int packed;

    b = raw_pack(&q->r.base, &blen);
    m = sworn_frame_unpack_request(b, blen);
    packed = sworn_frame_pack_request(&q->r, &f, &flen) == 0;
    if (packed)
        free(f);
    assert_int_equal(packed, m != NULL); /* the packer and the decoder hold one rule */
    if (m != NULL)
        sworn__v1__authorization_request__free_unpacked(m, NULL);
    free(b);
    return packed;
}

/*
 * ProxyRefusal (field 8): a request the proxy refused itself. Its shape (status 400..599,
 * reason 1..256 bytes, head_sha256 empty or 32 bytes), and the resource it relaxes (scheme and
 * host may be empty, the port 0) while every other rule holds.
 */
static void test_request_refusal(void **state)
{
    struct req_parts q;
    Sworn__V1__ProxyRefusal rf = SWORN__V1__PROXY_REFUSAL__INIT;
    Sworn__V1__AuthorizationRequest *m;
    uint8_t *f;
    size_t flen;
    char r256[SWORN_FRAME_REFUSAL_REASON_MAX + 1], r257[SWORN_FRAME_REFUSAL_REASON_MAX + 2];

    (void)state;
    memset(r256, 'r', sizeof(r256) - 1);
    r256[sizeof(r256) - 1] = '\0';
    memset(r257, 'r', sizeof(r257) - 1);
    r257[sizeof(r257) - 1] = '\0';
    build_request(&q);
    rf.status = 400;
    rf.reason = "obs-fold (a header line continued on the next line)";
    rf.head_sha256 = bin(hash_b, 32);
    q.r.refusal = &rf;
    /* Round trip, byte for byte, with the refusal's fields intact. */
    assert_int_equal(sworn_frame_pack_request(&q.r, &f, &flen), 0);
    m = sworn_frame_unpack_request(f + 4, flen - 4);
    assert_non_null(m);
    assert_non_null(m->refusal);
    assert_int_equal(m->refusal->status, 400);
    assert_string_equal(m->refusal->reason, rf.reason);
    assert_int_equal(m->refusal->head_sha256.len, 32);
    assert_memory_equal(m->refusal->head_sha256.data, hash_b, 32);
    sworn__v1__authorization_request__free_unpacked(m, NULL);
    free(f);

    /* docs/protocol.md's bytes: status 400, reason "bad", a head digest, as field 8. */
    {
        Sworn__V1__AuthorizationRequest only = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
        Sworn__V1__ProxyRefusal bad = SWORN__V1__PROXY_REFUSAL__INIT;
        uint8_t want[2 + 3 + 5 + 34], got[sizeof(want)];

        bad.status = 400;
        bad.reason = "bad";
        bad.head_sha256 = bin(hash_b, 32);
        only.refusal = &bad;
        memcpy(want,
               "\x42\x2a\x08\x90\x03\x12\x03"
               "bad\x1a\x20",
               12);
        memcpy(want + 12, hash_b, 32);
        assert_int_equal(sworn__v1__authorization_request__get_packed_size(&only), sizeof(want));
        assert_int_equal(sworn__v1__authorization_request__pack(&only, got), sizeof(want));
        assert_memory_equal(got, want, sizeof(want));
    }
    /* Status bounds: 400 and 599 in, 399, 600 and 0 out (SWORN_ERR_RANGE). */
    for (unsigned st = 0; st < 5; st++) {
        static const unsigned v[] = {400, 599, 399, 600, 0};

        build_request(&q);
        q.r.refusal = &rf;
        rf.status = v[st];
        assert_int_equal(request_ok(&q), st < 2);
        if (st >= 2)
            assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    }
    rf.status = 431;
    /* Reason: 1..256 bytes, UTF-8 without controls. */
    rf.reason = r256;
    assert_true(request_ok(&q));
    rf.reason = r257;
    assert_false(request_ok(&q));
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    rf.reason = "";
    assert_false(request_ok(&q));
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    rf.reason = "bad\x01byte";
    assert_false(request_ok(&q));
    rf.reason = "x";
    assert_true(request_ok(&q));
    /* head_sha256: empty or exactly 32 bytes. */
    rf.head_sha256 = bin(hash_b, 0);
    assert_true(request_ok(&q));
    rf.head_sha256 = bin(hash_b, 31);
    assert_false(request_ok(&q));
    rf.head_sha256 = bin(hash_b, 33);
    assert_false(request_ok(&q));
    rf.head_sha256 = bin(hash_b, 32);

    /* With a refusal the resource may be what could be read: empty scheme and host, port 0. */
    q.resource.scheme = "";
    q.resource.host = "";
    q.resource.port = 0;
    q.resource.path = "";
    assert_true(request_ok(&q));
    /* ... but still present, with ports above 65535 refused, and the rest required. */
    q.resource.port = 70000;
    assert_false(request_ok(&q));
    q.resource.port = 0;
    q.r.resource = NULL;
    assert_false(request_ok(&q));
    q.r.resource = &q.resource;
    q.r.operation = "";
    assert_false(request_ok(&q));
    q.r.operation = "http.request";
    q.r.request_id = "";
    assert_false(request_ok(&q));
    q.r.request_id = "req-0001";
    q.principal.id = "";
    assert_false(request_ok(&q));
    q.principal.id = "agent-1";
    assert_true(request_ok(&q));
    /* Without a refusal the old rules hold: the same resource is refused. */
    q.r.refusal = NULL;
    assert_false(request_ok(&q));
    q.resource.scheme = "https";
    q.resource.host = "h.example";
    assert_false(request_ok(&q)); /* port 0 */
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    q.resource.port = 443;
    assert_true(request_ok(&q));
}

/* Receipt form 1 (issue 16, docs/formats.md section 13) in a Decision: the shapes the decoder
 * takes, and each one it refuses (packing and unpacking check the same rules). */
/* Red team of issue 16 (B): fields the proxy fills for one kind of operation only are refused
 * on any other, and a verified delegation names an alg the proxy verifies; so decisiond never
 * records such an allow (sworn-verify refuses one: test_verify_content,
 * test_rt16_b_request_shapes). */
static void test_rt16_b_operation_fields(void **state)
{
    struct req_parts q;
    Sworn__V1__TokenCeiling tc = SWORN__V1__TOKEN_CEILING__INIT;
    Sworn__V1__DelegationVerification v = SWORN__V1__DELEGATION_VERIFICATION__INIT;

    (void)state;
    tc.field = "max_tokens";
    tc.tokens = 10;
    for (int i = 0; i < 10; i++) {
        int ok = 0;

        build_request(&q);
        switch (i) {
        case 0:
            q.r.resource->tool = "delete_all"; /* http.request */
            break;
        case 1:
            q.r.resource->uri = "file:///etc/shadow";
            break;
        case 2:
            q.r.resource->model = "o1-pro";
            break;
        case 3:
            q.r.context->model_api = "openai.chat";
            break;
        case 4:
            q.r.context->token_ceiling = &tc;
            break;
        case 5:
            q.r.operation = "mcp.tools/call";
            q.r.resource->tool = "read_file";
            q.r.resource->uri = "file:///srv/a";
            break;
        case 6:
            v.result = SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED;
            v.alg = "none";
            q.r.delegation->verification = &v;
            break;
        case 7: /* as the proxy sends them */
            q.r.operation = "mcp.resources/read";
            q.r.resource->uri = "file:///srv/a";
            v.result = SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED;
            v.alg = "ES256";
            q.r.delegation->verification = &v;
            ok = 1;
            break;
        case 8: /* may_act allowed, with no actor */
            q.r.delegation->n_actors = 0;
            break;
        default:
            q.r.operation = "model.call";
            q.r.resource->model = "gpt-4o";
            q.r.context->model_api = "openai.chat";
            q.r.context->token_ceiling = &tc;
            ok = 1;
            break;
        }
        if (ok)
            assert_int_equal(sworn_frame_check_request(&q.r), 0);
        else
            assert_int_equal(sworn_frame_check_request(&q.r), -1);
    }
}

static void test_receipt_forms(void **state)
{
    static const char params[] = "(\"@method\" \"sworn-entry\");created=1;tag=\"sworn\"";
    Sworn__V1__Decision d = SWORN__V1__DECISION__INIT;
    Sworn__V1__Receipt rc = SWORN__V1__RECEIPT__INIT;
    Sworn__V1__DecisionReply r = SWORN__V1__DECISION_REPLY__INIT;
    uint8_t sig[72], *f = NULL;
    char bad[1100];
    size_t flen;
    Sworn__V1__DecisionReply *m;

    (void)state;
    memset(sig, 0x30, sizeof(sig));
    memset(hash_a, 0xa5, sizeof(hash_a));
    d.request_id = "req-1";
    d.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    d.rule_id = "r";
    d.reason = "matched";
    d.entry_hash = bin(hash_a, 32);
    rc.key_id = bin(hash_a, 32);
    rc.signature = bin(sig, 64);
    rc.alg = 1;
    rc.form = 1;
    rc.created = 1764633600;
    rc.signature_params = (char *)params;
    d.receipt = &rc;
    r.body_case = SWORN__V1__DECISION_REPLY__BODY_DECISION;
    r.decision = &d;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), 0);
    m = sworn_frame_unpack_reply(f + 4, flen - 4);
    assert_non_null(m);
    assert_int_equal(m->decision->receipt->form, 1);
    assert_int_equal(m->decision->receipt->created, 1764633600);
    assert_string_equal(m->decision->receipt->signature_params, params);
    sworn__v1__decision_reply__free_unpacked(m, NULL);
    free(f);
    /* refused: each alone */
    rc.signature = bin(sig, 72); /* DER length in form 1 */
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    rc.signature = bin(sig, 64);
    rc.alg = 2; /* Ed25519 in form 1 */
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    rc.alg = 1;
    rc.created = 0;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    rc.created = 1000000000000000ULL;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    rc.created = 1;
    rc.signature_params = "";
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    rc.signature_params = "\"@method\"";
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    memset(bad, 'a', sizeof(bad) - 1);
    bad[0] = '(';
    bad[sizeof(bad) - 1] = '\0';
    rc.signature_params = bad; /* longer than 1024 */
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    bad[1024] = '\0'; /* 1024: taken */
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), 0);
    free(f);
    rc.signature_params = (char *)params;
    rc.form = 2;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    /* form 0 carries neither created nor params */
    rc.form = 0;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    rc.signature_params = "";
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    rc.created = 0;
    rc.signature = bin(sig, 72);
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), 0);
    free(f);
}

static void test_reply_round_trip(void **state)
{
    Sworn__V1__Decision d = SWORN__V1__DECISION__INIT;
    Sworn__V1__Receipt rc = SWORN__V1__RECEIPT__INIT;
    Sworn__V1__Credential cr = SWORN__V1__CREDENTIAL__INIT;
    Sworn__V1__ErrorFrame e = SWORN__V1__ERROR_FRAME__INIT;
    Sworn__V1__DecisionReply r = SWORN__V1__DECISION_REPLY__INIT;
    uint8_t sig[71], *f;
    size_t flen;
    Sworn__V1__DecisionReply *m;

    (void)state;
    memset(sig, 0x30, sizeof(sig));
    memset(hash_a, 0xa5, sizeof(hash_a));
    d.request_id = "req-1";
    d.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    d.rule_id = "allow-stripe";
    d.reason = "matched";
    d.log_index = 42;
    d.entry_hash = bin(hash_a, 32);
    rc.key_id = bin(hash_a, 32);
    rc.signature = bin(sig, sizeof(sig));
    rc.alg = 1;
    d.receipt = &rc;
    cr.id = "stripe-live";
    cr.header_name = "authorization";
    cr.value = bin((const uint8_t *)"Bearer sk_live_x", 16);
    d.credential = &cr;
    r.body_case = SWORN__V1__DECISION_REPLY__BODY_DECISION;
    r.decision = &d;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), 0);
    assert_int_equal(feed_all(f, flen, 3, f + 4, flen - 4), 1);
    m = sworn_frame_unpack_reply(f + 4, flen - 4);
    assert_non_null(m);
    assert_int_equal(m->body_case, SWORN__V1__DECISION_REPLY__BODY_DECISION);
    assert_int_equal(m->decision->log_index, 42);
    assert_int_equal(m->decision->credential->value.len, 16);
    sworn__v1__decision_reply__free_unpacked(m, NULL);
    free(f);

    /* A credential or receipt in a deny is refused when packing. */
    d.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    assert_null(f);
    d.credential = NULL;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    d.receipt = NULL;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), 0);
    free(f);
    /* EFFECT_UNSPECIFIED and unknown effects are refused. */
    d.effect = SWORN__V1__EFFECT__EFFECT_UNSPECIFIED;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    d.effect = (Sworn__V1__Effect)9;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);

    /* An error reply. */
    e.code = SWORN_ERR_RANGE;
    e.message = "frame length 0 is outside 1..1048576: refused";
    r.body_case = SWORN__V1__DECISION_REPLY__BODY_ERROR;
    r.error = &e;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), 0);
    m = sworn_frame_unpack_reply(f + 4, flen - 4);
    assert_non_null(m);
    assert_int_equal(m->error->code, SWORN_ERR_RANGE);
    sworn__v1__decision_reply__free_unpacked(m, NULL);
    free(f);
    e.code = 0;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
    /* Neither. */
    r.body_case = SWORN__V1__DECISION_REPLY__BODY__NOT_SET;
    assert_int_equal(sworn_frame_pack_reply(&r, &f, &flen), -1);
}

static uint8_t *raw_pack(const ProtobufCMessage *m, size_t *len);

static void entry_round_trip(const Sworn__V1__Entry *e)
{
    uint8_t *b, *again;
    size_t blen, alen;
    Sworn__V1__Entry *m;

    assert_int_equal(sworn_frame_pack_entry(e, &b, &blen), 0);
    m = sworn_frame_unpack_entry(b, blen);
    assert_non_null(m);
    assert_int_equal(m->kind_case, e->kind_case);
    assert_int_equal(sworn_frame_pack_entry(m, &again, &alen), 0);
    assert_int_equal(alen, blen);
    assert_memory_equal(again, b, blen);
    sworn__v1__entry__free_unpacked(m, NULL);
    free(again);
    free(b);
}

static void test_entry_round_trips(void **state)
{
    struct req_parts q;
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord dr = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;
    Sworn__V1__KeyEvent ke = SWORN__V1__KEY_EVENT__INIT;
    Sworn__V1__StartupMeasurement sm = SWORN__V1__STARTUP_MEASUREMENT__INIT;
    Sworn__V1__MeasuredFile mf = SWORN__V1__MEASURED_FILE__INIT,
                            pf = SWORN__V1__MEASURED_FILE__INIT, *mfp[2] = {&mf, &pf};
    Sworn__V1__EscalationResolved er = SWORN__V1__ESCALATION_RESOLVED__INIT;
    uint8_t *b;
    size_t blen;

    (void)state;
    build_request(&q);
    dr.request = &q.r;
    dr.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    dr.rule_id = "r1";
    dr.policy_digest = bin(hash_a, 32);
    dr.time_unix_ms = 5;
    dr.credential_id = "stripe-live";
    dr.credential_sha256 = bin(hash_b, 32);
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &dr;
    entry_round_trip(&e);
    /* A credential recorded for a deny, a credential id without its hash, a short digest. */
    dr.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    dr.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    dr.credential_sha256 = bin(hash_b, 0);
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    dr.credential_sha256 = bin(hash_b, 32);
    dr.policy_digest = bin(hash_a, 31);
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    dr.policy_digest = bin(hash_a, 32);

    pl.digest = bin(hash_a, 32);
    pl.source = "/etc/sworn/policy.toml";
    pl.version = 3;
    pl.time_unix_ms = 6;
    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &pl;
    entry_round_trip(&e);

    ke.statement = bin((const uint8_t *)"sworn key event\n", 16);
    ke.time_unix_ms = 7;
    e.kind_case = SWORN__V1__ENTRY__KIND_KEY_EVENT;
    e.key_event = &ke;
    entry_round_trip(&e);

    mf.path = "/usr/bin/sworn-decisiond";
    mf.sha256 = bin(hash_b, 32);
    sm.files = mfp;
    sm.n_files = 1;
    sm.pcr23 = bin(hash_a, 32);
    sm.time_unix_ms = 1;
    e.kind_case = SWORN__V1__ENTRY__KIND_STARTUP;
    e.startup = &sm;
    /* PCR 23 after extending without the value before it cannot be replayed: refused. */
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    sm.pcr23_before = bin(hash_b, 32);
    entry_round_trip(&e);
    /* Roles (finding 1): 0..5, at most one policy. */
    mf.role = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE;
    pf.path = "/etc/sworn/policy.yaml";
    pf.sha256 = bin(hash_a, 32);
    pf.role = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY;
    sm.n_files = 2;
    entry_round_trip(&e);
    mf.role = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY;
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    mf.role = (Sworn__V1__MeasuredRole)6;
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    mf.role = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_UNSPECIFIED;
    sm.n_files = 1;

    er.request_id = "req-0001";
    er.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    er.operator_ = "alice";
    e.kind_case = SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED;
    e.escalation_resolved = &er;
    /* Without a time (issue 13, finding 6): decisiond writes one, so the packer refuses none;
     * the decoder reads it (an entry of a decisiond before field 7), the verifier refuses it. */
    {
        uint8_t *raw;
        Sworn__V1__Entry *old;

        assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        raw = raw_pack(&e.base, &blen);
        old = sworn_frame_unpack_entry(raw, blen);
        assert_non_null(old);
        sworn__v1__entry__free_unpacked(old, NULL);
        free(raw);
    }
    er.time_unix_ms = 8;
    entry_round_trip(&e);
    /* docs/formats.md section 1's example, byte for byte: "dup-1" allowed by alice, naming
     * entry 17 by its leaf hash, resolved at 1764633600000. */
    {
        uint8_t want[2 + 16 + 2 + 34 + 7];
        size_t n = 0;

        er.request_id = "dup-1";
        er.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
        er.escalation_index = 17;
        er.escalation_hash = bin(hash_a, 32);
        er.time_unix_ms = 1764633600000ull;
        want[n++] = 0x2a;
        want[n++] = (uint8_t)(sizeof(want) - 2);
        memcpy(want + n,
               "\x0a\x05"
               "dup-1"
               "\x10\x01\x1a\x05"
               "alice",
               16);
        n += 16;
        want[n++] = 0x28;
        want[n++] = 0x11;
        want[n++] = 0x32;
        want[n++] = 0x20;
        memcpy(want + n, hash_a, 32);
        n += 32;
        memcpy(want + n, "\x38\x80\xc0\xef\xe2\xad\x33", 7);
        n += 7;
        assert_int_equal(n, sizeof(want));
        assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), 0);
        assert_int_equal(blen, sizeof(want));
        assert_memory_equal(b, want, sizeof(want));
        free(b);
        er.request_id = "req-0001";
        er.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        er.escalation_index = 0;
        er.escalation_hash = bin(hash_a, 0);
        er.time_unix_ms = 8;
    }
    /* Linked to its escalate entry (fields 5 and 6); an index without the hash, or a short
     * hash, is refused (review finding 2). */
    er.escalation_index = 7;
    er.escalation_hash = bin(hash_a, 32);
    entry_round_trip(&e);
    er.escalation_hash = bin(hash_a, 31);
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    er.escalation_hash = bin(hash_a, 0);
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    er.escalation_index = 0;
    er.escalation_hash = bin(hash_a, 32); /* index 0 is an index: allowed with its hash */
    entry_round_trip(&e);
    er.effect = SWORN__V1__EFFECT__EFFECT_ESCALATE;
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);

    e.kind_case = SWORN__V1__ENTRY__KIND__NOT_SET;
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    /* An Entry above the log's 65535-byte limit is refused both ways. */
    {
        uint8_t *big = calloc(1, SWORN_FRAME_ENTRY_MAX + 1);

        assert_non_null(big);
        ke.statement = bin(big, SWORN_FRAME_ENTRY_MAX);
        e.kind_case = SWORN__V1__ENTRY__KIND_KEY_EVENT;
        e.key_event = &ke;
        assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
        assert_null(sworn_frame_unpack_entry(big, SWORN_FRAME_ENTRY_MAX + 1));
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
        free(big);
    }
    /* An empty Entry (zero bytes) is refused when unpacking. */
    assert_null(sworn_frame_unpack_entry((const uint8_t *)"", 0));
}

static void test_hostile_headers(void **state)
{
    static const uint8_t zero[] = {0, 0, 0, 0, 0x0a};
    static const uint8_t over[] = {0x00, 0x10, 0x00, 0x01}; /* 1 MiB + 1 */
    static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff};
    static const uint8_t max[] = {0x00, 0x10, 0x00, 0x00}; /* exactly 1 MiB: accepted */
    struct sworn_frame_dec d;
    const uint8_t *body;
    size_t blen;

    (void)state;
    sworn_frame_dec_init(&d);
    assert_int_equal(sworn_frame_dec_feed(&d, zero, sizeof(zero), &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_null(body);
    /* The stream stays refused. */
    assert_int_equal(sworn_frame_dec_feed(&d, max, sizeof(max), &body, &blen), -1);
    assert_false(sworn_frame_dec_idle(&d));
    sworn_frame_dec_free(&d);

    assert_int_equal(feed_all(over, sizeof(over), 4, NULL, 0), -1);
    assert_int_equal(feed_all(huge, sizeof(huge), 1, NULL, 0), -1);

    /* 1 MiB is accepted as a length: the decoder waits for the body. */
    sworn_frame_dec_init(&d);
    assert_int_equal(sworn_frame_dec_feed(&d, max, sizeof(max), &body, &blen), 4);
    assert_null(body);
    assert_false(sworn_frame_dec_idle(&d));
    sworn_frame_dec_free(&d);

    /* Truncated header and truncated body: no frame, not idle. */
    sworn_frame_dec_init(&d);
    assert_int_equal(sworn_frame_dec_feed(&d, max, 3, &body, &blen), 3);
    assert_null(body);
    assert_false(sworn_frame_dec_idle(&d));
    sworn_frame_dec_free(&d);
    sworn_frame_dec_init(&d);
    assert_int_equal(sworn_frame_dec_feed(&d,
                                          (const uint8_t *)"\0\0\0\x05"
                                                           "abc",
                                          7, &body, &blen),
                     7);
    assert_null(body);
    assert_false(sworn_frame_dec_idle(&d));
    sworn_frame_dec_free(&d);
}

static void test_encode_limits(void **state)
{
    uint8_t out[16], *big;

    (void)state;
    assert_int_equal(sworn_frame_encode((const uint8_t *)"x", 0, out, sizeof(out)), -1);
    assert_int_equal(sworn_frame_encode((const uint8_t *)"abc", 3, out, 6), -1);
    assert_int_equal(sworn_frame_encode((const uint8_t *)"abc", 3, out, 7), 7);
    assert_memory_equal(out,
                        "\0\0\0\x03"
                        "abc",
                        7);
    big = calloc(1, SWORN_FRAME_MAX + 1 + SWORN_FRAME_HDR_LEN);
    assert_non_null(big);
    assert_int_equal(sworn_frame_encode(big, SWORN_FRAME_MAX + 1, big, SWORN_FRAME_MAX + 5), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    free(big);
}

static void test_two_frames_in_one_buffer(void **state)
{
    uint8_t stream[32];
    long n1, n2;

    (void)state;
    n1 = sworn_frame_encode((const uint8_t *)"ab", 2, stream, sizeof(stream));
    n2 = sworn_frame_encode((const uint8_t *)"cde", 3, stream + n1, sizeof(stream) - (size_t)n1);
    assert_int_equal(feed_all(stream, (size_t)(n1 + n2), sizeof(stream), NULL, 0), 2);
    assert_int_equal(feed_all(stream, (size_t)(n1 + n2), 1, NULL, 0), 2);
}

/* Pack a request into a bare body (no header) without the shape check. */
static uint8_t *raw_pack(const ProtobufCMessage *m, size_t *len)
{
    uint8_t *b;

    *len = protobuf_c_message_get_packed_size(m);
    b = malloc(*len + 1);
    assert_non_null(b);
    assert_int_equal(protobuf_c_message_pack(m, b), *len);
    return b;
}

static void test_hostile_bodies(void **state)
{
    struct req_parts q;
    uint8_t *b, *b2;
    size_t blen, i;
    char *names[SWORN_FRAME_HEADERS_MAX + 1];
    static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

    (void)state;
    assert_null(sworn_frame_unpack_request(garbage, sizeof(garbage)));
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    assert_null(sworn_frame_unpack_request((const uint8_t *)"\x0a\x05"
                                                            "ab",
                                           4)); /* truncated */
    assert_null(sworn_frame_unpack_request(NULL, 0));

    /* Wrong hash lengths, each found on the wire, not only when packing. */
    build_request(&q);
    q.context.body_sha256 = bin(hash_a, 31);
    b = raw_pack(&q.r.base, &blen);
    assert_null(sworn_frame_unpack_request(b, blen));
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    free(b);
    build_request(&q);
    q.tokens[0] = bin(hash_a, 33);
    b = raw_pack(&q.r.base, &blen);
    assert_null(sworn_frame_unpack_request(b, blen));
    free(b);

    /* Missing required fields. */
    build_request(&q);
    q.r.request_id = "";
    b = raw_pack(&q.r.base, &blen);
    assert_null(sworn_frame_unpack_request(b, blen));
    free(b);
    build_request(&q);
    q.r.principal = NULL;
    b = raw_pack(&q.r.base, &blen);
    assert_null(sworn_frame_unpack_request(b, blen));
    free(b);
    build_request(&q);
    q.resource.port = 70000;
    b = raw_pack(&q.r.base, &blen);
    assert_null(sworn_frame_unpack_request(b, blen));
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    free(b);

    /* A request id of 129 bytes. */
    {
        char id[SWORN_FRAME_ID_MAX + 2];

        memset(id, 'a', sizeof(id) - 1);
        id[sizeof(id) - 1] = '\0';
        build_request(&q);
        q.r.request_id = id;
        b = raw_pack(&q.r.base, &blen);
        assert_null(sworn_frame_unpack_request(b, blen));
        free(b);
        id[SWORN_FRAME_ID_MAX] = '\0';
        b = raw_pack(&q.r.base, &blen);
        b2 = NULL;
        {
            Sworn__V1__AuthorizationRequest *m = sworn_frame_unpack_request(b, blen);
            assert_non_null(m);
            sworn__v1__authorization_request__free_unpacked(m, NULL);
        }
        free(b);
    }

    /* Invalid UTF-8 and a control character. */
    build_request(&q);
    q.resource.path = "/\xc3\x28";
    b = raw_pack(&q.r.base, &blen);
    assert_null(sworn_frame_unpack_request(b, blen));
    free(b);
    build_request(&q);
    q.principal.id = "a\x01"
                     "b";
    b = raw_pack(&q.r.base, &blen);
    assert_null(sworn_frame_unpack_request(b, blen));
    free(b);

    /* An embedded NUL: field 1 (request_id) = "ab\0cd" at the front of an otherwise good body. */
    build_request(&q);
    q.r.request_id = "abXcd";
    b = raw_pack(&q.r.base, &blen);
    assert_int_equal(b[0], 0x0a);
    assert_int_equal(b[1], 5);
    b[4] = 0;
    assert_null(sworn_frame_unpack_request(b, blen));
    free(b);

    /* An unknown field appended (field 15, varint 1), also one inside a sub-message. */
    build_request(&q);
    b = raw_pack(&q.r.base, &blen);
    b2 = malloc(blen + 2);
    assert_non_null(b2);
    memcpy(b2, b, blen);
    b2[blen] = 0x78;
    b2[blen + 1] = 0x01;
    assert_non_null(b2);
    assert_null(sworn_frame_unpack_request(b2, blen + 2));
    /* The same field 7 (time) twice: the last wins in protobuf, we refuse it. */
    b2[blen] = 0x38;
    b2[blen + 1] = 0x01;
    assert_null(sworn_frame_unpack_request(b2, blen + 2));
    free(b2);
    free(b);
    /* An explicit default: time_unix_ms (field 7, the last) = 0 written out. */
    build_request(&q);
    q.r.time_unix_ms = 0;
    b = raw_pack(&q.r.base, &blen);
    b2 = malloc(blen + 2);
    assert_non_null(b2);
    memcpy(b2, b, blen);
    b2[blen] = 0x38;
    b2[blen + 1] = 0x00;
    assert_null(sworn_frame_unpack_request(b2, blen + 2));
    free(b2);
    free(b);
    /* An unknown field inside Resource: append field 15 to a packed Resource, wrap it. */
    {
        Sworn__V1__AuthorizationRequest *m;
        uint8_t res[64], body[96];
        size_t rl = protobuf_c_message_get_packed_size(&q.resource.base), k = 0;

        build_request(&q);
        assert_true(rl + 2 <= sizeof(res));
        protobuf_c_message_pack(&q.resource.base, res);
        res[rl] = 0x78;
        res[rl + 1] = 0x01;
        /* request_id, principal.id, operation, then the resource with the extra field. */
        body[k++] = 0x0a;
        body[k++] = 1;
        body[k++] = 'r';
        body[k++] = 0x12;
        body[k++] = 3;
        body[k++] = 0x0a;
        body[k++] = 1;
        body[k++] = 'p';
        body[k++] = 0x1a;
        body[k++] = 1;
        body[k++] = 'o';
        body[k++] = 0x22;
        body[k++] = (uint8_t)(rl + 2);
        memcpy(body + k, res, rl + 2);
        k += rl + 2;
        assert_null(sworn_frame_unpack_request(body, k));
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        /* Without the extra field it is a good request. */
        body[12] = (uint8_t)rl;
        m = sworn_frame_unpack_request(body, k - 2);
        assert_non_null(m);
        sworn__v1__authorization_request__free_unpacked(m, NULL);
    }

    /* Huge repeated fields inside the 1 MiB cap: refused by count, not by size. */
    build_request(&q);
    for (i = 0; i < SWORN_FRAME_HEADERS_MAX + 1; i++)
        names[i] = "x-h";
    q.context.header_names = names;
    q.context.n_header_names = SWORN_FRAME_HEADERS_MAX + 1;
    b = raw_pack(&q.r.base, &blen);
    assert_true(blen < SWORN_FRAME_MAX);
    assert_null(sworn_frame_unpack_request(b, blen));
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    free(b);
    q.context.n_header_names = SWORN_FRAME_HEADERS_MAX;
    b = raw_pack(&q.r.base, &blen);
    {
        Sworn__V1__AuthorizationRequest *m = sworn_frame_unpack_request(b, blen);
        assert_non_null(m);
        sworn__v1__authorization_request__free_unpacked(m, NULL);
    }
    free(b);

    /* About 250,000 empty repeated entries (field 2 of Context, length 0) in one 1 MiB body. */
    {
        size_t n = SWORN_FRAME_MAX - 16, k = 0;
        uint8_t *big = malloc(n), *ctx;

        assert_non_null(big);
        ctx = big;
        /* AuthorizationRequest.context (field 5, length-delimited) wrapping repeated "a". */
        big[k++] = 0x2a;
        big[k++] = 0x80 | 0x7f; /* length as a 3-byte varint, filled below */
        big[k++] = 0xff;
        big[k++] = 0x3f;
        while (k + 3 <= n) {
            big[k++] = 0x12;
            big[k++] = 1;
            big[k++] = 'a';
        }
        {
            size_t inner = k - 4;
            ctx[1] = (uint8_t)(0x80 | (inner & 0x7f));
            ctx[2] = (uint8_t)(0x80 | ((inner >> 7) & 0x7f));
            ctx[3] = (uint8_t)(inner >> 14);
        }
        assert_null(sworn_frame_unpack_request(big, k));
        free(big);
    }
}

static void test_hostile_entries(void **state)
{
    struct req_parts q;
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;
    Sworn__V1__StartupMeasurement sm = SWORN__V1__STARTUP_MEASUREMENT__INIT;
    Sworn__V1__MeasuredFile mf = SWORN__V1__MEASURED_FILE__INIT, *mfp[1] = {&mf};
    uint8_t *b;
    size_t blen;

    (void)state;
    build_request(&q);
    pl.digest = bin(hash_a, 16);
    pl.source = "p";
    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &pl;
    b = raw_pack(&e.base, &blen);
    assert_null(sworn_frame_unpack_entry(b, blen));
    free(b);

    mf.path = "/x";
    mf.sha256 = bin(hash_a, 0);
    sm.files = mfp;
    sm.n_files = 1;
    e.kind_case = SWORN__V1__ENTRY__KIND_STARTUP;
    e.startup = &sm;
    b = raw_pack(&e.base, &blen);
    assert_null(sworn_frame_unpack_entry(b, blen));
    free(b);

    /* A decision record whose embedded request is bad is refused too. */
    {
        Sworn__V1__DecisionRecord dr = SWORN__V1__DECISION_RECORD__INIT;

        q.r.operation = "";
        dr.request = &q.r;
        dr.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        dr.policy_digest = bin(hash_a, 32);
        e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
        e.decision = &dr;
        b = raw_pack(&e.base, &blen);
        assert_null(sworn_frame_unpack_entry(b, blen));
        free(b);
    }
}

/*
 * CredentialsMinted (finding 9 of issue 11): up to SWORN_FRAME_REPLACED_MAX replaced ids, each
 * 1..128 bytes, distinct and none also minted by the entry; allow_log_index any number.
 */
static void test_minted_entries(void **state)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__CredentialsMinted cm = SWORN__V1__CREDENTIALS_MINTED__INIT;
    Sworn__V1__MintedCredential mc = SWORN__V1__MINTED_CREDENTIAL__INIT, *mcp[1] = {&mc};
    char ids[SWORN_FRAME_REPLACED_MAX + 1][32], *idp[SWORN_FRAME_REPLACED_MAX + 1];
    char long_id[SWORN_FRAME_ID_MAX + 2];
    uint8_t *b;
    size_t blen;

    (void)state;
    mc.field = "access_token";
    mc.credential_id = "demo.oauth.20";
    mc.value_sha256 = bin(hash_a, 32);
    mc.symbolic_sha256 = bin(hash_b, 32);
    cm.request_id = "x-1";
    cm.allow_request_id = "oauth-1";
    cm.from_credential_id = "demo";
    cm.minted = mcp;
    cm.n_minted = 1;
    cm.allow_log_index = 7;
    cm.time_unix_ms = 9;
    for (size_t i = 0; i <= SWORN_FRAME_REPLACED_MAX; i++) {
        snprintf(ids[i], sizeof(ids[i]), "demo.oauth.%zu", i + 1);
        idp[i] = ids[i];
    }
    cm.replaced_credential_ids = idp;
    e.kind_case = SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED;
    e.credentials_minted = &cm;
    cm.n_replaced_credential_ids = 0;
    entry_round_trip(&e);
    cm.n_replaced_credential_ids = SWORN_FRAME_REPLACED_MAX; /* the bound itself */
    entry_round_trip(&e);
    /* One more than the bound, a duplicate, a replaced id also minted, an empty and a long id:
     * refused by the packer and by the decoder. */
    cm.n_replaced_credential_ids = SWORN_FRAME_REPLACED_MAX + 1;
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    b = raw_pack(&e.base, &blen);
    assert_null(sworn_frame_unpack_entry(b, blen));
    free(b);
    cm.n_replaced_credential_ids = 3;
    snprintf(ids[2], sizeof(ids[2]), "%s", ids[0]);
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    b = raw_pack(&e.base, &blen);
    assert_null(sworn_frame_unpack_entry(b, blen));
    free(b);
    snprintf(ids[2], sizeof(ids[2]), "%s", mc.credential_id);
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    b = raw_pack(&e.base, &blen);
    assert_null(sworn_frame_unpack_entry(b, blen));
    free(b);
    ids[2][0] = '\0';
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    memset(long_id, 'i', SWORN_FRAME_ID_MAX + 1);
    long_id[SWORN_FRAME_ID_MAX + 1] = '\0';
    idp[2] = long_id;
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    b = raw_pack(&e.base, &blen);
    assert_null(sworn_frame_unpack_entry(b, blen));
    free(b);
}

/* The envelopes: one message per direction, its oneof saying what it holds, versioned. */
/* TimeMark entries (issue 12, finding 4): a known reason, and clock_behind_ms exactly
 * max(0, high water - time); anything else is refused by the packer and the decoder. */
static void test_time_mark_entries(void **state)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__TimeMark m = SWORN__V1__TIME_MARK__INIT;
    static const struct {
        uint64_t t, hw, behind;
        int reason, ok;
    } cases[] = {
        {1000, 900, 0, 1, 1},                  /* at start, the clock ahead of the record */
        {1000, 1000, 0, 2, 1},                 /* periodic, the clock at the high water */
        {1000, 8200, 7200, 1, 1},              /* the clock 7.2 s behind */
        {1, 0, 0, 1, 1},                       /* an empty log's first start */
        {0, 0, 0, 1, 0},                       /* no time (issue 13, finding 6) */
        {1000, 8200, 0, 1, 0},                 /* behind, but says it is not */
        {1000, 900, 100, 2, 0},                /* not behind, but says it is */
        {1000, 8200, 7199, 1, 0},              /* off by one */
        {1000, 900, 0, 0, 0},                  /* no reason */
        {1000, 900, 0, 3, 0},                  /* an unknown reason */
        {1, UINT64_MAX, UINT64_MAX - 1, 1, 1}, /* the extremes: no overflow */
    };
    uint8_t *b;
    size_t blen;

    /* docs/formats.md section 1's example, byte for byte: the clock two hours behind. */
    static const uint8_t example[] = {0x4a, 0x15, 0x08, 0x80, 0xc0, 0xef, 0xe2, 0xad,
                                      0x33, 0x10, 0x80, 0xfa, 0xa6, 0xe6, 0xad, 0x33,
                                      0x18, 0x80, 0xba, 0xb7, 0x03, 0x20, 0x01};

    (void)state;
    e.kind_case = SWORN__V1__ENTRY__KIND_TIME_MARK;
    e.time_mark = &m;
    m.time_unix_ms = 1764633600000ull;
    m.high_water_unix_ms = 1764640800000ull;
    m.clock_behind_ms = 7200000;
    m.reason = SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_START;
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), 0);
    assert_int_equal(blen, sizeof(example));
    assert_memory_equal(b, example, sizeof(example));
    free(b);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        m.time_unix_ms = cases[i].t;
        m.high_water_unix_ms = cases[i].hw;
        m.clock_behind_ms = cases[i].behind;
        m.reason = (Sworn__V1__TimeMarkReason)cases[i].reason;
        if (cases[i].ok) {
            entry_round_trip(&e);
            continue;
        }
        assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        b = raw_pack(&e.base, &blen);
        assert_null(sworn_frame_unpack_entry(b, blen));
        free(b);
    }
}

/* WitnessEvent entries (issue 18): docs/formats.md section 1's example byte for byte, and every
 * field outside its bounds refused by the packer and the decoder. */
static void test_witness_event_entries(void **state)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__WitnessEvent m = SWORN__V1__WITNESS_EVENT__INIT;
    static uint8_t kid[4] = {0x7f, 0x6c, 0x13, 0x29}, kid3[3] = {1, 2, 3};
    static const uint8_t example[] = {
        0x6a, 0x31, 0x0a, 0x0f, 0x77, 0x31, 0x2e, 0x74, 0x65, 0x73, 0x74, 0x2f, 0x77,
        0x69, 0x74, 0x6e, 0x65, 0x73, 0x73, 0x12, 0x04, 0x7f, 0x6c, 0x13, 0x29, 0x18,
        0x01, 0x20, 0xf7, 0x03, 0x28, 0x0c, 0x30, 0x08, 0x42, 0x08, 0x48, 0x54, 0x54,
        0x50, 0x20, 0x35, 0x30, 0x33, 0x48, 0x80, 0xc0, 0xef, 0xe2, 0xad, 0x33};
    uint8_t *b;
    size_t blen;

    (void)state;
    e.kind_case = SWORN__V1__ENTRY__KIND_WITNESS_EVENT;
    e.witness_event = &m;
    m.witness = "w1.test/witness";
    m.key_id.data = kid;
    m.key_id.len = 4;
    m.kind = SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_FAILING;
    m.status = 503;
    m.checkpoint_size = 12;
    m.old_size = 8;
    m.reason = "HTTP 503";
    m.time_unix_ms = 1764633600000ull;
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), 0);
    assert_int_equal(blen, sizeof(example));
    assert_memory_equal(b, example, sizeof(example));
    free(b);
    entry_round_trip(&e);
    /* A 409 may name the witness's size; the alarm and the recovery are kinds 3 and 2. */
    m.status = 409;
    m.witness_size = 17;
    m.kind = SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_CONSISTENCY;
    entry_round_trip(&e);
    m.kind = SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_RECOVERED;
    entry_round_trip(&e);
    for (int bad = 0; bad < 11; bad++) {
        Sworn__V1__WitnessEvent w = m;

        switch (bad) {
        case 0:
            w.witness = "";
            break;
        case 1:
            w.witness = "w1+x";
            break;
        case 2:
            w.witness = "w 1";
            break;
        case 3:
            w.key_id.data = kid3;
            w.key_id.len = 3;
            break;
        case 4:
            w.kind = 0;
            break;
        case 5:
            w.kind = 4;
            break;
        case 6:
            w.status = 600;
            break;
        case 7:
            w.checkpoint_size = 0;
            break;
        case 8:
            w.status = 200;
            break; /* witness_size 17 without a 409 */
        case 9:
            w.reason = "";
            break;
        case 10:
            w.time_unix_ms = 0;
            break;
        }
        e.witness_event = &w;
        assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
        b = raw_pack(&e.base, &blen);
        assert_null(sworn_frame_unpack_entry(b, blen));
        free(b);
        e.witness_event = &m;
    }
}

static void test_envelopes(void **state)
{
    struct req_parts q;
    Sworn__V1__DecisionRequest env = SWORN__V1__DECISION_REQUEST__INIT, *m;
    Sworn__V1__TokenExchange ex = SWORN__V1__TOKEN_EXCHANGE__INIT;
    Sworn__V1__TokenValue tv = SWORN__V1__TOKEN_VALUE__INIT, *tvp[1] = {&tv};
    Sworn__V1__AdminRequest ar = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__StatusRequest st = SWORN__V1__STATUS_REQUEST__INIT;
    uint8_t *f, *bare, *raw;
    size_t flen, blen, rlen;

    (void)state;
    build_request(&q);
    /* An authorization request in its envelope: version stamped, decoded back, same bytes. */
    assert_int_equal(sworn_frame_pack_authorize(&q.r, &f, &flen), 0);
    m = sworn_frame_unpack_decision_request(f + 4, flen - 4);
    assert_non_null(m);
    assert_int_equal(m->version, SWORN_WIRE_VERSION);
    assert_int_equal(m->body_case, SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE);
    assert_string_equal(m->authorize->request_id, "req-0001");
    /* The envelope holds exactly the bare request's bytes. */
    assert_int_equal(sworn_frame_pack_request(&q.r, &bare, &blen), 0);
    assert_int_equal(m->authorize->base.descriptor, &sworn__v1__authorization_request__descriptor);
    assert_non_null(memmem(f + 4, flen - 4, bare + 4, blen - 4));
    /* A bare request (wire version 0 sent it so) is no envelope, and an envelope no request. */
    assert_null(sworn_frame_unpack_decision_request(bare + 4, blen - 4));
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    assert_null(sworn_frame_unpack_request(f + 4, flen - 4));
    free(bare);
    /* Nor is it an admin request. */
    assert_null(sworn_frame_unpack_admin_request(f + 4, flen - 4));
    sworn__v1__decision_request__free_unpacked(m, NULL);
    free(f);

    /* Another version: refused when packing, and when decoding, with the version named. */
    env.body_case = SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE;
    env.authorize = &q.r;
    env.version = 2;
    assert_int_equal(sworn_frame_pack_decision_request(&env, &f, &flen), -1);
    assert_null(f);
    raw = raw_pack(&env.base, &rlen);
    assert_null(sworn_frame_unpack_decision_request(raw, rlen));
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    assert_non_null(strstr(sworn_err_msg(), "wire version 2"));
    free(raw);
    /* No version at all (0, absent): refused. */
    env.version = 0;
    raw = raw_pack(&env.base, &rlen);
    assert_null(sworn_frame_unpack_decision_request(raw, rlen));
    assert_non_null(strstr(sworn_err_msg(), "wire version 0"));
    free(raw);
    /* An envelope holding nothing: refused. */
    env.body_case = SWORN__V1__DECISION_REQUEST__BODY__NOT_SET;
    env.version = SWORN_WIRE_VERSION;
    assert_int_equal(sworn_frame_pack_decision_request(&env, &f, &flen), -1);
    raw = raw_pack(&env.base, &rlen);
    assert_null(sworn_frame_unpack_decision_request(raw, rlen));
    free(raw);

    /* A token exchange in its envelope; its shape is checked inside the envelope too. */
    ex.request_id = "x-1";
    ex.allow_request_id = "req-0001";
    ex.credential_id = "oauth";
    tv.field = "access_token";
    tv.value = bin((const uint8_t *)"secret", 6);
    ex.tokens = tvp;
    ex.n_tokens = 1;
    assert_int_equal(sworn_frame_pack_token_exchange(&ex, &f, &flen), 0);
    m = sworn_frame_unpack_decision_request(f + 4, flen - 4);
    assert_non_null(m);
    assert_int_equal(m->body_case, SWORN__V1__DECISION_REQUEST__BODY_TOKEN_EXCHANGE);
    assert_int_equal(m->token_exchange->tokens[0]->value.len, 6);
    sworn__v1__decision_request__free_unpacked(m, NULL);
    free(f);
    ex.n_tokens = 0;
    assert_int_equal(sworn_frame_pack_token_exchange(&ex, &f, &flen), -1);

    /* The admin envelopes are versioned the same way. */
    ar.body_case = SWORN__V1__ADMIN_REQUEST__BODY_STATUS;
    ar.status = &st;
    assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), 0);
    {
        Sworn__V1__AdminRequest *a = sworn_frame_unpack_admin_request(f + 4, flen - 4);

        assert_non_null(a);
        assert_int_equal(a->version, SWORN_WIRE_VERSION);
        sworn__v1__admin_request__free_unpacked(a, NULL);
    }
    /* A status request is no decision request: the admin and decision sockets stay apart. */
    assert_null(sworn_frame_unpack_decision_request(f + 4, flen - 4));
    free(f);
    ar.version = 0;
    raw = raw_pack(&ar.base, &rlen);
    assert_null(sworn_frame_unpack_admin_request(raw, rlen));
    assert_non_null(strstr(sworn_err_msg(), "wire version 0"));
    free(raw);
}

/* ResolveRequest names the escalate entry by index (hash and id optional checks);
 * PendingEscalation carries the index and a 32-byte hash (review finding 2). */
static void test_resolve_by_index(void **state)
{
    struct req_parts q;
    Sworn__V1__AdminRequest ar = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__ResolveRequest rr = SWORN__V1__RESOLVE_REQUEST__INIT;
    Sworn__V1__AdminResponse resp = SWORN__V1__ADMIN_RESPONSE__INIT;
    Sworn__V1__ListEscalationsResponse l = SWORN__V1__LIST_ESCALATIONS_RESPONSE__INIT;
    Sworn__V1__PendingEscalation pe = SWORN__V1__PENDING_ESCALATION__INIT, *pes[1] = {&pe};
    uint8_t *f;
    size_t flen;

    (void)state;
    rr.escalation_index = 12;
    rr.approve = 1;
    ar.body_case = SWORN__V1__ADMIN_REQUEST__BODY_RESOLVE;
    ar.resolve = &rr;
    assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), 0);
    {
        Sworn__V1__AdminRequest *a = sworn_frame_unpack_admin_request(f + 4, flen - 4);

        assert_non_null(a);
        assert_int_equal(a->resolve->escalation_index, 12);
        assert_int_equal(a->resolve->escalation_hash.len, 0);
        assert_string_equal(a->resolve->request_id, "");
        sworn__v1__admin_request__free_unpacked(a, NULL);
    }
    free(f);
    rr.escalation_hash = bin(hash_b, 32);
    rr.request_id = "dup-1";
    assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), 0);
    free(f);
    rr.escalation_hash = bin(hash_b, 31);
    assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    rr.escalation_hash = bin(hash_b, 32);
    {
        char long_id[SWORN_FRAME_ID_MAX + 2];

        memset(long_id, 'a', sizeof(long_id) - 1);
        long_id[sizeof(long_id) - 1] = '\0';
        rr.request_id = long_id;
        assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    }

    build_request(&q);
    pe.request = &q.r;
    pe.log_index = 3;
    pe.entry_hash = bin(hash_a, 32);
    l.n_pending = 1;
    l.pending = pes;
    l.total = 1;
    resp.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_LIST_ESCALATIONS;
    resp.list_escalations = &l;
    assert_int_equal(sworn_frame_pack_admin_response(&resp, &f, &flen), 0);
    free(f);
    pe.entry_hash = bin(hash_a, 0); /* the operator would have nothing to check */
    assert_int_equal(sworn_frame_pack_admin_response(&resp, &f, &flen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
}

/*
 * ListEscalations is paged (found while fixing finding 4): the request's from_index round-trips;
 * a page is in strictly ascending log index, says more only when full, and its total is at least
 * what it lists (and one more with more). Each broken rule is refused by the packer and the
 * decoder alike.
 */
static void test_escalation_pages(void **state)
{
    struct req_parts q;
    Sworn__V1__AdminRequest ar = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__ListEscalationsRequest lr = SWORN__V1__LIST_ESCALATIONS_REQUEST__INIT;
    Sworn__V1__AdminResponse resp = SWORN__V1__ADMIN_RESPONSE__INIT;
    Sworn__V1__ListEscalationsResponse l = SWORN__V1__LIST_ESCALATIONS_RESPONSE__INIT;
    Sworn__V1__PendingEscalation pe[SWORN_FRAME_ESCALATIONS_PAGE];
    Sworn__V1__PendingEscalation *pp[SWORN_FRAME_ESCALATIONS_PAGE];
    Sworn__V1__AdminRequest *a;
    Sworn__V1__AdminResponse *back;
    uint8_t *f;
    size_t flen;

    (void)state;
    lr.from_index = UINT64_MAX;
    ar.body_case = SWORN__V1__ADMIN_REQUEST__BODY_LIST_ESCALATIONS;
    ar.list_escalations = &lr;
    assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), 0);
    a = sworn_frame_unpack_admin_request(f + 4, flen - 4);
    assert_non_null(a);
    assert_int_equal(a->list_escalations->from_index, UINT64_MAX);
    sworn__v1__admin_request__free_unpacked(a, NULL);
    free(f);

    build_request(&q);
    for (size_t i = 0; i < SWORN_FRAME_ESCALATIONS_PAGE; i++) {
        sworn__v1__pending_escalation__init(&pe[i]);
        pe[i].request = &q.r;
        pe[i].log_index = 100 + 2 * i;
        pe[i].entry_hash = bin(hash_a, 32);
        pp[i] = &pe[i];
    }
    l.pending = pp;
    resp.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_LIST_ESCALATIONS;
    resp.list_escalations = &l;
    /* An empty page, and a full one with more and a total beyond it. */
    assert_int_equal(sworn_frame_pack_admin_response(&resp, &f, &flen), 0);
    free(f);
    l.n_pending = SWORN_FRAME_ESCALATIONS_PAGE;
    l.more = 1;
    l.total = SWORN_FRAME_ESCALATIONS_PAGE + 1;
    assert_int_equal(sworn_frame_pack_admin_response(&resp, &f, &flen), 0);
    back = sworn_frame_unpack_admin_response(f + 4, flen - 4);
    assert_non_null(back);
    assert_true(back->list_escalations->more);
    assert_int_equal(back->list_escalations->total, SWORN_FRAME_ESCALATIONS_PAGE + 1);
    sworn__v1__admin_response__free_unpacked(back, NULL);
    free(f);

    /* Each rule broken in the bytes a peer would send: the decoder refuses them. Built by
     * protobuf-c's own packer (no checks), then decoded. */
    {
        struct {
            size_t n;
            int more;
            uint32_t total;
            size_t swap; /* 0, or i: make pending[i] the index of pending[i - 1] */
            const char *why;
        } bad[] = {
            {SWORN_FRAME_ESCALATIONS_PAGE, 1, SWORN_FRAME_ESCALATIONS_PAGE, 0, "less than"},
            {SWORN_FRAME_ESCALATIONS_PAGE - 1, 1, 100, 0, "not a full page"},
            {3, 0, 2, 0, "less than"},
            {3, 0, 3, 2, "does not follow"},
            {0, 1, 1, 0, "not a full page"},
        };

        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
            uint8_t *raw;
            size_t n;

            l.n_pending = bad[k].n;
            l.more = bad[k].more;
            l.total = bad[k].total;
            for (size_t i = 0; i < SWORN_FRAME_ESCALATIONS_PAGE; i++)
                pe[i].log_index = 100 + 2 * i;
            if (bad[k].swap != 0)
                pe[bad[k].swap].log_index = pe[bad[k].swap - 1].log_index;
            resp.version = SWORN_WIRE_VERSION;
            n = sworn__v1__admin_response__get_packed_size(&resp);
            raw = malloc(n);
            assert_non_null(raw);
            assert_int_equal(sworn__v1__admin_response__pack(&resp, raw), n);
            assert_null(sworn_frame_unpack_admin_response(raw, n));
            assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
            if (strstr(sworn_err_msg(), bad[k].why) == NULL)
                fail_msg("case %zu: %s", k, sworn_err_msg());
            assert_int_equal(sworn_frame_pack_admin_response(&resp, &f, &flen), -1);
            free(raw);
        }
    }
    /* Descending is refused too: the client's next page starts past the last one listed. */
    l.n_pending = 2;
    l.more = 0;
    l.total = 2;
    pe[0].log_index = 9;
    pe[1].log_index = 8;
    assert_int_equal(sworn_frame_pack_admin_response(&resp, &f, &flen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
}

/* The hostlink hello: a round trip with the version stamped, then each shape rule refused. */
static void test_hostlink_hello(void **state)
{
    Sworn__V1__HostlinkHello h = SWORN__V1__HOSTLINK_HELLO__INIT, *back;
    uint8_t *out = NULL;
    size_t len = 0;

    (void)state;
    h.principal = "agent-1";
    h.sandbox = "sbx-1";
    h.sandbox_start_index = 7;
    h.agent_uid = 200001;
    assert_int_equal(sworn_frame_pack_hostlink_hello(&h, &out, &len), 0);
    assert_true(len > SWORN_FRAME_HDR_LEN);
    back = sworn_frame_unpack_hostlink_hello(out + SWORN_FRAME_HDR_LEN, len - SWORN_FRAME_HDR_LEN);
    assert_non_null(back);
    assert_string_equal(back->principal, "agent-1");
    assert_string_equal(back->sandbox, "sbx-1");
    assert_int_equal(back->sandbox_start_index, 7);
    assert_int_equal(back->agent_uid, 200001);
    assert_int_equal(back->version, SWORN_WIRE_VERSION);
    sworn__v1__hostlink_hello__free_unpacked(back, NULL);
    /* A hello without the version (as packed by protobuf-c directly) is refused. */
    {
        uint8_t raw[256];
        size_t n = sworn__v1__hostlink_hello__pack(&h, raw);

        assert_null(sworn_frame_unpack_hostlink_hello(raw, n));
    }
    free(out);

    h.principal = "agent 1"; /* a space */
    assert_int_equal(sworn_frame_pack_hostlink_hello(&h, &out, &len), -1);
    h.principal = "agent-1";
    h.sandbox = "";
    assert_int_equal(sworn_frame_pack_hostlink_hello(&h, &out, &len), -1);
    h.sandbox = "sbx-1";
    h.sandbox_start_index = 0;
    assert_int_equal(sworn_frame_pack_hostlink_hello(&h, &out, &len), -1);
    /* Oversized bodies are refused before they are parsed. */
    {
        static uint8_t big[SWORN_HOSTLINK_HELLO_MAX + 1];

        assert_null(sworn_frame_unpack_hostlink_hello(big, sizeof(big)));
    }
    assert_true(sworn_frame_name_ok("a"));
    assert_false(sworn_frame_name_ok(""));
    assert_false(sworn_frame_name_ok("tab\there"));
}

/* A sandbox's start as sworn-run sends it (operator and time left to decisiond). */
struct sandbox_parts {
    Sworn__V1__SandboxStarted st;
    Sworn__V1__SandboxLimits lim;
    char *argv[2];
    uint8_t id[32];
    Sworn__V1__SandboxEnded en;
};

static void build_sandbox(struct sandbox_parts *p)
{
    Sworn__V1__SandboxStarted st = SWORN__V1__SANDBOX_STARTED__INIT;
    Sworn__V1__SandboxLimits lim = SWORN__V1__SANDBOX_LIMITS__INIT;
    Sworn__V1__SandboxEnded en = SWORN__V1__SANDBOX_ENDED__INIT;

    memset(hash_a, 0xa5, sizeof(hash_a));
    memset(p->id, 0x11, sizeof(p->id));
    p->st = st;
    p->lim = lim;
    p->en = en;
    p->argv[0] = "/usr/bin/python3";
    p->argv[1] = "agent.py";
    p->st.principal = "agent-1";
    p->st.name = "run-0011223344556677";
    p->st.sandbox_id = bin(p->id, 16);
    p->st.command = p->argv;
    p->st.n_command = 2;
    p->lim.wall_ms = 60000;
    p->lim.memory_bytes = 1u << 30;
    p->lim.processes = 256;
    p->lim.enforced_by = "cgroup2";
    p->st.limits = &p->lim;
    p->st.config_sha256 = bin(hash_a, 32);
    p->st.agent_uid = 200000;
    p->st.isolation = "root";
    p->st.operator_ = "";
    p->en.start_index = 5;
    p->en.sandbox_id = bin(p->id, 16);
    p->en.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED;
    p->en.code = 3;
    p->en.duration_ms = 1234;
    p->en.operator_ = "";
}

/* The admin request holding p's start (end 0) or end (end 1): packed, or refused with why. */
static void sandbox_admin(struct sandbox_parts *p, int end, const char *why)
{
    Sworn__V1__AdminRequest ar = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__SandboxStartRequest sr = SWORN__V1__SANDBOX_START_REQUEST__INIT;
    Sworn__V1__SandboxEndRequest er = SWORN__V1__SANDBOX_END_REQUEST__INIT;
    uint8_t *f, *raw;
    size_t flen, rlen;

    if (end) {
        ar.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_END;
        ar.sandbox_end = &er;
        er.ended = &p->en;
    } else {
        ar.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_START;
        ar.sandbox_start = &sr;
        sr.started = &p->st;
    }
    if (why == NULL) {
        Sworn__V1__AdminRequest *m;

        assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), 0);
        m = sworn_frame_unpack_admin_request(f + 4, flen - 4);
        assert_non_null(m);
        assert_int_equal(m->body_case, ar.body_case);
        sworn__v1__admin_request__free_unpacked(m, NULL);
        free(f);
        return;
    }
    assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), -1);
    if (strstr(sworn_err_msg(), why) == NULL)
        fail_msg("expected \"%s\", got \"%s\"", why, sworn_err_msg());
    ar.version = SWORN_WIRE_VERSION;
    raw = raw_pack(&ar.base, &rlen);
    assert_null(sworn_frame_unpack_admin_request(raw, rlen));
    if (strstr(sworn_err_msg(), why) == NULL)
        fail_msg("decoding: expected \"%s\", got \"%s\"", why, sworn_err_msg());
    free(raw);
}

/* The entry holding p's start (end 0) or end (end 1): round-trips, or is refused with why. */
static void sandbox_entry(struct sandbox_parts *p, int end, const char *why)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    uint8_t *b;
    size_t blen;

    if (end) {
        e.kind_case = SWORN__V1__ENTRY__KIND_SANDBOX_ENDED;
        e.sandbox_ended = &p->en;
    } else {
        e.kind_case = SWORN__V1__ENTRY__KIND_SANDBOX_STARTED;
        e.sandbox_started = &p->st;
    }
    if (why == NULL) {
        entry_round_trip(&e);
        return;
    }
    assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), -1);
    if (strstr(sworn_err_msg(), why) == NULL)
        fail_msg("expected \"%s\", got \"%s\"", why, sworn_err_msg());
    b = raw_pack(&e.base, &blen);
    assert_null(sworn_frame_unpack_entry(b, blen));
    if (strstr(sworn_err_msg(), why) == NULL)
        fail_msg("decoding: expected \"%s\", got \"%s\"", why, sworn_err_msg());
    free(b);
}

/*
 * The sandbox admin calls and entries: each round-trips, and each shape rule of sworn.proto is
 * refused both when packing and when decoding, in the admin request (operator empty, time 0)
 * and in the entry (both required).
 */
static void test_sandbox_messages(void **state)
{
    struct sandbox_parts p;
    static char long_name[SWORN_FRAME_NAME_MAX + 2], long_arg[SWORN_FRAME_STRING_MAX + 2];
    static char *many[SWORN_FRAME_COMMAND_MAX + 1];
    static char big_arg[SWORN_FRAME_STRING_MAX + 1];
    static char *big[10];

    (void)state;
    memset(long_name, 'n', sizeof(long_name) - 1);
    memset(long_arg, 'a', sizeof(long_arg) - 1);
    memset(big_arg, 'b', sizeof(big_arg) - 1);
    for (size_t i = 0; i <= SWORN_FRAME_COMMAND_MAX; i++)
        many[i] = "x";
    for (size_t i = 0; i < 10; i++)
        big[i] = big_arg;

    /* The good forms: the request without operator and time, the entry with them. */
    build_sandbox(&p);
    sandbox_admin(&p, 0, NULL);
    sandbox_admin(&p, 1, NULL);
    p.st.operator_ = "alice";
    p.st.time_unix_ms = 1764633600000ull;
    p.en.operator_ = "alice";
    p.en.time_unix_ms = 1764633601234ull;
    sandbox_entry(&p, 0, NULL);
    sandbox_entry(&p, 1, NULL);
    /* Every reason with the edges of its code; no limits at all (0: none) is a limit form. */
    {
        static const struct {
            int reason;
            uint32_t code;
            int ok;
        } codes[] = {
            {1, 0, 1},  {1, 255, 1}, {1, 256, 0}, {2, 1, 1}, {2, 64, 1}, {2, 0, 0},
            {2, 65, 0}, {4, 1, 1},   {4, 64, 1},  {4, 0, 0}, {4, 65, 0}, {3, 0, 1},
            {3, 9, 0},  {5, 0, 1},   {5, 1, 0},   {0, 0, 0}, {6, 0, 0},
        };

        for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
            p.en.reason = (Sworn__V1__SandboxEndReason)codes[i].reason;
            p.en.code = codes[i].code;
            sandbox_entry(&p, 1,
                          codes[i].ok                                    ? NULL
                          : codes[i].reason >= 1 && codes[i].reason <= 5 ? "for its reason"
                                                                         : "reason");
        }
        p.en.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED;
        p.en.code = 0;
    }
    p.lim.wall_ms = 0;
    p.lim.memory_bytes = 0;
    p.lim.processes = 0;
    p.lim.enforced_by = "rlimit";
    sandbox_entry(&p, 0, NULL);
    p.lim.enforced_by = "cgroup1";
    p.st.isolation = "unprivileged";
    p.st.n_command = SWORN_FRAME_COMMAND_MAX;
    p.st.command = many;
    sandbox_entry(&p, 0, NULL);
    p.st.command = p.argv;
    p.st.n_command = 1;
    p.argv[0] = ""; /* an empty argument is an argument */
    sandbox_entry(&p, 0, NULL);

    /* Each rule of the start, in the entry and in the request. */
    for (int in_request = 0; in_request <= 1; in_request++) {
#define START_BAD(mutate, msg)                                                                     \
    do {                                                                                           \
        build_sandbox(&p);                                                                         \
        if (!in_request) {                                                                         \
            p.st.operator_ = "alice";                                                              \
            p.st.time_unix_ms = 1764633600000ull;                                                  \
        }                                                                                          \
        mutate;                                                                                    \
        if (in_request)                                                                            \
            sandbox_admin(&p, 0, msg);                                                             \
        else                                                                                       \
            sandbox_entry(&p, 0, msg);                                                             \
    } while (0)
        START_BAD(p.st.principal = "", "principal must be 1..128");
        START_BAD(p.st.principal = "agent 1", "principal must be 1..128");
        START_BAD(p.st.principal = long_name, "principal must be 1..128");
        START_BAD(p.st.name = "", "name must be 1..128");
        START_BAD(p.st.name = "run\x7f", "name must be 1..128");
        START_BAD(p.st.sandbox_id = bin(p.id, 15), "sandbox_id is 15 bytes, not 16");
        START_BAD(p.st.sandbox_id = bin(p.id, 17), "sandbox_id is 17 bytes, not 16");
        START_BAD(p.st.sandbox_id = bin(p.id, 0), "sandbox_id is 0 bytes, not 16");
        START_BAD(p.st.n_command = 0, "command has 0 items, not 1..256");
        START_BAD((p.st.command = many, p.st.n_command = SWORN_FRAME_COMMAND_MAX + 1),
                  "command has 257 items, not 1..256");
        START_BAD(p.argv[1] = long_arg, "command[] is 8193 bytes, more than 8192");
        START_BAD(p.argv[1] = "a\x01", "command[]");
        START_BAD(p.argv[1] = "\xff", "command[]");
        START_BAD(p.st.limits = NULL, "limits is missing");
        START_BAD(p.lim.enforced_by = "", "enforced_by is not cgroup2, cgroup1 or rlimit");
        START_BAD(p.lim.enforced_by = "cgroup3", "enforced_by is not cgroup2, cgroup1 or rlimit");
        START_BAD(p.st.config_sha256 = bin(hash_a, 31), "config_sha256 is 31 bytes, not 32");
        START_BAD(p.st.config_sha256 = bin(hash_a, 0), "config_sha256 is 0 bytes, not 32");
        START_BAD(p.st.isolation = "", "isolation is neither root nor unprivileged");
        START_BAD(p.st.isolation = "Root", "isolation is neither root nor unprivileged");
        if (in_request) {
            START_BAD(p.st.operator_ = "alice", "operator must be empty");
            START_BAD(p.st.time_unix_ms = 1, "time_unix_ms must be 0");
            /* Within every per-field bound, but too large for one log entry beside its
             * operator and time: refused before it reaches decisiond's log. */
            START_BAD((p.st.command = big, p.st.n_command = 10), "what a log entry can hold");
        } else {
            START_BAD(p.st.operator_ = "", "operator is missing");
            START_BAD(p.st.operator_ = "al\nice", "operator");
            START_BAD(p.st.time_unix_ms = 0, "time_unix_ms is missing");
        }
#undef START_BAD
    }
    /* Each rule of the end, in the entry and in the request. */
    for (int in_request = 0; in_request <= 1; in_request++) {
#define END_BAD(mutate, msg)                                                                       \
    do {                                                                                           \
        build_sandbox(&p);                                                                         \
        if (!in_request) {                                                                         \
            p.en.operator_ = "alice";                                                              \
            p.en.time_unix_ms = 1764633600000ull;                                                  \
        }                                                                                          \
        mutate;                                                                                    \
        if (in_request)                                                                            \
            sandbox_admin(&p, 1, msg);                                                             \
        else                                                                                       \
            sandbox_entry(&p, 1, msg);                                                             \
    } while (0)
        END_BAD(p.en.start_index = 0, "start_index is missing (0)");
        END_BAD(p.en.sandbox_id = bin(p.id, 15), "sandbox_id is 15 bytes, not 16");
        END_BAD(p.en.sandbox_id = bin(p.id, 0), "sandbox_id is 0 bytes, not 16");
        END_BAD(p.en.reason = 0, "reason 0 is not 1..5");
        END_BAD(p.en.reason = 6, "reason 6 is not 1..5");
        END_BAD(p.en.code = 300, "code 300 is outside 0..255");
        if (in_request) {
            END_BAD(p.en.operator_ = "alice", "operator must be empty");
            END_BAD(p.en.time_unix_ms = 1, "time_unix_ms must be 0");
        } else {
            END_BAD(p.en.operator_ = "", "operator is missing");
            END_BAD(p.en.time_unix_ms = 0, "time_unix_ms is missing");
        }
#undef END_BAD
    }
    /* The missing messages themselves. */
    {
        Sworn__V1__AdminRequest ar = SWORN__V1__ADMIN_REQUEST__INIT;
        Sworn__V1__SandboxStartRequest sr = SWORN__V1__SANDBOX_START_REQUEST__INIT;
        Sworn__V1__SandboxEndRequest er = SWORN__V1__SANDBOX_END_REQUEST__INIT;
        uint8_t *f;
        size_t flen;

        ar.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_START;
        ar.sandbox_start = &sr;
        assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), -1);
        assert_non_null(strstr(sworn_err_msg(), "sandbox_start.started is missing"));
        ar.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_END;
        ar.sandbox_end = &er;
        assert_int_equal(sworn_frame_pack_admin_request(&ar, &f, &flen), -1);
        assert_non_null(strstr(sworn_err_msg(), "sandbox_end.ended is missing"));
    }
    /* docs/formats.md section 1's example, byte for byte: an end, code 0 absent. */
    {
        static const uint8_t example[] = {
            0x5a, 0x27, 0x08, 0x05, 0x12, 0x10, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
            0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x18, 0x01, 0x28, 0xe8, 0x20, 0x32,
            0x05, 0x61, 0x6c, 0x69, 0x63, 0x65, 0x38, 0xe8, 0xe0, 0xef, 0xe2, 0xad, 0x33};
        Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
        uint8_t *b;
        size_t blen;

        build_sandbox(&p);
        p.en.start_index = 5;
        p.en.code = 0;
        p.en.duration_ms = 4200;
        p.en.operator_ = "alice";
        p.en.time_unix_ms = 1764633604200ull;
        e.kind_case = SWORN__V1__ENTRY__KIND_SANDBOX_ENDED;
        e.sandbox_ended = &p.en;
        assert_int_equal(sworn_frame_pack_entry(&e, &b, &blen), 0);
        assert_int_equal(blen, sizeof(example));
        assert_memory_equal(b, example, sizeof(example));
        free(b);
    }
    /* A request naming its sandbox's start is accepted by the frame checks (decisiond decides
     * whether that sandbox runs), and keeps its index through a round trip. */
    {
        struct req_parts q;
        Sworn__V1__DecisionRequest *m;
        uint8_t *f;
        size_t flen;

        build_request(&q);
        q.principal.sandbox_start_index = 12;
        assert_int_equal(sworn_frame_pack_authorize(&q.r, &f, &flen), 0);
        m = sworn_frame_unpack_decision_request(f + 4, flen - 4);
        assert_non_null(m);
        assert_int_equal(m->authorize->principal->sandbox_start_index, 12);
        sworn__v1__decision_request__free_unpacked(m, NULL);
        free(f);
    }
    /* The answer: a SandboxResponse names an entry, never entry 0 (always a Startup). */
    {
        Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT, *m;
        Sworn__V1__SandboxResponse sb = SWORN__V1__SANDBOX_RESPONSE__INIT;
        uint8_t *f;
        size_t flen;

        r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_SANDBOX;
        r.sandbox = &sb;
        sb.log_index = 42;
        assert_int_equal(sworn_frame_pack_admin_response(&r, &f, &flen), 0);
        m = sworn_frame_unpack_admin_response(f + 4, flen - 4);
        assert_non_null(m);
        assert_int_equal(m->sandbox->log_index, 42);
        sworn__v1__admin_response__free_unpacked(m, NULL);
        free(f);
        sb.log_index = 0;
        assert_int_equal(sworn_frame_pack_admin_response(&r, &f, &flen), -1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_round_trip),
        cmocka_unit_test(test_request_refusal),
        cmocka_unit_test(test_rt16_b_operation_fields),
        cmocka_unit_test(test_reply_round_trip),
        cmocka_unit_test(test_entry_round_trips),
        cmocka_unit_test(test_receipt_forms),
        cmocka_unit_test(test_hostile_headers),
        cmocka_unit_test(test_encode_limits),
        cmocka_unit_test(test_two_frames_in_one_buffer),
        cmocka_unit_test(test_hostile_bodies),
        cmocka_unit_test(test_hostile_entries),
        cmocka_unit_test(test_envelopes),
        cmocka_unit_test(test_resolve_by_index),
        cmocka_unit_test(test_minted_entries),
        cmocka_unit_test(test_time_mark_entries),
        cmocka_unit_test(test_witness_event_entries),
        cmocka_unit_test(test_escalation_pages),
        cmocka_unit_test(test_hostlink_hello),
        cmocka_unit_test(test_sandbox_messages),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
