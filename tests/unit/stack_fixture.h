/*
 * stack_fixture.h -- a whole control plane for a test: scripts/dev-stack starts swtpm, a SoftHSM
 * token with a generated key and sworn-decisiond inside a fresh temporary folder (and, when the
 * test asks with "--proxy", sworn-proxy in front of it), and the test talks to the real sockets
 * as the proxy and the operator would. Test code only: failures abort the test with a message.
 */
#ifndef SWORN_STACK_FIXTURE_H
#define SWORN_STACK_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frame.h"
#include "sworn.pb-c.h"

#include "testutil.h"

struct sworn_log;

struct sworn_stack {
    char *dir;           /* the stack's folder, removed by sworn_stack_down */
    char config[512];    /* DIR/decisiond.yaml */
    char decision[512];  /* the decision socket */
    char admin[512];     /* the admin socket */
    char log_db[512];    /* the log database */
    char tiles[512];     /* the exported tiles folder */
    char tcti[128];      /* swtpm's TCTI, or "" with --no-tpm */
    char spki_der[512];  /* the SoftHSM (or --tpm-key TPM) key's DER SPKI, "" with --file-key */
    char clock[512];     /* the test clock's file with --test-clock, else "" */
    pid_t decisiond_pid; /* the current daemon */
    pid_t swtpm_pid;     /* 0 with --no-tpm */
    /* sworn-proxy, with "--proxy" (else "" and 0): */
    char proxy_url[128];       /* PROXY_URL: http://127.0.0.1:PORT, the tcp listener (agent-1) */
    char proxy_socket[512];    /* PROXY_SOCKET: the hostlink socket (agent-1; a hello first) */
    char proxy_principal[129]; /* PROXY_PRINCIPAL: its principal (agent-1) */
    char proxy_unix[512];      /* PROXY_UNIX: the plain unix listener (agent-1), for curl */
    char proxy_ca[512];        /* PROXY_CA: the proxy's CA certificate, for a client to trust */
    char proxy_config[512];    /* PROXY_CONFIG: its configuration file */
    char proxy_log[512];       /* PROXY_LOG: its JSON log lines (DIR/proxy.log) */
    pid_t proxy_pid;           /* PROXY_PID: the running proxy */
};

/*
 * `scripts/dev-stack up DIR --build <build> <options>` in a new temporary folder (options as in
 * the script, space-separated, may be ""), then read DIR/stack.env into s. Returns 0, or -1 when
 * the stack did not come up (its log is printed).
 *
 * The proxy: the fixture starts the stack without sworn-proxy (it adds --no-proxy) unless options
 * hold the word "--proxy" (taken out before the script sees the rest) or --proxy-config FILE
 * (kept): most tests drive decisiond directly and need neither the proxy's start time nor a second
 * peer of the decision socket.
 */
SWORN_TEST_MUST_CHECK
int sworn_stack_up(struct sworn_stack *s, const char *options);

/* `scripts/dev-stack start-proxy DIR`: start the proxy again (a running one is stopped first);
 * re-reads stack.env (a new PROXY_PID, and PROXY_URL: port 0 picks a new port). */
SWORN_TEST_MUST_CHECK
int sworn_stack_start_proxy(struct sworn_stack *s);

/* `scripts/dev-stack start DIR`: start decisiond again (after a kill); re-reads its pid. */
SWORN_TEST_MUST_CHECK
int sworn_stack_start(struct sworn_stack *s);

/* SIGTERM the daemon and wait for it; returns its exit status (or -1 when it would not stop). */
SWORN_TEST_MUST_CHECK
int sworn_stack_stop_daemon(struct sworn_stack *s);

/* SIGKILL the daemon and reap it (a crash). */
void sworn_stack_kill_daemon(struct sworn_stack *s);

/*
 * `scripts/dev-stack down DIR`, then remove the folder (kept when SWORN_KEEP_STACK is set).
 * Returns 0, or -1 when the daemon's log or the proxy's (DIR/proxy.log, which also takes its
 * standard error) holds a sanitizer report (printed): in the sanitizer build a leak or undefined
 * behaviour in the daemon or the proxy fails the test that drove it.
 */
SWORN_TEST_MUST_CHECK
int sworn_stack_down(struct sworn_stack *s);

/*
 * With --test-clock (sworn-decisiond-testclock): move the daemon's clocks, wall and monotonic,
 * ms milliseconds forward, at once (the clock file is replaced by a rename, never half-written).
 * Fails the test when the stack has no test clock.
 */
void sworn_stack_clock_advance(struct sworn_stack *s, uint64_t ms);

/*
 * With --test-clock: step the daemon's wall clock alone by ms (negative: back, as an NTP step or a
 * VM restored from a snapshot does), at once; its monotonic clock does not move. Steps add up.
 */
void sworn_stack_clock_step(struct sworn_stack *s, int64_t ms);

/* With --test-clock: the daemon's wall clock now (ms since the epoch: system clock + offset +
 * step). */
uint64_t sworn_stack_clock_unix_ms(struct sworn_stack *s);

/* Connect to a Unix socket; returns the fd or -1. */
int sworn_stack_connect(const char *path);

/*
 * Write len raw bytes on fd and read one answer frame (up to timeout_ms). OUT: *body (free it) and
 * *len_out. Returns 0, 1 when the peer closed the connection without a frame, -1 on a timeout or
 * an error.
 */
SWORN_TEST_MUST_CHECK
int sworn_stack_exchange(int fd, const uint8_t *bytes, size_t len, int timeout_ms, uint8_t **body,
                         size_t *len_out);

/* A request with the given id, principal and path (GET http://127.0.0.1:8080<path>). */
struct sworn_stack_req {
    Sworn__V1__AuthorizationRequest req;
    Sworn__V1__Principal principal;
    Sworn__V1__Resource resource;
    Sworn__V1__Context context;
    char id[129], principal_id[129], path[512];
};
void sworn_stack_req_init(struct sworn_stack_req *r, const char *id, const char *principal,
                          const char *path);

/*
 * req framed in its DecisionRequest envelope (authorize, SWORN_WIRE_VERSION) with the 4-byte
 * big-endian length header and without any check of its fields, as a hostile peer sends it. OUT:
 * *len (the whole frame's), digest (SHA-256 of the body after the header: what a Refused entry
 * records as frame_sha256). Returns the frame (malloc'd; free it); fails the running test when
 * it cannot be allocated or packed.
 */
uint8_t *sworn_stack_raw_frame(Sworn__V1__AuthorizationRequest *req, size_t *len,
                               uint8_t digest[32]);

/*
 * A request tuned to an exact encoded size, as large as the decision socket takes: header names
 * of 256 bytes (all one buffer) and a path of prefix then 'p's, whose length does the last bytes.
 * prefix picks the stack policy's rule ("/with-credential/" allows with a credential,
 * "/escalate/" escalates); at most 64 bytes.
 */
struct sworn_stack_big_req {
    struct sworn_stack_req q;
    char *names[SWORN_FRAME_HEADERS_MAX];
    char name[257];
    char path[SWORN_FRAME_STRING_MAX + 1];
    char prefix[65];
};
/* Request id (principal agent-1, GET http://127.0.0.1:8080<prefix>...) with no header names. */
void sworn_stack_big_init(struct sworn_stack_big_req *b, const char *id, const char *prefix);
/* The request's encoded size. */
size_t sworn_stack_big_size(const struct sworn_stack_big_req *b);
/* The path: the prefix, then 'p' up to n bytes (strlen(prefix) < n <= SWORN_FRAME_STRING_MAX). */
void sworn_stack_big_path(struct sworn_stack_big_req *b, size_t n);
/* Make the request exactly target encoded bytes (header names, then the path's length); fails
 * the test when it cannot. */
void sworn_stack_big_fit(struct sworn_stack_big_req *b, size_t target);

/* Send one request on a new connection to the decision socket; returns the reply (free it). */
Sworn__V1__DecisionReply *sworn_stack_decide(struct sworn_stack *s, struct sworn_stack_req *r);

/* Send one admin request; returns the response (free it). */
Sworn__V1__AdminResponse *sworn_stack_admin(struct sworn_stack *s, Sworn__V1__AdminRequest *rq);

/* The newest count (1..SWORN_FRAME_TAIL_MAX) entries of the log, oldest first (admin Tail):
 * fails the test unless the answer is a TailResponse. Free with
 * sworn__v1__admin_response__free_unpacked. */
Sworn__V1__AdminResponse *sworn_stack_tail(struct sworn_stack *s, uint32_t count);

/* sworn_stack_decide of request id from agent-1 for GET <path>. Returns the reply (free it). */
Sworn__V1__DecisionReply *sworn_stack_decide_path(struct sworn_stack *s, const char *id,
                                                  const char *path);

/*
 * The decision in reply r: fails the test unless r is a decision (not an error) with the given
 * effect and a 32-byte entry hash. Returns r->decision (owned by r).
 */
Sworn__V1__Decision *sworn_stack_expect_decision(Sworn__V1__DecisionReply *r,
                                                 Sworn__V1__Effect effect);

/* The entry at log index among the newest count entries of the log (admin Tail); fails the test
 * when it is not among them. OUT: *tail, which holds the entry (free it with
 * sworn__v1__admin_response__free_unpacked). */
const Sworn__V1__Entry *sworn_stack_entry_at(struct sworn_stack *s, uint64_t index, uint32_t count,
                                             Sworn__V1__AdminResponse **tail);

/* The request of entry e when e is a decision on path (its request's resource path), else NULL
 * (another kind of entry, a decision without a resource or on another path). Owned by e. */
const Sworn__V1__AuthorizationRequest *sworn_stack_decision_on(const Sworn__V1__Entry *e,
                                                               const char *path);

/* sworn_stack_decide_path of id for path: fails the test unless the answer is a decision with
 * that effect (sworn_stack_expect_decision). */
void sworn_stack_expect_path(struct sworn_stack *s, const char *id, const char *path,
                             Sworn__V1__Effect effect);

/* sworn_stack_decide_path of id for /allowed/x, which the stack's policy allows: fails the test
 * unless the answer is an allow with a signed receipt. */
void sworn_stack_expect_allow(struct sworn_stack *s, const char *id);

/* Send request id for path on a new connection without reading the answer; returns the fd. */
int sworn_stack_send_only(struct sworn_stack *s, const char *id, const char *path);

/*
 * Read the answer to sworn_stack_send_only (waiting up to 30 s; the test fails when none comes),
 * then close fd. Returns the reply (free it), or NULL when it does not unpack.
 */
Sworn__V1__DecisionReply *sworn_stack_read_reply(int fd);

/* The admin requests of the helpers below, for any transport (the engine fixture's too). */
struct sworn_stack_admin_msg {
    Sworn__V1__AdminRequest rq; /* what to send; points into the parts below */
    Sworn__V1__ResolveRequest resolve;
    Sworn__V1__ListEscalationsRequest list;
};
/* Resolve the escalation whose escalate entry is at log index: approve it (reason "checked by
 * the test") or deny it (reason ""). Named by index only (no request id, no hash). */
void sworn_stack_resolve_msg(struct sworn_stack_admin_msg *m, uint64_t index, int approve);
/* List one page of the held escalations: those from log index from_index on. */
void sworn_stack_list_msg(struct sworn_stack_admin_msg *m, uint64_t from_index);

/* An admin call on some transport (arg: the stack, the engine fixture's engine): the answer (free
 * it), or NULL when there is none. */
typedef Sworn__V1__AdminResponse *(*sworn_stack_admin_fn)(void *arg,
                                                          const Sworn__V1__AdminRequest *rq);

/* sworn_stack_admin as a sworn_stack_admin_fn (arg: the struct sworn_stack). */
Sworn__V1__AdminResponse *sworn_stack_admin_call(void *arg, const Sworn__V1__AdminRequest *rq);

/*
 * The whole listing, page by page as swornctl reads it: from index 0, then from the last index
 * listed + 1 while the page says more. Fails the test unless every answer is a listing whose
 * pending start at its from_index or later. Calls fn(p, fn_arg) for each held escalation, lowest
 * index first, while its page is held (fn may be NULL). Returns how many were listed.
 */
size_t sworn_stack_list_all(sworn_stack_admin_fn admin, void *arg,
                            void (*fn)(const Sworn__V1__PendingEscalation *p, void *fn_arg),
                            void *fn_arg);

/*
 * The log index of the one held escalation whose request id is id in a whole listing through
 * admin; fails the test unless exactly one is listed with that id, with a 32-byte entry hash.
 */
uint64_t sworn_stack_held_index(sworn_stack_admin_fn admin, void *arg, const char *id);

/* sworn_stack_held_index on the stack's admin socket. */
uint64_t sworn_stack_index_of(struct sworn_stack *s, const char *id);

/* Resolve the escalation held at log index (sworn_stack_resolve_msg). Returns the admin response
 * (free it). */
Sworn__V1__AdminResponse *sworn_stack_resolve_at(struct sworn_stack *s, uint64_t index,
                                                 int approve);

/*
 * Resolve the held escalation id, found by its id in a fresh listing and resolved by its log
 * index: approve it (reason "checked by the test") or deny it (reason ""). Returns the admin
 * response (free it).
 */
Sworn__V1__AdminResponse *sworn_stack_resolve(struct sworn_stack *s, const char *id, int approve);

/* How many escalations are held (sworn_stack_list_all: every page); fails the test unless the
 * admin calls answer the listing. */
unsigned sworn_stack_pending(struct sworn_stack *s);

/* CheckpointNow on the admin socket; fails the test unless it is answered. Returns the size. */
uint64_t sworn_stack_checkpoint_now(struct sworn_stack *s);

/*
 * Escalate request id (GET /escalate/x, which the stack's policy escalates), wait until it is the
 * one held escalation, resolve it, and check the held request's answer: allow with a receipt when
 * approved, deny without one when not, logged at the index the resolve call reported.
 */
void sworn_stack_escalate(struct sworn_stack *s, const char *id, int approve);

/* One scrape of the admin Metrics call (Prometheus text; free it). */
char *sworn_stack_scrape(struct sworn_stack *s);

/* The value on the line "NAME VALUE" of a scrape; fails the test when absent. */
double sworn_stack_metric_in(const char *text, const char *name);

/* sworn_stack_metric_in of a fresh scrape. */
double sworn_stack_metric(struct sworn_stack *s, const char *name);

/* The monitor's (daemon's) child that is the signer (command name sworn-signer), or the engine
 * (sworn-engine), from /proc/PID/task/ * /children; -1 when none. */
pid_t sworn_stack_signer_child(pid_t daemon);
pid_t sworn_stack_engine(pid_t daemon);

/*
 * Call fn(pid, name, arg) for each entry of /proc/<pid>/<sub> (a folder: fd, task) but those whose
 * name starts with a dot, until fn returns nonzero. Returns that return, 0 when every call
 * returned 0, or -1 when the folder cannot be opened.
 */
SWORN_TEST_MUST_CHECK
int sworn_stack_proc_each(pid_t pid, const char *sub, int (*fn)(pid_t, const char *, void *),
                          void *arg);

/* Call fn(child, arg) for each child of parent (any of its threads' children, from
 * /proc/PID/task/ * /children) until fn returns nonzero; returns as sworn_stack_proc_each. */
SWORN_TEST_MUST_CHECK
int sworn_stack_children_each(pid_t parent, int (*fn)(pid_t, void *), void *arg);

/* Whether pid is gone (or only a zombie waiting for its reaper). */
int sworn_stack_pid_gone(pid_t pid);

/* The TPM quotes a stopped stack's log holds: how many, and the largest tree size quoted. */
struct sworn_stack_quotes {
    int n;
    uint64_t largest;
};
void sworn_stack_log_quotes(struct sworn_log *log, struct sworn_stack_quotes *q);

/* The log's newest checkpoint covers the whole log; fails the test otherwise. */
void sworn_stack_expect_final_checkpoint(struct sworn_log *log);

/*
 * Write the development trust policy of the stack's record for sworn-verify into DIR/trust.txt
 * (and the signer's DER public key into DIR/signer.spki): the origin of tiles/checkpoint, its
 * log's vkey, entries sworn, quotes ignore, development allowed, the receipt key. The stack must
 * use --file-key (DIR/signer.pem) or --tpm-key (SPKI_DER, the TPM key's) and have exported its
 * tiles. Fails the test when it cannot.
 */
void sworn_stack_dev_trust(struct sworn_stack *s);

/* The value of the line "<key> VALUE" of DIR/trust.txt (sworn_stack_dev_trust writes it: "origin"
 * and "log", the log's verifier key, for instance) into out (cap bytes); fails the test when there
 * is no such line or the value does not fit. */
void sworn_stack_trust_value(struct sworn_stack *s, const char *key, char *out, size_t cap);

/* Run a shell command with the stack's environment (stack.env sourced); returns its exit status. */
SWORN_TEST_MUST_CHECK
int sworn_stack_sh(struct sworn_stack *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
