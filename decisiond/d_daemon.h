/*
 * d_daemon.h -- sworn-decisiond's state: the one struct every part of the daemon shares (no part
 * keeps daemon state in a file-scope static), and the calls of the start-up parts. Not a public
 * API: daemon.c (main) and the d_*.c files use it. Each part of the decision path states its
 * contract in its own header; docs/architecture.md ("The decision path") draws who calls whom.
 *
 * Parts and threads:
 *   d_server.c      listeners, accept, SO_PEERCRED checks (loop thread)
 *   d_conn.c        a connection: framing, one request at a time, answers in order, holds
 *   d_dispatch.c    the handler table of each channel: decode strictly, route by request kind
 *   d_decide.c      a fresh decision: gate, policy and budgets, credential, then the commit
 *   d_escalate.c    requests held for an operator, with deadlines, and their resolution; the
 *                   request ids taken (d_seen.c), so that a duplicate id is denied
 *   d_commit.c      the one commit step: pack, receipt, append (worker), refunds, answer
 *   d_batch.c       `receipts: batch`: commit groups, one signature and one append each (its
 *                   sealer and appender threads); d_batchtree.c: a group's Merkle tree
 *   d_exchange.c    OAuth token interception (TokenExchange): vault, CredentialsMinted
 *   d_recent.c      the allows that released a credential (each backs one TokenExchange)
 *   d_usage.c       model.call allows awaiting their token usage (UsageReport, UsageRecorded)
 *   d_sandboxes.c   the running sworn-run sandboxes, which requests naming one must be of
 *   d_admin.c       the admin socket's calls and the policy reload
 *   d_local.c       the in-process entry point: a request in, the answer to a callback
 *   d_record.c      building entries and appending them with their receipts (worker threads)
 *   d_refusals.c    the quotas of recorded refusals and their log lines per (channel, uid), and
 *                   what they dropped or suppressed
 *   d_checkpoint.c  the checkpoint thread: sign, quote with the TPM, export; off the decision path
 *   d_witness.c     submitting each checkpoint to the witnesses, from the checkpoint thread
 *   d_startup.c     measured start (PCR 23), the startup and policy entries, budget replay
 *   d_timemark.c    the log's time high water, where log order is decided; TimeMark entries
 *   d_harden.c      no core dumps
 *   monitor.c       the monitor process, and the engine's channel to it (monitor.h)
 *   d_workq.c       the worker threads; d_metrics.c, d_jlog.c: observability; d_clock.c: time
 *
 * Ownership by thread: the policy, budgets, vault, escalation table, recently-allowed table,
 * running sandboxes and connections belong to the loop thread. Workers touch only their job and the
 * thread-safe log and signer process. The checkpoint thread owns the TPM context. Fields marked
 * atomic are read anywhere.
 */
#ifndef SWORN_D_DAEMON_H
#define SWORN_D_DAEMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "config.h"
#include "d_clock.h"
#include "d_metrics.h"
#include "d_recent.h"
#include "d_refusals.h"
#include "d_timemark.h"
#include "d_usage.h"
#include "d_workq.h"
#include "frame.h"
#include "logstore.h"
#include "monitor.h"
#include "notesign.h"
#include "policy.h"
#include "signerproc.h"
#include "tpmattest.h"
#include "vault.h"

struct d_batch;
struct sworn_textserve;
struct d_escalations;
struct d_sandboxes;
struct d_checkpointer;
struct d_admin_cpwait;
struct d_conn;

struct d_daemon {
    struct sworn_dconfig *cfg;
    struct sworn_dconfig_users users; /* the uids the engine and the signer run as */
    struct d_monitor_link monitor;    /* the channel to the monitor (monitor.h) */
    int listen_fds[2];                /* the sockets the monitor bound, by enum d_channel */
    const char *self_exe;             /* the daemon binary's path (informational, in the record) */
    /* What measured start hashes (d_startup.c), opened once at start and never by path again:
     * /proc/self/exe (the running image itself), and the program the monitor execs as the signer
     * (the monitor's own open file, D_ENGINE_FD_SIGNER_PROGRAM). Both > 0 once opened. */
    int exe_fd;
    int signer_program_fd;
    struct event_base *base;
    struct d_workq *workq;
    struct d_batch *batch; /* `receipts: batch`: the commit groups (d_batch.h); else NULL */
    struct sworn_textserve *mserve; /* sockets.metrics (d_mserve.h); else NULL */
    int notify_fd; /* $NOTIFY_SOCKET, connected (common/sdnotify.h), or -1 outside systemd */
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
    struct d_sandboxes *sandboxes; /* the running sworn-run sandboxes (d_sandboxes.h) */
    struct d_recent_allows recent; /* the allows that released a credential (d_recent.h) */
    struct d_usage_table usage;    /* the model.call allows awaiting their usage (d_usage.h) */
    struct evconnlistener *decision_listener, *admin_listener;
    struct event *sig_term, *sig_int, *sig_hup;
    unsigned n_conns;
    struct d_conn *conns;
    struct sworn_frame_pool frame_pool; /* frame bytes all connections hold (d_conn.c) */
    int stopping;

    /* Refused-frame records and log lines: quotas per (channel, uid) pair, and the dropped and
     * suppressed ones' counts, written by refusals_timer when due (d_refusals.h, d_record.h). */
    struct d_refusals refusals;
    struct event *refusals_timer;

    /* The log's time high water and the TimeMark entries (d_timemark.h): every append goes
     * through it. Any thread. */
    struct d_timemark tm;

    struct d_checkpointer *cp;
    /* CheckpointNow calls waiting for their round (d_admin.c), answered on the loop when the
     * checkpoint thread activates checkpoint_answered. Loop thread only. */
    struct event *checkpoint_answered;
    struct d_admin_cpwait *checkpoint_waits;
    unsigned n_checkpoint_waits;
    /* The TPM: used by d_startup.c before the checkpoint thread starts, then by that thread
     * only. NULL when none is configured or it is down (the thread reopens it). */
    struct sworn_tpm *tpm;
    atomic_int tpm_ok; /* the checkpoint thread's view: 1 when the last quote worked */
    struct d_metrics metrics;
};

/* --- d_checkpoint.c: the checkpoint thread ------------------------------------------------ */

int d_checkpointer_start(struct d_daemon *d);
/*
 * Ask for a checkpoint now, without waiting: a round that begins after the call makes one (quoted
 * when the TPM is up: the round first waits out tpm.quote_min_interval, while the timed rounds go
 * on). OUT: *ticket. When that round has finished, the thread activates d->checkpoint_answered
 * (if set) on the loop. Returns 0, or -1 when the thread is not running. Any thread.
 */
int d_checkpointer_ask(struct d_daemon *d, uint64_t *ticket);
/*
 * 1 when the round answering ticket has finished: *rc 0 and *size, the tree size of the newest
 * stored checkpoint (which covers every entry appended before the ask), or *rc -1 and err (cut
 * at cap) when the newest round could not sign or store its checkpoint; 0 not yet. Any thread.
 */
int d_checkpointer_answer(struct d_daemon *d, uint64_t ticket, int *rc, uint64_t *size, char *err,
                          size_t cap);
/* Make a final checkpoint (and quote) and stop the thread. */
void d_checkpointer_stop(struct d_daemon *d);

/* --- d_startup.c --------------------------------------------------------------------------- */

/*
 * Measured start and the first entries: measure the running daemon image (d->exe_fd), the signer
 * program (d->signer_program_fd), the configuration and the policy as parsed (cfg->digest,
 * d->policy_digest: the SHA-256 of the very bytes the parsers read, never a second read of
 * their paths) and the tpm.measure files into PCR 23 (when a TPM is configured), append the
 * Startup and PolicyLoaded entries, and rebuild the budgets from every allow of the log inside
 * the policy's longest budget window. 0 or -1 (the start is refused).
 */
int d_startup_record(struct d_daemon *d);

/*
 * When the configuration names a keyring: it must be signed to its own roots' threshold, and
 * the signer's key must be in it for purpose checkpoint, valid now. 0 or -1 (start refused).
 */
int d_keyring_check(struct d_daemon *d);

/* --- d_harden.c ---------------------------------------------------------------------------- */

/* No core dumps, not ptrace-able by the same uid. 0 or -1. (Memory that holds secrets is locked
 * where it is allocated: the vault's values; the key never enters this process.) */
int d_harden_early(void);

#endif
