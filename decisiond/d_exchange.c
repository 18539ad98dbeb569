/*
 * d_exchange.c -- OAuth token interception (d_exchange.h).
 *
 * An exchange that no allow of the last 10 minutes backs with that very credential and request
 * is refused and recorded as Refused; so is one when no vault is configured.
 */
#include "d_exchange.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "d_conn.h"
#include "d_daemon.h"
#include "d_record.h"
#include "d_jlog.h"
#include "err.h"
#include "merkle.h"
#include "wipe.h"

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

/* Wipe the real token values of ex, then free it. */
static void exchange_msg_free(Sworn__V1__TokenExchange *ex)
{
    for (size_t i = 0; i < ex->n_tokens; i++)
        sworn_memzero(ex->tokens[i]->value.data, ex->tokens[i]->value.len);
    sworn__v1__token_exchange__free_unpacked(ex, NULL);
}

static void exchange_free(struct exchange_job *j)
{
    if (j->ex != NULL)
        exchange_msg_free(j->ex);
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

void d_exchange_request(struct d_daemon *d, struct d_conn *c, Sworn__V1__TokenExchange *ex,
                        const uint8_t *body, size_t len)
{
    struct exchange_job *j;
    const char *why = NULL;

    if (d->vault == NULL)
        why = "no vault is configured";
    else if (!d_recent_was_allowed(&d->recent, ex->allow_request_id, ex->credential_id,
                                   d_now_unix_ms()))
        why = "no recent allow released that credential for that request";
    if (why != NULL) {
        char msg[SWORN_ERR_MSG_MAX];

        snprintf(msg, sizeof(msg), "token exchange refused: %s", why);
        d_record_refused(d, D_CHANNEL_DECISION, d_conn_uid(c), d_conn_pid(c), SWORN_ERR_ARG, msg,
                         ex->request_id, body, len);
        d_conn_reply_error(c, SWORN_ERR_ARG, msg, ex->request_id, 0);
        exchange_msg_free(ex);
        return;
    }
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        d_conn_reply_error(c, SWORN_ERR_NOMEM, "out of memory", ex->request_id, 0);
        exchange_msg_free(ex);
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
