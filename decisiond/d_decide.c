/*
 * d_decide.c -- one decision, from frame to answer (d_daemon.h; docs/decisiond.md).
 *
 *   loop thread:  unpack (strict, frame.h) -> tpm.required gate -> policy (+ budgets) ->
 *                 credential release for an allow -> pack the DecisionRecord entry
 *   worker:       leaf hash -> receipt signature for an allow -> append entry + receipt, durable
 *   loop thread:  answer: the Decision with log index, entry hash, receipt and credential; or,
 *                 for an escalation, hold the request for an operator (d_escalate.c)
 *
 * Fail closed, at every step: a request that does not decode is recorded as Refused and answered
 * with an ErrorFrame; a policy failure is a deny; a credential that cannot be released turns the
 * allow into a deny; a receipt that cannot be signed turns the allow into a recorded deny (the
 * allow was never written); a log that cannot be written gets an ErrorFrame, which the proxy
 * treats as a deny, and nothing is acknowledged that is not durable. Budgets charged by an allow
 * that did not happen are refunded.
 */
#include <stdlib.h>
#include <string.h>

#include "d_daemon.h"
#include "d_jlog.h"
#include "err.h"
#include "merkle.h"
#include "resource.h"
#include "wipe.h"

#include <openssl/sha.h>

/*
 * The allows that released a credential, newest last: a TokenExchange may only store tokens
 * under a credential that a recent allow released for the request it names, so a confused or
 * compromised proxy cannot widen a credential's use by minting under another one. Loop thread.
 */
#define RECENT_ALLOWS 1024
#define RECENT_TTL_MS (10u * 60u * 1000u)

struct recent_allow {
    char request_id[SWORN_FRAME_ID_MAX + 1];
    char credential_id[SWORN_FRAME_ID_MAX + 1];
    uint64_t time_ms;
};

static struct recent_allow recent[RECENT_ALLOWS];
static size_t recent_next;

static void remember_allow(const char *request_id, const char *credential_id, uint64_t now)
{
    struct recent_allow *r = &recent[recent_next++ % RECENT_ALLOWS];

    snprintf(r->request_id, sizeof(r->request_id), "%s", request_id);
    snprintf(r->credential_id, sizeof(r->credential_id), "%s", credential_id);
    r->time_ms = now;
}

static int was_allowed(const char *request_id, const char *credential_id, uint64_t now)
{
    for (size_t i = 0; i < RECENT_ALLOWS; i++)
        if (recent[i].time_ms != 0 && now - recent[i].time_ms <= RECENT_TTL_MS &&
            strcmp(recent[i].request_id, request_id) == 0 &&
            strcmp(recent[i].credential_id, credential_id) == 0)
            return 1;
    return 0;
}

struct decide_job {
    struct d_daemon *d;
    struct d_conn *conn;
    Sworn__V1__AuthorizationRequest *req; /* owned, unless handed to the escalation table */
    struct sworn_policy_result res;
    struct sworn_vault_release cred;
    int has_cred;
    uint64_t time_ms;
    uint8_t policy_digest[32]; /* of the policy that decided, copied when it decided: a reload
                                  may switch d->policy_digest before the worker packs the entry */

    /* Escalation resolution (held != NULL): the entry is an EscalationResolved. */
    struct d_held *held;
    char operator_[257];
    char op_reason[SWORN_POLICY_REASON_MAX + 1];
    void (*on_recorded)(void *arg, int ok, uint64_t index);
    void *on_recorded_arg;

    /* Filled by the worker. */
    int rc;
    int downgraded; /* the receipt could not be signed: a deny was recorded instead */
    int code;
    char msg[SWORN_ERR_MSG_MAX];
    uint64_t index;
    uint8_t leaf[32];
    uint8_t receipt[SWORN_LOG_RECEIPT_MAX];
    size_t receipt_len;
};

static void job_free(struct decide_job *j)
{
    if (j->has_cred)
        sworn_vault_release_wipe(&j->cred);
    if (j->req != NULL)
        sworn__v1__authorization_request__free_unpacked(j->req, NULL);
    free(j);
}

static const char *effect_word(Sworn__V1__Effect e)
{
    return e == SWORN__V1__EFFECT__EFFECT_ALLOW      ? "allow"
           : e == SWORN__V1__EFFECT__EFFECT_ESCALATE ? "escalate"
                                                     : "deny";
}

/* Pack the entry for j as it stands (effect and reason from j->res, or the resolution). */
static int pack_entry(struct decide_job *j, uint8_t **out, size_t *len)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord r = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__EscalationResolved er = SWORN__V1__ESCALATION_RESOLVED__INIT;
    Sworn__V1__Resource canon_pb = SWORN__V1__RESOURCE__INIT;
    struct sworn_resource canon; /* what policy and vault matched (policy/resource.h) */
    uint8_t raw_sha256[SWORN_RESOURCE_SHA256_LEN];
    const char *why = NULL;

    if (j->held != NULL) {
        er.request_id = j->held->req->request_id;
        er.effect = j->res.effect;
        er.operator_ = j->operator_;
        er.reason = j->res.reason;
        e.kind_case = SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED;
        e.escalation_resolved = &er;
        return d_entry_pack(&e, out, len);
    }
    r.request = j->req;
    r.effect = j->res.effect;
    r.rule_id = j->res.rule_id;
    r.reason = j->res.reason;
    r.policy_digest.data = j->policy_digest;
    r.policy_digest.len = 32;
    r.time_unix_ms = j->time_ms;
    if (sworn_resource_raw_sha256(j->req->resource, raw_sha256) == 0) {
        r.raw_target_sha256.data = raw_sha256;
        r.raw_target_sha256.len = sizeof(raw_sha256);
        if (sworn_resource_canon(j->req->resource, &canon, &why) == 0) {
            sworn_resource_to_pb(&canon, &canon_pb);
            r.canonical_resource = &canon_pb;
        }
    }
    if (j->has_cred && j->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW) {
        r.credential_id = j->cred.id;
        r.credential_sha256.data = j->cred.value_sha256;
        r.credential_sha256.len = 32;
    }
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &r;
    return d_entry_pack(&e, out, len);
}

static void fail_job(struct decide_job *j)
{
    j->rc = -1;
    j->code = sworn_err_code();
    snprintf(j->msg, sizeof(j->msg), "%s", sworn_err_msg());
}

/* Worker: sign (for an allow), then append; a failed signature becomes a recorded deny. */
static void decide_work(void *arg)
{
    struct decide_job *j = arg;
    uint8_t *entry = NULL;
    size_t len = 0;
    int allow = j->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW;

    j->receipt_len = 0;
    if (pack_entry(j, &entry, &len) < 0) {
        fail_job(j);
        return;
    }
    sworn_merkle_leaf_hash(entry, len, j->leaf);
    if (allow && d_record_receipt(j->d, j->leaf, j->receipt, &j->receipt_len) < 0) {
        /* No receipt, no allow: record the deny that actually happens. */
        j->downgraded = 1;
        j->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(j->res.reason, sizeof(j->res.reason), "denied: %s", sworn_err_msg());
        free(entry);
        entry = NULL;
        if (pack_entry(j, &entry, &len) < 0) {
            fail_job(j);
            return;
        }
        sworn_merkle_leaf_hash(entry, len, j->leaf);
        allow = 0;
    }
    if (d_record_append(j->d, entry, len, allow ? j->receipt : NULL, j->receipt_len, &j->index) < 0)
        fail_job(j);
    else
        j->rc = 0;
    free(entry);
}

/* Send the Decision for j (effect, rule, reason, index, hash, receipt, credential). */
static void send_decision(struct decide_job *j, struct d_conn *conn, const char *request_id)
{
    Sworn__V1__DecisionReply reply = SWORN__V1__DECISION_REPLY__INIT;
    Sworn__V1__Decision dec = SWORN__V1__DECISION__INIT;
    Sworn__V1__Receipt *rc = NULL;
    Sworn__V1__Credential cred = SWORN__V1__CREDENTIAL__INIT;
    uint8_t *frame = NULL;
    size_t len = 0;
    int allow = j->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW;

    dec.request_id = (char *)request_id;
    dec.effect = j->res.effect;
    dec.rule_id = j->res.rule_id;
    dec.reason = j->res.reason;
    dec.log_index = j->index;
    dec.entry_hash.data = j->leaf;
    dec.entry_hash.len = 32;
    if (allow && j->receipt_len > 0) {
        rc = sworn__v1__receipt__unpack(NULL, j->receipt_len, j->receipt);
        dec.receipt = rc;
    }
    if (allow && j->has_cred) {
        remember_allow(request_id, j->cred.id, d_now_unix_ms());
        cred.id = j->cred.id;
        cred.header_name = j->cred.header_name;
        cred.query_name = j->cred.query_name;
        cred.value.data = j->cred.value;
        cred.value.len = j->cred.value_len;
        dec.credential = &cred;
    }
    reply.body_case = SWORN__V1__DECISION_REPLY__BODY_DECISION;
    reply.decision = &dec;
    if ((allow && rc == NULL) || sworn_frame_pack_reply(&reply, &frame, &len) < 0) {
        d_log_msg(D_LOG_ERROR, "reply_failed", sworn_err_msg());
        d_conn_reply_error(conn, SWORN_ERR_IO, "answer could not be encoded", request_id, 0);
    } else {
        d_conn_reply(conn, frame, len);
    }
    if (frame != NULL) {
        /* The frame held the credential value. */
        sworn_memzero(frame, len);
        free(frame);
    }
    if (rc != NULL)
        sworn__v1__receipt__free_unpacked(rc, NULL);
}

static void log_decision(struct decide_job *j, const char *request_id, const char *principal)
{
    json_object *f = json_object_new_object();

    if (f == NULL)
        return;
    json_object_object_add(f, "request_id", json_object_new_string(request_id));
    json_object_object_add(f, "principal", json_object_new_string(principal));
    json_object_object_add(f, "effect", json_object_new_string(effect_word(j->res.effect)));
    json_object_object_add(f, "rule", json_object_new_string(j->res.rule_id));
    json_object_object_add(f, "reason", json_object_new_string(j->res.reason));
    json_object_object_add(f, "index", json_object_new_int64((int64_t)j->index));
    if (j->has_cred && j->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW)
        json_object_object_add(f, "credential", json_object_new_string(j->cred.id));
    d_log(D_LOG_INFO, j->held != NULL ? "escalation_resolved" : "decision", f);
}

/* Loop thread: the job is recorded (or not); answer. */
static void decide_done(void *arg)
{
    struct decide_job *j = arg;
    struct d_daemon *d = j->d;
    const char *request_id = j->held != NULL ? j->held->req->request_id : j->req->request_id;
    const char *principal = j->held != NULL ? j->held->req->principal->id : j->req->principal->id;
    struct d_conn *conn = j->held != NULL ? j->held->conn : j->conn;

    if (j->rc < 0 || j->downgraded) {
        /* The allow did not happen: give back what it charged. */
        sworn_budgets_refund(d->budgets, j->held != NULL ? &j->held->res : &j->res);
    }
    if (j->rc < 0) {
        json_object *f = json_object_new_object();

        if (f != NULL) {
            json_object_object_add(f, "request_id", json_object_new_string(request_id));
            json_object_object_add(f, "msg", json_object_new_string(j->msg));
        }
        d_log(D_LOG_ERROR, "not_recorded", f);
        d_conn_reply_error(conn, j->code, "decision not recorded: denied", request_id, 0);
        if (j->on_recorded != NULL)
            j->on_recorded(j->on_recorded_arg, 0, 0);
    } else {
        log_decision(j, request_id, principal);
        if (j->res.effect == SWORN__V1__EFFECT__EFFECT_ESCALATE && j->held == NULL) {
            /* Recorded as held; the answer comes when an operator resolves it. */
            uint64_t timeout = j->res.escalation_timeout_ms != 0 ? j->res.escalation_timeout_ms
                                                                 : d->cfg->escalation_timeout_ms;

            d_metrics_decision(&d->metrics, 3, 0);
            if (d_escalation_hold(d, conn, j->req, &j->res, timeout) == 0) {
                j->req = NULL; /* the table owns it now */
            } else {
                d_conn_reply_error(conn, sworn_err_code(), sworn_err_msg(), request_id, 0);
            }
        } else {
            if (j->held == NULL)
                d_metrics_decision(&d->metrics, (int)j->res.effect,
                                   d_now_mono_us() - d_conn_request_start_us(conn));
            else /* an operator's answer: its wait is not decisiond's latency */
                atomic_fetch_add(&d->metrics.decisions[j->res.effect - 1], 1);
            send_decision(j, conn, request_id);
        }
        if (j->on_recorded != NULL)
            j->on_recorded(j->on_recorded_arg, 1, j->index);
    }
    if (j->held != NULL)
        d_held_free(j->held); /* releases the held connection */
    else
        d_conn_release(conn);
    job_free(j);
}

/* Release the rule's credential for an allow; on refusal the allow becomes a deny. */
static void release_credential(struct d_daemon *d, struct decide_job *j,
                               const Sworn__V1__AuthorizationRequest *req)
{
    const char *why = "no vault is configured";
    int rc = 1;

    if (j->res.effect != SWORN__V1__EFFECT__EFFECT_ALLOW || j->res.credential_id[0] == '\0')
        return;
    if (d->vault != NULL)
        rc = sworn_vault_release(d->vault, j->res.credential_id, req, &j->cred, &why);
    if (rc == 0) {
        j->has_cred = 1;
        return;
    }
    if (rc < 0)
        why = "vault error";
    sworn_budgets_refund(d->budgets, &j->res);
    memset(j->res.charges, 0, sizeof(j->res.charges));
    j->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    snprintf(j->res.reason, sizeof(j->res.reason), "denied: credential %s not released: %s",
             j->res.credential_id, why);
    j->res.credential_id[0] = '\0';
}

static void submit(struct d_daemon *d, struct decide_job *j, struct d_conn *conn)
{
    if (d_workq_submit(d->workq, decide_work, decide_done, j) < 0) {
        const char *rid = j->held != NULL ? j->held->req->request_id : j->req->request_id;

        sworn_budgets_refund(d->budgets, j->held != NULL ? &j->held->res : &j->res);
        d_conn_reply_error(conn, SWORN_ERR_IO, "decisiond is stopping: denied", rid, 0);
        if (j->on_recorded != NULL)
            j->on_recorded(j->on_recorded_arg, 0, 0);
        if (j->held != NULL)
            d_held_free(j->held);
        else
            d_conn_release(conn);
        job_free(j);
    }
}

static void exchange_frame(struct d_daemon *d, struct d_conn *c, Sworn__V1__TokenExchange *ex,
                           const uint8_t *body, size_t len);

void d_decide_frame(struct d_daemon *d, struct d_conn *c, const uint8_t *body, size_t len)
{
    Sworn__V1__AuthorizationRequest *req = sworn_frame_unpack_request(body, len);
    struct decide_job *j;

    if (req == NULL) {
        char msg[SWORN_ERR_MSG_MAX];
        int code = sworn_err_code();
        Sworn__V1__TokenExchange *ex;

        /* Not a request: the other message of this socket? (Disjoint field numbers: a body
         * decodes as at most one of them.) The request's error is the one reported. */
        snprintf(msg, sizeof(msg), "%s", sworn_err_msg());
        ex = sworn_frame_unpack_exchange(body, len);
        if (ex != NULL) {
            exchange_frame(d, c, ex, body, len);
            return;
        }
        d_record_refused(d, D_CHANNEL_DECISION, d_conn_uid(c), d_conn_pid(c), code, msg, NULL, body,
                         len);
        d_conn_reply_error(c, code, msg, NULL, 0);
        return;
    }
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        d_conn_reply_error(c, SWORN_ERR_NOMEM, "out of memory: denied", req->request_id, 0);
        sworn__v1__authorization_request__free_unpacked(req, NULL);
        return;
    }
    j->d = d;
    j->conn = c;
    j->req = req;
    j->time_ms = d_now_unix_ms();
    memcpy(j->policy_digest, d->policy_digest, 32);
    d_conn_hold(c);
    if (d->cfg->tpm_required && !atomic_load(&d->tpm_ok)) {
        j->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(j->res.reason, sizeof(j->res.reason),
                 "denied: the TPM cannot quote and tpm.required is set");
    } else if (sworn_policy_eval(d->policy, d->budgets, req, j->time_ms, &j->res) < 0) {
        memset(&j->res, 0, sizeof(j->res));
        j->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(j->res.reason, sizeof(j->res.reason), "denied: policy evaluation failed: %s",
                 sworn_err_msg());
    }
    if (j->res.effect == SWORN__V1__EFFECT__EFFECT_ESCALATE &&
        d_escalations_pending(d->esc) >= d->cfg->max_pending_escalations) {
        j->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(j->res.reason, sizeof(j->res.reason),
                 "denied: %u escalations already wait for an operator",
                 d_escalations_pending(d->esc));
    }
    release_credential(d, j, req);
    submit(d, j, c);
}

void d_decide_resolve(struct d_daemon *d, struct d_held *h, int approve, const char *operator_,
                      const char *reason, void (*on_recorded)(void *arg, int ok, uint64_t index),
                      void *arg)
{
    struct decide_job *j = calloc(1, sizeof(*j));

    if (j == NULL) {
        d_conn_reply_error(h->conn, SWORN_ERR_NOMEM, "out of memory: denied", h->req->request_id,
                           0);
        if (on_recorded != NULL)
            on_recorded(arg, 0, 0);
        d_held_free(h);
        return;
    }
    j->d = d;
    j->held = h;
    j->time_ms = d_now_unix_ms();
    j->on_recorded = on_recorded;
    j->on_recorded_arg = arg;
    snprintf(j->operator_, sizeof(j->operator_), "%s", operator_);
    j->res = h->res;
    memset(j->res.charges, 0, sizeof(j->res.charges)); /* escalations charge no budget */
    j->res.effect = approve ? SWORN__V1__EFFECT__EFFECT_ALLOW : SWORN__V1__EFFECT__EFFECT_DENY;
    if (reason != NULL && reason[0] != '\0')
        snprintf(j->res.reason, sizeof(j->res.reason), "%s", reason);
    else
        snprintf(j->res.reason, sizeof(j->res.reason), "%s by %s", approve ? "approved" : "denied",
                 operator_);
    if (approve && d->cfg->tpm_required && !atomic_load(&d->tpm_ok)) {
        j->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(j->res.reason, sizeof(j->res.reason),
                 "denied: the TPM cannot quote and tpm.required is set");
    }
    release_credential(d, j, h->req);
    submit(d, j, h->conn);
}

/* --- OAuth token interception (TokenExchange) ------------------------------------------- */

struct exchange_job {
    struct d_daemon *d;
    struct d_conn *conn;
    Sworn__V1__TokenExchange *ex; /* holds the real values: wiped before it is freed */
    char ids[SWORN_FRAME_EXCHANGE_MAX][SWORN_FRAME_ID_MAX + 1];
    char symbolic[SWORN_FRAME_EXCHANGE_MAX][64];
    uint8_t value_sha256[SWORN_FRAME_EXCHANGE_MAX][32];
    uint8_t symbolic_sha256[SWORN_FRAME_EXCHANGE_MAX][32];
    int rc, code;
    char msg[SWORN_ERR_MSG_MAX];
    uint64_t index;
    uint8_t leaf[32];
};

static void exchange_free(struct exchange_job *j)
{
    if (j->ex != NULL) {
        for (size_t i = 0; i < j->ex->n_tokens; i++)
            sworn_memzero(j->ex->tokens[i]->value.data, j->ex->tokens[i]->value.len);
        sworn__v1__token_exchange__free_unpacked(j->ex, NULL);
    }
    sworn_memzero(j->symbolic, sizeof(j->symbolic));
    free(j);
}

/* Worker: store each token in the vault (file rewritten, 0600), then record the hashes. */
static void exchange_work(void *arg)
{
    struct exchange_job *j = arg;
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__CredentialsMinted cm = SWORN__V1__CREDENTIALS_MINTED__INIT;
    Sworn__V1__MintedCredential mc[SWORN_FRAME_EXCHANGE_MAX], *mcp[SWORN_FRAME_EXCHANGE_MAX];
    uint8_t *entry = NULL;
    size_t len = 0;

    j->rc = -1;
    for (size_t i = 0; i < j->ex->n_tokens; i++) {
        const Sworn__V1__TokenValue *t = j->ex->tokens[i];

        /* A failure part-way leaves earlier tokens stored but never handed out: nobody holds
         * their symbolic tokens, so they can never be used (docs/decisiond.md). */
        if (sworn_vault_mint(j->d->vault, j->ex->credential_id, t->value.data, t->value.len,
                             j->ids[i], j->symbolic[i]) < 0)
            goto fail;
        SHA256(t->value.data, t->value.len, j->value_sha256[i]);
        SHA256((const uint8_t *)j->symbolic[i], strlen(j->symbolic[i]), j->symbolic_sha256[i]);
        sworn__v1__minted_credential__init(&mc[i]);
        mc[i].field = t->field;
        mc[i].credential_id = j->ids[i];
        mc[i].value_sha256.data = j->value_sha256[i];
        mc[i].value_sha256.len = 32;
        mc[i].symbolic_sha256.data = j->symbolic_sha256[i];
        mc[i].symbolic_sha256.len = 32;
        mcp[i] = &mc[i];
    }
    cm.request_id = j->ex->request_id;
    cm.allow_request_id = j->ex->allow_request_id;
    cm.from_credential_id = j->ex->credential_id;
    cm.minted = mcp;
    cm.n_minted = j->ex->n_tokens;
    cm.time_unix_ms = d_now_unix_ms();
    e.kind_case = SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED;
    e.credentials_minted = &cm;
    if (d_entry_pack(&e, &entry, &len) < 0)
        goto fail;
    sworn_merkle_leaf_hash(entry, len, j->leaf);
    if (d_record_append(j->d, entry, len, NULL, 0, &j->index) < 0)
        goto fail;
    free(entry);
    j->rc = 0;
    return;
fail:
    free(entry);
    j->code = sworn_err_code();
    snprintf(j->msg, sizeof(j->msg), "%s", sworn_err_msg());
}

static void exchange_done(void *arg)
{
    struct exchange_job *j = arg;
    Sworn__V1__DecisionReply reply = SWORN__V1__DECISION_REPLY__INIT;
    Sworn__V1__TokenExchangeResult res = SWORN__V1__TOKEN_EXCHANGE_RESULT__INIT;
    Sworn__V1__MintedToken mt[SWORN_FRAME_EXCHANGE_MAX], *mtp[SWORN_FRAME_EXCHANGE_MAX];
    uint8_t *frame = NULL;
    size_t len = 0;
    json_object *f = json_object_new_object();

    if (f != NULL) {
        json_object_object_add(f, "request_id", json_object_new_string(j->ex->request_id));
        json_object_object_add(f, "credential", json_object_new_string(j->ex->credential_id));
        json_object_object_add(f, "tokens", json_object_new_int64((int64_t)j->ex->n_tokens));
        if (j->rc < 0)
            json_object_object_add(f, "msg", json_object_new_string(j->msg));
        else
            json_object_object_add(f, "index", json_object_new_int64((int64_t)j->index));
    }
    d_log(j->rc < 0 ? D_LOG_ERROR : D_LOG_INFO, "credentials_minted", f);
    if (j->rc < 0) {
        d_conn_reply_error(j->conn, j->code, "tokens not stored", j->ex->request_id, 0);
    } else {
        for (size_t i = 0; i < j->ex->n_tokens; i++) {
            sworn__v1__minted_token__init(&mt[i]);
            mt[i].field = j->ex->tokens[i]->field;
            mt[i].symbolic = j->symbolic[i];
            mt[i].credential_id = j->ids[i];
            mtp[i] = &mt[i];
        }
        res.request_id = j->ex->request_id;
        res.tokens = mtp;
        res.n_tokens = j->ex->n_tokens;
        res.log_index = j->index;
        res.entry_hash.data = j->leaf;
        res.entry_hash.len = 32;
        reply.body_case = SWORN__V1__DECISION_REPLY__BODY_TOKEN_EXCHANGE;
        reply.token_exchange = &res;
        if (sworn_frame_pack_reply(&reply, &frame, &len) < 0) {
            d_conn_reply_error(j->conn, sworn_err_code(), sworn_err_msg(), j->ex->request_id, 0);
        } else {
            d_conn_reply(j->conn, frame, len);
            sworn_memzero(frame, len);
            free(frame);
        }
    }
    d_conn_release(j->conn);
    exchange_free(j);
}

/* Loop thread: a TokenExchange frame (body already decoded). Takes ex. */
static void exchange_frame(struct d_daemon *d, struct d_conn *c, Sworn__V1__TokenExchange *ex,
                           const uint8_t *body, size_t len)
{
    struct exchange_job *j;
    const char *why = NULL;

    if (d->vault == NULL)
        why = "no vault is configured";
    else if (!was_allowed(ex->allow_request_id, ex->credential_id, d_now_unix_ms()))
        why = "no recent allow released that credential for that request";
    if (why != NULL) {
        char msg[SWORN_ERR_MSG_MAX];

        snprintf(msg, sizeof(msg), "token exchange refused: %s", why);
        d_record_refused(d, D_CHANNEL_DECISION, d_conn_uid(c), d_conn_pid(c), SWORN_ERR_ARG, msg,
                         ex->request_id, body, len);
        d_conn_reply_error(c, SWORN_ERR_ARG, msg, ex->request_id, 0);
        for (size_t i = 0; i < ex->n_tokens; i++)
            sworn_memzero(ex->tokens[i]->value.data, ex->tokens[i]->value.len);
        sworn__v1__token_exchange__free_unpacked(ex, NULL);
        return;
    }
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        d_conn_reply_error(c, SWORN_ERR_NOMEM, "out of memory", ex->request_id, 0);
        for (size_t i = 0; i < ex->n_tokens; i++)
            sworn_memzero(ex->tokens[i]->value.data, ex->tokens[i]->value.len);
        sworn__v1__token_exchange__free_unpacked(ex, NULL);
        return;
    }
    j->d = d;
    j->conn = c;
    j->ex = ex;
    d_conn_hold(c);
    if (d_workq_submit(d->workq, exchange_work, exchange_done, j) < 0) {
        d_conn_reply_error(c, SWORN_ERR_IO, "decisiond is stopping", ex->request_id, 0);
        d_conn_release(c);
        exchange_free(j);
    }
}
