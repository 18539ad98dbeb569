/*
 * test_httpsig_verify.c -- sworn-verify on http-message receipts (Receipt form 1: sworn's RFC
 * 9421 signature over the decided request and the entry's leaf hash, docs/formats.md section 13),
 * and the ways a dishonest operator (or a faulty decisiond) could try to make it pass a receipt
 * that does not say what the entry says.
 *
 * Records are made by the real log tools (`sworn-log init`, the log library's
 * sworn_log_append_receipts as decisiond calls it, `checkpoint`, `export-tiles`) and checked by
 * the real `sworn-verify` binary with a trust policy naming a P-256 receipt key. The receipts are
 * signed here with that key, over bases built by httpsig/sig_base.c (checked against RFC 9421
 * appendix B and the npm library elsewhere).
 *
 * The genuine record (a GET with a query, a POST with a body, an approved escalation of a PUT,
 * a tcp.connect with a digest receipt) passes. Then, one case each:
 *   - the entry changed after the fact (method, path, query, body digest): receipt-invalid;
 *   - a receipt whose base says another method, path, query, authority or body digest than its
 *     entry (what upstream would have seen differs from the record): receipt-invalid;
 *   - a base without the content digest for an entry with a body, or with one for an entry
 *     without: receipt-params (the covered list differs);
 *   - two http-message receipts swapped: receipt-created (decided in other seconds);
 *   - created not the entry's time in seconds: receipt-created;
 *   - signature_params other than the base's (another tag, order, a dropped component) while the
 *     signature is over the genuine base: receipt-params;
 *   - an http-message receipt for tcp.connect: receipt-form;
 *   - a 72-byte DER signature in form 1, form 2: receipt-malformed;
 *   - an approval's receipt over the resolution's leaf but another request than the escalated
 *     one: receipt-invalid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "logstore.h"
#include "record_fixture.h"
#include "sig_base.h"
#include "sv_util.h"
#include "sworn.pb-c.h"
#include "testutil.h"
#include "verify_fixture.h"

#define ORIGIN "httpsig.sworn.example/log"
#define KEY_NAME "httpsig.sworn.example"
#define T0 1764633600000ull /* 2025-12-02 */

static const char *log_bin, *verify_bin;

struct fx {
    char *dir;
    EVP_PKEY *key; /* P-256 receipt key */
    uint8_t spki[91];
    uint8_t key_id[32];
    char keyid_hex[65];
    char spki_b64[160];
    uint8_t digest[32]; /* the policy loaded */
};

/* One decided request, as an entry holds it (canonical form). */
struct req {
    const char *operation, *method, *scheme, *host, *path;
    unsigned port;
    int has_body;
    uint8_t body_sha[32];
};

static const uint8_t body_sha_a[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const uint8_t body_sha_b[32] = {9, 8, 7, 6, 5, 4, 3, 2, 1};

static void policy_loaded(const struct fx *f, struct sworn_record *b)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;

    pl.digest.data = (uint8_t *)f->digest;
    pl.digest.len = 32;
    pl.source = "/etc/sworn/policy.yaml";
    pl.time_unix_ms = T0;
    pl.version = 1;
    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &pl;
    sworn_record_add(b, &e);
}

/* A DecisionRecord of q as decisiond writes it (the request already in canonical form, so the
 * canonical_resource is the request's resource). */
static void decision(const struct fx *f, struct sworn_record *b, const char *id,
                     Sworn__V1__Effect effect, const struct req *q, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord d = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__AuthorizationRequest rq = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource rs = SWORN__V1__RESOURCE__INIT, cr = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__Context cx = SWORN__V1__CONTEXT__INIT;
    char raw[1024];
    uint8_t raw_sha[32];

    pr.id = "agent-1";
    rs.scheme = cr.scheme = (char *)q->scheme;
    rs.host = cr.host = (char *)q->host;
    rs.port = cr.port = q->port;
    rs.path = cr.path = (char *)q->path;
    snprintf(raw, sizeof(raw), "%s://%s:%u%s", q->scheme, q->host, q->port, q->path);
    sv_sha256(raw, strlen(raw), raw_sha);
    cx.method = (char *)q->method;
    if (q->has_body) {
        cx.body_sha256.data = (uint8_t *)q->body_sha;
        cx.body_sha256.len = 32;
        cx.body_length = 16;
    }
    rq.request_id = (char *)id;
    rq.principal = &pr;
    rq.operation = (char *)q->operation;
    rq.resource = &rs;
    rq.context = &cx;
    rq.time_unix_ms = t_ms;
    d.request = &rq;
    d.effect = effect;
    d.rule_id = "r";
    d.reason = "rule r matched";
    d.policy_digest.data = (uint8_t *)f->digest;
    d.policy_digest.len = 32;
    d.time_unix_ms = t_ms;
    d.canonical_resource = &cr;
    d.raw_target_sha256.data = raw_sha;
    d.raw_target_sha256.len = 32;
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &d;
    sworn_record_add(b, &e);
}

static void resolution(struct sworn_record *b, const char *id, size_t of, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__EscalationResolved r = SWORN__V1__ESCALATION_RESOLVED__INIT;
    uint8_t leaf[32];

    sworn_record_leaf(b, of, leaf);
    r.request_id = (char *)id;
    r.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    r.operator_ = "alice";
    r.reason = "approved";
    r.time_unix_ms = t_ms;
    r.escalation_index = of;
    r.escalation_hash.data = leaf;
    r.escalation_hash.len = 32;
    e.kind_case = SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED;
    e.escalation_resolved = &r;
    sworn_record_add(b, &e);
}

/* ECDSA P-256 over msg: DER into der (*der_len) and r||s into raw. */
static void sign_p256(const struct fx *f, const uint8_t *msg, size_t len, uint8_t *der,
                      size_t *der_len, uint8_t raw[64])
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    const unsigned char *p = der;
    ECDSA_SIG *s;
    const BIGNUM *r = NULL, *sv = NULL;

    *der_len = 80;
    assert_int_equal(EVP_DigestSignInit(c, NULL, EVP_sha256(), NULL, f->key), 1);
    assert_int_equal(EVP_DigestSign(c, der, der_len, msg, len), 1);
    EVP_MD_CTX_free(c);
    s = d2i_ECDSA_SIG(NULL, &p, (long)*der_len);
    assert_non_null(s);
    ECDSA_SIG_get0(s, &r, &sv);
    assert_int_equal(BN_bn2binpad(r, raw, 32), 32);
    assert_int_equal(BN_bn2binpad(sv, raw + 32, 32), 32);
    ECDSA_SIG_free(s);
}

/* How a receipt is to be made wrong (all zero: the genuine receipt). */
struct twist {
    const struct req *as;  /* sign the base of this request instead of the entry's */
    int64_t created_delta; /* seconds added to created (in the base and the field) */
    const char *params;    /* store these signature_params instead of the base's */
    int der;               /* store the DER signature instead of r||s */
    unsigned form;         /* store this form instead of 1 */
    size_t leaf_of;        /* sign another entry's leaf hash (0: the entry's own) */
};

/* The http-message receipt of entry i (whose request is q, time t_ms) with twist w. */
static void http_receipt(const struct fx *f, struct sworn_record *b, size_t i, const struct req *q,
                         uint64_t t_ms, const struct twist *w)
{
    static const struct twist none;
    const struct req *as;
    uint8_t leaf[32], base[SWORN_SIGBASE_MAX], der[80], raw[64];
    char params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t base_len, params_len, der_len;
    const char *why = NULL;
    int64_t created;
    struct sworn_httpsig_request h;
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;

    if (w == NULL)
        w = &none;
    as = w->as != NULL ? w->as : q;
    sworn_record_leaf(b, w->leaf_of != 0 ? w->leaf_of : i, leaf);
    created = (int64_t)(t_ms / 1000) + w->created_delta;
    h = (struct sworn_httpsig_request){as->method, as->scheme, as->host,
                                       as->port,   as->path,   as->has_body ? as->body_sha : NULL,
                                       leaf};
    if (sworn_httpsig_base(&h, created, f->keyid_hex, base, sizeof(base), &base_len, params,
                           sizeof(params), &params_len, &why) != 0)
        fail_msg("base: %s", why);
    sign_p256(f, base, base_len, der, &der_len, raw);
    r.key_id.data = (uint8_t *)f->key_id;
    r.key_id.len = 32;
    r.alg = 1;
    r.form = w->form != 0 ? w->form : 1;
    r.created = (uint64_t)created;
    r.signature_params = (char *)(w->params != NULL ? w->params : params);
    r.signature.data = w->der ? der : raw;
    r.signature.len = w->der ? der_len : 64;
    sworn_record_put_receipt(b, i, &r);
}

/* A digest receipt (form 0) of entry i. */
static void digest_receipt(const struct fx *f, struct sworn_record *b, size_t i)
{
    uint8_t tbs[18 + 32], der[80], raw[64];
    size_t der_len;
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;

    memcpy(tbs, "\xffsworn/v1 receipt", 17);
    tbs[17] = 0;
    sworn_record_leaf(b, i, tbs + 18);
    sign_p256(f, tbs, sizeof(tbs), der, &der_len, raw);
    r.key_id.data = (uint8_t *)f->key_id;
    r.key_id.len = 32;
    r.alg = 1;
    r.signature.data = der;
    r.signature.len = der_len;
    sworn_record_put_receipt(b, i, &r);
}

/* The genuine requests of the record. */
static const struct req get_q = {"http.request",  "GET", "https", "api.example.com",
                                 "/v1/items?a=b", 443,   0,       {0}};
static struct req post_q = {"http.request", "POST", "https", "api.example.com",
                            "/v1/charges",  8443,   1,       {0}};
static const struct req put_q = {"http.request", "PUT", "http", "10.0.0.7",
                                 "/v1/limits",   80,    0,      {0}};
static const struct req tcp_q = {"tcp.connect", "CONNECT", "tcp", "db.example", "", 5432, 0, {0}};

enum { E_POLICY, E_GET, E_POST, E_DENY, E_ESC, E_APPROVE, E_TCP, E_COUNT };
#define T_GET (T0 + 1500)
#define T_POST (T0 + 2999)
#define T_APPROVE (T0 + 9000)

/* The genuine record: a policy, a GET allow, a POST allow with a body, a deny, an escalated PUT
 * and its approval, a tcp.connect allow with a digest receipt. */
static void good(const struct fx *f, struct sworn_record *b)
{
    memcpy(post_q.body_sha, body_sha_a, 32);
    policy_loaded(f, b);
    decision(f, b, "get-1", SWORN__V1__EFFECT__EFFECT_ALLOW, &get_q, T_GET);
    http_receipt(f, b, E_GET, &get_q, T_GET, NULL);
    decision(f, b, "post-1", SWORN__V1__EFFECT__EFFECT_ALLOW, &post_q, T_POST);
    http_receipt(f, b, E_POST, &post_q, T_POST, NULL);
    decision(f, b, "deny-1", SWORN__V1__EFFECT__EFFECT_DENY, &get_q, T0 + 4000);
    decision(f, b, "put-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, &put_q, T0 + 5000);
    resolution(b, "put-1", E_ESC, T_APPROVE);
    http_receipt(f, b, E_APPROVE, &put_q, T_APPROVE, NULL);
    decision(f, b, "tcp-1", SWORN__V1__EFFECT__EFFECT_ALLOW, &tcp_q, T0 + 10000);
    digest_receipt(f, b, E_TCP);
}

static void make_record(const struct fx *f, const char *name, const struct sworn_record *b)
{
    const struct sworn_record_log where = {log_bin, f->dir, ORIGIN, KEY_NAME, f->spki_b64};

    sworn_record_make(&where, name, b, NULL);
}

static json_object *verify(const struct fx *f, const char *name, int want)
{
    char pn[128];

    snprintf(pn, sizeof(pn), "%s.policy", name);
    return sworn_verify_json(verify_bin, f->dir, pn, name, NULL, want, 0);
}

/* Build the genuine record, let change() twist it, and expect receipts to fail with reason at
 * entry item (NULL reason: expect a pass). */
static void expect(struct fx *f, const char *name,
                   void (*change)(struct fx *, struct sworn_record *), const char *reason,
                   const char *item)
{
    struct sworn_record b = {0};
    json_object *rep;

    good(f, &b);
    if (change != NULL)
        change(f, &b);
    make_record(f, name, &b);
    rep = verify(f, name, reason == NULL ? 0 : 1);
    if (reason == NULL) {
        sworn_verify_expect_pass(rep, "receipts");
        sworn_verify_expect_pass(rep, "entries");
        assert_int_equal(
            json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "receipts"), "count")),
            4);
    } else {
        sworn_verify_expect_fail(rep, "receipts", reason, item);
    }
    json_object_put(rep);
    sworn_record_free(&b);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    uint8_t *p;

    assert_non_null(f);
    f->dir = sworn_test_tmpdir("httpsig-verify");
    assert_int_equal(EVP_PKEY_keygen_init(kc), 1);
    assert_int_equal(EVP_PKEY_CTX_set_ec_paramgen_curve_nid(kc, NID_X9_62_prime256v1), 1);
    assert_int_equal(EVP_PKEY_keygen(kc, &f->key), 1);
    EVP_PKEY_CTX_free(kc);
    p = f->spki;
    assert_int_equal(i2d_PUBKEY(f->key, &p), 91);
    sv_sha256(f->spki, 91, f->key_id);
    for (int i = 0; i < 32; i++)
        snprintf(f->keyid_hex + 2 * i, 3, "%02x", f->key_id[i]);
    sv_b64_encode(f->spki, 91, f->spki_b64, sizeof(f->spki_b64));
    sv_sha256("policy", 6, f->digest);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_rmtree(f->dir);
    free(f->dir);
    EVP_PKEY_free(f->key);
    free(f);
    return 0;
}

/* --- the changes ----------------------------------------------------------------------------- */

/* Replace entry i by the decision of q (same id, effect and time), keeping every receipt. */
static void rewrite(struct fx *f, struct sworn_record *b, size_t i, const char *id,
                    const struct req *q, uint64_t t)
{
    struct sworn_record one = {0};

    decision(f, &one, id, SWORN__V1__EFFECT__EFFECT_ALLOW, q, t);
    free(b->e[i]);
    b->e[i] = one.e[0];
    b->len[i] = one.len[0];
    one.e[0] = NULL;
    one.n = 0;
}

/* The entry rewritten after the fact (its receipt kept): another method, path, query, body. */
static void entry_method(struct fx *f, struct sworn_record *b)
{
    struct req q = get_q;

    q.method = "DELETE";
    rewrite(f, b, E_GET, "get-1", &q, T_GET);
}

static void entry_path(struct fx *f, struct sworn_record *b)
{
    struct req q = get_q;

    q.path = "/v1/admin?a=b";
    rewrite(f, b, E_GET, "get-1", &q, T_GET);
}

static void entry_query(struct fx *f, struct sworn_record *b)
{
    struct req q = get_q;

    q.path = "/v1/items?a=c";
    rewrite(f, b, E_GET, "get-1", &q, T_GET);
}

static void entry_body(struct fx *f, struct sworn_record *b)
{
    struct req q = post_q;

    memcpy(q.body_sha, body_sha_b, 32);
    rewrite(f, b, E_POST, "post-1", &q, T_POST);
}

/* Receipts over the entry's own leaf but another request than the entry's. */
static void base_twisted(struct fx *f, struct sworn_record *b, size_t i, const struct req *q,
                         uint64_t t, const struct req *as)
{
    struct twist w = {0};

    w.as = as;
    http_receipt(f, b, i, q, t, &w);
}

static void base_method(struct fx *f, struct sworn_record *b)
{
    struct req q = get_q;

    q.method = "DELETE";
    base_twisted(f, b, E_GET, &get_q, T_GET, &q);
}

static void base_path(struct fx *f, struct sworn_record *b)
{
    struct req q = get_q;

    q.path = "/v1/admin?a=b";
    base_twisted(f, b, E_GET, &get_q, T_GET, &q);
}

static void base_query(struct fx *f, struct sworn_record *b)
{
    struct req q = get_q;

    q.path = "/v1/items";
    base_twisted(f, b, E_GET, &get_q, T_GET, &q);
}

static void base_authority(struct fx *f, struct sworn_record *b)
{
    struct req q = get_q;

    q.port = 8443;
    base_twisted(f, b, E_GET, &get_q, T_GET, &q);
}

static void base_body(struct fx *f, struct sworn_record *b)
{
    struct req q = post_q;

    memcpy(q.body_sha, body_sha_b, 32);
    base_twisted(f, b, E_POST, &post_q, T_POST, &q);
}

static void base_no_digest(struct fx *f, struct sworn_record *b)
{
    struct req q = post_q;

    q.has_body = 0;
    base_twisted(f, b, E_POST, &post_q, T_POST, &q);
}

static void base_extra_digest(struct fx *f, struct sworn_record *b)
{
    struct req q = get_q;

    q.has_body = 1;
    memcpy(q.body_sha, body_sha_a, 32);
    base_twisted(f, b, E_GET, &get_q, T_GET, &q);
}

static void swapped(struct fx *f, struct sworn_record *b)
{
    uint8_t *r = b->r[E_GET];
    size_t rl = b->rlen[E_GET];

    (void)f;
    b->r[E_GET] = b->r[E_POST];
    b->rlen[E_GET] = b->rlen[E_POST];
    b->r[E_POST] = r;
    b->rlen[E_POST] = rl;
}

static void created_wrong(struct fx *f, struct sworn_record *b)
{
    struct twist w = {0};

    w.created_delta = 1;
    http_receipt(f, b, E_GET, &get_q, T_GET, &w);
}

/* The signature is over the genuine base; only the stored params text differs. */
static void params_tag(struct fx *f, struct sworn_record *b)
{
    struct twist w = {0};
    char params[512];

    snprintf(params, sizeof(params),
             "(\"@method\" \"@authority\" \"@path\" \"@query\" \"sworn-entry\");created=%llu;"
             "keyid=\"%s\";alg=\"ecdsa-p256-sha256\";tag=\"other\"",
             (unsigned long long)(T_GET / 1000), f->keyid_hex);
    w.params = params;
    http_receipt(f, b, E_GET, &get_q, T_GET, &w);
}

static void params_dropped_component(struct fx *f, struct sworn_record *b)
{
    struct twist w = {0};
    char params[512];

    snprintf(params, sizeof(params),
             "(\"@method\" \"@authority\" \"@path\" \"@query\");created=%llu;"
             "keyid=\"%s\";alg=\"ecdsa-p256-sha256\";tag=\"sworn\"",
             (unsigned long long)(T_GET / 1000), f->keyid_hex);
    w.params = params;
    http_receipt(f, b, E_GET, &get_q, T_GET, &w);
}

static void form1_for_tcp(struct fx *f, struct sworn_record *b)
{
    struct twist w = {0};

    w.as = &get_q; /* any base at all: the entry has none */
    http_receipt(f, b, E_TCP, &tcp_q, T0 + 10000, &w);
}

static void der_in_form1(struct fx *f, struct sworn_record *b)
{
    struct twist w = {0};

    w.der = 1;
    http_receipt(f, b, E_GET, &get_q, T_GET, &w);
}

static void form2(struct fx *f, struct sworn_record *b)
{
    struct twist w = {0};

    w.form = 2;
    http_receipt(f, b, E_GET, &get_q, T_GET, &w);
}

/* The approval's receipt over its own leaf, but the base of another request (the GET) than the
 * escalated PUT: the request upstream got would not be the one the operator approved. */
static void approval_other_request(struct fx *f, struct sworn_record *b)
{
    struct twist w = {0};

    w.as = &get_q;
    http_receipt(f, b, E_APPROVE, &put_q, T_APPROVE, &w);
}

/* The approval's receipt made for the escalate entry's leaf (the request is right). */
static void approval_wrong_leaf(struct fx *f, struct sworn_record *b)
{
    struct twist w = {0};

    w.leaf_of = E_ESC;
    http_receipt(f, b, E_APPROVE, &put_q, T_APPROVE, &w);
}

/* --- tests ----------------------------------------------------------------------------------- */

static void test_genuine_record(void **state)
{
    expect(*state, "good", NULL, NULL, NULL);
}

static void test_entry_changed(void **state)
{
    expect(*state, "e-method", entry_method, "receipt-invalid", "entry 1");
    expect(*state, "e-path", entry_path, "receipt-invalid", "entry 1");
    expect(*state, "e-query", entry_query, "receipt-invalid", "entry 1");
    expect(*state, "e-body", entry_body, "receipt-invalid", "entry 2");
}

static void test_base_of_another_request(void **state)
{
    expect(*state, "b-method", base_method, "receipt-invalid", "entry 1");
    expect(*state, "b-path", base_path, "receipt-invalid", "entry 1");
    expect(*state, "b-query", base_query, "receipt-invalid", "entry 1");
    expect(*state, "b-authority", base_authority, "receipt-invalid", "entry 1");
    expect(*state, "b-body", base_body, "receipt-invalid", "entry 2");
    /* a component more or less: the params text differs first */
    expect(*state, "b-nodigest", base_no_digest, "receipt-params", "entry 2");
    expect(*state, "b-digest", base_extra_digest, "receipt-params", "entry 1");
}

static void test_swapped_and_fields(void **state)
{
    /* the two allows were decided in different seconds: created tells them apart first (two
     * receipts of the same shape swapped: test_verify_stack, receipt-invalid) */
    expect(*state, "swapped", swapped, "receipt-created", "entry 1");
    expect(*state, "created", created_wrong, "receipt-created", "entry 1");
    expect(*state, "p-tag", params_tag, "receipt-params", "entry 1");
    expect(*state, "p-drop", params_dropped_component, "receipt-params", "entry 1");
    expect(*state, "tcp", form1_for_tcp, "receipt-form", "entry 6");
    expect(*state, "der", der_in_form1, "receipt-malformed", "entry 1");
    expect(*state, "form2", form2, "receipt-malformed", "entry 1");
}

static void test_approvals(void **state)
{
    expect(*state, "a-other", approval_other_request, "receipt-invalid", "entry 5");
    expect(*state, "a-leaf", approval_wrong_leaf, "receipt-invalid", "entry 5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_genuine_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entry_changed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_base_of_another_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swapped_and_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_approvals, setup, teardown),
    };

    log_bin = sworn_test_bin("SWORN_LOG_BIN");
    verify_bin = sworn_test_bin("SWORN_VERIFY_BIN");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
