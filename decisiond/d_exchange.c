/*
 * d_exchange.c -- OAuth token interception (d_exchange.h).
 *
 * An exchange is refused, and recorded as Refused, unless an allow of the last 10 minutes that
 * no exchange used yet released that very credential for that request (d_recent_take consumes
 * it on the loop thread, before anything else happens: a replay, or a second exchange racing
 * the first, finds nothing); so is one when no vault is configured. An exchange that fails
 * later has used up its allow all the same (fail closed: the proxy must not pass the tokens on,
 * and its client repeats the token request, which needs a new allow).
 *
 * The worker's order, so that every effect is recorded before it happens:
 *   1. sworn_vault_mint_begin: the ids, symbolic tokens and replacements (the per-credential
 *      cap) are chosen; nothing is stored yet
 *   2. the CredentialsMinted entry (hashes, replaced ids, the allow's index) is made durable
 *   3. sworn_vault_mint_commit: the vault file is rewritten (outside the lock releases take),
 *      then the new credentials replace the old ones in memory
 *   4. the proxy gets the symbolic tokens
 * A failure at 1 or 2 stores nothing; a failure at 3 leaves an entry that names a mint which did
 * not happen (the tokens were never stored, nothing was replaced). Either way the proxy gets an
 * ErrorFrame and a Refused entry records the failure (after 3, naming the entry's index). The
 * opposite order would let a crash between the two leave tokens stored and credentials replaced
 * with no entry at all.
 */
#include "d_exchange.h"

#include <stdlib.h>
#include <string.h>

#include "d_conn.h"
#include "d_daemon.h"
#include "d_record.h"
#include "d_jlog.h"
#include "err.h"
#include "merkle.h"
#include "wipe.h"

_Static_assert(SWORN_VAULT_REPLACED_MAX == SWORN_FRAME_REPLACED_MAX,
               "a mint replaces no more ids than an entry may name");
_Static_assert(SWORN_VAULT_MINT_BATCH_MAX == SWORN_FRAME_EXCHANGE_MAX,
               "a mint stores every token of one exchange");

struct exchange_job {
    struct d_daemon *d;
    struct d_conn *conn;
    Sworn__V1__TokenExchange *ex; /* holds the real values: wiped before it is freed */
    uint64_t allow_index;         /* the allow this exchange consumed */
    struct sworn_vault_mint mint; /* holds the symbolic tokens: wiped before it is freed */
    int rc, code;
    int void_entry; /* the entry is durable but the vault was not written */
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
    sworn_memzero(&j->mint, sizeof(j->mint));
    free(j);
}

/* Worker: the CredentialsMinted entry of the prepared mint, packed and appended. 0 or -1. */
static int record_minted(struct exchange_job *j)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__CredentialsMinted cm = SWORN__V1__CREDENTIALS_MINTED__INIT;
    Sworn__V1__MintedCredential mc[SWORN_FRAME_EXCHANGE_MAX], *mcp[SWORN_FRAME_EXCHANGE_MAX];
    char *replaced[SWORN_FRAME_REPLACED_MAX];
    uint8_t *entry = NULL;
    size_t len = 0;
    int rc;

    for (size_t i = 0; i < j->mint.n; i++) {
        sworn__v1__minted_credential__init(&mc[i]);
        mc[i].field = j->ex->tokens[i]->field;
        mc[i].credential_id = j->mint.minted[i].id;
        mc[i].value_sha256.data = j->mint.minted[i].value_sha256;
        mc[i].value_sha256.len = 32;
        mc[i].symbolic_sha256.data = j->mint.minted[i].symbolic_sha256;
        mc[i].symbolic_sha256.len = 32;
        mcp[i] = &mc[i];
    }
    for (size_t i = 0; i < j->mint.n_replaced; i++)
        replaced[i] = j->mint.replaced[i];
    cm.request_id = j->ex->request_id;
    cm.allow_request_id = j->ex->allow_request_id;
    cm.from_credential_id = j->ex->credential_id;
    cm.minted = mcp;
    cm.n_minted = j->mint.n;
    cm.time_unix_ms = d_now_unix_ms();
    cm.replaced_credential_ids = replaced;
    cm.n_replaced_credential_ids = j->mint.n_replaced;
    cm.allow_log_index = j->allow_index;
    e.kind_case = SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED;
    e.credentials_minted = &cm;
    if (d_entry_pack(&e, &entry, &len) < 0)
        return -1;
    sworn_merkle_leaf_hash(entry, len, j->leaf);
    rc = d_record_append(j->d, entry, len, NULL, 0, &j->index);
    free(entry);
    return rc;
}

/* Worker: prepare the mint, record it, then store it (the order of the top of this file). */
static void exchange_work(void *arg)
{
    struct exchange_job *j = arg;
    struct sworn_vault_token t[SWORN_FRAME_EXCHANGE_MAX];

    j->rc = -1;
    for (size_t i = 0; i < j->ex->n_tokens; i++) {
        const char *field = j->ex->tokens[i]->field;

        t[i].value = j->ex->tokens[i]->value.data;
        t[i].len = j->ex->tokens[i]->value.len;
        /* Where each OAuth token is sent later (docs/decisiond.md, "OAuth token interception"):
         * an access token in Authorization (RFC 6750 2.1; the proxy sends "Bearer <token>" as
         * the value), a refresh token in the token request's form body (RFC 6749 section 6);
         * any other field where the credential it came from goes. */
        t[i].header = strcmp(field, "access_token") == 0 ? "authorization" : NULL;
        t[i].form = strcmp(field, "refresh_token") == 0 ? "refresh_token" : NULL;
    }
    if (sworn_vault_mint_begin(j->d->vault, j->ex->credential_id, t, j->ex->n_tokens, &j->mint) < 0)
        goto fail;
    if (record_minted(j) < 0) {
        sworn_vault_mint_abort(&j->mint);
        goto fail;
    }
    if (sworn_vault_mint_commit(&j->mint) < 0) {
        j->void_entry = 1;
        goto fail;
    }
    j->rc = 0;
    return;
fail:
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
        /* Recorded like any refused request (a token value the vault refuses, a vault that
         * cannot be written); when the log itself failed, this fails the same way. */
        char msg[SWORN_ERR_MSG_MAX];

        if (j->void_entry)
            snprintf(msg, sizeof(msg),
                     "token exchange not stored: the vault was not written after entry %llu: "
                     "%.150s",
                     (unsigned long long)j->index, j->msg);
        else
            snprintf(msg, sizeof(msg), "token exchange not stored: %.200s", j->msg);
        d_record_refused(j->d, D_CHANNEL_DECISION, d_conn_uid(j->conn), d_conn_pid(j->conn),
                         j->code, msg, j->ex->request_id, NULL, 0);
    }
    if (j->rc < 0) {
        d_conn_reply_error(j->conn, j->code, "tokens not stored", j->ex->request_id, 0);
    } else {
        for (size_t i = 0; i < j->ex->n_tokens; i++) {
            sworn__v1__minted_token__init(&mt[i]);
            mt[i].field = j->ex->tokens[i]->field;
            mt[i].symbolic = j->mint.minted[i].symbolic;
            mt[i].credential_id = j->mint.minted[i].id;
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
    uint64_t allow_index = 0;

    /* The allow is consumed here, whatever happens next: one exchange per allow. */
    if (d->vault == NULL)
        why = "no vault is configured";
    else if (!d_recent_take(&d->recent, ex->allow_request_id, ex->credential_id,
                            d_now_mono_us() / 1000u, &allow_index))
        why = "no allow of the last 10 minutes that released that credential for that request "
              "is left unexchanged";
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
    j->allow_index = allow_index;
    d_conn_hold(c);
    if (d_workq_submit(d->workq, exchange_work, exchange_done, j) < 0) {
        d_conn_reply_error(c, SWORN_ERR_IO, "decisiond is stopping", ex->request_id, 0);
        d_conn_release(c);
        exchange_free(j);
    }
}
