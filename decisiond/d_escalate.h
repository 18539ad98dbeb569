/*
 * d_escalate.h -- requests held for an operator, and their resolution.
 *
 * An escalated request is first recorded (a DecisionRecord with effect ESCALATE, d_decide.c),
 * then held here with its connection until an operator approves or denies it on the admin socket
 * (d_admin.c), or its deadline passes (a deny by "timeout"). Either way the resolution goes
 * through the commit step (d_commit.h) as an EscalationResolved entry, with a receipt for an
 * allow, before the proxy gets the final answer. The table is bounded by escalation.max_pending:
 * past it, new escalations are denied at once (d_decide.c).
 *
 * Loop thread only.
 */
#ifndef SWORN_D_ESCALATE_H
#define SWORN_D_ESCALATE_H

#include <stdint.h>

#include "frame.h"
#include "policy.h"

struct d_daemon;
struct d_conn;
struct d_escalations;

/* Called once a resolution is recorded (ok 1, index of its entry) or is not (ok 0). */
typedef void (*d_resolved_fn)(void *arg, int ok, uint64_t index);

int d_escalations_new(struct d_daemon *d, struct d_escalations **out);
/* Free the table and every held request (their connections get no answer). NULL is allowed. */
void d_escalations_free(struct d_escalations *e);

/*
 * Hold request req (owned by the table from now on, on success) of connection c until resolved
 * or timeout_ms passes. res is the escalating policy result. 0, or -1 (req still the caller's).
 */
int d_escalation_hold(struct d_daemon *d, struct d_conn *c, Sworn__V1__AuthorizationRequest *req,
                      const struct sworn_policy_result *res, uint64_t timeout_ms);

unsigned d_escalations_pending(const struct d_escalations *e);

/* Fill a ListEscalationsResponse (items allocated; free with d_escalations_list_free). */
int d_escalations_list(struct d_escalations *e, Sworn__V1__ListEscalationsResponse *out);
void d_escalations_list_free(Sworn__V1__ListEscalationsResponse *out);

/*
 * Resolve the held request request_id: approve (an allow, unless tpm.required fails or its
 * credential is not released) or deny, by operator_ with reason (NULL or "" for "approved by
 * ..."/"denied by ..."). Records the EscalationResolved entry, then answers the held connection.
 * Returns 0 when it was held (on_recorded, when not NULL, is then called exactly once), or -1
 * with SWORN_ERR_NOTFOUND when no such request is held.
 */
int d_escalation_resolve(struct d_daemon *d, const char *request_id, int approve,
                         const char *operator_, const char *reason, d_resolved_fn on_recorded,
                         void *arg);

/* Deny every held request (shutdown), operator "shutdown". */
void d_escalations_deny_all(struct d_daemon *d, const char *reason);

#endif
