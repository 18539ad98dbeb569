/*
 * d_admin.h -- the admin socket's calls (docs/protocol.md section 4), and the policy reload that
 * one of them (and SIGHUP) starts. Only operator uids reach these (d_server.c); the admin
 * channel's handler table (d_dispatch.c) calls them with the decoded request. Each answers its
 * connection exactly once. Every call that changes state records it: a resolution is an
 * EscalationResolved entry, a policy reload a PolicyLoaded entry (also when it fails: the old
 * policy stays and the refusal is in the record), a sandbox's start and end a SandboxStarted and
 * a SandboxEnded entry. Loop thread.
 */
#ifndef SWORN_D_ADMIN_H
#define SWORN_D_ADMIN_H

#include <stdint.h>

#include "frame.h"

struct d_daemon;
struct d_conn;
struct sworn_policy;

/* An admin call: rq is the decoded request (valid during the call only). */
typedef void (*d_admin_fn)(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq);

void d_admin_status(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq);
void d_admin_list_escalations(struct d_daemon *d, struct d_conn *c,
                              const Sworn__V1__AdminRequest *rq);
void d_admin_resolve(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq);
void d_admin_reload_policy(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq);
void d_admin_checkpoint_now(struct d_daemon *d, struct d_conn *c,
                            const Sworn__V1__AdminRequest *rq);
void d_admin_tail(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq);

/*
 * CheckpointNow holds no worker and blocks no thread: the call asks the checkpoint thread
 * (d_checkpointer_ask) and waits in a list of the loop's until its round has finished. At most
 * D_ADMIN_CHECKPOINT_WAITS calls wait at once; more are answered "busy" (an ErrorFrame) at once.
 * d_admin_checkpoint_waits_start makes d->checkpoint_answered (before the checkpoint thread
 * starts); d_admin_checkpoint_waits_stop answers every call still waiting with an ErrorFrame
 * ("decisiond is stopping"); d_admin_checkpoint_waits_free frees the event, once the checkpoint
 * thread (which activates it) has been joined.
 */
#define D_ADMIN_CHECKPOINT_WAITS 64
int d_admin_checkpoint_waits_start(struct d_daemon *d);
void d_admin_checkpoint_waits_stop(struct d_daemon *d);
void d_admin_checkpoint_waits_free(struct d_daemon *d);
void d_admin_metrics(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq);

/*
 * sworn-run's calls (docs/protocol.md section 4.1, docs/decisiond.md "Sandboxes"). Each fills in
 * the operator (the admin peer's user name) and decisiond's clock, appends its entry durably,
 * then answers SandboxResponse{log_index}. sandbox_start: the sandbox joins the running set once
 * its entry is durable. sandbox_end: start_index must name a running sandbox with the same
 * sandbox_id, started by the same operator, whose end is not being recorded; its entry is
 * appended after those of every request of it already admitted (d_sandboxes.h), and it leaves
 * the set. Anything else is an ErrorFrame (nothing recorded).
 */
void d_admin_sandbox_start(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq);
void d_admin_sandbox_end(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq);

/*
 * sworn-conformance's call (docs/decisiond.md "Conformance reports", docs/formats.md section 15):
 * read the JSON report (report_json.h); hold it to this log (its start checkpoint's size no
 * larger than the log and its root this log's root at that size; its startup index a Startup
 * entry); fill in the admin peer's uid and user name and decisiond's clock; sign SHA-256 of the
 * entry's fields 1..4 with signer purpose 7; append the ConformanceReport entry durably; with
 * log.export_dir write the report's bytes to sworn/reports/<index>.json (0644, replaced
 * atomically); then answer ConformanceReportResponse. A report that breaks a rule, or that
 * cannot be signed or appended, is an ErrorFrame and nothing is recorded; one whose bytes could
 * not be exported is answered with exported false (its entry is durable: the operator still has
 * the file) and logged.
 */
void d_admin_conformance_report(struct d_daemon *d, struct d_conn *c,
                                const Sworn__V1__AdminRequest *rq);

/* Load the policy file again; on success record PolicyLoaded and switch; on failure record the
 * refusal and keep the old policy. on_done (may be NULL) gets ok and the entry index. 0 or -1
 * (nothing started). */
int d_policy_reload(struct d_daemon *d,
                    void (*on_done)(void *arg, int ok, uint64_t index, const char *error),
                    void *arg);

/* Log one "policy_warning" line (warn level: path, line, col, rule, msg) per warning of
 * policy/lint.h about policy p, loaded from path: at start and after each reload; past 100, one
 * line counts the rest. The policy is used all the same; the warnings are for its author. */
void d_policy_warnings(const struct sworn_policy *p, const char *path);

#endif
