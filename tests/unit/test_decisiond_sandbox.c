/*
 * test_decisiond_sandbox.c -- sworn-run's sandboxes through a real dev stack (scripts/dev-stack:
 * decisiond, SoftHSM, the log): the admin calls sandbox_start and sandbox_end, the running set,
 * and the deny of a request whose Principal.sandbox_start_index names no running sandbox of its
 * principal and name (docs/decisiond.md, "Sandboxes").
 *
 * Evidence:
 *   1. A start is recorded (SandboxStarted, with the admin peer's user name as operator and
 *      decisiond's time) and answered with its index; a request naming it, of its principal and
 *      name, is decided by the policy (an allow).
 *   2. Index 0 is no sandbox (the policy decides); an index of another kind of entry, an index
 *      past the log, another principal, another name, and an ended sandbox are each a recorded
 *      DENY, rule "", with the reason saying which.
 *   3. An end with another sandbox_id is refused (nothing recorded); the end is recorded once; a
 *      second end, an end of an entry that is no start and an end past the log are refused with
 *      their messages.
 *   4. An escalated request of a sandbox that ends while it is held: its approval is a deny.
 *   5. After a restart the running set is rebuilt from the log: a started sandbox is still
 *      admitted, an ended one still denied.
 *   6. The auditor's verifier accepts the whole record (check `sandboxes` among the others).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "frame.h"
#include "stack_fixture.h"
#include "testutil.h"

#define AGENT_UID 200000u /* the agent uid of every start recorded here */
#include "verify_fixture.h"

/* A sandbox's start as sworn-run sends it. */
struct start_msg {
    Sworn__V1__AdminRequest rq;
    Sworn__V1__SandboxStartRequest sr;
    Sworn__V1__SandboxStarted st;
    Sworn__V1__SandboxLimits lim;
    char *argv[2];
    uint8_t id[16], config[32];
};

static void start_init(struct start_msg *m, const char *principal, const char *name, uint8_t tag)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__SandboxStartRequest sr = SWORN__V1__SANDBOX_START_REQUEST__INIT;
    Sworn__V1__SandboxStarted st = SWORN__V1__SANDBOX_STARTED__INIT;
    Sworn__V1__SandboxLimits lim = SWORN__V1__SANDBOX_LIMITS__INIT;

    m->rq = rq;
    m->sr = sr;
    m->st = st;
    m->lim = lim;
    memset(m->id, tag, sizeof(m->id));
    memset(m->config, 0xc0, sizeof(m->config));
    m->argv[0] = "/bin/sh";
    m->argv[1] = "agent.sh";
    m->st.principal = (char *)principal;
    m->st.name = (char *)name;
    m->st.sandbox_id.data = m->id;
    m->st.sandbox_id.len = sizeof(m->id);
    m->st.command = m->argv;
    m->st.n_command = 2;
    m->lim.wall_ms = 60000;
    m->lim.memory_bytes = 512u << 20;
    m->lim.processes = 64;
    m->lim.enforced_by = "rlimit";
    m->st.limits = &m->lim;
    m->st.config_sha256.data = m->config;
    m->st.config_sha256.len = sizeof(m->config);
    m->st.agent_uid = AGENT_UID;
    m->st.isolation = "unprivileged";
    m->st.operator_ = "";
    m->sr.started = &m->st;
    m->rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_START;
    m->rq.sandbox_start = &m->sr;
}

/* Start a sandbox; returns its SandboxStarted entry's index. */
static uint64_t start_sandbox(struct sworn_stack *s, const char *principal, const char *name,
                              uint8_t tag)
{
    struct start_msg m;
    Sworn__V1__AdminResponse *r;
    uint64_t index;

    start_init(&m, principal, name, tag);
    r = sworn_stack_admin(s, &m.rq);
    assert_non_null(r);
    if (r->body_case != SWORN__V1__ADMIN_RESPONSE__BODY_SANDBOX)
        fail_msg("sandbox_start: %s", r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR
                                          ? r->error->message
                                          : "not a SandboxResponse");
    index = r->sandbox->log_index;
    assert_true(index > 0);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return index;
}

/*
 * End the sandbox started at start_index with id tag: NULL want_error, it must be recorded
 * (returns the SandboxEnded entry's index); else it must be refused with code and a message
 * holding want_error (returns 0).
 */
static uint64_t end_sandbox(struct sworn_stack *s, uint64_t start_index, uint8_t tag, int code,
                            const char *want_error)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__SandboxEndRequest er = SWORN__V1__SANDBOX_END_REQUEST__INIT;
    Sworn__V1__SandboxEnded en = SWORN__V1__SANDBOX_ENDED__INIT;
    Sworn__V1__AdminResponse *r;
    uint8_t id[16];
    uint64_t index = 0;

    memset(id, tag, sizeof(id));
    en.start_index = start_index;
    en.sandbox_id.data = id;
    en.sandbox_id.len = sizeof(id);
    en.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED;
    en.code = 0;
    en.duration_ms = 1500;
    en.operator_ = "";
    er.ended = &en;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_END;
    rq.sandbox_end = &er;
    r = sworn_stack_admin(s, &rq);
    assert_non_null(r);
    if (want_error == NULL) {
        if (r->body_case != SWORN__V1__ADMIN_RESPONSE__BODY_SANDBOX)
            fail_msg("sandbox_end: %s", r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR
                                            ? r->error->message
                                            : "not a SandboxResponse");
        index = r->sandbox->log_index;
    } else {
        assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_ERROR);
        assert_int_equal(r->error->code, code);
        if (strstr(r->error->message, want_error) == NULL)
            fail_msg("sandbox_end: expected \"%s\", got \"%s\"", want_error, r->error->message);
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return index;
}

/* A request of principal and sandbox name naming the start at index, for path. */
static void sandbox_req(struct sworn_stack_req *q, const char *id, const char *principal,
                        const char *name, uint64_t index, const char *path)
{
    sworn_stack_req_init(q, id, principal, path);
    q->principal.sandbox = (char *)name;
    q->principal.sandbox_start_index = index;
    q->principal.uid = AGENT_UID; /* the uid every start here records */
}

/* Decide the request and expect effect; for a deny, a reason holding why (NULL: any), rule "". */
static void expect(struct sworn_stack *s, struct sworn_stack_req *q, Sworn__V1__Effect effect,
                   const char *why)
{
    Sworn__V1__DecisionReply *r = sworn_stack_decide(s, q);
    Sworn__V1__Decision *d = sworn_stack_expect_decision(r, effect);

    if (why != NULL) {
        if (strstr(d->reason, why) == NULL)
            fail_msg("%s: expected a reason with \"%s\", got \"%s\"", q->id, why, d->reason);
        assert_string_equal(d->rule_id, "");
        assert_null(d->receipt);
    }
    sworn__v1__decision_reply__free_unpacked(r, NULL);
}

/* The auditor's verifier accepts the (stopped) stack's record: every check passes. */
static void expect_verified(struct sworn_stack *s)
{
    json_object *rep;

    sworn_stack_dev_trust(s);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), s->dir, "trust.txt", "tiles", NULL,
                            0, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_pass(rep, "sandboxes");
    json_object_put(rep);
}

static void test_sandboxes(void **state)
{
    struct sworn_stack s;
    struct sworn_stack_req q;
    Sworn__V1__AdminResponse *tail;
    const Sworn__V1__Entry *e;
    struct passwd *pw = getpwuid(getuid());
    uint64_t a, b, end_a, past;
    char why[128];
    int held_fd;

    (void)state;
    assert_non_null(pw);
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);

    /* 1. A start, recorded with the operator and decisiond's time, then a request of it. */
    a = start_sandbox(&s, "agent-1", "sb-a", 0xaa);
    e = sworn_stack_entry_at(&s, a, 200, &tail);
    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_SANDBOX_STARTED);
    assert_string_equal(e->sandbox_started->operator_, pw->pw_name);
    assert_true(e->sandbox_started->time_unix_ms > 0);
    assert_string_equal(e->sandbox_started->name, "sb-a");
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    sandbox_req(&q, "sb-allow-1", "agent-1", "sb-a", a, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_ALLOW, NULL);

    /* 2. Index 0 is no sandbox: the policy decides, whatever the name says. */
    sandbox_req(&q, "sb-zero", "agent-1", "anything", 0, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_ALLOW, NULL);
    /* An index of another kind of entry (1: the start's PolicyLoaded), one past the log. */
    sandbox_req(&q, "sb-kind", "agent-1", "sb-a", 1, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_DENY,
           "denied: sandbox_start_index 1 names no running sandbox");
    past = a + 1000;
    sandbox_req(&q, "sb-past", "agent-1", "sb-a", past, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_DENY, "names no running sandbox");
    /* Another principal, another name. */
    snprintf(why, sizeof(why), "runs as principal agent-1, not the request's");
    sandbox_req(&q, "sb-principal", "agent-2", "sb-a", a, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_DENY, why);
    snprintf(why, sizeof(why), "is named sb-a, not the request's sandbox");
    sandbox_req(&q, "sb-name", "agent-1", "sb-b", a, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_DENY, why);
    /* Another agent uid than the start recorded: a hello speaking for the sandbox as another. */
    snprintf(why, sizeof(why), "runs as uid %u, not the request's uid 4242", AGENT_UID);
    sandbox_req(&q, "sb-uid", "agent-1", "sb-a", a, "/allowed/x");
    q.principal.uid = 4242;
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_DENY, why);

    /* 4. An escalation of the sandbox, held while the sandbox ends. */
    {
        uint8_t *frame;
        size_t len;

        sandbox_req(&q, "sb-held", "agent-1", "sb-a", a, "/escalate/x");
        assert_int_equal(sworn_frame_pack_authorize(&q.req, &frame, &len), 0);
        held_fd = sworn_stack_connect(s.decision);
        assert_true(held_fd >= 0);
        assert_int_equal(write(held_fd, frame, len), (ssize_t)len);
        free(frame);
    }
    /* The escalate entry is recorded before it is held: once listed, it is in the log (the
     * fixture's own wait for a held escalation, as sworn_stack_escalate does). */
    for (int i = 0; i < 250 && sworn_stack_pending(&s) < 1; i++)
        sworn_test_sleep_ms(20);
    assert_true(sworn_stack_index_of(&s, "sb-held") > a);

    /* 3. Ends: another sandbox_id refused, then the end, then every repeat refused. */
    end_sandbox(&s, a, 0xab, SWORN_ERR_VERIFY, "has another sandbox_id");
    end_a = end_sandbox(&s, a, 0xaa, 0, NULL);
    assert_true(end_a > a);
    e = sworn_stack_entry_at(&s, end_a, 200, &tail);
    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_SANDBOX_ENDED);
    assert_int_equal(e->sandbox_ended->start_index, a);
    assert_string_equal(e->sandbox_ended->operator_, pw->pw_name);
    assert_true(e->sandbox_ended->time_unix_ms > 0);
    sworn__v1__admin_response__free_unpacked(tail, NULL);
    snprintf(why, sizeof(why), "the sandbox started at log index %llu has ended",
             (unsigned long long)a);
    end_sandbox(&s, a, 0xaa, SWORN_ERR_NOTFOUND, why);
    end_sandbox(&s, 1, 0xaa, SWORN_ERR_NOTFOUND, "log index 1 is not a SandboxStarted entry");
    end_sandbox(&s, past, 0xaa, SWORN_ERR_NOTFOUND, "is past the end of the log");
    /* An ended sandbox's requests are denied. */
    sandbox_req(&q, "sb-after-end", "agent-1", "sb-a", a, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_DENY, "names no running sandbox");

    /* 4. The held request's approval comes after the end: a deny, and the proxy is told so. */
    {
        Sworn__V1__AdminResponse *r = sworn_stack_resolve(&s, "sb-held", 1);
        Sworn__V1__DecisionReply *rep;
        Sworn__V1__Decision *d;

        assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
        sworn__v1__admin_response__free_unpacked(r, NULL);
        rep = sworn_stack_read_reply(held_fd);
        assert_non_null(rep);
        d = sworn_stack_expect_decision(rep, SWORN__V1__EFFECT__EFFECT_DENY);
        assert_non_null(strstr(d->reason, "names no running sandbox"));
        sworn__v1__decision_reply__free_unpacked(rep, NULL);
    }

    /* 5. A second sandbox runs across a restart; the ended one stays ended. */
    b = start_sandbox(&s, "agent-1", "sb-b", 0xbb);
    sandbox_req(&q, "sb-b-1", "agent-1", "sb-b", b, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_ALLOW, NULL);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_stack_start(&s), 0);
    sandbox_req(&q, "sb-b-2", "agent-1", "sb-b", b, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_ALLOW, NULL);
    sandbox_req(&q, "sb-a-again", "agent-1", "sb-a", a, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_DENY, "names no running sandbox");
    end_sandbox(&s, a, 0xaa, SWORN_ERR_NOTFOUND, why);
    assert_true(end_sandbox(&s, b, 0xbb, 0, NULL) > b);
    sandbox_req(&q, "sb-b-3", "agent-1", "sb-b", b, "/allowed/x");
    expect(&s, &q, SWORN__V1__EFFECT__EFFECT_DENY, "names no running sandbox");

    /* 6. The record, as the auditor checks it. */
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    expect_verified(&s);
    assert_int_equal(sworn_stack_down(&s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sandboxes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
