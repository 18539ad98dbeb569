/*
 * d_sandboxes.h -- the running set: the sworn-run sandboxes that are started and not yet ended
 * (docs/decisiond.md, "Sandboxes"), by the log index of their SandboxStarted entry, with the
 * principal, name, sandbox id and operator that entry recorded.
 *
 * What it is for: a request whose Principal.sandbox_start_index is not 0 says it comes from the
 * sandbox started at that index. decisiond admits it to the policy only when that sandbox is in
 * this set with the request's principal and name (d_sandboxes_admit); otherwise it is a recorded
 * deny. sworn-verify checks the same over the record (check `sandboxes`): every ALLOW or ESCALATE
 * naming a sandbox must come, in log order, after its start and before its end.
 *
 * Why pins: the decision is made on the loop thread, but its entry is appended later by a worker,
 * and a SandboxEnded recorded meanwhile would land before it. So an admitted request pins its
 * sandbox until its entry is appended (or is not: d_sandboxes_unpin), an end first marks the
 * sandbox as ending (from then on every request naming it is denied) and is appended only once
 * no pin is left (the ready callback of d_sandboxes_begin_end). So every admitted request of a
 * sandbox is in the log before its SandboxEnded, and none after it. An end waits at most for the
 * commits already in flight (one append each); an escalation held for an operator holds no pin,
 * and its approval is admitted again at that moment (an ended sandbox's approval is a deny).
 *
 * Memory: one small record per running sandbox (about 560 bytes), at most D_SANDBOXES_MAX of them
 * started by this run (d_sandboxes_prepare refuses more); the set rebuilt at start holds every
 * sandbox the log says is running, however many.
 *
 * Loop thread only (the decision path, the admin calls and the commit step's completions all run
 * there; workers never touch the set). d_sandboxes_rebuild runs at start, before the loop.
 */
#ifndef SWORN_D_SANDBOXES_H
#define SWORN_D_SANDBOXES_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

#define D_SANDBOXES_MAX 4096u /* running sandboxes (with starts being recorded) a run admits */

struct d_sandboxes;
struct d_sandbox;
struct sworn_log;

/* A new, empty set. 0, or -1 (SWORN_ERR_NOMEM). */
int d_sandboxes_new(struct d_sandboxes **out);
/* Free the set and every sandbox in it. NULL is allowed. A pending end's callback is not run. */
void d_sandboxes_free(struct d_sandboxes *s);

/* Running sandboxes (those whose start is being recorded not counted). */
size_t d_sandboxes_running(const struct d_sandboxes *s);

/*
 * Rebuild the set from the whole log: every SandboxStarted entry, less those a SandboxEnded
 * entry ended. The log is read once, oldest first; only entries of those two kinds are decoded
 * (an Entry's first byte is its kind's tag). An end that names no running start (not possible in
 * a log decisiond wrote) is logged and skipped. 0, or -1 with sworn_err set (the start is
 * refused: a log that cannot be read cannot tell which sandboxes run).
 */
int d_sandboxes_rebuild(struct d_sandboxes *s, struct sworn_log *log);

/*
 * Before a sandbox_start is appended: a new record for st as operator_ will record it, with room
 * kept in the set so that d_sandboxes_insert cannot fail. OUT: *sb (the caller's until inserted
 * or discarded). -1 with sworn_err set: SWORN_ERR_RANGE when D_SANDBOXES_MAX sandboxes run or are
 * being started, SWORN_ERR_NOMEM.
 */
int d_sandboxes_prepare(struct d_sandboxes *s, const Sworn__V1__SandboxStarted *st,
                        const char *operator_, struct d_sandbox **sb);
/* Its SandboxStarted entry is durable at index: sb runs from now on (the set owns it). */
void d_sandboxes_insert(struct d_sandboxes *s, struct d_sandbox *sb, uint64_t index);
/* It could not be recorded: free sb and give its room back. */
void d_sandboxes_discard(struct d_sandboxes *s, struct d_sandbox *sb);

/*
 * May a request of principal p go on to the policy? When p->sandbox_start_index is 0: yes, and
 * *pin is 0. Else only when that index names a running sandbox (not ending) whose principal is
 * p->id and whose name is p->sandbox: then it is pinned and *pin is its index (unpin it once the
 * request's entry is appended or could not be). Returns 0 when admitted, or -1 with why (a deny
 * reason of at most cap - 1 bytes, "denied: ...", quoting only the sandbox's recorded ASCII names
 * and numbers) and *pin 0.
 */
int d_sandboxes_admit(struct d_sandboxes *s, const Sworn__V1__Principal *p, uint64_t *pin,
                      char *why, size_t cap);

/* The entry of a request pinned at index is appended, or failed. Runs a waiting end's ready
 * callback when this was its last pin. index 0 does nothing. */
void d_sandboxes_unpin(struct d_sandboxes *s, uint64_t index);

/* Called once an end may be appended (no pin is left). */
typedef void (*d_sandbox_ready_fn)(void *arg);

/*
 * Begin to end the sandbox started at en->start_index, for operator_: it must run (not ending),
 * with en's sandbox id, started by operator_. Then it is marked ending (every request naming it
 * is denied from now on) and ready(arg) runs once no pin is left: at once (before this returns)
 * or at the last d_sandboxes_unpin. Returns 0 when begun, or -1 with sworn_err set and nothing
 * changed: SWORN_ERR_NOTFOUND when no sandbox runs at that index (the caller tells why from the
 * log), SWORN_ERR_VERIFY for another sandbox id or operator, SWORN_ERR_RANGE when its end is
 * already being recorded.
 */
int d_sandboxes_begin_end(struct d_sandboxes *s, const Sworn__V1__SandboxEnded *en,
                          const char *operator_, d_sandbox_ready_fn ready, void *arg);

/* The end begun at index is recorded (recorded 1: the sandbox leaves the set) or is not (0: it
 * runs again, and a later end may be tried). */
void d_sandboxes_finish_end(struct d_sandboxes *s, uint64_t index, int recorded);

#endif
