/*
 * test_engine.c -- decisiond's decision logic driven in process (decisiond/d_local.h through
 * engine_fixture.h): the real policy engine, budgets, commit step, log and signer process, no
 * sockets and no daemon. Each answer is checked against the entry it was recorded as.
 *
 * Evidence:
 *   1. An allow: effect, rule, a receipt that verifies with the signer's key over the entry hash,
 *      and a DecisionRecord at the answer's index whose leaf hash is that hash.
 *   2. Denies: by a deny rule (deny overrides allow), and by no rule (default deny, rule ""),
 *      each recorded, without a receipt.
 *   3. A count budget: two allows, then a deny by the same rule, recorded; other principals
 *      keep their own count.
 *   4. An escalation: recorded as held and not answered; listed as pending; approved by the
 *      operator, answered as an allow with a receipt at the EscalationResolved entry the resolve
 *      call reported; a second one denied by the operator; resolving an unknown id fails.
 *   5. A request of the wrong shape never reaches the engine (the entry point refuses it).
 *   6. Measured start measures what is in force (finding 1 of the control-plane review), tested
 *      deterministically: after the configuration and the policy were parsed, and after the
 *      image and the signer program were opened, every one of them is replaced on disk (the
 *      configuration gains a proxy uid, the policy an allow-everything rule, the binaries are
 *      renamed over); the Startup entry written after that (d_startup_record) still records
 *      SHA-256 of the bytes that were parsed and of the files that were opened, each with its
 *      role, and the start's PolicyLoaded entry carries the measured policy digest. The code
 *      before the fix hashed the paths again and recorded the replacements
 *      (test_measure_what_is_in_force).
 */
#include <fcntl.h>
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

#include "d_daemon.h"
#include "d_escalate.h"
#include "d_local.h"
#include "d_timemark.h"
#include "engine_fixture.h"
#include "err.h"
#include "frame.h"
#include "merkle.h"
#include "sigscheme.h"
#include "stack_fixture.h"

static const char policy[] = "version: 7\n"
                             "rules:\n"
                             "  - id: allowed\n"
                             "    effect: allow\n"
                             "    resource: {hosts: [\"127.0.0.1\"], paths: [\"/allowed/**\"]}\n"
                             "  - id: no-secrets\n"
                             "    effect: deny\n"
                             "    reason: \"secrets are off limits\"\n"
                             "    resource: {paths: [\"/allowed/secret/**\"]}\n"
                             "  - id: metered\n"
                             "    effect: allow\n"
                             "    resource: {paths: [\"/metered/**\"]}\n"
                             "    budget: {count: 2, window: 366d, per: principal}\n"
                             "  - id: ask\n"
                             "    effect: escalate\n"
                             "    resource: {paths: [\"/escalate/**\"]}\n";

static int setup(void **state)
{
    struct sworn_engine *e = calloc(1, sizeof(*e));

    if (e == NULL || sworn_engine_up(e, policy) < 0) {
        free(e);
        return -1;
    }
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    sworn_engine_down(*state);
    free(*state);
    return 0;
}

/* The decision in r, with the given effect; its entry in the log is the DecisionRecord of req. */
static const Sworn__V1__Decision *expect(struct sworn_engine *e, const Sworn__V1__DecisionReply *r,
                                         Sworn__V1__Effect effect, const char *rule)
{
    const Sworn__V1__Decision *d;
    Sworn__V1__Entry *en;
    uint8_t buf[SWORN_FRAME_ENTRY_MAX], leaf[32];
    size_t len;

    assert_non_null(r);
    if (r->body_case != SWORN__V1__DECISION_REPLY__BODY_DECISION)
        fail_msg("expected a decision, got error %u: %s", r->error->code, r->error->message);
    d = r->decision;
    assert_int_equal(d->effect, effect);
    assert_string_equal(d->rule_id, rule);
    assert_int_equal(d->entry_hash.len, 32);
    assert_int_equal(sworn_log_read_entry(e->d->log, d->log_index, buf, sizeof(buf), &len), 0);
    sworn_merkle_leaf_hash(buf, len, leaf);
    assert_memory_equal(leaf, d->entry_hash.data, 32);
    en = sworn_engine_entry(e, d->log_index);
    if (en->kind_case == SWORN__V1__ENTRY__KIND_DECISION) {
        assert_string_equal(en->decision->request->request_id, d->request_id);
        assert_int_equal(en->decision->effect, effect);
        assert_string_equal(en->decision->rule_id, rule);
        assert_memory_equal(en->decision->policy_digest.data, e->d->policy_digest, 32);
    } else {
        assert_int_equal(en->kind_case, SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED);
        assert_string_equal(en->escalation_resolved->request_id, d->request_id);
        assert_int_equal(en->escalation_resolved->effect, effect);
    }
    if (effect == SWORN__V1__EFFECT__EFFECT_ALLOW) {
        size_t spki_len;
        const uint8_t *spki = sworn_signer_proc_spki(e->d->signer, &spki_len);
        Sworn__V1__Entry *held = NULL;
        const Sworn__V1__AuthorizationRequest *rq;
        uint64_t t;

        /* The receipt covers the request decided: for an approval, the escalated one. */
        if (en->kind_case == SWORN__V1__ENTRY__KIND_DECISION) {
            rq = en->decision->request;
            t = en->decision->time_unix_ms;
        } else {
            held = sworn_engine_entry(e, en->escalation_resolved->escalation_index);
            rq = held->decision->request;
            t = en->escalation_resolved->time_unix_ms;
        }
        assert_non_null(d->receipt);
        assert_memory_equal(d->receipt->key_id.data, e->d->key_id, 32);
        assert_int_equal(
            sworn_test_receipt_verify(spki, spki_len, d->receipt, d->entry_hash.data, rq, t), 0);
        if (held != NULL)
            sworn__v1__entry__free_unpacked(held, NULL);
    } else {
        assert_null(d->receipt);
    }
    sworn__v1__entry__free_unpacked(en, NULL);
    return d;
}

static void test_allow(void **state)
{
    struct sworn_engine *e = *state;
    struct sworn_stack_req q;
    Sworn__V1__DecisionReply *r;
    uint64_t before = sworn_log_size(e->d->log);

    sworn_stack_req_init(&q, "allow-1", "agent-1", "/allowed/x");
    r = sworn_engine_decide(e, &q.req);
    expect(e, r, SWORN__V1__EFFECT__EFFECT_ALLOW, "allowed");
    assert_int_equal(r->decision->log_index, before);
    assert_int_equal(sworn_log_size(e->d->log), before + 1);
    assert_null(r->decision->credential);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
}

static void test_deny(void **state)
{
    struct sworn_engine *e = *state;
    struct sworn_stack_req q;
    Sworn__V1__DecisionReply *r;

    /* A deny rule overrides the allow that matches too. */
    sworn_stack_req_init(&q, "deny-1", "agent-1", "/allowed/secret/key");
    r = sworn_engine_decide(e, &q.req);
    expect(e, r, SWORN__V1__EFFECT__EFFECT_DENY, "no-secrets");
    assert_string_equal(r->decision->reason, "secrets are off limits");
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* No rule: the default deny, recorded too. */
    sworn_stack_req_init(&q, "deny-2", "agent-1", "/elsewhere");
    r = sworn_engine_decide(e, &q.req);
    expect(e, r, SWORN__V1__EFFECT__EFFECT_DENY, "");
    sworn__v1__decision_reply__free_unpacked(r, NULL);
}

static void test_budget(void **state)
{
    struct sworn_engine *e = *state;
    struct sworn_stack_req q;
    Sworn__V1__DecisionReply *r;
    char id[32];

    for (int i = 0; i < 2; i++) {
        snprintf(id, sizeof(id), "metered-%d", i);
        sworn_stack_req_init(&q, id, "agent-1", "/metered/x");
        r = sworn_engine_decide(e, &q.req);
        expect(e, r, SWORN__V1__EFFECT__EFFECT_ALLOW, "metered");
        sworn__v1__decision_reply__free_unpacked(r, NULL);
    }
    sworn_stack_req_init(&q, "metered-2", "agent-1", "/metered/x");
    r = sworn_engine_decide(e, &q.req);
    expect(e, r, SWORN__V1__EFFECT__EFFECT_DENY, "metered");
    assert_non_null(strstr(r->decision->reason, "budget"));
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* Another principal has its own count. */
    sworn_stack_req_init(&q, "metered-other", "agent-2", "/metered/x");
    r = sworn_engine_decide(e, &q.req);
    expect(e, r, SWORN__V1__EFFECT__EFFECT_ALLOW, "metered");
    sworn__v1__decision_reply__free_unpacked(r, NULL);
}

static int held_one(void *arg)
{
    return d_escalations_pending(((struct sworn_engine *)arg)->d->esc) == 1;
}

/* The engine's admin call as the stack fixture's listing takes it. */
static Sworn__V1__AdminResponse *engine_admin(void *arg, const Sworn__V1__AdminRequest *rq)
{
    return sworn_engine_admin(arg, rq);
}

static unsigned pending(struct sworn_engine *e)
{
    return (unsigned)sworn_stack_list_all(engine_admin, e, NULL, NULL);
}

/* Until the escalation is recorded and held (the engine's loop runs the commit's completion). */
static void wait_held(struct sworn_engine *e, const struct sworn_engine_call *held)
{
    sworn_engine_run_until(e, held_one, e);
    assert_int_equal(pending(e), 1);
    assert_false(held->done);
}

/* The log index of the held request id's escalate entry, read from a listing. */
static uint64_t index_of(struct sworn_engine *e, const char *id)
{
    return sworn_stack_held_index(engine_admin, e, id);
}

/* Resolve the escalation held at log index. */
static Sworn__V1__AdminResponse *resolve_at(struct sworn_engine *e, uint64_t index, int approve)
{
    struct sworn_stack_admin_msg m;

    sworn_stack_resolve_msg(&m, index, approve);
    return sworn_engine_admin(e, &m.rq);
}

/* Resolve the held request id by its escalate entry's log index. */
static Sworn__V1__AdminResponse *resolve(struct sworn_engine *e, const char *id, int approve)
{
    return resolve_at(e, index_of(e, id), approve);
}

static void test_escalation_resolved(void **state)
{
    struct sworn_engine *e = *state;
    struct sworn_stack_req q;
    struct sworn_engine_call held;
    Sworn__V1__AdminResponse *ar;
    const Sworn__V1__Decision *d;
    Sworn__V1__Entry *en;
    uint64_t escalated_at = sworn_log_size(e->d->log), esc2;

    sworn_stack_req_init(&q, "esc-1", "agent-1", "/escalate/x");
    sworn_engine_submit(e, &q.req, &held);
    /* Recorded as held before anything else happens; no answer yet. */
    wait_held(e, &held);
    assert_int_equal(pending(e), 1);
    en = sworn_engine_entry(e, escalated_at);
    assert_int_equal(en->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
    assert_int_equal(en->decision->effect, SWORN__V1__EFFECT__EFFECT_ESCALATE);
    assert_string_equal(en->decision->rule_id, "ask");
    sworn__v1__entry__free_unpacked(en, NULL);

    /* The operator approves: the resolve call reports the EscalationResolved entry, and the held
     * request is answered with an allow at that entry, with a receipt. */
    ar = resolve(e, "esc-1", 1);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
    sworn_engine_wait(e, &held);
    d = expect(e, held.reply, SWORN__V1__EFFECT__EFFECT_ALLOW, "ask");
    assert_int_equal(d->log_index, ar->resolve->log_index);
    assert_string_equal(d->reason, "checked by the test");
    en = sworn_engine_entry(e, d->log_index);
    assert_non_null(en->escalation_resolved->operator_);
    assert_true(en->escalation_resolved->operator_[0] != '\0');
    sworn__v1__entry__free_unpacked(en, NULL);
    assert_int_equal(pending(e), 0);
    sworn__v1__decision_reply__free_unpacked(held.reply, NULL);
    sworn__v1__admin_response__free_unpacked(ar, NULL);

    /* A second one, denied by the operator: a deny without a receipt. */
    sworn_stack_req_init(&q, "esc-2", "agent-1", "/escalate/y");
    sworn_engine_submit(e, &q.req, &held);
    wait_held(e, &held);
    esc2 = index_of(e, "esc-2");
    ar = resolve_at(e, esc2, 0);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
    sworn_engine_wait(e, &held);
    d = expect(e, held.reply, SWORN__V1__EFFECT__EFFECT_DENY, "ask");
    assert_int_equal(d->log_index, ar->resolve->log_index);
    sworn__v1__decision_reply__free_unpacked(held.reply, NULL);
    sworn__v1__admin_response__free_unpacked(ar, NULL);

    /* Nothing is held at that index any more. */
    ar = resolve_at(e, esc2, 1);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_ERROR);
    assert_int_equal(ar->error->code, SWORN_ERR_NOTFOUND);
    sworn__v1__admin_response__free_unpacked(ar, NULL);
}

static void test_wrong_shape(void **state)
{
    struct sworn_engine *e = *state;
    struct sworn_stack_req q;
    Sworn__V1__DecisionRequest m = SWORN__V1__DECISION_REQUEST__INIT;
    uint64_t before = sworn_log_size(e->d->log);
    int called = 0;

    sworn_stack_req_init(&q, "bad-port", "agent-1", "/allowed/x");
    q.resource.port = 0;
    m.body_case = SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE;
    m.authorize = &q.req;
    assert_int_equal(d_local_decide(e->d, &m, 0, NULL, &called), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(sworn_log_size(e->d->log), before);
}

/* SHA-256 of the file at path now. */
static void sha256_file(const char *path, uint8_t out[32])
{
    size_t len = 0;
    char *bytes = sworn_test_read_file(path, &len);

    SHA256((const uint8_t *)bytes, len, out);
    free(bytes);
}

/* Copy src to dst (mode 0700) and open dst read-only; returns the fd. */
static int copy_and_open(const char *src, const char *dst)
{
    size_t len = 0;
    char *bytes = sworn_test_read_file(src, &len);
    int fd;

    sworn_test_write_file(dst, bytes, len, 0700);
    free(bytes);
    fd = open(dst, O_RDONLY | O_CLOEXEC);
    assert_true(fd > 0);
    return fd;
}

/* Replace path by a new file with text (a rename: the old file lives on where it is open). */
static void swap_in(const char *dir, const char *path, const char *text)
{
    char *tmp = sworn_test_path(dir, "swap.tmp");

    sworn_test_write_file(tmp, text, strlen(text), 0700);
    assert_int_equal(rename(tmp, path), 0);
    free(tmp);
}

/* The file of role in Startup entry st; fails the test unless there is exactly one. */
static const Sworn__V1__MeasuredFile *role_file(const Sworn__V1__StartupMeasurement *st,
                                                Sworn__V1__MeasuredRole role)
{
    const Sworn__V1__MeasuredFile *f = NULL;

    for (size_t i = 0; i < st->n_files; i++)
        if (st->files[i]->role == role) {
            assert_null(f);
            f = st->files[i];
        }
    assert_non_null(f);
    assert_int_equal(f->sha256.len, 32);
    return f;
}

static void test_measure_what_is_in_force(void **state)
{
    struct sworn_engine *e = *state;
    struct d_daemon *d = e->d;
    char *image = sworn_test_path(e->dir, "sworn-decisiond"),
         *signer = sworn_test_path(e->dir, "sworn-signer"), *cfg_text;
    uint8_t want_cfg[32], want_policy[32], want_image[32], want_signer[32];
    const Sworn__V1__MeasuredFile *f;
    uint64_t first = sworn_log_size(d->log);
    Sworn__V1__Entry *en;
    size_t cfg_len = 0;

    /* What is in force: the bytes parsed at sworn_engine_up, and two programs opened now, as the
     * engine opens /proc/self/exe and the monitor the signer program at start. */
    cfg_text = sworn_test_read_file(d->cfg->path, &cfg_len);
    SHA256((const uint8_t *)cfg_text, cfg_len, want_cfg);
    SHA256((const uint8_t *)policy, strlen(policy), want_policy);
    d->exe_fd = copy_and_open("/proc/self/exe", image);
    d->self_exe = image;
    d->signer_program_fd = copy_and_open(d->cfg->signer_program, signer);
    sha256_file(image, want_image);
    sha256_file(signer, want_signer);
    assert_memory_equal(d->cfg->digest, want_cfg, 32);
    assert_memory_equal(d->policy_digest, want_policy, 32);

    /* Every one replaced on disk before the measurement: a proxy uid added, a policy that
     * allows everything, other programs under the same names. */
    {
        char *more = malloc(cfg_len + 64);

        assert_non_null(more);
        memcpy(more, cfg_text, cfg_len);
        snprintf(more + cfg_len, 64, "# swapped\n");
        swap_in(e->dir, d->cfg->path, more);
        free(more);
    }
    swap_in(e->dir, d->cfg->policy_path,
            "version: 8\nrules:\n  - id: all\n    effect: allow\n    resource: {paths: "
            "[\"/**\"]}\n");
    swap_in(e->dir, image, "#!/bin/sh\nexit 0\n");
    swap_in(e->dir, signer, "#!/bin/sh\nexit 1\n");

    assert_int_equal(d_startup_record(d), 0);
    en = sworn_engine_entry(e, first);
    assert_int_equal(en->kind_case, SWORN__V1__ENTRY__KIND_STARTUP);
    f = role_file(en->startup, SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE);
    assert_string_equal(f->path, image);
    assert_memory_equal(f->sha256.data, want_image, 32);
    f = role_file(en->startup, SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_SIGNER);
    assert_memory_equal(f->sha256.data, want_signer, 32);
    f = role_file(en->startup, SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_CONFIG);
    assert_memory_equal(f->sha256.data, want_cfg, 32);
    f = role_file(en->startup, SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY);
    assert_string_equal(f->path, d->cfg->policy_path);
    assert_memory_equal(f->sha256.data, want_policy, 32);
    /* The order PCR 23 is extended in: image, signer, configuration, policy. */
    assert_int_equal(en->startup->n_files, 4);
    assert_int_equal(en->startup->files[0]->role,
                     SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE);
    assert_int_equal(en->startup->files[3]->role, SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY);
    sworn__v1__entry__free_unpacked(en, NULL);
    /* The start's own PolicyLoaded entry names the same policy: the one deciding. */
    en = sworn_engine_entry(e, first + 1);
    assert_int_equal(en->kind_case, SWORN__V1__ENTRY__KIND_POLICY_LOADED);
    assert_memory_equal(en->policy_loaded->digest.data, want_policy, 32);
    assert_string_equal(en->policy_loaded->error, "");
    sworn__v1__entry__free_unpacked(en, NULL);
    close(d->exe_fd);
    close(d->signer_program_fd);
    d->self_exe = NULL;
    free(cfg_text);
    free(image);
    free(signer);
}

/* Pack e (unchecked: the layouts a hostile or older log may hold too). */
static size_t pack_raw(const Sworn__V1__Entry *e, uint8_t *buf)
{
    assert_true(protobuf_c_message_get_packed_size(&e->base) <= 4096);
    return protobuf_c_message_pack(&e->base, buf);
}

/* d_entry_time_bytes's answer for buf, against d_entry_time's on the unpacked entry. */
static void same_time(const uint8_t *buf, size_t len, int read)
{
    Sworn__V1__Entry *u = sworn__v1__entry__unpack(NULL, len, buf);
    uint64_t t = 7, want = 0;
    int has = 7;

    assert_non_null(u);
    assert_int_equal(d_entry_time_bytes(buf, len, &t, &has), read ? 0 : -1);
    if (read) {
        assert_int_equal(has, d_entry_time(u, &want));
        assert_true(t == want);
    }
    sworn__v1__entry__free_unpacked(u, NULL);
}

/*
 * The stamp of a decision's or a resolution's entry read from its bytes (d_entry_time_bytes, the
 * append's fast path) is d_entry_time's of the unpacked entry: with the time, without it, with
 * a time of 0 (a resolution from before the field: no stamp), with a large time (a 10-byte
 * varint) and after nested fields; other kinds, two kinds, and cut or garbled bytes are left to
 * the unpack (-1).
 */
static void test_entry_time_bytes(void **state)
{
    static uint8_t buf[4096];
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord r = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__EscalationResolved er = SWORN__V1__ESCALATION_RESOLVED__INIT;
    Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;
    Sworn__V1__AuthorizationRequest req = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource res = SWORN__V1__RESOURCE__INIT;
    uint8_t digest[32] = {1};
    uint64_t t;
    size_t len;
    int has;

    (void)state;
    req.request_id = (char *)"r1";
    req.operation = (char *)"http.request";
    req.principal = &pr;
    pr.id = (char *)"agent-1";
    req.resource = &res;
    res.scheme = (char *)"https";
    res.host = (char *)"api.example.com";
    res.port = 443;
    res.path = (char *)"/x";
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &r;
    r.request = &req;
    r.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    r.rule_id = (char *)"rule";
    r.reason = (char *)"allowed";
    r.policy_digest.data = digest;
    r.policy_digest.len = 32;
    same_time(buf, pack_raw(&e, buf), 1); /* no time: stamped 0 */
    r.time_unix_ms = 1772409600123ull;
    len = pack_raw(&e, buf);
    same_time(buf, len, 1);
    assert_int_equal(d_entry_time_bytes(buf, len, &t, &has), 0);
    assert_true(t == 1772409600123ull && has == 1);
    r.time_unix_ms = UINT64_MAX;
    same_time(buf, pack_raw(&e, buf), 1);
    /* Cut anywhere: never read (the unpack then refuses it). */
    r.time_unix_ms = 1772409600123ull;
    len = pack_raw(&e, buf);
    for (size_t cut = 0; cut < len; cut++)
        assert_int_equal(d_entry_time_bytes(buf, cut, &t, &has), -1);
    /* Two fields at the top: left to the unpack. */
    memcpy(buf + len, buf, len);
    assert_int_equal(d_entry_time_bytes(buf, 2 * len, &t, &has), -1);

    e.kind_case = SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED;
    e.escalation_resolved = &er;
    er.request_id = (char *)"r1";
    er.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    er.operator_ = (char *)"op";
    er.reason = (char *)"approved";
    er.escalation_hash.data = digest;
    er.escalation_hash.len = 32;
    er.escalation_index = 3;
    same_time(buf, pack_raw(&e, buf), 1); /* time 0: no stamp */
    er.time_unix_ms = 1772409600456ull;
    same_time(buf, pack_raw(&e, buf), 1);

    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &pl;
    pl.source = (char *)"p.yaml";
    pl.digest.data = digest;
    pl.digest.len = 32;
    pl.time_unix_ms = 5;
    same_time(buf, pack_raw(&e, buf), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_time_bytes),
        cmocka_unit_test_setup_teardown(test_allow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deny, setup, teardown),
        cmocka_unit_test_setup_teardown(test_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_escalation_resolved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_measure_what_is_in_force, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
