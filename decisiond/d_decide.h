/*
 * d_decide.h -- a fresh decision: the tpm.required gate, policy (+ budgets), the escalation cap,
 * the credential for an allow, then the commit step (d_commit.h); an escalation, once recorded,
 * is held for an operator (d_escalate.h). Loop thread.
 */
#ifndef SWORN_D_DECIDE_H
#define SWORN_D_DECIDE_H

#include "frame.h"

struct d_daemon;
struct d_conn;

/*
 * Decide req (strictly decoded; owned from now on) of connection c, whose request is in flight.
 * The answer (a Decision, or an ErrorFrame when nothing could be recorded) goes to c once the
 * decision's entry is durable; an escalation's answer comes when it is resolved.
 */
void d_decide_request(struct d_daemon *d, struct d_conn *c, Sworn__V1__AuthorizationRequest *req);

#endif
