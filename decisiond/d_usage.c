/*
 * d_usage.c -- token usage of model API calls (d_usage.h).
 *
 * A report is refused, and recorded as Refused, unless an allow of model.call of the last 60
 * minutes with that request id and entry index awaits it (d_usage_take consumes it first thing).
 *
 * Order, so that the budgets never count less than the record says:
 *   - usage above the reservation is charged at once, on the loop thread, before the entry is
 *     written: the next decision already sees it, and if the entry then cannot be written the
 *     budget counts more than the record (which errs toward denying);
 *   - usage below the reservation is given back only once the UsageRecorded entry is durable: a
 *     give-back the record does not show never happens.
 * A restart forgets what is held in memory; the replay rebuilds the counters from the record
 * (the allow's reservation, then each UsageRecorded entry's settlement: d_startup.c).
 */
#include "d_usage.h"

#include <stdlib.h>
#include <string.h>

#include "d_clock.h"
#include "d_conn.h"
#include "d_daemon.h"
#include "d_jlog.h"
#include "d_record.h"
#include "err.h"
#include "merkle.h"

int d_usage_init(struct d_usage_table *t)
{
    t->slots = calloc(D_USAGE_PENDING_MAX, sizeof(*t->slots));
    t->admitted = 0;
    if (t->slots == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory for the usage table");
    return 0;
}

void d_usage_free(struct d_usage_table *t)
{
    free(t->slots);
    t->slots = NULL;
}

static int live(const struct d_usage_allow *a, uint64_t now)
{
    /* A slot from the future (cannot happen with a monotonic clock) is not trusted either. */
    return a->mono_ms != 0 && a->mono_ms <= now && now - a->mono_ms <= D_USAGE_TTL_MS;
}

int d_usage_admit(struct d_usage_table *t, uint64_t now_mono_ms)
{
    size_t used = t->admitted;

    if (t->slots == NULL)
        return -1;
    for (size_t i = 0; i < D_USAGE_PENDING_MAX && used < D_USAGE_PENDING_MAX; i++)
        if (live(&t->slots[i], now_mono_ms))
            used++;
    if (used >= D_USAGE_PENDING_MAX)
        return -1;
    t->admitted++;
    return 0;
}

void d_usage_unadmit(struct d_usage_table *t)
{
    if (t->admitted > 0)
        t->admitted--;
}

void d_usage_remember(struct d_usage_table *t, const Sworn__V1__AuthorizationRequest *req,
                      const struct sworn_policy_result *res, uint64_t log_index,
                      const uint8_t leaf[32], uint64_t now_mono_ms)
{
    struct d_usage_allow *slot = NULL;
    const char *why = NULL;

    d_usage_unadmit(t);
    if (t->slots == NULL)
        return;
    /* d_usage_admit kept a place: a slot that is free or whose allow has expired. */
    for (size_t i = 0; i < D_USAGE_PENDING_MAX && slot == NULL; i++)
        if (!live(&t->slots[i], now_mono_ms))
            slot = &t->slots[i];
    if (slot == NULL)
        return;
    memset(slot, 0, sizeof(*slot));
    snprintf(slot->request_id, sizeof(slot->request_id), "%s", req->request_id);
    if (sworn_resource_canon_model(req->resource->model, slot->model, &why) != 0)
        slot->model[0] = '\0';
    slot->log_index = log_index;
    memcpy(slot->leaf, leaf, 32);
    if (req->context != NULL && req->context->token_ceiling != NULL)
        slot->reserved = req->context->token_ceiling->tokens;
    for (size_t i = 0; i < SWORN_POLICY_CHARGES && slot->ncharges < SWORN_POLICY_BUDGET_RULES_MAX;
         i++)
        if (res->charges[i].used && res->charges[i].tokens)
            slot->charges[slot->ncharges++] = res->charges[i];
    slot->mono_ms = now_mono_ms != 0 ? now_mono_ms : 1;
}

int d_usage_take(struct d_usage_table *t, const char *request_id, uint64_t log_index,
                 uint64_t now_mono_ms, struct d_usage_allow *out)
{
    if (t->slots == NULL)
        return 0;
    for (size_t i = 0; i < D_USAGE_PENDING_MAX; i++) {
        struct d_usage_allow *a = &t->slots[i];

        if (!live(a, now_mono_ms) || a->log_index != log_index ||
            strcmp(a->request_id, request_id) != 0)
            continue;
        *out = *a;
        a->mono_ms = 0; /* used: never again */
        return 1;
    }
    return 0;
}

struct usage_job {
    struct d_daemon *d;
    struct d_conn *conn;
    Sworn__V1__UsageReport *u;
    struct d_usage_allow allow;
    uint64_t actual; /* what the budgets count for the allow from now on */
    int rc, code;
    char msg[SWORN_ERR_MSG_MAX];
    uint64_t index;
    uint8_t leaf[32];
};

/* Worker: the UsageRecorded entry, packed and appended. */
static void usage_work(void *arg)
{
    struct usage_job *j = arg;
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__UsageRecorded r = SWORN__V1__USAGE_RECORDED__INIT;
    uint8_t *entry = NULL;
    size_t len = 0;

    r.request_id = j->u->request_id;
    r.allow_request_id = j->allow.request_id;
    r.allow_log_index = j->allow.log_index;
    r.allow_entry_hash.data = j->allow.leaf;
    r.allow_entry_hash.len = 32;
    r.model = j->allow.model;
    r.reported = j->u->reported;
    r.input_tokens = j->u->input_tokens;
    r.output_tokens = j->u->output_tokens;
    r.missing = j->u->missing;
    r.reserved_tokens = j->allow.reserved;
    r.charged_tokens = j->actual;
    r.time_unix_ms = d_now_unix_ms();
    e.kind_case = SWORN__V1__ENTRY__KIND_USAGE_RECORDED;
    e.usage_recorded = &r;
    j->rc = -1;
    if (d_entry_pack(&e, &entry, &len) == 0) {
        sworn_merkle_leaf_hash(entry, len, j->leaf);
        if (d_record_append(j->d, entry, len, NULL, 0, &j->index) == 0)
            j->rc = 0;
    }
    free(entry);
    if (j->rc < 0) {
        j->code = sworn_err_code();
        snprintf(j->msg, sizeof(j->msg), "%s", sworn_err_msg());
    }
}

static void usage_done(void *arg)
{
    struct usage_job *j = arg;
    Sworn__V1__DecisionReply reply = SWORN__V1__DECISION_REPLY__INIT;
    Sworn__V1__UsageResult res = SWORN__V1__USAGE_RESULT__INIT;
    uint8_t *frame = NULL;
    size_t len = 0;
    json_object *f = json_object_new_object();

    /* The record shows less than was reserved: give the rest back only now that it does. */
    if (j->rc == 0 && j->actual < j->allow.reserved)
        sworn_budgets_settle(j->d->budgets, j->allow.charges, j->allow.ncharges, j->actual);
    if (f != NULL) {
        json_object_object_add(f, "request_id", json_object_new_string(j->u->request_id));
        json_object_object_add(f, "allow_request_id", json_object_new_string(j->allow.request_id));
        json_object_object_add(f, "reported", json_object_new_boolean(j->u->reported));
        json_object_object_add(f, "charged_tokens", json_object_new_int64((int64_t)j->actual));
        if (j->rc < 0)
            json_object_object_add(f, "msg", json_object_new_string(j->msg));
        else
            json_object_object_add(f, "index", json_object_new_int64((int64_t)j->index));
    }
    d_log(j->rc < 0 ? D_LOG_ERROR : D_LOG_INFO, "usage_recorded", f);
    if (j->rc < 0) {
        d_conn_reply_error(j->conn, j->code, "usage not recorded", j->u->request_id, 0);
    } else {
        res.request_id = j->u->request_id;
        res.log_index = j->index;
        res.entry_hash.data = j->leaf;
        res.entry_hash.len = 32;
        reply.body_case = SWORN__V1__DECISION_REPLY__BODY_USAGE;
        reply.usage = &res;
        if (sworn_frame_pack_reply(&reply, &frame, &len) < 0) {
            d_conn_reply_error(j->conn, sworn_err_code(), sworn_err_msg(), j->u->request_id, 0);
        } else {
            d_conn_reply(j->conn, frame, len);
            free(frame);
        }
    }
    d_conn_release(j->conn);
    sworn__v1__usage_report__free_unpacked(j->u, NULL);
    free(j);
}

void d_usage_request(struct d_daemon *d, struct d_conn *c, Sworn__V1__UsageReport *u,
                     const uint8_t *body, size_t len)
{
    struct usage_job *j = calloc(1, sizeof(*j));

    if (j == NULL) {
        d_conn_reply_error(c, SWORN_ERR_NOMEM, "out of memory", u->request_id, 0);
        sworn__v1__usage_report__free_unpacked(u, NULL);
        return;
    }
    /* The allow is consumed here, whatever happens next: one report per allow. */
    if (!d_usage_take(&d->usage, u->allow_request_id, u->allow_log_index, d_now_mono_us() / 1000u,
                      &j->allow)) {
        static const char msg[] = "usage report refused: no allow of model.call of the last 60 "
                                  "minutes with that request id and entry index awaits its usage";

        d_record_refused(d, D_CHANNEL_DECISION, d_conn_uid(c), d_conn_pid(c), SWORN_ERR_ARG, msg,
                         u->request_id, body, len);
        d_conn_reply_error(c, SWORN_ERR_ARG, msg, u->request_id, 0);
        sworn__v1__usage_report__free_unpacked(u, NULL);
        free(j);
        return;
    }
    j->d = d;
    j->conn = c;
    j->u = u;
    /* Both counts are at most 2^32 - 1 (frame.c): the sum cannot wrap. */
    j->actual = u->reported ? u->input_tokens + u->output_tokens : j->allow.reserved;
    if (j->actual > j->allow.reserved)
        sworn_budgets_settle(d->budgets, j->allow.charges, j->allow.ncharges, j->actual);
    d_conn_hold(c);
    if (d_workq_submit(d->workq, usage_work, usage_done, j) < 0) {
        d_conn_reply_error(c, SWORN_ERR_IO, "decisiond is stopping", u->request_id, 0);
        d_conn_release(c);
        sworn__v1__usage_report__free_unpacked(u, NULL);
        free(j);
    }
}
