/*
 * d_escalate.c -- requests held for an operator, and their resolution (d_escalate.h).
 */
#include "d_escalate.h"

#include <stdlib.h>
#include <string.h>

#include "d_commit.h"
#include "d_conn.h"
#include "d_daemon.h"
#include "d_record.h"
#include "d_sandboxes.h"
#include "d_seen.h"
#include "err.h"

#define D_OPERATOR_MAX 256

struct d_held {
    struct d_conn *conn; /* held */
    Sworn__V1__AuthorizationRequest *req;
    struct sworn_policy_result res; /* the escalating result */
    uint64_t index;                 /* its escalate entry: log index, */
    uint8_t leaf[32];               /* and leaf hash */
    uint64_t since_unix_ms, deadline_unix_ms;
    struct event *timer;
    struct d_escalations *table; /* NULL once detached */
    struct d_held *prev, *next;
};

struct d_escalations {
    struct d_daemon *d;
    struct d_held *head;
    unsigned n;
    struct d_seen_ids *seen; /* the request ids taken (d_seen.h) */
};

/* A resolution on its way through the commit step. */
struct resolve_job {
    struct d_commit c; /* first: the commit's callbacks cast back */
    struct d_held *held;
    struct sworn_resource_canonical canon; /* of the held request's resource (c.canon) */
    char operator_[D_OPERATOR_MAX + 1];
    d_resolved_fn on_recorded;
    void *arg;
};

int d_escalations_new(struct d_daemon *d, struct d_escalations **out)
{
    struct d_escalations *e = calloc(1, sizeof(*e));

    if (e == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "escalations: out of memory");
    if (d_seen_new(&e->seen) < 0) {
        free(e);
        return -1;
    }
    e->d = d;
    *out = e;
    return 0;
}

static void detach(struct d_held *h)
{
    struct d_escalations *e = h->table;

    if (e == NULL)
        return;
    if (h->prev != NULL)
        h->prev->next = h->next;
    else
        e->head = h->next;
    if (h->next != NULL)
        h->next->prev = h->prev;
    h->prev = h->next = NULL;
    h->table = NULL;
    e->n--;
    atomic_store(&e->d->metrics.escalations_pending, e->n);
    if (h->timer != NULL)
        evtimer_del(h->timer);
}

static void held_free(struct d_held *h)
{
    if (h == NULL)
        return;
    detach(h);
    if (h->timer != NULL)
        event_free(h->timer);
    if (h->req != NULL)
        sworn__v1__authorization_request__free_unpacked(h->req, NULL);
    if (h->conn != NULL)
        d_conn_release(h->conn);
    free(h);
}

void d_escalations_free(struct d_escalations *e)
{
    if (e == NULL)
        return;
    while (e->head != NULL)
        held_free(e->head);
    d_seen_free(e->seen);
    free(e);
}

/* Worker: the EscalationResolved entry for the job as it stands. */
static int pack_resolution(const struct d_commit *c, uint8_t **out, size_t *len)
{
    const struct resolve_job *j = (const struct resolve_job *)c;
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__EscalationResolved er = SWORN__V1__ESCALATION_RESOLVED__INIT;

    er.request_id = c->req->request_id;
    er.effect = c->res.effect;
    er.operator_ = (char *)j->operator_;
    er.reason = (char *)c->res.reason;
    er.escalation_index = j->held->index;
    er.escalation_hash.data = (uint8_t *)j->held->leaf;
    er.escalation_hash.len = sizeof(j->held->leaf);
    er.time_unix_ms = c->time_ms; /* the key that signs its receipt must be valid then */
    e.kind_case = SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED;
    e.escalation_resolved = &er;
    return d_entry_pack(&e, out, len);
}

static void resolution_done(struct d_commit *c, int recorded)
{
    struct resolve_job *j = (struct resolve_job *)c;

    if (recorded) {
        /* An operator's answer: its wait is not decisiond's latency. */
        atomic_fetch_add(&c->d->metrics.decisions[c->res.effect - 1], 1);
        d_commit_answer(c);
    }
    if (j->on_recorded != NULL)
        j->on_recorded(j->arg, recorded, recorded ? c->index : 0);
    held_free(j->held); /* releases the held connection */
    d_commit_wipe(c);
    free(j);
}

static const struct d_commit_kind resolution_kind = {"escalation_resolved", pack_resolution,
                                                     resolution_done};

/* Resolve h (detached from the table; taken over here). */
static void resolve(struct d_daemon *d, struct d_held *h, int approve, const char *operator_,
                    const char *reason, d_resolved_fn on_recorded, void *arg)
{
    struct resolve_job *j = calloc(1, sizeof(*j));
    struct d_commit *c;

    if (j == NULL) {
        d_conn_reply_error(h->conn, SWORN_ERR_NOMEM, "out of memory: denied", h->req->request_id,
                           0);
        if (on_recorded != NULL)
            on_recorded(arg, 0, 0);
        held_free(h);
        return;
    }
    c = &j->c;
    j->held = h;
    sworn_resource_canonicalise(h->req->resource, &j->canon);
    c->canon = &j->canon;
    j->on_recorded = on_recorded;
    j->arg = arg;
    snprintf(j->operator_, sizeof(j->operator_), "%s", operator_);
    c->kind = &resolution_kind;
    c->d = d;
    c->conn = h->conn;
    c->req = h->req;
    c->charged = &h->res;
    c->time_ms = d_now_unix_ms();
    memcpy(c->policy_digest, d->policy_digest, 32);
    c->res = h->res;
    memset(c->res.charges, 0, sizeof(c->res.charges)); /* escalations charge no budget */
    c->res.effect = approve ? SWORN__V1__EFFECT__EFFECT_ALLOW : SWORN__V1__EFFECT__EFFECT_DENY;
    if (reason != NULL && reason[0] != '\0')
        snprintf(c->res.reason, sizeof(c->res.reason), "%s", reason);
    else
        snprintf(c->res.reason, sizeof(c->res.reason), "%s by %s", approve ? "approved" : "denied",
                 operator_);
    if (approve && d->cfg->tpm_required && !atomic_load(&d->tpm_ok)) {
        c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
        snprintf(c->res.reason, sizeof(c->res.reason),
                 "denied: the TPM cannot quote and tpm.required is set");
    }
    /* An approval lets the request out now, so its sandbox must run now: one that ended (or is
     * ending) while the request was held turns the approval into a deny; else it is pinned
     * until this entry is appended, before the sandbox's end (d_sandboxes.h). */
    if (c->res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW &&
        d_sandboxes_admit(d->sandboxes, h->req->principal, &c->sandbox_pin, c->res.reason,
                          sizeof(c->res.reason)) < 0)
        c->res.effect = SWORN__V1__EFFECT__EFFECT_DENY;
    d_commit_release_credential(c);
    d_commit_submit(c);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct d_held *h = arg;
    struct d_daemon *d = h->table->d;

    (void)fd;
    (void)what;
    detach(h);
    resolve(d, h, 0, "timeout", "denied: no operator decision before the deadline", NULL, NULL);
}

static struct d_held *held_at(struct d_escalations *e, uint64_t index)
{
    for (struct d_held *h = e->head; h != NULL; h = h->next)
        if (h->index == index)
            return h;
    return NULL;
}

int d_escalation_claim_id(struct d_escalations *e, const char *request_id, char *why, size_t cap)
{
    for (struct d_held *h = e->head; h != NULL; h = h->next)
        if (strcmp(h->req->request_id, request_id) == 0) {
            snprintf(why, cap,
                     "denied: duplicate request id: a request with this id is held for an "
                     "operator (escalation at log index %llu)",
                     (unsigned long long)h->index);
            return -1;
        }
    if (d_seen_take(e->seen, request_id)) {
        snprintf(why, cap,
                 "denied: duplicate request id: decisiond took this id among its last %u "
                 "requests",
                 D_SEEN_IDS);
        return -1;
    }
    return 0;
}

int d_escalation_hold(struct d_daemon *d, struct d_conn *c, Sworn__V1__AuthorizationRequest *req,
                      const struct sworn_policy_result *res, uint64_t index, const uint8_t leaf[32],
                      uint64_t timeout_ms)
{
    struct d_escalations *e = d->esc;
    struct d_held *h = calloc(1, sizeof(*h));
    struct timeval tv = {(time_t)(timeout_ms / 1000), (suseconds_t)(timeout_ms % 1000) * 1000};

    if (h == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "escalation: out of memory");
    h->timer = evtimer_new(d->base, on_deadline, h);
    if (h->timer == NULL || evtimer_add(h->timer, &tv) != 0) {
        if (h->timer != NULL)
            event_free(h->timer);
        free(h);
        return sworn_err_set(SWORN_ERR_NOMEM, "escalation: cannot arm its deadline");
    }
    h->conn = c;
    d_conn_hold(c);
    h->req = req;
    h->res = *res;
    h->index = index;
    memcpy(h->leaf, leaf, sizeof(h->leaf));
    h->since_unix_ms = d_now_unix_ms();
    h->deadline_unix_ms = h->since_unix_ms + timeout_ms;
    h->table = e;
    h->next = e->head;
    if (e->head != NULL)
        e->head->prev = h;
    e->head = h;
    e->n++;
    atomic_store(&d->metrics.escalations_pending, e->n);
    return 0;
}

unsigned d_escalations_pending(const struct d_escalations *e)
{
    return e->n;
}

/*
 * Put h into page (k of cap, in ascending index) if it is among the cap lowest seen so far; the
 * one that falls off the end, if any, is forgotten. Returns the new count.
 */
static size_t page_insert(struct d_held **page, size_t k, size_t cap, struct d_held *h)
{
    size_t i;

    if (k == cap && h->index > page[k - 1]->index)
        return k;
    if (k < cap)
        k++;
    for (i = k - 1; i > 0 && page[i - 1]->index > h->index; i--)
        page[i] = page[i - 1];
    page[i] = h;
    return k;
}

int d_escalations_list(struct d_escalations *e, uint64_t from_index,
                       Sworn__V1__ListEscalationsResponse *out)
{
    struct d_held *page[SWORN_FRAME_ESCALATIONS_PAGE];
    size_t k = 0, matching = 0;

    sworn__v1__list_escalations_response__init(out);
    out->total = e->n;
    /* The SWORN_FRAME_ESCALATIONS_PAGE lowest indexes from from_index on: one pass, no sort of
     * the whole table (it may hold escalation.max_pending). Indexes are unique: one escalate
     * entry each. */
    for (struct d_held *h = e->head; h != NULL; h = h->next) {
        if (h->index < from_index)
            continue;
        matching++;
        k = page_insert(page, k, SWORN_FRAME_ESCALATIONS_PAGE, h);
    }
    out->more = matching > k;
    if (k == 0)
        return 0;
    out->pending = calloc(k, sizeof(*out->pending));
    if (out->pending == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "escalations: out of memory");
    for (size_t i = 0; i < k; i++) {
        struct d_held *h = page[i];
        Sworn__V1__PendingEscalation *p = calloc(1, sizeof(*p));

        if (p == NULL) {
            d_escalations_list_free(out);
            return sworn_err_set(SWORN_ERR_NOMEM, "escalations: out of memory");
        }
        sworn__v1__pending_escalation__init(p);
        p->request = h->req; /* borrowed: the list is freed before the table changes */
        p->since_unix_ms = h->since_unix_ms;
        p->deadline_unix_ms = h->deadline_unix_ms;
        p->log_index = h->index;
        p->entry_hash.data = h->leaf;
        p->entry_hash.len = sizeof(h->leaf);
        out->pending[i] = p;
        out->n_pending = i + 1;
    }
    return 0;
}

void d_escalations_list_free(Sworn__V1__ListEscalationsResponse *out)
{
    for (size_t i = 0; i < out->n_pending; i++)
        free(out->pending[i]);
    free(out->pending);
    out->pending = NULL;
    out->n_pending = 0;
}

int d_escalation_resolve(struct d_daemon *d, const struct d_resolve_target *t, int approve,
                         const char *operator_, const char *reason, d_resolved_fn on_recorded,
                         void *arg)
{
    struct d_held *h = held_at(d->esc, t->index);

    if (h == NULL)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "no escalation is held at log index %llu",
                             (unsigned long long)t->index);
    if (t->leaf != NULL && memcmp(t->leaf, h->leaf, sizeof(h->leaf)) != 0)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "the escalation held at log index %llu has another entry hash",
                             (unsigned long long)t->index);
    if (t->request_id != NULL && t->request_id[0] != '\0' &&
        strcmp(t->request_id, h->req->request_id) != 0)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "the escalation held at log index %llu has another request id",
                             (unsigned long long)t->index);
    detach(h);
    resolve(d, h, approve, operator_, reason, on_recorded, arg);
    return 0;
}

void d_escalations_deny_all(struct d_daemon *d, const char *reason)
{
    while (d->esc->head != NULL) {
        struct d_held *h = d->esc->head;

        detach(h);
        resolve(d, h, 0, "shutdown", reason, NULL, NULL);
    }
}
