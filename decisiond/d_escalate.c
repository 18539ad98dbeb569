/*
 * d_escalate.c -- requests held for an operator (d_daemon.h).
 *
 * An escalated request is first recorded (a DecisionRecord with effect ESCALATE), then held here
 * with its connection until an operator approves or denies it on the admin socket, or its
 * deadline passes (a deny by "timeout"). Either way an EscalationResolved entry is recorded
 * before the proxy gets the final answer. The table is bounded by escalation.max_pending: past
 * it, new escalations are denied at once (d_decide.c).
 */
#include <stdlib.h>
#include <string.h>

#include "d_daemon.h"
#include "d_jlog.h"
#include "err.h"

struct d_escalations {
    struct d_daemon *d;
    struct d_held *head;
    unsigned n;
};

int d_escalations_new(struct d_daemon *d, struct d_escalations **out)
{
    struct d_escalations *e = calloc(1, sizeof(*e));

    if (e == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "escalations: out of memory");
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

void d_held_free(struct d_held *h)
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
        d_held_free(e->head);
    free(e);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct d_held *h = arg;
    struct d_daemon *d = h->table->d;

    (void)fd;
    (void)what;
    detach(h);
    d_decide_resolve(d, h, 0, "timeout", "denied: no operator decision before the deadline", NULL,
                     NULL);
}

int d_escalation_hold(struct d_daemon *d, struct d_conn *c, Sworn__V1__AuthorizationRequest *req,
                      const struct sworn_policy_result *res, uint64_t timeout_ms)
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

int d_escalations_list(struct d_escalations *e, Sworn__V1__ListEscalationsResponse *out)
{
    size_t i = 0;

    sworn__v1__list_escalations_response__init(out);
    if (e->n == 0)
        return 0;
    out->pending = calloc(e->n, sizeof(*out->pending));
    if (out->pending == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "escalations: out of memory");
    for (struct d_held *h = e->head; h != NULL; h = h->next) {
        Sworn__V1__PendingEscalation *p = calloc(1, sizeof(*p));

        if (p == NULL) {
            d_escalations_list_free(out);
            return sworn_err_set(SWORN_ERR_NOMEM, "escalations: out of memory");
        }
        sworn__v1__pending_escalation__init(p);
        p->request = h->req; /* borrowed: the list is freed before the table changes */
        p->since_unix_ms = h->since_unix_ms;
        p->deadline_unix_ms = h->deadline_unix_ms;
        out->pending[i++] = p;
        out->n_pending = i;
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

struct d_held *d_escalation_take(struct d_escalations *e, const char *request_id)
{
    for (struct d_held *h = e->head; h != NULL; h = h->next)
        if (strcmp(h->req->request_id, request_id) == 0) {
            detach(h);
            return h;
        }
    return NULL;
}

void d_escalations_deny_all(struct d_daemon *d, const char *reason)
{
    while (d->esc->head != NULL) {
        struct d_held *h = d->esc->head;

        detach(h);
        d_decide_resolve(d, h, 0, "shutdown", reason, NULL, NULL);
    }
}
