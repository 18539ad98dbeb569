/*
 * d_commit.h -- the one commit step of the decision path, shared by fresh decisions (d_decide.c)
 * and escalation resolutions (d_escalate.c): record before effect.
 *
 *   loop thread:  the caller fills a struct d_commit (the request, the policy result, the
 *                 released credential) and calls d_commit_submit
 *   worker:       pack the entry (the kind's pack), leaf hash, receipt signature for an allow,
 *                 append entry + receipt in one durable transaction. A receipt that cannot be
 *                 signed turns the allow into a recorded deny (the allow was never written).
 *                 With `receipts: batch` the batcher does this for a whole group instead: one
 *                 signature, one transaction (d_batch.h)
 *   loop thread:  unpin the request's sandbox (d_sandboxes.h: its end may now be appended);
 *                 refund the budgets an allow charged when it did not happen; on a failure,
 *                 answer with an ErrorFrame (the proxy treats it as a deny); log the line; then
 *                 the kind's done, which answers a success (d_commit_answer) or holds it
 *
 * A kind is a const table (struct d_commit_kind). The caller embeds struct d_commit as the FIRST
 * member of its own job, so the kind's functions get their job back with a cast.
 *
 * The request's resource is canonicalised once per commit, by the caller, into a struct
 * sworn_resource_canonical that the job owns like the request (policy/resource.h; `canon`, never
 * NULL, the canonical form of exactly req->resource, not changed after d_commit_submit): the
 * policy matched it, and the credential's release, the entry's canonical_resource and the
 * receipt's signature base read the same one, instead of writing 19 KiB again each.
 *
 * Loop thread, except the kind's pack, which runs on a worker and must read only the commit.
 */
#ifndef SWORN_D_COMMIT_H
#define SWORN_D_COMMIT_H

#include <stddef.h>
#include <stdint.h>

#include "d_batch.h"
#include "err.h"
#include "frame.h"
#include "logstore.h"
#include "policy.h"
#include "resource.h"
#include "vault.h"

struct d_daemon;
struct d_conn;
struct d_commit;

struct d_commit_kind {
    const char *log_event; /* the log line's event: "decision", "escalation_resolved" */
    /* Worker: pack the entry for c as it stands (c->res may have become a deny). 0 or -1. */
    int (*pack)(const struct d_commit *c, uint8_t **out, size_t *len);
    /*
     * Loop thread, exactly once per submitted commit, last: recorded is 1 when the entry is
     * durable (answer it now: d_commit_answer, or hold it), 0 when it is not (the ErrorFrame is
     * already sent). It then releases what the job holds, calls d_commit_wipe and frees the job.
     */
    void (*done)(struct d_commit *c, int recorded);
};

struct d_commit {
    /* IN: set by the caller before d_commit_submit. */
    const struct d_commit_kind *kind;
    struct d_daemon *d;
    struct d_conn *conn;                          /* where the answer goes (held by the job) */
    const Sworn__V1__AuthorizationRequest *req;   /* the request decided (owned by the job) */
    const struct sworn_resource_canonical *canon; /* of req->resource (above) */
    struct sworn_policy_result res;               /* effect, rule, reason, charges */
    const struct sworn_policy_result *charged;    /* refunded when the allow does not happen */
    uint64_t time_ms;                             /* decisiond's clock when it decided */
    uint64_t sandbox_pin;      /* the sandbox pinned for this request (d_sandboxes_admit), or 0 */
    int usage_admitted;        /* a model.call holding a place in the usage table (d_usage.h) */
    uint8_t policy_digest[32]; /* of the policy that decided */

    /* Set by d_commit_release_credential. */
    struct sworn_vault_release cred;
    int has_cred;

    /* OUT: filled by the commit step. */
    int rc;                      /* 0: recorded */
    int downgraded;              /* the receipt could not be signed: a deny was recorded instead */
    int code;                    /* on failure: the sworn_err code, */
    char msg[SWORN_ERR_MSG_MAX]; /* and its message */
    uint64_t index;
    uint8_t leaf[32];
    uint8_t receipt[SWORN_LOG_RECEIPT_MAX];
    size_t receipt_len;

    /* Batch receipts only (d_batch.h): the packed entry from its group's packing to its append,
     * and d_batch's own part of the job. */
    uint8_t *entry;
    size_t entry_len;
    struct d_batch_item batch;
    unsigned batch_form;                           /* 2 or 3 (docs/formats.md section 14) */
    char batch_params[SWORN_FRAME_PARAMS_MAX + 1]; /* form 3: the base's @signature-params */
};

/*
 * For an allow whose rule names a credential: release it from the vault into c->cred. When it
 * cannot be released, the allow becomes a deny (its budget charges refunded and cleared).
 */
void d_commit_release_credential(struct d_commit *c);

/*
 * Queue c (its IN fields set) for recording. The kind's done runs exactly once, later, on the
 * loop thread, or now when the workers are stopping (then after an ErrorFrame answer).
 */
void d_commit_submit(struct d_commit *c);

/*
 * Batch receipts (`receipts: batch`): the operations d_batch runs on each commit's `batch` item,
 * for d_batch_start. pack: c's entry (into c->entry) and its leaf hash; seal: the tree of the
 * group's allows' leaf hashes, one signature over its root (purpose 5), each allow's receipt
 * (form 2 or 3), and each allow a deny (repacked) if the signature fails, as in per-request mode;
 * append: the group in one transaction (each c's rc and index set; on failure every c failed),
 * the packed entries freed; done: the end of c, as for a per-request commit.
 */
extern const struct d_batch_ops d_commit_batch_ops;

/*
 * Send c's Decision (effect, rule, reason, index, entry hash, receipt and credential for an
 * allow) to c->conn, and remember an allow that released a credential (d_recent.h: it may back
 * one TokenExchange).
 */
void d_commit_answer(struct d_commit *c);

/* Wipe the released credential. */
void d_commit_wipe(struct d_commit *c);

#endif
