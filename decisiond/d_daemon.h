/*
 * d_daemon.h -- sworn-decisiond's internals: the state every part of the daemon shares, and the
 * calls between its parts. Not a public API: daemon.c (main) and the d_*.c files use it.
 *
 * Parts and threads:
 *   d_server.c      the event loop thread: listeners, SO_PEERCRED checks, framing, one request at
 *                   a time per connection, answers in order
 *   d_decide.c      a decision: policy (loop thread), then record (+ receipt) on a worker, then the
 *                   answer (loop thread); record before effect
 *   d_escalate.c    requests held for an operator, with deadlines (loop thread)
 *   d_admin.c       the admin socket's calls (loop thread; records go through the workers)
 *   d_record.c      building entries and appending them with their receipts (worker threads)
 *   d_checkpoint.c  the checkpoint thread: sign, quote with the TPM, export; off the decision path
 *   d_startup.c     measured start (PCR 23), the startup and policy entries, budget replay
 *   d_harden.c      no core dumps, privilege drop, locked memory
 *   d_workq.c       the worker threads; d_metrics.c, d_jlog.c: observability
 *
 * Ownership by thread: the policy, budgets, vault, escalation table and connections belong to the
 * loop thread. Workers touch only their job and the thread-safe log and signer process. The
 * checkpoint thread owns the TPM context. Fields marked atomic are read anywhere.
 */
#ifndef SWORN_D_DAEMON_H
#define SWORN_D_DAEMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "config.h"
#include "d_metrics.h"
#include "d_workq.h"
#include "frame.h"
#include "logstore.h"
#include "notesign.h"
#include "policy.h"
#include "proc.h"
#include "tpmattest.h"
#include "vault.h"

struct d_escalations;
struct d_checkpointer;
struct d_conn;

struct d_daemon {
    struct sworn_dconfig *cfg;
    const char *self_exe; /* the daemon binary, as measured */
    struct event_base *base;
    struct d_workq *workq;
    struct sworn_log *log;
    struct sworn_signer_proc *signer;
    uint8_t key_id[SWORN_KEY_ID_LEN];
    struct sworn_note_signer note_signer;

    /* Loop thread only. */
    struct sworn_policy *policy;
    uint8_t policy_digest[SWORN_POLICY_HASH_LEN];
    struct sworn_budgets *budgets;
    struct sworn_vault *vault;
    struct d_escalations *esc;
    struct evconnlistener *decision_listener, *admin_listener;
    struct event *sig_term, *sig_int, *sig_hup;
    unsigned n_conns;
    struct d_conn *conns;
    int stopping;

    /* Refused-frame records: at most refused_burst per second, the rest only counted. */
    uint64_t refused_window_s;
    unsigned refused_in_window;

    struct d_checkpointer *cp;
    /* The TPM: used by d_startup.c before the checkpoint thread starts, then by that thread
     * only. NULL when none is configured or it is down (the thread reopens it). */
    struct sworn_tpm *tpm;
    atomic_int tpm_ok; /* the checkpoint thread's view: 1 when the last quote worked */
    struct d_metrics metrics;
};

/* --- d_clock.c: time (any thread; a test clock only in sworn-decisiond-testclock) --------- */
uint64_t d_now_unix_ms(void);
uint64_t d_now_mono_us(void);

/* --- d_record.c: entries and the log (any thread) ----------------------------------------- */

/* Pack an Entry (checked by frame.c) into a new buffer. OUT: *out (free it), *len. 0 or -1. */
int d_entry_pack(const Sworn__V1__Entry *e, uint8_t **out, size_t *len);

/*
 * Have the signer sign leaf (an entry's RFC 9162 leaf hash) for purpose RECEIPT, and pack the
 * Receipt message (key id, signature, alg) into out (SWORN_LOG_RECEIPT_MAX bytes). OUT: *len.
 * Returns 0, or -1 with SWORN_ERR_IO when the signer failed (the caller records a deny instead).
 */
int d_record_receipt(struct d_daemon *d, const uint8_t leaf[32], uint8_t *out, size_t *len);

/*
 * Append one packed entry, with its packed receipt (or NULL), in one durable transaction.
 * OUT: *index. Returns 0, or -1 when nothing was recorded.
 */
int d_record_append(struct d_daemon *d, const uint8_t *entry, size_t len, const uint8_t *receipt,
                    size_t receipt_len, uint64_t *index);

/* --- d_server.c: connections (loop thread) ------------------------------------------------ */

enum d_channel { D_CHANNEL_DECISION = 0, D_CHANNEL_ADMIN = 1 };

/* Open both sockets and start accepting. 0 or -1. */
int d_server_listen(struct d_daemon *d);
/* Stop accepting and close the listening sockets (connections finish their current request). */
void d_server_close_listeners(struct d_daemon *d);
/* Close every connection (shutdown, after the workers have stopped). */
void d_server_drop_all(struct d_daemon *d);

/* The peer of a connection, as SO_PEERCRED gave it at accept. */
uid_t d_conn_uid(const struct d_conn *c);
pid_t d_conn_pid(const struct d_conn *c);
/* The monotonic time (us) the connection's current request frame was complete. */
uint64_t d_conn_request_start_us(const struct d_conn *c);

/*
 * Send one framed answer (frame holds header + body; copied) and let the connection read its next
 * request. When the peer is gone, the answer is dropped and the connection freed.
 */
void d_conn_reply(struct d_conn *c, const uint8_t *frame, size_t len);
/* As d_conn_reply with an ErrorFrame, in the channel's reply type; then close when close_after. */
void d_conn_reply_error(struct d_conn *c, int code, const char *message, const char *request_id,
                        int close_after);

/* A connection is kept alive while a job holds it (its peer may hang up meanwhile). */
void d_conn_hold(struct d_conn *c);
void d_conn_release(struct d_conn *c);

/*
 * Record a refused frame or peer (Entry kind refused), off the loop thread, rate limited; count
 * it in the metrics in every case. body may be NULL.
 */
void d_record_refused(struct d_daemon *d, enum d_channel ch, uid_t uid, pid_t pid, int code,
                      const char *message, const char *request_id, const uint8_t *body,
                      size_t body_len);

/* --- d_decide.c: decision requests (loop thread) ------------------------------------------ */

/* Handle one decision frame body from connection c (whose request is now in flight). */
void d_decide_frame(struct d_daemon *d, struct d_conn *c, const uint8_t *body, size_t len);

/*
 * Answer a held (escalated) request with its final effect. Called by d_escalate.c when an
 * operator resolves it or its deadline passes: records the EscalationResolved entry (+ receipt
 * for an allow), then answers. operator is the resolver's name ("timeout" for a deadline).
 * credential_id is the rule's credential, released here for an allow.
 */
struct d_held;
void d_decide_resolve(struct d_daemon *d, struct d_held *h, int approve, const char *operator_,
                      const char *reason, void (*on_recorded)(void *arg, int ok, uint64_t index),
                      void *arg);

/* --- d_escalate.c: held requests (loop thread) -------------------------------------------- */

int d_escalations_new(struct d_daemon *d, struct d_escalations **out);
void d_escalations_free(struct d_escalations *e);
/* Hold request req (owned by the table from now on) of connection c until resolved or timeout. */
int d_escalation_hold(struct d_daemon *d, struct d_conn *c, Sworn__V1__AuthorizationRequest *req,
                      const struct sworn_policy_result *res, uint64_t timeout_ms);
unsigned d_escalations_pending(const struct d_escalations *e);
/* Fill a ListEscalationsResponse (items allocated; free with d_escalations_list_free). */
int d_escalations_list(struct d_escalations *e, Sworn__V1__ListEscalationsResponse *out);
void d_escalations_list_free(Sworn__V1__ListEscalationsResponse *out);
/* Find a held request by id and detach it from the table (the caller resolves it). */
struct d_held *d_escalation_take(struct d_escalations *e, const char *request_id);
/* Deny every held request (shutdown). */
void d_escalations_deny_all(struct d_daemon *d, const char *reason);

/* What d_decide_resolve needs of a held request. */
struct d_held {
    struct d_conn *conn;
    Sworn__V1__AuthorizationRequest *req;
    struct sworn_policy_result res;
    uint64_t since_unix_ms, deadline_unix_ms;
    struct event *timer;
    struct d_escalations *table;
    struct d_held *prev, *next;
};
void d_held_free(struct d_held *h);

/* --- d_admin.c: admin requests (loop thread) ---------------------------------------------- */

void d_admin_frame(struct d_daemon *d, struct d_conn *c, const uint8_t *body, size_t len);

/* Load the policy file again; on success record PolicyLoaded and switch; on failure record the
 * refusal and keep the old policy. on_done gets ok and the entry index. */
int d_policy_reload(struct d_daemon *d,
                    void (*on_done)(void *arg, int ok, uint64_t index, const char *error),
                    void *arg);

/* Pack a PolicyLoaded entry (error NULL or "" for a policy that took effect). 0 or -1. */
int d_policy_entry(const char *source, const uint8_t digest[32], uint64_t version,
                   const char *error, uint8_t **out, size_t *len);

/* --- d_checkpoint.c: the checkpoint thread ------------------------------------------------ */

int d_checkpointer_start(struct d_daemon *d);
/*
 * Ask for a checkpoint now and wait until a round that began after the call has finished (a
 * worker thread: it blocks for one signature and one quote). OUT: *size, the tree size of the
 * newest stored checkpoint, which covers every entry appended before the call. Returns 0, or -1
 * when that round could not sign or store its checkpoint, or the daemon is stopping (sworn_err
 * says why; *size is then unchanged). Callers must be gone before d_checkpointer_stop.
 */
int d_checkpointer_now(struct d_daemon *d, uint64_t *size);
/* Make a final checkpoint (and quote) and stop the thread. */
void d_checkpointer_stop(struct d_daemon *d);

/* --- d_startup.c --------------------------------------------------------------------------- */

/*
 * Measured start and the first entries: measure the daemon binary, the config, the policy and the
 * configured files into PCR 23 (when a TPM is configured), append the Startup and PolicyLoaded
 * entries, and rebuild the budgets from the log's recent decisions. 0 or -1.
 */
int d_startup_record(struct d_daemon *d);

/*
 * When the configuration names a keyring: it must be signed to its own roots' threshold, and
 * the signer's key must be in it for purpose checkpoint, valid now. 0 or -1 (start refused).
 */
int d_keyring_check(struct d_daemon *d);

/* --- d_harden.c ---------------------------------------------------------------------------- */

/* No core dumps, not ptrace-able by the same uid; lock memory where permitted. 0 or -1. */
int d_harden_early(void);
/* Drop to the configured user (when root and run_as is set). 0 or -1. */
int d_harden_drop(const struct sworn_dconfig *cfg);

#endif
