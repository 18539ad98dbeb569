/*
 * engine_fixture.c -- decisiond's engine in process (engine_fixture.h).
 */
#include "engine_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/thread.h>
#include <openssl/sha.h>

#include "d_conn.h"
#include "d_daemon.h"
#include "d_escalate.h"
#include "d_sandboxes.h"
#include "d_local.h"
#include "err.h"
#include "frame.h"
#include "testutil.h"

#define ENGINE_WAIT_MS 60000

static int engine_fail(struct sworn_engine *e, const char *what)
{
    fprintf(stderr, "engine fixture: %s: %s\n", what, sworn_err_msg());
    sworn_engine_down(e);
    return -1;
}

int sworn_engine_up(struct sworn_engine *e, const char *policy_yaml)
{
    struct sworn_signer_config sc = {0};
    struct sworn_signer_proc_opts opts = {0};
    struct d_daemon *d;
    char *policy, *config, *key, *log_db, text[2048], cmd[1200];
    const uint8_t *spki;
    size_t spki_len;

    memset(e, 0, sizeof(*e));
    e->dir = sworn_test_tmpdir("engine");
    policy = sworn_test_path(e->dir, "policy.yaml");
    config = sworn_test_path(e->dir, "decisiond.yaml");
    key = sworn_test_path(e->dir, "signer.pem");
    log_db = sworn_test_path(e->dir, "log.db");
    sworn_test_write_file(policy, policy_yaml, strlen(policy_yaml), 0600);
    snprintf(cmd, sizeof(cmd),
             "openssl ecparam -name prime256v1 -genkey -noout -out %s 2>/dev/null && chmod 600 %s",
             key, key);
    assert_int_equal(system(cmd), 0);
    snprintf(text, sizeof(text),
             "log:\n  database: %s\n  origin: engine.sworn.example/test\n"
             "signer:\n  key: %s\npolicy: %s\nescalation:\n  timeout: 2m\n"
             "sockets:\n  decision: %s/decision.sock\n  admin: %s/admin.sock\n"
             "peers:\n  proxy_uids: [%u]\n  operator_uids: [%u]\nworkers: 2\n",
             log_db, key, policy, e->dir, e->dir, (unsigned)getuid(), (unsigned)getuid());
    sworn_test_write_file(config, text, strlen(text), 0600);
    free(policy);
    free(key);
    free(log_db);

    d = e->d = calloc(1, sizeof(*d)); /* large: it holds the recently-allowed table */
    assert_non_null(d);
    d_metrics_init(&d->metrics);
    assert_int_equal(d_timemark_init(&d->tm), 0);
    if (sworn_dconfig_load(config, &d->cfg) < 0 || sworn_dconfig_check(d->cfg) < 0) {
        free(config);
        return engine_fail(e, "configuration");
    }
    free(config);
    if (sworn_policy_load_file(d->cfg->policy_path, &d->policy) < 0)
        return engine_fail(e, "policy");
    sworn_policy_digest(d->policy, d->policy_digest);
    if (sworn_budgets_new(&d->budgets) < 0)
        return engine_fail(e, "budgets");
    sc.uri = d->cfg->signer_key;
    if (sworn_signer_proc_start(&sc, &opts, &d->signer) < 0)
        return engine_fail(e, "signer");
    spki = sworn_signer_proc_spki(d->signer, &spki_len);
    SHA256(spki, spki_len, d->key_id);
    if (sworn_log_create(d->cfg->log_db, d->cfg->origin, &d->log) < 0)
        return engine_fail(e, "log");
    if (evthread_use_pthreads() != 0 || (d->base = event_base_new()) == NULL) {
        sworn_err_set(SWORN_ERR_IO, "libevent could not start");
        return engine_fail(e, "event loop");
    }
    if (d_sandboxes_new(&d->sandboxes) < 0)
        return engine_fail(e, "sandboxes");
    if (d_escalations_new(d, &d->esc) < 0 || d_workq_start(d->base, d->cfg->workers, &d->workq) < 0)
        return engine_fail(e, "workers");
    return 0;
}

void sworn_engine_down(struct sworn_engine *e)
{
    struct d_daemon *d = e->d;

    if (d != NULL) {
        if (d->esc != NULL)
            d_escalations_deny_all(d, "denied: the test engine is stopping");
        d_workq_stop(d->workq); /* every job's completion runs, answers included */
        d->workq = NULL;
        d_escalations_free(d->esc);
        d_sandboxes_free(d->sandboxes);
        d_conn_close_all(d);
        sworn_log_close(d->log);
        sworn_signer_proc_stop(d->signer);
        sworn_budgets_free(d->budgets);
        sworn_policy_free(d->policy);
        if (d->base != NULL)
            event_base_free(d->base);
        sworn_dconfig_free(d->cfg);
        d_timemark_destroy(&d->tm);
        free(d);
    }
    if (e->dir != NULL) {
        sworn_test_rmtree(e->dir);
        free(e->dir);
    }
    memset(e, 0, sizeof(*e));
}

/* Copy r (valid only during the callback) by packing and unpacking it. */
static Sworn__V1__DecisionReply *reply_copy(const Sworn__V1__DecisionReply *r)
{
    size_t n = sworn__v1__decision_reply__get_packed_size(r);
    uint8_t *b = malloc(n + 1);
    Sworn__V1__DecisionReply *c;

    assert_non_null(b);
    sworn__v1__decision_reply__pack(r, b);
    c = sworn__v1__decision_reply__unpack(NULL, n, b);
    free(b);
    assert_non_null(c);
    return c;
}

static void on_decision(void *arg, const Sworn__V1__DecisionReply *r)
{
    struct sworn_engine_call *call = arg;

    assert_false(call->done); /* exactly one answer */
    call->reply = r != NULL ? reply_copy(r) : NULL;
    call->done = 1;
}

void sworn_engine_submit(struct sworn_engine *e, const Sworn__V1__AuthorizationRequest *req,
                         struct sworn_engine_call *call)
{
    Sworn__V1__DecisionRequest m = SWORN__V1__DECISION_REQUEST__INIT;

    memset(call, 0, sizeof(*call));
    m.body_case = SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE;
    m.authorize = (Sworn__V1__AuthorizationRequest *)req;
    if (d_local_decide(e->d, &m, getuid(), on_decision, call) < 0)
        fail_msg("d_local_decide: %s", sworn_err_msg());
}

void sworn_engine_wait(struct sworn_engine *e, struct sworn_engine_call *call)
{
    if (d_local_wait(e->d, &call->done, ENGINE_WAIT_MS) < 0)
        fail_msg("the engine did not answer: %s", sworn_err_msg());
}

void sworn_engine_run_until(struct sworn_engine *e, int (*done)(void *arg), void *arg)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!done(arg)) {
        /* Runs what is ready (a worker's completion), without blocking: a held escalation's
         * timer would otherwise keep a blocking round waiting for minutes. The worker's append
         * takes milliseconds, so the spin is short; the deadline bounds it. */
        event_base_loop(e->d->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > ENGINE_WAIT_MS / 1000)
            fail_msg("the engine did not get there within %d ms", ENGINE_WAIT_MS);
    }
}

Sworn__V1__DecisionReply *sworn_engine_decide(struct sworn_engine *e,
                                              const Sworn__V1__AuthorizationRequest *req)
{
    struct sworn_engine_call call;

    sworn_engine_submit(e, req, &call);
    sworn_engine_wait(e, &call);
    assert_non_null(call.reply);
    return call.reply;
}

struct admin_call {
    int done;
    Sworn__V1__AdminResponse *resp;
};

static void on_admin(void *arg, const Sworn__V1__AdminResponse *r)
{
    struct admin_call *call = arg;
    size_t n;
    uint8_t *b;

    assert_false(call->done);
    assert_non_null(r);
    n = sworn__v1__admin_response__get_packed_size(r);
    b = malloc(n + 1);
    assert_non_null(b);
    sworn__v1__admin_response__pack(r, b);
    call->resp = sworn__v1__admin_response__unpack(NULL, n, b);
    free(b);
    call->done = 1;
}

Sworn__V1__AdminResponse *sworn_engine_admin(struct sworn_engine *e,
                                             const Sworn__V1__AdminRequest *rq)
{
    struct admin_call call = {0, NULL};

    if (d_local_admin(e->d, rq, getuid(), on_admin, &call) < 0)
        fail_msg("d_local_admin: %s", sworn_err_msg());
    if (d_local_wait(e->d, &call.done, ENGINE_WAIT_MS) < 0)
        fail_msg("the engine did not answer the admin call: %s", sworn_err_msg());
    assert_non_null(call.resp);
    return call.resp;
}

Sworn__V1__Entry *sworn_engine_entry(struct sworn_engine *e, uint64_t index)
{
    uint8_t *buf = malloc(SWORN_FRAME_ENTRY_MAX);
    size_t len;
    Sworn__V1__Entry *m;

    assert_non_null(buf);
    assert_int_equal(sworn_log_read_entry(e->d->log, index, buf, SWORN_FRAME_ENTRY_MAX, &len), 0);
    m = sworn_frame_unpack_entry(buf, len);
    free(buf);
    assert_non_null(m);
    return m;
}
