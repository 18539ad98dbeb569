/*
 * d_local.h -- the in-process entry point: submit a request to a running engine (struct
 * d_daemon with its policy, log, signer and workers) and get the answer by callback, without a
 * socket. It drives exactly what the sockets drive: the request is packed and decoded strictly
 * (wire/frame.h), handed to its channel's handler table (d_dispatch.h) through a local
 * connection (d_conn.h), decided, recorded before the answer, and answered. So policy and
 * decision logic can be tested, and embedded, without starting the whole stack.
 *
 * Loop thread only: the caller is the thread that runs d->base, and the answers come while it
 * runs the loop (d_local_wait runs it until an answer is in).
 */
#ifndef SWORN_D_LOCAL_H
#define SWORN_D_LOCAL_H

#include <sys/types.h>

#include "frame.h"

struct d_daemon;

/* The answer to a decision request (valid during the call only). NULL: it did not decode. */
typedef void (*d_local_decision_fn)(void *arg, const Sworn__V1__DecisionReply *reply);
/* The answer to an admin request (valid during the call only). NULL: it did not decode. */
typedef void (*d_local_admin_fn)(void *arg, const Sworn__V1__AdminResponse *resp);

/*
 * Submit m as if peer uid (with this process's pid) had sent it on the decision socket. on_answer
 * is called exactly once with the answer: perhaps before this returns (a refusal), else from the
 * loop (an escalation: once it is resolved). Returns 0, or -1 (m does not pack: its shape is
 * wrong; or out of memory) with on_answer never called.
 */
int d_local_decide(struct d_daemon *d, const Sworn__V1__DecisionRequest *m, uid_t uid,
                   d_local_decision_fn on_answer, void *arg);

/* As d_local_decide, for the admin socket (the peer uid names the operator in the record). */
int d_local_admin(struct d_daemon *d, const Sworn__V1__AdminRequest *m, uid_t uid,
                  d_local_admin_fn on_answer, void *arg);

/*
 * Run d's event loop until *flag is nonzero or timeout_ms pass. Returns 0 when *flag is set, -1
 * (SWORN_ERR_IO) at the deadline.
 */
int d_local_wait(struct d_daemon *d, const int *flag, int timeout_ms);

#endif
