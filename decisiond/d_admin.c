/*
 * d_admin.c -- the admin socket's calls and the policy reload (d_admin.h, docs/protocol.md
 * section 4).
 */
#include "d_admin.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/sha.h>

#include "d_conn.h"
#include "d_daemon.h"
#include "d_record.h"
#include "d_sandboxes.h"
#include "d_escalate.h"
#include "d_jlog.h"
#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "lint.h"
#include "merkle.h"
#include "report_json.h"
#include "safefile.h"
#include "yamldoc.h"

/* Replies larger than this are cut (tail): the frame limit is 1 MiB. */
#define ADMIN_TAIL_BYTES (768u * 1024u)

static void send_response(struct d_conn *c, Sworn__V1__AdminResponse *r)
{
    uint8_t *frame = NULL;
    size_t len = 0;

    if (sworn_frame_pack_admin_response(r, &frame, &len) < 0) {
        d_conn_reply_error(c, sworn_err_code(), sworn_err_msg(), NULL, 0);
        return;
    }
    d_conn_reply(c, frame, len);
    free(frame);
}

void d_admin_status(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq)
{
    Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
    Sworn__V1__StatusResponse s = SWORN__V1__STATUS_RESPONSE__INIT;

    (void)rq;
    s.tree_size = sworn_log_size(d->log);
    s.checkpoint_size = atomic_load(&d->metrics.checkpoint_size);
    s.policy_digest.data = d->policy_digest;
    s.policy_digest.len = 32;
    s.pending_escalations = d_escalations_pending(d->esc);
    r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_STATUS;
    r.status = &s;
    send_response(c, &r);
}

void d_admin_list_escalations(struct d_daemon *d, struct d_conn *c,
                              const Sworn__V1__AdminRequest *rq)
{
    Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
    Sworn__V1__ListEscalationsResponse l;

    if (d_escalations_list(d->esc, rq->list_escalations->from_index, &l) < 0) {
        d_conn_reply_error(c, sworn_err_code(), sworn_err_msg(), NULL, 0);
        return;
    }
    r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_LIST_ESCALATIONS;
    r.list_escalations = &l;
    send_response(c, &r);
    d_escalations_list_free(&l);
}

struct admin_wait {
    struct d_daemon *d;
    struct d_conn *c;
};

/*
 * A wait for an answer that comes later (a record, a checkpoint): size bytes whose start is a
 * struct admin_wait, holding connection c until the answer is sent. NULL, answered "out of
 * memory" (for request_id), when there is no room.
 */
static void *wait_new(struct d_daemon *d, struct d_conn *c, size_t size, const char *request_id)
{
    struct admin_wait *w = calloc(1, size);

    if (w == NULL) {
        d_conn_reply_error(c, SWORN_ERR_NOMEM, "out of memory", request_id, 0);
        return NULL;
    }
    w->d = d;
    w->c = c;
    d_conn_hold(c);
    return w;
}

/* The work a wait was for could not start: answer why, and let the connection go. */
static void wait_fail(void *wait, int code, const char *message, const char *request_id)
{
    struct admin_wait *w = wait;

    d_conn_reply_error(w->c, code, message, request_id, 0);
    d_conn_release(w->c);
    free(w);
}

static void resolved(void *arg, int ok, uint64_t index)
{
    struct admin_wait *w = arg;

    if (!ok) {
        d_conn_reply_error(w->c, SWORN_ERR_IO, "the resolution could not be recorded", NULL, 0);
    } else {
        Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
        Sworn__V1__ResolveResponse rr = SWORN__V1__RESOLVE_RESPONSE__INIT;

        rr.log_index = index;
        r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE;
        r.resolve = &rr;
        send_response(w->c, &r);
    }
    d_conn_release(w->c);
    free(w);
}

/* The operator's name for the record: the user name of the admin peer's uid. */
static void operator_name(uid_t uid, char *out, size_t cap)
{
    struct passwd pw, *res = NULL;
    char buf[1024];

    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res != NULL)
        snprintf(out, cap, "%s", res->pw_name);
    else
        snprintf(out, cap, "uid:%u", (unsigned)uid);
}

void d_admin_resolve(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq)
{
    const Sworn__V1__ResolveRequest *rr = rq->resolve;
    struct d_resolve_target t = {rr->escalation_index,
                                 rr->escalation_hash.len == 32 ? rr->escalation_hash.data : NULL,
                                 rr->request_id};
    struct admin_wait *w = wait_new(d, c, sizeof(*w), rr->request_id);
    char who[256];

    if (w == NULL)
        return;
    operator_name(d_conn_uid(c), who, sizeof(who));
    if (d_escalation_resolve(d, &t, rr->approve, who, rr->reason, resolved, w) < 0)
        wait_fail(w, sworn_err_code(), sworn_err_msg(), rr->request_id);
}

static void reloaded(void *arg, int ok, uint64_t index, const char *error)
{
    struct admin_wait *w = arg;

    if (!ok) {
        d_conn_reply_error(w->c, SWORN_ERR_FORMAT, error, NULL, 0);
    } else {
        Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
        Sworn__V1__ReloadPolicyResponse rr = SWORN__V1__RELOAD_POLICY_RESPONSE__INIT;

        rr.digest.data = w->d->policy_digest;
        rr.digest.len = 32;
        rr.log_index = index;
        r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_RELOAD_POLICY;
        r.reload_policy = &rr;
        send_response(w->c, &r);
    }
    d_conn_release(w->c);
    free(w);
}

void d_admin_reload_policy(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq)
{
    struct admin_wait *w = wait_new(d, c, sizeof(*w), NULL);

    (void)rq;
    if (w == NULL)
        return;
    if (d_policy_reload(d, reloaded, w) < 0) {
        wait_fail(w, sworn_err_code(), sworn_err_msg(), NULL);
    }
}

/*
 * CheckpointNow answers once a checkpoint made after the call is stored (and quoted, when the
 * TPM is up: the round waits out tpm.quote_min_interval, d_checkpoint.c), with its tree size,
 * which covers every entry appended before the call; a checkpoint that could not be signed or
 * stored is an ErrorFrame. The call waits in d->checkpoint_waits, not on a worker: an admin peer
 * asking again and again holds no thread the decisions need (d_admin.h).
 */
struct d_admin_cpwait {
    struct d_conn *c;
    uint64_t ticket;
    struct d_admin_cpwait *next;
};

static void checkpoint_reply(struct d_admin_cpwait *w, int rc, uint64_t size, const char *err)
{
    if (rc < 0) {
        char msg[SWORN_ERR_MSG_MAX + 32];

        snprintf(msg, sizeof(msg), "checkpoint failed: %s", err);
        d_conn_reply_error(w->c, SWORN_ERR_IO, msg, NULL, 0);
    } else {
        Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
        Sworn__V1__CheckpointNowResponse cr = SWORN__V1__CHECKPOINT_NOW_RESPONSE__INIT;

        cr.tree_size = size;
        r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_CHECKPOINT_NOW;
        r.checkpoint_now = &cr;
        send_response(w->c, &r);
    }
    d_conn_release(w->c);
    free(w);
}

/* Loop thread, when the checkpoint thread finished a round asked for: answer its askers. */
static void on_checkpoint_answered(evutil_socket_t fd, short what, void *arg)
{
    struct d_daemon *d = arg;
    struct d_admin_cpwait **at = &d->checkpoint_waits;

    (void)fd;
    (void)what;
    while (*at != NULL) {
        struct d_admin_cpwait *w = *at;
        char err[SWORN_ERR_MSG_MAX];
        uint64_t size = 0;
        int rc = -1;

        if (!d_checkpointer_answer(d, w->ticket, &rc, &size, err, sizeof(err))) {
            at = &w->next;
            continue;
        }
        *at = w->next;
        d->n_checkpoint_waits--;
        checkpoint_reply(w, rc, size, err);
    }
}

int d_admin_checkpoint_waits_start(struct d_daemon *d)
{
    d->checkpoint_answered = event_new(d->base, -1, 0, on_checkpoint_answered, d);
    if (d->checkpoint_answered == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "checkpoint answers: cannot make the event");
    return 0;
}

void d_admin_checkpoint_waits_stop(struct d_daemon *d)
{
    while (d->checkpoint_waits != NULL) {
        struct d_admin_cpwait *w = d->checkpoint_waits;

        d->checkpoint_waits = w->next;
        d->n_checkpoint_waits--;
        checkpoint_reply(w, -1, 0, "decisiond is stopping");
    }
}

void d_admin_checkpoint_waits_free(struct d_daemon *d)
{
    if (d->checkpoint_answered != NULL)
        event_free(d->checkpoint_answered);
    d->checkpoint_answered = NULL;
}

void d_admin_checkpoint_now(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq)
{
    struct d_admin_cpwait *w;

    (void)rq;
    if (d->n_checkpoint_waits >= D_ADMIN_CHECKPOINT_WAITS) {
        d_conn_reply_error(c, SWORN_ERR_IO,
                           "busy: too many CheckpointNow calls waiting; ask again later", NULL, 0);
        return;
    }
    w = calloc(1, sizeof(*w));
    if (w == NULL) {
        d_conn_reply_error(c, SWORN_ERR_NOMEM, "out of memory", NULL, 0);
        return;
    }
    if (d_checkpointer_ask(d, &w->ticket) < 0) {
        d_conn_reply_error(c, sworn_err_code(), sworn_err_msg(), NULL, 0);
        free(w);
        return;
    }
    w->c = c;
    d_conn_hold(c);
    w->next = d->checkpoint_waits;
    d->checkpoint_waits = w;
    d->n_checkpoint_waits++;
}

void d_admin_tail(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq)
{
    uint32_t count = rq->tail->count;
    Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
    Sworn__V1__TailResponse t = SWORN__V1__TAIL_RESPONSE__INIT;
    uint64_t size = sworn_log_size(d->log), first = size > count ? size - count : 0;
    uint8_t *buf = malloc(SWORN_FRAME_ENTRY_MAX);
    size_t total = 0;

    t.entries = calloc(count, sizeof(*t.entries));
    if (buf == NULL || t.entries == NULL) {
        d_conn_reply_error(c, SWORN_ERR_NOMEM, "out of memory", NULL, 0);
        goto out;
    }
    /* Walk back from the newest entry while the reply stays under ADMIN_TAIL_BYTES, so that a
     * cut drops the oldest of the requested entries, never the newest. */
    for (uint64_t i = size; i > first; i--) {
        size_t len;

        if (sworn_log_read_entry(d->log, i - 1, buf, SWORN_FRAME_ENTRY_MAX, &len) < 0) {
            d_conn_reply_error(c, sworn_err_code(), sworn_err_msg(), NULL, 0);
            goto out;
        }
        if (total + len > ADMIN_TAIL_BYTES) {
            first = i;
            break;
        }
        total += len;
    }
    for (uint64_t i = first; i < size; i++) {
        size_t len;

        if (sworn_log_read_entry(d->log, i, buf, SWORN_FRAME_ENTRY_MAX, &len) < 0 ||
            (t.entries[t.n_entries] = sworn_frame_unpack_entry(buf, len)) == NULL) {
            d_conn_reply_error(c, sworn_err_code(), sworn_err_msg(), NULL, 0);
            goto out;
        }
        t.n_entries++;
    }
    t.first_index = first;
    r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_TAIL;
    r.tail = &t;
    send_response(c, &r);
out:
    for (size_t i = 0; i < t.n_entries; i++)
        sworn__v1__entry__free_unpacked(t.entries[i], NULL);
    free(t.entries);
    free(buf);
}

void d_admin_metrics(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq)
{
    Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
    Sworn__V1__MetricsResponse m = SWORN__V1__METRICS_RESPONSE__INIT;
    char *text;
    size_t len;

    (void)rq;
    atomic_store(&d->metrics.log_entries, sworn_log_size(d->log));
    if (d_metrics_render(&d->metrics, d_now_unix_ms(), &text, &len) < 0) {
        d_conn_reply_error(c, sworn_err_code(), sworn_err_msg(), NULL, 0);
        return;
    }
    m.text.data = (uint8_t *)text;
    m.text.len = len;
    r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_METRICS;
    r.metrics = &m;
    send_response(c, &r);
    free(text);
}

/* --- policy reload ------------------------------------------------------------------------ */

struct reload_job {
    struct d_daemon *d;
    struct sworn_policy *policy; /* NULL when the new file was refused */
    uint8_t digest[32];
    char error[SWORN_POLICY_REASON_MAX + 1];
    uint8_t *entry;
    size_t len;
    int rc;
    uint64_t index;
    void (*on_done)(void *arg, int ok, uint64_t index, const char *error);
    void *arg;
};

static void reload_work(void *arg)
{
    struct reload_job *j = arg;

    j->rc = d_record_append(j->d, j->entry, j->len, NULL, 0, &j->index);
    if (j->rc < 0 && j->error[0] == '\0')
        snprintf(j->error, sizeof(j->error), "policy entry not recorded: %s", sworn_err_msg());
}

/* At most this many policy_warning lines per load; the rest are counted in one more line. */
#define D_POLICY_WARNINGS_LOGGED 100

struct warn_log {
    const char *path;
    int n;
};

static void log_warning(void *arg, const struct sworn_lint_warning *w)
{
    struct warn_log *wl = arg;
    json_object *f;

    if (wl->n++ >= D_POLICY_WARNINGS_LOGGED)
        return;
    f = json_object_new_object();
    if (f != NULL) {
        json_object_object_add(f, "path", json_object_new_string(wl->path));
        json_object_object_add(f, "line", json_object_new_int64(w->line));
        json_object_object_add(f, "col", json_object_new_int64(w->col));
        json_object_object_add(f, "rule", json_object_new_string(w->rule_id));
        json_object_object_add(f, "msg", json_object_new_string(w->message));
    }
    d_log(D_LOG_WARN, "policy_warning", f);
}

void d_policy_warnings(const struct sworn_policy *p, const char *path)
{
    struct warn_log wl = {path, 0};
    char msg[160];

    if (sworn_policy_lint(p, log_warning, &wl) < 0) {
        d_log_msg(D_LOG_WARN, "policy_warning", sworn_err_msg());
        return;
    }
    if (wl.n > D_POLICY_WARNINGS_LOGGED) {
        snprintf(msg, sizeof(msg),
                 "%d more warnings not logged: run sworn-policy check on the policy file",
                 wl.n - D_POLICY_WARNINGS_LOGGED);
        d_log_msg(D_LOG_WARN, "policy_warning", msg);
    }
}

static void reload_done(void *arg)
{
    struct reload_job *j = arg;
    struct d_daemon *d = j->d;
    json_object *f = json_object_new_object();
    int ok = j->rc == 0 && j->policy != NULL;

    if (ok) {
        /* The PolicyLoaded entry is durable: decisions from now on carry the new digest. */
        sworn_policy_free(d->policy);
        d->policy = j->policy;
        j->policy = NULL;
        memcpy(d->policy_digest, j->digest, 32);
        atomic_fetch_add(&d->metrics.reloads_ok, 1);
        d_policy_warnings(d->policy, d->cfg->policy_path);
    } else {
        atomic_fetch_add(&d->metrics.reloads_failed, 1);
    }
    if (f != NULL) {
        json_object_object_add(f, "ok", json_object_new_boolean(ok));
        json_object_object_add(f, "path", json_object_new_string(d->cfg->policy_path));
        if (!ok)
            json_object_object_add(f, "error", json_object_new_string(j->error));
    }
    d_log(ok ? D_LOG_INFO : D_LOG_WARN, "policy_reload", f);
    if (j->on_done != NULL)
        j->on_done(j->arg, ok, j->index, j->error);
    sworn_policy_free(j->policy);
    free(j->entry);
    free(j);
}

int d_policy_reload(struct d_daemon *d,
                    void (*on_done)(void *arg, int ok, uint64_t index, const char *error),
                    void *arg)
{
    struct reload_job *j = calloc(1, sizeof(*j));
    char *bytes = NULL;
    size_t n = 0;

    if (j == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "reload: out of memory");
    j->d = d;
    j->on_done = on_done;
    j->arg = arg;
    /* The file is read once, through the checked open (safefile.h: no link, root's or ours, not
     * writable by others): the PolicyLoaded digest is SHA-256 of exactly the bytes parsed (or
     * refused), never of a second reading that could find other bytes (finding 1). */
    if (sworn_safefile_read(d->cfg->policy_path, 0, SWORN_SAFEFILE_NOBODY, "policy",
                            SWORN_YAML_MAX_BYTES, &bytes, &n) < 0) {
        snprintf(j->error, sizeof(j->error), "%s", sworn_err_msg()); /* digest: all zero */
    } else if (sworn_policy_load_mem(d->cfg->policy_path, (const uint8_t *)bytes, n, &j->policy) ==
               0) {
        sworn_policy_digest(j->policy, j->digest);
    } else {
        snprintf(j->error, sizeof(j->error), "%s", sworn_err_msg());
        /* The refused bytes' digest, so the record names what was refused. */
        SHA256((const uint8_t *)bytes, n, j->digest);
    }
    free(bytes);
    if (d_policy_entry(d->cfg->policy_path, j->digest,
                       j->policy != NULL ? sworn_policy_version(j->policy) : 0, j->error, &j->entry,
                       &j->len) < 0 ||
        d_workq_submit(d->workq, reload_work, reload_done, j) < 0) {
        sworn_policy_free(j->policy);
        free(j->entry);
        free(j);
        return -1;
    }
    return 0;
}

/* --- sworn-run's sandboxes ---------------------------------------------------------------- */

/*
 * A sandbox's start or end on its way to the log. The entry is packed on the loop thread (an end
 * when it may be appended, so its time is when it is recorded) and appended by a worker.
 */
struct sandbox_wait {
    struct admin_wait w; /* first: wait_new and wait_fail see it */
    uint8_t *entry;
    size_t len;
    int rc, code;
    uint64_t index;
    char err[SWORN_ERR_MSG_MAX - 32]; /* room for "sandbox start not recorded: " */
    struct d_sandbox *sb;             /* a start: its record, inserted once the entry is durable */
    /* An end: the call's fields, kept past the call (its request is freed when it returns). */
    uint64_t start_index;
    uint8_t sandbox_id[SWORN_FRAME_SANDBOX_ID_LEN];
    Sworn__V1__SandboxEndReason reason;
    uint32_t code_or_signal;
    uint64_t duration_ms;
    char operator_[SWORN_FRAME_OPERATOR_MAX + 1];
};

static void sandbox_work(void *arg)
{
    struct sandbox_wait *w = arg;

    w->rc = d_record_append(w->w.d, w->entry, w->len, NULL, 0, &w->index);
    if (w->rc < 0) {
        w->code = sworn_err_code();
        snprintf(w->err, sizeof(w->err), "%s", sworn_err_msg());
    }
}

/* Answer SandboxResponse{index} (or the error), log the line, let the connection go. */
static void sandbox_answer(struct sandbox_wait *w, const char *event, const char *what)
{
    json_object *f = json_object_new_object();

    if (w->rc < 0) {
        char msg[SWORN_ERR_MSG_MAX];

        snprintf(msg, sizeof(msg), "%s not recorded: %s", what, w->err);
        d_conn_reply_error(w->w.c, w->code != 0 ? w->code : SWORN_ERR_IO, msg, NULL, 0);
    } else {
        Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
        Sworn__V1__SandboxResponse sr = SWORN__V1__SANDBOX_RESPONSE__INIT;

        sr.log_index = w->index;
        r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_SANDBOX;
        r.sandbox = &sr;
        send_response(w->w.c, &r);
    }
    if (f != NULL) {
        json_object_object_add(f, "ok", json_object_new_boolean(w->rc == 0));
        json_object_object_add(f, "index", json_object_new_int64((int64_t)w->index));
        json_object_object_add(f, "start_index", json_object_new_int64((int64_t)w->start_index));
        json_object_object_add(f, "operator", json_object_new_string(w->operator_));
        if (w->rc < 0)
            json_object_object_add(f, "error", json_object_new_string(w->err));
    }
    d_log(w->rc == 0 ? D_LOG_INFO : D_LOG_ERROR, event, f);
    d_conn_release(w->w.c);
    free(w->entry);
    free(w);
}

/*
 * A start is durable but its caller hung up meanwhile (sworn-run gave up waiting, so no agent of
 * it runs and it will never record the end): end it now, FAILED, as the same operator on the
 * same connection (the answer is dropped), so that the record shows no sandbox left running.
 */
static void end_abandoned(struct d_daemon *d, struct d_conn *c, uint64_t index,
                          const uint8_t id[SWORN_FRAME_SANDBOX_ID_LEN])
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__SandboxEndRequest er = SWORN__V1__SANDBOX_END_REQUEST__INIT;
    Sworn__V1__SandboxEnded en = SWORN__V1__SANDBOX_ENDED__INIT;

    en.start_index = index;
    en.sandbox_id.data = (uint8_t *)id;
    en.sandbox_id.len = SWORN_FRAME_SANDBOX_ID_LEN;
    en.reason = SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_FAILED;
    er.ended = &en;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_END;
    rq.sandbox_end = &er;
    rq.version = SWORN_WIRE_VERSION;
    d_log(D_LOG_ERROR, "sandbox_start_abandoned", NULL);
    d_admin_sandbox_end(d, c, &rq);
}

static void start_done(void *arg)
{
    struct sandbox_wait *w = arg;
    struct d_sandboxes *set = w->w.d->sandboxes;
    int abandoned = 0;

    if (w->rc == 0) {
        w->start_index = w->index;
        d_sandboxes_insert(set, w->sb, w->index); /* it runs: its requests are admitted */
        abandoned = d_conn_peer_gone(w->w.c);
    } else {
        d_sandboxes_discard(set, w->sb);
    }
    if (abandoned)
        end_abandoned(w->w.d, w->w.c, w->index, w->sandbox_id);
    sandbox_answer(w, "sandbox_started", "sandbox start");
}

void d_admin_sandbox_start(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq)
{
    Sworn__V1__SandboxStarted st = *rq->sandbox_start->started;
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    struct sandbox_wait *w = wait_new(d, c, sizeof(*w), NULL);

    if (w == NULL)
        return;
    operator_name(d_conn_uid(c), w->operator_, sizeof(w->operator_));
    if (d_sandboxes_prepare(d->sandboxes, &st, w->operator_, &w->sb) < 0) {
        wait_fail(w, sworn_err_code(), sworn_err_msg(), NULL);
        return;
    }
    memcpy(w->sandbox_id, st.sandbox_id.data, sizeof(w->sandbox_id)); /* 16 bytes: frame.c */
    /* The call came with neither (frame.c): decisiond's word, not sworn-run's. */
    st.operator_ = w->operator_;
    st.time_unix_ms = d_now_unix_ms();
    e.kind_case = SWORN__V1__ENTRY__KIND_SANDBOX_STARTED;
    e.sandbox_started = &st;
    if (d_entry_pack(&e, &w->entry, &w->len) < 0 ||
        d_workq_submit(d->workq, sandbox_work, start_done, w) < 0) {
        d_sandboxes_discard(d->sandboxes, w->sb);
        free(w->entry);
        wait_fail(w, sworn_err_code(), sworn_err_msg(), NULL);
    }
}

static void end_done(void *arg)
{
    struct sandbox_wait *w = arg;

    /* Recorded: the sandbox leaves the set. Not: it runs again, and sworn-run may retry. */
    d_sandboxes_finish_end(w->w.d->sandboxes, w->start_index, w->rc == 0);
    sandbox_answer(w, "sandbox_ended", "sandbox end");
}

/* The end may be appended now: no request of the sandbox is still on its way to the log. */
static void end_ready(void *arg)
{
    struct sandbox_wait *w = arg;
    struct d_daemon *d = w->w.d;
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__SandboxEnded en = SWORN__V1__SANDBOX_ENDED__INIT;

    en.start_index = w->start_index;
    en.sandbox_id.data = w->sandbox_id;
    en.sandbox_id.len = sizeof(w->sandbox_id);
    en.reason = w->reason;
    en.code = w->code_or_signal;
    en.duration_ms = w->duration_ms;
    en.operator_ = w->operator_;
    en.time_unix_ms = d_now_unix_ms();
    e.kind_case = SWORN__V1__ENTRY__KIND_SANDBOX_ENDED;
    e.sandbox_ended = &en;
    if (d_entry_pack(&e, &w->entry, &w->len) < 0 ||
        d_workq_submit(d->workq, sandbox_work, end_done, w) < 0) {
        d_sandboxes_finish_end(d->sandboxes, w->start_index, 0);
        free(w->entry);
        wait_fail(w, sworn_err_code(), sworn_err_msg(), NULL);
    }
}

/*
 * Why no sandbox runs at index (d_sandboxes_begin_end said none does), from the log: past its
 * end, not a SandboxStarted entry, or a start whose sandbox has ended. The refusal's message.
 */
static void explain_no_sandbox(struct d_daemon *d, uint64_t index, char *out, size_t cap)
{
    uint8_t *buf = malloc(SWORN_FRAME_ENTRY_MAX);
    Sworn__V1__Entry *e = NULL;
    size_t len;

    if (index >= sworn_log_size(d->log))
        snprintf(out, cap, "sandbox_end refused: log index %llu is past the end of the log",
                 (unsigned long long)index);
    else if (buf == NULL ||
             sworn_log_read_entry(d->log, index, buf, SWORN_FRAME_ENTRY_MAX, &len) < 0 ||
             (e = sworn_frame_unpack_entry(buf, len)) == NULL)
        snprintf(out, cap, "sandbox_end refused: no sandbox runs at log index %llu",
                 (unsigned long long)index);
    else if (e->kind_case != SWORN__V1__ENTRY__KIND_SANDBOX_STARTED)
        snprintf(out, cap, "sandbox_end refused: log index %llu is not a SandboxStarted entry",
                 (unsigned long long)index);
    else
        snprintf(out, cap, "sandbox_end refused: the sandbox started at log index %llu has ended",
                 (unsigned long long)index);
    if (e != NULL)
        sworn__v1__entry__free_unpacked(e, NULL);
    free(buf);
}

void d_admin_sandbox_end(struct d_daemon *d, struct d_conn *c, const Sworn__V1__AdminRequest *rq)
{
    const Sworn__V1__SandboxEnded *en = rq->sandbox_end->ended;
    struct sandbox_wait *w = wait_new(d, c, sizeof(*w), NULL);

    if (w == NULL)
        return;
    operator_name(d_conn_uid(c), w->operator_, sizeof(w->operator_));
    w->start_index = en->start_index;
    memcpy(w->sandbox_id, en->sandbox_id.data, sizeof(w->sandbox_id)); /* 16 bytes: frame.c */
    w->reason = en->reason;
    w->code_or_signal = en->code;
    w->duration_ms = en->duration_ms;
    /* end_ready runs now, or once the requests of the sandbox already admitted are appended;
     * from here on every request naming it is denied. */
    if (d_sandboxes_begin_end(d->sandboxes, en, w->operator_, end_ready, w) < 0) {
        char msg[SWORN_ERR_MSG_MAX];
        int code = sworn_err_code();

        if (code == SWORN_ERR_NOTFOUND)
            explain_no_sandbox(d, en->start_index, msg, sizeof(msg));
        else
            snprintf(msg, sizeof(msg), "%s", sworn_err_msg());
        wait_fail(w, code, msg, NULL);
    }
}

/* --- sworn-conformance's reports ---------------------------------------------------------- */

/*
 * A report on its way to the log: read on the loop thread (the request is freed when the call
 * returns, so the bytes are copied), held to the log, signed, appended and exported by a worker.
 */
struct report_wait {
    struct admin_wait w; /* first: wait_new and wait_fail see it */
    struct sworn_report_summary rs;
    uint8_t *json;
    size_t json_len;
    uid_t peer;
    char operator_[SWORN_FRAME_OPERATOR_MAX + 1];
    int rc, code, exported, cfg_export;
    uint64_t index;
    uint8_t leaf[32];
    char err[SWORN_ERR_MSG_MAX - 40]; /* room for "conformance report not recorded: " */
};

/* The report's start checkpoint and Startup entry must be this log's (it ran against it). */
static int report_matches_log(struct d_daemon *d, const Sworn__V1__ConformanceSummary *s)
{
    static _Thread_local uint8_t entry[SWORN_FRAME_ENTRY_MAX];
    uint8_t root[32];
    size_t len = 0;
    Sworn__V1__Entry *e;
    int startup;

    if (s->checkpoint_size == 0)
        return 0;
    if (s->checkpoint_size > sworn_log_size(d->log))
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "the report's start checkpoint (size %llu) is larger than this log",
                             (unsigned long long)s->checkpoint_size);
    if (sworn_log_root(d->log, s->checkpoint_size, root) < 0)
        return -1;
    if (memcmp(root, s->checkpoint_root.data, 32) != 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "the report's start checkpoint is not this log's tree of size %llu "
                             "(another log's, or another root)",
                             (unsigned long long)s->checkpoint_size);
    if (sworn_log_read_entry(d->log, s->startup_index, entry, sizeof(entry), &len) < 0)
        return -1;
    e = sworn_frame_unpack_entry(entry, len);
    startup = e != NULL && e->kind_case == SWORN__V1__ENTRY__KIND_STARTUP;
    sworn__v1__entry__free_unpacked(e, NULL);
    if (!startup)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "the report's measured start (entry %llu) is not a "
                             "Startup entry",
                             (unsigned long long)s->startup_index);
    return 0;
}

/* Sign SHA-256 of the entry's fields 1..4 (the message without key_id, signature and alg). */
static int report_sign(struct d_daemon *d, Sworn__V1__ConformanceReport *r, uint8_t *sig,
                       size_t *sig_len)
{
    static _Thread_local uint8_t tbs[SWORN_FRAME_ENTRY_MAX];
    Sworn__V1__ConformanceReport signed_part = *r;
    enum sworn_sig_alg alg = sworn_signer_proc_alg(d->signer);
    uint8_t digest[32];
    size_t n;

    if (alg != SWORN_SIG_ED25519 && alg != SWORN_SIG_ECDSA_P256_SHA256)
        return sworn_err_set(SWORN_ERR_ARG, "reports need an ECDSA P-256 or Ed25519 key");
    signed_part.key_id.len = 0;
    signed_part.signature.len = 0;
    signed_part.alg = 0;
    n = protobuf_c_message_get_packed_size(&signed_part.base);
    if (n > sizeof(tbs))
        return sworn_err_set(SWORN_ERR_RANGE, "the report's summary is too large");
    n = protobuf_c_message_pack(&signed_part.base, tbs);
    SHA256(tbs, n, digest);
    if (sworn_signer_proc_sign(d->signer, SWORN_PURPOSE_REPORT, digest, sizeof(digest), sig,
                               SWORN_SIGNER_SIG_MAX, sig_len) < 0) {
        atomic_store(&d->metrics.signer_up, 0);
        return sworn_err_set(SWORN_ERR_IO, "signing failed: %s", sworn_err_msg());
    }
    atomic_store(&d->metrics.signer_up, 1);
    r->key_id.data = d->key_id;
    r->key_id.len = sizeof(d->key_id);
    r->signature.data = sig;
    r->signature.len = *sig_len;
    r->alg = alg == SWORN_SIG_ED25519 ? 2 : 1;
    return 0;
}

/* Write the report's bytes beside the tiles: export_dir/sworn/reports/<index>.json. */
static int report_export(struct d_daemon *d, const struct report_wait *w)
{
    char path[4096];
    int n;

    n = snprintf(path, sizeof(path), "%s/sworn", d->cfg->export_dir);
    if (n < 0 || (size_t)n >= sizeof(path) || (mkdir(path, 0755) < 0 && errno != EEXIST))
        return sworn_err_set(SWORN_ERR_IO, "%s: %s", path, strerror(errno));
    n = snprintf(path, sizeof(path), "%s/sworn/reports", d->cfg->export_dir);
    if (n < 0 || (size_t)n >= sizeof(path) || (mkdir(path, 0755) < 0 && errno != EEXIST))
        return sworn_err_set(SWORN_ERR_IO, "%s: %s", path, strerror(errno));
    n = snprintf(path, sizeof(path), "%s/sworn/reports/%llu.json", d->cfg->export_dir,
                 (unsigned long long)w->index);
    if (n < 0 || (size_t)n >= sizeof(path))
        return sworn_err_set(SWORN_ERR_RANGE, "the export path is too long");
    return sworn_file_replace(path, w->json, w->json_len, 0644);
}

static void report_work(void *arg)
{
    struct report_wait *w = arg;
    struct d_daemon *d = w->w.d;
    Sworn__V1__ConformanceReport r = SWORN__V1__CONFORMANCE_REPORT__INIT;
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    uint8_t sig[SWORN_SIGNER_SIG_MAX], *entry = NULL;
    size_t sig_len = 0, len = 0;

    w->rc = -1;
    r.summary = &w->rs.s;
    r.peer_uid = (uint32_t)w->peer;
    r.operator_ = w->operator_;
    r.time_unix_ms = d_now_unix_ms();
    e.kind_case = SWORN__V1__ENTRY__KIND_CONFORMANCE_REPORT;
    e.conformance_report = &r;
    if (report_matches_log(d, &w->rs.s) < 0 || report_sign(d, &r, sig, &sig_len) < 0 ||
        d_entry_pack(&e, &entry, &len) < 0 ||
        d_record_append(d, entry, len, NULL, 0, &w->index) < 0) {
        w->code = sworn_err_code();
        snprintf(w->err, sizeof(w->err), "%s", sworn_err_msg());
        free(entry);
        return;
    }
    sworn_merkle_leaf_hash(entry, len, w->leaf);
    free(entry);
    w->rc = 0;
    if (d->cfg->export_dir != NULL) {
        w->exported = report_export(d, w) == 0;
        if (!w->exported)
            snprintf(w->err, sizeof(w->err), "%s", sworn_err_msg());
    }
}

static void report_done(void *arg)
{
    struct report_wait *w = arg;
    json_object *f = json_object_new_object();
    char hex[65];

    (void)sworn_hex_encode(w->rs.report_sha256, 32, hex, sizeof(hex));
    if (w->rc < 0) {
        char msg[SWORN_ERR_MSG_MAX];

        snprintf(msg, sizeof(msg), "conformance report not recorded: %s", w->err);
        d_conn_reply_error(w->w.c, w->code != 0 ? w->code : SWORN_ERR_IO, msg, NULL, 0);
    } else {
        Sworn__V1__AdminResponse r = SWORN__V1__ADMIN_RESPONSE__INIT;
        Sworn__V1__ConformanceReportResponse cr = SWORN__V1__CONFORMANCE_REPORT_RESPONSE__INIT;

        cr.log_index = w->index;
        cr.entry_hash.data = w->leaf;
        cr.entry_hash.len = 32;
        cr.report_sha256.data = w->rs.report_sha256;
        cr.report_sha256.len = 32;
        cr.exported = w->exported != 0;
        r.body_case = SWORN__V1__ADMIN_RESPONSE__BODY_CONFORMANCE_REPORT;
        r.conformance_report = &cr;
        send_response(w->w.c, &r);
    }
    if (f != NULL) {
        json_object_object_add(f, "ok", json_object_new_boolean(w->rc == 0));
        if (w->rc == 0)
            json_object_object_add(f, "index", json_object_new_int64((int64_t)w->index));
        json_object_object_add(f, "result",
                               json_object_new_string(w->rs.s.result == 1 ? "pass" : "fail"));
        json_object_object_add(f, "tier", json_object_new_int((int)w->rs.s.tier));
        json_object_object_add(f, "operator", json_object_new_string(w->operator_));
        json_object_object_add(f, "operator_name", json_object_new_string(w->rs.operator_name));
        json_object_object_add(f, "report_sha256", json_object_new_string(hex));
        json_object_object_add(f, "exported", json_object_new_boolean(w->exported));
        if (w->rc < 0 || (w->cfg_export && !w->exported))
            json_object_object_add(f, "error", json_object_new_string(w->err));
    }
    d_log(w->rc == 0 && (!w->cfg_export || w->exported) ? D_LOG_INFO : D_LOG_ERROR,
          "conformance_report", f);
    d_conn_release(w->w.c);
    free(w->json);
    free(w);
}

void d_admin_conformance_report(struct d_daemon *d, struct d_conn *c,
                                const Sworn__V1__AdminRequest *rq)
{
    const ProtobufCBinaryData *j = &rq->conformance_report->report_json; /* 1..512 KiB: frame.c */
    struct report_wait *w = wait_new(d, c, sizeof(*w), NULL);

    if (w == NULL)
        return;
    if (sworn_report_json_read(j->data, j->len, &w->rs) < 0) {
        char msg[SWORN_ERR_MSG_MAX];

        snprintf(msg, sizeof(msg), "conformance report refused: %s", sworn_err_msg());
        json_object *f = json_object_new_object();

        if (f != NULL)
            json_object_object_add(f, "error", json_object_new_string(msg));
        d_log(D_LOG_WARN, "conformance_report_refused", f);
        wait_fail(w, SWORN_ERR_FORMAT, msg, NULL);
        return;
    }
    w->json = malloc(j->len);
    if (w->json == NULL) {
        wait_fail(w, SWORN_ERR_NOMEM, "out of memory", NULL);
        return;
    }
    memcpy(w->json, j->data, j->len);
    w->json_len = j->len;
    w->peer = d_conn_uid(c);
    w->cfg_export = d->cfg->export_dir != NULL;
    operator_name(w->peer, w->operator_, sizeof(w->operator_));
    if (d_workq_submit(d->workq, report_work, report_done, w) < 0) {
        free(w->json);
        wait_fail(w, sworn_err_code(), sworn_err_msg(), NULL);
    }
}
