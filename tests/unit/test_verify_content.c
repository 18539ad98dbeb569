/*
 * test_verify_content.c -- the verifier on records whose entries are sworn.v1.Entry messages:
 * entry content, policy digests, receipts, and keys (keyring chain, key events, checkpoint keys
 * valid when they signed). Records are made by the real stack: `sworn-log init`, the log
 * library's sworn_log_append_receipts (what decisiond calls), `sworn-log checkpoint` and
 * `export-tiles`; keyrings by the real `sworn-hsm keyring` and `revoke` commands. Entries are
 * packed with the recording side's generated code (tests may use it; the verifier does not).
 * Each mutation is detected with its own check and reason in `sworn-verify --json`.
 * Escalation resolutions must each name one earlier escalate entry by index and leaf hash, with
 * its request id, at most once, never across a restart: one case per reason (review finding 2).
 * Token exchanges name their own allow, never index 0 (finding 9). Bundle files load the keyring
 * as folders do (issue 13 finding 2, test_keys_bundle). Startup
 * entries are checked for the separation of signer and engine: one case per reason, a
 * development start accepted by `development allowed`, and an older start without uids
 * accepted by `uids-unrecorded allowed`; and for the policy of each start (test_start_policy):
 * the PolicyLoaded entry right after a Startup entry must carry the policy digest that start
 * measured (role policy), else start-policy-mismatch, -unrecorded or -missing, and a decision
 * names a policy its own start loaded without error (unknown-policy). Bundles made by
 * `sworn-log export-bundle` check the same where their range shows it (test_measured_unseen:
 * under `measured-start record`, entry 0 must be a Startup entry, and a bundle's decision under
 * a policy loaded before its range must name an approved digest). TimeMark entries
 * (test_time_marks, issue 12 finding 4): a high water lowered below an earlier entry's time stamp,
 * which would end decisiond's budget replay before allows still in their window, fails
 * `time-marks` with high-water-low (in a bundle too, below an earlier mark's high water in the
 * bundle included), one above every earlier stamp with
 * high-water-high, and a clock_behind_ms or reason out of form fails `entries`. WitnessEvent
 * entries (test_witness_events, issue 18) pass in each kind decisiond writes, the consistency
 * alarm named in the witness-quorum note and counted in witness_alarms, and each field out of
 * wire/frame.c's rules, which the recording side's packer refuses too, fails `entries`.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "err.h"
#include "frame.h"
#include "logstore.h"
#include "record_fixture.h"
#include "sv_policy.h"
#include "sv_util.h"
#include "sworn.pb-c.h"
#include "testutil.h"
#include "verify_fixture.h"

#define ORIGIN "content.sworn.example/log"
#define KEY_NAME "content.sworn.example"

static const char *log_bin, *verify_bin, *hsm_bin;

struct fx {
    char *dir;
    EVP_PKEY *receipt_key; /* Ed25519 */
    uint8_t receipt_spki[44];
    uint8_t receipt_id[32];
    char receipt_spki_b64[64];
    uint8_t digest[32]; /* the policy loaded */
};

static char *P(const struct fx *f, const char *name)
{
    return sworn_test_path(f->dir, name);
}

/* ------------------------------------------------------------------------------------------ */
/* Entries */

static void add_raw(struct sworn_record *b, const void *data, size_t n)
{
    b->e[b->n] = malloc(n);
    memcpy(b->e[b->n], data, n);
    b->len[b->n] = n;
    b->n++;
}

/* A receipt for entry i (by its leaf hash) with the fixture's key, or for another leaf. */
static void add_receipt(const struct fx *f, struct sworn_record *b, size_t i, size_t for_entry)
{
    uint8_t tbs[18 + 32], sig[64], leaf_in[1 + 65536];
    size_t siglen = sizeof(sig);
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    leaf_in[0] = 0;
    memcpy(leaf_in + 1, b->e[for_entry], b->len[for_entry]);
    memcpy(tbs, "\xffsworn/v1 receipt", 17);
    tbs[17] = 0;
    sv_sha256(leaf_in, 1 + b->len[for_entry], tbs + 18);
    assert_int_equal(EVP_DigestSignInit(c, NULL, NULL, NULL, f->receipt_key), 1);
    assert_int_equal(EVP_DigestSign(c, sig, &siglen, tbs, sizeof(tbs)), 1);
    EVP_MD_CTX_free(c);
    r.key_id.data = (uint8_t *)f->receipt_id;
    r.key_id.len = 32;
    r.signature.data = sig;
    r.signature.len = siglen;
    r.alg = 2;
    b->rlen[i] = sworn__v1__receipt__get_packed_size(&r);
    b->r[i] = malloc(b->rlen[i]);
    sworn__v1__receipt__pack(&r, b->r[i]);
}

static void policy_loaded(const struct fx *f, struct sworn_record *b, const uint8_t *digest,
                          uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;

    (void)f;
    pl.digest.data = (uint8_t *)digest;
    pl.digest.len = 32;
    pl.source = "/etc/sworn/policy.yaml";
    pl.time_unix_ms = t_ms;
    pl.version = 3;
    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &pl;
    sworn_record_add(b, &e);
}

/* A PolicyLoaded entry of a refused load (its error set). */
static void policy_refused(struct sworn_record *b, const uint8_t *digest, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;

    pl.digest.data = (uint8_t *)digest;
    pl.digest.len = 32;
    pl.source = "/etc/sworn/policy.yaml";
    pl.time_unix_ms = t_ms;
    pl.error = "policy.yaml:1:1: refused";
    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &pl;
    sworn_record_add(b, &e);
}

/* A decision; omit: 1 drops the reason, 2 drops the principal, 3 drops the rule (as decisiond's
 * deny of a duplicate request id, which no rule decides). */
/* The path of the decisions built below (a test of hostile strings changes it for a while). */
static const char *decision_path = "/v1/charges";
/* The principal, sandbox name and sandbox start index of the decisions built below (the
 * sandboxes test changes them for a while; 0: not from a sworn-run sandbox). */
static const char *decision_principal = "agent-1", *decision_sandbox = "sb-7";
static uint32_t decision_uid = 1001;
static uint64_t decision_start_index;

/* Called on each decision's request before it is packed (NULL: none): the red-team cases of
 * issue 16 (test_rt16_b_request_shapes) forge one field at a time. */
static void (*decision_hook)(Sworn__V1__AuthorizationRequest *rq);

static void decision(struct sworn_record *b, const char *id, Sworn__V1__Effect effect,
                     const uint8_t *digest, uint64_t t_ms, int omit)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord d = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__AuthorizationRequest rq = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource rs = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__Context cx = SWORN__V1__CONTEXT__INIT;
    Sworn__V1__Delegation dg = SWORN__V1__DELEGATION__INIT;
    Sworn__V1__Actor ac = SWORN__V1__ACTOR__INIT, *acs[1] = {&ac};
    char *headers[2] = {"content-type", "accept"};

    pr.id = (char *)decision_principal;
    pr.sandbox = (char *)decision_sandbox;
    pr.uid = decision_uid;
    pr.sandbox_start_index = decision_start_index;
    rs.scheme = "https";
    rs.host = "api.example.com";
    rs.port = 443;
    rs.path = (char *)decision_path;
    cx.method = "POST";
    cx.n_header_names = 2;
    cx.header_names = headers;
    dg.subject = "user@example.com";
    dg.issuer = "https://idp.example.com";
    ac.subject = "agent-1";
    dg.n_actors = 1;
    dg.actors = acs;
    rq.request_id = (char *)id;
    rq.principal = omit == 2 ? NULL : &pr;
    rq.operation = "http.request";
    rq.resource = &rs;
    rq.context = &cx;
    rq.delegation = &dg;
    rq.time_unix_ms = t_ms;
    d.request = &rq;
    d.effect = effect;
    d.rule_id = omit == 3 ? "" : "charges";
    d.reason = omit == 1   ? ""
               : omit == 3 ? "denied: duplicate request id: decisiond took this id among its last "
                             "65536 requests"
                           : "rule charges matched";
    d.policy_digest.data = (uint8_t *)digest;
    d.policy_digest.len = 32;
    d.time_unix_ms = t_ms;
    if (decision_hook != NULL)
        decision_hook(&rq);
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &d;
    sworn_record_add(b, &e);
}

/* The operator of the resolutions built below ("timeout": decisiond's deny at the deadline). */
static const char *escalation_operator = "alice";

/* The time of the resolutions built below (decisiond's clock when it resolved: field 7); 0
 * leaves it out, as a decisiond before the field wrote it (issue 13, finding 6). */
static uint64_t escalation_time_ms = 1685577603000ull; /* T2023 + 3000, the escalation's own */

/* An EscalationResolved naming the escalate entry at index with hash (NULL: unlinked, as a
 * decisiond older than fields 5 and 6 wrote it). */
static void escalation_link(struct sworn_record *b, const char *id, Sworn__V1__Effect effect,
                            uint64_t index, const uint8_t *hash)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__EscalationResolved r = SWORN__V1__ESCALATION_RESOLVED__INIT;

    r.request_id = (char *)id;
    r.effect = effect;
    r.operator_ = (char *)escalation_operator;
    r.reason = "approved on the phone";
    r.time_unix_ms = escalation_time_ms;
    if (hash != NULL) {
        r.escalation_index = index;
        r.escalation_hash.data = (uint8_t *)hash;
        r.escalation_hash.len = 32;
    }
    e.kind_case = SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED;
    e.escalation_resolved = &r;
    sworn_record_add(b, &e);
}

/* The resolution of built entry of (an escalate entry), as decisiond writes it. */
static void escalation(struct sworn_record *b, const char *id, Sworn__V1__Effect effect, size_t of)
{
    uint8_t leaf[32];

    sworn_record_leaf(b, of, leaf);
    escalation_link(b, id, effect, of, leaf);
}

static void key_event(struct sworn_record *b, const char *statement, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__KeyEvent k = SWORN__V1__KEY_EVENT__INIT;

    k.statement.data = (uint8_t *)statement;
    k.statement.len = strlen(statement);
    k.time_unix_ms = t_ms;
    e.kind_case = SWORN__V1__ENTRY__KIND_KEY_EVENT;
    e.key_event = &k;
    sworn_record_add(b, &e);
}

/*
 * A Startup entry (no TPM) with the processes' uids and the development flag, measuring the
 * binary and, as decisiond does, the policy (policy_sha256, with role policy; NULL: no policy
 * file, as a decisiond older than MeasuredFile.role recorded it).
 */
static void startup_measuring(struct sworn_record *b, uint32_t engine_uid, uint32_t signer_uid,
                              int development, uint64_t t_ms, const uint8_t *policy_sha256)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__StartupMeasurement sm = SWORN__V1__STARTUP_MEASUREMENT__INIT;
    Sworn__V1__MeasuredFile mf = SWORN__V1__MEASURED_FILE__INIT,
                            pf = SWORN__V1__MEASURED_FILE__INIT, *files[2] = {&mf, &pf};
    uint8_t sha[32];

    sv_sha256("sworn-decisiond", 15, sha);
    mf.path = "/usr/libexec/sworn/sworn-decisiond";
    mf.sha256.data = sha;
    mf.sha256.len = 32;
    pf.path = "/etc/sworn/policy.yaml";
    pf.sha256.data = (uint8_t *)policy_sha256;
    pf.sha256.len = 32;
    if (policy_sha256 != NULL) {
        mf.role = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE;
        pf.role = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY;
    }
    sm.n_files = policy_sha256 != NULL ? 2 : 1;
    sm.files = files;
    sm.time_unix_ms = t_ms;
    sm.engine_uid = engine_uid;
    sm.signer_uid = signer_uid;
    sm.development = development != 0;
    e.kind_case = SWORN__V1__ENTRY__KIND_STARTUP;
    e.startup = &sm;
    sworn_record_add(b, &e);
}

/* The digest of the policy every start here loads (struct fx's digest, from setup). */
static uint8_t start_policy[32];

/* A start measuring the policy that good_entries loads. */
static void startup(struct sworn_record *b, uint32_t engine_uid, uint32_t signer_uid,
                    int development, uint64_t t_ms)
{
    startup_measuring(b, engine_uid, signer_uid, development, t_ms, start_policy);
}

#define T2023 1685577600000ull /* 2023-06-01 */
#define T2024 1706745600000ull /* 2024-02-01 */

/* The good sequence: a policy load, an allow with receipt, a deny, an escalation allowed; after
 * the n entries b holds already (a Startup entry), so the allows are entries n + 1 and n + 4. */
static void good_entries(const struct fx *f, struct sworn_record *b)
{
    size_t n = b->n;

    policy_loaded(f, b, f->digest, T2023);
    decision(b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, T2023 + 1000, 0);
    add_receipt(f, b, n + 1, n + 1);
    decision(b, "req-2", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 2000, 0);
    decision(b, "req-3", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 3000, 0);
    escalation(b, "req-3", SWORN__V1__EFFECT__EFFECT_ALLOW, n + 3);
    add_receipt(f, b, n + 4, n + 4);
}

/* Make a record "name" from built entries: a log with key (PEM path or NULL for Ed25519). */
static void make_record(const struct fx *f, const char *name, const struct sworn_record *b,
                        const char *pem_key)
{
    const struct sworn_record_log where = {log_bin, f->dir, ORIGIN, KEY_NAME, f->receipt_spki_b64};

    sworn_record_make(&where, name, b, pem_key);
}

/* `sworn-verify verify --json` of record name with <policy_name or name>.policy. */
static json_object *verify_json(const struct fx *f, const char *name, const char *policy_name,
                                int want)
{
    char pn[128];

    snprintf(pn, sizeof(pn), "%s.policy", policy_name ? policy_name : name);
    return sworn_verify_json(verify_bin, f->dir, pn, name, NULL, want, 0);
}

/* Entries start..start+count-1 of record name (made by make_record) as the bundle file out,
 * by `sworn-log export-bundle`; returns the verifier's report (want: its exit status). */
static json_object *verify_bundle(const struct fx *f, const char *name, unsigned start,
                                  unsigned count, const char *out, int want)
{
    char dbn[128], pn[128], s_start[16], s_count[16], *db, *file;
    json_object *rep;

    snprintf(dbn, sizeof(dbn), "%s.db", name);
    snprintf(pn, sizeof(pn), "%s.policy", name);
    snprintf(s_start, sizeof(s_start), "%u", start);
    snprintf(s_count, sizeof(s_count), "%u", count);
    db = P(f, dbn);
    file = P(f, out);
    sworn_test_run_ok("export-bundle", NULL, log_bin, "export-bundle", "--db", db, "--start",
                      s_start, "--count", s_count, file, NULL);
    rep = sworn_verify_json(verify_bin, f->dir, pn, out, NULL, want, 0);
    free(db);
    free(file);
    return rep;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    uint8_t *p;

    f->dir = sworn_test_tmpdir("vcontent");
    assert_int_equal(EVP_PKEY_keygen_init(kc), 1);
    assert_int_equal(EVP_PKEY_keygen(kc, &f->receipt_key), 1);
    EVP_PKEY_CTX_free(kc);
    p = f->receipt_spki;
    assert_int_equal(i2d_PUBKEY(f->receipt_key, &p), 44);
    sv_sha256(f->receipt_spki, 44, f->receipt_id);
    sv_b64_encode(f->receipt_spki, 44, f->receipt_spki_b64, sizeof(f->receipt_spki_b64));
    sv_sha256("policy: allow charges", 21, f->digest);
    memcpy(start_policy, f->digest, 32);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_rmtree(f->dir);
    free(f->dir);
    EVP_PKEY_free(f->receipt_key);
    free(f);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */

static void test_good_content(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;

    good_entries(f, &b);
    make_record(f, "good", &b, NULL);
    rep = verify_json(f, "good", NULL, 0);
    sworn_verify_expect_pass(rep, "entries");
    sworn_verify_expect_pass(rep, "policy-digests");
    sworn_verify_expect_pass(rep, "receipts");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "entries"), "count")), 5);
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "receipts"), "count")), 2);
    json_object_put(rep);
    sworn_record_free(&b);
}

static void test_receipt_of_another_entry(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;

    good_entries(f, &b);
    /* Entry 4's receipt replaced by entry 1's (a valid signature, for another leaf). */
    free(b.r[4]);
    b.r[4] = NULL;
    add_receipt(f, &b, 4, 1);
    make_record(f, "other", &b, NULL);
    rep = verify_json(f, "other", NULL, 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-invalid", "entry 4");
    json_object_put(rep);
    sworn_record_free(&b);

    /* An allow without a receipt, and a receipt by a key the auditor does not trust. */
    good_entries(f, &b);
    free(b.r[1]);
    b.r[1] = NULL;
    b.rlen[1] = 0;
    make_record(f, "missing", &b, NULL);
    rep = verify_json(f, "missing", NULL, 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-missing", "entry 1");
    json_object_put(rep);
    sworn_record_free(&b);
    {
        struct fx other = *f;
        EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
        uint8_t *p = other.receipt_spki;

        assert_int_equal(EVP_PKEY_keygen_init(kc), 1);
        other.receipt_key = NULL;
        assert_int_equal(EVP_PKEY_keygen(kc, &other.receipt_key), 1);
        EVP_PKEY_CTX_free(kc);
        assert_int_equal(i2d_PUBKEY(other.receipt_key, &p), 44);
        sv_sha256(other.receipt_spki, 44, other.receipt_id);
        good_entries(&other, &b);
        make_record(f, "foreignkey", &b, NULL); /* the policy names f's receipt key */
        rep = verify_json(f, "foreignkey", NULL, 1);
        sworn_verify_expect_fail(rep, "receipts", "receipt-key-unknown", "entry 1");
        json_object_put(rep);
        sworn_record_free(&b);
        EVP_PKEY_free(other.receipt_key);
    }
}

static void test_entry_content(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;
    uint8_t other[32];

    /* A decision without its reason, then one without a principal. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023, 1);
    decision(&b, "req-2", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023, 2);
    make_record(f, "nofield", &b, NULL);
    rep = verify_json(f, "nofield", NULL, 1);
    sworn_verify_expect_fail(rep, "entries", "missing-field", "entry 1");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "entries"), "failures")), 2);
    json_object_put(rep);
    sworn_record_free(&b);

    /* A policy digest no PolicyLoaded entry announced. */
    sv_sha256("another policy", 14, other);
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023, 0);
    make_record(f, "nopolicy", &b, NULL);
    rep = verify_json(f, "nopolicy", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "unknown-policy", "entry 1");
    sworn_verify_expect_pass(rep, "entries");
    json_object_put(rep);
    sworn_record_free(&b);

    /* A policy loaded only after the decision that names it does not count. */
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023, 0);
    policy_loaded(f, &b, f->digest, T2023);
    make_record(f, "late", &b, NULL);
    rep = verify_json(f, "late", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "unknown-policy", "entry 0");
    json_object_put(rep);
    sworn_record_free(&b);

    /* Not canonical: a valid entry with an unknown field appended; a varint padded; not
     * protobuf at all. */
    policy_loaded(f, &b, f->digest, T2023);
    {
        uint8_t buf[512];

        memcpy(buf, b.e[0], b.len[0]);
        buf[b.len[0]] = 0x78; /* field 15, varint */
        buf[b.len[0] + 1] = 0x01;
        add_raw(&b, buf, b.len[0] + 2);
        /* PolicyLoaded.version = 3 written as a two-byte varint (0x83 0x00). */
        memcpy(buf, b.e[0], b.len[0]);
        assert_int_equal(buf[b.len[0] - 1], 3);
        assert_int_equal(buf[b.len[0] - 2], 0x20);
        buf[b.len[0] - 1] = 0x83;
        buf[b.len[0]] = 0x00;
        buf[1] += 1; /* the embedded message's length */
        add_raw(&b, buf, b.len[0] + 1);
        add_raw(&b, "\xff\xff\xff", 3);
    }
    make_record(f, "noncanon", &b, NULL);
    rep = verify_json(f, "noncanon", NULL, 1);
    sworn_verify_expect_fail(rep, "entries", "unknown-field", "entry 1");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "entries"), "failures")), 3);
    json_object_put(rep);
    sworn_record_free(&b);
}

/* No byte of s (n bytes) is outside printable ASCII but newlines: what a terminal shows as is. */
static void assert_printable_ascii(const char *s, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '\n' && (s[i] < 0x20 || s[i] >= 0x7f))
            fail_msg("%s: byte 0x%02x at %zu", what, (unsigned)(uint8_t)s[i], i);
}

/*
 * Review finding 12: an old record (built here) whose entry holds U+202E and U+009B in a path,
 * in a folder whose name holds them too. The entry fails "entries" with bad-string (the rule of
 * docs/protocol.md section 3, in the verifier's own copy), and neither report, text or JSON,
 * prints the bytes as they are.
 */
static void test_spoofing_strings(void **state)
{
    static const char name[] = "old\xe2\x80\xaetxt.exe\xc2\x9b"
                               "31m";
    struct fx *f = *state;
    struct sworn_record b = {0};
    struct sworn_test_run r;
    char pn[128], *pp, *rec;
    json_object *rep;

    policy_loaded(f, &b, f->digest, T2023);
    decision_path = "/v1/\xe2\x80\xaetxt.exe\xc2\x9b"
                    "31m";
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, T2023 + 1000, 0);
    decision_path = "/v1/charges";
    make_record(f, name, &b, NULL);
    rep = verify_json(f, name, NULL, 1);
    sworn_verify_expect_fail(rep, "entries", "bad-string", "entry 1");
    json_object_put(rep);
    snprintf(pn, sizeof(pn), "%s.policy", name);
    pp = P(f, pn);
    rec = P(f, name);
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--no-progress", "--policy", pp, rec, NULL);
    assert_int_equal(r.status, 1);
    assert_printable_ascii(r.out, r.out_len, "text report");
    assert_printable_ascii(r.err, r.err_len, "text report's stderr");
    assert_non_null(strstr(r.out, "old\\xe2\\x80\\xaetxt.exe\\xc2\\x9b31m"));
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--json", "--no-progress", "--policy", pp, rec,
                    NULL);
    assert_int_equal(r.status, 1);
    assert_printable_ascii(r.out, r.out_len, "JSON report");
    assert_non_null(strstr(r.out, "old\\u202etxt.exe\\u009b31m"));
    rep = json_tokener_parse(r.out);
    assert_non_null(rep);
    assert_non_null(strstr(json_object_get_string(sworn_verify_get(rep, "record")), name));
    json_object_put(rep);
    sworn_test_run_free(&r);
    free(pp);
    free(rec);
    sworn_record_free(&b);
}

/* ------------------------------------------------------------------------------------------ */
/* Escalations: every resolution names one earlier escalate entry, by index and leaf hash. */

/* Verify b as record name: fails check escalations with code at item (the others pass). */
static void expect_escalation_fail(const struct fx *f, struct sworn_record *b, const char *name,
                                   const char *code, const char *item)
{
    json_object *rep;

    make_record(f, name, b, NULL);
    rep = verify_json(f, name, NULL, 1);
    sworn_verify_expect_fail(rep, "escalations", code, item);
    sworn_verify_expect_only(rep, "escalations");
    json_object_put(rep);
    sworn_record_free(b);
}

static void test_escalation_links(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;
    uint8_t leaf[32];

    /* The good sequence: entry 4 resolves entry 3 (req-3), once. */
    good_entries(f, &b);
    make_record(f, "esc-good", &b, NULL);
    rep = verify_json(f, "esc-good", NULL, 0);
    sworn_verify_expect_pass(rep, "escalations");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "escalations"), "count")),
        1);
    json_object_put(rep);
    sworn_record_free(&b);

    /* Resolved twice: a second resolution of entry 3 (a deny, so no receipt is needed). */
    good_entries(f, &b);
    escalation(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, 3);
    expect_escalation_fail(f, &b, "esc-twice", "resolution-twice", "entry 5");

    /* The resolution of a decision that is not an escalation: entry 1, the allow of req-1. */
    good_entries(f, &b);
    escalation(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, 1);
    expect_escalation_fail(f, &b, "esc-notesc", "resolution-not-escalate", "entry 5");

    /* An index that is no earlier entry: past the log's end, and the resolution itself. */
    good_entries(f, &b);
    sworn_record_leaf(&b, 3, leaf);
    escalation_link(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, 99, leaf);
    expect_escalation_fail(f, &b, "esc-missing", "resolution-index-missing", "entry 5");
    good_entries(f, &b);
    sworn_record_leaf(&b, 3, leaf);
    escalation_link(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, 5, leaf);
    expect_escalation_fail(f, &b, "esc-self", "resolution-index-missing", "entry 5");

    /* The right index with another hash (the entry's leaf with one bit flipped). */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 3000, 0);
    sworn_record_leaf(&b, 1, leaf);
    leaf[0] ^= 0x80;
    escalation_link(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, 1, leaf);
    expect_escalation_fail(f, &b, "esc-hash", "resolution-hash-mismatch", "entry 2");

    /* The hash of another escalate entry: the review's attack in record form. Two requests
     * escalated under one id (a read at 1, a DELETE at 2); a resolution that claims the read's
     * index but carries the DELETE's hash is refused. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "dup-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 1000, 0);
    decision(&b, "dup-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 2000, 0);
    sworn_record_leaf(&b, 2, leaf);
    escalation_link(&b, "dup-1", SWORN__V1__EFFECT__EFFECT_DENY, 1, leaf);
    /* The second escalation under one id is itself refused now (decisiond refuses a duplicate
     * id; finding 5 of the verifier review), and the swapped hash still counts as a failure. */
    make_record(f, "esc-swap", &b, NULL);
    rep = verify_json(f, "esc-swap", NULL, 1);
    sworn_verify_expect_fail(rep, "escalations", "request-id-reused", "entry 2");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "escalations"), "failures")),
        2);
    sworn_verify_expect_only(rep, "escalations");
    json_object_put(rep);
    sworn_record_free(&b);
    /* The same swap between two escalations of distinct ids: the hash alone refuses it. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "dup-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 1000, 0);
    decision(&b, "dup-2", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 2000, 0);
    sworn_record_leaf(&b, 2, leaf);
    escalation_link(&b, "dup-1", SWORN__V1__EFFECT__EFFECT_DENY, 1, leaf);
    expect_escalation_fail(f, &b, "esc-swap2", "resolution-hash-mismatch", "entry 3");

    /* Another request id than the escalate entry's. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 3000, 0);
    escalation(&b, "req-9", SWORN__V1__EFFECT__EFFECT_DENY, 1);
    expect_escalation_fail(f, &b, "esc-id", "resolution-request-mismatch", "entry 2");

    /* No link at all (as a decisiond before this check wrote it): not shown which request. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 3000, 0);
    escalation_link(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, 0, NULL);
    expect_escalation_fail(f, &b, "esc-unlinked", "resolution-unlinked", "entry 2");

    /* An index without a hash is malformed (the entries check). */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 3000, 0);
    {
        Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
        Sworn__V1__EscalationResolved r = SWORN__V1__ESCALATION_RESOLVED__INIT;

        r.request_id = "req-3";
        r.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        r.operator_ = "alice";
        r.escalation_index = 1;
        e.kind_case = SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED;
        e.escalation_resolved = &r;
        sworn_record_add(&b, &e);
    }
    make_record(f, "esc-nohash", &b, NULL);
    rep = verify_json(f, "esc-nohash", NULL, 1);
    sworn_verify_expect_fail(rep, "entries", "bad-field", "entry 2");
    json_object_put(rep);
    sworn_record_free(&b);

    /* Resolved after a restart: decisiond holds escalations in memory and resolves them (deny,
     * "shutdown") before an orderly stop, so an escalation held when it died can never be
     * resolved by the next start. An approval written there (with its receipt) is refused, in
     * the whole record and in a bundle that starts after the escalate entry. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 3000, 0);
    startup(&b, 990, 991, 0, T2023 + 4000);
    policy_loaded(f, &b, f->digest, T2023 + 4000);
    escalation(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ALLOW, 2);
    add_receipt(f, &b, 5, 5);
    make_record(f, "esc-restarted", &b, NULL);
    rep = verify_json(f, "esc-restarted", NULL, 1);
    sworn_verify_expect_fail(rep, "escalations", "resolution-restarted", "entry 5");
    sworn_verify_expect_only(rep, "escalations");
    json_object_put(rep);
    rep = verify_bundle(f, "esc-restarted", 3, 3, "esc-restarted.bundle", 1);
    sworn_verify_expect_fail(rep, "escalations", "resolution-restarted", "entry 5");
    sworn_verify_expect_only(rep, "escalations");
    json_object_put(rep);
    sworn_record_free(&b);

    /* A bundle that starts after the escalate entry cannot check a resolution against it, but
     * sees two resolutions of it (a deny, then an allow): resolved twice. One alone is noted. */
    good_entries(f, &b);
    escalation(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, 3);
    make_record(f, "esc-twice-bundle", &b, NULL);
    rep = verify_bundle(f, "esc-twice-bundle", 4, 2, "esc-twice.bundle", 1);
    sworn_verify_expect_fail(rep, "escalations", "resolution-twice", "entry 5");
    sworn_verify_expect_only(rep, "escalations");
    json_object_put(rep);
    rep = verify_bundle(f, "esc-twice-bundle", 4, 1, "esc-once.bundle", 0);
    assert_non_null(strstr(
        json_object_get_string(sworn_verify_get(sworn_verify_check(rep, "escalations"), "note")),
        "1 resolution(s) name an escalate entry before this range"));
    json_object_put(rep);
    sworn_record_free(&b);
}

/* ------------------------------------------------------------------------------------------ */
/* Separation: the processes each Startup entry records. */

/* A record "name": a start with these processes, then the good entries. */
static void separation_record(const struct fx *f, const char *name, uint32_t engine_uid,
                              uint32_t signer_uid, int development)
{
    struct sworn_record b = {0};

    startup(&b, engine_uid, signer_uid, development, T2023 - 1000);
    good_entries(f, &b);
    make_record(f, name, &b, NULL);
    sworn_record_free(&b);
}

/* Append a line to <name>.policy. */
static void policy_add(const struct fx *f, const char *name, const char *line)
{
    char pn[128], *pp, *text, buf[4096];

    snprintf(pn, sizeof(pn), "%s.policy", name);
    pp = P(f, pn);
    text = sworn_test_read_file(pp, NULL);
    snprintf(buf, sizeof(buf), "%s%s\n", text, line);
    sworn_test_write_file(pp, buf, strlen(buf), 0600);
    free(text);
    free(pp);
}

static int report_development(json_object *rep)
{
    return json_object_get_boolean(sworn_verify_get(rep, "development"));
}

static void test_separation_pass(void **state)
{
    struct fx *f = *state;
    json_object *rep, *note;

    /* Engine and signer under distinct, non-root uids, development off. */
    separation_record(f, "sep", 1001, 1002, 0);
    rep = verify_json(f, "sep", NULL, 0);
    sworn_verify_expect_pass(rep, "separation");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "separation"), "count")), 1);
    assert_false(json_object_object_get_ex(sworn_verify_check(rep, "separation"), "note", &note));
    assert_false(report_development(rep));
    json_object_put(rep);

    /* The same under `development allowed`: nothing to accept, no note. */
    policy_add(f, "sep", "development allowed");
    rep = verify_json(f, "sep", NULL, 0);
    sworn_verify_expect_pass(rep, "separation");
    assert_false(json_object_object_get_ex(sworn_verify_check(rep, "separation"), "note", &note));
    assert_false(report_development(rep));
    json_object_put(rep);

    /* No Startup entry: nothing to check. */
    {
        struct sworn_record b = {0};

        good_entries(f, &b);
        make_record(f, "nostart", &b, NULL);
        sworn_record_free(&b);
    }
    rep = verify_json(f, "nostart", NULL, 0);
    assert_string_equal(
        json_object_get_string(sworn_verify_get(sworn_verify_check(rep, "separation"), "result")),
        "skipped");
    json_object_put(rep);
}

static void test_separation_development(void **state)
{
    struct fx *f = *state;
    json_object *rep, *note;

    /* hardening.development: true (one uid for both, as the dev stack runs). */
    separation_record(f, "dev", 1001, 1001, 1);
    rep = verify_json(f, "dev", NULL, 1);
    sworn_verify_expect_fail(rep, "separation", "development-mode", "entry 0");
    sworn_verify_expect_only(rep, "separation");
    assert_true(report_development(rep));
    json_object_put(rep);

    /* Development as root: still development-mode first, whatever the uids. */
    separation_record(f, "devroot", 0, 0, 1);
    rep = verify_json(f, "devroot", NULL, 1);
    sworn_verify_expect_fail(rep, "separation", "development-mode", "entry 0");
    json_object_put(rep);

    /* Accepted knowingly: pass with a note, and the report says development. */
    policy_add(f, "dev", "development allowed");
    rep = verify_json(f, "dev", NULL, 0);
    sworn_verify_expect_pass(rep, "separation");
    assert_true(json_object_object_get_ex(sworn_verify_check(rep, "separation"), "note", &note));
    assert_non_null(strstr(json_object_get_string(note), "not Accountable"));
    assert_true(report_development(rep));
    json_object_put(rep);
    policy_add(f, "devroot", "development allowed");
    rep = verify_json(f, "devroot", NULL, 0);
    sworn_verify_expect_pass(rep, "separation");
    assert_true(report_development(rep));
    json_object_put(rep);
}

static void test_separation_uids(void **state)
{
    struct fx *f = *state;
    static const struct {
        const char *name;
        uint32_t engine, signer;
        const char *reason;
    } cases[] = {
        {"sroot", 1001, 0, "signer-root"},
        {"eroot", 0, 1002, "engine-root"},
        {"shared", 1001, 1001, "shared-uid"},
    };
    json_object *rep;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        /* The entry says development is off; its uids deny the separation. */
        separation_record(f, cases[i].name, cases[i].engine, cases[i].signer, 0);
        rep = verify_json(f, cases[i].name, NULL, 1);
        sworn_verify_expect_fail(rep, "separation", cases[i].reason, "entry 0");
        sworn_verify_expect_only(rep, "separation");
        assert_false(report_development(rep));
        json_object_put(rep);
        /* `development allowed` accepts development starts, not these. */
        policy_add(f, cases[i].name, "development allowed");
        rep = verify_json(f, cases[i].name, NULL, 1);
        sworn_verify_expect_fail(rep, "separation", cases[i].reason, "entry 0");
        json_object_put(rep);
    }

    /* A later start among good ones is the one that fails, and counts once. */
    {
        struct sworn_record b = {0};

        startup(&b, 1001, 1002, 0, T2023 - 2000);
        good_entries(f, &b);
        startup(&b, 1001, 1001, 0, T2023 + 9000);
        make_record(f, "second", &b, NULL);
        sworn_record_free(&b);
    }
    rep = verify_json(f, "second", NULL, 1);
    sworn_verify_expect_fail(rep, "separation", "shared-uid", "entry 6");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "separation"), "failures")),
        1);
    json_object_put(rep);
}

static void test_separation_unrecorded(void **state)
{
    struct fx *f = *state;
    json_object *rep, *note;

    /* A start by a decisiond older than the uid fields: all three unset. */
    separation_record(f, "old", 0, 0, 0);
    rep = verify_json(f, "old", NULL, 1);
    sworn_verify_expect_fail(rep, "separation", "uids-unrecorded", "entry 0");
    sworn_verify_expect_only(rep, "separation");
    assert_false(report_development(rep));
    json_object_put(rep);
    /* `development allowed` does not accept it ... */
    policy_add(f, "old", "development allowed");
    rep = verify_json(f, "old", NULL, 1);
    sworn_verify_expect_fail(rep, "separation", "uids-unrecorded", "entry 0");
    json_object_put(rep);
    /* ... `uids-unrecorded allowed` does, with a note. */
    policy_add(f, "old", "uids-unrecorded allowed");
    rep = verify_json(f, "old", NULL, 0);
    sworn_verify_expect_pass(rep, "separation");
    assert_true(json_object_object_get_ex(sworn_verify_check(rep, "separation"), "note", &note));
    assert_non_null(strstr(json_object_get_string(note), "uids-unrecorded allowed"));
    assert_false(report_development(rep));
    json_object_put(rep);
}

/* The policy lines of separation, and what the parser refuses. */
static void test_separation_policy_lines(void **state)
{
    static const char head[] =
        "origin o\nlog o+262e80ea+AdpAWu2Wwol/9IsgyYEJ5kCTSlxAJGvQUVVPP5CSLY/A\nquotes ignore\n";
    static const struct {
        const char *lines;
        int ok, dev, unrec;
    } cases[] = {
        {"entries sworn\n", 1, 0, 0},
        {"entries sworn\ndevelopment allowed\n", 1, 1, 0},
        {"entries sworn\nuids-unrecorded allowed\n", 1, 0, 1},
        {"development allowed\nuids-unrecorded allowed\nentries sworn\n", 1, 1, 1},
        {"entries sworn\ndevelopment allowed\ndevelopment allowed\n", 0, 0, 0},
        {"entries sworn\ndevelopment\n", 0, 0, 0},
        {"entries sworn\ndevelopment yes\n", 0, 0, 0},
        {"entries sworn\ndevelopment true\n", 0, 0, 0},
        {"entries sworn\ndevelopment Allowed\n", 0, 0, 0},
        {"entries sworn\ndevelopment allowed now\n", 0, 0, 0},
        {"entries sworn\ndevelopment  allowed\n", 0, 0, 0},
        {"entries sworn\ndevelopment allowed \n", 0, 0, 0},
        {"entries sworn\ndevelopment\tallowed\n", 0, 0, 0},
        {"entries sworn\ndevelopments allowed\n", 0, 0, 0},
        {"entries sworn\nuids-unrecorded yes\n", 0, 0, 0},
        {"entries sworn\nuids-unrecorded allowed\nuids-unrecorded allowed\n", 0, 0, 0},
        {"development allowed\n", 0, 0, 0}, /* entries opaque: no Startup entries read */
        {"entries opaque\ndevelopment allowed\n", 0, 0, 0},
        {"entries opaque\nuids-unrecorded allowed\n", 0, 0, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[1024], why[SV_WHY];
        struct sv_policy p;
        int r;

        snprintf(text, sizeof(text), "%s%s", head, cases[i].lines);
        r = sv_policy_parse(text, strlen(text), NULL, &p, why);
        if ((r == 0) != cases[i].ok)
            fail_msg("case %zu: %s (%s)", i, r == 0 ? "accepted" : "refused", r == 0 ? "" : why);
        if (r == 0) {
            assert_int_equal(p.development_allowed, cases[i].dev);
            assert_int_equal(p.uids_unrecorded_allowed, cases[i].unrec);
            sv_policy_free(&p);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Keys: a keyring made with sworn-hsm, the log signing with a P-256 key it lists. */

static char *spki_der_of_pem(const struct fx *f, const char *pem, const char *out_name)
{
    char *out = P(f, out_name);

    sworn_test_run_ok("openssl pkey", NULL, "openssl", "pkey", "-in", pem, "-pubout", "-outform",
                      "DER", "-out", out, NULL);
    return out;
}

static char *new_pem(const struct fx *f, const char *name)
{
    char *pem = P(f, name);

    sworn_test_run_ok("openssl genpkey", NULL, "openssl", "genpkey", "-algorithm", "EC", "-pkeyopt",
                      "ec_paramgen_curve:P-256", "-out", pem, NULL);
    chmod(pem, 0600);
    return pem;
}

static void test_keys(void **state)
{
    struct fx *f = *state;
    char *root = P(f, "root.key"), *v1 = P(f, "v1"), *v2 = P(f, "v2"), *v3 = P(f, "v3"),
         *v2x = P(f, "v2x"), *ev = P(f, "revoke.event");
    char *pem = new_pem(f, "cp.pem"), *pem2 = new_pem(f, "cp2.pem");
    char *der = spki_der_of_pem(f, pem, "cp.der"), *der2 = spki_der_of_pem(f, pem2, "cp2.der");
    char rootv[256], keyid[65], text[4096];
    struct sworn_record b = {0};
    struct sworn_test_run r;
    json_object *rep;
    uint8_t spki[200], id[32];
    size_t spki_len;
    char *statement, *pp, *basepol;

    sworn_test_runv(&r, NULL, log_bin, "keygen", "--name", "root-a.example", "--out", root, NULL);
    sworn_test_run_must(&r, "keygen root");
    snprintf(rootv, sizeof(rootv), "%.*s", (int)strcspn(r.out, "\n"), r.out);
    sworn_test_run_free(&r);
    sworn_test_run_ok("keyring init", NULL, hsm_bin, "keyring", "init", "--out", v1, "--threshold",
                      "1", "--root-vkey", rootv, "--root-key", root, NULL);
    sworn_test_run_ok("keyring add", NULL, hsm_bin, "keyring", "add", "--in", v1, "--out", v2,
                      "--spki", der, "--purpose", "checkpoint", "--valid-from",
                      "2020-01-01T00:00:00Z", NULL);
    sworn_test_run_ok("keyring sign", NULL, hsm_bin, "keyring", "sign", "--in", v2, "--out", v2,
                      "--prev", v1, "--root-key", root, NULL);
    /* v2x lists only the other key. */
    sworn_test_run_ok("keyring add x", NULL, hsm_bin, "keyring", "add", "--in", v1, "--out", v2x,
                      "--spki", der2, "--purpose", "checkpoint", "--valid-from",
                      "2020-01-01T00:00:00Z", NULL);
    sworn_test_run_ok("keyring sign x", NULL, hsm_bin, "keyring", "sign", "--in", v2x, "--out", v2x,
                      "--prev", v1, "--root-key", root, NULL);
    /* v3 revokes the checkpoint key from 2024-01-01. */
    {
        size_t n;
        char *d = sworn_test_read_file(der, &n);

        memcpy(spki, d, n);
        spki_len = n;
        free(d);
        sv_sha256(spki, spki_len, id);
        sv_hex(id, 32, keyid);
    }
    sworn_test_run_ok("revoke", NULL, hsm_bin, "revoke", "--keyring", v2, "--key-id", keyid,
                      "--effective-from", "2024-01-01T00:00:00Z", "--out", ev, "--keyring-out", v3,
                      NULL);
    sworn_test_run_ok("keyring sign v3", NULL, hsm_bin, "keyring", "sign", "--in", v3, "--out", v3,
                      "--prev", v2, "--root-key", root, NULL);
    statement = sworn_test_read_file(ev, NULL);

    /* 1. Entries of 2023, the key listed and active then: keys pass (chain v1, v2, v3; the
     *    revocation event is in the log and recorded by v3). */
    good_entries(f, &b);
    key_event(&b, statement, T2023 + 5000);
    make_record(f, "k", &b, pem);
    pp = P(f, "k.policy");
    basepol = sworn_test_read_file(pp, NULL);
    snprintf(text, sizeof(text),
             "%skeyring-root %s\nkeyring-threshold 1\nkeyring v1\nkeyring "
             "v2\nkeyring v3\n",
             basepol, rootv);
    sworn_test_write_file(pp, text, strlen(text), 0600);
    rep = verify_json(f, "k", NULL, 0);
    sworn_verify_expect_pass(rep, "keys");
    json_object_put(rep);
    sworn_record_free(&b);

    /* 2. A decision of 2024-02-01, after the revocation, under a checkpoint by that key. */
    good_entries(f, &b);
    key_event(&b, statement, T2023 + 5000);
    decision(&b, "req-9", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2024, 0);
    make_record(f, "revoked", &b, pem);
    pp = (free(pp), P(f, "revoked.policy"));
    free(basepol);
    basepol = sworn_test_read_file(pp, NULL);
    snprintf(text, sizeof(text),
             "%skeyring-root %s\nkeyring-threshold 1\nkeyring v1\nkeyring "
             "v2\nkeyring v3\n",
             basepol, rootv);
    sworn_test_write_file(pp, text, strlen(text), 0600);
    rep = verify_json(f, "revoked", NULL, 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-key", "checkpoint 7");
    assert_non_null(strstr(json_object_to_json_string(sworn_verify_check(rep, "keys")), "revoked"));
    json_object_put(rep);

    /* 3. A keyring that does not list the log's key (a log without key events). */
    sworn_record_free(&b);
    good_entries(f, &b);
    make_record(f, "plain", &b, pem);
    {
        char *pp2 = P(f, "plain.policy");

        snprintf(text, sizeof(text),
                 "%skeyring-root %s\nkeyring-threshold 1\nkeyring v1\n"
                 "keyring v2x\n",
                 basepol, rootv);
        sworn_test_write_file(pp2, text, strlen(text), 0600);
        free(pp2);
    }
    rep = verify_json(f, "plain", NULL, 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-key", "checkpoint 5");
    assert_non_null(
        strstr(json_object_to_json_string(sworn_verify_check(rep, "keys")), "not in the keyring"));
    json_object_put(rep);

    /* 4. A keyring version the roots did not sign (v2 unsigned copy), and one out of order. */
    {
        char *v2u = P(f, "v2u");

        sworn_test_run_ok("keyring add unsigned", NULL, hsm_bin, "keyring", "add", "--in", v1,
                          "--out", v2u, "--spki", der, "--purpose", "checkpoint", NULL);
        snprintf(text, sizeof(text),
                 "%skeyring-root %s\nkeyring-threshold 1\nkeyring v1\n"
                 "keyring v2u\n",
                 basepol, rootv);
        sworn_test_write_file(pp, text, strlen(text), 0600);
        rep = verify_json(f, "revoked", NULL, 1);
        sworn_verify_expect_fail(rep, "keys", "keyring", "keyring");
        json_object_put(rep);
        snprintf(text, sizeof(text), "%skeyring-root %s\nkeyring-threshold 1\nkeyring v2\n",
                 basepol, rootv);
        sworn_test_write_file(pp, text, strlen(text), 0600);
        rep = verify_json(f, "revoked", NULL, 1);
        sworn_verify_expect_fail(rep, "keys", "keyring", "keyring");
        json_object_put(rep);
        free(v2u);
    }
    sworn_record_free(&b);

    /* 5. Entries stamped inside the first second of 1970 (500 and 600 ms): a time, not none;
     *    the key, valid from 2020, was not valid then (second 0 is the keyring's "no time"). */
    policy_loaded(f, &b, f->digest, 500);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, 600, 0);
    make_record(f, "subsecond", &b, pem);
    free(pp);
    pp = P(f, "subsecond.policy");
    free(basepol);
    basepol = sworn_test_read_file(pp, NULL);
    snprintf(text, sizeof(text), "%skeyring-root %s\nkeyring-threshold 1\nkeyring v1\nkeyring v2\n",
             basepol, rootv);
    sworn_test_write_file(pp, text, strlen(text), 0600);
    rep = verify_json(f, "subsecond", NULL, 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-key", "checkpoint 2");
    sworn_verify_expect_only(rep, "keys");
    json_object_put(rep);
    sworn_record_free(&b);
    free(basepol);
    free(pp);
    free(statement);
    free(root);
    free(v1);
    free(v2);
    free(v3);
    free(v2x);
    free(ev);
    free(pem);
    free(pem2);
    free(der);
    free(der2);
}

/* Export entries start..start+count-1 of record name (made by make_record) as the bundle
 * file out (by the real `sworn-log export-bundle`). */
static void export_bundle(const struct fx *f, const char *name, unsigned start, unsigned count,
                          const char *out)
{
    char dbn[128], s_start[16], s_count[16], *db, *file;

    snprintf(dbn, sizeof(dbn), "%s.db", name);
    snprintf(s_start, sizeof(s_start), "%u", start);
    snprintf(s_count, sizeof(s_count), "%u", count);
    db = P(f, dbn);
    file = P(f, out);
    unlink(file);
    sworn_test_run_ok("export-bundle", NULL, log_bin, "export-bundle", "--db", db, "--start",
                      s_start, "--count", s_count, file, NULL);
    free(db);
    free(file);
}

/* `sworn-verify verify --json` of the record or bundle file rec with policy <pol>.policy. */
static json_object *verify_with(const struct fx *f, const char *pol, const char *rec, int want)
{
    char pn[128];

    snprintf(pn, sizeof(pn), "%s.policy", pol);
    return sworn_verify_json(verify_bin, f->dir, pn, rec, NULL, want, 0);
}

/* Write <pol>.policy: record name's policy without its receipt-key line (receipts are checked
 * with the keyring's receipt keys only), then the keyring lines. */
static void keyring_policy(const struct fx *f, const char *name, const char *pol, const char *rootv,
                           const char *keyrings)
{
    char pn[128], *pp, *base, *rk, text[4096];

    snprintf(pn, sizeof(pn), "%s.policy", name);
    pp = P(f, pn);
    base = sworn_test_read_file(pp, NULL);
    free(pp);
    rk = strstr(base, "receipt-key ");
    assert_non_null(rk);
    memmove(rk, strchr(rk, '\n') + 1, strlen(strchr(rk, '\n') + 1) + 1);
    snprintf(text, sizeof(text), "%skeyring-root %s\nkeyring-threshold 1\n%s", base, rootv,
             keyrings);
    snprintf(pn, sizeof(pn), "%s.policy", pol);
    pp = P(f, pn);
    sworn_test_write_file(pp, text, strlen(text), 0600);
    free(pp);
    free(base);
}

/* Drop every "receipt " line of bundle file name. */
static void drop_receipt_lines(const struct fx *f, const char *name)
{
    char *path = P(f, name), *text, *p, *nl;
    size_t len;

    text = sworn_test_read_file(path, &len);
    while ((p = strstr(text, "\nreceipt ")) != NULL) {
        nl = strchr(p + 1, '\n');
        assert_non_null(nl);
        memmove(p + 1, nl + 1, strlen(nl + 1) + 1);
    }
    sworn_test_write_file(path, text, strlen(text), 0644);
    free(text);
    free(path);
}

/*
 * Issue 13 finding 2: a bundle file ignored the keyring, so the same forged entries that fail as
 * a folder (a revoked checkpoint key, an unknown receipt key) passed as a bundle ("receipts 0
 * checked", "keys 0 checked"). Now a bundle loads the keyring as a folder does: its checkpoint's
 * signing key must be a checkpoint key valid at the newest time of its entries (not ended by
 * then when the range stops short of the checkpoint), its receipts verify with the keyring's
 * receipt keys at their entries' times, its key events are checked, and a keyring given to check
 * against that cannot check anything is a failure: no receipt key for a receipt
 * (receipt-key-unknown), no entry time for the checkpoint key (checkpoint-time-unknown), and a
 * bundle without its receipt lines has every allow's receipt missing. Each bundle case below
 * exited 0 before the fix.
 */
static void test_keys_bundle(void **state)
{
    struct fx *f = *state;
    char *root = P(f, "kb-root.key"), *pem = new_pem(f, "kb-cp.pem"),
         *pem2 = new_pem(f, "kb-cp2.pem");
    char *der = spki_der_of_pem(f, pem, "kb-cp.der"),
         *der2 = spki_der_of_pem(f, pem2, "kb-cp2.der");
    char *rder = P(f, "kb-receipt.der"), *ev = P(f, "kb-revoke-cp.event"),
         *evr = P(f, "kb-revoke-r.event");
    char *v[8], rootv[256], keyid[65], *statement;
    const char *vn[8] = {"kbv1", "kbv2", "kbv3", "kbv4c", "kbv4r", "kbv2x", "kbv4c0", NULL};
    struct sworn_record b = {0};
    struct sworn_test_run r;
    json_object *rep;
    uint8_t id[32];

    for (int i = 0; i < 7; i++)
        v[i] = P(f, vn[i]);
    sworn_test_write_file(rder, f->receipt_spki, sizeof(f->receipt_spki), 0644);
    sworn_test_runv(&r, NULL, log_bin, "keygen", "--name", "root-a.example", "--out", root, NULL);
    sworn_test_run_must(&r, "keygen root");
    snprintf(rootv, sizeof(rootv), "%.*s", (int)strcspn(r.out, "\n"), r.out);
    sworn_test_run_free(&r);
    /* v1 roots; v2 the checkpoint key; v3 the receipt key; v4c the checkpoint key revoked from
     * 2024-01-01; v4r the receipt key revoked from 2023-01-01; v2x another checkpoint key. */
    sworn_test_run_ok("keyring init", NULL, hsm_bin, "keyring", "init", "--out", v[0],
                      "--threshold", "1", "--root-vkey", rootv, "--root-key", root, NULL);
    sworn_test_run_ok("keyring add cp", NULL, hsm_bin, "keyring", "add", "--in", v[0], "--out",
                      v[1], "--spki", der, "--purpose", "checkpoint", "--valid-from",
                      "2020-01-01T00:00:00Z", NULL);
    sworn_test_run_ok("keyring sign v2", NULL, hsm_bin, "keyring", "sign", "--in", v[1], "--out",
                      v[1], "--prev", v[0], "--root-key", root, NULL);
    sworn_test_run_ok("keyring add receipt", NULL, hsm_bin, "keyring", "add", "--in", v[1], "--out",
                      v[2], "--spki", rder, "--purpose", "receipt", "--valid-from",
                      "2020-01-01T00:00:00Z", NULL);
    sworn_test_run_ok("keyring sign v3", NULL, hsm_bin, "keyring", "sign", "--in", v[2], "--out",
                      v[2], "--prev", v[1], "--root-key", root, NULL);
    {
        size_t n;
        char *d = sworn_test_read_file(der, &n);

        sv_sha256(d, n, id);
        sv_hex(id, 32, keyid);
        free(d);
    }
    sworn_test_run_ok("revoke cp", NULL, hsm_bin, "revoke", "--keyring", v[2], "--key-id", keyid,
                      "--effective-from", "2024-01-01T00:00:00Z", "--out", ev, "--keyring-out",
                      v[3], NULL);
    sworn_test_run_ok("keyring sign v4c", NULL, hsm_bin, "keyring", "sign", "--in", v[3], "--out",
                      v[3], "--prev", v[2], "--root-key", root, NULL);
    {
        char *ev0 = P(f, "kb-revoke-cp0.event");

        sworn_test_run_ok("revoke cp 2023", NULL, hsm_bin, "revoke", "--keyring", v[2], "--key-id",
                          keyid, "--effective-from", "2023-01-01T00:00:00Z", "--out", ev0,
                          "--keyring-out", v[6], NULL);
        sworn_test_run_ok("keyring sign v4c0", NULL, hsm_bin, "keyring", "sign", "--in", v[6],
                          "--out", v[6], "--prev", v[2], "--root-key", root, NULL);
        free(ev0);
    }
    sv_hex(f->receipt_id, 32, keyid);
    sworn_test_run_ok("revoke receipt", NULL, hsm_bin, "revoke", "--keyring", v[2], "--key-id",
                      keyid, "--effective-from", "2023-01-01T00:00:00Z", "--out", evr,
                      "--keyring-out", v[4], NULL);
    sworn_test_run_ok("keyring sign v4r", NULL, hsm_bin, "keyring", "sign", "--in", v[4], "--out",
                      v[4], "--prev", v[2], "--root-key", root, NULL);
    sworn_test_run_ok("keyring add x", NULL, hsm_bin, "keyring", "add", "--in", v[0], "--out", v[5],
                      "--spki", der2, "--purpose", "checkpoint", "--valid-from",
                      "2020-01-01T00:00:00Z", NULL);
    sworn_test_run_ok("keyring sign x", NULL, hsm_bin, "keyring", "sign", "--in", v[5], "--out",
                      v[5], "--prev", v[0], "--root-key", root, NULL);
    statement = sworn_test_read_file(ev, NULL);

    /* The record: the good entries of 2023 (0 policy, 1 allow, 2 deny, 3 escalate, 4 the
     * resolution, which has no time), then a deny of 2024-02-01, under checkpoints by the
     * checkpoint key (make_record signs once, at 6). */
    good_entries(f, &b);
    decision(&b, "req-9", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2024, 0);
    make_record(f, "kb", &b, pem);
    sworn_record_free(&b);
    keyring_policy(f, "kb", "kb-ring", rootv, "keyring kbv1\nkeyring kbv2\nkeyring kbv3\n");
    keyring_policy(f, "kb", "kb-cprevoked", rootv,
                   "keyring kbv1\nkeyring kbv2\nkeyring kbv3\nkeyring kbv4c\n");
    keyring_policy(f, "kb", "kb-rrevoked", rootv,
                   "keyring kbv1\nkeyring kbv2\nkeyring kbv3\nkeyring kbv4r\n");
    keyring_policy(f, "kb", "kb-norkey", rootv, "keyring kbv1\nkeyring kbv2\n");
    keyring_policy(f, "kb", "kb-x", rootv, "keyring kbv1\nkeyring kbv2x\n");
    keyring_policy(f, "kb", "kb-gap", rootv, "keyring kbv1\nkeyring kbv3\n");

    /* Genuine: the whole range, and entry 1 (an allow with its receipt) alone. Keys are checked
     * (the keyring and the checkpoint key), receipts with the keyring's receipt key. */
    export_bundle(f, "kb", 0, 6, "kb-all.bundle");
    rep = verify_with(f, "kb-ring", "kb-all.bundle", 0);
    sworn_verify_expect_pass(rep, "keys");
    sworn_verify_expect_pass(rep, "receipts");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "keys"), "count")), 2);
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "receipts"), "count")), 2);
    json_object_put(rep);
    export_bundle(f, "kb", 1, 1, "kb-1.bundle");
    rep = verify_with(f, "kb-ring", "kb-1.bundle", 0);
    sworn_verify_expect_pass(rep, "keys");
    sworn_verify_expect_pass(rep, "receipts");
    json_object_put(rep);

    /* The checkpoint key revoked from 2024-01-01, the checkpoint over a 2024 entry: refused in
     * the folder and in the bundle of that entry (the bundle reaches the checkpoint). */
    rep = verify_with(f, "kb-cprevoked", "kb", 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-key", "checkpoint 6");
    json_object_put(rep);
    export_bundle(f, "kb", 5, 1, "kb-5.bundle");
    rep = verify_with(f, "kb-cprevoked", "kb-5.bundle", 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-key", "checkpoint 6");
    assert_non_null(strstr(json_object_to_json_string(sworn_verify_check(rep, "keys")), "revoked"));
    sworn_verify_expect_only(rep, "keys");
    json_object_put(rep);

    /* A keyring that does not list the log's key. */
    rep = verify_with(f, "kb-x", "kb-1.bundle", 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-key", "checkpoint 6");
    assert_non_null(
        strstr(json_object_to_json_string(sworn_verify_check(rep, "keys")), "not in the keyring"));
    json_object_put(rep);

    /* The receipt key revoked before the allow: receipt-key-invalid, folder and bundle. */
    rep = verify_with(f, "kb-rrevoked", "kb", 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-key-invalid", "entry 1");
    json_object_put(rep);
    rep = verify_with(f, "kb-rrevoked", "kb-1.bundle", 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-key-invalid", "entry 1");
    sworn_verify_expect_only(rep, "receipts");
    json_object_put(rep);

    /* A keyring without the receipt key (and no receipt-key line): the receipts cannot be
     * checked against it, a failure in the folder and the bundle alike. */
    rep = verify_with(f, "kb-norkey", "kb", 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-key-unknown", "entry 1");
    json_object_put(rep);
    rep = verify_with(f, "kb-norkey", "kb-1.bundle", 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-key-unknown", "entry 1");
    sworn_verify_expect_only(rep, "receipts");
    json_object_put(rep);

    /* A keyring chain that does not verify (version 2 left out). */
    rep = verify_with(f, "kb-gap", "kb-1.bundle", 1);
    sworn_verify_expect_fail(rep, "keys", "keyring", "keyring");
    json_object_put(rep);

    /* The bundle's receipt lines dropped: each allow's receipt is missing. */
    export_bundle(f, "kb", 0, 6, "kb-norec.bundle");
    drop_receipt_lines(f, "kb-norec.bundle");
    rep = verify_with(f, "kb-ring", "kb-norec.bundle", 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-missing", "entry 1");
    sworn_verify_expect_only(rep, "receipts");
    json_object_put(rep);

    /* The resolution alone: since issue 13 finding 6 it carries its time, and the checkpoint
     * key is checked at it (the rule for a tree without times is in the folder case below). */
    export_bundle(f, "kb", 4, 1, "kb-4.bundle");
    rep = verify_with(f, "kb-ring", "kb-4.bundle", 0);
    sworn_verify_expect_pass(rep, "keys");
    json_object_put(rep);

    /* The same rule in a folder: a record whose only entry has no time (a deny stamped 0; it
     * also fails entries, time-missing). */
    decision(&b, "req-x", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, 0, 0);
    make_record(f, "kbt", &b, pem);
    sworn_record_free(&b);
    keyring_policy(f, "kbt", "kbt-ring", rootv, "keyring kbv1\nkeyring kbv2\nkeyring kbv3\n");
    rep = verify_with(f, "kbt-ring", "kbt", 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-time-unknown", "checkpoint 1");
    json_object_put(rep);

    /* A bundle short of the checkpoint: 2023 entries under the checkpoint over the 2024 entry.
     * The checkpoint is later than its newest entry, so a key revoked from 2024 is not refused
     * there (its time is not shown), but one ended before the range's newest entry is. */
    export_bundle(f, "kb", 0, 3, "kb-head.bundle");
    rep = verify_with(f, "kb-cprevoked", "kb-head.bundle", 0);
    sworn_verify_expect_pass(rep, "keys");
    assert_non_null(
        strstr(json_object_to_json_string(sworn_verify_check(rep, "keys")), "does not show"));
    json_object_put(rep);
    keyring_policy(f, "kb", "kb-cprevoked0", rootv,
                   "keyring kbv1\nkeyring kbv2\nkeyring kbv3\nkeyring kbv4c0\n");
    rep = verify_with(f, "kb-cprevoked0", "kb-head.bundle", 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-key", "checkpoint 6");
    assert_non_null(strstr(json_object_to_json_string(sworn_verify_check(rep, "keys")), "revoked"));
    sworn_verify_expect_only(rep, "keys");
    json_object_put(rep);

    /* A key event in a bundle is checked against the keyring: the checkpoint key's revocation,
     * which v3 does not record. */
    good_entries(f, &b);
    key_event(&b, statement, T2023 + 5000);
    make_record(f, "kbe", &b, pem);
    sworn_record_free(&b);
    keyring_policy(f, "kbe", "kbe-ring", rootv, "keyring kbv1\nkeyring kbv2\nkeyring kbv3\n");
    export_bundle(f, "kbe", 5, 1, "kbe-5.bundle");
    rep = verify_with(f, "kbe-ring", "kbe-5.bundle", 1);
    sworn_verify_expect_fail(rep, "keys", "key-event", "entry 5");
    json_object_put(rep);
    keyring_policy(f, "kbe", "kbe-ring4", rootv,
                   "keyring kbv1\nkeyring kbv2\nkeyring kbv3\nkeyring kbv4c\n");
    rep = verify_with(f, "kbe-ring4", "kbe-5.bundle", 0);
    sworn_verify_expect_pass(rep, "keys");
    json_object_put(rep);

    free(statement);
    for (int i = 0; i < 7; i++)
        free(v[i]);
    free(root);
    free(pem);
    free(pem2);
    free(der);
    free(der2);
    free(rder);
    free(ev);
    free(evr);
}

/*
 * A start's own PolicyLoaded entry (the one right after its Startup entry) names the policy the
 * start measured (finding 1 of the control-plane review): a record where the policy measured into
 * PCR 23 is not the policy that decided is refused (start-policy-mismatch), as is a completed
 * start that measured no policy or shows no policy entry. A start that ended before its policy
 * entry (another Startup entry next) is no failure.
 */
static void test_start_policy(void **state)
{
    struct fx *f = *state;
    uint8_t other[32];
    json_object *rep;
    struct sworn_record b = {0};

    sv_sha256("policy: allow everything", 24, other);
    /* The measured policy is the one loaded: the check passes. */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, f->digest);
    good_entries(f, &b);
    make_record(f, "sp-good", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "sp-good", NULL, 0);
    sworn_verify_expect_pass(rep, "policy-digests");
    json_object_put(rep);

    /* Measured one policy, decided with another. */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, other);
    good_entries(f, &b);
    make_record(f, "sp-swap", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "sp-swap", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "start-policy-mismatch", "entry 1");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);

    /* A start that records no policy file at all. */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, NULL);
    good_entries(f, &b);
    make_record(f, "sp-none", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "sp-none", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "start-policy-unrecorded", "entry 1");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);

    /* A start followed by a decision, not by its policy entry (the policy was loaded before). */
    policy_loaded(f, &b, f->digest, T2023 - 2000);
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, f->digest);
    decision(&b, "req-9", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023, 0);
    make_record(f, "sp-missing", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "sp-missing", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "start-policy-missing", "entry 2");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);

    /* A start that stopped before its policy entry, then one that completed: no failure. */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 2000, other);
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, f->digest);
    good_entries(f, &b);
    make_record(f, "sp-crash", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "sp-crash", NULL, 0);
    sworn_verify_expect_pass(rep, "policy-digests");
    json_object_put(rep);

    /* A refused load right after a start is not the start's policy. */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, f->digest);
    policy_refused(&b, f->digest, T2023 - 500);
    good_entries(f, &b);
    make_record(f, "sp-refused", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "sp-refused", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "start-policy-mismatch", "entry 1");
    json_object_put(rep);

    /* Decisions under a policy whose load was refused: a refused policy never decides. */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, f->digest);
    policy_loaded(f, &b, f->digest, T2023 - 900);
    policy_refused(&b, other, T2023 - 800);
    decision(&b, "req-9", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023, 0);
    make_record(f, "sp-refused-decides", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "sp-refused-decides", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "unknown-policy", "entry 3");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);

    /* The policy in force is not the one measured: a start measured and loaded f->digest, and
     * its decisions name `other`, a policy loaded (and recorded) before that start. decisiond
     * forgets every policy but the one it loads at a start, so this record hides which policy
     * decided. Refused in the whole record and in a bundle that starts at the second start. */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 3000, f->digest);
    policy_loaded(f, &b, f->digest, T2023 - 2900);
    policy_loaded(f, &b, other, T2023 - 2800);
    decision(&b, "req-8", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023 - 2700, 0);
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, f->digest);
    policy_loaded(f, &b, f->digest, T2023 - 900);
    decision(&b, "req-9", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023, 0);
    make_record(f, "sp-old-policy", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "sp-old-policy", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "unknown-policy", "entry 6");
    assert_int_equal(json_object_get_int64(
                         sworn_verify_get(sworn_verify_check(rep, "policy-digests"), "failures")),
                     1);
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);
    rep = verify_bundle(f, "sp-old-policy", 4, 3, "sp-old-policy.bundle", 1);
    sworn_verify_expect_fail(rep, "policy-digests", "unknown-policy", "entry 6");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);
    /* A bundle that opens right after a start, with the start's own PolicyLoaded entry: the
     * measured policy cannot be compared, and the note says so (the swapped start below passes
     * only such a range). */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, other);
    good_entries(f, &b);
    make_record(f, "sp-swap-bundle", &b, NULL);
    sworn_record_free(&b);
    rep = verify_bundle(f, "sp-swap-bundle", 1, 5, "sp-swap.bundle", 0);
    sworn_verify_expect_pass(rep, "policy-digests");
    assert_non_null(strstr(
        json_object_get_string(sworn_verify_get(sworn_verify_check(rep, "policy-digests"), "note")),
        "the range opens with a PolicyLoaded entry"));
    json_object_put(rep);
    rep = verify_bundle(f, "sp-swap-bundle", 0, 6, "sp-swap-all.bundle", 1);
    sworn_verify_expect_fail(rep, "policy-digests", "start-policy-mismatch", "entry 1");
    json_object_put(rep);

    /* Within one start, any policy it loaded may name a decision (one decided just before a
     * reload may be recorded just after it). */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, f->digest);
    policy_loaded(f, &b, f->digest, T2023 - 900);
    policy_loaded(f, &b, other, T2023 - 800);
    decision(&b, "req-8", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 - 700, 0);
    decision(&b, "req-9", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023, 0);
    make_record(f, "sp-reloaded", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "sp-reloaded", NULL, 0);
    sworn_verify_expect_pass(rep, "policy-digests");
    json_object_put(rep);
}

/* ------------------------------------------------------------------------------------------ */
/* Refusals: Refused entries, and the RefusalsDropped summaries of what decisiond's quotas kept
 * out of the record (issue 11, finding 3). */

struct dropped_row {
    const char *channel;
    uint32_t uid;
    uint64_t count;
};

static void refused(struct sworn_record *b, const char *channel, uint32_t uid, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__Refused r = SWORN__V1__REFUSED__INIT;

    r.channel = (char *)channel;
    r.peer_uid = uid;
    r.code = 3;
    r.message = "uid 65534 may not use the admin socket";
    r.time_unix_ms = t_ms;
    e.kind_case = SWORN__V1__ENTRY__KIND_REFUSED;
    e.refused = &r;
    sworn_record_add(b, &e);
}

/* A RefusalsDropped entry of n rows, as given (the recording side's packer, unchecked). */
static void refusals_dropped(struct sworn_record *b, const struct dropped_row *rows, size_t n,
                             uint64_t start, uint64_t end, uint64_t t)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__RefusalsDropped r = SWORN__V1__REFUSALS_DROPPED__INIT;
    Sworn__V1__DroppedRefusals d[4], *dp[4];

    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++) {
        sworn__v1__dropped_refusals__init(&d[i]);
        d[i].channel = (char *)rows[i].channel;
        d[i].peer_uid = rows[i].uid;
        d[i].count = rows[i].count;
        dp[i] = &d[i];
    }
    r.period_start_unix_ms = start;
    r.period_end_unix_ms = end;
    r.time_unix_ms = t;
    r.n_dropped = n;
    r.dropped = dp;
    e.kind_case = SWORN__V1__ENTRY__KIND_REFUSALS_DROPPED;
    e.refusals_dropped = &r;
    sworn_record_add(b, &e);
}

/* A TimeMark entry as given (the recording side's packer, unchecked). */
static void time_mark(struct sworn_record *b, uint64_t t, uint64_t high_water, uint64_t behind,
                      int reason)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__TimeMark m = SWORN__V1__TIME_MARK__INIT;

    m.time_unix_ms = t;
    m.high_water_unix_ms = high_water;
    m.clock_behind_ms = behind;
    m.reason = (Sworn__V1__TimeMarkReason)reason;
    e.kind_case = SWORN__V1__ENTRY__KIND_TIME_MARK;
    e.time_mark = &m;
    sworn_record_add(b, &e);
}

/*
 * The log's time marks as decisiond writes them around a clock step back, then each way a
 * dishonest operator could write one to shorten the budget replay (issue 12, finding 4).
 * good_entries' largest stamp is T2023 + 3000; entry 5 is the first mark.
 */
static void marks_around_a_step(const struct fx *f, struct sworn_record *b,
                                uint64_t second_high_water)
{
    time_mark(b, T2023 + 5000, T2023 + 3000, 0, 2);
    /* The clock steps back 100 s: a decision stamped before everything above. */
    decision(b, "req-behind", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 - 95000, 0);
    time_mark(b, T2023 - 90000, second_high_water,
              second_high_water > T2023 - 90000 ? second_high_water - (T2023 - 90000) : 0, 1);
}

static void test_time_marks(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;
    char item[32];

    /* Good: the second mark's high water is the first mark's own time, the largest stamp before
     * it; its clock is 95 s behind: counted in the report. */
    good_entries(f, &b);
    marks_around_a_step(f, &b, T2023 + 5000);
    make_record(f, "marks", &b, NULL);
    rep = verify_json(f, "marks", NULL, 0);
    sworn_verify_expect_pass(rep, "entries");
    sworn_verify_expect_pass(rep, "time-marks");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "time-marks"), "count")), 2);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "clock_behind")), 1);
    json_object_put(rep);

    /* A bundle of the last three entries sees only the first mark's time before the second
     * mark: its high water is at least that, so it passes. */
    rep = verify_bundle(f, "marks", 5, 3, "marks.bundle", 0);
    sworn_verify_expect_pass(rep, "time-marks");
    json_object_put(rep);
    sworn_record_free(&b);

    /* Lowered to the good entries' largest stamp, below the first mark's own time: refused. */
    good_entries(f, &b);
    marks_around_a_step(f, &b, T2023 + 3000);
    make_record(f, "marks-low", &b, NULL);
    rep = verify_json(f, "marks-low", NULL, 1);
    snprintf(item, sizeof(item), "entry %zu", b.n - 1);
    sworn_verify_expect_fail(rep, "time-marks", "high-water-low", item);
    json_object_put(rep);
    /* The bundle of the last three entries shows the first mark: refused there too. */
    rep = verify_bundle(f, "marks-low", 5, 3, "marks-low.bundle", 1);
    sworn_verify_expect_fail(rep, "time-marks", "high-water-low", item);
    json_object_put(rep);
    sworn_record_free(&b);

    /* Lowered to the clock that stepped back (what a replay trusting the stamps assumed): the
     * clock_behind_ms then says 0 and agrees with its times, yet the mark is refused. */
    good_entries(f, &b);
    marks_around_a_step(f, &b, T2023 - 95000);
    make_record(f, "marks-lower", &b, NULL);
    rep = verify_json(f, "marks-lower", NULL, 1);
    snprintf(item, sizeof(item), "entry %zu", b.n - 1);
    sworn_verify_expect_pass(rep, "entries");
    sworn_verify_expect_fail(rep, "time-marks", "high-water-low", item);
    json_object_put(rep);
    sworn_record_free(&b);

    /* A bundle from a mark whose high water (T2023 + 8000, a stamp before the range) is above
     * every stamp the bundle shows, then a later mark lowered to the largest stamp the bundle
     * shows: the folder fails it, and so must the bundle (the first mark says that stamp came
     * before the second too). */
    good_entries(f, &b);                                                               /* 0..4 */
    decision(&b, "req-5", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 8000, 0); /* 5 */
    decision(&b, "req-6", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 4000, 0); /* 6 */
    time_mark(&b, T2023 + 4500, T2023 + 8000, 3500, 2);                                /* 7 */
    decision(&b, "req-8", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 5000, 0); /* 8 */
    time_mark(&b, T2023 + 6000, T2023 + 5000, 0, 2);                                   /* 9 */
    make_record(f, "marks-bundle-low", &b, NULL);
    rep = verify_json(f, "marks-bundle-low", NULL, 1);
    sworn_verify_expect_fail(rep, "time-marks", "high-water-low", "entry 9");
    json_object_put(rep);
    rep = verify_bundle(f, "marks-bundle-low", 7, 3, "marks-bundle-low.bundle", 1);
    sworn_verify_expect_fail(rep, "time-marks", "high-water-low", "entry 9");
    sworn_verify_expect_only(rep, "time-marks");
    json_object_put(rep);
    /* The same bundle with the second mark at the first's high water passes. */
    sworn_record_free(&b);
    good_entries(f, &b);
    decision(&b, "req-5", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 8000, 0);
    decision(&b, "req-6", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 4000, 0);
    time_mark(&b, T2023 + 4500, T2023 + 8000, 3500, 2);
    decision(&b, "req-8", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 5000, 0);
    time_mark(&b, T2023 + 6000, T2023 + 8000, 2000, 2);
    make_record(f, "marks-bundle-ok", &b, NULL);
    rep = verify_json(f, "marks-bundle-ok", NULL, 0);
    json_object_put(rep);
    rep = verify_bundle(f, "marks-bundle-ok", 7, 3, "marks-bundle-ok.bundle", 0);
    sworn_verify_expect_pass(rep, "time-marks");
    json_object_put(rep);
    sworn_record_free(&b);

    /* Above every earlier stamp: decisiond never writes it. */
    good_entries(f, &b);
    marks_around_a_step(f, &b, T2023 + 7000);
    make_record(f, "marks-high", &b, NULL);
    rep = verify_json(f, "marks-high", NULL, 1);
    snprintf(item, sizeof(item), "entry %zu", b.n - 1);
    sworn_verify_expect_fail(rep, "time-marks", "high-water-high", item);
    json_object_put(rep);
    sworn_record_free(&b);

    /* clock_behind_ms that is not max(0, high water - time), and a reason of 0: entries fails. */
    for (int i = 0; i < 2; i++) {
        char name[32];

        snprintf(name, sizeof(name), "marks-form-%d", i);
        good_entries(f, &b);
        if (i == 0)
            time_mark(&b, T2023 + 5000, T2023 + 3000, 1, 2);
        else
            time_mark(&b, T2023 + 5000, T2023 + 3000, 0, 0);
        make_record(f, name, &b, NULL);
        rep = verify_json(f, name, NULL, 1);
        snprintf(item, sizeof(item), "entry %zu", b.n - 1);
        sworn_verify_expect_fail(rep, "entries", "bad-field", item);
        json_object_put(rep);
        sworn_record_free(&b);
    }
}

static void test_refusals_dropped(void **state)
{
    static const struct dropped_row good[] = {
        {"admin", 0, 2}, {"admin", 65534, 140}, {"decision", 1001, 7}};
    static const struct {
        const char *what;
        struct dropped_row rows[3];
        size_t n;
        uint64_t start, end, t;
    } bad[] = {
        {"out of order", {{"decision", 1, 1}, {"admin", 2, 1}}, 2, 1, 2, 3},
        {"a pair twice", {{"admin", 7, 1}, {"admin", 7, 1}}, 2, 1, 2, 3},
        {"uids out of order", {{"admin", 9, 1}, {"admin", 7, 1}}, 2, 1, 2, 3},
        {"a count of 0", {{"admin", 7, 0}}, 1, 1, 2, 3},
        {"another channel", {{"signer", 7, 1}}, 1, 1, 2, 3},
        {"no pairs", {{"admin", 7, 1}}, 0, 1, 2, 3},
        {"ends before it starts", {{"admin", 7, 1}}, 1, 5, 2, 6},
        {"recorded before it ends", {{"admin", 7, 1}}, 1, 1, 5, 4},
    };
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;

    /* Good: counted in the report, with the Refused entries. */
    good_entries(f, &b);
    refused(&b, "admin", 65534, T2023 + 4000);
    refused(&b, "decision", 0, T2023 + 4001);
    refusals_dropped(&b, good, 3, T2023 + 4000, T2023 + 9000, T2023 + 14000);
    refusals_dropped(&b, good + 1, 1, T2023 + 15000, T2023 + 15000, T2023 + 25000);
    make_record(f, "dropped", &b, NULL);
    rep = verify_json(f, "dropped", NULL, 0);
    sworn_verify_expect_pass(rep, "entries");
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "refused")), 2);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "refusal_summaries")), 2);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "refusals_dropped")),
                     2 + 140 + 7 + 140);
    json_object_put(rep);
    sworn_record_free(&b);

    /* Each malformed summary is refused by the entries check. */
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char name[32];

        snprintf(name, sizeof(name), "dropped-bad-%zu", i);
        good_entries(f, &b);
        refusals_dropped(&b, bad[i].rows, bad[i].n, bad[i].start, bad[i].end, bad[i].t);
        make_record(f, name, &b, NULL);
        rep = verify_json(f, name, NULL, 1);
        if (strcmp(json_object_get_string(
                       sworn_verify_get(sworn_verify_check(rep, "entries"), "result")),
                   "fail") != 0)
            fail_msg("a summary with %s was accepted", bad[i].what);
        sworn_verify_expect_fail(rep, "entries", "bad-field", "entry 5");
        json_object_put(rep);
        sworn_record_free(&b);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Token exchanges (finding 9 of issue 11): each CredentialsMinted names its own allow. */

/* The decision b holds last becomes an allow that released credential cred. */
static void with_credential(struct sworn_record *b, const char *cred)
{
    Sworn__V1__Entry *m = sworn__v1__entry__unpack(NULL, b->len[b->n - 1], b->e[b->n - 1]);
    uint8_t h[32];

    assert_non_null(m);
    sv_sha256("the credential's value", 22, h);
    m->decision->credential_id = (char *)cred;
    m->decision->credential_sha256.data = h;
    m->decision->credential_sha256.len = 32;
    free(b->e[b->n - 1]);
    b->n--;
    sworn_record_add(b, m);
    m->decision->credential_id = NULL; /* not protobuf-c's to free */
    m->decision->credential_sha256.data = NULL;
    sworn__v1__entry__free_unpacked(m, NULL);
}

/* An allow of request id releasing cred at time_ms, with its receipt; returns its index. */
static uint64_t cred_allow_at(const struct fx *f, struct sworn_record *b, const char *id,
                              const char *cred, uint64_t time_ms)
{
    decision(b, id, SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, time_ms, 0);
    with_credential(b, cred);
    add_receipt(f, b, b->n - 1, b->n - 1);
    return b->n - 1;
}

static uint64_t cred_allow(const struct fx *f, struct sworn_record *b, const char *id,
                           const char *cred)
{
    return cred_allow_at(f, b, id, cred, T2023 + 1000);
}

/* A CredentialsMinted entry of time_ms: two tokens minted from `from` (ids[0] and ids[1], or
 * NULL for fresh ones), backed by the allow at allow_index of allow_id (0: none, an older
 * decisiond), replacing the n_replaced ids of replaced. */
static void minted_at(struct sworn_record *b, const char *id, const char *allow_id,
                      const char *from, uint64_t allow_index, const char *const *replaced,
                      size_t n_replaced, uint64_t time_ms, const char *const *new_ids)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__CredentialsMinted cm = SWORN__V1__CREDENTIALS_MINTED__INIT;
    Sworn__V1__MintedCredential mc[2], *mcp[2] = {&mc[0], &mc[1]};
    uint8_t h[2][32];
    char ids[2][160];

    for (int i = 0; i < 2; i++) {
        sworn__v1__minted_credential__init(&mc[i]);
        if (new_ids != NULL)
            snprintf(ids[i], sizeof(ids[i]), "%s", new_ids[i]);
        else
            snprintf(ids[i], sizeof(ids[i]), "%s.oauth.%zu", from, b->n * 2 + (size_t)i + 100);
        sv_sha256(ids[i], strlen(ids[i]), h[i]);
        mc[i].field = i == 0 ? "access_token" : "refresh_token";
        mc[i].credential_id = ids[i];
        mc[i].value_sha256.data = h[i];
        mc[i].value_sha256.len = 32;
        mc[i].symbolic_sha256.data = h[i];
        mc[i].symbolic_sha256.len = 32;
    }
    cm.request_id = (char *)id;
    cm.allow_request_id = (char *)allow_id;
    cm.from_credential_id = (char *)from;
    cm.n_minted = 2;
    cm.minted = mcp;
    cm.time_unix_ms = time_ms;
    cm.replaced_credential_ids = (char **)replaced;
    cm.n_replaced_credential_ids = n_replaced;
    cm.allow_log_index = allow_index;
    e.kind_case = SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED;
    e.credentials_minted = &cm;
    sworn_record_add(b, &e);
}

static void minted(struct sworn_record *b, const char *id, const char *allow_id, const char *from,
                   uint64_t allow_index, const char *const *replaced, size_t n_replaced)
{
    minted_at(b, id, allow_id, from, allow_index, replaced, n_replaced, T2023 + 5000, NULL);
}

static void test_exchanges(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;
    uint64_t a, a2;
    char item[32];
    static const char *const family[] = {"demo.oauth.1", "demo.oauth.1.oauth.3"};
    static const char *const stranger[] = {"other.oauth.1"};
    static const char *const not_minted[] = {"demo"};
    static const char *const twice[] = {"demo.oauth.1", "demo.oauth.1"};

    /* Good: each exchange names its own allow of the same start (a refresh chain included: the
     * second exchange is from a minted credential, and replaces members of demo's family). */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    a = cred_allow(f, &b, "oauth-1", "demo");
    a2 = cred_allow(f, &b, "oauth-2", "demo.oauth.1");
    minted(&b, "x-1", "oauth-1", "demo", a, NULL, 0);
    minted(&b, "x-2", "oauth-2", "demo.oauth.1", a2, family, 2);
    make_record(f, "exchanges", &b, NULL);
    rep = verify_json(f, "exchanges", NULL, 0);
    sworn_verify_expect_pass(rep, "token-exchanges");
    sworn_verify_expect_pass(rep, "entries");
    assert_int_equal(json_object_get_int64(
                         sworn_verify_get(sworn_verify_check(rep, "token-exchanges"), "count")),
                     2);
    json_object_put(rep);

    /* The review's replay: a second exchange naming the first allow. */
    minted(&b, "x-3", "oauth-1", "demo", a, NULL, 0);
    make_record(f, "replayed", &b, NULL);
    rep = verify_json(f, "replayed", NULL, 1);
    snprintf(item, sizeof(item), "entry %zu", b.n - 1);
    sworn_verify_expect_fail(rep, "token-exchanges", "exchange-allow-reused", item);
    sworn_verify_expect_only(rep, "token-exchanges");
    json_object_put(rep);
    sworn_record_free(&b);

    /* An exchange naming a deny, an allow of another credential, another request's allow, an
     * index after itself: not an allow that backs it. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "oauth-d", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023, 0);
    a = cred_allow(f, &b, "oauth-1", "demo");
    minted(&b, "x-deny", "oauth-d", "demo", 2, NULL, 0);
    minted(&b, "x-cred", "oauth-1", "other", a, NULL, 0);
    minted(&b, "x-req", "oauth-9", "demo", a, NULL, 0);
    minted(&b, "x-future", "oauth-1", "demo", b.n + 5, NULL, 0);
    make_record(f, "unbacked", &b, NULL);
    rep = verify_json(f, "unbacked", NULL, 1);
    sworn_verify_expect_fail(rep, "token-exchanges", "exchange-allow-unknown", "entry 4");
    assert_int_equal(json_object_get_int64(
                         sworn_verify_get(sworn_verify_check(rep, "token-exchanges"), "failures")),
                     4);
    sworn_verify_expect_only(rep, "token-exchanges");
    json_object_put(rep);
    sworn_record_free(&b);

    /* An allow of before a restart, exchanged after it. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    a = cred_allow(f, &b, "oauth-1", "demo");
    startup(&b, 990, 991, 0, T2023 + 4000);
    minted(&b, "x-1", "oauth-1", "demo", a, NULL, 0);
    make_record(f, "restarted", &b, NULL);
    rep = verify_json(f, "restarted", NULL, 1);
    sworn_verify_expect_fail(rep, "token-exchanges", "exchange-allow-restarted", "entry 4");
    json_object_put(rep);
    sworn_record_free(&b);

    /* Replaced ids outside the family, not minted ones, named twice: malformed entries. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    minted(&b, "x-1", "oauth-1", "demo", 0, stranger, 1);
    minted(&b, "x-2", "oauth-2", "demo", 0, not_minted, 1);
    minted(&b, "x-3", "oauth-3", "demo", 0, twice, 2);
    make_record(f, "badreplaced", &b, NULL);
    rep = verify_json(f, "badreplaced", NULL, 1);
    sworn_verify_expect_fail(rep, "entries", "bad-field", "entry 2");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "entries"), "failures")), 3);
    json_object_put(rep);
    sworn_record_free(&b);

    /* An exchange naming no allow (allow_log_index 0, as a decisiond before the field wrote
     * it): never skipped, since anyone who replays an allow can write 0. Here beside an exchange
     * that names the allow, whose replays the 0s are. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    a = cred_allow(f, &b, "oauth-1", "demo");
    minted(&b, "x-1", "oauth-1", "demo", a, NULL, 0);
    minted(&b, "x-2", "oauth-1", "demo", 0, NULL, 0);
    minted(&b, "x-3", "oauth-1", "demo", 0, NULL, 0);
    make_record(f, "legacy", &b, NULL);
    rep = verify_json(f, "legacy", NULL, 1);
    sworn_verify_expect_fail(rep, "token-exchanges", "exchange-allow-unlinked", "entry 4");
    assert_int_equal(json_object_get_int64(
                         sworn_verify_get(sworn_verify_check(rep, "token-exchanges"), "failures")),
                     2);
    sworn_verify_expect_only(rep, "token-exchanges");
    json_object_put(rep);
    sworn_record_free(&b);

    /* A bundle that starts after the allow cannot see it, but sees the start between the two:
     * the exchange is refused there too, not left to a note. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    a = cred_allow(f, &b, "oauth-1", "demo");
    startup(&b, 990, 991, 0, T2023 + 4000);
    policy_loaded(f, &b, f->digest, T2023 + 4000);
    minted(&b, "x-1", "oauth-1", "demo", a, NULL, 0);
    make_record(f, "restarted-bundle", &b, NULL);
    rep = verify_bundle(f, "restarted-bundle", 3, 3, "restarted.bundle", 1);
    sworn_verify_expect_fail(rep, "token-exchanges", "exchange-allow-restarted", "entry 5");
    sworn_verify_expect_only(rep, "token-exchanges");
    json_object_put(rep);
    /* Two exchanges in range naming one allow before it: the allow backs two. */
    minted(&b, "x-2", "oauth-1", "demo", a, NULL, 0);
    make_record(f, "reused-bundle", &b, NULL);
    rep = verify_bundle(f, "reused-bundle", 4, 3, "reused.bundle", 1);
    sworn_verify_expect_fail(rep, "token-exchanges", "exchange-allow-reused", "entry 6");
    sworn_verify_expect_only(rep, "token-exchanges");
    json_object_put(rep);
    /* One that starts after the allow with no start in range: not checked, the note says so. */
    rep = verify_bundle(f, "restarted-bundle", 4, 2, "unseen.bundle", 0);
    assert_string_equal(json_object_get_string(
                            sworn_verify_get(sworn_verify_check(rep, "token-exchanges"), "result")),
                        "skipped");
    assert_non_null(strstr(json_object_get_string(sworn_verify_get(
                               sworn_verify_check(rep, "token-exchanges"), "note")),
                           "1 exchange(s) name an allow before this range"));
    json_object_put(rep);
    sworn_record_free(&b);
}

/*
 * A credential a mint replaced releases nothing from the moment that mint began (the vault
 * refuses it), and the mint entry's time is taken after that: an allow releasing it that is
 * later than the mint entry is one decisiond could not have made, though it may be appended
 * after the entry (entries are appended once signed) when it was decided before.
 */
/*
 * Red team of issue 16 (B): decisiond mints `<root>.oauth.<n>` (docs/decisiond.md, "OAuth token
 * interception"), one id per token, in the family of the credential it came from. A
 * CredentialsMinted entry that "mints" an operator's own credential or one of another family (so
 * that a later release of it looks backed by a mint, and `released-after-replaced` takes it for
 * minted again), or one id twice, is no entry decisiond writes: `entries` fails with bad-field.
 */
static void test_rt16_b_minted_ids(void **state)
{
    struct fx *f = *state;
    static const char *const forged[][2] = {{"stripe-live", "demo.oauth.7"},
                                            {"demo.oauth.6", "other.oauth.1"},
                                            {"demo.oauth.5", "demo.oauth.5"},
                                            {"demo", "demo.oauth.4"},
                                            {"demo.oauth.2", "demo.oauth.3"}};

    for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
        struct sworn_record b = {0};
        json_object *rep;
        char name[32];
        uint64_t a;
        int good = i == sizeof(forged) / sizeof(forged[0]) - 1;

        startup(&b, 990, 991, 0, T2023);
        policy_loaded(f, &b, f->digest, T2023);
        a = cred_allow(f, &b, "oauth-1", "demo");
        minted_at(&b, "x-1", "oauth-1", "demo", a, NULL, 0, T2023 + 5000, forged[i]);
        snprintf(name, sizeof(name), "rt16b-mint-%zu", i);
        make_record(f, name, &b, NULL);
        rep = verify_json(f, name, NULL, good ? 0 : 1);
        if (good) {
            sworn_verify_expect_pass(rep, "entries");
        } else {
            sworn_verify_expect_fail(rep, "entries", "bad-field", "entry 3");
            sworn_verify_expect_only(rep, "entries");
        }
        json_object_put(rep);
        sworn_record_free(&b);
    }
}

static void test_released_after_replaced(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;
    uint64_t a, a2;
    char item[32];
    static const char *const old[] = {"demo.oauth.1"};
    static const char *const fresh[] = {"demo.oauth.3", "demo.oauth.4"};
    static const char *const again[] = {"demo.oauth.1", "demo.oauth.5"};
    static const char *const old3[] = {"demo.oauth.3"};

    /* Honest: an allow of demo.oauth.1 decided before the mint (and one in the same
     * millisecond) appended after the entry that replaced it; a member the mint kept and the
     * new ones, released later; the root, released later. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    a = cred_allow_at(f, &b, "oauth-1", "demo", T2023 + 1000);
    minted_at(&b, "x-1", "oauth-1", "demo", a, old, 1, T2023 + 5000, fresh);
    cred_allow_at(f, &b, "r-1", "demo.oauth.1", T2023 + 4999);
    cred_allow_at(f, &b, "r-2", "demo.oauth.1", T2023 + 5000);
    cred_allow_at(f, &b, "r-3", "demo.oauth.2", T2023 + 6000);
    cred_allow_at(f, &b, "r-4", "demo.oauth.3", T2023 + 6000);
    cred_allow_at(f, &b, "r-5", "demo", T2023 + 6000);
    make_record(f, "replaced-honest", &b, NULL);
    rep = verify_json(f, "replaced-honest", NULL, 0);
    sworn_verify_expect_pass(rep, "token-exchanges");
    json_object_put(rep);

    /* The finding: demo.oauth.1 released by an allow later than the mint that replaced it. */
    cred_allow_at(f, &b, "r-6", "demo.oauth.1", T2023 + 5001);
    make_record(f, "replaced-late", &b, NULL);
    rep = verify_json(f, "replaced-late", NULL, 1);
    snprintf(item, sizeof(item), "entry %zu", b.n - 1);
    sworn_verify_expect_fail(rep, "token-exchanges", "released-after-replaced", item);
    assert_int_equal(json_object_get_int64(
                         sworn_verify_get(sworn_verify_check(rep, "token-exchanges"), "failures")),
                     1);
    sworn_verify_expect_only(rep, "token-exchanges");
    json_object_put(rep);
    sworn_record_free(&b);

    /* decisiond names a new credential with the lowest free <root>.oauth.<n>, so a later mint
     * mints demo.oauth.1 again: the new one releases from that mint's time on; between the two
     * mints, and across a restart (the vault file keeps the replacement), it released nothing. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    a = cred_allow_at(f, &b, "oauth-1", "demo", T2023 + 1000);
    minted_at(&b, "x-1", "oauth-1", "demo", a, old, 1, T2023 + 5000, fresh);
    a2 = cred_allow_at(f, &b, "oauth-2", "demo", T2023 + 6000);
    minted_at(&b, "x-2", "oauth-2", "demo", a2, old3, 1, T2023 + 7000, again);
    cred_allow_at(f, &b, "r-1", "demo.oauth.1", T2023 + 7000);
    cred_allow_at(f, &b, "r-2", "demo.oauth.1", T2023 + 9000);
    cred_allow_at(f, &b, "r-3", "demo.oauth.3", T2023 + 6500);
    make_record(f, "reminted", &b, NULL);
    rep = verify_json(f, "reminted", NULL, 0);
    sworn_verify_expect_pass(rep, "token-exchanges");
    json_object_put(rep);
    cred_allow_at(f, &b, "r-4", "demo.oauth.1", T2023 + 6000);
    startup(&b, 990, 991, 0, T2023 + 10000);
    policy_loaded(f, &b, f->digest, T2023 + 10000);
    cred_allow_at(f, &b, "r-5", "demo.oauth.3", T2023 + 11000);
    make_record(f, "reminted-late", &b, NULL);
    rep = verify_json(f, "reminted-late", NULL, 1);
    snprintf(item, sizeof(item), "entry %zu", b.n - 4);
    sworn_verify_expect_fail(rep, "token-exchanges", "released-after-replaced", item);
    /* the other, entry b.n - 1 (demo.oauth.3 after the restart), counts among the failures */
    assert_int_equal(json_object_get_int64(
                         sworn_verify_get(sworn_verify_check(rep, "token-exchanges"), "failures")),
                     2);
    sworn_verify_expect_only(rep, "token-exchanges");
    json_object_put(rep);
    /* A bundle whose range starts after the mints does not see them: nothing to check. */
    rep = verify_bundle(f, "reminted-late", b.n - 3, 3, "replaced.bundle", 0);
    assert_string_not_equal(json_object_get_string(sworn_verify_get(
                                sworn_verify_check(rep, "token-exchanges"), "result")),
                            "fail");
    json_object_put(rep);
    sworn_record_free(&b);
}

/* ------------------------------------------------------------------------------------------ */
/* The verifier review (issue 13), findings 1, 4 and 5. */

#define ROLE_ALL 0xfu /* startup_roles: image, signer, configuration and policy */

/*
 * A measured Startup entry as decisiond writes it (decisiond/d_startup.c): the image, the signer
 * program, the configuration and the policy (roles 1 to 4), those of mask (bit r-1 for role r),
 * extended into PCR 23 from 32 zero bytes.
 */
static void startup_roles(struct sworn_record *b, uint64_t t_ms, const uint8_t *policy_sha256,
                          unsigned mask)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__StartupMeasurement sm = SWORN__V1__STARTUP_MEASUREMENT__INIT;
    Sworn__V1__MeasuredFile mf[4], *files[4];
    static const char *const paths[4] = {"/usr/libexec/sworn/sworn-decisiond",
                                         "/usr/libexec/sworn/sworn-signer",
                                         "/etc/sworn/decisiond.yaml", "/etc/sworn/policy.yaml"};
    static const char *const contents[3] = {"sworn-decisiond", "sworn-signer", "decisiond.yaml"};
    uint8_t sha[4][32], before[32] = {0}, pcr[32], cat[64];
    size_t n = 0;

    memcpy(pcr, before, 32);
    for (unsigned r = 0; r < 4; r++) {
        if (!(mask & (1u << r)))
            continue;
        if (r < 3)
            sv_sha256(contents[r], strlen(contents[r]), sha[r]);
        else
            memcpy(sha[r], policy_sha256, 32);
        sworn__v1__measured_file__init(&mf[n]);
        mf[n].path = (char *)paths[r];
        mf[n].sha256.data = sha[r];
        mf[n].sha256.len = 32;
        mf[n].role = (Sworn__V1__MeasuredRole)(r + 1);
        files[n] = &mf[n];
        memcpy(cat, pcr, 32);
        memcpy(cat + 32, sha[r], 32);
        sv_sha256(cat, 64, pcr);
        n++;
    }
    sm.n_files = n;
    sm.files = files;
    sm.pcr23_before.data = before;
    sm.pcr23_before.len = 32;
    sm.pcr23.data = pcr;
    sm.pcr23.len = 32;
    sm.time_unix_ms = t_ms;
    sm.engine_uid = 1001;
    sm.signer_uid = 1002;
    e.kind_case = SWORN__V1__ENTRY__KIND_STARTUP;
    e.startup = &sm;
    sworn_record_add(b, &e);
}

/* Add `measured-start record` and the measured-file lines approving the files startup_roles
 * measures, with policy (and its path) as the approved policy, to <name>.policy. */
static void policy_measured(const struct fx *f, const char *name, const uint8_t *policy)
{
    static const char *const paths[3] = {"/usr/libexec/sworn/sworn-decisiond",
                                         "/usr/libexec/sworn/sworn-signer",
                                         "/etc/sworn/decisiond.yaml"};
    static const char *const contents[3] = {"sworn-decisiond", "sworn-signer", "decisiond.yaml"};
    char line[256], hex[65];
    uint8_t sha[32];

    policy_add(f, name, "measured-start record");
    for (int i = 0; i < 3; i++) {
        sv_sha256(contents[i], strlen(contents[i]), sha);
        sv_hex(sha, 32, hex);
        snprintf(line, sizeof(line), "measured-file %s %s", hex, paths[i]);
        policy_add(f, name, line);
    }
    sv_hex(policy, 32, hex);
    snprintf(line, sizeof(line), "measured-file %s /etc/sworn/policy.yaml", hex);
    policy_add(f, name, line);
}

/* Verify record name (made from b) under its policy with the measured-start lines. */
static json_object *verify_measured(const struct fx *f, const char *name, struct sworn_record *b,
                                    int want)
{
    json_object *rep;

    make_record(f, name, b, NULL);
    sworn_record_free(b);
    policy_measured(f, name, f->digest);
    rep = verify_json(f, name, NULL, want);
    return rep;
}

/* Finding 1: under `measured-start record`, the policy that decides is one the auditor approved:
 * the start's own (the entry after its Startup entry), every later one that took effect, and a
 * start lists what decisiond measures. */
static void test_measured_policy(void **state)
{
    struct fx *f = *state;
    uint8_t other[32];
    json_object *rep;
    struct sworn_record b = {0};

    sv_sha256("policy: allow everything", 24, other);
    /* As decisiond records it: passes. */
    startup_roles(&b, T2023 - 1000, f->digest, ROLE_ALL);
    good_entries(f, &b);
    rep = verify_measured(f, "mp-good", &b, 0);
    sworn_verify_expect_pass(rep, "measured-start");
    sworn_verify_expect_pass(rep, "policy-digests");
    json_object_put(rep);

    /* The start measures the approved policy; its PolicyLoaded entry and every decision name
     * another (the policy file swapped between decisiond's two reads). */
    startup_roles(&b, T2023 - 1000, f->digest, ROLE_ALL);
    policy_loaded(f, &b, other, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023 + 1000, 0);
    rep = verify_measured(f, "mp-swap", &b, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "start-policy-mismatch", "entry 1");
    sworn_verify_expect_fail(rep, "measured-start", "policy-unapproved", "entry 1");
    json_object_put(rep);

    /* A later reload to a policy no measured-file line approves. */
    startup_roles(&b, T2023 - 1000, f->digest, ROLE_ALL);
    good_entries(f, &b);
    policy_loaded(f, &b, other, T2023 + 5000);
    decision(&b, "req-7", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023 + 6000, 0);
    rep = verify_measured(f, "mp-reload", &b, 1);
    sworn_verify_expect_fail(rep, "measured-start", "policy-unapproved", "entry 6");
    sworn_verify_expect_only(rep, "measured-start");
    json_object_put(rep);

    /* The approved digest from another source than the approved path. */
    startup_roles(&b, T2023 - 1000, f->digest, ROLE_ALL);
    good_entries(f, &b);
    {
        Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
        Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;

        pl.digest.data = f->digest;
        pl.digest.len = 32;
        pl.source = "/tmp/policy.yaml";
        pl.time_unix_ms = T2023 + 5000;
        e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
        e.policy_loaded = &pl;
        sworn_record_add(&b, &e);
    }
    rep = verify_measured(f, "mp-path", &b, 1);
    sworn_verify_expect_fail(rep, "measured-start", "policy-unapproved", "entry 6");
    sworn_verify_expect_only(rep, "measured-start");
    json_object_put(rep);

    /* A refused reload to an unapproved policy decides nothing: no failure. */
    startup_roles(&b, T2023 - 1000, f->digest, ROLE_ALL);
    good_entries(f, &b);
    policy_refused(&b, other, T2023 + 5000);
    rep = verify_measured(f, "mp-refused", &b, 0);
    sworn_verify_expect_pass(rep, "measured-start");
    json_object_put(rep);

    /* A start that lists no files at all (PCR 23 unchanged). */
    startup_roles(&b, T2023 - 1000, f->digest, 0);
    good_entries(f, &b);
    rep = verify_measured(f, "mp-nofiles", &b, 1);
    sworn_verify_expect_fail(rep, "measured-start", "measured-start-incomplete", "entry 0");
    sworn_verify_expect_fail(rep, "policy-digests", "start-policy-unrecorded", "entry 1");
    json_object_put(rep);

    /* A start that lists only the policy: every file it lists is approved, and the image,
     * signer and configuration it ran are not shown. Likewise without the signer alone. */
    startup_roles(&b, T2023 - 1000, f->digest, 0x8u);
    good_entries(f, &b);
    rep = verify_measured(f, "mp-policyonly", &b, 1);
    sworn_verify_expect_fail(rep, "measured-start", "measured-start-incomplete", "entry 0");
    sworn_verify_expect_only(rep, "measured-start");
    json_object_put(rep);
    startup_roles(&b, T2023 - 1000, f->digest, 0xdu);
    good_entries(f, &b);
    rep = verify_measured(f, "mp-nosigner", &b, 1);
    sworn_verify_expect_fail(rep, "measured-start", "measured-start-incomplete", "entry 0");
    sworn_verify_expect_only(rep, "measured-start");
    json_object_put(rep);
}

/* Finding 4: only successful loads count, 32 zero bytes are no policy, and a decision names the
 * policy in force at its position, with exactly the slack decisiond's recording leaves. */
static void test_policy_in_force(void **state)
{
    struct fx *f = *state;
    uint8_t other[32], third[32], zero[32] = {0};
    json_object *rep;
    struct sworn_record b = {0};

    sv_sha256("policy: allow everything", 24, other);
    sv_sha256("policy: allow nothing", 21, third);

    /* An allow under a policy whose load was refused. */
    startup(&b, 1001, 1002, 0, T2023 - 1000);
    policy_loaded(f, &b, f->digest, T2023);
    policy_refused(&b, other, T2023 + 100);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, other, T2023 + 200, 0);
    add_receipt(f, &b, 3, 3);
    make_record(f, "pf-refused", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "pf-refused", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "unknown-policy", "entry 3");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);

    /* Allows under an all-zero digest: a start measuring and loading 32 zero bytes. */
    startup_measuring(&b, 1001, 1002, 0, T2023 - 1000, zero);
    policy_loaded(f, &b, zero, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, zero, T2023 + 200, 0);
    add_receipt(f, &b, 2, 2);
    make_record(f, "pf-zero", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "pf-zero", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "policy-digest-zero", "entry 1");
    assert_int_equal(json_object_get_int64(
                         sworn_verify_get(sworn_verify_check(rep, "policy-digests"), "failures")),
                     2);
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);
    /* ... and a decision naming zeros after a real load. */
    startup(&b, 1001, 1002, 0, T2023 - 1000);
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, zero, T2023 + 200, 0);
    make_record(f, "pf-zero2", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "pf-zero2", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "policy-digest-zero", "entry 2");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);

    /* P1 named after P2 was loaded and after a decision under P2 decided earlier: P1 was
     * decided after the reload took effect. */
    startup(&b, 1001, 1002, 0, T2023 - 1000);
    policy_loaded(f, &b, f->digest, T2023);
    policy_loaded(f, &b, other, T2023 + 100);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023 + 200, 0);
    decision(&b, "req-2", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 300, 0);
    make_record(f, "pf-after", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "pf-after", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "policy-superseded", "entry 4");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);
    /* The same inversion the other way round in the log: P2 decided before a P1 decision that
     * precedes it. */
    startup(&b, 1001, 1002, 0, T2023 - 1000);
    policy_loaded(f, &b, f->digest, T2023);
    policy_loaded(f, &b, other, T2023 + 100);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 300, 0);
    decision(&b, "req-2", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023 + 200, 0);
    make_record(f, "pf-before", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "pf-before", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "policy-superseded", "entry 4");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);
    /* P1 after two later loads (P2, P3): superseded twice over. */
    startup(&b, 1001, 1002, 0, T2023 - 1000);
    policy_loaded(f, &b, f->digest, T2023);
    policy_loaded(f, &b, other, T2023 + 100);
    policy_loaded(f, &b, third, T2023 + 200);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 300, 0);
    make_record(f, "pf-twice", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "pf-twice", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "policy-superseded", "entry 4");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);

    /* The slack decisiond's recording leaves, which passes: decisions taken under P1 before the
     * swap, appended after P2's entry, one even after a P2 deny decided later (an allow being
     * signed overtaken), and one in the same millisecond; then a reload back to P1 makes P1 the
     * policy in force again. */
    startup(&b, 1001, 1002, 0, T2023 - 1000);
    policy_loaded(f, &b, f->digest, T2023);
    policy_loaded(f, &b, other, T2023 + 100);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 150, 0);
    decision(&b, "req-2", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023 + 200, 0);
    decision(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 190, 0);
    decision(&b, "req-4", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 200, 0);
    decision(&b, "req-5", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023 + 300, 0);
    policy_loaded(f, &b, f->digest, T2023 + 400);
    decision(&b, "req-6", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 500, 0);
    decision(&b, "req-7", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023 + 390, 0);
    make_record(f, "pf-slack", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "pf-slack", NULL, 0);
    sworn_verify_expect_pass(rep, "policy-digests");
    json_object_put(rep);
    /* ... but not a P2 decision after the reload back that was decided after a P1 one. */
    startup(&b, 1001, 1002, 0, T2023 - 1000);
    policy_loaded(f, &b, f->digest, T2023);
    policy_loaded(f, &b, other, T2023 + 100);
    policy_loaded(f, &b, f->digest, T2023 + 400);
    decision(&b, "req-6", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 500, 0);
    decision(&b, "req-7", SWORN__V1__EFFECT__EFFECT_DENY, other, T2023 + 501, 0);
    make_record(f, "pf-back", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "pf-back", NULL, 1);
    sworn_verify_expect_fail(rep, "policy-digests", "policy-superseded", "entry 5");
    sworn_verify_expect_only(rep, "policy-digests");
    json_object_put(rep);
}

/* Finding 5: resolutions and request ids. */
static void test_request_ids(void **state)
{
    struct fx *f = *state;
    json_object *rep;
    struct sworn_record b = {0};

    /* A deny followed by an EscalationResolved allow of the same request, naming the deny. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1000, 0);
    escalation(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1);
    add_receipt(f, &b, 2, 2);
    expect_escalation_fail(f, &b, "ri-deny-res", "resolution-not-escalate", "entry 2");
    /* ... naming an escalation of the id, with a policy deny of the same id in between. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 1000, 0);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 2000, 0);
    escalation(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1);
    add_receipt(f, &b, 3, 3);
    expect_escalation_fail(f, &b, "ri-between", "request-id-reused", "entry 2");
    /* decisiond's own deny of the duplicate id (no rule) in between passes: it is what
     * decisiond records when a request reuses a held id, and it decided nothing. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 1000, 0);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 2000, 3);
    escalation(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1);
    add_receipt(f, &b, 3, 3);
    make_record(f, "ri-dup-refused", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "ri-dup-refused", NULL, 0);
    sworn_verify_expect_pass(rep, "escalations");
    json_object_put(rep);
    /* ... but an escalation of a held id in between is no such refusal. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 1000, 0);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 2000, 0);
    escalation(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1);
    add_receipt(f, &b, 3, 3);
    expect_escalation_fail(f, &b, "ri-esc-twice", "request-id-reused", "entry 2");
    /* Nor is one dressed as the refusal (no rule): an escalate names its rule (finding 8). */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 1000, 0);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 2000, 3);
    escalation(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1);
    add_receipt(f, &b, 3, 3);
    make_record(f, "ri-esc-norule", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "ri-esc-norule", NULL, 1);
    sworn_verify_expect_fail(rep, "entries", "rule-missing", "entry 2");
    json_object_put(rep);

    /* A resolution for a request that never appears: an allow naming an escalate entry of
     * another id, and one naming an entry past the log. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 1000, 0);
    escalation(&b, "req-never", SWORN__V1__EFFECT__EFFECT_ALLOW, 1);
    add_receipt(f, &b, 2, 2);
    expect_escalation_fail(f, &b, "ri-never", "resolution-request-mismatch", "entry 2");
    {
        uint8_t leaf[32];

        policy_loaded(f, &b, f->digest, T2023);
        decision(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1000, 0);
        sworn_record_leaf(&b, 1, leaf);
        escalation_link(&b, "req-never", SWORN__V1__EFFECT__EFFECT_ALLOW, 7, leaf);
        add_receipt(f, &b, 2, 2);
        expect_escalation_fail(f, &b, "ri-never2", "resolution-index-missing", "entry 2");
    }

    /* Two resolutions after a timeout deny: the timeout resolved it. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 1000, 0);
    escalation_operator = "timeout";
    escalation(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, 1);
    escalation_operator = "alice";
    escalation(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ALLOW, 1);
    add_receipt(f, &b, 3, 3);
    escalation(&b, "req-3", SWORN__V1__EFFECT__EFFECT_ALLOW, 1);
    add_receipt(f, &b, 4, 4);
    make_record(f, "ri-timeout", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "ri-timeout", NULL, 1);
    sworn_verify_expect_fail(rep, "escalations", "resolution-twice", "entry 3");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "escalations"), "failures")),
        2);
    sworn_verify_expect_only(rep, "escalations");
    json_object_put(rep);

    /* One request id decided deny and then allow. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1000, 0);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, T2023 + 2000, 0);
    add_receipt(f, &b, 2, 2);
    expect_escalation_fail(f, &b, "ri-deny-allow", "request-id-reused", "entry 2");
    /* A repeat that looks like the duplicate refusal but allows is no refusal either: an allow
     * by no rule is no entry decisiond writes (entries, rule-missing: finding 8); with its
     * rule, the repeat is request-id-reused. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1000, 0);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1500, 3);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, T2023 + 2000, 3);
    add_receipt(f, &b, 3, 3);
    make_record(f, "ri-norule-allow", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "ri-norule-allow", NULL, 1);
    sworn_verify_expect_fail(rep, "entries", "rule-missing", "entry 3");
    json_object_put(rep);
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1000, 0);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1500, 3);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, T2023 + 2000, 0);
    add_receipt(f, &b, 3, 3);
    expect_escalation_fail(f, &b, "ri-norule-then-allow", "request-id-reused", "entry 3");

    /* The same id in two starts passes: decisiond's memory of ids starts empty at a start. */
    startup(&b, 1001, 1002, 0, T2023 - 1000);
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1000, 0);
    startup(&b, 1001, 1002, 0, T2023 + 2000);
    policy_loaded(f, &b, f->digest, T2023 + 2100);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, T2023 + 3000, 0);
    add_receipt(f, &b, 5, 5);
    make_record(f, "ri-restart", &b, NULL);
    sworn_record_free(&b);
    rep = verify_json(f, "ri-restart", NULL, 0);
    json_object_put(rep);
}

/* Under `measured-start record`, what no start measured: entries before the first Startup entry
 * (entry 0 is decisiond's Startup entry; a record that opens with decisions had them appended by
 * a process the auditor never saw measured) fail measured-start-missing at entry 0; and in a
 * bundle, a decision naming a policy loaded before the range fails policy-unapproved when no
 * measured-file line approves that digest (its unseen load had to be approved). */
static void test_measured_unseen(void **state)
{
    struct fx *f = *state;
    uint8_t other[32];
    json_object *rep;
    struct sworn_record b = {0};

    sv_sha256("policy: allow everything", 24, other);
    /* An allow, a deny, an escalation allowed, then a measured start: before it, unmeasured. */
    good_entries(f, &b);
    startup_roles(&b, T2023 + 9000, f->digest, ROLE_ALL);
    policy_loaded(f, &b, f->digest, T2023 + 9001);
    decision(&b, "req-9", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 9002, 0);
    rep = verify_measured(f, "mu-before", &b, 1);
    sworn_verify_expect_fail(rep, "measured-start", "measured-start-missing", "entry 0");
    sworn_verify_expect_only(rep, "measured-start");
    json_object_put(rep);

    /* A reload to an unapproved policy and allows under it: the folder fails at the load; a
     * bundle of the last allow alone (its load before the range) fails at the allow. */
    startup_roles(&b, T2023 - 1000, f->digest, ROLE_ALL);
    good_entries(f, &b);
    policy_loaded(f, &b, other, T2023 + 5000);
    decision(&b, "req-7", SWORN__V1__EFFECT__EFFECT_ALLOW, other, T2023 + 6000, 0);
    add_receipt(f, &b, b.n - 1, b.n - 1);
    decision(&b, "req-8", SWORN__V1__EFFECT__EFFECT_ALLOW, other, T2023 + 7000, 0);
    add_receipt(f, &b, b.n - 1, b.n - 1);
    rep = verify_measured(f, "mu-reload", &b, 1);
    sworn_verify_expect_fail(rep, "measured-start", "policy-unapproved", "entry 6");
    sworn_verify_expect_only(rep, "measured-start");
    json_object_put(rep);
    export_bundle(f, "mu-reload", 8, 1, "mu-reload.bundle");
    rep = verify_with(f, "mu-reload", "mu-reload.bundle", 1);
    sworn_verify_expect_fail(rep, "measured-start", "policy-unapproved", "entry 8");
    sworn_verify_expect_only(rep, "measured-start");
    json_object_put(rep);
    /* A bundle of the deny at entry 3, under the approved policy loaded before it: passes. */
    export_bundle(f, "mu-reload", 3, 1, "mu-approved.bundle");
    rep = verify_with(f, "mu-reload", "mu-approved.bundle", 0);
    json_object_put(rep);
}

/* ------------------------------------------------------------------------------------------ */
/*
 * Issue 13, finding 6: every entry has a time, and key validity is checked at it. Before the fix
 * an EscalationResolved had no time, so its receipt was checked at time 0, where only a revoked
 * key was refused; so was any entry whose time was left out, and a checkpoint over entries
 * without one. Each record below passed then (exit 0); now an entry without a time fails
 * `entries` with time-missing, a receipt key not valid at the resolution's time fails `receipts`
 * with receipt-key-invalid, and a checkpoint whose time is unknown needs a key valid now
 * (checkpoint-key-time-unknown).
 */

/* Keyring version 2 after v1 (root, rootv): the log's checkpoint key cp_der valid from cp_from,
 * and the fixture's receipt key valid from r_from, retired at r_until when r_until is not NULL;
 * signed by root. Returns its path. */
static char *keyring_v2(const struct fx *f, const char *name, const char *root, const char *v1,
                        const char *cp_der, const char *cp_from, const char *r_from,
                        const char *r_until)
{
    char tn[128], *out = P(f, name), *tmp, *rder = P(f, "receipt.der");

    snprintf(tn, sizeof(tn), "%s.tmp", name);
    tmp = P(f, tn);
    sworn_test_write_file(rder, (const char *)f->receipt_spki, sizeof(f->receipt_spki), 0644);
    sworn_test_run_ok("keyring add cp", NULL, hsm_bin, "keyring", "add", "--in", v1, "--out", tmp,
                      "--spki", cp_der, "--purpose", "checkpoint", "--valid-from", cp_from, NULL);
    sworn_test_run_ok("keyring add receipt", NULL, hsm_bin, "keyring", "add", "--in", tmp, "--out",
                      out, "--spki", rder, "--purpose", "receipt", "--valid-from", r_from, NULL);
    {
        /* Two adds make version 3 of an unsigned version 2: one version 2 with both keys. */
        size_t n;
        char *t = sworn_test_read_file(out, &n), *v = strstr(t, "\nversion 3\n");

        assert_non_null(v);
        v[9] = '2';
        sworn_test_write_file(out, t, n, 0644);
        free(t);
    }
    if (r_until != NULL) {
        /* Retired: the status and valid-until of the receipt key's line (sworn-hsm retires a
         * key only through its HSM; the text is what the roots sign). */
        size_t n;
        char *t = sworn_test_read_file(out, &n), *k, want[96], text[8192];

        snprintf(want, sizeof(want), "receipt active %s -", r_from);
        k = strstr(t, want);
        assert_non_null(k);
        snprintf(text, sizeof(text), "%.*sreceipt retired %s %s%s", (int)(k - t), t, r_from,
                 r_until, k + strlen(want));
        sworn_test_write_file(out, text, strlen(text), 0644);
        free(t);
    }
    sworn_test_run_ok("keyring sign", NULL, hsm_bin, "keyring", "sign", "--in", out, "--out", out,
                      "--prev", v1, "--root-key", root, NULL);
    free(tmp);
    free(rder);
    return out;
}

/* Record name's policy without its receipt-key line, with the keyring v1, v2 (kr) instead. */
static void policy_with_keyring(const struct fx *f, const char *name, const char *rootv,
                                const char *v1, const char *kr)
{
    char pn[128], *pp, *pol, *rk, text[8192];

    snprintf(pn, sizeof(pn), "%s.policy", name);
    pp = P(f, pn);
    pol = sworn_test_read_file(pp, NULL);
    rk = strstr(pol, "receipt-key ");
    assert_non_null(rk);
    snprintf(text, sizeof(text),
             "%.*s%skeyring-root %s\nkeyring-threshold 1\nkeyring %s\nkeyring %s\n",
             (int)(rk - pol), pol, strchr(rk, '\n') + 1, rootv, v1, kr);
    sworn_test_write_file(pp, text, strlen(text), 0600);
    free(pol);
    free(pp);
}

/* An escalation allowed by an operator: policy, escalate, resolution (at escalation_time_ms)
 * with its receipt at entry 2, the only allow. */
static void escalation_only(const struct fx *f, struct sworn_record *b)
{
    policy_loaded(f, b, f->digest, T2023);
    decision(b, "req-3", SWORN__V1__EFFECT__EFFECT_ESCALATE, f->digest, T2023 + 3000, 0);
    escalation(b, "req-3", SWORN__V1__EFFECT__EFFECT_ALLOW, 1);
    add_receipt(f, b, 2, 2);
}

/* Record name of b, logged with the key pem, verified against keyring kr: its report. */
static json_object *verify_keyring(const struct fx *f, const char *name, struct sworn_record *b,
                                   const char *pem, const char *rootv, const char *v1,
                                   const char *kr, int want)
{
    json_object *rep;

    make_record(f, name, b, pem);
    sworn_record_free(b);
    policy_with_keyring(f, name, rootv, v1, kr);
    rep = verify_json(f, name, NULL, want);
    return rep;
}

static void test_entry_times(void **state)
{
    struct fx *f = *state;
    char *root = P(f, "root.key"), *v1 = P(f, "v1");
    char *pem = new_pem(f, "cp.pem"), *der = spki_der_of_pem(f, pem, "cp.der");
    char rootv[256], *retired, *later, *cp_later, *good;
    struct sworn_test_run r;
    struct sworn_record b = {0};
    json_object *rep;

    sworn_test_runv(&r, NULL, log_bin, "keygen", "--name", "root-a.example", "--out", root, NULL);
    sworn_test_run_must(&r, "keygen root");
    snprintf(rootv, sizeof(rootv), "%.*s", (int)strcspn(r.out, "\n"), r.out);
    sworn_test_run_free(&r);
    sworn_test_run_ok("keyring init", NULL, hsm_bin, "keyring", "init", "--out", v1, "--threshold",
                      "1", "--root-vkey", rootv, "--root-key", root, NULL);
    /* The receipt key retired at the start of 2023 (the record is of June 2023); valid only from
     * 2024 (the year after); the checkpoint key valid only from 2099 (after now); all good. */
    retired = keyring_v2(f, "kr-retired", root, v1, der, "2020-01-01T00:00:00Z",
                         "2020-01-01T00:00:00Z", "2023-01-01T00:00:00Z");
    later = keyring_v2(f, "kr-later", root, v1, der, "2020-01-01T00:00:00Z", "2024-01-01T00:00:00Z",
                       NULL);
    cp_later = keyring_v2(f, "kr-cp-later", root, v1, der, "2099-01-01T00:00:00Z",
                          "2020-01-01T00:00:00Z", NULL);
    good = keyring_v2(f, "kr-good", root, v1, der, "2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z",
                      NULL);

    /* The genuine resolution, at decisiond's clock, with a key valid then: passes. */
    escalation_only(f, &b);
    rep = verify_keyring(f, "t-good", &b, pem, rootv, v1, good, 0);
    sworn_verify_expect_pass(rep, "receipts");
    sworn_verify_expect_pass(rep, "keys");
    json_object_put(rep);

    /* 1. The resolution without a time, its receipt by a retired key: before, checked at 0. */
    escalation_time_ms = 0;
    escalation_only(f, &b);
    rep = verify_keyring(f, "t-none-retired", &b, pem, rootv, v1, retired, 1);
    sworn_verify_expect_fail(rep, "entries", "time-missing", "entry 2");
    json_object_put(rep);
    /* 2. ... by a key valid only from the next year. */
    escalation_only(f, &b);
    rep = verify_keyring(f, "t-none-later", &b, pem, rootv, v1, later, 1);
    sworn_verify_expect_fail(rep, "entries", "time-missing", "entry 2");
    json_object_put(rep);
    escalation_time_ms = T2023 + 3000;
    /* 3. With its time, each key is checked at it. */
    escalation_only(f, &b);
    rep = verify_keyring(f, "t-retired", &b, pem, rootv, v1, retired, 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-key-invalid", "entry 2");
    assert_non_null(
        strstr(json_object_to_json_string(sworn_verify_check(rep, "receipts")), "retired"));
    sworn_verify_expect_pass(rep, "entries");
    json_object_put(rep);
    escalation_only(f, &b);
    rep = verify_keyring(f, "t-later", &b, pem, rootv, v1, later, 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-key-invalid", "entry 2");
    assert_non_null(
        strstr(json_object_to_json_string(sworn_verify_check(rep, "receipts")), "not yet valid"));
    json_object_put(rep);
    /* 4. An allow whose time is left out, its receipt by a key valid only later. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, 0, 0);
    add_receipt(f, &b, 1, 1);
    rep = verify_keyring(f, "t-allow-none", &b, pem, rootv, v1, later, 1);
    sworn_verify_expect_fail(rep, "entries", "time-missing", "entry 1");
    json_object_put(rep);
    /* 5. A checkpoint over sworn entries without a time, by a checkpoint key valid only from
     *    2099: before, checked at 0 ("any time"); now a sworn checkpoint with no entry time
     *    fails keys whatever the key (checkpoint-time-unknown: decisiond stamps every entry, so
     *    such a tree is not one it wrote), with a key valid since 2020 too. The rule "valid
     *    now" is for opaque logs, whose entries carry no time (test_verify_tamper,
     *    test_keyring_no_time). */
    policy_loaded(f, &b, f->digest, 0);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, 0, 0);
    rep = verify_keyring(f, "t-cp-none", &b, pem, rootv, v1, cp_later, 1);
    sworn_verify_expect_fail(rep, "entries", "time-missing", "entry 0");
    sworn_verify_expect_fail(rep, "keys", "checkpoint-time-unknown", NULL);
    json_object_put(rep);
    policy_loaded(f, &b, f->digest, 0);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, 0, 0);
    rep = verify_keyring(f, "t-cp-none-good", &b, pem, rootv, v1, good, 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-time-unknown", NULL);
    json_object_put(rep);
    /* ... and with times, the checkpoint key is checked at the newest of them (June 2023). */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1000, 0);
    rep = verify_keyring(f, "t-cp-later", &b, pem, rootv, v1, cp_later, 1);
    sworn_verify_expect_fail(rep, "keys", "checkpoint-key", NULL);
    sworn_verify_expect_pass(rep, "entries");
    json_object_put(rep);
    /* 6. A time of 1 ms (1970) is a time, not "unknown": a key valid from 2020 was not valid. */
    policy_loaded(f, &b, f->digest, 1);
    decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, 1, 0);
    add_receipt(f, &b, 1, 1);
    rep = verify_keyring(f, "t-epoch", &b, pem, rootv, v1, good, 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-key-invalid", "entry 1");
    sworn_verify_expect_fail(rep, "keys", "checkpoint-key", NULL);
    json_object_put(rep);

    /* 6b. A time after the verifier's clock (found attacking issue 13's fixes): an entry
     *     stamped 2100 moved the checkpoint's time, and its receipt's, past a key valid only
     *     from 2099, which then passed though it can have signed nothing yet. What a record
     *     holds was signed no later than now: a key valid only after now fails whatever the
     *     entries claim. A clock a little ahead of the verifier's, with keys valid now, passes. */
    {
        char *rc_later = keyring_v2(f, "kr-rc-later", root, v1, der, "2020-01-01T00:00:00Z",
                                    "2099-01-01T00:00:00Z", NULL);
        uint64_t t2100 = 4102444800000ull, ahead = ((uint64_t)time(NULL) + 3600) * 1000;

        policy_loaded(f, &b, f->digest, T2023);
        decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, t2100, 0);
        rep = verify_keyring(f, "t-cp-future", &b, pem, rootv, v1, cp_later, 1);
        sworn_verify_expect_fail(rep, "keys", "checkpoint-key", NULL);
        assert_non_null(
            strstr(json_object_to_json_string(sworn_verify_check(rep, "keys")), "after now"));
        sworn_verify_expect_pass(rep, "entries");
        json_object_put(rep);
        policy_loaded(f, &b, f->digest, T2023);
        decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, t2100, 0);
        add_receipt(f, &b, 1, 1);
        rep = verify_keyring(f, "t-rc-future", &b, pem, rootv, v1, rc_later, 1);
        sworn_verify_expect_fail(rep, "receipts", "receipt-key-invalid", "entry 1");
        sworn_verify_expect_pass(rep, "keys");
        json_object_put(rep);
        policy_loaded(f, &b, f->digest, T2023);
        decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, ahead, 0);
        add_receipt(f, &b, 1, 1);
        rep = verify_keyring(f, "t-ahead", &b, pem, rootv, v1, good, 0);
        sworn_verify_expect_pass(rep, "receipts");
        sworn_verify_expect_pass(rep, "keys");
        json_object_put(rep);
        /* A bundle whose range ends before its checkpoint: the checkpoint was signed later,
         * but no later than now, so a checkpoint key valid only from 2099 fails there too. */
        policy_loaded(f, &b, f->digest, T2023);
        decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 1000, 0);
        decision(&b, "req-2", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 2000, 0);
        rep = verify_keyring(f, "t-cp-bundle", &b, pem, rootv, v1, cp_later, 1);
        sworn_verify_expect_fail(rep, "keys", "checkpoint-key", NULL);
        json_object_put(rep);
        rep = verify_bundle(f, "t-cp-bundle", 0, 2, "t-cp-bundle.bundle", 1);
        sworn_verify_expect_fail(rep, "keys", "checkpoint-key", NULL);
        assert_non_null(
            strstr(json_object_to_json_string(sworn_verify_check(rep, "keys")), "after now"));
        json_object_put(rep);
        free(rc_later);
    }

    /* 6c. Seconds against milliseconds at a key's boundaries: the last millisecond before a
     *     receipt key's valid-until second is inside, its first millisecond is not; the last
     *     millisecond before a valid-from second is outside, its first is inside. */
    {
        static const struct {
            uint64_t t;
            int retired, pass;
        } at[] = {{1672531199999ull, 1, 1},
                  {1672531200000ull, 1, 0},
                  {1704067199999ull, 0, 0},
                  {1704067200000ull, 0, 1}};

        for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
            char nm[32];

            snprintf(nm, sizeof(nm), "t-edge-%zu", i);
            policy_loaded(f, &b, f->digest, T2023);
            decision(&b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, at[i].t, 0);
            add_receipt(f, &b, 1, 1);
            rep = verify_keyring(f, nm, &b, pem, rootv, v1, at[i].retired ? retired : later,
                                 at[i].pass ? 0 : 1);
            if (at[i].pass)
                sworn_verify_expect_pass(rep, "receipts");
            else
                sworn_verify_expect_fail(rep, "receipts", "receipt-key-invalid", "entry 1");
            json_object_put(rep);
        }
    }

    /* 7. Every other kind without its time fails entries with time-missing. */
    {
        static const struct dropped_row row = {"admin", 65534, 3};
        const char *names[] = {"t0-policy", "t0-key",     "t0-start", "t0-refused",
                               "t0-minted", "t0-dropped", "t0-mark"};

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            policy_loaded(f, &b, f->digest, T2023);
            switch (i) {
            case 0:
                policy_loaded(f, &b, f->digest, 0);
                break;
            case 1:
                key_event(&b, "sworn key event\n", 0);
                break;
            case 2:
                startup(&b, 990, 991, 0, 0);
                break;
            case 3:
                refused(&b, "admin", 65534, 0);
                break;
            case 4:
                minted_at(&b, "x-1", "oauth-1", "demo", 7, NULL, 0, 0, NULL);
                break;
            case 5:
                refusals_dropped(&b, &row, 1, 0, 0, 0);
                break;
            default:
                time_mark(&b, 0, T2023, T2023, 2);
                break;
            }
            make_record(f, names[i], &b, NULL);
            sworn_record_free(&b);
            rep = verify_json(f, names[i], NULL, 1);
            sworn_verify_expect_fail(rep, "entries", "time-missing", "entry 1");
            json_object_put(rep);
        }
    }
    free(retired);
    free(later);
    free(cp_later);
    free(good);
    free(root);
    free(v1);
    free(pem);
    free(der);
}

/* ------------------------------------------------------------------------------------------ */
/*
 * Issue 13, finding 8: the shape rules of docs/protocol.md section 3 and sworn.proto, checked by
 * the verifier itself. Each bad entry below passed `entries` before the fix (exit 0 there); now
 * each fails with its own code. Entries decisiond writes pass: a deny of a refused method by no
 * rule, an http.request without a method (decisiond decides it: it matches no methods list,
 * docs/policy.md 2.2), an error of exactly 1024 bytes.
 */

/* A decision as decisiond writes it, its parts held here so that a test can change one. */
struct dec {
    Sworn__V1__Entry e;
    Sworn__V1__DecisionRecord d;
    Sworn__V1__AuthorizationRequest rq;
    Sworn__V1__Principal pr;
    Sworn__V1__Resource rs;
    Sworn__V1__Context cx;
    Sworn__V1__JsonNumber jn, *jns[1];
    Sworn__V1__CoveredComponent cc, *ccs[1];
    uint8_t h[32];
};

static void dec_init(struct dec *x, const uint8_t *digest)
{
    memset(x, 0, sizeof(*x));
    sworn__v1__entry__init(&x->e);
    sworn__v1__decision_record__init(&x->d);
    sworn__v1__authorization_request__init(&x->rq);
    sworn__v1__principal__init(&x->pr);
    sworn__v1__resource__init(&x->rs);
    sworn__v1__context__init(&x->cx);
    sworn__v1__json_number__init(&x->jn);
    sworn__v1__covered_component__init(&x->cc);
    sv_sha256("body", 4, x->h);
    x->pr.id = "agent-1";
    x->rs.scheme = "https";
    x->rs.host = "api.example.com";
    x->rs.port = 443;
    x->rs.path = "/v1/charges";
    x->cx.method = "POST";
    x->jn.pointer = "/amount";
    x->jn.value = "12.50";
    x->jns[0] = &x->jn;
    x->cx.json_numbers = x->jns;
    x->cx.n_json_numbers = 1;
    x->cc.name = "@method";
    x->cc.value_sha256.data = x->h;
    x->cc.value_sha256.len = 32;
    x->ccs[0] = &x->cc;
    x->cx.covered = x->ccs;
    x->cx.n_covered = 1;
    x->rq.request_id = "req-1";
    x->rq.principal = &x->pr;
    x->rq.operation = "http.request";
    x->rq.resource = &x->rs;
    x->rq.context = &x->cx;
    x->rq.time_unix_ms = T2023 + 1000;
    x->d.request = &x->rq;
    x->d.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    x->d.rule_id = "charges";
    x->d.reason = "denied by rule charges";
    x->d.policy_digest.data = (uint8_t *)digest;
    x->d.policy_digest.len = 32;
    x->d.time_unix_ms = T2023 + 1000;
    x->e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    x->e.decision = &x->d;
}

/* Record name: a policy load, then entry 1 (b's last; an allow with its receipt); entries fails
 * with code at entry 1, or passes when code is NULL (then the verifier exits with want). */
static void expect_shape(const struct fx *f, struct sworn_record *b, const char *name,
                         const char *code, int want)
{
    json_object *rep;

    make_record(f, name, b, NULL);
    sworn_record_free(b);
    rep = verify_json(f, name, NULL, code != NULL ? 1 : want);
    if (code != NULL)
        sworn_verify_expect_fail(rep, "entries", code, "entry 1");
    else
        sworn_verify_expect_pass(rep, "entries");
    json_object_put(rep);
}

static char *filled(char c, size_t n)
{
    char *s = malloc(n + 1);

    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_entry_shapes(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    struct dec x;
    char name[64];
    char *s1025 = filled('e', 1025), *s1024 = filled('e', 1024), *s33 = filled('A', 33),
         *s65 = filled('o', 65), *s17 = filled('h', 17), *s256 = filled('a', 256),
         *s257 = filled('t', 257), *s129 = filled('r', 129);

    /* JSON numbers that are not one RFC 8259 number (a budget sums them). */
    {
        static const char *const bad[] = {"1.",  "01",    "+1",       ".5",  "1e", "1e+",
                                          "-",   "NaN",   "0x10",     " 1",  "1 ", "1,5",
                                          "--1", "1.5.2", "Infinity", "1E5x"};
        static const char *const ok[] = {"0", "-0", "12.50", "-3", "1e3", "1E+3", "2.5e-7"};

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            policy_loaded(f, &b, f->digest, T2023);
            dec_init(&x, f->digest);
            x.jn.value = (char *)bad[i];
            sworn_record_add(&b, &x.e);
            snprintf(name, sizeof(name), "sh-json-%zu", i);
            expect_shape(f, &b, name, "json-number", 1);
        }
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
            policy_loaded(f, &b, f->digest, T2023);
            dec_init(&x, f->digest);
            x.jn.value = (char *)ok[i];
            sworn_record_add(&b, &x.e);
            snprintf(name, sizeof(name), "sh-json-ok-%zu", i);
            expect_shape(f, &b, name, NULL, 0);
        }
    }
    /* A refused load's error over its 1024 bytes; at 1024 it passes. */
    policy_loaded(f, &b, f->digest, T2023);
    {
        Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
        Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;

        pl.digest.data = f->digest;
        pl.digest.len = 32;
        pl.source = "/etc/sworn/policy.yaml";
        pl.time_unix_ms = T2023 + 500;
        pl.error = s1025;
        e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
        e.policy_loaded = &pl;
        sworn_record_add(&b, &e);
        expect_shape(f, &b, "sh-error-long", "error-too-long", 1);
        policy_loaded(f, &b, f->digest, T2023);
        pl.error = s1024;
        sworn_record_add(&b, &e);
        expect_shape(f, &b, "sh-error-1024", NULL, 0);
    }
    /* A measured file named by a relative path; PCR 23 after without the value before. */
    {
        static const char *const rel[] = {"usr/libexec/sworn/sworn-decisiond", "./sworn-decisiond",
                                          "sworn-decisiond"};

        for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
            Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
            Sworn__V1__StartupMeasurement sm = SWORN__V1__STARTUP_MEASUREMENT__INIT;
            Sworn__V1__MeasuredFile mf = SWORN__V1__MEASURED_FILE__INIT, *files[1] = {&mf};

            mf.path = (char *)rel[i];
            mf.sha256.data = f->digest;
            mf.sha256.len = 32;
            mf.role = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE;
            sm.files = files;
            sm.n_files = 1;
            sm.time_unix_ms = T2023;
            sm.engine_uid = 990;
            sm.signer_uid = 991;
            e.kind_case = SWORN__V1__ENTRY__KIND_STARTUP;
            e.startup = &sm;
            policy_loaded(f, &b, f->digest, T2023);
            sworn_record_add(&b, &e);
            snprintf(name, sizeof(name), "sh-relpath-%zu", i);
            expect_shape(f, &b, name, "path-relative", 1);
            if (i == 0) {
                mf.path = "/usr/libexec/sworn/sworn-decisiond";
                sm.pcr23.data = f->digest;
                sm.pcr23.len = 32;
                policy_loaded(f, &b, f->digest, T2023);
                sworn_record_add(&b, &e);
                expect_shape(f, &b, "sh-pcr-half", "pcr-half", 1);
            }
        }
    }
    /* An allow or an escalate with no rule; a deny by no rule is decisiond's (no rule matched). */
    policy_loaded(f, &b, f->digest, T2023);
    dec_init(&x, f->digest);
    x.d.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    x.d.rule_id = "";
    x.d.reason = "allowed by rule";
    sworn_record_add(&b, &x.e);
    add_receipt(f, &b, 1, 1);
    expect_shape(f, &b, "sh-allow-norule", "rule-missing", 1);
    policy_loaded(f, &b, f->digest, T2023);
    x.d.effect = SWORN__V1__EFFECT__EFFECT_ESCALATE;
    sworn_record_add(&b, &x.e);
    expect_shape(f, &b, "sh-escalate-norule", "rule-missing", 1);
    policy_loaded(f, &b, f->digest, T2023);
    x.d.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    x.d.reason = "no rule matched (default deny)";
    sworn_record_add(&b, &x.e);
    expect_shape(f, &b, "sh-deny-norule", NULL, 0);
    /* A request the proxy refused itself (ProxyRefusal) is decisiond's deny by no rule, without
     * a credential: an allow, an escalation, a deny naming a rule, or a credential released
     * fails refusal-not-deny; the deny decisiond writes passes, with an empty resource too. */
    {
        Sworn__V1__ProxyRefusal rf = SWORN__V1__PROXY_REFUSAL__INIT;
        uint8_t head[32], cred[32], raw[32];

        static const char head_text[] = "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n";

        sv_sha256(head_text, sizeof(head_text) - 1, head);
        sv_sha256("secret", 6, cred);
        rf.status = 400;
        rf.reason = "obs-fold (a header line continued on the next line)";
        rf.head_sha256.data = head;
        rf.head_sha256.len = 32;
        for (int k = 0; k < 5; k++) {
            static const char *const names[] = {"sh-refusal-allow", "sh-refusal-allow-norule",
                                                "sh-refusal-escalate", "sh-refusal-deny-rule",
                                                "sh-refusal-deny-cred"};

            policy_loaded(f, &b, f->digest, T2023);
            dec_init(&x, f->digest);
            x.rq.refusal = &rf;
            x.d.effect = k <= 1   ? SWORN__V1__EFFECT__EFFECT_ALLOW
                         : k == 2 ? SWORN__V1__EFFECT__EFFECT_ESCALATE
                                  : SWORN__V1__EFFECT__EFFECT_DENY;
            x.d.rule_id = k == 1 || k == 4 ? "" : "charges";
            x.d.reason = "refused by the proxy: obs-fold (a header line continued on the next "
                         "line)";
            if (k == 4) { /* a deny by no rule that released a credential */
                x.d.credential_id = "github";
                x.d.credential_sha256.data = cred;
                x.d.credential_sha256.len = 32;
            }
            sworn_record_add(&b, &x.e);
            if (k <= 1)
                add_receipt(f, &b, 1, 1);
            expect_shape(f, &b, names[k], "refusal-not-deny", 1);
        }
        policy_loaded(f, &b, f->digest, T2023);
        dec_init(&x, f->digest);
        x.rq.refusal = &rf;
        x.d.rule_id = "";
        x.d.reason = "refused by the proxy: obs-fold (a header line continued on the next line)";
        sworn_record_add(&b, &x.e);
        expect_shape(f, &b, "sh-refusal-deny", NULL, 0);
        /* No readable target: scheme and host empty, port 0 (with its raw target digest). */
        policy_loaded(f, &b, f->digest, T2023);
        x.rs.scheme = "";
        x.rs.host = "";
        x.rs.port = 0;
        x.rs.path = "";
        sv_sha256("://:0", 5, raw);
        x.d.raw_target_sha256.data = raw;
        x.d.raw_target_sha256.len = 32;
        sworn_record_add(&b, &x.e);
        expect_shape(f, &b, "sh-refusal-empty", NULL, 0);
        /* The same resource without a refusal is no request at all. */
        policy_loaded(f, &b, f->digest, T2023);
        x.rq.refusal = NULL;
        sworn_record_add(&b, &x.e);
        expect_shape(f, &b, "sh-refusal-none-empty", "missing-field", 1);
        /* The refusal's own shape: status 400..599, a reason of 1..256 bytes. */
        policy_loaded(f, &b, f->digest, T2023);
        dec_init(&x, f->digest);
        x.rq.refusal = &rf;
        x.d.rule_id = "";
        rf.status = 399;
        sworn_record_add(&b, &x.e);
        expect_shape(f, &b, "sh-refusal-399", "bad-field", 1);
        policy_loaded(f, &b, f->digest, T2023);
        rf.status = 600;
        sworn_record_add(&b, &x.e);
        expect_shape(f, &b, "sh-refusal-600", "bad-field", 1);
        policy_loaded(f, &b, f->digest, T2023);
        rf.status = 431;
        rf.reason = "";
        sworn_record_add(&b, &x.e);
        expect_shape(f, &b, "sh-refusal-noreason", "missing-field", 1);
        rf.reason = "request head too large";
    }
    /* Methods: one that is not an upper-case token is denied by no rule before any rule; an
     * allow of it, or a deny by a rule, is no record decisiond writes. No method at all is
     * decisiond's to decide (it matches no methods list): an allow of it passes. */
    {
        static const char *const bad[] = {"get", "Delete", "GET,DELETE", "G T", "GET\xc2\xa0"};

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            policy_loaded(f, &b, f->digest, T2023);
            dec_init(&x, f->digest);
            x.cx.method = (char *)bad[i];
            x.d.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
            x.d.reason = "allowed by rule charges";
            sworn_record_add(&b, &x.e);
            add_receipt(f, &b, 1, 1);
            snprintf(name, sizeof(name), "sh-method-%zu", i);
            /* a no-break space is not UTF-8 control: the method rule itself refuses it */
            expect_shape(f, &b, name, "method-not-token", 1);
        }
        policy_loaded(f, &b, f->digest, T2023);
        dec_init(&x, f->digest); /* a deny by rule charges of "get" */
        x.cx.method = "get";
        sworn_record_add(&b, &x.e);
        expect_shape(f, &b, "sh-method-rule-deny", "method-not-token", 1);
        policy_loaded(f, &b, f->digest, T2023);
        x.d.rule_id = "";
        x.d.reason = "the method is refused: a lower-case letter; denied before any rule";
        sworn_record_add(&b, &x.e);
        expect_shape(f, &b, "sh-method-refused", NULL, 0);
        policy_loaded(f, &b, f->digest, T2023);
        dec_init(&x, f->digest);
        x.cx.method = "";
        x.d.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
        x.d.reason = "allowed by rule charges";
        sworn_record_add(&b, &x.e);
        add_receipt(f, &b, 1, 1);
        expect_shape(f, &b, "sh-method-empty", NULL, 0);
        policy_loaded(f, &b, f->digest, T2023);
        x.rq.context = NULL;
        sworn_record_add(&b, &x.e);
        add_receipt(f, &b, 1, 1);
        expect_shape(f, &b, "sh-method-nocontext", NULL, 0);
    }
    /* Bounds of the recording side's decoder (wire/frame.c), each one over. */
    {
        static const char *const what[] = {"method", "operation", "scheme", "host",
                                           "tool",   "covered",   "rule"};

        for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
            policy_loaded(f, &b, f->digest, T2023);
            dec_init(&x, f->digest);
            switch (i) {
            case 0:
                x.cx.method = s33;
                break;
            case 1:
                x.rq.operation = s65;
                break;
            case 2:
                x.rs.scheme = s17;
                break;
            case 3:
                x.rs.host = s256;
                break;
            case 4:
                x.rs.tool = s257;
                break;
            case 5:
                x.cc.name = s257;
                break;
            default:
                x.d.rule_id = s129;
                break;
            }
            sworn_record_add(&b, &x.e);
            snprintf(name, sizeof(name), "sh-long-%s", what[i]);
            expect_shape(f, &b, name, "field-too-long", 1);
        }
        /* An operator over its 256 bytes (ResolveRequest's peer name). */
        policy_loaded(f, &b, f->digest, T2023);
        escalation_operator = s257;
        escalation_link(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, 0, NULL);
        escalation_operator = "alice";
        expect_shape(f, &b, "sh-long-operator", "field-too-long", 1);
        policy_loaded(f, &b, f->digest, T2023);
        escalation_operator = s256;
        escalation_link(&b, "req-3", SWORN__V1__EFFECT__EFFECT_DENY, 0, NULL);
        escalation_operator = "alice";
        make_record(f, "sh-operator-256", &b, NULL);
        sworn_record_free(&b);
        {
            json_object *rep = verify_json(f, "sh-operator-256", NULL, 1);

            sworn_verify_expect_pass(rep, "entries"); /* fails escalations: unlinked */
            json_object_put(rep);
        }
    }
    free(s1025);
    free(s1024);
    free(s33);
    free(s65);
    free(s17);
    free(s256);
    free(s257);
    free(s129);
}

/* ------------------------------------------------------------------------------------------ */
/* Sandboxes: each end names its start once; each allow or escalate of a sandbox's request, and
 * each approval of one, falls inside a running sandbox of its principal and name. */

/* A SandboxStarted entry of principal agent-1, sandbox name sb-7, id tag, by operator_. */
static void sandbox_started(struct sworn_record *b, uint8_t tag, const char *operator_,
                            uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__SandboxStarted st = SWORN__V1__SANDBOX_STARTED__INIT;
    Sworn__V1__SandboxLimits lim = SWORN__V1__SANDBOX_LIMITS__INIT;
    char *argv[2] = {"/usr/bin/python3", "agent.py"};
    uint8_t id[16], config[32];

    memset(id, tag, sizeof(id));
    sv_sha256("sworn-run config", 16, config);
    st.principal = "agent-1";
    st.name = "sb-7";
    st.sandbox_id.data = id;
    st.sandbox_id.len = sizeof(id);
    st.command = argv;
    st.n_command = 2;
    lim.wall_ms = 600000;
    lim.memory_bytes = 1u << 30;
    lim.processes = 128;
    lim.enforced_by = "cgroup2";
    st.limits = &lim;
    st.config_sha256.data = config;
    st.config_sha256.len = sizeof(config);
    st.agent_uid = 231072;
    st.isolation = "root";
    st.operator_ = (char *)operator_;
    st.time_unix_ms = t_ms;
    e.kind_case = SWORN__V1__ENTRY__KIND_SANDBOX_STARTED;
    e.sandbox_started = &st;
    sworn_record_add(b, &e);
}

/* A SandboxEnded entry naming the start at start_index, with id tag, by operator_; reason and
 * code as given. */
static void sandbox_ended_as(struct sworn_record *b, uint64_t start_index, uint8_t tag,
                             const char *operator_, int reason, uint32_t code, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__SandboxEnded en = SWORN__V1__SANDBOX_ENDED__INIT;
    uint8_t id[16];

    memset(id, tag, sizeof(id));
    en.start_index = start_index;
    en.sandbox_id.data = id;
    en.sandbox_id.len = sizeof(id);
    en.reason = (Sworn__V1__SandboxEndReason)reason;
    en.code = code;
    en.duration_ms = 4200;
    en.operator_ = (char *)operator_;
    en.time_unix_ms = t_ms;
    e.kind_case = SWORN__V1__ENTRY__KIND_SANDBOX_ENDED;
    e.sandbox_ended = &en;
    sworn_record_add(b, &e);
}

static void sandbox_ended(struct sworn_record *b, uint64_t start_index, uint8_t tag,
                          const char *operator_, uint64_t t_ms)
{
    sandbox_ended_as(b, start_index, tag, operator_, 1, 0, t_ms);
}

/* A decision of the sandbox started at index (principal and name as given), with a receipt for
 * an allow. */
/* The uid sandbox_decision's requests carry: the start's agent_uid unless a case changes it. */
static uint32_t sandbox_decision_uid = 231072;

static void sandbox_decision(const struct fx *f, struct sworn_record *b, const char *id,
                             Sworn__V1__Effect effect, uint64_t index, const char *principal,
                             const char *name, uint64_t t_ms)
{
    decision_start_index = index;
    decision_principal = principal;
    decision_sandbox = name;
    decision_uid = sandbox_decision_uid; /* the agent uid sandbox_started records */
    decision(b, id, effect, f->digest, t_ms, 0);
    decision_start_index = 0;
    decision_principal = "agent-1";
    decision_sandbox = "sb-7";
    decision_uid = 1001;
    if (effect == SWORN__V1__EFFECT__EFFECT_ALLOW)
        add_receipt(f, b, b->n - 1, b->n - 1);
}

/* Verify b as record name: fails check sandboxes with code at item (the others pass). */
static void expect_sandbox_fail(const struct fx *f, struct sworn_record *b, const char *name,
                                const char *code, const char *item)
{
    json_object *rep;

    make_record(f, name, b, NULL);
    rep = verify_json(f, name, NULL, 1);
    sworn_verify_expect_fail(rep, "sandboxes", code, item);
    sworn_verify_expect_only(rep, "sandboxes");
    json_object_put(rep);
    sworn_record_free(b);
}

static void test_sandboxes(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;

    /* The good life of a sandbox: started (1), an allow (2), an escalation (3) approved (4), a
     * deny (5), ended (6), then a deny of a request still naming it (7: a deny lets nothing
     * out, so it may come after the end). */
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_decision(f, &b, "sb-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1, "agent-1", "sb-7",
                     T2023 + 1000);
    sandbox_decision(f, &b, "sb-2", SWORN__V1__EFFECT__EFFECT_ESCALATE, 1, "agent-1", "sb-7",
                     T2023 + 2000);
    escalation(&b, "sb-2", SWORN__V1__EFFECT__EFFECT_ALLOW, 3);
    add_receipt(f, &b, 4, 4);
    sandbox_decision(f, &b, "sb-3", SWORN__V1__EFFECT__EFFECT_DENY, 1, "agent-1", "sb-7",
                     T2023 + 4000);
    sandbox_ended(&b, 1, 0x11, "alice", T2023 + 5000);
    sandbox_decision(f, &b, "sb-4", SWORN__V1__EFFECT__EFFECT_DENY, 1, "agent-1", "sb-7",
                     T2023 + 6000);
    make_record(f, "sbx-good", &b, NULL);
    rep = verify_json(f, "sbx-good", NULL, 0);
    sworn_verify_expect_pass(rep, "sandboxes");
    sworn_verify_expect_pass(rep, "entries");
    /* The start, the allow, the escalation, the approval and the end. */
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "sandboxes"), "count")), 5);
    json_object_put(rep);
    sworn_record_free(&b);

    /* An allow naming an unknown start: an entry that is no start (1), one past the log. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "plain", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 500, 0);
    sandbox_decision(f, &b, "sb-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1, "agent-1", "sb-7",
                     T2023 + 1000);
    expect_sandbox_fail(f, &b, "sbx-unknown", "sandbox-unknown", "entry 2");
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_decision(f, &b, "sb-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, 9, "agent-1", "sb-7",
                     T2023 + 1000);
    expect_sandbox_fail(f, &b, "sbx-past", "sandbox-unknown", "entry 1");

    /* An allow after the end. */
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_ended(&b, 1, 0x11, "alice", T2023 + 500);
    sandbox_decision(f, &b, "sb-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1, "agent-1", "sb-7",
                     T2023 + 1000);
    expect_sandbox_fail(f, &b, "sbx-after-end", "sandbox-ended", "entry 3");

    /* An operator's approval after the end (the escalation itself was inside it). */
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_decision(f, &b, "sb-1", SWORN__V1__EFFECT__EFFECT_ESCALATE, 1, "agent-1", "sb-7",
                     T2023 + 1000);
    sandbox_ended(&b, 1, 0x11, "alice", T2023 + 1500);
    escalation(&b, "sb-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 2);
    add_receipt(f, &b, 4, 4);
    expect_sandbox_fail(f, &b, "sbx-approved-late", "sandbox-ended", "entry 4");

    /* Another principal, another sandbox name. */
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_decision(f, &b, "sb-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1, "agent-2", "sb-7",
                     T2023 + 1000);
    expect_sandbox_fail(f, &b, "sbx-principal", "sandbox-mismatch", "entry 2");
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_decision(f, &b, "sb-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1, "agent-1", "sb-8",
                     T2023 + 1000);
    expect_sandbox_fail(f, &b, "sbx-name", "sandbox-mismatch", "entry 2");
    /* Another agent uid than the start recorded (a hello speaking for the sandbox as another). */
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_decision_uid = 1001;
    sandbox_decision(f, &b, "sb-1", SWORN__V1__EFFECT__EFFECT_ALLOW, 1, "agent-1", "sb-7",
                     T2023 + 1000);
    sandbox_decision_uid = 231072;
    expect_sandbox_fail(f, &b, "sbx-uid", "sandbox-mismatch", "entry 2");

    /* An end naming a non-start, an end twice, an end with another id or by another operator. */
    policy_loaded(f, &b, f->digest, T2023);
    decision(&b, "plain", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 500, 0);
    sandbox_ended(&b, 1, 0x11, "alice", T2023 + 600);
    expect_sandbox_fail(f, &b, "sbx-end-nonstart", "sandbox-end-not-start", "entry 2");
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_ended(&b, 1, 0x11, "alice", T2023 + 500);
    sandbox_ended(&b, 1, 0x11, "alice", T2023 + 600);
    expect_sandbox_fail(f, &b, "sbx-end-twice", "sandbox-end-twice", "entry 3");
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_ended(&b, 1, 0x12, "alice", T2023 + 500);
    expect_sandbox_fail(f, &b, "sbx-end-id", "sandbox-end-id-mismatch", "entry 2");
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_ended(&b, 1, 0x11, "mallory", T2023 + 500);
    expect_sandbox_fail(f, &b, "sbx-end-operator", "sandbox-end-operator-mismatch", "entry 2");

    /* Out of shape: an end's code out of its reason's range, a start of no limits' kind. */
    policy_loaded(f, &b, f->digest, T2023);
    sandbox_started(&b, 0x11, "alice", T2023 + 100);
    sandbox_ended_as(&b, 1, 0x11, "alice", 2, 0, T2023 + 500); /* SIGNALED by signal 0 */
    make_record(f, "sbx-shape", &b, NULL);
    rep = verify_json(f, "sbx-shape", NULL, 1);
    sworn_verify_expect_fail(rep, "entries", "sandbox-field", "entry 2");
    json_object_put(rep);
    sworn_record_free(&b);
}

/* ---- token usage (issue 16, model APIs) ---- */

/* The ceiling's member name the allows below carry (decisiond writes one of three). */
static const char *model_ceiling_field = "max_tokens";

/* An allow of operation model.call naming model with a token ceiling (< 0: none) at T2023 +
 * 1000, with its receipt; returns its index. */
static uint64_t model_allow(const struct fx *f, struct sworn_record *b, const char *id,
                            const char *model, int64_t ceiling)
{
    Sworn__V1__Entry *m;
    Sworn__V1__TokenCeiling tc = SWORN__V1__TOKEN_CEILING__INIT;
    char *op, *old_model;

    decision(b, id, SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, T2023 + 1000, 0);
    m = sworn__v1__entry__unpack(NULL, b->len[b->n - 1], b->e[b->n - 1]);
    assert_non_null(m);
    op = m->decision->request->operation;
    old_model = m->decision->request->resource->model;
    m->decision->request->operation = "model.call";
    m->decision->request->resource->model = (char *)model;
    tc.field = (char *)model_ceiling_field;
    tc.tokens = ceiling >= 0 ? (uint64_t)ceiling : 0;
    if (ceiling >= 0)
        m->decision->request->context->token_ceiling = &tc;
    free(b->e[b->n - 1]);
    b->n--;
    sworn_record_add(b, m);
    m->decision->request->operation = op; /* protobuf-c's own, to free */
    m->decision->request->resource->model = old_model;
    m->decision->request->context->token_ceiling = NULL;
    sworn__v1__entry__free_unpacked(m, NULL);
    add_receipt(f, b, b->n - 1, b->n - 1);
    return b->n - 1;
}

/* A UsageRecorded entry naming the entry at `at` (hash: its leaf hash when NULL). charged is
 * input + output when reported, else reserved, unless bad_charge (then one more). */
static void usage_of(struct sworn_record *b, const char *id, const char *allow_id, uint64_t at,
                     const uint8_t *hash, const char *model, uint64_t reserved, int reported,
                     uint64_t in, uint64_t out, int bad_charge)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__UsageRecorded u = SWORN__V1__USAGE_RECORDED__INIT;
    uint8_t leaf[32];

    if (hash == NULL && at < b->n)
        sworn_record_leaf(b, at, leaf);
    else if (hash == NULL)
        memset(leaf, 7, sizeof(leaf));
    else
        memcpy(leaf, hash, 32);
    u.request_id = (char *)id;
    u.allow_request_id = (char *)allow_id;
    u.allow_log_index = at;
    u.allow_entry_hash.data = leaf;
    u.allow_entry_hash.len = 32;
    u.model = (char *)model;
    u.reported = reported;
    u.input_tokens = reported ? in : 0;
    u.output_tokens = reported ? out : 0;
    u.missing = reported ? "" : "the response ended before its end";
    u.reserved_tokens = reserved;
    u.charged_tokens = (reported ? in + out : reserved) + (bad_charge ? 1 : 0);
    u.time_unix_ms = T2023 + 6000;
    e.kind_case = SWORN__V1__ENTRY__KIND_USAGE_RECORDED;
    e.usage_recorded = &u;
    sworn_record_add(b, &e);
}

static void expect_usage_fail(const struct fx *f, struct sworn_record *b, const char *name,
                              const char *check, const char *code)
{
    json_object *rep;
    char item[32];

    make_record(f, name, b, NULL);
    rep = verify_json(f, name, NULL, 1);
    snprintf(item, sizeof(item), "entry %zu", b->n - 1);
    sworn_verify_expect_fail(rep, check, code, item);
    sworn_verify_expect_only(rep, check);
    json_object_put(rep);
}

/*
 * Token usage entries name their own earlier ALLOW of model.call by index and leaf hash, with its
 * request id, canonical model and ceiling, once, never across a restart; their arithmetic holds.
 * Each forgery an operator of the record could try fails with its own code.
 */
static void test_usage(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    json_object *rep;
    uint64_t a, a2, d;
    uint8_t other[32];

    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    a = model_allow(f, &b, "m-1", "gpt-4o", 10);
    a2 = model_allow(f, &b, "m-2", "GPT-4o", -1); /* the canonical model is lower case */
    usage_of(&b, "u-1", "m-1", a, NULL, "gpt-4o", 10, 1, 40, 30, 0);
    usage_of(&b, "u-2", "m-2", a2, NULL, "gpt-4o", 0, 0, 0, 0, 0);
    make_record(f, "usage", &b, NULL);
    rep = verify_json(f, "usage", NULL, 0);
    sworn_verify_expect_pass(rep, "token-usage");
    sworn_verify_expect_pass(rep, "entries");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "token-usage"), "count")),
        2);
    json_object_put(rep);

    /* A second usage for one allow (a replayed report; the operator adding tokens back). */
    usage_of(&b, "u-3", "m-1", a, NULL, "gpt-4o", 10, 1, 1, 1, 0);
    expect_usage_fail(f, &b, "usage-twice", "token-usage", "usage-twice");
    sworn_record_free(&b);

    /* Usage naming a deny, an index after itself, another entry's hash, another request or
     * model, a reservation the allow never made. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    a = model_allow(f, &b, "m-1", "gpt-4o", 10);
    decision(&b, "d-1", SWORN__V1__EFFECT__EFFECT_DENY, f->digest, T2023 + 2000, 0);
    d = b.n - 1;
    usage_of(&b, "u-1", "d-1", d, NULL, "gpt-4o", 0, 1, 5, 5, 0);
    expect_usage_fail(f, &b, "usage-deny", "token-usage", "usage-allow-unknown");
    b.n--, free(b.e[b.n]);
    usage_of(&b, "u-1", "m-1", b.n + 5, NULL, "gpt-4o", 10, 1, 5, 5, 0);
    expect_usage_fail(f, &b, "usage-later", "token-usage", "usage-allow-unknown");
    b.n--, free(b.e[b.n]);
    sworn_record_leaf(&b, d, other);
    usage_of(&b, "u-1", "m-1", a, other, "gpt-4o", 10, 1, 5, 5, 0);
    expect_usage_fail(f, &b, "usage-hash", "token-usage", "usage-allow-hash");
    b.n--, free(b.e[b.n]);
    usage_of(&b, "u-1", "m-9", a, NULL, "gpt-4o", 10, 1, 5, 5, 0);
    expect_usage_fail(f, &b, "usage-id", "token-usage", "usage-allow-mismatch");
    b.n--, free(b.e[b.n]);
    usage_of(&b, "u-1", "m-1", a, NULL, "gpt-4o-mini", 10, 1, 5, 5, 0);
    expect_usage_fail(f, &b, "usage-model", "token-usage", "usage-allow-mismatch");
    b.n--, free(b.e[b.n]);
    usage_of(&b, "u-1", "m-1", a, NULL, "gpt-4o", 1000, 0, 0, 0, 0);
    expect_usage_fail(f, &b, "usage-reserved", "token-usage", "usage-reserved");
    b.n--, free(b.e[b.n]);
    /* The arithmetic: charged_tokens that is not input + output. */
    usage_of(&b, "u-1", "m-1", a, NULL, "gpt-4o", 10, 1, 40, 30, 1);
    expect_usage_fail(f, &b, "usage-charged", "entries", "usage-charged");
    sworn_record_free(&b);

    /* A restart between the allow and its usage: decisiond forgets pending allows. */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    a = model_allow(f, &b, "m-1", "gpt-4o", 10);
    startup(&b, 990, 991, 0, T2023 + 3000);
    policy_loaded(f, &b, f->digest, T2023 + 3000);
    usage_of(&b, "u-1", "m-1", a, NULL, "gpt-4o", 10, 1, 5, 5, 0);
    expect_usage_fail(f, &b, "usage-restart", "token-usage", "usage-allow-restarted");
    sworn_record_free(&b);

    /* An allow whose ceiling names no member decisiond reads (a forged request). */
    startup(&b, 990, 991, 0, T2023);
    policy_loaded(f, &b, f->digest, T2023);
    model_ceiling_field = "max_tokenz";
    model_allow(f, &b, "m-1", "gpt-4o", 10);
    model_ceiling_field = "max_tokens";
    make_record(f, "usage-ceiling", &b, NULL);
    rep = verify_json(f, "usage-ceiling", NULL, 1);
    sworn_verify_expect_fail(rep, "entries", "bad-field", "entry 2");
    json_object_put(rep);
    sworn_record_free(&b);
}

/* ---- red team of issue 16, B: requests the proxy never sends, recorded as allows ---- */

static int rt_case;
static Sworn__V1__TokenCeiling rt_ceiling = SWORN__V1__TOKEN_CEILING__INIT;
static Sworn__V1__DelegationVerification rt_verif = SWORN__V1__DELEGATION_VERIFICATION__INIT;
static Sworn__V1__MayAct rt_may = SWORN__V1__MAY_ACT__INIT;

static void rt_forge(Sworn__V1__AuthorizationRequest *rq)
{
    rt_ceiling.field = "max_tokens";
    rt_ceiling.tokens = 10;
    rt_verif.result = SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_NOT_VERIFIED;
    rt_verif.alg = "";
    rt_verif.key_id = "";
    switch (rt_case) {
    case 0: /* a model on an http.request */
        rq->resource->model = "o1-pro";
        break;
    case 1: /* a token ceiling on an http.request */
        rq->context->token_ceiling = &rt_ceiling;
        break;
    case 2: /* a model API shape on an http.request */
        rq->context->model_api = "openai.chat";
        break;
    case 3: /* an MCP tool on an http.request */
        rq->resource->tool = "delete_all";
        break;
    case 4: /* a resource URI on mcp.tools/call */
        rq->operation = "mcp.tools/call";
        rq->resource->tool = "read_file";
        rq->resource->uri = "file:///etc/shadow";
        break;
    case 5: /* a tool on mcp.resources/read */
        rq->operation = "mcp.resources/read";
        rq->resource->uri = "file:///srv/a";
        rq->resource->tool = "delete_all";
        break;
    case 6: /* verified, with no alg */
        rt_verif.result = SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED;
        rq->delegation->verification = &rt_verif;
        break;
    case 7: /* not verified, with an alg and key id */
        rt_verif.alg = "RS256";
        rt_verif.key_id = "k1";
        rq->delegation->verification = &rt_verif;
        break;
    case 8: /* result unspecified */
        rt_verif.result = SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_UNSPECIFIED;
        rq->delegation->verification = &rt_verif;
        break;
    case 9: /* verified with alg none */
        rt_verif.result = SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED;
        rt_verif.alg = "none";
        rt_verif.key_id = "k1";
        rq->delegation->verification = &rt_verif;
        break;
    case 10: /* a model.call of no known shape */
        rq->operation = "model.call";
        rq->resource->model = "gpt-4o";
        rq->context->token_ceiling = &rt_ceiling;
        rq->context->model_api = "acme.chat";
        break;
    case 11: /* a model.call with no model */
        rq->operation = "model.call";
        rq->context->token_ceiling = &rt_ceiling;
        rq->context->model_api = "openai.chat";
        break;
    case 12: /* a ceiling of another member */
        rq->operation = "model.call";
        rq->resource->model = "gpt-4o";
        rt_ceiling.field = "max_tokens";
        rt_ceiling.tokens = 10;
        rq->context->token_ceiling = &rt_ceiling;
        rq->context->model_api = "openai.chat";
        break;
    case 13: /* may_act allowed, with no actor to be allowed */
        rt_may.result = SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED;
        rq->delegation->may_act = &rt_may;
        rq->delegation->n_actors = 0;
        break;
    default:
        break;
    }
}

/*
 * Red team of issue 16 (B): allows of requests decisiond never records, because its decoder
 * refuses them (wire/frame.c) and the proxy never sends them: an MCP tool, a resource URI or the
 * model fields on an operation that has none, a delegation "verified" with an alg the proxy
 * never verifies, an allowed model.call naming no model, may_act allowed with no actor. Before,
 * cases 0 to 5, 9, 11 and 13 passed `entries`; each now fails it with bad-field. Cases 6 to 8 (the
 * verification's own shape) failed already; case 12, a model.call as the proxy sends it, passes.
 */
static void test_rt16_b_request_shapes(void **state)
{
    struct fx *f = *state;

    for (int i = 0; i <= 13; i++) {
        struct sworn_record b = {0};
        json_object *rep;
        char name[32];

        startup(&b, 990, 991, 0, T2023);
        policy_loaded(f, &b, f->digest, T2023);
        rt_case = i;
        decision_hook = rt_forge;
        decision(&b, "rt-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, T2023 + 1000, 0);
        decision_hook = NULL;
        add_receipt(f, &b, b.n - 1, b.n - 1);
        snprintf(name, sizeof(name), "rt16b-%d", i);
        make_record(f, name, &b, NULL);
        rep = verify_json(f, name, NULL, i == 12 ? 0 : 1);
        if (i == 12) {
            sworn_verify_expect_pass(rep, "entries");
        } else {
            sworn_verify_expect_fail(rep, "entries", "bad-field", "entry 2");
            sworn_verify_expect_only(rep, "entries");
        }
        json_object_put(rep);
        sworn_record_free(&b);
    }
}

/* ---- witness events (issue 18) ---- */

/* A WitnessEvent of kind as decisiond writes it: FAILING without an answer, RECOVERED with a
 * 200, CONSISTENCY with a 409 naming a size larger than the log. */
static void witness_good(Sworn__V1__WitnessEvent *w, Sworn__V1__WitnessEventKind kind)
{
    static uint8_t key_id[4] = {0x1c, 0x2d, 0x3e, 0x4f};

    sworn__v1__witness_event__init(w);
    w->witness = "alice.example/witness";
    w->key_id.data = key_id;
    w->key_id.len = 4;
    w->kind = kind;
    w->checkpoint_size = 600;
    w->old_size = 300;
    w->time_unix_ms = T2023 + 4000;
    switch (kind) {
    case SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_FAILING:
        w->reason = "connect: connection refused";
        break;
    case SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_RECOVERED:
        w->status = 200;
        w->reason = "cosigned again";
        break;
    default:
        w->status = 409;
        w->witness_size = 900;
        w->reason = "the witness holds size 900, larger than this log";
        break;
    }
}

/* Append w: packed by the recording side's packer when it is one decisiond writes
 * (sworn_frame_pack_entry accepts it), else by protobuf-c directly after checking that the
 * packer refuses it, so the verifier is held to exactly the recording side's rules. */
static void witness_event(struct sworn_record *b, const Sworn__V1__WitnessEvent *w, int writable)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    uint8_t *out = NULL;
    size_t n = 0;

    e.kind_case = SWORN__V1__ENTRY__KIND_WITNESS_EVENT;
    e.witness_event = (Sworn__V1__WitnessEvent *)w;
    if (writable) {
        if (sworn_frame_pack_entry(&e, &out, &n) != 0)
            fail_msg("the recording side refuses a good witness event: %s", sworn_err_msg());
        add_raw(b, out, n);
        free(out);
        return;
    }
    assert_int_equal(sworn_frame_pack_entry(&e, &out, &n), -1);
    sworn_record_add(b, &e);
}

static const char *witness_note_of(json_object *rep)
{
    json_object *wq = sworn_verify_check(rep, "witness-quorum"), *note;

    if (!json_object_object_get_ex(wq, "note", &note))
        fail_msg("the witness-quorum check has no note");
    return json_object_get_string(note);
}

static void test_witness_events(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    Sworn__V1__WitnessEvent w;
    json_object *rep;
    struct sworn_test_run r;
    char *pp, *rec, long_name[258];
    static const struct {
        const char *name, *code;
    } bad[] = {
        {"wit-key-id-3", "bad-field"},      {"wit-key-id-0", "missing-field"},
        {"wit-kind-0", "bad-field"},        {"wit-kind-4", "bad-field"},
        {"wit-plus", "bad-field"},          {"wit-space", "bad-field"},
        {"wit-empty", "missing-field"},     {"wit-long", "field-too-long"},
        {"wit-reason-0", "missing-field"},  {"wit-reason-257", "field-too-long"},
        {"wit-reason-bidi", "bad-string"},  {"wit-size-no-409", "bad-field"},
        {"wit-status-600", "bad-field"},    {"wit-time-0", "time-missing"},
        {"wit-cp-size-0", "missing-field"},
    };
    char reason257[258];

    /* One of each kind (and a second alarm, of a 422): they pass; the first alarm is the
     * witness-quorum note in both reports, and both are counted in witness_alarms. */
    good_entries(f, &b);
    witness_good(&w, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_FAILING);
    witness_event(&b, &w, 1); /* 5 */
    witness_good(&w, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_RECOVERED);
    witness_event(&b, &w, 1); /* 6 */
    witness_good(&w, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_CONSISTENCY);
    witness_event(&b, &w, 1); /* 7 */
    witness_good(&w, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_CONSISTENCY);
    w.witness = "bob.example/witness";
    w.status = 422;
    w.witness_size = 0;
    w.checkpoint_size = 700;
    w.reason = "the consistency proof does not join the witness's tree";
    witness_event(&b, &w, 1); /* 8 */
    make_record(f, "wit-good", &b, NULL);
    rep = verify_json(f, "wit-good", NULL, 0);
    sworn_verify_expect_pass(rep, "entries");
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "witness_alarms")), 2);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "checkpoints_below_quorum")), 0);
    assert_string_equal(witness_note_of(rep),
                        "witness alice.example/witness reported a consistency failure at "
                        "checkpoint size 600 (entry 7), and 1 more such alarm(s)");
    json_object_put(rep);
    pp = P(f, "wit-good.policy");
    rec = P(f, "wit-good");
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--no-progress", "--policy", pp, rec, NULL);
    if (r.status != 0 ||
        strstr(r.out, "note: witness alice.example/witness reported a consistency failure at "
                      "checkpoint size 600 (entry 7)") == NULL ||
        strstr(r.out, "witness 2 consistency alarm(s) recorded") == NULL)
        fail_msg("text report: exit %d:\n%s%s", r.status, r.out, r.err);
    sworn_test_run_free(&r);
    free(pp);
    free(rec);
    /* A bundle holding the alarm says so too, at the entry's index in the log. */
    rep = verify_bundle(f, "wit-good", 6, 3, "wit-good.bundle", 0);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "witness_alarms")), 2);
    assert_non_null(strstr(witness_note_of(rep), "at checkpoint size 600 (entry 7)"));
    json_object_put(rep);
    sworn_record_free(&b);

    /* A witness name of 256 bytes is cut in the note, which still names the size and entry. */
    memset(long_name, 'w', 256);
    long_name[256] = '\0';
    good_entries(f, &b);
    witness_good(&w, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_CONSISTENCY);
    w.witness = long_name;
    witness_event(&b, &w, 1);
    make_record(f, "wit-long-name", &b, NULL);
    rep = verify_json(f, "wit-long-name", NULL, 0);
    assert_non_null(strstr(witness_note_of(rep), "www... reported a consistency failure at "
                                                 "checkpoint size 600 (entry 5)"));
    json_object_put(rep);
    sworn_record_free(&b);

    /* Each field out of its rule: refused by the recording side's packer, and by the verifier
     * with its own code. */
    memset(reason257, 'r', 257);
    reason257[257] = '\0';
    long_name[256] = 'w';
    long_name[257] = '\0';
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char item[32];

        good_entries(f, &b);
        witness_good(&w, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_CONSISTENCY);
        switch (i) {
        case 0:
            w.key_id.len = 3;
            break;
        case 1:
            w.key_id.len = 0;
            break;
        case 2:
            w.kind = SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_KIND_UNSPECIFIED;
            break;
        case 3:
            w.kind = (Sworn__V1__WitnessEventKind)4;
            break;
        case 4:
            w.witness = "alice.example/witness+1c2d3e4f";
            break;
        case 5:
            w.witness = "alice example";
            break;
        case 6:
            w.witness = "";
            break;
        case 7:
            w.witness = long_name;
            break;
        case 8:
            w.reason = "";
            break;
        case 9:
            w.reason = reason257;
            break;
        case 10:
            w.reason = "proof \xe2\x80\xae"
                       "fine"; /* U+202E RIGHT-TO-LEFT OVERRIDE */
            break;
        case 11:
            w.status = 422; /* a size the witness holds only comes with a 409 */
            break;
        case 12:
            w.status = 600;
            w.witness_size = 0;
            break;
        case 13:
            w.time_unix_ms = 0;
            break;
        default:
            w.checkpoint_size = 0;
            break;
        }
        witness_event(&b, &w, 0);
        make_record(f, bad[i].name, &b, NULL);
        rep = verify_json(f, bad[i].name, NULL, 1);
        snprintf(item, sizeof(item), "entry %zu", b.n - 1);
        sworn_verify_expect_fail(rep, "entries", bad[i].code, item);
        sworn_verify_expect_only(rep, "entries");
        assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "witness_alarms")), 0);
        json_object_put(rep);
        sworn_record_free(&b);
    }
}

/* ---- conformance reports (issue 19) ---- */

static const char report_bytes[] = "{\"tool\":\"sworn-conformance\",\"report_version\":2}";

/* A report as decisiond records it after a Startup entry (0) and a policy load (1): run from the
 * checkpoint of size 2, its measured start entry 0. */
static void report_good(Sworn__V1__ConformanceReport *r, Sworn__V1__ConformanceSummary *s)
{
    static uint8_t sha[32], set[32], root[32];

    sworn__v1__conformance_summary__init(s);
    sv_sha256(report_bytes, strlen(report_bytes), sha);
    memset(set, 0x5e, sizeof(set));
    memset(root, 0x7a, sizeof(root));
    s->report_sha256.data = sha;
    s->report_sha256.len = 32;
    s->report_length = strlen(report_bytes);
    s->probe_set_sha256.data = set;
    s->probe_set_sha256.len = 32;
    s->probe_set_size = 9;
    s->tier = 5;
    s->passed = 8;
    s->skipped = 1;
    s->result = SWORN__V1__CONFORMANCE_RESULT__CONFORMANCE_RESULT_PASS;
    s->operator_name = "Alice Auditor";
    s->operator_uid = 1000;
    s->operator_user = "alice";
    s->started_unix_ms = T2023 + 10000;
    s->ended_unix_ms = T2023 + 20000;
    s->checkpoint_size = 2;
    s->checkpoint_root.data = root;
    s->checkpoint_root.len = 32;
    s->startup_index = 0;
    sworn__v1__conformance_report__init(r);
    r->summary = s;
    r->peer_uid = 1000;
    r->operator_ = "alice";
    r->time_unix_ms = T2023 + 21000;
}

/* Sign r (fields 1..4) with the fixture's key over the conformance-report TBS into sig. */
static void report_sign(const struct fx *f, Sworn__V1__ConformanceReport *r, uint8_t sig[64])
{
    Sworn__V1__ConformanceReport part = *r;
    uint8_t buf[4096], tbs[29 + 32];
    size_t n, siglen = 64;
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    part.key_id.len = 0;
    part.signature.len = 0;
    part.alg = 0;
    n = sworn__v1__conformance_report__get_packed_size(&part);
    assert_true(n <= sizeof(buf));
    sworn__v1__conformance_report__pack(&part, buf);
    memcpy(tbs, "\xffsworn/v1 conformance-report", 28);
    tbs[28] = 0;
    sv_sha256(buf, n, tbs + 29);
    assert_int_equal(EVP_DigestSignInit(c, NULL, NULL, NULL, f->receipt_key), 1);
    assert_int_equal(EVP_DigestSign(c, sig, &siglen, tbs, sizeof(tbs)), 1);
    EVP_MD_CTX_free(c);
    r->key_id.data = (uint8_t *)f->receipt_id;
    r->key_id.len = 32;
    r->signature.data = sig;
    r->signature.len = 64;
    r->alg = 2;
}

/* A Startup entry, a policy load, an allow with its receipt (entry 2), then the report (3):
 * packed by the recording side's packer (which must accept it) when writable. */
static void report_record(const struct fx *f, struct sworn_record *b,
                          const Sworn__V1__ConformanceReport *r, int writable)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    uint8_t *out = NULL;
    size_t n = 0;

    startup(b, 990, 991, 0, T2023);
    policy_loaded(f, b, f->digest, T2023);
    decision(b, "req-1", SWORN__V1__EFFECT__EFFECT_ALLOW, f->digest, T2023 + 1000, 0);
    add_receipt(f, b, 2, 2);
    e.kind_case = SWORN__V1__ENTRY__KIND_CONFORMANCE_REPORT;
    e.conformance_report = (Sworn__V1__ConformanceReport *)r;
    if (writable) {
        if (sworn_frame_pack_entry(&e, &out, &n) != 0)
            fail_msg("the recording side refuses a good report: %s", sworn_err_msg());
        add_raw(b, out, n);
        free(out);
        return;
    }
    assert_int_equal(sworn_frame_pack_entry(&e, &out, &n), -1);
    sworn_record_add(b, &e);
}

static json_object *first_listed(json_object *rep)
{
    json_object *l = sworn_verify_get(rep, "report_list");

    assert_int_equal(json_object_array_length(l), 1);
    return json_object_array_get_idx(l, 0);
}

static void test_reports(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    Sworn__V1__ConformanceReport r;
    Sworn__V1__ConformanceSummary sm;
    uint8_t sig[64], other_id[32];
    json_object *rep, *l;
    struct sworn_test_run t;
    char *pp, *rec;

    /* Good: signed by the deployment's key (a receipt-key of the policy here), listed with who
     * ran what, when, with which result; no file beside the record is "absent", not a failure. */
    report_good(&r, &sm);
    report_sign(f, &r, sig);
    report_record(f, &b, &r, 1);
    make_record(f, "rep-good", &b, NULL);
    rep = verify_json(f, "rep-good", NULL, 0);
    sworn_verify_expect_pass(rep, "reports");
    sworn_verify_expect_pass(rep, "entries");
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "reports")), 1);
    l = first_listed(rep);
    assert_int_equal(json_object_get_int64(sworn_verify_get(l, "index")), 3);
    assert_string_equal(json_object_get_string(sworn_verify_get(l, "result")), "pass");
    assert_string_equal(json_object_get_string(sworn_verify_get(l, "tier")), "T5");
    assert_string_equal(json_object_get_string(sworn_verify_get(l, "operator_name")),
                        "Alice Auditor");
    assert_string_equal(json_object_get_string(sworn_verify_get(l, "recorded_by")), "alice");
    assert_string_equal(json_object_get_string(sworn_verify_get(l, "file")), "absent");
    assert_true(json_object_get_boolean(sworn_verify_get(l, "verified")));
    json_object_put(rep);
    /* The text report lists it too. */
    pp = P(f, "rep-good.policy");
    rec = P(f, "rep-good");
    sworn_test_runv(&t, NULL, verify_bin, "verify", "--no-progress", "--policy", pp, rec, NULL);
    if (t.status != 0 ||
        strstr(t.out, "entry 3: pass, tier T5, 8 passed, 0 failed, 1 skipped, "
                      "0 errors; run by Alice Auditor (uid 1000, user alice)") == NULL)
        fail_msg("text report: exit %d:\n%s%s", t.status, t.out, t.err);
    sworn_test_run_free(&t);
    /* The report's bytes beside the record: their digest must be the entry's. */
    {
        char *d = P(f, "rep-good/sworn/reports");

        assert_int_equal(mkdir(d, 0755), 0);
        free(d);
    }
    sworn_verify_write_rel(f->dir, "rep-good/sworn/reports/3.json", report_bytes,
                           strlen(report_bytes));
    rep = verify_json(f, "rep-good", NULL, 0);
    assert_string_equal(json_object_get_string(sworn_verify_get(first_listed(rep), "file")),
                        "matches");
    json_object_put(rep);
    sworn_verify_write_rel(f->dir, "rep-good/sworn/reports/3.json",
                           "{\"tool\":\"sworn-conformance\",\"report_version\":3}",
                           strlen(report_bytes));
    rep = verify_json(f, "rep-good", NULL, 1);
    sworn_verify_expect_fail(rep, "reports", "report-file-mismatch", "entry 3");
    sworn_verify_expect_only(rep, "reports");
    assert_string_equal(json_object_get_string(sworn_verify_get(first_listed(rep), "file")),
                        "mismatch");
    json_object_put(rep);
    free(pp);
    free(rec);
    sworn_record_free(&b);

    /* A summary changed after signing (a fail turned into a pass, the counts kept consistent):
     * the signature no longer verifies. The whole record is re-made, so only the signature can
     * tell. */
    report_good(&r, &sm);
    sm.passed = 7;
    sm.failed = 1;
    sm.result = SWORN__V1__CONFORMANCE_RESULT__CONFORMANCE_RESULT_FAIL;
    report_sign(f, &r, sig);
    sm.passed = 8;
    sm.failed = 0;
    sm.result = SWORN__V1__CONFORMANCE_RESULT__CONFORMANCE_RESULT_PASS;
    report_record(f, &b, &r, 1);
    make_record(f, "rep-changed", &b, NULL);
    rep = verify_json(f, "rep-changed", NULL, 1);
    sworn_verify_expect_fail(rep, "reports", "report-signature-invalid", "entry 3");
    sworn_verify_expect_only(rep, "reports");
    json_object_put(rep);
    sworn_record_free(&b);

    /* Another purpose's signature by the same key: the allow's receipt signature moved into the
     * report entry is no report signature. */
    report_good(&r, &sm);
    report_sign(f, &r, sig);
    report_record(f, &b, &r, 1);
    {
        Sworn__V1__Receipt *rc = sworn__v1__receipt__unpack(NULL, b.rlen[2], b.r[2]);
        Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;

        assert_non_null(rc);
        assert_int_equal(rc->signature.len, 64);
        memcpy(sig, rc->signature.data, 64);
        sworn__v1__receipt__free_unpacked(rc, NULL);
        free(b.e[3]);
        b.n = 3;
        e.kind_case = SWORN__V1__ENTRY__KIND_CONFORMANCE_REPORT;
        e.conformance_report = &r;
        sworn_record_add(&b, &e);
    }
    make_record(f, "rep-receipt-sig", &b, NULL);
    rep = verify_json(f, "rep-receipt-sig", NULL, 1);
    sworn_verify_expect_fail(rep, "reports", "report-signature-invalid", "entry 3");
    sworn_verify_expect_only(rep, "reports");
    json_object_put(rep);
    sworn_record_free(&b);

    /* The reverse: the report's signature as the allow's receipt is no receipt. */
    report_good(&r, &sm);
    report_sign(f, &r, sig);
    report_record(f, &b, &r, 1);
    {
        Sworn__V1__Receipt *rc = sworn__v1__receipt__unpack(NULL, b.rlen[2], b.r[2]);

        assert_non_null(rc);
        memcpy(rc->signature.data, sig, 64);
        sworn_record_put_receipt(&b, 2, rc);
        sworn__v1__receipt__free_unpacked(rc, NULL);
    }
    make_record(f, "rep-as-receipt", &b, NULL);
    rep = verify_json(f, "rep-as-receipt", NULL, 1);
    sworn_verify_expect_fail(rep, "receipts", "receipt-invalid", "entry 2");
    sworn_verify_expect_only(rep, "receipts");
    json_object_put(rep);
    sworn_record_free(&b);

    /* A key the auditor does not trust. */
    report_good(&r, &sm);
    report_sign(f, &r, sig);
    memset(other_id, 0x11, sizeof(other_id));
    r.key_id.data = other_id;
    report_record(f, &b, &r, 1);
    make_record(f, "rep-key", &b, NULL);
    rep = verify_json(f, "rep-key", NULL, 1);
    sworn_verify_expect_fail(rep, "reports", "report-key-unknown", "entry 3");
    json_object_put(rep);
    sworn_record_free(&b);

    /* A measured start that is not a Startup entry, and a start checkpoint after the entry. */
    report_good(&r, &sm);
    sm.startup_index = 1;
    report_sign(f, &r, sig);
    report_record(f, &b, &r, 1);
    make_record(f, "rep-startup", &b, NULL);
    rep = verify_json(f, "rep-startup", NULL, 1);
    sworn_verify_expect_fail(rep, "reports", "report-startup", "entry 3");
    sworn_verify_expect_only(rep, "reports");
    json_object_put(rep);
    sworn_record_free(&b);
    report_good(&r, &sm);
    sm.checkpoint_size = 4;
    report_sign(f, &r, sig);
    report_record(f, &b, &r, 1);
    make_record(f, "rep-ahead", &b, NULL);
    rep = verify_json(f, "rep-ahead", NULL, 1);
    sworn_verify_expect_fail(rep, "reports", "report-checkpoint-ahead", "entry 3");
    json_object_put(rep);
    sworn_record_free(&b);

    /* Shapes the recording side never writes: refused by its packer and by the verifier. */
    for (int i = 0; i < 4; i++) {
        char name[32];

        snprintf(name, sizeof(name), "rep-shape-%d", i);
        report_good(&r, &sm);
        switch (i) {
        case 0:
            sm.tier = 6;
            break;
        case 1:
            sm.result = SWORN__V1__CONFORMANCE_RESULT__CONFORMANCE_RESULT_FAIL; /* none failed */
            break;
        case 2:
            sm.checkpoint_root.len = 0;
            break;
        default:
            sm.passed = 10; /* more run than the probe set holds */
            break;
        }
        report_sign(f, &r, sig);
        report_record(f, &b, &r, 0);
        make_record(f, name, &b, NULL);
        rep = verify_json(f, name, NULL, 1);
        sworn_verify_expect_fail(rep, "entries", "report-shape", "entry 3");
        json_object_put(rep);
        sworn_record_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_good_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rt16_b_request_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rt16_b_minted_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_receipt_of_another_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entry_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_escalation_links, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spoofing_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keys_bundle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_separation_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_separation_development, setup, teardown),
        cmocka_unit_test_setup_teardown(test_separation_uids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_separation_unrecorded, setup, teardown),
        cmocka_unit_test(test_separation_policy_lines),
        cmocka_unit_test_setup_teardown(test_start_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_marks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exchanges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_released_after_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_measured_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_in_force, setup, teardown),
        cmocka_unit_test_setup_teardown(test_request_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_measured_unseen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entry_times, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entry_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandboxes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_witness_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reports, setup, teardown),
    };

    log_bin = sworn_test_bin("SWORN_LOG_BIN");
    verify_bin = sworn_test_bin("SWORN_VERIFY_BIN");
    hsm_bin = sworn_test_bin("SWORN_HSM_BIN");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
