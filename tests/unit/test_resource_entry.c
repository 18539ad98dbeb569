/*
 * test_resource_entry.c -- the canonical resource and the raw target digest in the log.
 *
 * A DecisionRecord carries canonical_resource (what policy and vault matched) and
 * raw_target_sha256 (SHA-256 of scheme "://" host ":" port path as the request carried them).
 * Checked here: the recording side's strict decoder (sworn_frame_check_entry) and the independent
 * verifier (sv_entry_check) accept well-formed records, old records without the fields, and
 * refuse a canonical form without the digest, a digest of the wrong length, and (the verifier,
 * which recomputes it) a digest that is not the request's. Then a real stack: decisiond fills
 * both fields for an allow, for a deny reached through dot segments, and leaves the canonical
 * form out (with the digest kept) for a refused resource; a path with parameters that the
 * policy refuses has its canonical form (parameters kept) recorded; the verifier accepts every
 * entry. Raw tunnels (scheme tcp, operation tcp.connect): the canonical form has an empty path
 * (and only it may), both decoders say so; through a stack, an allow naming tcp is recorded with
 * that form, an allow without schemes never matches tcp, and an allow naming tcp with a
 * credential is a deny (the vault never injects one into a raw tunnel).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "err.h"
#include "frame.h"
#include "stack_fixture.h"
#include "sv_entry.h"
#include "testutil.h"

static uint8_t digest[32] = {1};

struct rec {
    Sworn__V1__Entry e;
    Sworn__V1__DecisionRecord d;
    Sworn__V1__AuthorizationRequest r;
    Sworn__V1__Principal p;
    Sworn__V1__Resource res, canon;
    uint8_t raw[32];
};

static void mkrec(struct rec *x, const char *host, const char *path)
{
    char text[1024];

    memset(x, 0, sizeof(*x));
    sworn__v1__entry__init(&x->e);
    sworn__v1__decision_record__init(&x->d);
    sworn__v1__authorization_request__init(&x->r);
    sworn__v1__principal__init(&x->p);
    sworn__v1__resource__init(&x->res);
    sworn__v1__resource__init(&x->canon);
    x->p.id = (char *)"agent";
    x->r.request_id = (char *)"r1";
    x->r.operation = (char *)"http.request";
    x->r.principal = &x->p;
    x->res.scheme = (char *)"HTTPS";
    x->res.host = (char *)host;
    x->res.port = 443;
    x->res.path = (char *)path;
    x->r.resource = &x->res;
    x->canon.scheme = (char *)"https";
    x->canon.host = (char *)"api.example.com";
    x->canon.port = 443;
    x->canon.path = (char *)"/a/b";
    x->d.request = &x->r;
    x->d.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    x->d.reason = (char *)"denied";
    x->d.time_unix_ms = 1764633600000ull;
    x->d.policy_digest.data = digest;
    x->d.policy_digest.len = 32;
    x->d.canonical_resource = &x->canon;
    snprintf(text, sizeof(text), "HTTPS://%s:443%s", host, path);
    SHA256((const unsigned char *)text, strlen(text), x->raw);
    x->d.raw_target_sha256.data = x->raw;
    x->d.raw_target_sha256.len = 32;
    x->e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    x->e.decision = &x->d;
}

/* Pack x and give it to the verifier: 0 accepted, else -1 with code. */
static int verify(const struct rec *x, char code[32])
{
    size_t n = sworn__v1__entry__get_packed_size(&x->e);
    uint8_t *b = malloc(n);
    struct sv_entry_info info;
    char why[512];
    int rc;

    assert_non_null(b);
    sworn__v1__entry__pack(&x->e, b);
    code[0] = '\0';
    rc = sv_entry_check(b, n, &info, code, why);
    free(b);
    return rc;
}

static void test_record_checks(void **state)
{
    struct rec x;
    char code[32];
    uint8_t *out = NULL;
    size_t len;

    (void)state;
    mkrec(&x, "API.example.com.", "/a/./b");
    assert_int_equal(sworn_frame_check_entry(&x.e), 0);
    assert_int_equal(verify(&x, code), 0);
    assert_int_equal(sworn_frame_pack_entry(&x.e, &out, &len), 0);
    free(out);
    /* A record written before the fields existed. */
    x.d.canonical_resource = NULL;
    x.d.raw_target_sha256.len = 0;
    assert_int_equal(sworn_frame_check_entry(&x.e), 0);
    assert_int_equal(verify(&x, code), 0);
    /* A refused resource: the digest without a canonical form. */
    x.d.raw_target_sha256.len = 32;
    assert_int_equal(sworn_frame_check_entry(&x.e), 0);
    assert_int_equal(verify(&x, code), 0);
    /* A canonical form without the digest. */
    x.d.canonical_resource = &x.canon;
    x.d.raw_target_sha256.len = 0;
    assert_int_equal(sworn_frame_check_entry(&x.e), -1);
    assert_non_null(strstr(sworn_err_msg(), "without raw_target_sha256"));
    assert_int_equal(verify(&x, code), -1);
    assert_string_equal(code, "missing-field");
    /* A digest of the wrong length. */
    x.d.raw_target_sha256.len = 31;
    assert_int_equal(sworn_frame_check_entry(&x.e), -1);
    assert_int_equal(verify(&x, code), -1);
    assert_string_equal(code, "bad-field");
    /* A digest of another target: the verifier recomputes it. */
    x.d.raw_target_sha256.len = 32;
    x.raw[0] ^= 1;
    assert_int_equal(verify(&x, code), -1);
    assert_string_equal(code, "bad-field");
    x.raw[0] ^= 1;
    assert_int_equal(verify(&x, code), 0);
    /* A canonical form that is not one. */
    x.canon.path = (char *)"a/b";
    assert_int_equal(sworn_frame_check_entry(&x.e), -1);
    assert_int_equal(verify(&x, code), -1);
    x.canon.path = (char *)"";
    assert_int_equal(sworn_frame_check_entry(&x.e), -1);
    assert_int_equal(verify(&x, code), -1);
    x.canon.path = (char *)"/a/b";
    x.canon.scheme = (char *)"ftp";
    assert_int_equal(verify(&x, code), -1);
    x.canon.scheme = (char *)"https";
    x.canon.port = 8443;
    assert_int_equal(verify(&x, code), -1);
    x.canon.port = 443;
    x.canon.host = (char *)"";
    assert_int_equal(sworn_frame_check_entry(&x.e), -1);
    assert_int_equal(verify(&x, code), -1);
    /* A raw tunnel (scheme tcp): its canonical path is empty, and only its is. */
    mkrec(&x, "DB.example.", "");
    x.res.scheme = (char *)"TCP";
    x.r.operation = (char *)"tcp.connect";
    x.canon.scheme = (char *)"tcp";
    x.canon.host = (char *)"db.example";
    x.canon.path = (char *)"";
    SHA256((const unsigned char *)"TCP://DB.example.:443", 21, x.raw);
    assert_int_equal(sworn_frame_check_entry(&x.e), 0);
    assert_int_equal(verify(&x, code), 0);
    x.canon.path = (char *)"/";
    assert_int_equal(sworn_frame_check_entry(&x.e), -1);
    assert_non_null(strstr(sworn_err_msg(), "not empty for scheme tcp"));
    assert_int_equal(verify(&x, code), -1);
    assert_string_equal(code, "bad-field");
    x.canon.path = (char *)"";
    x.canon.scheme = (char *)"https";
    assert_int_equal(sworn_frame_check_entry(&x.e), -1);
    assert_int_equal(verify(&x, code), -1);
    x.canon.scheme = (char *)"udp";
    assert_int_equal(verify(&x, code), -1);
    assert_string_equal(code, "bad-field");
}

static void expect_raw(const Sworn__V1__DecisionRecord *d, const char *text)
{
    uint8_t h[32];

    SHA256((const unsigned char *)text, strlen(text), h);
    assert_int_equal(d->raw_target_sha256.len, 32);
    assert_memory_equal(d->raw_target_sha256.data, h, 32);
}

static void test_stack_records(void **state)
{
    static const char *const paths[] = {"/allowed/x", "/allowed/%2e%2E/denied/./x", "/allowed%2fx",
                                        "/allowed/%7e", "/allowed/x;jsessionid=%7e1"};
    static const Sworn__V1__Effect effects[] = {
        SWORN__V1__EFFECT__EFFECT_ALLOW, SWORN__V1__EFFECT__EFFECT_DENY,
        SWORN__V1__EFFECT__EFFECT_DENY, SWORN__V1__EFFECT__EFFECT_ALLOW,
        SWORN__V1__EFFECT__EFFECT_DENY};
    /* The last has a canonical form (with its parameters) that the sample policy, where no
     * rule has path_parameters: true, refuses before any rule. */
    static const char *const canon[] = {"/allowed/x", "/denied/x", NULL, "/allowed/~",
                                        "/allowed/x;jsessionid=~1"};
    const size_t n_paths = sizeof(paths) / sizeof(paths[0]);
    struct sworn_stack s;
    Sworn__V1__AdminResponse *t;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    for (size_t i = 0; i < n_paths; i++) {
        char id[32];
        Sworn__V1__DecisionReply *r;
        Sworn__V1__Decision *d;

        snprintf(id, sizeof(id), "canon-%zu", i);
        r = sworn_stack_decide_path(&s, id, paths[i]);
        d = sworn_stack_expect_decision(r, effects[i]);
        if (i == 1)
            assert_string_equal(d->rule_id, "demo-denied");
        if (i == 2) {
            assert_string_equal(d->rule_id, "");
            assert_non_null(strstr(d->reason, "the resource is refused: an encoded '/'"));
        }
        if (i == 4) {
            assert_string_equal(d->rule_id, "");
            assert_non_null(strstr(d->reason, "the resource is refused: a ';' in the path"));
        }
        sworn__v1__decision_reply__free_unpacked(r, NULL);
    }
    t = sworn_stack_tail(&s, (uint32_t)n_paths);
    assert_int_equal(t->tail->n_entries, n_paths);
    for (size_t i = 0; i < n_paths; i++) {
        const Sworn__V1__Entry *e = t->tail->entries[i];
        const Sworn__V1__DecisionRecord *d;
        char raw[600], code[32], why[512];
        struct sv_entry_info info;
        size_t n = sworn__v1__entry__get_packed_size(e);
        uint8_t *b = malloc(n);

        assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
        d = e->decision;
        /* The request as received, its digest, and the canonical form. */
        assert_string_equal(d->request->resource->path, paths[i]);
        snprintf(raw, sizeof(raw), "http://127.0.0.1:8080%s", paths[i]);
        expect_raw(d, raw);
        if (canon[i] == NULL) {
            assert_null(d->canonical_resource);
        } else {
            assert_non_null(d->canonical_resource);
            assert_string_equal(d->canonical_resource->scheme, "http");
            assert_string_equal(d->canonical_resource->host, "127.0.0.1");
            assert_int_equal(d->canonical_resource->port, 8080);
            assert_string_equal(d->canonical_resource->path, canon[i]);
        }
        assert_non_null(b);
        sworn__v1__entry__pack(e, b);
        if (sv_entry_check(b, n, &info, code, why) != 0)
            fail_msg("the verifier refuses entry %zu: %s %s", i, code, why);
        free(b);
    }
    sworn__v1__admin_response__free_unpacked(t, NULL);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* Request id for scheme tcp (operation tcp.connect) to 127.0.0.1:port, no path, no context. */
static Sworn__V1__DecisionReply *decide_tcp(struct sworn_stack *s, const char *id, uint32_t port)
{
    struct sworn_stack_req q;

    sworn_stack_req_init(&q, id, "agent-1", "");
    q.req.operation = "tcp.connect";
    q.resource.scheme = "tcp";
    q.resource.port = port;
    q.req.context = NULL;
    return sworn_stack_decide(s, &q);
}

/*
 * Raw tunnels through a real stack: an allow naming tcp allows and records the canonical form
 * (scheme tcp, no path); an allow without schemes does not match tcp (default deny); an allow
 * naming tcp with a credential is a deny, the credential not released (the vault never puts one
 * into a raw tunnel, even where its destination's host and port match); the verifier accepts
 * every entry.
 */
static void test_stack_tcp(void **state)
{
    static const char policy[] = "rules:\n"
                                 "  - id: db\n"
                                 "    effect: allow\n"
                                 "    resource: {schemes: [tcp], ports: [5432]}\n"
                                 "  - id: tunnel-cred\n"
                                 "    effect: allow\n"
                                 "    credential: demo\n"
                                 "    resource: {schemes: [tcp], ports: [8080]}\n"
                                 "  - id: web\n"
                                 "    effect: allow\n";
    struct sworn_stack s;
    Sworn__V1__DecisionReply *r;
    Sworn__V1__Decision *d;
    Sworn__V1__AdminResponse *t;
    char options[1024], *path, *dir = sworn_test_tmpdir("tcp-policy");

    (void)state;
    path = sworn_test_path(dir, "policy.yaml");
    sworn_test_write_file(path, policy, strlen(policy), 0600);
    snprintf(options, sizeof(options), "--no-tpm --file-key --policy %s", path);
    assert_int_equal(sworn_stack_up(&s, options), 0);
    r = decide_tcp(&s, "tcp-db", 5432);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_string_equal(d->rule_id, "db");
    assert_null(d->credential);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    r = decide_tcp(&s, "tcp-other", 22);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(d->rule_id, "");
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    r = decide_tcp(&s, "tcp-cred", 8080);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_null(d->credential);
    assert_non_null(strstr(d->reason, "credential demo not released: a credential is never "
                                      "injected into a raw TCP tunnel"));
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* The same host and port over http: the vault's destination, so the web rule allows. */
    sworn_stack_expect_path(&s, "http-web", "/with-credential/x", SWORN__V1__EFFECT__EFFECT_ALLOW);
    t = sworn_stack_tail(&s, 4);
    assert_int_equal(t->tail->n_entries, 4);
    for (size_t i = 0; i < 4; i++) {
        const Sworn__V1__DecisionRecord *rec = t->tail->entries[i]->decision;
        char code[32], why[512];
        struct sv_entry_info info;
        size_t n = sworn__v1__entry__get_packed_size(t->tail->entries[i]);
        uint8_t *b = malloc(n);

        assert_int_equal(t->tail->entries[i]->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
        assert_non_null(rec->canonical_resource);
        if (i < 3) {
            char raw[64];

            assert_string_equal(rec->request->operation, "tcp.connect");
            assert_string_equal(rec->canonical_resource->scheme, "tcp");
            assert_string_equal(rec->canonical_resource->path, "");
            assert_string_equal(rec->credential_id, "");
            snprintf(raw, sizeof(raw), "tcp://127.0.0.1:%u",
                     (unsigned)rec->request->resource->port);
            expect_raw(rec, raw);
        }
        assert_non_null(b);
        sworn__v1__entry__pack(t->tail->entries[i], b);
        if (sv_entry_check(b, n, &info, code, why) != 0)
            fail_msg("the verifier refuses entry %zu: %s %s", i, code, why);
        free(b);
    }
    sworn__v1__admin_response__free_unpacked(t, NULL);
    assert_int_equal(sworn_stack_down(&s), 0);
    sworn_test_rmtree(dir);
    free(path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_checks),
        cmocka_unit_test(test_stack_records),
        cmocka_unit_test(test_stack_tcp),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
