/*
 * d_dispatch.c -- the channels' handler tables (d_dispatch.h).
 */
#include "d_dispatch.h"

#include <stdio.h>

#include "d_admin.h"
#include "d_daemon.h"
#include "d_record.h"
#include "d_decide.h"
#include "d_exchange.h"
#include "d_usage.h"
#include "err.h"

/*
 * m is body decoded, or NULL when it did not decode (sworn_err says why): then record the
 * refusal, answer it with an ErrorFrame (the connection goes on reading) and return 1.
 */
static int refused(struct d_daemon *d, struct d_conn *c, enum d_channel ch, const void *m,
                   const uint8_t *body, size_t len)
{
    char msg[SWORN_ERR_MSG_MAX];
    int code = sworn_err_code();

    if (m != NULL)
        return 0;
    snprintf(msg, sizeof(msg), "%s", sworn_err_msg());
    d_record_refused(d, ch, d_conn_uid(c), d_conn_pid(c), code, msg, NULL, body, len);
    d_conn_reply_error(c, code, msg, NULL, 0);
    return 1;
}

#define TABLE_LEN(t) (sizeof(t) / sizeof((t)[0]))

/* --- decision socket ---------------------------------------------------------------------- */

/* A decision-socket request: m is the decoded envelope; a handler takes its body out of it. */
typedef void (*decision_fn)(struct d_daemon *d, struct d_conn *c, Sworn__V1__DecisionRequest *m,
                            const uint8_t *body, size_t len);

static void on_authorize(struct d_daemon *d, struct d_conn *c, Sworn__V1__DecisionRequest *m,
                         const uint8_t *body, size_t len)
{
    Sworn__V1__AuthorizationRequest *req = m->authorize;

    (void)body;
    (void)len;
    m->authorize = NULL; /* taken: the envelope is freed without it */
    m->body_case = SWORN__V1__DECISION_REQUEST__BODY__NOT_SET;
    d_decide_request(d, c, req);
}

static void on_token_exchange(struct d_daemon *d, struct d_conn *c, Sworn__V1__DecisionRequest *m,
                              const uint8_t *body, size_t len)
{
    Sworn__V1__TokenExchange *ex = m->token_exchange;

    m->token_exchange = NULL; /* taken: its values are wiped by d_exchange.c */
    m->body_case = SWORN__V1__DECISION_REQUEST__BODY__NOT_SET;
    d_exchange_request(d, c, ex, body, len);
}

static void on_usage(struct d_daemon *d, struct d_conn *c, Sworn__V1__DecisionRequest *m,
                     const uint8_t *body, size_t len)
{
    Sworn__V1__UsageReport *u = m->usage;

    m->usage = NULL; /* taken */
    m->body_case = SWORN__V1__DECISION_REQUEST__BODY__NOT_SET;
    d_usage_request(d, c, u, body, len);
}

/* Indexed by DecisionRequest's body case (its field number). */
static const decision_fn decision_calls[] = {
    [SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE] = on_authorize,
    [SWORN__V1__DECISION_REQUEST__BODY_TOKEN_EXCHANGE] = on_token_exchange,
    [SWORN__V1__DECISION_REQUEST__BODY_USAGE] = on_usage,
};

static void decision_frame(struct d_daemon *d, struct d_conn *c, const uint8_t *body, size_t len)
{
    Sworn__V1__DecisionRequest *m = sworn_frame_unpack_decision_request(body, len);

    if (refused(d, c, D_CHANNEL_DECISION, m, body, len))
        return;
    if ((size_t)m->body_case < TABLE_LEN(decision_calls) && decision_calls[m->body_case] != NULL)
        decision_calls[m->body_case](d, c, m, body, len);
    else /* the decoder admits no other case: a table out of step with it */
        d_conn_reply_error(c, SWORN_ERR_FORMAT, "unknown decision request", NULL, 0);
    sworn__v1__decision_request__free_unpacked(m, NULL);
}

static int pack_decision_error(const Sworn__V1__ErrorFrame *e, uint8_t **frame, size_t *len)
{
    Sworn__V1__DecisionReply r = SWORN__V1__DECISION_REPLY__INIT;

    r.body_case = SWORN__V1__DECISION_REPLY__BODY_ERROR;
    r.error = (Sworn__V1__ErrorFrame *)e;
    return sworn_frame_pack_reply(&r, frame, len);
}

const struct d_channel_ops d_decision_channel = {D_CHANNEL_DECISION, decision_frame,
                                                 pack_decision_error};

/* --- admin socket ------------------------------------------------------------------------- */

/* Indexed by AdminRequest's body case (its field number). */
static const d_admin_fn admin_calls[] = {
    [SWORN__V1__ADMIN_REQUEST__BODY_STATUS] = d_admin_status,
    [SWORN__V1__ADMIN_REQUEST__BODY_LIST_ESCALATIONS] = d_admin_list_escalations,
    [SWORN__V1__ADMIN_REQUEST__BODY_RESOLVE] = d_admin_resolve,
    [SWORN__V1__ADMIN_REQUEST__BODY_RELOAD_POLICY] = d_admin_reload_policy,
    [SWORN__V1__ADMIN_REQUEST__BODY_CHECKPOINT_NOW] = d_admin_checkpoint_now,
    [SWORN__V1__ADMIN_REQUEST__BODY_TAIL] = d_admin_tail,
    [SWORN__V1__ADMIN_REQUEST__BODY_METRICS] = d_admin_metrics,
    [SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_START] = d_admin_sandbox_start,
    [SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_END] = d_admin_sandbox_end,
    [SWORN__V1__ADMIN_REQUEST__BODY_CONFORMANCE_REPORT] = d_admin_conformance_report,
};

static void admin_frame(struct d_daemon *d, struct d_conn *c, const uint8_t *body, size_t len)
{
    Sworn__V1__AdminRequest *rq = sworn_frame_unpack_admin_request(body, len);

    if (refused(d, c, D_CHANNEL_ADMIN, rq, body, len))
        return;
    if ((size_t)rq->body_case < TABLE_LEN(admin_calls) && admin_calls[rq->body_case] != NULL)
        admin_calls[rq->body_case](d, c, rq);
    else /* the decoder admits no other case: a table out of step with it */
        d_conn_reply_error(c, SWORN_ERR_FORMAT, "unknown admin request", NULL, 0);
    sworn__v1__admin_request__free_unpacked(rq, NULL);
}

static int pack_admin_error(const Sworn__V1__ErrorFrame *e, uint8_t **frame, size_t *len)
{
    Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;

    r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_ERROR;
    r.error = (Sworn__V1__ErrorFrame *)e;
    return sworn_frame_pack_admin_response(&r, frame, len);
}

const struct d_channel_ops d_admin_channel = {D_CHANNEL_ADMIN, admin_frame, pack_admin_error};
