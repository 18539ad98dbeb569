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
 * A held request is named by its escalate entry's log index (and leaf hash), never by its request
 * id alone: the proxy chooses ids, so an id names whatever request last came with it. The
 * operator lists the held requests with their indexes and resolves one by index; the
 * EscalationResolved entry records that index and hash, and sworn-verify links the two. The table
 * also keeps the ids decisiond has taken (d_seen.h), so that a request whose id is held here or
 * was taken recently is denied before the policy runs (d_decide.c, d_escalation_claim_id).
 *
 * Loop thread only.
 */
#ifndef SWORN_D_ESCALATE_H
#define SWORN_D_ESCALATE_H

#include <stddef.h>
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
 * Take request_id for a new decision. Returns 0 when it is neither held nor among the last
 * D_SEEN_IDS ids taken (it is remembered from now on), else -1 with why (capacity
 * SWORN_POLICY_REASON_MAX + 1) saying which: the deny's reason.
 */
int d_escalation_claim_id(struct d_escalations *e, const char *request_id, char *why, size_t cap);

/*
 * Hold request req (owned by the table from now on, on success) of connection c until resolved
 * or timeout_ms passes. res is the escalating policy result; index and leaf are the log index and
 * leaf hash of its escalate entry. 0, or -1 (req still the caller's).
 */
int d_escalation_hold(struct d_daemon *d, struct d_conn *c, Sworn__V1__AuthorizationRequest *req,
                      const struct sworn_policy_result *res, uint64_t index, const uint8_t leaf[32],
                      uint64_t timeout_ms);

unsigned d_escalations_pending(const struct d_escalations *e);

/*
 * Fill a ListEscalationsResponse with one page: the held requests whose escalate entry's index is
 * at least from_index, lowest first, at most SWORN_FRAME_ESCALATIONS_PAGE; more set when others
 * above the last one listed are held; total, how many are held in all. The page borrows the held
 * requests: free it (d_escalations_list_free, which frees only what this allocated) before the
 * table changes. 0, or -1 (out of memory; out then lists nothing).
 */
int d_escalations_list(struct d_escalations *e, uint64_t from_index,
                       Sworn__V1__ListEscalationsResponse *out);
void d_escalations_list_free(Sworn__V1__ListEscalationsResponse *out);

/* What names the held request to resolve (a ResolveRequest's fields). */
struct d_resolve_target {
    uint64_t index;         /* log index of its escalate entry; required */
    const uint8_t *leaf;    /* NULL, or that entry's leaf hash (32 bytes), which must match */
    const char *request_id; /* NULL or "", or the held request's id, which must match */
};

/*
 * Resolve the held request whose escalate entry is at t->index: approve (an allow, unless
 * tpm.required fails or its credential is not released) or deny, by operator_ with reason (NULL
 * or "" for "approved by ..."/"denied by ..."). Records the EscalationResolved entry (with that
 * index and leaf hash), then answers the held connection. Returns 0 when it was held
 * (on_recorded, when not NULL, is then called exactly once), or -1 with sworn_err set and the
 * request still held: SWORN_ERR_NOTFOUND when nothing is held at that index, SWORN_ERR_VERIFY
 * when t->leaf or t->request_id is not the held entry's.
 */
int d_escalation_resolve(struct d_daemon *d, const struct d_resolve_target *t, int approve,
                         const char *operator_, const char *reason, d_resolved_fn on_recorded,
                         void *arg);

/* Deny every held request (shutdown), operator "shutdown". */
void d_escalations_deny_all(struct d_daemon *d, const char *reason);

#endif
