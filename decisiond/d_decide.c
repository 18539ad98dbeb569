/*
 * d_decide.c -- one fresh decision, from decoded request to answer (d_decide.h;
 * docs/decisiond.md).
 *
 *   loop thread:  request id taken (a duplicate is denied here) -> the proxy's own refusal
 *                 (denied here, sworn_policy_refusal) -> the request's sandbox, when it names
 *                 one (denied here unless it runs with this principal and name; else pinned
 *                 until the entry is appended, d_sandboxes.h) -> tpm.required gate -> policy
 *                 (+ budgets) -> escalation cap -> credential release for an allow -> the commit
 *                 step (d_commit.h: record, + receipt, on a worker)
 *   loop thread:  answer the Decision; or, for an escalation, hold the request for an operator
 *                 (d_escalate.c), whose resolution is a second commit
 *
 * Fail closed: a policy failure is a deny; everything after is the commit step's.
 *
 * The request's resource is canonicalised once, first (d_commit.h: the policy, the vault, the
 * entry and the receipt read that one form), and the policy does not check the request's shape
 * again: the decoder checked it (sworn_frame_unpack_decision_request), nothing changes it, and
 * the entry's packing checks it once more with the whole record.
 */
#include "d_decide.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "d_commit.h"
#include "d_conn.h"
#include "d_daemon.h"
#include "d_record.h"
#include "d_escalate.h"
#include "d_sandboxes.h"
#include "err.h"
#include "resource.h"

struct decide_job {
    struct d_commit c;                    /* first: the commit's callbacks cast back */
    Sworn__V1__AuthorizationRequest *req; /* owned, unless handed to the escalation table */
    /* The canonical form of req->resource, made once (c.canon points here): the policy, the
     * vault, the entry and the receipt read it. Last: the job is cleared up to it only, since
     * sworn_resource_canonicalise writes all of its 19 KiB. */
    struct sworn_resource_canonical canon;
};

/* Worker: the DecisionRecord entry for the job as it stands. */
static int pack_decision(const struct d_commit *c, uint8_t **out, size_t *len)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord r = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__Resource canon_pb = SWORN__V1__RESOURCE__INIT;
    uint8_t raw_sha256[SWORN_RESOURCE_SHA256_LEN];

    r.request = (Sworn__V1__AuthorizationRequest *)c->req;
    r.effect = c->res.effect;
    r.rule_id = (char *)c->res.rule_id;
    r.reason = (char *)c->res.reason;
    r.policy_digest.data = (uint8_t *)c->policy_digest;
    r.policy_digest.len = 32;
    r.time_unix_ms = c->time_ms;
    if (sworn_resource_raw_sha256(c->req->resource, raw_sha256) == 0) {
        r.raw_target_sha256.data = raw_sha256;
        r.raw_target_sha256.len = sizeof(raw_sha256);
        /* What policy and vault matched (policy/resource.h), made once in d_decide_request. */
        if (!sworn_resource_canonical_is_of(c->canon, c->req->resource))
            return sworn_err_set(SWORN_ERR_ARG, "the decision's canonical resource is not that "
                                                "of its request");
        if (c->canon->rc == 0) {
            sworn_resource_to_pb(&c->canon->res, &canon_pb);
            r.canonical_resource = &canon_pb;
        }
    }
    if (c->has_cred && c->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW) {
        r.credential_id = (char *)c->cred.id;
        r.credential_sha256.data = (uint8_t *)c->cred.value_sha256;
        r.credential_sha256.len = 32;
    }
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &r;
    return d_entry_pack(&e, out, len);
}

/* Loop thread: answer, or hold an escalation (recorded as held; answered when resolved). */
static void decision_done(struct d_commit *c, int recorded)
{
    struct decide_job *j = (struct decide_job *)c;
    struct d_daemon *d = c->d;

    /* A model.call's place in the usage table: filled by its allow, given back otherwise. */
    if (c->usage_admitted && recorded && c->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW)
        d_usage_remember(&d->usage, j->req, &c->res, c->index, c->leaf, d_now_mono_us() / 1000u);
    else if (c->usage_admitted)
        d_usage_unadmit(&d->usage);
    c->usage_admitted = 0;

    if (recorded && c->res.effect == SWORN__V1__EFFECT__EFFECT_ESCALATE) {
        uint64_t timeout = c->res.escalation_timeout_ms != 0 ? c->res.escalation_timeout_ms
                                                             : d->cfg->escalation_timeout_ms;

        d_metrics_decision(&d->metrics, 3, 0);
        if (d_escalation_hold(d, c->conn, j->req, &c->res, c->index, c->leaf, timeout) == 0)
            j->req = NULL; /* the table owns it now */
        else
            d_conn_reply_error(c->conn, sworn_err_code(), sworn_err_msg(), j->req->request_id, 0);
    } else if (recorded) {
        d_metrics_decision(&d->metrics, (int)c->res.effect,
                           d_now_mono_us() - d_conn_request_start_us(c->conn));
        d_commit_answer(c);
    }
    d_conn_release(c->conn);
    d_commit_wipe(c);
    if (j->req != NULL)
        sworn__v1__authorization_request__free_unpacked(j->req, NULL);
    free(j);
}

static const struct d_commit_kind decision_kind = {"decision", pack_decision, decision_done};

/* A model.call takes a place in the usage table (d_usage.h); 1 when none is left. */
static int usage_full(struct d_commit *c)
{
    if (strcmp(c->req->operation, D_USAGE_OPERATION) != 0)
        return 0;
    if (d_usage_admit(&c->d->usage, d_now_mono_us() / 1000u) < 0)
        return 1;
    c->usage_admitted = 1;
    return 0;
}

void d_decide_request(struct d_daemon *d, struct d_conn *conn, Sworn__V1__AuthorizationRequest *req)
{
    struct decide_job *j = malloc(sizeof(*j));
    struct d_commit *c;

    if (j == NULL) {
        d_conn_reply_error(conn, SWORN_ERR_NOMEM, "out of memory: denied", req->request_id, 0);
        sworn__v1__authorization_request__free_unpacked(req, NULL);
        return;
    }
    memset(j, 0, offsetof(struct decide_job, canon));
    sworn_resource_canonicalise(req->resource, &j->canon);
    c = &j->c;
    j->req = req;
    c->canon = &j->canon;
    c->kind = &decision_kind;
    c->d = d;
    c->conn = conn;
    c->req = req;
    c->time_ms = d_now_unix_ms();
    memcpy(c->policy_digest, d->policy_digest, 32);
    d_conn_hold(conn);
    if (d_escalation_claim_id(d->esc, req->request_id, c->res.reason, sizeof(c->res.reason)) < 0) {
        /* A duplicate id: denied, and recorded as a DecisionRecord like any deny, before the
         * policy runs (no budget is charged). Never taken for the earlier request (finding 2 of
         * the review, docs/decisiond.md section 2). */
        c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    } else if (sworn_policy_refusal(req, &c->res)) {
        /* The proxy refused the request itself (bad framing, an obs-fold, ...): a recorded
         * DENY, rule "", before the TPM gate and the policy; nothing charged, no credential
         * (docs/decisiond.md section 2). */
    } else if (d_sandboxes_admit(d->sandboxes, req->principal, &c->sandbox_pin, c->res.reason,
                                 sizeof(c->res.reason)) < 0) {
        /* It names a sandbox that is not running with its principal and name (never started,
         * ended or ending, another principal or name): a recorded DENY, rule "", before the
         * TPM gate and the policy; nothing charged (docs/decisiond.md, "Sandboxes"). */
        c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    } else if (usage_full(c)) {
        /* Every model.call allow must be able to take its usage report (d_usage.h): with no
         * place left, a recorded DENY before the policy; nothing charged. */
        c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(c->res.reason, sizeof(c->res.reason),
                 "denied: %u model calls already await their usage report", D_USAGE_PENDING_MAX);
    } else if (d->cfg->tpm_required && !atomic_load(&d->tpm_ok)) {
        c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(c->res.reason, sizeof(c->res.reason),
                 "denied: the TPM cannot quote and tpm.required is set");
    } else if (sworn_policy_eval_canonical(d->policy, d->budgets, req, c->canon, c->time_ms,
                                           &c->res) < 0) {
        memset(&c->res, 0, sizeof(c->res));
        c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(c->res.reason, sizeof(c->res.reason), "denied: policy evaluation failed: %s",
                 sworn_err_msg());
    }
    if (c->res.effect == SWORN__V1__EFFECT__EFFECT_ESCALATE &&
        d_escalations_pending(d->esc) >= d->cfg->max_pending_escalations) {
        c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(c->res.reason, sizeof(c->res.reason),
                 "denied: %u escalations already wait for an operator",
                 d_escalations_pending(d->esc));
    }
    d_commit_release_credential(c);
    d_commit_submit(c);
}
