/*
 * d_usage.h -- token usage of model API calls (docs/decisiond.md, "Token usage"): the allows of
 * operation "model.call" that await their usage report, and the UsageReport request that records
 * it (a UsageRecorded entry linked to the allow by index and leaf hash) and settles the token
 * budgets the allow reserved from (sworn_budgets_settle: the reservation, the request's token
 * ceiling, is replaced by the input + output tokens the response reported).
 *
 * The table: every model.call that the policy is asked about first takes a place (d_usage_admit,
 * before the policy: when D_USAGE_PENDING_MAX allows already await their report, the request is
 * a recorded deny), and gives it back when it is not allowed (d_usage_unadmit) or fills it with
 * the allow once the allow is answered (d_usage_remember). So an allow is never forgotten for
 * want of room: an agent cannot push its own big usage out of the table with more requests. An
 * allow waits D_USAGE_TTL_MS of the monotonic clock; after that its report is refused and its
 * reservation stands. One report per allow: d_usage_take consumes it on the loop thread, before
 * anything else happens, so a replay or a second report racing the first finds nothing. Memory
 * only: a restart forgets every pending allow (their reservations stand, from the replay).
 *
 * Loop thread only. The entry is appended on a worker.
 */
#ifndef SWORN_D_USAGE_H
#define SWORN_D_USAGE_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "policy.h"
#include "resource.h"

#define D_USAGE_PENDING_MAX 4096u
#define D_USAGE_TTL_MS (60u * 60u * 1000u)
#define D_USAGE_OPERATION "model.call"

struct d_daemon;
struct d_conn;

/* One allow of model.call awaiting its usage. */
struct d_usage_allow {
    char request_id[SWORN_FRAME_ID_MAX + 1];
    char model[SWORN_RESOURCE_MODEL_MAX + 1]; /* canonical */
    uint64_t log_index;
    uint8_t leaf[32];
    uint64_t reserved; /* the token ceiling (0: none) */
    struct sworn_policy_charge charges[SWORN_POLICY_BUDGET_RULES_MAX]; /* its token charges */
    size_t ncharges;
    uint64_t mono_ms; /* when it was answered; 0: a free slot */
};

struct d_usage_table {
    struct d_usage_allow *slots; /* D_USAGE_PENDING_MAX */
    size_t admitted;             /* places taken by model.calls not yet answered */
};

/* Allocate the table. 0, or -1 (SWORN_ERR_NOMEM). */
int d_usage_init(struct d_usage_table *t);
void d_usage_free(struct d_usage_table *t);

/* Take a place for a model.call about to be decided at now_mono_ms: 0, or -1 when the table is
 * full of allows that still await their report (the caller denies). */
int d_usage_admit(struct d_usage_table *t, uint64_t now_mono_ms);
/* Give back a place d_usage_admit took (the request was not allowed, or not recorded). */
void d_usage_unadmit(struct d_usage_table *t);
/*
 * Fill the place d_usage_admit took with req's allow: its entry (index, leaf hash), its
 * canonical model, its ceiling and the token charges of res (what the allow reserved).
 */
void d_usage_remember(struct d_usage_table *t, const Sworn__V1__AuthorizationRequest *req,
                      const struct sworn_policy_result *res, uint64_t log_index,
                      const uint8_t leaf[32], uint64_t now_mono_ms);
/*
 * Consume the allow whose request id and entry index are these, answered at most D_USAGE_TTL_MS
 * before now_mono_ms and not reported yet: 1 and *out filled; else 0 (nothing changes).
 */
int d_usage_take(struct d_usage_table *t, const char *request_id, uint64_t log_index,
                 uint64_t now_mono_ms, struct d_usage_allow *out);

/* Handle a report (strictly decoded; owned from now on) of connection c. body/len: its frame. */
void d_usage_request(struct d_daemon *d, struct d_conn *c, Sworn__V1__UsageReport *u,
                     const uint8_t *body, size_t len);

#endif
