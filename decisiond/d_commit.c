/*
 * d_commit.c -- the commit step: pack, receipt, append, answer, refunds (d_commit.h).
 *
 * Fail closed, at every step: a credential that cannot be released turns the allow into a deny;
 * a receipt that cannot be signed turns the allow into a recorded deny; a log that cannot be
 * written gets an ErrorFrame, which the proxy treats as a deny, and nothing is acknowledged that
 * is not durable. Budgets charged by an allow that did not happen are refunded.
 */
#include "d_commit.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "d_batchtree.h"
#include "d_conn.h"
#include "d_daemon.h"
#include "d_record.h"
#include "d_sandboxes.h"
#include "d_jlog.h"
#include "err.h"
#include "merkle.h"
#include "wipe.h"

void d_commit_wipe(struct d_commit *c)
{
    if (c->has_cred)
        sworn_vault_release_wipe(&c->cred);
    c->has_cred = 0;
}

void d_commit_release_credential(struct d_commit *c)
{
    struct d_daemon *d = c->d;
    const char *why = "no vault is configured";
    int rc = 1;

    if (c->res.effect != SWORN__V1__EFFECT__EFFECT_ALLOW || c->res.credential_id[0] == '\0')
        return;
    if (d->vault != NULL)
        rc = sworn_vault_release_canonical(d->vault, c->res.credential_id, c->req, c->canon,
                                           &c->cred, &why);
    if (rc == 0) {
        c->has_cred = 1;
        return;
    }
    if (rc < 0)
        why = "vault error";
    sworn_budgets_refund(d->budgets, &c->res);
    memset(c->res.charges, 0, sizeof(c->res.charges));
    c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    snprintf(c->res.reason, sizeof(c->res.reason), "denied: credential %s not released: %s",
             c->res.credential_id, why);
    c->res.credential_id[0] = '\0';
}

static void fail_commit(struct d_commit *c)
{
    c->rc = -1;
    c->code = sworn_err_code();
    snprintf(c->msg, sizeof(c->msg), "%s", sworn_err_msg());
}

/*
 * No receipt, no allow: turn c into the deny that actually happens, and repack it (*entry, *len
 * and c->leaf replaced). The reason says why (sworn_err's message). 0, or -1 with c failed.
 */
static int downgrade(struct d_commit *c, uint8_t **entry, size_t *len)
{
    c->downgraded = 1;
    c->receipt_len = 0;
    c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    snprintf(c->res.reason, sizeof(c->res.reason), "denied: %s", sworn_err_msg());
    free(*entry);
    *entry = NULL;
    if (c->kind->pack(c, entry, len) < 0) {
        fail_commit(c);
        return -1;
    }
    sworn_merkle_leaf_hash(*entry, *len, c->leaf);
    return 0;
}

/* Worker: sign (for an allow), then append; a failed signature becomes a recorded deny. */
static void commit_work(void *arg)
{
    struct d_commit *c = arg;
    uint8_t *entry = NULL;
    size_t len = 0;
    int allow = c->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW;

    c->receipt_len = 0;
    if (c->kind->pack(c, &entry, &len) < 0) {
        fail_commit(c);
        return;
    }
    sworn_merkle_leaf_hash(entry, len, c->leaf);
    if (allow && d_record_receipt(c->d, c->req, c->canon, c->time_ms, c->leaf, c->receipt,
                                  &c->receipt_len) < 0) {
        if (downgrade(c, &entry, &len) < 0)
            return;
        allow = 0;
    }
    if (d_record_append(c->d, entry, len, allow ? c->receipt : NULL, c->receipt_len, &c->index) < 0)
        fail_commit(c);
    else
        c->rc = 0;
    free(entry);
}

/* --- batch receipts (d_batch.h) ---------------------------------------------------------- */

/* The commit whose d_batch part it is. */
static struct d_commit *batch_commit(struct d_batch_item *it)
{
    return (struct d_commit *)(void *)((char *)it - offsetof(struct d_commit, batch));
}

static int group_pack(struct d_batch_item *it)
{
    struct d_commit *c = batch_commit(it);

    c->receipt_len = 0;
    c->entry = NULL;
    if (c->kind->pack(c, &c->entry, &c->entry_len) < 0) {
        fail_commit(c);
        return -1;
    }
    sworn_merkle_leaf_hash(c->entry, c->entry_len, c->leaf);
    it->bytes = c->entry_len;
    return 0;
}

static void group_fail(struct d_batch_item *it)
{
    fail_commit(batch_commit(it));
}

static void group_seal(struct d_batch_item *const *g, size_t n, struct d_batchtree *t)
{
    static _Thread_local uint8_t items[SWORN_BATCH_ITEMS_MAX][32];
    uint8_t root[32], sig[SWORN_SIGNER_SIG_MAX], path[D_BATCHTREE_PATH_MAX][32];
    size_t sig_len = 0;
    uint32_t m = 0;
    int signed_ok;

    /* The group's tree holds its allows only (a deny has no receipt), in group order; an allow's
     * item is its leaf hash (form 2) or the hash of sworn's RFC 9421 base of it (form 3). */
    for (size_t i = 0; i < n; i++) {
        struct d_commit *c = batch_commit(g[i]);

        if (c->res.effect != SWORN__V1__EFFECT__EFFECT_ALLOW)
            continue;
        if (d_record_batch_item(c->d, c->req, c->canon, c->time_ms, c->leaf, items[m],
                                &c->batch_form, c->batch_params, sizeof(c->batch_params)) == 0) {
            m++;
            continue;
        }
        /* No base, no allow (as in per-request mode): it is recorded as a deny. */
        if (downgrade(c, &c->entry, &c->entry_len) < 0) {
            free(c->entry);
            c->entry = NULL;
        }
    }
    if (m == 0)
        return;
    signed_ok = d_batchtree_build(t, (const uint8_t(*)[32])items, m) == 0;
    if (signed_ok) {
        d_batchtree_root(t, root);
        signed_ok = d_record_batch_sign(batch_commit(g[0])->d, m, root, sig, &sig_len) == 0;
    }
    if (signed_ok)
        d_metrics_batch_group(&batch_commit(g[0])->d->metrics, m);
    m = 0;
    for (size_t i = 0; i < n; i++) {
        struct d_commit *c = batch_commit(g[i]);
        size_t k;

        if (c->res.effect != SWORN__V1__EFFECT__EFFECT_ALLOW)
            continue;
        if (signed_ok) {
            /* Its place in the tree is its rank among the allows, as built above. */
            k = d_batchtree_path(t, m, path);
            if (d_record_batch_receipt(c->d, c->batch_form, c->batch_params, c->time_ms, sig,
                                       sig_len, m++, t->n, (const uint8_t(*)[32])path, k,
                                       c->receipt, &c->receipt_len) == 0)
                continue;
        }
        if (downgrade(c, &c->entry, &c->entry_len) < 0) {
            free(c->entry);
            c->entry = NULL;
        }
    }
}

static void group_append(struct d_batch_item *const *g, size_t n)
{
    static _Thread_local const uint8_t *entries[SWORN_BATCH_ITEMS_MAX],
        *receipts[SWORN_BATCH_ITEMS_MAX];
    static _Thread_local size_t lens[SWORN_BATCH_ITEMS_MAX], rlens[SWORN_BATCH_ITEMS_MAX];
    static _Thread_local struct d_commit *live[SWORN_BATCH_ITEMS_MAX];
    size_t k = 0;
    uint64_t first = 0;

    /* A commit whose downgrade could not be packed failed already: not in the transaction. */
    for (size_t i = 0; i < n; i++) {
        struct d_commit *c = batch_commit(g[i]);

        if (c->entry == NULL)
            continue;
        live[k] = c;
        entries[k] = c->entry;
        lens[k] = c->entry_len;
        receipts[k] = c->receipt_len > 0 ? c->receipt : NULL;
        rlens[k] = c->receipt_len;
        k++;
    }
    if (k > 0 && d_record_append_group(live[0]->d, entries, lens, receipts, rlens, k, &first) < 0) {
        for (size_t i = 0; i < k; i++)
            fail_commit(live[i]);
    } else {
        for (size_t i = 0; i < k; i++) {
            live[i]->rc = 0;
            live[i]->index = first + i;
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct d_commit *c = batch_commit(g[i]);

        free(c->entry);
        c->entry = NULL;
    }
}

static void log_commit(struct d_commit *c)
{
    /* The fields given straight to the line writer: one line per decision, no JSON objects. */
    struct d_log_field f[7] = {
        {"request_id", c->req->request_id, 0},
        {"principal", c->req->principal->id, 0},
        {"effect", sworn_frame_effect_name(c->res.effect), 0},
        {"rule", c->res.rule_id, 0},
        {"reason", c->res.reason, 0},
        {"index", NULL, (int64_t)c->index},
        {"credential", NULL, 0},
    };
    size_t n = 6;

    if (c->has_cred && c->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW) {
        f[6].str = c->cred.id;
        n = 7;
    }
    d_log_fields(D_LOG_INFO, c->kind->log_event, f, n);
}

/* Not recorded: give back what the allow charged, answer with an ErrorFrame. */
static void not_recorded(struct d_commit *c, const char *answer)
{
    json_object *f = json_object_new_object();

    sworn_budgets_refund(c->d->budgets, c->charged);
    if (f != NULL) {
        json_object_object_add(f, "request_id", json_object_new_string(c->req->request_id));
        json_object_object_add(f, "msg", json_object_new_string(c->msg));
    }
    d_log(D_LOG_ERROR, "not_recorded", f);
    d_conn_reply_error(c->conn, c->code, answer, c->req->request_id, 0);
}

/* Loop thread: the commit is recorded (or not). */
static void commit_done(void *arg)
{
    struct d_commit *c = arg;

    /* The entry is in the log (or never will be): the sandbox's end may follow it now. */
    d_sandboxes_unpin(c->d->sandboxes, c->sandbox_pin);
    c->sandbox_pin = 0;
    if (c->rc < 0) {
        not_recorded(c, "decision not recorded: denied");
        c->kind->done(c, 0);
        return;
    }
    if (c->downgraded) /* the allow did not happen: give back what it charged */
        sworn_budgets_refund(c->d->budgets, c->charged);
    log_commit(c);
    c->kind->done(c, 1);
}

static void group_done(struct d_batch_item *it)
{
    commit_done(batch_commit(it));
}

const struct d_batch_ops d_commit_batch_ops = {
    .pack = group_pack,
    .fail = group_fail,
    .seal = group_seal,
    .append = group_append,
    .done = group_done,
};

void d_commit_submit(struct d_commit *c)
{
    int rc;

    if (c->charged == NULL)
        c->charged = &c->res;
    if (c->d->batch != NULL)
        rc = d_batch_submit(c->d->batch, &c->batch);
    else
        rc = d_workq_submit(c->d->workq, commit_work, commit_done, c);
    if (rc < 0) {
        c->rc = -1;
        c->code = SWORN_ERR_IO;
        snprintf(c->msg, sizeof(c->msg), "%s", sworn_err_msg());
        d_sandboxes_unpin(c->d->sandboxes, c->sandbox_pin);
        c->sandbox_pin = 0;
        not_recorded(c, "decisiond is stopping: denied");
        c->kind->done(c, 0);
    }
}

void d_commit_answer(struct d_commit *c)
{
    Sworn__V1__DecisionReply reply = SWORN__V1__DECISION_REPLY__INIT;
    Sworn__V1__Decision dec = SWORN__V1__DECISION__INIT;
    Sworn__V1__Receipt *rc = NULL;
    Sworn__V1__Credential cred = SWORN__V1__CREDENTIAL__INIT;
    const char *request_id = c->req->request_id;
    uint8_t *frame = NULL;
    size_t len = 0;
    int allow = c->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW;

    dec.request_id = (char *)request_id;
    dec.effect = c->res.effect;
    dec.rule_id = c->res.rule_id;
    dec.reason = c->res.reason;
    dec.log_index = c->index;
    dec.entry_hash.data = c->leaf;
    dec.entry_hash.len = 32;
    if (allow && c->receipt_len > 0) {
        rc = sworn__v1__receipt__unpack(NULL, c->receipt_len, c->receipt);
        dec.receipt = rc;
    }
    if (allow && c->has_cred) {
        d_recent_remember(&c->d->recent, request_id, c->cred.id, c->index, d_now_mono_us() / 1000u);
        cred.id = c->cred.id;
        cred.header_name = c->cred.header_name;
        cred.query_name = c->cred.query_name;
        cred.form_name = c->cred.form_name;
        cred.value.data = c->cred.value;
        cred.value.len = c->cred.value_len;
        dec.credential = &cred;
    }
    reply.body_case = SWORN__V1__DECISION_REPLY__BODY_DECISION;
    reply.decision = &dec;
    if ((allow && rc == NULL) || sworn_frame_pack_reply(&reply, &frame, &len) < 0) {
        d_log_msg(D_LOG_ERROR, "reply_failed", sworn_err_msg());
        d_conn_reply_error(c->conn, SWORN_ERR_IO, "answer could not be encoded", request_id, 0);
    } else {
        d_conn_reply(c->conn, frame, len);
    }
    if (frame != NULL) {
        /* The frame held the credential value. */
        sworn_memzero(frame, len);
        free(frame);
    }
    if (rc != NULL)
        sworn__v1__receipt__free_unpacked(rc, NULL);
}
