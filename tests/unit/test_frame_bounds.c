/*
 * test_frame_bounds.c -- the bounds of wire/frame.c that keep the record whole and the daemon's
 * memory bounded (findings 4 and 10 of the control-plane review, issue 11).
 *
 * Evidence:
 *   1. Every request the decision socket accepts fits in its entry: a DecisionRecord whose own
 *      fields are all at their maximum (rule id, reason, credential id and hash, a 10-byte time,
 *      the largest canonical resource) around a request of exactly SWORN_FRAME_REQUEST_MAX bytes
 *      packs to exactly SWORN_FRAME_ENTRY_MAX bytes; one byte more of request and the entry can
 *      no longer be packed, and the decoder refuses that request (SWORN_ERR_RANGE), as it refuses
 *      the review's 256 header names of 256 bytes, which passed every per-field bound.
 *   2. Canonicalisation never makes a resource longer than the record's worst case counts. The
 *      other entries made from accepted messages (CredentialsMinted from a TokenExchange,
 *      EscalationResolved from a ResolveRequest, Refused, PolicyLoaded) fit at their worst.
 *   3. A page of held escalations at its worst (16 requests of SWORN_FRAME_REQUEST_MAX bytes)
 *      fits in a frame; 17, or a larger request, are refused (found while fixing finding 4).
 *   4. The incremental decoder reserves nothing for an announced length: 1 MiB announced and
 *      3 bytes sent hold SWORN_FRAME_DEC_MIN bytes; byte by byte, a body's buffer never holds
 *      more than twice what came; a pool shared by several decoders is never passed, the decoder
 *      that would pass it is refused (SWORN_ERR_RANGE, pool_full) and every byte goes back to
 *      the pool when the decoders let go.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "resource.h"
#include "stack_fixture.h"

/* The record's worst case counts the canonical resource at frame.c's bounds: canonicalisation
 * (policy/resource.h) never makes anything longer. */
_Static_assert(SWORN_RESOURCE_SCHEME_MAX <= SWORN_FRAME_CANON_SCHEME_MAX, "canonical scheme");
_Static_assert(SWORN_RESOURCE_HOST_MAX <= SWORN_FRAME_CANON_HOST_MAX, "canonical host");
_Static_assert(SWORN_RESOURCE_PATH_MAX <= SWORN_FRAME_STRING_MAX, "canonical path");
_Static_assert(SWORN_RESOURCE_TOOL_MAX <= SWORN_FRAME_TOOL_MAX, "canonical tool");
_Static_assert(SWORN_RESOURCE_URI_MAX <= SWORN_FRAME_URI_MAX, "canonical uri");

static uint8_t h32[32];

static ProtobufCBinaryData bin(const uint8_t *p, size_t n)
{
    ProtobufCBinaryData b;

    b.data = (uint8_t *)p;
    b.len = n;
    return b;
}

/* A string of n bytes of c (free it). */
static char *fill(char c, size_t n)
{
    char *s = malloc(n + 1);

    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* The DecisionRecord entry with every field of its own at the most the decoder admits. */
struct worst_record {
    Sworn__V1__Entry e;
    Sworn__V1__DecisionRecord r;
    Sworn__V1__Resource canon;
    char *rule_id, *reason, *credential_id, *host, *path, *tool, *uri;
};

static void worst_init(struct worst_record *w, Sworn__V1__AuthorizationRequest *req)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord r = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__Resource c = SWORN__V1__RESOURCE__INIT;

    memset(h32, 0x5a, sizeof(h32));
    w->e = e;
    w->r = r;
    w->canon = c;
    w->rule_id = fill('r', SWORN_FRAME_ID_MAX);
    w->reason = fill('x', SWORN_FRAME_TEXT_MAX);
    w->credential_id = fill('c', SWORN_FRAME_ID_MAX);
    w->host = fill('a', SWORN_FRAME_CANON_HOST_MAX);
    w->path = fill('q', SWORN_FRAME_STRING_MAX);
    w->path[0] = '/';
    w->tool = fill('t', SWORN_FRAME_TOOL_MAX);
    w->uri = fill('u', SWORN_FRAME_URI_MAX);
    w->r.request = req;
    w->r.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    w->r.rule_id = w->rule_id;
    w->r.reason = w->reason;
    w->r.policy_digest = bin(h32, 32);
    w->r.time_unix_ms = UINT64_MAX;
    w->r.credential_id = w->credential_id;
    w->r.credential_sha256 = bin(h32, 32);
    w->canon.scheme = "https";
    w->canon.host = w->host;
    w->canon.port = 65535;
    w->canon.path = w->path;
    w->canon.tool = w->tool;
    w->canon.uri = w->uri;
    w->r.canonical_resource = &w->canon;
    w->r.raw_target_sha256 = bin(h32, 32);
    w->e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    w->e.decision = &w->r;
}

static void worst_free(struct worst_record *w)
{
    free(w->rule_id);
    free(w->reason);
    free(w->credential_id);
    free(w->host);
    free(w->path);
    free(w->tool);
    free(w->uri);
}

/* The request in a DecisionRequest envelope, packed without any check (what a hostile peer
 * sends). OUT: *len. Free the result. */
static uint8_t *envelope(Sworn__V1__AuthorizationRequest *req, size_t *len)
{
    Sworn__V1__DecisionRequest m = SWORN__V1__DECISION_REQUEST__INIT;
    uint8_t *b;

    m.body_case = SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE;
    m.authorize = req;
    m.version = SWORN_WIRE_VERSION;
    *len = sworn__v1__decision_request__get_packed_size(&m);
    b = malloc(*len);
    assert_non_null(b);
    assert_int_equal(sworn__v1__decision_request__pack(&m, b), *len);
    return b;
}

static void test_largest_request_packs(void **state)
{
    struct sworn_stack_big_req b;
    struct worst_record w;
    uint8_t *entry = NULL, *body, *frame = NULL;
    size_t entry_len = 0, body_len, frame_len = 0;
    Sworn__V1__DecisionRequest *m;

    (void)state;
    assert_int_equal(SWORN_FRAME_REQUEST_MAX, 53348);
    sworn_stack_big_init(&b, "req-boundary", "/");
    worst_init(&w, &b.q.req);

    /* Exactly the bound: accepted by the socket's decoder, and its worst entry fills the limit. */
    sworn_stack_big_fit(&b, SWORN_FRAME_REQUEST_MAX);
    body = envelope(&b.q.req, &body_len);
    m = sworn_frame_unpack_decision_request(body, body_len);
    assert_non_null(m);
    sworn__v1__decision_request__free_unpacked(m, NULL);
    free(body);
    assert_int_equal(sworn_frame_pack_authorize(&b.q.req, &frame, &frame_len), 0);
    free(frame);
    assert_int_equal(sworn_frame_pack_entry(&w.e, &entry, &entry_len), 0);
    assert_int_equal(entry_len, SWORN_FRAME_ENTRY_MAX);
    free(entry);

    /* One byte more: that entry could not be recorded, so the request is refused at decode. */
    sworn_stack_big_fit(&b, SWORN_FRAME_REQUEST_MAX + 1);
    assert_int_equal(sworn_frame_pack_entry(&w.e, &entry, &entry_len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_null(entry);
    body = envelope(&b.q.req, &body_len);
    assert_null(sworn_frame_unpack_decision_request(body, body_len));
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_non_null(strstr(sworn_err_msg(), "53349 bytes, more than 53348"));
    free(body);
    /* The proxy's packer refuses to send it. */
    assert_int_equal(sworn_frame_pack_authorize(&b.q.req, &frame, &frame_len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_null(frame);

    /* The review's request: 256 header names of 256 bytes, each within its own bound. */
    sworn_stack_big_path(&b, 2);
    b.q.context.n_header_names = SWORN_FRAME_HEADERS_MAX;
    assert_true(sworn_stack_big_size(&b) > SWORN_FRAME_REQUEST_MAX);
    body = envelope(&b.q.req, &body_len);
    assert_null(sworn_frame_unpack_decision_request(body, body_len));
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    free(body);
    /* The same request stays a valid bare request (request JSON, entries written before the
     * bound): the bound is the decision socket's. */
    {
        uint8_t *f = NULL;
        size_t fl = 0;
        Sworn__V1__AuthorizationRequest *r;

        assert_int_equal(sworn_frame_pack_request(&b.q.req, &f, &fl), 0);
        r = sworn_frame_unpack_request(f + SWORN_FRAME_HDR_LEN, fl - SWORN_FRAME_HDR_LEN);
        assert_non_null(r);
        sworn__v1__authorization_request__free_unpacked(r, NULL);
        free(f);
    }
    worst_free(&w);
}

/*
 * A page of held escalations at its worst fits in a frame (found while fixing finding 4: before
 * pages, 19 held requests of the largest size made the one listing too large to send): 16
 * requests of exactly SWORN_FRAME_REQUEST_MAX bytes, every varint at its longest, pack to the
 * bound frame.h spells out (less 4: the version is 1, one byte, where the bound counts five). A
 * 17th, or a request one byte larger than the decision socket takes, is refused.
 */
static void test_escalations_page_fits(void **state)
{
    struct sworn_stack_big_req b;
    Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
    Sworn__V1__ListEscalationsResponse l = SWORN__V1__LIST_ESCALATIONS_RESPONSE__INIT;
    Sworn__V1__PendingEscalation pe[SWORN_FRAME_ESCALATIONS_PAGE + 1];
    Sworn__V1__PendingEscalation *pp[SWORN_FRAME_ESCALATIONS_PAGE + 1];
    uint8_t *frame = NULL;
    size_t frame_len = 0;
    Sworn__V1__AdminResponse *back;

    (void)state;
    memset(h32, 0x3c, sizeof(h32));
    sworn_stack_big_init(&b, "req-held", "/");
    sworn_stack_big_fit(&b, SWORN_FRAME_REQUEST_MAX);
    for (size_t i = 0; i <= SWORN_FRAME_ESCALATIONS_PAGE; i++) {
        sworn__v1__pending_escalation__init(&pe[i]);
        pe[i].request = &b.q.req;
        pe[i].since_unix_ms = UINT64_MAX;
        pe[i].deadline_unix_ms = UINT64_MAX;
        pe[i].log_index = UINT64_MAX - SWORN_FRAME_ESCALATIONS_PAGE + i; /* 10 bytes, ascending */
        pe[i].entry_hash = bin(h32, 32);
        pp[i] = &pe[i];
    }
    l.pending = pp;
    l.n_pending = SWORN_FRAME_ESCALATIONS_PAGE;
    l.total = UINT32_MAX;
    l.more = 1;
    r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_LIST_ESCALATIONS;
    r.list_escalations = &l;
    assert_int_equal(sworn_frame_pack_admin_response(&r, &frame, &frame_len), 0);
    assert_int_equal(frame_len - SWORN_FRAME_HDR_LEN, SWORN_FRAME_ESCALATIONS_MAX - 4);
    assert_true(frame_len <= SWORN_FRAME_HDR_LEN + SWORN_FRAME_MAX);
    back = sworn_frame_unpack_admin_response(frame + SWORN_FRAME_HDR_LEN,
                                             frame_len - SWORN_FRAME_HDR_LEN);
    assert_non_null(back);
    assert_int_equal(back->list_escalations->n_pending, SWORN_FRAME_ESCALATIONS_PAGE);
    sworn__v1__admin_response__free_unpacked(back, NULL);
    free(frame);

    /* 17: refused, by count. */
    l.n_pending = SWORN_FRAME_ESCALATIONS_PAGE + 1;
    assert_int_equal(sworn_frame_pack_admin_response(&r, &frame, &frame_len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_non_null(strstr(sworn_err_msg(), "list_escalations.pending has 17 items, more than 16"));
    /* A held request larger than the decision socket takes: refused, by size. */
    l.n_pending = SWORN_FRAME_ESCALATIONS_PAGE;
    sworn_stack_big_fit(&b, SWORN_FRAME_REQUEST_MAX + 1);
    assert_int_equal(sworn_frame_pack_admin_response(&r, &frame, &frame_len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_null(frame);
}

/* The longest raw path canonicalises within the record's bound (or is refused). */
static void test_canonical_fits(void **state)
{
    Sworn__V1__Resource r = SWORN__V1__RESOURCE__INIT;
    struct sworn_resource c;
    const char *why = NULL;
    char *path = fill('a', SWORN_FRAME_STRING_MAX), *tool = fill('t', SWORN_FRAME_TOOL_MAX);

    (void)state;
    path[0] = '/';
    r.scheme = "HTTPS";
    r.host = "API.EXAMPLE.COM.";
    r.port = 443;
    r.path = path;
    r.tool = tool;
    assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
    assert_true(strlen(c.path) <= SWORN_FRAME_STRING_MAX);
    assert_true(strlen(c.tool) <= SWORN_FRAME_TOOL_MAX);
    /* "" becomes "/", one byte longer than what came, still far inside the bound. */
    r.path = "";
    assert_int_equal(sworn_resource_canon(&r, &c, &why), 0);
    assert_string_equal(c.path, "/");
    free(path);
    free(tool);
}

static void test_other_entries_fit(void **state)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__CredentialsMinted cm = SWORN__V1__CREDENTIALS_MINTED__INIT;
    Sworn__V1__MintedCredential mc[SWORN_FRAME_EXCHANGE_MAX], *mcp[SWORN_FRAME_EXCHANGE_MAX];
    Sworn__V1__EscalationResolved er = SWORN__V1__ESCALATION_RESOLVED__INIT;
    Sworn__V1__Refused rf = SWORN__V1__REFUSED__INIT;
    Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;
    char *id = fill('i', SWORN_FRAME_ID_MAX), *field = fill('f', 64), *op = fill('o', 256),
         *text = fill('x', SWORN_FRAME_TEXT_MAX), *msg = fill('m', SWORN_ERR_MSG_MAX - 1),
         *source = fill('s', SWORN_FRAME_STRING_MAX);
    uint8_t *out = NULL;
    size_t len = 0;

    (void)state;
    memset(h32, 0x11, sizeof(h32));
    /* A TokenExchange at its bounds (ids of 128, 8 tokens with fields of 64) mints this. */
    for (size_t i = 0; i < SWORN_FRAME_EXCHANGE_MAX; i++) {
        sworn__v1__minted_credential__init(&mc[i]);
        mc[i].field = field;
        mc[i].credential_id = id;
        mc[i].value_sha256 = bin(h32, 32);
        mc[i].symbolic_sha256 = bin(h32, 32);
        mcp[i] = &mc[i];
    }
    cm.request_id = cm.allow_request_id = cm.from_credential_id = id;
    cm.minted = mcp;
    cm.n_minted = SWORN_FRAME_EXCHANGE_MAX;
    cm.time_unix_ms = UINT64_MAX;
    e.kind_case = SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED;
    e.credentials_minted = &cm;
    assert_int_equal(sworn_frame_pack_entry(&e, &out, &len), 0);
    assert_true(len < SWORN_FRAME_ENTRY_MAX);
    free(out);

    /* A ResolveRequest at its bounds. */
    er.request_id = id;
    er.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    er.operator_ = op;
    er.reason = text;
    er.escalation_index = UINT64_MAX;
    er.escalation_hash = bin(h32, 32);
    er.time_unix_ms = UINT64_MAX;
    e.kind_case = SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED;
    e.escalation_resolved = &er;
    assert_int_equal(sworn_frame_pack_entry(&e, &out, &len), 0);
    free(out);

    /* The largest refusal. */
    rf.channel = "decision";
    rf.peer_uid = rf.peer_pid = rf.code = UINT32_MAX;
    rf.message = msg;
    rf.request_id = id;
    rf.frame_sha256 = bin(h32, 32);
    rf.time_unix_ms = UINT64_MAX;
    e.kind_case = SWORN__V1__ENTRY__KIND_REFUSED;
    e.refused = &rf;
    assert_int_equal(sworn_frame_pack_entry(&e, &out, &len), 0);
    free(out);

    /* A refused policy file with the longest source and error. */
    pl.digest = bin(h32, 32);
    pl.source = source;
    pl.time_unix_ms = pl.version = UINT64_MAX;
    pl.error = text;
    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &pl;
    assert_int_equal(sworn_frame_pack_entry(&e, &out, &len), 0);
    free(out);

    free(id);
    free(field);
    free(op);
    free(text);
    free(msg);
    free(source);
}

static void test_buffer_grows_with_bytes(void **state)
{
    static const uint8_t mib[] = {0x00, 0x10, 0x00, 0x00, 'a', 'b', 'c'};
    struct sworn_frame_pool pool = {.cap = SWORN_FRAME_MAX * 4};
    struct sworn_frame_dec d;
    const uint8_t *body;
    size_t blen, n = 100000;
    uint8_t *stream = malloc(SWORN_FRAME_HDR_LEN + n);

    (void)state;
    /* An announced 1 MiB and three bytes: one small buffer, not 1 MiB. */
    sworn_frame_dec_init_pool(&d, &pool);
    assert_int_equal(sworn_frame_dec_feed(&d, mib, sizeof(mib), &body, &blen), (long)sizeof(mib));
    assert_null(body);
    assert_int_equal(pool.used, SWORN_FRAME_DEC_MIN);
    sworn_frame_dec_free(&d);
    assert_int_equal(pool.used, 0);

    /* Byte by byte: never more than twice what came (or the first buffer). */
    assert_non_null(stream);
    stream[0] = 0;
    stream[1] = (uint8_t)(n >> 16);
    stream[2] = (uint8_t)(n >> 8);
    stream[3] = (uint8_t)n;
    for (size_t i = 0; i < n; i++)
        stream[SWORN_FRAME_HDR_LEN + i] = (uint8_t)(i * 7);
    pool.peak = 0;
    sworn_frame_dec_init_pool(&d, &pool);
    for (size_t off = 0; off < SWORN_FRAME_HDR_LEN + n; off++) {
        size_t have = off + 1 > SWORN_FRAME_HDR_LEN ? off + 1 - SWORN_FRAME_HDR_LEN : 0;

        assert_int_equal(sworn_frame_dec_feed(&d, stream + off, 1, &body, &blen), 1);
        assert_true(pool.used <= (2 * have > SWORN_FRAME_DEC_MIN ? 2 * have : SWORN_FRAME_DEC_MIN));
        assert_true(pool.used <= n);
    }
    assert_non_null(body);
    assert_int_equal(blen, n);
    assert_memory_equal(body, stream + SWORN_FRAME_HDR_LEN, n);
    assert_int_equal(pool.used, n);
    /* Let go of the frame at once: the pool has it back before the next frame starts. */
    sworn_frame_dec_release(&d);
    assert_int_equal(pool.used, 0);
    assert_true(sworn_frame_dec_idle(&d));
    /* The decoder goes on with the next frame, in one piece this time. */
    assert_int_equal(sworn_frame_dec_feed(&d, stream, SWORN_FRAME_HDR_LEN + n, &body, &blen),
                     (long)(SWORN_FRAME_HDR_LEN + n));
    assert_non_null(body);
    assert_int_equal(pool.used, n);
    assert_int_equal(pool.peak, n);
    sworn_frame_dec_free(&d);
    assert_int_equal(pool.used, 0);
    free(stream);
}

static void test_pool_cap(void **state)
{
    static const uint8_t mib[] = {0x00, 0x10, 0x00, 0x00, 'a', 'b', 'c'};
    struct sworn_frame_pool pool = {.cap = 3 * SWORN_FRAME_DEC_MIN};
    struct sworn_frame_dec d[4], e;
    const uint8_t *body;
    size_t blen;
    uint8_t *chunk = calloc(1, 2 * SWORN_FRAME_DEC_MIN);

    (void)state;
    assert_non_null(chunk);
    chunk = realloc(chunk, 2 * SWORN_FRAME_DEC_MIN + 1);
    assert_non_null(chunk);
    for (int i = 0; i < 3; i++) {
        sworn_frame_dec_init_pool(&d[i], &pool);
        assert_int_equal(sworn_frame_dec_feed(&d[i], mib, sizeof(mib), &body, &blen),
                         (long)sizeof(mib));
        assert_int_equal(sworn_frame_dec_pool_full(&d[i]), 0);
    }
    assert_int_equal(pool.used, pool.cap);
    /* The fourth has no room: refused, and says why; its header alone cost nothing. */
    sworn_frame_dec_init_pool(&d[3], &pool);
    assert_int_equal(sworn_frame_dec_feed(&d[3], mib, sizeof(mib), &body, &blen), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(sworn_frame_dec_pool_full(&d[3]), 1);
    assert_false(sworn_frame_dec_idle(&d[3]));
    assert_int_equal(sworn_frame_dec_feed(&d[3], mib, sizeof(mib), &body, &blen), -1);
    assert_int_equal(pool.used, pool.cap);
    /* A decoder that grows past the cap is refused too, keeping what it held until freed. */
    sworn_frame_dec_free(&d[2]);
    assert_int_equal(pool.used, 2 * SWORN_FRAME_DEC_MIN);
    sworn_frame_dec_init_pool(&e, &pool);
    assert_int_equal(sworn_frame_dec_feed(&e, mib, 4, &body, &blen), 4);
    assert_int_equal(sworn_frame_dec_feed(&e, chunk, SWORN_FRAME_DEC_MIN, &body, &blen),
                     (long)SWORN_FRAME_DEC_MIN);
    assert_int_equal(pool.used, pool.cap);
    assert_int_equal(sworn_frame_dec_feed(&e, chunk, 1, &body, &blen), -1);
    assert_int_equal(sworn_frame_dec_pool_full(&e), 1);
    assert_true(pool.used <= pool.cap);
    /* Near the cap a buffer takes what it needs rather than doubling past the cap. */
    sworn_frame_dec_free(&d[0]);
    sworn_frame_dec_free(&d[1]);
    sworn_frame_dec_free(&e);
    assert_int_equal(pool.used, 0);
    sworn_frame_dec_init_pool(&e, &pool);
    assert_int_equal(sworn_frame_dec_feed(&e, mib, 4, &body, &blen), 4);
    assert_int_equal(sworn_frame_dec_feed(&e, chunk, 2 * SWORN_FRAME_DEC_MIN, &body, &blen),
                     (long)(2 * SWORN_FRAME_DEC_MIN));
    assert_int_equal(sworn_frame_dec_feed(&e, chunk, SWORN_FRAME_DEC_MIN, &body, &blen),
                     (long)SWORN_FRAME_DEC_MIN);
    assert_int_equal(pool.used, pool.cap);
    assert_int_equal(sworn_frame_dec_pool_full(&e), 0);
    sworn_frame_dec_free(&e);
    sworn_frame_dec_free(&d[3]);
    assert_int_equal(pool.used, 0);
    assert_int_equal(pool.held, 0);

    /* With an allowance of its own per decoder, a frame within it is served however full the
     * pool is: one hog cannot starve the ordinary requests of the other connections. */
    pool.cap = 2 * SWORN_FRAME_DEC_MIN;
    pool.own = 2 * SWORN_FRAME_DEC_MIN;
    pool.peak = 0;
    sworn_frame_dec_init_pool(&d[0], &pool);
    assert_int_equal(sworn_frame_dec_feed(&d[0], mib, 4, &body, &blen), 4);
    for (int i = 0; i < 2; i++)
        assert_int_equal(sworn_frame_dec_feed(&d[0], chunk, 2 * SWORN_FRAME_DEC_MIN, &body, &blen),
                         (long)(2 * SWORN_FRAME_DEC_MIN));
    assert_int_equal(pool.used, pool.cap);
    assert_int_equal(pool.held, 4 * SWORN_FRAME_DEC_MIN);
    assert_int_equal(sworn_frame_dec_feed(&d[0], chunk, 1, &body, &blen), -1);
    assert_int_equal(sworn_frame_dec_pool_full(&d[0]), 1);
    {
        uint8_t *frame = calloc(1, SWORN_FRAME_HDR_LEN + 2 * SWORN_FRAME_DEC_MIN);

        assert_non_null(frame);
        frame[2] = (uint8_t)((2 * SWORN_FRAME_DEC_MIN) >> 8);
        sworn_frame_dec_init_pool(&d[1], &pool);
        assert_int_equal(sworn_frame_dec_feed(&d[1], frame,
                                              SWORN_FRAME_HDR_LEN + 2 * SWORN_FRAME_DEC_MIN, &body,
                                              &blen),
                         (long)(SWORN_FRAME_HDR_LEN + 2 * SWORN_FRAME_DEC_MIN));
        assert_non_null(body);
        assert_int_equal(blen, 2 * SWORN_FRAME_DEC_MIN);
        assert_int_equal(pool.held, 6 * SWORN_FRAME_DEC_MIN);
        assert_int_equal(pool.peak, 6 * SWORN_FRAME_DEC_MIN);
        free(frame);
    }
    /* Past its own, the second decoder would borrow: refused. */
    assert_int_equal(sworn_frame_dec_feed(&d[1], mib, 4, &body, &blen), 4);
    assert_int_equal(sworn_frame_dec_feed(&d[1], chunk, 2 * SWORN_FRAME_DEC_MIN + 1, &body, &blen),
                     -1);
    assert_int_equal(sworn_frame_dec_pool_full(&d[1]), 1);
    sworn_frame_dec_free(&d[0]);
    sworn_frame_dec_free(&d[1]);
    assert_int_equal(pool.used, 0);
    assert_int_equal(pool.held, 0);
    free(chunk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_largest_request_packs),
        cmocka_unit_test(test_canonical_fits),
        cmocka_unit_test(test_other_entries_fit),
        cmocka_unit_test(test_escalations_page_fits),
        cmocka_unit_test(test_buffer_grows_with_bytes),
        cmocka_unit_test(test_pool_cap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
