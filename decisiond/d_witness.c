/*
 * d_witness.c -- decisiond submits its checkpoints to witnesses (d_witness.h).
 *
 * One exchange is one libevent HTTP client request, its connection made and freed by the
 * exchange, on an event base of the submitter's own that only the checkpoint thread runs (it has
 * no loop of its own): nothing of a hung witness outlives its deadline. The base is made at
 * start, before the engine's seccomp filter, which refuses epoll_create. libevent parses the answer
 * and bounds it (ANSWER_MAX body bytes, HEADERS_MAX header bytes); nothing of the witness's bytes
 * goes into the record or the log but its status, a size it gives as a number, and cosignature
 * lines that verified under its key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "d_clock.h"
#include "d_daemon.h"
#include "d_jlog.h"
#include "d_record.h"
#include "d_witness.h"
#include "err.h"
#include "merkle.h"
#include "note.h"
#include "proof.h"
#include "witness_answer.h"

#define ANSWER_MAX 65536u /* bytes of an answer's body: one cosignature line is ~130 */
#define HEADERS_MAX 8192u /* bytes of its headers */
#define REASON_MAX 256    /* WitnessEvent.reason */

enum w_state { W_UNKNOWN = 0, W_COSIGNING, W_FAILING, W_CONSISTENCY };
enum w_outcome { W_COSIGNED, W_FAILED, W_ALARM };

struct d_witness {
    const struct sworn_dconfig_witness *cfg;
    struct sworn_note_verifier key;
    size_t index;  /* in the configuration, and in the metrics' arrays */
    uint64_t size; /* the size it holds, as far as this run knows (0: nothing known) */
    enum w_state state;
};

struct d_witnesses {
    struct d_daemon *d;
    struct event_base *base; /* the exchanges' (checkpoint thread) */
    int record;              /* this round's d_witnesses_submit record argument */
    size_t n;
    struct d_witness w[SWORN_DCONFIG_WITNESSES_MAX];
};

int d_witnesses_new(struct d_daemon *d, struct d_witnesses **out)
{
    const struct sworn_dconfig *c = d->cfg;
    struct d_witnesses *ws;

    *out = NULL;
    if (c->n_witnesses == 0)
        return 0;
    ws = calloc(1, sizeof(*ws));
    if (ws == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "witnesses: out of memory");
    ws->d = d;
    ws->base = event_base_new();
    if (ws->base == NULL) {
        free(ws);
        return sworn_err_set(SWORN_ERR_NOMEM, "witnesses: no event base");
    }
    for (size_t i = 0; i < c->n_witnesses && i < SWORN_DCONFIG_WITNESSES_MAX; i++) {
        struct d_witness *w = &ws->w[ws->n];

        w->cfg = &c->witnesses[i];
        w->index = i;
        /* checked at load (config.c); checked again rather than trusted */
        if (sworn_note_verifier_parse(w->cfg->key, strlen(w->cfg->key), &w->key) < 0 ||
            w->key.alg != SWORN_NOTE_ALG_COSIGNATURE_V1) {
            d_witnesses_free(ws);
            return sworn_err_set(SWORN_ERR_FORMAT, "witnesses: item %zu: not a cosignature key",
                                 i + 1);
        }
        ws->n++;
    }
    {
        const char *names[SWORN_DCONFIG_WITNESSES_MAX];

        for (size_t i = 0; i < ws->n; i++)
            names[i] = ws->w[i].key.name;
        d_metrics_witnesses(&d->metrics, ws->n, names);
    }
    *out = ws;
    return 0;
}

void d_witnesses_free(struct d_witnesses *ws)
{
    if (ws == NULL)
        return;
    event_base_free(ws->base);
    free(ws);
}

/* --- one exchange ---------------------------------------------------------------------------- */

struct answer {
    struct event_base *base;
    int status; /* the HTTP status; 0: no answer */
    char *body; /* NUL-terminated; NULL when there was none */
    size_t len;
    char ctype[64];
};

static void on_answer(struct evhttp_request *req, void *arg)
{
    struct answer *a = arg;
    struct evbuffer *in;
    const char *ct;
    size_t n;

    event_base_loopbreak(a->base);
    if (req == NULL || evhttp_request_get_response_code(req) == 0)
        return; /* refused, reset, timed out, or an answer libevent would not parse */
    a->status = evhttp_request_get_response_code(req);
    ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
    if (ct != NULL)
        snprintf(a->ctype, sizeof(a->ctype), "%s", ct);
    in = evhttp_request_get_input_buffer(req);
    n = evbuffer_get_length(in);
    if (n > ANSWER_MAX)
        n = ANSWER_MAX; /* libevent's own bound refuses more; kept as a second bound */
    a->body = malloc(n + 1);
    if (a->body == NULL) {
        a->status = 0;
        return;
    }
    a->len = evbuffer_remove(in, a->body, n) == (int)n ? n : 0;
    a->body[a->len] = '\0';
}

/* The exchange's whole deadline passed: stop waiting (a->status stays 0: no answer). */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct answer *a = arg;

    (void)fd;
    (void)what;
    event_base_loopbreak(a->base);
}

/*
 * POST body to the witness's add-checkpoint path and wait for its answer, at most its timeout
 * for each step (connect, write, read) and left_ms in all. OUT: *a (free a->body). Returns 0
 * (a->status 0 when no answer came), or -1 when no request could be made here (out of memory).
 */
static int exchange(struct event_base *base, const struct sworn_dconfig_witness *c,
                    const char *body, size_t len, uint64_t left_ms, struct answer *a)
{
    struct timeval step = {.tv_sec = (time_t)(c->timeout_ms / 1000),
                           .tv_usec = (suseconds_t)(c->timeout_ms % 1000) * 1000};
    struct timeval all = {.tv_sec = (time_t)(left_ms / 1000),
                          .tv_usec = (suseconds_t)(left_ms % 1000) * 1000};
    struct evhttp_connection *conn = NULL;
    struct evhttp_request *req = NULL;
    struct event *deadline = NULL;
    struct evkeyvalq *h;
    char path[SWORN_DCONFIG_WITNESS_PREFIX_MAX + 32], host[sizeof(c->host) + 16];
    int v6 = strchr(c->host, ':') != NULL, rc = -1;

    memset(a, 0, sizeof(*a));
    a->base = base;
    conn = evhttp_connection_base_new(a->base, NULL, c->host, c->port);
    if (conn == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "witness: no HTTP connection");
        goto out;
    }
    evhttp_connection_set_timeout_tv(conn, &step);
    evhttp_connection_set_retries(conn, 0);
    evhttp_connection_set_max_body_size(conn, ANSWER_MAX);
    evhttp_connection_set_max_headers_size(conn, HEADERS_MAX);
    req = evhttp_request_new(on_answer, a);
    if (req == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "witness: no HTTP request");
        goto out;
    }
    h = evhttp_request_get_output_headers(req);
    snprintf(host, sizeof(host), "%s%s%s:%u", v6 ? "[" : "", c->host, v6 ? "]" : "",
             (unsigned)c->port);
    if (evhttp_add_header(h, "Host", host) < 0 ||
        evhttp_add_header(h, "Content-Type", "text/plain; charset=utf-8") < 0 ||
        evhttp_add_header(h, "Connection", "close") < 0 ||
        evbuffer_add(evhttp_request_get_output_buffer(req), body, len) < 0) {
        evhttp_request_free(req);
        sworn_err_set(SWORN_ERR_NOMEM, "witness: out of memory");
        goto out;
    }
    snprintf(path, sizeof(path), "%s/add-checkpoint", c->prefix);
    /* On failure libevent frees req and answers nothing: a->status stays 0 (no answer). The
     * deadline is a timer of this exchange, freed with it: the base serves every exchange, so a
     * loopexit left pending would end the next one early. */
    deadline = evtimer_new(a->base, on_deadline, a);
    if (deadline == NULL || evtimer_add(deadline, &all) < 0) {
        sworn_err_set(SWORN_ERR_NOMEM, "witness: no timer");
        goto out;
    }
    if (evhttp_make_request(conn, req, EVHTTP_REQ_POST, path) == 0)
        event_base_dispatch(a->base);
    rc = 0;
out:
    if (deadline != NULL)
        event_free(deadline);
    if (conn != NULL)
        evhttp_connection_free(conn);
    a->base = NULL;
    return rc;
}

/* --- the request body and the answers ------------------------------------------------------- */

/* "old <old>\n", the proof from old to size (none when old is 0 or size), "\n", the note. */
static char *request_body(struct sworn_log *log, uint64_t old, uint64_t size, const char *note,
                          size_t len, size_t *body_len)
{
    uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    size_t count = 0, cap = 32 + SWORN_PROOF_TEXT_LEN(SWORN_MERKLE_MAX_PROOF) + 1 + len, n;
    char *b;
    long p;

    if (old > 0 && old < size &&
        sworn_log_prove_consistency(log, old, size, proof, SWORN_MERKLE_MAX_PROOF, &count) < 0)
        return NULL;
    b = malloc(cap);
    if (b == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "witness: out of memory");
        return NULL;
    }
    n = (size_t)snprintf(b, cap, "old %llu\n", (unsigned long long)old);
    p = sworn_proof_format(proof, count, b + n, cap - n);
    if (p < 0) {
        free(b);
        return NULL;
    }
    n += (size_t)p;
    b[n++] = '\n';
    memcpy(b + n, note, len);
    *body_len = n + len;
    return b;
}

/* --- outcomes -------------------------------------------------------------------------------- */

struct outcome {
    enum w_outcome what;
    int status;
    uint64_t size, old, witness_size;
    char reason[REASON_MAX + 1];
};

/* Append a WitnessEvent entry of kind for w and log where it went. */
static void record_event(struct d_witnesses *ws, const struct d_witness *w,
                         Sworn__V1__WitnessEventKind kind, const struct outcome *o)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__WitnessEvent m = SWORN__V1__WITNESS_EVENT__INIT;
    uint8_t kid[4] = {(uint8_t)(w->key.key_id >> 24), (uint8_t)(w->key.key_id >> 16),
                      (uint8_t)(w->key.key_id >> 8), (uint8_t)w->key.key_id};
    uint8_t *bytes = NULL;
    size_t len = 0;
    uint64_t index = 0;

    if (!ws->record) {
        d_log_msg(D_LOG_WARN, "witness_event_not_recorded",
                  "the final checkpoint's round records no entry; the next start records it");
        return;
    }
    m.witness = (char *)w->key.name;
    m.key_id.data = kid;
    m.key_id.len = sizeof(kid);
    m.kind = kind;
    m.status = (uint32_t)o->status;
    m.checkpoint_size = o->size;
    m.old_size = o->old;
    m.witness_size = o->status == 409 ? o->witness_size : 0;
    m.reason = (char *)o->reason;
    m.time_unix_ms = d_now_unix_ms();
    e.kind_case = SWORN__V1__ENTRY__KIND_WITNESS_EVENT;
    e.witness_event = &m;
    if (d_entry_pack(&e, &bytes, &len) < 0 ||
        d_record_append(ws->d, bytes, len, NULL, 0, &index) < 0) {
        d_log_msg(D_LOG_ERROR, "witness_record_failed", sworn_err_msg());
    } else {
        struct d_log_field f[] = {{"witness", w->key.name, 0}, {"index", NULL, (int64_t)index}};

        d_log_fields(D_LOG_INFO, "witness_event_recorded", f, 2);
    }
    free(bytes);
}

/* The round's outcome for w: metrics, log lines, and an entry when its state changes. */
static void settle(struct d_witnesses *ws, struct d_witness *w, const struct outcome *o)
{
    struct d_metrics *m = &ws->d->metrics;
    enum w_state was = w->state;
    struct d_log_field f[] = {{"witness", w->key.name, 0},
                              {"status", NULL, o->status},
                              {"size", NULL, (int64_t)o->size},
                              {"old", NULL, (int64_t)o->old},
                              {"witness_size", NULL, (int64_t)o->witness_size},
                              {"reason", o->reason, 0}};

    switch (o->what) {
    case W_COSIGNED:
        atomic_fetch_add(&m->witness_cosigned[w->index], 1);
        atomic_store(&m->witness_up[w->index], 1);
        w->state = W_COSIGNING;
        w->size = o->size;
        if (was == W_FAILING || was == W_CONSISTENCY) {
            d_log_fields(D_LOG_INFO, "witness_recovered", f, 4);
            record_event(ws, w, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_RECOVERED, o);
        }
        break;
    case W_FAILED:
        atomic_fetch_add(&m->witness_failed[w->index], 1);
        atomic_store(&m->witness_up[w->index], 0);
        w->state = W_FAILING;
        d_log_fields(was != W_FAILING ? D_LOG_WARN : D_LOG_DEBUG, "witness_failing", f, 6);
        if (was != W_FAILING)
            record_event(ws, w, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_FAILING, o);
        break;
    case W_ALARM:
        atomic_fetch_add(&m->witness_alarms[w->index], 1);
        atomic_store(&m->witness_up[w->index], 0);
        w->state = W_CONSISTENCY;
        w->size = 0; /* ask afresh next time: its 409 says again what it holds */
        d_log_fields(D_LOG_ERROR, "witness_alarm", f, 6);
        if (was != W_CONSISTENCY)
            record_event(ws, w, SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_CONSISTENCY, o);
        break;
    }
}

/* Whether note already carries a cosignature of w that verifies. */
static int carries(const struct d_witness *w, const char *note, size_t len)
{
    struct sworn_note parsed;
    uint8_t by[1] = {0};

    return sworn_note_parse(note, len, &parsed) == 0 &&
           sworn_note_verify(&parsed, &w->key, 1, NULL, by, NULL) == 0 && by[0];
}

int d_witnesses_pending(const struct d_witnesses *ws, uint64_t size)
{
    if (ws == NULL)
        return 0;
    for (size_t i = 0; i < ws->n; i++)
        if (ws->w[i].state != W_COSIGNING || ws->w[i].size != size)
            return 1;
    return 0;
}

/*
 * Submit to one witness: once, and once more after a 409 naming a size this log can prove from.
 * Its verified cosignature lines are appended to *cosigs. Returns 1 cosigned now, 2 the note
 * carried its cosignature already, 0 not cosigned, -1 out of memory.
 */
static int submit_one(struct d_witnesses *ws, struct d_witness *w, const char *note, size_t len,
                      uint64_t size, char **cosigs, size_t *cosigs_len)
{
    struct outcome o = {.what = W_FAILED, .size = size};
    uint64_t old = w->size <= size ? w->size : 0;
    /* One deadline for the witness's whole round, both requests: twice its timeout plus a
     * second (a witness that trickles a 409 cannot buy a second full exchange). */
    uint64_t until = d_now_mono_us() / 1000 + 2 * w->cfg->timeout_ms + 1000;
    int rc = 0;

    if (carries(w, note, len)) {
        /* stored with its cosignature in an earlier round (or an earlier run) */
        w->state = W_COSIGNING;
        w->size = size;
        return 2;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        struct answer a;
        size_t blen = 0;
        char *body;
        uint64_t held = 0, now = d_now_mono_us() / 1000;
        int taken;

        if (now >= until) {
            snprintf(o.reason, sizeof(o.reason),
                     "no time left in the round for the request with old %llu",
                     (unsigned long long)old);
            break;
        }
        body = request_body(ws->d->log, old, size, note, len, &blen);
        if (body == NULL) {
            snprintf(o.reason, sizeof(o.reason), "no request could be made: %.200s",
                     sworn_err_msg());
            break;
        }
        o.old = old;
        rc = exchange(ws->base, w->cfg, body, blen, until - now, &a);
        free(body);
        if (rc < 0)
            return -1;
        /* libevent takes any number in the status line; a WitnessEvent holds 0..599 (a status
         * outside 100..599 is recorded as 0, no answer, and named in the reason) */
        o.status = a.status >= 100 && a.status <= 599 ? a.status : 0;
        if (a.status != 0 && o.status == 0) {
            snprintf(o.reason, sizeof(o.reason), "a status line of %d, outside 100..599", a.status);
        } else if (a.status == 0) {
            snprintf(o.reason, sizeof(o.reason),
                     "no answer: refused, reset, malformed or later than %llu ms",
                     (unsigned long long)w->cfg->timeout_ms);
        } else if (a.status == 200) {
            /* one line a witness: its newest is all a verifier needs */
            taken = sworn_witness_answer_cosignatures(&w->key, note, len, a.body, a.len, 1, cosigs,
                                                      cosigs_len);
            if (taken < 0) {
                free(a.body);
                return -1;
            }
            if (taken > 0) {
                o.what = W_COSIGNED;
                snprintf(o.reason, sizeof(o.reason), "cosigned");
            } else
                snprintf(o.reason, sizeof(o.reason),
                         "200 without a cosignature that verifies under its key");
        } else if (a.status == 409 &&
                   sworn_witness_answer_size(a.ctype, a.body, a.len, &held) == 0) {
            o.witness_size = held;
            if (held > size) {
                o.what = W_ALARM;
                snprintf(o.reason, sizeof(o.reason),
                         "unauthenticated answer: it holds size %llu of this origin, larger than "
                         "this log's %llu",
                         (unsigned long long)held, (unsigned long long)size);
            } else if (held == old && held == size) {
                o.what = W_ALARM;
                snprintf(o.reason, sizeof(o.reason),
                         "it holds another root at this log's size %llu", (unsigned long long)size);
            } else if (held == old) {
                snprintf(o.reason, sizeof(o.reason), "409 naming the old size %llu that was sent",
                         (unsigned long long)held);
            } else {
                snprintf(o.reason, sizeof(o.reason), "it holds size %llu, not %llu",
                         (unsigned long long)held, (unsigned long long)old);
                old = held;
                w->size = held;
                free(a.body);
                continue; /* once more, with the proof from the size it holds */
            }
        } else if (a.status == 422) {
            o.what = W_ALARM;
            snprintf(o.reason, sizeof(o.reason),
                     "unauthenticated answer 422: the proof from size %llu does not join the tree "
                     "it holds",
                     (unsigned long long)old);
        } else {
            snprintf(o.reason, sizeof(o.reason), "HTTP %d", a.status);
        }
        free(a.body);
        break;
    }
    settle(ws, w, &o);
    return o.what == W_COSIGNED;
}

int d_witnesses_submit(struct d_witnesses *ws, const char *note, size_t len, uint64_t size,
                       int record, size_t *cosigned, size_t *added)
{
    char *cosigs = NULL, *cosigned_note;
    size_t cosigs_len = 0, n = 0;
    int rc = 0, fresh[SWORN_DCONFIG_WITNESSES_MAX] = {0};

    if (cosigned != NULL)
        *cosigned = 0;
    if (added != NULL)
        *added = 0;
    if (ws == NULL)
        return 0;
    ws->record = record;
    for (size_t i = 0; i < ws->n; i++) {
        int r = submit_one(ws, &ws->w[i], note, len, size, &cosigs, &cosigs_len);

        if (r < 0) {
            free(cosigs);
            return -1;
        }
        n += r > 0;
        fresh[i] = r == 1;
    }
    if (cosigs_len > 0) {
        cosigned_note = malloc(len + cosigs_len);
        if (cosigned_note == NULL) {
            free(cosigs);
            return sworn_err_set(SWORN_ERR_NOMEM, "witness: out of memory");
        }
        memcpy(cosigned_note, note, len);
        memcpy(cosigned_note + len, cosigs, cosigs_len);
        rc = sworn_log_put_checkpoint(ws->d->log, cosigned_note, len + cosigs_len);
        free(cosigned_note);
        /* Not stored: the witnesses that cosigned this round are asked again next round (a
         * quiet log's round submits to those not known to hold it: d_witnesses_pending). */
        for (size_t i = 0; rc < 0 && i < ws->n; i++)
            if (fresh[i])
                ws->w[i].state = W_UNKNOWN;
    }
    free(cosigs);
    if (rc == 0 && cosigned != NULL)
        *cosigned = n;
    if (rc == 0 && added != NULL)
        *added = cosigs_len > 0;
    return rc;
}
