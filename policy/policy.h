/*
 * policy.h -- sworn-decisiond's policy engine: a YAML policy file (docs/policy.md gives every key
 * and the exact semantics), evaluated deterministically against one AuthorizationRequest, with
 * count, sum and token budgets kept apart from the policy so that a reload keeps them (token
 * budgets reserve a model call's ceiling and are settled to its usage: sworn_budgets_settle).
 *
 * Decision procedure (docs/policy.md section "Evaluation"), in short:
 *   0. a request the proxy refused itself (AuthorizationRequest.refusal) is denied with rule_id
 *      "" and the reason "refused by the proxy: <its reason>" (sworn_policy_refusal);
 *   1. the request's resource is canonicalised (resource.h); a resource that is refused there
 *      (e.g. %2F in the path, an octal IPv4 host) is denied with rule_id "" and the reason
 *      "the resource is refused: <why>; denied before any rule"; then a non-empty context.method
 *      that is not an upper-case RFC 9110 token ("delete", "DELETE ") is denied the same way,
 *      "the method is refused: <why>; denied before any rule";
 *   2. every rule whose matchers all hold, on the canonical form only, is a matching rule (an
 *      actor is matched as the pair issuer and subject: docs/policy.md section 2.5);
 *   3. a matching deny rule wins (the first in file order); else a matching escalate rule (the
 *      first); else the first matching allow rule decides (its id, reason and credential), but
 *      only when the budgets of EVERY matching allow rule have room: the ALLOW then charges all
 *      of them at once, atomically (all or none); otherwise DENY naming the first matching allow
 *      rule, in file order, whose budget cannot take the request (a reason starting "budget
 *      exhausted", or one of the other budget reasons of docs/policy.md section 4.4). So a
 *      broader allow earlier in the file never switches a later rule's budget off (finding 7 of
 *      the policy review);
 *   4. no matching rule: DENY with rule_id "" (default deny).
 *
 * Matching never backtracks: globs run as a state-set simulation, O(len(text) * len(pattern)),
 * with patterns of at most SWORN_POLICY_GLOB_MAX bytes.
 *
 * Ownership and threads: a loaded struct sworn_policy is immutable and may be evaluated by many
 * threads at once. struct sworn_budgets has an internal mutex: eval, refund and replay may be
 * called from many threads on the same budgets. Errors: -1 with sworn_err set (common/err.h);
 * load errors read "<file>:<line>:<col>: <message>" (SWORN_ERR_FORMAT).
 */
#ifndef SWORN_POLICY_H
#define SWORN_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "sworn.pb-c.h"

#define SWORN_POLICY_ID_MAX 128u      /* rule ids and credential ids: 1..128 bytes */
#define SWORN_POLICY_HASH_LEN 32u     /* SHA-256: budget counter keys, policy digests */
#define SWORN_POLICY_REASON_MAX 1024u /* reasons, as Decision.reason allows */
#define SWORN_POLICY_GLOB_MAX 512u    /* one glob or host pattern */
#define SWORN_POLICY_RULES_MAX 10000u /* rules in one file */
#define SWORN_POLICY_LIST_MAX 1000u   /* items in one list (principals, hosts, ...) */
/* The operations whose Resource.tool a rule's `tools:` and `prompts:` lists match (2.1). */
#define SWORN_POLICY_OP_TOOL "mcp.tools/call"
#define SWORN_POLICY_OP_PROMPT "mcp.prompts/get"
/* Allow rules with a budget that one request may match; one more is a DENY (docs/policy.md 4.4). */
#define SWORN_POLICY_BUDGET_RULES_MAX 16u
/* Budget charges one decision can make: a count, a sum and tokens of each of those rules. */
#define SWORN_POLICY_CHARGES (3u * SWORN_POLICY_BUDGET_RULES_MAX)
/* Budget counters tracked at once (all rules, principals and windows together). */
#define SWORN_BUDGETS_DEFAULT_CAP 65536u

struct sworn_policy;
struct sworn_budgets;
struct sworn_resource_canonical; /* resource.h */

/* One budget charge of a decision (private to policy and budgets; do not interpret). */
struct sworn_policy_charge {
    uint8_t key[SWORN_POLICY_HASH_LEN]; /* SHA-256 naming the counter */
    uint64_t amount;                    /* 1 for a count, micro-units for a sum */
    uint64_t window_end_ms;             /* when the counter's window ends */
    int used;
    int tokens; /* a token budget's reservation: settled by sworn_budgets_settle */
};

/*
 * The outcome of one evaluation. Every string is NUL-terminated, UTF-8 without control
 * characters, and fits the Decision's bounds.
 */
struct sworn_policy_result {
    Sworn__V1__Effect effect;                    /* ALLOW, DENY or ESCALATE; never UNSPECIFIED */
    char rule_id[SWORN_POLICY_ID_MAX + 1];       /* "" when no rule matched (default deny) */
    char reason[SWORN_POLICY_REASON_MAX + 1];    /* always non-empty, human readable, no secrets */
    char credential_id[SWORN_POLICY_ID_MAX + 1]; /* for ALLOW: the vault credential, or "" */
    uint64_t escalation_timeout_ms; /* for ESCALATE: the rule's timeout, or 0 = daemon default */
    /* private: what this decision charged to budgets, so it can be refunded */
    struct sworn_policy_charge charges[SWORN_POLICY_CHARGES];
};

/*
 * Load and check a policy. OUT: *out (free with sworn_policy_free). On error nothing is
 * allocated, *out is untouched, and sworn_err says "<file>:<line>:<col>: <message>".
 */
int sworn_policy_load_file(const char *path, struct sworn_policy **out);
/*
 * sworn_policy_load_file for the daemon: the file is read through the checked open of
 * common/safefile.h (no symbolic link on its path; it and its folders root's or the caller's,
 * not writable by others), and the bytes parsed are those read from the checked descriptor.
 */
int sworn_policy_load_trusted(const char *path, struct sworn_policy **out);
int sworn_policy_load_mem(const char *name, const uint8_t *p, size_t len,
                          struct sworn_policy **out);
void sworn_policy_free(struct sworn_policy *p);

/* SHA-256 of the exact bytes loaded. */
void sworn_policy_digest(const struct sworn_policy *p, uint8_t out[32]);
/* The file's `version:`, or 0 when it has none. */
uint64_t sworn_policy_version(const struct sworn_policy *p);
/* The number of rules. */
size_t sworn_policy_rule_count(const struct sworn_policy *p);
/* The longest budget window of p in milliseconds (how far back to replay); 0 when none. */
uint64_t sworn_policy_max_window_ms(const struct sworn_policy *p);

/*
 * Budget counters. sworn_budgets_new uses SWORN_BUDGETS_DEFAULT_CAP counters at most;
 * sworn_budgets_new_cap takes another cap (>= 1, for tests and small deployments). When a new
 * counter is needed and the cap is reached even after dropping the counters whose window has
 * ended, the decision is a DENY whose reason starts "budget state full".
 */
int sworn_budgets_new(struct sworn_budgets **out);
int sworn_budgets_new_cap(size_t cap, struct sworn_budgets **out);
void sworn_budgets_free(struct sworn_budgets *b);
/* Counters currently held (for metrics and tests). */
size_t sworn_budgets_count(struct sworn_budgets *b);

/*
 * Evaluate req at now_unix_ms (Unix milliseconds, UTC) against p, with budgets b (which may be
 * NULL only when p has no budgets; a budget rule then denies). Returns 0 with *out filled (a
 * deny is a result, not an error), or -1 only on an internal failure (an out-of-memory or a
 * request that breaks sworn_frame_check_request); the caller then denies. An ALLOW charges the
 * budgets of every matching allow rule at once, all or none under the budget lock (a reservation;
 * see sworn_budgets_refund); a DENY or ESCALATE charges nothing. Deterministic: the same
 * policy, budget state, request and time give the same result and the same budget state.
 */
int sworn_policy_eval(const struct sworn_policy *p, struct sworn_budgets *b,
                      const Sworn__V1__AuthorizationRequest *req, uint64_t now_unix_ms,
                      struct sworn_policy_result *out);

/*
 * sworn_policy_eval on canon, the canonical form of exactly req->resource that the caller made
 * once for the whole decision (policy/resource.h, struct sworn_resource_canonical: the caller
 * owns it, this only reads it), and on a request the caller has checked: req must have passed
 * sworn_frame_check_request and be unchanged since (decisiond: the decoder checks every request
 * it hands on, sworn_frame_unpack_decision_request, and the entry's packing checks it again with
 * the whole record), so that check is not run a second time here. Every other check is the
 * same, and the resource is not canonicalised again. A canon made from another resource than
 * req->resource (compared by pointer) is an internal failure: -1 (SWORN_ERR_ARG), and the caller
 * denies. canon NULL: canonicalised here, as sworn_policy_eval does.
 */
int sworn_policy_eval_canonical(const struct sworn_policy *p, struct sworn_budgets *b,
                                const Sworn__V1__AuthorizationRequest *req,
                                const struct sworn_resource_canonical *canon, uint64_t now_unix_ms,
                                struct sworn_policy_result *out);

/*
 * A request the proxy refused itself (req->refusal present: bad framing, an obs-fold, a head
 * too large; docs/policy.md section 3): the one place that decides it. Returns 1 with *out
 * filled: DENY, rule_id "", reason "refused by the proxy: " + refusal.reason, no credential, no
 * charge; or 0 (no refusal; *out untouched). No policy is consulted: a refusal comes before
 * every rule and every check of the resource, which may be incomplete. sworn_policy_eval calls
 * it first; decisiond calls it right after taking the request id (so a duplicate id is still
 * the duplicate deny). req must have passed sworn_frame_check_request (the reason is then at
 * most 256 bytes, and fits). Pure; thread-safe.
 */
int sworn_policy_refusal(const Sworn__V1__AuthorizationRequest *req,
                         struct sworn_policy_result *out);

/*
 * Undo everything r charged, in every rule's budgets (when the decision could not be recorded and
 * became a deny), under the budget lock in one step. Call it at most once per result. A counter
 * whose window has ended and been dropped is left alone.
 */
void sworn_budgets_refund(struct sworn_budgets *b, const struct sworn_policy_result *r);

/*
 * Rebuild after a restart: charge, for one ALLOW decision already in the log, the budgets an
 * ALLOW of that request charges under p (no limit is checked: the decision was taken), as if
 * evaluated at rec->time_unix_ms: every allow rule of p with a budget that matches the recorded
 * request (its recorded canonical resource when there is one, else the request's resource
 * canonicalised now) at that time, and the rule named by rec->rule_id when it is an allow rule
 * with a budget even if it no longer matches (p may be a policy reloaded since the decision;
 * docs/policy.md section 4.6). Deny and escalate rules are not consulted. Records that are not
 * ALLOW are ignored; a summed number that is missing or unreadable is skipped for that sum only.
 * Returns 0, or -1 (out of memory, or the cap is reached).
 */
int sworn_budgets_replay(struct sworn_budgets *b, const struct sworn_policy *p,
                         const Sworn__V1__DecisionRecord *rec);

/*
 * Settle the token reservations of one allow when its usage is known (docs/policy.md 4.8): every
 * token charge of charges[0..n) (those with .tokens set; their amount the reservation) is
 * replaced by `actual` in its counter (counter - amount + actual, at least 0, at most
 * UINT64_MAX), under the budget lock in one step. A counter whose window has ended and been
 * dropped is left alone (nothing is created). Call it at most once per allow.
 */
void sworn_budgets_settle(struct sworn_budgets *b, const struct sworn_policy_charge *charges,
                          size_t n, uint64_t actual);

/*
 * The token charges an allow of rec's request makes under p, as the replay charges them (every
 * allow rule with a `tokens` budget that matches the recorded request at its recorded time, and
 * its rule_id's rule), each with its amount (the ceiling): out[0..*n), at most
 * SWORN_POLICY_BUDGET_RULES_MAX. For a UsageRecorded entry read back at start: settle them with
 * its charged_tokens (sworn_budgets_settle) right after the allow was replayed. 0, or -1 (hash).
 */
int sworn_budgets_token_charges(const struct sworn_policy *p, const Sworn__V1__DecisionRecord *rec,
                                struct sworn_policy_charge *out, size_t *n);

/*
 * A result as one line of JSON, in a new string (free() it): effect, rule_id, reason,
 * credential_id and escalation_timeout_ms. Returns NULL with sworn_err set on failure.
 */
char *sworn_policy_result_json(const struct sworn_policy_result *r);

#endif
